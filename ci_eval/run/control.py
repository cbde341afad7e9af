"""A same-day control (``--control REF``): the agent as it is at the merge base with REF, run on
the same cases in the same job as the pull request's. A provider's bad day, a cold cache or a
slow deployment moves both; the gate then judges the PR against the control's runs of today
rather than main's history alone (:mod:`ci_eval.gate.compare`).

Command and replay agents run from a git worktree of the merge base (the PR's own files are
not read); http and adk-http agents are the service at ``--control-url`` (serve the merge base
there). An in-process ADK agent cannot be imported twice in one process: serve it with
``adk api_server`` and use adk-http.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from ci_eval.errors import InputError
from ci_eval.io import git
from ci_eval.settings import AgentSettings, RunSettings

URL_KINDS = ("http", "adk-http")
TREE_KINDS = ("command", "replay")


AUTO = "auto"  # --control auto: only when the suite-wide test alone fires (gate.auto_control)


def check(settings: RunSettings) -> None:
    """The control's settings, before any agent call (``auto`` runs only where it can)."""
    if not settings.control:
        return
    names = settings.names
    kind = settings.agent.kind
    if kind in URL_KINDS and settings.control_url:
        from ci_eval.connectors import EXAMPLE_URL, url_problem

        wrong = url_problem(settings.control_url)
        if wrong:
            raise InputError(
                f"{names.name('control_url')} {settings.control_url}: {wrong}, e.g. {EXAMPLE_URL}"
            )
    if settings.control == AUTO:
        return
    if kind in URL_KINDS and not settings.control_url:
        raise InputError(
            f"{names.name('control')} with the {kind} agent needs {names.name('control_url')}: "
            "the URL where the merge base's agent is served"
        )
    if kind not in URL_KINDS + TREE_KINDS:
        raise InputError(
            f"{names.name('control')}: the {kind} agent runs in ci-eval's own process and cannot "
            "be loaded twice; serve the merge base with `adk api_server` and use agent adk-http "
            f"with {names.name('control_url')}"
        )


def commit(settings: RunSettings, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The control's commit (None: no control), and why ``auto`` cannot run one, if so."""
    if settings.control == AUTO:
        return auto_commit(settings, env)
    return (base_commit(settings, env) if settings.control else None), None


def auto_commit(settings: RunSettings, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """``--control auto``'s commit: the pull request's merge base, where a control can run;
    else None and why not (None too outside a pull request, where there is nothing to say)."""
    base = git.pull_request_base(env)
    if not base:
        return None, None
    kind = settings.agent.kind
    option = settings.names.name("control")
    if kind not in URL_KINDS + TREE_KINDS:
        return None, (
            f"{option} auto: the {kind} agent runs in ci-eval's own process and cannot be "
            "loaded twice, so no control can tell a provider's bad day from this pull request"
        )
    if kind in URL_KINDS and not settings.control_url:
        return None, f"{option} auto: no {settings.names.name('control_url')} to run a control at"
    sha, _ = git.fetch_merge_base(base)
    if sha is None:
        return None, f"{option} auto: no merge base with {base} (check out with fetch-depth: 0)"
    return sha, None


def base_commit(settings: RunSettings, env: Mapping[str, str]) -> str:
    """The commit whose agent is the control: the merge base of HEAD with the ref."""
    ref = settings.control or ""
    option = settings.names.name("control")
    if ref == "base":
        base = git.pull_request_base(env)
        if not base:
            raise InputError(
                f"{option} base needs a pull request (GITHUB_BASE_REF) to find its base branch; "
                f"outside one, give a ref: {option} main"
            )
        sha, _ = git.fetch_merge_base(base)
        if sha is None:
            raise InputError(
                f"{option} base: no merge base with {base} in this clone (check out with "
                "`fetch-depth: 0`)"
            )
        return sha
    try:
        sha = git.checked("merge-base", "HEAD", ref)
    except git.GitError as exc:
        raise InputError(f"{option} {ref}: no merge base with HEAD ({exc})") from None
    if not sha:
        raise InputError(f"{option} {ref}: no merge base with HEAD")
    return sha


@contextlib.contextmanager
def agent(settings: RunSettings, sha: str) -> Iterator[tuple[AgentSettings, str]]:
    """The control's agent settings and how to name it; a worktree lives while it is used."""
    agent_settings = settings.agent
    if agent_settings.kind in URL_KINDS:
        url = settings.control_url
        yield dataclasses.replace(agent_settings, url=url), f"the merge base {sha[:12]} at {url}"
        return
    top = git.checked("rev-parse", "--show-toplevel")
    if not top:
        raise InputError(f"{settings.names.name('control')}: not in a git repository")
    with tempfile.TemporaryDirectory(prefix="ci-eval-control-") as tmp:
        # the repository's files, readable as the checkout's are: by an agent that runs as
        # another user than ci-eval (ci_eval.connectors.identity)
        os.chmod(tmp, 0o755)
        tree = Path(tmp) / "base"
        try:
            git.checked("worktree", "add", "--detach", str(tree), sha)
        except git.GitError as exc:
            raise InputError(f"cannot check out the merge base {sha[:12]}: {exc}") from None
        try:
            here = tree / Path.cwd().resolve().relative_to(Path(top).resolve())
            replay = [p if Path(p).is_absolute() else str(here / p) for p in agent_settings.replay]
            yield (
                dataclasses.replace(agent_settings, cwd=str(here), replay=replay),
                f"the merge base {sha[:12]} (a git worktree)",
            )
        finally:
            git.quiet("worktree", "remove", "--force", str(tree))
