"""Expected values of the ``raster`` split (``bench/raster.json``): questions about rasters the user has (burn
severity, people exposed, change between two images), computed here by code of its own (rasterio, numpy, pyproj,
GeoPandas, shapely; no import of ``geofaham_plugin``). ``expected_values.compute`` stores the result under ``raster``
in ``bench/expected.json`` (``python -m bench ground-truth`` regenerates it).

The questions were written without looking at how GeoFaham reads a question (nothing under its planning package, its
word files nor the paraphrase suite was read). Their input files (``bench.raster_inputs``) are copies of the Hurst
sample rasters and generated population grids and districts, written into the task's session at run time; the values
below are computed from the same files (the Hurst rasters in the sample data) and the very same generated arrays
(:func:`bench.raster_inputs.population_array`, :func:`bench.raster_inputs.districts`).

Definitions (each expectation's description repeats the one it uses):

* **Hurst rasters** (225 x 225 pixels, EPSG:4326, 0.000179663°, about 20 m): ``HURST_20250107_dnbr.tif`` (dNBR =
  NBR_pre - NBR_post), ``HURST_20250107_fire_mask.tif`` (1 = inside the fire perimeter: **the mask**), the Sentinel-2
  composites ``..._s2_pre_fire.tif`` / ``..._s2_post_fire.tif`` (bands B2, B3, B4, B8, B12, reflectance x 10,000).
  Statistics "inside the mask" are over the 10,225 mask pixels; "the whole image" (scene, tile) is all 50,625
  pixels, burned or not.
* **NBR** = (B8 - B12) / (B8 + B12) (bands 4 and 5), **dNBR** = NBR_pre - NBR_post; **NDVI** = (B8 - B4) / (B8 + B4)
  (bands 4 and 3), its **drop** = NDVI_pre - NDVI_post (positive: less green after the fire).
* **USGS dNBR severity classes**: unburned dNBR < 0.1 (enhanced regrowth included), low 0.1 <= dNBR < 0.27,
  moderate-low 0.27 <= dNBR < 0.44, moderate-high 0.44 <= dNBR < 0.66, high dNBR >= 0.66; "moderate-low or worse" is
  dNBR >= 0.27, "above X" is dNBR >= X (no pixel lies exactly on a threshold that would change a figure).
* **shares** in percent of mask pixels (the pixels' areas differ by under 0.1 % across the tile), one decimal.
* **areas** geodesic on the WGS84 ellipsoid (``pyproj.Geod``), one area per pixel row of the EPSG:4326 grid.
* **median** and **percentiles**: numpy's (linear interpolation between order statistics) over the mask pixels.
* **people**: the sum of the grid's pixel values (nodata left out) whose **pixel centre** lies in the area
  (``rasterio.features.geometry_mask``, ``all_touched=False``); no pixel is split. The area is the EMSR773 observed
  flood (``valencia-2024/emsr773_observed_flood_merged.geojson``, made valid, unioned) in the grid's CRS; "within N
  km of the flood" is the flood buffered by N km in ETRS89 / UTM 30N (EPSG:25830), the flood itself included; a
  district's people in the flood are those whose pixel centre lies in the district and in the flood. Rounded to
  whole people.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .raster_inputs import DISTRICTS_FILE, GRIDS, HURST_COPIES, districts, population_array

if TYPE_CHECKING:
    from affine import Affine
    from shapely.geometry.base import BaseGeometry

FLOOD_FILE = "valencia-2024/emsr773_observed_flood_merged.geojson"
GEO_GRID = "population_horta_sud_100m.tif"
UTM_GRID = "population_horta_sud_utm30n.tif"
#: USGS dNBR classes: name -> [low, high)
SEVERITY: dict[str, tuple[float, float]] = {
    "unburned": (-np.inf, 0.1),
    "low": (0.1, 0.27),
    "moderate-low": (0.27, 0.44),
    "moderate-high": (0.44, 0.66),
    "high": (0.66, np.inf),
}


def _root(root: Path | None) -> Path:
    if root is not None:
        return root
    from .ground_truth import data_dir

    return data_dir()


# ------------------------------------------------------------------------------------------- Hurst
def _read(root: Path, name: str, band: int = 1) -> np.ndarray:
    import rasterio

    with rasterio.open(root / HURST_COPIES[name]) as src:
        return src.read(band).astype("float64")


def _band(root: Path, name: str, description: str) -> np.ndarray:
    import rasterio

    with rasterio.open(root / HURST_COPIES[name]) as src:
        return src.read(list(src.descriptions).index(description) + 1).astype("float64")


def pixel_areas_m2(transform: Affine, height: int, width: int) -> np.ndarray:
    """Geodesic area of every pixel of an EPSG:4326 grid (one value per row)."""
    from pyproj import Geod

    geod = Geod(ellps="WGS84")
    dx, dy = transform.a, -transform.e
    tops = transform.f - np.arange(height) * dy
    rows = [abs(geod.polygon_area_perimeter([0.0, dx, dx, 0.0], [t, t, t - dy, t - dy])[0]) for t in tops]
    return np.repeat(np.asarray(rows)[:, None], width, axis=1)


def _index(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return (a - b) / (a + b)


def hurst_values(root: Path) -> dict:
    import rasterio

    with rasterio.open(root / HURST_COPIES["HURST_20250107_dnbr.tif"]) as src:
        dnbr = src.read(1).astype("float64")
        areas = pixel_areas_m2(src.transform, src.height, src.width)
    mask = _read(root, "HURST_20250107_fire_mask.tif") == 1
    assert not np.isnan(dnbr).any()
    pre, post = "HURST_20250107_s2_pre_fire.tif", "HURST_20250107_s2_post_fire.tif"
    nbr_pre = _index(_band(root, pre, "B8"), _band(root, pre, "B12"))
    nbr_post = _index(_band(root, post, "B8"), _band(root, post, "B12"))
    ndvi_pre = _index(_band(root, pre, "B8"), _band(root, pre, "B4"))
    ndvi_post = _index(_band(root, post, "B8"), _band(root, post, "B4"))
    recomputed = nbr_pre - nbr_post
    inside = dnbr[mask]

    def share(cond: np.ndarray) -> float:
        return round(100.0 * float(cond[mask].sum()) / float(mask.sum()), 1)

    def area(cond: np.ndarray) -> float:
        return float(areas[cond].sum())

    classes = {name: (dnbr >= lo) & (dnbr < hi) for name, (lo, hi) in SEVERITY.items()}
    return {
        "mask_pixels": int(mask.sum()),
        "mean_dnbr_mask": round(float(inside.mean()), 4),
        "median_dnbr_mask": round(float(np.median(inside)), 4),
        "p90_dnbr_mask": round(float(np.percentile(inside, 90)), 4),
        "max_dnbr_mask": round(float(inside.max()), 4),
        "mean_dnbr_image": round(float(dnbr.mean()), 4),
        "median_dnbr_image": round(float(np.median(dnbr)), 4),
        "median_dnbr_outside_mask": round(float(np.median(dnbr[~mask])), 4),
        "share_ge_027_pct": share(dnbr >= 0.27),
        "share_ge_044_pct": share(dnbr >= 0.44),
        "class_area_mask_ha": {name: round(area(c & mask) / 1e4, 2) for name, c in classes.items()},
        "class_share_mask_pct": {name: share(c) for name, c in classes.items()},
        "area_ge_044_mask_km2": round(area(mask & (dnbr >= 0.44)) / 1e6, 3),
        "area_ge_066_mask_ha": round(area(mask & (dnbr >= 0.66)) / 1e4, 2),
        "area_ge_027_image_km2": round(area(dnbr >= 0.27) / 1e6, 3),
        "mask_area_km2": round(area(mask) / 1e6, 3),
        "recomputed_mean_dnbr_mask": round(float(np.nanmean(recomputed[mask])), 4),
        "recomputed_share_ge_027_pct": share(recomputed >= 0.27),
        "ndvi_drop_mean_mask": round(float(np.nanmean((ndvi_pre - ndvi_post)[mask])), 4),
        "ndvi_pre_mean_mask": round(float(np.nanmean(ndvi_pre[mask])), 4),
        "ndvi_post_mean_mask": round(float(np.nanmean(ndvi_post[mask])), 4),
    }


# -------------------------------------------------------------------------------------- population
def flood(root: Path, epsg: int) -> BaseGeometry:
    import geopandas as gpd
    import shapely

    gdf = gpd.read_file(root / FLOOD_FILE)
    gdf = gdf.set_crs(4326) if gdf.crs is None else gdf
    return shapely.union_all(gdf.to_crs(epsg).geometry.make_valid().values)


def people_in(name: str, geometry: BaseGeometry, all_touched: bool = False) -> float:
    """People of the grid ``name`` whose pixel centre lies in ``geometry`` (given in the grid's CRS)."""
    from rasterio.features import geometry_mask

    grid = GRIDS[name]
    values = population_array(name).astype("float64")
    inside = geometry_mask(
        [geometry], out_shape=values.shape, transform=grid.transform, invert=True, all_touched=all_touched
    )
    return float(values[inside & (values != grid.nodata)].sum())


def _in_crs(geometry: BaseGeometry, src: int, dst: str) -> BaseGeometry:
    import geopandas as gpd

    return gpd.GeoSeries([geometry], crs=src).to_crs(dst).iloc[0]


def population_values(root: Path) -> dict:
    flood_utm = flood(root, 25830)
    flood_geo = _in_crs(flood_utm, 25830, "EPSG:4326")
    geo_total = float(population_array(GEO_GRID)[population_array(GEO_GRID) != GRIDS[GEO_GRID].nodata].sum())
    inside = people_in(GEO_GRID, flood_geo)
    within = {km: people_in(GEO_GRID, _in_crs(flood_utm.buffer(km * 1000.0), 25830, "EPSG:4326")) for km in (1, 2)}
    d = districts().to_crs(25830)
    by_district = {
        n: round(people_in(GEO_GRID, _in_crs(g.intersection(flood_utm), 25830, "EPSG:4326")))
        for n, g in zip(d["name"], d.geometry, strict=True)
    }
    district_totals = {
        n: round(people_in(GEO_GRID, _in_crs(g, 25830, "EPSG:4326")))
        for n, g in zip(d["name"], d.geometry, strict=True)
    }
    return {
        "geo_grid_total": round(geo_total),
        "utm_grid_total": round(float(GRIDS[UTM_GRID].total)),
        "inside_flood": round(inside),
        "inside_flood_all_touched": round(people_in(GEO_GRID, flood_geo, all_touched=True)),
        "within_1km_flood": round(within[1]),
        "within_2km_flood": round(within[2]),
        "share_inside_flood_pct": round(100.0 * inside / geo_total, 1),
        "flood_by_district": by_district,
        "district_totals": district_totals,
        "utm_inside_flood": round(people_in(UTM_GRID, flood_utm)),
        "utm_inside_flood_all_touched": round(people_in(UTM_GRID, flood_utm, all_touched=True)),
        "districts_file": DISTRICTS_FILE,
    }


def raster(root: Path | None = None) -> dict:
    root = _root(root)
    return {"raster": {"hurst": hurst_values(root), "population": population_values(root)}}
