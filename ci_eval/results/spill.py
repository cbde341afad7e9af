"""Scored cases' runs kept in a temporary file instead of memory, for runs of many cases.

Once a case is scored, the gate and the comparison read only its verdict and its metrics per
case; its runs (invocations and per-run metrics: large even as compact JSON) are read again
only by the results file and the reports, a case at a time. A run of more than :data:`LIMIT`
case runs writes each scored case's runs, as the results file's text of them, to an anonymous
temporary file (unlinked at once: nothing is left behind, no other process can open it) and
holds a few numbers per case instead, so a large run peaks much lower. The results file splices
the text in as it is; a report reads the runs back as ``ci-eval report`` reads them from the
results file, so its output is the same. A smaller run keeps them in memory (at most
:data:`LIMIT` case runs' worth), as reading them back costs time; a reader of results files
(:class:`PastLimit`) keeps the first cases up to the limit in memory.

Redaction: the text is redacted as it is spilled, and again as it is read back if the
redactor has learnt a secret since. The scrub before reports render (``Redactor.scrub``)
leaves a spilled case's runs alone, as they are redacted by construction.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, overload

from pydantic_core import SchemaSerializer, core_schema

from ci_eval.model.results import CaseRecord, RunRecord, TextRuns
from ci_eval.model.results_file import run_from, run_text
from ci_eval.text import redact

LIMIT = 25_000  # case runs a run keeps in memory (CI_EVAL_RUNS_IN_MEMORY)
_CHUNK = 1 << 20  # bytes gathered before a write


def limit_from(env: Mapping[str, str]) -> int:
    """How many case runs a run keeps in memory: CI_EVAL_RUNS_IN_MEMORY, default
    :data:`LIMIT` (also when it is not a whole number)."""
    value = env.get("CI_EVAL_RUNS_IN_MEMORY", "").strip()
    try:
        return max(0, int(value)) if value else LIMIT
    except ValueError:
        return LIMIT


def for_run(runs: int, env: Mapping[str, str]) -> RunSpill | None:
    """Where a run of ``runs`` case runs keeps its scored cases' runs: a :class:`RunSpill`
    past the limit, its file created now (before any agent call); None: in memory. A temp
    folder that cannot be written to (or a system without ``os.pread``) means memory too,
    not a failed run."""
    if runs <= limit_from(env) or not hasattr(os, "pread"):
        return None
    try:
        # closed with the spill, when the run's results go
        file = tempfile.TemporaryFile(prefix="ci-eval-runs-", buffering=0)  # noqa: SIM115
    except OSError:
        return None
    return RunSpill(file)


class PastLimit:
    """For a reader of cases whose number it does not know beforehand (a results file read by
    ``report``, ``compare`` or ``merge``): the first cases up to the limit of case runs keep
    their runs in memory; those past it are spilled, once a file can be had."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env, self.limit = env, limit_from(env)
        self.runs = 0
        self.spill: RunSpill | None = None
        self.spilling = True  # until a file cannot be had

    def __call__(self, case: CaseRecord) -> CaseRecord:
        self.runs += len(case.runs)
        if self.spill is None and self.spilling and self.runs > self.limit:
            self.spill = for_run(self.runs, self.env)
            self.spilling = self.spill is not None
        return case if self.spill is None else self.spill.hold(case)


class RunSpill:
    """A temporary file of scored cases' runs. :meth:`hold` is the scorer's ``then``; reads
    may come from any thread."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file: IO[bytes] | None = file
        self.full: IO[bytes] | None = None  # the file, once a write to it failed
        self._written = 0  # bytes in the file
        self._pending = bytearray()  # bytes after those, not written yet
        self._lock = threading.Lock()
        # the last runs read back: where, by whom redacted, knowing how many secrets
        self._last: tuple[int, redact.Redactor, int, list[RunRecord]] | None = None

    def hold(self, case: CaseRecord) -> CaseRecord:
        """A scored case as reports will read it: compacted, its runs in the file (in memory
        once a write failed)."""
        case.compact()
        runs = case.runs
        if not runs or isinstance(runs, TextRuns) or self._file is None:
            return case
        redactor = redact.current()
        data = redactor.text(",".join(map(run_text, runs))).encode()
        with self._lock:
            at = self._written + len(self._pending)
            self._pending += data
            try:
                if len(self._pending) >= _CHUNK:
                    self._flush()
            except OSError:  # a full disk: this case and those after keep their runs
                del self._pending[at - self._written :]
                self._file, self.full = None, self._file
                return case
        case.runs = SpilledRuns(self, at, len(data), len(runs), case.error, redactor)  # type: ignore[assignment]
        return case

    def _flush(self) -> None:
        assert self._file is not None
        while self._pending:
            done = os.write(self._file.fileno(), self._pending)
            del self._pending[:done]
            self._written += done

    def read(self, at: int, size: int) -> bytes:
        """The bytes :meth:`hold` put there: from the file, and from those not written yet."""
        with self._lock:
            file = self._file or self.full
            chunks = []
            while size and at < self._written:
                assert file is not None
                chunk = os.pread(file.fileno(), min(size, self._written - at), at)
                if not chunk:
                    raise OSError("the temporary file of spilled runs is shorter than written")
                chunks.append(chunk)
                at, size = at + len(chunk), size - len(chunk)
            if size:
                chunks.append(bytes(self._pending[at - self._written : at - self._written + size]))
            return b"".join(chunks)

    def runs(self, at: int, text: Callable[[], str]) -> list[RunRecord]:
        """The runs written at ``at``, from their ``text`` as the results file's reader reads
        them; the last ones read come back as they are while the redactor is the same."""
        current = redact.current()
        key = (at, current, current.generation)
        last = self._last
        if last is not None and last[:3] == key:
            return last[3]
        runs = [run_from(r) for r in json.loads("[" + text() + "]")]
        self._last = (*key, runs)
        return runs


class SpilledRuns(TextRuns, Sequence[RunRecord]):
    """A spilled case's runs, read back on each access (the last case read is kept, so a
    report going over one case's runs several times reads them once)."""

    __slots__ = ("_at", "_count", "_error", "_generation", "_redactor", "_size", "_spill")

    # the scrub's one search of a case's JSON sees no runs here: redacted by construction
    __pydantic_serializer__ = SchemaSerializer(
        core_schema.any_schema(
            serialization=core_schema.plain_serializer_function_ser_schema(lambda _: [])
        )
    )

    def __init__(
        self,
        spill: RunSpill,
        at: int,
        size: int,
        count: int,
        error: str | None,
        redactor: redact.Redactor,
    ) -> None:
        self._spill, self._at, self._size, self._count = spill, at, size, count
        self._error = None if error is None else redactor.text(error)
        # who redacted the text, knowing how many secrets
        self._redactor, self._generation = redactor, redactor.generation

    def _redacted(self, text: str) -> str:
        """``text`` as the current redactor has it: redacted again only if it has learnt a
        secret since the runs were spilled (or is another one)."""
        current = redact.current()
        if current is self._redactor and current.generation == self._generation:
            return text
        return current.text(text)

    def _runs(self) -> list[RunRecord]:
        return self._spill.runs(self._at, self.text)

    @property
    def error(self) -> str | None:  # type: ignore[override]
        return None if self._error is None else self._redacted(self._error)

    def text(self) -> str:
        return self._redacted(self._spill.read(self._at, self._size).decode())

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> RunRecord: ...
    @overload
    def __getitem__(self, index: slice) -> list[RunRecord]: ...
    def __getitem__(self, index: int | slice) -> RunRecord | list[RunRecord]:
        return self._runs()[index]

    def __iter__(self) -> Iterator[RunRecord]:
        return iter(self._runs())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TextRuns | list):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SpilledRuns({list(self)!r})"
