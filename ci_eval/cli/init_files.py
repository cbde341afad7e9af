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
from dataclasses import dataclass
from pathlib import PurePosixPath

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
    url = project.agent.url or "http://127.0.0.1:8000"
    if PLAIN_URL.fullmatch(url):
        return url.rstrip("/"), None
    return "http://127.0.0.1:8000", (
        f"the agent's URL found ({_printable(url)[:60]}) is not a plain http URL: the workflow "
        "uses http://127.0.0.1:8000"
    )


def _toml_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string


def set_line(s: SetFound, counted: bool = True) -> str:
    """``path (id: N cases, dialect; metrics from CONFIG)`` for one eval set found; not
    ``counted`` (ci-eval.toml's comment), without the cases: a case added is no reason for
    the next init to find the file changed."""
    config = "default metrics" if s.config == "default" else f"metrics from {s.config}"
    cases = f"{s.cases} case{'s' * (s.cases != 1)}, " if counted else ""
    named = (
        "" if s.eval_set_id == s.path else f"{s.eval_set_id}: " if counted else f"{s.eval_set_id}, "
    )
    return _printable(f"{s.path} ({named}{cases}{s.dialect}; {config})")


def _sets_found(project: ProjectFound) -> str:
    sets = len(project.sets)
    return f"{sets} eval set{'s' * (sets != 1)}"


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
        lines.append(f"# found {_sets_found(project)}:")
        lines += [f"#   {set_line(s, counted=False)}" for s in project.sets[:SHOWN_SETS]]
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
            "# Here it runs in a worker process without the job's credentials (pip install",
            "# 'ci-eval[adk]'); the workflow serves it with `adk api_server` and reaches it as",
            "# kind adk-http, apart from ci-eval's process.",
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


@dataclass(frozen=True)
class ActionRef:
    """Where the workflow takes ci-eval from: ``OWNER/REPO@REF`` (``--action``), in one place
    for every step that names it. ``placeholder``: init's default, a name to replace."""

    repo: str  # OWNER/REPO
    ref: str  # a release tag or a commit SHA
    placeholder: bool = False

    def uses(self, variant: str = "") -> str:
        return f"{self.repo}{variant}@{self.ref}"

    def package(self, extra: str = "") -> str:
        """The pip requirement that installs ci-eval from this repository at this ref."""
        return f'"ci-eval{extra} @ git+https://github.com/{self.repo}@{self.ref}"'

    def __str__(self) -> str:
        return self.uses()


DEFAULT_ACTION = ActionRef(ACTION_REPO, RELEASE, placeholder=True)
# GitHub's names: an owner of letters, digits and inner hyphens (≤ 39), a repository of
# letters, digits, ".", "_" and "-"; a ref as git allows it, less what a shell or YAML reads
_ACTION = re.compile(
    r"(?P<repo>[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}/[A-Za-z0-9._-]{1,100})"
    r"@(?P<ref>[A-Za-z0-9._/-]{1,200})"
)


def parse_action(text: str) -> ActionRef:
    """``OWNER/REPO@REF``; ValueError says what is wrong in a phrase."""
    match = _ACTION.fullmatch(text)
    repo = match and match.group("repo").split("/")[1]
    ref = match and match.group("ref")
    if (
        not match
        or repo in (".", "..")
        or not ref
        or ref.startswith(("-", "/", "."))
        or ref.endswith(("/", ".", ".lock"))
        or ".." in ref
        or "//" in ref
    ):
        raise ValueError(
            f"{_printable(text)[:80]!r} is not OWNER/REPO@REF: give the repository you take "
            "ci-eval from and a release tag or commit SHA, e.g. my-org/ci-eval@v0.1.0"
        )
    return ActionRef(match.group("repo"), ref)


_HEAD = """\
# Agent evals, written by `ci-eval init` (the README's workflows, in one file). A pull request
# runs the eval sets, is gated against main's history and {gets}. Each push to main
# runs them too and records the run in main's history, on the branch {branch}: it records,
# pull requests gate, so cases main already fails do not fail the push (fail-on error).
# ci-eval.toml says where the eval sets are and how the agent is reached; ci-eval comes from
# {action}.
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
{comment_permission}    steps:
      - uses: {checkout}
        with:
          fetch-depth: 0      # the bar's settings are read at the merge base
          persist-credentials: false
"""

_PR_RUN = """\
      - id: evals
        uses: {uses}   # {where}
        with:
{inputs}          baseline-branch: {branch}  # main's history, read through git
          # a judge's answers kept across jobs: main's job signs them (cache-sign-key-env),
          # pull requests trust only those (docs/reference.md#response-cache)
          # cache: ${{{{ runner.temp }}}}/ci-eval-cache
          # cache-public-key: .ci-eval/cache-key.pub
"""

# a fork's pull request: a read-only token and no secrets, so it posts nothing; the results
# and the event go to evals-comment.yml, which judges them again and comments
_FORK_UPLOAD = """\
          comment: false      # the token is read-only: evals-comment.yml posts it
      - if: ${{{{ !cancelled() }}}}
        run: cp "$GITHUB_EVENT_PATH" event.json   # the PR's number, for the comment
      - if: ${{{{ !cancelled() }}}}
        uses: {upload}
        with:
          name: ci-eval
          path: |
            ci-eval-results.json
            event.json
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
          --junit ci-eval-junit.xml --results ci-eval-results.json{agent}
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

COMMENT_WORKFLOW_PATH = ".github/workflows/evals-comment.yml"

_COMMENT_FLOW = """\
# Agent evals' comment, written by `ci-eval init --forks`: pull requests from forks, phase 2.
# Trusted: it runs none of the fork's code. It judges the results evals.yml uploaded again
# against main's history (the fork's job wrote them, so their comparison is not trusted) and
# posts the comment; without a history yet, each case's thresholds decide.
name: agent evals comment
on:
  workflow_run:   # zizmor: ignore[dangerous-triggers] runs none of the fork's code
    workflows: [agent evals]
    types: [completed]
permissions: {{}}
jobs:
  comment:
    if: github.event.workflow_run.event == 'pull_request'
    runs-on: ubuntu-latest
    permissions:
      contents: read
      pull-requests: write
      actions: read   # the other run's artifact
    steps:
      - uses: {download}
        with:
          name: ci-eval
          run-id: ${{{{ github.event.workflow_run.id }}}}
          github-token: ${{{{ github.token }}}}
          path: ci-eval
      - uses: {checkout}
        with:
          persist-credentials: false   # the base branch: its ci-eval.toml and accept.toml
      - uses: {checkout}; main's history; absent before main's first run
        with:
          ref: {branch}
          path: .ci-eval-data
          persist-credentials: false
        continue-on-error: true
      - uses: {setup_python}
        with:
          python-version: "3.11"
      - run: pip install {package}
      - env:
          GITHUB_TOKEN: ${{{{ github.token }}}}
          GITHUB_EVENT_PATH: ci-eval/event.json   # the PR's event, from the artifact
        run: |
          history=()
          if [ -f .ci-eval-data/baseline.json ]; then
            history=(--baseline .ci-eval-data/baseline.json)
          fi
          ci-eval compare ci-eval/ci-eval-results.json "${{history[@]}}" --comment
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


def served(project: ProjectFound) -> tuple[str | None, str | None, str | None]:
    """For an ADK agent (in a folder, or behind the ``adk api_server`` found): the agents
    folder ``adk api_server`` serves (only a plain path: the script runs what it holds), the
    app ci-eval asks for, and why a folder found is not copied."""
    agent = project.agent
    if agent.kind == "adk":
        module = PurePosixPath(agent.module or ".")  # the agent's folder
        folder, app = module.parent.as_posix(), module.name or None
        if plain_path(folder) and (app is None or plain_path(app)):
            return folder, app, None
        return (
            None,
            None,
            (
                f"the agent's folder ({_printable(module.as_posix())[:60]}) is not a plain path "
                "([A-Za-z0-9._/-]): not copied into the workflow; add it to its serve step"
            ),
        )
    folder, why = agents_folder(project)
    return folder, agent.app_name, why


def _serve(project: ProjectFound, code: str) -> list[str]:
    """The step that starts the adk api_server on the runner, where ci-eval reaches it at
    localhost, and waits until it answers."""
    url, _ = agent_url(project)
    tail = url.rsplit(":", 1)[-1]
    port = tail if tail.isdigit() else "8000"
    folder = served(project)[0]
    serve = f"adk api_server {shlex.quote(folder) + ' ' if folder else ''}--port {port}"
    return [
        f"      - name: Start the agent ({code})",
        "        run: |",
        f"          {serve} > agent.log 2>&1 &",
        f"          timeout 60 bash -c 'until curl -sf {url}/list-apps; do sleep 1; done'",
    ]


def _served_inputs(project: ProjectFound) -> tuple[list[str], str]:
    """The action's inputs and the run's flags that reach the api_server the job started."""
    url, _ = agent_url(project)
    app = served(project)[1]
    inputs = ["agent: adk-http", f"agent-url: {url}"] + ([f"app-name: {app}"] if app else [])
    flags = f" --agent adk-http --agent-url {url}" + (f" --app-name {app}" if app else "")
    return [f"          {line}\n" for line in inputs], flags


def render_workflow(
    project: ProjectFound, action: ActionRef = DEFAULT_ACTION, forks: bool = False
) -> str:
    """evals.yml: a pull request's job (with ``forks``, one that posts nothing and uploads its
    results for evals-comment.yml), main's record job and the job that keeps its history.
    Every job runs the agent on the runner, apart from ci-eval's process: an ADK agent behind
    the ``adk api_server`` the job starts, a command as ci-eval's child."""
    kind = project.agent.kind
    reqs = _requirements(project)
    pr_steps: list[str] = []
    record_steps: list[str] = []
    inputs: list[str] = []
    flags = ""
    if kind in ("adk", "adk-http"):
        where = "on the runner: the agent is the api_server above"
        pr_steps = _python(f"{reqs}google-adk") + _serve(project, "this pull request's code")
        record_steps = _python(f"{reqs}google-adk {action.package()}")
        record_steps += _serve(project, "main's code")
        inputs, flags = _served_inputs(project)
    elif kind == "command":
        where = "on the runner, with the agent's toolchain"
        todo = "      # set up what [agent] command needs here (e.g. actions/setup-go)"
        pr_steps = [todo]
        record_steps = [todo, *_python(action.package())]
    else:
        where = "set [agent] in ci-eval.toml first"
        record_steps = _python(f"{reqs}{action.package()}")
    gets = "its results go to evals-comment.yml, which comments" if forks else "gets a comment"
    comment = "" if forks else "      pull-requests: write    # the PR comment\n"
    lines = [
        _HEAD.format(
            branch=DATA_BRANCH,
            checkout=_CHECKOUT,
            action=action.uses(),
            gets=gets,
            comment_permission=comment,
        )
    ]
    lines += [line + "\n" for line in pr_steps]
    lines.append(
        _PR_RUN.format(
            uses=action.uses("/setup"), where=where, inputs="".join(inputs), branch=DATA_BRANCH
        )
    )
    if forks:
        lines.append(_FORK_UPLOAD.format(upload=_UPLOAD))
    lines.append(_RECORD.format(checkout=_CHECKOUT, branch=DATA_BRANCH))
    lines += [line + "\n" for line in record_steps]
    lines.append(
        _RECORD_RUN.format(branch=DATA_BRANCH, upload=_UPLOAD, download=_DOWNLOAD, agent=flags)
    )
    return "".join(lines)


def render_comment_workflow(action: ActionRef = DEFAULT_ACTION) -> str:
    """evals-comment.yml, for pull requests from forks (``init --forks``)."""
    return _COMMENT_FLOW.format(
        download=_DOWNLOAD,
        checkout=_CHECKOUT,
        branch=DATA_BRANCH,
        setup_python=_SETUP_PYTHON,
        package=action.package(),
    )
