"""Fixed pull-request runs for what the reviewer reads, compared with a real history of pushes
to main (``baseline.update`` then ``compare``): tests render them, and so do the benchmarks and
the README's screenshot (``benchmarks/reviewer.py``).

- :func:`reviewer`: 7 eval sets, 3 runs a case, 4 pushes of history — 3 regressions, 2 agent
  errors, 3 known failures, a flaky pass, a case that improved, a new case, a case main has
  that the PR no longer runs, and a set whose only case is skipped;
- :func:`large`: 300 cases with 196 regressions and 8 errors, for the size budgets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ci_eval.gate import baseline as baseline_store
from ci_eval.gate.compare import compare
from ci_eval.gate.power import DEFAULT_TARGET
from ci_eval.metrics.base import CaseMetric
from ci_eval.model import Content, FunctionCall, IntermediateData, Invocation, Part
from ci_eval.model.facts import RunFacts
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.results.file import (
    CaseRecord,
    InvocationRecord,
    MetricResult,
    RunRecord,
    RunResults,
    SetRecord,
)

TRAJECTORY = MetricSpec("tool_trajectory_avg_score", 1.0)
RESPONSE = MetricSpec("response_match_score", 0.8)
SPECS = [TRAJECTORY, RESPONSE]
MAIN = "4f884d1c0ffee0000000000000000000000000000"[:40]


@dataclass(frozen=True, eq=False)  # a key by identity: its args are a dict
class Case:
    """A case's content and what the agent does: per run, passed or not (or an error)."""

    set_id: str
    case_id: str
    user: str
    tool: str
    args: dict[str, Any]
    answer: str
    wrong_tool: str | None = None  # what the agent calls instead when a run fails
    wrong_answer: str = "Sorry, I cannot help with that."
    error: str | None = None


def _invocation(user: str, tool: str | None, args: dict[str, Any], answer: str) -> Invocation:
    calls = [FunctionCall(name=tool, args=args)] if tool else []
    return Invocation(
        user_content=Content(role="user", parts=[Part(text=user)]),
        final_response=Content(role="model", parts=[Part(text=answer)]),
        intermediate_data=IntermediateData(tool_uses=calls),
    )


def _record(case: Case, passes: list[bool], line: int, status: str | None = None) -> CaseRecord:
    """The case as a job ran it: one run per entry of ``passes``."""
    expected = _invocation(case.user, case.tool, case.args, case.answer)
    file = f"evals/{case.set_id}.evalset.json"
    if case.error is not None:
        runs = [
            RunRecord(n, [InvocationRecord(expected, None, 0.0, error=case.error)], case.error)
            for n in range(1, len(passes) + 1)
        ]
        return CaseRecord(case.case_id, file, line, runs=runs, scored_status="ERROR")
    runs, per_metric = [], {s.name: [] for s in SPECS}
    for n, ok in enumerate(passes, 1):
        if ok:
            actual, scores = expected, {TRAJECTORY.name: 1.0, RESPONSE.name: 0.95}
        else:
            wrong = case.wrong_tool or case.tool
            actual = _invocation(
                case.user, wrong, {} if case.wrong_tool else case.args, case.wrong_answer
            )
            scores = {TRAJECTORY.name: 0.0 if case.wrong_tool else 1.0, RESPONSE.name: 0.2}
        metrics = [
            MetricResult(s.name, "PASSED" if scores[s.name] >= s.threshold else "FAILED",
                         scores[s.name], s.threshold, [scores[s.name]])
            for s in SPECS
        ]  # fmt: skip
        for s in SPECS:
            per_metric[s.name].append(scores[s.name])
        runs.append(RunRecord(n, [InvocationRecord(expected, actual, 0.4)], None, 0.4, metrics))
    case_metrics = []
    for s in SPECS:
        values = per_metric[s.name]
        mean = sum(values) / len(values)
        ok = sum(v >= s.threshold for v in values)
        case_metrics.append(
            CaseMetric(s.name, "PASSED" if 2 * ok > len(values) else "FAILED", mean, s.threshold,
                       runs=values, pass_rate=ok / len(values), flaky=0 < ok < len(values))
        )  # fmt: skip
    verdict = status or ("PASSED" if all(m.status == "PASSED" for m in case_metrics) else "FAILED")
    record = CaseRecord(
        case.case_id, file, line, runs=runs, metrics=case_metrics, scored_status=verdict
    )
    record.flaky = any(m.flaky for m in case_metrics)
    return record


def _results(plan: dict[Case, list[bool]], started: str, skipped: list[Case] = ()) -> RunResults:
    by_set: dict[str, list[CaseRecord]] = {}
    for line, (case, passes) in enumerate(plan.items()):
        by_set.setdefault(case.set_id, []).append(_record(case, passes, 5 + 12 * line))
    for case in skipped:
        by_set.setdefault(case.set_id, []).append(
            CaseRecord(case.case_id, f"evals/{case.set_id}.evalset.json", 5,
                       scored_status="SKIPPED",
                       skipped="needs a user simulator: set [simulator] base_url and model")
        )  # fmt: skip
    sets = [
        SetRecord(set_id, f"evals/{set_id}.evalset.json", "adk",
                  MetricConfig(SPECS, "test_config.json", "adk"), cases, list(SPECS))
        for set_id, cases in by_set.items()
    ]  # fmt: skip
    out = RunResults(sets, "http agent http://127.0.0.1:8000", started, 42.0)
    out.settings = RunFacts(num_runs=len(next(iter(plan.values()))))
    out.fail_on = ("regression", "error", "not-evaluated")
    return out


def _history(plan_main: dict[Case, list[bool]], pushes: int) -> dict[str, Any]:
    data = None
    for i in range(pushes):
        commit = MAIN if i == pushes - 1 else f"{i:07d}" + "0" * 33
        data, _ = baseline_store.update(
            data, _results(plan_main, f"2026-11-2{i}T10:00:00+00:00"), commit=commit
        )
    assert data is not None
    return data


def _c(set_id: str, case_id: str, user: str, tool: str, answer: str, **kw: Any) -> Case:
    return Case(set_id, case_id, user, tool, {"q": case_id}, answer, **kw)


def reviewer(runs: int = 3, pushes: int = 4) -> RunResults:
    """The pull request of the issue "What the reviewer reads", compared with main."""
    ok, bad = [True] * runs, [False] * runs
    flaky = [True] * runs
    flaky[1] = False
    refund = _c("support", "refund_policy", "Can I get a refund after 40 days?", "lookup_policy",
                "Refunds are possible within 30 days.", wrong_tool="search_web")  # fmt: skip
    paris = _c("weather", "paris_weather", "Weather in Paris?", "get_weather",
               "It is sunny in Paris, 21 degrees.", wrong_answer="I do not know.")  # fmt: skip
    invoice = _c("billing", "invoice_copy", "Send me my last invoice", "get_invoice",
                 "Invoice INV-1042 is on its way.", wrong_tool="create_invoice")  # fmt: skip
    cases = {
        "regressed": [refund, paris, invoice],
        "errors": [
            _c(
                "billing",
                "refund_status",
                "Where is my refund?",
                "refund_status",
                "On its way.",
                error="turn 1: HTTP 503 from http://127.0.0.1:8000/run: upstream model timed out "
                "after 30 s",
            ),
            _c(
                "search",
                "query_docs",
                "Find the install guide",
                "search_docs",
                "Here it is.",
                error="turn 1: the agent's reply is not JSON: 'Traceback (most recent call last):"
                " KeyError: 'session_id''",
            ),
        ],
        "known": [
            _c(
                "support",
                "returns_abroad",
                "Can I return from abroad?",
                "lookup_policy",
                "Yes, with a prepaid label.",
                wrong_tool="search_web",
            ),
            _c(
                "weather",
                "berlin_units",
                "Weather in Berlin in Fahrenheit?",
                "get_weather",
                "It is 28 °F in Berlin.",
            ),
            _c(
                "travel",
                "visa_question",
                "Do I need a visa for Japan?",
                "visa_rules",
                "Not for stays under 90 days.",
                wrong_tool="search_web",
            ),
        ],
        "flaky": [_c("weather", "tokyo_time", "Time in Tokyo?", "get_time", "It is 9 pm.")],
        "improved": [
            _c(
                "weather",
                "london_forecast",
                "Forecast for London?",
                "get_forecast",
                "Rain.",
                wrong_tool="get_weather",
            )
        ],
        "passing": [
            _c("support", "shipping_time", "How long is shipping?", "lookup_policy", "3 days."),
            _c("billing", "balance", "What is my balance?", "get_balance", "12 EUR."),
            _c("search", "filter_docs", "Docs about tokens", "search_docs", "Two pages."),
            _c("travel", "booking", "Book a table", "book", "Booked for 8 pm."),
            _c("greetings", "hello", "Hello", "greet", "Hello!"),
            _c("greetings", "goodbye", "Bye", "greet", "Goodbye!"),
        ],
    }
    new = _c("travel", "seat_upgrade", "Upgrade my seat", "upgrade", "Upgraded to 3A.")
    removed = _c("greetings", "old_farewell", "Farewell", "greet", "Farewell!")
    skipped = _c("scenarios", "weather_without_a_city", "", "get_weather", "")
    main = {c: ok for group in ("regressed", "errors", "flaky", "passing") for c in cases[group]}
    main |= {c: bad for group in ("known", "improved") for c in cases[group]}
    main[removed] = ok
    now = {c: bad for c in cases["regressed"] + cases["known"]}
    now |= {c: ok for c in cases["errors"] + cases["improved"] + cases["passing"]}
    now |= {cases["flaky"][0]: flaky, new: ok}
    history = _history(main, pushes)
    results = _results(now, "2026-11-27T09:30:00+00:00", skipped=[skipped])
    results.comparison = compare(results, history, target=DEFAULT_TARGET)
    return results


def large(cases: int = 300, regressions: int = 196, errors: int = 8) -> RunResults:
    """A big suite where most cases broke: every blocking reason must still be shown."""
    plan_main, plan_now = {}, {}
    for n in range(cases):
        case = _c(f"suite_{n % 6}", f"case_{n:03d}_{'x' * 20}", f"Question {n}?", "tool",
                  f"Answer {n}.", wrong_tool="other_tool",
                  error=f"turn 1: HTTP 500 from the agent on case {n}: out of memory"
                  if regressions <= n < regressions + errors else None)  # fmt: skip
        plan_main[case] = [True] * 3
        plan_now[case] = [n >= regressions] * 3
    history = _history(plan_main, 4)
    results = _results(plan_now, "2026-11-27T09:30:00+00:00")
    results.comparison = compare(results, history, target=DEFAULT_TARGET)
    return results


def passing(runs: int = 3, pushes: int = 4) -> RunResults:
    """A pull request the gate passes although some of its cases fail: 2 known failures (they
    failed on main too), a flaky pass, an improvement, a new case and a skipped case."""
    ok, bad = [True] * runs, [False] * runs
    flaky = [True] * runs
    flaky[-1] = False
    known = [
        _c("support", "returns_abroad", "Can I return from abroad?", "lookup_policy",
           "Yes, with a prepaid label.", wrong_tool="search_web"),
        _c("travel", "visa_question", "Do I need a visa for Japan?", "visa_rules",
           "Not for stays under 90 days.", wrong_tool="search_web"),
    ]  # fmt: skip
    tokyo = _c("weather", "tokyo_time", "Time in Tokyo?", "get_time", "It is 9 pm.")
    london = _c("weather", "london_forecast", "Forecast for London?", "get_forecast", "Rain.",
                wrong_tool="get_weather")  # fmt: skip
    passing = [
        _c("support", "refund_policy", "Can I get a refund after 40 days?", "lookup_policy",
           "Refunds are possible within 30 days."),
        _c("billing", "balance", "What is my balance?", "get_balance", "12 EUR."),
        _c("travel", "booking", "Book a table", "book", "Booked for 8 pm."),
    ]  # fmt: skip
    new = _c("billing", "invoice_copy", "Send me my last invoice", "get_invoice",
             "Invoice INV-1042 is on its way.")  # fmt: skip
    skipped = _c("scenarios", "weather_without_a_city", "", "get_weather", "")
    main = {c: ok for c in [*passing, tokyo]} | {c: bad for c in [*known, london]}
    now = {c: ok for c in [*passing, london, new]} | {c: bad for c in known} | {tokyo: flaky}
    history = _history(main, pushes)
    results = _results(now, "2026-11-27T09:30:00+00:00", skipped=[skipped])
    results.comparison = compare(results, history, target=DEFAULT_TARGET)
    return results
