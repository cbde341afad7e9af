"""The sample agent as a ci-eval ``command`` agent: JSON lines on stdin/stdout, no ADK needed.

    ci-eval run samples --agent command \
        --agent-command "python samples/agents/weather_agent/command_agent.py"

Each request line is one user turn; each reply line says what the agent did (see ci-eval's
README, "The agent contract").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from logic import respond


def main() -> None:
    previous = None  # one process per session: the agent's last reply is its memory
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        reply = respond(request.get("message", ""), previous)
        previous = reply.text
        answer = {
            "final_response": reply.text,
            "tool_calls": [
                {"id": f"call_{n}", "name": c.name, "args": c.args}
                for n, c in enumerate(reply.calls, 1)
            ],
            "tool_results": [
                {"id": f"call_{n}", "name": c.name, "response": c.result}
                for n, c in enumerate(reply.calls, 1)
            ],
        }
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
