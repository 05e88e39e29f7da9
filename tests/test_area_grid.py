"""The grid test of many features against one area (engines/area_grid.py) gives GEOS's answer feature for feature:
on points inside, outside, on vertices, on edges and on the grid's own cell edges, on lines and polygons spanning
cells, on holes, empty and missing geometries. The distance index's intersects for point
and line references (an STRtree, not a prepared multipoint) gives the same within/nearest results as the direct
path."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
import shapely
from shapely.geometry import MultiPolygon, Polygon

from geofaham_plugin.core.engines import area_grid, vector_ops
from geofaham_plugin.core.engines.area_grid import intersects_area


def _jagged(rng: np.random.Generator, cx: float, cy: float, r: float, n: int = 150) -> Polygon:
    angles = np.sort(rng.uniform(0, 2 * np.pi, n))
    radius = r * (1 + 0.3 * rng.standard_normal(n).clip(-2, 2))
    return Polygon(np.c_[cx + radius * np.cos(angles), cy + radius * np.sin(angles)]).buffer(0)


def _areas() -> dict[str, shapely.Geometry]:
    rng = np.random.default_rng(7)
    blobs = MultiPolygon([_jagged(rng, x, y, 0.8) for x, y in ((1, 1), (3.5, 1.2), (2, 3.4))])
    square_with_hole = Polygon([(0, 0), (4, 0), (4, 4), (0, 4)], [[(1, 1), (3, 1), (3, 3), (1, 3)]])
    areas = {
        "jagged multipolygon": shapely.union_all(blobs.geoms),
        "square with a hole": square_with_hole,
        "one big triangle": Polygon([(0, 0), (4, 0.5), (1, 4)]),  # long edges: cut into pieces before marking
        "thin sliver": Polygon([(0, 0), (4, 4), (4, 4.0001)]),
    }
    shapely.prepare(list(areas.values()))  # the reference answers come quicker
    return areas


def _features(area: shapely.Geometry, n: int, rng: np.random.Generator) -> np.ndarray:
    minx, miny, maxx, maxy = area.bounds
    pad = 0.1 * (maxx - minx)
    xs, ys = rng.uniform(minx - pad, maxx + pad, n), rng.uniform(miny - pad, maxy + pad, n)
    points = list(shapely.points(xs, ys))
    coords = shapely.get_coordinates(shapely.boundary(area))
    points += list(shapely.points(coords[:: max(1, len(coords) // 500)]))  # exactly on vertices
    edge = shapely.line_interpolate_point(shapely.boundary(area), rng.uniform(0, 1, 300), normalized=True)
    points += list(np.atleast_1d(edge))  # on (or within rounding of) the outline
    side = int(np.clip(np.sqrt(n), 16, 2048))  # the grid's own cell edges and corners
    gx = minx + (maxx - minx) * rng.integers(0, side + 1, 300) / side
    gy = miny + (maxy - miny) * rng.integers(0, side + 1, 300) / side
    points += list(shapely.points(gx, gy)) + list(shapely.points(gx, ys[:300]))
    lines = list(shapely.linestrings(np.stack([np.c_[xs[:500], ys[:500]], np.c_[xs[:500] + 0.01, ys[:500]]], 1)))
    boxes = list(shapely.box(xs[500:900], ys[500:900], xs[500:900] + 0.003, ys[500:900] + 0.002))
    empties = [None, shapely.Point(), shapely.Polygon()]
    return np.array(points + lines + boxes + empties, dtype=object)


@pytest.mark.parametrize("name", list(_areas()))
def test_the_grid_answers_as_geos_feature_for_feature(name):
    area = _areas()[name]
    geoms = _features(area, 40_000, np.random.default_rng(11))
    expected = shapely.intersects(area, geoms)
    got = intersects_area(area, geoms)
    assert got.dtype == bool and len(got) == len(geoms)
    assert np.array_equal(got, expected), np.flatnonzero(got != expected)[:10]
    assert 0 < expected.sum() < len(geoms)  # both answers occur


def test_each_run_of_cells_takes_the_state_of_every_cell_in_it():
    area = _areas()["square with a hole"]
    grid = area_grid._Grid(area, 128)
    j, i = np.nonzero(grid.state != area_grid._BOUNDARY)
    centres = shapely.intersects_xy(area, grid.minx + (i + 0.5) * grid.w, grid.miny + (j + 0.5) * grid.h)
    assert np.array_equal(grid.state[j, i] == area_grid._INSIDE, centres)  # every cell tested on its own
    assert centres.any() and (~centres).any()


def test_the_grid_leaves_no_cell_on_the_outline_with_a_state():
    area = _areas()["jagged multipolygon"]
    grid = area_grid._Grid(area, 200)
    j, i = np.nonzero(grid.state != area_grid._BOUNDARY)
    cells = shapely.box(grid.minx + i * grid.w, grid.miny + j * grid.h, grid.minx + (i + 1) * grid.w,
                        grid.miny + (j + 1) * grid.h)  # fmt: skip
    outline = shapely.boundary(area)
    shapely.prepare(outline)
    assert not shapely.intersects(cells, outline).any()
    inside = grid.state[j, i] == area_grid._INSIDE
    assert np.array_equal(shapely.contains(area, cells), inside) and inside.any() and (~inside).any()


def test_inside_and_outside_keep_their_answers_on_a_big_layer():
    area = _areas()["square with a hole"]
    geoms = _features(area, 30_000, np.random.default_rng(5))
    layer = gpd.GeoDataFrame({"n": np.arange(len(geoms))}, geometry=list(geoms), crs=4326)
    mask = gpd.GeoDataFrame(geometry=[area], crs=4326)
    expected = shapely.intersects(area, geoms)
    assert vector_ops.inside(layer, mask)["n"].tolist() == np.flatnonzero(expected).tolist()
    out, unlocated = vector_ops.outside(layer, mask)
    located = ~(shapely.is_missing(geoms) | shapely.is_empty(geoms))
    assert out["n"].tolist() == np.flatnonzero(located & ~expected).tolist() and unlocated == 3


@pytest.mark.parametrize("kind", ["points", "lines"])
def test_distances_to_many_points_or_lines_match_the_direct_path(kind):
    rng = np.random.default_rng(9)
    xs, ys = rng.uniform(-0.2, 0.2, 6_000), rng.uniform(51.3, 51.6, 6_000)
    features = gpd.GeoDataFrame({"n": np.arange(6_000)}, geometry=shapely.points(xs, ys), crs=4326)
    rx, ry = rng.uniform(-0.2, 0.2, 400), rng.uniform(51.3, 51.6, 400)
    if kind == "points":
        refs = list(shapely.points(rx, ry)) + list(features.geometry.iloc[:5])  # five features on a reference
    else:
        refs = list(shapely.linestrings(np.stack([np.c_[rx, ry], np.c_[rx + 0.002, ry + 0.001]], 1)))[:120]
    reference = gpd.GeoDataFrame(geometry=refs, crs=4326)
    indexed = vector_ops.within_distance(features, reference, 300.0, method="indexed")
    direct = vector_ops.within_distance(features, reference, 300.0, method="direct")
    assert sorted(indexed["n"]) == sorted(direct["n"]) and len(indexed) > 50
    merged = indexed.set_index("n")["distance_m"].sub(direct.set_index("n")["distance_m"]).abs()
    assert merged.max() <= 0.1
    if kind == "points":
        assert (indexed["distance_m"] == 0).sum() == 5
    near_i = vector_ops.nearest_k(features, reference, 10, method="indexed")
    near_d = vector_ops.nearest_k(features, reference, 10, method="direct")
    assert near_i["distance_m"].tolist() == near_d["distance_m"].tolist()
