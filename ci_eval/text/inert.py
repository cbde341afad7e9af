"""Agent text made inert for log-like channels: the terminal, workflow annotations, JUnit
messages and bodies (which consumers such as mikepenz/action-junit-report print raw into their
own step's log), and the JSON files people ``cat`` in CI.

CI runners read commands out of any line a step prints. What each matcher recognises (checked
against their source; the tests carry ports of these matchers):

- GitHub Actions runner (``src/Runner.Common/ActionCommand.cs``): ``TryParseV2`` takes a line
  that starts with ``::`` after ``TrimStart()`` (any Unicode whitespace); ``TryParse`` takes
  ``##[`` *anywhere* in the line (``message.IndexOf("##[")``).
- Azure Pipelines agent: ``##vso[`` anywhere in the line (an ordinal ``IndexOf``; the
  azure-pipelines-task-lib output filter mirrors it byte for byte); the log viewer also
  formats ``##[section]``-style lines, which the ``##[`` rule covers.
- TeamCity: ``##teamcity[`` anywhere in the line (``ServiceMessagesParser`` scans the text).

Both runners split lines on ``\\n``, ``\\r`` and ``\\r\\n`` (.NET ``ReadLine``, Java
``BufferedReader``), so a carriage return is a line break here too.

The text stays readable: a zero-width space goes between the two characters that start a
command (``:\\u200b:``, ``#\\u200b#vso[``), so a reader sees the same text and no matcher
matches. ANSI escape sequences and the C0/C1 control characters (bar tab and newline) are
removed first, so they cannot hide a command from this pass and then vanish in the terminal.
"""

from __future__ import annotations

import re

ZWSP = "\u200b"

# CSI, OSC (ended by BEL or ST), and two-character escapes
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# C0 bar \t and \n, DEL, C1; the characters XML 1.0 cannot hold (lone surrogates, U+FFFE/
# U+FFFF), so every consumer of this text can store it; and the bidirectional controls that
# make text read otherwise than it is (Trojan Source: U+061C, U+200E-F, U+202A-E, U+2066-9)
_CONTROLS = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff"
    r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
_BREAKS = re.compile(r"\r\n?|[\u2028\u2029]")
# GitHub's ::command, at the start of a line after optional whitespace
_LINE_START_COLONS = re.compile(r"^(\s*):(?=:)", re.MULTILINE)
# GitHub's ##[, Azure's ##vso[, TeamCity's ##teamcity[ — anywhere; case-insensitive to be safe
_HASH_COMMANDS = re.compile(r"#(?=#(?:vso|teamcity)?\[)", re.IGNORECASE)


# text without any of these is left as it is by every function here (nearly all text is)
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_QUIET = re.compile(rf"[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u2028\u2029#{_BIDI}]|::")
# the same for text that keeps its lines: tabs and line feeds stay as they are
_QUIET_TEXT = re.compile(
    rf"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u2028\u2029#{_BIDI}]|::"
)

# the same for ASCII text, as what is left once the characters that need nothing are deleted:
# a long text is checked in C faster than by the regex (a report's failure
# bodies, a terminal's lines)
_PLAIN = bytes(c for c in range(0x20, 0x7F) if c != ord("#"))
_PLAIN_TEXT = _PLAIN + b"\t\n"
_LONG = 128


def _quiet(text: str, plain: bytes, pattern: re.Pattern[str]) -> bool:
    if len(text) >= _LONG and text.isascii():
        return not text.encode("ascii").translate(None, plain) and "::" not in text
    return pattern.search(text) is None


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text) if "\x1b" in text else text  # every sequence starts with ESC


def strip_controls(text: str) -> str:
    """ANSI sequences and control characters out; line breaks normalised to ``\\n``."""
    return _CONTROLS.sub("", _BREAKS.sub("\n", _ANSI.sub("", text)))


def defang(text: str) -> str:
    """Break every CI service-message prefix in already control-free text."""
    return _LINE_START_COLONS.sub(r"\1:" + ZWSP, _HASH_COMMANDS.sub("#" + ZWSP, text))


def inert(text: object) -> str:
    """Agent text safe for any log-like channel: no controls, no CI command prefixes."""
    text = str(text)
    if _quiet(text, _PLAIN_TEXT, _QUIET_TEXT):
        return text
    return defang(strip_controls(text))


def inert_line(text: object) -> str:
    """One line of inert text (line breaks become spaces), for messages and titles."""
    text = str(text)
    if _quiet(text, _PLAIN, _QUIET):
        return text
    return inert(" ".join(strip_controls(text).split("\n")))


def inert_json(text: str) -> str:
    """Serialised JSON with ``##`` written as ``\\u0023#``: the same data for every JSON
    reader, but no line of the file holds a service message. (``#`` only occurs inside JSON
    strings, where the escape is valid; JSON text escapes line breaks, so ``::`` never starts
    a line of it.)"""
    return re.sub(r"#(?=#)", r"\\u0023", text)
