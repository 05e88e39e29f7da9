"""A plan and the task it serves: the task ledger (facts kept across replans) and the plan's steps.

Inputs of a step are artifact ids (``a_1234abcd``) or references to earlier steps (``step:2``);
a step reference is not an artifact until that step has produced one (the orchestrator's
input-validity check). The planner writes these types; the orchestrator runs them."""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from ..domain.damage import DamageClass
from ..domain.ids import ARTIFACT_ID
from ..domain.names import SPECIALISTS, AgentName
from ..domain.time import TimeWindow
from ..store.models import ArtifactKind

STEP_REF = re.compile(r"^step:(\d+)$")


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
    agent: AgentName = Field(
        json_schema_extra={"enum": [a.value for a in SPECIALISTS]}, description="the specialist that runs the step"
    )
    goal: str
    tool: str | None = Field(default=None, description="typed operation; None lets the specialist choose")
    args: dict[str, Any] = Field(default_factory=dict)
    inputs: dict[str, str] = Field(default_factory=dict, description="slot -> artifact id or step:N")
    expected_output: ArtifactKind
    depends_on: list[int] = Field(default_factory=list)
    empty_is_answer: bool = Field(
        default=False, description="an empty output answers the question ('none within 1 km'); otherwise it stalls"
    )

    @field_validator("agent")
    @classmethod
    def _agent_is_specialist(cls, value: AgentName) -> AgentName:
        if value not in SPECIALISTS:
            raise ValueError(f"agent must be one of {', '.join(a.value for a in SPECIALISTS)}, got {value.value!r}")
        return value

    @field_validator("inputs")
    @classmethod
    def _refs_are_well_formed(cls, value: dict[str, str]) -> dict[str, str]:
        for slot, ref in value.items():
            if not (STEP_REF.match(ref) or ARTIFACT_ID.match(ref)):
                raise ValueError(
                    f"input '{slot}' must be an artifact id like a_1234abcd or a step reference like step:1, got {ref!r}"
                )
        return value

    def step_refs(self) -> list[int]:
        return [int(m.group(1)) for ref in self.inputs.values() if (m := STEP_REF.match(ref))]


class Plan(BaseModel):
    steps: list[PlanStep] = Field(min_length=1, max_length=12)
    rationale: str = ""
    results: list[int] = Field(
        default_factory=list,
        description="the steps whose outputs are the answer, one per analysis (a list of the hospitals with their "
        "distances beside the sum of their beds computed from it); empty: the steps no other step uses",
    )

    def step(self, step_id: int) -> PlanStep:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)
