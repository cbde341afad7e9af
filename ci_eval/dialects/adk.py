"""Google ADK eval sets: the current EvalSet schema, and its camelCase form.

ADK 2.13 reads ``*.evalset.json`` / ``*.test.json`` with ``EvalSet.model_validate_json`` and, when
that fails on a list, converts the legacy forms (``local_eval_sets_manager`` and
``agent_evaluator``: ``ci_eval.dialects.adk_legacy``).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ci_eval.dialects.base import LoadContext, attach_sources, check_unique_ids
from ci_eval.errors import ValidationFailed
from ci_eval.io.jsonfast import NotStreamable, parse_streaming
from ci_eval.io.jsonpos import JsonDocument, parse_json
from ci_eval.io.validation import validate
from ci_eval.model import (
    EvalCase,
    EvalSet,
    Invocation,
    SourceRef,
    dump_adk,
)


def _agentevals_hint(err: Any) -> str:
    field = str(err["loc"][-1]) if err["loc"] else ""
    if field in {"case_id", "agent_content"} or (field == "eval_id" and err["type"] == "missing"):
        return (
            "this looks like an agentevals example file (case_id/agent_content), which ADK "
            "itself rejects: rename case_id to eval_id and agent_content to final_response"
        )
    return ""


class AdkDialect:
    name = "adk"
    tool = "ADK"  # the tool whose files these are, as messages name it

    def sniff(self, data: Any) -> bool:
        return (
            isinstance(data, dict)
            and "eval_cases" in data
            and ("eval_set_id" in data or "id" not in data)
        )

    def load(self, doc: JsonDocument, ctx: LoadContext) -> EvalSet:
        return _load_evalset(doc, ctx, "eval_cases")

    def load_streamed(self, text: str, ctx: LoadContext) -> tuple[dict[str, Any], EvalSet] | None:
        return streamed(text, ctx.rel_path)

    def dump(self, eval_set: EvalSet) -> tuple[Any, list[str]]:
        lost = sorted(
            {key for case in eval_set.eval_cases for key in case.extensions}
            | {
                key
                for case in eval_set.eval_cases
                for inv in case.invocations()
                for key in inv.extensions
            }
        )
        warnings = [f"ADK has no field for {key!r}; it is not written" for key in lost]
        return dump_adk(eval_set), warnings


_CAMEL_TOP = {
    "evalSetId": "eval_set_id",
    "evalCases": "eval_cases",
    "creationTimestamp": "creation_timestamp",
}
_TRPC_CASE_KEYS = frozenset(
    {"evalMode", "expectedRunnerEnabled", "contextMessages", "actualConversation"}
)
_TRPC_INVOCATION_KEYS = frozenset({"tools", "contextMessages", "toolMock", "executionTrace"})
_ADK_ONLY_KEYS = frozenset(
    {"finalSessionState", "final_session_state", "appDetails", "userPersona", "rubricId"}
)


def _trace_key(case: dict[str, Any], snake: str, camel: str) -> Any:
    return case[snake] if snake in case else case.get(camel)


def _top(doc: JsonDocument, cases_key: str) -> Any:
    """The document's top level with ADK's snake_case names."""
    if cases_key == "eval_cases":
        return doc.data
    return {_CAMEL_TOP.get(k, k): v for k, v in doc.data.items()}


class _Unusual(Exception):
    pass


def _is_trace(case: Any) -> bool:
    return isinstance(case, dict) and _trace_key(case, "eval_mode", "evalMode") == "trace"


def _packed_case(raw: Any, rel_path: str, line: int | None) -> EvalCase:
    """A case validated from its JSON, which it then holds, packed, until it runs."""
    case = EvalCase.model_validate(raw)
    case._source = SourceRef(rel_path, line)
    if case.conversation:
        case.pack(raw["conversation"])
    return case


def _case_by_case(doc: JsonDocument, ctx: LoadContext, top: Any, raw_cases: list[Any]) -> EvalSet:
    """The usual set (no trace-mode case), validated one case at a time, each case's JSON let
    go once its model is built: the memory of one is reused for the next, instead of the
    whole parsed file being held beside the models (a large run holds much less).
    The result is what validating the whole set gives. A problem to report raises, the
    document partly let go: it is parsed again for the usual way, whose messages say where."""
    eval_set = EvalSet.model_validate({**top, "eval_cases": []})
    cases = []
    for i, raw in enumerate(raw_cases):
        cases.append(_packed_case(raw, ctx.rel_path, doc.line_of(raw)))
        raw_cases[i] = None  # let go
        doc.positions.pop(id(raw), None)  # its id may be reused
    if len({c.eval_id for c in cases}) != len(cases):
        raise _Unusual
    eval_set.eval_cases = cases
    return eval_set


def streamed(text: str, rel_path: str) -> tuple[dict[str, Any], EvalSet] | None:
    """The usual ADK set (snake_case, no trace-mode case, nothing to report), each case
    validated and packed as soon as it is parsed: the file is never all in memory as JSON
    (for a large set that, and what it leaves fragmented, is a lot of memory). Its top level
    (the cases in place) for the caller to tell whether it is an ADK set, and the set; None
    for anything else, which the usual way reads (whose messages say where)."""
    if '"eval_cases"' not in text:  # trpc, camelCase, watsonx…: not parsed twice
        return None
    lines = JsonDocument(data=None, text=text, path=rel_path)

    def case(raw: Any, offset: int) -> EvalCase:
        if _is_trace(raw):
            raise _Unusual
        return _packed_case(raw, rel_path, lines.line_col(offset)[0])

    try:
        top = parse_streaming(text, {"eval_cases": case})
        cases = top.get("eval_cases")
        if not isinstance(cases, list) or len({c.eval_id for c in cases}) != len(cases):
            return None
        eval_set = EvalSet.model_validate({**top, "eval_cases": []})
    except (NotStreamable, ValidationError, AttributeError):
        return None
    eval_set.eval_cases = cases
    return top, eval_set


def _load_evalset(doc: JsonDocument, ctx: LoadContext, cases_key: str) -> EvalSet:
    """ADK's EvalSet from the document (its camelCase top level renamed), with trace-mode cases
    (``eval_mode: "trace"`` + ``actual_conversation``, trpc-agent-python's snake_case form of
    trpc-agent-go's trace mode) prepared: ADK requires a conversation, so a trace case without
    one expects the recorded user turns."""
    raw = doc.data.get(cases_key)
    if doc.shallow and isinstance(raw, list) and not any(map(_is_trace, raw)):
        try:
            return _case_by_case(doc, ctx, _top(doc, cases_key), raw)
        except (_Unusual, ValidationError):
            doc = parse_json(doc.text, doc.path)  # as it was, for the usual way
    top = _top(doc, cases_key)
    raw_cases = doc.data[cases_key] if isinstance(doc.data.get(cases_key), list) else None
    data = top
    traced: dict[int, Any] = {}
    if raw_cases is not None:
        cases = list(top["eval_cases"])
        for i, case in enumerate(cases):
            if not isinstance(case, dict):
                continue
            if _trace_key(case, "eval_mode", "evalMode") != "trace":
                continue
            actual = _trace_key(case, "actual_conversation", "actualConversation")
            key = "actual_conversation" if "actual_conversation" in case else "actualConversation"
            if not isinstance(actual, list) or not actual:
                raise doc.error(
                    'eval_mode "trace" needs a non-empty actual_conversation (the recorded '
                    "invocations that are scored)",
                    [cases_key, i],
                )
            traced[i] = [
                validate(Invocation, inv, doc, base=inv, base_loc=[cases_key, i, key, n])
                if isinstance(inv, dict)
                else _not_an_invocation(doc, [cases_key, i, key, n])
                for n, inv in enumerate(actual)
            ]
            has_expected = any(
                k in case for k in ("conversation", "conversation_scenario", "conversationScenario")
            )
            if not has_expected:
                cases[i] = {**case, "conversation": []}  # filled from the recording below
        data = {**top, "eval_cases": cases}
    agentevals = '"case_id"' in doc.text or '"agent_content"' in doc.text
    try:
        eval_set = validate(
            EvalSet, data, doc, snake=True, hint=_agentevals_hint if agentevals else None
        )
    except ValidationFailed as exc:
        if cases_key != "eval_cases":
            for problem in exc.problems:
                if problem.json_path:
                    problem.json_path = problem.json_path.replace("$.eval_cases", "$.evalCases")
        raise
    assert raw_cases is not None  # validation passed, so eval_cases is a list
    for i, actuals in traced.items():
        case = eval_set.eval_cases[i]
        if case.conversation == [] and "conversation" not in raw_cases[i]:
            case.conversation = [
                Invocation(invocation_id=a.invocation_id, user_content=a.user_content)
                for a in actuals
            ]
        case.set_trace_actuals(actuals)
    attach_sources(eval_set, raw_cases, doc, ctx.rel_path)
    id_key = "eval_id" if cases_key == "eval_cases" else "evalId"
    check_unique_ids(eval_set, doc, raw_cases, id_key, [cases_key])
    return eval_set


def _not_an_invocation(doc: JsonDocument, loc: list[Any]) -> Any:
    raise doc.error("expected an invocation object", loc)


def _walk_cases(data: dict[str, Any]) -> tuple[set[str], set[str], set[str]]:
    """Keys of the cases, of their invocations, and message roles (for telling ADK's
    camelCase form from trpc-agent-go's, which share the top-level names)."""
    case_keys: set[str] = set()
    inv_keys: set[str] = set()
    roles: set[str] = set()
    cases = data.get("evalCases")
    for case in cases if isinstance(cases, list) else []:
        if not isinstance(case, dict):
            continue
        case_keys |= set(case)
        conversation = case.get("conversation")  # any JSON: sniffing never fails
        for inv in conversation if isinstance(conversation, list) else []:
            if not isinstance(inv, dict):
                continue
            inv_keys |= set(inv)
            for name in ("userContent", "finalResponse", "user_content", "final_response"):
                message = inv.get(name)
                if isinstance(message, dict):
                    if "content" in message and "parts" not in message:
                        inv_keys.add("messageContent")  # trpc's {role, content}
                    if isinstance(message.get("role"), str):
                        roles.add(message["role"])
    return case_keys, inv_keys, roles


class AdkCamelDialect:
    """ADK's EvalSet written with camelCase keys throughout (``evalSetId``, ``evalCases``),
    as ADK's web UI and TypeScript tooling export it. ADK 2.13's own loader reads only
    snake_case at the top level; the nested camelCase keys it accepts as aliases."""

    name = "adk-camel"
    tool = "ADK"

    def sniff(self, data: Any) -> bool:
        if not isinstance(data, dict) or "evalCases" not in data or "eval_cases" in data:
            return False
        case_keys, inv_keys, roles = _walk_cases(data)
        if case_keys & _TRPC_CASE_KEYS or inv_keys & (_TRPC_INVOCATION_KEYS | {"messageContent"}):
            return False
        if "assistant" in roles:  # trpc's role name; ADK's is "model"
            return False
        if case_keys & _ADK_ONLY_KEYS:
            return True
        # genai-shaped invocations with ADK's roles: both generations of camelCase files that
        # trpc-agent-go wrote use "assistant" or {role, content}, so this is ADK's form
        return bool(inv_keys) and bool(roles)

    def load(self, doc: JsonDocument, ctx: LoadContext) -> EvalSet:
        eval_set = _load_evalset(doc, ctx, "evalCases")
        ctx.warnings.append(
            f"{ctx.rel_path}: camelCase top level (evalSetId, evalCases): google-adk 2.13's "
            "`adk eval` reads only eval_set_id/eval_cases; `ci-eval convert --to adk` writes "
            "the form it reads"
        )
        return eval_set
