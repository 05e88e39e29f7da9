"""Map context behind a run's results, chosen headless: what a map of the answer shows under it.

Online and allowed (:attr:`Settings.basemap_on`) and its tile server answering (:func:`reachable`: one TCP
connection within 1.5 s, remembered for 5 minutes; without a connection the basemap is left out and a note says so,
instead of a report waiting on tile retries): an OpenStreetMap XYZ basemap with its attribution. Always,
from the local data of the run's events in the layer catalogue (``layers.json``): water areas, rivers and
canals, roads and place names of the event's OSM layers (the kinds and their tags in
``core/data/map_context.json``; roads and waterways are the classes of ``osm_classes.json``), the offline
gazetteer's towns in the event's box, the event's hazard outline and its named areas (an activation's AOI).
Nothing is read into memory here but the files' headers: each layer is a file and an OGR attribute filter
(``where``), which QGIS's provider applies as it draws (``ui/context.py`` adds them to the project off the
main thread). What the local data lacks for an event is said in :attr:`MapContext.notes`.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..config import Settings
from ..domain.events import get_event
from ..domain.feature_classes import feature_class_specs
from ..errors import GeoFahamError
from .layers import LayerCatalogue

CONTEXT_FILE = Path(__file__).resolve().parents[1] / "data" / "map_context.json"
ContextKind = Literal["basemap", "water_areas", "water", "roads", "places", "towns", "area", "hazard"]
Geometry = Literal["point", "line", "polygon"]
#: the drawing order, bottom to top (the results are drawn above all of them)
ORDER: tuple[ContextKind, ...] = ("basemap", "water_areas", "water", "roads", "area", "hazard", "places", "towns")
_FAMILY = {"Point": "point", "LineString": "line", "Polygon": "polygon"}


class ContextLayer(BaseModel):
    """One layer of the map context: a file with an OGR attribute filter, an XYZ template, or points."""

    model_config = ConfigDict(frozen=True)

    kind: ContextKind
    title: str
    source: str = ""  # a file (absolute), or the XYZ URL template of the basemap
    where: str | None = None  # OGR SQL WHERE on the file's attributes (QGIS: the layer's subset string)
    label: str | None = None  # the attribute shown as a label
    points: list[dict[str, Any]] = Field(default_factory=list)  # towns: name, lon, lat, population
    layer_id: str | None = None  # the catalogue layer (or named area) it comes from
    event_id: int | None = None
    attribution: str = ""
    licence: str = ""
    zmax: int = 19


class MapContext(BaseModel):
    model_config = ConfigDict(frozen=True)

    events: list[int]
    layers: list[ContextLayer]  # bottom to top
    notes: list[str] = Field(default_factory=list)

    @property
    def basemap(self) -> ContextLayer | None:
        return next((layer for layer in self.layers if layer.kind == "basemap"), None)

    def sources(self) -> list[str]:
        """Each attribution (with its licence), once."""
        seen: dict[str, str] = {}
        for layer in self.layers:
            if layer.attribution:
                seen[layer.attribution] = seen.get(layer.attribution) or layer.licence
        return [a + (f" ({lic})" if lic else "") for a, lic in seen.items()]


@cache
def _spec() -> dict[str, Any]:
    return dict(json.loads(CONTEXT_FILE.read_text(encoding="utf-8")))


def _sql_value(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def where_clause(selectors: Iterable[Mapping[str, Any]], columns: Iterable[str]) -> str | None:
    """OGR SQL for selectors (OR-ed; the tags inside one AND-ed; ``True``/``"*"``: any value but "no"), only
    those whose keys are columns; None when none is."""
    have = set(columns)
    parts = []
    for selector in selectors:
        if not selector or not set(selector) <= have:
            continue
        tags = []
        for key, value in selector.items():
            column = '"' + key.replace('"', '""') + '"'
            if value is True or value == "*":
                tags.append(f"({column} IS NOT NULL AND {column} <> 'no')")
            elif isinstance(value, str):
                tags.append(f"{column} = {_sql_value(value)}")
            else:
                tags.append(f"{column} IN ({', '.join(_sql_value(str(v)) for v in value)})")
        parts.append("(" + " AND ".join(tags) + ")")
    return " OR ".join(parts) if parts else None


def _selectors(kind: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(feature_class_specs()[kind["class"]].selectors)  # the one class file says what a kind draws


def _file_info(path: Path) -> tuple[Geometry | None, list[str]]:
    """The geometry family and the attribute names of a vector file (its header only)."""
    import pyogrio

    info = pyogrio.read_info(path)
    kind = str(info.get("geometry_type") or "").replace("Multi", "").replace(" Z", "").replace("25D", "")
    family = _FAMILY.get(kind)
    return family, [str(f) for f in info.get("fields", [])]  # type: ignore[return-value]


def run_events(event_id: int | None, extras: Iterable[Mapping[str, Any]]) -> list[int]:
    """The events a run is about: the question's, then those its artifacts were read for, each once."""
    found = [event_id] if event_id is not None else []
    for extra in extras:
        value = extra.get("event_id")
        if isinstance(value, int) and not isinstance(value, bool):
            found.append(value)
    return list(dict.fromkeys(found))


REACHABLE_TIMEOUT_S = 1.5
REACHABLE_TTL_S = 300.0
_reachable: dict[tuple[str, int], tuple[float, bool]] = {}
_reachable_lock = threading.Lock()


def _host(url: str) -> str:
    return urllib.parse.urlsplit(url.replace("{", "").replace("}", "")).hostname or url


def reachable(url: str, timeout: float = REACHABLE_TIMEOUT_S) -> bool:
    """Whether the server of ``url`` (an XYZ template too) accepts a TCP connection within ``timeout``; the answer is
    remembered for :data:`REACHABLE_TTL_S` seconds per host and port. A file template is always there."""
    parts = urllib.parse.urlsplit(url.replace("{", "").replace("}", ""))
    if parts.scheme not in ("http", "https"):
        return True  # a file:// template: nothing to reach
    if not parts.hostname:
        return False
    key = (parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    now = time.monotonic()
    with _reachable_lock:
        known = _reachable.get(key)
    if known is not None and now - known[0] < REACHABLE_TTL_S:
        return known[1]
    try:
        with socket.create_connection(key, timeout=timeout):
            ok = True
    except OSError:
        ok = False
    with _reachable_lock:
        _reachable[key] = (now, ok)
    return ok


def map_context(catalogue: LayerCatalogue, events: Iterable[int], settings: Settings) -> MapContext:
    """The context layers of a map of ``events``, bottom to top (see the module docstring)."""
    spec = _spec()
    events = list(dict.fromkeys(events))
    layers: list[ContextLayer] = []
    notes: list[str] = []
    if settings.basemap_on and not reachable(settings.map.basemap_url):
        notes.append(
            f"basemap: not shown (its tile server {_host(settings.map.basemap_url)} does not answer: offline?)"
        )
    elif settings.basemap_on:
        basemap = spec["basemap"]
        layers.append(
            ContextLayer(
                kind="basemap",
                title=basemap["title"],
                source=settings.map.basemap_url,
                attribution=basemap["attribution"],
                licence=basemap["licence"],
                zmax=int(basemap.get("zmax", 19)),
            )
        )
    for event_id in events:
        event = get_event(event_id)
        name = event.name if event else f"event {event_id}"
        found: set[str] = set()
        for layer in catalogue.find(event_id=event_id, role="osm"):
            try:
                path = catalogue.file_path(layer)
                family, columns = _file_info(path)
            except (GeoFahamError, OSError, ValueError) as exc:  # a missing or unreadable file: the rest still shows
                notes.append(f"{layer.id}: not shown ({str(exc).splitlines()[0]})")
                continue
            for kind_name, kind in spec["kinds"].items():
                if kind["geometry"] != family:
                    continue
                where = where_clause(_selectors(kind), columns)
                if where is None or (kind.get("label") and kind["label"] not in columns):
                    continue
                found.add(kind_name)
                layers.append(
                    ContextLayer(
                        kind=kind_name,
                        title=f"{kind['title']} ({layer.title})",
                        source=str(path),
                        where=where,
                        label=kind.get("label"),
                        layer_id=layer.id,
                        event_id=event_id,
                        attribution=layer.attribution,
                        licence=layer.licence,
                    )
                )
        missing = [k for k in ("roads", "water") if k not in found]
        if missing:
            notes.append(f"{name}: the local data has no {' or '.join(missing)} (context from what it has)")
        for layer in catalogue.find(event_id=event_id, role="hazard"):
            if layer.path is None:  # derived (a hull of damaged buildings): a result, not a file to draw
                continue
            try:
                path = catalogue.file_path(layer)
            except GeoFahamError as exc:
                notes.append(f"{layer.id}: not shown ({exc})")
                continue
            layers.append(
                ContextLayer(
                    kind="hazard",
                    title=layer.title,
                    source=str(path),
                    layer_id=layer.id,
                    event_id=event_id,
                    attribution=layer.attribution,
                    licence=layer.licence,
                )
            )
        for area in catalogue.spec.named_areas:
            path = catalogue.root / area.path
            if event_id in area.events and path.is_file():
                layers.append(
                    ContextLayer(
                        kind="area",
                        title=area.title,
                        source=str(path),
                        layer_id=f"area:{area.id}",
                        event_id=event_id,
                        attribution=area.attribution,
                        licence=area.licence,
                    )
                )
        if event and event.bbox_4326:
            layers += _towns(event.bbox_4326, event_id, spec["towns"])
    return MapContext(events=events, layers=sorted(layers, key=lambda c: ORDER.index(c.kind)), notes=notes)


def _towns(bbox: tuple[float, float, float, float], event_id: int, spec: Mapping[str, Any]) -> list[ContextLayer]:
    from .geocode import towns_within

    margin = float(spec.get("margin_km", 0)) / 111.0  # degrees, roughly (a margin, not a measurement)
    x0, y0, x1, y1 = bbox
    points = towns_within((x0 - margin, y0 - margin, x1 + margin, y1 + margin))
    if not points:
        return []
    return [
        ContextLayer(
            kind="towns",
            title=spec["title"],
            points=points,
            label="name",
            event_id=event_id,
            attribution=spec["attribution"],
            licence=spec["licence"],
        )
    ]
