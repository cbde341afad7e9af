"""A command agent with faults on demand, for bench_faults.py: the user message's first word
picks the behaviour (``crash``, ``garbage``, ``stall`` — with a grandchild that would be
orphaned —, ``drip``, ``closeout``, ``big``, ``surrogate``); anything else is answered by the
sample weather agent's logic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.loopback_agent import contract_reply  # noqa: E402

GRANDCHILD_MARK = "ci-eval-fault-grandchild"


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line).get("message", "")
        word = message.split()[0] if message.split() else ""
        answer = contract_reply(message)
        if word == "crash":
            print("the agent fell over", file=sys.stderr)
            sys.exit(3)
        if word == "garbage":
            print("<html>oops</html>", flush=True)
            continue
        if word == "stall":
            subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(300)", GRANDCHILD_MARK]
            )
            time.sleep(300)
        if word == "drip":
            for byte in (json.dumps(answer) + "\n").encode():
                os.write(1, bytes([byte]))
                time.sleep(0.25)
            continue
        if word == "closeout":
            os.close(1)
            time.sleep(300)
        if word == "big":
            answer["padding"] = "x" * 10_000_000
        if word == "surrogate":
            answer["final_response"] += " \ud83d"
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
