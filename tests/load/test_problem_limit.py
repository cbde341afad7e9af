"""A file with more problems than are listed says how many more it has."""

from __future__ import annotations

import json
from pathlib import Path

from ci_eval.io.validation import MAX_PROBLEMS
from tests.helpers import run_cli


def test_the_problems_not_shown_are_counted(tmp_path: Path) -> None:
    turn = {"invocation_id": 5, "user_content": {"role": "user", "parts": [{"text": "hi"}]}}
    cases = [{"eval_id": f"c{i}", "conversation": [turn]} for i in range(70)]
    (tmp_path / "big.evalset.json").write_text(
        json.dumps({"eval_set_id": "big", "eval_cases": cases}, indent=1)
    )
    done = run_cli("validate", ".", cwd=tmp_path, env={})
    assert done.returncode == 2
    lines = done.stdout.splitlines()
    assert len(lines) == MAX_PROBLEMS + 1
    assert lines[-1] == f"big.evalset.json: … and {70 - MAX_PROBLEMS} more problems"


def test_a_list_of_keys_that_stops_says_how_many_more(tmp_path: Path) -> None:
    (tmp_path / "eval_set_other.json").write_text(json.dumps({k: 1 for k in "abcdefgh"}))
    done = run_cli("validate", ".", "-v", cwd=tmp_path, env={})
    assert "(an object with keys: a, b, c, d, e, f, … and 2 more)" in done.stdout + done.stderr
