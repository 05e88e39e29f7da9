"""The second held-out question split (``bench/heldout2.json``): 30 questions written without looking at how GeoFaham
reads a question, in four languages, each apart from every question the product may have been shaped on (the bench's
tasks, its paraphrase suite, the first held-out split and the planner's reading bank), with expected values that
``bench/ground_truth_heldout2.py`` computes from the sample data by code of its own (no GeoFaham import)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import shapely

from bench.spec import BENCH_DIR, PARAPHRASES_FILE, TASKS_FILE, TaskSpec, load_expected, load_tasks
from tests.test_examples_apart import bench_questions, too_close

ROOT = Path(__file__).resolve().parents[1]
HELDOUT2_FILE = BENCH_DIR / "heldout2.json"
HELDOUT_FILE = BENCH_DIR / "heldout.json"
READING_BANK = ROOT / "geofaham_plugin" / "core" / "planning" / "data" / "reading_bank.jsonl"
DESTROYED, NONE = "Destroyed (>50%)", "No Damage"
#: expectation kind -> the test its expected value must pass (the held-out splits share it)
VALUE_KINDS = {
    "count": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "value": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "names": lambda v: isinstance(v, list) and all(isinstance(n, str) for n in v) and v,
    "count_by": lambda v: isinstance(v, dict) and v,
    "distance": lambda v: isinstance(v, dict) and v,
}


@pytest.fixture(scope="module")
def heldout2() -> list[TaskSpec]:
    return load_tasks(HELDOUT2_FILE)


def questions(tasks: list[TaskSpec]) -> list[tuple[str, str]]:
    return [(t.id, t.question) for t in tasks]


# ---------------------------------------------------------------------------------------- the file
def test_every_task_loads_in_the_heldout_split(heldout2):
    assert len(heldout2) == 30
    ids = [t.id for t in heldout2]
    assert len(ids) == len(set(ids)) and all(i.startswith("ho2_") for i in ids)
    assert {t.split for t in heldout2} == {"heldout"}
    assert all(t.offline and not t.follow_ups and t.expectations for t in heldout2)
    assert Counter(t.language for t in heldout2) == {"en": 18, "es": 4, "fr": 4, "pt": 4}
    others = load_tasks(TASKS_FILE) + load_tasks(PARAPHRASES_FILE) + load_tasks(HELDOUT_FILE)
    assert not set(ids) & {t.id for t in others}


def test_every_expectation_points_into_the_heldout2_values(heldout2):
    expected = load_expected()
    for task in heldout2:
        for e in task.all_expectations():
            assert e.ref is not None and e.ref.startswith("heldout2."), (task.id, e.id)
            assert e.description.strip(), (task.id, e.id)
            assert VALUE_KINDS[e.kind](e.resolve(expected)), (task.id, e.id, e.resolve(expected))


def test_several_figures_are_labelled_by_grade(heldout2):
    """A question asking for one figure per grade labels each expectation with its grade."""
    by_id = {t.id: t for t in heldout2}
    groups = {e.group for e in by_id["ho2_eaton_minor_major_destroyed"].expectations}
    assert groups == {"minor", "major", "destroyed"}
    assert {e.group for e in by_id["ho2_es_palisades_rozadas_e_intactas"].expectations} == {"affected", "none"}


def test_the_cli_lists_the_split_by_name():
    from bench.cli import build_parser

    args = build_parser().parse_args(["tasks", "--tasks-file", "heldout2"])
    assert args.tasks_file == HELDOUT2_FILE


# ------------------------------------------------------------------------------------ ground truth
def sample_data() -> Path:
    """The sample data folder; skips the test when it is not there."""
    from bench.ground_truth import data_dir

    try:
        return data_dir()
    except FileNotFoundError:
        pytest.skip("sample data not found (set GEOFAHAM_DATA_DIR)")


@pytest.fixture(scope="module")
def root() -> Path:
    return sample_data()


def test_expected_heldout2_values_are_what_the_module_computes(root):
    from bench.ground_truth_heldout2 import heldout2 as compute_heldout2

    fresh = json.loads(json.dumps(compute_heldout2(root), ensure_ascii=False))
    assert fresh["heldout2"] == load_expected()["heldout2"]


def test_some_values_recomputed_without_the_module(root):
    """A few values again, with plain GeoPandas (spatial joins, buffers) and none of the module's helpers."""
    values = load_expected()["heldout2"]

    pal = gpd.read_file(root / "palisades-2025" / "DINS_2025_Palisades_Public_View.geojson")
    assert int(pal.DAMAGE.isin(["Affected (1-9%)", "Minor (10-25%)"]).sum()) == values["palisades"]["affected_or_minor"]
    assert int((pal.DAMAGE != DESTROYED).sum()) == values["palisades"]["not_destroyed"] == 5165
    mobile = pal[pal.STRUCTURETYPE.str.startswith("Mobile Home")]
    assert int((mobile.DAMAGE == DESTROYED).sum()) == values["palisades"]["mobile_homes_by_grade"]["destroyed"]
    eaton = gpd.read_file(root / "eaton-2025" / "DINS_2025_Eaton_Public_View_2025-01-14.geojson")
    damaged = eaton[eaton.DAMAGE != NONE]
    assert int((damaged.DAMAGE != DESTROYED).sum()) == values["eaton"]["damaged_not_destroyed"] == 329

    perimeter = gpd.read_file(root / "eaton-2025" / "eaton_adjusted_fire_perimeter.geojson").to_crs(26911)
    hospitals = gpd.read_file(root / "poi" / "hifld-hospitals" / "hospitals_la_county_maui_county.geojson")
    la = hospitals[(hospitals.STATE == "CA") & (hospitals.COUNTY == "LOS ANGELES")].to_crs(26911)
    ring = perimeter.buffer(6000).union_all().difference(perimeter.buffer(4000).union_all())
    band = sorted(la.NAME[la.intersects(ring)])
    assert band == sorted(values["eaton"]["hospitals_4_to_6km"]["names"]) and len(band) == 4
    within7 = la.sjoin(gpd.GeoDataFrame(geometry=perimeter.buffer(7000), crs=26911), predicate="intersects")
    assert within7.NAME.nunique() == values["eaton"]["hospitals_within_7km"]["count"] == 10

    flood = gpd.read_file(root / "valencia-2024" / "emsr773_observed_flood_merged.geojson").to_crs(25830)
    health = gpd.read_file(root / "valencia-2024" / "valencia_city_health_facilities.geojson").to_crs(25830)
    inside = health.sjoin(flood[["geometry"]], predicate="intersects")
    assert sorted(inside.equipamien) == sorted(values["valencia"]["health_inside"]["names"]) and len(inside) == 4

    lines = gpd.read_file(root / "valencia-2024" / "osm-catarroja" / "lineas.geojson").to_crs(25830)
    bridges = lines[lines.bridge == "yes"].sjoin(flood[["geometry"]], predicate="intersects")
    assert len(bridges) == values["catarroja"]["bridges_in_flood"]

    burn = gpd.read_file(root / "lahaina-2023" / "lahaina_burn_area.geojson").to_crs(32604)
    area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    assert abs(area.area / 1e4 - values["lahaina"]["burn_area_ha"]) < 1.0
    labels = gpd.read_file(root / "lahaina-2023" / "Maui_Wildfires_August_0.geojson").to_crs(32604)
    geometry = shapely.make_valid(labels.geometry.values)
    outside = np.asarray(~shapely.intersects(geometry, area)) & (labels["class"] == "Damaged Building").to_numpy()
    assert int(outside.sum()) == values["lahaina"]["damaged_labels_outside_burn"] == 2


# -------------------------------------------------------------------------------------- apartness
def test_every_question_is_apart_from_the_bench_questions(heldout2):
    others = bench_questions(TASKS_FILE) + bench_questions(PARAPHRASES_FILE) + bench_questions(HELDOUT_FILE)
    assert len(others) > 200
    assert not too_close(questions(heldout2), others)


def reading_bank_questions() -> list[tuple[str, str]]:
    """(``reading_bank:<line>``, question) of every example of the planner's reading bank; skips the test when
    there is no bank."""
    if not READING_BANK.exists():
        pytest.skip("no reading bank yet")
    bank = []
    for n, line in enumerate(READING_BANK.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            bank.append((f"reading_bank:{n}", json.loads(line)["q"]))
    return bank


def test_every_question_is_apart_from_the_reading_bank(heldout2):
    assert not too_close(questions(heldout2), reading_bank_questions())
