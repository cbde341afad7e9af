"""Each extension point (dialect, connector, metric, reporter) is one module plus one
registration: each test writes such a module to tmp, imports it (which registers it) and sees it
work end to end through ``ci-eval run``."""

from __future__ import annotations

import copy
import importlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ci_eval import connectors, dialects
from ci_eval.errors import InputError
from ci_eval.metrics import REGISTRY, reset
from ci_eval.metrics.custom import register_custom
from ci_eval.publish import REPORTERS, ReportSettings, check_reports, publish
from ci_eval.results.file import read_results
from tests.helpers import run_cli

# an agent that answers every turn with the user's own words: registered as --agent echo
ECHO_CONNECTOR = """
from ci_eval.connectors import register
from ci_eval.connectors.base import ActualTurn


class EchoSession:
    def send(self, user_content, deadline=None):
        return ActualTurn(final_response=user_content.model_copy(update={"role": "model"}))

    def close(self):
        return None


class EchoConnector:
    kind = "echo"

    def describe(self):
        return "an agent that echoes"

    def open(self, eval_set_id, case, run):
        return EchoSession()

    def close(self):
        return None


register("echo", lambda agent, timeout, retries, child_env: EchoConnector())
"""

# a team's own eval-set format: {"qa_suite": NAME, "questions": [{"id", "ask", "expect"}]}
QA_DIALECT = """
from ci_eval.dialects import register
from ci_eval.model import Content, EvalCase, EvalSet, Invocation


class QaDialect:
    name = "qa"

    def sniff(self, data):
        return isinstance(data, dict) and "qa_suite" in data

    def load(self, doc, ctx):
        cases = [
            EvalCase(
                eval_id=q["id"],
                conversation=[
                    Invocation(
                        invocation_id=q["id"],
                        user_content=Content.from_text(q["ask"], "user"),
                        final_response=Content.from_text(q["expect"], "model"),
                    )
                ],
            )
            for q in doc.data["questions"]
        ]
        return EvalSet(eval_set_id=doc.data["qa_suite"], eval_cases=cases)


register(QaDialect(), first=True)
"""

SHOUTING_METRIC = """
from ci_eval.metrics import register
from ci_eval.metrics.base import Metric


def shouting(expected, actual, spec, ctx):
    scores = [
        1.0 if inv.final_response and inv.final_response.text().isupper() else 0.0
        for inv in actual
    ]
    return sum(scores) / len(scores), scores, {}


register(Metric("shouting", "Answers in capitals, per turn.", shouting, origin="team"))
"""

CSV_REPORTER = """
from ci_eval.publish import Reporter, register_reporter


def to_csv(results):
    rows = ["set,case,status"]
    rows += [f"{s.eval_set_id},{c.eval_id},{c.status}" for s in results.sets for c in s.cases]
    return "\\n".join(rows) + "\\n"


register_reporter(Reporter("csv", to_csv))
"""


REGISTRIES = (dialects.DIALECTS, dialects.WRITERS, connectors.CONNECTORS, REGISTRY, REPORTERS)


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str, str], None]]:
    """Import a module written to tmp (which registers what it defines); every registry is
    restored afterwards, so no other test sees the addition."""
    saved = [copy.copy(r) for r in REGISTRIES]
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    names: list[str] = []

    def add(name: str, source: str) -> None:
        (tmp_path / f"{name}.py").write_text(source)
        names.append(name)
        importlib.import_module(name)

    yield add
    for name in names:
        sys.modules.pop(name, None)
    for registry, before in zip(REGISTRIES, saved, strict=True):
        registry.clear()
        if isinstance(registry, list):
            registry.extend(before)
        else:
            registry.update(before)


def _eval_set(path: Path, answers: dict[str, str]) -> Path:
    """An ADK eval set whose cases expect the user's words back."""
    cases = [
        {
            "eval_id": case_id,
            "conversation": [
                {
                    "invocation_id": "1",
                    "user_content": {"role": "user", "parts": [{"text": text}]},
                    "final_response": {"role": "model", "parts": [{"text": text}]},
                }
            ],
        }
        for case_id, text in answers.items()
    ]
    path.write_text(json.dumps({"eval_set_id": "echoes", "eval_cases": cases}))
    return path


def _run(*args: str) -> tuple[int, dict]:
    result = run_cli("run", *args, "--results", "r.json")
    data = json.loads(Path("r.json").read_text()) if Path("r.json").exists() else {}
    return result.returncode, data


def _statuses(results: dict) -> dict[str, str]:
    return {c["eval_id"]: c["status"] for s in results["sets"] for c in s["cases"]}


def test_a_registered_connector_is_an_agent_kind(plugin, tmp_path: Path) -> None:
    plugin("echo_agent", ECHO_CONNECTOR)
    _eval_set(tmp_path / "echo.evalset.json", {"hello": "hello there", "bye": "bye now"})
    code, results = _run("echo.evalset.json", "--agent", "echo")
    assert code == 0
    assert _statuses(results) == {"hello": "PASSED", "bye": "PASSED"}


def test_a_registered_dialect_loads_its_files(plugin, tmp_path: Path) -> None:
    plugin("echo_agent", ECHO_CONNECTOR)
    plugin("qa_dialect", QA_DIALECT)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals/suite.json").write_text(
        json.dumps(
            {
                "qa_suite": "team-qa",
                "questions": [
                    {"id": "same", "ask": "ping", "expect": "ping"},
                    {"id": "other", "ask": "ping", "expect": "a different answer"},
                ],
            }
        )
    )
    code, results = _run("evals", "--agent", "echo")
    assert code == 1  # one case fails its response_match_score: the gate says so
    assert results["sets"][0]["dialect"] == "qa"
    assert _statuses(results) == {"same": "PASSED", "other": "FAILED"}


def test_a_registered_metric_scores_cases(plugin, tmp_path: Path) -> None:
    plugin("echo_agent", ECHO_CONNECTOR)
    plugin("shouting_metric", SHOUTING_METRIC)
    _eval_set(tmp_path / "loud.evalset.json", {"loud": "HELLO", "quiet": "hello"})
    code, results = _run("loud.evalset.json", "--agent", "echo", "--metric", "shouting=1.0")
    assert code == 1
    assert _statuses(results) == {"loud": "PASSED", "quiet": "FAILED"}


def test_a_registered_reporter_writes_its_file(plugin, tmp_path: Path) -> None:
    plugin("echo_agent", ECHO_CONNECTOR)
    plugin("csv_reporter", CSV_REPORTER)
    _eval_set(tmp_path / "echo.evalset.json", {"hello": "hello", "bye": "bye"})
    code, _ = _run("echo.evalset.json", "--agent", "echo")
    assert code == 0
    publish(read_results(Path("r.json")), ReportSettings(files={"csv": "results.csv"}), env={})
    assert Path("results.csv").read_text() == (
        "set,case,status\nechoes,hello,PASSED\nechoes,bye,PASSED\n"
    )


def test_an_unknown_report_is_an_input_error_naming_the_known_ones(plugin) -> None:
    plugin("csv_reporter", CSV_REPORTER)
    known = "adk-results, adk-rs-report, csv, junit, summary"
    with pytest.raises(InputError, match=rf"unknown report 'tsv'; known: {known}"):
        check_reports(ReportSettings(files={"tsv": "out.tsv"}))


def test_every_report_written_to_a_path_is_a_registered_reporter() -> None:
    settings = ReportSettings(junit="j.xml", summary="s.md", adk_results="adk")
    assert settings.report_files() == {"junit": "j.xml", "summary": "s.md", "adk-results": "adk"}
    assert set(settings.report_files()) <= set(REPORTERS)


TEAM_METRICS = "def loud(expected, actual, criterion):\n    return 1.0\n"


def _site(tmp_path: Path) -> Path:
    """Site-packages outside the workspace (the working directory): an entry point in the
    workspace is the repository's code, which the worker runs (tests/security)."""
    return tmp_path.parent / f"{tmp_path.name}-site"


def _entry_point(site: Path, line: str) -> None:
    """An installed package declaring ``line`` in the ci_eval.metrics entry point group."""
    dist = site / "team_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: team-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[ci_eval.metrics]\n{line}\n")


def test_a_custom_metric_may_not_take_a_built_in_name(plugin, tmp_path: Path) -> None:
    plugin("team_metrics", TEAM_METRICS)
    (tmp_path / "ci-eval.toml").write_text(
        '[custom_metrics]\nresponse_match_score = "team_metrics:loud"\n'
    )
    _eval_set(tmp_path / "echo.evalset.json", {"hello": "hello"})
    result = run_cli("run", "echo.evalset.json", "--agent", "echo")
    assert result.returncode == 2
    assert (
        "custom metric response_match_score: [custom_metrics] response_match_score = "
        "'team_metrics:loud' has the name of the built-in metric response_match_score (ADK)"
    ) in result.stderr
    assert REGISTRY["response_match_score"].origin == "ADK"  # not overwritten


def test_an_entry_point_may_not_take_a_built_in_name(plugin, tmp_path: Path, monkeypatch) -> None:
    plugin("team_metrics", TEAM_METRICS)
    _entry_point(_site(tmp_path), "tool_trajectory_avg_score = team_metrics:loud")
    monkeypatch.syspath_prepend(str(_site(tmp_path)))
    with pytest.raises(InputError, match=r"the entry point tool_trajectory_avg_score = "):
        register_custom({})
    assert REGISTRY["tool_trajectory_avg_score"].origin == "ADK"


def test_a_custom_metric_and_an_entry_point_may_not_share_a_name(
    plugin, tmp_path: Path, monkeypatch
) -> None:
    plugin(
        "team_metrics",
        TEAM_METRICS + "\n\ndef quiet(expected, actual, criterion):\n    return 0.0\n",
    )
    _entry_point(_site(tmp_path), "volume = team_metrics:quiet")
    monkeypatch.syspath_prepend(str(_site(tmp_path)))
    with pytest.raises(InputError) as raised:
        register_custom({"volume": "team_metrics:loud"})
    assert str(raised.value.message) == (
        "custom metric volume is defined twice: by [custom_metrics] volume = "
        "'team_metrics:loud' and by the entry point volume = 'team_metrics:quiet'; rename one"
    )


def test_the_same_function_named_twice_is_one_metric(plugin, tmp_path: Path, monkeypatch) -> None:
    plugin("team_metrics", TEAM_METRICS)
    _entry_point(_site(tmp_path), "volume = team_metrics:loud")
    monkeypatch.syspath_prepend(str(_site(tmp_path)))
    register_custom({"volume": "team_metrics:loud"})
    register_custom({"volume": "team_metrics:loud"})  # a second run replaces the first's
    assert REGISTRY["volume"].description == "custom metric team_metrics:loud"


def test_a_metric_registered_in_code_outlives_the_runs_custom_metrics(plugin) -> None:
    """Custom metrics (ci-eval.toml, entry points) are the run's; a registration in code stays
    for every run of the process, like a dialect's or a connector's."""
    plugin("team_metrics", TEAM_METRICS)
    plugin("shouting_metric", SHOUTING_METRIC)
    register_custom({"volume": "team_metrics:loud"})
    reset()
    assert "volume" not in REGISTRY
    assert REGISTRY["shouting"].origin == "team"
