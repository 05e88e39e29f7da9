"""A scripted chat model for tests and the bench (cf. pydantic-ai's TestModel / FunctionModel).

Shipped in the package, not in tests, so the bench and the plugin's offline demo can replay a run
through the real :class:`~.base.LLM` code path: parsing, retries and usage accounting included.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pydantic import BaseModel

from ..errors import GeoFahamBug
from .base import Message, ModelReply, Usage, role_key

Payload = str | dict | BaseModel
Response = Payload | Callable[[list[Message], dict | None], Payload]
ScriptFunction = Callable[[str, list[Message], dict | None], Payload]


@dataclass(frozen=True)
class ScriptedCall:
    role: str
    messages: list[Message]
    schema: dict | None

    @property
    def last_user(self) -> str:
        """The last user message: where a retry's error text is."""
        return next((m.content for m in reversed(self.messages) if m.role == "user"), "")


def payload_text(payload: Any) -> str:
    if isinstance(payload, str):
        return payload
    if isinstance(payload, BaseModel):
        return payload.model_dump_json()
    if isinstance(payload, (dict, list)):
        return json.dumps(payload)
    raise GeoFahamBug(f"scripted response must be str, dict or pydantic model, not {type(payload).__name__}")


class ScriptedModel:
    """Replies from a per-role script ``{role: [response, ...]}`` or from ``function(role, messages, schema)``.

    A response is a str, a dict (sent as JSON), a pydantic model (dumped) or
    ``callable(messages, schema)`` returning one of those. Every call is kept in ``calls``.
    Usage is estimated at four characters per token.
    """

    def __init__(self, script: Mapping[Any, Sequence[Response]] | ScriptFunction, *, name: str = "scripted") -> None:
        self.name = name
        self.calls: list[ScriptedCall] = []
        self._lock = threading.Lock()
        if callable(script) and not isinstance(script, Mapping):
            self._function: ScriptFunction | None = script
            self._script: dict[str, list[Response]] = {}
        else:
            self._function = None
            self._script = {role_key(k): list(v) for k, v in script.items()}
        self._used: dict[str, int] = {}

    def serves(self, role: Enum | str) -> bool:
        """A script serves the roles it names; a function every role but the question reader's (a test that scripts
        the reader names it in a mapping)."""
        key = role_key(role)
        return key in self._script if self._function is None else key != "reader"

    def used(self, role: Enum | str) -> int:
        return self._used.get(role_key(role), 0)

    def remaining(self, role: Enum | str) -> int:
        return len(self._script.get(role_key(role), [])) - self.used(role)

    def calls_for(self, role: Enum | str) -> list[ScriptedCall]:
        return [c for c in self.calls if c.role == role_key(role)]

    def assert_exhausted(self) -> None:
        """Fail when a scripted response was never asked for (the run took a shorter path than expected)."""
        left = {role: self.remaining(role) for role in self._script if self.remaining(role)}
        if left:
            raise AssertionError(f"ScriptedModel: unused responses left {left}")

    def chat(self, messages: list[Message], *, schema: dict | None = None, role: str = "") -> ModelReply:
        role = role_key(role)
        with self._lock:
            self.calls.append(ScriptedCall(role, list(messages), schema))
            function = self._function
            if function is not None:
                response: Response = lambda msgs, sch: function(role, msgs, sch)  # noqa: E731
            else:
                if role not in self._script:
                    raise GeoFahamBug(
                        f"ScriptedModel has no script for role {role!r} (scripted roles: {sorted(self._script)})"
                    )
                n = self._used.get(role, 0)
                if n >= len(self._script[role]):
                    raise GeoFahamBug(
                        f"ScriptedModel: script for role {role!r} ran out: all {n} responses used, "
                        f"call #{n + 1} has none"
                    )
                self._used[role] = n + 1
                response = self._script[role][n]
        text = payload_text(response(list(messages), schema) if callable(response) else response)
        prompt = sum(len(m.content) for m in messages) // 4
        return ModelReply(
            text=text,
            usage=Usage(prompt_tokens=prompt, completion_tokens=len(text) // 4),
            model=self.name,
            finish_reason="stop",
        )
