"""A pull request cannot move its own goalposts: in a real git repository with a main branch
(the bundled samples, their agent, a history of two jobs on main) and a pull request branch, as
a PR job sees it (``GITHUB_BASE_REF``), each attack of issue #28 is tried on a PR that also
breaks a case (the agent forgets Paris's weather): the gate still fails, and says what the PR
changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_eval.gate.compare import compare
from ci_eval.gate.items import Kind
from ci_eval.gate.verdict import verdict
from ci_eval.model.comparison import Judgement
from ci_eval.settings.gate import GateSettings
from tests.conftest import REPO
from tests.gate.pull_request import clean_env, pull_request, run_pr
from tests.helpers import git, run_cli

TOML = (REPO / "ci-eval.toml").read_text()


def test_the_broken_case_fails_the_gate_of_an_unchanged_config(
    main_repo: Path, tmp_path: Path
) -> None:
    code, out = run_pr(pull_request(main_repo, tmp_path))
    assert code == 1, out
    assert "1 regression (weather_basic:paris_weather)" in out.splitlines()[-1]
    assert "changed by this pull request" not in out and "CHANGED BY" not in out


@pytest.mark.parametrize(
    ("run_table", "name"),
    [
        ('fail_on = ["error"]', "[run] fail_on"),
        ("significance = 1e-300", "[run] significance"),
        ('cases = ["weather_basic:berlin_expected_to_fail"]', "[run] cases"),
        ('baseline_ref = "HEAD"', "[run] baseline_ref"),
        ("confirm_runs = 0", "[run] confirm_runs"),
    ],
)
def test_gate_settings_in_the_prs_config_are_not_applied_and_are_said(
    main_repo: Path, tmp_path: Path, run_table: str, name: str
) -> None:
    toml = TOML.replace("[run]\n", f"[run]\n{run_table}\n")
    code, out = run_pr(pull_request(main_repo, tmp_path, **{"ci-eval.toml": toml}))
    assert code == 1, out
    last = out.splitlines()[-1]
    assert "1 regression (weather_basic:paris_weather)" in last
    assert f"gate settings changed by this pull request (not applied): {name}" in last
    assert "CHANGED BY THIS PULL REQUEST, NOT APPLIED" in out


def test_a_repository_that_trusts_pr_config_opts_out_in_the_workflow(
    main_repo: Path, tmp_path: Path
) -> None:
    toml = TOML.replace("[run]\n", '[run]\nfail_on = ["error"]\n')
    clone = pull_request(main_repo, tmp_path, **{"ci-eval.toml": toml})
    code, out = run_pr(clone, "--trust-pr-config")
    assert code == 0, out
    assert "changed by this pull request" not in out


def test_the_opt_out_is_never_the_prs_config_to_give(main_repo: Path, tmp_path: Path) -> None:
    toml = TOML.replace("[run]\n", '[run]\ntrust_pr_config = true\nfail_on = ["error"]\n')
    code, out = run_pr(pull_request(main_repo, tmp_path, **{"ci-eval.toml": toml}))
    assert code == 2
    assert "[run] trust_pr_config is not a ci-eval.toml setting" in out


def test_a_baseline_ref_naming_the_prs_own_commit_is_refused(
    main_repo: Path, tmp_path: Path
) -> None:
    code, out = run_pr(pull_request(main_repo, tmp_path), "--baseline-ref", "HEAD")
    assert code == 2
    assert "--baseline-ref HEAD names a commit of this pull request" in out


def test_a_link_to_the_baseline_is_the_baseline(main_repo: Path, tmp_path: Path) -> None:
    clone = pull_request(main_repo, tmp_path)
    (clone / "bdir").symlink_to(".ci-eval")
    history = clone / ".ci-eval/baseline.json"  # the PR's copy: paris always failed on main
    lowered = history.read_text().replace("[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]", "[0.0] * 6")
    assert lowered != history.read_text()
    history.write_text(lowered.replace("[0.0] * 6", "[0.0, 0.0, 0.0, 0.0, 0.0, 0.0]"))
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "a link, and a baseline that lowers the bar")
    for given in ("bdir/baseline.json", str(clone / ".ci-eval/baseline.json")):
        code, out = run_pr(clone, "--baseline", given)
        assert code == 1, out
        assert "at the merge base" in out
        assert "1 regression (weather_basic:paris_weather)" in out.splitlines()[-1]


def test_a_baseline_the_pull_request_adds_is_refused(main_repo: Path, tmp_path: Path) -> None:
    fake = (main_repo / ".ci-eval/baseline.json").read_text()
    clone = pull_request(main_repo, tmp_path, **{"data/baseline.json": fake})
    code, out = run_pr(clone, "--baseline", "data/baseline.json")
    assert code == 2
    assert "this pull request adds data/baseline.json" in out


def test_a_judge_never_gets_the_jobs_token(main_repo: Path, tmp_path: Path) -> None:
    done = run_cli(
        "run",
        "--judge-url",
        "http://127.0.0.1:9/v1",
        "--judge-model",
        "m",
        "--judge-key-env",
        "GITHUB_TOKEN",
        cwd=main_repo,
        env=clean_env(GITHUB_TOKEN="ghs_secret"),
    )
    assert done.returncode == 2
    assert "GITHUB_TOKEN, a CI credential" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_regression_within_the_tolerance_is_said_as_tolerance() -> None:
    from tests.gate.test_gate import history, results

    now = results({"c": [0.5, 0.5, 0.5]})
    now.comparison = compare(now, history({"c": [1.0] * 6}), GateSettings(tolerance=1.0))
    [judged] = now.comparison.cases
    assert judged.judgement is Judgement.TOLERATED
    decision = verdict(now)
    assert [i.kind for i in decision.not_blocking] == [Kind.TOLERATED]
    assert "usual noise" not in decision.line and "1 regression within the tolerance" in (
        decision.line
    )


def test_renaming_the_eval_set_keeps_its_history_and_the_break_is_found(
    main_repo: Path, tmp_path: Path
) -> None:
    clone = pull_request(main_repo, tmp_path)
    evalset = clone / "samples/evals/weather_basic.evalset.json"
    evalset.write_text(evalset.read_text().replace('"weather_basic"', '"weather_v2"', 1))
    git(clone, "commit", "-q", "-am", "a new set id")
    code, out = run_pr(clone)
    assert code == 1, out
    assert "1 regression (weather_v2:paris_weather)" in out.splitlines()[-1]
    assert "removed" not in out.splitlines()[-1]  # its cases were renamed, not removed


def test_removing_a_case_of_mains_history_fails_the_gate_unless_accepted(
    main_repo: Path, tmp_path: Path
) -> None:
    clone = pull_request(main_repo, tmp_path)
    logic = clone / "samples/agents/weather_agent/logic.py"
    git(clone, "checkout", "-q", "main", "--", str(logic))  # no break: only the removal
    git(clone, "rm", "-q", "-r", "samples/evals/trpc")
    git(clone, "commit", "-q", "-am", "drop the trpc set")
    code, out = run_pr(clone)
    assert code == 1, out
    assert "1 case removed (weather-trpc:tokyo_time)" in out.splitlines()[-1]
    (clone / ".ci-eval/accept.toml").write_text(
        '[[accept]]\ncase = "weather-trpc:*"\nreason = "the trpc sample moved out (#7)"\n'
    )
    code, out = run_pr(clone)
    assert code == 0, out
    assert "REMOVAL ACCEPTED (1): weather-trpc:tokyo_time (the trpc sample moved out (#7))" in out
    # the entry is the PR's: said
    assert "accept: .ci-eval/accept.toml: + weather-trpc:*: the trpc sample moved out (#7)" in out


def test_a_case_selection_never_removes(main_repo: Path, tmp_path: Path) -> None:
    clone = pull_request(main_repo, tmp_path)
    code, out = run_pr(clone, "--case", "weather_basic:berlin_expected_to_fail")
    assert "removed" not in out.splitlines()[-1]
    assert "cases main has that it did not run are not counted as removed" in out
    assert code == 0, out  # berlin fails on main too


def test_a_lowered_threshold_travels_with_the_set_and_is_said(
    main_repo: Path, tmp_path: Path
) -> None:
    lowered = '{"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.0}}'
    clone = pull_request(main_repo, tmp_path, **{"samples/evals/test_config.json": lowered})
    code, out = run_pr(clone)
    assert code == 0, out  # the lowered threshold applies: thresholds travel with the sets
    assert "changed by this pull request: 1 change to how cases are judged" in out.splitlines()[-1]
    assert (
        "threshold: weather_basic (samples/evals/test_config.json): response_match_score "
        "0.8 → 0 (3 cases)" in out
    )


def test_compare_never_trusts_the_comparison_a_results_file_carries(
    main_repo: Path, tmp_path: Path
) -> None:
    clone = pull_request(main_repo, tmp_path)
    code, _ = run_pr(clone, "--results", "r.json")
    assert code == 1
    data = json.loads((clone / "r.json").read_text())
    for judged in data["comparison"]["cases"]:  # the fork's job says it is all known
        judged["judgement"] = "known failure"
    (clone / "r.json").write_text(json.dumps(data))
    # the trusted job, with no baseline at hand: judged by thresholds, not by the file's say
    alone = tmp_path / "no-baseline-here"
    alone.mkdir()
    (alone / "r.json").write_text((clone / "r.json").read_text())
    done = run_cli("compare", "r.json", cwd=alone, env=clean_env())
    assert done.returncode == 1, done.stdout + done.stderr
    assert "failed case" in done.stdout.splitlines()[-1]
    # with the base branch's baseline: judged against it again
    done = run_cli("compare", str(clone / "r.json"), cwd=main_repo, env=clean_env())
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 regression (weather_basic:paris_weather)" in done.stdout.splitlines()[-1]


def test_the_prs_own_templates_are_not_used_and_are_said(main_repo: Path, tmp_path: Path) -> None:
    lie = "## ✅ ci-eval: gate passed\n\ncc @team ![x](https://example.com/pixel.png)\n"
    clone = pull_request(main_repo, tmp_path, **{"tpl/summary.md.j2": lie})
    code, out = run_pr(clone, "--template-dir", "tpl", "--summary", "s.md")
    assert code == 1, out
    summary = (clone / "s.md").read_text()
    assert summary.startswith("## ❌ ci-eval: gate failed: 1 regression")
    assert "@team" not in summary and "example.com" not in summary
    assert "templates in tpl: 1 file changed" in summary


def test_a_data_branch_is_read_through_git_not_from_a_folder_the_pr_writes(
    main_repo: Path, tmp_path: Path
) -> None:
    history = (main_repo / ".ci-eval/baseline.json").read_text()
    data = tmp_path / "data"
    git(tmp_path, "clone", "-q", main_repo.as_uri(), "data")
    git(data, "checkout", "-q", "--orphan", "ci-eval-data")
    git(data, "rm", "-q", "-r", "--cached", ".")
    (data / "baseline.json").write_text(history)
    git(data, "add", "baseline.json")
    git(data, "commit", "-q", "-m", "history")
    git(data, "push", "-q", "origin", "ci-eval-data")
    lowered = history.replace("[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]", "[0.0, 0.0, 0.0, 0.0, 0.0, 0.0]")
    clone = pull_request(main_repo, tmp_path, **{".ci-eval-data/baseline.json": lowered})
    code, out = run_pr(clone, "--baseline-branch", "ci-eval-data")
    assert code == 1, out
    assert "baseline baseline.json on branch ci-eval-data" in out
    assert "1 regression (weather_basic:paris_weather)" in out.splitlines()[-1]


def test_the_prs_judge_is_not_the_one_that_decides(main_repo: Path, tmp_path: Path) -> None:
    judge = '\n[judge]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "mine"\napi_key_env = "K"\n'
    code, out = run_pr(pull_request(main_repo, tmp_path, **{"ci-eval.toml": TOML + judge}), K="k")
    assert code == 1, out
    last = out.splitlines()[-1]
    assert "[judge] base_url, [judge] model, [judge] api_key_env" in last


def test_a_metric_the_pr_stops_applying_is_said(main_repo: Path, tmp_path: Path) -> None:
    only_trajectory = '{"criteria": {"tool_trajectory_avg_score": 1.0}}'
    clone = pull_request(main_repo, tmp_path, **{"samples/evals/test_config.json": only_trajectory})
    _, out = run_pr(clone)
    assert (
        "threshold: weather_basic (samples/evals/test_config.json): response_match_score "
        "0.8 → no longer applied (3 cases)" in out
    )


def test_a_baseline_ref_on_the_base_branch_is_read(main_repo: Path, tmp_path: Path) -> None:
    clone = pull_request(main_repo, tmp_path)
    code, out = run_pr(clone, "--baseline-ref", "origin/main")
    assert code == 1, out  # read, and the break found against it
    assert "1 regression (weather_basic:paris_weather)" in out.splitlines()[-1]


def _custom_metric_repo(tmp_path: Path, module: str, changed: bool) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / f"{module}.py").write_text("def score(*args):\n    return 1.0\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "a custom metric")
    git(root, "checkout", "-q", "-b", "feature")
    if changed:  # the pull request makes its own metric generous
        (root / f"{module}.py").write_text("def score(*args):\n    return 1.0  # always\n")
        git(root, "commit", "-q", "-am", "the pull request")
    return root


@pytest.mark.parametrize("changed", [True, False])
def test_a_custom_metrics_code_the_pr_changed_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changed: bool
) -> None:
    import sys

    from ci_eval.gate.main_history import custom_code_changes
    from ci_eval.metrics.custom import register_custom

    module = f"goalpost_metric_{changed}"
    root = _custom_metric_repo(tmp_path, module, changed)
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root))
    try:
        register_custom({"mine": f"{module}:score"})
        said = custom_code_changes({"GITHUB_BASE_REF": "main"})
    finally:
        register_custom({})
        sys.modules.pop(module, None)
    expected = [
        f"custom metric mine: its code ({module}.py) changed by this pull request, and scored "
        "this run"
    ]
    assert [c.text() for c in said] == (expected if changed else [])
