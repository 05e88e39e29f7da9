"""Measure tools of the Vector agent — outside, share, measure (geodesic area / length), stats — checked on real
geometries with independently known answers, through the tool registry with a real Response Store, and as the
answer states them."""

from __future__ import annotations

import math

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
from pyproj import CRS
from shapely.geometry import LineString, Point, box

from geofaham_plugin.core.agents.base import TOOLS
from geofaham_plugin.core.engines import vector_ops as ops
from geofaham_plugin.core.errors import ToolFailed
from geofaham_plugin.core.orchestrator.checks import check_geospatial_compatibility
from geofaham_plugin.core.orchestrator.synthesis import table_finding
from geofaham_plugin.core.planning.plan import PlanStep

WGS84_A = 6_378_137.0  # WGS84 equatorial radius (m): one degree of the equator is a·π/180


def local_tm(lon: float, lat: float) -> CRS:
    """A transverse Mercator with scale 1 at (lon, lat): metres there are metres on the ellipsoid."""
    return CRS.from_proj4(f"+proj=tmerc +lat_0={lat} +lon_0={lon} +k=1 +x_0=0 +y_0=0 +ellps=WGS84 +units=m +no_defs")


def squares_km(*origins_m: tuple[float, float], lon: float = -118.1, lat: float = 34.2, **fields) -> gpd.GeoDataFrame:
    """1 km × 1 km squares with lower-left corners at ``origins_m`` (metres from (lon, lat)), in EPSG:4326."""
    geoms = [box(x, y, x + 1000, y + 1000) for x, y in origins_m]
    return gpd.GeoDataFrame(fields, geometry=geoms, crs=local_tm(lon, lat)).to_crs(4326)


def run(ctx, name: str, args: dict, **inputs):
    return TOOLS[name].run(ctx, args, inputs)


def register(store, gdf: gpd.GeoDataFrame, **extra):
    return store.register_vector(gdf, source="test", summary="test layer", extra=extra)


# ------------------------------------------------------------------------------------------ area / length
def test_a_1_km_square_measures_1_km2_geodesically():
    table, total, what = ops.measure(squares_km((0, 0)), "area", None)
    assert what == "area" and math.isclose(total, 1.0, rel_tol=1e-5)  # k=1 at the square: 1 km² on the ellipsoid
    assert math.isclose(table.loc[0, "area_ha"], 100.0, rel_tol=1e-5) and table.loc[0, "features"] == 1
    # a 1,000 m UTM square on the central meridian (scale 0.9996) is (1/0.9996)² km² on the ellipsoid
    utm = gpd.GeoDataFrame(geometry=[box(500_000, 3_780_000, 501_000, 3_781_000)], crs=32611)
    _, from_lonlat, _ = ops.measure(utm.to_crs(4326), "area", None)
    _, from_utm, _ = ops.measure(utm, "area", None)  # a projected layer is measured the same way
    assert abs(from_lonlat - 1.0) < 0.005 and math.isclose(from_lonlat, 1 / 0.9996**2, rel_tol=2e-5)
    assert math.isclose(from_utm, from_lonlat, rel_tol=1e-6)
    # never degrees: the same square far north is still 1 km²
    _, north, _ = ops.measure(squares_km((0, 0), lon=25.0, lat=69.5), "area", None)
    assert math.isclose(north, 1.0, rel_tol=1e-5)


def test_overlapping_polygons_are_counted_once():
    two = squares_km((0, 0), (500, 0), kind=["a", "b"])  # overlap 0.5 km²: union 1.5 km², not 2
    table, total, _ = ops.measure(two, "area", None)
    assert math.isclose(total, 1.5, rel_tol=1e-5) and math.isclose(table.loc[0, "area_km2"], 1.5, rel_tol=1e-5)
    per_kind, total_by, _ = ops.measure(two, "area", "kind")
    assert dict(zip(per_kind["value"], per_kind["area_km2"].round(4), strict=True)) == {"a": 1.0, "b": 1.0}
    assert math.isclose(total_by, 1.5, rel_tol=1e-5)  # the total merges across groups too
    same = squares_km((0, 0), (0, 0), (2000, 0), kind=["a", "a", "b"])  # a duplicate inside one group
    per_kind, total_same, _ = ops.measure(same, "area", "kind")
    assert dict(zip(per_kind["value"], per_kind["area_km2"].round(4), strict=True)) == {"a": 1.0, "b": 1.0}
    assert math.isclose(total_same, 2.0, rel_tol=1e-5)


def test_lengths_are_geodesic_and_shared_segments_count_once():
    equator = gpd.GeoDataFrame(geometry=[LineString([(0, 0), (1, 0)])], crs=4326)
    _, km, what = ops.measure(equator, "length", None)
    assert what == "length" and math.isclose(km, WGS84_A * math.pi / 180 / 1000, rel_tol=1e-6)  # 111.3195 km
    twice = gpd.GeoDataFrame({"k": ["x", "x"]}, geometry=[LineString([(0, 0), (1, 0)])] * 2, crs=4326)
    assert math.isclose(ops.measure(twice, "length", "k")[0].loc[0, "length_km"], km, rel_tol=1e-6)
    # polygons only: the length is the outline of the merged polygons
    _, perimeter, what = ops.measure(squares_km((0, 0), (500, 0)), "length", None)
    assert what == "perimeter" and math.isclose(perimeter, 5.0, rel_tol=1e-4)


def test_points_have_no_area_and_lines_no_area():
    points = gpd.GeoDataFrame(geometry=[Point(0, 0), Point(1, 1)], crs=4326)
    with pytest.raises(ToolFailed, match="points have no area") as failed:
        ops.measure(points, "area", None)
    assert failed.value.hint and "count" in failed.value.hint
    with pytest.raises(ToolFailed, match="points have no length"):
        ops.measure(points, "length", None)
    lines = gpd.GeoDataFrame(geometry=[LineString([(0, 0), (1, 0)])], crs=4326)
    with pytest.raises(ToolFailed, match="lines have no area"):
        ops.measure(lines, "area", None)
    empty = squares_km((0, 0)).iloc[:0]
    assert ops.measure(empty, "area", None)[1] == 0.0  # nothing flooded: 0 km²


# ------------------------------------------------------------------------------------------ share
def buildings() -> gpd.GeoDataFrame:
    kinds = ["house"] * 6 + ["shop"] * 3 + ["school"]
    return gpd.GeoDataFrame(
        {"kind": kinds, "id": range(10)}, geometry=[Point(i * 0.001, 0) for i in range(10)], crs=4326
    )


def test_share_in_total_and_per_group():
    base = buildings()
    part = base[base["id"].isin([0, 1, 2, 9])]  # 3 houses, no shop, the school
    table, orphans = ops.share(part, base, None)
    assert table.to_dict("records") == [{"value": "all", "part": 4, "base": 10, "share": 0.4, "percent": 40.0}]
    grouped, orphans = ops.share(part, base, "kind")
    rows = {r["value"]: (r["part"], r["base"], r["percent"]) for r in grouped.to_dict("records")}
    assert rows == {"house": (3, 6, 50.0), "shop": (0, 3, 0.0), "school": (1, 1, 100.0)} and orphans == {}
    one_third, _ = ops.share(base[base["kind"] == "shop"].iloc[:1], base[base["kind"] == "shop"], None)
    assert one_third.loc[0, "share"] == 0.3333 and one_third.loc[0, "percent"] == 33.33
    assert ops.share(base.iloc[:0], base, "kind")[0]["part"].tolist() == [0, 0, 0]  # nothing: 0 % everywhere
    with pytest.raises(ToolFailed, match="base layer is empty") as failed:
        ops.share(part, base.iloc[:0], None)
    assert failed.value.hint
    with pytest.raises(ToolFailed, match="the part layer has no field 'kind'"):
        ops.share(part.drop(columns="kind"), base, "kind")


# ------------------------------------------------------------------------------------------ stats
def test_stats_ignore_and_count_nulls():
    gdf = gpd.GeoDataFrame(
        {"beds": [10, 20, None, "n/a", 40, "15"], "kind": ["a", "a", "a", "b", "b", "c"]},
        geometry=[Point(0, 0)] * 6,
        crs=4326,
    )
    table, overall = ops.stats(gdf, "beds", "mean", None)
    assert overall == {"value": pytest.approx(85 / 4), "n": 4, "n_null": 2, "n_not_numeric": 1, "n_no_data": 0}
    assert table.loc[0, "mean"] == pytest.approx(21.25) and table.loc[0, "n"] == 4
    assert ops.stats(gdf, "beds", "median", None)[1]["value"] == 17.5
    assert (
        ops.stats(gdf, "beds", "min", None)[1]["value"] == 10 and ops.stats(gdf, "beds", "max", None)[1]["value"] == 40
    )
    by, _ = ops.stats(gdf, "beds", "sum", "kind")
    rows = {r["value"]: (r["sum"], r["n"], r["n_null"]) for r in by.to_dict("records")}
    assert rows == {"b": (40, 1, 1), "a": (30, 2, 1), "c": (15, 1, 0)}
    nothing = gdf.assign(beds=[None, "x", None, None, None, None])
    with pytest.raises(ToolFailed, match="has no numbers"):
        ops.stats(nothing, "beds", "mean", None)
    with pytest.raises(ToolFailed, match="no field 'BEDS'"):
        ops.stats(gdf, "BEDS", "mean", None)


def test_a_group_without_numbers_has_no_statistic():
    gdf = gpd.GeoDataFrame({"v": [1.0, 3.0, None], "k": ["a", "a", "b"]}, geometry=[Point(0, 0)] * 3, crs=4326)
    table, _ = ops.stats(gdf, "v", "sum", "k")
    assert table.loc[table["value"] == "b", "sum"].isna().all()  # not a sum of 0
    assert table.loc[0, "value"] == "a" and table.loc[0, "sum"] == 4.0


# ------------------------------------------------------------------------------------------ outside
def test_outside_and_inside_partition_the_features():
    rng = np.random.default_rng(7)
    lon, lat = rng.uniform(-118.12, -118.08, 300), rng.uniform(34.18, 34.22, 300)
    features = gpd.GeoDataFrame({"i": range(300)}, geometry=gpd.points_from_xy(lon, lat), crs=4326)
    mask = squares_km((0, 0), (1000, 1000), lon=-118.1, lat=34.2).to_crs(32611)  # another CRS than the features
    inside = ops.inside(features, mask)
    outside, unlocated = ops.outside(features, mask)
    assert unlocated == 0 and 0 < len(inside) < 300 and len(inside) + len(outside) == 300
    assert set(inside["i"]).isdisjoint(outside["i"])
    # independently: a point is inside when it falls in either square (tested in the squares' own metres)
    local = features.to_crs(local_tm(-118.1, 34.2))
    x, y = local.geometry.x, local.geometry.y
    expected = ((x >= 0) & (x <= 1000) & (y >= 0) & (y <= 1000)) | (
        (x >= 1000) & (x <= 2000) & (y >= 1000) & (y <= 2000)
    )
    assert set(outside["i"]) == set(features.loc[~expected.to_numpy(), "i"])
    with_none = pd.concat([features.iloc[:2], gpd.GeoDataFrame({"i": [999]}, geometry=[None], crs=4326)])
    out, unlocated = ops.outside(with_none, mask)
    assert unlocated == 1 and 999 not in set(out["i"])


# ------------------------------------------------------------------------------------------ through the registry
def test_the_tools_run_through_the_registry_and_the_answer_states_their_numbers(ctx, store):
    base = register(store, buildings(), feature_class="buildings")
    part_gdf = buildings()
    part = register(store, part_gdf[part_gdf["id"].isin([0, 1, 2, 9])], feature_class="buildings")
    shared = run(ctx, "share", {"by": "kind"}, part=part, base=base)
    assert shared.kind.value == "table" and shared.extra["part_count"] == 4 and shared.extra["base_count"] == 10
    assert shared.extra["share_percent"] == 40.0 and shared.extra["share"] == 0.4
    finding = table_finding(store, shared)
    assert "4 of 10 (40 %)" in finding.headline and "| house | 3 of 6 (50 %) |" in finding.detail
    total = finding.values[0]
    assert (total.value, total.measure, total.unit, total.group) == (40.0, "share", "percent", None)
    assert {v.group: v.value for v in finding.values if v.group} == {"house": 50.0, "shop": 0.0, "school": 100.0}
    assert [v.value for v in finding.values if v.measure == "count"] == [4.0, 10.0]

    flood = register(store, squares_km((0, 0), (500, 0), zone=["a", "b"]))
    area = run(ctx, "measure", {"quantity": "area"}, layer=flood)
    assert area.extra["quantity"] == "area" and area.extra["unit"] == "km2"
    assert math.isclose(area.extra["total"], 1.5, rel_tol=1e-5)
    finding = table_finding(store, area)
    assert "1.5 km² (150 ha)" in finding.headline and "counted once" in area.summary
    (value,) = finding.values
    assert (value.value, value.measure, value.unit) == (1.5, "area", "km2")
    by_zone = table_finding(store, run(ctx, "measure", {"quantity": "area", "by": "zone"}, layer=flood))
    assert {v.group: v.value for v in by_zone.values if v.group} == {"a": 1.0, "b": 1.0}
    road = register(store, gpd.GeoDataFrame(geometry=[LineString([(0, 0), (1, 0)])], crs=4326))
    length = table_finding(store, run(ctx, "measure", {"quantity": "length"}, layer=road))
    assert "111 km" in length.headline and (length.values[0].value, length.values[0].unit) == (111.0, "km")

    beds = gpd.GeoDataFrame({"beds": [10, None, 25]}, geometry=[Point(0, 0)] * 3, crs=4326)
    mean = run(ctx, "stats", {"field": "beds", "stat": "mean"}, layer=register(store, beds, feature_class="healthcare"))
    assert mean.extra["value"] == 17.5 and mean.extra["n_null"] == 1 and mean.extra["stat"] == "mean"
    assert any("1 features without a number" in note for note in mean.extra["limitations"])
    finding = table_finding(store, mean)
    assert "mean of beds over healthcare features: 17.5 (2 values)" in finding.headline
    assert (finding.values[0].value, finding.values[0].measure) == (17.5, "mean")

    points = register(store, buildings())
    mask = register(store, squares_km((-500, -500), lon=0.0, lat=0.0))  # x ≤ 500 m: buildings 0-4 (111 m apart)
    out = run(ctx, "outside", {}, features=points, mask=mask)
    inside = run(ctx, "inside", {}, features=points, mask=mask)
    assert out.metadata.feature_count == 5 and inside.metadata.feature_count == 5
    assert sorted(store.read_vector(out.id)["id"]) == [5, 6, 7, 8, 9]
    with pytest.raises(ToolFailed, match="points have no area"):
        run(ctx, "measure", {"quantity": "area"}, layer=points)


def test_empty_inputs_pass_where_zero_is_an_answer(ctx, store):
    """An empty part is a share of 0 %, an empty layer 0 km²; an empty base has no share."""
    base = register(store, buildings())
    empty = register(store, buildings().iloc[:0])

    def check(tool: str, args: dict, **records):
        step = PlanStep(id=1, agent="vector", goal=tool, tool=tool, args=args, expected_output="table")
        return check_geospatial_compatibility(step, TOOLS[tool], records, [])

    assert check("share", {}, part=empty, base=base) is None
    failure = check("share", {}, part=base, base=empty)
    assert failure is not None and failure.kind == "empty"
    assert check("share", {"by": "nope"}, part=empty, base=base).kind == "schema"
    assert check("measure", {"quantity": "area"}, layer=empty) is None
    assert check("outside", {}, features=empty, mask=register(store, squares_km((0, 0)))) is None
    assert check("stats", {"field": "id", "stat": "mean"}, layer=empty).kind == "empty"
    shared = run(ctx, "share", {}, part=empty, base=base)
    assert "0 of 10 (0 %)" in table_finding(store, shared).headline
    with pytest.raises(ToolFailed, match="base layer is empty"):
        run(ctx, "share", {}, part=base, base=empty)


def test_a_share_question_is_answered_by_a_share_step(store):
    """End to end on the Eaton damage layer: the plan computes the share, coverage accepts it, and the answer
    states it as "X of Y (Z %)" with the counts read from the layers themselves."""
    from geofaham_plugin.core.llm import LLM, ScriptedModel
    from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator, OrchestratorConfig

    def step(id_: int, tool: str, args: dict, inputs: dict | None = None, out: str = "vector") -> dict:
        return {"id": id_, "agent": "vector", "goal": tool, "tool": tool, "args": args, "inputs": inputs or {}}

    plan = {
        "ledger": {"intent": "share destroyed", "disaster_event_id": 11},
        "plan": {
            "steps": [
                {**step(1, "load_event_layer", {"event_id": 11, "role": "damage"}), "expected_output": "vector"},
                {
                    **step(2, "select_damage", {"damage_classes": ["destroyed"]}, {"damage": "step:1"}),
                    "expected_output": "vector",
                },
                {**step(3, "share", {}, {"part": "step:2", "base": "step:1"}), "expected_output": "table"},
            ]
        },
    }
    orch = Orchestrator(store, LLM(ScriptedModel({"planner": [plan]})), config=OrchestratorConfig(mode="free"))
    record = orch.run("What share of the Eaton structures were destroyed?")
    assert record.status == "answered", record.answer
    share_c = next(c for c in record.constraints if c.kind == "measure")
    assert share_c.value == "share" and share_c.applied_by == [3]
    loaded, destroyed = (store.read_vector(s.artifact_id) for s in record.steps[:2])
    x, y = len(destroyed), len(loaded)
    assert 0 < x < y
    percent = round(100 * x / y, 1)
    assert f"{x:,} of {y:,} ({percent:g} %)" in record.answer
    assert record.structured is not None
    stated = next(v for v in record.structured.values if v.measure == "share")
    assert stated.unit == "percent" and stated.value == pytest.approx(percent, abs=0.05)


def test_small_measures_keep_their_digits_and_empty_groups_say_so(ctx, store):
    """A 200 m square is 0.04 km² (not "0"); a group without numbers is stated as having none."""
    plot = gpd.GeoDataFrame(geometry=[box(0, 0, 200, 200)], crs=local_tm(-118.1, 34.2)).to_crs(4326)
    finding = table_finding(store, run(ctx, "measure", {"quantity": "area"}, layer=register(store, plot)))
    assert "0.04 km² (4 ha)" in finding.headline and finding.values[0].value == 0.04
    beds = gpd.GeoDataFrame({"beds": [1.0, 2.5, None], "k": ["a", "a", "b"]}, geometry=[Point(0, 0)] * 3, crs=4326)
    stats = run(ctx, "stats", {"field": "beds", "stat": "median", "by": "k"}, layer=register(store, beds))
    finding = table_finding(store, stats)
    assert "| a | 1.75 | 2 |" in finding.detail and "| b | no values | 0 |" in finding.detail
    assert {v.group: v.value for v in finding.values if v.group} == {"a": 1.75}
    assert finding.values[0].measure == "median" and finding.values[0].value == 1.75


def test_a_share_notes_part_groups_the_base_lacks(ctx, store):
    base = buildings()
    part = base.iloc[:2].assign(kind=["house", "barn"])
    _, orphans = ops.share(part, base, "kind")
    assert orphans == {"barn": 1}
    record = run(ctx, "share", {"by": "kind"}, part=register(store, part), base=register(store, base))
    assert any("barn (1)" in note for note in record.extra["limitations"])
