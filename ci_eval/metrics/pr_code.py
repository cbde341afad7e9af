"""A metric's code that a pull request added or changed is not run in the job.

Custom metrics (``[custom_metrics]``, an ADK eval config's ``code_config``, workspace plugins)
are repository code; they run in the metrics worker (:mod:`ci_eval.worker`), never in the
process that holds the job's credentials. A pull request may name the metric (its name and
threshold follow the bar's rules), but code it wrote decides no score unless the workflow says
so (``trust-pr-config``): otherwise the metric is NOT_EVALUATED, saying why.

Two checks: before a module is imported, the files that import executes from the repository
(each package's ``__init__.py`` on the dotted path, and the module itself); after, every
workspace file the worker executed (``first_changed``), helpers the module imports included."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_eval.io import git
from ci_eval.metrics.base import Metric, NotApplicable, ScoreContext
from ci_eval.model import Invocation
from ci_eval.model.metric_spec import MetricSpec


def module_files(module: str, root: Path) -> list[Path]:
    """The repository files importing ``module`` (dotted) from ``root`` executes."""
    parts = module.split(".")
    files = [root.joinpath(*parts[:i], "__init__.py") for i in range(1, len(parts))]
    leaf = root.joinpath(*parts)
    files += [leaf.with_suffix(".py"), leaf / "__init__.py"]
    return [f for f in files if f.is_file()]


@dataclass
class PullRequestCode:
    """Which repository modules this run may import: in a pull request, those whose files the
    merge base has as they are (``trusted``: the workflow's trust-pr-config, every one)."""

    env: Mapping[str, str]
    trusted: bool = False
    root: Path = field(default_factory=Path.cwd)
    _base_sha: dict[str, str | None] = field(default_factory=dict, repr=False)
    _verdicts: dict[str, bool] = field(default_factory=dict, repr=False)  # path -> changed

    def _merge_base(self, base: str) -> str | None:
        """Found (and fetched, in a shallow clone) once for all of the run's modules."""
        if base not in self._base_sha:
            self._base_sha[base] = git.fetch_merge_base(base)[0]
        return self._base_sha[base]

    def changed(self, module: str) -> str | None:
        """The first file of ``module`` the pull request added or changed (repository-relative);
        None outside a pull request, when trusted, or when none was. Without the merge base
        every tracked file counts as changed: unknown is not trusted."""
        return self.first_changed(module_files(module, self.root))

    def first_changed(self, paths: Iterable[Path]) -> str | None:
        """The first of ``paths`` (files code executed) that the pull request added or changed,
        repository-relative; files outside the repository are not the pull request's."""
        base = git.pull_request_base(self.env)
        if self.trusted or not base:
            return None
        for path in paths:
            relative = git.in_worktree(path)
            if relative is None:  # outside the repository: not the pull request's
                continue
            if relative not in self._verdicts:
                sha = self._merge_base(base)
                theirs = git.quiet("show", f"{sha}:{relative}") if sha else None
                try:
                    ours = path.read_text("utf-8")
                except (OSError, UnicodeDecodeError):
                    ours = None
                self._verdicts[relative] = (
                    theirs is None or ours is None or (theirs.strip() != ours.strip())
                )
            if self._verdicts[relative]:
                return relative
        return None


_SAID: dict[str, str] = {}  # this run's metrics not run, name -> why: said once in the verdict


def changed_reason(name: str, changed: str) -> str:
    """Why ``name`` is NOT_EVALUATED."""
    return (
        f"custom metric {name}: code it runs ({changed}) is added or changed by this pull "
        "request, and a pull request's code decides no score (the workflow's trust-pr-config "
        "lets it)"
    )


def kept_from_scoring(name: str, changed: str) -> NotApplicable:
    """The exception that makes a case's metric ``name`` NOT_EVALUATED; the run says it once."""
    reason = changed_reason(name, changed)
    _SAID.setdefault(name, reason)
    return NotApplicable(reason)


def not_run_reasons() -> list[str]:
    """Each of this run's metrics that code the pull request changed kept from scoring."""
    return list(_SAID.values())


def forget_reasons() -> None:
    _SAID.clear()


def not_run(name: str, changed: str) -> Metric:
    """The stand-in for a metric whose code is not run: NOT_EVALUATED, saying why."""
    reason = changed_reason(name, changed)

    def scorer(
        expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
    ) -> Any:
        raise kept_from_scoring(name, changed)

    return Metric(name, reason, scorer, origin="custom", needs_expected=False)
