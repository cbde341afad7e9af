"""Hostile files in a repository: each is refused with one line naming it (and where in it),
never a hang, a crash or an out-of-memory, and never hiding the other files' problems."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_eval.errors import InputError, ValidationFailed
from ci_eval.io.readfile import MAX_FILE_MB_ENV
from ci_eval.load.discover import discover
from ci_eval.load.evalsets import Failed, LoadedEvalSet, load_all
from tests.helpers import load, run_cli

CASE = {
    "eval_id": "c",
    "conversation": [{"user_content": {"role": "user", "parts": [{"text": "hi"}]}}],
}


def _eval_set(path: Path, set_id: str = "s") -> Path:
    path.write_text(json.dumps({"eval_set_id": set_id, "eval_cases": [CASE]}))
    return path


def _within(seconds: float, fn: Callable[[], Any]) -> Any:
    """fn() in a thread; a hang fails the test instead of freezing it."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "hung"
    if "error" in box:
        raise box["error"]
    return box["value"]


def _error(outcome: Any) -> InputError:
    assert isinstance(outcome, Failed), outcome
    return outcome.error


def test_an_integer_literal_over_the_digit_limit_is_refused_with_its_place(tmp_path: Path) -> None:
    path = tmp_path / "big.evalset.json"
    path.write_text('{"eval_set_id": "b",\n "n": ' + "9" * 5000 + "}")
    error = _error(load(path))
    assert "integer literal with more than 4300 digits" in error.message
    assert (error.path, error.line, error.col) == (path.as_posix(), 2, 7)


def test_a_set_id_longer_than_a_file_name_can_be_loads(tmp_path: Path) -> None:
    outcome = load(_eval_set(tmp_path / "long.evalset.json", "x" * 300))
    assert isinstance(outcome, LoadedEvalSet), outcome


def test_a_set_id_with_a_nul_byte_does_not_break_the_sidecar_lookup(tmp_path: Path) -> None:
    outcome = load(_eval_set(tmp_path / "nul.evalset.json", "a\0b"))
    assert isinstance(outcome, LoadedEvalSet), outcome


def test_a_symlink_loop_is_refused(tmp_path: Path) -> None:
    (tmp_path / "loop.evalset.json").symlink_to("loop.evalset.json")
    [candidate] = discover([tmp_path])
    error = _error(load_all([candidate])[0])
    assert "symlink loop" in error.message and error.path.endswith("loop.evalset.json")


def test_ids_that_differ_only_in_lone_surrogates_are_named_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "dup.evalset.json"
    cases = [dict(CASE, eval_id=f"\\{u}") for u in ("ud83d", "ud83e")]
    path.write_text(json.dumps({"eval_set_id": "d", "eval_cases": cases}).replace("\\\\u", "\\u"))
    error = _error(load(path))
    assert "duplicate" in error.message and "U+FFFD" in error.message
    assert error.json_path == "$.eval_cases[1].eval_id"


def _with_answer(path: Path, escaped: str) -> Path:
    """An eval set whose user says ``escaped``, written into the JSON as it is (escapes kept)."""
    path.write_text(json.dumps({"eval_set_id": "e", "eval_cases": [CASE]}).replace("hi", escaped))
    return path


def test_an_emoji_escaped_as_a_surrogate_pair_loads_as_itself_without_a_warning(
    tmp_path: Path,
) -> None:
    loaded = load(_with_answer(tmp_path / "pair.evalset.json", "hi \\ud83d\\ude00"))
    assert isinstance(loaded, LoadedEvalSet)
    assert loaded.eval_set.eval_cases[0].invocations()[0].user_content.text() == "hi \U0001f600"
    assert not [w for w in loaded.warnings if "surrogate" in w]


def test_a_lone_surrogate_is_replaced_and_said_so(tmp_path: Path) -> None:
    loaded = load(_with_answer(tmp_path / "lone.evalset.json", "cut \\ud83d here"))
    assert isinstance(loaded, LoadedEvalSet)
    assert loaded.eval_set.eval_cases[0].invocations()[0].user_content.text() == "cut \ufffd here"
    assert [w for w in loaded.warnings if "lone surrogates" in w]


def test_a_fifo_named_like_an_eval_set_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.evalset.json")
    error = _error(_within(10, lambda: load(tmp_path / "pipe.evalset.json")))
    assert "FIFO" in error.message


def test_a_fifo_named_like_a_metrics_sidecar_is_refused_without_blocking(tmp_path: Path) -> None:
    evals = _eval_set(tmp_path / "s.evalset.json")
    os.mkfifo(tmp_path / "s.metrics.json")
    error = _error(_within(10, lambda: load(evals)))
    assert "FIFO" in error.message and error.path.endswith("s.metrics.json")


def test_a_symlink_to_a_device_is_refused_without_reading_it(tmp_path: Path) -> None:
    (tmp_path / "zero.evalset.json").symlink_to("/dev/zero")
    error = _error(_within(10, lambda: load(tmp_path / "zero.evalset.json")))
    assert "character device" in error.message


def test_a_file_over_the_size_limit_is_refused_and_the_limit_is_configurable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _eval_set(tmp_path / "s.evalset.json")
    monkeypatch.setenv(MAX_FILE_MB_ENV, "0.0001")  # 100 bytes
    error = _error(load(path))
    assert "over the size limit of 0.0001 MB" in error.message and MAX_FILE_MB_ENV in error.message
    monkeypatch.setenv(MAX_FILE_MB_ENV, "1")
    assert isinstance(load(path), LoadedEvalSet)


def test_every_hostile_file_is_listed_and_validate_exits_2(tmp_path: Path) -> None:
    _eval_set(tmp_path / "good.evalset.json", "good")
    (tmp_path / "loop.evalset.json").symlink_to("loop.evalset.json")
    (tmp_path / "zero.evalset.json").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "pipe.evalset.json")
    (tmp_path / "big.evalset.json").write_text("[" + "1" * 4400 + "]")
    proc = _within(120, lambda: run_cli("validate", ".", cwd=tmp_path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    for name in ("loop", "zero", "pipe", "big"):
        assert f"{name}.evalset.json:" in out
    assert "good.evalset.json: ok" in out
    assert "internal error" not in out


def test_the_run_lists_all_problems_before_refusing(tmp_path: Path) -> None:
    from ci_eval.pipeline import load_eval_sets
    from ci_eval.settings import RunSettings

    (tmp_path / "loop.evalset.json").symlink_to("loop.evalset.json")
    os.mkfifo(tmp_path / "pipe.evalset.json")
    with pytest.raises(ValidationFailed) as raised:
        _within(20, lambda: load_eval_sets(RunSettings(paths=[str(tmp_path)])))
    assert len(raised.value.problems) == 2


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_any_bytes_load_to_a_set_or_one_named_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "any.evalset.json"
    path.write_bytes(data)
    outcome = load(path)
    if isinstance(outcome, Failed):
        assert str(outcome.error).startswith(path.as_posix())
        assert "\n" not in str(outcome.error)


def test_nesting_too_deep_for_the_parser_names_line_column_and_path(tmp_path: Path) -> None:
    path = tmp_path / "deep.evalset.json"
    path.write_text('{"eval_set_id": "d",\n "eval_cases": [' + "[" * 5000 + "]" * 5000 + "]}")
    error = _error(load(path))
    assert "levels deep" in error.message
    assert (error.line, error.json_path) == (2, "$.eval_cases[0][0][0][0][0][0][0]…")


def test_results_files_get_a_larger_limit_than_eval_sets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ci-eval's own results file grows with the suite (130 MB at 20,000 cases): the limit
    meant for eval sets must not stop `report` on it."""
    from ci_eval.results.file import RunResults, read_results, to_json, write_json_atomic

    path = tmp_path / "results.json"
    write_json_atomic(
        path, to_json(RunResults(sets=[], agent="a" * 300, started="2026-01-01", duration_s=1.0))
    )
    size_mb = path.stat().st_size / 1e6
    monkeypatch.setenv(MAX_FILE_MB_ENV, f"{size_mb / 2:g}")  # an eval set this big is refused
    assert read_results(path).agent == "a" * 300
    monkeypatch.setenv(MAX_FILE_MB_ENV, f"{size_mb / 40:g}")  # past 20× it is refused too
    with pytest.raises(InputError, match="over the size limit"):
        read_results(path)


@pytest.mark.parametrize("conversation", [True, 1.5, "text", {"a": 1}])
def test_a_camel_case_set_whose_conversation_is_not_a_list_is_invalid_not_a_crash(
    tmp_path: Path, conversation: Any
) -> None:
    from tests.helpers import run_cli

    evalset = {"evalSetId": "s", "evalCases": [{"evalId": "c", "conversation": conversation}]}
    (tmp_path / "s.evalset.json").write_text(json.dumps(evalset))
    done = run_cli("validate", str(tmp_path / "s.evalset.json"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "internal error" not in done.stdout + done.stderr
