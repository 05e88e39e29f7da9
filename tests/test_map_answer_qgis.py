"""The answer on the map in QGIS (issue 30): an empty result is a layer like any other; the canvas frames the
area asked about with the answer drawn on top; layer names read; legends list what the layer holds."""

from __future__ import annotations

import re

import geopandas as gpd
import pytest
from qgis.core import QgsCategorizedSymbolRenderer, QgsFeature, QgsGeometry, QgsProject, QgsVectorLayer, QgsWkbTypes
from shapely.geometry import Point
from test_session_qgis import close_session, wait_for

from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.store.store import ResponseStore
from geofaham_plugin.ui.dock import ChatDock
from geofaham_plugin.ui.layers import GROUP_PREFIX, add_artifact_layer, session_group
from geofaham_plugin.ui.session import Session

#: a square in Altadena where the Eaton DINS snapshot has 117 inspected structures and none destroyed
NONE_DESTROYED = "POLYGON((-118.045 34.17, -118.041 34.17, -118.041 34.174, -118.045 34.174, -118.045 34.17))"
ARTIFACT_ID = re.compile(r"\ba_[0-9a-f]{8}\b")
ZERO_QUESTION = "How many structures were destroyed by the Eaton fire in my area?"


def polygon_layer(wkt: str, name: str = "square") -> QgsVectorLayer:
    layer = QgsVectorLayer("Polygon?crs=EPSG:4326", name, "memory")
    feature = QgsFeature()
    feature.setGeometry(QgsGeometry.fromWkt(wkt))
    layer.dataProvider().addFeatures([feature])
    layer.updateExtents()
    QgsProject.instance().addMapLayer(layer)
    return layer


@pytest.fixture()
def session(qgis_iface, tmp_path):
    dock = ChatDock(qgis_iface.mainWindow())
    s = Session(dock, iface=qgis_iface, session_dir=tmp_path / "session", llm_factory=lambda: LLM(ScriptedModel({})))
    s.name = "map"
    yield s
    close_session(s)


def ask(session: Session, question: str):
    finished = []
    session.runFinished.connect(finished.append)
    assert session.ask(question)
    wait_for(lambda: finished)
    return finished[0]


def group_layers(session: Session) -> list:
    group = QgsProject.instance().layerTreeRoot().findGroup(GROUP_PREFIX + session.name)
    return [node.layer() for node in group.findLayers()]


# ------------------------------------------------------------------------------------------- empty results
def test_an_empty_result_is_added_as_a_layer_of_the_geometry_it_was_made_from(qgis_app, tmp_path):
    store = ResponseStore(tmp_path / "session")
    project = QgsProject.instance()
    try:
        points = store.register_vector(
            gpd.GeoDataFrame({"damage_class": ["none"]}, geometry=[Point(-118.1, 34.2)], crs=4326),
            source="test.points",
            summary="one inspected building",
        )
        empty = store.register_vector(
            gpd.GeoDataFrame({"damage_class": []}, geometry=[], crs=4326),
            source="vector.select_damage",
            summary="0 buildings with damage class destroyed",
            inputs=[points.id],
        )
        assert empty.metadata.geometry_type == "None"  # the GeoPackage says "Unknown": QGIS alone makes it a table
        group = session_group(project, "empty")
        layer = add_artifact_layer(project, group, empty, store)
        assert layer is not None and layer.isValid() and layer.featureCount() == 0
        assert layer.geometryType() == QgsWkbTypes.PointGeometry  # the geometry of what it was made from
        assert isinstance(layer.renderer(), QgsCategorizedSymbolRenderer)
        assert group.findLayer(layer.id()) is not None
        # nothing to say the geometry of: a table-like layer, added all the same, never an error
        orphan = store.register_vector(
            gpd.GeoDataFrame({"damage_class": []}, geometry=[], crs=4326), source="test.empty", summary="nothing"
        )
        table = add_artifact_layer(project, group, orphan, store)
        assert table is not None and table.isValid() and not table.isSpatial()
    finally:
        store.close()
        project.clear()


#: the model reads a breakdown by structure type, its second reading none: two readings, both computed
BY_TYPE = {"subject": "damage", "grades": ["destroyed"], "relation": "inside", "reference": "my_area"}
TWO_READINGS = {"reader": [{**BY_TYPE, "group_by": "structure_type"}, BY_TYPE]}


@pytest.mark.parametrize("script", [{}, TWO_READINGS], ids=["code reads", "read two ways"])
def test_a_question_answered_zero_in_the_dock_adds_its_empty_layers_and_is_an_answer(session, script):
    session._llm_factory = lambda: LLM(ScriptedModel(dict(script)))
    aoi = polygon_layer(NONE_DESTROYED)
    assert session.aoi_from_layer(aoi, selected_only=False)
    record = ask(session, ZERO_QUESTION if not script else "How many structures were destroyed in the area I drew?")
    assert record.status == "answered", record.answer
    assert record.structured.values[0].value == 0
    layers = {layer.customProperty("geofaham/artifact_id"): layer for layer in group_layers(session)}
    empty = [s.artifact_id for s in record.steps if s.tool == "select_damage"]
    assert empty and empty[0] in layers, "the empty result must be on the map"
    assert layers[empty[0]].featureCount() == 0 and layers[empty[0]].geometryType() == QgsWkbTypes.PointGeometry
    text = session.dock.transcript_text()
    assert "0 in total" in text and "Not the answer" not in text and "Partial" not in text


# ------------------------------------------------------------------------------------------ the answer framed
#: a square in Altadena with 484 destroyed structures of the 5,805 the Eaton DINS snapshot holds
SOME_DESTROYED = "POLYGON((-118.15 34.18, -118.13 34.18, -118.13 34.195, -118.15 34.195, -118.15 34.18))"


def in_crs(rectangle, source, target):
    from qgis.core import QgsCoordinateTransform

    return QgsCoordinateTransform(source, target, QgsProject.instance()).transformBoundingBox(rectangle)


def frames(extent, area) -> bool:
    """``extent`` contains ``area`` and is at most 4 times its size."""
    return extent.contains(area) and extent.area() <= 4 * area.area()


def test_after_an_aoi_question_the_map_shows_the_answer_over_the_area_asked_about(session, qgis_canvas):
    from qgis.core import QgsCoordinateReferenceSystem, QgsLayoutItemLegend, QgsLayoutItemMap

    qgis_canvas.setDestinationCrs(QgsCoordinateReferenceSystem("EPSG:3857"))
    qgis_canvas.resize(800, 600)
    qgis_canvas.setExtent(
        in_crs(
            QgsGeometry.fromWkt("POLYGON((-125 30, -110 30, -110 45, -125 45, -125 30))").boundingBox(),
            QgsCoordinateReferenceSystem("EPSG:4326"),
            qgis_canvas.mapSettings().destinationCrs(),
        )
    )
    aoi = polygon_layer(SOME_DESTROYED)
    assert session.aoi_from_layer(aoi, selected_only=False)
    QgsProject.instance().removeMapLayer(aoi.id())  # the AOI is now the session's own layer
    record = ask(session, ZERO_QUESTION)
    assert record.status == "answered" and record.structured.values[0].value == 484, record.answer
    area = QgsGeometry.fromWkt(SOME_DESTROYED).boundingBox()
    wgs84 = QgsCoordinateReferenceSystem("EPSG:4326")
    canvas = qgis_canvas.extent()
    assert frames(canvas, in_crs(area, wgs84, qgis_canvas.mapSettings().destinationCrs())), canvas.toString()

    # the answer (the 484 destroyed structures the count counted) on top and visible; what the run read and
    # computed on the way (the 5,805 inspections, those inside the area) hidden but kept in the group
    group = QgsProject.instance().layerTreeRoot().findGroup(GROUP_PREFIX + session.name)
    nodes = group.findLayers()
    by_id = {n.layer().customProperty("geofaham/artifact_id"): n for n in nodes}
    (selected,) = [s.artifact_id for s in record.steps if s.tool == "select_damage"]
    assert nodes[0] is by_id[selected] and nodes[0].isVisible() and nodes[0].layer().featureCount() == 484
    assert nodes[1].layer().customProperty("geofaham/artifact_id") == record.aoi_artifact_id and nodes[1].isVisible()
    others = [by_id[s.artifact_id] for s in record.steps if s.artifact_id in by_id and s.artifact_id != selected]
    assert others and not any(n.isVisible() for n in others)
    assert any(n.layer().featureCount() == 5805 for n in others)

    # names that read: no artifact id in them (it is in the layer's abstract and properties); the legend lists
    # the classes the layer holds, with their counts
    names = [n.layer().name() for n in nodes]
    assert not [name for name in names if ARTIFACT_ID.search(name)], names
    assert nodes[0].layer().name() == "484 buildings with damage class destroyed (of 550)"
    assert "550 CAL FIRE DINS damage inspections, Eaton Fire inside your area" in names, names
    answer = nodes[0].layer()
    assert selected in answer.serverProperties().abstract()
    assert [c.label() for c in answer.renderer().categories()] == ["destroyed"]
    inspections = [n.layer() for n in others if n.layer().featureCount() == 5805][0]
    assert [c.label() for c in inspections.renderer().categories()] == [
        "none",
        "affected",
        "minor",
        "major",
        "destroyed",
    ]
    assert nodes[0].customProperty("showFeatureCount")

    # the report's main map frames the same area; its legend names the layers as the Layers panel does
    report = session.make_report(record.run_id)
    assert report is not None
    main = [i for i in report.layout.items() if isinstance(i, QgsLayoutItemMap) and i.id() == "main map"][0]
    assert frames(main.extent(), in_crs(area, wgs84, main.crs())), main.extent().toString()
    legend = [i for i in report.layout.items() if isinstance(i, QgsLayoutItemLegend)][0]
    titles = [node.name() for node in legend.model().rootGroup().findLayers()]
    assert titles and not [t for t in titles if ARTIFACT_ID.search(t)], titles
