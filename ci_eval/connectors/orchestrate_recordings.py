"""watsonx Orchestrate's recorded conversations (``*.messages.json``) as replayable invocations.

``orchestrate evaluations evaluate`` (ibm-watsonx-orchestrate-evaluation-framework 1.6.9) writes
each dataset's conversation to ``<output>/messages/<dataset>.messages.json``, or with ``n_runs``
above 1 ``<dataset>.run<N>.messages.json`` (``agentops/persistence/disk.py``,
``agentops/runner.py``): a JSON list of ``agentops.type.Message`` (``role``, ``content``,
``type`` text | tool_call | tool_response | interaction, ...). The file name is all that names
its dataset, so the dataset is read from it by IBM's own rule (``agentops/utils/utils.py``
``RUN_FILE_RE``: the name before ``.run<N>.messages.json``, else before ``.messages.json``):
the ``dataset_name`` of the Orchestrate case, i.e. its file stem, which is ci-eval's case id for
an Orchestrate dataset (ci_eval/dialects/watsonx.py). No eval set is named, so a recording
replays the case of that id in whichever eval set (file) it is found; every run file of a
dataset is one recording of it (``--replay-pick all`` replays each).

The messages become invocations whose IBM-style messages (ci_eval/metrics/watsonx_messages.py
``messages_of``) are the recorded ones, in their order: each user message opens an invocation;
what the agent says after it are its ADK-shaped events (tool calls, tool responses, texts), the
last text, when the turn ends with one, its final response; an ``interaction`` message (a widget
the agent asks the user to fill, ``Message.interaction``) ends its invocation as the
``watsonx_interaction`` extension. Agent messages no user message precedes (the start, or after
a widget) make an invocation of their own with an empty user text. A tool call is read as IBM's
metrics read it, from ``tool_calls[0]`` (1.6.9), and from the JSON object in ``content`` when the
recording has no ``tool_calls`` (earlier versions, as the published examples were written).

IBM's other outputs beside the messages (``*.messages.analyze.json``, ``*.metrics.json``,
``*.metadata.json``, the knowledge-base metrics) are no conversations: a folder replayed whole
skips them.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

from ci_eval.dialects.watsonx import INTERACTION
from ci_eval.errors import InputError
from ci_eval.model import Content, Invocation
from ci_eval.model.evalset import (
    FunctionCall,
    FunctionResponse,
    InvocationEvent,
    InvocationEvents,
    Part,
)

# the eval set a recording names: none (see Recordings)
ANY_SET = "\x00watsonx-orchestrate"
_MESSAGES = re.compile(r"^(?P<base>.+?)(?:\.run(?P<run>\d+))?\.messages\.json$")
_BESIDE = (".messages.analyze.json", ".metrics.json", ".metadata.json")
_KNOWLEDGE_BASE = ("knowledge_base_detailed_metrics.json", "knowledge_base_summary_metrics.json")
_RESULT_KEYS = ("eval_case_results", "evalCaseResults", "schema_version")
_AGENT = "agent"  # the author of the agent's events: IBM's messages name no agent


def is_ibm_output(name: str, data: Any) -> bool:
    """Whether a file (its name and parsed JSON) is a messages file or one of the outputs IBM
    writes beside it; a ci-eval, ADK or trpc results file of such a name is not."""
    if _MESSAGES.match(name) and not name.endswith(".messages.analyze.json"):
        return True
    if name in _KNOWLEDGE_BASE:
        return True
    if not name.endswith(_BESIDE):
        return False
    return isinstance(data, list) or (
        isinstance(data, dict) and not any(k in data for k in _RESULT_KEYS)
    )


def dataset_of(name: str) -> tuple[str, int | None] | None:
    """The dataset a messages file's name records, and its run (None: a single run)."""
    found = _MESSAGES.match(name)
    if found is None or name.endswith(".messages.analyze.json"):
        return None
    return found.group("base"), int(found.group("run")) if found.group("run") else None


def recorded_runs(
    data: Any, name: str, shown: str
) -> dict[tuple[str, str], list[list[Invocation]]]:
    """The recording a file holds per (:data:`ANY_SET`, dataset name); nothing for IBM's
    other outputs. Raises InputError naming the file and the JSON path of what is malformed."""
    named = dataset_of(name)
    if named is None:
        return {}
    if not isinstance(data, list):
        raise InputError(
            "an Orchestrate messages file is a JSON list of messages (role, content, type)",
            path=shown,
            json_path="$",
        )
    return {(ANY_SET, named[0]): [invocations_of(data, shown)]}


def invocations_of(messages: list[Any], shown: str) -> list[Invocation]:
    """IBM's messages as invocations whose ``messages_of`` gives them back (see the module)."""
    turns: list[tuple[str, list[tuple[int, dict[str, Any]]]]] = []
    for n, m in enumerate(messages):
        _check(m, n, shown)
        if m["role"] == "user":
            turns.append((_text_of(m, n, shown), []))
            continue
        if not turns or _ended(turns[-1][1]):
            turns.append(("", []))  # no user message opened this one
        turns[-1][1].append((n, m))
    return [_invocation(said, said_after, k, shown) for k, (said, said_after) in enumerate(turns)]


def _ended(turn: list[tuple[int, dict[str, Any]]]) -> bool:
    return bool(turn) and turn[-1][1].get("type") == "interaction"


def _invocation(
    said: str, messages: list[tuple[int, dict[str, Any]]], k: int, shown: str
) -> Invocation:
    interaction = None
    if messages and messages[-1][1].get("type") == "interaction":
        n, m = messages.pop()
        interaction = m.get("interaction")
        if not isinstance(interaction, dict) or not isinstance(interaction.get("prompt"), str):
            raise InputError(
                "an interaction message needs its interaction {type, prompt, input_schema}",
                path=shown,
                json_path=f"$[{n}].interaction",
            )
    final = None
    if messages and messages[-1][1].get("type") in (None, "text"):
        n, m = messages.pop()
        final = Content.from_text(_text_of(m, n, shown), "model")
    events = [_event(m, n, shown) for n, m in messages]
    inv = Invocation(
        invocation_id=f"turn-{k + 1}",
        user_content=Content.from_text(said, "user"),
        final_response=final,
        intermediate_data=InvocationEvents(invocation_events=events),
    )
    if interaction is not None:
        inv.extensions[INTERACTION] = interaction
    return inv


def _event(m: dict[str, Any], n: int, shown: str) -> InvocationEvent:
    kind = m.get("type")
    if kind in (None, "text"):
        part = Part(text=_text_of(m, n, shown))
    elif kind == "tool_call":
        part = Part(function_call=_call(m, n, shown))
    elif kind == "tool_response":
        part = Part(function_response=_response(m, n, shown))
    elif kind == "interaction":  # one not at the end of its turn never happens (see _ended)
        raise AssertionError("an interaction ends its invocation")
    else:
        raise InputError(
            f"a message of type {kind!r} is not replayed (ci-eval replays text, tool_call, "
            "tool_response and interaction messages)",
            path=shown,
            json_path=f"$[{n}].type",
        )
    return InvocationEvent(author=_AGENT, content=Content(role="model", parts=[part]))


def _call(m: dict[str, Any], n: int, shown: str) -> FunctionCall:
    calls = m.get("tool_calls")
    if calls:  # what IBM 1.6.9's extractors read: the first
        first = calls[0] if isinstance(calls, list) else None
        function = first.get("function") if isinstance(first, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise InputError(
                "a tool call needs its function {name, arguments}",
                path=shown,
                json_path=f"$[{n}].tool_calls[0].function",
            )
        args = _args(function.get("arguments"), n, shown)
        return FunctionCall(id=first.get("id") or None, name=function["name"], args=args)
    body = _body(m, n, shown)
    args = body.get("args")
    if not isinstance(body.get("name"), str) or not isinstance(args, dict | None):
        raise InputError(
            "a tool call's content is the JSON object {type, name, args, id}",
            path=shown,
            json_path=f"$[{n}].content",
        )
    call_id = body.get("id") or body.get("tool_call_id")
    return FunctionCall(id=str(call_id) if call_id else None, name=body["name"], args=args or {})


def _args(arguments: Any, n: int, shown: str) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        args = json.loads(arguments) if isinstance(arguments, str) and arguments else {}
    except ValueError:
        args = None
    if not isinstance(args, dict):
        raise InputError(
            "a tool call's arguments are a JSON object (as text)",
            path=shown,
            json_path=f"$[{n}].tool_calls[0].function.arguments",
        )
    return args


def _response(m: dict[str, Any], n: int, shown: str) -> FunctionResponse:
    body = _body(m, n, shown)
    if not isinstance(body.get("name"), str):
        raise InputError(
            "a tool response's content is the JSON object {type, content, name, tool_call_id}",
            path=shown,
            json_path=f"$[{n}].content",
        )
    call_id = body.get("tool_call_id") or m.get("tool_call_id")
    return FunctionResponse(
        id=str(call_id) if call_id else None,
        name=body["name"],
        response={"content": body.get("content")},
    )


def _body(m: dict[str, Any], n: int, shown: str) -> dict[str, Any]:
    content = m["content"]
    if isinstance(content, str):
        with contextlib.suppress(ValueError, RecursionError):  # not JSON: said below
            content = json.loads(content)
    if not isinstance(content, dict):
        raise InputError(
            f"a {m['type']} message's content is a JSON object",
            path=shown,
            json_path=f"$[{n}].content",
        )
    return content


def _text_of(m: dict[str, Any], n: int, shown: str) -> str:
    if not isinstance(m["content"], str):
        raise InputError(
            "a text message's content is a string", path=shown, json_path=f"$[{n}].content"
        )
    return m["content"]


def _check(m: Any, n: int, shown: str) -> None:
    if not isinstance(m, dict):
        raise InputError("a message is a JSON object", path=shown, json_path=f"$[{n}]")
    if m.get("role") not in ("user", "assistant"):
        raise InputError(
            f"role {m.get('role')!r}: an Orchestrate message's role is user or assistant",
            path=shown,
            json_path=f"$[{n}].role",
        )
    if "content" not in m:
        raise InputError("a message needs its content", path=shown, json_path=f"$[{n}].content")


class Recordings(dict):  # type: ignore[type-arg]
    """Recordings per (eval set id, case id) where an Orchestrate recording, which names no
    eval set (:data:`ANY_SET`), is the recording of its case id in every eval set that has no
    recording of its own."""

    def get(self, key: Any, default: Any = None) -> Any:
        found = super().get(key)
        if found is None and isinstance(key, tuple) and key[0] != ANY_SET:
            found = super().get((ANY_SET, key[1]))
        return default if found is None else found

    def __contains__(self, key: object) -> bool:
        return self.get(key) is not None
