"""Every change a pull request makes to how a case is judged is in the verdict line — its
metric options, its expected conversation, its thresholds — one clause, each change listed
before → after; with ``--fail-on judging-changed`` each one blocks until an ``[[accept]]``
entry accepts it. In a real git repository with main's history (tests/gate/pull_request.py)."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

from tests.gate.pull_request import clean_env, pull_request, run_pr
from tests.helpers import run_cli

EVALSET = "samples/evals/weather_basic.evalset.json"
# the break's own answer: a PR that rewrites the expected response to it "fixes" the case
BROKEN_ANSWER = "Sorry, I do not know the weather in Paris."
ANY_ORDER = json.dumps(
    {
        "criteria": {
            "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "ANY_ORDER"},
            "response_match_score": 0.8,
        }
    }
)
STRICT = "regression,error,not-evaluated,judging-changed"


def _rewritten_expected(main_repo: Path) -> str:
    """The eval set with paris_weather expecting what the broken agent says."""
    text = (main_repo / EVALSET).read_text()
    return text.replace("It is sunny in Paris, 22 degrees.", BROKEN_ANSWER)


def test_a_loosened_match_type_is_in_the_verdict_line_before_and_after(
    main_repo: Path, tmp_path: Path
) -> None:
    clone = pull_request(
        main_repo, tmp_path, broken=False, **{"samples/evals/test_config.json": ANY_ORDER}
    )
    code, out = run_pr(clone)
    assert code == 0, out  # the set's options travel with it: applied
    assert (
        "changed by this pull request: 1 change to how cases are judged" in (out.splitlines()[-1])
    )
    assert (
        "criterion: weather_basic (samples/evals/test_config.json): tool_trajectory_avg_score "
        "match_type (default) → ANY_ORDER" in out
    )
    assert "another metric configuration" not in out  # listed, not a footnote


def test_a_rewritten_expected_conversation_is_said_for_its_case(
    main_repo: Path, tmp_path: Path
) -> None:
    clone = pull_request(main_repo, tmp_path, **{EVALSET: _rewritten_expected(main_repo)})
    code, out = run_pr(clone)
    assert code == 0, out  # the broken answer is what the case now expects
    assert (
        "changed by this pull request: 1 change to how cases are judged" in (out.splitlines()[-1])
    )
    assert "expected: weather_basic:paris_weather (samples/evals/weather_basic.evalset.json): " in (
        out
    )


def test_fail_on_judging_changed_blocks_a_rewritten_expectation(
    main_repo: Path, tmp_path: Path
) -> None:
    clone = pull_request(main_repo, tmp_path, **{EVALSET: _rewritten_expected(main_repo)})
    code, out = run_pr(clone, "--fail-on", STRICT, "--junit", "j.xml")
    assert code == 1, out
    last = out.splitlines()[-1]
    assert last.startswith("gate failed: 1 judging change not accepted "), last
    assert "(weather_basic:paris_weather)" in last
    assert '[[accept]] entry (case = "weather_basic:paris_weather")' in out
    root = ElementTree.parse(clone / "j.xml").getroot()
    [suite] = [s for s in root if s.get("name") == "changed how cases are judged"]
    assert suite.get("failures") == "1"


def test_an_accept_entry_accepts_a_judging_change(main_repo: Path, tmp_path: Path) -> None:
    accept = '[[accept]]\ncase = "weather_basic:paris_weather"\nreason = "new wording (#9)"\n'
    clone = pull_request(
        main_repo,
        tmp_path,
        **{EVALSET: _rewritten_expected(main_repo), ".ci-eval/accept.toml": accept},
    )
    code, out = run_pr(clone, "--fail-on", STRICT)
    assert code == 0, out
    assert "1 accepted judging change" in out.splitlines()[-1]
    assert "new wording (#9)" in out
    assert "matched no regression" not in out  # it was used


def test_a_set_wide_change_is_accepted_by_the_sets_pattern(main_repo: Path, tmp_path: Path) -> None:
    files = {"samples/evals/test_config.json": ANY_ORDER}
    clone = pull_request(main_repo, tmp_path, broken=False, **files)
    code, out = run_pr(clone, "--fail-on", STRICT)
    assert code == 1, out
    assert '(case = "weather_basic:*")' in out
    (clone / ".ci-eval").mkdir(exist_ok=True)
    (clone / ".ci-eval/accept.toml").write_text(
        '[[accept]]\ncase = "weather_basic:*"\nreason = "order does not matter here"\n'
    )
    code, out = run_pr(clone, "--fail-on", STRICT)
    assert code == 0, out


def test_an_unchanged_pull_request_says_no_judging_change(main_repo: Path, tmp_path: Path) -> None:
    code, out = run_pr(pull_request(main_repo, tmp_path, broken=False), "--fail-on", STRICT)
    assert code == 0, out
    assert "how cases are judged" not in out


def test_compare_lists_the_same_judging_changes_as_run(main_repo: Path, tmp_path: Path) -> None:
    clone = pull_request(main_repo, tmp_path, **{EVALSET: _rewritten_expected(main_repo)})
    code, out = run_pr(clone, "--fail-on", STRICT, "--results", "r.json")
    done = run_cli(
        "compare", "r.json", "--fail-on", STRICT, cwd=clone, env=clean_env(GITHUB_BASE_REF="main")
    )
    said = (done.stderr + done.stdout).splitlines()
    assert (done.returncode, said[-1]) == (code, out.splitlines()[-1]), said
