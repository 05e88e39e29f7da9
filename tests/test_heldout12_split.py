"""The twelfth held-out question split (``bench/heldout12.json``): 61 questions written without looking at how GeoFaham
reads a question (nothing under ``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not run on
them), in four languages, worded as coordinators, analysts and humanitarian workers write (about half plain everyday
questions, the rest an email, context sentences, terse notes, exclusions and negations, grade subsets said by
description, implied denominators, numbers and units in words, three typos), with few data field names or key=value
tags, each apart from every question the product may have been shaped on (the bench's tasks, its paraphrase suite, the
first eleven held-out splits and the planner's reading bank), with expected values that
``bench/ground_truth_heldout12.py`` computes from the sample data by code of its own (no GeoFaham import). The checks
the held-out splits share (expected-value kinds, the sample data, the reading bank's questions, the similarity measure)
come from the second split's tests and ``tests/heldout_shared.py``."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest
import shapely

from bench.aoi_files import AOI_FILES
from bench.spec import BENCH_DIR, PARAPHRASES_FILE, TASKS_FILE, TaskSpec, load_expected, load_tasks
from tests.heldout_shared import aoi_frame, assert_split_loads, earlier_splits, eur, grade, read
from tests.test_examples_apart import bench_questions, too_close
from tests.test_heldout2_split import VALUE_KINDS, questions, reading_bank_questions, sample_data

HELDOUT12_FILE = BENCH_DIR / "heldout12.json"
EARLIER_SPLITS = earlier_splits(12)
DESTROYED, NONE, MAJOR, MINOR = "Destroyed (>50%)", "No Damage", "Major (26-50%)", "Minor (10-25%)"
MOBILE_HOMES = ["Mobile Home Single Wide", "Mobile Home Double Wide", "Mobile Home Triple Wide"]
EATON_FILE = "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson"
PALISADES_FILE = "palisades-2025/DINS_2025_Palisades_Public_View.geojson"
PERIMETER_FILE = "eaton-2025/eaton_adjusted_fire_perimeter.geojson"
HOSPITALS_FILE = "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson"
FLOOD_FILE = "valencia-2024/emsr773_observed_flood_merged.geojson"
HEALTH_FILE = "valencia-2024/valencia_city_health_facilities.geojson"
PLAN_FILE = "valencia-2024/catarroja_public_buildings_dana.geojson"
OSM = "valencia-2024/osm-catarroja/"
#: the turns whose honest answer is a short breakdown: two to four figures, each told apart by its label
SHORT_BREAKDOWNS = (
    "ho12_eaton_minor_by_type",
    "ho12_pal_double_wide_grades",
    "ho12_pal_owner_9km",
    "ho12_valencia_flooded_by_kind",
    "ho12_cmp_damaged_any",
    "ho12_cmp_nearest_hospital_km",
    "ho12_es_cmp_casas_moviles",
    "ho12_fr_eaton_majeurs_par_type",
    "ho12_fr_cmp_plus_quart",
    "ho12_pt_aoi_leste_infraestrutura",
    "ho12_pt_cmp_igrejas",
)
#: one figure per fire: Eaton's, then the Palisades'
PER_FIRE = (
    "ho12_cmp_nearest_hospital_km",
    "ho12_cmp_damaged_any",
    "ho12_cmp_outbuildings_share_of_losses",
    "ho12_cmp_beds_10km",
    "ho12_es_cmp_casas_moviles",
    "ho12_fr_cmp_plus_quart",
    "ho12_pt_cmp_igrejas",
)
#: thresholds said in words: task -> (the words, the distance in metres the task states)
WORDED_THRESHOLDS = {
    "ho12_eaton_mean_beds_5km": ("five kilometres", 5000),
    "ho12_pal_owner_9km": ("Nine kilometres", 9000),
    "ho12_aoi_west_psych_7km": ("seven kilometres", 7000),
    "ho12_valencia_quarter_share": ("a kilometre and a quarter", 1250),
    "ho12_es_pal_menos_camas": ("seis kilómetros", 6000),
    "ho12_es_eaton_helipuerto": ("doce kilómetros", 12_000),
    "ho12_es_catarroja_supermercado": ("trescientos metros", 300),
    "ho12_fr_aoi_village_lits": ("sept kilomètres", 7000),
    "ho12_fr_valencia_plus_4km": ("quatre kilomètres", 4000),
}
DISTANCE_IN_DIGITS = re.compile(
    r"\d+(?:[.,]\d+)?\s*(?:m|km|metres|meters|kilometres|kilómetros|kilomètres|quilómetros)\b"
)
#: data field names and key=value tags a question may write (people rarely do): a few questions only
FIELD_WORDS = re.compile(
    r"\b[a-z_]+=[a-z_]+\b|\b(?:STRUCTURETYPE|DAMAGE|OWNER|TYPE|HELIPAD|TRAUMA|BEDS|STATUS|idsubclase|val_dany|"
    r"subv_apro|capa|estado|titulo|equipamien)\b"
)
#: the words of three typos, kept on purpose (people type fast)
TYPOS = {
    "ho12_eaton_mean_beds_5km": "averge",
    "ho12_cmp_outbuildings_share_of_losses": "destoyed",
    "ho12_catarroja_recreation_grounds": "recreaton",
}


@pytest.fixture(scope="module")
def heldout12() -> list[TaskSpec]:
    return load_tasks(HELDOUT12_FILE)


@pytest.fixture(scope="module")
def values() -> dict:
    return load_expected()["heldout12"]


# ---------------------------------------------------------------------------------------- the file
def test_every_task_loads_in_the_heldout_split(heldout12):
    assert_split_loads(heldout12, 12)


def test_personas_categories_and_plain_questions_are_varied(heldout12):
    personas = Counter(t.persona for t in heldout12)
    assert len(personas) == 5 and min(personas.values()) >= 8, personas
    categories = Counter(t.category for t in heldout12)
    assert {"poi_impact", "building_damage", "clustering_aggregation", "comparative", "infrastructure"} <= set(
        categories
    )
    assert {"land_cover", "flood"} <= set(categories) and categories["comparative"] >= 8, categories
    simple = [t for t in heldout12 if t.difficulty == "simple"]
    assert len(simple) >= len(heldout12) // 2  # about half plain, everyday wordings
    assert all(len(t.question) <= 140 for t in simple if t.language == "en"), "a simple question said simply"


def test_few_questions_write_field_names_or_tags(heldout12):
    """People rarely write a layer's field names or OSM key=value tags: a few questions do, most do not."""
    with_fields = [t.id for t in heldout12 if FIELD_WORDS.search(t.question)]
    assert 1 <= len(with_fields) <= 6, with_fields


def test_three_typos_are_kept(heldout12):
    by_id = {t.id: t for t in heldout12}
    for task_id, word in TYPOS.items():
        assert word in by_id[task_id].question, task_id


def test_every_expectation_points_into_the_heldout12_values(heldout12):
    expected = load_expected()
    for task in heldout12:
        for e in task.all_expectations():
            assert e.ref is not None and e.ref.startswith("heldout12."), (task.id, e.id)
            assert e.description.strip(), (task.id, e.id)
            assert VALUE_KINDS[e.kind](e.resolve(expected)), (task.id, e.id, e.resolve(expected))


def test_the_split_asks_every_kind_of_question(heldout12):
    """Counts, shares, breakdowns, names, distances, yes/no, areas, lengths, sums, maxima, minima, means and a
    difference; several figures in one turn; thresholds in metres and kilometres, all in metric units."""
    kinds = Counter(e.kind for t in heldout12 for e in t.expectations)
    assert all(kinds[k] >= 2 for k in ("count", "value", "names", "distance", "boolean")), kinds
    assert kinds["count_by"] >= 6, kinds
    units = {e.unit for t in heldout12 for e in t.expectations}
    assert {"%", "m", "km", "m2", "km2", "ha", "EUR"} <= units
    measures = Counter(e.measure for t in heldout12 for e in t.expectations)
    assert {"sum", "max", "min", "mean", "difference", "share", "area", "length", "distance"} <= set(measures)
    assert measures["mean"] >= 3 and measures["sum"] >= 5, measures
    assert sum(len(t.expectations) > 1 for t in heldout12) >= 30
    assert {t.aoi.kind for t in heldout12} == {"damage", "hazard", "layer"}
    assert sum(t.buffer_m is not None for t in heldout12) >= 10  # within / beyond stated distances
    words = " ".join(t.question for t in heldout12)
    for unit in ("miles", "millas", "feet", "acres", "milhas", "pieds", "yards"):  # every figure is asked in metric
        assert not re.search(rf"\b{unit}\b", words), unit
    assert all(e.in_answer for t in heldout12 for e in t.expectations if e.kind != "count_by")


def test_thresholds_said_in_words_are_the_stated_distances(heldout12):
    by_id = {t.id: t for t in heldout12}
    for task_id, (words, metres) in WORDED_THRESHOLDS.items():
        task = by_id[task_id]
        assert words in task.question and task.buffer_m == metres, task_id
        assert not DISTANCE_IN_DIGITS.search(task.question), task_id  # the distance is said in words only
    for task_id, digits, metres in (
        ("ho12_cmp_beds_10km", "10 km", 10_000),
        ("ho12_es_eaton_sin_lucro_camas", "8 km", 8000),
    ):
        assert digits in by_id[task_id].question and by_id[task_id].buffer_m == metres, task_id


def test_short_breakdowns_are_two_to_four_labelled_figures(heldout12):
    """A short breakdown's figures are told apart by their labels: the groups of one count_by (two to four of them,
    beside an unlabelled total), or two to four counts or values with an event or a group each."""
    expected = load_expected()
    by_id = {t.id: t for t in heldout12}
    for task_id in SHORT_BREAKDOWNS:
        task = by_id[task_id]
        by = [e for e in task.expectations if e.kind == "count_by"]
        if by:
            assert len(by) == 1 and 2 <= len(by[0].resolve(expected)) <= 4, task_id
            assert [e.labelled for e in task.expectations if e.kind == "count"] == [False], task_id
        else:
            figures = [e for e in task.expectations if e.kind in ("count", "value")]
            assert 2 <= len(figures) <= 4 and all(e.labelled for e in figures), task_id
            labels = [(e.group, tuple(e.events), e.relation) for e in figures]
            assert len(set(labels)) == len(labels), task_id


def test_breakdowns_add_up_to_their_totals(heldout12):
    """The per-group tallies sum to the total asked beside them."""
    expected = load_expected()
    with_groups = 0
    for task in heldout12:
        by = [e for e in task.expectations if e.kind == "count_by"]
        if by:
            with_groups += 1
            assert task.expectations[0].kind == "count" and not task.expectations[0].labelled, task.id
            assert sum(by[0].resolve(expected).values()) == task.expectations[0].resolve(expected), task.id
    assert with_groups >= 6


def test_several_figures_carry_their_labels(heldout12):
    """Events, groups, relations and measures label the figures a turn asks for together."""
    by_id = {t.id: t for t in heldout12}
    for task_id in PER_FIRE:
        assert [e.events for e in by_id[task_id].expectations] == [[11], [12, 13, 14]], task_id
    assert [e.group for e in by_id["ho12_es_aoi_village_mixtos"].expectations] == [None, "destroyed"]
    for task_id in ("ho12_fr_aoi_sketch_pietons", "ho12_pt_aoi_sketch_ribeiros"):
        assert [e.relation for e in by_id[task_id].expectations] == ["all", "inside"], task_id
    assert [e.relation for e in by_id["ho12_eaton_mixed_use_spared"].expectations] == [None, "all"]
    assert [e.relation for e in by_id["ho12_fr_valencia_plus_4km"].expectations] == ["outside"]
    for task_id in ("ho12_aoi_west_psych_7km", "ho12_es_eaton_sin_lucro_camas"):
        assert [e.measure for e in by_id[task_id].expectations] == [None, "sum"], task_id
    assert [e.measure for e in by_id["ho12_maui_no_helipad"].expectations] == [None, "sum"]
    assert [e.measure for e in by_id["ho12_cmp_beds_10km"].expectations] == ["sum", "sum"]
    for task_id in ("ho12_eaton_mean_beds_5km", "ho12_fr_aoi_village_lits", "ho12_es_aoi_sur_media"):
        assert [e.measure for e in by_id[task_id].expectations] == [None, "mean"], task_id
    for task_id in ("ho12_plan_biggest_grant", "ho12_es_plan_mayor_sin_subvencion"):
        assert [e.measure for e in by_id[task_id].expectations] == [None, "max"], task_id
    assert [e.measure for e in by_id["ho12_es_pal_menos_camas"].expectations] == [None, "min"]
    assert [e.measure for e in by_id["ho12_cmp_burn_size"].expectations] == [None, "difference"]
    assert [e.measure for e in by_id["ho12_eaton_huntington"].expectations] == [None, "distance"]
    for task_id in ("ho12_catarroja_avinguda_sud", "ho12_pt_catarroja_ronda_nord"):
        assert [e.measure for e in by_id[task_id].expectations] == ["length", "share"], task_id
    assert [e.measure for e in by_id["ho12_catarroja_rail_land"].expectations] == ["area", "share"]
    assert [e.measure for e in by_id["ho12_valencia_quarter_share"].expectations] == [None, "share"]
    for task_id in ("ho12_cmp_burn_size", "ho12_fr_catarroja_cipfp", "ho12_es_catarroja_supermercado"):
        assert [e.kind for e in by_id[task_id].expectations] == ["boolean", "value"], task_id
    for task_id in ("ho12_eaton_mixed_use_spared", "ho12_aoi_west_churches"):
        assert [e.kind for e in by_id[task_id].expectations] == ["boolean", "count"], task_id


def test_aoi_files_are_the_ones_the_runner_writes(heldout12):
    with_files = [t for t in heldout12 if t.input_files]
    assert len(with_files) >= 8
    assert {name for t in with_files for name in t.input_files} == set(AOI_FILES)
    for task in with_files:
        assert all(name in AOI_FILES for name in task.input_files), task.id
        assert all(name in task.question for name in task.input_files), task.id  # the question names its area
        assert task.aoi.kind == "layer" and task.aoi.layers == task.input_files, task.id


def test_the_cli_and_the_kept_runs_know_the_split():
    from bench.cli import build_parser
    from bench.runs import SPLIT_FILES, split_task_ids

    args = build_parser().parse_args(["tasks", "--tasks-file", "heldout12"])
    assert args.tasks_file == HELDOUT12_FILE
    args = build_parser().parse_args(["run", "--tasks-file", "heldout12", "--offline"])
    assert args.tasks_file == HELDOUT12_FILE
    assert SPLIT_FILES["heldout12"] == HELDOUT12_FILE.name
    assert len(split_task_ids("heldout12") or ()) == 61


def test_the_ground_truth_reuses_the_earlier_splits_helpers():
    """Reading, projecting and tabulating are the first split's code, the threshold guard and the area and length
    helpers the third split's, the Palisades hull the fourth split's, the AOI edge guard the sixth split's, the
    'farthest is apart' guard the seventh split's, the 'firmly inside or outside' guard and the small helpers the
    eighth split's, the two-decimal hectares the ninth split's, the one-nearest helper the tenth split's, and the
    'largest' and 'smallest' guards and the mixed-use type name the eleventh split's."""
    import bench.ground_truth_heldout as first
    import bench.ground_truth_heldout3 as third
    import bench.ground_truth_heldout4 as fourth
    import bench.ground_truth_heldout6 as sixth
    import bench.ground_truth_heldout7 as seventh
    import bench.ground_truth_heldout8 as eighth
    import bench.ground_truth_heldout9 as ninth
    import bench.ground_truth_heldout10 as tenth
    import bench.ground_truth_heldout11 as eleventh
    import bench.ground_truth_heldout12 as twelfth

    for name in ("Layers", "geoms", "touching", "metres", "ranked", "listing", "tally", "pct", "euros", "hospitals"):
        assert getattr(twelfth, name) is getattr(first, name), name
    for name in ("assert_clear", "clipped_km", "km2", "projected_aoi"):
        assert getattr(twelfth, name) is getattr(third, name), name
    assert twelfth.palisades_hull is fourth.palisades_hull
    assert twelfth.assert_off_edge is sixth.assert_off_edge
    assert twelfth.farthest_apart is seventh.farthest_apart
    for name in ("assert_firm", "one_of", "open_with_beds", "wet_share"):
        assert getattr(twelfth, name) is getattr(eighth, name), name
    assert twelfth.hectares2 is ninth.hectares2
    assert twelfth.nearest is tenth.nearest
    for name in ("largest", "smallest", "MIXED"):
        assert getattr(twelfth, name) is getattr(eleventh, name), name


def test_level_one_reads_adult_and_child_level_one_only():
    from bench.ground_truth_heldout12 import level_one

    trauma = pd.Series(
        [
            "LEVEL I ADULT, LEVEL II PEDIATRIC",
            "LEVEL I PEDIATRIC",
            "LEVEL I, LEVEL II PEDIATRIC",
            "LEVEL II",
            "LEVEL II ADULT, LEVEL II PEDIATRIC",
            "NOT AVAILABLE",
            None,
        ]
    )
    assert level_one(trauma).tolist() == [True, True, True, False, False, False, False]


# ------------------------------------------------------------------------------------ ground truth
@pytest.fixture(scope="module")
def root() -> Path:
    return sample_data()


def test_expected_heldout12_values_are_what_the_module_computes(root):
    from bench.ground_truth_heldout12 import heldout12 as compute_heldout12

    fresh = json.loads(json.dumps(compute_heldout12(root), ensure_ascii=False))
    assert fresh["heldout12"] == load_expected()["heldout12"]


def test_dins_values_recomputed_without_the_module(root, values):
    """The DINS figures again, with plain pandas filters and spatial joins."""
    eaton = read(root, EATON_FILE)
    kind, dmg = eaton.STRUCTURETYPE, eaton.DAMAGE
    e = values["eaton"]
    minor = eaton[dmg == MINOR]
    assert minor.STRUCTURETYPE.value_counts().to_dict() == e["minor_by_type"] and len(minor) == e["minor"] == 41
    major = eaton[dmg == MAJOR]
    assert major.STRUCTURETYPE.value_counts().to_dict() == e["major_by_type"] and len(major) == e["major"] == 21
    mixed = eaton[kind == "Mixed Commercial/Residential"]
    assert len(mixed) == e["mixed_use"] == 2 and not e["mixed_use_any_damaged"] and (mixed.DAMAGE == NONE).all()

    pal = read(root, PALISADES_FILE)
    kind, dmg = pal.STRUCTURETYPE, pal.DAMAGE
    p = values["palisades"]
    lost = pal[dmg == DESTROYED]
    assert round(100 * lost.STRUCTURETYPE.isin(MOBILE_HOMES).mean(), 1) == p["mobile_pct_of_destroyed"] == 5.1
    doubles = pal[kind == "Mobile Home Double Wide"]
    assert grade(doubles.DAMAGE).value_counts().to_dict() == p["double_wides_by_grade"]
    assert len(doubles) == p["double_wides"] == 241
    shops = pal[kind == "Commercial Building Single Story"]
    assert round(100 * (shops.DAMAGE == DESTROYED).mean(), 1) == p["one_storey_commercial_destroyed_pct"] == 55.5
    assert round(100 * (kind == "Utility Misc Structure").mean(), 1) == p["outbuildings_pct_of_inspected"] == 14.7

    c = values["comparative"]
    for fire, dins in (("eaton", eaton), ("palisades", pal)):
        kind, dmg = dins.STRUCTURETYPE, dins.DAMAGE
        sheds_of_lost = round(100 * (dins[dmg == DESTROYED].STRUCTURETYPE == "Utility Misc Structure").mean(), 1)
        assert int((dmg != NONE).sum()) == c["damaged"][fire], fire
        assert sheds_of_lost == c["outbuildings_pct_of_destroyed"][fire], fire
        assert int(kind.isin(MOBILE_HOMES).sum()) == c["mobile_homes_inspected"][fire], fire
        assert int((kind == "Church").sum()) == c["churches_inspected"][fire], fire
        assert int(dmg.isin([MAJOR, DESTROYED]).sum()) == c["major_or_destroyed"][fire], fire
    assert (c["mobile_homes_inspected"]["eaton"], c["mobile_homes_inspected"]["palisades"]) == (3, 364)
    assert (c["churches_inspected"]["eaton"], c["churches_inspected"]["palisades"]) == (4, 13)

    a = values["aoi"]
    west = eaton.sjoin(aoi_frame("west_altadena_area.geojson"), predicate="intersects")
    churches = west[west.STRUCTURETYPE == "Church"]
    w = a["west_altadena_area"]
    assert len(churches) == w["churches"] == 2 and not w["churches_any_destroyed"]
    assert not bool((churches.DAMAGE == DESTROYED).any())
    east = eaton.sjoin(aoi_frame("east_altadena_kinneloa.geojson"), predicate="intersects")
    k = a["east_altadena_kinneloa"]
    tall = east[east.STRUCTURETYPE == "Single Family Residence Multi Story"]
    assert round(100 * (tall.DAMAGE == DESTROYED).mean(), 1) == k["tall_houses_destroyed_pct"] == 25.4
    works = east[east.STRUCTURETYPE == "Infrastructure"]
    assert grade(works.DAMAGE).value_counts().to_dict() == k["infrastructure_by_grade"]
    assert len(works) == k["infrastructure"] == 5
    assert aoi_frame("east_altadena_kinneloa.geojson", 26911).area.iloc[0] / 1e6 == pytest.approx(
        k["area_km2"], abs=0.01
    )
    village = pal.sjoin(aoi_frame("palisades_village_aoi.geojson"), predicate="intersects")
    mixed = village[village.STRUCTURETYPE == "Mixed Commercial/Residential"]
    v = a["palisades_village_aoi"]
    assert (len(mixed), int((mixed.DAMAGE == DESTROYED).sum())) == (v["mixed_use"], v["mixed_use_destroyed"]) == (4, 2)


def test_hospital_values_recomputed_without_the_module(root, values):
    """Buffers and joins instead of distances to the polygon; each threshold gives the same hospitals 30 m either
    side of it (no hospital is near a threshold)."""
    hospitals = read(root, HOSPITALS_FILE)
    la = hospitals[(hospitals.STATE == "CA") & (hospitals.COUNTY == "LOS ANGELES")].to_crs(26911)
    perimeter = read(root, PERIMETER_FILE, 26911).union_all()
    pal = read(root, PALISADES_FILE, 26911)
    lost = pal[pal.DAMAGE == DESTROYED]
    hull = lost.union_all().convex_hull

    def within(area: shapely.Geometry, metres: float, rows: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        near = rows[rows.intersects(area.buffer(metres))]
        assert sorted(near.NAME) == sorted(rows.NAME[rows.intersects(area.buffer(metres - 30))])
        assert sorted(near.NAME) == sorted(rows.NAME[rows.intersects(area.buffer(metres + 30))])
        assert bool((near.STATUS == "OPEN").all()) and bool((near.BEDS > 0).all())
        return near

    e, p = values["eaton"], values["palisades"]
    five = within(perimeter, 5000, la)
    assert len(five) == e["within_5km"] == 7 and five.BEDS.mean() == pytest.approx(e["mean_beds_within_5km"], abs=0.05)
    nonprofit = within(perimeter, 8000, la[la.OWNER == "NON-PROFIT"])
    assert (len(nonprofit), int(nonprofit.BEDS.sum())) == (e["nonprofit_within_8km"], e["nonprofit_beds_within_8km"])
    pads = within(perimeter, 12_000, la[la.HELIPAD == "Y"])
    assert sorted(pads.NAME) == sorted(e["helipad_within_12km"]["names"]) and len(pads) == 6
    level_one = la[la.TRAUMA.str.contains(r"LEVEL I\b", regex=True)]
    ranked = level_one.assign(d=level_one.distance(perimeter)).sort_values("d")
    assert ranked.d.iloc[1] - ranked.d.iloc[0] >= 30 and [ranked.NAME.iloc[0]] == e["nearest_level_one_trauma"]["names"]
    huntington = la[la.NAME == "HUNTINGTON HOSPITAL"]
    assert int(huntington.BEDS.iloc[0]) == e["huntington_beds"] == 578
    assert huntington.distance(perimeter).iloc[0] / 1000 == pytest.approx(e["huntington_km"], abs=0.01)
    methodist = la[la.NAME == "METHODIST HOSPITAL OF SOUTHERN CALIFORNIA"].geometry.iloc[0]
    eaton_lost = read(root, EATON_FILE, 26911)
    eaton_lost = eaton_lost[eaton_lost.DAMAGE == DESTROYED]
    assert eaton_lost.distance(methodist).min() == pytest.approx(e["methodist_closest_loss_m"], abs=0.1)

    nine = within(hull, 9000, la)
    assert nine.OWNER.value_counts().to_dict() == p["within_9km_by_owner"] and len(nine) == p["within_9km"] == 14
    six = within(hull, 6000, la).sort_values("BEDS")
    assert six.BEDS.iloc[0] < six.BEDS.iloc[1] and [six.NAME.iloc[0]] == p["fewest_beds_within_6km"]["names"]
    assert int(six.BEDS.iloc[0]) == p["fewest_beds_within_6km_beds"] == 74
    saint_johns = la[la.NAME == "SAINT JOHN'S HEALTH CENTER"].geometry.iloc[0]
    assert lost.distance(saint_johns).min() == pytest.approx(p["saint_johns_closest_loss_m"], abs=0.1)

    c = values["comparative"]
    for fire, area in (("eaton", perimeter), ("palisades", hull)):
        ten = within(area, 10_000, la)
        assert int(ten.BEDS.sum()) == c["beds_within_10km"][fire], fire
        assert la.distance(area).min() / 1000 == pytest.approx(c["nearest_hospital_km"][fire], abs=0.01), fire
    assert perimeter.distance(hull) / 1000 == pytest.approx(c["fires_gap_km"], abs=0.01)
    assert (hull.area - perimeter.area) / 1e6 == pytest.approx(c["area_difference_km2"], abs=0.02)
    assert c["palisades_larger"] and hull.area > perimeter.area

    west = within(aoi_frame("west_altadena_area.geojson", 26911).geometry.iloc[0], 7000, la)
    psych = west[west.TYPE == "PSYCHIATRIC"]
    w = values["aoi"]["west_altadena_area"]
    assert (len(psych), int(psych.BEDS.sum())) == (w["psychiatric_within_7km"], w["psychiatric_beds_within_7km"])
    village = within(aoi_frame("palisades_village_aoi.geojson", 26911).geometry.iloc[0], 7000, la)
    v = values["aoi"]["palisades_village_aoi"]
    assert len(village) == v["within_7km"] == 5
    assert village.BEDS.mean() == pytest.approx(v["mean_beds_within_7km"], abs=0.05)

    maui = hospitals[(hospitals.STATE == "HI") & (hospitals.COUNTY == "MAUI")].to_crs(32604)
    no_pad = maui[maui.HELIPAD == "N"]
    lahaina = values["lahaina"]
    assert sorted(no_pad.NAME) == lahaina["no_helipad"]["names"]
    assert int(no_pad.BEDS.sum()) == lahaina["no_helipad_beds"] == 28
    burn = read(root, "lahaina-2023/lahaina_burn_area.geojson", 32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    molokai = maui[maui.NAME == "MOLOKAI GENERAL HOSPITAL"].geometry.iloc[0]
    assert molokai.distance(burn_area) / 1000 == pytest.approx(lahaina["molokai_km"], abs=0.01)


def test_valencia_values_recomputed_without_the_module(root, values):
    """Buffers and joins for the València rings (the same facilities 30 m either side of each threshold)."""
    flood = read(root, FLOOD_FILE, 25830)
    water = flood.union_all()
    v = values["valencia"]
    health = read(root, HEALTH_FILE, 25830)
    d = health.distance(water)

    def near(rows: gpd.GeoDataFrame, metres: float) -> list[str]:
        out = sorted(rows.equipamien[rows.intersects(water.buffer(metres))])
        for shift in (-30, 30):
            assert sorted(rows.equipamien[rows.intersects(water.buffer(metres + shift))]) == out
        return out

    assert len(near(health, 1250)) == v["within_1250m"] == 22
    assert round(100 * 22 / len(health), 1) == v["within_1250m_pct"]
    assert len(health) - len(near(health, 4000)) == v["beyond_4km"] == 8
    wet = health[health.intersects(water)]
    assert len(wet) == v["flooded"] == 4
    kinds = wet.idsubclase.map({13: "centro de salud", 18: "consultorio"})
    assert kinds.value_counts().to_dict() == v["flooded_by_kind"]
    consultorios = health.equipamien.str.startswith("CONSULTORIO")
    assert d[consultorios].mean() == pytest.approx(v["consultorios_mean_m"], abs=0.1)
    assert d[health.idsubclase == 14].mean() == pytest.approx(v["hospitals_mean_m"], abs=0.1)
    far = d[consultorios].sort_values(ascending=False)
    assert far.iloc[0] - far.iloc[1] >= 30
    assert [health.equipamien[far.index[0]]] == v["farthest_consultorio"]["names"]
    la_fe = health[health.equipamien.str.contains("LA FE")]
    assert len(la_fe) == 1 and la_fe.distance(water).iloc[0] == pytest.approx(v["la_fe_m"], abs=0.1)

    south = health.sjoin(aoi_frame("valencia_south_area.geojson", 25830), predicate="intersects")
    s = values["aoi"]["valencia_south_area"]
    assert len(south) == s["facilities"] == 6
    assert south.distance(water).mean() == pytest.approx(s["mean_m"], abs=0.1)


def test_catarroja_values_recomputed_without_the_module(root, values):
    """Clips, dissolves and joins with GeoPandas for the Catarroja extract and the sketch."""
    flood = read(root, FLOOD_FILE, 25830)
    water = flood.union_all()
    grown, shrunk = water.buffer(30), water.buffer(-30)
    c = values["catarroja"]
    lines = read(root, OSM + "lineas.geojson", 25830)
    for name, key in (("Avinguda del Sud", "avinguda_sud"), ("Ronda del Nord", "ronda_nord")):
        street = lines[lines["name"] == name]
        wet = gpd.clip(street, flood).length.sum()
        assert abs(wet / 1000 - c[f"{key}_km_in_flood"]) < 0.01, name
        assert abs(100 * wet / street.length.sum() - c[f"{key}_pct_in_flood"]) < 0.1, name
    xiva = lines[(lines["name"] == "Barranc de Xiva") & (lines.waterway == "stream")]
    assert abs(gpd.clip(xiva, flood).length.sum() / 1000 - c["barranc_xiva_km_in_flood"]) < 0.01

    polygons = read(root, OSM + "poligonos.geojson", 25830)
    for tag, value, key in (("natural", "wood", "woodland"), ("landuse", "meadow", "meadow")):
        union = polygons[polygons[tag] == value].dissolve()
        assert abs(gpd.clip(union, flood).area.sum() / 1e4 - c[f"{key}_ha_in_flood"]) < 0.01, key
    rail = polygons[polygons.landuse == "railway"].dissolve()
    wet_rail = gpd.clip(rail, flood).area.sum()
    assert abs(wet_rail / 1e4 - c["rail_land_ha_in_flood"]) < 0.01
    assert abs(100 * wet_rail / rail.area.sum() - c["rail_land_pct_in_flood"]) < 0.1
    grass = polygons[polygons.landuse == "grass"].dissolve()
    assert abs(100 * gpd.clip(grass, flood).area.sum() / grass.area.sum() - c["grass_pct_in_flood"]) < 0.1
    grounds = polygons[polygons.landuse == "recreation_ground"]
    assert len(grounds) == 2 and not bool(grounds.intersects(grown).any()) and not c["recreation_any_flooded"]
    hall = polygons[polygons.leisure == "sports_hall"]
    assert bool(hall.intersects(shrunk).all()) and c["sports_hall_flooded"]
    college = polygons[polygons.amenity == "college"]
    assert bool(college.intersects(shrunk).all()) and c["college_flooded"]
    assert abs(100 * gpd.clip(college, flood).area.sum() / college.area.sum() - c["college_pct_in_flood"]) < 0.1
    market = polygons[polygons.shop == "supermarket"]
    assert not bool(market.intersects(water.buffer(300 + 30)).any()) and not c["market_within_300m"]
    assert market.distance(water).iloc[0] == pytest.approx(c["market_m"], abs=0.1)

    sketch = aoi_frame("catarroja_east_sketch.geojson", 25830)
    k = values["aoi"]["catarroja_east_sketch"]
    for tag, value, key in (("highway", "footway", "footway"), ("waterway", "stream", "stream")):
        inside = gpd.clip(lines[lines[tag] == value], sketch)
        assert abs(inside.length.sum() / 1000 - k[f"{key}_km"]) < 0.01, key
        assert abs(gpd.clip(inside, flood).length.sum() / 1000 - k[f"{key}_km_in_flood"]) < 0.01, key


def test_recovery_plan_values_recomputed_without_the_module(root, values):
    plan = values["plan"]
    public = read(root, PLAN_FILE)
    damage, subsidy = public.val_dany.map(eur), public.subv_apro.map(eur)
    granted = subsidy.sort_values(ascending=False)
    assert granted.iloc[0] > granted.iloc[1]
    assert [public.titulo[granted.index[0]]] == plan["largest_subsidy"]["names"] == ["TAC Teatro Auditorio Catarroja"]
    assert granted.iloc[0] == pytest.approx(plan["largest_subsidy_eur"], abs=0.01)
    valued = public.val_dany.fillna("").str.strip() != ""
    schools = damage[(public.capa == "Centros educativos") & valued]
    assert len(schools) == 5 and schools.mean() == pytest.approx(plan["education_mean_damage_eur"], abs=0.01)
    culture = public.capa == "Centros culturales"
    assert round(100 * subsidy[culture].sum() / damage[culture].sum(), 1) == plan["culture_covered_pct"]
    unfunded = damage[subsidy == 0].sort_values(ascending=False)
    assert unfunded.iloc[0] > unfunded.iloc[1]
    assert [public.titulo[unfunded.index[0]]] == plan["costliest_unsubsidised"]["names"] == ["Espai Jove Catarroja"]
    assert unfunded.iloc[0] == pytest.approx(plan["costliest_unsubsidised_eur"], abs=0.01)


def test_lahaina_values_recomputed_without_the_module(root, values):
    labels = read(root, "lahaina-2023/Maui_Wildfires_August_0.geojson", 32604)
    area = pd.Series(shapely.area(shapely.make_valid(labels.geometry.values)), index=labels.index)
    intact = area[labels["class"] == "Building"].sort_values()
    assert intact.iloc[1] > 1.2 * intact.iloc[0]
    assert intact.iloc[0] == pytest.approx(values["lahaina"]["smallest_intact_m2"], abs=0.1)


# -------------------------------------------------------------------------------------- apartness
def test_every_question_is_apart_from_the_bench_questions(heldout12):
    others = bench_questions(TASKS_FILE) + bench_questions(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += bench_questions(split)
    assert len(others) > 500
    assert not too_close(questions(heldout12), others)


def test_every_question_is_apart_from_the_reading_bank(heldout12):
    assert not too_close(questions(heldout12), reading_bank_questions())


def test_the_questions_are_apart_from_each_other(heldout12):
    mine = questions(heldout12)
    assert not [close for i in range(len(mine)) for close in too_close(mine[i + 1 :], [mine[i]])]
