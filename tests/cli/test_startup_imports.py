"""What a command that only talks (`--help`, `--version`, a wrong option) loads: the CLI and the
settings table, nothing the run needs — no pydantic models, no HTTP, no templates, no stage
package. A fresh interpreter each: the process's own modules are the point."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = (
    "import sys\n"
    "from ci_eval.cli import main\n"
    "code = main(sys.argv[1:], {'PATH': '/usr/bin:/bin', 'COLUMNS': '80'})\n"
    "heavy = ('pydantic', 'pydantic_core', 'requests', 'jinja2', 'ci_eval.model.evalset',\n"
    "         'ci_eval.model.results', 'ci_eval.model.metric_spec', 'ci_eval.model.values',\n"
    "         'ci_eval.load.discover', 'ci_eval.text.redact', 'ci_eval.gate', 'ci_eval.run',\n"
    "         'ci_eval.connectors', 'ci_eval.metrics', 'ci_eval.report', 'ci_eval.pipeline')\n"
    "under = tuple(h + '.' for h in heavy)\n"
    "loaded = sorted(m for m in sys.modules if m in heavy or m.startswith(under))\n"
    "print(code, loaded, file=sys.stderr)\n"
)


def _loaded(*argv: str) -> tuple[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=60
    )
    code, _, loaded = done.stderr.strip().splitlines()[-1].partition(" ")
    return code, loaded


@pytest.mark.parametrize(
    "argv",
    [
        ("--help",),
        ("--version",),
        ("run", "--help"),
        ("report", "--help"),
        ("baseline", "update", "--help"),
        ("action", "--help"),
    ],
)
def test_help_and_version_load_only_the_cli_and_the_settings_table(argv: tuple[str, ...]) -> None:
    assert _loaded(*argv) == ("0", "[]")


def test_a_wrong_option_is_said_without_loading_the_run() -> None:
    assert _loaded("run", "--no-such-option") == ("2", "[]")
