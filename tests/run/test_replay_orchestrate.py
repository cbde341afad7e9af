"""Replaying watsonx Orchestrate's recorded conversations (``*.messages.json``).

IBM's ibm-watsonx-orchestrate-evaluation-framework 1.6.9 writes them as
``agentops/persistence/disk.py`` and ``agentops/runner.py`` do
(``messages/<dataset>[.run<N>].messages.json``, a list of ``agentops.type.Message``) and reads
their names with ``agentops/utils/utils.py`` ``RUN_FILE_RE``. The recordings here are IBM's
published examples (tests/data/orchestrate-recordings/SOURCE.md: IBM/ibm-watsonx-orchestrate-adk
at 957b3e354ea0aa34d629c39ed2184697a88dc3d9, ``examples/evaluations/analysis/``).

The tests against IBM's own metric classes skip unless ``agentops`` is importable (see
tests/score/test_watsonx_ibm_parity.py; ``CI_EVAL_IBM_PATH=DIR``).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ci_eval.connectors.orchestrate_recordings import dataset_of, invocations_of
from ci_eval.metrics.base import ScoreContext
from ci_eval.metrics.watsonx import (
    journey_completion,
    journey_success,
    tool_call_precision,
    tool_call_recall,
)
from ci_eval.metrics.watsonx_messages import INTERACTION, messages_of, step_counts
from ci_eval.model.metric_spec import MetricSpec
from tests import ibm_framework
from tests.helpers import run_cli

DATA = Path(__file__).resolve().parents[1] / "data/orchestrate-recordings"
MULTI = DATA / "multi_run_example/messages"
RECORDINGS = sorted([*MULTI.glob("*.messages.json"), *(DATA / "analysis/messages").glob("*.json")])
RECORDINGS = [p for p in RECORDINGS if p.name.endswith(".messages.json")]
METRICS = [
    "tool_call_precision",
    "tool_call_recall",
    "total_steps",
    "llm_steps",
    "total_tool_calls",
]


def _load(path: Path) -> Any:
    return json.loads(path.read_text())


def _renamed(dataset: Path) -> dict[str, Any]:
    """The published dataset with the tool names the recordings were run with (SOURCE.md)."""
    return json.loads(dataset.read_text().replace("_hr_agent", "_hr_usecase"))


def _as_recorded(m: dict[str, Any]) -> tuple[Any, ...]:
    """What a message says, whichever way its tool call's JSON is written."""
    if m["type"] == "tool_call":
        body = json.loads(m["content"])
        return (m["role"], "tool_call", body["name"], body["args"])
    if m["type"] == "tool_response":
        body = json.loads(m["content"])
        content = body["content"] if "content" in m["content"] else None
        return (m["role"], "tool_response", body["name"], content)
    return (m["role"], m["type"], m["content"])


def _as_replayed(m: dict[str, Any]) -> tuple[Any, ...]:
    if m["type"] == "tool_response":
        body = json.loads(m["content"])
        return (m["role"], "tool_response", body["name"], json.loads(body["content"])["content"])
    return _as_recorded(m)


# --- without IBM ---------------------------------------------------------------------------


def test_a_messages_file_names_its_dataset_and_run_as_ibm_names_it() -> None:
    assert dataset_of("data3.messages.json") == ("data3", None)
    assert dataset_of("data_simple.run2.messages.json") == ("data_simple", 2)
    assert dataset_of("my.data.run1.messages.json") == ("my.data", 1)
    assert dataset_of("data3.messages.analyze.json") is None
    assert dataset_of("data3.metrics.json") is None


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_a_published_recording_replays_as_the_messages_it_recorded(path: Path) -> None:
    recorded = _load(path)
    replayed = messages_of(invocations_of(recorded, str(path)))
    assert [_as_replayed(m) for m in replayed] == [_as_recorded(m) for m in recorded]


def test_each_user_message_opens_a_turn_and_its_last_text_is_the_final_response() -> None:
    turns = invocations_of(_load(MULTI / "data_simple.run1.messages.json"), "x")
    assert [t.user_content.text() for t in turns] == [
        "I want to know my timeoff schedule for a certain period",
        "My username is nwaters.",
        "That is not what I asked for. I want my timeoff schedule from 2025-01-01 to "
        "2025-03-03, not the whole year.",
    ]
    assert [[(c.name, c.args) for c in t.tool_calls()] for t in turns] == [
        [("get_assignment_id_hr_usecase", {"username": "your username"})],
        [
            ("get_assignment_id_hr_usecase", {"username": "nwaters"}),
            (
                "get_timeoff_schedule_hr_usecase",
                {"start_date": "2025-01-01", "end_date": "2025-12-31", "assignment_id": "15778303"},
            ),
        ],
        [
            (
                "get_timeoff_schedule_hr_usecase",
                {"start_date": "2025-01-01", "end_date": "2025-03-03", "assignment_id": "15778303"},
            )
        ],
    ]
    assert turns[0].final_response is not None
    assert turns[0].final_response.text() == "What is your username?"
    assert turns[0].tool_calls()[0].id == "chatcmpl-tool-08bc8039eaec4c62a99df979f5"


WIDGET = {
    "type": "form",
    "prompt": "Pick a date",
    "input_schema": {"type": "object"},
    "payload": {"title": "Date picker"},
}


def _v169_call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    """A tool-call message as 1.6.9 writes it (``agentops/runtime_adapter/wxo_v2_wire.py``)."""
    return {
        "role": "assistant",
        "content": json.dumps({"type": "tool_call", "name": name, "args": args, "id": call_id}),
        "type": "tool_call",
        "tool_calls": [{"id": call_id, "function": {"name": name, "arguments": json.dumps(args)}}],
        "tool_call_id": call_id,
        "response_time": 0.5,
    }


def test_a_widget_the_agent_asked_for_is_its_turns_interaction() -> None:
    """``EvaluationController`` appends the interaction as an assistant message of type
    ``interaction``; the user's answer to it is a user text (evaluation_controller.py)."""
    messages = [
        {"role": "user", "content": "book me a day off", "type": "text"},
        _v169_call("get_days", {"who": "me"}, "c1"),
        {
            "role": "assistant",
            "content": "Pick a date",
            "type": "interaction",
            "interaction": WIDGET,
        },
        {"role": "user", "content": "2025-01-05", "type": "text"},
        {"role": "assistant", "content": "Booked.", "type": "text"},
    ]
    first, second = invocations_of(messages, "x")
    assert first.extensions[INTERACTION] == WIDGET
    assert [(c.id, c.name, c.args) for c in first.tool_calls()] == [
        ("c1", "get_days", {"who": "me"})
    ]
    assert first.final_response is None
    assert INTERACTION not in second.extensions
    replayed = messages_of([first, second])
    assert [(m["role"], m["type"], m["content"]) for m in replayed] == [
        (m["role"], m["type"], m["content"]) for m in messages
    ]


def test_a_tool_call_is_read_from_tool_calls_as_ibms_extractor_reads_it() -> None:
    call = _v169_call("real", {"a": 1}, "c1")
    call["content"] = json.dumps({"type": "tool_call", "name": "other", "args": {}, "id": "c1"})
    [turn] = invocations_of([{"role": "user", "content": "hi", "type": "text"}, call], "x")
    assert [(c.name, c.args) for c in turn.tool_calls()] == [("real", {"a": 1})]


def _results(tmp_path: Path, *args: str) -> dict[str, Any]:
    out = tmp_path / "results.json"
    proc = run_cli("run", *args, "--agent", "replay", "--results", str(out), cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return json.loads(out.read_text())


def test_replaying_ibms_output_folder_reproduces_its_recorded_counts(tmp_path: Path) -> None:
    """The folder as IBM wrote it (its .analyze and .metrics files beside the messages are
    skipped), the dataset with the recording's tool names: IBM's own data_simple.run1.metrics.json
    numbers."""
    (tmp_path / "data_simple.json").write_text(
        json.dumps(_renamed(DATA / "datasets/data_simple.json"))
    )
    metric_args = [a for name in METRICS for a in ("--metric", name)]
    results = _results(tmp_path, "data_simple.json", "--replay", str(MULTI), *metric_args)
    [case] = results["sets"][0]["cases"]
    scores = {m["name"]: m["score"] for m in case["metrics"] if m["name"] in METRICS}
    ibm = _load(MULTI / "data_simple.run1.metrics.json")
    assert scores == {
        "tool_call_precision": ibm["tool_call_precision"],
        "tool_call_recall": ibm["tool_call_recall"],
        "total_steps": ibm["total_steps"],
        "llm_steps": ibm["llm_step"],
        "total_tool_calls": ibm["total_tool_calls"],
    }
    assert (
        len(case["runs"][0]["invocations"]) == 3
    )  # the recording's user turns, not the dataset's one


def test_every_run_file_of_a_dataset_is_one_of_its_recordings(tmp_path: Path) -> None:
    (tmp_path / "data_complex.json").write_text(
        json.dumps(_renamed(DATA / "datasets/data_complex.json"))
    )
    results = _results(
        tmp_path,
        "data_complex.json",
        "--replay",
        str(MULTI),
        "--replay-pick",
        "all",
        "--num-runs",
        "2",
        "--metric",
        "tool_call_recall",
    )
    [case] = results["sets"][0]["cases"]
    assert [run.get("error") for run in case["runs"]] == [None, None]
    ibm = _load(MULTI / "data_complex.run1.metrics.json")
    assert [m["score"] for m in case["metrics"] if m["name"] == "tool_call_recall"] == [
        ibm["tool_call_recall"]
    ]


def test_a_malformed_messages_file_is_one_line_naming_it_and_the_json_path(tmp_path: Path) -> None:
    (tmp_path / "data_simple.json").write_text((DATA / "datasets/data_simple.json").read_text())
    bad = _load(MULTI / "data_simple.run1.messages.json")
    bad[1]["content"] = "not json"
    (tmp_path / "out").mkdir()
    (tmp_path / "out/data_simple.messages.json").write_text(json.dumps(bad))
    proc = run_cli("run", "data_simple.json", "--agent", "replay", "--replay", "out", cwd=tmp_path)
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()
    assert "out/data_simple.messages.json" in line and "$[1].content" in line, line
    assert "Traceback" not in proc.stderr


# --- against IBM 1.6.9's metric classes ------------------------------------------------------


def _agentops() -> None:
    ibm_framework.importable()


class _IbmLlm:
    """IBM's LLM client (``chat`` as its providers answer) giving one verdict to every check."""

    def __init__(self, verdict: bool) -> None:
        self.answer = "true" if verdict else "false"

    def chat(self, prompt: Any) -> Any:
        message = SimpleNamespace(content=self.answer)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)])


class _OurJudge:
    """ci-eval's judge giving the same verdict to every check."""

    def __init__(self, verdict: bool) -> None:
        self.answer = "true" if verdict else "false"

    def render(self, template: str, **values: Any) -> str:
        return template

    def ask(self, prompt: Any, sample: int = 0) -> str:
        return self.answer


def _ibm_messages(recorded: list[dict[str, Any]]) -> list[Any]:
    """The recording as ``Message`` models; a tool call written before ``tool_calls`` existed
    gets them from its content, as 1.6.9's wxo_v2_wire.py writes both from the same object."""
    from agentops.type import Message

    out = []
    for m in recorded:
        m = dict(m)
        if m["type"] == "tool_call" and not m.get("tool_calls"):
            body = json.loads(m["content"])
            call_id = body.get("id") or body.get("tool_call_id") or ""
            m["tool_calls"] = [
                {
                    "id": call_id,
                    "function": {"name": body["name"], "arguments": json.dumps(body["args"])},
                }
            ]
        out.append(Message.model_validate(m))
    return out


def _ibm_scores(
    dataset: dict[str, Any], recorded: list[dict[str, Any]], verdict: bool
) -> dict[str, Any]:
    from agentops.benchmark_harness.metrics_runner import run_metrics
    from agentops.metrics import JourneyCompletion, JourneySuccessMetric, StepMetrics, ToolCalling
    from agentops.operator.operator_base import OperatorBase
    from agentops.type import TestCase

    llm = _IbmLlm(verdict)
    ops = [
        ToolCalling(llm),
        StepMetrics(),
        JourneySuccessMetric(llm_client=llm),
        JourneyCompletion(llm_client=llm),
    ]
    context = run_metrics(ops, _ibm_messages(recorded), TestCase.model_validate(dataset))
    found = {
        name: data.value
        for op in ops
        for name, data in context["metric"][OperatorBase.key(op)].items()
    }
    return {
        "tool_call_precision": found["tool_call_precision"],
        "tool_call_recall": found["tool_call_recall"],
        "total_tool_calls": found["total_tool_calls"],
        "total_steps": found["total_steps"],
        "llm_steps": found["llm_steps"],
        "journey_success": float(found["is_success"]),
        "journey_completion": found["journey_completion"],
    }


def _our_scores(dataset: dict[str, Any], path: Path, verdict: bool) -> dict[str, Any]:
    turns = invocations_of(_load(path), str(path))
    ctx = ScoreContext(
        extensions={"watsonx": dataset}, set_dialect="watsonx", judge=_OurJudge(verdict)
    )  # type: ignore[arg-type]
    spec = MetricSpec("x")
    counts = step_counts(messages_of(turns))
    return {
        "tool_call_precision": tool_call_precision([], turns, spec, ctx)[0],
        "tool_call_recall": tool_call_recall([], turns, spec, ctx)[0],
        "total_tool_calls": counts["total_tool_calls"],
        "total_steps": counts["total_steps"],
        "llm_steps": counts["llm_steps"],
        "journey_success": journey_success([], turns, spec, ctx)[0],
        "journey_completion": journey_completion([], turns, spec, ctx)[0],
    }


CASES = [
    (rec, dataset, renamed, verdict)
    for rec in sorted(MULTI.glob("*.messages.json"))
    for dataset in [DATA / "datasets" / (rec.name.split(".")[0] + ".json")]
    for renamed in (False, True)
    for verdict in (False, True)
]


@pytest.mark.parametrize(
    ("path", "dataset", "renamed", "verdict"),
    CASES,
    ids=[f"{c[0].name}-{'renamed' if c[2] else 'published'}-judge{c[3]}" for c in CASES],
)
def test_a_replayed_recording_scores_as_ibms_metric_classes_score_its_messages(
    path: Path, dataset: Path, renamed: bool, verdict: bool
) -> None:
    """IBM 1.6.9's ToolCalling, StepMetrics, JourneySuccessMetric and JourneyCompletion on the
    recorded messages; ci-eval's metrics on the invocations the replay makes of them."""
    _agentops()
    data = _renamed(dataset) if renamed else _load(dataset)
    assert _our_scores(data, path, verdict) == _ibm_scores(data, _load(path), verdict)
