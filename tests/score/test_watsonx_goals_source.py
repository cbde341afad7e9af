"""watsonx Orchestrate's goals other than tool calls, as ibm-watsonx-orchestrate-evaluation-
framework 1.6.9 (``agentops``, the wheel on PyPI) reads and scores them: ``assert_llm`` entries
(``agentops/type.py`` ``AssertLLMEntry``, ``agentops/metrics/assert_llm_metric.py``
``AssertLLMMetric``), ``interaction`` goals (``GoalDetail.identifier``,
``agentops/extractors/expected_interaction_extractor.py`` ``ExpectedInteractionExtractor``) and
text goals over every assistant text (``agentops/extractors/agent_resp_extractor.py``
``AgentResponseExtractor``, ``agentops/metrics/text_match.py`` ``TextMatchMetric``), all put
together by ``agentops/metrics/journey_success.py`` ``JourneySuccessMetric`` and
``agentops/metrics/journey_success_completion.py`` ``JourneyCompletion``.

The worked examples run always; the tests at the end run IBM's own classes on the same datasets
and conversations and skip unless ``agentops`` is importable (see
tests/score/test_watsonx_ibm_parity.py; e.g. ``pip install --no-deps --target DIR
ibm-watsonx-orchestrate-evaluation-framework==1.6.9`` plus what its import needs, then
``CI_EVAL_IBM_PATH=DIR``). IBM's LLM and ci-eval's judge get the same scripted verdict per
prompt.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ci_eval.metrics.base import NotApplicable, ScoreContext
from ci_eval.metrics.judge import Judge
from ci_eval.metrics.watsonx import assert_llm, journey_completion, journey_success
from ci_eval.metrics.watsonx_goals import INTERACTION, assert_llm_prompt, matched_text_goals
from ci_eval.metrics.watsonx_messages import messages_of, step_counts
from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation, Part
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.settings import JudgeConfig
from tests import ibm_framework
from tests.helpers import run_cli
from tests.judge_server import JudgeServer


def _dataset(goals: dict[str, list[str]], details: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "agent": "a",
        "story": "s",
        "starting_sentence": "hi",
        "goals": goals,
        "goal_details": details,
    }


def _turn(
    user: str = "hi",
    final: str | None = "done",
    texts: tuple[str, ...] = (),
    calls: tuple[tuple[str, dict[str, Any]], ...] = (),
    interaction: dict[str, Any] | bool | None = False,
) -> Invocation:
    """One turn; ``interaction``: False for a source that records none, else the turn's."""
    inv = Invocation(
        user_content=Content.from_text(user, "user"),
        final_response=Content.from_text(final, "model") if final else None,
        intermediate_data=IntermediateData(
            tool_uses=[FunctionCall(name=n, args=a) for n, a in calls],
            intermediate_responses=[("agent", [Part(text=t)]) for t in texts],
        ),
    )
    if interaction is not False:
        inv.extensions[INTERACTION] = interaction
    return inv


def _widget(title: str) -> dict[str, Any]:
    """An Orchestrate option widget as IBM's runtime adapters read it (``Interaction``)."""
    return {
        "type": "options",
        "prompt": f"Choose: {title}",
        "input_schema": {"type": "string", "enum": ["a", "b"]},
        "payload": {"title": title, "description": "pick one"},
    }


def _score(fn: Any, data: dict[str, Any], turns: list[Invocation], judge: Any = None) -> Any:
    return fn([], turns, MetricSpec("m"), ScoreContext(extensions={"watsonx": data}, judge=judge))


ASSERT = {"type": "assert_llm", "kind": "observed", "check": "The agent says done"}
TOOL = {"type": "tool_call", "name": "w", "tool_name": "get_weather", "args": {"city": "paris"}}
PICK = {"type": "interaction", "name": "pick", "identifier": {"key": "title", "value": "Pick"}}
TEXT = {"type": "text", "name": "summarize", "response": "It is sunny", "keywords": ["sunny"]}


# --- loading: agentops/type.py TestCase -------------------------------------------------


def _load(tmp_path: Path, data: dict[str, Any]) -> str:
    """``ci-eval validate`` of the dataset: what it says."""
    (tmp_path / "d.json").write_text(json.dumps(data, indent=1))
    proc = run_cli("validate", "d.json", cwd=tmp_path)
    return proc.stdout + proc.stderr


def test_an_assert_llm_entry_has_no_name_and_a_dataset_of_them_no_goals(tmp_path: Path) -> None:
    """``AssertLLMEntry`` (type, kind, check, scope) is unnamed; ``validate_goals_not_empty``
    allows ``goals`` ``{}`` when every goal detail is one."""
    out = _load(tmp_path, _dataset({}, [ASSERT, {**ASSERT, "scope": "response"}]))
    assert "1 eval set (1 case" in out and "0 invalid" in out


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ({"type": "assert_llm", "check": "x"}, "$.goal_details[0].kind: required field 'kind'"),
        ({**ASSERT, "kind": "guess"}, "$.goal_details[0].kind"),
        ({**ASSERT, "scope": "all"}, "$.goal_details[0].scope"),
        ({**ASSERT, "extra": 1}, "$.goal_details[0]: unknown field 'extra'"),  # extra="forbid"
    ],
)
def test_an_assert_llm_entry_is_checked_as_ibm_checks_it(
    tmp_path: Path, entry: dict[str, Any], says: str
) -> None:
    out = _load(tmp_path, _dataset({}, [entry]))
    assert says in out and "1 invalid" in out


def test_a_named_assert_llm_entry_is_a_goal_the_dag_must_name(tmp_path: Path) -> None:
    """Pydantic's ``Union[AssertLLMEntry, GoalDetail]``: AssertLLMEntry refuses ``name``, so
    the entry is a GoalDetail, which ``validate_goals_match_goal_details`` wants in the DAG."""
    out = _load(tmp_path, _dataset({}, [{**ASSERT, "name": "n"}]))
    assert "goal_details defines ['n'] which the goals DAG never names" in out


def test_an_interaction_goal_needs_its_identifier(tmp_path: Path) -> None:
    """``GoalDetail.validate_interaction_identifier``."""
    out = _load(tmp_path, _dataset({"pick": []}, [{"type": "interaction", "name": "pick"}]))
    assert "identifier is required for type: interaction goals" in out


# --- assert_llm: agentops/metrics/assert_llm_metric.py AssertLLMMetric --------------------


def test_assertions_without_a_judge_are_not_evaluated_saying_why() -> None:
    data = _dataset({"w": []}, [TOOL, ASSERT])
    turns = [_turn(calls=(("get_weather", {"city": "paris"}),))]
    for metric in (assert_llm, journey_success, journey_completion):
        with pytest.raises(NotApplicable, match="assert_llm goals need an LLM judge"):
            _score(metric, data, turns)


def test_each_assertion_is_one_question_with_ibms_prompt_and_a_json_verdict() -> None:
    """``_build_context``: the whole conversation as ``role: content`` lines (scope
    conversation), or the last assistant message (scope response)."""

    def answer(prompt: str, n: int) -> str:
        return json.dumps({"verdict": "Paris" in prompt, "reasoning": "because"})

    data = _dataset({}, [ASSERT, {**ASSERT, "scope": "response", "kind": "policy"}])
    turns = [_turn(user="weather in Paris?", final="sunny")]
    with JudgeServer(answer) as server:
        score, _, details = _score(assert_llm, data, turns, Judge(JudgeConfig(server.url, "m")))
        bodies = server.bodies
    assert score == 0.5  # the conversation names Paris, the last answer does not
    assert details["passed_assertions"] == 1 and details["total_assertions"] == 2
    assert [r["passed"] for r in details["assertion_results"]] == [True, False]
    first, second = (b["messages"] for b in bodies)
    assert [m["role"] for m in first] == ["system", "user"]
    assert "## Check Kind: Observed Fact" in first[0]["content"]
    assert first[1]["content"] == (
        "Check:\nThe agent says done\n\nConversation:\nuser: weather in Paris?\n"
        "assistant: sunny\n\nAnswer:"
    )
    assert "## Check Kind: Policy Rule" in second[0]["content"]
    assert second[1]["content"].endswith("Conversation:\nsunny\n\nAnswer:")


def test_an_answer_that_is_no_json_verdict_is_asked_again_then_failed() -> None:
    """``_judge``: up to ``_MAX_JUDGE_RETRIES`` (2) more asks, then a failed assertion."""
    data = _dataset({}, [ASSERT])
    with JudgeServer(lambda prompt, n: "yes" if n == 1 else '{"verdict": true}') as server:
        score, _, _ = _score(assert_llm, data, [_turn()], Judge(JudgeConfig(server.url, "m")))
    assert score == 1.0
    with JudgeServer(lambda prompt, n: "```json\n{}\n```") as server:
        score, _, details = _score(assert_llm, data, [_turn()], Judge(JudgeConfig(server.url, "m")))
        assert len(server.prompts) == 3
    assert score == 0.0
    assert "no JSON verdict 3 times" in details["assertion_results"][0]["reasoning"]


def test_a_failed_assertion_fails_the_journey_and_counts_in_its_completion() -> None:
    """JourneySuccessMetric: ``is_topological_sort and assertions_passed``; JourneyCompletion:
    passed assertions over assertions, beside the other goals."""
    data = _dataset({"w": []}, [TOOL, ASSERT, {**ASSERT, "check": "The agent is rude"}])
    turns = [_turn(calls=(("get_weather", {"city": "paris"}),))]
    with JudgeServer(lambda p, n: json.dumps({"verdict": "rude" not in p})) as server:
        judge = Judge(JudgeConfig(server.url, "m"))
        assert _score(journey_success, data, turns, judge)[0] == 0.0
        assert _score(journey_completion, data, turns, judge)[0] == round(2 / 3, 2)
        assert _score(assert_llm, data, turns, judge)[0] == 0.5


def test_a_dataset_of_assertions_only_never_succeeds_as_ibm_scores_it() -> None:
    """``is_topological_sort`` is False for an empty ordering: with no goal to reach, IBM 1.6.9's
    journey success is 0 even when every assertion passes; completion is the assertions'."""
    data = _dataset({}, [ASSERT])
    with JudgeServer(lambda p, n: '{"verdict": true}') as server:
        judge = Judge(JudgeConfig(server.url, "m"))
        assert _score(journey_success, data, [_turn()], judge)[0] == 0.0
        assert _score(journey_completion, data, [_turn()], judge)[0] == 1.0


def test_ibms_assert_prompt_is_rendered_for_each_kind() -> None:
    """``agentops/prompt/gpt/assert_llm_prompt.jinja2`` through ``JinjaTemplateRenderer``."""
    observed = assert_llm_prompt("C", "X", "observed")
    policy = assert_llm_prompt("C", "X", "policy")
    assert (
        observed[1]
        == policy[1]
        == {
            "role": "user",
            "content": "Check:\nC\n\nConversation:\nX\n\nAnswer:",
        }
    )
    assert "**factual observation**" in observed[0]["content"]
    assert "**behavioural policy rule**" in policy[0]["content"]
    assert observed[0]["content"].endswith("- `reasoning`: one sentence explaining your verdict")


# --- interaction goals: agentops/extractors/expected_interaction_extractor.py ---------------


def test_an_interaction_goal_is_met_by_a_widget_whose_payload_has_its_value() -> None:
    """``str(payload[key]) == str(value)``; after the tool calls in the journey's ordering."""
    data = _dataset({"w": ["pick"]}, [TOOL, PICK])
    call = (("get_weather", {"city": "paris"}),)
    asked = [_turn(calls=call, interaction=_widget("Pick")), _turn(user="a")]
    other = [_turn(calls=call, interaction=_widget("Other")), _turn(user="a", interaction=None)]
    assert _score(journey_success, data, asked)[0] == 1.0
    assert _score(journey_success, data, asked)[2]["matched_interaction_goals"] == ["pick"]
    assert _score(journey_success, data, other)[0] == 0.0
    assert _score(journey_completion, data, other)[0] == 0.5


def test_each_widget_meets_one_interaction_goal() -> None:
    """Each observed interaction is claimed at most once, goals taken in the dataset's order."""
    data = _dataset({"pick": [], "again": []}, [PICK, {**PICK, "name": "again"}])
    once = [_turn(interaction=_widget("Pick"))]
    twice = [_turn(interaction=_widget("Pick")), _turn(interaction=_widget("Pick"))]
    assert _score(journey_completion, data, once)[0] == 0.5
    assert _score(journey_completion, data, once)[2]["matched_interaction_goals"] == ["pick"]
    assert _score(journey_completion, data, twice)[0] == 1.0


def test_interaction_goals_of_a_conversation_that_records_no_widgets_are_not_evaluated() -> None:
    """ci-eval's agent contract has no field for a widget: not seen is not absent."""
    data = _dataset({"pick": []}, [PICK])
    with pytest.raises(NotApplicable, match=r"interaction goals \['pick'\] need the agent's"):
        _score(journey_success, data, [_turn()])
    assert _score(journey_success, data, [_turn(interaction=None)])[0] == 0.0


def test_a_widget_is_a_message_of_its_own_in_the_conversation() -> None:
    """``EvaluationController``: after the turn's messages, an assistant message of type
    ``interaction`` whose content is the prompt; a step, not an LLM step (``StepMetrics``)."""
    messages = messages_of([_turn(interaction=_widget("Pick"))])
    assert messages[-1] == {
        "role": "assistant",
        "content": "Choose: Pick",
        "type": "interaction",
        "interaction": _widget("Pick"),
    }
    assert step_counts(messages) == {"total_steps": 3, "llm_steps": 1, "total_tool_calls": 0}


# --- text goals: agentops/extractors/agent_resp_extractor.py, metrics/text_match.py ---------


class _Asked:
    """A judge that says true to the semantic check of one response, and records the prompts."""

    def __init__(self, good: str) -> None:
        self.good, self.prompts = good, []

    def render(self, template: str, **values: Any) -> str:
        return json.dumps({"template": template, **values})

    def ask(self, prompt: str, sample: int = 0) -> str:
        self.prompts.append(json.loads(prompt))
        return "true" if self.good in prompt else "false"


def test_a_text_goal_is_met_by_any_assistant_text_not_only_the_last() -> None:
    """``AgentResponseExtractor``: every assistant text message is a candidate."""
    data = _dataset({"summarize": []}, [{**TEXT, "keywords": []}])
    turns = [_turn(texts=("It is sunny in Paris",), final="Anything else?")]
    judge = _Asked("sunny in Paris")
    assert matched_text_goals(data, messages_of(turns), judge) == (["summarize"], ["summarize"])  # type: ignore[arg-type]
    assert _score(journey_success, data, turns, judge)[0] == 1.0


def test_a_text_goal_is_judged_against_its_response_with_the_first_message_as_context() -> None:
    """``SemanticMatchMetric``: ``expected=response or summary``, ``context=messages[0]``."""
    data = _dataset({"summarize": []}, [{**TEXT, "keywords": [], "summary": "a summary"}])
    judge = _Asked("nothing")
    matched_text_goals(data, messages_of([_turn(user="first"), _turn(user="then")]), judge)  # type: ignore[arg-type]
    assert {p["expected"] for p in judge.prompts} == {"It is sunny"}
    assert {p["context"] for p in judge.prompts} == {"first"}
    only_summary = _dataset(
        {"summarize": []}, [{"type": "text", "name": "summarize", "summary": "S"}]
    )
    matched_text_goals(only_summary, messages_of([_turn()]), judge)  # type: ignore[arg-type]
    assert judge.prompts[-1]["expected"] == "S"


def test_a_text_goal_with_keywords_needs_both_checks_of_one_text() -> None:
    """``TextMatchMetric``: a candidate with ``keyword_match and semantic_match``."""
    data = _dataset({"summarize": []}, [TEXT])
    turns = [_turn(texts=("sunny",), final="It is sunny")]

    class SplitJudge(_Asked):
        def ask(self, prompt: str, sample: int = 0) -> str:
            p = json.loads(prompt)
            if p["template"] == "watsonx_keyword_match.j2":
                return "true" if p["response"] == "sunny" else "false"
            return "true" if p["actual"] == "It is sunny" else "false"

    assert matched_text_goals(data, messages_of(turns), SplitJudge(""))[1] == []  # type: ignore[arg-type]


# --- against IBM's own classes ----------------------------------------------------------

_TOKEN = re.compile(r"(KW|EXP|SUM)<(\w+)>")
_CHECK = re.compile(r"Check:\n(.*?)\n\nConversation:", re.DOTALL)


def _verdict(prompt: str, n: int) -> str:
    """The scripted LLM: an assertion's check says its verdict (``pass``, ``fail``, ``junk``:
    never JSON, ``late``: JSON from the second ask); a keyword check is true when the text shows
    ``[k:goal]``; a semantic one when it shows ``[s:goal]`` against the goal's response, or
    ``[z:goal]`` against its summary."""
    check = _CHECK.search(prompt)
    if check:
        word = check.group(1).split()[-1]
        if word == "junk" or (word == "late" and n == 1):
            return "I think it holds"
        return json.dumps({"verdict": word in ("pass", "late"), "reasoning": word})
    for kind, goal in _TOKEN.findall(prompt):
        mark = {"KW": "k", "EXP": "s", "SUM": "z"}[kind]
        return "true" if f"[{mark}:{goal}]" in prompt else "false"
    return "false"


class _OurJudge:
    """ci-eval's side of the scripted LLM: its own templates' values as the prompt."""

    def __init__(self) -> None:
        self.assert_prompts: list[Any] = []

    def render(self, template: str, **values: Any) -> str:
        return json.dumps({"template": template, **values})

    def ask(self, prompt: Any, sample: int = 0) -> str:
        if isinstance(prompt, list):
            self.assert_prompts.append(prompt)
            return _verdict(prompt[-1]["content"], sample + 1)
        return _verdict(prompt, 1)


class _IbmLlm:
    """IBM's side: ``chat(prompt)`` as its providers answer (``choices[0].message.content``)."""

    def __init__(self) -> None:
        self.assert_prompts: list[Any] = []
        self.asked: dict[str, int] = {}

    def chat(self, prompt: Any) -> Any:
        text = prompt[-1]["content"] if isinstance(prompt, list) else str(prompt)
        if isinstance(prompt, list) and _CHECK.search(text):
            self.assert_prompts.append(prompt)
        self.asked[text] = self.asked.get(text, 0) + 1
        content = _verdict(text, self.asked[text])
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=content))])


def _ibm_messages(messages: list[dict[str, Any]]) -> list[Any]:
    from agentops.type import Function, Interaction, Message, ToolCall

    out = []
    for m in messages:
        calls = interaction = None
        if m["type"] == "tool_call":
            body = json.loads(m["content"])
            calls = [
                ToolCall(
                    id=body["id"],
                    function=Function(name=body["name"], arguments=json.dumps(body["args"])),
                )
            ]
        if m["type"] == "interaction":
            interaction = Interaction.model_validate(m["interaction"])
        out.append(
            Message(
                role=m["role"],
                content=m["content"],
                type=m["type"],
                tool_calls=calls,
                interaction=interaction,
            )
        )
    return out


def _ibm(dataset: dict[str, Any], messages: list[dict[str, Any]], llm: _IbmLlm) -> dict[str, Any]:
    from agentops.benchmark_harness.metrics_runner import run_metrics
    from agentops.metrics.assert_llm_metric import AssertLLMMetric
    from agentops.metrics.journey_success import JourneySuccessMetric
    from agentops.metrics.journey_success_completion import JourneyCompletion
    from agentops.operator.operator_base import OperatorBase
    from agentops.type import TestCase

    truth = TestCase.model_validate(dataset)
    success, completion = JourneySuccessMetric(llm_client=llm), JourneyCompletion(llm_client=llm)
    asserts = AssertLLMMetric(llm_client=llm)
    context = run_metrics([success, completion, asserts], _ibm_messages(messages), truth)
    metric = context["metric"]
    assert_value = metric[OperatorBase.key(asserts)]["assert_llm"].value
    return {
        "journey_success": float(metric[OperatorBase.key(success)]["is_success"].value),
        "journey_completion": metric[OperatorBase.key(completion)]["journey_completion"].value,
        "assert_llm": None if assert_value != assert_value else assert_value,  # NaN: none
        "matched_interaction_goals": metric[OperatorBase.key(success)]["is_success"].metadata[
            "matched_interaction_goals"
        ],
        "matched_text_goals": metric[OperatorBase.key(success)]["is_success"].metadata[
            "matched_text_goals"
        ],
    }


def _ours(dataset: dict[str, Any], turns: list[Invocation], judge: _OurJudge) -> dict[str, Any]:
    """The three metrics; ``judge`` is the one journey success asked (each metric asks its own:
    ci-eval's real judge answers a repeated prompt from its cache)."""

    def ctx(judge: _OurJudge) -> ScoreContext:
        return ScoreContext(extensions={"watsonx": dataset}, set_dialect="watsonx", judge=judge)  # type: ignore[arg-type]

    success = journey_success([], turns, MetricSpec("x"), ctx(judge))
    try:
        asserted: float | None = assert_llm([], turns, MetricSpec("x"), ctx(_OurJudge()))[0]
    except NotApplicable:
        asserted = None
    return {
        "journey_success": success[0],
        "journey_completion": journey_completion([], turns, MetricSpec("x"), ctx(_OurJudge()))[0],
        "assert_llm": asserted,
        "matched_interaction_goals": success[2]["matched_interaction_goals"],
        "matched_text_goals": success[2]["matched_text_goals"],
    }


def _random_dataset(rng: random.Random) -> dict[str, Any]:
    details: list[dict[str, Any]] = []
    for n in range(rng.randint(0, 2)):
        details.append(
            {
                "type": "tool_call",
                "name": f"c{n}",
                "tool_name": "get_weather",
                "args": {"city": rng.choice(["paris", "rome"])},
            }
        )
    for n in range(rng.randint(0, 2)):
        key = rng.choice(["title", "description"])
        value = rng.choice(["Pick", "Other", "pick one"])
        details.append(
            {"type": "interaction", "name": f"i{n}", "identifier": {"key": key, "value": value}}
        )
    for n in range(rng.randint(0, 2)):
        goal: dict[str, Any] = {"type": "text", "name": f"t{n}"}
        if rng.random() < 0.7:
            goal["keywords"] = [f"KW<t{n}>"]
        if rng.random() < 0.8:
            goal["response"] = f"EXP<t{n}>"
        if rng.random() < 0.5:
            goal["summary"] = f"SUM<t{n}>"
        details.append(goal)
    names = [g["name"] for g in details]
    rng.shuffle(names)
    dag = {name: ([names[i + 1]] if i + 1 < len(names) else []) for i, name in enumerate(names)}
    for n in range(rng.randint(0 if names else 1, 2)):
        details.append(
            {
                "type": "assert_llm",
                "kind": rng.choice(["observed", "policy"]),
                "scope": rng.choice(["response", "conversation"]),
                "check": f"check {n} {rng.choice(['pass', 'fail', 'junk', 'late'])}",
            }
        )
    rng.shuffle(details)
    return _dataset(dag, details)


def _random_text(rng: random.Random) -> str:
    marks = [f"[{m}:t{n}]" for m in "ksz" for n in range(2) if rng.random() < 0.3]
    return " ".join(["text", *marks])


def _random_turns(rng: random.Random) -> list[Invocation]:
    turns = []
    for _ in range(rng.randint(1, 3)):
        calls = tuple(
            ("get_weather", {"city": rng.choice(["paris", "rome"])})
            for _ in range(rng.randint(0, 2))
        )
        texts = tuple(_random_text(rng) for _ in range(rng.randint(0, 2)))
        widget = _widget(rng.choice(["Pick", "Other"])) if rng.random() < 0.4 else None
        final = _random_text(rng) if rng.random() < 0.8 else None
        turns.append(_turn(user="q", final=final, texts=texts, calls=calls, interaction=widget))
    return turns


def test_goals_are_loaded_as_ibms_test_case_loads_them(tmp_path: Path) -> None:
    ibm_framework.importable()
    from agentops.type import TestCase

    variants = [
        _dataset({}, [ASSERT]),
        _dataset({}, [ASSERT, TOOL]),
        _dataset({"w": []}, [ASSERT, TOOL]),
        _dataset({}, [{**ASSERT, "name": "n"}]),
        _dataset({"n": []}, [{**ASSERT, "name": "n"}]),
        _dataset({}, [{"type": "assert_llm", "check": "x"}]),
        _dataset({}, [{**ASSERT, "kind": "guess"}]),
        _dataset({}, [{**ASSERT, "scope": "all"}]),
        _dataset({}, [{**ASSERT, "extra": 1}]),
        _dataset({"pick": []}, [PICK]),
        _dataset({"pick": []}, [{"type": "interaction", "name": "pick"}]),
        _dataset({"pick": []}, [{**PICK, "identifier": {"key": "title"}}]),
        _dataset({"summarize": []}, [TEXT, ASSERT]),
    ]
    for data in variants:
        try:
            TestCase.model_validate(data)
            ibm_ok = True
        except ValueError:
            ibm_ok = False
        assert ("0 invalid" in _load(tmp_path, data)) == ibm_ok, data


def test_journeys_and_assertions_agree_with_ibm_on_random_conversations() -> None:
    ibm_framework.importable()
    rng = random.Random(55)
    differences, seen = [], {"success": 0, "interaction": 0, "text": 0, "assert": 0}
    for _ in range(150):
        dataset, turns = _random_dataset(rng), _random_turns(rng)
        judge, llm = _OurJudge(), _IbmLlm()
        ours, ibm = _ours(dataset, turns, judge), _ibm(dataset, messages_of(turns), llm)
        if ours != ibm or judge.assert_prompts != llm.assert_prompts:
            differences.append((dataset, messages_of(turns), ours, ibm))
        seen["success"] += ours["journey_success"] == 1.0
        seen["interaction"] += bool(ours["matched_interaction_goals"])
        seen["text"] += bool(ours["matched_text_goals"])
        seen["assert"] += (ours["assert_llm"] or 0) > 0
    assert not differences, differences[:2]
    assert all(count >= 5 for count in seen.values()), seen
