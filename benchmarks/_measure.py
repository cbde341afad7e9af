"""Whole-process measurements for the benchmarks: wall time, CPU time and peak RSS of a command
(``os.wait4``'s rusage for that child and its descendants), the median of N runs, with the load
average; and :func:`figure`, which prints a figure beside its reference and records it for the
table ``run.py`` prints at the end."""

from __future__ import annotations

import argparse
import compileall
import contextlib
import gc
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent  # ci-eval and adk of the interpreter running the benchmark
RECORD_ENV = "CI_EVAL_BENCH_RECORD"  # run.py's file of figures, one JSON object a line

# What is measured is ci-eval as installed: pip compiles every module to bytecode at install
# time (as it did google-adk's), but this editable checkout's modules are compiled from source
# on every start when PYTHONDONTWRITEBYTECODE is set (0.5-1 s of a run on this machine).
# So the sources are compiled once here, and no measured command is told not to use bytecode.
compileall.compile_dir(ROOT / "ci_eval", quiet=1)


@dataclass
class Sample:
    wall: float  # seconds, the median of the repetitions
    cpu: float  # user + system seconds of the median repetition
    rss_mb: float  # peak resident set size, the largest over the repetitions
    code: int
    walls: list[float] = field(default_factory=list)  # every repetition, in order

    def __str__(self) -> str:
        spread = (
            f"median of {len(self.walls)}, {min(self.walls):.2f}–{max(self.walls):.2f}; "
            if len(self.walls) > 1
            else ""
        )
        return f"{self.wall:.2f} s ({spread}cpu {self.cpu:.2f} s, peak {self.rss_mb:.0f} MB)"


def _once(
    cmd: Sequence[str], cwd: Path, env: Mapping[str, str] | None, ok: Sequence[int]
) -> tuple[float, float, float, int]:
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(cmd),
        cwd=cwd,
        env={
            k: v
            for k, v in (os.environ if env is None else env).items()
            if k != "PYTHONDONTWRITEBYTECODE"
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        sys.exit(
            f"benchmark command failed ({code}): {' '.join(cmd)}\n"
            + err.decode(errors="replace")[-2000:]
        )
    # ru_maxrss is KiB on Linux. A child's counts what it shared with this process before it
    # ran the command: a benchmark that holds much (its inputs, say) would report its own size
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if own > 100 * 1024 and usage.ru_maxrss <= own * 1.05:
        print(
            f"warning: the peak RSS of {cmd[0]} may be the benchmark's own ({own / 1024:.0f} MB)",
            file=sys.stderr,
        )
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code


def _summary(runs: list[tuple[float, float, float, int]]) -> Sample:
    ordered = sorted(runs)
    wall, cpu, _, code = ordered[(len(ordered) - 1) // 2]  # the lower median: a real run
    return Sample(wall, cpu, max(r[2] for r in runs), code, [r[0] for r in runs])


def summarize(samples: Sequence[Sample]) -> Sample:
    """One sample of several (each of one run or more): the median run, the largest peak."""
    return _summary([(w, s.cpu, s.rss_mb, s.code) for s in samples for w in s.walls])


def interleaved(
    cmds: Sequence[Sequence[str]],
    repeat: int = 3,
    cwd: Path = ROOT,
    env: Mapping[str, str] | None = None,
    ok: Sequence[int] = (0, 1),
) -> list[Sample]:
    """Run the commands in turn, ``repeat`` rounds (A B A B ...), so a figure and its
    reference meet the same load; one :class:`Sample` per command. Output is discarded; an exit
    code outside ``ok`` stops the benchmark with its stderr."""
    runs: list[list[tuple[float, float, float, int]]] = [[] for _ in cmds]
    for _ in range(repeat):
        for i, cmd in enumerate(cmds):
            runs[i].append(_once(cmd, cwd, env, ok))
    return [_summary(r) for r in runs]


def run(
    cmd: Sequence[str],
    repeat: int = 3,
    cwd: Path = ROOT,
    env: Mapping[str, str] | None = None,
    ok: Sequence[int] = (0, 1),
) -> Sample:
    """Run ``cmd`` ``repeat`` times: the median run's wall and CPU time, the largest peak RSS."""
    return interleaved([cmd], repeat, cwd, env, ok)[0]


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} on {os.cpu_count()} CPUs"


def verdict(value: float, target: float) -> str:
    return "ok" if value <= target else "MISSED"


def figure(
    name: str, value: str, reference: str, target: str, met: bool | None, command: str
) -> None:
    """Print one figure beside its reference and target, and record it for run.py's table.
    ``met`` None: no verdict (nothing to compare with)."""
    mark = "" if met is None else (": ok" if met else ": MISSED")
    print(f"{name}: {value} | reference: {reference} | target {target}{mark} [{load()}]")
    record = os.environ.get(RECORD_ENV)
    if record:
        with open(record, "a", encoding="utf-8") as out:
            out.write(
                json.dumps(
                    {
                        "name": name,
                        "value": value,
                        "reference": reference,
                        "target": target,
                        "met": met,
                        "command": command,
                        "load": os.getloadavg()[0],
                    }
                )
                + "\n"
            )


# --- a step timed inside fresh processes, against ci_eval at another revision -------------------


def cpu_s() -> float:
    """This process's user + system CPU seconds."""
    times = os.times()
    return times.user + times.system


def rss_mb(key: str = "VmRSS") -> float:
    """This process's resident set now (``VmHWM``: its peak), in MB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    return 0.0


def reference_trees(
    rev: str | None, folder: Path, paths: Sequence[str] = ("ci_eval",)
) -> list[Path | None]:
    """``[None]`` (this tree), plus ``paths`` as they were at git revision ``rev`` exported
    under ``folder``/ref when one is given: run with that on ``PYTHONPATH``."""
    trees: list[Path | None] = [None]
    if rev:
        ref = folder / "ref"
        ref.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", rev, *paths], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(ref)], input=archive, check=True)
        trees.append(ref)
    return trees


def child_runs(
    script: str,
    child_args: Sequence[str],
    repeat: int,
    trees: Sequence[Path | None],
    env: Mapping[str, str],
    by: str = "wall",
    out: Path | None = None,
) -> list[dict[str, float]]:
    """``script --child *child_args`` in a fresh process per tree (None: this one), in turns,
    ``repeat`` times; each prints its figures as one JSON object on its last line. Per tree: the
    median run by ``by``, its ``peak`` the largest of the runs' (when they have one), ``n``
    the runs. With ``out``, each tree's child gets its own folder ``out``N as a last argument."""
    runs: list[list[dict[str, float]]] = [[] for _ in trees]
    for _ in range(repeat):
        for i, tree in enumerate(trees):
            run_env = dict(env)
            if tree is not None:
                run_env["PYTHONPATH"] = str(tree)
            extra: list[str] = []
            if out is not None:
                (folder := out.with_name(f"{out.name}{i}")).mkdir(exist_ok=True)
                extra = [str(folder)]
            done = subprocess.run(
                [sys.executable, script, "--child", *child_args, *extra],
                capture_output=True,
                text=True,
                check=True,
                env=run_env,
            )
            runs[i].append(json.loads(done.stdout.splitlines()[-1]))
    summaries = []
    for tree_runs in runs:
        median = sorted(r[by] for r in tree_runs)[(len(tree_runs) - 1) // 2]  # median_low
        chosen = next(r for r in tree_runs if r[by] == median)
        if all("peak" in r for r in tree_runs):
            chosen = chosen | {"peak": max(r["peak"] for r in tree_runs)}
        summaries.append(chosen | {"n": repeat})
    return summaries


def replayed_results(folder: Path, cases: int, results: Path, tree: Path | None = None) -> Path:
    """The results file of ``ci-eval run --agent replay`` on ``bench_scale``'s inputs of
    ``cases`` one-turn cases, written under ``folder`` (the gate fails: a third of the answers
    are off, as meant) by this tree's ci_eval, or ``tree``'s (a results file is read by the
    ci-eval that writes its schema)."""
    import bench_scale

    evalset, recorded = bench_scale.write_inputs(folder, cases)
    env = dict(bench_scale.ENV)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    subprocess.run(
        [
            sys.executable, "-m", "ci_eval", "run", str(evalset), "--agent", "replay",
            "--replay", str(recorded), "--results", str(results),
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        check=False,
    )  # fmt: skip
    assert results.exists(), "the run wrote no results file"
    return results


def simulated_prs(doc: str | None, default: int) -> int:
    """A statistical benchmark's PRS: positional as before, or as --prs (run.py's name for it
    in every statistical benchmark)."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("prs", nargs="?", type=int, help=f"simulated PRs a row (default {default})")
    parser.add_argument("--prs", dest="prs_option", type=int, metavar="PRS")
    args = parser.parse_args()
    return args.prs_option or args.prs or default


def step_arguments(child: tuple[str, str]) -> argparse.Namespace:
    """The options of a per-step benchmark: --cases, --repeat, --against REV, and the hidden
    --child (``child`` names its two values) with which it starts its own child processes."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", metavar="REV", help="also time ci_eval at this revision")
    # its two values, then the folder child_runs(out=...) gives it, when it does
    parser.add_argument("--child", nargs="+", metavar=child[0], help=argparse.SUPPRESS)
    return parser.parse_args()


@contextlib.contextmanager
def timed() -> Iterator[dict[str, float]]:
    """Time what runs inside, in this process (after a collection): its wall and CPU time,
    the MB it left held, and the process's peak; the figures fill the dict it gives."""
    gc.collect()
    figures: dict[str, float] = {}
    before, cpu, wall = rss_mb(), cpu_s(), time.perf_counter()
    yield figures
    wall, cpu = time.perf_counter() - wall, cpu_s() - cpu
    figures.update(wall=wall, cpu=cpu, held=rss_mb() - before, peak=rss_mb("VmHWM"))
