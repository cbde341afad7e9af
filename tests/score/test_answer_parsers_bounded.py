"""Every judge answer parser finishes on any answer up to the judge's ceiling (100,000
characters), random or built from its own pattern's pieces — trpc-agent-go's patterns compiled
with RE2 as Go compiles them, ADK's after ``tame`` — and RE2 gives what Python's engine gave on
the answers both finish (the patterns mean what they meant). Time is measured in
``benchmarks/`` (``bench_fuzz``); here only "finishes" is asserted, with a generous bound."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_eval.metrics import adk_judge_labels as adk
from ci_eval.metrics import trpc_judge_parse as trpc
from ci_eval.metrics.judge import MAX_ANSWER_CHARS, tame

BOUND_S = 10.0  # generous: each finishes in milliseconds on a 2-core runner
PIECES = [
    "ID:", "ID: a", "Reason:", "Reason: b ", "Label:", "Label: supported", "Verdict:",
    "Verdict: yes", "reasoning:", "is_the_agent_response_valid:", "valid", "<sentence>",
    "</sentence>", '"is_valid":', '"is_the_agent_response_valid":', "Property:", "Rationale: ",
    "\n", "\n\n", " ", "\t", "[", "]", '"', "{", "}", ",", "x", "é",
]  # fmt: skip


def _parsers() -> dict[str, Callable[[str], object]]:
    def quiet(f: Callable[[str], object]) -> Callable[[str], object]:
        def call(text: str) -> object:
            try:
                return f(text)
            except trpc.AnswerError:
                return None

        return call

    return {
        "trpc final_response": quiet(trpc.final_response),
        "trpc hallucination": quiet(trpc.hallucination),
        "trpc rubric_scores": quiet(lambda t: trpc.rubric_scores(t, None)),
        "trpc segmenter": trpc.SENTENCE.findall,
        "trpc boolean": quiet(trpc.boolean),
        "trpc single_score": quiet(trpc.single_score),
        "adk response_match_verdict": lambda t: adk.response_match_verdict(tame(t)),
        "adk user_turn_verdict": lambda t: adk.user_turn_verdict(tame(t)),
        "adk rubric_verdicts": lambda t: adk.rubric_verdicts(tame(t)),
        "adk sentence_labels": lambda t: adk.sentence_labels(tame(t)),
    }


PARSERS = _parsers()


def _finishes(parse: Callable[[str], object], text: str) -> None:
    started = time.perf_counter()
    parse(text)
    assert time.perf_counter() - started < BOUND_S


def _repeated(pieces: list[str]) -> str:
    unit = "".join(pieces) or "x"
    return (unit * (MAX_ANSWER_CHARS // len(unit) + 1))[:MAX_ANSWER_CHARS]


@pytest.mark.parametrize("name", list(PARSERS))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(PIECES), min_size=1, max_size=6))
def test_an_answer_of_its_own_pieces_at_the_ceiling_finishes(name: str, pieces: list[str]) -> None:
    _finishes(PARSERS[name], _repeated(pieces))


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("trpc hallucination", _repeated(["ID:a Reason:b "])),  # cubic on Python's engine
        ("trpc final_response", _repeated(["reasoning: ", "x "])),  # quadratic there
        ("trpc segmenter", _repeated(["<sentence>", "a"])),
        ("adk response_match_verdict", _repeated(['"is_the_agent_response_valid":', " "])),
        ("adk rubric_verdicts", _repeated(["Property: ", "Rationale: ", " "])),
    ],
)
def test_the_answers_that_were_slow_finish(name: str, text: str) -> None:
    _finishes(PARSERS[name], text)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_re2_reads_the_hallucination_blocks_as_pythons_engine_did(text: str) -> None:
    ws = r"[\t\n\f\r ]"  # RE2's \s, as the Python pattern spelled it
    python = re.compile(
        rf"ID:{ws}*(.*?){ws}*Reason:{ws}*(.*?){ws}*Label:{ws}*(.*?){ws}*"
        rf"Verdict:{ws}*(.*?)(?:\n{ws}*\n|\Z)",
        re.M | re.S,
    )
    assert trpc._SENTENCE_BLOCK.findall(text) == python.findall(text)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_re2_reads_the_final_response_as_pythons_engine_did(text: str) -> None:
    ws = r"[\t\n\f\r ]"
    python = re.compile(
        rf"reasoning:{ws}*(.*?){ws}*is_the_agent_response_valid:{ws}*(.*?){ws}*$", re.M | re.S
    )
    ours, theirs = trpc._FINAL_RESPONSE.search(text), python.search(text)
    assert (ours and ours.groups()) == (theirs and theirs.groups())
