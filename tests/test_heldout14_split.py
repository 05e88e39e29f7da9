"""The fourteenth held-out question split (``bench/heldout14.json``): 61 questions written without looking at how
GeoFaham reads a question (nothing under ``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not
run on them), in four languages, worded as coordinators, analysts, planners, officials and humanitarian workers write
(about two thirds ask one figure or one list, the rest two or more things; context sentences, terse notes, negations
and exclusions, combined grades, shares of subsets, thresholds in words and digits, three typos, named features,
breakdowns, comparisons), with few data field names or key=value tags, each apart from every question the product may
have been shaped on (the bench's tasks, its paraphrase suite, the first thirteen held-out splits and the planner's
reading bank), with expected values that ``bench/ground_truth_heldout14.py`` computes from the sample data by code of
its own (no GeoFaham import). The checks the held-out splits share (expected-value kinds, the sample data, the reading
bank's questions, the similarity measure) come from the second split's tests and ``tests/heldout_shared.py``."""

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

HELDOUT14_FILE = BENCH_DIR / "heldout14.json"
EARLIER_SPLITS = earlier_splits(14)
DESTROYED, NONE = "Destroyed (>50%)", "No Damage"
HOUSES = ["Single Family Residence Single Story", "Single Family Residence Multi Story"]
FLATS = ["Multi Family Residence Single Story", "Multi Family Residence Multi Story"]
SHOPS = ["Commercial Building Single Story", "Commercial Building Multi Story"]
MOBILE = ["Mobile Home Single Wide", "Mobile Home Double Wide", "Mobile Home Triple Wide"]
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
    "ho14_eaton_one_storey_commercial_grades",
    "ho14_pal_church_grades",
    "ho14_aoi_kinneloa_commercial_grades",
    "ho14_es_eaton_escuelas_grados",
    "ho14_es_aoi_west_apartamentos",
    "ho14_fr_pal_mobil_homes_grades",
    "ho14_pt_eaton_infraestruturas_grades",
    "ho14_cmp_outbuildings_destroyed",
    "ho14_cmp_no_damage_share",
    "ho14_es_cmp_moviles_destruidas",
    "ho14_fr_cmp_collectifs_detruits",
    "ho14_pt_cmp_escolas_sem_danos",
)
#: one figure per fire: Eaton's, then the Palisades'
PER_FIRE = (
    "ho14_cmp_outbuildings_destroyed",
    "ho14_cmp_no_damage_share",
    "ho14_es_cmp_moviles_destruidas",
    "ho14_fr_cmp_collectifs_detruits",
    "ho14_pt_cmp_escolas_sem_danos",
)
#: thresholds said in words: task -> (the words, the distance in metres the task states)
WORDED_THRESHOLDS = {
    "ho14_pal_trauma_8km": ("eight kilometres", 8000),
    "ho14_pt_valencia_especialidades_2km": ("dois quilómetros", 2000),
}
#: thresholds written in digits: task -> (the digits, the distance in metres the task states)
DIGIT_THRESHOLDS = {
    "ho14_eaton_hospitals_8km_beds": ("8 km", 8000),
    "ho14_pal_hospitals_4km": ("4 km", 4000),
    "ho14_valencia_dry_within_600m": ("600 m", 600),
    "ho14_pt_maui_camas_30km": ("30 km", 30_000),
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
    "ho14_eaton_homes_minor_major": "damgae",
    "ho14_cmp_nearest_hospital": "hosptial",
    "ho14_catarroja_avinguda_sud": "lenght",
}


@pytest.fixture(scope="module")
def heldout14() -> list[TaskSpec]:
    return load_tasks(HELDOUT14_FILE)


@pytest.fixture(scope="module")
def values() -> dict:
    return load_expected()["heldout14"]


# ---------------------------------------------------------------------------------------- the file
def test_every_task_loads_in_the_heldout_split(heldout14):
    assert_split_loads(heldout14, 14)


def test_personas_categories_and_plain_questions_are_varied(heldout14):
    personas = Counter(t.persona for t in heldout14)
    assert len(personas) == 5 and min(personas.values()) >= 8, personas
    categories = Counter(t.category for t in heldout14)
    assert {"poi_impact", "building_damage", "clustering_aggregation", "comparative", "infrastructure"} <= set(
        categories
    )
    assert {"land_cover", "flood"} <= set(categories) and categories["comparative"] >= 7, categories
    simple = [t for t in heldout14 if t.difficulty == "simple"]
    assert len(simple) >= len(heldout14) // 2  # most are plain, everyday wordings
    assert all(len(t.question) <= 140 for t in simple if t.language == "en"), "a simple question said simply"


def test_about_two_thirds_ask_one_figure_or_one_list(heldout14):
    """One figure, one list or one breakdown (a total beside its groups) for about two thirds; two or more things for
    the rest."""
    several = [t.id for t in heldout14 if len([e for e in t.expectations if e.kind != "count_by"]) > 1]
    breakdowns = [t.id for t in heldout14 if any(e.kind == "count_by" for e in t.expectations)]
    assert 18 <= len(several) <= 24, several
    assert not set(several) & set(breakdowns)
    assert 37 <= len(heldout14) - len(several) <= 43


def test_few_questions_write_field_names_or_tags(heldout14):
    """People rarely write a layer's field names or OSM key=value tags: a few questions do, most do not."""
    with_fields = [t.id for t in heldout14 if FIELD_WORDS.search(t.question)]
    assert 1 <= len(with_fields) <= 4, with_fields


def test_three_typos_are_kept(heldout14):
    by_id = {t.id: t for t in heldout14}
    for task_id, word in TYPOS.items():
        assert word in by_id[task_id].question, task_id


def test_every_expectation_points_into_the_heldout14_values(heldout14):
    expected = load_expected()
    for task in heldout14:
        for e in task.all_expectations():
            assert e.ref is not None and e.ref.startswith("heldout14."), (task.id, e.id)
            assert e.description.strip(), (task.id, e.id)
            assert VALUE_KINDS[e.kind](e.resolve(expected)), (task.id, e.id, e.resolve(expected))


def test_the_split_asks_every_kind_of_question(heldout14):
    """Counts, shares, breakdowns, names, distances, yes/no, areas, lengths, sums, a minimum, means and a
    difference; thresholds in metres and kilometres, all in metric units."""
    kinds = Counter(e.kind for t in heldout14 for e in t.expectations)
    assert all(kinds[k] >= 2 for k in ("count", "value", "names", "distance", "boolean")), kinds
    assert kinds["count_by"] >= 5, kinds
    units = {e.unit for t in heldout14 for e in t.expectations}
    assert {"%", "m", "km", "m2", "km2", "ha", "EUR"} <= units
    measures = Counter(e.measure for t in heldout14 for e in t.expectations)
    assert {"sum", "min", "mean", "difference", "share", "area", "length", "distance"} <= set(measures)
    assert measures["mean"] >= 3 and measures["sum"] >= 5, measures
    assert {t.aoi.kind for t in heldout14} == {"damage", "hazard", "layer"}
    assert sum(t.buffer_m is not None for t in heldout14) >= 6  # within stated distances
    words = " ".join(t.question for t in heldout14)
    for unit in ("miles", "millas", "feet", "acres", "milhas", "pieds", "yards"):  # every figure is asked in metric
        assert not re.search(rf"\b{unit}\b", words), unit
    assert all(e.in_answer for t in heldout14 for e in t.expectations if e.kind != "count_by")


def test_every_dataset_of_the_earlier_splits_is_asked_about(heldout14):
    sources = {s for t in heldout14 for s in t.required_sources}
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
    topics = Counter(t.id.split("_")[2] if t.language != "en" else t.id.split("_")[1] for t in heldout14)
    assert max(topics.values()) <= 12, topics  # no one topic dominates


def test_thresholds_are_the_stated_distances(heldout14):
    by_id = {t.id: t for t in heldout14}
    for task_id, (words, metres) in WORDED_THRESHOLDS.items():
        task = by_id[task_id]
        assert words in task.question and task.buffer_m == metres, task_id
        assert not DISTANCE_IN_DIGITS.search(task.question), task_id  # the distance is said in words only
    for task_id, (digits, metres) in DIGIT_THRESHOLDS.items():
        assert digits in by_id[task_id].question and by_id[task_id].buffer_m == metres, task_id
    with_buffer = {t.id for t in heldout14 if t.buffer_m is not None}
    assert with_buffer == set(WORDED_THRESHOLDS) | set(DIGIT_THRESHOLDS)


def test_short_breakdowns_are_two_to_four_labelled_figures(heldout14):
    """A short breakdown's figures are told apart by their labels: the groups of one count_by (two to four of them,
    beside an unlabelled total), or two to four counts or values with an event or a group each."""
    expected = load_expected()
    by_id = {t.id: t for t in heldout14}
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


def test_breakdowns_add_up_to_their_totals(heldout14):
    """The per-group tallies sum to the total asked beside them."""
    expected = load_expected()
    with_groups = 0
    for task in heldout14:
        by = [e for e in task.expectations if e.kind == "count_by"]
        if by:
            with_groups += 1
            assert task.expectations[0].kind == "count" and not task.expectations[0].labelled, task.id
            assert sum(by[0].resolve(expected).values()) == task.expectations[0].resolve(expected), task.id
    assert with_groups >= 5


def test_several_figures_carry_their_labels(heldout14):
    """Events, relations and measures label the figures a turn asks for together."""
    by_id = {t.id: t for t in heldout14}
    for task_id in PER_FIRE:
        assert [e.events for e in by_id[task_id].expectations] == [[11], [12, 13, 14]], task_id
    assert [e.relation for e in by_id["ho14_pt_aoi_sketch_residenciais"].expectations] == ["all", "inside"]
    for task_id in (
        "ho14_eaton_hospitals_8km_beds",
        "ho14_pt_maui_camas_30km",
        "ho14_fr_plan_culturels",
        "ho14_pt_plan_em_execucao",
    ):
        assert [e.measure for e in by_id[task_id].expectations] == [None, "sum"], task_id
    assert [e.measure for e in by_id["ho14_lahaina_damaged_labels_mean"].expectations] == [None, "mean"]
    assert [e.measure for e in by_id["ho14_es_pal_casas_una_planta_en_pie"].expectations] == [None, "share"]
    assert [e.measure for e in by_id["ho14_es_catarroja_calles_residenciales"].expectations] == ["length", "share"]
    assert [e.measure for e in by_id["ho14_aoi_sketch_buildings_flooded"].expectations] == ["area", "share"]
    assert [e.kind for e in by_id["ho14_plan_cheapest_school"].expectations] == ["names", "value"]
    assert [e.measure for e in by_id["ho14_plan_cheapest_school"].expectations] == [None, "min"]
    for task_id in (
        "ho14_eaton_nearest_non_profit",
        "ho14_aoi_village_nearest_hospital",
        "ho14_maui_farthest_hospital",
    ):
        assert [e.kind for e in by_id[task_id].expectations] == ["names", "distance"], task_id
    assert [e.kind for e in by_id["ho14_cmp_nearest_hospital"].expectations] == ["names", "names"]
    assert [e.measure for e in by_id["ho14_cmp_destroyed_difference"].expectations] == ["difference"]


def test_aoi_files_are_the_ones_the_runner_writes(heldout14):
    with_files = [t for t in heldout14 if t.input_files]
    assert len(with_files) >= 8
    assert {name for t in with_files for name in t.input_files} == set(AOI_FILES)
    for task in with_files:
        assert all(name in AOI_FILES for name in task.input_files), task.id
        assert all(name in task.question for name in task.input_files), task.id  # the question names its area
        assert task.aoi.kind == "layer" and task.aoi.layers == task.input_files, task.id


def test_the_cli_and_the_kept_runs_know_the_split():
    from bench.cli import build_parser
    from bench.runs import SPLIT_FILES, split_task_ids

    args = build_parser().parse_args(["tasks", "--tasks-file", "heldout14"])
    assert args.tasks_file == HELDOUT14_FILE
    args = build_parser().parse_args(["run", "--tasks-file", "heldout14", "--offline"])
    assert args.tasks_file == HELDOUT14_FILE
    assert SPLIT_FILES["heldout14"] == HELDOUT14_FILE.name
    assert len(split_task_ids("heldout14") or ()) == 61


def test_the_ground_truth_reuses_the_earlier_splits_helpers():
    """Reading, projecting and tabulating are the first split's code, the threshold guard and the area and length
    helpers the third split's, the Palisades hull the fourth split's, the AOI edge guard the sixth split's, the
    'farthest is apart' guard the seventh split's, the 'firmly inside or outside' guard and the small helpers the
    eighth split's, the two-decimal hectares the ninth split's, the one-nearest helper the tenth split's, the
    'largest' and 'smallest' guards the eleventh split's, the kilometre rounding and the Level I reading the twelfth
    split's, and the one-row and named-lines lookups the thirteenth split's."""
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
    import bench.ground_truth_heldout14 as fourteenth

    for name in ("Layers", "geoms", "touching", "metres", "ranked", "listing", "tally", "pct", "euros", "hospitals"):
        assert getattr(fourteenth, name) is getattr(first, name), name
    for name in ("assert_clear", "clipped_km", "hectares", "km2", "projected_aoi"):
        assert getattr(fourteenth, name) is getattr(third, name), name
    assert fourteenth.palisades_hull is fourth.palisades_hull
    assert fourteenth.assert_off_edge is sixth.assert_off_edge
    assert fourteenth.farthest_apart is seventh.farthest_apart
    for name in ("assert_firm", "one_of", "open_with_beds", "wet_share"):
        assert getattr(fourteenth, name) is getattr(eighth, name), name
    assert fourteenth.hectares2 is ninth.hectares2
    assert fourteenth.nearest is tenth.nearest
    for name in ("largest", "smallest"):
        assert getattr(fourteenth, name) is getattr(eleventh, name), name
    for name in ("km", "level_one"):
        assert getattr(fourteenth, name) is getattr(twelfth, name), name
    for name in ("one_row", "named_lines"):
        assert getattr(fourteenth, name) is getattr(thirteenth, name), name


# ------------------------------------------------------------------------------------ ground truth
@pytest.fixture(scope="module")
def root() -> Path:
    return sample_data()


def test_expected_heldout14_values_are_what_the_module_computes(root):
    from bench.ground_truth_heldout14 import heldout14 as compute_heldout14

    fresh = json.loads(json.dumps(compute_heldout14(root), ensure_ascii=False))
    assert fresh["heldout14"] == load_expected()["heldout14"]


def test_dins_values_recomputed_without_the_module(root, values):
    """The DINS figures again, with plain pandas filters, crosstabs and spatial joins in WGS84."""
    eaton = read(root, EATON_FILE)
    pal = read(root, PALISADES_FILE)
    e, p, c = values["eaton"], values["palisades"], values["comparative"]

    table = pd.crosstab(eaton.STRUCTURETYPE, eaton.DAMAGE)
    sheds = table.loc["Utility Misc Structure"]
    assert int(sheds.sum() - sheds[DESTROYED]) == e["outbuildings_standing"] == 710
    damaged = eaton[eaton.DAMAGE != NONE]
    assert round(100 * (damaged.DAMAGE == DESTROYED).mean(), 1) == e["destroyed_pct_of_damaged"] == 89.2
    shops = eaton[SHOPS[0] == eaton.STRUCTURETYPE]
    assert grade(shops.DAMAGE).value_counts().to_dict() == e["one_storey_commercial_by_grade"]
    assert len(shops) == e["one_storey_commercial"] == 55
    assert int(table.loc[HOUSES, ["Minor (10-25%)", "Major (26-50%)"]].to_numpy().sum()) == e["houses_minor_or_major"]
    assert e["houses_minor_or_major"] == 48
    schools = eaton[eaton.STRUCTURETYPE == "School"]
    assert grade(schools.DAMAGE).value_counts().to_dict() == e["schools_by_grade"] == {"destroyed": 19, "none": 51}
    assert len(schools) == e["schools"]
    assert int(table.loc[HOUSES[1], NONE]) == e["tall_houses_untouched"] == 655
    works = eaton[eaton.STRUCTURETYPE == "Infrastructure"]
    assert grade(works.DAMAGE).value_counts().to_dict() == e["infrastructure_by_grade"]
    assert len(works) == e["infrastructure"] == 25

    doubles = pal[pal.STRUCTURETYPE == "Mobile Home Double Wide"]
    assert round(100 * (doubles.DAMAGE == DESTROYED).mean(), 1) == p["double_wides_destroyed_pct"] == 97.5
    assert int(pal.DAMAGE.isin(["Affected (1-9%)", "Minor (10-25%)", "Major (26-50%)"]).sum()) == 1013
    assert p["damaged_standing"] == 1013
    churches = pal[pal.STRUCTURETYPE == "Church"]
    assert grade(churches.DAMAGE).value_counts().to_dict() == p["churches_by_grade"]
    assert len(churches) == p["churches"] == 13
    low = pal[HOUSES[0] == pal.STRUCTURETYPE]
    standing = low[low.DAMAGE != DESTROYED]
    assert len(standing) == p["one_storey_houses_standing"] == 1352
    assert round(100 * len(standing) / len(low), 1) == p["one_storey_houses_standing_pct"]
    mobile = pal[pal.STRUCTURETYPE.isin(MOBILE)]
    assert grade(mobile.DAMAGE).value_counts().to_dict() == p["mobile_homes_by_grade"]
    assert len(mobile) == p["mobile_homes"] == 364
    pal_schools = pal[pal.STRUCTURETYPE == "School"]
    assert round(100 * (pal_schools.DAMAGE != NONE).mean(), 1) == p["schools_damaged_pct"] == 58.0

    for fire, dins in (("eaton", eaton), ("palisades", pal)):
        lost = dins[dins.DAMAGE == DESTROYED]
        assert int((lost.STRUCTURETYPE == "Utility Misc Structure").sum()) == c["outbuildings_destroyed"][fire]
        assert round(100 * (dins.DAMAGE == NONE).mean(), 1) == c["no_damage_pct"][fire], fire
        assert int(lost.STRUCTURETYPE.isin(MOBILE).sum()) == c["mobile_homes_destroyed"][fire], fire
        assert int(lost.STRUCTURETYPE.isin(FLATS).sum()) == c["apartments_destroyed"][fire], fire
        untouched = dins[(dins.STRUCTURETYPE == "School") & (dins.DAMAGE == NONE)]
        assert len(untouched) == c["schools_untouched"][fire], fire
    assert (c["outbuildings_destroyed"]["eaton"], c["outbuildings_destroyed"]["palisades"]) == (811, 1108)
    assert (c["mobile_homes_destroyed"]["eaton"], c["mobile_homes_destroyed"]["palisades"]) == (1, 350)
    assert (c["apartments_destroyed"]["eaton"], c["apartments_destroyed"]["palisades"]) == (5, 138)
    assert (c["schools_untouched"]["eaton"], c["schools_untouched"]["palisades"]) == (51, 42)
    lost_each = [int((dins.DAMAGE == DESTROYED).sum()) for dins in (pal, eaton)]
    assert lost_each[0] - lost_each[1] == c["destroyed_difference"] == 4101

    a = values["aoi"]
    east = eaton.sjoin(aoi_frame("east_altadena_kinneloa.geojson"), predicate="intersects")
    k = a["east_altadena_kinneloa"]
    assert int(east.DAMAGE.isin(["Affected (1-9%)", "Minor (10-25%)", "Major (26-50%)"]).sum()) == 87
    assert k["damaged_standing"] == 87
    shops = east[east.STRUCTURETYPE.isin(SHOPS)]
    assert grade(shops.DAMAGE).value_counts().to_dict() == k["commercial_by_grade"]
    assert len(shops) == k["commercial"] == 16
    west = eaton.sjoin(aoi_frame("west_altadena_area.geojson"), predicate="intersects")
    flats = west[FLATS[1] == west.STRUCTURETYPE]
    w = a["west_altadena_area"]
    assert grade(flats.DAMAGE).value_counts().to_dict() == w["tall_apartments_by_grade"]
    assert len(flats) == w["tall_apartments"] == 8
    village = pal.sjoin(aoi_frame("palisades_village_aoi.geojson"), predicate="intersects")
    village_churches = village[village.STRUCTURETYPE == "Church"]
    assert round(100 * (village_churches.DAMAGE == DESTROYED).mean(), 1) == 75.0
    assert a["palisades_village_aoi"]["churches_destroyed_pct"] == 75.0


def test_hospital_values_recomputed_without_the_module(root, values):
    """Buffers and joins instead of distances to the polygon; each threshold gives the same hospitals 30 m either
    side of it (no hospital is near a threshold)."""
    hospitals = read(root, HOSPITALS_FILE)
    la = hospitals[(hospitals.STATE == "CA") & (hospitals.COUNTY == "LOS ANGELES")].to_crs(26911)
    perimeter = read(root, PERIMETER_FILE, 26911).union_all()
    pal = read(root, PALISADES_FILE, 26911)
    hull = pal[pal.DAMAGE == DESTROYED].union_all().convex_hull

    def within(area: shapely.Geometry, metres: float, rows: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        """The rows a buffer of ``metres`` reaches (fine arcs: 64 segments a quarter circle)."""
        near = rows[rows.intersects(area.buffer(metres, quad_segs=64))]
        assert sorted(near.NAME) == sorted(rows.NAME[rows.intersects(area.buffer(metres - 30, quad_segs=64))])
        assert sorted(near.NAME) == sorted(rows.NAME[rows.intersects(area.buffer(metres + 30, quad_segs=64))])
        assert bool((near.STATUS == "OPEN").all()) and bool((near.BEDS > 0).all())
        return near

    def first(rows: gpd.GeoDataFrame, area: shapely.Geometry) -> tuple[str, float]:
        ranked = rows.assign(d=rows.distance(area)).sort_values("d")
        assert ranked.d.iloc[1] - ranked.d.iloc[0] >= 30
        return ranked.NAME.iloc[0], ranked.d.iloc[0]

    e, p, c = values["eaton"], values["palisades"], values["comparative"]
    name, metres = first(la[la.OWNER == "NON-PROFIT"], perimeter)
    assert [name] == e["nearest_non_profit"]["names"] == ["METHODIST HOSPITAL OF SOUTHERN CALIFORNIA"]
    assert metres == pytest.approx(e["nearest_non_profit"]["distances_m"][name], abs=0.1)
    eight = within(perimeter, 8000, la)
    assert (len(eight), int(eight.BEDS.sum())) == (e["hospitals_within_8km"], e["beds_within_8km"]) == (13, 2292)
    adventist = la[la.NAME == "ADVENTIST HEALTH GLENDALE"]
    assert adventist.distance(perimeter).iloc[0] / 1000 == pytest.approx(e["adventist_glendale_km"], abs=0.01)
    assert read(root, PERIMETER_FILE, 26911).area.sum() / 1e4 == pytest.approx(e["perimeter_ha"], abs=0.1)

    four = within(hull, 4000, la)
    assert sorted(four.NAME) == sorted(p["within_4km"]["names"]) and len(four) == 2
    trauma = la[la.TRAUMA.fillna("").str.contains(r"LEVEL I\b")]
    level_one = within(hull, 8000, trauma)
    assert sorted(level_one.NAME) == sorted(p["level_one_within_8km"]["names"])
    assert "RONALD REAGAN UCLA MEDICAL CENTER" in set(level_one.NAME) and len(level_one) == 2
    reagan = la[la.NAME == "RONALD REAGAN UCLA MEDICAL CENTER"]
    assert reagan.distance(hull).iloc[0] / 1000 == pytest.approx(p["reagan_km"], abs=0.01)

    for fire, area in (("eaton", perimeter), ("palisades", hull)):
        name, _ = first(la, area)
        assert [name] == c["nearest_hospital"][fire]["names"], fire
    village = aoi_frame("palisades_village_aoi.geojson", 26911).geometry.iloc[0]
    name, metres = first(la, village)
    assert [name] == values["aoi"]["palisades_village_aoi"]["nearest_hospital"]["names"]
    assert metres == pytest.approx(
        values["aoi"]["palisades_village_aoi"]["nearest_hospital"]["distances_m"][name], abs=0.1
    )

    maui = hospitals[(hospitals.STATE == "HI") & (hospitals.COUNTY == "MAUI")].to_crs(32604)
    burn = read(root, "lahaina-2023/lahaina_burn_area.geojson", 32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    lahaina = values["lahaina"]
    far = maui.assign(d=maui.distance(burn_area)).sort_values("d", ascending=False)
    assert far.d.iloc[0] - far.d.iloc[1] >= 30
    assert [far.NAME.iloc[0]] == lahaina["farthest_hospital"]["names"] == ["MOLOKAI GENERAL HOSPITAL"]
    assert far.d.iloc[0] == pytest.approx(lahaina["farthest_hospital"]["distances_m"][far.NAME.iloc[0]], abs=0.1)
    near = within(burn_area, 30_000, maui)
    assert (len(near), int(near.BEDS.sum())) == (lahaina["hospitals_within_30km"], lahaina["beds_within_30km"])
    assert (len(near), int(near.BEDS.sum())) == (2, 223)
    memorial = maui[maui.NAME == "MAUI MEMORIAL MEDICAL CENTER"]
    assert memorial.distance(burn_area).iloc[0] / 1000 == pytest.approx(lahaina["maui_memorial_km"], abs=0.01)
    assert shapely.area(burn_area) / 1e4 == pytest.approx(lahaina["burn_ha"], abs=0.1)


def test_valencia_values_recomputed_without_the_module(root, values):
    """Buffers, joins and clips for the València facilities, the AOI03 rectangle and the south AOI file (the same
    facilities 30 m either side of each threshold)."""
    flood = read(root, FLOOD_FILE, 25830)
    water = flood.union_all()
    v = values["valencia"]
    health = read(root, HEALTH_FILE, 25830)
    d = health.distance(water)

    def near(rows: gpd.GeoDataFrame, metres: float) -> list[str]:
        out = sorted(rows.equipamien[rows.intersects(water.buffer(metres, quad_segs=64))])
        for shift in (-30, 30):
            assert sorted(rows.equipamien[rows.intersects(water.buffer(metres + shift, quad_segs=64))]) == out
        return out

    wet = health[health.intersects(water)]
    assert bool((health.intersects(water.buffer(30)) == health.intersects(water.buffer(-30))).all())
    assert len(near(health, 600)) - len(wet) == v["dry_within_600m"] == 7
    general = health[health.equipamien == "HOSPITAL GENERAL UNIVERSITARIO"]
    assert general.distance(water).iloc[0] == pytest.approx(v["general_m"], abs=0.1)
    rectangle = read(root, AOI03_FILE)
    inside = read(root, HEALTH_FILE).sjoin(rectangle[["geometry"]], predicate="intersects")
    assert len(inside) == v["in_aoi03"] == 15
    wet_rectangle = gpd.clip(flood, rectangle.to_crs(25830)).area.sum()
    assert wet_rectangle / 1e6 == pytest.approx(v["aoi03_flooded_km2"], abs=0.01)
    consultorios = health[health.equipamien.str.startswith("CONSULTORIO")]
    flooded = sorted(consultorios.equipamien[consultorios.intersects(water)])
    assert flooded == v["flooded_consultorios"]["names"] and len(flooded) == 3
    assert d[consultorios.index].mean() == pytest.approx(v["consultorios_mean_m"], abs=0.1)
    specialty = health[health.equipamien.str.startswith("CENTRO DE ESPECIALIDADES")]
    assert near(specialty, 2000) == v["specialty_within_2km"]["names"] == ["CENTRO DE ESPECIALIDADES EL GRAO"]

    south = aoi_frame("valencia_south_area.geojson", 25830)
    in_south = health.sjoin(south, predicate="intersects")
    dry = sorted(in_south.equipamien[~in_south.intersects(water)])
    assert dry == values["aoi"]["valencia_south_area"]["dry_facilities"]["names"] and len(in_south) == 6
    assert len(dry) == 3


def test_catarroja_values_recomputed_without_the_module(root, values):
    """Clips, dissolves and joins with GeoPandas for the Catarroja extract and the sketch."""
    flood = read(root, FLOOD_FILE, 25830)
    water = flood.union_all()
    grown, shrunk = water.buffer(30), water.buffer(-30)
    c = values["catarroja"]
    lines = read(root, OSM + "lineas.geojson", 25830)

    def wet_km(rows: gpd.GeoDataFrame) -> float:
        return gpd.clip(rows, flood).length.sum() / 1000

    assert abs(wet_km(lines[lines["name"] == "Avinguda del Sud"]) - c["avinguda_sud_km_in_flood"]) < 0.01
    assert abs(wet_km(lines[lines["name"] == "Barranc de Xiva"]) - c["xiva_km_in_flood"]) < 0.01
    residential = lines[lines.highway == "residential"]
    assert abs(wet_km(residential) - c["residential_km_in_flood"]) < 0.01
    assert abs(100 * wet_km(residential) / (residential.length.sum() / 1000) - c["residential_pct_in_flood"]) < 0.1
    assert abs(wet_km(lines[lines.highway == "secondary"]) - c["secondary_km_in_flood"]) < 0.01
    tracks = lines[lines.highway == "track"]
    assert abs(100 * wet_km(tracks) / (tracks.length.sum() / 1000) - c["tracks_pct_in_flood"]) < 0.1

    points = read(root, OSM + "puntos.geojson", 25830)
    polygons = read(root, OSM + "poligonos.geojson", 25830)
    orchards = polygons[polygons.landuse == "orchard"].dissolve()
    assert abs(gpd.clip(orchards, flood).area.sum() / 1e4 - c["orchard_ha_in_flood"]) < 0.05
    station = polygons[polygons.amenity == "fire_station"]
    assert station["name"].tolist() == ["Parc de Bombers de Catarroja"]
    assert bool(station.intersects(shrunk).all()) and c["fire_station_flooded"]
    pharmacies = points[points.amenity == "pharmacy"]
    assert len(pharmacies) == 3 and not bool(pharmacies.intersects(grown).any()) and not c["pharmacy_flooded"]
    ranked = pharmacies.assign(d=pharmacies.distance(water)).sort_values("d")
    assert ranked.d.iloc[1] - ranked.d.iloc[0] >= 30
    assert [ranked["name"].iloc[0]] == c["nearest_pharmacy"]["names"] == ["Eugenio Baixaulí Mateu"]
    assert ranked.d.iloc[0] == pytest.approx(c["nearest_pharmacy"]["distances_m"]["Eugenio Baixaulí Mateu"], abs=0.1)

    sketch = aoi_frame("catarroja_east_sketch.geojson", 25830)
    k = values["aoi"]["catarroja_east_sketch"]
    buildings = gpd.clip(polygons[polygons.building.notna()].dissolve(), sketch)
    wet_buildings = gpd.clip(buildings, flood).area.sum()
    assert abs(wet_buildings / 1e4 - k["building_ha_in_flood"]) < 0.01
    assert abs(100 * wet_buildings / buildings.area.sum() - k["building_pct_in_flood"]) < 0.1
    streets = gpd.clip(residential, sketch)
    assert abs(streets.length.sum() / 1000 - k["residential_km"]) < 0.01
    assert abs(wet_km(streets) - k["residential_km_in_flood"]) < 0.01


def test_recovery_plan_values_recomputed_without_the_module(root, values):
    plan = values["plan"]
    public = read(root, PLAN_FILE)
    damage = public.val_dany.map(eur)
    schools = public.capa == "Centros educativos"
    valued_schools = damage[schools & (damage > 0)].sort_values()
    assert valued_schools.iloc[0] < valued_schools.iloc[1]
    assert [public.titulo[valued_schools.index[0]]] == plan["cheapest_school"]["names"] == ["CEIP Jaume I"]
    assert valued_schools.iloc[0] == plan["cheapest_school_eur"] == 89_185.0
    assert int((schools & (damage == 0)).sum()) == plan["education_unvalued"] == 5
    assert damage.sum() == pytest.approx(plan["total_damage_eur"], abs=0.01)
    culture = public.capa == "Centros culturales"
    assert int(culture.sum()) == plan["culture"] == 5
    assert damage[culture].sum() == pytest.approx(plan["culture_damage_eur"], abs=0.01)
    social = damage[(public.capa == "Centros sociosanitarios") & (damage > 0)]
    assert len(social) == 4 and social.mean() == pytest.approx(plan["social_valued_mean_eur"], abs=0.01)
    running = public.estado == "En ejecución"
    assert int(running.sum()) == plan["in_progress"] == 5
    assert damage[running].sum() == pytest.approx(plan["in_progress_damage_eur"], abs=0.01)


def test_lahaina_values_recomputed_without_the_module(root, values):
    labels = read(root, "lahaina-2023/Maui_Wildfires_August_0.geojson", 32604)
    area = pd.Series(shapely.area(shapely.make_valid(labels.geometry.values)), index=labels.index)
    damaged = area[labels["class"] == "Damaged Building"]
    assert len(damaged) == values["lahaina"]["damaged_labels"] == 35
    assert damaged.mean() == pytest.approx(values["lahaina"]["damaged_mean_m2"], abs=0.1)


# -------------------------------------------------------------------------------------- apartness
def test_every_question_is_apart_from_the_bench_questions(heldout14):
    others = bench_questions(TASKS_FILE) + bench_questions(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += bench_questions(split)
    assert len(others) > 500
    assert not too_close(questions(heldout14), others)


def test_every_question_is_apart_from_the_reading_bank(heldout14):
    assert not too_close(questions(heldout14), reading_bank_questions())


def test_the_questions_are_apart_from_each_other(heldout14):
    mine = questions(heldout14)
    assert not [close for i in range(len(mine)) for close in too_close(mine[i + 1 :], [mine[i]])]
