"""A chat model behind any OpenAI-compatible server: OpenAI itself, vLLM, Ollama, llama.cpp.

The servers disagree on how to ask for schema-constrained JSON, hence ``json_mode``:
llama-cpp-python compiles ``{"type": "json_object", "schema": ...}`` into a grammar but answers
``{"type": "json_schema"}`` with HTTP 500, while OpenAI wants ``json_schema``.
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlparse

import openai

from ..config import ModelEndpoint, TestHooks
from ..domain.secrets import mask_secrets
from ..errors import GeoFahamBug, ModelHTTPError, RealModelBlocked
from .base import Message, ModelReply, Usage

BLOCK_ENV = TestHooks.env_of("block_real_models")

JsonMode = Literal["auto", "llamacpp", "openai"]


def real_models_blocked() -> bool:
    """Tests set ``GEOFAHAM_BLOCK_REAL_MODELS=1`` so that no test reaches a model by accident (read now)."""
    return TestHooks.from_env().block_real_models


def check_not_blocked(what: str) -> None:
    if real_models_blocked():
        raise RealModelBlocked(
            f"real model request to {what} blocked ({BLOCK_ENV}=1); "
            "use ScriptedModel, or mark the test with @pytest.mark.llm"
        )


def resolve_json_mode(base_url: str, json_mode: JsonMode) -> Literal["llamacpp", "openai"]:
    if json_mode != "auto":
        return json_mode
    return "openai" if urlparse(base_url).hostname == "api.openai.com" else "llamacpp"


def response_format(schema: dict, mode: Literal["llamacpp", "openai"]) -> dict:
    if mode == "llamacpp":
        return {"type": "json_object", "schema": schema}
    name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "output"))[:64]
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}}


class OpenAIChatModel:
    """:class:`~.base.ChatModel` over the ``openai`` client; every server error becomes ModelHTTPError."""

    def __init__(
        self,
        endpoint: ModelEndpoint,
        *,
        json_mode: JsonMode = "auto",
        timeout: float = 120,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        http_retries: int = 2,
    ) -> None:
        if endpoint.base_url is None:
            raise GeoFahamBug("OpenAIChatModel needs a base_url; embedded endpoints go through build_llm")
        self.endpoint = endpoint
        self.name = endpoint.model
        self.json_mode = resolve_json_mode(endpoint.base_url, json_mode)
        self.timeout, self.max_tokens, self.temperature, self.http_retries = (
            timeout,
            max_tokens,
            temperature,
            http_retries,
        )
        self._client: openai.OpenAI | None = None

    def _get_client(self) -> openai.OpenAI:
        if self._client is None:
            key = self.endpoint.api_key.get_secret_value() if self.endpoint.api_key else "none"
            self._client = openai.OpenAI(
                base_url=self.endpoint.base_url, api_key=key, timeout=self.timeout, max_retries=self.http_retries
            )
        return self._client

    def _failed(self, what: str, body: str, status_code: int | None = None) -> ModelHTTPError:
        """The server's failure, its URL's key or password masked (the message reaches answers and screens)."""
        message = mask_secrets(f"{self.endpoint.base_url}: {what}")
        return ModelHTTPError(message, status_code=status_code, body=mask_secrets(body))

    def serves(self, role: str) -> bool:
        return not real_models_blocked()

    def chat(self, messages: list[Message], *, schema: dict | None = None, role: str = "") -> ModelReply:
        check_not_blocked(mask_secrets(f"{self.endpoint.base_url} ({self.name})"))
        kwargs: dict = {}
        if schema is not None:
            kwargs["response_format"] = response_format(schema, self.json_mode)
        try:
            resp = self._get_client().chat.completions.create(
                model=self.name,
                messages=[m.model_dump() for m in messages],  # type: ignore[misc]
                max_tokens=self.max_tokens,
                temperature=self.temperature,
                **kwargs,
            )
        except openai.APIStatusError as e:
            raise self._failed(
                f"HTTP {e.status_code} for role {role or '?'}", e.response.text[:4000], status_code=e.status_code
            ) from e
        except openai.APITimeoutError as e:
            raise self._failed(f"timed out after {self.timeout:g} s", str(e)) from e
        except openai.APIConnectionError as e:
            raise self._failed(f"cannot connect ({e.__cause__ or e})", str(e)) from e
        except openai.APIError as e:  # e.g. a body that is not a chat completion
            raise self._failed(f"bad reply ({e})", str(e.body or "")[:4000]) from e
        if not resp.choices:
            raise self._failed("reply without choices", resp.model_dump_json()[:4000])
        choice = resp.choices[0]
        usage = Usage(
            prompt_tokens=(resp.usage.prompt_tokens or 0) if resp.usage else 0,
            completion_tokens=(resp.usage.completion_tokens or 0) if resp.usage else 0,
        )
        return ModelReply(
            text=choice.message.content or "",
            usage=usage,
            model=resp.model or self.name,
            finish_reason=choice.finish_reason,
        )

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
