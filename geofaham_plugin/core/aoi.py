"""Areas of interest given by the user (a file, a selection, a digitised polygon) become AOI artifacts:
polygonal, valid (repaired, never silently dropped), with a CRS, dissolved into one multipart feature.

Checked on the way in: coordinates of a geographic CRS must be longitude/latitude (projected metres in a
GeoJSON without ``crs`` and swapped axes are refused with a hint); a polygon drawn across the antimeridian
(179.5 -> -179.5) is split into its two halves instead of becoming a band around the world; an area whose
axes look swapped (far from every disaster of the event table, while swapped it lies on one) is refused;
an area larger than ``settings.aoi.warn_km2`` (GEOFAHAM_AOI_WARN_KM2) is used with a warning. A polygon 180° of
longitude wide or wider, and one whose jump across 180° leaves it wider than :data:`MAX_CROSSING_DEG` the other
way round (185° one way, 175° the other: which way?), is refused with a line, never guessed; coordinates that are
not numbers (NaN) are refused too."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import shapely
import shapely.affinity
from shapely.geometry import MultiPolygon, box
from shapely.geometry.base import BaseGeometry

from .config import AoiSettings
from .domain.events import load_events
from .domain.geodesy import geodesic_area_m2
from .domain.geometry import POLYGON_TYPES
from .engines.formats import check_finite
from .engines.layers import check_lonlat, read_user_file, repair_geometries
from .errors import ToolFailed
from .store.models import ArtifactKind, ArtifactRecord
from .store.store import ResponseStore

#: an area within this many degrees of a disaster's box is near it (for the swapped-axes check)
NEAR_DEG = 1.0
#: a polygon drawn across the antimeridian is split only when, taken that way, it is narrower than this
MAX_CROSSING_DEG = 90.0
WIDE_HINT = "draw it as parts each less than 180° of longitude wide (split at 180° or at 0°), or in a projected CRS"


def _crosses_antimeridian(polygon: BaseGeometry) -> bool:
    """A ring that jumps more than 180° of longitude between two vertices was drawn across 180°."""
    rings = [polygon.exterior, *polygon.interiors] if polygon.geom_type == "Polygon" else []
    return any(np.any(np.abs(np.diff(np.asarray(r.coords)[:, 0])) > 180) for r in rings)


def _widths(polygon: BaseGeometry) -> tuple[float, float]:
    """(degrees of longitude the polygon spans as drawn, degrees it spans taken across the antimeridian)."""
    xs = np.concatenate([np.asarray(r.coords)[:, 0] for r in (polygon.exterior, *polygon.interiors)])
    shifted = np.where(xs < 0, xs + 360.0, xs)
    return float(xs.max() - xs.min()), float(shifted.max() - shifted.min())


def check_width(geom: BaseGeometry | None, name: str) -> None:
    """Refuse a longitude/latitude polygon GeoFaham cannot place on the Earth: 180° wide or more as drawn (its edges
    have no one way round), or drawn across 180° but wider than :data:`MAX_CROSSING_DEG` that way (ambiguous)."""
    for part in shapely.get_parts(geom) if geom is not None else []:
        if part.geom_type != "Polygon" or part.is_empty:
            continue
        plain, crossing = _widths(part)
        if _crosses_antimeridian(part) and crossing >= MAX_CROSSING_DEG:
            raise ToolFailed(
                f"{name}: the area spans {plain:.0f}° of longitude as drawn, or {crossing:.0f}° across 180°: "
                "GeoFaham cannot tell which way round the Earth it goes",
                kind="invalid_input",
                hint=WIDE_HINT,
            )
        if not _crosses_antimeridian(part) and plain >= 180:
            raise ToolFailed(
                f"{name}: the area spans {plain:.0f}° of longitude, half the Earth or more: its edges have no one way "
                "round the Earth",
                kind="invalid_input",
                hint=WIDE_HINT,
            )


def split_antimeridian(geom: BaseGeometry | None) -> tuple[BaseGeometry | None, bool]:
    """(the geometry with every polygon drawn across the antimeridian split into its west and east halves,
    whether one was); longitude/latitude only."""
    if geom is None or geom.is_empty:
        return geom, False
    parts: list[BaseGeometry] = []
    crossed = False
    for part in shapely.get_parts(geom):
        if part.geom_type != "Polygon" or not _crosses_antimeridian(part):
            parts.append(part)
            continue
        crossed = True
        shifted = shapely.transform(part, lambda xy: np.where(xy[:, :1] < 0, xy + [360.0, 0.0], xy))
        east = shapely.intersection(shifted, box(0, -90, 180, 90))
        west = shapely.affinity.translate(shapely.intersection(shifted, box(180, -90, 360, 90)), xoff=-360)
        parts += [p for half in (east, west) for p in shapely.get_parts(half) if p.geom_type == "Polygon"]
    if not crossed:
        return geom, False
    polygons = [p for p in parts if p.geom_type == "Polygon"]
    return (MultiPolygon(polygons) if len(polygons) == len(parts) else shapely.GeometryCollection(parts)), True


def _near(bounds: tuple[float, float, float, float], margin: float = NEAR_DEG) -> bool:
    x0, y0, x1, y1 = bounds
    area = box(x0 - margin, y0 - margin, x1 + margin, y1 + margin)
    return any(e.bbox_4326 and area.intersects(box(*e.bbox_4326)) for e in load_events())


def check_not_swapped(geom_4326: BaseGeometry, name: str) -> None:
    """Refuse an area far from every disaster of the event table that, with its axes swapped, lies on one."""
    x0, y0, x1, y1 = geom_4326.bounds
    if x0 >= -90 and x1 <= 90 and not _near((x0, y0, x1, y1)) and _near((y0, x0, y1, x1), margin=0.0):
        raise ToolFailed(
            f"{name}: latitude and longitude look swapped: the area lies far from every disaster GeoFaham knows, "
            "and on one with its axes swapped",
            kind="invalid_input",
            hint="write coordinates as longitude, latitude (x, y), as GeoJSON requires",
        )


def register_aoi(
    store: ResponseStore,
    gdf: gpd.GeoDataFrame,
    *,
    source: str = "user.aoi",
    name: str = "user AOI",
    notes: list[str] | None = None,
    warn_km2: float | None = None,
) -> ArtifactRecord:
    """``notes``: what reading the file noted (kept as limitations); ``warn_km2``: the size above which the
    area gets a warning (default: settings, GEOFAHAM_AOI_WARN_KM2). The warnings are in ``extra["warnings"]``."""
    if gdf.crs is None:
        raise ToolFailed("the area of interest has no CRS", kind="invalid_input", hint="set the layer's CRS first")
    gdf = gdf[gdf.geometry.notna() & ~gdf.geometry.is_empty]
    if gdf.empty:
        raise ToolFailed("the area of interest is empty", kind="empty", hint="select or draw at least one polygon")
    check_finite(gdf, name)
    check_lonlat(gdf, name)
    limitations = list(notes or [])
    warnings: list[str] = []
    if gdf.crs.is_geographic:
        for geom in gdf.geometry:
            check_width(geom, name)
        split = gdf.geometry.apply(split_antimeridian)
        if any(crossed for _, crossed in split):
            gdf = gdf.set_geometry(gpd.GeoSeries([g for g, _ in split], index=gdf.index, crs=gdf.crs))
            limitations.append("the area crosses the antimeridian (180°): split into its west and east parts")
    gdf, repaired = repair_geometries(gdf)
    polygons = gdf.geometry.apply(
        lambda g: shapely.union_all([p for p in shapely.get_parts(g) if p.geom_type in POLYGON_TYPES]) if g else None
    )
    polygons = polygons[polygons.notna() & ~polygons.is_empty]
    if polygons.empty:
        raise ToolFailed(
            "the area of interest must be a polygon",
            kind="invalid_input",
            hint="use polygon features (buffer points or lines first)",
        )
    merged = shapely.union_all(polygons.values)
    if merged.area == 0:
        raise ToolFailed("the area of interest has no area", kind="empty")
    geom_4326 = gpd.GeoSeries([merged], crs=gdf.crs).to_crs(4326).iloc[0]
    if gdf.crs.is_geographic:
        check_not_swapped(geom_4326, name)
    km2 = geodesic_area_m2(geom_4326) / 1e6
    limit = warn_km2 if warn_km2 is not None else AoiSettings.from_env().warn_km2
    if km2 > limit:
        warnings.append(
            f"the area of interest covers {km2:,.0f} km², more than {limit:,.0f} km² (GEOFAHAM_AOI_WARN_KM2): "
            "analyses may be slow or incomplete and online sources refuse areas this large; draw a smaller area"
        )
    if repaired:
        limitations.append(f"{repaired} invalid AOI geometries repaired")
    out = gpd.GeoDataFrame({"name": [name]}, geometry=[merged], crs=gdf.crs)
    return store.register_vector(
        out,
        source=source,
        kind=ArtifactKind.aoi,
        summary=f"area of interest: {name}" + (f" ({repaired} invalid geometries repaired)" if repaired else ""),
        extra={"repaired_geometries": repaired, "limitations": limitations + warnings, "warnings": warnings},
    )


def register_aoi_file(store: ResponseStore, path: str | Path, *, warn_km2: float | None = None) -> ArtifactRecord:
    """The AOI of a vector file (read as the user's layers are: one clear error for a file that cannot be
    read); a GeoJSON without ``crs`` is longitude/latitude."""
    path = Path(path)
    if not path.exists():
        raise ToolFailed(f"AOI file not found: {path}", kind="not_found", hint="check the path of --aoi")
    gdf, _layer, _crs, notes = read_user_file(path)
    if path.suffix.lower() in (".geojson", ".json"):  # longitude/latitude is what RFC 7946 says: no news
        notes = [n for n in notes if "names no CRS" not in n]
    return register_aoi(store, gdf, source=f"user.aoi:{path.name}", name=path.stem, notes=notes, warn_km2=warn_km2)
