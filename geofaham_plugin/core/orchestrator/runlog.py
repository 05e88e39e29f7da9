"""The run log of a session: the one module that knows the session's ``runs/`` folder.

Layout (unchanged from the first release, so old sessions load)::

    <session>/runs/<run_id>.json         the finished run record (written once the run ends)
    <session>/runs/<run_id>.state.json   the run's saved state, rewritten on every state change (resume)
    <session>/runs/memo.json             operation signature -> artifact id (reuse across runs)
    <session>/runs/memo.lock             lock file: one memo writer at a time (fcntl)
    <session>/runs/<run_id>.lock         held (fcntl) by the process running the run; gone once it ends

A run whose saved state says ``running`` while nobody holds its lock was cut off (the process was
killed, the machine went down): :meth:`RunLog.interrupted` lists it, and the orchestrator's
``resume`` continues it.

Every file is written atomically (temporary file in the same folder, fsync, ``os.replace``, fsync of
the folder): a process killed mid-write leaves the previous version intact, never half a file.
The orchestrator writes through :class:`RunLog`; the QGIS session, the export, the CLI and the bench
read through it. Nobody else builds these paths or parses these files."""

from __future__ import annotations

import contextlib
import json
import logging
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from ..domain.files import atomic_write_text, locked, set_aside, try_lock
from ..domain.language import Language
from ..domain.names import AgentName
from ..domain.secrets import mask_secrets
from ..llm import CallRecord, UsageLedger
from ..planning.coverage import Constraint
from ..planning.facts import PrepassFacts
from ..planning.planner import PlanResult
from .answer import StructuredAnswer
from .ledgers import Failure, ProgressDecision, ProgressLedger, StepStatus

log = logging.getLogger(__name__)

RUNS_DIR = "runs"
MEMO_FILE = "memo.json"
MEMO_LOCK = "memo.lock"
RECORD_SUFFIX = ".json"
STATE_SUFFIX = ".state.json"
OWNER_SUFFIX = ".lock"
RUN_ID = re.compile(r"^r_[A-Za-z0-9_-]{1,64}$")

RunStatus = Literal["running", "answered", "partial", "failed", "cancelled", "timed_out"]


# ------------------------------------------------------------------------------------------- records
class TokenTotals(BaseModel):
    prompt: int = 0
    completion: int = 0
    calls: int = 0


class RunUsage(BaseModel):
    """Model calls of one run and their token totals per role."""

    calls: list[CallRecord] = Field(default_factory=list)
    totals: dict[str, TokenTotals] = Field(default_factory=dict)

    @classmethod
    def from_ledger(cls, ledger: UsageLedger) -> RunUsage:
        return cls(calls=ledger.snapshot(), totals=ledger.totals())

    def total(self) -> TokenTotals:
        return TokenTotals(
            prompt=sum(t.prompt for t in self.totals.values()),
            completion=sum(t.completion for t in self.totals.values()),
            calls=sum(t.calls for t in self.totals.values()),
        )


class StepRecord(BaseModel):
    """One attempt at a plan step: what ran, on which artifacts, with what outcome."""

    plan_index: int
    step_id: int
    agent: AgentName
    tool: str | None
    args: dict[str, Any] = Field(default_factory=dict)
    inputs: dict[str, str] = Field(default_factory=dict)  # resolved artifact ids
    status: StepStatus
    artifact_id: str | None = None
    seconds: float = 0.0
    failure: Failure | None = None
    reused: bool = False  # the artifact came from an earlier run of this session (same tool, args, inputs)


class RunRecord(BaseModel):
    """A run: question, facts, plans, progress, steps, decisions, answer, usage, timings."""

    run_id: str = Field(pattern=RUN_ID.pattern)
    question: str
    # the question's language ("en", "es", "fr", "pt"): the answer's fixed texts are in it ("en" in old records)
    language: Language = "en"
    aoi_artifact_id: str | None = None
    follow_up_of: str | None = None
    status: RunStatus = "running"
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    finished_at: datetime | None = None
    facts: PrepassFacts | None = None
    plans: list[PlanResult] = Field(default_factory=list)
    progress: ProgressLedger = Field(default_factory=ProgressLedger)
    steps: list[StepRecord] = Field(default_factory=list)
    decisions: list[ProgressDecision] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    # each constraint of the question and the steps of the final plan that applied it (empty list: none)
    constraints: list[Constraint] = Field(default_factory=list)
    # steps of the final plan that narrowed the answer in a way the question did not ask for
    unasked_limits: list[str] = Field(default_factory=list)
    answer: str = ""
    cited_artifacts: list[str] = Field(default_factory=list)
    # what the answer states, machine-readable (None in records written before it existed)
    structured: StructuredAnswer | None = None
    usage: RunUsage = Field(default_factory=RunUsage)
    seconds: float = 0.0
    error: str | None = None

    def artifact_ids(self) -> list[str]:
        """Every artifact the run produced or used (its AOI first), each once, in run order."""
        ids = [self.aoi_artifact_id] if self.aoi_artifact_id else []
        for s in self.steps:
            ids += ([s.artifact_id] if s.artifact_id else []) + list(s.inputs.values())
        return list(dict.fromkeys(ids))


def new_run_id() -> str:
    return "r_" + uuid.uuid4().hex[:8]


def memo_key(tool: str, args: dict[str, Any], inputs: dict[str, str]) -> str:
    """The signature of an operation (tool, arguments, input artifact ids) under which the memo keeps
    its artifact: the same signature on the same store means the same result."""
    return json.dumps([tool, args, dict(sorted(inputs.items()))], sort_keys=True, default=str)


_MEMO = TypeAdapter(dict[str, str])


# ------------------------------------------------------------------------------------------- the log
class RunNotFound(FileNotFoundError):
    """No record (or saved state) of this run in the session."""


class RunBusy(RuntimeError):
    """The run is being run by another process right now."""


class RunLog:
    """The ``runs/`` folder of one session. Cheap to create; creates the folder on the first write."""

    def __init__(self, session_dir: str | Path) -> None:
        self.session_dir = Path(session_dir)
        self.runs_dir = self.session_dir / RUNS_DIR

    # ------------------------------------------------------------------------------------ paths
    def record_path(self, run_id: str) -> Path:
        """Where the finished record of ``run_id`` is (or will be)."""
        return self.runs_dir / f"{_checked(run_id)}{RECORD_SUFFIX}"

    def state_path(self, run_id: str) -> Path:
        return self.runs_dir / f"{_checked(run_id)}{STATE_SUFFIX}"

    # ---------------------------------------------------------------------------------- writing
    def save_state(self, record: RunRecord) -> Path:
        """Save the run's current state (called on every state change; what :meth:`load_state` resumes)."""
        path = self.state_path(record.run_id)
        atomic_write_text(path, mask_secrets(record.model_dump_json()))  # e.g. a DSN in an error message
        return path

    def save_record(self, record: RunRecord) -> Path:
        """Write the finished run record, then the state to match it; returns the record's path."""
        path = self.record_path(record.run_id)
        atomic_write_text(path, mask_secrets(record.model_dump_json(indent=2)))
        self.save_state(record)
        return path

    # ---------------------------------------------------------------------------------- reading
    def load_state(self, run_id: str) -> RunRecord:
        """The saved state of ``run_id`` (to resume it)."""
        return self._read(self.state_path(run_id), run_id)

    def load_record(self, run_id: str) -> RunRecord:
        """The finished record of ``run_id``."""
        return self._read(self.record_path(run_id), run_id)

    def load(self, run_id: str) -> RunRecord | None:
        """The finished record of ``run_id``, else its saved state, else None."""
        for path in (self.record_path(run_id), self.state_path(run_id)):
            if path.exists():
                return self._read(path, run_id)
        return None

    def has_record(self, run_id: str) -> bool:
        return self.record_path(run_id).exists()

    def record_text(self, run_id: str) -> str:
        """The finished record of ``run_id`` exactly as stored (for an export)."""
        path = self.record_path(run_id)
        if not path.exists():
            raise RunNotFound(f"no finished run {run_id} in {self.session_dir}")
        return path.read_text(encoding="utf-8")

    # ---------------------------------------------------------------------------------- listing
    def run_ids(self) -> list[str]:
        """Every run with a record or a saved state, in no particular order."""
        if not self.runs_dir.is_dir():
            return []
        ids = set()
        for path in self.runs_dir.glob("r_*.json"):
            run_id = path.name[: -len(STATE_SUFFIX)] if path.name.endswith(STATE_SUFFIX) else path.stem
            if RUN_ID.match(run_id):
                ids.add(run_id)
        return sorted(ids)

    def runs(self, *, finished_only: bool = False, exclude: set[str] | frozenset[str] = frozenset()) -> list[RunRecord]:
        """The session's runs but those in ``exclude``, oldest first (by start). A run is read from its
        finished record, else (unless ``finished_only``) from its saved state: a run cut off mid-way.
        Unreadable files are skipped with a warning."""
        out = []
        for run_id in self.run_ids():
            if run_id in exclude:
                continue
            paths = [self.record_path(run_id)] + ([] if finished_only else [self.state_path(run_id)])
            path = next((p for p in paths if p.exists()), None)
            if path is None:
                continue
            try:
                out.append(self._read(path, run_id))
            except (OSError, ValueError) as exc:
                log.warning("skipping the unreadable run file %s: %s", path, exc)
        return sorted(out, key=lambda r: (r.started_at, r.run_id))

    def finished_runs(self) -> list[RunRecord]:
        """Runs with a finished record, in the order they finished (oldest first)."""
        return sorted(self.runs(finished_only=True), key=lambda r: (r.finished_at or r.started_at, r.started_at))

    def last_run(self) -> RunRecord | None:
        """The most recently finished run of this session (for follow-up questions)."""
        finished = self.finished_runs()
        return finished[-1] if finished else None

    # -------------------------------------------------------------------------------- ownership
    def owner_path(self, run_id: str) -> Path:
        return self.runs_dir / f"{_checked(run_id)}{OWNER_SUFFIX}"

    @contextlib.contextmanager
    def owning(self, run_id: str) -> Iterator[None]:
        """Hold the run's lock for the block (the process runs it); :class:`RunBusy` if another process
        (or another run of this one) holds it already. The lock file goes when the block ends."""
        path = self.owner_path(run_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a+b") as fh:
            if not try_lock(fh):
                raise RunBusy(f"run {run_id} is running in another process")
            try:
                yield
            finally:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()  # still held: nobody can take it between unlink and close

    def is_live(self, run_id: str) -> bool:
        """True while some process (this one included) holds the run's lock."""
        try:
            fh = open(self.owner_path(run_id), "rb")  # noqa: SIM115 - closed below, releasing a probe lock
        except FileNotFoundError:
            return False
        with fh:
            return not try_lock(fh, shared=True)

    def interrupted(self) -> list[RunRecord]:
        """Runs cut off mid-way: no finished record, saved state ``running``, nobody holding the lock."""
        return [
            r
            for r in self.runs()
            if r.status == "running" and not self.has_record(r.run_id) and not self.is_live(r.run_id)
        ]

    # ------------------------------------------------------------------------------------- memo
    @property
    def memo_path(self) -> Path:
        return self.runs_dir / MEMO_FILE

    def memo(self) -> dict[str, str]:
        """Operation signature (:func:`memo_key`) -> artifact id, across the session's runs. A memo that
        does not parse is set aside (``memo.json.corrupt``) with a warning: it only costs recomputation."""
        memo = self._read_memo()
        if memo is not None:
            return memo
        with locked(self.runs_dir / MEMO_LOCK):  # set it aside once, not under a writer's feet
            return self._read_memo(set_aside_corrupt=True) or {}

    def recall(self, signature: str) -> str | None:
        return self.memo().get(signature)

    def remember(self, signature: str, artifact_id: str) -> None:
        """Add one entry. Read, change and atomic replace happen under the memo's lock file, so two
        processes (or threads) remembering at once both keep their entries."""
        with locked(self.runs_dir / MEMO_LOCK):
            memo = self._read_memo(set_aside_corrupt=True) or {}
            memo[signature] = artifact_id
            atomic_write_text(self.memo_path, json.dumps(memo))

    def _read_memo(self, *, set_aside_corrupt: bool = False) -> dict[str, str] | None:
        """The memo; {} when there is none; None when it does not parse (set aside if asked: the caller
        holds the lock)."""
        try:
            data = self.memo_path.read_bytes()
        except FileNotFoundError:
            return {}
        try:
            return _MEMO.validate_json(data)
        except ValidationError as exc:
            if not set_aside_corrupt:
                return None
            moved = set_aside(self.memo_path, suffix=".corrupt")
            log.warning(
                "the memo %s did not parse (%s); set aside as %s", self.memo_path, exc.errors()[0]["msg"], moved
            )
            return {}

    # ---------------------------------------------------------------------------------- helpers
    @staticmethod
    def _read(path: Path, run_id: str) -> RunRecord:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise RunNotFound(f"no run {run_id} in {path.parent.parent}") from exc
        return RunRecord.model_validate_json(text)


def not_resumable(runlog: RunLog, run_id: str) -> str | None:
    """Why ``run_id`` cannot be resumed (one line with a hint), or None when it can."""
    try:
        state = runlog.load_state(run_id)
    except ValueError:
        return f"{run_id!r} is not a run id (hint: `runs --session DIR` lists the session's runs)"
    except RunNotFound:
        return f"no run {run_id} in {runlog.session_dir} (hint: `runs --session DIR` lists the session's runs)"
    if runlog.is_live(run_id):
        return f"run {run_id} is running in another process right now (hint: wait for it, or stop that process)"
    if state.status in ("answered", "partial"):
        return f"run {run_id} already ended ({state.status}); nothing to resume (hint: ask a new question with --follow-up)"
    return None


def _checked(run_id: str) -> str:
    if not RUN_ID.match(run_id or ""):
        raise ValueError(f"not a run id: {run_id!r}")
    return run_id
