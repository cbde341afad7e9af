"""``--select changed``: a pull request re-runs only the cases it could have changed — those
whose eval set or its config changed since the merge base, and new ones — unless the agent's
declared inputs changed (``[agent] watch``; by default every file of the repository but the
eval sets and their sidecars and :data:`NOT_WATCHED`: READMEs, changelogs, licences, ``docs/``
and ``.ci-eval/`` — a prompt in Markdown is an input), when everything runs. The rest carry
main's latest result, said as "not re-run (unchanged since <commit>)", and are never counted as
passed by this pull request; the files it did not count as inputs are named. Which files
changed is git's (``-z``: names as they are, never quoted); what to carry is pure logic."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from wcmatch import glob

from ci_eval.gate.baseline import latest_failed
from ci_eval.io import git
from ci_eval.io.files import repo_root, safe_resolve
from ci_eval.load.evalsets import LoadedEvalSet
from ci_eval.model.baseline import Baseline, StoredSet

# what the agent does not read, by default: changing only these re-runs nothing but the sets
NOT_WATCHED = ("**/README*", "**/CHANGELOG*", "**/LICENSE*", "docs/**", ".ci-eval/**")
_FLAGS = glob.GLOBSTAR | glob.DOTGLOB


@dataclass
class Selection:
    carried: dict[tuple[str, str], str] = field(default_factory=dict)  # case → what it says
    said: str = ""  # the verdict's notice


def _watched(rel: str, watch: list[str], eval_files: set[str]) -> bool:
    if rel in eval_files:
        return False
    if watch:
        return glob.globmatch(rel, watch, flags=_FLAGS)
    return not glob.globmatch(rel, list(NOT_WATCHED), flags=_FLAGS)


def choose(
    sets: Iterable[LoadedEvalSet],
    changed: list[str],
    history: Baseline,
    since: str,
    watch: list[str] | None = None,
) -> Selection:
    """Which cases carry main's latest result. ``changed``: the files changed since the merge
    base, as the sets' paths name them; ``history``: the baseline at the merge base."""
    sets = list(sets)
    eval_files = {s.path for s in sets} | {s.metrics.source for s in sets}
    agent = sorted(f for f in changed if _watched(f, watch or [], eval_files))
    unread = sorted(f for f in set(changed) - set(agent) - eval_files)
    if agent:
        return Selection(
            said=f"every case ran (--select changed): the agent's inputs changed ({_few(agent)})"
        )
    touched = set(changed)
    out = Selection()
    edited_any = False
    for s in sets:
        edited = s.path in touched or s.metrics.source in touched
        edited_any = edited_any or edited
        if not edited:
            _carry(s, history, since, out)
    total = sum(len(s.eval_set.eval_cases) for s in sets)
    kept = f"since {since[:7]} ({len(out.carried)} of {total} cases not re-run)"
    out.said = (
        f"nothing the evals watch changed {kept}"
        if not edited_any
        else f"re-ran the eval sets changed {kept}"
    )
    if unread:
        out.said += f"; not agent inputs: {_few(unread)}"
    return out


def _few(files: list[str]) -> str:
    """The first three files, and how many more."""
    more = f" +{len(files) - 3} more" if len(files) > 3 else ""
    return ", ".join(files[:3]) + more


def _carry(s: LoadedEvalSet, history: Baseline, since: str, out: Selection) -> None:
    """The cases of an eval set the pull request did not edit that carry main's latest
    result (a case new, or never scored on main, runs)."""
    stored = (history.sets.get(s.eval_set.eval_set_id) or StoredSet()).cases
    for case in s.eval_set.eval_cases:
        entry = stored.get(case.eval_id)
        failed = None if entry is None else latest_failed(entry)
        if failed is None:
            continue
        out.carried[(s.eval_set.eval_set_id, case.eval_id)] = (
            f"not re-run (unchanged since {since[:12]}); main's latest run "
            + ("failed" if failed else "passed")
        )


def changed_files(sha: str, root: Path) -> list[str] | None:
    """The files changed since ``sha`` (committed, staged, in the working tree, or new), as
    paths from ``root``; None when git cannot say."""
    top = repo_root(root)
    # -z: each name as it is (a non-ASCII name is not quoted, a newline in one splits nothing)
    diff = git.run("diff", "-z", "--name-only", sha)
    new = git.run("ls-files", "-z", "--others", "--exclude-standard", "--full-name")
    if top is None or diff is None or diff.returncode != 0 or new is None:
        return None
    names = diff.stdout.split("\0") + new.stdout.split("\0")
    here = safe_resolve(root)
    out = []
    for name in filter(None, names):
        path = safe_resolve(top / name)
        try:
            out.append(path.relative_to(here).as_posix())
        except ValueError:  # outside the folder of ci-eval.toml: still the repository's
            out.append(Path("/", name).as_posix())
    return out


def select(
    sets: list[LoadedEvalSet],
    history: Baseline | None,
    env: Mapping[str, str],
    root: Path,
    watch: list[str] | None = None,
) -> Selection:
    """The cases a pull request re-runs, or why every case runs."""
    base = git.pull_request_base(env)
    if not base:
        return Selection(said="every case ran (--select changed): not a pull request")
    if not history:
        return Selection(said="every case ran (--select changed): no results recorded on main")
    sha, _ = git.fetch_merge_base(base)
    changed = changed_files(sha, root) if sha else None
    if sha is None or changed is None:
        return Selection(said=f"every case ran (--select changed): no merge base with {base}")
    return choose(sets, changed, history, sha, watch)
