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

import os
from collections.abc import Mapping
from pathlib import Path

from ci_eval.errors import InputError
from ci_eval.io import git
from ci_eval.settings.model import BAR, BAR_TABLES, RunSettings, setting_target
from ci_eval.settings.toml import load_config
from ci_eval.text.plural import plural

SHOWN = 60  # characters of a value in the list of changes


def _value(settings: RunSettings, key: str) -> object:
    target, name = setting_target(settings, key)
    return getattr(target, name)


def _shown(value: object) -> str:
    text = "unset" if value in (None, [], {}) else repr(value)
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def _merge_base_sha(base: str, env: Mapping[str, str], path: Path) -> str:
    sha, _ = git.fetch_merge_base(base)
    if sha is None:
        _, why = git.merge_base(env)
        raise InputError(
            f"cannot find the merge base with {base}, so the gate's settings cannot be read as "
            f"{base} has them ({path} in a pull request is the pull request's own): check out "
            "with `fetch-depth: 0` (actions/checkout)" + (f" ({why})" if why else "")
        )
    return sha


def _relative(path: Path) -> str | None:
    """``path`` relative to the repository's root, its folders' links resolved but not its own
    name: a ci-eval.toml that is a symlink is asked of the merge base by its own name."""
    folder = git.in_worktree(path.absolute().parent)
    if folder is None:
        return None
    return path.name if folder in ("", ".") else f"{folder}/{path.name}"


def base_config(env: Mapping[str, str], start: Path | None = None) -> Path | None:
    """Where the merge base has the ci-eval.toml that ``find_config`` would find from ``start``
    (the working directory) in its tree: the bar of a pull request that deleted or moved it."""
    from ci_eval.settings.toml import CONFIG_NAME

    base = git.pull_request_base(env)
    root_text = git.quiet("rev-parse", "--show-toplevel") if base else None
    if not base or not root_text:
        return None
    root = Path(root_text).resolve()
    here = (start or Path.cwd()).resolve()
    sha = _merge_base_sha(base, env, Path(CONFIG_NAME))
    for folder in (here, *here.parents):
        try:
            relative = (folder / CONFIG_NAME).relative_to(root).as_posix()
        except ValueError:
            return None
        if git.quiet("cat-file", "-e", f"{sha}:{relative}") is not None:
            return Path(os.path.relpath(root / relative))
        if folder == root:
            return None
    return None


def base_text(path: Path, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(ci-eval.toml as the merge base has it ("" when it has none), the merge base's sha),
    or (None, None) outside a pull request. A pull request without its merge base in the clone
    stops: the bar cannot be read."""
    base = git.pull_request_base(env)
    tracked = path.is_symlink() or not path.exists() or git.is_tracked(str(path))
    if not base or not tracked:  # a file of the pull request's tree (or deleted), or not
        return None, None
    sha = _merge_base_sha(base, env, path)
    relative = _relative(path)
    if relative is None:  # a config outside the repository: not the pull request's to change
        return None, None
    shown = git.quiet("show", f"{sha}:{relative}")
    return shown or "", sha


def hold(settings: RunSettings, path: Path | None, env: Mapping[str, str]) -> RunSettings:
    """In a pull request, ``settings`` (read from the PR's ci-eval.toml at ``path``) with every
    ``bar`` setting as the merge base's ci-eval.toml has it (its default where that file has
    none, or no file); what differed is listed in ``settings.bar_changes``. Call it before the
    flags or inputs are laid over: those are the workflow file's."""
    said = None
    if path is None or not path.exists() or path.is_symlink():
        where = path if path is not None and path.is_symlink() else base_config(env)
        if where is None:  # neither the pull request nor its base has one
            return settings
        if path is None or not path.exists():
            said = f"{where} deleted or moved by this pull request; the base's bar applies"
        else:
            said = f"{where} is a symlink in this pull request; the base's bar applies"
        path = where
    text, _ = base_text(path, env)
    if text is None:
        return settings
    if said is not None and text:
        settings.bar_changes.append(said)
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
        f"templates in {relative}: {plural(len(files), 'file')} "
        "changed (base: the merge base's templates)"
    )
