"""``ci-eval init --dry-run`` on an IBM watsonx Orchestrate repository names each set once, in
its "Found" lines and in ci-eval.toml's comment, and no folder twice in ``paths``; JSON beside
the sets that is no eval set is no problem."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

from tests.helpers import git, run_cli


def _dry_run(root: Path) -> tuple[list[str], str]:
    """The "Found" lines that name a set, and the ci-eval.toml init would write."""
    done = run_cli("init", "--dry-run", str(root))
    assert done.returncode == 0, done.stdout + done.stderr
    found = done.stdout.split("Found\n", 1)[1].split("Files\n", 1)[0]
    toml = done.stdout.split("--- ci-eval.toml\n", 1)[1].split("\n--- ", 1)[0]
    return [x.strip() for x in found.splitlines() if x.startswith("    ")], toml


def test_init_names_each_orchestrate_set_once(corpus: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(corpus / "watsonx-orchestrate/IBM-ibm-watsonx-orchestrate-adk", repo)
    git(repo, "init", "-q")
    lines, toml = _dry_run(repo)
    sets = sorted(str(p.relative_to(repo)) for p in repo.rglob("data*.json"))
    sets = [s for s in sets if "/analysis/" not in s]  # Orchestrate's outputs, not sets
    assert len(lines) >= len(sets) > 1
    for line in lines:
        path, rest = line.split(" (", 1)
        assert path.removesuffix(".json") not in rest, line  # not "x.json (x: 1 case, …)"
    for path in sets:
        assert sum(line.startswith(f"{path} (") for line in lines) == 1, path
        assert toml.count(path.removesuffix(".json")) == 1, path
    paths = tomllib.loads(toml)["run"]["paths"]
    assert len(set(paths)) == len(paths)
    assert not [a for a in paths for b in paths if a != b and a.startswith(b + "/")]
    assert "files that did not load" not in "\n".join(lines)
