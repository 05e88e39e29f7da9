"""The split's grader: recomputes each task's expected result from its input files with GeoPandas, shapely and pyproj
(no GeoFaham code) and scores each requested output 0..1 as the share of its checks passed, with a reason per check.

Every output gets the generic checks (exists, opens, is the format asked for, CRS, geometry type, the listed columns
present and first in that order) and then the task's own (``grade`` in ``tasks.json``): counts, keys, values within
tolerance, areas and lengths measured in a projected (UTM) CRS or geodesically. An output that does not exist or does
not open scores 0.

    .venv/bin/python -m bench.batch_external.grade --task bx_buffer_clinics_each --inputs IN --out OUT
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely
from pyproj import CRS, Geod
from shapely.ops import unary_union

HERE = Path(__file__).resolve().parent
TASKS_FILE = HERE / "tasks.json"
DEFAULT_METRIC = "EPSG:32630"
WGS84 = "EPSG:4326"
GEOD = Geod(ellps="WGS84")
LON_NAMES = ("lng", "lon", "long", "longitude", "x")
LAT_NAMES = ("lat", "latitude", "y")
WKT_NAMES = ("wkt", "geometry", "geom", "the_geom", "geom_wkt")
FORMATS = {"geojson", "gpkg", "shapefile", "csv", "kml", "flatgeobuf", "geoparquet", "geotiff", "json", "markdown"}


def load_tasks(path: Path = TASKS_FILE) -> list[dict]:
    tasks = json.loads(Path(path).read_text(encoding="utf-8"))["tasks"]
    return list(tasks)


# ------------------------------------------------------------------------------------------- results
@dataclass
class Check:
    name: str
    ok: bool
    detail: str = ""


@dataclass
class OutputGrade:
    name: str
    checks: list[Check] = field(default_factory=list)
    fatal: bool = False

    def add(self, name: str, ok: bool, detail: str = "") -> bool:
        self.checks.append(Check(name, bool(ok), detail))
        return bool(ok)

    @property
    def score(self) -> float:
        if self.fatal or not self.checks:
            return 0.0
        return sum(c.ok for c in self.checks) / len(self.checks)

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "score": round(self.score, 4),
            "checks": [{"check": c.name, "ok": c.ok, "detail": c.detail} for c in self.checks],
            "reasons": [f"{c.name}: {c.detail}" if c.detail else c.name for c in self.checks if not c.ok],
        }


# ------------------------------------------------------------------------------------------- reading
def _find_col(df: pd.DataFrame, name: str) -> str | None:
    """The column called ``name``: exactly, then ignoring case, then cut to a shapefile's 10 characters."""
    cols = [c for c in df.columns if c != "geometry"]
    if name in cols:
        return name
    low = {str(c).lower(): c for c in cols}
    if name.lower() in low:
        return low[name.lower()]
    if name[:10].lower() in low:
        return low[name[:10].lower()]
    return None


def _points_from_table(df: pd.DataFrame) -> gpd.GeoDataFrame | pd.DataFrame:
    low = {str(c).lower(): c for c in df.columns}
    lon = next((low[n] for n in LON_NAMES if n in low), None)
    lat = next((low[n] for n in LAT_NAMES if n in low), None)
    if lon is not None and lat is not None:
        xs, ys = pd.to_numeric(df[lon], errors="coerce"), pd.to_numeric(df[lat], errors="coerce")
        return gpd.GeoDataFrame(df, geometry=gpd.points_from_xy(xs, ys), crs=WGS84)
    for n in WKT_NAMES:
        if n in low and df[low[n]].astype(str).str.match(r"^\s*(MULTI)?(POINT|LINESTRING|POLYGON)", case=False).all():
            geoms = shapely.from_wkt(df[low[n]].astype(str).tolist())
            return gpd.GeoDataFrame(df.drop(columns=[low[n]]), geometry=list(geoms), crs=WGS84)
    return df


def read_input(inputs_dir: Path, file: str, layer: str | None = None) -> gpd.GeoDataFrame:
    path = Path(inputs_dir) / file
    if path.suffix == ".csv":
        out = _points_from_table(pd.read_csv(path))
        assert isinstance(out, gpd.GeoDataFrame), f"{file}: no geometry found"
        return out
    if path.suffix == ".parquet":
        return gpd.read_parquet(path)
    return gpd.read_file(path, layer=layer) if layer else gpd.read_file(path)


def read_output(path: Path, fmt: str, spec: dict) -> pd.DataFrame:
    """The output as a (Geo)DataFrame; raises when it does not open."""
    fmt = fmt.lower()
    if fmt == "csv":
        return _points_from_table(pd.read_csv(path))
    if fmt == "json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("type") == "FeatureCollection":
            return gpd.read_file(path)
        if isinstance(data, dict):
            for key in ("records", "rows", "data", "items"):
                if isinstance(data.get(key), list):
                    return pd.DataFrame(data[key])
            cols = list(spec.get("columns") or ["key", "value"])[:2]
            if all(not isinstance(v, (dict, list)) for v in data.values()):
                return pd.DataFrame({cols[0]: list(data.keys()), cols[-1]: list(data.values())})
            return pd.DataFrame([{cols[0]: k, **v} for k, v in data.items() if isinstance(v, dict)])
        return pd.DataFrame(data)
    if fmt == "geoparquet":
        return gpd.read_parquet(path)
    layer = spec.get("layer")
    if layer is None and fmt == "gpkg":
        layers = pyogrio.list_layers(path)
        if len(layers) > 1:
            stem = Path(spec["name"]).stem
            names = [str(n) for n, _ in layers]
            layer = stem if stem in names else names[0]
    return gpd.read_file(path, layer=layer) if layer else gpd.read_file(path)


def format_ok(path: Path, fmt: str) -> tuple[bool, str]:
    fmt = fmt.lower()
    head = path.read_bytes()[:512]
    if fmt == "gpkg":
        return head.startswith(b"SQLite format 3\x00"), "SQLite/GeoPackage header"
    if fmt == "flatgeobuf":
        return head[:3] == b"fgb", "FlatGeobuf magic bytes"
    if fmt == "geoparquet":
        if not head.startswith(b"PAR1"):
            return False, "no Parquet magic bytes"
        import pyarrow.parquet as pq

        meta = pq.read_schema(path).metadata or {}
        return b"geo" in meta, "Parquet with 'geo' metadata"
    if fmt == "shapefile":
        code = int.from_bytes(head[:4], "big") if len(head) >= 4 else 0
        return code == 9994 and path.with_suffix(".dbf").exists(), ".shp header and .dbf beside it"
    if fmt == "kml":
        return b"<kml" in path.read_bytes()[:4096], "a <kml> document"
    if fmt in ("geojson", "json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            return False, f"not JSON: {exc}"
        if fmt == "geojson":
            return isinstance(data, dict) and data.get("type") == "FeatureCollection", "a FeatureCollection"
        return True, "JSON"
    if fmt == "csv":
        return not head.lstrip().startswith((b"{", b"[", b"<", b"PK", b"SQLite")), "plain delimited text"
    return path.suffix.lower().lstrip(".") in (fmt, "md" if fmt == "markdown" else fmt), "file extension"


def _crs_matches(actual: Any, expected: str) -> bool:
    if actual is None:
        return False
    want, got = CRS.from_user_input(expected), CRS.from_user_input(actual)
    return got.equals(want, ignore_axis_order=True) or (got.to_epsg() is not None and got.to_epsg() == want.to_epsg())


def _base_type(geom_type: str) -> str:
    return geom_type.replace("Multi", "")


# ------------------------------------------------------------------------------------------- helpers
def _same_value(a: Any, b: Any, rel: float = 1e-6) -> bool:
    na, nb = _is_null(a), _is_null(b)
    if na or nb:
        return na and nb
    try:
        fa, fb = float(str(a).strip()), float(str(b).strip())
        return math.isclose(fa, fb, rel_tol=rel, abs_tol=1e-6)
    except ValueError:
        return str(a).strip() == str(b).strip()


def _is_null(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, float) and math.isnan(v):
        return True
    return bool(isinstance(v, str) and v.strip() == "")


def _close(a: float, b: float, rel: float, abs_tol: float = 0.0) -> bool:
    return abs(a - b) <= max(rel * abs(b), abs_tol)


def _metric(gdf: gpd.GeoDataFrame, crs: str) -> gpd.GeoDataFrame:
    if gdf.crs is None:
        gdf = gdf.set_crs(WGS84)
    return gdf.to_crs(crs)


def _valid(g: shapely.Geometry) -> shapely.Geometry:
    """The polygonal part of ``make_valid``."""
    g = shapely.make_valid(g)
    if g.geom_type == "GeometryCollection":
        g = unary_union([p for p in g.geoms if p.geom_type in ("Polygon", "MultiPolygon")])
    return g


def _keyed(df: pd.DataFrame, key: str) -> tuple[pd.DataFrame | None, str]:
    col = _find_col(df, key)
    if col is None:
        return None, f"no key column {key!r}"
    out = df.copy()
    out["_key"] = out[col].astype(str).str.strip()
    return out, ""


def geodesic_area(g: shapely.Geometry) -> float:
    return abs(GEOD.geometry_area_perimeter(g)[0])


def geodesic_length(g: shapely.Geometry) -> float:
    return float(GEOD.geometry_length(g))


UNITS = {"m": 1.0, "km": 1000.0, "m2": 1.0, "ha": 1e4, "km2": 1e6}


@dataclass
class Ctx:
    inputs: Path
    grade: dict
    spec: dict
    out: pd.DataFrame
    g: OutputGrade

    @property
    def metric(self) -> str:
        return str(self.grade.get("metric_crs", DEFAULT_METRIC))

    def src(self, ref: str | dict | None = None) -> gpd.GeoDataFrame:
        ref = self.grade["source"] if ref is None else ref
        if isinstance(ref, dict):
            return read_input(self.inputs, ref["file"], ref.get("layer"))
        return read_input(self.inputs, ref, self.grade.get("layer"))

    def geo_out(self) -> gpd.GeoDataFrame | None:
        if isinstance(self.out, gpd.GeoDataFrame):
            return _metric(self.out, self.metric)
        self.g.add("has geometry", False, "the output holds no geometry")
        return None

    def keyed_out(self, key: str) -> pd.DataFrame | None:
        out, why = _keyed(self.out, key)
        if out is None:
            self.g.add(f"key column {key}", False, why)
        return out

    def count(self, expected: int) -> bool:
        return self.g.add("feature count", len(self.out) == expected, f"{len(self.out)} rows, expected {expected}")

    def key_set(self, out: pd.DataFrame, expected: set[str]) -> bool:
        got = set(out["_key"])
        missing, extra = sorted(expected - got), sorted(got - expected)
        return self.g.add("keys", not missing and not extra, f"missing {missing[:8]}, unexpected {extra[:8]}")


# ------------------------------------------------------------------------------------------- task checks
def check_same_features(c: Ctx) -> None:
    src = c.src()
    key = c.grade["key"]
    c.count(len(src))
    out = c.keyed_out(key)
    geo = c.geo_out()
    if out is None or geo is None:
        return
    src_m = _metric(src, c.metric)
    src_m["_key"] = src_m[key].astype(str).str.strip()
    c.key_set(out, set(src_m["_key"]))
    exp = dict(zip(src_m["_key"], src_m.geometry, strict=True))
    tol = float(c.grade.get("tol_m", 0.5))
    worst, bad = 0.0, []
    for k, g in zip(out["_key"], geo.geometry, strict=True):
        if k in exp and g is not None and not g.is_empty:
            d = shapely.hausdorff_distance(g, exp[k])
            worst = max(worst, d)
            if d > tol:
                bad.append(k)
        else:
            bad.append(k)
    c.g.add("geometry unchanged", not bad, f"max Hausdorff {worst:.3f} m (tolerance {tol} m); off: {bad[:6]}")
    for attr in c.grade.get("attrs", []):
        col = _find_col(out, attr)
        if col is None:
            c.g.add(f"attribute {attr}", False, "missing")
            continue
        vals = dict(zip(src_m["_key"], src_m[attr], strict=True))
        wrong = [k for k, v in zip(out["_key"], out[col], strict=True) if k in vals and not _same_value(v, vals[k])]
        c.g.add(f"attribute {attr}", not wrong, f"values differ for {wrong[:6]}" if wrong else "kept")


def check_latlon_table(c: Ctx) -> None:
    src = c.src().to_crs(WGS84)
    key = c.grade["key"]
    c.count(len(src))
    out = c.keyed_out(key)
    if out is None:
        return
    src["_key"] = src[key].astype(str).str.strip()
    c.key_set(out, set(src["_key"]))
    lat, lon = _find_col(out, c.grade["lat"]), _find_col(out, c.grade["lon"])
    if lat is None or lon is None:
        c.g.add("lat/lon values", False, "latitude/longitude columns missing")
        return
    exp = {k: (p.y, p.x) for k, p in zip(src["_key"], src.geometry, strict=True)}
    tol = float(c.grade.get("tol_deg", 1e-5))
    bad = []
    for k, y, x in zip(
        out["_key"], pd.to_numeric(out[lat], errors="coerce"), pd.to_numeric(out[lon], errors="coerce"), strict=True
    ):
        if k not in exp or not (abs(y - exp[k][0]) <= tol and abs(x - exp[k][1]) <= tol):
            bad.append(k)
    c.g.add("lat/lon values", not bad, f"off for {bad[:6]}" if bad else f"within {tol} degrees")


def check_repair(c: Ctx) -> None:
    src = _metric(c.src(), c.metric)
    c.count(len(src))
    geo = c.geo_out()
    if geo is None:
        return
    invalid = int((~geo.is_valid).sum())
    c.g.add("all valid", invalid == 0, f"{invalid} invalid geometries")
    types = set(geo.geom_type.dropna())
    c.g.add("polygons only", types <= {"Polygon", "MultiPolygon"}, f"types {sorted(types)}")
    tol = float(c.grade.get("area_tol", 0.01))
    src = src.assign(_area=[_valid(g).area for g in src.geometry])
    geo = geo.assign(_area=[_valid(g).area if g is not None else 0.0 for g in geo.geometry])
    key, group = c.grade.get("key"), c.grade.get("group")
    if key:
        out = c.keyed_out(key)
        if out is None:
            return
        src["_key"] = src[key].astype(str).str.strip()
        c.key_set(out, set(src["_key"]))
        got = geo.assign(_key=out["_key"].values).groupby("_key")["_area"].sum()
        exp = src.groupby("_key")["_area"].sum()
        bad = [k for k in exp.index if not _close(float(got.get(k, 0.0)), float(exp[k]), tol)]
        c.g.add("area of every feature kept", not bad, f"area off for {bad[:6]}" if bad else f"within {tol:.0%}")
    if group:
        col = _find_col(geo, group)
        if col is None:
            c.g.add(f"column {group}", False, "missing")
            return
        got = geo.groupby(geo[col].astype(str))["_area"].sum()
        exp = src.groupby(src[group].astype(str))["_area"].sum()
        bad = [k for k in exp.index if not _close(float(got.get(k, 0.0)), float(exp[k]), tol)]
        c.g.add(f"area per {group}", not bad, f"area off for {bad}" if bad else f"within {tol:.0%}")


def _norm(v: Any) -> str:
    """A value as text that survives a round trip: numbers as numbers, dates as their day."""
    if _is_null(v):
        return ""
    text = str(v).strip()
    try:
        return f"{float(text):.9g}"
    except ValueError:
        return text[:10] if re.match(r"^\d{4}-\d{2}-\d{2}([ T]00:00:00)?$", text) else text


def _row_keys(gdf: gpd.GeoDataFrame, attrs: list[str], metric: str) -> list[tuple]:
    m = _metric(gdf, metric)
    cols = [_find_col(gdf, a) for a in attrs]
    keys = []
    for i, g in enumerate(m.geometry):
        loc = (round(g.x, 2), round(g.y, 2)) if g is not None and g.geom_type == "Point" else (None, None)
        vals = tuple(_norm(gdf.iloc[i][col]) if col else None for col in cols)
        keys.append(loc + vals)
    return keys


def check_dedupe(c: Ctx) -> None:
    src = c.src()
    attrs = [a for a in src.columns if a != "geometry"] if c.grade.get("by") == "row" else []
    exp = Counter(_row_keys(src, attrs, c.metric))
    if not isinstance(c.out, gpd.GeoDataFrame):
        c.g.add("has geometry", False, "the output holds no geometry")
        return
    got = Counter(_row_keys(c.out, attrs, c.metric))
    c.count(len(exp))
    repeats = sum(n - 1 for n in got.values() if n > 1)
    c.g.add("no repeats left", repeats == 0, f"{repeats} repeated {'rows' if attrs else 'locations'}")
    missing, extra = set(exp) - set(got), set(got) - set(exp)
    c.g.add(
        "every distinct one kept",
        not missing and not extra,
        f"{len(missing)} distinct lost, {len(extra)} not in the input",
    )


def _lines_union(c: Ctx, ref: str | dict) -> shapely.Geometry:
    return unary_union(list(_metric(c.src(ref), c.metric).geometry))


def check_snap_points(c: Ctx) -> None:
    src = _metric(c.src(), c.metric)
    key = c.grade["key"]
    c.count(len(src))
    out = c.keyed_out(key)
    geo = c.geo_out()
    if out is None or geo is None:
        return
    src["_key"] = src[key].astype(str).str.strip()
    c.key_set(out, set(src["_key"]))
    lines = _lines_union(c, c.grade["lines"])
    on_tol, move_tol = float(c.grade.get("on_line_tol", 0.05)), float(c.grade.get("move_tol", 0.5))
    off = [k for k, g in zip(out["_key"], geo.geometry, strict=True) if g is None or lines.distance(g) > on_tol]
    c.g.add("every point on a line", not off, f"off the lines: {off[:6]}" if off else f"within {on_tol} m")
    before = dict(zip(src["_key"], src.geometry, strict=True))
    far = []
    for k, g in zip(out["_key"], geo.geometry, strict=True):
        if k in before and g is not None and abs(g.distance(before[k]) - lines.distance(before[k])) > move_tol:
            far.append(k)
    c.g.add("moved to the nearest line", not far, f"not the nearest point: {far[:6]}" if far else "shortest moves")


def check_snap_vertices(c: Ctx) -> None:
    src = _metric(c.src(), c.metric)
    key, tol = c.grade["key"], float(c.grade.get("tol", 0.5))
    c.count(len(src))
    out = c.keyed_out(key)
    geo = c.geo_out()
    if out is None or geo is None:
        return
    src["_key"] = src[key].astype(str).str.strip()
    c.key_set(out, set(src["_key"]))
    c.g.add("all valid", bool(geo.is_valid.all()), f"{int((~geo.is_valid).sum())} invalid")
    # clusters: input vertices of different features within the tolerance of each other
    verts = [
        (k, tuple(xy)) for k, g in zip(src["_key"], src.geometry, strict=True) for xy in shapely.get_coordinates(g)
    ]
    centres: list[tuple[float, float]] = []
    for k, (x, y) in verts:
        near = [(k2, v) for k2, v in verts if k2 != k and math.dist(v, (x, y)) < tol]
        if near and all(math.dist(ctr, (x, y)) > tol for ctr in centres):
            pts = [(x, y)] + [v for _, v in near]
            centres.append((float(np.mean([p[0] for p in pts])), float(np.mean([p[1] for p in pts]))))
    out_verts = shapely.get_coordinates(np.array(list(geo.geometry)))
    open_ = 0
    for ctr in centres:
        near = out_verts[np.hypot(out_verts[:, 0] - ctr[0], out_verts[:, 1] - ctr[1]) < tol]
        if len(near) and np.ptp(near[:, 0]) + np.ptp(near[:, 1]) > 0.002:
            open_ += 1
    c.g.add("near vertices made one", open_ == 0, f"{open_} of {len(centres)} meeting points still apart")
    area_tol = float(c.grade.get("area_tol", 0.01))
    exp = dict(zip(src["_key"], src.geometry.area, strict=True))
    bad = [
        k for k, g in zip(out["_key"], geo.geometry, strict=True) if k in exp and not _close(g.area, exp[k], area_tol)
    ]
    c.g.add("shapes kept", not bad, f"area changed for {bad[:6]}" if bad else f"areas within {area_tol:.0%}")


def _side(c: Ctx, name: str) -> tuple[gpd.GeoDataFrame, str]:
    ref = c.grade[name]
    gdf = _metric(c.src(ref), c.metric)
    gdf = gdf.assign(geometry=[_valid(g) for g in gdf.geometry])
    return gdf, ref["key"]


def check_overlay(c: Ctx) -> None:
    a, ka = _side(c, "a")
    b, kb = _side(c, "b")
    geo = c.geo_out()
    if geo is None:
        return
    tol = float(c.grade.get("area_tol", 0.01))
    ua, ub = unary_union(list(a.geometry)), unary_union(list(b.geometry))
    op = c.grade["op"]
    expected = {
        "intersection": ua.intersection(ub),
        "difference": ua.difference(ub),
        "symmetric_difference": ua.symmetric_difference(ub),
        "union": ua.union(ub),
    }[op]
    geo = geo.assign(geometry=[_valid(g) if g is not None else shapely.Polygon() for g in geo.geometry])
    total = float(geo.area.sum())
    c.g.add(
        "total area", _close(total, expected.area, tol), f"{total / 1e4:.2f} ha, expected {expected.area / 1e4:.2f} ha"
    )
    covered = unary_union(list(geo.geometry))
    outside = covered.difference(expected).area
    c.g.add(
        "nothing outside the result",
        outside <= tol * expected.area,
        f"{outside / 1e4:.3f} ha outside the expected area",
    )
    missed = expected.difference(covered).area
    c.g.add(
        "the whole result covered", missed <= tol * expected.area, f"{missed / 1e4:.3f} ha of the expected area missing"
    )
    ca, cb = _find_col(geo, ka), _find_col(geo, kb)
    if op == "intersection":
        if not c.g.add("both layers' ids", ca is not None and cb is not None, f"columns {ka}, {kb}"):
            return
        assert ca is not None and cb is not None
        got = geo.area.groupby([geo[ca].astype(str).values, geo[cb].astype(str).values]).sum()
        bad = []
        for _, ra in a.iterrows():
            for _, rb in b.iterrows():
                area = ra.geometry.intersection(rb.geometry).area
                if area > 1.0 and not _close(float(got.get((str(ra[ka]), str(rb[kb])), 0.0)), area, tol):
                    bad.append(f"{ra[ka]}x{rb[kb]}")
        c.g.add("area per pair of ids", not bad, f"off: {bad[:6]}" if bad else f"within {tol:.0%}")
    elif op == "difference":
        if not c.g.add(f"column {ka}", ca is not None, "the first layer's id"):
            return
        assert ca is not None
        got = geo.area.groupby(geo[ca].astype(str).values).sum()
        bad = [
            str(r[ka])
            for _, r in a.iterrows()
            if not _close(float(got.get(str(r[ka]), 0.0)), r.geometry.difference(ub).area, tol)
        ]
        c.g.add(f"area per {ka}", not bad, f"off: {bad[:6]}" if bad else f"within {tol:.0%}")
    elif op == "union":
        overlap = total - covered.area
        c.g.add("pieces do not overlap", overlap <= tol * expected.area, f"{overlap / 1e4:.3f} ha counted twice")
        if not c.g.add("both layers' ids", ca is not None and cb is not None, f"columns {ka}, {kb}"):
            return
        both = geo[
            geo[ca].notna()
            & geo[cb].notna()
            & (geo[ca].astype(str).str.strip() != "")
            & (geo[cb].astype(str).str.strip() != "")
        ]
        inter = ua.intersection(ub).area
        got = float(both.area.sum())
        c.g.add(
            "overlap pieces carry both ids",
            _close(got, inter, tol * 2),
            f"{got / 1e4:.2f} ha with both ids, overlap {inter / 1e4:.2f} ha",
        )


def check_join_attr(c: Ctx) -> None:
    pts = _metric(c.src(), c.metric)
    key = c.grade["key"]
    polys = _metric(c.src(c.grade["polygons"]), c.metric)
    c.count(len(pts))
    out = c.keyed_out(key)
    if out is None:
        return
    pts["_key"] = pts[key].astype(str).str.strip()
    c.key_set(out, set(pts["_key"]))
    for out_col, poly_col in c.grade["attrs"].items():
        col = _find_col(out, out_col)
        if col is None:
            c.g.add(f"column {out_col}", False, "missing")
            continue
        exp = {}
        for k, p in zip(pts["_key"], pts.geometry, strict=True):
            hit = polys[polys.intersects(p)]
            exp[k] = hit.iloc[0][poly_col] if len(hit) else None
        wrong = [k for k, v in zip(out["_key"], out[col], strict=True) if k in exp and not _same_value(v, exp[k])]
        c.g.add(f"values of {out_col}", not wrong, f"wrong for {wrong[:6]}" if wrong else "right for every feature")


def check_count_points(c: Ctx) -> None:
    ref = c.grade["polygons"]
    polys = _metric(c.src(ref), c.metric)
    pts = _metric(c.src(c.grade["points"]), c.metric)
    key, col_name = ref["key"], c.grade["col"]
    c.count(len(polys))
    out = c.keyed_out(key)
    if out is None:
        return
    polys["_key"] = polys[key].astype(str).str.strip()
    c.key_set(out, set(polys["_key"]))
    col = _find_col(out, col_name)
    if not c.g.add(f"column {col_name}", col is not None, "the count column"):
        return
    exp = {k: int(pts.intersects(g).sum()) for k, g in zip(polys["_key"], polys.geometry, strict=True)}
    wrong = [
        f"{k}: {v} not {exp[k]}"
        for k, v in zip(out["_key"], out[col], strict=True)
        if k in exp and not _same_value(0 if _is_null(v) else v, exp[k])
    ]
    c.g.add("counts", not wrong, "; ".join(wrong[:6]) if wrong else f"expected {exp}")


def check_group_stats(c: Ctx) -> None:
    src = c.src()
    by, fld = c.grade["by"], c.grade["field"]
    vals = pd.to_numeric(src[fld], errors="coerce")
    grouped = vals.groupby(src[by].astype(str).str.strip())
    c.count(grouped.ngroups)
    out = c.keyed_out(by)
    if out is None:
        return
    c.key_set(out, set(grouped.groups))
    rel = float(c.grade.get("rel_tol", 0.005))
    for col_name, stat in c.grade["stats"].items():
        col = _find_col(out, col_name)
        if col is None:
            c.g.add(f"column {col_name}", False, "missing")
            continue
        exp = grouped.agg(stat)
        wrong = []
        for k, v in zip(out["_key"], pd.to_numeric(out[col], errors="coerce"), strict=True):
            if k in exp.index and not _close(float(v), float(exp[k]), rel, 0.01):
                wrong.append(f"{k}: {v} not {exp[k]:.2f}")
        c.g.add(f"{stat} of {fld} ({col_name})", not wrong, "; ".join(wrong[:4]) if wrong else f"within {rel:.1%}")


def _filtered(c: Ctx) -> gpd.GeoDataFrame:
    src = c.src()
    where = c.grade.get("where")
    if where:
        src = src.query(where, engine="python")
    if c.grade.get("within"):
        area = unary_union(list(_metric(c.src(c.grade["within"]), c.metric).geometry))
        src = src[_metric(src, c.metric).intersects(area).values]
    return src


def check_buffer(c: Ctx) -> None:
    src = _metric(_filtered(c), c.metric)
    dist, tol = float(c.grade["distance"]), float(c.grade.get("area_tol", 0.03))
    geo = c.geo_out()
    if geo is None:
        return
    types = set(geo.geom_type.dropna())
    c.g.add("polygons", types <= {"Polygon", "MultiPolygon"}, f"types {sorted(types)}")
    if c.grade.get("dissolve"):
        c.count(1)
        expected = unary_union(list(shapely.buffer(np.asarray(src.geometry.values), dist, quad_segs=16)))
        got = unary_union(list(geo.geometry))
        c.g.add(
            "area",
            _close(got.area, expected.area, tol),
            f"{got.area / 1e4:.1f} ha, expected {expected.area / 1e4:.1f} ha",
        )
        diff = got.symmetric_difference(expected).area
        c.g.add("shape", diff <= tol * expected.area, f"{diff / expected.area:.1%} of the area differs")
        return
    key = c.grade["key"]
    c.count(len(src))
    out = c.keyed_out(key)
    if out is None:
        return
    src["_key"] = src[key].astype(str).str.strip()
    c.key_set(out, set(src["_key"]))
    exp = {k: g.buffer(dist, quad_segs=16) for k, g in zip(src["_key"], src.geometry, strict=True)}
    bad = [
        k
        for k, g in zip(out["_key"], geo.geometry, strict=True)
        if k not in exp or not _close(g.area, exp[k].area, tol)
    ]
    c.g.add("area of each buffer", not bad, f"off for {bad[:6]}" if bad else f"within {tol:.0%} of a {dist:g} m buffer")
    shifted = [
        k
        for k, g in zip(out["_key"], geo.geometry, strict=True)
        if k in exp and g.symmetric_difference(exp[k]).area > tol * exp[k].area * 2
    ]
    c.g.add("each buffer around its feature", not shifted, f"misplaced: {shifted[:6]}" if shifted else "in place")


def check_subset(c: Ctx) -> None:
    exp = _filtered(c)
    key = c.grade["key"]
    c.count(len(exp))
    out = c.keyed_out(key)
    if out is None:
        return
    c.key_set(out, set(exp[key].astype(str).str.strip()))
    if isinstance(c.out, gpd.GeoDataFrame):
        geo = _metric(c.out, c.metric)
        m = _metric(exp, c.metric)
        where = dict(zip(m[key].astype(str).str.strip(), m.geometry, strict=True))
        moved = [
            k
            for k, g in zip(out["_key"], geo.geometry, strict=True)
            if k in where and (g is None or g.distance(where[k]) > 1.0)
        ]
        c.g.add("geometry kept", not moved, f"moved: {moved[:6]}" if moved else "in place")


def check_nearest(c: Ctx) -> None:
    src = _metric(c.src(), c.metric)
    tgt = _metric(c.src(c.grade["targets"]), c.metric)
    key, tkey = c.grade["key"], c.grade["target_key"]
    c.count(len(src))
    out = c.keyed_out(key)
    if out is None:
        return
    src["_key"] = src[key].astype(str).str.strip()
    c.key_set(out, set(src["_key"]))
    id_col, dist_col = _find_col(out, c.grade["id_col"]), _find_col(out, c.grade["dist_col"])
    exp = {}
    for k, p in zip(src["_key"], src.geometry, strict=True):
        d = tgt.distance(p)
        exp[k] = ({str(t).strip() for t in tgt.loc[d <= d.min() + 1.0, tkey]}, float(d.min()))
    if c.g.add(f"column {c.grade['id_col']}", id_col is not None, "the nearest feature's id"):
        wrong = [
            k for k, v in zip(out["_key"], out[id_col], strict=True) if k in exp and str(v).strip() not in exp[k][0]
        ]
        c.g.add("nearest feature", not wrong, f"wrong for {wrong[:6]}" if wrong else "right for every feature")
    if c.g.add(f"column {c.grade['dist_col']}", dist_col is not None, "the distance"):
        unit = UNITS[c.grade.get("unit", "m")]
        rel, abs_tol = float(c.grade.get("rel_tol", 0.01)), float(c.grade.get("abs_tol_m", 2.0))
        wrong = []
        for k, v in zip(out["_key"], pd.to_numeric(out[dist_col], errors="coerce"), strict=True):
            if k in exp and not _close(float(v) * unit, exp[k][1], rel, abs_tol):
                wrong.append(f"{k}: {v} not {exp[k][1] / unit:.1f}")
        c.g.add("distances", not wrong, "; ".join(wrong[:4]) if wrong else f"within {rel:.0%} or {abs_tol:g} m")


def check_clip(c: Ctx) -> None:
    src = _metric(c.src(), c.metric)
    boundary = unary_union(list(_metric(c.src(c.grade["boundary"]), c.metric).geometry))
    key, tol = c.grade["key"], float(c.grade.get("len_tol", 0.01))
    clipped = src.assign(geometry=src.geometry.intersection(boundary))
    clipped = clipped[~clipped.is_empty & (clipped.length > 0)]
    geo = c.geo_out()
    out = c.keyed_out(key)
    if geo is None or out is None:
        return
    clipped["_key"] = clipped[key].astype(str).str.strip()
    c.g.add(
        "features kept",
        set(out["_key"]) == set(clipped["_key"]),
        f"{out['_key'].nunique()} ids, expected {clipped['_key'].nunique()}",
    )
    total, exp_total = float(geo.length.sum()), float(clipped.length.sum())
    c.g.add("total length", _close(total, exp_total, tol), f"{total / 1000:.3f} km, expected {exp_total / 1000:.3f} km")
    outside = float(geo.geometry.difference(boundary.buffer(1.0)).length.sum())
    c.g.add("nothing outside the boundary", outside <= 1.0, f"{outside:.1f} m outside")
    got = geo.length.groupby(out["_key"].values).sum()
    bad = [
        k
        for k, ln in zip(clipped["_key"], clipped.length, strict=True)
        if not _close(float(got.get(k, 0.0)), ln, tol * 2, 1.0)
    ]
    c.g.add("length per feature", not bad, f"off for {bad[:6]}" if bad else "right")


def check_coerce(c: Ctx) -> None:
    src = c.src()
    key, col_name = c.grade["key"], c.grade["col"]
    c.count(len(src))
    out = c.keyed_out(key)
    if out is None:
        return
    src["_key"] = src[key].astype(str).str.strip()
    c.key_set(out, set(src["_key"]))
    col = _find_col(out, col_name)
    if not c.g.add(f"column {col_name}", col is not None, "kept under its name"):
        return
    c.g.add("integer type", pd.api.types.is_integer_dtype(out[col]), f"stored as {out[col].dtype}")
    exp = {k: int(str(v).strip()) for k, v in zip(src["_key"], src[col_name], strict=True)}
    wrong = [k for k, v in zip(out["_key"], out[col], strict=True) if k in exp and not _same_value(v, exp[k])]
    c.g.add("values", not wrong, f"wrong for {wrong[:6]}" if wrong else "every value kept")


def _measure(c: Ctx, gdf: gpd.GeoDataFrame) -> pd.Series:
    ll = gdf.to_crs(WGS84)
    fn: Callable[[shapely.Geometry], float] = geodesic_area if c.grade["quantity"] == "area" else geodesic_length
    return pd.Series([fn(g) for g in ll.geometry], index=gdf.index)


def check_measure(c: Ctx) -> None:
    src = c.src()
    key, col_name = c.grade["key"], c.grade["col"]
    unit, rel = UNITS[c.grade["unit"]], float(c.grade.get("rel_tol", 0.005))
    exp_all = dict(zip(src[key].astype(str).str.strip(), _measure(c, src) / unit, strict=True))
    n = c.grade.get("top")
    if n:
        ranked = sorted(exp_all, key=lambda k: exp_all[k], reverse=True)
        exp_all = {k: exp_all[k] for k in ranked[: int(n)]}
    c.count(len(exp_all))
    out = c.keyed_out(key)
    if out is None:
        return
    c.key_set(out, set(exp_all))
    col = _find_col(out, col_name)
    if not c.g.add(f"column {col_name}", col is not None, f"the {c.grade['quantity']} in {c.grade['unit']}"):
        return
    wrong = []
    for k, v in zip(out["_key"], pd.to_numeric(out[col], errors="coerce"), strict=True):
        if k in exp_all and not _close(float(v), exp_all[k], rel):
            wrong.append(f"{k}: {v} not {exp_all[k]:.3f}")
    c.g.add(
        f"{c.grade['quantity']} values", not wrong, "; ".join(wrong[:4]) if wrong else f"within {rel:.1%} of geodesic"
    )


CHECKS: dict[str, Callable[[Ctx], None]] = {
    "same_features": check_same_features,
    "latlon_table": check_latlon_table,
    "repair": check_repair,
    "dedupe": check_dedupe,
    "snap_points": check_snap_points,
    "snap_vertices": check_snap_vertices,
    "overlay": check_overlay,
    "join_attr": check_join_attr,
    "count_points": check_count_points,
    "group_stats": check_group_stats,
    "buffer": check_buffer,
    "subset": check_subset,
    "nearest": check_nearest,
    "clip": check_clip,
    "coerce": check_coerce,
    "measure": check_measure,
}


# ------------------------------------------------------------------------------------------- grading
def grade_output(task: dict, spec: dict, inputs_dir: Path, out_dir: Path) -> OutputGrade:
    g = OutputGrade(spec["name"])
    path = Path(out_dir) / spec["name"]
    if not g.add("exists", path.is_file(), str(path.name)):
        g.fatal = True
        return g
    fmt = str(spec["format"])
    ok, why = format_ok(path, fmt)
    g.add(f"format {fmt}", ok, why)
    try:
        out = read_output(path, fmt, spec)
    except Exception as exc:  # any failure to open is the finding
        g.add("opens", False, f"{type(exc).__name__}: {exc}")
        g.fatal = True
        return g
    g.add("opens", True, f"{len(out)} rows")
    grade = dict(task.get("grade") or {})
    is_geo = isinstance(out, gpd.GeoDataFrame)
    want_crs = spec.get("crs") or grade.get("expect_crs")
    if want_crs:
        got = out.crs if is_geo else None
        g.add(
            "CRS",
            is_geo and _crs_matches(got, want_crs),
            f"{got.to_string() if got is not None else 'none'}, expected {want_crs}",
        )
    elif spec.get("geometry_type"):
        g.add("CRS declared", is_geo and out.crs is not None, "the file says its CRS")
    if spec.get("geometry_type"):
        want = spec["geometry_type"]
        types = sorted({_base_type(t) for t in out.geom_type.dropna()}) if is_geo else []
        g.add("geometry type", types == [want], f"{types or 'no geometry'}, expected {want}")
    cols = list(spec.get("columns") or [])
    if cols:
        found = [_find_col(out, c) for c in cols]
        missing = [c for c, f in zip(cols, found, strict=True) if f is None]
        g.add("columns present", not missing, f"missing {missing}" if missing else "all listed columns")
        attrs = [c for c in out.columns if c != "geometry"]
        g.add(
            "columns first, in order",
            not missing and attrs[: len(cols)] == found,
            f"starts with {attrs[: len(cols) + 1]}",
        )
    if len(out) == 0:
        g.add("not empty", False, "no rows")
        return g
    kind = grade.get("kind")
    if kind:
        try:
            CHECKS[kind](Ctx(Path(inputs_dir), grade, spec, out, g))
        except Exception as exc:  # a check that cannot run on this output fails it
            g.add(f"{kind} check", False, f"could not be checked: {type(exc).__name__}: {exc}")
    return g


def grade_task(task: dict, inputs_dir: Path, out_dir: Path) -> dict:
    """Score every requested output of ``task``; the task's score is their mean."""
    outputs = [grade_output(task, spec, inputs_dir, out_dir) for spec in task["outputs"]]
    score = float(np.mean([o.score for o in outputs])) if outputs else 0.0
    return {
        "task": task["id"],
        "score": round(score, 4),
        "outputs": [o.as_dict() for o in outputs],
        "reasons": [f"{o.name}: {r}" for o in outputs for r in o.as_dict()["reasons"]],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", required=True)
    parser.add_argument("--inputs", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    task = next(t for t in load_tasks() if t["id"] == args.task)
    print(json.dumps(grade_task(task, args.inputs, args.out), indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
