"""The reports' modules and the results file's serialisers made ready while the agent answers.

A run against an agent that takes seconds a turn spends them waiting, with the interpreter free;
the reports' start-up (importing the reporters, building the results model's pydantic
serialisers) was paid after the agent phase, in the wall time a user waits. A thread pays it
during the agent phase instead. Best effort: what it fails to warm is built as before when the
reports need it, and a failure here is the reports' to say."""

from __future__ import annotations

import contextlib
import threading


def _warm() -> None:
    with contextlib.suppress(Exception):  # the reports meet the same error and say it
        from ci_eval.io.jsonfast import serializer_for
        from ci_eval.model import results as model
        from ci_eval.model.results_file import adapter
        from ci_eval.report import junit, markdown, terminal  # noqa: F401  (imported: warm)

        for kind in (
            model.RunResults,
            model.SetRecord,
            model.CaseRecord,
            model.RunRecord,
            model.InvocationRecord,
        ):
            adapter(kind)
            serializer_for(kind)
        markdown.warm()


def start() -> threading.Thread:
    """Warm the reports in a daemon thread; join it before reporting."""
    thread = threading.Thread(target=_warm, name="ci-eval-warm-reports", daemon=True)
    thread.start()
    return thread
