"""The Processing algorithms run the agents' engine code on QGIS layers."""

from __future__ import annotations

import sys

import pytest
from conftest import SHARED_DATA
from qgis.core import QgsApplication

sys.path.append("/usr/share/qgis/python/plugins")


@pytest.fixture(scope="module")
def processing(qgis_app):
    import processing
    from processing.core.Processing import Processing

    from geofaham_plugin.ui.processing.provider import GeoFahamProvider

    Processing.initialize()
    provider = GeoFahamProvider()
    QgsApplication.processingRegistry().addProvider(provider)
    yield processing
    QgsApplication.processingRegistry().removeProvider(provider)


EATON = str(SHARED_DATA / "eaton-2025" / "eaton_adjusted_fire_perimeter.geojson")
HOSPITALS = str(SHARED_DATA / "poi" / "hifld-hospitals" / "hospitals_la_county_maui_county.geojson")
DINS = str(SHARED_DATA / "eaton-2025" / "DINS_2025_Eaton_Public_View_2025-01-14.geojson")


def test_algorithms_are_registered(processing):
    ids = {a.id() for a in QgsApplication.processingRegistry().providerById("geofaham").algorithms()}
    assert ids == {
        "geofaham:buffermetres",
        "geofaham:withindistance",
        "geofaham:nearestk",
        "geofaham:damagecounts",
        "geofaham:roadreachability",
        "geofaham:spectralindex",
        "geofaham:burnseverity",
    }


def test_within_distance_gives_the_same_hospitals_as_the_agent(processing):
    out = processing.run(
        "geofaham:withindistance", {"INPUT": HOSPITALS, "REFERENCE": EATON, "DISTANCE": 5000, "OUTPUT": "memory:"}
    )["OUTPUT"]
    rows = sorted((f["distance_m"], f["NAME"]) for f in out.getFeatures())
    assert len(rows) == 7 and rows[0][1] == "AURORA LAS ENCINAS HOSPITAL" and abs(rows[0][0] - 2090) < 15


def test_buffer_in_metres_on_a_utm_layer(processing):
    out = processing.run("geofaham:buffermetres", {"INPUT": EATON, "DISTANCE": 1000, "OUTPUT": "memory:"})["OUTPUT"]
    (feature,) = list(out.getFeatures())
    assert out.crs().authid() == "EPSG:26911"
    assert 62.9e6 + 30e6 < feature.geometry().area() < 62.9e6 + 60e6  # UTM m² ~ true m² here


def test_damage_counts_inside_the_perimeter(processing):
    out = processing.run(
        "geofaham:damagecounts", {"INPUT": DINS, "FIELD": "DAMAGE", "AREA": EATON, "OUTPUT": "memory:"}
    )["OUTPUT"]
    counts = {f["damage_class"]: f["count"] for f in out.getFeatures()}
    assert sum(counts.values()) == 5431  # README: 5,431 of the points lie inside the adjusted perimeter
    assert set(counts) <= {"none", "affected", "minor", "major", "destroyed", "unknown"}


HURST = SHARED_DATA / "raster" / "hurst-2025"


def test_burn_severity_from_the_hurst_pair_uses_the_raster_agent_code(processing, tmp_path):
    import numpy as np
    import rasterio

    out = tmp_path / "severity.tif"
    result = processing.run(
        "geofaham:burnseverity",
        {
            "PRE": str(HURST / "HURST_20250107_s2_pre_fire.tif"),
            "POST": str(HURST / "HURST_20250107_s2_post_fire.tif"),
            "OUTPUT": str(out),
        },
    )
    assert "km²" in result["SUMMARY"]
    with rasterio.open(out) as src, rasterio.open(HURST / "HURST_20250107_dnbr.tif") as ref:
        classes = src.read(1)
        dnbr = ref.read(1)
    valid = classes != 255
    expected = np.digitize(dnbr, [0.1, 0.27, 0.44, 0.66])
    assert classes.shape == dnbr.shape and (classes[valid] == expected[valid]).mean() > 0.999


def test_spectral_index(processing, tmp_path):
    import rasterio

    out = tmp_path / "ndvi.tif"
    processing.run(
        "geofaham:spectralindex",
        {"INPUT": str(HURST / "HURST_20250107_s2_pre_fire.tif"), "INDEX": 0, "OUTPUT": str(out)},
    )
    with rasterio.open(out) as src:
        values = src.read(1)
    assert values.shape == (225, 225) and -1.0 <= float(values[~(values != values)].min()) <= 1.0


# a 3 x 3 street grid 100 m apart (tests/test_network.py's), written in EPSG:4326 from a transverse Mercator with
# scale 1 at its corner (100 m there is 100 m on the ellipsoid to < 1 mm); the middle west-east street is one-way
# westward; a flood around junction (100, 0) cuts both halves of the south street and the piece north of it
LOCAL = "+proj=tmerc +lat_0=39.4 +lon_0=-0.4 +k=1 +x_0=0 +y_0=0 +ellps=WGS84 +units=m +no_defs"


def _grid_files(tmp_path):
    import geopandas as gpd
    from shapely.geometry import LineString, Point, box

    streets = [("-1" if y == 100 else None, LineString([(0, y), (100, y), (200, y)])) for y in (0, 100, 200)]
    streets += [(None, LineString([(x, 0), (x, 100), (x, 200)])) for x in (0, 100, 200)]
    layers = {
        "roads": gpd.GeoDataFrame(
            {"highway": ["residential"] * 6, "oneway": [o for o, _ in streets], "name": [f"s{i}" for i in range(6)]},
            geometry=[g for _, g in streets],
            crs=LOCAL,
        ),
        "hazard": gpd.GeoDataFrame({"kind": ["flood"]}, geometry=[box(90, -10, 110, 10)], crs=LOCAL),
        "origins": gpd.GeoDataFrame(
            {"name": ["school A", "school B"]}, geometry=[Point(0, 0), Point(100, 0)], crs=LOCAL
        ),
        "targets": gpd.GeoDataFrame(
            {"name": ["fire station", "clinic"]}, geometry=[Point(200, 0), Point(100, 0)], crs=LOCAL
        ),
    }
    paths = {}
    for name, gdf in layers.items():
        paths[name] = str(tmp_path / f"{name}.gpkg")
        gdf.to_crs(4326).to_file(paths[name], driver="GPKG")
    return paths


def test_road_reachability_on_a_grid_with_a_known_cut(processing, tmp_path):
    from qgis.core import NULL

    files = _grid_files(tmp_path)
    params = {"ROADS": files["roads"], "HAZARD": files["hazard"], "OUTPUT": "memory:", "CUT_ROADS": "memory:"}
    result = processing.run(
        "geofaham:roadreachability", params | {"ORIGINS": files["origins"], "TARGETS": files["targets"]}
    )
    rows = {(f["origin_name"], f["target_name"]): f for f in result["OUTPUT"].getFeatures()}
    assert set(rows) == {(o, t) for o in ("school A", "school B") for t in ("fire station", "clinic")}
    station = rows[("school A", "fire station")]
    # before: 200 m along the south street; after: round by the north street (the middle one runs westward only)
    assert station["before_m"] == pytest.approx(200.0, abs=0.05) and station["after_m"] == pytest.approx(
        600.0, abs=0.05
    )
    assert station["status"] == "detour" and station["detour_ratio"] == pytest.approx(3.0)
    assert station["before_min"] == pytest.approx(0.4) and station["after_min"] == pytest.approx(1.2)  # 30 km/h
    clinic = rows[("school A", "clinic")]
    assert clinic["status"] == "cut off" and clinic["before_m"] == pytest.approx(100.0, abs=0.05)
    assert clinic["after_m"] == NULL and clinic["detour_ratio"] == NULL
    # school B stands on the flooded junction: every road from it is cut; the clinic beside it stays at 0 m
    assert rows[("school B", "fire station")]["status"] == "cut off"
    assert rows[("school B", "clinic")]["status"] == "reachable" and rows[("school B", "clinic")]["after_m"] == 0.0
    assert not any(f["origin_isolated"] for f in rows.values())
    point = station.geometry().asPoint()
    assert (point.x(), point.y()) == (pytest.approx(-0.4), pytest.approx(39.4))
    assert result["CUT_SEGMENTS"] == 3 and result["ISOLATED_ORIGINS"] == 0
    cut = {f["name"]: (f["cut_segments"], f["cut_m"]) for f in result["CUT_ROADS"].getFeatures()}
    assert cut == {"s0": (2, pytest.approx(200.0, abs=0.1)), "s4": (1, pytest.approx(100.0, abs=0.1))}
    assert result["CUT_ROADS"].geometryType() == 1  # lines

    # without targets: each origin against the main road network
    main = processing.run("geofaham:roadreachability", params | {"ORIGINS": files["origins"]})
    statuses = {f["origin_name"]: (f["target_name"], f["status"]) for f in main["OUTPUT"].getFeatures()}
    assert statuses == {"school A": ("main road network", "reachable"), "school B": ("main road network", "cut off")}
    assert main["ISOLATED_ORIGINS"] == 1 and main["CUT_SEGMENTS"] == 3
