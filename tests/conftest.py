"""Shared fixtures: the real-file corpus beside the project, when it is there."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
SAMPLES = REPO / "samples"


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("*.json"))


def corpus_id(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix()


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not here")
    return CORPUS
