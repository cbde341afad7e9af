"""A judge's answer is read in linear time and within a cap: 90,000 "{" are no verdict, said
at once (a regex search retried from every "{" took minutes, and held the GIL through
SIGTERM); a JSON object nested deeper than Python's parser goes is no verdict either; answers
made to defeat ADK's label patterns are read as ADK reads them, and end."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.metrics.adk_judge_labels import (
    response_match_verdict,
    rubric_verdicts,
    sentence_labels,
    sentences,
    user_turn_verdict,
)
from ci_eval.metrics.base import MetricFailure
from ci_eval.metrics.judge import MAX_ANSWER_CHARS, Judge, tame
from ci_eval.net.llm import Completion
from ci_eval.settings import JudgeConfig


class _Canned:
    def __init__(self, text: str) -> None:
        self.text = text

    def complete(self, messages: object) -> str:
        return self.text

    def ask(self, messages: object, sample: int = 0, logprobs: int | None = None) -> Completion:
        return Completion(self.text, [])

    def remember(self, *args: object) -> None:
        pass


def _judge(answer: str) -> Judge:
    judge = Judge(JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m"))
    judge.client = _Canned(answer)  # type: ignore[assignment]
    return judge


def test_an_answer_of_braces_is_no_verdict_and_is_read_in_linear_time() -> None:
    # not a timing: a search retried from every "{" does not end within the minute at all
    caught: list[BaseException] = []

    def parse() -> None:
        try:
            _judge("{" * 90_000).ask_json("p")
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
        _judge('{"a":' * 10_000 + "1" + "}" * 10_000).ask_json("p")


def _ends(work: Callable[[], object]) -> object:
    """What ``work`` returns; fails when it is still at it after a minute (not a timing: the
    patterns this guards against take hours on these answers)."""
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(work()), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "still parsing"
    return done[0]


@pytest.mark.parametrize(
    "answer",
    [
        '"is_valid":' + " " * 90_000,
        '"is_valid":' + "[" * 45_000 + "a" * 45_000,
        '"is_valid":' + ' "' * 45_000,
    ],
    ids=["spaces", "brackets", "quotes"],
)
def test_an_answer_made_to_defeat_adks_label_pattern_is_no_verdict_and_ends(answer: str) -> None:
    judge = _judge(answer)
    assert _ends(lambda: user_turn_verdict(judge.ask("p"))) is None
    assert _ends(lambda: response_match_verdict(judge.ask("p").replace("is_valid", "x"))) is None


@pytest.mark.parametrize(
    "answer",
    [
        "sentence:\nlabel:\nrationale:\nsupporting_excerpt:" * 2_000,
        "sentence:" * 11_000,
        "<sentence>" * 9_000,
        "ID: x\nProperty: p\n" * 5_000,
    ],
    ids=["blocks-never-closed", "sentences", "tags", "properties"],
)
def test_an_answer_made_to_defeat_adks_hallucination_and_rubric_patterns_ends(
    answer: str,
) -> None:
    """ADK's validator pattern retries five lazy groups from every "sentence:": ci-eval finds
    the same blocks from the words' positions, once."""
    text = _judge(answer).ask("p")
    assert _ends(lambda: sentence_labels(text)) == []
    assert _ends(lambda: sentences(text)) == []
    assert _ends(lambda: rubric_verdicts(text)) == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=' \n"[]{}:,abvalid_is', max_size=60))
def test_an_answer_without_long_runs_reads_as_it_was(answer: str) -> None:
    if not re.search(r'\s{4}|\[{4}|\]{4}|"{4}', answer):
        assert tame(answer) == answer


def test_a_long_run_of_whitespace_keeps_its_line_break() -> None:
    assert tame('"is_valid":    \n  valid') == '"is_valid":  \nvalid'
    assert tame("a" + " " * 10 + "b") == "a   b"


def test_the_object_in_an_answer_is_found_as_before() -> None:
    assert _judge('Sure: {"score": 1, "why": "ok"} done').ask_json("p") == {
        "score": 1,
        "why": "ok",
    }


def test_a_case_and_run_makes_no_more_llm_calls_than_the_ceiling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ci_eval.net import llm
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
