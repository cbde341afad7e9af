"""An ADK LlmAgent whose model is LiteLLM pointed at a loopback OpenAI-compatible server
(``CI_EVAL_LOOPBACK_LLM``): ADK's events then carry the usage metadata the server reports."""

import os

from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm

root_agent = LlmAgent(
    name="loopback_llm_agent",
    model=LiteLlm(
        model="openai/loopback-model",
        api_base=os.environ.get("CI_EVAL_LOOPBACK_LLM", "http://127.0.0.1:9/v1"),
        api_key="not-a-key",
    ),
    instruction="Answer the weather question in one sentence.",
)
