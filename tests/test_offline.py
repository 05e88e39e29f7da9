"""Offline mode stops every network source — Overpass, Nominatim and STAC APIs — whichever yes-word sets
GEOFAHAM_OFFLINE, and the no-words let the requests through. Real code paths (the Maps and STAC tools,
the geocoder) with settings read from the environment as a run reads them, against one local HTTP
server that records every request reaching it."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import geopandas as gpd
import pytest
from shapely.geometry import Polygon

from geofaham_plugin.core.agents import TOOLS, ToolContext
from geofaham_plugin.core.aoi import register_aoi
from geofaham_plugin.core.config import settings_from_env
from geofaham_plugin.core.engines.geocode import geocode
from geofaham_plugin.core.engines.layers import default_catalogue
from geofaham_plugin.core.errors import ToolFailed

YES = ["1", "true", "yes", "on", "TRUE", "On"]
NO = ["0", "false", "no", "off", ""]
CASES = [pytest.param(v, True, id=f"offline={v!r}") for v in YES] + [
    pytest.param(v, False, id=f"online={v!r}") for v in NO
]
# a triangle in Nairobi: no catalogue layer or local extract covers it, so only Overpass could answer
NAIROBI = Polygon([(36.80, -1.30), (36.84, -1.30), (36.80, -1.26)])
HOSPITAL = {"type": "node", "id": 7, "lat": -1.29, "lon": 36.81, "tags": {"amenity": "hospital", "name": "Mbagathi"}}


class Recorder(BaseHTTPRequestHandler):
    """Overpass (POST /api/interpreter), Nominatim (GET /search) and a STAC API (GET /stac, POST
    /stac/search, which finds nothing) in one server; every request is recorded."""

    def log_message(self, *args) -> None:
        pass

    def _json(self, payload) -> None:
        body = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        self.server.requests.append(("GET", self.path))
        if self.path.startswith("/search"):
            return self._json([{"display_name": "Zzyzx Road", "boundingbox": ["35.13", "35.15", "-116.11", "-116.09"]}])
        url = self.server.url + "/stac"
        return self._json(
            {
                "type": "Catalog",
                "id": "mock",
                "stac_version": "1.0.0",
                "description": "mock",
                "conformsTo": ["https://api.stacspec.org/v1.0.0/core", "https://api.stacspec.org/v1.0.0/item-search"],
                "links": [
                    {"rel": "self", "href": url, "type": "application/json"},
                    {"rel": "root", "href": url, "type": "application/json"},
                    {"rel": "search", "href": url + "/search", "type": "application/geo+json", "method": "POST"},
                ],
            }
        )

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.requests.append(("POST", self.path))
        if self.path.startswith("/api/interpreter"):
            return self._json({"version": 0.6, "elements": [HOSPITAL]})
        return self._json({"type": "FeatureCollection", "features": [], "links": []})


@pytest.fixture()
def server(monkeypatch):
    """The recording server, with every online source pointed at it (never the real ones)."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    httpd.requests = []
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    monkeypatch.setenv("GEOFAHAM_OVERPASS_URL", httpd.url + "/api/interpreter")
    monkeypatch.setenv("GEOFAHAM_NOMINATIM_URL", httpd.url + "/search")
    monkeypatch.setenv("GEOFAHAM_STAC_URL", httpd.url + "/stac")
    monkeypatch.setenv("GEOFAHAM_STAC_PROVIDER", "stac-api")
    monkeypatch.setenv("GEOFAHAM_STAC_RETRIES", "0")
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def run_context(store) -> ToolContext:
    """What the orchestrator hands a tool: settings read from the environment when the run starts."""
    return ToolContext(store=store, layers=default_catalogue(), settings=settings_from_env())


@pytest.mark.parametrize("value, offline", CASES)
def test_offline_stops_overpass(store, server, monkeypatch, value, offline):
    monkeypatch.setenv("GEOFAHAM_OFFLINE", value)
    aoi = register_aoi(store, gpd.GeoDataFrame(geometry=[NAIROBI], crs=4326), name="Nairobi")
    if offline:
        with pytest.raises(ToolFailed) as err:
            TOOLS["get_features"].run(run_context(store), {"feature_class": "healthcare"}, {"aoi": aoi})
        assert err.value.kind == "not_found" and "offline" in str(err.value)
        assert server.requests == []
    else:
        record = TOOLS["get_features"].run(run_context(store), {"feature_class": "healthcare"}, {"aoi": aoi})
        assert server.requests == [("POST", "/api/interpreter")]
        assert list(store.read_vector(record.id)["name"]) == ["Mbagathi"]


@pytest.mark.parametrize("value, offline", CASES)
def test_offline_stops_nominatim(server, monkeypatch, value, offline):
    monkeypatch.setenv("GEOFAHAM_OFFLINE", value)
    if offline:
        with pytest.raises(ToolFailed) as err:
            geocode("Zzyzx Road", settings_from_env())
        assert err.value.kind == "not_found" and "offline" in err.value.hint
        assert server.requests == []
    else:
        assert geocode("Zzyzx Road", settings_from_env()).source == "nominatim"
        assert [path.split("?")[0] for _, path in server.requests] == ["/search"]


@pytest.mark.parametrize("value, offline", CASES)
def test_offline_stops_stac_api_searches(store, server, monkeypatch, value, offline):
    monkeypatch.setenv("GEOFAHAM_OFFLINE", value)
    args = {
        "window": "explicit",
        "start": "2025-01-01",
        "end": "2025-01-05",
        "bbox": [-118.2, 34.15, -118.1, 34.25],
        "collections": ["sentinel-2-l2a"],
    }
    with pytest.raises(ToolFailed) as err:
        TOOLS["search_imagery"].run(run_context(store), args, {})
    if offline:
        assert err.value.kind == "not_found" and "offline mode is on" in str(err.value)
        assert server.requests == []
    else:  # the API was asked and found nothing: a coverage failure, not an offline refusal
        assert err.value.kind == "coverage"
        assert ("POST", "/stac/search") in server.requests


def test_offline_set_in_settings_beats_an_online_environment(store, server, monkeypatch):
    """Inside QGIS offline mode comes from the dialog on top of the environment: the engines obey the
    run's settings, not the environment."""
    monkeypatch.setenv("GEOFAHAM_OFFLINE", "0")
    ctx = run_context(store)
    ctx.settings = ctx.settings.updated(network={"offline": True})
    aoi = register_aoi(store, gpd.GeoDataFrame(geometry=[NAIROBI], crs=4326), name="Nairobi")
    with pytest.raises(ToolFailed):
        TOOLS["get_features"].run(ctx, {"feature_class": "healthcare"}, {"aoi": aoi})
    with pytest.raises(ToolFailed):
        geocode("Zzyzx Road", ctx.settings)
    with pytest.raises(ToolFailed, match="offline mode is on"):
        TOOLS["search_imagery"].run(
            ctx,
            {"window": "explicit", "start": "2025-01-01", "end": "2025-01-05", "bbox": [-118.2, 34.15, -118.1, 34.25]},
            {},
        )
    assert server.requests == []
