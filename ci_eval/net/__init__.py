"""The network: HTTP with retries and deadlines, the fast client, the LLM chat client."""
