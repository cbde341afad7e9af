"""Start-up, whole process, side by side in one run: ``ci-eval --help``, ``--version`` and a
wrong option against ``adk --help`` (target: not slower), and the quick start (``ci-eval run``
in the repository: 5 bundled cases, a command agent, ROUGE included; target <= 5 x ``adk
--help``, or <= 1.0 s without adk). The commands take turns (A B C A B C ...), so each meets
the same load as its reference.
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
    commands = [
        [sys.executable, "-c", "pass"],
        [ci_eval, "--help"],
        [ci_eval, "--version"],
        [ci_eval, "run", "--no-such-option"],  # exits 2
        [ci_eval, "run"],  # exits 1: one bundled case fails on purpose
    ]
    if has_adk:
        commands.append([str(_measure.BIN / "adk"), "--help"])
    bare, helps, version, wrong, quick, *theirs = _measure.interleaved(
        commands, repeat=args.repeat, ok=(0, 1, 2)
    )
    command = "python benchmarks/run.py startup"
    for name, ours in (
        ("ci-eval --help", helps),
        ("ci-eval --version", version),
        ("ci-eval run --no-such-option (a usage error)", wrong),
    ):
        _measure.figure(
            name,
            str(ours),
            f"adk --help {theirs[0]}" if theirs else "adk not installed",
            "<= adk --help",
            ours.wall <= theirs[0].wall if theirs else None,
            command,
        )
    if theirs:
        _measure.figure(
            "quick start (ci-eval run: 5 bundled cases, ROUGE)",
            f"{quick} = {quick.wall / theirs[0].wall:.1f} x adk --help",
            f"adk --help {theirs[0]}",
            "<= 5 x adk --help",
            quick.wall <= 5 * theirs[0].wall,
            command,
        )
    else:
        _measure.figure(
            "quick start (ci-eval run: 5 bundled cases, ROUGE)",
            str(quick),
            f"python -c pass {bare}",
            "<= 1.0 s",
            quick.wall <= 1.0,
            command,
        )


if __name__ == "__main__":
    main()
