"""The ninth held-out question split (``bench/heldout9.json``): 61 questions written without looking at how GeoFaham
reads a question (nothing under ``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not run on
them), in four languages, worded as coordinators, analysts and humanitarian workers write (plain everyday questions, an
email, a context sentence first, terse field notes, grade subsets said by description, exclusions and negations,
implied denominators, numbers and units in words, three typos), each apart from every question the product may have been
shaped on (the bench's tasks, its paraphrase suite, the first eight held-out splits and the planner's reading bank),
with expected values that ``bench/ground_truth_heldout9.py`` computes from the sample data by code of its own (no
GeoFaham import). The checks the held-out splits share (expected-value kinds, the sample data, the reading bank's
questions, the similarity measure) come from the second split's tests."""

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

HELDOUT9_FILE = BENCH_DIR / "heldout9.json"
EARLIER_SPLITS = earlier_splits(9)
DESTROYED, NONE = "Destroyed (>50%)", "No Damage"
AFFECTED, MINOR, MAJOR = "Affected (1-9%)", "Minor (10-25%)", "Major (26-50%)"
SFR_ONE, SFR_TALL = "Single Family Residence Single Story", "Single Family Residence Multi Story"
UTILITY = "Utility Misc Structure"
EATON_FILE = "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson"
PALISADES_FILE = "palisades-2025/DINS_2025_Palisades_Public_View.geojson"
HOSPITALS_FILE = "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson"
FLOOD_FILE = "valencia-2024/emsr773_observed_flood_merged.geojson"
HEALTH_FILE = "valencia-2024/valencia_city_health_facilities.geojson"
PLAN_FILE = "valencia-2024/catarroja_public_buildings_dana.geojson"
OSM = "valencia-2024/osm-catarroja/"
#: the turns whose honest answer is a short breakdown: two to four figures, each told apart by its label
SHORT_BREAKDOWNS = (
    "ho9_eaton_homes_hit_standing",
    "ho9_cmp_schools_inspected",
    "ho9_cmp_proprietary_10km",
    "ho9_aoi_east_commercial",
    "ho9_lahaina_sources",
    "ho9_catarroja_industrial_wet_dry",
    "ho9_es_cmp_pisos_bajos_destruidos",
    "ho9_es_plan_previstas_por_capa",
    "ho9_fr_cmp_annexes_intactes",
    "ho9_pt_cmp_comercio_terreo_intacto",
    "ho9_pt_cmp_terreas_major",
)
#: one figure per fire: Eaton's, then the Palisades'
PER_FIRE = (
    "ho9_cmp_schools_inspected",
    "ho9_cmp_affected_share",
    "ho9_cmp_proprietary_10km",
    "ho9_cmp_acute_beds",
    "ho9_es_cmp_pisos_bajos_destruidos",
    "ho9_fr_cmp_annexes_intactes",
    "ho9_pt_cmp_comercio_terreo_intacto",
    "ho9_pt_cmp_terreas_major",
)
#: thresholds said in words: task -> (the words, the distance in metres the task states)
WORDED_THRESHOLDS = {
    "ho9_eaton_fewest_beds_7km": ("seven kilometres", 7000),
    "ho9_pal_psych_10km": ("ten kilometres", 10_000),
    "ho9_cmp_proprietary_10km": ("ten kilometres", 10_000),
    "ho9_aoi_west_helipads_6km": ("six kilometres", 6000),
    "ho9_valencia_ring": ("three and a half kilometres", 3500),
    "ho9_es_valencia_centros_mas_4km": ("cuatro kilómetros", 4000),
    "ho9_es_valencia_hospitales_1100": ("mil cien metros", 1100),
    "ho9_fr_valencia_consultorios_900": ("neuf cents mètres", 900),
    "ho9_pt_pal_sem_trauma_10km": ("dez quilómetros", 10_000),
}
DISTANCE_IN_DIGITS = re.compile(
    r"\d+(?:[.,]\d+)?\s*(?:m|km|metres|meters|kilometres|kilómetros|kilomètres|quilómetros)\b"
)


@pytest.fixture(scope="module")
def heldout9() -> list[TaskSpec]:
    return load_tasks(HELDOUT9_FILE)


@pytest.fixture(scope="module")
def values() -> dict:
    return load_expected()["heldout9"]


# ---------------------------------------------------------------------------------------- the file
def test_every_task_loads_in_the_heldout_split(heldout9):
    assert_split_loads(heldout9, 9)


def test_personas_categories_and_plain_questions_are_varied(heldout9):
    personas = Counter(t.persona for t in heldout9)
    assert len(personas) == 5 and min(personas.values()) >= 8, personas
    categories = Counter(t.category for t in heldout9)
    assert {"poi_impact", "building_damage", "clustering_aggregation", "comparative", "infrastructure"} <= set(
        categories
    )
    assert {"land_cover", "flood"} <= set(categories) and categories["comparative"] >= 8, categories
    simple = [t for t in heldout9 if t.difficulty == "simple"]
    assert len(simple) >= len(heldout9) // 3  # plain, everyday wordings: a product must get those right first
    assert all(len(t.question) <= 140 for t in simple if t.language == "en"), "a simple question said simply"


def test_every_expectation_points_into_the_heldout9_values(heldout9):
    expected = load_expected()
    for task in heldout9:
        for e in task.all_expectations():
            assert e.ref is not None and e.ref.startswith("heldout9."), (task.id, e.id)
            assert e.description.strip(), (task.id, e.id)
            assert VALUE_KINDS[e.kind](e.resolve(expected)), (task.id, e.id, e.resolve(expected))


def test_the_split_asks_every_kind_of_question(heldout9):
    """Counts, shares, breakdowns, names, distances, yes/no, areas, lengths, sums, maxima, a minimum, a mean and a
    difference; several figures in one turn; thresholds and rings in metres and kilometres, all in metric units."""
    kinds = Counter(e.kind for t in heldout9 for e in t.expectations)
    assert all(kinds[k] >= 2 for k in ("count", "value", "names", "distance", "boolean")), kinds
    assert kinds["count_by"] >= 6, kinds
    units = {e.unit for t in heldout9 for e in t.expectations}
    assert {"%", "m", "km", "m2", "ha", "EUR"} <= units
    measures = {e.measure for t in heldout9 for e in t.expectations}
    assert {"sum", "max", "min", "mean", "difference", "share", "area", "length"} <= measures
    assert sum(len(t.expectations) > 1 for t in heldout9) >= 35
    assert {t.aoi.kind for t in heldout9} == {"damage", "hazard", "layer"}
    assert sum(t.buffer_m is not None for t in heldout9) >= 11  # within / beyond stated distances
    words = " ".join(t.question for t in heldout9)
    for attribute in ("OWNER", "TYPE", "HELIPAD", "BEDS", "TRAUMA", "CRITICAL ACCESS", "idsubclase", "val_dany"):
        assert attribute in words, attribute
    assert "subv_apro" in words and "Prevista" in words
    for unit in ("miles", "millas", "feet", "acres", "milhas", "pieds"):  # every figure is asked in metric units
        assert not re.search(rf"\b{unit}\b", words), unit
    assert all(e.in_answer for t in heldout9 for e in t.expectations if e.kind != "count_by")


def test_thresholds_said_in_words_are_the_stated_distances(heldout9):
    by_id = {t.id: t for t in heldout9}
    for task_id, (words, metres) in WORDED_THRESHOLDS.items():
        task = by_id[task_id]
        assert words in task.question and task.buffer_m == metres, task_id
        assert not DISTANCE_IN_DIGITS.search(task.question), task_id  # the distance is said in words only
    assert "a kilometre and a half" in by_id["ho9_valencia_ring"].question
    assert "a hundred beds" in by_id["ho9_eaton_hundred_beds_5km"].question
    assert "a million euros" in by_id["ho9_plan_over_million"].question
    assert "cinq cents mètres carrés" in by_id["ho9_fr_lahaina_batiments_500"].question


def test_short_breakdowns_are_two_to_four_labelled_figures(heldout9):
    """A short breakdown's figures are told apart by their labels: the groups of one count_by (two to four of them,
    beside an unlabelled total), or two to four counts with a grade, an event or a relation each."""
    expected = load_expected()
    by_id = {t.id: t for t in heldout9}
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


def test_longer_breakdowns_add_up_to_their_totals(heldout9):
    """The per-grade and per-type tallies of five or seven groups sum to the total asked beside them."""
    expected = load_expected()
    for task in heldout9:
        by = [e for e in task.expectations if e.kind == "count_by"]
        if by:
            assert task.expectations[0].kind == "count" and not task.expectations[0].labelled, task.id
            assert sum(by[0].resolve(expected).values()) == task.expectations[0].resolve(expected), task.id


def test_several_figures_carry_their_labels(heldout9):
    """Events, relations and measures label the figures a turn asks for together."""
    by_id = {t.id: t for t in heldout9}
    for task_id in PER_FIRE:
        assert [e.events for e in by_id[task_id].expectations] == [[11], [12, 13, 14]], task_id
    assert [e.relation for e in by_id["ho9_catarroja_industrial_wet_dry"].expectations] == ["inside", "outside"]
    assert [e.relation for e in by_id["ho9_es_valencia_centros_mas_4km"].expectations] == ["outside", None]
    for task_id in ("ho9_pal_psych_10km", "ho9_maui_critical_beds"):
        assert [e.measure for e in by_id[task_id].expectations][-1] == "sum", task_id
    assert [e.measure for e in by_id["ho9_cmp_acute_beds"].expectations] == ["sum", "sum"]
    assert [e.measure for e in by_id["ho9_eaton_fewest_beds_7km"].expectations] == [None, "min"]
    for task_id in (
        "ho9_aoi_sketch_cycleway",
        "ho9_catarroja_compacted",
        "ho9_catarroja_nature_reserve",
        "ho9_es_catarroja_pastizal",
        "ho9_fr_valencia_consultorios_900",
        "ho9_fr_catarroja_ponts",
    ):
        assert [e.measure for e in by_id[task_id].expectations][1] == "share", task_id
    assert [e.kind for e in by_id["ho9_catarroja_construction_rail"].expectations] == ["boolean", "value"]
    assert [e.kind for e in by_id["ho9_es_catarroja_enlaces_autopista"].expectations] == ["count", "boolean", "value"]


def test_aoi_files_are_the_ones_the_runner_writes(heldout9):
    with_files = [t for t in heldout9 if t.input_files]
    assert len(with_files) >= 8
    assert {name for t in with_files for name in t.input_files} == set(AOI_FILES)
    for task in with_files:
        assert all(name in AOI_FILES for name in task.input_files), task.id
        assert all(name in task.question for name in task.input_files), task.id  # the question names its area
        assert task.aoi.kind == "layer" and task.aoi.layers == task.input_files, task.id


def test_the_cli_and_the_kept_runs_know_the_split():
    from bench.cli import build_parser
    from bench.runs import SPLIT_FILES

    args = build_parser().parse_args(["tasks", "--tasks-file", "heldout9"])
    assert args.tasks_file == HELDOUT9_FILE
    args = build_parser().parse_args(["run", "--tasks-file", "heldout9", "--offline"])
    assert args.tasks_file == HELDOUT9_FILE
    assert SPLIT_FILES["heldout9"] == HELDOUT9_FILE.name


def test_the_ground_truth_reuses_the_earlier_splits_helpers():
    """Reading, projecting and tabulating are the first split's code, the threshold guard and the area and length
    helpers the third split's, the 'nearest are apart' guard and the Palisades hull the fourth split's, the AOI edge
    guard the sixth split's, the label-size guard and the 'farthest is apart' guard the seventh split's, the faster
    'firmly inside or outside' guard and the small helpers the eighth split's."""
    import bench.ground_truth_heldout as first
    import bench.ground_truth_heldout3 as third
    import bench.ground_truth_heldout4 as fourth
    import bench.ground_truth_heldout6 as sixth
    import bench.ground_truth_heldout7 as seventh
    import bench.ground_truth_heldout8 as eighth
    import bench.ground_truth_heldout9 as ninth

    for name in ("Layers", "geoms", "touching", "metres", "ranked", "listing", "tally", "pct", "euros", "hospitals"):
        assert getattr(ninth, name) is getattr(first, name), name
    for name in ("assert_clear", "clipped_km", "hectares", "projected_aoi"):
        assert getattr(ninth, name) is getattr(third, name), name
    for name in ("assert_apart", "palisades_hull"):
        assert getattr(ninth, name) is getattr(fourth, name), name
    assert ninth.assert_off_edge is sixth.assert_off_edge
    for name in ("assert_sizes_clear", "farthest_apart"):
        assert getattr(ninth, name) is getattr(seventh, name), name
    for name in ("assert_firm", "one_of", "open_with_beds", "share_within", "wet_share"):
        assert getattr(ninth, name) is getattr(eighth, name), name


# ------------------------------------------------------------------------------------ ground truth
@pytest.fixture(scope="module")
def root() -> Path:
    return sample_data()


def test_expected_heldout9_values_are_what_the_module_computes(root):
    from bench.ground_truth_heldout9 import heldout9 as compute_heldout9

    fresh = json.loads(json.dumps(compute_heldout9(root), ensure_ascii=False))
    assert fresh["heldout9"] == load_expected()["heldout9"]


def test_dins_values_recomputed_without_the_module(root, values):
    """The DINS figures again, with plain pandas filters and spatial joins."""
    eaton = read(root, EATON_FILE)
    kind, dmg = eaton.STRUCTURETYPE, eaton.DAMAGE
    e = values["eaton"]
    assert int(kind.str.startswith("Single Family").sum()) == e["sfr_inspected"] == 4091
    sheds = eaton[kind == UTILITY]
    assert int(sheds.DAMAGE.isin([AFFECTED, MINOR]).sum()) == e["outbuildings_affected_or_minor"] == 66
    assert grade(sheds.DAMAGE).value_counts().to_dict() == e["outbuildings_by_grade"]
    assert len(sheds) == e["outbuildings"] == sum(e["outbuildings_by_grade"].values())
    assert round(100 * (eaton[dmg == AFFECTED].STRUCTURETYPE == UTILITY).mean(), 1) == e["outbuildings_pct_of_affected"]
    hit = eaton[kind.str.startswith("Single Family") & dmg.isin([AFFECTED, MINOR, MAJOR])]
    assert grade(hit.DAMAGE).value_counts().to_dict() == e["sfr_standing_damaged_by_grade"]
    assert len(hit) == e["sfr_standing_damaged"] == 253
    flats = eaton[kind == "Multi Family Residence Single Story"]
    assert round(100 * (flats.DAMAGE == DESTROYED).mean(), 1) == e["low_rise_flats_destroyed_pct"] == 20.0

    pal = read(root, PALISADES_FILE)
    kind, dmg = pal.STRUCTURETYPE, pal.DAMAGE
    p = values["palisades"]
    assert int(((kind == SFR_TALL) & (dmg == AFFECTED)).sum()) == p["multi_story_sfr_affected"] == 360
    infra = pal[kind == "Infrastructure"]
    assert round(100 * (infra.DAMAGE == NONE).mean(), 1) == p["infrastructure_no_damage_pct"] == 90.2
    schools = pal[kind == "School"]
    assert grade(schools.DAMAGE).value_counts().to_dict() == p["schools_by_grade"] and len(schools) == p["schools"]
    assert round(100 * (pal[dmg == AFFECTED].STRUCTURETYPE == SFR_ONE).mean(), 1) == p["one_story_sfr_pct_of_affected"]
    tall_flats = (kind == "Multi Family Residence Multi Story") & dmg.isin([AFFECTED, MINOR])
    assert int(tall_flats.sum()) == p["multi_story_flats_light"] == 42
    minor = pal[dmg == MINOR]
    assert minor.STRUCTURETYPE.value_counts().to_dict() == p["minor_by_type"] and len(minor) == p["minor"] == 171

    c = values["comparative"]
    for fire, dins in (("eaton", eaton), ("palisades", pal)):
        kind, dmg = dins.STRUCTURETYPE, dins.DAMAGE
        assert int((kind == "School").sum()) == c["schools"][fire], fire
        assert round(100 * (dmg == AFFECTED).mean(), 1) == c["affected_pct_of_inspected"][fire], fire
        low_flats = (kind == "Multi Family Residence Single Story") & (dmg == DESTROYED)
        assert int(low_flats.sum()) == c["low_rise_flats_destroyed"][fire], fire
        assert int(((kind == UTILITY) & (dmg == NONE)).sum()) == c["outbuildings_no_damage"][fire], fire
        shops = (kind == "Commercial Building Single Story") & (dmg == NONE)
        assert int(shops.sum()) == c["one_story_commercial_no_damage"][fire], fire
        assert int(((kind == SFR_ONE) & (dmg == MAJOR)).sum()) == c["one_story_sfr_major"][fire], fire
    assert (c["schools"]["eaton"], c["schools"]["palisades"]) == (70, 100)
    assert (c["one_story_sfr_major"]["eaton"], c["one_story_sfr_major"]["palisades"]) == (13, 22)

    west = eaton.sjoin(aoi_frame("west_altadena_area.geojson"), predicate="intersects")
    assert int(west.DAMAGE.isin([MINOR, MAJOR]).sum()) == values["aoi"]["west_altadena_area"]["minor_or_major"] == 16
    east = eaton.sjoin(aoi_frame("east_altadena_kinneloa.geojson"), predicate="intersects")
    shops = east[east.STRUCTURETYPE.str.startswith("Commercial Building")]
    k = values["aoi"]["east_altadena_kinneloa"]
    assert grade(shops.DAMAGE).value_counts().to_dict() == k["commercial_by_grade"] and len(shops) == k["commercial"]
    village = pal.sjoin(aoi_frame("palisades_village_aoi.geojson"), predicate="intersects")
    assert int((village.DAMAGE == MAJOR).sum()) == values["aoi"]["palisades_village_aoi"]["major"] == 28


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

    e, p = values["eaton"], values["palisades"]
    near7 = within(perimeter, 7000, la).sort_values("BEDS")
    assert near7.BEDS.iloc[1] > near7.BEDS.iloc[0]
    assert [near7.NAME.iloc[0]] == e["fewest_beds_within_7km"]["names"] == ["VERDUGO HILLS HOSPITAL D/P APH"]
    assert int(near7.BEDS.iloc[0]) == e["fewest_beds_within_7km_beds"] == 24
    big = within(perimeter, 5000, la[la.BEDS >= 100])
    assert sorted(big.NAME) == sorted(e["hundred_beds_within_5km"]["names"]) and len(big) == 4

    psych = within(hull, 10_000, la[la.TYPE == "PSYCHIATRIC"])
    assert sorted(psych.NAME) == sorted(p["psychiatric_within_10km"]["names"]) and len(psych) == 7
    assert int(psych.BEDS.sum()) == p["psychiatric_beds_within_10km"] == 267
    children = la[la.TYPE == "CHILDREN"].assign(d=lambda f: f.distance(hull)).sort_values("d")
    assert children.d.iloc[1] - children.d.iloc[0] >= 30
    assert [children.NAME.iloc[0]] == p["children_nearest"]["names"]
    assert children.d.iloc[0] == pytest.approx(p["children_nearest"]["distances_m"][children.NAME.iloc[0]], abs=0.1)
    assert len(within(hull, 10_000, la[la.TRAUMA == "NOT AVAILABLE"])) == p["no_trauma_within_10km"] == 15

    c = values["comparative"]
    for fire, area in (("eaton", perimeter), ("palisades", hull)):
        assert len(within(area, 10_000, la[la.OWNER == "PROPRIETARY"])) == c["proprietary_within_10km"][fire], fire
        acute = within(area, 7500, la[la.TYPE == "GENERAL ACUTE CARE"])
        assert int(acute.BEDS.sum()) == c["acute_beds_within_7500m"][fire], fire
    assert (c["acute_beds_within_7500m"]["eaton"], c["acute_beds_within_7500m"]["palisades"]) == (1910, 1100)

    west = aoi_frame("west_altadena_area.geojson", 26911).geometry.iloc[0]
    pads = within(west, 6000, la[la.HELIPAD == "Y"])
    assert sorted(pads.NAME) == sorted(values["aoi"]["west_altadena_area"]["helipad_within_6km"]["names"])

    maui = hospitals[(hospitals.STATE == "HI") & (hospitals.COUNTY == "MAUI")].to_crs(32604)
    lahaina = values["lahaina"]
    critical = maui[maui.TYPE == "CRITICAL ACCESS"]
    assert (len(critical), int(critical.BEDS.sum())) == (lahaina["critical_access"], lahaina["critical_access_beds"])
    burn = read(root, "lahaina-2023/lahaina_burn_area.geojson", 32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    other = maui[maui.OWNER != "GOVERNMENT - STATE"]
    assert list(other.NAME) == lahaina["not_state_owned"]["names"] == ["MOLOKAI GENERAL HOSPITAL"]
    assert float(other.distance(burn_area).iloc[0]) == pytest.approx(
        lahaina["not_state_owned"]["distances_m"]["MOLOKAI GENERAL HOSPITAL"], abs=0.1
    )


def test_valencia_and_catarroja_values_recomputed_without_the_module(root, values):
    """Clips, buffers, joins and dissolves with GeoPandas for the flood's values."""
    flood = read(root, FLOOD_FILE, 25830)
    water = flood.union_all()
    v = values["valencia"]
    health = read(root, HEALTH_FILE, 25830)

    def near(rows: gpd.GeoDataFrame, metres: float) -> list[str]:
        out = sorted(rows.equipamien[rows.intersects(water.buffer(metres))])
        for shift in (-30, 30):
            assert sorted(rows.equipamien[rows.intersects(water.buffer(metres + shift))]) == out
        return out

    assert len(near(health, 3500)) - len(near(health, 1500)) == v["between_1500_and_3500m"] == 27
    centres = health[health.idsubclase == 13]
    far = sorted(set(centres.equipamien) - set(near(centres, 4000)))
    assert far == sorted(v["centres_beyond_4km"]["names"]) and len(far) == 2
    hospitals = health[health.idsubclase == 14]
    assert near(hospitals, 1100) == sorted(v["hospitals_within_1100m"]["names"])
    assert sorted(hospitals.equipamien) == sorted(v["hospitals"]["names"]) and len(hospitals) == 5
    consultorios = health[health.idsubclase == 18]
    assert len(near(consultorios, 900)) == v["consultorios_within_900m"] == 7
    assert round(100 * 7 / len(consultorios), 1) == v["consultorios_within_900m_pct"]
    ranked = health.assign(d=health.distance(water)).sort_values("d")
    assert ranked.d.iloc[-1] - ranked.d.iloc[-2] >= 30
    assert [ranked.equipamien.iloc[-1]] == v["farthest"]["names"] == ["CONSULTORIO AUXILIAR MASARROCHOS"]
    south = health.sjoin(aoi_frame("valencia_south_area.geojson", 25830), predicate="intersects")
    facilities = values["aoi"]["valencia_south_area"]["facilities"]
    assert sorted(south.equipamien) == sorted(facilities["names"]) and len(south) == 6
    for name, d in zip(south.equipamien, south.distance(water), strict=True):
        assert d == pytest.approx(facilities["distances_m"][name], abs=0.1)
    assert sum(d == 0 for d in facilities["distances_m"].values()) == 3

    c = values["catarroja"]
    grown, shrunk = water.buffer(30), water.buffer(-30)
    lines = read(root, OSM + "lineas.geojson", 25830)
    for key_km, key_pct, tag, value in (
        ("compacted_km_in_flood", "compacted_pct_in_flood", "surface", "compacted"),
        ("bridge_km_in_flood", "bridge_pct_in_flood", "bridge", "yes"),
        (None, "unpaved_pct_in_flood", "surface", "unpaved"),
    ):
        rows = lines[lines[tag] == value]
        wet = gpd.clip(rows, flood).length.sum()
        if key_km:
            assert abs(wet / 1000 - c[key_km]) < 0.02, key_km
        assert abs(100 * wet / rows.length.sum() - c[key_pct]) < 0.1, key_pct
    works = lines[lines.railway == "construction"]
    assert not bool(works.intersects(grown).any()) and not c["construction_rail_any_flooded"]
    assert abs(works.length.sum() / 1000 - c["construction_rail_km"]) < 0.01
    slips = lines[lines.highway == "motorway_link"]
    assert bool(slips.intersects(shrunk).all()) and c["motorway_links_all_flooded"] and len(slips) == 4
    assert abs(slips.length.sum() / 1000 - c["motorway_link_km"]) < 0.001

    polygons = read(root, OSM + "poligonos.geojson", 25830)
    for tag, value, area_key, share_key in (
        ("leisure", "nature_reserve", "nature_reserve_ha_in_flood", "nature_reserve_pct_in_flood"),
        ("natural", "grassland", "grassland_ha_in_flood", "grassland_pct_in_flood"),
        ("natural", "scrub", "scrub_ha_in_flood", None),
    ):
        union = polygons[polygons[tag] == value].dissolve()
        wet_area = gpd.clip(union, flood).area.sum()
        assert abs(wet_area / 1e4 - c[area_key]) <= 0.01 * c[area_key] + 0.05, area_key
        if share_key:
            assert abs(100 * wet_area / union.area.sum() - c[share_key]) < 0.1, share_key
    industrial = polygons[polygons.landuse == "industrial"]
    assert int(industrial.intersects(shrunk).sum()) == c["industrial_in_flood"] == 2
    assert int((~industrial.intersects(grown)).sum()) == c["industrial_dry"] == 2
    points = read(root, OSM + "puntos.geojson", 25830)
    hamlets = points[points.place == "hamlet"]
    assert sorted(hamlets["name"]) == c["hamlets"]["names"] and not bool(hamlets.intersects(grown).any())

    sketch = aoi_frame("catarroja_east_sketch.geojson", 25830)
    k = values["aoi"]["catarroja_east_sketch"]
    cycle = gpd.clip(lines[lines.highway == "cycleway"], sketch)
    assert abs(cycle.length.sum() / 1000 - k["cycleway_km"]) < 0.01
    assert abs(100 * gpd.clip(cycle, flood).length.sum() / cycle.length.sum() - k["cycleway_pct_flooded"]) < 0.1
    assert abs(gpd.clip(lines[lines.highway == "track"], sketch).length.sum() / 1000 - k["track_km"]) < 0.01
    reserve = gpd.clip(polygons[polygons.leisure == "nature_reserve"].dissolve(), sketch)
    assert abs(reserve.area.sum() / 1e4 - k["nature_reserve_ha"]) < 0.1

    public = read(root, PLAN_FILE)
    damage = public.val_dany.map(eur)
    assert damage.sum() == pytest.approx(c["public_total_damage_eur"], abs=0.01)
    assert sorted(public.titulo[damage > 1e6]) == c["public_over_million"]["names"]
    tac = public[public.titulo == "TAC Teatro Auditorio Catarroja"].iloc[0]
    assert eur(tac.val_dany) - eur(tac.subv_apro) == pytest.approx(c["public_tac_shortfall_eur"], abs=0.01)
    assert sorted(public.titulo[public.direccion.str.startswith("Av. Diputació")]) == c["public_diputacio"]["names"]
    prevista = public[public.estado == "Prevista"]
    assert prevista.capa.value_counts().to_dict() == c["public_prevista_by_capa"] and len(prevista) == 13
    schools = public[(public.capa == "Centros educativos") & public.val_dany.notna()]
    unfunded = schools[schools.subv_apro.fillna("").str.strip() == ""]
    assert sorted(unfunded.titulo) == c["public_schools_valued_no_subsidy"]["names"] and len(unfunded) == 4


def test_lahaina_values_recomputed_without_the_module(root, values):
    labels = read(root, "lahaina-2023/Maui_Wildfires_August_0.geojson", 32604)
    area = pd.Series(shapely.area(shapely.make_valid(labels.geometry.values)), index=labels.index)
    cls = labels["class"]
    lahaina = values["lahaina"]
    assert labels.source.value_counts().to_dict() == lahaina["labels_by_source"] and len(labels) == lahaina["labels"]
    intact = area[cls == "Building"].sort_values()
    assert intact.iloc[-1] == pytest.approx(lahaina["largest_intact_m2"], abs=0.1)
    assert int((intact > 500).sum()) == lahaina["intact_over_500m2"] == 15
    assert area[cls == "Damaged Building"].mean() == pytest.approx(lahaina["damaged_mean_m2"], abs=0.1)


# -------------------------------------------------------------------------------------- apartness
def test_every_question_is_apart_from_the_bench_questions(heldout9):
    others = bench_questions(TASKS_FILE) + bench_questions(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += bench_questions(split)
    assert len(others) > 500
    assert not too_close(questions(heldout9), others)


def test_every_question_is_apart_from_the_reading_bank(heldout9):
    assert not too_close(questions(heldout9), reading_bank_questions())


def test_the_questions_are_apart_from_each_other(heldout9):
    mine = questions(heldout9)
    assert not [close for i in range(len(mine)) for close in too_close(mine[i + 1 :], [mine[i]])]
