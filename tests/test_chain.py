"""Everyday operations on your own layers, read from the instruction by code and chained in the order said
(planning/chain.py, data/operations.json); checked end to end on files the tests write, with expected values
from pyproj and shapely directly."""

from __future__ import annotations

import geopandas as gpd
import pytest
from pyproj import Transformer
from shapely.geometry import Point, Polygon

from geofaham_plugin.core.engines.layers import LayerCatalogue, data_dir
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.chain import chain_from_facts
from geofaham_plugin.core.planning.prepass import prepass
from geofaham_plugin.core.planning.spec_schema import SpecError

CLINICS = """id,name,beds,wkt_geom
1,Clinic A,12,POINT (-0.40 39.45)
2,Clinic B,,POINT (-0.38 39.43)
3,Clinic C,30,POINT (-0.42 39.40)
3,Clinic C,30,POINT (-0.42 39.40)
4,Clinic D,5,POINT (-0.35 39.47)
"""


@pytest.fixture()
def catalogue(tmp_path):
    (tmp_path / "clinics.csv").write_text(CLINICS, encoding="utf-8")
    bow = Polygon([(-0.5, 39.3), (-0.4, 39.35), (-0.5, 39.35), (-0.4, 39.3)])  # a self-crossing ring
    zones = gpd.GeoDataFrame(
        {"zone": ["north", "south", "bow"], "kind": ["A", "A", "B"]},
        geometry=[
            Polygon([(-0.45, 39.44), (-0.33, 39.44), (-0.33, 39.5), (-0.45, 39.5)]),
            Polygon([(-0.45, 39.38), (-0.33, 39.38), (-0.33, 39.44), (-0.45, 39.44)]),
            bow,
        ],
        crs=4326,
    )
    zones.to_file(tmp_path / "zones.geojson")
    catalogue = LayerCatalogue(data_dir())
    catalogue.add_user_layer("clinics", tmp_path / "clinics.csv")
    catalogue.add_user_layer("zones", tmp_path / "zones.geojson")
    return catalogue


def _orchestrator(store, catalogue):
    return Orchestrator(store, LLM(ScriptedModel({})), layers=catalogue)


def test_chain_reads_operations_in_the_order_said(catalogue):
    facts = prepass(
        "Fix the geometries of my zones, dissolve them by kind and save as Zones_By_Kind.geojson", layers=catalogue
    )
    chain = chain_from_facts(facts, catalogue)
    assert chain is not None and chain.layer_id == "user:zones"
    assert chain.operations == ["repair_geometry", "dissolve", "save_layer"]
    assert chain.args[1] == {"by": "kind"} and chain.args[2] == {"filename": "Zones_By_Kind.geojson"}
    per_zone = chain_from_facts(prepass("How many clinics are in each of my zones?", layers=catalogue), catalogue)
    assert per_zone is not None and per_zone.operations == ["count_points_in_polygons"]
    assert (per_zone.layer_id, per_zone.second_layer_id) == ("user:clinics", "user:zones")
    assert chain_from_facts(prepass("How many clinics are in my zones?", layers=catalogue), catalogue) is None
    late = chain_from_facts(
        prepass("Save my zones as a shapefile called zones_out.shp after fixing them", layers=catalogue), catalogue
    )
    assert late is not None and late.operations == [
        "repair_geometry",
        "save_layer",
    ]  # saved last, whatever the order said
    with pytest.raises(SpecError, match="names no layer"):  # two layers, none named: no guess
        chain_from_facts(prepass("Reproject it to EPSG:3857"), catalogue)


def test_e2e_reproject_and_save_writes_a_checked_file_in_the_crs_asked(store, catalogue):
    record = _orchestrator(store, catalogue).run("Reproject my clinics to EPSG:25830 and save as Clinics_UTM.gpkg")
    assert record.status == "answered", record.answer
    assert [s.tool for s in record.steps] == ["load_layer", "reproject", "save_layer"]
    path = store.session_dir / "exports" / "Clinics_UTM.gpkg"
    saved = gpd.read_file(path)
    assert saved.crs.to_epsg() == 25830 and len(saved) == 5
    x, y = Transformer.from_crs(4326, 25830, always_xy=True).transform(-0.40, 39.45)
    first = saved[saved["name"] == "Clinic A"].geometry.iloc[0]
    assert first.distance(Point(x, y)) < 0.01
    assert f"saved {path} (gpkg, EPSG:25830): 5 features" in record.answer


def test_e2e_repair_then_dissolve_by_a_field(store, catalogue):
    record = _orchestrator(store, catalogue).run("Repair the geometries of my zones and dissolve them by kind")
    assert record.status == "answered", record.answer
    out = store.read_vector(record.cited_artifacts[0])
    assert sorted(out["kind"]) == ["A", "B"] and out.is_valid.all()
    a = out[out["kind"] == "A"].geometry.iloc[0]  # north and south merged: one 0.12° x 0.12° box
    assert abs(a.area - 0.12 * 0.12) < 1e-9 and len(getattr(a, "geoms", [a])) == 1


def test_e2e_duplicates_and_empty_values_are_dropped_in_order(store, catalogue):
    record = _orchestrator(store, catalogue).run("Remove duplicate clinics and drop the ones without beds")
    assert record.status == "answered", record.answer
    assert [s.tool for s in record.steps] == ["load_layer", "dedupe", "drop_nulls"]
    assert sorted(store.read_vector(record.cited_artifacts[0])["name"]) == ["Clinic A", "Clinic C", "Clinic D"]


def test_an_operation_asked_and_not_run_is_said_not_applied(store, catalogue):
    # "in UTM" asks for a reprojection: it runs, after the centroids, in the order said
    record = _orchestrator(store, catalogue).run("Centroids of my zones in UTM")
    assert [s.tool for s in record.steps][-2:] == ["centroids", "reproject"]
    assert store.read_vector(record.cited_artifacts[0]).crs.to_epsg() == 32630
    # a CRS code cannot fill: the chain is not planned, and the listing computed instead is not the answer
    script = {"planner": [{"template": "none fits"}] * 6}
    bad = Orchestrator(store, LLM(ScriptedModel(script)), layers=catalogue).run("Reproject my clinics please")
    assert bad.status != "answered"
    assert any(c.kind == "operation" and c.value == "reproject" and not c.applied for c in bad.constraints)
