"""The model every stage shares: the canonical eval set (``evalset``: ADK's EvalSet schema,
which every dialect loads into), the results of a run (``results``: sets, cases, runs,
invocations, metric results), its comparison with the baseline (``comparison``) and the
``Status`` of a case or a metric (``status``). Pure data, no I/O; nothing here imports a
stage."""

from ci_eval.model.evalset import (
    Content,
    ConversationScenario,
    EvalCase,
    EvalSet,
    FunctionCall,
    FunctionResponse,
    IntermediateData,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    Part,
    PlainInvocation,
    Rubric,
    RubricContent,
    SessionInput,
    SourceRef,
    canonical_form,
    dump_adk,
)
from ci_eval.model.status import Status

__all__ = [
    "Content",
    "ConversationScenario",
    "EvalCase",
    "EvalSet",
    "FunctionCall",
    "FunctionResponse",
    "IntermediateData",
    "Invocation",
    "InvocationEvent",
    "InvocationEvents",
    "Part",
    "PlainInvocation",
    "Rubric",
    "RubricContent",
    "SessionInput",
    "SourceRef",
    "Status",
    "canonical_form",
    "dump_adk",
]
