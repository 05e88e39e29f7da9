"""Response Store: metadata computed from real data, typed round trips, lookup, and crash safety
(a child process SIGKILLed at random moments and at chosen points must leave a consistent store)."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import rasterio
from conftest import ROOT, SHARED_DATA
from rasterio.transform import from_origin
from shapely.geometry import LineString, Point, box

from geofaham_plugin.core.domain.ids import ARTIFACT_ID as ID_RE
from geofaham_plugin.core.errors import GeoFahamError
from geofaham_plugin.core.store import (
    CRASH_ENV,
    ArtifactKind,
    Bounds,
    ItemSetMeta,
    ResponseStore,
    UnknownArtifact,
)
from geofaham_plugin.core.store import describe as store_inspect
from geofaham_plugin.core.store.store import CRASH_EXIT_CODE

EATON = SHARED_DATA / "eaton-2025" / "eaton_adjusted_fire_perimeter.geojson"
DINS = SHARED_DATA / "eaton-2025" / "DINS_2025_Eaton_Public_View_2025-01-14.geojson"
LAHAINA = SHARED_DATA / "lahaina-2023" / "lahaina_burn_area.geojson"
VALENCIA_AOI = SHARED_DATA / "valencia-2024" / "emsr773_aoi03_extent.geojson"
HURST_PRE = SHARED_DATA / "raster" / "hurst-2025" / "HURST_20250107_s2_pre_fire.tif"
CHILD = ROOT / "tests" / "helpers" / "store_crash_child.py"


def write_utm_raster(path: Path, width: int = 1024, height: int = 768, when: str | None = None) -> np.ndarray:
    """A uint16 GeoTIFF in EPSG:32611 with 10 m pixels near Eaton; value 0 is nodata (a block)."""
    data = (np.arange(width * height, dtype=np.uint32).reshape(height, width) % 1000 + 1).astype("uint16")
    data[:100, :200] = 0
    profile = dict(
        driver="GTiff",
        width=width,
        height=height,
        count=1,
        dtype="uint16",
        crs="EPSG:32611",
        transform=from_origin(395_000, 3_788_000, 10, 10),
        nodata=0,
    )
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data, 1)
        dst.set_band_description(1, "burn_index")
        if when:
            dst.update_tags(TIFFTAG_DATETIME=when)
    return data


# ------------------------------------------------------------------------------------- vector metadata
def test_eaton_perimeter_metadata_is_computed_geodesically(store):
    rec = store.register_vector(
        gpd.read_file(EATON), source="user.aoi", summary="Eaton perimeter", kind=ArtifactKind.aoi
    )
    m = rec.metadata
    assert ID_RE.match(rec.id) and rec.kind is ArtifactKind.aoi and rec.path == f"artifacts/{rec.id}.gpkg"
    assert (m.crs, m.crs_is_geographic, m.crs_units, m.feature_count) == ("EPSG:26911", False, "metre", 1)
    assert m.geometry_type == "MultiPolygon" and m.fields == [] and m.invalid_geometries == 0
    assert m.total_area_m2 == pytest.approx(62.88e6, rel=0.005)
    b = m.bounds_4326
    assert b.minx == pytest.approx(-118.165, abs=2e-3) and b.maxx == pytest.approx(-118.013, abs=2e-3)
    assert b.miny == pytest.approx(34.160, abs=2e-3) and b.maxy == pytest.approx(34.238, abs=2e-3)
    assert m.bounds.minx > 390_000 and m.bounds.maxy > 3_780_000  # native metres
    assert rec.created_at.tzinfo is not None and rec.created_at.utcoffset().total_seconds() == 0


def test_dins_points_metadata(store):
    rec = store.register_vector(gpd.read_file(DINS), source="data.dins", summary="DINS Eaton")
    m = rec.metadata
    assert (m.feature_count, m.geometry_type, m.crs, m.crs_is_geographic, m.crs_units) == (
        5805,
        "Point",
        "EPSG:4326",
        True,
        "degree",
    )
    assert {"DAMAGE", "STRUCTURETYPE", "OBJECTID"} <= {f.name for f in m.fields}
    assert "geometry" not in {f.name for f in m.fields}
    assert m.total_area_m2 is None and m.total_length_m is None
    assert m.bounds_4326.minx == pytest.approx(-118.163, abs=1e-3) and m.bounds_4326.maxy == pytest.approx(
        34.208, abs=1e-3
    )
    assert len(store.read_vector(rec.id)) == 5805


def test_lahaina_invalid_geometries_counted_and_area_made_valid(store):
    raw = gpd.read_file(LAHAINA)
    assert store_inspect.vector_metadata(raw).geometry_type == "Mixed"  # 2 MultiPolygon + 5 Polygon
    m = store.register_vector(raw, source="data.lahaina", summary="burn area").metadata
    assert m.invalid_geometries == 2 and m.feature_count == 7
    assert m.geometry_type == "MultiPolygon"  # metadata is read from the GeoPackage, which promotes to multi
    assert m.total_area_m2 == pytest.approx(7.43e6, rel=0.01)


def test_geodesic_length_and_area_against_known_values():
    line = gpd.GeoDataFrame(geometry=[LineString([(0, 0), (1, 0)])], crs=4326)
    assert store_inspect.vector_metadata(line).total_length_m == pytest.approx(111_319.49, abs=0.05)  # 1° of equator
    # the same line in UTM 31N must give the same geodesic length (not planar UTM metres)
    assert store_inspect.vector_metadata(line.to_crs(32631)).total_length_m == pytest.approx(111_319.49, rel=1e-4)
    cw = gpd.GeoDataFrame(geometry=[box(0, 0, 1, 1).reverse()], crs=4326)  # clockwise ring
    assert store_inspect.vector_metadata(cw).total_area_m2 == pytest.approx(
        12_308_778_361, rel=1e-4
    )  # 1°×1° at the equator


def test_vector_time_range_from_datetime_column():
    gdf = gpd.GeoDataFrame(
        {"t": pd.to_datetime(["2025-01-08T10:00", "2025-01-07T06:00"])}, geometry=[Point(0, 0), Point(1, 1)], crs=4326
    )
    m = store_inspect.vector_metadata(gdf)
    assert m.time_start == datetime(2025, 1, 7, 6, tzinfo=UTC) and m.time_end == datetime(2025, 1, 8, 10, tzinfo=UTC)


def test_geopackage_round_trip_keeps_crs_and_field_types(store):
    gdf = gpd.GeoDataFrame(
        {
            "count": np.array([1, 2, 3], dtype="int64"),
            "ratio": [0.5, 1.25, -3.0],
            "name": ["Altadena", "Pasadena", "Sierra Madre"],
            "flag": [True, False, True],
            "seen": pd.to_datetime(["2025-01-07T18:00Z", "2025-01-08T06:30Z", "2025-01-14T12:00Z"]),
        },
        geometry=[Point(395_000, 3_785_000), Point(396_000, 3_786_000), Point(404_000, 3_784_000)],
        crs="EPSG:32611",
    )
    rec = store.register_vector(gdf, source="test", summary="typed")
    back = store.read_vector(rec.id)
    assert back.crs.to_epsg() == 32611 and rec.metadata.crs == "EPSG:32611"
    assert pd.api.types.is_integer_dtype(back["count"]) and back["count"].tolist() == [1, 2, 3]
    assert pd.api.types.is_float_dtype(back["ratio"]) and back["ratio"].tolist() == [0.5, 1.25, -3.0]
    assert pd.api.types.is_string_dtype(back["name"]) and back["name"].tolist() == gdf["name"].tolist()
    assert pd.api.types.is_bool_dtype(back["flag"])
    assert pd.api.types.is_datetime64_any_dtype(back["seen"])
    assert pd.to_datetime(back["seen"], utc=True).tolist() == gdf["seen"].tolist()
    types = {f.name: f.type for f in rec.metadata.fields}
    assert (
        types["count"] == "int64"
        and types["ratio"] == "float64"
        and types["flag"] == "bool"
        and types["seen"].startswith("datetime64")
    )
    assert rec.metadata.time_start == datetime(2025, 1, 7, 18, tzinfo=UTC)
    assert back.geometry.geom_equals(gdf.geometry).all()


def test_vector_without_crs_is_refused_and_leaves_nothing(store):
    with pytest.raises(ValueError, match="CRS"):
        store.register_vector(gpd.GeoDataFrame(geometry=[Point(0, 0)]), source="test", summary="no crs")
    assert store.ids() == [] and list(store.artifacts_dir.iterdir()) == [] and list(store.staging_dir.iterdir()) == []


def test_empty_vector_layer(store):
    rec = store.register_vector(gpd.GeoDataFrame({"a": []}, geometry=[], crs=4326), source="test", summary="empty")
    assert (rec.metadata.feature_count, rec.metadata.geometry_type, rec.metadata.bounds_4326) == (0, "None", None)


# --------------------------------------------------------------------------------------------- rasters
def test_synthetic_raster_becomes_cog_with_exact_stats(store, tmp_path):
    src = tmp_path / "engine_out.tif"
    data = write_utm_raster(src, when="2025:01:20 18:30:00")
    before = src.read_bytes()
    rec = store.register_raster_file(src, source="raster.test", summary="synthetic")
    assert src.read_bytes() == before  # the engine's file is left alone
    path = store.abs_path(rec.id)
    assert path == store.session_dir / "artifacts" / f"{rec.id}.tif"
    with rasterio.open(path) as cog:
        assert cog.tags(ns="IMAGE_STRUCTURE")["LAYOUT"] == "COG"
        assert cog.profile["tiled"] and cog.overviews(1)  # 1024×768 > one 512 block: overviews exist
        assert cog.crs.to_epsg() == 32611 and cog.nodata == 0
        assert np.array_equal(cog.read(1), data)
    m = rec.metadata
    valid = data[data != 0].astype("float64")
    band = m.bands[0]
    assert (band.name, band.dtype, band.nodata) == ("burn_index", "uint16", 0.0)
    assert (band.min, band.max) == (valid.min(), valid.max()) and band.mean == pytest.approx(valid.mean(), rel=1e-12)
    assert m.pixel_area_m2 == 100 and m.resolution == (10.0, 10.0) and (m.width, m.height) == (1024, 768)
    assert (m.crs, m.crs_is_geographic) == ("EPSG:32611", False)
    assert (
        -118.2 < m.bounds_4326.minx < m.bounds_4326.maxx < -117.9
        and 34.1 < m.bounds_4326.miny < m.bounds_4326.maxy < 34.3
    )
    assert m.time == m.time_start == m.time_end == datetime(2025, 1, 20, 18, 30, tzinfo=UTC)


def test_large_raster_stats_come_from_a_decimated_read(tmp_path, monkeypatch):
    src = tmp_path / "big.tif"
    data = write_utm_raster(src, width=600, height=400)
    monkeypatch.setattr(store_inspect, "MAX_STATS_PIXELS", 10_000)
    band = store_inspect.raster_metadata(src).bands[0]
    valid = data[data != 0]
    assert valid.min() <= band.min < band.max <= valid.max()
    assert band.mean == pytest.approx(valid.mean(), rel=0.05)


def test_geographic_raster_gets_a_geodesic_pixel_area(store):
    rec = store.register_raster_file(HURST_PRE, source="data.s2", summary="Hurst pre-fire")
    m = rec.metadata
    assert m.crs == "EPSG:4326" and m.crs_is_geographic
    # 0.000179663° ≈ 19.9 m north-south and ≈ 16.5 m east-west at 34.33°N
    assert m.pixel_area_m2 == pytest.approx(329.4, rel=0.01)
    assert [b.name for b in m.bands] == ["B2", "B3", "B4", "B8", "B12"] and m.bands[0].dtype == "float64"
    assert m.bounds_4326.minx == pytest.approx(-118.50270, abs=1e-5)


# ----------------------------------------------------------------------------------- other artifacts
def test_table_text_and_item_set_round_trips(store):
    df = pd.DataFrame(
        {
            "i": np.array([1, 2], dtype="int32"),
            "f": [0.1, 0.2],
            "s": ["a", "b"],
            "b": [True, False],
            "t": pd.to_datetime(["2025-01-07", "2025-01-08"], utc=True),
        }
    )
    t = store.register_table(df, source="stats.zonal", summary="zonal stats")
    back = store.read_table(t.id)
    assert back.dtypes.astype(str).tolist() == df.dtypes.astype(str).tolist()
    pd.testing.assert_frame_equal(back, df, check_dtype=False)
    assert t.metadata.row_count == 2 and [c.name for c in t.metadata.columns] == ["i", "f", "s", "b", "t"]

    text = "# Bericht\n\nÜberflutung — 432 km²\n"
    x = store.register_text(text, source="report", summary="report", inputs=[t.id])
    assert store.read_text(x.id) == text and x.metadata.chars == len(text) and x.inputs == [t.id]

    items = [
        {
            "type": "Feature",
            "id": "S2A_1",
            "bbox": [-118.3, 34.0, -117.9, 34.4],
            "properties": {"datetime": "2025-01-20T18:40:00Z"},
            "geometry": None,
        },
        {
            "type": "Feature",
            "id": "S2B_2",
            "bbox": [-118.5, 34.1, -118.0, 34.5],
            "properties": {"datetime": "2025-01-25T18:40:00Z"},
            "geometry": None,
        },
    ]
    meta = ItemSetMeta(collection="sentinel-2-l2a", time_start=None, time_end=None, item_count=99, aoi_coverage=0.97)
    s = store.register_item_set(items, meta, source="stac.search", summary="S2 after the fire")
    assert (
        s.metadata.item_count == 2 and s.metadata.aoi_coverage == 0.97
    )  # count from the items, coverage from the search
    assert s.metadata.bounds_4326 == Bounds(minx=-118.5, miny=34.0, maxx=-117.9, maxy=34.5)
    assert s.metadata.time_start == datetime(2025, 1, 20, 18, 40, tzinfo=UTC)
    assert store.read_items(s.id) == items
    with pytest.raises(ValueError):
        store.read_text(s.id)


# ------------------------------------------------------------------------------------------- lookup
def test_find_and_overlapping_by_space_and_time(store, tmp_path):
    eaton = store.register_vector(gpd.read_file(EATON), source="user.aoi", summary="Eaton", kind=ArtifactKind.aoi)
    dins = store.register_vector(gpd.read_file(DINS), source="data.dins", summary="DINS")
    valencia = store.register_vector(gpd.read_file(VALENCIA_AOI), source="data.emsr773", summary="Valencia AOI")
    write_utm_raster(tmp_path / "r.tif", width=64, height=64, when="2025:01:20 18:30:00")
    raster = store.register_raster_file(tmp_path / "r.tif", source="raster.dnbr", summary="dNBR")
    pts = [Point(-118.1, 34.2), Point(-118.05, 34.19)]
    old = store.register_vector(
        gpd.GeoDataFrame({"t": pd.to_datetime(["2020-06-01", "2020-06-02"])}, geometry=pts, crs=4326),
        source="data.old",
        summary="2020 survey",
    )
    new = store.register_vector(
        gpd.GeoDataFrame({"t": pd.to_datetime(["2025-01-10", "2025-01-12"])}, geometry=pts, crs=4326),
        source="data.new",
        summary="2025 survey",
    )
    note = store.register_text("notes", source="report", summary="notes")

    assert [r.id for r in store.find(kind=ArtifactKind.aoi)] == [eaton.id]
    assert [r.id for r in store.find(kind="raster")] == [raster.id]
    assert [r.id for r in store.find(source="data.dins")] == [dins.id]
    assert [r.id for r in store.find(source_prefix="data.")] == [dins.id, valencia.id, old.id, new.id]
    assert [r.id for r in store.find(kind="vector", source_prefix="data.e")] == [valencia.id]
    assert store.find(source_prefix="data%") == []  # no LIKE wildcards
    assert store.ids() == [eaton.id, dins.id, valencia.id, raster.id, old.id, new.id, note.id]

    near_eaton = {r.id for r in store.overlapping(eaton.metadata.bounds_4326)}
    assert near_eaton == {eaton.id, dins.id, raster.id, old.id, new.id}
    assert valencia.id not in near_eaton and note.id not in near_eaton
    assert {r.id for r in store.overlapping(gpd.read_file(VALENCIA_AOI).geometry[0])} == {valencia.id}
    assert store.overlapping(Bounds(minx=10, miny=10, maxx=11, maxy=11)) == []
    jan_2025 = {
        r.id for r in store.overlapping(eaton.metadata.bounds_4326, datetime(2025, 1, 1), datetime(2025, 1, 31))
    }
    assert jan_2025 == {eaton.id, dins.id, raster.id, new.id}  # untimed layers match, the 2020 survey does not
    after_15th = {r.id for r in store.overlapping(None, time_start=datetime(2025, 1, 15, tzinfo=UTC), kind="vector")}
    assert after_15th == {dins.id, valencia.id}  # open-ended query; the timed surveys end before it
    assert {r.id for r in store.overlapping(None)} == set(store.ids())


def test_reopen_from_disk_gives_the_same_records(tmp_path):
    with ResponseStore(tmp_path / "s") as s:
        a = s.register_vector(
            gpd.read_file(EATON), source="user.aoi", summary="Eaton", kind=ArtifactKind.aoi, extra={"buffer_m": 150}
        )
        b = s.register_text("hello", source="report", summary="t", inputs=[a.id])
        before = s.records()
    with ResponseStore(tmp_path / "s") as s:
        assert s.records() == before and [r.id for r in s.records()] == [a.id, b.id]
        assert s.get(a.id).extra == {"buffer_m": 150} and s.get(b.id).inputs == [a.id]
        assert s.get(a.id).created_at == a.created_at and len(s.read_vector(a.id)) == 1


def test_unknown_artifact_for_a_hallucinated_id(store):
    rec = store.register_text("x", source="t", summary="t")
    with pytest.raises(UnknownArtifact) as err:
        store.get("a_deadbeef")
    assert isinstance(err.value, KeyError) and isinstance(err.value, GeoFahamError)
    assert "a_deadbeef" in str(err.value) and rec.id in str(err.value)
    assert str(store.session_dir) not in str(err.value) and "artifacts/" not in str(err.value)
    assert "a_deadbeef" not in store and rec.id in store
    for call in (store.abs_path, store.read_vector, store.read_text):
        with pytest.raises(UnknownArtifact):
            call("a_deadbeef")
    with pytest.raises(UnknownArtifact):  # lineage must point at real artifacts
        store.register_text("y", source="t", summary="t", inputs=["a_00000000"])
    assert store.ids() == [rec.id]


def test_concurrent_registration_from_threads(store):
    def work(i: int) -> str:
        return store.register_text(f"text {i}", source="thread", summary=str(i)).id

    stop = threading.Event()
    reads: list[int] = []

    def reader() -> None:  # the main thread reads while workers write
        while not stop.is_set():
            reads.append(len(store.records()))

    t = threading.Thread(target=reader)
    t.start()
    with ThreadPoolExecutor(4) as pool:
        ids = list(pool.map(work, range(24)))
    stop.set()
    t.join()
    assert len(set(ids)) == 24 and set(store.ids()) == set(ids) and reads
    assert sorted(store.read_text(i) for i in ids) == sorted(f"text {i}" for i in range(24))


# ------------------------------------------------------------------------------------------ recovery
def assert_consistent(session: Path, confirmed: set[str] = frozenset()) -> list[str]:
    """Open the store (which recovers) and check: every record's file exists with its sidecar, is
    readable and matches its metadata; no orphan, staging or temp files; every confirmed registration
    survived."""
    with ResponseStore(session) as s:
        ids = s.ids()
        assert confirmed <= set(ids), confirmed - set(ids)
        on_disk = sorted(p.name for p in s.artifacts_dir.iterdir())
        assert on_disk == sorted([Path(r.path).name for r in s.records()] + [f"{i}.record.json" for i in ids])
        assert all(s.verify(i) is None for i in ids)
        assert not any(s.staging_dir.iterdir()) and not list(session.rglob("*.tmp*"))
        for rec in s.records():
            path = s.abs_path(rec.id)
            if rec.kind is ArtifactKind.vector:
                assert pyogrio.read_info(path, layer=rec.id)["features"] == rec.metadata.feature_count
                assert len(s.read_vector(rec.id)) == rec.metadata.feature_count
            elif rec.kind is ArtifactKind.text:
                assert len(s.read_text(rec.id)) == rec.metadata.chars
            elif rec.kind is ArtifactKind.table:
                assert len(s.read_table(rec.id)) == rec.metadata.row_count
            elif rec.kind is ArtifactKind.raster:
                with rasterio.open(path) as r:
                    assert (r.width, r.height) == (rec.metadata.width, rec.metadata.height)
                    assert r.read(1).shape == (r.height, r.width)
    return ids


def test_recovery_sets_orphans_aside_and_drops_staging_and_records_without_file(tmp_path):
    session = tmp_path / "s"
    with ResponseStore(session) as s:
        keep = s.register_text("keep", source="t", summary="keep")
        lost = s.register_text("lost", source="t", summary="lost")
    (session / "artifacts" / f"{lost.id}.md").unlink()  # should not happen; must still reopen consistent
    (session / "artifacts" / "a_0badf00d.gpkg").write_bytes(b"half a file")
    (session / "artifacts" / f"{keep.id}.md.tmp123").write_bytes(b"partial")
    (session / ".staging" / "a_12345678.tif").write_bytes(b"staged")
    assert assert_consistent(session) == [keep.id]
    # the unexplained file and the record of the lost one are set aside, not deleted
    assert sorted(p.name for p in (session / "quarantine").iterdir()) == sorted(
        ["a_0badf00d.gpkg", f"{lost.id}.record.json"]  # the random id may sort before the fixed one
    )


def test_second_open_store_does_not_recover_under_a_live_one(tmp_path):
    """Recovery deletes staging files, so it runs only when no other open store uses the folder."""
    session = tmp_path / "s"
    first = ResponseStore(session)
    in_flight = first.staging_dir / "a_0000abcd.gpkg"  # as if ``first`` were writing it right now
    in_flight.write_bytes(b"being written")
    with ResponseStore(session) as second:
        rec = second.register_text("from the second", source="t", summary="t")
        assert in_flight.exists() and rec.id in first
    first.close()
    assert assert_consistent(session) == [rec.id] and not in_flight.exists()


def child_env(crash_at: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != CRASH_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    if crash_at:
        env[CRASH_ENV] = crash_at
    return env


def run_child(session: Path, source_tif: Path, seed: int, crash_at: str | None = None, count: int = 10_000):
    return subprocess.Popen(
        [sys.executable, str(CHILD), str(session), str(source_tif), str(seed), str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(crash_at),
        cwd=ROOT,
    )


@pytest.mark.parametrize("crash_at", ["staged", "moved"])
def test_crash_hook_leaves_no_record_and_recovery_cleans_up(tmp_path, crash_at):
    """Killed before the move: the staged file goes. Killed after it: the file is complete and has its
    sidecar, so the next open indexes it (a crash costs no finished work)."""
    session, tif = tmp_path / "s", tmp_path / "src.tif"
    write_utm_raster(tif, width=64, height=64)
    with ResponseStore(session) as s:
        first = s.register_text("before the crash", source="t", summary="t")
    expected = [first.id]
    for seed in range(4):  # the child's first registration kind depends on the seed
        proc = run_child(session, tif, seed, crash_at=crash_at, count=1)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == CRASH_EXIT_CODE, err
        assert "registered" not in out
        leftovers = (
            list((session / ".staging").iterdir())
            if crash_at == "staged"
            else [p for p in (session / "artifacts").iterdir() if p.name.split(".")[0] not in expected]
        )
        assert leftovers, "the hook should have left a file behind"
        with sqlite3.connect(session / "store.sqlite") as db:
            assert [r[0] for r in db.execute("SELECT id FROM artifacts ORDER BY seq")] == expected
        if crash_at == "moved":
            expected += sorted({p.name.split(".")[0] for p in leftovers})
        assert assert_consistent(session) == expected


@pytest.mark.slow
def test_sigkill_at_random_moments_leaves_a_consistent_store(tmp_path):
    session, tif = tmp_path / "s", tmp_path / "src.tif"
    write_utm_raster(tif, width=700, height=600)  # big enough that COG writing takes a while
    rng = random.Random(20250107)
    confirmed: set[str] = set()
    interrupted = 0
    for round_ in range(15):
        proc = run_child(session, tif, seed=round_)
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        time.sleep(rng.uniform(0.0, 0.8))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL
        confirmed |= {line.split()[1] for line in out.splitlines() if line.startswith("registered ")}
        with sqlite3.connect(session / "store.sqlite") as db:
            indexed = {r[0] for r in db.execute("SELECT id FROM artifacts")}
        unreferenced = [p for p in (session / "artifacts").iterdir() if p.name.split(".")[0] not in indexed]
        interrupted += bool(unreferenced or any((session / ".staging").iterdir()))
        ids = assert_consistent(session, confirmed)
    assert len(ids) >= 15  # the child did get work done between kills
    assert interrupted >= 1  # and some kills landed inside a registration, so recovery had work to do
