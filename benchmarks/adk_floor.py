"""The floor for ``--agent adk``: import the agent and play an eval set's turns with ADK's
InMemoryRunner, nothing else (no scoring, no reports). ``python adk_floor.py AGENT_DIR EVALSET``
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path

from google.adk.runners import InMemoryRunner
from google.genai import types


def load_agent(folder: Path) -> object:
    sys.path.insert(0, str(folder.parent))
    module = importlib.import_module(folder.name)
    return module.root_agent if hasattr(module, "root_agent") else module.agent.root_agent


async def play(agent: object, evalset: dict) -> int:
    events = 0
    for case in evalset["eval_cases"]:
        runner = InMemoryRunner(agent=agent, app_name="floor")
        session = await runner.session_service.create_session(app_name="floor", user_id="u")
        for turn in case["conversation"]:
            message = types.Content.model_validate(turn["user_content"])
            async for _ in runner.run_async(
                user_id="u", session_id=session.id, new_message=message
            ):
                events += 1
    return events


if __name__ == "__main__":
    agent = load_agent(Path(sys.argv[1]).resolve())
    print(asyncio.run(play(agent, json.loads(Path(sys.argv[2]).read_text()))))
