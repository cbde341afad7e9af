"""ROUGE without importing nltk: the Porter stemmer loaded from nltk's own file is nltk's
``PorterStemmer`` (the one rouge-score uses), word for word, and scoring imports no nltk."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_eval.metrics import rouge_loader
from tests.conftest import SHARED


def _nltk_porter() -> Any:
    """nltk's stemmer module (nltk imports scipy): imported by the tests, not at collection."""
    return pytest.importorskip("nltk.stem.porter")


DICTIONARY = Path("/usr/share/dict/words")
ROOT = Path(__file__).resolve().parents[2]


def _pair() -> tuple[object, object]:
    return rouge_loader.porter_stemmer_from_file()(), _nltk_porter().PorterStemmer()


def _words(text: str) -> set[str]:
    # what rouge-score hands the stemmer: lower-case runs of [a-z0-9]
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def test_the_file_loaded_stemmer_is_a_separate_copy_of_nltks_class() -> None:
    ours, theirs = _pair()
    assert type(ours) is not type(theirs)
    assert type(ours).__name__ == "PorterStemmer"
    assert ours.mode == theirs.mode == _nltk_porter().PorterStemmer.NLTK_EXTENSIONS


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs the corpus in ../shared")
def test_same_stems_on_every_word_of_the_corpus() -> None:
    words: set[str] = set()
    for path in (SHARED / "corpus").rglob("*"):
        if path.is_file():
            words |= _words(path.read_text(encoding="utf-8", errors="replace"))
    assert len(words) > 1000
    ours, theirs = _pair()
    assert [ours.stem(w) for w in sorted(words)] == [theirs.stem(w) for w in sorted(words)]


@pytest.mark.skipif(not DICTIONARY.is_file(), reason="no dictionary (apt install wamerican)")
def test_same_stems_on_a_dictionary() -> None:
    words = sorted(_words(DICTIONARY.read_text(encoding="utf-8", errors="replace")))
    assert len(words) > 50_000
    ours, theirs = _pair()
    assert [ours.stem(w) for w in words] == [theirs.stem(w) for w in words]


@pytest.fixture(scope="module")
def pair() -> tuple[Any, Any]:
    return _pair()


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=20))
def test_same_stems_on_any_ascii_word(pair: tuple[Any, Any], word: str) -> None:
    ours, theirs = pair
    assert ours.stem(word) == theirs.stem(word)


WORDS = ["running", "runs", "the", "weather", "sunny", "Paris", "cities", "é", "42", ".\n"]
_scorer_from_file = rouge_loader.rouge_scorer_from_file()


@given(
    st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join),
    st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join),
    st.sampled_from(["rouge1", "rouge2", "rougeL", "rougeLsum"]),
    st.booleans(),
)
def test_the_file_loaded_rouge_scorer_scores_as_rouge_score(
    target: str, prediction: str, rouge_type: str, stem: bool
) -> None:
    from rouge_score import rouge_scorer

    ours = _scorer_from_file.RougeScorer([rouge_type], use_stemmer=stem)
    theirs = rouge_scorer.RougeScorer([rouge_type], use_stemmer=stem)
    assert ours.score(target, prediction) == theirs.score(target, prediction)


def test_scoring_rouge_does_not_import_nltk() -> None:
    code = (
        "import sys\n"
        "from ci_eval.metrics.rouge import rouge1_fmeasure\n"
        "from ci_eval.metrics.rouge_loader import rouge_scorer\n"
        "print(rouge1_fmeasure('the runners were running', 'a runner runs'))\n"
        "rouge_scorer().RougeScorer(['rougeL'], use_stemmer=True).score('a b', 'a c')\n"
        "print('nltk' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    from rouge_score import rouge_scorer

    expected = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True).score(
        "the runners were running", "a runner runs"
    )["rouge1"]
    assert float(out[0]) == expected.fmeasure
    assert out[1] == "False"
