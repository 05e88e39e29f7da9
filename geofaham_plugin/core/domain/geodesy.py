"""Geodesy on the WGS84 ellipsoid: areas and lengths of lon/lat geometries, box areas.

Planar measures in degrees or in Web Mercator are wrong by large, latitude-dependent factors, so every
metric area or length GeoFaham reports of a lon/lat geometry is computed here."""

from __future__ import annotations

import shapely
from pyproj import Geod
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


def geodesic_length_m(geom_4326: BaseGeometry | None) -> float:
    """Geodesic length of the linear parts of a lon/lat geometry, in metres."""
    return float(sum(GEOD.geometry_length(p) for p in _parts(geom_4326, 1)))


def bbox_area_km2(bbox: tuple[float, float, float, float], densify_deg: float = 0.05) -> float:
    """Geodesic area of a lon/lat box in km² (edges densified: a parallel is not a geodesic)."""
    poly = shapely.segmentize(box(*bbox), densify_deg)
    return geodesic_area_m2(poly) / 1e6
