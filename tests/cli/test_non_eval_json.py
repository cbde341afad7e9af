"""JSON that is no eval set of any dialect, found where ci-eval looks (another tool's dataset in
``tests/eval/``, JSON lines saved as ``.json``, a file named like agentevals' sets), is skipped
and named in one line of the run; a file that is recognisably an eval set of some dialect, or
named ``*.evalset.json`` / ``*.test.json``, and fails is still an input error naming the file
and the JSON path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLES
from tests.helpers import run_cli, run_sample_agent

NOT_SETS = {
    # another tool's dataset of records
    "tests/eval/dataset.json": [{"input": "What is up?", "expected": "Not much."}],
    # JSON lines saved as .json: not JSON ci-eval reads, and no key of any format
    "tests/eval/chats.json": '{"input": "hi"}\n{"input": "bye"}\n',
    # agentevals' name prefix on a file that is not a set
    "tests/eval/eval_set_results.json": {"score": 0.9, "passed": True},
}


def _write(root: Path, files: dict[str, Any]) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data if isinstance(data, str) else json.dumps(data))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The agent-starter-pack's layout: a set in tests/eval/evalsets/, other JSON beside it."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    sets = root / "tests/eval/evalsets"
    sets.mkdir(parents=True)
    shutil.copy(SAMPLES / "evals/weather_basic.evalset.json", sets / "basic.evalset.json")
    _write(root, NOT_SETS)
    return root


def test_run_skips_json_that_is_no_eval_set_and_names_it_once(repo: Path) -> None:
    done = run_sample_agent(cwd=repo)
    assert done.returncode == 1, done.stderr  # berlin fails on purpose: the run went through
    [line] = [x for x in done.stderr.splitlines() if "not eval sets of any dialect" in x]
    assert line == (
        "ci-eval: skipped 3 JSON files that are not eval sets of any dialect: "
        "tests/eval/chats.json, tests/eval/dataset.json, tests/eval/eval_set_results.json "
        "(`ci-eval validate -v` says why; a file named in [run] paths or on the command line "
        "is read as an eval set)"
    )
    assert "3 cases: 2 passed, 1 failed" in done.stdout


def test_validate_counts_them_as_skipped_and_says_why_with_v(repo: Path) -> None:
    done = run_cli("validate", "-v", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tests/eval/dataset.json: skipped: not an eval set (unrecognised JSON" in done.stdout
    assert (
        "tests/eval/chats.json: skipped: not an eval set (not valid JSON: Extra data; it has "
        "no key any eval-set format uses)"
    ) in done.stdout
    assert "1 eval set (3 cases), 0 sidecars, 3 skipped, 0 invalid" in done.stderr


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        # ADK's keys, a case that is not one
        (
            "tests/eval/broken.json",
            {"eval_set_id": "b", "eval_cases": [{"conversation": []}]},
            "tests/eval/broken.json:1:37: $.eval_cases[0].eval_id: required field 'eval_id' "
            "is missing",
        ),
        # Orchestrate's keys, without the agent
        (
            "tests/eval/story.json",
            {"story": "s", "goals": {}, "goal_details": []},
            "tests/eval/story.json:1:1: $.agent: required field 'agent' is missing",
        ),
        # ADK's key, but not JSON
        (
            "tests/eval/cut.json",
            '{"eval_set_id": "c", "eval_cases": [',
            "tests/eval/cut.json:1:37: not valid JSON: Expecting value",
        ),
        # an eval-set name on a file that is no set
        (
            "tests/eval/named.evalset.json",
            [{"input": "hi"}],
            "tests/eval/named.evalset.json: $: not an eval set (unrecognised JSON",
        ),
    ],
)
def test_a_broken_eval_set_is_still_an_input_error(
    repo: Path, name: str, data: Any, says: str
) -> None:
    _write(repo, {name: data})
    for command in ("validate", "run"):
        done = run_sample_agent(cwd=repo) if command == "run" else run_cli(command, cwd=repo)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert says in done.stdout + done.stderr, (command, done.stdout, done.stderr)


def test_a_file_named_on_the_command_line_is_read_as_an_eval_set(repo: Path) -> None:
    done = run_cli("validate", "tests/eval/dataset.json", cwd=repo)
    assert done.returncode == 2
    assert done.stdout.startswith("tests/eval/dataset.json: $: not an eval set")
