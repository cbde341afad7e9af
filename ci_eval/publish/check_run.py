"""ci-eval's own check run (``--check-run``): a status line of its own in the pull request,
the verdict as its title, the job summary's Markdown as its text, and each listed case as an
annotation at its line — in batches of 50, as GitHub takes them (where a step's workflow
commands show 10).

What is sent is built here from the verdict (pure); :class:`CheckRunPoster` sends it over the
REST path the PR comment takes (:class:`ci_eval.publish.github.GitHubApi`). Creating a check
run needs ``checks: write``; without it (403) the caller falls back to the comment and the
workflow-command annotations."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ci_eval.gate.items import SKIPS, clip, short_id
from ci_eval.gate.verdict import verdict
from ci_eval.publish.github import ANNOTATION_TEXT, ApiError, GitHubApi, repo_relative
from ci_eval.results.file import RunResults
from ci_eval.text import redact
from ci_eval.text.inert import inert, inert_line
from ci_eval.text.surrogates import scrub

BATCH = 50  # annotations per request: GitHub's limit for a create or an update
# annotations of one check run: 20 requests; a run with more listed cases has them in the text
MAX_ANNOTATIONS = 1000
TITLE_LIMIT = 255  # characters of a title (an annotation's; the check's title is held to it too)
SUMMARY_LIMIT = 65_535  # characters of the output's summary
NAME_LIMIT = 100  # characters of the check's name, which is the PR's status line
EXTERNAL_ID = "ci-eval"  # marks our check runs, as the hidden marker marks our comment


class CheckRunError(ApiError):
    pass


class CheckRunForbidden(CheckRunError):
    """HTTP 403: the token may not write checks (no ``checks: write``, or a fork's token)."""


def conclusion(exit_code: int) -> str:
    """The check's conclusion from the gate's exit code: 0 → success, anything else →
    failure. Exit 3 (errors kept cases from being scored) is a failure, not neutral: branch
    protection counts a neutral check as passing, and a gate that could not score the cases
    has not passed them."""
    return "success" if exit_code == 0 else "failure"


def check_name(comment_id: str, shard: str | None = None) -> str:
    """The status line's name: ci-eval and the job it reports (the comment's id, by default
    workflow/job); a shard's names its shard, so the shards' checks stay apart."""
    where = comment_id if not shard else f"{comment_id}, shard {shard}"
    return clip(inert_line(redact.text(f"ci-eval ({where})")), NAME_LIMIT)


def title(results: RunResults) -> str:
    """The verdict line, as the step's ``verdict`` output says it (the check's own icon says
    passed or failed)."""
    return clip(inert_line(redact.text(verdict(results).line)), TITLE_LIMIT)


def annotations(results: RunResults, workspace: str | None = None) -> list[dict[str, object]]:
    """An annotation at each listed case's line, in the verdict's order and words (as
    :func:`ci_eval.publish.github.annotate`): what blocks as ``failure``, what did not block
    (bar skips) as ``notice``. A case with no file has none (GitHub needs a path); the
    summary lists it."""
    decision = verdict(results)
    listed = [i for i in decision.blocking if i.case_id] + [
        i for i in decision.not_blocking if i.case_id and i.kind not in SKIPS
    ]
    out: list[dict[str, object]] = []
    for item in listed:
        if not item.file:
            continue
        line = item.line if item.line and item.line > 0 else 1
        heading = f"{item.label}{'' if item.blocking else ' (not blocking)'}: "
        out.append(
            {
                "path": repo_relative(item.file, workspace),
                "start_line": line,
                "end_line": line,
                "annotation_level": "failure" if item.blocking else "notice",
                "message": clip(inert(item.text()), ANNOTATION_TEXT),
                "title": clip(inert_line(heading + short_id(item.key, 120)), TITLE_LIMIT),
            }
        )
    return out


def left_out_note(count: int) -> str:
    """Said at the summary's end when the annotations stop at :data:`MAX_ANNOTATIONS`."""
    return (
        f"\n\n{count} more listed cases are not annotated (a check run holds "
        f"{MAX_ANNOTATIONS} here); the list above has them.\n"
    )


@dataclass
class Check:
    """One check run as it is sent: its name on the commit, the gate's conclusion, the
    verdict as the title, the summary's Markdown, and the annotations."""

    name: str
    head_sha: str
    conclusion: str
    title: str
    summary: str
    annotations: list[dict[str, object]] = field(default_factory=list)

    def batches(self) -> Iterator[list[dict[str, object]]]:
        """The annotations in requests of :data:`BATCH`, at least one (it carries the rest)."""
        kept = self.annotations[:MAX_ANNOTATIONS]
        yield kept[:BATCH]
        for start in range(BATCH, len(kept), BATCH):
            yield kept[start : start + BATCH]


def _clean(value: Any) -> Any:
    """Every string that leaves, redacted and free of lone surrogates (JSON cannot carry
    them): the case texts were scrubbed before, but the check's name and the paths come from
    the environment and the eval files."""
    if isinstance(value, str):
        return redact.text(scrub(value))
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


@dataclass
class CheckRunPoster(GitHubApi):
    """Creates the check run, or updates the one a rerun of the job made on the same commit
    (found by name and our external id), then sends the annotations past the first 50 as
    updates, each of which GitHub appends."""

    error: ClassVar[type[ApiError]] = CheckRunError

    def _find(self, check: Check) -> dict | None:
        url = f"{self.api_url}/repos/{self.repository}/commits/{check.head_sha}/check-runs"
        response = self._call(
            "GET", url, params={"check_name": check.name, "filter": "latest", "per_page": 100}
        )
        if response.status_code == 403:
            raise CheckRunForbidden(response.text[:200])
        if not response.ok:
            raise CheckRunError(f"GET {url}: HTTP {response.status_code}")
        data = self._json(response, url)
        runs = data.get("check_runs") if isinstance(data, dict) else None
        if not isinstance(runs, list):
            raise CheckRunError(f"GET {url}: expected check_runs")
        for run in runs:
            if (
                isinstance(run, dict)
                and run.get("name") == check.name
                and run.get("external_id") == EXTERNAL_ID
                and isinstance(run.get("id"), int)
            ):
                return run
        return None

    def _send(self, method: str, url: str, body: dict[str, object]) -> dict:
        response = self._call(method, url, json=_clean(body))
        if response.status_code == 403:
            raise CheckRunForbidden(response.text[:200])
        if not response.ok:
            raise CheckRunError(f"{method} {url}: HTTP {response.status_code}")
        data = self._json(response, url)
        return data if isinstance(data, dict) else {}

    def publish(self, check: Check) -> str:
        """'created' or 'updated'; raises :class:`CheckRunForbidden` on a 403 and
        :class:`CheckRunError` on any other failure.

        A rerun's check run is updated only while it holds no annotations: GitHub appends an
        update's annotations to those it has and removes none, so a case the rerun passed
        would keep its failure at its line. Otherwise a new check run is created; the pull
        request shows the newest check run of a name, so it still has one status line."""
        batches = check.batches()
        output: dict[str, object] = {"title": check.title, "summary": check.summary}
        first = {
            "name": check.name,
            "head_sha": check.head_sha,
            "external_id": EXTERNAL_ID,
            "status": "completed",
            "conclusion": check.conclusion,
            "output": {**output, "annotations": next(batches)},
        }
        base = f"{self.api_url}/repos/{self.repository}/check-runs"
        existing = self._find(check)
        held = (existing or {}).get("output") or {}
        if existing is not None and not (isinstance(held, dict) and held.get("annotations_count")):
            sent = self._send("PATCH", f"{base}/{existing['id']}", first)
            action, number = "updated", existing["id"]
        else:
            sent = self._send("POST", base, first)
            action, number = "created", sent.get("id")
            if not isinstance(number, int):
                raise CheckRunError(f"POST {base}: the answer has no check run id")
        for batch in batches:
            self._send("PATCH", f"{base}/{number}", {"output": {**output, "annotations": batch}})
        return action
