"""IBM watsonx Orchestrate evaluation datasets: one JSON object per file, one test case.

Read as ``agentops.type.TestCase`` reads them (extra keys ignored). ``starting_sentence`` becomes
the first user message, ``tool_call`` goals the expected tool uses and the text goal the expected
final response; the whole dataset (goal DAG, ``arg_matching``, keywords, story) is kept as the
``"watsonx"`` extension for the Orchestrate metrics. Files have no naming convention, so the set id
is the repo-relative path without ``.json`` (unique), and the case id the dataset name.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ci_eval.dialects.base import LoadContext
from ci_eval.io.jsonpos import JsonDocument
from ci_eval.io.validation import validate
from ci_eval.model import (
    Content,
    ConversationScenario,
    EvalCase,
    EvalSet,
    FunctionCall,
    IntermediateData,
    Invocation,
    SourceRef,
)

EXT = "watsonx"


class _GoalDetail(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str
    type: str = "tool_call"
    tool_name: str | None = None
    args: dict[str, Any] | None = None
    arg_matching: dict[str, str] | None = None
    response: str | None = None
    keywords: list[str] | None = None
    summary: str | None = None


class _TestCase(BaseModel):
    model_config = ConfigDict(extra="ignore")
    agent: str
    story: str = Field(min_length=1)
    starting_sentence: str | None = None
    goals: dict[str, list[str]]
    goal_details: list[_GoalDetail]
    dataset_name: str | None = None


class WatsonxDialect:
    name = "watsonx"
    tool = "watsonx Orchestrate"

    def sniff(self, data: Any) -> bool:
        return isinstance(data, dict) and (
            "goal_details" in data or ("story" in data and "goals" in data)
        )

    def load(self, doc: JsonDocument, ctx: LoadContext) -> EvalSet:
        raw = validate(_TestCase, doc.data, doc)
        self._check_goals(doc, raw)
        tool_uses = [
            FunctionCall(name=g.tool_name, args=g.args)
            for g in raw.goal_details
            if g.type == "tool_call"
        ]
        texts = [g for g in raw.goal_details if g.type == "text"]
        final = None
        if texts:
            goal = texts[-1]
            final = Content.from_text(goal.summary or goal.response or "", "model")
        case_id = raw.dataset_name or ctx.stem
        if raw.starting_sentence is not None:
            case = EvalCase(
                eval_id=case_id,
                conversation=[
                    Invocation(
                        invocation_id="inv-1",
                        user_content=Content.from_text(raw.starting_sentence, "user"),
                        final_response=final,
                        intermediate_data=IntermediateData(tool_uses=tool_uses),
                    )
                ],
            )
        else:
            # no scripted first message: Orchestrate's simulated user starts from the story
            case = EvalCase(
                eval_id=case_id,
                conversation_scenario=ConversationScenario(
                    starting_prompt="", conversation_plan=raw.story
                ),
            )
        case._source = SourceRef(ctx.rel_path, doc.line_of(doc.data))
        case.extensions[EXT] = doc.data
        return EvalSet(eval_set_id=ctx.path_without_json, name=case_id, eval_cases=[case])

    def _check_goals(self, doc: JsonDocument, raw: _TestCase) -> None:
        """Orchestrate's own rule: the DAG and goal_details name the same goals."""
        detail_names = {g.name for g in raw.goal_details}
        dag_names = set(raw.goals) | {n for deps in raw.goals.values() for n in deps}
        if not raw.goals and not raw.goal_details:
            return  # referenceless (quick-eval) dataset
        missing = sorted(dag_names - detail_names)
        if missing:
            raise doc.error(f"goals names {missing} which goal_details does not define", ["goals"])
        unused = sorted(detail_names - dag_names)
        if unused:
            raise doc.error(
                f"goal_details defines {unused} which the goals DAG never names", ["goal_details"]
            )
