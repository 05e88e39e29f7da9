"""Road network engine against plain networkx, built and queried from the same lines in one run (issue 13).

Two cases:

- **city**: the drivable roads of an ``.osm.pbf`` extract (default ``../shared/data/osm/Helsinki.osm.pbf``, read
  with GDAL's OSM driver through pyogrio, ``other_tags`` parsed for oneway, maxspeed, junction, bridge), a
  synthetic hazard (a diagonal band through the middle and a disc), many origins (seeded random points in the
  extract) to a few targets;
- **grid**: a synthetic street grid of ``--grid`` x ``--grid`` junctions 100 m apart (225: 100,800 road
  segments), ways of five blocks, every tenth street primary, every fourth west-east street one-way (alternating
  directions), a river band cutting all but one end of it (a detour or cut off) and a disc.

Paths, each given the same selected lines (the drivable classes of ``osm_classes.json``):

- ``engine``: ``network.build_network`` and ``network.reachability`` (snapping, hazard cut, before/after
  distance and time, statuses, isolated features: the tool's work without the Response Store);
- ``networkx``: the plain way: a ``DiGraph`` whose nodes are the exact vertex coordinates, lengths from one
  vectorised geodesic call, one-way tags, speeds by class; origins and targets snapped to the nearest vertex in the
  same local projection; the segments touching the hazard (not bridges) removed from a copy; one Dijkstra per
  target on the reversed graph, by length and by time, before and after.

Per case and path: build time and query time (medians of ``--repeats`` runs, no tracing, the two paths
alternating), peak traced Python memory (tracemalloc: numpy arrays and Python objects such as the graphs; not
GEOS) of one build + query, and the peak RSS rise of a fresh child process doing the build + query (``--no-rss``
skips the children); then engine / networkx ratios (goal: <= 1.5x) and, for the grid, whether the engine's build +
query stays under 30 s.
The engine's and the baseline's distances are compared pair by pair (they agree except where the engine joins
vertices of different ways closer than its 0.5 m snap tolerance). Not a test (tests/test_bench_network.py runs it
on a tiny input); run with ``.venv/bin/python bench/bench_network.py``. Results also go to
``bench/results/network.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import geopandas as gpd
import networkx as nx
import numpy as np
import pandas as pd
import shapely
from pyproj import Transformer
from shapely.geometry import LineString

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from geofaham_plugin.core.domain.geodesy import GEOD  # noqa: E402
from geofaham_plugin.core.engines import network as net  # noqa: E402
from geofaham_plugin.core.engines.osm.extracts import parse_other_tags  # noqa: E402
from geofaham_plugin.core.engines.vector_ops import WGS84, local_metric_crs  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
DEFAULT_PBF = (SHARED if SHARED.is_dir() else Path("/work/shared/data")) / "osm" / "Helsinki.osm.pbf"
SEED = 20241029
MAX_SNAP_M = 500.0
GOAL_RATIO = 1.5
GOAL_GRID_S = 30.0
TAGS = ("oneway", "maxspeed", "junction", "bridge", "tunnel")


@dataclass
class Case:
    name: str
    roads: gpd.GeoDataFrame  # the selected drivable lines, as both paths get them
    hazard: gpd.GeoDataFrame
    origins: gpd.GeoDataFrame
    targets: gpd.GeoDataFrame


# ---------------------------------------------------------------- inputs


def read_pbf_roads(path: Path) -> gpd.GeoDataFrame:
    """The drivable road lines of an .osm.pbf file, with the tags the network reads as columns."""
    import pyogrio

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lines = pyogrio.read_dataframe(path, layer="lines")
    lines = lines[lines["highway"].isin(net.drivable_classes())].reset_index(drop=True)
    tags = [parse_other_tags(t) for t in lines["other_tags"]]
    for key in TAGS:
        lines[key] = [t.get(key) for t in tags]
    return lines[["osm_id", "name", "highway", *TAGS, "geometry"]].set_crs(WGS84, allow_override=True)


def _points_in(bounds: np.ndarray, n: int, rng: np.random.Generator, crs: Any) -> gpd.GeoDataFrame:
    x = rng.uniform(bounds[0], bounds[2], n)
    y = rng.uniform(bounds[1], bounds[3], n)
    return gpd.GeoDataFrame({"name": [f"p{i}" for i in range(n)]}, geometry=shapely.points(x, y), crs=crs)


def city_case(path: Path, n_origins: int, n_targets: int) -> Case:
    roads = read_pbf_roads(path)
    metric = local_metric_crs(roads)
    b = roads.to_crs(metric).total_bounds
    w, h = b[2] - b[0], b[3] - b[1]
    band = LineString([(b[0], b[1] + 0.3 * h), (b[2], b[1] + 0.6 * h)]).buffer(0.02 * min(w, h))
    disc = shapely.Point(b[0] + 0.7 * w, b[1] + 0.25 * h).buffer(0.08 * min(w, h))
    hazard = gpd.GeoDataFrame(geometry=[band, disc], crs=metric).to_crs(WGS84)
    rng = np.random.default_rng(SEED)
    inner = np.array([b[0] + 0.05 * w, b[1] + 0.05 * h, b[2] - 0.05 * w, b[3] - 0.05 * h])
    origins = _points_in(inner, n_origins, rng, metric).to_crs(WGS84)
    targets = _points_in(inner, n_targets, rng, metric).to_crs(WGS84)
    return Case(f"city ({path.name})", roads, hazard, origins, targets)


def grid_case(n: int, n_origins: int, n_targets: int, spacing: float = 100.0, block: int = 5) -> Case:
    """An n x n street grid (2 n (n - 1) segments) in a local transverse Mercator near Valencia."""
    crs = "+proj=tmerc +lat_0=39.4 +lon_0=-0.4 +k=1 +x_0=0 +y_0=0 +ellps=WGS84 +units=m +no_defs"
    rows: list[dict[str, Any]] = []
    for street in range(n):
        for start in range(0, n - 1, block):
            stops = np.arange(start, min(start + block, n - 1) + 1) * spacing
            oneway = None if street % 4 else ("yes" if street % 8 == 0 else "-1")
            cls = "primary" if street % 10 == 0 else "residential"
            here = street * spacing
            rows.append({"highway": cls, "oneway": oneway, "geometry": LineString([(s, here) for s in stops])})
            rows.append({"highway": cls, "oneway": None, "geometry": LineString([(here, s) for s in stops])})
    roads = gpd.GeoDataFrame(rows, crs=crs)
    for key in TAGS:
        if key not in roads.columns:
            roads[key] = None
    size = (n - 1) * spacing
    # a river from the west edge to 85 % of the way east (the east end stays open: detours), and a disc
    river = LineString([(-spacing, 0.45 * size), (0.85 * size, 0.55 * size)]).buffer(0.6 * spacing)
    disc = shapely.Point(0.25 * size, 0.8 * size).buffer(0.05 * size)
    hazard = gpd.GeoDataFrame(geometry=[river, disc], crs=crs)
    rng = np.random.default_rng(SEED)
    box = np.array([0.0, 0.0, size, size])
    return Case(
        f"grid {n}x{n}",
        roads,
        hazard,
        _points_in(box, n_origins, rng, crs),
        _points_in(box, n_targets, rng, crs),
    )


# ---------------------------------------------------------------- plain networkx


@dataclass
class PlainGraph:
    graph: nx.DiGraph
    node_xy: np.ndarray  # metric
    to_metric: Transformer
    seg_u: np.ndarray
    seg_v: np.ndarray
    seg_geom: np.ndarray  # WGS84 pieces
    seg_bridge: np.ndarray


def plain_build(roads: gpd.GeoDataFrame) -> PlainGraph:
    roads = roads.to_crs(WGS84).reset_index(drop=True)
    parts, road_of_part = shapely.get_parts(roads.geometry.values, return_index=True)
    coords, part_of_coord = shapely.get_coordinates(parts, return_index=True)
    start = np.flatnonzero(part_of_coord[:-1] == part_of_coord[1:])
    unique, node = np.unique(coords, axis=0, return_inverse=True)
    node = node.reshape(-1)
    a, b = coords[start], coords[start + 1]
    _, _, length = GEOD.inv(a[:, 0], a[:, 1], b[:, 0], b[:, 1])
    road = road_of_part[part_of_coord[start]]
    default, table = net.speed_table()
    speed = np.array([_speed(h, m, table, default) for h, m in zip(roads["highway"], roads["maxspeed"], strict=True)])
    oneway = [str(o or "").lower() for o in roads["oneway"]]
    roundabout = [str(j or "").lower() == "roundabout" for j in roads["junction"]]
    g = nx.DiGraph()
    g.add_nodes_from(range(len(unique)))
    u_all, v_all = node[start], node[start + 1]
    for u, v, r, d in zip(u_all.tolist(), v_all.tolist(), road.tolist(), length.tolist(), strict=True):
        if u == v:
            continue
        t = d / (speed[r] / 3.6)
        way = oneway[r]
        if way in ("yes", "true", "1") or roundabout[r]:
            pairs = [(u, v)]
        elif way in ("-1", "reverse"):
            pairs = [(v, u)]
        else:
            pairs = [(u, v), (v, u)]
        for x, y in pairs:
            old = g.get_edge_data(x, y)
            if old is None or d < old["length"]:
                g.add_edge(x, y, length=d, time=t)
    to_metric = Transformer.from_crs(WGS84, local_metric_crs(roads), always_xy=True)
    mx, my = to_metric.transform(unique[:, 0], unique[:, 1])
    bridge = np.array([str(x or "no").lower() != "no" for x in roads["bridge"]])
    pieces = shapely.linestrings(np.stack([a, b], axis=1))
    return PlainGraph(g, np.column_stack([mx, my]), to_metric, u_all, v_all, pieces, bridge[road])


def _speed(highway: Any, maxspeed: Any, table: dict[str, float], default: float) -> float:
    try:
        value = float(str(maxspeed).split()[0])
        if value > 0:
            return value * (1.609344 if "mph" in str(maxspeed) else 1.0)
    except ValueError:
        pass
    return table.get(str(highway), default)


def plain_query(
    pg: PlainGraph, origins: gpd.GeoDataFrame, targets: gpd.GeoDataFrame, hazard: gpd.GeoDataFrame
) -> dict[tuple[int, int], tuple[float, float]]:
    """(origin, target) -> (distance before, distance after) in metres (inf: no route)."""
    from scipy.spatial import cKDTree

    tree = cKDTree(pg.node_xy)

    def snapped(points: gpd.GeoDataFrame) -> np.ndarray:
        p = points.to_crs(WGS84).geometry.representative_point()
        x, y = pg.to_metric.transform(p.x.to_numpy(), p.y.to_numpy())
        d, i = tree.query(np.column_stack([x, y]))
        return np.where(d <= MAX_SNAP_M, i, -1)

    o, t = snapped(origins), snapped(targets)
    zone = shapely.union_all(hazard.to_crs(WGS84).geometry.values)
    shapely.prepare(zone)
    cut = shapely.intersects(zone, pg.seg_geom) & ~pg.seg_bridge
    after = pg.graph.copy()
    after.remove_edges_from(zip(pg.seg_u[cut].tolist(), pg.seg_v[cut].tolist(), strict=True))
    after.remove_edges_from(zip(pg.seg_v[cut].tolist(), pg.seg_u[cut].tolist(), strict=True))
    result: dict[tuple[int, int], tuple[float, float]] = {}
    for j, tn in enumerate(t.tolist()):
        runs = []
        for g in (pg.graph, after):
            back = g.reverse(copy=False)
            runs.append(
                (
                    nx.single_source_dijkstra_path_length(back, tn, weight="length") if tn >= 0 else {},
                    nx.single_source_dijkstra_path_length(back, tn, weight="time") if tn >= 0 else {},
                )
            )
        for i, on in enumerate(o.tolist()):
            result[(i, j)] = (runs[0][0].get(on, math.inf), runs[1][0].get(on, math.inf))
    return result


# ---------------------------------------------------------------- timing


def _median_s(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def _traced_mib(fn: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _paths(case: Case) -> dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]]:
    """name -> (build, query(built))."""
    return {
        "engine": (
            lambda: net.build_network(case.roads),
            lambda n: net.reachability(n, case.origins, case.targets, case.hazard, max_snap_m=MAX_SNAP_M),
        ),
        "networkx": (
            lambda: plain_build(case.roads),
            lambda g: plain_query(g, case.origins, case.targets, case.hazard),
        ),
    }


def _agreement(engine: net.Reachability, plain: dict[tuple[int, int], tuple[float, float]]) -> tuple[int, int]:
    """(pairs whose before and after distances agree to 0.1 m, pairs)."""
    same = 0
    for row in engine.pairs.itertuples(index=False):
        b, a = plain[(int(row.origin), int(row.target))]
        eb = math.inf if row.before_m is None or pd.isna(row.before_m) else float(row.before_m)
        ea = math.inf if row.after_m is None or pd.isna(row.after_m) else float(row.after_m)
        same += _close(eb, b) and _close(ea, a)
    return same, len(engine.pairs)


def _close(x: float, y: float) -> bool:
    return (math.isinf(x) and math.isinf(y)) or abs(x - y) <= 0.11


def rss_child(args: argparse.Namespace, case_name: str, path: str) -> float | None:
    """Peak RSS rise (MiB) of a fresh process building and querying the case once (after its inputs are read)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", f"{case_name}:{path}", *_case_args(args)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)  # noqa: S603
    if done.returncode != 0:
        print(f"  (RSS child {case_name}/{path} failed: {done.stderr.strip().splitlines()[-1:]})")
        return None
    return float(json.loads(done.stdout.strip().splitlines()[-1])["rss_rise_mib"])


def _case_args(args: argparse.Namespace) -> list[str]:
    return [
        f"--pbf={args.pbf}",
        f"--grid={args.grid}",
        f"--origins={args.origins}",
        f"--targets={args.targets}",
        f"--grid-origins={args.grid_origins}",
    ]


def _status_kib(key: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return float(line.split()[1])
    raise KeyError(key)


def child(args: argparse.Namespace) -> int:
    case_name, path = args.child.split(":")
    case = make_cases(args)[case_name]
    build, query = _paths(case)[path]
    gc.collect()
    base = _status_kib("VmRSS")
    with contextlib.suppress(OSError):  # reset the peak to the current RSS (Linux >= 4.0): reading inputs not counted
        Path("/proc/self/clear_refs").write_text("5")
    query(build())
    print(json.dumps({"rss_rise_mib": (_status_kib("VmHWM") - base) / 1024}))
    return 0


def make_cases(args: argparse.Namespace) -> dict[str, Case]:
    cases = {"city": city_case(Path(args.pbf), args.origins, args.targets)}
    if args.grid > 1:
        cases["grid"] = grid_case(args.grid, args.grid_origins, args.targets)
    return cases


def run_case(key: str, case: Case, args: argparse.Namespace) -> dict[str, Any]:
    seg = net.build_network(case.roads).segments
    print(
        f"\n{case.name}: {len(case.roads):,} ways, {len(seg):,} road segments, {len(case.origins)} origins x "
        f"{len(case.targets)} targets",
        flush=True,
    )
    paths = _paths(case)
    times: dict[str, dict[str, list[float]]] = {name: {"build_s": [], "query_s": []} for name in paths}
    results: dict[str, Any] = {}
    for _ in range(args.repeats):  # the paths alternate, so a load change on the machine hits both alike
        for name, (build, query) in paths.items():
            seconds, built = _median_s(build, 1)
            times[name]["build_s"].append(seconds)
            seconds, results[name] = _median_s(lambda query=query, built=built: query(built), 1)
            times[name]["query_s"].append(seconds)
    rows: dict[str, dict[str, float | None]] = {}
    for name, (build, query) in paths.items():
        build_s, query_s = (statistics.median(times[name][k]) for k in ("build_s", "query_s"))
        traced = _traced_mib(lambda build=build, query=query: query(build()))
        rss = rss_child(args, key, name) if args.rss else None
        rows[name] = {"build_s": build_s, "query_s": query_s, "total_s": build_s + query_s, "traced_mib": traced}
        rows[name]["rss_mib"] = rss
        print(
            f"  {name:9} build {build_s:8.3f} s   query {query_s:8.3f} s   total {build_s + query_s:8.3f} s   "
            f"traced peak {traced:7.1f} MiB" + (f"   RSS rise {rss:7.1f} MiB" if rss is not None else ""),
            flush=True,
        )
    same, pairs = _agreement(results["engine"], results["networkx"])
    statuses = results["engine"].pairs["status"].value_counts().to_dict()
    print(f"  engine statuses: {statuses}; {int(results['engine'].cut.sum())} segments cut")
    print(f"  distances before/after agree with networkx for {same}/{pairs} pairs")
    ratios = {}
    for metric in ("build_s", "query_s", "total_s", "traced_mib", "rss_mib"):
        e, b = rows["engine"][metric], rows["networkx"][metric]
        if e is None or b is None:
            continue
        ratios[metric] = e / max(b, 1e-9)
        verdict = "ok" if ratios[metric] <= GOAL_RATIO else "OVER"
        print(f"  ratio engine/networkx {metric:10} {ratios[metric]:6.2f}x  (goal <= {GOAL_RATIO}x: {verdict})")
    if key == "grid":
        total = rows["engine"]["total_s"] or 0.0
        verdict = "ok" if total < GOAL_GRID_S else "OVER"
        print(f"  grid: {len(seg):,} segments built + queried by the engine in {total:.1f} s (goal < 30 s: {verdict})")
    return {
        "case": case.name,
        "segments": len(seg),
        "agree": [same, pairs],
        "rows": rows,
        "ratios": ratios,
        "statuses": statuses,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pbf", default=str(DEFAULT_PBF), help="the .osm.pbf extract of the city case")
    parser.add_argument("--origins", type=int, default=500, help="origins of the city case")
    parser.add_argument("--targets", type=int, default=5, help="targets of both cases")
    parser.add_argument("--grid", type=int, default=225, help="junctions per side of the grid case (0: no grid)")
    parser.add_argument("--grid-origins", type=int, default=2000, help="origins of the grid case")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-rss", dest="rss", action="store_false", help="no child processes for peak RSS")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "network.json"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    print(f"road network bench: engine vs plain networkx, {os.cpu_count()} cores, repeats {args.repeats}")
    report = [run_case(key, case, args) for key, case in make_cases(args).items()]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, default=float))
    print(f"\nresults: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
