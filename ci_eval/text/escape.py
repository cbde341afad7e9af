"""Escaping agent text for the context it lands in: Markdown inline, an HTML block, a code fence.

A leaf module (markupsafe and ``inert`` only) so that ``redact`` can compute how a secret looks
once escaped without importing the Markdown reporter (and jinja2) — or importing it back."""

from __future__ import annotations

import html as html_lib
import re
from typing import Any

from markupsafe import Markup

from ci_eval.text.inert import ZWSP, inert, inert_line

# Markdown inline: what could start syntax. `_` only when it can open or close emphasis
# (GFM never does that inside a word), so identifiers like weather_basic stay clean.
_MD_ESCAPE = re.compile(r"([\\`*\[\]|~$])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_BLOCK_START = re.compile(r"^(\s*)([#>+=-]|\d+(?=[.)](?:\s|$)))")


# what GitHub turns into a link or a notification: #12, owner/repo#12, GH-12 (and @name), and
# URLs (an issue's URL is a cross-reference on that issue): https://…, www.…
_REFERENCE = re.compile(r"(#|\bGH-)(?=\d)|(:/)(?=/)|\b(www)(?=\.)", re.IGNORECASE)


def _no_mentions(text: str) -> str:
    """No @-mention pings anyone, no #12 or issue URL links an issue, no URL is a link: a
    zero-width space after ``@``, ``#``, ``GH-``, ``:/`` and ``www``."""
    return _REFERENCE.sub(lambda m: m.group(0) + ZWSP, text.replace("@", "@" + ZWSP))


def md(text: Any) -> Markup:
    """Text for Markdown inline context (table cells, headings, list items): one line."""
    value = inert_line(text)
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    value = _MD_ESCAPE.sub(lambda m: "\\" + m.group(0), value)
    value = _BLOCK_START.sub(r"\1\\\2", value)
    return Markup(_no_mentions(value))


def html(text: Any) -> Markup:
    """Text inside an HTML block (``<summary>``): HTML escaping only, on one line."""
    return Markup(_no_mentions(html_lib.escape(inert_line(text), quote=True)))


def code(text: Any) -> Markup:
    """A fenced block: nothing inside is Markdown or HTML."""
    value = _no_mentions(inert(text))
    longest = max((len(m) for m in re.findall(r"`+", value)), default=0)
    fence = "`" * max(3, longest + 1)
    return Markup(f"{fence}text\n{value}\n{fence}")
