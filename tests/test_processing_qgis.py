"""The Processing algorithms run the agents' engine code on QGIS layers."""

from __future__ import annotations

import sys

import pytest
from qgis.core import QgsApplication, QgsVectorLayer

from conftest import SHARED_DATA

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
    assert ids == {"geofaham:buffermetres", "geofaham:withindistance", "geofaham:nearestk", "geofaham:damagecounts"}


def test_within_distance_gives_the_same_hospitals_as_the_agent(processing):
    out = processing.run("geofaham:withindistance", {"INPUT": HOSPITALS, "REFERENCE": EATON, "DISTANCE": 5000,
                                                      "OUTPUT": "memory:"})["OUTPUT"]
    rows = sorted((f["distance_m"], f["NAME"]) for f in out.getFeatures())
    assert len(rows) == 7 and rows[0][1] == "AURORA LAS ENCINAS HOSPITAL" and abs(rows[0][0] - 2090) < 15


def test_buffer_in_metres_on_a_utm_layer(processing):
    out = processing.run("geofaham:buffermetres", {"INPUT": EATON, "DISTANCE": 1000, "OUTPUT": "memory:"})["OUTPUT"]
    (feature,) = list(out.getFeatures())
    assert out.crs().authid() == "EPSG:26911"
    assert 62.9e6 + 30e6 < feature.geometry().area() < 62.9e6 + 60e6  # UTM m² ~ true m² here


def test_damage_counts_inside_the_perimeter(processing):
    out = processing.run("geofaham:damagecounts", {"INPUT": DINS, "FIELD": "DAMAGE", "AREA": EATON,
                                                    "OUTPUT": "memory:"})["OUTPUT"]
    counts = {f["damage_class"]: f["count"] for f in out.getFeatures()}
    assert sum(counts.values()) == 5431  # README: 5,431 of the points lie inside the adjusted perimeter
    assert set(counts) <= {"none", "affected", "minor", "major", "destroyed", "unknown"}
