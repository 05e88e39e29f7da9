"""Message types, usage accounting and the role router with validated structured output.

Every agent talks to models only through :class:`LLM`, so retries, the retry bound and token
accounting live in one place and behave the same for a hosted API, the embedded llama.cpp server
and the scripted test model.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from ..errors import Cancelled, GeoFahamBug, ModelOutputError, ModelRetry

T = TypeVar("T", bound=BaseModel)

#: The question reader's calls: answered by the planner's model, recorded under their own role name.
READER_ROLE = "reader"
CANCEL_POLL_S = 0.1  # how often a call waiting on a model looks at the run's cancel flag

MAX_ERRORS_SHOWN = 8  # a retry message lists at most this many validation errors: small models drown in long ones


class Message(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ModelReply(BaseModel):
    text: str
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    finish_reason: str | None = None  # "length" means the reply was cut off by max_tokens


@runtime_checkable
class ChatModel(Protocol):
    """Anything that turns a conversation into one reply. ``schema`` (a JSON schema) asks for JSON."""

    name: str

    def chat(self, messages: list[Message], *, schema: dict | None = None, role: str = "") -> ModelReply: ...


class CallRecord(BaseModel):
    """One logical call (``structured`` or ``text``); tokens are summed over its attempts."""

    role: str
    step: str | None = None
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    attempts: int = 1
    ok: bool = True


class UsageLedger(BaseModel):
    """Thread-safe list of :class:`CallRecord`; ``model_dump()`` goes into the run record."""

    records: list[CallRecord] = Field(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def add(self, record: CallRecord) -> None:
        with self._lock:
            self.records.append(record)

    def snapshot(self) -> list[CallRecord]:
        with self._lock:
            return list(self.records)

    @staticmethod
    def _sum(records: Sequence[CallRecord], key: Callable[[CallRecord], str]) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for r in records:
            acc = out.setdefault(key(r), {"prompt": 0, "completion": 0, "calls": 0})
            acc["prompt"] += r.prompt_tokens
            acc["completion"] += r.completion_tokens
            acc["calls"] += 1
        return out

    def totals(self) -> dict[str, dict[str, int]]:
        """Per role: ``{"prompt", "completion", "calls"}``."""
        return self._sum(self.snapshot(), lambda r: r.role)

    def by_step(self) -> dict[str, dict[str, int]]:
        """Per plan step (``"-"`` for calls outside a step): ``{"prompt", "completion", "calls"}``."""
        return self._sum(self.snapshot(), lambda r: r.step or "-")

    @property
    def total_tokens(self) -> int:
        return sum(r.prompt_tokens + r.completion_tokens for r in self.snapshot())


def role_key(role: Enum | str) -> str:
    return str(role.value) if isinstance(role, Enum) else str(role)


def as_messages(messages: Sequence[Message | Mapping[str, Any]]) -> list[Message]:
    return [m if isinstance(m, Message) else Message.model_validate(m) for m in messages]


_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.S)


def extract_json(text: str) -> str:
    """The outermost JSON object in ``text`` (code fences and surrounding prose ignored).

    Raises ``ValueError`` with a short reason the model can act on.
    """
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start = body.find("{")
    if start < 0:
        raise ValueError("no JSON object found in the reply")
    try:
        _, end = json.JSONDecoder().raw_decode(body, start)  # stops at the object's end: trailing prose is ignored
    except json.JSONDecodeError as e:
        raise ValueError(f"invalid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    return body[start:end]


def format_validation_error(error: ValidationError) -> str:
    """Field paths and messages, one per line: what a model needs to fix its output, nothing more."""
    lines = []
    for e in error.errors(include_url=False)[:MAX_ERRORS_SHOWN]:
        path = ".".join(str(p) for p in e["loc"]) or "(root)"
        line = f"- {path}: {e['msg']}"
        if e["type"] not in ("missing",) and "input" in e and not isinstance(e["input"], (dict, list)):
            shown = repr(e["input"])
            line += f" (got {shown[:60] + '...' if len(shown) > 60 else shown})"
        lines.append(line)
    if error.error_count() > MAX_ERRORS_SHOWN:
        lines.append(f"- ... and {error.error_count() - MAX_ERRORS_SHOWN} more")
    return "\n".join(lines)


class LLM:
    """Routes roles to chat models and turns replies into validated pydantic objects.

    ``models`` maps role names (or :class:`~geofaham_plugin.core.config.Role`) to models; a single
    model serves every role.
    """

    def __init__(
        self, models: Mapping[Any, ChatModel] | ChatModel, usage: UsageLedger | None = None, max_retries: int = 2
    ) -> None:
        if isinstance(models, Mapping):
            self._models: dict[str, ChatModel] | None = {role_key(k): v for k, v in models.items()}
            self._default: ChatModel | None = None
        else:
            self._models, self._default = None, models
        self.usage = usage if usage is not None else UsageLedger()
        self.max_retries = max_retries
        #: set by the run that uses these models: a call waiting on a model returns at once when it is set
        #: (:class:`Cancelled`); the request is left to end on its own (quitting QGIS waits on no model)
        self.cancel: threading.Event | None = None

    def _chat(self, model: ChatModel, messages: list[Message], *, schema: dict | None, role: str) -> ModelReply:
        """``model.chat``, given up when :attr:`cancel` is set: the call runs on a daemon thread and is waited on
        in short slices; a cancelled call's reply is dropped when it comes."""
        cancel = self.cancel
        if cancel is None:
            return model.chat(messages, schema=schema, role=role)
        if cancel.is_set():
            raise Cancelled("cancelled by the user")
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                box["reply"] = model.chat(messages, schema=schema, role=role)
            except BaseException as exc:  # noqa: BLE001 (re-raised on the caller's thread)
                box["error"] = exc

        thread = threading.Thread(target=call, name=f"geofaham-model-{role}", daemon=True)
        thread.start()
        while thread.is_alive():
            thread.join(CANCEL_POLL_S)
            if cancel.is_set() and thread.is_alive():
                raise Cancelled("cancelled by the user (the model's reply is not waited for)")
        if "error" in box:
            raise box["error"]
        reply: ModelReply = box["reply"]
        return reply

    def model_for(self, role: Enum | str) -> ChatModel:
        if self._models is None:
            assert self._default is not None
            return self._default
        key = role_key(role)
        if key == READER_ROLE and key not in self._models:
            key = "planner"  # the reader is part of planning: the planner's model reads
        try:
            return self._models[key]
        except KeyError:
            raise GeoFahamBug(f"no model for role {role_key(role)!r} (configured: {sorted(self._models)})") from None

    def serves(self, role: Enum | str) -> bool:
        """Whether a call for ``role`` can reach a model: a scripted model serves only the roles it scripts, a real
        one none while tests block real models (then the question is read by code alone)."""
        try:
            model = self.model_for(role)
        except GeoFahamBug:
            return False
        serves = getattr(model, "serves", None)
        return bool(serves(role_key(role))) if callable(serves) else True

    def close(self) -> None:
        """Release what the models hold (e.g. the embedded server process)."""
        models = [self._default] if self._models is None else list(self._models.values())
        for m in {id(m): m for m in models}.values():
            close = getattr(m, "close", None)
            if callable(close):
                close()

    def text(
        self, role: Enum | str, messages: Sequence[Message | Mapping[str, Any]], *, step: str | None = None
    ) -> str:
        """Free text, one request, no validation."""
        role_s, model = role_key(role), self.model_for(role)
        start, ok, reply = time.monotonic(), False, None
        try:
            reply = self._chat(model, as_messages(messages), schema=None, role=role_s)
            ok = True
            return reply.text
        finally:
            self.usage.add(
                CallRecord(
                    role=role_s,
                    step=step,
                    model=(reply.model if reply else "") or model.name,
                    prompt_tokens=reply.usage.prompt_tokens if reply else 0,
                    completion_tokens=reply.usage.completion_tokens if reply else 0,
                    seconds=round(time.monotonic() - start, 3),
                    attempts=1,
                    ok=ok,
                )
            )

    def structured(
        self,
        role: Enum | str,
        messages: Sequence[Message | Mapping[str, Any]],
        output_type: type[T],
        *,
        step: str | None = None,
        validate: Callable[[T], None] | None = None,
        retries: int | None = None,
    ) -> T:
        """Ask for ``output_type`` as JSON; feed errors back and retry at most ``max_retries`` times.

        ``validate`` checks what a schema cannot (e.g. a referenced layer exists); it raises
        :class:`ModelRetry` with a hint for the model. Model server errors propagate unchanged.
        """
        role_s, model = role_key(role), self.model_for(role)
        schema = output_type.model_json_schema()
        convo = as_messages(messages)
        start = time.monotonic()
        prompt = completion = attempts = 0
        ok, model_name, text, problem = False, model.name, "", ""
        try:
            while attempts <= (self.max_retries if retries is None else retries):
                attempts += 1
                reply = self._chat(model, convo, schema=schema, role=role_s)
                prompt += reply.usage.prompt_tokens
                completion += reply.usage.completion_tokens
                model_name, text = reply.model or model_name, reply.text
                try:
                    value = output_type.model_validate_json(extract_json(text))
                except ValidationError as e:
                    problem = "Your JSON does not match the schema:\n" + format_validation_error(e)
                except ValueError as e:  # from extract_json
                    problem = f"Your reply is not usable JSON ({e})."
                    if reply.finish_reason == "length":
                        problem += " It was cut off at the token limit: send a shorter object."
                else:
                    try:
                        if validate is not None:
                            validate(value)
                        ok = True
                        return value
                    except ModelRetry as e:
                        problem = f"Your answer was rejected: {e}"
                convo = [
                    *convo,
                    Message(role="assistant", content=text),
                    Message(role="user", content=problem + "\nReply with only the corrected JSON object."),
                ]
            raise ModelOutputError(
                f"{role_s}: output still invalid after {attempts} attempts. {problem}",
                role=role_s,
                attempts=attempts,
                last_output=text,
            )
        finally:
            self.usage.add(
                CallRecord(
                    role=role_s,
                    step=step,
                    model=model_name,
                    prompt_tokens=prompt,
                    completion_tokens=completion,
                    seconds=round(time.monotonic() - start, 3),
                    attempts=attempts,
                    ok=ok,
                )
            )
