"""The thirteenth held-out question split (``bench/heldout13.json``): 61 questions written without looking at how
GeoFaham reads a question (nothing under ``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not
run on them), in four languages, worded as coordinators, analysts and humanitarian workers write (about two thirds ask
one figure or one list, the rest two or more things; an email, context sentences, terse notes, idioms, exclusions and
negations, grade subsets said by description, shares of subsets, thresholds in words and digits, three typos, named
places, comparisons), with few data field names or key=value tags, each apart from every question the product may have
been shaped on (the bench's tasks, its paraphrase suite, the first twelve held-out splits and the planner's reading
bank), with expected values that ``bench/ground_truth_heldout13.py`` computes from the sample data by code of its own
(no GeoFaham import). The checks the held-out splits share (expected-value kinds, the sample data, the reading bank's
questions, the similarity measure) come from the second split's tests and ``tests/heldout_shared.py``."""

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

HELDOUT13_FILE = BENCH_DIR / "heldout13.json"
EARLIER_SPLITS = earlier_splits(13)
DESTROYED, NONE, AFFECTED = "Destroyed (>50%)", "No Damage", "Affected (1-9%)"
HOUSES = ["Single Family Residence Single Story", "Single Family Residence Multi Story"]
FLATS = ["Multi Family Residence Single Story", "Multi Family Residence Multi Story"]
SHOPS = ["Commercial Building Single Story", "Commercial Building Multi Story"]
EATON_FILE = "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson"
PALISADES_FILE = "palisades-2025/DINS_2025_Palisades_Public_View.geojson"
PERIMETER_FILE = "eaton-2025/eaton_adjusted_fire_perimeter.geojson"
HOSPITALS_FILE = "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson"
FLOOD_FILE = "valencia-2024/emsr773_observed_flood_merged.geojson"
AOI03_FILE = "valencia-2024/emsr773_aoi03_extent.geojson"
HEALTH_FILE = "valencia-2024/valencia_city_health_facilities.geojson"
PLAN_FILE = "valencia-2024/catarroja_public_buildings_dana.geojson"
OSM = "valencia-2024/osm-catarroja/"
#: the turns whose honest answer is a short breakdown: two to four figures, each told apart by its label
SHORT_BREAKDOWNS = (
    "ho13_eaton_one_storey_flats_grades",
    "ho13_aoi_east_schools",
    "ho13_aoi_village_commercial_multi_grades",
    "ho13_fr_pal_infrastructure_grades",
    "ho13_pt_pal_apartamentos_terreos",
    "ho13_cmp_schools_destroyed_pct",
    "ho13_cmp_infrastructure_destroyed",
    "ho13_cmp_affected_only",
    "ho13_cmp_hospitals_12km",
    "ho13_es_cmp_comercios_destruidos",
    "ho13_fr_cmp_autocaravanes",
    "ho13_fr_cmp_plain_pied_pct",
)
#: one figure per fire: Eaton's, then the Palisades'
PER_FIRE = (
    "ho13_cmp_schools_destroyed_pct",
    "ho13_cmp_infrastructure_destroyed",
    "ho13_cmp_affected_only",
    "ho13_cmp_hospitals_12km",
    "ho13_es_cmp_comercios_destruidos",
    "ho13_fr_cmp_autocaravanes",
    "ho13_fr_cmp_plain_pied_pct",
)
#: thresholds said in words: task -> (the words, the distance in metres the task states)
WORDED_THRESHOLDS = {
    "ho13_eaton_for_profit_7km": ("seven kilometres", 7000),
    "ho13_pal_helipad_mean_beds": ("six kilometres", 6000),
    "ho13_valencia_peset_1km": ("within a kilometre", 1000),
    "ho13_es_valencia_centros_salud_1500": ("kilómetro y medio", 1500),
    "ho13_es_valencia_consultorios_secos_900": ("novecientos metros", 900),
    "ho13_es_plan_lejos_150": ("ciento cincuenta metros", 150),
    "ho13_fr_pal_militaire_10km": ("dix kilomètres", 10_000),
    "ho13_fr_eaton_moins_de_lits_5km": ("cinq kilomètres", 5000),
    "ho13_pt_eaton_sem_heliporto_9km": ("nove quilómetros", 9000),
}
DISTANCE_IN_DIGITS = re.compile(
    r"\d+(?:[.,]\d+)?\s*(?:m|km|metres|meters|kilometres|kilómetros|kilomètres|quilómetros)\b"
)
#: data field names and key=value tags a question may write (people rarely do): a few questions only
FIELD_WORDS = re.compile(
    r"\b[a-z_]+=[a-z_]+\b|\b(?:STRUCTURETYPE|DAMAGE|OWNER|TYPE|HELIPAD|TRAUMA|BEDS|STATUS|CITY|idsubclase|val_dany|"
    r"subv_apro|capa|estado|titulo|equipamien)\b"
)
#: the words of three typos, kept on purpose (people type fast)
TYPOS = {
    "ho13_cmp_infrastructure_destroyed": "infrastucture",
    "ho13_maui_mean_km": "distnace",
    "ho13_catarroja_building_footprint_ha": "footprnts",
}


@pytest.fixture(scope="module")
def heldout13() -> list[TaskSpec]:
    return load_tasks(HELDOUT13_FILE)


@pytest.fixture(scope="module")
def values() -> dict:
    return load_expected()["heldout13"]


# ---------------------------------------------------------------------------------------- the file
def test_every_task_loads_in_the_heldout_split(heldout13):
    assert_split_loads(heldout13, 13)


def test_personas_categories_and_plain_questions_are_varied(heldout13):
    personas = Counter(t.persona for t in heldout13)
    assert len(personas) == 5 and min(personas.values()) >= 8, personas
    categories = Counter(t.category for t in heldout13)
    assert {"poi_impact", "building_damage", "clustering_aggregation", "comparative", "infrastructure"} <= set(
        categories
    )
    assert {"land_cover", "flood"} <= set(categories) and categories["comparative"] >= 8, categories
    simple = [t for t in heldout13 if t.difficulty == "simple"]
    assert len(simple) >= len(heldout13) // 2  # most are plain, everyday wordings
    assert all(len(t.question) <= 140 for t in simple if t.language == "en"), "a simple question said simply"


def test_about_two_thirds_ask_one_figure_or_one_list(heldout13):
    """One figure, one list or one breakdown (a total beside its groups) for about two thirds; two or more things for
    the rest."""
    several = [t.id for t in heldout13 if len([e for e in t.expectations if e.kind != "count_by"]) > 1]
    breakdowns = [t.id for t in heldout13 if any(e.kind == "count_by" for e in t.expectations)]
    assert 18 <= len(several) <= 24, several
    assert not set(several) & set(breakdowns)
    assert 37 <= len(heldout13) - len(several) <= 43


def test_few_questions_write_field_names_or_tags(heldout13):
    """People rarely write a layer's field names or OSM key=value tags: a few questions do, most do not."""
    with_fields = [t.id for t in heldout13 if FIELD_WORDS.search(t.question)]
    assert 1 <= len(with_fields) <= 4, with_fields


def test_three_typos_are_kept(heldout13):
    by_id = {t.id: t for t in heldout13}
    for task_id, word in TYPOS.items():
        assert word in by_id[task_id].question, task_id


def test_every_expectation_points_into_the_heldout13_values(heldout13):
    expected = load_expected()
    for task in heldout13:
        for e in task.all_expectations():
            assert e.ref is not None and e.ref.startswith("heldout13."), (task.id, e.id)
            assert e.description.strip(), (task.id, e.id)
            assert VALUE_KINDS[e.kind](e.resolve(expected)), (task.id, e.id, e.resolve(expected))


def test_the_split_asks_every_kind_of_question(heldout13):
    """Counts, shares, breakdowns, names, distances, yes/no, areas, lengths, sums, maxima, a minimum, means and a
    difference; thresholds in metres and kilometres, all in metric units."""
    kinds = Counter(e.kind for t in heldout13 for e in t.expectations)
    assert all(kinds[k] >= 2 for k in ("count", "value", "names", "distance", "boolean")), kinds
    assert kinds["count_by"] >= 5, kinds
    units = {e.unit for t in heldout13 for e in t.expectations}
    assert {"%", "m", "km", "m2", "km2", "ha", "EUR"} <= units
    measures = Counter(e.measure for t in heldout13 for e in t.expectations)
    assert {"sum", "max", "min", "mean", "difference", "share", "area", "length", "distance"} <= set(measures)
    assert measures["mean"] >= 3 and measures["sum"] >= 5 and measures["max"] >= 2, measures
    assert {t.aoi.kind for t in heldout13} == {"damage", "hazard", "layer"}
    assert sum(t.buffer_m is not None for t in heldout13) >= 10  # within / beyond stated distances
    words = " ".join(t.question for t in heldout13)
    for unit in ("miles", "millas", "feet", "acres", "milhas", "pieds", "yards"):  # every figure is asked in metric
        assert not re.search(rf"\b{unit}\b", words), unit
    assert all(e.in_answer for t in heldout13 for e in t.expectations if e.kind != "count_by")


def test_every_dataset_of_the_earlier_splits_is_asked_about(heldout13):
    sources = {s for t in heldout13 for s in t.required_sources}
    for source in (
        "layer:eaton_dins",
        "layer:palisades_dins",
        "layer:eaton_perimeter",
        "layer:palisades_destroyed_hull|layer:palisades_dins",
        "layer:la_maui_hospitals",
        "layer:lahaina_burn",
        "file:Maui_Wildfires_August_0.geojson",
        "layer:valencia_flood",
        "layer:valencia_health",
        "osm:catarroja_osm|osm",
        "file:catarroja_public_buildings_dana.geojson",
        "file:emsr773_aoi03_extent.geojson",
    ):
        assert source in sources, source
    topics = Counter(t.id.split("_")[2] if t.language != "en" else t.id.split("_")[1] for t in heldout13)
    assert max(topics.values()) <= 12, topics  # no one topic dominates


def test_thresholds_said_in_words_are_the_stated_distances(heldout13):
    by_id = {t.id: t for t in heldout13}
    for task_id, (words, metres) in WORDED_THRESHOLDS.items():
        task = by_id[task_id]
        assert words in task.question and task.buffer_m == metres, task_id
        assert not DISTANCE_IN_DIGITS.search(task.question), task_id  # the distance is said in words only
    for task_id, digits, metres in (
        ("ho13_pal_state_run_10km", "10 km", 10_000),
        ("ho13_cmp_hospitals_12km", "12 km", 12_000),
    ):
        assert digits in by_id[task_id].question and by_id[task_id].buffer_m == metres, task_id


def test_short_breakdowns_are_two_to_four_labelled_figures(heldout13):
    """A short breakdown's figures are told apart by their labels: the groups of one count_by (two to four of them,
    beside an unlabelled total), or two to four counts or values with an event or a group each."""
    expected = load_expected()
    by_id = {t.id: t for t in heldout13}
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


def test_breakdowns_add_up_to_their_totals(heldout13):
    """The per-group tallies sum to the total asked beside them."""
    expected = load_expected()
    with_groups = 0
    for task in heldout13:
        by = [e for e in task.expectations if e.kind == "count_by"]
        if by:
            with_groups += 1
            assert task.expectations[0].kind == "count" and not task.expectations[0].labelled, task.id
            assert sum(by[0].resolve(expected).values()) == task.expectations[0].resolve(expected), task.id
    assert with_groups >= 5


def test_several_figures_carry_their_labels(heldout13):
    """Events, relations and measures label the figures a turn asks for together."""
    by_id = {t.id: t for t in heldout13}
    for task_id in PER_FIRE:
        assert [e.events for e in by_id[task_id].expectations] == [[11], [12, 13, 14]], task_id
    for task_id in ("ho13_aoi_sketch_industrial", "ho13_pt_aoi_sketch_terciarias"):
        assert [e.relation for e in by_id[task_id].expectations] == ["all", "inside"], task_id
    assert [e.relation for e in by_id["ho13_es_plan_lejos_150"].expectations] == ["outside", None]
    assert [e.measure for e in by_id["ho13_es_plan_lejos_150"].expectations] == [None, "sum"]
    for task_id in ("ho13_pal_state_run_10km", "ho13_pt_eaton_sem_heliporto_9km"):
        assert [e.measure for e in by_id[task_id].expectations] == [None, "sum"], task_id
    for task_id in ("ho13_es_plan_sociosanitario_mayor", "ho13_fr_plan_educatif_max"):
        assert [e.kind for e in by_id[task_id].expectations] == ["names", "value"], task_id
        assert [e.measure for e in by_id[task_id].expectations] == [None, "max"], task_id
    assert [e.kind for e in by_id["ho13_fr_eaton_moins_de_lits_5km"].expectations] == ["names", "value"]
    assert [e.measure for e in by_id["ho13_fr_eaton_moins_de_lits_5km"].expectations] == [None, "min"]
    assert [e.measure for e in by_id["ho13_catarroja_rambleta"].expectations] == ["length", "share"]
    assert [e.measure for e in by_id["ho13_aoi_south_flooded"].expectations] == ["area", "share"]
    for task_id in ("ho13_valencia_farthest_hospital", "ho13_pt_eaton_grande_mais_proximo"):
        assert [e.kind for e in by_id[task_id].expectations] == ["names", "distance"], task_id
    assert [e.kind for e in by_id["ho13_aoi_west_motor_homes"].expectations] == ["boolean", "count"]
    assert [e.kind for e in by_id["ho13_cmp_psych_nearest"].expectations] == ["names", "names"]
    assert [e.measure for e in by_id["ho13_plan_museum_gap"].expectations] == ["difference"]


def test_aoi_files_are_the_ones_the_runner_writes(heldout13):
    with_files = [t for t in heldout13 if t.input_files]
    assert len(with_files) >= 8
    assert {name for t in with_files for name in t.input_files} == set(AOI_FILES)
    for task in with_files:
        assert all(name in AOI_FILES for name in task.input_files), task.id
        assert all(name in task.question for name in task.input_files), task.id  # the question names its area
        assert task.aoi.kind == "layer" and task.aoi.layers == task.input_files, task.id


def test_the_cli_and_the_kept_runs_know_the_split():
    from bench.cli import build_parser
    from bench.runs import SPLIT_FILES, split_task_ids

    args = build_parser().parse_args(["tasks", "--tasks-file", "heldout13"])
    assert args.tasks_file == HELDOUT13_FILE
    args = build_parser().parse_args(["run", "--tasks-file", "heldout13", "--offline"])
    assert args.tasks_file == HELDOUT13_FILE
    assert SPLIT_FILES["heldout13"] == HELDOUT13_FILE.name
    assert len(split_task_ids("heldout13") or ()) == 61


def test_the_ground_truth_reuses_the_earlier_splits_helpers():
    """Reading, projecting and tabulating are the first split's code, the threshold guard and the area and length
    helpers the third split's, the Palisades hull the fourth split's, the AOI edge guard the sixth split's, the
    'farthest is apart' guard the seventh split's, the 'firmly inside or outside' guard and the small helpers the
    eighth split's, the two-decimal hectares the ninth split's, the one-nearest helper the tenth split's, the
    'largest' and 'smallest' guards the eleventh split's, and the kilometre rounding the twelfth split's."""
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
    import bench.ground_truth_heldout13 as thirteenth

    for name in ("Layers", "geoms", "touching", "metres", "ranked", "listing", "tally", "pct", "euros", "hospitals"):
        assert getattr(thirteenth, name) is getattr(first, name), name
    for name in ("assert_clear", "clipped_km", "hectares", "km2", "projected_aoi"):
        assert getattr(thirteenth, name) is getattr(third, name), name
    assert thirteenth.palisades_hull is fourth.palisades_hull
    assert thirteenth.assert_off_edge is sixth.assert_off_edge
    assert thirteenth.farthest_apart is seventh.farthest_apart
    assert thirteenth.farthest_apart is seventh.farthest_apart
    for name in ("assert_firm", "one_of", "open_with_beds", "wet_share"):
        assert getattr(thirteenth, name) is getattr(eighth, name), name
    assert thirteenth.hectares2 is ninth.hectares2
    assert thirteenth.nearest is tenth.nearest
    for name in ("largest", "smallest"):
        assert getattr(thirteenth, name) is getattr(eleventh, name), name
    assert thirteenth.km is twelfth.km


def test_one_row_refuses_a_missing_or_repeated_name():
    from bench.ground_truth_heldout13 import one_row

    frame = pd.DataFrame({"NAME": ["A", "B", "B"]})
    assert one_row(frame, "NAME", "A").tolist() == [True, False, False]
    for name in ("B", "C"):
        with pytest.raises(AssertionError):
            one_row(frame, "NAME", name)


# ------------------------------------------------------------------------------------ ground truth
@pytest.fixture(scope="module")
def root() -> Path:
    return sample_data()


def test_expected_heldout13_values_are_what_the_module_computes(root):
    from bench.ground_truth_heldout13 import heldout13 as compute_heldout13

    fresh = json.loads(json.dumps(compute_heldout13(root), ensure_ascii=False))
    assert fresh["heldout13"] == load_expected()["heldout13"]


def test_dins_values_recomputed_without_the_module(root, values):
    """The DINS figures again, with plain pandas filters, crosstabs and spatial joins in WGS84."""
    eaton = read(root, EATON_FILE)
    pal = read(root, PALISADES_FILE)
    e, p, c = values["eaton"], values["palisades"], values["comparative"]

    table = pd.crosstab(eaton.STRUCTURETYPE, eaton.DAMAGE)
    assert table.loc["Single Family Residence Multi Story", DESTROYED] == e["tall_houses_destroyed"] == 264
    assert int(table.loc[HOUSES, AFFECTED].sum()) == e["houses_affected"] == 205
    flats = eaton[FLATS[0] == eaton.STRUCTURETYPE]
    assert grade(flats.DAMAGE).value_counts().to_dict() == e["one_storey_flats_by_grade"]
    assert len(flats) == e["one_storey_flats"] == 15

    singles = pal[pal.STRUCTURETYPE == "Mobile Home Single Wide"]
    assert int((singles.DAMAGE != DESTROYED).sum()) == p["single_wides_standing"] == 8
    apartments = pal[pal.STRUCTURETYPE.isin(FLATS)]
    assert round(100 * (apartments.DAMAGE == DESTROYED).mean(), 1) == p["apartments_destroyed_pct"] == 32.2
    low = pal[FLATS[0] == pal.STRUCTURETYPE]
    assert grade(low.DAMAGE).value_counts().to_dict() == p["one_storey_flats_by_grade"]
    assert len(low) == p["one_storey_flats"] == 27
    works = pal[pal.STRUCTURETYPE == "Infrastructure"]
    assert grade(works.DAMAGE).value_counts().to_dict() == p["infrastructure_by_grade"]
    assert len(works) == p["infrastructure"] == 61

    for fire, dins in (("eaton", eaton), ("palisades", pal)):
        lost = dins[dins.DAMAGE == DESTROYED]
        schools = dins[dins.STRUCTURETYPE == "School"]
        houses = dins[HOUSES[0] == dins.STRUCTURETYPE]
        assert round(100 * (schools.DAMAGE == DESTROYED).mean(), 1) == c["schools_destroyed_pct"][fire], fire
        assert int((lost.STRUCTURETYPE == "Infrastructure").sum()) == c["infrastructure_destroyed"][fire], fire
        assert int((dins.DAMAGE == AFFECTED).sum()) == c["affected"][fire], fire
        assert int(lost.STRUCTURETYPE.isin(SHOPS).sum()) == c["commercial_destroyed"][fire], fire
        assert int((lost.STRUCTURETYPE == "Motor Home").sum()) == c["motor_homes_destroyed"][fire], fire
        assert round(100 * (houses.DAMAGE == DESTROYED).mean(), 1) == c["one_storey_houses_destroyed_pct"][fire]
    assert (c["commercial_destroyed"]["eaton"], c["commercial_destroyed"]["palisades"]) == (26, 102)
    assert (c["one_storey_houses_destroyed_pct"]["eaton"], c["one_storey_houses_destroyed_pct"]["palisades"]) == (
        51.0,
        63.2,
    )

    a = values["aoi"]
    west = eaton.sjoin(aoi_frame("west_altadena_area.geojson"), predicate="intersects")
    motor = west[west.STRUCTURETYPE == "Motor Home"]
    w = a["west_altadena_area"]
    assert len(motor) == w["motor_homes"] == 3 and (motor.DAMAGE == DESTROYED).all()
    assert not w["motor_homes_any_standing"]
    tall = west[HOUSES[1] == west.STRUCTURETYPE]
    assert round(100 * (tall.DAMAGE == DESTROYED).mean(), 1) == w["tall_houses_destroyed_pct"] == 55.9
    east = eaton.sjoin(aoi_frame("east_altadena_kinneloa.geojson"), predicate="intersects")
    k = a["east_altadena_kinneloa"]
    schools = east[east.STRUCTURETYPE == "School"]
    assert grade(schools.DAMAGE).value_counts().to_dict() == k["schools_by_grade"] == {"destroyed": 7, "none": 9}
    assert len(schools) == k["schools"]
    sheds = east[east.STRUCTURETYPE == "Utility Misc Structure"]
    assert round(100 * (sheds.DAMAGE == DESTROYED).mean(), 1) == k["outbuildings_destroyed_pct"]
    village = pal.sjoin(aoi_frame("palisades_village_aoi.geojson"), predicate="intersects")
    v = a["palisades_village_aoi"]
    shops = village[SHOPS[1] == village.STRUCTURETYPE]
    assert grade(shops.DAMAGE).value_counts().to_dict() == v["multi_storey_commercial_by_grade"]
    assert len(shops) == v["multi_storey_commercial"] == 30
    assert int((village.STRUCTURETYPE == "Mobile Home Triple Wide").sum()) == v["triple_wides"] == 13
    village_schools = village[village.STRUCTURETYPE == "School"]
    assert round(100 * (village_schools.DAMAGE == DESTROYED).mean(), 1) == v["schools_destroyed_pct"] == 41.3


def test_hospital_values_recomputed_without_the_module(root, values):
    """Buffers and joins instead of distances to the polygon; each threshold gives the same hospitals 30 m either
    side of it (no hospital is near a threshold)."""
    hospitals = read(root, HOSPITALS_FILE)
    la = hospitals[(hospitals.STATE == "CA") & (hospitals.COUNTY == "LOS ANGELES")].to_crs(26911)
    perimeter = read(root, PERIMETER_FILE, 26911).union_all()
    pal = read(root, PALISADES_FILE, 26911)
    hull = pal[pal.DAMAGE == DESTROYED].union_all().convex_hull

    def within(area: shapely.Geometry, metres: float, rows: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        near = rows[rows.intersects(area.buffer(metres))]
        assert sorted(near.NAME) == sorted(rows.NAME[rows.intersects(area.buffer(metres - 30))])
        assert sorted(near.NAME) == sorted(rows.NAME[rows.intersects(area.buffer(metres + 30))])
        assert bool((near.STATUS == "OPEN").all()) and bool((near.BEDS > 0).all())
        return near

    def first(rows: gpd.GeoDataFrame, area: shapely.Geometry) -> tuple[str, float]:
        ranked = rows.assign(d=rows.distance(area)).sort_values("d")
        assert ranked.d.iloc[1] - ranked.d.iloc[0] >= 30
        return ranked.NAME.iloc[0], ranked.d.iloc[0]

    e, p, c = values["eaton"], values["palisades"], values["comparative"]
    profit = within(perimeter, 7000, la[la.OWNER == "PROPRIETARY"])
    assert sorted(profit.NAME) == sorted(e["for_profit_within_7km"]["names"]) and len(profit) == 4
    no_pad = within(perimeter, 9000, la[la.HELIPAD == "N"])
    assert (len(no_pad), int(no_pad.BEDS.sum())) == (e["no_helipad_within_9km"], e["no_helipad_beds_within_9km"])
    assert (len(no_pad), int(no_pad.BEDS.sum())) == (7, 1058)
    lac = la[la.NAME == "LAC USC MEDICAL CENTER"]
    assert lac.distance(perimeter).iloc[0] / 1000 == pytest.approx(e["lac_usc_km"], abs=0.01)
    pasadena = la[la.CITY == "PASADENA"]
    assert (pasadena.STATUS == "OPEN").all() and int(pasadena.BEDS.sum()) == e["pasadena_beds"] == 737
    five = within(perimeter, 5000, la).sort_values("BEDS")
    assert five.BEDS.iloc[0] < five.BEDS.iloc[1] and [five.NAME.iloc[0]] == e["fewest_beds_within_5km"]["names"]
    assert int(five.BEDS.iloc[0]) == e["fewest_beds_within_5km_beds"] == 24 and len(five) == 7
    big, metres = first(la[la.BEDS > 300], perimeter)
    assert [big] == e["nearest_over_300_beds"]["names"] == ["METHODIST HOSPITAL OF SOUTHERN CALIFORNIA"]
    assert metres == pytest.approx(e["nearest_over_300_beds"]["distances_m"][big], abs=0.1)

    state = within(hull, 10_000, la[la.OWNER == "GOVERNMENT - STATE"])
    assert (len(state), int(state.BEDS.sum())) == (p["state_run_within_10km"], p["state_run_beds_within_10km"])
    assert (len(state), int(state.BEDS.sum())) == (3, 801)
    pads = within(hull, 6000, la[la.HELIPAD == "Y"])
    assert pads.BEDS.mean() == pytest.approx(p["helipad_mean_beds_within_6km"], abs=0.05) and len(pads) == 3
    military = within(hull, 10_000, la[la.TYPE == "MILITARY"])
    assert sorted(military.NAME) == p["military_within_10km"]["names"] == ["WEST LOS ANGELES VA MEDICAL CENTER"]
    cedars = la[la.NAME == "CEDAR SINAI MEDICAL CENTER"]
    assert cedars.distance(hull).iloc[0] / 1000 == pytest.approx(p["cedars_sinai_km"], abs=0.01)

    for fire, area in (("eaton", perimeter), ("palisades", hull)):
        assert len(within(area, 12_000, la)) == c["hospitals_within_12km"][fire], fire
        name, _ = first(la[la.TYPE == "PSYCHIATRIC"], area)
        assert [name] == c["nearest_psychiatric"][fire]["names"], fire
    assert (c["hospitals_within_12km"]["eaton"], c["hospitals_within_12km"]["palisades"]) == (18, 24)

    maui = hospitals[(hospitals.STATE == "HI") & (hospitals.COUNTY == "MAUI")].to_crs(32604)
    burn = read(root, "lahaina-2023/lahaina_burn_area.geojson", 32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    lahaina = values["lahaina"]
    assert maui.distance(burn_area).mean() / 1000 == pytest.approx(lahaina["hospitals_mean_km"], abs=0.01)
    lanai = maui[maui.NAME == "LANAI COMMUNITY HOSPITAL"]
    assert lanai.distance(burn_area).iloc[0] / 1000 == pytest.approx(lahaina["lanai_km"], abs=0.01)


def test_valencia_values_recomputed_without_the_module(root, values):
    """Buffers, joins and clips for the València facilities, the AOI03 rectangle and the south AOI file (the same
    facilities 30 m either side of each threshold)."""
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

    centres = health[health.idsubclase == 13]
    assert len(near(centres, 1500)) == v["centres_within_1500m"] == 9
    assert round(100 * 9 / len(centres), 1) == v["centres_within_1500m_pct"] == 34.6
    consultorios = health[health.equipamien.str.startswith("CONSULTORIO")]
    dry = consultorios[~consultorios.intersects(water.buffer(30))]
    assert len(near(dry, 900)) == v["dry_consultorios_within_900m"] == 4
    hospitals = health[health.idsubclase == 14].assign(d=lambda f: f.distance(water)).sort_values("d")
    assert len(hospitals) == 5 and hospitals.d.iloc[-1] - hospitals.d.iloc[-2] >= 30
    farthest = hospitals.equipamien.iloc[-1]
    assert [farthest] == v["farthest_hospital"]["names"] == ["HOSPITAL CLINICO UNIVERSITARIO"]
    assert hospitals.d.iloc[-1] == pytest.approx(v["farthest_hospital"]["distances_m"][farthest], abs=0.1)
    peset = health[health.equipamien == "HOSPITAL DOCTOR PESET"]
    assert not bool(peset.intersects(water.buffer(1000 + 30)).any()) and not v["peset_within_1km"]
    assert peset.distance(water).iloc[0] == pytest.approx(v["peset_m"], abs=0.1)
    specialty = health.equipamien.str.startswith("CENTRO DE ESPECIALIDADES")
    assert int(specialty.sum()) == 4 and d[specialty].mean() == pytest.approx(v["specialty_mean_m"], abs=0.1)
    rectangle = read(root, AOI03_FILE)
    inside = read(root, HEALTH_FILE).sjoin(rectangle[["geometry"]], predicate="intersects")
    chosen = inside[inside.equipamien.str.startswith("CONSULTORIO")]
    assert sorted(chosen.equipamien) == v["consultorios_in_aoi03"]["names"] and len(chosen) == 2

    s = values["aoi"]["valencia_south_area"]
    south = aoi_frame("valencia_south_area.geojson", 25830)
    wet = gpd.clip(flood, south).area.sum()
    assert wet / 1e6 == pytest.approx(s["flooded_km2"], abs=0.01)
    assert round(100 * wet / south.area.iloc[0], 1) == s["flooded_pct"] == 53.2
    in_south = health.sjoin(south, predicate="intersects")
    assert len(in_south) == s["facilities"] == 6
    assert bool((in_south.intersects(water.buffer(30)) == in_south.intersects(water.buffer(-30))).all())
    assert round(100 * in_south.intersects(water).mean(), 1) == s["flooded_facilities_pct"] == 50.0


def test_catarroja_values_recomputed_without_the_module(root, values):
    """Clips, dissolves and joins with GeoPandas for the Catarroja extract and the sketch."""
    flood = read(root, FLOOD_FILE, 25830)
    water = flood.union_all()
    grown, shrunk = water.buffer(30), water.buffer(-30)
    c = values["catarroja"]
    lines = read(root, OSM + "lineas.geojson", 25830)
    rambleta = lines[lines["name"] == "Avinguda de la Rambleta"]
    wet = gpd.clip(rambleta, flood).length.sum()
    assert abs(wet / 1000 - c["rambleta_km_in_flood"]) < 0.01
    assert abs(100 * wet / rambleta.length.sum() - c["rambleta_pct_in_flood"]) < 0.1
    for name, key in (
        ("Camí del Port", "cami_port_km_in_flood"),
        ("Pista de Silla", "pista_silla_km_in_flood"),
        ("Séquia del Port", "sequia_port_km_in_flood"),
    ):
        assert abs(gpd.clip(lines[lines["name"] == name], flood).length.sum() / 1000 - c[key]) < 0.01, name
    distributor = lines[lines["name"] == "Distribuïdor Sud"]
    assert len(distributor) == 4 and not bool(distributor.intersects(grown).any()) and not c["distribuidor_flooded"]

    points = read(root, OSM + "puntos.geojson", 25830)
    polygons = read(root, OSM + "poligonos.geojson", 25830)
    villa = points[points.historic == "archaeological_site"]
    assert villa["name"].tolist() == ["Villa romana de L'Hort de Pepica"]
    assert bool(villa.intersects(shrunk).all()) and c["roman_villa_flooded"]
    buildings = polygons[polygons.building.notna()].dissolve()
    assert abs(gpd.clip(buildings, flood).area.sum() / 1e4 - c["building_ha_in_flood"]) < 0.01
    market = polygons[polygons.amenity == "marketplace"]
    assert market.distance(water).iloc[0] == pytest.approx(c["market_m"], abs=0.1)
    manor = polygons[polygons.historic == "manor"]
    assert manor["name"].iloc[0] == "Palau de Vivanco"
    assert manor.distance(water).iloc[0] == pytest.approx(c["vivanco_m"], abs=0.1)
    nursery = polygons[polygons.amenity == "childcare"]
    assert bool(nursery.intersects(shrunk).all()) and c["nursery_flooded"]

    sketch = aoi_frame("catarroja_east_sketch.geojson", 25830)
    k = values["aoi"]["catarroja_east_sketch"]
    industry = gpd.clip(polygons[polygons.landuse == "industrial"].dissolve(), sketch)
    assert abs(industry.area.sum() / 1e4 - k["industrial_ha"]) < 0.05
    assert abs(gpd.clip(industry, flood).area.sum() / 1e4 - k["industrial_ha_in_flood"]) < 0.05
    tertiary = gpd.clip(lines[lines.highway == "tertiary"], sketch)
    assert abs(tertiary.length.sum() / 1000 - k["tertiary_km"]) < 0.01
    assert abs(gpd.clip(tertiary, flood).length.sum() / 1000 - k["tertiary_km_in_flood"]) < 0.01


def test_recovery_plan_values_recomputed_without_the_module(root, values):
    plan = values["plan"]
    public = read(root, PLAN_FILE, 25830)
    damage, subsidy = public.val_dany.map(eur), public.subv_apro.map(eur)
    tac = public.titulo == "TAC Teatro Auditorio Catarroja"
    assert round(100 * damage[tac].sum() / damage.sum(), 1) == plan["tac_pct_of_damage"] == 52.8
    museum = public.titulo == "Museo Antonia Mir"
    assert float(damage[museum].iloc[0] - subsidy[museum].iloc[0]) == pytest.approx(plan["museum_gap_eur"], abs=0.01)
    water = read(root, FLOOD_FILE, 25830).union_all()
    far = ~public.intersects(water.buffer(150))
    assert bool((far == ~public.intersects(water.buffer(120))).all())
    assert bool((far == ~public.intersects(water.buffer(180))).all())
    assert int(far.sum()) == plan["beyond_150m"] == 6
    assert damage[far].sum() == pytest.approx(plan["beyond_150m_damage_eur"], abs=0.01)
    for capa, key in (("Centros sociosanitarios", "social_costliest"), ("Centros educativos", "education_costliest")):
        ranked = damage[public.capa == capa].sort_values(ascending=False)
        assert ranked.iloc[0] > ranked.iloc[1], capa
        assert [public.titulo[ranked.index[0]]] == plan[key]["names"], capa
        assert ranked.iloc[0] == pytest.approx(plan[f"{key}_eur"], abs=0.01), capa
    assert plan["education_costliest"]["names"] == ["EPA Esteban Paluzié"]
    assert damage[public.estado == "Prevista"].sum() == pytest.approx(plan["planned_damage_eur"], abs=0.01)


def test_lahaina_values_recomputed_without_the_module(root, values):
    labels = read(root, "lahaina-2023/Maui_Wildfires_August_0.geojson", 32604)
    area = pd.Series(shapely.area(shapely.make_valid(labels.geometry.values)), index=labels.index)
    intact = area[labels["class"] == "Building"]
    assert len(intact) == 44 and intact.sum() == pytest.approx(values["lahaina"]["intact_m2"], abs=0.1)
    # a union would differ only where outlines overlap: the sum is the asked figure, each outline on its own
    union = shapely.area(shapely.union_all(shapely.make_valid(labels.geometry.values[labels["class"] == "Building"])))
    assert union <= intact.sum() + 0.1


# -------------------------------------------------------------------------------------- apartness
def test_every_question_is_apart_from_the_bench_questions(heldout13):
    others = bench_questions(TASKS_FILE) + bench_questions(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += bench_questions(split)
    assert len(others) > 500
    assert not too_close(questions(heldout13), others)


def test_every_question_is_apart_from_the_reading_bank(heldout13):
    assert not too_close(questions(heldout13), reading_bank_questions())


def test_the_questions_are_apart_from_each_other(heldout13):
    mine = questions(heldout13)
    assert not [close for i in range(len(mine)) for close in too_close(mine[i + 1 :], [mine[i]])]
