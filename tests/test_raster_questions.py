"""Raster layers in the catalogue and raster measures in the analysis spec (issue 27): the Hurst pre-fire, post-fire
and mask GeoTIFFs given as your layers (as ``--layer`` does) or named as the catalogue's sample rasters; the mean
dNBR inside the mask, the share at moderate-low severity or worse, the area per USGS severity class, areas below and
between thresholds. Every expected value is computed here, independently: NBR and dNBR with numpy from the bands
read with rasterio, pixel areas geodesic per pixel row with pyproj's Geod (no product code)."""

from __future__ import annotations

import numpy as np
import pytest
import rasterio
from pyproj import Geod

from geofaham_plugin.core.engines.layers import LayerCatalogue, data_dir
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.prepass import prepass

HURST = "raster/hurst-2025/HURST_20250107_"
BREAKS = (0.1, 0.27, 0.44, 0.66)  # USGS (Key & Benson 2006), written here independently of rasters.json
LABELS = ("unburned", "low", "moderate-low", "moderate-high", "high")


@pytest.fixture(scope="module")
def hurst():
    """Independent dNBR from the two composites (bands B8 = 4, B12 = 5), the mask, per-pixel geodesic areas."""
    root = data_dir()
    with (
        rasterio.open(root / f"{HURST}s2_pre_fire.tif") as pre,
        rasterio.open(root / f"{HURST}s2_post_fire.tif") as post,
    ):
        a, b = pre.read([4, 5]).astype("float64"), post.read([4, 5]).astype("float64")
        transform, height, width = pre.transform, pre.height, pre.width
    with rasterio.open(root / f"{HURST}fire_mask.tif") as m:
        inside = m.read(1) == 1
    with np.errstate(invalid="ignore", divide="ignore"):
        dnbr = (a[0] - a[1]) / (a[0] + a[1]) - (b[0] - b[1]) / (b[0] + b[1])
    geod = Geod(ellps="WGS84")
    x0, y0, dx, dy = transform.c, transform.f, transform.a, transform.e
    rows = np.array(
        [
            abs(
                geod.polygon_area_perimeter(
                    [x0, x0 + dx, x0 + dx, x0], [y0 + r * dy, y0 + r * dy, y0 + (r + 1) * dy, y0 + (r + 1) * dy]
                )[0]
            )
            for r in range(height)
        ]
    )
    areas = np.broadcast_to(rows[:, None], (height, width))
    return dnbr, inside, areas


def _orchestrator(store, catalogue):
    script = {"progress": [{"action": "finish", "reason": "nothing else applies"}] * 4}
    return Orchestrator(store, LLM(ScriptedModel(script)), layers=catalogue)


def _own(catalogue: LayerCatalogue) -> LayerCatalogue:
    root = data_dir()
    catalogue.add_user_layer("pre-fire", root / f"{HURST}s2_pre_fire.tif")
    catalogue.add_user_layer("post-fire", root / f"{HURST}s2_post_fire.tif")
    catalogue.add_user_layer("fire mask", root / f"{HURST}fire_mask.tif")
    return catalogue


def test_rasters_are_described_with_kind_dates_and_aliases_and_the_sample_ones_are_catalogued():
    catalogue = _own(LayerCatalogue(data_dir()))
    pre, post, mask = (catalogue.user_layers[f"user:{n}"] for n in ("pre_fire", "post_fire", "fire_mask"))
    assert (pre.raster_kind, pre.when, post.when, mask.raster_kind) == ("image", "pre", "post", "mask")
    assert {"nir", "swir22"} <= set(pre.band_names) and pre.bands == 5
    assert "post-fire image" in post.aliases and "mask" in mask.aliases
    samples = catalogue.raster_layers
    assert set(samples) == {
        "raster:hurst_pre_fire",
        "raster:hurst_post_fire",
        "raster:hurst_fire_mask",
        "raster:hurst_dnbr",
    }
    dnbr = samples["raster:hurst_dnbr"]
    assert (dnbr.index, dnbr.event, dnbr.raster_kind) == ("dnbr", "Hurst Fire", "values")
    # named by their event and kind, in four languages, through the same pre-pass as vector layers
    bare = LayerCatalogue(data_dir())
    for q, expected in [
        ("What was the average dNBR inside the Hurst burn mask?", "raster:hurst_fire_mask"),
        ("¿Cuál es el dNBR medio dentro de la máscara del incendio de Hurst?", "raster:hurst_fire_mask"),
        ("Quelle est la moyenne du dNBR dans le masque du feu de Hurst ?", "raster:hurst_fire_mask"),
        ("Show me the Hurst post-fire image", "raster:hurst_post_fire"),
        ("Qual é o dNBR médio da imagem anterior de Hurst?", "raster:hurst_pre_fire"),
    ]:
        assert expected in prepass(q, layers=bare).layers, q
    # your own rasters by their kind
    assert prepass("the mean NDVI of the post-fire image", layers=catalogue).layers == ["user:post_fire"]


def test_e2e_mean_dnbr_inside_the_mask_from_your_pre_and_post_images(store, hurst):
    dnbr, inside, _ = hurst
    expected = float(np.nanmean(dnbr[inside]))
    assert abs(expected - 0.395) < 0.006
    orch = _orchestrator(store, _own(LayerCatalogue(data_dir())))
    record = orch.run("What is the mean dNBR inside the fire mask?")
    assert record.status == "answered", record.answer
    tools = [s.tool for s in record.steps]
    assert tools == [
        "load_raster_layer",
        "load_raster_layer",
        "dnbr",
        "load_raster_layer",
        "polygonize",
        "raster_stats",
    ]
    (value,) = record.structured.totals()
    assert value.measure == "mean" and abs(value.value - expected) < 0.0006, (value.value, expected)
    assert abs(value.value - 0.395) <= 0.006
    assert "dNBR computed from 'pre-fire' (before) and 'post-fire' (after)" in record.answer


def test_e2e_share_at_moderate_low_severity_or_worse_and_areas_within_thresholds(store, hurst):
    dnbr, inside, areas = hurst
    values = dnbr[inside]
    orch = _orchestrator(store, _own(LayerCatalogue(data_dir())))
    share = orch.run("What share of the fire mask burned at moderate-low severity or worse?")
    assert share.status == "answered", share.answer
    assert share.steps[-1].tool == "raster_stats" and share.steps[-1].args["above"] == 0.27
    (value,) = share.structured.totals()
    assert value.unit == "percent" and abs(value.value - 100 * float((values >= 0.27).mean())) < 0.05

    below = orch.run("How many km² inside the fire mask have a dNBR below 0.1?")
    assert below.status == "answered", below.answer
    (value,) = below.structured.totals()
    expected = float(areas[inside & (dnbr < 0.1)].sum()) / 1e6
    assert value.unit == "km2" and abs(value.value - expected) <= 0.005 * expected + 0.0005, (value.value, expected)

    between = orch.run("What area inside the fire mask has a dNBR between 0.27 and 0.66?")
    assert between.status == "answered", between.answer
    assert between.steps[-1].args | {} == {"stat": "area", "by": None, "above": 0.27, "below": 0.66}
    (value,) = between.structured.totals()
    expected = float(areas[inside & (dnbr >= 0.27) & (dnbr < 0.66)].sum()) / 1e6
    assert abs(value.value - expected) <= 0.005 * expected, (value.value, expected)


def test_e2e_burned_area_per_usgs_class_inside_the_mask_and_over_the_whole_image(store, hurst):
    dnbr, inside, areas = hurst
    classes = np.digitize(dnbr, BREAKS)
    orch = _orchestrator(store, _own(LayerCatalogue(data_dir())))
    for question, where in [
        ("What is the burned area per USGS severity class inside the fire mask?", inside),
        ("What is the burned area per USGS severity class?", np.ones_like(inside)),
    ]:
        record = orch.run(question)
        assert record.status == "answered", record.answer
        assert record.steps[-1].tool == "class_areas"
        _assert_class_areas(record, areas, where, classes)
        (total,) = record.structured.totals()
        burned = float(areas[where & (classes >= 1)].sum()) / 1e6
        assert total.unit == "km2" and abs(total.value - burned) <= 0.005 * burned


def _assert_class_areas(record, areas, where, classes) -> None:
    """One figure per USGS class, in the scale's order, each the geodesic area of its pixels in ``where``."""
    groups = {v.group: v.value for v in record.structured.values if v.group}
    assert list(groups) == list(LABELS), groups
    for i, label in enumerate(LABELS):
        expected = float(areas[where & (classes == i)].sum()) / 1e6
        assert abs(groups[label] - expected) <= 0.005 * expected + 0.0005, (label, groups[label], expected)


def test_e2e_the_sample_rasters_named_by_their_event(store, hurst):
    dnbr, inside, _ = hurst
    orch = _orchestrator(store, LayerCatalogue(data_dir()))
    record = orch.run("What was the average dNBR inside the Hurst burn mask?")  # was: "could not identify: Hurst"
    assert record.status == "answered", record.answer
    assert [s.args.get("layer_id") for s in record.steps[:2]] == ["raster:hurst_dnbr", "raster:hurst_fire_mask"]
    (value,) = record.structured.totals()
    assert abs(value.value - float(np.nanmean(dnbr[inside]))) < 0.0006
    spanish = orch.run("¿Qué porcentaje de la máscara del incendio de Hurst ardió con severidad moderada-baja o peor?")
    assert spanish.status == "answered", spanish.answer
    (value,) = spanish.structured.totals()
    assert abs(value.value - 100 * float((dnbr[inside] >= 0.27).mean())) < 0.05


def test_e2e_ndvi_change_one_date_index_and_mean_dnbr_per_zone_of_your_layer(store, hurst, tmp_path):
    import geopandas as gpd
    from rasterio.features import geometry_mask
    from shapely.geometry import box

    dnbr, inside, _ = hurst
    root = data_dir()
    with (
        rasterio.open(root / f"{HURST}s2_pre_fire.tif") as pre,
        rasterio.open(root / f"{HURST}s2_post_fire.tif") as post,
    ):
        a, b = pre.read([3, 4]).astype("float64"), post.read([3, 4]).astype("float64")  # B4 red, B8 nir
        transform, shape = post.transform, (post.height, post.width)
    with np.errstate(invalid="ignore", divide="ignore"):
        ndvi_pre, ndvi_post = (a[1] - a[0]) / (a[1] + a[0]), (b[1] - b[0]) / (b[1] + b[0])
    change = ndvi_post - ndvi_pre
    sectors = gpd.GeoDataFrame(
        {"sector": ["West", "East"]},
        geometry=[box(-118.5027, 34.312, -118.4825, 34.3525), box(-118.4825, 34.312, -118.4623, 34.3525)],
        crs=4326,
    )
    sectors.to_file(tmp_path / "sectors.gpkg")
    catalogue = _own(LayerCatalogue(data_dir()))
    catalogue.add_user_layer("sectors", tmp_path / "sectors.gpkg")
    orch = _orchestrator(store, catalogue)

    record = orch.run("What is the mean NDVI change inside the fire mask?")
    assert record.status == "answered", record.answer
    assert "index_change" in [s.tool for s in record.steps]
    assert abs(record.structured.totals()[0].value - float(np.nanmean(change[inside]))) < 0.0006

    record = orch.run("What is the mean NDVI of the post-fire image inside the fire mask?")
    assert record.status == "answered", record.answer
    assert [s.tool for s in record.steps][:2] == ["load_raster_layer", "compute_index"]
    assert abs(record.structured.totals()[0].value - float(np.nanmean(ndvi_post[inside]))) < 0.0006

    record = orch.run("What share of the fire mask had an NDVI change below -0.2?")
    assert record.status == "answered", record.answer
    assert abs(record.structured.totals()[0].value - 100 * float((change[inside] < -0.2).mean())) < 0.05

    record = orch.run("What is the mean dNBR in each sector?")
    assert record.status == "answered", record.answer
    groups = {v.group: v.value for v in record.structured.values if v.group}
    for name, geom in zip(sectors["sector"], sectors.geometry, strict=True):
        zone = geometry_mask([geom], out_shape=shape, transform=transform, invert=True)
        assert abs(groups[name] - float(np.nanmean(dnbr[zone]))) < 0.0006, (name, groups)


def test_e2e_median_and_maximum_are_their_own_statistics_not_the_mean(store, hurst):
    dnbr, inside, _ = hurst
    values = dnbr[inside]
    orch = _orchestrator(store, _own(LayerCatalogue(data_dir())))
    for question, stat, expected in [
        ("What is the median dNBR inside the fire mask?", "median", float(np.nanmedian(values))),
        ("What is the maximum dNBR inside the fire mask?", "max", float(np.nanmax(values))),
    ]:
        record = orch.run(question)
        assert record.status == "answered", record.answer
        assert record.steps[-1].args["stat"] == stat
        assert abs(record.structured.totals()[0].value - expected) < 0.0006, (question, expected)


def test_batch_inputs_rasters_of_the_folder_are_rasters_of_yours(tmp_path, hurst):
    """Batch mode: the folder's rasters are read in place as the user's rasters (named by their file stem)."""
    import shutil

    from bench.batch import OutputSpec, run_batch

    dnbr, inside, _ = hurst
    folder = tmp_path / "in"
    folder.mkdir()
    for name, part in [("pre_fire", "s2_pre_fire"), ("post_fire", "s2_post_fire"), ("fire_mask", "fire_mask")]:
        shutil.copyfile(data_dir() / f"{HURST}{part}.tif", folder / f"{name}.tif")  # (a link out of it is refused)
    script = {"progress": [{"action": "finish", "reason": "nothing else applies"}] * 4}
    manifest = run_batch(
        "What is the mean dNBR inside the fire mask?",
        folder,
        [OutputSpec(name="mean.csv")],
        tmp_path / "out",
        session=tmp_path / "session",
        llm=LLM(ScriptedModel(script)),
        log=lambda _: None,
    )
    assert manifest["status"] == "answered", manifest["answer"]
    assert "mean of dnbr: 0.395" in manifest["answer"]
    (written,) = manifest["outputs"]
    import pandas as pd

    table = pd.read_csv(written["path"])
    assert abs(float(table["mean"].iloc[0]) - float(np.nanmean(dnbr[inside]))) < 0.0006


def test_an_index_of_images_the_session_does_not_hold_is_said_not_answered(store):
    catalogue = LayerCatalogue(data_dir())
    catalogue.add_user_layer("fire mask", data_dir() / f"{HURST}fire_mask.tif")
    script = {"progress": [{"action": "finish", "reason": "nothing else applies"}] * 4}
    record = Orchestrator(store, LLM(ScriptedModel(script)), layers=catalogue).run(
        "What is the mean dNBR inside my fire mask?"
    )
    assert record.status != "answered" and not record.structured.totals()
    assert "no image is loaded" in record.answer


def test_e2e_the_mean_and_the_share_asked_in_four_languages(store, hurst):
    dnbr, inside, _ = hurst
    mean, share = float(np.nanmean(dnbr[inside])), 100 * float((dnbr[inside] >= 0.27).mean())
    orch = _orchestrator(store, _own(LayerCatalogue(data_dir())))
    for question, measure, expected, tol in [
        ("¿Cuál es el dNBR medio dentro de la máscara?", "mean", mean, 0.0006),
        ("Quel est le dNBR moyen dans le masque du feu ?", "mean", mean, 0.0006),
        ("Média do dNBR dentro da máscara, por favor", "mean", mean, 0.0006),
        ("Quelle part du masque a brûlé en sévérité modérée-faible ou pire ?", "share", share, 0.05),
        ("¿Qué porcentaje de la máscara ardió con severidad moderada-baja o peor?", "share", share, 0.05),
    ]:
        record = orch.run(question)
        assert record.status == "answered", (question, record.answer)
        (value,) = record.structured.totals()
        assert value.measure == measure and abs(value.value - expected) < tol, (question, value)


def test_e2e_hectares_per_class_from_your_dnbr_raster_with_every_class_named(store, hurst):
    """A dNBR raster of yours (not images to compute it from) and the mask: "per class", every class named in a list
    ("unburned, low, ..., high") is one figure per class, not a range from the first to the last (it raised a
    TypeError); the values raster is measured inside the mask whichever was named first. Expected from the dNBR
    file read here (classes by numpy.digitize; the file shares the composites' grid, so the fixture's areas)."""
    _, inside, areas = hurst
    root = data_dir()
    with rasterio.open(root / f"{HURST}dnbr.tif") as src:
        classes = np.digitize(src.read(1).astype("float64"), BREAKS)
    catalogue = LayerCatalogue(data_dir())
    catalogue.add_user_layer("fire mask", root / f"{HURST}fire_mask.tif")
    catalogue.add_user_layer("dnbr", root / f"{HURST}dnbr.tif")
    record = _orchestrator(store, catalogue).run(
        "Break the area inside the fire mask down by USGS burn-severity class (unburned, low, moderate-low, "
        "moderate-high, high) from the dNBR raster. Hectares per class."
    )
    assert record.status == "answered", record.answer
    assert record.steps[-1].tool == "class_areas"
    _assert_class_areas(record, areas, inside, classes)


def test_e2e_a_statistic_of_your_raster_with_no_area_said_is_over_the_whole_raster(store):
    """No mask, zones or hazard said: the median of every pixel of your dNBR raster, as numpy gives it, and the
    answer says it was taken over the whole raster."""
    root = data_dir()
    with rasterio.open(root / f"{HURST}dnbr.tif") as src:
        expected = float(np.nanmedian(src.read(1).astype("float64")))
    catalogue = LayerCatalogue(data_dir())
    catalogue.add_user_layer("dnbr", root / f"{HURST}dnbr.tif")
    record = _orchestrator(store, catalogue).run("What's the median dNBR over the entire image, every pixel counted?")
    assert record.status == "answered", record.answer
    (value,) = record.structured.totals()
    assert abs(value.value - expected) < 0.0005, (value.value, expected)
    assert "over the whole raster" in record.answer


def test_e2e_the_pair_of_your_images_when_the_question_names_one_of_them(store, hurst):
    """Files named as they come ("HURST_20250107_s2_pre_fire.tif" ...): "the pre- and post-fire composites" names
    one of them only; dNBR is computed from the pair of yours, its mean inside the mask as numpy gives it."""
    dnbr, inside, _ = hurst
    root = data_dir()
    catalogue = LayerCatalogue(data_dir())
    for stem in ("s2_pre_fire", "s2_post_fire", "fire_mask"):
        catalogue.add_user_layer(f"HURST_20250107_{stem}", root / f"{HURST}{stem}.tif")
    record = _orchestrator(store, catalogue).run(
        "All I have are the pre- and post-fire Sentinel-2 composites and the perimeter mask. Work out dNBR from the "
        "two images, then tell me its average inside the mask."
    )
    assert record.status == "answered", record.answer
    (value,) = record.structured.totals()
    assert abs(value.value - float(np.nanmean(dnbr[inside]))) < 0.0006, record.answer


def test_e2e_a_copy_of_a_sample_raster_given_as_yours_is_yours(store, hurst, tmp_path):
    """The Hurst dNBR copied and given as a layer of yours, named in the question as the sample is ("the Hurst dNBR
    raster"): your layer is the one read (the sample it copies is not a second raster named), the answer is not
    partial, and the share at 0.44 or above inside the mask is numpy's."""
    import shutil

    _, inside, _ = hurst
    root = data_dir()
    copy = tmp_path / "HURST_20250107_dnbr.tif"
    shutil.copyfile(root / f"{HURST}dnbr.tif", copy)
    with rasterio.open(copy) as src:
        values = src.read(1).astype("float64")[inside]
    catalogue = LayerCatalogue(data_dir())
    catalogue.add_user_layer("HURST_20250107_dnbr", copy)
    catalogue.add_user_layer("HURST_20250107_fire_mask", root / f"{HURST}fire_mask.tif")
    facts = prepass("Hurst dNBR raster: share of the fire mask at 0.44 or above?", layers=catalogue)
    assert "raster:hurst_dnbr" not in facts.layers and "user:hurst_20250107_dnbr" in facts.layers
    record = _orchestrator(store, catalogue).run("Hurst dNBR raster: share of the fire mask at 0.44 or above?")
    assert record.status == "answered", record.answer
    (value,) = record.structured.totals()
    assert abs(value.value - 100 * float((values >= 0.44).mean())) < 0.05, record.answer
