"""``ci-eval init``: set ci-eval up in an existing repository — find the agent and the eval
sets (:mod:`ci_eval.load.find_project`), write ``ci-eval.toml`` and the workflow
(:mod:`ci_eval.cli.init_files`), and say what was found and what is left to decide. Running it
again with the same findings changes nothing; a file that exists is replaced only with
``--force``."""

# no `from __future__ import annotations`: typer would compile and evaluate every option's
# annotation string at each start (a cost even `ci-eval --help` pays)

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ci_eval.cli.common import fail, say
from ci_eval.errors import EXIT_OK, InputError

if TYPE_CHECKING:
    from ci_eval.cli.init_files import ActionRef
    from ci_eval.load.find_project import ProjectFound


def init(
    path: Annotated[
        Path | None,
        typer.Argument(
            metavar="PATH",
            help="The repository to set up [default: the root of the repository holding the "
            "current directory, else the current directory].",
            show_default=False,
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace files that exist and differ.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the files instead of writing them.")
    ] = False,
    action: Annotated[
        str | None,
        typer.Option(
            "--action",
            metavar="OWNER/REPO@REF",
            help="Where the workflow takes ci-eval from: the repository and a release tag or "
            "commit SHA [default: a placeholder, said under To decide].",
            show_default=False,
        ),
    ] = None,
    forks: Annotated[
        bool,
        typer.Option(
            "--forks",
            help="Pull requests come from forks (a public repository): their job posts "
            "nothing and uploads its results; evals-comment.yml comments.",
        ),
    ] = False,
) -> None:
    """Set up a repository: write ci-eval.toml and an evals workflow.

    Finds the agent (an ADK agent.py with root_agent, an `adk api_server`, a trpc-agent-go
    module) and the eval sets with their configs, writes ci-eval.toml and
    .github/workflows/evals.yml (pull requests gated against main's history; pushes to main
    record it), and prints what it found and what is left to decide.

    Idempotent: an existing file is kept unless --force. Exits 0, or 2 when PATH is not a
    directory or a file cannot be written.

    Example: ci-eval init --action my-org/ci-eval@v0.1.0 --dry-run
    """
    from ci_eval.cli.init_files import (
        COMMENT_WORKFLOW_PATH,
        DEFAULT_ACTION,
        WORKFLOW_PATH,
        parse_action,
        render_comment_workflow,
        render_toml,
        render_workflow,
    )
    from ci_eval.io.files import repo_root
    from ci_eval.load.find_project import find_project
    from ci_eval.settings.model import CONFIG_NAME

    if path is not None and not path.is_dir():
        fail(InputError("not a directory: give the repository's root folder", path=str(path)))
    try:
        source = DEFAULT_ACTION if action is None else parse_action(action)
    except ValueError as exc:
        fail(InputError(f"--action: {exc}"))
    root = path if path is not None else (repo_root(Path.cwd()) or Path.cwd())
    project = find_project(root)
    judged = _judged(project)
    files = [
        (CONFIG_NAME, render_toml(project, judged)),
        (WORKFLOW_PATH, render_workflow(project, source, forks)),
    ]
    if forks:
        files.append((COMMENT_WORKFLOW_PATH, render_comment_workflow(source)))
    from ci_eval.cli.init_files import escaped

    where = escaped(project.root.as_posix())
    say(f"ci-eval init: {where}" + (" (the repository root)" if project.in_repository else ""))
    for line in _found(project):
        say(line)
    say("Files")
    done = [_put(project.root / name, name, text, force, dry_run) for name, text in files]
    for phrase in done:
        say(f"  {phrase}")
    if not dry_run and not any(p.startswith(("wrote", "replaced")) for p in done):
        say("  nothing changed")
    say("To decide")
    for line in _to_decide(project, judged, source, forks):
        say(f"  - {line}")
    say("Next: ci-eval validate, then ci-eval run")
    if dry_run:
        for name, text in files:  # as written: the workflow's token header is no secret
            typer.echo(f"\n--- {name}\n{text}", nl=False)
    raise typer.Exit(EXIT_OK)


def _link_on_the_way(root: Path, name: str) -> str | None:
    """The first part of ``name`` (from ``root``) that is a symlink, or that resolves outside
    ``root``: init writes only inside the repository, never through a link."""
    here = root
    top = root.resolve()
    for part in Path(name).parts:
        here = here / part
        if here.is_symlink():
            return Path(here).relative_to(root).as_posix()
        if here.exists() and not here.resolve().is_relative_to(top):
            return Path(here).relative_to(root).as_posix()
    return None


def _put(target: Path, name: str, text: str, force: bool, dry_run: bool) -> str:
    """Write one file unless it is there (or ``dry_run``); what was done, in a phrase."""
    root = target
    for _ in Path(name).parts:
        root = root.parent
    link = _link_on_the_way(root, name)
    if link is not None:
        return (
            f"{'would keep' if dry_run else 'kept'} {name}: {link} is a symlink (init writes "
            "only inside the repository, never through a link)"
        )
    state = _state(target, text)
    if state == "unchanged":
        return f"unchanged {name}: already what init writes"
    if state == "new" or (state == "differs" and force):
        return _written(target, name, text, new=state == "new", dry_run=dry_run)
    if state == "other":
        return f"{'would keep' if dry_run else 'kept'} {name}: it is not a file"
    return (
        f"{'would keep' if dry_run else 'kept'} {name}: it exists and differs from what init "
        "would write (--force replaces it" + ("" if dry_run else "; --dry-run shows it") + ")"
    )


def _written(target: Path, name: str, text: str, new: bool, dry_run: bool) -> str:
    if dry_run:
        return f"would {'write' if new else 'replace'} {name}"
    try:
        _write(target, text)
    except OSError as exc:
        fail(InputError(f"cannot write: {exc.strerror or exc}", path=str(target)))
    return f"{'wrote' if new else 'replaced'} {name}"


def _write(target: Path, text: str) -> None:
    """``text`` as it is (no redaction: the workflow spells its own token header), through a
    temp file and a rename."""
    import os
    import tempfile

    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _state(target: Path, text: str) -> str:
    """new, unchanged, differs, or other (a folder, a FIFO, a device: not a regular file)."""
    from ci_eval.io.readfile import read_regular_file

    if not target.exists() and not target.is_symlink():
        return "new"
    try:
        current = read_regular_file(target, str(target), len(text.encode()) + (1 << 20))
    except InputError:
        return "other"
    return "unchanged" if current == text.encode() else "differs"


def _judged(project: "ProjectFound") -> list[str]:
    """The metrics the eval sets use that need an LLM judge, each once, in order."""
    from ci_eval.metrics.registry import lookup

    names: list[str] = []
    for found in project.sets:
        for name in found.metrics:
            metric = lookup(name, found.dialect)
            if metric is not None and metric.needs_llm and name not in names:
                names.append(name)
    return names


def _found(project: "ProjectFound") -> list[str]:
    from ci_eval.cli.init_files import SHOWN_SETS, set_line, summary

    agent = project.agent
    lines = ["Found"]
    if agent.kind == "adk":
        lines.append(f'  agent: {agent.evidence} → kind "adk", module "{agent.module}"')
    elif agent.kind == "adk-http":
        app = f', app_name "{agent.app_name}"' if agent.app_name else ""
        lines.append(f'  agent: {agent.evidence} → kind "adk-http", url "{agent.url}"{app}')
    elif agent.kind == "command":
        lines.append(f'  agent: {agent.evidence} → kind "command"')
    else:
        lines.append(
            "  agent: none (no ADK agent.py with root_agent, `adk api_server` or "
            "trpc-agent-go module)"
        )
    if agent.others:
        lines.append(f"  other agents, not chosen: {', '.join(agent.others)}")
    lines.append(f"  eval sets: {summary(project)}")
    lines += [f"    {set_line(s)}" for s in project.sets[:SHOWN_SETS]]
    if len(project.sets) > SHOWN_SETS:
        lines.append(f"    … and {len(project.sets) - SHOWN_SETS} more")
    lines.append(f"  configs: {', '.join(project.configs) or 'none (default metrics)'}")
    if project.problems:
        lines.append(f"  files that did not load: {len(project.problems)}")
        lines += [f"    {p}" for p in project.problems[:5]]
    return lines


def _to_decide(
    project: "ProjectFound", judged: list[str], action: "ActionRef", forks: bool
) -> list[str]:
    from ci_eval.cli.init_files import agent_url, escaped, served

    todo = []
    if action.placeholder:
        todo.append(
            f"where the workflow takes ci-eval from: it names {action}, a placeholder; run "
            "init again with --action OWNER/REPO@REF (the repository you take ci-eval from, "
            "a release tag or commit SHA) and --force"
        )
    todo += [why for why in (served(project)[2], agent_url(project)[1]) if why]
    todo += [
        f"{escaped(f)}: its name is not UTF-8, so ci-eval.toml cannot name it: rename it"
        for f in project.folders
        if escaped(f) != f
    ]
    todo += _agent_to_decide(project)
    todo += _sets_to_decide(project, judged)
    todo.append(
        "create the baseline: push to main once (the workflow's record and history jobs keep "
        "main's runs on the branch ci-eval-data; until then pull requests gate on thresholds "
        "only)"
    )
    todo.append("the workflow triggers on pushes to main: rename it if your default branch differs")
    if not forks:
        todo.append(
            "a public repository takes pull requests from forks, whose token cannot comment: "
            "run init again with --forks (and --force) for the two-phase workflows"
        )
    return todo


# what to decide for each kind of agent init found (None: none found)
AGENT_TO_DECIDE = {
    None: "how ci-eval reaches your agent: set [agent] kind (adk, adk-http, http, command) "
    "and its settings in ci-eval.toml",
    "command": "set [agent] command in ci-eval.toml: the program that runs your agent and "
    "speaks ci-eval's JSON-lines contract; set its toolchain up in the workflow",
    "adk": "the packages the agent needs beyond google-adk: requirements.txt at the root, which "
    "the workflow installs before it starts `adk api_server`",
}


def _agent_to_decide(project: "ProjectFound") -> list[str]:
    """What init cannot know of how ci-eval reaches the agent."""
    agent = project.agent
    todo = [AGENT_TO_DECIDE[agent.kind]] if agent.kind in AGENT_TO_DECIDE else []
    if agent.kind == "adk-http" and not agent.app_name:
        todo.append(
            "set [agent] app_name (the agent's folder) unless every case's session_input names it"
        )
    if agent.kind in ("adk", "adk-http"):
        todo.append(
            "a model key the agent needs goes in the workflow from a secret, in the env of "
            "the steps that start the agent (never of the steps that run ci-eval)"
        )
    if agent.others:
        todo.append("which agent to evaluate: [agent] module names the first one found")
    return todo


def _sets_to_decide(project: "ProjectFound", judged: list[str]) -> list[str]:
    """What init cannot know of the eval sets, their judges and the repository."""
    todo = []
    if not project.sets:
        todo.append(
            "add an eval set (ADK's *.evalset.json, e.g. saved by `adk web`), name its folder "
            "in [run] paths, and run init again"
        )
    if project.problems:
        todo.append("fix the files that did not load: `ci-eval validate` says why")
    if judged:
        todo.append(
            f"add a judge for {', '.join(judged)}: [judge] base_url, model and api_key_env "
            "in ci-eval.toml, and the key as a secret in the workflow step's env"
        )
    orchestrate = sum(s.cases for s in project.sets if s.dialect == "watsonx")
    if orchestrate:
        todo.append(
            f"add a user simulator: an LLM plays the user of every Orchestrate case "
            f"({orchestrate}), so none is evaluated without one: [simulator] (or [judge]) in "
            "ci-eval.toml"
        )
    elif any(s.scenarios for s in project.sets):
        todo.append("add a user simulator for the conversation scenarios: [simulator] (or [judge])")
    if not project.in_repository:
        todo.append(
            "this folder is not a git repository's root: GitHub reads workflows from the root's "
            ".github/workflows, and ci-eval finds ci-eval.toml from subfolders only inside a "
            "repository"
        )
    return todo
