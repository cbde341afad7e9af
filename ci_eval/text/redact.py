"""Nothing secret leaves: one redactor that every outgoing string passes through.

Two kinds of secret are replaced by ``***``:

* **Known values**: the GitHub token, the judge's API key, the agent's bearer token, ``--header``
  values, the password and credential-like query parameters of the agent and judge URLs, and any
  environment variable whose name says it is a secret (``*_TOKEN``, ``*_API_KEY``,
  ``*_SECRET``, ``*PASSWORD*`` …). Values shorter than :data:`MIN_SECRET` characters are not
  treated as secrets: too short to be a credential, too common to mask without wrecking reports.
  Each value is also matched in the forms the sinks encode it to (JSON, XML/HTML, Markdown
  escapes, percent-encoding, GitHub's workflow-command escaping), so a writer that escapes
  first still cannot leak it.
* **Shapes** that are secrets whoever's they are: ``user:password@`` in URLs, credential-like
  query parameters (``api_key=``, ``token=``, ``sig=`` …), ``Authorization``/``Bearer``/
  ``Basic`` credentials, and well-known token formats (GitHub, OpenAI, Slack, AWS, Google).

The process has one active redactor (:func:`current`), built once from the environment when the
CLI starts and extended with the run's settings (:func:`register_settings`); the sinks — the
terminal printer, every file writer, the GitHub publisher — call :func:`text` or :func:`data`,
and the sources that build messages from foreign text (error bodies, agent descriptions) redact
before they truncate, so no prefix of a secret survives a cut. Under GitHub Actions each secret is
also announced with ``::add-mask::`` as it becomes known, before anything else is printed.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import pydantic_core

from ci_eval.io.jsonfast import serializer_for
from ci_eval.text import escape

MASK = "***"
MIN_SECRET = 6

# environment variables that carry credentials by name
_SECRET_NAME = re.compile(
    r"(?i)(?:^|_)(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY)"
    r"(?:$|_)|_KEY$|^INPUT_.*(?:TOKEN|KEY|SECRET|PASSWORD)"
)
# environment variables a child agent never sees unless passed explicitly (--agent-env)
_CHILD_DROP = re.compile(
    r"^(?:GITHUB_TOKEN|GH_TOKEN|GH_ENTERPRISE_TOKEN|GITHUB_ENTERPRISE_TOKEN|"
    r"ACTIONS_RUNTIME_TOKEN|ACTIONS_ID_TOKEN_REQUEST_TOKEN|ACTIONS_ID_TOKEN_REQUEST_URL|"
    r"ACTIONS_RESULTS_URL|ACTIONS_CACHE_URL|ACTIONS_RUNTIME_URL|INPUT_.*)$"
)

_CRED_PARAMS = (
    r"api(?:\\?[_-])?key|apikey|key|token|access(?:\\?[_-])?token|auth(?:\\?[_-])?token|"
    r"id(?:\\?[_-])?token|refresh(?:\\?[_-])?token|client(?:\\?[_-])?secret|secret|sig|"
    r"signature|password|passwd|pwd|auth|code|x-amz-signature|x-amz-credential|"
    r"x-amz-security-token|x-goog-signature|x-goog-credential"
)
# the value stops where a URL, a quoted string or a Markdown/XML construct would
_VALUE = r"[^&#\s\"'<>\\`|)\],;:]+"
# (anchors, pattern, replacement): the pattern only runs on text holding one of its anchors
# (lower case), so clean text — nearly all of it — costs a few substring searches, not regexes
_SHAPES: list[tuple[tuple[str, ...], re.Pattern[str], str]] = [
    # scheme://user:password@host → scheme://***@host
    (
        ("://",),
        re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@\"'<>\\`?#]+@"),
        r"\1" + MASK + "@",
    ),
    # ?api_key=… &token=… (also after XML's &amp;)
    (
        (
            "key=",
            "token=",
            "sig=",
            "signature=",
            "password=",
            "passwd=",
            "pwd=",
            "auth=",
            "code=",
            "secret=",
            "credential=",
        ),
        re.compile(rf"(?i)([?&;](?:{_CRED_PARAMS})=){_VALUE}"),
        r"\1" + MASK,
    ),
    # Authorization: [scheme] credentials
    (
        ("authorization",),
        re.compile(
            r"(?i)(\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?"
            r"(?:(?:bearer|basic|token|digest|bot)\s+)?)[^\s\"'<>,;]+"
        ),
        r"\1" + MASK,
    ),
    # a scheme word of its own (not the end of an id or a path such as "math-basic"), its
    # credentials on the same line: a heading "### math-basic" above a path is no credential
    (
        ("bearer", "basic ", "basic\t"),
        re.compile(r"(?i)(?<![\w./\-])(bearer|basic)([ \t]+)[A-Za-z0-9\-._~+/]{6,}=*"),
        r"\1\2" + MASK,
    ),
    # well-known token formats
    (
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "xox", "akia", "aiza"),
        re.compile(
            r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|"
            r"sk-(?:proj-)?[A-Za-z0-9_\-]{20,}|xox[abposr]-[A-Za-z0-9\-]{10,}|"
            r"AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35})"
        ),
        MASK,
    ),
]
_LONG = 1 << 16  # longer text: known values by substring search (C speed), not one regex
_ANCHORS = sorted({a for anchors, _, _ in _SHAPES for a in anchors}, key=len, reverse=True)


class _Trigger:
    """Finds, in lower-case text, the substrings without one of which a string holds nothing to
    redact. Short strings: one regex search (cheaper than as many substring searches).
    Long text (a results file goes through in pieces of a case each): the same search by
    pydantic-core's Rust regex engine, faster than ``re`` on alternatives."""

    def __init__(self, forms: tuple[str, ...]) -> None:
        words = sorted({f.lower() for f in forms} | set(_ANCHORS), key=len, reverse=True)
        self._short = re.compile("|".join(re.escape(w) for w in words))
        self._long: Any = None
        try:
            from pydantic_core import SchemaValidator, core_schema

            # every character but ASCII letters and digits as \x{…}: a literal in any engine
            literal = "|".join(
                "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}" for c in w)
                for w in words
            )
            self._long = SchemaValidator(
                core_schema.str_schema(pattern=literal, regex_engine="rust-regex")
            )
        except Exception:  # an older pydantic-core: the short path does the same, slower
            self._long = None

    def found(self, lowered: str) -> bool:
        if len(lowered) < _RUST_FROM or self._long is None:
            return self._short.search(lowered) is not None
        try:
            self._long.validate_python(lowered)  # passes when the pattern is found
        except ValueError:
            return False
        return True


_RUST_FROM = 512  # shorter text: the cost of a validation error is more than the search


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>])")


def _variants(value: str) -> set[str]:
    """The value as each sink may have encoded it before it reaches the writer."""
    xml = html.escape(value, quote=True)
    amp = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    workflow = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    in_json = {json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    forms = {
        value,
        *in_json,
        # JSON text inside a JSON string: a compacted invocation is its JSON text, which the
        # serialisation of its case escapes again (``Redactor._clean``)
        *(json.dumps(form, ensure_ascii=False)[1:-1] for form in in_json),
        xml,
        amp,
        quote(value, safe=""),
        quote(value),
        workflow,
        workflow.replace(":", "%3A").replace(",", "%2C"),
    }
    for markup in (xml, amp):  # Markdown escapes; @-mentions broken with a zero-width space
        md = _MD_SPECIAL.sub(r"\\\1", markup)
        forms |= {md, md.replace("@", "@\u200b")}
    forms.add(value.replace("@", "@\u200b"))
    forms |= _markdown_forms(value)
    return {f for f in forms if len(f) >= MIN_SECRET}


def _markdown_forms(value: str) -> set[str]:
    """The value as the Markdown reports render it. Their escaping of ``_`` and of a line's
    first character depends on the neighbours, so the forms with and without those escapes."""
    forms: set[str] = set()
    for form in (str(escape.md(value)), str(escape.html(value))):
        forms.add(form)
        if form.startswith("\\"):  # a line-start escape, absent mid-line
            forms.add(form[1:])
        for f in list(forms):
            head = f[1:] if f.startswith("\\_") else f
            tail = head[:-2] + "_" if head.endswith("\\_") else head
            forms |= {head, tail, (f[:-2] + "_") if f.endswith("\\_") else f}
    return forms


def url_secrets(url: str | None) -> list[str]:
    """The password and the credential-like query values of a URL."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = []
    if parts.password:
        found += [parts.password, unquote(parts.password)]
    if parts.username and parts.password is None:
        found += [parts.username]  # https://TOKEN@host: the user part is the credential
    names = re.compile(rf"(?i)^(?:{_CRED_PARAMS})$")
    for item in re.split(r"[&;]", parts.query):
        name, sep, value = item.partition("=")
        if sep and value and names.match(name):
            found += [value, unquote(value)]
    return found


class Redactor:
    """Replaces known secret values and secret shapes by ``***``. Thread-safe to use; values
    are added before the run starts."""

    def __init__(self, secrets: Iterable[str] = (), on_new: Callable[[str], None] | None = None):
        self._values: set[str] = set()
        self._forms: tuple[str, ...] = ()  # every encoded form of every value, longest first
        self._pattern: re.Pattern[str] | None = None
        self._trigger = _Trigger(())
        self._lock = threading.Lock()
        self.on_new = on_new
        self.generation = 0  # counts the additions that brought new secrets
        # counts the scrub() calls that redacted something: what was computed from an object
        # before such a one is stale (one that found nothing leaves every text as it was)
        self.scrubs = 0
        self._redacted = False
        # what the next scrub need not search again (see :meth:`vouch`): by id, the object
        # (held, so that no other object takes its id) and the generation it was searched under
        self._vouched: dict[int, tuple[Any, int]] = {}
        self.add(*secrets)

    @property
    def secrets(self) -> frozenset[str]:
        return frozenset(self._values)

    def add(self, *values: str | None) -> None:
        """Treat these values as secrets from now on (too-short ones are ignored)."""
        new = []
        with self._lock:
            for value in values:
                if not isinstance(value, str):
                    continue
                value = value.strip()
                if len(value) < MIN_SECRET or value in self._values:
                    continue
                self._values.add(value)
                new.append(value)
            if new:
                forms = sorted({f for v in self._values for f in _variants(v)}, key=len)
                self._forms = tuple(reversed(forms))
                self._pattern = re.compile("|".join(re.escape(f) for f in self._forms))
                self._trigger = _Trigger(self._forms)
                self.generation += 1
        if self.on_new:
            for value in new:
                self.on_new(value)

    def text(self, value: str) -> str:
        """The string with every secret replaced by ``***``."""
        if len(value) < MIN_SECRET:
            return value  # no secret or shape is this short
        lowered = value.lower()
        if not self._trigger.found(lowered):
            # nearly every string: one search for all the forms and anchors, nothing to do (far
            # cheaper than a search per form and anchor)
            return value
        if len(value) > _LONG:
            for form in self._forms:
                if form in value:
                    value = value.replace(form, MASK)
        elif self._pattern is not None:
            value = self._pattern.sub(MASK, value)
        lowered = value.lower()
        for anchors, shape, replacement in _SHAPES:
            if any(anchor in lowered for anchor in anchors):
                value = shape.sub(replacement, value)
        return value

    __call__ = text

    def vouch(self, obj: Any, text: str) -> None:
        """``text`` is ``obj`` as JSON with every string it holds (a case's line in the
        results file): when nothing in it is to redact, the next :meth:`scrub` takes ``obj`` as
        searched, unless a secret is learnt meanwhile — a large run's cases are not written out
        a second time to be searched once more. Text with U+FFFD (lone surrogates replaced on
        the way) vouches for nothing: its strings are not quite the object's."""
        if "\ufffd" in text or self._trigger.found(text.lower()):
            return
        with self._lock:
            self._vouched[id(obj)] = (obj, self.generation)

    def _searched(self, obj: Any) -> bool:
        entry = self._vouched.get(id(obj))
        return entry is not None and entry[0] is obj and entry[1] == self.generation

    def scrub(self, obj: Any, units: tuple[type, ...] = ()) -> Any:
        """Redact every string reachable from ``obj`` (dataclasses, pydantic models, dicts,
        lists) in place, and return it: run results are scrubbed once before any report is
        rendered, so no renderer can truncate a secret into a prefix that no longer matches.

        Objects of the ``units`` types (a run's cases) are first serialised by pydantic-core
        and searched once, as :meth:`text` searches a string; one without anything to redact
        (nearly all) is not walked string by string. Sound because JSON writes every string
        character by character (escapes included) and every secret is searched for in its
        JSON-escaped forms too."""
        self._redacted = False
        try:
            out = _scrub(self, obj, set(), units)
        finally:
            self._vouched = {}  # once: what was vouched for is searched now
        if self._redacted:
            self.scrubs += 1
        return out

    def _clean(self, obj: Any) -> bool:
        """Nothing in ``obj`` to redact, by one search of its JSON text; False if unsure."""
        try:
            text = _json(obj).decode()
        except Exception:  # lone surrogates, types pydantic-core cannot write: walk it
            return False
        return not self._trigger.found(text.lower())


def _json(obj: Any) -> bytes:
    """``obj`` as JSON text holding every string in it (field names aside)."""
    serializer = serializer_for(type(obj))
    if serializer is None:  # hints it cannot resolve: values are looked at one by one
        return pydantic_core.to_json(obj, inf_nan_mode="null")
    # a value other than its hint says (a str for a Status) is written as what it is
    return serializer.to_json(obj, warnings=False)


_ATOMIC = (type(None), bool, int, float, bytes)
_FIELDS: dict[type, tuple[str, ...] | None] = {}  # dataclass field names per type (None: not one)


def _scrub(redactor: Redactor, obj: Any, seen: set[int], units: tuple[type, ...] = ()) -> Any:
    kind = type(obj)
    if kind is str:
        new = redactor.text(obj)
        if new != obj:
            redactor._redacted = True
        return new
    if kind in _ATOMIC:
        return obj
    if id(obj) in seen:
        return obj
    seen.add(id(obj))
    if kind in units and (redactor._searched(obj) or redactor._clean(obj)):
        return obj
    if kind is list:
        for i, item in enumerate(obj):
            obj[i] = _scrub(redactor, item, seen, units)
    elif kind is dict:
        items = list(obj.items())
        obj.clear()
        for key, item in items:
            obj[_scrub(redactor, key, seen, units)] = _scrub(redactor, item, seen, units)
    elif kind is tuple:
        return tuple(_scrub(redactor, item, seen, units) for item in obj)
    elif hasattr(obj, "__pydantic_fields__"):
        state = obj.__dict__
        for name, value in state.items():
            if type(value) not in _ATOMIC:
                state[name] = _scrub(redactor, value, seen, units)
        extra = getattr(obj, "__pydantic_extra__", None)
        if extra:
            _scrub(redactor, extra, seen, units)
    else:
        names = _FIELDS.get(kind, ())
        if names == ():
            names = _FIELDS[kind] = (
                tuple(f.name for f in dataclasses.fields(obj))
                if dataclasses.is_dataclass(obj)
                else None
            )
        for name in names or ():
            value = getattr(obj, name)
            if type(value) not in _ATOMIC:
                new = _scrub(redactor, value, seen, units)
                if new is not value:
                    object.__setattr__(obj, name, new)
    return obj


def env_secrets(env: Mapping[str, str]) -> list[str]:
    """Values of environment variables that hold credentials by their name."""
    return [value for name, value in env.items() if _SECRET_NAME.search(name) and value]


# the runner's file commands: an agent writing to them would set the job's environment, path,
# outputs or summary — never passed, whatever --agent-env says
_NEVER = frozenset(
    ("GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_STATE", "GITHUB_STEP_SUMMARY")
)


def withheld(name: str) -> bool:
    """Whether the variable ``name`` is one of the job's credentials a child agent never sees
    unless the workflow passes it (``--agent-env``)."""
    return bool(_CHILD_DROP.match(name))


def child_environment(
    env: Mapping[str, str], drop: Iterable[str] = (), keep: Iterable[str] = ()
) -> dict[str, str]:
    """The environment for a child agent: without GitHub's tokens, the action's inputs, the
    Actions runtime's credentials and the named variables (the judge's key, the agent's token),
    except those the user passes through explicitly (``keep``); never the runner's file
    commands."""
    dropped = set(drop)
    kept = set(keep) - _NEVER
    return {
        name: value
        for name, value in env.items()
        if name not in _NEVER and (name in kept or not (withheld(name) or name in dropped))
    }


PR_SET_DUMPABLE, PR_GET_DUMPABLE = 4, 3


def undumpable() -> bool:
    """Make this process undumpable (Linux ``prctl(PR_SET_DUMPABLE, 0)``) before any agent
    starts: its ``/proc/<pid>/environ`` and memory, which hold the job's token and the judge's
    key, are then readable by root only, not by an agent running as the same user. False where
    the platform has no such call."""
    import ctypes
    import ctypes.util
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        # the interpreter's own symbols hold libc's prctl: no `ldconfig -p` (find_library runs
        # it, a process at every start) unless they do not
        prctl = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None)
        if prctl is None:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            prctl = libc.prctl
        return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


# --- the process's redactor ---------------------------------------------------------------

_active = Redactor()


def current() -> Redactor:
    return _active


def install(redactor: Redactor) -> Redactor:
    """Make ``redactor`` the process's redactor; returns the previous one."""
    global _active
    previous, _active = _active, redactor
    return previous


def text(value: str) -> str:
    return _active.text(value)


def register_settings(settings: Any, env: Mapping[str, str]) -> None:
    """Add the secrets a run's settings point at: the agent's and the judge's URL credentials,
    the agent's bearer token and header values, the judge's API key."""
    agent, judge = settings.agent, settings.judge
    values: list[str | None] = []
    values += url_secrets(agent.url)
    values += url_secrets(judge.base_url)
    values += list(agent.headers.values())
    for name in (agent.token_env, judge.api_key_env, getattr(settings, "cache_sign_key_env", None)):
        if name:
            values.append(env.get(name))
    _active.add(*values)
