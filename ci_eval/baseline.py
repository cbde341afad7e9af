"""The stored baseline: a rolling window of each case's recent runs on main, per metric.

Format 2 (format 1, one run's summary, is still read)::

    {
      "format": 2,
      "provenance": {...},             # volatile facts (commit, date): one block, at the top
      "sets": {
        "SET_ID": {
          "cases": {
            "CASE_ID": {"failing_since": null,
                        "metrics": {"NAME": {"scores": [1, 1, 0.6, …], "threshold": 1.0}}},
            …                          # one case per line (wrapped here), sorted
          },
          "file": "evals/x.evalset.json"
        }
      },
      "window": 20
    }

``scores`` holds the last ``window`` per-run scores, oldest first (``null`` where a run did not
score that metric); a metric's lists in one case end at the same, latest run. Pass or fail is
judged against today's threshold when compared, so a threshold change re-reads the history.

``update`` appends a run to the history and never shrinks it: a case that was not measured (agent
error, skipped, not started, another shard) keeps what it had. Written with sorted keys, atomically
(temp file + rename).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ci_eval import __version__, git
from ci_eval.errors import InputError
from ci_eval.git import GitError as GitError  # re-exported: read_at_ref raises it
from ci_eval.io.files import write_text_atomic
from ci_eval.io.readfile import max_results_bytes, read_regular_file
from ci_eval.model.status import Status
from ci_eval.results import CaseRecord, RunResults

DEFAULT_PATH = ".ci-eval/baseline.json"
FORMAT = 2
DEFAULT_WINDOW = 20
MEASURED = (Status.PASSED, Status.FAILED, Status.NOT_EVALUATED)


def metrics_digest(results: RunResults) -> str:
    """A fingerprint of the metric configuration, to warn when it changed."""
    config = sorted(
        (s.eval_set_id, m.name, m.threshold, json.dumps(m.criterion, sort_keys=True))
        for s in results.sets
        for m in s.applied_metrics
    )
    return hashlib.sha256(json.dumps(config).encode()).hexdigest()[:16]


# --- the history ---------------------------------------------------------------------------


@dataclass
class UpdateReport:
    """What ``update`` did, for the one line it prints."""

    recorded: int = 0  # cases whose history grew
    kept: list[str] = field(default_factory=list)  # measured before, not this time: history kept
    new: int = 0
    dropped: list[str] = field(default_factory=list)  # no longer in an eval set that fully ran
    duplicate: bool = False  # these results were recorded already


def _case_runs(case: CaseRecord) -> dict[str, list[float | None]]:
    """Per gating metric, this case's per-run scores (aligned: one entry per completed run)."""
    return {
        m.name: [None if v is None else float(v) for v in m.runs]
        for m in case.metrics
        if not m.informational and m.status != Status.ERROR
    }


def _failing(metrics: dict[str, Any], index_from_end: int) -> bool | None:
    """Did the case's run ``index_from_end`` (1 = latest) fail? None when nothing scored it."""
    verdicts = []
    for m in metrics.values():
        scores = m.get("scores") or []
        threshold = m.get("threshold")
        if threshold is None or len(scores) < index_from_end:
            continue
        value = scores[-index_from_end]
        if value is not None:
            verdicts.append(value < threshold)
    return any(verdicts) if verdicts else None


def update(
    old: dict[str, Any] | None,
    results: RunResults,
    commit: str | None = None,
    window: int = DEFAULT_WINDOW,
) -> tuple[dict[str, Any], UpdateReport]:
    """The baseline with this run appended to each measured case's history (last ``window``
    runs kept). Unmeasured cases keep their history; cases gone from an eval set that ran in
    full (no --case, no --shard, not interrupted) are dropped."""
    if window < 1:
        raise InputError("--window must be at least 1")
    report = UpdateReport()
    data = copy.deepcopy(old) if old else {"format": FORMAT, "sets": {}}
    previous = (data.get("provenance") or {}).get("recorded") or []
    run_id = f"{results.started}|{results.agent}"
    commit = commit or os.environ.get("GITHUB_SHA") or git.quiet("rev-parse", "HEAD")
    if results.started and run_id in previous:
        report.duplicate = True
        return data, report
    complete = (
        not results.interrupted
        and not results.settings.get("shard")
        and not results.settings.get("cases")
    )
    sets = data.setdefault("sets", {})
    for s in results.sets:
        stored = sets.setdefault(s.eval_set_id, {"cases": {}, "file": s.file})
        stored["file"] = s.file
        cases = stored.setdefault("cases", {})
        present = {c.eval_id for c in s.cases}
        for case in s.cases:
            key = f"{s.eval_set_id}:{case.eval_id}"
            runs = _case_runs(case)
            if case.status not in MEASURED or not any(
                v is not None for scores in runs.values() for v in scores
            ):
                if case.eval_id in cases:
                    report.kept.append(key)
                continue
            entry = cases.get(case.eval_id)
            if entry is None:
                report.new += 1
                entry = cases[case.eval_id] = {"failing_since": None, "metrics": {}}
            was_failing = _failing(entry["metrics"], 1)
            thresholds = {m.name: m.threshold for m in case.metrics}
            merged = {}
            for name, scores in runs.items():
                before = (entry["metrics"].get(name) or {}).get("scores") or []
                merged[name] = {
                    "scores": [*before, *scores][-window:],
                    "threshold": thresholds.get(name),
                }
            entry["metrics"] = merged  # a metric no longer applied leaves with its config
            now_failing = _failing(merged, 1)
            if now_failing and not was_failing:
                entry["failing_since"] = (commit or "unknown")[:12]
            elif not now_failing:
                entry["failing_since"] = None
            report.recorded += 1
        if complete:
            for case_id in sorted(set(cases) - present):
                del cases[case_id]
                report.dropped.append(f"{s.eval_set_id}:{case_id}")
    data["format"] = FORMAT
    data["window"] = window
    data["provenance"] = {
        "commit": commit,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "ci_eval_version": __version__,
        "agent": results.agent,
        "metrics_digest": metrics_digest(results),
        # which results are in the history already (a second `baseline update` of the same file
        # must not count its runs twice)
        "recorded": [*previous, run_id][-window:],
    }
    return data, report


def from_results(
    results: RunResults, commit: str | None = None, window: int = DEFAULT_WINDOW
) -> dict[str, Any]:
    """A fresh baseline from one run."""
    return update(None, results, commit, window)[0]


# --- reading and writing -------------------------------------------------------------------


def dumps(baseline: dict[str, Any]) -> str:
    """Sorted keys, the volatile provenance in its own block, one case per line: two updates
    that touch different cases touch different lines."""

    def one(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)

    lines = ["{"]
    top = sorted(baseline)
    for i, key in enumerate(top):
        comma = "," if i < len(top) - 1 else ""
        value = baseline[key]
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
        "format": FORMAT,
        "window": DEFAULT_WINDOW,
        "provenance": data.get("provenance") or {},
        "sets": sets,
    }


def parse(text: str, where: str) -> dict[str, Any]:
    from ci_eval.io.jsonpos import parse_json

    # lone surrogates out, as in every JSON we read; NaN/Infinity refused with their place
    data = parse_json(text, where).data
    if (
        not isinstance(data, dict)
        or data.get("format") not in (1, FORMAT)
        or not isinstance(data.get("sets"), dict)
    ):
        raise InputError(
            "not a ci-eval baseline (write one with `ci-eval baseline update`)", path=where
        )
    _check_shape(data, where)
    return _from_format_1(data) if data["format"] == 1 else data


def _check_shape(data: dict[str, Any], where: str) -> None:
    """A hand-edited baseline fails here with the place named, not later with a traceback."""
    for set_id, stored in data["sets"].items():
        if not isinstance(stored, dict) or not isinstance(stored.get("cases", {}), dict):
            raise InputError(
                "expected an object with cases", path=where, json_path=f"$.sets.{set_id}"
            )
        for case_id, case in stored.get("cases", {}).items():
            here = f"$.sets.{set_id}.cases.{case_id}"
            if not isinstance(case, dict) or not isinstance(case.get("metrics", {}), dict):
                raise InputError("expected an object with metrics", path=where, json_path=here)
            for name, m in case.get("metrics", {}).items():
                scores = m.get("scores", m.get("runs", [])) if isinstance(m, dict) else None
                if not isinstance(scores, list) or not all(
                    v is None or (isinstance(v, int | float) and not isinstance(v, bool))
                    for v in scores
                ):
                    raise InputError(
                        "expected a list of scores (numbers or null)",
                        path=where,
                        json_path=f"{here}.metrics.{name}",
                    )


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


# --- where the baseline comes from in a pull request ---------------------------------------


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
