"""Everything ci-eval says to GitHub, in one place: workflow commands on stdout (annotations,
masks, stop-commands), the job summary and outputs files, and the upserted PR comment over the
REST API. Nothing else in ci-eval knows about GitHub."""

from __future__ import annotations

import email.utils
import json
import math
import os
import secrets
import sys
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TextIO

from ci_eval.gate.items import SKIPS, clip, short_id
from ci_eval.gate.verdict import verdict
from ci_eval.net.deadline import Deadline
from ci_eval.results.file import RunResults
from ci_eval.text import redact
from ci_eval.text.inert import inert, inert_line
from ci_eval.text.surrogates import scrub

if TYPE_CHECKING:
    import requests

WORKSPACE_PREFIX = "/github/workspace/"
ANNOTATION_CAP = 10  # GitHub shows 10 errors per step
ANNOTATION_TEXT = 4000  # characters of an annotation's message (the rest is in the summary)
MAX_RATE_LIMIT_WAIT = 60.0
REQUEST_TIMEOUT = 30.0


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def repo_relative(path: str, workspace: str | None = None) -> str:
    """Annotations need paths relative to the repository root."""
    if path.startswith(WORKSPACE_PREFIX):
        return path[len(WORKSPACE_PREFIX) :]
    root = workspace or os.environ.get("GITHUB_WORKSPACE")
    if root and os.path.isabs(path):
        try:
            return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            return path
    return path


@dataclass
class Workflow:
    """The workflow-command protocol on stdout (injectable for tests)."""

    out: TextIO = field(default_factory=lambda: sys.stdout)

    def command(self, name: str, message: str, **props: object) -> None:
        """One workflow command; its message and properties are made inert first (no ANSI,
        no controls, no command prefixes), as they may carry agent text; and redacted."""
        args = ",".join(
            f"{k}={escape_property(inert_line(redact.text(str(v))))}"
            for k, v in props.items()
            if v is not None
        )
        line = f"::{name}{' ' + args if args else ''}::{escape_data(inert(redact.text(message)))}\n"
        self.out.write(scrub(line))

    def mask(self, value: str) -> None:
        if value:
            self.out.write(f"::add-mask::{escape_data(value)}\n")

    def warning(self, message: str) -> None:
        self.command("warning", message)

    @contextmanager
    def untrusted(self) -> Iterator[None]:
        """Agent text between ::stop-commands:: so it cannot issue workflow commands."""
        token = secrets.token_hex(16)
        self.out.write(f"::stop-commands::{token}\n")
        try:
            yield
        finally:
            self.out.write(f"::{token}::\n")


def annotate(results: RunResults, workflow: Workflow, cap: int = ANNOTATION_CAP) -> int:
    """An annotation at each listed case's line, in the verdict's order: what blocks as
    ::error, then what did not block (known failures, noise, flaky passes, errors outside
    ``fail_on``) as ::notice — the same kinds and words as the verdict. Skips are not
    annotated. Returns how many cases there were to annotate."""
    decision = verdict(results)
    listed = [i for i in decision.blocking if i.case_id] + [
        i for i in decision.not_blocking if i.case_id and i.kind not in SKIPS
    ]
    for item in listed[:cap]:
        workflow.command(
            "error" if item.blocking else "notice",
            clip(item.text(), ANNOTATION_TEXT),
            file=repo_relative(item.file),
            line=item.line,
            title=f"{item.label}{'' if item.blocking else ' (not blocking)'}: "
            f"{short_id(item.key, 120)}",
        )
    if len(listed) > cap:
        workflow.command(
            "notice",
            f"{len(listed) - cap} more listed cases are not annotated "
            "(GitHub shows 10 per step); see the job summary",
        )
    return len(listed)


def append_summary(path: str, text: str) -> None:
    text = redact.text(scrub(text))
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text if text.endswith("\n") else text + "\n")


def write_outputs(path: str, outputs: Mapping[str, object]) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        for name, value in outputs.items():
            text = "" if value is None else redact.text(scrub(str(value)))
            if "\n" in text:
                delimiter = f"ci_eval_{uuid.uuid4().hex}"
                handle.write(f"{name}<<{delimiter}\n{text}\n{delimiter}\n")
            else:
                handle.write(f"{name}={text}\n")


def event(env: Mapping[str, str]) -> dict:
    """The workflow run's event (``GITHUB_EVENT_PATH``); empty when there is none or it is not
    a JSON object."""
    event_path = env.get("GITHUB_EVENT_PATH")
    if not event_path or not Path(event_path).is_file():
        return {}
    try:
        data = json.loads(Path(event_path).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def pr_number(env: Mapping[str, str]) -> int | None:
    """From the event file (pull_request, pull_request_target, issue_comment on a PR), else
    from ``refs/pull/N/merge``."""
    data = event(env)
    pr = data.get("pull_request")
    if isinstance(pr, dict) and isinstance(pr.get("number"), int):
        return pr["number"]
    issue = data.get("issue")
    if (
        isinstance(issue, dict)
        and issue.get("pull_request")
        and isinstance(issue.get("number"), int)
    ):
        return issue["number"]
    ref = env.get("GITHUB_REF", "")
    parts = ref.split("/")
    if len(parts) == 4 and parts[:2] == ["refs", "pull"] and parts[2].isdigit():
        return int(parts[2])
    return None


def head_sha(env: Mapping[str, str]) -> str | None:
    """The commit a check run belongs to: in a pull request its head (the event's
    ``pull_request.head.sha``), not ``GITHUB_SHA``, which is then the merge commit GitHub made
    and which the PR's page never shows; else ``GITHUB_SHA``."""
    pr = event(env).get("pull_request")
    head = pr.get("head") if isinstance(pr, dict) else None
    sha = head.get("sha") if isinstance(head, dict) else None
    if isinstance(sha, str) and sha.strip():
        return sha.strip()
    return env.get("GITHUB_SHA") or None


def marker_for(comment_id: str) -> str:
    from ci_eval.report.markdown import MARKER  # jinja2 comes with it: only when commenting

    return MARKER.format(id=comment_id)


def default_comment_id(env: Mapping[str, str]) -> str:
    return f"{env.get('GITHUB_WORKFLOW', 'workflow')}/{env.get('GITHUB_JOB', 'job')}"


class ApiError(Exception):
    """A call to GitHub's REST API that failed, said in one line."""


class CommentError(ApiError):
    pass


class CommentForbidden(CommentError):
    """HTTP 403: the token may not comment (read-only, as on pull requests from forks)."""


MAX_PAGES = 50  # 5,000 comments: a PR with more is not one a server means seriously


def retry_after(value: str | None, cap: float = MAX_RATE_LIMIT_WAIT) -> float:
    """Seconds to wait for a ``Retry-After`` header: delta-seconds or an HTTP date (RFC 9110),
    capped; anything unreadable waits the cap, as GitHub asks when it gives no time."""
    if value is None or not value.strip():
        return cap
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return cap
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if not math.isfinite(seconds):
        return cap
    return min(max(seconds, 0.0), cap)


@dataclass
class GitHubApi:
    """The one path ci-eval's REST calls take (the PR comment, the check run): the token in a
    header, retries, GitHub's secondary rate limit waited out, and one deadline for all the
    calls of a report."""

    api_url: str
    repository: str
    token: str
    workflow: Workflow
    deadline: Deadline | None = None  # for all the calls (default 30 s per request)
    session: requests.Session = field(init=False)
    # what a failed call raises: each client's own, so its caller says what failed
    error: ClassVar[type[ApiError]] = ApiError

    def __post_init__(self) -> None:
        from ci_eval.net.http import HttpSettings, make_requests_session

        self.api_url = self.api_url.rstrip("/")
        self.session = make_requests_session(
            HttpSettings(
                timeout=REQUEST_TIMEOUT,
                retries=3,
                headers={
                    "Authorization": f"Bearer {self.token}",
                    "Accept": "application/vnd.github+json",
                    "X-GitHub-Api-Version": "2022-11-28",
                },
            )
        )

    def _call(self, method: str, url: str, **kwargs: object) -> requests.Response:
        import requests  # loaded with the session, only when GitHub is called

        from ci_eval.net.http import (
            DeadlinePassed,
            failure_reason,
            timeouts,
            within,
        )

        # the calls share one deadline: after a cancellation they must not hold the process
        # (GitHub's runner kills it some seconds after its first signal)
        deadline = self.deadline or Deadline.uncancellable(REQUEST_TIMEOUT * 8)
        for _ in range(4):
            try:
                with within(deadline):
                    response = self.session.request(
                        method, url, timeout=timeouts(deadline, REQUEST_TIMEOUT), **kwargs
                    )
                if deadline.fired:
                    raise DeadlinePassed
            except (DeadlinePassed, requests.RequestException) as exc:
                if deadline.expired():
                    raise self.error(f"{method} {url}: {deadline.message()}") from None
                raise self.error(f"{method} {url}: {failure_reason(exc)}") from None
            if response.status_code == 403 and "rate limit" in response.text.lower():
                wait = retry_after(response.headers.get("Retry-After"))  # seconds or a date
                # GitHub's secondary rate limit
                if not deadline.wait(wait):
                    raise self.error(f"{method} {url}: rate limited past the deadline")
                continue
            return response
        return response

    def _json(self, response: requests.Response, url: str) -> object:
        try:
            return response.json()
        except ValueError:
            raise self.error(f"{url}: the answer is not JSON") from None


@dataclass
class CommentPoster(GitHubApi):
    """Upserts one PR comment identified by a hidden marker: PATCH when ours exists and its
    body changed, POST when none does, nothing when unchanged."""

    error: ClassVar[type[ApiError]] = CommentError

    def _login(self) -> str | None:
        url = f"{self.api_url}/user"
        response = self._call("GET", url)
        if response.ok:
            data = self._json(response, url)
            login = data.get("login") if isinstance(data, dict) else None
            return login if isinstance(login, str) else None
        return None  # installation tokens (GITHUB_TOKEN) cannot read /user

    def _find(self, number: int, marker: str) -> dict | None:
        login = self._login()
        seen: set[object] = set()
        url = f"{self.api_url}/repos/{self.repository}/issues/{number}/comments"
        for page in range(1, MAX_PAGES + 1):
            response = self._call("GET", url, params={"per_page": 100, "page": page})
            if response.status_code == 403:
                raise CommentForbidden(response.text[:200])
            if not response.ok:
                raise CommentError(f"GET {url}: HTTP {response.status_code}")
            comments = self._json(response, url)
            if not isinstance(comments, list):
                raise CommentError(f"GET {url}: expected a list of comments")
            ids = {c.get("id") for c in comments if isinstance(c, dict)}
            if comments and ids <= seen:  # a server that repeats its pages: stop, not loop
                raise CommentError(f"GET {url}: page {page} repeats earlier comments")
            seen |= ids
            for comment in comments:
                if not isinstance(comment, dict):
                    continue
                user = comment.get("user") or {}
                if not isinstance(user, dict):
                    continue
                ours = user.get("login") == login if login else user.get("type") == "Bot"
                if ours and marker in str(comment.get("body") or ""):
                    return comment
            if len(comments) < 100:
                return None
        raise CommentError(f"GET {url}: more than {MAX_PAGES} pages of comments")

    def upsert(self, number: int, body: str, marker: str) -> str:
        """'created', 'updated', 'unchanged' or 'forbidden' (a warning was printed)."""
        body = redact.text(body)
        try:
            existing = self._find(number, marker)
            if existing is not None:
                if existing.get("body") == body:
                    return "unchanged"
                url = f"{self.api_url}/repos/{self.repository}/issues/comments/{existing['id']}"
                response = self._call("PATCH", url, json={"body": body})
                action = "updated"
            else:
                url = f"{self.api_url}/repos/{self.repository}/issues/{number}/comments"
                response = self._call("POST", url, json={"body": body})
                action = "created"
            if response.status_code == 403:
                raise CommentForbidden(response.text[:200])
            if not response.ok:
                raise CommentError(f"{url}: HTTP {response.status_code}")
            return action
        except CommentForbidden:
            self.workflow.warning(
                "ci-eval could not comment on the pull request (403: the token is read-only, "
                "as on pull requests from forks, or lacks pull-requests: write); the job "
                "summary has the full report"
            )
            return "forbidden"
