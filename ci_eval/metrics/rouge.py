"""ROUGE exactly as google-adk 2.13 computes ``response_match_score``.

ADK scores with the ``rouge-score`` package and its own Unicode-aware tokenizer
(``final_response_match_v1._UnicodeAwareTokenizer``): NFKC + lower-case; CJK ideographs, kana and
Hangul one token each; Thai, Lao, Khmer and Myanmar per grapheme; other characters kept when
``isalnum()`` or a combining mark, else a space; ASCII words through rouge-score's own tokenizer
(Porter stemmer on tokens longer than 3 characters); other words whole. The same rules here, with
the scorer built once and tokenisations cached, which is where ADK spends its time.

The stemmer is nltk's ``PorterStemmer``, as rouge-score's, loaded without importing nltk (see
``rouge_loader``); the n-gram scoring is rouge-score's, statement for statement. The parity tests
keep rouge-score itself as the reference.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from functools import lru_cache
from itertools import chain
from typing import Any

from ci_eval.metrics.rouge_loader import porter_stemmer_class


def _is_cjk(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3040 <= code <= 0x309F
        or 0x30A0 <= code <= 0x30FF
        or 0xAC00 <= code <= 0xD7AF
    )


def _is_non_spaced(code: int) -> bool:
    return (
        0x0E00 <= code <= 0x0E7F
        or 0x0E80 <= code <= 0x0EFF
        or 0x1780 <= code <= 0x17FF
        or 0x1000 <= code <= 0x109F
    )


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    # rouge-score's DefaultTokenizer(use_stemmer=True) builds PorterStemmer() in its default
    # mode, NLTK_EXTENSIONS; loaded when a score is first needed
    return porter_stemmer_class()()


@lru_cache(maxsize=1 << 16)
def _ascii_word(word: str) -> tuple[str, ...]:
    # rouge-score's tokenize module imports only re and six (its tokenizers module is what
    # imports nltk): DefaultTokenizer.tokenize is exactly this call
    from rouge_score import tokenize

    return tuple(tokenize.tokenize(word, _stemmer()))


class _CharMap(dict[int, str]):
    """ADK's per-character rule, as a ``str.translate`` table filled on first sight of each
    character: the rule runs once per distinct character instead of once per character."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if _is_cjk(code):
            out = f" {char} "
        elif _is_non_spaced(code):
            out = char if unicodedata.category(char).startswith("M") else f" {char}"
        elif char.isalnum() or unicodedata.category(char).startswith("M"):
            out = char
        else:
            out = " "
        self[code] = out
        return out


_CHARS = _CharMap()


# a text's tokens and counts are reused across a case's runs; a few thousand texts cover
# that, and a large run does not hold all of them to its end
@lru_cache(maxsize=1 << 12)
def unicode_tokens(text: str) -> tuple[str, ...]:
    if text.isascii():  # NFKC leaves ASCII alone, and every word goes to rouge-score's tokenizer
        return tuple(chain.from_iterable(map(_ascii_word, text.lower().translate(_CHARS).split())))
    words = unicodedata.normalize("NFKC", text).lower().translate(_CHARS).split()
    tokens: list[str] = []
    for word in words:
        if word.isascii():
            tokens.extend(_ascii_word(word))
        else:
            tokens.append(word)
    return tuple(tokens)


class UnicodeAwareTokenizer:
    """ADK's tokenizer, as the object rouge-score's RougeScorer takes."""

    def tokenize(self, text: str) -> list[str]:
        return list(unicode_tokens(text))


@lru_cache(maxsize=1 << 12)
def _unigrams(text: str) -> Counter[str]:
    # rouge-score counts 1-tuples of tokens; the tokens themselves count the same, faster
    return Counter(unicode_tokens(text))


def score_unigrams(target: Counter[str], prediction: Counter[str]) -> float:
    """rouge-score's ``rouge_scorer._score_ngrams(target, prediction).fmeasure``, statement for
    statement (``rouge_scorer`` itself imports nltk and numpy): the same floating-point
    operations in the same order give the same bits."""
    intersection = 0
    for ngram in target:
        intersection += min(target[ngram], prediction[ngram])
    target_count = sum(target.values())
    prediction_count = sum(prediction.values())
    precision = intersection / max(prediction_count, 1)
    recall = intersection / max(target_count, 1)
    # rouge_score.scoring.fmeasure
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def rouge1_fmeasure(reference: str, candidate: str) -> float:
    """ADK's ``_calculate_rouge_1_scores(candidate, reference).fmeasure``, with rouge-score's
    own scoring of the unigram counts; each distinct text is tokenised and counted once."""
    return score_unigrams(_unigrams(reference), _unigrams(candidate))
