"""A question asked in the dock runs on a worker thread; artifacts arrive as layers in the session's
group on the main thread; the answer lands in the transcript; the main thread stays responsive."""

from __future__ import annotations

import time

import pytest
from qgis.core import QgsProject
from qgis.PyQt.QtCore import QCoreApplication, QElapsedTimer, QEvent, QTimer

from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.ui.dock import ChatDock
from geofaham_plugin.ui.layers import GROUP_PREFIX
from geofaham_plugin.ui.session import Session


def wait_for(predicate, timeout=120.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        QCoreApplication.processEvents()
        time.sleep(0.002)


@pytest.fixture()
def session(qgis_iface, tmp_path):
    dock = ChatDock(qgis_iface.mainWindow())
    model = ScriptedModel({})  # the Eaton question needs no model call in guided mode
    s = Session(dock, session_dir=tmp_path / "session", llm_factory=lambda: LLM(model), name="test session")
    dock.questionSubmitted.connect(s.ask)
    dock.cancelRequested.connect(s.cancel)
    yield s
    s.close()
    QgsProject.instance().clear()
    dock.setParent(None)
    dock.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)


def test_question_in_the_dock_runs_and_fills_the_layer_group(session):
    finished = []
    session.runFinished.connect(finished.append)
    gaps = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]

    def tick():
        now = clock.elapsed()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(5)
    dock = session.dock
    dock.input.setPlainText("Which hospitals are within 5 km of the Eaton fire perimeter?")
    dock.send_button.click()
    assert not dock.send_button.isEnabled() and dock.cancel_button.isEnabled()
    wait_for(lambda: finished)
    timer.stop()
    record = finished[0]
    assert record.status == "answered"
    text = dock.transcript_text()
    assert "7 healthcare features within 5,000 m" in text and "AURORA LAS ENCINAS HOSPITAL" in text
    assert dock.send_button.isEnabled() and not dock.cancel_button.isEnabled()
    group = QgsProject.instance().layerTreeRoot().findGroup(GROUP_PREFIX + "test session")
    assert group is not None
    layers = [node.layer() for node in group.findLayers()]
    # one layer per map artifact, in run order, each telling what it is and which artifact it holds
    assert [l.customProperty("geofaham/artifact_id") for l in layers] == [s.artifact_id for s in record.steps]
    assert [l.featureCount() for l in layers][0::2] == [1, 7]
    assert all(l.isValid() for l in layers) and "HIFLD hospitals" in layers[1].name()
    # the main thread kept ticking while the engines worked
    print(f"longest main-thread gap: {max(gaps)} ms over {len(gaps)} ticks")
    assert max(gaps) < 100


def test_cancel_stops_the_run_between_steps(session):
    finished = []
    session.runFinished.connect(finished.append)
    session.dock.input.setPlainText("Which hospitals are within 5 km of the Eaton fire perimeter?")
    session.dock.send_button.click()
    session.dock.cancel_button.click()
    wait_for(lambda: finished)
    assert finished[0].status == "cancelled"
    assert "Cancelled" in session.dock.transcript_text()
