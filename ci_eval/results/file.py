"""The results file (``--results FILE``) on disk: written case by case, read back by ``report``,
``compare``, ``merge``, ``baseline update`` and ``--agent replay``.

What the file holds is the results model itself (:mod:`ci_eval.model.results_file`); this
module reads and writes the file. A file as ci-eval writes it is read case by case
(:mod:`ci_eval.results.stream`); anything that fast reader cannot vouch for is read the
careful way, which names the problem with the file, line and JSON path.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ci_eval.errors import InputError
from ci_eval.io.files import write_json_atomic as write_json_atomic  # re-exported
from ci_eval.model.results import (
    CaseMetric,
    CaseRecord,
    InvocationRecord,
    MetricResult,
    RunRecord,
    RunResults,
    SetRecord,
    TextRuns,
)
from ci_eval.model.results_file import (
    SCHEMA_VERSION,
    Invalid,
    case_line,
    document,
    from_data,
    run_text,
)

# the results model, re-exported: most readers of a results file want both
__all__ = [
    "SCHEMA_VERSION",
    "CaseMetric",
    "CaseRecord",
    "InvocationRecord",
    "MetricResult",
    "RunRecord",
    "RunResults",
    "SetRecord",
    "from_json",
    "read_results",
    "run_text",
    "to_json",
    "write_json_atomic",
    "write_results",
]


def to_json(results: RunResults) -> dict[str, Any]:
    """The results file's data."""
    return document(results, lambda cases: [json.loads(case_line(c)) for c in cases])


def write_results(path: Path, results: RunResults) -> None:
    """The results file, written case by case: a large run's data, as Python objects, never
    exists whole."""
    from ci_eval.io import jsonwrite
    from ci_eval.text import redact

    redactor = redact.current()

    def line(case: CaseRecord) -> jsonwrite.Raw:
        text = case_line(case)
        if _written_whole(case):  # the report's scrub need not write it out again to search it
            redactor.vouch(case, text)
        return jsonwrite.Raw(text)

    def cases(records: list[CaseRecord]) -> jsonwrite.Lazy:
        return jsonwrite.Lazy(map(line, records))

    write_json_atomic(path, document(results, cases))


def _written_whole(case: CaseRecord) -> bool:
    """Whether the case's line holds every string of the case: its runs are text already, or
    each invocation is (one still an object has dialect data the file does not keep)."""
    runs = case.runs
    return isinstance(runs, TextRuns) or all(i.compacted for r in runs for i in r.invocations)


def from_json(data: dict[str, Any], consume: bool = False) -> RunResults:
    """The results model from a results file's data; InputError names the JSON path."""
    try:
        return from_data(data, consume)
    except Invalid as exc:
        raise InputError(exc.message, json_path=exc.path()) from None


def read_results(path: Path, keep: Callable[[CaseRecord], CaseRecord] | None = None) -> RunResults:
    """Read a results file ``--results`` wrote (input of report, compare, merge). InputError
    names the file and what is wrong; nothing here trusts the file's shape. ``keep`` sees each
    case as it is read by the fast reader (to spill its runs: ``ci_eval.results.spill``).

    What the fast reader cannot vouch for (a parse or shape error, NaN, huge numbers, escaped
    lone surrogates, a byte-order mark, an earlier schema) is read again the careful way."""
    from ci_eval.io.jsonfast import paused_gc
    from ci_eval.io.readfile import max_results_bytes, read_regular_file
    from ci_eval.results.stream import needs_care, read_cases

    raw = read_regular_file(path, str(path), max_results_bytes())
    text = None if needs_care(raw) else _utf8(raw)
    del raw  # the file is held once: as text
    if text is not None:
        with paused_gc():  # millions of objects, all kept: collecting would only cost time
            results = read_cases(text, keep)
        if results is not None:
            return results
    del text
    return read_carefully(path)


def _utf8(raw: bytes) -> str | None:
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return None


def read_carefully(path: Path) -> RunResults:
    """The whole file parsed with positions (NaN, huge numbers and lone surrogates named or
    scrubbed as in every JSON ci-eval reads), then checked and converted case by case: the
    first value the model does not allow is refused with its file, line and JSON path."""
    from ci_eval.io.jsonpos import read_json_file
    from ci_eval.io.readfile import max_results_bytes

    doc = read_json_file(path, str(path), positions_wanted=False, limit=max_results_bytes())
    data = doc.data
    if not isinstance(data, dict) or "schema_version" not in data or "sets" not in data:
        raise InputError(
            "not a ci-eval results file (no schema_version and sets); write one "
            "with `ci-eval run --results FILE`",
            path=str(path),
        )
    try:
        return from_data(data, consume=True)
    except Invalid as exc:
        raise doc.error(exc.message, exc.loc) from None
