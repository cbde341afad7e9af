"""Small helpers for the tests: load a file the way the CLI does."""

from __future__ import annotations

from pathlib import Path

from ci_eval.discover import Candidate
from ci_eval.load import Outcome, SidecarFinder, load_candidate


def load(path: Path, root: Path | None = None, claimed: bool = True) -> Outcome:
    candidate = Candidate(
        path, path.as_posix(), explicit=claimed, root=root or path.parent, claimed=claimed
    )
    return load_candidate(candidate, SidecarFinder())
