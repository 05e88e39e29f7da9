"""Geodesy on the WGS84 ellipsoid: areas and lengths of lon/lat geometries, box areas.

Planar measures in degrees or in Web Mercator are wrong by large, latitude-dependent factors, so every
metric area or length GeoFaham reports of a lon/lat geometry is computed here."""

from __future__ import annotations

import numpy as np
import shapely
from pyproj import CRS, Geod, Transformer
from shapely.geometry import box
from shapely.geometry.base import BaseGeometry
from shapely.geometry.polygon import orient

GEOD = Geod(ellps="WGS84")


def _parts(geom: BaseGeometry | None, dims: int) -> list[BaseGeometry]:
    """Flatten to single parts of one dimension (2 polygons, 1 lines); invalid input is made valid
    first, because a self-intersecting ring has a meaningless signed area."""
    if geom is None or geom.is_empty:
        return []
    if dims == 2 and not geom.is_valid:
        geom = shapely.make_valid(geom)
    if hasattr(geom, "geoms"):  # Multi* and GeometryCollection
        return [p for g in geom.geoms for p in _parts(g, dims)]
    return [geom] if shapely.get_dimensions(geom) == dims else []


def geodesic_area_m2(geom_4326: BaseGeometry | None) -> float:
    """Geodesic area of the polygonal parts of a lon/lat geometry, in m². Rings are oriented first
    (exterior counter-clockwise, holes clockwise) because pyproj sums signed ring areas."""
    return float(sum(abs(GEOD.geometry_area_perimeter(orient(p, 1.0))[0]) for p in _parts(geom_4326, 2)))


#: polygons at most this wide (degrees) are measured in an equal-area projection (below)
SMALL_DEG = 0.01
#: ... when they lie within this many degrees (lon and lat) of the projection's centre
NEAR_DEG = 30.0


def polygon_areas_m2(geoms_4326: np.ndarray) -> np.ndarray:
    """The area (m²) of each lon/lat geometry's polygonal parts, as :func:`geodesic_area_m2`, vectorised for many
    small polygons (building footprints): polygons narrower than SMALL_DEG near the layer's centre are measured in
    a Lambert azimuthal equal-area projection of the WGS84 ellipsoid centred there. It preserves area exactly; its
    straight edges differ from geodesic ones by less than a micrometre over 1 km, so the two agree to about 1e-9.
    Every other geometry (wide, far, not a polygon, invalid) is measured geodesically, one by one."""
    geoms = np.asarray(geoms_4326, dtype=object)
    out = np.zeros(len(geoms))
    if not len(geoms):
        return out
    bounds = shapely.bounds(geoms)  # NaN for missing / empty: neither path, area 0
    small = (
        np.isin(shapely.get_type_id(geoms), (3, 6))
        & (bounds[:, 2] - bounds[:, 0] <= SMALL_DEG)
        & (bounds[:, 3] - bounds[:, 1] <= SMALL_DEG)
    )
    if small.any():
        lon0, lat0 = (float(np.median(bounds[small, i] + bounds[small, i + 2]) / 2) for i in (0, 1))
        small &= (np.abs(bounds[:, 1] - lat0) <= NEAR_DEG) & (
            np.abs((bounds[:, 0] - lon0 + 180) % 360 - 180) <= NEAR_DEG
        )
        small[small] &= shapely.is_valid(geoms[small])
    if small.any():
        laea = CRS.from_proj4(f"+proj=laea +lat_0={lat0} +lon_0={lon0} +ellps=WGS84 +units=m +no_defs")
        forward = Transformer.from_crs(CRS.from_epsg(4326), laea, always_xy=True)
        projected = shapely.transform(geoms[small], lambda xy: np.column_stack(forward.transform(xy[:, 0], xy[:, 1])))
        out[small] = shapely.area(projected)
    for i in np.flatnonzero(~small & ~np.isnan(bounds[:, 0])):
        out[i] = geodesic_area_m2(geoms[i])
    return out


def geodesic_length_m(geom_4326: BaseGeometry | None) -> float:
    """Geodesic length of the linear parts of a lon/lat geometry, in metres."""
    return float(sum(GEOD.geometry_length(p) for p in _parts(geom_4326, 1)))


def line_lengths_m(geoms_4326: np.ndarray) -> np.ndarray:
    """The geodesic length (m) of each lon/lat geometry's linear parts, as :func:`geodesic_length_m` (the sum of
    the geodesics between consecutive vertices), in one vectorised call for all of them. Polygons and points
    have length 0 here (measure a polygon's ``boundary`` for its perimeter)."""
    geoms = np.asarray(geoms_4326, dtype=object)
    out = np.zeros(len(geoms))
    parts, owner = shapely.get_parts(geoms, return_index=True)
    linear = np.isin(shapely.get_type_id(parts), (1, 2))  # LineString, LinearRing
    parts, owner = parts[linear], owner[linear]
    if not len(parts):
        return out
    xy, part = shapely.get_coordinates(parts, return_index=True)
    same = part[1:] == part[:-1]  # a segment joins two vertices of one part
    _, _, dist = GEOD.inv(xy[:-1, 0][same], xy[:-1, 1][same], xy[1:, 0][same], xy[1:, 1][same])
    per_part = np.bincount(part[1:][same], weights=dist, minlength=len(parts))
    return out + np.bincount(owner, weights=per_part, minlength=len(geoms))


def bbox_area_km2(bbox: tuple[float, float, float, float], densify_deg: float = 0.05) -> float:
    """Geodesic area of a lon/lat box in km² (edges densified: a parallel is not a geodesic)."""
    poly = shapely.segmentize(box(*bbox), densify_deg)
    return geodesic_area_m2(poly) / 1e6
