"""Typed Response Store records. Metadata is computed from the data (see ``inspect.py``), never taken
from a model. A model sees :meth:`ArtifactRecord.for_model`: ids and metadata, no coordinates of
features and no pixels."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class ArtifactKind(StrEnum):
    vector = "vector"
    raster = "raster"
    item_set = "item_set"
    table = "table"
    aoi = "aoi"
    text = "text"


class Bounds(BaseModel):
    model_config = ConfigDict(frozen=True)
    minx: float
    miny: float
    maxx: float
    maxy: float

    def intersects(self, other: Bounds) -> bool:
        return not (
            other.minx > self.maxx or other.maxx < self.minx or other.miny > self.maxy or other.maxy < self.miny
        )


class FieldInfo(BaseModel):
    name: str
    type: str  # pandas/OGR-ish: int64, float64, object/str, bool, datetime64[ns], ...


class VectorMeta(BaseModel):
    kind: Literal["vector"] = "vector"
    geometry_type: str  # Point, MultiPolygon, ... ("Mixed" when several, "None" when empty)
    crs: str  # "EPSG:4326", "EPSG:26911", or WKT when there is no authority code
    crs_is_geographic: bool
    crs_units: str  # "degree", "metre", ...
    bounds: Bounds | None  # native CRS; None when empty
    bounds_4326: Bounds | None
    feature_count: int
    fields: list[FieldInfo]
    invalid_geometries: int = 0
    total_area_m2: float | None = None  # polygons: geodesic (WGS84 ellipsoid)
    total_length_m: float | None = None  # lines: geodesic
    time_start: datetime | None = None
    time_end: datetime | None = None


class BandInfo(BaseModel):
    name: str
    dtype: str
    nodata: float | None = None
    min: float | None = None
    max: float | None = None
    mean: float | None = None


class RasterMeta(BaseModel):
    kind: Literal["raster"] = "raster"
    crs: str
    crs_is_geographic: bool
    bounds: Bounds
    bounds_4326: Bounds
    width: int
    height: int
    resolution: tuple[float, float]  # in CRS units
    pixel_area_m2: float | None = None  # metric: exact in projected CRSs, geodesic at the centre otherwise
    bands: list[BandInfo]
    time: datetime | None = None
    time_start: datetime | None = None
    time_end: datetime | None = None


class ItemSetMeta(BaseModel):
    kind: Literal["item_set"] = "item_set"
    collection: str
    time_start: datetime | None
    time_end: datetime | None
    item_count: int
    aoi_coverage: float | None = None  # fraction (0..1) of the AOI polygon covered by the items' footprints
    per_date_coverage: dict[str, float] = Field(default_factory=dict)
    bands: list[str] = Field(default_factory=list)
    bounds_4326: Bounds | None = None
    max_cloud_cover: float | None = None


class TableMeta(BaseModel):
    kind: Literal["table"] = "table"
    row_count: int
    columns: list[FieldInfo]


class TextMeta(BaseModel):
    kind: Literal["text"] = "text"
    chars: int


ArtifactMeta = Annotated[VectorMeta | RasterMeta | ItemSetMeta | TableMeta | TextMeta, Field(discriminator="kind")]


class ArtifactRecord(BaseModel):
    """One registered artifact. ``path`` is relative to the session folder."""

    id: str
    kind: ArtifactKind
    source: str  # who made it: "vector.buffer", "maps.healthcare", "user.aoi", "stac.search", ...
    summary: str
    path: str
    metadata: ArtifactMeta
    inputs: list[str] = Field(default_factory=list)  # lineage: ids this was computed from
    created_at: datetime
    extra: dict = Field(default_factory=dict)  # small typed-by-convention facts (e.g. operation parameters)
    # "sha256:<hex>" of the file, "content-sha256:<hex>" of a vector layer, taken when it was written
    # (see integrity.py); None in records of sessions written before fingerprints existed
    fingerprint: str | None = None

    def for_model(self) -> dict:
        """What a model may see: id, kind, source, summary, lineage and metadata (bounds, counts, schema)."""
        data = self.model_dump(mode="json", exclude={"path", "created_at", "extra", "fingerprint"})
        meta = data["metadata"]
        meta.pop("bounds", None)  # native bounds are enough in 4326; keep prompts short
        for key in [k for k, v in meta.items() if v in (None, [], {})]:
            meta.pop(key)
        return data
