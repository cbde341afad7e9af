"""The owner of ci-eval's repository is a placeholder in the docs (``acme``), spelled one way
in the README, docs/, CONTRIBUTING.md, the sample workflows and the action files, the same as
the code's ``ACTION_REPO`` and ``IMAGE``; and the README says, once, that it is one."""

from __future__ import annotations

import re
from pathlib import Path

from ci_eval import ACTION_REPO, IMAGE
from tests.conftest import REPO

OWNER = ACTION_REPO.split("/")[0]
# ci-eval's repository or image, whoever owns it: uses: X/ci-eval, github.com/X/ci-eval,
# ghcr.io/X/ci-eval
REFERENCE = re.compile(r"(?:uses:\s*|github\.com/|ghcr\.io/)([^/\s`'\"]+)/ci-eval\b")


def _texts() -> list[Path]:
    docs = sorted((REPO / "docs").rglob("*.md")) + sorted((REPO / "docs").rglob("*.yml"))
    actions = [REPO / "action.yml", REPO / "adk" / "action.yml", REPO / "setup" / "action.yml"]
    return [REPO / "README.md", REPO / "CONTRIBUTING.md", *docs, *actions]


def test_the_code_names_one_owner() -> None:
    assert IMAGE.removeprefix("ghcr.io/") == ACTION_REPO


def test_every_reference_to_ci_evals_repository_names_the_placeholder_owner() -> None:
    seen = 0
    for path in _texts():
        for match in REFERENCE.finditer(path.read_text("utf-8")):
            seen += 1
            name = path.relative_to(REPO)
            assert match.group(1) == OWNER, f"{name}: {match.group(0)!r} (use {OWNER})"
    assert seen >= 10


def test_the_readme_says_once_that_the_owner_is_a_placeholder() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    assert readme.count(f"`{ACTION_REPO}` is a placeholder") == 1
