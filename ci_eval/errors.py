"""The one error type that user input can cause, rendered as a single line."""

from __future__ import annotations

# the exit codes: gate passed, gate failed, usage or input error, infrastructure errors
EXIT_OK, EXIT_GATE, EXIT_INPUT, EXIT_INFRA = 0, 1, 2, 3


class InputError(Exception):
    """A problem with something the user gave us: a file, an option, a config.

    Rendered as ``path:line:col: json.path: message`` with the parts that are known, so that
    editors and CI log parsers can jump to the place.
    """

    exit_code = EXIT_INPUT

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        col: int | None = None,
        json_path: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.col = col
        self.json_path = json_path

    def __str__(self) -> str:
        head = ""
        if self.path:
            head = self.path
            if self.line is not None:
                head += f":{self.line}"
                if self.col is not None:
                    head += f":{self.col}"
            head += ": "
        if self.json_path:
            head += f"{self.json_path}: "
        return head + _one_line(self.message)


class Unreachable(InputError):
    """Something the run needs did not answer before the first case (the agent's server): an
    infrastructure error, exit 3 as every unreachable agent is, said in one line and stopped
    where an input error is (so it is one)."""

    exit_code = EXIT_INFRA


class NotAnEvalSet(InputError):
    """A JSON file that is recognisably something else (a session, a result, an agent spec)."""


def _one_line(text: str) -> str:
    return " ".join(text.split())


class ValidationFailed(InputError):
    """A file with one or more problems; ``str()`` is the first, ``problems`` holds them all."""

    def __init__(self, problems: list[InputError]) -> None:
        first = problems[0]
        super().__init__(
            first.message,
            path=first.path,
            line=first.line,
            col=first.col,
            json_path=first.json_path,
        )
        self.problems = problems
