"""Cancellation and deadlines, measured: how long ci-eval takes from a signal to its exit with
every turn hung (``--timeout 3600``), and where a dripping agent's turn ends.

For HTTP (a loopback agent whose turns never answer) and command (``sleep``) agents, 40 cases at
concurrency 4: SIGTERM once (the grace period, then cancelled), and SIGINT twice 0.5 s apart
(cancelled at once). Prints the seconds from the first signal to the exit, the exit code, and
whether the results and JUnit files hold all 40 cases. Then an HTTP agent dripping its reply a
byte every 0.2 s under ``--timeout 2``: the turn's recorded duration. Exits 1 if an exit took
longer than 10 s (GitHub's runner kills the container about 10 s after its first signal), a
report lost a case, or the drip outlived its deadline by more than a second.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.loopback_agent import LoopbackAgent  # noqa: E402

CASES = 40
LIMIT_S = 10.0
HANG_S = 300


def _eval_set(folder: Path, message: str) -> Path:
    cases = [
        {
            "eval_id": f"c{n}",
            "conversation": [{"user_content": {"role": "user", "parts": [{"text": message}]}}],
        }
        for n in range(CASES)
    ]
    path = folder / "hang.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "hang", "eval_cases": cases}))
    return path


def _cancel(folder: Path, agent: list[str], reached: object, signals: list[int]) -> dict:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ci_eval",
            "run",
            str(folder / "hang.evalset.json"),
            *agent,
            "--concurrency",
            "4",
            "--timeout",
            "3600",
            "--results",
            "r.json",
            "--junit",
            "j.xml",
        ],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    end = time.monotonic() + 120
    while not reached() and time.monotonic() < end:  # type: ignore[operator]
        time.sleep(0.05)
    first = time.monotonic()
    for n, sig in enumerate(signals):
        if n:
            time.sleep(0.5)
        proc.send_signal(sig)
    code = proc.wait(timeout=120)
    took = time.monotonic() - first
    results = json.loads((folder / "r.json").read_text())
    cases = sum(len(s["cases"]) for s in results["sets"])
    junit = len(ET.parse(folder / "j.xml").getroot().findall(".//testcase"))
    return {"seconds": took, "code": code, "results": cases, "junit": junit}


def _drip(folder: Path, url: str) -> float:
    path = folder / "drip.evalset.json"
    turn = {"user_content": {"role": "user", "parts": [{"text": "drip 0.2"}]}}
    path.write_text(
        json.dumps({"eval_set_id": "d", "eval_cases": [{"eval_id": "d", "conversation": [turn]}]})
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "ci_eval",
            "run",
            str(path),
            "--agent",
            "http",
            "--agent-url",
            url,
            "--timeout",
            "2",
            "--retries",
            "0",
            "--results",
            "d.json",
        ],
        cwd=folder,
        capture_output=True,
        check=False,
    )
    data = json.loads((folder / "d.json").read_text())
    return data["sets"][0]["cases"][0]["runs"][0]["invocations"][0]["duration_s"]


def main() -> int:
    bad = 0
    with tempfile.TemporaryDirectory() as tmp, LoopbackAgent() as agent:
        folder = Path(tmp)
        for name, message in (("http", f"slow {HANG_S}"), ("command", "hi")):
            _eval_set(folder, message)
            for label, signals in (
                ("SIGTERM once", [signal.SIGTERM]),
                ("SIGINT twice", [signal.SIGINT, signal.SIGINT]),
            ):
                marker = folder / "started"
                marker.unlink(missing_ok=True)
                if name == "http":
                    seen = agent.requests[message]
                    args = ["--agent", "http", "--agent-url", agent.url]

                    def reached(seen: int = seen, message: str = message) -> bool:
                        return agent.requests[message] >= seen + 4
                else:
                    hang = f"sh -c 'touch {marker}; exec sleep {HANG_S}'"
                    args = ["--agent", "command", "--agent-command", hang]

                    def reached(marker: Path = marker) -> bool:
                        return marker.exists()

                got = _cancel(folder, args, reached, signals)
                ok = (
                    got["seconds"] <= LIMIT_S
                    and got["code"] == 3
                    and got["results"] == got["junit"] == CASES
                )
                bad |= not ok
                print(
                    f"cancel {name:7} {label}: exit {got['code']} {got['seconds']:.1f} s after "
                    f"the first signal (limit {LIMIT_S:g} s); {got['results']}/{CASES} cases in "
                    f"results, {got['junit']}/{CASES} in JUnit{'' if ok else '  <-- FAIL'}"
                )
        took = _drip(folder, agent.url)
        ok = took <= 3.0
        bad |= not ok
        print(
            f"deadline: an HTTP agent dripping a byte every 0.2 s, --timeout 2: the turn ended "
            f"after {took:.2f} s{'' if ok else '  <-- FAIL'}"
        )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
