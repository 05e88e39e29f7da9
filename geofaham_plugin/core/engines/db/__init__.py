"""The disaster database: one interface (:class:`SpatialEngine`), two engines.

``open_engine()`` picks PostGIS when a DSN is given or configured (``GEOFAHAM_PG_DSN``), else the
embedded SpatiaLite file under the cache folder. The Vector agent calls, with ``engine = open_engine(settings=ctx.settings)``::

    engine.count_damage(event_id, area=None) -> DamageCount
    engine.select_inside("damage" | "features", event_id, area=None, *, feature_class=None,
                         damage_classes=None, source_layer=None) -> GeoDataFrame
    engine.select_within("damage" | "features", event_id, distance_m, area=None, *, ...) -> GeoDataFrame
    engine.hazard(event_id) -> GeoDataFrame
    engine.run_sql(sql, {artifact_id: gpkg_path}, row_cap=..., timeout_s=...) -> QueryResult

``area`` is an :class:`ArtifactFile` (``ArtifactFile.from_store(store, id)``); GeoDataFrames come back
in EPSG:4326 for ``store.register_vector``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from ...config import Settings, settings_from_env
from .base import ArtifactFile, DamageCount, LoadReport, QueryResult, SpatialEngine, utm_epsg
from .schema import DAMAGE_CLASSES

EngineKind = Literal["spatialite", "postgis"]

__all__ = [
    "ArtifactFile",
    "DAMAGE_CLASSES",
    "DamageCount",
    "LoadReport",
    "QueryResult",
    "SpatialEngine",
    "default_spatialite_path",
    "open_engine",
    "utm_epsg",
]


def default_spatialite_path(settings: Settings | None = None) -> Path:
    """``<cache>/db/geofaham.sqlite``: outside the repository, shared by sessions (read-mostly)."""
    return (settings or settings_from_env()).paths.cache_dir / "db" / "geofaham.sqlite"


def open_engine(
    kind: EngineKind | None = None,
    *,
    db_path: Path | str | None = None,
    dsn: str | None = None,
    schema: str = "geofaham",
    settings: Settings | None = None,
) -> SpatialEngine:
    """PostGIS if ``kind == "postgis"`` or (no kind and) a DSN is given or configured; else SpatiaLite
    at ``db_path`` (default :func:`default_spatialite_path`)."""
    settings = settings or settings_from_env()
    dsn = dsn or settings.database.pg_dsn
    if kind == "postgis" or (kind is None and dsn and db_path is None):
        if not dsn:
            from ...errors import ToolFailed

            raise ToolFailed("no PostGIS DSN", kind="invalid_input", hint="pass --dsn or set GEOFAHAM_PG_DSN")
        from .postgis import PostGISEngine

        return PostGISEngine(dsn, schema=schema)
    from .spatialite import SpatiaLiteEngine

    return SpatiaLiteEngine(db_path or default_spatialite_path(settings))
