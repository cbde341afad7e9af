"""IBM watsonx Orchestrate evaluation datasets: one JSON object per file, one test case.

Read as ``agentops.type.TestCase`` reads them (ibm-watsonx-orchestrate-evaluation-framework
1.6.9, ``agentops/type.py``; extra keys ignored). A goal detail is either an ``AssertLLMEntry``
(``type`` ``assert_llm``, no name: ``kind`` observed | policy, ``check``, ``scope`` response |
conversation, nothing else) or a named ``GoalDetail`` (an ``interaction`` goal needs its
``identifier`` ``{key, value}``); ``goals`` may be ``{}`` when every goal detail is an assertion.
``starting_sentence`` becomes the first user message, ``tool_call`` goals the expected tool uses
and the text goal the expected final response; the whole dataset (goal DAG, ``arg_matching``,
keywords, assertions, story) is kept as the ``"watsonx"`` extension for the Orchestrate metrics.
Files have no naming convention, so the set id is the repo-relative path without ``.json``
(unique), and the case id the dataset name.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

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

# an Orchestrate invocation's extension: the widget (IBM's Interaction) the agent showed in
# that turn, or None; set where a recording holds widgets, read by the interaction goals
INTERACTION = "watsonx_interaction"

EXT = "watsonx"


class _Identifier(BaseModel):
    """IBM's ``InteractionIdentifier``: which observed interaction satisfies the goal."""

    model_config = ConfigDict(extra="ignore")
    key: str
    value: str


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
    identifier: _Identifier | None = None

    @model_validator(mode="after")
    def _interaction_has_identifier(self) -> _GoalDetail:
        # GoalDetail.validate_interaction_identifier
        if self.type == "interaction" and self.identifier is None:
            raise ValueError("identifier is required for type: interaction goals")
        return self


class _AssertLlm(BaseModel):
    """IBM's ``AssertLLMEntry``: a check an LLM judge decides over the conversation."""

    model_config = ConfigDict(extra="ignore")
    type: Literal["assert_llm"]
    kind: Literal["observed", "policy"]
    check: str
    scope: Literal["response", "conversation"] = "conversation"

    @model_validator(mode="before")
    @classmethod
    def _no_other_keys(cls, value: Any) -> Any:
        # AssertLLMEntry forbids extra keys (said here: the shared message names ADK)
        if isinstance(value, dict):
            extra = sorted(set(value) - set(cls.model_fields))
            if extra:
                raise ValueError(
                    f"unknown field {extra[0]!r} (an assert_llm goal has only type, kind, "
                    "check and scope)"
                )
        return value


class _TestCase(BaseModel):
    model_config = ConfigDict(extra="ignore")
    agent: str
    story: str = Field(min_length=1)
    starting_sentence: str | None = None
    goals: dict[str, list[str]]
    goal_details: list[dict[str, Any]]
    dataset_name: str | None = None


def _entries(doc: JsonDocument) -> list[_GoalDetail | _AssertLlm]:
    """IBM's ``Union[AssertLLMEntry, GoalDetail]``: an unnamed ``assert_llm`` entry is an
    assertion; anything named is a GoalDetail (pydantic's union falls back to it when
    AssertLLMEntry refuses the extra ``name``)."""
    out: list[_GoalDetail | _AssertLlm] = []
    # the document's own dicts (validation copied them): errors are placed by identity
    for i, entry in enumerate(doc.data["goal_details"]):
        model = (
            _AssertLlm if entry.get("type") == "assert_llm" and "name" not in entry else _GoalDetail
        )
        out.append(validate(model, entry, doc, base=entry, base_loc=["goal_details", i]))
    return out


class WatsonxDialect:
    name = "watsonx"
    tool = "watsonx Orchestrate"

    def sniff(self, data: Any) -> bool:
        return isinstance(data, dict) and (
            "goal_details" in data or ("story" in data and "goals" in data)
        )

    def load(self, doc: JsonDocument, ctx: LoadContext) -> EvalSet:
        raw = validate(_TestCase, doc.data, doc)
        named = [g for g in _entries(doc) if isinstance(g, _GoalDetail)]
        self._check_goals(doc, raw, named)
        tool_uses = [
            FunctionCall(name=g.tool_name, args=g.args) for g in named if g.type == "tool_call"
        ]
        texts = [g for g in named if g.type == "text"]
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

    def _check_goals(self, doc: JsonDocument, raw: _TestCase, named: list[_GoalDetail]) -> None:
        """Orchestrate's own rules (``TestCase.validate_goals_not_empty`` and
        ``validate_goals_match_goal_details``): the DAG and the named goal details name the same
        goals; an empty DAG only when every goal detail is an assertion."""
        detail_names = {g.name for g in named}
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
