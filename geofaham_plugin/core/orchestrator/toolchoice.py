"""Which tool a plan step runs, with which arguments.

A step that names its tool runs it (after checking that its specialist has it). A step without one is
handed to its specialist's model, which sees only the step's instruction, the metadata of its input
artifacts and its own tools' schemas (never the user's question, never coordinates), and answers with
a tool name from a narrowed enum and arguments; the arguments are validated against the tool's model and
a wrong choice goes back to the model with the error (bounded retries)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, create_model

from ..agents import TOOLS
from ..agents.base import Tool, tools_of
from ..domain.names import Role
from ..errors import ModelOutputError, ModelRetry
from ..llm import LLM, Message
from ..planning.plan import PlanStep
from ..prompts import AGENT_SYSTEM
from ..store.models import ArtifactRecord
from .ledgers import Failure


class ToolChoice(BaseModel):
    """The tool a step runs and its arguments; ``by`` says whether the plan or the specialist chose it."""

    tool_name: str
    args: dict[str, Any] = Field(default_factory=dict)
    by: Literal["plan", "model"] = "plan"

    @property
    def tool(self) -> Tool:
        return TOOLS[self.tool_name]


class _ModelChoice(BaseModel):
    """The specialist model's answer: a tool name (narrowed to its agent's tools by :func:`_choice_model`)
    and that tool's arguments."""

    tool: str
    args: dict[str, Any]


def choose_tool(llm: LLM, step: PlanStep, records: dict[str, ArtifactRecord]) -> ToolChoice | Failure:
    """The step's tool and arguments, or the failure that prevents running it."""
    if step.tool:
        tool = TOOLS.get(step.tool)
        if tool is None or tool.agent is not step.agent:
            return Failure(
                step_id=step.id,
                check="plan_adherence",
                kind="tool",
                message=f"{step.agent.value} has no tool '{step.tool}'",
            )
        return ToolChoice(tool_name=tool.name, args=step.args, by="plan")
    tools = _fitting(tools_of(step.agent), records)
    content = json.dumps(
        {
            "instruction": step.goal,
            "inputs": {k: r.for_model() for k, r in records.items()},
            "tools": [t.schema_for_model() for t in tools],
        },
        separators=(",", ":"),
        default=str,
    )

    def check(choice: _ModelChoice) -> None:
        tool = TOOLS[choice.tool]
        try:
            tool.args_model.model_validate(choice.args)
        except ValidationError as exc:
            raise ModelRetry(f"invalid args for {tool.name}: {exc.errors()[:3]}") from exc
        missing = {s.name for s in tool.inputs} - set(records) - getattr(tool.fn, "_optional_inputs", set())
        if missing:
            raise ModelRetry(f"{tool.name} needs inputs {sorted(missing)}, the step has {sorted(records)}")

    try:
        choice = llm.structured(
            Role(step.agent.value),
            [
                Message(role="system", content=AGENT_SYSTEM.format(agent=step.agent.value)),
                Message(role="user", content=content),
            ],
            _choice_model([t.name for t in tools]),
            step=f"step{step.id}",
            validate=check,
        )
    except ModelOutputError as exc:
        return Failure(step_id=step.id, check="model", kind="invalid_output", message=str(exc))
    return ToolChoice(tool_name=choice.tool, args=choice.args, by="model")


def _fitting(tools: list[Tool], records: dict[str, ArtifactRecord]) -> list[Tool]:
    """The tools the step's inputs fit (every input is one the tool takes, of a kind it takes, and every input it
    needs is given), so a small model chooses among a few, not every tool of its agent; all when none fits."""

    def fits(t: Tool) -> bool:
        specs = {i.name: i for i in t.inputs}
        optional: set[str] = getattr(t.fn, "_optional_inputs", set())
        if any(name not in specs or r.kind not in specs[name].kinds for name, r in records.items()):
            return False
        return all(name in records for name, i in specs.items() if i.kinds and name not in optional)

    return [t for t in tools if fits(t)] or tools


def _choice_model(names: list[str]) -> type[_ModelChoice]:
    """``{"tool": <one of names>, "args": {...}}``: the model may only name one of the agent's tools."""
    one_of_names: Any = Literal[tuple(names)]  # a Literal built at run time is no static type
    return create_model("ToolChoice", __base__=_ModelChoice, tool=(one_of_names, ...))
