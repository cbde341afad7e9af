"""The agent is checked before the first case: a mistake in how it is named is one usage error
(exit 2, one line saying what to do), never the same ERROR on every case. An in-process ADK
agent is imported; an api_server is asked for its apps (``GET /list-apps``). An agent that does
not answer is an infrastructure error, exit 3 whatever its kind."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.adk_server import free_port
from tests.conftest import SAMPLES
from tests.helpers import run_cli
from tests.loopback import Loopback, QuietHandler

CASE = {
    "eval_id": "paris",
    "conversation": [
        {"invocation_id": "i", "user_content": {"role": "user", "parts": [{"text": "Paris?"}]}}
    ],
}


def _evals(folder: Path, app: str | None = None) -> Path:
    case = dict(CASE, session_input={"app_name": app, "user_id": "u"}) if app else CASE
    path = folder / "s.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "s", "eval_cases": [case]}))
    return path


def _usage_error(proc: object) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr  # type: ignore[attr-defined]
    lines = proc.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1, lines
    return lines[0]


# --- an ADK agent run in-process -------------------------------------------------------------


@pytest.fixture
def adk_project(tmp_path: Path) -> Path:
    pytest.importorskip("google.adk")
    # the agent's source only: the samples' __pycache__ is written by other tests' processes
    # meanwhile (a file listed, then renamed away, fails the copy)
    shutil.copytree(
        SAMPLES / "agents/weather_agent",
        tmp_path / "weather_agent",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    _evals(tmp_path)
    return tmp_path


def _run_adk(folder: Path, module: str) -> str:
    proc = run_cli("run", "s.evalset.json", "--agent", "adk", "--agent-module", module, cwd=folder)
    return _usage_error(proc)


def test_a_misspelled_agent_module_is_one_usage_error(adk_project: Path) -> None:
    line = _run_adk(adk_project, "wether_agent")
    assert "cannot import agent 'wether_agent'" in line
    assert "give the folder holding agent.py" in line


def test_an_import_error_in_agent_py_is_one_usage_error(adk_project: Path) -> None:
    agent = adk_project / "weather_agent/agent.py"
    agent.write_text(agent.read_text() + "\nimport not_a_module_anywhere\n")
    line = _run_adk(adk_project, "weather_agent")
    assert "not_a_module_anywhere" in line


def test_a_dotted_module_of_the_workspace_is_imported_in_the_agent_worker(
    adk_project: Path,
) -> None:
    """The worker has the workspace on its import path (after site-packages), as
    ``[custom_metrics]`` modules are found: a package's dotted path is an agent too."""
    (adk_project / "agents").mkdir()
    shutil.move(adk_project / "weather_agent", adk_project / "agents/weather_agent")
    proc = run_cli(
        "run", "s.evalset.json", "--agent", "adk", "--agent-module", "agents.weather_agent",
        cwd=adk_project,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr  # it ran: the case has no answer
    assert "I can only help with the weather" in proc.stdout


# --- ADK's api_server -----------------------------------------------------------------------


class _Server(Loopback):
    """Answers ``GET /list-apps`` with ``apps`` (or ``body`` as it is); counts every POST."""

    def __init__(self, apps: list[str] | None = None, body: bytes | None = None) -> None:
        self.posts = 0
        server = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                data = body if body is not None else json.dumps(apps).encode()
                self.reply(200 if self.path == "/list-apps" else 404, data)

            def do_POST(self) -> None:
                server.posts += 1
                self.reply(500, b"{}")

        super().__init__(Handler)


def _run_http(folder: Path, url: str, *args: str) -> str:
    proc = run_cli(
        "run", "s.evalset.json", "--agent", "adk-http", "--agent-url", url, "--retries", "0",
        *args, cwd=folder,
    )  # fmt: skip
    return _usage_error(proc)


def test_a_wrong_app_name_lists_the_served_apps(tmp_path: Path) -> None:
    _evals(tmp_path)
    with _Server(["weather", "travel"]) as server:
        line = _run_http(tmp_path, f"http://127.0.0.1:{server.port}", "--app-name", "wether")
    assert line == (
        f"ci-eval: app 'wether' is not served at http://127.0.0.1:{server.port}; it serves: "
        "weather, travel (set --app-name to one of them)"
    )
    assert server.posts == 0  # no session was opened


def test_no_app_name_with_several_apps_served_is_one_usage_error(tmp_path: Path) -> None:
    _evals(tmp_path)
    with _Server(["weather", "travel"]) as server:
        line = _run_http(tmp_path, f"http://127.0.0.1:{server.port}")
    assert "serves weather, travel; give --app-name" in line
    assert server.posts == 0


def test_no_app_name_with_one_app_served_uses_it(tmp_path: Path) -> None:
    _evals(tmp_path, app="not_served")
    with _Server(["weather"]) as server:
        run_cli(
            "run", "s.evalset.json", "--agent", "adk-http", "--agent-url",
            f"http://127.0.0.1:{server.port}", "--retries", "0", "--results", "r.json",
            cwd=tmp_path,
        )  # fmt: skip
    assert server.posts == 1  # its session was asked of the one app (this server refuses it)
    case = json.loads((tmp_path / "r.json").read_text())["sets"][0]["cases"][0]
    assert "/apps/weather/users/u/sessions" in case["error"], case["error"]


def test_an_adk_http_agent_where_nothing_listens_errors_every_case_in_every_report(
    tmp_path: Path,
) -> None:
    """Exit 3, as for an http agent; checked once before the first case, then each case an
    ERROR with the reason (not asked again), and the reports written."""
    _evals(tmp_path)
    url = f"http://127.0.0.1:{free_port()}"
    proc = run_cli(
        "run", "s.evalset.json", "--agent", "adk-http", "--agent-url", url, "--app-name", "w",
        "--junit", "j.xml", "--results", "r.json", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stdout + proc.stderr
    said = f"cannot reach an ADK api_server at {url} (connection refused): is it running"
    assert f"ERROR s:paris: cannot start a session: {said}" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    results = json.loads((tmp_path / "r.json").read_text())
    assert [c["status"] for s in results["sets"] for c in s["cases"]] == ["ERROR"]
    assert said in (tmp_path / "j.xml").read_text()


def test_an_http_agent_where_nothing_listens_exits_3_too(tmp_path: Path) -> None:
    _evals(tmp_path)
    url = f"http://127.0.0.1:{free_port()}"
    proc = run_cli(
        "run", "s.evalset.json", "--agent", "http", "--agent-url", url, "--retries", "0",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"POST {url}: cannot connect (connection refused)" in proc.stdout


@pytest.mark.parametrize("kind", ["adk-http", "http"])
@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("127.0.0.1:8000", "expected an http:// or https:// URL"),
        ("ftp://127.0.0.1", "expected an http:// or https:// URL"),
        ("http://", "the URL names no host"),
        ("http://127.0.0.1:80000", "the port must be a number from 1 to 65535"),
        ("http://127.0.0.1 :8000", "it has a space"),
    ],
)
def test_a_malformed_agent_url_is_one_usage_error_for_every_url_kind(
    tmp_path: Path, kind: str, url: str, said: str
) -> None:
    _evals(tmp_path)
    proc = run_cli("run", "s.evalset.json", "--agent", kind, "--agent-url", url, cwd=tmp_path)
    assert _usage_error(proc) == f"ci-eval: --agent-url {url}: {said}, e.g. http://127.0.0.1:8000"


def test_an_adk_http_url_answering_something_else_is_one_usage_error(tmp_path: Path) -> None:
    _evals(tmp_path)
    with _Server(body=b'{"status": "ok"}') as server:
        line = _run_http(tmp_path, f"http://127.0.0.1:{server.port}", "--app-name", "weather")
    assert "answered HTTP 200, not an ADK api_server's list of apps" in line
