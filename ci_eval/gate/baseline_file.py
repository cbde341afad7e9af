"""The baseline file: reading (formats 1, 2 and 3, the older ones upgraded in memory and
written as 3 on the next update), checking and writing, one case per line.

Format 3 (see :mod:`ci_eval.gate.baseline` for what the history means)::

    {
      "format": 3,
      "provenance": {...},             # volatile facts (commit, date): one block, at the top
      "pushes": [                      # the jobs recorded, oldest first, one per line
        {"commit": "3f2a…", "date": "…", "id": "STARTED|AGENT|SECONDS", "runs": 3, "seq": 7},
        …
      ],
      "sets": {
        "SET_ID": {
          "cases": {
            "CASE_ID": {"error": [null, "timed out", …], "failing_since": null,
                        "fingerprint": "9b1c…", "latency_s": [1.2, null, …],
                        "metrics": {"NAME": {"scores": [1, null, …], "threshold": 1.0}},
                        "passing_since": "3f2a…", "push": [7, 7, …]},
            …                          # one case per line (wrapped here), sorted
          },
          "criteria": {"NAME": {"match_type": "EXACT"}, …},  # each gating metric's options
          "file": "evals/x.evalset.json",
          "rubrics": {"CASE_ID": "4d0e…"}  # the cases with rubrics of their own, hashed
        }
      },
      "window": 20
    }

A case's lists are aligned, one entry per run, oldest first: which push (``seq``) the run came
from, its error (``null`` when the agent finished it; an errored run's scores are ``null``), its
wall time, and each gating metric's score — and, for a metric with its own pass rule (adk-rs's
any-invocation rule, a custom metric's status), ``fails``: per run, did it fail (``null``: by its
score against the threshold). A case may also carry ``usage``: each run's total agent tokens
(``null`` when the agent reported none), aligned the same way, once some run reported them —
what :mod:`ci_eval.gate.usage` judges token regressions against, as it judges latency against
``latency_s``. History upgraded from format 2 belongs to the push ``seq`` 0,
marked ``"upgraded": true`` (its runs' jobs are unknown), with ``passing_since: "unknown"``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ci_eval.errors import InputError
from ci_eval.io import git
from ci_eval.io.files import write_text_atomic
from ci_eval.io.git import GitError
from ci_eval.io.readfile import max_results_bytes, read_regular_file
from ci_eval.model.status import Status

FORMAT = 3
DEFAULT_WINDOW = 20
UNKNOWN = "unknown"  # passing_since of history whose start is not recorded
ALIGNED = ("push", "error", "latency_s", "usage")  # per-run lists beside each metric's scores


def dumps(baseline: dict[str, Any]) -> str:
    """Sorted keys, the volatile provenance in its own block, one push and one case per line:
    two updates that touch different cases touch different lines."""

    def one(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)

    lines = ["{"]
    top = sorted(baseline)
    for i, key in enumerate(top):
        comma = "," if i < len(top) - 1 else ""
        value = baseline[key]
        if key == "pushes" and value:
            lines.append(f"  {one(key)}: [")
            lines += [
                f"    {one(p)}" + ("," if n < len(value) - 1 else "") for n, p in enumerate(value)
            ]
            lines.append("  ]" + comma)
            continue
        if key != "sets":
            text = json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2)
            lines.append(f"  {one(key)}: " + text.replace("\n", "\n  ") + comma)
            continue
        lines.append(f"  {one(key)}: {{")
        set_ids = sorted(value)
        for j, set_id in enumerate(set_ids):
            stored = value[set_id]
            lines.append(f"    {one(set_id)}: {{")
            lines.append('      "cases": {')
            case_ids = sorted(stored.get("cases") or {})
            for k, case_id in enumerate(case_ids):
                tail = "," if k < len(case_ids) - 1 else ""
                lines.append(f"        {one(case_id)}: {one(stored['cases'][case_id])}{tail}")
            rest = {k: v for k, v in stored.items() if k != "cases"}
            lines.append("      }" + ("," if rest else ""))
            for n, name in enumerate(sorted(rest)):
                tail = "," if n < len(rest) - 1 else ""
                lines.append(f"      {one(name)}: {one(rest[name])}{tail}")
            lines.append("    }" + ("," if j < len(set_ids) - 1 else ""))
        lines.append("  }" + comma)
    lines.append("}")
    return "\n".join(lines) + "\n"


def write(path: Path, baseline: dict[str, Any]) -> None:
    write_text_atomic(path, dumps(baseline))


def _from_format_1(data: dict[str, Any]) -> dict[str, Any]:
    """Format 1 kept one run's per-run scores: they become the start of the history."""
    since = ((data.get("provenance") or {}).get("commit") or "unknown")[:12]
    sets = {}
    for set_id, stored in (data.get("sets") or {}).items():
        cases = {}
        for case_id, case in (stored.get("cases") or {}).items():
            metrics = {}
            for name, m in (case.get("metrics") or {}).items():
                runs = m.get("runs") or ([m["mean"]] if m.get("mean") is not None else [])
                metrics[name] = {"scores": list(runs), "threshold": m.get("threshold")}
            cases[case_id] = {
                "failing_since": since if case.get("status") == Status.FAILED else None,
                "metrics": metrics,
            }
        sets[set_id] = {"cases": cases, "file": stored.get("file")}
    return {
        "format": 2,
        "window": DEFAULT_WINDOW,
        "provenance": data.get("provenance") or {},
        "sets": sets,
    }


def _from_format_2(data: dict[str, Any]) -> dict[str, Any]:
    """Format 2 kept each case's scores without saying which job each run came from: the
    history so far becomes one push, ``seq`` 0, marked upgraded; every list aligned to the
    case's longest metric (a metric added later is null where it was not scored)."""
    provenance = data.get("provenance") or {}
    for stored in data["sets"].values():
        for case in (stored.get("cases") or {}).values():
            metrics = case.get("metrics") or {}
            length = max((len(m.get("scores") or []) for m in metrics.values()), default=0)
            for m in metrics.values():
                scores = list(m.get("scores") or [])
                m["scores"] = [None] * (length - len(scores)) + scores
            case["push"] = [0] * length
            case["error"] = [None] * length
            case["latency_s"] = [None] * length
            case["fingerprint"] = None
            case["passing_since"] = None if case.get("failing_since") or not length else UNKNOWN
    data["pushes"] = [
        {
            "seq": 0,
            "id": "format 2 history",
            "commit": provenance.get("commit"),
            "date": provenance.get("date"),
            "upgraded": True,
        }
    ]
    data["format"] = FORMAT
    return data


def parse(text: str, where: str) -> dict[str, Any]:
    from ci_eval.io.jsonpos import parse_json

    # lone surrogates out, as in every JSON we read; NaN/Infinity refused with their place
    data = parse_json(text, where).data
    version = data.get("format") if isinstance(data, dict) else None
    if type(version) is int and version > FORMAT:
        by = (data.get("provenance") or {}).get("ci_eval_version") or "a newer ci-eval"
        raise InputError(
            f"written by ci-eval {by} (baseline format {version}); this ci-eval reads formats "
            f"up to {FORMAT}: upgrade ci-eval",
            path=where,
        )
    if version not in (1, 2, FORMAT) or not isinstance(data.get("sets"), dict):
        raise InputError(
            "not a ci-eval baseline (write one with `ci-eval baseline update`)", path=where
        )
    _check_shape(data, where)
    if version == 1:
        data = _from_format_1(data)
    return _from_format_2(data) if data["format"] == 2 else data


def _numbers(values: Any) -> bool:
    return isinstance(values, list) and all(
        v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in values
    )


def _check_shape(data: dict[str, Any], where: str) -> None:
    """A hand-edited baseline fails here with the place named, not later with a traceback."""

    def refuse(message: str, path: str) -> None:
        raise InputError(message, path=where, json_path=path)

    if not isinstance(data.get("pushes", []), list):
        refuse("expected a list of pushes", "$.pushes")
    for set_id, stored in data["sets"].items():
        if not isinstance(stored, dict) or not isinstance(stored.get("cases", {}), dict):
            refuse("expected an object with cases", f"$.sets.{set_id}")
        criteria = stored.get("criteria", {})
        if not isinstance(criteria, dict) or not all(
            isinstance(c, dict) for c in criteria.values()
        ):
            refuse("expected an object of each metric's options", f"$.sets.{set_id}.criteria")
        rubrics = stored.get("rubrics", {})
        if not isinstance(rubrics, dict) or any(not isinstance(d, str) for d in rubrics.values()):
            refuse("expected an object of each case's rubrics digest", f"$.sets.{set_id}.rubrics")
        for case_id, case in stored.get("cases", {}).items():
            here = f"$.sets.{set_id}.cases.{case_id}"
            if not isinstance(case, dict) or not isinstance(case.get("metrics", {}), dict):
                refuse("expected an object with metrics", here)
            lengths = set()
            for name, m in case.get("metrics", {}).items():
                scores = m.get("scores", m.get("runs", [])) if isinstance(m, dict) else None
                if not _numbers(scores):
                    refuse("expected a list of scores (numbers or null)", f"{here}.metrics.{name}")
                lengths.add(len(scores))
                fails = m.get("fails", scores)
                if not isinstance(fails, list) or len(fails) != len(scores):
                    refuse(
                        "expected one verdict per score (true, false or null)",
                        f"{here}.metrics.{name}.fails",
                    )
            if data.get("format") != FORMAT:
                continue
            for name in ALIGNED:
                values = case.get(name, [None] * max(lengths, default=0))
                ok = _numbers(values) if name != "error" else isinstance(values, list)
                if not ok:
                    refuse(f"expected a list, one {name} per run", f"{here}.{name}")
                lengths.add(len(values))
            if len(lengths) > 1:
                refuse("expected the per-run lists to be of one length", here)


def read(path: Path) -> dict[str, Any] | None:
    """The baseline, or None when there is none yet (the run then gates on thresholds)."""
    if not path.is_file():
        return None
    try:
        raw = read_regular_file(path, str(path), max_results_bytes())
        return parse(raw.decode("utf-8"), str(path))
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=str(path)) from None


def age_days(baseline: dict[str, Any]) -> float | None:
    try:
        made = datetime.fromisoformat(baseline["provenance"]["date"])
    except (KeyError, TypeError, ValueError):
        return None
    return (datetime.now(UTC) - made).total_seconds() / 86400


def read_at_ref(ref: str, path: str, option: str = "--baseline-ref") -> dict[str, Any] | None:
    """The baseline file as it is at a git ref (``git show REF:path``); None if absent there.
    A git failure (say, the repository is owned by another user and not a safe.directory) is
    an InputError with what git said, not "no baseline". ``option`` names the setting."""
    try:
        commit = git.checked("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except GitError as exc:
        raise InputError(f"{option} {ref}: git failed: {exc}") from None
    if commit is None:
        raise InputError(
            f"{option} {ref}: no such commit in this repository (fetch it, "
            "e.g. actions/checkout with fetch-depth: 0)"
        )
    prefix = git.quiet("rev-parse", "--show-prefix") or ""
    try:
        text = git.checked("show", f"{ref}:{prefix}{path}")
    except GitError as exc:
        if "does not exist" in str(exc) or "exists on disk, but not in" in str(exc):
            return None
        raise InputError(f"reading {path} at {ref}: git failed: {exc}") from None
    return None if text is None else parse(text, f"{ref}:{path}")
