"""Usage, reported and gated: the agent's tokens, model calls and latency per case and per job
(confirmation reruns apart), prices → cost, the ``[budget]`` limits, and token and latency
regressions against main's history (ci_eval.results.usage_totals, ci_eval.gate.usage)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from ci_eval.errors import InputError, ValidationFailed
from ci_eval.gate import baseline as baseline_store
from ci_eval.gate.compare import compare
from ci_eval.gate.items import Kind
from ci_eval.gate.usage import t_sf, usage_changes
from ci_eval.gate.verdict import verdict
from ci_eval.metrics.base import CaseMetric
from ci_eval.model.evalset import Invocation
from ci_eval.model.facts import LlmUse, RunFacts
from ci_eval.model.metric_spec import MetricConfig, MetricSpec
from ci_eval.model.usage import Usage
from ci_eval.report.markdown import render_comment, render_summary
from ci_eval.results.file import (
    CaseRecord,
    InvocationRecord,
    RunRecord,
    RunResults,
    SetRecord,
    read_results,
    write_results,
)
from ci_eval.results.usage_totals import of_results, price_of, summary
from ci_eval.settings.toml import load_config

TURN = Invocation.model_validate(
    {"invocation_id": "t", "user_content": {"role": "user", "parts": [{"text": "hi"}]}}
)
SPEC = MetricSpec("m", 1.0)


def _run(n: int, tokens: int | None, seconds: float, confirmation: bool = False) -> RunRecord:
    usage = None if tokens is None else Usage(tokens * 3 // 4, tokens // 4, model_calls=2)
    turns = [
        InvocationRecord(TURN, TURN, duration_s=seconds / 2, usage=usage),
        InvocationRecord(TURN, TURN, duration_s=seconds / 2),  # reported nothing
    ]
    return RunRecord(n, turns, duration_s=seconds, confirmation=confirmation)


def _case(case_id: str, runs: list[RunRecord]) -> CaseRecord:
    metric = CaseMetric("m", "PASSED", 1.0, 1.0, runs=[1.0] * len(runs))
    return CaseRecord(case_id, "s.json", 1, runs, metrics=[metric], scored_status="PASSED")


def _results(cases: list[CaseRecord], name: str = "2026-11-27T00:00:00+00:00") -> RunResults:
    config = MetricConfig([SPEC], "c.json", "adk")
    results = RunResults([SetRecord("s", "s.json", "adk", config, cases, [SPEC])], "a", name, 1.0)
    results.settings = RunFacts(num_runs=3)
    return results


def _job(
    rng: random.Random,
    name: str,
    runs: int,
    *,
    cases: int = 8,
    tokens: float = 1.0,
    slower: float = 1.0,
    runner: float = 1.0,
    cv: float = 0.1,
) -> RunResults:
    """``cases`` cases of 1,000 × (i + 1) tokens and 1 + i/2 s per run, lognormal noise of
    ``cv``; case c0's tokens × ``tokens``, its latency × ``slower``; the whole job × ``runner``."""
    out = []
    for i in range(cases):
        records = []
        for n in range(runs):
            spent = 1000 * (i + 1) * rng.lognormvariate(0, cv) * (tokens if i == 0 else 1)
            wall = (1 + i / 2) * rng.lognormvariate(0, cv) * runner * (slower if i == 0 else 1)
            records.append(_run(n + 1, int(spent), wall))
        out.append(_case(f"c{i}", records))
    return _results(out, name)


def _history(rng: random.Random, pushes: int = 8, **job: float) -> dict:
    data = None
    for p in range(pushes):
        run = _job(rng, f"2026-11-{p + 1:02d}T00:00:00+00:00", 2, **job)  # type: ignore[arg-type]
        data, _ = baseline_store.update(data, run, "a" * 40)
    assert data is not None
    return data


# --- reported --------------------------------------------------------------------------------


def test_totals_per_case_and_job_count_tokens_calls_and_latency_reruns_apart() -> None:
    case = _case("c", [_run(1, 1000, 2.0), _run(2, 3000, 4.0), _run(3, 500, 8.0, True)])
    found = of_results(_results([case, _case("d", [_run(1, None, 1.0)])]))
    [c, d] = found.cases
    assert c.tokens == [1000, 3000] and c.tokens_per_run == 2000
    assert c.reruns.runs == 1 and c.reruns.total_tokens == 500  # the rerun, apart
    assert d.tokens == [None] and d.tokens_per_run is None  # unknown, not zero
    agent = found.agent.json()
    assert (agent["runs"], agent["turns"], agent["unreported_turns"]) == (3, 6, 4)
    assert (agent["input_tokens"], agent["output_tokens"], agent["total_tokens"]) == (
        750 + 2250,
        250 + 750,
        4000,
    )
    assert agent["model_calls"] == 4
    assert agent["latency_s"] == {"p50": 1.0, "p95": 2.0, "max": 2.0}  # per turn


def test_prices_give_a_cost_per_million_tokens() -> None:
    results = _results([_case("c", [_run(1, 1_000_000, 1.0)])])
    results.settings.prices = {"gpt-x": {"input": 2.0, "output": 8.0}}
    spent = summary(results)
    assert spent["agent"]["cost_usd"] == pytest.approx(0.75 * 2 + 0.25 * 8)
    assert spent["cost_usd"] == spent["agent"]["cost_usd"]
    # the agent's model is not reported: `agent`, else `default`, else the only one listed
    prices = {"a": {"input": 1}, "default": {"input": 2}, "agent": {"input": 3}}
    assert price_of(prices) == {"input": 3}
    assert price_of({"a": {"input": 1}, "b": {"input": 2}}) is None
    assert price_of(prices, "judge-model") == {"input": 2}


def test_the_judges_and_simulators_usage_is_shown_apart_and_priced_by_model() -> None:
    results = _results([_case("c", [_run(1, 1000, 1.0)])])
    results.settings.llm_usage = {"judge": LlmUse(4, 1, input_tokens=1_000_000)}
    results.settings.models = {"judge": "judge-x"}
    results.settings.prices = {"judge-x": {"input": 1.0, "output": 1.0}}
    spent = summary(results)
    assert spent["judge"]["cost_usd"] == 1.0 and spent["agent"]["cost_usd"] is None
    comment = render_comment(results, "ci/evals")
    assert "**Usage:** agent: 1,000 tokens" in comment and "judge: 4 calls" in comment


def test_the_summary_has_a_usage_section_and_the_results_file_the_totals(tmp_path: Path) -> None:
    results = _results([_case("big", [_run(1, 9000, 3.0)]), _case("small", [_run(1, 100, 1.0)])])
    results.settings.usage_totals = summary(results)
    text = render_summary(results)
    assert "### Usage" in text
    assert "| agent | 9,100 tokens (6,825 in, 2,275 out) in 4 model calls" in text
    assert "**Most tokens per run:** big (9,000 tokens), small (100 tokens)" in text
    path = tmp_path / "r.json"
    write_results(path, results)
    again = read_results(path)
    assert again.settings.usage_totals["agent"]["total_tokens"] == 9100
    assert json.loads(path.read_text())["settings"]["usage_totals"]["top_tokens"][0] == {
        "case": "s:big",
        "tokens_per_run": 9000,
    }


def test_the_baseline_records_each_runs_tokens_aligned_with_its_runs() -> None:
    first = _results([_case("c", [_run(1, 1000, 1.0), _run(2, None, 1.0)])])
    data, _ = baseline_store.update(None, first, "a" * 40)
    entry = data.sets["s"].cases["c"]
    assert entry.usage == [1000, None] and entry.latency_s == [1.0, 1.0]
    data, _ = baseline_store.update(data, _results([_case("c", [_run(1, 2000, 1.0)])], "x"))
    assert data.sets["s"].cases["c"].usage == [1000, None, 2000]
    quiet = _results([_case("c", [_run(1, None, 1.0)])])
    written = baseline_store.to_data(baseline_store.update(None, quiet, "a" * 40)[0])
    assert "usage" not in written["sets"]["s"]["cases"]["c"]


# --- [budget] and [prices] -------------------------------------------------------------------


def test_a_budget_exceeded_blocks_with_a_one_line_reason() -> None:
    results = _results([_case("big", [_run(1, 9000, 3.0)]), _case("small", [_run(1, 100, 1.0)])])
    results.settings.budget = {"tokens_per_case": 5000, "p95_latency_s": 10}
    decision = verdict(results)
    assert not decision.passed and decision.exit_code == 1
    assert decision.line == "gate failed: 1 budget exceeded (s:big)"
    [item] = decision.blocking
    assert item.kind is Kind.BUDGET
    assert item.text() == "9,000 tokens per run; over [budget] tokens_per_case = 5,000"
    results.settings.budget = {"p95_latency_s": 1.0, "cost_per_run": 0.01}
    results.settings.prices = {"default": {"input": 10.0, "output": 10.0}}
    decision = verdict(results)
    assert [i.text() for i in decision.blocking] == [
        "this job cost $0.091; over [budget] cost_per_run = $0.01",
        "p95 turn latency 1.50 s; over [budget] p95_latency_s = 1",
    ]


def test_prices_and_budget_tables_are_checked(tmp_path: Path) -> None:
    config = tmp_path / "ci-eval.toml"
    config.write_text(
        "[prices]\nmodel-a = {input = 1.5, output = 6}\n[budget]\ntokens_per_case = 20000\n"
    )
    settings = load_config(config, required=True)
    assert settings.prices == {"model-a": {"input": 1.5, "output": 6}}
    assert settings.budget == {"tokens_per_case": 20000}
    config.write_text('[prices]\nm = 3\n[budget]\ntokens_per_cas = 1\ncost_per_run = "1"\n')
    with pytest.raises(ValidationFailed) as raised:
        load_config(config, required=True)
    text = "\n".join(str(p) for p in raised.value.problems)
    assert "[prices] m: expected a table" in text
    assert "unknown key [budget] tokens_per_cas" in text and "tokens_per_case" in text
    assert "[budget] cost_per_run: expected a number" in text
    config.write_text("[budget]\np95_latency = 2\n")
    with pytest.raises(InputError, match="did you mean p95_latency_s"):
        load_config(config, required=True)


# --- regressions against main's history -----------------------------------------------------


def test_a_token_rise_of_60_percent_is_a_regression_and_noise_is_not() -> None:
    rng = random.Random(1)
    data = _history(rng)
    same = usage_changes(_job(rng, "pr", 3), data, min_history=5)
    assert not any(c.regressed for c in same)
    assert {c.kind for c in same} == {"tokens", "latency"} and len(same) == 16
    risen = usage_changes(_job(rng, "pr", 3, tokens=1.6), data, min_history=5)
    assert [(c.case_id, c.kind) for c in risen if c.regressed] == [("c0", "tokens")]
    [c0] = [c for c in risen if c.regressed]
    assert 1.45 < c0.ratio < 1.95 and c0.history_runs == 16 and c0.runs_now == 3
    # a rise within the margin is never one, however sure: +20 %
    small = usage_changes(_job(rng, "pr", 3, tokens=1.2), data, min_history=5)
    assert not any(c.regressed for c in small)


def test_tokens_noise_never_fires_in_most_prs() -> None:
    rng = random.Random(7)
    fired = 0
    for pr in range(40):
        data = _history(rng, cv=0.25)
        job = _job(rng, f"pr{pr}", 3, cv=0.25)
        fired += any(c.regressed for c in usage_changes(job, data, min_history=5))
    assert fired <= 2  # ≤ 5 %


def test_a_short_history_judges_nothing() -> None:
    rng = random.Random(2)
    data = _history(rng, pushes=2)  # 4 runs a case
    assert usage_changes(_job(rng, "pr", 3, tokens=3.0), data, min_history=5) == []


def test_latency_allows_for_a_runner_slower_as_a_whole() -> None:
    rng = random.Random(3)
    data = _history(rng)
    slow_runner = usage_changes(_job(rng, "pr", 3, runner=1.8), data, min_history=5)
    latency = [c for c in slow_runner if c.kind == "latency"]
    assert not any(c.regressed for c in latency)
    assert all(c.runner is not None and 1.6 < c.runner < 2.0 for c in latency)
    # one case 2.5× slower on that slow runner still is one
    both = usage_changes(_job(rng, "pr", 3, runner=1.8, slower=2.5), data, min_history=5)
    assert [(c.case_id, c.kind) for c in both if c.regressed] == [("c0", "latency")]


def test_a_regression_is_listed_not_blocking_unless_fail_on_names_usage() -> None:
    rng = random.Random(1)
    data = _history(rng)
    results = _job(rng, "pr", 3, tokens=1.6)
    results.comparison = compare(results, data)
    results.fail_on = ("regression", "error", "not-evaluated")
    decision = verdict(results)
    assert decision.passed
    [item] = decision.not_blocking
    assert item.kind is Kind.TOKENS and item.key == "s:c0"
    assert "not blocking: add `usage` to --fail-on" in item.text()
    assert decision.line.endswith("1 token regression did not block")
    results.fail_on = ("regression", "usage")
    decision = verdict(results)
    assert decision.line == "gate failed: 1 token regression (s:c0)"
    assert decision.blocking[0].text().startswith("tokens rose: ")


def test_student_t_tail() -> None:
    assert t_sf(0.0, 5) == pytest.approx(0.5)
    assert t_sf(2.015, 5) == pytest.approx(0.05, abs=5e-4)
    assert t_sf(-2.015, 5) == pytest.approx(0.95, abs=5e-4)
    assert t_sf(3.25, 9) == pytest.approx(0.005, abs=2e-4)


def test_junit_carries_each_cases_tokens_and_latency() -> None:
    from ci_eval.report.junit import to_junit

    results = _results([_case("big", [_run(1, 9000, 3.0), _run(2, 7000, 1.0)])])
    assert "tokens per run" not in to_junit(results)  # a file from before: as it was
    results.settings.usage_totals = summary(results)
    xml = to_junit(results)
    assert '<property name="tokens per run" value="8000" />' in xml
    assert '<property name="p95 turn latency s" value="1.500" />' in xml


AGENT = """
import json, sys
for line in sys.stdin:
    if line.strip():
        print(json.dumps({"final_response": "ok", "usage": {"input_tokens": 900,
              "output_tokens": 100, "model_calls": 2}}), flush=True)
"""


def test_a_run_records_the_totals_and_prices_them(tmp_path: Path) -> None:
    from tests.factories import evalset
    from tests.helpers import run_cli

    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "s.evalset.json").write_text(json.dumps(evalset("s", "a", "b")))
    (tmp_path / "ci-eval.toml").write_text(
        "[prices]\nagent = {input = 1.0, output = 10.0}\n[budget]\ntokens_per_case = 500\n"
    )
    done = run_cli(
        "run", "s.evalset.json", "--agent", "command", "--agent-command", "python agent.py",
        "--num-runs", "2", "--results", "r.json", "--metric", "response_match_score=0",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "usage: agent: 4,000 tokens (3,600 in, 400 out) in 8 model calls" in done.stdout
    assert "2 budgets exceeded (s:a, s:b)" in done.stdout
    spent = json.loads((tmp_path / "r.json").read_text())["settings"]["usage_totals"]
    assert spent["agent"]["total_tokens"] == 4000 and spent["agent"]["runs"] == 4
    assert spent["cost_usd"] == pytest.approx((3600 * 1 + 400 * 10) / 1e6)
