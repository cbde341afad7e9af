"""Which user a command agent runs as.

An agent started by root keeps root's powers: it reads any process's environment and memory
(the job's token, the judge's key) although ci-eval is undumpable, and it can rewrite ci-eval's
own installed code before the gate runs. GitHub runs a Docker action as root, so there ci-eval
starts agents as an unprivileged user (``nobody`` unless told otherwise), which reads the
repository but owns nothing of the job. A user who cannot reach the agent's folder or program
would only turn every case into an error: then the agent stays root, and the run says why.

The choice is the workflow's (``--agent-user`` / input ``agent-user``), never ci-eval.toml's,
which a pull request controls.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.errors import InputError

AUTO, KEEP = "auto", "keep"
DEFAULT_USER = "nobody"
_READ, _EXEC = 4, 1


@dataclass
class Identity:
    """An unprivileged user an agent runs as, with a home of its own (removed at the end):
    root's home is not its to read, and an agent's caches must go somewhere it may write."""

    name: str
    uid: int
    gid: int
    _home: str | None = field(default=None, repr=False)
    # cases open side by side: one home for all of them
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def popen(self) -> dict[str, object]:
        """Popen's arguments that start the child as this user, with no supplementary groups
        (root's would follow it otherwise)."""
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` as this user's: its own HOME, USER and LOGNAME."""
        with self._lock:
            if self._home is None:
                self._home = tempfile.mkdtemp(prefix="ci-eval-agent-home-")
                os.chown(self._home, self.uid, self.gid)
        return {**env, "HOME": self._home, "USER": self.name, "LOGNAME": self.name}

    def close(self) -> None:
        with self._lock:
            if self._home is not None:
                shutil.rmtree(self._home, ignore_errors=True)
                self._home = None


@dataclass(frozen=True)
class Choice:
    """The user agents run as (None: ci-eval's own) and, when ci-eval had to keep root, why."""

    identity: Identity | None
    warning: str | None = None


def choose(
    wanted: str | None,
    name: str,
    cwd: Path,
    command: Sequence[str],
    search_path: str | None,
    euid: int | None = None,
) -> Choice:
    """The user for ``command`` run in ``cwd``. ``wanted`` is ``auto`` (default: ``nobody``
    when ci-eval runs as root), ``keep`` (ci-eval's own user) or a user's name or uid;
    ``name`` is how the user spelled the setting, for messages."""
    wanted = (wanted or AUTO).strip()
    if wanted == KEEP or os.name != "posix":
        return Choice(None)
    euid = os.geteuid() if euid is None else euid
    if euid != 0:
        if wanted == AUTO:
            return Choice(None)
        raise InputError(f"{name} {wanted}: only root can start agents as another user")
    user = _lookup(DEFAULT_USER if wanted == AUTO else wanted)
    if user is None:
        if wanted == AUTO:
            return Choice(None, f"agents run as root: there is no user {DEFAULT_USER}")
        raise InputError(f"{name} {wanted}: no such user")
    blocked = _unreachable(user, cwd, command, search_path)
    if blocked is None:
        return Choice(user)
    why = f"user {user.name} cannot reach {blocked}"
    if wanted == AUTO:
        return Choice(None, f"agents run as root, with the job's secrets in reach: {why}")
    raise InputError(f"{name} {wanted}: {why}; make it readable by that user or name another")


def _lookup(wanted: str) -> Identity | None:
    import pwd

    try:
        entry = pwd.getpwuid(int(wanted)) if wanted.isdigit() else pwd.getpwnam(wanted)
    except (KeyError, OverflowError):
        return None
    if entry.pw_uid == 0:
        return None
    return Identity(entry.pw_name, entry.pw_uid, entry.pw_gid)


def _unreachable(
    user: Identity, cwd: Path, command: Sequence[str], search_path: str | None
) -> Path | None:
    """The first folder or file the agent needs that ``user`` may not use: its folder (to
    enter and list), its program (to run; scripts are read too) and the files its arguments
    name (to read)."""
    needs: list[tuple[Path, int]] = [(cwd, _READ | _EXEC)]
    if command:
        program = shutil.which(command[0], path=search_path)
        if program is not None:
            # the link's folders too: a venv's python reads the pyvenv.cfg beside its link
            needs += [(Path(program).absolute(), _EXEC), (Path(program).resolve(), _EXEC)]
        for arg in command[1:]:
            candidate = cwd / arg
            if not arg.startswith("-") and candidate.is_file():
                needs.append((candidate, _READ))
    for path, mode in needs:
        blocked = blocked_path(path.absolute(), user.uid, {user.gid}, mode)
        if blocked is not None:
            return blocked
    return None


def blocked_path(path: Path, uid: int, gids: set[int], mode: int) -> Path | None:
    """The first of ``path``'s folders that ``uid`` (in ``gids``) may not enter, or ``path``
    itself when it lacks ``mode`` (read 4, execute 1) for them; None when all is allowed.
    Permission bits only, as the kernel reads them for a user without capabilities."""
    for folder in (*reversed(path.parents), path):
        want = _EXEC if folder != path else mode
        try:
            info = os.stat(folder)
        except OSError:
            return folder
        if stat.S_ISDIR(info.st_mode) and folder == path:
            want |= _EXEC
        if info.st_uid == uid:
            bits = info.st_mode >> 6
        elif info.st_gid in gids:
            bits = info.st_mode >> 3
        else:
            bits = info.st_mode
        if bits & want != want:
            return folder
    return None
