"""watsonx Orchestrate parity, part two: ci-eval's argument matching, agent routing F1, tool
parameter F1, step counts and quick eval (reference-free: which calls are checked, the static
schema checks, the judge prompts and the counts) against IBM's own code (``agentops`` from
ibm-watsonx-orchestrate-evaluation-framework 1.6.9: ``argument_matching``,
``OrchestrateAgentRoutingAccuracy``, ``ToolParameterF1``, ``StepMetrics``,
``ReferencelessEvaluation.fmt_msgs_referenceless``, ``ReflectionPipeline`` and
``QuickEvalController.compute_metrics``) on generated conversations and the corpus' datasets and
recorded conversation. IBM's LLM is replaced, on both sides, by one scripted verdict per prompt,
so the prompts themselves are compared.

Skips unless ``agentops`` is importable (see tests/score/test_watsonx_ibm_parity.py; e.g.
``pip install --target DIR ibm-watsonx-orchestrate-evaluation-framework`` and
``CI_EVAL_IBM_PATH=DIR``). ``agentops.metrics`` is imported first: agentops' own import order
avoids a cycle that importing ``agentops.type`` first runs into.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

from ci_eval.metrics.base import NotApplicable, ScoreContext
from ci_eval.metrics.watsonx import fuzzy_text_match
from ci_eval.metrics.watsonx_messages import messages_of, step_counts
from ci_eval.metrics.watsonx_quick import quick_eval, tool_call_examples
from ci_eval.metrics.watsonx_quick_checks import static_failures, tool_specs
from ci_eval.metrics.watsonx_routing import agent_routing_f1, tool_parameter_f1
from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation
from ci_eval.model.evalset import FunctionResponse, Part
from ci_eval.model.metric_spec import MetricSpec
from tests import ibm_framework

ibm_framework.importable()

CORPUS = Path("/work/shared/corpus/watsonx-orchestrate")
if not CORPUS.is_dir():
    CORPUS = Path(__file__).resolve().parents[3] / "shared/corpus/watsonx-orchestrate"
EXAMPLES = CORPUS / "IBM-ibm-watsonx-orchestrate-adk/examples/evaluations"

AGENTS = ["hr_agent", "payroll_agent", "travel_agent", "idle_agent"]
TOOLS = ["get_weather", "get_time", "book_trip", "get_pay", "other"]


# --- IBM's side ---------------------------------------------------------------------------


def _ibm_messages(messages: list[dict[str, Any]]) -> list[Any]:
    from agentops.type import Function, Message, ToolCall

    out = []
    for m in messages:
        calls = None
        if m["type"] == "tool_call":
            body = json.loads(m["content"])
            calls = [
                ToolCall(
                    id=body.get("id", ""),
                    function=Function(name=body["name"], arguments=json.dumps(body["args"])),
                )
            ]
        out.append(Message(role=m["role"], content=m["content"], type=m["type"], tool_calls=calls))
    return out


def _resource_map(agents: dict[str, list[str]]) -> Any:
    from agentops.resource_map import ResourceMap
    from agentops.singleton import ThreadSafeSingleton

    ThreadSafeSingleton._instances.pop("ResourceMap", None)  # a registry singleton: renew it
    tools = sorted({t for ts in agents.values() for t in ts})
    return ResourceMap.from_agent_and_tool_data(
        [
            {"id": f"a-{a}", "name": a, "tools": [f"t-{t}" for t in ts], "collaborators": []}
            for a, ts in agents.items()
        ],
        [{"id": f"t-{t}", "name": t} for t in tools],
    )


class _Embedder:
    """IBM compares a ``fuzzy`` text parameter by its LLM client's embeddings (cosine >= 0.8),
    which ci-eval has not: it approximates the comparison (``watsonx_routing.fuzzy_text_match``).
    This client embeds a pair as that approximation decides, so the rest is compared; the
    approximation itself is no parity claim."""

    calls = 0

    def encode(self, sentences: list[str]) -> list[list[float]]:
        _Embedder.calls += 1
        same = fuzzy_text_match(*sentences)
        return [[1.0, 0.0], [1.0, 0.0] if same else [0.0, 1.0]]


def _ibm_scores(dataset: dict[str, Any], messages: list[dict[str, Any]], agents: Any) -> Any:
    from agentops.metrics import OrchestrateAgentRoutingAccuracy, StepMetrics, ToolParameterF1
    from agentops.type import TestCase

    _resource_map(agents)
    truth = TestCase.model_validate(dataset)
    ibm = _ibm_messages(messages)
    routing = OrchestrateAgentRoutingAccuracy().do_evaluate(ibm, ground_truth=truth).value
    params = ToolParameterF1(llm_client=_Embedder()).do_evaluate(ibm, ground_truth=truth).value
    steps = {m.eval_name: m.value for m in StepMetrics().do_evaluate(ibm)}
    return routing, (None if math.isnan(params) else params), steps


# --- ci-eval's side -----------------------------------------------------------------------


def _ours(dataset: dict[str, Any], conversation: list[Invocation], agents: Any) -> Any:
    ctx = ScoreContext(extensions={"watsonx": dataset}, set_dialect="watsonx")
    agent_list = [{"name": a, "tools": ts} for a, ts in agents.items()]
    routing = agent_routing_f1([], conversation, MetricSpec("x", None, {"agents": agent_list}), ctx)
    try:
        params: float | None = tool_parameter_f1([], conversation, MetricSpec("x"), ctx)[0]
    except NotApplicable:
        params = None
    counts = step_counts(messages_of(conversation))
    return (
        routing[0],
        params,
        {"total_steps": counts["total_steps"], "llm_steps": counts["llm_steps"]},
    )


# --- generated cases ----------------------------------------------------------------------

VALUES = [
    "paris",
    "Paris",
    "10",
    10,
    10.0,
    "10.0",
    "2025-01-01",
    "Jan 1 2025",
    ["b", "a"],
    ["a", "b"],
    True,
    "<IGNORE>",
    None,
    "lyon",
]


def _agents(rng: random.Random) -> dict[str, list[str]]:
    return {a: rng.sample(TOOLS[:-1], rng.randint(0, 2)) for a in AGENTS}


def _dataset(rng: random.Random) -> dict[str, Any]:
    goals = []
    for n in range(rng.randint(1, 3)):
        tool = rng.choice(TOOLS[:-1] + AGENTS[:2])
        args = {k: rng.choice(VALUES) for k in rng.sample(["city", "when", "n"], rng.randint(0, 3))}
        goal: dict[str, Any] = {
            "type": "tool_call",
            "name": f"{tool}-{n}",
            "tool_name": tool,
            "args": args if args or rng.random() < 0.5 else None,
        }
        if args and rng.random() < 0.5:
            goal["arg_matching"] = {
                k: rng.choice(["strict", "optional", "ignore", "fuzzy"]) for k in args
            }
        goals.append(goal)
    if rng.random() < 0.1:
        goals[0]["args"] = {"IGNORE": None}
        goals[0].pop("arg_matching", None)
    names = [g["name"] for g in goals]
    return {
        "agent": "hr_agent",
        "story": "s",
        "starting_sentence": "hi",
        "goals": {n: [] for n in names},
        "goal_details": goals,
    }


def _conversation(rng: random.Random) -> list[Invocation]:
    turns = []
    for t in range(rng.randint(1, 3)):
        calls, responses = [], []
        for k in range(rng.randint(0, 4)):
            name = rng.choice(TOOLS + AGENTS + ["chat_with_collaborator_payroll_agent"])
            args = {
                a: rng.choice(VALUES)
                for a in rng.sample(["city", "when", "n", "x"], rng.randint(0, 3))
            }
            calls.append(FunctionCall(id=f"c{t}{k}", name=name, args=args))
            if rng.random() < 0.7:
                responses.append(FunctionResponse(id=f"c{t}{k}", name=name, response={"r": k}))
        texts = [("agent", [Part(text="thinking")])] if rng.random() < 0.3 else []
        turns.append(
            Invocation(
                user_content=Content.from_text(f"q{t}", "user"),
                final_response=Content.from_text("a", "model") if rng.random() < 0.8 else None,
                intermediate_data=IntermediateData(
                    tool_uses=calls, tool_responses=responses, intermediate_responses=texts
                ),
            )
        )
    return turns


def test_routing_parameter_f1_and_steps_agree_with_ibm_on_random_conversations() -> None:
    rng = random.Random(7)
    differences, routed = [], 0
    for _ in range(500):
        agents, dataset, conversation = _agents(rng), _dataset(rng), _conversation(rng)
        ours = _ours(dataset, conversation, agents)
        ibm = _ibm_scores(dataset, messages_of(conversation), agents)
        routed += ours[0] != 1.0
        if ours != ibm:
            differences.append((dataset, agents, [c.model_dump() for c in conversation], ours, ibm))
    assert not differences, differences[:2]
    assert routed > 50  # the routing F1 was more than its "nothing routed" 1


def _corpus_datasets() -> list[Path]:
    return sorted(
        p
        for p in EXAMPLES.rglob("*.json")
        if "goal_details" in p.read_text() and json.loads(p.read_text()).get("goals")
    )


def test_routing_parameter_f1_and_steps_agree_with_ibm_on_the_corpus_datasets() -> None:
    files = _corpus_datasets()
    assert len(files) >= 8
    rng = random.Random(3)
    agents = {
        "hr_agent": [
            "get_assignment_id_hr_agent",
            "get_timeoff_schedule_hr_agent",
            "get_direct_reports_hr_agent",
        ],
        "other_agent": ["other"],
    }
    compared = 0
    for path in files:
        dataset = json.loads(path.read_text())
        goals = [g for g in dataset["goal_details"] if g.get("type") == "tool_call"]
        for _ in range(20):
            calls = []
            for g in rng.sample(goals, rng.randint(0, len(goals))):
                args = dict(g.get("args") or {})
                if args and rng.random() < 0.4:
                    args[rng.choice(list(args))] = "wrong"
                if rng.random() < 0.2:
                    args["extra"] = 1
                calls.append(FunctionCall(name=g["tool_name"], args=args))
            if rng.random() < 0.5:
                calls.insert(0, FunctionCall(name=rng.choice(list(agents)), args={}))
            conversation = [
                Invocation(
                    user_content=Content.from_text("hi", "user"),
                    final_response=Content.from_text("done", "model"),
                    intermediate_data=IntermediateData(tool_uses=calls),
                )
            ]
            assert _ours(dataset, conversation, agents) == _ibm_scores(
                dataset, messages_of(conversation), agents
            ), (path, conversation)
            compared += 1
    assert compared == 20 * len(files)


def _invocations_of(recorded: list[dict[str, Any]]) -> list[Invocation]:
    """A recorded Orchestrate conversation (``*.messages.json``) as ci-eval's invocations."""
    turns: list[dict[str, Any]] = []
    for m in recorded:
        if m["role"] == "user":
            turns.append({"user": m["content"], "calls": [], "responses": [], "texts": []})
        elif m["type"] == "tool_call":
            body = json.loads(m["content"])
            turns[-1]["calls"].append(
                FunctionCall(id=body["id"], name=body["name"], args=body["args"])
            )
        elif m["type"] == "tool_response":
            body = json.loads(m["content"])
            turns[-1]["responses"].append(
                FunctionResponse(
                    id=body["tool_call_id"],
                    name=body["name"],
                    response={"content": body["content"]},
                )
            )
        else:
            turns[-1]["texts"].append(m["content"])
    return [
        Invocation(
            user_content=Content.from_text(t["user"], "user"),
            final_response=Content.from_text(t["texts"][-1], "model") if t["texts"] else None,
            intermediate_data=IntermediateData(
                tool_uses=t["calls"],
                tool_responses=t["responses"],
                intermediate_responses=[("agent", [Part(text=x)]) for x in t["texts"][:-1]],
            ),
        )
        for t in turns
    ]


def test_step_counts_of_the_recorded_corpus_conversation_are_ibms() -> None:
    from agentops.metrics import StepMetrics
    from agentops.type import Message

    folder = EXAMPLES / "analysis/messages"
    recorded = json.loads((folder / "data3.messages.json").read_text())
    ibm = {
        m.eval_name: m.value
        for m in StepMetrics().do_evaluate([Message.model_validate(m) for m in recorded])
    }
    ours = step_counts(messages_of(_invocations_of(recorded)))
    assert (ours["total_steps"], ours["llm_steps"]) == (ibm["total_steps"], ibm["llm_steps"])
    reported = json.loads((folder / "data3.metrics.json").read_text())
    assert (ours["total_steps"], ours["llm_steps"]) == (
        reported["total_steps"],
        reported["llm_step"],
    )


# --- quick eval ---------------------------------------------------------------------------

SPECS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "units": {"type": "string", "enum": ["c", "f"]},
                    "days": {"type": "integer", "minimum": 1},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": None,
            "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
        },
    },
]
ARGS = [
    {},
    {"city": "paris"},
    {"city": 3},
    {"city": "x", "units": "k"},
    {"city": "x", "days": 0},
    {"city": "x", "days": 2, "units": "c"},
    {"tz": "utc"},
    {"zone": 1},
    {"city": None},
]


def test_static_checks_agree_with_ibm() -> None:
    from agentops.referenceless_eval.function_calling.pipeline.pipeline import ReflectionPipeline
    from agentops.referenceless_eval.function_calling.pipeline.types import ToolCall, ToolSpec

    ibm_specs = [ToolSpec.model_validate(s) for s in SPECS]
    ours_specs = tool_specs(SPECS)
    compared = 0
    for name in ["get_weather", "get_time", "missing"]:
        for args in ARGS:
            call = ToolCall.model_validate(
                {
                    "id": "1",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
            )
            ibm = ReflectionPipeline.static_only(ibm_specs, call)
            ibm_failed = {k: m.explanation for k, m in ibm.metrics.items() if not m.valid}
            assert static_failures(ours_specs, name, args) == ibm_failed, (name, args)
            compared += 1
    assert compared == 27


class _Llm:
    """One scripted verdict per prompt, the same for IBM's client and ci-eval's judge."""

    def __init__(self) -> None:
        self.prompts: list[list[dict[str, str]]] = []

    def verdict(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        self.prompts.append(messages)
        seed = sum(map(ord, messages[-1]["content"]))
        return {
            "evidence": "e",
            "explanation": "x",
            "output": 1 + seed % 5,
            "confidence": [0.9, 0.5, 1.5][seed % 3],
            "correction": {},
        }

    def generate(self, prompt: Any, schema: Any = None, retries: int = 1) -> dict[str, Any]:
        return self.verdict(prompt)

    def ask_json(self, prompt: Any, sample: int = 0) -> dict[str, Any]:
        return self.verdict(prompt)


def _ibm_quick(
    messages: list[dict[str, Any]],
    specs: list[dict[str, Any]] | None,
    llm: _Llm,
    agents: dict[str, list[str]],
) -> dict[str, Any]:
    from agentops.quick_eval import QuickEvalController
    from agentops.referenceless_eval import ReferencelessEvaluation
    from agentops.referenceless_eval.function_calling.consts import (
        METRIC_FUNCTION_SELECTION_APPROPRIATENESS,
        METRIC_GENERAL_HALLUCINATION_CHECK,
        TOOL_SPEC_FREE_METRICS,
    )
    from agentops.referenceless_eval.function_calling.pipeline.pipeline import ReflectionPipeline
    from agentops.referenceless_eval.function_calling.pipeline.types import ToolCall, ToolSpec

    pipeline = ReflectionPipeline(
        metrics_client=llm,  # type: ignore[arg-type]
        general_metrics=[METRIC_GENERAL_HALLUCINATION_CHECK]
        if specs
        else list(TOOL_SPEC_FREE_METRICS),
        function_metrics=[METRIC_FUNCTION_SELECTION_APPROPRIATENESS] if specs else None,
        parameter_metrics=None,
        runtime_pipeline=True,
    )
    inventory = [ToolSpec.model_validate(s) for s in specs or []]
    examples = ReferencelessEvaluation.fmt_msgs_referenceless(
        _ibm_messages(messages), resource_map=_resource_map(agents)
    )
    results = [
        pipeline.run_sync(
            conversation=ex["context"],
            inventory=inventory,
            call=ToolCall.model_validate(ex["call"]),
            continue_on_static=False,
            retries=2,
        ).model_dump()
        for ex in examples
    ]
    controller = QuickEvalController.__new__(QuickEvalController)
    controller.test_case_name = "t"
    summary = controller.compute_metrics(results)
    return {
        "examples": examples,
        **summary.model_dump(
            include={
                "number_of_tool_calls",
                "number_of_successful_tool_calls",
                "number_of_static_failed_tool_calls",
                "number_of_semantic_failed_tool_calls",
            }
        ),
    }


def test_quick_eval_agrees_with_ibm_prompts_included(tmp_path: Path) -> None:
    datasets = sorted((EXAMPLES / "quick-eval").glob("*.json"))
    assert len(datasets) == 2
    (tmp_path / "tools.json").write_text(json.dumps(SPECS))
    rng = random.Random(11)
    agents = {"payroll_agent": ["get_pay"], "hr_agent": []}
    compared = prompts = 0
    totals: dict[str, int] = {}
    for n in range(60):
        dataset = json.loads(datasets[n % 2].read_text())
        conversation = _conversation(rng)
        for inv in conversation:
            for call in inv.tool_calls():
                if call.name in TOOLS and rng.random() < 0.6:
                    call.name, call.args = (
                        rng.choice(["get_weather", "get_time", "transfer_to_x"]),
                        rng.choice(ARGS),
                    )
        messages = messages_of(conversation)
        with_specs = n % 3 != 0
        options: dict[str, Any] = {"agents": [{"name": a, "tools": t} for a, t in agents.items()]}
        if with_specs:
            options["tools"] = str(tmp_path / "tools.json")
        ibm_llm, our_llm = _Llm(), _Llm()
        ibm = _ibm_quick(messages, SPECS if with_specs else None, ibm_llm, agents)
        ctx = ScoreContext(extensions={"watsonx": dataset}, set_dialect="watsonx", judge=our_llm)  # type: ignore[arg-type]
        ours = quick_eval(conversation, MetricSpec("x", None, options), ctx, semantic=True)
        assert [
            (c, ctx_)
            for c, ctx_ in tool_call_examples(messages, frozenset(a for a in agents if agents[a]))
        ] == [(e["call"], e["context"]) for e in ibm["examples"]]
        assert our_llm.prompts == ibm_llm.prompts
        assert {k: ours[k] for k in ibm if k != "examples"} == {
            k: v for k, v in ibm.items() if k != "examples"
        }
        compared += ours["number_of_tool_calls"]
        prompts += len(our_llm.prompts)
        for key in ibm:
            if key.startswith("number_of_"):
                totals[key] = totals.get(key, 0) + ours[key]
    assert compared > 60 and prompts > 60
    assert all(totals.values()), totals  # successes, static and semantic failures all seen


# --- argument matching (tool_call_precision / recall / journey) -----------------------------

NESTED = [
    10,
    10.0,
    "10",
    "10.5",
    10.5,
    "Paris",
    "paris",
    ["b", "a"],
    ["a", "b"],
    True,
    "true",
    None,
    "<IGNORE>",
    "2025-01-01",
    "Jan 1 2025",
    {"x": "A", "y": [2, 1]},
    {"x": "a"},
]


def test_argument_matching_is_ibm_1_6_9s() -> None:
    """Normalised values (numbers canonical, lists sorted, booleans' ``True``), nested
    arguments as dot paths with a parent's strategy inherited; IBM's own ``argument_matching``."""
    from agentops.extractors.utils import argument_matching

    from ci_eval.metrics.watsonx import arguments_match

    rng = random.Random(5)
    keys = ["a", "b", "c"]
    differences, matched = [], 0
    for _ in range(3000):
        expected = {k: rng.choice(NESTED) for k in rng.sample(keys, rng.randint(1, 3))}
        actual = {k: rng.choice(NESTED) for k in rng.sample(keys, rng.randint(0, 3))}
        if rng.random() < 0.5:  # the same values, another spelling
            actual = {**actual, **{k: v for k, v in expected.items() if rng.random() < 0.7}}
        paths = list(expected) + [f"{k}.x" for k, v in expected.items() if isinstance(v, dict)]
        strategies = {
            p: rng.choice(["strict", "optional", "ignore", "fuzzy"])
            for p in rng.sample(paths, rng.randint(0, len(paths)))
        }
        ours = arguments_match(expected, actual, strategies, "<IGNORE>")
        ibm = argument_matching(expected, actual, strategies, llm_client=_Embedder())
        matched += ours
        if ours != ibm:
            differences.append((expected, actual, strategies, ours, ibm))
    assert not differences, differences[:3]
    assert 300 < matched < 2700
