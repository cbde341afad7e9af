"""The stored baseline: per eval set, case and metric the mean, n, standard deviation, pass
rate, per-run scores and status, with provenance. Written with sorted keys and a fixed layout so
its diff reads well in a pull request, and atomically (temp file + rename): a reader sees the
old file or the new one, never half of either."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ci_eval import __version__
from ci_eval.errors import InputError
from ci_eval.jsonpos import read_regular_file
from ci_eval.results import RunResults, write_json_atomic

DEFAULT_PATH = ".ci-eval/baseline.json"
FORMAT = 1


def metrics_digest(results: RunResults) -> str:
    """A fingerprint of the metric configuration, to warn when it changed."""
    config = sorted(
        (s.eval_set_id, m.name, m.threshold, json.dumps(m.criterion, sort_keys=True))
        for s in results.sets
        for m in s.applied_metrics
    )
    return hashlib.sha256(json.dumps(config).encode()).hexdigest()[:16]


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], capture_output=True, text=True, check=False, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def from_results(results: RunResults, commit: str | None = None) -> dict[str, Any]:
    sets: dict[str, Any] = {}
    for s in results.sets:
        cases = {}
        for c in s.cases:
            if c.status in ("ERROR", "SKIPPED"):
                continue  # nothing was measured; a baseline records measurements
            cases[c.eval_id] = {
                "status": c.status,
                "metrics": {
                    m.name: {
                        "mean": m.score,
                        "n": len([r for r in m.runs if r is not None]),
                        "std": m.std,
                        "pass_rate": m.pass_rate,
                        "status": m.status,
                        "runs": m.runs,
                        "threshold": m.threshold,
                    }
                    for m in c.metrics
                    if not m.informational
                },
            }
        sets[s.eval_set_id] = {"file": s.file, "cases": cases}
    return {
        "format": FORMAT,
        "provenance": {
            "commit": commit or os.environ.get("GITHUB_SHA") or _git("rev-parse", "HEAD"),
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "ci_eval_version": __version__,
            "agent": results.agent,
            "metrics_digest": metrics_digest(results),
        },
        "sets": sets,
    }


def write(path: Path, baseline: dict[str, Any]) -> None:
    write_json_atomic(path, baseline, sort_keys=True)


def parse(text: str, where: str) -> dict[str, Any]:
    from ci_eval.jsonpos import parse_json

    doc = parse_json(text, where)  # NaN/Infinity refused with their place
    data = doc.data
    if (
        not isinstance(data, dict)
        or data.get("format") != FORMAT
        or not isinstance(data.get("sets"), dict)
    ):
        raise InputError(
            "not a ci-eval baseline (write one with `ci-eval baseline update`)", path=where
        )
    check(doc)
    return data


_NUMBER = (int, float)
_METRIC_FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    "mean": (_NUMBER, "a number or null"),
    "std": (_NUMBER, "a number or null"),
    "threshold": (_NUMBER, "a number or null"),
    "pass_rate": (_NUMBER, "a number or null"),
    "n": ((int,), "a whole number"),
    "status": ((str,), "a status string"),
}


def check(doc: Any) -> None:
    """Every value the gate reads has the type it needs: a hand-edited baseline is refused
    with its file, line and JSON path, never an internal error halfway through a comparison."""

    def bad(loc: list[Any], what: str) -> None:
        raise doc.error(
            f"must be {what} (was the baseline edited by hand? rewrite it with "
            "`ci-eval baseline update`)",
            loc,
        )

    def typed(value: Any, types: tuple[type, ...]) -> bool:
        return value is None or (isinstance(value, types) and not isinstance(value, bool))

    data = doc.data
    provenance = data.get("provenance")
    if provenance is not None and not isinstance(provenance, dict):
        bad(["provenance"], "an object")
    for key in ("commit", "date", "agent", "ci_eval_version", "metrics_digest"):
        if isinstance(provenance, dict) and not typed(provenance.get(key), (str,)):
            bad(["provenance", key], "a string or null")
    for set_id, entry in data["sets"].items():
        if not isinstance(entry, dict):
            bad(["sets", set_id], "an object")
        cases = entry.get("cases")
        if cases is None:
            continue
        if not isinstance(cases, dict):
            bad(["sets", set_id, "cases"], "an object of cases")
        for case_id, case in cases.items():
            here = ["sets", set_id, "cases", case_id]
            if not isinstance(case, dict):
                bad(here, "an object")
            if not typed(case.get("status"), (str,)):
                bad([*here, "status"], "a status string")
            metrics = case.get("metrics")
            if metrics is None:
                continue
            if not isinstance(metrics, dict):
                bad([*here, "metrics"], "an object of metrics")
            for name, metric in metrics.items():
                at = [*here, "metrics", name]
                if not isinstance(metric, dict):
                    bad(at, "an object")
                for key, (types, what) in _METRIC_FIELDS.items():
                    if not typed(metric.get(key), types):
                        bad([*at, key], what)
                runs = metric.get("runs")
                if runs is not None and (
                    not isinstance(runs, list) or not all(typed(r, _NUMBER) for r in runs)
                ):
                    bad([*at, "runs"], "a list of numbers (null for a run without a score)")


def read(path: Path) -> dict[str, Any] | None:
    """The baseline, or None when there is none yet (the run then gates on thresholds)."""
    if not path.is_file():
        return None
    try:
        return parse(read_regular_file(path, str(path)).decode("utf-8"), str(path))
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=str(path)) from None


def read_at_ref(ref: str, path: str) -> dict[str, Any] | None:
    """The baseline file as it is at a git ref (``git show REF:path``); None if absent there."""
    if _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}") is None:
        raise InputError(
            f"--baseline-ref {ref}: no such commit in this repository (fetch it, "
            "e.g. actions/checkout with fetch-depth: 0)"
        )
    prefix = _git("rev-parse", "--show-prefix") or ""
    text = _git("show", f"{ref}:{prefix}{path}")
    return None if text is None else parse(text, f"{ref}:{path}")


def default_ref(env: dict[str, str] | os._Environ[str]) -> str | None:
    """In a pull request: the merge base with the base branch (not the previous PR commit)."""
    base = env.get("GITHUB_BASE_REF")
    if not base:
        return None
    for candidate in (f"origin/{base}", base):
        merge_base = _git("merge-base", "HEAD", candidate)
        if merge_base:
            return merge_base
    return None


def age_days(baseline: dict[str, Any]) -> float | None:
    try:
        made = datetime.fromisoformat(baseline["provenance"]["date"])
    except (KeyError, TypeError, ValueError):
        return None
    return (datetime.now(UTC) - made).total_seconds() / 86400
