"""A loopback server that speaks OpenAI's chat-completions protocol, scripted per test."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class JudgeServer:
    """``answer(prompt, n)`` gives the completion text for the n-th identical prompt; an int
    answer is sent as that HTTP status instead."""

    def __init__(self, answer: Callable[[str, int], str | int]) -> None:
        self.answer = answer
        self.prompts: list[str] = []
        self.bodies: list[dict[str, Any]] = []  # every request, as sent
        self.auth: list[str | None] = []
        self.lock = threading.Lock()
        judge = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                return None

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
                    data = json.dumps({"error": {"message": "boom"}}).encode()
                    self.send_response(reply)
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
                        }
                    ).encode()
                    self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> JudgeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
