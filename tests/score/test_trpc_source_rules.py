"""trpc-agent-go's final-response criteria score here as its source scores them, row by row
(issue #55): each test names the file of trpc-group/trpc-agent-go at commit 0e352fdd that it
follows, and the score trpc-agent-go gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ci_eval.metrics.base import MetricFailure, ScoreContext
from ci_eval.metrics.trpc import final_response
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec
from tests.helpers import run_replay
from tests.score.test_trpc_reasons import _trpc_set


def _reply(text: str | None) -> Invocation:
    reply = None if text is None else {"role": "model", "parts": [{"text": text}]}
    return Invocation.model_validate(
        {"user_content": {"role": "user", "parts": [{"text": "q"}]}, "final_response": reply}
    )


def _score(crit: dict[str, Any], actual: str, expected: str | None) -> tuple[float, str | None]:
    """final_response_avg_score of one invocation, and its reason."""
    spec = MetricSpec("final_response_avg_score", 1.0, {"finalResponse": crit})
    score, _, details = final_response([_reply(expected)], [_reply(actual)], spec, ScoreContext())
    return score, details.get("reason")


def test_row_1_an_xml_criterion_scores_well_formed_xml_1() -> None:
    """evaluation/metric/criterion/xml/xml.go (matchValid) and finalresponse/finalresponse.go
    (matchContentAsXML) at 0e352fdd: with ``valid`` and ``matchStrategy: skip`` a well-formed
    actual with one root scores 1 whatever the expected; a second root, text outside the root,
    an entity Go's decoder does not know, and no ``matchStrategy`` (xml.go has no default)
    score 0."""
    crit = {"xml": {"valid": True, "matchStrategy": "skip"}}
    doc = '\n<?xml version="1.0"?>\n<weather city="Paris"><temp>20</temp></weather>\n'
    assert _score(crit, doc, "anything") == (1.0, None)
    assert _score(crit, "<a/><b/>", "x")[0] == 0.0
    assert _score(crit, "Here it is: <a/>", "x")[0] == 0.0
    score, reason = _score(crit, '<!DOCTYPE a [<!ENTITY e "boom">]><a>&e;</a>', "x")
    assert score == 0.0 and "invalid character entity &e;" in (reason or "")
    score, reason = _score({"xml": {"valid": True}}, doc, "x")
    assert score == 0.0 and "xml match strategy is empty" in (reason or "")


def test_row_2_a_json_schema_the_actual_breaks_scores_0() -> None:
    """evaluation/metric/criterion/json/json.go (validateJSONSchema: Draft 2020-12 unless
    ``$schema`` says otherwise, numbers exact) at 0e352fdd: the actual is checked against
    ``schema`` before any matching; a violation scores 0, a schema that holds lets
    ``matchStrategy`` decide."""
    schema = {
        "type": "object",
        "required": ["name"],
        "properties": {"name": {"type": "string"}, "price": {"multipleOf": 0.01}},
        "additionalProperties": False,
    }
    crit = {"json": {"schema": schema, "matchStrategy": "skip"}}
    assert _score(crit, '{"name": "tea", "price": 0.07}', "x") == (1.0, None)
    score, reason = _score(crit, '{"name": 7}', "x")
    assert score == 0.0
    assert reason == (
        "turn 1: final response json.name does not match the criterion's schema: "
        'type "string" (got 7)'
    )
    exact = {"json": {"schema": {"required": ["name"]}}}
    assert _score(exact, '{"name": 1}', '{"name": 1}')[0] == 1.0
    assert _score(exact, '{"nom": 1}', '{"nom": 1}')[0] == 0.0


def test_row_3_skip_with_prose_expected_scores_1() -> None:
    """evaluation/metric/criterion/json/json.go (Match returns at ``matchStrategy: skip``
    before normalizeInputs parses the expected) at 0e352fdd: the expected final response need
    not be JSON, nor the actual without ``valid`` or ``schema``."""
    crit = {"json": {"matchStrategy": "skip"}}
    assert _score(crit, '{"a": 1}', "The agent should answer with JSON.") == (1.0, None)
    assert _score(crit, "no JSON here", "prose") == (1.0, None)


def test_row_4_text_after_the_json_value_scores_0() -> None:
    """evaluation/metric/criterion/json/json.go (parseRawJSON decodes a second value and
    refuses it: "multiple json values", or the syntax error of what follows) at 0e352fdd."""
    crit = {"json": {}}
    assert _score(crit, '  {"a": 1}\n', '{"a": 1}') == (1.0, None)
    score, reason = _score(crit, '{"a": 1} Hope this helps!', '{"a": 1}')
    assert score == 0.0
    assert "the agent's final response is not JSON (text after the JSON value" in (reason or "")
    score, reason = _score(crit, '{"a": 1}{"a": 1}', '{"a": 1}')
    assert score == 0.0 and "multiple json values" in (reason or "")
    assert _score(crit, '{"a": 1}', '{"a": 1} and more')[0] == 0.0  # the expected alike


def test_row_5_a_compare_name_fails_before_any_case_is_scored(tmp_path: Path) -> None:
    """evaluation/metric/registry/registry.go (lookupTextCompare: "text compare NAME not found")
    called by resolveMetricExtensions in evaluation/service/local/local.go at 0e352fdd, before
    any case is evaluated: ci-eval can call no Go compare function, so the metrics file is an
    input error — one line naming the file and the JSON path, exit 2 — and the agent is not
    asked. A criterion that reaches the metric another way is its ERROR."""
    metrics = [
        {"metricName": "tool_trajectory_avg_score", "threshold": 1, "criterion": {}},
        {
            "metricName": "final_response_avg_score",
            "threshold": 1,
            "criterion": {"finalResponse": {"text": {"compareName": "semantic"}}},
        },
    ]
    base = _trpc_set(tmp_path, [], "It is 20 degrees.", metrics)
    proc = run_replay("data", "--results", "r.json", replay="output", cwd=base)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    [line] = [x for x in proc.stderr.splitlines() if "compareName" in x]
    assert "weather.metrics.json" in line
    assert "$[1].criterion.finalResponse.text.compareName" in line
    assert "text compare semantic not found" in line
    assert not (base / "r.json").exists()
    with pytest.raises(MetricFailure, match="text compare semantic not found"):
        _score({"text": {"compareName": "semantic"}}, "a", "a")


@pytest.mark.parametrize(
    ("actual", "score"),
    [
        ('{"ok": true}', 1.0),
        ("[1e400]", 1.0),  # json.Number: valid JSON, though no float64 holds it
        ('{"ok": true} trailing', 0.0),
        ("{'ok': True}", 0.0),
        ("NaN", 0.0),
        ("", 0.0),
    ],
)
def test_row_6_valid_means_the_actual_is_one_json_value(actual: str, score: float) -> None:
    """evaluation/metric/criterion/json/json.go (``valid``: rawJSONValue reads the actual with
    jsonschema.UnmarshalJSON — one JSON value, numbers as json.Number, nothing after it) at
    0e352fdd: with ``matchStrategy: skip`` that is the whole check; the expected is not read."""
    crit = {"json": {"valid": True, "matchStrategy": "skip"}}
    assert _score(crit, actual, "not JSON either")[0] == score


def test_json_rules_run_in_trpcs_order_and_every_failing_criterion_is_said() -> None:
    """evaluation/metric/criterion/finalresponse/finalresponse.go (JSON, text, ROUGE, then XML;
    the mismatches joined) at 0e352fdd."""
    crit = {
        "json": {"valid": True, "matchStrategy": "skip"},
        "xml": {"valid": True, "matchStrategy": "skip"},
    }
    score, reason = _score(crit, "plain words", None)
    assert score == 0.0
    assert reason is not None
    assert reason.index("final response json") < reason.index("final response xml")
    assert json.dumps("plain words") in reason
