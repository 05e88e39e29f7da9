"""Loaders: the catalogue's sample layers (and any GeoJSON/GeoPackage) into the disaster database.

What a sample layer is, which events it serves, its table, loader kind, damage scale, feature class and
name field come from the one layer catalogue (``core/data/layers.json``); its rows are what
:meth:`LayerCatalogue.read` makes of it, the same normalisation the file route uses (repairs, damage
classes, feature classes, skipped features), then reprojected to EPSG:4326 (a repair that the
reprojection bends is repaired again). A load replaces the rows the same source put in before (a reload
does not double counts) and records, in the same transaction, the events the layer serves in
``layer_events``; what was read, loaded, skipped and repaired goes to ``load_log``.

Choices, so answers can state them:

- **A layer serving several event records is stored once.** The final Palisades DINS snapshot (and its
  hull stand-in burn area) serves the Palisades records 12, 13 and 14 (report dates 8, 9, 10 January);
  ``layer_events`` lists all three, and the typed queries of an event select the rows of the layers
  serving it, so events 12, 13 and 14 answer alike and nothing is counted twice. The rows' own
  ``event_id`` is the layer's one event, else (see :attr:`CatalogueLayer.row_event`) NULL on features
  (HIFLD hospitals: events 11-14 and 16) and the latest record on damage and hazard rows (14).
- **Damage** values map to ``damage_class`` by the layer's damage scale: DINS grades ("Destroyed (>50%)"
  -> destroyed, ...); Microsoft's Lahaina labels: "Building" -> none, "Damaged Building" -> NULL
  (the labels do not grade damage) with ``is_damaged`` true, "Background" (not a building) skipped.
  ``raw_damage`` keeps the source's value.
- **Features**: point-of-interest layers get their catalogue class; OSM layers are classed by the one
  class file, one row per class a feature is in (``other`` for none) - count rows of one class.
- Files not in the catalogue (the EMSR773 AOI03 rectangle, the Finnish PBFs, the HIFLD CSV, rasters)
  are not loaded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd

from ...errors import ToolFailed
from ..layers import CatalogueLayer, LayerCatalogue, as_multipolygon, damage_geometry, default_catalogue, read_vector
from .base import LoadReport, SpatialEngine, json_text
from .schema import INSERT_COLUMNS, TABLES

NAME_FIELDS = ("name", "NAME", "Name", "titulo", "equipamien", "title", "nombre")
NORMALISED = ("damage_class", "is_damaged", "feature_class")  # columns the catalogue adds; not source attributes


# ------------------------------------------------------------------------------------------ reading
def to_4326(gdf: gpd.GeoDataFrame) -> tuple[gpd.GeoDataFrame, int]:
    """The features in EPSG:4326; a geometry the reprojection made invalid (rarely: a self-intersection)
    is repaired again. Returns (gdf, geometries repaired)."""
    if not gdf.crs.equals("EPSG:4326"):
        gdf = gdf.to_crs(4326)
    bent = ~gdf.geometry.is_valid & gdf.geometry.notna()
    if bent.any():
        gdf = gdf.copy()
        gdf.loc[bent, gdf.geometry.name] = gdf.geometry[bent].make_valid()
    return gdf, int(bent.sum())


def _records(gdf: gpd.GeoDataFrame) -> list[dict[str, Any]]:
    attrs = pd.DataFrame(gdf.drop(columns=gdf.geometry.name))
    if attrs.shape[1] == 0:  # to_dict("records") of a frame without columns is [], not [{}, ...]
        return [{} for _ in range(len(attrs))]
    return attrs.to_dict("records")


def _frame(table: str, rows: list[dict[str, Any]], geoms: Sequence[Any]) -> gpd.GeoDataFrame:
    cols = [c for c, _ in INSERT_COLUMNS[table]]
    df = pd.DataFrame.from_records(rows, columns=cols) if rows else pd.DataFrame(columns=cols)
    return gpd.GeoDataFrame(df, geometry=gpd.GeoSeries(list(geoms), index=df.index), crs="EPSG:4326")


def _null(v: Any) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v))


# ------------------------------------------------------------------------------------------- rows
def damage_rows(
    gdf: gpd.GeoDataFrame, event_id: int, source: str, damage_field: str, structure_field: str | None = None
) -> gpd.GeoDataFrame:
    """Normalised damage features (``damage_class``, ``is_damaged`` set, EPSG:4326) -> ``damage`` rows."""
    keep = {damage_field, structure_field, *NORMALISED}
    rows = []
    for rec in _records(gdf):
        cls, damaged = rec.get("damage_class"), rec.get("is_damaged")
        rows.append(
            {
                "event_id": event_id,
                "source_layer": source,
                "raw_damage": rec.get(damage_field),
                "damage_class": None if _null(cls) else cls,
                "is_damaged": None if _null(damaged) else bool(damaged),
                "structure_type": rec.get(structure_field) if structure_field else None,
                "attrs": json_text({k: v for k, v in rec.items() if k not in keep}),
            }
        )
    return _frame("damage", rows, [damage_geometry(g) for g in gdf.geometry])


def hazard_rows(gdf: gpd.GeoDataFrame, table: str, event_id: int, source: str) -> tuple[gpd.GeoDataFrame, int]:
    """Burn perimeters / flood extents: polygonal parts as MultiPolygon; returns (frame, features
    without polygons skipped)."""
    rows, geoms, skipped = [], [], 0
    for rec, geom in zip(_records(gdf), gdf.geometry, strict=False):
        multi = as_multipolygon(geom)
        if multi is None:
            skipped += 1
            continue
        rows.append({"event_id": event_id, "source": source, "attrs": json_text(rec)})
        geoms.append(multi)
    return _frame(table, rows, geoms), skipped


def feature_rows(gdf: gpd.GeoDataFrame, event_id: int | None, source: str, name_field: str | None) -> gpd.GeoDataFrame:
    """Classed features (a ``feature_class`` column) -> ``features`` rows; the attributes go to ``tags``."""
    if name_field is None:
        name_field = next((f for f in NAME_FIELDS if f in gdf.columns), None)
    rows = []
    for rec in _records(gdf):
        name = rec.get(name_field) if name_field else None
        rows.append(
            {
                "event_id": event_id,
                "source_layer": source,
                "feature_class": rec["feature_class"],
                "name": None if _null(name) else str(name),
                "tags": json_text({k: v for k, v in rec.items() if k not in NORMALISED}),
            }
        )
    return _frame("features", rows, list(gdf.geometry))


# ------------------------------------------------------------------------------------------ loading
def _store(
    engine: SpatialEngine, report: LoadReport, frame: gpd.GeoDataFrame, events: Sequence[int | None]
) -> LoadReport:
    report.loaded = engine.replace_rows(report.table, report.source_layer, frame, events)
    if report.repaired:
        report.notes.append(f"{report.repaired} invalid geometries repaired with make_valid")
    engine.log_load(report)
    return report


def load_sample(
    engine: SpatialEngine, layer: CatalogueLayer | str, catalogue: LayerCatalogue | None = None
) -> LoadReport:
    """Load one catalogue layer (normalised by :meth:`LayerCatalogue.read`)."""
    catalogue = catalogue or default_catalogue()
    layer = catalogue.get(layer) if isinstance(layer, str) else layer
    data = catalogue.read(layer.id)
    gdf, bent = to_4326(data.gdf)
    report = LoadReport(
        layer.id,
        str(data.path),
        layer.table,
        layer.row_event,
        read=data.read,
        skipped=data.empty + data.skipped,
        repaired=data.repaired + bent,
        source_crs=data.source_crs,
        notes=list(data.notes),
    )
    if len(layer.events) > 1:
        report.notes.append(f"stored once for events {', '.join(map(str, layer.events))} (layer_events)")
    if layer.table == "damage":
        assert layer.damage is not None  # the catalogue's validator
        frame = damage_rows(gdf, int(layer.row_event or 0), layer.id, layer.damage.field, layer.damage.structure_field)
    elif layer.table == "features":
        frame = feature_rows(gdf, layer.row_event, layer.id, layer.name_field)
    else:
        frame, non_poly = hazard_rows(gdf, layer.table, int(layer.row_event or 0), layer.id)
        report.skipped += non_poly
    return _store(engine, report, frame, layer.events)


def load_samples(
    engine: SpatialEngine, root: Path | None = None, only: Iterable[str] | None = None
) -> list[LoadReport]:
    """Load every catalogue layer (or those in ``only``) from the data folder (default: the catalogue's)."""
    catalogue = LayerCatalogue(root) if root else default_catalogue()
    wanted = set(only) if only else None
    unknown = (wanted or set()) - set(catalogue.layers)
    if unknown:
        raise ToolFailed(
            f"unknown sample layers {sorted(unknown)}",
            kind="invalid_input",
            hint="known: " + ", ".join(catalogue.layers),
        )
    return [
        load_sample(engine, layer, catalogue)
        for layer in catalogue.layers.values()
        if wanted is None or layer.id in wanted
    ]


def load_file(
    engine: SpatialEngine,
    path: Path | str,
    *,
    table: str,
    event_id: int | None,
    feature_class: str | None = None,
    name_field: str | None = None,
    damage_field: str | None = None,
    structure_field: str | None = None,
    layer: str | None = None,
    source_layer: str | None = None,
) -> LoadReport:
    """Load any GeoJSON / GeoPackage / other OGR vector file into ``table`` for ``event_id`` (features:
    None = every event). Damage values are read with the catalogue's damage scales, then by their words."""
    path = Path(path)
    if table not in TABLES or table in ("events", "load_log", "layer_events"):
        raise ToolFailed(
            f"cannot load into '{table}'",
            kind="invalid_input",
            hint="tables: damage, flood_extents, burn_perimeters, features",
        )
    if table != "features" and event_id is None:
        raise ToolFailed(f"{table} rows need an event id", kind="invalid_input", hint="pass --event ID")
    if not path.is_file():
        raise ToolFailed(f"no such file: {path}", kind="not_found")
    source = source_layer or (path.stem if layer is None else f"{path.stem}:{layer}")
    gdf, src_crs, repaired, empty = read_vector(path, layer)
    report = LoadReport(
        source, str(path), table, event_id, read=len(gdf) + empty, skipped=empty, repaired=repaired, source_crs=src_crs
    )
    if empty:
        report.notes.append(f"{empty} features without geometry skipped")
    if table == "features":
        if not feature_class:
            raise ToolFailed("features need a class", kind="invalid_input", hint="pass --class, e.g. healthcare")
        gdf, bent = to_4326(gdf.assign(feature_class=feature_class))
        frame = feature_rows(gdf, event_id, source, name_field)
    elif table == "damage":
        field = damage_field or next(
            (f for f in ("DAMAGE", "damage", "damage_class", "class") if f in gdf.columns), None
        )
        if field is None or field not in gdf.columns:
            raise ToolFailed(
                f"no damage field {field!r}" if field else "no damage field found",
                kind="invalid_input",
                hint="pass --damage-field NAME; fields: " + ", ".join(c for c in gdf.columns if c != gdf.geometry.name),
            )
        values = default_catalogue().damage_values(gdf[field].rename(None))
        gdf = gdf.drop(columns=[c for c in ("damage_class", "is_damaged") if c in gdf.columns and c != field])
        gdf = gdf.assign(damage_class=values["damage_class"].to_numpy(), is_damaged=values["is_damaged"].to_numpy())
        skip = ~values["keep"].to_numpy()
        if skip.any():
            report.skipped += int(skip.sum())
            report.notes.append(f"{int(skip.sum())} features skipped (not structures by a damage scale)")
        gdf, bent = to_4326(gdf[~skip])
        frame = damage_rows(gdf, int(event_id or 0), source, field, structure_field)
    else:
        gdf, bent = to_4326(gdf)
        frame, non_poly = hazard_rows(gdf, table, int(event_id or 0), source)
        report.skipped += non_poly
    report.repaired += bent
    return _store(engine, report, frame, [event_id])
