"""The README is a path, not the whole reference: at most 40 KB, a table of contents that
links every section, and every link between the README, docs/ and CONTRIBUTING.md lands on a
file that exists and, with a #fragment, on a heading it has (GitHub's anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO

README = REPO / "README.md"
DOCUMENTS = [README, REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """``text`` without its fenced blocks (a ``#`` there is no heading, a link no link)."""
    return FENCE.sub("", text)


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of ``text``: lower case, punctuation but ``-`` and
    ``_`` dropped, spaces to ``-``; a repeated one gets ``-1``, ``-2``…"""
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", _prose(text), re.MULTILINE):
        plain = re.sub(r"[`*]|<[^>]+>", "", heading)
        plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", plain)
        slug = re.sub(r"[^\w\- ]", "", plain.strip().lower()).replace(" ", "-")
        anchor, n = slug, 0
        while anchor in found:
            n += 1
            anchor = f"{slug}-{n}"
        found.add(anchor)
    return found


def test_the_readme_is_at_most_40_kb() -> None:
    assert len(README.read_bytes()) <= 40_000


def test_the_readme_has_a_table_of_contents_of_its_sections() -> None:
    text = _prose(README.read_text("utf-8"))
    contents = text.split("## Contents\n", 1)[1].split("\n## ", 1)[0]
    linked = set(re.findall(r"\]\(#([^)]+)\)", contents))
    sections = anchors(text)
    top = anchors("\n".join(re.findall(r"^## .+$", text, re.MULTILINE)))
    assert top - {"contents"} <= linked, sorted(top - linked)
    assert linked <= sections


def test_the_first_screen_shows_the_comment_the_workflow_and_the_commands() -> None:
    head = README.read_text("utf-8").split("\n## ", 1)[0]
    assert "](docs/comment.png)" in head
    assert "<!-- output: workflow-evals -->" in head
    assert ".venv/bin/ci-eval run" in head and "python -m pytest -q" in head
    # .ci/run runs the README's test command, word for word
    ci_run = (REPO / ".ci" / "run").read_text("utf-8").strip().splitlines()[-1]
    assert ci_run in head


def test_the_readme_commands_each_make_a_venv_of_their_own() -> None:
    """The test command does not reuse (and fill with test packages) the quick start's venv."""
    head = README.read_text("utf-8").split("\n## ", 1)[0]
    commands = [line for line in head.splitlines() if line.startswith("python3 -m venv ")]
    venvs = [line.split()[3] for line in commands]
    assert len(venvs) == 2 and len(set(venvs)) == 2, venvs
    for line, venv in zip(commands, venvs, strict=True):
        used = set(re.findall(r"(\.venv[\w-]*)/", line))
        assert used == {venv}, line


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_lands(doc: Path) -> None:
    for target in LINK.findall(_prose(doc.read_text("utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, fragment = target.partition("#")
        where = (doc.parent / path).resolve() if path else doc
        assert where.exists(), f"{doc.name}: {target}: no such file"
        if fragment and where.suffix == ".md":
            assert fragment in anchors(where.read_text("utf-8")), f"{doc.name}: {target}"
