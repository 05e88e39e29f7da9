"""The tenth held-out question split (``bench/heldout10.json``): 61 questions written without looking at how GeoFaham
reads a question (nothing under ``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not run on
them), in four languages, worded as coordinators, analysts and humanitarian workers write (about half plain everyday
questions, the rest an email, context sentences, terse notes, exclusions and negations, grade subsets said by
description, implied denominators, numbers and units in words, three typos), with few data field names or key=value
tags, each apart from every question the product may have been shaped on (the bench's tasks, its paraphrase suite, the
first nine held-out splits and the planner's reading bank), with expected values that
``bench/ground_truth_heldout10.py`` computes from the sample data by code of its own (no GeoFaham import). The checks
the held-out splits share (expected-value kinds, the sample data, the reading bank's questions, the similarity measure)
come from the second split's tests."""

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

HELDOUT10_FILE = BENCH_DIR / "heldout10.json"
EARLIER_SPLITS = earlier_splits(10)
DESTROYED, NONE = "Destroyed (>50%)", "No Damage"
AFFECTED, MINOR, MAJOR = "Affected (1-9%)", "Minor (10-25%)", "Major (26-50%)"
SFR_ONE, SFR_TALL = "Single Family Residence Single Story", "Single Family Residence Multi Story"
EATON_FILE = "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson"
PALISADES_FILE = "palisades-2025/DINS_2025_Palisades_Public_View.geojson"
HOSPITALS_FILE = "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson"
FLOOD_FILE = "valencia-2024/emsr773_observed_flood_merged.geojson"
HEALTH_FILE = "valencia-2024/valencia_city_health_facilities.geojson"
PLAN_FILE = "valencia-2024/catarroja_public_buildings_dana.geojson"
OSM = "valencia-2024/osm-catarroja/"
#: the turns whose honest answer is a short breakdown: two to four figures, each told apart by its label
SHORT_BREAKDOWNS = (
    "ho10_cmp_destroyed",
    "ho10_cmp_untouched_homes",
    "ho10_cmp_hospitals_9km",
    "ho10_plan_by_status",
    "ho10_es_eaton_comercios_por_grado",
    "ho10_es_cmp_escuelas_destruidas",
    "ho10_fr_cmp_endommages",
    "ho10_fr_lahaina_classes",
    "ho10_pt_pal_moveis_por_tipo",
    "ho10_pt_cmp_minor_major",
)
#: one figure per fire: Eaton's, then the Palisades'
PER_FIRE = (
    "ho10_cmp_destroyed",
    "ho10_cmp_destroyed_share",
    "ho10_cmp_untouched_homes",
    "ho10_cmp_hospitals_9km",
    "ho10_es_cmp_escuelas_destruidas",
    "ho10_fr_cmp_endommages",
    "ho10_pt_cmp_minor_major",
)
#: thresholds said in words: task -> (the words, the distance in metres the task states)
WORDED_THRESHOLDS = {
    "ho10_eaton_hospitals_4km": ("four kilometres", 4000),
    "ho10_pal_beds_5500m": ("five and a half kilometres", 5500),
    "ho10_cmp_hospitals_9km": ("nine kilometres", 9000),
    "ho10_valencia_centres_1200m": ("twelve hundred metres", 1200),
    "ho10_es_valencia_mas_5km": ("cinco kilómetros", 5000),
    "ho10_fr_valencia_1600": ("mille six cents mètres", 1600),
    "ho10_fr_aoi_village_hopitaux": ("quatre kilomètres", 4000),
    "ho10_pt_eaton_anel_5_10km": ("dez", 10_000),
    "ho10_pt_pal_heliporto_10km": ("dez quilómetros", 10_000),
}
DISTANCE_IN_DIGITS = re.compile(
    r"\d+(?:[.,]\d+)?\s*(?:m|km|metres|meters|kilometres|kilómetros|kilomètres|quilómetros)\b"
)
#: data field names and key=value tags a question may write (people rarely do): a few questions only
FIELD_WORDS = re.compile(
    r"\b[a-z_]+=[a-z_]+\b|\b(?:STRUCTURETYPE|DAMAGE|OWNER|TYPE|HELIPAD|TRAUMA|BEDS|STATUS|idsubclase|val_dany|"
    r"subv_apro|capa|estado|titulo|equipamien)\b"
)


@pytest.fixture(scope="module")
def heldout10() -> list[TaskSpec]:
    return load_tasks(HELDOUT10_FILE)


@pytest.fixture(scope="module")
def values() -> dict:
    return load_expected()["heldout10"]


# ---------------------------------------------------------------------------------------- the file
def test_every_task_loads_in_the_heldout_split(heldout10):
    assert_split_loads(heldout10, 10)


def test_personas_categories_and_plain_questions_are_varied(heldout10):
    personas = Counter(t.persona for t in heldout10)
    assert len(personas) == 5 and min(personas.values()) >= 8, personas
    categories = Counter(t.category for t in heldout10)
    assert {"poi_impact", "building_damage", "clustering_aggregation", "comparative", "infrastructure"} <= set(
        categories
    )
    assert {"land_cover", "flood"} <= set(categories) and categories["comparative"] >= 8, categories
    simple = [t for t in heldout10 if t.difficulty == "simple"]
    assert len(simple) >= len(heldout10) // 2  # about half plain, everyday wordings
    assert all(len(t.question) <= 140 for t in simple if t.language == "en"), "a simple question said simply"


def test_few_questions_write_field_names_or_tags(heldout10):
    """People rarely write a layer's field names or OSM key=value tags: a few questions do, most do not."""
    with_fields = [t.id for t in heldout10 if FIELD_WORDS.search(t.question)]
    assert 1 <= len(with_fields) <= 6, with_fields


def test_every_expectation_points_into_the_heldout10_values(heldout10):
    expected = load_expected()
    for task in heldout10:
        for e in task.all_expectations():
            assert e.ref is not None and e.ref.startswith("heldout10."), (task.id, e.id)
            assert e.description.strip(), (task.id, e.id)
            assert VALUE_KINDS[e.kind](e.resolve(expected)), (task.id, e.id, e.resolve(expected))


def test_the_split_asks_every_kind_of_question(heldout10):
    """Counts, shares, breakdowns, names, distances, yes/no, areas, lengths, sums, a maximum, a minimum, a mean and
    differences; several figures in one turn; thresholds and rings in metres and kilometres, all in metric units."""
    kinds = Counter(e.kind for t in heldout10 for e in t.expectations)
    assert all(kinds[k] >= 2 for k in ("count", "value", "names", "distance", "boolean")), kinds
    assert kinds["count_by"] >= 6, kinds
    units = {e.unit for t in heldout10 for e in t.expectations}
    assert {"%", "m", "km", "m2", "ha", "EUR"} <= units
    measures = {e.measure for t in heldout10 for e in t.expectations}
    assert {"sum", "max", "min", "mean", "difference", "share", "area", "length"} <= measures
    assert sum(len(t.expectations) > 1 for t in heldout10) >= 35
    assert {t.aoi.kind for t in heldout10} == {"damage", "hazard", "layer"}
    assert sum(t.buffer_m is not None for t in heldout10) >= 10  # within / beyond stated distances
    words = " ".join(t.question for t in heldout10)
    for unit in ("miles", "millas", "feet", "acres", "milhas", "pieds"):  # every figure is asked in metric units
        assert not re.search(rf"\b{unit}\b", words), unit
    assert all(e.in_answer for t in heldout10 for e in t.expectations if e.kind != "count_by")


def test_thresholds_said_in_words_are_the_stated_distances(heldout10):
    by_id = {t.id: t for t in heldout10}
    for task_id, (words, metres) in WORDED_THRESHOLDS.items():
        task = by_id[task_id]
        assert words in task.question and task.buffer_m == metres, task_id
        assert not DISTANCE_IN_DIGITS.search(task.question), task_id  # the distance is said in words only
    assert "cinco quilómetros" in by_id["ho10_pt_eaton_anel_5_10km"].question
    assert "5 km" in by_id["ho10_eaton_beds_5km"].question and by_id["ho10_eaton_beds_5km"].buffer_m == 5000


def test_short_breakdowns_are_two_to_four_labelled_figures(heldout10):
    """A short breakdown's figures are told apart by their labels: the groups of one count_by (two to four of them,
    beside an unlabelled total), or two to four counts with a grade, an event or a relation each."""
    expected = load_expected()
    by_id = {t.id: t for t in heldout10}
    for task_id in SHORT_BREAKDOWNS:
        task = by_id[task_id]
        by = [e for e in task.expectations if e.kind == "count_by"]
        if by:
            assert len(by) == 1 and 2 <= len(by[0].resolve(expected)) <= 4, task_id
            assert [e.labelled for e in task.expectations if e.kind == "count"] == [False], task_id
            assert sum(by[0].resolve(expected).values()) == task.expectations[0].resolve(expected), task_id
        else:
            counts = [e for e in task.expectations if e.kind == "count"]
            assert 2 <= len(counts) <= 4 and all(e.labelled for e in counts), task_id
            labels = [(e.group, tuple(e.events), e.relation) for e in counts]
            assert len(set(labels)) == len(labels), task_id


def test_longer_breakdowns_add_up_to_their_totals(heldout10):
    """The per-grade tallies of five groups sum to the total asked beside them."""
    expected = load_expected()
    for task in heldout10:
        by = [e for e in task.expectations if e.kind == "count_by"]
        if by:
            assert task.expectations[0].kind == "count" and not task.expectations[0].labelled, task.id
            assert sum(by[0].resolve(expected).values()) == task.expectations[0].resolve(expected), task.id


def test_several_figures_carry_their_labels(heldout10):
    """Events, groups, relations and measures label the figures a turn asks for together."""
    by_id = {t.id: t for t in heldout10}
    for task_id in PER_FIRE:
        assert [e.events for e in by_id[task_id].expectations] == [[11], [12, 13, 14]], task_id
    assert [e.group for e in by_id["ho10_aoi_village_schools"].expectations] == [None, "destroyed"]
    assert [e.group for e in by_id["ho10_eaton_tall_houses_lost"].expectations] == ["destroyed", None]
    assert [e.relation for e in by_id["ho10_es_valencia_mas_5km"].expectations] == ["outside", None]
    assert [e.relation for e in by_id["ho10_valencia_flooded_facilities"].expectations] == ["inside", None]
    for task_id in ("ho10_eaton_beds_5km", "ho10_pal_beds_5500m", "ho10_lahaina_damaged"):
        assert [e.measure for e in by_id[task_id].expectations] == [None, "sum"], task_id
    for task_id in ("ho10_eaton_tall_houses_lost", "ho10_aoi_sketch_flooded", "ho10_fr_valencia_1600"):
        assert [e.measure for e in by_id[task_id].expectations][1] == "share", task_id
    assert [e.measure for e in by_id["ho10_plan_largest_damage"].expectations] == [None, "max"]
    assert [e.measure for e in by_id["ho10_es_plan_menor_valoracion"].expectations] == [None, "min"]
    assert [e.kind for e in by_id["ho10_catarroja_pharmacies"].expectations] == ["boolean", "count"]
    assert [e.relation for e in by_id["ho10_fr_catarroja_voies_ferrees"].expectations] == ["all", "inside"]


def test_aoi_files_are_the_ones_the_runner_writes(heldout10):
    with_files = [t for t in heldout10 if t.input_files]
    assert len(with_files) >= 8
    assert {name for t in with_files for name in t.input_files} == set(AOI_FILES)
    for task in with_files:
        assert all(name in AOI_FILES for name in task.input_files), task.id
        assert all(name in task.question for name in task.input_files), task.id  # the question names its area
        assert task.aoi.kind == "layer" and task.aoi.layers == task.input_files, task.id


def test_the_cli_and_the_kept_runs_know_the_split():
    from bench.cli import build_parser
    from bench.runs import SPLIT_FILES

    args = build_parser().parse_args(["tasks", "--tasks-file", "heldout10"])
    assert args.tasks_file == HELDOUT10_FILE
    args = build_parser().parse_args(["run", "--tasks-file", "heldout10", "--offline"])
    assert args.tasks_file == HELDOUT10_FILE
    assert SPLIT_FILES["heldout10"] == HELDOUT10_FILE.name


def test_the_ground_truth_reuses_the_earlier_splits_helpers():
    """Reading, projecting and tabulating are the first split's code, the threshold guard and the area and length
    helpers the third split's, the 'nearest are apart' guard and the Palisades hull the fourth split's, the AOI edge
    guard the sixth split's, the 'farthest is apart' guard the seventh split's, the 'firmly inside or outside' guard
    and the small helpers the eighth split's."""
    import bench.ground_truth_heldout as first
    import bench.ground_truth_heldout3 as third
    import bench.ground_truth_heldout4 as fourth
    import bench.ground_truth_heldout6 as sixth
    import bench.ground_truth_heldout7 as seventh
    import bench.ground_truth_heldout8 as eighth
    import bench.ground_truth_heldout10 as tenth

    for name in ("Layers", "geoms", "touching", "metres", "ranked", "listing", "tally", "pct", "euros", "hospitals"):
        assert getattr(tenth, name) is getattr(first, name), name
    for name in ("assert_clear", "clipped_km", "hectares", "projected_aoi"):
        assert getattr(tenth, name) is getattr(third, name), name
    for name in ("assert_apart", "palisades_hull"):
        assert getattr(tenth, name) is getattr(fourth, name), name
    assert tenth.assert_off_edge is sixth.assert_off_edge
    assert tenth.farthest_apart is seventh.farthest_apart
    for name in ("assert_firm", "one_of", "open_with_beds", "wet_share"):
        assert getattr(tenth, name) is getattr(eighth, name), name


# ------------------------------------------------------------------------------------ ground truth
@pytest.fixture(scope="module")
def root() -> Path:
    return sample_data()


def test_expected_heldout10_values_are_what_the_module_computes(root):
    from bench.ground_truth_heldout10 import heldout10 as compute_heldout10

    fresh = json.loads(json.dumps(compute_heldout10(root), ensure_ascii=False))
    assert fresh["heldout10"] == load_expected()["heldout10"]


def test_dins_values_recomputed_without_the_module(root, values):
    """The DINS figures again, with plain pandas filters and spatial joins."""
    eaton = read(root, EATON_FILE)
    kind, dmg = eaton.STRUCTURETYPE, eaton.DAMAGE
    e = values["eaton"]
    homes = kind.str.startswith("Single Family")
    assert int((homes & (dmg == DESTROYED)).sum()) == e["sfr_destroyed"] == 1853
    assert round(100 * (dmg == NONE).mean(), 1) == e["no_damage_pct"] == 47.4
    tall = eaton[kind == SFR_TALL]
    assert int((tall.DAMAGE == DESTROYED).sum()) == e["multi_story_sfr_destroyed"] == 264
    assert round(100 * (tall.DAMAGE == DESTROYED).mean(), 1) == e["multi_story_sfr_destroyed_pct"]
    low = eaton[kind == SFR_ONE]
    assert grade(low.DAMAGE).value_counts().to_dict() == e["one_story_sfr_by_grade"] and len(low) == e["one_story_sfr"]
    shops = eaton[kind.str.startswith("Commercial Building")]
    assert grade(shops.DAMAGE).value_counts().to_dict() == e["commercial_by_grade"] and len(shops) == e["commercial"]
    assert e["commercial"] == 61

    pal = read(root, PALISADES_FILE)
    kind, dmg = pal.STRUCTURETYPE, pal.DAMAGE
    p = values["palisades"]
    assert int((kind.str.startswith("Single Family") & (dmg == DESTROYED)).sum()) == p["sfr_destroyed"] == 5052
    assert int(((kind == SFR_ONE) & (dmg == DESTROYED)).sum()) == p["one_story_sfr_destroyed"] == 2322
    assert grade(dmg).value_counts().to_dict() == p["by_grade"] and len(pal) == p["inspected"] == 11988
    mobile = pal[kind.str.startswith("Mobile Home")]
    lost = mobile[mobile.DAMAGE == DESTROYED]
    assert lost.STRUCTURETYPE.value_counts().to_dict() == p["mobile_homes_destroyed_by_type"]
    assert len(lost) == p["mobile_homes_destroyed"] == 350
    assert round(100 * len(lost) / len(mobile), 1) == p["mobile_homes_destroyed_pct"] == 96.2
    schools = pal[kind == "School"]
    assert round(100 * (schools.DAMAGE == DESTROYED).mean(), 1) == p["schools_destroyed_pct"] == 51.0

    c = values["comparative"]
    for fire, dins in (("eaton", eaton), ("palisades", pal)):
        kind, dmg = dins.STRUCTURETYPE, dins.DAMAGE
        homes = kind.str.startswith("Single Family")
        assert int((dmg == DESTROYED).sum()) == c["destroyed"][fire], fire
        assert round(100 * (dmg == DESTROYED).mean(), 1) == c["destroyed_pct"][fire], fire
        assert int((homes & (dmg == DESTROYED)).sum()) == c["sfr_destroyed"][fire], fire
        assert int((homes & (dmg == NONE)).sum()) == c["sfr_no_damage"][fire], fire
        assert int(((kind == "School") & (dmg == DESTROYED)).sum()) == c["schools_destroyed"][fire], fire
        assert int(dmg.isin([AFFECTED, MINOR, MAJOR]).sum()) == c["damaged_not_destroyed"][fire], fire
        assert int(dmg.isin([MINOR, MAJOR]).sum()) == c["minor_or_major"][fire], fire
    assert c["sfr_destroyed_difference"] == 5052 - 1853
    assert (c["destroyed"]["eaton"], c["destroyed"]["palisades"]) == (2722, 6823)

    a = values["aoi"]
    west = eaton.sjoin(aoi_frame("west_altadena_area.geojson"), predicate="intersects")
    tall = west[west.STRUCTURETYPE == SFR_TALL]
    assert int((tall.DAMAGE == DESTROYED).sum()) == a["west_altadena_area"]["multi_story_sfr_destroyed"] == 57
    assert round(100 * (tall.DAMAGE == NONE).mean(), 1) == a["west_altadena_area"]["multi_story_sfr_no_damage_pct"]
    east = eaton.sjoin(aoi_frame("east_altadena_kinneloa.geojson"), predicate="intersects")
    assert int((east.DAMAGE == DESTROYED).sum()) == a["east_altadena_kinneloa"]["destroyed"] == 343
    village = pal.sjoin(aoi_frame("palisades_village_aoi.geojson"), predicate="intersects")
    schools = village[village.STRUCTURETYPE == "School"]
    k = a["palisades_village_aoi"]
    assert (
        (len(schools), int((schools.DAMAGE == DESTROYED).sum())) == (k["schools"], k["schools_destroyed"]) == (46, 19)
    )


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
        return near

    def nearest(area: shapely.Geometry, rows: gpd.GeoDataFrame, expected: dict) -> None:
        ranked = rows.assign(d=rows.distance(area)).sort_values("d")
        assert ranked.d.iloc[1] - ranked.d.iloc[0] >= 30
        assert [ranked.NAME.iloc[0]] == expected["names"]
        assert ranked.d.iloc[0] == pytest.approx(expected["distances_m"][ranked.NAME.iloc[0]], abs=0.1)

    e, p = values["eaton"], values["palisades"]
    nearest(perimeter, la, e["nearest_hospital"])
    assert e["nearest_hospital"]["names"] == ["AURORA LAS ENCINAS HOSPITAL"]
    near4 = within(perimeter, 4000, la)
    assert sorted(near4.NAME) == sorted(e["within_4km"]["names"]) and len(near4) == 3
    near5 = within(perimeter, 5000, la)
    assert (len(near5), int(near5.BEDS.sum())) == (e["within_5km"], e["beds_within_5km"]) == (7, 1274)
    assert len(within(perimeter, 10_000, la)) - len(near5) == e["between_5_and_10km"] == 7

    nearest(hull, la, p["nearest_hospital"])
    reach = within(hull, 5500, la)
    assert (len(reach), int(reach.BEDS.sum())) == (p["within_5500m"], p["beds_within_5500m"]) == (5, 1567)
    pads = within(hull, 10_000, la[la.HELIPAD == "Y"])
    assert sorted(pads.NAME) == sorted(p["helipad_within_10km"]["names"]) and len(pads) == 5

    c = values["comparative"]["hospitals_within_9km"]
    assert (len(within(perimeter, 9000, la)), len(within(hull, 9000, la))) == (c["eaton"], c["palisades"]) == (13, 14)

    a = values["aoi"]
    nearest(
        aoi_frame("east_altadena_kinneloa.geojson", 26911).geometry.iloc[0],
        la,
        a["east_altadena_kinneloa"]["nearest_hospital"],
    )
    village = within(aoi_frame("palisades_village_aoi.geojson", 26911).geometry.iloc[0], 4000, la)
    assert sorted(village.NAME) == sorted(a["palisades_village_aoi"]["hospitals_within_4km"]["names"])

    maui = hospitals[(hospitals.STATE == "HI") & (hospitals.COUNTY == "MAUI")].to_crs(32604)
    burn = read(root, "lahaina-2023/lahaina_burn_area.geojson", 32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    lahaina = values["lahaina"]
    nearest(burn_area, maui, lahaina["nearest_hospital"])
    assert int(maui.BEDS.sum()) == lahaina["beds"] == 247


def test_valencia_and_catarroja_values_recomputed_without_the_module(root, values):
    """Clips, buffers, joins and dissolves with GeoPandas for the flood's values."""
    flood = read(root, FLOOD_FILE, 25830)
    water = flood.union_all()
    grown, shrunk = water.buffer(30), water.buffer(-30)
    v = values["valencia"]
    health = read(root, HEALTH_FILE, 25830)

    def near(rows: gpd.GeoDataFrame, metres: float) -> list[str]:
        out = sorted(rows.equipamien[rows.intersects(water.buffer(metres))])
        for shift in (-30, 30):
            assert sorted(rows.equipamien[rows.intersects(water.buffer(metres + shift))]) == out
        return out

    wet = sorted(health.equipamien[health.intersects(shrunk)])
    assert wet == sorted(health.equipamien[health.intersects(grown)]) == sorted(v["inside_flood"]["names"])
    assert len(wet) == v["inside_flood"]["count"] == 4
    assert len(near(health[health.idsubclase == 13], 1200)) == v["centres_within_1200m"] == 8
    assert len(near(health, 1600)) == v["within_1600m"] == 24
    assert round(100 * 24 / len(health), 1) == v["within_1600m_pct"]
    far = sorted(set(health.equipamien) - set(near(health, 5000)))
    assert far == sorted(v["beyond_5km"]["names"]) and len(far) == 3
    dry = health[(health.idsubclase == 18) & ~health.intersects(water)]
    dry = dry.assign(d=dry.distance(water)).sort_values("d")
    assert dry.d.iloc[1] - dry.d.iloc[0] >= 30 and [dry.equipamien.iloc[0]] == v["nearest_dry_consultorio"]["names"]
    centres = health[health.equipamien.str.startswith("CENTRO DE SALUD")]
    centres = centres.assign(d=centres.distance(water)).sort_values("d")
    assert centres.d.iloc[-1] - centres.d.iloc[-2] >= 30
    assert [centres.equipamien.iloc[-1]] == v["farthest_centre"]["names"] == ["CENTRO DE SALUD SALVADOR ALLENDE"]
    south = health.sjoin(aoi_frame("valencia_south_area.geojson", 25830), predicate="intersects")
    dry_south = south[~south.intersects(water)]
    facilities = values["aoi"]["valencia_south_area"]["dry_facilities"]
    assert sorted(dry_south.equipamien) == sorted(facilities["names"]) and len(dry_south) == 3
    for name, d in zip(dry_south.equipamien, dry_south.distance(water), strict=True):
        assert d == pytest.approx(facilities["distances_m"][name], abs=0.1)

    sketch = aoi_frame("catarroja_east_sketch.geojson", 25830)
    k = values["aoi"]["catarroja_east_sketch"]
    flooded = gpd.clip(sketch, flood).area.sum()
    assert abs(flooded / 1e4 - k["flooded_ha"]) < 0.1
    assert abs(100 * flooded / sketch.area.sum() - k["flooded_pct"]) < 0.1

    c = values["catarroja"]
    points = read(root, OSM + "puntos.geojson", 25830)
    pharmacies = points[points.amenity == "pharmacy"]
    assert len(pharmacies) == c["pharmacies"] == 3
    assert not bool(pharmacies.intersects(grown).any()) and not c["pharmacies_any_flooded"]
    polygons = read(root, OSM + "poligonos.geojson", 25830)
    for tag, value, key in (
        ("amenity", "fire_station", "fire_station_flooded"),
        ("landuse", "cemetery", "cemetery_flooded"),
    ):
        rows = polygons[polygons[tag] == value]
        assert len(rows) == 1 and bool(rows.intersects(shrunk).all()) and c[key], key
    lines = read(root, OSM + "lineas.geojson", 25830)
    for tag, value, key in (
        ("waterway", "canal", "canal_km_in_flood"),
        ("railway", "rail", "rail_km_in_flood"),
        ("highway", "residential", "residential_km_in_flood"),
    ):
        assert abs(gpd.clip(lines[lines[tag] == value], flood).length.sum() / 1000 - c[key]) < 0.02, key
    assert abs(lines[lines.railway == "rail"].length.sum() / 1000 - c["rail_km"]) < 0.01
    ditches = lines[lines.waterway == "ditch"]
    assert abs(100 * gpd.clip(ditches, flood).length.sum() / ditches.length.sum() - c["ditch_pct_in_flood"]) < 0.1
    for tag, value, key in (("landuse", "orchard", "orchard_ha_in_flood"), ("leisure", "park", "park_ha_in_flood")):
        union = polygons[polygons[tag] == value].dissolve()
        assert abs(gpd.clip(union, flood).area.sum() / 1e4 - c[key]) <= 0.01 * c[key] + 0.05, key

    public = read(root, PLAN_FILE)
    damage = public.val_dany.map(eur)
    assert public.estado.value_counts().to_dict() == c["public_by_estado"] and len(public) == c["public"] == 20
    assert int((public.capa == "Centros educativos").sum()) == c["public_education"] == 10
    assert sorted(public.titulo[public.estado == "Finalizado"]) == c["public_finished"]["names"]
    assert [public.titulo[damage.idxmax()]] == c["public_largest_damage"]["names"]
    assert damage.max() == pytest.approx(c["public_largest_damage_eur"], abs=0.01)
    valued = public[public.val_dany.fillna("").str.strip() != ""]
    smallest = valued.val_dany.map(eur)
    assert [valued.titulo[smallest.idxmin()]] == c["public_smallest_valued"]["names"] == ["CEIP Jaume I"]
    assert smallest.min() == pytest.approx(c["public_smallest_valued_eur"], abs=0.01)
    cultural = damage[public.capa == "Centros culturales"].sum()
    assert cultural == pytest.approx(c["public_cultural_damage_eur"], abs=0.01)
    residencia = public[public.titulo.str.startswith("Residencia Francisco")].iloc[0]
    assert eur(residencia.val_dany) - eur(residencia.subv_apro) == pytest.approx(
        c["public_residencia_gap_eur"], abs=0.01
    )


def test_lahaina_values_recomputed_without_the_module(root, values):
    labels = read(root, "lahaina-2023/Maui_Wildfires_August_0.geojson", 32604)
    area = pd.Series(shapely.area(shapely.make_valid(labels.geometry.values)), index=labels.index)
    cls = labels["class"]
    lahaina = values["lahaina"]
    assert cls.value_counts().to_dict() == lahaina["labels_by_class"] and len(labels) == lahaina["labels"]
    assert int((cls == "Damaged Building").sum()) == lahaina["damaged"] == 35
    assert area[cls == "Damaged Building"].sum() == pytest.approx(lahaina["damaged_total_m2"], abs=0.1)
    assert area[cls == "Building"].mean() == pytest.approx(lahaina["intact_mean_m2"], abs=0.1)


# -------------------------------------------------------------------------------------- apartness
def test_every_question_is_apart_from_the_bench_questions(heldout10):
    others = bench_questions(TASKS_FILE) + bench_questions(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += bench_questions(split)
    assert len(others) > 500
    assert not too_close(questions(heldout10), others)


def test_every_question_is_apart_from_the_reading_bank(heldout10):
    assert not too_close(questions(heldout10), reading_bank_questions())


def test_the_questions_are_apart_from_each_other(heldout10):
    mine = questions(heldout10)
    assert not [close for i in range(len(mine)) for close in too_close(mine[i + 1 :], [mine[i]])]
