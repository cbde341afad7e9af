"""JUnit XML with junit-xml, shaped for today's consumers (dorny, mikepenz, EnricoMi, GitLab,
Jenkins, Azure): one testsuite per eval set, one testcase per eval case (classname = set id,
name = case id, file, line, time); failure for a metric below threshold, error for an agent or
judge error, skipped for a case not run or not evaluated; scores as testcase properties and
per-run detail in system-out. Agent text is stripped of ANSI codes; junit-xml drops characters
XML 1.0 cannot hold."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from junit_xml import TestCase, TestSuite, to_xml_report_string

from ci_eval.report.view import (
    error_reason,
    failing_metrics,
    fmt,
    invocation_diffs,
    not_evaluated_reason,
    shown_run,
    strip_ansi,
)
from ci_eval.results import CaseRecord, RunResults

MIN_TIME = 0.001  # junit-xml omits time="0"; consumers want a time on every case


def _details(case: CaseRecord) -> str:
    run = shown_run(case)
    lines = [f"{case.eval_id} ({case.file}:{case.line}): {case.status}"]
    lines += [
        f"  {m.name}: {fmt(m.score)} (threshold {fmt(m.threshold)}) {m.status}"
        + (f" — {m.reason}" if m.reason else "")
        for m in case.metrics
    ]
    if run is not None:
        lines.append(f"run {run.run}" + (f": {run.error}" if run.error else ""))
        for d in invocation_diffs(run):
            lines.append(f"invocation {d.number}: {d.user}")
            lines.append(f"  expected tool calls: {', '.join(d.expected_calls) or '(none)'}")
            lines.append(
                "  actual tool calls:   "
                + ("(not run)" if d.actual_calls is None else ", ".join(d.actual_calls) or "(none)")
            )
            lines.append(f"  expected response: {d.expected_response or '(none)'}")
            lines.append(
                "  actual response:   "
                + ("(not run)" if d.actual_response is None else d.actual_response or "(none)")
            )
            if d.error:
                lines.append(f"  error: {d.error}")
    return strip_ansi("\n".join(lines))


def _system_out(case: CaseRecord) -> str | None:
    if len(case.runs) < 2:
        return None
    rows = []
    for run in case.runs:
        scored = ", ".join(f"{m.name}={fmt(m.score)} {m.status}" for m in run.metrics)
        rows.append(f"run {run.run}: " + (f"ERROR {run.error}" if run.error else scored))
    if case.flaky:
        rows.append("flaky: passed in some runs and failed in others")
    return strip_ansi("\n".join(rows))


def _case(
    set_id: str,
    case: CaseRecord,
    regressions: list[Any],
    judged: Any = None,
    failures_block: bool = True,
) -> TestCase:
    # per-run durations as the results file keeps them, so `report` gives the same XML
    elapsed = round(sum(round(r.duration_s, 4) for r in case.runs), 3)
    test = TestCase(
        name=case.eval_id,
        classname=set_id,
        elapsed_sec=max(elapsed, MIN_TIME),
        file=case.file,
        line=case.line,
        stdout=_system_out(case),
    )
    status = case.status
    regressed = [c.describe() for c in regressions]
    if regressed and status in ("PASSED", "FAILED", "NOT_EVALUATED"):
        head = judged.describe() if judged is not None else ""
        message = "; ".join([x for x in (f"regression: {head}" if head else "", *regressed) if x])
        test.add_failure_info(
            message=strip_ansi(message), output=_details(case), failure_type="Regression"
        )
        return test
    if status == "FAILED" and judged is not None and not failures_block:
        # the gate judged it against main's history and it does not block: a CI that reads only
        # JUnit must not go red for it, and every reporter shows a skipped case's message
        from ci_eval.compare import Judgement

        if judged.judgement is Judgement.KNOWN_FAILURE:
            since = f" since {judged.failing_since}" if judged.failing_since else ""
            message = f"known failure on main{since}: {judged.history()}"
        elif judged.judgement is Judgement.ACCEPTED:
            message = f"accepted change: {judged.reason}"
        else:
            message = f"failed within the case's usual noise, not a regression: {judged.history()}"
        message += " — " + "; ".join(failing_metrics(case))
        test.add_skipped_info(message=strip_ansi(message), output=_details(case))
        return test
    if status == "FAILED":
        message = "; ".join(failing_metrics(case)) or "failed"
        test.add_failure_info(
            message=strip_ansi(message), output=_details(case), failure_type="ThresholdNotMet"
        )
    elif status == "ERROR":
        test.add_error_info(
            message=strip_ansi(error_reason(case)),
            output=_details(case),
            error_type="AgentError" if case.error else "MetricError",
        )
    elif status == "SKIPPED":
        test.add_skipped_info(
            message=strip_ansi(case.skipped or "skipped"), output=case.skipped or "skipped"
        )
    elif status == "NOT_EVALUATED":
        reason = strip_ansi(not_evaluated_reason(case))
        test.add_skipped_info(message=f"not evaluated: {reason}", output=_details(case))
    return test


def to_junit(results: RunResults) -> str:
    changes: dict[tuple[str, str], list[Any]] = {}
    comparison = results.comparison
    judgements = {}
    if comparison is not None:
        for change in comparison.regressions:
            judged = comparison.judgement_of(change.set_id, change.case_id)
            if judged is not None and str(judged.judgement) != "regression":
                continue  # accepted
            changes.setdefault((change.set_id, change.case_id), []).append(change)
        judgements = {(j.set_id, j.case_id): j for j in comparison.cases}
    failures_block = "failure" in results.fail_on
    suites = []
    for s in results.sets:
        properties = {
            "file": s.file,
            "dialect": s.dialect,
            "metrics": ", ".join(m.describe() for m in s.applied_metrics),
            "metrics source": s.metrics.source,
        }
        suites.append(
            TestSuite(
                s.eval_set_id or s.file,
                [
                    _case(
                        s.eval_set_id,
                        c,
                        changes.get((s.eval_set_id, c.eval_id), []),
                        judgements.get((s.eval_set_id, c.eval_id)),
                        failures_block,
                    )
                    for c in s.cases
                ],
                timestamp=results.started or None,
                file=s.file,
                properties=properties,
            )
        )
    xml = to_xml_report_string(suites, prettyprint=False, encoding="utf-8")
    return _with_scores(xml, results)


def _with_scores(xml: str, results: RunResults) -> str:
    """junit-xml has no testcase properties: add the scores, and testsuites' skipped total."""
    root = ET.fromstring(xml)
    skipped = 0
    for suite_el, s in zip(root.iter("testsuite"), results.sets, strict=True):
        skipped += int(suite_el.get("skipped", "0"))
        for case_el, case in zip(suite_el.iter("testcase"), s.cases, strict=True):
            if not case.metrics:
                continue
            props = ET.Element("properties")
            for m in case.metrics:
                ET.SubElement(
                    props,
                    "property",
                    {
                        "name": m.name,
                        "value": (
                            f"{fmt(m.score)} {m.status}"
                            + (f" threshold {fmt(m.threshold)}" if m.threshold is not None else "")
                        ),
                    },
                )
            if case.flaky:
                ET.SubElement(props, "property", {"name": "flaky", "value": "true"})
            case_el.insert(0, props)
    root.set("skipped", str(skipped))
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode")
