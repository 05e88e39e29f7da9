"""Map context behind a run's results (issue 14), chosen headless from the layer catalogue: the online
basemap only when allowed and online, the local context of the event's data otherwise (and beside it)."""

from __future__ import annotations

import socket
import time

import geopandas as gpd
import pyogrio
import pytest

from geofaham_plugin.core.config import settings_from_env
from geofaham_plugin.core.engines.context import ORDER, map_context, reachable, run_events, where_clause
from geofaham_plugin.core.engines.layers import LayerCatalogue
from geofaham_plugin.core.engines.osm.query import class_query

OFFLINE = {"GEOFAHAM_OFFLINE": "1"}


@pytest.fixture(scope="module")
def catalogue():
    return LayerCatalogue()


def kinds(context):
    return [layer.kind for layer in context.layers]


def test_valencia_offline_context_is_water_roads_places_aoi_and_flood_outline_without_basemap(catalogue):
    context = map_context(catalogue, [6], settings_from_env(OFFLINE))
    assert context.basemap is None and "basemap" not in kinds(context)
    assert kinds(context) == ["water_areas", "water", "roads", "area", "hazard", "places", "towns"]
    assert kinds(context) == sorted(kinds(context), key=ORDER.index)  # bottom to top
    by_kind = {layer.kind: layer for layer in context.layers}
    assert by_kind["roads"].layer_id == "catarroja_osm_lines" and by_kind["water"].layer_id == "catarroja_osm_lines"
    assert by_kind["places"].layer_id == "catarroja_osm_points" and by_kind["places"].label == "name"
    assert by_kind["hazard"].layer_id == "valencia_flood" and by_kind["area"].layer_id == "area:emsr773_aoi03"
    assert "© OpenStreetMap contributors, ODbL" in by_kind["roads"].attribution
    assert any(t["name"] == "Catarroja" for t in by_kind["towns"].points)
    assert not context.notes

    # the filters pick exactly the roads class and the waterways class of the one class file
    lines = gpd.read_file(by_kind["roads"].source)
    roads = pyogrio.read_dataframe(by_kind["roads"].source, where=by_kind["roads"].where)
    wanted = set(class_query("roads").selectors[0]["highway"])
    assert len(roads) == int(lines["highway"].isin(wanted).sum()) > 500
    water = pyogrio.read_dataframe(by_kind["water"].source, where=by_kind["water"].where)
    assert len(water) == 141 and set(water["waterway"]) == {"ditch", "canal", "stream", "river"}
    places = pyogrio.read_dataframe(by_kind["places"].source, where=by_kind["places"].where)
    assert len(places) == 16 and "highway" not in set(places["place"])
    areas = pyogrio.read_dataframe(by_kind["water_areas"].source, where=by_kind["water_areas"].where)
    assert 17 <= len(areas) < 40 and not areas["building"].notna().any()


def test_eaton_offline_context_says_what_the_local_data_lacks(catalogue):
    context = map_context(catalogue, [11], settings_from_env(OFFLINE))
    assert kinds(context) == ["hazard", "towns"]
    assert {t["name"] for t in context.layers[1].points} >= {"Altadena", "Pasadena"}
    assert context.notes == ["Eaton Fire: the local data has no roads or water (context from what it has)"]
    assert "GeoNames" in " ".join(context.sources())


@pytest.fixture
def tile_server():
    """A local server that accepts connections, standing in for a tile server (no internet here)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield f"http://127.0.0.1:{server.getsockname()[1]}/{{z}}/{{x}}/{{y}}.png"
    server.close()


def test_online_the_basemap_comes_first_with_its_attribution_and_the_setting_turns_it_off(catalogue, tile_server):
    online = map_context(catalogue, [11], settings_from_env({"GEOFAHAM_BASEMAP_URL": tile_server}))
    assert (
        kinds(online)[0] == "basemap"
        and online.basemap is not None
        and not any("basemap" in note for note in online.notes)
    )
    assert online.basemap.source == tile_server
    assert online.basemap.attribution == "© OpenStreetMap contributors"
    assert online.sources()[0].startswith("© OpenStreetMap contributors (ODbL")
    assert settings_from_env({}).map.basemap_url == "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    assert map_context(catalogue, [11], settings_from_env({"GEOFAHAM_BASEMAP": "0"})).basemap is None
    assert map_context(catalogue, [11], settings_from_env({"GEOFAHAM_BASEMAP": "1", **OFFLINE})).basemap is None


def test_a_tile_server_that_does_not_answer_leaves_the_basemap_out_with_a_note_remembered(catalogue):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now: the connection is refused
    url = f"http://127.0.0.1:{port}/{{z}}/{{x}}/{{y}}.png"
    context = map_context(catalogue, [11], settings_from_env({"GEOFAHAM_BASEMAP_URL": url}))
    assert context.basemap is None and "basemap" not in kinds(context)
    assert context.notes[0] == "basemap: not shown (its tile server 127.0.0.1 does not answer: offline?)"
    started = time.monotonic()
    assert not reachable(url) and time.monotonic() - started < 0.05  # remembered, not tried again
    assert reachable("file:///tiles/{z}/{x}/{y}.png")


def test_where_clause_keeps_only_selectors_the_file_has_and_quotes_values():
    assert where_clause([{"natural": "water"}, {"missing": "x"}], ["natural"]) == "(\"natural\" = 'water')"
    assert where_clause([{"name": ["l'Horta", "b"]}], ["name"]) == "(\"name\" IN ('l''Horta', 'b'))"
    assert where_clause([{"water": True, "natural": "water"}], ["water", "natural"]) == (
        '(("water" IS NOT NULL AND "water" <> \'no\') AND "natural" = \'water\')'
    )
    assert where_clause([{"missing": "x"}], ["natural"]) is None


def test_run_events_are_the_questions_then_the_artifacts():
    assert run_events(6, [{"event_id": 6}, {"event_id": 11}, {"event_id": True}, {}]) == [6, 11]
    assert run_events(None, [{"event_id": 12}]) == [12]
