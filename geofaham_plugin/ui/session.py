"""One GeoFaham session inside QGIS: its Response Store, its model, its runs; adapts core events to the
dock and the layer tree on the main thread."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qgis.core import Qgis, QgsMessageLog, QgsProject
from qgis.PyQt.QtCore import QObject, pyqtSignal

from ..core.config import Settings
from ..core.orchestrator.events import (
    ArtifactEvent,
    CheckFailedEvent,
    PlanEvent,
    RunEvent,
    StepFinishedEvent,
    StepStartedEvent,
)
from ..core.orchestrator.runlog import RunLog, RunRecord
from .i18n import PLUGIN_ROOT, tr
from .layers import add_artifact_layer, label_answer, session_group, style_road_access
from .user_layers import USER_LAYERS_DIR, UserLayerFile, project_layer_choices, write_user_layers
from .worker import MainThreadTask, RunTask, RunWorker

if TYPE_CHECKING:
    import threading
    from collections.abc import Sequence

    from qgis.core import QgsCoordinateReferenceSystem, QgsGeometry, QgsMapLayer
    from qgis.gui import QgisInterface

    from ..core.engines.context import MapContext
    from ..core.llm import LLM
    from ..core.orchestrator.events import EventCallback
    from ..core.orchestrator.orchestrator import Orchestrator
    from ..core.store.models import ArtifactRecord
    from .aoi import PolygonTool
    from .context import ContextLoad
    from .dock import ChatDock
    from .report import Report

LOG_TAG = "GeoFaham"


def server_python() -> str:
    """The interpreter that runs the embedded model server (inside QGIS sys.executable is qgis)."""
    venv = PLUGIN_ROOT / ".venv" / "bin" / "python"
    if venv.exists():
        return str(venv)
    if Path(sys.executable).name.startswith("python"):
        return sys.executable
    return shutil.which("python3") or "python3"


def default_session_dir(name: str, settings: Settings) -> Path:
    """<sessions folder>/<name> (``settings.paths.sessions_dir``, GEOFAHAM_SESSIONS), else next to the saved
    project, else ~/geofaham-sessions/<name>."""
    home = QgsProject.instance().homePath()
    configured = settings.paths.sessions_dir
    base = configured or (Path(home) / "geofaham_sessions" if home else Path.home() / "geofaham-sessions")
    return base / name


class Session(QObject):
    """Owns the store and model of a session and runs questions one at a time."""

    runFinished = pyqtSignal(object)  # noqa: N815  core RunRecord, None after a crash
    layerAdded = pyqtSignal(object)  # noqa: N815
    runEvent = pyqtSignal(object)  # noqa: N815  core RunEvent, after the dock and the layer tree have shown it
    contextAdded = pyqtSignal(object)  # noqa: N815  ui.context.ContextLoad, once its layers are in the tree

    def __init__(
        self,
        dock: ChatDock,
        *,
        iface: QgisInterface | None = None,
        session_dir: Path | None = None,
        llm_factory: Callable[[], LLM] | None = None,
        name: str | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.iface = iface
        self.aoi_id: str | None = None
        self._draw_tool: PolygonTool | None = None
        from ..core.store.store import ResponseStore
        from .settings import apply_qgis_proxy, settings_from_qgis

        self.dock = dock
        self.name = name or datetime.now().strftime("%Y-%m-%d %H:%M")
        apply_qgis_proxy()
        self.settings = settings_from_qgis()
        self.main_thread_work: list[tuple[float, float]] = []  # (start, end) of layer creation, for profiling
        self.store = ResponseStore(
            session_dir or default_session_dir(self.name.replace(":", "").replace(" ", "_"), self.settings)
        )
        self._llm_factory = llm_factory
        self._llm: LLM | None = None
        self.worker: RunWorker | None = None
        self.task: RunTask | None = None  # the run in QGIS's task manager, until it ends
        self._steps: set[int] = set()  # the steps of the current plan
        self._finished: set[int] = set()  # those that finished
        self.layers: list[QgsMapLayer] = []
        self.context_loads: list[ContextLoad] = []  # map context being (or done) loaded off the main thread
        self._closed = False
        self._reporting = False  # a situation report is being written (main thread, events still processed)
        self.report_task: MainThreadTask | None = None  # the report in QGIS's task manager, while it is written
        self.records: list[RunRecord] = []
        # every connection the session makes, so that close() undoes them all: the dock outlives the session (a
        # reopened project gets a new session on the same dock) and a closed session must never answer
        self._connections: list[tuple[Any, Callable[..., object]]] = []
        self._connect(dock.artifactActivated, self.show_artifact)
        self._connect(dock.transcriptChanged, self.save_transcript)
        self._connect(dock.reportRequested, self.make_report)
        self._connect(dock.modelRequested, self.open_model)
        self._connect(dock.resumeRequested, self.resume)
        # the project's own layers a question may read: listed in the dock, ticked when visible
        self._layer_choices: dict[str, bool] = {}  # layer id -> ticked by the user
        # the layers written for earlier questions (layer id -> (its state, its file)) and the count of each one's
        # edits and commits: a layer is written again only when it changed
        self._written: dict[str, tuple[tuple[object, ...], UserLayerFile]] = {}
        self._edits: dict[str, int] = {}
        self._connect(dock.layerChoiceChanged, self._on_layer_choice)
        root = QgsProject.instance().layerTreeRoot()
        for signal in (root.addedChildren, root.removedChildren, root.visibilityChanged, root.nameChanged):
            self._connect(signal, self.refresh_layers)
        self.refresh_layers()
        from .styles import warm_up_labels

        warm_up_labels()  # the answer's labels then cost nothing on the main thread

    def _connect(self, signal: Any, slot: Callable[..., object]) -> None:
        signal.connect(slot)
        self._connections.append((signal, slot))

    # --------------------------------------------------------------------------------- model
    @property
    def llm(self) -> LLM:
        if self._llm is None:
            if self._llm_factory is not None:
                self._llm = self._llm_factory()
            else:
                from ..core.llm import build_llm

                self._llm = build_llm(self.settings, python=server_python())
        return self._llm

    def _orchestrator(
        self, *, on_event: EventCallback, cancel: threading.Event, user_layers: Sequence[UserLayerFile] = ()
    ) -> Orchestrator:
        """The run's orchestrator, built on the run's thread, with a layer catalogue of its own holding the
        user's layers (files written on the main thread; each is read here, off the main thread)."""
        from ..core.engines.layers import LayerCatalogue
        from ..core.engines.user_files import gdal_offline
        from ..core.errors import GeoFahamError
        from ..core.orchestrator.orchestrator import Orchestrator, OrchestratorConfig
        from .settings import limits_from_qgis

        catalogue = LayerCatalogue(self.settings.paths.data_dir)
        with gdal_offline(self.settings.network.offline):  # as the run reads its files: GDAL offline when it is
            for user_layer in user_layers:
                try:
                    catalogue.add_user_layer(user_layer.name, user_layer.path, user_layer.layer)
                except GeoFahamError as exc:  # e.g. no features with a geometry: the question goes on without it
                    QgsMessageLog.logMessage(f"layer {user_layer.name} not used: {exc}", LOG_TAG, Qgis.Warning)
        mode = "guided" if self.settings.endpoint("planner").embedded else "free"
        return Orchestrator(
            self.store,
            self.llm,
            settings=self.settings,
            layers=catalogue,
            on_event=on_event,
            cancel=cancel,
            config=OrchestratorConfig(mode=mode, model_synthesis=mode == "free", **limits_from_qgis()),
        )

    # ----------------------------------------------------------------------------------- runs
    @property
    def busy(self) -> bool:
        """A run works or a report is being written: nothing else starts until it ends."""
        return self._reporting or (self.worker is not None and self.worker.isRunning())

    def ask(self, question: str, aoi_artifact_id: str | None = None) -> bool:
        if self.busy or self._closed:
            return False
        self.dock.set_busy(True, tr("Planning…"))
        previous = next((r for r in reversed(self.records) if r and r.status in ("answered", "partial")), None)
        files = self.write_user_layers()

        def orchestrator(*, on_event: EventCallback, cancel: threading.Event) -> Orchestrator:  # run's thread
            return self._orchestrator(on_event=on_event, cancel=cancel, user_layers=files)

        self._start(RunWorker(orchestrator, question, aoi_artifact_id or self.aoi_id, previous, parent=self))
        return True

    def _start(self, worker: RunWorker) -> None:
        from qgis.core import QgsApplication

        self.worker = worker
        self._connect(worker.event, self._on_event)
        self._connect(worker.done, self._on_done)
        self._connect(worker.crashed, self._on_crash)
        self._steps, self._finished = set(), set()
        task = self.task = RunTask(tr("GeoFaham: {question}").format(question=worker.question[:80]), worker.cancel)
        for ended in (task.taskCompleted, task.taskTerminated):  # cancelled in the task manager: it goes first
            ended.connect(lambda task=task: self._forget_task(task))
        QgsApplication.taskManager().addTask(task)
        worker.start()

    def _live_task(self) -> RunTask | None:
        """The run's task while the task manager has not deleted it."""
        from qgis.PyQt import sip

        if self.task is not None and sip.isdeleted(self.task):
            self.task = None
        return self.task

    def _end_task(self) -> None:
        if (task := self._live_task()) is not None:
            task.end()  # the task manager deletes it once it completes: no reference is kept
        self.task = None

    def _forget_task(self, task: RunTask) -> None:
        if self.task is task:
            self.task = None

    def _show_progress(self) -> None:
        if (task := self._live_task()) is not None and self._steps:
            task.show_progress(min(99.0, 100.0 * len(self._finished & self._steps) / len(self._steps)))

    def resume(self, run_id: str) -> bool:
        """Go on with a run of this session that did not finish (killed with QGIS, cancelled, timed out):
        steps done stay done (``Orchestrator.resume``). A run that cannot be resumed is one line."""
        from ..core.orchestrator.runlog import not_resumable

        if self.busy or self._closed:
            return False
        runlog = RunLog(self.store.session_dir)
        if problem := not_resumable(runlog, run_id):
            self.dock.append_error(problem)
            return False
        question = runlog.load_state(run_id).question
        self.dock.append_user(tr("Resume run {run}: {question}").format(run=run_id, question=question))
        self.dock.set_busy(True, tr("Resuming run {run}…").format(run=run_id))

        def orchestrator(*, on_event: EventCallback, cancel: threading.Event) -> Orchestrator:  # run's thread
            return self._orchestrator(on_event=on_event, cancel=cancel)

        self._start(RunWorker(orchestrator, question, parent=self, resume=run_id))
        return True

    def offer_resumes(self) -> list[str]:
        """A "Resume" link in the transcript for each run of the session cut off mid-way (QGIS closed or
        killed while it ran); the run ids."""
        interrupted = RunLog(self.store.session_dir).interrupted()
        for record in interrupted:
            self.dock.append_resume_button(record.run_id, record.question, tr("interrupted"))
        return [r.run_id for r in interrupted]

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    # ----------------------------------------------------------------------------- your layers
    def refresh_layers(self, *_args: object) -> None:
        """List the project's readable layers in the dock (ticked as the user left them, else when visible)."""
        self.dock.set_project_layers(project_layer_choices(QgsProject.instance(), self._layer_choices))

    def _on_layer_choice(self, layer_id: str, checked: bool) -> None:
        self._layer_choices[layer_id] = checked

    def write_user_layers(self) -> list[UserLayerFile]:
        """The ticked layers as files for the run's thread: a file-backed layer's own file; any other written into
        the session folder (main thread) when it changed since it was last written."""
        project = QgsProject.instance()
        files, problems = write_user_layers(
            project,
            self.dock.chosen_layer_ids(),
            self.store.session_dir / USER_LAYERS_DIR,
            self._written,
            self._edits,
        )
        for problem in problems:
            QgsMessageLog.logMessage(f"layer not used: {problem}", LOG_TAG, Qgis.Warning)
        for layer_id in self._written.keys() - self._edits.keys():  # count its edits from now on
            self._edits[layer_id] = 0
            layer = project.mapLayer(layer_id)
            if layer is not None:
                for signal in (layer.layerModified, layer.afterCommitChanges):
                    self._connect(signal, lambda *_, i=layer_id: self._edits.__setitem__(i, self._edits[i] + 1))
        return files

    def _on_event(self, event: RunEvent) -> None:  # main thread
        payload = event.payload
        if isinstance(payload, PlanEvent):
            steps = payload.plan.steps
            self._steps = {s.id for s in steps}
            self._show_progress()
            self.dock.show_plan(steps)
            self.dock.status.setText(tr("Plan: ") + " → ".join(f"{s.agent.value}.{s.tool or '?'}" for s in steps))
        elif isinstance(payload, StepStartedEvent):
            self.dock.update_step(payload.step, "running")
            self.dock.status.setText(tr("Step {n}: {goal}").format(n=payload.step, goal=payload.goal))
        elif isinstance(payload, StepFinishedEvent):
            self.dock.update_step(payload.step, payload.shown_status, payload.artifact_id or "", payload.message)
            self._finished.add(payload.step)
            self._show_progress()
        elif isinstance(payload, ArtifactEvent):
            started = time.monotonic()
            group = session_group(QgsProject.instance(), self.name)
            layer = add_artifact_layer(QgsProject.instance(), group, payload.artifact, self.store)
            if layer is not None:
                self.layers.append(layer)
                self.layerAdded.emit(layer)
            self.main_thread_work.append((started, time.monotonic()))
        elif isinstance(payload, CheckFailedEvent):
            self.dock.update_step(payload.step, "failed", "", payload.failure.message)
            QgsMessageLog.logMessage(payload.failure.describe(), LOG_TAG, Qgis.Warning)
        self.runEvent.emit(event)

    def _on_done(self, record: RunRecord) -> None:  # main thread
        self._end_task()
        self.records.append(record)
        self.dock.set_busy(False, "")
        if record.status in ("answered", "partial"):
            self.dock.append_answer(record.answer)
            self.dock.append_report_button(record.run_id)
            if record.status == "answered":
                self.dock.append_model_button(record.run_id)
            if record.structured is not None:
                self.dock.append_structured(record.structured)
            self.dock.append_constraints(constraint_rows(record))
            style_road_access(QgsProject.instance(), record, self.store)
            label_answer(QgsProject.instance(), record, self.store)
            self._show_answer(record)
            self.show_context(record)
        else:
            self.dock.append_error(record.answer)
            if record.status in ("timed_out", "cancelled"):  # kept what it computed: it can go on
                why = tr("timed out") if record.status == "timed_out" else tr("cancelled")
                self.dock.append_resume_button(record.run_id, record.question, why)
        tokens = record.usage.total()
        summary = tr("{status} in {seconds:.1f} s · {prompt} + {completion} tokens · run {run}").format(
            status=record.status,
            seconds=record.seconds,
            prompt=tokens.prompt,
            completion=tokens.completion,
            run=record.run_id,
        )
        self.dock.status.setText(summary)
        QgsMessageLog.logMessage(summary, LOG_TAG, Qgis.Info)
        self.runFinished.emit(record)

    def _on_crash(self, message: str, details: str, users: bool = False) -> None:  # main thread
        """``users``: an error the user can fix (a question naming no disaster, a full disk ...): its one line
        (message; hint) as the command line prints it; else our failure, with the details in the log panel."""
        QgsMessageLog.logMessage(details, LOG_TAG, Qgis.Warning if users else Qgis.Critical)
        self._end_task()
        self.dock.set_busy(False, "")
        self.dock.append_error(
            message
            if users
            else tr("Something went wrong: {message}. Details are in the GeoFaham log panel.").format(message=message)
        )
        self.runFinished.emit(None)

    # ---------------------------------------------------------------------------- map context
    def show_context(self, record: RunRecord) -> ContextLoad | None:
        """Load the map context of a run's events (and the basemap, online) under the session's group, off the
        main thread; None when there is nothing to show (no event, offline)."""
        from ..core.engines.context import map_context, run_events
        from .context import load_context_async

        extras = [self.store.get(a).extra for a in record.artifact_ids() if a in self.store]
        events = run_events(record.facts.event_id if record.facts else None, extras)
        if not events and not self.settings.basemap_on:
            return None
        settings = self.settings

        def prepare() -> MapContext:  # the task's thread
            from ..core.engines.layers import LayerCatalogue

            return map_context(LayerCatalogue(settings.paths.data_dir), events, settings)

        group = session_group(QgsProject.instance(), self.name)
        load = load_context_async(QgsProject.instance(), group, prepare, on_done=self._on_context)
        self.context_loads.append(load)
        return load

    def _on_context(self, load: ContextLoad) -> None:  # main thread
        if self._closed:
            return
        if load.error is not None:
            QgsMessageLog.logMessage(f"map context not shown: {load.error}", LOG_TAG, Qgis.Warning)
        for note in load.context.notes if load.context else []:
            QgsMessageLog.logMessage(f"map context: {note}", LOG_TAG, Qgis.Info)
        self.contextAdded.emit(load)

    def make_report(self, run_id: str) -> Report | None:
        """The situation report of one of this session's answered runs (main thread): PDF and PNG in the
        session's reports/ folder, the layout in the project's layouts; a problem is one line in the dock.
        While it is written it is a task in QGIS's task manager advancing through the report's stages (the work
        stays on the main thread: :class:`MainThreadTask`), and the dock is busy."""
        from ..core.errors import user_line
        from . import report as report_module

        if self._closed:
            return None
        if self.busy:  # the report's map rendering processes events: a second click lands here, not in a second report
            self.dock.append_error(
                tr("A report is being written or a question is running: ask for this report when it ends.")
            )
            return None
        record = next((r for r in reversed(self.records) if r is not None and r.run_id == run_id), None)
        if record is None:
            self.dock.append_error(tr("No finished run {run} in this session.").format(run=run_id))
            return None
        self._reporting = True
        self.dock.set_busy(True, tr("Writing the situation report…"), cancellable=False)
        task = self.report_task = MainThreadTask(tr("GeoFaham: situation report of run {run}").format(run=run_id))
        report = None
        try:
            report = report_module.situation_report(
                record, self.store, group_name=self.name, settings=self.settings, progress=self._report_progress
            )
        except Exception as exc:  # noqa: BLE001 - the user's problem is one line; ours goes to the log too
            import traceback

            QgsMessageLog.logMessage("".join(traceback.format_exception(exc)), LOG_TAG, Qgis.Critical)
            line = user_line(exc)
            self.dock.append_error(
                line
                or tr("The situation report failed: {message}. Details are in the GeoFaham log panel.").format(
                    message=exc
                )
            )
            return None
        finally:
            task.end(report is not None)  # completed, or terminated: never a stuck entry in the task manager
            self.report_task = None
            self._reporting = False
            if not self._closed:
                self.dock.set_busy(False, "")
        self.dock.append_report_written(str(report.pdf), str(report.png))
        return report

    def _report_progress(self, percent: float, stage: str) -> None:  # main thread, from the report's stages
        from qgis.PyQt.QtCore import QCoreApplication, QEventLoop

        if self.report_task is not None:
            self.report_task.progress(percent)
        if not self._closed:
            self.dock.status.setText(tr("Writing the situation report: {stage}…").format(stage=stage))
        # the task manager and the dock repaint between stages, as QGIS's own layout export lets them; clicks and
        # keys wait until the report is written (the one-report guard refuses any that reach make_report)
        QCoreApplication.processEvents(QEventLoop.ExcludeUserInputEvents)

    def open_model(self, run_id: str) -> Path | None:
        """Write one of this session's answered runs as a Processing model, ``<session>/models/<run_id>.model3``,
        and open it in the Model Designer where there is one (main thread); a run a model cannot express, or
        another problem, is one line in the dock."""
        from ..core.errors import user_line
        from ..core.model_export import NotExportable
        from .processing.model import open_in_designer, refusal_line, write_model

        if self._closed:
            return None
        record = next((r for r in reversed(self.records) if r is not None and r.run_id == run_id), None)
        if record is None:
            self.dock.append_error(tr("No finished run {run} in this session.").format(run=run_id))
            return None
        try:
            path, _ = write_model(record, self.store)
        except NotExportable as exc:
            self.dock.append_error(refusal_line(exc))
            return None
        except Exception as exc:  # noqa: BLE001 - the user's problem is one line; ours goes to the log too
            import traceback

            QgsMessageLog.logMessage("".join(traceback.format_exception(exc)), LOG_TAG, Qgis.Critical)
            self.dock.append_error(
                user_line(exc)
                or tr(
                    "The Processing model could not be written: {message}. Details are in the GeoFaham log panel."
                ).format(message=exc)
            )
            return None
        self.dock.append_model_written(str(path), open_in_designer(path))
        return path

    # ---------------------------------------------------------------------------- persistence
    TRANSCRIPT = "transcript.json"

    def save_transcript(self) -> None:
        import json

        if self._closed:  # the dock now shows another session (or none): never written over this one's
            return
        path = self.store.session_dir / self.TRANSCRIPT
        tmp = path.with_suffix(".tmp")
        tmp.write_text(
            json.dumps({"name": self.name, "aoi_id": self.aoi_id, "entries": self.dock.entries()}), encoding="utf-8"
        )
        os.replace(tmp, path)

    def restore(self) -> None:
        """Bring back the transcript, AOI, layers and run records of a saved session."""
        import json

        path = self.store.session_dir / self.TRANSCRIPT
        if path.exists():
            saved = json.loads(path.read_text(encoding="utf-8"))
            self.dock.restore(saved.get("entries", []))
            if saved.get("aoi_id") in self.store:
                self.aoi_id = saved["aoi_id"]
                self.dock.set_aoi(f"{self.aoi_id} · {self.store.get(self.aoi_id).summary}")
        self.records = RunLog(self.store.session_dir).finished_runs()
        self.offer_resumes()
        self.layers = [
            layer
            for layer in QgsProject.instance().mapLayers().values()
            if layer.customProperty("geofaham/artifact_id")
        ]
        if self.records:  # the last run's plan, as it ended
            last = self.records[-1]
            if last.plans:
                self.dock.show_plan(last.plans[-1].plan.steps)
            for step in last.steps:
                if step.plan_index == len(last.plans):
                    self.dock.update_step(step.step_id, step.status.value, step.artifact_id or "")
        self._restore_context()

    def _restore_context(self) -> None:
        """A project keeps no feature of a memory layer: the map context's (towns from the gazetteer) come back
        empty. They are removed and the answered runs' context loaded again (what is still there stays)."""
        from .context import KIND_PROPERTY

        project = QgsProject.instance()
        lost = [
            layer.id()
            for layer in project.mapLayers().values()
            if layer.customProperty(KIND_PROPERTY) and layer.providerType() == "memory" and layer.featureCount() == 0
        ]
        if not lost:
            return
        project.removeMapLayers(lost)
        for record in self.records:
            if record is not None and record.status in ("answered", "partial"):
                self.show_context(record)

    def relocate(self, new_dir: Path) -> None:
        """Move the session folder (e.g. next to a newly saved project) and re-point its layers."""
        from ..core.store.store import ResponseStore

        old_dir = self.store.session_dir
        if Path(new_dir).resolve() == old_dir:
            return
        self.store.close()
        new_dir = Path(new_dir)
        new_dir.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(old_dir, new_dir, dirs_exist_ok=True, ignore=shutil.ignore_patterns("store.lock"))
        self.store = ResponseStore(new_dir)
        from .layers import artifact_source

        for layer in self.layers:
            artifact_id = layer.customProperty("geofaham/artifact_id")
            if artifact_id in self.store:
                source = artifact_source(self.store.get(artifact_id), self.store)
                layer.setDataSource(source, layer.name(), layer.providerType())
        shutil.rmtree(old_dir, ignore_errors=True)

    # ------------------------------------------------------------------------------ map side
    def _show_answer(self, record: RunRecord) -> None:
        """The answer on the map: its layers on top, the run's other layers hidden, the canvas framing the area
        asked about and the answer's features."""
        from .layers import answer_extent, show_answer, zoom_to_extent

        project = QgsProject.instance()
        show_answer(project, session_group(project, self.name), record, self.store)
        if self.iface is not None:
            canvas = self.iface.mapCanvas()
            zoom_to_extent(canvas, answer_extent(project, record, self.store, canvas.mapSettings().destinationCrs()))

    def show_artifact(self, artifact_id: str) -> None:
        """Select the artifact's layer in the layer tree and zoom to it."""
        from .layers import find_artifact_layer, zoom_to_layer

        layer = find_artifact_layer(QgsProject.instance(), artifact_id)
        if layer is None or self.iface is None:
            return
        self.iface.setActiveLayer(layer)
        zoom_to_layer(self.iface.mapCanvas(), layer)

    # ----------------------------------------------------------------------------------- AOI
    def _set_aoi(self, make: Callable[[], ArtifactRecord]) -> bool:
        from ..core.errors import GeoFahamError
        from ..core.store.models import VectorMeta

        try:
            record = make()
        except GeoFahamError as exc:
            self.dock.append_error(tr("This cannot be used as the area of interest: {why}").format(why=exc))
            return False
        self.aoi_id = record.id
        area = (record.metadata.total_area_m2 if isinstance(record.metadata, VectorMeta) else None) or 0
        self.dock.set_aoi(f"{record.id} · {record.summary.replace('area of interest: ', '')} ({area / 1e6:,.2f} km²)")
        group = session_group(QgsProject.instance(), self.name)
        layer = add_artifact_layer(QgsProject.instance(), group, record, self.store)
        if layer is not None:
            self.layers.append(layer)
        return True

    def aoi_from_layer(self, layer: QgsMapLayer | None, selected_only: bool) -> bool:
        from .aoi import aoi_from_layer

        if layer is None or not hasattr(layer, "selectedFeatureCount"):
            self.dock.append_error(tr("Select a vector layer first."))
            return False
        if selected_only and layer.selectedFeatureCount() == 0:
            self.dock.append_error(tr("No features are selected in {layer}.").format(layer=layer.name()))
            return False
        return self._set_aoi(lambda: aoi_from_layer(self.store, layer, selected_only=selected_only))

    def aoi_from_geometry(self, geometry: QgsGeometry, crs: QgsCoordinateReferenceSystem) -> bool:
        from .aoi import aoi_from_geometry

        return self._set_aoi(lambda: aoi_from_geometry(self.store, geometry, crs))

    def start_drawing(self) -> None:
        from .aoi import PolygonTool

        if self.iface is None:
            raise RuntimeError("drawing an area of interest needs the QGIS interface (this session has no iface)")
        canvas = self.iface.mapCanvas()
        previous = canvas.mapTool()  # given back when the polygon is finished or drawing is cancelled
        tool = self._draw_tool = PolygonTool(canvas)

        def done() -> None:
            if canvas.mapTool() is tool:
                if previous is not None:
                    canvas.setMapTool(previous)
                else:
                    canvas.unsetMapTool(tool)

        def cancelled() -> None:
            done()
            self.dock.status.setText(tr("Drawing cancelled: the area of interest is unchanged."))

        def finished(geometry: QgsGeometry) -> None:
            self.aoi_from_geometry(geometry, canvas.mapSettings().destinationCrs())
            done()

        self._connect(tool.polygonFinished, finished)
        self._connect(tool.cancelled, cancelled)
        canvas.setMapTool(tool)
        self.dock.status.setText(
            tr("Draw the area of interest: click to add corners; right-click or double-click to finish; Esc cancels.")
        )

    def clear_aoi(self) -> None:
        self.aoi_id = None
        self.dock.set_aoi(None)

    def close(self) -> None:
        """Disconnect every signal the session connected, end its run and its context loads, close its model and
        store. A closed session never answers: its entry points return at once."""
        self._closed = True
        for signal, slot in self._connections:
            with contextlib.suppress(TypeError, RuntimeError):  # already disconnected, or its sender is gone
                signal.disconnect(slot)
        self._connections = []
        if self._draw_tool is not None and self.iface is not None:
            with contextlib.suppress(RuntimeError):
                if self.iface.mapCanvas().mapTool() is self._draw_tool:
                    self.iface.mapCanvas().unsetMapTool(self._draw_tool)
        if self.worker is not None:
            self.worker.cancel()
            self.worker.wait(30000)
        self._end_task()
        for load in self.context_loads:  # a context still loading: its thread ends before the session does
            if load.task is not None and not load.done:
                load.task.waitForFinished(30000)
        self.context_loads = []
        if self._llm is not None:
            self._llm.close()
        self.store.close()


def constraint_rows(record: RunRecord) -> list[tuple[bool, str, str]]:
    """The run's constraints as the dock lists them: (applied, the part in words, "step 2 (select_damage)")."""
    tools = {s.id: s.tool or "" for s in record.plans[-1].plan.steps} if record.plans else {}
    rows = []
    for c in record.constraints:
        steps = [f"step {i} ({tools.get(i, '?')})" for i in c.applied_by] + [f"earlier {a}" for a in c.applied_upstream]
        rows.append((c.applied, c.describe(), ", ".join(steps)))
    return rows
