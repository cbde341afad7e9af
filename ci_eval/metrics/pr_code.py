"""A metric's code that a pull request added or changed is not run in the job.

Custom metrics (``[custom_metrics]`` and an ADK eval config's ``code_config``) are repository
code that ci-eval imports into its own process, which holds the job's credentials. A pull
request may name the metric (its name and threshold follow the bar's rules), but code it wrote
runs only where the workflow says so (``trust-pr-config``): otherwise the metric is
NOT_EVALUATED, saying why, and nothing of that code is imported (importing runs it).

The files checked are those an import of the module executes from the repository: each
package's ``__init__.py`` on the dotted path, and the module itself."""

from __future__ import annotations

from collections.abc import Mapping
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

    def _merge_base(self, base: str) -> str | None:
        """Found (and fetched, in a shallow clone) once for all of the run's modules."""
        if base not in self._base_sha:
            self._base_sha[base] = git.fetch_merge_base(base)[0]
        return self._base_sha[base]

    def changed(self, module: str) -> str | None:
        """The first file of ``module`` the pull request added or changed (repository-relative);
        None outside a pull request, when trusted, or when none was. Without the merge base
        every tracked file counts as changed: unknown is not trusted."""
        base = git.pull_request_base(self.env)
        if self.trusted or not base:
            return None
        for path in module_files(module, self.root):
            relative = git.in_worktree(path)
            if relative is None:  # outside the repository: not the pull request's
                continue
            sha = self._merge_base(base)
            theirs = git.quiet("show", f"{sha}:{relative}") if sha else None
            if theirs is None or theirs.strip() != path.read_text("utf-8").strip():
                return relative
        return None


def not_run(name: str, changed: str) -> Metric:
    """The stand-in for a metric whose code is not run: NOT_EVALUATED, saying why."""
    reason = (
        f"custom metric {name}: its code ({changed}) is added or changed by this pull request, "
        "and is not run in the job, which holds the CI's credentials (the workflow's "
        "trust-pr-config runs it)"
    )

    def scorer(
        expected: list[Invocation], actual: list[Invocation], spec: MetricSpec, ctx: ScoreContext
    ) -> Any:
        raise NotApplicable(reason)

    return Metric(name, reason, scorer, origin="custom", needs_expected=False)
