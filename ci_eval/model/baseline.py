"""The baseline as typed data, and its file's schema: each case's recent runs on main, grouped
by the job (push) that ran them (:mod:`ci_eval.gate.baseline` says what the history means,
:mod:`ci_eval.gate.baseline_file` reads and writes the file). pydantic builds the reader's
checks and the writer from these dataclasses, as for the results file
(:mod:`ci_eval.model.results_file`); formats 1 and 2 are upgraded to 3 by the reader's
validator (users' data branches carry them), a newer one is refused with the version that
wrote it. Pure: data in, the model out, and back.

Format 3::

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
(``null`` when the agent reported none), aligned the same way, once some run reported them.
A push may carry ``cost_usd``: what the agent's first runs of that job cost, where the run was
priced (``[prices]``). The file keeps each case's last ``window`` runs — the gate reads those
and no more — and also every run of main's last :data:`HISTORY_PUSHES` pushes, for the trend
pages (``ci-eval history``).
History upgraded from format 2 belongs to the push ``seq`` 0, marked ``"upgraded": true`` (its
runs' jobs are unknown), with ``passing_since: "unknown"``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import Field, Strict, TypeAdapter, ValidationError

from ci_eval.model.values import RECORD, Count, Flag, Invalid, Items, Number, Text

FORMAT = 3
DEFAULT_WINDOW = 20
# pushes whose runs the file keeps beyond the gate's window: the trend pages' span
HISTORY_PUSHES = 50
UNKNOWN = "unknown"  # passing_since of history whose start is not recorded
HINT = "is this a baseline ci-eval wrote? (write one with `ci-eval baseline update`)"


def _omitted(default: Any) -> Any:
    """A field the file holds only when it says something (``usage`` once some run reported
    tokens, ``fails`` while some run has a verdict of its own, ``upgraded`` when true)."""
    return Field(exclude_if=lambda value: value == default)


Tokens = Annotated[int, Strict(), Field(ge=0)] | Number  # an agent's tokens, as counted


@dataclass(slots=True)
class StoredMetric:
    """One gating metric's runs of a case: their scores, the threshold they were recorded
    under and, for a metric with its own pass rule, each run's verdict."""

    __pydantic_config__ = RECORD

    scores: Items[Number | None] = field(default_factory=list)
    threshold: Number | None = None
    fails: Annotated[list[Flag | None] | None, _omitted(None)] = None


@dataclass(slots=True)
class StoredCase:
    """One case's runs on main, oldest first, its lists aligned one entry per run."""

    __pydantic_config__ = RECORD

    metrics: dict[str, StoredMetric] = field(default_factory=dict)
    push: Items[Count] = field(default_factory=list)
    error: Items[Text | None] = field(default_factory=list)
    latency_s: Items[Number | None] = field(default_factory=list)
    usage: Annotated[list[Tokens | None] | None, _omitted(None)] = None
    failing_since: Text | None = None
    passing_since: Text | None = None
    fingerprint: Text | None = None

    def aligned(self) -> dict[str, list[Any]]:
        """The per-run lists beside each metric's scores, by their JSON names."""
        lists = {"push": self.push, "error": self.error, "latency_s": self.latency_s}
        return lists | ({"usage": self.usage} if self.usage is not None else {})


@dataclass(slots=True)
class StoredSet:
    """One eval set's cases on main, and what they were judged by when last scored."""

    __pydantic_config__ = RECORD

    cases: dict[str, StoredCase] = field(default_factory=dict)
    file: Text | None = None
    # each gating metric's options; None: recorded before ci-eval kept them
    criteria: Annotated[dict[str, dict[str, Any]] | None, _omitted(None)] = None
    rubrics: Annotated[dict[str, Text], _omitted({})] = field(default_factory=dict)


@dataclass(slots=True)
class Push:
    """One job on main whose runs the history holds."""

    __pydantic_config__ = RECORD

    seq: Count
    id: Text | None = None
    commit: Text | None = None
    date: Text | None = None
    runs: Annotated[Count | None, _omitted(None)] = None
    upgraded: Annotated[Flag, _omitted(False)] = False
    # the agent's first runs' cost in dollars, where the run was priced
    cost_usd: Annotated[Number | None, _omitted(None)] = None


@dataclass(slots=True)
class Provenance:
    """The last update's facts: which commit and when, by which ci-eval, of which agent."""

    __pydantic_config__ = RECORD

    commit: Text | None = None
    date: Text | None = None
    ci_eval_version: Text | None = None
    agent: Text | None = None
    metrics_digest: Text | None = None
    recorded: Items[Text] = field(default_factory=list)  # results ids before format 3


@dataclass(slots=True)
class Baseline:
    """The baseline file's content (format 3)."""

    __pydantic_config__ = RECORD

    format: Annotated[int, Strict()] = FORMAT
    window: Count = DEFAULT_WINDOW
    provenance: Annotated[Provenance | None, _omitted(None)] = None
    pushes: Items[Push] = field(default_factory=list)
    sets: dict[str, StoredSet] = field(default_factory=dict)


# what the file holds that the model does not allow: where (JSON path parts) and why
BaselineInvalid = Invalid


# --- format upgrades ---------------------------------------------------------------------------


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _from_format_1(data: dict[str, Any]) -> dict[str, Any]:
    """Format 1 kept one run's per-run scores: they become the start of the history."""
    provenance = _object(data.get("provenance"))
    since = (provenance.get("commit") or UNKNOWN)[:12]
    sets = {}
    for set_id, stored in _object(data.get("sets")).items():
        cases = {}
        for case_id, case in _object(_object(stored).get("cases")).items():
            metrics = {}
            for name, m in _object(_object(case).get("metrics")).items():
                m = _object(m)
                runs = m.get("runs") or ([m["mean"]] if m.get("mean") is not None else [])
                metrics[name] = {"scores": runs, "threshold": m.get("threshold")}
            cases[case_id] = {
                "failing_since": since if _object(case).get("status") == "FAILED" else None,
                "metrics": metrics,
            }
        sets[set_id] = {"cases": cases, "file": _object(stored).get("file")}
    return {"format": 2, "window": DEFAULT_WINDOW, "provenance": provenance, "sets": sets}


def _from_format_2(data: dict[str, Any]) -> dict[str, Any]:
    """Format 2 kept each case's scores without saying which job each run came from: the
    history so far becomes one push, ``seq`` 0, marked upgraded; every list aligned to the
    case's longest metric (a metric added later is null where it was not scored)."""
    provenance = _object(data.get("provenance"))
    for stored in _object(data.get("sets")).values():
        for case in _object(_object(stored).get("cases")).values():
            if not isinstance(case, dict):
                continue  # the model's checks name it
            metrics = _object(case.get("metrics"))
            scored = [m.get("scores") for m in metrics.values() if isinstance(m, dict)]
            length = max((len(s) for s in scored if isinstance(s, list)), default=0)
            for m in metrics.values():
                if isinstance(m, dict) and isinstance(m.get("scores") or [], list):
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


def _upgraded(data: Any) -> Any:
    """The file's data as format 3: refused when not a baseline or a newer one's."""
    version = data.get("format") if isinstance(data, dict) else None
    if type(version) is int and version > FORMAT:
        by = _object(data.get("provenance")).get("ci_eval_version") or "a newer ci-eval"
        raise BaselineInvalid(
            ["format"],
            f"written by ci-eval {by} (baseline format {version}); this ci-eval reads formats "
            f"up to {FORMAT}: upgrade ci-eval",
        )
    if version not in (1, 2, FORMAT) or not isinstance(data.get("sets"), dict):
        raise BaselineInvalid(
            [], "not a ci-eval baseline (write one with `ci-eval baseline update`)"
        )
    if version == 1:
        data = _from_format_1(data)
    return _from_format_2(data) if data["format"] == 2 else data


# --- reading and writing -------------------------------------------------------------------------


@functools.cache
def _adapter() -> TypeAdapter[Baseline]:
    return TypeAdapter(Baseline)


def load(data: Any) -> Baseline:
    """The baseline a file's parsed JSON holds, any format, upgraded; refused with the place
    of the first value the model does not allow (:class:`BaselineInvalid`)."""
    from ci_eval.model.results_file import first_problem

    data = _upgraded(data)
    try:
        baseline = _adapter().validate_python(data)
    except ValidationError as exc:
        raise BaselineInvalid(*first_problem(exc, HINT)) from None
    _check_aligned(baseline)
    return baseline


def _check_aligned(baseline: Baseline) -> None:
    """A case's per-run lists (and each metric's verdicts) are of one length."""
    for set_id, stored in baseline.sets.items():
        for case_id, case in stored.cases.items():
            here = ["sets", set_id, "cases", case_id]
            for name, m in case.metrics.items():
                if m.fails is not None and len(m.fails) != len(m.scores):
                    raise BaselineInvalid(
                        [*here, "metrics", name, "fails"],
                        "expected one verdict per score (true, false or null)",
                    )
            # a list the file does not hold is not recorded (the gate aligns from the latest)
            lengths = {len(m.scores) for m in case.metrics.values()}
            lengths |= {len(values) for values in case.aligned().values() if values}
            if len(lengths) > 1:
                raise BaselineInvalid(here, "expected the per-run lists to be of one length")


def to_data(baseline: Baseline) -> dict[str, Any]:
    """The baseline as the file's JSON data."""
    return _adapter().dump_python(baseline, mode="json", warnings=False)


def dumps(baseline: Baseline) -> str:
    """Sorted keys, the volatile provenance in its own block, one push and one case per line:
    two updates that touch different cases touch different lines."""
    data = to_data(baseline)

    def one(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)

    lines = ["{"]
    top = sorted(data)
    for i, key in enumerate(top):
        comma = "," if i < len(top) - 1 else ""
        value = data[key]
        if key == "pushes" and value:
            lines.append(f"  {one(key)}: [")
            lines += [
                f"    {one(p)}" + ("," if n < len(value) - 1 else "") for n, p in enumerate(value)
            ]
            lines.append("  ]" + comma)
        elif key != "sets":
            text = json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2)
            lines.append(f"  {one(key)}: " + text.replace("\n", "\n  ") + comma)
        else:
            lines += _sets_lines(value, one)
            lines[-1] += comma
    lines.append("}")
    return "\n".join(lines) + "\n"


def _sets_lines(sets: dict[str, Any], one: Any) -> list[str]:
    lines = ['  "sets": {']
    set_ids = sorted(sets)
    for j, set_id in enumerate(set_ids):
        stored = sets[set_id]
        lines.append(f"    {one(set_id)}: {{")
        lines.append('      "cases": {')
        case_ids = sorted(stored["cases"])
        for k, case_id in enumerate(case_ids):
            tail = "," if k < len(case_ids) - 1 else ""
            lines.append(f"        {one(case_id)}: {one(stored['cases'][case_id])}{tail}")
        rest = {k: v for k, v in stored.items() if k != "cases"}
        lines.append("      }" + ("," if rest else ""))
        for n, name in enumerate(sorted(rest)):
            tail = "," if n < len(rest) - 1 else ""
            lines.append(f"      {one(name)}: {one(rest[name])}{tail}")
        lines.append("    }" + ("," if j < len(set_ids) - 1 else ""))
    lines.append("  }")
    return lines
