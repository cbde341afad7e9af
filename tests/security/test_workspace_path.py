"""Which import path entries are the workspace's: ci-eval's process takes those off its own
path; the interpreter's installation is never one, even in a venv inside the repository."""

from __future__ import annotations

import sys
from pathlib import Path

from ci_eval.worker.workspace import in_workspace, scrub_sys_path


def test_a_folder_of_the_repository_is_the_workspace_s(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    assert in_workspace(tmp_path / "pkg", [tmp_path])
    assert in_workspace("", [Path.cwd()])  # '' is the working directory


def test_the_interpreter_s_own_site_packages_is_not_even_inside_the_repository() -> None:
    site = next(p for p in sys.path if p.endswith("site-packages"))
    assert not in_workspace(site, [Path(sys.prefix).parent, Path(site)])


def test_scrubbing_removes_the_workspace_and_keeps_the_rest(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sys, "path", [str(tmp_path), "", "/usr/lib/python3", *sys.path])
    monkeypatch.chdir(tmp_path)
    removed = scrub_sys_path([tmp_path])
    assert removed == [str(tmp_path), ""]
    assert "/usr/lib/python3" in sys.path
