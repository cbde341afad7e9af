"""The pictures of ``ci-eval history`` in docs/: the suite page and a case page of a site drawn
from 30 pushes of two eval sets (:mod:`tests.history_pushes`: a steady case, a flaky one, one
that breaks at push 21, one that errors now and then), photographed by headless Chromium.

    python -m docs.history_screenshot [--out docs] [--width 1000]

Needs ``chromium`` on the PATH (or ``--chromium PATH``). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a file: python docs/history_screenshot.py
    sys.path.insert(0, str(REPO))

SETS = ("weather_basic", "travel_planner")
CASES = {0: "paris_weather", 1: "tokyo_forecast", 2: "rain_alert", 3: "multi_city", 4: "units"}


def baseline(path: Path) -> None:
    from ci_eval.gate import baseline as baseline_store
    from tests.history_pushes import push_results

    data = None
    for p in range(30):
        results = push_results(p, sets=2, cases=5, case_ids=CASES)
        for record, name in zip(results.sets, SETS, strict=True):
            record.eval_set_id = name
        commit = hashlib.sha1(f"push {p}".encode()).hexdigest()
        data, _ = baseline_store.update(data, results, commit=commit)
    assert data is not None
    for n, push in enumerate(data.pushes):  # a push a day, as on a quiet main
        push.date = f"2026-11-{n // 3 + 1:02d}T{9 + 3 * (n % 3):02d}:12:00+00:00"
    baseline_store.write(path, data)


def shoot(binary: str, page: Path, out: Path, width: int, height: int) -> None:
    subprocess.run(
        [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--window-size={width},{height}", f"--screenshot={out}", page.as_uri()],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    parser.add_argument("--width", type=int, default=1000)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args(argv)
    from ci_eval.cli import main as ci_eval
    from ci_eval.report.history_site.site import case_page

    with tempfile.TemporaryDirectory() as folder:
        base, site = Path(folder) / "baseline.json", Path(folder) / "site"
        baseline(base)
        code = ci_eval(["history", "--baseline", str(base), "-o", str(site)])
        if code:
            return code
        shoot(args.chromium, site / "index.html", args.out / "history-suite.png", args.width, 1500)
        page = site / case_page(SETS[0], CASES[1])
        shoot(args.chromium, page, args.out / "history-case.png", args.width, 1100)
    print(f"wrote {args.out / 'history-suite.png'} and {args.out / 'history-case.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
