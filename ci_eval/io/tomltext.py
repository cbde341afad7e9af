"""TOML text as the files a pull request controls may hold it: invalid, or nested past any
setting's depth (Python's parser recurses, and a value 300 deep breaks the serialisers that
copy settings into the results later)."""

from __future__ import annotations

import tomllib
from typing import Any

from ci_eval.errors import InputError
from ci_eval.io.jsonfast import MAX_NESTING, TooDeep, check_nesting


def parse(text: str, path: str) -> dict[str, Any]:
    """The tables of ``text`` (read from ``path``); an InputError naming the file otherwise."""
    try:
        data = tomllib.loads(text)
        check_nesting(data, MAX_NESTING)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", path=path) from None
    except (TooDeep, RecursionError):
        raise InputError(
            f"arrays or tables nested deeper than {MAX_NESTING} levels: no setting is", path=path
        ) from None
    return data
