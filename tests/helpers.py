"""Small helpers for the tests: load a file the way the CLI does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ci_eval.discover import Candidate
from ci_eval.load import Outcome, SidecarFinder, load_candidate


def load(path: Path, root: Path | None = None, claimed: bool = True) -> Outcome:
    candidate = Candidate(
        path, path.as_posix(), explicit=claimed, root=root or path.parent, claimed=claimed
    )
    return load_candidate(candidate, SidecarFinder())


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`ci-eval ARGS` as a user runs it: a fresh interpreter, output captured."""
    return subprocess.run(
        [sys.executable, "-m", "ci_eval", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env=env,
    )
