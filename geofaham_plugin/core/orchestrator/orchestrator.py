"""The orchestrator: outer loop (task ledger + plan), inner loop (progress ledger, three checks in code,
dispatch, stall counting, replanning) and synthesis.

Every state change is saved through the session's run log (``runlog.RunLog``), so a run can be resumed;
the specialist's choice of a tool for a step without one is ``toolchoice``; what the caller hears while
the run goes on are typed events (``events``)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from ..agents import ToolContext
from ..config import Settings, settings_from_env
from ..domain.events import get_event
from ..domain.language import detect_language, language_scores, phrase
from ..domain.names import Role
from ..engines.layers import LayerCatalogue, UserField
from ..engines.user_files import gdal_offline
from ..errors import (
    Cancelled,
    DeadlineReached,
    GeoFahamError,
    ModelHTTPError,
    ModelOutputError,
    ModelRetry,
    NoOtherPlan,
    ToolFailed,
)
from ..llm import LLM, Message
from ..planning.chain import made_from
from ..planning.coverage import (
    Constraint,
    ExecutedStep,
    check_coverage,
    coverage_hint,
    local_field_constraints,
    question_constraints,
    unapplied,
    unasked_limits,
)
from ..planning.facts import PrepassFacts
from ..planning.identify import check_question
from ..planning.names import event_of_names, features_named, name_constraints
from ..planning.plan import Plan, PlanStep
from ..planning.planner import Planner, PlanResult
from ..planning.prepass import normalise, prepass
from ..planning.spec_read import damage_domain, event_data_values, local_fields
from ..planning.values import field_grouping
from ..prompts import PROGRESS_SYSTEM, SYNTHESIS_SYSTEM
from ..store.models import ArtifactRecord, ItemSetMeta, TableMeta, VectorMeta
from .answer import StructuredAnswer
from .checks import check_distances, check_geospatial_compatibility, check_input_validity, check_plan_adherence
from .events import (
    AnswerEvent,
    ArtifactEvent,
    CancelledEvent,
    CheckFailedEvent,
    ErrorEvent,
    EventCallback,
    LedgerEvent,
    PlanEvent,
    ReplanEvent,
    RunEvent,
    RunEventPayload,
    StepFinishedEvent,
    StepStartedEvent,
)
from .ledgers import Failure, ProgressDecision, ProgressLedger, StepStatus
from .runlog import RunLog, RunRecord, RunUsage, StepRecord, memo_key, new_run_id
from .synthesis import Findings, collect_findings, render_answer, structure, unstated_values, unsupported_numbers
from .toolchoice import choose_tool

if TYPE_CHECKING:
    from ..store.store import ResponseStore


#: what ends a run as failed: a status and an answer, never an exception (``record.error`` names the kind)
RUN_FAILURES = (ModelOutputError, ModelHTTPError, ToolFailed, NoOtherPlan)


class OrchestratorConfig(BaseModel):
    mode: Literal["guided", "free"] = "guided"
    max_turns: int = 20
    stall_budget: int = 3  # failures tolerated before the run stops with a partial answer
    max_replans: int = 2
    model_synthesis: bool = False  # let the synthesis model phrase the answer (numbers still checked)
    always_ask_model: bool = False  # the model chooses a workflow template even when code could plan (tests)


class Orchestrator:
    def __init__(
        self,
        store: ResponseStore,
        llm: LLM,
        *,
        config: OrchestratorConfig | None = None,
        layers: LayerCatalogue | None = None,
        settings: Settings | None = None,
        on_event: EventCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        self.store = store
        self.llm = llm
        self.config = config or OrchestratorConfig()
        self.settings = settings or settings_from_env()
        self.layers = layers or LayerCatalogue(self.settings.paths.data_dir)
        self.on_event = on_event or (lambda event: None)
        self.cancel = cancel or threading.Event()
        llm.cancel = self.cancel  # a cancel returns at once even while a model is being waited on
        self.planner = Planner(
            llm,
            self.config.mode,
            always_ask_model=self.config.always_ask_model,
            layers=self.layers,
            offline=self.settings.network.offline,
            model_reading=self.settings.run.model_reading,
        )
        self.runlog = RunLog(store.session_dir)
        self._deadline: float | None = None  # monotonic time the current run must stop by (between steps)
        #: artifacts the store still writes in the background: their ArtifactEvent (a layer in QGIS) waits for the
        #: file, so the main thread never opens a file being written
        self._unwritten: list[tuple[RunRecord, str]] = []

    # ------------------------------------------------------------------------------- public API
    def run(self, question: str, *, aoi_artifact_id: str | None = None, previous: RunRecord | None = None) -> RunRecord:
        """Answer ``question``. With ``previous`` (a run of this session) it is a follow-up: facts the new
        question leaves open (event, distance, feature class, AOI ...) come from the previous run, and
        steps whose tool, arguments and inputs are unchanged reuse the artifacts already computed."""
        check_question(question)  # not text, empty: one line for the user, before anything is saved
        record = RunRecord(
            run_id=new_run_id(), question=question, language=detect_language(question), aoi_artifact_id=aoi_artifact_id
        )

        def start() -> None:
            facts = self._facts(question)
            check_distances(facts)  # "within 40000 km": one line for the user, not a validation error
            record.facts = inherit_facts(facts, previous)
            if previous is not None and record.facts is not facts:  # a follow-up of the previous run
                record.follow_up_of = previous.run_id
                record.aoi_artifact_id = record.aoi_artifact_id or previous.aoi_artifact_id
                if not any(language_scores(question).values()):  # "Palisades?": no word says a language
                    record.language = previous.language
            if record.aoi_artifact_id and record.aoi_artifact_id not in self.store:
                raise ToolFailed(f"the AOI {record.aoi_artifact_id} is not in this session's store", kind="not_found")
            self._plan(record, failures=[])
            self._execute(record)
            self._cover(record)

        return self._drive(record, time.monotonic(), start)

    def resume(self, run_id: str) -> RunRecord:
        """Continue a run from its saved state (a run cut off when its process was killed, or one that
        was cancelled or timed out): steps done stay done, a step cut off mid-way runs again, a run cut
        off before its plan was adopted is planned now. The deadline counts from the resumption.
        :class:`~.runlog.RunBusy` if another process is running it right now."""
        record = self.runlog.load_state(run_id)
        record = record.model_copy(update={"status": "running", "answer": "", "error": None, "finished_at": None})
        for step_id, status in list(record.progress.status.items()):
            if status is StepStatus.running:  # interrupted mid-step: run it again
                record.progress.status[step_id] = StepStatus.pending
        record.notes.append(f"resumed at {datetime.now(UTC).isoformat(timespec='seconds')}")

        def go_on() -> None:
            if not record.plans:  # cut off before a plan was adopted
                self._plan(record, failures=[])
            self._execute(record)
            self._cover(record)

        return self._drive(record, time.monotonic() - record.seconds, go_on)

    def _drive(self, record: RunRecord, t0: float, body: Callable[[], None]) -> RunRecord:
        """Run ``body`` as the owner of ``record`` (its lock held, its state saved first, so a process
        killed at any point leaves a resumable run), under the run deadline; every way it can end
        becomes a status and an answer, never an exception."""
        deadline = self.settings.run.deadline_s
        self._deadline = time.monotonic() + deadline if deadline else None
        # offline, GDAL's own network access too, for the whole process while the run goes on
        with gdal_offline(self.settings.network.offline), self.runlog.owning(record.run_id):
            self.runlog.save_state(record)
            try:
                body()
            except DeadlineReached as exc:
                record.status, record.error = "timed_out", str(exc)
                self._emit(record, ErrorEvent(message=str(exc), error_type=type(exc).__name__))
            except Cancelled:
                record.status = "cancelled"
                self._emit(record, CancelledEvent())
            except RUN_FAILURES as exc:
                record.status = "failed"
                record.error = f"{type(exc).__name__}: {exc}"
                self._emit(record, ErrorEvent(message=str(exc), error_type=type(exc).__name__))
            return self._finish(record, t0)

    def execute_plan(self, question: str, plan_result: PlanResult) -> RunRecord:
        """Run a given plan (no planning call): used by tests and by callers that build plans themselves."""
        record = RunRecord(
            run_id=new_run_id(),
            question=question,
            language=detect_language(question),
            facts=self._facts(question),
        )
        t0 = time.monotonic()
        self._deadline = None
        self._adopt(record, plan_result)
        with gdal_offline(self.settings.network.offline):
            try:
                self._execute(record)
                self._cover(record, replan=False)
            except Cancelled:
                record.status = "cancelled"
            return self._finish(record, t0)

    # ------------------------------------------------------------------------------ outer loop
    def _plan(self, record: RunRecord, failures: list[str]) -> None:
        self._adopt(record, self._new_plan(record, failures))

    def _new_plan(self, record: RunRecord, failures: list[str]) -> PlanResult:
        preferred = None
        if record.follow_up_of:
            previous = self.runlog.load(record.follow_up_of)
            preferred = previous.plans[-1].template if previous and previous.plans else None
        if record.facts is None:  # a saved state from before the pre-pass: it depends on the question alone
            record.facts = self._facts(record.question)
        return self.planner.plan(
            record.facts,
            self.store,
            aoi_artifact_id=record.aoi_artifact_id,
            failures=failures,
            step=f"plan{len(record.plans) + 1}",
            preferred_template=preferred,
        )

    def _adopt(self, record: RunRecord, result: PlanResult) -> None:
        record.plans.append(result)
        replans = record.progress.replans
        record.progress = ProgressLedger(
            status={s.id: StepStatus.pending for s in result.plan.steps},
            failures=record.progress.failures,
            stalls=record.progress.stalls,
            turns=record.progress.turns,
            replans=replans,
        )
        self._emit(record, LedgerEvent(ledger=result.ledger))
        self._emit(
            record, PlanEvent(plan=result.plan, mode=result.mode, template=result.template, index=len(record.plans))
        )
        self.runlog.save_state(record)

    # ------------------------------------------------------------------------------ inner loop
    def _execute(self, record: RunRecord) -> None:
        while True:
            if self.cancel.is_set():
                raise Cancelled("cancelled by the user")
            if self._deadline is not None and time.monotonic() > self._deadline:
                raise DeadlineReached(f"the run deadline of {self.settings.run.deadline_s:g} s was reached")
            plan = record.plans[-1].plan
            progress = record.progress
            pending = [s for s in plan.steps if progress.status.get(s.id) is StepStatus.pending]
            if not pending:
                break
            if progress.turns >= self.config.max_turns:
                record.notes.append(f"stopped after the maximum of {self.config.max_turns} turns")
                break
            progress.turns += 1
            ready = [s for s in pending if all(progress.status.get(d) is StepStatus.done for d in s.depends_on)]
            blocked = [
                s
                for s in pending
                if any(progress.status.get(d) in (StepStatus.failed, StepStatus.skipped) for d in s.depends_on)
            ]
            if not ready and blocked:
                for step in blocked:  # a prerequisite failed or was skipped: these cannot run
                    failure = check_plan_adherence(step, progress)
                    progress.status[step.id] = StepStatus.skipped
                    self._log_step(record, step, StepStatus.skipped, failure=failure)
                continue
            step = ready[0] if ready else pending[0]
            failure, artifact = self._attempt(record, step)
            if failure is None:
                assert artifact is not None  # a step without a failure produced an artifact
                progress.status[step.id] = StepStatus.done
                progress.artifacts[step.id] = artifact.id
                self.runlog.save_state(record)
                continue
            progress.failures.append(failure)
            progress.stalls += 1
            self._emit(record, CheckFailedEvent(step=step.id, failure=failure))
            if progress.status[step.id] is not StepStatus.done:
                progress.status[step.id] = StepStatus.failed
            self.runlog.save_state(record)
            if not self._recover(record, step, failure):
                break

    def _attempt(self, record: RunRecord, step: PlanStep) -> tuple[Failure | None, ArtifactRecord | None]:
        """The three checks, then dispatch. Returns (failure, artifact)."""
        progress = record.progress
        failure = check_plan_adherence(step, progress)
        records: dict[str, ArtifactRecord] = {}
        if failure is None:
            records, failure = check_input_validity(step, progress, self.store)
        if failure is None:
            choice = choose_tool(self.llm, step, records)
            if isinstance(choice, Failure):
                failure = choice
            else:
                tool = choice.tool
                step = step.model_copy(update={"tool": tool.name, "args": choice.args})
                notes: list[str] = []
                failure = check_geospatial_compatibility(step, tool, records, notes)
                record.notes += [n for n in notes if n not in record.notes]
        if failure is not None:
            self._log_step(record, step, StepStatus.failed, records=records, failure=failure)
            return failure, None

        inputs = {k: r.id for k, r in records.items()}
        signature = memo_key(tool.name, step.args, inputs)
        earlier = self.runlog.recall(signature)
        if earlier is not None and earlier in self.store and (damage := self.store.verify(earlier)) is not None:
            record.notes.append(damage)  # quarantined by the check: computed afresh below
            earlier = None
        if earlier is not None and earlier in self.store:  # same operation on the same inputs: reuse, do not recompute
            artifact = self.store.get(earlier)
            self._log_step(record, step, StepStatus.done, records=records, artifact=artifact, reused=True)
            self._emit(record, StepFinishedEvent(step=step.id, status="done", artifact_id=artifact.id, reused=True))
            return None, artifact
        progress.status[step.id] = StepStatus.running
        self.runlog.save_state(record)
        self._emit(
            record, StepStartedEvent(step=step.id, agent=step.agent, tool=tool.name, goal=step.goal, inputs=inputs)
        )
        t0 = time.monotonic()
        step_limit = self.settings.run.step_deadline_s
        ends = [t for t in (t0 + step_limit if step_limit else None, self._deadline) if t is not None]
        ctx = ToolContext(
            store=self.store,
            layers=self.layers,
            settings=self.settings,
            cancel=self.cancel,
            deadline=min(ends) if ends else None,
        )
        try:
            artifact = tool.run(ctx, step.args, records)
        except ToolFailed as exc:
            if exc.kind == "cancelled":
                raise Cancelled(str(exc)) from exc
            failure = Failure(step_id=step.id, check="tool", kind=exc.kind, message=str(exc), hint=exc.hint)
        except ModelRetry as exc:
            failure = Failure(step_id=step.id, check="tool", kind="invalid_input", message=str(exc))
        seconds = time.monotonic() - t0
        if failure is not None:
            self._log_step(record, step, StepStatus.failed, records=records, failure=failure, seconds=seconds)
            self._emit(record, StepFinishedEvent(step=step.id, status="failed", message=failure.message))
            return failure, None
        record.notes += [n for n in ctx.notes if n not in record.notes]
        self.runlog.remember(signature, artifact.id)
        self._emit_written(record, artifact.id)
        empty = _is_empty(artifact)
        self._log_step(record, step, StepStatus.done, records=records, artifact=artifact, seconds=seconds)
        self._emit(record, StepFinishedEvent(step=step.id, status="done", artifact_id=artifact.id, empty=empty))
        plan = record.plans[-1].plan
        terminal = not any(step.id in s.depends_on for s in plan.steps)
        if empty and (terminal or step.empty_is_answer):
            record.notes.append(f"step {step.id} found nothing: {artifact.summary}")
        elif empty:
            # the artifact is real (and kept), but later steps cannot work on nothing: a stall
            record.progress.status[step.id] = StepStatus.done
            record.progress.artifacts[step.id] = artifact.id
            return Failure(
                step_id=step.id,
                check="empty_result",
                kind="empty",
                message=f"{tool.name} produced no features ({artifact.id}: {artifact.summary})",
            ), artifact
        return None, artifact

    # ------------------------------------------------------------------------ constraint coverage
    def _executed(self, record: RunRecord) -> list[ExecutedStep]:
        """The steps of the current plan, as coverage sees them, and the earlier artifacts they built on
        (an input made by another run: its recorded operation parameters, and its own lineage)."""
        current = len(record.plans)
        steps = [
            ExecutedStep(step_id=s.step_id, tool=s.tool, args=s.args, inputs=s.inputs, done=s.status is StepStatus.done)
            for s in record.steps
            if s.plan_index == current
        ]
        produced = {s.artifact_id for s in record.steps if s.plan_index == current and s.artifact_id}
        # inputs of the steps, and the lineage the store recorded for what they produced (free SQL names
        # its artifacts in placeholders, not in step inputs)
        lineage = [a for p in produced if p in self.store for a in self.store.get(p).inputs]
        frontier = [
            a for a in [*(a for s in steps if s.done for a in s.inputs.values()), *lineage] if a not in produced
        ]
        seen: set[str] = set()
        while frontier:
            artifact_id = frontier.pop()
            if artifact_id in seen or artifact_id not in self.store:
                continue
            seen.add(artifact_id)
            upstream = self.store.get(artifact_id)
            tool = upstream.source.split(".", 1)[-1].split(":", 1)[0]  # "vector.buffer" -> "buffer"
            inputs = {f"input{i}": a for i, a in enumerate(upstream.inputs)}
            steps.append(ExecutedStep(step_id=0, tool=tool, args=upstream.extra, inputs=inputs, upstream=artifact_id))
            frontier += upstream.inputs
        return steps

    def _facts(self, question: str) -> PrepassFacts:
        """What code reads of the question: the pre-pass, and the disaster of the features it names by name when
        it names none."""
        return event_of_names(prepass(question, layers=self.layers), self.layers)

    def _local_fields(self, facts: PrepassFacts) -> list[list[UserField]]:
        """The fields of the local layers the question's feature classes come from (its disaster's)."""
        return [local_fields(cls, facts.event_id, self.layers) for cls in dict.fromkeys(facts.target_entities)]

    def _other_local_data(self, facts: PrepassFacts) -> list[Constraint]:
        """The local layers of the question's disaster whose data the question names though it asks for another
        class ("buildings flagged estado Prevista, their val_dany": the public-buildings layer's field values and
        field names, a closed class): a step must read that layer's class, else the answer is partial and says so.
        Values, and field names written as the data writes them (with an underscore), count; a plain word that
        happens to be a field's name does not."""
        if facts.event_id is None:
            return []
        asked = set(facts.target_entities)
        out: list[Constraint] = []
        classes = [lyr.feature_class for lyr in self.layers.find(role="poi", event_id=facts.event_id)]
        for cls in dict.fromkeys(c for c in classes if c and c not in asked):
            fields = local_fields(cls, facts.event_id, self.layers)
            said = [c for c in local_field_constraints(facts, fields) if c.kind == "attribute" or "_" in str(c.value)]
            text = normalise(facts.question)
            if grouped := field_grouping(text, fields) or field_grouping(text, fields, each=True):
                # "a count per estado": a breakdown by a field only that layer has
                said.append(Constraint(kind="field", value=grouped, phrase=grouped))
            if said:
                out.append(Constraint(kind="feature_class", value=cls, phrase="; ".join(c.phrase for c in said)))
        return out

    def _cover(self, record: RunRecord, *, replan: bool = True) -> None:
        """Every constraint of the question must be applied by a completed step of the plan. While one is
        not and replanning is allowed, replan with what was left out; what stays unapplied makes the
        answer partial (``_synthesize`` says which parts, and presents no number as the answer)."""
        if record.facts is None:
            record.facts = self._facts(record.question)
        aoi_layers: list[str] = []
        if record.aoi_artifact_id and record.aoi_artifact_id in self.store:  # the area made from a layer it names
            source = self.store.get(record.aoi_artifact_id).source
            aoi_layers = [
                i
                for i in record.facts.layers
                if (e := self.layers.user_layers.get(i)) is not None and made_from(e, source)
            ]
        entries = {i: e for i in record.facts.layers if (e := self.layers.user_layers.get(i)) is not None}
        structure_types = damage_domain(record.facts.event_id, self.layers) if record.facts.event_id else None
        wanted = question_constraints(
            record.facts,
            aoi_artifact_id=record.aoi_artifact_id,
            aoi_layers=aoi_layers,
            entries=entries,
            structure_types=structure_types,
        )
        # what the question names of a local layer's data (a hospital's TYPE, its BEDS): no plan filters those
        # features by their fields yet, so no replan applies it; the answer says it was not applied
        local = [
            c for fields in self._local_fields(record.facts) for c in local_field_constraints(record.facts, fields)
        ]
        local += self._other_local_data(record.facts)
        local += name_constraints(features_named(record.facts, self.layers))  # "Hospital La Fe": that one
        local += event_data_values(record.facts, self.layers)  # "'Drawn|Azure Maps Satellite'", "class Background"
        wanted += local
        unplannable = {f"{c.kind}:{c.value}" for c in local}
        # an OpenStreetMap tag no kind of the class makes: no other plan filters features by a tag either
        unplannable |= {f"{c.kind}:{c.value}" for c in wanted if c.kind == "tag"}
        while True:
            executed = self._executed(record)
            read = record.plans[-1].read if record.plans else None
            # what the model's checked reading added (grades code found no word for) is checked like code's facts
            kept = [c for c in wanted if not (read and c.kind in read.replaces)]
            record.constraints = check_coverage(kept + (read.constraints if read else []), executed)
            record.unasked_limits = unasked_limits(record.constraints, executed)
            # a part the planner knew the data cannot answer (no road network offline) is not replanned: it is said
            known = {k for u in (record.plans[-1].unavailable if record.plans else []) for k in u.constraints}
            known |= unplannable
            missing = [c for c in unapplied(record.constraints) if f"{c.kind}:{c.value}" not in known]
            plan = record.plans[-1].plan if record.plans else None
            complete = plan is not None and all(record.progress.status.get(s.id) is StepStatus.done for s in plan.steps)
            if not (missing or record.unasked_limits) or not complete or not replan:
                return
            progress = record.progress
            if progress.replans >= self.config.max_replans:
                record.notes.append(
                    f"the replanning limit ({self.config.max_replans}) was reached before every part of the question was applied"
                )
                return
            hint = coverage_hint(missing, record.unasked_limits)
            progress.replans += 1
            failures = [f.describe() for f in progress.failures] + [hint]
            self._emit(record, ReplanEvent(failures=failures, replans=progress.replans))
            try:
                result = self._new_plan(record, failures)
            except (ModelOutputError, NoOtherPlan) as exc:
                record.notes.append(f"replanning to apply the whole question failed: {exc}")
                return
            if _same_plan(result.plan, record.plans[-1].plan):
                record.notes.append(
                    "replanning produced the same plan again: it cannot apply every part of the question"
                )
                return
            self._adopt(record, result)
            self._execute(record)

    def _recover(self, record: RunRecord, step: PlanStep, failure: Failure) -> bool:
        """After a failure: continue (True) or stop and answer with what exists (False)."""
        progress = record.progress
        if progress.stalls > self.config.stall_budget:
            record.notes.append(
                f"stopped: {progress.stalls} failures exceed the stall budget of {self.config.stall_budget}"
            )
            return False
        decision = self._progress_decision(record, failure)
        record.decisions.append(decision)
        if decision.action == "skip_step":
            if progress.status[step.id] is not StepStatus.done:
                progress.status[step.id] = StepStatus.skipped
            return True
        if decision.action == "finish":
            return False
        if progress.replans >= self.config.max_replans:
            record.notes.append(f"stopped: the replanning limit ({self.config.max_replans}) was reached")
            return False
        progress.replans += 1
        failures = [f.describe() for f in progress.failures]
        self._emit(record, ReplanEvent(failures=failures, replans=progress.replans))
        try:
            result = self._new_plan(record, failures)
        except (ModelOutputError, NoOtherPlan) as exc:
            record.notes.append(f"replanning failed: {exc}")
            return False
        if _same_plan(result.plan, record.plans[-1].plan):
            # nothing was learned from the failure: the identical plan would fail the same way again
            record.notes.append("replanning produced the same plan again; stopped instead of repeating the failure")
            return False
        self._adopt(record, result)
        return True

    def _progress_decision(self, record: RunRecord, failure: Failure) -> ProgressDecision:
        progress = record.progress
        plan = record.plans[-1].plan
        summary = {
            "question": record.question,
            "plan": [f"{s.id}. {s.agent.value}: {s.goal} [{progress.status[s.id].value}]" for s in plan.steps],
            "failure": failure.describe(),
            "stalls": f"{progress.stalls} of {self.config.stall_budget}",
            "replans_left": self.config.max_replans - progress.replans,
        }
        try:
            return self.llm.structured(
                Role.progress,
                [Message(role="system", content=PROGRESS_SYSTEM), Message(role="user", content=json.dumps(summary))],
                ProgressDecision,
                step=f"progress{progress.turns}",
            )
        except (ModelOutputError, ModelHTTPError) as exc:
            record.notes.append(f"progress model unavailable ({exc}); replanning by default")
            return ProgressDecision(action="replan", reason="default after a progress-model failure")

    # ------------------------------------------------------------------------------ synthesis
    def _finish(self, record: RunRecord, t0: float) -> RunRecord:
        if record.status == "running":
            self._synthesize(record)
        else:
            if not record.answer:
                record.answer = self._failure_answer(record)
            if record.status in ("failed", "cancelled", "timed_out"):
                record.structured = StructuredAnswer(
                    status=record.status,
                    not_applied=[c.describe() for c in unapplied(record.constraints)],
                    cited=record.cited_artifacts,
                )
        self._flush_artifacts(record)  # the record is saved once every artifact it cites is on disk
        record.finished_at = datetime.now(UTC)
        record.seconds = round(time.monotonic() - t0, 3)
        record.usage = RunUsage.from_ledger(self.llm.usage)
        path = self.runlog.save_record(record)
        self._emit(
            record,
            AnswerEvent(
                answer=record.answer,
                status=record.status,
                record=str(path),
                cited=record.cited_artifacts,
                structured=record.structured,
            ),
        )
        return record

    def _synthesize(self, record: RunRecord) -> None:
        lang = record.language
        plan = record.plans[-1].plan
        progress = record.progress
        consumed = {d for s in plan.steps for d in s.depends_on}
        terminal = plan.results or [s.id for s in plan.steps if s.id not in consumed]
        answer_ids = [progress.artifacts[i] for i in terminal if i in progress.artifacts]
        # an empty final result is an answer ("none within 1 km"); a step that never ran is not
        complete = all(progress.status.get(s.id) is StepStatus.done for s in plan.steps)
        if not answer_ids:  # nothing terminal: cite the last artifact produced, if any
            answer_ids = [progress.artifacts[max(progress.artifacts)]] if progress.artifacts else []
        used = [a for s in record.steps for a in ([s.artifact_id] if s.artifact_id else []) + list(s.inputs.values())]
        unresolved = [
            f.describe()
            for f in progress.failures
            if f.step_id is None or progress.status.get(f.step_id) is not StepStatus.done
        ]
        findings = collect_findings(
            self.store, answer_ids, list(dict.fromkeys(used)), record.notes, unresolved if not complete else [], lang
        )
        specs = record.plans[-1].specs
        if complete and len(specs) == len(findings.headline) == len(answer_ids):  # what each number is about
            findings.headline = [
                f"{spec.label(lang)}: {line}" for spec, line in zip(specs, findings.headline, strict=True)
            ]
        implied = [note for spec in specs for note in spec.implied] + record.plans[-1].assumptions
        findings.limitations += [phrase("answer.assumed", lang, note=note) for note in dict.fromkeys(implied)]
        record.cited_artifacts = findings.cited
        # a part read two ways whose readings were all computed and all found nothing: whichever was meant, the
        # answer is none (0 is the answer, not a partial one)
        agreed = (
            {k for u in record.plans[-1].unavailable if u.phrase == "reading.two_ways" for k in u.constraints}
            if complete and answer_ids and all(_is_empty(self.store.get(a)) for a in answer_ids)
            else set()
        )
        left_out = [c for c in unapplied(record.constraints) if f"{c.kind}:{c.value}" not in agreed]
        # the structured answer's not_applied is for machines (English); the text's is in the question's language
        # (both bounds of "between 1950 and 1980" are constraints of their own, said once)
        missing = list(dict.fromkeys(c.describe() for c in left_out))
        missing += [f"not asked for: {limit}" for limit in record.unasked_limits]
        # a part the data at hand cannot answer is said with its reason ("no road network offline")
        reasons = {u.constraints[0]: phrase(u.phrase, lang, **u.values) for u in record.plans[-1].unavailable}
        shown_missing = list(
            dict.fromkeys(
                c.describe(lang) + (f": {reasons[key]}" if (key := f"{c.kind}:{c.value}") in reasons else "")
                for c in left_out
            )
        )
        shown_missing += [phrase("answer.not_asked_for", lang, limit=limit) for limit in record.unasked_limits]
        record.status = "answered" if complete and not missing else "partial"
        structured = structure(findings, status=record.status, question=record.question, not_applied=missing)
        reused = phrase("answer.reused", lang)
        steps = [
            f"{s.step_id}. {s.agent.value}.{s.tool} → {s.artifact_id or s.status.value}" + (reused if s.reused else "")
            for s in record.steps
            if s.plan_index == len(record.plans)
        ]
        answer = render_answer(
            findings,
            context=self._context(record),
            partial=not complete,
            steps=steps,
            not_applied=shown_missing,
            yes_no=structured.yes_no,
            lang=lang,
        )
        if self.config.model_synthesis and findings.headline and not missing:
            answer = self._model_answer(record, findings, answer, structured)
        record.answer = answer
        record.structured = structured

    def _model_answer(self, record: RunRecord, findings: Findings, fallback: str, structured: StructuredAnswer) -> str:
        allowed = {str(i) for i in range(1, 13)}

        class Answer(BaseModel):
            markdown: str

        def check(out: Answer) -> None:
            bad = unsupported_numbers(out.markdown, findings, allowed)
            if bad:
                raise ModelRetry(f"these numbers are not in the findings: {bad}; use only numbers from the findings")
            left_out = unstated_values(out.markdown, structured)
            if left_out:  # the text must state every value the structured answer states
                raise ModelRetry(f"the answer must state these numbers of the findings: {left_out}")
            word = phrase("answer.yes" if structured.yes_no else "answer.no", record.language).strip("*.")
            if structured.yes_no is not None and not out.markdown.lstrip("*# ").lower().startswith(word.lower()):
                raise ModelRetry(f"begin the answer with {word}")

        try:
            out = self.llm.structured(
                Role.planner,
                [
                    Message(role="system", content=SYNTHESIS_SYSTEM),
                    Message(role="user", content=f"Question: {record.question}\nFindings:\n{fallback}"),
                ],
                Answer,
                step="synthesis",
                validate=check,
            )
            return out.markdown
        except (ModelOutputError, ModelHTTPError):
            record.notes.append("the model's phrasing was rejected; the answer is the verified findings")
            return fallback

    def _context(self, record: RunRecord) -> str:
        lang = record.language
        specs = record.plans[-1].specs if record.plans else []
        if len({s.subject.event_id for s in specs}) > 1:
            return phrase("context.compared", lang)
        ledger = record.plans[-1].ledger if record.plans else None
        if ledger and ledger.disaster_event_id:
            event = get_event(ledger.disaster_event_id)
            if event:
                return f"{event.name} ({event.place}, {event.event_date.isoformat()})"
        tools = {s.tool for s in record.plans[-1].plan.steps} if record.plans else set()
        from_layers = bool(tools & {"load_layer", "load_raster_layer"}) and "load_event_layer" not in tools
        if (specs and all(s.subject.kind == "layer" for s in specs)) or (not specs and from_layers):
            return phrase("context.your_layers", lang)
        return phrase("context.given_area", lang)

    def _failure_answer(self, record: RunRecord) -> str:
        lang = record.language
        if record.status in ("cancelled", "timed_out"):
            done = [s.artifact_id for s in record.steps if s.artifact_id]
            head = (
                phrase("answer.cancelled", lang)
                if record.status == "cancelled"
                else phrase("answer.timed_out", lang, seconds=f"{self.settings.run.deadline_s:g}")
            )
            return (
                head
                + " "
                + (
                    phrase("answer.cancelled_kept", lang, n=len(done), ids=", ".join(done))
                    if done
                    else phrase("answer.nothing_computed", lang)
                )
            )
        name, sep, message = (record.error or "").partition(": ")  # the answer names no exception class
        error = message if sep and name in {kind.__name__ for kind in RUN_FAILURES} else record.error or ""
        return f"{phrase('answer.failed', lang)} {error}".strip()

    # -------------------------------------------------------------------------------- records
    def last_run(self) -> RunRecord | None:
        """The most recent finished run of this session (for follow-up questions)."""
        return self.runlog.last_run()

    def _log_step(
        self,
        record: RunRecord,
        step: PlanStep,
        status: StepStatus,
        *,
        records: dict[str, ArtifactRecord] | None = None,
        artifact: ArtifactRecord | None = None,
        failure: Failure | None = None,
        seconds: float = 0.0,
        reused: bool = False,
    ) -> None:
        record.steps.append(
            StepRecord(
                reused=reused,
                plan_index=len(record.plans),
                step_id=step.id,
                agent=step.agent,
                tool=step.tool,
                args=step.args,
                inputs={k: r.id for k, r in (records or {}).items()},
                status=status,
                artifact_id=artifact.id if artifact else None,
                seconds=round(seconds, 3),
                failure=failure,
            )
        )

    def _emit(self, record: RunRecord, payload: RunEventPayload) -> None:
        self.on_event(RunEvent(run_id=record.run_id, payload=payload))

    def _emit_written(self, record: RunRecord, artifact_id: str | None = None) -> None:
        """The ArtifactEvent of ``artifact_id`` and of earlier artifacts whose background write has finished since;
        the ones still being written wait (:meth:`_flush_artifacts` emits them at the end of the run)."""
        if artifact_id is not None:
            self._unwritten.append((record, artifact_id))
        waiting = []
        for owner, pending in self._unwritten:
            if self.store.is_pending(pending):
                waiting.append((owner, pending))
            elif pending in self.store:
                self._emit(owner, ArtifactEvent(artifact=self.store.get(pending)))
        self._unwritten = waiting

    def _flush_artifacts(self, record: RunRecord) -> None:
        """Wait for the store's background writes; emit the ArtifactEvents that waited for them. A write that
        failed is a note of the run (the value computed from memory stands; its artifact is not on disk)."""
        try:
            self.store.flush()
        except GeoFahamError as exc:
            record.notes.append(str(exc))
        self._emit_written(record)


def inherit_facts(facts: PrepassFacts, previous: RunRecord | None) -> PrepassFacts:
    """A question that names no disaster continues the previous one: it keeps what that question
    established unless it says otherwise. A question naming a disaster starts afresh; one naming only a kind
    of disaster the previous one is ("the flood") continues it."""
    if previous is None or previous.facts is None or facts.event_id is not None:
        return facts
    old = previous.facts
    # "within 1 km of the flood?": a disaster word the previous disaster fits points back to it, not to a new one
    same_kind = old.event_id is not None and old.event_id in facts.event_candidates
    if facts.event_candidates and not same_kind:
        return facts
    update: dict[str, Any] = {}
    if facts.event_id is None:
        update.update(event_id=old.event_id, event_candidates=old.event_candidates, places=old.places)
    for name in ("distances_m", "target_entities", "damage_classes", "windows", "layers"):
        if not getattr(facts, name) and getattr(old, name):
            update[name] = getattr(old, name)
    for name in ("k", "group_by"):
        if getattr(facts, name) is None and getattr(old, name) is not None:
            update[name] = getattr(old, name)
    return facts.model_copy(update=update)


def _same_plan(a: Plan, b: Plan) -> bool:
    def key(plan: Plan) -> list[tuple[str, str | None, str, list[tuple[str, str]]]]:
        return [
            (s.agent.value, s.tool, json.dumps(s.args, sort_keys=True, default=str), sorted(s.inputs.items()))
            for s in plan.steps
        ]

    return key(a) == key(b)


def _is_empty(artifact: ArtifactRecord) -> bool:
    meta = artifact.metadata  # vector and aoi artifacts carry VectorMeta
    if isinstance(meta, VectorMeta):
        return meta.feature_count == 0
    if isinstance(meta, TableMeta):
        return meta.row_count == 0 or artifact.extra.get("total") == 0
    if isinstance(meta, ItemSetMeta):
        return meta.item_count == 0
    return False
