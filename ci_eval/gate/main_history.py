"""Main's history as the gate reads it: the baseline (a file, a git ref or a data branch) as
the base branch has it in a pull request, the acceptance entries, what the pull request changed
of them, and the comparison of a run with it; and the update that appends a run on main."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

from ci_eval import __version__
from ci_eval.errors import InputError
from ci_eval.gate import accept as accept_file
from ci_eval.gate import baseline as baseline_store
from ci_eval.gate import confirm
from ci_eval.gate import quarantine as quarantine_file
from ci_eval.gate.compare import Acceptance, compare
from ci_eval.gate.judging import accept
from ci_eval.gate.power import DEFAULT_TARGET
from ci_eval.io import git
from ci_eval.io.lock import exclusive
from ci_eval.model.baseline import Baseline, Provenance
from ci_eval.model.comparison import ChangeKind, JudgingChange
from ci_eval.results.file import RunResults
from ci_eval.settings import GateSettings, RunSettings
from ci_eval.text.plural import plural


def _in_repository(path: str) -> str:
    """The baseline's path as git names it when it lies in the working tree: its real path
    (symlinks resolved, ``..`` and absolute paths normalised) relative to the repository's
    root — a link to the baseline is the baseline. Else the path as given."""
    if git.in_worktree(path) is None:
        return path
    # as git reads it from here (read_at_ref adds the working directory's prefix)
    return Path(os.path.relpath(Path(path).resolve(), Path.cwd().resolve())).as_posix()


def _own_commit(ref: str, base: str, base_sha: str) -> bool:
    """Does ``ref`` name a commit the pull request made (HEAD, its branch: a commit the base
    branch does not contain)? A baseline there is the PR's own: it could say anything. The base
    branch's own commits, its tip too, are the base's."""
    sha = git.quiet("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if sha is None:
        return False
    for tip in (f"origin/{base}", base, base_sha):
        if git.quiet("rev-parse", "--verify", "--quiet", f"{tip}^{{commit}}") is None:
            continue
        done = git.run("merge-base", "--is-ancestor", sha, tip)
        if done is not None and done.returncode == 0:
            return False  # on the base branch
    return True


def _read_branch(settings: RunSettings) -> tuple[Baseline | None, str, list[str], str | None]:
    """The history kept on a data branch, read through git from the remote branch (fetched):
    never a folder of the working tree, which a pull request could write. The fourth item is
    what failed, with git's reason, when the fetch failed and no copy of the branch is in the
    clone: the history may well exist, and "no baseline" says so."""
    branch = settings.baseline_branch or ""
    name = settings.baseline or "baseline.json"  # at the branch's root
    notices = []
    failed = None
    if git.quiet("remote"):
        tracking = f"+refs/heads/{branch}:refs/remotes/origin/{branch}"
        fetched = git.run("fetch", "--no-tags", "--depth=1", "origin", tracking)
        if fetched is not None and fetched.returncode == 0:
            notices.append(f"git fetch --depth=1 origin {branch}")
        else:
            failed = f"git fetch origin {branch} failed ({git.reason(fetched)})"
    ref = next(
        (r for r in (f"origin/{branch}", branch) if git.quiet("rev-parse", "--verify", "-q", r)),
        None,
    )
    where = f"{name} on branch {branch}"
    if ref is None:
        return None, where, notices, failed  # the very first run: no history yet
    if failed:  # the clone's own copy, which may be behind origin's
        notices.append(f"{failed}: reading {ref} as this clone has it")
    try:
        text = git.checked("show", f"{ref}:{name}")
    except git.GitError as exc:
        if "does not exist" in str(exc) or "exists on disk, but not in" in str(exc):
            return None, where, notices, None
        raise InputError(f"reading {name} on branch {branch}: git failed: {exc}") from None
    if text is None:
        return None, where, notices, None
    return baseline_store.parse(text, f"{branch}:{name}"), where, notices, None


def _read_baseline(
    settings: RunSettings, env: Mapping[str, str]
) -> tuple[Baseline | None, str, list[str]]:
    """The baseline the pull request is judged against, where it came from, and notices.

    In a pull request (``GITHUB_BASE_REF``) a baseline file that is part of the repository is
    read as it is at the merge base — never the PR's own copy, which the PR could edit; a
    ``baseline_ref`` that names one of the PR's own commits is refused. The file is known by its
    real path, so a link to it or a ``..`` path is the same file. A shallow clone lacks the
    merge base: fetch it, or stop with what to do. A file outside the repository (e.g. a data
    branch checked out into a folder, or a downloaded artifact) is read as is. (A data branch
    is :func:`_read_branch`'s.)"""
    given = settings.baseline_file()
    path = _in_repository(given)
    base = git.pull_request_base(env)
    if settings.baseline_ref:
        return _read_ref(settings, settings.baseline_ref, path, base)
    tracked = bool(base) and git.is_tracked(path)
    # a PR that deletes the file (or never had it in its tree) is judged by the merge base's
    # copy too: deleting the baseline must not lower the bar either
    if base and (tracked or not Path(given).exists() or path != given):
        return _read_at_merge_base(settings, env, path, base, tracked)
    if settings.given("baseline") and not settings.update_baseline:
        _named_baseline_exists(Path(given), settings.names.name("baseline"))
    return baseline_store.read(Path(given)), given, []


def _read_ref(
    settings: RunSettings, ref: str, path: str, base: str | None
) -> tuple[Baseline | None, str, list[str]]:
    """The baseline at ``baseline_ref``: refused when it names one of the PR's own commits."""
    option = settings.names.name("baseline_ref")
    if base:
        sha, _ = git.fetch_merge_base(base)
        if sha is not None and _own_commit(ref, base, sha):
            raise InputError(
                f"{option} {ref} names a commit of this pull request, whose baseline could "
                f"say anything: name a commit of {base} (or leave it unset: the merge base's "
                "copy is read)"
            )
    return baseline_store.read_at_ref(ref, path, option), f"{path} at {ref}", []


def _read_at_merge_base(
    settings: RunSettings, env: Mapping[str, str], path: str, base: str, tracked: bool
) -> tuple[Baseline | None, str, list[str]]:
    """The baseline as it is at the merge base with ``base`` (a shallow clone fetched);
    refused where the merge base cannot be found or the pull request adds the file."""
    sha, done = git.fetch_merge_base(base)
    notices = [f"shallow clone: {d} to find the merge base with {base}" for d in done]
    if sha is None and not tracked:
        return None, path, notices  # no file here and no merge base: nothing to judge by
    if sha is None:
        _, why = git.merge_base(env)
        raise InputError(
            f"cannot find the merge base with {base}, so the baseline cannot be read as it "
            f"is on {base} (the pull request's own {path} is never used): check out with "
            "`fetch-depth: 0` (actions/checkout), or give "
            + settings.names.name("baseline_ref")
            + (f" ({why})" if why and "git failed" in why else "")
        )
    data = baseline_store.read_at_ref(sha, path)
    if data is None and tracked:
        raise InputError(
            f"this pull request adds {path}, which {base} does not have: a baseline the "
            "pull request writes could say anything (keep the history in the base branch, "
            "or on a data branch read through git)"
        )
    return data, f"{path} at the merge base {sha[:12]} with {base}", notices


def _named_baseline_exists(path: Path, option: str) -> None:
    """A baseline the user named that is not there is a mistake (a typo would otherwise turn
    the gate to thresholds only, silently); ``--update-baseline`` creates it."""
    import difflib

    if path.is_dir():
        raise InputError(f"{option} {path}: is a directory, not a baseline file")
    if path.exists():
        return
    try:
        near = difflib.get_close_matches(
            path.name, [p.name for p in path.parent.iterdir() if p.is_file()], n=1
        )
    except OSError:
        near = []
    hint = f" (did you mean {path.parent / near[0]}?)" if near else ""
    raise InputError(
        f"{option} {path}: no such file{hint}; to start a history there, run with --update-baseline"
    )


def accepted_changes(settings: RunSettings) -> list[Acceptance]:
    """The acceptance file's entries, read before the first agent call."""
    return accept_file.load(
        Path(settings.accept or accept_file.DEFAULT_PATH), required=settings.accept is not None
    )


@dataclass
class LoadedBaseline:
    data: Baseline | None
    where: str
    notices: list[str]
    accepted: list[Acceptance]
    # what the PR changed and is applied: acceptance entries, custom metrics' code
    said: list[str] = field(default_factory=list)
    code: list[JudgingChange] = field(default_factory=list)
    # why there is none though there may well be one: the data branch's fetch failed
    unread: str | None = None
    # quarantine.toml as the base has it in a pull request, and what the PR changed of it
    quarantine: list[quarantine_file.Entry] = field(default_factory=list)
    quarantine_said: list[str] = field(default_factory=list)

    def missing(self) -> str:
        """The line saying there is no baseline, and why when it is known."""
        if self.unread is None:
            return (
                f"no baseline at {self.where}: gating on thresholds only (create one with "
                "`ci-eval baseline update RESULTS`)"
            )
        first = "couldn't find remote ref" in self.unread  # origin has no such branch yet
        hint = (
            "create one with `ci-eval baseline update RESULTS`"
            if first
            else "check origin's URL and this job's access to it"
        )
        return f"no baseline at {self.where}: {self.unread}: gating on thresholds only ({hint})"


def load_baseline(settings: RunSettings, env: Mapping[str, str]) -> LoadedBaseline:
    """Everything the gate reads, before the agent is called: a shallow clone without the merge
    base fails now, not after the run."""
    accepted = accepted_changes(settings)
    unread = None
    if settings.baseline_branch:
        data, where, notices, unread = _read_branch(settings)
    else:
        data, where, notices = _read_baseline(settings, env)
    if data is not None:  # the gate's window (the file keeps more, for `ci-eval history`)
        data = baseline_store.gate_view(data)
    said = [
        f"accept: {line}"
        for line in accept_file.changes(
            _accept_path(settings), _at_merge_base(_accept_path(settings), env)
        )
    ]
    code = custom_code_changes(env)
    held, held_said = read_quarantine(settings, env)
    return LoadedBaseline(data, where, notices, accepted, said, code, unread, held, held_said)


def quarantine_path() -> Path:
    """``quarantine.toml`` beside ci-eval.toml (as `run` finds it), else in this folder."""
    from ci_eval.settings import find_config

    found = find_config()
    return (found.parent if found is not None else Path(".")) / quarantine_file.FILE_NAME


def read_quarantine(
    settings: RunSettings, env: Mapping[str, str]
) -> tuple[list[quarantine_file.Entry], list[str]]:
    """quarantine.toml's entries, and what a pull request changed of them. It places the bar:
    in a pull request the merge base's copy applies (the PR's own is checked, and what it
    changed said, applied once merged) unless the workflow trusts the PR's config."""
    path = quarantine_path()
    shown = os.path.normpath(path)
    mine_text = _text(path) if path.is_file() else None
    mine = [] if mine_text is None else quarantine_file.read_entries(mine_text, shown)
    if not git.pull_request_base(env) or settings.trust_pr_config:
        return mine, []
    base_text = _at_merge_base(path, env)
    if base_text is None:  # a pull request whose merge base is not in the clone
        if mine_text is None:
            return [], []
        raise InputError(
            f"cannot find the merge base with {git.pull_request_base(env)}, so {shown} cannot "
            "be read as the base branch has it (the pull request's own copy is never used): "
            "check out with `fetch-depth: 0` (actions/checkout)"
        )
    theirs = quarantine_file.read_entries(base_text, f"{shown} at the merge base")
    return theirs, quarantine_file.changes(mine, theirs, shown)


def _text(path: Path) -> str:
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", path=str(path)) from None


def custom_code_changes(env: Mapping[str, str]) -> list[JudgingChange]:
    """In a pull request, each custom metric whose file the PR changed: its code scores this
    run (the metric's name and threshold are the base branch's; its code is the PR's)."""
    from ci_eval.metrics.custom import source_files

    if not git.pull_request_base(env):  # not a pull request: no git call per custom metric
        return []
    out = []
    for name, path in source_files().items():
        if git.in_worktree(path) is None:  # an installed package's: not the PR's to change
            continue
        base = _at_merge_base(path, env)
        if base is not None and base.strip() != path.read_text("utf-8").strip():
            out.append(JudgingChange(ChangeKind.CODE, metric=name, where=_in_repository(str(path))))
    return out


def _accept_path(settings: RunSettings) -> Path:
    return Path(settings.accept or accept_file.DEFAULT_PATH)


def _at_merge_base(path: Path, env: Mapping[str, str]) -> str | None:
    """The file as the pull request's merge base has it ("" when it has none); None outside
    a pull request or without the merge base."""
    base = git.pull_request_base(env)
    if not base:
        return None
    sha, _ = git.fetch_merge_base(base)
    if sha is None:
        return None
    return git.quiet("show", f"{sha}:{_in_repository(str(path))}") or ""


def apply_baseline(
    results: RunResults,
    settings: RunSettings,
    env: Mapping[str, str],
    gate_settings: GateSettings,
    loaded: LoadedBaseline | None = None,
    control: RunResults | None = None,
    today: date | None = None,
) -> list[str]:
    """Compare with the baseline's history (a file, or the file at a git ref) and set the
    gate's --fail-on (as ``gate_settings`` give it; none given: the default for a run with or
    without a baseline), and the quarantine as it stands ``today`` (default: today in UTC).
    Returns notices for the terminal; warnings also go to the summary."""
    explicit = gate_settings.fail_on
    loaded = loaded or load_baseline(settings, env)
    stale = _quarantine(results, loaded, today or datetime.now(UTC).date())
    # judged here, always: a results file's own comparison (written by whoever ran it, e.g. a
    # fork's job) is never trusted by `compare`
    results.comparison = None
    data, where, notices = loaded.data, loaded.where, list(loaded.notices)
    if data is None:
        results.fail_on = explicit or ("failure", "error", "not-evaluated")
        results.settings.no_baseline = where  # said in the verdict
        notices.append(loaded.missing())
        return notices + stale
    code = list(loaded.code)
    accept(code, loaded.accepted)  # before compare: an entry they use is not said unused
    comparison = compare(
        results,
        data,
        gate_settings,
        loaded.accepted,
        confirm_target(results),
        control,
        target=DEFAULT_TARGET,  # the verdict says what this run could have detected
    )
    comparison.baseline_source = where
    comparison.changed += loaded.said
    comparison.judging += code
    comparison.outage = results.settings.outage
    provenance = data.provenance or Provenance()
    # a baseline that records each set's criteria had each change listed: no footnote
    listed = any(s.criteria is not None for s in data.sets.values())
    if not listed and provenance.metrics_digest not in (
        None,
        baseline_store.metrics_digest(results),
    ):
        comparison.warnings.append(
            "the baseline was recorded with another metric configuration: compare with care"
        )
    version = provenance.ci_eval_version or ""
    if version and version.split(".")[0] != __version__.split(".")[0]:
        comparison.warnings.append(
            f"the baseline was recorded by ci-eval {version} (now {__version__})"
        )
    age = baseline_store.age_days(data)
    if age is not None and age > gate_settings.baseline_max_age:
        comparison.warnings.append(
            f"the baseline is {age:.0f} days old (more than "
            f"{gate_settings.baseline_max_age:g}): consider updating it"
        )
    comparison.warnings += stale
    results.comparison = comparison
    results.fail_on = explicit or ("regression", "error", "not-evaluated")
    notices += [f"baseline warning: {w}" for w in comparison.warnings]
    return notices


def _quarantine(results: RunResults, loaded: LoadedBaseline, today: date) -> list[str]:
    """The quarantine on the results, as it stands ``today``; what the PR changed of it with
    the bar's changes; and the entries to remove, said."""
    facts = results.settings
    facts.quarantine = quarantine_file.resolve(loaded.quarantine, today)
    facts.bar_changes += [c for c in loaded.quarantine_said if c not in facts.bar_changes]
    cases = {(s.eval_set_id, c.eval_id) for s in results.sets for c in s.cases}
    return quarantine_file.stale(facts.quarantine, cases)


def confirm_target(results: RunResults) -> int:
    """The runs, all failing, that confirm a break in these results: as their run allowed
    (its runs and confirmation reruns, as it recorded them)."""
    recorded = results.settings
    return confirm.target(recorded.num_runs or 1, recorded.confirm_runs)


def update_baseline(results: RunResults, settings: RunSettings) -> str:
    """Append this run to the baseline's history (after the comparison, which read the old
    one). Returns the line to print."""
    path = Path(settings.baseline_file())
    # the file a symlink names is the one updated (a write replaces what it is given), and two
    # names of one file take one lock
    real = path.resolve()
    # read, append, write as one: two updates at once would each write their own and lose one
    with exclusive(real):
        old = baseline_store.read(real)
        commit = git.current_commit()
        data, report = baseline_store.update(old, results, commit, settings.baseline_window)
        if report.duplicate:
            return f"baseline {path}: these results are in its history already; nothing written"
        try:
            baseline_store.write(real, data)
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", path=str(path)) from None
    parts = [f"{plural(report.recorded, 'case')} recorded ({report.new} new)"]
    if report.kept:
        parts.append(f"{len(report.kept)} not measured this time kept their history")
    if report.dropped:
        parts.append(f"{len(report.dropped)} no longer in the eval sets dropped")
    if report.renamed:  # the same content under a new id: named, as a rename is news
        parts.append("renamed, history kept: " + ", ".join(report.renamed))
    return f"baseline written to {path}: {_kept(data)}; " + ", ".join(parts)


def _kept(data: Baseline) -> str:
    """The cases and the runs they hold, as they are: "3 cases with 1–6 runs each, keeping
    each case's last 20" (never "last 20 runs each" for cases that have fewer)."""
    # the runs the gate reads (the file keeps main's last pushes beyond them, for the pages)
    view = baseline_store.gate_view(data)
    held = [len(c.push) for s in view.sets.values() for c in s.cases.values()]
    low, high = min(held, default=0), max(held, default=0)
    runs = plural(high, "run") if low == high else f"{low}–{high} runs"
    return f"{plural(len(held), 'case')} with {runs} each, keeping each case's last {data.window}"


def read_history(settings: RunSettings) -> tuple[Baseline, str, list[str]]:
    """The whole baseline as stored (not the gate's window), where it came from, and notices:
    for ``ci-eval history``, on main. A data branch is read through git (:func:`_read_branch`),
    never a folder; ``baseline_ref`` reads the file at that ref; else the file. None there is
    an InputError saying how to record one."""
    notices: list[str] = []
    if settings.baseline_branch:
        data, where, notices, unread = _read_branch(settings)
        where = where + (f" ({unread})" if unread else "")
    elif settings.baseline_ref:
        path = _in_repository(settings.baseline_file())
        option = settings.names.name("baseline_ref")
        data = baseline_store.read_at_ref(settings.baseline_ref, path, option)
        where = f"{path} at {settings.baseline_ref}"
    else:
        where = settings.baseline_file()
        if Path(where).is_dir():
            raise InputError("is a directory, not a baseline file", path=where)
        data = baseline_store.read(Path(where))
    if data is None:
        raise InputError(
            f"no baseline at {where}: record main's pushes first (`ci-eval baseline update "
            "RESULTS`), or name it with --baseline / --baseline-branch"
        )
    return data, where, notices
