"""Relating one layer to another by where its features are: a spatial join that carries attributes, and snapping
vertices to a grid or to another layer. Pure functions on GeoDataFrames returning their result and what they changed
(:class:`.transforms.Changes`), like the transforms they chain with.

Distances and tolerances are metres in a projected CRS: the layer's own when it is projected in metres, else its UTM
zone (a grid, whose lines fall at whole multiples of the cell) or a transverse Mercator centred on the data (a
nearest join, snapping to a layer). Results come back in the input's CRS, one feature per input feature in the input's
order, every input attribute kept."""

from __future__ import annotations

from typing import Literal

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from ..domain.geometry import geometry_family
from ..domain.identifiers import is_identifier
from ..errors import ToolFailed
from .transforms import Changes, crs_label
from .vector_ops import _require_field, local_metric_crs, utm_crs

Predicate = Literal["intersects", "within", "contains", "nearest"]
Aggregate = Literal["first", "list", "sum", "mean", "min", "max"]
SnapTarget = Literal["vertices", "edges"]
COUNT_FIELD = "join_count"
DISTANCE_FIELD = "join_distance_m"
LIST_SEPARATOR = "; "


def _families(gdf: gpd.GeoDataFrame) -> set[str]:
    types = gdf.geometry.geom_type.dropna().unique()
    return {f for t in types if (f := geometry_family(str(t)))}


def _need_crs(*gdfs: gpd.GeoDataFrame) -> None:
    if any(g.crs is None for g in gdfs):
        raise ToolFailed("a layer has no CRS", kind="invalid_input", hint="set the layer's CRS first")


def auto_predicate(target: gpd.GeoDataFrame, join: gpd.GeoDataFrame, max_distance_m: float | None) -> Predicate:
    """The relation a join means when none is said: the nearest within a distance when one is given; points get
    the polygon they are within; polygons the points they contain; else whatever intersects."""
    if max_distance_m is not None:
        return "nearest"
    mine, theirs = _families(target), _families(join)
    if mine == {"point"} and theirs == {"polygon"}:
        return "within"
    if mine == {"polygon"} and theirs == {"point"}:
        return "contains"
    return "intersects"


def _free_name(name: str, taken: set[str]) -> str:
    """``name``, else ``name_2``, ``name_3`` ... (QGIS's rule for a joined field whose name is taken)."""
    if name not in taken:
        return name
    n = 2
    while f"{name}_{n}" in taken:
        n += 1
    return f"{name}_{n}"


def _pairs(
    target: np.ndarray, join: np.ndarray, predicate: Predicate, max_distance_m: float | None, metric: CRS | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(target rows, join rows, distances in metres or None) of every matching pair, by target row then join row."""
    tree = shapely.STRtree(join)
    if predicate == "nearest":
        pairs, dist = tree.query_nearest(target, max_distance=max_distance_m, return_distance=True, all_matches=True)
    else:
        # a point on a polygon's edge is in it: within and contains count the boundary (covered by, covers)
        shapely_predicate = {"within": "covered_by", "contains": "covers"}.get(predicate, predicate)
        pairs, dist = tree.query(target, predicate=shapely_predicate), None
    order = np.lexsort((pairs[1], pairs[0]))
    return pairs[0][order], pairs[1][order], (dist[order] if dist is not None else None)


def _numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _aggregated(values: pd.Series, how: Aggregate) -> object:
    present = values.dropna()
    if present.empty:
        return None
    if how == "first":
        return present.iloc[0]
    if how == "list":
        return LIST_SEPARATOR.join(dict.fromkeys(str(v) for v in present))
    numbers = present.astype(float)
    return float({"sum": numbers.sum, "mean": numbers.mean, "min": numbers.min, "max": numbers.max}[how]())


def spatial_join(
    target: gpd.GeoDataFrame,
    join: gpd.GeoDataFrame,
    predicate: Predicate | None = None,
    max_distance_m: float | None = None,
    fields: list[str] | None = None,
    aggregate: Aggregate | None = None,
    prefix: str = "",
) -> tuple[gpd.GeoDataFrame, Changes]:
    """Every feature of ``target`` (its geometry and attributes unchanged, in its order) with the attributes of the
    features of ``join`` it relates to by ``predicate`` (target within / contains / intersects the join feature, or
    the nearest one within ``max_distance_m`` metres; within and contains count a feature on the boundary: a point on
    a district's edge is in it), and ``join_count``: how many it relates to (0: none; its
    joined fields null). ``fields``: the join layer's fields to carry (None: all). A joined field whose name the target
    has is named ``<name>_2`` (or ``prefix`` + name for all of them).

    Several matches: ``aggregate`` first (the join layer's first; for nearest, the closest, equidistant ones in the
    join layer's order), list (the distinct values, "; "), sum / mean / min / max (numbers). None: first, except for
    polygons that contain points, where numbers are summed and the rest listed (identifiers are never summed: listed).
    How many features had several matches, and what was taken, is said in the notes."""
    _need_crs(target, join)
    chosen = predicate or auto_predicate(target, join, max_distance_m)
    if chosen != "nearest" and max_distance_m is not None:
        raise ToolFailed(
            f"a distance is for the nearest join, not for '{chosen}'",
            kind="invalid_input",
            hint="use predicate nearest with max_distance_m, or drop the distance",
        )
    if max_distance_m is not None and not 0 < max_distance_m <= 200_000:
        raise ToolFailed("the join distance must be over 0 and at most 200 km", kind="invalid_input")
    columns = [c for c in join.columns if c != join.geometry.name] if fields is None else list(fields)
    for column in columns:
        _require_field(join, column, "the layer to join")
    if aggregate in ("sum", "mean", "min", "max"):
        bad = [c for c in columns if not _numeric(join[c])]
        if bad:
            raise ToolFailed(
                f"{aggregate} needs numbers; {', '.join(bad)} {'is' if len(bad) == 1 else 'are'} not numeric",
                kind="invalid_input",
                hint="join those fields with aggregate first or list, or coerce them to numbers first",
            )
    out = target.copy()
    taken = {str(c) for c in out.columns}
    names: dict[str, str] = {}
    for column in columns:
        names[column] = _free_name(prefix + column, taken) if prefix else _free_name(column, taken)
        taken.add(names[column])
    count_name = _free_name(COUNT_FIELD, taken)
    taken.add(count_name)
    notes: list[str] = []
    metric: CRS | None = None
    if target.empty or join.empty:
        for column in columns:
            out[names[column]] = pd.Series([None] * len(out), index=out.index, dtype=object)
        out[count_name] = 0
        return out, Changes(notes=[f"the {'layer to join' if join.empty else 'layer'} is empty: nothing joined"])
    if chosen == "nearest":
        metric = local_metric_crs(target, join)
        mine, theirs = target.to_crs(metric).geometry.to_numpy(), join.to_crs(metric).geometry.to_numpy()
        notes.append(
            "nearest by distance in a transverse Mercator centred on the data"
            + (f", within {max_distance_m:g} m" if max_distance_m is not None else ", no distance limit")
        )
    else:
        mine, theirs = target.geometry.to_numpy(), join.to_crs(target.crs).geometry.to_numpy()
    rows, hits, dist = _pairs(mine, theirs, chosen, max_distance_m, metric)
    counts = np.bincount(rows, minlength=len(target))
    how: dict[str, Aggregate] = {}
    for column in columns:
        if aggregate is not None:
            how[column] = aggregate
        elif chosen == "contains":
            summable = _numeric(join[column]) and not is_identifier(column, join[column].tolist())
            how[column] = "sum" if summable else "list"
        else:
            how[column] = "first"
    several = counts > 1
    distances: np.ndarray | None = None
    if chosen == "nearest":  # one nearest each: the closest, the join layer's first among equidistant ones
        first = np.unique(rows, return_index=True)[1]
        ties = int(several.sum())
        rows, hits = rows[first], hits[first]
        distances = np.full(len(target), np.nan)
        distances[rows] = np.round(dist[first], 1) if dist is not None else np.nan
        counts = np.bincount(rows, minlength=len(target))
        several = counts > 1
        if ties:
            notes.append(f"{ties} features have several nearest at the same distance: the join layer's first taken")
    elif several.any():
        multi = sorted({how[c] for c in columns}) or ["first"]
        what = " / ".join("the join layer's first" if h == "first" else h for h in multi)
        notes.append(f"{int(several.sum())} features relate to several features ({chosen}): {what} of their values")
    joined = join.reset_index(drop=True)
    first = np.unique(rows, return_index=True)[1]
    for column in columns:
        values = joined[column]
        result = pd.Series([None] * len(out), dtype=object)
        if how[column] == "first" or not several.any():
            result.iloc[rows[first]] = values.iloc[hits[first]].to_numpy()
        else:
            grouped = pd.Series(values.iloc[hits].to_numpy(), index=rows).groupby(level=0)
            picked = grouped.agg(lambda v, h=how[column]: _aggregated(v, h))
            result.iloc[picked.index.to_numpy()] = picked.to_numpy()
        if how[column] == "sum":
            result[counts == 0] = 0.0  # nothing in it: a sum of nothing
        out[names[column]] = _like(result, values, how[column]).set_axis(out.index)
    out[count_name] = counts
    if distances is not None:
        out[_free_name(DISTANCE_FIELD, taken)] = distances
    unmatched = int((counts == 0).sum())
    if unmatched:
        notes.append(f"{unmatched} features relate to no feature of the layer joined: their joined fields are empty")
    renamed = {c: n for c, n in names.items() if n != c}
    if renamed and not prefix:
        notes.append(
            "joined fields renamed, their names taken: " + ", ".join(f"{a} as {b}" for a, b in renamed.items())
        )
    return out, Changes(changed=int((counts > 0).sum()), notes=[f"joined by {chosen}", *notes])


def _like(result: pd.Series, values: pd.Series, how: Aggregate = "first") -> pd.Series:
    """The joined values typed as their source (numbers stay numbers, with gaps as NaN; whole numbers as Int64)."""
    if how == "list":
        return result.map(lambda v: None if v is None else str(v))
    if not result.isna().any() and how == "first" and not pd.api.types.is_numeric_dtype(values):
        return result.astype(values.dtype)
    if how in ("sum", "mean", "min", "max") or pd.api.types.is_float_dtype(values):
        return pd.to_numeric(result, errors="coerce").astype(float)
    if pd.api.types.is_integer_dtype(values):
        return pd.to_numeric(result, errors="coerce").astype("Int64")
    if pd.api.types.is_datetime64_any_dtype(values):
        return pd.to_datetime(result)
    return result


# -------------------------------------------------------------------------------------------------- snapping
def _metres_crs(gdf: gpd.GeoDataFrame) -> CRS:
    """The layer's own CRS when projected in metres, else its UTM zone."""
    crs = CRS.from_user_input(gdf.crs)
    if crs.is_projected and crs.axis_info and crs.axis_info[0].unit_name in ("metre", "meter"):
        return crs
    return utm_crs(gdf)


def _moved(before: np.ndarray, after: np.ndarray) -> int:
    """Vertices that moved (all of a geometry whose vertex count changed)."""
    moved = 0
    for a, b in zip(before, after, strict=True):
        if a is None or b is None:
            continue
        ca, cb = shapely.get_coordinates(a), shapely.get_coordinates(b)
        moved += len(cb) if len(ca) != len(cb) else int((np.abs(ca - cb) > 1e-9).any(axis=1).sum())
    return moved


def _valid(geoms: np.ndarray, before: np.ndarray) -> tuple[np.ndarray, int]:
    """Geometries made valid where snapping crossed their edges (valid ``before``), keeping their dimension; how
    many."""
    invalid = ~shapely.is_valid(geoms) & ~shapely.is_missing(geoms) & shapely.is_valid(before)
    fixed = geoms.copy()
    for i in np.flatnonzero(invalid):
        dims = shapely.get_dimensions(geoms[i])
        parts = [p for p in shapely.get_parts(shapely.make_valid(geoms[i])) if shapely.get_dimensions(p) == dims]
        fixed[i] = shapely.union_all(parts) if parts else None
    return fixed, int(invalid.sum())


def snap_to_grid(gdf: gpd.GeoDataFrame, grid_m: float) -> tuple[gpd.GeoDataFrame, Changes]:
    """Every vertex moved to the nearest node of a square grid of ``grid_m`` metres (lines at whole multiples of it)
    in the layer's CRS when it is projected in metres, else in its UTM zone; returned in the input's CRS. A feature
    smaller than the grid collapses: it is removed and counted; repeated vertices merge."""
    if not 0 < grid_m <= 100_000:
        raise ToolFailed("the grid size must be over 0 and at most 100 km", kind="invalid_input")
    _need_crs(gdf)
    if gdf.empty:
        return gdf, Changes()
    crs = _metres_crs(gdf)
    projected = gdf.to_crs(crs).geometry.to_numpy()
    snapped = shapely.set_precision(projected, grid_m)
    collapsed = (shapely.is_empty(snapped) | shapely.is_missing(snapped)) & ~shapely.is_missing(projected)
    moved = _moved(projected, snapped)
    back = gpd.GeoSeries(snapped, index=gdf.index, crs=crs)
    out = gdf.set_geometry(back.to_crs(gdf.crs) if not CRS.from_user_input(gdf.crs).equals(crs) else back)
    out = out[~collapsed].copy()
    notes = [f"{moved} vertices snapped to a {grid_m:g} m grid in {crs_label(crs)}"]
    if not CRS.from_user_input(gdf.crs).equals(crs):
        notes.append(f"returned in {crs_label(CRS.from_user_input(gdf.crs))}: on the grid in {crs_label(crs)} only")
    if collapsed.any():
        notes.append(f"{int(collapsed.sum())} features smaller than the grid collapsed and were removed")
    return out, Changes(changed=moved, removed=int(collapsed.sum()), crs=crs_label(crs), notes=notes)


def _to_edges(geom: shapely.Geometry, reference: shapely.Geometry, tolerance: float) -> shapely.Geometry:
    """Each vertex within ``tolerance`` of the reference moved onto it: to a reference vertex within the tolerance
    when there is one, else to the closest point of its edges."""
    vertices = shapely.multipoints(shapely.get_coordinates(reference))
    parts = shapely.get_parts(reference)
    edges = shapely.union_all([shapely.boundary(p) if shapely.get_dimensions(p) == 2 else p for p in parts])

    def move(xy: np.ndarray) -> np.ndarray:
        points = shapely.points(xy)
        out = xy.copy()
        for target in (edges, vertices):  # vertices last: they win where both are near
            near = shapely.distance(points, target) <= tolerance
            if near.any():
                ends = shapely.get_coordinates(shapely.shortest_line(points[near], target)).reshape(-1, 2, 2)
                out[near] = ends[:, 1]
        return out

    return shapely.transform(geom, move)


def snap_to_layer(
    gdf: gpd.GeoDataFrame, reference: gpd.GeoDataFrame, tolerance_m: float, to: SnapTarget = "edges"
) -> tuple[gpd.GeoDataFrame, Changes]:
    """The features with their vertices within ``tolerance_m`` metres of the reference layer moved onto it (QGIS's
    default "prefer aligning nodes"): ``edges``, onto a reference vertex when one is within the tolerance, else onto
    the closest point of its edges (a polygon's outline); ``vertices``, onto reference vertices only (shapely's snap:
    the input's edges also take reference vertices near them). Measured in a transverse Mercator centred on both
    layers; returned in the input's CRS (features nothing moved keep their coordinates exactly). Geometries a snap
    made invalid are repaired (their dimension kept) and counted."""
    if not 0 < tolerance_m <= 10_000:
        raise ToolFailed("the snapping tolerance must be over 0 and at most 10 km", kind="invalid_input")
    _need_crs(gdf, reference)
    if gdf.empty:
        return gdf, Changes()
    if reference.empty:
        raise ToolFailed("the layer to snap to is empty", kind="empty", hint="snap to a layer with features")
    metric = local_metric_crs(gdf, reference)
    mine = gdf.to_crs(metric).geometry.to_numpy()
    theirs = reference.to_crs(metric).geometry.to_numpy()
    theirs = theirs[~shapely.is_missing(theirs) & ~shapely.is_empty(theirs)]
    tree = shapely.STRtree(theirs)
    snapped = mine.copy()
    for i, geom in enumerate(mine):
        if geom is None or geom.is_empty:
            continue
        near = tree.query(geom, predicate="dwithin", distance=tolerance_m)
        if not len(near):
            continue
        target = shapely.union_all(theirs[near])
        snapped[i] = (
            shapely.snap(geom, target, tolerance_m) if to == "vertices" else _to_edges(geom, target, tolerance_m)
        )
    moved = _moved(mine, snapped)
    snapped, repaired = _valid(snapped, mine)
    touched = np.array([a is not b for a, b in zip(mine, snapped, strict=True)], dtype=bool)
    geoms = gdf.geometry.to_numpy().copy()
    if touched.any():
        geoms[touched] = gpd.GeoSeries(snapped[touched], crs=metric).to_crs(gdf.crs).to_numpy()
    out = gdf.set_geometry(gpd.GeoSeries(geoms, index=gdf.index, crs=gdf.crs))
    notes = [f"{moved} vertices snapped to the other layer's {to} within {tolerance_m:g} m"]
    if repaired:
        notes.append(f"{repaired} geometries the snap made invalid were repaired")
    return out, Changes(changed=moved, notes=notes)
