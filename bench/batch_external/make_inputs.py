"""The split's input files, generated deterministically (seeded) into a folder.

A small synthetic comarca near Burgos (UTM zone 30 north): districts, a river's flood zones, protected areas,
roads, wells, clinics, schools, health posts, survey points, water meters, field boundaries and parcels, written in
varied formats and CRSs with the messiness the tasks are about: invalid polygons, exact duplicates, nulls, numbers
stored as text, shapefile field names cut to 10 characters, vertices that nearly (not quite) meet. One input is the
real Lahaina labels file of the sample data (``../shared/data``), read in place and copied only into the output
folder, never into the repository.

    .venv/bin/python -m bench.batch_external.make_inputs OUT_DIR [--names roads.geojson,wells.shp]
"""

from __future__ import annotations

import argparse
import math
import shutil
import zlib
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from shapely import affinity
from shapely.geometry import LineString, Point, Polygon, box
from shapely.ops import unary_union

SEED = 20261204
UTM30 = "EPSG:32630"
WGS84 = "EPSG:4326"
WEB_MERCATOR = "EPSG:3857"
#: south-west corner of the synthetic area (UTM 30N metres, about 3.77 W 42.31 N)
X0, Y0 = 436000.0, 4684000.0
WIDTH, HEIGHT = 12000.0, 8000.0
_REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = (
    _REPO.parent / "shared" / "data" if (_REPO.parent / "shared" / "data").is_dir() else Path("/work/shared/data")
)
LAHAINA_LABELS = SHARED_DATA / "lahaina-2023" / "Maui_Wildfires_August_0.geojson"


def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


def _t(geom: shapely.Geometry) -> shapely.Geometry:
    """Local metres -> UTM 30N."""
    return shapely.transform(geom, lambda c: c + np.array([X0, Y0]))


def _utm(rows: list[dict], geoms: list) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(rows, geometry=[_t(g) for g in geoms], crs=UTM30)


def _blob(cx: float, cy: float, r: float, rng: np.random.Generator, n: int = 14, jitter: float = 0.25) -> Polygon:
    angles = np.linspace(0, 2 * math.pi, n, endpoint=False)
    radii = r * (1 + rng.uniform(-jitter, jitter, n))
    return Polygon([(cx + rr * math.cos(a), cy + rr * math.sin(a)) for a, rr in zip(angles, radii, strict=True)])


def _random_inside(area: shapely.Geometry, rng: np.random.Generator) -> Point:
    minx, miny, maxx, maxy = area.bounds
    while True:
        p = Point(rng.uniform(minx, maxx), rng.uniform(miny, maxy))
        if area.contains(p):
            return p


# ------------------------------------------------------------------------------------------- base geography
@cache
def _districts_local() -> tuple[tuple[str, str, str, int, Polygon], ...]:
    rng = _rng("districts")
    xs, ys = [0.0, 4000.0, 8000.0, 12000.0], [0.0, 4000.0, 8000.0]
    nodes: dict[tuple[int, int], tuple[float, float]] = {}
    for i, x in enumerate(xs):
        for j, y in enumerate(ys):
            dx = rng.uniform(-400, 400) if 0 < i < 3 else 0.0
            dy = rng.uniform(-400, 400) if 0 < j < 2 else 0.0
            nodes[(i, j)] = (x + dx, y + dy)
    edges: dict[tuple[tuple[int, int], tuple[int, int]], list[tuple[float, float]]] = {}

    def edge(a: tuple[int, int], b: tuple[int, int]) -> list[tuple[float, float]]:
        key = (min(a, b), max(a, b))
        if key not in edges:
            (ax, ay), (bx, by) = nodes[key[0]], nodes[key[1]]
            outer = (key[0][0] == key[1][0] and key[0][0] in (0, 3)) or (key[0][1] == key[1][1] and key[0][1] in (0, 2))
            nx, ny = -(by - ay), bx - ax
            norm = math.hypot(nx, ny)
            pts = [(ax, ay)]
            for f in (1 / 3, 2 / 3):
                off = 0.0 if outer else rng.uniform(-250, 250)
                pts.append((ax + f * (bx - ax) + off * nx / norm, ay + f * (by - ay) + off * ny / norm))
            pts.append((bx, by))
            edges[key] = pts
        pts = edges[key]
        return pts if key[0] == a else pts[::-1]

    names = ["Villanueva", "San Pedro", "Castrillo", "Gamonal", "Las Huelgas", "Villímar"]
    pops = [12450, 8730, 23110, 5320, 17840, 9960]
    out = []
    for j in range(2):
        for i in range(3):
            corners = [(i, j), (i + 1, j), (i + 1, j + 1), (i, j + 1), (i, j)]
            ring: list[tuple[float, float]] = []
            for a, b in zip(corners[:-1], corners[1:], strict=True):
                ring.extend(edge(a, b)[:-1])
            k = j * 3 + i
            out.append((f"D0{k + 1}", names[k], "South" if j == 0 else "North", pops[k], Polygon(ring)))
    return tuple(out)


def river_y(x: float) -> float:
    return 3600.0 + 700.0 * math.sin(x / 2200.0)


@cache
def _river_local() -> LineString:
    xs = np.arange(-500.0, 12501.0, 250.0)
    return LineString([(x, river_y(x)) for x in xs])


def _river_part(x_from: float, x_to: float) -> LineString:
    part = _river_local().intersection(box(x_from, -1e5, x_to, 1e5))
    assert isinstance(part, LineString)
    return part


@cache
def _flood_zones_local() -> tuple[tuple[str, str, str, Polygon], ...]:
    spec = [
        ("F1", "high", 200.0, 3600.0, 450.0),
        ("F2", "medium", 4700.0, 7800.0, 300.0),
        ("F3", "low", 8800.0, 11800.0, 650.0),
    ]
    return tuple((zid, sev, f"Zona inundable {zid}", _river_part(a, b).buffer(hw)) for zid, sev, a, b, hw in spec)


@cache
def _roads_local() -> tuple[tuple[str, str, str, str, LineString], ...]:
    rng = _rng("roads")
    roads: list[tuple[str, str, str, str, LineString]] = []

    def jit(pts: list[tuple[float, float]], amount: float) -> LineString:
        return LineString([(x + rng.uniform(-amount, amount), y + rng.uniform(-amount, amount)) for x, y in pts])

    roads.append(
        ("R01", "N-120", "primary", "asphalt", jit([(x, 5200.0) for x in np.arange(0.0, 12001.0, 1500.0)], 150))
    )
    roads.append(
        ("R02", "N-623", "primary", "asphalt", jit([(6200.0, y) for y in np.arange(0.0, 8001.0, 1000.0)], 150))
    )
    secondary = [
        (
            "BU-100",
            [
                (500.0, 1500.0),
                (2600.0, 1700.0),
                (4800.0, 1650.0),
                (7000.0, 2000.0),
                (9300.0, 2300.0),
                (11500.0, 2500.0),
            ],
        ),
        ("BU-101", [(2500.0, 7900.0), (2700.0, 6000.0), (2650.0, 4100.0), (2900.0, 2000.0), (3000.0, 100.0)]),
        ("BU-P-4001", [(9000.0, 7900.0), (9400.0, 5800.0), (9900.0, 3900.0), (10200.0, 2100.0), (10500.0, 300.0)]),
        ("BU-V-5002", [(100.0, 6800.0), (1900.0, 7100.0), (3900.0, 7350.0), (5800.0, 7600.0)]),
    ]
    for k, (name, pts) in enumerate(secondary):
        roads.append((f"R0{k + 3}", name, "secondary", "asphalt", jit(pts, 60)))
    streets = [
        "Calle Mayor",
        "Calle del Río",
        "Avenida de Castilla",
        "Calle Real",
        "Calle de la Iglesia",
        "Calle Nueva",
    ]
    for k, name in enumerate(streets):
        x, y = rng.uniform(4800, 7600), rng.uniform(3800, 5600)
        heading, length = rng.uniform(0, 2 * math.pi), 700.0 + 160.0 * k
        pts = [(x + f * length * math.cos(heading), y + f * length * math.sin(heading)) for f in (0.0, 0.35, 0.7, 1.0)]
        roads.append((f"R{k + 7:02d}", name, "residential", "asphalt" if k % 2 else "paved", jit(pts, 25)))
    for k in range(4):
        x, y = rng.uniform(1000, 11000), rng.uniform(1000, 7000)
        heading, length = rng.uniform(0, 2 * math.pi), 1300.0 + 270.0 * k
        pts = [
            (x + f * length * math.cos(heading), y + f * length * math.sin(heading))
            for f in (0.0, 0.25, 0.5, 0.75, 1.0)
        ]
        line = jit(pts, 40).intersection(box(0, 0, WIDTH, HEIGHT))
        assert isinstance(line, LineString)
        roads.append((f"R{k + 13:02d}", f"Camino {k + 1}", "track", "gravel" if k % 2 else "dirt", line))
    return tuple(roads)


# ------------------------------------------------------------------------------------------- layers
def districts() -> gpd.GeoDataFrame:
    rows = [{"district_id": d, "name": n, "region": r, "pop": p} for d, n, r, p, _ in _districts_local()]
    return _utm(rows, [g for *_, g in _districts_local()]).to_crs(WGS84)


def district_seats() -> gpd.GeoDataFrame:
    rows = [{"district_id": d, "seat": f"Ayuntamiento de {n}"} for d, n, *_ in _districts_local()]
    return _utm(rows, [g.representative_point() for *_, g in _districts_local()]).to_crs(WGS84)


def flood_zones() -> gpd.GeoDataFrame:
    rows = [{"Name": n, "zone_id": z, "severity": s} for z, s, n, _ in _flood_zones_local()]
    return _utm(rows, [g for *_, g in _flood_zones_local()]).to_crs(WGS84)


def protected_areas() -> gpd.GeoDataFrame:
    rng = _rng("protected")
    pa1 = affinity.scale(Point(4000, 6200).buffer(1000), 1.5, 0.9)
    pa2 = _blob(10200, 1800, 1100, rng, n=12)
    rows = [{"pa_id": "PA1", "pa_name": "Monte de la Abadía"}, {"pa_id": "PA2", "pa_name": "Riberas del Arlanzón"}]
    return _utm(rows, [pa1, pa2])


def _rect(cx: float, cy: float, w: float, h: float, angle: float) -> Polygon:
    return affinity.rotate(box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2), angle)


def coverage_2019() -> gpd.GeoDataFrame:
    return _utm([{"survey": "2019", "team": "Equipo A"}], [_rect(4500, 3800, 5000, 4000, 10)]).to_crs(WGS84)


def coverage_2023() -> gpd.GeoDataFrame:
    return _utm([{"survey": "2023", "team": "Equipo B"}], [_rect(7500, 4600, 5500, 3500, -15)])


def flood_river() -> gpd.GeoDataFrame:
    r1 = _river_part(1000, 5200).buffer(350)
    r2 = LineString([(7000, 8000), (7050, 6000), (6980, 4500), (7000, river_y(7000))]).buffer(250)
    rows = [{"river_id": "R1", "return_period": "T100"}, {"river_id": "R2", "return_period": "T25"}]
    return _utm(rows, [r1, r2]).to_crs(WGS84)


def flood_rain() -> gpd.GeoDataFrame:
    rng = _rng("rain")
    rows = [{"cell_id": "P1", "depth_cm": 45}, {"cell_id": "P2", "depth_cm": 20}]
    return _utm(rows, [_blob(3000, 4300, 900, rng), _blob(7300, 5200, 800, rng)])


def study_area() -> gpd.GeoDataFrame:
    return _utm([{"name": "Study area"}], [_blob(6000, 4000, 3200, _rng("study"), n=8, jitter=0.09)]).to_crs(WGS84)


def roads() -> gpd.GeoDataFrame:
    rows = [{"road_id": r, "name": n, "class": c, "surface": s} for r, n, c, s, _ in _roads_local()]
    return _utm(rows, [g for *_, g in _roads_local()]).to_crs(WGS84)


def _boundaries(polys: Iterable[shapely.Geometry]) -> shapely.Geometry:
    return unary_union([p.boundary for p in polys])


@cache
def _wells() -> gpd.GeoDataFrame:
    rng = _rng("wells")
    polys = [g for *_, g in _districts_local()]
    lines = _boundaries(polys)
    allowed = unary_union([p for k, p in enumerate(polys) if k != 2])  # D03 has no well
    pts: list[Point] = []
    while len(pts) < 40:
        p = _random_inside(allowed, rng)
        if lines.distance(p) > 60:
            pts.append(p)
    statuses = rng.choice(["functional", "needs repair", "dry"], size=40, p=[0.55, 0.28, 0.17])
    depth = np.round(rng.uniform(12, 95, 40), 1).astype(object)
    yld = np.round(rng.uniform(5, 180, 40), 1).astype(object)
    for k in rng.choice(40, 7, replace=False):
        depth[k] = None
    for k in rng.choice(40, 5, replace=False):
        yld[k] = None
    rows = [
        {
            "well_id": f"W{k + 1:02d}",
            "depth_metr": depth[k],
            "yield_lpm": yld[k],
            "status": str(statuses[k]),
            "install_yr": int(rng.integers(1975, 2023)),
        }
        for k in range(40)
    ]
    gdf = _utm(rows, pts)
    gdf["depth_metr"] = gdf["depth_metr"].astype("float64")
    gdf["yield_lpm"] = gdf["yield_lpm"].astype("float64")
    return gdf


def wells() -> gpd.GeoDataFrame:
    return _wells().copy()


def _place(
    rng: np.random.Generator,
    inside: shapely.Geometry,
    avoid: shapely.Geometry,
    taken: list[Point],
    spacing: float,
) -> Point:
    while True:
        p = _random_inside(inside, rng)
        if avoid.distance(p) > 60 and all(p.distance(q) > spacing for q in taken):
            return p


@cache
def _clinics() -> gpd.GeoDataFrame:
    rng = _rng("clinics")
    zones = [g for *_, g in _flood_zones_local()]
    flooded = unary_union(zones)
    edges = _boundaries(zones)
    extent = box(300, 300, WIDTH - 300, HEIGHT - 300)
    pts: list[Point] = []
    for zone in (zones[0], zones[0], zones[1], zones[2]):
        pts.append(_place(rng, zone, edges, pts, 700))
    while len(pts) < 14:
        pts.append(_place(rng, extent.difference(flooded), edges, pts, 700))
    kinds = ["hospital"] * 4 + ["health centre"] * 6 + ["first-aid post"] * 4
    order = rng.permutation(14)
    beds_by_kind = {
        "hospital": [120, 45, 80, 60],
        "health centre": [12, 8, 20, 6, 15, 10],
        "first-aid post": [0, 0, 0, 0],
    }
    towns = ["Villanueva", "San Pedro", "Castrillo", "Gamonal", "Las Huelgas", "Villímar", "Cardeñadijo"]
    used = {k: 0 for k in beds_by_kind}
    label = {"hospital": "Hospital", "health centre": "Centro de Salud", "first-aid post": "Consultorio"}
    rows = []
    for k in range(14):
        kind = kinds[int(order[k])]
        beds = beds_by_kind[kind][used[kind]]
        used[kind] += 1
        rows.append(
            {
                "clinic_id": f"C{k + 1:02d}",
                "name": f"{label[kind]} {towns[(k + used[kind]) % 7]}",
                "type": kind,
                "beds": beds,
            }
        )
    return _utm(rows, pts).to_crs(WGS84)


def clinics_table() -> pd.DataFrame:
    gdf = _clinics()
    df = pd.DataFrame(gdf.drop(columns="geometry"))
    df["lng"] = gdf.geometry.x.round(6)
    df["lat"] = gdf.geometry.y.round(6)
    return df


def _clinic_points_utm() -> list[Point]:
    df = clinics_table()
    return list(gpd.points_from_xy(df["lng"], df["lat"], crs=WGS84).to_crs(UTM30))


@cache
def _schools() -> gpd.GeoDataFrame:
    rng = _rng("schools")
    zones = [g for *_, g in _flood_zones_local()]
    edges = _boundaries(zones)
    outside = box(300, 300, WIDTH - 300, HEIGHT - 300).difference(unary_union(zones))
    clinics = [shapely.transform(p, lambda c: c - np.array([X0, Y0])) for p in _clinic_points_utm()]
    pts: list[Point] = []
    for area in [zones[0]] * 5 + [zones[1]] * 3 + [outside] * 7:
        while True:
            p = _place(rng, area, edges, pts, 250)
            d = sorted(p.distance(c) for c in clinics)
            if d[1] - d[0] > 50:
                pts.append(p)
                break
    names = ["CEIP Río Arlanzón", "CEIP San Pedro", "IES Castrillo", "CEIP Gamonal", "IES Las Huelgas"]
    rows = []
    for k in range(15):
        n = int(rng.integers(40, 900))
        text = [str(n), f" {n}", f"{n} ", f"{n:04d}" if n < 100 else str(n)][k % 4]
        rows.append(
            {
                "school_id": f"S{k + 1:02d}",
                "name": f"{names[k % 5]} {k // 5 + 1}",
                "level": "secondary" if names[k % 5].startswith("IES") else "primary",
                "enrolment": text,
            }
        )
    order = rng.permutation(15)
    gdf = _utm([rows[int(i)] for i in order], [pts[int(i)] for i in order])
    return gdf.to_crs(WEB_MERCATOR)


def schools() -> gpd.GeoDataFrame:
    return _schools().copy()


def health_posts_table() -> pd.DataFrame:
    rng = _rng("posts")
    extent = box(500, 500, WIDTH - 500, HEIGHT - 500)
    pts = [_random_inside(extent, rng) for _ in range(11)]
    pts.append(Point(pts[4].x + 15.0, pts[4].y))  # a distinct post 15 m from another
    ll = gpd.GeoSeries([_t(p) for p in pts], crs=UTM30).to_crs(WGS84)
    rows = [
        {
            "post_id": f"P{k + 1:02d}",
            "name": f"Puesto de salud {k + 1}",
            "staff": int(rng.integers(1, 6)),
            "WKT": f"POINT ({p.x:.6f} {p.y:.6f})",
        }
        for k, p in enumerate(ll)
    ]
    for n, k in enumerate((1, 4, 7, 10)):
        rows.append({**rows[k], "post_id": f"P{13 + n}"})
    order = rng.permutation(len(rows))
    return pd.DataFrame([rows[int(i)] for i in order])


def survey_points() -> gpd.GeoDataFrame:
    rng = _rng("survey")
    species = ["Ciconia ciconia", "Milvus milvus", "Otis tarda", "Alauda arvensis", "Pica pica", "Upupa epops"]
    observers = ["M. García", "L. Pérez", "A. Santos"]
    rows: list[dict] = []
    pts: list[Point] = []
    for k in range(30):
        if k in (7, 19):  # same spot as the previous row, another species: not a duplicate
            p = pts[-1]
        else:
            p = Point(rng.uniform(500, WIDTH - 500), rng.uniform(500, HEIGHT - 500))
        pts.append(p)
        rows.append(
            {
                "species": species[k % 6] if k not in (7, 19) else species[(k + 3) % 6],
                "count": int(rng.integers(1, 25)),
                "observer": observers[k % 3],
                "survey_date": f"2024-05-{1 + k % 28:02d}",
            }
        )
    for k in (2, 5, 11, 17, 23, 28):
        rows.append(dict(rows[k]))
        pts.append(pts[k])
    order = rng.permutation(len(rows))
    return _utm([rows[int(i)] for i in order], [pts[int(i)] for i in order]).to_crs(WGS84)


def water_meters() -> gpd.GeoDataFrame:
    rng = _rng("meters")
    lines = [g for _, _, c, _, g in _roads_local()]
    candidates = [k for k, (_, _, c, _, _) in enumerate(_roads_local()) if c in ("residential", "secondary")]
    rows: list[dict] = []
    pts: list[Point] = []
    while len(pts) < 18:
        line = lines[int(rng.choice(candidates))]
        d = rng.uniform(0.2, 0.8) * line.length
        a, b = line.interpolate(d - 1), line.interpolate(d + 1)
        nx, ny = -(b.y - a.y), b.x - a.x
        norm = math.hypot(nx, ny)
        off = rng.uniform(3, 15) * rng.choice([-1, 1])
        mid = line.interpolate(d)
        p = Point(mid.x + off * nx / norm, mid.y + off * ny / norm)
        dists = sorted(g.distance(p) for g in lines)
        if dists[1] - dists[0] < 10:
            continue
        pts.append(p)
        rows.append({"meter_id": f"M{len(pts):02d}", "reading": int(rng.integers(100, 9000))})
    return _utm(rows, pts).to_crs(WGS84)


def field_boundaries() -> gpd.GeoDataFrame:
    rng = _rng("fields")
    ox, oy = 1500.0, 500.0
    crops = ["wheat", "barley", "sunflower", "fallow", "rapeseed", "barley"]
    rows, geoms = [], []
    for j in range(2):
        for i in range(3):
            x0, y0 = ox + 300 * i, oy + 200 * j
            ring = [
                (x0, y0),
                (x0 + 150, y0),
                (x0 + 300, y0),
                (x0 + 300, y0 + 100),
                (x0 + 300, y0 + 200),
                (x0 + 150, y0 + 200),
                (x0, y0 + 200),
                (x0, y0 + 100),
            ]
            moved = []
            for x, y in ring:
                r, a = 0.15 * math.sqrt(rng.uniform()), rng.uniform(0, 2 * math.pi)
                moved.append((x + r * math.cos(a), y + r * math.sin(a)))
            geoms.append(Polygon(moved))
            rows.append({"field_id": f"F-{j * 3 + i + 1:02d}", "crop": crops[j * 3 + i]})
    return _utm(rows, geoms)


def parcels() -> gpd.GeoDataFrame:
    ox, oy = 8500.0, 6500.0
    shapes: dict[int, list[tuple[float, float]]] = {
        3: [(0, 0), (30, 40), (30, 0), (0, 40), (0, 0)],  # bow-tie
        6: [(0, 0), (36, 30), (36, 0), (0, 30), (0, 0)],  # bow-tie
        8: [(0, 0), (15, 20), (0, 40), (30, 40), (15, 20), (30, 0), (0, 0)],  # ring touching itself
        9: [(0, 0), (30, 0), (30, 20), (45, 20), (30, 20), (30, 40), (0, 40), (0, 0)],  # spike
        2: [(0, 0), (30, 0), (30, 0), (30, 40), (0, 40), (0, 40), (0, 0)],  # repeated vertices (valid)
    }
    rows, geoms = [], []
    for k in range(10):
        base = shapes.get(k + 1, [(0, 0), (30 + k, 0), (30 + k, 40), (0, 40), (0, 0)])
        x0, y0 = ox + 60 * (k % 5), oy + 60 * (k // 5)
        geoms.append(Polygon([(x0 + x, y0 + y) for x, y in base]))
        rows.append({"parcel_id": f"P-{k + 1:03d}", "owner": ["Ayuntamiento", "Privado", "Junta vecinal"][k % 3]})
    return _utm(rows, geoms)


# ------------------------------------------------------------------------------------------- writers
def _write_gdf(gdf: gpd.GeoDataFrame, path: Path, driver: str, **kw: object) -> None:
    gdf.to_file(path, driver=driver, engine="pyogrio", **kw)


def _w_districts(path: Path) -> None:
    _write_gdf(districts(), path, "GPKG", layer="districts")
    _write_gdf(district_seats(), path, "GPKG", layer="district_seats")


def _w_lahaina(path: Path) -> None:
    if not LAHAINA_LABELS.is_file():
        raise FileNotFoundError(f"sample data not found: {LAHAINA_LABELS}")
    shutil.copyfile(LAHAINA_LABELS, path)


WRITERS: dict[str, Callable[[Path], None]] = {
    "districts.gpkg": _w_districts,
    "flood_zones.kml": lambda p: _write_gdf(flood_zones(), p, "LIBKML"),
    "protected_areas.shp": lambda p: _write_gdf(protected_areas(), p, "ESRI Shapefile", encoding="UTF-8"),
    "coverage_2019.geojson": lambda p: _write_gdf(coverage_2019(), p, "GeoJSON"),
    "coverage_2023.shp": lambda p: _write_gdf(coverage_2023(), p, "ESRI Shapefile", encoding="UTF-8"),
    "flood_river.geojson": lambda p: _write_gdf(flood_river(), p, "GeoJSON"),
    "flood_rain.gpkg": lambda p: _write_gdf(flood_rain(), p, "GPKG", layer="rain_flood"),
    "study_area.geojson": lambda p: _write_gdf(study_area(), p, "GeoJSON"),
    "roads.geojson": lambda p: _write_gdf(roads(), p, "GeoJSON"),
    "wells.shp": lambda p: _write_gdf(wells(), p, "ESRI Shapefile", encoding="UTF-8"),
    "clinics.csv": lambda p: clinics_table().to_csv(p, index=False),
    "schools.fgb": lambda p: _write_gdf(schools(), p, "FlatGeobuf"),
    "health_posts.csv": lambda p: health_posts_table().to_csv(p, index=False),
    "survey_points.parquet": lambda p: survey_points().to_parquet(p, index=False),
    "water_meters.geojson": lambda p: _write_gdf(water_meters(), p, "GeoJSON"),
    "field_boundaries.gpkg": lambda p: _write_gdf(field_boundaries(), p, "GPKG", layer="fields"),
    "parcels.gpkg": lambda p: _write_gdf(parcels(), p, "GPKG", layer="parcels"),
    "lahaina_labels.geojson": _w_lahaina,
}
#: inputs read from the sample data rather than generated
REAL_INPUTS = frozenset({"lahaina_labels.geojson"})


def write_inputs(dest: Path, names: Iterable[str] | None = None) -> list[Path]:
    """Write the named inputs (all of them by default) into ``dest``; the paths written."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for name in WRITERS if names is None else names:
        if name not in WRITERS:
            raise KeyError(f"unknown input {name!r}")
        path = dest / name
        WRITERS[name](path)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dest", type=Path)
    parser.add_argument("--names", default="", help="comma-separated input file names (default: all)")
    args = parser.parse_args(argv)
    names = [n for n in args.names.split(",") if n] or None
    for path in write_inputs(args.dest, names):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
