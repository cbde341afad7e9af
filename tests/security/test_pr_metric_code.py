"""A custom metric's code that a pull request added or changed is not imported into the job's
process (which holds the CI's credentials): the metric is NOT_EVALUATED, saying why, unless the
workflow trusts the pull request's config. Real git repositories, as a PR job sees them."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_eval.metrics import lookup
from ci_eval.metrics.base import NotApplicable, ScoreContext
from ci_eval.metrics.custom import register_custom
from ci_eval.metrics.pr_code import PullRequestCode
from ci_eval.model.metric_spec import MetricSpec
from tests.helpers import git

PR = {"GITHUB_BASE_REF": "main"}
# importing the module leaves a mark: what the guard must prevent, not only what it says
MODULE = (
    "from pathlib import Path\nPath('imported').write_text('yes')\n\n"
    "def score(*a):\n    return 1.0\n"
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """main has ``team/metrics.py``; the pull request's branch ``feature`` is checked out."""
    root = tmp_path / "repo"
    (root / "team").mkdir(parents=True)
    (root / "team/__init__.py").write_text("")
    (root / "team/metrics.py").write_text(MODULE)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "a team metric")
    git(root, "checkout", "-q", "-b", "feature")
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root))
    yield root
    register_custom({})
    for name in [m for m in sys.modules if m == "team" or m.startswith("team.")]:
        del sys.modules[name]


def _commit(root: Path, path: str, text: str) -> None:
    (root / path).write_text(text)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "the pull request")


def test_an_unchanged_module_is_the_merge_bases_and_runs(repo: Path) -> None:
    assert PullRequestCode(PR).changed("team.metrics") is None
    register_custom({"mine": "team.metrics:score"}, PullRequestCode(PR))
    assert (repo / "imported").read_text() == "yes"


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("team/metrics.py", MODULE + "# generous now\n"),  # the module itself
        ("team/__init__.py", "import os\n"),  # a package its import runs
    ],
)
def test_a_module_the_pr_changed_is_not_imported_and_says_why(
    repo: Path, path: str, text: str
) -> None:
    _commit(repo, path, text)
    assert PullRequestCode(PR).changed("team.metrics") == path
    register_custom({"mine": "team.metrics:score"}, PullRequestCode(PR))
    assert not (repo / "imported").exists()
    metric = lookup("mine")
    assert metric is not None
    with pytest.raises(NotApplicable) as caught:  # the case's metric is NOT_EVALUATED
        metric.scorer([], [], MetricSpec("mine"), ScoreContext())
    assert str(caught.value) == (
        f"custom metric mine: code it runs ({path}) is added or changed by this pull request, "
        "and a pull request's code decides no score (the workflow's trust-pr-config lets it)"
    )


def test_a_module_the_pr_added_is_not_imported(repo: Path) -> None:
    _commit(repo, "team/new_metric.py", MODULE)
    assert PullRequestCode(PR).changed("team.new_metric") == "team/new_metric.py"


def test_trust_pr_config_or_a_run_outside_a_pull_request_runs_the_code(repo: Path) -> None:
    _commit(repo, "team/metrics.py", MODULE + "# generous now\n")
    assert PullRequestCode(PR, trusted=True).changed("team.metrics") is None
    assert PullRequestCode({}).changed("team.metrics") is None  # a push: the branch's own code
