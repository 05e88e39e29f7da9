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
    """``point``, ``line`` or ``polygon`` for a geometry type name (OGC names, any case, with or without
    ``Multi`` or a ``Z``/``25D`` suffix: ``MultiPolygon Z`` is a polygon); None for others and mixed."""
    g = (geom_type or "").lower()
    for family in ("point", "line", "polygon"):
        if family in g:
            return family
    if "ring" in g:
        return "line"
    return None
