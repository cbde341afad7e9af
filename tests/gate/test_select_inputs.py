"""``--select changed`` is conservative: every changed file is an agent input but the eval sets,
their sidecars and a short list (READMEs, changelogs, licences, ``docs/``, ``.ci-eval/``) — a
prompt in Markdown, a file whose name git would quote — so a pull request that breaks a case
through one re-runs it and fails; what it did not count as an input is named. A real git
repository with a command agent that answers from its prompt files."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from ci_eval.gate.changed import choose
from tests.helpers import git, run_cli

AGENT = """\
import json, pathlib, sys
answer = pathlib.Path("prompts/answers.md").read_text().strip()
answer += json.loads(pathlib.Path("data/réponses.json").read_text(encoding="utf-8"))["suffix"]
with open("calls.log", "a") as log:
    for line in sys.stdin:
        log.write("call\\n")
        print(json.dumps({"final_response": answer}), flush=True)
"""
EVALSET = {
    "eval_set_id": "basic",
    "eval_cases": [
        {
            "eval_id": f"paris_{i}",
            "conversation": [
                {
                    "invocation_id": "i",
                    "user_content": {"role": "user", "parts": [{"text": f"Paris {i}?"}]},
                    "final_response": {"role": "model", "parts": [{"text": "sunny, 21 C"}]},
                }
            ],
        }
        for i in range(2)
    ],
}
FLAGS = ("--agent", "command", "--agent-command", f"{sys.executable} agent.py")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    return {**env, **extra}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for folder in ("evals", "prompts", "data", "docs"):
        (root / folder).mkdir(parents=True)
    (root / "agent.py").write_text(AGENT)
    (root / "prompts/answers.md").write_text("sunny, 21 C\n")
    (root / "data/réponses.json").write_text('{"suffix": ""}', encoding="utf-8")
    (root / "evals/basic.evalset.json").write_text(json.dumps(EVALSET))
    (root / "README.md").write_text("# agent\n")
    (root / ".gitignore").write_text("calls.log\nr.json\n")
    git(root, "init", "-q", "-b", "main")
    for _ in range(2):
        done = run_cli("run", "evals", *FLAGS, "--update-baseline", cwd=root, env=_env())
        assert done.returncode == 0, done.stdout + done.stderr
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "main")
    git(root, "checkout", "-q", "-b", "feature")
    (root / "calls.log").unlink()
    return root


def _pr(root: Path, name: str, text: str) -> tuple[int, str, int]:
    """The PR writes ``text`` to ``name``: exit code, verdict line, agent calls made."""
    (root / name).write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the pull request")
    done = run_cli(
        "run", "evals", *FLAGS, "--select", "changed", cwd=root, env=_env(GITHUB_BASE_REF="main")
    )
    log = root / "calls.log"
    calls = len(log.read_text().splitlines()) if log.exists() else 0
    return done.returncode, (done.stdout.strip().splitlines() or [""])[-1], calls


def test_a_prompt_in_markdown_is_an_agent_input(repo: Path) -> None:
    code, line, calls = _pr(repo, "prompts/answers.md", "cloudy\n")
    assert code == 1, line  # re-run, and the break found
    assert calls > 0


def test_a_file_whose_name_git_would_quote_is_an_agent_input(repo: Path) -> None:
    code, line, calls = _pr(repo, "data/réponses.json", '{"suffix": " (or not)"}')
    assert code == 1, line
    assert calls > 0


def test_a_readme_only_pull_request_makes_no_agent_call_and_names_it(repo: Path) -> None:
    code, line, calls = _pr(repo, "README.md", "# agent\nmore words\n")
    assert code == 0, line
    assert calls == 0
    assert "not agent inputs: README.md" in line


@pytest.mark.parametrize(
    ("name", "input_"),
    [
        ("README.md", False),
        ("agents/weather/README.rst", False),
        ("CHANGELOG.md", False),
        ("LICENSE", False),
        ("docs/prompts.md", False),
        (".ci-eval/accept.toml", False),
        ("prompts/system.md", True),
        ("notes.md", True),
        ("data/réponses.json", True),
    ],
)
def test_the_default_list_of_what_is_not_an_input(name: str, input_: bool) -> None:
    ran_all = choose([], [name], {}, "abc").said.startswith("every case ran")
    assert ran_all is input_
