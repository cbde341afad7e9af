"""The metrics google-adk computes through Vertex AI's evaluation service, which ci-eval does not
call: ``validate`` says so up front for a config naming one (the place, what it needs, what
happens to its cases), ``run`` says it before the report, and each case's NOT_EVALUATED reason
names what the metric needs."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from ci_eval.metrics import NEEDS
from tests.conftest import SAMPLES
from tests.helpers import run_cli

VERTEX_ONLY = (
    "response_evaluation_score",
    "safety_v1",
    "multi_turn_task_success_v1",
    "multi_turn_trajectory_quality_v1",
    "multi_turn_tool_use_quality_v1",
)
NEED = "needs Vertex AI's evaluation service, which ci-eval does not call"


@pytest.fixture
def evals(tmp_path: Path) -> Path:
    """The sample eval set beside a test_config.json naming safety_v1."""
    shutil.copy(SAMPLES / "evals/weather_basic.evalset.json", tmp_path)
    config = {"criteria": {"tool_trajectory_avg_score": 1.0, "safety_v1": 0.8}}
    (tmp_path / "test_config.json").write_text(json.dumps(config, indent=2))
    return tmp_path


def test_these_are_the_metrics_that_need_vertex_ai() -> None:
    assert set(NEEDS) == set(VERTEX_ONLY)


def test_validate_says_up_front_where_a_vertex_metric_is_named_and_what_it_needs(
    evals: Path,
) -> None:
    done = run_cli("validate", ".", cwd=evals)
    assert done.returncode == 0, done.stdout + done.stderr  # a warning, not a problem
    [line] = [x for x in done.stdout.splitlines() if "safety_v1 needs" in x]
    place, said = line.split(" $.criteria.safety_v1: ")
    assert place.startswith("test_config.json:")  # its line and column
    assert said == (
        f"safety_v1 {NEED}: its cases will be NOT_EVALUATED, which fails the gate unless "
        "--fail-on leaves out not-evaluated (warning)"
    )


def test_validate_names_each_vertex_metric_once_per_config(tmp_path: Path) -> None:
    for name in ("a", "b"):
        shutil.copy(SAMPLES / "evals/weather_basic.evalset.json", tmp_path / f"{name}.evalset.json")
    criteria = dict.fromkeys(VERTEX_ONLY, 0.5) | {"response_match_score": 0.8}
    (tmp_path / "test_config.json").write_text(json.dumps({"criteria": criteria}))
    done = run_cli("validate", ".", cwd=tmp_path)
    named = [x for x in done.stdout.splitlines() if NEED in x]
    assert [line.split("$.criteria.")[1].split(":")[0] for line in named] == list(VERTEX_ONLY)


def test_run_says_it_and_each_case_says_what_the_metric_needs(evals: Path) -> None:
    agent = f"{sys.executable} {SAMPLES / 'agents/weather_agent/command_agent.py'}"
    done = run_cli(
        "run", ".", "--agent", "command", "--agent-command", agent, "--results", "r.json",
        cwd=evals,
    )  # fmt: skip
    assert done.returncode == 1  # NOT_EVALUATED fails the gate by default
    [warning] = [x for x in done.stderr.splitlines() if "safety_v1 needs" in x]
    assert warning.startswith("ci-eval: warning: test_config.json:") and NEED in warning
    cases = json.loads((evals / "r.json").read_text())["sets"][0]["cases"]
    reasons = {m["reason"] for c in cases for m in c["metrics"] if m["name"] == "safety_v1"}
    assert reasons == {f"ci-eval does not compute 'safety_v1' (a google-adk metric): it {NEED}"}
