"""Joining shards' results files into one: every case once, in file order, the run's facts
combined, and a case two shards both ran refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_eval.errors import InputError
from ci_eval.io.files import write_json_atomic
from ci_eval.model.facts import RunFacts
from ci_eval.results.file import RunResults, to_json
from ci_eval.results.merge import merge
from tests.factories import results


def _write(path: Path, data: RunResults) -> Path:
    write_json_atomic(path, to_json(data))
    return path


def test_the_shards_cases_are_joined_per_set_in_file_order(tmp_path: Path) -> None:
    one = results({"b": "PASSED", "a": "FAILED"})
    one.sets[0].cases[0].line, one.sets[0].cases[1].line = 9, 3
    two = results({"c": "PASSED"})
    other = results({"x": "ERROR"}, set_id="another")
    merged = merge(
        [
            _write(tmp_path / "1.json", one),
            _write(tmp_path / "2.json", two),
            _write(tmp_path / "3.json", other),
        ]
    )
    assert [s.eval_set_id for s in merged.sets] == ["another", "s"]  # by file
    assert [c.eval_id for c in merged.sets[1].cases] == ["c", "a", "b"]  # by line
    assert {c.eval_id: c.status for _, c in merged.cases()} == {
        "a": "FAILED",
        "b": "PASSED",
        "c": "PASSED",
        "x": "ERROR",
    }


def test_the_run_facts_combine(tmp_path: Path) -> None:
    early, late = results({"a": "PASSED"}), results({"b": "PASSED"})
    early.started, late.started = "2026-01-01T00:00:00", "2026-01-02T00:00:00"
    early.duration_s, late.duration_s = 5.0, 7.0
    late.interrupted = True
    early.settings = RunFacts(shard="1/2", num_runs=3)
    merged = merge([_write(tmp_path / "l.json", late), _write(tmp_path / "e.json", early)])
    assert merged.started == "2026-01-01T00:00:00"  # the first shard to start
    assert merged.duration_s == 7.0  # shards run side by side: the longest
    assert merged.interrupted  # one interrupted shard: the whole is incomplete
    assert merged.settings.merged_from == 2 and merged.settings.shard is None


def test_a_case_in_two_shards_is_refused_naming_both(tmp_path: Path) -> None:
    first = _write(tmp_path / "1.json", results({"a": "PASSED"}))
    second = _write(tmp_path / "2.json", results({"a": "FAILED"}))
    with pytest.raises(InputError) as caught:
        merge([first, second])
    assert str(first) in str(caught.value) and str(second) in str(caught.value)
    assert "different --shard totals" in str(caught.value)


def test_nothing_to_merge_is_an_input_error() -> None:
    with pytest.raises(InputError, match="at least one results file"):
        merge([])


def test_the_same_shards_merged_again_are_the_same_run_and_others_another(tmp_path: Path) -> None:
    one, two, three = results({"a": "PASSED"}), results({"b": "PASSED"}), results({"b": "PASSED"})
    one.run_id, two.run_id, three.run_id = "1" * 32, "2" * 32, "3" * 32
    paths = [_write(tmp_path / f"{n}.json", r) for n, r in enumerate((one, two, three))]
    first, again = merge(paths[:2]), merge(paths[1::-1])
    assert first.run_id and first.run_id == again.run_id  # in either order
    assert merge([paths[0], paths[2]]).run_id != first.run_id


def test_shards_written_before_runs_had_ids_merge_into_a_run_without_one(tmp_path: Path) -> None:
    one, two = results({"a": "PASSED"}), results({"b": "PASSED"})
    one.run_id = "1" * 32
    merged = merge([_write(tmp_path / "1.json", one), _write(tmp_path / "2.json", two)])
    assert merged.run_id == ""
