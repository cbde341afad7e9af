"""`ci-eval validate` shows what `run` will use: ci-eval.toml's [run] paths and its [metrics]
table for sets without a config of their own, and a config beside a set (outside a folder the
search reads) as the sidecar it is."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers import run_cli

SAMPLE = REPO / "samples/evals/weather_basic.evalset.json"
CONFIG = '{"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.5}}'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An agent folder holding its eval set, as many ADK projects keep them."""
    (tmp_path / "weather_agent").mkdir()
    shutil.copy(SAMPLE, tmp_path / "weather_agent/weather.evalset.json")
    return tmp_path


def test_a_set_without_a_config_shows_the_metrics_table_of_ci_eval_toml(project: Path) -> None:
    (project / "ci-eval.toml").write_text("[metrics]\nresponse_match_score = 0.3\n")
    proc = run_cli("validate", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert "metrics response_match_score=0.3 from ci-eval.toml [metrics]" in proc.stdout


def test_a_config_beside_the_set_is_a_sidecar_not_unread_json(project: Path) -> None:
    (project / "weather_agent/test_config.json").write_text(CONFIG)
    proc = run_cli("validate", "-v", cwd=project)
    assert "from weather_agent/test_config.json" in proc.stdout
    assert "weather_agent/test_config.json: ok: adk-config" in proc.stdout
    assert "not read" not in proc.stdout
    assert "1 sidecar," in proc.stderr


def test_validate_searches_the_paths_of_ci_eval_toml(project: Path) -> None:
    (project / "other").mkdir()
    shutil.copy(SAMPLE, project / "other/ignored.evalset.json")
    (project / "ci-eval.toml").write_text('[run]\npaths = ["weather_agent"]\n')
    proc = run_cli("validate", cwd=project)
    assert "weather_agent/weather.evalset.json: ok" in proc.stdout
    assert "ignored.evalset.json" not in proc.stdout
