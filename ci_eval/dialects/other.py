"""JSON that lives beside eval sets but is not one: named so it is skipped, never crashed on."""

from __future__ import annotations

from typing import Any


def _keys(data: Any) -> set[str]:
    return set(data) if isinstance(data, dict) else set()


def looks_like(data: Any) -> str | None:
    """What a non-eval-set JSON document looks like, or None when it is not one we know."""
    if isinstance(data, str):
        return "an eval result file (JSON-string-wrapped, ADK 1.x / trpc-agent-go gen 1)"
    keys = _keys(data)
    if keys & {"eval_set_result_id", "evalSetResultId", "eval_case_results", "evalCaseResults"}:
        return "an eval result file (.evalset_result.json)"
    if "schema_version" in keys and "sets" in keys:
        return "a ci-eval results file"
    if keys & {"resourceSpans", "resource_spans", "batches", "resourceLogs"} or (
        isinstance(data, dict)
        and isinstance(data.get("data"), list)
        and any(isinstance(t, dict) and "spans" in t for t in data["data"][:1])
    ):  # what connectors/traces.py replays
        return "an OpenTelemetry trace file (Jaeger, OTLP or Tempo JSON): give it to --replay"
    if {"id", "events"} <= keys and keys & {"app_name", "appName"}:
        return "an ADK session file"
    if "spec_version" in keys and keys & {"tools", "kind", "llm", "instructions"}:
        return "a watsonx Orchestrate agent or tool spec"
    if keys & {
        "total_tool_calls",
        "tool_call_precision",
        "tool_call_recall",
        "journey_success",
        "is_success",
        "text_match",
    }:
        return "a watsonx Orchestrate metrics output"
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data):
        first = data[0]
        if {"message", "reason"} <= set(first):
            return "a watsonx Orchestrate analysis output (.messages.analyze.json)"
        if {"role", "content"} <= set(first) and ("type" in first or "event" in first):
            return "a watsonx Orchestrate messages output (.messages.json)"
        if {"role", "content"} <= set(first):
            return "a chat transcript (a list of messages)"
    return None
