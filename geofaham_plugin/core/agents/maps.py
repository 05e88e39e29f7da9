"""Maps specialist: map features of ONE class per call, for an AOI.

Offline source: the local catalogue's point-of-interest layers (e.g. HIFLD hospitals for Los Angeles
and Maui). Online OpenStreetMap (Overpass) sources plug in behind the same tool."""

from __future__ import annotations

import geopandas as gpd
import pandas as pd
import shapely
from pydantic import BaseModel, Field

from ..engines import vector_ops as ops
from ..errors import ToolFailed
from ..orchestrator.ledgers import AgentName
from ..store.models import ArtifactKind, ArtifactRecord
from .base import VECTOR_KINDS, InputSpec, ToolContext, tool

FEATURE_CLASSES = ("healthcare", "education", "emergency_services", "shelters", "roads", "bridges", "buildings",
                   "power", "water", "telecom", "waterways", "landuse", "admin_boundaries")


class GetFeaturesArgs(BaseModel):
    feature_class: str = Field(description="one feature class: " + ", ".join(FEATURE_CLASSES))
    buffer_m: float = Field(default=0, ge=0, le=100_000, description="extend the AOI by this many metres")


@tool(agent=AgentName.maps, args=GetFeaturesArgs, output=ArtifactKind.vector, metric=True,
      inputs=(InputSpec("aoi", VECTOR_KINDS, description="area of interest"),))
def get_features(ctx: ToolContext, args: GetFeaturesArgs, aoi: ArtifactRecord) -> ArtifactRecord:
    """Features of one class (hospitals, schools, roads, ...) in the AOI extended by buffer_m metres."""
    if args.feature_class not in FEATURE_CLASSES:
        raise ToolFailed(f"unknown feature class '{args.feature_class}'", kind="invalid_input",
                         hint="one of: " + ", ".join(FEATURE_CLASSES))
    area = ctx.store.read_vector(aoi.id)
    if area.empty:
        raise ToolFailed("the AOI is empty", kind="empty")
    region = ops.buffer(area, args.buffer_m) if args.buffer_m else area
    event_id = aoi.extra.get("event_id")
    layers = ctx.catalog.find(role="poi", feature_class=args.feature_class,
                              **({"event_id": event_id} if event_id is not None else {}))
    frames, used = [], []
    area_box = shapely.box(*region.to_crs(4326).total_bounds)
    for layer in layers:
        gdf, _ = ctx.catalog.load(layer.id)
        if not shapely.box(*gdf.to_crs(4326).total_bounds).intersects(area_box):
            continue  # this source does not cover the area: its silence means nothing here
        frames.append(ops.inside(gdf, region))
        used.append(layer)
    if not used:
        raise ToolFailed(f"no offline source of {args.feature_class} features covers this area", kind="not_found",
                         hint="configure an Overpass endpoint, or pass the features as a layer/artifact")
    out = gpd.GeoDataFrame(pd.concat([f.to_crs(frames[0].crs) for f in frames], ignore_index=True), crs=frames[0].crs)
    names = [layer.name_field for layer in used if layer.name_field]
    return ctx.store.register_vector(
        out, source=f"maps.get_features:{args.feature_class}", inputs=[aoi.id],
        summary=f"{len(out)} {args.feature_class} features within {args.buffer_m:g} m of {aoi.id} ({'; '.join(l.title for l in used)})",
        extra={"feature_class": args.feature_class, "name_field": names[0] if names else None,
               "attribution": "; ".join(l.attribution for l in used),
               "limitations": [x for l in used for x in l.limitations], "buffer_m": args.buffer_m},
    )
