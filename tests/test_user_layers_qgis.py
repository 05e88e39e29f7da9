"""Your own layers in QGIS: the dock lists the project's vector layers (visible ones ticked); asking a question
writes the ticked ones into the session folder on the main thread, and the run's thread reads those files
as the user's layers (user:<name>) — no QGIS object crosses the thread."""

from __future__ import annotations

import json
import threading

import pytest
from qgis.core import QgsFeature, QgsGeometry, QgsProject, QgsVectorLayer
from qgis.PyQt.QtCore import QCoreApplication, QEvent, Qt
from test_session_qgis import wait_for
from test_user_layers import CLINICS_PLAN, FAR_AWAY, INSIDE_EATON

from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.ui.dock import ChatDock
from geofaham_plugin.ui.session import Session
from geofaham_plugin.ui.user_layers import USER_LAYERS_DIR


def point_layer(name: str, points: list[tuple[str, tuple[float, float]]]) -> QgsVectorLayer:
    layer = QgsVectorLayer("Point?crs=EPSG:4326&field=name:string&field=status:string", name, "memory")
    features = []
    for label, (x, y) in points:
        f = QgsFeature(layer.fields())
        f.setAttributes([label, "open"])
        f.setGeometry(QgsGeometry.fromWkt(f"POINT({x} {y})"))
        features.append(f)
    layer.dataProvider().addFeatures(features)
    layer.updateExtents()
    return layer


@pytest.fixture()
def project_layers():
    project = QgsProject.instance()
    clinics = point_layer("Field clinics", [("Altadena field clinic", INSIDE_EATON), ("Far clinic", FAR_AWAY)])
    hidden = point_layer("Old depots", [("Depot", INSIDE_EATON)])
    project.addMapLayers([clinics, hidden])
    project.layerTreeRoot().findLayer(hidden.id()).setItemVisibilityChecked(False)
    yield clinics, hidden
    project.clear()


@pytest.fixture()
def session(qgis_iface, tmp_path, project_layers, monkeypatch):
    # a remote planner endpoint in the settings: free mode; the model itself is scripted
    monkeypatch.setenv("GEOFAHAM_LLM_BASE_URL", "http://127.0.0.1:9/v1")

    def script(role, messages, schema):  # the plan; then the answer's phrasing, refused: the findings stand
        return "not an answer" if "Findings:" in messages[-1].content else CLINICS_PLAN

    dock = ChatDock(qgis_iface.mainWindow())
    s = Session(dock, session_dir=tmp_path / "session", llm_factory=lambda: LLM(ScriptedModel(script)), name="mine")
    dock.questionSubmitted.connect(s.ask)
    yield s
    s.close()
    dock.setParent(None)
    dock.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)


def rows(dock: ChatDock) -> list[tuple[str, bool]]:
    items = [dock.layer_list.item(i) for i in range(dock.layer_list.count())]
    return [(item.text(), item.checkState() == Qt.Checked) for item in items]


def test_the_dock_lists_the_project_layers_visible_ones_ticked(session, project_layers):
    clinics, hidden = project_layers
    dock = session.dock
    assert sorted(rows(dock)) == [("Field clinics", True), ("Old depots", False)]
    assert dock.chosen_layer_ids() == [clinics.id()]
    # the user's tick wins over visibility, and survives a refresh; a new layer appears
    dock.layer_list.findItems("Old depots", Qt.MatchExactly)[0].setCheckState(Qt.Checked)
    QgsProject.instance().addMapLayer(point_layer("Shelters", [("S1", INSIDE_EATON)]))
    assert sorted(rows(dock)) == [("Field clinics", True), ("Old depots", True), ("Shelters", True)]
    # GeoFaham's own artifact layers are not offered
    artifact = point_layer("a_12345678 · result", [("x", INSIDE_EATON)])
    artifact.setCustomProperty("geofaham/artifact_id", "a_12345678")
    QgsProject.instance().addMapLayer(artifact)
    assert "a_12345678 · result" not in [name for name, _ in rows(dock)]


def test_asking_writes_the_ticked_layers_and_the_run_reads_them_as_user_layers(session, project_layers):
    clinics, _ = project_layers
    built_on = []
    orchestrator = session._orchestrator

    def spy(**kwargs):
        built_on.append((threading.current_thread() is threading.main_thread(), list(kwargs["user_layers"])))
        return orchestrator(**kwargs)

    session._orchestrator = spy
    finished = []
    session.runFinished.connect(finished.append)
    session.dock.input.setPlainText("Which of my field clinics are within 2 km of the Eaton fire perimeter?")
    session.dock.send_button.click()
    wait_for(lambda: finished)
    record = finished[0]
    assert record is not None and record.status == "answered", record and record.answer
    # the ticked layer only, written on the main thread as a GeoPackage in the session folder
    written = sorted((session.store.session_dir / USER_LAYERS_DIR).glob("*.gpkg"))
    assert [p.name[: -len("_12345678.gpkg")] for p in written] == ["field_clinics"]
    ((on_main, files),) = built_on
    assert not on_main and [(f.name, f.path) for f in files] == [("Field clinics", written[0])]
    # the run's pre-pass named the layer and load_layer read it
    assert record.facts.layers == ["user:field_clinics"]
    assert [s.tool for s in record.steps] == ["load_layer", "load_event_layer", "within_distance"]
    assert "Altadena field clinic" in session.dock.transcript_text()
    saved = json.loads((session.store.session_dir / "runs" / f"{record.run_id}.json").read_text())
    assert saved["facts"]["layers"] == ["user:field_clinics"]


def test_geofahams_own_context_layers_are_not_offered_as_your_layers(session):
    from geofaham_plugin.ui.context import KIND_PROPERTY

    roads = point_layer("Roads (OpenStreetMap)", [("road", INSIDE_EATON)])
    roads.setCustomProperty(KIND_PROPERTY, "roads")
    QgsProject.instance().addMapLayer(roads)
    assert "Roads (OpenStreetMap)" not in [name for name, _ in rows(session.dock)]
    assert roads.id() not in session.dock.chosen_layer_ids()


def test_a_ticked_layer_is_written_once_until_it_changes_and_a_file_is_read_in_place(session, project_layers, tmp_path):
    """Each question hands the run every ticked layer: a layer in memory is written into the session folder the
    first time and again only after an edit; a layer read from a file is read from that file (nothing written)."""
    import geopandas as gpd
    from shapely.geometry import Point

    clinics, _ = project_layers
    folder = tmp_path / "shelters.gpkg"
    gpd.GeoDataFrame({"name": ["S1", "S2"]}, geometry=[Point(*INSIDE_EATON), Point(*FAR_AWAY)], crs=4326).to_file(
        folder, layer="shelters"
    )
    shelters = QgsVectorLayer(f"{folder}|layername=shelters", "Shelters", "ogr")
    assert shelters.isValid()
    QgsProject.instance().addMapLayer(shelters)
    first = {f.name: f for f in session.write_user_layers()}
    assert first["Shelters"].path == folder and first["Shelters"].layer == "shelters"  # in place
    written = first["Field clinics"].path
    assert written.parent == session.store.session_dir / USER_LAYERS_DIR
    assert sorted(p.name for p in written.parent.iterdir()) == [written.name]
    stamp = written.stat().st_mtime_ns
    again = {f.name: f for f in session.write_user_layers()}
    assert again == first and written.stat().st_mtime_ns == stamp  # unchanged: not written again
    clinics.startEditing()
    clinics.changeAttributeValue(next(clinics.getFeatures()).id(), 1, "closed")
    clinics.commitChanges()
    edited = {f.name: f for f in session.write_user_layers()}
    assert edited["Field clinics"].path == written and written.stat().st_mtime_ns != stamp
    assert "closed" in gpd.read_file(written)["status"].tolist()


def test_project_rasters_are_listed_and_read_in_place_never_copied(session, project_layers, tmp_path):
    """Issue 27: a file-backed raster of the project is listed like a vector layer; asking hands its own file to the
    run (nothing is written on the main thread), where it is a raster of the user's with its kind."""
    from qgis.core import QgsRasterLayer

    from geofaham_plugin.core.engines.layers import LayerCatalogue, data_dir
    from geofaham_plugin.ui.user_layers import project_layer_choices, write_user_layers

    path = data_dir() / "raster/hurst-2025/HURST_20250107_fire_mask.tif"
    raster = QgsRasterLayer(str(path), "fire mask", "gdal")
    assert raster.isValid()
    QgsProject.instance().addMapLayer(raster)
    choices = {c.name: c.checked for c in project_layer_choices(QgsProject.instance())}
    assert choices.get("fire mask") is True
    files, problems = write_user_layers(QgsProject.instance(), [raster.id()], tmp_path / USER_LAYERS_DIR)
    assert not problems and [(f.name, f.path) for f in files] == [("fire mask", path)]
    assert not (tmp_path / USER_LAYERS_DIR).exists() or not any((tmp_path / USER_LAYERS_DIR).iterdir())
    entry = LayerCatalogue(data_dir()).add_user_layer(files[0].name, files[0].path)
    assert (entry.role, entry.raster_kind) == ("values", "mask")
