"""The gate's few plain values that the settings table and the results model share: what
``--fail-on`` may name, and the defaults a recorded comparison without them means. Plain
Python, no pydantic: the settings (and so ``--help``) import it without the results model."""

from __future__ import annotations

from typing import Literal

FailOn = Literal["failure", "regression", "error", "not-evaluated", "usage", "judging-changed"]

DEFAULT_MIN_HISTORY = 5
DEFAULT_SIGNIFICANCE = 0.05
