"""quarantine.toml through the CLI: in a real git repository with a main branch (the bundled
samples, their agent, a history of two jobs on main) and a pull request that breaks a case (the
agent forgets Paris's weather), as a PR job sees it (``GITHUB_BASE_REF``); and outside a pull
request, on thresholds alone, where the sample's berlin case always fails."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import REPO
from tests.gate.pull_request import clean_env, pull_request, run_pr
from tests.helpers import git, run_cli

CASE = "weather_basic:paris_weather"


def _entry(until: str, case: str = CASE, owner: str = "team-agents") -> str:
    return (
        f'[[quarantine]]\ncase = "{case}"\nreason = "upstream flakiness, tracked in #123"\n'
        f'owner = "{owner}"\nuntil = "{until}"\n'
    )


def _main_with(main_repo: Path, tmp_path: Path, text: str) -> Path:
    """A copy of main whose last commit adds quarantine.toml (beside ci-eval.toml)."""
    main = tmp_path / "main"
    git(tmp_path, "clone", "-q", main_repo.as_uri(), "main")
    (main / "quarantine.toml").write_text(text)
    git(main, "add", "quarantine.toml")
    git(main, "commit", "-q", "-m", "quarantine")
    return main


def test_a_quarantined_regression_does_not_block_and_is_listed_apart(
    main_repo: Path, tmp_path: Path
) -> None:
    clone = pull_request(_main_with(main_repo, tmp_path, _entry("2999-12-31")), tmp_path)
    code, out = run_pr(clone, "--junit", "junit.xml")
    assert code == 0, out
    last = out.splitlines()[-1]
    assert last.startswith("gate passed: ")
    assert "1 quarantined case failed (quarantine until 2999-12-31, team-agents)" in last
    assert "QUARANTINED (1, not blocking; quarantine.toml):" in out
    assert f"REGRESSION {CASE}: passed 6 of 6 runs on main → failed" in out
    junit = (clone / "junit.xml").read_text()
    assert '<property name="quarantine" value="until 2999-12-31, team-agents: upstream' in junit
    assert 'message="regression, quarantined: passed 6 of 6 runs on main' in junit
    assert "<failure" not in junit


def test_an_expired_quarantine_blocks_again_and_the_verdict_says_it_expired(
    main_repo: Path, tmp_path: Path
) -> None:
    clone = pull_request(_main_with(main_repo, tmp_path, _entry("2020-01-31")), tmp_path)
    code, out = run_pr(clone)
    assert code == 1, out
    last = out.splitlines()[-1]
    assert last.startswith(f"gate failed: 1 regression ({CASE})")
    assert f"quarantine of {CASE} expired on 2020-01-31 (team-agents)" in last
    assert "remove the entry, or extend it" in out


def test_an_entry_the_pull_request_adds_applies_only_once_merged(
    main_repo: Path, tmp_path: Path
) -> None:
    clone = pull_request(main_repo, tmp_path, **{"quarantine.toml": _entry("2999-12-31")})
    code, out = run_pr(clone)
    assert code == 1, out
    last = out.splitlines()[-1]
    assert last.startswith("gate failed: 1 regression (weather_basic:paris")  # cut to fit
    assert (
        f"gate settings changed by this pull request (not applied): quarantine.toml + {CASE}"
        in last
    )
    assert "CHANGED BY THIS PULL REQUEST, NOT APPLIED" in out
    assert (
        f"quarantine.toml + {CASE}: until 2999-12-31 (team-agents): upstream flakiness, "
        "tracked in #123; applies once merged"
    ) in out


def test_an_entry_the_pull_request_extends_holds_until_the_bases_day(
    main_repo: Path, tmp_path: Path
) -> None:
    main = _main_with(main_repo, tmp_path, _entry("2020-01-31"))
    clone = pull_request(main, tmp_path, **{"quarantine.toml": _entry("2999-12-31")})
    code, out = run_pr(clone)
    assert code == 1, out
    last = out.splitlines()[-1]
    assert f"quarantine of {CASE} expired on 2020-01-31" in last
    assert f"quarantine.toml {CASE}: until 2999-12-31 (base: 2020-01-31); the base's applies" in out


def test_a_bad_entry_in_the_pull_requests_copy_is_refused_in_one_line(
    main_repo: Path, tmp_path: Path
) -> None:
    bad = _entry("2999-12-31").replace('owner = "team-agents"\n', "")
    clone = pull_request(main_repo, tmp_path, broken=False, **{"quarantine.toml": bad})
    code, out = run_pr(clone)
    assert code == 2, out
    assert "quarantine.toml: quarantine[0].owner: owner is required" in out
    assert "Traceback" not in out


def _samples(tmp_path: Path, quarantine: str) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copytree(REPO / "samples", root / "samples")
    shutil.copy(REPO / "ci-eval.toml", root / "ci-eval.toml")
    (root / "quarantine.toml").write_text(quarantine)
    return root


def test_outside_a_pull_request_the_file_beside_ci_eval_toml_holds_a_failing_case(
    tmp_path: Path,
) -> None:
    text = _entry("2999-12-31", "weather_basic:berlin_expected_to_fail") + _entry(
        "2999-12-31", "weather_basic:gone"
    )
    root = _samples(tmp_path, text)
    done = run_cli("run", "--results", "r.json", "--summary", "s.md", cwd=root, env=clean_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 quarantined case failed (quarantine until 2999-12-31, team-agents)" in done.stdout
    assert "weather_basic:gone matches no case of this run: remove the entry" in done.stderr
    summary = (root / "s.md").read_text()
    assert "### Quarantined: 1 (quarantine.toml, not blocking)" in summary
    assert "quarantined until 2999-12-31 (team-agents): upstream flakiness" in summary
    recorded = json.loads((root / "r.json").read_text())["settings"]["quarantine"]
    assert recorded[0] == {
        "case": "weather_basic:berlin_expected_to_fail",
        "reason": "upstream flakiness, tracked in #123",
        "owner": "team-agents",
        "until": "2999-12-31",
        "expired": False,
    }


def test_compare_reads_the_quarantine_again_rather_than_the_results_files(tmp_path: Path) -> None:
    root = _samples(tmp_path, _entry("2999-12-31", "weather_basic:berlin_expected_to_fail"))
    done = run_cli("run", "--results", "r.json", cwd=root, env=clean_env())
    assert done.returncode == 0, done.stdout + done.stderr
    (root / "quarantine.toml").write_text("")  # lifted since
    done = run_cli("compare", "r.json", cwd=root, env=clean_env())
    assert done.returncode == 1, done.stdout + done.stderr
    assert "quarantined" not in done.stdout.splitlines()[-1]
