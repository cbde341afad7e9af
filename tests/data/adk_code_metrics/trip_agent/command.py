"""The trip agent as a ci-eval ``command`` agent: one JSON line per turn in, one out."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from answers import answer

for line in sys.stdin:
    if not line.strip():
        continue
    text, calls = answer(json.loads(line)["message"])
    reply = {
        "final_response": text,
        "tool_calls": [{"name": name, "args": args} for name, args in calls],
        "tool_results": [{"name": name, "response": {"ok": True}} for name, _ in calls],
    }
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
