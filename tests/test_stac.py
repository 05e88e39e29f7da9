"""STAC agent and engine against a local mock STAC API (http.server in a thread, realistic Earth
Search / Planetary Computer JSON) and an offline static catalog written by the test. No test reaches
the internet: every URL is 127.0.0.1 or a local folder."""

from __future__ import annotations

import json
import os
import threading
import time
from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
import rasterio
import shapely
from affine import Affine
from shapely.geometry import box, mapping

from geofaham_plugin.core.agents import TOOLS, ToolContext
from geofaham_plugin.core.config import settings_from_env
from geofaham_plugin.core.domain.geodesy import geodesic_area_m2
from geofaham_plugin.core.engines import raster as rx
from geofaham_plugin.core.engines import stac as engine
from geofaham_plugin.core.engines.layers import default_catalogue
from geofaham_plugin.core.errors import ToolFailed

AOI = box(-118.20, 34.15, -118.10, 34.25)
EATON_DAY = date(2025, 1, 10)  # event 11 in the event table
UTM = "EPSG:32611"


# ----------------------------------------------------------------------------------- mock server


@pytest.fixture(autouse=True)
def _online_against_local_mocks(monkeypatch):
    """These tests talk to STAC APIs served by local mock servers: lift the suite's offline switch."""
    monkeypatch.delenv("GEOFAHAM_OFFLINE", raising=False)


class MockStac:
    """A STAC API at http://127.0.0.1:<port>/: landing page, POST /search answered by ``search``
    (a function of the request body), a SAS token endpoint and files with HTTP range support that
    can demand the latest token (as Azure blob storage does with SAS signatures)."""

    def __init__(self):
        self.search = lambda body: (200, feature_collection([]))
        self.requests: list[tuple[str, str, dict | None]] = []
        self.files: dict[str, bytes] = {}
        self.valid_tokens: set[str] = set()
        self.protect_files = False
        self.token_count = 0
        self.token_ttl = timedelta(hours=1)
        self.delay = 0.0
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _send(
                self,
                status: int,
                body: bytes,
                ctype: str = "application/json",
                extra: dict | None = None,
                head: bool = False,
            ):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def do_HEAD(self):
                self.do_GET(head=True)

            def do_GET(self, head: bool = False):
                path, _, query = self.path.partition("?")
                mock.requests.append(("GET", path, None))
                if path.rstrip("/") in ("", "/api/stac/v1"):
                    return self._send(200, json.dumps(landing(mock.url)).encode())
                if path.startswith("/sas/token/"):
                    mock.token_count += 1
                    token = f"se=x&sp=rl&sig=token{mock.token_count}"
                    mock.valid_tokens.add(token)
                    expiry = datetime.now(UTC) + mock.token_ttl
                    return self._send(
                        200, json.dumps({"msft:expiry": expiry.strftime("%Y-%m-%dT%H:%M:%SZ"), "token": token}).encode()
                    )
                if path.startswith("/files/"):
                    name = path[len("/files/") :]
                    if mock.protect_files and query not in mock.valid_tokens:
                        return self._send(
                            403,
                            b"<Error><Code>AuthenticationFailed</Code>Signature expired</Error>",
                            "application/xml",
                            head=head,
                        )
                    data = mock.files.get(name)
                    if data is None:
                        return self._send(404, b"not found", "text/plain", head=head)
                    rng = self.headers.get("Range")
                    if rng and rng.startswith("bytes="):
                        start_s, _, end_s = rng[6:].partition("-")
                        start, end = int(start_s), min(int(end_s or len(data) - 1), len(data) - 1)
                        return self._send(
                            206,
                            data[start : end + 1],
                            "image/tiff",
                            head=head,
                            extra={"Content-Range": f"bytes {start}-{end}/{len(data)}", "Accept-Ranges": "bytes"},
                        )
                    return self._send(200, data, "image/tiff", head=head, extra={"Accept-Ranges": "bytes"})
                return self._send(404, b"{}")

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                mock.requests.append(("POST", self.path, body))
                if mock.delay:
                    time.sleep(mock.delay)
                status, payload = mock.search(body)
                self._send(status, json.dumps(payload).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def searches(self) -> list[dict]:
        return [b for m, p, b in self.requests if m == "POST" and p == "/search"]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def landing(url: str) -> dict:
    return {
        "type": "Catalog",
        "id": "mock",
        "stac_version": "1.0.0",
        "description": "mock STAC API",
        "conformsTo": [
            "https://api.stacspec.org/v1.0.0/core",
            "https://api.stacspec.org/v1.0.0/item-search",
            "https://api.stacspec.org/v1.0.0/item-search#query",
        ],
        "links": [
            {"rel": "self", "href": url + "/", "type": "application/json"},
            {"rel": "root", "href": url + "/", "type": "application/json"},
            {"rel": "search", "href": url + "/search", "type": "application/geo+json", "method": "POST"},
        ],
    }


def feature_collection(items: list[dict]) -> dict:
    return {"type": "FeatureCollection", "features": items, "numberReturned": len(items), "links": []}


def s2_item(
    item_id: str,
    footprint,
    when: datetime,
    cloud: float,
    *,
    style: str = "earth-search",
    hrefs: dict[str, str] | None = None,
    collection: str = "sentinel-2-l2a",
) -> dict:
    """A Sentinel-2 L2A item shaped like Earth Search (common-name asset keys) or Planetary Computer
    (band-id asset keys)."""
    keys = {
        "earth-search": {
            "blue": "blue",
            "green": "green",
            "red": "red",
            "nir": "nir",
            "swir16": "swir16",
            "swir22": "swir22",
            "scl": "scl",
        },
        "planetary-computer": {
            "blue": "B02",
            "green": "B03",
            "red": "B04",
            "nir": "B08",
            "swir16": "B11",
            "swir22": "B12",
            "scl": "SCL",
        },
    }[style]
    common = {"blue": "blue", "green": "green", "red": "red", "nir": "nir", "swir16": "swir16", "swir22": "swir22"}
    assets = {}
    for band, key in keys.items():
        href = (hrefs or {}).get(band, f"https://sentinel-cogs.s3.us-west-2.amazonaws.com/{item_id}/{key}.tif")
        asset = {"href": href, "type": "image/tiff; application=geotiff; profile=cloud-optimized", "roles": ["data"]}
        if band in common:
            asset["eo:bands"] = [{"name": key, "common_name": common[band]}]
        assets[key] = asset
    assets["thumbnail"] = {"href": f"https://example.invalid/{item_id}.jpg", "roles": ["thumbnail"]}
    return {
        "type": "Feature",
        "stac_version": "1.0.0",
        "id": item_id,
        "collection": collection,
        "geometry": mapping(footprint),
        "bbox": list(footprint.bounds),
        "properties": {
            "datetime": when.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "eo:cloud_cover": cloud,
            "platform": "sentinel-2b",
            "proj:epsg": 32611,
            "s2:mgrs_tile": "11SLT",
        },
        "links": [],
        "assets": assets,
        "stac_extensions": [],
    }


def in_window(body: dict, when: datetime) -> bool:
    start, end = (datetime.fromisoformat(t.replace("Z", "+00:00")) for t in body["datetime"].split("/"))
    return start <= when <= end


@pytest.fixture()
def mock(monkeypatch):
    server = MockStac()
    monkeypatch.setenv("GEOFAHAM_STAC_PROVIDER", "earth-search")
    monkeypatch.setenv("GEOFAHAM_STAC_RETRIES", "2")
    monkeypatch.setenv("GEOFAHAM_STAC_BACKOFF", "0")
    monkeypatch.setenv("GEOFAHAM_STAC_TIMEOUT", "5")
    monkeypatch.setenv("GEOFAHAM_PC_SAS_URL", server.url + "/sas/token")
    yield server
    server.close()


def context(store, url: str) -> ToolContext:
    """The run's settings: this test's environment (provider, retries, timeouts set by the fixtures) and ``url``."""
    return ToolContext(
        store=store, layers=default_catalogue(), settings=settings_from_env({**os.environ, "GEOFAHAM_STAC_URL": url})
    )


def search(ctx, args: dict, aoi=None):
    return TOOLS["search_imagery"].run(ctx, args, {"aoi": aoi} if aoi is not None else {})


def aoi_artifact(store, geom=AOI):
    import geopandas as gpd

    from geofaham_plugin.core.aoi import register_aoi

    return register_aoi(store, gpd.GeoDataFrame(geometry=[geom], crs=4326))


# ---------------------------------------------------------------------------------- API searches
def test_search_success_registers_an_item_set_with_coverage_and_normalised_bands(mock, store):
    t1, t2 = datetime(2025, 1, 14, 18, 40, tzinfo=UTC), datetime(2025, 1, 19, 18, 40, tzinfo=UTC)
    items = [
        s2_item("S2B_11SLT_20250114", AOI.buffer(0.05), t1, 3.2),
        s2_item("S2A_11SLT_20250119", AOI.buffer(0.05), t2, 12.0),
        s2_item("S2A_cloudy", AOI.buffer(0.05), t2, 95.0),
    ]  # a cloudy item the API wrongly returns
    mock.search = lambda body: (
        200,
        feature_collection(
            [
                i
                for i in items
                if in_window(body, datetime.fromisoformat(i["properties"]["datetime"].replace("Z", "+00:00")))
            ]
        ),
    )
    ctx = context(store, mock.url)
    aoi = aoi_artifact(store)
    rec = search(ctx, {"window": "post", "event_id": 11, "days": 20, "bands": ["nir", "swir22"]}, aoi)
    meta = rec.metadata
    assert rec.kind.value == "item_set" and rec.inputs == [aoi.id] and rec.source == "stac.search_imagery:earth-search"
    assert meta.item_count == 2 and meta.collection == "sentinel-2-l2a" and meta.aoi_coverage == 1.0
    assert meta.per_date_coverage == {"2025-01-14": 1.0, "2025-01-19": 1.0}
    assert {"nir", "swir22", "scl", "red"} <= set(meta.bands) and meta.max_cloud_cover == 20
    assert meta.time_start == t1 and meta.time_end == t2
    (body,) = mock.searches()
    assert body["collections"] == ["sentinel-2-l2a"] and body["query"] == {"eo:cloud_cover": {"lte": 20}}
    assert body["datetime"] == "2025-01-10T00:00:00Z/2025-01-30T23:59:59Z"
    assert shapely.equals(shapely.geometry.shape(body["intersects"]), store.read_vector(aoi.id).geometry.iloc[0])
    stored = store.read_items(rec.id)
    assert stored[0]["properties"]["geofaham:bands"]["swir22"] == "swir22"
    assert "2 sentinel-2-l2a scenes (post-event, 2025-01-14 to 2025-01-19" in rec.summary


def test_coverage_is_of_the_aoi_polygon_not_its_bbox(mock, store):
    # an L-shaped AOI; the scene covers the bbox's empty corner and one arm of the L
    l_shape = shapely.Polygon(
        [(-118.2, 34.15), (-118.1, 34.15), (-118.1, 34.18), (-118.17, 34.18), (-118.17, 34.25), (-118.2, 34.25)]
    )
    footprint = box(-118.17, 34.15, -118.05, 34.30)
    when = datetime(2025, 1, 15, 18, 40, tzinfo=UTC)
    mock.search = lambda body: (200, feature_collection([s2_item("S2B_one", footprint, when, 1.0)]))
    rec = search(
        context(store, mock.url), {"window": "post", "event_id": 11, "min_coverage": 0.3}, aoi_artifact(store, l_shape)
    )
    expected = geodesic_area_m2(footprint.intersection(l_shape)) / geodesic_area_m2(l_shape)
    bbox_fraction = geodesic_area_m2(footprint.intersection(l_shape.envelope)) / geodesic_area_m2(l_shape.envelope)
    assert rec.metadata.aoi_coverage == pytest.approx(expected, abs=1e-4)
    assert abs(expected - bbox_fraction) > 0.1  # the bbox would have told another story


def test_partial_coverage_widens_the_window_then_succeeds(mock, store):
    west, east = box(-118.25, 34.1, -118.15, 34.3), box(-118.15, 34.1, -118.05, 34.3)
    near = datetime(2025, 1, 5, 18, 40, tzinfo=UTC)  # inside the 30-day pre window
    far = datetime(2024, 11, 25, 18, 40, tzinfo=UTC)  # only inside the doubled window
    items = [s2_item("west_jan", west, near, 2.0), s2_item("east_nov", east, far, 4.0)]
    mock.search = lambda body: (
        200,
        feature_collection(
            [
                i
                for i in items
                if in_window(body, datetime.fromisoformat(i["properties"]["datetime"].replace("Z", "+00:00")))
            ]
        ),
    )
    ctx = context(store, mock.url)
    rec = search(ctx, {"window": "pre", "event_id": 11, "days": 30, "bands": ["nir", "swir22"]}, aoi_artifact(store))
    first, second = mock.searches()
    assert first["datetime"] == "2024-12-11T00:00:00Z/2025-01-09T23:59:59Z"
    assert second["datetime"] == "2024-11-11T00:00:00Z/2025-01-09T23:59:59Z"  # widened backwards for "pre"
    attempts = rec.extra["attempts"]
    assert attempts[0]["coverage"] == pytest.approx(0.5, abs=0.02) and attempts[1]["coverage"] == 1.0
    assert rec.metadata.item_count == 2 and rec.metadata.aoi_coverage == 1.0
    assert set(rec.metadata.per_date_coverage) == {"2024-11-25", "2025-01-05"}
    assert "pre-event imagery: window widened to 60 days" in rec.extra["limitations"]
    assert any("window widened" in n for n in ctx.notes)


def test_empty_search_tries_wider_window_relaxed_clouds_next_collection_then_fails_on_coverage(mock, store):
    mock.search = lambda body: (200, feature_collection([]))
    with pytest.raises(ToolFailed) as err:
        search(
            context(store, mock.url),
            {
                "window": "post",
                "event_id": 11,
                "collections": ["sentinel-2-l2a", "landsat-c2-l2"],
                "max_cloud_cover": 10,
            },
            aoi_artifact(store),
        )
    assert err.value.kind == "coverage" and "no usable scene" in str(err.value)
    bodies = mock.searches()
    assert [b["collections"][0] for b in bodies] == ["sentinel-2-l2a"] * 3 + ["landsat-c2-l2"] * 3
    assert [b["query"]["eo:cloud_cover"]["lte"] for b in bodies[:3]] == [10, 10, 40]
    assert bodies[0]["datetime"].endswith("2025-02-09T23:59:59Z") and bodies[1]["datetime"].endswith(
        "2025-03-12T23:59:59Z"
    )  # 31 days doubled


def test_insufficient_coverage_everywhere_is_a_structured_coverage_failure(mock, store):
    sliver = box(-118.2, 34.15, -118.18, 34.25)
    mock.search = lambda body: (
        200,
        feature_collection([s2_item("sliver", sliver, datetime(2025, 1, 12, tzinfo=UTC), 1)]),
    )
    with pytest.raises(ToolFailed) as err:
        search(
            context(store, mock.url),
            {"window": "post", "event_id": 11, "collections": ["sentinel-2-l2a"]},
            aoi_artifact(store),
        )
    assert err.value.kind == "coverage" and "covers at most 20%" in str(err.value) and "min_coverage" in err.value.hint
    assert len(store) == 1  # only the AOI: nothing was registered


def test_next_collection_is_used_when_the_first_has_nothing(mock, store):
    when = datetime(2025, 1, 20, tzinfo=UTC)
    landsat = s2_item("LC09_040036", AOI.buffer(0.1), when, 5, collection="landsat-c2-l2")
    landsat["assets"]["nir08"] = landsat["assets"].pop("nir")  # Landsat's NIR band is nir08
    landsat["assets"].pop("scl")
    mock.search = lambda body: (200, feature_collection([landsat] if body["collections"] == ["landsat-c2-l2"] else []))
    ctx = context(store, mock.url)
    rec = search(
        ctx,
        {
            "window": "post",
            "event_id": 11,
            "bands": ["nir", "swir22"],
            "collections": ["sentinel-2-l2a", "landsat-c2-l2"],
        },
        aoi_artifact(store),
    )
    assert rec.metadata.collection == "landsat-c2-l2"
    assert store.read_items(rec.id)[0]["properties"]["geofaham:bands"]["nir"] == "nir08"
    assert any("collection landsat-c2-l2 used" in x for x in rec.extra["limitations"])


def test_provider_5xx_is_retried_then_reported_as_a_typed_error(mock, store):
    mock.search = lambda body: (503, {"code": "ServiceUnavailable"})
    with pytest.raises(ToolFailed) as err:
        search(context(store, mock.url), {"window": "post", "event_id": 11}, aoi_artifact(store))
    assert err.value.kind == "error" and "503" in str(err.value) and err.value.status == 503
    assert len(mock.searches()) == 3  # one try + GEOFAHAM_STAC_RETRIES=2 retries
    # a transient failure is absorbed by the retries
    answers = iter(
        [
            (502, {}),
            (503, {}),
            (200, feature_collection([s2_item("ok", AOI.buffer(0.1), datetime(2025, 1, 11, tzinfo=UTC), 1)])),
        ]
    )
    mock.search = lambda body: next(answers)
    rec = search(context(store, mock.url), {"window": "post", "event_id": 11}, aoi_artifact(store))
    assert rec.metadata.item_count == 1


def test_a_slow_provider_times_out_with_a_typed_error(mock, store, monkeypatch):
    monkeypatch.setenv("GEOFAHAM_STAC_TIMEOUT", "0.2")
    monkeypatch.setenv("GEOFAHAM_STAC_RETRIES", "0")
    mock.delay = 1.0
    with pytest.raises(ToolFailed) as err:
        search(context(store, mock.url), {"window": "post", "event_id": 11}, aoi_artifact(store))
    assert err.value.kind == "timeout"


def test_event_extent_and_bbox_stand_in_for_an_aoi(mock, store):
    when = datetime(2025, 1, 12, tzinfo=UTC)
    mock.search = lambda body: (200, feature_collection([s2_item("big", box(-119, 33.5, -117.5, 34.8), when, 1)]))
    ctx = context(store, mock.url)
    rec = search(ctx, {"window": "post", "event_id": 11})
    assert shapely.equals(shapely.geometry.shape(mock.searches()[0]["intersects"]), box(-118.17, 34.15, -118.0, 34.24))
    assert rec.inputs == [] and rec.metadata.aoi_coverage == 1.0
    aoi = TOOLS["event_aoi"].run(ctx, {"event_id": 11}, {})
    assert aoi.kind.value == "aoi" and aoi.metadata.total_area_m2 > 100e6
    rec2 = search(
        ctx, {"window": "explicit", "start": "2025-01-11", "end": "2025-01-13", "bbox": [-118.2, 34.15, -118.1, 34.25]}
    )
    assert (
        mock.searches()[-1]["datetime"] == "2025-01-11T00:00:00Z/2025-01-13T23:59:59Z" and rec2.metadata.item_count == 1
    )
    with pytest.raises(Exception, match="needs event_id"):
        search(ctx, {"window": "pre"})


# ------------------------------------------------------------------------------ Planetary Computer
def _cog_bytes(tmp_path: Path, name: str, arr: np.ndarray, transform: Affine) -> bytes:
    path = tmp_path / name
    grid = rx.Grid(UTM, transform, arr.shape[1], arr.shape[0])
    rx.write_cog([arr], grid, path, dtype=str(arr.dtype))
    return path.read_bytes()


def test_planetary_computer_items_are_signed_and_expired_signatures_renewed(mock, store, tmp_path, monkeypatch):
    monkeypatch.setenv("GEOFAHAM_STAC_PROVIDER", "planetary-computer")
    t = Affine(20, 0, 395_000, 0, -20, 3_785_000)  # ~ -118.13, 34.20 in UTM 11N
    h = w = 64
    footprint = rx.io.reproject_geometry(
        box(395_000, 3_785_000 - 20 * h, 395_000 + 20 * w, 3_785_000), UTM, "EPSG:4326"
    )
    aoi_geom = footprint.buffer(-0.002)
    hrefs = {}
    for when, nir, swir in (("pre", 3000, 1000), ("post", 2000, 2000)):
        for band, value in (("nir", nir), ("swir22", swir), ("scl", 4)):
            arr = np.full((h, w), value, dtype="uint16")
            if band == "scl" and when == "post":
                arr[:8] = 9  # cloud
            mock.files[f"{when}_{band}.tif"] = _cog_bytes(tmp_path, f"{when}_{band}.tif", arr, t)
            hrefs.setdefault(when, {})[band] = f"{mock.url}/files/{when}_{band}.tif"
    days = {"pre": datetime(2024, 12, 30, 18, 40, tzinfo=UTC), "post": datetime(2025, 1, 19, 18, 40, tzinfo=UTC)}
    items = {
        k: s2_item(f"S2_{k}", footprint, v, 1.0, style="planetary-computer", hrefs=hrefs[k]) for k, v in days.items()
    }
    mock.search = lambda body: (200, feature_collection([i for k, i in items.items() if in_window(body, days[k])]))
    mock.protect_files = True
    ctx = context(store, mock.url + "/api/stac/v1")
    aoi = aoi_artifact(store, aoi_geom)
    pre = search(ctx, {"window": "pre", "event_id": 11, "bands": ["nir", "swir22"]}, aoi)
    post = search(ctx, {"window": "post", "event_id": 11, "bands": ["nir", "swir22"]}, aoi)
    assert pre.extra["provider"] == "planetary-computer"
    assert store.read_items(pre.id)[0]["properties"]["geofaham:bands"] == {
        "blue": "B02",
        "green": "B03",
        "red": "B04",
        "nir": "B08",
        "swir16": "B11",
        "swir22": "B12",
        "scl": "SCL",
    }
    assert "sig=" not in json.dumps(store.read_items(pre.id))  # stored unsigned: tokens expire, items do not
    d = TOOLS["dnbr"].run(ctx, {}, {"pre": pre, "post": post, "aoi": aoi})
    values = rasterio.open(store.abs_path(d.id)).read(1)
    assert np.nanmax(np.abs(values - 0.5)) < 1e-6  # NBR 0.5 before, 0 after; cloudy rows masked out
    assert mock.token_count >= 1

    # an expired signature: the token the signer holds is revoked, the read fails with 403, the
    # signer fetches a new token and the read succeeds
    signer = engine.SasSigner(mock.url + "/sas/token")
    sign = signer.for_collection("sentinel-2-l2a")
    grid = rx.Grid(UTM, t, w, h)
    assert rx.read_window(rx.Source(hrefs["pre"]["nir"], sign=sign), grid).mean() == 3000
    mock.valid_tokens.clear()  # every token issued so far has expired
    before = signer.fetches
    assert rx.read_window(rx.Source(hrefs["pre"]["swir22"], sign=sign), grid).mean() == 1000
    assert signer.fetches == before + 1
    with pytest.raises(rasterio.errors.RasterioIOError):  # unsigned access is refused by the storage
        rx.read_window(rx.Source(hrefs["post"]["swir22"]), grid)
    # a token near its expiry is renewed before use (clock-based)
    clock = [time.time()]
    signer2 = engine.SasSigner(mock.url + "/sas/token", now=lambda: clock[0])
    first = signer2.token("sentinel-2-l2a")
    assert signer2.token("sentinel-2-l2a") == first and signer2.fetches == 1
    clock[0] += 3600
    assert signer2.token("sentinel-2-l2a") != first and signer2.fetches == 2


# ----------------------------------------------------------------------------- offline catalog
def _write_band(path: Path, arr: np.ndarray, transform: Affine) -> None:
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        width=arr.shape[1],
        height=arr.shape[0],
        count=1,
        dtype=arr.dtype,
        crs=UTM,
        transform=transform,
        nodata=0 if arr.dtype == np.uint16 else None,
    ) as dst:
        dst.write(arr, 1)


def test_offline_local_catalog_search_and_burn_mapping_end_to_end(store, tmp_path, monkeypatch):
    """A folder of STAC items written here (Earth Search style, relative hrefs): search pre and post
    offline, then dNBR and burn severity through the tools, with SCL cloud masking and exact areas."""
    monkeypatch.delenv("GEOFAHAM_STAC_PROVIDER", raising=False)
    root = tmp_path / "catalog"
    h, w = 40, 50
    t = Affine(20, 0, 395_000, 0, -20, 3_785_000)
    footprint = rx.io.reproject_geometry(
        box(395_000, 3_785_000 - 20 * h, 395_000 + 20 * w, 3_785_000), UTM, "EPSG:4326"
    )
    burned = np.zeros((h, w), dtype=bool)
    burned[10:25, 12:30] = True
    scenes = {  # id: (date, cloud, nir, swir22, cloudy rows, collection)
        "S2_pre_a": ("2024-12-26", 5.0, 3000, 1000, slice(0, 10), "sentinel-2-l2a"),
        "S2_pre_b": ("2025-01-02", 8.0, 3000, 1000, slice(0, 0), "sentinel-2-l2a"),
        "S2_pre_cloudy": ("2025-01-04", 85.0, 9000, 9000, slice(0, h), "sentinel-2-l2a"),  # over the cloud limit
        "S2_post": ("2025-01-18", 3.0, None, None, slice(30, 40), "sentinel-2-l2a"),
        "LS_post": ("2025-01-19", 1.0, 3000, 1000, slice(0, 0), "landsat-c2-l2"),  # another collection
    }
    for item_id, (day, cloud, nir, swir, cloudy, collection) in scenes.items():
        folder = root / collection / item_id
        folder.mkdir(parents=True)
        if nir is None:  # the burned scene: NBR 0.5 -> -0.2 on burned pixels (dNBR 0.7, high severity)
            nir_a = np.where(burned, 1600, 3000).astype("uint16")
            swir_a = np.where(burned, 2400, 1000).astype("uint16")
        else:
            nir_a, swir_a = np.full((h, w), nir, "uint16"), np.full((h, w), swir, "uint16")
        scl = np.full((h, w), 4, "uint8")
        scl[cloudy] = 9
        for band, arr in (("nir", nir_a), ("swir22", swir_a), ("scl", scl)):
            _write_band(folder / f"{band}.tif", arr, t)
        item = s2_item(
            item_id,
            footprint,
            datetime.fromisoformat(day + "T18:40:00+00:00"),
            cloud,
            collection=collection,
            hrefs={b: f"./{b}.tif" for b in ("nir", "swir22", "scl")},
        )
        item["assets"] = {k: v for k, v in item["assets"].items() if k in ("nir", "swir22", "scl")}
        (folder / f"{item_id}.json").write_text(json.dumps(item))
    (root / "catalog.json").write_text(
        json.dumps({"type": "Catalog", "id": "local", "stac_version": "1.0.0", "description": "test", "links": []})
    )
    ctx = context(store, str(root))
    aoi = aoi_artifact(store, footprint.buffer(-0.001))
    pre = search(
        ctx, {"window": "pre", "event_id": 11, "bands": ["nir", "swir22"], "collections": ["sentinel-2-l2a"]}, aoi
    )
    post = search(
        ctx, {"window": "post", "event_id": 11, "bands": ["nir", "swir22"], "collections": ["sentinel-2-l2a"]}, aoi
    )
    assert pre.source == "stac.search_imagery:local" and pre.metadata.item_count == 2
    assert sorted(i["id"] for i in store.read_items(pre.id)) == ["S2_pre_a", "S2_pre_b"]
    assert Path(store.read_items(pre.id)[0]["assets"]["nir"]["href"]).is_absolute()
    assert post.metadata.item_count == 1 and post.metadata.aoi_coverage == 1.0
    d = TOOLS["dnbr"].run(ctx, {}, {"pre": pre, "post": post, "aoi": aoi})
    sev = TOOLS["burn_severity"].run(ctx, {}, {"dnbr": d})
    # expected burned pixels: inside the AOI polygon (pixel centres), not under the post-fire cloud
    grid = rx.raster_info(store.abs_path(d.id)).grid
    dn = rasterio.open(store.abs_path(d.id)).read(1)
    rows = {r["label"]: r for r in sev.extra["class_areas"]}
    assert rows["high"]["pixels"] == int((dn >= 0.66).sum()) > 0
    full = rx.Grid(UTM, t, w, h)
    r0, c0 = grid.offset_in(full)
    inside = np.zeros((h, w), bool)
    inside[r0 : r0 + grid.height, c0 : c0 + grid.width] = ~np.isnan(dn)
    expected = int((burned & inside).sum())
    assert rows["high"]["pixels"] == expected and abs(sev.extra["highlight_km2"] * 1e6 - expected * 400) <= 400
    assert np.isnan(dn[30 - r0 : 40 - r0]).all()  # post-fire cloud rows have no dNBR
    assert (
        d.metadata.time_start.date().isoformat() == "2024-12-26"
        and d.metadata.time_end.date().isoformat() == "2025-01-18"
    )


def test_provider_kind_and_recovery_schedule():
    assert engine.provider_kind("https://earth-search.aws.element84.com/v1") == "earth-search"
    assert engine.provider_kind("https://planetarycomputer.microsoft.com/api/stac/v1") == "planetary-computer"
    assert engine.provider_kind("/data/catalog") == "local" and engine.provider_kind("file:///data/c") == "local"
    spec = engine.SearchSpec(aoi=AOI, start=date(2024, 12, 11), end=date(2025, 1, 9), window="pre", max_cloud=20)
    assert [(a[0].isoformat(), a[1].isoformat(), a[2]) for a in engine.attempts_for(spec)] == [
        ("2024-12-11", "2025-01-09", 20),
        ("2024-11-11", "2025-01-09", 20),
        ("2024-11-11", "2025-01-09", 50),
    ]
    assert engine.event_window(EATON_DAY, "pre", 30) == (date(2024, 12, 11), date(2025, 1, 9))
    assert engine.event_window(EATON_DAY, "post", 30) == (date(2025, 1, 10), date(2025, 2, 9))


def test_offline_mode_never_reaches_a_stac_api(monkeypatch):
    from geofaham_plugin.core.engines.stac import provider_for
    from geofaham_plugin.core.errors import ToolFailed

    monkeypatch.setenv("GEOFAHAM_OFFLINE", "1")
    with pytest.raises(ToolFailed, match="offline mode is on") as err:
        provider_for("https://earth-search.aws.element84.com/v1")
    assert err.value.kind == "not_found" and "local folder" in err.value.hint
