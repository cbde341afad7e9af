"""trpc-agent-go's LLM-judged metrics, scored as trpc-agent-go scores them (commit 0e352fdd of
trpc-group/trpc-agent-go): the prompts ci-eval sends are trpc's templates filled as its Go code
fills them, the judge's answers read as its response scorers read them (the fixtures are the
ones in trpc's own *_test.go files), samples majority-voted and invocations averaged as trpc's
operators do; every judged metric of the corpus's trpc sets is scored with a judge, and none
is without one."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from typing import Any

import pytest

from ci_eval.metrics import REGISTRY
from ci_eval.metrics import trpc_judge_parse as parse
from ci_eval.metrics import trpc_judge_text as text
from ci_eval.metrics.base import ScoreContext
from ci_eval.metrics.judge import Judge
from ci_eval.metrics.trpc_judge_template import TemplateError, bound_values, render_template
from ci_eval.model import (
    Content,
    FunctionCall,
    FunctionResponse,
    IntermediateData,
    Invocation,
    Part,
)
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.model.status import Status
from ci_eval.score.scorer import score_run
from ci_eval.settings import JudgeConfig
from tests.judge_server import JudgeServer

TRPC_LLM_METRICS = (
    "llm_final_response",
    "llm_rubric_response",
    "llm_rubric_critic",
    "llm_rubric_reference_critic",
    "llm_rubric_knowledge_recall",
    "llm_hallucinations",
    "llm_judge_template",
    "llm_verifier_pairwise",
)
# sha256 of each Go raw-string prompt at trpc-agent-go 0e352fdd (git show, byte for byte)
PROMPT_SHA256 = {
    "llm_final_response.txt": "2af3e44dbb49851702a6b8588ec5250294d529cbcd656687452eb64c8fb3534d",
    "llm_hallucinations_segmenter.txt": (
        "c79c2ea73dbd12bd2ff5f85a99cbcc129697e60c22cba0e8de222fa59dd098f5"
    ),
    "llm_hallucinations_validator.txt": (
        "f31fff9cd4bb870e59c9e969586ef4516e7ba25a981f279ed42a4e68cf8f38cd"
    ),
    "llm_rubric_critic.txt": "11481f7229d79ca03e5b20f19731284bc71a7d487b9c389b64728c031f52f963",
    "llm_rubric_knowledge_recall.txt": (
        "47b33d7562d843f4b5bbe1c9c7252fb050c4753c80a6695edeaa11647d3d1e35"
    ),
    "llm_rubric_reference_critic.txt": (
        "3374a239ada45164bf4e1a8efddd564092cd47ee4e959a16ffcd7501343acce8"
    ),
    "llm_rubric_response.txt": "e8aa3c546df886d00981198ac271ef4abaac57ec7928da6bf999bc429c46fc01",
    "llm_verifier_pairwise.txt": "126fdb5d4583f738c36574e55a0de4fb0a8142f57dba29230a0ae76c64613b85",
}


class ScriptedJudge:
    """Plays ci-eval's judge: ``answer(prompt, sample)`` is its reply; every ask is kept."""

    def __init__(self, answer: Callable[[str, int], Any]) -> None:
        self.answer = answer
        self.asked: list[tuple[str, int]] = []

    def ask(self, prompt: str, sample: int = 0) -> Any:
        self.asked.append((prompt, sample))
        return self.answer(prompt, sample)

    ask_logprobs = ask


def _inv(
    user: str, final: str | None = None, tools: list[dict[str, Any]] | None = None, **trpc: Any
) -> Invocation:
    calls = [FunctionCall(id=t["id"], name=t["name"], args=t.get("arguments")) for t in tools or []]
    results = [
        FunctionResponse(id=t["id"], name=t["name"], response=t["result"])
        for t in tools or []
        if "result" in t
    ]
    inv = Invocation(
        user_content=Content(role="user", parts=[Part(text=user)]),
        final_response=None if final is None else Content(role="model", parts=[Part(text=final)]),
        intermediate_data=IntermediateData(tool_uses=calls, tool_responses=results),
    )
    if trpc:
        inv.extensions["trpc"] = trpc
    return inv


def _score(
    name: str,
    judge: ScriptedJudge,
    actual: list[Invocation],
    expected: list[Invocation] | None = None,
    threshold: float = 0.5,
    **llm_judge: Any,
) -> tuple[float, list[float | None], dict[str, Any]]:
    spec = MetricSpec(name, threshold, {"llmJudge": llm_judge})
    ctx = ScoreContext(set_dialect="trpc", judge=judge)  # type: ignore[arg-type]
    return REGISTRY[name].scorer(expected or actual, actual, spec, ctx)


RUBRICS = [{"id": "1", "content": {"text": "test_rubric_text"}}]
VALID = "reasoning: same\nis_the_agent_response_valid: valid"


# --- the prompts ------------------------------------------------------------------------------


def test_the_shipped_prompts_are_trpcs_go_strings_byte_for_byte() -> None:
    for name, digest in PROMPT_SHA256.items():
        assert hashlib.sha256(text.template(name).encode()).hexdigest() == digest, name


def test_final_response_prompt_fills_user_prompt_answer_and_reference() -> None:
    # trpc: messagesconstructor/finalresponse TestConstructMessagesBuildsPrompt
    judge = ScriptedJudge(lambda p, n: VALID)
    _score("llm_final_response", judge, [_inv("user prompt", "actual answer")],
           [_inv("user prompt", "expected answer")])  # fmt: skip
    prompt = judge.asked[0][0]
    assert prompt.startswith("\nYou are an expert evaluator for an AI agent")
    assert (
        "Format:\nUser prompt: user prompt\nAgent response: actual answer\n"
        "Reference response: expected answer\n\n### Matching rules" in prompt
    )


def test_rubric_response_prompt_lists_each_rubric_as_id_colon_text() -> None:
    # trpc: messagesconstructor/rubricresponse TestConstructMessagesIncludesAllFields
    judge = ScriptedJudge(lambda p, n: '{"rubricScores":[{"id":"1","score":1,"reason":"ok"}]}')
    _score("llm_rubric_response", judge, [_inv("test_user_content", "test_final_response")],
           rubrics=RUBRICS)  # fmt: skip
    prompt = judge.asked[0][0]
    assert "<main_prompt>\ntest_user_content\n</main_prompt>" in prompt
    assert "<final_answer>\n  test_final_response\n  </final_answer>" in prompt
    assert "<rubric>\n1: test_rubric_text\n\n</rubric>" in prompt
    assert "Produce exactly one rubricScores item" in prompt and "Verdict:" not in prompt


def test_reference_critic_puts_the_reference_before_the_answer() -> None:
    judge = ScriptedJudge(lambda p, n: '{"rubricScores":[{"id":"1","score":1,"reason":"ok"}]}')
    _score("llm_rubric_reference_critic", judge, [_inv("q", "mine")], [_inv("q", "theirs")],
           rubrics=RUBRICS)  # fmt: skip
    prompt = judge.asked[0][0]
    assert (
        "<reference_answer>\ntheirs\n</reference_answer>\n\n<response>\n  <final_answer>\n  mine"
        in (prompt)
    )


def test_rubric_critic_shows_the_answer_then_the_golden_reference() -> None:
    # trpc: messagesconstructor/rubriccritic rubricCriticPrompt's input section
    judge = ScriptedJudge(lambda p, n: '{"rubricScores":[{"id":"1","score":1,"reason":"ok"}]}')
    _score("llm_rubric_critic", judge, [_inv("q", "mine")], [_inv("q", "golden")], rubrics=RUBRICS)
    assert judge.asked[0][0].endswith(
        "<final_answer>\nmine\n</final_answer>\n\n<reference_answer>\ngolden\n"
        "</reference_answer>\n\n<rubric>\n1: test_rubric_text\n\n</rubric>\n\n## Output\n"
    )


def test_a_critic_without_a_reference_answer_is_trpcs_error() -> None:
    judge = ScriptedJudge(lambda p, n: "")
    with pytest.raises(
        Exception, match="expected final response is required for llm_rubric_critic"
    ):
        _score("llm_rubric_critic", judge, [_inv("q", "a")], [_inv("q")], rubrics=RUBRICS)


def test_knowledge_results_are_re_marshalled_as_go_marshals_them() -> None:
    # trpc: content/knowledge_test.go TestExtractKnowledgeRecall, NilResponses, IgnoresNonKnowledge
    doc = {"text": "golang doc", "metadata": {"source": "kb", "lang": "en"}, "score": 0.9}
    tools = [
        {"id": "1", "name": "knowledge_search", "result": {"documents": [doc]}},
        {"id": "2", "name": "knowledge_search_with_agentic_filter", "result": {}},
        {"id": "3", "name": "other_tool", "result": {"documents": []}},
    ]
    assert text.knowledge_recall(tools) == (
        '{"documents":[{"text":"golang doc","metadata":{"lang":"en","source":"kb"},"score":0.9}]}\n'
        '{"documents":null}\n'
    )
    with pytest.raises(ValueError, match="parse tool knowledge_search response"):
        text.knowledge_recall([{"name": "knowledge_search", "result": {"documents": "invalid"}}])


def test_knowledge_recall_without_search_results_says_none_were_found() -> None:
    judge = ScriptedJudge(lambda p, n: '{"rubricScores":[{"id":"1","score":0,"reason":"none"}]}')
    _score("llm_rubric_knowledge_recall", judge, [_inv("q", "a")], rubrics=RUBRICS)
    assert (
        "<retrieved_knowledge>\nNo knowledge search results were found.\n</retrieved_knowledge>"
        in (judge.asked[0][0])
    )


def test_grounding_context_is_trpcs_sections_with_go_indented_json() -> None:
    # trpc: content/grounding_test.go TestExtractGroundingContext
    tools = [
        {"id": "tool-1", "name": "weather_lookup", "arguments": {"location": "Paris"},
         "result": {"temperatureC": 18, "condition": "Cloudy"}},
        {"id": "tool-2", "name": "knowledge_search",
         "result": {"documents": [{"text": "Paris is in France.", "score": 0.9}]}},
    ]  # fmt: skip
    context = [{"role": "system", "content": "Use the tool output as the source of truth."}]
    user = Content(role="user", parts=[Part(text="What is the weather in Paris?")])
    assert text.grounding_context(user, context, tools) == (
        "User prompt:\nWhat is the weather in Paris?\n\n"
        "Context messages:\n- [system] Use the tool output as the source of truth.\n\n"
        'tool_calls:\n[\n  {\n    "id": "tool-1",\n    "name": "weather_lookup",\n    "args": {\n'
        '      "location": "Paris"\n    }\n  },\n  {\n    "id": "tool-2",\n'
        '    "name": "knowledge_search"\n  }\n]\n\n'
        'tool_outputs:\n[\n  {\n    "id": "tool-1",\n    "name": "weather_lookup",\n'
        '    "output": {\n      "condition": "Cloudy",\n      "temperatureC": 18\n    }\n  },\n'
        '  {\n    "id": "tool-2",\n    "name": "knowledge_search",\n    "output": {\n'
        '      "documents": [\n        {\n          "score": 0.9,\n'
        '          "text": "Paris is in France."\n        }\n      ]\n    }\n  }\n]'
    )
    blank = [{"role": "system", "content": "   "}]
    assert text.grounding_context(None, blank, []) == "No validation context was captured."


def test_hallucinations_segment_once_then_validate_numbered_sentences() -> None:
    # trpc: messagesconstructor/hallucination TestConstructMessagesBuildsValidatorPrompt...
    def answer(prompt: str, n: int) -> str:
        if "Segment the final answer" in prompt:
            return "<sentence>Paris is cloudy.</sentence>\n<sentence>It is 18C.</sentence>"
        return "ID: 1\nReason: r\nLabel: supported\nVerdict: yes\n"

    judge = ScriptedJudge(answer)
    tools = [{"id": "tool-1", "name": "weather_lookup", "arguments": {"location": "Paris"},
              "result": {"temperatureC": 18, "condition": "Cloudy"}}]  # fmt: skip
    context = [{"role": "system", "content": "Cite tool outputs only."}]
    actual = _inv("What is the weather in Paris?", "Paris is cloudy and 18C.", tools,
                  contextMessages=context)  # fmt: skip
    _score("llm_hallucinations", judge, [actual], judgeModel={"numSamples": 2})
    segmenter, validator = judge.asked[0][0], judge.asked[1][0]
    assert "<final_answer>\nParis is cloudy and 18C.\n</final_answer>" in segmenter
    assert [s for _, s in judge.asked] == [0, 0, 1]  # one segmentation, two validator samples
    assert "<context>\nUser prompt:\nWhat is the weather in Paris?" in validator
    assert "- [system] Cite tool outputs only." in validator and '"temperatureC": 18' in validator
    assert (
        '<sentence id="1">\nParis is cloudy.\n</sentence>\n<sentence id="2">\nIt is 18C.\n'
        "</sentence>\n</segmented_sentences>" in validator
    )


def test_template_binds_variables_into_the_metrics_own_prompt() -> None:
    # trpc: messagesconstructor/template TestConstructMessagesRendersBoundVariables
    bindings = [
        {"templateVariable": "question", "source": {"scope": "actual", "field": "userContent"}},
        {"templateVariable": "answer", "source": {"scope": "actual", "field": "finalResponse"}},
        {
            "templateVariable": "reference",
            "source": {"scope": "expected", "field": "finalResponse"},
        },
    ]
    actual, expected = [_inv("What is the capital of France?", "Paris")], [_inv("x", "Paris")]
    values = bound_values(bindings, actual, expected, [])
    rendered = render_template(
        "Question: {{question}}\nAnswer: {{ answer }}\nRef: {{reference}}", values
    )
    assert rendered == "Question: What is the capital of France?\nAnswer: Paris\nRef: Paris"
    assert render_template("a{{maybe?}}b {{x y}}", {}) == "ab {{x y}}"
    with pytest.raises(TemplateError, match=r"unresolved placeholders: \{\{missing\}\}"):
        render_template("{{missing}}", {})


def test_template_reads_the_last_trace_step_of_the_selected_node() -> None:
    # trpc: template_test.go TestConstructMessagesRendersTraceStepOutputFromLastMatchingNode
    trace = {"Steps": [
        {"NodeID": "fetch_match", "Output": {"Text": "stale data"}},
        {"NodeID": "other", "Output": {"Text": "ignore me"}},
        {"NodeID": "fetch_match", "Output": {"Text": "fresh match data"},
         "Tools": [{"ID": "t1", "Name": "lookup", "Arguments": {"q": "<x>"}}]},
    ]}  # fmt: skip
    source = {"scope": "actual", "field": "traceStepOutput", "selector": {"nodeID": "fetch_match"}}
    tools = {**source, "field": "traceStepTools"}
    bindings = [{"templateVariable": "m", "source": source},
                {"templateVariable": "t", "source": tools}]  # fmt: skip
    values = bound_values(bindings, [_inv("q", executionTrace=trace)], [_inv("q", "r")], [])
    assert values == {
        "m": "fresh match data",
        "t": '[{"id":"t1","name":"lookup","arguments":{"q":"<x>"}}]',  # no HTML escaping
    }
    with pytest.raises(TemplateError, match=r"executionTrace is empty for actual\.traceStepOutput"):
        bound_values(bindings, [_inv("q")], [_inv("q", "r")], [])


# --- the answers ------------------------------------------------------------------------------


def test_final_response_label_is_read_case_insensitively() -> None:
    # trpc: responsescorer/finalresponse TestScoreBasedOnResponse, TestExtractReasoningAndLabelText
    assert parse.final_response("reasoning: ok\nis_the_agent_response_valid: VALID").score == 1.0
    bad = parse.final_response("reasoning: bad\nis_the_agent_response_valid: invalid")
    assert (bad.score, bad.reason) == (0.0, "bad")
    wrapped = parse.final_response("\nreasoning: something\nis_the_agent_response_valid: invalid\n")
    assert (wrapped.score, wrapped.reason) == (0.0, "something")
    with pytest.raises(parse.AnswerError, match="empty response text"):
        parse.final_response("")


def test_rubric_scores_average_and_reasons_join() -> None:
    # trpc: responsescorer/rubricscores TestScoreBasedOnResponseParsesRubricScores
    answer = """{
		"rubricScores":[
			{"id":"1","score":1,"reason":"Correct."},
			{"id":"2","score":0,"reason":"Missing evidence."}
		]
	}"""
    result = parse.rubric_scores(answer, None)
    assert (result.score, result.reason, len(result.rubric_scores)) == (
        0.5,
        "Correct.\nMissing evidence.",
        2,
    )
    assert parse.rubric_scores(f"```json\n{answer}\n```", ["1", "2"]).score == 0.5


@pytest.mark.parametrize(
    ("answer", "ids", "error"),
    [  # trpc: rubricscores_test.go ValidatesRubricScoreIDs, RejectsInvalidRubricScores
        ('{"rubricScores":[{"id":"1","score":1,"reason":"a"},{"id":"1","score":0,"reason":"b"}]}',
         ["1", "2"], 'duplicate rubric score id "1"'),
        ('{"rubricScores":[{"id":"1","score":1,"reason":"a"},{"id":"3","score":0,"reason":"b"}]}',
         ["1", "2"], 'unexpected rubric score id "3"'),
        ('{"rubricScores":[{"id":"1","score":1,"reason":"a"}]}', ["1", "2"],
         "missing rubric score id"),
        ('{"rubricScores":[]}', None, "rubricScores is empty"),
        ('{"rubricScores":[{"id":"","score":1,"reason":"bad"}]}', None, "rubric score id is empty"),
        ('{"rubricScores":[{"id":"1","reason":"bad"}]}', None, "rubric score is required"),
        ('{"rubricScores":[{"id":"1","score":1}]}', None, "rubric score reason is required"),
        ('{"rubricScores":[{"id":"1","score":2,"reason":"bad"}]}', None,
         "rubric score must be between 0 and 1"),
        ("not-json", None, "unmarshal response json"),
    ],
)  # fmt: skip
def test_rubric_scores_reject_what_trpc_rejects(answer: str, ids: Any, error: str) -> None:
    with pytest.raises(parse.AnswerError, match=error):
        parse.rubric_scores(answer, ids)


def test_hallucination_labels_decide_and_the_verdict_only_without_one() -> None:
    # trpc: responsescorer/hallucination TestScoreBasedOnResponse, ...FallsBackToVerdict(No)
    answer = (
        "\nID: 1\nReason: The tool output states Cloudy.\nLabel: supported\nVerdict: yes\n\n"
        "ID: 2\nReason: The tool output says 18C.\nLabel: contradictory\nVerdict: no\n\n"
        "ID: 3\nReason: This is a greeting.\nLabel: not_applicable\nVerdict: yes\n"
    )
    result = parse.hallucination(answer)
    assert result.score == pytest.approx(2 / 3)
    assert [s["score"] for s in result.rubric_scores] == [1.0, 0.0, 1.0]
    assert "[supported]" in result.reason and "[contradictory]" in result.reason
    assert parse.hallucination("\nID: 1\nReason: r\nLabel:\nVerdict: yes\n").score == 1.0
    fallback = parse.hallucination("\nID:\nReason: r\nLabel:\nVerdict: no\n")
    assert (fallback.rubric_scores[0]["id"], fallback.score) == ("1", 0.0)
    with pytest.raises(parse.AnswerError, match="unexpected label"):
        parse.hallucination("ID: 1\nReason: r\nLabel: maybe\nVerdict: yes\n")


def test_template_scorers_read_score_passed_and_category() -> None:
    # trpc: responsescorer/singlescore, boolean, categorical *_test.go
    single = parse.single_score('{"score":0.75,"reason":"Looks good."}')
    assert (single.score, single.reason) == (0.75, "Looks good.")
    for answer, error in (('{"score":1.2,"reason":"too high"}', "between 0 and 1"),
                          ('{"reason":"missing score"}', "score is required"),
                          ('{"score":0.2}', "reason is required")):  # fmt: skip
        with pytest.raises(parse.AnswerError, match=error):
            parse.single_score(answer)
    assert parse.boolean('{"passed":false,"reason":"bad"}').score == 0.0
    categories = parse.category_scores(
        {
            "categories": [
                {"label": "correct", "score": 1},
                {"label": "partially_correct", "score": 0.5},
                {"label": "incorrect", "score": 0},
            ]
        }
    )
    assert (
        parse.categorical('{"category":"partially_correct","reason":"close"}', categories).score
        == 0.5
    )
    unknown = parse.categorical('{"category":"unknown","reason":"other"}', categories)
    assert unknown.score == 0.0 and 'unknown categorical label "unknown"' in unknown.reason


def _token(token: str, logprob: float = 0.0, top: dict[str, float] | None = None) -> dict:
    tops = [{"token": t, "logprob": lp} for t, lp in (top or {}).items()]
    return {"token": token, "logprob": logprob, "top_logprobs": tops}


def test_pairwise_verifier_scores_the_letters_log_probabilities() -> None:
    # trpc: responsescorer/verifierpairwise TestScoreBasedOnResponseUsesLogprobs
    tokens = [
        _token("analysis\n<score_A>"),
        _token("A", math.log(0.7), {"A": math.log(0.7), "T": math.log(0.3)}),
        _token("</score_A>\n<score_B>"),
        _token("T", math.log(0.8), {"T": math.log(0.8), "A": math.log(0.2)}),
    ]
    result = parse.pairwise_score(tokens)
    assert result.score == pytest.approx(0.75) and "score_A" in result.reason


def test_pairwise_verifier_finds_the_letter_after_or_inside_the_tag_token() -> None:
    # trpc: verifier_test.go UsesTokenAfterTag, UsesScoreInsideTagClosingToken, tag errors
    after = [_token("not-score", 0, {"A": 0}), _token(" <score_A>"),
             _token(" K ", math.log(0.6), {"J": math.log(0.4), "K": math.log(0.6)})]  # fmt: skip
    inside = [_token("analysis\n<score_A"),
              _token(">K", math.log(0.6), {">J": math.log(0.4), ">K": math.log(0.6)})]  # fmt: skip
    for tokens in (after, inside):
        assert parse.tag_score(tokens, "<score_A>", 20, "score_A") == pytest.approx(
            0.4947, abs=1e-3
        )
    with pytest.raises(parse.AnswerError, match="score_A"):
        parse.pairwise_score([_token("<score_B>"), _token("A")])
    with pytest.raises(parse.AnswerError, match="logprobs are missing"):
        parse.pairwise_score([])


# --- samples and invocations --------------------------------------------------------------------


def test_samples_are_majority_voted_against_the_threshold_and_a_tie_fails() -> None:
    # trpc: samplesaggregator/majorityvote
    votes = {0: "invalid", 1: "valid", 2: "valid"}
    judge = ScriptedJudge(lambda p, n: f"reasoning: {n}\nis_the_agent_response_valid: {votes[n]}")
    score, _, details = _score("llm_final_response", judge, [_inv("q", "a")],
                                 judgeModel={"numSamples": 3})  # fmt: skip
    assert (score, details["reasons"], details["sample_scores"]) == (1.0, ["1"], [[0.0, 1.0, 1.0]])
    tie = ScriptedJudge(lambda p, n: f"reasoning: {n}\nis_the_agent_response_valid: {votes[n]}")
    assert _score("llm_final_response", tie, [_inv("q", "a")], judgeModel={"numSamples": 2})[0] == 0


def test_invocations_are_averaged_each_judged_on_its_own_turn() -> None:
    judge = ScriptedJudge(lambda p, n: VALID if "Agent response: yes" in p else "reasoning: x\n"
                          "is_the_agent_response_valid: invalid")  # fmt: skip
    score, per, details = _score("llm_final_response", judge, [_inv("q1", "yes"), _inv("q2", "no")])
    assert (score, per, details["num_samples"]) == (0.5, [1.0, 0.0], 1)


def test_num_samples_must_be_positive() -> None:
    with pytest.raises(Exception, match="num samples must be greater than 0"):
        _score("llm_final_response", ScriptedJudge(lambda p, n: VALID), [_inv("q", "a")],
               judgeModel={"numSamples": 0})  # fmt: skip


def test_a_cases_rubrics_named_for_the_metric_are_appended_to_its_own() -> None:
    # trpc: service/local buildCaseRubricIndex, appendCaseRubricsToMetric
    judge = ScriptedJudge(
        lambda p, n: (
            '{"rubricScores":[{"id":"1","score":1,"reason":"a"},'
            '{"id":"case_rubric_2","score":0,"reason":"b"}]}'
        )
    )
    rubrics = [
        {"rubric_id": "x", "rubric_content": {"text_property": "other metric's"}},
        {"rubric_id": "", "rubric_content": {"text_property": " mine "}},
    ]
    ctx = ScoreContext(
        extensions={"trpc": {"rubricMetricNames": ["other", "llm_rubric_response"]}},
        rubrics=rubrics,
        set_dialect="trpc",
        judge=judge,  # type: ignore[arg-type]
    )
    spec = MetricSpec("llm_rubric_response", 0.5, {"llmJudge": {"rubrics": RUBRICS}})
    score, _, _ = REGISTRY["llm_rubric_response"].scorer(
        [_inv("q", "a")], [_inv("q", "a")], spec, ctx
    )
    assert score == 0.5
    assert "<rubric>\n1: test_rubric_text\ncase_rubric_2: mine\n\n</rubric>" in judge.asked[0][0]


def test_without_a_judge_every_trpc_judged_metric_is_not_evaluated() -> None:
    specs = [MetricSpec(name, 0.5, {"llmJudge": {}}) for name in TRPC_LLM_METRICS]
    inv = _inv("q", "a")
    results = score_run(specs, "trpc", [inv], [inv], ScoreContext(set_dialect="trpc"))
    assert {r.status for r in results} == {Status.NOT_EVALUATED}
    assert all("needs an LLM judge" in (r.reason or "") for r in results)


def test_go_json_writes_numbers_and_escapes_as_encoding_json() -> None:
    assert text.go_json({"b": 1.0, "a": [1e21, 1e-7, 0.5, 3, "<&>"]}) == (
        '{"a":[1e+21,1e-7,0.5,3,"\\u003c\\u0026\\u003e"],"b":1}'
    )
    assert json.loads(text.go_json({"x": "\u2028"})) == {"x": "\u2028"}


def test_pairwise_verifier_sends_trpcs_prompt_and_scores_the_tokens() -> None:
    tokens = [
        _token("ok\n<score_A>"),
        _token("A", math.log(0.7), {"A": math.log(0.7), "T": math.log(0.3)}),
        _token("</score_A>\n<score_B>"),
        _token("T", math.log(0.8), {"T": math.log(0.8), "A": math.log(0.2)}),
    ]
    judge = ScriptedJudge(lambda p, n: tokens)
    score, _, _ = _score("llm_verifier_pairwise", judge, [_inv("q", "mine")], [_inv("q", "theirs")],
                         rubrics=RUBRICS)  # fmt: skip
    assert score == pytest.approx(0.75)
    prompt = judge.asked[0][0]
    assert "# Evaluation Criteria\n\n1: test_rubric_text\n\n# Evaluation Rules" in prompt
    assert prompt.endswith(
        "# User Request\n\nq\n\n# Candidate A\n\nmine\n\n# Candidate B\n\ntheirs\n"
    )


def test_the_verifier_asks_for_logprobs_and_errs_without_them() -> None:
    with JudgeServer(lambda p, n: "<score_A>A</score_A><score_B>B</score_B>") as server:
        judge = Judge(JudgeConfig(base_url=server.url, model="m", retries=0))
        spec = MetricSpec("llm_verifier_pairwise", 0.5, {"llmJudge": {"rubrics": RUBRICS}})
        inv = _inv("q", "a")
        [result] = score_run([spec], "trpc", [inv], [inv], ScoreContext(judge=judge))
    assert server.bodies[0]["logprobs"] is True and server.bodies[0]["top_logprobs"] == 20
    assert result.status is Status.ERROR and "logprobs are missing" in (result.reason or "")


def test_details_say_ci_evals_judge_replaced_the_metrics_judge_model() -> None:
    judge = ScriptedJudge(lambda p, n: VALID)
    model = {"providerName": "openai", "modelName": "deepseek-chat", "apiKey": "secret"}
    _, _, details = _score("llm_final_response", judge, [_inv("q", "a")], judgeModel=model)
    assert "ci-eval's judge" in details["judge"] and "openai/deepseek-chat" in details["judge"]
    assert "secret" not in details["judge"]
