"""Scene assembly for the Raster tools: the checks made before any pixel is read (bands present, pre
before post), the common grid all inputs are read onto (the first raster input's grid, else the
items' native lattice over the AOI) and the lazy loading of raster artifacts and STAC item sets onto
it (signed for Planetary Computer with the run's settings)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import shapely
from shapely.geometry.base import BaseGeometry

from ...engines import raster as rx
from ...engines.raster.bands import canonical_band
from ...engines.stac import HttpPolicy, SasSigner
from ...errors import ToolFailed
from ...store.models import ArtifactKind, ArtifactRecord, ItemSetMeta, RasterMeta
from ..base import ToolContext

if TYPE_CHECKING:
    import xarray as xr


def aoi_geometry(ctx: ToolContext, aoi: ArtifactRecord | None) -> BaseGeometry | None:
    """The AOI artifact as one valid EPSG:4326 geometry (None without an AOI)."""
    if aoi is None:
        return None
    gdf = ctx.store.read_vector(aoi.id).to_crs(4326)
    geom = shapely.union_all([g for g in gdf.geometry if g is not None and not g.is_empty])
    if geom.is_empty:
        raise ToolFailed(f"the AOI {aoi.id} is empty", kind="empty")
    return shapely.make_valid(geom)


def bands_of(record: ArtifactRecord) -> list[str]:
    """Canonical band names of a raster artifact or item set, from its metadata (none for other kinds)."""
    meta = record.metadata
    if isinstance(meta, ItemSetMeta):
        return list(meta.bands)
    if isinstance(meta, RasterMeta):
        return [canonical_band(b.name) or b.name for b in meta.bands]
    return []


def check_bands(record: ArtifactRecord, slot: str, needed: Iterable[str]) -> None:
    """Band check before any read: the input must carry every band the operation needs."""
    have = bands_of(record)
    missing = [b for b in needed if b not in have]
    if missing:
        raise ToolFailed(
            f"'{slot}' ({record.id}) lacks band(s) {', '.join(missing)}; it has {', '.join(have) or 'none'}",
            kind="invalid_input",
            hint=f"search imagery with bands {sorted(set(needed))}, or pass a raster that has them",
        )


def times_of(record: ArtifactRecord) -> tuple[datetime | None, datetime | None]:
    """(start, end) of a scene from its metadata, when dated."""
    m = record.metadata
    return getattr(m, "time_start", None) or getattr(m, "time", None), getattr(m, "time_end", None) or getattr(
        m, "time", None
    )


def check_order(pre: ArtifactRecord, post: ArtifactRecord) -> None:
    """Time check: the pre-event scene must not start after the post-event one (when both are dated)."""
    (p0, _), (q0, _) = times_of(pre), times_of(post)
    if p0 and q0 and p0 > q0:
        raise ToolFailed(
            f"'pre' ({pre.id}, {p0:%Y-%m-%d}) is later than 'post' ({post.id}, {q0:%Y-%m-%d})",
            kind="invalid_input",
            hint="swap pre and post",
        )


_SIGNERS: dict[str, SasSigner] = {}


def signer_for(ctx: ToolContext, record: ArtifactRecord) -> SasSigner | None:
    """Planetary Computer item sets need signed asset hrefs: one SAS signer per token endpoint
    (``ctx.settings.stac.pc_sas_url``) for the process, so tokens are reused until they expire."""
    if record.kind is ArtifactKind.item_set and record.extra.get("provider") == "planetary-computer":
        stac = ctx.settings.stac
        if stac.pc_sas_url not in _SIGNERS:
            _SIGNERS[stac.pc_sas_url] = SasSigner(stac.pc_sas_url, HttpPolicy.from_settings(stac))
        return _SIGNERS[stac.pc_sas_url]
    return None


def search_aoi(records: Sequence[ArtifactRecord]) -> BaseGeometry | None:
    """The AOI an item set was searched for (kept with the item set), if any."""
    for r in records:
        if r.kind is ArtifactKind.item_set and r.extra.get("aoi_wkt"):
            return shapely.from_wkt(r.extra["aoi_wkt"])
    return None


def common_grid(
    ctx: ToolContext,
    records: Sequence[ArtifactRecord],
    bands: Sequence[str],
    aoi_geom: BaseGeometry | None,
    resolution_m: float | None = None,
) -> rx.Grid:
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
    area = aoi_geom if aoi_geom is not None else search_aoi(records)
    if area is None:
        raise ToolFailed(
            "item sets need an AOI to define the output grid", kind="invalid_input", hint="pass an aoi input"
        )
    items = [i for r in records for i in ctx.store.read_items(r.id)]
    try:
        return rx.grid_for_items(items, bands, area, resolution=resolution_m, signer=signer_for(ctx, records[0]))
    except Exception as exc:  # noqa: BLE001 - an unreadable asset is an observation, not a crash
        raise ToolFailed(f"could not read the imagery: {str(exc)[:200]}", kind="error") from exc


def load_scene(
    ctx: ToolContext,
    record: ArtifactRecord,
    bands: Sequence[str],
    grid: rx.Grid,
    aoi_geom: BaseGeometry | None,
    cloud_mask: bool = True,
) -> xr.Dataset:
    """A lazy ``xarray.Dataset`` of ``bands`` of a raster artifact or item set on ``grid``."""
    if record.kind is ArtifactKind.raster:
        return rx.load_raster(ctx.store.abs_path(record.id), bands=bands, grid=grid, aoi_4326=aoi_geom)
    items = ctx.store.read_items(record.id)
    if not items:
        raise ToolFailed(f"item set {record.id} is empty", kind="empty")
    return rx.load_item_set(
        items,
        bands,
        grid,
        aoi_4326=aoi_geom if aoi_geom is not None else search_aoi([record]),
        cloud_mask=cloud_mask,
        signer=signer_for(ctx, record),
    )
