"""The eighth held-out question split (``bench/heldout8.json``): 61 questions written without looking at how GeoFaham
reads a question (nothing under ``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not run on
them), in four languages, worded as coordinators, analysts and humanitarian workers write (a question after a context
sentence, terse field notes, a hunch to check, grade subsets said by description, exclusions and negations, implied
denominators, numbers and units in words, two typos), each apart from every question the product may have been shaped
on (the bench's tasks, its paraphrase suite, the first seven held-out splits and the planner's reading bank), with
expected values that ``bench/ground_truth_heldout8.py`` computes from the sample data by code of its own (no GeoFaham
import). The checks the held-out splits share (expected-value kinds, the sample data, the reading bank's questions, the
similarity measure) come from the second split's tests."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely

from bench.aoi_files import AOI_FILES, aoi_polygon
from bench.spec import BENCH_DIR, PARAPHRASES_FILE, TASKS_FILE, TaskSpec, load_expected, load_tasks
from tests.test_examples_apart import bench_questions, too_close
from tests.test_heldout2_split import VALUE_KINDS, questions, reading_bank_questions, sample_data

HELDOUT8_FILE = BENCH_DIR / "heldout8.json"
EARLIER_SPLITS = tuple(
    BENCH_DIR / f"{name}.json"
    for name in ("heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7")
)
DESTROYED, NONE = "Destroyed (>50%)", "No Damage"
AFFECTED, MINOR, MAJOR = "Affected (1-9%)", "Minor (10-25%)", "Major (26-50%)"
SFR_ONE, SFR_TALL = "Single Family Residence Single Story", "Single Family Residence Multi Story"
EATON_FILE = "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson"
PALISADES_FILE = "palisades-2025/DINS_2025_Palisades_Public_View.geojson"
HOSPITALS_FILE = "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson"
FLOOD_FILE = "valencia-2024/emsr773_observed_flood_merged.geojson"
PLAN_FILE = "valencia-2024/catarroja_public_buildings_dana.geojson"
OSM = "valencia-2024/osm-catarroja/"
#: the turns whose honest answer is a short breakdown: two to four figures, each told apart by its label
SHORT_BREAKDOWNS = (
    "ho8_eaton_minor_houses_by_floors",
    "ho8_eaton_churches_fate",
    "ho8_palisades_major_houses_by_floors",
    "ho8_cmp_helipad_7km",
    "ho8_cmp_tall_shops_lost",
    "ho8_cmp_non_psych_7500",
    "ho8_catarroja_secondary_segments",
    "ho8_es_cmp_bloques_altos_destruidos",
    "ho8_es_aoi_east_escuelas",
    "ho8_es_plan_cultura_estados",
    "ho8_es_lahaina_clases",
    "ho8_fr_palisades_camping_cars",
    "ho8_pt_cmp_casas_altas_danos_medios",
)
#: one figure per fire: Eaton's, then the Palisades'
PER_FIRE = (
    "ho8_cmp_helipad_7km",
    "ho8_cmp_two_storey_share_of_inventory",
    "ho8_cmp_beds_5km",
    "ho8_cmp_tall_shops_lost",
    "ho8_cmp_non_psych_7500",
    "ho8_es_cmp_bloques_altos_destruidos",
    "ho8_fr_cmp_ecoles_detruites_pct",
    "ho8_pt_cmp_casas_altas_danos_medios",
)
#: thresholds said in words: task -> (the words, the distance in metres the task states)
WORDED_THRESHOLDS = {
    "ho8_eaton_outermost_in_10km": ("ten-kilometre", 10_000),
    "ho8_eaton_no_helipad_7km": ("seven kilometres", 7000),
    "ho8_cmp_helipad_7km": ("seven km", 7000),
    "ho8_cmp_non_psych_7500": ("seven and a half kilometres", 7500),
    "ho8_valencia_900m": ("nine hundred metres", 900),
    "ho8_maui_beds_25km": ("twenty-five kilometres", 25_000),
    "ho8_es_valencia_consultorios_mas_5km": ("cinco kilómetros", 5000),
    "ho8_fr_aoi_village_hopitaux_5500": ("Cinq kilomètres et demi", 5500),
    "ho8_pt_valencia_especialidades_2500": ("dois quilómetros e meio", 2500),
}
DISTANCE_IN_DIGITS = re.compile(
    r"\d+(?:[.,]\d+)?\s*(?:m|km|metres|meters|kilometres|kilómetros|kilomètres|quilómetros)\b"
)


@pytest.fixture(scope="module")
def heldout8() -> list[TaskSpec]:
    return load_tasks(HELDOUT8_FILE)


@pytest.fixture(scope="module")
def values() -> dict:
    return load_expected()["heldout8"]


def read(root: Path, path: str, epsg: int | None = None) -> gpd.GeoDataFrame:
    gdf = gpd.read_file(root / path)
    return gdf.to_crs(epsg) if epsg else gdf


def aoi_frame(name: str, epsg: int | None = None) -> gpd.GeoDataFrame:
    gdf = gpd.GeoDataFrame(geometry=[aoi_polygon(name)], crs=4326)
    return gdf.to_crs(epsg) if epsg else gdf


def eur(text: object) -> float:
    """'1.750.000,00 €' -> 1750000.0; missing or not a figure: 0."""
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return 0.0
    digits = "".join(c for c in str(text) if c.isdigit() or c in ",.").replace(".", "").replace(",", ".")
    return float(digits) if digits else 0.0


# ---------------------------------------------------------------------------------------- the file
def test_every_task_loads_in_the_heldout_split(heldout8):
    assert len(heldout8) == 61
    ids = [t.id for t in heldout8]
    assert len(ids) == len(set(ids)) and all(i.startswith("ho8_") for i in ids)
    assert {t.split for t in heldout8} == {"heldout"}
    assert all(t.offline and not t.follow_ups and t.expectations and t.failure_modes for t in heldout8)
    assert Counter(t.language for t in heldout8) == {"en": 31, "es": 10, "fr": 10, "pt": 10}
    assert all(t.id.startswith(f"ho8_{t.language}_") for t in heldout8 if t.language != "en")
    others = load_tasks(TASKS_FILE) + load_tasks(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += load_tasks(split)
    assert not set(ids) & {t.id for t in others}


def test_personas_and_categories_are_varied(heldout8):
    personas = Counter(t.persona for t in heldout8)
    assert len(personas) == 5 and min(personas.values()) >= 8, personas
    categories = Counter(t.category for t in heldout8)
    assert {"poi_impact", "building_damage", "clustering_aggregation", "comparative", "infrastructure"} <= set(
        categories
    )
    assert {"land_cover", "flood"} <= set(categories) and categories["comparative"] >= 8, categories


def test_every_expectation_points_into_the_heldout8_values(heldout8):
    expected = load_expected()
    for task in heldout8:
        for e in task.all_expectations():
            assert e.ref is not None and e.ref.startswith("heldout8."), (task.id, e.id)
            assert e.description.strip(), (task.id, e.id)
            assert VALUE_KINDS[e.kind](e.resolve(expected)), (task.id, e.id, e.resolve(expected))


def test_the_split_asks_every_kind_of_question(heldout8):
    """Counts, shares, breakdowns, names, distances, yes/no, areas, lengths, sums and maxima; several figures in one
    turn; thresholds and rings in metres and kilometres, all in metric units."""
    kinds = Counter(e.kind for t in heldout8 for e in t.expectations)
    assert all(kinds[k] >= 2 for k in ("count", "value", "names", "distance", "boolean")), kinds
    assert kinds["count_by"] >= 4, kinds
    units = {e.unit for t in heldout8 for e in t.expectations}
    assert {"%", "m", "km", "m2", "ha", "km2", "EUR"} <= units
    measures = {e.measure for t in heldout8 for e in t.expectations}
    assert {"sum", "max", "share", "area", "length"} <= measures
    assert sum(len(t.expectations) > 1 for t in heldout8) >= 30
    assert {t.aoi.kind for t in heldout8} == {"damage", "hazard", "layer"}
    assert sum(t.buffer_m is not None for t in heldout8) >= 12  # within / beyond stated distances
    words = " ".join(t.question for t in heldout8)
    for attribute in ("OWNER", "HELIPAD", "BEDS", "TRAUMA", "CRITICAL ACCESS", "idsubclase", "telefono", "val_dany"):
        assert attribute in words, attribute
    assert "subv_apro" in words
    for unit in ("miles", "millas", "feet", "acres"):  # every threshold and figure is asked in metric units
        assert not re.search(rf"\b{unit}\b", words), unit
    assert all(e.in_answer for t in heldout8 for e in t.expectations if e.kind != "count_by")


def test_thresholds_said_in_words_are_the_stated_distances(heldout8):
    by_id = {t.id: t for t in heldout8}
    for task_id, (words, metres) in WORDED_THRESHOLDS.items():
        task = by_id[task_id]
        assert words in task.question and task.buffer_m == metres, task_id
        assert not DISTANCE_IN_DIGITS.search(task.question), task_id  # the distance is said in words only
    assert "um décimo de hectare" in by_id["ho8_pt_lahaina_intactos_grandes"].question
    assert "trois cents mètres carrés" in by_id["ho8_fr_lahaina_petits_endommages"].question
    assert "un hectare" in by_id["ho8_fr_lahaina_fonds_plus_hectare"].question


def test_short_breakdowns_are_two_to_four_labelled_figures(heldout8):
    """A short breakdown's figures are told apart by their labels: the groups of one count_by (two to four of them,
    beside an unlabelled total), or two to four counts with a grade, an event or a relation each."""
    expected = load_expected()
    by_id = {t.id: t for t in heldout8}
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


def test_several_figures_carry_their_labels(heldout8):
    """Grades, events, relations and measures label the figures a turn asks for together."""
    by_id = {t.id: t for t in heldout8}
    for task_id in ("ho8_eaton_churches_fate", "ho8_es_aoi_east_escuelas"):
        assert [e.group for e in by_id[task_id].expectations] == ["destroyed", "none"], task_id
    for task_id in PER_FIRE:
        assert [e.events for e in by_id[task_id].expectations] == [[11], [12, 13, 14]], task_id
    assert [e.relation for e in by_id["ho8_catarroja_secondary_segments"].expectations] == ["inside", "outside"]
    assert [e.relation for e in by_id["ho8_es_valencia_consultorios_mas_5km"].expectations] == ["outside", None]
    for task_id in ("ho8_maui_beds_25km", "ho8_fr_aoi_village_hopitaux_5500"):
        assert [e.measure for e in by_id[task_id].expectations] == [None, None, "sum"], task_id
    assert [e.measure for e in by_id["ho8_es_plan_colegios_valorados"].expectations] == [None, "sum"]
    assert [e.measure for e in by_id["ho8_cmp_beds_5km"].expectations] == ["sum", "sum"]
    for task_id in (
        "ho8_catarroja_marsh_km2",
        "ho8_catarroja_oneway_share",
        "ho8_fr_catarroja_emprises_scolaires",
        "ho8_fr_aoi_sketch_zone_industrielle",
        "ho8_fr_catarroja_plans_eau",
    ):
        assert [e.measure for e in by_id[task_id].expectations][1] == "share", task_id
    assert [e.measure for e in by_id["ho8_pt_plano_mais_caro"].expectations] == [None, "max"]
    assert [e.kind for e in by_id["ho8_catarroja_trunk_untouched"].expectations] == ["boolean", "value"]


def test_aoi_files_are_the_ones_the_runner_writes(heldout8):
    with_files = [t for t in heldout8 if t.input_files]
    assert len(with_files) >= 10
    assert {name for t in with_files for name in t.input_files} == set(AOI_FILES)
    for task in with_files:
        assert all(name in AOI_FILES for name in task.input_files), task.id
        assert all(name in task.question for name in task.input_files), task.id  # the question names its area
        assert task.aoi.kind == "layer" and task.aoi.layers == task.input_files, task.id


def test_the_cli_and_the_kept_runs_know_the_split():
    from bench.cli import build_parser
    from bench.runs import SPLIT_FILES

    args = build_parser().parse_args(["tasks", "--tasks-file", "heldout8"])
    assert args.tasks_file == HELDOUT8_FILE
    args = build_parser().parse_args(["run", "--tasks-file", "heldout8", "--offline"])
    assert args.tasks_file == HELDOUT8_FILE
    assert SPLIT_FILES["heldout8"] == HELDOUT8_FILE.name


def test_the_ground_truth_reuses_the_earlier_splits_helpers():
    """Reading, projecting and tabulating are the first split's code, the threshold guard and the area and length
    helpers the third split's, the 'nearest are apart' guard and the Palisades hull the fourth split's, the AOI edge
    guard and the 'firmly inside or outside' test the sixth split's, the label-size guard and the 'farthest is apart'
    guard the seventh split's."""
    import bench.ground_truth_heldout as first
    import bench.ground_truth_heldout3 as third
    import bench.ground_truth_heldout4 as fourth
    import bench.ground_truth_heldout6 as sixth
    import bench.ground_truth_heldout7 as seventh
    import bench.ground_truth_heldout8 as eighth

    for name in ("Layers", "geoms", "touching", "metres", "ranked", "listing", "tally", "pct", "euros", "hospitals"):
        assert getattr(eighth, name) is getattr(first, name), name
    for name in ("assert_clear", "clipped_km", "hectares", "km2", "projected_aoi"):
        assert getattr(eighth, name) is getattr(third, name), name
    for name in ("assert_apart", "palisades_hull"):
        assert getattr(eighth, name) is getattr(fourth, name), name
    for name in ("assert_off_edge", "unsure"):
        assert getattr(eighth, name) is getattr(sixth, name), name
    for name in ("assert_sizes_clear", "farthest_apart"):
        assert getattr(eighth, name) is getattr(seventh, name), name


# ------------------------------------------------------------------------------------ ground truth
@pytest.fixture(scope="module")
def root() -> Path:
    return sample_data()


def test_expected_heldout8_values_are_what_the_module_computes(root):
    from bench.ground_truth_heldout8 import heldout8 as compute_heldout8

    fresh = json.loads(json.dumps(compute_heldout8(root), ensure_ascii=False))
    assert fresh["heldout8"] == load_expected()["heldout8"]


def test_dins_values_recomputed_without_the_module(root, values):
    """The DINS figures again, with plain pandas filters and spatial joins."""
    eaton = read(root, EATON_FILE)
    kind, dmg = eaton.STRUCTURETYPE, eaton.DAMAGE
    e = values["eaton"]
    assert int(((kind == SFR_TALL) & (dmg == AFFECTED)).sum()) == e["multi_story_sfr_affected"] == 46
    assert int(((kind == SFR_ONE) & (dmg == AFFECTED)).sum()) == e["one_story_sfr_affected"] == 159
    minor = eaton[kind.str.startswith("Single Family") & (dmg == MINOR)]
    assert minor.STRUCTURETYPE.value_counts().to_dict() == e["sfr_minor_by_type"] and len(minor) == e["sfr_minor"]
    assert round(100 * (kind == "Utility Misc Structure").mean(), 1) == e["outbuildings_pct_of_inspected"] == 26.2
    churches = eaton[kind == "Church"].DAMAGE.value_counts().to_dict()
    assert churches == {NONE: e["churches_no_damage"], DESTROYED: e["churches_destroyed"]} == {NONE: 3, DESTROYED: 1}
    shops = eaton[kind.str.startswith("Commercial Building")]
    assert int((shops.DAMAGE == NONE).sum()) == e["commercial_no_damage"] == 33
    assert round(100 * (shops.DAMAGE == NONE).mean(), 1) == e["commercial_no_damage_pct"]

    pal = read(root, PALISADES_FILE)
    kind, dmg = pal.STRUCTURETYPE, pal.DAMAGE
    p = values["palisades"]
    assert int(((kind == "Church") & (dmg != DESTROYED)).sum()) == p["churches_not_destroyed"] == 7
    major = pal[kind.str.startswith("Single Family") & (dmg == MAJOR)]
    assert major.STRUCTURETYPE.value_counts().to_dict() == p["sfr_major_by_type"] and len(major) == p["sfr_major"]
    lost = pal[dmg == DESTROYED]
    assert int((~lost.STRUCTURETYPE.str.startswith("Single Family")).sum()) == p["not_single_family_destroyed"] == 1771
    flats = pal[kind == "Multi Family Residence Multi Story"]
    assert round(100 * (flats.DAMAGE == NONE).mean(), 1) == p["multi_story_flats_no_damage_pct"] == 57.5
    clean = pal[dmg == NONE]
    assert round(100 * (clean.STRUCTURETYPE == "Utility Misc Structure").mean(), 1) == 13.0
    assert p["outbuildings_pct_of_no_damage"] == 13.0
    motor = pal[kind == "Motor Home"]
    grades = motor.DAMAGE.str.split(" ").str[0].str.lower().replace({"no": "none"}).value_counts().to_dict()
    assert grades == p["motor_homes_by_grade"] and len(motor) == p["motor_homes"] == 19
    light = kind.str.startswith("Commercial Building") & dmg.isin([AFFECTED, MINOR])
    assert int(light.sum()) == p["commercial_light_damage"] == 31

    c = values["comparative"]
    for fire, dins in (("eaton", eaton), ("palisades", pal)):
        kind, dmg = dins.STRUCTURETYPE, dins.DAMAGE
        assert round(100 * (kind == SFR_TALL).mean(), 1) == c["multi_story_sfr_pct_of_inspected"][fire], fire
        tall_shops = (kind == "Commercial Building Multi Story") & (dmg == DESTROYED)
        assert int(tall_shops.sum()) == c["multi_story_commercial_destroyed"][fire], fire
        tall_flats = (kind == "Multi Family Residence Multi Story") & (dmg == DESTROYED)
        assert int(tall_flats.sum()) == c["multi_story_flats_destroyed"][fire], fire
        schools = dins[kind == "School"]
        assert round(100 * (schools.DAMAGE == DESTROYED).mean(), 1) == c["schools_destroyed_pct"][fire], fire
        assert int(((kind == SFR_TALL) & dmg.isin([MINOR, MAJOR])).sum()) == c["multi_story_sfr_minor_or_major"][fire]
    assert (c["multi_story_flats_destroyed"]["eaton"], c["multi_story_flats_destroyed"]["palisades"]) == (2, 122)

    west = eaton.sjoin(aoi_frame("west_altadena_area.geojson"), predicate="intersects")
    w = values["aoi"]["west_altadena_area"]
    wheeled = west[west.STRUCTURETYPE.str.startswith("Mobile Home") | (west.STRUCTURETYPE == "Motor Home")]
    assert (int((wheeled.DAMAGE == DESTROYED).sum()), len(wheeled)) == (w["wheeled_homes_destroyed"], 4)
    tall = west[west.STRUCTURETYPE == SFR_TALL]
    assert int((tall.DAMAGE != NONE).sum()) == w["multi_story_sfr_damaged"] == 65
    east = eaton.sjoin(aoi_frame("east_altadena_kinneloa.geojson"), predicate="intersects")
    k = values["aoi"]["east_altadena_kinneloa"]
    assert round(100 * (east.DAMAGE == DESTROYED).mean(), 1) == k["destroyed_pct"] == 28.4
    schools = east[east.STRUCTURETYPE == "School"].DAMAGE.value_counts().to_dict()
    assert schools == {DESTROYED: k["schools_destroyed"], NONE: k["schools_no_damage"]} == {DESTROYED: 7, NONE: 9}
    village = pal.sjoin(aoi_frame("palisades_village_aoi.geojson"), predicate="intersects")
    shops = village[village.STRUCTURETYPE == "Commercial Building Multi Story"]
    assert len(shops) == 30
    assert (
        round(100 * (shops.DAMAGE == DESTROYED).mean(), 1)
        == values["aoi"]["palisades_village_aoi"]["multi_story_commercial_destroyed_pct"]
    )


def test_hospital_values_recomputed_without_the_module(root, values):
    """Buffers and joins instead of distances to the polygon; each threshold gives the same hospitals 30 m either
    side of it (no hospital is near a threshold), and each 'nearest' or 'farthest' is 30 m ahead of the next one."""
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

    def by_distance(area: shapely.Geometry, rows: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        return rows.assign(d=rows.distance(area)).sort_values("d")

    e, p = values["eaton"], values["palisades"]
    nonprofit = by_distance(perimeter, la[la.OWNER == "NON-PROFIT"])
    assert nonprofit.d.iloc[1] - nonprofit.d.iloc[0] >= 30
    assert [nonprofit.NAME.iloc[0]] == e["nonprofit_nearest"]["names"]
    assert nonprofit.d.iloc[0] == pytest.approx(e["nonprofit_nearest"]["distances_m"][nonprofit.NAME.iloc[0]], abs=0.1)
    inner = by_distance(perimeter, within(perimeter, 10_000, la))
    assert inner.d.iloc[-1] - inner.d.iloc[-2] >= 30
    assert [inner.NAME.iloc[-1]] == e["farthest_within_10km"]["names"] == ["ALHAMBRA HOSPITAL MEDICAL CENTER"]
    grounded = within(perimeter, 7000, la[la.HELIPAD == "N"])
    assert sorted(grounded.NAME) == sorted(e["no_helipad_within_7km"]["names"]) and len(grounded) == 6

    federal = by_distance(hull, la[la.OWNER == "GOVERNMENT - FEDERAL"])
    assert federal.d.iloc[1] - federal.d.iloc[0] >= 30
    assert [federal.NAME.iloc[0]] == p["federal_nearest"]["names"] == ["WEST LOS ANGELES VA MEDICAL CENTER"]
    trauma = within(hull, 12_000, la[la.TRAUMA != "NOT AVAILABLE"])
    assert sorted(trauma.NAME) == sorted(p["trauma_within_12km"]["names"]) and len(trauma) == 3

    c = values["comparative"]
    for fire, area in (("eaton", perimeter), ("palisades", hull)):
        assert len(within(area, 7000, la[la.HELIPAD == "Y"])) == c["helipad_within_7km"][fire], fire
        assert int(within(area, 5000, la).BEDS.sum()) == c["beds_within_5km"][fire], fire
        assert len(within(area, 7500, la[la.TYPE != "PSYCHIATRIC"])) == c["not_psychiatric_within_7500m"][fire], fire
    assert (c["beds_within_5km"]["eaton"], c["beds_within_5km"]["palisades"]) == (1274, 1047)

    east = aoi_frame("east_altadena_kinneloa.geojson", 26911).geometry.iloc[0]
    near_east = within(east, 5000, la)
    assert sorted(near_east.NAME) == sorted(values["aoi"]["east_altadena_kinneloa"]["hospitals_within_5km"]["names"])
    village = aoi_frame("palisades_village_aoi.geojson", 26911).geometry.iloc[0]
    near_village = within(village, 5500, la)
    v = values["aoi"]["palisades_village_aoi"]
    assert sorted(near_village.NAME) == sorted(v["hospitals_within_5500m"]["names"])
    assert int(near_village.BEDS.sum()) == v["beds_within_5500m"] == 1047

    burn = read(root, "lahaina-2023/lahaina_burn_area.geojson", 32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    maui = hospitals[(hospitals.STATE == "HI") & (hospitals.COUNTY == "MAUI")].to_crs(32604)
    near_maui = within(burn_area, 25_000, maui)
    lahaina = values["lahaina"]
    assert sorted(near_maui.NAME) == sorted(lahaina["within_25km"]["names"])
    assert int(near_maui.BEDS.sum()) == lahaina["beds_within_25km"] == 223
    critical = by_distance(burn_area, maui[maui.TYPE == "CRITICAL ACCESS"])
    assert critical.d.iloc[-1] - critical.d.iloc[-2] >= 30
    assert [critical.NAME.iloc[-1]] == lahaina["critical_access_farthest"]["names"] == ["MOLOKAI GENERAL HOSPITAL"]


def test_valencia_and_catarroja_values_recomputed_without_the_module(root, values):
    """Clips, buffers, joins and dissolves with GeoPandas for the flood's values."""
    flood = read(root, FLOOD_FILE, 25830)
    water = flood.union_all()
    v = values["valencia"]
    health = read(root, "valencia-2024/valencia_city_health_facilities.geojson", 25830)

    def near(rows: gpd.GeoDataFrame, metres: float) -> list[str]:
        out = sorted(rows.equipamien[rows.intersects(water.buffer(metres))])
        for shift in (-30, 30):
            assert sorted(rows.equipamien[rows.intersects(water.buffer(metres + shift))]) == out
        return out

    silent = health[health.telefono.isna()].assign(d=lambda f: f.distance(water))
    assert sorted(silent.equipamien) == sorted(v["no_phone"]["names"]) and len(silent) == 2
    for name, d in zip(silent.equipamien, silent.d, strict=True):
        assert d == pytest.approx(v["no_phone"]["distances_m"][name], abs=0.1)
    assert len(near(health, 900)) == v["within_900m"] == 15
    hospitals = health[health.idsubclase == 14].assign(d=lambda f: f.distance(water)).sort_values("d")
    assert hospitals.d.iloc[-1] - hospitals.d.iloc[-2] >= 30
    assert [hospitals.equipamien.iloc[-1]] == v["hospital_farthest"]["names"]
    assert near(health[health.idsubclase == 19], 2500) == sorted(v["speciality_within_2500m"]["names"])
    consultorios = health[health.idsubclase == 18]
    far = sorted(set(consultorios.equipamien) - set(near(consultorios, 5000)))
    assert far == sorted(v["consultorios_beyond_5km"]["names"]) and len(far) == 3
    south = health.sjoin(aoi_frame("valencia_south_area.geojson", 25830), predicate="intersects")
    dry = south[~south.intersects(water)].assign(d=lambda f: f.distance(water)).sort_values("d")
    assert dry.d.iloc[1] - dry.d.iloc[0] >= 30 and dry.d.iloc[0] >= 30
    assert [dry.equipamien.iloc[0]] == values["aoi"]["valencia_south_area"]["dry_nearest"]["names"]

    c = values["catarroja"]
    grown, shrunk = water.buffer(30), water.buffer(-30)
    lines = read(root, OSM + "lineas.geojson", 25830)
    trunk = lines[lines.highway == "trunk"]
    assert not bool(trunk.intersects(grown).any()) and not c["trunk_any_flooded"]
    assert abs(trunk.length.sum() / 1000 - c["trunk_km"]) < 0.02
    oneway = lines[lines.oneway == "yes"]
    wet = gpd.clip(oneway, flood).length.sum()
    assert abs(wet / 1000 - c["oneway_km_in_flood"]) < 0.02
    assert abs(100 * wet / oneway.length.sum() - c["oneway_pct_in_flood"]) < 0.1
    for key, value in (("dirt_pct_in_flood", "dirt"), ("asphalt_pct_in_flood", "asphalt")):
        rows = lines[lines.surface == value]
        assert abs(100 * gpd.clip(rows, flood).length.sum() / rows.length.sum() - c[key]) < 0.1, key
    secondary = lines[lines.highway == "secondary"]
    inside = secondary.intersects(water)
    assert int(secondary.intersects(shrunk).sum()) == int(inside.sum()) == c["secondary_in_flood"] == 32
    assert int((~secondary.intersects(grown)).sum()) == c["secondary_dry"] == 16

    polygons = read(root, OSM + "poligonos.geojson", 25830)
    for tag, value, area_key, share_key, scale in (
        ("amenity", "school", "school_grounds_ha_in_flood", "school_grounds_pct_in_flood", 1e4),
        ("natural", "water", "water_ha_in_flood", "water_pct_in_flood", 1e4),
        ("natural", "wetland", "wetland_km2_in_flood", "wetland_pct_in_flood", 1e6),
    ):
        union = polygons[polygons[tag] == value].dissolve()
        wet_area = gpd.clip(union, flood).area.sum()
        assert abs(wet_area / scale - c[area_key]) <= 0.01 * c[area_key] + 0.05, area_key
        assert abs(100 * wet_area / union.area.sum() - c[share_key]) < 0.1, share_key
    sketch = aoi_frame("catarroja_east_sketch.geojson", 25830)
    industry = gpd.clip(polygons[polygons.landuse == "industrial"].dissolve(), sketch)
    industry_wet = gpd.clip(industry, flood).area.sum()
    k = values["aoi"]["catarroja_east_sketch"]
    assert abs(industry_wet / 1e4 - k["industrial_ha_flooded"]) < 0.1
    assert abs(100 * industry_wet / industry.area.sum() - k["industrial_pct_flooded"]) < 0.1
    points = read(root, OSM + "puntos.geojson", 25830)
    stops = points[points.railway == "stop"].sjoin(sketch, predicate="intersects")
    assert len(stops) == k["rail_stops"] == 3
    assert not bool(stops.intersects(grown).any()) and not k["rail_stops_any_flooded"]

    public = read(root, PLAN_FILE)
    culture = public[public.capa == "Centros culturales"]
    assert culture.estado.value_counts().to_dict() == c["public_culture_by_estado"]
    assert len(culture) == c["public_culture"] == 5
    museum = public[public.titulo == "Museo Antonia Mir"].iloc[0]
    assert eur(museum.val_dany) - eur(museum.subv_apro) == pytest.approx(c["public_museum_uncovered_eur"], abs=0.01)
    valued = public[(public.capa == "Centros educativos") & public.val_dany.notna()]
    assert len(valued) == c["public_schools_valued"] == 5
    assert sum(eur(x) for x in valued.val_dany) == pytest.approx(c["public_schools_valued_eur"], abs=0.01)
    cami = public[public.direccion.fillna("").str.startswith("Camí Real")]
    assert sorted(cami.titulo) == c["public_cami_real"]["names"] and len(cami) == 3
    damage = public.val_dany.map(eur)
    assert [public.titulo[damage.idxmax()]] == c["public_costliest"] == ["TAC Teatro Auditorio Catarroja"]
    assert damage.max() == pytest.approx(c["public_costliest_eur"], abs=0.01)
    assert damage.sort_values().iloc[-2] < damage.max()


def test_lahaina_values_recomputed_without_the_module(root, values):
    labels = read(root, "lahaina-2023/Maui_Wildfires_August_0.geojson", 32604)
    area = pd.Series(shapely.area(shapely.make_valid(labels.geometry.values)), index=labels.index)
    cls = labels["class"]
    lahaina = values["lahaina"]
    assert cls.value_counts().to_dict() == lahaina["labels_by_class"] and len(labels) == lahaina["labels"] == 106
    damaged = area[cls == "Damaged Building"].sort_values()
    assert damaged.iloc[0] == pytest.approx(lahaina["smallest_damaged_m2"], abs=0.1)
    assert damaged.iloc[1] > 2 * damaged.iloc[0]
    assert int((damaged < 300).sum()) == lahaina["damaged_under_300m2"] == 10
    assert int((area[cls == "Building"] > 1000).sum()) == lahaina["intact_over_tenth_ha"] == 9
    assert int((area[cls == "Background"] > 10_000).sum()) == lahaina["background_over_1ha"] == 10


# -------------------------------------------------------------------------------------- apartness
def test_every_question_is_apart_from_the_bench_questions(heldout8):
    others = bench_questions(TASKS_FILE) + bench_questions(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += bench_questions(split)
    assert len(others) > 500
    assert not too_close(questions(heldout8), others)


def test_every_question_is_apart_from_the_reading_bank(heldout8):
    assert not too_close(questions(heldout8), reading_bank_questions())


def test_the_questions_are_apart_from_each_other(heldout8):
    mine = questions(heldout8)
    assert not [close for i in range(len(mine)) for close in too_close(mine[i + 1 :], [mine[i]])]
