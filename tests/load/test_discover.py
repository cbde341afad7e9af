"""Discovery: default patterns, folders never entered, include/exclude, stable order."""

from __future__ import annotations

from pathlib import Path

from ci_eval.load.discover import discover


def _touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")


def test_default_patterns_and_skipped_folders(tmp_path: Path) -> None:
    _touch(
        tmp_path,
        "b/x.evalset.json",
        "a/y.test.json",
        "eval_set.json",
        "notes.json",
        ".git/z.evalset.json",
        "node_modules/p/q.evalset.json",
        ".venv/r.evalset.json",
        "agent/.adk/eval_history/app_s_1.evalset.json",
        "env/pyvenv.cfg",
        "env/lib/t.evalset.json",
    )
    found = [c.path.relative_to(tmp_path).as_posix() for c in discover([tmp_path])]
    assert found == ["a/y.test.json", "b/x.evalset.json", "eval_set.json"]


def test_include_and_exclude(tmp_path: Path) -> None:
    _touch(tmp_path, "evals/a.json", "evals/legacy/b.json", "other/c.json")
    found = discover([tmp_path], include=["evals/**/*.json"], exclude=["evals/legacy/*"])
    assert [c.path.name for c in found] == ["a.json"]
    assert all(not c.claimed for c in found)


def test_explicit_files_are_always_taken(tmp_path: Path) -> None:
    _touch(tmp_path, "dataset.json")
    [candidate] = discover([tmp_path / "dataset.json"])
    assert candidate.explicit and candidate.claimed
