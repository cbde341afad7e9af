"""Write what a run produced where people look: files (JUnit, Markdown summary, ADK-format
results) and, on GitHub Actions, the job summary, step outputs, annotations and the PR comment.
Used by ``ci-eval run`` and ``ci-eval report`` alike.

Every report written to a path is a registered ``Reporter`` (JUnit, the Markdown summary, the
ADK results, and any a plugin adds): a name and a pure function from the results to the file's
text, or a folder's files (escaping agent text for its format is its job). Adding one is a
module plus one ``register_reporter`` call; ``ReportSettings.report_files`` maps reporter names
to paths."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.errors import InputError
from ci_eval.gate.items import Kind
from ci_eval.gate.verdict import changed_of, verdict
from ci_eval.io.files import write_json_atomic, write_parts_atomic, write_text_atomic
from ci_eval.model.describe import diffs_kept
from ci_eval.model.status import Status
from ci_eval.net.deadline import Deadline
from ci_eval.publish import github
from ci_eval.report.adk_results import to_adk_results
from ci_eval.report.adk_rs_report import to_adk_rs_reports
from ci_eval.report.junit import junit_parts, to_junit
from ci_eval.report.trpc_results import NONE_WRITTEN, to_trpc_results
from ci_eval.results.file import CaseRecord, RunResults
from ci_eval.settings import ReportSettings
from ci_eval.text import redact
from ci_eval.text.inert import inert_line
from ci_eval.text.surrogates import scrub

INTERRUPTED_COMMENT_S = 4.0


@dataclass(frozen=True)
class Page:
    """What a report for people reads besides the results: the templates, where the whole
    results are (the artifact, or the workflow run's page), the problems a template had
    (filled in), and what the summary's and the comment's templates share (a cache)."""

    template_dir: Path | None = None
    artifact: str | None = None
    link: str | None = None
    problems: list[str] = field(default_factory=list)
    cache: dict[object, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Reporter:
    """A report: ``render`` turns the (redacted) results into a file's text (with the
    :class:`Page` too when ``page`` is set); ``folder`` instead gives a folder's JSON files by
    name."""

    name: str
    render: Callable[..., str] | None = None
    # the same text in pieces, each whole as far as secrets go: written one by one
    parts: Callable[[RunResults], Iterable[str]] | None = None
    folder: Callable[[RunResults], Mapping[str, object]] | None = None
    page: bool = False
    title: str = ""  # how messages name it ("the summary"); default "the NAME report"
    nothing: str = ""  # said (with the path) when ``folder`` gives no file: why there is none

    def said(self) -> str:
        return self.title or f"the {self.name} report"


REPORTERS: dict[str, Reporter] = {}


def register_reporter(reporter: Reporter) -> Reporter:
    REPORTERS[reporter.name] = reporter
    return reporter


def _summary(results: RunResults, page: Page) -> str:
    # jinja2 and the Markdown renderer load when a summary is asked for, not with publish
    from ci_eval.report.markdown import render_summary

    text = render_summary(
        results, page.template_dir, page.artifact, page.problems, page.cache, page.link
    )
    return scrub(text)


register_reporter(Reporter("junit", to_junit, junit_parts))
register_reporter(Reporter("summary", _summary, page=True, title="the summary"))
register_reporter(Reporter("adk-results", folder=to_adk_results, title="the ADK results"))
register_reporter(Reporter("adk-rs-report", folder=to_adk_rs_reports, title="the adk-rs reports"))
register_reporter(
    Reporter(
        "trpc-results",
        folder=to_trpc_results,
        title="the trpc-agent-go results",
        nothing=NONE_WRITTEN,
    )
)


def check_reports(settings: ReportSettings) -> None:
    """Every report named is a registered reporter (an input error before anything runs)."""
    unknown = [name for name in settings.report_files() if name not in REPORTERS]
    if unknown:
        raise InputError(f"unknown report {unknown[0]!r}; known: " + ", ".join(sorted(REPORTERS)))


def outputs(results: RunResults, settings: ReportSettings) -> dict[str, object]:
    counted = results.counts()
    total = counted.total()
    scored = total - counted[Status.SKIPPED]
    decision = verdict(results)
    listed = decision.blocking + decision.not_blocking
    return {
        "verdict": inert_line(decision.line),  # case ids are the eval files' text
        "gate": "passed" if decision.passed else "failed",
        "blocking": len(decision.blocking),
        "not-blocking": len(decision.not_blocking),
        "passed": counted[Status.PASSED],
        "failed": counted[Status.FAILED],
        "errors": counted[Status.ERROR],
        "regressions": sum(1 for i in listed if i.kind is Kind.REGRESSION),
        "known-failures": sum(1 for i in listed if i.kind is Kind.KNOWN_FAILURE),
        "improved": len(decision.improved),
        "new": len(decision.new),
        "removed": len(decision.removed),
        "not-evaluated": counted[Status.NOT_EVALUATED],
        "total": total,
        "score": round(counted[Status.PASSED] / scored, 4) if scored else 0,
        "junit-path": settings.junit or "",
        "results-path": settings.results or "",
        "summary-path": settings.summary or "",
        **usage_outputs(results),
    }


def usage_outputs(results: RunResults) -> dict[str, object]:
    """The agent's tokens, the job's cost and the p95 turn latency (empty: not measured)."""
    from ci_eval.results.usage_totals import summary

    spent = summary(results)
    agent = spent["agent"]
    p95 = (agent.get("latency_s") or {}).get("p95")
    return {
        "tokens": "" if agent.get("total_tokens") is None else agent["total_tokens"],
        "cost": "" if spent.get("cost_usd") is None else spent["cost_usd"],
        "p95-latency-s": "" if p95 is None else p95,
    }


def report(
    results: RunResults,
    settings: ReportSettings,
    env: Mapping[str, str],
    say: Callable[..., None],
) -> bool:
    """The report stage: the terminal summary through ``say(line, err=False)``, then files and
    GitHub (warnings through ``say(line, err=True)``). Agent text in the log cannot issue
    workflow commands. Each report is written on its own: one that cannot be (a full disk, a
    missing folder) is said, the others are still written; returns False when a report file
    the user asked for is missing (the caller exits 3)."""
    from ci_eval.report.terminal import summary_lines

    workflow = github.Workflow()
    # once, before anything renders (the terminal too): no renderer can cut a secret into an
    # unmatched prefix
    redact.current().add(settings.token)
    redact.current().scrub(results, units=(CaseRecord,))
    with diffs_kept():  # redacted, and no longer changing
        lines = summary_lines(results)
        if env.get("GITHUB_ACTIONS") == "true":
            with workflow.untrusted():
                for line in lines:
                    say(line)
        else:
            for line in lines:
                say(line)
        try:
            for warning in publish(results, settings, env=env, workflow=workflow, scrubbed=True):
                say(f"ci-eval: warning: {warning}", err=True)
        except ReportsMissing as missing:
            for warning in missing.warnings:
                say(f"ci-eval: warning: {warning}", err=True)
            for line in missing.lines:
                say(f"ci-eval: error: {line}", err=True)
            return not missing.asked
    return True


def publish(
    results: RunResults,
    settings: ReportSettings,
    env: Mapping[str, str] | None = None,
    workflow: github.Workflow | None = None,
    scrubbed: bool = False,
) -> list[str]:
    """Returns warnings to show. Each report is written on its own; those that could not be
    are raised together at the end as :class:`ReportsMissing` (with the warnings). ``scrubbed``:
    the results were redacted already, with the token known."""
    env = os.environ if env is None else env
    workflow = workflow or github.Workflow()
    template_dir = Path(settings.template_dir) if settings.template_dir else None
    if template_dir is not None and not settings.trust_pr_config:
        from ci_eval.settings.bar import templates_at_base

        template_dir, changed = templates_at_base(template_dir, env)
        if changed:  # said in the verdict, as the settings the PR changed are
            results.settings.bar_changes = [*changed_of(results), changed]
    warnings: list[str] = []
    on_actions = env.get("GITHUB_ACTIONS") == "true"
    token = settings.token
    redact.current().add(token)  # masked in the log if it was not known yet
    check_reports(settings)
    if not scrubbed:  # once, before anything renders: no renderer can cut a secret short
        redact.current().scrub(results, units=(CaseRecord,))
    job_summary = env.get("GITHUB_STEP_SUMMARY") if on_actions and settings.job_summary else None
    page = Page(
        template_dir,
        settings.results,
        _details_link(env) if on_actions else None,
        warnings,  # a template's problems are said with the other warnings
    )
    texts: dict[str, str] = {}  # each report rendered once (the summary: file and job summary)

    def text_of(reporter: Reporter) -> str:
        if reporter.name not in texts:
            render = reporter.render
            assert render is not None
            texts[reporter.name] = render(results, page) if reporter.page else render(results)
        return texts[reporter.name]

    missing = ReportsMissing()
    for name, path in settings.report_files().items():
        missing.attempt(
            REPORTERS[name].said(),
            path,
            lambda r=REPORTERS[name], p=path: _write(r, Path(p), results, text_of, warnings),
        )
    if on_actions:
        if job_summary:
            missing.attempt(
                "the job summary",
                job_summary,
                lambda: github.append_summary(job_summary, text_of(REPORTERS["summary"])),
                asked=False,
            )
        if env.get("GITHUB_OUTPUT"):
            missing.attempt(
                "the step outputs",
                env["GITHUB_OUTPUT"],
                lambda: github.write_outputs(env["GITHUB_OUTPUT"], outputs(results, settings)),
                asked=False,
            )
    # the check run holds the annotations and takes the comment's place; where it cannot be
    # made, the comment and the step's annotations are there as without it
    checked = settings.check_run and _check_run(
        results, settings, env, workflow, page, text_of, warnings
    )
    if on_actions and not checked:
        github.annotate(results, workflow)
    if settings.comment or (settings.check_run and not checked and settings.comment_fallback):
        warnings += _comment(results, settings, env, workflow, token, template_dir, page.cache)
    if missing.lines:
        missing.warnings = warnings
        raise missing
    return warnings


def _write(
    reporter: Reporter,
    path: Path,
    results: RunResults,
    text_of: Callable[[Reporter], str],
    warnings: list[str],
) -> None:
    if reporter.folder is not None:
        files = reporter.folder(results)
        for name, data in files.items():
            write_json_atomic(path / name, data)
        if not files and reporter.nothing:
            warnings.append(f"{path}: {reporter.nothing}")
    elif reporter.parts is not None:
        write_parts_atomic(path, reporter.parts(results))
    else:
        write_text_atomic(path, text_of(reporter))


def _details_link(env: Mapping[str, str]) -> str | None:
    from ci_eval.report.markdown import details_link

    return details_link(env)


class ReportsMissing(Exception):
    """Reports that could not be written, each said with its path and why; ``asked``: one of
    them is a file the user asked for (the run then exits 3)."""

    def __init__(self) -> None:
        super().__init__("reports missing")
        self.lines: list[str] = []
        self.asked = False
        self.warnings: list[str] = []

    def attempt(
        self, what: str, path: str, write: Callable[[], object], asked: bool = True
    ) -> None:
        try:
            write()
        except OSError as exc:
            self.lines.append(f"cannot write {what} {path}: {exc.strerror or exc}")
            self.asked = self.asked or asked


def _check_run(
    results: RunResults,
    settings: ReportSettings,
    env: Mapping[str, str],
    workflow: github.Workflow,
    page: Page,
    text_of: Callable[[Reporter], str],
    warnings: list[str],
) -> bool:
    """The check run (``--check-run``); False when it could not be made, said once (the
    caller then comments and annotates as without it)."""
    from ci_eval.gate.decision import gate
    from ci_eval.publish import check_run

    sha = github.head_sha(env)
    if not settings.token or not env.get("GITHUB_REPOSITORY") or not sha:
        warnings.append(
            "no GitHub token, repository or commit in the environment: the check run is "
            "skipped; the PR comment and the step's annotations are used instead"
        )
        return False
    made = check_run.annotations(results, env.get("GITHUB_WORKSPACE"))
    left_out = max(0, len(made) - check_run.MAX_ANNOTATIONS)
    note = check_run.left_out_note(left_out) if left_out else ""
    check = check_run.Check(
        check_run.check_name(
            settings.comment_id or github.default_comment_id(env), results.settings.shard
        ),
        sha,
        check_run.conclusion(gate(results)),
        check_run.title(results),
        _check_summary(results, page, text_of, check_run.SUMMARY_LIMIT - len(note)) + note,
        made,
    )
    poster = check_run.CheckRunPoster(
        env.get("GITHUB_API_URL", "https://api.github.com"),
        env["GITHUB_REPOSITORY"],
        settings.token,
        workflow,
        Deadline.uncancellable(INTERRUPTED_COMMENT_S) if results.interrupted else None,
    )
    try:
        poster.publish(check)
    except check_run.CheckRunForbidden:
        workflow.warning(
            "ci-eval could not create its check run (403: the token lacks checks: write, or "
            "is read-only, as on pull requests from forks); the PR comment and the step's "
            "annotations are used instead"
        )
        return False
    except Exception as exc:  # the check is a courtesy: it never decides the exit code
        reason = str(exc) if isinstance(exc, github.ApiError) else type(exc).__name__
        workflow.warning(
            f"ci-eval could not create its check run: {reason}; the PR comment and the "
            "step's annotations are used instead"
        )
        return False
    return True


def _check_summary(
    results: RunResults, page: Page, text_of: Callable[[Reporter], str], limit: int
) -> str:
    """The job summary's Markdown, or where it is longer than a check's text may be, the same
    report cut to fit (leaving out as the summary does, and saying so; the verdict line
    first)."""
    text = text_of(REPORTERS["summary"])
    if len(text) <= limit:
        return text
    from ci_eval.report.markdown import render

    where = page.artifact and f"the results file {page.artifact}"
    return scrub(
        render(
            results,
            "summary.md.j2",
            limit,
            template_dir=page.template_dir,
            where=where,
            link=page.link,
            problems=[],  # the job summary's render said them
            cache=page.cache,
        )
    )


def _comment(
    results: RunResults,
    settings: ReportSettings,
    env: Mapping[str, str],
    workflow: github.Workflow,
    token: str | None,
    template_dir: Path | None,
    views: dict[object, object],
) -> list[str]:
    number = github.pr_number(env)
    if number is None:
        return ["no pull request in this event: the PR comment is skipped"]
    if not token or not env.get("GITHUB_REPOSITORY"):
        return ["no GitHub token or repository in the environment: the PR comment is skipped"]
    from ci_eval.report.markdown import details_link, render_comment

    comment_id = settings.comment_id or github.default_comment_id(env)
    problems: list[str] = []
    body = scrub(
        render_comment(
            results,
            comment_id,
            template_dir,
            artifact=settings.results,
            problems=problems,
            cache=views,
            link=details_link(env),
            history=settings.history_url,
        )
    )
    poster = github.CommentPoster(
        env.get("GITHUB_API_URL", "https://api.github.com"),
        env["GITHUB_REPOSITORY"],
        token,
        workflow,
        # a cancelled run has seconds left before the runner kills it: the files come first
        Deadline.uncancellable(INTERRUPTED_COMMENT_S) if results.interrupted else None,
    )
    try:
        poster.upsert(number, body, github.marker_for(comment_id))
    except Exception as exc:  # the comment is a courtesy: it never decides the exit code
        reason = str(exc) if isinstance(exc, github.CommentError) else type(exc).__name__
        workflow.warning(f"ci-eval could not comment on the pull request: {reason}")
        return [*problems, f"PR comment failed: {reason}"]
    return problems
