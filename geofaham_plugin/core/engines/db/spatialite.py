"""SpatiaLite engine (stdlib sqlite3 + mod_spatialite): the embedded default, one file.

Why SpatiaLite and not DuckDB in process: inside QGIS, importing duckdb makes QGIS abort on exit;
SpatiaLite shares QGIS's PROJ/GEOS and exits cleanly (see ENVIRONMENT.md). Needs an sqlite3 module
with ``enable_load_extension`` (Debian's /usr/bin/python3 has it) and ``libsqlite3-mod-spatialite``.

Queries run on a second connection that opens the file read-only (``mode=ro``); artifacts for a query
go into TEMP tables of that connection. Free SQL additionally runs under an authorizer that allows
only reads and non-denied functions (no write, ATTACH, pragma change, even inside a SpatiaLite
function), with ``load_extension`` switched off, strings and blobs capped at ``byte_cap``
(``SQLITE_LIMIT_LENGTH``) and the rows' total too. Deadline: a progress handler stops the VM between
steps, and a watchdog thread interrupts the connection at the deadline and asks GEOS to interrupt
(``GEOS_interruptRequest``) until the query returns: one GEOS call (a buffer of a self-crossing line)
never returns to the VM and once ran 25 s under a 2 s limit. GEOS's interrupt flag is process-wide:
a GEOS call of another thread running in the same tenth of a second may be interrupted too (it fails;
nothing is corrupted), and the flag is cleared when the query ends.

Metres: rows are pre-filtered with the R*Tree (the area's bounding box grown by a conservative number
of degrees for the distance), then in the WGS84 UTM zone of the area's centroid (EPSG 326xx/327xx;
distance <= d * 1.02 + 10 m covers the projection's scale error), and the reported distance is
``GeodesicLength`` of the shortest line (found in UTM) between the nearest points, on the WGS84
ellipsoid; it agrees with pyproj.Geod to millimetres. (``ST_Distance(a, b, 1)`` does run in 5.0.1, but
it picks the nearest point in degree space: 47 m too long for St John's at 3.3 km from the Palisades
hull, 2 m for Huntington Hospital near Eaton.) Areas use a Lambert azimuthal equal-area
projection centred on each geometry (``ST_Area(geom, 1)`` returns NULL in some 5.0.1 builds).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

import geopandas as gpd
import numpy as np
import shapely

from ...domain.events import load_events
from ...errors import ToolFailed
from ..area_grid import intersects_area
from ..sql_safety import QueryError, UnsafeSQL, denied_function
from .base import (
    DEFAULT_BYTE_CAP,
    DEFAULT_ROW_CAP,
    DEFAULT_TIMEOUT_S,
    SCHEMA_HINT,
    ArtifactFile,
    ArtifactTable,
    DamageCount,
    LoadReport,
    QueryResult,
    QueryTable,
    SpatialEngine,
    area_union,
    hazard_frame,
    hazard_rows_sql,
    hazard_sources,
    is_null,
    prepare_sql,
    query_timed_out,
    quote_ident,
    read_artifact,
    result_too_large,
    served,
)
from .schema import (
    BACKFILL_LAYER_EVENTS,
    GEOMETRY_COLUMN,
    INSERT_COLUMNS,
    OUTPUT_COLUMNS,
    SOURCE_COLUMN,
    SPATIALITE_GEOMETRIES,
    SPATIALITE_TABLES,
)

T = TypeVar("T")
#: rows of R*Tree candidates tested at a time (``_inside_rows``: memory stays one chunk wide)
COUNT_CHUNK = 200_000
_SQLITE_TYPES = {"int": "INTEGER", "float": "REAL", "bool": "INTEGER", "time": "TEXT", "text": "TEXT"}
_READ_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, getattr(sqlite3, "SQLITE_RECURSIVE", 33)}
_LAEA = (
    "'+proj=laea +lat_0=' || ST_Y(ST_Centroid(geom)) || ' +lon_0=' || ST_X(ST_Centroid(geom)) || "
    "' +datum=WGS84 +units=m +no_defs'"
)
AREA_KM2_SQL = f"ST_Area(ST_Transform(geom, 0, NULL, '+proj=longlat +datum=WGS84 +no_defs', {_LAEA})) / 1e6"


def _authorize(action: int, _arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None) -> int:
    """Authorizer for free SQL: reads only. Runs for every statement prepared on the connection,
    including those SpatiaLite functions prepare internally, so no function can write either."""
    if action == sqlite3.SQLITE_FUNCTION:
        return sqlite3.SQLITE_DENY if denied_function(arg2 or "") else sqlite3.SQLITE_OK
    return sqlite3.SQLITE_OK if action in _READ_ACTIONS else sqlite3.SQLITE_DENY  # incl. PRAGMA, ATTACH


@functools.cache
def _geos() -> ctypes.CDLL | None:
    """The GEOS C library mod_spatialite uses (same soname, so the same loaded copy), or None."""
    name = ctypes.util.find_library("geos_c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


class _Watchdog:
    """Enforces a deadline on one query of ``conn``: at the deadline it interrupts the connection (the VM
    stops at its next step) and, every 0.1 s until the query returns, asks GEOS to interrupt the call
    that is running (a long GEOS call never gets back to the VM). Leaving clears GEOS's flag."""

    def __init__(self, conn: sqlite3.Connection, timeout_s: float) -> None:
        self._conn, self._timeout_s = conn, timeout_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="gf-sql-watchdog", daemon=True)
        self.fired = False

    def _watch(self) -> None:
        if self._done.wait(self._timeout_s):
            return
        self.fired = True
        self._conn.interrupt()
        geos = _geos()
        while geos is not None and not self._done.wait(0.1):
            geos.GEOS_interruptRequest()

    def __enter__(self) -> _Watchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        geos = _geos()
        if self.fired and geos is not None:
            geos.GEOS_interruptCancel()


def _temp_table(artifact_id: str) -> str:
    """The TEMP table holding an artifact during one query."""
    return "temp." + quote_ident(f"gf_{artifact_id}")


def _row_bytes(row: Sequence[Any]) -> int:
    return sum(len(v) if isinstance(v, (bytes, str)) else 8 for v in row)


@contextmanager
def _limited(conn: sqlite3.Connection, timeout_s: float | None) -> Iterator[None]:
    """A typed query of ``conn`` under a deadline (None: none): the progress handler stops the VM, the
    watchdog a long GEOS call; stopped, it is ``query_timed_out``."""
    if timeout_s is None:
        yield
        return
    deadline = time.monotonic() + max(timeout_s, 0.0)
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 2_000)
    try:
        with _Watchdog(conn, max(timeout_s, 0.0)):
            yield
    except sqlite3.Error as exc:
        if time.monotonic() > deadline or str(exc).strip() == "interrupted":
            raise query_timed_out(timeout_s) from exc
        raise
    finally:
        conn.set_progress_handler(None, 0)


def _driver_errors(fn: Callable[..., T]) -> Callable[..., T]:
    """Typed queries: an sqlite3 error nobody translated becomes a ToolFailed the orchestrator reports."""

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except sqlite3.Error as exc:
            raise ToolFailed(
                f"SpatiaLite error: {exc}", kind="error", hint="re-create the database: db init --reset; db load"
            ) from exc

    return wrapped


def _is_spatialite_blob(v: Any) -> bool:
    return isinstance(v, bytes) and len(v) >= 45 and v[0] == 0x00 and v[1] in (0, 1) and v[38] == 0x7C and v[-1] == 0xFE


def _blob_srid(v: bytes) -> int:
    return int.from_bytes(v[2:6], "little" if v[1] == 1 else "big")


def _value(v: Any, kind: str) -> Any:
    if is_null(v):
        return None
    if kind == "bool":
        return int(bool(v))
    if kind == "int":
        return int(v)
    return v.item() if isinstance(v, np.generic) else v


class SpatiaLiteEngine(SpatialEngine):
    """The disaster database in one SpatiaLite file (default: ``<cache>/db/geofaham.sqlite``)."""

    name = "spatialite"

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser().resolve()
        self._lock = threading.RLock()
        self._rw: sqlite3.Connection | None = None
        self._ro: sqlite3.Connection | None = None
        self.trace: Callable[[str], None] | None = None  # called with every SQL text we prepare

    def describe(self) -> str:
        return f"spatialite {self.path}"

    # ---------------------------------------------------------------------------------- connections
    def _open(self, read_only: bool) -> sqlite3.Connection:
        if read_only:
            if not self.path.is_file():
                raise ToolFailed(
                    f"no database at {self.path}",
                    kind="not_found",
                    hint="create it with: python -m geofaham_plugin db init && python -m geofaham_plugin db load",
                )
            conn = sqlite3.connect(
                self.path.as_uri() + "?mode=ro", uri=True, timeout=30, check_same_thread=False, isolation_level=None
            )
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
        if not hasattr(conn, "enable_load_extension"):
            raise ToolFailed(
                "this Python's sqlite3 cannot load extensions",
                kind="error",
                hint="use Debian's /usr/bin/python3 (or the QGIS Python), or PostGIS",
            )
        conn.enable_load_extension(True)
        try:
            conn.load_extension("mod_spatialite")
        except sqlite3.OperationalError as exc:
            conn.close()
            raise ToolFailed(
                f"cannot load SpatiaLite: {exc}", kind="error", hint="install libsqlite3-mod-spatialite"
            ) from exc
        finally:
            if conn is not None:
                with suppress(sqlite3.ProgrammingError):
                    conn.enable_load_extension(False)  # SQL's load_extension() stays off
        return conn

    def _writer(self) -> sqlite3.Connection:
        if self._rw is None:
            self._rw = self._open(read_only=False)
            self._rw.execute("PRAGMA foreign_keys = ON")
        return self._rw

    def _reader(self) -> sqlite3.Connection:
        if self._ro is None:
            self._ro = self._open(read_only=True)
        return self._ro

    def close(self) -> None:
        with self._lock:
            for conn in (self._ro, self._rw):
                if conn is not None:
                    conn.close()
            self._ro = self._rw = None

    def _exec(
        self, conn: sqlite3.Connection, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()
    ) -> sqlite3.Cursor:
        if self.trace is not None:
            self.trace(sql)
        return conn.execute(sql, params)

    def _execmany(self, conn: sqlite3.Connection, sql: str, rows: Iterator[Sequence[Any]]) -> None:
        if self.trace is not None:
            self.trace(sql)
        conn.executemany(sql, rows)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._writer()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # ------------------------------------------------------------------------------------ lifecycle
    def init(self, reset: bool = False) -> None:
        with self._lock:
            if reset:
                self.close()
                for suffix in ("", "-journal", "-wal", "-shm"):
                    Path(str(self.path) + suffix).unlink(missing_ok=True)
            conn = self._writer()
            if not conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'spatial_ref_sys'").fetchone()[0]:
                conn.execute("SELECT InitSpatialMetadata(1)")
            with self._tx() as tx:
                for statement in SPATIALITE_TABLES.split(";"):
                    if statement.strip():
                        tx.execute(statement)
                for table, column, gtype, not_null in SPATIALITE_GEOMETRIES:
                    known = tx.execute(
                        "SELECT spatial_index_enabled FROM geometry_columns WHERE f_table_name = ? "
                        "AND f_geometry_column = ?",
                        (table, column),
                    ).fetchone()
                    if known is None:
                        tx.execute("SELECT AddGeometryColumn(?, ?, 4326, ?, 'XY', ?)", (table, column, gtype, not_null))
                    if known is None or not known[0]:
                        tx.execute("SELECT CreateSpatialIndex(?, ?)", (table, column))
                self._seed_events(tx)
                tx.execute(BACKFILL_LAYER_EVENTS)

    def _seed_events(self, conn: sqlite3.Connection) -> None:
        from shapely.geometry import MultiPolygon, box

        rows = [
            (
                e.id,
                e.type,
                e.name,
                e.place,
                e.country,
                e.event_date.isoformat(),
                shapely.to_wkb(MultiPolygon([box(*e.bbox_4326)])) if e.bbox_4326 else None,
            )
            for e in load_events()
        ]
        self._execmany(
            conn,
            "INSERT INTO events (id, type, name, place, country, event_date, aoi) "
            "VALUES (?, ?, ?, ?, ?, ?, GeomFromWKB(?, 4326)) ON CONFLICT (id) DO UPDATE SET "
            "type = excluded.type, name = excluded.name, place = excluded.place, "
            "country = excluded.country, event_date = excluded.event_date, aoi = excluded.aoi",
            iter(rows),
        )

    # --------------------------------------------------------------------------------------- loading
    def replace_rows(self, table: str, source: str, frame: gpd.GeoDataFrame, events: Sequence[int | None]) -> int:
        spec = INSERT_COLUMNS[table]
        cols = [c for c, _ in spec]
        kinds = [k for _, k in spec]
        values = frame[cols].astype(object).values.tolist()
        wkbs = [None if g is None else shapely.to_wkb(g) for g in frame.geometry.values]
        rows = (
            [_value(v, k) for v, k in zip(row, kinds, strict=False)] + [w] for row, w in zip(values, wkbs, strict=False)
        )
        marks = ", ".join("?" * len(cols))
        with self._tx() as conn:
            # table and column from our schema (INSERT_COLUMNS keys)
            delete = f"DELETE FROM {table} WHERE {SOURCE_COLUMN[table]} = ?"  # nosec B608
            self._exec(conn, delete, (source,))
            self._execmany(
                conn,
                f"INSERT INTO {table} ({', '.join(cols)}, {GEOMETRY_COLUMN[table]}) "  # names from our schema  # nosec B608
                f"VALUES ({marks}, GeomFromWKB(?, 4326))",
                rows,
            )
            self._exec(conn, "DELETE FROM layer_events WHERE target_table = ? AND source_layer = ?", (table, source))
            self._execmany(
                conn,
                "INSERT INTO layer_events (target_table, source_layer, event_id) VALUES (?, ?, ?)",
                iter([(table, source, None if e is None else int(e)) for e in dict.fromkeys(events)]),
            )
        return len(frame)

    def log_load(self, report: LoadReport) -> None:
        with self._tx() as conn:
            conn.execute(
                "DELETE FROM load_log WHERE source_layer = ? AND target_table = ?", (report.source_layer, report.table)
            )
            conn.execute(
                "INSERT INTO load_log (source_layer, source_path, target_table, event_id, read_count, "
                "loaded_count, skipped_count, repaired_count, source_crs, notes) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    report.source_layer,
                    report.source_path,
                    report.table,
                    report.event_id,
                    report.read,
                    report.loaded,
                    report.skipped,
                    report.repaired,
                    report.source_crs,
                    "; ".join(report.notes),
                ),
            )

    @_driver_errors
    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {"engine": self.describe(), "tables": {}}
        with self._lock:
            conn = self._reader()
            for table in ("damage", "flood_extents", "burn_perimeters", "features"):
                rows = conn.execute(
                    f"SELECT coalesce(CAST(event_id AS TEXT), 'none'), count(*) FROM {table} GROUP BY 1 ORDER BY 1"  # our table names  # nosec B608
                ).fetchall()
                out["tables"][table] = dict(rows)
            out["events"] = conn.execute("SELECT count(*) FROM events").fetchone()[0]
            out["layer_events"] = self._layer_events(
                conn.execute("SELECT target_table, source_layer, event_id FROM layer_events").fetchall()
            )
            rows = conn.execute(
                f"SELECT 'burn_perimeters', event_id, source, {AREA_KM2_SQL} FROM burn_perimeters "  # our SQL constant  # nosec B608
                f"UNION ALL SELECT 'flood_extents', event_id, source, {AREA_KM2_SQL} FROM flood_extents "
                "ORDER BY 1, 2, 3"
            ).fetchall()
            out["hazards"] = [{"table": t, "event_id": e, "source": s, "area_km2": round(a, 3)} for t, e, s, a in rows]
            cur = conn.execute(
                "SELECT source_layer, target_table, event_id, read_count, loaded_count, skipped_count, "
                "repaired_count, source_crs, notes, loaded_at FROM load_log ORDER BY id"
            )
            names = [d[0] for d in cur.description]
            out["load_log"] = [dict(zip(names, r, strict=False)) for r in cur.fetchall()]
        return out

    # ---------------------------------------------------------------------------------- artifacts
    def _load_artifacts(self, conn: sqlite3.Connection, tables: Sequence[ArtifactTable]) -> None:
        for art in tables:
            name = _temp_table(art.id)
            cols = ", ".join(f"{quote_ident(c)} {_SQLITE_TYPES[k]}" for c, k in art.columns)
            conn.execute(f"DROP TABLE IF EXISTS {name}")
            self._exec(conn, f"CREATE TABLE {name} ({cols + ', ' if cols else ''}geom BLOB)")
            kinds = [k for _, k in art.columns]
            rows = (
                [_value(v, k) for v, k in zip(row, kinds, strict=False)] + [w]
                for row, w in zip(art.rows, art.wkb(), strict=False)
            )
            names = "".join(f"{quote_ident(c)}, " for c, _ in art.columns)
            marks = "?, " * len(art.columns)
            # identifiers via quote_ident, values are parameters
            insert = f"INSERT INTO {name} ({names}geom) VALUES ({marks}GeomFromWKB(?, 4326))"  # nosec B608
            self._execmany(conn, insert, rows)

    def _drop_artifacts(self, conn: sqlite3.Connection, ids: Sequence[str]) -> None:
        for aid in ids:
            conn.execute(f"DROP TABLE IF EXISTS {_temp_table(aid)}")

    @contextmanager
    def _area(self, event_id: int, area: ArtifactFile | None) -> Iterator[tuple[sqlite3.Connection, str, str]]:
        """(reader connection, SQL of a one-row query giving the area's geometry, description)."""
        with self._lock:
            conn = self._reader()
            if area is None:
                count = f"SELECT count(*) FROM ({hazard_sources(':e')})"  # our SQL  # nosec B608
                n = conn.execute(count, {"e": event_id}).fetchone()[0]
                if not n:
                    raise ToolFailed(
                        f"no hazard (burn perimeter or flood extent) is loaded for event {event_id}",
                        kind="not_found",
                        hint="pass an area artifact, or load a hazard layer (db load)",
                    )
                yield conn, area_union(hazard_sources(":event")), "event hazard"
                return
            self._load_artifacts(conn, [read_artifact(area.id, area.path).require_polygons()])
            try:
                yield (
                    conn,
                    area_union(f"SELECT geom FROM {_temp_table(area.id)} WHERE ST_Dimension(geom) = 2"),  # quote_ident  # nosec B608
                    f"artifact {area.id}",
                )
            finally:
                self._drop_artifacts(conn, [area.id])

    @staticmethod
    def _filters(
        table: str, feature_class: str | None, classes: list[str] | None, source: str | None
    ) -> tuple[str, dict]:
        out = [served(table, "t.source_layer", ":event")]
        params: dict[str, Any] = {}
        if feature_class is not None:
            out.append("t.feature_class = :fclass")
            params["fclass"] = feature_class
        if classes is not None:
            marks = []
            for i, c in enumerate(classes):
                params[f"c{i}"] = c
                marks.append(f":c{i}")
            out.append(f"t.damage_class IN ({', '.join(marks) or 'NULL'})")
        if source is not None:
            out.append("t.source_layer = :source")
            params["source"] = source
        return " AND ".join(out), params

    @staticmethod
    def _columns(table: str) -> str:
        return ", ".join(f"t.{c}" for c in OUTPUT_COLUMNS[table])

    @staticmethod
    def _rtree(table: str, alias: str, box: str, dx: str = "0", dy: str = "0") -> str:
        """Join the table's R*Tree on the bounding box of ``box`` grown by (dx, dy) degrees."""
        return (
            f"JOIN idx_{table}_geom r ON r.xmin <= MbrMaxX({box}) + {dx} AND r.xmax >= MbrMinX({box}) - {dx} "
            f"AND r.ymin <= MbrMaxY({box}) + {dy} AND r.ymax >= MbrMinY({box}) - {dy} "
            f"JOIN {table} {alias} ON {alias}.id = r.pkid"
        )

    # ----------------------------------------------------------------------------------- queries
    @_driver_errors
    def count_damage(
        self, event_id: int, area: ArtifactFile | None = None, *, timeout_s: float | None = None
    ) -> DamageCount:
        """The R*Tree gives the records whose box meets the area's; their exact test runs in process on the
        area's grid (``area_grid``: GEOS's answer, an order of magnitude sooner than ``ST_Intersects`` row by row
        at 10^6 records), a chunk of rows at a time."""
        counts: dict[tuple[Any, Any, Any], int] = {}
        with self._area(event_id, area) as (conn, area_sql, label), _limited(conn, timeout_s):
            for rows in self._inside_rows(
                conn,
                area_sql,
                "damage",
                "t.damage_class, t.raw_damage, t.is_damaged",
                served("damage", "t.source_layer", ":event"),
                {"event": event_id},
            ):
                for row in rows:
                    key = row[:3]
                    counts[key] = counts.get(key, 0) + 1
        return self._damage_count(event_id, label, [(*key, n) for key, n in counts.items()])

    def _inside_rows(
        self, conn: sqlite3.Connection, area_sql: str, table: str, columns: str, where: str, params: dict[str, Any]
    ) -> Iterator[list[tuple]]:
        """The rows (``columns`` then the geometry as WKB, in id order) of ``table`` matching ``where`` whose
        geometry intersects the area, a chunk at a time: the R*Tree gives the rows whose box meets the area's, and
        the exact test runs in process on the area's grid (``area_grid``: GEOS's answer, an order of magnitude
        sooner than ``ST_Intersects`` row by row at 10^6 rows); memory stays one chunk wide."""
        area_row = f"SELECT AsBinary(geom), SRID(geom) FROM ({area_sql})"  # our SQL  # nosec B608
        wkb, srid = self._exec(conn, area_row, params).fetchone()  # named: the names it does not use are ignored
        if wkb is None:
            return
        shape = shapely.from_wkb(wkb)
        cursor = self._exec(
            conn,
            "WITH area AS (SELECT GeomFromWKB(:area, :srid) AS geom) "  # our SQL; values are parameters  # nosec B608
            f"SELECT {columns}, AsBinary(t.geom) FROM area a {self._rtree(table, 't', 'a.geom')} "
            f"WHERE {where} ORDER BY t.id",
            params | {"area": wkb, "srid": srid},
        )
        while rows := cursor.fetchmany(COUNT_CHUNK):
            hits = intersects_area(shape, shapely.from_wkb([r[-1] for r in rows]))
            yield [rows[i] for i in np.flatnonzero(hits)]

    @_driver_errors
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
        self._check_table(table)
        where, params = self._filters(table, feature_class, self._check_classes(damage_classes), source_layer)
        params["event"] = event_id
        with self._area(event_id, area) as (conn, area_sql, _), _limited(conn, timeout_s):
            rows = [
                row
                for chunk in self._inside_rows(conn, area_sql, table, self._columns(table), where, params)
                for row in chunk
            ]
        return self._frame(table, rows)

    @_driver_errors
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
        self._check_table(table)
        if not distance_m >= 0:
            raise ToolFailed("distance must be zero or positive", kind="invalid_input")
        where, params = self._filters(table, feature_class, self._check_classes(damage_classes), source_layer)
        params |= {
            "event": event_id,
            "dist": float(distance_m),
            "pre": float(distance_m) * 1.02 + 10.0,
            "margin": float(distance_m) + 100.0,
        }
        # degrees per metre, conservatively: >= 110,000 m per degree of latitude, >= 111,000 cos(lat) of longitude
        sql = f"""
WITH area AS MATERIALIZED ({{area}}),
z AS MATERIALIZED (
  SELECT geom, srid, ST_Transform(geom, srid) AS gu,
         :margin / 110000.0 AS dy,
         :margin / (111000.0 * Cos(Radians(MIN(89.9, MAX(Abs(MbrMinY(geom)), Abs(MbrMaxY(geom))) + :margin / 110000.0)))) AS dx
  FROM (SELECT geom, (CASE WHEN ST_Y(c) >= 0 THEN 32600 ELSE 32700 END)
                     + MIN(CAST((ST_X(c) + 180.0) / 6.0 AS INTEGER) + 1, 60) AS srid
        FROM (SELECT geom, ST_Centroid(geom) AS c FROM area)))
SELECT * FROM (
  SELECT {self._columns(table)},
         CASE WHEN ST_Intersects(t.geom, z.geom) = 1 THEN 0.0
              ELSE GeodesicLength(ST_Transform(ST_ShortestLine(ST_Transform(t.geom, z.srid), z.gu), 4326)) END AS d,
         AsBinary(t.geom) AS wkb
  FROM z {self._rtree(table, "t", "z.geom", "z.dx", "z.dy")}
  WHERE {where} AND ST_Distance(ST_Transform(t.geom, z.srid), z.gu) <= :pre)
WHERE d <= :dist ORDER BY d, id"""  # our SQL; values are parameters  # nosec B608
        with self._area(event_id, area) as (conn, area_sql, _), _limited(conn, timeout_s):
            rows = self._exec(conn, sql.replace("{area}", area_sql), params).fetchall()
        return self._frame(table, rows, extra=("distance_m",))

    @_driver_errors
    def hazard(self, event_id: int) -> gpd.GeoDataFrame:
        with self._lock:
            rows = self._reader().execute(hazard_rows_sql(":e", "AsBinary"), {"e": event_id}).fetchall()
        return hazard_frame(rows)

    # ---------------------------------------------------------------------------------- free SQL
    def run_sql(
        self,
        sql: str,
        artifacts: Mapping[str, Path | str] | Sequence[ArtifactFile] | None = None,
        *,
        row_cap: int = DEFAULT_ROW_CAP,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        byte_cap: int = DEFAULT_BYTE_CAP,
    ) -> QueryResult:
        statement, used, tables = prepare_sql(sql, artifacts, _temp_table, "sqlite")
        started = time.perf_counter()
        with self._lock:
            conn = self._reader()
            try:
                self._load_artifacts(conn, tables)
                deadline = time.monotonic() + timeout_s
                conn.set_authorizer(_authorize)
                conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 2_000)
                length = conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max(1, byte_cap))
                try:
                    with _Watchdog(conn, timeout_s):
                        rows, description = self._fetch(conn, statement, row_cap, byte_cap)
                except sqlite3.Error as exc:
                    raise _translate(exc, timeout_s, time.monotonic() > deadline, byte_cap) from exc
                finally:
                    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, length)
                    conn.set_authorizer(None)
                    conn.set_progress_handler(None, 0)
                result = self._result(conn, statement, description, rows, row_cap, started)
            finally:
                self._drop_artifacts(conn, used)
        return result

    def _fetch(
        self, conn: sqlite3.Connection, statement: str, row_cap: int, byte_cap: int
    ) -> tuple[list[tuple], Sequence[Any]]:
        """At most ``row_cap + 1`` rows, in chunks, stopping once they hold more than ``byte_cap`` bytes."""
        cur = self._exec(conn, statement)
        try:
            rows: list[tuple] = []
            size = 0
            while len(rows) <= row_cap:
                chunk = cur.fetchmany(min(500, row_cap + 1 - len(rows)))
                if not chunk:
                    break
                size += sum(_row_bytes(r) for r in chunk)
                if size > byte_cap:
                    raise result_too_large(byte_cap)
                rows += chunk
            return rows, cur.description or ()
        finally:
            cur.close()

    @staticmethod
    def _result(
        conn: sqlite3.Connection,
        statement: str,
        description: Sequence[Any],
        rows: list[tuple],
        row_cap: int,
        started: float,
    ) -> QueryResult:
        truncated = len(rows) > row_cap
        rows = rows[:row_cap]
        columns = [d[0] for d in description]
        geo_idx = [i for i in range(len(columns)) if any(_is_spatialite_blob(r[i]) for r in rows)]
        srid = None
        if geo_idx:
            converted = []
            for row in rows:
                values = list(row)
                for i in geo_idx:
                    v = values[i]
                    if _is_spatialite_blob(v):
                        srid = srid or _blob_srid(v) or None
                        values[i] = shapely.from_wkb(conn.execute("SELECT AsBinary(?)", (v,)).fetchone()[0])
                converted.append(tuple(values))
            rows = converted
        return QueryResult(
            columns,
            rows,
            truncated,
            row_cap,
            statement,
            [columns[i] for i in geo_idx],
            srid,
            time.perf_counter() - started,
        )


def _translate(exc: sqlite3.Error, timeout_s: float, timed_out: bool, byte_cap: int) -> Exception:
    message = str(exc).strip() or type(exc).__name__
    if "too big" in message:  # SQLITE_TOOBIG: a string or blob above SQLITE_LIMIT_LENGTH
        return result_too_large(byte_cap)
    if timed_out or message == "interrupted":
        return ToolFailed(
            f"the query was stopped after {timeout_s:g} s",
            kind="timeout",
            hint="filter early (join the R*Tree idx_<table>_geom or compare MbrMinX/MbrMaxX first), "
            "avoid cross joins and unbounded recursion, aggregate in SQL",
        )
    if "not authorized" in message or "readonly" in message or "read-only" in message:
        return UnsafeSQL(f"refused by the database: {message}")
    if isinstance(exc, (sqlite3.OperationalError, sqlite3.ProgrammingError, sqlite3.IntegrityError)):
        return QueryError(f"the database rejected the query: {message}", SCHEMA_HINT)
    return ToolFailed(f"the query failed: {message}", kind="error", hint=SCHEMA_HINT)
