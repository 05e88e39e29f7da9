"""The plugin inside PyQGIS (pytest-qgis, offscreen): dock, send, unload, missing dependencies."""

from __future__ import annotations

import sys

import pytest
from qgis.core import Qgis
from qgis.PyQt.QtCore import QSettings
from qgis.PyQt.QtWidgets import QAction, QDockWidget, QMenu, QToolBar


class DockingIface:
    """pytest-qgis's iface, with menus, toolbar icons and docks really added to its main window
    (its own versions of these do nothing), so unload can be checked against the window."""

    def __init__(self, iface):
        self._iface = iface
        self.window = iface.mainWindow()
        self.plugins_menu = self.window.menuBar().addMenu("&Plugins")
        self.toolbar = QToolBar("Plugins Toolbar", self.window)
        self.window.addToolBar(self.toolbar)
        self.submenus: dict[str, QMenu] = {}

    def __getattr__(self, name):
        return getattr(self._iface, name)

    def addPluginToMenu(self, name, action):  # noqa: N802
        if name not in self.submenus:
            self.submenus[name] = self.plugins_menu.addMenu(name)
        self.submenus[name].addAction(action)

    def removePluginMenu(self, name, action):  # noqa: N802
        menu = self.submenus.get(name)
        if menu is None:
            return
        menu.removeAction(action)
        if not menu.actions():
            self.plugins_menu.removeAction(menu.menuAction())
            menu.setParent(None)
            menu.deleteLater()
            del self.submenus[name]

    def addToolBarIcon(self, action):  # noqa: N802
        self.toolbar.addAction(action)

    def removeToolBarIcon(self, action):  # noqa: N802
        self.toolbar.removeAction(action)

    def addDockWidget(self, area, dock):  # noqa: N802
        self.window.addDockWidget(area, dock)

    def removeDockWidget(self, dock):  # noqa: N802
        self.window.removeDockWidget(dock)

    def footprint(self):
        ours = lambda text: "geofaham" in (text or "").lower()  # noqa: E731
        return {
            "docks": [d for d in self.window.findChildren(QDockWidget) if d.objectName() == "GeoFahamDock"],
            "actions": [a for a in self.window.findChildren(QAction) if ours(a.text()) or ours(a.objectName())],
            "menus": [m for m in self.window.findChildren(QMenu) if ours(m.title())],
            "toolbar": [a for a in self.toolbar.actions() if ours(a.text())],
        }


@pytest.fixture()
def iface(qgis_iface):
    wrapped = DockingIface(qgis_iface)
    yield wrapped
    wrapped.window.removeToolBar(wrapped.toolbar)
    wrapped.window.menuBar().clear()


@pytest.fixture()
def plugin(plugin_package, iface):
    plugin = plugin_package.classFactory(iface)
    plugin.initGui()
    yield plugin
    if plugin.dock is not None:
        plugin.unload()


def test_class_factory_builds_the_real_plugin(plugin):
    assert type(plugin).__name__ == "GeoFahamPlugin"


def test_dock_has_transcript_input_and_send(plugin, iface):
    docks = iface.footprint()["docks"]
    assert len(docks) == 1
    dock = docks[0]
    assert dock.windowTitle() == "GeoFaham"
    assert dock.transcript is not None and dock.input is not None
    assert dock.send_button.text() == "Send"
    assert len(iface.footprint()["toolbar"]) == 1
    assert [m.title() for m in iface.footprint()["menus"]] == ["&GeoFaham"]


def test_send_puts_the_question_in_the_transcript_and_emits_it(plugin, qtbot=None):
    dock = plugin.dock
    received = []
    dock.questionSubmitted.disconnect()
    dock.questionSubmitted.connect(received.append)
    dock.input.setPlainText("  Which hospitals lie within 1 km of the Eaton fire perimeter?  ")
    dock.send_button.click()
    assert received == ["Which hospitals lie within 1 km of the Eaton fire perimeter?"]
    assert "You: Which hospitals lie within 1 km" in dock.transcript_text()
    assert dock.input.toPlainText() == ""
    dock.input.setPlainText("   ")
    dock.send_button.click()
    assert len(received) == 1  # blank questions are not sent


def test_unload_leaves_nothing_in_the_main_window(plugin_package, iface):
    plugin = plugin_package.classFactory(iface)
    plugin.initGui()
    before = iface.footprint()
    assert len(before["docks"]) == 1 and before["toolbar"] and before["menus"]
    plugin.unload()
    from qgis.PyQt.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    after = iface.footprint()
    assert after == {"docks": [], "actions": [], "menus": [], "toolbar": []}


def test_missing_dependency_gives_a_readable_message(plugin_package, qgis_iface, monkeypatch):
    monkeypatch.setitem(sys.modules, "osmnx", None)
    plugin = plugin_package.classFactory(qgis_iface)
    assert type(plugin).__name__ == "MissingDependenciesPlugin"
    qgis_iface.messageBar().clear_messages()
    plugin.initGui()
    (message,) = qgis_iface.messageBar().get_messages(Qgis.Critical)
    assert "osmnx" in message
    # a pure-Python package: pip, never taking a wheel that bundles GEOS/GDAL for what it pulls in
    assert (
        '-m pip install --user --break-system-packages --no-binary shapely,pyproj,rasterio,pyogrio,fiona "osmnx>=2.0"'
        in message
    )
    assert "make setup" in message
    assert "Traceback" not in message
    plugin.unload()


def test_missing_dependency_message_is_translated(plugin_package, qgis_iface, monkeypatch, built_translations):
    i18n = sys.modules["geofaham.geofaham_plugin.ui.i18n"]
    monkeypatch.setattr(i18n, "I18N_DIR", built_translations)
    settings = QSettings()
    old = settings.value("locale/userLocale", "")
    settings.setValue("locale/userLocale", "fr_FR")
    monkeypatch.setitem(sys.modules, "rasterio", None)
    try:
        plugin = plugin_package.classFactory(qgis_iface)
        qgis_iface.messageBar().clear_messages()
        plugin.initGui()
        (message,) = qgis_iface.messageBar().get_messages(Qgis.Critical)
        assert "GeoFaham ne peut pas démarrer car ces paquets Python sont absents : rasterio." in message
        # rasterio links GDAL: the system's package (the wheel's own GDAL clashes with QGIS's)
        assert "sudo apt install python3-rasterio" in message and "conda-forge rasterio" in message
        assert "-m pip install --user rasterio" not in message
        plugin.unload()
    finally:
        settings.setValue("locale/userLocale", old)


def test_a_bad_geofaham_variable_is_one_line_in_the_dock_not_a_crash(plugin, monkeypatch):
    monkeypatch.setenv("GEOFAHAM_OFFLINE", "perhaps")
    plugin.on_question("Which hospitals are within 5 km of the Eaton fire perimeter?")
    plugin.show_settings()
    text = plugin.dock.transcript_text()
    assert (
        text.count("GEOFAHAM_OFFLINE='perhaps' is not a yes/no value; hint: use 1/true/yes/on or 0/false/no/off") == 2
    )
    assert plugin.session is None
