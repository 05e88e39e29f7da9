"""Vector operations beyond the templates: clip, dissolve, sum by attribute, DBSCAN clusters in metres."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
from shapely.geometry import LineString, Point, box

from geofaham_plugin.core.engines import vector_ops as ops
from geofaham_plugin.core.errors import ToolFailed


def test_dbscan_finds_clusters_in_metres_whatever_the_crs():
    rng = np.random.default_rng(1)
    lon, lat = -118.15, 34.19
    m_per_deg_lon, m_per_deg_lat = 111_320 * np.cos(np.radians(lat)), 110_950
    points = []
    for cx, cy, n in ((0, 0, 30), (3000, 0, 20)):  # two clusters 3 km apart, ~50 m spread
        for dx, dy in rng.normal(0, 50, size=(n, 2)):
            points.append(Point(lon + (cx + dx) / m_per_deg_lon, lat + (cy + dy) / m_per_deg_lat))
    points += [Point(lon + 1500 / m_per_deg_lon, lat + 1500 / m_per_deg_lat)]  # one isolated point
    gdf = gpd.GeoDataFrame(geometry=points, crs=4326)
    clusters, noise = ops.dbscan(gdf, eps_m=150, min_samples=5)
    assert list(clusters["count"]) == [30, 20] and noise == 1 and clusters.crs.to_epsg() == 4326
    # the same points in UTM give the same clusters: eps is metres, not CRS units
    utm, noise_utm = ops.dbscan(gdf.to_crs(32611), eps_m=150, min_samples=5)
    assert list(utm["count"]) == [30, 20] and noise_utm == 1
    merged, _ = ops.dbscan(gdf, eps_m=5000, min_samples=5)
    assert list(merged["count"]) == [51]


def test_clip_dissolve_and_sum():
    roads = gpd.GeoDataFrame(
        {"kind": ["a", "b", "a"]},
        geometry=[LineString([(0, 0), (10, 0)]), LineString([(0, 5), (4, 5)]), LineString([(20, 0), (30, 0)])],
        crs=32630,
    )
    flood = gpd.GeoDataFrame(geometry=[box(2, -1, 8, 6)], crs=32630)
    clipped = ops.clip(roads, flood)
    assert sorted(round(g.length, 6) for g in clipped.geometry) == [2.0, 6.0]
    merged = ops.dissolve(roads, "kind").set_index("kind")
    assert merged.loc["a", "count"] == 2 and merged.loc["b", "count"] == 1
    hospitals = gpd.GeoDataFrame(
        {"BEDS": [100, 250, -999, None], "TYPE": ["x", "y", "x", "x"]}, geometry=[Point(0, 0)] * 4, crs=4326
    )
    table = ops.sum_by(hospitals, "BEDS", "TYPE").set_index("value")
    assert table.loc["y", "sum"] == 250 and table.loc["x", "count"] == 2  # None is not counted
    with pytest.raises(ToolFailed, match="no field 'beds'"):
        ops.sum_by(hospitals, "beds", None)


# ------------------------------------------------------------------------------------- identifiers (issue 28)
def test_identifier_vocabulary_from_names_and_values():
    from geofaham_plugin.core.domain.identifiers import is_identifier

    for name in ("clinic_id", "osm_id", "fid", "OBJECTID", "stationID", "feature_id", "identifica", "idsubclase"):
        assert is_identifier(name), name
    for name in ("beds", "POPULATION", "paid", "VALID", "grid", "idle", "capacity", "val_dany", "cod_catch"):
        assert not is_identifier(name), name
    assert is_identifier("n", list(range(101, 121)))  # a row number whatever it is called
    assert not is_identifier("population", [1200, 3400, 5000, 8000, 150, 90, 12_000, 4, 77, 31])  # distinct, gaps
    assert not is_identifier("floors", [1, 2, 3])  # too few features to tell a row number from a measure


def test_a_sum_or_mean_of_an_identifier_of_a_real_file_is_refused_and_a_measure_is_not():
    """València's health facilities: identifica (a key) and telefono (a phone number) are numbers that name a
    facility; their sum or mean was reported as an answer. HIFLD hospitals: BEDS is a measure and still adds up."""
    from conftest import SHARED_DATA

    from geofaham_plugin.core.engines.layers import describe_fields

    health = gpd.read_file(SHARED_DATA / "valencia-2024" / "valencia_city_health_facilities.geojson")
    with pytest.raises(ToolFailed, match="identifica is an identifier") as caught:
        ops.stats(health, "identifica", "sum", None)
    assert caught.value.hint and "\n" not in str(caught.value)
    with pytest.raises(ToolFailed, match="telefono is an identifier"):
        ops.stats(health, "telefono", "mean", None)
    with pytest.raises(ToolFailed, match="identifica is an identifier"):
        ops.sum_by(health, "identifica", None)
    assert ops.stats(health, "identifica", "max", None)[1]["value"] == 7930  # the largest key is no sum of keys
    ids = {f.name for f in describe_fields(health) if f.identifier}
    assert ids == {"identifica", "idclase", "codvia", "idsubclase", "telefono"}, ids
    hospitals = gpd.read_file(SHARED_DATA / "poi" / "hifld-hospitals" / "hospitals_la_county_maui_county.geojson")
    beds = hospitals["BEDS"].where(hospitals["BEDS"] >= 0)
    assert ops.stats(hospitals, "BEDS", "sum", None)[1]["value"] == pytest.approx(
        float(hospitals["BEDS"][hospitals["BEDS"] != -999].sum())
    )  # -999: unknown
    assert ops.stats(hospitals.assign(BEDS=beds), "BEDS", "mean", None)[1]["value"] == pytest.approx(beds.mean())
