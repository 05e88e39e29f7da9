"""Map context behind the results in QGIS (issue 14): a scripted run in the dock gets a context group right under
its results group (offline: local roads, water, place names, AOI and hazard outlines, styled quietly; never the
XYZ basemap); online the basemap comes from the setting, with its attribution (a local mock tile server here: no
real tile is fetched); the report's map draws the results over the context; the main thread is not blocked while
the context loads. The report PNGs are kept in ``.test-artifacts/`` to be looked at."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
import unicodedata
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyogrio
import pytest
from conftest import ROOT
from qgis.core import (
    QgsApplication,
    QgsLayoutItemMap,
    QgsProject,
    QgsRasterLayer,
    QgsRuleBasedRenderer,
    QgsSingleSymbolRenderer,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QBuffer, QByteArray, QCoreApplication, QIODevice, QTimer
from qgis.PyQt.QtGui import QColor, QImage
from test_session_qgis import close_session

from geofaham_plugin.core.config import settings_from_env
from geofaham_plugin.core.engines.context import map_context
from geofaham_plugin.core.engines.layers import LayerCatalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.store.store import ResponseStore
from geofaham_plugin.ui.context import (
    CONTEXT_PREFIX,
    KIND_PROPERTY,
    add_context,
    context_layers,
    load_context_async,
    make_layers,
)
from geofaham_plugin.ui.dock import ChatDock
from geofaham_plugin.ui.layers import GROUP_PREFIX, find_artifact_layer, session_group
from geofaham_plugin.ui.report import situation_report
from geofaham_plugin.ui.session import Session
from geofaham_plugin.ui.styles import CONTEXT_GREY, CUT_RED, WATER_FILL, WATER_LINE

CATARROJA = "Which schools in Catarroja can still reach the fire station by road after the EMSR773 flood?"
EATON = "How many buildings were destroyed in the Eaton fire?"
ARTIFACTS = ROOT / ".test-artifacts"
MAP_MM = (10, 32, 180, 118)  # the report's main map on the A4 landscape page


def wait_for(condition, seconds=180.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        QCoreApplication.processEvents()
        time.sleep(0.005)


def kinds(layers):
    return [layer.customProperty(KIND_PROPERTY) for layer in layers]


def symbol_of(layer):
    assert isinstance(layer.renderer(), QgsSingleSymbolRenderer), layer.name()
    return layer.renderer().symbol()


@pytest.fixture()
def dock_session(qgis_iface, tmp_path):
    dock = ChatDock(qgis_iface.mainWindow())
    session = Session(dock, session_dir=tmp_path / "session", llm_factory=lambda: LLM(ScriptedModel({})), name="ctx")
    yield session
    close_session(session)


def test_a_valencia_run_in_the_dock_gets_a_quiet_context_group_under_its_results(dock_session):
    session = dock_session
    finished, added = [], []
    session.runFinished.connect(finished.append)
    session.contextAdded.connect(added.append)
    assert session.ask(CATARROJA)
    wait_for(lambda: finished and added)
    record, load = finished[0], added[0]
    assert record.status == "answered" and load.error is None

    # its own group, right under the results group (drawn beneath them)
    root = QgsProject.instance().layerTreeRoot()
    names = [child.name() for child in root.children()]
    assert names == [GROUP_PREFIX + "ctx", CONTEXT_PREFIX + "ctx"]
    group = root.findGroup(CONTEXT_PREFIX + "ctx")
    layers = context_layers(group)
    assert kinds(layers) == ["towns", "places", "hazard", "area", "roads", "water", "water_areas"]  # top to bottom
    assert not [lyr for lyr in QgsProject.instance().mapLayers().values() if isinstance(lyr, QgsRasterLayer)]
    by_kind = dict(zip(kinds(layers), layers, strict=True))

    # the local files read through QGIS's provider with the catalogue's filters: only roads, only waterways
    roads = by_kind["roads"]
    assert isinstance(roads, QgsVectorLayer) and roads.providerType() == "ogr"
    source = roads.source().split("|")[0]
    assert roads.featureCount() == len(pyogrio.read_dataframe(source, where=roads.subsetString())) > 500
    assert by_kind["water"].featureCount() == 141 and by_kind["places"].featureCount() == 16

    # styled quietly: thin grey roads, pale blue water, small grey labels, outlines only
    assert symbol_of(roads).color().name() == CONTEXT_GREY and symbol_of(roads).width() == pytest.approx(0.2)
    assert symbol_of(by_kind["water"]).color().name() == WATER_LINE
    assert symbol_of(by_kind["water_areas"]).color().name() == WATER_FILL
    for kind in ("area", "hazard"):
        assert symbol_of(by_kind[kind]).color().alpha() == 0  # no fill: the results' hazard fill stays readable
    for kind in ("places", "towns"):
        layer = by_kind[kind]
        assert layer.labelsEnabled()
        fmt = layer.labeling().settings().format()
        assert fmt.size() <= 7.5 and fmt.color().name() == "#5a5a5a" and fmt.buffer().enabled()
    assert load.main_thread_s < 0.5  # adding them is all the main thread did

    # the results' road access: cut roads red, the cut-off fire station red over its layer's symbol, names labelled
    steps = {s.tool: s for s in record.steps}
    cut = find_artifact_layer(QgsProject.instance(), steps["cut_roads"].artifact_id)
    assert symbol_of(cut).color().name() == CUT_RED and symbol_of(cut).width() >= 0.8
    routed = steps["road_reachability"].inputs
    station = find_artifact_layer(QgsProject.instance(), routed["targets"])
    assert isinstance(station.renderer(), QgsRuleBasedRenderer)
    rules = {r.label(): r for r in station.renderer().rootRule().children()}
    assert "Parc de Bombers de Catarroja" in rules["cut off by the hazard"].filterExpression()
    assert rules["cut off by the hazard"].symbol().color().name() == CUT_RED
    schools = find_artifact_layer(QgsProject.instance(), routed["origins"])
    assert schools.labelsEnabled() and station.labelsEnabled()

    # a second run about the same event adds nothing twice
    before = len(context_layers(group))
    assert session.ask(CATARROJA)
    wait_for(lambda: len(finished) == 2 and len(added) == 2)
    assert len(context_layers(root.findGroup(CONTEXT_PREFIX + "ctx"))) == before


class Tiles(BaseHTTPRequestHandler):
    """A tile server on 127.0.0.1: one light green 256 px PNG for every tile asked."""

    png = b""
    asked: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server's name
        type(self).asked.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(self.png)))
        self.end_headers()
        self.wfile.write(self.png)

    def log_message(self, *args):
        pass


@pytest.fixture()
def tile_server(qgis_app):
    image = QImage(256, 256, QImage.Format_RGB32)
    image.fill(QColor("#b8e0b0"))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.WriteOnly)
    image.save(buffer, "PNG")
    Tiles.png, Tiles.asked = bytes(data), []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Tiles)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/{{z}}/{{x}}/{{y}}.png"
    server.shutdown()
    server.server_close()


@pytest.fixture()
def eaton_run(qgis_app, tmp_path):
    store = ResponseStore(tmp_path / "session")
    record = Orchestrator(store, LLM(ScriptedModel({}))).run(EATON)
    assert record.status == "answered"
    yield record, store
    store.close()
    QgsProject.instance().clear()


def pdf_text(path):
    out = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
    return " ".join(unicodedata.normalize("NFKC", out).split())


def share(png, rect_mm, test, page_mm=(297.0, 210.0)):
    """Share of sampled pixels inside ``rect_mm`` for which ``test(QColor)`` holds."""
    image = QImage(str(png))
    sx, sy = image.width() / page_mm[0], image.height() / page_mm[1]
    x0, y0, w, h = (
        int(rect_mm[0] * sx) + 3,
        int(rect_mm[1] * sy) + 3,
        int(rect_mm[2] * sx) - 6,
        int(rect_mm[3] * sy) - 6,
    )
    hits = [test(QColor(image.pixel(x, y))) for x in range(x0, x0 + w, 3) for y in range(y0, y0 + h, 3)]
    return sum(hits) / len(hits)


def near(colour, tolerance=30):
    target = QColor(colour)
    return lambda c: (
        abs(c.red() - target.red()) + abs(c.green() - target.green()) + abs(c.blue() - target.blue()) < tolerance
    )


@pytest.mark.skipif(not shutil.which("pdftotext"), reason="pdftotext (poppler-utils) is not installed")
def test_online_the_setting_adds_the_osm_basemap_with_its_attribution_offline_never(eaton_run, tile_server, tmp_path):
    record, store = eaton_run
    project = QgsProject.instance()
    offline = situation_report(
        record, store, project=project, settings=settings_from_env({"GEOFAHAM_OFFLINE": "1", "GEOFAHAM_BASEMAP": "1"})
    )
    assert "basemap" not in kinds(offline.context) and not Tiles.asked
    assert "OpenStreetMap" not in pdf_text(offline.pdf)

    online = settings_from_env({"GEOFAHAM_BASEMAP_URL": tile_server})
    assert online.basemap_on
    report = situation_report(record, store, project=project, pdf=tmp_path / "online.pdf", settings=online)
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(report.png, ARTIFACTS / "report_eaton_basemap.png")
    basemap = report.context[-1]  # the bottom layer
    assert kinds(report.context) == ["towns", "hazard", "basemap"]
    assert isinstance(basemap, QgsRasterLayer) and basemap.providerType() == "wms" and basemap.isValid()
    assert "type=xyz" in basemap.source() and "127.0.0.1" in basemap.source()
    assert basemap.serverProperties().attribution().startswith("© OpenStreetMap contributors")
    assert basemap.metadata().rights()[0].startswith("© OpenStreetMap contributors")
    assert len(Tiles.asked) >= 4 and all(p.endswith(".png") for p in Tiles.asked)  # fetched from the mock only
    text = pdf_text(report.pdf)
    assert "© OpenStreetMap contributors" in text  # on the map and under the sources
    tile, alpha = QColor("#b8e0b0"), basemap.opacity()  # the tiles under the results, faded a little
    assert 0.5 <= alpha < 1
    faded = QColor(*(round(v * alpha + 255 * (1 - alpha)) for v in (tile.red(), tile.green(), tile.blue())))
    assert share(report.png, MAP_MM, near(faded.name())) > 0.4
    # the results stay on top: the destroyed buildings' red is still there
    assert share(report.png, MAP_MM, near("#b2182b", 40)) > 0.005


def test_without_a_connection_the_report_leaves_the_basemap_out_at_once(eaton_run, tmp_path):
    """Online in the settings but no connection (the tile server does not answer): the basemap is left out with a
    note instead of the report waiting on tile retries (38-48 s before); the report is written in under 10 s."""
    import socket
    import time

    from geofaham_plugin.core.engines.context import map_context

    record, store = eaton_run
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there
    settings = settings_from_env({"GEOFAHAM_BASEMAP_URL": f"http://127.0.0.1:{port}/{{z}}/{{x}}/{{y}}.png"})
    assert settings.basemap_on
    started = time.monotonic()
    report = situation_report(record, store, project=QgsProject.instance(), pdf=tmp_path / "cut.pdf", settings=settings)
    assert time.monotonic() - started < 10 and report.pdf.is_file()
    assert "basemap" not in kinds(report.context) and "OpenStreetMap" not in pdf_text(report.pdf)
    notes = map_context(LayerCatalogue(), [11], settings).notes
    assert any("127.0.0.1 does not answer" in n for n in notes), notes


def test_the_report_map_draws_the_results_over_non_white_context(qgis_app, tmp_path):
    store = ResponseStore(tmp_path / "session")
    try:
        record = Orchestrator(store, LLM(ScriptedModel({}))).run(CATARROJA)
        assert record.status == "answered"
        report = situation_report(record, store, project=QgsProject.instance())
        ARTIFACTS.mkdir(exist_ok=True)
        shutil.copy(report.png, ARTIFACTS / "report_catarroja_context.png")
        assert kinds(report.context) == ["towns", "places", "hazard", "area", "roads", "water", "water_areas"]

        # the same page without the context: what the context adds is non-white pixels under the results
        maps = [i for i in report.layout.items() if isinstance(i, QgsLayoutItemMap)]
        assert len(maps) == 2
        for item in maps:
            item.setLayers([lyr for lyr in item.layers() if lyr.customProperty(KIND_PROPERTY) is None])
        bare = tmp_path / "bare.png"
        from geofaham_plugin.ui.report import export

        export(report.layout, tmp_path / "bare.pdf", bare)
        white = QImage(str(bare))
        full = QImage(str(report.png))
        sx, sy = full.width() / 297.0, full.height() / 210.0
        changed = added = dark = total = 0
        for x in range(int(MAP_MM[0] * sx) + 4, int((MAP_MM[0] + MAP_MM[2]) * sx) - 4, 3):
            for y in range(int(MAP_MM[1] * sy) + 4, int((MAP_MM[1] + MAP_MM[3]) * sy) - 4, 3):
                a, b = QColor(full.pixel(x, y)), QColor(white.pixel(x, y))
                total += 1
                if abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) > 30:
                    changed += 1
                    dark += a.lightness() < 250
                added += b.lightness() > 250 and a.lightness() < 245
        # the context shows under the results: through the flood's transparent fill and where the map was white
        # (labels may move where the context's names take their place: a few changed pixels turn white)
        assert changed / total > 0.04 and dark / total > 0.03
        assert added / total > 0.008
        red = near(CUT_RED, 40)
        assert share(report.png, MAP_MM, red) == pytest.approx(share(bare, MAP_MM, red), rel=0.1)  # results on top
        assert share(report.png, MAP_MM, red) > 0.02
    finally:
        store.close()
        QgsProject.instance().clear()


def test_the_context_loads_off_the_main_thread(qgis_app):
    """A slow disk (1.5 s more to choose the context) does not stop the main thread's events; the same work on
    the main thread does (the probe sees it)."""
    settings = settings_from_env({"GEOFAHAM_OFFLINE": "1"})

    def prepare():
        time.sleep(1.5)
        return map_context(LayerCatalogue(), [6], settings)

    project = QgsProject.instance()
    results = session_group(project, "probe")
    gaps, last = [], [time.monotonic()]

    def tick():
        now = time.monotonic()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(5)
    try:
        started = time.monotonic()
        load = load_context_async(project, results, prepare)
        wait_for(lambda: load.done, 60)
        assert time.monotonic() - started >= 1.5 and load.error is None
        assert kinds(load.added)[-1] == "towns" and len(load.added) == 7
        assert max(gaps) < 0.3, f"the main thread stopped for {max(gaps):.2f} s"
        assert load.main_thread_s < 0.3

        # the probe can fail: the same work done on the main thread stops it for the whole time
        project.clear()
        results = session_group(project, "probe")
        gaps.clear()
        last[0] = time.monotonic()
        QTimer.singleShot(20, lambda: add_context(project, results, make_layers(prepare())))
        wait_for(lambda: gaps and max(gaps) >= 1.5, 60)
    finally:
        timer.stop()
        project.clear()


def test_context_layers_keep_their_datum_operations_after_the_tasks_thread_ended(qgis_app):
    """QGIS keeps each CRS's PROJ object in a process-wide cache, owned by the thread that first made it; a task
    manager's thread ends after 30 s idle, and a CRS it made then has no datum operation anywhere, yet stays
    valid, named and cached: the next context's hazard outline (EPSG:26911, the Eaton perimeter) in an EPSG:4326
    project had none (QGIS asks which transformation, the project states none), and so had a layer the user opens
    afterwards in that CRS. Here the threads end after 50 ms idle; the context is loaded, its thread ends, it is
    loaded again: each time the outline has its operations and the project states one each way."""
    from qgis.core import QgsCoordinateReferenceSystem, QgsDatumTransform

    settings = settings_from_env({"GEOFAHAM_OFFLINE": "1"})
    project = QgsProject.instance()
    wgs84 = QgsCoordinateReferenceSystem("EPSG:4326")
    pool = QgsApplication.taskManager().threadPool()
    expiry = pool.expiryTimeout()
    pool.setExpiryTimeout(50)
    both_ways = {("EPSG:26911", "EPSG:4326"), ("EPSG:4326", "EPSG:26911")}

    def hazard_after_a_load():
        project.clear()
        project.setCrs(wgs84)
        load = load_context_async(
            project, session_group(project, "probe"), lambda: map_context(LayerCatalogue(), [11], settings)
        )
        wait_for(lambda: load.done, 60)
        assert load.error is None
        (hazard,) = [layer for layer in load.added if layer.customProperty(KIND_PROPERTY) == "hazard"]
        assert hazard.crs().authid() == "EPSG:26911"
        return hazard

    def threads_ended():  # no task running, then ten times the expiry: the idle threads are gone
        wait_for(lambda: pool.activeThreadCount() == 0, 10)
        idle_until = time.monotonic() + 0.5
        wait_for(lambda: time.monotonic() > idle_until, 10)

    try:
        first = hazard_after_a_load()
        assert len(QgsDatumTransform.operations(first.crs(), wgs84)) > 1
        assert both_ways <= project.transformContext().coordinateOperations().keys()
        threads_ended()
        second = hazard_after_a_load()
        assert len(QgsDatumTransform.operations(second.crs(), wgs84)) > 1
        assert both_ways <= project.transformContext().coordinateOperations().keys()
        threads_ended()
        opened = QgsVectorLayer(second.source(), "the user's own", "ogr")  # on the main thread, after it all
        assert opened.crs().authid() == "EPSG:26911"
        assert len(QgsDatumTransform.operations(opened.crs(), wgs84)) > 1
    finally:
        pool.setExpiryTimeout(expiry)
        project.clear()


def test_every_damage_feature_is_drawn_the_ungraded_lahaina_labels_too(qgis_app, tmp_path):
    from qgis.core import QgsCategorizedSymbolRenderer, QgsRenderContext

    from geofaham_plugin.ui.layers import add_artifact_layer

    store = ResponseStore(tmp_path / "session")
    try:
        record = Orchestrator(store, LLM(ScriptedModel({}))).run("How many buildings were damaged in the Lahaina fire?")
        assert record.status == "answered"
        project = QgsProject.instance()
        (loaded,) = [s.artifact_id for s in record.steps if s.tool == "load_event_layer"]
        layer = add_artifact_layer(project, session_group(project, "lahaina"), store.get(loaded), store)
        renderer = layer.renderer()
        assert isinstance(renderer, QgsCategorizedSymbolRenderer)
        labels = [c.label() for c in renderer.categories()]
        assert labels == ["none", "damaged (grade unknown)"]  # the classes the layer holds, in the standard order
        context = QgsRenderContext()
        renderer.startRender(context, layer.fields())
        drawn = {}
        for feature in layer.getFeatures():
            context.expressionContext().setFeature(feature)
            symbol = renderer.symbolForFeature(feature, context)
            assert symbol is not None, feature.attributes()  # no feature left undrawn
            drawn[symbol.color().name()] = drawn.get(symbol.color().name(), 0) + 1
        renderer.stopRender(context)
        assert drawn == {"#1a9641": 44, "#7a0177": 35}  # 44 buildings, 35 damaged ones without a grade
    finally:
        store.close()
        QgsProject.instance().clear()
