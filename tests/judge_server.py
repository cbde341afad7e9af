"""A loopback server that speaks OpenAI's chat-completions protocol, scripted per test."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from tests.loopback import Loopback, QuietHandler


def words(messages: list[dict[str, Any]]) -> int:
    """The words of the messages' text: the tokens the server says a prompt had."""
    return sum(len(str(m.get("content", "")).split()) for m in messages)


class JudgeServer(Loopback):
    """``answer(prompt, n)`` gives the completion text for the n-th identical prompt; an int
    answer is sent as that HTTP status instead."""

    def __init__(self, answer: Callable[[str, int], str | int]) -> None:
        self.answer = answer
        self.prompts: list[str] = []
        self.bodies: list[dict[str, Any]] = []  # every request, as sent
        self.auth: list[str | None] = []
        self.lock = threading.Lock()
        judge = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = body["messages"][-1]["content"]
                with judge.lock:
                    judge.bodies.append(body)
                    judge.prompts.append(prompt)
                    judge.auth.append(self.headers.get("Authorization"))
                    n = judge.prompts.count(prompt)
                reply = judge.answer(prompt, n)
                if isinstance(reply, int):
                    status, data = reply, json.dumps({"error": {"message": "boom"}}).encode()
                else:
                    data = json.dumps(
                        {
                            "id": "x",
                            "object": "chat.completion",
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": reply},
                                    "finish_reason": "stop",
                                }
                            ],
                            # OpenAI's usage: a word a token, enough to count by
                            "usage": {
                                "prompt_tokens": words(body["messages"]),
                                "completion_tokens": len(reply.split()),
                            },
                        }
                    ).encode()
                    status = 200
                self.reply(status, data)

        super().__init__(Handler)
        self.url = f"http://127.0.0.1:{self.port}/v1"
