"""The eleventh held-out question split (``bench/heldout11.json``): 61 questions written without looking at how GeoFaham
reads a question (nothing under ``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not run on
them), in four languages, worded as coordinators, analysts and humanitarian workers write (about half plain everyday
questions, the rest an email, context sentences, terse notes, exclusions and negations, grade subsets said by
description, implied denominators, numbers and units in words, three typos), with few data field names or key=value
tags, each apart from every question the product may have been shaped on (the bench's tasks, its paraphrase suite, the
first ten held-out splits and the planner's reading bank), with expected values that
``bench/ground_truth_heldout11.py`` computes from the sample data by code of its own (no GeoFaham import). The checks
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

HELDOUT11_FILE = BENCH_DIR / "heldout11.json"
EARLIER_SPLITS = earlier_splits(11)
DESTROYED, NONE, MAJOR = "Destroyed (>50%)", "No Damage", "Major (26-50%)"
STANDING = ["Affected (1-9%)", "Minor (10-25%)", MAJOR]
EATON_FILE = "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson"
PALISADES_FILE = "palisades-2025/DINS_2025_Palisades_Public_View.geojson"
HOSPITALS_FILE = "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson"
FLOOD_FILE = "valencia-2024/emsr773_observed_flood_merged.geojson"
HEALTH_FILE = "valencia-2024/valencia_city_health_facilities.geojson"
PLAN_FILE = "valencia-2024/catarroja_public_buildings_dana.geojson"
OSM = "valencia-2024/osm-catarroja/"
#: the turns whose honest answer is a short breakdown: two to four figures, each told apart by its label
SHORT_BREAKDOWNS = (
    "ho11_eaton_infrastructure_grades",
    "ho11_pal_mixed_use_grades",
    "ho11_cmp_hospitals_6km",
    "ho11_cmp_outbuildings_lost",
    "ho11_es_cmp_iglesias",
    "ho11_es_cmp_escuelas_danadas",
    "ho11_es_eaton_hospitales_por_tipo",
    "ho11_fr_cmp_degats_majeurs",
    "ho11_fr_plan_par_categorie",
    "ho11_fr_aoi_sud_types",
    "ho11_pt_pal_comercio_andares",
    "ho11_pt_cmp_vistoriadas",
)
#: one figure per fire: Eaton's, then the Palisades'
PER_FIRE = (
    "ho11_cmp_hospitals_6km",
    "ho11_cmp_houses_destroyed_share",
    "ho11_cmp_outbuildings_lost",
    "ho11_es_cmp_iglesias",
    "ho11_es_cmp_escuelas_danadas",
    "ho11_fr_cmp_degats_majeurs",
    "ho11_pt_cmp_vistoriadas",
)
#: thresholds said in words: task -> (the words, the distance in metres the task states)
WORDED_THRESHOLDS = {
    "ho11_eaton_beds_8500": ("eight and a half kilometres", 8500),
    "ho11_eaton_biggest_10km": ("ten kilometres", 10_000),
    "ho11_eaton_nonprofit_6km": ("six kilometres", 6000),
    "ho11_pal_mean_beds_7km": ("Seven kilometres", 7000),
    "ho11_aoi_south_far_facilities": ("six hundred metres", 600),
    "ho11_maui_30km": ("thirty kilometres", 30_000),
    "ho11_valencia_750m": ("seven hundred and fifty metres", 750),
    "ho11_es_eaton_hospitales_por_tipo": ("diez kilómetros", 10_000),
    "ho11_es_valencia_consultorios_3km": ("tres kilómetros", 3000),
    "ho11_fr_aoi_kinneloa_lits": ("sept kilomètres", 7000),
    "ho11_fr_valencia_secs_600": ("six cents mètres", 600),
    "ho11_pt_valencia_centros_longe": ("três quilómetros e meio", 3500),
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
    "ho11_eaton_biggest_10km": "Wich",
    "ho11_pal_mixed_use_grades": "buidlings",
    "ho11_cmp_outbuildings_lost": "simlar",
}


@pytest.fixture(scope="module")
def heldout11() -> list[TaskSpec]:
    return load_tasks(HELDOUT11_FILE)


@pytest.fixture(scope="module")
def values() -> dict:
    return load_expected()["heldout11"]


# ---------------------------------------------------------------------------------------- the file
def test_every_task_loads_in_the_heldout_split(heldout11):
    assert_split_loads(heldout11, 11)


def test_personas_categories_and_plain_questions_are_varied(heldout11):
    personas = Counter(t.persona for t in heldout11)
    assert len(personas) == 5 and min(personas.values()) >= 8, personas
    categories = Counter(t.category for t in heldout11)
    assert {"poi_impact", "building_damage", "clustering_aggregation", "comparative", "infrastructure"} <= set(
        categories
    )
    assert {"land_cover", "flood"} <= set(categories) and categories["comparative"] >= 8, categories
    simple = [t for t in heldout11 if t.difficulty == "simple"]
    assert len(simple) >= len(heldout11) // 2  # about half plain, everyday wordings
    assert all(len(t.question) <= 140 for t in simple if t.language == "en"), "a simple question said simply"


def test_few_questions_write_field_names_or_tags(heldout11):
    """People rarely write a layer's field names or OSM key=value tags: a few questions do, most do not."""
    with_fields = [t.id for t in heldout11 if FIELD_WORDS.search(t.question)]
    assert 1 <= len(with_fields) <= 6, with_fields


def test_three_typos_are_kept(heldout11):
    by_id = {t.id: t for t in heldout11}
    for task_id, word in TYPOS.items():
        assert word in by_id[task_id].question, task_id


def test_every_expectation_points_into_the_heldout11_values(heldout11):
    expected = load_expected()
    for task in heldout11:
        for e in task.all_expectations():
            assert e.ref is not None and e.ref.startswith("heldout11."), (task.id, e.id)
            assert e.description.strip(), (task.id, e.id)
            assert VALUE_KINDS[e.kind](e.resolve(expected)), (task.id, e.id, e.resolve(expected))


def test_the_split_asks_every_kind_of_question(heldout11):
    """Counts, shares, breakdowns, names, distances, yes/no, areas, lengths, sums, maxima, a minimum, means and a
    difference; several figures in one turn; thresholds in metres and kilometres, all in metric units."""
    kinds = Counter(e.kind for t in heldout11 for e in t.expectations)
    assert all(kinds[k] >= 2 for k in ("count", "value", "names", "distance", "boolean")), kinds
    assert kinds["count_by"] >= 6, kinds
    units = {e.unit for t in heldout11 for e in t.expectations}
    assert {"%", "m", "km", "m2", "ha", "EUR"} <= units
    measures = Counter(e.measure for t in heldout11 for e in t.expectations)
    assert {"sum", "max", "min", "mean", "difference", "share", "area", "length"} <= set(measures)
    assert measures["mean"] >= 3 and measures["sum"] >= 5, measures
    assert sum(len(t.expectations) > 1 for t in heldout11) >= 30
    assert {t.aoi.kind for t in heldout11} == {"damage", "hazard", "layer"}
    assert sum(t.buffer_m is not None for t in heldout11) >= 10  # within / beyond stated distances
    words = " ".join(t.question for t in heldout11)
    for unit in ("miles", "millas", "feet", "acres", "milhas", "pieds", "yards"):  # every figure is asked in metric
        assert not re.search(rf"\b{unit}\b", words), unit
    assert all(e.in_answer for t in heldout11 for e in t.expectations if e.kind != "count_by")


def test_thresholds_said_in_words_are_the_stated_distances(heldout11):
    by_id = {t.id: t for t in heldout11}
    for task_id, (words, metres) in WORDED_THRESHOLDS.items():
        task = by_id[task_id]
        assert words in task.question and task.buffer_m == metres, task_id
        assert not DISTANCE_IN_DIGITS.search(task.question), task_id  # the distance is said in words only
    assert "6 km" in by_id["ho11_cmp_hospitals_6km"].question and by_id["ho11_cmp_hospitals_6km"].buffer_m == 6000


def test_short_breakdowns_are_two_to_four_labelled_figures(heldout11):
    """A short breakdown's figures are told apart by their labels: the groups of one count_by (two to four of them,
    beside an unlabelled total), or two to four counts with an event or a group each."""
    expected = load_expected()
    by_id = {t.id: t for t in heldout11}
    for task_id in SHORT_BREAKDOWNS:
        task = by_id[task_id]
        by = [e for e in task.expectations if e.kind == "count_by"]
        if by:
            assert len(by) == 1 and 2 <= len(by[0].resolve(expected)) <= 4, task_id
            assert [e.labelled for e in task.expectations if e.kind == "count"] == [False], task_id
        else:
            counts = [e for e in task.expectations if e.kind == "count"]
            assert 2 <= len(counts) <= 4 and all(e.labelled for e in counts), task_id
            labels = [(e.group, tuple(e.events), e.relation) for e in counts]
            assert len(set(labels)) == len(labels), task_id


def test_breakdowns_add_up_to_their_totals(heldout11):
    """The per-group tallies sum to the total asked beside them."""
    expected = load_expected()
    with_groups = 0
    for task in heldout11:
        by = [e for e in task.expectations if e.kind == "count_by"]
        if by:
            with_groups += 1
            assert task.expectations[0].kind == "count" and not task.expectations[0].labelled, task.id
            assert sum(by[0].resolve(expected).values()) == task.expectations[0].resolve(expected), task.id
    assert with_groups >= 6


def test_several_figures_carry_their_labels(heldout11):
    """Events, groups, relations and measures label the figures a turn asks for together."""
    by_id = {t.id: t for t in heldout11}
    for task_id in PER_FIRE:
        assert [e.events for e in by_id[task_id].expectations] == [[11], [12, 13, 14]], task_id
    for task_id in ("ho11_aoi_west_tall_apartments", "ho11_aoi_village_churches"):
        assert [e.group for e in by_id[task_id].expectations] == [None, "destroyed"], task_id
    assert [e.relation for e in by_id["ho11_pt_valencia_centros_longe"].expectations] == ["outside", None]
    assert [e.relation for e in by_id["ho11_pt_aoi_sketch_ferrovia"].expectations] == ["all", "inside"]
    for task_id in ("ho11_eaton_beds_8500", "ho11_maui_30km", "ho11_fr_aoi_kinneloa_lits", "ho11_pt_maui_estaduais"):
        assert [e.measure for e in by_id[task_id].expectations] == [None, "sum"], task_id
    assert [e.measure for e in by_id["ho11_pal_mean_beds_7km"].expectations] == [None, "mean"]
    assert [e.measure for e in by_id["ho11_eaton_biggest_10km"].expectations] == [None, "max"]
    assert [e.measure for e in by_id["ho11_pt_plano_menor_subvencao"].expectations] == [None, "min"]
    assert [e.measure for e in by_id["ho11_catarroja_municipality_flooded"].expectations] == ["area", "share"]
    assert [e.measure for e in by_id["ho11_es_valencia_consultorios_3km"].expectations] == [None, "share"]
    assert [e.kind for e in by_id["ho11_fr_catarroja_pylones"].expectations] == ["boolean", "count"]
    assert [e.kind for e in by_id["ho11_catarroja_university"].expectations] == ["boolean", "value"]
    assert [e.kind for e in by_id["ho11_plan_over_subsidised"].expectations] == ["boolean", "names"]


def test_aoi_files_are_the_ones_the_runner_writes(heldout11):
    with_files = [t for t in heldout11 if t.input_files]
    assert len(with_files) >= 8
    assert {name for t in with_files for name in t.input_files} == set(AOI_FILES)
    for task in with_files:
        assert all(name in AOI_FILES for name in task.input_files), task.id
        assert all(name in task.question for name in task.input_files), task.id  # the question names its area
        assert task.aoi.kind == "layer" and task.aoi.layers == task.input_files, task.id


def test_the_cli_and_the_kept_runs_know_the_split():
    from bench.cli import build_parser
    from bench.runs import SPLIT_FILES, split_task_ids

    args = build_parser().parse_args(["tasks", "--tasks-file", "heldout11"])
    assert args.tasks_file == HELDOUT11_FILE
    args = build_parser().parse_args(["run", "--tasks-file", "heldout11", "--offline"])
    assert args.tasks_file == HELDOUT11_FILE
    assert SPLIT_FILES["heldout11"] == HELDOUT11_FILE.name
    assert len(split_task_ids("heldout11") or ()) == 61


def test_the_ground_truth_reuses_the_earlier_splits_helpers():
    """Reading, projecting and tabulating are the first split's code, the threshold guard and the area and length
    helpers the third split's, the Palisades hull the fourth split's, the AOI edge guard the sixth split's, the
    'firmly inside or outside' guard and the small helpers the eighth split's, the two-decimal hectares the ninth
    split's, and the one-nearest helper (the fourth split's 'nearest are apart' guard inside) and the standing grades
    the tenth split's."""
    import bench.ground_truth_heldout as first
    import bench.ground_truth_heldout3 as third
    import bench.ground_truth_heldout4 as fourth
    import bench.ground_truth_heldout6 as sixth
    import bench.ground_truth_heldout8 as eighth
    import bench.ground_truth_heldout9 as ninth
    import bench.ground_truth_heldout10 as tenth
    import bench.ground_truth_heldout11 as eleventh

    for name in ("Layers", "geoms", "touching", "metres", "ranked", "listing", "tally", "pct", "euros", "hospitals"):
        assert getattr(eleventh, name) is getattr(first, name), name
    for name in ("assert_clear", "clipped_km", "hectares", "projected_aoi"):
        assert getattr(eleventh, name) is getattr(third, name), name
    assert eleventh.palisades_hull is fourth.palisades_hull
    assert eleventh.assert_off_edge is sixth.assert_off_edge
    for name in ("assert_firm", "one_of", "open_with_beds", "wet_share"):
        assert getattr(eleventh, name) is getattr(eighth, name), name
    assert eleventh.hectares2 is ninth.hectares2
    assert eleventh.nearest is tenth.nearest and eleventh.STANDING is tenth.STANDING


def test_the_largest_and_smallest_guards_refuse_ties():
    import numpy as np

    from bench.ground_truth_heldout11 import largest, smallest

    keep = np.array([True, True, True, False])
    assert largest(np.array([3.0, 9.0, 5.0, 100.0]), keep) == 1
    assert smallest(np.array([3.0, 9.0, 5.0, 1.0]), keep) == 0
    with pytest.raises(AssertionError):
        largest(np.array([9.0, 9.0, 5.0, 1.0]), keep)
    with pytest.raises(AssertionError):
        largest(np.array([9.0, 8.9, 5.0, 1.0]), keep, margin=0.02)
    with pytest.raises(AssertionError):
        smallest(np.array([3.0, 3.0, 5.0, 1.0]), keep)


# ------------------------------------------------------------------------------------ ground truth
@pytest.fixture(scope="module")
def root() -> Path:
    return sample_data()


def test_expected_heldout11_values_are_what_the_module_computes(root):
    from bench.ground_truth_heldout11 import heldout11 as compute_heldout11

    fresh = json.loads(json.dumps(compute_heldout11(root), ensure_ascii=False))
    assert fresh["heldout11"] == load_expected()["heldout11"]


def test_dins_values_recomputed_without_the_module(root, values):
    """The DINS figures again, with plain pandas filters and spatial joins."""
    eaton = read(root, EATON_FILE)
    kind, dmg = eaton.STRUCTURETYPE, eaton.DAMAGE
    e = values["eaton"]
    homes = kind.str.startswith(("Single Family", "Multi Family", "Mobile Home"))
    assert int((homes & (dmg == DESTROYED)).sum()) == e["homes_destroyed"] == 1859
    flats = kind.str.startswith("Multi Family")
    assert int((flats & (dmg == DESTROYED)).sum()) == e["apartments_destroyed"] == 5
    assert int((dmg != NONE).sum()) == e["damaged"] == 3051
    infra = eaton[kind == "Infrastructure"]
    assert grade(infra.DAMAGE).value_counts().to_dict() == e["infrastructure_by_grade"]
    assert len(infra) == e["infrastructure"] == 25
    schools = eaton[kind == "School"]
    assert round(100 * (schools.DAMAGE == NONE).mean(), 1) == e["schools_no_damage_pct"]

    pal = read(root, PALISADES_FILE)
    kind, dmg = pal.STRUCTURETYPE, pal.DAMAGE
    p = values["palisades"]
    mixed = pal[kind == "Mixed Commercial/Residential"]
    assert grade(mixed.DAMAGE).value_counts().to_dict() == p["mixed_use_by_grade"] and len(mixed) == p["mixed_use"]
    lost = pal[dmg == DESTROYED]
    assert round(100 * lost.STRUCTURETYPE.str.startswith("Single Family").mean(), 1) == p["sfr_pct_of_destroyed"]
    sheds = pal[kind == "Utility Misc Structure"]
    assert round(100 * (sheds.DAMAGE == DESTROYED).mean(), 1) == p["outbuildings_destroyed_pct"] == 62.8
    tall_flats = pal[kind == "Multi Family Residence Multi Story"]
    assert int(tall_flats.DAMAGE.isin(STANDING).sum()) == p["multi_story_apartments_standing"] == 49
    shops = pal[kind == "Commercial Building Multi Story"]
    assert grade(shops.DAMAGE).value_counts().to_dict() == p["multi_story_commercial_by_grade"]
    assert len(shops) == p["multi_story_commercial"] == 75

    c = values["comparative"]
    for fire, dins in (("eaton", eaton), ("palisades", pal)):
        kind, dmg = dins.STRUCTURETYPE, dins.DAMAGE
        houses = dins[kind.str.startswith("Single Family")]
        assert len(dins) == c["inspected"][fire], fire
        assert round(100 * (houses.DAMAGE == DESTROYED).mean(), 1) == c["sfr_destroyed_pct"][fire], fire
        assert int(((kind == "Utility Misc Structure") & (dmg == DESTROYED)).sum()) == c["outbuildings_destroyed"][fire]
        assert int(((kind == "Church") & (dmg == DESTROYED)).sum()) == c["churches_destroyed"][fire], fire
        assert int(((kind == "School") & (dmg != NONE)).sum()) == c["schools_damaged"][fire], fire
        assert int((dmg == MAJOR).sum()) == c["major"][fire], fire
    assert c["destroyed_difference"] == int((pal.DAMAGE == DESTROYED).sum() - (eaton.DAMAGE == DESTROYED).sum()) == 4101
    assert (c["churches_destroyed"]["eaton"], c["churches_destroyed"]["palisades"]) == (1, 6)

    a = values["aoi"]
    west = eaton.sjoin(aoi_frame("west_altadena_area.geojson"), predicate="intersects")
    tall = west[west.STRUCTURETYPE == "Multi Family Residence Multi Story"]
    w = a["west_altadena_area"]
    assert (len(tall), int((tall.DAMAGE == DESTROYED).sum())) == (
        w["multi_story_apartments"],
        w["multi_story_apartments_destroyed"],
    )
    east = eaton.sjoin(aoi_frame("east_altadena_kinneloa.geojson"), predicate="intersects")
    k = a["east_altadena_kinneloa"]
    assert round(100 * (east.DAMAGE == DESTROYED).mean(), 1) == k["destroyed_pct"] == 28.4
    houses = east[east.STRUCTURETYPE.str.startswith("Single Family")]
    assert int((houses.DAMAGE == NONE).sum()) == k["sfr_no_damage"] == 536
    village = pal.sjoin(aoi_frame("palisades_village_aoi.geojson"), predicate="intersects")
    churches = village[village.STRUCTURETYPE == "Church"]
    v = a["palisades_village_aoi"]
    assert (len(churches), int((churches.DAMAGE == DESTROYED).sum())) == (v["churches"], v["churches_destroyed"])


def test_hospital_values_recomputed_without_the_module(root, values):
    """Buffers and joins instead of distances to the polygon; each threshold gives the same hospitals 30 m either
    side of it (no hospital is near a threshold), and each 'nearest' is 30 m ahead of the next one."""
    hospitals = read(root, HOSPITALS_FILE)
    la = hospitals[(hospitals.STATE == "CA") & (hospitals.COUNTY == "LOS ANGELES")].to_crs(26911)
    perimeter = read(root, "eaton-2025/eaton_adjusted_fire_perimeter.geojson", 26911).union_all()
    pal = read(root, PALISADES_FILE, 26911)
    hull = pal[pal.DAMAGE == DESTROYED].union_all().convex_hull

    def within(area: shapely.Geometry, metres: float, rows: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        near = rows[rows.intersects(area.buffer(metres))]
        assert sorted(near.NAME) == sorted(rows.NAME[rows.intersects(area.buffer(metres - 30))])
        assert sorted(near.NAME) == sorted(rows.NAME[rows.intersects(area.buffer(metres + 30))])
        assert bool((near.STATUS == "OPEN").all()) and bool((near.BEDS > 0).all())
        return near

    e, p = values["eaton"], values["palisades"]
    near = within(perimeter, 8500, la)
    assert (len(near), int(near.BEDS.sum())) == (e["within_8500m"], e["beds_within_8500m"]) == (13, 2292)
    ten = within(perimeter, 10_000, la)
    assert ten.TYPE.value_counts().to_dict() == e["within_10km_by_type"] and len(ten) == e["within_10km"]
    beds = ten.BEDS.sort_values(ascending=False)
    assert beds.iloc[0] > beds.iloc[1] and int(beds.iloc[0]) == e["most_beds_within_10km_beds"] == 578
    assert [ten.NAME[beds.index[0]]] == e["most_beds_within_10km"]["names"]
    nonprofit = within(perimeter, 6000, la[la.OWNER == "NON-PROFIT"])
    assert sorted(nonprofit.NAME) == sorted(e["nonprofit_within_6km"]["names"]) and len(nonprofit) == 5

    pads = la[la.HELIPAD == "Y"]
    ranked = pads.assign(d=pads.distance(hull)).sort_values("d")
    assert ranked.d.iloc[1] - ranked.d.iloc[0] >= 30
    assert [ranked.NAME.iloc[0]] == p["nearest_helipad"]["names"] == ["WEST LOS ANGELES VA MEDICAL CENTER"]
    assert ranked.d.iloc[0] == pytest.approx(p["nearest_helipad"]["distances_m"][ranked.NAME.iloc[0]], abs=0.1)
    seven = within(hull, 7000, la)
    assert len(seven) == p["within_7km"] == 7
    assert seven.BEDS.mean() == pytest.approx(p["mean_beds_within_7km"], abs=0.05)

    c = values["comparative"]["hospitals_within_6km"]
    assert (len(within(perimeter, 6000, la)), len(within(hull, 6000, la))) == (c["eaton"], c["palisades"]) == (7, 5)

    kinneloa = within(aoi_frame("east_altadena_kinneloa.geojson", 26911).geometry.iloc[0], 7000, la)
    k = values["aoi"]["east_altadena_kinneloa"]
    assert (len(kinneloa), int(kinneloa.BEDS.sum())) == (k["hospitals_within_7km"], k["beds_within_7km"])

    maui = hospitals[(hospitals.STATE == "HI") & (hospitals.COUNTY == "MAUI")].to_crs(32604)
    burn = read(root, "lahaina-2023/lahaina_burn_area.geojson", 32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    lahaina = values["lahaina"]
    reach = within(burn_area, 30_000, maui)
    assert sorted(reach.NAME) == sorted(lahaina["within_30km"]["names"])
    assert int(reach.BEDS.sum()) == lahaina["beds_within_30km"] == 223
    state = maui[maui.OWNER == "GOVERNMENT - STATE"]
    assert (len(state), int(state.BEDS.sum())) == (lahaina["state_hospitals"], lahaina["state_beds"]) == (3, 232)


def test_valencia_values_recomputed_without_the_module(root, values):
    """Buffers and joins for the València rings (the same facilities 30 m either side of each threshold)."""
    flood = read(root, FLOOD_FILE, 25830)
    water = flood.union_all()
    grown, shrunk = water.buffer(30), water.buffer(-30)
    v = values["valencia"]
    health = read(root, HEALTH_FILE, 25830)
    assert sorted(health.equipamien[health.intersects(shrunk)]) == sorted(health.equipamien[health.intersects(grown)])

    def near(rows: gpd.GeoDataFrame, metres: float) -> list[str]:
        out = sorted(rows.equipamien[rows.intersects(water.buffer(metres))])
        for shift in (-30, 30):
            assert sorted(rows.equipamien[rows.intersects(water.buffer(metres + shift))]) == out
        return out

    assert len(near(health, 750)) == v["within_750m"] == 12
    wet = set(health.equipamien[health.intersects(water)])
    assert len(set(near(health, 600)) - wet) == v["dry_within_600m"] == 7
    consultorios = health[health.equipamien.str.startswith("CONSULTORIO")]
    close = near(consultorios, 3000)
    assert len(close) == v["consultorios_within_3km"] == 13
    assert round(100 * len(close) / len(consultorios), 1) == v["consultorios_within_3km_pct"]
    centres = health[health.idsubclase == 13]
    far = sorted(set(centres.equipamien) - set(near(centres, 3500)))
    assert far == sorted(v["centres_beyond_3500m"]["names"]) and len(far) == v["centres_beyond_3500m"]["count"] == 5
    assert centres.distance(water).mean() == pytest.approx(v["centres_mean_m"], abs=0.1)
    specialty = health[health.equipamien.str.startswith("CENTRO DE ESPECIALIDADES")]
    specialty = specialty.assign(d=specialty.distance(water)).sort_values("d")
    assert specialty.d.iloc[1] - specialty.d.iloc[0] >= 30
    assert [specialty.equipamien.iloc[0]] == v["nearest_specialty_centre"]["names"]

    south = health.sjoin(aoi_frame("valencia_south_area.geojson", 25830), predicate="intersects")
    s = values["aoi"]["valencia_south_area"]
    assert len(south) == s["facilities"] == 6
    kinds = south.idsubclase.map({13: "centro de salud", 18: "consultorio", 14: "hospital"})
    assert kinds.value_counts().to_dict() == s["facilities_by_kind"]
    far_south = south[~south.intersects(water.buffer(600))]
    assert sorted(far_south.equipamien) == sorted(s["beyond_600m"]["names"])
    for name, d in zip(far_south.equipamien, far_south.distance(water), strict=True):
        assert d == pytest.approx(s["beyond_600m"]["distances_m"][name], abs=0.1)


def test_catarroja_values_recomputed_without_the_module(root, values):
    """Clips, dissolves and joins with GeoPandas for the Catarroja extract, the sketch and the recovery plan."""
    flood = read(root, FLOOD_FILE, 25830)
    water = flood.union_all()
    grown, shrunk = water.buffer(30), water.buffer(-30)
    c = values["catarroja"]
    polygons = read(root, OSM + "poligonos.geojson", 25830)
    town = polygons[(polygons["boundary"] == "administrative") & (polygons["name"] == "Catarroja")]
    wet_town = gpd.clip(town, flood).area.sum()
    assert abs(wet_town / 1e4 - c["municipality_flooded_ha"]) <= 0.01 * c["municipality_flooded_ha"]
    assert abs(100 * wet_town / town.area.sum() - c["municipality_flooded_pct"]) < 0.2
    for tag, value, key in (
        ("natural", "wetland", "wetland_ha_in_flood"),
        ("landuse", "residential", "residential_ha_in_flood"),
        ("leisure", "pitch", "pitch_ha_in_flood"),
    ):
        union = polygons[polygons[tag] == value].dissolve()
        assert abs(gpd.clip(union, flood).area.sum() / 1e4 - c[key]) <= 0.01 * c[key] + 0.05, key
    churches = polygons[polygons.amenity == "place_of_worship"]
    assert len(churches) == 2 and not bool(churches.intersects(grown).any()) and not c["churches_any_flooded"]
    courthouse = polygons[polygons.amenity == "courthouse"]
    assert not bool(courthouse.intersects(grown).any()) and not c["courthouse_flooded"]
    campus = polygons[polygons.amenity == "university"]
    assert bool(campus.intersects(shrunk).all()) and c["university_flooded"]
    assert abs(gpd.clip(campus, flood).area.sum() / 1e4 - c["university_ha_in_flood"]) < 0.01
    points = read(root, OSM + "puntos.geojson", 25830)
    towers = points[points.power == "tower"]
    assert bool(towers.intersects(shrunk).all()) and c["towers_all_flooded"] and len(towers) == c["towers"] == 7

    lines = read(root, OSM + "lineas.geojson", 25830)
    for tag, value, key in (
        ("highway", "cycleway", "cycleway_km_in_flood"),
        ("waterway", "stream", "stream_km_in_flood"),
    ):
        assert abs(gpd.clip(lines[lines[tag] == value], flood).length.sum() / 1000 - c[key]) < 0.02, key
    for value, key in (("tertiary", "tertiary_pct_in_flood"), ("secondary", "secondary_pct_in_flood")):
        roads = lines[lines.highway == value]
        assert abs(100 * gpd.clip(roads, flood).length.sum() / roads.length.sum() - c[key]) < 0.1, key
    sketch = aoi_frame("catarroja_east_sketch.geojson", 25830)
    k = values["aoi"]["catarroja_east_sketch"]
    motorway = gpd.clip(lines[lines.highway == "motorway"], sketch)
    assert abs(motorway.length.sum() / 1000 - k["motorway_km"]) < 0.01
    rail = gpd.clip(lines[lines.railway == "rail"], sketch)
    assert abs(rail.length.sum() / 1000 - k["rail_km"]) < 0.01
    assert abs(gpd.clip(rail, flood).length.sum() / 1000 - k["rail_km_in_flood"]) < 0.01


def test_recovery_plan_values_recomputed_without_the_module(root, values):
    plan = values["plan"]
    public = read(root, PLAN_FILE)
    damage, subsidy = public.val_dany.map(eur), public.subv_apro.map(eur)
    under_way = public.estado == "En ejecución"
    assert subsidy[under_way].sum() == pytest.approx(plan["subsidy_under_way_eur"], abs=0.01)
    assert int(under_way.sum()) == 5
    over = public.titulo[subsidy > damage]
    assert sorted(over) == plan["over_subsidised"]["names"] == ["EPA Esteban Paluzié"] and plan["over_subsidised_any"]
    empty = public.val_dany.fillna("").str.strip() == ""
    assert sorted(public.titulo[empty]) == plan["unvalued"]["names"] and int(empty.sum()) == plan["unvalued"]["count"]
    social = damage[(public.capa == "Centros sociosanitarios") & ~empty]
    assert len(social) == 4 and social.mean() == pytest.approx(plan["social_mean_damage_eur"], abs=0.01)
    assert public.capa.value_counts().to_dict() == plan["by_capa"] and len(public) == plan["total"] == 20
    granted = subsidy[subsidy > 0].sort_values()
    assert granted.iloc[0] < granted.iloc[1]
    assert [public.titulo[granted.index[0]]] == plan["smallest_subsidy"]["names"] == ["Servicios Sociales Jaume I"]
    assert granted.iloc[0] == pytest.approx(plan["smallest_subsidy_eur"], abs=0.01)


def test_lahaina_values_recomputed_without_the_module(root, values):
    labels = read(root, "lahaina-2023/Maui_Wildfires_August_0.geojson", 32604)
    area = pd.Series(shapely.area(shapely.make_valid(labels.geometry.values)), index=labels.index)
    cls = labels["class"]
    lahaina = values["lahaina"]
    damaged = area[cls == "Damaged Building"].sort_values(ascending=False)
    assert damaged.iloc[1] < 0.98 * damaged.iloc[0]
    assert damaged.iloc[0] == pytest.approx(lahaina["largest_damaged_m2"], abs=0.1)
    buildings = area[cls.isin(["Building", "Damaged Building"])]
    assert buildings.sum() == pytest.approx(lahaina["building_labels_m2"], abs=0.1)


# -------------------------------------------------------------------------------------- apartness
def test_every_question_is_apart_from_the_bench_questions(heldout11):
    others = bench_questions(TASKS_FILE) + bench_questions(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += bench_questions(split)
    assert len(others) > 500
    assert not too_close(questions(heldout11), others)


def test_every_question_is_apart_from_the_reading_bank(heldout11):
    assert not too_close(questions(heldout11), reading_bank_questions())


def test_the_questions_are_apart_from_each_other(heldout11):
    mine = questions(heldout11)
    assert not [close for i in range(len(mine)) for close in too_close(mine[i + 1 :], [mine[i]])]
