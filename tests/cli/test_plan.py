"""`ci-eval plan`: the runs a pull request needs to catch a drop, from main's history."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_eval.gate import baseline_file
from tests.helpers import git, run_cli
from tests.report.scenarios import _c, _history


def _baseline(tmp_path: Path, cases: int = 40, pushes: int = 7) -> Path:
    suite = [_c("s", f"c{i:02d}", f"q{i}", "tool", "a") for i in range(cases)]
    path = tmp_path / "baseline.json"
    baseline_file.write(path, _history({c: [True] * 3 for c in suite}, pushes))
    return path


def test_plan_prints_each_option_and_the_cheapest_that_reaches_the_power(tmp_path: Path) -> None:
    done = run_cli("plan", "--baseline", str(_baseline(tmp_path)), "--detect", "0.95:0.2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("main's history: ") and "40 cases over 7 pushes" in lines[0]
    assert "falls to 20%, with 90% probability (on average over its 40 such cases)" in lines[1]
    plan = next(line for line in lines if line.startswith("plan: "))
    assert plan.startswith("plan: num_runs = ") and "agent runs per pull request" in plan
    runs = int(plan.split("num_runs = ")[1].split()[0].rstrip(","))
    row = next(line.split() for line in lines if line.split()[:1] == [str(runs)])
    assert int(row[2].rstrip("%")) >= 90  # the row it chose reaches the power asked


def test_plan_says_when_no_setting_reaches_the_power(tmp_path: Path) -> None:
    done = run_cli(
        "plan", "--baseline", str(_baseline(tmp_path)), "--detect", "0.95:0.9", "--max-runs", "2"
    )
    assert done.returncode == 0
    assert "plan: no num_runs up to 2 reaches 90%" in done.stdout


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--detect", "0.6:0.95"], "--detect '0.6:0.95': expected FROM:TO"),
        (["--detect", "high"], "--detect 'high': expected FROM:TO"),
        (["--power", "1.5"], "--power 1.5: expected a probability"),
        (["--max-runs", "0"], "--max-runs 0: expected 1 to 20"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_2(tmp_path: Path, argv: list[str], said: str) -> None:
    done = run_cli("plan", "--baseline", str(_baseline(tmp_path)), *argv)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"ci-eval: {said}")


def test_no_history_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = run_cli("plan", "--baseline", str(tmp_path / "none.json"))
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith(f"ci-eval: --baseline {tmp_path / 'none.json'}: no such file")


def test_a_history_without_pushes_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_text('{"format": 3, "pushes": [], "sets": {}}')
    done = run_cli("plan", "--baseline", str(path))
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert "no history to plan from" in line and "ci-eval baseline update" in line


def test_a_data_branch_that_could_not_be_fetched_is_said_with_gits_reason(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    git(tmp_path, "remote", "add", "origin", str(tmp_path / "nowhere"))
    done = run_cli("plan", "--baseline-branch", "ci-eval-data", cwd=tmp_path)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line == (
        "ci-eval: no history to plan from at baseline.json on branch ci-eval-data: git fetch "
        f"origin ci-eval-data failed (fatal: '{tmp_path / 'nowhere'}' does not appear to be a "
        "git repository)"
    )
