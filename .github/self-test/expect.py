"""The self-test's check of a ci-eval step's outputs on the bundled samples, run after each leg
with the step's outputs as JSON in OUTPUTS (``${{ toJSON(steps.evals.outputs) }}``).

Six cases: 4 pass, 1 fails on purpose (berlin_expected_to_fail), 1 is skipped (a
user-simulation case without a simulator); ``total`` counts the skipped one too. With
``fail-on: error`` the expected failure does not block, so the gate passes.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

EXPECTED = {
    "total": "6",
    "passed": "4",
    "failed": "1",
    "errors": "0",
    "regressions": "0",
    "not-evaluated": "0",
    "gate": "passed",
}


def problems(outputs: dict[str, str], workdir: Path) -> list[str]:
    found = [
        f"{name} is {outputs.get(name)!r}, expected {want!r}"
        for name, want in EXPECTED.items()
        if outputs.get(name) != want
    ]
    if not outputs.get("verdict", "").startswith("gate passed"):
        found.append(f"verdict is {outputs.get('verdict')!r}, expected 'gate passed: …'")
    for name in ("junit-path", "results-path"):
        if not (workdir / outputs.get(name, "")).is_file():
            found.append(f"{name} {outputs.get(name)!r} is not a file")
    return found


def main() -> int:
    outputs = json.loads(os.environ.get("OUTPUTS") or "{}")
    found = problems(outputs, Path.cwd())
    for line in found:
        print(f"::error title=self-test::{line}")
    if not found:
        print(f"self-test: outputs as expected ({outputs['verdict']})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
