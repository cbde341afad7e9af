"""Main's history written by an earlier ci-eval keeps gating: a baseline that ci-eval 6282b89
wrote (format 3, three pushes of the sample weather set, tests/data/baseline-6282b89/) gives the
same verdict as the baseline today's ci-eval writes from the same three results files."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import REPO
from tests.helpers import run_cli, run_sample_agent

DATA = REPO / "tests/data/baseline-6282b89"


def _verdict(root: Path, baseline: Path) -> tuple[int, str]:
    done = run_sample_agent(
        "samples/evals/weather_basic.evalset.json",
        *("--baseline", str(baseline), "--baseline-max-age", "100000"),
        cwd=root,
    )
    return done.returncode, done.stdout.splitlines()[-1]


def test_a_baseline_written_by_6282b89_gates_as_one_written_today(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    today = tmp_path / "today.json"
    for n in (1, 2, 3):
        done = run_cli(
            "baseline", "update", str(DATA / f"r{n}.json"), "--baseline", str(today), cwd=tmp_path
        )
        assert done.returncode == 0, done.stdout + done.stderr
    old = _verdict(tmp_path, DATA / "baseline.json")
    assert old == _verdict(tmp_path, today)
    assert old[0] == 0
    assert old[1].startswith("gate passed: 0 regressions against main's history (3 cases judged)")
