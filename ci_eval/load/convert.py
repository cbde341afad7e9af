"""The convert stage: one eval set, read in any dialect, written in another."""

from __future__ import annotations

import json
from pathlib import Path

from ci_eval.errors import InputError
from ci_eval.text.inert import inert_json


def convert(file: Path, to: str) -> tuple[str, list[str]]:
    """The eval set in ``file`` as JSON text of dialect ``to``, and what the target cannot
    represent (one line each)."""
    from ci_eval.dialects import WRITERS
    from ci_eval.load.discover import discover
    from ci_eval.load.evalsets import Failed, LoadedEvalSet, load_all

    writer = WRITERS.get(to)
    if writer is None:
        raise InputError(f"unknown target dialect {to!r}; choose one of: " + ", ".join(WRITERS))
    if not file.is_file():
        raise InputError("no such file", path=str(file))
    [outcome] = load_all(discover([file]))
    if isinstance(outcome, Failed):
        raise outcome.error
    if not isinstance(outcome, LoadedEvalSet):
        raise InputError("not an eval set (it is a metrics sidecar)", path=str(file))
    data, warnings = writer.dump(outcome.eval_set)
    return inert_json(json.dumps(data, indent=2, ensure_ascii=False)) + "\n", warnings
