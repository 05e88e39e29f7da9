"""Model layer: typed messages, the role router with validated structured output, and the models
behind it (OpenAI-compatible servers, the embedded llama.cpp server, a scripted model for tests)."""

from .base import (
    LLM,
    CallRecord,
    ChatModel,
    Message,
    ModelReply,
    Usage,
    UsageLedger,
    extract_json,
    format_validation_error,
)
from .embedded import EmbeddedChatModel, EmbeddedServer, ModelFileMissing, build_llm
from .openai_model import BLOCK_ENV, OpenAIChatModel, real_models_blocked
from .scripted import ScriptedCall, ScriptedModel

__all__ = [
    "BLOCK_ENV",
    "LLM",
    "CallRecord",
    "ChatModel",
    "EmbeddedChatModel",
    "EmbeddedServer",
    "Message",
    "ModelFileMissing",
    "ModelReply",
    "OpenAIChatModel",
    "ScriptedCall",
    "ScriptedModel",
    "Usage",
    "UsageLedger",
    "build_llm",
    "extract_json",
    "format_validation_error",
    "real_models_blocked",
]
