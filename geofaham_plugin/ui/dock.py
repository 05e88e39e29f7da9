"""The dockable GeoFaham chat panel: transcript, question input, send."""

from __future__ import annotations

import html

from qgis.PyQt.QtCore import Qt, pyqtSignal
from qgis.PyQt.QtGui import QKeySequence
from qgis.PyQt.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QShortcut,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from .i18n import tr

DOCK_OBJECT_NAME = "GeoFahamDock"


class ChatDock(QDockWidget):
    """Chat panel. It only shows and collects text; the plugin decides what a question does."""

    questionSubmitted = pyqtSignal(str)  # noqa: N815 (Qt naming)
    cancelRequested = pyqtSignal()  # noqa: N815

    def __init__(self, parent=None):
        super().__init__(tr("GeoFaham"), parent)
        self.setObjectName(DOCK_OBJECT_NAME)
        self.setAllowedAreas(Qt.LeftDockWidgetArea | Qt.RightDockWidgetArea)

        body = QWidget(self)
        body.setObjectName("GeoFahamDockBody")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)

        self.transcript = QTextBrowser(body)
        self.transcript.setObjectName("GeoFahamTranscript")
        self.transcript.setOpenExternalLinks(True)
        self.transcript.setPlaceholderText(
            tr("Ask a disaster-response question, e.g. \"Which hospitals lie within 1 km of the Eaton fire perimeter?\"")
        )
        layout.addWidget(self.transcript, 1)

        self.status = QLabel("", body)
        self.status.setObjectName("GeoFahamStatus")
        self.status.setWordWrap(True)
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

    def set_busy(self, busy: bool, status: str = "") -> None:
        self.send_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)
        self.status.setText(status)

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

    def append_error(self, text: str) -> None:
        self._append(f"<p style='color:#b00020'><b>{html.escape(tr('Problem'))}:</b> {html.escape(text)}</p>")

    def _append(self, fragment: str) -> None:
        self._entries.append(fragment)
        self.transcript.setHtml("".join(self._entries))
        bar = self.transcript.verticalScrollBar()
        bar.setValue(bar.maximum())

    def transcript_text(self) -> str:
        return self.transcript.toPlainText()
