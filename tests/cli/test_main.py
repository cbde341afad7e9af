"""`ci_eval.cli.main(argv, env) -> int`: the command in-process, with the exit code and output
the process gives, and nothing of one run left behind for the next."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ci_eval.cli import main
from ci_eval.io import reaper
from ci_eval.metrics import REGISTRY
from ci_eval.text import redact
from tests.conftest import REPO, SAMPLES
from tests.helpers import run_cli, run_process, run_sample_agent

EVALSET = SAMPLES / "evals/weather_basic.evalset.json"


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["no-such-command"],
        ["validate", str(EVALSET)],
        ["validate", "/no/such/path"],
        ["run", str(EVALSET), "--agent", "nope"],
        [],
    ],
    ids=["version", "unknown-command", "valid", "missing-path", "bad-option", "no-args"],
)
def test_in_process_gives_the_processs_exit_code_and_output(argv: list[str]) -> None:
    inside, outside = run_cli(*argv), run_process(*argv)
    assert inside.returncode == outside.returncode
    # the process names itself as started (python -m ci_eval); in-process it is ci-eval
    assert inside.stdout == outside.stdout.replace("python -m ci_eval", "ci-eval")
    assert inside.stderr == outside.stderr.replace("python -m ci_eval", "ci-eval")


def test_main_returns_the_code_instead_of_exiting(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("ci-eval ")
    assert main(["no-such-command"]) == 2


def test_env_replaces_the_environment_for_the_run_only() -> None:
    before = dict(os.environ)
    proc = run_cli("run", str(EVALSET), env={"PATH": "/usr/bin", "CI_EVAL_CANCEL_GRACE": "soon"})
    assert dict(os.environ) == before
    assert proc.returncode == 2 and "CI_EVAL_CANCEL_GRACE='soon'" in proc.stderr


def test_a_runs_secrets_are_not_masked_in_the_next_run() -> None:
    env = {"MY_SERVICE_TOKEN": "plain-words-one-run-only"}
    assert "plain-words-one-run-only" in redact.env_secrets(env)  # the run masks it
    before = redact.current()
    run_cli("validate", str(EVALSET), env=env)
    assert redact.current() is before
    assert redact.text("plain-words-one-run-only") == "plain-words-one-run-only"


def test_signal_handlers_are_put_back() -> None:
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    run_cli("validate", str(EVALSET))
    assert {s: signal.getsignal(s) for s in handlers} == handlers


def test_a_runs_custom_metrics_are_its_own(tmp_path: Path) -> None:
    (tmp_path / "my_metrics.py").write_text(
        "def scorer(expected, actual, spec, ctx):\n    return 1.0, [1.0] * len(actual), {}\n"
    )
    (tmp_path / "ci-eval.toml").write_text('[custom_metrics]\nmine = "my_metrics:scorer"\n')
    builtins = dict(REGISTRY)
    proc = run_cli("validate", str(EVALSET), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert builtins == REGISTRY
    assert str(tmp_path) not in sys.path


def test_what_a_run_froze_is_collectable_again(tmp_path: Path) -> None:
    assert gc.get_freeze_count() == 0
    proc = run_sample_agent(str(EVALSET), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # the run went through (berlin fails)
    assert gc.get_freeze_count() == 0


def test_the_quick_start_through_the_installed_command() -> None:
    """README's quick start, as a user types it: the console script exits with main's code."""
    script = Path(sys.executable).parent / "ci-eval"
    if not script.is_file():
        pytest.skip("ci-eval is not installed beside this interpreter")
    proc = subprocess.run(
        [str(script), "run"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # berlin fails, on purpose
    assert "6 cases: 4 passed, 1 failed, 0 errors, 1 skipped" in proc.stdout
    assert proc.stdout.rstrip().endswith(
        "gate failed: 1 failed case (weather_basic:berlin_expected_to_fail); "
        "1 skipped did not block; gate on thresholds only: no baseline at .ci-eval/baseline.json"
    )


def test_the_processs_own_run_leaves_what_it_built_frozen_for_the_exit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # main() without argv is the process's run (console script, python -m ci_eval): the
    # interpreter exits next, and its last collection must not walk what the run built
    monkeypatch.setattr(sys, "argv", ["ci-eval", "--version"])
    # ... and it kills every child the process has left, and adopts orphans from then on: here
    # that would be the test process's own children, the session's adk api_server among them
    monkeypatch.setattr(reaper, "become_subreaper", lambda: False)
    monkeypatch.setattr(reaper, "kill_adopted", lambda: 0)
    try:
        assert main() == 0
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert main(["--version"]) == 0
    assert gc.get_freeze_count() == 0  # an in-process run (argv given) leaves nothing frozen
