"""Which user a command agent runs as: where ci-eval is root (GitHub's Docker action), an
unprivileged one, so the agent cannot read the job's secrets through /proc — root reads any
process's environment, undumpable or not — nor rewrite ci-eval's own code; the choice is the
workflow's, never ci-eval.toml's."""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_eval.connectors.identity import blocked_path, choose
from ci_eval.errors import InputError
from tests.helpers import run_cli, run_process

NOBODY = 65534
linux_root = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0 or shutil.which("sh") is None,
    reason="starting agents as another user needs root on Linux",
)


@pytest.fixture
def public_dir() -> Iterator[Path]:
    """A folder every user may enter (pytest's own are root's only)."""
    folder = Path(tempfile.mkdtemp(prefix="ci-eval-public-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def test_a_folder_only_its_owner_may_enter_blocks_another_user(public_dir: Path) -> None:
    private = public_dir / "private"
    (private / "agent").mkdir(parents=True)
    private.chmod(0o700)
    assert blocked_path(private / "agent", NOBODY, {NOBODY}, 5) == private


def test_the_owners_group_and_others_bits_each_count_for_their_own(public_dir: Path) -> None:
    script = public_dir / "agent.sh"
    script.write_text("")
    owner = os.stat(script).st_uid
    script.chmod(stat.S_IRUSR)  # 0400: its owner reads it, nobody else
    assert blocked_path(script, owner, set(), 4) is None
    assert blocked_path(script, NOBODY, {NOBODY}, 4) == script
    script.chmod(0o404)
    assert blocked_path(script, NOBODY, {NOBODY}, 4) is None


def test_ci_eval_not_running_as_root_keeps_its_own_user(tmp_path: Path) -> None:
    assert choose(None, "--agent-user", tmp_path, ["sh"], None, euid=1000).identity is None


def test_only_root_can_name_another_user(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--agent-user nobody: only root"):
        choose("nobody", "--agent-user", tmp_path, ["sh"], None, euid=1000)


def test_keep_keeps_root(tmp_path: Path) -> None:
    choice = choose("keep", "--agent-user", tmp_path, ["sh"], None, euid=0)
    assert choice.identity is None and choice.warning is None


@pytest.mark.skipif(os.name != "posix", reason="users are POSIX's")
def test_a_user_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="input agent-user no-such-user-x: no such user"):
        choose("no-such-user-x", "input agent-user", tmp_path, ["sh"], None, euid=0)


@linux_root
def test_root_runs_its_agents_as_nobody_when_nobody_can_reach_them(public_dir: Path) -> None:
    choice = choose(None, "--agent-user", public_dir, ["sh"], None, euid=0)
    assert choice.identity is not None and choice.identity.uid != 0


@linux_root
def test_root_keeps_root_and_says_why_when_nobody_cannot_reach_the_agent(
    public_dir: Path,
) -> None:
    private = public_dir / "private"
    private.mkdir(mode=0o700)
    choice = choose(None, "--agent-user", private, ["sh"], None, euid=0)
    assert choice.identity is None
    assert choice.warning and f"user nobody cannot reach {private}" in choice.warning


@linux_root
def test_a_named_user_that_cannot_reach_the_agent_is_a_usage_error(tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    with pytest.raises(InputError, match="cannot reach"):
        choose("nobody", "--agent-user", tmp_path, ["sh"], None, euid=0)


SPY = """#!/bin/sh
# reads its parent's environment (ci-eval's) and says who it is
while IFS= read -r line; do
  if tr '\\0' '\\n' < /proc/$PPID/environ 2>/dev/null | grep -q ghp_FAKEtoken; then
    seen=read-the-token
  else
    seen=no-token
  fi
  printf '{"final_response": "uid=%s %s home=%s"}\\n' "$(id -u)" "$seen" "$HOME"
done
"""


def _spy_run(folder: Path, *extra: str, stderr: list[str] | None = None) -> str:
    shutil.copy("samples/evals/weather_basic.evalset.json", folder / "set.evalset.json")
    (folder / "spy.sh").write_text(SPY)
    (folder / "spy.sh").chmod(0o755)
    env = {**os.environ, "GITHUB_TOKEN": "ghp_FAKEtoken123456789", "PYTHONPATH": os.getcwd()}
    done = run_process(
        "run",
        "set.evalset.json",
        "--agent",
        "command",
        "--agent-command",
        "./spy.sh",
        "--results",
        "r.json",
        "--metric",
        "response_match_score",
        *extra,
        cwd=folder,
        env=env,
    )
    assert done.returncode in (0, 1), done.stderr
    if stderr is not None:
        stderr.append(done.stderr)
    return (folder / "r.json").read_text()


@linux_root
def test_a_root_agent_reads_the_token_despite_undumpable(public_dir: Path) -> None:
    # why the user matters: this is what --agent-user keep allows
    assert "uid=0 read-the-token" in _spy_run(public_dir, "--agent-user", "keep")


@linux_root
def test_an_agent_started_by_root_runs_as_nobody_and_cannot_read_the_token(
    public_dir: Path,
) -> None:
    results = _spy_run(public_dir)
    assert f"uid={NOBODY} no-token home=" in results and "read-the-token" not in results
    assert "uid=0" not in results
    home = results.split(" home=")[1].split('"')[0]
    assert home.startswith(tempfile.gettempdir()) and not Path(home).exists()  # removed


@linux_root
def test_root_that_must_keep_root_says_so_and_why(public_dir: Path) -> None:
    private = public_dir / "private"
    private.mkdir(mode=0o700)
    said: list[str] = []
    assert "uid=0" in _spy_run(private, stderr=said)
    assert (
        "warning: agents run as root, with the job's secrets in reach: user nobody cannot "
        f"reach {private} (set --agent-user)"
    ) in said[0]


def test_the_agent_user_is_the_workflows_word_not_ci_eval_tomls(tmp_path: Path) -> None:
    (tmp_path / "ci-eval.toml").write_text('[agent]\nuser = "keep"\n')
    done = run_cli("run", "--config", str(tmp_path / "ci-eval.toml"), cwd=tmp_path)
    assert done.returncode == 2
    assert "[agent] user is not a ci-eval.toml setting" in done.stderr
    assert "--agent-user" in done.stderr


def test_ci_eval_toml_cannot_pass_the_jobs_token_to_the_agent(tmp_path: Path) -> None:
    (tmp_path / "ci-eval.toml").write_text('[agent]\nenv = ["HOME", "GITHUB_TOKEN"]\n')
    done = run_cli("run", "--config", str(tmp_path / "ci-eval.toml"), cwd=tmp_path)
    assert done.returncode == 2
    assert "[agent] env names GITHUB_TOKEN, a CI credential" in done.stderr


def test_the_agents_bearer_token_is_never_the_jobs_token() -> None:
    done = run_cli(
        "run",
        "samples/evals/weather_basic.evalset.json",
        "--agent",
        "http",
        "--agent-url",
        "http://127.0.0.1:9/",
        "--agent-token-env",
        "GITHUB_TOKEN",
        env={"GITHUB_TOKEN": "ghp_FAKEtoken123456789"},
    )
    assert done.returncode == 2
    assert "--agent-token-env GITHUB_TOKEN: a CI credential" in done.stderr
