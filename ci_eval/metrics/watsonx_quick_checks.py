"""The checks of watsonx Orchestrate's quick eval (reference-free evaluation), ci-eval's own code
after ibm-watsonx-orchestrate-evaluation-framework 1.6.9 (``agentops/referenceless_eval``):

* **static** — ``function_calling/pipeline/static_checker.py`` (``evaluate_static``): the call
  against its tool's spec (OpenAI function format): the function exists, no parameter the spec
  does not define, and JSON Schema (draft 7) validation of the arguments, its errors sorted into
  missing required parameters, wrong types, values outside an enum and other errors.
* **semantic** — an LLM judge per check, the prompt built as ``metrics/prompt.py``
  (``MetricPrompt.build_messages``) builds it: a system prompt with the check's task and its
  JSON schema (thresholds removed), each few-shot example as a user/assistant pair, then the
  tool call in its conversation; every value JSON-encoded. A verdict is correct as
  ``metrics/metric.py`` (``Metric.is_correct``) decides: a confidence outside its thresholds
  makes the verdict unimportant, hence correct; else its ``output`` must lie within the
  output's thresholds.

The check definitions are IBM's files, copied in ``watsonx_quick_prompts/`` (see its NOTICE.md).
"""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from importlib import resources
from typing import Any

from ci_eval.metrics.base import NotApplicable

# function_calling/metrics/function_call/general.py and function_selection/function_selection.py
GENERAL_SYSTEM = (
    "### Task Description and Role:\n\n"
    "{{ task_description }}\n\n"
    "Your output must conform to the following JSON schema, in the same order as the fields "
    "appear in the schema:\n"
    "{{ metric_jsonschema }}"
)
FUNCTION_SYSTEM = (
    "### Task Description:\n\n"
    "{{ task_description }}\n\n"
    "Your output must conform to the following JSON schema, in the same order as the fields "
    "appear in the schema:\n"
    "{{ metric_jsonschema }}"
)
_RETURN = (
    "Return a JSON object as specified in the system prompt. You MUST keep the same order of "
    "fields in the JSON object as provided in the JSON schema and examples."
)
GENERAL_USER = (
    "Conversation context:\n{{ conversation_context }}\n\n"
    "Tool Specification:\n{{ tool_inventory }}\n\n"
    "Proposed tool call:\n{{ tool_call }}\n\n" + _RETURN
)
GENERAL_USER_NO_SPEC = (
    "Conversation context:\n{{ conversation_context }}\n\n"
    "Proposed tool call:\n{{ tool_call }}\n\n" + _RETURN
)
FUNCTION_USER = (
    "Conversation context:\n{{ conversation_context }}\n\n"
    "Tools Inventory:\n{{ tools_inventory }}\n\n"
    "Proposed function call:\n{{ proposed_tool_call }}\n\n"
    "Function name:\n{{ selected_function }}\n\n" + _RETURN
)

HALLUCINATION = "general_hallucination_check"
GROUNDED = "general_conversation_grounded_correctness"  # the one check without tool specs
FUNCTION_SELECTION = "function_selection_appropriateness"
# check → (system template, user template)
FRAMES = {
    HALLUCINATION: (GENERAL_SYSTEM, GENERAL_USER),
    GROUNDED: (GENERAL_SYSTEM, GENERAL_USER_NO_SPEC),
    FUNCTION_SELECTION: (FUNCTION_SYSTEM, FUNCTION_USER),
}

STATIC_CHECKS = {
    "non_existent_function": "Function name not found in the provided API specification.",
    "non_existent_parameter": "One or more parameters are not defined for the specified function.",
    "incorrect_parameter_type": "One or more parameters have values whose types don't match "
    "the expected types.",
    "missing_required_parameter": "One or more required parameters are missing from the call.",
    "allowed_values_violation": "One or more parameters have values outside the allowed "
    "enumeration.",
    "json_schema_validation": "The API call does not conform to the provided JSON Schema.",
}

_VAR = re.compile(r"\{\{ (\w+) \}\}")


def _render(template: str, values: dict[str, str]) -> str:
    return _VAR.sub(lambda m: values[m.group(1)], template)


@cache
def definition(name: str) -> dict[str, Any]:
    """IBM's record of one check (``name``, ``task_description``, ``jsonschema``, ``examples``)."""
    text = resources.files("ci_eval.metrics").joinpath(f"watsonx_quick_prompts/{name}.json")
    return json.loads(text.read_text(encoding="utf-8"))


def _without_thresholds(value: Any) -> Any:
    """``metrics/utils.py`` ``remove_threshold_fields``."""
    if isinstance(value, dict):
        return {
            k: _without_thresholds(v)
            for k, v in value.items()
            if k not in ("threshold_low", "threshold_high")
        }
    if isinstance(value, list):
        return [_without_thresholds(v) for v in value]
    return value


# ``metrics/field.py``: the descriptions a field without one is given
_FIELD_DEFAULTS = {
    ("explanation", "string"): "A detailed, step-by-step explanation of the reasoning behind "
    "the metric's value.",
    ("evidence", "string"): "The exact quote or reference from the input or context that "
    "justifies the metric's value.",
    ("correction", "object"): "A JSON-formatted suggestion for how to correct or improve the "
    "output if needed.",
}


def metric_schema(record: dict[str, Any]) -> dict[str, Any]:
    """``Metric.from_jsonschema(...).to_jsonschema()`` as the loader builds it (thresholds
    kept: ``is_correct`` reads them)."""
    schema = record["jsonschema"]
    properties = {}
    for name, field in schema.get("properties", {}).items():
        kind = field.get("type", "string")
        properties[name] = {
            "type": kind,
            "description": field.get("description", ""),
            **{k: copy.deepcopy(v) for k, v in field.items() if k not in ("type", "description")},
        }
    return {
        "title": schema.get("title", ""),
        "description": schema.get("description", record.get("name", "")),
        "type": "object",
        "properties": properties,
        "required": sorted(schema.get("required", [])),
        "additionalProperties": schema.get("additionalProperties", True),
    }


def prompt_messages(check: str, user_values: dict[str, Any]) -> list[dict[str, str]]:
    """The chat IBM sends for one check (``MetricPrompt.build_messages``)."""
    record = definition(check)
    system, user = FRAMES[check]
    schema = json.dumps(_without_thresholds(metric_schema(record)))
    messages = [
        {
            "role": "system",
            "content": _render(
                system,
                {"task_description": record["task_description"], "metric_jsonschema": schema},
            ),
        }
    ]
    for example in record.get("examples", []):
        shown = {k: json.dumps(v) for k, v in example["user_kwargs"].items()}
        messages.append({"role": "user", "content": _render(user, shown)})
        messages.append({"role": "assistant", "content": json.dumps(example["output"])})
    final = {k: json.dumps(v) for k, v in user_values.items()}
    messages.append({"role": "user", "content": _render(user, final)})
    return messages


def _within(schema: dict[str, Any], field: str, value: float) -> bool:
    spec = schema["properties"].get(field, {})
    low, high = spec.get("threshold_low"), spec.get("threshold_high")
    return not ((low is not None and value < low) or (high is not None and value > high))


def verdict_is_correct(check: str, verdict: dict[str, Any]) -> bool:
    """``Metric.is_important`` then ``Metric.is_correct`` on the judge's JSON."""
    schema = metric_schema(definition(check))
    try:
        confidence = float(verdict.get("confidence", 0.0))
    except (TypeError, ValueError):
        return True  # not important: IBM counts it correct
    if schema["properties"].get("confidence", {}).get("type") not in ("number", "integer"):
        return True
    if not _within(schema, "confidence", confidence):
        return True
    try:
        output = float(verdict.get("output", 0.0))
    except (TypeError, ValueError):
        return False
    if schema["properties"].get("output", {}).get("type") not in ("number", "integer"):
        return False
    return _within(schema, "output", output)


# --- tool specs and the static checks -------------------------------------------------------


def tool_specs(value: Any) -> list[dict[str, Any]]:
    """OpenAI tool specs (``{"type": "function", "function": {name, description,
    parameters}}``, as IBM writes them to ``quick-eval/tool_spec.json``), validated as IBM's
    ``ToolSpec`` is."""
    specs = value if isinstance(value, list) else [value]
    out = []
    for spec in specs:
        function = spec.get("function") if isinstance(spec, dict) else None
        if (
            not isinstance(function, dict)
            or not isinstance(function.get("name"), str)
            or not isinstance(function.get("parameters"), dict)
            or spec.get("type", "function") != "function"
        ):
            raise NotApplicable(
                'tool specs must be OpenAI function specs ({"type": "function", "function": '
                '{"name", "description", "parameters"}})'
            )
        out.append(
            {
                "name": function["name"],
                "description": function.get("description"),
                "parameters": function["parameters"],
            }
        )
    return out


def static_failures(specs: list[dict[str, Any]], name: str, args: Any) -> dict[str, str]:
    """``evaluate_static`` / ``_check_tool_call``: failed check → explanation (none: valid)."""
    try:
        return _check(specs, name, args)
    except ImportError:
        raise
    except Exception as exc:  # static_only: a schema that cannot be read fails the call
        return {"json_schema_validation": f"error parsing JSON schema: {exc}"}


def _check(specs: list[dict[str, Any]], name: str, args: Any) -> dict[str, str]:
    from jsonschema import Draft7Validator  # IBM's validator; loaded only for these checks

    if not specs:
        return {"empty_api_spec": "No API specifications provided."}
    spec = next((s for s in specs if s["name"] == name), None)
    if spec is None:
        return {
            "non_existent_function": f"Function '{name}' does not exist in the provided API "
            f"specifications: {', '.join(s['name'] for s in specs)}."
        }
    errors: dict[str, str] = {}
    schema = spec["parameters"]
    properties = schema.get("properties", schema)
    if unknown := set(args.keys()) - set(properties.keys()):
        errors["non_existent_parameter"] = (
            f"Parameters not defined in function '{name}': {', '.join(sorted(unknown))}. "
            f"Possible parameters are: {', '.join(sorted(properties.keys()))}."
        )
    sorted_errors: dict[str, list[str]] = {"required": [], "type": [], "enum": [], "other": []}
    for error in Draft7Validator(schema).iter_errors(args):
        field = ".".join(str(x) for x in error.path) if error.path else "unknown"
        if error.validator == "required":
            sorted_errors["required"].append(error.message)
        elif error.validator in ("type", "enum"):
            sorted_errors[str(error.validator)].append(f"{field}: {error.message}")
        else:
            sorted_errors["other"].append(f"{field}: {error.message}")
    for kind, key, label in (
        ("required", "missing_required_parameter", "Missing required parameter(s): "),
        ("type", "incorrect_parameter_type", "Incorrect parameter type(s): "),
        ("enum", "allowed_values_violation", "Invalid parameter value(s): "),
        ("other", "json_schema_validation", "Other validation error(s): "),
    ):
        if sorted_errors[kind]:
            errors[key] = label + "; ".join(sorted_errors[kind])
    return errors


def inventory_summary(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``OpenAIAdapter.get_tools_inventory_summary``."""
    return [
        {
            "tool_name": s["name"],
            "tool_description": s["description"],
            "tool_parameters": {
                p: d.get("type") for p, d in s["parameters"].get("properties", {}).items()
            },
        }
        for s in specs
    ]
