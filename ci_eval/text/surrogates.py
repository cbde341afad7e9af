"""Text that can always be written: lone surrogates out.

JSON allows ``"\\ud83d"`` on its own (JavaScript's ``JSON.stringify`` emits it for a string cut in
the middle of an emoji), and Python decodes it to a ``str`` holding a lone surrogate, which no
UTF-8 writer accepts. Every JSON input boundary (agent replies, eval-set files, results files)
replaces them with U+FFFD, and every writer passes its text through :func:`scrub` as a last line
of defence, so one reply can never lose a run's reports.
"""

from __future__ import annotations

import json
import re
from typing import Any

REPLACEMENT = "\ufffd"
# after JSON decoding, a valid pair is one code point, so any surrogate left is a lone one
_SURROGATE = re.compile("[\ud800-\udfff]")
# a JSON text can only decode to a lone surrogate through a \uD800-\uDFFF escape
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def has_surrogates(text: str) -> bool:
    # ASCII holds none: a check in C instead of a regex pass over a file's text; else UTF-8
    # refuses exactly the surrogates, again in C rather than by a regex pass
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def has_surrogate_escapes(text: str) -> bool:
    """Whether decoding this JSON text may produce a lone surrogate (a cheap pre-check)."""
    return _SURROGATE_ESCAPE.search(text) is not None or has_surrogates(text)


def scrub(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (the same object if there is none)."""
    return _SURROGATE.sub(REPLACEMENT, text) if has_surrogates(text) else text


def scrub_json(value: Any) -> Any:
    """A decoded JSON value with lone surrogates replaced in every string, keys included."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [scrub_json(v) for v in value]
    if isinstance(value, dict):
        return {scrub(k) if isinstance(k, str) else k: scrub_json(v) for k, v in value.items()}
    return value


def loads(text: str) -> Any:
    """``json.loads`` whose strings hold no lone surrogate (raises what json.loads raises)."""
    data = json.loads(text)
    return scrub_json(data) if has_surrogate_escapes(text) else data
