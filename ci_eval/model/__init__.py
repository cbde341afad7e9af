"""The model every stage shares: the canonical eval set (``evalset``: ADK's EvalSet schema,
which every dialect loads into), the results of a run (``results``: sets, cases, runs,
invocations, metric results), its comparison with the baseline (``comparison``) and the
``Status`` of a case or a metric (``status``). Pure data, no I/O; nothing here imports a
stage."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    # the names above, imported when first used: a submodule (``model.gate_words`` for the
    # CLI's help) does not load the eval set's schema with its package
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ci_eval.model import evalset, status

    value = getattr(status if name == "Status" else evalset, name)
    globals()[name] = value
    return value
