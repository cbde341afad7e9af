"""Start Google ADK's own ``adk api_server`` on 127.0.0.1 serving the sample agents."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parent.parent
AGENTS = REPO / "samples/agents"
TEST_AGENTS = REPO / "tests/data/adk_agents"  # agents only the tests need (metered_agent)


def adk_executable() -> Path:
    return Path(sys.executable).parent / "adk"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def adk_api_server(
    workdir: Path,
    sources: tuple[Path, ...] = (AGENTS, TEST_AGENTS),
    env: dict[str, str] | None = None,
) -> Iterator[str]:
    """Serve a copy of the sample agents and the tests' own (or ``sources``'): api_server keeps
    sessions (and folders for unknown apps) on disk beside the agents, which must not land in
    the repository."""
    agents = workdir / "agents"
    for source in sources:
        shutil.copytree(
            source, agents, ignore=shutil.ignore_patterns("__pycache__", ".adk"), dirs_exist_ok=True
        )
    log = workdir / "server.log"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                str(adk_executable()),
                "api_server",
                str(agents),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--session_service_uri",
                "memory://",
            ],
            stdout=out,
            stderr=out,
            env=env,
        )
        try:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    raise RuntimeError(f"adk api_server exited: {log.read_text()[-2000:]}")
                try:
                    if requests.get(f"{url}/list-apps", timeout=1).ok:
                        break
                except requests.ConnectionError:
                    time.sleep(0.3)
            else:
                raise RuntimeError("adk api_server did not start within 90 s")
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
