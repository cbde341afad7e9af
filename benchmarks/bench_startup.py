"""Start-up, whole process, side by side in one run: ``ci-eval --help`` against ``adk --help``
(target: not slower), and the quick start (``ci-eval run`` in the repository: 5 bundled cases,
a command agent, ROUGE included; target <= 1.0 s) against a bare ``python -c pass``.
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
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    ci_eval = str(_measure.BIN / "ci-eval")
    bare = _measure.run([sys.executable, "-c", "pass"], repeat=args.repeat)
    ours = _measure.run([ci_eval, "--help"], repeat=args.repeat)
    if importlib.util.find_spec("google.adk") is not None:
        theirs = _measure.run([str(_measure.BIN / "adk"), "--help"], repeat=args.repeat)
        print(
            f"startup: ci-eval --help {ours}; adk --help {theirs} (target: not slower: "
            f"{_measure.verdict(ours.wall, theirs.wall)}); python -c pass {bare} "
            f"[{_measure.load()}]"
        )
    else:
        print(f"startup: ci-eval --help {ours}; adk not installed; python -c pass {bare}")
    quick = _measure.run([ci_eval, "run"], repeat=args.repeat)  # exits 1: a case fails on purpose
    print(
        f"startup: quick start (ci-eval run, 5 cases, ROUGE), whole process: {quick} "
        f"(target <= 1.0 s: {_measure.verdict(quick.wall, 1.0)})"
    )


if __name__ == "__main__":
    main()
