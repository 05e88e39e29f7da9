"""STAC specialist: find imagery for an AOI and a time window around the event, register it as an
item set (time range, item count, per-date coverage and the covered fraction of the AOI polygon).

The provider comes from the settings (``GEOFAHAM_STAC_URL``: Earth Search by default, Planetary
Computer, any STAC API, or a local folder of STAC items for offline work). Recovery from missing or
partial imagery happens inside the search (see ``engines.stac``); what it changed is recorded as a
limitation, and what it could not fix is a ``coverage`` failure the orchestrator can replan on."""

from __future__ import annotations

from datetime import date
from typing import Literal

import geopandas as gpd
import shapely
from pydantic import BaseModel, Field, model_validator
from shapely.geometry import box
from shapely.geometry.base import BaseGeometry

from ..domain.events import DisasterEvent, get_event
from ..domain.geometry import POLYGONAL
from ..domain.names import AgentName
from ..engines import stac as engine
from ..errors import ToolFailed
from ..store.models import ArtifactKind, ArtifactRecord, ItemSetMeta
from .base import VECTOR_KINDS, InputSpec, ToolContext, tool

S = AgentName.stac


def _event(event_id: int) -> DisasterEvent:
    event = get_event(event_id)
    if event is not None:
        return event
    raise ToolFailed(f"no event with id {event_id}", kind="invalid_input", hint="use an id from the event table")


class EventAoiArgs(BaseModel):
    event_id: int = Field(description="disaster record id from the event table")


@tool(agent=S, args=EventAoiArgs, output=ArtifactKind.aoi)
def event_aoi(ctx: ToolContext, args: EventAoiArgs) -> ArtifactRecord:
    """The event's area of interest (its rough extent from the event table) as an AOI polygon."""
    event = _event(args.event_id)
    if not event.bbox_4326:
        raise ToolFailed(
            f"{event.name} has no extent in the event table", kind="not_found", hint="draw or load an AOI instead"
        )
    gdf = gpd.GeoDataFrame({"name": [event.name]}, geometry=[box(*event.bbox_4326)], crs=4326)
    return ctx.store.register_vector(
        gdf,
        source="stac.event_aoi",
        kind=ArtifactKind.aoi,
        summary=f"area of interest of {event.name} (extent from the event table)",
        extra={"event_id": event.id, "limitations": [f"{event.name}: AOI is the event's rough bounding box"]},
    )


class SearchImageryArgs(BaseModel):
    window: Literal["pre", "post", "explicit"] = Field(
        default="post",
        description="pre: the days before the event; post: the event day and after; explicit: start..end",
    )
    event_id: int | None = Field(
        default=None, description="event whose date anchors the window (and AOI if none given)"
    )
    event_date: date | None = Field(default=None, description="event date when no event_id")
    days: int = Field(default=30, ge=1, le=365, description="window length in days")
    start: date | None = Field(default=None, description="explicit window start")
    end: date | None = Field(default=None, description="explicit window end")
    collections: list[str] = Field(
        default_factory=list, description="collections in fallback order; empty: provider default"
    )
    max_cloud_cover: float = Field(default=20, ge=0, le=100, description="maximum scene cloud cover, percent")
    bands: list[str] = Field(
        default_factory=list, description="bands the analysis needs: nir, red, green, swir16, swir22 ..."
    )
    min_coverage: float = Field(
        default=0.95, gt=0, le=1, description="fraction of the AOI polygon the items must cover"
    )
    max_items: int = Field(default=12, ge=1, le=100)
    bbox: list[float] | None = Field(default=None, min_length=4, max_length=4, description="AOI as lon/lat bbox")

    @model_validator(mode="after")
    def _window(self) -> SearchImageryArgs:
        if self.window == "explicit" and not (self.start and self.end):
            raise ValueError("an explicit window needs start and end")
        if self.window != "explicit" and not (self.event_id or self.event_date):
            raise ValueError("a pre/post window needs event_id or event_date")
        if self.start and self.end and self.start > self.end:
            raise ValueError("start is after end")
        return self


@tool(
    agent=S,
    args=SearchImageryArgs,
    output=ArtifactKind.item_set,
    optional_inputs=("aoi",),
    inputs=(InputSpec("aoi", VECTOR_KINDS, POLYGONAL, "area of interest (optional: bbox or the event's extent)"),),
)
def search_imagery(ctx: ToolContext, args: SearchImageryArgs, aoi: ArtifactRecord | None = None) -> ArtifactRecord:
    """Satellite scenes (Sentinel-2, Landsat) covering the AOI in a window before or after the event."""
    event = _event(args.event_id) if args.event_id is not None else None
    geom, aoi_ids = _aoi(ctx, aoi, args, event)
    if args.window == "explicit":
        if args.start is None or args.end is None:  # the args validator requires both
            raise ToolFailed("an explicit window needs start and end", kind="invalid_input")
        start, end = args.start, args.end
    else:
        anchor = args.event_date or (event.event_date if event is not None else None)
        if anchor is None:  # the args validator requires event_id or event_date
            raise ToolFailed("a pre/post window needs event_id or event_date", kind="invalid_input")
        start, end = engine.event_window(anchor, args.window, args.days)
    provider = engine.provider_for(ctx.settings.stac.url, ctx.settings)
    spec = engine.SearchSpec(
        aoi=geom,
        start=start,
        end=end,
        window=args.window,
        collections=list(args.collections),
        max_cloud=args.max_cloud_cover,
        bands=list(args.bands),
        min_coverage=args.min_coverage,
        max_items=args.max_items,
    )
    outcome = engine.search_with_recovery(provider, spec, ctx.cancel)
    ctx.notes += [f"imagery search ({args.window}): {n}" for n in outcome.notes]
    limitations = [f"{args.window}-event imagery: {n}" for n in outcome.notes]
    if outcome.coverage < 1:
        limitations.append(f"{args.window}-event imagery covers {outcome.coverage:.0%} of the AOI")
    meta = ItemSetMeta(
        collection=outcome.collection,
        time_start=None,
        time_end=None,
        item_count=len(outcome.items),
        aoi_coverage=outcome.coverage,
        per_date_coverage=outcome.per_date,
        bands=outcome.bands,
        max_cloud_cover=outcome.max_cloud,
    )
    dates = sorted(outcome.per_date)
    return ctx.store.register_item_set(
        outcome.items,
        meta,
        source=f"stac.search_imagery:{provider.kind}",
        inputs=aoi_ids,
        summary=(
            f"{len(outcome.items)} {outcome.collection} scenes ({args.window}-event, {dates[0]} to {dates[-1]}, "
            f"cloud <= {outcome.max_cloud:g} %) covering {outcome.coverage:.0%} of the AOI"
        ),
        extra={
            "provider": provider.kind,
            "stac_url": provider.url,
            "window": args.window,
            "event_id": event.id if event else None,
            "start": outcome.start.isoformat(),
            "end": outcome.end.isoformat(),
            "attempts": outcome.attempts,
            "limitations": limitations,
            "aoi_wkt": shapely.to_wkt(geom, rounding_precision=7),
        },
    )


def _aoi(
    ctx: ToolContext, aoi: ArtifactRecord | None, args: SearchImageryArgs, event: DisasterEvent | None
) -> tuple[BaseGeometry, list[str]]:
    """The AOI polygon in EPSG:4326: the AOI artifact, else the bbox argument, else the event's extent."""
    if aoi is not None:
        gdf = ctx.store.read_vector(aoi.id).to_crs(4326)
        geom = shapely.union_all([g for g in gdf.geometry if g is not None and not g.is_empty])
        if geom.is_empty or geom.area == 0:
            raise ToolFailed(f"the AOI {aoi.id} has no area", kind="empty")
        return shapely.make_valid(geom), [aoi.id]
    if args.bbox:
        minx, miny, maxx, maxy = args.bbox
        if not (minx < maxx and miny < maxy and minx >= -180 and maxx <= 180 and miny >= -90 and maxy <= 90):
            raise ToolFailed(f"bbox {args.bbox} is not minx, miny, maxx, maxy in degrees", kind="invalid_input")
        return box(*args.bbox), []
    if event is not None and event.bbox_4326:
        return box(*event.bbox_4326), []
    raise ToolFailed("no area of interest: give an AOI artifact, a bbox or an event", kind="invalid_input")
