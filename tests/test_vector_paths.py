"""The indexed path of within_distance / nearest_k (reference segments in an STRtree) against the direct path
(each feature against the whole reference): the same features, in the same order, with the same distances, on
random data of every geometry type and on the sample layers; and the routing picks the indexed path for big
layers."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from shapely.geometry import Polygon

from geofaham_plugin.core.engines import vector_ops as ops
from geofaham_plugin.core.engines.layers import default_catalogue

CENTRE = (-118.10, 34.18)


def _blob(rng: np.random.Generator, cx: float, cy: float, vertices: int, radius: float) -> Polygon:
    angles = np.sort(rng.uniform(0, 2 * np.pi, vertices))
    r = radius * (1 + 0.25 * rng.standard_normal(vertices).clip(-2, 2))
    return Polygon(np.c_[cx + r * np.cos(angles), cy + r * np.sin(angles)]).buffer(0)


def _features(rng: np.random.Generator, n: int) -> gpd.GeoDataFrame:
    """Points, small building squares and short lines scattered over ~20 km, in a metric CRS's neighbour
    (EPSG:4326), each with an id."""
    x = CENTRE[0] + rng.uniform(-0.12, 0.12, n)
    y = CENTRE[1] + rng.uniform(-0.09, 0.09, n)
    kind = rng.integers(0, 3, n)
    geoms = shapely.points(x, y)
    squares = shapely.box(x, y, x + 0.0002, y + 0.0002)
    lines = shapely.linestrings(np.stack([np.c_[x, y], np.c_[x + 0.001, y - 0.0007]], axis=1))
    geoms = np.where(kind == 1, squares, np.where(kind == 2, lines, geoms))
    return gpd.GeoDataFrame({"fid": np.arange(n)}, geometry=geoms, crs=4326)


def _references(rng: np.random.Generator) -> dict[str, gpd.GeoDataFrame]:
    blobs = [_blob(rng, CENTRE[0] + dx, CENTRE[1] + dy, 60, 0.02) for dx, dy in ((-0.05, 0.02), (0.04, -0.03))]
    road = shapely.linestrings(np.c_[np.linspace(-0.1, 0.1, 40) + CENTRE[0], rng.uniform(-0.05, 0.05, 40) + CENTRE[1]])
    shelters = shapely.points(CENTRE[0] + rng.uniform(-0.1, 0.1, 15), CENTRE[1] + rng.uniform(-0.08, 0.08, 15))
    return {
        "polygons": gpd.GeoDataFrame(geometry=blobs, crs=4326),
        "line": gpd.GeoDataFrame(geometry=[road], crs=4326),
        "points": gpd.GeoDataFrame(geometry=list(shelters), crs=4326),
        "mixed": gpd.GeoDataFrame(geometry=[blobs[0], road, *shelters[:3]], crs=4326).to_crs(32611),
    }


def _same(a: gpd.GeoDataFrame, b: gpd.GeoDataFrame) -> None:
    assert a.index.tolist() == b.index.tolist()
    assert np.abs(a["distance_m"].to_numpy() - b["distance_m"].to_numpy()).max(initial=0.0) <= 1e-6
    assert a.columns.tolist() == b.columns.tolist()


@pytest.mark.parametrize("reference", ["polygons", "line", "points", "mixed"])
def test_indexed_path_matches_direct_path_on_random_data(reference):
    rng = np.random.default_rng(16)
    features = _features(rng, 2500)
    ref = _references(rng)[reference]
    for distance in (150.0, 2000.0):
        fast = ops.within_distance(features, ref, distance, method="indexed")
        slow = ops.within_distance(features, ref, distance, method="direct")
        assert len(fast) > 10  # something is near, and not everything
        assert len(fast) < len(features)
        _same(fast, slow)
    for k in (1, 7, 60):
        fast = ops.nearest_k(features, ref, k, method="indexed")
        _same(fast, ops.nearest_k(features, ref, k, method="direct"))
        assert fast["rank"].tolist() == list(range(1, k + 1))
    # k beyond the layer: every feature ranked, both ways
    few = features.iloc[:40]
    _same(ops.nearest_k(few, ref, 100, method="indexed"), ops.nearest_k(few, ref, 100, method="direct"))


def test_indexed_path_matches_direct_path_on_sample_layers():
    catalogue = default_catalogue()
    damage, _ = catalogue.load("eaton_dins")
    perimeter, _ = catalogue.load("eaton_perimeter")
    outside = ops.outside(damage, perimeter)[0].iloc[:600]  # the direct path is slow: a part of the layer
    sample = pd.concat([damage.iloc[:300], outside])
    for distance in (100.0, 1500.0):
        _same(
            ops.within_distance(sample, perimeter, distance, method="indexed"),
            ops.within_distance(sample, perimeter, distance, method="direct"),
        )
    _same(ops.nearest_k(outside, perimeter, 25, method="indexed"), ops.nearest_k(outside, perimeter, 25, "direct"))
    labels, _ = catalogue.load("lahaina_labels")  # polygons against the Lahaina burn area
    burn, _ = catalogue.load("lahaina_burn")
    _same(
        ops.within_distance(labels, burn, 500.0, method="indexed"),
        ops.within_distance(labels, burn, 500.0, method="direct"),
    )
    _same(ops.nearest_k(labels, burn, 10, method="indexed"), ops.nearest_k(labels, burn, 10, method="direct"))


def test_routing_picks_the_indexed_path_for_big_located_layers():
    rng = np.random.default_rng(3)
    big = _features(rng, ops.INDEXED_FROM).geometry.values
    assert ops.distance_method(big) == "indexed"
    assert ops.distance_method(big[: ops.INDEXED_FROM - 1]) == "direct"  # small: direct GEOS calls
    holed = big.copy()
    holed[5] = None  # a feature without geometry: the direct path's handling is kept
    assert ops.distance_method(holed) == "direct"
    # the default is the routed one: the same answer as the indexed path forced, for within and nearest
    ref = _references(rng)["polygons"]
    features = _features(rng, ops.INDEXED_FROM)
    _same(ops.within_distance(features, ref, 300.0), ops.within_distance(features, ref, 300.0, method="indexed"))
