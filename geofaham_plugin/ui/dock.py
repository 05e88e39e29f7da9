"""The dockable GeoFaham chat panel: transcript, question input, send."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from qgis.PyQt.QtCore import QElapsedTimer, Qt, QTimer, QUrl, pyqtSignal
from qgis.PyQt.QtGui import QKeySequence
from qgis.PyQt.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QShortcut,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .i18n import tr

if TYPE_CHECKING:
    from ..core.orchestrator.answer import StructuredAnswer
    from ..core.planning.plan import PlanStep
    from .user_layers import ProjectLayerChoice

DOCK_OBJECT_NAME = "GeoFahamDock"
REPORT_SCHEME = "geofaham-report"  # transcript link of a run's "Situation report" button
REPORT_ICON = "geofaham-icon:report"
ELAPSED = re.compile(
    r" · \d+ s$"
)  # the seconds the status line counts while a run works  # the button's icon, a resource of the transcript's document
MODEL_SCHEME = "geofaham-model"  # transcript link of a run's "Open as Processing model" button
MODEL_ICON = "geofaham-icon:model"
RESUME_SCHEME = "geofaham-resume"  # transcript link of an interrupted (or timed-out, cancelled) run's "Resume"


class ChatDock(QDockWidget):
    """Chat panel. It only shows and collects text; the plugin decides what a question does."""

    questionSubmitted = pyqtSignal(str)  # noqa: N815 (Qt naming)
    cancelRequested = pyqtSignal()  # noqa: N815
    artifactActivated = pyqtSignal(str)  # noqa: N815  artifact id clicked in the plan view
    aoiFromSelectionRequested = pyqtSignal()  # noqa: N815
    aoiDrawRequested = pyqtSignal()  # noqa: N815
    aoiClearRequested = pyqtSignal()  # noqa: N815
    layerChoiceChanged = pyqtSignal(str, bool)  # noqa: N815  project layer id, ticked: GeoFaham may read it
    reportRequested = pyqtSignal(str)  # noqa: N815  run id: make its situation report
    modelRequested = pyqtSignal(str)  # noqa: N815  run id: write it as a Processing model and open it
    resumeRequested = pyqtSignal(str)  # noqa: N815  run id: go on with an interrupted run

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(tr("GeoFaham"), parent)
        self.setObjectName(DOCK_OBJECT_NAME)
        self.setAllowedAreas(Qt.LeftDockWidgetArea | Qt.RightDockWidgetArea)

        body = QWidget(self)
        body.setObjectName("GeoFahamDockBody")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)

        splitter = QSplitter(Qt.Vertical, body)
        self.transcript = QTextBrowser(splitter)
        self.transcript.setObjectName("GeoFahamTranscript")
        self.transcript.setOpenLinks(False)  # report links stay here; web and file links open outside
        self.transcript.anchorClicked.connect(self._on_link)
        # the report button's icon, QGIS's own (an emoji renders as an empty box without an emoji font)
        from qgis.core import QgsApplication
        from qgis.PyQt.QtGui import QTextDocument

        self.transcript.document().addResource(
            QTextDocument.ImageResource,
            QUrl(REPORT_ICON),
            QgsApplication.getThemeIcon("mActionSaveAsPDF.svg").pixmap(16, 16),
        )
        self.transcript.document().addResource(
            QTextDocument.ImageResource,
            QUrl(MODEL_ICON),
            QgsApplication.getThemeIcon("processingModel.svg").pixmap(16, 16),
        )
        self.transcript.setPlaceholderText(
            tr('Ask a disaster-response question, e.g. "Which hospitals lie within 1 km of the Eaton fire perimeter?"')
        )
        self.plan_view = QTreeWidget(splitter)
        self.plan_view.setObjectName("GeoFahamPlan")
        self.plan_view.setHeaderLabels([tr("Step"), tr("Operation"), tr("Status"), tr("Artifact")])
        self.plan_view.setRootIsDecorated(False)
        self.plan_view.itemActivated.connect(self._on_plan_item)
        self.plan_view.itemClicked.connect(self._on_plan_item)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        layout.addWidget(splitter, 1)

        aoi_row = QHBoxLayout()
        self.aoi_label = QLabel(tr("Area of interest: the disaster's own area"), body)
        self.aoi_label.setObjectName("GeoFahamAoi")
        self.aoi_label.setWordWrap(True)
        aoi_row.addWidget(self.aoi_label, 1)
        for name, text, signal in (
            ("GeoFahamAoiSelection", tr("From selection"), self.aoiFromSelectionRequested),
            ("GeoFahamAoiDraw", tr("Draw"), self.aoiDrawRequested),
            ("GeoFahamAoiClear", tr("Clear"), self.aoiClearRequested),
        ):
            button = QPushButton(text, body)
            button.setObjectName(name)
            button.clicked.connect(signal.emit)
            aoi_row.addWidget(button)
        layout.addLayout(aoi_row)

        self.layers_label = QLabel(tr("Your layers GeoFaham may read:"), body)
        self.layers_label.setObjectName("GeoFahamLayersLabel")
        layout.addWidget(self.layers_label)
        self.layer_list = QListWidget(body)
        self.layer_list.setObjectName("GeoFahamLayers")
        self.layer_list.setMaximumHeight(72)
        self.layer_list.setToolTip(
            tr("Ticked project layers are copied into the session when you ask, so a question can name them.")
        )
        self.layer_list.itemChanged.connect(self._on_layer_item)
        layout.addWidget(self.layer_list)

        self.status = QLabel("", body)
        self.status.setObjectName("GeoFahamStatus")
        self.status.setWordWrap(True)
        # while a run works the status line counts the seconds, so a long model call never looks frozen
        self._busy_clock = QElapsedTimer()
        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._tick)
        layout.addWidget(self.status)

        row = QHBoxLayout()
        self.input = QPlainTextEdit(body)
        self.input.setObjectName("GeoFahamQuestion")
        self.input.setPlaceholderText(tr("Your question (Ctrl+Enter to send)"))
        self.input.setMaximumHeight(80)
        row.addWidget(self.input, 1)
        self.send_button = QPushButton(tr("Send"), body)
        self.send_button.setObjectName("GeoFahamSend")
        self.send_button.clicked.connect(self.submit)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        self.cancel_button = QPushButton(tr("Cancel"), body)
        self.cancel_button.setObjectName("GeoFahamCancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancelRequested.emit)
        buttons.addWidget(self.cancel_button)
        row.addLayout(buttons)
        layout.addLayout(row)

        self._shortcut = QShortcut(QKeySequence("Ctrl+Return"), self.input)
        self._shortcut.activated.connect(self.submit)
        self.setWidget(body)
        self._entries: list[str] = []

    # ----------------------------------------------------------------------------------- input
    def submit(self) -> None:
        question = self.input.toPlainText().strip()
        if not question or not self.send_button.isEnabled():
            return
        self.input.clear()
        self.append_user(question)
        self.questionSubmitted.emit(question)

    def set_busy(self, busy: bool, status: str = "", *, cancellable: bool = True) -> None:
        self.send_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy and cancellable)
        self.status.setText(status)
        if busy:
            self._busy_clock.start()
            self._ticker.start()
        else:
            self._ticker.stop()

    def _tick(self) -> None:
        """The status line as the run left it, with the seconds since it began."""
        base = ELAPSED.sub("", self.status.text())
        self.status.setText(f"{base} · {self._busy_clock.elapsed() // 1000} s")

    # ------------------------------------------------------------------------------- plan view
    def show_plan(self, steps: Sequence[PlanStep]) -> None:
        """One row per plan step, all pending (a replan replaces the rows)."""
        self.plan_view.clear()
        for step in steps:
            item = QTreeWidgetItem(
                [str(step.id), f"{step.agent.value}.{step.tool or '?'}", self._status_text("pending"), ""]
            )
            item.setToolTip(1, step.goal)
            self.plan_view.addTopLevelItem(item)
        for column in range(3):
            self.plan_view.resizeColumnToContents(column)

    def update_step(self, step_id: int, status: str, artifact_id: str = "", message: str = "") -> None:
        for i in range(self.plan_view.topLevelItemCount()):
            item = self.plan_view.topLevelItem(i)
            if item.text(0) == str(step_id):
                item.setText(2, self._status_text(status))
                if artifact_id:
                    item.setText(3, artifact_id)
                if message:
                    item.setToolTip(2, message)

    @staticmethod
    def _status_text(status: str) -> str:
        return {
            "pending": tr("pending"),
            "running": tr("running"),
            "done": tr("done"),
            "failed": tr("failed"),
            "reused": tr("reused"),
            "skipped": tr("skipped"),
        }.get(status, status)

    def _on_plan_item(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        if item.text(3):
            self.artifactActivated.emit(item.text(3))

    # ----------------------------------------------------------------------------- your layers
    def set_project_layers(self, choices: Sequence[ProjectLayerChoice]) -> None:
        """One checkable row per project layer GeoFaham may read (replaces the rows)."""
        self.layer_list.blockSignals(True)
        self.layer_list.clear()
        for choice in choices:
            item = QListWidgetItem(choice.name, self.layer_list)
            item.setData(Qt.UserRole, choice.layer_id)
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Checked if choice.checked else Qt.Unchecked)
        self.layer_list.blockSignals(False)
        self.layers_label.setVisible(bool(choices))
        self.layer_list.setVisible(bool(choices))

    def chosen_layer_ids(self) -> list[str]:
        """The ids of the ticked project layers, in list order."""
        items = [self.layer_list.item(i) for i in range(self.layer_list.count())]
        return [str(item.data(Qt.UserRole)) for item in items if item.checkState() == Qt.Checked]

    def _on_layer_item(self, item: QListWidgetItem) -> None:
        self.layerChoiceChanged.emit(str(item.data(Qt.UserRole)), item.checkState() == Qt.Checked)

    def set_aoi(self, text: str | None) -> None:
        self.aoi_label.setText(
            tr("Area of interest: {aoi}").format(aoi=text) if text else tr("Area of interest: the disaster's own area")
        )

    # ------------------------------------------------------------------------------ transcript
    def append_user(self, text: str) -> None:
        self._append(f"<p><b>{html.escape(tr('You'))}:</b> {html.escape(text)}</p>")

    def append_answer(self, markdown: str) -> None:
        from qgis.PyQt.QtGui import QTextDocument

        doc = QTextDocument()
        doc.setMarkdown(markdown)
        body = doc.toHtml()
        start, end = body.find("<body"), body.rfind("</body>")
        inner = body[body.find(">", start) + 1 : end] if start >= 0 and end > start else html.escape(markdown)
        self._append(f"<div><b>{html.escape(tr('GeoFaham'))}:</b>{inner}</div>")

    def append_structured(self, answer: StructuredAnswer) -> None:
        """What the answer states, compact, under the answer: the yes/no, each stated value with its unit,
        and for a partial answer, first and in red, the parts of the question not applied."""
        rows: list[str] = []
        if answer.status == "partial":
            if answer.not_applied:
                parts = "; ".join(html.escape(p) for p in answer.not_applied)
                rows.append(
                    "<p style='color:#b00020'><b>"
                    + html.escape(tr("Not the answer to the question."))
                    + "</b> "
                    + html.escape(tr("Not applied: {parts}. The values below were computed without it.")).format(
                        parts=parts
                    )
                    + "</p>"
                )
            else:
                rows.append(
                    "<p style='color:#b00020'>"
                    + html.escape(tr("Partial: the workflow did not complete; the values below may be incomplete."))
                    + "</p>"
                )
        if answer.yes_no is not None:
            rows.append(f"<p><b>{html.escape(tr('Answer: yes') if answer.yes_no else tr('Answer: no'))}</b></p>")
        if answer.values:
            style = " style='color:#777777'" if answer.status != "answered" else ""
            cells = [
                f"<tr{style}><td>{html.escape(v.label)}</td><td align='right'>{html.escape(format_number(v.value))}</td>"
                f"<td>{html.escape(UNITS.get(v.unit, v.unit))}</td></tr>"
                for v in answer.values
            ]
            rows.append(
                f"<table border='1' cellspacing='0' cellpadding='2'><tr><th>{html.escape(tr('Stated value'))}</th>"
                f"<th>{html.escape(tr('Value'))}</th><th>{html.escape(tr('Unit'))}</th></tr>"
                + "".join(cells)
                + "</table>"
            )
        if rows:
            self._append("<div class='geofaham-structured'>" + "".join(rows) + "</div>")

    def append_constraints(self, parts: Sequence[tuple[bool, str, str]]) -> None:
        """Each part of the question and what applied it: (applied, the part in words, the steps that applied
        it). A part nothing applied is red: the answer's number does not respect it."""
        if not parts:
            return
        items = []
        for applied, what, steps in parts:
            if applied:
                items.append(
                    f"<li>✓ {html.escape(what)} — "
                    + html.escape(tr("applied by {steps}")).format(steps=html.escape(steps))
                    + "</li>"
                )
            else:
                items.append(f"<li style='color:#b00020'>✗ {html.escape(what)} — {html.escape(tr('not applied'))}</li>")
        self._append(
            "<div class='geofaham-constraints'><p><b>"
            + html.escape(tr("Parts of the question"))
            + "</b></p><ul>"
            + "".join(items)
            + "</ul></div>"
        )

    def append_report_button(self, run_id: str) -> None:
        """The "Situation report" button of an answered run (a link in the transcript, kept with it)."""
        self._append(
            f"<p><a href='{REPORT_SCHEME}:{html.escape(run_id)}' style='background:#e8eef7; padding:2px'>"
            f"<img src='{REPORT_ICON}' width='16' height='16'> {html.escape(tr('Situation report'))}</a></p>"
        )

    def append_model_button(self, run_id: str) -> None:
        """The "Open as Processing model" button of an answered run (a link in the transcript, kept with it)."""
        self._append(
            f"<p><a href='{MODEL_SCHEME}:{html.escape(run_id)}' style='background:#e8eef7; padding:2px'>"
            f"<img src='{MODEL_ICON}' width='16' height='16'> {html.escape(tr('Open as Processing model'))}</a></p>"
        )

    def append_model_written(self, path: str, opened: bool) -> None:
        link = f"<a href='{html.escape(QUrl.fromLocalFile(path).toString())}'>{html.escape(path)}</a>"
        text = (
            tr("Processing model written (opened in the Model Designer):")
            if opened
            else tr("Processing model written:")
        )
        self._append(f"<p>{html.escape(text)} {link}</p>")

    def append_resume_button(self, run_id: str, question: str, why: str) -> None:
        """The "Resume" link of a run that did not finish (``why``: interrupted, timed out, cancelled); shown
        once per run and reason."""
        href = f"{RESUME_SCHEME}:{html.escape(run_id)}"
        if any(href in entry and why in entry for entry in self._entries):
            return
        self._append(
            f"<p>{html.escape(tr('Run {run} ({why}): {question}').format(run=run_id, why=why, question=question))} "
            f"<a href='{href}' style='background:#e8eef7; padding:2px'>⟳ {html.escape(tr('Resume'))}</a></p>"
        )

    def append_report_written(self, pdf: str, png: str) -> None:
        links = " · ".join(
            f"<a href='{html.escape(QUrl.fromLocalFile(path).toString())}'>{html.escape(path)}</a>"
            for path in (pdf, png)
        )
        self._append(f"<p>{html.escape(tr('Situation report written (also in the project layouts):'))} {links}</p>")

    def _on_link(self, url: QUrl) -> None:
        if url.scheme() == REPORT_SCHEME:
            self.reportRequested.emit(url.path())
        elif url.scheme() == MODEL_SCHEME:
            self.modelRequested.emit(url.path())
        elif url.scheme() == RESUME_SCHEME:
            self.resumeRequested.emit(url.path())
        else:
            from qgis.PyQt.QtGui import QDesktopServices

            QDesktopServices.openUrl(url)

    def append_error(self, text: str) -> None:
        self._append(f"<p style='color:#b00020'><b>{html.escape(tr('Problem'))}:</b> {html.escape(text)}</p>")

    transcriptChanged = pyqtSignal()  # noqa: N815

    def _append(self, fragment: str) -> None:
        self._entries.append(fragment)
        self.transcriptChanged.emit()
        self.transcript.setHtml("".join(self._entries))
        bar = self.transcript.verticalScrollBar()
        bar.setValue(bar.maximum())

    def transcript_text(self) -> str:
        return self.transcript.toPlainText()

    def entries(self) -> list[str]:
        """The transcript as saved HTML fragments (for the session file)."""
        return list(self._entries)

    def restore(self, entries: list[str]) -> None:
        self._entries = list(entries)
        self.transcript.setHtml("".join(self._entries))


UNITS = {"count": "", "none": "", "m": "m", "m2": "m²", "km2": "km²", "percent": "%", "ratio": ""}


def format_number(value: float) -> str:
    """A stated value as the answer writes it: thousands separated, no trailing ".0"."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}".rstrip("0").rstrip(".")
