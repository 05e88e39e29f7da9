"""The external batch split (``bench/batch_external/``): the tasks file loads, the inputs generate deterministically,
and the independent grader scores a hand-made correct output of every task 1.0 and deliberately wrong ones (wrong CRS,
a dropped column, a wrong count, a wrong measure, a missing file) below 1. The product is never run here."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from pyproj import Geod
from shapely.ops import nearest_points, unary_union

from bench.batch_external import make_inputs, run
from bench.batch_external.grade import CHECKS, FORMATS, grade_task, load_tasks, read_input

UTM, WGS = "EPSG:32630", "EPSG:4326"
GEOD = Geod(ellps="WGS84")
TASKS = {t["id"]: t for t in load_tasks()}
needs_sample_data = pytest.mark.skipif(not make_inputs.LAHAINA_LABELS.is_file(), reason="sample data not present")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    names = [n for n in make_inputs.WRITERS if n not in make_inputs.REAL_INPUTS or make_inputs.LAHAINA_LABELS.is_file()]
    dest = tmp_path_factory.mktemp("bx_inputs")
    make_inputs.write_inputs(dest, names)
    return dest


# ------------------------------------------------------------------------------------------- the tasks file
def test_tasks_file_loads_and_is_well_formed():
    tasks = load_tasks()
    assert 30 <= len(tasks) <= 40
    assert len(TASKS) == len(tasks), "task ids are unique"
    for t in tasks:
        assert {"id", "kind", "language", "instruction", "inputs", "outputs", "grade", "checks"} <= set(t), t["id"]
        assert t["id"].startswith("bx_")
        assert set(t["inputs"]) <= set(make_inputs.WRITERS), t["id"]
        assert t["grade"]["kind"] in CHECKS, t["id"]
        for spec in t["outputs"]:
            assert spec["format"].lower() in FORMATS, t["id"]
            assert set(spec) <= set(run.SPEC_KEYS), t["id"]
            if spec["format"] == "Shapefile":
                assert all(len(c) <= 10 for c in spec.get("columns", [])), t["id"]
    languages = [t["language"] for t in tasks]
    assert sum(lang != "en" for lang in languages) >= 8
    assert {"es", "fr", "pt"} <= set(languages)


def test_crs_said_in_words_is_not_given_in_the_output_spec():
    for t in TASKS.values():
        if "expect_crs" in t["grade"]:
            assert all("crs" not in spec for spec in t["outputs"]), t["id"]
            assert "EPSG" not in t["instruction"] and "3857" not in t["instruction"], t["id"]


def test_runner_passes_only_the_documented_interface(tmp_path):
    task = TASKS["bx_buffer_clinics_each"]
    cmd = run.product_command("py", task, tmp_path / "in", tmp_path / "o.json", tmp_path / "out")
    assert cmd[:4] == ["py", "-m", "geofaham_plugin", "batch"]
    assert cmd[cmd.index("--instruction") + 1] == task["instruction"]
    assert run.output_specs(task) == task["outputs"]
    rows = [
        {"score": 1.0, "exit_code": 0, "timed_out": False, "seconds": 3.0},
        {"score": 0.5, "exit_code": 0, "timed_out": False, "seconds": 5.0},
    ]
    assert run.summarise(rows)["wrong_but_reported_written"] == 1
    assert run.summarise(rows)["fully_correct"] == 1


# ------------------------------------------------------------------------------------------- the inputs
def _fingerprint(path: Path) -> object:
    if path.suffix in (".csv", ".geojson", ".kml", ".prj", ".cpg"):
        return path.read_bytes()
    if path.suffix == ".parquet":
        gdf = gpd.read_parquet(path)
    elif path.suffix == ".gpkg":
        import pyogrio

        return [
            (str(n), gpd.read_file(path, layer=str(n)).to_wkb(hex=True).to_json()) for n, _ in pyogrio.list_layers(path)
        ]
    else:
        gdf = gpd.read_file(path)
    return (gdf.to_wkb(hex=True).to_json(), str(gdf.crs))


def test_inputs_generate_deterministically(tmp_path):
    names = [n for n in make_inputs.WRITERS if n not in make_inputs.REAL_INPUTS]
    a, b = make_inputs.write_inputs(tmp_path / "a", names), make_inputs.write_inputs(tmp_path / "b", names)
    for pa, pb in zip(a, b, strict=True):
        assert _fingerprint(pa) == _fingerprint(pb), pa.name


def test_inputs_carry_the_messiness_the_tasks_are_about(inputs):
    wells = gpd.read_file(inputs / "wells.shp")
    assert wells.crs.to_epsg() == 32630 and (inputs / "wells.cpg").is_file()
    assert "depth_metr" in wells.columns and wells["depth_metr"].isna().sum() == 7
    assert not gpd.read_file(inputs / "parcels.gpkg").is_valid.all()
    survey = gpd.read_parquet(inputs / "survey_points.parquet")
    assert len(survey) - len(survey.to_wkb().drop_duplicates()) == 6
    schools = gpd.read_file(inputs / "schools.fgb")
    assert schools.crs.to_epsg() == 3857 and schools["enrolment"].map(type).eq(str).all()
    kml = gpd.read_file(inputs / "flood_zones.kml")
    assert {"zone_id", "severity"} <= set(kml.columns)
    posts = read_input(inputs, "health_posts.csv")
    assert len(posts) == 16 and posts.geometry.to_wkt().nunique() == 12
    import pyogrio

    assert len(pyogrio.list_layers(inputs / "districts.gpkg")) == 2
    fields = gpd.read_file(inputs / "field_boundaries.gpkg")
    first, second = shapely.get_coordinates(fields.geometry.iloc[0]), shapely.get_coordinates(fields.geometry.iloc[1])
    gaps = np.hypot(first[:, None, 0] - second[None, :, 0], first[:, None, 1] - second[None, :, 1])
    assert 0 < gaps.min() < 0.5, "shared corners nearly, not exactly, meet"


def test_thresholds_leave_no_tie(inputs):
    roads = gpd.read_file(inputs / "roads.geojson")
    lengths = sorted((GEOD.geometry_length(g) for g in roads.geometry), reverse=True)
    assert lengths[4] > lengths[5] * 1.05
    wells = read_input(inputs, "wells.shp").to_crs(UTM)
    area = read_input(inputs, "study_area.geojson").to_crs(UTM).geometry.iloc[0]
    assert wells.distance(area.boundary).min() > 1.0
    districts = read_input(inputs, "districts.gpkg", "districts").to_crs(UTM)
    assert (
        gpd.sjoin(districts, wells).groupby("district_id").size().reindex(districts["district_id"]).isna()
    ).sum() == 1


# ------------------------------------------------------------------------------------------- hand-made answers
def _d(i: Path) -> gpd.GeoDataFrame:
    return read_input(i, "districts.gpkg", "districts")


def _write(gdf: gpd.GeoDataFrame | pd.DataFrame, path: Path, fmt: str) -> None:
    if fmt == "GeoParquet":
        gdf.to_parquet(path)
    elif fmt == "CSV":
        pd.DataFrame(gdf).drop(columns="geometry", errors="ignore").to_csv(path, index=False)
    elif fmt == "JSON":
        path.write_text(pd.DataFrame(gdf).to_json(orient="records"), encoding="utf-8")
    else:
        driver = {
            "GPKG": "GPKG",
            "GeoJSON": "GeoJSON",
            "Shapefile": "ESRI Shapefile",
            "KML": "LIBKML",
            "FlatGeobuf": "FlatGeobuf",
        }[fmt]
        gdf.to_file(path, driver=driver)


def _first(cols: list[str], gdf: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    rest = [c for c in gdf.columns if c not in cols and c != "geometry"]
    return gdf[cols + rest + ["geometry"]]


def _valid(g: shapely.Geometry) -> shapely.Geometry:
    g = shapely.make_valid(g)
    if g.geom_type == "GeometryCollection":
        g = unary_union([p for p in g.geoms if p.geom_type in ("Polygon", "MultiPolygon")])
    return g


def _snap_vertices(gdf: gpd.GeoDataFrame, tol: float) -> gpd.GeoDataFrame:
    anchors: list[tuple[float, float]] = []

    def snap(xy: np.ndarray) -> np.ndarray:
        out = []
        for x, y in xy:
            hit = next((a for a in anchors if math.dist(a, (x, y)) < tol), None)
            if hit is None:
                anchors.append((x, y))
                hit = (x, y)
            out.append(hit)
        return np.array(out)

    return gdf.assign(geometry=[shapely.transform(g, snap) for g in gdf.geometry])


def solve(task_id: str, i: Path) -> gpd.GeoDataFrame | pd.DataFrame:
    """A correct answer of each task, made with plain GeoPandas."""
    wells = read_input(i, "wells.shp") if "wells.shp" in TASKS[task_id]["inputs"] else None
    if task_id == "bx_conv_wells_gpkg":
        return wells
    if task_id in ("bx_conv_flood_geojson", "bx_reproj_flood_webmerc"):
        z = read_input(i, "flood_zones.kml")[["zone_id", "severity", "geometry"]]
        return z if task_id == "bx_conv_flood_geojson" else z.to_crs("EPSG:3857")
    if task_id == "bx_conv_schools_csv":
        s = read_input(i, "schools.fgb").to_crs(WGS)
        return pd.DataFrame(
            {"school_id": s.school_id, "name": s.name, "latitude": s.geometry.y, "longitude": s.geometry.x}
        )
    if task_id == "bx_conv_roads_kml_fr":
        return read_input(i, "roads.geojson")[["road_id", "class", "geometry"]]
    if task_id == "bx_reproj_districts_utm":
        return _d(i).to_crs(UTM)
    if task_id == "bx_reproj_wells_latlon":
        return wells.to_crs(WGS)
    if task_id == "bx_reproj_schools_utm_es":
        return read_input(i, "schools.fgb").to_crs(UTM)
    if task_id == "bx_repair_parcels":
        p = read_input(i, "parcels.gpkg", "parcels")
        return p.assign(geometry=[_valid(g) for g in p.geometry])
    if task_id == "bx_repair_lahaina_fr":
        p = read_input(i, "lahaina_labels.geojson")
        return _first(["class"], p.assign(geometry=[_valid(g) for g in p.geometry]))
    if task_id == "bx_dedupe_survey":
        s = read_input(i, "survey_points.parquet")
        return s.loc[~pd.DataFrame(s.drop(columns="geometry")).assign(w=s.to_wkb().geometry).duplicated()]
    if task_id == "bx_dedupe_posts_pt":
        p = read_input(i, "health_posts.csv")
        return p.loc[~p.to_wkb().geometry.duplicated()]
    if task_id == "bx_snap_meters":
        m = read_input(i, "water_meters.geojson").to_crs(UTM)
        lines = unary_union(list(read_input(i, "roads.geojson").to_crs(UTM).geometry))
        return m.assign(geometry=[nearest_points(lines, p)[0] for p in m.geometry])
    if task_id == "bx_snap_fields":
        return _snap_vertices(read_input(i, "field_boundaries.gpkg", "fields"), 0.5)
    if task_id == "bx_intersect_flood_districts":
        z = read_input(i, "flood_zones.kml")[["zone_id", "severity", "geometry"]]
        return _first(
            ["district_id", "zone_id", "severity"], gpd.overlay(_d(i).to_crs(UTM), z.to_crs(UTM), how="intersection")
        )
    if task_id == "bx_difference_protected":
        d = _d(i).to_crs(UTM)
        pa = unary_union(list(read_input(i, "protected_areas.shp").geometry))
        return d.assign(geometry=d.geometry.difference(pa))
    if task_id == "bx_symdiff_coverage_es":
        a = read_input(i, "coverage_2019.geojson").to_crs(UTM)
        b = read_input(i, "coverage_2023.shp")
        return gpd.overlay(a, b, how="symmetric_difference")
    if task_id == "bx_union_floods":
        a = read_input(i, "flood_river.geojson").to_crs(UTM)
        return _first(["river_id", "cell_id"], gpd.overlay(a, read_input(i, "flood_rain.gpkg"), how="union"))
    if task_id == "bx_join_wells_district":
        j = gpd.sjoin(wells, _d(i).to_crs(UTM)[["district_id", "name", "geometry"]], how="left")
        return _first(["well_id", "district_id"], j.drop(columns="index_right"))
    if task_id == "bx_join_clinics_flood_es":
        c = read_input(i, "clinics.csv")
        z = read_input(i, "flood_zones.kml")[["severity", "geometry"]]
        return _first(["clinic_id", "severity"], gpd.sjoin(c, z, how="left").drop(columns="index_right"))
    if task_id in ("bx_count_wells_district", "bx_count_schools_flood_fr"):
        if task_id == "bx_count_wells_district":
            poly, pts, key, col = _d(i).to_crs(UTM), wells, "district_id", "well_count"
        else:
            poly, key, col = read_input(i, "flood_zones.kml").to_crs(UTM), "zone_id", "nb_ecoles"
            pts = read_input(i, "schools.fgb").to_crs(UTM)
        counts = gpd.sjoin(pts, poly[[key, "geometry"]]).groupby(key).size()
        return _first([key, col], poly.assign(**{col: poly[key].map(counts).fillna(0).astype(int)}))
    if task_id == "bx_stats_yield_status":
        g = wells.groupby("status")["yield_lpm"]
        return pd.DataFrame({"status": g.sum().index, "yield_total": g.sum().values, "yield_mean": g.mean().values})
    if task_id == "bx_stats_pop_region_pt":
        s = _d(i).groupby("region")["pop"].sum()
        return pd.DataFrame({"region": s.index, "pop_total": s.values})
    if task_id == "bx_buffer_clinics_each":
        c = read_input(i, "clinics.csv").to_crs(UTM)
        return _first(["clinic_id"], c.assign(geometry=c.buffer(500)))
    if task_id == "bx_buffer_roads_dissolved":
        r = read_input(i, "roads.geojson").to_crs(UTM)
        r = r[r["class"].isin(["primary", "secondary"])]
        return gpd.GeoDataFrame({"id": [1]}, geometry=[unary_union(list(r.buffer(100)))], crs=UTM)
    if task_id == "bx_filter_big_hospitals":
        c = read_input(i, "clinics.csv")
        return _first(["clinic_id", "beds"], c[(c["type"] == "hospital") & (c["beds"] >= 50)])
    if task_id == "bx_filter_wells_working_es":
        return _first(["well_id", "status"], wells[wells["status"] == "functional"])
    if task_id == "bx_nearest_clinic":
        s = read_input(i, "schools.fgb").to_crs(UTM)
        c = read_input(i, "clinics.csv").to_crs(UTM)[["clinic_id", "geometry"]]
        j = gpd.sjoin_nearest(s, c, distance_col="distance_m").drop(columns="index_right")
        return _first(["school_id", "clinic_id", "distance_m"], j)
    if task_id == "bx_clip_roads":
        r = read_input(i, "roads.geojson").to_crs(UTM)
        return gpd.clip(r, read_input(i, "study_area.geojson").to_crs(UTM))
    if task_id == "bx_dropnull_depth":
        return wells[wells["depth_metr"].notna()]
    if task_id == "bx_coerce_enrolment":
        s = read_input(i, "schools.fgb")
        return _first(["school_id", "enrolment"], s.assign(enrolment=s["enrolment"].str.strip().astype(int)))
    if task_id in ("bx_topn_longest_roads", "bx_length_roads_km_pt"):
        r = read_input(i, "roads.geojson")
        length = np.array([GEOD.geometry_length(g) for g in r.geometry])
        if task_id == "bx_length_roads_km_pt":
            return _first(["road_id", "comprimento_km"], r.assign(comprimento_km=length / 1000))
        return _first(["road_id", "length_m"], r.assign(length_m=length).nlargest(5, "length_m"))
    if task_id == "bx_area_districts_ha":
        d = _d(i)
        return _first(
            ["district_id", "area_ha"],
            d.assign(area_ha=[abs(GEOD.geometry_area_perimeter(g)[0]) / 1e4 for g in d.geometry]),
        )
    if task_id == "bx_clip_wells_fr":
        area = read_input(i, "study_area.geojson").to_crs(UTM).geometry.iloc[0]
        return wells[wells.intersects(area)]
    raise KeyError(task_id)


def _answer(task_id: str, inputs: Path, out: Path, tamper: Callable | None = None) -> dict:
    task = TASKS[task_id]
    spec = task["outputs"][0]
    result = solve(task_id, inputs)
    if tamper is not None:
        result = tamper(result, inputs)
    out.mkdir(parents=True, exist_ok=True)
    _write(result, out / spec["name"], spec["format"])
    return grade_task(task, inputs, out)


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_a_correct_answer_scores_one(task_id, inputs, tmp_path):
    if "lahaina_labels.geojson" in TASKS[task_id]["inputs"] and not make_inputs.LAHAINA_LABELS.is_file():
        pytest.skip("sample data not present")
    graded = _answer(task_id, inputs, tmp_path)
    assert graded["score"] == 1.0, json.dumps(graded["reasons"], ensure_ascii=False)


WRONG: dict[str, tuple[str, Callable]] = {
    # wrong CRS: kept in the source's lon/lat where UTM zone 30 north was asked
    "wrong CRS (districts left in lon/lat)": ("bx_reproj_districts_utm", lambda g, i: g.to_crs(WGS)),
    "wrong CRS (schools in Web Mercator)": ("bx_reproj_schools_utm_es", lambda g, i: g.to_crs("EPSG:3857")),
    # a dropped column
    "dropped severity": ("bx_join_clinics_flood_es", lambda g, i: g.drop(columns="severity")),
    "dropped distance": ("bx_nearest_clinic", lambda g, i: g.drop(columns="distance_m")),
    # a wrong count
    "one well lost": ("bx_conv_wells_gpkg", lambda g, i: g.iloc[1:]),
    "a district dropped for having no well": ("bx_count_wells_district", lambda g, i: g[g["well_count"] > 0]),
    "duplicates kept": ("bx_dedupe_survey", lambda g, i: pd.concat([g, g.iloc[:3]])),
    "buffers merged": ("bx_buffer_clinics_each", lambda g, i: g.dissolve()),
    "a big hospital missing": ("bx_filter_big_hospitals", lambda g, i: g.iloc[:2]),
    # wrong values
    "buffer measured in degrees": (
        "bx_buffer_clinics_each",
        lambda g, i: g.to_crs(WGS).assign(geometry=lambda d: d.centroid.buffer(0.0045)),
    ),
    "area in m2 not ha": ("bx_area_districts_ha", lambda g, i: g.assign(area_ha=g["area_ha"] * 1e4)),
    "bow-tie repaired by buffer(0)": (
        "bx_repair_parcels",
        lambda g, i: g.assign(geometry=[list(x.geoms)[0] if x.geom_type == "MultiPolygon" else x for x in g.geometry]),
    ),
    "intersection lost its zone ids": ("bx_intersect_flood_districts", lambda g, i: g.drop(columns=["zone_id"])),
    "union dissolved": ("bx_union_floods", lambda g, i: g.dissolve()),
    "distances in Web Mercator metres": ("bx_nearest_clinic", lambda g, i: g.assign(distance_m=g["distance_m"] * 1.35)),
    "text kept": ("bx_coerce_enrolment", lambda g, i: g.assign(enrolment=g["enrolment"].astype(str))),
    "mean with nulls as zero": ("bx_stats_yield_status", lambda g, i: g.assign(yield_mean=g["yield_mean"] * 0.9)),
    "roads not clipped": ("bx_clip_roads", lambda g, i: read_input(i, "roads.geojson")),
    "meters not moved": ("bx_snap_meters", lambda g, i: g.assign(geometry=g.geometry.translate(3, 0))),
}


@pytest.mark.parametrize("label", sorted(WRONG))
def test_a_wrong_answer_scores_below_one(label, inputs, tmp_path):
    task_id, tamper = WRONG[label]
    graded = _answer(task_id, inputs, tmp_path, tamper)
    assert graded["score"] < 1.0, label
    assert graded["reasons"], label


def test_a_missing_output_scores_zero(inputs, tmp_path):
    graded = grade_task(TASKS["bx_area_districts_ha"], inputs, tmp_path)
    assert graded["score"] == 0.0 and "exists" in graded["reasons"][0]


def test_a_file_in_another_format_fails_its_format_check(inputs, tmp_path):
    task = TASKS["bx_conv_wells_gpkg"]
    solve("bx_conv_wells_gpkg", inputs).to_file(tmp_path / task["outputs"][0]["name"], driver="GeoJSON")
    graded = grade_task(task, inputs, tmp_path)
    assert 0 < graded["score"] < 1.0 and any("format GPKG" in r for r in graded["reasons"])
