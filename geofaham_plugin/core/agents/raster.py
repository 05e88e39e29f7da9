"""Raster specialist: typed operations a small model can chain without writing code (index, dNBR,
burn severity, flood extent, threshold, polygons, zonal statistics), and ``run_python`` for models
that write code, run in a separate, resource-limited, network-less sandbox process.

Scenes are raster artifacts or STAC item sets; both are read lazily onto one grid (the first raster
input's grid, else the items' native lattice over the AOI). Outputs are written window by window
and registered as COGs whose metadata the store computes from the file; summaries quote numbers read
back from the written file, never from a model. Band and time order are checked here, before any
pixel is read: a missing band or a "pre" scene later than the "post" one is an ``invalid_input``."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import numpy as np
import shapely
from pydantic import BaseModel, Field

from ..engines import raster as rx
from ..engines.raster import compute, ops
from ..engines.raster.bands import canonical_band
from ..errors import ToolFailed
from ..domain.geometry import POLYGONAL
from ..domain.names import AgentName
from ..store.models import ArtifactKind, ArtifactRecord
from .base import VECTOR_KINDS, InputSpec, ToolContext, tool

R = AgentName.raster
SCENES = frozenset({ArtifactKind.raster, ArtifactKind.item_set})
RASTER = frozenset({ArtifactKind.raster})
AOI = InputSpec("aoi", VECTOR_KINDS, POLYGONAL, "optional area of interest: pixels outside it are no data")
IndexName = Literal["ndvi", "ndwi", "mndwi", "nbr", "ndbi"]
WaterIndex = Literal["ndwi", "mndwi"]


# ---------------------------------------------------------------------------------- helpers
def _aoi_geom(ctx: ToolContext, aoi: ArtifactRecord | None):
    if aoi is None:
        return None
    gdf = ctx.store.read_vector(aoi.id).to_crs(4326)
    geom = shapely.union_all([g for g in gdf.geometry if g is not None and not g.is_empty])
    if geom.is_empty:
        raise ToolFailed(f"the AOI {aoi.id} is empty", kind="empty")
    return shapely.make_valid(geom)


def bands_of(record: ArtifactRecord) -> list[str]:
    """Canonical band names of a raster artifact or item set, from its metadata."""
    if record.kind is ArtifactKind.item_set:
        return list(record.metadata.bands)
    return [canonical_band(b.name) or b.name for b in record.metadata.bands]


def check_bands(record: ArtifactRecord, slot: str, needed: Iterable[str]) -> None:
    """Band check before any read: the input must carry every band the operation needs."""
    have = bands_of(record)
    missing = [b for b in needed if b not in have]
    if missing:
        raise ToolFailed(f"'{slot}' ({record.id}) lacks band(s) {', '.join(missing)}; it has {', '.join(have) or 'none'}",
                         kind="invalid_input",
                         hint=f"search imagery with bands {sorted(set(needed))}, or pass a raster that has them")


def _times(record: ArtifactRecord):
    m = record.metadata
    return getattr(m, "time_start", None) or getattr(m, "time", None), getattr(m, "time_end", None) or getattr(m, "time", None)


def check_order(pre: ArtifactRecord, post: ArtifactRecord) -> None:
    """Time check: the pre-event scene must not start after the post-event one (when both are dated)."""
    (p0, _), (q0, _) = _times(pre), _times(post)
    if p0 and q0 and p0 > q0:
        raise ToolFailed(f"'pre' ({pre.id}, {p0:%Y-%m-%d}) is later than 'post' ({post.id}, {q0:%Y-%m-%d})",
                         kind="invalid_input", hint="swap pre and post")


_SIGNERS: dict[str, Any] = {}


def _signer(record: ArtifactRecord):
    """One SAS signer per token endpoint for the process, so tokens are reused until they expire."""
    if record.kind is ArtifactKind.item_set and record.extra.get("provider") == "planetary-computer":
        from ..engines.stac import PC_SAS_URL, SasSigner

        url = os.environ.get("GEOFAHAM_PC_SAS_URL", PC_SAS_URL)
        return _SIGNERS.setdefault(url, SasSigner(url))
    return None


def _search_aoi(records: Sequence[ArtifactRecord]):
    for r in records:
        if r.kind is ArtifactKind.item_set and r.extra.get("aoi_wkt"):
            return shapely.from_wkt(r.extra["aoi_wkt"])
    return None


def common_grid(ctx: ToolContext, records: Sequence[ArtifactRecord], bands: Sequence[str], aoi_geom,
                resolution_m: float | None = None) -> rx.Grid:
    """The grid all inputs are read onto: the first raster's (cut to the AOI), else the items'."""
    for r in records:
        if r.kind is ArtifactKind.raster:
            info = rx.raster_info(ctx.store.abs_path(r.id))
            if aoi_geom is None:
                return info.grid
            try:
                return rx.crop(info.grid, rx.io.aoi_bounds_in(aoi_geom, info.grid.crs))
            except ValueError:
                raise ToolFailed(f"the AOI does not overlap {r.id}", kind="invalid_input") from None
    area = aoi_geom if aoi_geom is not None else _search_aoi(records)
    if area is None:
        raise ToolFailed("item sets need an AOI to define the output grid", kind="invalid_input", hint="pass an aoi input")
    items = [i for r in records for i in ctx.store.read_items(r.id)]
    try:
        return rx.grid_for_items(items, bands, area, resolution=resolution_m, signer=_signer(records[0]))
    except Exception as exc:  # noqa: BLE001 - an unreadable asset is an observation, not a crash
        raise ToolFailed(f"could not read the imagery: {str(exc)[:200]}", kind="error") from exc


def load_scene(ctx: ToolContext, record: ArtifactRecord, bands: Sequence[str], grid: rx.Grid, aoi_geom,
               cloud_mask: bool = True):
    """A lazy ``xarray.Dataset`` of ``bands`` of a raster artifact or item set on ``grid``."""
    if record.kind is ArtifactKind.raster:
        return rx.load_raster(ctx.store.abs_path(record.id), bands=bands, grid=grid, aoi_4326=aoi_geom)
    items = ctx.store.read_items(record.id)
    if not items:
        raise ToolFailed(f"item set {record.id} is empty", kind="empty")
    return rx.load_item_set(items, bands, grid, aoi_4326=aoi_geom if aoi_geom is not None else _search_aoi([record]),
                            cloud_mask=cloud_mask, signer=_signer(record))


def _limitations(*records: ArtifactRecord, datasets: Sequence[Any] = ()) -> list[str]:
    out = [x for r in records for x in r.extra.get("limitations", [])]
    for ds in datasets:
        if ds.attrs.get("unmasked_items"):
            out.append(f"{ds.attrs['unmasked_items']} scene(s) without an SCL band: clouds not masked there")
    return list(dict.fromkeys(out))


def _time_tags(*datasets: Any, records: Sequence[ArtifactRecord] = ()) -> dict[str, str]:
    starts = [d.attrs.get("start_datetime") or d.attrs.get("datetime") for d in datasets]
    ends = [d.attrs.get("end_datetime") or d.attrs.get("datetime") for d in datasets]
    for r in records:
        s, e = _times(r)
        starts.append(s.isoformat() if s else None)
        ends.append(e.isoformat() if e else None)
    starts, ends = [s for s in starts if s], [e for e in ends if e]
    return {"start_datetime": min(starts), "end_datetime": max(ends)} if starts and ends else {}


@contextmanager
def _workdir(ctx: ToolContext):
    """Scratch space inside the session (its staging folder is wiped by store recovery after a crash)."""
    base = getattr(ctx.store, "staging_dir", None)
    if base is not None:
        Path(base).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="raster-", dir=base) as tmp:
        yield Path(tmp)


def _file_stats(path: Path) -> dict[str, float]:
    """Mean / min / max / valid fraction of band 1 of a written file, read window by window."""
    import dask.array as da

    arr = next(iter(rx.load_raster(path).data_vars.values())).data
    mean, lo, hi, n = compute.compute(da.nanmean(arr), da.nanmin(arr), da.nanmax(arr), (~da.isnan(arr)).sum())
    total = arr.size
    return {"mean": float(mean), "min": float(lo), "max": float(hi), "valid_fraction": float(n) / total if total else 0.0}


def _register_float(ctx: ToolContext, layer: Any, grid: rx.Grid, *, name: str, source: str, summary: str,
                    inputs: list[str], extra: dict, tags: dict[str, str]) -> ArtifactRecord:
    with _workdir(ctx) as tmp:
        path = rx.write_raster([layer], grid, tmp / f"{name}.tif", dtype="float32", nodata=float("nan"),
                               band_names=[name], tags=tags, cancel=ctx.cancel)
        stats = ops.quiet(_file_stats, path)
        if stats["valid_fraction"] == 0:
            raise ToolFailed(f"{name}: no valid pixel (clouds, no data, or the AOI outside the imagery)", kind="empty",
                             hint="widen the time window or relax the cloud limit")
        text = summary.format(**stats, valid_pct=stats["valid_fraction"] * 100)
        return ctx.store.register_raster_file(path, source=source, summary=text, inputs=inputs,
                                              extra={**extra, "stats": stats, "grid_crs": grid.crs})


def _register_classes(ctx: ToolContext, layer: Any, grid: rx.Grid, labels: Mapping[int, str], *, name: str,
                      source: str, headline: str, inputs: list[str], extra: dict, tags: dict[str, str],
                      highlight: Sequence[int]) -> ArtifactRecord:
    """Write a uint8 class raster, measure each class (km², per-row pixel areas) from the written
    file and register it; ``highlight`` classes are summed into the headline."""
    import dask.array as da

    with _workdir(ctx) as tmp:
        path = rx.write_raster([layer], grid, tmp / f"{name}.tif", dtype="uint8", nodata=ops.NODATA_CLASS,
                               band_names=[name], tags=tags, cancel=ctx.cancel)
        written = next(iter(rx.load_raster(path).data_vars.values())).data  # nodata (255) reads as NaN
        table = ops.class_areas(da.where(da.isnan(written), ops.NODATA_CLASS, written).astype("uint8"), grid, labels=labels)
        if int(table["pixels"].sum()) == 0:
            raise ToolFailed(f"{name}: no valid pixel", kind="empty", hint="check clouds, the AOI and the time windows")
        km2 = {int(r["class"]): r["area_m2"] / 1e6 for _, r in table.iterrows()}
        hit = sum(km2.get(c, 0.0) for c in highlight)
        parts = ", ".join(f"{labels.get(c, c)} {km2[c]:.2f}" for c in sorted(km2))
        summary = f"{headline}: {hit:.2f} km² ({parts} km²; pixel {rx.pixel_area_m2(grid):.0f} m²)"
        rows = table.to_dict(orient="records")
        return ctx.store.register_raster_file(
            path, source=source, summary=summary, inputs=inputs,
            extra={**extra, "classes": {str(k): v for k, v in labels.items()}, "class_areas": rows,
                   "highlight_km2": hit, "grid_crs": grid.crs})


# ------------------------------------------------------------------------------------ tools
class IndexArgs(BaseModel):
    index: IndexName = Field(description="ndvi (vegetation), ndwi/mndwi (water), nbr (burn), ndbi (built-up)")
    cloud_mask: bool = Field(default=True, description="mask clouds with the SCL band of item sets")
    resolution_m: float | None = Field(default=None, gt=0, le=1000, description="output pixel size for item sets")


@tool(agent=R, args=IndexArgs, output=ArtifactKind.raster, optional_inputs=("aoi",),
      inputs=(InputSpec("scene", SCENES, description="raster or item set"), AOI))
def compute_index(ctx: ToolContext, args: IndexArgs, scene: ArtifactRecord, aoi: ArtifactRecord | None = None) -> ArtifactRecord:
    """A spectral index (NDVI, NDWI, MNDWI, NBR, NDBI) of one scene, as a float raster."""
    bands = ops.required_bands(args.index)
    check_bands(scene, "scene", bands)
    geom = _aoi_geom(ctx, aoi)
    grid = common_grid(ctx, [scene], bands, geom, args.resolution_m)
    ds = load_scene(ctx, scene, bands, grid, geom, args.cloud_mask)
    name = args.index.upper()
    return _register_float(
        ctx, ops.spectral_index(ds, args.index), grid, name=args.index, source=f"raster.compute_index:{args.index}",
        summary=f"{name} of {scene.id}: mean {{mean:.3f}} (min {{min:.3f}}, max {{max:.3f}}; {{valid_pct:.0f}} % valid pixels)",
        inputs=[scene.id] + ([aoi.id] if aoi else []), tags=_time_tags(ds, records=[scene] if scene.kind is ArtifactKind.raster else []),
        extra={"index": args.index, "limitations": _limitations(scene, datasets=[ds])})


class PairArgs(BaseModel):
    cloud_mask: bool = Field(default=True, description="mask clouds with the SCL band of item sets")
    resolution_m: float | None = Field(default=None, gt=0, le=1000, description="output pixel size for item sets")


def _pair(ctx: ToolContext, pre: ArtifactRecord, post: ArtifactRecord, aoi: ArtifactRecord | None, bands: Sequence[str],
          args: Any):
    check_bands(pre, "pre", bands)
    check_bands(post, "post", bands)
    check_order(pre, post)
    geom = _aoi_geom(ctx, aoi)
    grid = common_grid(ctx, [pre, post], bands, geom, args.resolution_m)
    a = load_scene(ctx, pre, bands, grid, geom, args.cloud_mask)
    b = load_scene(ctx, post, bands, grid, geom, args.cloud_mask)
    inputs = [pre.id, post.id] + ([aoi.id] if aoi else [])
    tags = _time_tags(a, b, records=[r for r in (pre, post) if r.kind is ArtifactKind.raster])
    return grid, a, b, inputs, tags


@tool(agent=R, args=PairArgs, output=ArtifactKind.raster, optional_inputs=("aoi",), overlap=("pre", "post", None),
      inputs=(InputSpec("pre", SCENES, description="pre-event raster or item set"),
              InputSpec("post", SCENES, description="post-event raster or item set"), AOI))
def dnbr(ctx: ToolContext, args: PairArgs, pre: ArtifactRecord, post: ArtifactRecord,
         aoi: ArtifactRecord | None = None) -> ArtifactRecord:
    """dNBR = NBR(pre) − NBR(post) from nir and swir22: positive where vegetation burned."""
    grid, a, b, inputs, tags = _pair(ctx, pre, post, aoi, ops.INDICES["nbr"], args)
    return _register_float(
        ctx, ops.dnbr(a, b), grid, name="dNBR", source="raster.dnbr", inputs=inputs, tags=tags,
        summary=f"dNBR of {pre.id} → {post.id}: mean {{mean:.3f}} (min {{min:.3f}}, max {{max:.3f}}; {{valid_pct:.0f}} % valid pixels)",
        extra={"index": "dnbr", "limitations": _limitations(pre, post, datasets=[a, b])})


class ChangeArgs(PairArgs):
    index: IndexName = Field(description="index whose change (post − pre) is computed")


@tool(agent=R, args=ChangeArgs, output=ArtifactKind.raster, optional_inputs=("aoi",), overlap=("pre", "post", None),
      inputs=(InputSpec("pre", SCENES, description="pre-event raster or item set"),
              InputSpec("post", SCENES, description="post-event raster or item set"), AOI))
def index_change(ctx: ToolContext, args: ChangeArgs, pre: ArtifactRecord, post: ArtifactRecord,
                 aoi: ArtifactRecord | None = None) -> ArtifactRecord:
    """Change of a spectral index between two dates, post − pre (negative NDVI change = vegetation loss)."""
    grid, a, b, inputs, tags = _pair(ctx, pre, post, aoi, ops.required_bands(args.index), args)
    delta = ops.difference(ops.spectral_index(a, args.index), ops.spectral_index(b, args.index))
    name = f"d{args.index.upper()}"
    return _register_float(
        ctx, delta, grid, name=name, source=f"raster.index_change:{args.index}", inputs=inputs, tags=tags,
        summary=f"{name} (post − pre) of {pre.id} → {post.id}: mean {{mean:.3f}} (min {{min:.3f}}, max {{max:.3f}}; {{valid_pct:.0f}} % valid pixels)",
        extra={"index": f"d{args.index}", "limitations": _limitations(pre, post, datasets=[a, b])})


class NoArgs(BaseModel):
    pass


@tool(agent=R, args=NoArgs, output=ArtifactKind.raster, inputs=(InputSpec("dnbr", RASTER, description="dNBR raster"),))
def burn_severity(ctx: ToolContext, args: NoArgs, dnbr: ArtifactRecord) -> ArtifactRecord:
    """USGS burn-severity classes from dNBR (<0.1 unburned, 0.1-0.27 low, 0.27-0.44 moderate-low,
    0.44-0.66 moderate-high, >=0.66 high) with the burned area per class in km²."""
    kind = dnbr.extra.get("index")
    if kind is not None and kind != "dnbr":
        raise ToolFailed(f"{dnbr.id} is a {kind} raster, not dNBR", kind="invalid_input", hint="compute dnbr(pre, post) first")
    ds = rx.load_raster(ctx.store.abs_path(dnbr.id))
    grid = ds.attrs["grid"]
    labels = dict(enumerate(ops.DNBR_LABELS))
    return _register_classes(
        ctx, ops.burn_severity(next(iter(ds.data_vars.values())).data), grid, labels, name="burn_severity",
        source="raster.burn_severity", headline=f"Burned area (dNBR >= {ops.BURNED_DNBR:g}, USGS classes) from {dnbr.id}",
        inputs=[dnbr.id], tags=_time_tags(records=[dnbr]), highlight=[1, 2, 3, 4],
        extra={"scheme": "USGS dNBR (Key & Benson 2006)", "breaks": list(ops.DNBR_BREAKS),
               "limitations": _limitations(dnbr)})


class FloodArgs(BaseModel):
    index: WaterIndex = Field(default="mndwi", description="water index: mndwi (needs swir16) or ndwi")
    threshold: float = Field(default=0.0, ge=-1, le=1, description="water where the index is above this (default 0)")
    cloud_mask: bool = Field(default=True, description="mask clouds with the SCL band of item sets")
    resolution_m: float | None = Field(default=None, gt=0, le=1000, description="output pixel size for item sets")


@tool(agent=R, args=FloodArgs, output=ArtifactKind.raster, optional_inputs=("pre", "aoi"),
      inputs=(InputSpec("post", SCENES, description="post-event raster or item set"),
              InputSpec("pre", SCENES, description="optional pre-event scene: separates new flooding from permanent water"),
              AOI))
def flood_extent(ctx: ToolContext, args: FloodArgs, post: ArtifactRecord, pre: ArtifactRecord | None = None,
                 aoi: ArtifactRecord | None = None) -> ArtifactRecord:
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
    geom = _aoi_geom(ctx, aoi)
    grid = common_grid(ctx, scenes, bands, geom, args.resolution_m)
    b = load_scene(ctx, post, bands, grid, geom, args.cloud_mask)
    a = load_scene(ctx, pre, bands, grid, geom, args.cloud_mask) if pre is not None else None
    classes = ops.flood_classes(ops.spectral_index(b, index), ops.spectral_index(a, index) if a is not None else None,
                                args.threshold)
    labels = ops.FLOOD_LABELS if pre is not None else ops.WATER_LABELS
    what = "Flooded area (new water" if pre is not None else "Water area ("
    limitations = _limitations(*scenes, datasets=[d for d in (a, b) if d is not None])
    if pre is None:
        limitations.append("no pre-event scene: permanent water is counted as flooded")
    return _register_classes(
        ctx, classes, grid, labels, name="flood_extent", source=f"raster.flood_extent:{index}",
        headline=f"{what}, {index.upper()} > {args.threshold:g}) from {post.id}", highlight=[1],
        inputs=[r.id for r in scenes] + ([aoi.id] if aoi else []),
        tags=_time_tags(*[d for d in (a, b) if d is not None], records=[r for r in scenes if r.kind is ArtifactKind.raster]),
        extra={"index": index, "threshold": args.threshold, "limitations": limitations})


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
    return _register_classes(
        ctx, mask, grid, {0: "other", 1: args.label}, name="mask", source="raster.threshold",
        headline=f"{args.label} (band 1 {args.op} {args.value:g}) in {raster.id}", highlight=[1], inputs=[raster.id],
        tags=_time_tags(records=[raster]), extra={"value": args.value, "op": args.op, "limitations": _limitations(raster)})


class PolygonizeArgs(BaseModel):
    classes: list[int] | None = Field(default=None, description="class values to trace; default: every class except 0")


@tool(agent=R, args=PolygonizeArgs, output=ArtifactKind.vector,
      inputs=(InputSpec("raster", RASTER, description="class raster (burn severity, flood extent, mask)"),))
def polygonize(ctx: ToolContext, args: PolygonizeArgs, raster: ArtifactRecord) -> ArtifactRecord:
    """Polygons of the classes of a class raster (one multipolygon per class), with their areas."""
    if not raster.metadata.bands or not raster.metadata.bands[0].dtype.startswith(("uint", "int")):
        raise ToolFailed(f"{raster.id} is not a class raster", kind="invalid_input",
                         hint="classify first (burn_severity, flood_extent or threshold)")
    import rasterio

    with rasterio.open(ctx.store.abs_path(raster.id)) as src:
        grid = rx.grid_of(src)
        data = src.read(1)
        nodata = src.nodata
    if nodata is not None and nodata != ops.NODATA_CLASS:
        data = np.where(data == nodata, ops.NODATA_CLASS, data)
    labels = {int(k): v for k, v in (raster.extra.get("classes") or {}).items()}
    values = args.classes if args.classes is not None else sorted(int(v) for v in np.unique(data) if v not in (0, ops.NODATA_CLASS))
    gdf = ops.polygonize(data.astype("uint8"), grid, values=values, labels=labels)
    total = gdf["area_m2"].sum() / 1e6 if len(gdf) else 0.0
    return ctx.store.register_vector(
        gdf, source="raster.polygonize", inputs=[raster.id],
        summary=f"{len(gdf)} class polygons from {raster.id} ({', '.join(gdf['label'].astype(str)) or 'none'}; {total:.2f} km²)",
        extra={"name_field": "label", "classes": labels, "limitations": _limitations(raster)})


class ZonalArgs(BaseModel):
    by: str | None = Field(default=None, description="zone field to group by (vector zones); null: each feature")
    band: int = Field(default=1, ge=1, description="band of the value raster")


@tool(agent=R, args=ZonalArgs, output=ArtifactKind.text,
      inputs=(InputSpec("raster", RASTER, description="values (index, dNBR ...)"),
              InputSpec("zones", VECTOR_KINDS | RASTER, description="zone polygons, or a class raster on the same grid")))
def zonal_stats(ctx: ToolContext, args: ZonalArgs, raster: ArtifactRecord, zones: ArtifactRecord) -> ArtifactRecord:
    """Mean, min, max, std and area of raster values inside each zone (polygons or raster classes)."""
    ds = rx.load_raster(ctx.store.abs_path(raster.id))
    names = list(ds.data_vars)
    if args.band > len(names):
        raise ToolFailed(f"{raster.id} has {len(names)} band(s)", kind="invalid_input")
    values = ds[names[args.band - 1]].data
    grid = ds.attrs["grid"]
    if zones.kind is ArtifactKind.raster:
        zgrid = rx.raster_info(ctx.store.abs_path(zones.id)).grid
        if not zgrid.same_as(grid):
            raise ToolFailed(f"class raster {zones.id} is not on the grid of {raster.id}", kind="invalid_input",
                             hint="polygonize the classes and pass the polygons as zones")
        import rasterio

        with rasterio.open(ctx.store.abs_path(zones.id)) as src:
            classes = src.read(1)
        labels = {int(k): v for k, v in (zones.extra.get("classes") or {}).items()}
        table = ops.zonal_stats_by_class(values, classes, grid, labels)
    else:
        gdf = ctx.store.read_vector(zones.id)
        if args.by and args.by not in gdf.columns:
            raise ToolFailed(f"{zones.id} has no field '{args.by}'", kind="invalid_input",
                             hint="fields: " + ", ".join(c for c in gdf.columns if c != "geometry"))
        label = args.by or zones.extra.get("name_field")
        table = ops.quiet(ops.zonal_stats, values, grid, gdf, by=args.by)
        if label and not args.by and label in gdf.columns:
            table["zone"] = [str(v) for v in gdf[label]]
    if table.empty or int(table["pixels"].sum()) == 0:
        raise ToolFailed(f"no valid pixel of {raster.id} inside the zones of {zones.id}", kind="empty")
    what = raster.metadata.bands[args.band - 1].name if len(raster.metadata.bands) >= args.band else names[args.band - 1]
    parts = [f"{r.zone}: mean {r.mean:.3f} ({r.pixels:,} pixels, {r.area_m2 / 1e6:.2f} km²)"
             for r in table.itertuples() if r.pixels]
    headline = f"Mean {what} of {raster.id} by zone of {zones.id} — " + "; ".join(parts)
    lines = [headline, "", "| zone | pixels | area km² | mean | min | max | std |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {r.zone} | {r.pixels:,} | {r.area_m2 / 1e6:.3f} | {r.mean:.4f} | {r.min:.4f} | {r.max:.4f} | {r.std:.4f} |"
              for r in table.itertuples()]
    records = [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in row.items()}
               for row in table.to_dict(orient="records")]
    return ctx.store.register_text(
        "\n".join(lines), source="raster.zonal_stats", inputs=[raster.id, zones.id], summary=headline[:300],
        extra={"zones": records, "band": what, "by": args.by, "limitations": _limitations(raster, zones)})


# ------------------------------------------------------------------------------------ code
ANY_KIND = frozenset(ArtifactKind)
SANDBOX_LIMITS = {"cpu_s": int(os.environ.get("GEOFAHAM_SANDBOX_CPU_S", 120)),
                  "memory_mb": int(os.environ.get("GEOFAHAM_SANDBOX_MEMORY_MB", 3072))}


class RunPythonArgs(BaseModel):
    code: str = Field(min_length=1, max_length=20_000, description=(
        "Python run in a sandbox. Given: np, gr (raster library: gr.read_raster(inputs['a']) -> ({band: array}, grid), "
        "gr.spectral_index, gr.dnbr, gr.classify, gr.zonal_stats ...; gr.save_raster(name, array, grid), gr.save_vector, "
        "gr.save_table, gr.save_text), inputs (name -> {path, kind, id, bands}). No network, no files outside the "
        "session. Set RESULT = '<saved file name>' to choose the returned output (default: the last saved)."))
    timeout_s: int = Field(default=180, ge=5, le=1800, description="wall-clock limit in seconds")


def _sandbox_input(ctx: ToolContext, record: ArtifactRecord) -> dict[str, Any]:
    item = {"id": record.id, "kind": record.kind.value, "path": str(ctx.store.abs_path(record.id)),
            "summary": record.summary}
    if record.kind in (ArtifactKind.raster, ArtifactKind.item_set):
        item["bands"] = bands_of(record)
    return item


def _validate_output(path: Path) -> tuple[str, Any]:
    """Each output is opened and checked before anything is registered (all or nothing)."""
    suffix = path.suffix.lower()
    if suffix in (".tif", ".tiff"):
        import rasterio

        with rasterio.open(path) as src:
            if src.crs is None:
                raise ToolFailed(f"output {path.name} has no CRS", kind="invalid_input", hint="save it with a grid")
        return "raster", None
    if suffix in (".gpkg", ".geojson", ".fgb"):
        import geopandas as gpd

        gdf = gpd.read_file(path)
        if gdf.crs is None:
            raise ToolFailed(f"output {path.name} has no CRS", kind="invalid_input")
        return "vector", gdf
    if suffix == ".csv":
        import pandas as pd

        return "table", pd.read_csv(path)
    if suffix in (".md", ".txt"):
        return "text", path.read_text(encoding="utf-8", errors="replace")
    return "ignored", None


@tool(agent=R, args=RunPythonArgs, output=ArtifactKind.raster, optional_inputs=("a", "b", "c"),
      inputs=(InputSpec("a", ANY_KIND, description="any artifact, exposed as inputs['a']"),
              InputSpec("b", ANY_KIND, description="any artifact, exposed as inputs['b']"),
              InputSpec("c", ANY_KIND, description="any artifact, exposed as inputs['c']")))
def run_python(ctx: ToolContext, args: RunPythonArgs, a: ArtifactRecord | None = None, b: ArtifactRecord | None = None,
               c: ArtifactRecord | None = None) -> ArtifactRecord:
    """Run Python written by the model in a sandbox (no network, session files only, CPU/memory/time
    limits); registers every output it saved and returns the main one (a raster unless RESULT names
    another file). For operations the typed tools do not offer."""
    from ..engines.raster import sandbox

    given = {name: rec for name, rec in (("a", a), ("b", b), ("c", c)) if rec is not None}
    limits = sandbox.Limits(cpu_s=SANDBOX_LIMITS["cpu_s"], memory_mb=SANDBOX_LIMITS["memory_mb"], wall_s=float(args.timeout_s))
    result = sandbox.run_code(args.code, session_dir=ctx.store.session_dir,
                              inputs={k: _sandbox_input(ctx, r) for k, r in given.items()}, limits=limits,
                              cancel=ctx.cancel, work_dir=getattr(ctx.store, "staging_dir", None))
    try:
        if result.kind == "cancelled":
            raise ToolFailed("cancelled", kind="cancelled")
        if not result.ok:
            kind = {"rejected": "invalid_input", "violation": "invalid_input", "timeout": "timeout"}.get(result.kind, "error")
            detail = f"\nstderr: {result.stderr[-600:]}" if result.stderr.strip() and result.kind in ("error", "crashed") else ""
            raise ToolFailed(f"the code failed ({result.kind}): {result.message}{detail}", kind=kind,
                             hint="fix the code; only the listed modules, inputs and gr.save_* outputs are available")
        checked = [(p, *_validate_output(p)) for p in result.outputs]
        checked = [x for x in checked if x[1] != "ignored"]
        if not checked:
            raise ToolFailed("the code ran but saved no output", kind="empty",
                             hint="save results with gr.save_raster / save_vector / save_table / save_text")
        primary = result.primary if result.primary in [p for p, _, _ in checked] else checked[-1][0]
        ordered = [x for x in checked if x[0] != primary] + [x for x in checked if x[0] == primary]
        inputs = [r.id for r in given.values()]
        extra = {"code": args.code, "stdout": result.stdout[-2000:], "isolation": result.isolation,
                 "seconds": result.seconds, "limitations": _limitations(*given.values())}
        registered: list[str] = []
        record = None
        for path, kind, data in ordered:
            source, summary = f"raster.run_python:{path.name}", f"{path.name} computed by generated code ({result.seconds:g} s)"
            meta = {**extra, "file": path.name, "also_registered": list(registered)}
            if kind == "raster":
                record = ctx.store.register_raster_file(path, source=source, summary=summary, inputs=inputs, extra=meta)
            elif kind == "vector":
                record = ctx.store.register_vector(data, source=source, summary=summary, inputs=inputs, extra=meta)
            elif kind == "table":
                record = ctx.store.register_table(data, source=source, summary=summary, inputs=inputs, extra=meta)
            else:
                first = data.strip().splitlines()[0] if data.strip() else path.name
                record = ctx.store.register_text(data, source=source, summary=first[:300], inputs=inputs, extra=meta)
            registered.append(record.id)
        return record
    finally:
        sandbox.cleanup(result)
