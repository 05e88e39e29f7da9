"""OpenStreetMap features for the Maps agent: feature classes as data, an Overpass client and local extracts.

One :class:`FeatureQuery` (an OR of tag selectors, each an AND of tags) drives every source, so a class
means the same thing whether a local extract or Overpass answers it. Classes live in
``core/data/osm_classes.json`` and local extracts in ``core/data/osm_extracts.json``.

Overpass is queried with a direct HTTP POST (not osmnx) so the endpoint, timeouts, retries and the
error pages Overpass sends with HTTP 200 are under our control and testable against a local server.
Results are GeoDataFrames in EPSG:4326 with ``osm_id``, ``osm_type``, ``name`` and the query's key tags.
"""

from __future__ import annotations

import glob
import json
import re
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import geopandas as gpd
import httpx
import numpy as np
import pandas as pd
import shapely

from ..config import Settings
from ..domain.geodesy import bbox_area_km2, geodesic_area_m2
from ..errors import ToolFailed
from .catalog import data_dir

DATA = Path(__file__).resolve().parents[1] / "data"
ATTRIBUTION = "© OpenStreetMap contributors, ODbL"
USER_AGENT = "GeoFaham QGIS plugin (disaster response; python-httpx)"
ELEMENTS = ("node", "way", "relation")

FULL_COVER = 0.999  # an extract covering this fraction of the AOI answers before Overpass

Wanted = tuple[str, ...] | bool  # True: any value except "no"
TagValue = str | list[str] | bool


# ------------------------------------------------------------------------------------------ queries
@dataclass
class FeatureQuery:
    """What to fetch: ``selectors`` are OR-ed, the tags inside one selector AND-ed."""

    label: str
    selectors: list[dict[str, Wanted]]
    elements: tuple[str, ...] = ELEMENTS
    geometry: str | None = None  # keep only this family: point | line | polygon
    keys: tuple[str, ...] = ()

    @property
    def columns(self) -> list[str]:
        """Tag columns of the result: selector keys first, then the class's extra keys."""
        return list(dict.fromkeys([k for s in self.selectors for k in s] + list(self.keys)))


def _wanted(value: TagValue) -> Wanted:
    if value is True or value == "*":
        return True
    if isinstance(value, str) and value:
        return (value,)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise ToolFailed(f"bad tag value {value!r}", kind="invalid_input",
                     hint='a tag value is a string, a list of strings or true (any value, also "*")')


@lru_cache(maxsize=1)
def feature_classes() -> dict[str, dict[str, Any]]:
    """The class table from ``osm_classes.json`` (name -> spec)."""
    return json.loads((DATA / "osm_classes.json").read_text(encoding="utf-8"))["classes"]


def class_query(name: str, variant: str | None = None) -> FeatureQuery:
    classes = feature_classes()
    if name not in classes:
        raise ToolFailed(f"unknown feature class '{name}'", kind="invalid_input", hint="one of: " + ", ".join(classes))
    spec = classes[name]
    selectors = spec["selectors"]
    if variant:
        if variant not in spec.get("variants", {}):
            raise ToolFailed(f"feature class '{name}' has no variant '{variant}'", kind="invalid_input",
                             hint="variants: " + (", ".join(spec.get("variants", {})) or "none"))
        selectors = spec["variants"][variant]
    return FeatureQuery(label=f"{name} ({variant})" if variant else name,
                        selectors=[{k: _wanted(v) for k, v in s.items()} for s in selectors],
                        elements=tuple(spec.get("elements", ELEMENTS)), geometry=spec.get("geometry"),
                        keys=tuple(spec.get("keys", ())))


def tags_query(tags: Mapping[str, TagValue]) -> FeatureQuery:
    """Arbitrary tags, all of which must match (one selector)."""
    if not tags:
        raise ToolFailed("no tags given", kind="invalid_input", hint='e.g. {"amenity": "hospital"}')
    selector = {str(k): _wanted(v) for k, v in tags.items()}
    label = ", ".join(f"{k}=" + ("*" if v is True else "|".join(v)) for k, v in selector.items())
    return FeatureQuery(label=label, selectors=[selector])


def match(get: Callable[[str], pd.Series | None], n: int, query: FeatureQuery) -> tuple[np.ndarray, set[str]]:
    """Rows matching the query; ``get(key)`` returns a key's values or None when the source lacks the
    key. Returns (mask, keys the source lacks): a selector needing a missing key matches nothing."""
    mask, missing = np.zeros(n, dtype=bool), set()
    for selector in query.selectors:
        sel = np.ones(n, dtype=bool)
        for key, wanted in selector.items():
            values = get(key)
            if values is None:
                missing.add(key)
                sel[:] = False
                break
            v = values.astype("string")
            hit = (v.notna() & (v != "no")) if wanted is True else v.isin(wanted)
            sel &= hit.fillna(False).to_numpy(dtype=bool)
        mask |= sel
    return mask, missing


# --------------------------------------------------------------------------------------- geometry
def coverage(region: shapely.Geometry, bbox: tuple[float, float, float, float]) -> float:
    """Fraction (0..1) of the region's geodesic area inside ``bbox`` (both lon/lat)."""
    box = shapely.box(*bbox)
    if not box.intersects(region):
        return 0.0
    if box.covers(region):
        return 1.0
    total = geodesic_area_m2(region)
    inside = region.intersection(box)
    return min(1.0, geodesic_area_m2(inside) / total) if total else 0.0


_NOT_AREA = {"natural": {"coastline", "tree_row", "ridge", "cliff", "arete"},
             "man_made": {"embankment", "pipeline", "cutline", "breakwater", "groyne", "dyke"},
             "aeroway": {"taxiway", "runway", "jet_bridge", "parking_position"},
             "power": {"line", "minor_line", "cable"}, "leisure": {"track", "slipway"}}
_AREA_KEYS = {"building", "building:part", "landuse", "amenity", "leisure", "natural", "man_made", "healthcare",
              "shop", "tourism", "office", "place", "historic", "military", "craft", "social_facility",
              "emergency", "telecom", "aeroway", "power", "public_transport", "area:highway"}
_AREA_WATERWAYS = {"riverbank", "dock", "boatyard"}


def _is_area(tags: Mapping[str, str]) -> bool:
    """A closed way is an area unless its tags say line (the usual OSM convention, compactly)."""
    if tags.get("area") in ("yes", "no"):
        return tags["area"] == "yes"
    if tags.get("waterway") in _AREA_WATERWAYS:
        return True
    return any(k in tags and tags[k] not in _NOT_AREA.get(k, ()) for k in _AREA_KEYS)


def _coords(points: list[dict | None]) -> list[tuple[float, float]]:
    return [(p["lon"], p["lat"]) for p in points or () if p]


def _way_geometry(el: dict) -> shapely.Geometry | None:
    coords = _coords(el.get("geometry"))
    if len(coords) < 2:
        return None
    if len(coords) >= 4 and coords[0] == coords[-1] and _is_area(el.get("tags", {})):
        return shapely.make_valid(shapely.Polygon(coords))
    return shapely.LineString(coords)


def _rings(lines: list[shapely.LineString]) -> shapely.Geometry | None:
    faces = shapely.get_parts(shapely.polygonize(lines)) if lines else []
    return shapely.union_all(faces) if len(faces) else None


def _relation_geometry(el: dict) -> shapely.Geometry | None:
    """Multipolygon and boundary relations become (multi)polygons from their outer/inner member ways;
    when the rings do not close (incomplete data) or for other relations, the member ways as lines."""
    outer, inner = [], []
    for m in el.get("members", ()):
        coords = _coords(m.get("geometry")) if m.get("type") == "way" else []
        if len(coords) >= 2:
            (inner if m.get("role") == "inner" else outer).append(shapely.LineString(coords))
    if el.get("tags", {}).get("type") in ("multipolygon", "boundary"):
        polygons = _rings(outer)
        if polygons is not None and not polygons.is_empty:
            holes = _rings(inner)
            if holes is not None and not holes.is_empty:
                polygons = polygons.difference(holes)
            return shapely.make_valid(polygons)
    lines = outer + inner
    return shapely.MultiLineString(lines) if lines else None


def _family(geom_type: str) -> str:
    g = geom_type.lower()
    return "point" if "point" in g else "line" if "line" in g else "polygon" if "polygon" in g else g


def frame(rows: list[dict] | pd.DataFrame, geoms: list, query: FeatureQuery) -> gpd.GeoDataFrame:
    """The result schema: osm_id, osm_type, name, the query's tag columns, geometry (EPSG:4326)."""
    columns = ["osm_id", "osm_type", "name", *[c for c in query.columns if c != "name"]]
    df = pd.DataFrame(rows, columns=columns)
    df["osm_id"] = pd.to_numeric(df["osm_id"], errors="coerce").astype("Int64")
    gdf = gpd.GeoDataFrame(df, geometry=gpd.GeoSeries(geoms, crs=4326, index=df.index), crs=4326)
    gdf = gdf[gdf.geometry.notna() & ~gdf.geometry.is_empty]
    if query.geometry and len(gdf):
        gdf = gdf[[_family(t) == query.geometry for t in gdf.geom_type]]
    return gdf.reset_index(drop=True)


def elements_to_gdf(elements: list[dict], query: FeatureQuery) -> gpd.GeoDataFrame:
    """Overpass JSON elements (``out geom``) to the result schema."""
    rows, geoms = [], []
    for el in elements:
        kind, tags = el.get("type"), el.get("tags", {})
        if kind == "node" and "lat" in el:
            geom = shapely.Point(el["lon"], el["lat"])
        elif kind == "node" and "center" in el:
            geom = shapely.Point(el["center"]["lon"], el["center"]["lat"])
        elif kind == "way":
            geom = _way_geometry(el)
        elif kind == "relation":
            geom = _relation_geometry(el)
        else:
            continue
        if geom is None:
            continue
        rows.append({"osm_id": el.get("id"), "osm_type": kind, "name": tags.get("name"),
                     **{k: tags.get(k) for k in query.columns if k != "name"}})
        geoms.append(geom)
    return frame(rows, geoms, query)


# --------------------------------------------------------------------------------------- Overpass
def _ql_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _ql_filter(key: str, wanted: Wanted) -> str:
    k = _ql_string(key)
    if wanted is True:
        return f"[{k}][{k}!=\"no\"]"
    if len(wanted) == 1:
        return f"[{k}={_ql_string(wanted[0])}]"
    alternatives = "|".join(re.sub(r"([.\[\]{}()\\*+?|^$])", r"\\\1", v) for v in wanted)
    return f"[{k}~{_ql_string('^(' + alternatives + ')$')}]"


def overpass_ql(query: FeatureQuery, bbox: tuple[float, float, float, float], *, timeout_s: int, limit: int) -> str:
    """Overpass QL: the union of one statement per selector (and element type), inside ``bbox``
    (minx, miny, maxx, maxy), with full geometries and at most ``limit`` elements."""
    w, s, e, n = bbox
    element_kinds = ["nwr"] if set(query.elements) == set(ELEMENTS) else list(query.elements)
    statements = [f"  {kind}{''.join(_ql_filter(k, v) for k, v in sel.items())};"
                  for sel in query.selectors for kind in element_kinds]
    return (f"[out:json][timeout:{timeout_s}][bbox:{s:.7f},{w:.7f},{n:.7f},{e:.7f}];\n(\n"
            + "\n".join(statements) + f"\n);\nout geom qt {limit};")


_OVERLOAD = re.compile(r"runtime error|timed out|timeout|out of memory|too busy|dispatcher", re.I)
_RETRY_STATUS = {429, 502, 503, 504}
_HINT_SMALLER = "use a smaller area (or a smaller buffer) or fewer/narrower feature classes, or retry later"


@dataclass
class OverpassResult:
    features: gpd.GeoDataFrame
    query: str
    remarks: list[str] = field(default_factory=list)


@dataclass
class OverpassClient:
    """A bounded Overpass client: area and feature caps, a request timeout, and retries with exponential
    backoff (``backoff_s * 2**attempt``, at least the server's Retry-After up to a minute) on 429/50x."""

    url: str
    timeout_s: float = 180.0
    retries: int = 3  # further attempts after the first, on 429/502/503/504
    backoff_s: float = 2.0
    area_cap_km2: float = 2500.0
    feature_cap: int = 50_000
    sleep: Callable[[float], None] = time.sleep
    cancel: threading.Event | None = None
    offline: bool = False  # offline mode: no request is sent

    @classmethod
    def from_settings(cls, settings: Settings, cancel: threading.Event | None = None) -> OverpassClient:
        """Endpoint and bounds from ``settings.overpass`` (GEOFAHAM_OVERPASS_*), offline mode from
        ``settings.network``. A backoff wait ends on cancel."""
        o = settings.overpass
        return cls(url=o.url, cancel=cancel, sleep=cancel.wait if cancel else time.sleep, timeout_s=o.timeout_s,
                   retries=o.retries, backoff_s=o.backoff_s, area_cap_km2=o.area_cap_km2, feature_cap=o.feature_cap,
                   offline=settings.network.offline)

    def check_area(self, bbox: tuple[float, float, float, float]) -> float:
        area = bbox_area_km2(bbox)
        if area > self.area_cap_km2:
            raise ToolFailed(f"the area to search is {area:,.0f} km² (bounding box of the AOI and buffer), above the "
                             f"{self.area_cap_km2:,.0f} km² cap for one Overpass query", kind="invalid_input",
                             hint="use a smaller AOI or buffer, or split the area")
        return area

    def fetch(self, query: FeatureQuery, bbox: tuple[float, float, float, float]) -> OverpassResult:
        self.check_area(bbox)  # before any request
        ql = overpass_ql(query, bbox, timeout_s=int(self.timeout_s), limit=self.feature_cap + 1)
        payload = self._post(ql)
        elements = payload.get("elements") or []
        if len(elements) > self.feature_cap:
            raise ToolFailed(f"more than {self.feature_cap:,} OpenStreetMap {query.label} features in this area "
                             f"(the cap for one query)", kind="invalid_input",
                             hint="use a smaller area, road_class='major' for roads, or narrower tags")
        remark = payload.get("remark")
        return OverpassResult(elements_to_gdf(elements, query), ql, [remark] if remark else [])

    def _post(self, ql: str) -> dict:
        if self.offline:
            raise ToolFailed(f"Overpass ({self.url}) is not asked in offline mode", kind="not_found",
                             hint="go online (GEOFAHAM_OFFLINE or the offline setting), or add an OSM extract")
        failure: ToolFailed | None = None
        for attempt in range(self.retries + 1):
            if self.cancel is not None and self.cancel.is_set():
                raise ToolFailed("cancelled", kind="cancelled")
            try:
                response = httpx.post(self.url, data={"data": ql}, timeout=self.timeout_s + 15,
                                      headers={"User-Agent": USER_AGENT, "Accept": "application/json"})
            except httpx.TimeoutException:
                raise ToolFailed(f"Overpass ({self.url}) did not answer within {self.timeout_s:g} s", kind="timeout",
                                 hint=_HINT_SMALLER) from None
            except httpx.HTTPError as exc:
                raise ToolFailed(f"Overpass ({self.url}) could not be reached: {exc}", kind="error",
                                 hint="check the network or GEOFAHAM_OVERPASS_URL; GEOFAHAM_OFFLINE=1 uses local "
                                      "sources only") from None
            if response.status_code not in _RETRY_STATUS:
                return _parse(response, self.url)
            failure = ToolFailed(
                f"Overpass ({self.url}) answered HTTP {response.status_code} "
                f"({'rate limited' if response.status_code == 429 else 'busy or timed out'}) "
                f"{attempt + 1} time{'s' if attempt else ''}",
                kind="timeout" if response.status_code != 429 else "error",
                hint=_HINT_SMALLER if response.status_code != 429 else "the Overpass server limits requests: retry "
                     "in a few minutes or configure another GEOFAHAM_OVERPASS_URL")
            if attempt < self.retries:
                delay = self.backoff_s * 2 ** attempt
                retry_after = response.headers.get("Retry-After", "")
                if retry_after.isdigit():
                    delay = max(delay, min(float(retry_after), 60.0))
                self.sleep(delay)
        assert failure is not None
        raise failure


def _parse(response: httpx.Response, url: str) -> dict:
    """The JSON body; Overpass reports timeouts and memory exhaustion inside an HTTP 200 (a "remark"
    in JSON, or an HTML error page), which must not pass as an empty or partial result."""
    text, status = response.text, response.status_code
    if status != 200 or "html" in response.headers.get("content-type", "") or text.lstrip().startswith("<"):
        message = " ".join(re.sub(r"<[^>]+>", " ", text).split())[:300]
        if status != 400 and _OVERLOAD.search(message):  # 400: our query was rejected, not overload
            raise ToolFailed(f"Overpass gave up on the query: {message}", kind="timeout", hint=_HINT_SMALLER)
        raise ToolFailed(f"Overpass ({url}) answered HTTP {status}: {message or 'no message'}",
                         kind="error", hint="check GEOFAHAM_OVERPASS_URL")
    try:
        payload = response.json()
    except ValueError:
        raise ToolFailed(f"Overpass ({url}) answered with something that is not JSON: {text[:200]!r}",
                         kind="error", hint="check GEOFAHAM_OVERPASS_URL") from None
    remark = str(payload.get("remark") or "")
    if remark and _OVERLOAD.search(remark):
        raise ToolFailed(f"Overpass gave up on the query: {remark}", kind="timeout", hint=_HINT_SMALLER)
    return payload


# -------------------------------------------------------------------------------- local extracts
_HOT_TYPES = {"nodes": "node", "ways_line": "way", "ways_poly": "way", "relations": "relation"}
_HSTORE = re.compile(r'"((?:[^"\\]|\\.)*)"=>"((?:[^"\\]|\\.)*)"')


def parse_other_tags(text: str | None) -> dict[str, str]:
    """GDAL's OSM driver packs the tags without a column of their own into an hstore string."""
    if not text:
        return {}
    unescape = lambda s: s.replace('\\"', '"').replace("\\\\", "\\")  # noqa: E731
    return {unescape(k): unescape(v) for k, v in _HSTORE.findall(text)}


def hot_column(key: str, columns) -> str | None:
    """The column of an OSM key in a HOT export, which cuts names to 10 characters (':' -> '_'):
    the key itself, else its cut unless the cut is the column of the key's own prefix
    ("healthcare:speciality" must not read the "healthcare" column)."""
    if key in columns:
        return key
    cut = key.replace(":", "_")[:10]
    return cut if len(key) > 10 and cut in columns and cut != key.split(":")[0] else None


@dataclass
class Extract:
    """A local OSM extract: a HOT-export GeoJSON set or an .osm.pbf file."""

    id: str
    title: str
    format: str  # hot_geojson | pbf
    paths: dict[str, Path]
    bbox_4326: tuple[float, float, float, float]
    limitations: list[str] = field(default_factory=list)

    def read(self, query: FeatureQuery, bbox: tuple[float, float, float, float]) -> tuple[gpd.GeoDataFrame, set[str]]:
        """Features matching the query whose geometry meets ``bbox``; also the tag keys the extract lacks
        (a HOT export has only the tags it was exported with; a PBF has them all)."""
        parts, missing = [], None
        layers = self._hot_layers() if self.format == "hot_geojson" else self._pbf_layers()
        for layer, tags, osm_types, complete in layers:
            keep = (osm_types.isin(query.elements) & pd.Series(
                shapely.intersects(layer.geometry.values, shapely.box(*bbox)), index=layer.index)).to_numpy()
            layer, tags, osm_types = layer[keep], tags[keep], osm_types[keep]

            def get(key: str, tags: pd.DataFrame = tags) -> pd.Series | None:
                column = hot_column(key, tags.columns)
                if column is not None:
                    return tags[column]
                return pd.Series(None, index=tags.index, dtype=object) if complete else None

            mask, lacking = match(get, len(tags), query)
            missing = lacking if missing is None else missing & lacking  # lacking in every layer
            columns = {"osm_id": layer["osm_id"], "osm_type": osm_types, "name": get("name")}
            columns |= {k: get(k) for k in query.columns if k != "name"}
            parts.append(gpd.GeoDataFrame({k: (v[mask].to_numpy() if v is not None else None)
                                           for k, v in columns.items()},
                                          geometry=layer.geometry[mask].to_numpy(), crs=4326))
        rows = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        return frame(rows, list(rows.geometry) if len(rows) else [], query), missing or set()

    def _hot_layers(self):
        for path in self.paths.values():
            layer = _read_cached(str(path), None)
            tags = layer.drop(columns=["osm_id", "osm_type", layer.geometry.name])
            yield layer, tags, layer["osm_type"].map(_HOT_TYPES), False

    def _pbf_layers(self):
        path = str(self.paths["pbf"])
        for name, osm_type in (("points", "node"), ("lines", "way"), ("multilinestrings", "relation"),
                               ("multipolygons", None)):
            layer = _read_cached(path, name)
            if osm_type is None:  # GDAL: osm_id for relations, osm_way_id for closed ways
                types = pd.Series(np.where(layer["osm_id"].notna(), "relation", "way"), index=layer.index)
                layer = layer.assign(osm_id=layer["osm_id"].fillna(layer["osm_way_id"]))
            else:
                types = pd.Series(osm_type, index=layer.index)
            yield layer, _pbf_tags(path, name), types, True


@lru_cache(maxsize=16)
def _read_cached(path: str, layer: str | None) -> gpd.GeoDataFrame:
    """Read once per process: extracts are static files and several tools read the same ones."""
    import pyogrio

    with warnings.catch_warnings():  # GDAL's OSM driver warns about each unclosed ring it skips
        warnings.simplefilter("ignore", RuntimeWarning)
        gdf = pyogrio.read_dataframe(path, layer=layer, on_invalid="ignore") if layer else gpd.read_file(path)
    if gdf.crs is None:
        gdf = gdf.set_crs(4326)
    gdf = gdf.to_crs(4326)
    return gdf[gdf.geometry.notna()].reset_index(drop=True)


@lru_cache(maxsize=8)
def _pbf_tags(path: str, layer: str) -> pd.DataFrame:
    """All tags of a PBF layer as columns: GDAL's own tag columns plus the parsed ``other_tags``."""
    gdf = _read_cached(path, layer)
    own = [c for c in gdf.columns if c not in ("osm_id", "osm_way_id", "other_tags", "z_order", "geometry")]
    other = pd.DataFrame.from_records([parse_other_tags(t) for t in gdf["other_tags"]], index=gdf.index)
    other = other.drop(columns=[c for c in other.columns if c in own])
    return pd.concat([gdf[own], other], axis=1)


def local_extracts(root: Path | None = None, registry: Path = DATA / "osm_extracts.json") -> list[Extract]:
    """The registered extracts whose files exist, plus every .osm.pbf found under the data folder."""
    root = root or data_dir()
    raw = json.loads(registry.read_text(encoding="utf-8"))
    extracts = []
    for entry in raw.get("extracts", []):
        paths = {k: root / v for k, v in entry["paths"].items()}
        if all(p.is_file() for p in paths.values()):
            extracts.append(Extract(entry["id"], entry["title"], entry["format"], paths,
                                    tuple(entry["bbox_4326"]), list(entry.get("limitations", []))))
    seen: set[str] = set()
    for pattern in raw.get("pbf_globs", []):
        for path in sorted(glob.glob(str(root / pattern))):
            if path in seen:
                continue
            seen.add(path)
            bbox = _pbf_bbox(path)
            if bbox is not None:
                name = Path(path).name
                extracts.append(Extract(f"pbf:{name}", f"OpenStreetMap extract {name}", "pbf", {"pbf": Path(path)},
                                        bbox, [f"{name}: extract date not recorded"]))
    return extracts


@lru_cache(maxsize=32)
def _pbf_bbox(path: str) -> tuple[float, float, float, float] | None:
    """The extract's extent from the PBF header (no full read)."""
    import pyogrio

    try:
        bounds = pyogrio.read_info(path, layer="points", force_total_bounds=False)["total_bounds"]
    except Exception:  # noqa: BLE001 - a broken file is not an extract
        return None
    return tuple(float(b) for b in bounds) if bounds is not None and np.all(np.isfinite(bounds)) else None


