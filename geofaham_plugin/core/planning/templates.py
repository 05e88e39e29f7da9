"""Workflow templates (one JSON file each in ``templates/``) and their compilation into a typed plan.

A template names its slots and its steps; ``{slot}`` placeholders in step args and goals are filled
with typed slot values; agents come from the tools' declarations and ``depends_on`` from the step
references — the model never writes them. Adding a workflow is adding a file."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..agents.base import get_tool
from ..domain.damage import DamageClass
from .plan import STEP_REF, Plan, PlanStep

TEMPLATE_DIR = Path(__file__).with_name("templates")
GROUP_BY_FIELDS: dict[str, str] = json.loads((Path(__file__).with_name("data") / "group_by.json").read_text())["fields"]
PLACEHOLDER = re.compile(r"\{(\w+)\}")


class SlotSpec(BaseModel):
    type: Literal["feature_class", "distance_m", "k", "damage_classes", "group_by", "index", "days"]
    required: bool = True
    default: Any = None


class TemplateStep(BaseModel):
    agent: str
    tool: str
    goal: str
    args: dict[str, Any] = Field(default_factory=dict)
    inputs: dict[str, str] = Field(default_factory=dict)
    aoi_replaces: bool = False  # a user AOI artifact stands in for this step's output
    empty_is_answer: bool = False  # nothing found here means "none" (not a failure to replan on)


class Example(BaseModel):
    question: str
    slots: dict[str, Any]


class Template(BaseModel):
    name: str
    description: str
    use_when: str = ""
    slots: dict[str, SlotSpec]
    keywords: list[str] = Field(default_factory=list)
    requested_output: Literal["answer", "vector", "raster", "table"] = "answer"
    operations: list[str] = Field(default_factory=list)
    steps: list[TemplateStep]
    examples: list[Example] = Field(default_factory=list)


@lru_cache(maxsize=1)
def load_templates() -> dict[str, Template]:
    templates = {}
    for path in sorted(TEMPLATE_DIR.glob("*.json")):
        template = Template.model_validate_json(path.read_text(encoding="utf-8"))
        for step in template.steps:
            tool = get_tool(step.tool)  # declaration check: every tool exists for its agent
            if tool.agent.value != step.agent:
                raise ValueError(
                    f"template {template.name}: {step.tool} belongs to {tool.agent.value}, not {step.agent}"
                )
        templates[template.name] = template
    return templates


class TemplateError(ValueError):
    """Slots do not fit the template (the message is a hint for the model)."""


def fill_slots(template: Template, slots: dict[str, Any]) -> dict[str, Any]:
    """Typed slot values with defaults; raises TemplateError naming what is missing or wrong."""
    filled: dict[str, Any] = {}
    for name, spec in template.slots.items():
        value = slots.get(name)
        if value in (None, [], ""):
            if spec.required:
                raise TemplateError(f"template {template.name} needs slot '{name}' ({spec.type})")
            value = spec.default
        if value is not None:
            if spec.type == "distance_m":
                value = float(value)
                if value <= 0:
                    raise TemplateError(f"'{name}' must be a positive distance in metres")
            elif spec.type == "k":
                value = int(value)
            elif spec.type == "damage_classes":
                value = [DamageClass(v).value for v in value]
            elif spec.type == "group_by":
                if value not in GROUP_BY_FIELDS and value not in GROUP_BY_FIELDS.values():
                    raise TemplateError(f"unknown group_by '{value}'; use one of {sorted(GROUP_BY_FIELDS)}")
                value = GROUP_BY_FIELDS.get(value, value)
            elif spec.type == "index":
                from ..engines.raster.ops import INDEX_NAMES

                value = str(value).lower()
                if value not in INDEX_NAMES:
                    raise TemplateError(f"unknown index '{value}'; use one of {list(INDEX_NAMES)}")
            elif spec.type == "days":
                value = int(value)
                if not 1 <= value <= 365:
                    raise TemplateError(f"'{name}' must be a number of days between 1 and 365")
        filled[name] = value
    return filled


def _substitute(value: Any, values: dict[str, Any]) -> Any:
    if isinstance(value, str):
        whole = PLACEHOLDER.fullmatch(value)
        if whole:  # a whole-value placeholder keeps its type (number, list, null)
            return values[whole.group(1)]
        return PLACEHOLDER.sub(lambda m: _text(values[m.group(1)]), value)
    if isinstance(value, list):
        return [_substitute(v, values) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, values) for k, v in value.items()}
    return value


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def compile_template(
    template: Template,
    slots: dict[str, Any],
    *,
    event_id: int | None,
    event_name: str = "",
    aoi_artifact_id: str | None = None,
) -> Plan:
    """The typed plan for ``template`` with ``slots``; steps marked ``aoi_replaces`` become the user's AOI."""
    values = fill_slots(template, slots)
    values.update(
        event_id=event_id,
        event_name=event_name or f"event {event_id}",
        area="the area of interest" if aoi_artifact_id else "the hazard area",
        group_by_text=f" by {values['group_by']}" if values.get("group_by") else "",
    )
    replaced: dict[int, str] = {}
    kept: list[tuple[int, TemplateStep]] = []
    for index, step in enumerate(template.steps, start=1):
        if step.aoi_replaces and aoi_artifact_id:
            replaced[index] = aoi_artifact_id
            continue
        if event_id is None and "{event_id}" in json.dumps(step.args):
            raise TemplateError(f"template {template.name} needs a disaster event (none was identified)")
        kept.append((index, step))
    renumber = {old: new for new, (old, _) in enumerate(kept, start=1)}
    plan_steps = []
    for old, step in kept:
        inputs = {}
        for slot, ref in step.inputs.items():
            m = STEP_REF.match(ref)
            source = int(m.group(1)) if m else None
            inputs[slot] = replaced[source] if source in replaced else f"step:{renumber[source]}" if source else ref
        tool = get_tool(step.tool)
        plan_step = PlanStep(
            id=renumber[old],
            agent=tool.agent,
            tool=step.tool,
            goal=_substitute(step.goal, values),
            args=_substitute(step.args, values),
            inputs=inputs,
            expected_output=tool.output,
            empty_is_answer=step.empty_is_answer,
        )
        plan_step.depends_on = sorted(set(plan_step.step_refs()))
        plan_steps.append(plan_step)
    return Plan(steps=plan_steps, rationale=f"template {template.name}")
