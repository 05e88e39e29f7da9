"""Deterministic vector operations on GeoDataFrames.

Metric work happens in a transverse Mercator projection centred on the data (scale error below
5 ppm within 20 km of the centre) and every reported distance is then measured geodesically on the
WGS84 ellipsoid between the nearest points — never in degrees, never in EPSG:3857.
"""

from __future__ import annotations

from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS, Transformer

from ..domain.geodesy import GEOD, line_lengths_m, polygon_areas_m2
from ..domain.identifiers import IDENTIFIER_HINT, identifier_refusal, is_identifier, no_data_mask
from ..errors import ToolFailed
from .area_grid import intersects_area

WGS84 = CRS.from_epsg(4326)


def _check_crs(*gdfs: gpd.GeoDataFrame) -> None:
    for gdf in gdfs:
        if gdf.crs is None:
            raise ToolFailed("a layer has no CRS; cannot measure distances", kind="invalid_input")


def lonlat_centre(*gdfs: gpd.GeoDataFrame) -> tuple[float, float]:
    """The centre (longitude, latitude) of the combined extent of ``gdfs``, the short way round: data on both
    sides of the antimeridian (179°, -179°) is centred at ±180°, not at 0° on the other side of the globe."""
    coords = [shapely.get_coordinates(g.to_crs(WGS84).geometry.to_numpy()) for g in gdfs if len(g)]
    xy = np.concatenate(coords) if coords else np.empty((0, 2))
    xy = xy[np.isfinite(xy).all(axis=1)]
    if not len(xy):
        raise ToolFailed("no features to measure", kind="empty")
    lon, lat = xy[:, 0], xy[:, 1]
    x0, x1 = float(lon.min()), float(lon.max())
    if x1 - x0 > 180:  # maybe across the antimeridian: measured on 0..360 the extent may be narrower
        wrapped = lon % 360.0
        if float(wrapped.max() - wrapped.min()) < x1 - x0:
            x0, x1 = float(wrapped.min()), float(wrapped.max())
    centre = ((x0 + x1) / 2 + 180.0) % 360.0 - 180.0
    return centre, (float(lat.min()) + float(lat.max())) / 2


def local_metric_crs(*gdfs: gpd.GeoDataFrame) -> CRS:
    """A transverse Mercator CRS (metres, k=1) centred on the combined extent of ``gdfs``."""
    _check_crs(*gdfs)
    lon, lat = lonlat_centre(*gdfs)
    return CRS.from_proj4(
        f"+proj=tmerc +lat_0={lat:.6f} +lon_0={lon:.6f} +k=1 +x_0=0 +y_0=0 +ellps=WGS84 +units=m +no_defs"
    )


def geodesic_distances(geoms_metric: np.ndarray, reference_metric: shapely.Geometry, metric_crs: CRS) -> np.ndarray:
    """Geodesic length (m) of the shortest line from each geometry to ``reference`` (0 when touching)."""
    dist = _geodesic_lengths(shapely.shortest_line(geoms_metric, reference_metric), metric_crs)
    dist[shapely.intersects(geoms_metric, reference_metric)] = 0.0
    return dist


def _geodesic_lengths(lines: np.ndarray, metric_crs: CRS) -> np.ndarray:
    """Geodesic length (m) between the two ends of each two-point line given in ``metric_crs``."""
    return _geodesic_between(shapely.get_coordinates(lines).reshape(-1, 2, 2), metric_crs)


def _geodesic_between(coords: np.ndarray, metric_crs: CRS) -> np.ndarray:
    """Geodesic length (m) between the point pairs ``coords[i, 0]`` and ``coords[i, 1]`` given in ``metric_crs``."""
    back = Transformer.from_crs(metric_crs, WGS84, always_xy=True)
    lon1, lat1 = back.transform(coords[:, 0, 0], coords[:, 0, 1])
    lon2, lat2 = back.transform(coords[:, 1, 0], coords[:, 1, 1])
    _, _, dist = GEOD.inv(lon1, lat1, lon2, lat2)
    return np.asarray(dist, dtype=float)


class _MetricPoints:
    """Single 2D points by their coordinates in the metric CRS alone (no GEOS geometry built for each): what
    the k-d tree of a point reference needs of a point layer."""

    __slots__ = ("xy",)

    def __init__(self, xy: np.ndarray) -> None:
        self.xy = xy

    def __len__(self) -> int:
        return len(self.xy)

    def __getitem__(self, index: np.ndarray) -> _MetricPoints:
        return _MetricPoints(self.xy[index])


def _metric_geoms(features: gpd.GeoDataFrame, metric_crs: CRS, coords_only: bool = False) -> Any:
    """The features' geometries in ``metric_crs``, as ``to_crs`` gives them. A layer of single 2D points is
    transformed by its coordinates alone (the same transformation); with ``coords_only`` they stay coordinates
    (:class:`_MetricPoints`), else they become points again."""
    geoms = features.geometry.to_numpy()
    if not _all_points(geoms) or shapely.has_z(geoms).any():
        return np.asarray(features.to_crs(metric_crs).geometry.values)
    xy = shapely.get_coordinates(geoms)
    x, y = Transformer.from_crs(features.crs, metric_crs, always_xy=True).transform(xy[:, 0], xy[:, 1])
    return _MetricPoints(np.column_stack([x, y])) if coords_only else shapely.points(x, y)


def _reference_union(reference: gpd.GeoDataFrame, metric_crs: CRS) -> shapely.Geometry:
    if reference.empty:
        raise ToolFailed("the reference layer is empty", kind="empty")
    return shapely.union_all(reference.to_crs(metric_crs).geometry.values)


def buffer(gdf: gpd.GeoDataFrame, distance_m: float, dissolve: bool = True) -> gpd.GeoDataFrame:
    if distance_m < 0:
        raise ToolFailed("buffer distance must be positive", kind="invalid_input")
    if gdf.empty:
        raise ToolFailed("nothing to buffer: the input is empty", kind="empty")
    metric = local_metric_crs(gdf)
    projected = gdf.to_crs(metric)
    if dissolve:
        geom = shapely.union_all(projected.geometry.buffer(distance_m, resolution=16).values)
        out = gpd.GeoDataFrame({"buffer_m": [float(distance_m)]}, geometry=[geom], crs=metric)
    else:
        out = projected.copy()
        out["buffer_m"] = float(distance_m)
        out.geometry = projected.geometry.buffer(distance_m, resolution=16)
    return out.to_crs(gdf.crs)


# Routing: below INDEXED_FROM features the direct vectorised GEOS calls (each feature against the whole
# reference) are fastest; from there on the reference is cut into its segments in an STRtree, so each feature
# costs log(segments) instead of every vertex of the hazard (bench/bench_vector_paths.py measures both).
INDEXED_FROM = 2_000


def distance_method(geoms: np.ndarray) -> str:
    """``indexed`` (reference segments in an STRtree) for layers of INDEXED_FROM features or more, all located;
    ``direct`` otherwise (small layers, or features without geometry: the direct path's handling is kept)."""
    if len(geoms) < INDEXED_FROM or (shapely.is_missing(geoms) | shapely.is_empty(geoms)).any():
        return "direct"
    return "indexed"


def _all_points(geoms: np.ndarray) -> bool:
    """Every geometry a single, non-empty point (so its coordinates are one row each)."""
    return bool(len(geoms)) and bool((shapely.get_type_id(geoms) == 0).all() and not shapely.is_empty(geoms).any())


def _point_xy(geoms: Any) -> np.ndarray | None:
    """The coordinates of a layer of single points (``_MetricPoints`` or geometries), else None."""
    if isinstance(geoms, _MetricPoints):
        return geoms.xy
    return shapely.get_coordinates(geoms) if _all_points(geoms) else None


def _kdtree(points: np.ndarray) -> Any:
    """A k-d tree of points (scipy), or None without scipy or points (the STRtree answers instead)."""
    if not _all_points(points):
        return None
    try:
        from scipy.spatial import cKDTree
    except ImportError:
        return None
    return cKDTree(shapely.get_coordinates(points))


class _ReferenceIndex:
    """A reference geometry (metric CRS) prepared for many distance queries: the geometry prepared for
    ``intersects``, and its outline cut into segments (polygons: their rings; lines: their segments; points as
    they are) in an STRtree. A feature not intersecting the reference is nearest to one of these parts, so the
    distance and shortest line to that part are those to the whole reference."""

    def __init__(self, reference: shapely.Geometry) -> None:
        self.geometry = reference
        shapely.prepare(reference)
        parts = shapely.get_parts(reference)
        dims = shapely.get_dimensions(parts)
        lines = np.concatenate(
            [shapely.get_parts(shapely.boundary(parts[dims == 2])), parts[dims == 1]]
        )  # rings and lines
        coords, owner = shapely.get_coordinates(lines, return_index=True)
        same = owner[1:] == owner[:-1]
        segments = shapely.linestrings(np.stack([coords[:-1][same], coords[1:][same]], axis=1))
        self.parts = np.concatenate([segments, parts[dims == 0]])
        self.tree = shapely.STRtree(self.parts)
        self.polygonal = bool((dims == 2).any())
        self.kdtree = _kdtree(self.parts) if (dims == 0).all() else None  # points only: a k-d tree of them

    def intersects(self, geoms: np.ndarray) -> np.ndarray:
        """Whether each geometry intersects the reference: an area's interior counts (the grid test); lines and
        points only through their parts (the tree: a prepared multipoint tests its points one by one)."""
        if self.polygonal:
            return intersects_area(self.geometry, geoms)
        if self.kdtree is not None and (xy := _point_xy(geoms)) is not None:  # point meets point at distance 0
            return self.kdtree.query(xy, k=1)[0] == 0.0
        hit = np.zeros(len(geoms), dtype=bool)
        hit[self.tree.query(geoms, predicate="intersects")[0]] = True
        return hit

    def nearest(
        self, geoms: np.ndarray, max_distance: float | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each geometry (within ``max_distance`` when given): its index in ``geoms``, the index of its nearest
        part, and the planar distance to it. Points to points: the k-d tree (the STRtree's answer, ties aside, an
        order of magnitude sooner)."""
        if self.kdtree is not None and (xy := _point_xy(geoms)) is not None:
            limit = np.inf if max_distance is None else max_distance
            planar, part = self.kdtree.query(xy, k=1, distance_upper_bound=limit)
            which = np.flatnonzero(np.isfinite(planar))
            return which, part[which], planar[which]
        (which, part), planar = self.tree.query_nearest(
            geoms, max_distance=max_distance, return_distance=True, all_matches=False
        )
        return which, part, planar

    def locate(
        self, geoms: Any, max_distance: float | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(touching, which, part, planar)``: whether each geometry intersects the reference, and for the others
        (within ``max_distance`` when given) their indices in ``geoms``, nearest parts and planar distances. Points
        to points: one k-d tree query for both."""
        if self.kdtree is not None and _point_xy(geoms) is not None:  # one query: at distance 0 is touching
            which, part, planar = self.nearest(geoms, max_distance)
            touching = np.zeros(len(geoms), dtype=bool)
            touching[which[planar == 0.0]] = True
            off = planar > 0.0
            return touching, which[off], part[off], planar[off]
        touching = self.intersects(geoms)
        apart = np.flatnonzero(~touching)
        which, part, planar = self.nearest(geoms[apart], max_distance)
        return touching, apart[which], part, planar

    def geodesic(self, geoms: Any, part: np.ndarray, metric_crs: CRS) -> np.ndarray:
        """Geodesic distances (m) from geometries not intersecting the reference to their nearest parts."""
        if self.kdtree is not None and (xy := _point_xy(geoms)) is not None:  # point to point: no line to build
            ends = np.stack([xy, self.kdtree.data[part]], axis=1)
            return _geodesic_between(ends, metric_crs)
        return _geodesic_lengths(shapely.shortest_line(geoms, self.parts[part]), metric_crs)


def within_distance(
    features: gpd.GeoDataFrame, reference: gpd.GeoDataFrame, distance_m: float, method: str | None = None
) -> gpd.GeoDataFrame:
    """Features within ``distance_m`` metres of any reference geometry, with a geodesic ``distance_m``
    column, nearest first. ``method`` forces ``direct`` or ``indexed`` (default: :func:`distance_method`)."""
    if distance_m < 0:
        raise ToolFailed("distance must be positive", kind="invalid_input")
    if features.empty or reference.empty:  # nothing is within any distance of nothing
        return features.iloc[0:0].assign(distance_m=pd.Series(dtype=float))
    metric = local_metric_crs(reference)  # centred on the hazard: only features near it matter
    ref = _reference_union(reference, metric)
    reach = distance_m * 1.01 + 10.0  # generous pre-filter in the local projection, exact geodesic test after
    dist = np.full(len(features), np.inf)
    if (method or distance_method(features.geometry.to_numpy())) == "indexed":
        index = _ReferenceIndex(ref)
        geoms = _metric_geoms(features, metric, coords_only=index.kdtree is not None)
        near = np.arange(len(features))
        if index.kdtree is None and len(geoms) >= INDEXED_FROM:  # only features within reach of it are queried
            near = np.flatnonzero(intersects_area(shapely.buffer(ref, reach, quad_segs=16), geoms))
        touching, which, part, _ = index.locate(geoms[near], max_distance=reach)
        dist[near[touching]] = 0.0
        if len(which):
            dist[near[which]] = index.geodesic(geoms[near[which]], part, metric)
    else:
        geoms = _metric_geoms(features, metric)
        candidates = shapely.dwithin(geoms, ref, reach)
        if candidates.any():
            dist[candidates] = geodesic_distances(geoms[candidates], ref, metric)
    keep = dist <= distance_m
    out = features[keep].copy()
    out["distance_m"] = np.round(dist[keep], 1)
    return out.sort_values("distance_m", kind="stable")


def nearest_k(
    features: gpd.GeoDataFrame, reference: gpd.GeoDataFrame, k: int, method: str | None = None
) -> gpd.GeoDataFrame:
    """The ``k`` features nearest to the reference, ranked, with geodesic distances. ``method`` as in
    :func:`within_distance`."""
    if k < 1:
        raise ToolFailed("k must be at least 1", kind="invalid_input")
    if features.empty:
        raise ToolFailed("no features to rank", kind="empty")
    metric = local_metric_crs(reference)
    ref = _reference_union(reference, metric)
    if (method or distance_method(features.geometry.to_numpy())) == "indexed":
        index = _ReferenceIndex(ref)
        geoms = _metric_geoms(features, metric, coords_only=index.kdtree is not None)
        dist = _nearest_geodesic(geoms, index, k, metric)
    else:
        dist = geodesic_distances(_metric_geoms(features, metric), ref, metric)
    dist = np.round(dist, 1)
    first = np.argsort(dist, kind="stable")[:k]  # a stable sort's first k: ties in layer order
    out = features.iloc[first].copy()
    out["distance_m"] = dist[first]
    out["rank"] = np.arange(1, len(out) + 1)
    return out


def _nearest_geodesic(geoms: Any, index: _ReferenceIndex, k: int, metric: CRS) -> np.ndarray:
    """Geodesic distances of the features that can be among the ``k`` nearest (``inf`` for the others): planar
    distances from the index for all, geodesic ones only within a generous margin of the k-th planar distance
    (the local projection's scale error is far below 1 %)."""
    planar = np.zeros(len(geoms))
    touching, which, part, d = index.locate(geoms)
    planar[which] = d
    kth = np.partition(planar, min(k, len(planar)) - 1)[min(k, len(planar)) - 1]
    dist = np.full(len(geoms), np.inf)
    dist[touching] = 0.0
    close = d <= kth * 1.01 + 10.0
    dist[which[close]] = index.geodesic(geoms[which[close]], part[close], metric)
    return dist


def inside(features: gpd.GeoDataFrame, mask: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Features that intersect the mask (a flood extent, a burn area, an AOI)."""
    if mask.empty:
        raise ToolFailed("the mask layer is empty", kind="empty")
    if features.empty:
        return features
    shape = shapely.union_all(mask.to_crs(features.crs).geometry.values)
    return features[intersects_area(shape, features.geometry.values)].copy()


def count_by(gdf: gpd.GeoDataFrame, field: str | None) -> pd.DataFrame:
    """Feature counts, overall (``field=None``) or per value of ``field`` (most frequent first)."""
    if field is None:
        return pd.DataFrame({"value": ["all"], "count": [len(gdf)]})
    _require_field(gdf, field)
    counts = gdf[field].fillna("(none)").astype(str).value_counts()
    return pd.DataFrame({"value": counts.index.tolist(), "count": counts.values.astype(int)})


def filter_values(gdf: gpd.GeoDataFrame, field: str, values: list[str]) -> gpd.GeoDataFrame:
    """Rows whose ``field`` (as text) is one of ``values``."""
    _require_field(gdf, field)
    return gdf[gdf[field].astype(str).isin([str(v) for v in values])].copy()


def utm_crs(gdf: gpd.GeoDataFrame) -> CRS:
    """The UTM zone (WGS84) of the layer's centre: the CRS whose metre grid a "250 m grid" is aligned to."""
    lon, lat = lonlat_centre(gdf)
    zone = int((lon + 180) // 6) % 60 + 1
    return CRS.from_epsg((32600 if lat >= 0 else 32700) + zone)


def grid_counts(features: gpd.GeoDataFrame, cell_m: float) -> tuple[pd.DataFrame, CRS]:
    """Features per square cell of ``cell_m`` metres in the layer's UTM zone, cell edges at whole multiples of
    ``cell_m`` (a feature counts in the cell of its representative point); non-empty cells, densest first.
    ``value`` names a cell by its south-west corner ("E384250 N3767500")."""
    if cell_m <= 0:
        raise ToolFailed("the cell size must be positive", kind="invalid_input")
    if features.empty:
        return pd.DataFrame({"value": pd.Series(dtype=str), "count": pd.Series(dtype=int)}), CRS.from_epsg(4326)
    crs = utm_crs(features)
    points = features.to_crs(crs).geometry.representative_point()
    ix = np.floor(points.x.to_numpy() / cell_m).astype(np.int64)
    iy = np.floor(points.y.to_numpy() / cell_m).astype(np.int64)
    cells = pd.Series(list(zip(ix.tolist(), iy.tolist(), strict=True))).value_counts()
    names = [f"E{int(i * cell_m)} N{int(j * cell_m)}" for i, j in cells.index]
    return pd.DataFrame({"value": names, "count": cells.to_numpy().astype(int)}), crs


def count_in_zones(features: gpd.GeoDataFrame, zones: gpd.GeoDataFrame, label: str | None) -> pd.DataFrame:
    """Features per zone polygon (a feature in two overlapping zones counts in both), every zone listed, zones
    without features as 0, most first. ``label`` names a zone (default: "zone 1", "zone 2" ... in layer order);
    zones sharing a label are one group."""
    if zones.empty:
        raise ToolFailed("the zones layer is empty", kind="empty")
    if label is not None:
        _require_field(zones, label, "the zone layer")
    names = (
        zones[label].fillna("(none)").astype(str).to_numpy()
        if label
        else np.array([f"zone {i}" for i in range(1, len(zones) + 1)])
    )
    counts = dict.fromkeys(names.tolist(), 0)
    for name, hits in zip(names, hits_per_zone(features, zones), strict=True):
        counts[name] += int(hits)
    table = pd.DataFrame({"value": list(counts), "count": [int(c) for c in counts.values()]})
    return table.sort_values("count", ascending=False, kind="stable").reset_index(drop=True)


def hits_per_zone(features: gpd.GeoDataFrame, zones: gpd.GeoDataFrame) -> np.ndarray:
    """How many features intersect each zone polygon, in zone order (0 for a zone without geometry)."""
    counts = np.zeros(len(zones), dtype=int)
    if features.empty or zones.empty:
        return counts
    tree = shapely.STRtree(features.geometry.to_numpy())
    for i, geom in enumerate(zones.to_crs(features.crs).geometry.to_numpy()):
        if geom is not None and not shapely.is_empty(geom):
            counts[i] = len(tree.query(geom, predicate="intersects"))
    return counts


def clip(features: gpd.GeoDataFrame, mask: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Features cut to the mask polygons (geometries outside are dropped, crossing ones are cut)."""
    if mask.empty:
        raise ToolFailed("the mask layer is empty", kind="empty")
    if features.empty:
        return features
    return gpd.clip(features, mask.to_crs(features.crs))


def dissolve(gdf: gpd.GeoDataFrame, by: str | None, parts: bool = False) -> gpd.GeoDataFrame:
    """Merge geometries, all together or per value of ``by``, with the number of features merged. ``parts``: one
    feature per connected part (overlapping or touching geometries merged, separate ones kept apart)."""
    if gdf.empty:
        raise ToolFailed("nothing to dissolve: the input is empty", kind="empty")
    if by is not None:
        _require_field(gdf, by)
    keyed = gdf.assign(_key=gdf[by].fillna("(none)").astype(str) if by else "all")
    geoms = keyed.geometry.to_numpy()
    located = ~(shapely.is_missing(geoms) | shapely.is_empty(geoms))
    polygons = located.any() and np.isin(shapely.get_type_id(geoms[located]), (3, 6)).all()
    if polygons and shapely.is_valid(geoms[located]).all():
        groups = keyed[located].groupby("_key", sort=True).indices  # polygons: merged only where they meet
        out = gpd.GeoDataFrame(
            {"_key": list(groups)}, geometry=[_dissolved(geoms[located][i]) for i in groups.values()], crs=gdf.crs
        )
    else:
        out = keyed[["_key", keyed.geometry.name]].dissolve(by="_key", as_index=False)
    if parts:
        out = out.explode(index_parts=False).reset_index(drop=True)
        geoms = keyed.geometry.to_numpy()
        keys = keyed["_key"].to_numpy()
        part, feature = shapely.STRtree(geoms).query(out.geometry.to_numpy(), predicate="intersects")
        same = keys[feature] == out["_key"].to_numpy()[part]  # the features of its own group that it holds
        out["count"] = np.bincount(part[same], minlength=len(out)).astype(int)
    else:
        counts = keyed.groupby("_key").size()
        out["count"] = out["_key"].map(counts).astype(int)
    return out.rename(columns={"_key": by or "group"})


def sum_by(gdf: gpd.GeoDataFrame, field: str, by: str | None) -> pd.DataFrame:
    """Sum (and count) a numeric field, in total or per value of ``by``; never of an identifier."""
    for name in [field] + ([by] if by else []):
        _require_field(gdf, name)
    refuse_identifier(gdf, field, "sum")
    values = pd.to_numeric(gdf[field], errors="coerce")
    if values.notna().sum() == 0 and len(gdf):
        raise ToolFailed(f"field '{field}' has no numbers", kind="invalid_input")
    keys = gdf[by].fillna("(none)").astype(str) if by else pd.Series("all", index=gdf.index)
    grouped = values.groupby(keys)
    out = pd.DataFrame({"value": grouped.sum().index, "sum": grouped.sum().values, "count": grouped.count().values})
    return out.sort_values("sum", ascending=False, kind="stable").reset_index(drop=True)


def dbscan(gdf: gpd.GeoDataFrame, eps_m: float, min_samples: int) -> tuple[gpd.GeoDataFrame, int]:
    """DBSCAN on feature centroids in metres (local transverse Mercator). Returns one polygon per
    cluster (convex hull, buffered by eps/2 so single-line clusters have an area) with its size, and
    the number of noise features."""
    from scipy.spatial import cKDTree

    if eps_m <= 0 or min_samples < 1:
        raise ToolFailed("eps must be positive metres and min_samples at least 1", kind="invalid_input")
    if gdf.empty:
        raise ToolFailed("nothing to cluster: the input is empty", kind="empty")
    metric = local_metric_crs(gdf)
    centroids = gdf.to_crs(metric).geometry.centroid
    xy = np.column_stack([centroids.x.values, centroids.y.values])
    neighbours = cKDTree(xy).query_ball_point(xy, r=eps_m)
    core = np.array([len(n) >= min_samples for n in neighbours])
    labels = np.full(len(xy), -1)
    cluster = 0
    for start in np.flatnonzero(core):
        if labels[start] != -1:
            continue
        labels[start] = cluster
        queue = [start]
        while queue:
            point = queue.pop()
            if not core[point]:
                continue  # border points join a cluster but do not extend it
            for other in neighbours[point]:
                if labels[other] == -1:
                    labels[other] = cluster
                    queue.append(other)
        cluster += 1
    hulls, sizes = [], []
    for c in range(cluster):
        members = shapely.multipoints(xy[labels == c])
        hulls.append(shapely.convex_hull(members).buffer(eps_m / 2))
        sizes.append(int((labels == c).sum()))
    out = gpd.GeoDataFrame({"cluster": list(range(cluster)), "count": sizes}, geometry=hulls, crs=metric)
    out = out.sort_values("count", ascending=False, kind="stable")
    return out.to_crs(gdf.crs), int((labels == -1).sum())


# ------------------------------------------------------------------------------------------------
# Measures a composable answer needs: the complement of inside, a share, a geodesic area or length, a
# statistic of a field. Areas and lengths are geodesic on the WGS84 ellipsoid (never in degrees).


def _fields_hint(gdf: gpd.GeoDataFrame) -> str:
    return f"fields are: {', '.join(c for c in gdf.columns if c != gdf.geometry.name)}"


def _require_field(gdf: gpd.GeoDataFrame, name: str, what: str = "the layer") -> None:
    if name not in gdf.columns:
        raise ToolFailed(f"{what} has no field '{name}'", kind="invalid_input", hint=_fields_hint(gdf))


def refuse_identifier(gdf: gpd.GeoDataFrame, field: str, measure: str) -> None:
    """:class:`ToolFailed` when ``field`` is an identifier of the layer (its name, or its values a row number: see
    :mod:`..domain.identifiers`): a sum or mean of it measures nothing."""
    if is_identifier(field, gdf[field].tolist()):
        raise ToolFailed(identifier_refusal(field, measure), kind="invalid_input", hint=IDENTIFIER_HINT)


def _keys(gdf: gpd.GeoDataFrame, by: str | None) -> pd.Series:
    """Group keys as text ("(none)" for a missing value), or "all" when not grouping."""
    if by is None:
        return pd.Series("all", index=gdf.index, dtype=object)
    return gdf[by].fillna("(none)").astype(str)


def outside(features: gpd.GeoDataFrame, mask: gpd.GeoDataFrame) -> tuple[gpd.GeoDataFrame, int]:
    """Features that do not intersect the mask: the complement of :func:`inside`. Features without a
    geometry are neither inside nor outside; their number is returned beside the layer."""
    if mask.empty:
        raise ToolFailed("the mask layer is empty", kind="empty")
    if features.empty:
        return features, 0
    shape = shapely.union_all(mask.to_crs(features.crs).geometry.values)
    geoms = features.geometry.to_numpy()
    located = ~(shapely.is_missing(geoms) | shapely.is_empty(geoms))
    keep = located & ~intersects_area(shape, geoms)
    return features[keep].copy(), int((~located).sum())


def share(part: gpd.GeoDataFrame, base: gpd.GeoDataFrame, by: str | None) -> tuple[pd.DataFrame, dict[str, int]]:
    """The share of ``base`` that ``part`` is, by feature count: one row (``value`` "all"), or one row per
    value of ``by`` in ``base`` (0 where ``part`` has none). Columns: value, part, base, share (fraction,
    4 decimals), percent (2 decimals). Also the groups of ``part`` that ``base`` lacks, with their counts."""
    if base.empty:
        raise ToolFailed(
            "the base layer is empty: a share of nothing is undefined",
            kind="empty",
            hint="the base must be all the features the share is of (e.g. every building of the event)",
        )
    if by is not None:
        _require_field(base, by, "the base layer")
        if not part.empty:
            _require_field(part, by, "the part layer")
    base_counts = _keys(base, by).value_counts()
    part_counts = _keys(part, by).value_counts() if len(part) else pd.Series(dtype=int)
    groups = sorted(base_counts.index, key=lambda g: (-int(base_counts[g]), g))
    rows = []
    for group in groups:
        p, b = int(part_counts.get(group, 0)), int(base_counts[group])
        rows.append({"value": group, "part": p, "base": b, "share": round(p / b, 4), "percent": round(100 * p / b, 2)})
    orphans = {str(g): int(n) for g, n in part_counts.items() if g not in base_counts.index}
    return pd.DataFrame(rows, columns=["value", "part", "base", "share", "percent"]), orphans


def _lonlat(gdf: gpd.GeoDataFrame) -> gpd.GeoSeries:
    """Geometries in lon/lat for geodesic measures. A projected layer's edges are densified to 1 km first,
    so an edge straight in the projection stays (nearly) where it was after reprojection."""
    _check_crs(gdf)
    crs = CRS.from_user_input(gdf.crs)
    geoms = gdf.geometry
    if crs.is_projected:
        metres_per_unit = crs.axis_info[0].unit_conversion_factor if crs.axis_info else 1.0
        geoms = geoms.segmentize(1000.0 / metres_per_unit)
    return geoms.to_crs(WGS84)


def measure(gdf: gpd.GeoDataFrame, quantity: str, by: str | None) -> tuple[pd.DataFrame, float, str]:
    """Geodesic area (km², ha) of the polygons or length (km) of the lines, in total or per value of ``by``.

    Geometries are merged (per group) before measuring, so overlapping polygons or duplicated lines are
    counted once. A layer of polygons only has no lines: its length is its merged outline (perimeter).
    Returns the table (value, area_km2, area_ha, features | value, length_km, features), the total of the
    whole layer merged (groups may overlap one another, so it need not be the sum of the rows), and what was
    measured: "area", "length" or "perimeter"."""
    if quantity not in ("area", "length"):
        raise ToolFailed(f"unknown quantity '{quantity}'", kind="invalid_input", hint="use area or length")
    if by is not None:
        _require_field(gdf, by)
    geoms = _lonlat(gdf).to_numpy() if len(gdf) else np.array([], dtype=object)
    located = ~(shapely.is_missing(geoms) | shapely.is_empty(geoms))
    dims = shapely.get_dimensions(geoms)
    found = set(dims[located].tolist())
    if found == {0}:
        raise ToolFailed(
            f"points have no {quantity}",
            kind="invalid_input",
            hint="count the points, or measure a polygon or line layer (e.g. a buffer around them)",
        )
    if quantity == "area" and found and 2 not in found:
        raise ToolFailed(
            "lines have no area", kind="invalid_input", hint="measure quantity='length', or buffer the lines first"
        )
    what = "area" if quantity == "area" else ("length" if 1 in found or not found else "perimeter")
    measured = located & (dims == (1 if what == "length" else 2))

    def amount(select: np.ndarray) -> float:
        values = geoms[measured & select]
        if not len(values):
            return 0.0
        if what == "area":
            return union_area_m2(shapely.make_valid(values))
        if what == "length":
            return float(line_lengths_m(merge_overlapping_lines(values)).sum())
        parts = shapely.get_parts(merge_overlapping(shapely.make_valid(values), touching=True))  # shared edges:
        return float(line_lengths_m(shapely.boundary(parts[shapely.get_type_id(parts) == 3])).sum())  # no outline

    keys = _keys(gdf, by).to_numpy()
    counts = pd.Series(keys, dtype=object).value_counts()
    rows = [
        {"value": group, "amount": amount(keys == group), "features": int(counts[group])}
        for group in sorted(counts.index, key=lambda g: (-int(counts[g]), g))
    ]
    if by is None and not rows:
        rows.append({"value": "all", "amount": 0.0, "features": 0})
    total = amount(np.ones(len(geoms), dtype=bool)) if by is not None else rows[0]["amount"]
    table = pd.DataFrame(rows, columns=["value", "amount", "features"])
    if what == "area":
        table = table.assign(area_km2=(table["amount"] / 1e6).round(6), area_ha=(table["amount"] / 1e4).round(4))
        columns, scale = ["value", "area_km2", "area_ha", "features"], 1e6
    else:
        table = table.assign(length_km=(table["amount"] / 1e3).round(4))
        columns, scale = ["value", "length_km", "features"], 1e3
    table = table[columns].sort_values(columns[1], ascending=False, kind="stable").reset_index(drop=True)
    return table, round(total / scale, 6), what


def merge_overlapping(polygons: np.ndarray, touching: bool) -> np.ndarray:
    """Valid polygons merged group by group: each set of polygons whose interiors meet (``touching``: or whose
    outlines touch) is one union, every other polygon stays as it is. What ``union_all`` gives, part for part, with
    GEOS merging only where something meets (merging a million footprints that touch nothing would cost minutes).
    Without scipy: one union of all."""
    polys = polygons[~(shapely.is_missing(polygons) | shapely.is_empty(polygons))]
    try:
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components
    except ImportError:
        return np.array([shapely.union_all(polys)], dtype=object) if len(polys) else polys
    a, b = shapely.STRtree(polys).query(polys, predicate="intersects")
    a, b = a[a < b], b[a < b]
    if not touching:
        meet = ~shapely.touches(polys[a], polys[b])  # interiors meet, not only outlines
        a, b = a[meet], b[meet]
    return _merged_groups(polys, a, b, np.zeros(len(polys), dtype=bool), connected_components, coo_matrix)


def _merged_groups(
    geoms: np.ndarray, a: np.ndarray, b: np.ndarray, alone_too: np.ndarray, components: Any, matrix: Any
) -> np.ndarray:
    """One union per connected set of the pairs (a, b) of ``geoms``; a geometry in no pair stays as it is, unless
    ``alone_too`` marks it for a union of its own."""
    if not len(a) and not alone_too.any():
        return geoms
    n = len(geoms)
    _, label = components(matrix((np.ones(len(a)), (a, b)), shape=(n, n)), directed=False)
    alone = np.bincount(label)[label] == 1
    kept = alone & ~alone_too
    order = np.argsort(label[~kept], kind="stable")
    groups = np.split(geoms[~kept][order], np.flatnonzero(np.diff(label[~kept][order])) + 1)
    return np.concatenate([geoms[kept], np.array([shapely.union_all(g) for g in groups if len(g)], dtype=object)])


def merge_overlapping_lines(lines: np.ndarray) -> np.ndarray:
    """Lon/lat lines merged where they share a stretch (their interiors meet in a line: duplicated or overlapping
    segments), each such set one union; a line that runs over itself is merged alone; every other line stays as
    it is. Lines that only cross or touch keep their length either way, so the total length is ``union_all``'s
    without noding every crossing of a whole network (10^5 road segments: seconds instead of minutes).
    Without scipy: one union of all."""
    lines = lines[~(shapely.is_missing(lines) | shapely.is_empty(lines))]
    try:
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components
    except ImportError:
        return np.array([shapely.union_all(lines)], dtype=object) if len(lines) else lines
    a, b = _collinear_pairs(lines)  # the few pairs that may share a stretch, then GEOS's exact answer
    shared = shapely.relate_pattern(lines[a], lines[b], "1********")  # interiors share a line
    return _merged_groups(lines, a[shared], b[shared], ~shapely.is_simple(lines), connected_components, coo_matrix)


def _collinear_pairs(lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (a < b) of different lines with two segments that lie on one line, within a tolerance, and overlap
    along it: every pair whose interiors can share a stretch, and few others (GEOS's relate costs ~5 µs per pair;
    a road network has millions of pairs whose boxes meet). The tolerance (1e-9 of the coordinates' size) is far
    above float rounding, so no pair GEOS would find sharing a stretch is missed."""
    parts, owner = shapely.get_parts(lines, return_index=True)
    xy, part = shapely.get_coordinates(parts, return_index=True)
    same = np.flatnonzero(part[1:] == part[:-1])
    p, q = xy[same], xy[same + 1]  # segment k runs from p[k] to q[k]
    line = owner[part[same]]
    long = np.any(p != q, axis=1)
    p, q, line = p[long], q[long], line[long]
    i, j = shapely.STRtree(shapely.linestrings(np.stack([p, q], axis=1))).query(
        shapely.linestrings(np.stack([p, q], axis=1))
    )
    keep = line[i] < line[j]
    i, j = i[keep], j[keep]
    d = q[i] - p[i]
    length = np.hypot(d[:, 0], d[:, 1])
    tol = 1e-9 * max(1.0, float(np.abs(xy).max())) if len(xy) else 0.0

    def offset(r: np.ndarray) -> np.ndarray:  # distance of points r from the line through segment i
        return np.abs(d[:, 0] * (r[:, 1] - p[i][:, 1]) - d[:, 1] * (r[:, 0] - p[i][:, 0])) / length

    def along(r: np.ndarray) -> np.ndarray:  # position of points r along segment i, 0 at its start
        return (d[:, 0] * (r[:, 0] - p[i][:, 0]) + d[:, 1] * (r[:, 1] - p[i][:, 1])) / length

    on = (offset(p[j]) <= tol) & (offset(q[j]) <= tol)
    lo, hi = np.minimum(along(p[j]), along(q[j])), np.maximum(along(p[j]), along(q[j]))
    overlap = on & (np.minimum(hi, length) - np.maximum(lo, 0.0) > -tol)
    pairs = np.unique(np.stack([line[i][overlap], line[j][overlap]], axis=1), axis=0)
    return pairs[:, 0], pairs[:, 1]


def union_area_m2(polygons: np.ndarray) -> float:
    """The geodesic area (m²) of the union of valid lon/lat polygons, each place counted once
    (:func:`merge_overlapping`, then :func:`polygon_areas_m2`, vectorised)."""
    return float(polygon_areas_m2(merge_overlapping(polygons, touching=False)).sum())


def _dissolved(polygons: np.ndarray) -> shapely.Geometry:
    """The union of valid polygons as one Polygon or MultiPolygon (parts of different groups never meet)."""
    parts = shapely.get_parts(merge_overlapping(polygons, touching=True))
    parts = parts[shapely.get_type_id(parts) == 3]
    return parts[0] if len(parts) == 1 else shapely.multipolygons(parts)


STATS = ("mean", "median", "min", "max", "sum")


def stats(gdf: gpd.GeoDataFrame, field: str, stat: str, by: str | None) -> tuple[pd.DataFrame, dict[str, float | int]]:
    """A statistic of a numeric field, in total or per value of ``by``. Values are coerced to numbers;
    missing and non-numeric values are left out and counted. Returns the table (value, <stat>, n, n_null),
    largest first, and the overall figures: the statistic over every value, n, n_null, n_not_numeric."""
    if stat not in STATS:
        raise ToolFailed(f"unknown statistic '{stat}'", kind="invalid_input", hint=f"use one of {', '.join(STATS)}")
    if gdf.empty:
        raise ToolFailed(f"no features: the {stat} of nothing is undefined", kind="empty")
    _require_field(gdf, field)
    if by is not None:
        _require_field(gdf, by)
    if stat in ("sum", "mean"):
        refuse_identifier(gdf, field, stat)
    raw = gdf[field]
    values = pd.to_numeric(raw, errors="coerce")
    coded = no_data_mask(values)  # "-999": unknown, not a number to add
    values = values.mask(coded)
    if values.notna().sum() == 0:
        raise ToolFailed(f"field '{field}' has no numbers", kind="invalid_input", hint=_fields_hint(gdf))
    keys = _keys(gdf, by)
    grouped = values.groupby(keys)
    table = pd.DataFrame(
        {
            stat: grouped.agg(stat),
            "n": grouped.count().astype(int),
            "n_null": values.isna().groupby(keys).sum().astype(int),
        }
    )
    table = table.rename_axis("value").reset_index()
    table.loc[table["n"] == 0, stat] = np.nan  # a group without a number has no statistic (not a sum of 0)
    table = table.sort_values(stat, ascending=False, kind="stable", na_position="last").reset_index(drop=True)
    overall = {
        "value": float(values.agg(stat)),
        "n": int(values.notna().sum()),
        "n_null": int(values.isna().sum()),
        "n_not_numeric": int((values.isna() & raw.notna() & ~coded).sum()),
        "n_no_data": int(coded.sum()),
    }
    return table, overall
