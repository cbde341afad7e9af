"""Replaying ADK's own recordings says what explains a score that is not the recorded one: the
eval set edited since the recording (the case and the file named), or a google-adk whose
ROUGE was not 2.13's (the version named, where the file's shape tells it); a case the files
never recorded is an error saying so. Grounded on a real `adk eval` recording (google-adk
2.13, ../shared/adk-reference), which replays without a word."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_eval.connectors import recorded
from ci_eval.model import Invocation
from tests.conftest import SHARED
from tests.helpers import run_replay
from tests.load.test_properties import SETTINGS, invocations

REFERENCE = SHARED / "adk-reference"


@pytest.fixture
def adk_run(tmp_path: Path) -> Path:
    """The eval set and a copy of ADK 2.13's recording of it (`adk eval`'s own file)."""
    if not REFERENCE.is_dir():
        pytest.skip("../shared/adk-reference is not here")
    for name in ("weather_basic.evalset.json", "weather_basic.evalset_result.json"):
        (tmp_path / name).write_bytes((REFERENCE / name).read_bytes())
    return tmp_path


def _replay(folder: Path, recording: str = "weather_basic.evalset_result.json") -> Any:
    return run_replay("weather_basic.evalset.json", replay=recording, cwd=folder)


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("ci-eval: warning:")]


def test_adk_s_own_recording_replays_without_a_word(adk_run: Path) -> None:
    proc = _replay(adk_run)
    assert proc.returncode == 1  # berlin_expected_to_fail fails, as it did in ADK
    assert _warnings(proc.stderr) == []


def test_an_eval_set_edited_after_the_recording_is_said_naming_the_case_and_the_file(
    adk_run: Path,
) -> None:
    evals = adk_run / "weather_basic.evalset.json"
    evals.write_text(
        evals.read_text("utf-8").replace(
            '"It is rainy in London, 15 degrees."', '"It is rainy in London, 16 degrees."'
        ),
        "utf-8",
    )
    proc = _replay(adk_run)
    assert _warnings(proc.stderr) == [
        "ci-eval: warning: weather_basic:multi_turn_london_tokyo: its recording in "
        "weather_basic.evalset_result.json was scored against other expected invocations than "
        "the eval set has now (turn 2's expected response): the eval set changed after the "
        "recording, so scores may differ from the recorded ones"
    ]  # and its response_match_score, no longer 1.0, is not said again as unreproduced


def _adk_1x(adk_run: Path) -> Path:
    """ADK's recording as google-adk 1.4 would have written it: a JSON string, and Berlin's
    answer scored by ROUGE-1 without stemming."""
    from rouge_score import rouge_scorer

    data = json.loads((adk_run / "weather_basic.evalset_result.json").read_text("utf-8"))
    [berlin] = [c for c in data["eval_case_results"] if c["eval_id"] == "berlin_expected_to_fail"]
    [turn] = berlin["eval_metric_result_per_invocation"]
    answer = "It snowed in Berlin, -2 degree."  # the same words, stemmed
    turn["actual_invocation"]["final_response"]["parts"] = [{"text": answer}]
    expected = turn["expected_invocation"]["final_response"]["parts"][0]["text"]
    unstemmed = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)
    for metric in berlin["overall_eval_metric_results"]:
        if metric["metric_name"] == "response_match_score":
            metric["score"] = unstemmed.score(expected, answer)["rouge1"].fmeasure
    path = adk_run / "weather_agent_weather_basic_1.evalset_result.json"
    path.write_text(json.dumps(json.dumps(data)), "utf-8")
    return path


def test_scores_an_adk_1x_recording_holds_that_are_not_reproduced_name_that_adk(
    adk_run: Path,
) -> None:
    proc = _replay(adk_run, _adk_1x(adk_run).name)
    assert _warnings(proc.stderr) == [
        "ci-eval: warning: weather_agent_weather_basic_1.evalset_result.json: recorded by "
        "google-adk 1.21 or earlier (the file is a JSON string, as those wrote theirs), whose "
        "response_match_score was not google-adk 2.13's ROUGE-1 (up to 1.4 without stemming, "
        "from 1.5 with rouge-score's tokenizer, which drops letters outside a-z): 1 of its "
        "recorded response_match_score scores differs from ci-eval's, google-adk 2.13's "
        "(weather_basic:berlin_expected_to_fail: recorded 0.6154, now 0.9231)"
    ]


def test_without_a_json_string_the_file_does_not_say_which_adk_recorded_it(
    adk_run: Path,
) -> None:
    wrapped = _adk_1x(adk_run)
    wrapped.write_text(json.loads(wrapped.read_text("utf-8")), "utf-8")  # now plain JSON
    [said] = _warnings(_replay(adk_run, wrapped.name).stderr)
    assert said.endswith(
        "1 of its recorded response_match_score scores differs from ci-eval's, google-adk "
        "2.13's (weather_basic:berlin_expected_to_fail: recorded 0.6154, now 0.9231); the file "
        "does not say which google-adk version recorded it"
    )


def test_trpc_agent_gos_json_string_results_are_not_taken_for_adks(tmp_path: Path) -> None:
    facts = recorded.Recorded(expected=None, score=0.5)

    class Recording:
        recorded = facts

    trpc_gen1 = {"eval_case_results": [{"eval_id": "c", "eval_metric_result_per_invocation": []}]}
    recorded.tell([[Recording()]], "r.json", json_string=True, data=trpc_gen1)
    assert (facts.file, facts.writer) == ("r.json", None)
    adk_1x = {"eval_case_results": [{"eval_id": "c", "session_details": None}]}
    recorded.tell([[Recording()]], "r.json", json_string=True, data=adk_1x)
    assert facts.writer == recorded.JSON_STRING_WRITER


def test_a_case_recorded_under_another_eval_set_id_is_named(adk_run: Path) -> None:
    evals = adk_run / "weather_basic.evalset.json"
    evals.write_text(
        evals.read_text("utf-8").replace('"eval_set_id": "weather_basic"', '"eval_set_id": "wb"'),
        "utf-8",
    )
    proc = _replay(adk_run)
    assert proc.returncode == 3
    assert (
        "ERROR wb:paris_weather: no recording of this case in weather_basic.evalset_result.json "
        "(a case 'paris_weather' is recorded in the eval set 'weather_basic')"
    ) in proc.stdout


@SETTINGS
@given(run=st.lists(invocations(), max_size=4), camel=st.booleans())
def test_a_recordings_expected_invocations_read_as_json_are_what_the_models_give(
    run: list[Invocation], camel: bool
) -> None:
    """Read without validating them, as ADK dumps them (every field, nulls too) or camelCase."""
    dumped = [inv.model_dump(mode="json", by_alias=camel) for inv in run]
    assert recorded.raw_turns(dumped) == recorded.turns(run)


def test_tool_calls_in_invocation_events_are_read_as_the_models_read_them() -> None:
    inv = Invocation.model_validate(
        {
            "user_content": {"role": "user", "parts": [{"text": "hi"}, {"text": None}]},
            "final_response": {"role": "model", "parts": []},
            "intermediate_data": {
                "invocation_events": [
                    {"author": "a", "content": None},
                    {
                        "author": "a",
                        "content": {
                            "parts": [
                                {"function_call": {"name": "f", "args": {"x": 1}}},
                                {"text": "thinking"},
                                {"functionCall": {"name": "g"}},
                            ]
                        },
                    },
                ]
            },
        }
    )
    for camel in (False, True):
        dumped = [inv.model_dump(mode="json", by_alias=camel)]
        assert recorded.raw_turns(dumped) == recorded.turns([inv])


def test_what_an_edit_changed_is_said_in_a_few_words() -> None:
    asked = Invocation.model_validate(
        {
            "user_content": {"parts": [{"text": "hi"}]},
            "final_response": {"parts": [{"text": "hello"}]},
            "intermediate_data": {"tool_uses": [{"name": "f", "args": {"x": 1, "y": 2}}]},
        }
    )
    reordered = asked.model_copy(deep=True)
    reordered.intermediate_data.tool_uses[0].args = {"y": 2, "x": 1}  # type: ignore[union-attr]
    edited = asked.model_copy(update={"final_response": None}, deep=True)
    edited.user_content.parts[0].text = "hey"  # type: ignore[index]

    def said(was: list[Invocation], now: list[Invocation]) -> str:
        return recorded.difference(recorded.turns(was), recorded.turns(now))

    assert recorded.turns([asked]) == recorded.turns([reordered])  # key order is no edit
    assert said([asked, asked], [asked, edited]) == "turn 2's user message and expected response"
    assert said([asked], [asked, asked]) == "1 expected turn recorded, 2 now"
