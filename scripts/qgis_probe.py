"""Runs inside the real QGIS application (``qgis --code``), started by scripts/run_qgis.sh.

Once the main window is up it checks, from inside QGIS, that the GeoFaham plugin loaded and its dock
exists, saves a screenshot if asked ($GEOFAHAM_SCREENSHOT), and if asked ($GEOFAHAM_PROBE_REPORT)
reloads the plugin the way Plugin Reloader does, unloads it, counts what GeoFaham left in the main
window after each step, writes the report as JSON, and closes QGIS cleanly.
"""

import json
import os
import time
import traceback

import qgis.utils
from qgis.core import Qgis, QgsProject
from qgis.PyQt.QtCore import QCoreApplication, QEvent, QTimer
from qgis.PyQt.QtWidgets import QAction, QDockWidget, QMenu
from qgis.utils import iface

PLUGIN = "geofaham"
DOCK = "GeoFahamDock"
SCREENSHOT = os.environ.get("GEOFAHAM_SCREENSHOT", "")
REPORT = os.environ.get("GEOFAHAM_PROBE_REPORT", "")
QUESTION = os.environ.get("GEOFAHAM_PROBE_QUESTION", "")
QUESTION_TIMEOUT_MS = 240_000
_KEEP = []


def _flush():
    for _ in range(3):
        QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
        QCoreApplication.processEvents()


def _is_ours(text):
    return "geofaham" in (text or "").lower()


def footprint():
    """Everything of GeoFaham's that is reachable from the main window."""
    win = iface.mainWindow()
    docks = [d for d in win.findChildren(QDockWidget) if d.objectName() == DOCK]
    actions = [a for a in win.findChildren(QAction) if _is_ours(a.objectName()) or _is_ours(a.text())]
    menus = [m for m in win.findChildren(QMenu) if _is_ours(m.title())]
    plugin_menu = [a.text() for a in iface.pluginMenu().actions() if _is_ours(a.text())]
    toolbar = [a.text() for a in iface.pluginToolBar().actions() if _is_ours(a.text())]
    return {
        "docks": len(docks),
        "docks_visible": sum(1 for d in docks if d.isVisible()),
        "dock_titles": [d.windowTitle() for d in docks],
        "actions": sorted({a.objectName() or a.text() for a in actions}),
        "menus": len(menus),
        "plugin_menu_entries": plugin_menu,
        "toolbar_actions": toolbar,
    }


def close_qgis():
    QgsProject.instance().clear()
    QgsProject.instance().setDirty(False)
    iface.actionExit().trigger()


def ask_question(report, then):
    """Type the question into the dock, press Send, wait for the answer without blocking QGIS."""
    from qgis.core import QgsProject
    from qgis.PyQt.QtCore import QElapsedTimer

    win = iface.mainWindow()
    dock = win.findChild(QDockWidget, DOCK)
    dock.input.setPlainText(QUESTION)
    dock.send_button.click()
    outcomes = []
    session = getattr(qgis.utils.plugins.get(PLUGIN), "session", None)
    session.runFinished.connect(outcomes.append)
    clock = QElapsedTimer()
    clock.start()
    poll = QTimer()

    def check():
        if not outcomes and clock.elapsed() < QUESTION_TIMEOUT_MS:
            return
        poll.stop()
        record = outcomes[0] if outcomes else None
        root = QgsProject.instance().layerTreeRoot()
        # the map context's group aside (its layers carry GeoFaham's "geofaham/context" property; it may be empty yet)
        runs = [
            g
            for g in root.findGroups()
            if not g.name().startswith("GeoFaham context")
            and not any(node.layer().customProperty("geofaham/context") for node in g.findLayers())
        ]
        report["question"] = {
            "status": record.status if record else ("crashed" if outcomes else "timeout"),
            "seconds": clock.elapsed() / 1000,
            "transcript": dock.transcript_text(),
            "groups": [g.name() for g in root.findGroups()],
            # the run's layers (the map context's group aside: its layers under "context_layers")
            "layers": [[node.layer().name(), node.layer().featureCount()] for g in runs for node in g.findLayers()],
            "visible": [node.layer().name() for g in runs for node in g.findLayers() if node.isVisible()],
            "context_layers": [
                node.layer().name() for g in root.findGroups() if g not in runs for node in g.findLayers()
            ],
            "canvas": {
                "extent": iface.mapCanvas().extent().toString(),
                "crs": iface.mapCanvas().mapSettings().destinationCrs().authid(),
                "layers": [layer.name() for layer in iface.mapCanvas().layers()],
                "operations": {
                    f"{a} -> {b}": op
                    for (a, b), op in QgsProject.instance().transformContext().coordinateOperations().items()
                },
            },
        }
        then()

    poll.timeout.connect(check)
    poll.start(100)
    _KEEP.append(poll)  # keep the timer alive until the answer arrives


def run():
    report = {"qgis_version": Qgis.version(), "errors": []}
    if not QUESTION:
        _finish(report)
        return
    try:
        ask_question(report, lambda: _finish(report))
    except Exception:  # noqa: BLE001 (the report must carry whatever happened)
        report["errors"].append(traceback.format_exc())
        _finish(report)


def _wait_for_the_canvas(seconds=20.0):
    """Let the map canvas finish drawing (its layers render in parallel jobs): a grab taken sooner shows the
    layers drawn first (the answer on top) without the ones under it (the hazard, the context)."""
    canvas = iface.mapCanvas()
    deadline = time.monotonic() + seconds
    canvas.refresh()
    QCoreApplication.processEvents()
    while time.monotonic() < deadline and (canvas.isDrawing() or not canvas.layers()):
        QCoreApplication.processEvents()
        time.sleep(0.05)


def _finish(report):
    try:
        report["plugin_loaded"] = PLUGIN in qgis.utils.plugins
        report["plugin_active"] = PLUGIN in qgis.utils.active_plugins
        report["plugin_class"] = type(qgis.utils.plugins.get(PLUGIN)).__name__
        report["message_bar"] = [item.text() for item in iface.messageBar().items()]
        _flush()
        report["loaded"] = footprint()
        if SCREENSHOT:
            win = iface.mainWindow()
            win.resize(1600, 1000)
            win.showMaximized()
            for _ in range(5):
                QCoreApplication.processEvents()
            _wait_for_the_canvas()
            report["screenshot"] = SCREENSHOT
            report["screenshot_saved"] = bool(iface.mainWindow().grab().save(SCREENSHOT))
        if REPORT:
            qgis.utils.reloadPlugin(PLUGIN)  # what Plugin Reloader does
            _flush()
            report["reloaded"] = footprint()
            report["reloaded_active"] = PLUGIN in qgis.utils.active_plugins
            report["unload_ok"] = bool(qgis.utils.unloadPlugin(PLUGIN))
            _flush()
            report["unloaded"] = footprint()
    except Exception:  # noqa: BLE001 (the report must carry whatever happened)
        report["errors"].append(traceback.format_exc())
    if REPORT:
        with open(REPORT, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2)
    QTimer.singleShot(200, close_qgis)


def _guarded_run():
    try:
        run()
    except BaseException:  # noqa: BLE001 (never leave a modal error dialog behind: QGIS would hang)
        traceback.print_exc()
        QTimer.singleShot(200, close_qgis)


QTimer.singleShot(int(os.environ.get("GEOFAHAM_PROBE_DELAY_MS", "2500")), _guarded_run)
