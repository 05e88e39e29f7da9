"""Vector specialist: the transforms that make the user's files usable (engines/transforms.py) as typed tools that
chain (repair -> reproject -> dissolve by class -> measure -> save), the manifest of a user's file, and saving a
layer to a file in the session's exports folder, read back and checked."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import geopandas as gpd
import pandas as pd
from pydantic import BaseModel, Field, field_validator

from ..domain.geometry import POLYGONAL
from ..domain.names import AgentName
from ..engines import formats
from ..engines import transforms as tf
from ..engines.layers import UserLayer
from ..errors import ToolFailed
from ..store.models import ArtifactKind, ArtifactRecord
from .base import VECTOR_KINDS, InputSpec, ToolContext, tool
from .vector import NoArgs, _carry

V = AgentName.vector
LAYER = (InputSpec("layer", VECTOR_KINDS),)
EXPORTS = "exports"  # the session folder's subfolder layers are saved in


def _register(
    ctx: ToolContext,
    gdf: gpd.GeoDataFrame,
    name: str,
    inputs: list[ArtifactRecord],
    summary: str,
    changes: tf.Changes,
    **extra: object,
) -> ArtifactRecord:
    carried = _carry(inputs[0])
    limitations = carried.get("limitations", []) + changes.notes
    return ctx.store.register_vector(
        gdf,
        source=f"vector.{name}",
        inputs=[r.id for r in inputs],
        summary=summary,
        extra={**carried, **extra, "limitations": limitations, "changed": changes.changed, "removed": changes.removed},
    )


class ReprojectArgs(BaseModel):
    to_crs: str = Field(
        min_length=1, description="EPSG code (EPSG:32611, 3857) or equal-area, utm, local, polar-north, polar-south"
    )


@tool(agent=V, args=ReprojectArgs, output=ArtifactKind.vector, accepts_empty=("layer",), inputs=LAYER)
def reproject(ctx: ToolContext, args: ReprojectArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Reproject a layer to a named CRS (equal-area, polar and UTM by name); split at the antimeridian in degrees."""
    out, changes = tf.reproject(ctx.store.read_vector(layer.id), args.to_crs)
    return _register(ctx, out, "reproject", [layer], f"{layer.id} in {changes.crs}", changes, crs=changes.crs)


@tool(agent=V, args=NoArgs, output=ArtifactKind.vector, accepts_empty=("layer",), inputs=LAYER)
def split_antimeridian(ctx: ToolContext, args: NoArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Cut lon/lat lines and polygons that cross ±180° into parts on either side."""
    out, changes = tf.split_antimeridian(ctx.store.read_vector(layer.id))
    summary = f"{changes.changed} features of {layer.id} split at the antimeridian"
    return _register(ctx, out, "split_antimeridian", [layer], summary, changes)


class RepairArgs(BaseModel):
    keep_dimension: bool = Field(default=True, description="a repaired polygon keeps only its polygon parts")


@tool(agent=V, args=RepairArgs, output=ArtifactKind.vector, accepts_empty=("layer",), inputs=LAYER)
def repair_geometry(ctx: ToolContext, args: RepairArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Make invalid geometries valid (self-intersections, bow-ties), counting them; nothing dropped."""
    out, changes = tf.repair(ctx.store.read_vector(layer.id), args.keep_dimension)
    summary = f"{changes.changed} invalid geometries of {layer.id} repaired"
    return _register(ctx, out, "repair_geometry", [layer], summary, changes)


class OrientArgs(BaseModel):
    exterior: Literal["ccw", "cw"] = Field(default="ccw", description="ccw (GeoJSON/OGC) or cw (shapefile)")


@tool(agent=V, args=OrientArgs, output=ArtifactKind.vector, accepts_empty=("layer",), inputs=LAYER)
def orient_rings(ctx: ToolContext, args: OrientArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Orient polygon rings: exteriors counter-clockwise, holes clockwise (or the reverse)."""
    out, changes = tf.orient(ctx.store.read_vector(layer.id), args.exterior)
    summary = f"{changes.changed} polygons of {layer.id} re-oriented"
    return _register(ctx, out, "orient_rings", [layer], summary, changes)


class DedupeArgs(BaseModel):
    tolerance_m: float = Field(
        default=tf.DEDUPE_TOLERANCE_M,
        ge=0,
        le=10_000,
        description="geometries within this many metres are the same place (0: exactly the same geometry)",
    )
    fields: list[str] | None = Field(
        default=None, description="fields that must match too; null: every one but the identifiers, []: none"
    )


@tool(agent=V, args=DedupeArgs, output=ArtifactKind.vector, accepts_empty=("layer",), inputs=LAYER)
def dedupe(ctx: ToolContext, args: DedupeArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Remove duplicate features (same geometry, exactly or within a tolerance, and same attributes)."""
    out, changes = tf.dedupe(ctx.store.read_vector(layer.id), args.tolerance_m, args.fields)
    return _register(ctx, out, "dedupe", [layer], f"{changes.removed} duplicates removed from {layer.id}", changes)


class SliverArgs(BaseModel):
    min_area_m2: float = Field(default=tf.SLIVER_MIN_AREA_M2, ge=0, description="parts smaller than this (m²) go")
    min_compactness: float = Field(
        default=tf.SLIVER_MIN_COMPACTNESS, ge=0, lt=1, description="parts thinner than this (4πA/P²) go"
    )
    thin_below_m2: float | None = Field(
        default=tf.SLIVER_THIN_BELOW_M2,
        ge=0,
        description="only parts smaller than this (m²) are judged thin (a long road or river polygon stays); null: all",
    )


@tool(agent=V, args=SliverArgs, output=ArtifactKind.vector, accepts_empty=("layer",), inputs=LAYER)
def remove_slivers(ctx: ToolContext, args: SliverArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Remove sliver polygon parts: below an area (m²) or a compactness, measured in an equal-area CRS."""
    out, changes = tf.remove_slivers(
        ctx.store.read_vector(layer.id), args.min_area_m2, args.min_compactness, args.thin_below_m2
    )
    summary = f"{changes.changed} sliver parts removed from {layer.id}"
    return _register(ctx, out, "remove_slivers", [layer], summary, changes)


class CentroidArgs(BaseModel):
    method: Literal["centroid", "point_on_surface"] = Field(
        default="centroid", description="point_on_surface: a point surely inside"
    )


@tool(agent=V, args=CentroidArgs, output=ArtifactKind.vector, accepts_empty=("layer",), inputs=LAYER)
def centroids(ctx: ToolContext, args: CentroidArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """One point per feature (centroid or point on surface), computed in an equal-area CRS."""
    out, changes = tf.centroids(ctx.store.read_vector(layer.id), args.method)
    return _register(ctx, out, "centroids", [layer], f"{len(out)} {args.method}s of {layer.id}", changes)


class HullArgs(BaseModel):
    by: str | None = Field(default=None, description="field: one hull per value; null: one hull")


@tool(agent=V, args=HullArgs, output=ArtifactKind.vector, field_arg=("by", "layer"), inputs=LAYER)
def convex_hulls(ctx: ToolContext, args: HullArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Convex hull of the features, all together or per value of a field, with feature counts."""
    out, changes = tf.convex_hulls(ctx.store.read_vector(layer.id), args.by)
    summary = f"{len(out)} convex hulls of {layer.id}" + (f" by {args.by}" if args.by else "")
    return _register(ctx, out, "convex_hulls", [layer], summary, changes, by=args.by)


@tool(
    agent=V,
    args=NoArgs,
    output=ArtifactKind.vector,
    accepts_empty=("a", "b"),
    inputs=(InputSpec("a", VECTOR_KINDS, POLYGONAL), InputSpec("b", VECTOR_KINDS, POLYGONAL)),
)
def symmetric_difference(ctx: ToolContext, args: NoArgs, a: ArtifactRecord, b: ArtifactRecord) -> ArtifactRecord:
    """Areas in exactly one of two polygon layers (what changed between two extents)."""
    out, changes = tf.symmetric_difference(ctx.store.read_vector(a.id), ctx.store.read_vector(b.id))
    return _register(ctx, out, "symmetric_difference", [a, b], f"areas in {a.id} or {b.id}, not both", changes)


class CoerceArgs(BaseModel):
    types: dict[str, Literal["integer", "real", "text", "boolean", "date"]] = Field(
        min_length=1, description="field -> integer, real, text, boolean or date"
    )
    decimal: Literal["auto", ".", ","] = Field(
        default="auto", description="the decimal mark of numbers written as text (1.234,56: ','); auto: as they show"
    )


@tool(agent=V, args=CoerceArgs, output=ArtifactKind.vector, accepts_empty=("layer",), inputs=LAYER)
def coerce_types(ctx: ToolContext, args: CoerceArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Convert fields to integer, real, text, boolean or date, numbers and dates as people write them (1.234,56 €;
    3 de marzo de 2024); values that do not convert become null, counted."""
    out, changes = tf.coerce_types(ctx.store.read_vector(layer.id), dict(args.types), args.decimal)
    summary = f"{layer.id} with {', '.join(f'{k} as {v}' for k, v in args.types.items())}"
    return _register(ctx, out, "coerce_types", [layer], summary, changes)


class NullArgs(BaseModel):
    fields: list[str] | None = Field(default=None, description="fields that must have a value; null: all")
    geometry: bool = Field(default=True, description="also drop features without a geometry")
    blanks: bool = Field(default=True, description="empty text and placeholders (N/A, -, null) count as no value")


@tool(agent=V, args=NullArgs, output=ArtifactKind.vector, accepts_empty=("layer",), inputs=LAYER)
def drop_nulls(ctx: ToolContext, args: NullArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Drop features with missing values in the given fields (and without a geometry)."""
    out, changes = tf.drop_nulls(ctx.store.read_vector(layer.id), args.fields, args.geometry, args.blanks)
    return _register(ctx, out, "drop_nulls", [layer], f"{changes.removed} features of {layer.id} dropped", changes)


class GeometryTypeArgs(BaseModel):
    geometry: Literal["point", "line", "polygon"] = Field(description="the geometry family to keep")


@tool(agent=V, args=GeometryTypeArgs, output=ArtifactKind.vector, accepts_empty=("layer",), inputs=LAYER)
def select_geometry_type(ctx: ToolContext, args: GeometryTypeArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Keep one geometry family (points, lines or polygons) of a mixed layer, saying what else it held."""
    gdf = ctx.store.read_vector(layer.id)
    parts = tf.split_by_geometry_type(gdf)
    out = parts.get(args.geometry, gdf.iloc[0:0])
    others = {k: len(v) for k, v in parts.items() if k != args.geometry}
    notes = [f"left out: {', '.join(f'{n} {k}' for k, n in others.items())} features"] if others else []
    changes = tf.Changes(removed=len(gdf) - len(out), notes=notes)
    summary = f"{len(out)} {args.geometry} features of {layer.id} (of {len(gdf)})"
    return _register(ctx, out, "select_geometry_type", [layer], summary, changes, geometry_families=sorted(parts))


class WhereArgs(BaseModel):
    field: str = Field(min_length=1, description="the field to compare")
    op: tf.Comparison = Field(description="=, !=, >, >=, <, <=")
    value: str | float = Field(description="the value to compare with (a number for >, <)")


@tool(
    agent=V,
    args=WhereArgs,
    output=ArtifactKind.vector,
    field_arg=("field", "layer"),
    accepts_empty=("layer",),
    inputs=LAYER,
)
def filter_where(ctx: ToolContext, args: WhereArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Keep the features whose field compares to a value (population > 5000, severity = high)."""
    gdf = ctx.store.read_vector(layer.id)
    out, changes = tf.filter_where(gdf, args.field, args.op, args.value)
    summary = f"{len(out)} features of {layer.id} with {args.field} {args.op} {args.value} (of {len(gdf)})"
    return _register(
        ctx, out, "filter_where", [layer], summary, changes, filter={args.field: f"{args.op} {args.value}"}
    )


class RenameArgs(BaseModel):
    mapping: dict[str, str] = Field(min_length=1, description="old field name -> new field name")


@tool(agent=V, args=RenameArgs, output=ArtifactKind.vector, accepts_empty=("layer",), inputs=LAYER)
def rename_fields(ctx: ToolContext, args: RenameArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Rename fields (restore a shapefile's cut names: populati_1 -> population_male)."""
    out, changes = tf.rename_fields(ctx.store.read_vector(layer.id), args.mapping)
    shown = ", ".join(f"{a} -> {b}" for a, b in args.mapping.items())
    return _register(
        ctx, out, "rename_fields", [layer], f"{layer.id} with fields renamed ({shown})", changes, mapping=args.mapping
    )


class AddMeasureArgs(BaseModel):
    quantity: Literal["area", "length"] = Field(description="area (km², ha) or length (km) of each feature")


@tool(agent=V, args=AddMeasureArgs, output=ArtifactKind.vector, metric=True, accepts_empty=("layer",), inputs=LAYER)
def add_measure(ctx: ToolContext, args: AddMeasureArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Each feature with its geodesic area (area_km2, area_ha) or length (length_km) as a column."""
    out, changes = tf.add_measure(ctx.store.read_vector(layer.id), args.quantity)
    column = "area_km2" if args.quantity == "area" else "length_km"
    total = float(out[column].sum()) if len(out) else 0.0
    unit = "km2" if args.quantity == "area" else "km"
    summary = (
        f"{layer.id} with the geodesic {args.quantity} of each of its {len(out)} features"
        f" ({column}; sum {total:g} {unit.replace('2', '²')})"
    )
    shown = [{"column": column, "measure": args.quantity, "unit": unit, "label": args.quantity}]
    return _register(ctx, out, "add_measure", [layer], summary, changes, measured_column=column, shown=shown)


@tool(
    agent=V,
    args=NoArgs,
    output=ArtifactKind.vector,
    accepts_empty=("points",),
    inputs=(InputSpec("points", VECTOR_KINDS), InputSpec("polygons", VECTOR_KINDS, POLYGONAL)),
)
def count_points_in_polygons(
    ctx: ToolContext, args: NoArgs, points: ArtifactRecord, polygons: ArtifactRecord
) -> ArtifactRecord:
    """The polygons, each with the number of features in it (column points; 0 for none)."""
    out, changes = tf.count_points_in_polygons(ctx.store.read_vector(points.id), ctx.store.read_vector(polygons.id))
    summary = f"{int(out['points'].sum())} features of {points.id} counted in {len(out)} polygons of {polygons.id}"
    shown = [{"column": "points", "measure": "count", "unit": "count", "label": "count"}]
    return _register(ctx, out, "count_points_in_polygons", [polygons, points], summary, changes, shown=shown)


class NeighbourArgs(BaseModel):
    k: int = Field(ge=1, le=50, description="neighbours per feature")
    method: Literal["geodesic", "projected"] = Field(
        default="geodesic", description="distance on the ellipsoid or in a local projection"
    )
    label: str | None = Field(default=None, description="field naming the features")
    candidate_label: str | None = Field(default=None, description="field naming the candidates")


@tool(
    agent=V,
    args=NeighbourArgs,
    output=ArtifactKind.vector,
    metric=True,
    field_arg=("label", "features"),
    inputs=(InputSpec("features", VECTOR_KINDS), InputSpec("candidates", VECTOR_KINDS)),
)
def nearest_neighbours(
    ctx: ToolContext, args: NeighbourArgs, features: ArtifactRecord, candidates: ArtifactRecord
) -> ArtifactRecord:
    """For each feature its k nearest candidates, one line per pair with rank and distance in metres."""
    out, changes = tf.nearest_neighbours(
        ctx.store.read_vector(features.id),
        ctx.store.read_vector(candidates.id),
        args.k,
        args.method,
        args.label,
        args.candidate_label,
    )
    summary = f"the {args.k} nearest of {candidates.id} to each feature of {features.id} ({len(out)} pairs)"
    return _register(ctx, out, "nearest_neighbours", [features, candidates], summary, changes, k=args.k)


class WeightedGridArgs(BaseModel):
    cell_m: float = Field(gt=0, le=100_000, description="cell size in metres")
    fields: list[str] = Field(default_factory=list, description="count fields to share out by area (people)")


@tool(
    agent=V,
    args=WeightedGridArgs,
    output=ArtifactKind.vector,
    metric=True,
    inputs=(InputSpec("layer", VECTOR_KINDS, POLYGONAL),),
)
def area_weighted_grid(ctx: ToolContext, args: WeightedGridArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Overlay polygons on a UTM grid: area covered per cell and count fields shared out by area."""
    out, changes = tf.area_weighted_grid(ctx.store.read_vector(layer.id), args.cell_m, args.fields)
    summary = f"{len(out)} cells of {args.cell_m:g} m covered by {layer.id}"
    return _register(
        ctx, out, "area_weighted_grid", [layer], summary, changes, cell_m=args.cell_m, grid_crs=changes.crs
    )


class ManifestArgs(BaseModel):
    layer_id: str = Field(min_length=1, description="user:<name> of the user's layer whose file to list")


@tool(agent=V, args=ManifestArgs, output=ArtifactKind.table)
def file_manifest(ctx: ToolContext, args: ManifestArgs) -> ArtifactRecord:
    """List what a user's file holds: its layers with CRS, geometry types, feature counts and fields."""
    entry = ctx.layers.entry(args.layer_id)
    if not isinstance(entry, UserLayer):
        raise ToolFailed(f"'{args.layer_id}' is a sample layer, not a file of the user's", kind="invalid_input")
    path = entry.source_file if entry.source_file and Path(entry.source_file).exists() else entry.path
    found = formats.manifest(path)
    table = formats.manifest_table(found)
    notes = [n for layer in found.layers for n in layer.notes]
    return ctx.store.register_table(
        table,
        source="vector.file_manifest",
        summary=f"{len(found.layers)} layers in {Path(path).name} ({found.format})",
        extra={"by": "layer", "manifest": found.model_dump(mode="json"), "limitations": notes},
    )


_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,80}")


class SaveArgs(BaseModel):
    filename: str = Field(
        description="a file name; its extension is the format: .gpkg .geojson .shp .fgb .parquet .csv .kml"
    )

    @field_validator("filename")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        if not _FILE_NAME.fullmatch(value) or ".." in value:
            raise ValueError("a plain file name (letters, digits, _ . -), no folders")
        if Path(value).suffix.lower() not in formats.WRITE_FORMATS:
            raise ValueError(f"end the name in one of {', '.join(sorted(formats.WRITE_FORMATS))}")
        return value


@tool(agent=V, args=SaveArgs, output=ArtifactKind.table, inputs=LAYER)
def save_layer(ctx: ToolContext, args: SaveArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Save a layer to a file in the session's exports folder (format by extension), read back and checked."""
    folder = ctx.store.session_dir / EXPORTS
    folder.mkdir(exist_ok=True)
    report = formats.write_layer(ctx.store.read_vector(layer.id), folder / args.filename)
    table = pd.DataFrame(
        [{"value": args.filename, "format": report.format, "count": report.feature_count, "crs": report.crs}]
    )
    return ctx.store.register_table(
        table,
        source="vector.save_layer",
        inputs=[layer.id],
        summary=f"{layer.id} saved as {report.path} ({report.feature_count} features, {report.crs}; checked)",
        extra={"report": report.model_dump(mode="json"), "limitations": report.notes},
    )
