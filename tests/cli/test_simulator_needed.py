"""Cases that need a user simulator, with none configured: the run says once how to give one
(one line above the sets), each case is still listed with a short reason, JUnit and the results
file keep the whole reason, and the verdict stays "nothing was evaluated"."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

from ci_eval.simulate import NO_SIMULATOR, SIMULATOR_HOW
from tests.conftest import SAMPLES
from tests.helpers import run_sample_agent

SHORT = "needs a user simulator (see above)"


def _run(tmp_path: Path, sets: Path) -> tuple[str, list[dict], ET.Element]:
    """`ci-eval run SETS` with no simulator: its terminal output, its cases in the results
    file, its JUnit."""
    results, junit = tmp_path / "results.json", tmp_path / "junit.xml"
    done = run_sample_agent(
        str(sets), "--results", str(results), "--junit", str(junit), cwd=tmp_path
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("gate failed: nothing was evaluated")
    cases = [c for s in json.loads(results.read_text())["sets"] for c in s["cases"]]
    return done.stdout + done.stderr, cases, ET.parse(junit).getroot()


def test_an_orchestrate_repository_says_the_simulator_need_once(
    corpus: Path, tmp_path: Path
) -> None:
    shutil.copytree(corpus / "watsonx-orchestrate", tmp_path / "repo")
    out, cases, junit = _run(tmp_path, tmp_path / "repo")
    n = len(cases)
    assert n > 1 and all(c["status"] == "SKIPPED" for c in cases)
    assert out.count(SIMULATOR_HOW) == 1
    assert f"{n} cases need a user simulator and were skipped: {SIMULATOR_HOW}\n" in out
    # every case in its set's block and in the verdict's list, each with the short reason
    assert out.count(f": {SHORT}\n") == 2 * n
    assert all(c["skipped"] == NO_SIMULATOR for c in cases)
    skipped = [s.get("message") for s in junit.iter("skipped")]
    assert skipped == [f"skipped: {NO_SIMULATOR}"] * n


def test_one_scenario_case_without_a_simulator_is_said_once_too(tmp_path: Path) -> None:
    sets = tmp_path / "scenarios"
    shutil.copytree(SAMPLES / "evals/scenarios", sets)
    out, cases, junit = _run(tmp_path, sets)
    assert out.count(SIMULATOR_HOW) == 1
    assert f"1 case needs a user simulator and was skipped: {SIMULATOR_HOW}\n" in out
    assert "  SKIPPED weather_clarify:weather_without_a_city: " + SHORT in out
    [case] = cases
    assert case["skipped"] == NO_SIMULATOR
    assert [s.get("message") for s in junit.iter("skipped")] == [f"skipped: {NO_SIMULATOR}"]
