"""Agent text in the Markdown channels links nothing and reads as it is: #12, owner/repo#12,
GH-12 and an issue's URL do not link an issue, no URL is a link, @name pings nobody, and
bidirectional controls (Trojan Source) are gone from every inert channel."""

from __future__ import annotations

import re

from ci_eval.report.markdown import render_comment, render_summary
from ci_eval.text.escape import code, html, md
from ci_eval.text.inert import inert_line
from tests.factories import results

LINKS = re.compile(r"(?<![\w\u200b])#\d|GH-\d|@\w|://|\bwww\.", re.IGNORECASE)
BIDI = "\u202e\u2066\u200f\u061c"


def test_issue_references_and_mentions_are_broken_in_every_markdown_context() -> None:
    text = "fixes #12, see acme/shop#3 and GH-4, cc @team"
    for escaped in (md(text), html(text), code(text)):
        assert not LINKS.search(str(escaped)), escaped


def test_urls_are_no_links_and_no_cross_references_in_any_markdown_context() -> None:
    text = "see https://github.com/o/r/issues/4 and www.github.com/o/r/pull/5"
    for escaped in (md(text), html(text), code(text)):
        assert not LINKS.search(str(escaped)), escaped
        assert "github.com/o/r/issues/4" in str(escaped)  # still reads as it was


def test_bidirectional_controls_are_stripped_from_inert_text() -> None:
    assert inert_line(f"ab{BIDI}c") == "abc"


def test_a_case_id_with_references_renders_inert_in_the_summary_and_the_comment() -> None:
    run = results({f"case #1 GH-2 @team https://github.com/o/r/issues/4 {BIDI}": "FAILED"})
    for text in (render_summary(run), render_comment(run, "id")):
        assert not LINKS.search(text), text
        assert not any(c in text for c in BIDI)
