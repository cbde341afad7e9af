"""How google-adk 2.13 reads its judges' answers, rule for rule (no google-adk needed).

Each reader returns what ADK's parser yields for the same text. The answers come through
``Judge.ask``, which caps their length and cuts long runs of whitespace, quotes and brackets
(``judge.tame``): the label patterns below are ADK's own regular expressions, whose nested
quantifiers over such runs would otherwise cost a power of their length. ADK's two
hallucination parsers are re-done as scans that find exactly the matches its patterns find, in
linear time (its patterns retry a lazy group from every occurrence of their first word).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass

# final_response_match_v2.py, _parse_critique: the "valid" field, else an "invalid" one
_VALID = re.compile(
    r'"is_the_agent_response_valid":\s*\[*[\n\s]*"*([^"^\]^\s]*)"*[\n\s]*\]*\s*[,\n\}]'
)
_INVALID = re.compile(
    r'"is_the_agent_response_invalid":\s*\[*[\n\s]*"*([^"^\]^\s]*)"*[\n\s]*\]*\s*[,\n\}]'
)
# llm_as_judge_utils.py, Label: the words ADK reads as invalid and as valid (case-sensitive
# in _parse_critique, lower-cased first in the user-simulator judge's parser)
_NEGATIVE = ("invalid", "almost", "false", "partially_valid", "partially valid", "partially")
_POSITIVE = ("valid", "true")


def response_match_verdict(answer: str) -> float | None:
    """final_response_match_v2: 1.0 valid, 0.0 invalid, None no label found."""
    found = _VALID.search(answer)
    if found:
        label = found.group(1).strip().rstrip(",}")
        if label in _NEGATIVE:
            return 0.0
        return 1.0 if label in _POSITIVE else None
    found = _INVALID.search(answer)
    if found:
        # a judge that named the field "…_invalid": "true"/"invalid" say invalid, anything
        # else (garbage included) says valid, as ADK reads it
        return 0.0 if found.group(1).strip().rstrip(",}") in ("true", "invalid") else 1.0
    return None


# simulation/per_turn_user_simulator_quality_v1.py, _parse_llm_response
_IS_VALID = re.compile(r'"is_valid":\s*\[*[\n\s]*"*([^"\]]*)"*[\n\s]*\]*\s*[,\n\}]')


def user_turn_verdict(answer: str) -> float | None:
    """per_turn_user_simulator_quality_v1: 1.0 valid, 0.0 invalid, None no label found."""
    found = _IS_VALID.search(answer)
    if found is None:
        return None
    label = found.group(1).strip("}").replace(",", "").strip().lower()
    if label in _NEGATIVE:
        return 0.0
    return 1.0 if label in _POSITIVE else None


@dataclass(frozen=True)
class RubricVerdict:
    """One property the judge answered on (rubric_based_evaluator.py, RubricResponse)."""

    rubric_id: str | None
    property_text: str
    rationale: str
    score: float | None


# rubric_based_evaluator.py, DefaultAutoRaterResponseParser
_ID = re.compile(r"(?m)^\s*ID: (.*)$")
_PROPERTY = re.compile(r"(?m)^\s*Property: (.*)$")
_RATIONALE = re.compile(r"(?<=Rationale: )(.*)")
_VERDICT = re.compile(r"(?<=Verdict: )(.*)")


def rubric_verdicts(answer: str) -> list[RubricVerdict]:
    """The judge's ``Property:``/``Rationale:``/``Verdict:`` lines; none at all when their
    counts differ (ADK drops a partial parse rather than let a missing "no" raise the score)."""
    properties = list(_PROPERTY.finditer(answer))
    ids = list(_ID.finditer(answer))
    rationales = _RATIONALE.findall(answer)
    scores: list[float | None] = []
    for verdict in _VERDICT.findall(answer):
        lowered = verdict.lower()
        scores.append(1.0 if "yes" in lowered else 0.0 if "no" in lowered else None)
    if not len(properties) == len(rationales) == len(scores):
        return []
    out = []
    for i, (prop, rationale, score) in enumerate(zip(properties, rationales, scores, strict=True)):
        # the ID line between the previous property and this one (the last such, as ADK)
        previous = properties[i - 1].start() if i > 0 else -1
        rubric_id = None
        for found in ids:
            if previous < found.start() < prop.start():
                rubric_id = found.group(1).strip() or None
        out.append(RubricVerdict(rubric_id, prop.group(1).strip(), rationale.strip(), score))
    return out


_SMART = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"}
)
_DECORATION = " *_`#>-\u2022\"'"
_WHITESPACE = re.compile(r"\s+")


def normalize_property(text: object) -> str:
    """rubric_based_evaluator.py, _normalize_text: a property as the judge may echo it (NFKC,
    typographic quotes and dashes plain, whitespace runs one space, Markdown decoration off
    both ends, lower case) for matching it to a rubric."""
    if not isinstance(text, str):
        return ""
    text = unicodedata.normalize("NFKC", text).translate(_SMART)
    return _WHITESPACE.sub(" ", text).strip(_DECORATION).lower()


def sentences(answer: str) -> list[str]:
    """hallucinations_v1.py, _parse_sentences: what each ``<sentence>…</sentence>`` holds
    (``re.findall(r"<sentence>(.*?)</sentence>", …, re.DOTALL)``)."""
    out = []
    start = answer.find("<sentence>")
    while start >= 0:
        end = answer.find("</sentence>", start + len("<sentence>"))
        if end < 0:
            break  # no closing tag after this opening one: none after any later one either
        out.append(answer[start + len("<sentence>") : end])
        start = answer.find("<sentence>", end + len("</sentence>"))
    return out


# hallucinations_v1.py, _parse_validation_results reads, case-insensitively, blocks of
# "sentence:… \nlabel:… \nrationale:… \nsupporting_excerpt:… \ncontradicting_excerpt:…" each
# ending where "\nsentence:" starts or at the end; only the labels count
_FIELDS = ("\nlabel:", "\nrationale:", "\nsupporting_excerpt:", "\ncontradicting_excerpt:")


def _where(word: str, text: str) -> list[int]:
    # the regex engine finds the words, so case folds as ADK's IGNORECASE pattern folds it
    return [m.start() for m in re.finditer(re.escape(word), text, re.IGNORECASE)]


def sentence_labels(answer: str) -> list[str]:
    """The label of every block ADK's validator parser finds, stripped, in order.

    Its pattern's groups are lazy, so a block is the earliest chain of the five words after a
    "sentence:" (each after the previous one's end) and ends at the first "\\nsentence:" after
    that, or at the end; the next block is looked for from there. Found here from the words'
    positions, which is what the pattern finds without retrying from every "sentence:"."""
    text = answer.strip()
    starts = _where("sentence:", text)
    fields = [_where(word, text) for word in _FIELDS]
    ends = _where("\nsentence:", text)
    labels = []
    pos = 0
    while True:
        i = bisect.bisect_left(starts, pos)
        if i == len(starts):
            return labels
        chain, at = [], starts[i] + len("sentence:")
        for word, positions in zip(_FIELDS, fields, strict=True):
            j = bisect.bisect_left(positions, at)
            if j == len(positions):
                # no block from here; none from any later "sentence:" either
                return labels
            chain.append(positions[j])
            at = positions[j] + len(word)
        labels.append(text[chain[0] + len(_FIELDS[0]) : chain[1]].strip())
        k = bisect.bisect_left(ends, at)
        pos = ends[k] if k < len(ends) else len(text)
