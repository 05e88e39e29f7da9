"""Road network engine: a routable graph from OSM road lines, and hazard-aware reachability before and after.

- **Classes**: ``vehicle="drivable"`` keeps the ``highway`` values of the ``roads`` class in
  ``core/data/osm_classes.json`` (motorway to track, the one definition); ``vehicle="all"`` keeps any road,
  path or footway with a ``highway`` tag.
- **Nodes** are the road vertices; vertices of different roads within ``snap_tolerance_m`` (0.5 m by default,
  measured in a transverse Mercator CRS centred on the roads) are one node, so roads join where they share a
  vertex, as OSM ways do at junctions. Roads that only cross (a bridge over a road) do not join.
- **Edges** are the straight pieces between consecutive vertices, their lengths geodesic on the WGS84 ellipsoid;
  travel time uses the road's numeric ``maxspeed`` or the class speed of ``core/data/road_speeds.json``.
- **One-way**: ``oneway=yes|true|1`` (and ``junction=roundabout``) follows the way's direction, ``oneway=-1``
  the reverse; anything else is two-way.
- **Hazard**: an edge whose piece intersects a hazard polygon is cut, *except on bridges* (``bridge`` set and not
  ``no``): a bridge over a flooded river is not cut by the river's polygon (its deck is assumed above the water).
  Tunnels and underpasses are cut like any road: they flood first.
- **Snapping**: origins and targets (their representative point) join the nearest node within ``max_snap_m``;
  the geodesic snap distance is reported, and a feature farther than that is "off network".

Pure and headless: GeoDataFrames in, GeoDataFrames and DataFrames out (networkx for the shortest paths).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Literal

import geopandas as gpd
import networkx as nx
import numpy as np
import pandas as pd
import shapely
from pyproj import Transformer

from ..domain.feature_classes import feature_class_specs
from ..domain.geodesy import GEOD
from ..errors import ToolFailed
from .vector_ops import WGS84, local_metric_crs

SPEEDS_FILE = Path(__file__).resolve().parents[1] / "data" / "road_speeds.json"
Vehicle = Literal["drivable", "all"]
Status = Literal["reachable", "detour", "cut off", "unreachable before", "off network"]
#: least costs outside networkx: (directed edges (u, v, cost), sources, targets) -> (source, target, cost) per route
Router = Callable[[list[tuple[int, int, float]], list[int], list[int]], list[tuple[int, int, float]]]
_YES = {"yes", "true", "1"}
_REVERSE = {"-1", "reverse"}


@cache
def drivable_classes() -> frozenset[str]:
    """The ``highway`` values of the ``roads`` feature class: the roads a car can use."""
    values: set[str] = set()
    for selector in feature_class_specs()["roads"].selectors:
        wanted = selector.get("highway")
        if isinstance(wanted, list):
            values.update(wanted)
        elif isinstance(wanted, str):
            values.add(wanted)
    if not values:
        raise ValueError("osm_classes.json: the roads class selects no highway values")
    return frozenset(values)


@cache
def speed_table() -> tuple[float, dict[str, float]]:
    """(default km/h, highway class -> km/h) from ``road_speeds.json``."""
    raw = json.loads(SPEEDS_FILE.read_text(encoding="utf-8"))
    return float(raw["default_kmh"]), {k: float(v) for k, v in raw["highway"].items()}


def _text(gdf: gpd.GeoDataFrame, column: str) -> pd.Series:
    """A tag column as lower-case text ('' when absent or null)."""
    if column not in gdf.columns:
        return pd.Series("", index=gdf.index, dtype=object)
    return gdf[column].astype(object).where(gdf[column].notna(), "").astype(str).str.strip().str.lower()


def _speeds_kmh(roads: gpd.GeoDataFrame) -> np.ndarray:
    default, table = speed_table()
    by_class = _text(roads, "highway").map(table).fillna(default).to_numpy(dtype=float)
    numbers = _text(roads, "maxspeed").map(_maxspeed)
    return np.where(numbers.notna(), numbers.to_numpy(dtype=float, na_value=np.nan), by_class)


def _maxspeed(value: str) -> float | None:
    match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*(mph)?", value)
    if not match or float(match.group(1)) <= 0:
        return None
    return float(match.group(1)) * (1.609344 if match.group(2) else 1.0)


def _directions(roads: gpd.GeoDataFrame) -> np.ndarray:
    """1: along the geometry only, -1: against it only, 0: both ways."""
    oneway = _text(roads, "oneway")
    forward = oneway.isin(_YES) | (_text(roads, "junction") == "roundabout")
    return np.where(oneway.isin(_REVERSE), -1, np.where(forward, 1, 0))


def is_bridge(roads: gpd.GeoDataFrame) -> np.ndarray:
    bridge = _text(roads, "bridge")
    return ((bridge != "") & (bridge != "no")).to_numpy()


@dataclass
class RoadNetwork:
    """The selected roads (WGS84, rows 0..n-1), their straight pieces (``segments``: road row, from node ``u``,
    to node ``v``, ``length_m``, ``time_s``, ``direction``, ``bridge``, WGS84 geometry) and the nodes."""

    roads: gpd.GeoDataFrame
    segments: gpd.GeoDataFrame
    node_lonlat: np.ndarray
    node_xy: np.ndarray
    to_metric: Transformer
    vehicle: str
    snap_tolerance_m: float

    @property
    def node_count(self) -> int:
        return len(self.node_lonlat)

    @cached_property
    def node_tree(self) -> shapely.STRtree:
        """The nodes (metric) in an STRtree, built once for every snap."""
        return shapely.STRtree(shapely.points(self.node_xy))

    def graph(self, keep: np.ndarray | None = None, cut: np.ndarray | None = None) -> nx.DiGraph:
        """The directed graph of the segments (all, or those where ``keep`` is true); between two nodes the
        shortest piece counts. Edge attributes: ``length`` (m) and ``time`` (s); with ``cut`` (a mask of cut
        segments) also ``length_after`` and ``time_after``, the same over the pieces the cut leaves, absent where
        it cuts them all: one graph for before and after (route after with ``after_weight``)."""
        edges = _directed(self.segments if keep is None else self.segments[keep])
        if cut is not None:
            after = _directed(self.segments[~cut]).rename(columns={"length": "length_after", "time": "time_after"})
            edges = edges.merge(after, on=["u", "v"], how="left")
        g = nx.DiGraph()
        g.add_nodes_from(range(self.node_count))
        if cut is None:
            g.add_edges_from(
                (u, v, {"length": length, "time": time})
                for u, v, length, time in zip(*_columns(edges, "u", "v", "length", "time"), strict=True)
            )
            return g
        columns = _columns(edges, "u", "v", "length", "time", "length_after", "time_after")
        g.add_edges_from(
            (
                u,
                v,
                {"length": length, "time": time}
                if math.isnan(la)
                else {"length": length, "time": time, "length_after": la, "time_after": ta},
            )
            for u, v, length, time, la, ta in zip(*columns, strict=True)
        )
        return g


def after_weight(weight: str) -> Callable[[int, int, dict], float | None]:
    """The Dijkstra weight of ``RoadNetwork.graph(cut=...)`` after the cut: None hides an edge the cut removed."""
    key = f"{weight}_after"
    return lambda u, v, data: data.get(key)


def _directed(seg: pd.DataFrame) -> pd.DataFrame:
    """One row per direction a segment can be travelled (u to v), the shortest piece between two nodes."""
    d = seg["direction"].to_numpy()
    fwd, back = d >= 0, d <= 0
    edges = pd.DataFrame(
        {
            "u": np.concatenate([seg["u"].to_numpy()[fwd], seg["v"].to_numpy()[back]]),
            "v": np.concatenate([seg["v"].to_numpy()[fwd], seg["u"].to_numpy()[back]]),
            "length": np.concatenate([seg["length_m"].to_numpy()[fwd], seg["length_m"].to_numpy()[back]]),
            "time": np.concatenate([seg["time_s"].to_numpy()[fwd], seg["time_s"].to_numpy()[back]]),
        }
    )
    return edges.groupby(["u", "v"], sort=False, as_index=False).min()


def _columns(frame: pd.DataFrame, *names: str) -> list[list]:
    """Columns as Python lists (ints and floats), the fastest way to feed networkx."""
    return [frame[n].to_numpy().tolist() for n in names]


def build_network(roads: gpd.GeoDataFrame, vehicle: Vehicle = "drivable", snap_tolerance_m: float = 0.5) -> RoadNetwork:
    """The routable network of the road lines in ``roads`` (any CRS; a ``highway`` column is required)."""
    if roads.crs is None:
        raise ToolFailed("the roads layer has no CRS", kind="invalid_input", hint="set the layer's CRS")
    if "highway" not in roads.columns:
        raise ToolFailed(
            "the roads layer has no 'highway' field",
            kind="invalid_input",
            hint="use OpenStreetMap road lines (an extract, the database's roads or Overpass)",
        )
    highway = _text(roads, "highway")
    wanted = highway.isin(drivable_classes()) if vehicle == "drivable" else highway != ""
    lines = roads.geometry.geom_type.isin(["LineString", "MultiLineString"]).to_numpy()
    sel = roads[wanted.to_numpy() & lines & ~roads.geometry.is_empty.to_numpy()]
    if sel.empty:
        raise ToolFailed(
            f"the roads layer has no {'drivable ' if vehicle == 'drivable' else ''}road lines",
            kind="empty",
            hint="use OpenStreetMap road lines, or vehicle=all for paths and footways",
        )
    sel = sel.to_crs(WGS84).reset_index(drop=True)
    parts, road_of_part = shapely.get_parts(sel.geometry.values, return_index=True)
    coords, part_of_coord = shapely.get_coordinates(parts, return_index=True)
    same = part_of_coord[:-1] == part_of_coord[1:]
    first = np.flatnonzero(same)  # coordinate index of each segment's start
    metric = local_metric_crs(sel)
    to_metric = Transformer.from_crs(WGS84, metric, always_xy=True)
    unique, coord_node = np.unique(coords, axis=0, return_inverse=True)
    coord_node = coord_node.reshape(-1)
    ux, uy = to_metric.transform(unique[:, 0], unique[:, 1])
    xy = np.column_stack([ux, uy])
    label = _cluster(xy, snap_tolerance_m)
    keep_label, node_of_unique = np.unique(label, return_inverse=True)
    node_of_unique = node_of_unique.reshape(-1)
    # the node's position: the first vertex of its cluster (np.unique sorts labels, labels are cluster minima)
    node_lonlat, node_xy = unique[keep_label], xy[keep_label]
    u = node_of_unique[coord_node[first]]
    v = node_of_unique[coord_node[first + 1]]
    a, b = coords[first], coords[first + 1]
    _, _, length = GEOD.inv(a[:, 0], a[:, 1], b[:, 0], b[:, 1])
    road = road_of_part[part_of_coord[first]]
    speed = _speeds_kmh(sel)[road]
    real = u != v
    segments = gpd.GeoDataFrame(
        {
            "road": road[real],
            "u": u[real],
            "v": v[real],
            "length_m": np.asarray(length, dtype=float)[real],
            "time_s": np.asarray(length, dtype=float)[real] / (speed[real] / 3.6),
            "direction": _directions(sel)[road][real],
            "bridge": is_bridge(sel)[road][real],
        },
        geometry=shapely.linestrings(np.stack([a[real], b[real]], axis=1)),
        crs=WGS84,
    )
    return RoadNetwork(sel, segments, node_lonlat, node_xy, to_metric, vehicle, snap_tolerance_m)


def _cluster(xy: np.ndarray, tolerance_m: float) -> np.ndarray:
    """For each point, the smallest index of the points within ``tolerance_m`` of it, transitively."""
    label = np.arange(len(xy))
    if tolerance_m <= 0 or len(xy) < 2:
        return label
    points = shapely.points(xy)
    pairs = shapely.STRtree(points).query(points, predicate="dwithin", distance=tolerance_m)
    pairs = pairs[:, pairs[0] < pairs[1]]
    if pairs.shape[1]:
        near = nx.Graph()
        near.add_edges_from(zip(pairs[0].tolist(), pairs[1].tolist(), strict=True))
        for component in nx.connected_components(near):
            members = np.fromiter(component, dtype=np.int64)
            label[members] = members.min()
    return label


def _hazard_union(hazard: gpd.GeoDataFrame) -> shapely.Geometry:
    if hazard.crs is None:
        raise ToolFailed("the hazard layer has no CRS", kind="invalid_input", hint="set the layer's CRS")
    geoms = hazard.to_crs(WGS84).geometry
    polys = geoms[geoms.geom_type.isin(["Polygon", "MultiPolygon"]) & ~geoms.is_empty]
    if polys.empty:
        raise ToolFailed(
            "the hazard layer has no polygons",
            kind="invalid_input",
            hint="give a flood extent, fire perimeter or buffer of damage as polygons",
        )
    union = shapely.union_all(shapely.make_valid(polys.values))
    shapely.prepare(union)
    return union


def hazard_cuts(net: RoadNetwork, hazard: gpd.GeoDataFrame) -> np.ndarray:
    """Per segment: cut by the hazard (intersects a hazard polygon and is not on a bridge)."""
    hit = shapely.intersects(_hazard_union(hazard), net.segments.geometry.values)  # prepared first
    return np.asarray(hit, dtype=bool) & ~net.segments["bridge"].to_numpy(dtype=bool)


def bridges_in_hazard(net: RoadNetwork, hazard: gpd.GeoDataFrame) -> int:
    """How many roads are bridges crossing the hazard (kept open)."""
    hit = shapely.intersects(_hazard_union(hazard), net.segments.geometry.values)  # prepared first
    return int(net.segments.loc[hit & net.segments["bridge"].to_numpy(dtype=bool), "road"].nunique())


def cut_roads(net: RoadNetwork, cut: np.ndarray) -> gpd.GeoDataFrame:
    """The road features with at least one cut segment, with ``cut_segments`` and the cut length ``cut_m``."""
    seg = net.segments[cut]
    per_road = seg.groupby("road").agg(cut_segments=("u", "size"), cut_m=("length_m", "sum"))
    out = net.roads.iloc[per_road.index.to_numpy()].copy()
    out["cut_segments"] = per_road["cut_segments"].to_numpy()
    out["cut_m"] = per_road["cut_m"].round(1).to_numpy()
    return out


def snap(net: RoadNetwork, features: gpd.GeoDataFrame, max_snap_m: float) -> pd.DataFrame:
    """Per feature (in order): the nearest ``node`` within ``max_snap_m`` (-1 if none) and the geodesic
    ``snap_m`` from the feature's representative point to it (NaN if none)."""
    if features.crs is None:
        raise ToolFailed("a layer has no CRS", kind="invalid_input", hint="set the layer's CRS")
    points = features.to_crs(WGS84).geometry.representative_point()
    lon, lat = points.x.to_numpy(), points.y.to_numpy()
    x, y = net.to_metric.transform(lon, lat)
    tree = net.node_tree
    (which, node), _ = tree.query_nearest(
        shapely.points(np.column_stack([x, y])), max_distance=max_snap_m * 1.01, return_distance=True, all_matches=False
    )
    nodes = np.full(len(features), -1, dtype=np.int64)
    nodes[which] = node
    dist = np.full(len(features), np.nan)
    if len(which):
        ll = net.node_lonlat[node]
        _, _, d = GEOD.inv(lon[which], lat[which], ll[:, 0], ll[:, 1])
        dist[which] = d
    far = dist > max_snap_m
    nodes[far], dist[far] = -1, np.nan
    return pd.DataFrame({"node": nodes, "snap_m": dist})


def feature_name(gdf: gpd.GeoDataFrame, i: int, field: str | None = None) -> str:
    """The feature's name (the layer's name field, else ``name``), else its position: "#3"."""
    for column in (field, "name"):
        if column and column in gdf.columns and isinstance(gdf[column].iloc[i], str) and gdf[column].iloc[i]:
            return str(gdf[column].iloc[i])
    return f"#{i + 1}"


@dataclass
class Reachability:
    """``pairs``: one row per origin x target (``origin``, ``target`` positions, snap distances, ``before_m``,
    ``after_m``, ``before_min``, ``after_min``, ``detour_ratio``, ``status``); isolated origins/targets (positions)
    reach something before and nothing after; ``cut`` marks the cut segments."""

    pairs: pd.DataFrame
    isolated_origins: list[int]
    isolated_targets: list[int]
    cut: np.ndarray
    notes: list[str] = field(default_factory=list)


class _PairCosts:
    """Shortest-path costs from each origin node to each target node (inf: no route), from one Dijkstra per node of
    the smaller side: per origin on the graph, or (fewer targets than origins: many schools, one fire station) per
    target on the reversed graph, which gives the same origin-to-target costs. Only the origin x target matrix is
    kept, not each search's costs to every node."""

    def __init__(
        self,
        g: nx.DiGraph,
        origins: np.ndarray,
        targets: np.ndarray,
        weight: str | Callable[[int, int, dict], float | None],
        cutoff: float | None,
    ) -> None:
        self.row = {int(n): i for i, n in enumerate(origins)}
        self.col = {int(n): j for j, n in enumerate(targets)}
        self.matrix = np.full((len(origins), len(targets)), math.inf)
        from_targets = len(targets) < len(origins)
        graph = g.reverse(copy=False) if from_targets else g
        sources, ends = (targets, self.row) if from_targets else (origins, self.col)
        for k, s in enumerate(sources):
            costs = nx.single_source_dijkstra_path_length(graph, int(s), cutoff=cutoff, weight=weight)
            found = [(at, costs[n]) for n, at in ends.items() if n in costs]
            if found:
                at, values = zip(*found, strict=True)
                if from_targets:
                    self.matrix[list(at), k] = values
                else:
                    self.matrix[k, list(at)] = values

    @classmethod
    def routed(
        cls,
        router: Router,
        edges: pd.DataFrame,
        weight: str,
        origins: np.ndarray,
        targets: np.ndarray,
        cutoff: float | None,
    ) -> _PairCosts:
        """The same costs from an outside router (pgRouting) given the directed edges (``u``, ``v``, ``weight``):
        searched from the smaller side as above (the edges reversed to search from the targets); a node reaches
        itself at 0; a cost beyond ``cutoff`` is no route, as networkx's cutoff has it."""
        costs = cls.__new__(cls)
        costs.row = {int(n): i for i, n in enumerate(origins)}
        costs.col = {int(n): j for j, n in enumerate(targets)}
        costs.matrix = np.full((len(origins), len(targets)), math.inf)
        from_targets = len(targets) < len(origins)
        u, v = (edges["v"], edges["u"]) if from_targets else (edges["u"], edges["v"])
        triples = list(zip(u.tolist(), v.tolist(), edges[weight].tolist(), strict=True))
        sources, ends = (targets, origins) if from_targets else (origins, targets)
        found = router(triples, [int(n) for n in sources], [int(n) for n in ends])
        found += [(int(n), int(n), 0.0) for n in set(sources.tolist()) & set(ends.tolist())]
        for a, b, cost in found:
            if cutoff is not None and cost > cutoff:
                continue
            o, t = (b, a) if from_targets else (a, b)
            costs.matrix[costs.row[o], costs.col[t]] = cost
        return costs

    def get(self, origin: int, target: int) -> float:
        return float(self.matrix[self.row[int(origin)], self.col[int(target)]])


def _main_network(
    net: RoadNetwork, origins: gpd.GeoDataFrame, cut: np.ndarray, max_snap_m: float
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Without targets: each origin against the main network, the largest strongly connected part of the roads
    (before the cut, and after it). Reachable after: its node can still reach, and be reached from, that part."""
    o = snap(net, origins, max_snap_m)
    main_b = max(nx.strongly_connected_components(net.graph()), key=len)
    after = net.graph(~cut)
    parts = list(nx.strongly_connected_components(after))
    main_a = max(parts, key=lambda part: len(part & main_b)) if parts else set()
    rows = []
    for i, (node, snap_m) in enumerate(zip(o["node"], o["snap_m"], strict=True)):
        if node < 0:
            status: Status = "off network"
        elif node not in main_b:
            status = "unreachable before"
        else:
            status = "reachable" if node in main_a else "cut off"
        rows.append({"origin": i, "target": -1, "origin_snap_m": snap_m, "target_snap_m": np.nan, "status": status})
    for column in ("before_m", "after_m", "before_min", "after_min", "detour_ratio"):
        for row in rows:
            row[column] = None
    share = len(main_a & main_b) / len(main_b) if main_b else 0.0
    return pd.DataFrame(rows), pd.DataFrame({"main_nodes_before": [len(main_b)], "main_share_after": [share]})


def reachability(
    net: RoadNetwork,
    origins: gpd.GeoDataFrame,
    targets: gpd.GeoDataFrame | None,
    hazard: gpd.GeoDataFrame | None = None,
    max_km: float | None = None,
    max_snap_m: float = 500.0,
    router: Router | None = None,
) -> Reachability:
    """Network distance (m) and fastest time (min) from each origin to each target, on the whole network and
    with the hazard's cut segments removed. ``max_km`` bounds the distance searched (beyond it: not reachable).
    Without ``targets``: whether each origin is still joined to the main network (no distances). ``router``
    (e.g. ``PostGISEngine.route_costs``: pgRouting) computes the least costs instead of networkx, on the same
    edges."""
    if origins.empty or (targets is not None and targets.empty):
        raise ToolFailed("no origins or no targets to route between", kind="empty")
    cut = hazard_cuts(net, hazard) if hazard is not None else np.zeros(len(net.segments), dtype=bool)
    if targets is None:
        pairs, main = _main_network(net, origins, cut, max_snap_m)
        lost = pairs.index[pairs["status"] == "cut off"].tolist()
        notes = network_notes(net, hazard, max_snap_m, snap(net, origins, max_snap_m))
        notes.append(
            f"reachable: joined to the main road network ({int(main['main_nodes_before'][0])} nodes, the largest part "
            f"where every node reaches every other); {float(main['main_share_after'][0]):.0%} of it stays joined after "
            "the cut"
        )
        return Reachability(pairs, [int(i) for i in lost], [], cut, notes)
    o, t = snap(net, origins, max_snap_m), snap(net, targets, max_snap_m)
    cutoff = max_km * 1000.0 if max_km else None
    sources = np.unique(o["node"][o["node"] >= 0].to_numpy())
    sinks = np.unique(t["node"][t["node"] >= 0].to_numpy())
    if router is not None:  # the same directed edges (shortest piece between two nodes), routed outside
        before_edges = _directed(net.segments)
        dist_b, time_b = (
            _PairCosts.routed(router, before_edges, w, sources, sinks, c)
            for w, c in (("length", cutoff), ("time", None))
        )
        if cut.any():
            after_edges = _directed(net.segments[~cut])
            dist_a, time_a = (
                _PairCosts.routed(router, after_edges, w, sources, sinks, c)
                for w, c in (("length", cutoff), ("time", None))
            )
        else:
            dist_a, time_a = dist_b, time_b
    else:
        # one graph for before and after the cut (edges the cut removes hidden by the weight after)
        g = net.graph(cut=cut) if cut.any() else net.graph()
        dist_b, time_b = (_PairCosts(g, sources, sinks, w, c) for w, c in (("length", cutoff), ("time", None)))
        if cut.any():
            pairs_after = ((after_weight("length"), cutoff), (after_weight("time"), None))
            dist_a, time_a = (_PairCosts(g, sources, sinks, w, c) for w, c in pairs_after)
        else:
            dist_a, time_a = dist_b, time_b
        del g
    rows = []
    for i, (on, osnap) in enumerate(zip(o["node"], o["snap_m"], strict=True)):
        for j, (tn, tsnap) in enumerate(zip(t["node"], t["snap_m"], strict=True)):
            row: dict = {"origin": i, "target": j, "origin_snap_m": osnap, "target_snap_m": tsnap}
            if on < 0 or tn < 0:
                b = a = tb = ta = math.inf
                status: Status = "off network"
            else:
                b, a = dist_b.get(on, tn), dist_a.get(on, tn)
                tb, ta = time_b.get(on, tn), time_a.get(on, tn)
                if math.isinf(b):
                    status = "unreachable before"
                elif math.isinf(a):
                    status = "cut off"
                else:
                    status = "detour" if a > b + 1e-6 else "reachable"
            finite = not (math.isinf(a) or math.isinf(b))
            row |= {
                "before_m": None if math.isinf(b) else round(b, 1),
                "after_m": None if math.isinf(a) else round(a, 1),
                "before_min": None if math.isinf(b) or math.isinf(tb) else round(tb / 60, 2),
                "after_min": None if math.isinf(a) or math.isinf(ta) else round(ta / 60, 2),
                "detour_ratio": (round(a / b, 3) if b > 0 else 1.0) if finite else None,
                "status": status,
            }
            rows.append(row)
    pairs = pd.DataFrame(rows)
    reach_b = pairs["before_m"].notna()
    reach_a = pairs["after_m"].notna()
    by_o = pd.DataFrame({"b": reach_b, "a": reach_a, "k": pairs["origin"]}).groupby("k").any()
    by_t = pd.DataFrame({"b": reach_b, "a": reach_a, "k": pairs["target"]}).groupby("k").any()
    notes = network_notes(net, hazard, max_snap_m, o, t)
    if max_km:
        notes.append(f"routes longer than {max_km:g} km by road count as not reachable")
    return Reachability(
        pairs,
        [int(k) for k in by_o.index[by_o["b"] & ~by_o["a"]]],
        [int(k) for k in by_t.index[by_t["b"] & ~by_t["a"]]],
        cut,
        notes,
    )


def network_notes(
    net: RoadNetwork,
    hazard: gpd.GeoDataFrame | None,
    max_snap_m: float | None = None,
    *snapped: pd.DataFrame,
) -> list[str]:
    """The model's limits, in words: classes, bridges, tunnels, one-way, speeds, snapping."""
    classes = "drivable roads (motorway to track)" if net.vehicle == "drivable" else "every road, path and footway"
    notes = [
        f"network of {len(net.roads)} OSM ways ({classes}), {net.node_count} nodes; roads join where they share a "
        f"vertex (within {net.snap_tolerance_m:g} m); one-way tags respected",
        "a road is cut where any part of it touches the hazard polygons; partial or shallow flooding is not modelled",
        "bridges are kept open (a bridge over the hazard is assumed above it); tunnels and underpasses are cut",
        "times use maxspeed or default class speeds (data/road_speeds.json): free-flow estimates, not measurements",
    ]
    if hazard is not None:
        kept = bridges_in_hazard(net, hazard)
        if kept:
            notes.append(f"{kept} bridges crossing the hazard kept open")
    if max_snap_m is not None and snapped:
        snaps = pd.concat([s["snap_m"] for s in snapped])
        off = int(snaps.isna().sum())
        if snaps.notna().any():
            notes.append(
                f"features joined the network at the nearest road vertex: median {snaps.median():.0f} m, "
                f"at most {snaps.max():.0f} m (limit {max_snap_m:g} m)"
            )
        if off:
            notes.append(f"{off} features farther than {max_snap_m:g} m from any road: off network")
    return notes
