"""Every real file in ../shared/corpus loads with its own tool's counts, or is rejected clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_eval.load.evalsets import Failed, LoadedEvalSet, LoadedSidecar, Skipped
from tests.conftest import CORPUS, corpus_files, corpus_id
from tests.helpers import load

NOT_EVAL_SETS = {
    "initial.session.json": "an ADK session file",
    "hr_agent.json": "a watsonx Orchestrate agent or tool spec",
    "data3.messages.json": "a watsonx Orchestrate messages output",
    "data3.messages.analyze.json": "a watsonx Orchestrate analysis output",
    "data3.metrics.json": "a watsonx Orchestrate metrics output",
}
AGENTEVALS_BROKEN = "agentevals/agentevals-dev-agentevals/examples/"


def expected_counts(data: object) -> tuple[int, int]:
    """(cases, invocations) as each source tool reads the raw JSON."""
    if isinstance(data, list):
        if "query" in data[0]:  # ADK legacy .test.json: the file is one case
            return 1, len(data)
        return len(data), sum(len(case["data"]) for case in data)  # legacy eval-set list
    assert isinstance(data, dict)
    if "goal_details" in data:  # watsonx: one test case, the starting sentence
        return 1, 1
    cases = data.get("eval_cases") or data.get("evalCases") or []
    return len(cases), sum(len(c.get("conversation") or []) for c in cases)


def kind_of(path: Path) -> str:
    rel = corpus_id(path)
    if path.name in NOT_EVAL_SETS or path.name.endswith(".evalset_result.json"):
        return "not-eval"
    if path.name in ("test_config.json", "eval_config.json") or path.name.endswith(".metrics.json"):
        return "sidecar"
    if rel.startswith(AGENTEVALS_BROKEN):
        return "broken"
    return "eval"


FILES = corpus_files()


def test_the_corpus_has_every_dialect(corpus: Path) -> None:
    assert len(FILES) == 150  # as SOURCES.md counts them


@pytest.mark.parametrize("path", FILES, ids=[corpus_id(p) for p in FILES])
def test_corpus_file(path: Path) -> None:
    outcome = load(path, root=CORPUS, claimed=False)
    kind = kind_of(path)
    if kind == "eval":
        assert isinstance(outcome, LoadedEvalSet), outcome
        cases, invocations = expected_counts(json.loads(path.read_text("utf-8")))
        assert len(outcome.eval_set.eval_cases) == cases
        assert outcome.eval_set.invocation_count() == invocations
        for case in outcome.eval_set.eval_cases:
            assert case.source is not None and case.source.line is not None
    elif kind == "sidecar":
        assert isinstance(outcome, LoadedSidecar), outcome
        assert outcome.config.metrics or outcome.config.extras
    elif kind == "not-eval":
        assert isinstance(outcome, Skipped), outcome
        assert outcome.reason.startswith("not an eval set (looks like ")
        expected = NOT_EVAL_SETS.get(path.name, "an eval result file")
        assert expected in outcome.reason
        assert "\n" not in outcome.reason
    else:
        assert isinstance(outcome, Failed), outcome
        assert "agentevals example file" in str(outcome.error)
        assert "rename case_id to eval_id" in str(outcome.error)


def test_a_named_non_eval_file_is_an_error(corpus: Path) -> None:
    path = next(p for p in FILES if p.name == "initial.session.json")
    outcome = load(path, claimed=True)
    assert isinstance(outcome, Failed)
    assert str(outcome.error).endswith("not an eval set (looks like an ADK session file)")


def test_case_lines_point_at_the_case(corpus: Path) -> None:
    path = CORPUS / (
        "trpc-agent-go/trpc-group-trpc-agent-go/examples/runner/evaluation/"
        "runner-quickstart/calculator_tool.evalset.json"
    )
    outcome = load(path, root=CORPUS)
    assert isinstance(outcome, LoadedEvalSet)
    lines = path.read_text("utf-8").splitlines()
    for case in outcome.eval_set.eval_cases:
        assert case.source is not None and case.source.line is not None
        assert lines[case.source.line - 1].strip() == "{"
        assert f'"evalId": "{case.eval_id}"' in lines[case.source.line]


def test_sidecars_apply_to_their_eval_sets(corpus: Path) -> None:
    base = CORPUS / "trpc-agent-go/trpc-group-trpc-agent-go/examples/evaluation"
    tool = load(base / "tooltrajectory/data/tooltrajectory-app/tooltrajectory-basic.evalset.json")
    assert isinstance(tool, LoadedEvalSet)
    assert tool.metrics.dialect == "trpc"
    [metric] = tool.metrics.metrics
    assert metric.name == "tool_trajectory_avg_score" and metric.threshold == 1
    assert metric.criterion["toolTrajectory"]["toolStrategy"]["get_time"]["result"]["ignore"]
    shared = load(
        base / "promptiter/tooldesc/data/promptiter-flight-tool-app/flight-tool-train.evalset.json"
    )
    assert isinstance(shared, LoadedEvalSet)
    assert shared.metrics.source.endswith("flight-tool.metrics.json")


def test_adk_config_is_found_in_a_parent_folder(corpus: Path) -> None:
    root = CORPUS / "adk/google-adk-samples/core/python/long-horizon-harness"
    outcome = load(root / "tests/eval/evalsets/basic.evalset.json", root=root)
    assert isinstance(outcome, LoadedEvalSet)
    [metric] = outcome.metrics.metrics
    assert metric.name == "rubric_based_final_response_quality_v1"
    assert metric.threshold == 0.8
    # camelCase inside a criterion is read as ADK reads it
    assert metric.criterion["include_intermediate_responses_in_final"] is True
    assert metric.criterion["judge_model_options"]["num_samples"] == 1
    assert metric.criterion["rubrics"][0]["rubric_id"] == "relevance"


def test_without_a_sidecar_the_dialects_defaults_apply(corpus: Path) -> None:
    adk = load(CORPUS / ("agentevals/agentevals-dev-agentevals/samples/eval_set_helm.json"))
    assert isinstance(adk, LoadedEvalSet)
    assert {m.name: m.threshold for m in adk.metrics.metrics} == {
        "tool_trajectory_avg_score": 1.0,
        "response_match_score": 0.8,
    }
    rs = load(
        CORPUS / "adk-rs/skundu42-adk-rs/docs/content/eval.ts.snippets/hello_world.evalset.json"
    )
    assert isinstance(rs, LoadedEvalSet)
    assert [(m.name, m.criterion) for m in rs.metrics.metrics] == [
        ("tool_trajectory_avg_score", {}),  # adk-rs's own (registered for the dialect)
        ("final_response_match_v1", {}),
    ]


def test_watsonx_dataset_keeps_goals_and_arg_matching(corpus: Path) -> None:
    path = CORPUS / (
        "watsonx-orchestrate/IBM-ibm-watsonx-orchestrate-adk/examples/evaluations/"
        "evaluate/data_simple.json"
    )
    outcome = load(path)
    assert isinstance(outcome, LoadedEvalSet)
    [case] = outcome.eval_set.eval_cases
    [inv] = case.invocations()
    assert inv.user_content.text() == "I want to know my timeoff schedule for a certain period."
    assert [c.name for c in inv.tool_calls()] == [
        "get_assignment_id_hr_agent",
        "get_timeoff_schedule_hr_agent",
    ]
    assert inv.final_response is not None
    assert inv.final_response.text().startswith("Your timeoff schedule")
    assert case.extensions["watsonx"]["goals"]["get_timeoff_schedule_hr_agent"] == ["summarize"]
    assert outcome.eval_set.eval_set_id.endswith("evaluate/data_simple")


def test_trpc_trace_mode_keeps_the_actual_conversation(corpus: Path) -> None:
    path = CORPUS / (
        "trpc-agent-go/trpc-group-trpc-agent-go/examples/evaluation/trace/data/"
        "trace-eval-app/trace-basic.evalset.json"
    )
    outcome = load(path)
    assert isinstance(outcome, LoadedEvalSet)
    [case] = outcome.eval_set.eval_cases
    assert case.extensions["trpc"]["evalMode"] == "trace"
    assert case.extensions["trpc"]["actualConversation"]
