"""Batch suite: everyday GIS tasks on messy files, each an instruction + input files -> requested output files,
in the style of public GIS agent benchmarks, graded by independent code.

Every task's inputs are generated here in a temporary folder (a CSV with a ``wkt_geom`` column, lon/lat under odd
names in a semicolon CSV, a KML with ExtendedData and dates, a Latin-1 shapefile with cut field names, a GeoPackage
with three layers in three CRSs, bow-tie polygons, duplicate points, polygons across the antimeridian, a mixed
geometry GeoJSON) or copied from the sample data (``../shared/data``). Each runs through :func:`bench.batch.run_batch`
like a user's batch, and each requested output is graded by code that never calls the product: geometries compared
within a tolerance after reprojecting both sides with pyproj, CRS equality, columns, counts, and values computed
with ``pyproj.Geod`` and shapely directly.

An output is then one of:

- ``correct``: written, the run's own check passed, and the grader agrees;
- ``not written``: the run wrote no file and said why (reported);
- ``reported wrong``: written, but the run's own check failed and said so;
- ``SILENTLY WRONG``: written, the run said it was fine, and the grader disagrees. There must be none.

::

    python -m bench batch-suite [--model scripted|embedded] [--tasks IDS] [--out DIR] [--set tasks|paraphrases]

``--set paraphrases`` runs the same tasks with their instructions said otherwise (``bench/batch_paraphrases.py``).
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
import shapely.ops
from pyproj import CRS, Geod, Transformer
from shapely.geometry import LineString, Point, Polygon, box

from .batch import OutputSpec, run_batch

GEOD = Geod(ellps="WGS84")
SHARED_DATA = next(
    (p for p in (Path(__file__).resolve().parents[2] / "shared" / "data", Path("/work/shared/data")) if p.is_dir()),
    Path("/work/shared/data"),
)
VALENCIA = SHARED_DATA / "valencia-2024"

CORRECT, NOT_WRITTEN, REPORTED, SILENT = "correct", "not written", "reported wrong", "SILENTLY WRONG"


# ------------------------------------------------------------------------------------------- the data
def _to(src: int | str, dst: int | str) -> Callable[[shapely.Geometry], shapely.Geometry]:
    t = Transformer.from_crs(src, dst, always_xy=True)
    return lambda g: shapely.ops.transform(t.transform, g)


#: clinics: id, name ("" = none), beds, lon, lat; row 8 repeats row 2 exactly
CLINICS = [
    (1, "Centro de Salud Sol", 20, -3.7038, 40.4168),
    (2, "Clinica Norte", 35, -3.6900, 40.4700),
    (3, "", 12, -3.7200, 40.3900),
    (4, "Hospital Sur", 120, -3.6950, 40.3600),
    (5, "Consultorio Este", 8, -3.6200, 40.4300),
    (6, "", 15, -3.7500, 40.4400),
    (7, "Clinica Oeste", 40, -3.7800, 40.4100),
    (2, "Clinica Norte", 35, -3.6900, 40.4700),
]
SHELTERS = [
    ("Polideportivo Arganzuela", -3.7000, 40.4000, 300),
    ("Pabellón Vallecas", -3.6600, 40.3900, 450),
    ("Colegio Chamberí", -3.7050, 40.4350, 120),
    ("IFEMA Hall 9", -3.6150, 40.4650, 2000),
    ("Centro Cívico Latina", -3.7600, 40.4020, 180),
    ("Escuela Tetuán", -3.7010, 40.4600, 90),
]
#: field reports (KML): name, severity, reported (ISO), people, lon, lat
REPORTS = [
    ("Paiporta bridge", "high", "2024-10-30T08:15:00Z", 40, -0.4170, 39.4280),
    ("Catarroja market", "high", "2024-10-30T09:40:00Z", 25, -0.4030, 39.4030),
    ("Sedaví school", "low", "2024-10-31T11:00:00Z", 3, -0.3850, 39.4270),
    ("Alfafar depot", "medium", "2024-10-31T16:20:00Z", 12, -0.3900, 39.4180),
    ("Massanassa church", "low", "2024-11-01T10:05:00Z", 0, -0.3990, 39.4120),
]
#: villages (Latin-1 shapefile): name, population_total, population_male, lon, lat
VILLAGES = [
    ("Móstoles", 210_000, 102_000, -3.8650, 40.3220),
    ("Alcalá de Henares", 195_000, 95_000, -3.3640, 40.4820),
    ("Valdemoro", 78_000, 38_500, -3.6750, 40.1900),
    ("Chinchón", 5_400, 2_700, -3.4220, 40.1400),
    ("Patones", 530, 270, -3.4870, 40.8640),
    ("Buitrago del Lozoya", 2_050, 1_010, -3.6380, 40.9930),
]
DISTRICTS_25830 = {  # name, region -> polygon in ETRS89 / UTM 30N
    ("D1", "north"): box(430_000, 4_475_000, 435_000, 4_480_000),
    ("D2", "north"): Polygon([(435_000, 4_475_000), (440_000, 4_475_000), (440_000, 4_479_000), (437_500, 4_481_000),
                              (435_000, 4_480_000)]),
    ("D3", "south"): box(430_000, 4_470_000, 435_000, 4_475_000),
    ("D4", "south"): box(435_000, 4_470_000, 440_000, 4_475_000),
}  # fmt: skip
WELLS_25830 = [  # operator, x, y: 3 in D1, 1 in D2, 4 in D3, none in D4, 2 outside
    ("A", 431_000, 4_476_000), ("A", 432_500, 4_478_500), ("B", 434_000, 4_477_000), ("C", 438_000, 4_477_000),
    ("A", 431_500, 4_471_000), ("B", 432_000, 4_473_500), ("B", 433_500, 4_472_500), ("C", 434_500, 4_470_500),
    ("C", 445_000, 4_476_000), ("A", 425_000, 4_471_000),
]  # fmt: skip
RIVERS_25830 = [
    (
        "Manzanares",
        LineString([(428_000, 4_481_000), (433_000, 4_476_000), (436_000, 4_471_000), (437_000, 4_466_000)]),
    ),
    ("Arroyo Culebro", LineString([(426_000, 4_473_000), (434_000, 4_474_000), (442_000, 4_472_500)])),
]
BOUNDARY_25830 = box(432_000, 4_472_000, 438_000, 4_478_000)


def _bowtie(x: float, y: float, s: float) -> Polygon:
    return Polygon([(x, y), (x + s, y + s), (x + s, y), (x, y + s), (x, y)])


PARCELS_25830 = [  # landuse, polygon (two bow-ties: invalid)
    ("residential", box(725_000, 4_372_000, 725_400, 4_372_300)),
    ("residential", _bowtie(725_500, 4_372_000, 300)),
    ("farm", box(726_000, 4_372_000, 727_000, 4_372_800)),
    ("farm", _bowtie(727_200, 4_372_000, 600)),
    ("forest", Polygon([(725_000, 4_373_000), (726_500, 4_373_000), (726_000, 4_374_000)])),
]
#: sensors: id, reading, lon, lat; rows 3 and 6 repeat rows 1 and 2 exactly
SENSORS = [
    ("s1", 4.2, -0.410, 39.420),
    ("s2", 3.1, -0.405, 39.425),
    ("s1", 4.2, -0.410, 39.420),
    ("s3", 5.0, -0.400, 39.430),
    ("s4", 2.7, -0.395, 39.415),
    ("s2", 3.1, -0.405, 39.425),
    ("s5", 1.9, -0.390, 39.410),
]
#: reef zones across the antimeridian, written as field tools write them (179 -> -179)
REEFS = {
    "Ringgold": Polygon([(179.0, -17.0), (-179.0, -17.0), (-179.0, -16.0), (179.0, -16.0)]),
    "Vatoa": Polygon([(179.5, -18.5), (-179.5, -18.5), (-179.5, -18.0), (179.5, -18.0)]),
}
REEFS_UNWRAPPED = {k: shapely.transform(g, lambda xy: np.where(xy < 0, xy + [360, 0], xy)) for k, g in REEFS.items()}
STATIONS = [("Alert", -62.35, 82.50), ("Eureka", -85.94, 79.99), ("Thule", -68.70, 76.53), ("Nord", -16.67, 81.60)]
FLOOD_2023_25830 = box(724_000, 4_370_000, 727_000, 4_373_000)
FLOOD_2024_25830 = box(725_500, 4_371_000, 728_500, 4_374_500)


def _wgs84(geom: shapely.Geometry, crs: int = 25830) -> shapely.Geometry:
    return _to(crs, 4326)(geom)


def _write_kml(path: Path) -> None:
    marks = []
    for name, severity, reported, people, lon, lat in REPORTS:
        marks.append(
            f"<Placemark><name>{name}</name><ExtendedData>"
            f'<Data name="severity"><value>{severity}</value></Data>'
            f'<Data name="reported"><value>{reported}</value></Data>'
            f'<Data name="people"><value>{people}</value></Data>'
            f"</ExtendedData><Point><coordinates>{lon},{lat},0</coordinates></Point></Placemark>"
        )
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<kml xmlns="http://www.opengis.net/kml/2.2"><Document>'
        f"<name>field reports</name>{''.join(marks)}</Document></kml>\n",
        encoding="utf-8",
    )


def _make_inputs(pool: Path) -> None:
    """Every generated input file, once, in ``pool``."""
    lines = ["id,name,beds,wkt_geom"] + [f'{i},{n},{b},"POINT ({x} {y})"' for i, n, b, x, y in CLINICS]
    (pool / "clinics.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lines = ["Shelter Name;Lng (deg);Lat (deg);capacity"] + [f"{n};{x:.4f};{y:.4f};{c}" for n, x, y, c in SHELTERS]
    (pool / "shelters.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _write_kml(pool / "field_reports.kml")
    villages = gpd.GeoDataFrame(
        {"name": [v[0] for v in VILLAGES], "population_total": [v[1] for v in VILLAGES],
         "population_male": [v[2] for v in VILLAGES]},
        geometry=[Point(v[3], v[4]) for v in VILLAGES], crs=4326,
    )  # fmt: skip
    villages.to_file(pool / "villages.shp", engine="pyogrio", encoding="ISO-8859-1")  # names cut to 10 characters
    admin = pool / "admin.gpkg"
    gpd.GeoDataFrame(
        {"name": [k[0] for k in DISTRICTS_25830], "region": [k[1] for k in DISTRICTS_25830]},
        geometry=list(DISTRICTS_25830.values()), crs=25830,
    ).to_file(admin, layer="districts", engine="pyogrio")  # fmt: skip
    gpd.GeoDataFrame(
        {"name": [r[0] for r in RIVERS_25830]}, geometry=[_to(25830, 3857)(r[1]) for r in RIVERS_25830], crs=3857
    ).to_file(admin, layer="rivers", engine="pyogrio")
    gpd.GeoDataFrame(
        {"well_id": [f"W{i + 1:02d}" for i in range(len(WELLS_25830))], "operator": [w[0] for w in WELLS_25830]},
        geometry=[_wgs84(Point(w[1], w[2])) for w in WELLS_25830], crs=4326,
    ).to_file(admin, layer="wells", engine="pyogrio")  # fmt: skip
    gpd.GeoDataFrame({"name": ["study"]}, geometry=[_wgs84(BOUNDARY_25830)], crs=4326).to_file(
        pool / "study_boundary.geojson", engine="pyogrio"
    )
    gpd.GeoDataFrame(
        {"parcel": [f"P{i + 1}" for i in range(len(PARCELS_25830))], "landuse": [p[0] for p in PARCELS_25830]},
        geometry=[_wgs84(p[1]) for p in PARCELS_25830], crs=4326,
    ).to_file(pool / "parcels.geojson", engine="pyogrio")  # fmt: skip
    gpd.GeoDataFrame(
        {"sensor": [s[0] for s in SENSORS], "reading": [s[1] for s in SENSORS]},
        geometry=[Point(s[2], s[3]) for s in SENSORS], crs=4326,
    ).to_file(pool / "sensors.geojson", engine="pyogrio")  # fmt: skip
    reefs = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"zone": k}, "geometry": shapely.geometry.mapping(g)} for k, g in REEFS.items()
    ]}  # fmt: skip
    (pool / "reef_zones.geojson").write_text(json.dumps(reefs), encoding="utf-8")  # as written by a field tool
    gpd.GeoDataFrame(
        {"station": [s[0] for s in STATIONS]}, geometry=[Point(s[1], s[2]) for s in STATIONS], crs=4326
    ).to_file(pool / "arctic_stations.geojson", engine="pyogrio")
    mixed = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"kind": k}, "geometry": shapely.geometry.mapping(g)} for k, g in (
            ("gauge", Point(-0.40, 39.42)), ("gauge", Point(-0.41, 39.43)), ("pump", Point(-0.39, 39.41)),
            ("levee", LineString([(-0.42, 39.40), (-0.40, 39.41)])), ("road", LineString([(-0.39, 39.40), (-0.38, 39.42)])),
            ("pond", box(-0.415, 39.415, -0.412, 39.418)), ("basin", box(-0.395, 39.425, -0.390, 39.430)),
        )
    ]}  # fmt: skip
    (pool / "features.geojson").write_text(json.dumps(mixed), encoding="utf-8")
    for year, geom in ((2023, FLOOD_2023_25830), (2024, FLOOD_2024_25830)):
        gpd.GeoDataFrame({"year": [year]}, geometry=[_wgs84(geom)], crs=4326).to_file(
            pool / f"flood_{year}.geojson", engine="pyogrio"
        )
    for name in ("valencia_city_health_facilities.geojson", "emsr773_aoi03_extent.geojson"):
        if (VALENCIA / name).is_file():
            shutil.copyfile(VALENCIA / name, pool / name)


# ----------------------------------------------------------------------------------------- grading helpers
class Wrong(Exception):
    """What a grader found wrong with an output."""


def _read(path: Path) -> gpd.GeoDataFrame | pd.DataFrame:
    """An output as a GIS library reads it (geopandas / pandas; a CSV's WKT column parsed with shapely)."""
    if not path.exists():
        raise Wrong("no file")
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".geoparquet"):
        return gpd.read_parquet(path)
    if suffix == ".csv":
        table = pd.read_csv(path)
        for column in table.columns:
            values = table[column].dropna().astype(str)
            if len(values) and values.str.match(r"^\s*(MULTI)?(POINT|LINESTRING|POLYGON)").all():
                geoms = shapely.from_wkt(table[column].astype(str).to_numpy())
                return gpd.GeoDataFrame(table.drop(columns=[column]), geometry=geoms, crs=4326)
        return table
    cpg = path.with_suffix(".cpg")  # its codec said explicitly: a QGIS in the same process clears SHAPE_ENCODING
    if suffix == ".shp" and cpg.is_file():
        return gpd.read_file(path, encoding=cpg.read_text(encoding="ascii").strip())
    return gpd.read_file(path)


def _layer(path: Path) -> gpd.GeoDataFrame:
    got = _read(path)
    if not isinstance(got, gpd.GeoDataFrame):
        raise Wrong("no geometry")
    if got.crs is None:
        raise Wrong("no CRS")
    return got


def _expect(cond: bool, what: str) -> None:
    if not cond:
        raise Wrong(what)


def _crs_is(got: gpd.GeoDataFrame, code: int) -> None:
    _expect(
        CRS.from_user_input(got.crs).equals(CRS.from_epsg(code), ignore_axis_order=True),
        f"CRS {got.crs.to_string()} not EPSG:{code}",
    )


def _families(got: gpd.GeoDataFrame) -> set[str]:
    names = {"Point": "point", "LineString": "line", "Polygon": "polygon"}
    return {names[t.replace("Multi", "")] for t in got.geom_type.dropna()}


def _same_geometries(got: gpd.GeoDataFrame, expected: Sequence[shapely.Geometry], crs: int | str, tol: float) -> None:
    """The output's geometries, reprojected to ``crs`` with pyproj, match ``expected`` (any order) within ``tol``
    (Hausdorff distance, in the CRS's units)."""
    _expect(len(got) == len(expected), f"{len(got)} features instead of {len(expected)}")
    back = _to(got.crs.to_wkt(), crs)
    have = [back(g) for g in got.geometry]
    left = list(range(len(have)))
    for want in expected:
        match = next((i for i in left if have[i].hausdorff_distance(want) <= tol), None)
        _expect(match is not None, f"no output geometry within {tol:g} of {want.wkt[:60]}")
        left.remove(match)  # type: ignore[arg-type]


def _area_close(got: shapely.Geometry, want: shapely.Geometry, rel: float) -> None:
    diff = got.symmetric_difference(want).area
    _expect(diff <= rel * want.area, f"area differs by {diff / want.area:.1%} from the expected shape")


def _geodesic_km2(geom_lonlat: shapely.Geometry) -> float:
    return abs(GEOD.geometry_area_perimeter(geom_lonlat)[0]) / 1e6


def _numeric_column(table: pd.DataFrame, expected: Sequence[float], rel: float = 0.005, abs_tol: float = 1.0) -> str:
    """The column whose values match ``expected`` in the table's row order (within rel / abs), else Wrong."""
    for column in table.columns:
        values = pd.to_numeric(table[column], errors="coerce")
        if (
            values.notna().all()
            and len(values) == len(expected)
            and all(math.isclose(v, e, rel_tol=rel, abs_tol=abs_tol) for v, e in zip(values, expected, strict=True))
        ):
            return str(column)
    raise Wrong(f"no column with the expected values {[round(e, 3) for e in expected]}")


def _rows_by(table: pd.DataFrame, values: Sequence[str]) -> pd.DataFrame:
    """The table's rows in the order of ``values``, found in whichever column holds them all."""
    for column in table.columns:
        column_values = table[column].astype(str).tolist()
        if sorted(column_values) == sorted(values):
            return table.set_index(table[column].astype(str)).loc[list(values)].reset_index(drop=True)
    raise Wrong(f"no column holding exactly {sorted(values)}")


# -------------------------------------------------------------------------------------------------- tasks
Grader = Callable[[Path], None]


@dataclass
class Task:
    id: str
    operation: str
    instruction: str
    inputs: tuple[str, ...]
    outputs: list[dict[str, Any]]
    graders: dict[str, Grader]  # output name -> grader of that file (raises Wrong)
    notes: str = ""


def _clinic_points(rows: Sequence[tuple]) -> list[Point]:
    return [Point(r[3], r[4]) for r in rows]


def _g_reproject_clinics(path: Path) -> None:
    got = _layer(path)
    _crs_is(got, 25830)
    _same_geometries(got, [_to(4326, 25830)(p) for p in _clinic_points(CLINICS)], 25830, 0.01)


def _g_wells_utm(path: Path) -> None:
    got = _layer(path)
    zone = CRS.from_user_input(got.crs).utm_zone
    _expect(zone == "30N", f"CRS {got.crs.to_string()} is not UTM zone 30N")
    _same_geometries(got, [Point(w[1], w[2]) for w in WELLS_25830], 25830, 0.05)


def _g_equal_area(path: Path) -> None:
    got = _layer(path)
    crs = CRS.from_user_input(got.crs)
    method = crs.coordinate_operation.method_name.lower() if crs.coordinate_operation else ""
    _expect("equal area" in method, f"CRS {crs.name} is not an equal-area projection")
    _expect(len(got) == len(DISTRICTS_25830), f"{len(got)} districts")
    for geom in got.geometry:
        truth = _geodesic_km2(_to(crs.to_wkt(), 4326)(geom)) * 1e6
        _expect(math.isclose(geom.area, truth, rel_tol=1e-3), f"planar area {geom.area:.0f} m² != geodesic {truth:.0f}")


def _g_polar(path: Path) -> None:
    got = _layer(path)
    _crs_is(got, 3413)
    _same_geometries(got, [_to(4326, 3413)(Point(s[1], s[2])) for s in STATIONS], 3413, 0.01)


def _g_reefs_3832(path: Path) -> None:
    got = _layer(path)
    _crs_is(got, 3832)
    _expect(len(got) == len(REEFS), f"{len(got)} zones instead of {len(REEFS)}")
    _expect(bool(got.geometry.is_valid.all()), "invalid geometries (a ring round the globe?)")
    want = shapely.union_all([_to(4326, 3832)(g.segmentize(0.1)) for g in REEFS_UNWRAPPED.values()])
    _area_close(shapely.union_all(got.geometry.to_numpy()), want, 0.005)


def _g_repaired(path: Path) -> None:
    got = _layer(path)
    _expect(len(got) == len(PARCELS_25830), f"{len(got)} parcels instead of {len(PARCELS_25830)}")
    _expect(bool(got.geometry.is_valid.all()), "invalid geometries left")
    _expect(_families(got) == {"polygon"}, f"geometry {_families(got)}")
    want = shapely.union_all([shapely.make_valid(p) for _, p in PARCELS_25830])
    _area_close(shapely.union_all(got.to_crs(25830).geometry.to_numpy()), want, 0.005)


def _districts_by(key: int) -> dict[str, shapely.Geometry]:
    out: dict[str, list] = {}
    for k, g in DISTRICTS_25830.items():
        out.setdefault(k[key], []).append(g)
    return {k: shapely.union_all(v) for k, v in out.items()}


def _g_dissolve(path: Path) -> None:
    got = _layer(path).to_crs(25830)
    want = _districts_by(1)
    _expect(len(got) == len(want), f"{len(got)} features instead of {len(want)}")
    _rows_by(pd.DataFrame(got.drop(columns=got.geometry.name)), list(want))  # one feature per region
    for region, geom in want.items():
        col = next(c for c in got.columns if c != got.geometry.name and region in got[c].astype(str).tolist())
        _area_close(got[got[col].astype(str) == region].geometry.iloc[0], geom, 0.002)


def _parcel_km2_by_class() -> dict[str, float]:
    out: dict[str, float] = {}
    for landuse, geom in PARCELS_25830:
        out[landuse] = out.get(landuse, 0.0) + _geodesic_km2(_wgs84(shapely.make_valid(geom)))
    return out


def _g_area_per_class(path: Path) -> None:
    table = _read(path)
    want = _parcel_km2_by_class()
    rows = _rows_by(pd.DataFrame(table), list(want))
    _numeric_column(rows, list(want.values()), rel=0.005, abs_tol=1e-6)


def _g_centroids(path: Path) -> None:
    got = _layer(path)
    _expect(_families(got) == {"point"}, f"geometry {_families(got)}")
    _same_geometries(got, [g.centroid for g in DISTRICTS_25830.values()], 25830, 5.0)


def _g_hulls(path: Path) -> None:
    got = _layer(path).to_crs(25830)
    groups: dict[str, list[Point]] = {}
    for op, x, y in WELLS_25830:
        groups.setdefault(op, []).append(Point(x, y))
    _expect(len(got) == len(groups), f"{len(got)} hulls instead of {len(groups)}")
    for op, points in groups.items():
        col = next((c for c in got.columns if c != got.geometry.name and op in got[c].astype(str).tolist()), None)
        _expect(col is not None, f"no hull labelled {op}")
        mine = got[got[col].astype(str) == op].geometry.iloc[0]
        want = shapely.MultiPoint(points).convex_hull
        _expect(mine.hausdorff_distance(want) <= 5.0, f"hull of {op} off by {mine.hausdorff_distance(want):.0f} m")


def _g_symdiff(path: Path) -> None:
    got = _layer(path).to_crs(25830)
    _area_close(
        shapely.union_all(got.geometry.to_numpy()), FLOOD_2023_25830.symmetric_difference(FLOOD_2024_25830), 0.002
    )


def _g_named_clinics(path: Path) -> None:
    got = _layer(path)
    named = [r for r in CLINICS if r[1]]
    _same_geometries(got, _clinic_points(named), 4326, 1e-6)
    _expect(sorted(got["name"].astype(str)) == sorted(r[1] for r in named), "names differ")


def _g_dedupe(path: Path) -> None:
    got = _layer(path)
    unique = list(dict.fromkeys(SENSORS))
    _same_geometries(got, [Point(s[2], s[3]) for s in unique], 4326, 1e-7)


def _g_split(family: str, count: int) -> Grader:
    def grade(path: Path) -> None:
        got = _layer(path)
        _expect(_families(got) == {family}, f"geometry {_families(got)} instead of {family}")
        _expect(len(got) == count, f"{len(got)} features instead of {count}")

    return grade


def _g_wells_per_district(path: Path) -> None:
    got = _layer(path)
    names = [k[0] for k in DISTRICTS_25830]
    expected = [sum(g.covers(Point(x, y)) for _, x, y in WELLS_25830) for g in DISTRICTS_25830.values()]
    _expect(len(got) == len(names), f"{len(got)} districts")
    rows = _rows_by(pd.DataFrame(got.drop(columns=got.geometry.name)), names)
    _numeric_column(rows, expected, rel=0, abs_tol=0)


def _g_k_nearest(path: Path) -> None:
    table = _read(path)
    want = []
    for _, sx, sy, _ in SHELTERS:
        dists = sorted(GEOD.inv(sx, sy, c[3], c[4])[2] for c in CLINICS)
        want += dists[:2]
    got = pd.DataFrame(table)
    _expect(len(got) == len(want), f"{len(got)} pairs instead of {len(want)}")
    for column in got.columns:
        values = pd.to_numeric(got[column], errors="coerce")
        if values.notna().all() and np.allclose(sorted(values), sorted(want), atol=2.0):
            return
    raise Wrong("no column with the geodesic distances of the 2 nearest clinics to each shelter")


def _g_buffer(path: Path) -> None:
    got = _layer(path).to_crs(25830)
    _expect(_families(got) == {"polygon"}, f"geometry {_families(got)}")
    want = shapely.union_all([r[1].buffer(500) for r in RIVERS_25830])
    _area_close(shapely.union_all(got.geometry.to_numpy()), want, 0.02)


def _g_clip(path: Path) -> None:
    got = _layer(path).to_crs(25830)
    _expect(_families(got) == {"line"}, f"geometry {_families(got)}")
    want = sum(r[1].intersection(BOUNDARY_25830).length for r in RIVERS_25830)
    have = float(got.geometry.length.sum())
    _expect(math.isclose(have, want, rel_tol=0.01), f"{have:.0f} m of river instead of {want:.0f}")
    _expect(bool(got.geometry.within(BOUNDARY_25830.buffer(1)).all()), "lines outside the boundary")


def _g_big_villages(path: Path) -> None:
    got = _layer(path)
    want = sorted(v[0] for v in VILLAGES if v[1] > 5000)
    _expect(sorted(got["name"].astype(str)) == want, f"villages {sorted(got['name'].astype(str))} instead of {want}")


def _g_high_reports(path: Path) -> None:
    got = _layer(path)
    want = sorted(r[0] for r in REPORTS if r[1] == "high")
    column = next((c for c in got.columns if str(c).lower() == "name"), None)  # KML's own field is "Name"
    _expect(column is not None, f"no name column in {list(got.columns)}")
    names = sorted(got[column].astype(str))
    _expect(names == want, f"reports {names} instead of {want}")


def _g_shelters_gpkg(path: Path) -> None:
    got = _layer(path)
    _crs_is(got, 4326)
    _same_geometries(got, [Point(s[1], s[2]) for s in SHELTERS], 4326, 1e-6)
    _expect(pd.api.types.is_integer_dtype(got["capacity"]), f"capacity is {got['capacity'].dtype}, not integers")


def _g_reports_geojson(path: Path) -> None:
    got = _layer(path)
    _same_geometries(got, [Point(r[4], r[5]) for r in REPORTS], 4326, 1e-6)
    for column in ("severity", "reported", "people"):
        _expect(column in got.columns, f"no column {column} (the KML's ExtendedData)")
    dates = pd.to_datetime(got["reported"], utc=True).sort_values().dt.strftime("%Y-%m-%dT%H:%M:%SZ").tolist()
    _expect(dates == sorted(r[2] for r in REPORTS), "report dates differ")


def _g_villages_parquet(path: Path) -> None:
    got = _layer(path)
    _crs_is(got, 4326)
    _expect(sorted(got["name"]) == sorted(v[0] for v in VILLAGES), f"names {sorted(got['name'])} (encoding?)")


def _g_villages_full_names(path: Path) -> None:
    got = _layer(path)
    for column in ("population_total", "population_male"):
        _expect(column in got.columns, f"no column {column}")
    rows = _rows_by(pd.DataFrame(got.drop(columns=got.geometry.name)), [v[0] for v in VILLAGES])
    _expect(rows["population_male"].tolist() == [v[2] for v in VILLAGES], "population_male values differ")


def _g_manifest(path: Path) -> None:
    table = pd.DataFrame(_read(path))
    want = {"districts": ("25830", 4), "rivers": ("3857", 2), "wells": ("4326", len(WELLS_25830))}
    _expect(len(table) == len(want), f"{len(table)} rows instead of {len(want)}")
    for layer, (code, count) in want.items():
        row = next((r for r in table.astype(str).itertuples(index=False) if layer in r), None)
        _expect(row is not None, f"no row for layer {layer}")
        text = " ".join(row)  # type: ignore[arg-type]
        _expect(code in text, f"layer {layer}: no EPSG:{code} in its row")
        _expect(str(count) in row, f"layer {layer}: no count {count} in its row")  # type: ignore[operator]


def _g_district_km2(path: Path) -> None:
    table = _read(path)
    names = [k[0] for k in DISTRICTS_25830]
    rows = _rows_by(pd.DataFrame(table), names)
    _numeric_column(rows, [_geodesic_km2(_wgs84(g)) for g in DISTRICTS_25830.values()], rel=0.005)


def _g_coverage(path: Path) -> None:
    got = _layer(path).to_crs(25830)
    want = shapely.union_all([_to(4326, 25830)(p).buffer(1000) for p in _clinic_points(CLINICS)])
    have = shapely.union_all(got.geometry.to_numpy())
    _area_close(have, want, 0.02)
    _expect(len(got) == len(getattr(want, "geoms", [want])), f"{len(got)} polygons: overlapping buffers not merged")


def _g_reports_3857(path: Path) -> None:
    got = _layer(path)
    _crs_is(got, 3857)
    _same_geometries(got, [_to(4326, 3857)(Point(r[4], r[5])) for r in REPORTS], 3857, 0.01)


def _g_landuse_km2(path: Path) -> None:
    got = _layer(path)
    want = _parcel_km2_by_class()
    _expect(bool(got.geometry.is_valid.all()), "invalid geometries")
    rows = _rows_by(pd.DataFrame(got.drop(columns=got.geometry.name)), list(want))
    _numeric_column(rows, list(want.values()), rel=0.005, abs_tol=1e-6)


def _g_reef_centroids(path: Path) -> None:
    got = _layer(path).to_crs(4326)
    want = [_to(3832, 4326)(_to(4326, 3832)(g).centroid) for g in REEFS_UNWRAPPED.values()]
    _expect(len(got) == len(want), f"{len(got)} centroids")
    for w in want:
        dist = min(GEOD.inv(w.x, w.y, g.x, g.y)[2] for g in got.geometry)
        _expect(dist < 1000, f"no centroid within 1 km of ({w.x:.2f}, {w.y:.2f}): across the antimeridian?")


def _g_nearest_well(path: Path) -> None:
    table = pd.DataFrame(_read(path))
    wells = [_wgs84(Point(x, y)) for _, x, y in WELLS_25830]
    want = [min(GEOD.inv(v[3], v[4], w.x, w.y)[2] for w in wells) for v in VILLAGES]
    _expect(len(table) == len(want), f"{len(table)} rows instead of {len(want)}")
    for column in table.columns:
        values = pd.to_numeric(table[column], errors="coerce")
        if values.notna().all() and np.allclose(sorted(values), sorted(want), atol=2.0):
            return
    raise Wrong("no column with each village's geodesic distance to its nearest well")


def _g_clean_clinics(path: Path) -> None:
    got = _layer(path)
    _crs_is(got, 25830)
    named = list(dict.fromkeys(r for r in CLINICS if r[1]))
    _same_geometries(got, [_to(4326, 25830)(p) for p in _clinic_points(named)], 25830, 0.01)


def _g_facilities_in_aoi(path: Path) -> None:
    got = _layer(path)
    facilities = gpd.read_file(VALENCIA / "valencia_city_health_facilities.geojson")
    aoi = shapely.union_all(gpd.read_file(VALENCIA / "emsr773_aoi03_extent.geojson").geometry.to_numpy())
    inside = facilities[facilities.geometry.within(aoi)]
    _same_geometries(got, list(inside.geometry), 4326, 1e-6)


def _g_facilities_shp(path: Path) -> None:
    got = _layer(path)
    facilities = gpd.read_file(VALENCIA / "valencia_city_health_facilities.geojson")
    _crs_is(got, 4326)
    _same_geometries(got, list(facilities.geometry), 4326, 1e-6)
    for column in ("equipamien", "telefono"):  # names within the DBF's 10 characters, values kept
        _expect(column in got.columns, f"no column {column}")
    differ = [
        (a, b) for a, b in zip(sorted(got["equipamien"]), sorted(facilities["equipamien"]), strict=True) if a != b
    ]
    _expect(not differ, f"facility names differ ({len(differ)}, e.g. {differ[:2]})")
    phones = np.sort(got["telefono"].dropna().to_numpy(float)), np.sort(facilities["telefono"].dropna().to_numpy(float))
    _expect(len(phones[0]) == len(phones[1]) and np.allclose(*phones), "telephone numbers lost or changed")


def _out(name: str, **spec: Any) -> dict[str, Any]:
    return {"name": name, **spec}


TASKS: list[Task] = [
    Task("reproject_epsg", "reproject (EPSG code)", "Reproject the clinics to EPSG:25830 and save them as a GeoPackage.",
         ("clinics.csv",), [_out("clinics_25830.gpkg", crs="EPSG:25830", geometry_type="Point")],
         {"clinics_25830.gpkg": _g_reproject_clinics}),
    Task("reproject_utm", "reproject (UTM)", "Put the wells into their UTM zone.",
         ("admin.gpkg",), [_out("wells_utm.gpkg", geometry_type="Point")], {"wells_utm.gpkg": _g_wells_utm}),
    Task("reproject_equal_area", "reproject (equal-area)",
         "I need the districts in an equal-area projection so the areas are right.",
         ("admin.gpkg",), [_out("districts_ea.gpkg", geometry_type="Polygon")], {"districts_ea.gpkg": _g_equal_area}),
    Task("reproject_polar", "reproject (polar)", "Reproject the arctic stations to NSIDC polar stereographic north.",
         ("arctic_stations.geojson",), [_out("stations_polar.gpkg", crs="EPSG:3413")], {"stations_polar.gpkg": _g_polar}),
    Task("reproject_antimeridian", "reproject (antimeridian)",
         "Project the reef zones to PDC Mercator (EPSG:3832) for the Pacific map.",
         ("reef_zones.geojson",), [_out("reefs_3832.gpkg", crs="EPSG:3832")], {"reefs_3832.gpkg": _g_reefs_3832}),
    Task("repair", "repair geometries", "Some parcels have self-intersecting outlines. Fix the geometries.",
         ("parcels.geojson",), [_out("parcels_fixed.gpkg", geometry_type="Polygon")], {"parcels_fixed.gpkg": _g_repaired}),
    Task("dissolve", "dissolve by field", "Dissolve the districts by region.",
         ("admin.gpkg",), [_out("regions.gpkg", geometry_type="Polygon")], {"regions.gpkg": _g_dissolve}),
    Task("area_per_class", "area in km² per class", "What is the total area in km² of each land use in the parcels?",
         ("parcels.geojson",), [_out("landuse_area.csv", format="CSV")], {"landuse_area.csv": _g_area_per_class}),
    Task("centroids", "centroids", "Give me the centroid of every district.",
         ("admin.gpkg",), [_out("district_centroids.geojson", geometry_type="Point")],
         {"district_centroids.geojson": _g_centroids}),
    Task("hull_per_group", "convex hull per group", "Draw a convex hull around the wells of each operator.",
         ("admin.gpkg",), [_out("operator_hulls.gpkg", geometry_type="Polygon")], {"operator_hulls.gpkg": _g_hulls}),
    Task("symmetric_difference", "symmetric difference",
         "Which areas were flooded in 2023 or in 2024 but not in both years?",
         ("flood_2023.geojson", "flood_2024.geojson"), [_out("flood_change.gpkg", geometry_type="Polygon")],
         {"flood_change.gpkg": _g_symdiff}),
    Task("drop_nulls", "drop nulls", "Drop the clinics that have no name and keep the rest as CSV.",
         ("clinics.csv",), [_out("clinics_named.csv", geometry_type="Point", columns=["name", "beds"])],
         {"clinics_named.csv": _g_named_clinics}),
    Task("dedupe", "de-duplicate", "The sensor file has duplicated readings; remove the duplicates.",
         ("sensors.geojson",), [_out("sensors_unique.geojson", geometry_type="Point")],
         {"sensors_unique.geojson": _g_dedupe}),
    Task("split_geometry_types", "split mixed geometry types",
         "Split the features file into one layer of points, one of lines and one of polygons.",
         ("features.geojson",),
         [_out("features_points.gpkg", geometry_type="Point"), _out("features_lines.gpkg", geometry_type="LineString"),
          _out("features_polygons.gpkg", geometry_type="Polygon")],
         {"features_points.gpkg": _g_split("point", 3), "features_lines.gpkg": _g_split("line", 2),
          "features_polygons.gpkg": _g_split("polygon", 2)}),
    Task("points_per_polygon", "per-polygon point counts", "How many wells are there in each district?",
         ("admin.gpkg",), [_out("wells_per_district.gpkg", geometry_type="Polygon")],
         {"wells_per_district.gpkg": _g_wells_per_district}),
    Task("k_nearest", "k nearest with distances",
         "For each shelter, find the 2 nearest clinics and the distance to each in metres.",
         ("shelters.csv", "clinics.csv"), [_out("shelter_nearest_clinics.csv", format="CSV", columns=["distance_m"])],
         {"shelter_nearest_clinics.csv": _g_k_nearest}),
    Task("buffer", "buffer", "Buffer the rivers by 500 m.",
         ("admin.gpkg",), [_out("river_buffers.gpkg", geometry_type="Polygon")], {"river_buffers.gpkg": _g_buffer}),
    Task("clip", "clip to a boundary file", "Clip the rivers to the boundary file.",
         ("admin.gpkg", "study_boundary.geojson"), [_out("rivers_clipped.gpkg", geometry_type="LineString")],
         {"rivers_clipped.gpkg": _g_clip}),
    Task("filter_attribute", "filter by attribute", "Keep only the villages with more than 5000 inhabitants.",
         ("villages.shp", "villages.shx", "villages.dbf", "villages.prj", "villages.cpg"),
         [_out("big_villages.gpkg", geometry_type="Point")], {"big_villages.gpkg": _g_big_villages}),
    Task("filter_kml", "filter by attribute (KML)", "Select the field reports whose severity is high.",
         ("field_reports.kml",), [_out("high_severity.geojson", geometry_type="Point")],
         {"high_severity.geojson": _g_high_reports}),
    Task("csv_to_gpkg", "convert CSV -> GeoPackage", "Convert the shelters CSV to a GeoPackage.",
         ("shelters.csv",), [_out("shelters.gpkg", geometry_type="Point")], {"shelters.gpkg": _g_shelters_gpkg}),
    Task("kml_to_geojson", "convert KML -> GeoJSON", "Convert the field reports KML to GeoJSON.",
         ("field_reports.kml",), [_out("field_reports.geojson")], {"field_reports.geojson": _g_reports_geojson}),
    Task("shp_to_parquet", "convert SHP -> GeoParquet", "Convert the villages shapefile to GeoParquet.",
         ("villages.shp", "villages.shx", "villages.dbf", "villages.prj", "villages.cpg"),
         [_out("villages.parquet", format="GeoParquet")], {"villages.parquet": _g_villages_parquet}),
    Task("shp_full_field_names", "recover truncated field names",
         "Export the villages to a GeoPackage with their full field names population_total and population_male.",
         ("villages.shp", "villages.shx", "villages.dbf", "villages.prj", "villages.cpg"),
         [_out("villages_full.gpkg", columns=["name", "population_total", "population_male"])],
         {"villages_full.gpkg": _g_villages_full_names}),
    Task("manifest", "manifest of a file",
         "List the layers in admin.gpkg with their CRS, geometry type and number of features.",
         ("admin.gpkg",), [_out("admin_manifest.csv", format="CSV")], {"admin_manifest.csv": _g_manifest}),
    Task("area_per_feature", "area in km² per feature", "What is the area of each district in km²?",
         ("admin.gpkg",), [_out("district_areas.csv", format="CSV")], {"district_areas.csv": _g_district_km2}),
    Task("buffer_dissolve", "buffer + dissolve", "Buffer the clinics by 1 km and merge the overlapping buffers.",
         ("clinics.csv",), [_out("clinic_coverage.gpkg", geometry_type="Polygon")],
         {"clinic_coverage.gpkg": _g_coverage}),
    Task("kml_to_fgb_3857", "reproject + convert (KML -> FlatGeobuf)",
         "Reproject the field reports to Web Mercator (EPSG:3857) and save them as FlatGeobuf.",
         ("field_reports.kml",), [_out("reports_3857.fgb", crs="EPSG:3857")], {"reports_3857.fgb": _g_reports_3857}),
    Task("repair_dissolve_area", "repair + dissolve + area",
         "Repair the parcels, dissolve them by land use and give the area of each land use in km².",
         ("parcels.geojson",), [_out("landuse.gpkg", geometry_type="Polygon")], {"landuse.gpkg": _g_landuse_km2}),
    Task("centroids_antimeridian", "centroids (antimeridian)", "Compute the centroid of each reef zone.",
         ("reef_zones.geojson",), [_out("reef_centroids.geojson", geometry_type="Point")],
         {"reef_centroids.geojson": _g_reef_centroids}),
    Task("nearest_one", "nearest with distance", "How far is each village from its nearest well?",
         ("villages.shp", "villages.shx", "villages.dbf", "villages.prj", "villages.cpg", "admin.gpkg"),
         [_out("village_nearest_well.csv", format="CSV", columns=["distance_m"])], {"village_nearest_well.csv": _g_nearest_well}),
    Task("clean_chain", "dedupe + drop nulls + reproject",
         "Remove the duplicate clinics and the ones without a name, then reproject them to EPSG:25830.",
         ("clinics.csv",), [_out("clinics_clean.gpkg", crs="EPSG:25830", geometry_type="Point")],
         {"clinics_clean.gpkg": _g_clean_clinics}),
    Task("inside_aoi_sample", "inside a named AOI file (sample data)",
         "Which health facilities are inside the emsr773_aoi03_extent area? Save them.",
         ("valencia_city_health_facilities.geojson", "emsr773_aoi03_extent.geojson"),
         [_out("facilities_in_aoi.geojson", geometry_type="Point")], {"facilities_in_aoi.geojson": _g_facilities_in_aoi}),
    Task("geojson_to_shp_sample", "convert GeoJSON -> Shapefile (sample data)",
         "Convert the Valencia health facilities to a shapefile.",
         ("valencia_city_health_facilities.geojson",), [_out("health_facilities.shp", geometry_type="Point")],
         {"health_facilities.shp": _g_facilities_shp}),
]  # fmt: skip


# ---------------------------------------------------------------------------------------------- running
@dataclass
class OutputGrade:
    task: str
    name: str
    outcome: str  # CORRECT | NOT_WRITTEN | REPORTED | SILENT
    run_said: str  # the run's own line for this output
    grader: str | None  # what the grader found (None: correct)


@dataclass
class SuiteResult:
    grades: list[OutputGrade] = field(default_factory=list)
    seconds: float = 0.0

    def count(self, outcome: str) -> int:
        return sum(g.outcome == outcome for g in self.grades)

    @property
    def correct_rate(self) -> float:
        return self.count(CORRECT) / len(self.grades) if self.grades else 0.0

    def summary(self) -> str:
        n = len(self.grades)
        return (
            f"{n} outputs: {self.count(CORRECT)} written and correct ({self.correct_rate:.0%}), "
            f"{self.count(NOT_WRITTEN)} not written (reported), {self.count(REPORTED)} written but wrong and reported, "
            f"{self.count(SILENT)} SILENTLY WRONG ({self.seconds:.0f} s)"
        )


def grade_output(task: Task, name: str, result: dict[str, Any] | None, out_dir: Path) -> OutputGrade:
    """The outcome of one output: the run's own verdict (``result`` from its manifest) against the grader's."""
    said = (result or {}).get("line") or "(the run gave no verdict)"
    if result is None or not result.get("written"):
        return OutputGrade(task.id, name, NOT_WRITTEN, said, None)
    try:
        task.graders[name](out_dir / name)
        problem = None
    except Wrong as exc:
        problem = str(exc)
    except Exception as exc:  # noqa: BLE001 (a file the grader cannot even read is wrong)
        problem = f"unreadable: {type(exc).__name__}: {exc}"[:200]
    if not result.get("ok"):
        return OutputGrade(task.id, name, REPORTED, said, problem)
    return OutputGrade(task.id, name, CORRECT if problem is None else SILENT, said, problem)


def run_task(task: Task, pool: Path, work: Path, llm: Any, log: Callable[[str], None]) -> list[OutputGrade]:
    folder = work / task.id
    inputs = folder / "in"
    inputs.mkdir(parents=True)
    for name in task.inputs:
        if not (pool / name).exists():
            return [OutputGrade(task.id, o["name"], NOT_WRITTEN, f"input {name} missing", None) for o in task.outputs]
        shutil.copyfile(pool / name, inputs / name)
    specs = [OutputSpec.model_validate(o) for o in task.outputs]
    try:
        manifest = run_batch(
            task.instruction, inputs, specs, folder / "out", session=folder / "session", llm=llm, log=lambda _: None
        )
        results = {o["name"]: o for o in manifest["outputs"]}
    except Exception as exc:  # noqa: BLE001 (the batch itself failed: nothing written, reported as the error)
        log(f"{task.id}: the batch failed: {type(exc).__name__}: {exc}"[:300])
        results = {}
    return [grade_output(task, o["name"], results.get(o["name"]), folder / "out") for o in task.outputs]


def build_llm(model: str) -> Any:
    """``scripted``: no model at all (only what code resolves runs);
    ``embedded``: the bench's default configuration. The scripted one answers every call as a model server that is
    down would (the run fails cleanly, as with the embedded model unavailable)."""
    from geofaham_plugin.core.errors import ModelHTTPError
    from geofaham_plugin.core.llm import LLM
    from geofaham_plugin.core.llm.scripted import ScriptedModel

    if model == "scripted":

        def no_model(role: str, messages: list, schema: dict | None) -> str:
            raise ModelHTTPError(f"no model in this run (scripted, asked as {role})", status_code=503)

        return LLM(ScriptedModel(no_model))
    from .config import DEFAULT_CONFIG, build_models, load_config

    config = load_config(DEFAULT_CONFIG)
    return LLM(build_models(config, config.settings()))


def run_suite(
    tasks: Sequence[Task] = TASKS,
    model: str = "scripted",
    out: Path | None = None,
    log: Callable[[str], None] = print,
) -> SuiteResult:
    started = time.monotonic()
    work = Path(out) if out else Path(tempfile.mkdtemp(prefix="geofaham-batch-suite-"))
    work.mkdir(parents=True, exist_ok=True)
    pool = work / "_inputs"
    if pool.exists():
        shutil.rmtree(pool)
    pool.mkdir()
    _make_inputs(pool)
    for task in tasks:
        if (work / task.id).exists():
            shutil.rmtree(work / task.id)
    llm = build_llm(model)
    result = SuiteResult()
    try:
        for task in tasks:
            grades = run_task(task, pool, work, llm, log)
            result.grades += grades
            for g in grades:
                why = f" — grader: {g.grader}" if g.grader else ""
                log(f"{g.outcome:15s} {task.id:24s} {g.name:30s} {g.run_said[:160]}{why}")
    finally:
        llm.close()
    result.seconds = time.monotonic() - started
    (work / "batch_suite.json").write_text(
        json.dumps([g.__dict__ for g in result.grades], indent=1, ensure_ascii=False), encoding="utf-8"
    )
    log(result.summary())
    return result


def select(ids: str | None, tasks: Sequence[Task] = TASKS) -> list[Task]:
    if not ids:
        return list(tasks)
    wanted = [i.strip() for i in ids.split(",") if i.strip()]
    return [t for t in tasks if any(t.id.startswith(w) for w in wanted)]
