"""Areas of many polygons at once (domain/geodesy.polygon_areas_m2, vector_ops.union_area_m2) equal the geodesic
area of each polygon and of their union, computed one by one on the ellipsoid as before: small footprints near and
far from the centre, across the antimeridian, big and invalid polygons, holes, overlapping, touching and nested
polygons, missing geometries. Lengths of many lines (domain/geodesy.line_lengths_m, vector_ops.merge_overlapping_lines)
likewise: each line's geodesic length, and the union's with duplicated and overlapping stretches counted once."""

from __future__ import annotations

import sys

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from shapely.geometry import Polygon

from geofaham_plugin.core.domain.geodesy import geodesic_area_m2, geodesic_length_m, line_lengths_m, polygon_areas_m2
from geofaham_plugin.core.engines import vector_ops


def _footprints(n: int, rng: np.random.Generator, box=(36.7, -1.42, 37.05, -1.18)) -> np.ndarray:
    x, y = rng.uniform(box[0], box[2], n), rng.uniform(box[1], box[3], n)
    size = rng.uniform(5e-5, 1.5e-4, n)
    return shapely.box(x, y, x + size, y + size * 0.7)


def _one_by_one(geoms) -> np.ndarray:
    return np.array([geodesic_area_m2(g) for g in geoms])


def test_each_polygon_as_the_geodesic_area():
    rng = np.random.default_rng(1)
    footprints = _footprints(1500, rng)
    far = _footprints(200, rng, box=(-179.99, -70, 179.99, 70))  # far from the centre: geodesic, one by one
    across = shapely.box(179.9999, 10.0, 180.0001, 10.0001)  # across the antimeridian in lon/lat: invalid-wide
    big = Polygon([(36.0, -2.0), (37.5, -2.0), (37.5, -0.5), (36.0, -0.5)], [[(36.5, -1.5), (37, -1.5), (37, -1)]])
    bowtie = Polygon([(36.8, -1.3), (36.801, -1.299), (36.801, -1.3), (36.8, -1.299)])  # invalid: made valid
    multi = shapely.union_all(footprints[:3])
    geoms = np.concatenate([footprints, far, [across, big, bowtie, multi, None, Polygon()]])
    got, want = polygon_areas_m2(geoms), _one_by_one(geoms)
    assert got[-2:].tolist() == [0.0, 0.0]
    assert got[-5] == want[-5]  # big: measured geodesically, as it was
    assert np.allclose(got, want, rtol=1e-8, atol=1e-6)
    assert want[: len(footprints)].min() > 10  # real footprints, tens to hundreds of m²


def test_the_union_counts_each_place_once():
    rng = np.random.default_rng(2)
    footprints = list(_footprints(3000, rng))
    a = shapely.box(36.80, -1.30, 36.81, -1.29)
    pieces = [
        a,
        shapely.box(36.805, -1.295, 36.815, -1.285),  # overlaps a
        shapely.box(36.81, -1.30, 36.82, -1.29),  # touches a along an edge
        shapely.box(36.801, -1.299, 36.802, -1.298),  # inside a
        shapely.box(36.812, -1.288, 36.816, -1.284),  # overlaps the second: a chain of three
        a,  # a duplicate
    ]
    polys = np.array(footprints + pieces + [None], dtype=object)
    want = geodesic_area_m2(shapely.union_all([p for p in polys if p is not None]))
    assert vector_ops.union_area_m2(polys) == pytest.approx(want, rel=1e-8)
    assert vector_ops.union_area_m2(np.array(pieces[:3], dtype=object)) == pytest.approx(
        geodesic_area_m2(shapely.union_all(pieces[:3])), rel=1e-9
    )


def test_without_scipy_the_union_is_merged_at_once(monkeypatch):
    rng = np.random.default_rng(3)
    polys = np.concatenate([_footprints(500, rng), _footprints(500, rng)])
    with_scipy = vector_ops.union_area_m2(polys)
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)
    assert vector_ops.union_area_m2(polys) == pytest.approx(with_scipy, rel=1e-8)


def test_measure_by_group_on_many_footprints_matches_one_by_one():
    rng = np.random.default_rng(4)
    geoms = _footprints(4000, rng)
    layer = gpd.GeoDataFrame({"cls": rng.choice(["destroyed", "major", "minor"], len(geoms))}, geometry=geoms, crs=4326)
    table, total, what = vector_ops.measure(layer, "area", "cls")
    assert what == "area"
    for row in table.itertuples():
        members = layer.geometry[layer["cls"] == row.value].to_numpy()
        assert row.area_km2 == pytest.approx(geodesic_area_m2(shapely.union_all(members)) / 1e6, abs=2e-6)
    assert total == pytest.approx(geodesic_area_m2(shapely.union_all(geoms)) / 1e6, abs=2e-6)


def test_dissolve_merges_only_what_meets_and_equals_geopandas():
    rng = np.random.default_rng(5)
    a = shapely.box(36.80, -1.30, 36.81, -1.29)
    pieces = [a, shapely.box(36.81, -1.30, 36.82, -1.29), shapely.box(36.805, -1.295, 36.815, -1.285)]
    geoms = np.concatenate([_footprints(3000, rng), pieces, [shapely.box(36.9, -1.3, 36.91, -1.29)]])
    layer = gpd.GeoDataFrame({"cls": rng.choice(["x", "y"], len(geoms))}, geometry=geoms, crs=4326)
    layer.loc[len(geoms) - 4 : len(geoms) - 2, "cls"] = "x"  # touching and overlapping pieces in one group
    got = vector_ops.dissolve(layer, "cls")
    want = layer.dissolve(by="cls", as_index=False)
    assert got["cls"].tolist() == want["cls"].tolist() == ["x", "y"]
    assert all(g.equals(w) and g.is_valid for g, w in zip(got.geometry, want.geometry, strict=True))
    assert got["count"].tolist() == layer["cls"].value_counts().sort_index().tolist()
    with_missing = pd.concat([layer, gpd.GeoDataFrame({"cls": ["x"]}, geometry=[None], crs=4326)], ignore_index=True)
    again = vector_ops.dissolve(with_missing, "cls")  # geopandas' own path: the same shapes
    assert all(g.equals(w) for g, w in zip(again.geometry, want.geometry, strict=True))


def _segments(n: int, rng: np.random.Generator, box=(36.7, -1.42, 37.05, -1.18)) -> np.ndarray:
    """Road-like lines: 2-4 vertices, a few hundred metres, crossing one another here and there."""
    x, y = rng.uniform(box[0], box[2], n), rng.uniform(box[1], box[3], n)
    steps = rng.normal(0, 1.5e-3, (n, 3, 2)).cumsum(axis=1)
    return np.array([shapely.LineString([(x[i], y[i]), *(steps[i, : 1 + i % 3] + (x[i], y[i]))]) for i in range(n)])


def test_lengths_of_many_lines_at_once_equal_the_geodesic_length_of_each():
    rng = np.random.default_rng(6)
    lines = _segments(2000, rng)
    multi = (
        shapely.MultiLineString([[(0, 0), (1, 1)]]),
        shapely.MultiLineString([[(0, 0), (1, 1)], [(170, 60), (-170, 61)]]),
    )
    ring = shapely.LinearRing([(10, 10), (10.1, 10), (10.1, 10.1)])
    square = shapely.box(36.8, -1.3, 36.81, -1.29)
    geoms = np.concatenate([lines, [*multi, ring, None, shapely.LineString(), square, shapely.Point(1, 1)]])
    got = line_lengths_m(geoms)
    want = np.array([geodesic_length_m(g) for g in geoms])
    assert np.allclose(got, want, rtol=1e-12, atol=1e-9)
    assert got[-4:].tolist() == [0.0, 0.0, 0.0, 0.0]  # missing, empty, a polygon (not a line), a point
    assert line_lengths_m(np.array([], dtype=object)).tolist() == []
    assert line_lengths_m(np.array([square.boundary]))[0] == pytest.approx(
        geodesic_length_m(square.boundary), rel=1e-12
    )


def test_the_length_of_many_lines_counts_shared_stretches_once_as_union_all_does():
    rng = np.random.default_rng(7)
    a = shapely.LineString([(36.80, -1.30), (36.82, -1.30)])
    pieces = [
        a,
        a,  # a duplicate
        shapely.LineString([(36.81, -1.30), (36.83, -1.30)]),  # overlaps a along 0.01°
        shapely.LineString([(36.825, -1.30), (36.84, -1.30), (36.84, -1.31)]),  # overlaps the one before: a chain
        shapely.LineString([(36.81, -1.31), (36.81, -1.29)]),  # crosses a: no stretch shared
        shapely.LineString([(36.90, -1.30), (36.92, -1.30), (36.91, -1.30)]),  # runs back over itself
    ]
    lines = np.concatenate([_segments(3000, rng), pieces, [None]])
    for chosen in (lines, np.array(pieces, dtype=object)):
        present = [g for g in chosen if g is not None]
        want = geodesic_length_m(shapely.union_all(present))
        assert line_lengths_m(vector_ops.merge_overlapping_lines(chosen)).sum() == pytest.approx(want, rel=1e-9)
    assert line_lengths_m(vector_ops.merge_overlapping_lines(np.array(pieces[-1:]))).sum() == pytest.approx(
        geodesic_length_m(shapely.LineString([(36.90, -1.30), (36.92, -1.30)])), rel=1e-9
    )
    layer = gpd.GeoDataFrame({"kind": ["road"] * len(pieces)}, geometry=pieces, crs=4326)
    table, total, what = vector_ops.measure(layer, "length", "kind")
    assert what == "length"
    assert total == pytest.approx(geodesic_length_m(shapely.union_all(pieces)) / 1e3, abs=1e-6)


def test_perimeter_of_touching_and_overlapping_polygons_is_the_outline_of_their_union():
    rng = np.random.default_rng(8)
    a = shapely.box(36.80, -1.30, 36.81, -1.29)
    polys = np.concatenate(
        [
            _footprints(2000, rng),
            [a, shapely.box(36.81, -1.30, 36.82, -1.29), shapely.box(36.805, -1.295, 36.815, -1.285)],
        ]
    )
    layer = gpd.GeoDataFrame(geometry=polys, crs=4326)
    table, total, what = vector_ops.measure(layer, "length", None)
    assert what == "perimeter"
    assert total == pytest.approx(geodesic_length_m(shapely.union_all(polys).boundary) / 1e3, abs=1e-6)


def test_the_measure_bench_finds_the_product_equal_to_merging_everything_first(capsys):
    """bench/bench_measure.py at a small size: every operation agrees with its baseline (exit code 0)."""
    from bench import bench_measure

    assert bench_measure.main(["--sizes", "600"]) == 0
    out = capsys.readouterr().out
    assert out.count("  yes") == 7 and " NO" not in out
