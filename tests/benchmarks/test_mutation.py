"""``benchmarks/mutation.py``'s pure parts: which mutants are of annotations, left out of the
population as equivalent by construction (the benchmark itself is never run here)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import mutation

SOURCE = """from __future__ import annotations

def f(a: int | None, *rest: str | bytes) -> list[int | None]:
    out: list[int | None] = [a | 1]
    return out
"""


def test_annotations_are_found_in_signatures_and_annotated_assignments() -> None:
    spans = mutation.annotation_spans(SOURCE)
    assert ((3, 9), (3, 19)) in spans  # a: int | None
    assert ((3, 28), (3, 39)) in spans  # *rest: str | bytes
    assert ((3, 44), (3, 60)) in spans  # -> list[int | None]
    assert ((4, 9), (4, 25)) in spans  # out: list[int | None]
    assert not any(a <= (4, 32) < b for a, b in spans)  # a | 1: code that runs


def test_a_module_whose_annotations_are_evaluated_has_none_left_out() -> None:
    assert mutation.annotation_spans(SOURCE.replace("from __future__ import annotations", "")) == []
