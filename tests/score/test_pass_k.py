"""pass@k and pass^k over a case's runs, as trpc-agent-go defines them: ``PassAtK`` and
``PassHatK`` in trpc-group/trpc-agent-go ``evaluation/pass.go`` (tests ``evaluation/pass_test.go``)
at commit 0e352fdd1428d30a8d978d39877f5a7b2591ccc1."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_eval.metrics import REGISTRY, lookup, register
from ci_eval.metrics.base import Metric
from ci_eval.metrics.pass_k import SOURCE, pass_at_k, pass_hat_k
from ci_eval.model import Content, Invocation, Part
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.results.file import CaseRecord, InvocationRecord, RunRecord
from ci_eval.score.scorer import ScoreOptions, score_case
from ci_eval.settings.parse import parse_metric_table
from tests.helpers import run_cli
from tests.loopback_agent import LoopbackAgent
from tests.score.test_scoring_run import _flaky_set

# --- the numbers: trpc's formulas against brute force ---------------------------------------


def _outcomes(n: int, c: int) -> list[bool]:
    return [True] * c + [False] * (n - c)


def _drawn_without_replacement(n: int, c: int, k: int) -> Fraction:
    """Of every k-subset of the n runs, the share holding a pass (what pass@k estimates)."""
    subsets = list(itertools.combinations(_outcomes(n, c), k))
    return Fraction(sum(any(s) for s in subsets), len(subsets))


def _drawn_with_replacement(n: int, c: int, k: int) -> Fraction:
    """Of every k-tuple of the n runs (independent draws), the share that all pass."""
    tuples = list(itertools.product(_outcomes(n, c), repeat=k))
    return Fraction(sum(all(t) for t in tuples), len(tuples))


@st.composite
def _nck(draw: st.DrawFn, most: int = 12, k_over_n: bool = False) -> tuple[int, int, int]:
    n = draw(st.integers(1, most))
    return n, draw(st.integers(0, n)), draw(st.integers(1, n + 3 if k_over_n else n))


@given(_nck())
def test_pass_at_k_is_the_share_of_k_subsets_of_the_runs_holding_a_pass(
    nck: tuple[int, int, int],
) -> None:
    """trpc's PassAtK, 1 - C(n-c, k)/C(n, k) in log space, is the k-subset enumeration."""
    n, c, k = nck
    assert pass_at_k(n, c, k) == pytest.approx(float(_drawn_without_replacement(n, c, k)), 1e-12)


@given(_nck(most=6, k_over_n=True))
def test_pass_hat_k_is_the_share_of_k_independent_draws_that_all_pass(
    nck: tuple[int, int, int],
) -> None:
    """trpc's PassHatK is (c/n)^k — draws with replacement, so any k ≥ 1, even k > n — and not
    C(c, k)/C(n, k)."""
    n, c, k = nck
    assert pass_hat_k(n, c, k) == pytest.approx(float(_drawn_with_replacement(n, c, k)), 1e-12)


@given(st.integers(1, 400), st.data())
def test_the_values_are_probabilities_for_many_runs(n: int, data: st.DataObject) -> None:
    c, k = data.draw(st.integers(0, n)), data.draw(st.integers(1, n))
    exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
    assert 0.0 <= pass_at_k(n, c, k) <= 1.0
    assert pass_at_k(n, c, k) == pytest.approx(float(exact), rel=1e-9, abs=1e-12)
    assert 0.0 <= pass_hat_k(n, c, k) <= 1.0


def test_trpcs_own_cases_and_edges() -> None:
    """evaluation/pass_test.go's: TestPassAtK_EdgeCases, TestPassHatK_EdgeCasesAndKnownValue."""
    assert pass_at_k(10, 0, 1) == 0.0 and pass_at_k(10, 10, 1) == 1.0
    assert pass_at_k(5, 4, 2) == 1.0  # one failure: two runs drawn hold a pass
    assert pass_hat_k(10, 0, 3) == 0.0 and pass_hat_k(10, 10, 3) == 1.0
    assert pass_hat_k(10, 5, 2) == pytest.approx(0.25, abs=1e-12)


@pytest.mark.parametrize(
    ("function", "n", "c", "k"),
    [
        # TestPassAtK_ValidatesArgs
        (pass_at_k, -1, 0, 1),
        (pass_at_k, 1, 0, 0),
        (pass_at_k, 1, -1, 1),
        (pass_at_k, 1, 2, 1),
        (pass_at_k, 1, 0, 2),  # k > n
        (pass_at_k, 0, 0, 1),  # no run: k > n
        # TestPassHatK_ValidatesArgs
        (pass_hat_k, 0, 0, 1),  # no run
        (pass_hat_k, 1, 0, 0),
        (pass_hat_k, 1, -1, 1),
        (pass_hat_k, 1, 2, 1),
    ],
)
def test_what_trpc_refuses_is_refused(function: Any, n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        function(n, c, k)


def test_the_source_is_named() -> None:
    assert SOURCE == "trpc-group/trpc-agent-go evaluation/pass.go at 0e352fdd"


# --- over a case's runs -----------------------------------------------------------------------


@pytest.fixture
def verdicts() -> Iterator[list[float]]:
    """A gating metric ``coin`` (threshold 0.5) whose next per-run scores the test lists."""
    script: list[float] = []

    def scorer(expected: Any, actual: Any, spec: Any, ctx: Any) -> Any:
        step = script.pop(0)
        return step, [step] * len(actual), {}

    register(Metric("coin", "test metric", scorer, default_threshold=0.5))
    yield script
    del REGISTRY["coin"]


def _inv() -> Invocation:
    return Invocation(
        invocation_id="i",
        user_content=Content(role="user", parts=[Part(text="q")]),
        final_response=Content(role="model", parts=[Part(text="a")]),
    )


def _case(runs: int) -> CaseRecord:
    record = [RunRecord(n, [InvocationRecord(_inv(), _inv())]) for n in range(1, runs + 1)]
    return CaseRecord("c", "s.json", 1, runs=record)


def _scored(
    scores: list[float], verdicts: list[float], *specs: MetricSpec, dialect: str = "adk"
) -> CaseRecord:
    verdicts += scores
    case = _case(len(scores))
    score_case(case, [MetricSpec("coin"), *specs], dialect, dialect, ScoreOptions())
    return case


def test_a_metrics_table_entry_configures_k_and_an_optional_threshold() -> None:
    specs = parse_metric_table({"pass_at_k": {"k": 3}, "pass_hat_k": {"k": 2, "threshold": 0.5}})
    assert [(s.name, s.threshold, s.criterion) for s in specs] == [
        ("pass_at_k", None, {"k": 3}),
        ("pass_hat_k", 0.5, {"k": 2}),
    ]


@pytest.mark.parametrize("dialect", ["adk", "trpc", "watsonx", "adk-rs"])
def test_every_dialect_has_the_metrics(dialect: str) -> None:
    assert lookup("pass_at_k", dialect) is lookup("pass_at_k")
    assert lookup("pass_hat_k", dialect) is lookup("pass_hat_k")


def test_the_case_reads_its_runs_passes(verdicts: list[float]) -> None:
    """5 runs, 2 passing the gating metric: pass@3 = 1 - C(3,3)/C(5,3) = 0.9, pass^3 = 0.4³."""
    case = _scored(
        [1.0, 0.0, 1.0, 0.0, 0.0],
        verdicts,
        MetricSpec("pass_at_k", None, {"k": 3}),
        MetricSpec("pass_hat_k", None, {"k": 3}),
    )
    coin, at_k, hat_k = case.metrics[:3]
    assert (at_k.status, hat_k.status) == ("INFO", "INFO")
    assert at_k.score == pytest.approx(0.9) and hat_k.score == pytest.approx(0.4**3)
    assert at_k.runs == [1.0, 0.0, 1.0, 0.0, 0.0] and at_k.pass_rate == 0.4
    assert at_k.reason is not None and at_k.reason.startswith("pass@3 over 5 runs, 2 passed")
    assert at_k.informational and case.scored_status == coin.status == "FAILED"


def test_each_run_records_its_own_pass_as_information(verdicts: list[float]) -> None:
    case = _scored([1.0, 0.0], verdicts, MetricSpec("pass_at_k", None, {"k": 1}))
    [first, second] = [run.metrics[1] for run in case.runs]
    assert (first.status, first.score, second.status, second.score) == ("INFO", 1.0, "INFO", 0.0)


def test_without_a_threshold_they_never_change_the_cases_status(verdicts: list[float]) -> None:
    case = _scored([1.0], verdicts, MetricSpec("pass_at_k", None, {"k": 1}))
    assert case.metrics[1].score == 1.0 and case.scored_status == "PASSED"
    broken = _scored([1.0], verdicts, MetricSpec("pass_at_k", None, {"k": "three"}))
    assert broken.metrics[1].status == "ERROR" and broken.scored_status == "PASSED"
    assert broken.metrics[1].reason is not None
    assert "[metrics] pass_at_k = {k = 3}" in broken.metrics[1].reason


def test_a_threshold_makes_them_gate(verdicts: list[float]) -> None:
    """Two runs, one passing: pass@2 = 1 passes at 0.8; pass^2 = 0.25 fails."""
    case = _scored(
        [1.0, 0.0],
        verdicts,
        MetricSpec("pass_at_k", 0.8, {"k": 2}),
        MetricSpec("pass_hat_k", 0.8, {"k": 2}),
    )
    assert [m.status for m in case.metrics[:3]] == ["PASSED", "PASSED", "FAILED"]
    assert case.scored_status == "FAILED" and not case.metrics[1].informational


def test_a_case_run_once_has_pass_at_1_and_pass_hat_1_its_runs_pass(verdicts: list[float]) -> None:
    for score, value in ((1.0, 1.0), (0.0, 0.0)):
        case = _scored(
            [score],
            verdicts,
            MetricSpec("pass_at_k", None, {"k": 1}),
            MetricSpec("pass_hat_k", None, {"k": 1}),
        )
        assert (case.metrics[1].score, case.metrics[2].score) == (value, value)


def test_k_above_the_runs_is_not_evaluated_for_pass_at_k_naming_num_runs(
    verdicts: list[float],
) -> None:
    """trpc's PassAtK refuses k > n; its PassHatK computes (c/n)^k for any k."""
    case = _scored(
        [1.0, 0.0],
        verdicts,
        MetricSpec("pass_at_k", 0.5, {"k": 3}),
        MetricSpec("pass_hat_k", None, {"k": 3}),
    )
    at_k, hat_k = case.metrics[1:3]
    assert at_k.status == "NOT_EVALUATED" and at_k.score is None
    assert at_k.reason is not None and "--num-runs 3" in at_k.reason
    assert hat_k.score == pytest.approx(0.125)


def test_an_errored_run_counts_and_does_not_pass(verdicts: list[float]) -> None:
    """n is every run (trpc's NumRuns); a run the agent could not finish passed nothing."""
    verdicts += [1.0, 1.0]
    case = _case(3)
    case.runs[2].error = "agent: HTTP 500"
    specs = [MetricSpec("coin"), MetricSpec("pass_hat_k", None, {"k": 1})]
    score_case(case, specs, "trpc", "trpc", ScoreOptions())
    assert case.metrics[1].score == pytest.approx(2 / 3)
    assert case.metrics[1].runs == [1.0, 1.0]  # the finished runs' passes, as every metric's


def test_confirmation_reruns_are_not_counted(verdicts: list[float]) -> None:
    verdicts += [0.0, 1.0]
    case = _case(2)
    case.runs[1].confirmation = True
    specs = [MetricSpec("coin"), MetricSpec("pass_at_k", None, {"k": 1})]
    score_case(case, specs, "adk", "adk", ScoreOptions())
    assert case.metrics[1].score == 0.0 and case.metrics[1].runs == [0.0, 1.0]


def test_a_run_whose_gating_metric_was_not_evaluated_did_not_pass(verdicts: list[float]) -> None:
    """ci-eval's case rule, per run (trpc's Summarize would skip the metric not evaluated)."""
    case = _scored(
        [1.0],
        verdicts,
        MetricSpec("no_such_metric", 0.5),
        MetricSpec("pass_at_k", None, {"k": 1}),
    )
    assert case.metrics[2].score == 0.0 and case.scored_status == "NOT_EVALUATED"


def test_a_run_with_num_runs_reports_them_from_ci_eval_toml(tmp_path: Path) -> None:
    """The loopback agent alternates the right and a wrong tool call: 2 of 4 runs pass."""
    (tmp_path / "ci-eval.toml").write_text(
        "[metrics]\ntool_trajectory_avg_score = 1.0\npass_at_k = {k = 2}\npass_hat_k = {k = 2}\n"
    )
    out = tmp_path / "r.json"
    with LoopbackAgent() as agent:
        proc = run_cli(
            "run",
            str(_flaky_set(tmp_path)),
            "--agent",
            "http",
            "--agent-url",
            agent.url,
            "--num-runs",
            "4",
            "--concurrency",
            "1",
            "--results",
            str(out),
            cwd=tmp_path,
        )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the trajectory's mean 0.5 < 1
    [case] = [c for s in json.loads(out.read_text())["sets"] for c in s["cases"]]
    metrics = {m["name"]: m for m in case["metrics"]}
    # 1 - C(2,2)/C(4,2) = 5/6; (2/4)^2 = 1/4
    assert metrics["pass_at_k"]["score"] == pytest.approx(5 / 6)
    assert metrics["pass_hat_k"]["score"] == pytest.approx(0.25)
    assert metrics["pass_at_k"]["status"] == metrics["pass_hat_k"]["status"] == "INFO"
