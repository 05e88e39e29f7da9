"""Plan validation in code: the same checks for guided (compiled) and free (model-written) plans."""

from __future__ import annotations

import json

from pydantic import ValidationError

from ..agents.base import TOOLS
from ..domain.ids import ARTIFACT_ID
from ..store.store import ResponseStore
from .plan import Plan


def validate_plan(plan: Plan, store: ResponseStore | None = None) -> list[str]:
    """Problems found (empty when the plan is sound). Fills ``depends_on`` from step references."""
    problems: list[str] = []
    ids = [s.id for s in plan.steps]
    if len(set(ids)) != len(ids):
        problems.append(f"duplicate step ids: {ids}")
    seen_ops: set[str] = set()
    earlier: set[int] = set()
    for step in plan.steps:
        refs = step.step_refs()
        for dep in refs + step.depends_on:
            if dep == step.id:
                problems.append(f"step {step.id} refers to itself")
            elif dep not in earlier:
                problems.append(f"step {step.id} refers to step {dep}, which does not come before it")
        step.depends_on = sorted(set(step.depends_on) | set(refs))
        for slot, ref in step.inputs.items():
            if ARTIFACT_ID.match(ref) and (store is None or ref not in store):
                problems.append(f"step {step.id} input '{slot}' uses {ref}, which is not in the Response Store")
        if step.tool is not None:
            tool = TOOLS.get(step.tool)
            if tool is None:
                problems.append(f"step {step.id}: unknown tool '{step.tool}'")
            else:
                if tool.agent is not step.agent:
                    problems.append(f"step {step.id}: tool {step.tool} belongs to the {tool.agent.value} agent")
                try:
                    tool.args_model.model_validate(step.args)
                except ValidationError as exc:
                    problems.append(
                        f"step {step.id}: bad args for {step.tool}: "
                        + "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])
                    )
                expected = {s.name for s in tool.inputs} - getattr(tool.fn, "_optional_inputs", set())
                if set(step.inputs) - {s.name for s in tool.inputs}:
                    problems.append(
                        f"step {step.id}: {step.tool} has no inputs {sorted(set(step.inputs) - {s.name for s in tool.inputs})}"
                    )
                if expected - set(step.inputs):
                    problems.append(f"step {step.id}: {step.tool} needs inputs {sorted(expected - set(step.inputs))}")
                if tool.output is not step.expected_output:
                    step.expected_output = tool.output  # derived from the declaration, not a model's guess
        signature = json.dumps(
            [step.agent.value, step.tool, step.args, step.inputs, step.goal if step.tool is None else ""],
            sort_keys=True,
            default=str,
        )
        if signature in seen_ops:
            problems.append(f"step {step.id} duplicates an earlier step")
        seen_ops.add(signature)
        earlier.add(step.id)
    return problems
