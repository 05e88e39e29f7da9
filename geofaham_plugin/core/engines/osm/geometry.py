"""Geometries of OpenStreetMap features: Overpass JSON elements to shapely (ways as lines or areas by
the usual tag convention, multipolygon relations from their member rings), the common result schema,
and how much of an area a bounding box covers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import geopandas as gpd
import pandas as pd
import shapely

from ...domain.geodesy import geodesic_area_m2
from ...domain.geometry import geometry_family
from .query import FeatureQuery


def coverage(region: shapely.Geometry, bbox: tuple[float, float, float, float]) -> float:
    """Fraction (0..1) of the region's geodesic area inside ``bbox`` (both lon/lat)."""
    box = shapely.box(*bbox)
    if not box.intersects(region):
        return 0.0
    if box.covers(region):
        return 1.0
    total = geodesic_area_m2(region)
    inside = region.intersection(box)
    return min(1.0, geodesic_area_m2(inside) / total) if total else 0.0


_NOT_AREA = {
    "natural": {"coastline", "tree_row", "ridge", "cliff", "arete"},
    "man_made": {"embankment", "pipeline", "cutline", "breakwater", "groyne", "dyke"},
    "aeroway": {"taxiway", "runway", "jet_bridge", "parking_position"},
    "power": {"line", "minor_line", "cable"},
    "leisure": {"track", "slipway"},
}
_AREA_KEYS = {
    "building",
    "building:part",
    "landuse",
    "amenity",
    "leisure",
    "natural",
    "man_made",
    "healthcare",
    "shop",
    "tourism",
    "office",
    "place",
    "historic",
    "military",
    "craft",
    "social_facility",
    "emergency",
    "telecom",
    "aeroway",
    "power",
    "public_transport",
    "area:highway",
}
_AREA_WATERWAYS = {"riverbank", "dock", "boatyard"}


def _is_area(tags: Mapping[str, str]) -> bool:
    """A closed way is an area unless its tags say line (the usual OSM convention, compactly)."""
    if tags.get("area") in ("yes", "no"):
        return tags["area"] == "yes"
    if tags.get("waterway") in _AREA_WATERWAYS:
        return True
    return any(k in tags and tags[k] not in _NOT_AREA.get(k, ()) for k in _AREA_KEYS)


def _coords(points: Sequence[dict | None] | None) -> list[tuple[float, float]]:
    return [(p["lon"], p["lat"]) for p in points or () if p]


def _way_geometry(el: dict) -> shapely.Geometry | None:
    coords = _coords(el.get("geometry"))
    if len(coords) < 2:
        return None
    if len(coords) >= 4 and coords[0] == coords[-1] and _is_area(el.get("tags", {})):
        return shapely.make_valid(shapely.Polygon(coords))
    return shapely.LineString(coords)


def _rings(lines: list[shapely.LineString]) -> shapely.Geometry | None:
    faces = shapely.get_parts(shapely.polygonize(lines)) if lines else []
    return shapely.union_all(faces) if len(faces) else None


def _relation_geometry(el: dict) -> shapely.Geometry | None:
    """Multipolygon and boundary relations become (multi)polygons from their outer/inner member ways;
    when the rings do not close (incomplete data) or for other relations, the member ways as lines."""
    outer: list[shapely.LineString] = []
    inner: list[shapely.LineString] = []
    for m in el.get("members", ()):
        coords = _coords(m.get("geometry")) if m.get("type") == "way" else []
        if len(coords) >= 2:
            (inner if m.get("role") == "inner" else outer).append(shapely.LineString(coords))
    if el.get("tags", {}).get("type") in ("multipolygon", "boundary"):
        polygons = _rings(outer)
        if polygons is not None and not polygons.is_empty:
            holes = _rings(inner)
            if holes is not None and not holes.is_empty:
                polygons = polygons.difference(holes)
            return shapely.make_valid(polygons)
    lines = outer + inner
    return shapely.MultiLineString(lines) if lines else None


def frame(rows: list[dict] | pd.DataFrame, geoms: list, query: FeatureQuery) -> gpd.GeoDataFrame:
    """The result schema: osm_id, osm_type, name, the query's tag columns, geometry (EPSG:4326)."""
    columns = ["osm_id", "osm_type", "name", *[c for c in query.columns if c != "name"]]
    df = pd.DataFrame(rows, columns=columns)
    df["osm_id"] = pd.to_numeric(df["osm_id"], errors="coerce").astype("Int64")
    gdf = gpd.GeoDataFrame(df, geometry=gpd.GeoSeries(geoms, crs=4326, index=df.index), crs=4326)
    gdf = gdf[gdf.geometry.notna() & ~gdf.geometry.is_empty]
    if query.geometry and len(gdf):
        gdf = gdf[[geometry_family(t) == query.geometry for t in gdf.geom_type]]
    return gdf.reset_index(drop=True)


def elements_to_gdf(elements: list[dict], query: FeatureQuery) -> gpd.GeoDataFrame:
    """Overpass JSON elements (``out geom``) to the result schema."""
    rows, geoms = [], []
    for el in elements:
        kind, tags = el.get("type"), el.get("tags", {})
        if kind == "node" and "lat" in el:
            geom = shapely.Point(el["lon"], el["lat"])
        elif kind == "node" and "center" in el:
            geom = shapely.Point(el["center"]["lon"], el["center"]["lat"])
        elif kind == "way":
            geom = _way_geometry(el)
        elif kind == "relation":
            geom = _relation_geometry(el)
        else:
            continue
        if geom is None:
            continue
        rows.append(
            {
                "osm_id": el.get("id"),
                "osm_type": kind,
                "name": tags.get("name"),
                **{k: tags.get(k) for k in query.columns if k != "name"},
            }
        )
        geoms.append(geom)
    return frame(rows, geoms, query)
