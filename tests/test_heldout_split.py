"""The held-out question split (``bench/heldout.json``): questions written without looking at how GeoFaham reads a
question, in four languages, each apart from every question the product may have been shaped on (the bench's tasks,
its paraphrase suite and the planner's reading bank), with expected values that ``bench/ground_truth_heldout.py``
computes from the sample data by code of its own (no GeoFaham import)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import geopandas as gpd
import pytest
import shapely

from bench.aoi_files import AOI_FILES
from bench.spec import BENCH_DIR, PARAPHRASES_FILE, TASKS_FILE, TaskSpec, load_expected, load_tasks
from tests.test_examples_apart import bench_questions, normalise, similarity
from tests.test_heldout2_split import VALUE_KINDS

ROOT = Path(__file__).resolve().parents[1]
HELDOUT_FILE = BENCH_DIR / "heldout.json"
READING_BANK = ROOT / "geofaham_plugin" / "core" / "planning" / "data" / "reading_bank.jsonl"
MAX_SIMILARITY = 0.6


@pytest.fixture(scope="module")
def heldout() -> list[TaskSpec]:
    return load_tasks(HELDOUT_FILE)


# ---------------------------------------------------------------------------------------- the file
def test_every_task_loads_in_the_heldout_split(heldout):
    assert len(heldout) >= 60
    ids = [t.id for t in heldout]
    assert len(ids) == len(set(ids)) and all(i.startswith("ho_") for i in ids)
    assert {t.split for t in heldout} == {"heldout"}
    assert all(t.offline for t in heldout)
    languages = Counter(t.language for t in heldout)
    assert set(languages) == {"en", "es", "fr", "pt"}
    assert languages["en"] >= 36 and all(languages[lang] >= 8 for lang in ("es", "fr", "pt"))
    assert not {t.id for t in heldout} & {t.id for t in load_tasks(TASKS_FILE) + load_tasks(PARAPHRASES_FILE)}


def test_every_expectation_points_into_the_heldout_values(heldout):
    expected = load_expected()
    kinds = VALUE_KINDS
    for task in heldout:
        assert task.expectations and not task.follow_ups, task.id
        for e in task.all_expectations():
            assert e.ref is not None and e.ref.startswith("heldout."), (task.id, e.id)
            assert e.description.strip(), (task.id, e.id)
            assert kinds[e.kind](e.resolve(expected)), (task.id, e.id, e.resolve(expected))


def test_aoi_files_are_the_ones_the_runner_writes(heldout):
    with_files = [t for t in heldout if t.input_files]
    assert len(with_files) >= 4
    for task in with_files:
        assert all(name in AOI_FILES for name in task.input_files), task.id
        assert all(name in task.question for name in task.input_files), task.id  # the question names its area
        assert task.aoi.kind == "layer" and task.aoi.layers == task.input_files, task.id


def test_the_cli_lists_the_split_by_name():
    from bench.cli import build_parser

    args = build_parser().parse_args(["tasks", "--tasks-file", "heldout"])
    assert args.tasks_file == HELDOUT_FILE


# ------------------------------------------------------------------------------------ ground truth
@pytest.fixture(scope="module")
def root() -> Path:
    from bench.ground_truth import data_dir

    try:
        return data_dir()
    except FileNotFoundError:
        pytest.skip("sample data not found (set GEOFAHAM_DATA_DIR)")


def test_expected_heldout_values_are_what_the_module_computes(root):
    from bench.ground_truth_heldout import heldout as compute_heldout

    fresh = json.loads(json.dumps(compute_heldout(root), ensure_ascii=False))
    assert fresh["heldout"] == load_expected()["heldout"]


def test_some_values_recomputed_without_the_module(root):
    """A few values again, with plain GeoPandas and none of the module's helpers."""
    values = load_expected()["heldout"]
    eaton = gpd.read_file(root / "eaton-2025" / "DINS_2025_Eaton_Public_View_2025-01-14.geojson")
    assert int((eaton.DAMAGE == "Destroyed (>50%)").sum()) == values["eaton"]["destroyed"] == 2722
    assert int((eaton.DAMAGE != "Destroyed (>50%)").sum()) == values["eaton"]["not_destroyed"]
    sfr = eaton.STRUCTURETYPE.str.startswith("Single Family Residence")
    assert int((sfr & (eaton.DAMAGE == "Destroyed (>50%)")).sum()) == values["eaton"]["single_family_destroyed"]

    flood = gpd.read_file(root / "valencia-2024" / "emsr773_observed_flood_merged.geojson").to_crs(25830)
    health = gpd.read_file(root / "valencia-2024" / "valencia_city_health_facilities.geojson").to_crs(25830)
    inside = health.sjoin(flood[["geometry"]], predicate="intersects")
    clinics = sorted(n for n in inside.equipamien if n.startswith("CONSULTORIO"))
    assert clinics == sorted(values["valencia"]["consultorios_inside"]["names"]) and len(clinics) == 3

    burn = gpd.read_file(root / "lahaina-2023" / "lahaina_burn_area.geojson").to_crs(32604)
    area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    labels = gpd.read_file(root / "lahaina-2023" / "Maui_Wildfires_August_0.geojson").to_crs(32604)
    touching = labels[shapely.intersects(shapely.make_valid(labels.geometry.values), area)]
    assert int((touching["class"] == "Building").sum()) == values["lahaina"]["intact_labels_in_burn"]
    assert int((touching["class"] == "Damaged Building").sum()) == values["lahaina"]["damaged_labels_in_burn"] == 33


# -------------------------------------------------------------------------------------- apartness
def too_close(heldout: list[TaskSpec], others: list[tuple[str, str]]) -> list[str]:
    return [
        f"{score:.2f} {t.id}: {t.question!r} ~ {name}: {q!r}"
        for t in heldout
        for name, q in others
        if (score := similarity(t.question, q)) > MAX_SIMILARITY
    ]


def test_the_measure():
    assert normalise("¿Cuántos hospitales en València?") == "cuantos hospitales en valencia"
    assert similarity("How many?", "how  many") == 1.0
    assert similarity("eaton destroyed count?", "Eaton: destroyed, count") == 1.0


def test_every_question_is_apart_from_the_bench_questions(heldout):
    others = bench_questions(TASKS_FILE) + bench_questions(PARAPHRASES_FILE)
    assert len(others) > 150
    assert not too_close(heldout, others)


def test_every_question_is_apart_from_the_reading_bank(heldout):
    if not READING_BANK.exists():
        pytest.skip("no reading bank yet")
    bank = []
    for n, line in enumerate(READING_BANK.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            bank.append((f"reading_bank:{n}", json.loads(line)["q"]))
    assert not too_close(heldout, bank)
