"""Everything a run could refuse, refused before the first agent call: numbers (finite, in
range), where the outputs go (each one is probed by creating and removing a file there), the
gate's options and the baseline it will compare with. A mistake costs one line and exit 2, not
a finished run whose results cannot be written."""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ci_eval import baseline as baseline_store
from ci_eval import shard as shard_spec
from ci_eval.config import RunSettings
from ci_eval.errors import InputError
from ci_eval.gate import parse_fail_on


def number(
    name: str,
    value: float,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """A finite number within the bounds, else InputError naming the option."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{name} must be a finite number, not {value!r}")
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        lo = "" if low is None else f"{'>' if low_open else '>='} {low:g}"
        hi = "" if high is None else f"{'<' if high_open else '<='} {high:g}"
        raise InputError(f"{name} must be {' and '.join(x for x in (lo, hi) if x)}, not {value:g}")


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


def gate_options(settings: RunSettings) -> None:
    """--tolerance, --significance, --baseline-max-age and --fail-on."""
    number("--tolerance", settings.tolerance, low=0)
    number("--significance", settings.significance, low=0, high=1, low_open=True, high_open=True)
    number("--baseline-max-age", settings.baseline_max_age, low=0)
    parse_fail_on(settings.fail_on)


def baseline(settings: RunSettings) -> None:
    """--update-baseline can write the baseline (reading it is pipeline.load_baseline's)."""
    if settings.update_baseline:
        output_file(settings.baseline or baseline_store.DEFAULT_PATH, "--baseline")


def run(settings: RunSettings, env: Mapping[str, str]) -> None:
    """Every check that needs no agent, in the order a user would fix them."""
    for name, value, low in (
        ("--concurrency", settings.concurrency, 1),
        ("--num-runs", settings.num_runs, 1),
        ("--retries", settings.retries, 0),
    ):
        if value < low:
            raise InputError(f"{name} must be at least {low}")
    number("--timeout", settings.timeout, low=0, low_open=True)
    number("[judge] timeout", settings.judge.timeout, low=0, low_open=True)
    number("[judge] temperature", settings.judge.temperature, low=0)
    if settings.shard:
        shard_spec.parse(settings.shard)
    gate_options(settings)
    output_file(settings.results, "--results")
    output_file(settings.junit, "--junit")
    output_file(settings.summary, "--summary")
    output_dir(settings.adk_results, "--adk-results")
    baseline(settings)
