"""Every YAML text a user of ci-eval loads: the three action files, the workflows (and the
linter's settings for them), the sample workflows of ``docs/workflows/`` and the ``yaml`` blocks
of the README and ``docs/`` (what users copy into their own workflows)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO

ACTIONS = ("action.yml", "adk/action.yml", "setup/action.yml")
_BLOCK = re.compile(r"^```ya?ml\n(.*?)^```", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class YamlText:
    where: str  # "adk/action.yml", "README.md block 3 (line 70)"
    text: str


def workflows() -> list[Path]:
    return sorted((REPO / ".github" / "workflows").glob("*.y*ml"))


def sample_workflows() -> list[Path]:
    """The workflows the README shows, as files (``docs/workflows/``)."""
    return sorted((REPO / "docs" / "workflows").glob("*.y*ml"))


def documents() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def yaml_texts() -> list[YamlText]:
    texts = [YamlText(name, (REPO / name).read_text()) for name in ACTIONS]
    texts += [
        YamlText(p.relative_to(REPO).as_posix(), p.read_text())
        for p in workflows() + sample_workflows()
    ]
    texts.append(YamlText(".github/zizmor.yml", (REPO / ".github" / "zizmor.yml").read_text()))
    for doc in documents():
        body = doc.read_text()
        for n, match in enumerate(_BLOCK.finditer(body), 1):
            line = body.count("\n", 0, match.start()) + 1
            name = doc.relative_to(REPO).as_posix()
            texts.append(YamlText(f"{name} block {n} (line {line})", match.group(1)))
    return texts
