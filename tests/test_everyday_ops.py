"""The everyday operations issue 28 found missing (cause 6), each on a messy file the test writes (mixed types, nulls,
accents, duplicate names, a point on a shared border, a KML with folders), through the tool registry with a real
Response Store, then end to end through batch (``run_batch``) with a plain instruction and no model: code reads
each instruction. Every expected value is computed here with shapely, pyproj or plain Python, never with the product
code under test."""

from __future__ import annotations

import json
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from pyproj import CRS, Transformer
from shapely.geometry import LineString, Point, Polygon, box

from bench.batch import OutputSpec, run_batch
from geofaham_plugin.core.agents.base import TOOLS
from geofaham_plugin.core.engines.formats import read_layers
from geofaham_plugin.core.errors import ModelRetry, ToolFailed, user_line
from geofaham_plugin.core.llm import LLM, ScriptedModel


def run(ctx, name: str, args: dict, **inputs):
    return TOOLS[name].run(ctx, args, inputs)


def read(store, path: Path, layer: str | None = None):
    """A file as the product reads a user's file (every layer of it; ``layer``: the one wanted), registered."""
    _, raws = read_layers(path)
    raw = next(r for r in raws if layer is None or r.layer == layer)
    gdf = raw.gdf if raw.gdf.crs is not None else raw.gdf.set_crs(4326)
    return store.register_vector(gdf, source=f"test:{path.name}", summary=path.name)


def batch(tmp_path: Path, instruction: str, outputs: list[dict], files: dict[str, str | bytes]) -> dict:
    """Run batch on the files written here (name -> text or bytes) with no model; the manifest."""
    folder = tmp_path / "in"
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return run_batch(
        instruction,
        folder,
        [OutputSpec.model_validate(o) for o in outputs],
        tmp_path / "out",
        session=tmp_path / "session",
        llm=LLM(ScriptedModel({})),
        log=lambda _: None,
    )


# ---------------------------------------------------------------------------------------------- messy files
# Districts of a town near Valencia: two named "Norte" (one far away), an accented name, a population written as
# text in two ways, one district without a geometry. Clinics as a CSV with lon/lat: one on the border of Norte and
# Sur, one outside every district, one without coordinates, beds missing on some, a duplicate name.
DISTRICTS = {
    "type": "FeatureCollection",
    "features": [
        {
            "type": "Feature",
            "properties": {"district": "Norte", "population": 1200, "code": "D1"},
            "geometry": shapely.geometry.mapping(box(-0.45, 39.44, -0.33, 39.50)),
        },
        {
            "type": "Feature",
            "properties": {"district": "Sur", "population": "2.450", "code": "D2"},
            "geometry": shapely.geometry.mapping(box(-0.45, 39.38, -0.33, 39.44)),
        },
        {
            "type": "Feature",
            "properties": {"district": "Camí Vell", "population": None, "code": "D3"},
            "geometry": shapely.geometry.mapping(box(-0.33, 39.38, -0.25, 39.50)),
        },
        {
            "type": "Feature",
            "properties": {"district": "Norte", "population": 80, "code": "D4"},
            "geometry": shapely.geometry.mapping(box(-0.20, 39.00, -0.10, 39.10)),
        },
        {"type": "Feature", "properties": {"district": "Sin forma", "population": 5, "code": "D5"}, "geometry": None},
    ],
}
CLINICS = """name;beds;lon;lat
Clínica Mar;12;-0.40;39.45
Centro Salud;;-0.38;39.44
Clínica Mar;7;-0.42;39.40
Consultorio Río;3;-0.30;39.47
Lejana;4;1.00;40.00
Sin sitio;9;;
"""


def _districts_and_clinics() -> dict[str, str]:
    return {"districts.geojson": json.dumps(DISTRICTS, ensure_ascii=False), "clinics.csv": CLINICS}


def _expected_districts(lon: float, lat: float) -> list[str]:
    """The districts whose polygon holds the point, border included, in the file's order (shapely)."""
    point = Point(lon, lat)
    return [
        f["properties"]["district"]
        for f in DISTRICTS["features"]
        if f["geometry"] is not None and shapely.geometry.shape(f["geometry"]).covers(point)
    ]


# --------------------------------------------------------------------------------------------- spatial join
def test_points_get_the_attributes_of_the_polygon_they_fall_in(ctx, store, tmp_path):
    for name, text in _districts_and_clinics().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    clinics, districts = read(store, tmp_path / "clinics.csv"), read(store, tmp_path / "districts.geojson")
    joined = run(ctx, "spatial_join", {}, features=clinics, candidates=districts)
    out = store.read_vector(joined.id)
    source = pd.read_csv(tmp_path / "clinics.csv", sep=";")
    assert len(out) == len(source) == 6 and list(out["name"]) == list(source["name"])  # one per clinic, in order
    assert {"name", "beds", "district", "population", "code", "join_count"} <= set(out.columns)
    for row, (lon, lat) in zip(out.itertuples(), zip(source["lon"], source["lat"], strict=True), strict=True):
        hits = _expected_districts(lon, lat) if not np.isnan(lon) else []
        assert row.join_count == len(hits)
        assert (row.district if hits else None) == (hits[0] if hits else None)
    assert _expected_districts(-0.38, 39.44) == ["Norte", "Sur"]  # the clinic on the border: both, the first taken
    notes = " ".join(joined.extra["limitations"])
    assert "1 features relate to several features" in notes and "2 features relate to no feature" in notes
    assert joined.extra["predicate"] == "within"


def test_polygons_get_counts_sums_and_lists_of_what_they_contain(ctx, store, tmp_path):
    for name, text in _districts_and_clinics().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    clinics, districts = read(store, tmp_path / "clinics.csv"), read(store, tmp_path / "districts.geojson")
    joined = run(ctx, "spatial_join", {"fields": ["name", "beds"]}, features=districts, candidates=clinics)
    out = store.read_vector(joined.id)
    source = pd.read_csv(tmp_path / "clinics.csv", sep=";").dropna(subset=["lon"])
    assert list(out["district"]) == ["Norte", "Sur", "Camí Vell", "Norte", "Sin forma"]  # every district kept
    for row in out.itertuples():
        feature = next(f for f in DISTRICTS["features"] if f["properties"]["code"] == row.code)
        inside = (
            source[
                [
                    shapely.geometry.shape(feature["geometry"]).covers(Point(x, y))
                    for x, y in zip(source["lon"], source["lat"], strict=True)
                ]
            ]
            if feature["geometry"]
            else source.iloc[0:0]
        )
        assert row.join_count == len(inside)
        assert row.beds == pytest.approx(inside["beds"].fillna(0).sum())  # missing beds add nothing
        assert (row.name or "") == "; ".join(dict.fromkeys(inside["name"]))  # duplicate names listed once
    assert joined.extra["predicate"] == "contains"
    with pytest.raises(ToolFailed, match="sum needs numbers; name is not numeric"):
        run(ctx, "spatial_join", {"aggregate": "sum", "fields": ["name"]}, features=districts, candidates=clinics)
    with pytest.raises(ModelRetry, match="max_distance_m is for predicate nearest"):
        run(ctx, "spatial_join", {"predicate": "within", "max_distance_m": 10}, features=clinics, candidates=districts)
    with pytest.raises(ToolFailed) as failed:
        run(ctx, "spatial_join", {"fields": ["barrio"]}, features=clinics, candidates=districts)
    assert user_line(failed.value) == (
        "the layer to join has no field 'barrio'; hint: fields are: district, population, code"
    )


def test_nearest_within_a_distance_is_measured_in_metres(ctx, store, tmp_path):
    """Wells joined to the nearest road within 300 m: distances checked against pyproj's UTM 30N."""
    wells = gpd.GeoDataFrame(
        {"well": ["W1", "W2", "W3"]},
        geometry=[Point(-0.400, 39.450), Point(-0.390, 39.452), Point(-0.350, 39.40)],
        crs=4326,
    )
    roads = gpd.GeoDataFrame(
        {"road": ["CV-400", "CV-401"]},
        geometry=[LineString([(-0.41, 39.451), (-0.38, 39.451)]), LineString([(-0.41, 39.4535), (-0.38, 39.4535)])],
        crs=4326,
    )
    joined = run(
        ctx,
        "spatial_join",
        {"max_distance_m": 300},
        features=store.register_vector(wells, source="t", summary="wells"),
        candidates=store.register_vector(roads, source="t", summary="roads"),
    )
    out = store.read_vector(joined.id)
    metric_wells, metric_roads = wells.to_crs(25830).geometry, roads.to_crs(25830).geometry
    for i, row in enumerate(out.itertuples()):
        d = [metric_wells[i].distance(r) for r in metric_roads]
        if min(d) <= 300:
            assert row.road == roads["road"][int(np.argmin(d))] and row.join_distance_m == pytest.approx(
                min(d), abs=1.0
            )
        else:
            assert row.road is None and row.join_count == 0
    assert out["join_count"].tolist() == [1, 1, 0]


def test_batch_joins_the_district_to_each_clinic(tmp_path):
    manifest = batch(
        tmp_path,
        "Give each clinic the name of the district it falls in",
        [{"name": "clinics_districts.gpkg", "geometry_type": "Point", "columns": ["name", "district"]}],
        _districts_and_clinics(),
    )
    assert manifest["ok"], manifest["outputs"]
    out = gpd.read_file(tmp_path / "out" / "clinics_districts.gpkg")
    located = pd.read_csv(tmp_path / "in" / "clinics.csv", sep=";").dropna(subset=["lon"])
    assert len(out) == len(located)  # the clinic without coordinates has no geometry: not a feature of the layer
    for row in out.itertuples():
        hits = _expected_districts(row.geometry.x, row.geometry.y)
        assert (row.district if hits else None) == (hits[0] if hits else None)


def test_batch_sums_the_beds_of_the_clinics_in_each_district_and_joins_the_nearest(tmp_path):
    manifest = batch(
        tmp_path / "a",
        "Give the districts the names and beds of the clinics they contain",
        [{"name": "districts.geojson", "geometry_type": "Polygon", "columns": ["district", "beds", "join_count"]}],
        _districts_and_clinics(),
    )
    assert manifest["ok"], manifest["outputs"]
    out = gpd.read_file(tmp_path / "a" / "out" / "districts.geojson")
    assert dict(zip(out["code"], out["beds"], strict=True)) == {"D1": 12.0, "D2": 7.0, "D3": 3.0, "D4": 0.0}
    nearest = batch(
        tmp_path / "b",
        "Attach to each clinic the district of the nearest district within 5 km",
        [{"name": "nearest.gpkg", "geometry_type": "Point"}],
        _districts_and_clinics(),
    )
    assert nearest["ok"], nearest["outputs"]
    out = gpd.read_file(tmp_path / "b" / "out" / "nearest.gpkg")
    far = out[out["name"] == "Lejana"].iloc[0]
    assert far["join_count"] == 0 and far["district"] is None  # 1°E 40°N: no district within 5 km
    assert (out.loc[out["name"] != "Lejana", "join_distance_m"] == 0).all()  # the others lie in one


# ------------------------------------------------------------------------------------------------ snapping
UTM30 = CRS.from_epsg(25830)  # ETRS89 / UTM 30N: Valencia


def _parcels_and_roads() -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame]:
    """Parcels drawn in UTM 30N off a road by 0.4 m to 1.5 m (one far from it, one without geometry, a duplicate
    name, a name with an accent), returned in lon/lat as a partner sends them; the roads as lines."""
    x0, y0 = 725_000.0, 4_369_000.0
    road = LineString([(x0 - 100, y0), (x0 + 300, y0)])  # the parcels' south edge should lie on it
    parcels = [
        Polygon([(x0, y0 + 0.4), (x0 + 50, y0 - 0.7), (x0 + 50, y0 + 40), (x0, y0 + 40)]),
        Polygon([(x0 + 50, y0 + 1.5), (x0 + 100, y0 + 1.2), (x0 + 100, y0 + 40), (x0 + 50, y0 + 40)]),
        Polygon([(x0 + 150, y0 + 30), (x0 + 200, y0 + 30), (x0 + 200, y0 + 70), (x0 + 150, y0 + 70)]),  # far
        None,
    ]
    frame = gpd.GeoDataFrame(
        {"parcel": ["P-1", "P-2", "P-2", "Huerta Martínez"], "area_text": ["1.234,5", "", None, "12"]},
        geometry=parcels,
        crs=UTM30,
    ).to_crs(4326)
    roads = gpd.GeoDataFrame({"road": ["Camí Reial"]}, geometry=[road], crs=UTM30).to_crs(4326)
    return frame, roads


def test_snap_to_layer_moves_the_vertices_within_the_tolerance_onto_the_road(ctx, store, tmp_path):
    parcels, roads = _parcels_and_roads()
    parcels.to_file(tmp_path / "parcels.gpkg", engine="pyogrio")
    roads.to_file(tmp_path / "roads.geojson", engine="pyogrio")
    layer, road = read(store, tmp_path / "parcels.gpkg"), read(store, tmp_path / "roads.geojson")
    snapped = run(ctx, "snap_to_layer", {"tolerance_m": 2.0}, features=layer, candidates=road)
    out = store.read_vector(snapped.id)
    assert list(out["parcel"]) == ["P-1", "P-2", "P-2", "Huerta Martínez"] and out.crs.to_epsg() == 4326
    line = roads.to_crs(UTM30).geometry[0]
    moved = 0
    for before, after in zip(parcels.to_crs(UTM30).geometry, out.to_crs(UTM30).geometry, strict=True):
        if before is None:
            assert after is None
            continue
        assert after.is_valid
        for (bx, by), (ax, ay) in zip(before.exterior.coords, after.exterior.coords, strict=True):
            if line.distance(Point(bx, by)) <= 2.0:
                assert line.distance(Point(ax, ay)) < 1e-6 and abs(ax - bx) < 1e-6  # straight down onto the road
                moved += 1
            else:
                assert (ax, ay) == pytest.approx((bx, by), abs=1e-6)
    assert moved == 6 and snapped.extra["changed"] == 6  # P-1's two south corners (and its closing one), P-2's
    far = store.read_vector(layer.id).geometry[2]
    assert out.geometry[2].equals_exact(far, 0.0)  # nothing moved it: its coordinates exactly as read
    with pytest.raises(ModelRetry, match="tolerance_m"):
        run(ctx, "snap_to_layer", {"tolerance_m": -1}, features=layer, candidates=road)


def test_snap_to_grid_in_utm_for_lonlat_and_in_the_layers_own_metric_crs(ctx, store):
    parcels, _ = _parcels_and_roads()
    record = run(ctx, "snap_to_grid", {"grid_m": 10}, layer=store.register_vector(parcels, source="t", summary="p"))
    out = store.read_vector(record.id)
    assert record.extra["grid_crs"] == "EPSG:32630" and out.crs.to_epsg() == 4326
    xy = shapely.get_coordinates(out.to_crs(32630).geometry.to_numpy())
    assert np.allclose(xy / 10, np.round(xy / 10), atol=1e-6)  # every vertex on the 10 m grid of UTM 30N
    assert list(out["parcel"]) == ["P-1", "P-2", "P-2", "Huerta Martínez"]
    tiny = gpd.GeoDataFrame({"parcel": ["tiny"]}, geometry=[box(725_001, 4_369_001, 725_002, 4_369_002)], crs=UTM30)
    own = pd.concat([parcels.to_crs(UTM30), tiny], ignore_index=True)  # 1 m² on a 10 m grid: it collapses
    record = run(ctx, "snap_to_grid", {"grid_m": 10}, layer=store.register_vector(own, source="t", summary="p"))
    out = store.read_vector(record.id)
    assert record.extra["grid_crs"] == "EPSG:25830" and out.crs.to_epsg() == 25830
    xy = shapely.get_coordinates(out.geometry.to_numpy())
    assert (xy % 10 == 0).all() and "tiny" not in set(out["parcel"]) and record.extra["removed"] == 1
    assert any("1 features smaller than the grid collapsed" in n for n in record.extra["limitations"])


def test_batch_snaps_parcels_to_the_roads_and_to_a_grid(tmp_path):
    parcels, roads = _parcels_and_roads()
    files = {}
    for name, frame in (("parcels.geojson", parcels), ("roads.geojson", roads)):
        frame.to_file(tmp_path / name, engine="pyogrio")
        files[name] = (tmp_path / name).read_bytes()
    manifest = batch(
        tmp_path / "a",
        "Snap the parcels to the roads within 2 m",
        [{"name": "parcels_snapped.gpkg", "geometry_type": "Polygon", "columns": ["parcel"]}],
        files,
    )
    assert manifest["ok"], manifest["outputs"]
    out = gpd.read_file(tmp_path / "a" / "out" / "parcels_snapped.gpkg").to_crs(UTM30)
    line = roads.to_crs(UTM30).geometry[0]
    south = [min(p.exterior.coords, key=lambda c: c[1]) for p in out.geometry]
    assert [line.distance(Point(c)) < 1e-6 for c in south] == [True, True, False]
    grid = batch(
        tmp_path / "b",
        "Snap the vertices of the parcels to a 5 m grid",
        [{"name": "parcels_grid.geojson", "geometry_type": "Polygon"}],
        files,
    )
    assert grid["ok"], grid["outputs"]
    xy = shapely.get_coordinates(gpd.read_file(tmp_path / "b" / "out" / "parcels_grid.geojson").to_crs(32630).geometry)
    assert np.allclose(xy / 5, np.round(xy / 5), atol=1e-5)


# ------------------------------------------------------------------------------------ types said in words, nulls
# Shelters as a partner types them: amounts in the Spanish way with a euro sign, dates three ways, yes/no in Spanish
# with odd case, placeholders for no value (N/A, -, s/d, empty), a duplicate name, accents.
SHELTERS = """name;importe;fecha;abierto;lon;lat
Albergue Norte;1.234,56 €;12/03/2024;sí;-0.40;39.45
Albergue Sur;12.345 €;3 de marzo de 2024;no;-0.38;39.44
Centro Río;N/A;s/d;;-0.42;39.40
Centro Río;7,5;2024-03-05;SI;-0.35;39.47
Punto Mar;-;05/04/2024;No;-0.33;39.46
Escuela Ñ;  ;13/04/2024;x;-0.31;39.43
"""
IMPORTE = [1234.56, 12345.0, None, 7.5, None, None]  # written out by hand from the lines above
FECHA = ["2024-03-12", "2024-03-03", None, "2024-03-05", "2024-04-05", "2024-04-13"]  # 13/04 says day first
ABIERTO = [True, False, None, True, False, True]


def test_coerce_reads_spanish_numbers_dates_in_three_ways_and_placeholders(ctx, store, tmp_path):
    (tmp_path / "albergues.csv").write_text(SHELTERS, encoding="utf-8")
    layer = read(store, tmp_path / "albergues.csv")
    assert store.read_vector(layer.id)["importe"].dtype == object  # the reader left them text: they are not numbers
    record = run(
        ctx, "coerce_types", {"types": {"importe": "real", "fecha": "date", "abierto": "boolean"}}, layer=layer
    )
    out = store.read_vector(record.id)
    assert [None if pd.isna(v) else v for v in out["importe"]] == pytest.approx(IMPORTE)
    assert [None if pd.isna(v) else v.strftime("%Y-%m-%d") for v in out["fecha"]] == FECHA
    assert [None if pd.isna(v) else bool(v) for v in out["abierto"]] == ABIERTO
    notes = " ".join(record.extra["limitations"])
    assert "importe: numbers read with ',' as the decimal mark" in notes
    assert "3 values of importe say no value" in notes and record.extra["changed"] == 0  # placeholders, no failure
    whole = run(ctx, "coerce_types", {"types": {"importe": "integer"}}, layer=layer)
    integers = store.read_vector(whole.id)["importe"]
    assert pd.isna(integers[0]) and integers[1] == 12345  # 1234.56 is no integer; 12.345 € is twelve thousand
    assert "2 values of importe are not integer (e.g. '1.234,56 €', '7,5')" in " ".join(whole.extra["limitations"])
    english = run(ctx, "coerce_types", {"types": {"importe": "real"}, "decimal": "."}, layer=layer)
    assert store.read_vector(english.id)["importe"].tolist()[1] == pytest.approx(12.345)  # as told: a decimal point
    with pytest.raises(ModelRetry, match="decimal"):
        run(ctx, "coerce_types", {"types": {"importe": "real"}, "decimal": ";"}, layer=layer)


def test_drop_nulls_counts_empty_text_and_placeholders_as_missing(ctx, store, tmp_path):
    (tmp_path / "albergues.csv").write_text(SHELTERS, encoding="utf-8")
    layer = read(store, tmp_path / "albergues.csv")
    record = run(ctx, "drop_nulls", {"fields": ["importe"]}, layer=layer)
    out = store.read_vector(record.id)
    assert list(out["name"]) == ["Albergue Norte", "Albergue Sur", "Centro Río"]  # N/A, "-" and spaces go
    assert record.extra["removed"] == 3
    kept = run(ctx, "drop_nulls", {"fields": ["importe"], "blanks": False}, layer=layer)
    assert kept.extra["removed"] == 0  # as the file holds them, none is null
    with pytest.raises(ToolFailed, match="no field 'importes'"):
        run(ctx, "drop_nulls", {"fields": ["importes"]}, layer=layer)


def test_batch_converts_fields_said_in_words_and_drops_the_ones_without_a_value(tmp_path):
    manifest = batch(
        tmp_path / "a",
        "Convert the importe of the albergues to numbers, fecha to dates and abierto to booleans",
        [{"name": "albergues.gpkg", "geometry_type": "Point", "columns": ["name", "importe", "fecha", "abierto"]}],
        {"albergues.csv": SHELTERS},
    )
    assert manifest["ok"], manifest["outputs"]
    out = gpd.read_file(tmp_path / "a" / "out" / "albergues.gpkg")
    assert pd.api.types.is_float_dtype(out["importe"]) and pd.api.types.is_datetime64_any_dtype(out["fecha"])
    assert [None if pd.isna(v) else v for v in out["importe"]] == pytest.approx(IMPORTE)
    assert [None if pd.isna(v) else v.strftime("%Y-%m-%d") for v in out["fecha"]] == FECHA
    dropped = batch(
        tmp_path / "b",
        "Drop the albergues without an importe and convert importe to numbers",
        [{"name": "albergues.csv", "columns": ["name", "importe"]}],
        {"albergues.csv": SHELTERS},
    )
    assert dropped["ok"], dropped["outputs"]
    table = pd.read_csv(tmp_path / "b" / "out" / "albergues.csv")
    assert list(table["name"]) == ["Albergue Norte", "Albergue Sur", "Centro Río"]
    assert table["importe"].tolist() == pytest.approx([1234.56, 12345.0, 7.5])


# ------------------------------------------------------------------------------------------- class values
# Land-use parcels as several surveyors typed them: case, accents, stray spaces, placeholders, an unknown class.
USES = ["Residencial", "residencial ", "RESIDENCIAL", "Residencial", "Industrial", " industrial", "Agrícola",
        "agricola", "AGRÍCOLA", "Agrícola", None, "N/A", "Comercial", "Huerta  Vieja"]  # fmt: skip
MAPPING_CSV = "valor;clase\nresidencial;Residential\nindustrial;Industrial\nAGRICOLA;Agricultural\n"


def _parcels_by_use() -> gpd.GeoDataFrame:
    x0, y0 = 725_000.0, 4_369_000.0
    squares = [box(x0 + 60 * i, y0, x0 + 60 * i + 10 * (i % 5 + 1), y0 + 40) for i in range(len(USES))]
    frame = gpd.GeoDataFrame({"parcela": [f"P{i % 7}" for i in range(len(USES))], "uso": USES}, geometry=squares)
    return frame.set_crs(UTM30).to_crs(4326)


def _by_hand(value: object, table: dict[str, str] | None = None) -> object:
    """The expected value, worked out with str methods: spaces, case and accents away, then the table."""
    if value is None or str(value).strip() in ("", "N/A"):
        return None
    key = " ".join(str(value).split()).lower().replace("í", "i")
    if table is not None:
        return {k.lower(): v for k, v in table.items()}.get(key, " ".join(str(value).split()))
    return {"residencial": "Residencial", "industrial": "Industrial", "agricola": "Agrícola"}.get(
        key, " ".join(str(value).split())
    )


def test_normalise_makes_one_spelling_per_class_or_applies_a_mapping_table(ctx, store, tmp_path):
    _parcels_by_use().to_file(tmp_path / "parcelas.gpkg", engine="pyogrio")
    layer = read(store, tmp_path / "parcelas.gpkg")
    record = run(ctx, "normalise_values", {"field": "uso"}, layer=layer)
    out = store.read_vector(record.id)
    assert out["uso"].tolist() == [_by_hand(v) for v in USES]  # the most common spelling of each class
    assert len(out) == len(USES) and list(out["parcela"]) == [f"P{i % 7}" for i in range(len(USES))]
    table = {"residencial": "Residential", "industrial": "Industrial", "AGRICOLA": "Agricultural"}
    mapped = run(ctx, "normalise_values", {"field": "uso", "mapping": table, "to_field": "clase"}, layer=layer)
    out = store.read_vector(mapped.id)
    assert out["clase"].tolist() == [_by_hand(v, table) for v in USES] and out["uso"].tolist()[:2] == USES[:2]
    notes = " ".join(mapped.extra["limitations"])
    assert "2 values the mapping does not list, kept as they are: 'Comercial', 'Huerta Vieja'" in notes
    lower = run(ctx, "normalise_values", {"field": "uso", "case": "lower", "accents": False}, layer=layer)
    assert sorted(set(store.read_vector(lower.id)["uso"].dropna())) == [
        "agricola", "comercial", "huerta vieja", "industrial", "residencial"
    ]  # fmt: skip
    with pytest.raises(ToolFailed, match="sends 'residencial ' both to 'X' and to 'Y'"):
        run(
            ctx,
            "normalise_values",
            {"field": "uso", "mapping": {"resid": "R", "Residencial": "X", "residencial ": "Y"}},
            layer=layer,
        )


def test_batch_normalises_class_values_with_a_mapping_table_given_as_a_file(tmp_path):
    _parcels_by_use().to_file(tmp_path / "parcelas.geojson", engine="pyogrio")
    manifest = batch(
        tmp_path,
        "Normalise the uso values of the parcelas using mapping.csv",
        [{"name": "parcelas_clean.gpkg", "geometry_type": "Polygon", "columns": ["parcela", "uso"]}],
        {"parcelas.geojson": (tmp_path / "parcelas.geojson").read_bytes(), "mapping.csv": MAPPING_CSV},
    )
    assert manifest["ok"], manifest["outputs"]
    out = gpd.read_file(tmp_path / "out" / "parcelas_clean.gpkg")
    table = dict(line.split(";") for line in MAPPING_CSV.splitlines()[1:])
    assert out["uso"].tolist() == [_by_hand(v, table) for v in USES]


def test_a_mapping_file_linked_from_outside_the_input_folder_is_refused(tmp_path):
    """The mapping table is a user's file too (:func:`check_user_table`): a link out of the input folder is refused
    like a layer's."""
    _parcels_by_use().to_file(tmp_path / "parcelas.geojson", engine="pyogrio")
    secret = tmp_path / "elsewhere" / "mapping.csv"
    secret.parent.mkdir()
    secret.write_text(MAPPING_CSV, encoding="utf-8")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "mapping.csv").symlink_to(secret)
    manifest = batch(
        tmp_path,
        "Normalise the uso values of the parcelas using mapping.csv",
        [{"name": "parcelas_clean.gpkg", "geometry_type": "Polygon", "columns": ["parcela", "uso"]}],
        {"parcelas.geojson": (tmp_path / "parcelas.geojson").read_bytes()},
    )
    # neither read as an input nor as the mapping: the values are not normalised with a table from elsewhere
    assert not manifest["ok"] and not (tmp_path / "out" / "parcelas_clean.gpkg").exists()
    assert any("outside the input folder" in note for note in manifest["input_notes"])


# ------------------------------------------------------------------------------------------------------ top N
def test_top_n_by_a_field_written_as_text_and_by_area_with_ties_stated(ctx, store, tmp_path):
    x0, y0 = 725_000.0, 4_369_000.0
    towns = gpd.GeoDataFrame(
        {
            "name": ["Alcàsser", "Benetússer", "Catarroja", "Paiporta", "Sedaví", "Picanya"],
            "poblacion": ["12.500", "15.100", "29.800", "n/d", "12.500", "12.500"],  # Spanish thousands, a tie
        },
        geometry=[box(x0 + 100 * i, y0, x0 + 100 * i + 10 * (6 - i), y0 + 50) for i in range(6)],
        crs=UTM30,
    ).to_crs(4326)
    layer = store.register_vector(towns, source="t", summary="towns")
    record = run(ctx, "top_n", {"by": "poblacion", "n": 3}, layer=layer)
    out = store.read_vector(record.id)
    assert list(out["name"]) == ["Catarroja", "Benetússer", "Alcàsser"] and list(out["rank"]) == [1, 2, 3]
    notes = " ".join(record.extra["limitations"])
    assert "3 features tie at 12500 at the cut: the file's first kept, 2 left out (Sedaví, Picanya)" in notes
    assert "1 features without a value of poblacion left out" in notes
    every = run(ctx, "top_n", {"by": "poblacion", "n": 3, "ties": "all"}, layer=layer)
    assert list(store.read_vector(every.id)["rank"]) == [1, 2, 3, 3, 3]
    small = run(ctx, "top_n", {"by": "area", "n": 2, "order": "asc"}, layer=layer)
    out = store.read_vector(small.id)
    areas = towns.to_crs(UTM30).area  # UTM areas: within 0.1 % of the geodesic ones here
    assert list(out["name"]) == list(towns["name"][areas.sort_values().index[:2]])
    assert out["area_km2"].tolist() == pytest.approx([a / 1e6 for a in sorted(areas)[:2]], rel=2e-3)
    with pytest.raises(ToolFailed, match="field 'name' does not hold numbers"):
        run(ctx, "top_n", {"by": "name", "n": 2}, layer=layer)


def test_batch_keeps_the_top_n_by_a_measure(tmp_path):
    x0, y0 = 725_000.0, 4_369_000.0
    camps = gpd.GeoDataFrame(
        {"camp": ["Alfa", "Bravo", "Charlie", "Delta", "Echo"], "people": [320, 1450, None, 980, 1450]},
        geometry=[Point(x0 + 500 * i, y0) for i in range(5)],
        crs=UTM30,
    ).to_crs(4326)
    camps.to_file(tmp_path / "camps.geojson", engine="pyogrio")
    manifest = batch(
        tmp_path,
        "Keep the 3 camps with the most people",
        [{"name": "top_camps.csv", "columns": ["camp", "people", "rank"]}],
        {"camps.geojson": (tmp_path / "camps.geojson").read_bytes()},
    )
    assert manifest["ok"], manifest["outputs"]
    table = pd.read_csv(tmp_path / "out" / "top_camps.csv")
    assert table["camp"].tolist() == ["Bravo", "Echo", "Delta"] and table["rank"].tolist() == [1, 1, 3]


# --------------------------------------------------------------------------------------------- KML folders
# A field team's KML: placemarks in folders (one nested, one empty), one outside any folder, the same name in two
# folders, accents, descriptions in HTML with dates written four ways (one with none), ExtendedData of mixed types.
SITES_KML = """<?xml version="1.0" encoding="UTF-8"?>
<kml xmlns="http://www.opengis.net/kml/2.2">
<Document><name>Sitios DANA</name>
 <Placemark><name>Punto suelto</name><description>Visitado 2024-11-05</description>
  <Point><coordinates>-0.41,39.44</coordinates></Point></Placemark>
 <Folder><name>Albergues</name>
  <Placemark><name>Albergue Norte</name>
   <description><![CDATA[<p><b>Abierto</b> el 12/11/2024<br/>capacidad: 40</p>]]></description>
   <ExtendedData><Data name="plazas"><value>40</value></Data></ExtendedData>
   <Point><coordinates>-0.40,39.45</coordinates></Point></Placemark>
  <Placemark><name>Albergue Sur</name><description>Abierto el 3 de noviembre de 2024</description>
   <ExtendedData><Data name="plazas"><value>n/d</value></Data></ExtendedData>
   <Point><coordinates>-0.39,39.42</coordinates></Point></Placemark>
  <Folder><name>Colegios</name>
   <Placemark><name>CEIP Ñ</name><description>Sin fecha</description>
    <Point><coordinates>-0.38,39.41</coordinates></Point></Placemark></Folder>
 </Folder>
 <Folder><name>Puntos de agua</name>
  <Placemark><name>Pozo Río</name><description>Checked on November 7, 2024</description>
   <Polygon><outerBoundaryIs><LinearRing><coordinates>-0.37,39.44 -0.36,39.44 -0.36,39.45 -0.37,39.44</coordinates>
   </LinearRing></outerBoundaryIs></Polygon></Placemark>
  <Placemark><name>Albergue Norte</name><description>revisado 15.11.2024</description>
   <Point><coordinates>-0.36,39.46</coordinates></Point></Placemark>
 </Folder>
 <Folder><name>Vacía</name></Folder>
</Document></kml>
"""
SITE_FOLDERS = {  # name -> (innermost folder, date), written out by hand from the KML above
    "Punto suelto": (None, "2024-11-05"),
    "Albergue Norte": ("Albergues", "2024-11-12"),
    "Albergue Sur": ("Albergues", "2024-11-03"),
    "CEIP Ñ": ("Colegios", None),
    "Pozo Río": ("Puntos de agua", "2024-11-07"),
    "Albergue Norte ": ("Puntos de agua", "2024-11-15"),  # the second Albergue Norte (a space keeps the keys apart)
}


def _placemarks_in_xml(text: str) -> list[tuple[str, str | None]]:
    """(name, innermost folder) of each placemark, by walking the XML with ElementTree in document order."""
    import xml.etree.ElementTree as ET

    ns = "{http://www.opengis.net/kml/2.2}"
    found: list[tuple[str, str | None]] = []

    def walk(node, folder):
        for child in node:
            if child.tag == ns + "Placemark":
                found.append((child.find(ns + "name").text, folder))
            elif child.tag in (ns + "Folder", ns + "Document"):
                walk(child, child.find(ns + "name").text if child.tag == ns + "Folder" else folder)

    walk(ET.fromstring(text.encode("utf-8")), None)
    return found


def _check_sites(out: gpd.GeoDataFrame) -> None:
    placemarks = _placemarks_in_xml(SITES_KML)
    assert len(out) == len(placemarks) == 6
    seen = sorted((str(n), c or "") for n, c in zip(out["Name"], out["category"], strict=True))
    assert seen == sorted((n, c or "") for n, c in placemarks)  # each placemark once, with its own folder
    for name, category, date in zip(out["Name"], out["category"], out["date"], strict=True):
        key = name + (" " if category == "Puntos de agua" and name == "Albergue Norte" else "")
        want_folder, want_date = SITE_FOLDERS[key]
        assert (None if pd.isna(category) else category) == want_folder
        assert (None if pd.isna(date) else pd.Timestamp(date).strftime("%Y-%m-%d")) == want_date


def test_kml_folders_merge_into_one_layer_with_category_and_dates(ctx, store, tmp_path):
    from geofaham_plugin.core.engines.layers import LayerCatalogue, data_dir

    (tmp_path / "sitios.kml").write_text(SITES_KML, encoding="utf-8")
    import zipfile

    with zipfile.ZipFile(tmp_path / "sitios.kmz", "w") as kmz:
        kmz.writestr("doc.kml", SITES_KML)
    for name in ("sitios.kml", "sitios.kmz"):
        catalogue = LayerCatalogue(data_dir())
        catalogue.add_user_layer("albergues", tmp_path / name, layer="Albergues")
        ctx.layers = catalogue
        folder = run(ctx, "load_layer", {"layer_id": "user:albergues"})
        assert len(store.read_vector(folder.id)) == 2  # OGR alone: one folder's placemarks
        merged = run(ctx, "merge_kml_folders", {}, layer=folder)
        out = store.read_vector(merged.id)
        _check_sites(out)
        assert out.loc[out["Name"] == "CEIP Ñ", "folder_path"].tolist() == ["Albergues / Colegios"]
        notes = " ".join(merged.extra["limitations"])
        assert "1 placemarks outside any folder" in notes and "Vacía" in notes and "Albergue Norte" in notes
        assert "5 of 6 placemarks dated (5 from the description)" in notes
    (tmp_path / "pts.csv").write_text("name,lon,lat\na,-0.4,39.4\nb,-0.3,39.5\n", encoding="utf-8")
    ctx.layers.add_user_layer("pts", tmp_path / "pts.csv")
    with pytest.raises(ToolFailed, match="not read from a KML or KMZ file of yours"):
        run(ctx, "merge_kml_folders", {}, layer=run(ctx, "load_layer", {"layer_id": "user:pts"}))


def test_batch_merges_the_folders_of_a_kml(tmp_path):
    manifest = batch(
        tmp_path,
        "Merge the folders of sitios.kml into one layer with a category field and the dates from the descriptions",
        [{"name": "sitios.gpkg", "columns": ["Name", "category", "date"]}],
        {"sitios.kml": SITES_KML},
    )
    assert manifest["ok"], manifest["outputs"]
    out = gpd.read_file(tmp_path / "out" / "sitios.gpkg")
    _check_sites(out)
    assert set(out.geom_type) == {"Point", "Polygon"}


# -------------------------------------------------------------------------------------------- per-layer audit
def _survey_gpkg(path: Path) -> dict[str, gpd.GeoDataFrame]:
    """A partner's GeoPackage: clinics in lon/lat with names gone through the wrong encoding (UTF-8 read as Latin-1,
    a byte no codec read, a letter lost to '?'), parcels in UTM 30N with an empty geometry, rivers written without a
    CRS, and a layer with no feature; written layer by layer with pyogrio."""
    layers = {
        "clinicas": gpd.GeoDataFrame(
            {"nombre": ["Clínica Mar".encode().decode("latin-1"), "Centro Río", "Cl?nica Sur", "Ambulatorio \ufffd"]},
            geometry=[Point(-0.40, 39.45), Point(-0.38, 39.44), Point(-0.42, 39.40), Point(-0.35, 39.47)],
            crs=4326,
        ),
        "parcelas": gpd.GeoDataFrame(
            {"ref": ["P1", "P1", "P2"]},  # a duplicate reference
            geometry=[
                box(725_000, 4_369_000, 725_050, 4_369_040),
                Polygon(),
                box(725_100, 4_369_000, 725_150, 4_369_040),
            ],
            crs=UTM30,
        ),
        "rios": gpd.GeoDataFrame({"nom": ["Turia"]}, geometry=[LineString([(-0.45, 39.47), (-0.33, 39.45)])]),
        "vacia": gpd.GeoDataFrame({"x": pd.Series([], dtype=int)}, geometry=[], crs=4326),
    }
    for name, frame in layers.items():
        frame.to_file(path, layer=name, engine="pyogrio")
    return layers


def test_the_audit_lists_each_layer_with_crs_count_types_a_sample_coordinate_and_encoding_problems(ctx, tmp_path):
    import pyogrio

    from geofaham_plugin.core.engines.layers import LayerCatalogue, data_dir

    path = tmp_path / "survey.gpkg"
    layers = _survey_gpkg(path)
    catalogue = LayerCatalogue(data_dir())
    catalogue.add_user_layer("clinicas", path, layer="clinicas")
    ctx.layers = catalogue
    record = run(ctx, "file_manifest", {"layer_id": "user:clinicas"})
    table = ctx.store.read_table(record.id).set_index("value")
    listed = [str(row[0]) for row in pyogrio.list_layers(path)]
    assert list(table.index) == listed == list(layers)
    for name in listed:
        info = pyogrio.read_info(path, layer=name)
        assert table.loc[name, "count"] == info["features"]
        epsg = CRS.from_user_input(info["crs"]).to_epsg() if info["crs"] else None  # rios: OGR's "Undefined SRS"
        assert table.loc[name, "crs"] == (f"EPSG:{epsg}" if epsg else "none (EPSG:4326 assumed)")
    assert table.loc["parcelas", "geometry"] == "Polygon" and table.loc["parcelas", "empty_geometries"] == 1
    assert (table.loc["parcelas", "sample_x"], table.loc["parcelas", "sample_y"]) == (725_050.0, 4_369_000.0)
    lon, lat = Transformer.from_crs(25830, 4326, always_xy=True).transform(725_050.0, 4_369_000.0)
    assert (table.loc["parcelas", "sample_lon"], table.loc["parcelas", "sample_lat"]) == pytest.approx((lon, lat))
    assert (table.loc["rios", "sample_lon"], table.loc["rios", "sample_lat"]) == (-0.45, 39.47)
    problems = table.loc["clinicas", "encoding_problems"]
    garbled = repr("Clínica Mar".encode().decode("latin-1"))  # 'ClÃ\xadnica Mar'
    assert f"nombre: 1 values UTF-8 read as Latin-1 (mojibake), e.g. {garbled}" in problems
    assert (
        "nombre: 1 values unreadable bytes (U+FFFD)" in problems and "nombre: 1 values letters lost to '?'" in problems
    )
    assert table.loc["parcelas", "encoding_problems"] == "" and table.loc["vacia", "count"] == 0
    assert pd.isna(table.loc["vacia", "sample_x"]) and table.loc["vacia", "geometry"] == ""


def test_batch_audits_every_layer_of_a_geopackage(tmp_path):
    path = tmp_path / "survey.gpkg"
    layers = _survey_gpkg(path)
    manifest = batch(
        tmp_path,
        "Audit every layer of survey.gpkg: CRS, feature count, geometry types, a sample coordinate and encoding problems",
        [{"name": "audit.csv", "columns": ["value", "crs", "count", "geometry", "sample_lon", "sample_lat"]}],
        {"survey.gpkg": path.read_bytes()},
    )
    assert manifest["ok"], manifest["outputs"]
    table = pd.read_csv(tmp_path / "out" / "audit.csv").set_index("value")
    assert set(table.index) == set(layers)
    assert {n: int(table.loc[n, "count"]) for n in layers} == {n: len(f) for n, f in layers.items()}
    assert table.loc["parcelas", "crs"] == "EPSG:25830" and "mojibake" in table.loc["clinicas", "encoding_problems"]


# ------------------------------------------------------------------------------------- read from the instruction
@pytest.fixture()
def own_layers(tmp_path):
    from geofaham_plugin.core.engines.layers import LayerCatalogue, data_dir

    files = {**_districts_and_clinics(), "albergues.csv": SHELTERS}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    _parcels_by_use().to_file(tmp_path / "parcelas.geojson", engine="pyogrio")
    catalogue = LayerCatalogue(data_dir())
    for name in ("districts.geojson", "clinics.csv", "albergues.csv", "parcelas.geojson"):
        catalogue.add_user_layer(Path(name).stem, tmp_path / name)
    return catalogue


@pytest.mark.parametrize(
    ("instruction", "operations", "args"),
    [
        ("Spatially join the clinics with the districts", ["spatial_join"], [{}]),
        ("Tag each clinic with the attributes of the nearest district within 2 km", ["join_nearest"], [{"max_distance_m": 2000.0}]),
        ("Convert the albergues' importe to numbers (Spanish format)", ["coerce_types"], [{"types": {"importe": "real"}, "decimal": ","}]),
        ("Convierte el importe de los albergues a números y la fecha a fechas", ["coerce_types"], [{"types": {"importe": "real", "fecha": "date"}}]),
        ("Snap the clinics to a 10 m grid", ["snap_to_grid"], [{"grid_m": 10.0}]),
        ("Normalise the uso values of the parcelas in lower case, without accents", ["normalise_values"], [{"field": "uso", "mapping": None, "case": "lower", "accents": False}]),
        ("Standardise the parcelas' uso: 'resid' -> 'Housing', 'agri' -> 'Farmland'", ["normalise_values"], [{"field": "uso", "mapping": {"resid": "Housing", "agri": "Farmland"}}]),
        ("Keep the 2 districts with the largest population", ["top_n"], [{"n": 2, "order": "desc", "by": "population"}]),
        ("The 3 smallest parcelas", ["top_n"], [{"n": 3, "order": "asc", "by": "area"}]),
    ],
)  # fmt: skip
def test_the_chain_reads_each_operation_and_its_arguments_from_plain_words(own_layers, instruction, operations, args):
    from geofaham_plugin.core.planning.chain import chain_from_facts
    from geofaham_plugin.core.planning.prepass import prepass

    chain = chain_from_facts(prepass(instruction, layers=own_layers), own_layers)
    assert chain is not None and chain.operations == operations and chain.args == args


def test_an_operation_whose_arguments_are_not_said_plans_no_chain_and_says_what_to_say(own_layers):
    from geofaham_plugin.core.planning.chain import chain_from_facts
    from geofaham_plugin.core.planning.prepass import prepass
    from geofaham_plugin.core.planning.spec_schema import SpecError

    with pytest.raises(SpecError, match="say which field to convert and to what"):
        chain_from_facts(prepass("Convert the albergues to a number", layers=own_layers), own_layers)
    with pytest.raises(SpecError, match="values of uso written in the instruction would be read as the ones to keep"):
        said = "Standardise the parcelas' uso: 'residencial' -> 'Residential', 'industrial' -> 'Industrial'"
        chain_from_facts(prepass(said, layers=own_layers), own_layers)
    with pytest.raises(SpecError, match="no mapping file clases.csv beside your layer 'parcelas'"):
        chain_from_facts(prepass("Normalise the parcelas' uso values using clases.csv", layers=own_layers), own_layers)
