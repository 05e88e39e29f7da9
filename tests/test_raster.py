"""Raster engine and Raster agent: synthetic pre/post scenes with known burned and flooded pixels
(areas exact to one pixel, in a projected and in a geographic CRS), zonal statistics against a hand
computation, polygon areas against pixel counts, the real Sentinel-2 Hurst Fire pair against its
reference dNBR, and an orchestrated run that answers with the mean dNBR."""

from __future__ import annotations

import json

import geopandas as gpd
import numpy as np
import pytest
import rasterio
import shapely
from affine import Affine
from helpers.raster_scenes import (
    BAND_ORDER,
    GEO_T,
    HURST,
    UTM,
    UTM_T,
    H,
    W,
    ask_hurst,
    register_hurst,
    register_pair,
    run,
    scenes,
    write_scene,
)
from pyproj import Geod
from shapely.geometry import Polygon, box

from geofaham_plugin.core.agents import TOOLS
from geofaham_plugin.core.engines import raster as rx
from geofaham_plugin.core.engines.raster import ops
from geofaham_plugin.core.errors import ToolFailed
from geofaham_plugin.core.llm import LLM, ScriptedModel

GEOD = Geod(ellps="WGS84")


def _row_cell_areas(transform: Affine, rows: int, cols: int = 1) -> np.ndarray:
    """Independent per-row pixel areas: pyproj's geodesic area of each pixel's corner polygon."""
    out = []
    for r in range(rows):
        (x0, y0), (x1, y1) = transform * (0, r), transform * (1, r + 1)
        area, _ = GEOD.polygon_area_perimeter([x0, x1, x1, x0], [y0, y0, y1, y1])
        out.append(abs(area))
    return np.array(out)


def _expected_area(classes: np.ndarray, wanted, transform: Affine, crs: str) -> float:
    hit = np.isin(classes, list(wanted))
    if crs == UTM:
        return float(hit.sum() * 400.0)
    return float(hit.sum(axis=1) @ _row_cell_areas(transform, H))


# ------------------------------------------------------------------------------ library pieces
def test_indices_classes_and_thresholds_follow_their_documented_definitions():
    a, b = np.array([3000.0, 0.0, np.nan, 1.0]), np.array([1000.0, 0.0, 1.0, 1.0])
    nd = ops.normalized_difference(a, b)
    assert nd[0] == pytest.approx(0.5) and np.isnan(nd[1]) and np.isnan(nd[2]) and nd[3] == 0
    values = np.array([-0.5, 0.0999, 0.1, 0.2699, 0.27, 0.44, 0.659, 0.66, 1.2, np.nan])
    assert ops.burn_severity(values).tolist() == [0, 0, 1, 1, 2, 3, 3, 4, 4, 255]
    assert ops.threshold(np.array([0.0, 0.2, np.nan]), 0.1, ">=").tolist() == [0, 1, 255]
    post, pre = np.array([0.3, 0.3, -0.2, np.nan]), np.array([-0.1, 0.2, -0.3, 0.1])
    assert ops.flood_classes(post, pre).tolist() == [1, 2, 0, 255]
    assert ops.change_mask(pre, post, 0.2, "increase").tolist() == [1, 0, 0, 255]  # change detection: post − pre
    assert ops.change_mask(post, pre, 0.2, "decrease").tolist() == [1, 0, 0, 255]
    assert (
        rx.canonical_band("B8") == "nir" and rx.canonical_band("B12") == "swir22" and rx.canonical_band("SCL") == "scl"
    )
    assert rx.asset_key_for({"B08": {}, "B8A": {}}, "nir") == "B08"
    assert rx.asset_key_for({"nir08": {}, "swir22": {}}, "nir") == "nir08"  # Landsat's NIR
    # the same operations stay lazy on dask arrays and give the same numbers
    import dask.array as da

    lazy = ops.burn_severity(da.from_array(values, chunks=3))
    assert hasattr(lazy, "dask") and lazy.compute().tolist() == ops.burn_severity(values).tolist()


def test_pixel_areas_are_geodesic_per_row_in_degrees_and_scale_corrected_in_web_mercator():
    geo = rx.Grid("EPSG:4326", GEO_T, W, H)
    assert np.allclose(rx.row_pixel_areas(geo), _row_cell_areas(GEO_T, H), rtol=1e-7)
    assert rx.row_pixel_areas(geo)[0] < rx.row_pixel_areas(geo)[-1]  # further north, smaller
    assert np.all(rx.row_pixel_areas(rx.Grid(UTM, UTM_T, W, H)) == 400.0)
    # a 20 m Web Mercator pixel at 34 N covers about 20² cos²(34°) m² of ground
    merc = rx.Grid("EPSG:3857", Affine(20, 0, -13_190_000, 0, -20, 4_075_000), 10, 10)
    lat = np.radians(34.35)
    assert rx.row_pixel_areas(merc)[0] == pytest.approx(400 * np.cos(lat) ** 2, rel=0.01)


def test_windowed_lazy_reads_resample_onto_a_common_grid(tmp_path):
    pre, _, _, _ = scenes()
    path = write_scene(tmp_path / "pre.tif", pre, UTM, UTM_T)
    ds = rx.load_raster(path, chunks=16)  # 4 x 5 windows
    assert ds["nir"].data.numblocks == (4, 5) and list(ds.data_vars) == BAND_ORDER
    whole = rx.load_raster(path)
    assert np.array_equal(ds["swir22"].values, whole["swir22"].values, equal_nan=True)
    # a 10 m raster whose 2 x 2 blocks are constant, read onto the 20 m grid: exact block values
    fine = np.kron(np.arange(H * W, dtype="float32").reshape(H, W), np.ones((2, 2), dtype="float32"))
    fine_path = tmp_path / "fine.tif"
    with rasterio.open(
        fine_path,
        "w",
        driver="GTiff",
        width=2 * W,
        height=2 * H,
        count=1,
        dtype="float32",
        crs=UTM,
        transform=Affine(10, 0, 380_000, 0, -10, 3_800_000),
    ) as dst:
        dst.write(fine, 1)
        dst.set_band_description(1, "nir")
    grid = rx.Grid(UTM, UTM_T, W, H)
    coarse = rx.load_raster(fine_path, grid=grid, chunks=32)["nir"].values
    assert np.allclose(coarse[1:-1, 1:-1], np.arange(H * W).reshape(H, W)[1:-1, 1:-1])
    # an AOI masks pixels whose centre is outside the polygon and crops the grid to its bounds
    aoi = shapely.Polygon([(-117.3, 34.3), (-117.29, 34.3), (-117.29, 34.31)])
    utm_box = rx.io.reproject_geometry(box(380_200, 3_798_900, 381_000, 3_799_600), UTM, "EPSG:4326")
    clipped = rx.load_raster(path, aoi_4326=utm_box)
    assert clipped.attrs["grid"].width < W and not np.isnan(clipped["nir"].values).all()
    with pytest.raises(ValueError):
        rx.load_raster(path, aoi_4326=aoi)  # outside the raster


def test_item_set_composite_masks_clouds_with_scl_and_takes_the_median(tmp_path):
    base = scenes()[0]
    items = []
    for day, cloudy in (("2025-01-01", True), ("2025-01-06", False), ("2025-01-11", False)):
        scene = {b: a * (1.0 if day != "2025-01-11" else 1.02) for b, a in base.items()}
        scl = np.full((H, W), 4, dtype="uint8")  # vegetation
        if cloudy:
            scl[:20, :] = 9  # cloud high probability
            for b in scene:
                scene[b] = scene[b].copy()
                scene[b][:20, :] = 9000.0  # bright cloud tops
        assets = {}
        for name, arr in [*scene.items(), ("scl", scl)]:
            p = tmp_path / f"{day}_{name}.tif"
            with rasterio.open(
                p, "w", driver="GTiff", width=W, height=H, count=1, dtype=arr.dtype, crs=UTM, transform=UTM_T
            ) as dst:
                dst.write(arr, 1)
            assets[name] = {"href": str(p)}
        items.append(
            {
                "type": "Feature",
                "id": day,
                "properties": {"datetime": f"{day}T18:00:00Z", "eo:cloud_cover": 30 if cloudy else 1},
                "assets": assets,
                "geometry": None,
            }
        )
    scene_grid = rx.Grid(UTM, UTM_T, W, H)
    aoi = rx.io.reproject_geometry(box(380_300, 3_799_100, 381_100, 3_799_700), UTM, "EPSG:4326")
    grid = rx.grid_for_items(items, ["nir", "swir22"], aoi)  # on the items' lattice, over the AOI only
    assert grid.res == (20.0, 20.0) and grid.offset_in(scene_grid) is not None and grid.width < W
    ds = rx.load_item_set(items, ["nir", "swir22"], scene_grid, chunks=32)
    assert ds.attrs["dates"] == ["2025-01-01", "2025-01-06", "2025-01-11"] and ds.attrs["cloud_masked"]
    nir = ds["nir"].values
    # cloud rows: median of the two clear dates; clear rows: median of the three = the middle value
    assert np.allclose(nir[:20], base["nir"][:20] * 1.01)
    assert np.allclose(nir[20:], base["nir"][20:], equal_nan=True)
    unmasked = rx.load_item_set(items, ["nir"], scene_grid, cloud_mask=False)["nir"].values
    assert np.allclose(unmasked[:20], base["nir"][:20] * 1.02)  # the cloud biases the unmasked median


def test_write_cog_is_tiled_with_overviews(tmp_path):
    grid = rx.Grid(UTM, UTM_T, 600, 600)
    data = np.random.default_rng(1).random((600, 600)).astype("float32")
    path = rx.write_cog([data], grid, tmp_path / "out.tif", band_names=["value"])
    with rasterio.open(path) as src:
        assert src.profile["tiled"] and src.overviews(1) and src.descriptions == ("value",)
        assert np.array_equal(src.read(1), data)


# ------------------------------------------------------------------------- tools on synthetic data
@pytest.mark.parametrize("crs,transform", [(UTM, UTM_T), ("EPSG:4326", GEO_T)], ids=["utm", "epsg4326"])
def test_burned_and_flooded_areas_are_exact_to_one_pixel(ctx, tmp_path, crs, transform):
    pre, post, severity, flood = register_pair(ctx, tmp_path, crs, transform)
    pixel = 400.0 if crs == UTM else float(_row_cell_areas(transform, H).max())
    d = run(ctx, "dnbr", pre=pre, post=post)
    assert d.metadata.crs == crs and d.inputs == [pre.id, post.id] and d.extra["index"] == "dnbr"
    assert d.metadata.time_start.isoformat().startswith("2024-12-20") and d.metadata.time_end.isoformat().startswith(
        "2025-01-20"
    )
    sev = run(ctx, "burn_severity", dnbr=d)
    areas = {row["label"]: row for row in sev.extra["class_areas"]}
    for cls, label in enumerate(ops.DNBR_LABELS):
        assert areas[label]["pixels"] == int((severity == cls).sum())
        assert abs(areas[label]["area_m2"] - _expected_area(severity, [cls], transform, crs)) < min(
            pixel, 1e-6 * areas[label]["area_m2"] + 1
        )
    burned = _expected_area(severity, [1, 2, 3, 4], transform, crs)
    assert abs(sev.extra["highlight_km2"] * 1e6 - burned) <= pixel
    assert f"{burned / 1e6:.2f} km²" in sev.summary
    fl = run(ctx, "flood_extent", {"index": "mndwi"}, post=post, pre=pre)
    rows = {r["label"]: r for r in fl.extra["class_areas"]}
    assert rows["flooded"]["pixels"] == int((flood == 1).sum()) and rows["permanent water"]["pixels"] == int(
        (flood == 2).sum()
    )
    assert abs(rows["flooded"]["area_m2"] - _expected_area(flood, [1], transform, crs)) <= pixel
    assert abs(fl.extra["highlight_km2"] * 1e6 - _expected_area(flood, [1], transform, crs)) <= pixel
    # without the pre scene, permanent water counts as water (and the limitation says so)
    water = run(ctx, "flood_extent", {"index": "ndwi"}, post=post)
    assert abs(water.extra["highlight_km2"] * 1e6 - _expected_area(flood, [1, 2], transform, crs)) <= pixel
    assert any("permanent water" in x for x in water.extra["limitations"])


@pytest.mark.parametrize("crs,transform", [(UTM, UTM_T), ("EPSG:4326", GEO_T)], ids=["utm", "epsg4326"])
def test_polygonised_area_equals_pixel_count_times_pixel_area(ctx, tmp_path, crs, transform):
    pre, post, severity, _ = register_pair(ctx, tmp_path, crs, transform)
    sev = run(ctx, "burn_severity", dnbr=run(ctx, "dnbr", pre=pre, post=post))
    polys = run(ctx, "polygonize", {"classes": [1, 2, 3, 4]}, raster=sev)
    gdf = ctx.store.read_vector(polys.id)
    assert sorted(gdf["class"]) == [1, 2, 3, 4] and set(gdf["label"]) == set(ops.DNBR_LABELS[1:])
    for _, row in gdf.iterrows():
        expected = _expected_area(severity, [row["class"]], transform, crs)
        assert row["pixels"] == int((severity == row["class"]).sum())
        assert row["area_m2"] == pytest.approx(expected, rel=1e-6)
    # the store's own (independent, geodesic) measure of the layer agrees
    assert polys.metadata.total_area_m2 == pytest.approx(
        _expected_area(severity, [1, 2, 3, 4], transform, crs), rel=2e-3
    )
    assert polys.metadata.geometry_type in ("MultiPolygon", "Mixed", "Polygon")


def test_zonal_stats_match_a_hand_computation(ctx, tmp_path):
    values = np.arange(H * W, dtype="float32").reshape(H, W) / 100
    values[10:12, 10:40] = np.nan
    path = tmp_path / "values.tif"
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        width=W,
        height=H,
        count=1,
        dtype="float32",
        crs=UTM,
        transform=UTM_T,
        nodata=float("nan"),
    ) as dst:
        dst.write(values, 1)
        dst.set_band_description(1, "ndvi")
    raster = ctx.store.register_raster_file(path, source="test", summary="values")
    tri = Polygon([(380_105, 3_799_893), (381_207, 3_799_105), (380_133, 3_798_987)])
    rect = box(380_511, 3_799_001, 380_993, 3_799_511)
    zones_utm = gpd.GeoDataFrame({"name": ["triangle", "rectangle"]}, geometry=[tri, rect], crs=UTM)
    zones = ctx.store.register_vector(zones_utm.to_crs(4326), source="test", summary="zones")  # reprojected by the tool
    rec = run(ctx, "zonal_stats", {"by": "name"}, raster=raster, zones=zones)
    got = {z["zone"]: z for z in rec.extra["zones"]}
    cols, rows = np.meshgrid(np.arange(W), np.arange(H))
    xs, ys = UTM_T * (cols + 0.5, rows + 0.5)
    for name, geom in (("triangle", tri), ("rectangle", rect)):
        # the zones went through EPSG:4326 and back: use the round-tripped polygon for the hand count
        geom_rt = gpd.GeoSeries([geom], crs=UTM).to_crs(4326).to_crs(UTM).iloc[0]
        inside = shapely.contains_xy(geom_rt, xs, ys) & ~np.isnan(values)
        v = values[inside].astype("float64")
        assert got[name]["pixels"] == v.size and got[name]["area_m2"] == pytest.approx(v.size * 400.0)
        assert got[name]["mean"] == pytest.approx(v.mean()) and got[name]["min"] == pytest.approx(v.min())
        assert got[name]["max"] == pytest.approx(v.max()) and got[name]["std"] == pytest.approx(v.std())
    text = ctx.store.read_text(rec.id)
    assert text.splitlines()[0].startswith("Mean ndvi of") and f"{got['triangle']['mean']:.3f}" in text


def test_band_time_and_input_checks_fail_before_any_read(ctx, tmp_path):
    pre, post, _, _ = register_pair(ctx, tmp_path, UTM, UTM_T)
    only_rgb = write_scene(
        tmp_path / "rgb.tif", scenes()[0], UTM, UTM_T, descriptions=["B02", "B03", "B04", "B05", "B06", "B07"]
    )
    rgb = ctx.store.register_raster_file(only_rgb, source="test", summary="no nir")
    with pytest.raises(ToolFailed, match="lacks band.*nir.*swir22") as err:
        run(ctx, "dnbr", pre=rgb, post=post)
    assert err.value.kind == "invalid_input"
    with pytest.raises(ToolFailed, match="is later than 'post'") as err:
        run(ctx, "dnbr", pre=post, post=pre)
    assert err.value.kind == "invalid_input" and "swap" in err.value.hint
    ndvi = run(ctx, "compute_index", {"index": "ndvi"}, scene=post)
    with pytest.raises(ToolFailed, match="not dNBR"):
        run(ctx, "burn_severity", dnbr=ndvi)
    with pytest.raises(ToolFailed, match="not a class raster"):
        run(ctx, "polygonize", raster=ndvi)
    # mndwi without swir16 falls back to ndwi, with a note
    no_swir = write_scene(
        tmp_path / "noswir.tif", scenes()[1], UTM, UTM_T, descriptions=["B02", "B03", "B04", "B08", "B05", "B12"]
    )
    post_ns = ctx.store.register_raster_file(no_swir, source="test", summary="no swir16")
    out = run(ctx, "flood_extent", {"index": "mndwi"}, post=post_ns)
    assert out.extra["index"] == "ndwi" and any("NDWI" in n for n in ctx.notes)


def test_a_cancelled_run_stops_between_windows(ctx, tmp_path):
    pre, post, _, _ = register_pair(ctx, tmp_path, UTM, UTM_T)
    ctx.cancel.set()
    with pytest.raises(ToolFailed) as err:
        TOOLS["dnbr"].fn(ctx, TOOLS["dnbr"].args_model(), pre=pre, post=post)  # past the pre-dispatch check
    assert err.value.kind == "cancelled" and len(ctx.store) == 2


# ---------------------------------------------------------------------------- the Hurst Fire pair
@pytest.fixture()
def hurst(ctx):
    return register_hurst(ctx.store)


def test_hurst_dnbr_matches_the_reference_and_the_mean_inside_the_mask(ctx, hurst):
    pre, post, mask = hurst
    d = run(ctx, "dnbr", pre=pre, post=post)
    with rasterio.open(ctx.store.abs_path(d.id)) as got, rasterio.open(HURST / "HURST_20250107_dnbr.tif") as ref:
        assert got.crs == ref.crs and got.transform.almost_equals(ref.transform) and got.shape == ref.shape
        assert np.allclose(got.read(1), ref.read(1), atol=1e-6, rtol=0)
        inside = rasterio.open(HURST / "HURST_20250107_fire_mask.tif").read(1) == 1
        dn = got.read(1).astype("float64")
    assert dn[inside].mean() == pytest.approx(0.395, abs=5e-4) and dn[~inside].mean() == pytest.approx(0.016, abs=5e-4)
    by_class = run(ctx, "zonal_stats", raster=d, zones=mask)
    zones = {z["zone"]: z for z in by_class.extra["zones"]}
    assert zones["1"]["pixels"] == 10_225 and zones["0"]["pixels"] == 40_400
    assert zones["1"]["mean"] == pytest.approx(dn[inside].mean(), abs=1e-6)
    assert "1: mean 0.395" in by_class.summary and "0: mean 0.016" in by_class.summary


def test_orchestrated_hurst_run_answers_with_the_mean_dnbr_inside_the_fire_mask(store, hurst):
    pre, post, mask = hurst
    record, model = ask_hurst(store, pre, post, mask)
    assert record.status == "answered", record.answer
    assert [s.tool for s in record.steps] == ["dnbr", "polygonize", "zonal_stats"]
    assert "1: mean 0.395" in record.answer and "0: mean 0.016" in record.answer
    final = store.get(record.cited_artifacts[0])
    assert final.inputs[0] == record.steps[0].artifact_id and final.extra["zones"][1]["pixels"] == 10_225
    # the specialist saw only its instruction and input metadata (ids, bands), no pixels
    prompt = model.calls_for("raster")[0].messages[-1].content
    assert pre.id in prompt and "B12" in prompt and "coordinates" not in prompt
    saved = json.loads((store.session_dir / "runs" / f"{record.run_id}.json").read_text())
    assert saved["status"] == "answered"


# ------------------------------------------------------------------------------------- templates
def test_raster_templates_compile_into_typed_tool_chains(store):
    from geofaham_plugin.core.planning.planner import Planner, rank_templates
    from geofaham_plugin.core.planning.prepass import prepass
    from geofaham_plugin.core.planning.templates import TemplateError, compile_template, fill_slots, load_templates

    templates = load_templates()
    facts = prepass("Map the burn severity of the Eaton fire from Sentinel-2")
    assert rank_templates(facts)[0][0] == "burn_severity"
    result = Planner(LLM(ScriptedModel({"planner": [{"template": "burn_severity"}]})), always_ask_model=True).plan(
        facts, store
    )
    assert [(s.agent.value, s.tool) for s in result.plan.steps] == [
        ("vector", "load_event_layer"),
        ("stac", "search_imagery"),
        ("stac", "search_imagery"),
        ("raster", "dnbr"),
        ("raster", "burn_severity"),
    ]
    dnbr_step = result.plan.steps[3]
    assert dnbr_step.inputs == {"pre": "step:2", "post": "step:3", "aoi": "step:1"} and dnbr_step.depends_on == [
        1,
        2,
        3,
    ]
    assert result.plan.steps[1].args["window"] == "pre" and result.plan.steps[2].args["days"] == 30
    flood = compile_template(templates["flood_mapping"], {}, event_id=6, event_name="Valencia DANA flood")
    assert [s.tool for s in flood.steps] == ["event_aoi", "search_imagery", "search_imagery", "flood_extent"]
    change = compile_template(templates["index_change"], {"index": "NDWI", "days": 20}, event_id=5)
    assert change.steps[-1].args == {"index": "ndwi"} and change.steps[1].args["days"] == 20
    with pytest.raises(TemplateError, match="unknown index"):
        fill_slots(templates["index_change"], {"index": "evi"})
    with pytest.raises(TemplateError, match="days"):
        fill_slots(templates["index_change"], {"days": 0})
    assert rank_templates(prepass("How did NDVI change after Cyclone Chido?"))[0][0] == "index_change"
