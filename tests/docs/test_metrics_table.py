"""docs/metrics.md cannot drift: its ADK table names every metric google-adk defines, says
computed exactly for the ones ci-eval registers; each other tool's table (adk-rs,
trpc-agent-go, watsonx Orchestrate) names exactly the metrics registered as that tool's, and the
ones it defines that ci-eval does not compute; and every test it cites exists."""

from __future__ import annotations

import re

import pytest

from ci_eval.metrics import NOT_COMPUTED, REGISTRY, lookup
from tests.conftest import REPO

TABLE = (REPO / "docs/metrics.md").read_text("utf-8")
# each source tool's table sits in its own "## TOOL" section, after ADK's
ADK_SECTION, *_SECTIONS = re.split(r"^## ", TABLE, flags=re.M)
SECTIONS = {part.split("\n", 1)[0]: part for part in _SECTIONS}
ROW = re.compile(r"^\| `([a-z0-9_]+)` \| (yes|no) \|[^|]*\|(.*)\|$", re.M)
ROWS = {m.group(1): (m.group(2), m.group(3)) for m in ROW.finditer(ADK_SECTION)}
TOOLS = {"adk-rs": "adk-rs", "trpc-agent-go": "trpc", "watsonx Orchestrate": "watsonx"}


def test_every_metric_of_google_adk_has_a_row() -> None:
    metrics = pytest.importorskip("google.adk.evaluation.eval_metrics")
    assert sorted(ROWS) == sorted(m.value for m in metrics.PrebuiltMetrics)


@pytest.mark.parametrize("name", sorted(ROWS))
def test_computed_says_what_the_registry_has(name: str) -> None:
    computed, _ = ROWS[name]
    assert (computed == "yes") == (lookup(name) is not None)
    assert (computed == "no") == (name in NOT_COMPUTED)


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_each_tools_table_names_its_metrics(tool: str) -> None:
    rows = {m.group(1): m.group(2) for m in ROW.finditer(SECTIONS[tool])}
    registered = {m.name for m in REGISTRY.values() if m.origin == tool}
    assert {name for name, computed in rows.items() if computed == "yes"} == registered
    for name, computed in rows.items():
        metric = lookup(name, TOOLS[tool])
        assert (computed == "yes") == (metric is not None and metric.origin == tool), name
    assert {n for n, c in rows.items() if c == "no"} == {
        n for n, t in NOT_COMPUTED.items() if t == tool
    }


def test_every_cited_test_exists() -> None:
    cited = re.findall(r"`(tests/[\w/]+\.py)((?:::\w+)?)`", TABLE)
    following = re.findall(r"`(tests/[\w/]+\.py)::\w+`, `::(\w+)`", TABLE)
    assert cited
    for path, test in cited + [(p, f"::{t}") for p, t in following]:
        text = (REPO / path).read_text("utf-8")
        if test:
            assert f"def {test[2:]}(" in text, f"{path}{test}"
