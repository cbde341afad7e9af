"""trpc-agent-go's criteria for one value against another (evaluation/metric/criterion): text
(exact / contains / regex, case-insensitive), JSON (numbers within a tolerance, ignore and only
trees, ``valid``, ``schema``), XML (well-formedness) and ROUGE. Each returns, or raises
``Mismatch`` naming the field that differs and both sides (``arguments.city differs: expected
"SH", got "BJ"``) where trpc's reason names less; what matches is trpc's rule for rule.

JSON (``criterion/json/json.go``) and XML (``criterion/xml/xml.go``) live in
:mod:`ci_eval.metrics.trpc_json` and :mod:`ci_eval.metrics.trpc_xml`; the names trpc-agent-go's
metric registry resolves (``compareName``) in :mod:`ci_eval.model.trpc_registry`."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import re2

from ci_eval.metrics import rouge_loader
from ci_eval.metrics.rouge import UnicodeAwareTokenizer
from ci_eval.metrics.trpc_json import (
    JSONProblem,
    compile_schema,
    exact_numbers,
    parse_for_schema,
    parse_value,
    plain,
    schema_violation,
)

DEFAULT_TOLERANCE = 1e-6


VALUE_LIMIT = 80  # characters of one side of a difference in a reason


class Mismatch(Exception):
    """Why a trpc criterion did not match: the field, what was expected and what came."""


def shown(value: Any) -> str:
    """A value as a reason shows it: JSON, cut at ``VALUE_LIMIT``; None is "nothing"."""
    if value is None:
        return "nothing"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= VALUE_LIMIT else text[: VALUE_LIMIT - 1] + "…"


def differs(where: str, actual: Any, expected: Any, how: str = "") -> Mismatch:
    """``where differs: expected E, got A`` (and how they were compared, when it says more)."""
    tail = f" ({how})" if how else ""
    return Mismatch(f"{where} differs: expected {shown(expected)}, got {shown(actual)}{tail}")


# --- text --------------------------------------------------------------------------------


_TEXT_RULE = {
    "exact": "exact match",
    "contains": "must contain the expected text",
    "regex": "must match the expected RE2 pattern",
}


def text_match(actual: str, expected: str, crit: dict[str, Any] | None, what: str = "text") -> None:
    """``what`` names the field in the reason: ``name``, ``final response text``."""
    if crit is None or crit.get("ignore"):
        return
    length = crit.get("length")
    if length and not length.get("ignore"):
        low, high = length.get("min"), length.get("max")
        if low is None and high is None:
            raise Mismatch(f"{what}: the length criterion must configure min or max")
        if low is not None and len(actual) < low:
            raise Mismatch(
                f"{what} is too short: {len(actual)} characters, min {low} (got {shown(actual)})"
            )
        if high is not None and len(actual) > high:
            raise Mismatch(
                f"{what} is too long: {len(actual)} characters, max {high} (got {shown(actual)})"
            )
    strategy = crit.get("matchStrategy") or "exact"
    if strategy == "skip":
        return
    folded = bool(crit.get("caseInsensitive"))
    shown_actual, shown_expected = actual, expected
    if folded:
        actual, expected = actual.lower(), expected.lower()
    if strategy == "exact":
        ok = actual == expected
    elif strategy == "contains":
        ok = expected in actual
    elif strategy == "regex":
        try:  # Go's regexp is RE2: the same syntax, the same meaning, linear time
            ok = re2.search(expected, actual) is not None
        except re2.error as exc:
            raise Mismatch(f"{what}: invalid regex {expected}: {exc}") from None
    else:
        raise Mismatch(f"{what}: invalid match strategy {strategy}")
    if not ok:
        how = _TEXT_RULE[strategy] + (", case-insensitive" if folded else "")
        raise differs(what, shown_actual, shown_expected, how)


# --- JSON --------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    return float(value) if isinstance(value, int | float) else None


def _exact(actual: Any, expected: Any, tol: float, where: str) -> None:
    if actual is None and expected is None:
        return
    if actual is None or expected is None:
        raise differs(where, actual, expected)
    if isinstance(actual, dict) or isinstance(expected, dict):
        if not (isinstance(actual, dict) and isinstance(expected, dict)):
            raise differs(where, actual, expected, "one is an object, the other is not")
        _object(actual, expected, None, tol, where, ignore=False)
        return
    if isinstance(actual, list) or isinstance(expected, list):
        if not (isinstance(actual, list) and isinstance(expected, list)):
            raise differs(where, actual, expected, "one is an array, the other is not")
        if len(actual) != len(expected):
            raise differs(
                where, actual, expected, f"{len(expected)} items expected, {len(actual)} came"
            )
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _exact(a, e, tol, f"{where}[{i}]")
        return
    a_num, e_num = _number(actual), _number(expected)
    if a_num is not None and e_num is not None:
        if not abs(a_num - e_num) <= tol:
            # the tolerance said where one was configured: trpc's default says nothing new
            raise differs(
                where, actual, expected, "" if tol == DEFAULT_TOLERANCE else f"tolerance {tol:g}"
            )
        return
    if type(actual) is not type(expected) or actual != expected:
        raise differs(where, actual, expected)


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
            raise Mismatch(f"{where}.{key} differs: expected no such key, got {shown(actual[key])}")
    for key in expected:
        if not (ignore and _ignored(tree, key)) and key not in actual:
            raise Mismatch(
                f"{where}.{key} differs: expected {shown(expected[key])}, got no such key"
            )
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
        raise differs(where, actual, expected)
    if isinstance(actual, dict) != isinstance(expected, dict):
        raise differs(where, actual, expected, "one is an object, the other is not")
    if isinstance(actual, dict):
        _object(actual, expected, tree, tol, where)
    else:
        _exact(actual, expected, tol, where)


def _only_tree(actual: Any, expected: Any, tree: dict[str, Any], tol: float, where: str) -> None:
    if actual is None and expected is None:
        return
    if actual is None or expected is None:
        raise differs(where, actual, expected)
    if not isinstance(actual, dict) or not isinstance(expected, dict):
        if isinstance(actual, dict) or isinstance(expected, dict):
            raise differs(where, actual, expected, "one is an object, the other is not")
        _exact(actual, expected, tol, where)
        return
    for key, sel in tree.items():
        if sel is False:
            continue
        if not isinstance(sel, bool | dict):
            raise Mismatch(f"{where}: onlyTree[{key}] must be a bool or an object")
        if key not in actual:
            raise Mismatch(
                f"{where}.{key} differs: expected {shown(expected.get(key))}, got no such key "
                "(onlyTree names it)"
            )
        if key not in expected:
            raise Mismatch(
                f"{where}.{key} differs: expected no such key, got {shown(actual[key])} "
                "(onlyTree names it)"
            )
        if sel is True:
            _exact(actual[key], expected[key], tol, f"{where}.{key}")
        else:
            _only_tree(actual[key], expected[key], sel, tol, f"{where}.{key}")


def _at(where: str, path: list[Any]) -> str:
    return where + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)


def _parsed(text: Any, parse: Any, which: str, what: str) -> Any:
    try:
        return parse(text)
    except JSONProblem as exc:
        raise Mismatch(f"{what}: {which} is not JSON ({exc})") from None


def _schema_holds(crit: dict[str, Any], actual: Any, checked: Any, raw: Any, what: str) -> None:
    """validateJSONSchema: the schema compiled first, then the actual as ``valid`` read it, or
    else read now (a raw text with exact numbers, as jsonschema.UnmarshalJSON reads it)."""
    try:
        validator = compile_schema(crit["schema"])
    except JSONProblem as exc:
        raise Mismatch(f"{what}: {exc}") from None
    if checked is None:
        checked = _for_schema(actual, raw, what)
    try:
        broken = schema_violation(validator, checked[0])
    except JSONProblem as exc:
        raise Mismatch(f"{what}: {exc}") from None
    if broken is not None:
        path, how, got = broken
        raise Mismatch(
            f"{_at(what, path)} does not match the criterion's schema: {how} "
            f"(got {shown(plain(got))})"
        )


def _for_schema(actual: Any, raw: tuple[str, str] | None, what: str) -> tuple[Any]:
    """The actual as the schema sees it: raw text read with exact numbers (rawJSONValue), a
    decoded value as Go re-reads it after json.Marshal (always valid)."""
    if raw is None:
        return (exact_numbers(actual),)
    return (_parsed(actual, parse_for_schema, raw[0], what),)


def json_match(
    actual: Any,
    expected: Any,
    crit: dict[str, Any] | None,
    what: str,
    raw: tuple[str, str] | None = None,
) -> None:
    """``JSONCriterion.Match`` (criterion/json/json.go), step for step: ``valid``, then
    ``schema``, then ``matchStrategy`` (``skip`` returns before the expected side is read).
    ``what`` names the field in the reason (``arguments``, ``result``), its keys after it.

    ``raw`` names the two sides when they are JSON text (a final response: json.RawMessage in
    trpc-agent-go), parsed as json.go parses them; without it they are decoded values (a tool's
    arguments and result), for which ``valid`` always holds."""
    if crit is None or crit.get("ignore"):
        return
    if crit.get("onlyTree") and crit.get("ignoreTree"):
        raise Mismatch(f"{what}: onlyTree and ignoreTree cannot be set at the same time")
    checked = _for_schema(actual, raw, what) if crit.get("valid") else None
    if "schema" in crit:  # len(j.Schema) > 0: a JSON null is a schema that does not compile
        _schema_holds(crit, actual, checked, raw, what)
    strategy = crit.get("matchStrategy") or "exact"
    if strategy == "skip":
        return
    if raw is not None:  # normalizeInputs: the actual, then the expected
        actual = _parsed(actual, parse_value, raw[0], what)
        expected = _parsed(expected, parse_value, raw[1], what)
    if strategy != "exact":
        raise Mismatch(f"{what}: invalid match strategy {strategy}")
    tol = crit.get("numberTolerance")
    tol = DEFAULT_TOLERANCE if tol is None else float(tol)
    if crit.get("onlyTree"):
        _only_tree(actual, expected, crit["onlyTree"], tol, what)
    else:
        _ignore_tree(actual, expected, crit.get("ignoreTree"), tol, what)


# --- XML ---------------------------------------------------------------------------------


def xml_match(actual: str, crit: dict[str, Any], what: str) -> None:
    """``XMLCriterion.Match`` (criterion/xml/xml.go): ``matchStrategy`` must be ``skip`` (the
    only one it has, and no default), then ``valid`` checks the actual alone."""
    if crit.get("ignore"):
        return
    strategy = crit.get("matchStrategy") or ""
    if not strategy:
        raise Mismatch(f'{what}: xml match strategy is empty (trpc-agent-go has only "skip")')
    if strategy != "skip":
        raise Mismatch(f"{what}: invalid match strategy {strategy}")
    if crit.get("valid"):
        # expat loads with the first XML criterion: most runs have none
        from ci_eval.metrics.trpc_xml import xml_problem

        problem = xml_problem(actual)
        if problem is not None:
            raise Mismatch(
                f"{what}: the agent's final response is not well-formed XML ({problem}; "
                f"got {shown(actual)})"
            )


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


def rouge_match(
    actual: str, expected: str, crit: dict[str, Any], notes: set[str], what: str
) -> None:
    """``what`` names the field in the reason: ``final response rouge``."""
    if crit.get("ignore"):
        return
    rouge_type = crit.get("rougeType")
    if not rouge_type:
        raise Mismatch(f"{what}: the rouge criterion requires rougeType")
    measure = crit.get("measure") or "f1"
    if measure not in ("f1", "precision", "recall"):
        raise Mismatch(f"{what}: unsupported rouge measure: {measure}")
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
        raise Mismatch(f"{what}: {exc}") from None
    wanted = crit.get("threshold") or {}
    values = {"precision": score.precision, "recall": score.recall, "f1": score.fmeasure}
    short = [
        f"{k} {values[k]:.3f} < {float(wanted[k]):g}"
        for k in values
        if values[k] < float(wanted.get(k, 0) or 0)
    ]
    if short:
        raise Mismatch(
            f"{what} ({rouge_type}) below its threshold: {', '.join(short)} "
            f"(precision {score.precision:.3f}, recall {score.recall:.3f}, "
            f"f1 {score.fmeasure:.3f}; got {shown(actual)})"
        )
