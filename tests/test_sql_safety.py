"""Free SQL safety: the shared checker (no database), then both engines refusing or cutting every
dangerous or runaway query with a typed error and a hint, leaving the database unchanged, and the
artifact placeholders joining a store artifact without coordinates in the SQL text."""

from __future__ import annotations

import re
import time

import geopandas as gpd
import pytest
from conftest import SHARED_DATA
from test_db import engine, loaded_engine  # noqa: F401 - the parametrized fixture over both engines

from geofaham_plugin.core.engines.sql_safety import (
    QueryError,
    UnsafeSQL,
    check_select,
    denied_function,
    rewrite_placeholders,
    tokenize,
)
from geofaham_plugin.core.errors import ModelRetry, ToolFailed
from geofaham_plugin.core.store.store import ResponseStore

TABLES = ("events", "damage", "flood_extents", "burn_perimeters", "features", "load_log")
DIALECTS = ("postgres", "sqlite")


# ------------------------------------------------------------------------------------ the checker
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "select count(*) from damage;",
        "SELECT 1;  ;\n-- trailing comment",
        "WITH x AS (SELECT id FROM damage) SELECT count(*) FROM x",
        "(SELECT 1) UNION (SELECT 2)",
        "SELECT 'a; DROP TABLE damage; --' AS s",
        'SELECT "delete", "insert" FROM t -- DELETE FROM damage; DROP TABLE x',
        "SELECT 1 /* ; DROP TABLE damage */",
        "SELECT replace(name, 'a', 'b') FROM features",
        "SELECT ST_Area(ST_Transform(geom, 26911)) FROM burn_perimeters WHERE source = 'x'",
    ],
)
def test_checker_accepts_single_reads(sql, dialect):
    assert check_select(sql, dialect).lstrip().upper().startswith(("SELECT", "WITH", "("))


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(
    "sql, why",
    [
        ("INSERT INTO damage (event_id) VALUES (1)", "only SELECT or WITH"),
        ("UPDATE damage SET raw_damage = 'x'", "only SELECT or WITH"),
        ("DELETE FROM damage", "only SELECT or WITH"),
        ("DROP TABLE damage", "only SELECT or WITH"),
        ("CREATE TABLE x (a int)", "only SELECT or WITH"),
        ("ALTER TABLE damage ADD COLUMN x int", "only SELECT or WITH"),
        ("SELECT 1; DROP TABLE damage", "more than one statement"),
        ("SELECT 1; SELECT 2", "more than one statement"),
        ("COPY damage TO '/tmp/x'", "only SELECT or WITH"),
        ("SELECT pg_read_file('/etc/passwd')", "pg_read_file"),
        ("SELECT pg_catalog.pg_read_binary_file('/etc/passwd')", "pg_read_binary_file"),
        ("SELECT \"pg_read_file\" /* hidden */ ('/etc/passwd')", "pg_read_file"),
        ("SELECT * FROM pg_ls_dir('.')", "pg_ls_dir"),
        ("SELECT lo_import('/etc/passwd')", "lo_import"),
        ("SELECT lo_export(1, '/tmp/x')", "lo_export"),
        ("SELECT dblink('host=x', 'DROP TABLE damage')", "dblink"),
        ("SELECT set_config('role', 'geofaham', true)", "set_config"),
        ("SET TRANSACTION READ WRITE", "only SELECT or WITH"),
        ("SELECT 1 FROM damage FOR UPDATE", "UPDATE"),
        ("SELECT * INTO copy_of_damage FROM damage", "INTO"),
        ("WITH gone AS (DELETE FROM damage RETURNING id) SELECT count(*) FROM gone", "DELETE"),
        ("ATTACH DATABASE '/tmp/x.sqlite' AS x", "only SELECT or WITH"),
        ("SELECT load_extension('mod_spatialite')", "load_extension"),
        ("SELECT readfile('/etc/passwd')", "readfile"),
        ("SELECT writefile('/tmp/x', 'y')", "writefile"),
        ("SELECT SqlProc_Execute(x) FROM t", "sqlproc_execute"),
        ("SELECT DropGeoTable('damage')", "dropgeotable"),
        ("PRAGMA writable_schema = 1", "only SELECT or WITH"),
        ("SELECT 'unterminated", "unterminated"),
        ("SELECT 1 /* unterminated", "unterminated"),
        ("", "empty"),
    ],
)
def test_checker_refuses_with_reason_and_hint(sql, why, dialect):
    with pytest.raises(UnsafeSQL) as exc:
        check_select(sql, dialect)
    assert why.lower() in exc.value.reason.lower()
    assert exc.value.hint and "Hint:" in str(exc.value) and isinstance(exc.value, ModelRetry)


def test_checker_follows_each_dialects_quoting():
    # PostgreSQL: E'' strings escape quotes with a backslash, so this hides a second statement...
    with pytest.raises(UnsafeSQL, match="more than one statement"):
        check_select("SELECT E'\\''; DROP TABLE damage; --'", "postgres")
    # ...and in a standard string the backslash is literal, so the ';' is outside the string (both servers)
    for dialect in DIALECTS:
        with pytest.raises(UnsafeSQL, match="more than one statement"):
            check_select("SELECT '\\'; DROP TABLE damage; --'", dialect)
    # dollar quotes are strings in PostgreSQL; nested block comments too
    assert check_select("SELECT $tag$ ; DROP TABLE damage; $tag$", "postgres")
    assert check_select("SELECT 1 /* a /* nested ; */ DROP */", "postgres")
    with pytest.raises(UnsafeSQL):
        check_select("SELECT $$ never closed", "postgres")
    # '@' (abs) and ':' (array slice) do not hide the word after them in PostgreSQL
    for sql in ("SELECT @pg_read_file('/etc/passwd')", "SELECT a[1:pg_read_file('x')::int] FROM t"):
        with pytest.raises(UnsafeSQL, match="pg_read_file"):
            check_select(sql, "postgres")
    # SQLite identifiers in backticks and brackets
    assert check_select("SELECT `drop`, [delete] FROM t", "sqlite")
    assert [t.kind for t in tokenize("SELECT [a;b]", "sqlite") if t.significant] == ["word", "qident"]


def test_denied_functions():
    for name in (
        "pg_read_file",
        "PG_LS_DIR",
        "pg_catalog.lo_import",
        "dblink_exec",
        "load_extension",
        "ImportSHP",
        "ExportGeoJSON",
        "BlobToFile",
        "InitSpatialMetadata",
        "CreateSpatialIndex",
        "set_config",
        "query_to_xml",
        "nextval",
        "pg_advisory_lock",
    ):
        assert denied_function(name), name
    for name in ("ST_Intersects", "ST_Distance", "count", "replace", "json_extract", "GeodesicLength", "ST_Transform"):
        assert not denied_function(name), name


def test_placeholders_are_rewritten_or_refused():
    sql, used = rewrite_placeholders(
        "SELECT * FROM {{a_0123abcd}} a JOIN {{ a_0123abcd }} b ON true, {{a_ffffffff}}",
        {"a_0123abcd": "x", "a_ffffffff": "y"},
        lambda i: f"t_{i}",
    )
    assert sql == "SELECT * FROM t_a_0123abcd a JOIN t_a_0123abcd b ON true, t_a_ffffffff"
    assert used == ["a_0123abcd", "a_ffffffff"]
    with pytest.raises(UnsafeSQL, match="unknown artifact") as exc:
        rewrite_placeholders("SELECT * FROM {{a_deadbeef}}", {"a_0123abcd": "x"}, str)
    assert "{{a_0123abcd}}" in exc.value.hint
    with pytest.raises(UnsafeSQL):
        rewrite_placeholders("SELECT * FROM {{a_0123abcd}", {"a_0123abcd": "x"}, str)


# ----------------------------------------------------------------------------- on both engines
def counts(engine) -> dict[str, int]:
    return {t: engine.run_sql(f"SELECT count(*) FROM {t}").rows[0][0] for t in TABLES}


DANGEROUS = [
    "INSERT INTO events (id, type, name) VALUES (99, 'x', 'x')",
    "UPDATE damage SET raw_damage = 'x'",
    "DELETE FROM damage",
    "DROP TABLE damage",
    "CREATE TABLE x AS SELECT * FROM damage",
    "SELECT 1; DELETE FROM damage",
    "COPY damage TO '/tmp/gf_copy.csv'",
    "SELECT pg_read_file('/etc/passwd')",
    "SET TRANSACTION READ WRITE",
    "ATTACH DATABASE '/tmp/gf_attached.sqlite' AS evil",
    "SELECT load_extension('mod_spatialite')",
    "WITH gone AS (DELETE FROM damage RETURNING id) SELECT count(*) FROM gone",
]


def test_dangerous_queries_are_refused_and_change_nothing(engine):
    before = counts(engine)
    for sql in DANGEROUS:
        with pytest.raises(UnsafeSQL) as exc:
            engine.run_sql(sql)
        assert exc.value.reason and exc.value.hint, sql
    assert counts(engine) == before


def test_runaway_query_is_cut_by_the_timeout(engine):
    before = counts(engine)
    runaway = (
        "SELECT count(*) FROM generate_series(1, 100000000) a, generate_series(1, 100000000) b"
        if engine.name == "postgis"
        else "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n a, damage b"
    )
    started = time.monotonic()
    with pytest.raises(ToolFailed) as exc:
        engine.run_sql(runaway, timeout_s=1.0)
    assert exc.value.kind == "timeout" and "cross join" in exc.value.hint
    assert time.monotonic() - started < 10
    assert counts(engine) == before
    assert engine.run_sql("SELECT 1").rows == [(1,)]  # the engine is usable afterwards


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM damage",
        "DROP TABLE damage",
        "INSERT INTO events (id, type, name) VALUES (99, 'x', 'x')",
        "WITH gone AS (DELETE FROM damage RETURNING id) SELECT count(*) FROM gone",
        "SELECT set_config('transaction_read_only', 'off', true)",
        "ATTACH DATABASE '/tmp/gf_attached.sqlite' AS evil",
        "SELECT load_extension('mod_spatialite')",
    ],
)
def test_the_database_refuses_even_if_the_checker_were_bypassed(engine, monkeypatch, sql):
    """Defense in depth: PostGIS READ ONLY transaction as the read-only role, SpatiaLite read-only file
    plus authorizer; whatever gets through the checker still cannot change anything."""
    from geofaham_plugin.core.engines import sql_safety

    monkeypatch.setattr(sql_safety, "check_select", lambda s, _d: s)  # both engines check through it
    before = counts(engine)
    with pytest.raises(ModelRetry):
        engine.run_sql(sql)
    assert counts(engine) == before


def test_postgis_runs_free_sql_as_the_read_only_role():
    engine = loaded_engine("postgis")
    if engine.read_only_role is None:
        pytest.skip("role geofaham_ro is missing (scripts/setup.sh postgis creates it)")
    assert engine.run_sql("SELECT current_user, current_setting('transaction_read_only')").rows == [
        ("geofaham_ro", "on")
    ]


def test_row_cap_and_fixable_errors(engine):
    capped = engine.run_sql("SELECT id FROM damage ORDER BY id", row_cap=10)
    assert len(capped.rows) == 10 and capped.truncated
    full = engine.run_sql("SELECT id FROM events", row_cap=100)
    assert len(full.rows) == 17 and not full.truncated
    with pytest.raises(QueryError) as exc:
        engine.run_sql("SELECT no_such_column FROM damage")
    assert isinstance(exc.value, ModelRetry) and "damage(" in exc.value.hint


def test_placeholder_joins_a_store_artifact_without_coordinates_in_sql(engine, tmp_path):
    perimeter = gpd.read_file(SHARED_DATA / "eaton-2025/eaton_adjusted_fire_perimeter.geojson")
    with ResponseStore(tmp_path / "session") as store:
        rec = store.register_vector(perimeter, source="test", summary="Eaton perimeter (EPSG:26911)")
        sent: list[str] = []
        engine.trace = sent.append
        try:
            result = engine.run_sql(
                f"SELECT d.damage_class, count(*) AS n FROM damage d JOIN {{{{{rec.id}}}}} p ON ST_Intersects(d.geom, p.geom) "
                "WHERE d.event_id = 11 GROUP BY d.damage_class ORDER BY n DESC",
                {rec.id: store.abs_path(rec.id)},
            )
        finally:
            engine.trace = None
    assert sum(n for _, n in result.rows) == 5431
    assert dict(result.rows)["destroyed"] == 2720
    assert rec.id in result.sql and "{{" not in result.sql
    text = "\n".join(sent)
    assert any(rec.id in s for s in sent)
    assert not re.search(r"\d+\.\d{4,}", text), "coordinates in SQL text"
    assert not re.search(r"[0-9A-Fa-f]{40,}", text), "geometry blobs in SQL text"
    assert not re.search(r"POLYGON|\"coordinates\"", text, re.I)
    # the temporary table is gone afterwards
    with pytest.raises(ModelRetry):
        engine.run_sql(f"SELECT count(*) FROM {'pg_temp' if engine.name == 'postgis' else 'temp'}.gf_{rec.id}")


def test_unknown_placeholder_lists_the_known_ones(engine):
    with pytest.raises(UnsafeSQL) as exc:
        engine.run_sql("SELECT * FROM {{a_12345678}}", {"a_87654321": "/nonexistent.gpkg"})
    assert "{{a_87654321}}" in exc.value.hint
