"""The worker process: ``python -I -B -m ci_eval.worker ROOT``, started by the trusted process
(:mod:`ci_eval.worker.client`) with an agent's environment and user.

It runs what the repository supplies that executes — custom metric functions, ADK
``code_config`` metrics, workspace metric plugins, an in-process ADK agent — and answers with
data. Requests are served side by side (a thread each), so an agent's turns overlap as they
did in process. The workspace code's own prints go to stderr: the protocol has a file
descriptor of its own.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ci_eval.worker import protocol, workspace


def _kind(exc: BaseException) -> str:
    """What an op's exception means to the trusted side. ci-eval's own exception classes are
    looked up only where already imported: an agent's worker never imports the metrics."""
    base, errors = sys.modules.get("ci_eval.metrics.base"), sys.modules.get("ci_eval.errors")
    if base is not None and isinstance(exc, base.NotApplicable):
        return "not_applicable"
    if errors is not None and isinstance(exc, errors.InputError):
        return "input"
    return "failure"


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    from ci_eval.worker.ops import OPS, Refused

    reply: dict[str, Any] = {"id": request["id"]}
    function = OPS.get(str(request.get("op")))
    try:
        if function is None:
            raise Refused(f"no op {request.get('op')!r}", "protocol")
        reply["ok"] = function(**dict(request.get("args") or {}))
    except Refused as exc:
        reply.update(error=str(exc), kind=exc.kind)
    except (Exception, SystemExit) as exc:  # the workspace's code raised: said, the worker goes on
        kind = _kind(exc)
        base = sys.modules.get("ci_eval.metrics.base")
        ours = kind != "failure" or (base is not None and isinstance(exc, base.MetricFailure))
        reply.update(error=str(exc) if ours else f"{type(exc).__name__}: {exc}", kind=kind)
        if not ours:
            traceback.print_exc(file=sys.stderr)
    reply["files"] = workspace.take_imported()
    return reply


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]).resolve()
    # the protocol on a descriptor of its own; fd 1 (print, a child's stdout) goes to stderr
    channel = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    workspace.install(root)

    lock = threading.Lock()

    def serve(request: dict[str, Any]) -> None:
        line = protocol.encode(_answer(request))
        with lock:
            channel.write(line)

    stdin = sys.stdin.buffer
    with ThreadPoolExecutor(max_workers=64, thread_name_prefix="op") as pool:
        while True:
            line = stdin.readline(protocol.MAX_LINE + 1)
            if not line:
                break
            try:
                request = protocol.decode(line)
            except protocol.ProtocolError as exc:
                print(f"ci-eval worker: {exc}", file=sys.stderr)
                return 2
            pool.submit(serve, request)
    return 0
