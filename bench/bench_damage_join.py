"""Damage-in-hazard join: the Vector agent's tool path against the same bare SQL, on both engines.

200,000 synthetic building points (seeded RNG) around a synthetic multipolygon flood extent in the
Nairobi flood record (event 9). Per engine, medians of REPEATS runs of:

- bare       the count query typed by hand on a raw connection (psycopg2 / sqlite3 + mod_spatialite),
             with the hazard already in the database (SpatiaLite: joined through the R*Tree);
- tool/db    ``engine.count_damage(9)``: the hazard taken from the database;
- tool/store the full tool: hazard read from a Response Store GeoPackage artifact into a temp table,
             ``engine.count_damage(9, area=...)``, result registered as a table artifact.

Prints tool/bare ratios (goal <= 1.2x), peak Python memory (tracemalloc) per path and the process's
peak RSS. Checks every path's count against a prepared-shapely count. Not a test; run with
``.venv/bin/python bench/bench_damage_join.py`` (PostGIS from GEOFAHAM_PG_DSN, skipped if unset).
Results also go to ``bench/results/damage_join.json``.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import shapely
from shapely.geometry import MultiPolygon, Polygon

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from geofaham_plugin.core.engines.db import ArtifactFile, SpatialEngine, open_engine  # noqa: E402
from geofaham_plugin.core.store.store import ResponseStore  # noqa: E402

N_POINTS = 200_000
EVENT = 9  # Nairobi flood: a record without sample layers
REPEATS = 5
SEED = 20250107
BBOX = (36.70, -1.42, 37.05, -1.18)
CLASSES = np.array(["No Damage", "Affected (1-9%)", "Minor (10-25%)", "Major (26-50%)", "Destroyed (>50%)"])
NORMAL = np.array(["none", "affected", "minor", "major", "destroyed"])


def synthetic(rng: np.random.Generator) -> tuple[gpd.GeoDataFrame, MultiPolygon]:
    """Points and a dissolved multipolygon hazard of 10 jagged blobs (~2,000 vertices)."""
    blobs = []
    for _ in range(10):
        cx, cy = rng.uniform(BBOX[0] + 0.05, BBOX[2] - 0.05), rng.uniform(BBOX[1] + 0.04, BBOX[3] - 0.04)
        angles = np.sort(rng.uniform(0, 2 * np.pi, 200))
        radius = rng.uniform(0.008, 0.025) * (1 + 0.25 * rng.standard_normal(200).clip(-2, 2))
        blobs.append(Polygon(np.c_[cx + radius * np.cos(angles), cy + radius * np.sin(angles)]).buffer(0))
    hazard = shapely.union_all(blobs)
    hazard = hazard if isinstance(hazard, MultiPolygon) else MultiPolygon([hazard])
    xs = rng.uniform(BBOX[0], BBOX[2], N_POINTS)
    ys = rng.uniform(BBOX[1], BBOX[3], N_POINTS)
    cls = rng.integers(0, 5, N_POINTS)
    points = gpd.GeoDataFrame(
        {
            "event_id": EVENT,
            "source_layer": "bench_points",
            "raw_damage": CLASSES[cls],
            "damage_class": NORMAL[cls],
            "is_damaged": cls > 0,
            "structure_type": "synthetic",
            "attrs": None,
        },
        geometry=shapely.points(xs, ys),
        crs=4326,
    )
    return points, hazard


def bare_query(engine: SpatialEngine) -> Callable[[], int]:
    """The count a person would type, on its own raw connection."""
    if engine.name == "postgis":
        import psycopg2

        conn = psycopg2.connect(engine.dsn)  # type: ignore[attr-defined]
        conn.autocommit = True
        cur = conn.cursor()
        cur.execute(f'SET search_path TO "{engine.schema}", public')  # type: ignore[attr-defined]
        sql = (
            "SELECT d.damage_class, d.raw_damage, d.is_damaged, count(*) FROM damage d "
            "JOIN flood_extents f ON ST_Intersects(d.geom, f.geom) WHERE d.event_id = %s AND f.event_id = %s "
            "GROUP BY 1, 2, 3"
        )

        def run() -> int:
            cur.execute(sql, (EVENT, EVENT))
            return sum(r[3] for r in cur.fetchall())

        return run
    import sqlite3

    conn = sqlite3.connect(Path(engine.path).as_uri() + "?mode=ro", uri=True)  # type: ignore[attr-defined]
    conn.enable_load_extension(True)
    conn.load_extension("mod_spatialite")
    sql = (
        "SELECT d.damage_class, d.raw_damage, d.is_damaged, count(*) FROM flood_extents f "
        "JOIN idx_damage_geom r ON r.xmin <= MbrMaxX(f.geom) AND r.xmax >= MbrMinX(f.geom) "
        "AND r.ymin <= MbrMaxY(f.geom) AND r.ymax >= MbrMinY(f.geom) "
        "JOIN damage d ON d.id = r.pkid WHERE f.event_id = ? AND d.event_id = ? "
        "AND ST_Intersects(d.geom, f.geom) = 1 GROUP BY 1, 2, 3"
    )

    def run_lite() -> int:
        return sum(r[3] for r in conn.execute(sql, (EVENT, EVENT)).fetchall())

    return run_lite


def timed(fn: Callable[[], Any], repeats: int, before: Callable[[], Any] | None = None) -> tuple[float, Any, float]:
    """(median seconds, result, peak traced MiB) over ``repeats`` untraced runs (``before`` runs untimed before
    each), then one more run under tracemalloc for the memory (tracing slows Python code several times over, so
    it never runs while the clock does)."""
    times, result = [], None
    for _ in range(repeats):
        if before is not None:
            before()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    if before is not None:
        before()
    tracemalloc.start()
    try:
        fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return statistics.median(times), result, peak / 2**20


def measure(fn: Callable[[], int]) -> tuple[float, int, int]:
    """(median seconds, result, peak traced bytes) over REPEATS runs after one warm-up."""
    fn()
    seconds, result, peak_mib = timed(fn, REPEATS)
    return seconds, result, int(peak_mib * 2**20)


def bench_engine(
    engine: SpatialEngine,
    points: gpd.GeoDataFrame,
    hazard: MultiPolygon,
    expected: int,
    store: ResponseStore,
    hazard_id: str,
) -> dict:
    t0 = time.perf_counter()
    engine.init(reset=True)
    engine.replace_rows("damage", "bench_points", points, [EVENT])
    engine.replace_rows(
        "flood_extents",
        "bench_hazard",
        gpd.GeoDataFrame(
            {"event_id": [EVENT], "source": ["bench_hazard"], "attrs": [None]}, geometry=[hazard], crs=4326
        ),
        [EVENT],
    )
    load_s = time.perf_counter() - t0
    if engine.name == "postgis":  # fresh statistics, as after any bulk load
        engine.run_sql("SELECT 1")
        with engine._cursor() as cur:  # type: ignore[attr-defined]
            cur.execute("ANALYZE damage; ANALYZE flood_extents")
    area = ArtifactFile.from_store(store, hazard_id)

    def tool_store() -> int:
        counted = engine.count_damage(EVENT, area=area)
        store.register_table(
            counted.to_frame(), source="vector.count_damage", summary=f"{counted.total} buildings", inputs=[hazard_id]
        )
        return counted.total

    out = {"engine": engine.name, "load_s": round(load_s, 2)}
    for name, fn in (
        ("bare", bare_query(engine)),
        ("tool_db", lambda: engine.count_damage(EVENT).total),
        ("tool_store", tool_store),
    ):
        seconds, result, peak = measure(fn)
        assert result == expected, (engine.name, name, result, expected)
        out[name] = {"median_s": round(seconds, 4), "peak_traced_mib": round(peak / 2**20, 2)}
    out["ratio_tool_db"] = round(out["tool_db"]["median_s"] / out["bare"]["median_s"], 3)
    out["ratio_tool_store"] = round(out["tool_store"]["median_s"] / out["bare"]["median_s"], 3)
    return out


def main() -> int:
    rng = np.random.default_rng(SEED)
    points, hazard = synthetic(rng)
    prepared = hazard
    shapely.prepare(prepared)
    expected = int(shapely.intersects(prepared, points.geometry.values).sum())
    print(
        f"{N_POINTS:,} points, hazard {len(hazard.geoms)} parts / {shapely.get_num_coordinates(hazard):,} vertices, "
        f"{expected:,} inside (prepared shapely); medians of {REPEATS} runs"
    )
    work = Path(tempfile.mkdtemp(prefix="gf_bench_"))
    results = []
    try:
        store = ResponseStore(work / "session")
        hazard_rec = store.register_vector(
            gpd.GeoDataFrame({"name": ["bench hazard"]}, geometry=[hazard], crs=4326),
            source="bench",
            summary="synthetic flood extent",
        )
        engines: list[SpatialEngine] = [open_engine("spatialite", db_path=work / "bench.sqlite")]
        dsn = os.environ.get("GEOFAHAM_PG_DSN")
        if dsn:
            engines.append(open_engine("postgis", dsn=dsn, schema=f"gf_bench_{uuid.uuid4().hex[:8]}"))
        else:
            print("PostGIS skipped: GEOFAHAM_PG_DSN is not set")
        for engine in engines:
            try:
                results.append(bench_engine(engine, points, hazard, expected, store, hazard_rec.id))
            finally:
                if engine.name == "postgis":
                    engine.drop_schema()  # type: ignore[attr-defined]
                engine.close()
        store.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"{'engine':10} {'load s':>7} {'bare s':>8} {'tool/db s':>10} {'tool/store s':>13} {'db/bare':>8} "
        f"{'store/bare':>11} {'peak MiB (bare/db/store)':>26}"
    )
    for r in results:
        peaks = "/".join(f"{r[k]['peak_traced_mib']:.1f}" for k in ("bare", "tool_db", "tool_store"))
        print(
            f"{r['engine']:10} {r['load_s']:7.2f} {r['bare']['median_s']:8.3f} {r['tool_db']['median_s']:10.3f} "
            f"{r['tool_store']['median_s']:13.3f} {r['ratio_tool_db']:7.2f}x {r['ratio_tool_store']:10.2f}x {peaks:>26}"
        )
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {rss_mib:.0f} MiB; goal: tool/bare <= 1.2x")
    out_dir = ROOT / "bench" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "damage_join.json").write_text(
        json.dumps(
            {
                "points": N_POINTS,
                "inside": expected,
                "repeats": REPEATS,
                "peak_rss_mib": round(rss_mib),
                "engines": results,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
