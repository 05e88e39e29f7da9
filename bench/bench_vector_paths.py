"""Vector paths at scale: each candidate path of the operations the analysis specs compile to, timed at growing
sizes in one run.

Synthetic building points (seeded, with a damage class) at 10^5 and 10^6 (``--sizes 100000,1000000,3000000`` for
more; generated here, never committed) around the ~2,300-vertex multipolygon hazard of
``bench_damage_join.py``. Operations and paths:

- inside + class breakdown: ``tool`` (the inside and count tools as they run: GeoPackage artifacts read and
  written through the Response Store; the time until the count table is registered, while big artifacts may
  still be written in the background), ``tool+flush`` (the same, then waiting until every artifact is written
  and indexed: what a run waits for before it saves its record), ``tool/disk`` (the tools with the points' layer
  no longer in memory: read from its GeoPackage, through its R-tree for the hazard's box), ``tool/nomem`` (the tools through a store
  without its frame memory and background writes: every artifact written, read back and re-read synchronously,
  as before issue 16's store work), ``ops`` (vector_ops.inside + count_by in memory), ``prepared``
  (prepared hazard, ``intersects_xy`` + ``np.unique``: the reference), ``strtree`` (points in an STRtree queried
  by the hazard), ``spatialite`` / ``postgis`` (``engine.count_damage`` with the hazard as an artifact; PostGIS
  when GEOFAHAM_PG_DSN is set);
- within 500 m: ``tool``, ``ops`` (routed: indexed), ``direct`` (the pre-routing path; only at sizes up to
  --direct-max, it is O(n * hazard vertices)), ``prepared`` (the hazard buffered once in the local projection,
  prepared, ``intersects_xy``; planar, no geodesic distances: the reference);
- nearest 10: ``tool``, ``ops`` (routed), ``direct`` (as above), ``prepared`` (planar ``query_nearest`` on an
  STRtree of the hazard's segments + ``argpartition``, no geodesic distances: the reference);
- within 100 m of any of 10^4 sites and the 10 nearest to them (``within10k`` / ``nearest10k``: 10^6 x 10^4 at the
  default sizes): ``tool``, ``ops``, ``prepared`` (the best in-process method for points to points: a scipy k-d
  tree of the sites queried with every point's planar coordinates; no geodesic distances: the reference).

Prints, per size, each path's median time (untraced runs), peak traced Python memory (one more run under
tracemalloc: numpy and Python objects, not GEOS) and its ratio to the reference, then how each path's time grows from the smallest to the largest size, and
the process's peak RSS. Every path's result is checked against the reference. Not a test; run with
``.venv/bin/python bench/bench_vector_paths.py``. Results go to ``bench/results/vector_paths.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import shapely
from pyproj import Transformer
from scipy.spatial import cKDTree

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bench.bench_damage_join as join  # noqa: E402
from geofaham_plugin.core.agents import ToolContext  # noqa: E402
from geofaham_plugin.core.agents import vector as tools  # noqa: E402
from geofaham_plugin.core.config import settings_from_env  # noqa: E402
from geofaham_plugin.core.engines import vector_ops as ops  # noqa: E402
from geofaham_plugin.core.engines.db import ArtifactFile, open_engine  # noqa: E402
from geofaham_plugin.core.engines.layers import default_catalogue  # noqa: E402
from geofaham_plugin.core.store.store import ResponseStore  # noqa: E402

DISTANCE_M = 500.0
K = 10
N_FACILITIES = 10_000  # the second reference: many points (10^6 x 10^4), as facilities or sites
FACILITY_DISTANCE_M = 100.0  # 10^4 discs of 100 m cover about a third of the bench's box


def facilities_layer(seed: int) -> gpd.GeoDataFrame:
    """N_FACILITIES seeded points in the bench's box."""
    rng = np.random.default_rng(seed)
    x0, y0, x1, y1 = join.BBOX
    xy = shapely.points(rng.uniform(x0, x1, N_FACILITIES), rng.uniform(y0, y1, N_FACILITIES))
    return gpd.GeoDataFrame({"name": [f"site {i}" for i in range(N_FACILITIES)]}, geometry=xy, crs=4326)


def reference_paths(
    points: gpd.GeoDataFrame, hazard: shapely.Geometry, facilities: gpd.GeoDataFrame
) -> dict[str, Callable[[], Any]]:
    """The in-process references: prepared shapely / STRtree, planar in the local projection (the hazard's); for
    the facilities (points to points), a k-d tree of the facilities queried by every point's coordinates."""
    xs, ys = shapely.get_x(points.geometry.values), shapely.get_y(points.geometry.values)
    classes = points["damage_class"].to_numpy()
    hazard_gdf = gpd.GeoDataFrame(geometry=[hazard], crs=4326)
    metric = ops.local_metric_crs(hazard_gdf)
    ref = shapely.union_all(hazard_gdf.to_crs(metric).geometry.values)

    def inside_prepared() -> dict[str, int]:
        shapely.prepare(hazard)
        values, counts = np.unique(classes[shapely.intersects_xy(hazard, xs, ys)], return_counts=True)
        return dict(zip(values.tolist(), counts.tolist(), strict=True))

    def inside_strtree() -> dict[str, int]:
        hits = shapely.STRtree(points.geometry.values).query(hazard, predicate="intersects")
        values, counts = np.unique(classes[hits], return_counts=True)
        return dict(zip(values.tolist(), counts.tolist(), strict=True))

    def within_prepared() -> int:
        xy = shapely.get_coordinates(points.to_crs(metric).geometry.values)
        zone = shapely.buffer(ref, DISTANCE_M, quad_segs=16)
        shapely.prepare(zone)
        return int(shapely.intersects_xy(zone, xy[:, 0], xy[:, 1]).sum())

    def nearest_prepared() -> list[float]:
        geoms = points.to_crs(metric).geometry.values
        index = ops._ReferenceIndex(ref)
        planar = np.zeros(len(geoms))
        which, _, d = index.nearest(geoms)
        planar[which] = d
        planar[index.intersects(geoms)] = 0.0
        return np.sort(np.partition(planar, K)[:K]).round().tolist()

    def metric_xy(layer: gpd.GeoDataFrame) -> np.ndarray:  # coordinates transformed as they are (no geometries)
        xy = shapely.get_coordinates(layer.geometry.values)
        return np.column_stack(Transformer.from_crs(layer.crs, metric, always_xy=True).transform(xy[:, 0], xy[:, 1]))

    def within_many_kdtree() -> int:
        tree = cKDTree(metric_xy(facilities))
        d, _ = tree.query(metric_xy(points), k=1, distance_upper_bound=FACILITY_DISTANCE_M)
        return int(np.isfinite(d).sum())

    def nearest_many_kdtree() -> list[float]:
        d, _ = cKDTree(metric_xy(facilities)).query(metric_xy(points), k=1)
        return np.sort(np.partition(d, K)[:K]).round().tolist()

    return {
        "within10k/prepared": within_many_kdtree,
        "nearest10k/prepared": nearest_many_kdtree,
        "inside/prepared": inside_prepared,
        "inside/strtree": inside_strtree,
        "within/prepared": within_prepared,
        "nearest/prepared": nearest_prepared,
    }


def run_size(
    n: int, repeats: int, direct_max: int, nomem_max: int, work: Path, only: tuple[str, ...] = ()
) -> list[dict]:
    join.N_POINTS = n
    points, hazard = join.synthetic(np.random.default_rng(join.SEED))
    hazard_gdf = gpd.GeoDataFrame({"name": ["bench hazard"]}, geometry=[hazard], crs=4326)
    facilities = facilities_layer(join.SEED + 1)
    store = ResponseStore(work / f"session_{n}")
    ctx = ToolContext(store=store, layers=default_catalogue(), settings=settings_from_env({"GEOFAHAM_OFFLINE": "1"}))
    t0 = time.perf_counter()
    points_rec = store.register_vector(points, source="bench", summary=f"{n} synthetic buildings")
    hazard_rec = store.register_vector(hazard_gdf, source="bench", summary="synthetic hazard")
    facilities_rec = store.register_vector(facilities, source="bench", summary=f"{N_FACILITIES} sites")
    registered = time.perf_counter() - t0
    store.flush()
    print(
        f"\n{n:,} points: registered in the store in {registered:.1f} s, "
        f"written and indexed after {time.perf_counter() - t0:.1f} s"
    )
    plain = ResponseStore(work / f"session_{n}_nomem", cache_bytes=0, background_min_features=None)
    plain_ctx = ToolContext(store=plain, layers=ctx.layers, settings=ctx.settings)
    if n <= nomem_max:
        plain_points = plain.register_vector(points, source="bench", summary=f"{n} synthetic buildings")
        plain_hazard = plain.register_vector(hazard_gdf, source="bench", summary="synthetic hazard")

    def inside_tool(on: ToolContext = ctx, pts: Any = points_rec, haz: Any = hazard_rec) -> dict[str, int]:
        inside = tools.inside(on, tools.NoArgs(), features=pts, mask=haz)
        table = on.store.read_table(tools.count(on, tools.CountArgs(by="damage_class"), layer=inside).id)
        return dict(zip(table["value"], table["count"].astype(int), strict=True))

    def inside_tool_flushed() -> dict[str, int]:
        counts = inside_tool()
        store.flush()
        return counts

    def inside_ops() -> dict[str, int]:
        table = ops.count_by(ops.inside(points, hazard_gdf), "damage_class")
        return dict(zip(table["value"], table["count"].astype(int), strict=True))

    def within_tool() -> int:
        rec = tools.within_distance(
            ctx, tools.DistanceArgs(distance_m=DISTANCE_M), features=points_rec, reference=hazard_rec
        )
        return int(rec.metadata.feature_count)  # type: ignore[union-attr]

    def nearest_tool() -> list[float]:
        rec = tools.nearest(ctx, tools.NearestArgs(k=K), features=points_rec, reference=hazard_rec)
        return sorted(store.read_vector(rec.id)["distance_m"].round().tolist())

    def within_many_tool() -> int:
        args = tools.DistanceArgs(distance_m=FACILITY_DISTANCE_M)
        rec = tools.within_distance(ctx, args, features=points_rec, reference=facilities_rec)
        return int(rec.metadata.feature_count)  # type: ignore[union-attr]

    def nearest_many_tool() -> list[float]:
        rec = tools.nearest(ctx, tools.NearestArgs(k=K), features=points_rec, reference=facilities_rec)
        return sorted(store.read_vector(rec.id)["distance_m"].round().tolist())

    paths: dict[str, Callable[[], Any]] = {
        "within10k/tool": within_many_tool,
        "within10k/ops": lambda: len(ops.within_distance(points, facilities, FACILITY_DISTANCE_M)),
        "nearest10k/tool": nearest_many_tool,
        "nearest10k/ops": lambda: sorted(ops.nearest_k(points, facilities, K)["distance_m"].round().tolist()),
        "inside/tool": inside_tool,
        "inside/tool+flush": inside_tool_flushed,
        "inside/tool/disk": inside_tool,  # the points not in memory (dropped before each run): read from the file
        "inside/ops": inside_ops,
        "within/tool": within_tool,
        "within/ops": lambda: len(ops.within_distance(points, hazard_gdf, DISTANCE_M)),
        "nearest/tool": nearest_tool,
        "nearest/ops": lambda: sorted(ops.nearest_k(points, hazard_gdf, K)["distance_m"].round().tolist()),
    }
    if n <= nomem_max:
        paths["inside/tool/nomem"] = lambda: inside_tool(plain_ctx, plain_points, plain_hazard)
    if n <= direct_max:
        paths["within/direct"] = lambda: len(ops.within_distance(points, hazard_gdf, DISTANCE_M, method="direct"))
        paths["nearest/direct"] = lambda: sorted(
            ops.nearest_k(points, hazard_gdf, K, method="direct")["distance_m"].round().tolist()
        )
    engines = [open_engine("spatialite", db_path=work / f"bench_{n}.sqlite")]
    if only and not any(f"inside/{e}".startswith(only) for e in ("spatialite", "postgis")):
        engines = []  # not asked for: the database loads are the slowest part of the set-up
    elif os.environ.get("GEOFAHAM_PG_DSN"):
        engines.append(
            open_engine("postgis", dsn=os.environ["GEOFAHAM_PG_DSN"], schema=f"gf_bench_{uuid.uuid4().hex[:8]}")
        )
    area = ArtifactFile.from_store(store, hazard_rec.id)
    for engine in engines:
        engine.init(reset=True)
        engine.replace_rows("damage", "bench_points", points, [join.EVENT])
        if engine.name == "postgis":
            with engine._cursor() as cur:  # type: ignore[attr-defined]
                cur.execute("ANALYZE damage")

        def count_db(engine: Any = engine) -> dict[str, int]:
            return (
                engine.count_damage(join.EVENT, area=area).to_frame().groupby("damage_class")["count"].sum().to_dict()
            )

        paths[f"inside/{engine.name}"] = count_db
    paths |= reference_paths(points, hazard, facilities)
    rows: list[dict[str, Any]] = []
    try:
        results: dict[str, Any] = {}
        order = sorted(paths, key=lambda p: (not p.endswith("prepared"), "/tool" in p))  # tools last
        if only:  # the references always run: every result is checked against them
            order = [p for p in order if p.endswith("/prepared") or p.startswith(only)]
        for name in order:
            slow = name.endswith(("/direct", "/spatialite", "/nomem")) or "/tool" in name and "inside" not in name

            # the writes an earlier path left in the background finish before the next timing starts
            def before(name: str = name) -> None:
                store.flush()
                if name.endswith("/disk"):
                    store._frames.discard(points_rec.id)  # noqa: SLF001  (as the memory's bound would drop it)
                else:
                    store.read_vector(points_rec.id)  # back in memory after a /disk path (untimed)

            seconds, result, peak = join.timed(paths[name], 1 if slow else repeats, before=before)
            op = name.split("/")[0]
            results[name] = result
            expected = results[f"{op}/prepared"]
            if op == "inside":
                result = {k: int(v) for k, v in result.items() if v}
            if op.startswith("within") and not name.endswith(
                "/prepared"
            ):  # geodesic vs planar: within the projection's error
                assert abs(result - expected) <= max(2, expected // 1000), (name, result, expected)
            elif op.startswith(
                "nearest"
            ):  # the k distances (ties at 0 inside the hazard: any of them), geodesic vs planar
                assert np.abs(np.subtract(result, expected)).max() <= 1.0, (name, result, expected)
            else:
                assert result == expected, (name, result, expected)
            rows.append({"n": n, "path": name, "seconds": round(seconds, 4), "peak_traced_mib": round(peak, 1)})
            print(f"  {name:20} {seconds:9.3f} s  {peak:8.1f} MiB traced", flush=True)
    finally:
        for engine in engines:
            if engine.name == "postgis":
                engine.drop_schema()  # type: ignore[attr-defined]
            engine.close()
        store.close()
        plain.close()
    for row in rows:
        ref = next(r for r in rows if r["path"] == row["path"].split("/")[0] + "/prepared")
        row["ratio_to_prepared"] = round(row["seconds"] / max(ref["seconds"], 1e-6), 2)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated point counts")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--direct-max", type=int, default=20_000, help="largest size the direct path runs at")
    parser.add_argument(
        "--nomem-max", type=int, default=100_000, help="largest size the tool/nomem path runs at (slow to set up)"
    )
    parser.add_argument(
        "--only", default="", help="comma-separated path prefixes to run (within/tool,...); default all"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    work = Path(tempfile.mkdtemp(prefix="gf_bench_paths_"))
    rows: list[dict] = []
    try:
        for n in sizes:
            rows += run_size(
                n, args.repeats, args.direct_max, args.nomem_max, work, tuple(filter(None, args.only.split(",")))
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{'path':20} " + " ".join(f"{f'{n:,} s':>12} {'x ref':>7}" for n in sizes) + f" {'growth':>8}")
    for path in dict.fromkeys(r["path"] for r in rows):
        cells, times = [], []
        for n in sizes:
            row = next((r for r in rows if r["path"] == path and r["n"] == n), None)
            cells.append(f"{row['seconds']:12.3f} {row['ratio_to_prepared']:6.1f}x" if row else f"{'-':>12} {'':>7}")
            times.append((n, row["seconds"]) if row else None)
        known = [t for t in times if t]
        growth = (
            f"{known[-1][1] / max(known[0][1], 1e-6):.1f}x/{known[-1][0] // known[0][0]}x" if len(known) > 1 else "-"
        )
        print(f"{path:20} " + " ".join(cells) + f" {growth:>8}")
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {rss_mib:.0f} MiB; growth = time ratio / size ratio, smallest to largest")
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "vector_paths.json").write_text(json.dumps({"peak_rss_mib": round(rss_mib), "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
