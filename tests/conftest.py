"""Shared fixtures: the real-file corpus beside the project, when it is there."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# agentevals-cli 0.11.0 in a venv of its own, for the parity tests (the `agentevals` fixture)
pytest_plugins = ["tests.agentevals_tool"]

# byte code is written whatever the machine's environment says (PYTHONDONTWRITEBYTECODE): else
# every test process, and every ci-eval and agent process the tests start, compiles ci-eval and
# the tests afresh
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# no timing is a test's verdict: on a loaded 2-core machine (CI, the mutation benchmark's two
# workers) an example or a draw may take seconds, which says nothing of the code
settings.register_profile("ci-eval", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci-eval")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: a worker more than the cores (at most 4, as addopts caps it). Half the suite
    waits on the processes and servers it starts, so with one worker a core the cores idle:
    the whole suite on 2 cores took 321 s with 3 workers, 387 s with 2."""
    return min(4, (os.cpu_count() or 1) + 1)


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


@pytest.fixture(scope="session")
def adk_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Google ADK's own ``adk api_server`` serving the sample agents: one per test process,
    shared by every test that talks to it (starting one costs seconds of imports)."""
    pytest.importorskip("google.adk")
    from tests.adk_server import adk_api_server

    with adk_api_server(tmp_path_factory.mktemp("adk")) as url:
        yield url


@pytest.fixture(autouse=True)
def _nothing_left_frozen() -> Iterator[None]:
    """A test that calls ``pipeline.run`` directly (not through ``main``, which restores it)
    leaves what the run froze out of the collector; unfreeze after every test so no later test
    on the same worker depends on which ran before it (xdist's worksteal order varies)."""
    yield
    gc.unfreeze()
