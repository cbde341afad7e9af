"""The composite action's set-up, run by the interpreter actions/setup-python gives it, before
ci-eval exists: standard library only, the same on Linux, macOS and Windows runners.

    python install.py plan      # outputs: extras, pip-cache, cache-key
    python install.py install   # output: bin (the venv's scripts folder with ci-eval in it)

``plan`` decides what to install and whether pip's download cache can be kept between jobs:
google-adk too when the ``agent`` input, or else ci-eval.toml's ``[agent] kind``, is ``adk``;
no cache (an empty ``pip-cache``, and the cache steps skipped) when pip has none, as with
``PIP_NO_CACHE_DIR`` set in the job. ``install`` builds ci-eval from a copy of the action's
source under ``RUNNER_TEMP``, so no ``build/`` or ``*.egg-info`` is left in the workspace, into
a venv there (setup-python's pip installs into it), with every dependency at the version
``constraints.txt`` pins. A second use in the same job reuses that venv when it was made for
the same source and extras.

Both write their outputs to ``GITHUB_OUTPUT`` and say what went wrong in one ``::error`` line.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
import venv
from collections.abc import Mapping
from pathlib import Path

# what pip needs to build ci-eval, copied out of the action's checkout
SOURCE = ("pyproject.toml", "README.md", "constraints.txt", "ci_eval", "templates")
CONFIG_NAME = "ci-eval.toml"


class SetupError(Exception):
    """One line for the job's log: what failed and what to do."""


def _input(env: Mapping[str, str], name: str) -> str:
    for key in (f"INPUT_{name.upper()}", f"INPUT_{name.upper().replace('-', '_')}"):
        value = env.get(key, "").strip()
        if value:
            return value
    return ""


def find_config(env: Mapping[str, str]) -> Path | None:
    """The settings file ci-eval will read: the ``config`` input, else ``ci-eval.toml`` in the
    working directory or the nearest folder above it, up to the workspace (as ci-eval finds
    it, without git)."""
    workspace = Path(env.get("GITHUB_WORKSPACE") or ".").resolve()
    here = (workspace / _input(env, "working-directory")).resolve()
    given = _input(env, "config")
    if given:
        return here / given
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            return folder / CONFIG_NAME
        if folder == workspace:
            break
    return None


def agent_kind(env: Mapping[str, str]) -> str:
    """The ``agent`` input, else ``[agent] kind`` of the settings file ('' when neither says or
    the file cannot be read: ci-eval itself reports a bad file, in its own words)."""
    kind = _input(env, "agent")
    if kind:
        return kind
    config = find_config(env)
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8")) if config else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ""
    agent = data.get("agent")
    value = agent.get("kind") if isinstance(agent, dict) else None
    return value if isinstance(value, str) else ""


def pip_cache_dir(python: str) -> str:
    """pip's cache folder, or '' when pip has none (``PIP_NO_CACHE_DIR``, a read-only home)."""
    try:
        done = subprocess.run(
            [python, "-m", "pip", "cache", "dir"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    lines = done.stdout.strip().splitlines()
    return lines[-1].strip() if done.returncode == 0 and lines else ""


def source_hash(source: Path, extras: str) -> str:
    digest = hashlib.sha256(extras.encode())
    for name in ("constraints.txt", "pyproject.toml"):
        digest.update((source / name).read_bytes())
    return digest.hexdigest()[:16]


def plan(env: Mapping[str, str], python: str) -> dict[str, str]:
    source = Path(env["CI_EVAL_SRC"])
    extras = "adk" if agent_kind(env).strip().lower() == "adk" else ""
    cache = pip_cache_dir(python)
    version = ".".join(map(str, sys.version_info[:2]))
    key = "-".join(
        (
            "ci-eval-pip",
            env.get("RUNNER_OS", sys.platform),
            env.get("RUNNER_ARCH", ""),
            version,
            source_hash(source, extras),
            extras or "slim",
        )
    )
    return {"extras": extras, "pip-cache": cache, "cache-key": key}


def _venv_bin(root: Path) -> Path:
    return root / ("Scripts" if os.name == "nt" else "bin")


def _stage(source: Path, into: Path) -> None:
    """A copy of what pip builds from: its build/ and egg-info land here, not in the
    workspace the action's checkout may be part of."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCE:
        path = source / name
        if path.is_dir():
            shutil.copytree(path, into / name, ignore=ignore)
        else:
            shutil.copy2(path, into / name)


def install(env: Mapping[str, str]) -> dict[str, str]:
    source = Path(env["CI_EVAL_SRC"]).resolve()
    extras = env.get("CI_EVAL_EXTRAS", "").strip()
    temp = Path(env.get("RUNNER_TEMP") or os.environ.get("TMPDIR") or "/tmp")
    root = temp / "ci-eval-venv"
    marker = root / "ci-eval-installed"
    wanted = source_hash(source, extras)
    bin_dir = _venv_bin(root)
    if marker.is_file() and marker.read_text() == wanted:
        return {"bin": str(bin_dir)}
    shutil.rmtree(root, ignore_errors=True)
    # no pip of its own: setup-python's pip installs into it (``--python``), which spares
    # ensurepip's copy of pip on every cold job
    venv.EnvBuilder(with_pip=False).create(root)
    staged = temp / "ci-eval-src"
    _stage(source, staged)
    target = f"{staged}[{extras}]" if extras else str(staged)
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    command = [
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(python),
        "install",
        "--disable-pip-version-check",
        "--quiet",
        "--constraint",
        str(staged / "constraints.txt"),
        target,
    ]
    if subprocess.run(command, check=False).returncode != 0:
        raise SetupError(f"pip could not install ci-eval{f'[{extras}]' if extras else ''}")
    shutil.rmtree(staged, ignore_errors=True)
    marker.write_text(wanted)
    return {"bin": str(bin_dir)}


def write_outputs(env: Mapping[str, str], outputs: Mapping[str, str]) -> None:
    lines = "".join(f"{name}={value}\n" for name, value in outputs.items())
    path = env.get("GITHUB_OUTPUT")
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(lines)
    else:
        sys.stdout.write(lines)


def main(argv: list[str], env: Mapping[str, str]) -> int:
    if len(argv) != 1 or argv[0] not in ("plan", "install"):
        print("usage: install.py plan|install", file=sys.stderr)
        return 2
    try:
        outputs = plan(env, sys.executable) if argv[0] == "plan" else install(env)
    except (SetupError, OSError, KeyError) as exc:
        detail = f"{exc} is not set" if isinstance(exc, KeyError) else str(exc)
        print(f"::error title=ci-eval setup::{detail}")
        return 1
    write_outputs(env, outputs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], os.environ))
