"""Two eval sets of one id in two files are refused in one line naming both files: ci-eval knows
a set by its id in the reports, in a replay's recordings and in main's history, so they would be
scored from each other's recordings and judged by each other's history (trpc-agent-go's examples
have two ``math-basic`` sets). Sets whose id is their file's path cannot collide."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import SAMPLES
from tests.helpers import run_cli, run_sample_agent

WEATHER = SAMPLES / "evals/weather_basic.evalset.json"
REFUSED = (
    "b/w2.evalset.json: $.eval_set_id: eval set id 'weather_basic' is also the id of "
    "a/weather_basic.evalset.json: ci-eval tells eval sets apart by their id (reports, replays, "
    "main's history), so one would be scored or judged as the other; give this set an id of "
    "its own"
)


def _two(root: Path, second_id: str | None = None) -> None:
    (root / ".git").mkdir()
    for folder, name in (("a", "weather_basic.evalset.json"), ("b", "w2.evalset.json")):
        (root / folder).mkdir()
        data = json.loads(WEATHER.read_text())
        if folder == "b" and second_id:
            data["eval_set_id"] = second_id
        (root / folder / name).write_text(json.dumps(data))


def test_a_second_file_with_the_same_set_id_is_refused_by_validate(tmp_path: Path) -> None:
    _two(tmp_path)
    done = run_cli("validate", ".", cwd=tmp_path)
    assert done.returncode == 2
    assert REFUSED in done.stdout + done.stderr


def test_a_run_refuses_it_before_the_agent_is_called(tmp_path: Path) -> None:
    _two(tmp_path)
    done = run_cli(
        "run", ".", "--agent", "command", "--agent-command", "no-such-agent", cwd=tmp_path
    )
    assert done.returncode == 2
    assert done.stderr.strip() == REFUSED  # one line, as every other file error


def test_sets_with_ids_of_their_own_both_run(tmp_path: Path) -> None:
    _two(tmp_path, second_id="weather_copy")
    done = run_sample_agent(".", "--results", "r.json", cwd=tmp_path)
    assert done.returncode == 1  # each set's case meant to fail
    sets = json.loads((tmp_path / "r.json").read_text())["sets"]
    assert sorted((s["eval_set_id"], s["file"]) for s in sets) == [
        ("weather_basic", "a/weather_basic.evalset.json"),
        ("weather_copy", "b/w2.evalset.json"),
    ]


def test_legacy_files_of_one_name_in_two_folders_are_two_sets(tmp_path: Path) -> None:
    """ADK's legacy ``*.test.json`` name their set by their path, so two agents' folders may
    both hold a ``simple.test.json``."""
    (tmp_path / ".git").mkdir()
    turn = [{"query": "What is the weather in Paris?", "expected_tool_use": [],
             "reference": "It is sunny in Paris."}]  # fmt: skip
    for agent in ("agent_a", "agent_b"):
        (tmp_path / agent).mkdir()
        (tmp_path / agent / "simple.test.json").write_text(json.dumps(turn))
    done = run_cli("validate", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
