"""Cases for the ADK judge parity test: every judged metric of ADK's, in the situations its
rules tell apart, each with the judge's scripted answers; and ci-eval's scoring of one case
against a loopback judge (also run in a process where google-adk cannot be imported, so this
module imports nothing of it).

A prompt's answers are looked up by the marker ``<<K:key>>`` the prompt holds where its kind
of prompt says what is judged (the agent response, the user prompt, the sentence list …); the
n-th identical prompt gets the key's n-th answer, cyclically, so the samples of one prompt
vote differently.
"""

from __future__ import annotations

import re
from typing import Any

from ci_eval.metrics.base import ScoreContext
from ci_eval.metrics.judge import Judge
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec
from ci_eval.results.file import CaseRecord, InvocationRecord, RunRecord
from ci_eval.score.scorer import ScoreOptions, score_case
from ci_eval.settings import JudgeConfig

# kind of prompt: (words only that prompt holds, heading after which its marker is found)
KINDS = {
    "frm": ('"is_the_agent_response_valid"', '"Agent response":'),
    "final": ("evaluate the final answer quality", "<main_prompt>"),
    "tools": ('output "Property: ..." on a new line', "<user_prompt>"),
    "trajectory": ("in a multi-turn conversation", "<conversation_history>"),
    "seg": ("segment the provided response sentence by sentence", "**Response Begin**"),
    "val": ("classify each sentence according to", "**Sentences Begin**"),
    "user": ("quality of a User Simulator", "# Generated User Response"),
}
MARKER = re.compile(r"<<K:([\w.-]+)>>")


def key_of(prompt: str) -> str:
    kind = next(k for k, (words, _) in KINDS.items() if words in prompt)
    focus = prompt[prompt.rfind(KINDS[kind][1]) :]
    found = MARKER.search(focus)
    if found:
        return f"{kind}:{found.group(1)}"
    if kind == "user":
        # the user simulator's stop decision: the stop signal holds no marker; the last agent
        # reply of the conversation does
        return f"{kind}:stop-{MARKER.findall(prompt)[-1]}"
    return f"{kind}:-"  # a text with no marker: answered by UNMARKED


# --- answers --------------------------------------------------------------------------------

FRM = {
    "V": '{"reasoning": ["r"], "is_the_agent_response_valid": ["valid"]}',
    "I": '{\n  "reasoning": "r",\n  "is_the_agent_response_valid": "invalid",\n}',
    "T": '{"is_the_agent_response_valid": true}',
    "A": '{"is_the_agent_response_valid": "almost"}',
    "P": '{"is_the_agent_response_valid": "partially valid"}',
    "X": '{"is_the_agent_response_invalid": "true"}',  # ADK: invalid
    "Y": '{"is_the_agent_response_invalid": "nope"}',  # ADK: valid
    "N": "I cannot tell.",
    "E": "",
}


def frm(script: str) -> list[str]:
    return [FRM[c] for c in script]


def rubric(*items: tuple[str | None, str, str]) -> str:
    """An answer in ADK's rubric format: (ID or None, property as echoed, verdict)."""
    blocks = []
    for rubric_id, prop, verdict in items:
        head = f"ID: {rubric_id}\n" if rubric_id is not None else ""
        blocks.append(f"{head}Property: {prop}\nRationale: because.\nVerdict: {verdict}\n")
    return "STEP 1: ...\n" + "\n".join(blocks)


USER = {
    "V": '{"criteria": [], "is_valid": True,}',
    "I": '{\n  "criteria": [],\n  "is_valid": False\n}',
    "T": '```json\n{"is_valid": "true"}\n```',
    "A": '{"is_valid": "almost"}',
    "N": "No opinion.",
}


def user(script: str) -> list[str]:
    return [USER[c] for c in script]


def block(sentence: str, label: str) -> str:
    return (
        f"sentence: {sentence}\nlabel: {label}\nrationale: r\n"
        "supporting_excerpt: null\ncontradicting_excerpt: null"
    )


# --- invocations ----------------------------------------------------------------------------


def text(role: str, *texts: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": t} for t in texts]}


def turn(
    user_text: str, reply: str | None = None, data: dict[str, Any] | None = None, **more: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {"invocation_id": "", "user_content": text("user", user_text)}
    if reply is not None:
        out["final_response"] = text("model", reply)
    if data is not None:
        out["intermediate_data"] = data
    return {**out, **more}


def rub(rubric_id: str, prop: str, kind: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"rubric_id": rubric_id, "rubric_content": {"text_property": prop}}
    return {**out, "type": kind} if kind else out


TOOLS = {
    "tool_uses": [
        {"id": "c1", "name": "get_weather", "args": {"city": "Zürich", "days": 2, "hot": None}},
        {"id": "c2", "name": "convert", "args": {"value": 1e20, "to": ["°F", 2.5]}},
        {"name": "log", "args": {}},
    ],
    "tool_responses": [
        {"id": "c1", "name": "get_weather", "response": {"temp": 22.0, "sky": "sunny ☀"}},
        {"id": "c9", "name": "other", "response": {"x": 1}},
        {"name": "log", "response": {"ok": True}},  # no id: ADK pairs it with a call without
    ],
    "intermediate_responses": [["helper", [{"text": "Checking the weather."}]]],
}
GROUNDING = {
    "grounding_chunks": [{"web": {"title": "Weather", "uri": "https://example.com/w"}}],
    "groundingSupports": [
        {
            "confidenceScores": [0.9],
            "groundingChunkIndices": [0],
            "segment": {"startIndex": 0, "endIndex": 12, "text": "It is sunny"},
        }
    ],
    "web_search_queries": ["weather zurich"],
}


def events(marker: str, grounding: bool = False) -> dict[str, Any]:
    """ADK's own shape of a turn's data: the events, tool calls and results among them."""
    call = {"id": "e1", "name": "get_weather", "args": {"city": "Paris"}}
    result = {"id": "e1", "name": "get_weather", "response": {"temp": 21, "note": "ok"}}
    return {
        "invocation_events": [
            {"author": "weather_agent", "content": text("model", f"Let me look {marker}.")},
            {
                "author": "weather_agent",
                "content": {"role": "model", "parts": [{"function_call": call}]},
            },
            {
                "author": "user",
                "content": {"role": "user", "parts": [{"function_response": result}]},
            },
            {
                "author": "weather_agent",
                "content": text("model", "Found it.", "Writing the answer."),
                **({"grounding_metadata": GROUNDING} if grounding else {}),
            },
            {"author": "weather_agent", "grounding_metadata": GROUNDING}
            if grounding
            else {"author": "weather_agent", "content": {"role": "model", "parts": []}},
        ]
    }


APP = {
    "agent_details": {
        "weather_agent": {
            "name": "weather_agent",
            "instructions": "Answer questions about the weather.",
            "tool_declarations": [
                {"function_declarations": [{"name": "get_weather", "description": "Weather."}]}
            ],
        },
        "helper": {"name": "helper", "instructions": ""},
    }
}
APP_NO_TOOLS = {
    "agent_details": {
        "weather_agent": {"name": "weather_agent", "instructions": "Be brief."},
        "helper": {"name": "helper", "instructions": "Help."},
    }
}
PLAN = "Ask for the weather in Paris, then thank the agent and stop."


def case(
    case_id: str,
    metric: str,
    actual: list[dict[str, Any]],
    answers: dict[str, list[str]],
    threshold: float = 0.5,
    criterion: dict[str, Any] | None = None,
    expected: list[dict[str, Any]] | None = None,
    rubrics: list[dict[str, Any]] | None = None,
    scenario: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": case_id,
        "metric": metric,
        "threshold": threshold,
        "criterion": criterion or {},
        "expected": expected if expected is not None else (None if scenario else actual),
        "actual": actual,
        "rubrics": rubrics,
        "scenario": scenario,
        "answers": answers,
    }


R1, R2 = rub("r1", "The answer names the city."), rub("r2", "The answer is polite.")
CRIT = {"rubrics": [R1, R2], "judge_model_options": {"num_samples": 3}}

CASES = [
    # final_response_match_v2 ---------------------------------------------------------------
    case(
        "frm-majority",
        "final_response_match_v2",
        [turn("Weather?", "Sunny <<K:f1>>."), turn("And tomorrow?", "Rain <<K:f2>>.")],
        {"frm:f1": frm("VVINV"), "frm:f2": frm("IIVNN")},
        expected=[turn("Weather?", "It is sunny."), turn("And tomorrow?", "Rain.")],
    ),
    case(
        "frm-tie-and-unread",
        "final_response_match_v2",
        [
            turn("Weather?", "Sunny <<K:f3>>.", data=TOOLS),
            turn("More?", "No <<K:f4>>."),
            turn("Bye", "Bye <<K:f5>>."),
        ],
        {"frm:f3": frm("VINE"), "frm:f4": frm("NNEN"), "frm:f5": frm("TAPV")},
        # camelCase as ADK's configs write it; the intermediate responses go into the prompt
        criterion={
            "judgeModelOptions": {"numSamples": 4},
            "includeIntermediateResponsesInFinal": True,
        },
        expected=[
            turn("Weather?", "Sunny.", data={"intermediate_responses": [["a", [{"text": "x"}]]]}),
            turn("More?", "No."),
            turn("Bye", "Bye."),
        ],
    ),
    case(
        "frm-invalid-field",
        "final_response_match_v2",
        [turn("Weather?", "Sunny <<K:f6>>.")],
        {"frm:f6": frm("YXY")},
        criterion={"judge_model_options": {"num_samples": 3}},
        expected=[turn("Weather?", "Sunny.")],
    ),
    case(
        "frm-no-verdict",
        "final_response_match_v2",
        [turn("Weather?", "Sunny <<K:f7>>.")],
        {"frm:f7": frm("N")},
        criterion={"judge_model_options": {"num_samples": 2}},
    ),
    case(
        "frm-unpaired",
        "final_response_match_v2",
        [turn("Weather?", "Sunny <<K:f8>>.")],
        {},
        expected=[turn("Weather?", "x"), turn("More?", "y")],
    ),
    case(
        "frm-bad-criterion",
        "final_response_match_v2",
        [turn("Weather?", "Sunny <<K:f9>>.")],
        {},
        criterion={"judge_model_options": {"num_samples": 0}},
    ),
    case(
        "frm-unknown-option",
        "final_response_match_v2",
        [turn("Weather?", "Sunny <<K:f10>>.")],
        {},
        criterion={"judge_model_options": {"samples": 3}},
    ),
    # rubric_based_final_response_quality_v1 ------------------------------------------------
    case(
        "final-rubrics",
        "rubric_based_final_response_quality_v1",
        [
            turn("Weather in Zürich? <<K:q1>>", "It is 22 and sunny, thanks!", data=TOOLS),
            turn("Tomorrow? <<K:q2>>", "Rain."),
        ],
        {
            "final:q1": [
                rubric(
                    ("r1", "The answer names the city.", "yes"),
                    (None, "**The answer is polite.**", "no"),
                    ("c1", "Mentions the temperature.", "yes"),
                    ("t1", "Says the sky.", "Yes, it does"),
                ),
                rubric(
                    ("1", "“The answer names the city.”", "no"),
                    ("r2", "whatever", "yes"),
                    ("c1", "Mentions the temperature.", "unsure"),
                    ("t1", "Says the sky.", "no"),
                ),
                rubric(("r1", "x", "no"), ("r2", "y", "no"))
                + "Property: dangling\nVerdict: yes\n",  # counts differ: nothing parsed
            ],
            "final:q2": [
                rubric(("r1", "a", "no"), ("r2", "b", "yes"), ("c1", "c", "no")),
                rubric(("r1", "a", "no"), ("r2", "b", "yes"), ("c1", "c", "yes")),
                rubric(("r1", "a", "yes"), ("zz", "unknown property", "yes")),
            ],
        },
        threshold=0.6,
        criterion=CRIT,
        rubrics=[
            rub("c1", "Mentions the temperature.", "FINAL_RESPONSE_QUALITY"),
            rub("c2", "Not of this metric's type.", "TOOL_USE_QUALITY"),
            rub("c3", "Untyped: only a criterion's rubric applies untyped."),
        ],
        expected=[
            turn(
                "Weather in Zürich?",
                "x",
                rubrics=[rub("t1", "Says the sky.", "FINAL_RESPONSE_QUALITY")],
            ),
            turn("Tomorrow?", "y"),
        ],
    ),
    case(
        "final-events-and-app",
        "rubric_based_final_response_quality_v1",
        [
            turn(
                "Weather in Paris? <<K:q3>>",
                "Sunny, 21.",
                data=events("<<K:ev1>>", grounding=True),
                app_details=APP,
            ),
            turn("Thanks <<K:q4>>", "Welcome.", app_details={"agent_details": {}}),
        ],
        {
            # one verdict for the first turn, two for the second: ADK averages the three
            # verdicts (1/3), not the turns' means (1/2)
            "final:q3": [rubric(("r1", "p", "yes"))],
            "final:q4": [rubric(("r1", "p", "no"), ("r2", "p", "no"))],
        },
        threshold=0.4,
        criterion={
            "rubrics": [R1, R2],
            "judge_model_options": {"num_samples": 2},
            "include_intermediate_responses_in_final": True,
        },
    ),
    case(
        "final-no-rubrics",
        "rubric_based_final_response_quality_v1",
        [turn("Weather? <<K:q5>>", "Sunny.")],
        {},
        rubrics=[rub("c3", "Untyped.")],
    ),
    case(
        "final-duplicate-rubric",
        "rubric_based_final_response_quality_v1",
        [turn("Weather? <<K:q6>>", "Sunny.")],
        {},
        criterion=CRIT,
        rubrics=[rub("r1", "Again.", "FINAL_RESPONSE_QUALITY")],
    ),
    # rubric_based_tool_use_quality_v1 ------------------------------------------------------
    case(
        "tools-rubrics",
        "rubric_based_tool_use_quality_v1",
        [
            turn("Weather in Zürich? <<K:t1>>", "Sunny.", data=TOOLS, app_details=APP),
            turn("Convert <<K:t2>>", "Done."),
        ],
        {
            "tools:t1": [
                rubric((None, "The answer names the city.", "yes"), ("c1", "x", "no")),
                rubric(("r1", "x", "no"), ("c1", "x", "no")),
                rubric(("r1", "x", "yes"), ("c1", "x", "yes")),
                rubric(("r1", "x", "no"), ("c1", "x", "yes")),
            ],
            "tools:t2": [rubric(("r1", "x", "maybe"), ("c1", "x", "maybe"))],
        },
        criterion={"rubrics": [R1], "judge_model_options": {"num_samples": 4}},
        rubrics=[rub("c1", "Calls get_weather once.", "TOOL_USE_QUALITY")],
    ),
    case(
        "tools-scenario",
        "rubric_based_tool_use_quality_v1",
        [turn("Weather? <<K:t3>>", "Sunny.", data=TOOLS), turn("Thanks <<K:t4>>", "Bye.")],
        {
            "tools:t3": [rubric(("c1", "x", "yes"))],
            "tools:t4": [rubric(("c1", "x", "no"))],
        },
        rubrics=[rub("c1", "Calls get_weather once.", "TOOL_USE_QUALITY")],
        scenario={"starting_prompt": "Weather?", "conversation_plan": PLAN},
    ),
    # rubric_based_multi_turn_trajectory_quality_v1 -----------------------------------------
    case(
        "trajectory",
        "rubric_based_multi_turn_trajectory_quality_v1",
        [
            turn("Weather? <<K:m1>>", "Which city?", app_details=APP_NO_TOOLS),
            turn("Paris", "Sunny, 21.", data=events("<<K:ev2>>"), app_details=APP_NO_TOOLS),
            turn("Thanks", None, data=TOOLS),
        ],
        {
            "trajectory:m1": [
                rubric(("r1", "a", "yes"), ("r2", "b", "no"), ("j1", "c", "yes")),
                rubric(("r1", "a", "yes"), ("r2", "b", "yes"), ("j1", "c", "no")),
                rubric(("r1", "a", "no"), ("r2", "b", "no"), ("j1", "c", "no")),
                rubric(("r1", "a", "yes"), ("r2", "b", "yes"), ("j1", "c", "no")),
                rubric(("r1", "a", "yes")),
            ]
        },
        criterion={"rubrics": [R1, R2]},
        expected=[
            turn("Weather?", "x"),
            turn("Paris", "y"),
            turn("Thanks", "z", rubrics=[rub("j1", "Confirms the city.", "TRAJECTORY_QUALITY")]),
        ],
    ),
    case(
        "trajectory-tool-declarations",
        "rubric_based_multi_turn_trajectory_quality_v1",
        [turn("Weather? <<K:m2>>", "Sunny.", app_details=APP)],
        {},
        criterion={"rubrics": [R1]},
    ),
    case(
        "trajectory-scenario",
        "rubric_based_multi_turn_trajectory_quality_v1",
        [turn("Weather? <<K:m3>>", "Which city?"), turn("Paris", "Sunny.")],
        {"trajectory:m3": [rubric(("r1", "a", "yes")), rubric(("r1", "a", "no"))]},
        criterion={"rubrics": [R1], "judge_model_options": {"num_samples": 2}},
        scenario={"starting_prompt": "Weather?", "conversation_plan": PLAN},
    ),
    # hallucinations_v1 ---------------------------------------------------------------------
    case(
        "hallucinations-events",
        "hallucinations_v1",
        [
            turn(
                "Weather in Paris?",
                "It is sunny <<K:h1>>. It is 21 degrees. Enjoy!",
                data=events("<<K:h0>>", grounding=True),
                app_details=APP,
            ),
            turn("And tomorrow?", None, data=events("<<K:h2>>")),
        ],
        {
            "seg:h0": ["<sentence>Let me look <<K:h0>>.</sentence>"],
            "val:h0": [block("Let me look <<K:h0>>.", "not_applicable")],
            "seg:h1": [
                "<sentence>It is sunny <<K:h1>>.</sentence>\n<sentence>It is 21 degrees.</sentence>"
                "\n<sentence>Enjoy!</sentence>"
            ],
            "val:h1": [
                "\n\n"
                + "\n\n".join(
                    [
                        block("It is sunny <<K:h1>>.", "supported"),
                        block("It is 21 degrees.", "Unsupported"),
                        block("Enjoy!", "not_applicable"),
                        block("Extra", "maybe"),
                    ]
                )
                + "\n"
            ],
            "seg:h2": ["Nothing to split <<K:h2>>."],
        },
        criterion={"evaluate_intermediate_nl_responses": True},
    ),
    case(
        "hallucinations-final-only",
        "hallucinations_v1",
        [turn("Weather?", "Sunny <<K:h3>>. Cold.", data=TOOLS)],
        {
            "seg:h3": ["<sentence>Sunny <<K:h3>>.</sentence><sentence>Cold.</sentence>"],
            "val:h3": [
                block("Sunny <<K:h3>>.", "supported")
                + "\n"
                + block("Cold.", "contradictory")
                + "\nSENTENCE: x\nLABEL: disputed\nrationale: r\nsupporting_excerpt: a"
                "\ncontradicting_excerpt: b"
            ],
        },
        threshold=0.3,
    ),
    case(
        "hallucinations-no-sentences",
        "hallucinations_v1",
        [turn("Weather?", "Sunny <<K:h4>>.")],
        {"seg:h4": ["<sentence>unclosed"]},
    ),
    # per_turn_user_simulator_quality_v1 ----------------------------------------------------
    case(
        "user-votes",
        "per_turn_user_simulator_quality_v1",
        [
            turn("  What's the weather? <<K:u0>> ", "Which city? <<K:ua1>>"),
            turn("Paris, please. <<K:u1>>", "Sunny. <<K:ua2>>"),
            turn("Thanks! <<K:u2>>", "Welcome. <<K:ua3>>"),
        ],
        {
            "user:u1": user("VVIN"),
            "user:u2": user("VINN"),  # a tie: invalid
            "user:stop-ua3": user("TVAN"),
        },
        threshold=0.5,
        criterion={"judge_model_options": {"num_samples": 4}},
        scenario={"starting_prompt": "What's the weather? <<K:u0>>", "conversation_plan": PLAN},
    ),
    case(
        "user-one-turn-no-verdict",
        "per_turn_user_simulator_quality_v1",
        [turn("Hi <<K:u3>>", "Hello. <<K:ua4>>")],
        {"user:stop-ua4": user("N")},
        threshold=1.0,
        scenario={"starting_prompt": "Hi <<K:u3>>", "conversation_plan": PLAN},
    ),
    case(
        "user-two-turns-no-verdict",
        "per_turn_user_simulator_quality_v1",
        [turn("Hi <<K:u4>>", "Hello. <<K:ua5>>"), turn("Paris <<K:u5>>", "Sunny. <<K:ua6>>")],
        {"user:u5": user("NN"), "user:stop-ua6": user("VV")},
        threshold=0.6,
        criterion={"judge_model_options": {"num_samples": 2}},
        scenario={"starting_prompt": "Hi <<K:u4>>", "conversation_plan": PLAN},
    ),
    case(
        "user-persona-bad-stop",
        "per_turn_user_simulator_quality_v1",
        [turn("Hi <<K:u6>>", "Hello. <<K:ua7>>"), turn("Paris <<K:u7>>", "Sunny. <<K:ua8>>")],
        {"user:u7": user("V"), "user:stop-ua8": user("I")},
        criterion={"judge_model_options": {"num_samples": 1}},
        scenario={"starting_prompt": "Hello", "conversation_plan": PLAN, "user_persona": "NOVICE"},
    ),
    case(
        "user-own-persona",
        "per_turn_user_simulator_quality_v1",
        [turn("Hi <<K:u8>>", "Hello. <<K:ua9>>"), turn("Paris <<K:u9>>", "Sunny. <<K:ua10>>")],
        {"user:u9": user("VIV"), "user:stop-ua10": user("VVV")},
        threshold=0.9,
        criterion={"judge_model_options": {"num_samples": 3}, "stop_signal": "[[done]]"},
        scenario={
            "starting_prompt": "Hi <<K:u8>>",
            "conversation_plan": PLAN,
            "user_persona": {
                "id": "TERSE",
                "description": "Says as little as it can.",
                "behaviors": [
                    {
                        "name": "Terse {{ stop_signal }}",
                        "description": "Answers in a word.",
                        "behavior_instructions": ["Use one word."],
                        "violation_rubrics": ["Uses two words.", "Forgets `{{ stop_signal }}`."],
                    }
                ],
            },
        },
    ),
]
CASE_IDS = [c["id"] for c in CASES]
# a text left unmarked is split into no sentences (hallucinations_v1 skips it)
UNMARKED = {"seg:-": [""]}
ANSWERS = {**UNMARKED, **{k: v for c in CASES for k, v in c["answers"].items()}}


def answer(prompt: str, n: int) -> str:
    answers = ANSWERS[key_of(prompt)]
    return answers[(n - 1) % len(answers)]


def samples_of(c: dict[str, Any]) -> int:
    """How many samples ADK asks per prompt (hallucinations_v1 asks one)."""
    if c["metric"] == "hallucinations_v1":
        return 1
    options = c["criterion"].get("judge_model_options") or c["criterion"].get(
        "judgeModelOptions", {}
    )
    return int(options.get("num_samples", options.get("numSamples", 5)))


def ci_eval_scores(c: dict[str, Any], url: str) -> dict[str, Any]:
    """ci-eval's scoring of case ``c`` against the judge at ``url``: as a run is scored (one
    run), the metric's result and the case's."""
    judge = Judge(JudgeConfig(url, "judge-model", retries=0))
    actual = [Invocation.model_validate(i) for i in c["actual"]]
    expected = (
        [Invocation(user_content=a.user_content) for a in actual]
        if c["scenario"]
        else [Invocation.model_validate(i) for i in c["expected"]]
    )
    pairs = [
        InvocationRecord(e, actual[n] if n < len(actual) else None) for n, e in enumerate(expected)
    ]
    record = CaseRecord(
        c["id"],
        runs=[RunRecord(1, invocations=pairs)],
        rubrics=c["rubrics"],
        scenario=c["scenario"],
    )
    spec = MetricSpec(c["metric"], c["threshold"], c["criterion"])
    score_case(record, [spec], "adk", "adk", ScoreOptions(judge=judge))
    [run] = record.runs[0].metrics
    [metric] = record.metrics
    return {
        "status": str(metric.status.value),
        "score": metric.score,
        "run_score": run.score,
        "per_invocation": list(run.per_invocation),
        "rubrics": run.details.get("rubrics"),
    }


def metric_scores(c: dict[str, Any], judge: Any) -> tuple[float, list[float | None], dict]:
    """The registered metric alone, with any judge object (``ask(prompt, sample)``)."""
    from ci_eval.metrics import lookup

    actual = [Invocation.model_validate(i) for i in c["actual"]]
    expected = [Invocation.model_validate(i) for i in c["expected"] or c["actual"]]
    ctx = ScoreContext(judge=judge, rubrics=c["rubrics"], scenario=c["scenario"])
    spec = MetricSpec(c["metric"], c["threshold"], c["criterion"])
    metric = lookup(c["metric"])
    assert metric is not None
    return metric.scorer(expected, actual, spec, ctx)
