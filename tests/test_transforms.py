"""The transform family on small layers the tests build, each checked against a value computed another way
(pyproj.Geod areas and distances, pyproj transformers, 3D area-weighted means, the fixture's own literals), then
chained through the tool registry with a real Response Store: repair -> reproject -> dissolve by class -> area in
km² -> saved to a file and read back."""

from __future__ import annotations

import math

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from conftest import SHARED_DATA
from pyproj import CRS, Geod, Transformer
from shapely.geometry import LineString, MultiPolygon, Point, Polygon, box
from shapely.geometry.polygon import orient

from geofaham_plugin.core.agents.base import TOOLS
from geofaham_plugin.core.engines import transforms as tf
from geofaham_plugin.core.engines.layers import read_user_file
from geofaham_plugin.core.errors import ModelRetry, ToolFailed

GEOD = Geod(ellps="WGS84")
LON, LAT = -118.1, 34.2


def geodesic_m2(geom) -> float:
    parts = getattr(geom, "geoms", [geom])
    return sum(abs(GEOD.geometry_area_perimeter(orient(p, 1.0))[0]) for p in parts)


def local_tm() -> CRS:
    return CRS.from_proj4(f"+proj=tmerc +lat_0={LAT} +lon_0={LON} +k=1 +x_0=0 +y_0=0 +ellps=WGS84 +units=m +no_defs")


def metric_layer(geoms, **fields) -> gpd.GeoDataFrame:
    """Geometries drawn in metres around (LON, LAT), returned in EPSG:4326."""
    return gpd.GeoDataFrame(fields, geometry=list(geoms), crs=local_tm()).to_crs(4326)


def run(ctx, name: str, args: dict, **inputs):
    return TOOLS[name].run(ctx, args, inputs)


# -------------------------------------------------------------------------------------------- reprojection
def test_reproject_by_code_and_by_name():
    pts = gpd.GeoDataFrame(geometry=[Point(-45.0, 80.0), Point(10.0, 75.0)], crs=4326)
    expected = Transformer.from_crs(4326, 3413, always_xy=True).transform([-45.0, 10.0], [80.0, 75.0])
    for name in ("EPSG:3413", "3413", "polar-north", "Arctic"):
        out, changes = tf.reproject(pts, name)
        assert changes.crs == "EPSG:3413"
        assert np.allclose([out.geometry.x, out.geometry.y], expected, atol=1e-6)
    south = gpd.GeoDataFrame(geometry=[Point(0.0, -75.0)], crs=4326)
    assert tf.reproject(south, "polar")[1].crs == "EPSG:3031" and tf.reproject(south, "antarctic")[1].crs == "EPSG:3031"
    assert tf.reproject(pts.iloc[:1].set_crs(4326), "utm")[1].crs == "EPSG:32623"  # lon -45: zone 23 north


def test_equal_area_keeps_areas_and_wide_layers_get_a_global_one():
    square = metric_layer([box(0, 0, 10_000, 10_000)])  # 100 km², drawn at scale 1
    truth = geodesic_m2(square.geometry[0])
    out, changes = tf.reproject(square, "equal-area")
    assert "+proj=laea" in changes.crs and math.isclose(out.geometry.area[0], truth, rel_tol=1e-6)
    assert not math.isclose(square.to_crs(3857).geometry.area[0], truth, rel_tol=0.1)  # Web Mercator is not
    world = gpd.GeoDataFrame(geometry=[Point(-120, 10), Point(100, -20)], crs=4326)
    assert tf.reproject(world, "equal-area")[1].crs == "EPSG:6933"


def test_unknown_crs_is_one_line_with_a_hint(ctx, store):
    layer = store.register_vector(metric_layer([Point(0, 0)]), source="test", summary="t")
    with pytest.raises(ToolFailed) as err:
        run(ctx, "reproject", {"to_crs": "EPSG:999999"}, layer=layer)
    assert str(err.value) == "unknown CRS 'EPSG:999999'" and "equal-area" in err.value.hint
    with pytest.raises(ToolFailed) as err:  # a real CRS, but of another planet
        run(ctx, "reproject", {"to_crs": "Mars 2000"}, layer=layer)
    assert "cannot reproject to" in str(err.value) and "celestial body" in str(err.value)
    assert "\n" not in str(err.value) and "EPSG" in err.value.hint
    with pytest.raises(ModelRetry, match="to_crs"):
        run(ctx, "reproject", {"to_crs": ""}, layer=layer)


# ---------------------------------------------------------------------------------------- antimeridian
def test_a_polygon_across_the_antimeridian_is_split_not_wrapped():
    naive = Polygon([(179, 0), (-179, 0), (-179, 1), (179, 1)])  # 2° wide, written as field tools write it
    truth = abs(GEOD.polygon_area_perimeter([179, 181, 181, 179], [0, 0, 1, 1])[0])
    assert naive.contains(Point(0, 0.5))  # to planar geometry it is 358° wide: Greenwich is "in" it
    out, changes = tf.split_antimeridian(gpd.GeoDataFrame({"id": [1]}, geometry=[naive], crs=4326))
    geom = out.geometry[0]
    assert not geom.contains(Point(0, 0.5)) and geom.contains(Point(179.5, 0.5)) and geom.contains(Point(-179.5, 0.5))
    assert changes.changed == 1 and isinstance(geom, MultiPolygon) and len(geom.geoms) == 2
    assert geom.bounds[0] >= -180 and geom.bounds[2] <= 180
    assert math.isclose(geodesic_m2(geom), truth, rel_tol=1e-3)  # (geodesic edges 1° vs 2° long: 1e-4 apart)
    # the same box drawn in a Pacific-centred projection comes back split when reprojected to degrees
    pacific = Transformer.from_crs(4326, 3832, always_xy=True)
    xs, ys = pacific.transform([179, 181, 181, 179], [0, 0, 1, 1])
    drawn = gpd.GeoDataFrame(geometry=[Polygon(zip(xs, ys, strict=True))], crs=3832)
    back, changes = tf.reproject(drawn, "EPSG:4326")
    assert changes.changed == 1 and math.isclose(geodesic_m2(back.geometry[0]), truth, rel_tol=1e-3)
    line = gpd.GeoDataFrame(geometry=[LineString([(170, 0), (-170, 0)])], crs=4326)
    cut, _ = tf.split_antimeridian(line)
    assert math.isclose(GEOD.geometry_length(cut.geometry[0]), GEOD.inv(170, 0, 190, 0)[2], rel_tol=1e-9)


def test_a_polygon_across_the_antimeridian_projects_as_the_small_box_it_is():
    """Degrees to a projected CRS: the 2° box written 179 -> -179 is not projected as a 358° band round the globe."""
    naive = Polygon([(179, -17), (-179, -17), (-179, -16), (179, -16)])
    pacific = Transformer.from_crs(4326, 3832, always_xy=True)  # PDC Mercator, centred on 150°E
    xs, ys = pacific.transform([179, 181, 181, 179], [-17, -17, -16, -16])
    truth = Polygon(zip(xs, ys, strict=True))
    out, changes = tf.reproject(gpd.GeoDataFrame(geometry=[naive], crs=4326), "EPSG:3832")
    geom = out.geometry[0]
    assert changes.changed == 1 and changes.crs == "EPSG:3832"
    assert geom.is_valid and geom.symmetric_difference(truth).area < 1e-4 * truth.area  # one box, not two touching


@pytest.mark.parametrize("target", ["utm", "local", "EPSG:32760"])
def test_utm_and_local_of_a_layer_across_the_antimeridian_are_centred_at_180_and_keep_one_polygon(target):
    """The layer's own zone is the one at ±180° (zone 1 or 60), not zone 31 on the other side of the globe, and the
    parts cut at ±180 are one polygon again once projected (not two a few nanometres apart)."""
    naive = Polygon([(179, -17), (-179, -17), (-179, -16), (179, -16)])
    out, _ = tf.reproject(gpd.GeoDataFrame(geometry=[naive], crs=4326), target)
    if target == "utm":
        assert out.crs.to_epsg() in (32701, 32760)
    if target == "local":
        assert abs(abs(out.crs.to_dict()["lon_0"]) - 180) < 1e-6
    geom = out.geometry[0]
    true_area = abs(GEOD.geometry_area_perimeter(Polygon([(179, -17), (181, -17), (181, -16), (179, -16)]))[0])
    assert geom.geom_type == "Polygon" and geom.is_valid
    assert math.isclose(geom.area, true_area, rel_tol=3e-3)  # UTM's scale error 2° off its meridian: < 0.3 %


def holed(cx: float, cy: float, half: float) -> Polygon:
    """A square with three holes of different sizes and vertex counts (4, 5 and 33 vertices: the case that
    failed with "setting an array element with a sequence" in the antimeridian split)."""
    q = half / 10
    return Polygon(
        [(cx - half, cy - half), (cx + half, cy - half), (cx + half, cy + half), (cx - half, cy + half)],
        holes=[
            [(cx - 8 * q, cy - 8 * q), (cx - 6 * q, cy - 8 * q), (cx - 6 * q, cy - 6 * q), (cx - 8 * q, cy - 6 * q)],
            [
                (cx, cy - 8 * q),
                (cx + 4 * q, cy - 8 * q),
                (cx + 4 * q, cy - 5 * q),
                (cx + 2 * q, cy - 4 * q),
                (cx, cy - 5 * q),
            ],
            list(Point(cx + 3 * q, cy + 4 * q).buffer(3 * q, quad_segs=8).exterior.coords)[:-1],
        ],
    )


@pytest.mark.parametrize(("cx", "projected"), [(-118.1, "EPSG:32611"), (179.99, "EPSG:32760")])
def test_a_polygon_with_holes_of_different_sizes_reprojects_both_ways(cx, projected):
    """Geographic -> projected -> geographic keeps the three holes and the geodesic area; at 179.99° two of the
    holes cross ±180 (the polygon written as field tools write it, longitudes wrapped to [-180, 180])."""
    drawn = holed(cx, -17.0, 0.05)  # continuous longitudes (past 180 at 179.99): the truth
    truth = geodesic_m2(drawn)
    wrapped = shapely.transform(drawn, lambda xy: np.column_stack([(xy[:, 0] + 180) % 360 - 180, xy[:, 1]]))
    layer = gpd.GeoDataFrame({"id": [1]}, geometry=[wrapped], crs=4326)
    metric, _ = tf.reproject(layer, projected)
    geom = metric.geometry[0]
    assert geom.is_valid and geom.geom_type == "Polygon" and len(geom.interiors) == 3
    assert math.isclose(geom.area, truth, rel_tol=2e-3)  # UTM's scale error near its central meridian
    back, _ = tf.reproject(metric, "EPSG:4326")
    assert back.geometry[0].bounds[0] >= -180 and back.geometry[0].bounds[2] <= 180
    assert math.isclose(geodesic_m2(back.geometry[0]), truth, rel_tol=1e-5)
    if cx < 179:  # across ±180 the two crossing holes come back as notches of the two sides
        assert sum(len(p.interiors) for p in shapely.get_parts(back.geometry[0])) == 3


def test_the_eaton_perimeter_with_its_nine_holes_reprojects_to_wgs84():
    """The sample Eaton perimeter (EPSG:26911; one part with 9 holes of 5 to 452 vertices) to EPSG:4326 and back."""
    perimeter = gpd.read_file(SHARED_DATA / "eaton-2025" / "eaton_adjusted_fire_perimeter.geojson")
    out, changes = tf.reproject(perimeter, "EPSG:4326")
    assert changes.crs == "EPSG:4326" and out.geometry[0].is_valid
    assert [len(p.interiors) for p in shapely.get_parts(out.geometry[0])] == [
        len(p.interiors) for p in shapely.get_parts(perimeter.geometry[0])
    ]
    assert math.isclose(geodesic_m2(out.geometry[0]) / 1e6, 62.9, rel_tol=2e-3)  # README: 62.88 km² in UTM 11N
    back, _ = tf.reproject(out, "EPSG:26911")
    assert math.isclose(back.area.sum(), perimeter.area.sum(), rel_tol=1e-9)


# --------------------------------------------------------------------------------------------- geometry
def test_repair_fixes_bowties_and_keeps_them_polygons():
    bowtie = Polygon([(0, 0), (2, 2), (2, 0), (0, 2), (0, 0)])  # two triangles of 1 unit² each, crossing
    gdf = gpd.GeoDataFrame({"n": [1, 2]}, geometry=[bowtie, box(5, 5, 6, 6)], crs=local_tm()).to_crs(4326)
    assert not gdf.geometry[0].is_valid
    out, changes = tf.repair(gdf)
    assert changes.changed == 1 and out.geometry.is_valid.all() and out.geometry[1].equals(gdf.geometry[1])
    assert out.geometry[0].geom_type == "MultiPolygon"
    assert math.isclose(geodesic_m2(out.geometry[0]), 2.0, rel_tol=1e-4)  # 2 m² on the ellipsoid (k = 1 there)


def test_orient_rings_counter_clockwise_and_back():
    cw = Polygon([(0, 0), (0, 1), (1, 1), (1, 0)], holes=[[(0.2, 0.2), (0.4, 0.2), (0.4, 0.4), (0.2, 0.4)]])
    ccw = Polygon([(2, 0), (3, 0), (3, 1), (2, 1)])
    gdf = gpd.GeoDataFrame(geometry=[cw, ccw], crs=4326)
    out, changes = tf.orient(gdf)
    assert changes.changed == 1 and all(g.exterior.is_ccw for g in out.geometry)
    assert not out.geometry[0].interiors[0].is_ccw and out.geometry[0].equals(cw)  # same shape
    back, changes = tf.orient(out, "cw")
    assert changes.changed == 2 and not any(g.exterior.is_ccw for g in back.geometry)


def test_dedupe_exact_and_within_a_tolerance():
    ring = [(0, 0), (100, 0), (100, 100), (0, 100)]
    same = Polygon(ring[::-1][1:] + ring[::-1][:1])  # the same square, other start and direction
    gdf = metric_layer([Polygon(ring), same, Polygon(ring)], kind=["a", "a", "b"])
    out, changes = tf.dedupe(gdf)
    assert changes.removed == 1 and out["kind"].tolist() == ["a", "b"]
    assert tf.dedupe(gdf, fields=[])[1].removed == 2  # geometry only
    near = metric_layer([Point(0, 0), Point(0.6, 0), Point(3, 0)], kind=["x", "x", "x"])
    assert tf.dedupe(near)[1].removed == 0
    kept, changes = tf.dedupe(near, tolerance_m=1.0)
    assert changes.removed == 1 and len(kept) == 2  # 0.6 m apart are one; 3 m apart are two


def test_slivers_go_by_area_and_thinness():
    parcel = MultiPolygon([box(0, 0, 100, 100), box(200, 0, 1200, 0.5)])  # a field and a 0.5 m wide strip
    tiny = box(2000, 0, 2010, 10)  # 100 m²
    gdf = metric_layer([parcel, tiny, LineString([(0, 0), (5, 5)])], id=[1, 2, 3])
    out, changes = tf.remove_slivers(gdf, min_area_m2=300, min_compactness=0.05)
    assert (changes.changed, changes.removed) == (2, 1) and out["id"].tolist() == [1, 3]
    assert math.isclose(geodesic_m2(out.geometry.iloc[0]), 10_000, rel_tol=1e-4)  # the field's 1 ha is left
    only_area, changes = tf.remove_slivers(gdf, min_area_m2=300)  # the 500 m² strip is big enough
    assert changes.changed == 1 and math.isclose(geodesic_m2(only_area.geometry.iloc[0]), 10_500, rel_tol=1e-4)


def test_centroids_are_area_weighted_on_the_ellipsoid_not_in_degrees():
    cell = gpd.GeoDataFrame({"name": ["lapland"]}, geometry=[box(20, 60, 30, 70)], crs=4326)
    out, _ = tf.centroids(cell)
    # independent: the area-weighted mean of 0.05° cells (pyproj.Geod areas) as unit vectors
    lons, lats = np.meshgrid(np.arange(20, 30, 0.05) + 0.025, np.arange(60, 70, 0.05) + 0.025)
    lo, la = np.radians(lons), np.radians(lats)
    weights = np.abs(
        [
            GEOD.polygon_area_perimeter([0, 0.05, 0.05, 0], [y - 0.025, y - 0.025, y + 0.025, y + 0.025])[0]
            for y in lats[:, 0]
        ]
    )
    v = np.stack([np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)], -1) * weights[:, None, None]
    m = v.sum((0, 1))
    lat = math.degrees(math.atan2(m[2], math.hypot(m[0], m[1])))
    p = out.geometry[0]
    assert out.crs.to_epsg() == 4326 and out["name"][0] == "lapland"
    assert GEOD.inv(p.x, p.y, 25.0, lat)[2] < 500  # within 500 m of the true centre ...
    assert GEOD.inv(25.0, 65.0, 25.0, lat)[2] > 20_000  # ... which is 30 km from the degrees' centre
    c_shape = metric_layer(
        [Polygon([(0, 0), (100, 0), (100, 10), (10, 10), (10, 90), (100, 90), (100, 100), (0, 100)])]
    )
    assert not c_shape.geometry[0].contains(tf.centroids(c_shape)[0].geometry[0])
    assert c_shape.geometry[0].contains(tf.centroids(c_shape, "point_on_surface")[0].geometry[0])


def test_convex_hulls_per_group_and_symmetric_difference():
    corners = [Point(0, 0), Point(1000, 0), Point(1000, 1000), Point(0, 1000), Point(500, 500)]
    gdf = metric_layer([*corners, Point(5000, 5000), Point(5000, 7000), Point(7000, 5000)], team=["a"] * 5 + ["b"] * 3)
    out, _ = tf.convex_hulls(gdf, "team")
    assert out["team"].tolist() == ["a", "b"] and out["count"].tolist() == [5, 3] and out.crs.to_epsg() == 4326
    assert math.isclose(geodesic_m2(out.geometry[0]), 1e6, rel_tol=1e-4)  # the 1 km square
    assert math.isclose(geodesic_m2(out.geometry[1]), 2e6, rel_tol=1e-4)  # the 2 km right triangle
    before = metric_layer([box(0, 0, 1000, 1000)], when=["before"])
    after = metric_layer([box(500, 0, 1500, 1000)], when=["after"])
    sym, _ = tf.symmetric_difference(before, after.to_crs(32611))
    assert sym.crs.to_epsg() == 4326 and len(sym) == 2
    assert math.isclose(sum(geodesic_m2(g) for g in sym.geometry), 1e6, rel_tol=1e-4)  # 2 × 0.5 km²


# ------------------------------------------------------------------------------------------- attributes
def test_coerce_types_counts_what_does_not_convert():
    gdf = gpd.GeoDataFrame(
        {
            "beds": ["12", "7.5", "n/a", None],
            "open": ["yes", "No", "maybe", "1"],
            "seen": ["2025-01-08", "09/01/2025", "soon", None],
            "code": [1, 2, 3, 4],
        },
        geometry=[Point(0, i) for i in range(4)],
        crs=4326,
    )
    out, changes = tf.coerce_types(gdf, {"beds": "integer", "open": "boolean", "seen": "date", "code": "text"})
    assert out["beds"].tolist()[:1] == [12] and out["beds"].isna().tolist() == [False, True, True, True]
    assert out["open"].tolist()[:2] == [True, False] and pd.isna(out["open"][2]) and out["open"][3]
    assert out["seen"][0] == pd.Timestamp("2025-01-08") and out["seen"][1] == pd.Timestamp("2025-01-09")
    assert out["code"].tolist() == ["1", "2", "3", "4"]
    assert changes.changed == 3  # 7.5 (integer), maybe (boolean), soon (date); n/a says no value: not a failure
    assert any("1 values of beds are not integer (e.g. '7.5')" in n for n in changes.notes)
    assert any("1 values of beds say no value" in n for n in changes.notes)
    with pytest.raises(ToolFailed, match="no field 'bedz'"):
        tf.coerce_types(gdf, {"bedz": "integer"})


def test_drop_nulls_and_split_by_geometry_type(tmp_path):
    gdf = gpd.GeoDataFrame(
        {"name": ["a", None, "c", "d", "e"]},
        geometry=[Point(0, 0), Point(1, 1), None, Polygon(), box(0, 0, 1, 1)],
        crs=4326,
    )
    out, changes = tf.drop_nulls(gdf, ["name"])
    assert changes.removed == 3 and out["name"].tolist() == ["a", "e"]
    assert tf.drop_nulls(gdf, [], geometry=True)[1].removed == 2
    mixed = gpd.GeoDataFrame(
        {"k": [1, 2, 3, 4]},
        geometry=[Point(0, 0), box(0, 0, 1, 1), LineString([(0, 0), (1, 1)]), Point(2, 2)],
        crs=4326,
    )
    parts = tf.split_by_geometry_type(mixed)
    assert {k: v["k"].tolist() for k, v in parts.items()} == {"point": [1, 4], "line": [3], "polygon": [2]}


# ------------------------------------------------------------------------------------ counts and nearest
def test_count_points_in_polygons_and_the_zone_counts_agree():
    from geofaham_plugin.core.engines.vector_ops import count_in_zones

    tm = local_tm()  # metres as drawn: the point on the shared edge stays exactly on it
    zones = gpd.GeoDataFrame(
        {"z": ["w", "e", "far"]},
        geometry=[box(0, 0, 1000, 1000), box(1000, 0, 2000, 1000), box(5000, 0, 6000, 1000)],
        crs=tm,
    )
    points = gpd.GeoDataFrame(
        geometry=[Point(100, 100), Point(200, 500), Point(900, 900), Point(1000, 500), Point(1500, 10)], crs=tm
    )
    out, _ = tf.count_points_in_polygons(points, zones)
    assert out["points"].tolist() == [4, 2, 0]  # the point on the shared edge counts in both
    table = count_in_zones(points, zones, "z")
    assert dict(zip(table["value"], table["count"], strict=True)) == {"w": 4, "e": 2, "far": 0}


def test_k_nearest_are_geodesic_and_safe_across_the_antimeridian():
    features = gpd.GeoDataFrame({"name": ["camp"]}, geometry=[Point(179.9, 0.0)], crs=4326)
    lons = [-179.9, 179.0, -179.0, 170.0]
    candidates = gpd.GeoDataFrame(
        {"port": ["east", "west", "far east", "far west"]},
        geometry=[Point(x, 0.5 if x == -179.0 else 0.0) for x in lons],
        crs=4326,
    )
    out, _ = tf.nearest_neighbours(features, candidates, 3, label="name", candidate_label="port")
    expected = sorted(
        (GEOD.inv(179.9, 0.0, p.x, p.y)[2], n) for n, p in zip(candidates["port"], candidates.geometry, strict=True)
    )[:3]
    assert out["to"].tolist() == [n for _, n in expected] == ["east", "west", "far east"]
    assert np.allclose(out["distance_m"], [round(d, 1) for d, _ in expected], atol=0.06)
    assert out["rank"].tolist() == [1, 2, 3] and (out["from"] == "camp").all()
    assert max(GEOD.geometry_length(g) for g in out.geometry) < 200_000  # the lines go the short way round
    # polygons, and the projected method, near Los Angeles agree with Geod to 0.1 %
    clinics = metric_layer([box(0, 0, 50, 50)], name=["clinic"])
    shelters = metric_layer([Point(1050, 25), Point(25, 3050), Point(-2050, 25)], name=["s1", "s2", "s3"])
    for method in ("geodesic", "projected"):
        near, _ = tf.nearest_neighbours(clinics, shelters, 2, method, "name", "name")
        assert near["to"].tolist() == ["s1", "s3"]
        assert np.allclose(near["distance_m"], [1000, 2050], rtol=1e-3)


def test_area_weighted_grid_shares_counts_by_area():
    square = gpd.GeoDataFrame({"people": [1000]}, geometry=[box(384_500, 3_767_500, 385_500, 3_768_500)], crs=32611)
    out, changes = tf.area_weighted_grid(square.to_crs(4326), 1000, ["people"])
    assert changes.crs == "EPSG:32611" and sorted(out["cell"]) == [
        "E384000 N3767000",
        "E384000 N3768000",
        "E385000 N3767000",
        "E385000 N3768000",
    ]
    assert np.allclose(out["people"], 250, rtol=1e-6) and math.isclose(out["people"].sum(), 1000, rel_tol=1e-9)
    truth = geodesic_m2(square.to_crs(4326).geometry[0]) / 1e6
    assert math.isclose(out["area_km2"].sum(), truth, rel_tol=1e-4)


# ------------------------------------------------------------------------------- the chain, through tools
def test_a_chain_of_tools_from_a_messy_file_to_a_checked_file(ctx, store, tmp_path):
    """A partner's CSV (WKT under wkt_geom, one bow-tie) -> repair -> reproject to equal-area -> dissolve by class
    -> area in km² -> saved as GeoParquet and FlatGeobuf, read back."""
    tm = local_tm()
    polys = [
        box(0, 0, 1000, 1000),
        box(1000, 0, 2000, 1000),
        Polygon([(0, 2000), (1000, 3000), (1000, 2000), (0, 3000)]),
    ]
    lonlat = gpd.GeoSeries(polys, crs=tm).to_crs(4326)
    path = tmp_path / "partner.csv"
    rows = "\n".join(f'{c},"{g.wkt}"' for c, g in zip(["flooded", "flooded", "burnt"], lonlat, strict=True))
    path.write_text("class,wkt_geom\n" + rows + "\n", encoding="utf-8")
    raw, _, _, _ = read_user_file(path)  # read as given: the reader repairs too, so register the raw bow-tie
    raw = raw.set_geometry(lonlat.to_numpy())
    layer = store.register_vector(raw, source="test", summary="partner file")
    repaired = run(ctx, "repair_geometry", {}, layer=layer)
    assert repaired.extra["changed"] == 1
    projected = run(ctx, "reproject", {"to_crs": "equal-area"}, layer=repaired)
    assert "+proj=laea" in projected.extra["crs"]
    merged = run(ctx, "dissolve", {"by": "class"}, layer=projected)
    area = run(ctx, "measure", {"quantity": "area", "by": "class"}, layer=merged)
    table = store.read_table(area.id)
    by_class = dict(zip(table["value"], table["area_km2"], strict=True))
    truth = {  # pyproj.Geod on the geometries as drawn (the bow-tie made valid by shapely itself)
        "flooded": geodesic_m2(lonlat[0].union(lonlat[1])) / 1e6,
        "burnt": geodesic_m2(gpd.GeoSeries([shapely.make_valid(polys[2])], crs=tm).to_crs(4326)[0]) / 1e6,
    }
    assert math.isclose(by_class["flooded"], truth["flooded"], rel_tol=1e-4) and math.isclose(
        by_class["flooded"], 2.0, rel_tol=1e-4
    )
    assert math.isclose(by_class["burnt"], truth["burnt"], rel_tol=1e-4) and math.isclose(
        by_class["burnt"], 0.5, rel_tol=1e-4
    )
    for name in ("classes.parquet", "classes.fgb"):
        saved = run(ctx, "save_layer", {"filename": name}, layer=merged)
        report = saved.extra["report"]
        assert report["feature_count"] == 2 and report["path"] == str(store.session_dir / "exports" / name)
        back, _, crs, _ = read_user_file(report["path"])
        assert sorted(back["class"]) == ["burnt", "flooded"] and "laea" in CRS.from_user_input(crs).to_proj4()
    for bad in ("../escape.gpkg", "/etc/x.gpkg", "x.exe"):
        with pytest.raises(ModelRetry, match="filename"):
            run(ctx, "save_layer", {"filename": bad}, layer=merged)


def test_manifest_tool_lists_a_user_file(ctx, tmp_path):
    from geofaham_plugin.core.engines.layers import LayerCatalogue

    path = tmp_path / "pts.csv"
    path.write_text("X_coord,Y_coord,beds\n-118.51,34.07,3\n-118.40,34.12,5\n", encoding="utf-8")
    catalogue = LayerCatalogue(tmp_path)
    catalogue.add_user_layer("clinics", path)
    ctx.layers = catalogue
    record = run(ctx, "file_manifest", {"layer_id": "user:clinics"})
    table = ctx.store.read_table(record.id)
    assert table.to_dict("records") == [
        {
            "value": "pts",
            "crs": "none (EPSG:4326 assumed)",
            "geometry": "Point",
            "count": 2,
            "fields": "beds (integer)",
            "sample_x": -118.51,
            "sample_y": 34.07,
            "sample_lon": -118.51,
            "sample_lat": 34.07,
            "empty_geometries": 0,
            "encoding_problems": "",
        }
    ]


# ------------------------------------------------------------------- filter, rename, per-feature measures
def test_filter_where_numeric_text_digits_and_equality_ignoring_case():
    gdf = gpd.GeoDataFrame(
        {"beds": ["12", "5", None, "30", "7"], "status": ["Open", "closed", "OPEN ", "open", None]},
        geometry=[Point(i, 0) for i in range(5)],
        crs=4326,
    )
    big, changes = tf.filter_where(gdf, "beds", ">", 10)
    assert big["beds"].tolist() == ["12", "30"] and changes.removed == 3
    assert changes.notes == ["1 features without a value in beds left out"]
    assert tf.filter_where(gdf, "beds", "<=", "5")[0]["beds"].tolist() == ["5"]
    opened, _ = tf.filter_where(gdf, "status", "=", "open")
    assert opened.index.tolist() == [0, 2, 3]  # case and surrounding blanks ignored
    assert tf.filter_where(gdf, "status", "!=", "open")[0].index.tolist() == [1]  # no value: neither
    with pytest.raises(ToolFailed, match="does not hold numbers"):
        tf.filter_where(gdf, "status", ">", 3)
    thousands = gdf.assign(beds=["12", "5", None, "30", "1,200"])  # a thousands separator is not guessed away
    with pytest.raises(ToolFailed, match="'1,200'"):
        tf.filter_where(thousands, "beds", ">", 10)
    with pytest.raises(ToolFailed):
        tf.filter_where(gdf, "nope", "=", 1)


def test_rename_fields_refuses_a_taken_name():
    gdf = gpd.GeoDataFrame({"POPULATIO": [1], "NAME": ["a"]}, geometry=[Point(0, 0)], crs=4326)
    out, changes = tf.rename_fields(gdf, {"POPULATIO": "POPULATION"})
    assert list(out.columns) == ["POPULATION", "NAME", "geometry"] and changes.notes == ["POPULATIO renamed POPULATION"]
    with pytest.raises(ToolFailed, match="exists already"):
        tf.rename_fields(gdf, {"POPULATIO": "NAME"})


def test_add_measure_is_geodesic_per_feature_in_any_crs():
    squares = metric_layer([box(0, 0, 1000, 1000), box(0, 2000, 500, 2500)], name=["a", "b"]).to_crs(local_tm())
    out, _ = tf.add_measure(squares, "area")
    truth = [geodesic_m2(g) / 1e6 for g in squares.to_crs(4326).geometry]
    assert np.allclose(out["area_km2"], truth, rtol=1e-6) and np.allclose(out["area_km2"], [1.0, 0.25], rtol=1e-3)
    assert np.allclose(out["area_ha"], out["area_km2"] * 100) and out.crs == squares.crs  # geometry unchanged
    lines = metric_layer([LineString([(0, 0), (3000, 4000)])])
    km = tf.add_measure(lines, "length")[0]["length_km"].iloc[0]
    lon, lat = np.array(lines.geometry.iloc[0].coords).T
    assert math.isclose(km, GEOD.line_length(lon, lat) / 1e3, rel_tol=1e-9) and math.isclose(km, 5.0, rel_tol=1e-3)
    with pytest.raises(ToolFailed, match="no area"):
        tf.add_measure(metric_layer([Point(0, 0)]), "area")


def test_dissolve_into_connected_parts_keeps_separate_ones_apart():
    from geofaham_plugin.core.engines.vector_ops import dissolve

    gdf = metric_layer(
        [box(0, 0, 100, 100), box(50, 50, 150, 150), box(1000, 0, 1100, 100), box(0, 500, 10, 510)],
        kind=["a", "a", "a", "b"],
    )
    parts = dissolve(gdf, None, parts=True)
    assert sorted(parts["count"]) == [1, 1, 2] and len(parts) == 3
    merged = parts[parts["count"] == 2].geometry.iloc[0]
    assert math.isclose(merged.area, gdf.geometry.iloc[0].union(gdf.geometry.iloc[1]).area, rel_tol=1e-9)
    by_kind = dissolve(gdf, "kind", parts=True)
    assert sorted(zip(by_kind["kind"], by_kind["count"], strict=True)) == [("a", 1), ("a", 2), ("b", 1)]
    assert len(dissolve(gdf, None)) == 1 and dissolve(gdf, None)["count"].tolist() == [4]


def test_centroid_of_a_shape_across_the_antimeridian_lies_on_it_not_at_zero():
    across = MultiPolygon([box(179.0, -17.0, 180.0, -16.0), box(-180.0, -17.0, -179.0, -16.0)])
    out, _ = tf.centroids(gpd.GeoDataFrame(geometry=[across], crs=4326))
    c = out.geometry.iloc[0]
    assert abs(abs(c.x) - 180.0) < 1e-6 and abs(c.y + 16.5) < 0.01, c
    assert tf.continuous_lonlat(across).bounds[0] >= 179.0 - 1e-9  # one shape 179..181, not a 358° band
