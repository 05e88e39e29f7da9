"""Vector specialist: typed spatial operations on artifacts (deterministic, metric-correct)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from ..domain.damage import ANY_DAMAGE, DamageClass
from ..domain.geometry import POLYGONAL
from ..domain.ids import ARTIFACT_PLACEHOLDER
from ..domain.names import AgentName
from ..engines import vector_ops as ops
from ..errors import ModelRetry, ToolFailed
from ..store.models import ArtifactKind, ArtifactRecord
from .base import VECTOR_KINDS, InputSpec, ToolContext, tool

if TYPE_CHECKING:
    import geopandas as gpd

    from ..engines.db import QueryResult, SpatialEngine

V = AgentName.vector


class LoadEventLayerArgs(BaseModel):
    event_id: int = Field(description="disaster record id from the event table")
    role: Literal["hazard", "damage"] = Field(description="hazard: burn area / flood extent; damage: building damage")


@tool(agent=V, args=LoadEventLayerArgs, output=ArtifactKind.vector)
def load_event_layer(ctx: ToolContext, args: LoadEventLayerArgs) -> ArtifactRecord:
    """Load the disaster's hazard area (burn perimeter, flood extent) or building-damage layer."""
    layers = ctx.layers.find(event_id=args.event_id, role=args.role)
    if not layers:
        raise ToolFailed(
            f"no {args.role} layer is available for event {args.event_id}",
            kind="not_found",
            hint="choose another event or provide the layer as an AOI/artifact",
        )
    layer = layers[0]
    data = ctx.layers.read(layer.id)
    limitations = (
        list(layer.limitations)
        + [n for n in data.notes if "skipped" in n]
        + ([f"{data.repaired} invalid geometries repaired"] if data.repaired else [])
    )
    return ctx.store.register_vector(
        data.gdf,
        source=f"vector.load_event_layer:{layer.id}",
        summary=layer.title,
        extra={
            "layer_id": layer.id,
            "role": args.role,
            "event_id": args.event_id,
            "damage_field": layer.damage_field,
            "damage_scale": layer.damage.scale if layer.damage else None,
            "attribution": layer.attribution,
            "limitations": limitations,
            "repaired_geometries": data.repaired,
            "name_field": layer.name_field,
        },
    )


class SelectDamageArgs(BaseModel):
    damage_classes: list[DamageClass] = Field(min_length=1, description="normalised damage classes to keep")


@tool(
    agent=V,
    args=SelectDamageArgs,
    output=ArtifactKind.vector,
    inputs=(InputSpec("damage", VECTOR_KINDS, description="building-damage layer"),),
)
def select_damage(ctx: ToolContext, args: SelectDamageArgs, damage: ArtifactRecord) -> ArtifactRecord:
    """Keep buildings whose normalised damage class is one of the given classes."""
    field = damage.extra.get("damage_field")
    if not field:
        raise ToolFailed(
            f"{damage.id} has no known damage field",
            kind="invalid_input",
            hint="use a damage layer loaded with load_event_layer(role='damage')",
        )
    gdf = ctx.store.read_vector(damage.id)
    values = ctx.layers.damage_values(gdf[field], damage.extra.get("damage_scale"))
    gdf["damage_class"] = values["damage_class"]
    wanted = [c.value for c in args.damage_classes]
    keep = gdf["damage_class"].isin(wanted).to_numpy()
    ungraded = values["damage_class"].isna().to_numpy() & (values["is_damaged"] == True).to_numpy()  # noqa: E712
    notes = []
    if set(ANY_DAMAGE) <= set(args.damage_classes) and ungraded.any():  # "damaged" in general
        keep |= ungraded
        notes.append(f"{int(ungraded.sum())} buildings labelled damaged without a grade are included")
    elif set(wanted) & {c.value for c in ANY_DAMAGE} and ungraded.any():
        # "major or destroyed" of a layer that says only damaged or not: each ungraded building may be either
        raise ToolFailed(
            f"{int(ungraded.sum())} buildings of {damage.id} are labelled damaged without a grade, so the ones that "
            f"are {' or '.join(wanted)} cannot be told apart",
            kind="invalid_input",
            hint="this layer answers damaged or not damaged only: ask for damaged buildings in general",
        )
    out = gdf[keep]
    carried = _carry(damage)
    return ctx.store.register_vector(
        out,
        source="vector.select_damage",
        inputs=[damage.id],
        summary=f"{len(out)} buildings with damage class {', '.join(wanted)} (of {len(gdf)})",
        extra={**carried, "damage_classes": wanted, "limitations": carried.get("limitations", []) + notes},
    )


class DistanceArgs(BaseModel):
    distance_m: float = Field(gt=0, le=200_000, description="distance in metres")


class BufferArgs(DistanceArgs):
    dissolve: bool = Field(
        default=False,
        description="true: one area (the buffers merged: an area within a distance, to clip or measure); "
        "false: one buffer per feature, its attributes kept",
    )


@tool(agent=V, args=BufferArgs, output=ArtifactKind.vector, metric=True, inputs=(InputSpec("layer", VECTOR_KINDS),))
def buffer(ctx: ToolContext, args: BufferArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Buffer a layer by a distance in metres: one buffer per feature with its attributes, or merged into one."""
    gdf = ctx.store.read_vector(layer.id)
    out = ops.buffer(gdf, args.distance_m, dissolve=args.dissolve)
    what = "merged buffer" if args.dissolve else f"buffers of the {len(gdf)} features"
    return ctx.store.register_vector(
        out,
        source="vector.buffer",
        inputs=[layer.id],
        summary=f"{args.distance_m:g} m {what} of {layer.id}",
        extra={
            **(_carry(layer) if not args.dissolve else {}),
            "distance_m": args.distance_m,
            "dissolve": args.dissolve,
        },
    )


@tool(
    agent=V,
    args=DistanceArgs,
    output=ArtifactKind.vector,
    metric=True,
    overlap=("features", "reference", "distance_m"),
    accepts_empty=("features", "reference"),  # none near nothing: an empty result, not a stall
    inputs=(
        InputSpec("features", VECTOR_KINDS, description="features to test"),
        InputSpec("reference", VECTOR_KINDS, description="hazard or reference geometry"),
    ),
)
def within_distance(
    ctx: ToolContext, args: DistanceArgs, features: ArtifactRecord, reference: ArtifactRecord
) -> ArtifactRecord:
    """Features within a distance (m) of the reference, with their geodesic distance, nearest first."""
    out = ops.within_distance(ctx.store.read_vector(features.id), ctx.store.read_vector(reference.id), args.distance_m)
    return ctx.store.register_vector(
        out,
        source="vector.within_distance",
        inputs=[features.id, reference.id],
        summary=f"{len(out)} features of {features.id} within {args.distance_m:g} m of {reference.id}",
        extra={**_carry(features), "distance_m": args.distance_m},
    )


class NearestArgs(BaseModel):
    k: int = Field(ge=1, le=100, description="how many nearest features")


@tool(
    agent=V,
    args=NearestArgs,
    output=ArtifactKind.vector,
    metric=True,
    inputs=(InputSpec("features", VECTOR_KINDS), InputSpec("reference", VECTOR_KINDS)),
)
def nearest(ctx: ToolContext, args: NearestArgs, features: ArtifactRecord, reference: ArtifactRecord) -> ArtifactRecord:
    """The k features nearest to the reference, ranked, with geodesic distances."""
    out = ops.nearest_k(ctx.store.read_vector(features.id), ctx.store.read_vector(reference.id), args.k)
    return ctx.store.register_vector(
        out,
        source="vector.nearest",
        inputs=[features.id, reference.id],
        summary=f"{len(out)} features of {features.id} nearest to {reference.id}",
        extra={**_carry(features), "k": args.k},
    )


class NoArgs(BaseModel):
    pass


@tool(
    agent=V,
    args=NoArgs,
    output=ArtifactKind.vector,
    overlap=("features", "mask", None),
    accepts_empty=("features",),
    inputs=(InputSpec("features", VECTOR_KINDS), InputSpec("mask", VECTOR_KINDS, POLYGONAL, "area polygons")),
)
def inside(ctx: ToolContext, args: NoArgs, features: ArtifactRecord, mask: ArtifactRecord) -> ArtifactRecord:
    """Features that intersect an area (flood extent, burn area, AOI)."""
    area = ctx.store.read_vector(mask.id)
    out = ops.inside(ctx.store.read_vector(features.id, _bounds_in(area, features)), area)
    return ctx.store.register_vector(
        out,
        source="vector.inside",
        inputs=[features.id, mask.id],
        summary=f"{len(out)} features of {features.id} inside {mask.id}",
        extra=_carry(features),
    )


def _bounds_in(area: Any, layer: ArtifactRecord) -> tuple[float, float, float, float] | None:
    """The box of ``area``'s features in ``layer``'s CRS (what of the layer can meet them), or None when unknown."""
    crs = getattr(layer.metadata, "crs", None)
    if area.empty or not crs:
        return None
    minx, miny, maxx, maxy = (float(v) for v in area.to_crs(crs).total_bounds)
    return (minx, miny, maxx, maxy) if np.isfinite([minx, miny, maxx, maxy]).all() else None


class CountArgs(BaseModel):
    by: str | None = Field(default=None, description="field to group by; null for a total")


@tool(
    agent=V,
    args=CountArgs,
    output=ArtifactKind.table,
    field_arg=("by", "layer"),
    accepts_empty=("layer",),
    inputs=(InputSpec("layer", VECTOR_KINDS),),
)
def count(ctx: ToolContext, args: CountArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Count features, in total or per value of a field."""
    table = ops.count_by(ctx.store.read_vector(layer.id), args.by)
    total = int(table["count"].sum())
    return ctx.store.register_table(
        table,
        source="vector.count",
        inputs=[layer.id],
        summary=f"{total} features of {layer.id}" + (f" by {args.by}" if args.by else ""),
        extra={"by": args.by, "total": total},
    )


class FilterArgs(BaseModel):
    field: str = Field(description="the field to filter on")
    values: list[str] = Field(min_length=1, description="values to keep, exactly as in the data")
    taken_out: list[str] = Field(
        default_factory=list, description="values the question takes out ('excluding mobile homes'); none of values"
    )


@tool(
    agent=V,
    args=FilterArgs,
    output=ArtifactKind.vector,
    field_arg=("field", "layer"),
    accepts_empty=("layer",),
    inputs=(InputSpec("layer", VECTOR_KINDS),),
)
def filter_values(ctx: ToolContext, args: FilterArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Keep the features whose field has one of the given values (structure type, category, status ...)."""
    if both := sorted(set(args.values) & set(args.taken_out)):
        raise ModelRetry(f"{', '.join(both)} cannot be both kept and taken out")
    gdf = ctx.store.read_vector(layer.id)
    out = ops.filter_values(gdf, args.field, args.values)
    without = f", without {', '.join(args.taken_out)}" if args.taken_out else ""
    return ctx.store.register_vector(
        out,
        source="vector.filter_values",
        inputs=[layer.id],
        summary=f"{len(out)} features of {layer.id} with {args.field} in {', '.join(args.values)}{without} (of {len(gdf)})",
        extra={**_carry(layer), "filter": {args.field: args.values}},
    )


def _source_names_any(ctx: ToolContext, layer: ArtifactRecord, name_field: str, pattern: str) -> bool:
    """Whether any feature of the layer's whole source (its catalogue layers) is named like the pattern; true when
    the source is not a catalogue layer (nothing better is known)."""
    from ..domain.layer_names import layer_words

    ids = layer.extra.get("layer_ids") or []
    if not ids:
        return True
    for layer_id in ids:
        gdf, _ = ctx.layers.load(layer_id)
        if name_field in gdf.columns:
            names = gdf[name_field].fillna("").astype(str).map(lambda n: " ".join(layer_words(n)))
            if names.str.contains(pattern, regex=True).any():
                return True
    return False


def _table_total(record: ArtifactRecord) -> tuple[float, str]:
    """The one number a result table states (a count's total, a sum, a measure's total) and its unit."""
    stated = record.extra.get("stated")
    if isinstance(stated, dict) and isinstance(stated.get("total"), (int, float)):
        return float(stated["total"]), str(stated.get("unit") or "none")
    for key in ("total", "total_sum"):
        if isinstance(record.extra.get(key), (int, float)):
            return float(record.extra[key]), "count" if key == "total" else "none"
    raise ToolFailed(
        f"{record.id} states no single total to compare",
        kind="invalid_input",
        hint="compare two counts, sums, areas or lengths (ungrouped)",
    )


def _about(ctx: ToolContext, record: ArtifactRecord) -> str:
    """What a result is of, for a comparison's rows: its disaster's name (found up its lineage), else its id."""
    from ..domain.events import get_event

    seen, todo = set(), [record.id]
    while todo:
        current = ctx.store.get(todo.pop())
        event = get_event(current.extra["event_id"]) if current.extra.get("event_id") else None
        if event is not None:
            return event.name
        seen.add(current.id)
        todo += [i for i in current.inputs if i not in seen and i in ctx.store]
    return record.id


@tool(
    agent=V,
    args=NoArgs,
    output=ArtifactKind.table,
    inputs=(
        InputSpec("first", frozenset({ArtifactKind.table}), description="a result with one total"),
        InputSpec("second", frozenset({ArtifactKind.table}), description="the result to compare it with"),
    ),
)
def difference(ctx: ToolContext, args: NoArgs, first: ArtifactRecord, second: ArtifactRecord) -> ArtifactRecord:
    """Compare two results of the same kind (two counts, two areas ...): each total, and first minus second."""
    a, unit_a = _table_total(first)
    b, unit_b = _table_total(second)
    if unit_a != unit_b:
        raise ToolFailed(f"{first.id} is in {unit_a}, {second.id} in {unit_b}", kind="invalid_input")
    labels = [_about(ctx, first), _about(ctx, second)]
    by = "disaster"
    if labels[0] == labels[1]:
        labels, by = [first.id, second.id], "result"
    rows = sorted(zip(labels, [a, b], strict=True), key=lambda r: -r[1])  # the larger first: a positive difference
    table = pd.DataFrame({"value": [r[0] for r in rows], "amount": [r[1] for r in rows]})
    diff = rows[0][1] - rows[1][1]
    return ctx.store.register_table(
        table,
        source="vector.difference",
        inputs=[first.id, second.id],
        summary=f"{rows[0][0]} {rows[0][1]:g} vs {rows[1][0]} {rows[1][1]:g}: {diff:g} more",
        extra={
            "by": by,
            "difference": diff,
            "larger": rows[0][0] if diff else None,
            "of": dict(zip(labels, [first.id, second.id], strict=True)),  # each side's result: what states its total
            "stated": {
                "measure": "difference",
                "unit": unit_a,
                "column": "amount",
                "label": f"{rows[0][0]} more than {rows[1][0]} by" if diff else "no difference between them",
                "total": diff,
            },
        },
    )


class GridArgs(BaseModel):
    cell_m: float = Field(gt=0, le=100_000, description="cell size in metres")


@tool(
    agent=V,
    args=GridArgs,
    output=ArtifactKind.table,
    metric=True,
    accepts_empty=("layer",),
    inputs=(InputSpec("layer", VECTOR_KINDS, description="features to count per cell"),),
)
def grid_counts(ctx: ToolContext, args: GridArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Count features on a square grid of cell_m metres aligned to the UTM zone (edges at multiples of cell_m)."""
    table, crs = ops.grid_counts(ctx.store.read_vector(layer.id), args.cell_m)
    cells = len(table)
    densest = int(table["count"].max()) if cells else 0
    return ctx.store.register_table(
        table,
        source="vector.grid_counts",
        inputs=[layer.id],
        summary=f"{int(table['count'].sum())} features of {layer.id} in {cells} cells of {args.cell_m:g} m",
        extra={
            "by": "grid cell",
            "total": int(table["count"].sum()),
            "cells": cells,
            "densest": densest,
            "cell_m": args.cell_m,
            "grid_crs": crs.to_string(),
        },
    )


class KindArgs(BaseModel):
    feature_class: str = Field(description="the class the features are of")
    kinds: list[str] = Field(min_length=1, description="narrower kinds of the class to keep (hospital, clinic ...)")
    exclude: bool = Field(default=False, description="true: keep every feature except those kinds ('not hospitals')")
    named: list[str] = Field(
        default_factory=list,
        description="the words of those kinds the question said ('consultorio'): a layer that tells kinds apart only "
        "by name is narrowed by these when its names hold them",
    )


@tool(
    agent=V,
    args=KindArgs,
    output=ArtifactKind.vector,
    accepts_empty=("layer",),
    inputs=(InputSpec("layer", VECTOR_KINDS, description="features of the class"),),
)
def select_kind(ctx: ToolContext, args: KindArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Keep the features of narrower kinds of their class (hospitals of healthcare): by the layer's own kind
    (a hospitals-only layer), else by their tags, else by their names."""
    from ..domain.feature_classes import feature_class_specs
    from ..domain.layer_names import layer_words

    spec = feature_class_specs().get(args.feature_class)
    unknown = [k for k in args.kinds if spec is None or k not in spec.kinds]
    if spec is None or unknown:
        raise ModelRetry(f"unknown kinds {unknown} of {args.feature_class}")
    kinds = {k: spec.kinds[k] for k in args.kinds}
    gdf = ctx.store.read_vector(layer.id)
    declared = {k for i in layer.extra.get("layer_ids", []) or [] for k in ctx.layers.get(i).kinds}
    notes: list[str] = []
    if declared:  # a layer of one kind: every feature is that kind
        keep = np.full(len(gdf), bool(declared & set(kinds)))
        how = f"every feature of the source is a {', '.join(sorted(declared))}"
    elif any(key in gdf.columns for kind in kinds.values() for key in kind.tags):
        keep = np.zeros(len(gdf), dtype=bool)
        for kind in kinds.values():
            for key, values in kind.tags.items():
                if key in gdf.columns:
                    keep |= gdf[key].astype(str).isin(values).to_numpy()
        how = "by their OpenStreetMap tags"
    else:
        name_field = layer.extra.get("name_field")
        if not name_field or name_field not in gdf.columns:
            raise ToolFailed(
                f"{layer.id} cannot tell {' or '.join(args.kinds)} from other {args.feature_class} features",
                kind="invalid_input",
                hint="the layer has no kind tags and no names; answer for the whole class instead",
            )
        names = gdf[name_field].fillna("").astype(str).map(lambda n: " ".join(layer_words(n)))

        def name_pattern(said: list[str]) -> str:
            words = [" ".join(layer_words(w)) for w in said]
            return r"(?<![a-z])(?:" + "|".join(re.escape(w) for w in words) + r")(?:e?s)?(?![a-z])"

        said = [w for kind in kinds.values() for w in kind.words]
        named = [w for w in args.named if w in said]  # the words the question said, of these kinds
        if named and names.str.contains(name_pattern(named), regex=True).any():
            said = named  # "consultorios": the names that say consultorio, not every word of a clinic
            notes.append(f"named as the question says: {', '.join(named)}")
        words = [" ".join(layer_words(w)) for w in said]
        pattern = name_pattern(said)
        keep = names.str.contains(pattern, regex=True).to_numpy()
        if args.exclude and not keep.any():  # nothing of those kinds named: none to take out (say so)
            notes.append(f"no feature is named as a {' or '.join(args.kinds)}: none taken out")
        elif not keep.any() and not _source_names_any(ctx, layer, name_field, pattern):
            raise ToolFailed(
                f"the source of {layer.id} names no {' or '.join(args.kinds)} at all: it cannot tell how many there are",
                kind="not_found",
                hint=f"it may not list them; answer for all {args.feature_class} features or use another layer",
            )
        how = f"by their names ({name_field} contains {', '.join(sorted(set(words))[:6])} ...)"
        notes.append(f"{' and '.join(args.kinds)} told apart from other {args.feature_class} features by name")
    if args.exclude:  # "not hospitals": every other feature, those of no known kind too
        keep = ~keep
    out = gdf[keep].copy()
    carried = _carry(layer)
    what = f"{'not ' if args.exclude else ''}{' or '.join(args.kinds)}"
    return ctx.store.register_vector(
        out,
        source="vector.select_kind",
        inputs=[layer.id],
        summary=f"{len(out)} {what} of {len(gdf)} {args.feature_class} features of {layer.id} ({how})",
        extra={
            **carried,
            **({"kinds_out": args.kinds} if args.exclude else {"kinds": args.kinds}),
            "limitations": carried.get("limitations", []) + notes,
        },
    )


class ZonesArgs(BaseModel):
    label: str | None = Field(default=None, description="field of the zones that names each zone; null: zone 1, 2 ...")


@tool(
    agent=V,
    args=ZonesArgs,
    output=ArtifactKind.table,
    field_arg=("label", "zones"),
    accepts_empty=("features",),
    inputs=(
        InputSpec("features", VECTOR_KINDS, description="features to count"),
        InputSpec("zones", VECTOR_KINDS, POLYGONAL, "zone polygons (districts, evacuation zones, grid cells)"),
    ),
)
def count_in_zones(
    ctx: ToolContext, args: ZonesArgs, features: ArtifactRecord, zones: ArtifactRecord
) -> ArtifactRecord:
    """Count features in each zone polygon: every zone listed, empty ones as 0."""
    table = ops.count_in_zones(ctx.store.read_vector(features.id), ctx.store.read_vector(zones.id), args.label)
    total = int(table["count"].sum())
    by = args.label or "zone"
    return ctx.store.register_table(
        table,
        source="vector.count_in_zones",
        inputs=[features.id, zones.id],
        summary=f"{total} features of {features.id} in {len(table)} zones of {zones.id}",
        extra={"by": by, "total": total, "zones": zones.id},
    )


@tool(
    agent=V,
    args=NoArgs,
    output=ArtifactKind.vector,
    overlap=("features", "mask", None),
    accepts_empty=("features",),
    inputs=(InputSpec("features", VECTOR_KINDS), InputSpec("mask", VECTOR_KINDS, POLYGONAL, "area polygons")),
)
def clip(ctx: ToolContext, args: NoArgs, features: ArtifactRecord, mask: ArtifactRecord) -> ArtifactRecord:
    """Cut features to an area (roads or buildings cut at the flood or burn boundary)."""
    out = ops.clip(ctx.store.read_vector(features.id), ctx.store.read_vector(mask.id))
    return ctx.store.register_vector(
        out,
        source="vector.clip",
        inputs=[features.id, mask.id],
        summary=f"{len(out)} features of {features.id} clipped to {mask.id}",
        extra=_carry(features),
    )


class DissolveArgs(BaseModel):
    by: str | None = Field(default=None, description="field whose values are merged separately; null merges all")
    parts: bool = Field(default=False, description="one feature per connected part (only overlapping ones merged)")


@tool(
    agent=V,
    args=DissolveArgs,
    output=ArtifactKind.vector,
    field_arg=("by", "layer"),
    inputs=(InputSpec("layer", VECTOR_KINDS),),
)
def dissolve(ctx: ToolContext, args: DissolveArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Merge geometries, all together or per value of a field, counting what was merged."""
    out = ops.dissolve(ctx.store.read_vector(layer.id), args.by, args.parts)
    return ctx.store.register_vector(
        out,
        source="vector.dissolve",
        inputs=[layer.id],
        summary=f"{len(out)} merged areas of {layer.id}"
        + (f" by {args.by}" if args.by else "")
        + (" (one per connected part)" if args.parts else ""),
        extra={**_carry(layer), "by": args.by},
    )


class SumArgs(BaseModel):
    field: str = Field(description="numeric field to add up")
    by: str | None = Field(default=None, description="field to group by; null for a total")


@tool(
    agent=V,
    args=SumArgs,
    output=ArtifactKind.table,
    field_arg=("field", "layer"),
    accepts_empty=("layer",),
    inputs=(InputSpec("layer", VECTOR_KINDS),),
)
def sum_by(ctx: ToolContext, args: SumArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Add up a numeric field (beds, people, damage value), in total or per value of another field."""
    table = ops.sum_by(ctx.store.read_vector(layer.id), args.field, args.by)
    total = float(table["sum"].sum())
    return ctx.store.register_table(
        table,
        source="vector.sum_by",
        inputs=[layer.id],
        summary=f"sum of {args.field} over {layer.id}: {total:g}" + (f" by {args.by}" if args.by else ""),
        extra={"by": args.by, "field": args.field, "total_sum": total},
    )


class ClusterArgs(BaseModel):
    eps_m: float = Field(gt=0, le=50_000, description="neighbourhood radius in metres")
    min_samples: int = Field(default=5, ge=1, le=1000, description="features needed to form a cluster core")


@tool(agent=V, args=ClusterArgs, output=ArtifactKind.vector, metric=True, inputs=(InputSpec("layer", VECTOR_KINDS),))
def cluster(ctx: ToolContext, args: ClusterArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Find clusters of features (DBSCAN, metres); one outline per cluster with its size."""
    out, noise = ops.dbscan(ctx.store.read_vector(layer.id), args.eps_m, args.min_samples)
    return ctx.store.register_vector(
        out,
        source="vector.cluster",
        inputs=[layer.id],
        summary=f"{len(out)} clusters of {layer.id} (DBSCAN eps {args.eps_m:g} m, min {args.min_samples}; {noise} isolated)",
        extra={**_carry(layer), "eps_m": args.eps_m, "min_samples": args.min_samples, "noise": noise},
    )


# Measures: the complement of inside, a share, a geodesic area or length, a statistic of a field. A measure
# table's ``stated`` extra tells the synthesis which number it states, in which unit (see
# orchestrator/synthesis.py); rows are keyed by ``value`` (the group, or "all").


@tool(
    agent=V,
    args=NoArgs,
    output=ArtifactKind.vector,
    accepts_empty=("features",),
    inputs=(InputSpec("features", VECTOR_KINDS), InputSpec("mask", VECTOR_KINDS, POLYGONAL, "area polygons")),
)
def outside(ctx: ToolContext, args: NoArgs, features: ArtifactRecord, mask: ArtifactRecord) -> ArtifactRecord:
    """Features that do NOT intersect an area (outside the flood extent, burn area, AOI): the complement of inside."""
    gdf = ctx.store.read_vector(features.id)
    out, unlocated = ops.outside(gdf, ctx.store.read_vector(mask.id))
    carried = _carry(features)
    if unlocated:
        note = f"{unlocated} features without a geometry are neither inside nor outside {mask.id}"
        carried["limitations"] = carried.get("limitations", []) + [note]
    return ctx.store.register_vector(
        out,
        source="vector.outside",
        inputs=[features.id, mask.id],
        summary=f"{len(out)} features of {features.id} outside {mask.id} (of {len(gdf)})",
        extra={**carried, "relation": "outside"},
    )


class ShareArgs(BaseModel):
    by: str | None = Field(
        default=None, description="field present in both layers for a share per value; null for one share"
    )
    weight: Literal["count", "area", "length"] = Field(
        default="count",
        description="a share of the features' number, or of their geodesic area (polygons) or length (lines)",
    )


@tool(
    agent=V,
    args=ShareArgs,
    output=ArtifactKind.table,
    field_arg=("by", "base"),
    accepts_empty=("part",),
    inputs=(
        InputSpec("part", VECTOR_KINDS, description="the features the share counts (e.g. destroyed buildings)"),
        InputSpec("base", VECTOR_KINDS, description="all the features it is a share of (e.g. every building)"),
    ),
)
def share(ctx: ToolContext, args: ShareArgs, part: ArtifactRecord, base: ArtifactRecord) -> ArtifactRecord:
    """What share (fraction and percent) of the base features the part features are, in total or per value of a field."""
    part_gdf, base_gdf = ctx.store.read_vector(part.id), ctx.store.read_vector(base.id)
    if args.weight != "count":
        return _weighted_share(ctx, args, part, base, part_gdf, base_gdf)
    table, orphans = ops.share(part_gdf, base_gdf, args.by)
    p, b = len(part_gdf), len(base_gdf)
    percent = round(100 * p / b, 2)
    notes = []
    if p > b:
        notes.append(f"{part.id} has more features ({p}) than {base.id} ({b}): it is not a part of it")
    if orphans:
        groups = ", ".join(f"{g} ({n})" for g, n in list(orphans.items())[:10])
        notes.append(f"{sum(orphans.values())} features of {part.id} are in {args.by} groups {base.id} lacks: {groups}")
    return ctx.store.register_table(
        table,
        source="vector.share",
        inputs=[part.id, base.id],
        summary=f"{p} of {b} features ({percent:g} %): {part.id} of {base.id}" + (f" by {args.by}" if args.by else ""),
        extra={
            "by": args.by,
            "part_count": p,
            "base_count": b,
            "share": round(p / b, 4),
            "share_percent": percent,
            "limitations": notes,
            "stated": {"measure": "share", "unit": "percent", "column": "percent", "label": "share", "total": percent},
        },
    )


def _weighted_share(
    ctx: ToolContext,
    args: ShareArgs,
    part: ArtifactRecord,
    base: ArtifactRecord,
    part_gdf: gpd.GeoDataFrame,
    base_gdf: gpd.GeoDataFrame,
) -> ArtifactRecord:
    """The share of the base's area or length that the part's is (each measured geodesically, merged first)."""
    if args.by is not None:
        raise ToolFailed(
            "a share by area or length is one share, not one per group", kind="invalid_input", hint="by=null"
        )
    _, total_b, what = ops.measure(base_gdf, args.weight, None)
    if total_b <= 0:
        raise ToolFailed(f"the base has no {args.weight}", kind="empty", hint="the base must be lines or polygons")
    _, total_p, _ = ops.measure(part_gdf, args.weight, None) if len(part_gdf) else (None, 0.0, what)
    unit = "km2" if args.weight == "area" else "km"
    percent = round(100 * total_p / total_b, 2)
    table = pd.DataFrame(
        [{"value": "all", f"part_{unit}": total_p, f"base_{unit}": total_b, "share": round(total_p / total_b, 4),
          "percent": percent}]
    )  # fmt: skip
    notes = (
        [f"{part.id}'s {args.weight} exceeds {base.id}'s: it is not a part of it"] if total_p > total_b * 1.0001 else []
    )
    return ctx.store.register_table(
        table,
        source="vector.share",
        inputs=[part.id, base.id],
        summary=f"{total_p:g} of {total_b:g} {unit} ({percent:g} %): {args.weight} of {part.id} in {base.id}",
        extra={
            "by": None,
            "weight": args.weight,
            "part_amount": total_p,
            "base_amount": total_b,
            "unit": unit,
            "share": round(total_p / total_b, 4),
            "share_percent": percent,
            "limitations": notes,
            "stated": {"measure": "share", "unit": "percent", "column": "percent", "label": "share", "total": percent},
        },
    )


class MeasureArgs(BaseModel):
    quantity: Literal["area", "length"] = Field(
        description="area (km², ha) of polygons, or length (km) of lines (of polygons: their perimeter)"
    )
    by: str | None = Field(default=None, description="field to group by; null for a total")


@tool(
    agent=V,
    args=MeasureArgs,
    output=ArtifactKind.table,
    field_arg=("by", "layer"),
    accepts_empty=("layer",),
    inputs=(InputSpec("layer", VECTOR_KINDS, description="polygons (area) or lines (length)"),),
)
def measure(ctx: ToolContext, args: MeasureArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Geodesic area (km², ha) or length (km) of a layer, in total or per value of a field; overlaps counted once."""
    table, total, what = ops.measure(ctx.store.read_vector(layer.id), args.quantity, args.by)
    unit = "km2" if what == "area" else "km"
    column = "area_km2" if what == "area" else "length_km"
    amount = f"{total:g} km² ({total * 100:g} ha)" if what == "area" else f"{total:g} km"
    how = {
        "area": "geometries merged first, so overlapping polygons are counted once",
        "length": "lines merged first, so shared segments are counted once",
        "perimeter": "the outline of the merged polygons",
    }[what]
    return ctx.store.register_table(
        table,
        source="vector.measure",
        inputs=[layer.id],
        summary=f"geodesic {what} of {layer.id}: {amount}" + (f" by {args.by}" if args.by else "") + f" ({how})",
        extra={
            "by": args.by,
            "quantity": args.quantity,
            "measured": what,
            "unit": unit,
            "total": total,
            "features": int(table["features"].sum()),
            "stated": {
                "measure": "area" if what == "area" else "length",
                "unit": unit,
                "column": column,
                "label": what,
                "total": total,
            },
        },
    )


class StatsArgs(BaseModel):
    field: str = Field(description="numeric field (beds, population, value)")
    stat: Literal["mean", "median", "min", "max", "sum"] = Field(description="the statistic")
    by: str | None = Field(default=None, description="field to group by; null for one value")


@tool(
    agent=V,
    args=StatsArgs,
    output=ArtifactKind.table,
    field_arg=("field", "layer"),
    inputs=(InputSpec("layer", VECTOR_KINDS),),
)
def stats(ctx: ToolContext, args: StatsArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Mean, median, min, max or sum of a numeric field, in total or per value of another field (nulls left out)."""
    table, overall = ops.stats(ctx.store.read_vector(layer.id), args.field, args.stat, args.by)
    n_null = int(overall["n_null"])
    notes = [f"{n_null} features without a number in {args.field} are left out of the {args.stat}"] if n_null else []
    if n_coded := int(overall["n_no_data"]):
        notes.append(f"of them, {n_coded} hold a no-data code (-999 and the like) in {args.field}: unknown, not added")
    return ctx.store.register_table(
        table,
        source="vector.stats",
        inputs=[layer.id],
        summary=f"{args.stat} of {args.field} over {layer.id}: {overall['value']:g} ({overall['n']} values)"
        + (f" by {args.by}" if args.by else ""),
        extra={
            "by": args.by,
            "stat": args.stat,
            "field": args.field,
            "value": overall["value"],
            "n": overall["n"],
            "n_null": n_null,
            "n_not_numeric": overall["n_not_numeric"],
            "limitations": notes,
            "stated": {
                "measure": args.stat,
                "unit": "none",
                "column": args.stat,
                "label": f"{args.stat} of {args.field}",
                "total": overall["value"],
            },
        },
    )


def _carry(record: ArtifactRecord) -> dict:
    """Facts later steps and the synthesis need from an input (damage field, names, provenance)."""
    keep = (
        "damage_field",
        "damage_scale",
        "name_field",
        "attribution",
        "limitations",
        "event_id",
        "feature_class",
        "layer_ids",
        "kinds",
        "kinds_out",
    )
    return {k: record.extra[k] for k in keep if k in record.extra}


# ------------------------------------------------------------------------------------------------
# The disaster database (PostGIS when configured, else the embedded SpatiaLite file): typed queries
# for small models, free SQL over artifact placeholders for models that can write it.


def _engine(ctx: ToolContext) -> SpatialEngine:
    from ..engines.db import open_engine

    return open_engine(settings=ctx.settings)


def _kind(engine: SpatialEngine) -> str:
    return "postgis" if "PostGIS" in type(engine).__name__ else "spatialite"


class DamageByClassArgs(BaseModel):
    event_id: int = Field(description="disaster record id")


@tool(
    agent=V,
    args=DamageByClassArgs,
    output=ArtifactKind.table,
    optional_inputs=("area",),
    inputs=(InputSpec("area", VECTOR_KINDS, POLYGONAL, "optional area; default: the event's hazard area"),),
)
def damage_by_class(ctx: ToolContext, args: DamageByClassArgs, area: ArtifactRecord | None = None) -> ArtifactRecord:
    """Count the event's damaged buildings by damage class in the database, inside an area or the hazard."""
    from ..engines.db import ArtifactFile

    with _engine(ctx) as engine:
        counts = engine.count_damage(
            args.event_id,
            ArtifactFile.from_store(ctx.store, area.id) if area else None,
            timeout_s=ctx.time_left(),
        )
        label = _kind(engine)
    if counts.total == 0:
        raise ToolFailed(
            f"the database has no damage records for event {args.event_id} in {counts.area}",
            kind="not_found",
            hint="load them with `python -m geofaham_plugin db load`",
        )
    table = counts.to_frame().rename(columns={"damage_class": "value"})
    return ctx.store.register_table(
        table,
        source=f"vector.damage_by_class:{label}",
        inputs=[area.id] if area else [],
        summary=f"{counts.total} damage records of event {args.event_id} in {counts.area}, {counts.damaged} damaged",
        extra={
            "by": "damage_class",
            "total": counts.total,
            "damaged": counts.damaged,
            "by_raw": counts.by_raw,
            "event_id": args.event_id,
        },
    )


class SqlArgs(BaseModel):
    sql: str = Field(
        description="ONE read-only SELECT over events, damage, flood_extents, burn_perimeters, "
        "features; write {{a_1234abcd}} to use an artifact as a table (never paste geometry literals)"
    )
    row_cap: int = Field(default=10_000, ge=1, le=100_000)


def _run_sql(ctx: ToolContext, args: SqlArgs) -> tuple[QueryResult, list[str], str, list[str]]:
    from ..engines.db import ArtifactFile
    from ..engines.db.base import DEFAULT_TIMEOUT_S

    ids = list(dict.fromkeys(ARTIFACT_PLACEHOLDER.findall(args.sql)))
    missing = [i for i in ids if i not in ctx.store]
    if missing:
        raise ModelRetry(f"unknown artifacts {missing}; use only ids of available artifacts")
    with _engine(ctx) as engine:
        result = engine.run_sql(
            args.sql,
            [ArtifactFile.from_store(ctx.store, i) for i in ids],
            row_cap=args.row_cap,
            timeout_s=ctx.time_left(DEFAULT_TIMEOUT_S) or 0.001,  # the step's time is up: stop at once
        )
        label = _kind(engine)
    notes = [f"only the first {args.row_cap} rows were kept"] if result.truncated else []
    return result, ids, label, notes


@tool(agent=V, args=SqlArgs, output=ArtifactKind.vector)
def sql_features(ctx: ToolContext, args: SqlArgs) -> ArtifactRecord:
    """Run one read-only spatial SQL query whose rows have a geometry; the result is a layer."""
    result, ids, label, notes = _run_sql(ctx, args)
    gdf = result.to_gdf()
    return ctx.store.register_vector(
        gdf,
        source=f"vector.sql_features:{label}",
        inputs=ids,
        summary=f"{len(gdf)} rows from SQL",
        extra={"sql": args.sql, "limitations": notes},
    )


@tool(agent=V, args=SqlArgs, output=ArtifactKind.table)
def sql_table(ctx: ToolContext, args: SqlArgs) -> ArtifactRecord:
    """Run one read-only SQL query (counts, sums, rankings); the result is a table."""
    result, ids, label, notes = _run_sql(ctx, args)
    table = result.to_frame()
    return ctx.store.register_table(
        table,
        source=f"vector.sql_table:{label}",
        inputs=ids,
        summary=f"{len(table)} rows from SQL",
        extra={"sql": args.sql, "limitations": notes},
    )
