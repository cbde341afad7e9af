"""README.md's output blocks, generated from real runs.

``python -m docs.outputs`` reruns every documented command and writes its output into
README.md; ``python -m docs.outputs --check`` reruns them and exits 1 with a unified diff of
each block that no longer matches (``tests/docs`` runs the check).

A generated block is marked in README.md by HTML comments, which GitHub does not render::

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


def ci_eval(*args: str, cwd: Path, expect: int, env: Mapping[str, str] | None = None) -> Run:
    """``ci-eval ARGS`` run from ``cwd`` in this process; a RunError unless it exits ``expect``."""
    log: list[str] = []
    out, err = _Channel(log, "strict"), _Channel(log, "backslashreplace")
    with (
        contextlib.chdir(cwd),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
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
    """## Quick start: `ci-eval run` with the repository's ci-eval.toml, as the terminal shows
    it (the "no baseline" line is stderr); exit 1, the sample's failing case."""
    return ci_eval("run", cwd=REPO, expect=1).terminal


@produces("quickstart-summary")
def quickstart_summary() -> str:
    """## Reports: the Markdown summary of the Quick start's run (`--summary summary.md`)."""
    with tempfile.TemporaryDirectory(prefix="ci-eval-docs-") as out:
        summary = Path(out) / "summary.md"
        ci_eval("run", "--summary", str(summary), cwd=REPO, expect=1)
        return summary.read_text("utf-8")


@produces("template-warning")
def template_warning() -> str:
    """## Reports: a --template-dir template the sandbox stops is one warning, on stderr."""
    with workspace() as root:
        write(root / "tpl/summary.md.j2", '{{ headline.text }}\n{{ "".__class__ }}\n')
        command = shlex.split("run --summary summary.md --template-dir tpl")
        run = ci_eval(*command, cwd=root, env=_in(root), expect=1)
        return "\n".join(run.lines("ci-eval: warning: ", "stderr"))


@produces("validate-problems")
def validate_problems() -> str:
    """## Command line: one line per problem, `path:line:col: json.path: message` (stdout)."""
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
    """### ci-eval run: `validate` names a set whose cases are scored from their recording."""
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


@produces("starter-pack")
def starter_pack() -> str:
    """## Discovery: `validate` and `validate -v` in an agent-starter-pack layout; of `-v`, the
    lines it adds (what was skipped or not read)."""
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
    """## Dialects: an agentevals example file is rejected with the fix (its first problem)."""
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
    """### Which config applies: a config google-adk rejects is an error naming config, JSON
    path and set."""
    with workspace(samples=False) as root:
        write(root / "evals/s.evalset.json", evalset("s", "a"))
        criteria = {"response_match_score": 0.8, "final_response_match_v2": {"weight": 0.3}}
        write(root / "evals/test_config.json", json.dumps({"criteria": criteria}))
        run = ci_eval("validate", "evals/s.evalset.json", cwd=root, env=_in(root), expect=2)
        return run.stdout


@produces("foreign-config")
def foreign_config() -> str:
    """### Which config applies: another tool's test_config.json is a warning; defaults apply."""
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
    """## Baseline: the weather sample with 12 runs of history on main (baseline.json) and with
    one (short.json), replaying a change that makes paris_weather answer "Paris is nice."; and
    the same change accepted in accept.toml."""
    with workspace() as root:

        def run(command: str, expect: int, **env: str) -> Run:
            return ci_eval(*shlex.split(command), cwd=root, env=_in(root, **env), expect=expect)

        run(f"run {SET} --num-runs 12 --results main.json", 1)
        run("baseline update main.json --baseline baseline.json", 0, GITHUB_SHA=MAIN_COMMIT)
        run(f"run {SET} --results once.json", 1)
        run("baseline update once.json --baseline short.json", 0)
        worse = json.loads((root / "once.json").read_text("utf-8"))
        [paris] = [c for c in worse["sets"][0]["cases"] if c["eval_id"] == "paris_weather"]
        paris["runs"][0]["invocations"][0]["actual"]["final_response"]["parts"][0]["text"] = (
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


@produces("junit-consumers")
def junit_consumers() -> str:
    """## Reports: what four JUnit consumers show a reader of ci-eval's JUnit, by running ports
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


# --- README's blocks --------------------------------------------------------------------------


class MarkerError(ValueError):
    """README's markers and the producers do not agree."""


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
    start: int  # offset of the opening fence in the README
    end: int  # offset of the end marker, just past the closing fence's line
    line: int  # the README's line number of the body's first line


def blocks(text: str) -> list[Block]:
    """The marked blocks of ``text``, in order; MarkerError for a marker without its block."""
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
            )
        )
    lines = text.splitlines()
    opened = [n for n, line in enumerate(lines, 1) if line.startswith(_OPEN)]
    closed = [n for n, line in enumerate(lines, 1) if line.startswith(_CLOSE)]
    if len(opened) != len(found) or len(closed) != len(found):
        matched = {b.line - 2 for b in found} | {text.count("\n", 0, b.end) + 1 for b in found}
        bad = [n for n in opened + closed if n not in matched]
        raise MarkerError(
            f"README.md line {bad[0]}: an output marker must be followed by one fenced block "
            f"and {_CLOSE} on the line after its closing fence"
        )
    names = [b.name for b in found]
    twice = {n for n in names if names.count(n) > 1}
    if twice:
        raise MarkerError(f"README.md: block(s) marked more than once: {', '.join(sorted(twice))}")
    return found


def _fenced(block: Block, body: str) -> str:
    """``body`` in ``block``'s fence, made longer than any fence inside it."""
    char = block.fence[0]
    inner = re.findall(rf"^[ \t]*({re.escape(char)}{{3,}})", body, re.MULTILINE)
    longest = max(map(len, inner), default=0)
    fence = block.fence if len(block.fence) > longest else char * (longest + 1)
    return f"{fence}{block.info}\n{body}\n{fence}\n"


def _agree(text: str, produced: Mapping[str, str]) -> list[Block]:
    found = blocks(text)
    missing = set(produced) - {b.name for b in found}
    if missing:
        raise MarkerError(f"README.md has no marker for block(s) {', '.join(sorted(missing))}")
    unknown = [b for b in found if b.name not in produced]
    if unknown:
        raise MarkerError(
            f"README.md line {unknown[0].line - 2}: no producer for block {unknown[0].name}"
        )
    return found


def _same(old: str, new: str) -> bool:
    return mask(old) == mask(new)


def render(text: str, produced: Mapping[str, str]) -> str:
    """``text`` with every marked block's body replaced by its run's output; a block that
    matches once masked keeps its text (no churn of timestamps and durations)."""
    out, at = [], 0
    for block in _agree(text, produced):
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
    """A unified diff from the README's block to ``new``, with README line numbers; lines that
    differ only in volatile parts count as equal (shown as the README has them)."""
    old_lines, new_lines = block.body.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(
        None, [mask(x) for x in old_lines], [mask(x) for x in new_lines], autojunk=False
    )
    out = [f"--- README.md  block {block.name}", f"+++ a real run  block {block.name}"]
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


def check(text: str, produced: Mapping[str, str]) -> str:
    """The diffs of every marked block of ``text`` that differs from its run's output (volatile
    parts masked); empty when all match."""
    return "\n".join(
        diff(block, produced[block.name])
        for block in _agree(text, produced)
        if not _same(block.body, produced[block.name])
    )


# --- the command ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m docs.outputs",
        description="Regenerate README.md's marked output blocks from real ci-eval runs.",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="change nothing; exit 1 with a diff of every block that drifted",
    )
    args = parser.parse_args(argv)
    try:
        blocks(README.read_text("utf-8"))  # a broken marker fails before the runs
        produced = produce()
        text = README.read_text("utf-8")  # read again: the runs take seconds
        if args.check:
            drift = check(text, produced)
            if drift:
                print(drift)
                print("README.md: output blocks drifted; run `python -m docs.outputs`")
                return 1
            print(f"README.md: {len(produced)} output blocks match their runs")
            return 0
        new = render(text, produced)
        changed = [b.name for b in blocks(text) if not _same(b.body, produced[b.name])]
        if new != text:
            README.write_text(new, "utf-8")
        print(f"README.md: {', '.join(changed) or 'no block'} regenerated")
        return 0
    except (MarkerError, RunError) as exc:
        print(f"docs.outputs: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
