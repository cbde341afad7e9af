"""Reports, results and the baseline are written atomically and readable by the runner's later
steps: the umask decides their mode (0644 under 022), as for any ordinary file."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_eval.io.files import current_umask, write_json_atomic, write_text_atomic
from tests.conftest import SAMPLES
from tests.helpers import run_sample_agent


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def test_the_umask_is_read_without_changing_it(umask: None) -> None:
    os.umask(0o027)
    assert current_umask() == 0o027
    assert current_umask() == 0o027


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_a_new_file_gets_the_mode_the_umask_gives(
    tmp_path: Path, umask: None, mask: int, expected: int
) -> None:
    os.umask(mask)
    write_text_atomic(tmp_path / "report.xml", "<x/>")
    write_json_atomic(tmp_path / "sub" / "results.json", {"a": 1})
    assert mode(tmp_path / "report.xml") == expected
    assert mode(tmp_path / "sub" / "results.json") == expected


def test_a_replaced_file_keeps_its_mode(tmp_path: Path, umask: None) -> None:
    target = tmp_path / "baseline.json"
    target.write_text("{}")
    target.chmod(0o664)
    write_json_atomic(target, {"b": 2})
    assert mode(target) == 0o664
    assert target.read_text() == '{\n  "b": 2\n}\n'


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    target.write_text("old")
    with pytest.raises(TypeError):
        write_json_atomic(target, {"not json": object()})
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_every_report_and_the_baseline_are_readable_by_others(tmp_path: Path, umask: None) -> None:
    """The Docker action runs as root; the runner's next steps run as uid 1001 and need to
    read what it wrote."""
    proc = run_sample_agent(
        str(SAMPLES / "evals"),
        "--results",
        "out/results.json",
        "--junit",
        "out/junit.xml",
        "--summary",
        "out/summary.md",
        "--adk-results",
        "out/adk",
        "--update-baseline",
        cwd=tmp_path,
    )  # under the umask fixture's 022
    assert proc.returncode in (0, 1), proc.stderr
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    names = {p.name for p in written}
    assert {"results.json", "junit.xml", "summary.md", "baseline.json"} <= names
    assert any(p.suffix == ".json" and p.parent.name == "adk" for p in written)
    assert {p.relative_to(tmp_path).as_posix(): oct(mode(p)) for p in written} == {
        p.relative_to(tmp_path).as_posix(): oct(0o644) for p in written
    }


def test_a_report_in_pieces_is_written_whole_each_piece_redacted(tmp_path: Path) -> None:
    from ci_eval.io.files import write_parts_atomic
    from ci_eval.text import redact

    secret = "s3cr3t-value-0123456789"
    previous = redact.install(redact.Redactor([secret]))
    try:
        pieces = iter(["<a>", f"\n  <b>{secret}</b>", "\n  <c>lone \ud83d</c>", "\n</a>\n"])
        write_parts_atomic(tmp_path / "report.xml", pieces)
    finally:
        redact.install(previous)
    assert (tmp_path / "report.xml").read_text() == (
        "<a>\n  <b>***</b>\n  <c>lone \ufffd</c>\n</a>\n"
    )
