"""Generated (expected, actual) invocation pairs for differential tests and benchmarks: Unicode
and CJK text, nested and reordered args, int/float, None vs {}, empty lists, duplicates, and both
shapes of intermediate data."""

from __future__ import annotations

import random
from typing import Any

WORDS = [
    "the",
    "weather",
    "in",
    "Paris",
    "is",
    "sunny",
    "raining",
    "heavily",
    "London",
    "degrees",
    "22",
    "3.5",
    "don't",
    "Café",
    "naïve",
    "Straße",
    "ＡＢＣ",
    "ﬁle",
    "东京",
    "東京は晴れです",
    "서울",
    "สวัสดีครับ",
    "ກິນເຂົ້າ",
    "မင်္ဂလာပါ",
    "ខ្ញុំ",
    "Ünïcödé",
    "emoji😀",
    "—",
    "e\u0301",
    "running",
    "runs",
    "ran",
    "RUNNING",
    "it's",
    "U.S.A.",
    "λόγος",
    "Москва",
    "١٢٣",
    "x²",
    "hello-world",
    "",
    "!!!",
    "\n",
    "\t",
]
KEYS = ["city", "units", "days", "q", "filter", "id"]


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 2 else 6)
    if kind == 0:
        return rng.randrange(-3, 30)
    if kind == 1:
        return float(rng.randrange(-3, 30))  # 1 == 1.0 for ADK
    if kind == 2:
        return rng.choice(["Paris", "paris", "PARIS", "東京", "", "metric"])
    if kind == 3:
        return rng.choice([True, False, None])
    if kind == 4:
        return rng.random()
    if kind == 5:
        return rng.choice(["a", "b"])
    if kind == 6:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(KEYS): _value(rng, depth + 1) for _ in range(rng.randrange(4))}


def _args(rng: random.Random) -> dict[str, Any] | None:
    if rng.random() < 0.08:
        return None
    return {rng.choice(KEYS): _value(rng) for _ in range(rng.randrange(4))}


def _reordered(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _reordered(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_reordered(v, rng) for v in value]
    return value


def _calls(rng: random.Random) -> list[dict[str, Any]]:
    return [
        {"name": rng.choice(["A", "B", "get_weather", "Get_Weather"]), "args": _args(rng)}
        for _ in range(rng.choice([0, 0, 1, 1, 2, 3, 4]))
    ]


def _mutate_calls(calls: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    out = [{"name": c["name"], "args": _reordered(c["args"], rng)} for c in calls]
    for _ in range(rng.randrange(3)):
        op = rng.randrange(8)
        if op == 0 and out:
            out.pop(rng.randrange(len(out)))
        elif op == 1:
            extra = {"name": rng.choice(["A", "B", "get_weather"]), "args": _args(rng)}
            out.insert(rng.randrange(len(out) + 1), extra)
        elif op == 2 and len(out) > 1:
            rng.shuffle(out)
        elif op == 3 and out:
            out.append(dict(rng.choice(out)))  # a duplicate
        elif op == 4 and out:
            target = rng.choice(out)
            target["args"] = _args(rng)
        elif op == 5 and out:
            target = rng.choice(out)
            target["name"] = target["name"].lower()
        elif op == 6 and out:
            target = rng.choice(out)
            if target["args"] is None:
                target["args"] = {}
            elif target["args"] == {}:
                target["args"] = None
    return out


def _text(rng: random.Random) -> str | None:
    if rng.random() < 0.05:
        return None
    words = [rng.choice(WORDS) for _ in range(rng.randrange(12))]
    return rng.choice([" ", " ", "", ", "]).join(words)


def _mutate_text(text: str | None, rng: random.Random) -> str | None:
    if text is None or rng.random() < 0.1:
        return _text(rng)
    words = text.split(" ")
    for _ in range(rng.randrange(4)):
        op = rng.randrange(5)
        if op == 0 and words:
            words.pop(rng.randrange(len(words)))
        elif op == 1:
            words.insert(rng.randrange(len(words) + 1), rng.choice(WORDS))
        elif op == 2:
            rng.shuffle(words)
        elif op == 3 and words:
            i = rng.randrange(len(words))
            words[i] = words[i].upper()
    return " ".join(words)


def _invocation(
    calls: list[dict[str, Any]],
    text: str | None,
    rng: random.Random,
) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if text is not None:
        parts = [{"text": text}]
        if rng.random() < 0.1:  # more parts, and thoughts count as text for ADK
            parts.append({"text": _text(rng) or "x", "thought": rng.random() < 0.5})
    inv: dict[str, Any] = {"user_content": {"role": "user", "parts": [{"text": "q"}]}}
    if text is not None or rng.random() < 0.5:
        inv["final_response"] = {"role": "model", "parts": parts}
    if calls or rng.random() < 0.7:
        if rng.random() < 0.2:  # the form real runs record
            inv["intermediate_data"] = {
                "invocation_events": [
                    {
                        "author": "agent",
                        "content": {
                            "role": "model",
                            "parts": [{"function_call": c} for c in calls],
                        },
                    }
                ]
                if calls
                else []
            }
        else:
            inv["intermediate_data"] = {"tool_uses": calls}
    return inv


def pairs(seed: int, n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """n (expected, actual) invocation pairs in ADK's JSON form, reproducible from the seed."""
    rng = random.Random(seed)
    expected, actual = [], []
    for _ in range(n):
        calls, text = _calls(rng), _text(rng)
        expected.append(_invocation(calls, text, rng))
        actual.append(
            _invocation(
                _mutate_calls(calls, rng) if rng.random() < 0.85 else _calls(rng),
                _mutate_text(text, rng),
                rng,
            )
        )
    return expected, actual
