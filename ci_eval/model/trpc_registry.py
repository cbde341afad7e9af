"""The names a trpc-agent-go metric's criterion asks its metric registry for
(``evaluation/metric/registry/registry.go``, trpc-group/trpc-agent-go at 0e352fdd). Pure, and
light: the metrics file's loader asks it before any case runs."""

from __future__ import annotations

from typing import Any


def _named(crit: Any, kind: str, loc: list[Any]) -> list[tuple[list[Any], str]]:
    if isinstance(crit, dict) and crit.get("compareName"):
        return [([*loc, "compareName"], f"{kind} compare {crit['compareName']}")]
    return []


def _strategy_names(strategy: Any, loc: list[Any]) -> list[tuple[list[Any], str]]:
    if not isinstance(strategy, dict):
        return []
    return [
        *_named(strategy.get("name"), "text", [*loc, "name"]),
        *_named(strategy.get("arguments"), "json", [*loc, "arguments"]),
        *_named(strategy.get("result"), "json", [*loc, "result"]),
    ]


def unresolvable_names(criterion: dict[str, Any]) -> list[tuple[list[Any], str]]:
    """Each ``compareName`` of a trpc-agent-go metric's criterion (its JSON path under the
    criterion, and what trpc calls it: ``text compare NAME``), in the order
    ``registry.Resolve`` (evaluation/metric/registry/registry.go) looks them up.

    A compare name is Go code the evaluating program registered; trpc-agent-go's registry starts
    empty, and an unregistered name fails ``Evaluate`` before any case is scored
    (``resolveMetricExtensions`` in evaluation/service/local/local.go). ci-eval can call no Go
    function, so every one is such a name. Where the criterion's own ``compareName`` is set, trpc
    looks up nothing under it (``rouge.tokenizerName`` is not here: ci-eval scores it with its
    own tokenizer and says so)."""
    names: list[tuple[list[Any], str]] = []
    tool = criterion.get("toolTrajectory")
    if isinstance(tool, dict):
        names += _named(tool, "tool trajectory", ["toolTrajectory"])
        if not tool.get("compareName"):
            names += _strategy_names(
                tool.get("defaultStrategy"), ["toolTrajectory", "defaultStrategy"]
            )
            per_tool = tool.get("toolStrategy")
            for name, strategy in per_tool.items() if isinstance(per_tool, dict) else ():
                names += _strategy_names(strategy, ["toolTrajectory", "toolStrategy", name])
    final = criterion.get("finalResponse")
    if isinstance(final, dict):
        names += _named(final, "final response", ["finalResponse"])
        if not final.get("compareName"):
            names += _named(final.get("text"), "text", ["finalResponse", "text"])
            names += _named(final.get("json"), "json", ["finalResponse", "json"])
    return names


def unresolvable_reason(what: str) -> str:
    """The error for one name :func:`unresolvable_names` found: trpc-agent-go's, and why
    ci-eval cannot do otherwise."""
    return (
        f"{what} not found (trpc-agent-go's metric registry fails the evaluation on it before "
        "any case is scored; ci-eval cannot call a compare function a Go program registers: "
        "remove compareName to use the built-in rule)"
    )
