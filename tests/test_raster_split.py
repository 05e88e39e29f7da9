"""The raster split (``bench/raster.json``): questions about rasters the user has (burn severity from a dNBR raster and
a fire mask, dNBR and NDVI change from pre/post Sentinel-2 composites, people inside or near the València flood from a
population grid, per district of an admin layer, a grid in a projected CRS), written without looking at how GeoFaham
reads a question, with input files that ``bench/raster_inputs.py`` writes into the task's session at run time and
expected values that ``bench/ground_truth_raster.py`` computes by code of its own (no GeoFaham import). Here: the file
loads as a split, its references resolve, two values are recomputed another way (pixel areas in UTM 11N instead of
geodesic rows; people by pixel-centre points in the flood polygon instead of a rasterised mask), and the generated
population grids hold their documented totals and are uneven."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
import shapely

from bench import raster_inputs
from bench.aoi_files import AOI_FILES, write_input_file
from bench.spec import BENCH_DIR, PARAPHRASES_FILE, TASKS_FILE, TaskSpec, load_expected, load_tasks
from tests.heldout_shared import earlier_splits
from tests.test_examples_apart import example_questions, too_close
from tests.test_heldout2_split import VALUE_KINDS, questions, reading_bank_questions, sample_data

RASTER_FILE = BENCH_DIR / "raster.json"
HURST = "raster/hurst-2025/HURST_20250107_"
FLOOD_FILE = "valencia-2024/emsr773_observed_flood_merged.geojson"
GEO_GRID, UTM_GRID = "population_horta_sud_100m.tif", "population_horta_sud_utm30n.tif"


@pytest.fixture(scope="module")
def raster_tasks() -> list[TaskSpec]:
    return load_tasks(RASTER_FILE)


@pytest.fixture(scope="module")
def values() -> dict:
    return load_expected()["raster"]


# ---------------------------------------------------------------------------------------- the file
def test_every_task_loads_in_the_raster_split(raster_tasks):
    """At least ten offline one-turn tasks ``rs_…`` of the ``raster`` split, mostly English with at least two in
    Spanish and one in French or Portuguese (the language in the id), each with input files, expectations and
    failure modes, and no id another task file uses."""
    assert len(raster_tasks) >= 10
    ids = [t.id for t in raster_tasks]
    assert len(ids) == len(set(ids)) and all(i.startswith("rs_") for i in ids)
    assert {t.split for t in raster_tasks} == {"raster"}
    assert all(t.offline and not t.follow_ups and t.expectations and t.failure_modes for t in raster_tasks)
    assert all(t.input_files for t in raster_tasks)
    languages = Counter(t.language for t in raster_tasks)
    assert languages["en"] > len(raster_tasks) / 2 and languages["es"] >= 2 and languages["fr"] + languages["pt"] >= 1
    assert all(t.id.startswith(f"rs_{t.language}_") for t in raster_tasks if t.language != "en")
    others = load_tasks(TASKS_FILE) + load_tasks(PARAPHRASES_FILE)
    for split in earlier_splits(14):
        others += load_tasks(split)
    assert not set(ids) & {t.id for t in others}


def test_every_expectation_points_into_the_raster_values(raster_tasks):
    expected = load_expected()
    for task in raster_tasks:
        for e in task.all_expectations():
            assert e.ref is not None and e.ref.startswith("raster."), (task.id, e.id)
            assert e.description.strip(), (task.id, e.id)
            assert VALUE_KINDS[e.kind](e.resolve(expected)), (task.id, e.id, e.resolve(expected))


def test_the_split_asks_severity_exposure_and_change(raster_tasks):
    """Means, a median, a percentile, shares, areas per class and above thresholds, dNBR and NDVI computed from two
    images, people inside and within a distance of the flood, per district, on a projected grid."""
    measures = Counter(e.measure for t in raster_tasks for e in t.expectations)
    assert {"mean", "median", "share", "area", "sum"} <= set(measures), measures
    assert measures["sum"] >= 3, measures  # people totals: sums of a people-count grid, not counts of features
    kinds = Counter(e.kind for t in raster_tasks for e in t.expectations)
    assert kinds["count_by"] >= 2 and kinds["value"] >= 11, kinds
    inputs = {n for t in raster_tasks for n in t.input_files}
    assert set(raster_inputs.HURST_COPIES) | set(raster_inputs.GRIDS) | {raster_inputs.DISTRICTS_FILE} == inputs
    assert any(t.buffer_m for t in raster_tasks)
    by_ref = {e.ref for t in raster_tasks for e in t.expectations}
    for ref in ("hurst.class_area_mask_ha", "hurst.recomputed_mean_dnbr_mask", "hurst.ndvi_drop_mean_mask"):
        assert f"raster.{ref}" in by_ref, ref
    for ref in ("inside_flood", "within_2km_flood", "flood_by_district", "utm_inside_flood"):
        assert f"raster.population.{ref}" in by_ref, ref


def test_input_files_are_written_at_run_time_never_committed(raster_tasks, tmp_path):
    names = {n for t in raster_tasks for n in t.input_files}
    for name in names:
        assert name not in AOI_FILES and raster_inputs.is_raster_input(name)
        assert not list(BENCH_DIR.rglob(name)), name
        path = write_input_file(name, tmp_path)  # the runner's writer dispatches to bench.raster_inputs
        assert path.is_file() and path.stat().st_size < 2_000_000, name
    for task in raster_tasks:  # the question names the input files of the user's it is about, or what they are
        assert task.required_sources, task.id


def test_questions_are_apart_from_the_other_question_sets_and_the_bank(raster_tasks):
    """No raster question is a near copy (difflib ratio > 0.6) of a question the product may have been shaped on (the
    bench's tasks, the paraphrase suite, the held-out splits, the template examples, the reading bank). Only ids are
    reported, so a failure does not show the other sets' wordings."""
    mine = questions(raster_tasks)
    others = questions(load_tasks(TASKS_FILE)) + questions(load_tasks(PARAPHRASES_FILE))
    for split in earlier_splits(14):
        others += questions(load_tasks(split))
    others += example_questions() + reading_bank_questions()
    close = too_close(others, mine)
    assert not close, [line.split(":")[0] for line in close]


def test_the_runner_registers_the_rasters_as_the_users_and_the_districts_as_a_layer(raster_tasks, tmp_path):
    from bench.runner import _register_input_files
    from geofaham_plugin.core.store.store import ResponseStore

    for i, task in enumerate(raster_tasks):
        store = ResponseStore(tmp_path / str(i))
        try:
            aoi_id, layers = _register_input_files(task, store, tmp_path / str(i), sample_data())
            assert aoi_id is None, task.id  # no input is the run's area: the districts are a layer to group by
            assert layers is not None
            assert {"user:" + Path(f).stem.lower() for f in task.input_files} <= set(layers.user_layers), task.id
        finally:
            store.close()


# ------------------------------------------------------------------------------- values, recomputed
def test_high_severity_hectares_recomputed_with_utm_pixel_areas(values):
    """High severity (dNBR >= 0.66) inside the mask, each pixel's area measured as its four corners projected to UTM
    11N (EPSG:32611) instead of geodesic rows."""
    from pyproj import Transformer

    root = sample_data()
    with rasterio.open(root / f"{HURST}dnbr.tif") as src:
        dnbr, t = src.read(1), src.transform
    with rasterio.open(root / f"{HURST}fire_mask.tif") as src:
        mask = src.read(1) == 1
    rows, cols = np.nonzero(mask & (dnbr >= 0.66))
    to_utm = Transformer.from_crs(4326, 32611, always_xy=True)
    xs = t.c + np.stack([cols, cols + 1, cols + 1, cols], axis=1) * t.a
    ys = t.f + np.stack([rows, rows, rows + 1, rows + 1], axis=1) * t.e
    ux, uy = to_utm.transform(xs, ys)
    area = shapely.area(shapely.polygons(np.stack([ux, uy], axis=2))).sum()
    assert abs(area / 1e4 - values["hurst"]["area_ge_066_mask_ha"]) <= 0.01 * values["hurst"]["area_ge_066_mask_ha"]
    assert values["hurst"]["class_area_mask_ha"]["high"] == values["hurst"]["area_ge_066_mask_ha"]


def test_people_inside_the_flood_recomputed_from_pixel_centre_points(values, tmp_path):
    """People inside the flood: the written grid's pixel centres as points, tested against the flood polygon in
    EPSG:4326 (shapely.contains_xy), instead of a rasterised mask."""
    path = write_input_file(GEO_GRID, tmp_path)
    with rasterio.open(path) as src:
        people, t, nodata = src.read(1).astype("float64"), src.transform, src.nodata
    rows, cols = np.indices(people.shape)
    x, y = t.c + (cols + 0.5) * t.a, t.f + (rows + 0.5) * t.e
    flood = shapely.union_all(gpd.read_file(sample_data() / FLOOD_FILE).to_crs(4326).geometry.make_valid().values)
    inside = shapely.contains_xy(flood, x, y) & (people != nodata)
    assert abs(people[inside].sum() - values["population"]["inside_flood"]) <= 0.002 * people[inside].sum()


# ---------------------------------------------------------------------------------- generated grids
@pytest.mark.parametrize("name", [GEO_GRID, UTM_GRID])
def test_the_population_grids_hold_their_documented_total_and_are_uneven(name, tmp_path):
    grid = raster_inputs.GRIDS[name]
    path = write_input_file(name, tmp_path)
    with rasterio.open(path) as src:
        assert src.crs.to_epsg() == int(grid.crs.split(":")[1]) and src.nodata == grid.nodata
        assert src.res == (grid.pixel, grid.pixel) and src.dtypes[0] == grid.dtype
        people = src.read(1)
    assert np.array_equal(people, raster_inputs.population_array(name))  # what the ground truth reads
    valid = people[people != grid.nodata].astype("float64")
    assert 0 < (people == grid.nodata).mean() < 0.2  # the lagoon and the sea
    assert abs(valid.sum() - grid.total) < (1.0 if np.dtype(grid.dtype).kind == "f" else 1e-9)
    assert (valid == 0).mean() > 0.05 and valid.std() / valid.mean() > 1.0  # empty pixels, uneven
    top = np.sort(valid)[::-1][: len(valid) // 10]
    assert top.sum() > 0.4 * valid.sum()  # a tenth of the pixels hold over 40 % of the people
    assert valid.max() > 20 * np.median(valid)


def test_the_districts_tile_part_of_the_flood_without_overlapping(tmp_path):
    districts = gpd.read_file(write_input_file(raster_inputs.DISTRICTS_FILE, tmp_path)).to_crs(25830)
    assert list(districts["name"]) == list(raster_inputs.DISTRICTS) and districts.is_valid.all()
    assert abs(districts.union_all().area - districts.area.sum()) < 1.0
    flood = gpd.read_file(sample_data() / FLOOD_FILE).to_crs(25830).union_all()
    assert all(g.intersection(flood).area > 1e6 for g in districts.geometry)


def test_the_cli_and_the_kept_runs_know_the_split(raster_tasks):
    from bench.cli import build_parser
    from bench.runs import SPLIT_FILES, split_task_ids

    args = build_parser().parse_args(["run", "--tasks-file", "raster", "--offline"])
    assert args.tasks_file == RASTER_FILE
    assert SPLIT_FILES["raster"] == RASTER_FILE.name
    assert split_task_ids("raster") == {t.id for t in raster_tasks}
