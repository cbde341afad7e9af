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


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    from ci_eval.errors import InputError
    from ci_eval.metrics.base import MetricFailure, NotApplicable

    reply: dict[str, Any] = {"id": request["id"]}
    from ci_eval.worker.ops import OPS, Refused

    function = OPS.get(str(request.get("op")))
    try:
        if function is None:
            raise Refused(f"no op {request.get('op')!r}", "protocol")
        reply["ok"] = function(**dict(request.get("args") or {}))
    except Refused as exc:
        reply.update(error=str(exc), kind=exc.kind)
    except NotApplicable as exc:
        reply.update(error=str(exc), kind="not_applicable")
    except InputError as exc:
        reply.update(error=str(exc), kind="input")
    except MetricFailure as exc:
        reply.update(error=str(exc), kind="failure")
    except (Exception, SystemExit) as exc:  # the workspace's code raised: said, the worker goes on
        reply.update(error=f"{type(exc).__name__}: {exc}", kind="failure")
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
