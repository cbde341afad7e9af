"""docs/metrics.md cannot drift: its ADK table names every metric google-adk defines, says
computed exactly for the ones ci-eval registers, its adk-rs table names metrics registered as
adk-rs's, and every test it cites exists."""

from __future__ import annotations

import re

import pytest

from ci_eval.metrics import NOT_COMPUTED, lookup
from tests.conftest import REPO

TABLE = (REPO / "docs/metrics.md").read_text("utf-8")
# each source tool's table sits in its own section: ADK's first, then "## adk-rs"
ADK_SECTION, _, ADK_RS_SECTION = TABLE.partition("\n## adk-rs\n")
ROW = re.compile(r"^\| `([a-z0-9_]+)` \| (yes|no) \|[^|]*\|(.*)\|$", re.M)
ROWS = {m.group(1): (m.group(2), m.group(3)) for m in ROW.finditer(ADK_SECTION)}
ADK_RS_ROWS = {m.group(1): m.group(2) for m in ROW.finditer(ADK_RS_SECTION)}


def test_every_metric_of_google_adk_has_a_row() -> None:
    metrics = pytest.importorskip("google.adk.evaluation.eval_metrics")
    assert sorted(ROWS) == sorted(m.value for m in metrics.PrebuiltMetrics)


@pytest.mark.parametrize("name", sorted(ROWS))
def test_computed_says_what_the_registry_has(name: str) -> None:
    computed, _ = ROWS[name]
    assert (computed == "yes") == (lookup(name) is not None)
    assert (computed == "no") == (name in NOT_COMPUTED)


def test_the_adk_rs_table_names_adk_rs_metrics() -> None:
    assert ADK_RS_ROWS, "docs/metrics.md has an adk-rs section with its metrics"
    for name, computed in ADK_RS_ROWS.items():
        metric = lookup(name, "adk-rs")
        assert computed == "yes" and metric is not None and metric.origin == "adk-rs", name


def test_every_cited_test_exists() -> None:
    cited = re.findall(r"`(tests/[\w/]+\.py)((?:::\w+)?)`", TABLE)
    following = re.findall(r"`(tests/[\w/]+\.py)::\w+`, `::(\w+)`", TABLE)
    assert cited
    for path, test in cited + [(p, f"::{t}") for p, t in following]:
        text = (REPO / path).read_text("utf-8")
        if test:
            assert f"def {test[2:]}(" in text, f"{path}{test}"
