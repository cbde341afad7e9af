"""``ci-eval init`` on a copy of an LLM-free ADK project: it finds the agent, the eval set and its
test_config.json, writes ci-eval.toml and the workflow, changes nothing the second time, keeps
an edited file unless --force, and ``ci-eval run`` then works with no hand edits. The finding
and the rendering are checked on their own for the other kinds of agent, and the workflow
against the inputs the action files declare."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from ci_eval import ACTION_REPO as ACTION
from ci_eval.cli.init_files import (
    COMMENT_WORKFLOW_PATH,
    WORKFLOW_PATH,
    render_comment_workflow,
    render_toml,
    render_workflow,
)
from ci_eval.load.find_project import (
    AgentFound,
    ProjectFound,
    assigns_root_agent,
    find_agent,
    find_project,
    parse_api_server,
)
from ci_eval.settings.toml import load_config
from tests.conftest import REPO
from tests.helpers import git, run_cli

AGENT_PY = '''\
"""An ADK agent with a Python tool and a scripted model in place of an LLM: no key, no
network, the same answer every time."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from google.adk.agents import Agent
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.genai import types

WEATHER = {"Paris": "sunny, 22 degrees", "London": "rainy, 15 degrees"}


def get_weather(city: str) -> dict:
    """The weather in a city."""
    return {"report": WEATHER.get(city, "unknown")}


class ScriptedModel(BaseLlm):
    """Calls get_weather for the last word of the user's message, then says what it returned."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1].parts[0]
        if last.function_response is not None:
            part = types.Part(text=f"It is {last.function_response.response['report']}.")
        else:
            city = (last.text or "").rstrip("?.!").split()[-1]
            part = types.Part(
                function_call=types.FunctionCall(name="get_weather", args={"city": city})
            )
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


root_agent = Agent(name="my_agent", model=ScriptedModel(model="scripted"), tools=[get_weather])
'''


def _case(case_id: str, city: str, answer: str, args: dict[str, str]) -> dict:
    return {
        "eval_id": case_id,
        "conversation": [
            {
                "invocation_id": f"inv-{case_id}",
                "user_content": {
                    "role": "user",
                    "parts": [{"text": f"What is the weather in {city}?"}],
                },
                "final_response": {"role": "model", "parts": [{"text": answer}]},
                "intermediate_data": {"tool_uses": [{"name": "get_weather", "args": args}]},
            }
        ],
        "session_input": {"app_name": "my_agent", "user_id": "user", "state": {}},
    }


EVAL_SET = {
    "eval_set_id": "weather",
    "eval_cases": [
        _case("paris", "Paris", "It is sunny, 22 degrees.", {"city": "Paris"}),
        _case("london", "London", "It is rainy, 15 degrees.", {"city": "London"}),
        # the agent never passes units: fails, as a suite's known failure does
        _case("berlin", "Berlin", "It is snowing.", {"city": "Berlin", "units": "metric"}),
    ],
}
CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    """A repository holding an LLM-free ADK agent, its eval set and test_config.json beside
    it, as `adk eval` expects them."""
    root = tmp_path / "repo"
    agent = root / "my_agent"
    agent.mkdir(parents=True)
    (agent / "__init__.py").write_text("from . import agent  # noqa: F401\n")
    (agent / "agent.py").write_text(AGENT_PY)
    (agent / "weather.evalset.json").write_text(json.dumps(EVAL_SET, indent=2))
    (agent / "test_config.json").write_text(json.dumps(CONFIG))
    git(root, "init", "-q")
    yield root  # the agent runs in a worker process: nothing of it stays in this one


def _files(root: Path) -> dict[str, str]:
    return {name: (root / name).read_text() for name in ("ci-eval.toml", WORKFLOW_PATH)}


def test_init_writes_the_config_and_the_workflow_and_says_what_it_found(project: Path) -> None:
    done = run_cli("init", cwd=project)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert 'my_agent/agent.py, which assigns root_agent → kind "adk", module "my_agent"' in out
    assert "1 eval set, 3 cases" in out
    assert "my_agent/weather.evalset.json (weather: 3 cases, adk; metrics from " in out
    assert "configs: my_agent/test_config.json" in out
    assert "wrote ci-eval.toml" in out and f"wrote {WORKFLOW_PATH}" in out
    assert "nothing changed" not in out
    assert "create the baseline: push to main once" in out
    data = tomllib.loads((project / "ci-eval.toml").read_text())
    assert data["run"] == {"paths": ["my_agent"]}
    assert data["agent"] == {"kind": "adk", "module": "my_agent"}
    settings = load_config(project / "ci-eval.toml", required=True)  # ci-eval's own reading
    assert settings.agent.kind == "adk"
    assert (project / (settings.agent.module or "")).resolve() == (project / "my_agent").resolve()
    # the pull request's agent runs behind the api_server the job starts, not in ci-eval's
    steps = yaml.safe_load((project / WORKFLOW_PATH).read_text())["jobs"]["evals"]["steps"]
    ours = next(s for s in steps if s.get("uses", "").startswith(f"{ACTION}/setup@"))
    assert ours["with"]["agent"] == "adk-http" and ours["with"]["app-name"] == "my_agent"
    served = [s["run"] for s in steps if "adk api_server" in s.get("run", "")]
    assert len(served) == 1 and "adk api_server . --port 8000 " in served[0]


def test_a_second_init_changes_nothing_and_says_so(project: Path) -> None:
    assert run_cli("init", cwd=project).returncode == 0
    before = _files(project)
    stamps = {n: (project / n).stat().st_mtime_ns for n in before}
    done = run_cli("init", cwd=project)
    assert done.returncode == 0
    assert "unchanged ci-eval.toml" in done.stdout and "nothing changed" in done.stdout
    assert "wrote" not in done.stdout
    assert _files(project) == before
    assert {n: (project / n).stat().st_mtime_ns for n in before} == stamps


def test_an_edited_file_is_kept_unless_force_replaces_it(project: Path) -> None:
    run_cli("init", cwd=project)
    written = (project / "ci-eval.toml").read_text()
    edited = written + "\n[judge]\nmodel = 'mine'\n"
    (project / "ci-eval.toml").write_text(edited)
    kept = run_cli("init", cwd=project)
    assert kept.returncode == 0
    assert "kept ci-eval.toml: it exists and differs" in kept.stdout
    assert (project / "ci-eval.toml").read_text() == edited
    forced = run_cli("init", "--force", cwd=project)
    assert forced.returncode == 0
    assert "replaced ci-eval.toml" in forced.stdout
    assert f"unchanged {WORKFLOW_PATH}" in forced.stdout
    assert (project / "ci-eval.toml").read_text() == written


def test_dry_run_prints_the_files_and_writes_nothing(project: Path) -> None:
    done = run_cli("init", str(project), "--dry-run")
    assert done.returncode == 0
    assert "would write ci-eval.toml" in done.stdout
    assert "--- ci-eval.toml\n" in done.stdout and 'module = "my_agent"' in done.stdout
    # the workflow as it will be written: its token header is not masked
    assert 'auth="AUTHORIZATION: basic $(printf' in done.stdout
    assert not (project / "ci-eval.toml").exists() and not (project / ".github").exists()


def test_a_path_that_is_not_a_directory_is_a_usage_error(project: Path) -> None:
    done = run_cli("init", str(project / "nope"))
    assert done.returncode == 2
    assert "not a directory" in done.stderr
    assert not (project / "ci-eval.toml").exists()


def test_from_a_subfolder_init_sets_up_the_repository_root(project: Path) -> None:
    done = run_cli("init", cwd=project / "my_agent")
    assert done.returncode == 0
    assert (project / "ci-eval.toml").is_file() and not (project / "my_agent/ci-eval.toml").exists()


# --- then `ci-eval run`, with no hand edits ------------------------------------------------------

_VERDICT = re.compile(r"^gate (passed|failed).*$", re.MULTILINE)


def _verdict(stdout: str) -> str:
    """The verdict line, without where the (missing) default baseline would be: that path is
    said as the user would type it from where ci-eval runs."""
    found = _VERDICT.findall(stdout) and _VERDICT.search(stdout)
    assert found, stdout
    return re.sub(r"; gate on thresholds only: no baseline at \S+", "", found.group(0))


@pytest.fixture
def initialised(project: Path) -> Path:
    pytest.importorskip("google.adk")
    assert run_cli("init", cwd=project).returncode == 0
    return project


def test_run_after_init_works_from_the_root(initialised: Path) -> None:
    done = run_cli("run", cwd=initialised)
    assert done.returncode == 1, done.stdout + done.stderr  # berlin fails its thresholds
    assert "3 cases: 2 passed, 1 failed, 0 errors" in done.stdout
    assert _verdict(done.stdout) == "gate failed: 1 failed case (weather:berlin)"


def test_run_after_init_gives_the_same_verdict_from_a_subfolder(initialised: Path) -> None:
    root = run_cli("run", cwd=initialised)
    sub = run_cli("run", cwd=initialised / "my_agent")
    assert (sub.returncode, _verdict(sub.stdout)) == (root.returncode, _verdict(root.stdout))


# --- the workflow ---------------------------------------------------------------------------------

_ACTION_FILES = {"": "action.yml", "/adk": "adk/action.yml", "/setup": "setup/action.yml"}


def _projects() -> dict[str, ProjectFound]:
    root = Path("/repo")
    agents = {
        "adk": AgentFound("adk", module="my_agent", evidence="an ADK agent: my_agent/agent.py"),
        "adk-http": AgentFound(
            "adk-http",
            url="http://localhost:8080",
            app_name="my_agent",
            evidence="`adk api_server agents --port 8080` in Makefile",
        ),
        "command": AgentFound("command", evidence="a trpc-agent-go module: go.mod"),
        "none": AgentFound(),
    }
    return {kind: ProjectFound(root, agent) for kind, agent in agents.items()}


@pytest.mark.parametrize("kind", ["adk", "adk-http", "command", "none"])
def test_the_workflow_parses_and_uses_only_inputs_and_options_that_exist(kind: str) -> None:
    workflow = yaml.safe_load(render_workflow(_projects()[kind]))
    assert set(workflow[True]) == {"pull_request", "push"}  # YAML 1.1 reads `on` as True
    assert workflow["permissions"] == {}
    jobs = workflow["jobs"]
    # a pull request: the action, gated against main's history on the data branch
    assert jobs["evals"]["if"] == "github.event_name == 'pull_request'"
    ours = [s for s in jobs["evals"]["steps"] if s.get("uses", "").startswith(ACTION)]
    assert len(ours) == 1
    variant = ours[0]["uses"].split("@")[0].removeprefix(ACTION)
    assert variant == "/setup"  # on the runner, the agent apart from ci-eval's process
    if kind in ("adk", "adk-http"):
        assert ours[0]["with"]["agent"] == "adk-http"
    declared = yaml.safe_load((REPO / _ACTION_FILES[variant]).read_text())["inputs"]
    assert set(ours[0]["with"]) <= set(declared)
    assert ours[0]["with"]["baseline-branch"] == "ci-eval-data"
    # a push to main: records the run without failing on cases main already fails
    assert jobs["record"]["if"] == "github.event_name == 'push'"
    runs = [s["run"] for s in jobs["record"]["steps"] if "ci-eval run" in s.get("run", "")]
    assert len(runs) == 1
    words = runs[0].split()
    assert "--update-baseline" in words and words[words.index("--fail-on") + 1] == "error"
    if kind in ("adk", "adk-http"):  # main's agent, served as the pull request's is
        assert words[words.index("--agent") + 1] == "adk-http"
        assert words[words.index("--agent-url") + 1] == ours[0]["with"]["agent-url"]
    known = run_cli("run", "--help").stdout
    assert all(w in known for w in words if w.startswith("--"))
    assert jobs["history"]["needs"] == "record"
    assert jobs["history"]["permissions"] == {"contents": "write"}
    # nothing but the history job can write
    assert all(
        j["permissions"].get("contents") == "read" for n, j in jobs.items() if n != "history"
    )


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return path


def test_the_workflows_pass_githubs_schema_and_zizmor(tmp_path: Path) -> None:
    flows = tmp_path / ".github" / "workflows"
    flows.mkdir(parents=True)
    for kind, found in _projects().items():
        (flows / f"evals-{kind}.yml").write_text(render_workflow(found))
        (flows / f"evals-{kind}-forks.yml").write_text(render_workflow(found, forks=True))
    (flows / "evals-comment.yml").write_text(render_comment_workflow())
    files = sorted(str(p) for p in flows.iterdir())
    schema = subprocess.run(
        [_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *files],
        capture_output=True,
        text=True,
        check=False,
    )
    assert schema.returncode == 0, schema.stdout + schema.stderr
    config = ("--config", str(REPO / ".github" / "zizmor.yml"))
    lint = subprocess.run(
        [_tool("zizmor"), "--offline", "--format=json", "--no-progress", *config, str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert json.loads(lint.stdout or "[]") == [], lint.stdout[-3000:]


# --- finding the agent --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "binds"),
    [
        ("root_agent = Agent(name='a')", True),
        ("root_agent: Agent = make()", True),
        ("from .impl import root_agent", True),
        ("from .impl import agent as root_agent", True),
        ("try:\n    root_agent = a()\nexcept ImportError:\n    root_agent = b()", True),
        ("def build():\n    root_agent = a()\n    return root_agent", False),
        ("agent = Agent(name='root_agent')", False),
        ("root_agent = (", False),  # does not parse
    ],
)
def test_root_agent_is_found_by_parsing_not_importing(source: str, binds: bool) -> None:
    assert assigns_root_agent(source) is binds


@pytest.mark.parametrize(
    ("args", "port", "folder"),
    [
        (" agents --port 8080 &", 8080, "agents"),
        (" --port=9000 --host 0.0.0.0 src/agents", 9000, "src/agents"),
        (" --host 0.0.0.0", 8000, None),
        (" . && echo up", 8000, "."),
    ],
)
def test_an_api_server_command_line_gives_its_port_and_agents_folder(
    args: str, port: int, folder: str | None
) -> None:
    assert parse_api_server(args) == (port, folder)


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


def test_an_agent_in_a_test_folder_comes_after_the_real_one(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "tests/fake_agent/agent.py": "root_agent = 1\n",
            "agents/support/agent.py": "root_agent = 2\n",
            ".venv/lib/x/agent.py": "root_agent = 3\n",
            "agents/helper/agent.py": "agent = 4\n",
        },
    )
    found = find_agent(tmp_path)
    assert (found.kind, found.module, found.others) == (
        "adk",
        "agents/support",
        ("tests/fake_agent",),
    )


def test_an_api_server_in_a_makefile_is_an_adk_http_agent(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "Makefile": "serve:\n\tadk api_server agents --port 8080 --reload\n",
            "agents/support/__init__.py": "from . import agent\n",
            "agents/support/agent.py": "from .impl import make\nagent = make()\n",
        },
    )
    found = find_agent(tmp_path)
    assert (found.kind, found.url, found.app_name) == (
        "adk-http",
        "http://localhost:8080",
        "support",
    )
    assert "in Makefile" in found.evidence
    toml = tomllib.loads(render_toml(ProjectFound(tmp_path, found), []))
    assert toml["agent"] == {
        "kind": "adk-http",
        "url": "http://localhost:8080",
        "app_name": "support",
    }
    assert "adk api_server agents --port 8080 > agent.log" in render_workflow(
        ProjectFound(tmp_path, found)
    )


def test_a_trpc_agent_go_module_is_a_command_agent_left_to_fill(tmp_path: Path) -> None:
    _write(tmp_path, {"go.mod": "module x\n\nrequire trpc.group/trpc-go/trpc-agent-go v0.4.0\n"})
    found = find_agent(tmp_path)
    assert found.kind == "command" and "go.mod" in found.evidence
    text = render_toml(ProjectFound(tmp_path, found), [])
    assert tomllib.loads(text)["agent"] == {"kind": "command"}
    assert "# command = " in text


def test_nothing_found_is_said_and_left_to_the_user(tmp_path: Path) -> None:
    done = run_cli("init", str(tmp_path))
    assert done.returncode == 0
    assert "agent: none" in done.stdout and "0 eval sets, 0 cases" in done.stdout
    assert "set [agent] kind" in done.stdout and "add an eval set" in done.stdout
    assert "not a git repository's root" in done.stdout
    assert tomllib.loads((tmp_path / "ci-eval.toml").read_text()) == {"run": {}, "agent": {}}


def test_a_metric_that_needs_a_judge_is_said_with_a_commented_judge(project: Path) -> None:
    config = {"criteria": {"final_response_match_v2": 0.8}}
    (project / "my_agent" / "test_config.json").write_text(json.dumps(config))
    done = run_cli("init", cwd=project)
    assert "add a judge for final_response_match_v2" in done.stdout
    text = (project / "ci-eval.toml").read_text()
    assert "# [judge]" in text and "judge" not in tomllib.loads(text)


def test_the_eval_set_folders_are_the_run_paths(tmp_path: Path) -> None:
    sets = {
        "evals/a/one.evalset.json": EVAL_SET,
        "evals/a/deep/two.evalset.json": {**EVAL_SET, "eval_set_id": "two"},
        "agents/x/three.evalset.json": {**EVAL_SET, "eval_set_id": "three"},
    }
    for name, data in sets.items():
        _write(tmp_path, {name: json.dumps(data)})
    found = find_project(tmp_path)
    assert found.folders == ["agents/x", "evals/a"]
    assert [s.cases for s in found.sets] == [3, 3, 3]


# --- where the workflow takes ci-eval from, and forks -------------------------------------------


def test_action_names_where_every_step_takes_ci_eval_from(project: Path) -> None:
    done = run_cli("init", "--action", "my-org/ci-eval-fork@v2.3.4", "--forks", cwd=project)
    assert done.returncode == 0, done.stderr
    flows = [(project / WORKFLOW_PATH).read_text(), (project / COMMENT_WORKFLOW_PATH).read_text()]
    assert all(ACTION not in flow for flow in flows)
    assert "uses: my-org/ci-eval-fork/setup@v2.3.4" in flows[0]
    assert '"ci-eval @ git+https://github.com/my-org/ci-eval-fork@v2.3.4"' in flows[0]
    assert '"ci-eval @ git+https://github.com/my-org/ci-eval-fork@v2.3.4"' in flows[1]
    assert "placeholder" not in done.stdout


def test_without_action_the_placeholder_is_the_first_thing_to_decide(project: Path) -> None:
    out = run_cli("init", "--dry-run", cwd=project).stdout
    first = out.split("To decide\n", 1)[1].splitlines()[0]
    assert f"it names {ACTION}@v" in first and "a placeholder" in first
    assert "--action OWNER/REPO@REF" in first


@pytest.mark.parametrize(
    "given",
    [
        "acme",
        "acme/ci-eval",
        "acme/ci-eval@",
        "-acme/ci-eval@v1",
        "acme-/ci-eval@v1",
        "acme/ci eval@v1",
        "acme/ci-eval@v1;rm -rf /",
        "acme/ci-eval@../main",
        "acme/ci-eval@-v1",
        "acme/ci-eval@v1$(id)",
        "acme/..@v1",
        "acme/ci-eval@v1\nrun: x",
    ],
)
def test_an_action_that_is_not_owner_repo_at_ref_is_one_usage_error(
    project: Path, given: str
) -> None:
    done = run_cli("init", "--action", given, cwd=project)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "--action" in done.stderr and "OWNER/REPO@REF" in done.stderr
    assert not (project / "ci-eval.toml").exists()


def test_forks_get_a_job_that_posts_nothing_and_a_trusted_comment_workflow(project: Path) -> None:
    done = run_cli("init", "--forks", cwd=project)
    assert done.returncode == 0, done.stderr
    assert f"wrote {COMMENT_WORKFLOW_PATH}" in done.stdout
    assert "--forks" not in done.stdout.split("To decide\n", 1)[1]
    evals = yaml.safe_load((project / WORKFLOW_PATH).read_text())["jobs"]["evals"]
    assert evals["permissions"] == {"contents": "read"}  # no pull-requests: write
    ours = next(s for s in evals["steps"] if s.get("uses", "").startswith(f"{ACTION}/setup@"))
    assert ours["with"]["comment"] is False
    uploaded = next(s for s in evals["steps"] if "upload-artifact" in s.get("uses", ""))
    assert uploaded["with"]["name"] == "ci-eval"
    assert uploaded["with"]["path"].split() == ["ci-eval-results.json", "event.json"]
    comment = yaml.safe_load((project / COMMENT_WORKFLOW_PATH).read_text())
    assert comment[True]["workflow_run"]["workflows"] == ["agent evals"]
    job = comment["jobs"]["comment"]
    assert job["permissions"]["pull-requests"] == "write"
    # it runs none of the fork's code: the artifact is data, the checkout the base branch's
    assert all("ref" not in s.get("with", {}) or s["with"]["ref"] == "ci-eval-data"
               for s in job["steps"] if "checkout" in s.get("uses", ""))  # fmt: skip
    assert "ci-eval compare ci-eval/ci-eval-results.json" in json.dumps(job)


def test_a_case_added_to_an_eval_set_leaves_ci_eval_toml_as_written(project: Path) -> None:
    """ci-eval.toml's comment lists the sets found, not their case counts: a second init does
    not find the file changed because the sets grew."""
    assert run_cli("init", cwd=project).returncode == 0
    path = project / "my_agent/weather.evalset.json"
    grown = json.loads(path.read_text())
    grown["eval_cases"].append(_case("rome", "Rome", "It is unknown.", {"city": "Rome"}))
    path.write_text(json.dumps(grown))
    done = run_cli("init", cwd=project)
    assert "unchanged ci-eval.toml" in done.stdout, done.stdout
    assert "(weather: 4 cases, adk;" in done.stdout  # what init says it found still counts


def test_orchestrate_sets_say_every_case_needs_a_user_simulator(
    corpus: Path, tmp_path: Path
) -> None:
    shutil.copytree(corpus / "watsonx-orchestrate", tmp_path / "repo")
    git(tmp_path / "repo", "init", "-q")
    out = run_cli("init", "--dry-run", str(tmp_path / "repo")).stdout
    todo = out.split("To decide\n", 1)[1]
    assert "add a user simulator: an LLM plays the user of every Orchestrate case" in todo
