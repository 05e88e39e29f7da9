"""A share of features by their area or length when the question says so ("what fraction of the footprint area",
"what share of the street length"): the part's geodesic area or length over the base's, not a count (a count share
of 10.1 % was once given for a footprint share of 26.5 %); two asks of two measures ("how many km ..., and what
share ...") are both answered, not read two ways.

Expected values come from GeoPandas in EPSG:25830 (the flood's UTM zone), lines and polygons merged first."""

from __future__ import annotations

import geopandas as gpd
import pytest
import shapely

from geofaham_plugin.core.engines.layers import data_dir, default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.prepass import normalise
from geofaham_plugin.core.planning.spec_read import share_weight

OSM = "valencia-2024/osm-catarroja/"


@pytest.mark.parametrize(
    ("text", "weight"),
    [
        ("what fraction of the building footprint area lies in the flood", "area"),
        ("quelle part de la surface résidentielle a été inondée", "area"),
        ("what share of the residential street length was flooded", "length"),
        ("que porcentaje de los kilómetros de calles quedó bajo el agua", "length"),
        ("what percentage of the buildings are in the flood", "count"),
        ("what share of the hospitals lie within 5 km of the fire", "count"),
    ],
)
def test_what_a_share_is_of(text, weight):
    assert share_weight(normalise(text)) == weight


@pytest.fixture(scope="module")
def flood():
    path = data_dir() / default_catalogue().find(event_id=6, role="hazard")[0].path
    return shapely.union_all(gpd.read_file(path).to_crs(25830).geometry.make_valid().to_numpy())


def _osm(name: str, key: str, value: str | None = None) -> gpd.GeoDataFrame:
    gdf = gpd.read_file(data_dir() / OSM / name).to_crs(25830)
    return gdf[gdf[key].notna() if value is None else gdf[key] == value]


def test_a_share_of_footprint_area_is_of_area(store, flood):
    buildings = shapely.union_all(_osm("poligonos.geojson", "building").geometry.make_valid().to_numpy())
    expected = 100 * shapely.intersection(buildings, flood).area / buildings.area
    record = Orchestrator(store, LLM(ScriptedModel({}))).run(
        "Catarroja: what fraction of the mapped building footprint area is inside the flooded zone, in percent?"
    )
    assert record.status == "answered", record.answer
    (share,) = [v for v in record.structured.values if v.measure == "share"]
    assert share.value == pytest.approx(expected, abs=0.3), record.answer
    assert "as a share of their area" in record.answer


def test_how_many_km_and_what_share_of_the_length_are_both_answered(store, flood):
    """Code reads the share (of length), a reader the length: two asks, both given."""
    streets = shapely.union_all(_osm("lineas.geojson", "highway", "residential").geometry.to_numpy())
    inside = shapely.intersection(streets, flood).length
    read = {
        "subject": "roads",
        "kinds": ["residential"],
        "relation": "inside",
        "reference": "hazard",
        "measure": "length",
    }
    record = Orchestrator(store, LLM(ScriptedModel({"reader": [read] * 3}))).run(
        "How many km of Catarroja's residential streets went under water, and what share of all residential street "
        "length is that?"
    )
    assert record.status == "answered", record.answer
    values = {v.measure: v.value for v in record.structured.values}
    assert values["share"] == pytest.approx(100 * inside / streets.length, abs=0.5), record.answer
    assert values["length"] == pytest.approx(inside / 1000, rel=0.01), record.answer
