"""Runs one orchestrator run off the main thread. Core events cross to the main thread as Qt signals
(queued connections); nothing here touches the project, the layer tree or the canvas."""

from __future__ import annotations

import threading
import traceback
from typing import TYPE_CHECKING, Protocol

from qgis.core import QgsApplication, QgsProxyProgressTask, QgsTask
from qgis.PyQt.QtCore import QObject, QThread, pyqtSignal

from ..core.domain.secrets import mask_secrets
from ..core.errors import user_line

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..core.orchestrator.events import EventCallback
    from ..core.orchestrator.orchestrator import Orchestrator
    from ..core.orchestrator.runlog import RunRecord


class OrchestratorFactory(Protocol):
    """Builds the run's orchestrator on the worker thread, wired to the worker's events and cancel flag."""

    def __call__(self, *, on_event: EventCallback, cancel: threading.Event) -> Orchestrator: ...


class RunWorker(QThread):
    event = pyqtSignal(object)  # core RunEvent
    done = pyqtSignal(object)  # core RunRecord
    crashed = pyqtSignal(str, str, bool)  # readable message, details for the log, whether the user can fix it

    def __init__(
        self,
        orchestrator_factory: OrchestratorFactory,
        question: str,
        aoi_artifact_id: str | None = None,
        previous: RunRecord | None = None,
        parent: QObject | None = None,
        resume: str | None = None,
    ) -> None:
        super().__init__(parent)
        self._factory = orchestrator_factory
        self.question = question
        self.aoi_artifact_id = aoi_artifact_id
        self.previous = previous  # the session's last run: the question may be a follow-up
        self.resume = resume  # a run id: go on with that run (from its saved state) instead of asking
        self.cancel_event = threading.Event()

    def run(self) -> None:  # worker thread
        try:
            orchestrator = self._factory(on_event=self.event.emit, cancel=self.cancel_event)
            if self.resume is not None:
                record = orchestrator.resume(self.resume)
            else:
                record = orchestrator.run(self.question, aoi_artifact_id=self.aoi_artifact_id, previous=self.previous)
            self.done.emit(record)
        except Exception as exc:  # noqa: BLE001 (our bug or an environment problem: report it, keep QGIS alive)
            line = user_line(exc)  # the line the command line prints for an error the user can fix
            message = line if line is not None else f"{type(exc).__name__}: {exc}"
            self.crashed.emit(mask_secrets(message), mask_secrets(traceback.format_exc()), line is not None)

    def cancel(self) -> None:
        self.cancel_event.set()


class RunTask(QgsTask):
    """A run as QGIS's task manager shows it: its description, its steps' progress (set on the main thread), a
    cancel button that cancels the run. It does no work: its thread waits until :meth:`end` (the run's own
    thread is the RunWorker's)."""

    def __init__(self, description: str, on_cancel: Callable[[], None]) -> None:
        super().__init__(description, QgsTask.CanCancel)
        self._ended = threading.Event()
        self._on_cancel = on_cancel

    def run(self) -> bool:  # the task manager's thread
        while not self._ended.wait(0.05):
            if self.isCanceled():
                return False
        return True

    def cancel(self) -> None:  # main thread (the task manager's cancel button)
        self._on_cancel()
        super().cancel()

    def end(self) -> None:
        """The run ended (any thread): the task completes."""
        self._ended.set()

    def show_progress(self, percent: float) -> None:
        self.setProgress(percent)


class MainThreadTask:
    """Work that must stay on the main thread (the situation report: the project, the layer tree and QGIS's layout
    export live there) shown in QGIS's task manager with its progress: a QgsProxyProgressTask, QGIS's own task for
    this (it does no work of its own: it waits until :meth:`end`). Made, advanced and ended on the main thread."""

    def __init__(self, description: str) -> None:
        self.task: QgsProxyProgressTask | None = QgsProxyProgressTask(description, False)
        # the task manager owns it and deletes it once it ends; it takes no thread of the pool from the tasks the
        # work itself waits on (QGIS counts a legend's classes in a task: tests/test_report_qgis.py, one thread)
        QgsApplication.taskManager().addTask(self.task)

    def progress(self, percent: float) -> None:
        if self.task is not None:
            self.task.setProxyProgress(max(0.0, min(100.0, percent)))

    def end(self, ok: bool) -> None:
        """The work ended: the task completes (progress 100) or, when it failed, is terminated; never left
        behind in the task manager. Once only."""
        task, self.task = self.task, None
        if task is None:
            return
        if ok:
            task.setProxyProgress(100.0)
        task.finalize(ok)
