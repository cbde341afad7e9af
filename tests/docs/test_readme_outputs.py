"""The output blocks of README.md and docs/ are what ci-eval prints: ``docs/outputs.py`` reruns
each documented command (``python -m docs.outputs`` writes the blocks, ``--check`` compares
them)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from docs import outputs
from tests.conftest import REPO

Snapshot = tuple[set[str], set[tuple[str, int, int]]]

# what tools write at the top of the repository while tests run
TOOL_CACHES = re.compile(r"^\.(hypothesis|pytest_cache|ruff_cache|coverage.*)$|^__pycache__$")


def _repository() -> Snapshot:
    """The names at the top of the repository, and every file of samples/ (bytecode aside)."""
    top = {p.name for p in REPO.iterdir() if not TOOL_CACHES.match(p.name)}
    samples = {
        (p.relative_to(REPO).as_posix(), p.stat().st_mtime_ns, p.stat().st_size)
        for p in (REPO / "samples").rglob("*")
        if "__pycache__" not in p.parts
    }
    return top, samples


@dataclass(frozen=True)
class Runs:
    produced: dict[str, str]  # every block's text, from its run
    before: Snapshot  # the repository before the runs
    after: Snapshot  # ... and after


@pytest.fixture(scope="module")
def runs() -> Runs:
    """Every producer run once."""
    before = _repository()
    produced = outputs.produce()
    return Runs(produced, before, _repository())


@pytest.fixture
def produced(runs: Runs) -> dict[str, str]:
    return runs.produced


@pytest.fixture
def synced(produced: dict[str, str]) -> str:
    """README.md's text with every block as the runs printed it (the file is not touched)."""
    return outputs.render(outputs.README.read_text("utf-8"), produced)


def _block(text: str, name: str) -> str:
    [block] = [b for b in outputs.blocks(text) if b.name == name]
    return block.body


def test_every_output_block_matches_a_real_run(produced: dict[str, str]) -> None:
    drift = outputs.check(outputs.README.read_text("utf-8"), produced)
    assert not drift, f"README.md's output blocks drifted; run `python -m docs.outputs`:\n{drift}"


def _documents() -> dict[str, str]:
    return {outputs._doc_name(p): p.read_text("utf-8") for p in outputs.documents()}


def test_every_marked_block_has_a_producer_and_every_producer_a_block() -> None:
    """Over README.md and docs/: each block is marked once, in one document."""
    marked = [b.name for doc, text in _documents().items() for b in outputs.blocks(text, doc)]
    assert sorted(marked) == sorted(outputs.PRODUCERS)
    assert sorted(outputs.marked(_documents())) == sorted(outputs.PRODUCERS)


def test_every_output_block_of_the_docs_matches_a_real_run(produced: dict[str, str]) -> None:
    """The blocks moved out of the README into docs/ are checked as the README's are."""
    drift = [outputs.check(text, produced, doc) for doc, text in _documents().items()]
    assert not any(drift), "\n".join(drift)


def test_a_block_marked_in_two_documents_is_an_error() -> None:
    text = _one_block("old")
    with pytest.raises(outputs.MarkerError, match=r"block x is marked in a\.md and in b\.md"):
        outputs.marked({"a.md": text, "b.md": text})


def test_a_drifted_block_of_a_page_of_docs_names_that_page() -> None:
    drift = outputs.check(_one_block("old"), {"x": "new"}, "docs/gate.md")
    assert drift.splitlines()[0] == "--- docs/gate.md  block x"


def test_an_edited_block_is_reported_with_a_diff(synced: str, produced: dict[str, str]) -> None:
    edited = outputs.render(
        synced, {**produced, "quickstart": produced["quickstart"] + "\nan edited line"}
    )
    drift = outputs.check(edited, produced)
    assert drift.splitlines()[:2] == [
        "--- README.md  block quickstart",
        "+++ a real run  block quickstart",
    ]
    assert "\n-an edited line" in drift
    assert "block quickstart-summary" not in drift  # only the block that drifted


def _one_block(body: str) -> str:
    return f"<!-- output: x -->\n```text\n{body}\n```\n<!-- /output -->\n"


RUN = (
    "6 cases: 4 passed, 1 failed, 0 errors, 1 skipped in {seconds} s (command agent `x`)\n"
    "baseline b.json (d1b0bf35cae3, {stamp}): 1 regression\n"
    "<sub>ci-eval {version} · command agent `x` · 1 run per case · {seconds} s · {stamp}</sub>"
)
README_RUN = RUN.format(seconds="0.4", stamp="2026-11-22T22:31:14+00:00", version="0.1.0")
LATER_RUN = RUN.format(seconds="12.5", stamp="2027-01-02T03:04:05Z", version="0.2.0.dev3+g1a2b")


def test_durations_timestamps_and_the_version_do_not_count() -> None:
    assert outputs.check(_one_block(README_RUN), {"x": LATER_RUN}) == ""


def test_other_digits_count() -> None:
    drift = outputs.check(_one_block(README_RUN), {"x": README_RUN.replace("4 passed", "5 passed")})
    assert "-6 cases: 4 passed" in drift and "+6 cases: 5 passed" in drift


def test_regenerating_keeps_the_text_of_a_block_that_matches() -> None:
    """A rerun does not rewrite a block only for its new duration and timestamp."""
    text = _one_block(README_RUN)
    assert outputs.render(text, {"x": LATER_RUN}) == text


def test_regenerating_restores_a_drifted_block(synced: str, produced: dict[str, str]) -> None:
    edited = synced.replace(_block(synced, "quickstart"), "stale output", 1)
    assert outputs.check(edited, produced)
    regenerated = outputs.render(edited, produced)
    assert _block(regenerated, "quickstart") == produced["quickstart"]
    assert outputs.check(regenerated, produced) == ""


def test_only_the_fenced_block_between_the_markers_is_replaced() -> None:
    text = f"before\n{_one_block('old')}after\n"
    assert outputs.render(text, {"x": "new\nlines"}) == text.replace("old", "new\nlines")


def test_the_fence_outgrows_a_fence_in_the_output() -> None:
    text = "<!-- output: x -->\n```markdown\nold\n```\n<!-- /output -->\n"
    new = outputs.render(text, {"x": "# title\n```text\nquoted\n```"})
    assert new == "<!-- output: x -->\n````markdown\n# title\n```text\nquoted\n```\n````\n" + (
        "<!-- /output -->\n"
    )
    assert outputs.check(new, {"x": "# title\n```text\nquoted\n```"}) == ""


def test_a_marker_without_its_end_is_an_error() -> None:
    text = "intro\n<!-- output: x -->\n```text\nold\n```\nno end marker\n"
    with pytest.raises(outputs.MarkerError, match=r"README\.md line 2: an output marker"):
        outputs.blocks(text)


def test_the_runs_leave_the_repository_as_it_was(runs: Runs) -> None:
    assert runs.after == runs.before


def test_the_check_command_exits_1_and_prints_the_diff(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(_one_block("old"), "utf-8")
    monkeypatch.setattr(outputs, "README", readme)
    monkeypatch.setattr(outputs, "documents", lambda: [readme])
    monkeypatch.setattr(outputs, "PRODUCERS", {"x": lambda: {"x": "new"}})
    monkeypatch.setattr(outputs, "produce", lambda: {"x": "new"})
    assert outputs.main(["--check"]) == 1
    out = capsys.readouterr().out
    assert "-old\n+new\n" in out
    assert readme.read_text("utf-8").count("old") == 1  # --check changes nothing
