"""The Raster specialist's typed operations, which a small model can chain without writing code:
spectral index, dNBR, index change, USGS burn severity, flood extent, threshold, polygons and zonal
statistics. Inputs are assembled by :mod:`.scene` (band and time order checked before any pixel is
read), outputs written and measured by :mod:`.outputs`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from ...domain.geometry import POLYGONAL
from ...domain.names import AgentName
from ...engines import raster as rx
from ...engines.raster import ops
from ...errors import ModelRetry, ToolFailed
from ...store.models import ArtifactKind, ArtifactRecord, RasterMeta
from ..base import VECTOR_KINDS, InputSpec, ToolContext, tool
from .outputs import limitations_of, register_classes, register_float, time_tags
from .scene import aoi_geometry, bands_of, check_bands, check_order, common_grid, load_scene

R = AgentName.raster
SCENES = frozenset({ArtifactKind.raster, ArtifactKind.item_set})
RASTER = frozenset({ArtifactKind.raster})
AOI = InputSpec("aoi", VECTOR_KINDS, POLYGONAL, "optional area of interest: pixels outside it are no data")
IndexName = Literal["ndvi", "ndwi", "mndwi", "nbr", "ndbi"]
WaterIndex = Literal["ndwi", "mndwi"]


class IndexArgs(BaseModel):
    index: IndexName = Field(description="ndvi (vegetation), ndwi/mndwi (water), nbr (burn), ndbi (built-up)")
    cloud_mask: bool = Field(default=True, description="mask clouds with the SCL band of item sets")
    resolution_m: float | None = Field(default=None, gt=0, le=1000, description="output pixel size for item sets")


@tool(
    agent=R,
    args=IndexArgs,
    output=ArtifactKind.raster,
    optional_inputs=("aoi",),
    inputs=(InputSpec("scene", SCENES, description="raster or item set"), AOI),
)
def compute_index(
    ctx: ToolContext, args: IndexArgs, scene: ArtifactRecord, aoi: ArtifactRecord | None = None
) -> ArtifactRecord:
    """A spectral index (NDVI, NDWI, MNDWI, NBR, NDBI) of one scene, as a float raster."""
    bands = ops.required_bands(args.index)
    check_bands(scene, "scene", bands)
    geom = aoi_geometry(ctx, aoi)
    grid = common_grid(ctx, [scene], bands, geom, args.resolution_m)
    ds = load_scene(ctx, scene, bands, grid, geom, args.cloud_mask)
    name = args.index.upper()
    return register_float(
        ctx,
        ops.spectral_index(ds, args.index),
        grid,
        name=args.index,
        source=f"raster.compute_index:{args.index}",
        summary=f"{name} of {scene.id}: mean {{mean:.3f}} (min {{min:.3f}}, max {{max:.3f}}; {{valid_pct:.0f}} % valid pixels)",
        inputs=[scene.id] + ([aoi.id] if aoi else []),
        tags=time_tags(ds, records=[scene] if scene.kind is ArtifactKind.raster else []),
        extra={"index": args.index, "limitations": limitations_of(scene, datasets=[ds])},
    )


class PairArgs(BaseModel):
    cloud_mask: bool = Field(default=True, description="mask clouds with the SCL band of item sets")
    resolution_m: float | None = Field(default=None, gt=0, le=1000, description="output pixel size for item sets")


def _pair(
    ctx: ToolContext,
    pre: ArtifactRecord,
    post: ArtifactRecord,
    aoi: ArtifactRecord | None,
    bands: Sequence[str],
    args: PairArgs,
) -> tuple[rx.Grid, Any, Any, list[str], dict[str, str]]:
    check_bands(pre, "pre", bands)
    check_bands(post, "post", bands)
    check_order(pre, post)
    geom = aoi_geometry(ctx, aoi)
    grid = common_grid(ctx, [pre, post], bands, geom, args.resolution_m)
    a = load_scene(ctx, pre, bands, grid, geom, args.cloud_mask)
    b = load_scene(ctx, post, bands, grid, geom, args.cloud_mask)
    inputs = [pre.id, post.id] + ([aoi.id] if aoi else [])
    tags = time_tags(a, b, records=[r for r in (pre, post) if r.kind is ArtifactKind.raster])
    return grid, a, b, inputs, tags


@tool(
    agent=R,
    args=PairArgs,
    output=ArtifactKind.raster,
    optional_inputs=("aoi",),
    overlap=("pre", "post", None),
    inputs=(
        InputSpec("pre", SCENES, description="pre-event raster or item set"),
        InputSpec("post", SCENES, description="post-event raster or item set"),
        AOI,
    ),
)
def dnbr(
    ctx: ToolContext, args: PairArgs, pre: ArtifactRecord, post: ArtifactRecord, aoi: ArtifactRecord | None = None
) -> ArtifactRecord:
    """dNBR = NBR(pre) − NBR(post) from nir and swir22: positive where vegetation burned."""
    grid, a, b, inputs, tags = _pair(ctx, pre, post, aoi, ops.INDICES["nbr"], args)
    return register_float(
        ctx,
        ops.dnbr(a, b),
        grid,
        name="dNBR",
        source="raster.dnbr",
        inputs=inputs,
        tags=tags,
        summary=f"dNBR of {pre.id} → {post.id}: mean {{mean:.3f}} (min {{min:.3f}}, max {{max:.3f}}; {{valid_pct:.0f}} % valid pixels)",
        extra={"index": "dnbr", "limitations": limitations_of(pre, post, datasets=[a, b])},
    )


class ChangeArgs(PairArgs):
    index: IndexName = Field(description="index whose change (post − pre) is computed")


@tool(
    agent=R,
    args=ChangeArgs,
    output=ArtifactKind.raster,
    optional_inputs=("aoi",),
    overlap=("pre", "post", None),
    inputs=(
        InputSpec("pre", SCENES, description="pre-event raster or item set"),
        InputSpec("post", SCENES, description="post-event raster or item set"),
        AOI,
    ),
)
def index_change(
    ctx: ToolContext, args: ChangeArgs, pre: ArtifactRecord, post: ArtifactRecord, aoi: ArtifactRecord | None = None
) -> ArtifactRecord:
    """Change of a spectral index between two dates, post − pre (negative NDVI change = vegetation loss)."""
    grid, a, b, inputs, tags = _pair(ctx, pre, post, aoi, ops.required_bands(args.index), args)
    delta = ops.index_change(a, b, args.index)
    name = f"d{args.index.upper()}"
    return register_float(
        ctx,
        delta,
        grid,
        name=name,
        source=f"raster.index_change:{args.index}",
        inputs=inputs,
        tags=tags,
        summary=f"{name} (post − pre) of {pre.id} → {post.id}: mean {{mean:.3f}} (min {{min:.3f}}, max {{max:.3f}}; {{valid_pct:.0f}} % valid pixels)",
        extra={"index": f"d{args.index}", "limitations": limitations_of(pre, post, datasets=[a, b])},
    )


class NoArgs(BaseModel):
    pass


@tool(agent=R, args=NoArgs, output=ArtifactKind.raster, inputs=(InputSpec("dnbr", RASTER, description="dNBR raster"),))
def burn_severity(ctx: ToolContext, args: NoArgs, dnbr: ArtifactRecord) -> ArtifactRecord:
    """USGS burn-severity classes from dNBR (<0.1 unburned, 0.1-0.27 low, 0.27-0.44 moderate-low,
    0.44-0.66 moderate-high, >=0.66 high) with the burned area per class in km²."""
    kind = dnbr.extra.get("index")
    if kind is not None and kind != "dnbr":
        raise ToolFailed(
            f"{dnbr.id} is a {kind} raster, not dNBR", kind="invalid_input", hint="compute dnbr(pre, post) first"
        )
    ds = rx.load_raster(ctx.store.abs_path(dnbr.id))
    grid = ds.attrs["grid"]
    labels = dict(enumerate(ops.DNBR_LABELS))
    return register_classes(
        ctx,
        ops.burn_severity(next(iter(ds.data_vars.values())).data),
        grid,
        labels,
        name="burn_severity",
        source="raster.burn_severity",
        headline=f"Burned area (dNBR >= {ops.BURNED_DNBR:g}, USGS classes) from {dnbr.id}",
        inputs=[dnbr.id],
        tags=time_tags(records=[dnbr]),
        highlight=[1, 2, 3, 4],
        extra={
            "scheme": "USGS dNBR (Key & Benson 2006)",
            "breaks": list(ops.DNBR_BREAKS),
            "limitations": limitations_of(dnbr),
        },
    )


class FloodArgs(BaseModel):
    index: WaterIndex = Field(default="mndwi", description="water index: mndwi (needs swir16) or ndwi")
    threshold: float = Field(default=0.0, ge=-1, le=1, description="water where the index is above this (default 0)")
    cloud_mask: bool = Field(default=True, description="mask clouds with the SCL band of item sets")
    resolution_m: float | None = Field(default=None, gt=0, le=1000, description="output pixel size for item sets")


@tool(
    agent=R,
    args=FloodArgs,
    output=ArtifactKind.raster,
    optional_inputs=("pre", "aoi"),
    inputs=(
        InputSpec("post", SCENES, description="post-event raster or item set"),
        InputSpec("pre", SCENES, description="optional pre-event scene: separates new flooding from permanent water"),
        AOI,
    ),
)
def flood_extent(
    ctx: ToolContext,
    args: FloodArgs,
    post: ArtifactRecord,
    pre: ArtifactRecord | None = None,
    aoi: ArtifactRecord | None = None,
) -> ArtifactRecord:
    """Flood extent from a water index above a threshold; with a pre-event scene, water present before
    is reported as permanent water, not flood. Flooded area in km²."""
    index = args.index
    scenes = [r for r in (pre, post) if r is not None]
    if index == "mndwi" and any("swir16" not in bands_of(r) for r in scenes):
        index = "ndwi"
        ctx.notes.append("flood_extent: no swir16 band, NDWI (green/nir) used instead of MNDWI")
    bands = ops.required_bands(index)
    for r, slot in ((post, "post"), (pre, "pre")):
        if r is not None:
            check_bands(r, slot, bands)
    if pre is not None:
        check_order(pre, post)
    geom = aoi_geometry(ctx, aoi)
    grid = common_grid(ctx, scenes, bands, geom, args.resolution_m)
    b = load_scene(ctx, post, bands, grid, geom, args.cloud_mask)
    a = load_scene(ctx, pre, bands, grid, geom, args.cloud_mask) if pre is not None else None
    classes = ops.flood_classes(
        ops.spectral_index(b, index), ops.spectral_index(a, index) if a is not None else None, args.threshold
    )
    labels = ops.FLOOD_LABELS if pre is not None else ops.WATER_LABELS
    what = "Flooded area (new water" if pre is not None else "Water area ("
    limitations = limitations_of(*scenes, datasets=[d for d in (a, b) if d is not None])
    if pre is None:
        limitations.append("no pre-event scene: permanent water is counted as flooded")
    return register_classes(
        ctx,
        classes,
        grid,
        labels,
        name="flood_extent",
        source=f"raster.flood_extent:{index}",
        headline=f"{what}, {index.upper()} > {args.threshold:g}) from {post.id}",
        highlight=[1],
        inputs=[r.id for r in scenes] + ([aoi.id] if aoi else []),
        tags=time_tags(
            *[d for d in (a, b) if d is not None], records=[r for r in scenes if r.kind is ArtifactKind.raster]
        ),
        extra={"index": index, "threshold": args.threshold, "limitations": limitations},
    )


class ThresholdArgs(BaseModel):
    value: float = Field(description="threshold value")
    op: Literal[">", ">=", "<", "<="] = Field(default=">", description="comparison: pixel op value -> 1")
    label: str = Field(default="selected", max_length=40, description="name of the selected class")


@tool(agent=R, args=ThresholdArgs, output=ArtifactKind.raster, inputs=(InputSpec("raster", RASTER),))
def threshold(ctx: ToolContext, args: ThresholdArgs, raster: ArtifactRecord) -> ArtifactRecord:
    """A 0/1 mask of the pixels where band 1 compares to a value (e.g. dNBR >= 0.27), with its area."""
    ds = rx.load_raster(ctx.store.abs_path(raster.id))
    grid = ds.attrs["grid"]
    mask = ops.threshold(next(iter(ds.data_vars.values())).data, args.value, args.op)
    return register_classes(
        ctx,
        mask,
        grid,
        {0: "other", 1: args.label},
        name="mask",
        source="raster.threshold",
        headline=f"{args.label} (band 1 {args.op} {args.value:g}) in {raster.id}",
        highlight=[1],
        inputs=[raster.id],
        tags=time_tags(records=[raster]),
        extra={"value": args.value, "op": args.op, "limitations": limitations_of(raster)},
    )


class PolygonizeArgs(BaseModel):
    classes: list[int] | None = Field(default=None, description="class values to trace; default: every class except 0")


@tool(
    agent=R,
    args=PolygonizeArgs,
    output=ArtifactKind.vector,
    inputs=(InputSpec("raster", RASTER, description="class raster (burn severity, flood extent, mask)"),),
)
def polygonize(ctx: ToolContext, args: PolygonizeArgs, raster: ArtifactRecord) -> ArtifactRecord:
    """Polygons of the classes of a class raster (one multipolygon per class), with their areas."""
    meta = raster.metadata
    if not isinstance(meta, RasterMeta) or not meta.bands or not meta.bands[0].dtype.startswith(("uint", "int")):
        raise ToolFailed(
            f"{raster.id} is not a class raster",
            kind="invalid_input",
            hint="classify first (burn_severity, flood_extent or threshold)",
        )
    import rasterio

    with rasterio.open(ctx.store.abs_path(raster.id)) as src:
        grid = rx.grid_of(src)
        data = src.read(1)
        nodata = src.nodata
    if nodata is not None and nodata != ops.NODATA_CLASS:
        data = np.where(data == nodata, ops.NODATA_CLASS, data)
    labels = {int(k): v for k, v in (raster.extra.get("classes") or {}).items()}
    values = (
        args.classes
        if args.classes is not None
        else sorted(int(v) for v in np.unique(data) if v not in (0, ops.NODATA_CLASS))
    )
    gdf = ops.polygonize(data.astype("uint8"), grid, values=values, labels=labels)
    total = gdf["area_m2"].sum() / 1e6 if len(gdf) else 0.0
    return ctx.store.register_vector(
        gdf,
        source="raster.polygonize",
        inputs=[raster.id],
        summary=f"{len(gdf)} class polygons from {raster.id} ({', '.join(gdf['label'].astype(str)) or 'none'}; {total:.2f} km²)",
        extra={"name_field": "label", "classes": labels, "limitations": limitations_of(raster)},
    )


def _band(ctx: ToolContext, raster: ArtifactRecord, band: int) -> tuple[Any, Any, list[str]]:
    """(the band's lazy values, the raster's grid, its band names); one clear failure for a missing band."""
    ds = rx.load_raster(ctx.store.abs_path(raster.id))
    names = list(ds.data_vars)
    if band > len(names):
        raise ToolFailed(f"{raster.id} has {len(names)} band(s)", kind="invalid_input")
    return ds[names[band - 1]].data, ds.attrs["grid"], names


def _zone_frame(ctx: ToolContext, zones: ArtifactRecord, by: str | None) -> Any:
    """The zone polygons, with the field ``by`` when one is asked (else one clear failure naming the fields)."""
    gdf = ctx.store.read_vector(zones.id)
    if by and by not in gdf.columns:
        raise ToolFailed(
            f"{zones.id} has no field '{by}'",
            kind="invalid_input",
            hint="fields: " + ", ".join(c for c in gdf.columns if c != "geometry"),
        )
    return gdf


class ZonalArgs(BaseModel):
    by: str | None = Field(default=None, description="zone field to group by (vector zones); null: each feature")
    band: int = Field(default=1, ge=1, description="band of the value raster")


@tool(
    agent=R,
    args=ZonalArgs,
    output=ArtifactKind.text,
    inputs=(
        InputSpec("raster", RASTER, description="values (index, dNBR ...)"),
        InputSpec("zones", VECTOR_KINDS | RASTER, description="zone polygons, or a class raster on the same grid"),
    ),
)
def zonal_stats(ctx: ToolContext, args: ZonalArgs, raster: ArtifactRecord, zones: ArtifactRecord) -> ArtifactRecord:
    """Mean, min, max, std and area of raster values inside each zone (polygons or raster classes)."""
    values, grid, names = _band(ctx, raster, args.band)
    if zones.kind is ArtifactKind.raster:
        zgrid = rx.raster_info(ctx.store.abs_path(zones.id)).grid
        if not zgrid.same_as(grid):
            raise ToolFailed(
                f"class raster {zones.id} is not on the grid of {raster.id}",
                kind="invalid_input",
                hint="polygonize the classes and pass the polygons as zones",
            )
        import rasterio

        with rasterio.open(ctx.store.abs_path(zones.id)) as src:
            classes = src.read(1)
        labels = {int(k): v for k, v in (zones.extra.get("classes") or {}).items()}
        table = ops.zonal_stats_by_class(values, classes, grid, labels)
    else:
        gdf = _zone_frame(ctx, zones, args.by)
        label = args.by or zones.extra.get("name_field")
        table = ops.quiet(ops.zonal_stats, values, grid, gdf, by=args.by)
        if label and not args.by and label in gdf.columns:
            table["zone"] = [str(v) for v in gdf[label]]
    if table.empty or int(table["pixels"].sum()) == 0:
        raise ToolFailed(f"no valid pixel of {raster.id} inside the zones of {zones.id}", kind="empty")
    bands = raster.metadata.bands if isinstance(raster.metadata, RasterMeta) else []
    what = bands[args.band - 1].name if len(bands) >= args.band else names[args.band - 1]
    parts = [
        f"{r.zone}: mean {r.mean:.3f} ({r.pixels:,} pixels, {r.area_m2 / 1e6:.2f} km²)"
        for r in table.itertuples()
        if r.pixels
    ]
    headline = f"Mean {what} of {raster.id} by zone of {zones.id} — " + "; ".join(parts)
    lines = [headline, "", "| zone | pixels | area km² | mean | min | max | std |", "|---|---|---|---|---|---|---|"]
    lines += [
        f"| {r.zone} | {r.pixels:,} | {r.area_m2 / 1e6:.3f} | {r.mean:.4f} | {r.min:.4f} | {r.max:.4f} | {r.std:.4f} |"
        for r in table.itertuples()
    ]
    records = [
        {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in row.items()}
        for row in table.to_dict(orient="records")
    ]
    return ctx.store.register_text(
        "\n".join(lines),
        source="raster.zonal_stats",
        inputs=[raster.id, zones.id],
        summary=headline[:300],
        extra={"zones": records, "band": what, "by": args.by, "limitations": limitations_of(raster, zones)},
    )


class LoadRasterLayerArgs(BaseModel):
    layer_id: str = Field(min_length=1, description="user:<name> of one of the user's rasters")


@tool(agent=R, args=LoadRasterLayerArgs, output=ArtifactKind.raster)
def load_raster_layer(ctx: ToolContext, args: LoadRasterLayerArgs) -> ArtifactRecord:
    """Load one of the user's rasters (population, elevation, an image, a mask ...) or a sample raster
    (``raster:<id>``) by its catalogue id, copied as a COG."""
    from ...engines.layers import UserLayer

    entry = ctx.layers.entry(args.layer_id)  # ToolFailed naming the known ids when there is none
    if not isinstance(entry, UserLayer) or entry.role != "values":
        raise ToolFailed(f"'{args.layer_id}' is not one of your rasters", kind="invalid_input", hint="use load_layer")
    return ctx.store.register_raster_file(
        entry.path,
        source=f"raster.load_raster_layer:{entry.id}",
        summary=f"{entry.title} ({entry.bands} band(s), {entry.crs})",
        extra={
            "layer_id": entry.id,
            "role": entry.role,
            "attribution": entry.attribution,
            "limitations": list(entry.limitations),
            **({"index": entry.index} if entry.index else {}),
            **{k: v for k in ("raster_kind", "when", "date", "sensor", "units", "event") if (v := getattr(entry, k))},
        },
    )


RasterStat = Literal["sum", "mean", "median", "min", "max", "share_above", "share", "area"]


class RasterStatsArgs(BaseModel):
    stat: RasterStat = Field(
        description="sum (people in a population raster), mean, median, min, max, share_above a threshold, or the "
        "share / area (km²) of the pixels at or above 'above' and below 'below'"
    )
    above: float | None = Field(default=None, description="share_above, share, area: pixels at or above this")
    below: float | None = Field(default=None, description="share, area: pixels below this")
    by: str | None = Field(default=None, description="zone field: one value per zone; null: one value over all zones")
    band: int = Field(default=1, ge=1)


def _whole_grid(grid: Any) -> Any:
    """The raster's extent as one zone (a statistic over the whole raster)."""
    import geopandas as gpd
    from shapely.geometry import box

    return gpd.GeoDataFrame(geometry=[box(*grid.bounds)], crs=grid.crs)


def _bounds_text(above: float | None, below: float | None) -> str:
    if above is not None and below is not None:
        return f"from {above:g} up to {below:g}"
    return f"at or above {above:g}" if above is not None else f"below {below:g}"


@tool(
    agent=R,
    args=RasterStatsArgs,
    output=ArtifactKind.table,
    optional_inputs=("zones",),
    inputs=(
        InputSpec("raster", RASTER, description="values (population, elevation, an index ...)"),
        InputSpec(
            "zones", VECTOR_KINDS, POLYGONAL, description="the area(s): a hazard extent, your area, zones; none: all"
        ),
    ),
)
def raster_stats(
    ctx: ToolContext, args: RasterStatsArgs, raster: ArtifactRecord, zones: ArtifactRecord | None = None
) -> ArtifactRecord:
    """One statistic of a raster's values inside an area (zones merged, overlaps once), or per zone by a field; the
    share or area (geodesic, per pixel row) of the pixels within thresholds; over the whole raster without zones."""
    import pandas as pd

    values, grid, _ = _band(ctx, raster, args.band)
    gdf = _zone_frame(ctx, zones, args.by) if zones is not None else _whole_grid(grid)
    if args.by and zones is None:
        raise ModelRetry("'by' groups by a field of the zones: give zones, or no 'by'")
    if (args.stat == "share_above") != (args.above is not None and args.stat not in ("share", "area")):
        raise ModelRetry("share_above needs 'above' (the threshold); the other statistics take none")
    bounded = args.stat in ("share", "area")
    if bounded and args.above is None and args.below is None:
        raise ModelRetry(f"{args.stat} needs 'above' and/or 'below' (the thresholds)")
    if args.below is not None and not bounded:
        raise ModelRetry("'below' bounds a share or an area (stat share or area)")
    whole = gdf.dissolve() if not args.by else gdf  # one area: overlapping zones count their pixels once
    table = ops.quiet(ops.zonal_stats, values, grid, whole, by=args.by, above=args.above, below=args.below)
    if int(table["pixels"].sum()) == 0:
        where = zones.id if zones is not None else "the raster"
        raise ToolFailed(
            f"no valid pixel of {raster.id} inside {where}",
            kind="empty",
            hint="the raster may not cover the area: check both on the map",
        )
    total = (
        table.iloc[0]
        if not args.by
        else ops.quiet(ops.zonal_stats, values, grid, gdf.dissolve(), by=None, above=args.above, below=args.below).iloc[
            0
        ]
    )
    column = {"share": "share_above", "area": "area_within_m2"}.get(args.stat, args.stat)
    out = pd.DataFrame(
        {
            "value": table["zone"].astype(str) if args.by else ["all"],
            args.stat: table[column].astype(float),
            "n": table["pixels"].astype(int),
            "area_km2": table["area_m2"].astype(float) / 1e6,
        }
    ).sort_values(args.stat, ascending=False, kind="stable", na_position="last")
    layer = raster.extra.get("layer_id") or raster.extra.get("index") or raster.id
    what = str(layer).removeprefix("user:").removeprefix("raster:")
    amount = float(total[column])
    share = args.stat in ("share_above", "share")
    area = args.stat == "area"
    if share:  # stated as a percentage of the area's valid pixels
        out[args.stat] = out[args.stat] * 100
        amount *= 100
    if area:
        out[args.stat] = out[args.stat] / 1e6
        amount /= 1e6
    where = zones.id if zones is not None else f"the whole of {raster.id}"
    bounds = _bounds_text(args.above, args.below) if (share or area) else ""
    label = f"share of {what} {bounds}" if share else f"area of {what} {bounds}" if area else f"{args.stat} of {what}"
    return ctx.store.register_table(
        out.reset_index(drop=True),
        source="raster.raster_stats",
        inputs=[raster.id] + ([zones.id] if zones is not None else []),
        summary=f"{label} inside {where}: {amount:g}{' %' if share else ' km²' if area else ''}"
        + f" ({int(total['pixels']):,} pixels)"
        + (f" by {args.by}" if args.by else ""),
        extra={
            "by": args.by,
            "stat": args.stat,
            "value": amount,
            "n": int(total["pixels"]),
            "limitations": limitations_of(raster, *([zones] if zones is not None else []))
            + ([] if zones is not None else [f"taken over the whole raster {raster.id} (no area was given)"]),
            "stated": {
                "measure": "share" if share else "area" if area else args.stat,
                "unit": "percent" if share else "km2" if area else "none",
                "column": args.stat,
                "label": label,
                "total": amount,
            },
        },
    )


class ClassAreasArgs(BaseModel):
    classification: str = Field(description="a named classification of rasters.json (usgs_dnbr: burn severity)")
    measure: Literal["area", "share"] = Field(default="area", description="area (km²) or share (%) of each class")
    band: int = Field(default=1, ge=1)


@tool(
    agent=R,
    args=ClassAreasArgs,
    output=ArtifactKind.table,
    optional_inputs=("zones",),
    inputs=(
        InputSpec("raster", RASTER, description="the values the classification classifies (dNBR ...)"),
        InputSpec("zones", VECTOR_KINDS, POLYGONAL, description="the area (a mask's polygons, a perimeter); none: all"),
    ),
)
def class_areas(
    ctx: ToolContext, args: ClassAreasArgs, raster: ArtifactRecord, zones: ArtifactRecord | None = None
) -> ArtifactRecord:
    """The area (km², geodesic per pixel row) and share of each class of a named classification of a raster's
    values (USGS dNBR burn severity: unburned, low, moderate-low, moderate-high, high), inside an area or over the
    whole raster; the total is the area of the classes that count as burned (from rasters.json)."""
    import pandas as pd

    from ...domain.rasters import raster_vocabulary

    known = raster_vocabulary().classifications
    if args.classification not in known:
        raise ModelRetry(f"classification must be one of {', '.join(known)}")
    c = known[args.classification]
    index = raster.extra.get("index")
    if index is not None and index != c.index:
        raise ToolFailed(
            f"{raster.id} holds {index}, and {c.title} classifies {c.index}",
            kind="invalid_input",
            hint=f"compute {c.index} first",
        )
    values, grid, _ = _band(ctx, raster, args.band)
    gdf = ctx.store.read_vector(zones.id) if zones is not None else None
    table = ops.quiet(ops.class_areas_inside, values, grid, c.breaks, c.labels, gdf)
    if table.empty or int(table["pixels"].sum()) == 0:
        where = zones.id if zones is not None else "the raster"
        raise ToolFailed(f"no valid pixel of {raster.id} inside {where}", kind="empty")
    first = c.labels.index(c.burned_from) if c.burned_from else 0
    counted = table[table["class"] >= first]
    total_km2 = float(counted["area_m2"].sum()) / 1e6
    total_share = float(counted["pixels"].sum()) / float(table["pixels"].sum()) * 100
    column = "area_km2" if args.measure == "area" else "share"
    out = pd.DataFrame(
        {
            "value": table["label"].astype(str),
            "area_km2": table["area_m2"].astype(float) / 1e6,
            "share": table["share"].astype(float) * 100,
            "n": table["pixels"].astype(int),
        }
    )
    scheme = c.title.split(" (")[0]
    label = f"burned {args.measure} ({c.burned_from} or above, {scheme})" if c.burned_from else args.measure
    row_label = f"{args.measure} by {scheme} class"
    total = total_km2 if args.measure == "area" else total_share
    where = zones.id if zones is not None else f"the whole of {raster.id}"
    parts = "; ".join(f"{r.value} {r.area_km2:.3f} km² ({r.share:.1f} %)" for r in out.itertuples())
    return ctx.store.register_table(
        out,
        source=f"raster.class_areas:{args.classification}",
        inputs=[raster.id] + ([zones.id] if zones is not None else []),
        summary=f"{c.title} inside {where}: {parts}"[:300],
        extra={
            "by": "class",
            "classification": args.classification,
            "breaks": list(c.breaks),
            "value": total,
            "n": int(table["pixels"].sum()),
            "limitations": limitations_of(raster, *([zones] if zones is not None else []))
            + ([] if zones is not None else [f"taken over the whole raster {raster.id} (no area was given)"])
            + [
                f"classes of {c.title}: breaks "
                + ", ".join(f"{b:g}" for b in c.breaks)
                + " (a class holds its lower break)"
            ],
            "stated": {
                "measure": args.measure,
                "unit": "km2" if args.measure == "area" else "percent",
                "column": column,
                "label": label,
                "row_label": row_label,
                "total": total,
            },
        },
    )
