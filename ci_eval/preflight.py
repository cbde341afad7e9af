"""Everything a run could refuse, refused before the first agent call: its settings (checked
once, :func:`ci_eval.settings.check`) and where the outputs go (each one is probed by creating
and removing a file there). A mistake costs one line and exit 2, not a finished run whose
results cannot be written."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ci_eval import baseline as baseline_store
from ci_eval.errors import InputError
from ci_eval.settings import RunSettings, check


def _probe(directory: Path, option: str, shown: str) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".ci-eval-probe.", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(
            f"{option}: cannot write here: {exc.strerror or exc}", path=shown
        ) from None


def output_file(path: str | Path | None, option: str) -> None:
    """The file can be written (atomically: its directory takes a new file)."""
    if not path:
        return
    target = Path(path)
    if target.is_dir():
        raise InputError(f"{option}: is a directory, expected a file name", path=str(path))
    _probe(target.parent, option, str(path))


def output_dir(path: str | Path | None, option: str) -> None:
    if not path:
        return
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise InputError(f"{option}: exists and is not a directory", path=str(path))
    _probe(target, option, str(path))


def outputs(settings: RunSettings) -> None:
    """Every file and folder the run writes, named as the user set them."""
    name = settings.names.name
    output_file(settings.results, name("results"))
    output_file(settings.junit, name("junit"))
    output_file(settings.summary, name("summary"))
    output_dir(settings.adk_results, name("adk_results"))
    if settings.update_baseline:  # reading it is pipeline.load_baseline's
        output_file(settings.baseline or baseline_store.DEFAULT_PATH, name("baseline"))


def run(settings: RunSettings) -> None:
    """Every check that needs no agent, in the order a user would fix them."""
    check(settings)
    outputs(settings)
