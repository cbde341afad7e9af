"""The redaction layer: known secret values in every encoding a sink uses, and the shapes that
are secrets whoever's they are."""

from __future__ import annotations

import html
import io
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_eval.model import Content, Part
from ci_eval.publish.github import Workflow, escape_data, escape_property
from ci_eval.report.markdown import code, md
from ci_eval.text import redact
from ci_eval.text.inert import strip_ansi
from tests.helpers import run_replay

ENCODERS = {
    "plain": lambda s: s,
    "json": lambda s: json.dumps(s)[1:-1],
    "json-utf8": lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    "xml": lambda s: html.escape(s, quote=True),
    "markdown-inline": md,
    "markdown-code": code,
    "workflow-data": escape_data,
    "workflow-property": escape_property,
    "url": lambda s: quote(s, safe=""),
}

secret_text = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"), blacklist_characters="*"),
    min_size=redact.MIN_SECRET,
    max_size=40,
).filter(lambda s: s == s.strip() and strip_ansi(s) == s)
around = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@given(secret_text, around, around, st.sampled_from(sorted(ENCODERS)))
def test_a_known_secret_is_masked_in_every_encoding_a_sink_uses(
    secret: str, before: str, after: str, encoding: str
) -> None:
    encode = ENCODERS[encoding]
    text = encode(f"{before} {secret} {after}")
    assert encode(secret) not in redact.Redactor([secret]).text(text)


@given(around)
def test_redaction_is_idempotent_and_changes_nothing_without_secrets(text: str) -> None:
    r = redact.Redactor(["hunter22-secret"])
    once = r.text(text)
    assert r.text(once) == once
    if "hunter22-secret" not in text and redact.Redactor().text(text) == text:
        assert once == text


fragments = st.sampled_from(
    [
        "http://u:p4ss@h/t",
        "?api_key=",
        "&token=",
        "Bearer ",
        "Authorization: ",
        "Basic ",
        "abc123xyz",
        ":",
        ",",
        " ",
        "&amp;",
        "@",
        "hunter22-secret",
    ]
)


@given(st.lists(fragments | around, max_size=12))
def test_redaction_is_idempotent_on_text_full_of_secret_shapes(parts: list[str]) -> None:
    r = redact.Redactor(["hunter22-secret"])
    once = r.text("".join(parts))
    assert r.text(once) == once
    assert "hunter22-secret" not in once


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://bot:PASS@host/turn", "http://***@host/turn"),
        ("https://TOKENVALUE@github.com/x", "https://***@github.com/x"),
        ("POST http://h/turn?api_key=abc123&x=1", "POST http://h/turn?api_key=***&x=1"),
        ("http://h/?a=1&access_token=t0k&sig=s1g", "http://h/?a=1&access_token=***&sig=***"),
        ("<a href='http://h/?x=1&amp;token=t0k'>", "<a href='http://h/?x=1&amp;token=***'>"),
        ("invalid token: Bearer abc.def-ghi", "invalid token: Bearer ***"),
        ('{"Authorization": "Bearer zzzzzz"}', '{"Authorization": "Bearer ***"}'),
        ("Authorization: token 12345678", "Authorization: token ***"),
        ("authorization=Basic dXNlcjpwYXNz", "authorization=Basic ***"),
        ("key ghp_" + "a" * 36 + " leaked", "key *** leaked"),
        ("OpenAI sk-proj-" + "b" * 30, "OpenAI ***"),
        ("see http://example.com/a?b=c", "see http://example.com/a?b=c"),
        (
            "POST http://h/t?api_key=***: cannot connect",
            "POST http://h/t?api_key=***: cannot connect",
        ),
        ("the key=value pair; a Bearer token", "the key=value pair; a Bearer token"),
        # a scheme word ending an id or a path, or credentials on another line, is no credential
        ("### math-basic\n\nevals/math-basic.evalset.json", None),
        ("evals/basic tokens-and-more", None),
        ("Bearer\nabcdefgh", None),
    ],
)
def test_secret_shapes_are_masked_whoever_they_belong_to(text: str, expected: str | None) -> None:
    assert redact.Redactor().text(text) == (text if expected is None else expected)


# ids and paths as eval files name them, with the words the shapes look for among them
plain_word = st.sampled_from(["basic", "bearer", "token", "key", "auth", "sk", "math", "a1"])
plain_name = st.lists(
    plain_word | st.from_regex(r"[A-Za-z0-9._-]{1,12}", fullmatch=True), min_size=1, max_size=4
).map(lambda words: "-".join(words))
plain_path = st.lists(plain_name, min_size=1, max_size=4).map("/".join)
# the well-known token formats are secrets whatever surrounds them (ghp_…, sk-…, AKIA…)
_TOKEN_FORMAT = redact._SHAPES[-1][1]


@given(plain_name, plain_path)
def test_redaction_never_masks_an_id_or_a_path_where_the_reports_put_them(
    eval_id: str, path: str
) -> None:
    """No secret registered: the heading over a set's path, the terminal's set line, a table
    row and a file:line come out as they went in."""
    from hypothesis import assume

    texts = [
        f"### {eval_id}\n\n{path} · 2 cases · means: tool_trajectory_avg_score 1",
        f"{eval_id} ({path}): 2 passed, 0 failed",
        f"| {eval_id} | {path} | 2 |",
        f"{path}:12 {eval_id}",
    ]
    assume(not any(_TOKEN_FORMAT.search(t) for t in texts))
    for text in texts:
        assert redact.Redactor().text(text) == text


def test_short_values_are_not_secrets() -> None:
    r = redact.Redactor(["prod", "x", "", None])  # type: ignore[list-item]
    assert r.secrets == frozenset()
    assert r.text("evals/prod/x.json") == "evals/prod/x.json"


def test_a_new_secret_is_announced_once() -> None:
    seen: list[str] = []
    r = redact.Redactor(on_new=seen.append)
    r.add("s3cret-one", "s3cret-one", "s3cret-two")
    r.add("s3cret-one")
    assert seen == ["s3cret-one", "s3cret-two"]


def test_url_secrets_are_the_password_and_credential_parameters() -> None:
    url = "http://bot:pa%21ss@host/turn?api_key=abc123&page=2&sig=zz"
    assert set(redact.url_secrets(url)) == {"pa%21ss", "pa!ss", "abc123", "zz"}
    assert redact.url_secrets("http://host/turn?page=2") == []
    assert redact.url_secrets(None) == []


def test_environment_secrets_by_name() -> None:
    env = {
        "GITHUB_TOKEN": "ghs_1",
        "INPUT_GITHUB-TOKEN": "ghs_2",
        "OPENAI_API_KEY": "sk-3",
        "MY_SECRET": "s4",
        "DB_PASSWORD": "p5",
        "PATH": "/usr/bin",
        "TOKENIZERS_PARALLELISM": "false",
        "SSH_AUTH_SOCK": "/tmp/agent",
        "HOME": "/root",
    }
    assert set(redact.env_secrets(env)) == {"ghs_1", "ghs_2", "sk-3", "s4", "p5"}


def test_child_environment_withholds_tokens_unless_kept() -> None:
    env = {
        "PATH": "/bin",
        "GITHUB_TOKEN": "t",
        "GH_TOKEN": "t",
        "INPUT_GITHUB-TOKEN": "t",
        "ACTIONS_RUNTIME_TOKEN": "t",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "t",
        "JUDGE": "k",
        "OPENAI_API_KEY": "agent's own",
    }
    child = redact.child_environment(env, drop=["JUDGE"])
    assert child == {"PATH": "/bin", "OPENAI_API_KEY": "agent's own"}
    kept = redact.child_environment(env, drop=["JUDGE"], keep=["JUDGE", "GITHUB_TOKEN"])
    assert kept["JUDGE"] == "k" and kept["GITHUB_TOKEN"] == "t"


@dataclass
class _Record:
    error: str | None
    parts: list[Content] = field(default_factory=list)
    extra: dict[str, object] = field(default_factory=dict)


def test_scrub_reaches_dataclasses_models_dicts_and_keys_in_place() -> None:
    record = _Record(
        "HTTP 401: Bearer abcdefgh",
        [Content(role="model", parts=[Part(text="token is s3cret-value")])],
        {"s3cret-value": ["x s3cret-value", ("s3cret-value", 1)]},
    )
    same = redact.Redactor(["s3cret-value"]).scrub(record)
    assert same is record
    assert record.error == "HTTP 401: Bearer ***"
    assert record.parts[0].parts[0].text == "token is ***"
    assert record.extra == {"***": ["x ***", ("***", 1)]}


def test_workflow_commands_never_carry_a_secret() -> None:
    previous = redact.install(redact.Redactor(["s3cret:value,1"]))
    try:
        out = io.StringIO()
        Workflow(out).command("error", "failed with s3cret:value,1", title="s3cret:value,1")
        assert "s3cret" not in out.getvalue()
    finally:
        redact.install(previous)


def test_settings_register_the_runs_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    from ci_eval.settings import RunSettings

    settings = RunSettings()
    settings.agent.url = "http://u:urlpass1@h/turn?token=qrysecret"
    settings.agent.headers = {"X-Key": "headerval1"}
    settings.agent.token_env = "AGENT_T"
    settings.judge.api_key_env = "JUDGE_K"
    previous = redact.install(redact.Redactor())
    try:
        redact.register_settings(settings, {"AGENT_T": "agenttok1", "JUDGE_K": "judgekey1"})
        assert {"urlpass1", "qrysecret", "headerval1", "agenttok1", "judgekey1"} <= set(
            redact.current().secrets
        )
    finally:
        redact.install(previous)


def test_long_text_is_redacted_like_short_text() -> None:
    r = redact.Redactor(["s3cret:value,1"])
    piece = (
        "x" * 1000 + " s3cret:value,1 " + escape_property("s3cret:value,1") + " Bearer abcdefgh "
    )
    long_text = piece * 100
    assert len(long_text) > 1 << 16
    assert r.text(long_text) == r.text(piece) * 100
    assert "s3cret" not in r.text(long_text)


def test_scrubbing_by_units_redacts_what_walking_every_string_redacts() -> None:
    from ci_eval.model import Content, Invocation
    from ci_eval.model.results import MetricResult
    from ci_eval.model.status import Status
    from ci_eval.results.file import CaseRecord, InvocationRecord, RunRecord

    def case(answer: str) -> CaseRecord:
        expected = Invocation(user_content=Content.from_text("hi", "user"))
        actual = Invocation(
            user_content=Content.from_text("hi", "user"),
            final_response=Content.from_text(answer, "model"),
        )
        metric = MetricResult("m", Status.FAILED, 0.5, 1.0, [0.5], answer, {answer: [answer]})
        run = RunRecord(1, [InvocationRecord(expected, actual)], metrics=[metric])
        return CaseRecord("c", "f.json", 1, runs=[run], extensions={"note": answer})

    secret = 'tok"en\\-s3cret é'  # its JSON form differs from the text itself
    answers = ["clean", f"the key is {secret}!", "see https://user:pw@host/x", "x" * 70_000]
    for answer in answers:
        walked, by_units = case(answer), case(answer)
        redact.Redactor([secret]).scrub(walked)
        redact.Redactor([secret]).scrub(by_units, units=(CaseRecord,))
        assert by_units == walked
        shown = by_units.runs[0].invocations[0].actual.final_response.text()
        assert secret not in shown and "pw@" not in shown
        assert secret not in by_units.extensions["note"]
        assert (shown == answer) == (answer in ("clean", "x" * 70_000))
        # the same once the invocations are kept as their JSON text
        walked, by_units = case(answer).compact(), case(answer).compact()
        redact.Redactor([secret]).scrub(walked)
        redact.Redactor([secret]).scrub(by_units, units=(CaseRecord,))
        assert by_units == walked
        assert (by_units == case(answer)) == (answer in ("clean", "x" * 70_000))


def test_a_trpc_sets_path_shows_in_the_summary_under_its_id(corpus: Path, tmp_path: Path) -> None:
    """trpc-agent-go's math-basic set: its heading "### math-basic" above its path once made
    the path read as Basic credentials, and the summary showed "*** · 2 cases"."""
    example = corpus / "trpc-agent-go/trpc-group-trpc-agent-go/examples/evaluation/local"
    data = tmp_path / "examples/evaluation/callbacks/data"
    shutil.copytree(example / "data", data)
    shutil.copytree(example / "output", tmp_path / "out")
    where = "examples/evaluation/callbacks/data/math-eval-app/math-basic.evalset.json"
    done = run_replay(where, "--summary", "s.md", replay="out", cwd=tmp_path, env={})
    assert done.returncode == 0, done.stderr
    summary = (tmp_path / "s.md").read_text()
    assert f"{where} · 2 cases" in summary
    assert "***" not in summary


def test_a_scrub_that_redacts_nothing_keeps_what_was_computed_from_the_results() -> None:
    """The verdict is kept on the results until a scrub redacts something from them: one that
    found nothing (nearly every run) leaves each text as it was, and the verdict is not
    worked out again for the reports."""
    from ci_eval.gate.verdict import verdict
    from ci_eval.model.results import CaseRecord
    from tests.factories import results

    run = results({"a": "FAILED", "b": "PASSED"}, reasons={"a": "leaked s3cret-value here"})
    previous = redact.install(redact.Redactor(["s3cret-value"]))
    try:
        redact.current().scrub(results({"x": "PASSED"}), units=(CaseRecord,))
        first = verdict(run)
        redact.current().scrub(results({"y": "PASSED"}), units=(CaseRecord,))
        assert verdict(run) is first  # nothing redacted: kept
        redact.current().scrub(run, units=(CaseRecord,))  # this one redacts the reason
        assert verdict(run) is not first
    finally:
        redact.install(previous)


def _written_case(answer: str):
    from ci_eval.model import Content, Invocation
    from ci_eval.results.file import CaseRecord, InvocationRecord, RunRecord

    expected = Invocation(user_content=Content.from_text("hi", "user"))
    actual = Invocation(
        user_content=Content.from_text("hi", "user"),
        final_response=Content.from_text(answer, "model"),
    )
    run = RunRecord(1, [InvocationRecord(expected, actual)])
    return CaseRecord("c", "f.json", 1, runs=[run]).compact()


def _write(tmp_path: Path, case) -> None:
    from ci_eval.results.file import write_results
    from tests.factories import results

    written = results({})
    written.sets[0].cases.append(case)
    write_results(tmp_path / "results.json", written)


def test_a_case_the_results_file_searched_whole_is_not_searched_again(tmp_path: Path) -> None:
    from ci_eval.results.file import CaseRecord

    previous = redact.install(redact.Redactor(["s3cret-value"]))
    try:
        case = _written_case("nothing to hide")
        _write(tmp_path, case)
        searched = []
        redact.current()._clean = lambda obj: searched.append(obj) or True  # type: ignore[method-assign]
        redact.current().scrub(case, units=(CaseRecord,))
        assert searched == []  # vouched for by the file's search of its line
        redact.current().scrub(case, units=(CaseRecord,))
        assert searched == [case]  # once: the next scrub searches it
    finally:
        redact.install(previous)


def test_a_secret_learnt_after_the_results_file_was_written_is_still_redacted(
    tmp_path: Path,
) -> None:
    from ci_eval.results.file import CaseRecord

    previous = redact.install(redact.Redactor(["s3cret-value"]))
    try:
        case = _written_case("the token is ghx-learnt-later-0123")
        _write(tmp_path, case)
        redact.current().add("ghx-learnt-later-0123")  # a report's token, say
        redact.current().scrub(case, units=(CaseRecord,))
        shown = case.runs[0].invocations[0].actual.final_response.text()
        assert "ghx-learnt-later-0123" not in shown and "***" in shown
    finally:
        redact.install(previous)


def test_a_case_whose_line_holds_a_secret_is_walked_and_redacted(tmp_path: Path) -> None:
    from ci_eval.results.file import CaseRecord

    previous = redact.install(redact.Redactor(["s3cret-value"]))
    try:
        case = _written_case("leaked s3cret-value here")
        _write(tmp_path, case)
        assert "s3cret-value" not in (tmp_path / "results.json").read_text()
        redact.current().scrub(case, units=(CaseRecord,))
        shown = case.runs[0].invocations[0].actual.final_response.text()
        assert "s3cret-value" not in shown
    finally:
        redact.install(previous)
