"""The kinds of value the results model holds, as annotations that are also its file's schema:
pydantic builds the results file's reader, its checks and its writer from the model's
dataclasses and these (:mod:`ci_eval.model.results_file`). At run time they are plain ``str``,
``float``, ``int``, ``bool`` and ``list``; the checks run only when a file is read.

A value read from a file must be what its annotation says, nothing coerced (``"0.5"`` is not a
number, ``1`` is not a flag), finite (NaN and infinities have no JSON spelling), and where it
is a count or seconds, not negative. ``null`` for a list or a flag means its default, as
earlier ci-eval versions wrote it.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, TypeVar

from pydantic import BeforeValidator, ConfigDict, Field, PlainSerializer, Strict

T = TypeVar("T")

#: every record of the results model: finite numbers only, unknown keys ignored (a newer
#: ci-eval may add some), JSON names where the model's differ (aliases)
RECORD = ConfigDict(
    allow_inf_nan=False,
    ser_json_inf_nan="null",
    validate_by_alias=True,
    validate_by_name=False,
    serialize_by_alias=True,
)
#: a field the results file holds but writes by hand (text spliced in, cases one at a time) or
#: never (what the model works out instead): ``Annotated[T, APART]``
APART = Field(exclude=True)


def _none_is(default: Any) -> Any:
    return BeforeValidator(lambda value: default() if value is None else value)


def _round4(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


Text = Annotated[str, Strict()]
# an int is a number too (read as a float: a threshold of 1 is written back as 1.0)
Number = Annotated[float, Strict()]
Count = Annotated[int, Strict(), Field(ge=0)]
# measured durations: written to a tenth of a millisecond
Seconds = Annotated[float, Strict(), Field(ge=0), PlainSerializer(_round4, when_used="json")]
# a whole run's wall time: to the millisecond, as the reports show it (a report of the file
# then shows what the run showed: rounding twice could move the last digit)
RunSeconds = Annotated[
    float, Strict(), Field(ge=0), PlainSerializer(lambda v: round(v, 3), when_used="json")
]
Flag = Annotated[bool, Strict(), _none_is(bool)]
Data = Annotated[dict[str, Any], _none_is(dict)]  # free-form JSON a dialect or metric keeps
# a list whose null in a file means empty: Items[Number | None]
Items = Annotated[list[T], _none_is(list)]

_STAMP = re.compile(r"[\w:+\-. ]*")


def _timestamp(value: Any) -> Any:
    # a date and time, or the short label a test or tool put there; never markup or mentions
    if isinstance(value, str) and not _STAMP.fullmatch(value):
        raise ValueError("not a date and time")
    return value


Timestamp = Annotated[str, Strict(), BeforeValidator(_timestamp)]


class Invalid(Exception):
    """A value the model does not allow: where (JSON path parts) and why, in one line."""

    def __init__(self, loc: list[str | int], message: str) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message

    def path(self) -> str:
        text = "$"
        for part in self.loc:
            text += f"[{part}]" if isinstance(part, int) else f".{part}"
        return text
