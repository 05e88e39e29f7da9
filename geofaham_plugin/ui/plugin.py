"""GeoFaham plugin object: actions, menu, toolbar button and the chat dock; removes all of them on unload."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from qgis.core import QgsMapLayerType, QgsProject
from qgis.PyQt.QtCore import Qt, QTimer
from qgis.PyQt.QtGui import QIcon
from qgis.PyQt.QtWidgets import QAction, QMenu

from .dock import ChatDock
from .i18n import PLUGIN_ROOT, install_translator, remove_translator, tr

if TYPE_CHECKING:
    from qgis.gui import QgisInterface
    from qgis.PyQt.QtCore import QTranslator

    from .processing.provider import GeoFahamProvider
    from .session import Session

MENU = "&GeoFaham"
ICON_PATH = PLUGIN_ROOT / "resources" / "icon.png"
ACTION_OBJECT_PREFIX = "GeoFaham"


class GeoFahamPlugin:
    def __init__(self, iface: QgisInterface) -> None:
        self.iface = iface
        self.translator: QTranslator | None = None
        self.dock: ChatDock | None = None
        self.actions: list[QAction] = []
        self.session: Session | None = None
        self.provider: GeoFahamProvider | None = None
        self.use_as_aoi: QAction | None = None

    # ------------------------------------------------------------------------------ lifecycle
    def initGui(self) -> None:  # noqa: N802 (QGIS API name)
        self.translator = install_translator()
        main_window = self.iface.mainWindow()
        self.init_processing()

        self.dock = ChatDock(main_window)
        self.dock.questionSubmitted.connect(self.on_question)
        self.iface.addDockWidget(Qt.RightDockWidgetArea, self.dock)

        self.dock.aoiFromSelectionRequested.connect(
            lambda: self._session().aoi_from_layer(self.iface.activeLayer(), True)
        )
        self.dock.aoiDrawRequested.connect(lambda: self._session().start_drawing())
        self.dock.aoiClearRequested.connect(lambda: self._session().clear_aoi())

        self.use_as_aoi = QAction(QIcon(str(ICON_PATH)), tr("Use as AOI (GeoFaham)"), main_window)
        self.use_as_aoi.setObjectName(f"{ACTION_OBJECT_PREFIX}UseAsAoi")
        self.use_as_aoi.triggered.connect(self._use_layer_as_aoi)
        self.iface.addCustomActionForLayerType(self.use_as_aoi, "", QgsMapLayerType.VectorLayer, True)

        project = QgsProject.instance()
        project.projectSaved.connect(self._on_project_saved)
        project.readProject.connect(self._on_project_read)
        project.cleared.connect(self._on_project_cleared)
        self._saving = False
        self.resave_pending = False

        toggle = self.dock.toggleViewAction()
        toggle.setIcon(QIcon(str(ICON_PATH)))
        toggle.setText(tr("GeoFaham chat"))
        toggle.setObjectName(f"{ACTION_OBJECT_PREFIX}ToggleDock")
        self._add_action(toggle, toolbar=True)
        export_action = QAction(tr("Export the last run…"), main_window)
        export_action.setObjectName(f"{ACTION_OBJECT_PREFIX}ExportRun")
        export_action.triggered.connect(lambda: self.export_last_run())
        self._add_action(export_action)
        report_action = QAction(tr("Situation report of the last answer"), main_window)
        report_action.setObjectName(f"{ACTION_OBJECT_PREFIX}Report")
        report_action.triggered.connect(lambda: self.report_last_run())
        self._add_action(report_action)
        settings_action = QAction(tr("Settings…"), main_window)
        settings_action.setObjectName(f"{ACTION_OBJECT_PREFIX}Settings")
        settings_action.triggered.connect(self.show_settings)
        self._add_action(settings_action)

    def init_processing(self) -> None:
        from qgis.core import QgsApplication

        from .processing.provider import GeoFahamProvider

        self.provider = GeoFahamProvider()
        QgsApplication.processingRegistry().addProvider(self.provider)

    def _add_action(self, action: QAction, toolbar: bool = False) -> None:
        self.iface.addPluginToMenu(MENU, action)
        if toolbar:
            self.iface.addToolBarIcon(action)
        self.actions.append(action)

    def unload(self) -> None:
        if self.provider is not None:
            from qgis.core import QgsApplication

            QgsApplication.processingRegistry().removeProvider(self.provider)
            self.provider = None
        project = QgsProject.instance()
        for signal, slot in (
            (project.projectSaved, self._on_project_saved),
            (project.readProject, self._on_project_read),
            (project.cleared, self._on_project_cleared),
        ):
            with contextlib.suppress(TypeError):
                signal.disconnect(slot)
        if self.use_as_aoi is not None:
            self.iface.removeCustomActionForLayerType(self.use_as_aoi)
            self.use_as_aoi.deleteLater()
            self.use_as_aoi = None
        if self.session is not None:
            self.session.close()
            self.session = None
        for action in self.actions:
            self.iface.removePluginMenu(MENU, action)
            self.iface.removeToolBarIcon(action)
            if action.parent() is self.iface.mainWindow():
                action.deleteLater()
        self.actions.clear()
        self._delete_detached_menus()
        if self.dock is not None:
            self.iface.removeDockWidget(self.dock)
            self.dock.setParent(None)
            self.dock.deleteLater()
            self.dock = None
        remove_translator(self.translator)
        self.translator = None

    def _delete_detached_menus(self) -> None:
        """QGIS's removePluginMenu detaches our emptied submenu but never deletes it; a reload would
        then leave one more "&GeoFaham" QMenu behind each time."""
        attached = {action.menu() for action in self.iface.pluginMenu().actions()}
        for menu in self.iface.mainWindow().findChildren(QMenu):
            if menu.title() == MENU and not menu.actions() and menu not in attached:
                menu.setParent(None)
                menu.deleteLater()

    # ------------------------------------------------------------------------------ questions
    def _chat_dock(self) -> ChatDock:
        """The chat dock; it exists from initGui() to unload()."""
        if self.dock is None:
            raise RuntimeError("the GeoFaham dock does not exist: initGui() has not run, or unload() has")
        return self.dock

    def _session(self) -> Session:
        """The QGIS session of GeoFaham (started on first use, so loading the plugin stays cheap)."""
        if self.session is None:
            from .session import Session

            dock = self._chat_dock()
            self.session = Session(dock, iface=self.iface)
            dock.cancelRequested.connect(self.session.cancel)
        return self.session

    def export_last_run(self, destination: str | None = None) -> Path | None:
        """Copy the last run (artifacts, answer, run record) into a folder to share; returns the folder."""
        session = self.session
        runs = [r for r in (session.records if session is not None else []) if r is not None]
        if session is None or not runs:
            self._chat_dock().append_error(tr("There is no run to export yet."))
            return None
        if destination is None:
            from qgis.PyQt.QtWidgets import QFileDialog

            destination = QFileDialog.getExistingDirectory(self.iface.mainWindow(), tr("Export the last run to"))
            if not destination:
                return None
        from ..core.export import export_run

        folder = export_run(session.store, runs[-1].run_id, destination)
        self._chat_dock().append_answer(tr("Run exported to {path}").format(path=folder))
        return folder

    def report_last_run(self) -> Path | None:
        """The situation report of the session's last answered run (PDF in the session's reports/ folder,
        the layout in the project's layouts, opened in the Layout Designer); returns the PDF."""
        session = self.session
        runs = [
            r for r in (session.records if session is not None else []) if r and r.status in ("answered", "partial")
        ]
        if session is None or not runs:
            self._chat_dock().append_error(tr("There is no answered run to report yet."))
            return None
        report = session.make_report(runs[-1].run_id)
        if report is None:
            return None
        if hasattr(self.iface, "openLayoutDesigner"):
            self.iface.openLayoutDesigner(report.layout)
        return report.pdf

    def show_settings(self) -> None:
        from ..core.errors import ConfigError
        from .settings import SettingsDialog

        try:
            dialog = SettingsDialog(self.iface.mainWindow())
        except ConfigError as exc:  # the dialog shows the environment's values: one of them does not parse
            self._chat_dock().append_error(str(exc))
            return
        if dialog.exec_() and self.session is not None and not self.session.busy:
            self._close_session()  # the next question starts a session with the new settings
            self._chat_dock().append_answer(tr("Settings saved; the next question uses them."))

    # ------------------------------------------------------------------------------ projects
    ENTRY = ("geofaham", "session")

    def _on_project_saved(self) -> None:
        """Keep the session next to the project: move it there on first save, record it in the project."""
        if self.session is None or self._saving or self.session.busy:
            return
        project = QgsProject.instance()
        folder = f"{project.baseName()}_geofaham"
        self.session.relocate(Path(project.homePath()) / folder)
        self.session.save_transcript()
        if project.readEntry(*self.ENTRY, "")[0] != folder or project.isDirty():
            project.writeEntry(*self.ENTRY, folder)
            self.resave_pending = True
            # save again once QGIS has finished this save (a .qgz is still being zipped now)
            QTimer.singleShot(0, self._resave)

    def _resave(self) -> None:
        self._saving = True
        try:
            QgsProject.instance().write()  # the layers now point into the session folder next to the project
        finally:
            self._saving = False
            self.resave_pending = False

    def _on_project_read(self, *_args: object) -> None:
        project = QgsProject.instance()
        folder = project.readEntry(*self.ENTRY, "")[0]
        if not folder:
            return
        session_dir = Path(project.homePath()) / folder
        dock = self._chat_dock()
        if not (session_dir / "store.sqlite").exists():
            dock.append_error(tr("The GeoFaham session of this project is missing: {path}").format(path=session_dir))
            return
        self._close_session()
        import json

        from .session import Session

        saved = session_dir / Session.TRANSCRIPT
        name = json.loads(saved.read_text(encoding="utf-8")).get("name") if saved.exists() else folder
        self.session = Session(dock, iface=self.iface, session_dir=session_dir, name=name)
        dock.cancelRequested.connect(self.session.cancel)
        self.session.restore()

    def _on_project_cleared(self) -> None:
        if self.session is not None and not self._saving:
            self._close_session()
            dock = self._chat_dock()
            dock.restore([])
            dock.plan_view.clear()
            dock.set_aoi(None)

    def _close_session(self) -> None:
        if self.session is not None:
            with contextlib.suppress(TypeError):
                self._chat_dock().cancelRequested.disconnect(self.session.cancel)
            self.session.close()
            self.session = None

    def _use_layer_as_aoi(self) -> None:
        layer = self.iface.activeLayer()
        if self.dock is not None:
            self.dock.show()
        selected = bool(layer is not None and hasattr(layer, "selectedFeatureCount") and layer.selectedFeatureCount())
        self._session().aoi_from_layer(layer, selected_only=selected)

    def on_question(self, question: str) -> None:
        """Run the question in this QGIS session."""
        from ..core.errors import ConfigError

        try:
            session = self._session()
        except ConfigError as exc:  # a GEOFAHAM_* variable that does not parse: one line naming it
            self._chat_dock().append_error(str(exc))
            return
        if not session.ask(question):
            self._chat_dock().append_error(tr("A question is still running; wait for its answer."))
