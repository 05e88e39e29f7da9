"""The seventh held-out question split (``bench/heldout7.json``): 63 questions written without looking at how GeoFaham
reads a question (nothing under ``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not run on
them), in four languages, worded as coordinators and analysts write (notes-to-self, imperatives, grade subsets said
indirectly, exclusions in every position, implied denominators, complements and rings), each apart from every
question the product may have been shaped on (the bench's tasks, its paraphrase suite, the first six held-out splits
and the planner's reading bank), with expected values that ``bench/ground_truth_heldout7.py`` computes from the sample
data by code of its own (no GeoFaham import). The checks the held-out splits share (expected-value kinds, the sample
data, the reading bank's questions, the similarity measure) come from the second split's tests."""

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

HELDOUT7_FILE = BENCH_DIR / "heldout7.json"
EARLIER_SPLITS = tuple(
    BENCH_DIR / f"{name}.json" for name in ("heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6")
)
DESTROYED, NONE = "Destroyed (>50%)", "No Damage"
STANDING = ["Affected (1-9%)", "Minor (10-25%)", "Major (26-50%)"]
EATON_FILE = "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson"
PALISADES_FILE = "palisades-2025/DINS_2025_Palisades_Public_View.geojson"
HOSPITALS_FILE = "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson"
FLOOD_FILE = "valencia-2024/emsr773_observed_flood_merged.geojson"
PLAN_FILE = "valencia-2024/catarroja_public_buildings_dana.geojson"
OSM = "valencia-2024/osm-catarroja/"
#: the turns whose honest answer is a short breakdown: two to four figures, each told apart by its label
SHORT_BREAKDOWNS = (
    "ho7_eaton_houses_standing_by_storey",
    "ho7_palisades_lost_mobile_homes_by_width",
    "ho7_palisades_low_rise_flats_by_grade",
    "ho7_cmp_acute_within_10km",
    "ho7_aoi_west_multi_storey_houses",
    "ho7_aoi_east_lost_by_kind",
    "ho7_es_cmp_comercios_varias_plantas_sin_danos",
    "ho7_es_cmp_hospitales_5_10km",
    "ho7_es_catarroja_hitos",
    "ho7_es_catarroja_plan_estados",
    "ho7_fr_cmp_affected_par_feu",
    "ho7_pt_cmp_infraestrutura_sem_dano",
)
#: one figure per fire: Eaton's, then the Palisades'
PER_FIRE = (
    "ho7_cmp_one_storey_houses_untouched_pct",
    "ho7_cmp_acute_within_10km",
    "ho7_cmp_outbuildings_lost_pct",
    "ho7_es_cmp_comercios_varias_plantas_sin_danos",
    "ho7_es_cmp_hospitales_5_10km",
    "ho7_fr_cmp_affected_par_feu",
    "ho7_fr_cmp_part_maisons_etages",
    "ho7_pt_cmp_infraestrutura_sem_dano",
)


@pytest.fixture(scope="module")
def heldout7() -> list[TaskSpec]:
    return load_tasks(HELDOUT7_FILE)


@pytest.fixture(scope="module")
def values() -> dict:
    return load_expected()["heldout7"]


def read(root: Path, path: str, epsg: int | None = None) -> gpd.GeoDataFrame:
    gdf = gpd.read_file(root / path)
    return gdf.to_crs(epsg) if epsg else gdf


def aoi_frame(name: str, epsg: int | None = None) -> gpd.GeoDataFrame:
    gdf = gpd.GeoDataFrame(geometry=[aoi_polygon(name)], crs=4326)
    return gdf.to_crs(epsg) if epsg else gdf


def eur(texts: pd.Series) -> float:
    """'1.750.000,00 €' -> 1750000.0, summed; missing or not a figure: 0."""
    total = 0.0
    for text in texts.dropna():
        digits = "".join(c for c in str(text) if c.isdigit() or c in ",.").replace(".", "").replace(",", ".")
        total += float(digits) if digits else 0.0
    return total


# ---------------------------------------------------------------------------------------- the file
def test_every_task_loads_in_the_heldout_split(heldout7):
    assert len(heldout7) == 63
    ids = [t.id for t in heldout7]
    assert len(ids) == len(set(ids)) and all(i.startswith("ho7_") for i in ids)
    assert {t.split for t in heldout7} == {"heldout"}
    assert all(t.offline and not t.follow_ups and t.expectations for t in heldout7)
    assert Counter(t.language for t in heldout7) == {"en": 32, "es": 11, "fr": 10, "pt": 10}
    assert all(t.id.startswith(f"ho7_{t.language}_") for t in heldout7 if t.language != "en")
    others = load_tasks(TASKS_FILE) + load_tasks(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += load_tasks(split)
    assert not set(ids) & {t.id for t in others}


def test_personas_and_categories_are_varied(heldout7):
    personas = Counter(t.persona for t in heldout7)
    assert len(personas) == 5 and min(personas.values()) >= 8, personas
    categories = Counter(t.category for t in heldout7)
    assert {"poi_impact", "building_damage", "clustering_aggregation", "comparative", "infrastructure"} <= set(
        categories
    )
    assert {"land_cover", "flood"} <= set(categories) and categories["comparative"] >= 8, categories


def test_every_expectation_points_into_the_heldout7_values(heldout7):
    expected = load_expected()
    for task in heldout7:
        for e in task.all_expectations():
            assert e.ref is not None and e.ref.startswith("heldout7."), (task.id, e.id)
            assert e.description.strip(), (task.id, e.id)
            assert VALUE_KINDS[e.kind](e.resolve(expected)), (task.id, e.id, e.resolve(expected))


def test_the_split_asks_every_kind_of_question(heldout7):
    """Counts, shares, breakdowns, names, distances, yes/no, areas, lengths, sums and maxima; several figures in one
    turn; thresholds and rings in metres and kilometres, all in metric units."""
    kinds = Counter(e.kind for t in heldout7 for e in t.expectations)
    assert all(kinds[k] >= 2 for k in ("count", "value", "names", "distance")), kinds
    assert kinds["count_by"] >= 4 and kinds["boolean"] >= 1, kinds
    units = {e.unit for t in heldout7 for e in t.expectations}
    assert {"%", "m", "km", "m2", "ha", "km2", "EUR"} <= units
    measures = {e.measure for t in heldout7 for e in t.expectations}
    assert {"sum", "max", "share", "area", "length"} <= measures
    assert sum(len(t.expectations) > 1 for t in heldout7) >= 30
    assert {t.aoi.kind for t in heldout7} == {"damage", "hazard", "layer"}
    assert sum(t.buffer_m is not None for t in heldout7) >= 12  # within / beyond / between stated distances
    words = " ".join(t.question for t in heldout7)
    for attribute in ("OWNER", "HELIPAD", "BEDS", "CITY", "TRAUMA", "GENERAL ACUTE CARE", "idsubclase", "val_dany"):
        assert attribute in words, attribute
    for unit in ("miles", "millas", "feet", "acres"):  # every threshold and figure is asked in metric units
        assert not re.search(rf"\b{unit}\b", words), unit
    assert all(e.in_answer for t in heldout7 for e in t.expectations if e.kind != "count_by")


def test_short_breakdowns_are_two_to_four_labelled_figures(heldout7):
    """A short breakdown's figures are told apart by their labels: the groups of one count_by (two to four of them,
    beside an unlabelled total), or two to four counts with a grade, an event or a relation each."""
    expected = load_expected()
    by_id = {t.id: t for t in heldout7}
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


def test_several_figures_carry_their_labels(heldout7):
    """Grades, events, relations and measures label the figures a turn asks for together."""
    by_id = {t.id: t for t in heldout7}
    assert [e.group for e in by_id["ho7_aoi_west_multi_storey_houses"].expectations] == ["destroyed", "none"]
    for task_id in PER_FIRE:
        assert [e.events for e in by_id[task_id].expectations] == [[11], [12, 13, 14]], task_id
    assert [e.relation for e in by_id["ho7_es_catarroja_hitos"].expectations] == ["inside", "outside"]
    for task_id in (
        "ho7_eaton_glendale_8km",
        "ho7_aoi_west_acute_5km",
        "ho7_lahaina_azure_labels",
        "ho7_pt_catarroja_plano_sociossanitarios_total",
    ):
        assert [e.measure for e in by_id[task_id].expectations] == [None, "sum"], task_id
    for task_id in ("ho7_palisades_civil_6km", "ho7_es_palisades_estatales_6km"):
        assert [e.measure for e in by_id[task_id].expectations] == [None, None, "sum"], task_id
    for task_id in (
        "ho7_catarroja_residential_share",
        "ho7_aoi_sketch_flooded_share",
        "ho7_fr_catarroja_residentiel_ha",
        "ho7_pt_aoi_sketch_ruas_residenciais",
    ):
        assert [e.measure for e in by_id[task_id].expectations][1] == "share", task_id
    assert [e.measure for e in by_id["ho7_eaton_most_beds_within_5km"].expectations] == [None, "max"]
    assert [e.measure for e in by_id["ho7_es_lahaina_mayor_danado"].expectations] == ["max"]


def test_aoi_files_are_the_ones_the_runner_writes(heldout7):
    with_files = [t for t in heldout7 if t.input_files]
    assert len(with_files) >= 10
    assert {name for t in with_files for name in t.input_files} == set(AOI_FILES)
    for task in with_files:
        assert all(name in AOI_FILES for name in task.input_files), task.id
        assert all(name in task.question for name in task.input_files), task.id  # the question names its area
        assert task.aoi.kind == "layer" and task.aoi.layers == task.input_files, task.id


def test_the_cli_and_the_kept_runs_know_the_split():
    from bench.cli import build_parser
    from bench.runs import SPLIT_FILES

    args = build_parser().parse_args(["tasks", "--tasks-file", "heldout7"])
    assert args.tasks_file == HELDOUT7_FILE
    args = build_parser().parse_args(["run", "--tasks-file", "heldout7", "--offline"])
    assert args.tasks_file == HELDOUT7_FILE
    assert SPLIT_FILES["heldout7"] == HELDOUT7_FILE.name


def test_the_ground_truth_reuses_the_earlier_splits_helpers():
    """Reading, projecting and tabulating are the first split's code, the threshold guard and the area and length
    helpers the third split's, the 'nearest are apart' guard and the Palisades hull the fourth split's, the AOI edge
    guard and the 'every feature firmly inside or outside' guard the sixth split's (on the fifth split's
    ``assert_firmly``)."""
    import bench.ground_truth_heldout as first
    import bench.ground_truth_heldout3 as third
    import bench.ground_truth_heldout4 as fourth
    import bench.ground_truth_heldout5 as fifth
    import bench.ground_truth_heldout6 as sixth
    import bench.ground_truth_heldout7 as seventh

    for name in ("Layers", "geoms", "touching", "metres", "ranked", "listing", "tally", "pct", "euros", "hospitals"):
        assert getattr(seventh, name) is getattr(first, name), name
    for name in ("assert_clear", "clipped_km", "hectares", "km2", "projected_aoi"):
        assert getattr(seventh, name) is getattr(third, name), name
    for name in ("assert_apart", "palisades_hull"):
        assert getattr(seventh, name) is getattr(fourth, name), name
    assert sixth.assert_firmly is fifth.assert_firmly
    for name in ("assert_off_edge", "assert_all_firm"):
        assert getattr(seventh, name) is getattr(sixth, name), name


# ------------------------------------------------------------------------------------ ground truth
@pytest.fixture(scope="module")
def root() -> Path:
    return sample_data()


def test_expected_heldout7_values_are_what_the_module_computes(root):
    from bench.ground_truth_heldout7 import heldout7 as compute_heldout7

    fresh = json.loads(json.dumps(compute_heldout7(root), ensure_ascii=False))
    assert fresh["heldout7"] == load_expected()["heldout7"]


def test_dins_values_recomputed_without_the_module(root, values):
    """The DINS figures again, with plain pandas filters, cross tabulations and spatial joins."""
    eaton = read(root, EATON_FILE)
    e = values["eaton"]
    assert int(eaton.DAMAGE.isin(["Minor (10-25%)", "Major (26-50%)", DESTROYED]).sum()) == e["minor_or_worse"] == 2784
    schools = eaton[eaton.STRUCTURETYPE == "School"]
    assert (len(schools), bool(schools.DAMAGE.isin(STANDING).any())) == (e["schools"], False) == (70, False)
    damaged = eaton[eaton.DAMAGE != NONE]
    houses = damaged.STRUCTURETYPE.str.startswith("Single Family")
    assert round(100 * houses.mean(), 1) == e["houses_pct_of_damaged"] == 69.0
    untouched = eaton[eaton.DAMAGE == NONE]
    assert int((untouched.STRUCTURETYPE != "Utility Misc Structure").sum()) == e["no_damage_not_outbuilding"] == 2114
    hit = eaton[eaton.STRUCTURETYPE.str.startswith("Single Family") & eaton.DAMAGE.isin(STANDING)]
    assert hit.STRUCTURETYPE.value_counts().to_dict() == e["houses_standing_by_type"]
    assert len(hit) == e["houses_standing"] == 253
    tall = eaton[eaton.STRUCTURETYPE == "Single Family Residence Multi Story"]
    assert round(100 * (tall.DAMAGE == DESTROYED).mean(), 1) == e["multi_story_sfr_destroyed_pct"] == 27.1

    pal = read(root, PALISADES_FILE)
    p = values["palisades"]
    lost = pal[pal.DAMAGE == DESTROYED]
    mobile = lost[lost.STRUCTURETYPE.str.startswith("Mobile Home")]
    assert mobile.STRUCTURETYPE.value_counts().to_dict() == p["mobile_homes_destroyed_by_type"]
    assert len(mobile) == p["mobile_homes_destroyed"] == 350
    assert int(pal.DAMAGE.isin(["Major (26-50%)", DESTROYED]).sum()) == p["major_or_worse"] == 6897
    doubles = pal[pal.STRUCTURETYPE == "Mobile Home Double Wide"]
    assert int((doubles.DAMAGE != DESTROYED).sum()) == p["double_wides_not_destroyed"] == 6
    clean = pal[pal.DAMAGE == NONE]
    assert round(100 * (clean.STRUCTURETYPE == "Single Family Residence Single Story").mean(), 1) == 25.0
    assert p["one_story_sfr_pct_of_no_damage"] == 25.0
    flats = pal[pal.STRUCTURETYPE == "Multi Family Residence Single Story"]
    grades = flats.DAMAGE.str.split(" ").str[0].str.lower().replace({"no": "none"}).value_counts().to_dict()
    assert grades == p["low_rise_flats_by_grade"] and len(flats) == p["low_rise_flats"] == 27
    tall = pal[(pal.STRUCTURETYPE == "Single Family Residence Multi Story") & (pal.DAMAGE != NONE)]
    assert round(100 * (tall.DAMAGE == DESTROYED).mean(), 1) == p["multi_story_sfr_destroyed_pct_of_damaged"] == 85.2

    c = values["comparative"]
    for fire, dins in (("eaton", eaton), ("palisades", pal)):
        kind, dmg = dins.STRUCTURETYPE, dins.DAMAGE
        one = dins[kind == "Single Family Residence Single Story"]
        assert round(100 * (one.DAMAGE == NONE).mean(), 1) == c["one_story_sfr_no_damage_pct"][fire], fire
        sheds = dins[kind == "Utility Misc Structure"]
        assert round(100 * (sheds.DAMAGE == DESTROYED).mean(), 1) == c["outbuildings_destroyed_pct"][fire], fire
        shops = (kind == "Commercial Building Multi Story") & (dmg == NONE)
        assert int(shops.sum()) == c["multi_story_commercial_no_damage"][fire], fire
        assert int((dmg == "Affected (1-9%)").sum()) == c["affected"][fire], fire
        homes = kind[kind.str.startswith("Single Family")]
        assert (
            round(100 * (homes == "Single Family Residence Multi Story").mean(), 1) == c["multi_story_pct_of_sfr"][fire]
        )
        assert int(((kind == "Infrastructure") & (dmg == NONE)).sum()) == c["infrastructure_no_damage"][fire], fire
    assert (c["affected"]["eaton"], c["affected"]["palisades"]) == (267, 768)

    west = eaton.sjoin(aoi_frame("west_altadena_area.geojson"), predicate="intersects")
    w = values["aoi"]["west_altadena_area"]
    tall = west[west.STRUCTURETYPE == "Single Family Residence Multi Story"].DAMAGE.value_counts()
    assert (tall[DESTROYED], tall[NONE]) == (w["multi_story_sfr_destroyed"], w["multi_story_sfr_no_damage"]) == (57, 37)
    shops = west[(west.STRUCTURETYPE == "Commercial Building Single Story") & (west.DAMAGE == DESTROYED)]
    assert len(shops) == w["one_story_commercial_destroyed"] == 19
    east = eaton.sjoin(aoi_frame("east_altadena_kinneloa.geojson"), predicate="intersects")
    k = values["aoi"]["east_altadena_kinneloa"]
    one = east[east.STRUCTURETYPE == "Single Family Residence Single Story"]
    assert round(100 * (one.DAMAGE == DESTROYED).mean(), 1) == k["one_story_sfr_destroyed_pct"]
    kept = ["Single Family Residence Single Story", "Single Family Residence Multi Story", "Utility Misc Structure"]
    lost = east[(east.DAMAGE == DESTROYED) & east.STRUCTURETYPE.isin(kept)]
    assert lost.STRUCTURETYPE.value_counts().to_dict() == k["houses_and_sheds_destroyed_by_type"]
    assert len(lost) == k["houses_and_sheds_destroyed"] == 331
    village = pal.sjoin(aoi_frame("palisades_village_aoi.geojson"), predicate="intersects")
    v = values["aoi"]["palisades_village_aoi"]
    schools = village[village.STRUCTURETYPE == "School"]
    assert round(100 * (schools.DAMAGE == DESTROYED).mean(), 1) == v["schools_destroyed_pct"] == 41.3
    flats = village[(village.STRUCTURETYPE == "Multi Family Residence Single Story") & village.DAMAGE.isin(STANDING)]
    assert len(flats) == v["low_rise_flats_standing"] == 5


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

    def ring(area: shapely.Geometry, inner: float, outer: float, rows: gpd.GeoDataFrame) -> list[str]:
        """The rows within ``outer`` and not within ``inner`` (by row: two rows may share a name)."""
        outside_inner = within(area, outer, rows).index.difference(within(area, inner, rows).index)
        return sorted(rows.NAME[outside_inner])

    e, p = values["eaton"], values["palisades"]
    glendale = within(perimeter, 8000, la[la.CITY == "GLENDALE"])
    assert (len(glendale), int(glendale.BEDS.sum())) == (e["glendale_within_8km"], e["glendale_beds_within_8km"])
    assert e["glendale_beds_within_8km"] == 615
    near5 = within(perimeter, 5000, la).sort_values("BEDS", ascending=False)
    assert [near5.NAME.iloc[0]] == e["largest_within_5km"]["names"] and near5.BEDS.iloc[0] == e[
        "largest_beds_within_5km"
    ]
    assert near5.BEDS.iloc[1] < near5.BEDS.iloc[0]
    assert ring(perimeter, 5000, 10_000, la[la.OWNER == "PROPRIETARY"]) == sorted(e["proprietary_5_to_10km"]["names"])
    trauma = within(perimeter, 15_000, la[la.TRAUMA != "NOT AVAILABLE"])
    assert sorted(trauma.NAME) == sorted(e["trauma_within_15km"]["names"]) and len(trauma) == 3

    pads = within(hull, 10_000, la[la.HELIPAD == "Y"])
    assert sorted(pads.NAME) == sorted(p["helipad_within_10km"]["names"]) and len(pads) == 5
    acute = la[la.TYPE == "GENERAL ACUTE CARE"]
    assert ring(hull, 3500, 7000, acute) == sorted(p["acute_3500_to_7000m"]["names"])
    state = within(hull, 6000, la[la.OWNER == "GOVERNMENT - STATE"])
    assert (sorted(state.NAME), int(state.BEDS.sum())) == (sorted(p["state_within_6km"]["names"]), 801)
    civil = within(hull, 6000, la[~la.TYPE.isin(["PSYCHIATRIC", "MILITARY"])])
    assert (sorted(civil.NAME), int(civil.BEDS.sum())) == (sorted(p["civil_within_6km"]["names"]), 993)

    c = values["comparative"]
    for fire, area in (("eaton", perimeter), ("palisades", hull)):
        assert len(within(area, 10_000, acute)) == c["acute_within_10km"][fire], fire
        assert len(ring(area, 5000, 10_000, la)) == c["hospitals_5_to_10km"][fire], fire
    assert (c["acute_within_10km"]["eaton"], c["acute_within_10km"]["palisades"]) == (8, 9)

    west = aoi_frame("west_altadena_area.geojson", 26911).geometry.iloc[0]
    w = within(west, 5000, acute)
    assert (len(w), int(w.BEDS.sum())) == (2, values["aoi"]["west_altadena_area"]["acute_beds_within_5km"]) == (2, 694)
    east = aoi_frame("east_altadena_kinneloa.geojson", 26911).geometry.iloc[0]
    general = la[la.TYPE != "PSYCHIATRIC"]
    ranked = general.assign(d=general.distance(east)).sort_values("d")
    assert ranked.d.iloc[1] - ranked.d.iloc[0] >= 30
    nearest = values["aoi"]["east_altadena_kinneloa"]["nearest_not_psychiatric"]
    assert [ranked.NAME.iloc[0]] == nearest["names"]
    assert ranked.d.iloc[0] == pytest.approx(nearest["distances_m"][ranked.NAME.iloc[0]], abs=0.1)

    burn = read(root, "lahaina-2023/lahaina_burn_area.geojson", 32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    maui = hospitals[(hospitals.STATE == "HI") & (hospitals.COUNTY == "MAUI")].to_crs(32604)
    far = maui[~maui.intersects(burn_area.buffer(20_000))]
    assert sorted(far.NAME) == sorted(values["lahaina"]["beyond_20km"]["names"]) and len(far) == 3
    assert sorted(within(burn_area, 20_000, maui).NAME) == ["MAUI MEMORIAL MEDICAL CENTER"]


def test_valencia_and_catarroja_values_recomputed_without_the_module(root, values):
    """Clips, buffers and joins with GeoPandas for the flood's values."""
    flood = read(root, FLOOD_FILE, 25830)
    water = flood.union_all()
    v = values["valencia"]
    health = read(root, "valencia-2024/valencia_city_health_facilities.geojson", 25830)

    def near(rows: gpd.GeoDataFrame, metres: float) -> list[str]:
        out = sorted(rows.equipamien[rows.intersects(water.buffer(metres))])
        for shift in (-30, 30):
            assert sorted(rows.equipamien[rows.intersects(water.buffer(metres + shift))]) == out
        return out

    assert sorted(set(near(health, 5000)) - set(near(health, 4000))) == sorted(v["between_4_and_5km"]["names"])
    wet = health.intersects(water.buffer(-30))
    assert int(wet.sum()) == int(health.intersects(water).sum()) == 4  # each flooded one 30 m inside
    assert sorted(set(near(health, 350)) - set(health.equipamien[wet])) == sorted(v["dry_within_350m"]["names"])
    centres = health[health.idsubclase == 13]
    assert round(100 * len(near(centres, 1200)) / len(centres), 1) == v["centres_within_1200m_pct"] == 30.8
    assert near(health[health.idsubclase == 14], 2000) == sorted(v["hospitals_within_2km"]["names"])
    blank = health[health.idsubclase.isna()]
    ranked = blank.assign(d=blank.distance(water)).sort_values("d")
    assert len(blank) == v["unclassed"] == 8 and ranked.d.iloc[1] - ranked.d.iloc[0] >= 30
    assert [ranked.equipamien.iloc[0]] == v["unclassed_nearest"]["names"]
    south = health.sjoin(aoi_frame("valencia_south_area.geojson", 25830), predicate="intersects")
    south = south.assign(d=south.distance(water)).sort_values("d", ascending=False)
    assert len(south) == 6 and south.d.iloc[0] - south.d.iloc[1] >= 30
    assert [south.equipamien.iloc[0]] == values["aoi"]["valencia_south_area"]["farthest"]["names"]

    c = values["catarroja"]
    lines = read(root, OSM + "lineas.geojson", 25830)
    for key, column, value in (
        ("residential_pct_in_flood", "highway", "residential"),
        ("track_pct_in_flood", "highway", "track"),
        ("canal_pct_in_flood", "waterway", "canal"),
    ):
        rows = lines[lines[column] == value]
        assert abs(100 * gpd.clip(rows, flood).length.sum() / rows.length.sum() - c[key]) < 0.1, key
    residential = lines[lines.highway == "residential"]
    assert abs(gpd.clip(residential, flood).length.sum() / 1000 - c["residential_km_in_flood"]) < 0.02
    assert abs(gpd.clip(lines[lines.highway == "path"], flood).length.sum() / 1000 - c["path_km_in_flood"]) < 0.02
    sketch = aoi_frame("catarroja_east_sketch.geojson", 25830)
    k = values["aoi"]["catarroja_east_sketch"]
    in_sketch = gpd.clip(residential, sketch)
    flooded = gpd.clip(in_sketch, flood)
    assert abs(flooded.length.sum() / 1000 - k["residential_km_flooded"]) < 0.02
    assert abs(100 * flooded.length.sum() / in_sketch.length.sum() - k["residential_pct_flooded"]) < 0.1
    wet_sketch = gpd.clip(flood, sketch).area.sum()
    assert abs(wet_sketch / 1e6 - k["flooded_km2"]) < 0.01
    assert abs(100 * wet_sketch / sketch.area.sum() - k["flooded_pct"]) < 0.1

    polygons = read(root, OSM + "poligonos.geojson", 25830)
    buildings = polygons[polygons.building.notna()].dissolve()
    share = 100 * gpd.clip(buildings, flood).area.sum() / buildings.area.sum()
    assert abs(share - c["building_footprint_pct_in_flood"]) < 0.1
    homes = polygons[polygons.landuse == "residential"].dissolve()
    homes_wet = gpd.clip(homes, flood).area.sum()
    assert abs(homes_wet / 1e4 - c["residential_land_ha_in_flood"]) < 0.1
    assert abs(100 * homes_wet / homes.area.sum() - c["residential_land_pct_in_flood"]) < 0.1
    points = read(root, OSM + "puntos.geojson", 25830)
    stones = points[points.highway == "milestone"]
    assert int(stones.intersects(water.buffer(-30)).sum()) == int(stones.intersects(water.buffer(30)).sum())
    assert (int(stones.intersects(water).sum()), int((~stones.intersects(water)).sum())) == (
        c["milestones_in_flood"],
        c["milestones_dry"],
    )
    hamlets = points[points.place == "hamlet"]
    hamlets = hamlets.assign(d=hamlets.distance(water)).sort_values("d")
    assert hamlets.d.iloc[2] - hamlets.d.iloc[1] >= 30 and hamlets.d.iloc[0] > 0
    assert list(hamlets.name.iloc[:2]) == c["hamlets_nearest_2"]["names"]

    public = read(root, PLAN_FILE, 25830)
    schools = public[(public.capa == "Centros educativos") & public.val_dany.isna()]
    assert sorted(schools.titulo) == c["public_schools_unvalued"]["names"] and len(schools) == 5
    assert public.estado.value_counts().to_dict() == c["public_by_estado"] and len(public) == c["public_total"]
    works = public[public.estado.isin(["En ejecución", "Obra iniciada"])]
    inside = works.intersects(water)
    assert bool((works[inside].intersects(water.buffer(-30))).all())
    assert not bool(works[~inside].intersects(water.buffer(30)).any())
    assert sorted(works.titulo[inside]) == c["public_works_in_flood"]
    social = public[public.capa == "Centros sociosanitarios"]
    assert (len(social), pytest.approx(eur(social.val_dany), abs=0.01)) == (c["public_social"], c["public_social_eur"])
    over = [
        t
        for t, s, d in zip(public.titulo, public.subv_apro, public.val_dany, strict=True)
        if eur(pd.Series([s])) > eur(pd.Series([d]))
    ]
    assert over == c["public_subsidy_over_damage"] == ["EPA Esteban Paluzié"]


def test_lahaina_values_recomputed_without_the_module(root, values):
    labels = read(root, "lahaina-2023/Maui_Wildfires_August_0.geojson", 32604)
    area = np.asarray(shapely.area(shapely.make_valid(labels.geometry.values)))
    cls = labels["class"].to_numpy()
    lahaina = values["lahaina"]
    azure = (labels.source == "Drawn|Azure Maps Satellite").to_numpy()
    assert (int(azure.sum()), set(cls[azure])) == (lahaina["azure_labels"], {"Damaged Building"})
    assert area[azure].sum() == pytest.approx(lahaina["azure_labels_m2"], abs=0.1)
    damaged = area[cls == "Damaged Building"]
    assert damaged.max() == pytest.approx(lahaina["largest_damaged_m2"], abs=0.1)
    assert int(((damaged >= 600) & (damaged <= 2000)).sum()) == lahaina["damaged_600_to_2000m2"] == 9
    assert int((area[cls == "Building"] < 150).sum()) == lahaina["intact_under_150m2"] == 7
    assert round(100 * (cls == "Background").mean(), 1) == lahaina["background_pct"] == 25.5


# -------------------------------------------------------------------------------------- apartness
def test_every_question_is_apart_from_the_bench_questions(heldout7):
    others = bench_questions(TASKS_FILE) + bench_questions(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += bench_questions(split)
    assert len(others) > 400
    assert not too_close(questions(heldout7), others)


def test_every_question_is_apart_from_the_reading_bank(heldout7):
    assert not too_close(questions(heldout7), reading_bank_questions())


def test_the_questions_are_apart_from_each_other(heldout7):
    mine = questions(heldout7)
    assert not [close for i in range(len(mine)) for close in too_close(mine[i + 1 :], [mine[i]])]
