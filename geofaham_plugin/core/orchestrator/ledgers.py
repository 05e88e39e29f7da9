"""The orchestrator's typed state: the progress ledger (inner loop), failures, progress decisions,
run events. The task ledger and the plan (outer loop) are planning's types (``planning/plan.py``)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field


class StepStatus(StrEnum):
    pending = "pending"
    running = "running"
    done = "done"
    failed = "failed"
    skipped = "skipped"


class Failure(BaseModel):
    step_id: int | None
    check: Literal["plan_adherence", "input_validity", "geospatial_compatibility", "tool", "empty_result", "model"]
    kind: str = "error"
    message: str
    hint: str | None = None

    def describe(self) -> str:
        where = f"step {self.step_id}" if self.step_id is not None else "plan"
        return f"{where}: {self.check} ({self.kind}): {self.message}" + (f" — {self.hint}" if self.hint else "")


class ProgressLedger(BaseModel):
    status: dict[int, StepStatus] = Field(default_factory=dict)
    artifacts: dict[int, str] = Field(default_factory=dict)  # step id -> artifact id
    failures: list[Failure] = Field(default_factory=list)
    stalls: int = 0
    turns: int = 0
    replans: int = 0

    def done(self) -> list[int]:
        return [k for k, v in self.status.items() if v is StepStatus.done]

    def pending(self) -> list[int]:
        return [k for k, v in self.status.items() if v is StepStatus.pending]


class ProgressDecision(BaseModel):
    """What the progress model decides after an observed failure."""

    action: Literal["replan", "skip_step", "finish"] = Field(
        description="replan: revise the plan using the failure; skip_step: continue without this step; finish: stop and answer with what exists"
    )
    reason: str = Field(max_length=300)
