"""Expected values of the offline GeoFaham-Bench tasks, computed from the sample data.

Independent of GeoFaham: plain GeoPandas, pyproj, shapely and rasterio, no import of
``geofaham_plugin``. Distances and areas are measured in the local UTM / ETRS89 zone of each event
(EPSG:32611 Los Angeles, EPSG:32604 Maui, EPSG:25830 Valencia), not in degrees; raster statistics
are read from the GeoTIFFs with rasterio. The output, ``bench/expected.json``, is derived data:
regenerate it with ``python -m bench ground-truth`` (``bench/expected_values.py``) (the runner and the tests do when it is missing).
The constraint variants of ``bench/paraphrases.json`` are computed by ``bench/ground_truth_variants.py``
(geodesic areas, AOI files) and stored under ``variants``.

Every value is keyed by a dotted path that task expectations reference (``ref``)."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

BENCH_DIR = Path(__file__).resolve().parent
OUT_FILE = BENCH_DIR / "expected.json"

LA_UTM, MAUI_UTM, VALENCIA_UTM = 32611, 32604, 25830
DESTROYED = "Destroyed (>50%)"
DAMAGED = ["Affected (1-9%)", "Minor (10-25%)", "Major (26-50%)", DESTROYED]
DAMAGE_CLASS = {
    "No Damage": "none",
    "Affected (1-9%)": "affected",
    "Minor (10-25%)": "minor",
    "Major (26-50%)": "major",
    DESTROYED: "destroyed",
}
# OSM semantics used by the tasks (stated in the questions)
EDUCATION = ["school", "college", "university", "kindergarten", "childcare"]
DRIVABLE = [
    "motorway",
    "motorway_link",
    "trunk",
    "trunk_link",
    "primary",
    "primary_link",
    "secondary",
    "secondary_link",
    "tertiary",
    "tertiary_link",
    "unclassified",
    "residential",
    "living_street",
    "service",
    "track",
]

FILES = {
    "eaton_perimeter": "eaton-2025/eaton_adjusted_fire_perimeter.geojson",
    "eaton_dins": "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson",
    "palisades_dins": "palisades-2025/DINS_2025_Palisades_Public_View.geojson",
    "hospitals": "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson",
    "lahaina_labels": "lahaina-2023/Maui_Wildfires_August_0.geojson",
    "lahaina_burn": "lahaina-2023/lahaina_burn_area.geojson",
    "valencia_flood": "valencia-2024/emsr773_observed_flood_merged.geojson",
    "valencia_aoi03": "valencia-2024/emsr773_aoi03_extent.geojson",
    "valencia_health": "valencia-2024/valencia_city_health_facilities.geojson",
    "catarroja_points": "valencia-2024/osm-catarroja/puntos.geojson",
    "catarroja_lines": "valencia-2024/osm-catarroja/lineas.geojson",
    "catarroja_polygons": "valencia-2024/osm-catarroja/poligonos.geojson",
    "catarroja_public": "valencia-2024/catarroja_public_buildings_dana.geojson",
    "hurst_pre": "raster/hurst-2025/HURST_20250107_s2_pre_fire.tif",
    "hurst_post": "raster/hurst-2025/HURST_20250107_s2_post_fire.tif",
    "hurst_mask": "raster/hurst-2025/HURST_20250107_fire_mask.tif",
    "hurst_dnbr": "raster/hurst-2025/HURST_20250107_dnbr.tif",
}


def data_dir() -> Path:
    """GEOFAHAM_DATA_DIR, else ../shared/data next to the repository, else /work/shared/data."""
    env = os.environ.get("GEOFAHAM_DATA_DIR")
    if env:
        return Path(env)
    for candidate in (BENCH_DIR.parent.parent / "shared" / "data", Path("/work/shared/data")):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("sample data not found: set GEOFAHAM_DATA_DIR")


class Data:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, gpd.GeoDataFrame] = {}

    def path(self, key: str) -> Path:
        return self.root / FILES[key]

    def vector(self, key: str) -> gpd.GeoDataFrame:
        if key not in self._cache:
            gdf = gpd.read_file(self.path(key))
            if gdf.crs is None:  # RFC 7946: GeoJSON without crs is WGS84
                gdf = gdf.set_crs(4326)
            invalid = ~gdf.geometry.is_valid
            if invalid.any():
                gdf.loc[invalid, "geometry"] = gdf.geometry[invalid].make_valid()
            self._cache[key] = gdf
        return self._cache[key].copy()


# ------------------------------------------------------------------------------------ helpers
def union(gdf: gpd.GeoDataFrame, epsg: int) -> shapely.Geometry:
    return shapely.union_all(gdf.to_crs(epsg).geometry.values)


def intersecting(features: gpd.GeoDataFrame, area: shapely.Geometry, epsg: int) -> gpd.GeoDataFrame:
    """Features (any geometry) that intersect ``area`` (a shapely geometry in ``epsg``)."""
    shapely.prepare(area)
    return features[shapely.intersects(area, features.to_crs(epsg).geometry.values)]


def distances_m(features: gpd.GeoDataFrame, area: shapely.Geometry, epsg: int) -> np.ndarray:
    """Distance in metres from each feature to ``area`` in a projected (UTM/ETRS89) CRS; 0 inside."""
    return shapely.distance(features.to_crs(epsg).geometry.values, area)


def named_distances(
    features: gpd.GeoDataFrame,
    area: shapely.Geometry,
    epsg: int,
    name: str,
    limit: float | None = None,
    k: int | None = None,
) -> list[dict]:
    d = distances_m(features, area, epsg)
    out = pd.DataFrame({"name": features[name].astype(str).values, "distance_m": np.round(d, 1)})
    out = out.sort_values("distance_m", kind="stable")
    if limit is not None:
        out = out[out.distance_m <= limit]
    if k is not None:
        out = out.head(k)
    return out.to_dict("records")


def value_counts(series: pd.Series) -> dict[str, int]:
    return {str(k): int(v) for k, v in series.value_counts().items()}


def parse_euros(text: str | float | None) -> float | None:
    """'1.750.000,00 €' -> 1750000.0 (Spanish number format)."""
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return None
    digits = re.sub(r"[^\d,.]", "", str(text)).replace(".", "").replace(",", ".")
    return float(digits) if digits else None


def summary(rows: list[dict]) -> dict:
    return {
        "count": len(rows),
        "names": [r["name"] for r in rows],
        "distances_m": {r["name"]: r["distance_m"] for r in rows},
    }


# ------------------------------------------------------------------------------------- events
def fires_la(d: Data) -> dict:
    perimeter = union(d.vector("eaton_perimeter"), LA_UTM)
    eaton = d.vector("eaton_dins")
    pal = d.vector("palisades_dins")
    hospitals = d.vector("hospitals")
    la_hosp = hospitals[(hospitals.STATE == "CA") & (hospitals.COUNTY == "LOS ANGELES")]

    inside = intersecting(eaton, perimeter, LA_UTM)
    damaged = eaton[eaton.DAMAGE.isin(DAMAGED)]
    destroyed = eaton[eaton.DAMAGE == DESTROYED]
    e_near = {km: summary(named_distances(la_hosp, perimeter, LA_UTM, "NAME", limit=km * 1000)) for km in (1, 3, 5)}
    nearest = named_distances(la_hosp, perimeter, LA_UTM, "NAME", k=3)

    # destroyed structures within 3 km of any hospital
    hosp_union = union(la_hosp, LA_UTM)
    destroyed_near_hosp = int((distances_m(destroyed, hosp_union, LA_UTM) <= 3000).sum())

    eaton_out = {
        "dins_total": len(eaton),
        "dins_inside_perimeter": len(inside),
        "dins_inside_by_class": value_counts(inside.DAMAGE.map(DAMAGE_CLASS)),
        "damaged_inside_perimeter": int(inside.DAMAGE.isin(DAMAGED).sum()),
        "destroyed_inside_perimeter": int((inside.DAMAGE == DESTROYED).sum()),
        "damaged_total": len(damaged),
        "destroyed_total": len(destroyed),
        "by_class": value_counts(eaton.DAMAGE.map(DAMAGE_CLASS)),
        "destroyed_by_structure_type": value_counts(destroyed.STRUCTURETYPE),
        "damaged_by_structure_type": value_counts(damaged.STRUCTURETYPE),
        "perimeter_area_km2": round(perimeter.area / 1e6, 3),
        "hospitals_within_1km": e_near[1],
        "any_hospital_within_1km": e_near[1]["count"] > 0,
        "hospitals_within_3km": e_near[3],
        "hospitals_within_5km": e_near[5],
        "nearest_hospital": nearest[0],
        "destroyed_within_3km_of_hospital": destroyed_near_hosp,
    }

    p_destroyed = pal[pal.DAMAGE == DESTROYED]
    hull = shapely.union_all(p_destroyed.to_crs(LA_UTM).geometry.values).convex_hull
    p_near5 = summary(named_distances(la_hosp, hull, LA_UTM, "NAME", limit=5000))
    p_nearest3 = named_distances(la_hosp, hull, LA_UTM, "NAME", k=3)
    # a 250 m grid whose lines lie on whole multiples of 250 m of UTM zone 11N (the question pins the
    # origin, so the count is exact); no single cell holds 421 structures, so a cell's count cannot pass
    # for the number of cells
    xy = shapely.get_coordinates(p_destroyed.to_crs(LA_UTM).geometry.values)
    cells = pd.Series(
        list(zip(np.floor(xy[:, 0] / 250).astype(int), np.floor(xy[:, 1] / 250).astype(int), strict=False))
    )
    cell_counts = cells.value_counts()
    palisades_out = {
        "dins_total": len(pal),
        "destroyed_total": len(p_destroyed),
        "damaged_total": int(pal.DAMAGE.isin(DAMAGED).sum()),
        "by_class": value_counts(pal.DAMAGE.map(DAMAGE_CLASS)),
        "destroyed_by_structure_type": value_counts(p_destroyed.STRUCTURETYPE),
        "destroyed_hull_area_km2": round(hull.area / 1e6, 3),
        "hospitals_within_5km": p_near5,
        "nearest_hospitals_3": summary(p_nearest3),
        "nearest_hospital": p_nearest3[0],
        "grid_250m_max_destroyed": int(cell_counts.iloc[0]),
        "grid_250m_cells_with_destroyed": int(len(cell_counts)),
    }
    comparative = {
        "destroyed_palisades_minus_eaton": palisades_out["destroyed_total"] - eaton_out["destroyed_total"],
        "destroyed_ratio_palisades_to_eaton": round(palisades_out["destroyed_total"] / eaton_out["destroyed_total"], 3),
        "hospitals_5km_eaton": e_near[5]["count"],
        "hospitals_5km_palisades": p_near5["count"],
    }
    return {"eaton": eaton_out, "palisades": palisades_out, "comparative": comparative}


def lahaina(d: Data) -> dict:
    burn = union(d.vector("lahaina_burn"), MAUI_UTM)
    labels = d.vector("lahaina_labels")
    damaged = labels[labels["class"] == "Damaged Building"]
    hospitals = d.vector("hospitals")
    maui = hospitals[(hospitals.STATE == "HI") & (hospitals.COUNTY == "MAUI")]
    nearest = named_distances(maui, burn, MAUI_UTM, "NAME", k=1)[0]
    return {
        "lahaina": {
            "damaged_labels_total": len(damaged),
            "damaged_labels_in_burn_area": len(intersecting(damaged, burn, MAUI_UTM)),
            "damaged_labels_outside_burn_area": len(damaged) - len(intersecting(damaged, burn, MAUI_UTM)),
            "building_labels_in_burn_area": len(intersecting(labels[labels["class"] == "Building"], burn, MAUI_UTM)),
            "burn_area_km2": round(burn.area / 1e6, 3),
            "hospitals_within_10km": len(named_distances(maui, burn, MAUI_UTM, "NAME", limit=10_000)),
            "nearest_hospital": nearest,
        }
    }


def valencia(d: Data) -> dict:
    flood = union(d.vector("valencia_flood"), VALENCIA_UTM)
    health = d.vector("valencia_health")
    inside = named_distances(health, flood, VALENCIA_UTM, "equipamien", limit=0.0)
    within1 = named_distances(health, flood, VALENCIA_UTM, "equipamien", limit=1000)
    # a hospital: subclass 14, or named HOSPITAL (private hospitals have no subclass in this layer)
    is_hospital = (health.idsubclase == 14) | health.equipamien.str.upper().str.startswith("HOSPITAL")
    hospitals1 = named_distances(health[is_hospital], flood, VALENCIA_UTM, "equipamien", limit=1000)
    aoi03 = union(d.vector("valencia_aoi03"), VALENCIA_UTM)

    pts, lines, polys = d.vector("catarroja_points"), d.vector("catarroja_lines"), d.vector("catarroja_polygons")
    edu_polys = polys[polys.amenity.isin(EDUCATION)]
    edu_pts = pts[pts.amenity.isin(EDUCATION)]
    edu_in = pd.concat([intersecting(edu_polys, flood, VALENCIA_UTM), intersecting(edu_pts, flood, VALENCIA_UTM)])
    highway = lines[lines.highway.notna()]
    roads = lines[lines.highway.isin(DRIVABLE)]
    roads_in = intersecting(roads, flood, VALENCIA_UTM)
    # length of drivable road inside the flood (clipped), km
    clipped = shapely.intersection(roads.to_crs(VALENCIA_UTM).geometry.values, flood)
    bridges = lines[lines.highway.notna() & lines.bridge.notna() & (lines.bridge != "no")]
    road_bridges = bridges[bridges.highway.isin(DRIVABLE)]  # open to vehicles: no footway, steps, cycleway
    buildings = polys[polys.building.notna()]
    flooded_buildings = union(intersecting(buildings, flood, VALENCIA_UTM), VALENCIA_UTM)
    poles = pts[pts.power == "pole"]
    station = polys[polys.amenity == "fire_station"]
    station_d = float(distances_m(station, flood, VALENCIA_UTM).min())
    landuse = polys[polys.landuse.notna()].to_crs(VALENCIA_UTM)
    landuse_in = landuse.assign(geometry=shapely.intersection(landuse.geometry.values, flood))
    landuse_in = landuse_in[~landuse_in.geometry.is_empty]
    area_by = (landuse_in.geometry.area / 1e4).groupby(landuse_in.landuse).sum().sort_values(ascending=False)
    public = d.vector("catarroja_public")
    public_in = intersecting(public, flood, VALENCIA_UTM)
    euros = public_in.val_dany.map(parse_euros)
    return {
        "valencia": {
            "flood_area_km2": round(flood.area / 1e6, 2),
            "flood_area_in_aoi03_km2": round(flood.intersection(aoi03).area / 1e6, 2),
            "aoi03_area_km2": round(aoi03.area / 1e6, 2),
            "health_inside_flood": summary(inside),
            "health_within_1km_flood": summary(within1),
            "hospitals_within_1km_flood": summary(hospitals1),
        },
        "catarroja": {
            "education_total": len(edu_polys) + len(edu_pts),
            "education_in_flood": len(edu_in),
            "education_polygons_in_flood": len(intersecting(edu_polys, flood, VALENCIA_UTM)),
            "education_in_flood_names": sorted({str(n) for n in edu_in["name"].dropna()}),
            "highway_lines_total": len(highway),
            "highway_lines_in_flood": len(intersecting(highway, flood, VALENCIA_UTM)),
            "roads_total": len(roads),
            "roads_in_flood": len(roads_in),
            "roads_in_flood_km": round(float(shapely.length(clipped).sum()) / 1000, 2),
            "bridges_total": len(bridges),
            "bridges_in_flood": len(intersecting(bridges, flood, VALENCIA_UTM)),
            "road_bridges_total": len(road_bridges),
            "road_bridges_in_flood": len(intersecting(road_bridges, flood, VALENCIA_UTM)),
            "buildings_total": len(buildings),
            "buildings_in_flood": len(intersecting(buildings, flood, VALENCIA_UTM)),
            "buildings_in_flood_pct": round(
                100 * len(intersecting(buildings, flood, VALENCIA_UTM)) / len(buildings), 1
            ),
            "power_poles_total": len(poles),
            "power_poles_in_flood": len(intersecting(poles, flood, VALENCIA_UTM)),
            # 115 of the 116 poles stand in the flood, so that count cannot tell a filter from none;
            # poles within 100 m of a flooded building footprint (32) differ from every naive count
            # (all poles 116, near any building 37)
            "power_poles_within_100m_of_flooded_buildings": int(
                (distances_m(poles, flooded_buildings, VALENCIA_UTM) <= 100).sum()
            ),
            "fire_station_name": str(station.iloc[0]["name"]),
            "fire_station_in_flood": bool(station_d == 0.0),
            "fire_station_distance_to_flood_m": round(station_d, 1),
            "landuse_in_flood_ha": {str(k): round(float(v), 1) for k, v in area_by.items()},
            "landuse_in_flood_total_ha": round(float(area_by.sum()), 1),
            "landuse_top_class": str(area_by.index[0]),
            "public_buildings_total": len(public),
            "public_buildings_in_flood": summary([{"name": str(n), "distance_m": 0.0} for n in public_in.titulo]),
            "public_buildings_in_flood_damage_eur": round(float(euros.dropna().sum()), 2),
        },
    }


def hurst(d: Data) -> dict:
    import rasterio
    from pyproj import Geod

    with rasterio.open(d.path("hurst_dnbr")) as src:
        dnbr = src.read(1).astype("float64")
        transform, height = src.transform, src.height
    with rasterio.open(d.path("hurst_mask")) as src:
        mask = src.read(1) == 1
    with rasterio.open(d.path("hurst_pre")) as pre, rasterio.open(d.path("hurst_post")) as post:
        names = list(pre.descriptions)
        b8, b12 = names.index("B8") + 1, names.index("B12") + 1

        def nbr(ds: rasterio.io.DatasetReader) -> np.ndarray:
            nir, swir = ds.read(b8).astype("float64"), ds.read(b12).astype("float64")
            with np.errstate(invalid="ignore", divide="ignore"):
                return (nir - swir) / (nir + swir)

        recomputed = nbr(pre) - nbr(post)
    # geodesic pixel areas per row (EPSG:4326 grid)
    geod = Geod(ellps="WGS84")
    dx, dy = transform.a, -transform.e
    rows = np.arange(height)
    lat_top = transform.f - rows * dy
    areas = np.array([abs(geod.polygon_area_perimeter([0, dx, dx, 0], [t, t, t - dy, t - dy])[0]) for t in lat_top])
    pixel_area = np.repeat(areas[:, None], dnbr.shape[1], axis=1)
    inside = dnbr[mask]
    return {
        "hurst": {
            "mask_pixels": int(mask.sum()),
            "dnbr_mean_inside_mask": round(float(np.nanmean(inside)), 4),
            "dnbr_mean_outside_mask": round(float(np.nanmean(dnbr[~mask])), 4),
            "dnbr_recomputed_mean_inside_mask": round(float(np.nanmean(recomputed[mask])), 4),
            "dnbr_max_abs_difference": float(np.nanmax(np.abs(recomputed - dnbr))),
            "share_inside_ge_027": round(float((inside >= 0.27).mean()), 4),
            "share_inside_ge_044": round(float((inside >= 0.44).mean()), 4),
            "mask_area_km2": round(float(pixel_area[mask].sum()) / 1e6, 3),
            "area_ge_027_inside_km2": round(float(pixel_area[mask & (dnbr >= 0.27)].sum()) / 1e6, 3),
        }
    }


def fingerprint(d: Data) -> dict[str, str]:
    out = {}
    for key, rel in sorted(FILES.items()):
        h = hashlib.sha256(d.path(key).read_bytes()).hexdigest()[:12]
        out[rel] = h
    return out
