"""trpc-agent-go's evaluation guide names the metrics file ``<evalSetId>.metric.json`` as well
as ``<evalSetId>.metrics.json``: either beside a trpc eval set is its metrics."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ci_eval.load.evalsets import LoadedEvalSet
from tests.conftest import SAMPLES
from tests.helpers import load

TRPC = SAMPLES / "evals/trpc"


@pytest.mark.parametrize("suffix", [".metrics.json", ".metric.json"])
def test_either_spelling_of_the_metrics_file_applies(tmp_path: Path, suffix: str) -> None:
    [evalset] = TRPC.glob("*.evalset.json")
    [metrics] = TRPC.glob("*.metrics.json")
    shutil.copy(evalset, tmp_path / evalset.name)
    shutil.copy(metrics, tmp_path / metrics.name.replace(".metrics.json", suffix))
    loaded = load(tmp_path / evalset.name, root=tmp_path)
    assert isinstance(loaded, LoadedEvalSet)
    assert loaded.metrics.source.endswith(suffix)
    assert loaded.metrics.dialect == "trpc"
