"""The disaster database on BOTH engines (SpatiaLite file, PostGIS from GEOFAHAM_PG_DSN), checked against
the sample-data README and an independent GeoPandas/pyproj computation made inside each test.

PostGIS runs in a throw-away schema per test session (dropped at the end), so reruns start clean."""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import shapely
import shapely.ops
from conftest import ROOT, SHARED_DATA
from pyproj import Geod, Transformer
from shapely.geometry import Point, Polygon

from geofaham_plugin.core.engines.db import ArtifactFile, SpatialEngine, open_engine
from geofaham_plugin.core.engines.db.loaders import load_file, load_samples
from geofaham_plugin.core.engines.layers import default_catalogue
from geofaham_plugin.core.errors import ToolFailed

GEOD = Geod(ellps="WGS84")
DSN = os.environ.get("GEOFAHAM_PG_DSN")
ENGINES = ("spatialite", "postgis")
_CACHE: dict[str, SpatialEngine] = {}

EATON_DINS = SHARED_DATA / "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson"
EATON_PERIMETER = SHARED_DATA / "eaton-2025/eaton_adjusted_fire_perimeter.geojson"
FLOOD = SHARED_DATA / "valencia-2024/emsr773_observed_flood_merged.geojson"
HOSPITALS = SHARED_DATA / "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson"
VALENCIA_HEALTH = SHARED_DATA / "valencia-2024/valencia_city_health_facilities.geojson"
CATARROJA = SHARED_DATA / "valencia-2024/catarroja_public_buildings_dana.geojson"


def loaded_engine(kind: str) -> SpatialEngine:
    """One loaded database per engine and test session (shared with test_sql_safety.py)."""
    if kind not in _CACHE:
        if kind == "postgis":
            if not DSN:
                pytest.skip("GEOFAHAM_PG_DSN is not set")
            engine = open_engine("postgis", dsn=DSN, schema=f"gf_test_{uuid.uuid4().hex[:8]}")

            def drop(e=engine) -> None:
                e.drop_schema()
                e.close()
        else:
            folder = Path(tempfile.mkdtemp(prefix="gf_db_"))
            engine = open_engine("spatialite", db_path=folder / "test.sqlite")

            def drop(e=engine, f=folder) -> None:
                e.close()
                shutil.rmtree(f, ignore_errors=True)

        engine.init(reset=True)
        load_samples(engine, SHARED_DATA)
        atexit.register(drop)
        _CACHE[kind] = engine
    return _CACHE[kind]


@pytest.fixture(params=ENGINES)
def engine(request) -> SpatialEngine:
    return loaded_engine(request.param)


def nearest_geodesic_m(point, area_4326) -> float:
    """Reference distance: nearest points found in the UTM zone, then the geodesic between them."""
    lon, lat = point.x, point.y
    epsg = (32600 if lat >= 0 else 32700) + int((lon + 180) // 6) + 1
    fwd = Transformer.from_crs(4326, epsg, always_xy=True)
    back = Transformer.from_crs(epsg, 4326, always_xy=True)
    p = shapely.ops.transform(fwd.transform, point)
    a = shapely.ops.transform(fwd.transform, area_4326)
    if a.intersects(p):
        return 0.0
    (x1, y1), (x2, y2) = shapely.shortest_line(p, a).coords
    lon1, lat1 = back.transform(x1, y1)
    lon2, lat2 = back.transform(x2, y2)
    return GEOD.inv(lon1, lat1, lon2, lat2)[2]


def eaton_perimeter_4326():
    return gpd.read_file(EATON_PERIMETER).to_crs(4326).geometry.union_all()


# ------------------------------------------------------------------------------------------- schema
def test_schema_seeds_all_17_events_with_rough_aoi(engine):
    rows = engine.run_sql("SELECT id, type, name, ST_IsEmpty(aoi) AS empty FROM events ORDER BY id").rows
    assert [r[0] for r in rows] == list(range(1, 18))  # every record, with or without layers
    assert all(not r[3] for r in rows)
    assert dict((r[0], r[2]) for r in rows)[6] == "Valencia DANA flood"


def test_spatial_indexes_exist(engine):
    if engine.name == "postgis":
        rows = engine.run_sql(
            "SELECT tablename, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexdef LIKE '%gist%'"
        ).rows
        indexed = {t for t, _ in rows}
        assert any("geography" in d for _, d in rows)
    else:
        rows = engine.run_sql("SELECT f_table_name FROM geometry_columns WHERE spatial_index_enabled = 1").rows
        indexed = {r[0] for r in rows}
    assert {"events", "damage", "flood_extents", "burn_perimeters", "features"} <= indexed


def test_load_log_records_repairs_skips_and_choices(engine):
    log = {(r["source_layer"], r["target_table"]): r for r in engine.status()["load_log"]}
    burn = log[("lahaina_burn", "burn_perimeters")]
    assert (burn["read_count"], burn["loaded_count"], burn["repaired_count"]) == (7, 7, 2)
    labels = log[("lahaina_labels", "damage")]
    assert (labels["read_count"], labels["loaded_count"], labels["skipped_count"], labels["repaired_count"]) == (
        106,
        79,
        27,
        1,
    )
    assert "Background" in labels["notes"]
    pal = log[("palisades_dins", "damage")]
    assert (pal["event_id"], pal["loaded_count"]) == (14, 11988)
    assert log[("eaton_perimeter", "burn_perimeters")]["source_crs"] == "EPSG:26911"
    tables = engine.status()["tables"]
    assert tables["damage"] == {"11": 5805, "14": 11988, "16": 79}
    assert tables["flood_extents"] == {"6": 1}


def test_microsoft_labels_keep_raw_and_map_documented_classes(engine):
    rows = engine.run_sql(
        "SELECT raw_damage, damage_class, is_damaged, count(*) FROM damage WHERE event_id = 16 "
        "GROUP BY 1, 2, 3 ORDER BY 1"
    ).rows
    assert [(r[0], r[1], bool(r[2]), r[3]) for r in rows] == [
        ("Building", "none", False, 44),
        ("Damaged Building", None, True, 35),
    ]


def test_reloading_a_source_replaces_its_rows(engine):
    before = engine.status()["tables"]["damage"]["11"]
    load_samples(engine, SHARED_DATA, only=["eaton_dins"])
    assert engine.status()["tables"]["damage"]["11"] == before == 5805


def test_eaton_reprojection_is_right(engine):
    """The perimeter came in EPSG:26911: back in that CRS it measures the README's 62.88 km²; its
    geodesic area (status) matches pyproj's on the original polygon."""
    planar = engine.run_sql(
        "SELECT ST_Area(ST_Transform(geom, 26911)) / 1e6 FROM burn_perimeters WHERE source = 'eaton_perimeter'"
    ).rows[0][0]
    assert planar == pytest.approx(62.88, abs=0.005)
    reference = abs(GEOD.geometry_area_perimeter(eaton_perimeter_4326())[0]) / 1e6
    hazard = next(h for h in engine.status()["hazards"] if h["source"] == "eaton_perimeter")
    assert hazard["area_km2"] == pytest.approx(reference, rel=1e-4)
    assert hazard["area_km2"] == pytest.approx(62.88, rel=1e-3)  # UTM scale factor here: ~0.06 %


# -------------------------------------------------------------------------------------- README facts
def test_eaton_dins_inside_perimeter_by_class(engine):
    points = gpd.read_file(EATON_DINS)
    inside = points[points.intersects(eaton_perimeter_4326())]
    expected = default_catalogue().damage_class_series(inside, "DAMAGE").value_counts().to_dict()
    counted = engine.count_damage(11)
    assert counted.total == len(inside) == 5431  # README: 5,431 of the points lie inside
    assert {k: v for k, v in counted.by_class.items() if v} == expected
    assert counted.by_raw == inside["DAMAGE"].value_counts().to_dict()
    assert counted.damaged == counted.total - counted.by_class["none"]
    assert counted.to_frame()["count"].sum() == 5431


def test_valencia_public_buildings_and_health_facilities_in_the_flood(engine):
    flood = gpd.read_file(FLOOD).geometry.union_all()
    buildings = gpd.read_file(CATARROJA)
    health = gpd.read_file(VALENCIA_HEALTH)
    got_b = engine.select_inside("features", 6, feature_class="public_buildings")
    assert len(buildings) == 20 and len(got_b) == 9  # README: 9 of the 20
    assert sorted(got_b["name"]) == sorted(buildings[buildings.intersects(flood)]["titulo"])
    got_h = engine.select_inside("features", 6, feature_class="healthcare", source_layer="valencia_health")
    assert (
        sorted(got_h["name"])
        == sorted(health[health.intersects(flood)]["equipamien"])
        == sorted(
            [
                "CONSULTORIO AUXILIAR BARRIO LA TORRE",
                "CONSULTORIO AUXILIAR HORNO DE ALCEDO",
                "CENTRO DE SALUD CASTELLAR-OLIVERAL",
                "CONSULTORIO AUXILIAR EL PALMAR",
            ]
        )
    )
    near = engine.select_within("features", 6, 1000, feature_class="healthcare", source_layer="valencia_health")
    # independent: metres in ETRS89 / UTM 30N, the README's CRS for this flood
    ref = health.to_crs(25830).distance(gpd.GeoSeries([flood], crs=4326).to_crs(25830).iloc[0]) <= 1000
    assert len(near) == int(ref.sum()) == 19  # README: 19 within 1 km
    assert (near["distance_m"].iloc[:4] == 0).all() and near["distance_m"].is_monotonic_increasing


def test_eaton_hospitals_within_5km_with_geodesic_distances(engine):
    area = eaton_perimeter_4326()
    hospitals = gpd.read_file(HOSPITALS)
    reference = {
        name: nearest_geodesic_m(p, area) for name, p in zip(hospitals["NAME"], hospitals.geometry, strict=False)
    }
    expected = sorted((d, n) for n, d in reference.items() if d <= 5000)
    got = engine.select_within("features", 11, 5000, feature_class="healthcare")
    assert len(got) == len(expected) == 7  # README: 7 within 5 km
    assert list(got["name"]) == [n for _, n in expected]
    for name, dist in zip(got["name"], got["distance_m"], strict=False):
        assert abs(dist - reference[name]) < 1.0, (name, dist, reference[name])
    by_name = dict(zip(got["name"], got["distance_m"], strict=False))
    assert (
        got["name"].iloc[0] == "AURORA LAS ENCINAS HOSPITAL" and round(by_name[got["name"].iloc[0]] / 1000, 2) == 2.09
    )
    assert round(by_name["HUNTINGTON HOSPITAL"] / 1000, 2) == 4.75
    assert not len(engine.select_within("features", 11, 1000, feature_class="healthcare"))  # none within 1 km
    assert got.crs.to_epsg() == 4326


def test_palisades_hull_stand_in_and_hospitals(engine):
    got = engine.select_within("features", 14, 5000, feature_class="healthcare")
    assert len(got) == 3  # README: 3 within 5 km of the hull of the Destroyed DINS points
    assert got["name"].iloc[0].startswith("SANTA MONICA") and round(got["distance_m"].iloc[0] / 1000, 2) == 2.88
    assert "stand-in" in next(
        r["notes"] for r in engine.status()["load_log"] if r["source_layer"] == "palisades_destroyed_hull"
    )


def test_lahaina_damaged_labels_inside_burn_area(engine):
    counted = engine.count_damage(16)
    assert counted.by_raw["Damaged Building"] == 33  # README: 33 of the 35 intersect the burn area
    assert counted.by_class["unclassified"] == 33 and counted.damaged == 33


def test_area_artifact_from_the_store(engine, store):
    perimeter = gpd.read_file(EATON_PERIMETER)  # stays in EPSG:26911 in the artifact
    rec = store.register_vector(perimeter, source="test", summary="Eaton perimeter")
    counted = engine.count_damage(11, area=ArtifactFile.from_store(store, rec.id))
    assert counted.total == 5431 and counted.area == f"artifact {rec.id}"
    destroyed = engine.select_inside("damage", 11, ArtifactFile.from_store(store, rec.id), damage_classes=["destroyed"])
    assert len(destroyed) == counted.by_class["destroyed"]
    out = store.register_vector(destroyed, source="vector.db_inside", summary="destroyed", inputs=[rec.id])
    back = store.read_vector(out.id)
    assert len(back) == len(destroyed) and back.crs.to_epsg() == 4326 and set(back["damage_class"]) == {"destroyed"}
    points = store.register_vector(gpd.GeoDataFrame(geometry=[Point(-118.1, 34.2)], crs=4326), source="t", summary="p")
    with pytest.raises(ToolFailed) as exc:
        engine.count_damage(11, area=ArtifactFile.from_store(store, points.id))
    assert exc.value.kind == "invalid_input" and "polygon" in exc.value.hint


def test_event_without_hazard_is_a_typed_failure(engine):
    with pytest.raises(ToolFailed) as exc:
        engine.count_damage(1)
    assert exc.value.kind == "not_found" and "area artifact" in exc.value.hint


def test_load_file_generic_geojson_repairs_and_counts(engine, tmp_path):
    bowtie = Polygon([(-0.40, 39.40), (-0.39, 39.41), (-0.39, 39.40), (-0.40, 39.41), (-0.40, 39.40)])
    gdf = gpd.GeoDataFrame({"name": ["Shelter A", "Shelter B"]}, geometry=[bowtie, Point(-0.41, 39.40)], crs=4326)
    path = tmp_path / "shelters.geojson"
    gdf.to_file(path, driver="GeoJSON")
    report = load_file(engine, path, table="features", event_id=6, feature_class="shelters")
    assert (report.read, report.loaded, report.repaired) == (2, 2, 1)
    rows = engine.run_sql(
        "SELECT name, ST_IsValid(geom) FROM features WHERE source_layer = 'shelters' ORDER BY name"
    ).rows
    assert [(r[0], bool(r[1])) for r in rows] == [("Shelter A", True), ("Shelter B", True)]
    load_file(engine, path, table="features", event_id=6, feature_class="shelters")  # reload: replaced
    assert engine.run_sql("SELECT count(*) FROM features WHERE source_layer = 'shelters'").rows[0][0] == 2


def test_both_engines_agree():
    if not DSN:
        pytest.skip("GEOFAHAM_PG_DSN is not set")
    lite, pg = loaded_engine("spatialite"), loaded_engine("postgis")
    for event in (11, 14, 16, 6):
        assert lite.count_damage(event) == pg.count_damage(event)
    a = lite.select_within("features", 11, 5000, feature_class="healthcare")
    b = pg.select_within("features", 11, 5000, feature_class="healthcare")
    assert list(a["name"]) == list(b["name"])
    np.testing.assert_allclose(a["distance_m"], b["distance_m"], atol=0.5)
    areas = [sorted((h["source"], h["area_km2"]) for h in e.status()["hazards"]) for e in (lite, pg)]
    assert [s for s, _ in areas[0]] == [s for s, _ in areas[1]]
    np.testing.assert_allclose([a for _, a in areas[0]], [a for _, a in areas[1]], rtol=1e-4, atol=0.002)


def test_query_result_exports_a_layer(engine):
    result = engine.run_sql(
        "SELECT id, name, tags, geom FROM features WHERE feature_class = 'healthcare' AND event_id IS NULL ORDER BY id",
        row_cap=5,
    )
    assert result.truncated and len(result.rows) == 5 and result.geometry_columns == ["geom"]
    gdf = result.to_gdf()
    assert gdf.crs.to_epsg() == 4326 and gdf.geometry.geom_type.eq("Point").all()
    assert isinstance(json.loads(gdf["tags"].iloc[0]), dict)
    with pytest.raises(ToolFailed):
        engine.run_sql("SELECT count(*) FROM damage").to_gdf()


def test_open_engine_picks_postgis_only_when_a_dsn_is_configured(tmp_path):
    from geofaham_plugin.core.config import settings_from_env
    from geofaham_plugin.core.engines.db.spatialite import SpatiaLiteEngine

    lite = open_engine(settings=settings_from_env({"GEOFAHAM_CACHE": str(tmp_path)}))
    assert isinstance(lite, SpatiaLiteEngine) and lite.path == tmp_path / "db" / "geofaham.sqlite"
    with pytest.raises(ToolFailed) as exc:
        lite.count_damage(11)  # no database yet: a typed failure that says how to make one
    assert exc.value.kind == "not_found" and "db init" in exc.value.hint


def test_postgis_reconnects_after_losing_its_connection():
    if not DSN:
        pytest.skip("GEOFAHAM_PG_DSN is not set")
    import psycopg2

    shared = loaded_engine("postgis")
    engine = open_engine("postgis", dsn=DSN, schema=shared.schema)  # type: ignore[attr-defined]
    try:
        killer = psycopg2.connect(DSN)
        killer.autocommit = True
        with killer.cursor() as cur:
            cur.execute("SELECT pg_terminate_backend(%s)", (engine._conn.get_backend_pid(),))
        killer.close()
        with pytest.raises(ToolFailed) as exc:
            engine.count_damage(11)
        assert exc.value.kind == "error"
        assert engine.count_damage(11).total == 5431  # a fresh connection, search path restored
    finally:
        engine.close()


# --------------------------------------------------------------------------------------------- CLI
def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "geofaham_plugin", "db", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "GEOFAHAM_DATA_DIR": str(SHARED_DATA), **(env or {})},
    )


def test_cli_init_load_status_sql_spatialite(tmp_path):
    db = ["--engine", "spatialite", "--db", str(tmp_path / "cli.sqlite")]
    assert _cli("init", *db).returncode == 0
    out = _cli("load", *db, "--only", "eaton_perimeter", "eaton_dins")
    assert out.returncode == 0, out.stderr
    assert re.search(r"eaton_dins\s+-> damage\s+event 11\s+read\s+5805 loaded\s+5805", out.stdout)
    status = json.loads(_cli("status", *db).stdout)
    assert status["events"] == 17 and status["tables"]["damage"] == {"11": 5805}
    out = _cli("sql", "SELECT count(*) AS n FROM damage WHERE damage_class = 'destroyed'", *db)
    assert out.returncode == 0 and "2722" in out.stdout
    refused = _cli("sql", "DROP TABLE damage", *db)
    assert refused.returncode == 2 and "only SELECT or WITH" in refused.stderr
    gj = tmp_path / "h.geojson"
    gpd.read_file(VALENCIA_HEALTH).to_file(gj, driver="GeoJSON")
    out = _cli("load-file", str(gj), "--table", "features", "--event", "6", "--class", "healthcare", *db)
    assert out.returncode == 0 and "loaded     64" in out.stdout, out.stdout + out.stderr


def test_cli_status_postgis_schema():
    if not DSN:
        pytest.skip("GEOFAHAM_PG_DSN is not set")
    schema = f"gf_cli_{uuid.uuid4().hex[:8]}"
    try:
        assert _cli("init", "--dsn", DSN, "--schema", schema).returncode == 0
        status = json.loads(_cli("status", "--schema", schema, env={"GEOFAHAM_PG_DSN": DSN}).stdout)
        assert status["events"] == 17 and status["engine"].startswith("postgis") and "geofaham:***@" in status["engine"]
    finally:
        open_engine("postgis", dsn=DSN, schema=schema).drop_schema()
