"""A loaded case holds its conversation as JSON until it is read (``EvalCase.pack``): whatever
is done with the case sees the conversation exactly as an unpacked case shows it."""

from __future__ import annotations

import copy
import json
import pickle
import threading
from pathlib import Path
from typing import Any

from hypothesis import given

from ci_eval.load.evalsets import LoadedEvalSet
from ci_eval.model import EvalCase, EvalSet, Invocation, canonical_form
from tests.helpers import load
from tests.load.test_properties import SETTINGS, eval_sets

RAW = {
    "eval_id": "a",
    "conversation": [
        {
            "invocation_id": "i",
            "user_content": {"role": "user", "parts": [{"text": "hi", "video_metadata": None}]},
            "intermediate_data": {"tool_uses": [{"name": "t", "args": {"n": 1.5}}]},
        }
    ],
    "extra_key": [1],
}


def _packed() -> EvalCase:
    case = EvalCase.model_validate(RAW)
    case.pack(RAW["conversation"])
    assert "conversation" not in case.__dict__  # held packed
    return case


def test_a_packed_case_reads_dumps_and_compares_as_the_case_itself() -> None:
    plain = EvalCase.model_validate(RAW)
    assert _packed().model_dump() == plain.model_dump()
    assert _packed().model_dump_json(by_alias=True) == plain.model_dump_json(by_alias=True)
    assert _packed() == plain and plain == _packed()
    assert repr(_packed()) == repr(plain)
    assert _packed().invocations() == plain.invocations()
    assert _packed().conversation == plain.conversation
    assert _packed().model_fields_set == plain.model_fields_set


def test_a_packed_case_inside_a_set_dumps_its_conversation() -> None:
    eval_set = EvalSet(eval_set_id="s", eval_cases=[])
    eval_set.eval_cases = [_packed()]
    assert eval_set.model_dump()["eval_cases"][0]["conversation"][0]["invocation_id"] == "i"


def test_copies_and_pickles_of_a_packed_case_unpack_on_their_own() -> None:
    case = _packed()
    for other in (copy.copy(case), copy.deepcopy(case), case.model_copy()):
        assert other.conversation == EvalCase.model_validate(RAW).conversation
    assert "conversation" not in case.__dict__
    assert pickle.loads(pickle.dumps(case)) == EvalCase.model_validate(RAW)


def test_assigning_the_conversation_of_a_packed_case_replaces_it() -> None:
    case = _packed()
    case.conversation = []
    assert case.conversation == [] and case.model_dump()["conversation"] == []


def test_cases_read_from_many_threads_at_once_unpack_to_the_same_conversation() -> None:
    cases = [_packed() for _ in range(50)]
    seen: list[Any] = []

    def read() -> None:
        seen.extend(c.invocations() for c in cases)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expected = EvalCase.model_validate(RAW).invocations()
    assert len(seen) == 200 and all(s == expected for s in seen)
    assert all(isinstance(i, Invocation) for s in seen for i in s)


@SETTINGS
@given(eval_set=eval_sets())
def test_a_loaded_set_holds_its_cases_packed_and_shows_them_whole(
    eval_set: EvalSet, tmp_path: Path
) -> None:
    path = tmp_path / "g.evalset.json"
    data = eval_set.model_dump(mode="json", exclude_none=True)
    path.write_text(json.dumps(data, ensure_ascii=False), "utf-8")  # (\ud83d escapes: the slow way)
    outcome = load(path)
    assert isinstance(outcome, LoadedEvalSet)
    assert all("conversation" not in c.__dict__ for c in outcome.eval_set.eval_cases)
    assert canonical_form(outcome.eval_set) == canonical_form(eval_set)
