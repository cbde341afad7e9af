"""Where the bar is, in a pull request: the settings of ci-eval.toml marked ``bar`` (which cases
run, the baseline, ``fail_on``, the statistics, the templates, the judge's endpoint and key...)
are read from the merge base's ci-eval.toml, as Codecov reads its ``strict_yaml_branch``: the
pull request controls its own copy of the file and must not move its own goalposts. What the
PR's copy changed of them is not applied, and said ("gate settings changed by this pull
request (not applied): …").

Flags and the action's inputs come from the workflow file, not from ci-eval.toml: they apply
as given (protecting the workflow file is the repository's business: rulesets, CODEOWNERS).
``--trust-pr-config`` (a flag or input, never a ci-eval.toml key) opts out.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ci_eval.errors import InputError
from ci_eval.io import git
from ci_eval.settings.model import BAR, BAR_TABLES, RunSettings, setting_target
from ci_eval.settings.toml import load_config

SHOWN = 60  # characters of a value in the list of changes


def _value(settings: RunSettings, key: str) -> object:
    target, name = setting_target(settings, key)
    return getattr(target, name)


def _shown(value: object) -> str:
    text = "unset" if value in (None, [], {}) else repr(value)
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def base_text(path: Path, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(ci-eval.toml as the merge base has it ("" when it has none), the merge base's sha),
    or (None, None) outside a pull request. A pull request without its merge base in the clone
    stops: the bar cannot be read."""
    base = git.pull_request_base(env)
    if not base or not git.is_tracked(str(path)):  # a file of the pull request's tree, or not
        return None, None
    sha, _ = git.fetch_merge_base(base)
    if sha is None:
        _, why = git.merge_base(env)
        raise InputError(
            f"cannot find the merge base with {base}, so the gate's settings cannot be read as "
            f"{base} has them ({path} in a pull request is the pull request's own): check out "
            "with `fetch-depth: 0` (actions/checkout)" + (f" ({why})" if why else "")
        )
    relative = git.in_worktree(path)
    if relative is None:  # a config outside the repository: not the pull request's to change
        return None, None
    shown = git.quiet("show", f"{sha}:{relative}")
    return shown or "", sha


def hold(settings: RunSettings, path: Path | None, env: Mapping[str, str]) -> RunSettings:
    """In a pull request, ``settings`` (read from the PR's ci-eval.toml at ``path``) with every
    ``bar`` setting as the merge base's ci-eval.toml has it (its default where that file has
    none, or no file); what differed is listed in ``settings.bar_changes``. Call it before the
    flags or inputs are laid over: those are the workflow file's."""
    if path is None:
        return settings
    text, _ = base_text(path, env)
    if text is None:
        return settings
    base = load_config(path, required=False, text=text)
    for key in BAR:
        mine, theirs = _value(settings, key), _value(base, key)
        if mine != theirs:
            target, name = setting_target(settings, key)
            setattr(target, name, theirs)
            settings.bar_changes.append(
                f"{settings.names.name(key)}: {_shown(mine)} (base: {_shown(theirs)})"
            )
            settings.names.given.pop(key, None)
            if key in base.names.given:
                settings.names.given[key] = base.names.given[key]
    for table in BAR_TABLES:
        mine, theirs = getattr(settings, table), getattr(base, table)
        if mine != theirs:
            setattr(settings, table, theirs)
            settings.bar_changes.append(f"[{table}]: {_shown(mine)} (base: {_shown(theirs)})")
    return settings


def templates_at_base(folder: Path, env: Mapping[str, str]) -> tuple[Path, str | None]:
    """In a pull request, the report templates in ``folder`` as the merge base has them, when
    the pull request changed any (written to a temporary folder), and what it changed; else
    ``folder`` as it is. A template decides what the reviewer reads: the PR's own are said, not
    used."""
    base = git.pull_request_base(env)
    if not base or not folder.is_dir():
        return folder, None
    sha, _ = git.fetch_merge_base(base)
    relative = git.in_worktree(folder)
    if sha is None or relative is None:  # outside the repository: not the PR's to change
        return folder, None
    changed = git.quiet("diff", "--name-only", sha, "--", relative)
    untracked = git.quiet("ls-files", "--others", "--exclude-standard", "--", relative)
    files = [f for f in f"{changed or ''}\n{untracked or ''}".splitlines() if f.strip()]
    if not files:
        return folder, None
    import tempfile

    kept = Path(tempfile.mkdtemp(prefix="ci-eval-templates-"))
    listed = git.quiet("ls-tree", "-r", "--name-only", sha, "--", relative) or ""
    for name in listed.splitlines():
        text = git.quiet("show", f"{sha}:{name}")
        target = kept / Path(name).relative_to(relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text((text or "") + "\n")
    return kept, (
        f"templates in {relative}: {len(files)} {'file' if len(files) == 1 else 'files'} "
        "changed (base: the merge base's templates)"
    )
