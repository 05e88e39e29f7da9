"""Area-of-interest files that bench tasks hand to a run (``TaskSpec.input_files``).

They are written at run time from the coordinates below (lon/lat, EPSG:4326), never committed as data
files: the runner writes them into the task's session and registers them as batch mode does (a polygon
file named like an area becomes the run's AOI), and ``bench/ground_truth_variants.py`` builds the same
polygons to count the features inside them. Plain shapely/GeoPandas; no GeoFaham import. The raster split's
input files (rasters and a districts layer) are written by ``bench.raster_inputs``, which ``write_input_file``
dispatches to."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import shapely

#: file name -> (description, polygon ring as (lon, lat) pairs)
AOI_FILES: dict[str, tuple[str, list[tuple[float, float]]]] = {
    "west_altadena_area.geojson": (
        "a pentagon over west Altadena, inside the Eaton fire",
        [(-118.165, 34.176), (-118.138, 34.172), (-118.128, 34.190), (-118.145, 34.205), (-118.166, 34.198)],
    ),
    "palisades_village_aoi.geojson": (
        "a pentagon over the Pacific Palisades village, inside the Palisades fire",
        [(-118.540, 34.035), (-118.518, 34.032), (-118.508, 34.048), (-118.522, 34.060), (-118.542, 34.052)],
    ),
    "catarroja_east_sketch.geojson": (
        "a pentagon sketched over the east edge of Catarroja (the El Bony industrial estate, the fire station), "
        "partly inside the EMSR773 flood",
        [(-0.4000, 39.3960), (-0.3880, 39.3930), (-0.3830, 39.4000), (-0.3905, 39.4075), (-0.3995, 39.4050)],
    ),
    "valencia_south_area.geojson": (
        "a pentagon over the southern districts of Valencia city (La Torre, Castellar-Oliveral, Horno de Alcedo, "
        "San Marcelino, La Fe), partly inside the EMSR773 flood",
        [(-0.4010, 39.4240), (-0.3560, 39.4240), (-0.3520, 39.4380), (-0.3720, 39.4475), (-0.4000, 39.4465)],
    ),
    "east_altadena_kinneloa.geojson": (
        "a pentagon over east Altadena and Kinneloa Mesa, mostly inside the Eaton fire (no DINS point within 11 m "
        "of its edge)",
        [(-118.1280, 34.1710), (-118.0930, 34.1695), (-118.0825, 34.1905), (-118.1010, 34.2075), (-118.1240, 34.1985)],
    ),
}


def aoi_polygon(name: str) -> shapely.Polygon:
    import shapely

    _, ring = AOI_FILES[name]
    return shapely.Polygon(ring)


def write_input_file(name: str, folder: Path) -> Path:
    """Write the AOI file ``name`` (GeoJSON, EPSG:4326) into ``folder``; returns its path. A name that is no AOI file
    is a raster input of ``bench.raster_inputs`` (a Hurst sample raster's copy, a generated population grid, the
    generated districts)."""
    import geopandas as gpd

    if name not in AOI_FILES:
        from .raster_inputs import write_raster_input

        return write_raster_input(name, folder)
    description, _ = AOI_FILES[name]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    gdf = gpd.GeoDataFrame({"name": [Path(name).stem], "note": [description]}, geometry=[aoi_polygon(name)], crs=4326)
    gdf.to_file(path, driver="GeoJSON")
    return path
