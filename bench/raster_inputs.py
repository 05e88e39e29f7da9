"""Raster (and admin-polygon) input files that the ``raster`` split's tasks hand to a run (``TaskSpec.input_files``).

An input-file name that is not an AOI file of ``bench.aoi_files`` is one of these, written at run time into the
task's session (never committed):

* a **copy of a Hurst sample raster** (``HURST_COPIES``): the Sentinel-2 pre/post composites, the dNBR raster or
  the fire mask of ``raster/hurst-2025/`` in the sample data (``bench.ground_truth.data_dir``: GEOFAHAM_DATA_DIR,
  else ``../shared/data``), byte for byte;
* a **generated population grid** (people per pixel) over l'Horta Sud, south of València, where the EMSR773 DANA
  flood lies: ``population_horta_sud_100m.tif`` (EPSG:4326, 0.001° pixels, about 86 m x 111 m, float32, nodata
  -99999) and ``population_horta_sud_utm30n.tif`` (EPSG:25830, 100 m pixels, int32, nodata -1). Both come from
  one smooth field (a low rural floor plus a Gaussian bump per town: València's southern districts, Paiporta,
  Catarroja, Alfafar, Sedaví, Benetússer, Massanassa, Albal, Picanya, Torrent, Aldaia, Silla, Alcàsser,
  Beniparrell) times seeded gamma noise with about 8 % empty pixels; the Albufera lagoon and the sea (east of
  0.328° W) are nodata. Each grid is scaled to a documented total (``GRIDS[...].total`` people over its valid
  pixels; the int grid exactly, by largest remainders);
* a **generated admin layer**, ``response_districts.geojson``: four named districts (field ``name``) tiling part
  of the flooded area, EPSG:4326.

The ground truth (``bench.ground_truth_raster``) builds the very same arrays with :func:`population_array` and the
same polygons with :func:`districts`. Plain numpy / rasterio / pyproj / shapely; no GeoFaham import."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HURST_DIR = "raster/hurst-2025"
#: input-file name -> the sample raster it is a copy of (relative to the sample data folder)
HURST_COPIES: dict[str, str] = {
    name: f"{HURST_DIR}/{name}"
    for name in (
        "HURST_20250107_dnbr.tif",
        "HURST_20250107_fire_mask.tif",
        "HURST_20250107_s2_pre_fire.tif",
        "HURST_20250107_s2_post_fire.tif",
    )
}

#: (name, lon, lat, people weight, sigma in km): the towns of the smooth field
TOWNS: tuple[tuple[str, float, float, float, float], ...] = (
    ("València sud", -0.372, 39.458, 9.0, 1.8),
    ("Paiporta", -0.418, 39.428, 4.0, 0.7),
    ("Catarroja", -0.403, 39.403, 4.0, 0.8),
    ("Alfafar", -0.386, 39.421, 3.5, 0.6),
    ("Sedaví", -0.383, 39.427, 2.5, 0.4),
    ("Benetússer", -0.396, 39.423, 3.5, 0.4),
    ("Massanassa", -0.400, 39.412, 2.5, 0.5),
    ("Albal", -0.414, 39.396, 2.8, 0.6),
    ("Picanya", -0.435, 39.435, 2.2, 0.6),
    ("Torrent", -0.468, 39.436, 5.0, 1.3),
    ("Aldaia", -0.462, 39.465, 3.0, 0.8),
    ("Silla", -0.411, 39.362, 3.0, 0.8),
    ("Alcàsser", -0.444, 39.369, 1.8, 0.5),
    ("Beniparrell", -0.411, 39.383, 1.0, 0.3),
)
RURAL_FLOOR = 0.15
KM_PER_DEG_LAT = 111.0
KM_PER_DEG_LON = 86.0  # at about 39.4° N
#: the Albufera lagoon (an ellipse: centre lon, lat, semi-axes in degrees) and the sea east of this longitude
LAGOON = (-0.345, 39.335, 0.030, 0.022)
SEA_EAST_OF = -0.328
EMPTY_SHARE = 0.08


@dataclass(frozen=True)
class Grid:
    """A generated population grid: its CRS, upper-left corner, pixel size, shape, dtype, nodata, total and seed."""

    crs: str
    west: float
    north: float
    pixel: float
    width: int
    height: int
    dtype: str
    nodata: float
    total: float
    seed: int

    @property
    def transform(self):  # noqa: ANN201 - an affine.Affine
        from rasterio.transform import from_origin

        return from_origin(self.west, self.north, self.pixel, self.pixel)


GRIDS: dict[str, Grid] = {
    "population_horta_sud_100m.tif": Grid(
        crs="EPSG:4326",
        west=-0.52,
        north=39.48,
        pixel=0.001,
        width=200,
        height=150,
        dtype="float32",
        nodata=-99999.0,
        total=412_000.0,
        seed=20241029,
    ),
    # about the same area in ETRS89 / UTM 30N: x 713,400 .. 730,600, y 4,356,600 .. 4,373,200 (100 m pixels)
    "population_horta_sud_utm30n.tif": Grid(
        crs="EPSG:25830",
        west=713_400.0,
        north=4_373_200.0,
        pixel=100.0,
        width=172,
        height=166,
        dtype="int32",
        nodata=-1,
        total=398_500,
        seed=20241030,
    ),
}

DISTRICTS_FILE = "response_districts.geojson"
#: the admin layer's districts: name -> ring (lon, lat); they tile part of the flood without overlapping
DISTRICTS: dict[str, list[tuple[float, float]]] = {
    "Paiporta": [(-0.445, 39.418), (-0.408, 39.418), (-0.408, 39.445), (-0.445, 39.445)],
    "Benetússer-Alfafar": [(-0.408, 39.415), (-0.370, 39.415), (-0.370, 39.440), (-0.408, 39.445), (-0.408, 39.418)],
    "Catarroja": [
        (-0.430, 39.390),
        (-0.385, 39.390),
        (-0.370, 39.415),
        (-0.408, 39.415),
        (-0.408, 39.418),
        (-0.430, 39.418),
    ],
    "Albal-Silla": [(-0.440, 39.355), (-0.380, 39.355), (-0.385, 39.390), (-0.430, 39.390), (-0.440, 39.375)],
}


# ------------------------------------------------------------------------------ population grids
def _smooth_field(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    field = np.full(lon.shape, RURAL_FLOOR, dtype="float64")
    for _name, x, y, weight, sigma in TOWNS:
        d2 = ((lon - x) * KM_PER_DEG_LON) ** 2 + ((lat - y) * KM_PER_DEG_LAT) ** 2
        field += weight * np.exp(-d2 / (2 * sigma**2))
    return field


def _water(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    x, y, a, b = LAGOON
    return (((lon - x) / a) ** 2 + ((lat - y) / b) ** 2 <= 1.0) | (lon > SEA_EAST_OF)


def pixel_centres(grid: Grid) -> tuple[np.ndarray, np.ndarray]:
    """Lon/lat of every pixel centre (transformed from the grid's CRS when it is projected)."""
    cols = grid.west + (np.arange(grid.width) + 0.5) * grid.pixel
    rows = grid.north - (np.arange(grid.height) + 0.5) * grid.pixel
    x, y = np.meshgrid(cols, rows)
    if grid.crs == "EPSG:4326":
        return x, y
    from pyproj import Transformer

    lon, lat = Transformer.from_crs(grid.crs, "EPSG:4326", always_xy=True).transform(x, y)
    return np.asarray(lon), np.asarray(lat)


def population_array(name: str) -> np.ndarray:
    """The people-per-pixel array of the grid ``name`` (nodata on water), scaled to its total."""
    grid = GRIDS[name]
    lon, lat = pixel_centres(grid)
    rng = np.random.default_rng(grid.seed)
    values = _smooth_field(lon, lat) * rng.gamma(2.0, 0.5, size=lon.shape)
    values[rng.random(lon.shape) < EMPTY_SHARE] = 0.0
    water = _water(lon, lat)
    values[water] = 0.0
    values *= grid.total / values.sum()
    if np.dtype(grid.dtype).kind == "f":
        out = values.astype(grid.dtype)
    else:  # whole people, summing exactly to the total: floor, then one more to the largest remainders
        floor = np.floor(values)
        short = int(round(grid.total - floor.sum()))
        order = np.argsort(-(values - floor), axis=None, kind="stable")[:short]
        floor.flat[order] += 1
        out = floor.astype(grid.dtype)
    out[water] = grid.nodata
    return out


def write_population_grid(name: str, folder: Path) -> Path:
    import rasterio

    grid = GRIDS[name]
    path = folder / name
    profile = {
        "driver": "GTiff",
        "width": grid.width,
        "height": grid.height,
        "count": 1,
        "dtype": grid.dtype,
        "crs": grid.crs,
        "transform": grid.transform,
        "nodata": grid.nodata,
        "compress": "deflate",
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(population_array(name), 1)
        dst.set_band_description(1, "population")
        dst.update_tags(1, units="people per pixel")
    return path


# ---------------------------------------------------------------------------------- admin layer
def districts():  # noqa: ANN201 - a GeoDataFrame
    """The admin layer's districts (``name``, ``code``), EPSG:4326."""
    import geopandas as gpd
    import shapely

    names = list(DISTRICTS)
    return gpd.GeoDataFrame(
        {"name": names, "code": [f"D{i + 1}" for i in range(len(names))]},
        geometry=[shapely.Polygon(DISTRICTS[n]) for n in names],
        crs=4326,
    )


# ------------------------------------------------------------------------------------- dispatch
def is_raster_input(name: str) -> bool:
    return name in HURST_COPIES or name in GRIDS or name == DISTRICTS_FILE


def write_raster_input(name: str, folder: Path, data_root: Path | None = None) -> Path:
    """Write the input file ``name`` into ``folder``; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    if name in HURST_COPIES:
        if data_root is None:
            from .ground_truth import data_dir

            data_root = data_dir()
        return Path(shutil.copyfile(data_root / HURST_COPIES[name], folder / name))
    if name in GRIDS:
        return write_population_grid(name, folder)
    if name == DISTRICTS_FILE:
        path = folder / name
        districts().to_file(path, driver="GeoJSON")
        return path
    raise KeyError(f"{name}: neither an AOI file nor a raster input of the bench")
