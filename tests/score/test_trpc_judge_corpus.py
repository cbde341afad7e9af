"""Every LLM-judged metric of the corpus's trpc-agent-go sets is scored when a judge is
configured (a loopback judge, scripted): replaying trpc's recorded runs through the CLI, and
scoring each set's own conversation in process where trpc recorded no run."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from ci_eval.metrics.base import ScoreContext
from ci_eval.metrics.judge import Judge
from ci_eval.model.status import Status
from ci_eval.score.scorer import score_run
from ci_eval.settings import JudgeConfig
from tests.conftest import CORPUS
from tests.helpers import load, run_replay
from tests.judge_server import JudgeServer

TRPC = CORPUS / "trpc-agent-go"
TRPC_LLM = re.compile(r'"(?:metricName|evaluatorName)"\s*:\s*"(llm_[a-z_]+)"')


def _answer(prompt: str, n: int) -> str:
    """A judge that passes everything, in the form each trpc prompt asks for."""
    if "Segment the final answer" in prompt:
        return "<sentence>One.</sentence>"
    if "detect hallucinations" in prompt:
        return "ID: 1\nReason: grounded\nLabel: supported\nVerdict: yes"
    if '"rubricScores"' in prompt:
        rubric = prompt.rsplit("<rubric>", 1)[-1]
        ids = re.findall(r"^(\S+): ", rubric, re.M)
        return json.dumps({"rubricScores": [{"id": i, "score": 1, "reason": "ok"} for i in ids]})
    if "is_the_agent_response_valid" in prompt:
        return "reasoning: same\nis_the_agent_response_valid: valid"
    return '{"score": 1, "reason": "ok"}'  # the corpus's templates ask for single_score


def _judged_sets() -> list[tuple[Path, dict[str, str]]]:
    """Each trpc metrics file naming an LLM judge, with its metric name → evaluator."""
    if not TRPC.is_dir():
        pytest.skip("../shared/corpus is not here")
    out = []
    for path in sorted(TRPC.rglob("*.metrics.json")):
        if TRPC_LLM.search(path.read_text()):
            metrics = json.loads(path.read_text())
            evaluators = {
                m["metricName"]: m.get("evaluatorName") or m["metricName"] for m in metrics
            }
            out.append((path, evaluators))
    assert out
    return out


def recorded_runs(
    sets: list[tuple[Path, dict[str, str]]], tmp_path: Path
) -> tuple[list[str], Path]:
    """The sets' folders, and a folder holding trpc's recorded runs of them."""
    recorded = tmp_path / "recorded"
    recorded.mkdir()
    folders = []
    for path, _ in sets:
        for result in path.parent.parent.parent.glob("output/*/*.evalset_result.json"):
            shutil.copy(result, recorded / result.name)
            folders.append(str(path.parent))
    return sorted(set(folders)), recorded


def test_replayed_trpc_runs_have_every_judged_metric_scored(tmp_path: Path) -> None:
    sets = _judged_sets()
    folders, recorded = recorded_runs(sets, tmp_path)
    with JudgeServer(_answer) as server:
        results = tmp_path / "r.json"
        run_replay(*folders, "--results", str(results), "--judge-url", server.url,
                   "--judge-model", "m", replay=str(recorded), cwd=tmp_path)  # fmt: skip
    data = json.loads(results.read_text())
    evaluators = {name: e for _, names in sets for name, e in names.items()}
    scored = 0
    for case in (c for s in data["sets"] for c in s["cases"]):
        for metric in case["metrics"]:
            if not evaluators.get(metric["name"], "").startswith("llm_"):
                continue
            # a simulated user's case too: its reference is what trpc's expected runner
            # answered, as the recorded run holds it
            assert metric["status"] == "PASSED", (case["eval_id"], metric)
            scored += 1
    assert scored >= 9


def _ctx(case: Any, judge: Judge) -> ScoreContext:
    rubrics = [r.model_dump(mode="json", exclude_none=True) for r in case.rubrics or []]
    return ScoreContext(
        extensions=case.extensions, rubrics=rubrics, set_dialect="trpc", judge=judge
    )


def test_every_trpc_sets_judged_metrics_score_its_own_conversation() -> None:
    judged = 0
    with JudgeServer(_answer) as server:
        judge = Judge(JudgeConfig(base_url=server.url, model="m", retries=0))
        for path, evaluators in _judged_sets():
            for file in path.parent.glob("*.evalset.json"):
                loaded = load(file)
                specs = loaded.metrics.metrics
                for case in loaded.eval_set.eval_cases:
                    if case.conversation is None:
                        continue  # a scenario: its conversation is the simulated user's
                    results = score_run(specs, "trpc", case.conversation, case.conversation,
                                        _ctx(case, judge))  # fmt: skip
                    for result in results:
                        if not evaluators.get(result.name, "").startswith("llm_"):
                            continue
                        judged += 1
                        if result.status is Status.ERROR:
                            # a template bound to an execution trace: an eval set holds none
                            # (trpc errors likewise); the replayed runs above carry theirs
                            assert "executionTrace is empty" in (result.reason or "")
                        else:
                            assert result.status is Status.PASSED, (file.name, result)
    assert judged >= 10
