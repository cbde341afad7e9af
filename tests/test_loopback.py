"""The tests' stand-in servers say nothing on ``sys.stderr``: a handler may outlive its test, and
by the time it fails ``sys.stderr`` may be a later test's in-process run's redirected stream
(``tests.helpers.run_cli``), whose lines that test asserts."""

from __future__ import annotations

import contextlib
import io
import threading
from collections.abc import Callable

import pytest
import requests

from tests.loopback import Loopback, QuietHandler


def _outliving(then: Callable[[QuietHandler], None]) -> str:
    """A request the client gives up on; its server stopped; then its handler wakes (inside a
    redirected ``sys.stderr``, as a later test's run would hold it) and does ``then``. What
    the redirected stream got."""
    release, handlers = threading.Event(), []

    class Late(QuietHandler):
        def do_POST(self) -> None:
            handlers.append(threading.current_thread())
            release.wait(10)
            then(self)

    with Loopback(Late) as server, pytest.raises(requests.Timeout):
        requests.post(f"http://127.0.0.1:{server.port}", data=b"{}", timeout=0.2)
    assert handlers, "the request never reached its handler"
    redirected = io.StringIO()
    with contextlib.redirect_stderr(redirected):
        release.set()
        handlers[0].join(10)
    return redirected.getvalue()


def test_a_reply_to_a_client_that_left_writes_nothing_to_sys_stderr() -> None:
    refused: list[BaseException] = []

    def reply(handler: QuietHandler) -> None:
        try:
            for _ in range(1000):  # the first writes may be buffered; a later one meets the reset
                handler.wfile.write(b"x" * 65536)
        except ConnectionError as exc:
            refused.append(exc)
            raise  # as a handler's reply fails: out to the server's handle_error

    assert _outliving(reply) == ""
    assert refused, "the client's side never refused the reply"


def test_any_other_handler_error_goes_to_the_process_stderr_not_sys_stderr(
    capfd: pytest.CaptureFixture[str],
) -> None:
    def broken(handler: QuietHandler) -> None:
        raise ValueError("a bug in the stand-in")

    assert _outliving(broken) == ""
    assert "ValueError: a bug in the stand-in" in capfd.readouterr().err
