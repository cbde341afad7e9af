from . import agent  # noqa: F401  (as `adk api_server` loads an agent package)
