"""A judge's answer is read in linear time and within a cap: 300,000 "{" are no verdict, said
at once (a regex search retried from every "{" took minutes, and held the GIL through
SIGTERM); a JSON object nested deeper than Python's parser goes is no verdict either."""

from __future__ import annotations

import threading

import pytest

from ci_eval.metrics.base import MetricFailure
from ci_eval.metrics.judge import MAX_ANSWER_CHARS, Judge
from ci_eval.settings import JudgeConfig


class _Canned:
    def __init__(self, text: str) -> None:
        self.text = text

    def complete(self, messages: object) -> str:
        return self.text


def _judge(answer: str) -> Judge:
    judge = Judge(JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m"))
    judge.client = _Canned(answer)  # type: ignore[assignment]
    return judge


def test_an_answer_of_braces_is_no_verdict_and_is_read_in_linear_time() -> None:
    # not a timing: a search retried from every "{" does not end within the minute at all
    caught: list[BaseException] = []

    def parse() -> None:
        try:
            _judge("{" * 300_000).ask_json("p")
        except MetricFailure as exc:
            caught.append(exc)

    worker = threading.Thread(target=parse, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the answer's parse did not end"
    assert "expected a JSON object" in str(caught[0])


def test_an_answer_past_the_cap_is_refused_saying_so() -> None:
    with pytest.raises(MetricFailure, match="is no verdict"):
        _judge("x" * (MAX_ANSWER_CHARS + 1)).ask_json("p")


def test_a_deeply_nested_answer_is_no_verdict() -> None:
    with pytest.raises(MetricFailure, match="expected a JSON object"):
        _judge('{"a":' * 100_000 + "1" + "}" * 100_000).ask_json("p")


def test_the_object_in_an_answer_is_found_as_before() -> None:
    assert _judge('Sure: {"score": 1, "why": "ok"} done').ask_json("p") == {
        "score": 1,
        "why": "ok",
    }


def test_a_case_and_run_makes_no_more_llm_calls_than_the_ceiling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ci_eval import llm
    from tests.judge_server import JudgeServer

    monkeypatch.setattr(llm, "MAX_CALLS_PER_CASE", 3)
    with JudgeServer(lambda prompt, n: '{"score": 1}') as server:
        judge = Judge(JudgeConfig(base_url=server.url, model="m", retries=0))
        with llm.one_case():
            for i in range(3):
                judge.ask_json(f"prompt {i}")
            with pytest.raises(MetricFailure, match="more than 3 LLM calls for one case and run"):
                judge.ask_json("prompt 3")
            judge.ask_json("prompt 0")  # asked before: no call
        with llm.one_case():  # the next case and run starts from nothing
            judge.ask_json("prompt 4")
        assert len(server.prompts) == 4
