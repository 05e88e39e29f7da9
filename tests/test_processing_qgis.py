"""The Processing algorithms run the agents' engine code on QGIS layers."""

from __future__ import annotations

import math
import sys

import geopandas as gpd
import pytest
import shapely
import shapely.ops
from conftest import SHARED_DATA
from pyproj import CRS, Geod, Transformer
from qgis.core import QgsApplication, QgsProcessingException, QgsWkbTypes
from shapely.geometry import LineString, MultiPolygon, Point, Polygon, box

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
        "geofaham:countfeatures",
        "geofaham:roadreachability",
        "geofaham:spectralindex",
        "geofaham:burnseverity",
        "geofaham:reprojectnamed",
        "geofaham:areaweightedgrid",
        "geofaham:removeslivers",
        "geofaham:filemanifest",
        "geofaham:restorefieldnames",
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


def test_count_features_in_total_by_a_field_and_of_nothing(processing, tmp_path):
    total = processing.run("geofaham:countfeatures", {"INPUT": DINS, "OUTPUT": "memory:"})
    assert total["TOTAL"] == 5805 and [(f["value"], f["count"]) for f in total["OUTPUT"].getFeatures()] == [
        ("all", 5805)
    ]
    by = processing.run("geofaham:countfeatures", {"INPUT": DINS, "FIELD": "DAMAGE", "OUTPUT": "memory:"})["OUTPUT"]
    counts = {f["value"]: f["count"] for f in by.getFeatures()}
    assert counts["Destroyed (>50%)"] == 2722 and sum(counts.values()) == 5805
    empty = _write(tmp_path, "empty.gpkg", gpd.GeoDataFrame({"name": []}, geometry=[], crs=4326))
    nothing = processing.run("geofaham:countfeatures", {"INPUT": empty, "OUTPUT": "memory:"})
    assert nothing["TOTAL"] == 0 and [f["count"] for f in nothing["OUTPUT"].getFeatures()] == [0]  # 0 is an answer


def test_buffer_in_metres_one_buffer_per_feature(processing):
    out = processing.run(
        "geofaham:buffermetres", {"INPUT": HOSPITALS, "DISTANCE": 500, "DISSOLVE": False, "OUTPUT": "memory:"}
    )["OUTPUT"]
    from qgis.core import QgsVectorLayer

    hospitals = QgsVectorLayer(HOSPITALS, "hospitals", "ogr")
    assert out.featureCount() == hospitals.featureCount() > 1 and "NAME" in out.fields().names()


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


# ------------------------------------------------------------------------------------ field-data transforms
GEOD = Geod(ellps="WGS84")
FIJI = Polygon([(179, -17), (-179, -17), (-179, -16), (179, -16)])  # a 2° box written across ±180
FIJI_UNWRAPPED = Polygon([(179, -17), (181, -17), (181, -16), (179, -16)])


def _write(tmp_path, name, gdf, **kw) -> str:
    path = tmp_path / name
    gdf.to_file(path, engine="pyogrio", **kw)
    return str(path)


def _geometries(layer) -> list:
    return [shapely.from_wkb(bytes(f.geometry().asWkb())) for f in layer.getFeatures()]


def _fails(processing, algorithm: str, parameters: dict) -> str:
    """Runs ``algorithm`` expecting a QgsProcessingException; returns the error the user is shown."""
    from qgis.core import QgsProcessingContext, QgsProcessingFeedback

    alg = QgsApplication.processingRegistry().createAlgorithmById(algorithm)
    context, feedback = QgsProcessingContext(), QgsProcessingFeedback()
    with pytest.raises(QgsProcessingException) as caught:
        alg.prepare(parameters, context, feedback)
        alg.runPrepared(parameters, context, feedback)
    return str(caught.value)


@pytest.fixture
def fiji(tmp_path) -> str:
    return _write(tmp_path, "fiji.geojson", gpd.GeoDataFrame({"name": ["reef"]}, geometry=[FIJI], crs=4326))


@pytest.mark.parametrize("target", ["utm", "EPSG:3832", "equal-area"])
def test_reproject_a_polygon_across_the_antimeridian_keeps_it_the_small_valid_box_it_is(processing, fiji, target):
    result = processing.run("geofaham:reprojectnamed", {"INPUT": fiji, "TARGET": target, "OUTPUT": "memory:"})
    out = result["OUTPUT"]
    (geom,) = _geometries(out)
    assert geom.is_valid and out.featureCount() == 1
    if target != "equal-area":  # EASE-Grid 2.0 Global has its seam at ±180: two parts there, one box elsewhere
        assert len(geom.geoms) == 1  # the parts cut at ±180 joined again, not two a few nanometres apart
    if target == "utm":  # the layer's own zone: at ±180° (zone 60 or 1), not zone 31 on the other side of the globe
        assert result["CRS"] in ("EPSG:32701", "EPSG:32760") and out.crs().authid() == result["CRS"]
    crs = CRS.from_wkt(out.crs().toWkt())
    if target == "EPSG:3832":  # PDC Mercator, centred on 150°E: the box projected corner by corner
        to_pdc = Transformer.from_crs(4326, 3832, always_xy=True)
        truth = Polygon(zip(*to_pdc.transform([179, 181, 181, 179], [-17, -17, -16, -16]), strict=True))
        assert geom.symmetric_difference(truth).area < 1e-4 * truth.area
    else:  # back on the ellipsoid, the projected shape has the box's geodesic area
        lonlat = shapely.ops.transform(Transformer.from_crs(crs, 4326, always_xy=True).transform, geom)
        true_area = abs(GEOD.geometry_area_perimeter(FIJI_UNWRAPPED)[0])
        assert abs(abs(GEOD.geometry_area_perimeter(lonlat)[0]) - true_area) < 1e-3 * true_area
        assert target != "utm" or math.isclose(geom.area, true_area, rel_tol=3e-3)  # UTM's scale 2° off its meridian


def test_reproject_to_degrees_splits_at_the_antimeridian_and_an_unknown_crs_is_one_line(processing, tmp_path):
    to_pdc = Transformer.from_crs(4326, 3832, always_xy=True)
    box_pdc = Polygon(zip(*to_pdc.transform([179, 181, 181, 179], [-17, -17, -16, -16]), strict=True))
    path = _write(tmp_path, "pdc.gpkg", gpd.GeoDataFrame({"id": [1]}, geometry=[box_pdc], crs=3832))
    out = processing.run("geofaham:reprojectnamed", {"INPUT": path, "TARGET": "4326", "OUTPUT": "memory:"})["OUTPUT"]
    (geom,) = _geometries(out)
    x0, _, x1, _ = geom.bounds
    assert out.crs().authid() == "EPSG:4326" and geom.is_valid and len(geom.geoms) == 2 and -180 <= x0 < x1 <= 180
    true_area = abs(GEOD.geometry_area_perimeter(FIJI_UNWRAPPED)[0])
    assert math.isclose(abs(GEOD.geometry_area_perimeter(geom)[0]), true_area, rel_tol=1e-3)
    message = _fails(
        processing, "geofaham:reprojectnamed", {"INPUT": path, "TARGET": "mercator-ish", "OUTPUT": "memory:"}
    )
    assert "unknown CRS 'mercator-ish'" in message and "equal-area" in message and "\n" not in message
    from qgis.core import QgsVectorLayer

    nowhere = QgsVectorLayer("Polygon?crs=", "no crs", "memory")
    message = _fails(processing, "geofaham:reprojectnamed", {"INPUT": nowhere, "TARGET": "utm", "OUTPUT": "memory:"})
    assert message.startswith("The input layer has no CRS")


def test_area_weighted_grid_shares_a_count_by_the_area_in_each_cell(processing, tmp_path):
    polygons = [box(500200, 5000100, 501500, 5000700), box(502100, 5000200, 502300, 5000400)]  # zone 33's meridian
    layer = gpd.GeoDataFrame({"people": [1300, 100], "name": ["camp", "village"]}, geometry=polygons, crs=32633)
    path = _write(tmp_path, "camps.gpkg", layer)
    out = processing.run(
        "geofaham:areaweightedgrid", {"INPUT": path, "CELL": 1000, "FIELDS": ["people"], "OUTPUT": "memory:"}
    )["OUTPUT"]
    assert out.crs().authid() == "EPSG:32633"
    got = {f["cell"]: (f["people"], f["area_km2"]) for f in out.getFeatures()}
    expected = {}
    to_lonlat = Transformer.from_crs(32633, 4326, always_xy=True).transform
    for x in range(500000, 503000, 1000):  # the cells computed here: intersections with 1 km squares
        cell = box(x, 5000000, x + 1000, 5001000)
        pieces = [(p.intersection(cell), n, p.area) for p, n in zip(polygons, [1300, 100], strict=True)]
        pieces = [(g, n, a) for g, n, a in pieces if g.area > 0]
        if pieces:
            people = sum(n * g.area / a for g, n, a in pieces)
            km2 = sum(abs(GEOD.geometry_area_perimeter(shapely.ops.transform(to_lonlat, g))[0]) for g, _, _ in pieces)
            expected[f"E{x} N5000000"] = (people, km2 / 1e6)
    assert set(got) == set(expected) == {"E500000 N5000000", "E501000 N5000000", "E502000 N5000000"}
    for cell, (people, km2) in expected.items():
        assert math.isclose(got[cell][0], people, rel_tol=1e-9) and math.isclose(got[cell][1], km2, rel_tol=1e-5)
    assert math.isclose(got["E500000 N5000000"][0], 1300 * 800 / 1300)  # 800 of the camp's 1300 m lie in it
    assert (
        _fails(processing, "geofaham:areaweightedgrid", {"INPUT": path, "CELL": 1, "OUTPUT": "memory:"}).count(
            "use larger cells"
        )
        == 1
    )


def test_remove_slivers_by_thinness_and_by_area(processing, tmp_path):
    big = box(0, 0, 1000, 1000)
    strip = box(1000, 0, 1002, 1000)  # a 2 m x 1 km sliver along the big square
    with_sliver = MultiPolygon([box(3000, 0, 3500, 500), box(3500.5, 0, 3501.5, 400)])
    layer = gpd.GeoDataFrame({"id": [1, 2, 3]}, geometry=[big, strip, with_sliver], crs=32633)
    path = _write(tmp_path, "parcels.gpkg", layer)

    def polsby_popper(g):
        return 4 * math.pi * g.area / g.length**2

    parts = {i: list(shapely.get_parts(g)) for i, g in zip([1, 2, 3], layer.geometry, strict=True)}
    kept = {i: [p for p in ps if polsby_popper(p) >= 0.05] for i, ps in parts.items()}
    result = processing.run("geofaham:removeslivers", {"INPUT": path, "OUTPUT": "memory:"})  # default 0.05
    out = {f["id"]: shapely.from_wkb(bytes(f.geometry().asWkb())) for f in result["OUTPUT"].getFeatures()}
    assert sorted(out) == [i for i, ps in kept.items() if ps] == [1, 3]
    assert out[3].equals(MultiPolygon(kept[3])) and out[1].equals(big)
    assert result["PARTS_REMOVED"] == sum(len(parts[i]) - len(kept[i]) for i in parts) == 2
    assert result["FEATURES_REMOVED"] == 1

    by_area = processing.run(
        "geofaham:removeslivers", {"INPUT": path, "MIN_AREA": 300_000, "MIN_COMPACTNESS": 0, "OUTPUT": "memory:"}
    )
    ids = sorted(f["id"] for f in by_area["OUTPUT"].getFeatures())
    assert ids == [
        i
        for i, g in zip([1, 2, 3], layer.geometry, strict=True)
        if max(p.area for p in shapely.get_parts(g)) >= 300_000
    ]


def test_file_manifest_of_a_geopackage_with_three_layers_in_three_crss(processing, tmp_path):
    path = tmp_path / "partners.gpkg"
    layers = {
        "clinics": gpd.GeoDataFrame(
            {"beds": [3, 5, 8]}, geometry=[Point(-3.7, 40.4), Point(-3.6, 40.5), Point(-3.5, 40.3)], crs=4326
        ),
        "roads": gpd.GeoDataFrame(
            {"name": ["a", "b"]}, geometry=[LineString([(440000, 4470000), (441000, 4471000)])] * 2, crs=25830
        ),
        "zones": gpd.GeoDataFrame({"risk": [0.5]}, geometry=[box(3.1e6, 2.0e6, 3.2e6, 2.1e6)], crs=3035),
    }
    for name, gdf in layers.items():
        gdf.to_file(path, layer=name, engine="pyogrio")
    out = processing.run("geofaham:filemanifest", {"INPUT": str(path), "OUTPUT": "memory:"})["OUTPUT"]
    rows = {f["layer"]: (f["crs"], f["geometry"], f["count"], f["fields"]) for f in out.getFeatures()}
    assert rows == {
        name: (f"EPSG:{gdf.crs.to_epsg()}", gdf.geom_type.iloc[0], len(gdf), f"{gdf.columns[0]} ({kind})")
        for (name, gdf), kind in zip(layers.items(), ["integer", "text", "real"], strict=True)
    }
    assert out.wkbType() == QgsWkbTypes.NoGeometry
    message = _fails(processing, "geofaham:filemanifest", {"INPUT": str(tmp_path / "none.gpkg"), "OUTPUT": "memory:"})
    assert "no such file" in message and "GeoPackage" in message  # and the hint names the formats read


def _truncated_shapefile(tmp_path) -> str:
    frame = gpd.GeoDataFrame(
        {"population_male": [120, 80], "population_female": [130, 90], "name": ["Ñuñoa", "Ságua"]},
        geometry=[Point(-70.6, -33.45), Point(-70.5, -33.4)],
        crs=4326,
    )
    path = _write(tmp_path, "census.shp", frame)
    import pyogrio

    assert sorted(pyogrio.read_info(path)["fields"]) == ["name", "populati_1", "population"]  # the DBF cut them
    return path


def test_restore_truncated_shapefile_field_names_from_an_esri_shp_xml_or_a_mapping(processing, tmp_path):
    path = _truncated_shapefile(tmp_path)
    out = processing.run(
        "geofaham:restorefieldnames", {"INPUT": path, "MAPPING": "populati_1=population_female", "OUTPUT": "memory:"}
    )["OUTPUT"]
    assert [f.name() for f in out.fields()] == ["population", "population_female", "name"]
    assert [f["population_female"] for f in out.getFeatures()] == [130, 90]

    (tmp_path / "census.shp.xml").write_text(
        "<metadata><eainfo><detailed>"
        "<attr><attrlabl>population</attrlabl><attalias>population_male</attalias></attr>"
        "<attr><attrlabl>populati_1</attrlabl><attalias>population_female</attalias></attr>"
        "</detailed></eainfo></metadata>",
        encoding="utf-8",
    )
    out = processing.run("geofaham:restorefieldnames", {"INPUT": path, "OUTPUT": "memory:"})["OUTPUT"]
    rows = [(f["population_male"], f["population_female"], f["name"]) for f in out.getFeatures()]
    assert rows == [(120, 130, "Ñuñoa"), (80, 90, "Ságua")] and out.crs().authid() == "EPSG:4326"

    message = _fails(
        processing, "geofaham:restorefieldnames", {"INPUT": path, "MAPPING": "pop_x=population", "OUTPUT": "memory:"}
    )
    assert "names fields census.shp lacks: pop_x" in message and "populati_1" in message
    message = _fails(
        processing, "geofaham:restorefieldnames", {"INPUT": path, "MAPPING": "population", "OUTPUT": "memory:"}
    )
    assert "'population' is not a field mapping" in message


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
