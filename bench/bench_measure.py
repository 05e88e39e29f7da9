"""Areas, lengths and dissolves of many features (issue 16): the product's ``vector_ops.measure`` and
``vector_ops.dissolve`` against merging everything first, timed in one run.

Synthetic, seeded, generated here and never committed: building footprints (5-15 m boxes around Nairobi, about
1 % of the box covered, so some overlap and touch; 10 % duplicated) and road-like lines (2-4 vertices, a few
hundred metres, crossing one another; 10 % duplicated), each with a class of three values. Operations:

- ``area``, ``area by class``: the product (polygons merged only where they meet, small ones measured in a
  centred equal-area projection) against the baseline ``union_all`` of all (of each class), then the geodesic
  area of the union, as before issue 16;
- ``perimeter``: the outline of the union (``measure`` of a polygon layer's length) against ``union_all(...).boundary``;
- ``length``, ``length by class``: lines merged only where two share a stretch, geodesic lengths vectorised,
  against the geodesic length of ``union_all``;
- ``dissolve by class``, ``dissolve parts``: the product against geopandas' ``dissolve`` (then, for parts,
  ``explode`` and counting each part's features one query at a time, as before).

Prints each operation's time for both, their ratio and whether the results agree (areas and lengths to 1e-8;
shapes ``equals``; part counts exactly). The baseline runs only up to ``--baseline-max`` features (it takes
minutes at 10^5). Not a test: ``.venv/bin/python bench/bench_measure.py [--sizes 10000,100000]``."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import shapely

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from geofaham_plugin.core.domain.geodesy import geodesic_area_m2, geodesic_length_m  # noqa: E402
from geofaham_plugin.core.engines import vector_ops  # noqa: E402

BOX = (36.7, -1.42, 37.05, -1.18)
CLASSES = np.array(["destroyed", "major", "minor"])


def footprints(n: int, rng: np.random.Generator) -> gpd.GeoDataFrame:
    x, y = rng.uniform(BOX[0], BOX[2], n), rng.uniform(BOX[1], BOX[3], n)
    size = rng.uniform(5e-5, 1.5e-4, n)
    geoms = shapely.box(x, y, x + size, y + size * 0.7)
    geoms = np.concatenate([geoms, geoms[: n // 10]])
    return gpd.GeoDataFrame({"cls": rng.choice(CLASSES, len(geoms))}, geometry=geoms, crs=4326)


def roads(n: int, rng: np.random.Generator) -> gpd.GeoDataFrame:
    x, y = rng.uniform(BOX[0], BOX[2], n), rng.uniform(BOX[1], BOX[3], n)
    steps = rng.normal(0, 1.5e-3, (n, 3, 2)).cumsum(axis=1) + np.stack([x, y], axis=1)[:, None, :]
    starts = np.stack([x, y], axis=1)[:, None, :]
    geoms = np.array([shapely.LineString(np.vstack([starts[i], steps[i, : 1 + i % 3]])) for i in range(n)])
    geoms = np.concatenate([geoms, geoms[: n // 10]])
    return gpd.GeoDataFrame({"cls": rng.choice(CLASSES, len(geoms))}, geometry=geoms, crs=4326)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def by_class(layer: gpd.GeoDataFrame, measure: Callable[[Any], float]) -> dict[str, float]:
    return {str(c): measure(shapely.union_all(layer.geometry[layer["cls"] == c].to_numpy())) for c in CLASSES}


def table_of(result: tuple, column: str, scale: float) -> dict[str, float]:
    table = result[0]
    return {str(v): float(a) * scale for v, a in zip(table["value"], table[column], strict=True)}


def close(a: dict[str, float] | float, b: dict[str, float] | float, rel: float = 1e-8, abs_: float = 0.0) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], rel, abs_) for k in a)
    assert isinstance(a, float) and isinstance(b, float)
    return abs(a - b) <= max(rel * abs(b), abs_)


def parts_before(layer: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Dissolve parts as before: geopandas, explode, then one tree query per part."""
    out = layer.dissolve(by="cls", as_index=False)[["cls", "geometry"]].explode(index_parts=False)
    out = out.reset_index(drop=True)
    geoms, keys = layer.geometry.to_numpy(), layer["cls"].to_numpy()
    tree = shapely.STRtree(geoms)
    out["count"] = [
        int(sum(keys[i] == key for i in tree.query(part, predicate="intersects")))
        for key, part in zip(out["cls"], out.geometry, strict=True)
    ]
    return out


def same_shapes(got: gpd.GeoDataFrame, want: gpd.GeoDataFrame) -> bool:
    return len(got) == len(want) and all(g.equals(w) for g, w in zip(got.geometry, want.geometry, strict=True))


def same_parts(got: gpd.GeoDataFrame, want: gpd.GeoDataFrame) -> bool:
    """The same parts with the same counts, in any order: per class, parts sorted by their planar size in degrees
    (only to match them up), counts equal and sizes equal to 1e-9."""
    for cls in CLASSES:
        a, b = (f[f["cls"] == cls] for f in (got, want))
        size_a, size_b = shapely.area(a.geometry.to_numpy()), shapely.area(b.geometry.to_numpy())
        order_a, order_b = np.argsort(size_a, kind="stable"), np.argsort(size_b, kind="stable")
        if len(a) != len(b) or not np.array_equal(a["count"].to_numpy()[order_a], b["count"].to_numpy()[order_b]):
            return False
        if not np.allclose(size_a[order_a], size_b[order_b], rtol=1e-9):
            return False
    return True


def operations(polys: gpd.GeoDataFrame, lines: gpd.GeoDataFrame) -> list[tuple[str, Callable, Callable, Callable]]:
    """(name, product, baseline, agree(product result, baseline result))."""
    km2, km = 1e6, 1e3
    return [
        (
            "area",
            lambda: vector_ops.measure(polys, "area", None)[1] * km2,
            lambda: geodesic_area_m2(shapely.union_all(polys.geometry.to_numpy())),
            lambda a, b: close(a, b, abs_=1.0),  # the table's km² is rounded to 1e-6 km² = 1 m²
        ),
        (
            "area by class",
            lambda: table_of(vector_ops.measure(polys, "area", "cls"), "area_km2", km2),
            lambda: by_class(polys, geodesic_area_m2),
            lambda a, b: close(a, b, abs_=1.0),
        ),
        (
            "perimeter",
            lambda: vector_ops.measure(polys, "length", None)[1] * km,
            lambda: geodesic_length_m(shapely.union_all(polys.geometry.to_numpy()).boundary),
            lambda a, b: close(a, b, abs_=1.0),  # km rounded to 1e-6 in the total
        ),
        (
            "length",
            lambda: vector_ops.measure(lines, "length", None)[1] * km,
            lambda: geodesic_length_m(shapely.union_all(lines.geometry.to_numpy())),
            lambda a, b: close(a, b, abs_=1.0),
        ),
        (
            "length by class",
            lambda: table_of(vector_ops.measure(lines, "length", "cls"), "length_km", km),
            lambda: by_class(lines, geodesic_length_m),
            lambda a, b: close(a, b, abs_=0.1),  # the table's km rounded to 1e-4 km = 0.1 m
        ),
        (
            "dissolve by class",
            lambda: vector_ops.dissolve(polys, "cls"),
            lambda: polys.dissolve(by="cls", as_index=False),
            same_shapes,
        ),
        (
            "dissolve parts",
            lambda: vector_ops.dissolve(polys, "cls", parts=True),
            lambda: parts_before(polys),
            same_parts,
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated feature counts (before duplicates)")
    parser.add_argument("--baseline-max", type=int, default=100_000, help="largest size the baseline runs at")
    args = parser.parse_args(argv)
    failed = False
    for n in (int(s) for s in args.sizes.split(",")):
        rng = np.random.default_rng(n)
        polys, lines = footprints(n, rng), roads(n, rng)
        print(f"\n{len(polys):,} footprints, {len(lines):,} lines (10 % duplicated), 3 classes")
        print(f"  {'operation':20} {'product s':>10} {'baseline s':>11} {'speed-up':>9}  agree")
        for name, product, baseline, agree in operations(polys, lines):
            t_new, got = timed(product)
            if n > args.baseline_max:
                print(f"  {name:20} {t_new:10.2f} {'-':>11} {'-':>9}  (baseline above --baseline-max)")
                continue
            t_old, want = timed(baseline)
            ok = bool(agree(got, want))
            failed |= not ok
            print(f"  {name:20} {t_new:10.2f} {t_old:11.2f} {t_old / t_new:8.1f}x  {'yes' if ok else 'NO'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
