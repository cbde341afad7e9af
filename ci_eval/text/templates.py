"""Where the Jinja templates live and how they are rendered safely.

The search path is a user's ``--template-dir`` first, then the templates shipped in the wheel
(``ci_eval/_templates``), then the repository's ``templates/`` (editable installs).

A repository's templates are code from whoever opened the pull request, so rendering is fenced:
Jinja's sandbox (no attribute tricks); a loader that serves only regular files whose real path
lies inside a directory of the search path (no ``{% include %}`` of a symlink to
``/proc/self/environ``, no absolute or ``..`` names); a time limit and an output cap per render
(a nested ``range`` stops with an error instead of running for minutes); and errors that name
the template file and line. When a user's template fails, callers fall back to the built-in one,
so no report is lost.
"""

from __future__ import annotations

import ctypes
import math
import operator
import os
import threading
import time
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from jinja2 import BaseLoader, Environment, StrictUndefined, Template, TemplateNotFound
from jinja2.exceptions import TemplateError, TemplateSyntaxError
from jinja2.sandbox import SandboxedEnvironment

from ci_eval.errors import InputError
from ci_eval.io.readfile import read_regular_file

_PACKAGED = Path(__file__).resolve().parent.parent / "_templates"
_REPO = Path(__file__).resolve().parent.parent.parent / "templates"

RENDER_TIMEOUT = 20.0  # seconds per render; far more than the built-in templates need
MAX_OUTPUT = 16 * 1024 * 1024  # characters per render; reports are capped far below this
MAX_TEMPLATE_BYTES = 1_000_000
_MAX_SEQUENCE = 1_000_000  # items or characters a `*` may build
_DICT_ATTRIBUTES = frozenset(dir(dict))  # what getattr finds on a plain dict


def template_dirs(user_dir: Path | None = None) -> list[Path]:
    dirs = [user_dir] if user_dir else []
    dirs += [d for d in (_PACKAGED, _REPO) if d.is_dir()]
    return dirs


def _shown(path: str) -> str:
    """A template path as the user knows it: relative to the working directory when inside it
    (symlinks not resolved: a refused link is named, not its target)."""
    try:
        return Path(path).relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path


class TemplateProblem(InputError):
    """A template that cannot be rendered: ``file:line: what`` on one line."""


class _RenderTimeout(Exception):
    pass


class ConfinedLoader(BaseLoader):
    """Serves ``name`` from the first search directory holding it, only if the file's real path
    (symlinks resolved) stays inside that directory and it is a regular file of sane size."""

    def __init__(self, searchpath: list[Path]) -> None:
        self.roots = [os.path.realpath(p) for p in searchpath]

    def get_source(
        self, environment: Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        pieces = template.replace("\\", "/").split("/")
        if template.startswith("/") or any(p in ("", ".", "..") for p in pieces):
            raise TemplateNotFound(
                template, f"{template} (only names inside the template directory are served)"
            )
        for root in self.roots:
            candidate = os.path.join(root, *pieces)
            if not os.path.lexists(candidate):
                continue
            real = os.path.realpath(candidate)
            if os.path.commonpath([root, real]) != root:
                raise TemplateProblem(
                    f"template {template} resolves to {real}, outside the template directory "
                    f"{_shown(root)}; refused",
                    path=_shown(candidate),
                )
            try:
                source = read_regular_file(Path(real), candidate, MAX_TEMPLATE_BYTES)
            except InputError as exc:
                raise TemplateProblem(exc.message, path=_shown(candidate)) from None
            try:
                text = source.decode("utf-8")
            except UnicodeDecodeError:
                raise TemplateProblem("not UTF-8 text", path=_shown(candidate)) from None
            mtime = os.path.getmtime(real)
            return text, candidate, partial(_unchanged, real, mtime)
        raise TemplateNotFound(template)


def _unchanged(path: str, mtime: float) -> bool:
    try:
        return os.path.getmtime(path) == mtime
    except OSError:
        return False


class _Sandbox(SandboxedEnvironment):
    """The sandbox, plus a cap on what ``*`` and ``**`` may build in one step (a time limit
    cannot interrupt a single C-level allocation)."""

    intercepted_binops = frozenset({"*", "**"})

    def getattr(self, obj: Any, attribute: str) -> Any:
        # ``row.name`` on a plain dict: the sandbox tries the attribute first and looks the key
        # up after the AttributeError; a name that is no attribute of dict skips to the key
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)

    def call_binop(self, context: Any, op: str, left: Any, right: Any) -> Any:
        if op == "**" and isinstance(right, int) and abs(right) > 10_000:
            raise TemplateError(f"exponent {right} is too large for a template")
        if op == "*":
            for seq, times in ((left, right), (right, left)):
                if (
                    isinstance(seq, str | list | tuple)
                    and isinstance(times, int)
                    and len(seq) * times > _MAX_SEQUENCE
                ):
                    raise TemplateError("repeating a sequence that many times is too large")
        return {"*": operator.mul, "**": operator.pow}[op](left, right)


def environment(template_dir: Path | None, **options: Any) -> SandboxedEnvironment:
    """A sandboxed environment over the template search path (``template_dir`` first)."""
    options.setdefault("undefined", StrictUndefined)
    options.setdefault("autoescape", False)
    return _Sandbox(loader=ConfinedLoader(template_dirs(template_dir)), **options)


def _where(
    exc: BaseException, fallback: str | None, roots: list[str]
) -> tuple[str | None, int | None]:
    """The template file and line an exception points at (Jinja rewrites tracebacks so that
    template frames carry the template's file name and line)."""
    if isinstance(exc, TemplateSyntaxError):
        return exc.filename or exc.name or fallback, exc.lineno
    found: tuple[str | None, int | None] = (fallback, None)
    for frame, line in traceback.walk_tb(exc.__traceback__):
        name = frame.f_code.co_filename
        if any(name.startswith(root + os.sep) for root in roots) or name == "<template>":
            found = (name, line)
    return found


def problem(
    exc: BaseException, template: str | None = None, env: Environment | None = None
) -> TemplateProblem:
    """One line naming the template file and line for any rendering failure."""
    if isinstance(exc, TemplateProblem):
        return exc
    loader = env.loader if env is not None else None
    roots = loader.roots if isinstance(loader, ConfinedLoader) else []
    path, line = _where(exc, template, roots)
    if path and os.path.isabs(path):
        path = _shown(path)
    if isinstance(exc, TemplateNotFound):
        what = f"template not found: {exc.message or exc.name}"
    elif isinstance(exc, _RenderTimeout):
        what = str(exc)
    elif isinstance(exc, TemplateError):
        kind = "syntax error" if isinstance(exc, TemplateSyntaxError) else "template error"
        what = f"{kind}: {str(exc.message or exc).rstrip('.')}"
    else:
        what = f"template error: {type(exc).__name__}: {exc}"
    return TemplateProblem(what, path=path, line=line)


def _raise_in(thread: threading.Thread, exc_type: type[BaseException]) -> None:
    """Interrupt a Python-level loop in another thread (CPython delivers it at the next
    bytecode); the only way to stop a runaway template without a process per render."""
    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(thread.ident), ctypes.py_object(exc_type)
        )


def render(
    env: Environment, name: str, context: dict[str, Any], timeout: float | None = None
) -> str:
    """Render template ``name`` within ``timeout`` seconds (:data:`RENDER_TIMEOUT`; ``math.inf``
    for ci-eval's own templates, whose time grows with the suite, not with a user's code) and
    :data:`MAX_OUTPUT` characters. Every failure is a :class:`TemplateProblem` naming the
    template file and line."""
    timeout = RENDER_TIMEOUT if timeout is None else timeout
    outcome: dict[str, Any] = {}
    deadline = time.monotonic() + timeout

    def work() -> None:
        try:
            template: Template = env.get_template(name)
            parts: list[str] = []
            size = 0
            timed = not math.isinf(deadline)  # ci-eval's own templates have no time limit
            for chunk in template.generate(**context):
                size += len(chunk)
                if size > MAX_OUTPUT:
                    raise TemplateError(f"the output is over {MAX_OUTPUT:,} characters")
                if timed and time.monotonic() > deadline:
                    raise _RenderTimeout(f"rendering took longer than {timeout:g} s")
                parts.append(chunk)
            outcome["text"] = "".join(parts)
        except _RenderTimeout as exc:
            outcome["error"] = (
                exc if exc.args else _RenderTimeout(f"rendering took longer than {timeout:g} s")
            )
        except BaseException as exc:  # reported to the caller's thread
            outcome["error"] = exc

    worker = threading.Thread(target=work, name=f"render {name}", daemon=True)
    worker.start()
    worker.join(None if math.isinf(timeout) else timeout)
    while worker.is_alive():
        _raise_in(worker, _RenderTimeout)
        worker.join(0.1)
    if "error" in outcome:
        raise problem(outcome["error"], name, env) from None
    return str(outcome["text"])
