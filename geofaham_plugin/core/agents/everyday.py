"""Vector specialist: the everyday operations on the user's layers that relate, snap, tidy and rank them (issue 28,
cause 6): a spatial join that carries attributes, vertices snapped to a grid or to another layer, class values
normalised, the top N by a measure, a KML's folders merged into one layer. Each is a typed tool over an engine
function (engines/joins.py, engines/tidy.py, engines/kml.py); the words that ask for them are rows of
planning/data/operations.json, their arguments read from the instruction by :mod:`.said`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from ..domain.names import AgentName
from ..engines import joins, tidy
from ..engines import kml as kml_engine
from ..errors import ToolFailed
from ..store.models import ArtifactKind, ArtifactRecord
from .base import VECTOR_KINDS, InputSpec, ToolContext, tool
from .transforms import _register

V = AgentName.vector
LAYER = (InputSpec("layer", VECTOR_KINDS),)


class SpatialJoinArgs(BaseModel):
    predicate: joins.Predicate | None = Field(
        default=None,
        description="how a feature relates to the other layer's: within (points in polygons), contains (polygons "
        "holding points), intersects, nearest (with max_distance_m); null: chosen from the geometries",
    )
    max_distance_m: float | None = Field(
        default=None, gt=0, le=200_000, description="nearest only: the farthest (m) a joined feature may be"
    )
    fields: list[str] | None = Field(default=None, description="fields of the other layer to carry; null: all")
    aggregate: joins.Aggregate | None = Field(
        default=None,
        description="several matches: first, list (distinct values), sum, mean, min, max; null: first, or for "
        "polygons holding points numbers summed and text listed",
    )
    prefix: str = Field(default="", max_length=24, pattern=r"^[A-Za-z0-9_]*$", description="put before joined names")

    @model_validator(mode="after")
    def _distance_is_for_nearest(self) -> SpatialJoinArgs:
        if self.max_distance_m is not None and self.predicate not in (None, "nearest"):
            raise ValueError(f"max_distance_m is for predicate nearest, not {self.predicate}")
        return self


@tool(
    agent=V,
    args=SpatialJoinArgs,
    output=ArtifactKind.vector,
    overlap=("features", "candidates", "max_distance_m"),
    accepts_empty=("features", "candidates"),
    covers={"each": True, "distance": "max_distance_m", "k": 1},  # one row per feature, with its one nearest
    inputs=(
        InputSpec("features", VECTOR_KINDS, description="the layer that gets the attributes (every feature kept)"),
        InputSpec("candidates", VECTOR_KINDS, description="the layer whose attributes are joined"),
    ),
)
def spatial_join(
    ctx: ToolContext, args: SpatialJoinArgs, features: ArtifactRecord, candidates: ArtifactRecord
) -> ArtifactRecord:
    """Join attributes by location: each feature gets the attributes of the other layer's features it is within,
    contains, intersects or is nearest to (within a distance), with their count."""
    out, changes = joins.spatial_join(
        ctx.store.read_vector(features.id),
        ctx.store.read_vector(candidates.id),
        args.predicate,
        args.max_distance_m,
        args.fields,
        args.aggregate,
        args.prefix,
    )
    how = changes.notes[0].removeprefix("joined by ") if changes.notes else "location"
    matched = int((out[joins.COUNT_FIELD] > 0).sum()) if joins.COUNT_FIELD in out.columns else changes.changed
    summary = f"{len(out)} features of {features.id} with the attributes of {candidates.id} ({how}; {matched} matched)"
    return _register(ctx, out, "spatial_join", [features, candidates], summary, changes, predicate=how)


class GridSnapArgs(BaseModel):
    grid_m: float = Field(gt=0, le=100_000, description="the grid's cell size in metres")


@tool(
    agent=V,
    args=GridSnapArgs,
    output=ArtifactKind.vector,
    accepts_empty=("layer",),
    covers={"each": True, "distance": "grid_m"},
    inputs=LAYER,
)
def snap_to_grid(ctx: ToolContext, args: GridSnapArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Snap every vertex to a square grid of grid_m metres (the layer's metric CRS, else its UTM zone)."""
    out, changes = joins.snap_to_grid(ctx.store.read_vector(layer.id), args.grid_m)
    summary = f"{layer.id} snapped to a {args.grid_m:g} m grid in {changes.crs} ({changes.changed} vertices moved)"
    return _register(ctx, out, "snap_to_grid", [layer], summary, changes, grid_m=args.grid_m, grid_crs=changes.crs)


class LayerSnapArgs(BaseModel):
    tolerance_m: float = Field(gt=0, le=10_000, description="vertices this close (m) to the other layer move onto it")
    to: joins.SnapTarget = Field(
        default="edges",
        description="edges: onto a vertex of the other layer within the tolerance, else the closest point of its "
        "edges; vertices: onto its vertices only",
    )


@tool(
    agent=V,
    args=LayerSnapArgs,
    output=ArtifactKind.vector,
    overlap=("features", "candidates", "tolerance_m"),
    accepts_empty=("features",),
    covers={"each": True, "distance": "tolerance_m"},
    inputs=(
        InputSpec("features", VECTOR_KINDS, description="the layer whose vertices move"),
        InputSpec("candidates", VECTOR_KINDS, description="the layer they snap to (it does not move)"),
    ),
)
def snap_to_layer(
    ctx: ToolContext, args: LayerSnapArgs, features: ArtifactRecord, candidates: ArtifactRecord
) -> ArtifactRecord:
    """Snap vertices within a tolerance (m) onto another layer's vertices or edges; invalid results repaired."""
    out, changes = joins.snap_to_layer(
        ctx.store.read_vector(features.id), ctx.store.read_vector(candidates.id), args.tolerance_m, args.to
    )
    summary = (
        f"{features.id} snapped to the {args.to} of {candidates.id} within {args.tolerance_m:g} m"
        f" ({changes.changed} vertices moved)"
    )
    return _register(ctx, out, "snap_to_layer", [features, candidates], summary, changes, tolerance_m=args.tolerance_m)


class NormaliseArgs(BaseModel):
    field: str = Field(min_length=1, description="the field whose class values to tidy")
    mapping: dict[str, str] | None = Field(
        default=None, description="value as written -> value it becomes (case, accents and spaces ignored)"
    )
    case: tidy.Case = Field(default="common", description="common (the most frequent spelling), lower, upper, title")
    accents: bool = Field(default=True, description="false: take accents off")
    unmatched: Literal["keep", "null"] = Field(default="keep", description="values the mapping does not list")
    to_field: str | None = Field(default=None, description="write the result to a new field; null: in place")


@tool(
    agent=V,
    args=NormaliseArgs,
    output=ArtifactKind.vector,
    field_arg=("field", "layer"),
    accepts_empty=("layer",),
    covers={"each": True},
    inputs=LAYER,
)
def normalise_values(ctx: ToolContext, args: NormaliseArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Tidy a field's class values: spaces, case and accents made one spelling, or a mapping table applied."""
    out, changes = tidy.normalise_values(
        ctx.store.read_vector(layer.id),
        args.field,
        args.mapping,
        args.case,
        args.accents,
        args.unmatched,
        args.to_field,
    )
    summary = f"{layer.id} with the values of {args.field} normalised ({changes.changed} features changed)"
    return _register(ctx, out, "normalise_values", [layer], summary, changes, field=args.field)


class TopArgs(BaseModel):
    by: str = Field(min_length=1, description="the measure to rank by: a numeric field, or area or length")
    n: int = Field(ge=1, le=10_000, description="how many to keep")
    order: tidy.Order = Field(default="desc", description="desc: the largest first; asc: the smallest first")
    per: str | None = Field(default=None, description="a field: the top n of each of its values; null: overall")
    ties: tidy.Ties = Field(default="first", description="at the cut: first (exactly n) or all tied ones")


@tool(
    agent=V,
    args=TopArgs,
    output=ArtifactKind.vector,
    field_arg=("per", "layer"),
    accepts_empty=("layer",),
    covers={"rank": True, "k": "n"},
    inputs=LAYER,
)
def top_n(ctx: ToolContext, args: TopArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """The n features with the largest (or smallest) value of a field, area or length, ranked; ties at the cut said."""
    gdf = ctx.store.read_vector(layer.id)
    out, changes = tidy.top_n(gdf, args.by, args.n, args.order, args.per, args.ties)
    which = "largest" if args.order == "desc" else "smallest"
    summary = f"the {len(out)} features of {layer.id} with the {which} {args.by} (of {len(gdf)})"
    measure, unit = {"area": ("area", "km2"), "length": ("length", "km")}.get(args.by, ("value", "none"))
    shown = [{"column": tidy.MEASURES.get(args.by, args.by), "measure": measure, "unit": unit, "label": args.by}]
    return _register(ctx, out, "top_n", [layer], summary, changes, by=args.by, n=args.n, order=args.order, shown=shown)


class KmlFoldersArgs(BaseModel):
    dates: bool = Field(default=True, description="add a date column from each placemark's time stamp or description")


@tool(
    agent=V,
    args=KmlFoldersArgs,
    output=ArtifactKind.vector,
    accepts_empty=("layer",),
    inputs=(InputSpec("layer", VECTOR_KINDS, description="any folder of your KML or KMZ file, loaded"),),
)
def merge_kml_folders(ctx: ToolContext, args: KmlFoldersArgs, layer: ArtifactRecord) -> ArtifactRecord:
    """Merge every folder of the user's KML/KMZ into one layer with a category field (the folder's name) and a
    date parsed from each placemark's description."""
    layer_id = layer.extra.get("layer_id")
    entry = ctx.layers.entry(str(layer_id)) if layer_id else None
    files = [p for p in (getattr(entry, "source_file", None), getattr(entry, "path", None)) if p]
    kml = next((Path(p) for p in files if Path(p).suffix.lower() in (".kml", ".kmz")), None)
    if kml is None:
        raise ToolFailed(
            f"{layer.id} was not read from a KML or KMZ file of yours",
            kind="invalid_input",
            hint="load a folder of the KML with load_layer(user:<folder>) first, or give the .kml/.kmz as a layer",
        )
    out, changes = kml_engine.merge_folders(kml, args.dates)
    folders = out[kml_engine.CATEGORY].nunique()
    summary = f"{len(out)} placemarks of {kml.name} in one layer, {folders} folders in {kml_engine.CATEGORY}"
    return _register(ctx, out, "merge_kml_folders", [layer], summary, changes, kml=kml.name)
