"""Typed tools and the specialists that own them.

A tool is declared once: its argument model (whose JSON schema the model sees), the artifacts it
consumes (with the kinds and geometry it accepts, and whether it measures in metres), and the artifact
kind it produces. Declarations are checked when the module is imported."""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from ..config import Settings
from ..domain.names import AgentName
from ..engines.layers import LayerCatalogue
from ..errors import GeoFahamBug, ModelRetry, ToolFailed
from ..store.models import ArtifactKind, ArtifactRecord


@dataclass(frozen=True)
class InputSpec:
    name: str
    kinds: frozenset[ArtifactKind]
    geometry: frozenset[str] | None = None  # point | line | polygon; None = any
    description: str = ""


@dataclass
class ToolContext:
    """What a tool may touch: the session's store, the local layer catalogue and settings; nothing else."""

    store: Any  # ResponseStore
    layers: LayerCatalogue
    settings: Settings
    cancel: threading.Event = field(default_factory=threading.Event)
    notes: list[str] = field(default_factory=list)  # e.g. "reprojected to a local metric CRS"
    #: monotonic time the step must end by (its own limit, and the run's), None: no limit
    deadline: float | None = None

    def time_left(self, cap: float | None = None) -> float | None:
        """Seconds the step may still run, at most ``cap`` (None: no limit, no cap)."""
        left = None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
        if cap is None:
            return left
        return cap if left is None else min(cap, left)


@dataclass(frozen=True)
class Tool:
    name: str
    agent: AgentName
    description: str
    args_model: type[BaseModel]
    inputs: tuple[InputSpec, ...]
    output: ArtifactKind
    fn: Callable[..., ArtifactRecord]
    metric: bool = False  # measures distances/areas: needs a metric CRS (the engine reprojects)
    # (input a, input b, args field holding a distance) whose extents must come within that distance
    overlap: tuple[str, str, str | None] | None = None
    field_arg: tuple[str, str] | None = None  # (args field naming a column, input that must have it)
    accepts_empty: frozenset[str] = frozenset()  # inputs that may be empty (the result is then empty too)
    #: the parts of a question the tool applies by itself (see :func:`covers`): constraint kind -> True, an args field
    #: holding the value (a distance), or the one value it applies (k 1: one nearest each)
    covers: Mapping[str, bool | str | int] = field(default_factory=dict)

    def run(self, ctx: ToolContext, args: dict[str, Any], inputs: dict[str, ArtifactRecord]) -> ArtifactRecord:
        try:
            parsed = self.args_model.model_validate(args)
        except ValidationError as exc:
            raise ModelRetry(f"invalid arguments for {self.name}: {_short_errors(exc)}") from exc
        missing = [spec.name for spec in self.inputs if spec.name not in inputs and spec.kinds]
        optional: set[str] = getattr(self.fn, "_optional_inputs", set())
        missing = [m for m in missing if m not in optional]
        if missing:
            raise ModelRetry(f"{self.name} needs inputs {missing}")
        if ctx.cancel.is_set():
            raise ToolFailed("cancelled", kind="cancelled")
        with ctx.store.computing():  # the store's writer waits meanwhile: the step has the interpreter to itself
            return self.fn(ctx, parsed, **inputs)

    def schema_for_model(self) -> dict[str, Any]:
        return {
            "tool": self.name,
            "description": self.description,
            "inputs": {s.name: s.description or "/".join(sorted(k.value for k in s.kinds)) for s in self.inputs},
            "args": self.args_model.model_json_schema(),
        }


def _short_errors(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors()[:5])


TOOLS: dict[str, Tool] = {}
ToolFn = Callable[..., ArtifactRecord]


def tool(
    *,
    agent: AgentName,
    args: type[BaseModel],
    output: ArtifactKind,
    inputs: tuple[InputSpec, ...] = (),
    metric: bool = False,
    overlap: tuple[str, str, str | None] | None = None,
    field_arg: tuple[str, str] | None = None,
    optional_inputs: tuple[str, ...] = (),
    accepts_empty: tuple[str, ...] = (),
    covers: Mapping[str, bool | str | int] | None = None,
) -> Callable[[ToolFn], ToolFn]:
    """Register ``fn(ctx, args, **inputs) -> ArtifactRecord`` as a tool; the declaration is checked now."""

    def register(fn: ToolFn) -> ToolFn:
        name = fn.__name__
        if name in TOOLS:
            raise GeoFahamBug(f"tool {name} declared twice")
        params = list(inspect.signature(fn).parameters)
        if params[:2] != ["ctx", "args"] or set(params[2:]) != {s.name for s in inputs}:
            raise GeoFahamBug(f"tool {name}: parameters {params} do not match its inputs {[s.name for s in inputs]}")
        if not (isinstance(args, type) and issubclass(args, BaseModel)):
            raise GeoFahamBug(f"tool {name}: args must be a pydantic model")
        names = {s.name for s in inputs}
        if overlap and not {overlap[0], overlap[1]} <= names:
            raise GeoFahamBug(f"tool {name}: overlap names unknown inputs")
        if overlap and overlap[2] and overlap[2] not in args.model_fields:
            raise GeoFahamBug(f"tool {name}: overlap distance field {overlap[2]} not in args")
        if not set(accepts_empty) <= names:
            raise GeoFahamBug(f"tool {name}: accepts_empty names unknown inputs")
        if field_arg and (field_arg[0] not in args.model_fields or field_arg[1] not in names):
            raise GeoFahamBug(f"tool {name}: bad field_arg {field_arg}")
        for kind, rule in (covers or {}).items():
            if isinstance(rule, str) and rule not in args.model_fields:
                raise GeoFahamBug(f"tool {name}: covers {kind} by an unknown args field {rule}")
        fn._optional_inputs = set(optional_inputs)  # type: ignore[attr-defined]
        doc = inspect.getdoc(fn) or ""
        TOOLS[name] = Tool(
            name=name,
            agent=agent,
            description=doc.split("\n\n")[0],
            args_model=args,
            inputs=inputs,
            output=output,
            fn=fn,
            metric=metric,
            overlap=overlap,
            field_arg=field_arg,
            accepts_empty=frozenset(accepts_empty),
            covers=dict(covers or {}),
        )
        return fn

    return register


def covers(tool_name: str | None, kind: str, value: object, args: Mapping[str, Any]) -> bool:
    """Whether a step of ``tool_name`` that ran with ``args`` applies a question's constraint of ``kind`` with
    ``value``, by the tool's own declaration: always (True), by an argument holding the same number (a distance in
    metres, to within half a metre), or for that one value (the 1 nearest)."""
    rule = TOOLS[tool_name].covers.get(kind) if tool_name in TOOLS else None
    if rule is None or rule is False:
        return False
    if rule is True:
        return True
    if isinstance(rule, str):
        said = args.get(rule)
        try:
            return abs(float(said) - float(value)) <= max(0.5, 1e-6 * abs(float(value)))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False
    return value == rule


def tools_of(agent: AgentName) -> list[Tool]:
    return [t for t in TOOLS.values() if t.agent is agent]


def get_tool(name: str) -> Tool:
    try:
        return TOOLS[name]
    except KeyError:
        raise ModelRetry(f"unknown tool '{name}'; tools are: {', '.join(sorted(TOOLS))}") from None


VECTOR_KINDS = frozenset({ArtifactKind.vector, ArtifactKind.aoi})
