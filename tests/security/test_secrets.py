"""Nothing secret leaves: tokens planted in every channel a run touches — the GitHub token, the
judge's key, the agent's bearer token, a ``--header`` value, the agent URL's ``user:password``
and ``?api_key=``, agent and judge error bodies that echo them, an agent reply that quotes them —
appear in no output file, not on stdout or stderr, not in the baseline and not in the comment the
(loopback) GitHub received. A real ``ci-eval run`` in a fresh interpreter: the process boundary
and every sink are the point."""

from __future__ import annotations

import base64
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLES
from tests.github_server import GitHubServer
from tests.helpers import run_cli
from tests.loopback import Loopback, QuietHandler

GITHUB_TOKEN = "ghs_plantedGithubToken4711xyz"
JUDGE_KEY = "judgeKey-Planted-8c1e5a"
AGENT_TOKEN = "agentBearer.Planted_93fd"
HEADER_VALUE = "hdrSecret-Planted-5521"
URL_PASSWORD = "urlPass-Planted-7719"
QUERY_SECRET = "querySecret-Planted-2604"
BASIC = base64.b64encode(f"bot:{URL_PASSWORD}".encode()).decode()
SECRETS = [GITHUB_TOKEN, JUDGE_KEY, AGENT_TOKEN, HEADER_VALUE, URL_PASSWORD, QUERY_SECRET, BASIC]

EVAL_SET = {
    "eval_set_id": "secrets",
    "eval_cases": [
        {
            "eval_id": name,
            "conversation": [
                {
                    "invocation_id": "t1",
                    "user_content": {"role": "user", "parts": [{"text": text}]},
                    "final_response": {"role": "model", "parts": [{"text": "It is sunny."}]},
                }
            ],
        }
        for name, text in (("answered", "weather please"), ("refused", "unauthorized"))
    ],
}


class EchoServer(Loopback):
    """An agent (``/turn``) and a judge (``/v1/chat/completions``) that echo every credential
    they receive — in their replies and in their error bodies — as careless servers do."""

    def __init__(self) -> None:
        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                seen = (
                    f"Authorization: {self.headers.get('Authorization')}, "
                    f"X-Api-Key: {self.headers.get('X-Api-Key')}, path {self.path}, "
                    f"Bearer {AGENT_TOKEN}"
                )
                if self.path.startswith("/v1/"):
                    status, reply = (
                        401,
                        {"error": {"message": f"Incorrect API key provided: {JUDGE_KEY}; {seen}"}},
                    )
                elif body.get("message") == "unauthorized":
                    status, reply = 401, {"error": f"invalid token: {seen}"}
                else:
                    status, reply = 200, {"final_response": f"It is sunny. (debug: {seen})"}
                self.reply(status, json.dumps(reply).encode())

        super().__init__(Handler)


def _leaks(text: str) -> list[str]:
    """Every planted secret, or a 10-character prefix of one (a cut secret is still a leak)."""
    return [s for s in SECRETS if s[:10] in text]


@pytest.fixture
def planted_run(tmp_path: Path) -> Iterator[dict[str, Any]]:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals/secrets.evalset.json").write_text(json.dumps(EVAL_SET))
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    out = tmp_path / "out"
    env = {
        "PATH": os.environ["PATH"],
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_STEP_SUMMARY": str(out / "step-summary.md"),
        "GITHUB_OUTPUT": str(out / "step-output.txt"),
        "GITHUB_TOKEN": GITHUB_TOKEN,
        "JUDGE_KEY": JUDGE_KEY,
        "AGENT_TOKEN": AGENT_TOKEN,
    }
    out.mkdir()
    (out / "step-summary.md").touch()
    (out / "step-output.txt").touch()
    with EchoServer() as echo, GitHubServer() as hub:
        env["GITHUB_API_URL"] = hub.url
        url = f"http://bot:{URL_PASSWORD}@127.0.0.1:{echo.port}/turn?api_key={QUERY_SECRET}"
        proc = run_cli(
            "run",
            "evals",
            "--agent",
            "http",
            "--agent-url",
            url,
            "--agent-token-env",
            "AGENT_TOKEN",
            "--header",
            f"X-Api-Key={HEADER_VALUE}",
            "--retries",
            "0",
            "--metric",
            "final_response_match_v2",
            "--judge-url",
            f"http://127.0.0.1:{echo.port}/v1",
            "--judge-model",
            "m",
            "--judge-key-env",
            "JUDGE_KEY",
            "--results",
            str(out / "results.json"),
            "--junit",
            str(out / "junit.xml"),
            "--summary",
            str(out / "summary.md"),
            "--adk-results",
            str(out / "adk"),
            "--baseline",
            str(out / "baseline.json"),
            "--update-baseline",
            "--comment",
            cwd=tmp_path,
            env=env,
        )
        yield {"proc": proc, "out": out, "hub": hub}


def test_no_planted_secret_reaches_any_output(planted_run: dict[str, Any]) -> None:
    proc, out, hub = planted_run["proc"], planted_run["out"], planted_run["hub"]
    assert proc.returncode == 3, proc.stdout + proc.stderr  # the refused case is an error
    files = sorted(p for p in out.rglob("*") if p.is_file())
    names = {p.relative_to(out).as_posix() for p in files}
    assert {"results.json", "junit.xml", "summary.md", "baseline.json"} <= names
    assert {"step-summary.md", "step-output.txt", "adk/secrets.evalset_result.json"} <= names
    for path in files:
        assert _leaks(path.read_text("utf-8")) == [], path
    # the runner swallows ::add-mask:: lines; nothing else on stdout or stderr may hold a secret
    stdout = [x for x in proc.stdout.splitlines() if not x.startswith("::add-mask::")]
    assert _leaks("\n".join(stdout)) == []
    assert _leaks(proc.stderr) == []
    posted = [body for method, _, body in hub.requests if method in ("POST", "PATCH")]
    assert len(posted) == 1
    assert _leaks(json.dumps(posted[0], ensure_ascii=False)) == []
    assert hub.authorization == f"Bearer {GITHUB_TOKEN}"  # the token was used, not shown


def test_the_secrets_were_really_echoed_and_masked_in_every_channel(
    planted_run: dict[str, Any],
) -> None:
    """The run above is a real test: the servers did echo the secrets, and what reached the
    reports is the masked echo."""
    proc, out, hub = planted_run["proc"], planted_run["out"], planted_run["hub"]
    results = json.loads((out / "results.json").read_text())
    cases = {c["eval_id"]: c for s in results["sets"] for c in s["cases"]}
    assert cases["refused"]["status"] == "ERROR"
    error = cases["refused"]["error"]
    assert "HTTP 401" in error and "Bearer ***" in error and "X-Api-Key: ***" in error
    reply = cases["answered"]["runs"][0]["invocations"][0]["actual"]["final_response"]
    assert "Bearer ***" in json.dumps(reply)
    judged = cases["answered"]["metrics"][0]
    assert judged["status"] == "ERROR" and "Incorrect API key provided: ***" in judged["reason"]
    assert results["agent"].startswith("HTTP agent at http://***@127.0.0.1:")
    assert results["agent"].endswith("/turn?api_key=***")
    baseline = json.loads((out / "baseline.json").read_text())
    assert "http://***@" in baseline["provenance"]["agent"]
    # under GitHub Actions every secret is masked before anything else is printed
    lines = proc.stdout.splitlines()
    masks = [x.removeprefix("::add-mask::") for x in lines if x.startswith("::add-mask::")]
    first_other = next(i for i, x in enumerate(lines) if not x.startswith("::add-mask::"))
    assert all(x.startswith("::add-mask::") for x in lines[:first_other])
    assert not any(x.startswith("::add-mask::") for x in lines[first_other:])
    for secret in (GITHUB_TOKEN, JUDGE_KEY, AGENT_TOKEN, HEADER_VALUE, URL_PASSWORD, QUERY_SECRET):
        assert secret in masks
    assert [m for m, _, _ in hub.requests if m in ("POST", "PATCH")] == ["POST"]


def _env_dump_agent(tmp_path: Path) -> str:
    script = tmp_path / "agent.py"
    script.write_text(
        "import json, os, sys\n"
        f"json.dump(dict(os.environ), open({str(tmp_path / 'env.json')!r}, 'w'))\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps({'final_response': 'It is sunny.'}), flush=True)\n"
    )
    return f"{sys.executable} {script}"


@pytest.mark.parametrize("passed", [[], ["JUDGE_KEY", "GITHUB_TOKEN"]])
def test_a_command_agent_gets_no_tokens_unless_passed_explicitly(
    tmp_path: Path, passed: list[str]
) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "GITHUB_TOKEN": GITHUB_TOKEN,
        "INPUT_GITHUB-TOKEN": GITHUB_TOKEN,
        "ACTIONS_RUNTIME_TOKEN": "runtimeToken-123456",
        "JUDGE_KEY": JUDGE_KEY,
        "OPENAI_API_KEY": "the-agent-needs-this",
    }
    args = [f"--agent-env={name}" for name in passed]
    proc = run_cli(
        "run",
        str(SAMPLES / "evals/weather_basic.evalset.json"),
        "--case",
        "weather_basic:paris_weather",
        "--agent",
        "command",
        "--agent-command",
        _env_dump_agent(tmp_path),
        "--judge-key-env",
        "JUDGE_KEY",
        *args,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    seen = json.loads((tmp_path / "env.json").read_text())
    assert seen["OPENAI_API_KEY"] == "the-agent-needs-this"  # the agent's own keys stay
    assert "INPUT_GITHUB-TOKEN" not in seen and "ACTIONS_RUNTIME_TOKEN" not in seen
    for name in ("JUDGE_KEY", "GITHUB_TOKEN"):
        assert (name in seen) == (name in passed)
