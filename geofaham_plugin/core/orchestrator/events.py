"""Run events: what the orchestrator tells its caller (the dock, the CLI, the bench) while it works.

Each kind has its own payload model; :class:`RunEvent` carries one of them (a union discriminated by
``kind``), so a reader checks the payload's class and reads typed attributes, never string keys."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from ..domain.names import AgentName
from ..planning.plan import Plan, TaskLedger
from ..store.models import ArtifactRecord
from .answer import StructuredAnswer
from .ledgers import Failure
from .runlog import RunStatus


class LedgerEvent(BaseModel):
    """The task ledger of a (re)plan."""

    kind: Literal["ledger"] = "ledger"
    ledger: TaskLedger


class PlanEvent(BaseModel):
    """A plan adopted (the first, or one after a replan)."""

    kind: Literal["plan"] = "plan"
    plan: Plan
    mode: Literal["guided", "free"]
    template: str | None = None
    index: int = Field(ge=1, description="1 for the first plan of the run, 2 after the first replan ...")


class StepStartedEvent(BaseModel):
    kind: Literal["step_started"] = "step_started"
    step: int
    agent: AgentName
    tool: str
    goal: str
    inputs: dict[str, str] = Field(default_factory=dict)  # slot -> artifact id


class StepFinishedEvent(BaseModel):
    kind: Literal["step_finished"] = "step_finished"
    step: int
    status: Literal["done", "failed"]
    artifact_id: str | None = None
    reused: bool = False  # the artifact came from an earlier identical operation of this session
    empty: bool = False  # done, but the artifact holds nothing
    message: str = ""  # why it failed

    @property
    def shown_status(self) -> Literal["done", "failed", "reused"]:
        return "reused" if self.reused else self.status


class ArtifactEvent(BaseModel):
    """An artifact registered in the Response Store (the QGIS side adds it as a layer)."""

    kind: Literal["artifact"] = "artifact"
    artifact: ArtifactRecord


class CheckFailedEvent(BaseModel):
    """A step failed a check or its tool failed; the failure counts as a stall."""

    kind: Literal["check_failed"] = "check_failed"
    step: int
    failure: Failure


class ReplanEvent(BaseModel):
    kind: Literal["replan"] = "replan"
    failures: list[str]
    replans: int


class AnswerEvent(BaseModel):
    """The run ended (answered, partial, failed or cancelled) and its record is saved."""

    kind: Literal["answer"] = "answer"
    answer: str
    status: RunStatus
    record: str  # path of the finished run record
    cited: list[str] = Field(default_factory=list)
    structured: StructuredAnswer | None = None  # what the answer states, machine-readable


class ErrorEvent(BaseModel):
    kind: Literal["error"] = "error"
    message: str
    error_type: str


class CancelledEvent(BaseModel):
    kind: Literal["cancelled"] = "cancelled"
    message: str = "cancelled by the user"


RunEventPayload = Annotated[
    LedgerEvent
    | PlanEvent
    | StepStartedEvent
    | StepFinishedEvent
    | ArtifactEvent
    | CheckFailedEvent
    | ReplanEvent
    | AnswerEvent
    | ErrorEvent
    | CancelledEvent,
    Field(discriminator="kind"),
]
EventKind = Literal[
    "ledger",
    "plan",
    "step_started",
    "step_finished",
    "artifact",
    "check_failed",
    "replan",
    "answer",
    "error",
    "cancelled",
]


class RunEvent(BaseModel):
    run_id: str
    payload: RunEventPayload
    at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @property
    def type(self) -> EventKind:
        """The payload's kind (``"plan"``, ``"step_finished"`` ...)."""
        return self.payload.kind


EventCallback = Callable[[RunEvent], None]
