"""Scoring inside `ci-eval run`: exit codes, repeated runs, the LLM judge over a loopback
chat-completions server, custom metrics, and the metrics listing."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ci_eval.metrics.base import ScoreContext
from ci_eval.metrics.judge import Judge
from ci_eval.metrics.judge_metrics import final_response_match_v2
from ci_eval.model import Content, Invocation, Part
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.settings import JudgeConfig
from tests.conftest import SAMPLES
from tests.helpers import run_cli, run_sample_agent
from tests.judge_server import JudgeServer
from tests.loopback_agent import LoopbackAgent

ci_eval = run_cli


def _cases(path: Path) -> dict[str, Any]:
    return {c["eval_id"]: c for s in json.loads(path.read_text())["sets"] for c in s["cases"]}


def test_a_failing_case_exits_1_and_names_its_metrics(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = run_sample_agent(
        str(SAMPLES / "evals/weather_basic.evalset.json"), "--results", str(out), cwd=tmp_path
    )
    assert proc.returncode == 1
    assert (
        "FAILED berlin_expected_to_fail (" in proc.stdout
        and "tool_trajectory_avg_score 0 < 1, response_match_score 0.25 < 0.8" in proc.stdout
    )
    berlin = _cases(out)["berlin_expected_to_fail"]
    assert berlin["status"] == "FAILED"
    scores = {m["name"]: (m["score"], m["status"]) for m in berlin["metrics"]}
    assert scores["response_match_score"] == (0.25, "FAILED")  # ADK's own number for it
    assert scores["tool_call_count_v1"] == (1.0, "INFO")


def test_metric_option_replaces_the_sets_metrics(tmp_path: Path) -> None:
    proc = run_sample_agent(
        str(SAMPLES / "evals/weather_basic.evalset.json"),
        "--metric",
        "response_match_score=0.2",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout
    proc = run_sample_agent(str(SAMPLES / "evals"), "--metric", "no_such_metric", cwd=tmp_path)
    assert proc.returncode == 2
    assert "unknown metric(s) no_such_metric" in proc.stderr


def _flaky_set(folder: Path) -> Path:
    path = folder / "coin.evalset.json"
    path.write_text(
        json.dumps(
            {
                "eval_set_id": "coin",
                "eval_cases": [
                    {
                        "eval_id": "paris",
                        "conversation": [
                            {
                                "user_content": {"role": "user", "parts": [{"text": "coin toss"}]},
                                "intermediate_data": {
                                    "tool_uses": [
                                        {"name": "get_weather", "args": {"city": "Paris"}}
                                    ]
                                },
                            }
                        ],
                    }
                ],
            }
        )
    )
    return path


@pytest.mark.parametrize(
    ("extra", "status", "code"),
    [
        ([], "FAILED", 1),  # ADK's rule: the mean over runs (0.5) against the threshold (1)
        (["--min-pass", "2"], "PASSED", 0),
        (["--min-pass", "3"], "FAILED", 1),
    ],
)
def test_repeated_runs(tmp_path: Path, extra: list[str], status: str, code: int) -> None:
    out = tmp_path / "r.json"
    with LoopbackAgent() as agent:
        proc = ci_eval(
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
            "--metric",
            "tool_trajectory_avg_score",
            "--results",
            str(out),
            *extra,
            cwd=tmp_path,
        )
    assert proc.returncode == code, proc.stdout + proc.stderr
    case = _cases(out)["paris"]
    assert case["status"] == status and case["flaky"] is True
    [metric] = [m for m in case["metrics"] if m["name"] == "tool_trajectory_avg_score"]
    assert metric["runs"] == [1.0, 0.0, 1.0, 0.0]
    assert metric["score"] == 0.5 and metric["pass_rate"] == 0.5
    assert metric["std"] == pytest.approx(0.5773502691896258) and metric["min"] == 0.0
    if status == "PASSED":
        assert "FLAKY paris (coin.evalset.json:1): passed 2 of 4 runs" in proc.stdout
    else:
        assert "(passed 2 of 4 runs)" in proc.stdout


def test_min_pass_above_num_runs_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_sample_agent(str(SAMPLES / "evals"), "--min-pass", "2", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--min-pass must be between 1 and --num-runs (1)" in proc.stderr


def _inv(text: str, expected: str) -> tuple[Invocation, Invocation]:
    def content(t: str, role: str) -> Content:
        return Content(role=role, parts=[Part(text=t)])

    return (
        Invocation(user_content=content("q", "user"), final_response=content(expected, "model")),
        Invocation(user_content=content("q", "user"), final_response=content(text, "model")),
    )


@pytest.mark.parametrize("prompts", ["adk", "ci-eval"])
def test_judge_majority_vote_and_one_call_per_identical_prompt(
    prompts: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ADK's prompt and votes, whatever CI_EVAL_JUDGE_PROMPTS says (it picks the simulator's
    instructions only) and whether google-adk is installed or not."""
    monkeypatch.setenv("CI_EVAL_JUDGE_PROMPTS", prompts)

    # samples 1 and 3 say valid, sample 2 invalid: the majority is valid
    def answer(prompt: str, n: int) -> str:
        label = "invalid" if n == 2 else "valid"
        return f'{{"reasoning": "r", "is_the_agent_response_valid": "{label}"}}'

    with JudgeServer(answer) as server:
        judge = Judge(JudgeConfig(server.url, "m"), api_key="sk-test")
        e1, a1 = _inv("It is sunny.", "Sunny in Paris.")
        spec = MetricSpec(
            "final_response_match_v2", 0.8, {"judge_model_options": {"num_samples": 3}}
        )
        score, per, _ = final_response_match_v2([e1, e1], [a1, a1], spec, ScoreContext(judge=judge))
        assert (score, per) == (1.0, [1.0, 1.0])
        assert len(server.prompts) == 3  # the second, identical invocation was not re-asked
        assert set(server.auth) == {"Bearer sk-test"}
        assert '"Reference response": Sunny in Paris.,' in server.prompts[0]  # ADK's words
        assert server.prompts[0].startswith("You are an expert rater for an AI agent.")


def test_judge_errors_are_that_metrics_error_not_the_runs(tmp_path: Path) -> None:
    (tmp_path / "ci-eval.toml").write_text(
        "[metrics]\ntool_trajectory_avg_score = 1.0\nfinal_response_match_v2 = 0.5\n"
        "[judge]\nretries = 1\n"  # the retry without the back-off before the second one
    )
    out = tmp_path / "r.json"
    with JudgeServer(lambda prompt, n: 500) as server:
        proc = run_sample_agent(
            str(SAMPLES / "evals/weather_basic.evalset.json"),
            "--judge-url",
            server.url,
            "--judge-model",
            "m",
            "--results",
            str(out),
            cwd=tmp_path,
        )
    assert proc.returncode == 3  # the judge is infrastructure: cases could not be scored
    paris = _cases(out)["paris_weather"]
    statuses = {m["name"]: m["status"] for m in paris["metrics"]}
    assert statuses["tool_trajectory_avg_score"] == "PASSED"
    assert statuses["final_response_match_v2"] == "ERROR"
    assert paris["status"] == "ERROR"
    assert "judge: POST" in proc.stdout and "HTTP 500 after 1 retry" in proc.stdout
    assert "Traceback" not in proc.stderr  # ADK's log of each failed sample is not shown
    # one failed call (its retries included) per case ends that case's metric: no judge call for
    # the other samples and invocations of a metric that is an ERROR already
    asked = Counter(server.prompts)
    assert len(asked) == len(_cases(out)) and set(asked.values()) == {2}


def test_llm_metrics_without_a_judge_are_not_evaluated(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = run_sample_agent(
        str(SAMPLES / "evals/weather_basic.evalset.json"),
        "--metric",
        "final_response_match_v2",
        "--results",
        str(out),
        cwd=tmp_path,
    )
    # never a silent pass: nothing was evaluated, and the gate says why
    assert proc.returncode == 1
    assert "nothing was evaluated (3 cases)" in proc.stdout.splitlines()[-1]
    [metric] = _cases(out)["paris_weather"]["metrics"][:1]
    assert metric["status"] == "NOT_EVALUATED" and "needs an LLM judge" in metric["reason"]


# ADK's rubric evaluators read Property/Verdict lines, matched to the rubrics by their IDs
RUBRIC_ANSWER = (
    "ID: polite\nProperty: Is polite.\nRationale: r\nVerdict: yes\n\n"
    "ID: short\nProperty: Is short.\nRationale: r\nVerdict: no\n"
)


def test_rubric_metric_through_the_judge(tmp_path: Path) -> None:
    (tmp_path / "ci-eval.toml").write_text(
        "[metrics.rubric_based_final_response_quality_v1]\nthreshold = 0.5\n"
        'rubrics = [{rubric_id = "polite", rubric_content = {text_property = "Is polite."}},'
        ' {rubric_id = "short", rubric_content = {text_property = "Is short."}}]\n'
        '[judge]\nbase_url = "{URL}"\nmodel = "m"\n'
    )

    with JudgeServer(lambda prompt, n: RUBRIC_ANSWER) as server:
        config = tmp_path / "ci-eval.toml"
        config.write_text(config.read_text().replace("{URL}", server.url))
        out = tmp_path / "r.json"
        proc = run_sample_agent(
            str(SAMPLES / "evals/weather_basic.evalset.json"),
            "--results",
            str(out),
            cwd=tmp_path,
        )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [metric] = _cases(out)["paris_weather"]["metrics"][:1]
    assert (metric["name"], metric["score"], metric["status"]) == (
        "rubric_based_final_response_quality_v1",
        0.5,
        "PASSED",
    )
    # ADK's default: 5 samples of each turn's prompt (identical prompts asked once per sample)
    assert len(server.prompts) == 5 * len(set(server.prompts))


def test_custom_metric_from_the_config(tmp_path: Path) -> None:
    (tmp_path / "team_metrics.py").write_text(
        "def mentions_city(expected, actual, criterion):\n"
        "    city = criterion.get('city', 'Paris')\n"
        "    per = [1.0 if city in (a.final_response.parts[0].text or '') else 0.0\n"
        "           for a in actual]\n"
        "    return sum(per) / len(per), per\n"
        "def broken(expected, actual, criterion):\n"
        "    raise RuntimeError('oops')\n"
    )
    (tmp_path / "ci-eval.toml").write_text(
        '[custom_metrics]\nmentions_city = "team_metrics:mentions_city"\n'
        'broken = "team_metrics:broken"\n[metrics]\nmentions_city = {threshold = 1.0}\n'
        "broken = 0.5\n"
    )
    out = tmp_path / "r.json"
    proc = run_sample_agent(
        str(SAMPLES / "evals/weather_basic.evalset.json"), "--results", str(out), cwd=tmp_path
    )
    cases = _cases(out)
    paris = {m["name"]: m for m in cases["paris_weather"]["metrics"]}
    assert paris["mentions_city"]["status"] == "PASSED"
    assert paris["broken"]["status"] == "ERROR"
    assert paris["broken"]["reason"] == "RuntimeError: oops"
    assert proc.returncode == 3


def test_bad_custom_metric_target_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "ci-eval.toml").write_text('[custom_metrics]\nx = "no_such_module:fn"\n')
    proc = run_sample_agent(str(SAMPLES / "evals"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "custom metric x: cannot load no_such_module:fn" in proc.stderr


def test_metrics_lists_every_metric() -> None:
    proc = run_cli("metrics")
    assert proc.returncode == 0
    for name in (
        "tool_trajectory_avg_score",
        "response_match_score",
        "final_response_avg_score (trpc criteria)",
        "final_response_match_v1",
        "journey_success",
        "hallucinations_v1",
        "needs an LLM judge",
    ):
        assert name in proc.stdout


def test_a_case_past_the_llm_call_ceiling_is_an_error_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ci_eval.net import llm

    # final_response_match_v2 asks 5 samples per invocation: 2 calls in, the ceiling stops it
    monkeypatch.setattr(llm, "MAX_CALLS_PER_CASE", 2)
    (tmp_path / "ci-eval.toml").write_text("[metrics]\nfinal_response_match_v2 = 0.5\n")
    out = tmp_path / "r.json"
    with JudgeServer(lambda prompt, n: '{"is_the_agent_response_valid": "valid"}') as server:
        proc = run_sample_agent(
            str(SAMPLES / "evals/weather_basic.evalset.json"),
            "--case",
            "weather_basic:paris_weather",
            "--judge-url",
            server.url,
            "--judge-model",
            "m",
            "--results",
            str(out),
            cwd=tmp_path,
        )
    assert proc.returncode == 3
    assert len(server.prompts) == 2
    assert "more than 2 LLM calls for one case and run" in proc.stdout
    assert _cases(out)["paris_weather"]["status"] == "ERROR"
