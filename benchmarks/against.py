"""Every figure beside the previous release's (``run.py --against REV``): REV built once in a
venv of its own, both trees' benchmarks run in turns, their figures and rows side by side.

The parts here that decide what is printed are pure (parsing a figure, comparing runs, joining
two trees' rows) so that tests pin them; building and running are the I/O around them.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

WORSE = 1.05  # a figure this much worse than REV's (time, CPU or peak memory) is marked

# _measure.Sample's text, as every tree since the benchmarks began writes it:
# "12.70 s (median of 3, 12.1–13.0; cpu 13.10 s, peak 178 MB)", or without the spread
_SAMPLE = re.compile(
    r"(?P<wall>\d+(?:\.\d+)?) s \((?:median of \d+, [\d.]+–[\d.]+; )?"
    r"cpu (?P<cpu>\d+(?:\.\d+)?) s, peak (?P<peak>\d+(?:\.\d+)?) MB\)"
)


@dataclass(frozen=True)
class Measured:
    """One whole-process measurement: wall and CPU seconds, peak RSS in MB."""

    wall: float
    cpu: float
    peak: float


def measured(value: str) -> Measured | None:
    """The first whole-process sample in a figure's text, or None (a figure of another kind:
    a ratio, a count)."""
    match = _SAMPLE.search(value)
    if match is None:
        return None
    return Measured(float(match["wall"]), float(match["cpu"]), float(match["peak"]))


@dataclass(frozen=True)
class Compared:
    """One figure of both trees: ``ours`` this tree's runs, ``theirs`` REV's, in pair order."""

    name: str
    ours: tuple[str, ...]  # the figure's text, one per run
    theirs: tuple[str, ...]

    @property
    def only(self) -> str | None:
        """Which tree alone has the figure ('ours', 'theirs'), or None when both do."""
        if not self.theirs:
            return "ours"
        if not self.ours:
            return "theirs"
        return None

    def samples(self) -> tuple[list[Measured], list[Measured]] | None:
        ours = [m for m in map(measured, self.ours) if m is not None]
        theirs = [m for m in map(measured, self.theirs) if m is not None]
        if not ours or not theirs:
            return None
        return ours, theirs

    def ratios(self) -> dict[str, float] | None:
        """This tree's median over REV's, for wall time, CPU time and peak memory (> 1: worse)."""
        both = self.samples()
        if both is None:
            return None
        ours, theirs = both
        out = {}
        for what in ("wall", "cpu", "peak"):
            mine = statistics.median(getattr(m, what) for m in ours)
            base = statistics.median(getattr(m, what) for m in theirs)
            out[what] = mine / base if base else float("inf") if mine else 1.0
        return out

    def pair_range(self) -> tuple[float, float] | None:
        """The lowest and highest wall-time ratio of a pair (run i of each tree)."""
        both = self.samples()
        if both is None:
            return None
        pairs = [a.wall / b.wall for a, b in zip(*both, strict=False) if b.wall]
        return (min(pairs), max(pairs)) if pairs else None

    def worse(self) -> list[str]:
        """What is at least 5 % worse than REV's: 'time', 'CPU', 'memory'."""
        ratios = self.ratios() or {}
        names = {"wall": "time", "cpu": "CPU", "peak": "memory"}
        return [names[k] for k, r in ratios.items() if r >= WORSE]


def compare(
    ours: Sequence[Mapping[str, str]], theirs: Sequence[Mapping[str, str]]
) -> list[Compared]:
    """Each figure name of either tree's runs (a run: figure name -> its text), in the order
    they first appear (this tree's first)."""
    names = dict.fromkeys(name for run in [*ours, *theirs] for name in run)
    return [
        Compared(
            name,
            tuple(run[name] for run in ours if name in run),
            tuple(run[name] for run in theirs if name in run),
        )
        for name in names
    ]


def _short(sample: Measured) -> str:
    return f"{sample.wall:.2f} s, cpu {sample.cpu:.2f} s, {sample.peak:.0f} MB"


def _median_sample(samples: Sequence[Measured]) -> Measured:
    return Measured(
        statistics.median(m.wall for m in samples),
        statistics.median(m.cpu for m in samples),
        statistics.median(m.peak for m in samples),
    )


def comparison_table(rows: Iterable[Compared], ours: str, theirs: str) -> str:
    """The figures of both trees as a Markdown table: medians, ratios, pair range, mark."""
    lines = [
        f"| figure | {ours} | {theirs} | ratio: time · CPU · memory | pairs (time) | |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        if row.only is not None:
            has, lacks = (ours, theirs) if row.only == "ours" else (theirs, ours)
            lines.append(f"| {row.name} | | | | | only {has} has it: {lacks} does not |")
            continue
        both = row.samples()
        ratios, spread = row.ratios(), row.pair_range()
        if both is None or ratios is None:
            lines.append(
                f"| {row.name} | {row.ours[-1]} | {row.theirs[-1]} | | | not a timed figure |"
            )
            continue
        worse = row.worse()
        mark = f"**≥ 5 % worse** ({', '.join(worse)})" if worse else ""
        pairs = f"{spread[0]:.2f}–{spread[1]:.2f}" if spread else ""
        lines.append(
            f"| {row.name} | {_short(_median_sample(both[0]))} | {_short(_median_sample(both[1]))} "
            f"| {ratios['wall']:.2f} · {ratios['cpu']:.2f} · {ratios['peak']:.2f} "
            f"| {pairs} | {mark} |"
        )
    return "\n".join(lines)


# --- the statistical benchmarks' rows ---------------------------------------------------------


_LABELLED = re.compile(r"^[a-z_]+: ")  # bench_gate's "gate: ", bench_usage's "usage: " lines


def table_rows(output: str) -> tuple[list[str], dict[tuple[str, ...], list[str]]]:
    """A statistical benchmark's output split into its notes and its rows: Markdown table rows
    (``| condition | PR runs | ... |``) and aligned lines under a label (bench_gate's ``gate:``,
    bench_usage's ``usage:``; their columns apart by two spaces or more), each keyed by
    its first two cells, its header included (key ('',) + header cells)."""
    notes: list[str] = []
    rows: dict[tuple[str, ...], list[str]] = {}
    for line in output.splitlines():
        text = line.strip()
        if text.startswith("|"):
            cells = [c.strip() for c in text.strip("|").split("|")]
            if all(set(c) <= set("-: ") for c in cells):
                continue  # the separator
        elif _LABELLED.match(text):
            cells = re.split(r"\s{2,}", _LABELLED.sub("", text, count=1).strip())
        else:
            if text:
                notes.append(text)
            continue
        if len(cells) < 3:
            notes.append(text)
            continue
        rows[tuple(cells[:2])] = cells[2:]
    return notes, rows


def side_by_side(ours: str, theirs: str, ours_label: str, theirs_label: str) -> str:
    """Two trees' outputs of one statistical benchmark as one Markdown table, row by row (rows
    one tree lacks are said); the first row of each is taken as its header."""
    _, mine = table_rows(ours)
    _, base = table_rows(theirs)
    keys = list(dict.fromkeys([*mine, *base]))
    if not keys:
        return "(no rows in either output)"
    header, *body = keys
    first = list(header)
    lines = [
        f"| {first[0]} | {first[1]} | {ours_label} | {theirs_label} |",
        "|---|---|---|---|",
    ]
    for key in body:
        a = " · ".join(mine[key]) if key in mine else f"(not in {ours_label})"
        b = " · ".join(base[key]) if key in base else f"(not in {theirs_label})"
        lines.append(f"| {key[0]} | {key[1]} | {a} | {b} |")
    return "\n".join(lines)


# --- building REV and running a tree's benchmark ----------------------------------------------


class AgainstError(Exception):
    """REV cannot be built or a tree cannot be run: one line for the user."""


@dataclass(frozen=True)
class Tree:
    label: str  # as the tables name it
    root: Path  # the checkout: its benchmarks/ are run
    python: Path  # the interpreter whose ci-eval (and adk) the benchmarks measure
    _help: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def script(self, name: str) -> Path:
        stem = name if name.startswith("sim_") else f"bench_{name}"
        return self.root / "benchmarks" / f"{stem}.py"

    def options(self, name: str) -> str:
        """What ``bench_NAME.py --help`` says in this tree ('' when it has no usable --help)."""
        if name not in self._help:
            script = self.script(name)
            text = ""
            if script.exists():
                done = subprocess.run(
                    [str(self.python), str(script), "--help"],
                    cwd=self.root,
                    env=clean_env(),
                    capture_output=True,
                    text=True,
                    timeout=120,
                    check=False,
                )
                text = done.stdout if done.returncode == 0 else ""
            self._help[name] = text
        return self._help[name]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment a tree's benchmark runs in: nothing pointing at another tree's code."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return env | extra


def shared_options(
    trees: Sequence[Tree], name: str, wanted: Sequence[Sequence[str]]
) -> tuple[list[str], list[str]]:
    """The options of ``wanted`` (each a flag and its values) that every tree's benchmark
    takes, and a note for each that one tree lacks: both trees then run without it, so they
    run the same way."""
    given: list[str] = []
    notes: list[str] = []
    for flag, *values in wanted:
        lacking = [t.label for t in trees if flag not in t.options(name)]
        if len(lacking) == len(trees):
            continue  # an option of other benchmarks: nothing to say
        if lacking:
            notes.append(f"{name}: {', '.join(lacking)} has no {flag}; both trees ran without it")
        else:
            given += [flag, *values]
    return given, notes


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if done.returncode:
        raise AgainstError(done.stderr.strip().splitlines()[-1] if done.stderr else "git failed")
    return done.stdout.strip()


def resolve(root: Path, rev: str) -> str:
    """REV's full commit id, or AgainstError naming what to give."""
    try:
        return git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except AgainstError:
        raise AgainstError(
            f"--against {rev}: not a commit of this repository; give a tag or a commit "
            "(git log --oneline shows them)"
        ) from None


def build(root: Path, rev: str, cache: Path, say=print) -> Tree:
    """REV's tree and a venv of its own with it installed (editable, as this checkout is, with
    its test extras, every dependency pinned to this interpreter's versions so that only
    ci-eval's code differs), under ``cache``/COMMIT; built once per commit."""
    commit = resolve(root, rev)
    folder = cache / commit
    tree = Tree(label=commit[:7], root=folder / "tree", python=folder / "venv" / "bin" / "python")
    if (folder / "ready").exists():
        say(f"{rev} ({commit[:7]}): built in {folder}")
        return tree
    say(f"{rev} ({commit[:7]}): building it in {folder} (once per commit; a few minutes)")
    shutil.rmtree(folder, ignore_errors=True)
    tree.root.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(root), "archive", commit], capture_output=True)
    if archive.returncode:
        raise AgainstError(f"git archive {commit[:7]} failed: {archive.stderr.decode()[-300:]}")
    subprocess.run(["tar", "-x", "-C", str(tree.root)], input=archive.stdout, check=True)
    log = folder / "build.log"
    pins = folder / "pins.txt"
    frozen = subprocess.run(
        [sys.executable, "-m", "pip", "freeze", "--exclude", "ci-eval", "--exclude-editable"],
        capture_output=True,
        text=True,
    )
    pins.write_text(frozen.stdout if frozen.returncode == 0 else "")
    base = getattr(sys, "_base_executable", sys.executable)
    steps = [
        [base, "-m", "venv", str(folder / "venv")],
        [
            str(tree.python),
            "-m",
            "pip",
            "install",
            "-q",
            "-c",
            str(pins),
            "-e",
            f"{tree.root}[test]",
        ],
    ]
    with log.open("w") as out:
        for step in steps:
            if subprocess.run(step, stdout=out, stderr=subprocess.STDOUT).returncode:
                raise AgainstError(f"building {rev} failed at `{' '.join(step[:4])} …`: see {log}")
    (folder / "ready").write_text(commit + "\n")
    return tree


def this_tree(root: Path) -> Tree:
    """The checkout run.py is in, measured with the interpreter running it."""
    try:
        head = git(root, "rev-parse", "--short", "HEAD")
        dirty = bool(git(root, "status", "--porcelain", "--untracked-files=no"))
    except AgainstError:
        head, dirty = "?", False
    return Tree(
        label=f"this tree ({head}{' + changes' if dirty else ''})",
        root=root,
        python=Path(sys.executable),
    )


# --- the command --------------------------------------------------------------------------------


def _run(
    tree: Tree, name: str, options: Sequence[str], folder: Path, tag: str
) -> tuple[int, str, dict[str, str]]:
    """One run of a tree's benchmark: its exit code, its output, its figures (name -> text)."""
    import json

    record = folder / f"{tag}.jsonl"
    record.touch()
    done = subprocess.run(
        [str(tree.python), str(tree.script(name)), *options],
        cwd=tree.root,
        env=clean_env(CI_EVAL_BENCH_RECORD=str(record)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    figures = {}
    for line in record.read_text().splitlines():
        if line:
            figure = json.loads(line)
            figures[figure["name"]] = figure["value"]
    return done.returncode, done.stdout, figures


def _failed(tree: Tree, name: str, code: int, output: str) -> str:
    tail = "\n    ".join(output.strip().splitlines()[-5:])
    return f"{name} on {tree.label} exited {code}; its last lines:\n    {tail}"


def run_against(args, names: Sequence[str], statistical: Sequence[str], say=print) -> int:
    """``run.py --against REV``: returns 0, 1 when a benchmark failed on a tree, 2 for a REV
    that cannot be built."""
    import tempfile
    import time

    root = Path(__file__).resolve().parent.parent
    try:
        ours = this_tree(root)
        theirs = build(root, args.against, args.cache, say)
    except AgainstError as error:
        print(f"run.py: {error}", file=sys.stderr)
        return 2
    trees = (ours, theirs)
    start = os.getloadavg()[0]
    say(
        f"{ours.label} against {theirs.label}: {', '.join(names)}; {args.pairs} pairs; "
        f"load average {start:.2f}"
    )
    sections: list[str] = []
    notes: list[str] = []
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in names:
            missing = [t.label for t in trees if not t.script(name).exists()]
            if missing:
                notes.append(f"{name}: {', '.join(missing)} has no such benchmark")
            present = [t for t in trees if t.script(name).exists()]
            if name in statistical:
                wanted = [("--prs", str(args.prs))] if args.prs else []
                options, said = shared_options(present, name, wanted)
                notes += said
                outputs = {}
                for tree in present:
                    began = time.perf_counter()
                    code, output, _ = _run(tree, name, options, folder, f"{tree.label}-{name}")
                    say(f"{name} · {tree.label}: exit {code}, {time.perf_counter() - began:.0f} s")
                    if code:
                        failed = 1
                        notes.append(_failed(tree, name, code, output))
                    outputs[tree.label] = output
                sections.append(
                    f"### {name} (one run per tree, same seeds)\n\n"
                    + side_by_side(
                        outputs.get(ours.label, ""),
                        outputs.get(theirs.label, ""),
                        ours.label,
                        theirs.label,
                    )
                )
                continue
            wanted = [("--repeat", "1"), ("--no-where",)]
            if getattr(args, "big", None) is not None:
                wanted.append(("--big", str(args.big)))
            options, said = shared_options(present, name, wanted)
            notes += said
            runs: dict[str, list[dict[str, str]]] = {t.label: [] for t in trees}
            for pair in range(args.pairs):
                for tree in present:
                    began = time.perf_counter()
                    code, output, figures = _run(
                        tree, name, options, folder, f"{tree.label}-{name}-{pair}"
                    )
                    say(
                        f"[pair {pair + 1}/{args.pairs}] {name} · {tree.label}: "
                        f"{time.perf_counter() - began:.1f} s"
                    )
                    if code:
                        failed = 1
                        notes.append(_failed(tree, name, code, output))
                    runs[tree.label].append(figures)
            rows = compare(runs[ours.label], runs[theirs.label])
            sections.append(
                f"### {name} ({args.pairs} pairs, in turns)\n\n"
                + comparison_table(rows, ours.label, theirs.label)
            )
    end = os.getloadavg()[0]
    from run import machine

    head = (
        f"Machine: {machine()}; load average {start:.2f} at the start, {end:.2f} at the end. "
        f"Ratios are {ours.label} over {theirs.label} (above 1: slower or larger)."
    )
    text = "\n\n".join([head, *sections])
    if notes:
        text += "\n\nNotes:\n" + "\n".join(f"- {n}" for n in notes)
    print("\n" + text)
    if args.record:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(text + "\n", encoding="utf-8")
    return failed
