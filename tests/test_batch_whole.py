"""Batch keeps the data whole (issue 28, item 4), on the sample data's real files: one buffer per feature with its
attributes unless the instruction merges them, field names a format cuts said in the answer and restored when the
output asks for the full name, de-duplication and sliver removal whose defaults do something, JSON objects, and
multi-layer GeoPackages. Every expected value is computed here with geopandas and shapely, never with product code;
no model is asked (code reads each instruction)."""

from __future__ import annotations

import json
from pathlib import Path

import geopandas as gpd
import pyogrio
import pytest
import shapely
from conftest import SHARED_DATA
from pyproj import Geod
from shapely.geometry import box
from shapely.geometry.polygon import orient

from bench.batch import OutputSpec, run_batch
from geofaham_plugin.core.llm import LLM, ScriptedModel

VALENCIA = SHARED_DATA / "valencia-2024"
BUILDINGS = VALENCIA / "catarroja_public_buildings_dana.geojson"
DINS = SHARED_DATA / "eaton-2025" / "DINS_2025_Eaton_Public_View_2025-01-14.geojson"
GEOD = Geod(ellps="WGS84")


def batch(tmp_path, instruction: str, outputs: list[dict], **inputs: gpd.GeoDataFrame | str) -> dict:
    """Run batch on ``inputs`` (file name -> a frame to write, or a path to copy) with no model."""
    folder = tmp_path / "in"
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in inputs.items():
        name = name.replace("__", ".")
        if isinstance(data, gpd.GeoDataFrame):
            data.to_file(folder / name, engine="pyogrio")
        else:
            (folder / name).write_bytes(Path(data).read_bytes())
    return run_batch(
        instruction,
        folder,
        [OutputSpec.model_validate(o) for o in outputs],
        tmp_path / "out",
        session=tmp_path / "session",
        llm=LLM(ScriptedModel({})),
        log=lambda _: None,
    )


def test_buffers_are_one_per_feature_with_its_attributes_unless_merged(tmp_path):
    """Catarroja's 20 public buildings buffered by 200 m: 20 buffers, each with the building's attributes (they were
    dissolved into one polygon without any); merged only when the instruction says so."""
    buildings = gpd.read_file(BUILDINGS)
    manifest = batch(
        tmp_path,
        "Buffer each public building by 200 m and save the buffers",
        [{"name": "buffers.gpkg", "geometry_type": "Polygon"}],
        public_buildings__geojson=str(BUILDINGS),
    )
    assert manifest["ok"], manifest["outputs"]
    out = gpd.read_file(tmp_path / "out" / "buffers.gpkg")
    assert len(out) == len(buildings) == 20
    assert set(buildings.columns) - {"geometry"} <= set(out.columns)
    assert sorted(out["titulo"]) == sorted(buildings["titulo"])
    utm = out.to_crs(25830)
    for building, ring in zip(buildings.to_crs(25830).geometry, utm.geometry, strict=True):
        assert ring.contains(building) and ring.area == pytest.approx(3.14159 * 200**2, rel=2e-3)
    merged = batch(
        tmp_path / "m",
        "Buffer the public buildings by 200 m and merge the buffers into one zone",
        [{"name": "zone.gpkg", "geometry_type": "Polygon"}],
        public_buildings__geojson=str(BUILDINGS),
    )
    assert merged["ok"], merged["outputs"]
    zone = gpd.read_file(tmp_path / "m" / "out" / "zone.gpkg").to_crs(25830)
    truth = shapely.union_all(buildings.to_crs(25830).buffer(200, 64).values)
    assert len(zone) == 1 and zone.geometry[0].symmetric_difference(truth).area < 1e-3 * truth.area


def test_a_shapefile_cuts_field_names_and_the_answer_says_which(tmp_path):
    """The Eaton inspections' STRUCTURETYPE (13 characters) as a shapefile: the file holds STRUCTURET (a DBF limit);
    the output line and the answer say so, and the sidecar gives the full name back."""
    manifest = batch(
        tmp_path,
        "Convert the inspections to a shapefile",
        [{"name": "inspections.shp"}, {"name": "answer.md"}],
        inspections__geojson=str(DINS),
    )
    assert manifest["ok"], manifest["outputs"]
    line = manifest["outputs"][0]["line"]
    assert "field names cut by the format: STRUCTURETYPE -> STRUCTURET" in line
    assert "STRUCTURETYPE -> STRUCTURET" in manifest["answer"]
    assert "STRUCTURETYPE -> STRUCTURET" in (tmp_path / "out" / "answer.md").read_text(encoding="utf-8")
    back = gpd.read_file(tmp_path / "out" / "inspections.shp")
    assert "STRUCTURET" in back.columns and len(back) == 5805
    sidecar = json.loads((tmp_path / "out" / "inspections.fieldnames.json").read_text(encoding="utf-8"))
    assert sidecar == {"STRUCTURET": "STRUCTURETYPE"}


def test_a_cut_field_name_is_restored_when_the_output_asks_for_the_full_one(tmp_path):
    """The inspections as a shapefile that lost its full names (no sidecar, as other tools write it): an output
    asking for STRUCTURETYPE gets the values of STRUCTURET under that name (it failed: "no column")."""
    dins = gpd.read_file(DINS)
    folder = tmp_path / "in"
    folder.mkdir()
    dins.to_file(folder / "inspections.shp", engine="pyogrio")  # GDAL cuts STRUCTURETYPE to STRUCTURET
    assert "STRUCTURET" in pyogrio.read_info(folder / "inspections.shp")["fields"]
    manifest = run_batch(
        "Convert the inspections to a GeoPackage",
        folder,
        [OutputSpec(name="inspections.gpkg", columns=["DAMAGE", "STRUCTURETYPE"])],
        tmp_path / "out",
        session=tmp_path / "session",
        llm=LLM(ScriptedModel({})),
        log=lambda _: None,
    )
    assert manifest["ok"], manifest["outputs"]
    back = gpd.read_file(tmp_path / "out" / "inspections.gpkg")
    assert list(back.columns[:2]) == ["DAMAGE", "STRUCTURETYPE"] and "STRUCTURET" not in back.columns
    assert back["STRUCTURETYPE"].value_counts().to_dict() == dins["STRUCTURETYPE"].value_counts().to_dict()
    assert {"OBJECTID", "GLOBALID"} <= set(back.columns)  # the attributes not listed are kept, after the listed


def test_duplicates_that_differ_in_their_id_or_by_a_rounding_are_removed(tmp_path):
    """Catarroja's buildings entered twice: the copies have new ids and coordinates off by about 1 cm. The
    defaults (every attribute compared but the identifiers, the same place within 0.5 m) remove them; exact
    geometries and every attribute removed none."""
    buildings = gpd.read_file(BUILDINGS)
    copies = buildings.copy()
    copies["id"] = [f"dup-{i}" for i in range(len(copies))]
    copies.geometry = copies.geometry.translate(1e-7, 1e-7)  # ~1 cm
    both = gpd.GeoDataFrame([*buildings.to_dict("records"), *copies.to_dict("records")], crs=4326, geometry="geometry")
    manifest = batch(
        tmp_path,
        "Remove the duplicates from the public buildings",
        [{"name": "unique.gpkg"}],
        public_buildings__geojson=both,
    )
    assert manifest["ok"], manifest["outputs"]
    out = gpd.read_file(tmp_path / "out" / "unique.gpkg")
    assert len(out) == 20 and sorted(out["id"]) == sorted(buildings["id"])


def test_slivers_go_with_the_default_thresholds_and_rivers_stay(tmp_path):
    """Lahaina's burn area (a real file) with a 0.3 m wide strip added to its first feature and a 2 km long, 20 m
    wide channel as a feature of its own: the default removes the strip (it removed nothing) and keeps the
    channel (4 ha: no sliver) and every burn polygon."""
    burn = gpd.read_file(SHARED_DATA / "lahaina-2023" / "lahaina_burn_area.geojson").to_crs(32604)
    first = burn.geometry.iloc[0]
    x0, y0, x1, _ = first.bounds
    strip = box(x1 + 50, y0, x1 + 50.3, y0 + 300)  # 90 m², compactness 0.004
    channel = box(x0, y0 - 500, x0 + 2000, y0 - 480)  # 40,000 m², compactness 0.03
    geoms = [shapely.union(first, strip), *burn.geometry.iloc[1:], channel]
    layer = gpd.GeoDataFrame({"part": range(len(geoms))}, geometry=geoms, crs=32604).to_crs(4326)
    manifest = batch(
        tmp_path,
        "Remove the slivers from the burn areas",
        [{"name": "burn_clean.gpkg"}],
        burn_areas__geojson=layer,
    )
    assert manifest["ok"], manifest["outputs"]
    out = gpd.read_file(tmp_path / "out" / "burn_clean.gpkg")
    assert len(out) == len(layer)

    def m2(geom) -> float:
        return sum(abs(GEOD.geometry_area_perimeter(orient(p, 1.0))[0]) for p in getattr(geom, "geoms", [geom]))

    cleaned = out.geometry.iloc[0]
    assert m2(cleaned) == pytest.approx(m2(burn.to_crs(4326).geometry.iloc[0]), rel=1e-6)  # the strip is gone
    assert m2(out.geometry.iloc[-1]) == pytest.approx(40_000, rel=2e-3)  # the channel stays


def test_a_json_object_is_written_when_the_instruction_asks_for_one(tmp_path):
    """Catarroja's buildings counted per capa, "as a JSON object": {capa: count}, not a list of records."""
    buildings = gpd.read_file(BUILDINGS)
    manifest = batch(
        tmp_path,
        "Count the public buildings per capa and write the counts as a JSON object",
        [{"name": "per_capa.json"}],
        public_buildings__geojson=str(BUILDINGS),
    )
    assert manifest["ok"], manifest["outputs"]
    got = json.loads((tmp_path / "out" / "per_capa.json").read_text(encoding="utf-8"))
    assert got == buildings["capa"].value_counts().to_dict()


def test_a_multi_layer_geopackage_holds_one_layer_per_output(tmp_path):
    """The València flood extent and health facilities written into one GeoPackage, one named layer each."""
    flood = gpd.read_file(VALENCIA / "emsr773_observed_flood_merged.geojson")
    health = gpd.read_file(VALENCIA / "valencia_city_health_facilities.geojson")
    manifest = batch(
        tmp_path,
        "Put the flood extent and the health facilities into one GeoPackage",
        [
            {"name": "valencia.gpkg", "layer": "flood", "source": "input:flood.geojson"},
            {"name": "valencia.gpkg", "layer": "health", "source": "input:health.geojson"},
        ],
        flood__geojson=str(VALENCIA / "emsr773_observed_flood_merged.geojson"),
        health__geojson=str(VALENCIA / "valencia_city_health_facilities.geojson"),
    )
    assert [o["written"] for o in manifest["outputs"]] == [True, True], manifest["outputs"]
    path = tmp_path / "out" / "valencia.gpkg"
    assert sorted(pyogrio.list_layers(path)[:, 0]) == ["flood", "health"]
    assert len(gpd.read_file(path, layer="flood")) == len(flood)
    assert sorted(gpd.read_file(path, layer="health")["equipamien"]) == sorted(health["equipamien"])


# ------------------------------------------------------------------------------ the batch check sees content (item 7)
def _broken_reproject(monkeypatch, breakage):
    """The reprojection engine made wrong in one way (what a bug in a tool would write), through the tool's own
    module: the batch check, not the tool, must find it."""
    from geofaham_plugin.core.engines import transforms as tf

    real = tf.reproject

    def broken(gdf, to_crs):
        out, changes = real(gdf, to_crs)
        return breakage(out), changes

    monkeypatch.setattr(tf, "reproject", broken)


@pytest.mark.parametrize(
    ("breakage", "columns", "said"),
    [
        (lambda g: g.iloc[:-3], None, "17 features where reproject makes one per input feature (20)"),
        (
            lambda g: g.drop(columns=["titulo", "estado"]),
            None,
            "reproject dropped the input's attributes titulo, estado",
        ),
        (lambda g: g.set_geometry(gpd.GeoSeries([None] * len(g), crs=g.crs)), None, "every geometry is empty"),
        (lambda g: g.assign(estado=None), ["titulo", "estado"], "column estado holds no value"),
    ],
)
def test_a_wrong_file_is_never_reported_as_checked(tmp_path, monkeypatch, breakage, columns, said):
    """Catarroja's buildings reprojected by a broken engine: rows lost, attributes dropped, geometries emptied, a listed
    column emptied. The file was written and "checked" (CRS, geometry family and column names were right); now the
    output fails its check with the reason, and the batch is not ok."""
    _broken_reproject(monkeypatch, breakage)
    manifest = batch(
        tmp_path,
        "Reproject the public buildings to EPSG:25830 and save them",
        [{"name": "buildings_utm.gpkg", "crs": "EPSG:25830", "columns": columns}],
        public_buildings__geojson=str(BUILDINGS),
    )
    out = manifest["outputs"][0]
    assert out["written"] and not out["ok"] and not manifest["ok"], out
    assert said in out["reason"] and out["line"].startswith("written but FAILED its check"), out["line"]


def test_the_check_passes_the_right_file_and_a_listed_table_column_must_hold_values(tmp_path):
    """The same reprojection unbroken passes; a CSV table whose listed column is empty fails."""
    import pandas as pd

    from bench.batch import write_output
    from geofaham_plugin.core.store.store import ResponseStore

    manifest = batch(
        tmp_path,
        "Reproject the public buildings to EPSG:25830 and save them",
        [{"name": "buildings_utm.gpkg", "crs": "EPSG:25830", "columns": ["titulo", "estado"]}],
        public_buildings__geojson=str(BUILDINGS),
    )
    assert manifest["ok"], manifest["outputs"]
    buildings = gpd.read_file(BUILDINGS)
    counts = buildings["capa"].value_counts().rename_axis("capa").reset_index()
    with ResponseStore(tmp_path / "s2") as store:
        table = store.register_table(counts.assign(count=float("nan")), source="vector.count", summary="counts")
        spec = OutputSpec(name="counts.csv", columns=["capa", "count"])
        result = write_output(store, spec, table, "", tmp_path / "out2")
        assert not result.ok and "column count holds no value" in result.reason
        good = store.register_table(counts, source="vector.count", summary="counts")
        assert write_output(store, spec, good, "", tmp_path / "out2").ok
        assert pd.read_csv(tmp_path / "out2" / "counts.csv")["count"].sum() == 20
