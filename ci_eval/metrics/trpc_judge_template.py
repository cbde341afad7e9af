"""trpc-agent-go's template judge (``llm_judge_template``): the metric's own prompt, its
``{{variable}}`` placeholders bound to parts of the invocations or the metric.

Sources: trpc-group/trpc-agent-go at commit 0e352fdd1428d30a8d978d39877f5a7b2591ccc1,
``evaluation/evaluator/llm/operator/messagesconstructor/template/template.go`` (bindings),
``internal/prompt/core/text.go`` (the double-brace syntax, ``ErrorOnUnknown``),
``evaluation/internal/jsonpath/extract.go`` (a binding's ``path``) and
``evaluation/evaluator/llm/operator/registry/`` (scorer and aggregator names). Pure.
"""

from __future__ import annotations

import json
from typing import Any

from ci_eval.metrics.trpc_judge_text import GoNumber, GoStruct, go_json, message_text
from ci_eval.model import Invocation

RESPONSE_SCORERS = ("single_score", "rubric_scores", "boolean", "categorical")


class TemplateError(ValueError):
    """trpc's template constructor returns an error (the metric errors, as in trpc)."""


def _name(inner: str) -> tuple[str, bool] | None:
    """parseDoubleBraceName: the trimmed name, optional when it ends in "?"."""
    name = inner.strip()
    optional = name.endswith("?")
    name = name.removesuffix("?")
    if not name or "?" in name or any(c.isspace() or c in "{}'\"`" for c in name):
        return None
    return name, optional


def render_template(text: str, values: dict[str, str]) -> str:
    """promptcore.Render in double-brace mode with ErrorOnUnknown: ``{{ name }}`` its value,
    ``{{ name? }}`` its value or nothing; an unbound required name is an error."""
    out: list[str] = []
    unresolved: set[str] = set()
    i = last = 0
    while i < len(text):
        if not text.startswith("{{", i):
            i += 1
            continue
        end = text.find("}}", i + 2)
        if end < 0:
            i += 1
            continue
        raw = text[i : end + 2]
        out.append(text[last:i])
        parsed = _name(text[i + 2 : end])
        if parsed is None:
            out.append(raw)
        elif parsed[0] in values:
            out.append(values[parsed[0]])
        elif not parsed[1]:
            out.append(raw)
            unresolved.add(raw)
        i = last = end + 2
    out.append(text[last:])
    if unresolved:
        raise TemplateError(
            "render template prompt: prompt: unresolved placeholders: "
            + ", ".join(sorted(unresolved))
        )
    return "".join(out)


def _field(obj: Any, name: str) -> Any:
    """A Go struct field decoded from JSON (exact key, else any case)."""
    if not isinstance(obj, dict):
        return None
    if name in obj:
        return obj[name]
    return next((v for k, v in obj.items() if k.lower() == name.lower()), None)


def _trace_step(actuals: list[Invocation], source: dict[str, Any]) -> dict[str, Any]:
    """resolveTraceStep: the last step of the current invocation's execution trace whose
    NodeID is the selector's."""
    node_id = (source.get("selector") or {}).get("nodeID") or ""
    scope, field = source.get("scope"), source.get("field")
    if not node_id:
        raise TemplateError("trace selector nodeID is required")
    index = len(actuals) - 1
    trace = actuals[index].extensions.get("trpc", {}).get("executionTrace")
    if not trace:
        raise TemplateError(
            f"executionTrace is empty for {scope}.{field} at invocation index {index}"
        )
    steps = [s for s in _field(trace, "Steps") or [] if _field(s, "NodeID") == node_id]
    if not steps:
        raise TemplateError(
            f'trace step not found for {scope}.{field} nodeID "{node_id}" '
            f"at invocation index {index}"
        )
    return steps[-1]


def _trace_value(actuals: list[Invocation], source: dict[str, Any]) -> str:
    step = _trace_step(actuals, source)
    field = source.get("field")
    if field in ("traceStepInput", "traceStepOutput"):
        snapshot = _field(step, "Input" if field == "traceStepInput" else "Output")
        text = _field(snapshot, "Text") or ""
        if not text:
            node_id = (source.get("selector") or {}).get("nodeID")
            raise TemplateError(
                f'trace snapshot is empty for {source.get("scope")}.{field} nodeID "{node_id}" '
                f"at invocation index {len(actuals) - 1}"
            )
        return str(text)
    if field == "traceStepTools":
        tools = []
        for tool in _field(step, "Tools") or []:
            value = GoStruct()
            for key, go_name in (("id", "ID"), ("name", "Name"), ("arguments", "Arguments"),
                                 ("result", "Result"), ("error", "Error")):  # fmt: skip
                item = _field(tool, go_name)
                if item is not None and not (item == "" and key in ("id", "name", "error")):
                    value.append((key, item))
            tools.append(value)
        return go_json(tools, escape_html=False)
    skills = [
        GoStruct([("name", n)] if (n := _field(s, "Name")) else [])
        for s in _field(step, "Skills") or []
    ]
    return go_json(skills, escape_html=False)


def _rubrics_json(rubrics: list[dict[str, Any]]) -> str:
    visible = []
    for rubric in rubrics:
        if not isinstance(rubric, dict) or rubric.get("content") is None:
            continue
        value = GoStruct()
        if rubric.get("id"):
            value.append(("id", rubric["id"]))
        text = (rubric.get("content") or {}).get("text")
        value.append(("content", GoStruct([("text", text)] if text else [])))
        for key in ("description", "type"):
            if rubric.get(key):
                value.append((key, rubric[key]))
        visible.append(value)
    if not visible:
        raise TemplateError("metric rubrics are empty")
    return go_json(visible, escape_html=False)


def _source_value(
    source: dict[str, Any],
    actuals: list[Invocation],
    expecteds: list[Invocation],
    rubrics: list[dict[str, Any]],
) -> str:
    scope, field = source.get("scope"), source.get("field")
    unsupported = TemplateError(f"unsupported source {scope}.{field}")
    if scope == "actual":
        actual = actuals[-1]
        if field == "userContent":
            return message_text(actual.user_content)
        if field == "finalResponse":
            return message_text(actual.final_response)
        if field in ("traceStepInput", "traceStepOutput", "traceStepTools", "traceStepSkills"):
            return _trace_value(actuals, source)
        raise unsupported
    if scope == "expected":
        if field != "finalResponse":
            raise unsupported
        if expecteds[-1].final_response is None:
            raise TemplateError("expected finalResponse is empty")
        return message_text(expecteds[-1].final_response)
    if scope == "metric" and field == "rubrics":
        return _rubrics_json(rubrics)
    raise unsupported


def bound_values(
    bindings: list[Any],
    actuals: list[Invocation],
    expecteds: list[Invocation],
    rubrics: list[dict[str, Any]],
) -> dict[str, str]:
    """resolveTemplateValues: each binding's variable → its source's text (then its path)."""
    values: dict[str, str] = {}
    for binding in bindings:
        if not isinstance(binding, dict):
            raise TemplateError("template binding is nil")
        name = binding.get("templateVariable") or ""
        if not name:
            raise TemplateError("templateVariable is empty")
        if name in values:
            raise TemplateError(f"templateVariable {json.dumps(name)} is duplicated")
        source = binding.get("source")
        try:
            if not isinstance(source, dict):
                raise TemplateError("source is nil")
            value = _source_value(source, actuals, expecteds, rubrics)
            values[name] = json_path(value, source["path"]) if source.get("path") else value
        except TemplateError as exc:
            raise TemplateError(f"resolve template variable {json.dumps(name)}: {exc}") from None
    return values


def _segments(path: str) -> list[str | int]:
    """jsonpath.parse: ``$.a.b[0]``, ``a.b``, ``[1].c``; no wildcards."""
    segments: list[str | int] = []
    i = 0
    if path.startswith("$"):
        i = 1
        if len(path) > 1 and path[1] not in ".[":
            raise TemplateError(f"json path {json.dumps(path)} has invalid root selector")
    while i < len(path):
        if path[i] == "[":
            end = path.find("]", i)
            if end < 0:
                raise TemplateError(f"json path {json.dumps(path)} missing ]")
            try:
                segments.append(int(path[i + 1 : end]))
            except ValueError:
                raise TemplateError(f"json path {json.dumps(path)} has invalid index") from None
            i = end + 1
            continue
        if path[i] == ".":
            i += 1
        elif segments or i != 0:
            raise TemplateError(f"json path {json.dumps(path)} missing delimiter before key")
        start = i
        while i < len(path) and path[i] not in ".[":
            if path[i] == "]":
                raise TemplateError(f"json path {json.dumps(path)} has unexpected ]")
            i += 1
        key = path[start:i]
        if not key or "*" in key:
            raise TemplateError(f"json path {json.dumps(path)} has an unsupported key")
        segments.append(key)
    return segments


def json_path(raw: str, path: str) -> str:
    """jsonpath.Extract: the value at ``path`` in ``raw`` JSON; a string as is, others as JSON
    (numbers as written)."""
    decoder = json.JSONDecoder(parse_float=GoNumber, parse_int=GoNumber)
    text = raw.lstrip(" \t\r\n")
    try:
        value, end = decoder.raw_decode(text)
    except json.JSONDecodeError as exc:
        raise TemplateError(f"parse source json for path {json.dumps(path)}: {exc}") from None
    if text[end:].strip(" \t\r\n"):
        raise TemplateError(f"parse source json for path {json.dumps(path)}: multiple JSON values")
    for segment in _segments(path):
        if isinstance(segment, str):
            if not isinstance(value, dict) or segment not in value:
                raise TemplateError(
                    f"json path {json.dumps(path)} key {json.dumps(segment)} not found"
                )
            value = value[segment]
        else:
            if not isinstance(value, list) or not 0 <= segment < len(value):
                raise TemplateError(f"json path {json.dumps(path)} index {segment} out of range")
            value = value[segment]
    if isinstance(value, str) and not isinstance(value, GoNumber):
        return value
    return go_json(value, escape_html=False)
