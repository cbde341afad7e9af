"""The output blocks of README.md and docs/*.md, generated from real runs.

``python -m docs.outputs`` reruns every documented command and writes its output into the
document that shows it (README.md or a page of docs/); ``python -m docs.outputs --check``
reruns them and exits 1 with a unified diff of each block that no longer matches
(``tests/docs`` runs the check). The sample workflows are blocks too: each file of
``docs/workflows/`` is included, as it is, where a document marks ``workflow-<its stem>``, so
what the README shows is the file the tests lint and check against action.yml.

A generated block is marked in a document by HTML comments, which GitHub does not render::

    <!-- output: quickstart -->
    ```text
    ...
    ```
    <!-- /output -->

Only the fenced block between the markers is replaced (its fence grows when the output holds a
longer one). Each name has a producer below: a real ``ci-eval`` run in this process
(``ci_eval.cli.main``), from the repository root as the README's commands are typed, or from a
temporary copy of the samples (plus the input files the example needs) when the run writes
files or needs inputs of its own; nothing is written into the repository.

Durations, timestamps and ci-eval's version change from run to run: they are compared masked
(``mask``), and a block whose masked text still matches keeps the README's text, so
regenerating rewrites only what really changed.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ci_eval.cli import main as ci_eval_main
from tests.factories import evalset, inv

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = REPO / "docs"
WORKFLOWS = DOCS / "workflows"


def documents() -> list[Path]:
    """Every document that may hold output blocks: README.md, then docs/ (sub-folders too)."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def _doc_name(path: Path) -> str:
    try:
        return path.relative_to(REPO).as_posix()
    except ValueError:
        return path.name


# --- volatile parts ---------------------------------------------------------------------------

VOLATILE: tuple[tuple[re.Pattern[str], str], ...] = (
    # 2026-11-22T22:31:14+00:00: when the run started, when a baseline was written
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?"), "<time>"),
    # the terminal's "... 0 skipped in 0.4 s (command agent ...)"
    (re.compile(r"(?<=\bin )\d+(?:\.\d+)?(?= s\b)"), "<seconds>"),
    # the summary's footer "... · 1 run per case · 1.7 s · ..."
    (re.compile(r"(?<=· )\d+(?:\.\d+)?(?= s ·)"), "<seconds>"),
    # the summary's footer "ci-eval 0.1.0 · ..."
    (re.compile(r"(?<=\bci-eval )\d+\.\d+[\w.+!-]*"), "<version>"),
    # the usage's turn latencies "p50 0.05 s, p95 0.12 s, max 0.12 s", and so the slowest cases
    (re.compile(r"(?<=\b(?:p50|p95|max) )\d+\.\d\d(?= s\b)"), "<seconds>"),
    (re.compile(r"(?<=\*\*Slowest turns \(p95\):\*\* ).*"), "<cases>"),
    # --otlp's free port: "listening ... at http://127.0.0.1:41234"
    (re.compile(r"(?<=//127\.0\.0\.1:)\d+"), "<port>"),
)


def mask(text: str) -> str:
    """``text`` with the parts that change from run to run replaced by placeholders."""
    for pattern, placeholder in VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


# --- running ci-eval in this process ----------------------------------------------------------


class RunError(RuntimeError):
    """A documented command did not do what its example shows (exit code, missing lines)."""


class _Channel(io.TextIOWrapper):
    """stdout or stderr as a pipe gives them (UTF-8 bytes), every write also kept, in order, in
    a log both channels share: what a terminal shows, stderr lines where they came."""

    def __init__(self, log: list[str], errors: str) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors=errors, write_through=True)
        self._log = log

    def write(self, text: str) -> int:
        written = super().write(text)  # first: click probes with write(b"") for a TypeError
        self._log.append(text)
        return written

    def text(self) -> str:
        self.flush()
        raw = self.buffer.getvalue()  # type: ignore[attr-defined]
        return _lines(raw.decode("utf-8", "backslashreplace"))


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


@dataclass(frozen=True)
class Run:
    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str
    terminal: str  # stdout and stderr interleaved as written

    @property
    def command(self) -> str:
        return "$ " + shlex.join(("ci-eval", *self.args))

    def lines(self, prefix: str, channel: str = "terminal") -> list[str]:
        found = [line for line in getattr(self, channel).splitlines() if line.startswith(prefix)]
        if not found:
            raise RunError(f"`{self.command[2:]}` printed no line starting {prefix!r}:\n{self}")
        return found

    def __str__(self) -> str:
        return f"exit {self.code}\n{self.terminal}"


# what a developer's shell or a CI job may set that would change the output (GitHub's workflow
# commands and job summary, the action's inputs, ci-eval's tuning, git's repository)
_FOREIGN = ("GITHUB_", "RUNNER_", "ACTIONS_", "INPUT_", "CI_EVAL_", "GIT_")


def environment(**extra: str) -> dict[str, str]:
    """The environment of a documented run: the process's, without what a CI job or a
    developer's shell would add to the output; the agent writes no bytecode into the repository."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_FOREIGN)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


@contextlib.contextmanager
def _without_ibms_framework() -> Iterator[None]:
    """IBM's Orchestrate framework out of a documented run's sight: the parity tests import it
    into the test process, and ci-eval's Orchestrate user simulator takes IBM's own prompt where
    the framework is installed (ci_eval.simulate.orchestrate_story); the docs show a machine
    without it. A None in sys.modules is a module that cannot be found."""
    saved = sys.modules.get("agentops", _ABSENT)
    sys.modules["agentops"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if saved is _ABSENT:
            del sys.modules["agentops"]
        else:
            sys.modules["agentops"] = saved  # type: ignore[assignment]


_ABSENT = object()


def ci_eval(*args: str, cwd: Path, expect: int, env: Mapping[str, str] | None = None) -> Run:
    """``ci-eval ARGS`` run from ``cwd`` in this process; a RunError unless it exits ``expect``."""
    log: list[str] = []
    out, err = _Channel(log, "strict"), _Channel(log, "backslashreplace")
    with (
        contextlib.chdir(cwd),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        _without_ibms_framework(),
    ):
        code = ci_eval_main(list(args), env=dict(env if env is not None else environment()))
    run = Run(args, code, out.text(), err.text(), _lines("".join(log)))
    if code != expect:
        raise RunError(f"`{run.command[2:]}` in {cwd} exited {code}, not {expect}:\n{run}")
    return run


@contextlib.contextmanager
def workspace(samples: bool = True) -> Iterator[Path]:
    """A temporary folder standing in for the repository: the samples and ci-eval.toml (with
    ``samples``), a ``.git`` folder so that neither ci-eval's config search nor git looks above
    it. Removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="ci-eval-docs-") as name:
        root = Path(name).resolve()
        (root / ".git").mkdir()
        if samples:
            shutil.copytree(
                REPO / "samples", root / "samples", ignore=shutil.ignore_patterns("__pycache__")
            )
            shutil.copy2(REPO / "ci-eval.toml", root / "ci-eval.toml")
        yield root


def _in(root: Path, **extra: str) -> dict[str, str]:
    """The environment of a run in ``workspace`` ``root``: git stops at it."""
    return environment(GIT_CEILING_DIRECTORIES=str(root.parent), **extra)


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), "utf-8")


# --- the producers ----------------------------------------------------------------------------

Producer = Callable[[], Mapping[str, str]]
PRODUCERS: dict[str, Producer] = {}  # block name -> the producer that writes it


def produces(*names: str) -> Callable[[Callable[[], Any]], Producer]:
    """Register a producer of the blocks ``names``: it returns the block's text (one name) or a
    mapping name -> text (several blocks from one set of runs)."""

    def register(function: Callable[[], Any]) -> Producer:
        def producer() -> Mapping[str, str]:
            result = function()
            return {names[0]: result} if isinstance(result, str) else result

        producer.__name__ = producer.__qualname__ = function.__name__
        producer.__doc__ = function.__doc__
        for name in names:
            PRODUCERS[name] = producer
        return producer

    return register


@produces("quickstart")
def quickstart() -> str:
    """README.md, Quick start: `ci-eval run` with the repository's ci-eval.toml, as the
    terminal shows it (the "no baseline" line is stderr); exit 1, the sample's failing case."""
    return ci_eval("run", cwd=REPO, expect=1).terminal


@produces("quickstart-summary")
def quickstart_summary() -> str:
    """docs/reports.md: the Markdown summary of the Quick start's run (`--summary summary.md`)."""
    with tempfile.TemporaryDirectory(prefix="ci-eval-docs-") as out:
        summary = Path(out) / "summary.md"
        ci_eval("run", "--summary", str(summary), cwd=REPO, expect=1)
        return summary.read_text("utf-8")


@produces("template-warning")
def template_warning() -> str:
    """docs/reports.md: a --template-dir template the sandbox stops is one warning, on stderr."""
    with workspace() as root:
        write(root / "tpl/summary.md.j2", '{{ headline.text }}\n{{ "".__class__ }}\n')
        command = shlex.split("run --summary summary.md --template-dir tpl")
        run = ci_eval(*command, cwd=root, env=_in(root), expect=1)
        return "\n".join(run.lines("ci-eval: warning: ", "stderr"))


@produces("validate-problems")
def validate_problems() -> str:
    """docs/reference.md, Command line: one line per problem,
    `path:line:col: json.path: message` (stdout)."""
    with workspace(samples=False) as root:
        write(
            root / "evals/bad.evalset.json",
            '{\n  "eval_set_id": "s",\n  "eval_cases": [\n    {"conversation": []},\n'
            '    {"eval_id": "b", "conversation": [{"user_content": {"parts": [{"text": 5}]}}]}\n'
            "  ]\n}\n",
        )
        run = ci_eval("validate", "evals/bad.evalset.json", cwd=root, env=_in(root), expect=2)
        return run.stdout


@produces("trace-mode")
def trace_mode() -> str:
    """docs/reference.md, ci-eval run: `validate` names a set whose cases are scored from
    their recording."""
    with workspace(samples=False) as root:
        write(
            root / "agent/trace_example.evalset.json",
            {
                "eval_set_id": "trace_mode_example",
                "eval_cases": [
                    {
                        "eval_id": "replay_001",
                        "eval_mode": "trace",
                        "actual_conversation": [
                            inv("weather in Paris?", "Sunny, 20 C", "get_weather")
                        ],
                    },
                    {
                        "eval_id": "replay_002",
                        "eval_mode": "trace",
                        "actual_conversation": [inv("and Rome?", "Rain", "get_weather")],
                    },
                ],
            },
        )
        run = ci_eval("validate", "agent", cwd=root, env=_in(root), expect=0)
        return "\n".join(line for line in run.stdout.splitlines() if ": trace mode: " in line)


TRACES = REPO / "tests/data/traces"


def _trace_run(root: Path, evalset: str, trace: str, *metrics: str, expect: int) -> str:
    """`ci-eval run EVALSET --agent replay --replay TRACE` from ``root``: the command, then what
    it printed."""
    args = ["run", evalset, "--agent", "replay", "--replay", trace]
    for metric in metrics:
        args += ["--metric", metric]
    run = ci_eval(*args, cwd=root, env=_in(root), expect=expect)
    return f"{run.command}\n{run.terminal}".rstrip("\n")


@produces("live-spans")
def live_spans() -> str:
    """README.md, Use it on your agent: the sample agent instrumented with the OpenTelemetry
    SDK, which replies with text only, scored on its live spans (``--otlp``): the same scores
    as the sample command agent's, which returns its calls (exit 1, the sample's failing case).
    Its ``python`` is this interpreter, which has the SDK (the test extra)."""
    with workspace() as root:
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        run = ci_eval(
            *("run", "samples/evals/weather_basic.evalset.json", "--otlp"),
            *("--agent", "command"),
            *("--agent-command", "python samples/agents/weather_agent/spans_agent.py"),
            cwd=root,
            env=_in(root, PATH=path),
            expect=1,
        )
        return f"{run.command}\n{run.terminal}".rstrip("\n")


@produces("traces-adk-genai", "traces-no-content", "traces-openai-agents", "traces-tempo",
          "traces-json-lines")  # fmt: skip
def traces_shapes() -> dict[str, str]:
    """docs/traces.md: one trace of each kind replayed: google-adk 2.13's default telemetry with
    and without message content, the OpenAI Agents SDK's GenAI spans, a Tempo export, and the
    ADK trace as JSON lines of bare spans (a collector's file exporter appends so)."""
    metrics = ("tool_trajectory_avg_score", "response_match_score")
    with workspace(samples=False) as root:
        shutil.copytree(TRACES, root / "traces")
        spans = [
            span
            for rs in json.loads((root / "traces/adk-2.13/content.otlp.json").read_text())[
                "resourceSpans"
            ]
            for ss in rs["scopeSpans"]
            for span in ss["spans"]
        ]
        write(root / "traces/adk-2.13/content.jsonl", "".join(json.dumps(s) + "\n" for s in spans))
        adk = "traces/adk-2.13"
        return {
            "traces-adk-genai": _trace_run(
                root, f"{adk}/weather.evalset.json", f"{adk}/content.otlp.json", *metrics, expect=1
            ),
            "traces-no-content": _trace_run(
                root,
                f"{adk}/no-content.evalset.json",
                f"{adk}/no-content.otlp.json",
                *metrics,
                expect=1,
            ),
            "traces-openai-agents": _trace_run(
                root,
                "traces/openai-agents/weather.evalset.json",
                "traces/openai-agents/traces.json",
                *(f"{m}=0.5" for m in metrics),
                expect=1,
            ),
            "traces-tempo": _trace_run(
                root,
                "traces/agentevals/eval_set_helm.json",
                "traces/agentevals/tempo_export_with_batches.json",
                *metrics,
                expect=1,
            ),
            "traces-json-lines": _trace_run(
                root, f"{adk}/weather.evalset.json", f"{adk}/content.jsonl", *metrics, expect=1
            ),
        }


@produces("traces-bad")
def traces_bad() -> str:
    """docs/traces.md: a malformed span is one line naming the file and its JSON path (a line of
    a JSON-lines file by its number)."""
    with workspace(samples=False) as root:
        shutil.copytree(TRACES, root / "traces")
        tempo = json.loads((root / "traces/agentevals/tempo_export_with_batches.json").read_text())
        del tempo["batches"][-1]["instrumentationLibrarySpans"][0]["spans"][0]["spanId"]
        write(root / "trace.json", tempo)
        good = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "a1", "name": "x"}
        write(root / "trace.jsonl", json.dumps(good) + "\n" + json.dumps({**good, "spanId": ""}))
        out = []
        for trace in ("trace.json", "trace.jsonl"):
            args = ["run", "traces/agentevals/eval_set_helm.json", "--agent", "replay"]
            run = ci_eval(*args, "--replay", trace, cwd=root, env=_in(root), expect=2)
            out += run.lines("ci-eval: ", "stderr")
        return "\n".join(out)


@produces("starter-pack")
def starter_pack() -> str:
    """docs/reference.md, Discovery: `validate` and `validate -v` in an agent-starter-pack
    layout; of `-v`, the lines it adds (what was skipped or not read)."""
    with workspace(samples=False) as root:
        write(
            root / "tests/eval/eval_config.json",
            {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.6}},
        )
        write(root / "tests/eval/evalsets/gold_set.json", evalset("gold"))
        write(root / "tests/eval/evalsets/support_eval.json", evalset("support", "refund", "hours"))
        write(root / "tests/eval/notes.json", {"owner": "qa"})
        write(root / "app/agent_config.json", {"model": "gemini"})
        plain = ci_eval("validate", cwd=root, env=_in(root), expect=0)
        verbose = ci_eval("validate", "-v", cwd=root, env=_in(root), expect=0)
        shown = set(plain.stdout.splitlines())
        added = [line for line in verbose.stdout.splitlines() if line not in shown]
        if not added:
            raise RunError(f"`ci-eval validate -v` listed nothing more:\n{verbose}")
        return "\n".join([plain.command, plain.terminal.rstrip("\n"), verbose.command, "…", *added])


@produces("agentevals")
def agentevals() -> str:
    """docs/reference.md, Dialects: an agentevals example file is rejected with the fix (its
    first problem)."""
    with workspace(samples=False) as root:
        case = {
            "case_id": "roll_die",
            "conversation": [
                {
                    "user_content": {"parts": [{"text": "Roll a 6-sided die"}]},
                    "agent_content": {"parts": [{"text": "I rolled a 4."}]},
                }
            ],
        }
        write(
            root / "examples/dice_agent/eval_set.json",
            {"eval_set_id": "dice_agent", "eval_cases": [case]},
        )
        run = ci_eval(
            "validate", "examples/dice_agent/eval_set.json", cwd=root, env=_in(root), expect=2
        )
        return run.stdout.splitlines()[0]


@produces("config-rejected")
def config_rejected() -> str:
    """docs/reference.md, Which config applies: a config google-adk rejects is an error
    naming config, JSON path and set."""
    with workspace(samples=False) as root:
        write(root / "evals/s.evalset.json", evalset("s", "a"))
        criteria = {"response_match_score": 0.8, "final_response_match_v2": {"weight": 0.3}}
        write(root / "evals/test_config.json", json.dumps({"criteria": criteria}))
        run = ci_eval("validate", "evals/s.evalset.json", cwd=root, env=_in(root), expect=2)
        return run.stdout


@produces("foreign-config")
def foreign_config() -> str:
    """docs/reference.md, Which config applies: another tool's test_config.json is a
    warning; defaults apply."""
    with workspace(samples=False) as root:
        write(root / "tests/eval/evalsets/support_eval.json", evalset("support", "refund"))
        write(
            root / "tests/eval/evalsets/test_config.json",
            {"metrics": [{"metric_name": "tool_trajectory_avg_score", "threshold": 0.8}]},
        )
        run = ci_eval("validate", "tests/eval/evalsets", cwd=root, env=_in(root), expect=0)
        return "\n".join(line for line in run.stdout.splitlines() if line.endswith("(warning)"))


SET = "samples/evals/weather_basic.evalset.json"
MAIN_COMMIT = "d1b0bf35cae3e1f0b5c0d4a7a2f3e6b9c8d7e6f5"  # main's commit in baseline.json
ACCEPT = """\
[[accept]]
case = "weather_basic:paris_weather"     # SET_ID:CASE_ID, fnmatch patterns allowed
metrics = ["response_match_score"]       # optional: only these metrics
reason = "answers now say 'nice', approved in #42"   # required
"""


@produces("regression", "short-history", "accepted")
def gate() -> dict[str, str]:
    """docs/gate.md: the weather sample with 12 runs of history on main (baseline.json) and with
    one (short.json), replaying a change that makes paris_weather answer "Paris is nice."; and
    the same change accepted in accept.toml."""
    with workspace() as root:

        def run(command: str, expect: int, **env: str) -> Run:
            return ci_eval(*shlex.split(command), cwd=root, env=_in(root, **env), expect=expect)

        run(f"run {SET} --num-runs 12 --results main.json", 1)
        run("baseline update main.json --baseline baseline.json", 0, GITHUB_SHA=MAIN_COMMIT)
        run(f"run {SET} --results once.json", 1)
        run("baseline update once.json --baseline short.json", 0)
        # the change recorded over five runs: a recorded run is evidence once, and the
        # confirmation reruns replay the recording's next runs
        run(f"run {SET} --num-runs 5 --results five.json", 1)
        worse = json.loads((root / "five.json").read_text("utf-8"))
        [paris] = [c for c in worse["sets"][0]["cases"] if c["eval_id"] == "paris_weather"]
        for record in paris["runs"]:
            record["invocations"][0]["actual"]["final_response"]["parts"][0]["text"] = (
                "Paris is nice."
            )
        write(root / "worse.json", worse)
        write(root / "accept.toml", ACCEPT)

        replay = f"run {SET} --agent replay --replay worse.json"
        regression = run(f"{replay} --num-runs 3 --baseline baseline.json", 1)
        short = run(f"{replay} --baseline short.json", 1)
        accepted = run(f"{replay} --num-runs 3 --baseline baseline.json --accept accept.toml", 0)

    return {
        "regression": f"{regression.command}\n{regression.terminal}",
        "short-history": f"{short.command}\n{short.terminal}",
        "accepted": f"{accepted.command}\n{accepted.terminal}",
    }


@produces("power", "plan")
def power_and_plan() -> dict[str, str]:
    """docs/gate.md, What a pass proves: the weather sample with 12 runs of history on main,
    an unchanged pull request (its pass rates with their intervals, and what it could have
    detected), and `ci-eval plan` on the same history."""
    with workspace() as root:

        def run(command: str, expect: int, **env: str) -> Run:
            return ci_eval(*shlex.split(command), cwd=root, env=_in(root, **env), expect=expect)

        run(f"run {SET} --num-runs 12 --results main.json", 1)
        run("baseline update main.json --baseline baseline.json", 0, GITHUB_SHA=MAIN_COMMIT)
        unchanged = run(f"run {SET} --num-runs 3 --baseline baseline.json", 0)
        plan = run("plan --baseline baseline.json --detect 0.95:0.2", 0)
    return {
        "power": f"{unchanged.command}\n{unchanged.terminal}",
        "plan": f"{plan.command}\n{plan.terminal}",
    }


@produces("judging-changed")
def judging_changed() -> str:
    """docs/gate.md, Changes to how cases are judged: the weather sample with 3 runs of history
    on main; a change that makes paris_weather answer "Paris is nice.", rewrites the case to
    expect it and loosens the set's match type, gated with ``judging-changed``."""
    with workspace() as root:

        def run(command: str, expect: int) -> Run:
            return ci_eval(*shlex.split(command), cwd=root, env=_in(root), expect=expect)

        run(f"run {SET} --num-runs 3 --results main.json", 1)
        run("baseline update main.json --baseline baseline.json", 0)
        worse = json.loads((root / "main.json").read_text("utf-8"))
        [paris] = [c for c in worse["sets"][0]["cases"] if c["eval_id"] == "paris_weather"]
        for record in paris["runs"]:
            record["invocations"][0]["actual"]["final_response"]["parts"][0]["text"] = (
                "Paris is nice."
            )
        write(root / "worse.json", worse)
        evalset_file = root / SET
        evalset_file.write_text(
            evalset_file.read_text("utf-8").replace(
                "It is sunny in Paris, 22 degrees.", "Paris is nice."
            ),
            "utf-8",
        )
        loose = {"threshold": 1.0, "match_type": "ANY_ORDER"}
        write(
            root / "samples/evals/test_config.json",
            {"criteria": {"tool_trajectory_avg_score": loose, "response_match_score": 0.8}},
        )
        strict = "regression,error,not-evaluated,judging-changed"
        gated = run(
            f"run {SET} --agent replay --replay worse.json --baseline baseline.json "
            f"--fail-on {strict}",
            1,
        )
    return f"{gated.command}\n{gated.terminal}"


@produces("junit-consumers")
def junit_consumers() -> str:
    """docs/reports.md: what four JUnit consumers show a reader of ci-eval's JUnit, by running ports
    of their parsers (benchmarks/junit_consumers.py) on the reviewer scenario's file
    (tests/report/scenarios.py): a regression, an agent error, a known failure."""
    from benchmarks.junit_consumers import CONSUMERS
    from ci_eval.report.junit import to_junit
    from tests.report.scenarios import reviewer

    xml = to_junit(reviewer())
    picks = {
        ("billing", "invoice_copy"): "regression",
        ("billing", "refund_status"): "agent error",
        ("travel", "visa_question"): "known failure",
    }
    lines = []
    for consumer, (_, parse) in CONSUMERS.items():
        lines.append(consumer)
        for shown in parse(xml):
            what = picks.get((shown.classname, shown.name))
            if what is None:
                continue
            text = " ".join((shown.text or "").split())
            details = (shown.details or "").strip().split("\n", 1)[0]
            if details and details not in text:  # the reason one click away
                text = f"{text} | raw output: {details}" if text else f"raw output: {details}"
            said = (text[:86] + "…") if len(text) > 87 else text or "(no reason shown)"
            lines.append(f"  {what:<14} {shown.state:<8} {said}")
    return "\n".join(lines)


def _git(root: Path, *args: str, stdin: str | None = None) -> str:
    """``git ARGS`` in ``root`` (a workspace), as a fixed author, its stdout."""
    env = _in(
        root,
        GIT_AUTHOR_NAME="ci-eval",
        GIT_AUTHOR_EMAIL="ci-eval@example.com",
        GIT_COMMITTER_NAME="ci-eval",
        GIT_COMMITTER_EMAIL="ci-eval@example.com",
    )
    done = subprocess.run(
        ["git", *args], cwd=root, env=env, input=stdin, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@produces("main-first-push")
def main_first_push() -> str:
    """README.md, Main keeps the history: docs/workflows/evals-main.yml on the samples at main's
    very first push — the run with fail-on error passes although a case fails on purpose, and
    the history job creates main's history with it — then a pull request, judged against that
    history on the data branch: the case main fails is a known failure and does not block."""
    with workspace() as root:
        # what the action runs, with its default results path
        main_run = ("run", "--fail-on", "error", "--results", "ci-eval-results.json")
        first = ci_eval(*main_run, cwd=root, env=_in(root), expect=0)
        history = root / ".ci-eval-data"
        history.mkdir()
        update = ("baseline", "update", "../ci-eval-results.json", "--baseline", "baseline.json")
        recorded = ci_eval(*update, cwd=history, env=_in(root), expect=0)
        # the data branch, as the history job pushes it: baseline.json at its root
        _git(root, "init", "-q", "-b", "main")
        blob = _git(root, "hash-object", "-w", str(history / "baseline.json"))
        tree = _git(root, "mktree", stdin=f"100644 blob {blob}\tbaseline.json\n")
        commit = _git(root, "commit-tree", tree, "-m", "history")
        _git(root, "update-ref", "refs/heads/ci-eval-data", commit)
        pull = ci_eval(
            "run", "--baseline-branch", "ci-eval-data", cwd=root, env=_in(root), expect=0
        )
    return "\n".join(
        [
            f"{first.command}     # main's first push",
            first.lines("gate passed: ")[-1],
            f"$ cd .ci-eval-data && {recorded.command[2:]}     # the history job",
            recorded.terminal.rstrip("\n"),
            f"{pull.command}     # a pull request, then",
            pull.lines("gate passed: ")[-1],
        ]
    )


COMMAND_AGENT = "python samples/agents/weather_agent/command_agent.py"


@produces("hostile-files")
def hostile_files() -> str:
    """docs/reference.md, Discovery: files no eval set is — a FIFO, a device, a symlink loop, a
    huge integer, deep nesting — are one line each, and the good file is still read (exit 2)."""
    with workspace(samples=False) as root:
        evals = root / "evals"
        write(evals / "good.evalset.json", evalset("good", "a"))
        big = '{"eval_set_id": "big", "eval_cases": [], "n": ' + "9" * 4400 + "}"
        write(evals / "big.evalset.json", big)
        deep = '{"eval_set_id": "deep",\n "eval_cases": ' + "[" * 5002 + "]" * 5002 + "}"
        write(evals / "deep.evalset.json", deep)
        (evals / "loop.evalset.json").symlink_to("loop.evalset.json")
        os.mkfifo(evals / "pipe.evalset.json")
        (evals / "side").mkdir()
        os.mkfifo(evals / "side" / "a.metrics.json")
        (evals / "zero.evalset.json").symlink_to("/dev/zero")
        run = ci_eval("validate", "evals", cwd=root, env=_in(root), expect=2)
        return f"{run.command}\n{run.terminal}"


@produces("custom-metric-clash")
def custom_metric_clash() -> str:
    """docs/reference.md, Custom metrics: a custom metric may not take a built-in's name; an
    input error before any agent call (exit 2)."""
    with workspace() as root:
        toml = (root / "ci-eval.toml").read_text("utf-8")
        toml += '\n[custom_metrics]\nresponse_match_score = "team_metrics:mentions_city"\n'
        write(root / "ci-eval.toml", toml)
        metric = "def mentions_city(expected, actual, criterion):\n    return 1.0\n"
        write(root / "team_metrics.py", metric)
        command = ("run", SET, "--agent", "command", "--agent-command", COMMAND_AGENT)
        run = ci_eval(*command, cwd=root, env=_in(root), expect=2)
        return f"{run.command}\n{run.terminal}$ echo $?\n{run.code}"


@produces("redacted-url")
def redacted_url() -> str:
    """docs/security.md: a password and an api_key in --agent-url are *** wherever the URL is
    written, in an agent error too (nothing listens on port 9: exit 3)."""
    url = "http://bot:hunter2secret@127.0.0.1:9/turn?api_key=abc123456"
    with workspace() as root:
        command = ("run", SET, "--case", "weather_basic:paris_weather", "--agent", "http")
        options = ("--agent-url", url, "--retries", "0")
        run = ci_eval(*command, *options, cwd=root, env=_in(root), expect=3)
        if "hunter2secret" in run.terminal or "abc123456" in run.terminal:
            raise RunError(f"a secret of the URL was printed:\n{run}")
        return f"{run.command}\n{run.terminal}"


@produces("inputs-checked")
def inputs_checked() -> str:
    """docs/security.md: an output path that cannot be written and an agent program that does
    not exist are one line each and exit 2, before any agent call."""
    with workspace() as root:
        out = []
        for extra in (
            ("--agent-command", COMMAND_AGENT, "--results", "/proc/nope/r.json"),
            ("--agent-command", "weather-agent --serve"),
        ):
            command = ("run", "samples/evals", "--agent", "command", *extra)
            run = ci_eval(*command, cwd=root, env=_in(root), expect=2)
            out.append(f"{run.command}\n{run.terminal.rstrip()}")
        return "\n".join(out)


_PROGRESS = re.compile(r"^ci-eval: \d+/\d+ cases done.*\n?", re.MULTILINE)


@produces("simulated-user")
def simulated_user() -> str:
    """docs/reference.md, User simulation: the sample agent asks for the city first; a loopback
    LLM (tests/simulated_user.py) plays the user of the ADK scenario and of the Orchestrate
    dataset, and judges ADK's per-turn quality. The progress lines (a run past two seconds)
    are left out: whether they appear depends on the machine's speed."""
    from tests.judge_server import JudgeServer
    from tests.simulated_user import scripted_user

    sets = ("samples/evals/scenarios", "samples/orchestrate/weather_clarify.json")
    with workspace() as root, JudgeServer(scripted_user()) as llm:
        judge = ("--judge-url", llm.url, "--judge-model", "loopback")
        run = ci_eval("run", *sets, *judge, cwd=root, env=_in(root), expect=0)
    shown = ("run", *sets, "--judge-url", "http://127.0.0.1:PORT/v1", "--judge-model", "loopback")
    return "$ " + shlex.join(("ci-eval", *shown)) + "\n" + _PROGRESS.sub("", run.terminal)


def _recorded_score(case: dict[str, Any], metric: str, score: float) -> None:
    """``case`` (an ADK EvalCaseResult) recording ``score`` for ``metric``, failed (status 2)."""
    results = [*case["overall_eval_metric_results"]]
    for turn in case["eval_metric_result_per_invocation"]:
        results += turn["eval_metric_results"]
    for result in results:
        if result["metric_name"] == metric:
            result.update(score=score, eval_status=2)
    case["final_eval_status"] = 2


@produces("replay-history")
def replay_history() -> str:
    """docs/reference.md, Reaching the agent: three recordings in ADK's .adk/eval_history (made
    with --adk-results), whose names do not sort as their creation_timestamp does; the newest
    (which answers "Paris is nice.") is the one scored."""
    with workspace() as root:
        ci_eval("run", SET, "--adk-results", "out", cwd=root, env=_in(root), expect=1)
        recorded = json.loads((root / "out/weather_basic.evalset_result.json").read_text("utf-8"))
        history = root / "app/.adk/eval_history"
        for stamp in ("999999999.0", "1763800000.5", "1763900000.25"):
            name = f"app_weather_basic_{stamp}"
            data = json.loads(json.dumps(recorded))
            data.update(eval_set_result_id=name, eval_set_result_name=name)
            data["creation_timestamp"] = float(stamp)
            if stamp == "1763900000.25":  # the newest
                [paris] = [c for c in data["eval_case_results"] if c["eval_id"] == "paris_weather"]
                for turn in paris["eval_metric_result_per_invocation"]:
                    turn["actual_invocation"]["final_response"]["parts"][0]["text"] = (
                        "Paris is nice."
                    )
                _recorded_score(paris, "response_match_score", 0.4)  # as ADK scores the reply
            write(history / f"{name}.evalset_result.json", data)
        listing = sorted(p.name for p in history.iterdir())
        replay = ("--agent", "replay", "--replay", "app/.adk/eval_history")
        run = ci_eval(
            "run",
            SET,
            *replay,
            "--case",
            "weather_basic:paris_weather",
            cwd=root,
            env=_in(root),
            expect=1,
        )
    return "\n".join(["$ ls app/.adk/eval_history", *listing, run.command, run.terminal])


def _include(path: Path) -> Callable[[], str]:
    def include() -> str:
        return path.read_text("utf-8")

    include.__name__ = include.__qualname__ = f"include_{path.stem.replace('-', '_')}"
    include.__doc__ = f"{_doc_name(path)}, as it is (a sample workflow the tests lint)."
    return include


for _workflow in sorted(WORKFLOWS.glob("*.yml")):
    produces(f"workflow-{_workflow.stem}")(_include(_workflow))


@produces("environment-variables")
def environment_variables() -> str:
    """Every environment variable ci-eval reads, as `ci-eval action --help` lists them."""
    from ci_eval.cli.help import ENVIRONMENT

    width = max(len(name) for name, _ in ENVIRONMENT if len(name) <= 40)
    return "\n".join(
        f"{name:<{width}}  {text}" if len(name) <= width else f"{name}\n{'':<{width}}  {text}"
        for name, text in ENVIRONMENT
    )


# a recorded `benchmarks/run.py --against REV --record FILE` (timings are never run by tests)
for _figures in sorted((REPO / "benchmarks" / "figures").glob("against-*.md")):
    produces(f"bench-{_figures.stem}")(_include(_figures))


def produce(names: set[str] | None = None) -> dict[str, str]:
    """Every block's text (or those of ``names``), each producer run once."""
    wanted = set(PRODUCERS) if names is None else names
    unknown = wanted - set(PRODUCERS)
    if unknown:
        raise MarkerError(f"no producer for block(s) {', '.join(sorted(unknown))}")
    out: dict[str, str] = {}
    for producer in dict.fromkeys(PRODUCERS[name] for name in sorted(wanted)):
        for name, text in producer().items():
            if not text.strip():
                raise RunError(f"block {name}: the run gave no output")
            out[name] = text.rstrip("\n")
    return {name: out[name] for name in sorted(wanted)}


# --- the documents' blocks ------------------------------------------------------------------


class MarkerError(ValueError):
    """The documents' markers and the producers do not agree."""


_OPEN = "<!-- output: "
_CLOSE = "<!-- /output -->"
_BLOCK = re.compile(
    r"^<!-- output: (?P<name>[\w.-]+) -->[ \t]*\n"
    r"(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n"
    r"(?P<body>.*?)\n?"
    r"^(?P=fence)[ \t]*\n"
    r"<!-- /output -->[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True)
class Block:
    name: str
    fence: str
    info: str
    body: str
    start: int  # offset of the opening fence in the document
    end: int  # offset of the end marker, just past the closing fence's line
    line: int  # the document's line number of the body's first line
    doc: str = "README.md"  # the document, as messages and diffs name it


def blocks(text: str, doc: str = "README.md") -> list[Block]:
    """The marked blocks of ``text`` (the document ``doc``), in order; MarkerError for a marker
    without its block."""
    found = []
    for match in _BLOCK.finditer(text):
        fence_at = match.start("fence")
        found.append(
            Block(
                name=match["name"],
                fence=match["fence"],
                info=match["info"],
                body=match["body"],
                start=fence_at,
                end=text.rindex(_CLOSE, fence_at, match.end()),
                line=text.count("\n", 0, fence_at) + 2,
                doc=doc,
            )
        )
    lines = text.splitlines()
    opened = [n for n, line in enumerate(lines, 1) if line.startswith(_OPEN)]
    closed = [n for n, line in enumerate(lines, 1) if line.startswith(_CLOSE)]
    if len(opened) != len(found) or len(closed) != len(found):
        matched = {b.line - 2 for b in found} | {text.count("\n", 0, b.end) + 1 for b in found}
        bad = [n for n in opened + closed if n not in matched]
        raise MarkerError(
            f"{doc} line {bad[0]}: an output marker must be followed by one fenced block "
            f"and {_CLOSE} on the line after its closing fence"
        )
    names = [b.name for b in found]
    twice = {n for n in names if names.count(n) > 1}
    if twice:
        raise MarkerError(f"{doc}: block(s) marked more than once: {', '.join(sorted(twice))}")
    return found


def _fenced(block: Block, body: str) -> str:
    """``body`` in ``block``'s fence, made longer than any fence inside it."""
    char = block.fence[0]
    inner = re.findall(rf"^[ \t]*({re.escape(char)}{{3,}})", body, re.MULTILINE)
    longest = max(map(len, inner), default=0)
    fence = block.fence if len(block.fence) > longest else char * (longest + 1)
    return f"{fence}{block.info}\n{body}\n{fence}\n"


def _agree(text: str, produced: Mapping[str, str], doc: str) -> list[Block]:
    """``text``'s blocks, each with its run's output (MarkerError for a block without one)."""
    found = blocks(text, doc)
    unknown = [b for b in found if b.name not in produced]
    if unknown:
        raise MarkerError(
            f"{doc} line {unknown[0].line - 2}: no producer for block {unknown[0].name}"
        )
    return found


def marked(texts: Mapping[str, str]) -> dict[str, str]:
    """Block name -> the document that marks it, over ``texts`` (document -> text); a
    MarkerError when two documents mark one block or a producer's block is marked nowhere."""
    where: dict[str, str] = {}
    for doc, text in texts.items():
        for block in blocks(text, doc):
            if block.name in where:
                raise MarkerError(
                    f"block {block.name} is marked in {where[block.name]} and in {doc}: "
                    "mark it once"
                )
            where[block.name] = doc
    missing = set(PRODUCERS) - set(where)
    if missing:
        raise MarkerError(f"no document has a marker for block(s) {', '.join(sorted(missing))}")
    return where


def _same(old: str, new: str) -> bool:
    return mask(old) == mask(new)


def render(text: str, produced: Mapping[str, str], doc: str = "README.md") -> str:
    """``text`` with every marked block's body replaced by its run's output; a block that
    matches once masked keeps its text (no churn of timestamps and durations)."""
    out, at = [], 0
    for block in _agree(text, produced, doc):
        new = produced[block.name]
        if _same(block.body, new):
            continue
        out += [text[at : block.start], _fenced(block, new)]
        at = block.end
    return "".join([*out, text[at:]])


def _range(start: int, length: int) -> str:
    """A hunk's range as unified diffs write it (an empty one names the line before)."""
    return f"{start}" if length == 1 else f"{start - (length == 0)},{length}"


def diff(block: Block, new: str) -> str:
    """A unified diff from the document's block to ``new``, with its line numbers; lines that
    differ only in volatile parts count as equal (shown as the README has them)."""
    old_lines, new_lines = block.body.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(
        None, [mask(x) for x in old_lines], [mask(x) for x in new_lines], autojunk=False
    )
    out = [f"--- {block.doc}  block {block.name}", f"+++ a real run  block {block.name}"]
    for group in matcher.get_grouped_opcodes(3):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{_range(block.line + i1, i2 - i1)} +{_range(block.line + j1, j2 - j1)} @@")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                out += [" " + line for line in old_lines[a1:a2]]
            else:
                out += ["-" + line for line in old_lines[a1:a2]]
                out += ["+" + line for line in new_lines[b1:b2]]
    return "\n".join(out)


def check(text: str, produced: Mapping[str, str], doc: str = "README.md") -> str:
    """The diffs of every marked block of ``text`` that differs from its run's output (volatile
    parts masked); empty when all match."""
    return "\n".join(
        diff(block, produced[block.name])
        for block in _agree(text, produced, doc)
        if not _same(block.body, produced[block.name])
    )


# --- the command ------------------------------------------------------------------------------


def _texts() -> dict[str, str]:
    """Every document's text, by its name (README.md, docs/…)."""
    return {_doc_name(path): path.read_text("utf-8") for path in documents()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m docs.outputs",
        description="Regenerate the marked output blocks of README.md and docs/*.md from real "
        "ci-eval runs (and the sample workflows of docs/workflows/).",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="change nothing; exit 1 with a diff of every block that drifted",
    )
    args = parser.parse_args(argv)
    try:
        marked(_texts())  # a broken or missing marker fails before the runs
        produced = produce()
        paths = {_doc_name(path): path for path in documents()}
        texts = _texts()  # read again: the runs take seconds
        marked(texts)
        if args.check:
            drift = [check(text, produced, doc) for doc, text in texts.items()]
            if any(drift):
                print("\n".join(d for d in drift if d))
                print("output blocks drifted; run `python -m docs.outputs`")
                return 1
            print(f"{len(produced)} output blocks match their runs")
            return 0
        changed = []
        for doc, text in texts.items():
            new = render(text, produced, doc)
            changed += [
                f"{doc}: {b.name}" for b in blocks(text, doc) if not _same(b.body, produced[b.name])
            ]
            if new != text:
                paths[doc].write_text(new, "utf-8")
        print(f"{', '.join(changed) or 'no block'} regenerated")
        return 0
    except (MarkerError, RunError) as exc:
        print(f"docs.outputs: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
