"""Ports of the command matchers CI runners apply to every line a step prints.

Each port keeps the original's decisions (where the prefix may stand, what ends the command)
and, to be strict, accepts any command name where the original also checks a registry.

- GitHub Actions: actions/runner ``src/Runner.Common/ActionCommand.cs`` — ``TryParseV2``
  (``message.TrimStart()`` then ``StartsWith("::")``, a second ``::`` after it, the command name
  up to the first space) and ``TryParse`` (``message.IndexOf("##[")`` anywhere, then ``]``).
- Azure Pipelines: the agent's ``Command.TryParse`` — ``message.IndexOf("##vso[")`` anywhere
  (ordinal), then ``]``; the log viewer's ``##[group]``-style formatting lines are GitHub's
  ``##[`` rule above.
- TeamCity: ``ServiceMessagesParser`` scans text for ``##teamcity[`` anywhere and reads up to
  the closing ``]``.

Lines split as .NET ``StreamReader.ReadLine`` and Java ``BufferedReader.readLine`` split them:
on ``\\r\\n``, ``\\r`` and ``\\n``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LINES = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Match:
    ci: str
    command: str
    line: str


def lines(text: str) -> list[str]:
    return LINES.split(text)


def github_v2(line: str) -> Match | None:
    message = line.lstrip()  # .NET TrimStart(): any Unicode whitespace, as str.lstrip()
    if not message.startswith("::"):
        return None
    end = message.find("::", 2)
    if end < 0:
        return None
    info = message[2:end]
    name = info.split(" ", 1)[0]
    return Match("github", name, line) if name else None


def github_v1(line: str) -> Match | None:
    start = line.find("##[")
    if start < 0:
        return None
    end = line.find("]", start)
    if end < 0:
        return None
    name = line[start + 3 : end].split(" ", 1)[0]
    return Match("github-v1", name, line) if name else None


def azure(line: str) -> Match | None:
    start = line.find("##vso[")
    if start < 0:
        return None
    end = line.find("]", start)
    if end < 0:
        return None
    return Match("azure", line[start + 6 : end].split(" ", 1)[0], line)


def teamcity(line: str) -> Match | None:
    start = line.find("##teamcity[")
    if start < 0:
        return None
    end = line.find("]", start)
    if end < 0:
        return None
    return Match("teamcity", line[start + 11 : end].split(" ", 1)[0], line)


MATCHERS = (github_v2, github_v1, azure, teamcity)


def commands(text: str) -> list[Match]:
    """Every service message any of the four matchers recognises in the text."""
    return [m for line in lines(text) for f in MATCHERS if (m := f(line)) is not None]
