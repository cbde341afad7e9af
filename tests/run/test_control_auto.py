"""``--control auto``: the merge base's agent runs in the same job only when the suite-wide test
alone fires, and decides whether the drop is the day's (it shows it too) or the pull
request's (it does not). Replays in a repository of their own: main's recordings at the merge
base are what the control replays."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import git, run_cli
from tests.run.test_confirmation_reruns import _suite

CASES = [f"c{i:02d}" for i in range(30)]
BROKEN = CASES[:8]  # fail their first run in the pull request, pass the rerun


def _env(**more: str) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], **more}


def _history(root: Path) -> None:
    """Main's history: 7 pushes of 3 passing runs a case, recorded by the CLI."""
    evalset = _suite(root, {c: "PPPPP" for c in CASES})
    for n in range(7):
        run = run_cli("run", str(evalset), "--agent", "replay", "--replay", "rec",
                      "--num-runs", "3", "--results", "m.json", cwd=root)  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr
        results = json.loads((root / "m.json").read_text())
        results["started"] = f"2026-11-{n + 1:02d}T00:00:00+00:00"  # one job a day
        (root / "m.json").write_text(json.dumps(results))
        done = run_cli("baseline", "update", "m.json", "--baseline", "b.json", cwd=root,
                       env=_env(GITHUB_SHA=f"{n + 1:040x}"))  # fmt: skip
        assert done.returncode == 0, done.stderr
    (root / "m.json").unlink()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    _history(root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "main")
    return root


def _pr(root: Path, main_today: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Main's recordings today (``main_today``: they fail too), then the pull request's: the
    first 8 cases fail their first run; run with --control auto in a pull request."""
    if main_today is not None:
        _suite(root, main_today)
        git(root, "commit", "-q", "-am", "main today")
    git(root, "checkout", "-q", "-b", "pr")
    _suite(root, {c: "FP" if c in BROKEN else "PP" for c in CASES}, exact=True)
    git(root, "commit", "-q", "-am", "pr")
    done = run_cli("run", "suite.evalset.json", "--agent", "replay", "--replay", "rec",
                   "--baseline", "b.json", "--control", "auto", cwd=root,
                   env=_env(GITHUB_BASE_REF="main"))  # fmt: skip
    out = done.stdout + done.stderr
    return done.returncode, out, next(line for line in out.splitlines() if line.startswith("gate "))


def test_a_drop_the_merge_bases_agent_does_not_show_is_the_pull_requests(repo: Path) -> None:
    code, out, line = _pr(repo)
    assert "--control auto: the suite-wide test alone fired, so a same-day control ran" in out
    assert "150 agent runs of the merge base" in out  # 30 cases sampled, 5 runs each
    assert "shows no drop against main's history today, so the drop is this pull request's" in out
    assert code == 1 and "suite-wide drop" in line
    assert "may be the provider's" not in line  # the control ruled the day out
    assert "not the provider's day: the merge base's agent, run in this job on 30 cases" in out


def test_a_drop_the_merge_bases_agent_shows_too_is_the_days(repo: Path) -> None:
    today = {c: "FFFFP" if c in BROKEN else "PPPPP" for c in CASES}
    code, out, line = _pr(repo, main_today=today)
    assert "it shows the drop too, and this pull request is judged against it" in out
    assert code == 0, line
    # the verdict's one line ends cut where it is long: a latency item a loaded machine's
    # timings add (never blocking here) can push the count past the cut
    assert "a broad drop the merge base's agent shows too today" in line


def test_no_control_runs_where_the_suite_wide_test_does_not_fire(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "pr")
    done = run_cli("run", "suite.evalset.json", "--agent", "replay", "--replay", "rec",
                   "--baseline", "b.json", "--control", "auto", cwd=repo,
                   env=_env(GITHUB_BASE_REF="main"))  # fmt: skip
    assert done.returncode == 0
    assert "same-day control" not in done.stdout + done.stderr


def test_outside_a_pull_request_auto_is_quietly_off(repo: Path) -> None:
    done = run_cli("run", "suite.evalset.json", "--agent", "replay", "--replay", "rec",
                   "--baseline", "b.json", "--control", "auto", cwd=repo, env=_env())  # fmt: skip
    assert done.returncode == 0 and "control" not in done.stdout + done.stderr
