"""ADK's judged metrics: ci-eval scores them as google-adk 2.13's own evaluator classes do,
prompt for prompt and score for score, and does so without google-adk.

One loopback chat-completions judge answers both, varying its answer from call to call (the
cases' scripts, ``adk_judge_cases``), so that majority votes, ties and unreadable answers are
exercised. ADK's evaluators (from its metric registry, the case's and the turns' rubrics copied
onto the actual turns by its eval service's own functions) call it through a stand-in for
ADK's model; ci-eval scores the same case as a run is scored. Then ci-eval scores every case
again in a process where google-adk cannot be imported.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.request
from collections import Counter
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.metrics import adk_judge_labels as labels
from ci_eval.metrics import adk_judge_render
from tests.conftest import REPO
from tests.judge_server import JudgeServer
from tests.score.adk_judge_cases import CASE_IDS, CASES, answer, ci_eval_scores, samples_of


@pytest.fixture(scope="module")
def _adk() -> None:
    """google-adk, imported by the tests that use it rather than at collection."""
    pytest.importorskip("google.adk")
    import logging

    # ADK logs every property or answer it cannot read, at length: the test compares results
    logging.getLogger("google_adk").setLevel(logging.CRITICAL)


class LoopbackLlm:
    """Stands in for the model an ADK evaluator calls: each prompt goes to the loopback judge.
    The n-th identical prompt is sample n modulo num_samples, asked once, as ci-eval's judge asks
    each (prompt, sample) once per run (identical turns get the same verdicts)."""

    def __init__(self, url: str, samples: int) -> None:
        self.url, self.samples = url, samples
        self.seen: Counter[str] = Counter()
        self.answers: dict[tuple[str, int], str] = {}

    async def generate_content_async(
        self, llm_request: Any, stream: bool = False
    ) -> AsyncGenerator[Any, None]:
        from google.adk.models.llm_response import LlmResponse
        from google.genai import types

        prompt = "\n".join(
            part.text for content in llm_request.contents for part in content.parts if part.text
        )
        sample = self.seen[prompt] % self.samples
        self.seen[prompt] += 1
        if (prompt, sample) not in self.answers:
            body = {"model": "judge-model", "messages": [{"role": "user", "content": prompt}]}
            request = urllib.request.Request(
                f"{self.url}/chat/completions",
                json.dumps(body).encode(),
                {"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=30) as reply:
                text = json.load(reply)["choices"][0]["message"]["content"]
            self.answers[(prompt, sample)] = text
        text = self.answers[(prompt, sample)]
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def adk_scores(c: dict[str, Any], url: str) -> dict[str, Any]:
    """Case ``c`` scored by google-adk's evaluator for its metric, as ADK's eval service runs
    it; a metric that raises is not evaluated, as there."""
    from google.adk.evaluation import local_eval_service as service
    from google.adk.evaluation.eval_case import EvalCase, Invocation
    from google.adk.evaluation.eval_metrics import BaseCriterion, EvalMetric
    from google.adk.evaluation.metric_evaluator_registry import (
        DEFAULT_METRIC_EVALUATOR_REGISTRY,
    )

    eval_case = EvalCase.model_validate(
        {
            "eval_id": c["id"],
            "conversation": c["expected"],
            "conversation_scenario": c["scenario"],
            "rubrics": c["rubrics"],
        }
    )
    actual = [Invocation.model_validate(i) for i in c["actual"]]
    try:
        service._copy_eval_case_rubrics_to_actual_invocations(eval_case, actual)
        service._copy_invocation_rubrics_to_actual_invocations(eval_case.conversation, actual)
        metric = EvalMetric(
            metric_name=c["metric"],
            threshold=c["threshold"],
            criterion=BaseCriterion(threshold=c["threshold"], **c["criterion"]),
        )
        evaluator = DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(metric)
        llm = LoopbackLlm(url, samples_of(c))
        for attr in ("_judge_model", "_llm"):
            if hasattr(evaluator, attr):
                setattr(evaluator, attr, llm)
        result = asyncio.run(
            evaluator.evaluate_invocations(
                actual_invocations=actual,
                expected_invocations=eval_case.conversation,
                conversation_scenario=eval_case.conversation_scenario,
            )
        )
    except Exception:
        return {"status": "NOT_EVALUATED", "score": None}
    return {
        "status": result.overall_eval_status.name,
        "score": result.overall_score,
        "per_invocation": [r.score for r in result.per_invocation_results],
        "rubrics": {r.rubric_id: r.score for r in result.overall_rubric_scores}
        if result.overall_rubric_scores
        else None,
    }


def _same(ours: dict[str, Any], adk: dict[str, Any]) -> None:
    assert ours["status"] == adk["status"]
    if adk["status"] == "NOT_EVALUATED":
        assert ours["score"] is None
        return
    assert ours["score"] == ours["run_score"] == adk["score"]  # exactly: the same arithmetic
    assert ours["per_invocation"] == adk["per_invocation"]
    assert ours["rubrics"] == adk["rubrics"]


@pytest.mark.usefixtures("_adk")
@pytest.mark.parametrize("c", CASES, ids=CASE_IDS)
def test_ci_eval_sends_adks_prompts_and_gives_its_scores(c: dict[str, Any]) -> None:
    with JudgeServer(answer) as server:
        adk = adk_scores(c, server.url)
    adk_prompts = server.prompts
    with JudgeServer(answer) as server:
        ours = ci_eval_scores(c, server.url)
    assert server.prompts == adk_prompts  # byte for byte, each one, in the same order
    _same(ours, adk)


# what the cases are there to show, as ADK scores them (and the test above checks ci-eval does)
EXPECTED = {
    "frm-majority": ("PASSED", 0.5),  # 3 of 5 valid, then 2 of 4 read: invalid
    "frm-tie-and-unread": ("PASSED", 0.5),  # a tie is invalid; a turn not read is left out
    "frm-no-verdict": ("NOT_EVALUATED", None),
    "frm-unpaired": ("NOT_EVALUATED", None),
    "frm-bad-criterion": ("NOT_EVALUATED", None),
    "final-events-and-app": ("FAILED", 1 / 3),  # the mean of all verdicts, not of the turns'
    "final-no-rubrics": ("NOT_EVALUATED", None),  # untyped case rubrics are not the metric's
    "trajectory-tool-declarations": ("NOT_EVALUATED", None),
    "hallucinations-no-sentences": ("NOT_EVALUATED", None),
    "user-one-turn-no-verdict": ("PASSED", 1.0),  # an unread stop verdict replaces nothing
    "user-two-turns-no-verdict": ("FAILED", 0.5),  # an unread turn counts as not passed
    "user-persona-bad-stop": ("FAILED", 0.0),  # a failed stop verdict replaces the last turn's
}


@pytest.mark.parametrize("case_id", sorted(EXPECTED))
def test_what_the_cases_show(case_id: str) -> None:
    [c] = [c for c in CASES if c["id"] == case_id]
    with JudgeServer(answer) as server:
        ours = ci_eval_scores(c, server.url)
    assert (ours["status"], ours["score"]) == EXPECTED[case_id]


BLOCKER = """
import json, sys

class HideGoogleAdk:
    # google-adk and google-genai (which comes with it) cannot be imported here, as in an image
    # without them
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[:2] in (["google", "adk"], ["google", "genai"]):
            raise ImportError(f"{name} is hidden from this process")
        return None

sys.meta_path.insert(0, HideGoogleAdk())
try:
    import google.adk
except ImportError:
    pass
else:
    raise SystemExit("the blocker let google.adk through")

from tests.score.adk_judge_cases import CASES, ci_eval_scores

url = sys.argv[1]
results = {c["id"]: ci_eval_scores(c, url) for c in CASES}
hidden = sorted(m for m in sys.modules if m.startswith(("google.adk", "google.genai")))
print(json.dumps({"results": results, "imported": hidden}))
"""


def test_without_google_adk_ci_eval_sends_the_same_prompts_and_gives_the_same_scores(
    tmp_path: Path,
) -> None:
    script = tmp_path / "hidden.py"
    script.write_text(BLOCKER)
    with JudgeServer(answer) as server:
        proc = subprocess.run(
            [sys.executable, str(script), server.url],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    hidden = json.loads(proc.stdout)
    assert hidden["imported"] == []
    with JudgeServer(answer) as here:
        ours = {c["id"]: ci_eval_scores(c, here.url) for c in CASES}
    assert hidden["results"] == json.loads(json.dumps(ours))
    assert server.prompts == here.prompts


@pytest.mark.usefixtures("_adk")
def test_the_shipped_prompts_are_adks_own() -> None:
    from google.adk.evaluation import final_response_match_v2 as frm
    from google.adk.evaluation import hallucinations_v1 as hal
    from google.adk.evaluation import rubric_based_final_response_quality_v1 as final
    from google.adk.evaluation import rubric_based_multi_turn_trajectory_evaluator as traj
    from google.adk.evaluation import rubric_based_tool_use_quality_v1 as tools
    from google.adk.evaluation.simulation import per_turn_user_simulator_quality_prompts as user
    from google.adk.evaluation.simulation.pre_built_personas import get_default_persona_registry

    shipped = {
        "final_response_match_v2.txt": frm._FINAL_RESPONSE_MATCH_V2_PROMPT,
        "rubric_based_final_response_quality_v1.txt": (
            final._RUBRIC_BASED_FINAL_RESPONSE_QUALITY_V1_PROMPT
        ),
        "rubric_based_tool_use_quality_v1.txt": tools._RUBRIC_BASED_TOOL_USE_QUALITY_V1_PROMPT,
        "rubric_based_multi_turn_trajectory_quality_v1.txt": (
            traj._RUBRIC_BASED_MULTI_TURN_TRAJECTORY_QUALITY_V1_PROMPT
        ),
        "hallucinations_v1_segmenter.txt": hal._HALLUCINATIONS_V1_SEGMENTER_PROMPT,
        "hallucinations_v1_validator.txt": hal._HALLUCINATIONS_V1_VALIDATOR_PROMPT,
        "per_turn_user_simulator_quality_v1.jinja": (
            user._LATEST_TURN_USER_SIMULATOR_EVALUATOR_PROMPT_TEMPLATE
        ),
        "per_turn_user_simulator_quality_v1_persona.jinja": (
            user._LATEST_TURN_USER_SIMULATOR_WITH_PERSONA_EVALUATOR_PROMPT_TEMPLATE
        ),
    }
    for name, text in shipped.items():
        assert adk_judge_render.template(name) == text, f"{name} is not google-adk's"
    personas = {
        p.id: p.model_dump(mode="json")
        for p in get_default_persona_registry().get_registered_personas()
    }
    assert json.loads(adk_judge_render.template("pre_built_personas.json")) == personas


# --- ADK's answer parsers, on answers of their own words --------------------------------------

WORDS = st.sampled_from(
    [
        '"is_the_agent_response_valid":',
        '"is_the_agent_response_invalid":',
        '"is_valid":',
        "valid",
        "invalid",
        "true",
        "True",
        "almost",
        "partially",
        "partially_valid",
        '"',
        "[",
        "]",
        "{",
        "}",
        ",",
        " ",
        "\n",
        "x",
        "ID: ",
        "Property: ",
        "Rationale: ",
        "Verdict: ",
        "yes",
        "No",
        "sentence:",
        "SENTENCE:",
        "\nlabel:",
        "\nrationale:",
        "\nsupporting_excerpt:",
        "\ncontradicting_excerpt:",
        "\nsentence:",
        "<sentence>",
        "</sentence>",
        "**",
        "\u201c",
        "\u2014",
        "\u017fentence:",  # long s: IGNORECASE folds it to "s"
    ]
)
ANSWERS = st.lists(WORDS, max_size=40).map("".join)


@pytest.mark.usefixtures("_adk")
@settings(max_examples=400, deadline=None)
@given(text=ANSWERS)
def test_the_label_parsers_read_what_adks_read(text: str) -> None:
    from google.adk.evaluation import final_response_match_v2 as frm
    from google.adk.evaluation import hallucinations_v1 as hal
    from google.adk.evaluation.llm_as_judge_utils import Label
    from google.adk.evaluation.rubric_based_evaluator import (
        DefaultAutoRaterResponseParser,
        _normalize_text,
    )
    from google.adk.evaluation.simulation import per_turn_user_simulator_quality_v1 as user

    as_score = {Label.VALID: 1.0, Label.INVALID: 0.0, Label.NOT_FOUND: None}
    assert labels.response_match_verdict(text) == as_score[frm._parse_critique(text)]
    assert labels.user_turn_verdict(text) == as_score[user._parse_llm_response(text)]
    theirs = DefaultAutoRaterResponseParser().parse(text)
    assert [
        (v.rubric_id, v.property_text, v.rationale, v.score) for v in labels.rubric_verdicts(text)
    ] == [(r.rubric_id, r.property_text, r.rationale, r.score) for r in theirs]
    assert labels.normalize_property(text) == _normalize_text(text)
    assert labels.sentences(text) == hal._parse_sentences(text)
    assert labels.sentence_labels(text) == [r["label"] for r in hal._parse_validation_results(text)]
