"""A `--case` or `--metric` that names nothing says what it may have meant."""

from __future__ import annotations

from ci_eval.run.selection import suggestion, unmatched
from ci_eval.settings.parse import CaseFilter, parse_cases
from tests.conftest import SAMPLES
from tests.helpers import run_cli

KNOWN = {("weather", "paris"), ("weather", "tokyo"), ("travel", "paris_hotel")}


def _hint(text: str) -> str:
    bad = unmatched(parse_cases([text]), KNOWN)
    assert isinstance(bad, CaseFilter)
    return suggestion(bad, KNOWN)


def test_a_case_id_alone_is_matched_to_its_set() -> None:
    assert _hint("paris") == " (did you mean weather:paris or travel:paris_hotel?)"


def test_a_misspelled_set_or_case_gets_the_closest_ids() -> None:
    assert _hint("wether:paris") == " (did you mean weather:paris?)"
    assert _hint("weather:tokio") == " (did you mean weather:tokyo?)"


def test_nothing_close_says_nothing() -> None:
    assert _hint("zzz") == ""


def test_the_run_names_the_close_case_before_any_agent_call() -> None:
    evals = str(SAMPLES / "evals" / "weather_basic.evalset.json")
    done = run_cli(
        "run",
        evals,
        "--agent",
        "http",
        "--agent-url",
        "http://127.0.0.1:9",
        "--case",
        "paris",
        env={},
    )
    assert done.returncode == 2
    assert done.stderr.strip().endswith("(did you mean weather_basic:paris_weather?)")


def test_an_unknown_metric_names_the_close_one() -> None:
    evals = str(SAMPLES / "evals" / "weather_basic.evalset.json")
    done = run_cli(
        "run",
        evals,
        "--agent",
        "http",
        "--agent-url",
        "http://127.0.0.1:9",
        "--metric",
        "response_match_scor",
        env={},
    )
    assert done.returncode == 2
    assert "unknown metric(s) response_match_scor (did you mean response_match_score" in (
        done.stderr
    )
