"""trpc-agent-go's judge answers read into scores, and its samples and invocations aggregated.

Sources: trpc-group/trpc-agent-go at commit 0e352fdd1428d30a8d978d39877f5a7b2591ccc1,
``evaluation/evaluator/llm/operator/``: ``responsescorer/`` (finalresponse, rubricscores,
hallucination, singlescore, boolean, categorical, verifierpairwise, internal/responsejson),
``samplesaggregator/majorityvote`` and ``invocationsaggregator/average``. The patterns are
trpc's own, compiled with RE2 as Go compiles them (the same syntax and meaning, linear time);
where trpc's Go code returns an error, :class:`AnswerError` carries its message. Pure.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import re2

# trpc's own patterns, compiled as trpc compiles them: with RE2 (Go's regexp), linear in the
# answer's length whatever it holds; Python's backtracking engine is cubic on some answers
_FINAL_RESPONSE = re2.compile(r"(?ms)reasoning:\s*(.*?)\s*is_the_agent_response_valid:\s*(.*?)\s*$")
_SENTENCE_BLOCK = re2.compile(
    r"(?ms)ID:\s*(.*?)\s*Reason:\s*(.*?)\s*Label:\s*(.*?)\s*Verdict:\s*(.*?)(?:\n\s*\n|\z)"
)
SENTENCE = re2.compile(r"(?s)<sentence>(.*?)</sentence>")
_LABEL_SCORES = {
    "supported": 1.0,
    "not_applicable": 1.0,
    "unsupported": 0.0,
    "contradictory": 0.0,
    "disputed": 0.0,
}


class AnswerError(ValueError):
    """trpc's scorer returns an error for this answer (the metric errors, as in trpc)."""


@dataclass
class Sample:
    """One judge answer scored (trpc's evaluator.ScoreResult)."""

    score: float
    reason: str = ""
    rubric_scores: list[dict[str, Any]] = field(default_factory=list)
    value: Any = None  # a boolean or categorical scorer's verdict, as trpc records it


def _go_field(obj: dict[str, Any], name: str) -> Any:
    """A struct field as Go's decoder finds it: the exact key, else one equal but for case."""
    if name in obj:
        return obj[name]
    return next((v for k, v in obj.items() if k.lower() == name.lower()), None)


def _typed(obj: dict[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    value = _go_field(obj, name)
    if value is not None and (
        isinstance(value, bool) != (kind is bool) or not isinstance(value, kind)
    ):
        raise AnswerError(f"unmarshal response json: field {name} has the wrong type")
    return value


def _not_json(literal: str) -> Any:
    raise ValueError(f"invalid character {literal[0]!r} looking for beginning of value")


def decode_json(content: str) -> dict[str, Any]:
    """responsejson.UnmarshalContent: the answer trimmed, a leading code fence cut, decoded into
    a struct (JSON null decodes to the zero value)."""
    content = content.strip()
    if not content:
        raise AnswerError("empty response text")
    if content.startswith("```"):
        for prefix in ("```json", "```JSON", "```"):
            content = content.removeprefix(prefix)
        content = content.removesuffix("```").strip()
    try:
        value = json.loads(content, parse_constant=_not_json)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise AnswerError(f"unmarshal response json: {exc}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise AnswerError("unmarshal response json: cannot unmarshal into a Go struct")
    return value


def final_response(content: str) -> Sample:
    """responsescorer/finalresponse: 1 when the label after ``is_the_agent_response_valid:``
    is "valid" (any case), else 0; the reasoning is the reason."""
    if not content:
        raise AnswerError("empty response text")
    match = _FINAL_RESPONSE.search(content)
    if match is None:
        raise AnswerError("extract reasoning and label: no final response blocks found in response")
    score = 1.0 if match.group(2).strip().lower() == "valid" else 0.0
    return Sample(score, match.group(1).strip(), value=score)


def rubric_scores(content: str, expected_ids: list[str] | None) -> Sample:
    """responsescorer/rubricscores: ``{"rubricScores": [{id, score, reason}]}``, every id
    known, none twice, none missing (when the metric has rubrics); the mean score."""
    payload = decode_json(content)
    items = _typed(payload, "rubricScores", list) or []
    if not items:
        raise AnswerError("rubricScores is empty")
    seen: set[str] = set()
    scores: list[dict[str, Any]] = []
    for raw in items:
        item = raw if isinstance(raw, dict) else {}
        if raw is not None and not isinstance(raw, dict):
            raise AnswerError("unmarshal response json: a rubric score is not an object")
        rubric_id = _typed(item, "id", str)
        if rubric_id is None or not rubric_id.strip():
            raise AnswerError("rubric score id is empty")
        rubric_id = rubric_id.strip()
        if rubric_id in seen:
            raise AnswerError(f"duplicate rubric score id {json.dumps(rubric_id)}")
        if expected_ids is not None and rubric_id not in expected_ids:
            raise AnswerError(f"unexpected rubric score id {json.dumps(rubric_id)}")
        seen.add(rubric_id)
        score, reason = _typed(item, "score", (int, float)), _typed(item, "reason", str)
        if score is None:
            raise AnswerError("rubric score is required")
        if reason is None:
            raise AnswerError("rubric score reason is required")
        if score < 0 or score > 1:
            raise AnswerError("rubric score must be between 0 and 1")
        scores.append({"id": rubric_id, "score": float(score), "reason": reason})
    missing = [i for i in expected_ids or [] if i not in seen]
    if missing:
        raise AnswerError(f"missing rubric score id {json.dumps(missing[0])}")
    mean = sum(s["score"] for s in scores) / len(scores)
    return Sample(mean, "\n".join(s["reason"] for s in scores), scores, mean)


def expected_rubric_ids(rubrics: list[dict[str, Any]]) -> list[str] | None:
    """rubrics.ValidateStructured's ids when the metric has rubrics (None when it has none)."""
    visible = [r for r in rubrics if isinstance(r, dict) and r.get("content") is not None]
    if not visible:
        return None
    ids: list[str] = []
    for rubric in visible:
        rubric_id = str(rubric.get("id") or "").strip()
        if not rubric_id:
            raise AnswerError("llm judge rubric id is required for structured output")
        if rubric_id in ids:
            raise AnswerError(f"duplicate llm judge rubric id {json.dumps(rubric_id)}")
        ids.append(rubric_id)
    return ids


def hallucination(content: str) -> Sample:
    """responsescorer/hallucination: one ``ID/Reason/Label/Verdict`` block per sentence; the
    label decides (supported, not_applicable 1; unsupported, contradictory, disputed 0), the
    verdict only where the label is empty; the mean over the sentences."""
    blocks = _SENTENCE_BLOCK.findall(content)
    if not blocks:
        raise AnswerError("no sentence blocks found in response")
    scores = []
    for n, (raw_id, raw_reason, raw_label, raw_verdict) in enumerate(blocks, 1):
        sentence_id = raw_id.strip() or str(n)
        reason = raw_reason.strip()
        label = raw_label.strip().lower().replace(" ", "_")
        if label in _LABEL_SCORES:
            score = _LABEL_SCORES[label]
        elif label == "":
            score = 1.0 if raw_verdict.strip().lower() == "yes" else 0.0
        else:
            raise AnswerError(f"score sentence {sentence_id}: unexpected label {json.dumps(label)}")
        annotated = (f"[{label}] {reason}" if label else reason).strip()
        scores.append({"id": sentence_id, "score": score, "reason": annotated})
    mean = sum(s["score"] for s in scores) / len(scores)
    return Sample(mean, "\n".join(s["reason"] for s in scores), scores, mean)


def single_score(content: str) -> Sample:
    """responsescorer/singlescore: ``{"score": 0..1, "reason": "..."}``."""
    payload = decode_json(content)
    score, reason = _typed(payload, "score", (int, float)), _typed(payload, "reason", str)
    if score is None:
        raise AnswerError("score is required")
    if reason is None:
        raise AnswerError("reason is required")
    if score < 0 or score > 1:
        raise AnswerError("score must be between 0 and 1")
    return Sample(float(score), reason, value=float(score))


def boolean(content: str) -> Sample:
    """responsescorer/boolean: ``{"passed": true|false, "reason": "..."}`` → 1 or 0."""
    payload = decode_json(content)
    passed, reason = _typed(payload, "passed", bool), _typed(payload, "reason", str)
    if passed is None:
        raise AnswerError("passed is required")
    if reason is None:
        raise AnswerError("reason is required")
    return Sample(1.0 if passed else 0.0, reason, value=passed)


def category_scores(options: dict[str, Any] | None) -> dict[str, float]:
    """category.Scores: the template's responseScorerOptions.categories, label → score."""
    categories = (options or {}).get("categories") or []
    if not categories:
        raise AnswerError("categorical response scorer categories are required")
    scores: dict[str, float] = {}
    for category in categories:
        if not isinstance(category, dict):
            raise AnswerError("categorical category is nil")
        label, score = category.get("label") or "", float(category.get("score") or 0)
        if not label:
            raise AnswerError("categorical category label is empty")
        if score < 0 or score > 1:
            raise AnswerError(
                f"categorical category {json.dumps(label)} score must be between 0 and 1"
            )
        if label in scores:
            raise AnswerError(f"duplicate categorical category label {json.dumps(label)}")
        scores[label] = score
    return scores


def categorical(content: str, categories: dict[str, float]) -> Sample:
    """responsescorer/categorical: ``{"category": label, "reason": "..."}``; an unknown label
    scores 0 with the label named in the reason."""
    payload = decode_json(content)
    label, reason = _typed(payload, "category", str), _typed(payload, "reason", str)
    if label is None:
        raise AnswerError("category is required")
    if reason is None:
        raise AnswerError("reason is required")
    if label not in categories:
        return Sample(0.0, f"unknown categorical label {json.dumps(label)}: {reason}", value=label)
    return Sample(categories[label], reason, value=label)


def pairwise_score(tokens: list[dict[str, Any]], granularity: int = 20) -> Sample:
    """responsescorer/verifierpairwise: each candidate's expected score from the log
    probabilities of the letter (A best .. T worst) after ``<score_A>`` / ``<score_B>``;
    0.5 + (A - B) / 2, clamped to [0, 1]. ``tokens``: [{token, logprob, top_logprobs}]."""
    if not tokens:
        raise AnswerError("logprobs are missing")
    a = tag_score(tokens, "<score_A>", granularity, "score_A")
    b = tag_score(tokens, "<score_B>", granularity, "score_B")
    score = min(1.0, max(0.0, 0.5 + (a - b) / 2))
    return Sample(score, f"Computed from score_A {a:.4f} and score_B {b:.4f} log probabilities.")


def _letter(token: str, granularity: int) -> int | None:
    normalized = token.strip().upper()
    if len(normalized.encode()) != 1:
        return None
    index = ord(normalized) - ord("A")
    return index if 0 <= index < granularity else None


def _distribution(token: dict[str, Any], prefix_len: int, granularity: int) -> dict[int, float]:
    text = token.get("token") or ""
    if prefix_len < 0 or prefix_len > len(text):
        return {}
    prefix = text[:prefix_len]
    dist: dict[int, float] = {}
    candidates = [(text, token.get("logprob", 0.0))] + [
        (t.get("token") or "", t.get("logprob", 0.0)) for t in token.get("top_logprobs") or []
    ]
    for n, (candidate, logprob) in enumerate(candidates):
        if not candidate.startswith(prefix):
            continue
        index = _letter(candidate[len(prefix) :], granularity)
        if index is None:
            continue
        if n == 0 or index not in dist or logprob > dist[index]:
            dist[index] = logprob
    return dist


def tag_score(tokens: list[dict[str, Any]], tag: str, granularity: int, name: str) -> float:
    text = ""
    for i, token in enumerate(tokens):
        before = len(text)
        text += token.get("token") or ""
        start = text.find(tag, max(0, before - len(tag) + 1))
        if start < 0:
            continue
        end = start + len(tag)
        if end < len(text):
            dist = _distribution(token, end - before, granularity)
        elif i + 1 >= len(tokens):
            raise AnswerError(f"{name}: score token is missing after tag")
        else:
            dist = _distribution(tokens[i + 1], 0, granularity)
        if not dist:
            raise AnswerError(f"{name}: score token logprobs are missing after tag")
        if any(math.isnan(v) for v in dist.values()):
            raise AnswerError(f"{name}: score token logprob is NaN")
        top = max(dist.values())
        if math.isinf(top) and top < 0:
            raise AnswerError(f"{name}: score token logprobs are all negative infinity")
        weights = {i: math.exp(v - top) for i, v in dist.items()}
        total = sum(weights.values())
        return sum(w * (1 - i / (granularity - 1)) for i, w in weights.items()) / total
    raise AnswerError(f"{name}: score tag is missing")


# --- aggregation ------------------------------------------------------------------------------


def majority_vote(samples: list[Sample], threshold: float) -> Sample:
    """samplesaggregator/majorityvote: the first passing sample (score >= threshold) when the
    passing ones are more than the failing ones, else the first failing one (a tie fails)."""
    if not samples:
        raise AnswerError("no samples")
    passing = [s for s in samples if s.score >= threshold]
    failing = [s for s in samples if s.score < threshold]
    return passing[0] if len(passing) > len(failing) else failing[0]


def average(scores: list[float]) -> float:
    """invocationsaggregator/average: the mean of the invocations' scores."""
    return sum(scores) / len(scores)
