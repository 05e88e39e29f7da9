"""One interface over two spatial databases: PostGIS (shared, multi-user) and SpatiaLite (embedded).

Both hold the same logical schema (see ``schema.py``): ``events`` (the 17 disaster records), ``damage``,
``flood_extents``, ``burn_perimeters``, ``features`` and ``load_log``, every geometry in EPSG:4326.
The Vector agent's tools call the typed methods of :class:`SpatialEngine`; they return plain results
or GeoDataFrames that the caller registers in the Response Store as GeoPackage. Free SQL goes through
:meth:`SpatialEngine.run_sql`, which is checked (``sql_safety``) and then runs read-only, with a
timeout and a row cap.

Metres are never measured in degrees or in EPSG:3857: PostGIS uses geography (spheroid), SpatiaLite
pre-filters in the UTM zone of the hazard and reports the geodesic length of the shortest line between
the nearest points; areas are geodesic (PostGIS) or in a Lambert azimuthal equal-area projection
centred on the geometry (SpatiaLite).
"""

from __future__ import annotations

import json
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, NamedTuple

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from ...errors import ToolFailed
from .schema import DAMAGE_CLASSES, OUTPUT_COLUMNS

QueryTable = Literal["damage", "features"]
DEFAULT_ROW_CAP = 10_000
DEFAULT_TIMEOUT_S = 30.0
# Free SQL results stop at this many bytes (values as the database holds them): a few rows of huge
# geometries or strings must not fill the memory of QGIS (an adversarial query made 1.5 GB in 5 rows).
DEFAULT_BYTE_CAP = 64 * 1024 * 1024

SCHEMA_HINT = (
    "tables: events(id, type, name, place, country, event_date, aoi), "
    "damage(id, event_id, source_layer, raw_damage, damage_class, is_damaged, structure_type, attrs, geom), "
    "flood_extents(id, event_id, source, attrs, geom), burn_perimeters(id, event_id, source, attrs, geom), "
    "features(id, event_id, source_layer, feature_class, name, tags, geom), "
    "layer_events(target_table, source_layer, event_id): the events each loaded layer serves (one layer can serve "
    "several records, e.g. the Palisades snapshot serves 12, 13, 14; NULL: features of every event) - select an "
    "event's rows with source_layer IN (SELECT source_layer FROM layer_events WHERE event_id = N) (hazards: source IN ...); "
    "a feature in several classes has one row per class; every geom is EPSG:4326 lon/lat, "
    "artifacts {{a_xxxxxxxx}} have their attributes (lower-case names) and geom in EPSG:4326; "
    "measure metres geodesically, never in degrees"
)


class ArtifactFile(NamedTuple):
    """A vector artifact as the engine sees it: its id (= the GeoPackage layer name) and its file."""

    id: str
    path: Path

    @classmethod
    def from_store(cls, store: Any, artifact_id: str) -> ArtifactFile:
        """The artifact ``artifact_id`` of a ResponseStore (raises the store's UnknownArtifact)."""
        return cls(artifact_id, Path(store.abs_path(artifact_id)))


def artifact_map(artifacts: Mapping[str, Path | str] | Sequence[ArtifactFile] | None) -> dict[str, Path]:
    """``{id: path}`` from either form callers have at hand."""
    if not artifacts:
        return {}
    if isinstance(artifacts, Mapping):
        return {str(k): Path(v) for k, v in artifacts.items()}
    return {a.id: Path(a.path) for a in artifacts}


@dataclass(frozen=True)
class DamageCount:
    """Damage records of one event inside an area, counted by normalised class.

    ``by_class`` has every class of :data:`DAMAGE_CLASSES` (zeros included) plus ``unclassified`` for
    records whose source does not grade damage (e.g. Microsoft's binary "Damaged Building" labels);
    ``by_raw`` keeps the source's own values so nothing is lost in the normalisation; ``damaged`` counts
    records known to be damaged at all (any class above ``none``, or a damaged-but-ungraded label)."""

    event_id: int
    area: str  # "event hazard" or "artifact a_1234abcd"
    by_class: dict[str, int]
    by_raw: dict[str, int]
    damaged: int
    total: int

    def to_frame(self) -> pd.DataFrame:
        """One row per class (in severity order), for ``store.register_table``."""
        return pd.DataFrame({"damage_class": list(self.by_class), "count": list(self.by_class.values())})


@dataclass
class QueryResult:
    """Rows of a free SQL query. Geometry values are already shapely geometries; ``truncated`` is
    True when the query had more than ``row_cap`` rows (only the first ``row_cap`` are here)."""

    columns: list[str]
    rows: list[tuple]
    truncated: bool
    row_cap: int
    sql: str  # the statement as sent (placeholders rewritten to temporary tables)
    geometry_columns: list[str] = field(default_factory=list)
    srid: int | None = None
    elapsed_s: float = 0.0

    def to_frame(self) -> pd.DataFrame:
        """All columns as a DataFrame; geometries as WKT, JSON as text (table artifacts)."""
        df = pd.DataFrame.from_records(self.rows, columns=self.columns)
        for col in df.columns:
            df[col] = _plain(df[col], wkt=True)
        return df

    def to_gdf(self) -> gpd.GeoDataFrame:
        """The rows as a GeoDataFrame on the first geometry column (EPSG from the data, default 4326);
        further geometry columns become WKT. Fit for ``store.register_vector`` (GeoPackage)."""
        if not self.geometry_columns:
            raise ToolFailed(
                "the query returned no geometry column",
                kind="invalid_input",
                hint="select a geometry column (e.g. geom) to get a layer, or use the table result",
            )
        df = pd.DataFrame.from_records(self.rows, columns=self.columns)
        main = self.geometry_columns[0]
        geoms = df.pop(main)
        for col in df.columns:
            df[col] = _plain(df[col], wkt=True)
        names = list(df.columns)
        geom_name = main if main not in names else f"{main}_geom"
        return gpd.GeoDataFrame(
            df, geometry=gpd.GeoSeries(list(geoms), index=df.index, name=geom_name), crs=f"EPSG:{self.srid or 4326}"
        )


@dataclass
class LoadReport:
    """What one load put into the database; one ``load_log`` row."""

    source_layer: str
    source_path: str
    table: str
    event_id: int | None
    read: int = 0
    loaded: int = 0
    skipped: int = 0
    repaired: int = 0
    source_crs: str = ""
    notes: list[str] = field(default_factory=list)


def _plain(series: pd.Series, wkt: bool) -> pd.Series:
    """Values GeoPackage and JSON tables can hold: dicts/lists as JSON, Decimal as float,
    bytes as hex, geometries as WKT."""

    def conv(v: Any) -> Any:
        if isinstance(v, (dict, list)):
            return json.dumps(v, ensure_ascii=False, default=str)
        if isinstance(v, Decimal):
            return float(v)
        if isinstance(v, (bytes, memoryview)):
            return bytes(v).hex()
        if wkt and isinstance(v, shapely.Geometry):
            return v.wkt
        return v

    if series.dtype == object:
        return series.map(conv)
    return series


def json_text(record: Mapping[str, Any]) -> str | None:
    """Non-null attributes as JSON text (numpy scalars, dates and NaN handled)."""
    clean: dict[str, Any] = {}
    for key, value in record.items():
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, (datetime, date, pd.Timestamp)):
            value = value.isoformat()
        clean[str(key)] = value
    return json.dumps(clean, ensure_ascii=False, default=str) if clean else None


# --------------------------------------------------------------------------------------- artifacts
_COL_RE = re.compile(r"[^0-9a-z_]+")


@dataclass
class ArtifactTable:
    """An artifact ready for a temporary table: safe lower-case column names with their kind
    (int | float | bool | time | text), row values, and EPSG:4326 geometries."""

    id: str
    columns: list[tuple[str, str]]
    rows: list[tuple]
    geoms: np.ndarray  # shapely geometries, EPSG:4326, 2D

    @property
    def has_polygons(self) -> bool:
        return bool(len(self.geoms)) and bool((shapely.get_dimensions(self.geoms) == 2).any())

    def require_polygons(self) -> ArtifactTable:
        """Self, if it can serve as an area; else the model's mistake, named."""
        if not self.has_polygons:
            raise ToolFailed(
                f"artifact {self.id} has no polygons to use as an area",
                kind="invalid_input",
                hint="pass a polygon layer (a hazard, a buffer or an AOI) as the area",
            )
        return self

    def wkb(self) -> Iterator[bytes | None]:
        for g in self.geoms:
            yield None if g is None else shapely.to_wkb(g)


def prepare_sql(
    sql: str,
    artifacts: Mapping[str, Path | str] | Sequence[ArtifactFile] | None,
    temp_name: Callable[[str], str],
    dialect: Literal["postgres", "sqlite"],
) -> tuple[str, list[str], list[ArtifactTable]]:
    """The checked statement with ``{{a_…}}`` placeholders rewritten to ``temp_name(id)``, the ids it
    uses, and those artifacts read for loading into temporary tables (same for every engine)."""
    from ..sql_safety import check_select, rewrite_placeholders

    paths = artifact_map(artifacts)
    rewritten, used = rewrite_placeholders(sql, paths, temp_name)
    statement = check_select(rewritten, dialect)
    return statement, used, [read_artifact(aid, paths[aid]) for aid in used]


def quote_ident(name: str) -> str:
    """``name`` as an SQL identifier (double quotes, inner quotes doubled): the one quoting helper for
    identifiers in SQL text (PostGIS code uses psycopg2.sql.Identifier, which does the same)."""
    return '"' + name.replace('"', '""') + '"'


def result_too_large(byte_cap: int) -> Exception:
    """The model's query asked for more data than a free SQL result may hold (same for every engine)."""
    from ..sql_safety import QueryError

    return QueryError(
        f"the result is larger than {byte_cap / 2**20:g} MB, the cap for one free SQL result",
        "return fewer rows or columns: aggregate in SQL (count, sum, ST_Union), simplify geometries "
        "(ST_SimplifyPreserveTopology) or filter to the area you need",
    )


def served(table: str, column: str, event: str) -> str:
    """SQL condition: ``column`` (a source_layer / source column of ``table``) names a layer serving the
    event bound to the parameter ``event`` (``:event`` or ``%(event)s``); feature layers serving every
    event (NULL) included. One layer can serve several event records; its rows are stored once."""
    every = " OR le.event_id IS NULL" if table == "features" else ""
    return (
        f"{column} IN (SELECT le.source_layer FROM layer_events le WHERE le.target_table = '{table}' "  # our table/column names; event is a parameter marker  # nosec B608
        f"AND (le.event_id = {event}{every}))"
    )


def hazard_sources(event: str) -> str:
    """One-column query of the event's hazard geometries (burn perimeters and flood extents)."""
    return (
        f"SELECT geom FROM burn_perimeters WHERE {served('burn_perimeters', 'source', event)} "  # our schema; event is a parameter marker  # nosec B608
        f"UNION ALL SELECT geom FROM flood_extents WHERE {served('flood_extents', 'source', event)}"
    )


def hazard_rows_sql(event: str, as_binary: str) -> str:
    """(kind, source, WKB) of the event's hazard polygons."""
    return (
        f"SELECT 'burn_perimeter', source, {as_binary}(geom) FROM burn_perimeters "  # our schema and function names  # nosec B608
        f"WHERE {served('burn_perimeters', 'source', event)} "
        f"UNION ALL SELECT 'flood_extent', source, {as_binary}(geom) FROM flood_extents "
        f"WHERE {served('flood_extents', 'source', event)}"
    )


def hazard_frame(rows: Sequence[tuple]) -> gpd.GeoDataFrame:
    """(kind, source, WKB) rows of an event's burn perimeters and flood extents as a GeoDataFrame."""
    return gpd.GeoDataFrame(
        {"kind": [r[0] for r in rows], "source": [r[1] for r in rows]},
        geometry=[shapely.from_wkb(bytes(r[2])) for r in rows],
        crs="EPSG:4326",
    )


def read_artifact(artifact_id: str, path: Path) -> ArtifactTable:
    """Read a GeoPackage artifact (layer = its id) into an :class:`ArtifactTable` in EPSG:4326.
    Why 4326: the database's tables are in 4326, so joins need no transform in the query."""
    import pyogrio

    if not Path(path).is_file():
        raise ToolFailed(f"artifact file for {artifact_id} is missing: {path}", kind="not_found")
    layers = [name for name, _ in pyogrio.list_layers(path)]
    layer = artifact_id if artifact_id in layers else (layers[0] if len(layers) == 1 else None)
    if layer is None:
        raise ToolFailed(
            f"{path} has no layer {artifact_id}", kind="invalid_input", hint=f"layers: {', '.join(layers)}"
        )
    gdf = gpd.read_file(path, layer=layer, engine="pyogrio")
    if gdf.crs is None:
        raise ToolFailed(
            f"artifact {artifact_id} has no CRS",
            kind="invalid_input",
            hint="register layers with a coordinate reference system",
        )
    if not gdf.crs.equals("EPSG:4326"):
        gdf = gdf.to_crs(4326)
    geoms = shapely.force_2d(gdf.geometry.values.to_numpy()) if len(gdf) else np.array([], dtype=object)
    attrs = pd.DataFrame(gdf.drop(columns=gdf.geometry.name))
    names: list[str] = []
    for raw in attrs.columns:
        name = _COL_RE.sub("_", str(raw).lower()).strip("_") or "col"
        if name[0].isdigit() or name == "geom":
            name = "c_" + name
        while name in names:
            name += "_"
        names.append(name)
    columns, values = [], []
    for name, raw in zip(names, attrs.columns, strict=False):
        series = attrs[raw]
        kind = (
            "bool"
            if pd.api.types.is_bool_dtype(series)
            else "int"
            if pd.api.types.is_integer_dtype(series)
            else "float"
            if pd.api.types.is_float_dtype(series)
            else "time"
            if pd.api.types.is_datetime64_any_dtype(series)
            else "text"
        )
        columns.append((name, kind))
        values.append([_cell(v, kind) for v in series.tolist()])
    rows = list(zip(*values, strict=False)) if values else [() for _ in range(len(gdf))]
    return ArtifactTable(artifact_id, columns, rows, geoms)


def is_null(v: Any) -> bool:
    """None, NaN, NaT or pd.NA (scalars only: a list or dict is a value)."""
    return v is None or (not isinstance(v, (str, bytes, list, dict, tuple)) and bool(pd.isna(v)))


def _cell(v: Any, kind: str) -> Any:
    if is_null(v):
        return None
    if kind == "time":
        return pd.Timestamp(v).isoformat()
    if kind == "text" and not isinstance(v, str):
        return json.dumps(v, default=str) if isinstance(v, (dict, list)) else str(v)
    return v.item() if isinstance(v, np.generic) else v


def query_timed_out(timeout_s: float) -> ToolFailed:
    """A typed query (damage counts, features inside or within a distance) stopped at its deadline."""
    return ToolFailed(
        f"the database query was stopped after {timeout_s:g} s (the step's time limit, GEOFAHAM_STEP_DEADLINE_S)",
        kind="timeout",
        hint="use a smaller area of interest or fewer features, or raise GEOFAHAM_STEP_DEADLINE_S",
    )


def area_union(parts: str) -> str:
    """One-row query: the union of ``parts`` (a query with a ``geom`` column). A single geometry is used
    as it is: dissolving the 249-part EMSR773 flood polygon alone costs a quarter of a second."""
    return (
        f"SELECT CASE WHEN (SELECT count(*) FROM ({parts}) p1) = 1 THEN (SELECT geom FROM ({parts}) p2) "  # parts: SQL built by the engines  # nosec B608
        f"ELSE (SELECT ST_Union(geom) FROM ({parts}) p3) END AS geom"
    )


def geometries_from_wkb(values: Sequence[Any]) -> list[Any]:
    return [None if v is None else shapely.from_wkb(bytes(v)) for v in values]


# ------------------------------------------------------------------------------------------ engine
class SpatialEngine(ABC):
    """The disaster database behind the Vector agent. Implementations: :class:`PostGISEngine`
    (psycopg2) and :class:`SpatiaLiteEngine` (stdlib sqlite3 + mod_spatialite). Safe to share between
    threads (the QGIS worker and the main thread): calls are serialised by the engine's lock."""

    name: str  # "postgis" | "spatialite"

    # --- lifecycle ---------------------------------------------------------------------------------
    @abstractmethod
    def init(self, reset: bool = False) -> None:
        """Create the schema (idempotent) and upsert the 17 event records; ``reset`` drops our
        tables first."""

    @abstractmethod
    def close(self) -> None:
        """Release connections."""

    def __enter__(self) -> SpatialEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @abstractmethod
    def describe(self) -> str:
        """Where the data lives (path, or DSN with the password masked)."""

    # --- loading -----------------------------------------------------------------------------------
    @abstractmethod
    def replace_rows(self, table: str, source: str, frame: gpd.GeoDataFrame, events: Sequence[int | None]) -> int:
        """Delete the rows ``table`` got from ``source`` earlier, insert ``frame`` (columns of
        ``schema.INSERT_COLUMNS[table]`` + geometry in EPSG:4326) and record the ``events`` the source
        serves in ``layer_events`` (None: every event, features only), in one transaction; returns rows
        inserted. Why replace: loading the same file twice must not double every count."""

    @abstractmethod
    def log_load(self, report: LoadReport) -> None:
        """Record a load in ``load_log`` (the latest load of a source replaces the earlier entry)."""

    @staticmethod
    def _layer_events(rows: Sequence[tuple[str, str, Any]]) -> dict[str, list[int | None]]:
        """``status()["layer_events"]``: "table:source" -> the events it serves, from (table, source, event) rows."""
        out: dict[str, list[int | None]] = {}
        for table, source, event in rows:
            out.setdefault(f"{table}:{source}", []).append(event)
        return {k: sorted(v, key=lambda e: -1 if e is None else e) for k, v in sorted(out.items())}

    @abstractmethod
    def status(self) -> dict[str, Any]:
        """Row counts per table and row event_id, the events each layer serves, hazard areas (km²,
        geodesic) and the load log."""

    # --- typed queries (the Vector agent's tools) -----------------------------------------------------
    @abstractmethod
    def count_damage(
        self, event_id: int, area: ArtifactFile | None = None, *, timeout_s: float | None = None
    ) -> DamageCount:
        """Damage records of the layers serving ``event_id`` intersecting ``area`` (a polygon artifact)
        or, without one, the event's hazard (union of the burn perimeters and flood extents serving it),
        counted by class. Every typed query stops within about a second of ``timeout_s`` (None: no limit)
        with ``ToolFailed(kind="timeout")`` (:func:`query_timed_out`), a long GEOS call included."""

    @abstractmethod
    def select_inside(
        self,
        table: QueryTable,
        event_id: int,
        area: ArtifactFile | None = None,
        *,
        feature_class: str | None = None,
        damage_classes: Sequence[str] | None = None,
        source_layer: str | None = None,
        timeout_s: float | None = None,
    ) -> gpd.GeoDataFrame:
        """Rows of ``damage`` or ``features`` of the layers serving the event (for features also those
        serving every event) that intersect ``area`` or the event's hazard, as a GeoDataFrame in EPSG:4326."""

    @abstractmethod
    def select_within(
        self,
        table: QueryTable,
        event_id: int,
        distance_m: float,
        area: ArtifactFile | None = None,
        *,
        feature_class: str | None = None,
        damage_classes: Sequence[str] | None = None,
        source_layer: str | None = None,
        timeout_s: float | None = None,
    ) -> gpd.GeoDataFrame:
        """Rows within ``distance_m`` metres of ``area`` or the event's hazard, with a geodesic
        ``distance_m`` column (0 inside), nearest first."""

    @abstractmethod
    def hazard(self, event_id: int) -> gpd.GeoDataFrame:
        """The hazard polygons (burn perimeters and flood extents) serving the event, with a ``kind`` column."""

    @abstractmethod
    def run_sql(
        self,
        sql: str,
        artifacts: Mapping[str, Path | str] | Sequence[ArtifactFile] | None = None,
        *,
        row_cap: int = DEFAULT_ROW_CAP,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        byte_cap: int = DEFAULT_BYTE_CAP,
    ) -> QueryResult:
        """Run one read-only SELECT/WITH query. ``{{a_1234abcd}}`` placeholders name artifacts in
        ``artifacts`` (id -> GeoPackage path); each is loaded into a temporary table whose name replaces
        the placeholder. Refusals and fixable errors raise ``ModelRetry`` (``UnsafeSQL`` /
        ``QueryError``, also for a result above ``byte_cap`` bytes: :func:`result_too_large`); more
        than ``row_cap`` rows are cut (``truncated``); a timeout raises ``ToolFailed(kind="timeout")``
        within about a second of ``timeout_s``."""

    # --- shared helpers ------------------------------------------------------------------------------
    @staticmethod
    def _check_table(table: str) -> None:
        if table not in OUTPUT_COLUMNS:
            raise ToolFailed(f"unknown table '{table}'", kind="invalid_input", hint="use 'damage' or 'features'")

    @staticmethod
    def _check_classes(damage_classes: Sequence[str] | None) -> list[str] | None:
        if damage_classes is None:
            return None
        wanted = [str(getattr(c, "value", c)) for c in damage_classes]
        bad = [c for c in wanted if c not in DAMAGE_CLASSES]
        if bad:
            raise ToolFailed(
                f"unknown damage classes {bad}", kind="invalid_input", hint="classes: " + ", ".join(DAMAGE_CLASSES)
            )
        return wanted

    @staticmethod
    def _damage_count(event_id: int, area: str, rows: Sequence[tuple[Any, Any, Any, int]]) -> DamageCount:
        by_class = {c: 0 for c in DAMAGE_CLASSES} | {"unclassified": 0}
        by_raw: dict[str, int] = {}
        damaged = total = 0
        for cls, raw, is_damaged, n in rows:
            n = int(n)
            by_class[cls if cls in by_class else "unclassified"] += n
            by_raw[str(raw)] = by_raw.get(str(raw), 0) + n
            damaged += n if is_damaged in (True, 1) else 0
            total += n
        return DamageCount(
            event_id, area, by_class, dict(sorted(by_raw.items(), key=lambda kv: -kv[1])), damaged, total
        )

    @staticmethod
    def _frame(table: str, rows: list[tuple], extra: Sequence[str] = ()) -> gpd.GeoDataFrame:
        """Rows ``(*OUTPUT_COLUMNS[table], *extra, wkb)`` as a GeoDataFrame in EPSG:4326."""
        names = list(OUTPUT_COLUMNS[table]) + list(extra)
        df = pd.DataFrame.from_records([r[:-1] for r in rows], columns=names)
        if "is_damaged" in df:
            df["is_damaged"] = df["is_damaged"].map(lambda v: None if v is None else bool(v)).astype(object)
        geoms = geometries_from_wkb([r[-1] for r in rows])
        return gpd.GeoDataFrame(df, geometry=gpd.GeoSeries(geoms, index=df.index), crs="EPSG:4326")


def utm_epsg(lon: float, lat: float) -> int:
    """EPSG code of the WGS84 UTM zone holding (lon, lat): 326xx north, 327xx south."""
    zone = min(int((lon + 180.0) // 6.0) + 1, 60)
    return (32600 if lat >= 0 else 32700) + zone
