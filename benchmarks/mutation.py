"""How much of the gate its tests hold: a seeded sample of cosmic-ray's mutants of
``ci_eval/gate/``, each run against ``tests/gate``, killed or survived.

    python benchmarks/run.py mutation              # 300 mutants, seed 48, one worker a core
    python benchmarks/mutation.py [--sample N] [--seed S] [--workers W] [--keep DIR]

cosmic-ray (``pip install -e '.[mutation]'``) makes every mutant of the modules below: operators
swapped, comparisons turned, constants moved by one, conditions dropped, loops skipped. This
takes a sample of them (the same mutants for the same sources and seed), shares it among
workers, each a copy of the working tree (a git repository of its own, as a clone is) with its
own cosmic-ray session, checks that the tests pass on it unmutated, and runs
``cosmic-ray exec`` in each; a mutant is killed when a test fails or times out. The gate's own
tests run first and stop at the first failure, so a killed mutant costs seconds and a survivor
the whole of ``tests/gate`` (about a minute). At the end: killed / survived / incompetent, and
every survivor's place and change, which ``docs/benchmarks.md`` explains. Never in ``.ci/run``:
about an hour on 2 cores.

``--again DIR`` takes a finished run's sessions (its ``--keep`` folder) and runs only the
mutants that survived it, against today's tests: adding tests can only kill more, so its kills
stand. A mutant is found again by its module, operator, function, columns and line text in
``--of REV``'s sources; one whose line has changed since counts as a survivor.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from _measure import figure  # noqa: E402

MODULES = (
    "compare",
    "verdict",
    "confirm",
    "noise",
    "stats",
    "history",
    "case_judgement",
)
# fastest and closest first: with -x a killed mutant stops at its first failing test; every
# other file of tests/gate runs after these (a file added there is never left out)
FIRST = (
    "test_gate_boundaries.py",
    "test_noise_estimates.py",
    "test_stats_exact.py",
    "test_history_rules.py",
    "test_gate.py",
    "test_verdict.py",
    "test_correlated_noise.py",
    "test_own_verdicts.py",
    "test_usage.py",
    "test_usage_unreported.py",
    "test_baseline_format.py",
)
LAST = ("test_goalposts.py",)  # the slowest: CLI runs in git repositories
TESTS = (
    *FIRST,
    *sorted(
        p.name
        for p in (ROOT / "tests/gate").glob("test_*.py")
        if p.name not in FIRST and p.name not in LAST
    ),
    *LAST,
)
# beside this interpreter (a venv's bin) or on PATH
COSMIC_RAY = shutil.which(
    "cosmic-ray", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
)
TIMEOUT_S = 600  # a survivor under load takes about 90 s; a mutant that loops is killed here


@dataclass(frozen=True)
class Mutant:
    module: str
    line: int
    column: int
    operator: str
    occurrence: int
    definition: str
    change: str  # the mutated line, "-old / +new"

    def where(self) -> str:
        return f"{self.module}:{self.line}:{self.column} in {self.definition or 'module'}"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=300, help="mutants to run (default 300)")
    parser.add_argument("--seed", type=int, default=48, help="which mutants (default 48)")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 2, help="tree copies run at once"
    )
    parser.add_argument("--keep", type=Path, help="keep the copies and sessions in this folder")
    parser.add_argument("--modules", nargs="+", default=list(MODULES), help="of ci_eval/gate")
    parser.add_argument(
        "--tests",
        nargs="+",
        default=list(TESTS),
        metavar="FILE",
        help="of tests/gate (default: all of them); fewer is a quick survey of where tests "
        "are thin, never the figure",
    )
    parser.add_argument(
        "--again",
        type=Path,
        metavar="DIR",
        help="a finished run's sessions (its --keep folder, or worker*.sqlite copied out): "
        "run only the mutants that survived it, against today's tests; its kills stand",
    )
    parser.add_argument(
        "--of",
        default="HEAD",
        metavar="REV",
        help="with --again: the commit whose ci_eval/gate that run mutated [default: HEAD]",
    )
    args = parser.parse_args(argv)
    if args.sample < 1 or args.workers < 1:
        parser.error("--sample and --workers are at least 1")
    unknown = [m for m in args.modules if not (ROOT / "ci_eval/gate" / f"{m}.py").is_file()]
    missing = [t for t in args.tests if not (ROOT / "tests/gate" / t).is_file()]
    if missing:
        parser.error(f"no tests/gate/{missing[0]}")
    if unknown:
        parser.error(f"no ci_eval/gate/{unknown[0]}.py; give modules of {', '.join(MODULES)}")
    return args


def copy_tree(dest: Path) -> None:
    """The working tree as git sees it (tracked and untracked, not ignored), with ../shared."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "-co", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in filter(None, listed):
        rel = raw.decode("utf-8", "surrogateescape")
        source = ROOT / rel
        if source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    shared = ROOT.parent / "shared"
    if shared.is_dir():
        (dest.parent / "shared").symlink_to(shared)
    # a repository of its own, as a clone is: the gate's tests read main's history through git
    git = ["git", "-c", "user.name=mutation", "-c", "user.email=mutation@localhost"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the tree mutated"]):
        subprocess.run([*git, *step], cwd=dest, check=True, capture_output=True)


def config(modules: list[str], tests_run: list[str]) -> str:
    tests = " ".join(f"tests/gate/{t}" for t in tests_run)
    paths = ", ".join(f'"ci_eval/gate/{m}.py"' for m in modules)
    return (
        "[cosmic-ray]\n"
        f"module-path = [{paths}]\n"
        f"timeout = {TIMEOUT_S}.0\n"
        "excluded-modules = []\n"
        f'test-command = "{sys.executable} -m pytest -x -q -n 0 -p no:cacheprovider {tests}"\n'
        '[cosmic-ray.distributor]\nname = "local"\n'
    )


def key(item: object) -> tuple[str, str, int]:
    spec = item.mutations[0]  # type: ignore[attr-defined]
    return (str(spec.module_path), spec.operator_name, spec.occurrence)


def prepare(tree: Path, modules: list[str], tests_run: list[str]) -> None:
    (tree / "mutation.toml").write_text(config(modules, tests_run))
    subprocess.run(
        [str(COSMIC_RAY), "init", "mutation.toml", "session.sqlite"], cwd=tree, check=True
    )


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where a module's type annotations are ((line, column) start and end): with
    ``from __future__ import annotations`` they are never evaluated, so a mutant of one (``str
    | None`` → ``str - None``) is equivalent by construction. None for a module without it."""
    import ast

    tree = ast.parse(source)
    if not any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(a.name == "annotations" for a in node.names)
        for node in tree.body
    ):
        return []
    spans = []
    for node in ast.walk(tree):
        found: list[ast.expr | None] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
            every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
            found = [a.annotation for a in every] + [node.returns]
        elif isinstance(node, ast.AnnAssign):
            found = [node.annotation]
        for expr in found:
            if expr is not None:
                spans.append(
                    ((expr.lineno, expr.col_offset), (expr.end_lineno, expr.end_col_offset))
                )
    return spans  # type: ignore[return-value]


def in_annotation(item: object, spans: dict[str, list]) -> bool:
    spec = item.mutations[0]  # type: ignore[attr-defined]
    start, end = tuple(spec.start_pos), tuple(spec.end_pos)
    return any(a <= start and end <= b for a, b in spans.get(str(spec.module_path), []))


def sample_keys(tree: Path, size: int, seed: int) -> list[tuple[str, str, int]]:
    """The seeded sample, of the mutants of code that runs: those of an annotation are left
    out of the population (never evaluated: equivalent by construction), and counted."""
    from cosmic_ray.work_db import WorkDB, use_db

    with use_db(str(tree / "session.sqlite"), WorkDB.Mode.open) as db:
        items = list(db.work_items)
    modules = {str(item.mutations[0].module_path) for item in items}
    spans = {m: annotation_spans((tree / m).read_text()) for m in modules}
    every = sorted(key(item) for item in items if not in_annotation(item, spans))
    print(
        f"cosmic-ray made {len(items)} mutants of {len(modules)} modules; "
        f"{len(items) - len(every)} of type annotations left out (never evaluated)"
    )
    return sorted(random.Random(seed).sample(every, min(size, len(every))))


def keep_only(tree: Path, wanted: set[tuple[str, str, int]]) -> None:
    """Mark every other mutant of this tree's session skipped, so ``exec`` runs only these."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    with use_db(str(tree / "session.sqlite"), WorkDB.Mode.open) as db:
        others = [item.job_id for item in db.work_items if key(item) not in wanted]
        db.set_multiple_results(
            others, WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output="not in the sample")
        )


def outcomes(tree: Path) -> list[tuple[Mutant, str]]:
    """(mutant, killed | survived | incompetent | not run) for each sampled mutant of a tree."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome

    found: list[tuple[Mutant, str]] = []
    with use_db(str(tree / "session.sqlite"), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            spec = item.mutations[0]
            changed = [
                line
                for line in (result.diff or "").splitlines()
                if line[:1] in "+-" and not line.startswith(("+++", "---"))
            ]
            mutant = Mutant(
                module=str(spec.module_path).removeprefix("ci_eval/"),
                line=spec.start_pos[0],
                column=spec.start_pos[1],
                operator=spec.operator_name.removeprefix("core/"),
                occurrence=spec.occurrence,
                definition=spec.definition_name or "",
                change=" / ".join(" ".join(line.split()) for line in changed),
            )
            if result.worker_outcome != WorkerOutcome.NORMAL:
                found.append((mutant, f"not run ({result.worker_outcome.value})"))
            else:
                found.append((mutant, result.test_outcome.value))
    return found


Place = tuple[str, str, str, int, int, str]  # module, operator, function, columns, source line


def _place(spec: object, line_of: dict[str, list[str]]) -> Place:
    """A mutant by what it changes rather than by its number, which moves with any edit of
    its module: the module, operator, function, columns and the text of its line."""
    row, col = spec.start_pos  # type: ignore[attr-defined]
    module = str(spec.module_path)  # type: ignore[attr-defined]
    text = line_of[module][row - 1].strip() if row - 1 < len(line_of[module]) else ""
    return (module, spec.operator_name, spec.definition_name or "", col, spec.end_pos[1], text)  # type: ignore[attr-defined]


def _lines(modules: list[str], rev: str | None) -> dict[str, list[str]]:
    out = {}
    for m in modules:
        path = f"ci_eval/gate/{m}.py"
        if rev is None:
            text = (ROOT / path).read_text()
        else:
            text = subprocess.run(
                ["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True
            ).stdout
        out[path] = text.splitlines()
    return out


def earlier(folder: Path, modules: list[str], rev: str) -> tuple[list[Place], list[Place]]:
    """(killed, the rest) of a finished run's sampled mutants, by place in ``rev``'s sources."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    line_of = _lines(modules, rev)
    killed, rest = [], []
    sessions = sorted(folder.glob("worker*.sqlite")) + sorted(
        folder.glob("worker*/tree/session.sqlite")
    )
    for session in sessions:
        with use_db(str(session), WorkDB.Mode.open) as db:
            for item, result in db.completed_work_items:
                if result.worker_outcome == WorkerOutcome.SKIPPED:
                    continue
                place = _place(item.mutations[0], line_of)
                dead = result.worker_outcome == WorkerOutcome.NORMAL and result.test_outcome in (
                    TestOutcome.KILLED,
                    TestOutcome.INCOMPETENT,
                )
                (killed if dead else rest).append(place)
    return killed, rest


def places_now(tree: Path, modules: list[str]) -> dict[Place, tuple[str, str, int]]:
    from cosmic_ray.work_db import WorkDB, use_db

    line_of = _lines(modules, None)
    with use_db(str(tree / "session.sqlite"), WorkDB.Mode.open) as db:
        return {_place(item.mutations[0], line_of): key(item) for item in db.work_items}


def done(trees: list[Path]) -> int:
    import sqlite3

    total = 0
    for tree in trees:
        with sqlite3.connect(f"file:{tree / 'session.sqlite'}?mode=ro", uri=True) as db:
            total += db.execute(
                "select count(*) from work_results where worker_outcome != 'SKIPPED'"
            ).fetchone()[0]
    return total


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if COSMIC_RAY is None:
        print("mutation: cosmic-ray is not installed; run: pip install -e '.[mutation]'")
        return 2
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ci-eval-mutation-") as tmp:
        base = args.keep or Path(tmp)
        trees = [base / f"worker{i}" / "tree" for i in range(args.workers)]
        for tree in trees:
            tree.mkdir(parents=True)
            copy_tree(tree)
            prepare(tree, args.modules, args.tests)
        # the tests pass on every copy unmutated, or no kill would mean anything
        baselines = [
            subprocess.Popen(
                [str(COSMIC_RAY), "baseline", "--session-file", "baseline.sqlite", "mutation.toml"],
                cwd=tree,
                env={**os.environ, "PYTHONPATH": str(tree)},
                stdout=(tree / "baseline.log").open("w"),
                stderr=subprocess.STDOUT,
            )
            for tree in trees
        ]
        if any(p.wait() for p in baselines):
            print(f"mutation: tests/gate fails unmutated; see {trees[0] / 'baseline.log'}")
            return 3
        killed_before: list[Place] = []
        lost: list[Place] = []  # survivors of the earlier run whose line has changed since
        if args.again:
            killed_before, rest = earlier(args.again, args.modules, args.of)
            now = places_now(trees[0], args.modules)
            chosen = sorted(now[p] for p in rest if p in now)
            lost = [p for p in rest if p not in now]
            print(
                f"{args.again}: {len(killed_before)} killed there, {len(rest)} to run again"
                + (f" ({len(lost)} on lines changed since, counted as survivors)" if lost else "")
            )
        else:
            chosen = sample_keys(trees[0], args.sample, args.seed)
        for i, tree in enumerate(trees):
            keep_only(tree, set(chosen[i :: args.workers]))
        print(f"running {len(chosen)} mutants (seed {args.seed}) on {args.workers} workers")
        procs = [
            subprocess.Popen(
                [str(COSMIC_RAY), "exec", "mutation.toml", "session.sqlite"],
                cwd=tree,
                env={**os.environ, "PYTHONPATH": str(tree)},  # the copy, not the editable one
                stdout=subprocess.DEVNULL,
                stderr=(tree / "exec.log").open("w"),
            )
            for tree in trees
        ]
        while any(p.poll() is None for p in procs):
            time.sleep(30)
            print(
                f"  {done(trees)}/{len(chosen)} mutants run, "
                f"{(time.monotonic() - started) / 60:.1f} min",
                flush=True,
            )
        failed = [t for t, p in zip(trees, procs, strict=True) if p.returncode]
        if failed:
            print(f"mutation: cosmic-ray exec failed; see {failed[0] / 'exec.log'}")
            return 3
        found = [pair for tree in trees for pair in outcomes(tree)]
    minutes = (time.monotonic() - started) / 60
    counts = {o: sum(1 for _, got in found if got == o) for o in ("killed", "incompetent")}
    counts["killed"] += len(killed_before)
    total = len(found) + len(killed_before) + len(lost)
    # a mutant not run (its worker failed) counts as surviving: nothing showed it dead
    alive = total - counts["killed"] - counts["incompetent"]
    score = 100 * (total - alive) / max(1, total)
    print(
        f"\n{total} mutants of ci_eval/gate ({', '.join(args.modules)}): "
        f"{counts['killed']} killed, {counts['incompetent']} incompetent, {alive} survived or "
        f"not run; {score:.1f} % killed, in {minutes:.0f} min\n"
    )
    for place in lost:
        print(f"survived (its line changed since {args.of}): {place[0]} {place[2]} {place[5]}")
    survivors = sorted(
        (m for m, got in found if got not in ("killed", "incompetent")), key=lambda m: m.where()
    )
    for mutant in survivors:
        print(f"survived: {mutant.where()} [{mutant.operator}] {mutant.change}")
    if args.tests != list(TESTS):
        print("a survey with some of tests/gate: no figure")
        return 0
    figure(
        f"mutants of ci_eval/gate killed by tests/gate ({total}, seed {args.seed})",
        f"{score:.1f} % ({alive} survived)",
        "—",
        "≥ 90 %",
        score >= 90,
        "python benchmarks/run.py mutation",
    )
    return 0 if score >= 90 else 1


if __name__ == "__main__":
    sys.exit(main())
