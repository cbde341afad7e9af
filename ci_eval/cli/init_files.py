"""The two files ``ci-eval init`` writes, as text from what it found: ``ci-eval.toml`` (the
eval sets' folders, how the agent is reached, commented-out tables for what is still to
decide) and ``.github/workflows/evals.yml`` (pull requests gated against main's history and
commented; each push to main records its run in that history, on the data branch
``ci-eval-data``). No I/O: the same findings always give the same bytes, which is what makes
``init`` idempotent."""

from __future__ import annotations

import json
import re
import shlex

from ci_eval import ACTION_REPO, __version__
from ci_eval.load.find_project import ProjectFound, SetFound, parse_api_server

RELEASE = f"v{__version__}"  # the release tag the workflow names
DATA_BRANCH = "ci-eval-data"
WORKFLOW_PATH = ".github/workflows/evals.yml"
SHOWN_SETS = 20  # eval sets listed in the toml's comment

_CHECKOUT = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1"
_SETUP_PYTHON = "actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97 # v7.0.0"
_UPLOAD = "actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f # v7.0.0"
_DOWNLOAD = "actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1"


# what init copies from the repository into a workflow's script: a plain path, nothing a
# shell reads as more than a word
PLAIN_PATH = re.compile(r"[A-Za-z0-9._/-]+")
PLAIN_URL = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?/?")


def escaped(text: str) -> str:
    """A file name as text: bytes that are not UTF-8 (surrogate-escaped) as ``\\xff``."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _printable(text: str) -> str:
    """A path or phrase fit for a comment line: no line breaks or controls."""
    return "".join(c if c.isprintable() else "?" for c in escaped(text))


def plain_path(text: str | None) -> bool:
    return text is not None and PLAIN_PATH.fullmatch(text) is not None and not text.startswith("-")


def agents_folder(project: ProjectFound) -> tuple[str | None, str | None]:
    """The agents folder an ``adk api_server`` line found names, if a plain path, and why
    it is not copied when it is not (the workflow's script would run what it holds)."""
    agent = project.agent
    if not agent.evidence.startswith("`adk api_server"):
        return None, None
    folder = parse_api_server(agent.evidence.split("`")[1].split("api_server", 1)[1])[1]
    if folder is None or plain_path(folder):
        return folder, None
    return None, (
        f"the agents folder of `adk api_server` found ({_printable(folder)[:60]}) is not a plain "
        "path ([A-Za-z0-9._/-]): not copied into the workflow; add it to its serve step"
    )


def agent_url(project: ProjectFound) -> tuple[str, str | None]:
    url = project.agent.url or "http://localhost:8000"
    if PLAIN_URL.fullmatch(url):
        return url.rstrip("/"), None
    return "http://localhost:8000", (
        f"the agent's URL found ({_printable(url)[:60]}) is not a plain http URL: the workflow "
        "uses http://localhost:8000"
    )


def _toml_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string


def set_line(s: SetFound) -> str:
    """``path (id: N cases, dialect; metrics from CONFIG)`` for one eval set found."""
    config = "default metrics" if s.config == "default" else f"metrics from {s.config}"
    cases = f"{s.cases} case{'s' * (s.cases != 1)}"
    named = "" if s.eval_set_id == s.path else f"{s.eval_set_id}: "
    return _printable(f"{s.path} ({named}{cases}, {s.dialect}; {config})")


def summary(project: ProjectFound) -> str:
    sets, cases = len(project.sets), sum(s.cases for s in project.sets)
    return f"{sets} eval set{'s' * (sets != 1)}, {cases} case{'s' * (cases != 1)}"


def render_toml(project: ProjectFound, judged: list[str]) -> str:
    """ci-eval.toml for ``project``; ``judged``: the metrics found that need an LLM judge."""
    lines = [
        "# ci-eval.toml, written by `ci-eval init`: where `ci-eval run` and the GitHub Action",
        "# find the eval sets and how they reach the agent. Relative paths resolve from this",
        "# file's folder; flags and the action's inputs win over it.",
        "",
        "[run]",
    ]
    if project.sets:
        lines.append(f"# found {summary(project)}:")
        lines += [f"#   {set_line(s)}" for s in project.sets[:SHOWN_SETS]]
        if len(project.sets) > SHOWN_SETS:
            lines.append(f"#   … and {len(project.sets) - SHOWN_SETS} more")
        named = [f for f in project.folders if escaped(f) == f]
        for folder in (f for f in project.folders if escaped(f) != f):
            lines.append(
                f"# not named below: {_printable(folder)} (its name is not UTF-8, which TOML "
                "cannot hold: rename it)"
            )
        lines.append("paths = [" + ", ".join(_toml_str(f) for f in named) + "]")
    else:
        lines += [
            "# no eval set found: name the folders that will hold them (ADK's *.evalset.json)",
            '# paths = ["evals"]',
        ]
    lines += ["", "[agent]", *_agent_lines(project)]
    scenarios = sum(s.scenarios for s in project.sets)
    if judged:
        lines += [
            "",
            f"# {', '.join(judged)} need{'s' * (len(judged) == 1)} an LLM judge "
            "(an OpenAI-compatible endpoint):",
            "# [judge]",
            '# base_url = "https://api.openai.com/v1"',
            '# model = "gpt-4o-mini"',
            '# api_key_env = "OPENAI_API_KEY"  # the variable\'s name, never the key',
        ]
    if scenarios:
        lines += [
            "",
            f"# {scenarios} conversation-scenario case{'s' * (scenarios != 1)} need a user "
            "simulator (unset keys come from [judge]):",
            "# [simulator]",
            '# base_url = "https://api.openai.com/v1"',
            '# model = "gpt-4o-mini"',
            '# api_key_env = "OPENAI_API_KEY"',
        ]
    return "\n".join(lines) + "\n"


# with several agents found and none chosen, the app is left to the server (its only app) or
# to each case's session_input; a run says which apps the server has if that is not enough
_APP_NAME_UNSET = (
    "# app_name = \"my_agent\"  # unset: the server's only app, else each case's session_input"
)


def _agent_lines(project: ProjectFound) -> list[str]:
    agent = project.agent
    found = f"# found {_printable(agent.evidence)}"
    if agent.kind == "adk":
        return [
            found,
            "# It runs in a worker process without the job's credentials (pip install",
            f"# 'ci-eval[adk]'; in GitHub, the action {ACTION_REPO}/adk).",
            'kind = "adk"',
            f"module = {_toml_str(agent.module or '.')}",
        ]
    if agent.kind == "adk-http":
        app = f"app_name = {_toml_str(agent.app_name)}" if agent.app_name else _APP_NAME_UNSET
        return [found, 'kind = "adk-http"', f"url = {_toml_str(agent.url or '')}", app]
    if agent.kind == "command":
        return [
            found,
            "# Run the agent as a program that speaks ci-eval's JSON-lines contract (README: \"The",
            '# agent contract"): one request line per turn on stdin, one reply line on stdout.',
            'kind = "command"',
            '# command = "go run ./cmd/evalagent"  # to decide: the program',
        ]
    return [
        "# no agent found (an ADK agent.py with root_agent, an `adk api_server`, a trpc-agent-go",
        "# module): say how ci-eval reaches yours, e.g.",
        '# kind = "adk-http"  # or adk, http, command',
        '# url = "http://localhost:8000"',
        '# app_name = "my_agent"',
    ]


_HEAD = """\
# Agent evals, written by `ci-eval init` (the README's workflows, in one file). A pull request
# runs the eval sets, is gated against main's history and gets a comment. Each push to main
# runs them too and records the run in main's history, on the branch {branch}: it records,
# pull requests gate, so cases main already fails do not fail the push (fail-on error).
# ci-eval.toml says where the eval sets are and how the agent is reached.
name: agent evals
on:
  pull_request:
  push:
    branches: [main]
permissions: {{}}
jobs:
  evals:
    if: github.event_name == 'pull_request'
    runs-on: ubuntu-latest
    permissions:
      contents: read
      pull-requests: write    # the PR comment
    steps:
      - uses: {checkout}
        with:
          fetch-depth: 0      # the bar's settings are read at the merge base
          persist-credentials: false
"""

_PR_RUN = """\
      - id: evals
        uses: {action}
        with:
          baseline-branch: {branch}  # main's history, read through git
          # a judge's answers kept across jobs: main's job signs them (cache-sign-key-env),
          # pull requests trust only those (docs/reference.md#response-cache)
          # cache: ${{{{ runner.temp }}}}/ci-eval-cache
          # cache-public-key: .ci-eval/cache-key.pub
"""

_RECORD = """\
  record:
    if: github.event_name == 'push'
    runs-on: ubuntu-latest
    permissions:
      contents: read
    steps:
      - uses: {checkout}
        with:
          persist-credentials: false
      - uses: {checkout}; main's history; absent on the very first run
        with:
          ref: {branch}
          path: .ci-eval-data
          persist-credentials: false
        continue-on-error: true
"""

_RECORD_RUN = """\
      # appends this run to main's history (the first run creates it); only errors (cases
      # that could not be scored) fail the push
      - run: >
          ci-eval run --baseline .ci-eval-data/baseline.json --update-baseline --fail-on error
          --junit ci-eval-junit.xml --results ci-eval-results.json
      - if: ${{{{ !cancelled() }}}}
        uses: {upload}
        with:
          name: ci-eval-history
          path: .ci-eval-data/baseline.json
          include-hidden-files: true   # .ci-eval-data is a hidden folder
  history:                    # the only job that can write, and it runs none of the agent's code
    needs: record
    if: ${{{{ !cancelled() && github.event_name == 'push' }}}}
    runs-on: ubuntu-latest
    permissions:
      contents: write         # push to the {branch} branch
    concurrency:
      group: ci-eval-history  # one history update at a time
      cancel-in-progress: false
    steps:
      - uses: {download}
        with:
          name: ci-eval-history
          path: .ci-eval-data
      - name: Keep main's history
        working-directory: .ci-eval-data
        env:
          TOKEN: ${{{{ github.token }}}}
          REPOSITORY: ${{{{ github.repository }}}}
          SHA: ${{{{ github.sha }}}}
        run: |
          git init -q -b {branch}
          git config user.name ci-eval && git config user.email ci-eval@users.noreply.github.com
          auth="AUTHORIZATION: basic $(printf x-access-token:%s "$TOKEN" | base64 -w0)"
          url="https://github.com/$REPOSITORY"
          git -c http.extraheader="$auth" fetch -q --depth=1 "$url" {branch} &&
            git reset -q --soft FETCH_HEAD || true   # the first run starts the branch
          git add baseline.json && git commit -qm "history: $SHA" || exit 0
          git -c http.extraheader="$auth" push "$url" HEAD:{branch}
"""


def _python(install: str) -> list[str]:
    return [
        f"      - uses: {_SETUP_PYTHON}",
        "        with:",
        '          python-version: "3.11"',
        f"      - run: pip install {install}",
    ]


def _requirements(project: ProjectFound) -> str:
    return "-r requirements.txt " if project.requirements == "requirements.txt" else ""


def _serve(project: ProjectFound, code: str) -> list[str]:
    """The step that starts the adk api_server on the runner, where ci-eval reaches it at
    localhost, and waits until it answers."""
    url, _ = agent_url(project)
    tail = url.rsplit(":", 1)[-1]
    port = tail if tail.isdigit() else "8000"
    folder, _ = agents_folder(project)  # only a plain path: the script runs what it holds
    serve = f"adk api_server {shlex.quote(folder) + ' ' if folder else ''}--port {port}"
    return [
        f"      - name: Start the agent ({code})",
        "        run: |",
        f"          {serve} > agent.log 2>&1 &",
        f"          timeout 60 bash -c 'until curl -sf {url}/list-apps; do sleep 1; done'",
    ]


def render_workflow(project: ProjectFound) -> str:
    kind = project.agent.kind
    reqs = _requirements(project)
    package = f"{ACTION_REPO}@{RELEASE}"
    pr_steps: list[str] = []
    record_steps: list[str] = []
    if kind == "adk":
        action = f"{ACTION_REPO}/adk@{RELEASE}   # the image with google-adk: the agent runs in it"
        record_steps = _python(f'{reqs}"ci-eval[adk] @ git+https://github.com/{package}"')
    elif kind == "adk-http":
        action = f"{ACTION_REPO}/setup@{RELEASE}   # on the runner: the agent is at localhost"
        pr_steps = _python(f"{reqs}google-adk") + _serve(project, "this pull request's code")
        record_steps = _python(f'{reqs}google-adk "ci-eval @ git+https://github.com/{package}"')
        record_steps += _serve(project, "main's code")
    elif kind == "command":
        action = f"{ACTION_REPO}/setup@{RELEASE}   # on the runner, with the agent's toolchain"
        todo = "      # set up what [agent] command needs here (e.g. actions/setup-go)"
        pr_steps = [todo]
        record_steps = [todo, *_python(f'"ci-eval @ git+https://github.com/{package}"')]
    else:
        action = f"{ACTION_REPO}@{RELEASE}   # set [agent] in ci-eval.toml first"
        record_steps = _python(f'{reqs}"ci-eval @ git+https://github.com/{package}"')
    lines = [_HEAD.format(branch=DATA_BRANCH, checkout=_CHECKOUT)]
    lines += [line + "\n" for line in pr_steps]
    lines.append(_PR_RUN.format(action=action, branch=DATA_BRANCH))
    lines.append(_RECORD.format(checkout=_CHECKOUT, branch=DATA_BRANCH))
    lines += [line + "\n" for line in record_steps]
    lines.append(_RECORD_RUN.format(branch=DATA_BRANCH, upload=_UPLOAD, download=_DOWNLOAD))
    return "".join(lines)
