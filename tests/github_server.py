"""A loopback server that plays the parts of GitHub's REST API that ci-eval uses: the PR's
comments, and check runs (created, found by name on a commit, updated; an update's annotations
appended to those the check run has, as GitHub does)."""

from __future__ import annotations

import json
import re
import threading
from typing import Any
from urllib.parse import parse_qs, urlparse

from tests.loopback import Loopback, QuietHandler


class GitHubServer(Loopback):
    def __init__(
        self,
        others: int = 0,
        forbidden: bool = False,
        rate_limited_once: bool = False,
        checks_forbidden: bool = False,
    ) -> None:
        self.comments: list[dict[str, Any]] = [
            {
                "id": i + 1,
                "body": f"someone else's comment {i}",
                "user": {"login": "octocat", "type": "User"},
            }
            for i in range(others)
        ]
        self.requests: list[tuple[str, str, Any]] = []
        self.forbidden = forbidden
        # a token without checks: write (the comments still work)
        self.checks_forbidden = checks_forbidden
        self.check_runs: list[dict[str, Any]] = []
        self.annotations: dict[int, list[dict[str, Any]]] = {}  # check run id -> all it holds
        self.rate_limited_once = rate_limited_once
        self.lock = threading.Lock()
        hub = self

        class Handler(QuietHandler):
            def _send(
                self,
                status: int,
                body: Any,
                headers: dict[str, str] | None = None,
            ) -> None:
                self.reply(status, json.dumps(body).encode(), headers)

            def _body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length)) if length else None

            def handle_one(self, method: str) -> None:
                url = urlparse(self.path)
                body = self._body()
                with hub.lock:
                    hub.requests.append((method, url.path, body))
                    hub.authorization = self.headers.get("Authorization")
                if url.path == "/user":
                    return self._send(403, {"message": "Resource not accessible by integration"})
                m = re.fullmatch(r"/repos/o/r/issues/(\d+)/comments", url.path)
                if m and method == "GET":
                    q = parse_qs(url.query)
                    per, page = int(q["per_page"][0]), int(q["page"][0])
                    return self._send(200, hub.comments[(page - 1) * per : page * per])
                commit = re.fullmatch(r"/repos/o/r/commits/([^/]+)/check-runs", url.path)
                if commit and method == "GET":
                    name = parse_qs(url.query).get("check_name", [None])[0]
                    runs = [
                        r
                        for r in hub.check_runs
                        if r["head_sha"] == commit.group(1) and name in (None, r["name"])
                    ]
                    return self._send(200, {"total_count": len(runs), "check_runs": runs})
                if hub.forbidden and method in ("POST", "PATCH"):
                    return self._send(403, {"message": "Resource not accessible by integration"})
                if hub.rate_limited_once and method in ("POST", "PATCH"):
                    hub.rate_limited_once = False
                    return self._send(
                        403,
                        {"message": "You have exceeded a secondary rate limit."},
                        {"Retry-After": "1"},
                    )
                checks = re.fullmatch(r"/repos/o/r/check-runs(?:/(\d+))?", url.path)
                if checks and hub.checks_forbidden and method in ("POST", "PATCH"):
                    return self._send(403, {"message": "Resource not accessible by integration"})
                if checks and method == "POST" and checks.group(1) is None:
                    run = {"id": 5000 + len(hub.check_runs), "output": {}}
                    hub.check_runs.append(run)
                    hub.annotations[run["id"]] = []
                    return self._send(201, hub.update_check(run, body))
                if checks and method == "PATCH" and checks.group(1) is not None:
                    for run in hub.check_runs:
                        if run["id"] == int(checks.group(1)):
                            return self._send(200, hub.update_check(run, body))
                if m and method == "POST":
                    comment = {
                        "id": 1000 + len(hub.comments),
                        "body": body["body"],
                        "user": {"login": "github-actions[bot]", "type": "Bot"},
                    }
                    hub.comments.append(comment)
                    return self._send(201, comment)
                m = re.fullmatch(r"/repos/o/r/issues/comments/(\d+)", url.path)
                if m and method == "PATCH":
                    for comment in hub.comments:
                        if comment["id"] == int(m.group(1)):
                            comment["body"] = body["body"]
                            return self._send(200, comment)
                return self._send(404, {"message": "Not Found"})

            def do_GET(self) -> None:
                self.handle_one("GET")

            def do_POST(self) -> None:
                self.handle_one("POST")

            def do_PATCH(self) -> None:
                self.handle_one("PATCH")

        super().__init__(Handler)
        self.url = f"http://127.0.0.1:{self.port}"
        self.authorization: str | None = None

    def update_check(self, run: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        """A check run's fields from a create or an update: the output's title and summary
        replaced, its annotations appended (GitHub removes none)."""
        output = body.get("output") or {}
        for key, value in body.items():
            if key != "output":
                run[key] = value
        held = self.annotations[run["id"]]
        held += output.get("annotations") or []
        run["output"] = {
            "title": output.get("title", run["output"].get("title")),
            "summary": output.get("summary", run["output"].get("summary")),
            "annotations_count": len(held),
        }
        return run

    def check_requests(self) -> list[tuple[str, Any]]:
        """The writes to check runs: (method, body)."""
        return [
            (m, body)
            for m, path, body in self.requests
            if m in ("POST", "PATCH") and "/check-runs" in path
        ]

    def writes(self) -> list[str]:
        return [m for m, _, _ in self.requests if m in ("POST", "PATCH")]
