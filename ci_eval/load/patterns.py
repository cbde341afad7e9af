"""The file names an eval set goes by, alone: ``ci-eval --help`` shows them and must not import
what finding files needs (the redactor, and with it pydantic-core)."""

DEFAULT_INCLUDE: tuple[str, ...] = (
    "*.evalset.json",  # ADK, trpc-agent-go
    "*.test.json",  # ADK legacy and AgentEvaluator
    "eval_set*.json",  # agentevals
    "evalset*.json",  # agentevals UI exports
)
