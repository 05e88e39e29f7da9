"""Loaders: the real sample layers (and any GeoJSON/GeoPackage) into the disaster database.

Every loader reads with pyogrio, takes GeoJSON without a ``crs`` member as EPSG:4326 (the GeoJSON
default), repairs invalid geometries with ``make_valid`` in the source CRS (counted, never dropped),
reprojects to EPSG:4326, drops Z, and replaces the rows the same source put in before (a reload does
not double counts). What was read, loaded, skipped and repaired goes to ``load_log``.

Choices, so answers can state them:

- **Palisades DINS** is one final snapshot, but the event table has three Palisades records (12, 13,
  14: report dates 8, 9, 10 January). The snapshot is loaded ONCE, attached to the latest record, 14;
  questions about 12 or 13 must be pointed at 14 (``PALISADES_EVENT``).
- **Eaton DINS** (early snapshot of 2025-01-14) -> event 11; DINS ``DAMAGE`` -> ``damage_class`` with the
  catalogue's mapping (``core/data/layers.json``: "Destroyed (>50%)" -> destroyed, ...).
- **Microsoft Lahaina labels** -> event 16. ``raw_damage`` keeps the label. "Building" -> class ``none``
  (not damaged); "Damaged Building" -> class NULL (the labels do not grade damage: calling it
  "destroyed" would overstate, "minor" would invent) with ``is_damaged`` true, so counts report it as
  damaged-but-unclassified. "Background" polygons are not buildings: skipped and counted.
- **Palisades burn area**: no perimeter is available offline; as the catalogue does, the convex hull
  of the destroyed DINS points stands in (``palisades_destroyed_hull``, event 14, noted in load_log).
- **Hazards**: Eaton adjusted perimeter (EPSG:26911 -> 4326) and Lahaina burn area -> ``burn_perimeters``;
  EMSR773 observed flood -> ``flood_extents`` (event 6). Polygonal parts only, as MultiPolygon.
- **Features**: HIFLD hospitals (Los Angeles + Maui counties) -> ``healthcare`` with ``event_id`` NULL
  (they serve events 11-14 and 16; queries take a class's features of the event or of no event, and
  the distance to the hazard does the rest); València health facilities -> ``healthcare``, event 6;
  Catarroja municipal public buildings (DANA damage valuations in ``tags.val_dany``) ->
  ``public_buildings``, event 6; the Catarroja OSM extract -> the Maps agent's feature classes by tags.
- Not loaded: the EMSR773 AOI03 rectangle (an area of interest, not a hazard), the Finnish OSM PBFs,
  the HIFLD CSV (its LA/Maui rows are the GeoJSON above) and the rasters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from shapely.geometry import MultiPolygon, Polygon

from ...errors import ToolFailed
from ..catalog import data_dir, default_catalog
from .base import LoadReport, SpatialEngine, json_text
from .schema import INSERT_COLUMNS, TABLES

PALISADES_EVENT = 14  # the latest of the three Palisades records (12, 13, 14); see module docstring
MS_LABELS = {"Building": ("none", False), "Damaged Building": (None, True)}
MS_SKIP = "Background"


@dataclass(frozen=True)
class SampleLayer:
    id: str  # becomes source_layer / source; the catalogue's id where it has one
    path: str  # relative to the data folder
    table: str
    event_id: int | None
    kind: str  # dins | ms_labels | hazard | hull | poi | osm
    feature_class: str | None = None
    name_field: str | None = None


SAMPLE_LAYERS: tuple[SampleLayer, ...] = (
    SampleLayer("eaton_perimeter", "eaton-2025/eaton_adjusted_fire_perimeter.geojson", "burn_perimeters", 11, "hazard"),
    SampleLayer("eaton_dins", "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson", "damage", 11, "dins"),
    SampleLayer("palisades_dins", "palisades-2025/DINS_2025_Palisades_Public_View.geojson", "damage",
                PALISADES_EVENT, "dins"),
    SampleLayer("palisades_destroyed_hull", "palisades-2025/DINS_2025_Palisades_Public_View.geojson", "burn_perimeters",
                PALISADES_EVENT, "hull"),
    SampleLayer("lahaina_burn", "lahaina-2023/lahaina_burn_area.geojson", "burn_perimeters", 16, "hazard"),
    SampleLayer("lahaina_labels", "lahaina-2023/Maui_Wildfires_August_0.geojson", "damage", 16, "ms_labels"),
    SampleLayer("valencia_flood", "valencia-2024/emsr773_observed_flood_merged.geojson", "flood_extents", 6, "hazard"),
    SampleLayer("la_maui_hospitals", "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson", "features",
                None, "poi", "healthcare", "NAME"),
    SampleLayer("valencia_health", "valencia-2024/valencia_city_health_facilities.geojson", "features", 6, "poi",
                "healthcare", "equipamien"),
    SampleLayer("catarroja_public_buildings", "valencia-2024/catarroja_public_buildings_dana.geojson", "features", 6,
                "poi", "public_buildings", "titulo"),
    SampleLayer("catarroja_osm_points", "valencia-2024/osm-catarroja/puntos.geojson", "features", 6, "osm"),
    SampleLayer("catarroja_osm_lines", "valencia-2024/osm-catarroja/lineas.geojson", "features", 6, "osm"),
    SampleLayer("catarroja_osm_polygons", "valencia-2024/osm-catarroja/poligonos.geojson", "features", 6, "osm"),
)
NAME_FIELDS = ("name", "NAME", "Name", "titulo", "equipamien", "title", "nombre")


# ------------------------------------------------------------------------------------------ reading
def read_layer(path: Path, layer: str | None = None) -> tuple[gpd.GeoDataFrame, str, int, int]:
    """(features in EPSG:4326 2D, source CRS, repaired count, features without geometry)."""
    gdf = gpd.read_file(path, layer=layer, engine="pyogrio")
    if gdf.crs is None:
        gdf = gdf.set_crs("EPSG:4326")  # GeoJSON without a crs member is WGS84 by definition
    src_crs = gdf.crs.to_string()
    empty = gdf.geometry.isna() | gdf.geometry.is_empty
    gdf = gdf[~empty].reset_index(drop=True)
    invalid = ~gdf.geometry.is_valid
    if invalid.any():  # repair where the geometry was drawn, before reprojection bends it
        gdf.loc[invalid, gdf.geometry.name] = gdf.geometry[invalid].make_valid()
    if not gdf.crs.equals("EPSG:4326"):
        gdf = gdf.to_crs(4326)
    gdf[gdf.geometry.name] = shapely.force_2d(gdf.geometry.values.to_numpy())
    bent = ~gdf.geometry.is_valid  # reprojection can, rarely, create a self-intersection
    if bent.any():
        gdf.loc[bent, gdf.geometry.name] = gdf.geometry[bent].make_valid()
    return gdf, src_crs, int((invalid | bent).sum()), int(empty.sum())


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


def _damage_geometry(geom: Any) -> Any:
    """Points stay points; a repaired polygon that became a collection keeps its polygonal parts."""
    if geom is None or geom.geom_type in ("Point", "MultiPoint", "Polygon", "MultiPolygon"):
        return geom
    polys = _polygons(geom)
    return polys[0] if len(polys) == 1 else (MultiPolygon(polys) if polys else geom)


def _records(gdf: gpd.GeoDataFrame) -> list[dict[str, Any]]:
    attrs = pd.DataFrame(gdf.drop(columns=gdf.geometry.name))
    if attrs.shape[1] == 0:  # to_dict("records") of a frame without columns is [], not [{}, ...]
        return [{} for _ in range(len(attrs))]
    return attrs.to_dict("records")


def _frame(table: str, rows: list[dict[str, Any]], geoms: Sequence[Any]) -> gpd.GeoDataFrame:
    cols = [c for c, _ in INSERT_COLUMNS[table]]
    df = pd.DataFrame.from_records(rows, columns=cols) if rows else pd.DataFrame(columns=cols)
    return gpd.GeoDataFrame(df, geometry=gpd.GeoSeries(list(geoms), index=df.index), crs="EPSG:4326")


# --------------------------------------------------------------------------------------- converters
def damage_frame(gdf: gpd.GeoDataFrame, event_id: int, source: str, damage_field: str,
                 structure_field: str | None = None) -> gpd.GeoDataFrame:
    """A damage-assessment layer with a damage field (DINS-like) -> ``damage`` rows."""
    if damage_field not in gdf.columns:
        raise ToolFailed(f"no damage field '{damage_field}'", kind="invalid_input",
                         hint=f"fields: {', '.join(c for c in gdf.columns if c != gdf.geometry.name)}")
    classes = default_catalog().damage_class_series(gdf, damage_field)
    keep = {damage_field, structure_field}
    rows = []
    for rec, cls in zip(_records(gdf), classes):
        rows.append({
            "event_id": event_id, "source_layer": source, "raw_damage": rec.get(damage_field),
            "damage_class": cls, "is_damaged": None if cls is None else cls != "none",
            "structure_type": rec.get(structure_field) if structure_field else None,
            "attrs": json_text({k: v for k, v in rec.items() if k not in keep}),
        })
    return _frame("damage", rows, [_damage_geometry(g) for g in gdf.geometry])


def ms_labels_frame(gdf: gpd.GeoDataFrame, event_id: int, source: str) -> tuple[gpd.GeoDataFrame, int]:
    """Microsoft building-damage labels -> ``damage`` rows (mapping in the module docstring);
    returns (frame, skipped Background polygons)."""
    keep = gdf["class"] != MS_SKIP
    rows, geoms = [], []
    for rec, geom in zip(_records(gdf[keep]), gdf[keep].geometry):
        cls, damaged = MS_LABELS.get(rec["class"], (None, None))
        rows.append({"event_id": event_id, "source_layer": source, "raw_damage": rec["class"], "damage_class": cls,
                     "is_damaged": damaged, "structure_type": None,
                     "attrs": json_text({k: v for k, v in rec.items() if k != "class"})})
        geoms.append(_damage_geometry(geom))
    return _frame("damage", rows, geoms), int((~keep).sum())


def hazard_frame(gdf: gpd.GeoDataFrame, table: str, event_id: int, source: str) -> tuple[gpd.GeoDataFrame, int]:
    """Burn perimeters / flood extents: polygonal parts as MultiPolygon; returns (frame, non-polygonal
    features skipped)."""
    rows, geoms, skipped = [], [], 0
    for rec, geom in zip(_records(gdf), gdf.geometry):
        multi = as_multipolygon(geom)
        if multi is None:
            skipped += 1
            continue
        rows.append({"event_id": event_id, "source": source, "attrs": json_text(rec)})
        geoms.append(multi)
    return _frame(table, rows, geoms), skipped


def features_frame(gdf: gpd.GeoDataFrame, event_id: int | None, source: str,
                   feature_class: str | Callable[[dict[str, Any]], str], name_field: str | None) -> gpd.GeoDataFrame:
    """Points of interest / OSM features -> ``features`` rows; every attribute goes to ``tags``."""
    if name_field is None:
        name_field = next((f for f in NAME_FIELDS if f in gdf.columns), None)
    rows = []
    for rec in _records(gdf):
        cls = feature_class(rec) if callable(feature_class) else feature_class
        name = rec.get(name_field) if name_field else None
        rows.append({"event_id": event_id, "source_layer": source, "feature_class": cls,
                     "name": None if name is None or (isinstance(name, float) and np.isnan(name)) else str(name),
                     "tags": json_text(rec)})
    return _frame("features", rows, list(gdf.geometry))


def osm_class(tags: dict[str, Any]) -> str:
    """The Maps agent's feature class of an OSM feature (HOT-export tags, names cut to 10 letters)."""
    t = {k: v for k, v in tags.items() if v is not None and not (isinstance(v, float) and np.isnan(v))}
    amenity, building = t.get("amenity"), t.get("building")
    if t.get("healthcare") or t.get("health_fac") or amenity in ("hospital", "clinic", "doctors", "pharmacy", "dentist"):
        return "healthcare"
    if amenity in ("school", "college", "university", "kindergarten", "childcare") or \
            building in ("school", "college", "university", "kindergarten"):
        return "education"
    if amenity in ("fire_station", "police", "ambulance_station") or t.get("emergency") not in (None, "no"):
        return "emergency_services"
    if amenity == "shelter":
        return "shelters"
    if t.get("bridge") not in (None, "no"):
        return "bridges"
    if t.get("highway"):
        return "roads"
    if t.get("power"):
        return "power"
    if t.get("communicat") or t.get("communic_1"):
        return "telecom"
    if amenity in ("drinking_water", "water_point") or t.get("man_made") in ("water_tower", "water_works", "reservoir_covered"):
        return "water"
    if t.get("waterway"):
        return "waterways"
    if building:
        return "buildings"
    if t.get("boundary") == "administrative":
        return "admin_boundaries"
    if t.get("landuse") or t.get("leisure"):
        return "landuse"
    return "other"


# ------------------------------------------------------------------------------------------ loading
def _store(engine: SpatialEngine, report: LoadReport, frame: gpd.GeoDataFrame) -> LoadReport:
    report.loaded = engine.replace_rows(report.table, report.source_layer, frame)
    if report.repaired:
        report.notes.append(f"{report.repaired} invalid geometries repaired with make_valid")
    engine.log_load(report)
    return report


def load_sample(engine: SpatialEngine, layer: SampleLayer, root: Path | None = None) -> LoadReport:
    """Load one sample layer (see :data:`SAMPLE_LAYERS`)."""
    path = (root or data_dir()) / layer.path
    if not path.is_file():
        raise ToolFailed(f"sample layer file is missing: {path}", kind="not_found",
                         hint="set GEOFAHAM_DATA_DIR to the folder holding the sample data")
    gdf, src_crs, repaired, empty = read_layer(path)
    report = LoadReport(layer.id, str(path), layer.table, layer.event_id, read=len(gdf) + empty, skipped=empty,
                        repaired=repaired, source_crs=src_crs)
    if empty:
        report.notes.append(f"{empty} features without geometry skipped")
    if layer.kind == "dins":
        frame = damage_frame(gdf, int(layer.event_id or 0), layer.id, "DAMAGE", "STRUCTURETYPE")
        if layer.id == "palisades_dins":
            report.notes.append(f"one final snapshot for Palisades events 12-14, attached to event {PALISADES_EVENT}")
    elif layer.kind == "ms_labels":
        frame, background = ms_labels_frame(gdf, int(layer.event_id or 0), layer.id)
        report.skipped += background
        report.notes.append(f"{background} '{MS_SKIP}' polygons skipped (not buildings); 'Damaged Building' "
                            "kept as raw_damage with damage_class NULL (ungraded) and is_damaged true")
    elif layer.kind == "hazard":
        frame, non_poly = hazard_frame(gdf, layer.table, int(layer.event_id or 0), layer.id)
        report.skipped += non_poly
    elif layer.kind == "hull":
        destroyed = gdf[default_catalog().damage_class_series(gdf, "DAMAGE") == "destroyed"]
        hull = as_multipolygon(shapely.union_all(destroyed.geometry.values).convex_hull)
        frame = _frame(layer.table, [{"event_id": layer.event_id, "source": layer.id,
                                      "attrs": json_text({"derived_from": layer.path, "op": "convex_hull",
                                                          "damage_class": "destroyed", "points": len(destroyed)})}],
                       [hull])
        report.notes.append(f"stand-in burn area: convex hull of the {len(destroyed)} destroyed DINS structures "
                            "(no official Palisades perimeter is available offline)")
    elif layer.kind == "poi":
        frame = features_frame(gdf, layer.event_id, layer.id, layer.feature_class or "other", layer.name_field)
    elif layer.kind == "osm":
        frame = features_frame(gdf, layer.event_id, layer.id, osm_class, "name")
    else:  # pragma: no cover - declaration error
        raise ValueError(f"unknown sample kind {layer.kind}")
    return _store(engine, report, frame)


def load_samples(engine: SpatialEngine, root: Path | None = None, only: Iterable[str] | None = None) -> list[LoadReport]:
    """Load every sample layer (or those in ``only``) found in the data folder."""
    wanted = set(only) if only else None
    unknown = (wanted or set()) - {s.id for s in SAMPLE_LAYERS}
    if unknown:
        raise ToolFailed(f"unknown sample layers {sorted(unknown)}", kind="invalid_input",
                         hint="known: " + ", ".join(s.id for s in SAMPLE_LAYERS))
    return [load_sample(engine, s, root) for s in SAMPLE_LAYERS if wanted is None or s.id in wanted]


def load_file(engine: SpatialEngine, path: Path | str, *, table: str, event_id: int | None,
              feature_class: str | None = None, name_field: str | None = None, damage_field: str | None = None,
              structure_field: str | None = None, layer: str | None = None,
              source_layer: str | None = None) -> LoadReport:
    """Load any GeoJSON / GeoPackage / other OGR vector file into ``table``."""
    path = Path(path)
    if table not in TABLES or table in ("events", "load_log"):
        raise ToolFailed(f"cannot load into '{table}'", kind="invalid_input",
                         hint="tables: damage, flood_extents, burn_perimeters, features")
    if table != "features" and event_id is None:
        raise ToolFailed(f"{table} rows need an event id", kind="invalid_input", hint="pass --event ID")
    if not path.is_file():
        raise ToolFailed(f"no such file: {path}", kind="not_found")
    source = source_layer or (path.stem if layer is None else f"{path.stem}:{layer}")
    gdf, src_crs, repaired, empty = read_layer(path, layer)
    report = LoadReport(source, str(path), table, event_id, read=len(gdf) + empty, skipped=empty, repaired=repaired,
                        source_crs=src_crs)
    if table == "features":
        if not feature_class:
            raise ToolFailed("features need a class", kind="invalid_input", hint="pass --class, e.g. healthcare")
        frame = features_frame(gdf, event_id, source, feature_class, name_field)
    elif table == "damage":
        field = damage_field or next((f for f in ("DAMAGE", "damage", "damage_class", "class") if f in gdf.columns), None)
        if field is None:
            raise ToolFailed("no damage field found", kind="invalid_input", hint="pass --damage-field NAME")
        frame = damage_frame(gdf, int(event_id or 0), source, field, structure_field)
    else:
        frame, non_poly = hazard_frame(gdf, table, int(event_id or 0), source)
        report.skipped += non_poly
    return _store(engine, report, frame)
