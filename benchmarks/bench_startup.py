"""Start-up, whole process, side by side in one run: ``ci-eval --help`` against ``adk --help``
(target: not slower), and the quick start (``ci-eval run`` in the repository: 5 bundled cases,
a command agent, ROUGE included; target <= 1.0 s) against a bare ``python -c pass``. The
commands take turns (A B C A B C ...), so each meets the same load as its reference.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measure


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    ci_eval = str(_measure.BIN / "ci-eval")
    has_adk = importlib.util.find_spec("google.adk") is not None
    commands = [[sys.executable, "-c", "pass"], [ci_eval, "--help"], [ci_eval, "run"]]
    if has_adk:
        commands.append([str(_measure.BIN / "adk"), "--help"])
    # `ci-eval run` exits 1: one bundled case fails on purpose
    bare, ours, quick, *theirs = _measure.interleaved(commands, repeat=args.repeat)
    if theirs:
        _measure.figure(
            "ci-eval --help",
            str(ours),
            f"adk --help {theirs[0]}",
            "<= adk --help",
            ours.wall <= theirs[0].wall,
            "python benchmarks/run.py startup",
        )
    else:
        _measure.figure(
            "ci-eval --help",
            str(ours),
            "adk not installed",
            "<= adk --help",
            None,
            "python benchmarks/run.py startup",
        )
    _measure.figure(
        "quick start (ci-eval run: 5 bundled cases, ROUGE)",
        str(quick),
        f"python -c pass {bare}",
        "<= 1.0 s",
        quick.wall <= 1.0,
        "python benchmarks/run.py startup",
    )


if __name__ == "__main__":
    main()
