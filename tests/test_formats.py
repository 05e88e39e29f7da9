"""Field data as partners send it — CSVs whose geometry hides under any name, KML/KMZ with ExtendedData and dates,
shapefiles with a Latin-1 .cpg, a missing one or cut field names, a GeoPackage with layers in three CRSs,
GeoParquet, FlatGeobuf — read through the one reader entry point, listed by the manifest, and written back with
a check. Every fixture is written by the test; expected values come from the fixture's own literals, the raw
bytes, or pyproj.Geod, never from the code under test."""

from __future__ import annotations

import datetime as dt
import math
import os
import subprocess
import sys
import zipfile

import geopandas as gpd
import pandas as pd
import pytest
import shapely
from conftest import ROOT
from pyproj import CRS, Geod
from shapely.geometry import LineString, Point, Polygon, box

from geofaham_plugin.core.engines.formats import manifest, read_frame, write_layer
from geofaham_plugin.core.engines.layers import LayerCatalogue, read_user_file
from geofaham_plugin.core.errors import ToolFailed

GEOD = Geod(ellps="WGS84")
SQUARE = [(-118.50, 34.00), (-118.49, 34.00), (-118.49, 34.01), (-118.50, 34.01), (-118.50, 34.00)]
SQUARE_M2 = abs(GEOD.polygon_area_perimeter([p[0] for p in SQUARE], [p[1] for p in SQUARE])[0])


def geodesic_m2(geom) -> float:
    return abs(GEOD.geometry_area_perimeter(shapely.geometry.polygon.orient(geom, 1.0))[0])


# -------------------------------------------------------------------------------------------------- CSV
def test_csv_geometry_under_any_column_name_is_found_by_content(tmp_path):
    wkt = "POLYGON ((" + ", ".join(f"{x} {y}" for x, y in SQUARE) + "))"
    first = tmp_path / "damage_wkt_geom.csv"
    first.write_text(f'id,wkt_geom,status\n1,"{wkt}",flooded\n2,"POINT (-118.45 34.02)",dry\n', encoding="utf-8")
    gdf, _, crs, notes = read_user_file(first)
    assert crs == "EPSG:4326" and list(gdf.columns) == ["id", "status", "geometry"]
    assert math.isclose(geodesic_m2(gdf.geometry[0]), SQUARE_M2, rel_tol=1e-9)  # the literal square, untouched
    assert gdf.geometry[1].equals(Point(-118.45, 34.02)) and gdf["id"].tolist() == [1, 2]
    assert any("names no CRS" in n for n in notes)

    # EWKT under geometry_wkt, tabs, a second WKT column kept as text, its SRID kept as the CRS
    second = tmp_path / "sites.csv"
    second.write_text(
        "name\tgeometry_wkt\told_location\n"
        "a\tSRID=32611;POINT (384250 3767500)\tPOINT (1 1)\n"
        "b\tSRID=32611;POINT (385250 3768500)\tPOINT (2 2)\n",
        encoding="utf-8",
    )
    gdf, _, crs, notes = read_user_file(second)
    assert crs == "EPSG:32611" and gdf.geometry[0].equals(Point(384250, 3767500))
    assert gdf["old_location"].tolist() == ["POINT (1 1)", "POINT (2 2)"]
    assert any("geometry read from geometry_wkt" in n for n in notes)
    assert not any("names no CRS" in n for n in notes)


@pytest.mark.parametrize(
    ("header", "rows", "lon", "lat"),
    [
        ("site,X_coord,Y_coord,beds", ["a,-118.5123,34.0712,10", "b,-118.4011,34.1234,25"], "X_coord", "Y_coord"),
        ("site;long;lat;beds", ["a;-118.5123;34.0712;10", "b;-118.4011;34.1234;25"], "long", "lat"),
        # names say nothing and latitude comes first: a value beyond ±90 marks the longitude
        ("site,pos_a,pos_b,beds", ["a,34.0712,-118.5123,10", "b,34.1234,-118.4011,25"], "pos_b", "pos_a"),
    ],
)
def test_csv_longitude_latitude_columns_are_told_apart_by_their_values(tmp_path, header, rows, lon, lat):
    path = tmp_path / "clinics.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    gdf, _, crs, notes = read_user_file(path)
    assert crs == "EPSG:4326" and list(gdf.columns) == ["site", "beds", "geometry"]
    assert [(round(p.x, 4), round(p.y, 4)) for p in gdf.geometry] == [(-118.5123, 34.0712), (-118.4011, 34.1234)]
    assert gdf["beds"].tolist() == [10, 25]  # whole numbers are counts, never taken for degrees
    assert any(f"{lon} (longitude) and {lat} (latitude)" in n for n in notes)


def test_csv_with_wkb_hex_and_bad_rows(tmp_path):
    geoms = [Point(-118.5, 34.0), LineString([(-118.5, 34.0), (-118.4, 34.1)])]
    hexes = [shapely.to_wkb(g, hex=True) for g in geoms]
    path = tmp_path / "wkb.csv"
    path.write_text(
        f"shape_blob,kind,when\n{hexes[0]},point,2025-01-08\n{hexes[1]},road,2025-01-09\n", encoding="utf-8"
    )
    gdf, _, _, _ = read_user_file(path)
    assert [g.wkt for g in gdf.geometry] == [g.wkt for g in geoms]
    assert gdf["when"].tolist() == [pd.Timestamp("2025-01-08"), pd.Timestamp("2025-01-09")]  # ISO dates parsed
    # degrees in whole numbers only, or nothing geographic at all: one clear line
    (tmp_path / "ids.csv").write_text("a,b\n1,2\n3,4\n", encoding="utf-8")
    with pytest.raises(ToolFailed, match="has no geometry") as err:
        read_user_file(tmp_path / "ids.csv")
    assert "WKB" in err.value.hint and "\n" not in str(err.value)


# -------------------------------------------------------------------------------------------- KML / KMZ
KML = """<?xml version="1.0" encoding="UTF-8"?>
<kml xmlns="http://www.opengis.net/kml/2.2"><Document><name>field team</name>
<Placemark><name>Site A</name><TimeStamp><when>2025-01-09T14:30:00Z</when></TimeStamp>
<ExtendedData><Data name="status"><value>open</value></Data><Data name="visited"><value>2025-01-08</value></Data>
<Data name="seen_at"><value>2025-01-08T07:15:00+01:00</value></Data><Data name="beds"><value>12</value></Data>
</ExtendedData><Point><coordinates>-118.5,34.05,0</coordinates></Point></Placemark>
<Placemark><name>Site B</name><TimeStamp><when>2025-01-10T09:00:00Z</when></TimeStamp>
<ExtendedData><Data name="status"><value>closed</value></Data><Data name="visited"><value>2025-01-09</value></Data>
<Data name="seen_at"><value>2025-01-09T18:00:00Z</value></Data><Data name="beds"><value>3</value></Data>
</ExtendedData><Point><coordinates>-118.4,34.1,0</coordinates></Point></Placemark>
</Document></kml>"""


@pytest.mark.parametrize("suffix", [".kml", ".kmz"])
def test_kml_and_kmz_keep_extended_data_with_dates_parsed(tmp_path, suffix):
    kml = tmp_path / "team.kml"
    kml.write_text(KML, encoding="utf-8")
    path = kml
    if suffix == ".kmz":
        path = tmp_path / "team.kmz"
        with zipfile.ZipFile(path, "w") as z:
            z.write(kml, "doc.kml")
        kml.unlink()
    gdf, _, crs, _ = read_user_file(path)
    assert crs == "EPSG:4326" and [(p.x, p.y, p.has_z) for p in gdf.geometry] == [
        (-118.5, 34.05, False),
        (-118.4, 34.1, False),
    ]
    assert list(gdf.columns) == ["Name", "timestamp", "status", "visited", "seen_at", "beds", "geometry"]  # no styling
    assert gdf["visited"].tolist() == [pd.Timestamp("2025-01-08"), pd.Timestamp("2025-01-09")]
    assert gdf["seen_at"].tolist() == [pd.Timestamp("2025-01-08T06:15:00Z"), pd.Timestamp("2025-01-09T18:00:00Z")]
    assert gdf["timestamp"][0] == pd.Timestamp("2025-01-09T14:30:00Z") and gdf["beds"].tolist() == [12, 3]


# -------------------------------------------------------------------------------------------- shapefiles
def _places() -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(
        {"name": ["São Paulo", "Zürich", "Córdoba"], "population_total": [12, 34, 56], "population_male": [5, 16, 27]},
        geometry=[Point(-46.63, -23.55), Point(8.54, 47.37), Point(-4.78, 37.88)],
        crs=4326,
    )


@pytest.fixture
def gdal_shape_encoding():
    """GDAL's own SHAPE_ENCODING while the test writes its fixtures (a QGIS test earlier in the process clears it,
    and GDAL then writes the DBF without recoding); the process's value is put back afterwards."""
    import pyogrio

    before = pyogrio.get_gdal_config_option("SHAPE_ENCODING")
    pyogrio.set_gdal_config_options({"SHAPE_ENCODING": None})
    yield
    pyogrio.set_gdal_config_options({"SHAPE_ENCODING": before})


def test_shapefile_encodings_latin1_cpg_and_utf8_without_cpg(tmp_path, gdal_shape_encoding):
    places = _places()[["name", "geometry"]]
    latin = tmp_path / "latin.shp"
    places.to_file(latin, engine="pyogrio", encoding="ISO-8859-1")
    assert latin.with_suffix(".cpg").read_text().strip() == "ISO-8859-1"
    assert b"S\xe3o Paulo" in latin.with_suffix(".dbf").read_bytes()  # really Latin-1 bytes on disk
    gdf, _, _, notes = read_user_file(latin)
    assert gdf["name"].tolist() == ["São Paulo", "Zürich", "Córdoba"] and not any("Latin-1" in n for n in notes)
    # UTF-8 bytes and the .cpg lost: GDAL reads Latin-1 ("SÃ£o"); the reader repairs it and says so
    utf = tmp_path / "utf.shp"
    places.to_file(utf, engine="pyogrio", encoding="UTF-8")
    utf.with_suffix(".cpg").unlink()
    assert "S\u00c3\u00a3o Paulo" in gpd.read_file(utf)["name"].tolist()  # the raw read is broken ...
    gdf, _, _, notes = read_user_file(utf)
    assert gdf["name"].tolist() == ["São Paulo", "Zürich", "Córdoba"]  # ... ours is not
    assert any("3 text values were UTF-8 read as Latin-1" in n for n in notes)


def test_a_utf8_shapefile_reads_right_where_qgis_cleared_shape_encoding(tmp_path):
    """Inside QGIS its OGR provider sets SHAPE_ENCODING="" for the whole process: GDAL then hands the DBF's bytes
    over undecoded and a plain read gives "SÃ£o". The reader passes the .cpg's codec itself."""
    import pyogrio

    places = _places()[["name", "geometry"]]
    utf = tmp_path / "utf.shp"
    places.to_file(utf, engine="pyogrio", encoding="UTF-8")
    pyogrio.set_gdal_config_options({"SHAPE_ENCODING": ""})
    try:
        assert "S\u00c3\u00a3o Paulo" in gpd.read_file(utf, engine="pyogrio")["name"].tolist()  # what QGIS did to us
        gdf, _, _, notes = read_user_file(utf)
    finally:
        pyogrio.set_gdal_config_options({"SHAPE_ENCODING": None})
    assert gdf["name"].tolist() == ["São Paulo", "Zürich", "Córdoba"] and not any("Latin-1" in n for n in notes)


def test_truncated_shapefile_names_are_reported_and_restored(tmp_path):
    path = tmp_path / "census.shp"
    with pytest.warns(UserWarning):  # GDAL itself cuts the names to 10 characters
        _places().to_file(path, engine="pyogrio")
    raw = read_frame(path)
    assert set(raw.truncated) == {"population", "populati_1"} and raw.renamed == {}
    assert any("possibly cut to 10 characters" in n for n in raw.notes)
    mapped = read_frame(path, field_map={"population": "population_total", "populati_1": "population_male"})
    assert list(mapped.gdf.columns) == ["name", "population_total", "population_male", "geometry"]
    assert mapped.truncated == [] and mapped.gdf["population_male"].tolist() == [5, 16, 27]
    with pytest.raises(ToolFailed, match="lacks: pop_total") as err:
        read_frame(path, field_map={"pop_total": "population_total"})
    assert "population" in err.value.hint
    # ESRI metadata beside it names the aliases
    path.with_suffix(".shp.xml").write_text(
        "<metadata><eainfo><detailed>"
        "<attr><attrlabl>population</attrlabl><attalias>population_total</attalias></attr>"
        "<attr><attrlabl>populati_1</attrlabl><attalias>population_male</attalias></attr>"
        "</detailed></eainfo></metadata>",
        encoding="utf-8",
    )
    assert read_frame(path).renamed == {"population": "population_total", "populati_1": "population_male"}


def test_written_shapefile_round_trips_long_names_and_utf8(tmp_path):
    report = write_layer(_places(), tmp_path / "out.shp")
    assert report.renamed_fields == {"population_total": "population", "population_male": "populati_1"}
    assert (tmp_path / "out.cpg").read_text().strip() == "UTF-8" and str(
        tmp_path / "out.fieldnames.json"
    ) in report.files
    gdf, _, _, _ = read_user_file(tmp_path / "out.shp")
    assert list(gdf.columns) == ["name", "population_total", "population_male", "geometry"]
    assert gdf["name"].tolist() == ["São Paulo", "Zürich", "Córdoba"]
    mixed = gpd.GeoDataFrame(geometry=[Point(0, 0), box(0, 0, 1, 1)], crs=4326)
    with pytest.raises(ToolFailed, match="one geometry type") as err:
        write_layer(mixed, tmp_path / "mixed.shp")
    assert "split" in err.value.hint


# -------------------------------------------------------------------------------------------- manifest
def test_manifest_of_a_geopackage_with_three_layers_in_three_crs(tmp_path):
    path = tmp_path / "partner.gpkg"
    wgs = gpd.GeoDataFrame({"name": ["a", "b"]}, geometry=[Point(-0.38, 39.4), Point(-0.35, 39.45)], crs=4326)
    wgs.to_file(path, layer="clinics", driver="GPKG")
    zones = gpd.GeoDataFrame({"zone": ["A"], "cap": [100]}, geometry=[box(720000, 4360000, 722000, 4362000)], crs=25830)
    zones.to_file(path, layer="zones", driver="GPKG")
    roads = gpd.GeoDataFrame(
        {"opened": pd.to_datetime(["2024-10-29", "2024-11-02", "2024-11-05"])},
        geometry=[LineString([(0, 0), (1000, 0)]), LineString([(0, 0), (0, 1000)]), LineString([(5, 5), (6, 6)])],
        crs=3857,
    )
    roads.to_file(path, layer="roads", driver="GPKG")
    found = manifest(path)
    assert found.format == "GPKG" and [layer.name for layer in found.layers] == ["clinics", "zones", "roads"]
    by = {layer.name: layer for layer in found.layers}
    assert found.crs_set == {"EPSG:4326", "EPSG:25830", "EPSG:3857"}
    assert (by["clinics"].crs, by["zones"].crs, by["roads"].crs) == ("EPSG:4326", "EPSG:25830", "EPSG:3857")
    assert [by[n].feature_count for n in ("clinics", "zones", "roads")] == [2, 1, 3]
    assert by["zones"].geometry_types == ["Polygon"] and by["roads"].geometry_types == ["LineString"]
    assert by["zones"].fields == {"zone": "text", "cap": "integer"} and by["roads"].fields == {"opened": "date"}
    assert by["zones"].bounds == (720000.0, 4360000.0, 722000.0, 4362000.0)
    # the catalogue still wants a layer named for such a file
    with pytest.raises(ToolFailed, match="holds 3 layers"):
        LayerCatalogue(tmp_path).add_user_layer("partner", path)


def test_manifest_of_a_csv_says_it_names_no_crs(tmp_path):
    path = tmp_path / "pts.csv"
    path.write_text("lon,lat,n\n-118.51,34.07,1\n-118.40,34.12,2\n", encoding="utf-8")
    found = manifest(path)
    assert found.format == "csv" and found.layers[0].crs is None and found.layers[0].feature_count == 2
    assert found.layers[0].fields == {"n": "integer"} and found.layers[0].geometry_types == ["Point"]


# ------------------------------------------------------------------------------------ round trips, checks
@pytest.mark.parametrize("suffix", [".parquet", ".fgb", ".gpkg", ".geojson", ".csv", ".kml"])
def test_round_trips_keep_crs_types_counts_and_areas(tmp_path, suffix):
    poly = Polygon(SQUARE)
    gdf = gpd.GeoDataFrame(
        {"name": ["flood", "camp"], "people": [120, 45], "seen": pd.to_datetime(["2025-01-08", "2025-01-09"])},
        geometry=[poly, Point(-118.45, 34.02)],
        crs=4326,
    )
    if suffix in (".parquet", ".fgb", ".gpkg"):
        gdf = gdf.to_crs(32611)  # a projected CRS these formats keep
    report = write_layer(gdf, tmp_path / f"out{suffix}")
    assert report.feature_count == 2 and set(report.geometry_types) == {"Polygon", "Point"}
    back, _, crs, _ = read_user_file(tmp_path / f"out{suffix}")
    assert crs == ("EPSG:32611" if suffix in (".parquet", ".fgb", ".gpkg") else "EPSG:4326") == report.crs
    name = "Name" if suffix == ".kml" else "name"  # KML: the name field is the placemark's <name>
    assert back["people"].tolist() == [120, 45] and back[name].tolist() == ["flood", "camp"]
    area = geodesic_m2(back.to_crs(4326).geometry[0])
    assert math.isclose(area, SQUARE_M2, rel_tol=1e-6)  # the square is the square, whatever the format
    if suffix in (".parquet", ".gpkg", ".fgb", ".csv"):
        assert pd.Timestamp(back["seen"][1]).date() == dt.date(2025, 1, 9)


def test_a_file_that_loses_the_crs_is_caught_by_the_check(tmp_path):
    tm = CRS.from_proj4("+proj=tmerc +lat_0=34 +lon_0=-118 +k=1 +x_0=0 +y_0=0 +ellps=WGS84 +units=m +no_defs")
    gdf = gpd.GeoDataFrame({"n": [1]}, geometry=[Point(100, 100)], crs=tm)
    # GeoJSON keeps no custom CRS: read back it would be degrees near (0, 0)
    with pytest.raises(ToolFailed, match="reading it back found CRS EPSG:4326 instead of") as err:
        write_layer(gdf, tmp_path / "local.geojson")
    assert ".gpkg" in err.value.hint and "\n" not in str(err.value)
    assert write_layer(gdf, tmp_path / "local.gpkg").feature_count == 1
    with pytest.raises(ToolFailed, match="unknown format '.xlsx'"):
        write_layer(gdf, tmp_path / "local.xlsx")


def test_pyarrow_works_beside_qgis_in_one_process(tmp_path):
    """QGIS's GDAL and pyarrow loaded together: import qgis.core, start it, then write and read GeoParquet."""
    code = (
        "import sys\n"
        "from qgis.core import QgsApplication, QgsVectorLayer\n"
        "app = QgsApplication([], False); app.initQgis()\n"
        "import pyarrow, geopandas as gpd\n"
        "from shapely.geometry import Point\n"
        "from geofaham_plugin.core.engines.formats import write_layer\n"
        "g = gpd.GeoDataFrame({'a': [1, 2]}, geometry=[Point(1, 2), Point(3, 4)], crs=3857)\n"
        "r = write_layer(g, sys.argv[1])\n"
        "layer = QgsVectorLayer('Point?crs=EPSG:4326', 'x', 'memory')\n"
        "assert layer.isValid() and r.crs == 'EPSG:3857' and r.feature_count == 2\n"
        "print('ok', pyarrow.__version__)\n"
        "app.exitQgis()\n"
    )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "q.parquet")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok 23.0.1"
