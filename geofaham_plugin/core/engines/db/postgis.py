"""PostGIS engine (psycopg2): the shared, multi-user database.

Data goes in with ``COPY ... FROM STDIN`` (hex EWKB geometries): fast, and no coordinate ever ends up
in SQL text, neither for loads nor for artifacts in free SQL. Metres are measured on the spheroid with
geography (``ST_DWithin``/``ST_Distance``, backed by GIST indexes on ``geom::geography``).

Free SQL: checked by ``sql_safety``, artifacts copied into session temp tables, then ``BEGIN READ
ONLY``, ``SET LOCAL ROLE geofaham_ro``, ``SET LOCAL statement_timeout`` and a server-side cursor from
which at most ``row_cap + 1`` rows are fetched. The statement travels as a parameter of
``pg_temp.gf_open``, which opens it with PL/pgSQL ``OPEN ... FOR EXECUTE``: the server refuses a second
statement there ("cannot open multi-query plan as cursor"), so ``SELECT 1; COMMIT; DELETE ...`` cannot
run even if the checker were fooled. A running byte total stops results above ``byte_cap``.

The second wall is the role: ``scripts/setup.sh postgis`` (as the postgres superuser) runs
:func:`role_hardening_sql`: the role is NOINHERIT, member of no role, and may not execute
``set_config`` (which could set ``role`` back to the session user), backend signalling, advisory locks,
sleeps, large objects or server files (:data:`ROLE_DENIED_FUNCTIONS`). Without that, free SQL is refused.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import psycopg2
import psycopg2.errors
import psycopg2.extensions
import shapely
from psycopg2 import sql as pgsql

from ...domain.events import load_events
from ...errors import ToolFailed
from ..sql_safety import QueryError, UnsafeSQL
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
    read_artifact,
    result_too_large,
    served,
)
from .schema import (
    BACKFILL_LAYER_EVENTS,
    GEOMETRY_COLUMN,
    INSERT_COLUMNS,
    OUTPUT_COLUMNS,
    POSTGIS_DDL,
    SOURCE_COLUMN,
    TABLES,
)

READ_ONLY_ROLE = "geofaham_ro"
# What the read-only role must not execute even in a statement that fooled the checker: changing role
# or settings, signalling other backends, locks that outlive the transaction, sleeping, notifying, large
# objects, server files, functions that run a query given as text.
ROLE_DENIED_FUNCTIONS = (
    "set_config",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_sleep",
    "pg_sleep_for",
    "pg_sleep_until",
    "pg_notify",
    "pg_read_file",
    "pg_read_binary_file",
    "pg_stat_file",
    "ts_stat",
    "ts_rewrite",
)
ROLE_DENIED_PREFIXES = ("pg_advisory", "pg_try_advisory", "lo_", "dblink", "pg_ls_")
# one query for the set-up (literal arrays) and for the engine's own check (parameters)
_DENIED_PROCS = (
    "SELECT p.oid FROM pg_proc p WHERE p.proname = ANY({names}) "
    "OR EXISTS (SELECT 1 FROM unnest({prefixes}) x WHERE starts_with(p.proname, x))"
)
# Free SQL runs through these session functions (pg_temp: private to the connection, gone with it).
# gf_open opens the statement as one cursor: PL/pgSQL refuses a string holding several statements, and a
# nested call from inside the statement (to run text the checker never saw) finds gf_sql open and stops.
_SESSION_FUNCTIONS = """
CREATE OR REPLACE FUNCTION pg_temp.gf_open(q text) RETURNS refcursor LANGUAGE plpgsql AS $gf$
DECLARE c refcursor := 'gf_sql';
BEGIN
  IF EXISTS (SELECT 1 FROM pg_cursors WHERE name = 'gf_sql') THEN
    RAISE EXCEPTION 'gf_open cannot be nested' USING ERRCODE = '42501';
  END IF;
  OPEN c NO SCROLL FOR EXECUTE q;
  RETURN c;
END $gf$;
CREATE OR REPLACE FUNCTION pg_temp.gf_within(total numeric, cap bigint) RETURNS boolean LANGUAGE plpgsql AS $gf$
BEGIN
  IF total > cap THEN
    RAISE EXCEPTION 'gf: result above % bytes', cap USING ERRCODE = '54000';
  END IF;
  RETURN true;
END $gf$;
"""
_BYTES_COLUMN = "gf_result_bytes_"


def _capped(statement: str, byte_cap: int) -> str:
    """``statement`` with a running total of its row sizes that stops the cursor beyond ``byte_cap``
    bytes (a window without ORDER BY keeps the rows' order and streams). The statement ends with a
    newline, so a trailing ``--`` comment cannot swallow the wrapper."""
    return (
        f"SELECT * FROM (SELECT gf_q.*, sum(pg_column_size(gf_q.*)) OVER (ROWS UNBOUNDED PRECEDING) "  # the statement passed sql_safety; byte_cap is an int  # nosec B608
        f"AS {_BYTES_COLUMN} FROM (\n{statement}\n) gf_q) gf_w WHERE pg_temp.gf_within(gf_w.{_BYTES_COLUMN}, "
        f"{int(byte_cap)})"
    )


def _literal(value: str) -> str:
    """One of our constants as a standard SQL string literal (for SQL text run by psql: no parameters)."""
    if "\\" in value:
        raise ValueError(f"no backslash expected in {value!r}")
    return "'" + value.replace("'", "''") + "'"


def _sql_text_array(values: Sequence[str]) -> str:
    """A text[] literal of our own constants."""
    return "ARRAY[" + ", ".join(_literal(v) for v in values) + "]::text[]"


def role_hardening_sql(role: str = READ_ONLY_ROLE, owner: str = "geofaham") -> str:
    """SQL (idempotent, for the postgres superuser: only a superuser may revoke from PUBLIC on pg_catalog
    functions) that makes ``role`` a dead end: NOINHERIT, member of no role, and without EXECUTE on
    :data:`ROLE_DENIED_FUNCTIONS` / :data:`ROLE_DENIED_PREFIXES`. Those lose EXECUTE for PUBLIC (where
    PUBLIC had it) and get it back for ``owner`` only. ``scripts/setup.sh postgis`` pipes it to psql."""
    procs = _DENIED_PROCS.format(
        names=_sql_text_array(ROLE_DENIED_FUNCTIONS), prefixes=_sql_text_array(ROLE_DENIED_PREFIXES)
    )
    # identifiers go through format('%I'), values are quoted literals of our constants
    return f"""SET standard_conforming_strings = on;
DO $gf$
DECLARE f regprocedure; r name; ro CONSTANT text := {_literal(role)};
BEGIN
  EXECUTE format('ALTER ROLE %I NOINHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS', ro);
  FOR r IN SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid
           JOIN pg_roles u ON u.oid = m.member WHERE u.rolname = ro LOOP
    EXECUTE format('REVOKE %I FROM %I', r, ro);
  END LOOP;
  FOR f IN SELECT p.oid::regprocedure FROM pg_proc p WHERE p.oid IN ({procs})
           AND (p.proacl IS NULL OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) a
                                            WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE')) LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', f, {_literal(owner)});
  END LOOP;
END $gf$;
"""  # nosec B608


_PG_TYPES = {"int": "bigint", "float": "double precision", "bool": "boolean", "time": "timestamptz", "text": "text"}


class _Connection(psycopg2.extensions.connection):
    """A connection that reports every statement as sent (after parameter interpolation) to
    ``trace``; tests use it to prove no coordinates travel in SQL text."""

    trace: Callable[[str], None] | None = None


class _Cursor(psycopg2.extensions.cursor):
    def execute(self, query: Any, vars: Any = None) -> None:  # noqa: A002 - psycopg2's name
        try:
            super().execute(query, vars)
        finally:
            hook = self.connection.trace
            if hook is not None and self.query is not None:
                hook(self.query.decode("utf-8", "replace"))

    def copy_expert(self, sql: Any, file: Any, size: int = 8192) -> None:
        hook = self.connection.trace
        if hook is not None:
            hook(sql if isinstance(sql, str) else sql.as_string(self.connection))
        super().copy_expert(sql, file, size)


def _copy_text(value: Any, kind: str = "text") -> str:
    """One value in COPY text format."""
    if is_null(value):
        return "\\N"
    if kind == "bool" or isinstance(value, (bool, np.bool_)):
        return "t" if value else "f"
    if kind == "int":
        return str(int(value))
    text = str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _ewkb_hex(geoms: Sequence[Any]) -> list[str | None]:
    arr = np.asarray(list(geoms), dtype=object)
    out: list[str | None] = [None] * len(arr)
    ok = np.array([g is not None for g in arr], dtype=bool)
    if ok.any():
        hexes = shapely.to_wkb(shapely.set_srid(arr[ok], 4326), hex=True, include_srid=True)
        for i, h in zip(np.flatnonzero(ok), hexes, strict=False):
            out[i] = h
    return out


class PostGISEngine(SpatialEngine):
    """The disaster database in PostgreSQL/PostGIS, in schema ``schema`` (default ``geofaham``)."""

    name = "postgis"

    def __init__(
        self,
        dsn: str,
        schema: str = "geofaham",
        read_only_role: str | None = READ_ONLY_ROLE,
        connect_timeout_s: int = 10,
    ) -> None:
        self.dsn = dsn
        self.schema = schema
        self._lock = threading.RLock()
        self._connect_timeout_s = connect_timeout_s
        self._trace: Callable[[str], None] | None = None
        self._conn = self._connect()
        with self._cursor() as cur:
            cur.execute("SELECT oid FROM pg_type WHERE typname IN ('geometry', 'geography')")
            self._geo_oids = {r[0] for r in cur.fetchall()}
            cur.execute(
                "SELECT pg_has_role(current_user, oid, 'MEMBER') FROM pg_roles WHERE rolname = %s", (read_only_role,)
            )
            row = cur.fetchone()
            self.read_only_role = read_only_role if row and row[0] else None
            self.role_problems = (
                self._role_problems(cur, read_only_role)
                if self.read_only_role
                else [f"role {read_only_role} is missing, or the login role is not a member of it"]
            )

    @staticmethod
    def _role_problems(cur: _Cursor, role: str | None) -> list[str]:
        """What keeps ``role`` from being the second wall for free SQL (empty: it is one)."""
        if not role:
            return ["no read-only role is configured"]
        cur.execute("SELECT rolinherit, rolsuper FROM pg_roles WHERE rolname = %s", (role,))
        row = cur.fetchone()
        if row is None:
            return [f"role {role} does not exist"]
        problems = [f"role {role} is a superuser"] if row[1] else []
        problems += [f"role {role} inherits privileges"] if row[0] else []
        cur.execute(
            "SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid "
            "JOIN pg_roles u ON u.oid = m.member WHERE u.rolname = %s ORDER BY 1",
            (role,),
        )
        problems += [f"role {role} is a member of {r}" for (r,) in cur.fetchall()]
        cur.execute(
            "SELECT p.oid::regprocedure::text FROM pg_proc p WHERE p.oid IN ("  # constant SQL; values are parameters  # nosec B608
            + _DENIED_PROCS.format(names="%(names)s", prefixes="%(prefixes)s")
            + ") AND has_function_privilege(%(role)s, p.oid, 'EXECUTE') ORDER BY 1",
            {"names": list(ROLE_DENIED_FUNCTIONS), "prefixes": list(ROLE_DENIED_PREFIXES), "role": role},
        )
        problems += [f"role {role} may execute {f}" for (f,) in cur.fetchall()]
        return problems

    def _connect(self) -> _Connection:
        """A connection in autocommit mode (transactions are explicit: BEGIN READ ONLY for free SQL)
        with our schema first on the search path."""
        try:
            conn = psycopg2.connect(self.dsn, connection_factory=_Connection, connect_timeout=self._connect_timeout_s)
        except psycopg2.OperationalError as exc:
            raise ToolFailed(
                f"cannot connect to PostGIS: {str(exc).strip().splitlines()[0]}",
                kind="error",
                hint="check GEOFAHAM_PG_DSN and that the server is running",
            ) from exc
        conn.cursor_factory = _Cursor
        conn.autocommit = True
        conn.trace = self._trace
        with conn.cursor() as cur:
            cur.execute(pgsql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(pgsql.Identifier(self.schema)))
            cur.execute(pgsql.SQL("SET search_path TO {}, public").format(pgsql.Identifier(self.schema)))
            cur.execute(_SESSION_FUNCTIONS)
        return conn

    @property
    def trace(self) -> Callable[[str], None] | None:
        """Called with every SQL text sent to the server (None: off)."""
        return self._conn.trace

    @trace.setter
    def trace(self, hook: Callable[[str], None] | None) -> None:
        self._trace = self._conn.trace = hook

    def describe(self) -> str:
        from ...config import _mask_dsn

        return f"postgis {_mask_dsn(self.dsn)} schema {self.schema}"

    def close(self) -> None:
        with self._lock:
            if not self._conn.closed:
                self._conn.close()

    @contextmanager
    def _cursor(self) -> Iterator[_Cursor]:
        """A cursor under the engine's lock; reconnects after a lost connection, and turns driver
        errors that nobody translated into a ToolFailed the orchestrator can report."""
        with self._lock:
            if self._conn.closed:
                self._conn = self._connect()
            cur = self._conn.cursor()
            try:
                yield cur
            except psycopg2.Error as exc:
                lines = str(exc).strip().splitlines()
                raise ToolFailed(
                    f"PostGIS error: {lines[0] if lines else type(exc).__name__}",
                    kind="error",
                    hint="check the database server and GEOFAHAM_PG_DSN",
                ) from exc
            finally:
                cur.close()

    @contextmanager
    def _limited_cursor(self, timeout_s: float | None) -> Iterator[_Cursor]:
        """A cursor whose statements stop after ``timeout_s`` (None: no limit): a typed query stopped there
        is ``query_timed_out``. ``statement_timeout`` alone does not reach a long GEOS call (PostGIS
        interrupts GEOS on a cancel request's SIGINT, not on the timeout), so a watchdog also sends cancel
        requests from the deadline on (one can land between two GEOS calls) until the query returns. The connection is in autocommit mode: the limit is set for the session and
        put back afterwards."""
        if timeout_s is None:
            with self._cursor() as cur:
                yield cur
            return
        with self._cursor() as cur:
            conn = self._conn
            cur.execute("SET statement_timeout = %s", (max(1, int(timeout_s * 1000)),))

            fired, done = threading.Event(), threading.Event()

            def cancel() -> None:  # at the deadline, then every half second until the query returns
                if done.wait(max(timeout_s, 0.0)):
                    return
                fired.set()
                while not done.is_set():
                    with suppress(psycopg2.Error):
                        conn.cancel()
                    done.wait(0.5)

            watchdog = threading.Thread(target=cancel, name="gf-pg-watchdog", daemon=True)
            watchdog.start()
            try:
                yield cur
            except psycopg2.Error as exc:  # cancelled, or GEOS's "InterruptedException" the cancel caused
                if isinstance(exc, psycopg2.errors.QueryCanceled) or fired.is_set():
                    raise query_timed_out(timeout_s) from exc
                raise
            finally:
                done.set()
                watchdog.join()
                for _ in range(2):  # a cancel request that arrived late may cancel the first reset
                    try:
                        cur.execute("SET statement_timeout = 0")
                        break
                    except psycopg2.errors.QueryCanceled:
                        continue
                    except psycopg2.Error:  # the backend was ended: the connection is gone with its setting
                        break

    @contextmanager
    def _tx(self, read_only: bool = False) -> Iterator[_Cursor]:
        with self._cursor() as cur:
            cur.execute("BEGIN READ ONLY" if read_only else "BEGIN")
            try:
                yield cur
            except BaseException:
                if not self._conn.closed:
                    with suppress(psycopg2.Error):
                        cur.execute("ROLLBACK")
                raise
            cur.execute("COMMIT")

    # ------------------------------------------------------------------------------------ lifecycle
    def init(self, reset: bool = False) -> None:
        with self._tx() as cur:
            if reset:
                for table in reversed(TABLES):
                    cur.execute(pgsql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(pgsql.Identifier(table)))
            cur.execute(POSTGIS_DDL)
            cur.execute(BACKFILL_LAYER_EVENTS)
            if self.read_only_role:
                role, schema = pgsql.Identifier(self.read_only_role), pgsql.Identifier(self.schema)
                cur.execute(pgsql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(schema, role))
                cur.execute(pgsql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(schema, role))
            self._seed_events(cur)

    def drop_schema(self) -> None:
        """Drop the whole schema (tests use a throw-away schema per run)."""
        with self._cursor() as cur:
            cur.execute(pgsql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(pgsql.Identifier(self.schema)))

    def _seed_events(self, cur: _Cursor) -> None:
        from shapely.geometry import MultiPolygon, box

        events = load_events()
        cols = [c for c, _ in INSERT_COLUMNS["events"]]
        cur.execute("CREATE TEMP TABLE IF NOT EXISTS gf_seed_events (LIKE events) ON COMMIT DROP")
        rows = [[e.id, e.type, e.name, e.place, e.country, e.event_date.isoformat()] for e in events]
        geoms = [MultiPolygon([box(*e.bbox_4326)]) if e.bbox_4326 else None for e in events]
        self._copy(cur, "gf_seed_events", cols + ["aoi"], rows, geoms, [k for _, k in INSERT_COLUMNS["events"]])
        updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in cols[1:] + ["aoi"])
        # column names of our schema
        upsert = f"INSERT INTO events SELECT * FROM gf_seed_events ON CONFLICT (id) DO UPDATE SET {updates}"  # nosec B608
        cur.execute(upsert)

    def _copy(
        self,
        cur: _Cursor,
        table: str,
        columns: list[str],
        rows: Sequence[Sequence[Any]],
        geoms: Sequence[Any],
        kinds: Sequence[str],
    ) -> None:
        """COPY rows (+ a trailing geometry column) into ``table``: text format, hex EWKB geometries."""
        buf = io.StringIO()
        for row, geom in zip(rows, _ewkb_hex(geoms), strict=False):
            buf.write("\t".join([_copy_text(v, k) for v, k in zip(row, kinds, strict=False)] + [geom or "\\N"]))
            buf.write("\n")
        buf.seek(0)
        target = pgsql.SQL("COPY {} ({}) FROM STDIN").format(
            pgsql.SQL(table), pgsql.SQL(", ").join(pgsql.Identifier(c) for c in columns)
        )
        cur.copy_expert(target.as_string(self._conn), buf)

    # --------------------------------------------------------------------------------------- loading
    def replace_rows(self, table: str, source: str, frame: gpd.GeoDataFrame, events: Sequence[int | None]) -> int:
        spec = INSERT_COLUMNS[table]
        cols = [c for c, _ in spec]
        with self._tx() as cur:
            cur.execute(
                pgsql.SQL("DELETE FROM {} WHERE {} = %s").format(
                    pgsql.Identifier(table), pgsql.Identifier(SOURCE_COLUMN[table])
                ),
                (source,),
            )
            rows = frame[cols].astype(object).where(frame[cols].notna(), None).values.tolist()
            self._copy(
                cur,
                pgsql.Identifier(table).as_string(self._conn),
                cols + [GEOMETRY_COLUMN[table]],
                rows,
                list(frame.geometry.values),
                [k for _, k in spec],
            )
            cur.execute("DELETE FROM layer_events WHERE target_table = %s AND source_layer = %s", (table, source))
            for event in dict.fromkeys(events):
                cur.execute(
                    "INSERT INTO layer_events (target_table, source_layer, event_id) VALUES (%s, %s, %s)",
                    (table, source, None if event is None else int(event)),
                )
        return len(frame)

    def log_load(self, report: LoadReport) -> None:
        with self._tx() as cur:
            cur.execute(
                "DELETE FROM load_log WHERE source_layer = %s AND target_table = %s",
                (report.source_layer, report.table),
            )
            cur.execute(
                "INSERT INTO load_log (source_layer, source_path, target_table, event_id, read_count, loaded_count, "
                "skipped_count, repaired_count, source_crs, notes) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
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

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "engine": self.describe(),
            "read_only_role": self.read_only_role,
            "read_only_role_problems": self.role_problems,
            "tables": {},
        }
        with self._cursor() as cur:
            for table in ("damage", "flood_extents", "burn_perimeters", "features"):
                cur.execute(
                    pgsql.SQL("SELECT coalesce(event_id::text, 'none'), count(*) FROM {} GROUP BY 1 ORDER BY 1").format(
                        pgsql.Identifier(table)
                    )
                )
                out["tables"][table] = dict(cur.fetchall())
            cur.execute("SELECT count(*) FROM events")
            out["events"] = cur.fetchone()[0]
            cur.execute("SELECT target_table, source_layer, event_id FROM layer_events")
            out["layer_events"] = self._layer_events(cur.fetchall())
            cur.execute(
                "SELECT 'burn_perimeters', event_id, source, ST_Area(geom::geography) / 1e6 FROM burn_perimeters "
                "UNION ALL SELECT 'flood_extents', event_id, source, ST_Area(geom::geography) / 1e6 "
                "FROM flood_extents ORDER BY 1, 2, 3"
            )
            out["hazards"] = [
                {"table": t, "event_id": e, "source": s, "area_km2": round(a, 3)} for t, e, s, a in cur.fetchall()
            ]
            cur.execute(
                "SELECT source_layer, target_table, event_id, read_count, loaded_count, skipped_count, "
                "repaired_count, source_crs, notes, loaded_at::text FROM load_log ORDER BY id"
            )
            names = [d[0] for d in cur.description]
            out["load_log"] = [dict(zip(names, r, strict=False)) for r in cur.fetchall()]
        return out

    # ---------------------------------------------------------------------------------- artifacts
    def _load_artifacts(self, cur: _Cursor, tables: Sequence[ArtifactTable]) -> None:
        for art in tables:
            name = f"pg_temp.gf_{art.id}"
            cols = [pgsql.SQL("{} {}").format(pgsql.Identifier(c), pgsql.SQL(_PG_TYPES[k])) for c, k in art.columns]
            cur.execute(pgsql.SQL("DROP TABLE IF EXISTS {}").format(pgsql.SQL(name)))
            cur.execute(
                pgsql.SQL("CREATE TEMP TABLE {} ({})").format(
                    pgsql.Identifier(f"gf_{art.id}"),
                    pgsql.SQL(", ").join(cols + [pgsql.SQL("geom geometry(Geometry, 4326)")]),
                )
            )
            self._copy(
                cur,
                name,
                [c for c, _ in art.columns] + ["geom"],
                art.rows,
                list(art.geoms),
                [k for _, k in art.columns],
            )
            cur.execute(pgsql.SQL("CREATE INDEX ON {} USING gist (geom)").format(pgsql.SQL(name)))
            cur.execute(pgsql.SQL("ANALYZE {}").format(pgsql.SQL(name)))  # temp tables are never auto-analysed
            if self.read_only_role:
                cur.execute(
                    pgsql.SQL("GRANT SELECT ON {} TO {}").format(pgsql.SQL(name), pgsql.Identifier(self.read_only_role))
                )

    def _drop_artifacts(self, ids: Sequence[str]) -> None:
        if ids and not self._conn.closed:
            with self._cursor() as cur:
                for aid in ids:
                    cur.execute(pgsql.SQL("DROP TABLE IF EXISTS {}").format(pgsql.SQL(f"pg_temp.gf_{aid}")))

    @contextmanager
    def _area(self, event_id: int, area: ArtifactFile | None) -> Iterator[tuple[str, str]]:
        """(SQL of a one-row CTE body giving the area's geometry, its description) for ``area`` or the
        event's hazard; the artifact lives in a temp table for the duration (under the lock: the
        temp table belongs to the one connection)."""
        with self._lock:
            if area is None:
                with self._cursor() as cur:
                    count = f"SELECT count(*) FROM ({hazard_sources('%(e)s')}) h"  # our SQL  # nosec B608
                    cur.execute(count, {"e": event_id})
                    if not cur.fetchone()[0]:
                        raise ToolFailed(
                            f"no hazard (burn perimeter or flood extent) is loaded for event {event_id}",
                            kind="not_found",
                            hint="pass an area artifact, or load a hazard layer (db load)",
                        )
                yield area_union(hazard_sources("%(event)s")), "event hazard"
                return
            table = read_artifact(area.id, area.path).require_polygons()
            try:
                with self._tx() as cur:
                    self._load_artifacts(cur, [table])
                yield (
                    area_union(f"SELECT geom FROM pg_temp.gf_{area.id} WHERE ST_Dimension(geom) = 2"),  # nosec B608
                    f"artifact {area.id}",
                )
            finally:
                self._drop_artifacts([area.id])

    @staticmethod
    def _filters(table: str, feature_class: str | None, classes: list[str] | None, source: str | None) -> str:
        out = [served(table, "t.source_layer", "%(event)s")]
        if feature_class is not None:
            out.append("t.feature_class = %(fclass)s")
        if classes is not None:
            out.append("t.damage_class = ANY(%(classes)s)")
        if source is not None:
            out.append("t.source_layer = %(source)s")
        return " AND ".join(out)

    @staticmethod
    def _columns(table: str) -> str:
        return ", ".join(f"t.{c}::text" if c in ("attrs", "tags") else f"t.{c}" for c in OUTPUT_COLUMNS[table])

    # --------------------------------------------------------------------------------------- routing
    def has_pgrouting(self) -> bool:
        """Whether the pgRouting extension is installed in the database (``scripts/setup.sh`` creates it)."""
        with self._cursor() as cur:
            cur.execute("SELECT 1 FROM pg_extension WHERE extname = 'pgrouting'")
            return cur.fetchone() is not None

    def route_costs(
        self, edges: Sequence[tuple[int, int, float]], sources: Sequence[int], targets: Sequence[int]
    ) -> list[tuple[int, int, float]]:
        """Least cost from each source to each target node over the directed ``edges`` (u, v, cost) with pgRouting
        (``pgr_dijkstraCost``, directed): (source, target, cost) for every pair with a route."""
        if not edges or not sources or not targets:
            return []
        with self._tx() as cur:
            cur.execute(
                "CREATE TEMP TABLE gf_route_edges (id bigint, source bigint, target bigint, cost float8) ON COMMIT DROP"
            )
            buf = io.StringIO("".join(f"{i}\t{u}\t{v}\t{c!r}\n" for i, (u, v, c) in enumerate(edges)))
            cur.copy_expert("COPY gf_route_edges (id, source, target, cost) FROM STDIN", buf)
            cur.execute(
                "SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstraCost("
                "'SELECT id, source, target, cost FROM gf_route_edges', %s::bigint[], %s::bigint[], directed := true)",
                ([int(s) for s in sources], [int(t) for t in targets]),
            )
            return [(int(a), int(b), float(c)) for a, b, c in cur.fetchall()]

    # ----------------------------------------------------------------------------------- queries
    def count_damage(
        self, event_id: int, area: ArtifactFile | None = None, *, timeout_s: float | None = None
    ) -> DamageCount:
        params = {"event": event_id}
        with self._area(event_id, area) as (area_sql, label), self._limited_cursor(timeout_s) as cur:
            cur.execute(
                f"WITH area AS MATERIALIZED ({area_sql}) "  # our SQL; values are parameters  # nosec B608
                "SELECT d.damage_class, d.raw_damage, d.is_damaged, count(*) FROM damage d, area a "
                f"WHERE {served('damage', 'd.source_layer', '%(event)s')} "
                "AND ST_Intersects(d.geom, a.geom) GROUP BY 1, 2, 3",
                params,
            )
            rows = cur.fetchall()
        return self._damage_count(event_id, label, rows)

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
        classes = self._check_classes(damage_classes)
        params = {"event": event_id, "fclass": feature_class, "classes": classes, "source": source_layer}
        with self._area(event_id, area) as (area_sql, _), self._limited_cursor(timeout_s) as cur:
            cur.execute(
                f"WITH area AS MATERIALIZED ({area_sql}) "  # our SQL; values are parameters  # nosec B608
                f"SELECT {self._columns(table)}, ST_AsBinary(t.geom) FROM {table} t, area a "
                f"WHERE {self._filters(table, feature_class, classes, source_layer)} "
                "AND ST_Intersects(t.geom, a.geom) ORDER BY t.id",
                params,
            )
            rows = cur.fetchall()
        return self._frame(table, rows)

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
        classes = self._check_classes(damage_classes)
        params = {
            "event": event_id,
            "fclass": feature_class,
            "classes": classes,
            "source": source_layer,
            "dist": float(distance_m),
        }
        with self._area(event_id, area) as (area_sql, _), self._limited_cursor(timeout_s) as cur:
            # geography: spheroid distances in metres; the GIST index on geom::geography serves ST_DWithin
            cur.execute(
                f"WITH area AS MATERIALIZED ({area_sql}) "  # our SQL; values are parameters  # nosec B608
                f"SELECT {self._columns(table)}, ST_Distance(t.geom::geography, a.geom::geography) AS d, "
                f"ST_AsBinary(t.geom) FROM {table} t, area a "
                f"WHERE {self._filters(table, feature_class, classes, source_layer)} "
                "AND ST_DWithin(t.geom::geography, a.geom::geography, %(dist)s) ORDER BY d, t.id",
                params,
            )
            rows = cur.fetchall()
        return self._frame(table, rows, extra=("distance_m",))

    def hazard(self, event_id: int) -> gpd.GeoDataFrame:
        with self._cursor() as cur:
            cur.execute(hazard_rows_sql("%(e)s", "ST_AsBinary"), {"e": event_id})
            rows = cur.fetchall()
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
        statement, used, tables = prepare_sql(sql, artifacts, lambda aid: f"pg_temp.gf_{aid}", "postgres")
        if self.role_problems:
            raise ToolFailed(
                f"free SQL is off on this database: {'; '.join(self.role_problems[:3])}"
                + (f" (and {len(self.role_problems) - 3} more)" if len(self.role_problems) > 3 else ""),
                kind="error",
                hint=f"run scripts/setup.sh postgis (it hardens role {READ_ONLY_ROLE} as the postgres superuser), "
                "or use the typed tools",
            )
        started = time.perf_counter()
        with self._lock:
            try:
                if tables:
                    with self._tx() as cur:
                        self._load_artifacts(cur, tables)
                return self._run_read_only(statement, row_cap, timeout_s, byte_cap, started)
            finally:
                self._drop_artifacts(used)

    def _run_read_only(
        self, statement: str, row_cap: int, timeout_s: float, byte_cap: int, started: float
    ) -> QueryResult:
        with self._tx(read_only=True) as cur:
            try:
                cur.execute(pgsql.SQL("SET LOCAL ROLE {}").format(pgsql.Identifier(self.read_only_role or "")))
                cur.execute("SET LOCAL statement_timeout = %s", (max(1, int(timeout_s * 1000)),))
                # the checker reads '...' as standard strings; the server must too
                cur.execute("SET LOCAL standard_conforming_strings = on")
                # one statement only, opened as a cursor (a broken query fails here, before it runs);
                # only row_cap + 1 rows ever leave the server
                cur.execute("SELECT pg_temp.gf_open(%s)", (_capped(statement, byte_cap),))
                cur.execute("FETCH FORWARD %s FROM gf_sql", (row_cap + 1,))
                rows = cur.fetchall()
                description = cur.description[:-1]  # without the running byte total
            except psycopg2.Error as exc:
                raise _translate(exc, timeout_s, byte_cap) from exc
        truncated = len(rows) > row_cap
        rows = [r[:-1] for r in rows[:row_cap]]
        columns = [d.name for d in description]
        geo_idx = [i for i, d in enumerate(description) if d.type_code in self._geo_oids]
        srid = None
        if geo_idx:
            converted = []
            for row in rows:
                values = list(row)
                for i in geo_idx:
                    values[i] = None if values[i] is None else shapely.from_wkb(values[i])
                    if srid is None and values[i] is not None:
                        srid = int(shapely.get_srid(values[i])) or None
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


def _translate(exc: psycopg2.Error, timeout_s: float, byte_cap: int) -> Exception:
    """A server error as what the caller can act on: the model can fix syntax and names (ModelRetry),
    a refusal is a refusal (UnsafeSQL), a timeout is a tool failure with a hint."""
    lines = str(exc).strip().splitlines()
    message = getattr(getattr(exc, "diag", None), "message_primary", None) or (
        lines[0] if lines else type(exc).__name__
    )
    code = exc.pgcode or ""
    if isinstance(exc, psycopg2.errors.QueryCanceled) or code == "57014":
        return ToolFailed(
            f"the query was cancelled after {timeout_s:g} s",
            kind="timeout",
            hint="filter early with indexed predicates (ST_Intersects, ST_DWithin on geography), "
            "avoid cross joins and unbounded generate_series/recursion, aggregate in SQL",
        )
    if code == "54000" and message.startswith("gf: result above"):
        return result_too_large(byte_cap)
    if code[:2] == "25" or code == "42501":  # read-only transaction state, insufficient_privilege
        return UnsafeSQL(f"refused by the database: {message}")
    if code[:2] in ("42", "22", "21", "0A", "2F", "39", "38", "XX") or code == "":
        return QueryError(f"the database rejected the query: {message}", SCHEMA_HINT)
    return ToolFailed(f"the query failed: {message}", kind="error", hint=SCHEMA_HINT)
