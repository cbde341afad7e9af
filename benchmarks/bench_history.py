"""``ci-eval history`` on 30 pushes, whole process (target <= 5 s, issue #57): the baseline of 30
pushes recorded one by one (``baseline update``, not timed) of 3 eval sets of 20 cases, 3 runs
each — 5,400 runs kept — then the site (a suite page, 60 case pages, their SVG charts) written
by a fresh ``ci-eval history``, in turns with a bare ``python -c pass``.

    python benchmarks/run.py history [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import _measure  # noqa: E402

from ci_eval.gate import baseline as baseline_store  # noqa: E402
from tests.history_pushes import push_results  # noqa: E402

PUSHES, SETS, CASES = 30, 3, 20


def baseline(path: Path) -> None:
    data = None
    for p in range(PUSHES):
        results = push_results(p, sets=SETS, cases=CASES)
        data, _ = baseline_store.update(data, results, commit=f"{p + 1:040x}")
    assert data is not None and len(data.pushes) == PUSHES
    baseline_store.write(path, data)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder) / "baseline.json"
        baseline(base)
        site = Path(folder) / "site"
        command = [str(_measure.BIN / "ci-eval"), "history", "--baseline", str(base)]
        bare, ours = _measure.interleaved(
            [[sys.executable, "-c", "pass"], [*command, "-o", str(site)]],
            repeat=args.repeat,
            cwd=Path(folder),
            ok=(0,),
        )
        pages = len(list((site / "cases").glob("*.html")))
        assert pages == SETS * CASES, pages
    _measure.figure(
        f"ci-eval history: {PUSHES} pushes, {SETS * CASES} cases ({pages + 1} pages)",
        str(ours),
        f"python -c pass {bare}",
        "<= 5 s",
        ours.wall <= 5.0,
        "python benchmarks/run.py history",
    )


if __name__ == "__main__":
    main()
