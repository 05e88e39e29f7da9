"""Vector specialist: typed spatial operations on artifacts (deterministic, metric-correct)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ..engines import vector_ops as ops
from ..errors import ToolFailed
from ..orchestrator.ledgers import AgentName
from ..planning.facts import DamageClass
from ..store.models import ArtifactKind, ArtifactRecord
from .base import VECTOR_KINDS, InputSpec, ToolContext, tool

V = AgentName.vector
POLYGONAL = frozenset({"polygon"})


class LoadEventLayerArgs(BaseModel):
    event_id: int = Field(description="disaster record id from the event table")
    role: Literal["hazard", "damage"] = Field(description="hazard: burn area / flood extent; damage: building damage")


@tool(agent=V, args=LoadEventLayerArgs, output=ArtifactKind.vector)
def load_event_layer(ctx: ToolContext, args: LoadEventLayerArgs) -> ArtifactRecord:
    """Load the disaster's hazard area (burn perimeter, flood extent) or building-damage layer."""
    layers = ctx.catalog.find(event_id=args.event_id, role=args.role)
    if not layers:
        raise ToolFailed(f"no {args.role} layer is available for event {args.event_id}", kind="not_found",
                         hint="choose another event or provide the layer as an AOI/artifact")
    layer = layers[0]
    gdf, repaired = ctx.catalog.load(layer.id)
    limitations = list(layer.limitations) + ([f"{repaired} invalid geometries repaired"] if repaired else [])
    return ctx.store.register_vector(
        gdf, source=f"vector.load_event_layer:{layer.id}", summary=layer.title,
        extra={"layer_id": layer.id, "role": args.role, "event_id": args.event_id, "damage_field": layer.damage_field,
               "attribution": layer.attribution, "limitations": limitations, "repaired_geometries": repaired,
               "name_field": layer.name_field},
    )


class SelectDamageArgs(BaseModel):
    damage_classes: list[DamageClass] = Field(min_length=1, description="normalised damage classes to keep")


@tool(agent=V, args=SelectDamageArgs, output=ArtifactKind.vector,
      inputs=(InputSpec("damage", VECTOR_KINDS, description="building-damage layer"),))
def select_damage(ctx: ToolContext, args: SelectDamageArgs, damage: ArtifactRecord) -> ArtifactRecord:
    """Keep buildings whose normalised damage class is one of the given classes."""
    field = damage.extra.get("damage_field")
    if not field:
        raise ToolFailed(f"{damage.id} has no known damage field", kind="invalid_input",
                         hint="use a damage layer loaded with load_event_layer(role='damage')")
    gdf = ctx.store.read_vector(damage.id)
    gdf["damage_class"] = ctx.catalog.damage_class_series(gdf, field)
    wanted = [c.value for c in args.damage_classes]
    out = gdf[gdf["damage_class"].isin(wanted)]
    return ctx.store.register_vector(
        out, source="vector.select_damage", inputs=[damage.id],
        summary=f"{len(out)} buildings with damage class {', '.join(wanted)} (of {len(gdf)})",
        extra={**_carry(damage), "damage_classes": wanted},
    )


class DistanceArgs(BaseModel):
    distance_m: float = Field(gt=0, le=200_000, description="distance in metres")


@tool(agent=V, args=DistanceArgs, output=ArtifactKind.vector, metric=True,
      inputs=(InputSpec("layer", VECTOR_KINDS),))
def buffer(ctx: ToolContext, args: DistanceArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Buffer (and dissolve) a layer by a distance in metres."""
    out = ops.buffer(ctx.store.read_vector(layer.id), args.distance_m)
    return ctx.store.register_vector(out, source="vector.buffer", inputs=[layer.id],
                                     summary=f"{args.distance_m:g} m buffer around {layer.id}",
                                     extra={"distance_m": args.distance_m})


@tool(agent=V, args=DistanceArgs, output=ArtifactKind.vector, metric=True, overlap=("features", "reference", "distance_m"),
      accepts_empty=("features",),
      inputs=(InputSpec("features", VECTOR_KINDS, description="features to test"),
              InputSpec("reference", VECTOR_KINDS, description="hazard or reference geometry")))
def within_distance(ctx: ToolContext, args: DistanceArgs, features: ArtifactRecord, reference: ArtifactRecord) -> ArtifactRecord:
    """Features within a distance (m) of the reference, with their geodesic distance, nearest first."""
    out = ops.within_distance(ctx.store.read_vector(features.id), ctx.store.read_vector(reference.id), args.distance_m)
    return ctx.store.register_vector(
        out, source="vector.within_distance", inputs=[features.id, reference.id],
        summary=f"{len(out)} features of {features.id} within {args.distance_m:g} m of {reference.id}",
        extra={**_carry(features), "distance_m": args.distance_m},
    )


class NearestArgs(BaseModel):
    k: int = Field(ge=1, le=100, description="how many nearest features")


@tool(agent=V, args=NearestArgs, output=ArtifactKind.vector, metric=True,
      inputs=(InputSpec("features", VECTOR_KINDS), InputSpec("reference", VECTOR_KINDS)))
def nearest(ctx: ToolContext, args: NearestArgs, features: ArtifactRecord, reference: ArtifactRecord) -> ArtifactRecord:
    """The k features nearest to the reference, ranked, with geodesic distances."""
    out = ops.nearest_k(ctx.store.read_vector(features.id), ctx.store.read_vector(reference.id), args.k)
    return ctx.store.register_vector(out, source="vector.nearest", inputs=[features.id, reference.id],
                                     summary=f"{len(out)} features of {features.id} nearest to {reference.id}",
                                     extra={**_carry(features), "k": args.k})


class NoArgs(BaseModel):
    pass


@tool(agent=V, args=NoArgs, output=ArtifactKind.vector, overlap=("features", "mask", None), accepts_empty=("features",),
      inputs=(InputSpec("features", VECTOR_KINDS), InputSpec("mask", VECTOR_KINDS, POLYGONAL, "area polygons")))
def inside(ctx: ToolContext, args: NoArgs, features: ArtifactRecord, mask: ArtifactRecord) -> ArtifactRecord:
    """Features that intersect an area (flood extent, burn area, AOI)."""
    out = ops.inside(ctx.store.read_vector(features.id), ctx.store.read_vector(mask.id))
    return ctx.store.register_vector(out, source="vector.inside", inputs=[features.id, mask.id],
                                     summary=f"{len(out)} features of {features.id} inside {mask.id}",
                                     extra=_carry(features))


class CountArgs(BaseModel):
    by: str | None = Field(default=None, description="field to group by; null for a total")


@tool(agent=V, args=CountArgs, output=ArtifactKind.table, field_arg=("by", "layer"), accepts_empty=("layer",),
      inputs=(InputSpec("layer", VECTOR_KINDS),))
def count(ctx: ToolContext, args: CountArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Count features, in total or per value of a field."""
    table = ops.count_by(ctx.store.read_vector(layer.id), args.by)
    total = int(table["count"].sum())
    return ctx.store.register_table(table, source="vector.count", inputs=[layer.id],
                                    summary=f"{total} features of {layer.id}" + (f" by {args.by}" if args.by else ""),
                                    extra={"by": args.by, "total": total})


def _carry(record: ArtifactRecord) -> dict:
    """Facts later steps and the synthesis need from an input (damage field, names, provenance)."""
    keep = ("damage_field", "name_field", "attribution", "limitations", "event_id", "feature_class")
    return {k: record.extra[k] for k in keep if k in record.extra}
