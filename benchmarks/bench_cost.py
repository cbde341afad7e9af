"""What a pull request costs in calls, on the bundled samples: the agent's turns (a loopback
HTTP agent speaking ci-eval's contract, the sample weather agent's logic) and the LLM's
completions (a loopback OpenAI-compatible server as the judge — ``final_response_match_v2`` on
the sets without a config, the simulated user's quality metric — and as the user simulator).

    python benchmarks/bench_cost.py        (or: python benchmarks/run.py cost)

Rows: main's first run; an identical second run with the judge cache (0 judge calls); a pull
request that changes only a README (``--select changed``: 0 agent calls); one that changes one
eval set (only its cases run); one that changes the agent (everything runs). Each is a real
``ci-eval run`` in process, in a git repository with main's history, as a PR job sees it.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._measure import figure  # noqa: E402
from ci_eval.cli import main  # noqa: E402
from tests.judge_server import JudgeServer  # noqa: E402
from tests.loopback_agent import LoopbackAgent  # noqa: E402
from tests.simulated_user import scripted_user  # noqa: E402

VALID = '{"reasoning": "the same answer", "is_the_agent_response_valid": "valid"}'
USER = scripted_user()


def _answer(prompt: str, n: int) -> str:
    """The judge's verdict, or the simulated user's next turn and its quality verdicts."""
    return VALID if "is_the_agent_response_valid" in prompt else USER(prompt, n)


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=b@example.com", "-c", "user.name=b", *args],
        cwd=cwd, check=True, capture_output=True,
    )  # fmt: skip


def _run(cwd: Path, env: dict[str, str], *args: str) -> int:
    here = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return main(["run", *args], env=env)
    finally:
        os.chdir(here)


class Counted:
    """The calls the agent and the judge saw since the last reading."""

    def __init__(self, agent: LoopbackAgent, judge: JudgeServer) -> None:
        self.agent, self.judge = agent, judge
        self.seen = (0, 0)

    def take(self) -> tuple[int, int]:
        now = (sum(self.agent.requests.values()), len(self.judge.prompts))
        spent = (now[0] - self.seen[0], now[1] - self.seen[1])
        self.seen = now
        return spent


def main_bench() -> int:
    with (
        tempfile.TemporaryDirectory() as tmp,
        LoopbackAgent() as agent,
        JudgeServer(_answer) as judge,
    ):
        repo = Path(tmp) / "repo"
        skip = shutil.ignore_patterns("__pycache__")
        shutil.copytree(ROOT / "samples", repo / "samples", ignore=skip)
        (repo / "ci-eval.toml").write_text(
            '[run]\npaths = ["samples/evals"]\n\n'
            f'[agent]\nkind = "http"\nurl = "{agent.url}"\n\n'
            f'[judge]\nbase_url = "{judge.url}"\nmodel = "loopback"\n\n'
            # a set without a config of its own is judged too
            "[metrics]\ntool_trajectory_avg_score = 1.0\nfinal_response_match_v2 = 0.5\n"
        )
        (repo / "README.md").write_text("# an agent\n")
        _git(repo, "init", "-q", "-b", "main")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
        calls = Counted(agent, judge)
        cache = str(Path(tmp) / "cache")
        rows: list[tuple[str, tuple[int, int], str]] = []

        _run(repo, env, "--update-baseline", "--fail-on", "error")  # main's history
        _git(repo, "add", ".")
        _git(repo, "commit", "-q", "-m", "main")
        calls.take()

        _run(repo, env, "--cache", cache)
        rows.append(("first run (cache empty)", calls.take(), "every call"))
        _run(repo, env, "--cache", cache)
        rows.append(("identical second run, --cache", calls.take(), "0 judge calls"))

        pr = {**env, "GITHUB_BASE_REF": "main"}

        def pull_request(name: str, path: str, text: str) -> Path:
            clone = Path(tmp) / name
            _git(Path(tmp), "clone", "-q", repo.as_uri(), name)
            _git(clone, "checkout", "-q", "-b", name)
            target = clone / path
            target.write_text(target.read_text() + text)
            _git(clone, "commit", "-q", "-am", name)
            return clone

        readme = pull_request("readme", "README.md", "more words\n")
        _run(readme, pr, "--select", "changed", "--cache", cache)
        rows.append(("PR: only the README, --select changed", calls.take(), "0 agent calls"))

        one = pull_request("one-set", "samples/evals/legacy/calculator.test.json", "\n")
        _run(one, pr, "--select", "changed", "--cache", cache)
        rows.append(("PR: one eval set, --select changed", calls.take(), "only its turns"))

        logic = "samples/agents/weather_agent/logic.py"
        changed = pull_request("agent", logic, "\n# tuned\n")
        _run(changed, pr, "--select", "changed", "--cache", cache)
        rows.append(("PR: the agent, --select changed", calls.take(), "every agent call"))

    first = rows[0][1]
    targets = {1: lambda c: c[1] == 0, 2: lambda c: c[0] == 0, 3: lambda c: 0 < c[0] < first[0]}
    command = "python benchmarks/run.py cost"
    for i, (name, (agent_calls, judge_calls), target) in enumerate(rows):
        check = targets.get(i)
        figure(
            f"calls: {name}",
            f"{agent_calls} agent, {judge_calls} judge/simulator",
            f"first run {first[0]} agent, {first[1]} judge/simulator",
            target,
            None if check is None else check((agent_calls, judge_calls)),
            command,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main_bench())
