"""``--select changed``: in a pull request (a real git repository: main with the samples and
a history, a branch as a PR job sees it), only the cases the PR could have changed re-run; the
rest carry main's latest result, said as not re-run and never counted as passed; a change to
what the agent reads re-runs everything, and the verdict says why."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from ci_eval.gate.changed import choose
from ci_eval.load.discover import discover
from ci_eval.load.evalsets import load_all
from ci_eval.model.baseline import load
from tests.conftest import REPO
from tests.helpers import git, run_cli


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    return {**env, **extra}


@pytest.fixture(scope="module")
def main_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main: the samples, ci-eval.toml and a baseline of one job."""
    root = tmp_path_factory.mktemp("select") / "main"
    root.mkdir()
    shutil.copytree(
        REPO / "samples", root / "samples", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO / "ci-eval.toml", root / "ci-eval.toml")
    (root / "README.md").write_text("# agent\n")
    git(root, "init", "-q", "-b", "main")
    done = run_cli("run", "--update-baseline", "--fail-on", "error", cwd=root, env=_env())
    assert done.returncode == 0, done.stdout + done.stderr
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "samples and their history")
    return root


def _pr(main_repo: Path, tmp_path: Path, **files: str) -> Path:
    """A clone on a branch with ``files`` written (path → text, appended to what is there)."""
    clone = tmp_path / "pr"
    git(tmp_path, "clone", "-q", main_repo.as_uri(), "pr")
    git(clone, "checkout", "-q", "-b", "feature")
    for name, text in files.items():
        path = clone / name
        path.write_text((path.read_text() if path.exists() else "") + text)
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "the pull request")
    return clone


def _run(clone: Path, *args: str) -> tuple[int, str, dict[str, Any]]:
    done = run_cli(
        "run", "--select", "changed", "--results", "r.json", *args, cwd=clone,
        env=_env(GITHUB_BASE_REF="main"),
    )  # fmt: skip
    results = json.loads((clone / "r.json").read_text())
    return done.returncode, done.stdout.strip().splitlines()[-1], results


def _ran(results: dict[str, Any]) -> set[str]:
    return {c["eval_id"] for s in results["sets"] for c in s["cases"] if c.get("runs")}


def test_a_pr_that_changes_only_a_readme_runs_nothing_and_passes(
    main_repo: Path, tmp_path: Path
) -> None:
    clone = _pr(main_repo, tmp_path, **{"README.md": "more words\n"})
    code, line, results = _run(clone)
    assert code == 0, line
    assert _ran(results) == set()
    assert not results["comparison"]["changed"]  # no threshold said to move: nothing was scored
    assert "nothing the evals watch changed since " in line and "(5 of 6 cases not re-run)" in line
    statuses = {c["status"] for s in results["sets"] for c in s["cases"]}
    assert statuses == {"SKIPPED"}  # never counted as passed by this pull request
    said = {c["skipped"] for s in results["sets"] for c in s["cases"]}
    assert any("main's latest run failed" in s for s in said)  # berlin, as main has it


def test_a_pr_that_changes_one_eval_set_runs_only_its_cases(
    main_repo: Path, tmp_path: Path
) -> None:
    legacy = "samples/evals/legacy/calculator.test.json"
    clone = _pr(main_repo, tmp_path, **{legacy: "\n"})
    code, line, results = _run(clone)
    assert code == 0, line
    assert _ran(results) == {"samples/evals/legacy/calculator.test.json"}
    assert "re-ran the eval sets changed since " in line and "(4 of 6 cases not re-run)" in line


def test_a_change_to_the_agent_reruns_everything_and_says_why(
    main_repo: Path, tmp_path: Path
) -> None:
    agent = "samples/agents/weather_agent/logic.py"
    code, line, results = _run(_pr(main_repo, tmp_path, **{agent: "\n# a comment\n"}))
    assert code == 0, line  # berlin fails as on main: a known failure
    assert len(_ran(results)) == 5  # every case but the one that needs a simulator
    said = results["settings"]["selection"]
    assert said == f"every case ran (--select changed): the agent's inputs changed ({agent})"


def test_watch_narrows_what_counts_as_the_agents_inputs(main_repo: Path, tmp_path: Path) -> None:
    clone = _pr(main_repo, tmp_path, **{"samples/agents/weather_agent/notes.txt": "x\n"})
    code, line, results = _run(clone, "--watch", "samples/agents/**/*.py")
    assert code == 0 and _ran(results) == set(), line


def test_outside_a_pull_request_every_case_runs_and_the_verdict_says_why(
    main_repo: Path,
) -> None:
    done = run_cli("run", "--select", "changed", cwd=main_repo, env=_env())
    assert "every case ran (--select changed)" in done.stdout.splitlines()[-1]
    assert "every case ran (--select changed): not a pull request" in done.stderr


def test_select_changed_is_refused_with_update_baseline(main_repo: Path) -> None:
    done = run_cli("run", "--select", "changed", "--update-baseline", cwd=main_repo, env=_env())
    assert done.returncode == 2
    assert "--select changed cannot go with --update-baseline" in done.stderr


def test_a_new_case_runs_though_nothing_else_changed() -> None:
    [loaded] = [o for o in load_all(discover([REPO / "samples/evals/weather_basic.evalset.json"]))]
    history = load({"format": 3, "sets": {"weather_basic": {"cases": {
        "paris_weather": {"metrics": {"m": {"scores": [1.0], "threshold": 1.0}}},
    }}}})  # fmt: skip
    chosen = choose([loaded], [], history, "0123456789abcdef")
    assert set(chosen.carried) == {("weather_basic", "paris_weather")}
    assert chosen.carried[("weather_basic", "paris_weather")] == (
        "not re-run (unchanged since 0123456789ab); main's latest run passed"
    )
    assert chosen.said == "nothing the evals watch changed since 0123456 (1 of 3 cases not re-run)"
