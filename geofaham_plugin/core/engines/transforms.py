"""The transforms that make field data usable: pure functions on GeoDataFrames, each returning its result and
what it changed, so they chain (repair -> reproject -> dissolve by class -> area in km² -> write).

Metric work happens in a CRS chosen for the data, never in degrees or Web Mercator: a Lambert azimuthal
equal-area (LAEA) projection centred on the data for areas, thinness and centroids (one per feature when the
layer spans more than 10°), the layer's UTM zone for grids, geodesic distances on the WGS84 ellipsoid for
nearest neighbours. Results come back in the input's CRS unless the operation is a reprojection or a grid.
"""

from __future__ import annotations

import re
from typing import Literal

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pydantic import BaseModel, ConfigDict, Field
from pyproj import CRS
from pyproj.exceptions import CRSError, ProjError
from shapely.geometry import box

from ..domain.geodesy import GEOD, geodesic_area_m2, geodesic_length_m
from ..domain.geometry import geometry_family
from ..domain.identifiers import is_identifier, no_data_mask
from ..errors import ToolFailed
from .layers import repair_geometries
from .textvalues import Decimal, blank_mask, fold, is_placeholder, parse_dates, parse_numbers
from .vector_ops import WGS84, _keys, _lonlat, _require_field, hits_per_zone, local_metric_crs, utm_crs

CRS_HINT = (
    "give an EPSG code (EPSG:4326, 32611, 3857) or one of: equal-area, utm, local, polar-north (EPSG:3413), "
    "polar-south (EPSG:3031)"
)
_POLAR = {"polar-north": 3413, "arctic": 3413, "north-polar": 3413, "polar-south": 3031, "antarctic": 3031}
WIDE_DEG = 10.0  # a layer wider than this gets a metric CRS per feature
# the defaults the tools apply when the instruction says no number (they must do something: exact geometries and
# every attribute, identifiers included, found no duplicate in field data; 0 m² and 0 found no sliver)
DEDUPE_TOLERANCE_M = 0.5  # the same place: coordinates rounded or re-projected differently, a GPS fix taken twice
SLIVER_MIN_AREA_M2 = 1.0  # parts under a square metre
SLIVER_MIN_COMPACTNESS = 0.05  # thinner than a 1:60 strip ...
SLIVER_THIN_BELOW_M2 = 10_000.0  # ... and under a hectare (a long road or river polygon is no sliver)


class Changes(BaseModel):
    """What a transform did, in numbers and words (the tool's summary and the answer's limitations)."""

    model_config = ConfigDict(extra="forbid")

    changed: int = 0  # features changed (repaired, reoriented, split ...)
    removed: int = 0  # features removed (duplicates, slivers, nulls)
    crs: str | None = None  # the CRS the work was done in, when not the input's
    notes: list[str] = Field(default_factory=list)


def _wgs84_bounds(gdf: gpd.GeoDataFrame) -> tuple[float, float, float, float]:
    if gdf.crs is None:
        raise ToolFailed("the layer has no CRS", kind="invalid_input", hint="set its CRS before transforming it")
    x0, y0, x1, y1 = gdf.to_crs(WGS84).total_bounds
    if not np.isfinite([x0, y0, x1, y1]).all():
        raise ToolFailed("no features to place", kind="empty")
    return float(x0), float(y0), float(x1), float(y1)


def laea_crs(lon: float, lat: float) -> CRS:
    return CRS.from_proj4(f"+proj=laea +lat_0={lat:.6f} +lon_0={lon:.6f} +x_0=0 +y_0=0 +datum=WGS84 +units=m +no_defs")


def equal_area_crs(gdf: gpd.GeoDataFrame) -> CRS:
    """LAEA centred on the data when it spans at most 60° either way; else EASE-Grid 2.0: North (EPSG:6931) or
    South (EPSG:6932) for polar data, Global (EPSG:6933, cylindrical, to ±86°) for the rest."""
    x0, y0, x1, y1 = _wgs84_bounds(gdf)
    if x1 - x0 <= 60 and y1 - y0 <= 60:
        return laea_crs((x0 + x1) / 2, (y0 + y1) / 2)
    if y0 >= 45:
        return CRS.from_epsg(6931)
    if y1 <= -45:
        return CRS.from_epsg(6932)
    return CRS.from_epsg(6933)


def resolve_crs(name: str, gdf: gpd.GeoDataFrame) -> CRS:
    """A CRS from what a user or a model writes: EPSG codes (``EPSG:3413``, ``3413``), any PROJ/WKT text, or a
    name: equal-area (see :func:`equal_area_crs`), utm (the data's zone), local (transverse Mercator centred on
    the data), polar-north / arctic (EPSG:3413), polar-south / antarctic (EPSG:3031), polar (by hemisphere)."""
    key = re.sub(r"[\s_]+", "-", name.strip().lower())
    if key in ("equal-area", "equalarea", "equal-area-crs"):
        return equal_area_crs(gdf)
    if key == "laea":
        x0, y0, x1, y1 = _wgs84_bounds(gdf)
        return laea_crs((x0 + x1) / 2, (y0 + y1) / 2)
    if key in _POLAR:
        return CRS.from_epsg(_POLAR[key])
    if key == "polar":
        _, y0, _, y1 = _wgs84_bounds(gdf)
        return CRS.from_epsg(3413 if y0 + y1 >= 0 else 3031)
    if key == "utm":
        return utm_crs(gdf)
    if key in ("local", "local-metric", "metric"):
        return local_metric_crs(gdf)
    text = f"EPSG:{key}" if re.fullmatch(r"\d{4,6}", key) else name.strip()
    try:
        return CRS.from_user_input(text)
    except CRSError:
        raise ToolFailed(f"unknown CRS '{name}'", kind="invalid_input", hint=CRS_HINT) from None


def crs_label(crs: CRS) -> str:
    epsg = crs.to_epsg(min_confidence=90)
    return f"EPSG:{epsg}" if epsg else crs.to_string()


def _densified(gdf: gpd.GeoDataFrame) -> gpd.GeoSeries:
    """Edges cut to 0.1° (geographic) or 1 km (projected) so that a straight edge bends where the target
    projection bends it."""
    crs = CRS.from_user_input(gdf.crs)
    step = 0.1 if crs.is_geographic else 1000.0 / (crs.axis_info[0].unit_conversion_factor if crs.axis_info else 1.0)
    return gdf.geometry.segmentize(step)


def reproject(gdf: gpd.GeoDataFrame, to_crs: str) -> tuple[gpd.GeoDataFrame, Changes]:
    """The layer in the CRS ``to_crs`` names (:func:`resolve_crs`), edges densified first; into a geographic CRS,
    geometries crossing the antimeridian are split there instead of wrapping around the globe."""
    target = resolve_crs(to_crs, gdf)
    if gdf.empty:
        return gdf.to_crs(target), Changes(crs=crs_label(target))
    cut = Changes()
    crossed = np.zeros(len(gdf), dtype=bool)
    if gdf.crs is not None and CRS.from_user_input(gdf.crs).is_geographic and not target.is_geographic:
        before = gdf.geometry.to_numpy()
        gdf, cut = split_antimeridian(gdf)  # an edge from 179° to -179° is 2° long, not 358° across the map
        crossed = ~shapely.equals_exact(before, gdf.geometry.to_numpy(), 0.0) & ~shapely.is_missing(before)
    try:
        out = gdf.set_geometry(_densified(gdf)).to_crs(target)
    except ProjError as exc:
        first = str(exc).split(": (")[-1].rstrip(")")
        raise ToolFailed(
            f"cannot reproject to {crs_label(target)}: {first}", kind="invalid_input", hint=CRS_HINT
        ) from None
    if crossed.any():  # the parts either side of ±180 meet again where the projection has no seam: one shape again
        out.loc[crossed, out.geometry.name] = [_seamed(g) for g in out.geometry[crossed]]
    changes = Changes(
        crs=crs_label(target), changed=cut.changed, notes=[*cut.notes, f"reprojected to {crs_label(target)}"]
    )
    if target.is_geographic:
        out, split = split_antimeridian(out)
        changes.changed = split.changed
        changes.notes += split.notes
    return out, changes


def _seamed(geom: shapely.Geometry, tolerance: float = 1e-6) -> shapely.Geometry:
    """The projected parts of a geometry cut at ±180 joined where they meet again (their shared edge projected to
    within ``tolerance`` of itself, a few nanometres apart, or overlapping); parts that do not meet stay apart."""
    parts = list(shapely.get_parts(geom))
    merged = parts[0]
    for part in parts[1:]:
        merged = shapely.union(merged, shapely.snap(part, merged, tolerance))
    if merged.geom_type == "MultiLineString":
        merged = shapely.line_merge(merged)
    return merged if merged.is_valid else shapely.make_valid(merged)


# ---------------------------------------------------------------------------------------- antimeridian
def _unwrap(coords: np.ndarray) -> np.ndarray:
    """Longitudes made continuous: each step is the short way round (|Δλ| ≤ 180)."""
    lon = coords[:, 0].copy()
    steps = (np.diff(lon) + 180.0) % 360.0 - 180.0
    lon[1:] = lon[0] + np.cumsum(steps)
    return np.column_stack([lon, coords[:, 1:]])


def _polygon(rings: list[np.ndarray]) -> shapely.Polygon:
    """A polygon from its exterior ring's coordinates and its holes', each ring of any length. (Handing
    ``shapely.polygons`` the holes as one list of coordinate arrays makes numpy stack them: holes of different
    sizes failed with "setting an array element with a sequence".)"""
    holes = [shapely.linearrings(ring) for ring in rings[1:]]
    return shapely.polygons(shapely.linearrings(rings[0]), holes=holes or None)


def continuous_lonlat(geom: shapely.Geometry) -> shapely.Geometry:
    """A lon/lat geometry with continuous longitudes: each ring or line the short way round (179° -> -179° is 2°,
    not 358°), and each part moved by 360° next to the first, so a shape across the antimeridian is one shape
    (longitudes may then pass ±180; project it, then normalise)."""
    if geom is None or geom.is_empty or geom.geom_type == "Point":
        return geom
    anchor: float | None = None

    def fix(coords: np.ndarray) -> np.ndarray:
        nonlocal anchor
        out = _unwrap(coords) if len(coords) > 1 else coords.copy()
        if anchor is None:
            anchor = float(out[:, 0].mean())
        else:
            out[:, 0] += 360.0 * np.round((anchor - float(out[:, 0].mean())) / 360.0)
        return out

    parts = []
    for part in shapely.get_parts(geom):
        if isinstance(part, shapely.Polygon):
            rings = [fix(shapely.get_coordinates(part.exterior))]
            rings += [fix(shapely.get_coordinates(hole)) for hole in part.interiors]
            if any(abs(r[0, 0] - r[-1, 0]) > 1e-9 for r in rings):
                return geom  # a ring around a pole: leave it
            parts.append(_polygon(rings))
        elif isinstance(part, shapely.LineString):
            parts.append(shapely.linestrings(fix(shapely.get_coordinates(part))))
        else:
            parts.append(shapely.points(fix(shapely.get_coordinates(part))[0]))
    if len(parts) == 1 and not geom.geom_type.startswith("Multi"):
        return parts[0]
    return shapely.geometrycollections(parts) if geom.geom_type == "GeometryCollection" else type(geom)(parts)


def _split_one(geom: shapely.Geometry) -> tuple[shapely.Geometry, bool]:
    """The geometry cut at ±180 into parts each within [-180, 180] (unchanged when it does not cross)."""
    family = geometry_family(geom.geom_type)
    if family not in ("line", "polygon"):
        return geom, False
    lines = []
    polygons = []
    for part in shapely.get_parts(geom):
        if family == "line":
            coords = _unwrap(shapely.get_coordinates(part))
            lines.append(shapely.linestrings(coords))
            continue
        rings = [_unwrap(shapely.get_coordinates(part.exterior))]
        for hole in part.interiors:
            ring = _unwrap(shapely.get_coordinates(hole))
            ring[:, 0] += 360.0 * np.round((rings[0][0, 0] - ring[0, 0]) / 360.0)
            rings.append(ring)
        if any(abs(r[0, 0] - r[-1, 0]) > 1e-9 for r in rings):
            return geom, False  # a ring around a pole: there is no antimeridian edge to cut
        polygons.append(_polygon(rings))
    unwrapped = shapely.multilinestrings(lines) if family == "line" else shapely.multipolygons(polygons)
    x0, _, x1, _ = unwrapped.bounds
    if x0 >= -180.0 and x1 <= 180.0:
        return geom, False
    pieces = []
    for shift in (-360.0, 0.0, 360.0):
        if x1 <= -180.0 - shift or x0 >= 180.0 - shift:
            continue  # nothing of it in this window
        window = box(-180.0 - shift, -90.0, 180.0 - shift, 90.0)
        with np.errstate(invalid="ignore"):
            piece = shapely.intersection(unwrapped, window)
        if not piece.is_empty:
            pieces += [shapely.transform(p, lambda xy, s=shift: xy + [s, 0.0]) for p in shapely.get_parts(piece)]
    kept = [p for p in pieces if geometry_family(p.geom_type) == family]
    return (shapely.multilinestrings(kept) if family == "line" else shapely.multipolygons(kept)), True


def split_antimeridian(gdf: gpd.GeoDataFrame) -> tuple[gpd.GeoDataFrame, Changes]:
    """Lines and polygons in lon/lat that cross ±180 (an edge jumping more than 180° of longitude, or
    longitudes beyond ±180) cut into parts on either side, so that areas, lengths and maps stay right."""
    if gdf.crs is None or not CRS.from_user_input(gdf.crs).is_geographic:
        raise ToolFailed(
            "the antimeridian split works on longitudes and latitudes",
            kind="invalid_input",
            hint="reproject the layer to EPSG:4326 first",
        )
    results = [_split_one(g) if g is not None and not g.is_empty else (g, False) for g in gdf.geometry]
    split = sum(done for _, done in results)
    out = gdf.set_geometry(gpd.GeoSeries([g for g, _ in results], index=gdf.index, crs=gdf.crs))
    notes = [f"{split} features crossing the antimeridian split at ±180°"] if split else []
    return out, Changes(changed=split, notes=notes)


# ------------------------------------------------------------------------------------------- geometry
def repair(gdf: gpd.GeoDataFrame, keep_dimension: bool = True) -> tuple[gpd.GeoDataFrame, Changes]:
    """Invalid geometries made valid (``make_valid``); with ``keep_dimension`` a polygon that became a collection
    keeps only its polygonal parts (a line its lines). Nothing is dropped."""
    before = gdf.geometry.to_numpy()
    out, fixed = repair_geometries(gdf)
    if keep_dimension and fixed:
        geoms = out.geometry.to_numpy().copy()
        for i in np.flatnonzero(~shapely.equals_exact(before, geoms, 0.0)):
            dims = shapely.get_dimensions(before[i])
            parts = [p for p in shapely.get_parts(geoms[i]) if shapely.get_dimensions(p) == dims]
            if parts and len(parts) < len(shapely.get_parts(geoms[i])):
                geoms[i] = shapely.union_all(parts)
        out = out.set_geometry(gpd.GeoSeries(geoms, index=out.index, crs=out.crs))
    return out, Changes(changed=fixed, notes=[f"{fixed} invalid geometries repaired"] if fixed else [])


def orient(gdf: gpd.GeoDataFrame, exterior: Literal["ccw", "cw"] = "ccw") -> tuple[gpd.GeoDataFrame, Changes]:
    """Polygon rings oriented: exteriors counter-clockwise and holes clockwise (the GeoJSON / OGC rule), or the
    reverse (``cw``: the shapefile rule)."""
    geoms = gdf.geometry.to_numpy()
    oriented = shapely.orient_polygons(geoms, exterior_cw=exterior == "cw")
    changed = int((~shapely.equals_exact(geoms, oriented, 0.0) & ~shapely.is_missing(geoms)).sum())
    out = gdf.set_geometry(gpd.GeoSeries(oriented, index=gdf.index, crs=gdf.crs))
    return out, Changes(
        changed=changed, notes=[f"{changed} polygons re-oriented ({exterior} exteriors)"] if changed else []
    )


def _attribute_keys(gdf: gpd.GeoDataFrame, fields: list[str] | None) -> tuple[list[tuple], list[str]]:
    """The attribute key of each feature, and the identifiers left out of it (``fields`` None: every attribute but
    the identifiers, :mod:`..domain.identifiers`: two copies of a record that differ only in their feature_id are
    duplicates)."""
    ignored: list[str] = []
    if fields is None:
        attributes = [c for c in gdf.columns if c != gdf.geometry.name]
        ignored = [c for c in attributes if is_identifier(str(c), gdf[c].tolist())]
        columns = [c for c in attributes if c not in ignored]
    else:
        columns = fields
    for column in columns:
        _require_field(gdf, column)
    if not columns:
        return [()] * len(gdf), ignored
    frame = gdf[columns].astype(object).where(gdf[columns].notna(), None)
    return [tuple(row) for row in frame.itertuples(index=False, name=None)], ignored


def dedupe(
    gdf: gpd.GeoDataFrame, tolerance_m: float = 0.0, fields: list[str] | None = None
) -> tuple[gpd.GeoDataFrame, Changes]:
    """Duplicates removed (the first kept): same attributes (``fields``; None: all of them but the identifiers, []:
    none) and the same geometry: equal once normalised (ring start and direction aside), or with ``tolerance_m`` > 0
    within that Hausdorff distance of each other in metres."""
    if tolerance_m < 0:
        raise ToolFailed("the tolerance must be 0 or more metres", kind="invalid_input")
    if gdf.empty:
        return gdf, Changes()
    attrs, ignored = _attribute_keys(gdf, fields)
    geoms = gdf.geometry.to_numpy()
    drop = np.zeros(len(gdf), dtype=bool)
    if tolerance_m == 0:
        normal = shapely.to_wkb(shapely.normalize(geoms))
        seen: set[tuple] = set()
        for i, key in enumerate(zip(normal.tolist(), attrs, strict=True)):
            drop[i] = key in seen
            seen.add(key)
    else:
        metric = gdf.to_crs(local_metric_crs(gdf)).geometry.to_numpy()
        tree = shapely.STRtree(metric)
        for i in range(len(metric)):
            if drop[i] or metric[i] is None:
                continue
            for j in tree.query(metric[i], predicate="dwithin", distance=tolerance_m):
                if j > i and not drop[j] and attrs[j] == attrs[i]:
                    drop[j] = shapely.hausdorff_distance(metric[i], metric[j]) <= tolerance_m
    removed = int(drop.sum())
    how = f"geometries within {tolerance_m:g} m" if tolerance_m else "exact geometries"
    if ignored:
        how += f", identifiers {', '.join(map(str, ignored))} not compared"
    return gdf[~drop].copy(), Changes(removed=removed, notes=[f"{removed} duplicates removed ({how})"])


def _metric_frames(gdf: gpd.GeoDataFrame) -> list[tuple[np.ndarray, CRS]]:
    """(row positions, LAEA CRS centred on them): one for the layer, or one per feature when it is wide."""
    x0, y0, x1, y1 = _wgs84_bounds(gdf)
    if x1 - x0 <= WIDE_DEG and y1 - y0 <= WIDE_DEG:
        return [(np.arange(len(gdf)), laea_crs((x0 + x1) / 2, (y0 + y1) / 2))]
    lonlat = gdf.geometry.to_crs(WGS84)
    centres = gpd.GeoSeries([continuous_lonlat(g) for g in lonlat], crs=WGS84).envelope.centroid
    return [(np.array([i]), laea_crs(c.x, c.y)) for i, c in enumerate(centres)]


def remove_slivers(
    gdf: gpd.GeoDataFrame, min_area_m2: float = 0.0, min_compactness: float = 0.0, thin_below_m2: float | None = None
) -> tuple[gpd.GeoDataFrame, Changes]:
    """Polygon parts smaller than ``min_area_m2`` or thinner than ``min_compactness`` (Polsby-Popper 4πA/P²: 1
    for a disc, 0.785 for a square, near 0 for a sliver) removed, measured in an equal-area projection centred on
    the data; features left with no part are removed. Points and lines are kept. With ``thin_below_m2``, only parts
    smaller than that are judged by their thinness (a thin part of a hectare is a road or a river, not a sliver)."""
    if min_area_m2 < 0 or not 0 <= min_compactness < 1 or (thin_below_m2 is not None and thin_below_m2 < 0):
        raise ToolFailed(
            "min_area_m2 and thin_below_m2 must be ≥ 0 and min_compactness in [0, 1)", kind="invalid_input"
        )
    if gdf.empty:
        return gdf, Changes()
    geoms = gdf.geometry.to_numpy().copy()
    parts_removed = 0
    for rows, crs in _metric_frames(gdf):
        metric = _densified(gdf.iloc[rows]).to_crs(crs).to_numpy()
        for row, projected in zip(rows, metric, strict=True):
            if projected is None or geometry_family(projected.geom_type) != "polygon":
                continue
            parts = shapely.get_parts(projected)
            area, perimeter = shapely.area(parts), shapely.length(parts)
            compact = np.where(perimeter > 0, 4 * np.pi * area / np.maximum(perimeter, 1e-12) ** 2, 0.0)
            thin = compact < min_compactness
            if thin_below_m2 is not None:
                thin &= area < thin_below_m2
            keep = (area >= min_area_m2) & ~thin
            if keep.all():
                continue
            parts_removed += int((~keep).sum())
            original = shapely.get_parts(geoms[row])
            geoms[row] = shapely.multipolygons(original[keep]) if keep.any() else None
    emptied = np.array([g is None for g in geoms])
    out = gdf.set_geometry(gpd.GeoSeries(geoms, index=gdf.index, crs=gdf.crs))[~emptied].copy()
    rule = f"under {min_area_m2:g} m²" + (
        f" or thinner than a compactness of {min_compactness:g}"
        + (f" and under {thin_below_m2:g} m²" if thin_below_m2 is not None else "")
        if min_compactness
        else ""
    )
    notes = [f"{parts_removed} sliver parts removed ({rule}; {int(emptied.sum())} features left empty and removed)"]
    return out, Changes(changed=parts_removed, removed=int(emptied.sum()), notes=notes)


def centroids(
    gdf: gpd.GeoDataFrame, method: Literal["centroid", "point_on_surface"] = "centroid"
) -> tuple[gpd.GeoDataFrame, Changes]:
    """One point per feature, computed in an equal-area projection centred on the data (not in degrees) and
    returned in the input CRS: the centroid, or a point surely on the feature (``point_on_surface``: for a
    C-shaped area whose centroid falls outside it)."""
    if gdf.empty:
        return gdf, Changes()
    points = np.empty(len(gdf), dtype=object)
    geographic = gdf.crs is not None and CRS.from_user_input(gdf.crs).is_geographic
    if geographic:  # across the antimeridian: one continuous shape, not a band round the globe
        gdf = gdf.set_geometry([continuous_lonlat(g) for g in gdf.geometry], crs=gdf.crs)
    for rows, crs in _metric_frames(gdf):
        metric = _densified(gdf.iloc[rows]).to_crs(crs)
        made = metric.centroid if method == "centroid" else metric.representative_point()
        points[rows] = made.to_crs(gdf.crs).to_numpy()
    if geographic:
        points = shapely.transform(points, lambda xy: np.column_stack([(xy[:, 0] + 180.0) % 360.0 - 180.0, xy[:, 1]]))
    out = gdf.set_geometry(gpd.GeoSeries(points, index=gdf.index, crs=gdf.crs))
    return out, Changes(notes=[f"{method.replace('_', ' ')}s computed in a Lambert equal-area projection"])


def convex_hulls(gdf: gpd.GeoDataFrame, by: str | None = None) -> tuple[gpd.GeoDataFrame, Changes]:
    """The convex hull of the features, all together or per value of ``by``, with the number of features in each;
    computed in an equal-area projection centred on the data, returned in the input CRS."""
    if gdf.empty:
        raise ToolFailed("nothing to wrap: the input is empty", kind="empty")
    if by is not None:
        _require_field(gdf, by)
    crs = equal_area_crs(gdf)
    metric = gdf.set_geometry(_densified(gdf)).to_crs(crs)
    keys = _keys(gdf, by)
    groups = sorted(keys.unique(), key=str)
    hulls = [shapely.convex_hull(shapely.union_all(metric.geometry[keys == g].to_numpy())) for g in groups]
    counts = [int((keys == g).sum()) for g in groups]
    out = gpd.GeoDataFrame({by or "group": groups, "count": counts}, geometry=hulls, crs=crs)
    return out.to_crs(gdf.crs), Changes(crs=crs_label(crs))


def symmetric_difference(a: gpd.GeoDataFrame, b: gpd.GeoDataFrame) -> tuple[gpd.GeoDataFrame, Changes]:
    """The parts of ``a`` not in ``b`` and of ``b`` not in ``a`` (attributes of both kept), in ``a``'s CRS."""
    if a.crs is None or b.crs is None:
        raise ToolFailed("a layer has no CRS", kind="invalid_input", hint="set its CRS first")
    other = b.to_crs(a.crs)
    if a.empty or other.empty:
        out = pd.concat([a, other], ignore_index=True)
        return gpd.GeoDataFrame(out, geometry=a.geometry.name, crs=a.crs), Changes()
    out = gpd.overlay(a, other, how="symmetric_difference", keep_geom_type=True)
    return out, Changes()


# ------------------------------------------------------------------------------------------ attributes
FieldKind = Literal["integer", "real", "text", "boolean", "date"]
_TRUE = {"true", "t", "yes", "y", "1", "1.0", "si", "s", "sim", "oui", "vrai", "ja", "verdadero", "x"}
_FALSE = {"false", "f", "no", "n", "0", "0.0", "nao", "non", "faux", "nein", "falso"}


def _coerce(series: pd.Series, kind: FieldKind, decimal: Decimal = "auto") -> tuple[pd.Series, list[str], int]:
    """The column converted, the notes on how it was read, and how many values were placeholders (N/A, -, s/d ...:
    no value, not a value that failed)."""
    if kind == "text":
        text = series.map(lambda v: None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v))
        return text, [], 0
    if kind in ("integer", "real"):
        numbers, notes, placeholders = parse_numbers(series, decimal)
        if kind == "real":
            return numbers.astype(float), notes, placeholders
        whole = numbers.where(numbers == numbers.round())
        return whole.astype("Int64"), notes, placeholders
    if kind == "boolean":
        words = series.map(fold)
        out = pd.Series(pd.NA, index=series.index, dtype="boolean")
        out[words.isin(_TRUE) & series.notna()] = True
        out[words.isin(_FALSE) & series.notna()] = False
        return out, [], int(sum(isinstance(v, str) and is_placeholder(v) for v in series))
    text = series.where(series.notna(), None).astype(object)
    parsed = pd.to_datetime(text, errors="coerce", format="ISO8601")
    missing = parsed.isna() & series.notna()
    if not missing.any():
        return parsed, [], 0
    # day first or not as the column says, month names in four languages (engines/textvalues.py)
    written, said, blank = parse_dates(series[missing])
    if getattr(parsed.dt, "tz", None) is not None:
        written = written.dt.tz_localize("UTC")
    parsed[missing] = written
    return parsed, said, blank


def coerce_types(
    gdf: gpd.GeoDataFrame, types: dict[str, FieldKind], decimal: Decimal = "auto"
) -> tuple[gpd.GeoDataFrame, Changes]:
    """Fields converted to integer, real, text, boolean (true/false, yes/no, sí/no, 1/0 ...) or date (ISO; else
    numbers day first unless the column says otherwise, month names in English, Spanish, French, Portuguese); numbers
    as people write them, "1.234,56", "12.345 €", "1,200", "45 %" (``decimal``: the decimal mark, "auto": the one the
    column's unambiguous values show, see :func:`.textvalues.parse_numbers`). Placeholders (N/A, -, s/d) become null
    and are said; a value that does not convert becomes null and is counted per field."""
    out = gdf.copy()
    notes = []
    failed = 0
    for field, kind in types.items():
        _require_field(gdf, field)
        converted, read, placeholders = _coerce(gdf[field], kind, decimal)
        lost = int((converted.isna() & gdf[field].notna()).sum()) - placeholders
        out[field] = converted
        failed += lost
        notes += [f"{field}: {n}" for n in read]
        if placeholders:
            notes.append(f"{placeholders} values of {field} say no value (N/A, -, empty ...): set to null")
        if lost:
            bad = [str(v) for v in gdf[field][converted.isna() & gdf[field].notna()] if not is_placeholder(v)][:3]
            notes.append(
                f"{lost} values of {field} are not {kind} (e.g. {', '.join(repr(v) for v in bad)}): set to null"
            )
    return out, Changes(changed=failed, notes=notes)


def drop_nulls(
    gdf: gpd.GeoDataFrame, fields: list[str] | None = None, geometry: bool = True, blanks: bool = True
) -> tuple[gpd.GeoDataFrame, Changes]:
    """Features without a value in ``fields`` (None: in any field; []: none checked) removed, and, with
    ``geometry``, features without a geometry (missing or empty). With ``blanks`` text that says no value counts as
    none: empty or only spaces, and placeholders such as N/A, null, "-", s/d (:data:`.textvalues.PLACEHOLDERS`)."""
    columns = [c for c in gdf.columns if c != gdf.geometry.name] if fields is None else fields
    for column in columns:
        _require_field(gdf, column)
    drop = gdf[columns].isna().any(axis=1).to_numpy() if columns else np.zeros(len(gdf), dtype=bool)
    notes = []
    if blanks and columns:
        blank = np.column_stack([blank_mask(gdf[c]) for c in columns]).any(axis=1)
        if said := int((blank & ~drop).sum()):
            notes.append(f"{said} features with empty text or a placeholder (N/A, -, null) in {', '.join(columns)}")
        drop |= blank
    if geometry:
        geoms = gdf.geometry.to_numpy()
        drop |= shapely.is_missing(geoms) | shapely.is_empty(geoms)
    removed = int(drop.sum())
    notes = ([f"{removed} features with nulls removed"] if removed else []) + [f"among them {n}" for n in notes]
    return gdf[~drop].copy(), Changes(removed=removed, notes=notes)


def split_by_geometry_type(gdf: gpd.GeoDataFrame) -> dict[str, gpd.GeoDataFrame]:
    """The layer as one layer per geometry family (point, line, polygon; ``other`` for collections), each in
    the input's order; features without a geometry are left out."""
    geoms = gdf.geometry
    families = geoms.geom_type.map(lambda t: geometry_family(t) or "other" if isinstance(t, str) else None)
    return {str(f): gdf[families == f].copy() for f in ("point", "line", "polygon", "other") if (families == f).any()}


# ------------------------------------------------------------------------------------ attributes
Comparison = Literal["=", "!=", ">", ">=", "<", "<="]


def filter_where(
    gdf: gpd.GeoDataFrame, field: str, op: Comparison, value: str | float
) -> tuple[gpd.GeoDataFrame, Changes]:
    """The features whose ``field`` compares to ``value``: numerically when the field holds numbers (text digits
    included), else as text ignoring case and accents' absence (= and != only). Features with no value in the field
    are dropped and counted."""
    _require_field(gdf, field)
    column = gdf[field]
    numbers = pd.to_numeric(column, errors="coerce")
    numeric = numbers.notna().sum() > 0 and numbers.notna().sum() == column.notna().sum()
    if op in (">", ">=", "<", "<=") and not numeric:
        odd = column[numbers.isna() & column.notna()].astype(str).head(2).tolist()
        raise ToolFailed(
            f"field '{field}' does not hold numbers only (e.g. {', '.join(repr(v) for v in odd)})",
            kind="invalid_input",
            hint="compare a numeric field, or coerce its type first (a value like '1,200' is not read as a number)",
        )
    if numeric and not isinstance(value, (int, float)):
        try:
            value = float(str(value).replace(",", ""))
        except ValueError:
            numeric = False
    coded = no_data_mask(numbers) if numeric else numbers.isna() & False
    if numeric:
        target = float(value)
        numbers = numbers.mask(coded)  # "-999" is unknown: neither under nor over anything
        keep = {
            "=": numbers == target,
            "!=": numbers != target,
            ">": numbers > target,
            ">=": numbers >= target,
            "<": numbers < target,
            "<=": numbers <= target,
        }[op]
    else:
        text = column.astype("string").str.strip().str.casefold()
        keep = text == str(value).strip().casefold()
        keep = ~keep if op == "!=" else keep
    keep = keep.fillna(False).to_numpy(bool)
    missing = int(column.isna().sum()) + int(coded.sum())
    notes = [f"{missing} features without a value in {field} left out"] if missing else []
    if coded.any():
        notes.append(f"{int(coded.sum())} of them hold {field} = -999-like codes, read as unknown")
    return gdf[keep].copy(), Changes(removed=int((~keep).sum()), notes=notes)


def rename_fields(gdf: gpd.GeoDataFrame, mapping: dict[str, str]) -> tuple[gpd.GeoDataFrame, Changes]:
    """Fields renamed (old -> new); a name already taken or a field missing is refused."""
    for old, new in mapping.items():
        _require_field(gdf, old)
        if new in gdf.columns and new != old:
            raise ToolFailed(f"field '{new}' exists already", kind="invalid_input", hint="choose another name")
    return gdf.rename(columns=mapping), Changes(notes=[f"{old} renamed {new}" for old, new in mapping.items()])


def add_measure(gdf: gpd.GeoDataFrame, quantity: Literal["area", "length"]) -> tuple[gpd.GeoDataFrame, Changes]:
    """Each feature with its geodesic area (column ``area_km2``, and ``area_ha``) or length (``length_km``) on the
    WGS84 ellipsoid, whatever the layer's CRS; invalid polygons made valid first (the layer keeps its geometry)."""
    lonlat = _lonlat(gdf).to_numpy() if len(gdf) else np.array([], dtype=object)
    out = gdf.copy()
    if quantity == "area":
        km2 = np.array([geodesic_area_m2(shapely.make_valid(g)) if g is not None else np.nan for g in lonlat]) / 1e6
        if len(gdf) and not (shapely.get_dimensions(lonlat[~shapely.is_missing(lonlat)]) == 2).any():
            raise ToolFailed("points and lines have no area", kind="invalid_input", hint="measure a polygon layer")
        out["area_km2"], out["area_ha"] = km2, km2 * 100
    else:
        out["length_km"] = np.array([geodesic_length_m(g) if g is not None else np.nan for g in lonlat]) / 1e3
    return out, Changes(notes=[f"geodesic {quantity} of each feature on the WGS84 ellipsoid"])


# ------------------------------------------------------------------------------------- counts, nearest
def count_points_in_polygons(
    points: gpd.GeoDataFrame, polygons: gpd.GeoDataFrame, column: str = "points"
) -> tuple[gpd.GeoDataFrame, Changes]:
    """The polygons, each with the number of points (features) that intersect it in ``column`` (0 for none; a
    point on a shared edge counts in both)."""
    if polygons.empty:
        raise ToolFailed("the polygon layer is empty", kind="empty")
    out = polygons.copy()
    out[column] = hits_per_zone(points, polygons)
    return out, Changes()


def nearest_neighbours(
    features: gpd.GeoDataFrame,
    candidates: gpd.GeoDataFrame,
    k: int,
    method: Literal["geodesic", "projected"] = "geodesic",
    label: str | None = None,
    candidate_label: str | None = None,
) -> tuple[gpd.GeoDataFrame, Changes]:
    """For each feature, its ``k`` nearest candidates: one line per pair (from the feature to the candidate),
    with ``from``, ``to`` (labels, else row numbers from 1), ``rank`` and ``distance_m``. ``geodesic``: metres
    on the WGS84 ellipsoid (points to points exactly, across the antimeridian too; other geometries between
    their nearest points found in a local projection); ``projected``: metres in a local transverse Mercator."""
    if k < 1:
        raise ToolFailed("k must be at least 1", kind="invalid_input")
    if features.empty or candidates.empty:
        raise ToolFailed("nearest neighbours need features and candidates", kind="empty")
    if len(features) * len(candidates) > 25_000_000:
        raise ToolFailed(
            f"{len(features)} × {len(candidates)} pairs is too many", kind="invalid_input", hint="filter or clip first"
        )
    for frame, name in ((features, label), (candidates, candidate_label)):
        if name is not None:
            _require_field(frame, name)
    names_from = features[label].astype(str).tolist() if label else [str(i) for i in range(1, len(features) + 1)]
    names_to = (
        candidates[candidate_label].astype(str).tolist()
        if candidate_label
        else [str(i) for i in range(1, len(candidates) + 1)]
    )
    a, b = features.to_crs(WGS84).geometry.to_numpy(), candidates.to_crs(WGS84).geometry.to_numpy()
    points = (shapely.get_type_id(a) == 0).all() and (shapely.get_type_id(b) == 0).all()
    rows = []
    if method == "geodesic" and points:
        ax, ay, bx, by = shapely.get_x(a), shapely.get_y(a), shapely.get_x(b), shapely.get_y(b)
        for i in range(len(a)):
            _, _, dist = GEOD.inv(np.full(len(b), ax[i]), np.full(len(b), ay[i]), bx, by)
            for rank, j in enumerate(np.argsort(dist, kind="stable")[:k], start=1):
                line = GEOD.npts(ax[i], ay[i], bx[j], by[j], 8)  # the geodesic, short way round
                coords = [(ax[i], ay[i]), *line, (bx[j], by[j])]
                rows.append((names_from[i], names_to[j], rank, float(dist[j]), shapely.linestrings(coords)))
        out = gpd.GeoDataFrame(
            pd.DataFrame([r[:4] for r in rows], columns=["from", "to", "rank", "distance_m"]),
            geometry=[r[4] for r in rows],
            crs=WGS84,
        )
        out, _ = split_antimeridian(out)
        return out.assign(distance_m=out["distance_m"].round(1)), Changes(notes=["geodesic distances (WGS84)"])
    metric = local_metric_crs(features, candidates)
    ma, mb = features.to_crs(metric).geometry.to_numpy(), candidates.to_crs(metric).geometry.to_numpy()
    for i in range(len(ma)):
        planar = shapely.distance(ma[i], mb)
        order = np.argsort(planar, kind="stable")[: max(k * 3, k + 5)]  # planar order, refined geodesically
        lines = shapely.shortest_line(ma[i], mb[order])
        if method == "geodesic":
            ends = shapely.get_coordinates(gpd.GeoSeries(lines, crs=metric).to_crs(WGS84).to_numpy()).reshape(-1, 2, 2)
            _, _, dist = GEOD.inv(ends[:, 0, 0], ends[:, 0, 1], ends[:, 1, 0], ends[:, 1, 1])
        else:
            dist = planar[order]
        for rank, pick in enumerate(np.argsort(dist, kind="stable")[:k], start=1):
            rows.append((names_from[i], names_to[order[pick]], rank, float(dist[pick]), lines[pick]))
    out = gpd.GeoDataFrame(
        pd.DataFrame([r[:4] for r in rows], columns=["from", "to", "rank", "distance_m"]),
        geometry=[r[4] for r in rows],
        crs=metric,
    ).to_crs(features.crs)
    how = "geodesic distances (WGS84)" if method == "geodesic" else "distances in a local transverse Mercator"
    return out.assign(distance_m=out["distance_m"].round(1)), Changes(notes=[how])


def area_weighted_grid(
    polygons: gpd.GeoDataFrame, cell_m: float, fields: list[str] | None = None
) -> tuple[gpd.GeoDataFrame, Changes]:
    """Polygons overlaid on a square grid of ``cell_m`` metres in their UTM zone (edges at multiples of
    ``cell_m``): each cell the polygons touch, named by its south-west corner, with the geodesic area they cover
    (``area_km2``) and each of ``fields`` (counts: people, buildings) apportioned by the share of each polygon's
    area in the cell. Returned in the UTM CRS, whose squares the cells are."""
    if cell_m <= 0:
        raise ToolFailed("the cell size must be positive", kind="invalid_input")
    if polygons.empty:
        raise ToolFailed("no polygons to grid", kind="empty")
    fields = fields or []
    for field in fields:
        _require_field(polygons, field)
    crs = utm_crs(polygons)
    projected = polygons.to_crs(crs)
    projected = projected[projected.geometry.geom_type.isin(["Polygon", "MultiPolygon"])]
    x0, y0, x1, y1 = projected.total_bounds
    ix = np.arange(np.floor(x0 / cell_m), np.ceil(x1 / cell_m))
    iy = np.arange(np.floor(y0 / cell_m), np.ceil(y1 / cell_m))
    if len(ix) * len(iy) > 250_000:
        raise ToolFailed(
            f"a {cell_m:g} m grid over this layer has {len(ix) * len(iy)} cells",
            kind="invalid_input",
            hint="use larger cells",
        )
    gx, gy = np.meshgrid(ix, iy)
    cells = gpd.GeoDataFrame(
        {"cell": [f"E{int(i * cell_m)} N{int(j * cell_m)}" for i, j in zip(gx.ravel(), gy.ravel(), strict=True)]},
        geometry=shapely.box(
            gx.ravel() * cell_m, gy.ravel() * cell_m, (gx.ravel() + 1) * cell_m, (gy.ravel() + 1) * cell_m
        ),
        crs=crs,
    )
    source = projected[fields].copy()
    source["_area"] = projected.geometry.area.to_numpy()
    source = gpd.GeoDataFrame(source, geometry=projected.geometry.to_numpy(), crs=crs)
    pieces = gpd.overlay(cells, source, how="intersection", keep_geom_type=True)
    share = pieces.geometry.area / pieces["_area"]
    table = pd.DataFrame({"cell": pieces["cell"]})
    for field in fields:
        table[field] = pd.to_numeric(pieces[field], errors="coerce") * share
    table["area_km2"] = [geodesic_area_m2(g) / 1e6 for g in _lonlat(pieces)]
    summed = table.groupby("cell", sort=False).sum(numeric_only=True)
    out = cells.set_index("cell").loc[summed.index].join(summed).reset_index()
    out["area_km2"] = out["area_km2"].round(6)
    return gpd.GeoDataFrame(out, geometry="geometry", crs=crs), Changes(crs=crs_label(crs))
