"""Areas of interest given by the user (a file, a selection, a digitised polygon) become AOI artifacts:
polygonal, valid (repaired, never silently dropped), with a CRS, dissolved into one multipart feature."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import shapely

from .domain.geometry import POLYGON_TYPES
from .engines.layers import repair_geometries
from .errors import ToolFailed
from .store.models import ArtifactKind, ArtifactRecord
from .store.store import ResponseStore


def register_aoi(
    store: ResponseStore, gdf: gpd.GeoDataFrame, *, source: str = "user.aoi", name: str = "user AOI"
) -> ArtifactRecord:
    if gdf.crs is None:
        raise ToolFailed("the area of interest has no CRS", kind="invalid_input", hint="set the layer's CRS first")
    gdf = gdf[gdf.geometry.notna() & ~gdf.geometry.is_empty]
    if gdf.empty:
        raise ToolFailed("the area of interest is empty", kind="empty", hint="select or draw at least one polygon")
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
    out = gpd.GeoDataFrame({"name": [name]}, geometry=[merged], crs=gdf.crs)
    return store.register_vector(
        out,
        source=source,
        kind=ArtifactKind.aoi,
        summary=f"area of interest: {name}" + (f" ({repaired} invalid geometries repaired)" if repaired else ""),
        extra={
            "repaired_geometries": repaired,
            "limitations": [f"{repaired} invalid AOI geometries repaired"] if repaired else [],
        },
    )


def register_aoi_file(store: ResponseStore, path: str | Path) -> ArtifactRecord:
    path = Path(path)
    if not path.exists():
        raise ToolFailed(f"AOI file not found: {path}", kind="not_found")
    gdf = gpd.read_file(path)
    if gdf.crs is None and path.suffix.lower() in (".geojson", ".json"):
        gdf = gdf.set_crs("EPSG:4326")
    return register_aoi(store, gdf, source=f"user.aoi:{path.name}", name=path.stem)
