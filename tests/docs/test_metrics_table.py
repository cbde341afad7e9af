"""docs/metrics.md cannot drift: it names every metric google-adk defines, says computed exactly
for the ones ci-eval registers, and every test it cites exists."""

from __future__ import annotations

import re

import pytest

from ci_eval.metrics import NOT_COMPUTED, lookup
from tests.conftest import REPO

TABLE = (REPO / "docs/metrics.md").read_text("utf-8")
ROWS = {
    m.group(1): (m.group(2), m.group(3))
    for m in re.finditer(r"^\| `([a-z0-9_]+)` \| (yes|no) \|[^|]*\|(.*)\|$", TABLE, re.M)
}


def test_every_metric_of_google_adk_has_a_row() -> None:
    metrics = pytest.importorskip("google.adk.evaluation.eval_metrics")
    assert sorted(ROWS) == sorted(m.value for m in metrics.PrebuiltMetrics)


@pytest.mark.parametrize("name", sorted(ROWS))
def test_computed_says_what_the_registry_has(name: str) -> None:
    computed, _ = ROWS[name]
    assert (computed == "yes") == (lookup(name) is not None)
    assert (computed == "no") == (name in NOT_COMPUTED)


def test_every_cited_test_exists() -> None:
    cited = re.findall(r"`(tests/[\w/]+\.py)((?:::\w+)?)`", TABLE)
    following = re.findall(r"`(tests/[\w/]+\.py)::\w+`, `::(\w+)`", TABLE)
    assert cited
    for path, test in cited + [(p, f"::{t}") for p, t in following]:
        text = (REPO / path).read_text("utf-8")
        if test:
            assert f"def {test[2:]}(" in text, f"{path}{test}"
