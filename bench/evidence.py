"""What a run leaves for the judges: a compact, JSON digest of every artifact of the session.

Computed by the runner right after a task (or after it timed out, from what the session holds), so
the judges work from the results folder alone and sessions can be deleted. Per artifact: record and
metadata, whether its file exists and reads back, the sources it came from (as tokens the task
specs name: ``layer:<catalogue id>``, ``osm``, ``osm:<extract>``, ``stac:<collection>``,
``file:<name>``, ``event:<id>:<role>``), feature names and distances, table rows, raster band
statistics, and every number it holds (to tell supported numbers in the answer from invented ones).
No coordinates are kept."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from geofaham_plugin.core.store.models import ArtifactRecord
    from geofaham_plugin.core.store.store import ResponseStore

MAX_ROWS = 200
MAX_DISTANCES = 2000
MAX_NAMES = 500
NAME_COLUMNS = ("name", "NAME", "Name", "equipamien", "titulo", "nombre")
FILE_RE = re.compile(r"[\w.\-]+\.(?:geojson|json|gpkg|tif|tiff|csv|shp|kml|kmz|parquet|geoparquet|pbf)\b", re.I)
NUM_RE = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _jsonable(v: Any, depth: int = 0) -> Any:
    if depth > 4:
        return str(v)[:200]
    if isinstance(v, dict):
        return {str(k): _jsonable(x, depth + 1) for k, x in list(v.items())[:50]}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x, depth + 1) for x in list(v)[:50]]
    if isinstance(v, (str, int, bool)) or v is None:
        return v[:2000] if isinstance(v, str) else v
    f = _num(v)
    return f if f is not None else str(v)[:200]


def text_numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in NUM_RE.findall(text or "")]


def environment() -> dict:
    """What the core offers right now: tools, catalogue layers, OSM extracts, guided templates."""
    from geofaham_plugin.core.agents import TOOLS
    from geofaham_plugin.core.engines.layers import default_catalogue

    env: dict[str, Any] = {
        "tools": [{"agent": t.agent.value, "name": t.name, "metric": t.metric} for t in TOOLS.values()]
    }
    catalog = default_catalogue()
    env["catalog"] = [
        {"id": lay.id, "events": lay.events, "role": lay.role, "feature_class": lay.feature_class}
        for lay in catalog.layers.values()
    ]
    try:
        from geofaham_plugin.core.engines.osm.extracts import local_extracts

        env["osm_extracts"] = [e.id for e in local_extracts(catalog)]
    except Exception as exc:  # pragma: no cover - depends on the Maps engine of the day
        env["osm_extracts"] = [f"unavailable: {exc}"]
    try:
        from geofaham_plugin.core.planning.templates import load_templates

        env["templates"] = sorted(load_templates())
    except Exception as exc:  # pragma: no cover
        env["templates"] = [f"unavailable: {exc}"]
    return env


def _catalog_titles() -> dict[str, str]:
    from geofaham_plugin.core.engines.layers import default_catalogue

    return {lay.title: lay.id for lay in default_catalogue().layers.values()}


def source_ids(record: ArtifactRecord, titles: dict[str, str]) -> list[str]:
    """Source tokens of one artifact record (see module docstring)."""
    out: list[str] = []
    source, extra = record.source, record.extra or {}
    if source.startswith("vector.load_event_layer:"):
        out.append("layer:" + source.split(":", 1)[1])
    if extra.get("layer_id"):
        out.append(f"layer:{extra['layer_id']}")
    if extra.get("event_id") is not None and extra.get("role"):
        out.append(f"event:{extra['event_id']}:{extra['role']}")
    kind = extra.get("source_kind")
    if kind == "local_layer":
        for title in str(extra.get("sources", "")).split("; "):
            if title in titles:
                out.append(f"layer:{titles[title]}")
    elif kind in ("osm_extract", "overpass"):
        out += ["osm", f"osm:{extra.get('extract_id') or 'overpass'}"]
    if record.kind.value == "item_set":
        out.append("stac")
        collection = getattr(record.metadata, "collection", None)
        if collection:
            out.append(f"stac:{collection}")
    if source.startswith("user."):
        out.append("user")
    if source.startswith("stac."):
        out.append("stac")
    if source.startswith("raster."):
        out.append("raster")
    for text in [source, record.summary, *_strings(extra)]:
        out += [f"file:{m.group(0)}" for m in FILE_RE.finditer(text)]
    return list(dict.fromkeys(out))


def _strings(value: Any, depth: int = 0) -> list[str]:
    if depth > 3:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v, depth + 1)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v, depth + 1)]
    return []


def _name_field(columns: list[str], extra: dict) -> str | None:
    field = extra.get("name_field")
    if field in columns:
        return field
    return next((c for c in NAME_COLUMNS if c in columns), None)


def digest_artifact(store: ResponseStore, record: ArtifactRecord, titles: dict[str, str]) -> dict:
    from geofaham_plugin.core.store.models import ArtifactKind

    meta = record.metadata.model_dump(mode="json")
    d: dict[str, Any] = {
        "id": record.id,
        "kind": record.kind.value,
        "source": record.source,
        "summary": record.summary,
        "inputs": list(record.inputs),
        "created_at": record.created_at.isoformat(),
        "metadata": meta,
        "extra": _jsonable(record.extra),
        "source_ids": source_ids(record, titles),
    }
    numbers: list[float] = []
    for key in (
        "feature_count",
        "total_area_m2",
        "total_length_m",
        "row_count",
        "item_count",
        "width",
        "height",
        "pixel_area_m2",
        "aoi_coverage",
        "max_cloud_cover",
    ):
        if (x := _num(meta.get(key))) is not None:
            numbers.append(x)
    for band in meta.get("bands") or []:
        if isinstance(band, dict):
            numbers += [x for k in ("min", "max", "mean") if (x := _num(band.get(k))) is not None]
    numbers += [x for v in (record.extra or {}).values() if (x := _num(v)) is not None and not isinstance(v, bool)]
    numbers += text_numbers(record.summary)
    for item in (record.extra or {}).get("limitations") or []:
        numbers += text_numbers(str(item))
    path = Path(store.session_dir) / record.path
    file: dict[str, Any] = {
        "exists": path.is_file(),
        "bytes": path.stat().st_size if path.is_file() else 0,
        "readable": False,
    }
    try:
        if record.kind in (ArtifactKind.vector, ArtifactKind.aoi):
            gdf = store.read_vector(record.id)
            file["readable"] = True
            file["features"] = len(gdf)
            file["invalid_geometries"] = int((~gdf.geometry.is_valid & gdf.geometry.notna()).sum()) if len(gdf) else 0
            file["crs"] = gdf.crs.to_string() if gdf.crs is not None else None
            columns = [c for c in gdf.columns if c != gdf.geometry.name]
            d["columns"] = columns[:80]
            name_field = _name_field(columns, record.extra or {})
            d["name_field"] = name_field
            if name_field:
                d["names"] = [str(v) for v in gdf[name_field].head(MAX_NAMES).tolist()]
            if "distance_m" in gdf.columns:
                labels = gdf[name_field].astype(str).tolist() if name_field else [str(i) for i in range(len(gdf))]
                d["distances"] = [
                    [n, _num(v)] for n, v in list(zip(labels, gdf["distance_m"].tolist(), strict=False))[:MAX_DISTANCES]
                ]
                numbers += [v for _, v in d["distances"] if v is not None]
            numeric = [c for c in columns if str(gdf[c].dtype).startswith(("int", "float"))]
            head = gdf[numeric].head(MAX_ROWS)
            numbers += [x for v in head.to_numpy().ravel().tolist() if (x := _num(v)) is not None]
            d["column_sums"] = {c: _num(gdf[c].sum()) for c in numeric[:20]}
            numbers += [v for v in d["column_sums"].values() if v is not None]
        elif record.kind is ArtifactKind.table:
            table = store.read_table(record.id)
            file["readable"] = True
            file["rows"] = len(table)
            rows = table.head(MAX_ROWS)
            d["rows"] = [{str(k): _jsonable(v) for k, v in row.items()} for row in rows.to_dict("records")]
            d["columns"] = [str(c) for c in table.columns]
            for row in d["rows"]:
                numbers += [x for v in row.values() if (x := _num(v)) is not None and not isinstance(v, bool)]
            if "count" in table.columns:
                numbers.append(float(table["count"].sum()))
        elif record.kind is ArtifactKind.raster:
            import rasterio

            with rasterio.open(path) as src:
                file["readable"] = True
                file["crs"] = src.crs.to_string() if src.crs else None
                file["bands"] = src.count
        elif record.kind is ArtifactKind.item_set:
            items = store.read_items(record.id)
            file["readable"] = True
            file["items"] = len(items)
            d["items"] = [
                {
                    "id": i.get("id"),
                    "datetime": (i.get("properties") or {}).get("datetime"),
                    "cloud_cover": (i.get("properties") or {}).get("eo:cloud_cover"),
                    "collection": i.get("collection"),
                }
                for i in items[:50]
            ]
            numbers += [x for i in d["items"] if (x := _num(i["cloud_cover"])) is not None]
        elif record.kind is ArtifactKind.text:
            text = store.read_text(record.id)
            file["readable"] = True
            d["text"] = text[:4000]
            numbers += text_numbers(text)
    except Exception as exc:  # an unreadable artifact is evidence too
        file["error"] = f"{type(exc).__name__}: {exc}"[:500]
    d["file"] = file
    d["numbers"] = sorted({round(v, 6) for v in numbers if v is not None})[:5000]
    return d


def digest_store(store: ResponseStore) -> dict[str, dict]:
    titles = _catalog_titles()
    return {r.id: digest_artifact(store, r, titles) for r in store.records()}


def tool_flags() -> dict[str, dict]:
    """Per tool: agent and whether it measures (needs a metric CRS)."""
    from geofaham_plugin.core.agents import TOOLS

    return {t.name: {"agent": t.agent.value, "metric": t.metric} for t in TOOLS.values()}
