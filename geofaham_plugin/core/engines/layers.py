"""The local layer catalogue: the real disaster layers GeoFaham can use offline, described once, as data
(``core/data/layers.json``), and read with one normalisation for every route.

Two routes answer from these layers: the file route (this module: the Vector agent loads hazard and
damage layers, the Maps agent uses point-of-interest layers and OSM extracts) and the disaster database
(``engines/db/loaders.py`` puts the same layers into SpatiaLite and PostGIS). Both call
:meth:`LayerCatalogue.read`, so a layer means the same whichever answers:

- every feature without geometry is dropped, invalid geometries are repaired with ``make_valid`` in the
  source CRS (counted, never dropped), Z is dropped; the file route keeps the source CRS;
- hazards keep their polygonal parts, as MultiPolygon (features without any are skipped);
- damage layers get ``damage_class`` (none ... destroyed, or null) and ``is_damaged`` from the layer's
  damage scale; values the scale marks ``skip`` (e.g. Microsoft's "Background" polygons) are left out;
- point-of-interest layers get their ``feature_class``; OSM layers are classed by the one class file
  (``core/data/osm_classes.json``), one row per class a feature is in (a road bridge is a road and a
  bridge), ``other`` for a feature in none;
- derived layers (``hull``) are computed from their source layer's normalised rows.

A layer serves every event record in its ``events`` (one final Palisades snapshot serves the three
Palisades records 12, 13 and 14).

The user's own layers (a file from the CLI's ``--layer NAME=FILE`` or a project layer the dock wrote
out) live in the same catalogue object, beside the sample layers, as :class:`UserLayer` entries with
ids ``user:<slug>`` (:meth:`LayerCatalogue.add_user_layer`): read once when added, described from the
data (role from the geometry, CRS, feature count, fields with small value domains, a name field, the
aliases a question may call it by). They are never written to ``layers.json`` and never loaded into the
disaster database.
"""

from __future__ import annotations

import glob
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pydantic import BaseModel, ConfigDict, Field, model_validator
from shapely.geometry import MultiPolygon, Polygon

from ..config import PathSettings
from ..domain.damage import DamageClass
from ..domain.events import get_event
from ..domain.feature_classes import feature_class_names
from ..domain.geometry import geometry_family
from ..domain.identifiers import identifier_name, is_identifier
from ..domain.layer_names import user_layer_aliases, user_layer_slug
from ..domain.rasters import RasterKind, When, kind_aliases, raster_vocabulary, when_of, words_in
from ..errors import ToolFailed
from .formats import FORMAT_HINT, FieldType, field_type, read_frame
from .osm.query import HOT_TYPES, classify
from .user_files import RASTER_SUFFIXES, check_user_file, open_user_raster

CATALOGUE_FILE = Path(__file__).resolve().parents[1] / "data" / "layers.json"
OTHER_CLASS = "other"  # an OSM feature in none of the classes

Role = Literal["hazard", "damage", "poi", "osm"]
Table = Literal["damage", "burn_perimeters", "flood_extents", "features"]
LoaderKind = Literal["hazard", "hull", "damage", "poi", "osm_hot"]
HazardKind = Literal["burn_area", "flood_extent"]
#: a raw damage value means a class, or: damaged (grade unknown), unknown (no class), skip (not a structure)
DamageValue = Literal["none", "affected", "minor", "major", "destroyed", "damaged", "unknown", "skip"]

_ROLES: dict[str, tuple[set[str], set[str]]] = {  # role -> (tables, loaders)
    "hazard": ({"burn_perimeters", "flood_extents"}, {"hazard", "hull"}),
    "damage": ({"damage"}, {"damage"}),
    "poi": ({"features"}, {"poi"}),
    "osm": ({"features"}, {"osm_hot"}),
}
_HAZARD_TABLE = {"burn_area": "burn_perimeters", "flood_extent": "flood_extents"}


# ------------------------------------------------------------------------------------------- models
class DamageScale(BaseModel):
    """A source's damage values mapped to the normalised classes."""

    model_config = ConfigDict(extra="forbid")

    title: str
    values: dict[str, DamageValue]


class DamageSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    field: str  # the attribute holding the raw damage value
    scale: str  # a key of the catalogue's damage_scales
    structure_field: str | None = None


class Derivation(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    source: str = Field(alias="from")
    damage_classes: list[DamageClass] = Field(default_factory=list)
    op: Literal["convex_hull"]


class CatalogueLayer(BaseModel):
    """One sample layer, described once for the file route and the database."""

    model_config = ConfigDict(extra="forbid")

    id: str  # also the database's source_layer / source
    title: str
    events: list[int] = Field(min_length=1)  # every event record the layer serves
    role: Role
    table: Table
    loader: LoaderKind
    path: str | None = None  # relative to the data folder
    derive: Derivation | None = None
    hazard: HazardKind | None = None
    damage: DamageSpec | None = None
    feature_class: str | None = None
    kinds: list[str] = Field(default_factory=list)  # poi: the narrower kinds of its class every feature is
    name_field: str | None = None
    attribution: str = ""
    licence: str = ""
    limitations: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> CatalogueLayer:
        tables, loaders = _ROLES[self.role]
        problems = []
        if self.table not in tables or self.loader not in loaders:
            problems.append(f"role {self.role} goes with table {sorted(tables)} and loader {sorted(loaders)}")
        if (self.role == "hazard") != (self.hazard is not None) or (
            self.hazard and _HAZARD_TABLE[self.hazard] != self.table
        ):
            problems.append(
                "a hazard layer names its hazard kind (burn_area -> burn_perimeters, "
                "flood_extent -> flood_extents), other layers none"
            )
        if (self.loader == "hull") != (self.derive is not None) or (self.path is None) != (self.derive is not None):
            problems.append("a hull layer has derive and no path; every other layer a path")
        if (self.role == "damage") != (self.damage is not None):
            problems.append("damage layers (only) have a damage spec")
        if (self.role == "poi") != (self.feature_class is not None):
            problems.append("poi layers (only) have a feature_class")
        if len(set(self.events)) != len(self.events):
            problems.append("events repeat")
        if problems:
            raise ValueError(f"layer {self.id}: " + "; ".join(problems))
        return self

    @property
    def damage_field(self) -> str | None:
        return self.damage.field if self.damage else None

    @property
    def row_event(self) -> int | None:
        """The event id written on the layer's database rows: its one event; for a layer serving several
        records, NULL on features and the latest record (by event date) on damage and hazard rows, whose
        event_id cannot be NULL. Which events the rows serve is in ``layer_events``, not here."""
        if len(self.events) == 1:
            return self.events[0]
        if self.table == "features":
            return None
        return max(self.events, key=lambda e: (_event_date(e), e))


class ExtractSpec(BaseModel):
    """A local OSM extract made of catalogue layers (HOT-export GeoJSON set)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    format: Literal["hot_geojson"]
    title: str
    place: str | None = None  # the place the extract is of: "Catarroja's buildings" are the extract's
    layers: list[str] = Field(min_length=1)
    bbox_4326: tuple[float, float, float, float]
    limitations: list[str] = Field(default_factory=list)


class NamedArea(BaseModel):
    """An area a question may name (an activation's area of interest, a district): read like a user's layer."""

    model_config = ConfigDict(extra="forbid")

    id: str
    events: list[int] = Field(default_factory=list)
    title: str
    path: str  # relative to the data folder
    aliases: list[str] = Field(min_length=1)  # lower-case phrases naming it
    attribution: str = ""
    licence: str = ""


#: how a question says a sample raster's event and kind: "the Hurst fire mask", "la mascara del incendio de Hurst"
_EVENT_AND_KIND = ("{e} {k}", "{k} {e}", "{k} of {e}", "{k} of the {e}", "{k} de {e}", "{k} du {e}", "{k} do {e}")


class RasterEvent(BaseModel):
    """An event a sample raster is of that the disaster table does not hold (the Hurst Fire)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    date: str | None = None
    aliases: list[str] = Field(min_length=1)  # lower-case phrases naming it


class SampleRaster(BaseModel):
    """A sample raster (``raster:<id>``): read like a raster of the user's, described by the catalogue."""

    model_config = ConfigDict(extra="forbid")

    id: str
    event: str  # a key of raster_events
    kind: RasterKind
    when: When | None = None
    index: str | None = None  # the index a values raster holds (dnbr ...): rasters.json's indices
    title: str
    path: str  # relative to the data folder
    date: str | None = None
    sensor: str | None = None
    units: str | None = None
    aliases: list[str] = Field(default_factory=list)  # said with the event's aliases before them ("hurst dnbr")
    attribution: str = ""
    licence: str = ""


class CatalogueFile(BaseModel):
    """``core/data/layers.json``."""

    model_config = ConfigDict(extra="forbid")

    about: str
    damage_scales: dict[str, DamageScale]
    local_feature_classes: dict[str, str] = Field(default_factory=dict)
    layers: list[CatalogueLayer]
    named_areas: list[NamedArea] = Field(default_factory=list)
    raster_events: dict[str, RasterEvent] = Field(default_factory=dict)
    rasters: list[SampleRaster] = Field(default_factory=list)
    osm_extracts: list[ExtractSpec] = Field(default_factory=list)
    osm_extract_note: str = ""
    pbf_globs: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references(self) -> CatalogueFile:
        ids = [layer.id for layer in self.layers]
        by_id = {layer.id: layer for layer in self.layers}
        osm_classes = set(feature_class_names())
        problems = [f"layer id {i} repeats" for i in sorted({i for i in ids if ids.count(i) > 1})]
        problems += [
            f"local feature class {c} is also an OpenStreetMap class"
            for c in self.local_feature_classes
            if c in osm_classes
        ]
        for layer in self.layers:
            if layer.damage and layer.damage.scale not in self.damage_scales:
                problems.append(f"{layer.id}: unknown damage scale {layer.damage.scale}")
            if layer.derive and (
                layer.derive.source not in by_id
                or by_id[layer.derive.source].role != "damage"
                or not set(layer.events) <= set(by_id[layer.derive.source].events)
            ):
                problems.append(
                    f"{layer.id}: derives from {layer.derive.source}, which is no damage layer serving its events"
                )
            if layer.feature_class and layer.feature_class not in osm_classes | set(self.local_feature_classes):
                problems.append(
                    f"{layer.id}: feature class {layer.feature_class} is neither an OpenStreetMap class "
                    "(osm_classes.json) nor a local_feature_class"
                )
            problems += [f"{layer.id}: no event {e} in the event table" for e in layer.events if get_event(e) is None]
        problems += [
            f"raster {r.id}: no raster event {r.event}" for r in self.rasters if r.event not in self.raster_events
        ]
        problems += [
            f"raster {r.id}: no index {r.index} in rasters.json"
            for r in self.rasters
            if r.index and r.index not in raster_vocabulary().indices
        ]
        for extract in self.osm_extracts:
            problems += [
                f"extract {extract.id}: {i} is no osm layer"
                for i in extract.layers
                if i not in by_id or by_id[i].role != "osm"
            ]
        if problems:
            raise ValueError("; ".join(problems))
        return self


class LayerData(BaseModel):
    """A catalogue layer read and normalised (see the module docstring), in its source CRS."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    layer: CatalogueLayer
    path: Path
    gdf: gpd.GeoDataFrame
    source_crs: str
    read: int  # features in the file (for a derived layer: in its source's file)
    empty: int  # features without geometry, dropped
    skipped: int  # features the layer's semantics leave out (not structures, no polygon)
    repaired: int  # invalid geometries repaired
    notes: list[str] = Field(default_factory=list)


# -------------------------------------------------------------------------------------- user layers
USER_PREFIX = "user:"
RASTER_PREFIX = "raster:"  # a sample raster of the catalogue (layers.json "rasters")
UserRole = Literal["area", "features", "values"]  # polygons: an area; points, lines: features; a raster: values
MAX_DOMAIN = 30  # a field's distinct values are recorded when it has at most this many
NAME_FIELDS = ("name", "nombre", "nom", "nome", "title", "label")  # an obvious name field, in this order


class UserField(BaseModel):
    """One attribute of a user layer."""

    model_config = ConfigDict(extra="forbid")

    name: str
    type: FieldType
    distinct: int  # distinct values (nulls aside)
    values: list[str | int | float | bool] | None = None  # every distinct value, when at most MAX_DOMAIN
    identifier: bool = False  # a key, code or row number (domain/identifiers.py): never summed or averaged


class UserLayer(BaseModel):
    """A layer the user brought, described from its data when it was added."""

    model_config = ConfigDict(extra="forbid")

    id: str  # user:<slug>
    name: str  # as the user named it
    path: str  # the file, absolute
    layer: str | None = None  # the layer read from a multi-layer file (GeoPackage ...)
    source_file: str | None = None  # the file the user gave, when ``path`` is a copy read into the session
    role: UserRole
    geometry: Literal["point", "line", "polygon", "mixed", "raster"]
    crs: str  # the file's CRS (EPSG:4326 when it names none)
    feature_count: int  # features with a geometry (0 for a raster)
    bands: int = 0  # a raster's bands
    fields: list[UserField] = Field(default_factory=list)
    name_field: str | None = None
    aliases: list[str] = Field(default_factory=list)  # lower-case phrases naming it, longest first
    attribution: str = ""
    limitations: list[str] = Field(default_factory=list)
    # a raster's description (role "values"): its kind, bands, date and what else the file or the catalogue says
    raster_kind: RasterKind | None = None
    band_names: list[str] = Field(default_factory=list)  # canonical names (engines/raster/bands.py)
    when: When | None = None  # before or after the event, from its name or the catalogue
    date: str | None = None
    sensor: str | None = None
    units: str | None = None
    event: str | None = None  # the event a sample raster is of ("Hurst Fire")
    index: str | None = None  # the index a raster of values holds (dnbr ...), when known
    resolution: tuple[float, float] | None = None
    nodata: float | None = None

    @property
    def title(self) -> str:
        if self.id.startswith(RASTER_PREFIX):
            return f"the sample raster '{self.name}'"
        return f"your layer '{self.name}'"

    def field(self, name: str) -> UserField | None:
        return next((f for f in self.fields if f.name == name), None)


def _plain_value(value: Any) -> str | int | float | bool:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bool, int, float, str)):
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def describe_fields(gdf: gpd.GeoDataFrame) -> list[UserField]:
    """Each attribute with its type, its number of distinct values and, when at most MAX_DOMAIN, the values."""
    out = []
    for column in gdf.columns:
        if column == gdf.geometry.name:
            continue
        series = gdf[column]
        kind = field_type(series)
        try:
            distinct = series.dropna().unique()
        except TypeError:  # unhashable values (lists of an OGR list field)
            out.append(UserField(name=str(column), type="other", distinct=0))
            continue
        values = None
        if len(distinct) <= MAX_DOMAIN and kind != "other":
            values = sorted((_plain_value(v) for v in distinct), key=lambda v: (str(type(v)), v))
        numbers = series.tolist() if kind in ("integer", "real") else None  # a row number shows in its values
        out.append(
            UserField(
                name=str(column),
                type=kind,
                distinct=len(distinct),
                values=values,
                identifier=is_identifier(str(column), numbers),
            )
        )
    return out


def guess_name_field(fields: list[UserField], count: int | None = None) -> str | None:
    """The obvious name attribute: a text field called name (nombre, nom, nome, title, label), else the one
    text field whose name ends in "name", else (``count``: the layer's features) the one text identifier with a
    value on every feature, each different ("wp_id": WP20, WP21 ...); None when there is none or several."""
    text = [f for f in fields if f.type == "text"]
    by_lower = {f.name.lower(): f.name for f in text}
    for candidate in NAME_FIELDS:
        if candidate in by_lower:
            return by_lower[candidate]
    ending = [f.name for f in text if re.search(r"(?:^|_|[a-z])name$", f.name.lower()) or f.name.endswith("Name")]
    if ending:
        return ending[0] if len(ending) == 1 else None
    ids = [f.name for f in text if count and f.distinct == count and identifier_name(f.name)]
    return ids[0] if len(ids) == 1 else None


def check_lonlat(gdf: gpd.GeoDataFrame, name: str) -> None:
    """Coordinates of a geographic CRS must be longitude -180..180 and latitude -90..90. Latitude beyond 90
    with longitude-sized x is read as swapped axes; larger values as metres of a projected CRS the file does
    not name (a GeoJSON without ``crs`` is longitude/latitude by RFC 7946)."""
    if gdf.crs is None or not gdf.crs.is_geographic or gdf.empty:
        return
    x0, y0, x1, y1 = (float(v) for v in gdf.total_bounds)
    if x0 >= -180 and x1 <= 180 and y0 >= -90 and y1 <= 90:
        return
    corner = f"({x0:.6g}, {y0:.6g})"
    if x0 >= -90 and x1 <= 90 and y0 >= -180 and y1 <= 180:
        raise ToolFailed(
            f"{name}: latitude and longitude look swapped: the point {corner} has a latitude beyond ±90",
            kind="invalid_input",
            hint="write coordinates as longitude, latitude (x, y), as GeoJSON requires",
        )
    raise ToolFailed(
        f"{name}: coordinates such as {corner} are not longitude/latitude but the file names no other CRS",
        kind="invalid_input",
        hint="save the file with its CRS (e.g. as a GeoPackage), or reproject it to EPSG:4326 (longitude, latitude)",
    )


def read_user_file(
    path: str | Path, layer: str | None = None, field_map: dict[str, str] | None = None
) -> tuple[gpd.GeoDataFrame, str | None, str, list[str]]:
    """A user's vector file read once, whatever its format (:func:`.formats.read_frame`, through the one check of
    the user's files): (features with a geometry, 2D, repaired; the layer read; source CRS; notes). One clear
    :class:`ToolFailed` for a missing, refused or unreadable file, a file without geometry or features, and an
    unknown or unchosen layer of a multi-layer file. ``field_map``: a shapefile's truncated field names -> full
    names."""
    path = Path(path).expanduser()
    raw = read_frame(path, layer, field_map)
    gdf, src_crs, repaired, empty = normalise_frame(raw.gdf)
    check_lonlat(gdf, path.name)
    notes = list(raw.notes)
    if not raw.crs_named:
        notes.append(f"{path.name} names no CRS: read as EPSG:4326 (longitude, latitude)")
    if empty:
        notes.append(f"{empty} features without geometry skipped")
    if repaired:
        notes.append(f"{repaired} invalid geometries repaired")
    if gdf.empty:
        raise ToolFailed(f"{path.name} has no features with a geometry", kind="empty", hint=FORMAT_HINT)
    return gdf, raw.layer, src_crs, notes


def describe_user_layer(
    name: str, path: Path, layer: str | None, gdf: gpd.GeoDataFrame, crs: str, notes: list[str]
) -> UserLayer:
    families = {geometry_family(t) for t in gdf.geom_type.unique()}
    geometry = families.pop() if len(families) == 1 and None not in families else "mixed"
    limitations = list(notes)
    if geometry == "mixed":
        limitations.append("mixed geometry types: " + ", ".join(sorted(map(str, gdf.geom_type.unique()))))
    fields = describe_fields(gdf)
    where = f"{path.name}" + (f", layer {layer}" if layer else "")
    return UserLayer(
        id=USER_PREFIX + user_layer_slug(name),
        name=name,
        path=str(path.resolve()),
        layer=layer,
        role="area" if geometry == "polygon" else "features",
        geometry=geometry,  # type: ignore[arg-type]  # one of the families or "mixed"
        crs=crs,
        feature_count=len(gdf),
        fields=fields,
        name_field=guess_name_field(fields, len(gdf)),
        aliases=user_layer_aliases(name),
        attribution=f"the user's own layer '{name}' ({where})",
        limitations=limitations,
    )


def describe_user_raster(name: str, path: Path) -> UserLayer:
    """A user's raster (GeoTIFF or COG) described from its header: CRS, bands, kind (an image of named bands, a 0/1
    mask, a raster of classes, a population grid, values), before / after from its name, the aliases a question may
    call it by (its name, its kind: "the post-fire image", "the fire mask"); one clear :class:`ToolFailed` for a
    missing, refused (a VRT, whatever its name), unreadable or CRS-less file."""
    checked = check_user_file(path, kind="raster")
    with open_user_raster(checked) as src:
        crs, bands, res, nodata = src.crs, src.count, src.res, src.nodata
        descriptions, dtype = list(src.descriptions), src.dtypes[0]
        tags = src.tags()
        sample = _sample_values(src) if bands == 1 and dtype.startswith(("uint", "int")) else None
    if crs is None:
        raise ToolFailed(
            f"{path.name} has no coordinate reference system",
            kind="invalid_input",
            hint="assign one in QGIS (Raster > Projections > Assign Projection) and save it as GeoTIFF",
        )
    limitations = [f"raster of {res[0]:g} x {res[1]:g} units per pixel: a pixel counts in an area when its centre does"]
    if nodata is None:
        limitations.append("no nodata value declared: every pixel is a value")
    from .raster.bands import BAND_ALIASES, canonical_band

    named_bands = [canonical_band(d) or "" for d in descriptions]
    kind: RasterKind = "values"
    if bands >= 2 and sum(b in BAND_ALIASES for b in named_bands) >= 2:
        kind = "image"
    elif sample is not None and sample <= {0, 1}:
        kind = "mask"
    elif sample is not None and len(sample) <= 20:
        kind = "classes"
    elif words_in(f"{name} {path.stem}".replace("_", " "), raster_vocabulary().kinds["population"].name_words):
        kind = "population"
    if kind == "population":
        limitations.append("its values are taken as people per pixel (counts, as WorldPop and GHS-POP publish them)")
    when = when_of(name) or when_of(path.stem)
    aliases = user_layer_aliases(name)
    aliases += [a for a in kind_aliases(kind, when) if a not in aliases]
    return UserLayer(
        id=USER_PREFIX + user_layer_slug(name),
        name=name,
        path=str(path.resolve()),
        role="values",
        geometry="raster",
        crs=crs.to_string(),
        feature_count=0,
        bands=bands,
        aliases=aliases,
        attribution=f"the user's own raster '{name}' ({path.name})",
        limitations=limitations,
        raster_kind=kind,
        band_names=[b for b in named_bands if b in BAND_ALIASES],
        when=when,
        date=tags.get("TIFFTAG_DATETIME") or tags.get("DATE_ACQUIRED") or None,
        resolution=(float(res[0]), float(res[1])),
        nodata=None if nodata is None else float(nodata),
    )


def _sample_values(src: Any, size: int = 512) -> set[int] | None:
    """The distinct values of band 1 read at most ``size`` pixels a side (a decimated read, fast on a big tile);
    None when there are more than 256 (not classes)."""
    h, w = src.height, src.width
    scale = max(1, int(np.ceil(max(h, w) / size)))
    data = src.read(1, out_shape=(max(1, h // scale), max(1, w // scale)))
    nodata = src.nodata
    values = np.unique(data)
    if nodata is not None:
        values = values[values != nodata]
    return None if values.size > 256 else {int(v) for v in values}


def _event_date(event_id: int) -> str:
    event = get_event(event_id)
    return event.event_date.isoformat() if event else ""


def data_dir() -> Path:
    """``settings.paths.data_dir`` read now: GEOFAHAM_DATA_DIR, else ``../shared/data`` beside the
    repository, else /work/shared/data."""
    return PathSettings.from_env().data_dir


# --------------------------------------------------------------------------------------- geometries
def read_vector(path: Path, layer: str | None = None, **open_options: str) -> tuple[gpd.GeoDataFrame, str, int, int]:
    """(features with a geometry, in the source CRS, 2D, invalid geometries repaired; source CRS;
    repaired count; features without geometry). GeoJSON without a ``crs`` member is EPSG:4326.
    ``open_options`` go to the OGR driver (e.g. the CSV driver's GEOM_POSSIBLE_NAMES)."""
    return normalise_frame(gpd.read_file(path, layer=layer, engine="pyogrio", **open_options))


def normalise_frame(gdf: gpd.GeoDataFrame) -> tuple[gpd.GeoDataFrame, str, int, int]:
    """What every route does to features read from a file: see :func:`read_vector`."""
    if gdf.crs is None:
        gdf = gdf.set_crs("EPSG:4326")  # the GeoJSON default
    src_crs = gdf.crs.to_string()
    empty = gdf.geometry.isna() | gdf.geometry.is_empty
    gdf = gdf[~empty].reset_index(drop=True)
    gdf[gdf.geometry.name] = shapely.force_2d(gdf.geometry.values.to_numpy())
    gdf, repaired = repair_geometries(gdf)  # where the geometry was drawn, before any reprojection bends it
    return gdf, src_crs, repaired, int(empty.sum())


def repair_geometries(gdf: gpd.GeoDataFrame) -> tuple[gpd.GeoDataFrame, int]:
    """Repair invalid geometries with make_valid (never drop them); returns the repaired count."""
    invalid = ~gdf.geometry.is_valid & gdf.geometry.notna()
    count = int(invalid.sum())
    if count:
        gdf = gdf.copy()
        gdf.loc[invalid, gdf.geometry.name] = gdf.geometry[invalid].make_valid()
    return gdf, count


def _polygons(geom: Any) -> list[Polygon]:
    if geom is None:
        return []
    if isinstance(geom, Polygon):
        return [geom] if not geom.is_empty else []
    if hasattr(geom, "geoms"):
        return [p for part in geom.geoms for p in _polygons(part)]
    return []


def as_multipolygon(geom: Any) -> MultiPolygon | None:
    """The polygonal parts of ``geom`` (make_valid can return a collection with stray lines)."""
    polys = _polygons(geom)
    return MultiPolygon(polys) if polys else None


def damage_geometry(geom: Any) -> Any:
    """Points stay points; a repaired polygon that became a collection keeps its polygonal parts."""
    if geom is None or geom.geom_type in ("Point", "MultiPoint", "Polygon", "MultiPolygon"):
        return geom
    polys = _polygons(geom)
    return polys[0] if len(polys) == 1 else (MultiPolygon(polys) if polys else geom)


# ------------------------------------------------------------------------------------------- damage
def guess_damage(raw: Any) -> str | None:
    """A damage class read from an unknown value's words ("Destroyed (>50%)", "no damage"), else None."""
    text = str(raw or "").lower()
    for cls in ("destroyed", "major", "minor", "affected"):
        if cls in text:
            return cls
    if "no damage" in text or text in {"none", "undamaged"}:
        return "none"
    return None


def _meaning(value: DamageValue | None, raw: Any) -> tuple[str | None, bool | None, bool]:
    """(damage class, is damaged, keep) of a raw value the scale maps to ``value`` (None: not in it)."""
    if value is None:
        cls = guess_damage(raw)
        return cls, (None if cls is None else cls != "none"), True
    if value == "skip":
        return None, None, False
    if value == "damaged":
        return None, True, True
    if value == "unknown":
        return None, None, True
    return value, value != "none", True


# -------------------------------------------------------------------------------------- catalogue
#: words of OGR's geometry type names -> the family ("MultiLineString" is a line)
_FAMILIES = (("point", "point"), ("line", "line"), ("polygon", "polygon"))


class LayerCatalogue:
    """The catalogue file, bound to a data folder."""

    def __init__(self, root: Path | None = None, catalogue_file: Path = CATALOGUE_FILE) -> None:
        self.file = catalogue_file
        self.spec = CatalogueFile.model_validate(json.loads(catalogue_file.read_text(encoding="utf-8")))
        self.root = root or data_dir()
        self.layers: dict[str, CatalogueLayer] = {layer.id: layer for layer in self.spec.layers}
        self.damage_scales: dict[str, DamageScale] = self.spec.damage_scales
        #: the user's own layers, beside the sample layers (``layers``: the file's, loaded into the database)
        self.user_layers: dict[str, UserLayer] = {}
        self._user_frames: dict[str, gpd.GeoDataFrame] = {}
        self._domains: dict[tuple[str, str], list[str]] = {}
        self._columns: dict[str, list[str]] = {}
        self._profiles: dict[str, list[UserField]] = {}
        self._names: dict[str, dict[str, dict[str, str]]] = {}
        self._families: dict[str, str | None] = {}
        self._areas: dict[str, UserLayer] | None = None
        self._rasters: dict[str, UserLayer] | None = None

    # --- the user's own layers --------------------------------------------------------------------------
    def add_user_layer(
        self, name: str, path: str | Path, layer: str | None = None, source_file: str | Path | None = None
    ) -> UserLayer:
        """Read a vector file once (any OGR format; ``layer``: the layer of a multi-layer file) and add it as
        ``user:<slug of name>``: role from the geometry (polygons: area; points, lines: features), CRS,
        feature count, fields (distinct values when at most MAX_DOMAIN), name field and aliases. A second
        layer with the same slug from another file gets ``_2``, ``_3`` ...; the same file again replaces it."""
        name = " ".join(str(name).split())
        if not name:
            raise ToolFailed("a user layer needs a name", kind="invalid_input", hint="e.g. field_clinics")
        gdf: gpd.GeoDataFrame | None = None
        if Path(path).suffix.lower() in RASTER_SUFFIXES:
            entry = describe_user_raster(name, Path(path).expanduser())
        else:
            gdf, chosen, crs, notes = read_user_file(path, layer)
            entry = describe_user_layer(name, Path(path).expanduser(), chosen, gdf, crs, notes)
        if source_file is not None:
            entry = entry.model_copy(update={"source_file": str(source_file)})
        base, n = entry.id, 1
        while entry.id in self.user_layers and (self.user_layers[entry.id].path, self.user_layers[entry.id].layer) != (
            entry.path,
            entry.layer,
        ):
            n += 1
            entry = entry.model_copy(update={"id": f"{base}_{n}"})
        self.user_layers[entry.id] = entry
        if gdf is not None:
            self._user_frames[entry.id] = gdf
        return entry

    def entry(self, layer_id: str) -> CatalogueLayer | UserLayer:
        """A user layer (``user:...``) or a sample layer, by id."""
        found = (
            self.user_layers.get(layer_id)
            or self.layers.get(layer_id)
            or (self.area_layers.get(layer_id) if layer_id.startswith("area:") else None)
            or (self.raster_layers.get(layer_id) if layer_id.startswith(RASTER_PREFIX) else None)
        )
        if found is None:
            known = ", ".join(self.user_layers) or "none"
            raise ToolFailed(
                f"no layer '{layer_id}' in the layer catalogue",
                kind="not_found",
                hint=f"user layers: {known}; sample layers: {', '.join(sorted(self.layers))}",
            )
        return found

    def field_profile(self, layer_id: str) -> list[UserField]:
        """A catalogue layer's attributes described like a user layer's (type, distinct values, identifiers), read
        once per catalogue: what a question may name of its data (a field, a category value)."""
        if layer_id not in self._profiles:
            gdf, _ = self.load(layer_id)
            self._profiles[layer_id] = describe_fields(gdf)
        return self._profiles[layer_id]

    def columns(self, layer_id: str) -> list[str]:
        """The attribute columns of a catalogue layer's file, as the file has them (none without a file). Read once
        per catalogue, the header only."""
        if layer_id not in self._columns:
            entry = self.entry(layer_id)
            if isinstance(entry, UserLayer):
                names = [f.name for f in entry.fields]
            elif entry.path is None:
                names = []
            else:
                import pyogrio

                names = [str(c) for c in pyogrio.read_info(self.file_path(entry))["fields"]]
            self._columns[layer_id] = names
        return self._columns[layer_id]

    def value_domain(self, layer_id: str, field: str, limit: int = MAX_DOMAIN * 2) -> list[str]:
        """The distinct text values of a layer's field, most frequent first (at most ``limit``; none when the
        field has more: it is not a category). Read once per catalogue, attribute column only."""
        key = (layer_id, field)
        if key not in self._domains:
            entry = self.entry(layer_id)
            if isinstance(entry, UserLayer):
                described = entry.field(field)
                values = [str(v) for v in described.values] if described and described.values else []
            elif entry.path is None:
                values = []
            else:
                import pyogrio

                frame = pyogrio.read_dataframe(self.file_path(entry), columns=[field], read_geometry=False)
                counts = frame[field].dropna().astype(str).value_counts() if field in frame else pd.Series()
                values = counts.index.tolist() if len(counts) <= limit else []
            self._domains[key] = values
        return self._domains[key]

    def feature_names(self, layer_id: str) -> dict[str, dict[str, str]]:
        """A catalogue layer's feature names (its ``name_field``'s values, as the data spells them), each with the
        tags of its first feature (the non-empty text attributes: what class it is of). Read once per catalogue,
        attributes only; none for a layer without a name field or a file."""
        if layer_id not in self._names:
            entry = self.get(layer_id)
            names: dict[str, dict[str, str]] = {}
            if entry.name_field and entry.path is not None and self.file_path(entry).exists():
                import pyogrio

                frame = pyogrio.read_dataframe(self.file_path(entry), read_geometry=False)
                if entry.name_field in frame:
                    for row in frame.dropna(subset=[entry.name_field]).itertuples(index=False):
                        record = row._asdict()
                        name = str(record[entry.name_field]).strip()
                        if name and name not in names:
                            names[name] = {k: str(v) for k, v in record.items() if isinstance(v, str) and v}
            self._names[layer_id] = names
        return self._names[layer_id]

    def geometry_family(self, layer_id: str) -> str | None:
        """A catalogue layer's geometry family as its file declares it ("point", "line", "polygon"), read from the
        header once per catalogue; None without a file or a declared type."""
        if layer_id not in self._families:
            entry = self.get(layer_id)
            family = None
            if entry.path is not None and self.file_path(entry).exists():
                import pyogrio

                declared = str(pyogrio.read_info(self.file_path(entry)).get("geometry_type") or "").lower()
                family = next((f for w, f in _FAMILIES if w in declared), None)
            self._families[layer_id] = family
        return self._families[layer_id]

    @property
    def area_layers(self) -> dict[str, UserLayer]:
        """The named areas of the catalogue (``area:<id>``) whose files are present, read once, described like
        a user's layer (aliases from the catalogue)."""
        if self._areas is None:
            self._areas = {}
            for area in self.spec.named_areas:
                path = self.root / area.path
                if not path.exists():
                    continue
                gdf, chosen, crs, notes = read_user_file(path, None)
                entry = describe_user_layer(area.title, path, chosen, gdf, crs, notes).model_copy(
                    update={
                        "id": f"area:{area.id}",
                        "aliases": sorted(area.aliases, key=len, reverse=True),
                        "attribution": area.attribution,
                    }
                )
                self._areas[entry.id] = entry
                self._user_frames[entry.id] = gdf
        return self._areas

    @property
    def raster_layers(self) -> dict[str, UserLayer]:
        """The sample rasters of the catalogue (``raster:<id>``) whose files are present, described from their
        header and the catalogue (kind, before / after, date, sensor, units, event), named by their event and kind
        ("the Hurst fire mask", "the Hurst post-fire image") or their own aliases after the event's ("Hurst dNBR")."""
        if self._rasters is None:
            self._rasters = {}
            for r in self.spec.rasters:
                path = self.root / r.path
                if not path.exists():
                    continue
                event = self.spec.raster_events[r.event]
                described = describe_user_raster(r.title, path)
                own = [*r.aliases, *kind_aliases(r.kind, r.when)]
                names = [e for e in event.aliases if " " not in e] or event.aliases  # "hurst": longer ones hold it
                aliases = sorted(
                    {form.format(e=e, k=k) for e in names for k in own for form in _EVENT_AND_KIND},
                    key=len,
                    reverse=True,
                )
                limitations = [x for x in described.limitations if not x.startswith("no nodata")]
                if described.nodata is None:
                    limitations.append(f"{path.name} declares no nodata value: every pixel is a value")
                self._rasters[RASTER_PREFIX + r.id] = described.model_copy(
                    update={
                        "id": RASTER_PREFIX + r.id,
                        "aliases": aliases,
                        "attribution": r.attribution,
                        "raster_kind": r.kind,
                        "when": r.when,
                        "date": r.date,
                        "sensor": r.sensor,
                        "units": r.units,
                        "event": event.name,
                        "index": r.index,
                        "limitations": limitations,
                    }
                )
        return self._rasters

    def read_user_layer(self, layer_id: str) -> tuple[UserLayer, gpd.GeoDataFrame]:
        """The user layer and its features as read when it was added (source CRS, 2D, repaired)."""
        entry = self.entry(layer_id)
        if not isinstance(entry, UserLayer):
            raise ToolFailed(f"'{layer_id}' is a sample layer, not one of the user's", kind="invalid_input")
        if entry.role == "values":
            raise ToolFailed(
                f"your layer '{entry.name}' is a raster, not features",
                kind="invalid_input",
                hint="a raster answers a statistic (sum, mean ...) inside an area",
            )
        return entry, self._user_frames[layer_id]

    # --- lookup -----------------------------------------------------------------------------------
    def find(
        self, *, event_id: int | None = None, role: str | None = None, feature_class: str | None = None
    ) -> list[CatalogueLayer]:
        """Layers serving ``event_id`` with this role / feature class, in catalogue order."""
        return [
            layer
            for layer in self.layers.values()
            if (event_id is None or event_id in layer.events)
            and (role is None or layer.role == role)
            and (feature_class is None or layer.feature_class == feature_class)
        ]

    def get(self, layer_id: str) -> CatalogueLayer:
        try:
            return self.layers[layer_id]
        except KeyError:
            raise ToolFailed(
                f"no layer '{layer_id}' in the local layer catalogue",
                kind="not_found",
                hint=f"known layers: {', '.join(sorted(self.layers))}",
            ) from None

    def file_path(self, layer: CatalogueLayer) -> Path:
        """The layer's file (a derived layer's: its source's)."""
        if layer.derive is not None:
            return self.file_path(self.get(layer.derive.source))
        path = self.root / (layer.path or "")
        if not path.is_file():
            raise ToolFailed(
                f"layer file for '{layer.id}' is missing: {path}",
                kind="not_found",
                hint="set GEOFAHAM_DATA_DIR to the folder holding the sample data",
            )
        return path

    def extract_layers(self, extract: ExtractSpec) -> list[CatalogueLayer]:
        return [self.get(i) for i in extract.layers]

    # --- damage -----------------------------------------------------------------------------------
    def damage_values(self, raw: pd.Series, scale: str | None = None) -> pd.DataFrame:
        """``damage_class``, ``is_damaged`` and ``keep`` for raw damage values, by ``scale`` (a key of
        the damage scales); without one, by every scale (their values do not clash), then by the
        value's words."""
        if scale is not None and scale not in self.damage_scales:
            raise ToolFailed(
                f"unknown damage scale '{scale}'", kind="invalid_input", hint="scales: " + ", ".join(self.damage_scales)
            )
        mapping: dict[str, DamageValue] = {}
        for name, spec in self.damage_scales.items():
            if scale is None or name == scale:
                for value, meaning in spec.values.items():
                    mapping.setdefault(value, meaning)
        rows = [_meaning(mapping.get(v) if isinstance(v, str) else None, v) for v in raw.tolist()]
        return pd.DataFrame(rows, columns=["damage_class", "is_damaged", "keep"], index=raw.index).astype(
            {"damage_class": object, "is_damaged": object, "keep": bool}
        )

    def damage_class_series(self, gdf: pd.DataFrame, field: str, scale: str | None = None) -> pd.Series:
        """The normalised damage class (``none`` ... ``destroyed``) of each feature; ungraded or unknown -> None."""
        return self.damage_values(gdf[field], scale)["damage_class"]

    # --- reading ----------------------------------------------------------------------------------
    def read(self, layer_id: str) -> LayerData:
        """The layer normalised for every route (see the module docstring)."""
        layer = self.get(layer_id)
        if layer.loader == "hull":
            return self._hull(layer)
        path = self.file_path(layer)
        gdf, src_crs, repaired, empty = read_vector(path)
        notes = [f"{empty} features without geometry skipped"] if empty else []
        read, skipped = len(gdf) + empty, 0
        if layer.loader == "hazard":
            geoms = gpd.GeoSeries([as_multipolygon(g) for g in gdf.geometry], index=gdf.index, crs=gdf.crs)
            keep = geoms.notna().to_numpy()
            gdf = gdf.set_geometry(geoms)[keep].reset_index(drop=True)
            skipped = int((~keep).sum())
            if skipped:
                notes.append(f"{skipped} features without polygons skipped")
        elif layer.loader == "damage":
            gdf, skipped, more = self._damage(layer, gdf)
            notes += more
        elif layer.loader == "poi":
            gdf = gdf.assign(feature_class=layer.feature_class)
        elif layer.loader == "osm_hot":
            gdf, multi = _classify_hot(gdf)
            if multi:
                notes.append(f"{multi} features are in several feature classes: one row per class")
        return LayerData(
            layer=layer,
            path=path,
            gdf=gdf,
            source_crs=src_crs,
            read=read,
            empty=empty,
            skipped=skipped,
            repaired=repaired,
            notes=notes,
        )

    def load(self, layer_id: str) -> tuple[gpd.GeoDataFrame, int]:
        """The layer's normalised features; returns (gdf, repaired count)."""
        data = self.read(layer_id)
        return data.gdf, data.repaired

    def _damage(self, layer: CatalogueLayer, gdf: gpd.GeoDataFrame) -> tuple[gpd.GeoDataFrame, int, list[str]]:
        spec = layer.damage
        assert spec is not None  # the model's validator
        if spec.field not in gdf.columns:
            raise ToolFailed(
                f"layer '{layer.id}' has no damage field '{spec.field}'",
                kind="invalid_input",
                hint=f"fields: {', '.join(c for c in gdf.columns if c != gdf.geometry.name)}",
            )
        values = self.damage_values(gdf[spec.field], spec.scale)
        gdf = gdf.assign(damage_class=values["damage_class"], is_damaged=values["is_damaged"])
        gdf = gdf.set_geometry(gpd.GeoSeries([damage_geometry(g) for g in gdf.geometry], index=gdf.index, crs=gdf.crs))
        keep = values["keep"].to_numpy()
        notes = []
        left_out = sorted(set(gdf.loc[~keep, spec.field].astype(str)))
        if left_out:
            notes.append(
                f"{int((~keep).sum())} {', '.join(repr(v) for v in left_out)} features skipped (not structures)"
            )
        ungraded = sorted(
            set(
                gdf.loc[
                    keep & values["damage_class"].isna().to_numpy() & values["is_damaged"].eq(True).to_numpy(),
                    spec.field,
                ].astype(str)
            )
        )
        if ungraded:
            notes.append(
                f"{', '.join(repr(v) for v in ungraded)} kept as raw damage with damage class NULL "
                "(ungraded) and is_damaged true"
            )
        return gdf[keep].reset_index(drop=True), int((~keep).sum()), notes

    def _hull(self, layer: CatalogueLayer) -> LayerData:
        spec = layer.derive
        assert spec is not None  # the model's validator
        source = self.read(spec.source)
        wanted = [c.value for c in spec.damage_classes]
        points = source.gdf[source.gdf["damage_class"].isin(wanted)] if wanted else source.gdf
        hull = as_multipolygon(shapely.union_all(points.geometry.values).convex_hull)
        gdf = gpd.GeoDataFrame(
            {
                "name": [layer.title],
                "derived_from": [source.layer.id],
                "op": [spec.op],
                "damage_class": [",".join(wanted) or None],
                "points": [len(points)],
            },
            geometry=[hull],
            crs=source.gdf.crs,
        )
        what = f"{' or '.join(wanted)} " if wanted else ""
        notes = [
            f"stand-in area: {spec.op.replace('_', ' ')} of the {len(points)} {what}structures of {source.layer.id}"
        ]
        return LayerData(
            layer=layer,
            path=source.path,
            gdf=gdf,
            source_crs=source.source_crs,
            read=source.read,
            empty=source.empty,
            skipped=0,
            repaired=source.repaired,
            notes=notes,
        )

    # --- OSM extracts -------------------------------------------------------------------------------
    def pbf_files(self) -> list[Path]:
        """The .osm.pbf files found under the catalogue's pbf_globs in the data folder."""
        found: dict[str, None] = {}
        for pattern in self.spec.pbf_globs:
            for path in sorted(glob.glob(str(self.root / pattern))):
                found.setdefault(path)
        return [Path(p) for p in found]


def _classify_hot(gdf: gpd.GeoDataFrame) -> tuple[gpd.GeoDataFrame, int]:
    """A HOT-export OSM layer, one row per feature class of each feature (``other``: none); returns
    (rows, features in several classes)."""
    osm_types = gdf["osm_type"].map(HOT_TYPES) if "osm_type" in gdf.columns else pd.Series("", index=gdf.index)
    tags = pd.DataFrame(gdf.drop(columns=[gdf.geometry.name]))
    masks = classify(tags, osm_types, list(gdf.geom_type), complete=False)
    member = np.column_stack(list(masks.values())) if masks else np.zeros((len(gdf), 0), dtype=bool)
    names = list(masks)
    order, classes = [], []
    for i, row in enumerate(member):
        hits = [names[j] for j in np.flatnonzero(row)] or [OTHER_CLASS]
        order += [i] * len(hits)
        classes += hits
    out = gdf.iloc[order].reset_index(drop=True)
    out = out.assign(feature_class=classes)
    return out, int((member.sum(axis=1) > 1).sum())


@lru_cache(maxsize=1)
def default_catalogue() -> LayerCatalogue:
    return LayerCatalogue()
