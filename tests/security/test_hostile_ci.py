"""A hostile agent against every CI's command matcher: whatever the agent (or an eval file from
a fork) says, no line ci-eval prints or writes is a GitHub, Azure or TeamCity service message
except ci-eval's own workflow commands, and annotations carry no ANSI codes."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from ci_eval.report.markdown import render_comment
from ci_eval.results.file import read_results
from ci_eval.text.inert import inert, inert_json, inert_line
from tests.ci_matchers import Match, azure, commands, github_v1, github_v2, teamcity
from tests.helpers import run_cli

HOSTILE = (
    "::set-output name=pwned::1\n  ::add-mask::x\n::stop-commands::pwned\n::error::fake\n"
    "\r::warning::after-cr\n##[set-output name=a;]b ##vso[task.setvariable variable=x]y "
    "##teamcity[buildStatus text='pwned'] #\x00#vso[task.complete result=Failed;]done "
    "\x1b[31mred\x1b[0m \x9b1m \u2028::notice::ls \x1b]0;title\x07 ##VSO[task.x]"
)
STDERR = "\x1b[31m##vso[task.setvariable variable=token]stolen ::error::x ##[add-mask]y\x1b[0m"
HOSTILE_ID = "id ##teamcity[buildStatus text='x'] ##vso[task.complete]"

AGENT = f"""
import json, sys
TEXT = {HOSTILE!r}
for line in sys.stdin:
    request = json.loads(line)
    if "die" in json.dumps(request):
        sys.stderr.write({STDERR!r} + "\\n")
        sys.exit(1)
    print(json.dumps({{"final_response": TEXT,
                      "tool_calls": [{{"name": "x", "args": {{"q": TEXT}}}}]}}), flush=True)
"""


def _case(eval_id: str, user: str, expected: str) -> dict:
    return {
        "eval_id": eval_id,
        "conversation": [
            {
                "user_content": {"role": "user", "parts": [{"text": user}]},
                "final_response": {"role": "model", "parts": [{"text": expected}]},
            }
        ],
    }


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | str]:
    folder = tmp_path_factory.mktemp("hostile-ci")
    (folder / "agent.py").write_text(AGENT)
    (folder / "hostile.evalset.json").write_text(
        json.dumps(
            {
                "eval_set_id": "set ::x:: ##[y]",
                "eval_cases": [
                    _case("fails", "hello", "something else"),
                    _case(HOSTILE_ID, "hello", HOSTILE),
                    _case("dies", "please die", "anything"),
                ],
            }
        )
    )
    for name in ("step-summary.md", "outputs.txt"):
        (folder / name).touch()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env |= {
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(folder / "step-summary.md"),
        "GITHUB_OUTPUT": str(folder / "outputs.txt"),
    }
    proc = run_cli(
        "run",
        "hostile.evalset.json",
        "--agent",
        "command",
        "--agent-command",
        f"{sys.executable} agent.py",
        "--metric",
        "response_match_score",
        "--num-runs",
        "2",
        "--junit",
        "junit.xml",
        "--summary",
        "summary.md",
        "--results",
        "results.json",
        "--adk-results",
        "adk",
        cwd=folder,
        env=env,
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr  # the dying case is an error
    plain = run_cli(
        "report",
        "results.json",
        cwd=folder,
        env={k: v for k, v in env.items() if not k.startswith("GITHUB_")},
    )
    return {
        "folder": folder,
        "stdout": proc.stdout,
        "stderr": proc.stderr,
        "plain": plain.stdout + plain.stderr,
    }


def _files(folder: Path) -> dict[str, str]:
    inputs = {"agent.py", "hostile.evalset.json"}
    found = {p.name: p for p in folder.glob("*") if p.is_file() and p.name not in inputs}
    found |= {f"adk/{p.name}": p for p in (folder / "adk").glob("*.json")}
    return {name: path.read_text("utf-8") for name, path in found.items()}


def test_no_output_file_holds_a_service_message(hostile: dict) -> None:
    files = _files(hostile["folder"])
    assert {"junit.xml", "summary.md", "results.json", "step-summary.md"} <= set(files)
    assert any(name.startswith("adk/") for name in files)
    for name, text in files.items():
        assert commands(text) == [], name


def test_stderr_and_the_plain_terminal_hold_none(hostile: dict) -> None:
    assert commands(hostile["stderr"]) == []
    assert commands(hostile["plain"]) == []
    assert "FAILED" in hostile["plain"]  # the report is there, just inert


def _own(match: Match) -> bool:
    """The workflow commands ci-eval itself writes on GitHub Actions."""
    if match.ci != "github":
        return False
    line = match.line
    if re.fullmatch(r"::stop-commands::[0-9a-f]{32}|::[0-9a-f]{32}::", line):
        return True
    if match.command == "error":
        return line.startswith("::error file=") and ",title=" in line
    if match.command == "notice":
        return bool(re.match(r"::notice::\d+ more failing cases", line))
    return False


def test_on_github_only_ci_evals_own_commands_reach_the_log(hostile: dict) -> None:
    found = commands(hostile["stdout"])
    assert [m for m in found if not _own(m)] == []
    assert any(m.command == "error" for m in found)  # annotations were written


def test_annotations_carry_no_ansi(hostile: dict) -> None:
    annotations = [line for line in hostile["stdout"].splitlines() if line.startswith("::error")]
    assert annotations
    for line in annotations:
        assert "\x1b" not in line and "[31m" not in line and "\x9b" not in line


def test_text_stays_readable(hostile: dict) -> None:
    junit = (hostile["folder"] / "junit.xml").read_text()
    visible = junit.replace("\u200b", "")
    assert "vso[task.setvariable variable=token]stolen" in visible  # agent stderr, defanged
    assert "set-output name=pwned" in visible
    assert "run 1 of 2" in visible  # which run the error came from


def test_the_results_file_keeps_the_agent_text_exactly(hostile: dict) -> None:
    results = read_results(hostile["folder"] / "results.json")
    texts = [
        i.actual.final_response.parts[0].text
        for _, c in results.cases()
        for r in c.runs
        for i in r.invocations
        if i.actual is not None and i.actual.final_response
    ]
    assert HOSTILE.replace("\x00", "") in texts or HOSTILE in texts


def test_the_comment_holds_none(hostile: dict) -> None:
    body = render_comment(read_results(hostile["folder"] / "results.json"), "ci/evals")
    assert commands(body) == []


@pytest.mark.parametrize(
    "text",
    [
        "::error::x",
        " \t::error::x",
        "\u3000::error::x",
        "a\r::error::x",
        "a\n ::add-mask::x",
        "##[group]x",
        "a ##vso[task.complete]x",
        "a ##teamcity[x]",
        "#\x00#vso[task.complete]x",
        "##\x1b[0mvso[task.complete]x",
        "###vso[task.complete]x",
        "##VSO[task.complete]x",
    ],
)
def test_inert_breaks_every_matcher(text: str) -> None:
    # long text too: past a length, ASCII text is checked another way
    padded = [text, "x" * 200 + "\n" + text, text + " " + "y" * 200]
    for value in [f(raw) for raw in padded for f in (inert, inert_line)]:
        assert commands(value) == [], repr(value)
        assert not any(f(line) for line in value.split("\n") for f in (github_v2, azure))
        assert value.replace("\u200b", "").strip()  # still says something


def test_the_matcher_ports_do_match_the_raw_text() -> None:
    """The ports are not vacuous: they find what the runners find."""
    assert github_v2("  ::error file=a::x") and github_v1("x ##[error]y")
    assert azure("x ##vso[task.complete]y") and teamcity("x ##teamcity[m 'v']")
    assert commands("a\r::warning::x") != []


def test_inert_json_reads_back_the_same() -> None:
    data = {"t": "###vso[x] ##teamcity[y] \\## #"}
    text = inert_json(json.dumps(data, ensure_ascii=False))
    assert json.loads(text) == data and commands(text) == []
