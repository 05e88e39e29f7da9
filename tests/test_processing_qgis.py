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
