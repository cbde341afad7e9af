"""Each report is written on its own: one that cannot be (the job summary, JUnit on a full
disk) is said with its path and why, the others are still written, outputs and annotations
too; the exit code stays the gate's, or 3 when a file the user asked for is missing."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from ci_eval import publish
from tests.helpers import run_cli

SAMPLE = "samples/evals/weather_basic.evalset.json"


def test_a_job_summary_that_cannot_be_written_stops_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "summary-dir").mkdir()  # the runner's summary file, unwritable
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary-dir"),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "PATH": __import__("os").environ["PATH"],
    }
    done = run_cli("run", SAMPLE, "--junit", str(tmp_path / "j.xml"), env=env)
    assert done.returncode == 1, done.stderr  # the gate's: berlin fails, as always
    assert "cannot write the job summary" in done.stderr and str(tmp_path) in done.stderr
    assert (tmp_path / "j.xml").is_file()
    assert "gate=failed" in (tmp_path / "output.txt").read_text()
    assert "::error file=" in done.stdout  # the annotations too


def test_a_full_disk_for_junit_is_said_the_rest_written_and_the_run_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(path: Path, parts: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(publish, "write_parts_atomic", full)
    junit, summary = tmp_path / "j.xml", tmp_path / "s.md"
    done = run_cli("run", SAMPLE, "--junit", str(junit), "--summary", str(summary))
    assert done.returncode == 3
    assert f"cannot write the junit report {junit}: No space left on device" in done.stderr
    assert summary.is_file()
