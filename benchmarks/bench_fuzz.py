"""Loader fuzzing: mutated real files through ``validate``.

10,000 files (``--n``) made from ../shared/corpus by seeded mutations — bytes flipped, inserted,
cut; JSON nodes replaced by huge integers, deep nesting, lone surrogates, long ids, wrong types;
keys dropped — each in its own folder under its original name (so sidecar lookup and dialect
sniffing run as in a repository). Each is loaded in-process as ``validate`` does, in a worker
thread with a per-file time limit (a hang is counted, not waited for). Then the real CLI
validates the whole tree in one process.

Then the same for replayed files (``--replay-n``, default 2,000): mutated result files of the
corpus and of the repository's tests (ADK, trpc-agent-go, adk-rs reports, ci-eval results,
OTLP traces) loaded as ``--agent replay`` loads them and every recording opened — a file's
error or a case's unreadable recording is fine, any other exception is an internal error — and
``ci-eval init``'s reading of every 10th mutated folder (find the project, render both files).

Prints: files, valid, invalid, internal errors (any exception escaping the loader, or caught
only by its last-resort handler), hangs,
messages without the file, messages on a parsed JSON document without a JSON path, and
non-UTF-8 messages. All but the first three must be 0.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ci_eval.errors import InputError, ValidationFailed  # noqa: E402
from ci_eval.load.discover import discover  # noqa: E402
from ci_eval.load.evalsets import Failed, load_all  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
PER_FILE_TIMEOUT = 10.0

HOSTILE_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    1.5,
    1e308,
    "",
    "x" * 300,
    "y" * 5000,
    "a/b",
    "../../etc/passwd",
    "CON",
    "\x00nul",
    "Sunny \ud83d",
    "\udc00\ud800",
    [],
    {},
    [[]],
    {"": None},
    {"parts": "not a list"},
]


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _nodes(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _nodes(v, (*path, i))
    return out


def _set(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    node = root
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return root


def _structural(data: Any, rng: random.Random) -> str:
    data = copy.deepcopy(data)
    nodes = _nodes(data)
    kind = rng.randrange(6)
    path = rng.choice(nodes)
    if kind == 0:  # a hostile value anywhere
        data = _set(data, path, copy.deepcopy(rng.choice(HOSTILE_VALUES)))
    elif kind == 1:  # drop a key
        keyed = [p for p in nodes if p and isinstance(p[-1], str)]
        if keyed:
            p = rng.choice(keyed)
            parent = data
            for key in p[:-1]:
                parent = parent[key]
            del parent[p[-1]]
    elif kind == 2:  # a long id
        keyed = [
            p
            for p in nodes
            if p and p[-1] in ("eval_set_id", "eval_id", "evalSetId", "evalId", "name", "id")
        ]
        data = _set(data, rng.choice(keyed) if keyed else path, "i" * rng.choice((244, 256, 4096)))
    elif kind == 3:  # deep nesting
        deep: Any = "leaf"
        for _ in range(rng.choice((50, 200, 400))):
            deep = [deep] if rng.random() < 0.5 else {"k": deep}
        data = _set(data, path, deep)
    elif kind == 4:  # duplicate a list item (duplicate ids)
        lists = [p for p in nodes if isinstance(_get(data, p), list) and _get(data, p)]
        if lists:
            items = _get(data, rng.choice(lists))
            items.append(copy.deepcopy(items[0]))
    else:  # swap a container for a scalar or the other kind
        data = _set(data, path, [] if isinstance(_get(data, path), dict) else {"x": 1})
    text = json.dumps(data, ensure_ascii=rng.random() < 0.5, indent=rng.choice((None, 2)))
    return text


def _get(root: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        root = root[key]
    return root


def _textual(text: str, rng: random.Random) -> str:
    kind = rng.randrange(5)
    at = rng.randrange(len(text) + 1)
    if kind == 0:  # a huge integer literal where a number may go
        return text[:at] + "9" * rng.choice((4301, 5000, 20000)) + text[at:]
    if kind == 1:  # lone surrogate escapes inside a string
        quote = text.find('"', at)
        if quote < 0:
            quote = text.find('"')
        return text[: quote + 1] + "\\ud83d\\udfff" + text[quote + 1 :]
    if kind == 2:  # nesting deeper than any parser stack
        depth = rng.choice((1000, 100_000))
        return text[:at] + "[" * depth + "]" * depth + text[at:]
    if kind == 3:  # truncation
        return text[:at]
    return (
        text[:at] + rng.choice(("NaN", "Infinity", "-", "}", "]", ",", ":", '"', "\\")) + text[at:]
    )


def _bytes(raw: bytes, rng: random.Random) -> bytes:
    data = bytearray(raw)
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(3)
        at = rng.randrange(len(data) + 1)
        if op == 0 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif op == 1:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
        elif data:
            del data[at : at + rng.randint(1, 16)]
    return bytes(data)


def mutate(raw: bytes, rng: random.Random) -> bytes:
    choice = rng.random()
    if choice < 0.3:
        return _bytes(raw, rng)
    text = raw.decode("utf-8-sig", errors="replace")
    if choice < 0.6:
        return _textual(text, rng).encode("utf-8", errors="surrogatepass")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return _textual(text, rng).encode("utf-8", errors="surrogatepass")
    try:
        return _structural(data, rng).encode("utf-8", errors="surrogatepass")
    except RecursionError:  # our own encoder on a deep mutation
        return _textual(text, rng).encode("utf-8", errors="surrogatepass")


def _parses(raw: bytes) -> bool:
    try:
        json.loads(raw.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return False
    return True


def _problems(outcomes: list[Any]) -> list[InputError]:
    out: list[InputError] = []
    for outcome in outcomes:
        if isinstance(outcome, Failed):
            error = outcome.error
            out += error.problems if isinstance(error, ValidationFailed) else [error]
    return out


def _load(path: Path) -> Any:
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["outcomes"] = load_all(discover([path.parent]))
        except InputError as exc:  # discover's own refusals are fine
            box["outcomes"] = [Failed(str(path), exc)]
        except BaseException as exc:
            box["crash"] = exc

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(PER_FILE_TIMEOUT)
    if thread.is_alive():
        return "hang"
    return box


REPLAYED = ("*result*.json", "*report*.json", "*trace*.json", "*otlp*.json", "*jaeger*.json")


def _replay_sources() -> list[Path]:
    found: set[Path] = set()
    for folder in (CORPUS, ROOT / "tests"):
        for pattern in REPLAYED:
            found.update(p for p in folder.rglob(pattern) if p.is_file())
    return sorted(found)


def _replay_and_init(path: Path, init: bool) -> Any:
    """Load ``path`` as a replay does and open every recording; with ``init``, find the
    project of its folder and render init's files. What escapes is a crash."""
    from ci_eval.cli.init_files import render_toml, render_workflow
    from ci_eval.connectors.base import AgentError
    from ci_eval.connectors.replay import ReplayConnector
    from ci_eval.load.find_project import find_project
    from ci_eval.model import EvalCase

    box: dict[str, Any] = {}

    def work() -> None:
        try:
            try:
                connector = ReplayConnector([path])
            except InputError:
                connector = None
            if connector is not None:
                for (set_id, case_id), _runs in connector.recordings.items():
                    case = EvalCase.model_validate({"eval_id": case_id, "conversation": []})
                    with contextlib.suppress(AgentError):  # a case's unreadable recording
                        connector.open(set_id, case, 1)
            if init:
                project = find_project(path.parent)
                render_toml(project, [])
                render_workflow(project)
            box["ok"] = True
        except Exception as exc:  # what a user would see as "internal error"
            box["crash"] = exc

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(PER_FILE_TIMEOUT)
    return "hang" if thread.is_alive() else box


def _seeds(work: Path) -> list[Path]:
    """Recorded files the corpus has none of, written here: an adk-rs report, an OTLP trace."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_replay

    seeds = work / "seeds"
    seeds.mkdir()
    score = {"score": 1.0, "status": "PASSED", "details": {"per_invocation": [1.0, 0.5]}}
    result = {"eval_set_id": "s", "eval_case_id": "c", "overall_status": "PASSED"}
    report = {"results": [result | {"scores": {"tool_trajectory_avg_score": score}}] * 2}
    (seeds / "adk_rs_report.json").write_text(json.dumps(report))
    _, trace = bench_replay.write_inputs(seeds, 3, 3)
    return [seeds / "adk_rs_report.json", trace]


def replay_phase(n: int, rng: random.Random, work: Path) -> tuple[dict[str, int], list[str]]:
    sources = _replay_sources() + _seeds(work)
    counts = {"files": 0, "internal_errors": 0, "hangs": 0}
    examples: list[str] = []
    for i in range(n if sources else 0):
        source = rng.choice(sources)
        folder = work / f"replay-{i:05d}"
        folder.mkdir()
        path = folder / source.name
        path.write_bytes(mutate(source.read_bytes(), rng))
        counts["files"] += 1
        box = _replay_and_init(path, init=i % 10 == 0)
        if box == "hang":
            counts["hangs"] += 1
            examples.append(f"hang: {path}")
        elif "crash" in box:
            counts["internal_errors"] += 1
            exc = box["crash"]
            examples.append(f"{path}: {type(exc).__name__}: {exc}"[:300])
    return counts, examples


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--replay-n", type=int, default=2_000)
    parser.add_argument("--keep", action="store_true", help="keep the mutated files")
    args = parser.parse_args()
    sources = sorted(CORPUS.rglob("*.json")) if CORPUS.is_dir() else []
    if not sources:
        print("fuzz: ../shared/corpus is not here; skipped")
        return 0
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="ci-eval-fuzz-"))
    counts = dict.fromkeys(
        (
            "files",
            "valid",
            "invalid",
            "internal_errors",
            "hangs",
            "messages",
            "without_file",
            "parsed_without_json_path",
            "not_utf8",
        ),
        0,
    )
    examples: dict[str, list[str]] = {}
    started = time.monotonic()
    try:
        for n in range(args.n):
            source = rng.choice(sources)
            raw = mutate(source.read_bytes(), rng)
            folder = work / f"{n:05d}"
            folder.mkdir()
            path = folder / source.name
            path.write_bytes(raw)
            counts["files"] += 1
            box = _load(path)
            if box == "hang":
                counts["hangs"] += 1
                examples.setdefault("hangs", []).append(str(path))
                continue
            if "crash" in box:
                counts["internal_errors"] += 1
                exc = box["crash"]
                examples.setdefault("internal_errors", []).append(
                    f"{path}: {type(exc).__name__}: {exc}"[:300]
                )
                continue
            problems = _problems(box["outcomes"])
            counts["invalid" if problems else "valid"] += 1
            parsed = _parses(raw)
            for problem in problems:
                counts["messages"] += 1
                line = str(problem)
                if "cannot load this file (" in line:  # the loader's last-resort catch
                    counts["internal_errors"] += 1
                    examples.setdefault("internal_errors", []).append(line[:300])
                try:
                    line.encode("utf-8")
                except UnicodeEncodeError:
                    counts["not_utf8"] += 1
                if not problem.path or not line.startswith(problem.path):
                    counts["without_file"] += 1
                    examples.setdefault("without_file", []).append(line[:200])
                if parsed and problem.json_path is None and problem.path == path.as_posix():
                    counts["parsed_without_json_path"] += 1
                    examples.setdefault("parsed_without_json_path", []).append(line[:200])
        in_process = time.monotonic() - started
        t0 = time.monotonic()
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "ci_eval", "validate", str(work)],
                capture_output=True,
                timeout=max(300.0, in_process * 3),
                cwd=ROOT,
                check=False,
            )
            lines = len((proc.stdout + proc.stderr).splitlines())
            crashed = b"internal error" in proc.stderr or b"Traceback" in proc.stderr
            cli = f"exit {proc.returncode}, {lines} lines, internal error or traceback: {crashed}"
            cli_ok = proc.returncode == 2 and b"internal error" not in proc.stderr
        except subprocess.TimeoutExpired:
            cli, cli_ok = "TIMED OUT (a hang)", False
        cli_time = time.monotonic() - t0
        t1 = time.monotonic()
        replayed, replay_examples = replay_phase(args.replay_n, rng, work)
        replay_time = time.monotonic() - t1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(
        f"fuzz: {counts['files']} mutated corpus files in {in_process:.1f} s in-process: "
        f"{counts['valid']} valid, {counts['invalid']} invalid ({counts['messages']} messages); "
        f"{counts['internal_errors']} internal errors, {counts['hangs']} hangs, "
        f"{counts['without_file']} messages without the file, "
        f"{counts['parsed_without_json_path']} messages on parsed JSON without a JSON path, "
        f"{counts['not_utf8']} not UTF-8"
    )
    print(f"fuzz: `ci-eval validate` over all of them: {cli} in {cli_time:.1f} s")
    print(
        f"fuzz: {replayed['files']} mutated replayed files (and init on every 10th folder) in "
        f"{replay_time:.1f} s: {replayed['internal_errors']} internal errors, "
        f"{replayed['hangs']} hangs"
    )
    for line in replay_examples[:5]:
        print(f"  replay: {line}")
    for kind, lines in examples.items():
        for line in lines[:5]:
            print(f"  {kind}: {line}")
    bad = (
        counts["internal_errors"]
        + counts["hangs"]
        + counts["without_file"]
        + counts["parsed_without_json_path"]
        + counts["not_utf8"]
        + replayed["internal_errors"]
        + replayed["hangs"]
    )
    return 0 if bad == 0 and cli_ok else 1


if __name__ == "__main__":
    sys.exit(main())
