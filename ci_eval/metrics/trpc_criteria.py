"""trpc-agent-go's criteria for one value against another (evaluation/metric/criterion): text
(exact / contains / regex, case-insensitive), JSON (numbers within a tolerance, ignore and only
trees) and ROUGE. Each raises ``Mismatch`` with trpc's reason, or returns."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2

from ci_eval.metrics import rouge_loader
from ci_eval.metrics.rouge import UnicodeAwareTokenizer

DEFAULT_TOLERANCE = 1e-6


class Mismatch(Exception):
    """Why a trpc criterion did not match (trpc's error text, kept as the reason)."""


# --- text --------------------------------------------------------------------------------


def text_match(actual: str, expected: str, crit: dict[str, Any] | None) -> None:
    if crit is None or crit.get("ignore"):
        return
    length = crit.get("length")
    if length and not length.get("ignore"):
        low, high = length.get("min"), length.get("max")
        if low is None and high is None:
            raise Mismatch("length criterion must configure min or max")
        if low is not None and len(actual) < low:
            raise Mismatch(f"length mismatch: actual length {len(actual)} is less than min {low}")
        if high is not None and len(actual) > high:
            raise Mismatch(
                f"length mismatch: actual length {len(actual)} is greater than max {high}"
            )
    strategy = crit.get("matchStrategy") or "exact"
    if strategy == "skip":
        return
    if crit.get("caseInsensitive"):
        actual, expected = actual.lower(), expected.lower()
    if strategy == "exact":
        ok = actual == expected
    elif strategy == "contains":
        ok = expected in actual
    elif strategy == "regex":
        try:  # Go's regexp is RE2: the same syntax, the same meaning, linear time
            ok = re2.search(expected, actual) is not None
        except re2.error as exc:
            raise Mismatch(f"invalid regex {expected}: {exc}") from None
    else:
        raise Mismatch(f"invalid match strategy {strategy}")
    if not ok:
        raise Mismatch(f"source {actual!r} and target {expected!r} do not match ({strategy})")


# --- JSON --------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    return float(value) if isinstance(value, int | float) else None


def _exact(actual: Any, expected: Any, tol: float, where: str) -> None:
    if actual is None and expected is None:
        return
    if actual is None or expected is None:
        raise Mismatch(f"{where}: actual {actual!r} and expected {expected!r} do not match")
    if isinstance(actual, dict) or isinstance(expected, dict):
        if not (isinstance(actual, dict) and isinstance(expected, dict)):
            raise Mismatch(f"{where}: one is an object and the other is not")
        _object(actual, expected, None, tol, where, ignore=False)
        return
    if isinstance(actual, list) or isinstance(expected, list):
        if not (isinstance(actual, list) and isinstance(expected, list)):
            raise Mismatch(f"{where}: one is an array and the other is not")
        if len(actual) != len(expected):
            raise Mismatch(
                f"{where}: array length mismatch: actual({len(actual)}) != "
                f"expected({len(expected)})"
            )
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _exact(a, e, tol, f"{where}[{i}]")
        return
    a_num, e_num = _number(actual), _number(expected)
    if a_num is not None and e_num is not None:
        if not abs(a_num - e_num) <= tol:
            raise Mismatch(f"{where}: {actual!r} != {expected!r} (tolerance {tol:g})")
        return
    if type(actual) is not type(expected) or actual != expected:
        raise Mismatch(f"{where}: actual {actual!r} and expected {expected!r} do not match")


def _ignored(tree: dict[str, Any] | None, key: str) -> bool:
    return bool(tree) and tree.get(key) is True


def _object(
    actual: dict[str, Any],
    expected: dict[str, Any],
    tree: dict[str, Any] | None,
    tol: float,
    where: str,
    ignore: bool = True,
) -> None:
    for key in actual:
        if not (ignore and _ignored(tree, key)) and key not in expected:
            raise Mismatch(f"{where}: key {key} in actual but not in expected")
    for key in expected:
        if not (ignore and _ignored(tree, key)) and key not in actual:
            raise Mismatch(f"{where}: key {key} in expected but not in actual")
    for key in actual:
        if ignore and _ignored(tree, key):
            continue
        child = tree.get(key) if tree and isinstance(tree.get(key), dict) else None
        if ignore:
            _ignore_tree(actual[key], expected[key], child, tol, f"{where}.{key}")
        else:
            _exact(actual[key], expected[key], tol, f"{where}.{key}")


def _ignore_tree(
    actual: Any, expected: Any, tree: dict[str, Any] | None, tol: float, where: str
) -> None:
    if actual is None and expected is None:
        return
    if actual is None or expected is None:
        raise Mismatch(f"{where}: actual {actual!r} and expected {expected!r} do not match")
    if isinstance(actual, dict) != isinstance(expected, dict):
        raise Mismatch(f"{where}: one is an object and the other is not")
    if isinstance(actual, dict):
        _object(actual, expected, tree, tol, where)
    else:
        _exact(actual, expected, tol, where)


def _only_tree(actual: Any, expected: Any, tree: dict[str, Any], tol: float, where: str) -> None:
    if actual is None and expected is None:
        return
    if actual is None or expected is None:
        raise Mismatch(f"{where}: actual {actual!r} and expected {expected!r} do not match")
    if not isinstance(actual, dict) or not isinstance(expected, dict):
        if isinstance(actual, dict) or isinstance(expected, dict):
            raise Mismatch(f"{where}: one is an object and the other is not")
        _exact(actual, expected, tol, where)
        return
    for key, sel in tree.items():
        if sel is False:
            continue
        if not isinstance(sel, bool | dict):
            raise Mismatch(f"onlyTree[{key}] must be a bool or an object")
        if key not in actual:
            raise Mismatch(f"{where}: key {key} in onlyTree but not in actual")
        if key not in expected:
            raise Mismatch(f"{where}: key {key} in onlyTree but not in expected")
        if sel is True:
            _exact(actual[key], expected[key], tol, f"{where}.{key}")
        else:
            _only_tree(actual[key], expected[key], sel, tol, f"{where}.{key}")


def json_match(actual: Any, expected: Any, crit: dict[str, Any] | None, what: str) -> None:
    if crit is None or crit.get("ignore"):
        return
    if crit.get("onlyTree") and crit.get("ignoreTree"):
        raise Mismatch("onlyTree and ignoreTree cannot be set at the same time")
    strategy = crit.get("matchStrategy") or "exact"
    if strategy == "skip":
        return
    if strategy != "exact":
        raise Mismatch(f"invalid match strategy {strategy}")
    tol = crit.get("numberTolerance")
    tol = DEFAULT_TOLERANCE if tol is None else float(tol)
    if crit.get("onlyTree"):
        _only_tree(actual, expected, crit["onlyTree"], tol, what)
    else:
        _ignore_tree(actual, expected, crit.get("ignoreTree"), tol, what)


# --- ROUGE ------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _rouge_scorer(
    rouge_type: str,
    stem: bool,
    split: bool,
    unicode: bool,
) -> Any:
    tokenizer = UnicodeAwareTokenizer() if unicode else None
    return rouge_loader.rouge_scorer().RougeScorer(
        [rouge_type], use_stemmer=stem, split_summaries=split, tokenizer=tokenizer
    )


def rouge_match(actual: str, expected: str, crit: dict[str, Any], notes: set[str]) -> None:
    if crit.get("ignore"):
        return
    rouge_type = crit.get("rougeType")
    if not rouge_type:
        raise Mismatch("rouge criterion requires rougeType")
    measure = crit.get("measure") or "f1"
    if measure not in ("f1", "precision", "recall"):
        raise Mismatch(f"unsupported rouge measure: {measure}")
    tokenizer = crit.get("tokenizerName")
    if tokenizer:
        notes.add(
            f"tokenizer {tokenizer!r} is trpc-agent-go's own; ci-eval used ADK's Unicode "
            "tokenizer (CJK per character), so scores on such text may differ"
        )
    try:
        scorer = _rouge_scorer(
            rouge_type,
            bool(crit.get("useStemmer")),
            bool(crit.get("splitSummaries")),
            bool(tokenizer),
        )
        score = scorer.score(expected, actual)[rouge_type]
    except ValueError as exc:
        raise Mismatch(f"rouge: {exc}") from None
    wanted = crit.get("threshold") or {}
    values = {"precision": score.precision, "recall": score.recall, "f1": score.fmeasure}
    if any(values[k] < float(wanted.get(k, 0) or 0) for k in values):
        raise Mismatch(
            f"rouge mismatch: {rouge_type} {measure}={values[measure]:.6f} "
            f"precision={score.precision:.6f} recall={score.recall:.6f} "
            f"f1={score.fmeasure:.6f}"
        )
