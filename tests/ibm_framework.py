"""IBM's ibm-watsonx-orchestrate-evaluation-framework 1.6.9 (its package ``agentops``), as the
Orchestrate parity tests import it.

Installed beside google-adk it would downgrade pandas, jsonschema and tenacity and move
opentelemetry, so it is never installed into the test environment: ``CI_EVAL_IBM_PATH`` (a
``pip install --target`` folder holding it) when set, else one made once per machine under
``~/.cache/ci-eval-tests/ibm-framework-1.6.9``: the framework and the packages its metrics'
imports need, each ``--no-deps`` at the version pinned below (the rest of what it imports the
test environment has), under a file lock so parallel xdist workers make it once. The folder is
*appended* to ``sys.path``: the environment's own packages win. A machine where it cannot be
had (no registry) skips the tests that need it, with the reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.tool_cache import cache_root, locked

VERSION = "1.6.9"
ENV_VAR = "CI_EVAL_IBM_PATH"
# what agentops' metrics import beyond the test environment, as found on 2026-12-03
PACKAGES = (
    f"ibm-watsonx-orchestrate-evaluation-framework=={VERSION}",
    "fuzzywuzzy==0.18.0",
    "ibm-cloud-sdk-core==3.28.0",
    "ibm-watsonx-orchestrate-clients==2.19.1",
    "ibm-watsonx-orchestrate-core==2.19.1",
    "jsonargparse==4.53.0",
    "jsonpatch==1.48",
    "jsonpointer==3.12",
    "langchain-core==1.5.0",
    "langchain-protocol==0.0.20",
    "langsmith==0.15.1",
    "portkey-ai==2.3.4",
    "pyjwt==2.15.1",
    "requests-toolbelt==1.0.0",
    "uuid-utils==1.2.0",
    "xxhash==4.1.0",
)
INSTALL_TIMEOUT_S = 600
FAILED_INSTALL_KEPT_S = 600  # a failed install is not retried by every worker of one run


def _install(target: Path) -> str | None:
    """Why the framework could not be installed into ``target``, or None when it is there."""
    done = target / ".installed"
    failed = target.parent / f"{target.name}.failed"
    if done.is_file():
        return None
    if failed.is_file() and time.time() - failed.stat().st_mtime < FAILED_INSTALL_KEPT_S:
        return failed.read_text()[:300]
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target)]
    try:
        proc = subprocess.run(
            [*command, *PACKAGES],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        proc = None
        why = f"pip failed: {exc}"
    if proc is not None and proc.returncode == 0:
        done.write_text(" ".join(PACKAGES))
        return None
    if proc is not None:
        why = f"pip install exited {proc.returncode}: {proc.stderr.strip()[-300:]}"
    failed.write_text(why)
    return why


def importable() -> None:
    """Make ``agentops`` importable, or skip the calling test module with the reason."""
    given = os.environ.get(ENV_VAR)
    target = Path(given) if given else cache_root() / f"ibm-framework-{VERSION}"
    if not given:
        with locked(target.parent / f"{target.name}.lock"):
            why = _install(target)
        if why is not None:
            pytest.skip(f"IBM's framework {VERSION} could not be installed: {why}",
                        allow_module_level=True)  # fmt: skip
    if str(target) not in sys.path:
        sys.path.append(str(target))
    # first: agentops' own import order avoids a cycle
    pytest.importorskip("agentops.metrics", reason=f"IBM's framework {VERSION} at {target}")
