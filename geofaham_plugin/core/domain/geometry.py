"""Geometry kinds: the families an artifact's geometry type falls in, and the OGC type names of each."""

from __future__ import annotations

POINT_TYPES = frozenset({"Point", "MultiPoint"})
LINE_TYPES = frozenset({"LineString", "MultiLineString", "LinearRing"})
POLYGON_TYPES = frozenset({"Polygon", "MultiPolygon"})

#: Geometry families as InputSpec and the checks name them.
POLYGONAL = frozenset({"polygon"})
LINEAR = frozenset({"line"})
PUNCTUAL = frozenset({"point"})


def geometry_family(geom_type: str | None) -> str | None:
    """``point``, ``line`` or ``polygon`` for an OGC geometry type name; None for others/mixed."""
    if geom_type in POINT_TYPES:
        return "point"
    if geom_type in LINE_TYPES:
        return "line"
    if geom_type in POLYGON_TYPES:
        return "polygon"
    return None
