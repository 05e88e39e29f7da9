"""The third held-out question split (``bench/heldout3.json``): 51 questions written without looking at how GeoFaham
reads a question (nothing under ``geofaham_plugin/core/planning/`` nor the paraphrase suite was read), in four
languages, each apart from every question the product may have been shaped on (the bench's tasks, its paraphrase
suite, the first two held-out splits and the planner's reading bank), with expected values that
``bench/ground_truth_heldout3.py`` computes from the sample data by code of its own (no GeoFaham import). The checks
the held-out splits share (expected-value kinds, the sample data, the reading bank's questions, the similarity
measure) come from the second split's tests."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import shapely

from bench.aoi_files import AOI_FILES, aoi_polygon, write_input_file
from bench.spec import BENCH_DIR, PARAPHRASES_FILE, TASKS_FILE, TaskSpec, load_expected, load_tasks
from tests.test_examples_apart import bench_questions, too_close
from tests.test_heldout2_split import VALUE_KINDS, questions, reading_bank_questions, sample_data

HELDOUT3_FILE = BENCH_DIR / "heldout3.json"
EARLIER_SPLITS = (BENCH_DIR / "heldout.json", BENCH_DIR / "heldout2.json")
SKETCH = "catarroja_east_sketch.geojson"
DESTROYED, NONE = "Destroyed (>50%)", "No Damage"


@pytest.fixture(scope="module")
def heldout3() -> list[TaskSpec]:
    return load_tasks(HELDOUT3_FILE)


@pytest.fixture(scope="module")
def values() -> dict:
    return load_expected()["heldout3"]


# ---------------------------------------------------------------------------------------- the file
def test_every_task_loads_in_the_heldout_split(heldout3):
    assert len(heldout3) == 51
    ids = [t.id for t in heldout3]
    assert len(ids) == len(set(ids)) and all(i.startswith("ho3_") for i in ids)
    assert {t.split for t in heldout3} == {"heldout"}
    assert all(t.offline and not t.follow_ups and t.expectations for t in heldout3)
    assert Counter(t.language for t in heldout3) == {"en": 26, "es": 9, "fr": 8, "pt": 8}
    assert all(t.id.startswith(f"ho3_{t.language}_") for t in heldout3 if t.language != "en")
    others = load_tasks(TASKS_FILE) + load_tasks(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += load_tasks(split)
    assert not set(ids) & {t.id for t in others}


def test_every_expectation_points_into_the_heldout3_values(heldout3):
    expected = load_expected()
    for task in heldout3:
        for e in task.all_expectations():
            assert e.ref is not None and e.ref.startswith("heldout3."), (task.id, e.id)
            assert e.description.strip(), (task.id, e.id)
            assert VALUE_KINDS[e.kind](e.resolve(expected)), (task.id, e.id, e.resolve(expected))


def test_the_split_asks_every_kind_of_question(heldout3):
    """Counts, shares, breakdowns, names, distances, yes/no, areas and lengths; several figures in one question."""
    kinds = Counter(e.kind for t in heldout3 for e in t.expectations)
    assert all(kinds[k] >= 2 for k in ("count", "value", "count_by", "names", "distance", "boolean")), kinds
    units = {e.unit for t in heldout3 for e in t.expectations}
    assert {"%", "m", "km", "m2", "ha", "km2", "EUR"} <= units
    assert sum(len(t.expectations) > 1 for t in heldout3) >= 20
    assert {t.aoi.kind for t in heldout3} == {"damage", "hazard", "layer"}


def test_several_figures_are_labelled_by_grade(heldout3):
    """Two figures of one subset split by grade are labelled with their grade; a total stays unlabelled."""
    by_id = {t.id: t for t in heldout3}
    for task_id in ("ho3_palisades_commercial_lost_vs_clean", "ho3_fr_eaton_commerces_plain_pied"):
        assert {e.group for e in by_id[task_id].expectations} == {"destroyed", "none"}, task_id
    for task_id in ("ho3_palisades_motor_homes", "ho3_pt_aoi_altadena_escolas"):
        assert [e.group for e in by_id[task_id].expectations] == [None, "destroyed"], task_id


def test_aoi_files_are_the_ones_the_runner_writes(heldout3, tmp_path):
    with_files = [t for t in heldout3 if t.input_files]
    assert len(with_files) >= 6 and any(SKETCH in t.input_files for t in with_files)
    for task in with_files:
        assert all(name in AOI_FILES for name in task.input_files), task.id
        assert all(name in task.question for name in task.input_files), task.id  # the question names its area
        assert task.aoi.kind == "layer" and task.aoi.layers == task.input_files, task.id
    written = gpd.read_file(write_input_file(SKETCH, tmp_path))
    assert len(written) == 1 and written.crs.to_epsg() == 4326
    assert written.geometry.iloc[0].equals(aoi_polygon(SKETCH))


def test_the_fire_aoi_variants_are_unchanged_by_the_new_aoi_file():
    """The paraphrase suite's AOI variants count DINS points in the two fire AOI files only."""
    assert set(load_expected()["variants"]["aoi"]) == {"west_altadena_area", "palisades_village_aoi"}


def test_the_cli_lists_the_split_by_name():
    from bench.cli import build_parser

    args = build_parser().parse_args(["tasks", "--tasks-file", "heldout3"])
    assert args.tasks_file == HELDOUT3_FILE
    args = build_parser().parse_args(["run", "--tasks-file", "heldout3", "--offline"])
    assert args.tasks_file == HELDOUT3_FILE


def test_the_ground_truth_reuses_the_first_splits_helpers():
    """Reading, projecting and tabulating are the first split's code, imported, not copied."""
    import bench.ground_truth_heldout as first
    import bench.ground_truth_heldout3 as third

    for name in ("Layers", "geoms", "touching", "metres", "ranked", "listing", "tally", "pct", "euros", "hospitals"):
        assert getattr(third, name) is getattr(first, name), name


# ------------------------------------------------------------------------------------ ground truth
@pytest.fixture(scope="module")
def root() -> Path:
    return sample_data()


def test_expected_heldout3_values_are_what_the_module_computes(root):
    from bench.ground_truth_heldout3 import heldout3 as compute_heldout3

    fresh = json.loads(json.dumps(compute_heldout3(root), ensure_ascii=False))
    assert fresh["heldout3"] == load_expected()["heldout3"]


def test_dins_values_recomputed_without_the_module(root, values):
    """The DINS figures again, with plain pandas filters and a spatial join, none of the module's helpers."""
    eaton = gpd.read_file(root / "eaton-2025" / "DINS_2025_Eaton_Public_View_2025-01-14.geojson")
    e = values["eaton"]
    utility = eaton.STRUCTURETYPE == "Utility Misc Structure"
    assert int((utility & (eaton.DAMAGE == DESTROYED)).sum()) == e["outbuildings_destroyed"] == 811
    damaged = eaton.DAMAGE != NONE
    assert round(100 * (utility & damaged).sum() / damaged.sum(), 1) == e["outbuildings_pct_of_damaged"]
    assert int(eaton.DAMAGE.isin(["Affected (1-9%)", "Minor (10-25%)"]).sum()) == e["affected_or_minor"] == 308
    perimeter = gpd.read_file(root / "eaton-2025" / "eaton_adjusted_fire_perimeter.geojson").to_crs(26911)
    inside = eaton.to_crs(26911).sjoin(perimeter[["geometry"]], predicate="intersects")
    assert len(eaton) - inside.index.nunique() == e["outside_perimeter"] == 374

    pal = gpd.read_file(root / "palisades-2025" / "DINS_2025_Palisades_Public_View.geojson")
    p = values["palisades"]
    motor = pal[pal.STRUCTURETYPE == "Motor Home"]
    assert (len(motor), int((motor.DAMAGE == DESTROYED).sum())) == (p["motor_homes_total"], p["motor_homes_destroyed"])
    standing = pal[pal.DAMAGE.isin(["Affected (1-9%)", "Minor (10-25%)", "Major (26-50%)"])]
    assert standing.STRUCTURETYPE.value_counts().to_dict() == p["standing_damaged_by_type"]
    multi = pal[pal.STRUCTURETYPE.str.startswith("Multi Family")]
    assert round(100 * (multi.DAMAGE == DESTROYED).mean(), 1) == p["multi_family_destroyed_pct"]

    area = gpd.GeoDataFrame(geometry=[aoi_polygon("west_altadena_area.geojson")], crs=4326)
    in_area = eaton.sjoin(area, predicate="intersects")
    schools = in_area[in_area.STRUCTURETYPE == "School"]
    aoi = values["aoi"]["west_altadena_area"]
    assert (len(schools), int((schools.DAMAGE == DESTROYED).sum())) == (aoi["schools"], aoi["schools_destroyed"])
    assert abs(area.to_crs(32611).area.iloc[0] / 1e4 - aoi["area_ha"]) < 1.0


def test_hospital_values_recomputed_without_the_module(root, values):
    """Buffers and joins instead of distances to the polygon."""
    hospitals = gpd.read_file(root / "poi" / "hifld-hospitals" / "hospitals_la_county_maui_county.geojson")
    la = hospitals[(hospitals.STATE == "CA") & (hospitals.COUNTY == "LOS ANGELES")].to_crs(26911)
    perimeter = gpd.read_file(root / "eaton-2025" / "eaton_adjusted_fire_perimeter.geojson").to_crs(26911)
    e = values["eaton"]

    def within(metres: float) -> gpd.GeoDataFrame:
        zone = gpd.GeoDataFrame(geometry=perimeter.buffer(metres), crs=26911)
        return la.sjoin(zone, predicate="intersects").drop_duplicates("NAME")

    near5 = within(5000)
    assert (len(near5), int(near5.BEDS.sum())) == (e["hospitals_within_5km"], e["beds_within_5km"]) == (7, 1274)
    helipads = within(6000).query("HELIPAD == 'Y'")
    assert sorted(helipads.NAME) == sorted(e["helipad_hospitals_within_6km"]["names"])
    psychiatric = within(7500).query("TYPE == 'PSYCHIATRIC'")
    assert sorted(psychiatric.NAME) == sorted(e["psychiatric_within_7500m"]["names"])

    pal = gpd.read_file(root / "palisades-2025" / "DINS_2025_Palisades_Public_View.geojson").to_crs(26911)
    hull = pal[pal.DAMAGE == DESTROYED].union_all().convex_hull
    trauma = la[la.TRAUMA != "NOT AVAILABLE"]
    nearest = trauma.distance(hull).sort_values()
    name, metres = trauma.NAME[nearest.index[0]], float(nearest.iloc[0])
    assert {name: pytest.approx(metres, abs=0.1)} == values["palisades"]["nearest_trauma_centre"]["distances_m"]

    burn = gpd.read_file(root / "lahaina-2023" / "lahaina_burn_area.geojson").to_crs(32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    maui = hospitals[hospitals.STATE == "HI"].to_crs(32604)
    two = maui.assign(d=maui.distance(burn_area)).nsmallest(2, "d")
    assert list(two.NAME) == values["lahaina"]["nearest_hospitals_2"]["names"]


def test_valencia_and_catarroja_values_recomputed_without_the_module(root, values):
    """Clips and joins with GeoPandas for the flood's values."""
    flood = gpd.read_file(root / "valencia-2024" / "emsr773_observed_flood_merged.geojson").to_crs(25830)
    health = gpd.read_file(root / "valencia-2024" / "valencia_city_health_facilities.geojson").to_crs(25830)
    zone = gpd.GeoDataFrame(geometry=flood.buffer(600), crs=25830)
    near = health.sjoin(zone, predicate="intersects")
    assert sorted(near.equipamien) == sorted(values["valencia"]["health_within_600m"]["names"]) and len(near) == 11
    aoi03 = gpd.read_file(root / "valencia-2024" / "emsr773_aoi03_extent.geojson").to_crs(25830)
    share = gpd.clip(flood, aoi03).area.sum() / flood.area.sum()
    assert round(100 * share, 1) == values["valencia"]["flood_pct_in_aoi03"]

    c = values["catarroja"]
    lines = gpd.read_file(root / "valencia-2024" / "osm-catarroja" / "lineas.geojson").to_crs(25830)
    motorway = gpd.clip(lines[lines.highway == "motorway"], flood)
    assert abs(motorway.length.sum() / 1000 - c["motorway_km_in_flood"]) < 0.02
    ditches = gpd.clip(lines[lines.waterway == "ditch"], flood)
    assert abs(ditches.length.sum() / 1000 - c["ditch_km_in_flood"]) < 0.05
    points = gpd.read_file(root / "valencia-2024" / "osm-catarroja" / "puntos.geojson").to_crs(25830)
    towers = points[points.power == "tower"]
    assert len(towers.sjoin(flood[["geometry"]], predicate="intersects")) == c["towers_in_flood"] == len(towers)
    stops = points[points.highway == "bus_stop"]
    assert int((stops.distance(flood.union_all()) > 200).sum()) == c["bus_stops_beyond_200m"] == 4

    public = gpd.read_file(root / "valencia-2024" / "catarroja_public_buildings_dana.geojson")
    cultural = public[public.capa == "Centros culturales"].val_dany.dropna()
    euros = sum(float(v.replace("€", "").strip().replace(".", "").replace(",", ".")) for v in cultural)
    assert euros == pytest.approx(c["public_cultural_eur"], abs=0.01)

    polygons = gpd.read_file(root / "valencia-2024" / "osm-catarroja" / "poligonos.geojson").to_crs(25830)
    buildings = polygons[polygons.building.notna()]
    sketch = gpd.GeoDataFrame(geometry=[aoi_polygon(SKETCH)], crs=4326).to_crs(25830)
    in_sketch = buildings.sjoin(sketch, predicate="intersects").drop(columns="index_right")
    wet = in_sketch.sjoin(flood[["geometry"]], predicate="intersects")
    s = values["aoi"]["catarroja_east_sketch"]
    assert (len(in_sketch), wet.index.nunique()) == (s["buildings"], s["buildings_flooded"]) == (270, 52)
    assert abs(gpd.clip(flood, sketch).area.sum() / 1e6 - s["flooded_km2"]) < 0.01

    labels = gpd.read_file(root / "lahaina-2023" / "Maui_Wildfires_August_0.geojson").to_crs(32604)
    burn = gpd.read_file(root / "lahaina-2023" / "lahaina_burn_area.geojson").to_crs(32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    intact = shapely.make_valid(labels[labels["class"] == "Building"].geometry.values)
    assert int(np.sum(~shapely.intersects(intact, burn_area))) == values["lahaina"]["intact_labels_outside_burn"]


# -------------------------------------------------------------------------------------- apartness
def test_every_question_is_apart_from_the_bench_questions(heldout3):
    others = bench_questions(TASKS_FILE) + bench_questions(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += bench_questions(split)
    assert len(others) > 250
    assert not too_close(questions(heldout3), others)


def test_every_question_is_apart_from_the_reading_bank(heldout3):
    assert not too_close(questions(heldout3), reading_bank_questions())


def test_the_questions_are_apart_from_each_other(heldout3):
    mine = questions(heldout3)
    assert not [close for i in range(len(mine)) for close in too_close(mine[i + 1 :], [mine[i]])]
