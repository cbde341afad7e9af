from __future__ import annotations

from pathlib import Path

import pytest

from tests.gate.pull_request import make_main_repo


@pytest.fixture(scope="module")
def main_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main: the samples, ci-eval.toml and a baseline of two jobs of 3 runs each."""
    return make_main_repo(tmp_path_factory)
