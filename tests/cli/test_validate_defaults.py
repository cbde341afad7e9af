"""`validate` labels a set's default metrics (no sidecar of its own) with the tool whose defaults
they are: ADK's, adk-rs's, watsonx Orchestrate's (its quick eval's for datasets without goals);
a trpc-agent-go set, which trpc-agent-go scores by no metric without its .metrics.json, says
that ADK's apply instead."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli

ADK = {
    "eval_set_id": "s",
    "eval_cases": [
        {"eval_id": "c", "conversation": [{"user_content": {"parts": [{"text": "hi"}]}}]}
    ],
}
ADK_RS = {
    "id": "s",
    "eval_cases": [
        {"id": "c", "conversation": [{"user_content": {"role": "user", "parts": [{"text": "hi"}]}}]}
    ],
}
TRPC = {
    "evalSetId": "s",
    "evalCases": [
        {"evalId": "c", "conversation": [{"userContent": {"role": "user", "content": "hi"}}]}
    ],
}
ORCHESTRATE = {
    "agent": "hr_agent",
    "story": "I want my time off.",
    "starting_sentence": "My time off, please.",
    "goals": {"get_timeoff": []},
    "goal_details": [
        {"type": "tool_call", "name": "get_timeoff", "tool_name": "get_timeoff", "args": {}}
    ],
}
ORCHESTRATE_QUICK = {
    "agent": "hr_agent",
    "story": "I want my time off.",
    "starting_sentence": "My time off, please.",
    "goals": {},
    "goal_details": [],
}


@pytest.mark.parametrize(
    ("data", "dialect", "label"),
    [
        (ADK, "adk", "(ADK defaults)"),
        (ADK_RS, "adk-rs", "(adk-rs defaults)"),
        (ORCHESTRATE, "watsonx", "(watsonx Orchestrate defaults)"),
        (ORCHESTRATE_QUICK, "watsonx", "(watsonx Orchestrate quick-eval defaults)"),
        (
            TRPC,
            "trpc",
            "(ADK defaults: trpc-agent-go scores no metric without a .metrics.json)",
        ),
    ],
    ids=["adk", "adk-rs", "orchestrate", "orchestrate-quick-eval", "trpc"],
)
def test_each_tool_s_defaults_are_labelled_with_its_name(
    data: dict[str, Any], dialect: str, label: str, tmp_path: Path
) -> None:
    (tmp_path / "s.evalset.json").write_text(json.dumps(data))
    result = run_cli("validate", "s.evalset.json", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    line = result.stdout.splitlines()[0]
    assert line.startswith(f"s.evalset.json: ok: {dialect}, 1 case")
    assert line.endswith(label)


def test_orchestrate_s_own_examples_are_labelled_orchestrate_s(corpus: Path) -> None:
    examples = corpus / "watsonx-orchestrate/IBM-ibm-watsonx-orchestrate-adk/examples/evaluations"
    result = run_cli("validate", str(examples / "evaluate"), str(examples / "quick-eval"))
    lines = [line for line in result.stdout.splitlines() if ": ok: watsonx" in line]
    assert lines
    labels = ("(watsonx Orchestrate defaults)", "(watsonx Orchestrate quick-eval defaults)")
    assert all(line.endswith(labels) for line in lines)
    assert "ADK defaults" not in result.stdout


def test_a_set_with_its_own_metrics_names_their_file(tmp_path: Path) -> None:
    (tmp_path / "s.evalset.json").write_text(json.dumps(TRPC))
    metrics = [{"metricName": "final_response_avg_score", "threshold": 1}]
    (tmp_path / "s.metrics.json").write_text(json.dumps(metrics))
    result = run_cli("validate", "s.evalset.json", cwd=tmp_path)
    assert result.stdout.splitlines()[0].endswith("from s.metrics.json")
