"""An ADK eval config's ``custom_metrics`` with a ``code_config``: the repository's function,
written for google-adk (its EvalMetric, Invocation and ConversationScenario in, its
EvaluationResult out), runs as google-adk runs it — validated, run with a command agent and
replayed, each metric's score and verdict google-adk's own — and is refused in one line where
google-adk is missing or cannot load it."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, run_cli, run_replay

pytest.importorskip("google.adk")

REPO = Path(__file__).resolve().parent.parent / "data" / "adk_code_metrics"
EVALS = "trip_eval/data/trip.evalset.json"
CONFIG = "trip_eval/data/test_config.json"
AGENT = ("--agent", "command", "--agent-command", "python trip_agent/command.py")
CONFIGURED = ("response_match_score", "answered", "tool_calls", "expected_tools", "mentions")
PACKAGES = ("trip_eval", "trip_agent")


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    """A copy of the repository; its packages forgotten afterwards, so that the next test
    imports its own copy."""
    root = tmp_path / "repo"
    shutil.copytree(REPO, root, ignore=shutil.ignore_patterns("__pycache__"))
    yield root
    for name in [m for m in sys.modules if m.split(".")[0] in PACKAGES]:
        del sys.modules[name]
    while str(root) in sys.path:
        sys.path.remove(str(root))


def _adk_reference(root: Path) -> list[Any]:
    """google-adk's own eval service (what `adk eval trip_agent EVALS --config_file_path
    CONFIG` runs) on the ADK form of the same agent: its EvalCaseResults."""
    from google.adk.evaluation.base_eval_service import (
        EvaluateConfig,
        EvaluateRequest,
        InferenceConfig,
        InferenceRequest,
    )
    from google.adk.evaluation.eval_config import (
        get_eval_metrics_from_config,
        get_evaluation_criteria_or_default,
    )
    from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
    from google.adk.evaluation.local_eval_service import LocalEvalService
    from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file
    from google.adk.evaluation.metric_evaluator_registry import (
        MetricEvaluatorRegistry,
        register_custom_metrics_from_config,
    )

    sys.path.insert(0, str(root))  # as PYTHONPATH=. gives `adk eval` run at the root
    from trip_agent.agent import root_agent

    config = get_evaluation_criteria_or_default(str(root / CONFIG))
    eval_set = load_eval_set_from_file(str(root / EVALS), "trip")
    sets = InMemoryEvalSetsManager()
    sets.create_eval_set(app_name="trip_agent", eval_set_id=eval_set.eval_set_id)
    for case in eval_set.eval_cases:
        sets.add_eval_case(app_name="trip_agent", eval_set_id="trip", eval_case=case)
    with warnings.catch_warnings():  # ADK marks its eval service experimental, loudly
        warnings.simplefilter("ignore")
        service = LocalEvalService(
            root_agent=root_agent,
            eval_sets_manager=sets,
            metric_evaluator_registry=register_custom_metrics_from_config(
                config, MetricEvaluatorRegistry()
            ),
        )

    async def evaluate() -> list[Any]:
        request = InferenceRequest(
            app_name="trip_agent", eval_set_id="trip", inference_config=InferenceConfig()
        )
        inferences = [r async for r in service.perform_inference(inference_request=request)]
        metrics = EvaluateConfig(eval_metrics=get_eval_metrics_from_config(config))
        evaluate = EvaluateRequest(inference_results=inferences, evaluate_config=metrics)
        return [r async for r in service.evaluate(evaluate_request=evaluate)]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return asyncio.run(evaluate())


def _adk_verdicts(results: list[Any]) -> dict[str, dict[str, tuple[float, str]]]:
    return {
        r.eval_id: {
            m.metric_name: (m.score, m.eval_status.name)
            for m in r.overall_eval_metric_results
            if m.metric_name in CONFIGURED
        }
        | {"case": (None, r.final_eval_status.name)}
        for r in results
    }


def _our_verdicts(results_file: Path) -> dict[str, dict[str, tuple[float, str]]]:
    [eval_set] = json.loads(results_file.read_text("utf-8"))["sets"]
    return {
        c["eval_id"]: {
            m["name"]: (m["score"], m["status"]) for m in c["metrics"] if m["name"] in CONFIGURED
        }
        | {"case": (None, c["status"])}
        for c in eval_set["cases"]
    }


def test_a_repositorys_custom_metrics_validate_and_score_as_google_adk_scores_them(
    repo: Path,
) -> None:
    validated = run_cli("validate", EVALS, cwd=repo)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "answered=1, tool_calls=1, expected_tools=0.9, mentions=1" in validated.stdout

    reference = _adk_reference(repo)
    expected = _adk_verdicts(reference)
    # the fixture's point: every verdict there is, and a cost over its limit, which fails
    # though its score is above the threshold (the function's own verdict, as ADK keeps it)
    assert expected["busy_porto"]["tool_calls"] == (3.0, "FAILED")
    assert expected["lisbon_weekend"]["case"] == (None, "PASSED")

    out = repo / "r.json"
    ran = run_cli("run", "trip_eval", *AGENT, "--results", str(out), cwd=repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr  # busy_porto fails, as in ADK
    assert _our_verdicts(out) == expected
    assert "tool_calls 3 > 1" in ran.stdout  # the side it failed on

    # ADK's recording of that run, replayed: the same scores again
    recorded = repo / "trip_agent/.adk/eval_history/trip_agent_trip_1.evalset_result.json"
    recorded.parent.mkdir(parents=True)
    recorded.write_text(
        json.dumps(
            {
                "eval_set_result_id": "trip_agent_trip_1",
                "eval_set_id": "trip",
                "eval_case_results": [json.loads(r.model_dump_json()) for r in reference],
                "creation_timestamp": 1.0,
            }
        ),
        "utf-8",
    )
    out.unlink()
    replayed = run_replay("trip_eval", "--results", str(out), replay=str(recorded), cwd=repo)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert _our_verdicts(out) == expected
    assert "warning" not in replayed.stderr  # the recording is the eval set's, scores agree


def test_over_several_runs_a_cost_fails_above_its_threshold(repo: Path) -> None:
    """ADK's AgentEvaluator reads the direction from the metric's own verdicts."""
    out = repo / "r.json"
    ran = run_cli("run", "trip_eval", *AGENT, "--num-runs", "2", "--results", str(out), cwd=repo)
    verdicts = _our_verdicts(out)
    assert ran.returncode == 1
    assert verdicts["busy_porto"]["tool_calls"] == (3.0, "FAILED")
    assert verdicts["lisbon_weekend"]["tool_calls"] == (1.0, "PASSED")


def test_without_google_adk_such_a_config_is_one_line_saying_what_to_install(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("google.adk", "google.adk.evaluation.metric_evaluator_registry"):
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    said = (
        f"{CONFIG}:10:33: $.custom_metrics.answered.code_config.name: custom metrics answered, "
        "tool_calls, expected_tools, mentions (custom_metrics with a code_config) need "
        "google-adk, which calls such functions with its own types, and google-adk is not "
        "installed: pip install 'ci-eval[adk]'"
    )
    validated = run_cli("validate", EVALS, cwd=repo)
    assert validated.returncode == 2
    assert said in validated.stdout + validated.stderr
    ran = run_cli("run", "trip_eval", *AGENT, cwd=repo)
    assert ran.returncode == 2
    assert said in ran.stderr
    in_the_slim_image = run_cli("run", "trip_eval", *AGENT, cwd=repo, env={"CI_EVAL_IMAGE": "slim"})
    assert "this action has no google-adk: use the image with it, `uses: " in (
        in_the_slim_image.stderr
    )


@pytest.mark.parametrize(
    ("name", "said"),
    [
        (
            "trip_eval.nowhere.answered",
            "google-adk cannot load its code_config 'trip_eval.nowhere.answered' "
            "(ModuleNotFoundError: No module named 'trip_eval.nowhere'); the module path is "
            "imported from the repository root (the working directory), as `adk eval` run "
            "there with PYTHONPATH=. imports it",
        ),
        (
            "answered",
            "its code_config 'answered' is not a dotted 'package.module.function' path, which "
            "google-adk imports",
        ),
    ],
)
def test_a_function_google_adk_cannot_load_is_an_input_error_naming_where(
    repo: Path, name: str, said: str
) -> None:
    config = repo / CONFIG
    text = config.read_text("utf-8")
    config.write_text(text.replace('"trip_eval.metrics.answered"', json.dumps(name)), "utf-8")
    ran = run_cli("run", "trip_eval", *AGENT, cwd=repo)
    assert ran.returncode == 2
    assert (
        f"{CONFIG}:10:33: $.custom_metrics.answered.code_config.name: custom metric answered: "
        + said
    ) in ran.stderr


@pytest.mark.parametrize("changed", [True, False])
def test_a_custom_metric_function_the_pull_request_changed_is_said(
    repo: Path, monkeypatch: pytest.MonkeyPatch, changed: bool
) -> None:
    from ci_eval.gate.main_history import custom_code_changes
    from ci_eval.load.evalsets import LoadedEvalSet
    from ci_eval.metrics.custom import register_custom
    from ci_eval.preflight import register_code_metrics
    from tests.helpers import load

    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "the metrics")
    git(repo, "checkout", "-q", "-b", "feature")
    if changed:  # the pull request makes a metric generous
        metrics = repo / "trip_eval/metrics.py"
        metrics.write_text(metrics.read_text("utf-8") + "\n\ndef answered(*args): ...\n")
        git(repo, "commit", "-q", "-am", "the pull request")
    monkeypatch.chdir(repo)
    loaded = load(repo / EVALS, root=repo)
    assert isinstance(loaded, LoadedEvalSet)
    try:
        register_custom({})
        register_code_metrics([loaded])
        said = custom_code_changes({"GITHUB_BASE_REF": "main"})
    finally:
        register_custom({})
    expected = [
        f"custom metric {name}: its code (trip_eval/metrics.py) changed by this pull request, "
        "and scored this run"
        for name in ("answered", "tool_calls", "expected_tools", "mentions")
    ]
    assert [c.text() for c in said] == (expected if changed else [])


def test_code_the_pull_request_changed_is_not_imported_unless_the_workflow_trusts_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("google.adk")
    from ci_eval.load.evalsets import LoadedEvalSet
    from ci_eval.metrics import lookup
    from ci_eval.metrics.base import NotApplicable, ScoreContext
    from ci_eval.metrics.custom import register_custom
    from ci_eval.metrics.pr_code import PullRequestCode
    from ci_eval.model.metric_spec import MetricSpec
    from ci_eval.preflight import register_code_metrics
    from tests.helpers import load

    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "the metrics")
    git(repo, "checkout", "-q", "-b", "feature")
    metrics = repo / "trip_eval/metrics.py"
    metrics.write_text(metrics.read_text("utf-8") + "\n\ndef answered(*args): ...\n")
    git(repo, "commit", "-q", "-am", "the pull request")
    monkeypatch.chdir(repo)
    loaded = load(repo / EVALS, root=repo)
    assert isinstance(loaded, LoadedEvalSet)
    pr = {"GITHUB_BASE_REF": "main"}
    try:
        register_custom({})
        register_code_metrics([loaded], PullRequestCode(pr))
        assert "trip_eval.metrics" not in sys.modules  # not imported: importing runs it
        metric = lookup("answered")
        assert metric is not None
        with pytest.raises(NotApplicable, match=r"\(trip_eval/metrics.py\) is added or changed"):
            metric.scorer([], [], MetricSpec("answered"), ScoreContext())
        register_custom({})
        register_code_metrics([loaded], PullRequestCode(pr, trusted=True))
        trusted = lookup("trip_eval.metrics.answered")  # trusted: it runs, in the metrics worker
        assert trusted is not None and trusted.description.startswith("ADK custom metric")
        assert "trip_eval.metrics" not in sys.modules
    finally:
        register_custom({})
