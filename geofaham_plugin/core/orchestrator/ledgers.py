"""The orchestrator's typed state: task ledger, plan, progress ledger, run events.

Inputs of a step are artifact ids (``a_1234abcd``) or references to earlier steps (``step:2``);
a step reference is not an artifact until that step has produced one (the input-validity check)."""

from __future__ import annotations

import re
from datetime import date, datetime, timezone
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from ..planning.facts import DamageClass, TimeWindow
from ..store.models import ArtifactKind

STEP_REF = re.compile(r"^step:(\d+)$")
ARTIFACT_ID = re.compile(r"^a_[0-9a-f]{8}$")


class AgentName(str, Enum):
    vector = "vector"
    maps = "maps"
    stac = "stac"
    raster = "raster"


class TaskLedger(BaseModel):
    """Facts about the task, kept across replans (``known_failures`` grows with each)."""

    intent: str = Field(description="what the user wants, one sentence")
    requested_output: Literal["answer", "vector", "raster", "table"] = "answer"
    disaster_event_id: int | None = Field(default=None, description="id in the event table")
    event_date: date | None = None
    time_windows: list[TimeWindow] = Field(default_factory=list)
    aoi_source: Literal["event", "user_aoi", "place", "artifact", "none"] = "event"
    aoi_artifact_id: str | None = None
    place: str | None = None
    target_entities: list[str] = Field(default_factory=list)
    damage_classes: list[DamageClass] = Field(default_factory=list)
    distances_m: list[float] = Field(default_factory=list)
    operations: list[str] = Field(default_factory=list, description="spatial operations, e.g. within_distance")
    reusable_artifacts: list[str] = Field(default_factory=list)
    known_failures: list[str] = Field(default_factory=list)
    template: str | None = None  # guided mode: the workflow template chosen


class PlanStep(BaseModel):
    id: int = Field(ge=1)
    agent: AgentName
    goal: str
    tool: str | None = Field(default=None, description="typed operation; None lets the specialist choose")
    args: dict[str, Any] = Field(default_factory=dict)
    inputs: dict[str, str] = Field(default_factory=dict, description="slot -> artifact id or step:N")
    expected_output: ArtifactKind
    depends_on: list[int] = Field(default_factory=list)
    empty_is_answer: bool = Field(default=False, description="an empty output answers the question ('none within 1 km'); otherwise it stalls")

    @field_validator("inputs")
    @classmethod
    def _refs_are_well_formed(cls, value: dict[str, str]) -> dict[str, str]:
        for slot, ref in value.items():
            if not (STEP_REF.match(ref) or ARTIFACT_ID.match(ref)):
                raise ValueError(f"input '{slot}' must be an artifact id like a_1234abcd or a step reference like step:1, got {ref!r}")
        return value

    def step_refs(self) -> list[int]:
        return [int(m.group(1)) for ref in self.inputs.values() if (m := STEP_REF.match(ref))]


class Plan(BaseModel):
    steps: list[PlanStep] = Field(min_length=1, max_length=12)
    rationale: str = ""

    def step(self, step_id: int) -> PlanStep:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)


class StepStatus(str, Enum):
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


class RunEvent(BaseModel):
    type: Literal["ledger", "plan", "step_started", "step_finished", "artifact", "check_failed", "replan",
                  "answer", "error", "cancelled"]
    run_id: str
    data: dict[str, Any] = Field(default_factory=dict)
    at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
