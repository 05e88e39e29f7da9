"""A question asked in the dock runs on a worker thread; artifacts arrive as layers in the session's
group on the main thread; the answer lands in the transcript; the main thread stays responsive."""

from __future__ import annotations

import time
import typing

import pytest
from qgis.core import QgsProject
from qgis.PyQt.QtCore import QCoreApplication, QEvent, Qt, QTimer

from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.events import ArtifactEvent, RunEventPayload
from geofaham_plugin.core.planning.plan import PlanStep
from geofaham_plugin.ui.dock import ChatDock
from geofaham_plugin.ui.layers import GROUP_PREFIX
from geofaham_plugin.ui.session import Session

EATON_HOSPITALS = "Which hospitals are within 5 km of the Eaton fire perimeter?"
RunEventPayloadTypes = typing.get_args(typing.get_args(RunEventPayload)[0])


def wait_for(predicate, timeout=120.0, pause=0.002):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        QCoreApplication.processEvents()
        time.sleep(pause)


def close_session(session) -> None:
    """A test's session and dock gone: the session closed, the project cleared, the dock deleted now."""
    session.close()
    QgsProject.instance().clear()
    session.dock.setParent(None)
    session.dock.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)


@pytest.fixture()
def session(qgis_iface, tmp_path):
    dock = ChatDock(qgis_iface.mainWindow())
    model = ScriptedModel({})  # the Eaton question needs no model call in guided mode
    s = Session(dock, session_dir=tmp_path / "session", llm_factory=lambda: LLM(model), name="test session")
    dock.questionSubmitted.connect(s.ask)
    dock.cancelRequested.connect(s.cancel)
    yield s
    close_session(s)


def test_question_in_the_dock_runs_and_fills_the_layer_group(session, monkeypatch):
    import threading

    from geofaham_plugin.core.agents.base import Tool

    tool_threads = []
    run_tool = Tool.run

    def spy(self, *args, **kwargs):
        tool_threads.append(threading.get_ident())
        return run_tool(self, *args, **kwargs)

    monkeypatch.setattr(Tool, "run", spy)
    finished = []
    session.runFinished.connect(finished.append)
    gaps = []
    last = [time.monotonic()]

    def tick():
        now = time.monotonic()
        gaps.append((last[0], now))
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(5)
    dock = session.dock
    shown, events = [], []
    show_plan = dock.show_plan
    dock.show_plan = lambda steps: (shown.append(list(steps)), show_plan(steps))
    session.runEvent.connect(events.append)
    dock.input.setPlainText("Which hospitals are within 5 km of the Eaton fire perimeter?")
    dock.send_button.click()
    assert not dock.send_button.isEnabled() and dock.cancel_button.isEnabled()
    wait_for(lambda: finished)
    timer.stop()
    record = finished[0]
    assert record.status == "answered"
    text = dock.transcript_text()
    assert "7 healthcare features within 5,000 m" in text and "AURORA LAS ENCINAS HOSPITAL" in text
    # under the answer, what it states: a compact table of the stated values, the same as the record's
    assert record.structured is not None and record.structured.values[0].value == 7
    structured, constraints = dock.entries()[-2:]
    assert "geofaham-structured" in structured and "Stated value" in structured
    # and each part of the question with the step that applied it
    assert "geofaham-constraints" in constraints and "Parts of the question" in constraints
    assert "✓ the distance of 5,000 m — applied by step 2 (get_features), step 3 (within_distance)" in constraints
    assert "✓ features of class healthcare — applied by step 2 (get_features)" in constraints
    assert "<td>healthcare features within 5,000 m</td><td align='right'>7</td>" in structured
    assert dock.send_button.isEnabled() and not dock.cancel_button.isEnabled()
    group = QgsProject.instance().layerTreeRoot().findGroup(GROUP_PREFIX + "test session")
    assert group is not None
    nodes = group.findLayers()
    layers = [node.layer() for node in nodes]
    # one layer per map artifact, each telling what it is and which artifact it holds: the answer on top and
    # visible, the others in run order under it, hidden
    steps = [s.artifact_id for s in record.steps]
    assert [layer.customProperty("geofaham/artifact_id") for layer in layers] == steps[-1:] + steps[:-1]
    assert [layer.featureCount() for layer in layers][:2] == [7, 1]
    assert [node.isVisible() for node in nodes] == [True, False, False]
    assert all(layer.isValid() for layer in layers) and "HIFLD hospitals" in layers[2].name()
    # every engine ran on the run's thread, never on the main thread, and the main thread kept ticking meanwhile:
    # apart from creating layers (one per artifact, as each arrives), nine gaps in ten between 5 ms ticks stayed under
    # 50 ms and none reached 150 ms (the machine's load may delay a tick; an engine step on the main thread would
    # stop them for the step's whole run)
    assert tool_threads and threading.main_thread().ident not in tool_threads
    layer_work = session.main_thread_work
    assert len(layer_work) == 3
    other = [(b - a) * 1000 for a, b in gaps if not any(a <= end and b >= start for start, end in layer_work)]
    print(
        f"longest main-thread gap outside layer creation: {max(other):.1f} ms over {len(other)} ticks; "
        f"with layer creation: {max((b - a) * 1000 for a, b in gaps):.1f} ms"
    )
    assert len(other) > 10 and sorted(other)[len(other) * 9 // 10] < 50 and max(other) < 150
    # typed events crossed the thread and reached the dock: the plan as PlanSteps, the steps' outcomes
    assert [e.type for e in events][:2] == ["ledger", "plan"] and events[-1].type == "answer"
    assert all(isinstance(e.payload, RunEventPayloadTypes) for e in events)
    (steps,) = shown
    assert all(isinstance(s, PlanStep) for s in steps) and [s.tool for s in steps] == [s.tool for s in record.steps]
    assert [e.payload.artifact.id for e in events if isinstance(e.payload, ArtifactEvent)] == [
        s.artifact_id for s in record.steps
    ]
    rows = [dock.plan_view.topLevelItem(i) for i in range(dock.plan_view.topLevelItemCount())]
    assert [(r.text(0), r.text(1), r.text(2), r.text(3)) for r in rows] == [
        (str(s.step_id), f"{s.agent.value}.{s.tool}", "done", s.artifact_id) for s in record.steps
    ]
    assert rows[0].toolTip(1) == steps[0].goal


def test_the_dock_shows_a_partial_answers_values_as_not_the_answer(qgis_iface):
    from geofaham_plugin.core.orchestrator.answer import StatedValue, StructuredAnswer

    dock = ChatDock(qgis_iface.mainWindow())
    try:
        value = StatedValue(label="buildings (destroyed) in total", value=2722, artifact_id="a_0000beef")
        dock.append_structured(
            StructuredAnswer(status="partial", values=[value], not_applied=["the relation 'outside' (\"outside\")"])
        )
        partial = dock.entries()[-1]
        text = dock.transcript_text()
        assert "Not the answer to the question." in text and "the relation 'outside'" in text
        assert "color:#b00020" in partial and "<tr style='color:#777777'>" in partial and ">2,722<" in partial
        assert text.index("Not the answer") < text.index("2,722")  # the warning before the number
        dock.append_structured(StructuredAnswer(status="answered", values=[value], yes_no=True))
        answered = dock.entries()[-1]
        assert "Answer: yes" in answered and "Not the answer" not in answered and "color:#777777" not in answered
        dock.append_structured(StructuredAnswer(status="answered", yes_no=False))
        assert "Answer: no" in dock.entries()[-1] and "<table" not in dock.entries()[-1]
    finally:
        dock.setParent(None)
        dock.deleteLater()


def test_cancel_stops_the_run_between_steps(session):
    finished = []
    session.runFinished.connect(finished.append)
    session.dock.input.setPlainText("Which hospitals are within 5 km of the Eaton fire perimeter?")
    session.dock.send_button.click()
    session.dock.cancel_button.click()
    wait_for(lambda: finished)
    assert finished[0].status == "cancelled"
    assert "Cancelled" in session.dock.transcript_text()
    # what it computed is kept: the transcript offers to go on with it
    assert f"geofaham-resume:{finished[0].run_id}" in "".join(session.dock.entries())


def polygon_layer(wkts, crs="EPSG:3857"):
    from qgis.core import QgsFeature, QgsGeometry, QgsVectorLayer

    layer = QgsVectorLayer(f"Polygon?crs={crs}", "areas", "memory")
    features = []
    for wkt in wkts:
        f = QgsFeature()
        f.setGeometry(QgsGeometry.fromWkt(wkt))
        features.append(f)
    layer.dataProvider().addFeatures(features)
    layer.updateExtents()
    return layer


# Altadena in EPSG:3857 (a square) and a self-intersecting "bow-tie" next to it
ALTADENA = "POLYGON((-13155000 4053000, -13149000 4053000, -13149000 4059000, -13155000 4059000, -13155000 4053000))"
BOWTIE = "POLYGON((-13149000 4053000, -13147000 4055000, -13147000 4053000, -13149000 4055000, -13149000 4053000))"


def test_aoi_from_the_selection_is_repaired_and_used_by_the_next_question(session):
    layer = polygon_layer([ALTADENA, BOWTIE])
    layer.selectAll()
    assert session.aoi_from_layer(layer, selected_only=True)
    record = session.store.get(session.aoi_id)
    assert record.kind.value == "aoi" and record.extra["repaired_geometries"] == 1
    assert record.metadata.crs == "EPSG:3857" and record.metadata.feature_count == 1
    # measured geodesically, not in Web Mercator's inflated metres: compare with an equal-area projection
    import geopandas as gpd
    import shapely

    parts = gpd.GeoSeries([shapely.from_wkt(ALTADENA), shapely.make_valid(shapely.from_wkt(BOWTIE))], crs=3857)
    equal_area = parts.union_all()
    expected = gpd.GeoSeries([equal_area], crs=3857).to_crs("+proj=laea +lat_0=34.2 +lon_0=-118.15").area.iloc[0]
    assert abs(record.metadata.total_area_m2 - expected) / expected < 0.002
    assert record.metadata.total_area_m2 < 0.75 * equal_area.area  # Web Mercator overstates it by ~45% here
    assert session.aoi_id in session.dock.aoi_label.text()
    finished = []
    session.runFinished.connect(finished.append)
    session.dock.input.setPlainText("Which hospitals are within 5 km of this area?")
    session.dock.send_button.click()
    wait_for(lambda: finished)
    record = finished[0]
    assert record.status == "answered" and record.aoi_artifact_id == session.aoi_id
    assert record.steps[0].inputs == {"aoi": session.aoi_id}
    session.clear_aoi()
    assert session.aoi_id is None and "disaster's own area" in session.dock.aoi_label.text()


def test_bad_aoi_inputs_give_messages_not_tracebacks(session):
    layer = polygon_layer([ALTADENA])
    assert not session.aoi_from_layer(layer, selected_only=True)  # nothing selected
    assert "No features are selected" in session.dock.transcript_text()
    from qgis.core import QgsFeature, QgsGeometry, QgsPointXY, QgsVectorLayer

    points = QgsVectorLayer("Point?crs=EPSG:4326", "pts", "memory")
    f = QgsFeature()
    f.setGeometry(QgsGeometry.fromPointXY(QgsPointXY(-118.1, 34.2)))
    points.dataProvider().addFeatures([f])
    assert not session.aoi_from_layer(points, selected_only=False)
    assert "must be a polygon" in session.dock.transcript_text() and "Traceback" not in session.dock.transcript_text()
    assert session.aoi_id is None


def test_digitised_polygon_becomes_the_aoi(session, qgis_iface):
    from qgis.core import QgsCoordinateReferenceSystem, QgsPointXY

    from geofaham_plugin.ui.aoi import PolygonTool

    canvas = qgis_iface.mapCanvas()
    canvas.setDestinationCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
    tool = PolygonTool(canvas)
    got = []
    tool.polygonFinished.connect(
        lambda g: got.append(session.aoi_from_geometry(g, canvas.mapSettings().destinationCrs()))
    )
    for x, y in ((-118.17, 34.17), (-118.11, 34.17), (-118.11, 34.21)):
        tool.add_point(QgsPointXY(x, y))
    tool.finish()
    assert got == [True]
    record = session.store.get(session.aoi_id)
    assert record.source == "user.aoi:digitised" and record.metadata.crs == "EPSG:4326"
    assert tool.points == []  # the rubber band is reset


def test_drawing_says_how_and_gives_the_previous_map_tool_back(session, qgis_iface):
    """Draw: the dock says how to draw; finishing (or Esc) gives back the map tool the user had (pan), so the map
    is not left without a tool."""
    from qgis.core import QgsCoordinateReferenceSystem, QgsPointXY
    from qgis.gui import QgsMapToolPan
    from qgis.PyQt.QtGui import QKeyEvent

    from geofaham_plugin.ui.aoi import PolygonTool

    session.iface = qgis_iface
    canvas = qgis_iface.mapCanvas()
    canvas.setDestinationCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
    pan = QgsMapToolPan(canvas)
    canvas.setMapTool(pan)
    session.start_drawing()
    tool = canvas.mapTool()
    assert isinstance(tool, PolygonTool) and "right-click or double-click to finish" in session.dock.status.text()
    for x, y in ((-118.17, 34.17), (-118.11, 34.17), (-118.11, 34.21)):
        tool.add_point(QgsPointXY(x, y))
    tool.finish()
    assert session.aoi_id and canvas.mapTool() is pan
    aoi = session.aoi_id
    session.start_drawing()
    tool = canvas.mapTool()
    tool.add_point(QgsPointXY(-118.0, 34.0))
    tool.keyPressEvent(QKeyEvent(QEvent.KeyPress, Qt.Key_Escape, Qt.NoModifier))
    assert canvas.mapTool() is pan and session.aoi_id == aoi and "cancelled" in session.dock.status.text()


def test_the_status_line_counts_the_seconds_while_a_run_works(qgis_iface):
    """A model call may take a minute: the status line counts the seconds meanwhile (it looked frozen), and stops
    when the run ends."""
    dock = ChatDock(qgis_iface.mainWindow())
    dock.set_busy(True, "Reading the question")
    wait_for(lambda: dock.status.text().endswith("· 2 s"), timeout=10)
    assert dock.status.text() == "Reading the question · 2 s"
    dock.status.setText("Step 1: load the damage layer")  # a step's event sets the line: the count goes on
    wait_for(lambda: dock.status.text().startswith("Step 1") and dock.status.text().endswith(" s"), timeout=10)
    dock.set_busy(False, "")
    QCoreApplication.processEvents()
    time.sleep(1.2)
    QCoreApplication.processEvents()
    assert dock.status.text() == ""


def test_the_report_button_shows_qgis_icon_not_an_emoji(qgis_iface):
    from qgis.PyQt.QtCore import QUrl
    from qgis.PyQt.QtGui import QTextDocument

    from geofaham_plugin.ui.dock import REPORT_ICON

    dock = ChatDock(qgis_iface.mainWindow())
    dock.append_report_button("r_0123456789ab")
    entry = dock.entries()[-1]
    assert f"<img src='{REPORT_ICON}'" in entry and "\U0001f4c4" not in entry
    icon = dock.transcript.document().resource(QTextDocument.ImageResource, QUrl(REPORT_ICON))
    assert icon is not None and not icon.isNull() and icon.width() == 16


def test_use_as_aoi_action_on_a_layer(plugin_package, qgis_iface, tmp_path, monkeypatch):
    monkeypatch.setenv("GEOFAHAM_SESSIONS", str(tmp_path / "sessions"))
    plugin = plugin_package.classFactory(qgis_iface)
    plugin.initGui()
    try:
        layer = polygon_layer([ALTADENA])
        QgsProject.instance().addMapLayer(layer)
        qgis_iface.setActiveLayer(layer)
        qgis_iface.activeLayer = lambda: layer
        plugin.use_as_aoi.trigger()
        session = plugin.session
        assert session.aoi_id and session.store.get(session.aoi_id).source == "user.aoi:layer"
        assert "areas" in plugin.dock.aoi_label.text()
    finally:
        plugin.unload()
        QgsProject.instance().clear()


def test_project_save_clear_reopen_restores_the_session_and_follow_ups_work(
    plugin_package, qgis_iface, tmp_path, monkeypatch
):
    monkeypatch.setenv("GEOFAHAM_SESSIONS", str(tmp_path / "sessions"))
    plugin = plugin_package.classFactory(qgis_iface)
    plugin.initGui()
    project = QgsProject.instance()
    try:
        finished = []
        plugin.on_question("How many buildings were damaged in the Eaton fire?")
        plugin.session.runFinished.connect(finished.append)
        wait_for(lambda: finished)
        assert "3,051 in total" in plugin.dock.transcript_text()
        first_dir = plugin.session.store.session_dir
        assert first_dir.is_relative_to(tmp_path / "sessions")

        path = tmp_path / "work" / "eaton.qgz"
        path.parent.mkdir()
        assert project.write(str(path))
        wait_for(lambda: not plugin.resave_pending)
        session_dir = tmp_path / "work" / "eaton_geofaham"
        assert plugin.session.store.session_dir == session_dir.resolve() and not first_dir.exists()
        assert project.readEntry("geofaham", "session", "")[0] == "eaton_geofaham"
        assert all(layer.isValid() and "eaton_geofaham" in layer.source() for layer in plugin.session.layers)

        project.clear()
        assert plugin.session is None and plugin.dock.transcript_text() == ""

        assert project.read(str(path))
        session = plugin.session
        assert session is not None and session.store.session_dir == session_dir.resolve()
        assert "3,051 in total" in plugin.dock.transcript_text()
        group = project.layerTreeRoot().findGroup(GROUP_PREFIX + session.name)
        layers = [node.layer() for node in group.findLayers()]
        assert len(layers) == 2 and all(layer.isValid() for layer in layers)  # the table artifact is not a map layer
        assert len(session.records) == 1

        finished.clear()
        session.runFinished.connect(finished.append)
        plugin.on_question("Now only the destroyed ones")
        wait_for(lambda: finished)
        record = finished[0]
        assert record.status == "answered" and record.follow_up_of == session.records[0].run_id
        assert "2,722 in total" in record.answer and record.steps[0].reused
        exported = plugin.export_last_run(str(tmp_path / "share"))
        assert (exported / "answer.md").read_text().count("2,722") == 1
        assert "Run exported to" in plugin.dock.transcript_text()
    finally:
        plugin.unload()
        project.clear()


def test_raster_artifacts_get_a_legend(tmp_path):
    import numpy as np
    import rasterio
    from qgis.core import QgsPalettedRasterRenderer, QgsSingleBandPseudoColorRenderer
    from rasterio.transform import from_origin

    from geofaham_plugin.core.store.store import ResponseStore
    from geofaham_plugin.ui.layers import layer_for_artifact

    store = ResponseStore(tmp_path / "s")

    def write(name, data, dtype):
        path = tmp_path / f"{name}.tif"
        with rasterio.open(
            path,
            "w",
            driver="GTiff",
            width=8,
            height=8,
            count=1,
            dtype=dtype,
            crs="EPSG:32611",
            transform=from_origin(400000, 3780000, 20, 20),
        ) as dst:
            dst.write(data.astype(dtype), 1)
        return path

    severity = store.register_raster_file(
        write("sev", np.arange(64).reshape(8, 8) % 5, "uint8"),
        source="raster.burn_severity",
        summary="burn severity",
        extra={"classes": {"0": "unburned", "1": "low", "2": "moderate-low", "3": "moderate-high", "4": "high"}},
    )
    dnbr = store.register_raster_file(
        write("dnbr", np.linspace(-0.2, 0.9, 64).reshape(8, 8), "float32"),
        source="raster.dnbr",
        summary="dNBR",
        extra={"stats": {"min": -0.2, "max": 0.9}},
    )
    layer = layer_for_artifact(severity, store)
    assert isinstance(layer.renderer(), QgsPalettedRasterRenderer)
    assert [c.label for c in layer.renderer().classes()] == ["unburned", "low", "moderate-low", "moderate-high", "high"]
    assert layer.renderer().classes()[-1].color.name() == "#a50026"
    layer = layer_for_artifact(dnbr, store)
    assert isinstance(layer.renderer(), QgsSingleBandPseudoColorRenderer)
    assert layer.renderer().legendSymbologyItems()  # a colour ramp legend
    store.close()


def test_an_interrupted_run_is_offered_in_the_dock_and_resumed_by_its_link(qgis_iface, tmp_path):
    """A run cut off mid-way (its process killed with -9, as when QGIS dies) gets a Resume link when the
    session is opened; the link finishes that same run; a finished run's link is one line, not a second run."""
    from qgis.PyQt.QtCore import QUrl
    from test_adversarial_lifecycle import QUESTION, kill_mid_run

    from geofaham_plugin.ui.dock import RESUME_SCHEME

    folder = tmp_path / "session"
    run_id = kill_mid_run(folder)
    dock = ChatDock(qgis_iface.mainWindow())
    s = Session(dock, session_dir=folder, llm_factory=lambda: LLM(ScriptedModel({})), name="resumed")
    try:
        s.restore()
        link = f"{RESUME_SCHEME}:{run_id}"
        assert sum(link in entry for entry in dock.entries()) == 1
        assert "interrupted" in dock.transcript_text() and QUESTION in dock.transcript_text()
        s.restore()  # opened again: still one link
        assert sum(link in entry for entry in dock.entries()) == 1

        finished = []
        s.runFinished.connect(finished.append)
        dock._on_link(QUrl(link))  # the user clicks "Resume"
        wait_for(lambda: finished)
        (record,) = finished
        assert record.run_id == run_id and record.status == "answered", record.error
        assert any(n.startswith("resumed at") for n in record.notes)
        assert "3,051 in total" in dock.transcript_text()
        assert s.offer_resumes() == []  # nothing left to resume

        dock._on_link(QUrl(link))  # clicked again: one line, no run
        assert not s.busy and "already ended (answered)" in dock.transcript_text()
        assert len(finished) == 1
    finally:
        close_session(s)


def test_a_closed_session_disconnects_everything_and_never_answers(qgis_iface, tmp_path):
    """A reopened project gets a new session on the same dock: the old one, closed, must have let go of every
    signal it connected (the report link printed "Cannot operate on a closed database" from the closed one)."""
    from qgis.PyQt.QtCore import QUrl

    from geofaham_plugin.ui.dock import REPORT_SCHEME

    dock = ChatDock(qgis_iface.mainWindow())
    root = QgsProject.instance().layerTreeRoot()
    signals = [
        dock.artifactActivated,
        dock.transcriptChanged,
        dock.reportRequested,
        dock.resumeRequested,
        dock.layerChoiceChanged,
    ]
    tree = [root.addedChildren, root.removedChildren, root.visibilityChanged, root.nameChanged]
    before = [dock.receivers(s) for s in signals] + [root.receivers(s) for s in tree]
    folder = tmp_path / "session"
    old = Session(dock, session_dir=folder, llm_factory=lambda: LLM(ScriptedModel({})), name="reopened")
    finished = []
    old.runFinished.connect(finished.append)
    assert old.ask("How many buildings were damaged in the Eaton fire?")
    wait_for(lambda: finished)
    run_id = finished[0].run_id
    old.close()
    assert [dock.receivers(s) for s in signals] + [root.receivers(s) for s in tree] == before
    new = Session(dock, session_dir=folder, llm_factory=lambda: LLM(ScriptedModel({})), name="reopened")
    try:
        new.restore()
        dock._on_link(QUrl(f"{REPORT_SCHEME}:{run_id}"))  # the user clicks the report link of the reopened run
        text = dock.transcript_text()
        assert text.count("Situation report written") == 1, text
        assert "closed database" not in text and "Problem" not in text
        # nothing reaches the closed one: no question, no report, no transcript written over the reopened one's
        assert not old.ask("How many buildings were destroyed in the Eaton fire?") and not old.busy
        assert old.make_report(run_id) is None and not old.resume(run_id)
        saved = (folder / Session.TRANSCRIPT).read_text(encoding="utf-8")
        dock.restore([])
        old.save_transcript()
        assert "3,051 in total" in saved and (folder / Session.TRANSCRIPT).read_text(encoding="utf-8") == saved
    finally:
        close_session(new)


def test_a_reopened_project_asks_nothing_and_brings_back_its_context_and_plan(
    plugin_package, qgis_iface, tmp_path, monkeypatch
):
    """The Eaton perimeter (EPSG:26911) in an EPSG:4326 project: nine ways from one to the other, and QGIS asked
    which with a modal dialog when the layer was added and each time the project was opened. The project now
    keeps the operation. The towns (a memory layer: no feature is saved) and the plan view come back too."""
    from qgis.core import QgsCoordinateReferenceSystem
    from qgis.PyQt.QtWidgets import QApplication

    from geofaham_plugin.ui.context import KIND_PROPERTY

    monkeypatch.setenv("GEOFAHAM_SESSIONS", str(tmp_path / "sessions"))
    plugin = plugin_package.classFactory(qgis_iface)
    plugin.initGui()
    project = QgsProject.instance()
    wgs84, utm = QgsCoordinateReferenceSystem("EPSG:4326"), QgsCoordinateReferenceSystem("EPSG:26911")
    modal = []
    watchdog = QTimer()
    watchdog.timeout.connect(
        lambda: QApplication.activeModalWidget() and modal.append(QApplication.activeModalWidget())
    )
    watchdog.start(20)

    def context_of(kind):
        return [lyr for lyr in project.mapLayers().values() if lyr.customProperty(KIND_PROPERTY) == kind]

    try:
        project.setCrs(wgs84)
        finished = []
        plugin.on_question("How many buildings were damaged in the Eaton fire?")
        plugin.session.runFinished.connect(finished.append)
        wait_for(lambda: finished)
        wait_for(lambda: all(load.done for load in plugin.session.context_loads))
        assert [lyr.crs() for lyr in context_of("hazard")] == [utm] and context_of("towns")[0].featureCount() > 0
        both_ways = {("EPSG:26911", "EPSG:4326"), ("EPSG:4326", "EPSG:26911")}  # one way was applied unreversed
        assert both_ways <= project.transformContext().coordinateOperations().keys()
        steps = len(finished[0].steps)
        path = tmp_path / "work" / "eaton.qgz"
        path.parent.mkdir()
        assert project.write(str(path))
        wait_for(lambda: not plugin.resave_pending)
        project.clear()
        assert plugin.dock.plan_view.topLevelItemCount() == 0

        assert project.read(str(path))
        assert both_ways <= project.transformContext().coordinateOperations().keys()  # kept: nothing to ask
        wait_for(lambda: all(load.done for load in plugin.session.context_loads))
        (towns,) = context_of("towns")
        assert towns.featureCount() > 0
        view = plugin.dock.plan_view
        assert view.topLevelItemCount() == steps and all(view.topLevelItem(i).text(2) == "done" for i in range(steps))
        assert modal == []
    finally:
        watchdog.stop()
        plugin.unload()
        project.clear()


def test_a_run_is_a_task_in_the_task_manager_with_its_steps_progress_and_its_cancel(session):
    from qgis.core import QgsApplication, QgsTask

    finished, progress, statuses = [], [], []
    session.runFinished.connect(finished.append)
    assert session.ask(EATON_HOSPITALS)
    task = session.task
    assert task is not None and task.description() == f"GeoFaham: {EATON_HOSPITALS}"
    assert task in QgsApplication.taskManager().activeTasks() or task.status() == QgsTask.Queued
    task.progressChanged.connect(progress.append)
    task.statusChanged.connect(statuses.append)
    wait_for(lambda: finished)
    assert finished[0].status == "answered" and session.task is None
    wait_for(lambda: QgsTask.Complete in statuses)
    assert progress == sorted(progress) and progress[-1] >= 60  # one step after another, three in all

    finished.clear()
    assert session.ask("How many buildings were destroyed in the Eaton fire?")
    session.task.cancel()  # the task manager's cancel button
    wait_for(lambda: finished)
    assert finished[0] is not None and finished[0].status == "cancelled"
    assert "cancel" in session.dock.transcript_text().lower()


class SilentModel:
    """A model server that takes the request and never answers (a 1.5B model on two busy cores looks like this
    for two minutes): ``asked`` is set when a call arrives, ``release`` lets it end (with nothing usable)."""

    name = "silent"

    def __init__(self) -> None:
        import threading

        self.asked, self.release = threading.Event(), threading.Event()

    def serves(self, role: str) -> bool:
        return True

    def chat(self, messages, *, schema=None, role=""):
        from geofaham_plugin.core.llm.base import ModelReply

        self.asked.set()
        self.release.wait(120)
        return ModelReply(text="{}")


def test_closing_during_a_model_call_returns_within_three_seconds(qgis_iface, tmp_path):
    """QGIS quit while a run waited on the model froze for 37 s (a 30 s wait on the worker, the model call not
    interruptible): the run's cancel now ends the wait on the model at once; the session closes in under 3 s and
    its run ends cancelled, its thread finished."""
    dock = ChatDock(qgis_iface.mainWindow())
    model = SilentModel()
    session = Session(dock, session_dir=tmp_path / "session", llm_factory=lambda: LLM(model), name="quit")
    finished = []
    session.runFinished.connect(finished.append)
    try:
        assert session.ask("Eaton: count what ended up as ashes, structures only.")
        wait_for(model.asked.is_set, timeout=60)
        worker = session.worker
        started = time.monotonic()
        session.close()
        assert time.monotonic() - started < 3.0
        assert worker is not None and worker.isFinished()
    finally:
        model.release.set()
        QgsProject.instance().clear()
        dock.setParent(None)
        dock.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
