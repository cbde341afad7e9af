"""The ``agentevals`` fixture: agentevals-cli 0.11.0 made once per machine, and a machine without
it skips the parity tests with the reason, never errs (tests/agentevals_tool.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests import agentevals_tool


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(agentevals_tool.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "ci-eval-tests"


@pytest.fixture
def failing_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Python that cannot make a venv (as pip cannot reach an index); each call leaves a line."""
    calls = tmp_path / "calls"
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\necho call >> {calls}\necho 'ERROR: no network' >&2\nexit 1\n")
    python.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(python))
    return calls


def test_a_venv_given_without_agentevals_in_it_skips_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(agentevals_tool.ENV_VAR, str(tmp_path))
    with pytest.raises(pytest.skip.Exception, match=r"CI_EVAL_AGENTEVALS=.*bin/agentevals does "):
        agentevals_tool.agentevals_executable()


def test_a_failed_install_skips_with_its_reason_and_is_not_retried_by_the_next_worker(
    cache: Path, failing_python: Path
) -> None:
    reason = r"agentevals-cli 0\.11\.0 could not be installed in .*: .*exited 1: ERROR: no network"
    with pytest.raises(pytest.skip.Exception, match=reason):
        agentevals_tool.agentevals_executable()
    with pytest.raises(pytest.skip.Exception, match=reason):
        agentevals_tool.agentevals_executable()
    assert failing_python.read_text().splitlines() == ["call"]


def test_a_venv_made_before_is_used_as_it_is(cache: Path, failing_python: Path) -> None:
    venv = cache / "agentevals-0.11.0"
    (venv / "bin").mkdir(parents=True)
    (venv / ".ci-eval-installed").write_text("0.11.0")
    assert agentevals_tool.agentevals_executable() == venv / "bin/agentevals"
    assert not failing_python.exists()
