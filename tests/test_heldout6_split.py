"""The sixth held-out question split (``bench/heldout6.json``): 64 questions written without looking at how GeoFaham
reads a question (nothing under ``geofaham_plugin/core/planning/`` nor the paraphrase suite was read, and the product
was not run on them), in four languages, worded as coordinators and analysts write (grade subsets said indirectly,
exclusions at the end, storeys, miles and feet), each apart from every question the product may have been shaped on
(the bench's tasks, its paraphrase suite, the first five held-out splits and the planner's reading bank), with expected
values that ``bench/ground_truth_heldout6.py`` computes from the sample data by code of its own (no GeoFaham import).
The checks the held-out splits share (expected-value kinds, the sample data, the reading bank's questions, the
similarity measure) come from the second split's tests."""

from __future__ import annotations

import json
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

HELDOUT6_FILE = BENCH_DIR / "heldout6.json"
EARLIER_SPLITS = tuple(
    BENCH_DIR / f"{name}.json" for name in ("heldout", "heldout2", "heldout3", "heldout4", "heldout5")
)
MILE, FOOT = 1609.344, 0.3048
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
    "ho6_eaton_untouched_houses_by_storeys",
    "ho6_cmp_hospitals_five_miles",
    "ho6_cmp_tall_houses_destroyed",
    "ho6_aoi_east_altadena_schools",
    "ho6_catarroja_heritage",
    "ho6_es_cmp_dano_grave",
    "ho6_es_catarroja_salidas_autopista",
    "ho6_fr_cmp_commerces_plain_pied_detruits",
    "ho6_fr_cmp_mobil_homes_perdus",
    "ho6_fr_aoi_village_eglises",
    "ho6_fr_catarroja_parcelles_agricoles",
    "ho6_pt_cmp_casas_terreas_destruidas",
)
#: one figure per fire: Eaton's, then the Palisades'
PER_FIRE = (
    "ho6_cmp_damaged_standing_share",
    "ho6_cmp_schools_unscathed_share",
    "ho6_cmp_hospitals_five_miles",
    "ho6_cmp_tall_houses_destroyed",
    "ho6_es_cmp_dano_grave",
    "ho6_fr_cmp_commerces_plain_pied_detruits",
    "ho6_fr_cmp_mobil_homes_perdus",
    "ho6_pt_cmp_casas_terreas_destruidas",
)


@pytest.fixture(scope="module")
def heldout6() -> list[TaskSpec]:
    return load_tasks(HELDOUT6_FILE)


@pytest.fixture(scope="module")
def values() -> dict:
    return load_expected()["heldout6"]


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
def test_every_task_loads_in_the_heldout_split(heldout6):
    assert len(heldout6) == 64
    ids = [t.id for t in heldout6]
    assert len(ids) == len(set(ids)) and all(i.startswith("ho6_") for i in ids)
    assert {t.split for t in heldout6} == {"heldout"}
    assert all(t.offline and not t.follow_ups and t.expectations for t in heldout6)
    assert Counter(t.language for t in heldout6) == {"en": 32, "es": 11, "fr": 11, "pt": 10}
    assert all(t.id.startswith(f"ho6_{t.language}_") for t in heldout6 if t.language != "en")
    others = load_tasks(TASKS_FILE) + load_tasks(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += load_tasks(split)
    assert not set(ids) & {t.id for t in others}


def test_personas_and_categories_are_varied(heldout6):
    personas = Counter(t.persona for t in heldout6)
    assert len(personas) == 5 and min(personas.values()) >= 8, personas
    categories = Counter(t.category for t in heldout6)
    assert {"poi_impact", "building_damage", "clustering_aggregation", "comparative", "infrastructure"} <= set(
        categories
    )
    assert {"land_cover", "flood"} <= set(categories) and categories["comparative"] >= 8, categories


def test_every_expectation_points_into_the_heldout6_values(heldout6):
    expected = load_expected()
    for task in heldout6:
        for e in task.all_expectations():
            assert e.ref is not None and e.ref.startswith("heldout6."), (task.id, e.id)
            assert e.description.strip(), (task.id, e.id)
            assert VALUE_KINDS[e.kind](e.resolve(expected)), (task.id, e.id, e.resolve(expected))


def test_the_split_asks_every_kind_of_question(heldout6):
    """Counts, shares, a breakdown, names, distances, yes/no, areas, lengths, sums, a mean and a maximum; several
    figures in one turn; thresholds in kilometres, miles and feet."""
    kinds = Counter(e.kind for t in heldout6 for e in t.expectations)
    assert all(kinds[k] >= 2 for k in ("count", "value", "names", "distance")), kinds
    assert kinds["count_by"] >= 1 and kinds["boolean"] >= 1, kinds
    units = {e.unit for t in heldout6 for e in t.expectations}
    assert {"%", "m", "km", "m2", "ha", "km2", "EUR"} <= units
    measures = {e.measure for t in heldout6 for e in t.expectations}
    assert {"sum", "mean", "max", "share", "area", "length"} <= measures
    assert sum(len(t.expectations) > 1 for t in heldout6) >= 30
    assert {t.aoi.kind for t in heldout6} == {"damage", "hazard", "layer"}
    assert sum(t.buffer_m is not None for t in heldout6) >= 12  # within / beyond / between stated distances
    words = " ".join(t.question for t in heldout6)
    # the HIFLD attributes the hospital turns filter on (TYPE by its value, GENERAL ACUTE CARE)
    for attribute in ("OWNER", "HELIPAD", "BEDS", "CITY", "GENERAL ACUTE CARE"):
        assert attribute in words, attribute
    for unit in ("miles", "millas", "feet", "acres", "km²", "hectares"):
        assert unit in words, unit


def test_miles_and_feet_are_international_ones(heldout6):
    """A threshold said in miles or feet is its metric value in ``buffer_m`` (international mile and foot)."""
    by_id = {t.id: t for t in heldout6}
    for task_id, metres in {
        "ho6_cmp_hospitals_five_miles": 5 * MILE,
        "ho6_eaton_hospitals_3_to_6_miles": 6 * MILE,
        "ho6_palisades_four_miles_beds": 4 * MILE,
        "ho6_aoi_east_altadena_hospitals_4_miles": 4 * MILE,
        "ho6_es_valencia_centros_salud_mas_2_millas": 2 * MILE,
        "ho6_es_lahaina_hospitales_25_millas": 25 * MILE,
        "ho6_valencia_2000_feet": 2000 * FOOT,
    }.items():
        assert by_id[task_id].buffer_m == pytest.approx(metres), task_id


def test_answers_asked_in_other_units_are_judged_by_their_metric_value(heldout6):
    """The judge converts metric units only: a distance asked in miles, an area asked in acres, is compared through
    the structured answer's metres or hectares, and the answer text is not checked for it."""
    by_id = {t.id: t for t in heldout6}
    (miles,) = [e for e in by_id["ho6_lahaina_helipad_hospital_miles"].expectations if e.kind == "distance"]
    assert miles.unit == "m" and not miles.in_answer and "miles" in miles.description
    (acres,) = by_id["ho6_lahaina_burn_acres"].expectations
    assert acres.unit == "ha" and not acres.in_answer and "acres" in acres.description


def test_short_breakdowns_are_two_to_four_labelled_figures(heldout6):
    """A short breakdown's figures are told apart by their labels: the groups of one count_by (two to four of them,
    beside an unlabelled total), or two to four counts with a grade, an event or a relation each."""
    expected = load_expected()
    by_id = {t.id: t for t in heldout6}
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


def test_several_figures_carry_their_labels(heldout6):
    """Grades, events, relations and measures label the figures a turn asks for together."""
    by_id = {t.id: t for t in heldout6}
    for task_id in ("ho6_aoi_east_altadena_schools", "ho6_fr_aoi_village_eglises"):
        assert [e.group for e in by_id[task_id].expectations] == ["destroyed", "none"], task_id
    for task_id in PER_FIRE:
        assert [e.events for e in by_id[task_id].expectations] == [[11], [12, 13, 14]], task_id
    for task_id in ("ho6_es_catarroja_salidas_autopista", "ho6_fr_catarroja_parcelles_agricoles"):
        assert [e.relation for e in by_id[task_id].expectations] == ["inside", "outside"], task_id
    counts = [e for e in by_id["ho6_catarroja_heritage"].expectations if e.kind == "count"]
    assert [e.relation for e in counts] == ["inside", "outside"]
    for task_id in (
        "ho6_palisades_four_miles_beds",
        "ho6_catarroja_plan_subsidies_running",
        "ho6_es_eaton_camas_6km_sin_psiquiatricos",
        "ho6_pt_catarroja_plano_sociossanitarios_secos",
    ):
        assert [e.measure for e in by_id[task_id].expectations] == [None, "sum"], task_id
    for task_id in ("ho6_catarroja_cycle_lanes", "ho6_catarroja_municipality_underwater"):
        assert [e.measure for e in by_id[task_id].expectations][1] == "share", task_id
    assert [e.measure for e in by_id["ho6_catarroja_plan_costliest_dry"].expectations] == [None, "max"]
    assert [e.measure for e in by_id["ho6_pt_lahaina_area_media_intactos"].expectations] == ["mean"]


def test_aoi_files_are_the_ones_the_runner_writes(heldout6):
    with_files = [t for t in heldout6 if t.input_files]
    assert len(with_files) >= 10
    assert {name for t in with_files for name in t.input_files} == {
        "east_altadena_kinneloa.geojson",
        "palisades_village_aoi.geojson",
        "catarroja_east_sketch.geojson",
        "valencia_south_area.geojson",
    }
    for task in with_files:
        assert all(name in AOI_FILES for name in task.input_files), task.id
        assert all(name in task.question for name in task.input_files), task.id  # the question names its area
        assert task.aoi.kind == "layer" and task.aoi.layers == task.input_files, task.id


def test_the_cli_and_the_kept_runs_know_the_split():
    from bench.cli import build_parser
    from bench.runs import SPLIT_FILES

    args = build_parser().parse_args(["tasks", "--tasks-file", "heldout6"])
    assert args.tasks_file == HELDOUT6_FILE
    args = build_parser().parse_args(["run", "--tasks-file", "heldout6", "--offline"])
    assert args.tasks_file == HELDOUT6_FILE
    assert SPLIT_FILES["heldout6"] == HELDOUT6_FILE.name


def test_the_ground_truth_reuses_the_earlier_splits_helpers():
    """Reading, projecting and tabulating are the first split's code, the threshold guard and the area and length
    helpers the third split's, the 'nearest are apart' guard and the Palisades hull the fourth split's, the 'firmly
    inside or outside' guard the fifth split's."""
    import bench.ground_truth_heldout as first
    import bench.ground_truth_heldout3 as third
    import bench.ground_truth_heldout4 as fourth
    import bench.ground_truth_heldout5 as fifth
    import bench.ground_truth_heldout6 as sixth

    for name in ("Layers", "geoms", "touching", "metres", "ranked", "tally", "pct", "euros", "hospitals"):
        assert getattr(sixth, name) is getattr(first, name), name
    for name in ("assert_clear", "clipped_km", "hectares", "km2", "projected_aoi", "CLEARANCE"):
        assert getattr(sixth, name) is getattr(third, name), name
    for name in ("assert_apart", "palisades_hull"):
        assert getattr(sixth, name) is getattr(fourth, name), name
    assert sixth.assert_firmly is fifth.assert_firmly


# ------------------------------------------------------------------------------------ ground truth
@pytest.fixture(scope="module")
def root() -> Path:
    return sample_data()


def test_expected_heldout6_values_are_what_the_module_computes(root):
    from bench.ground_truth_heldout6 import heldout6 as compute_heldout6

    fresh = json.loads(json.dumps(compute_heldout6(root), ensure_ascii=False))
    assert fresh["heldout6"] == load_expected()["heldout6"]


def test_dins_values_recomputed_without_the_module(root, values):
    """The DINS figures again, with plain pandas filters, cross tabulations and spatial joins."""
    eaton = read(root, EATON_FILE)
    e = values["eaton"]
    table = eaton.groupby(["STRUCTURETYPE", "DAMAGE"]).size()
    houses = eaton[eaton.STRUCTURETYPE.str.startswith("Single Family") & (eaton.DAMAGE == NONE)]
    assert houses.STRUCTURETYPE.value_counts().to_dict() == e["sfr_no_damage_by_type"]
    assert len(houses) == e["sfr_no_damage"] == 1985
    lost = eaton[eaton.DAMAGE == DESTROYED].STRUCTURETYPE
    other = ~lost.str.startswith("Single Family") & (lost != "Utility Misc Structure")
    assert int(other.sum()) == e["not_house_nor_outbuilding_destroyed"] == 58
    shops = table["Commercial Building Single Story"]
    assert round(100 * shops[DESTROYED] / shops.sum(), 1) == e["one_story_commercial_destroyed_pct"] == 47.3
    standing = eaton[eaton.DAMAGE.isin(STANDING)].STRUCTURETYPE.value_counts()
    assert standing["Single Family Residence Multi Story"] == e["multi_story_sfr_standing"] == 55
    assert standing["Utility Misc Structure"] == e["outbuildings_standing"] == 70
    assert round(100 * (lost == "Utility Misc Structure").mean(), 1) == e["outbuildings_pct_of_destroyed"]
    flats = eaton[eaton.STRUCTURETYPE.str.startswith("Multi Family")]
    assert round(100 * (flats.DAMAGE == NONE).mean(), 1) == e["multi_family_no_damage_pct"] == 75.0

    pal = read(root, PALISADES_FILE)
    p = values["palisades"]
    table = pal.groupby(["STRUCTURETYPE", "DAMAGE"]).size()
    assert table["Mobile Home Single Wide"][NONE] == p["single_wide_no_damage"] == 8
    triple = pal[pal.STRUCTURETYPE == "Mobile Home Triple Wide"]
    assert (len(triple), bool((triple.DAMAGE == DESTROYED).all())) == (p["triple_wides"], True)
    assert p["every_triple_wide_destroyed"] is True
    shops = pal[pal.STRUCTURETYPE.str.startswith("Commercial Building") & pal.DAMAGE.isin(STANDING)]
    assert len(shops) == p["commercial_standing"] == 32
    lost = pal[pal.DAMAGE == DESTROYED].STRUCTURETYPE
    assert (
        round(100 * (lost == "Single Family Residence Multi Story").mean(), 1) == p["multi_story_sfr_pct_of_destroyed"]
    )
    for kind, key in (
        ("Multi Family Residence Single Story", "one_story_multi_family_destroyed_pct"),
        ("Commercial Building Multi Story", "multi_story_commercial_destroyed_pct"),
    ):
        row = table[kind]
        assert round(100 * row[DESTROYED] / row.sum(), 1) == p[key], kind
    infra = pal[pal.STRUCTURETYPE == "Infrastructure"]
    assert int((infra.DAMAGE != NONE).sum()) == p["infrastructure_damaged"] == 6

    c = values["comparative"]
    for fire, dins in (("eaton", eaton), ("palisades", pal)):
        kind, dmg = dins.STRUCTURETYPE, dins.DAMAGE
        assert round(100 * dmg.isin(STANDING).mean(), 1) == c["standing_pct"][fire], fire
        schools = dins[kind == "School"]
        assert round(100 * (schools.DAMAGE == NONE).mean(), 1) == c["schools_no_damage_pct"][fire], fire
        lost = dins[dmg == DESTROYED].STRUCTURETYPE
        assert int((lost == "Single Family Residence Multi Story").sum()) == c["multi_story_sfr_destroyed"][fire]
        assert int((lost == "Single Family Residence Single Story").sum()) == c["one_story_sfr_destroyed"][fire]
        assert int((dmg == "Major (26-50%)").sum()) == c["major"][fire], fire
        assert int((lost == "Commercial Building Single Story").sum()) == c["one_story_commercial_destroyed"][fire]
        assert int(lost.str.startswith("Mobile Home").sum()) == c["mobile_homes_destroyed"][fire], fire
    assert (c["mobile_homes_destroyed"]["eaton"], c["mobile_homes_destroyed"]["palisades"]) == (1, 350)

    east = eaton.sjoin(aoi_frame("east_altadena_kinneloa.geojson"), predicate="intersects")
    k = values["aoi"]["east_altadena_kinneloa"]
    assert len(east) == k["inside"] and int(east.DAMAGE.isin(STANDING).sum()) == k["standing"] == 87
    schools = east[east.STRUCTURETYPE == "School"].DAMAGE.value_counts()
    assert (schools[DESTROYED], schools[NONE]) == (k["schools_destroyed"], k["schools_no_damage"]) == (7, 9)
    sheds = east[east.STRUCTURETYPE == "Utility Misc Structure"]
    assert round(100 * (sheds.DAMAGE == NONE).mean(), 1) == k["outbuildings_no_damage_pct"]
    village = pal.sjoin(aoi_frame("palisades_village_aoi.geojson"), predicate="intersects")
    v = values["aoi"]["palisades_village_aoi"]
    churches = village[village.STRUCTURETYPE == "Church"].DAMAGE.value_counts()
    assert (churches[DESTROYED], churches[NONE]) == (v["churches_destroyed"], v["churches_no_damage"]) == (6, 2)
    shops = village[village.STRUCTURETYPE.str.startswith("Commercial Building") & village.DAMAGE.isin(STANDING)]
    assert len(shops) == v["commercial_standing"] == 20


def test_hospital_values_recomputed_without_the_module(root, values):
    """Buffers and joins instead of distances to the polygon; each threshold gives the same hospitals 30 m either
    side of it (no hospital is near a threshold), and each 'nearest' set is 30 m ahead of the next one."""
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

    def nearest(area: shapely.Geometry, k: int, rows: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        ranked = rows.assign(d=rows.distance(area)).sort_values("d")
        assert ranked.d.iloc[k] - ranked.d.iloc[k - 1] >= 30
        return ranked.head(k)

    e, p = values["eaton"], values["palisades"]
    inner, outer = within(perimeter, 3 * MILE, la), within(perimeter, 6 * MILE, la)
    ring = sorted(set(outer.NAME) - set(inner.NAME))
    assert ring == sorted(e["hospitals_3_to_6_miles"]["names"]) and len(ring) == 7
    grounded = within(perimeter, 10_000, la[la.HELIPAD == "N"])
    assert sorted(grounded.NAME) == sorted(e["no_helipad_within_10km"]["names"]) and len(grounded) == 8
    county = nearest(perimeter, 1, la[la.OWNER == "GOVERNMENT - LOCAL"])
    assert dict(zip(county.NAME, county.d.round(1), strict=True)) == pytest.approx(
        e["county_run_nearest"]["distances_m"]
    )
    general = within(perimeter, 6000, la[la.TYPE != "PSYCHIATRIC"])
    assert (len(general), int(general.BEDS.sum())) == (4, e["non_psychiatric_beds_within_6km"]) == (4, 1091)
    pasadena = la[la.CITY == "PASADENA"]
    assert dict(zip(pasadena.NAME, pasadena.distance(perimeter).round(1), strict=True)) == pytest.approx(
        e["pasadena_hospitals"]["distances_m"]
    )

    civil = within(hull, 4 * MILE, la[la.TYPE != "MILITARY"])
    assert (len(civil), int(civil.BEDS.sum())) == (
        p["within_4_miles_not_military"],
        p["beds_within_4_miles_not_military"],
    )
    assert p["beds_within_4_miles_not_military"] == 1187
    charities = within(hull, 10_000, la[la.OWNER == "NON-PROFIT"])
    assert sorted(charities.NAME) == sorted(p["nonprofit_within_10km"]["names"]) and len(charities) == 6

    c = values["comparative"]["hospitals_within_5_miles"]
    assert (len(within(perimeter, 5 * MILE, la)), len(within(hull, 5 * MILE, la))) == (c["eaton"], c["palisades"])
    assert (c["eaton"], c["palisades"]) == (13, 10)

    east = aoi_frame("east_altadena_kinneloa.geojson", 26911).geometry.iloc[0]
    near_east = within(east, 4 * MILE, la)
    assert sorted(near_east.NAME) == sorted(
        values["aoi"]["east_altadena_kinneloa"]["hospitals_within_4_miles"]["names"]
    )
    village = aoi_frame("palisades_village_aoi.geojson", 26911).geometry.iloc[0]
    two = nearest(village, 2, la[la.TYPE == "GENERAL ACUTE CARE"])
    assert dict(zip(two.NAME, two.d.round(1), strict=True)) == pytest.approx(
        values["aoi"]["palisades_village_aoi"]["acute_nearest_2"]["distances_m"], abs=0.1
    )

    burn = read(root, "lahaina-2023/lahaina_burn_area.geojson", 32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    maui = hospitals[(hospitals.STATE == "HI") & (hospitals.COUNTY == "MAUI")].to_crs(32604)
    lahaina = values["lahaina"]
    pad = maui[maui.HELIPAD == "Y"]  # Maui County has one hospital with a helipad
    assert len(pad) == 1 and list(pad.NAME) == lahaina["helipad_nearest"]["names"]
    assert float(pad.distance(burn_area).iloc[0]) / MILE == pytest.approx(lahaina["helipad_nearest_miles"], abs=0.01)
    others = within(burn_area, 25 * MILE, maui[~maui.NAME.str.startswith("MAUI MEMORIAL")])
    assert sorted(others.NAME) == sorted(lahaina["within_25_miles_not_memorial"]["names"])
    assert int(others.BEDS.sum()) == lahaina["beds_within_25_miles_not_memorial"] == 13


def test_valencia_and_catarroja_values_recomputed_without_the_module(root, values):
    """Clips, buffers and joins with GeoPandas for the flood's values."""
    flood = read(root, FLOOD_FILE, 25830)
    water = flood.union_all()
    v = values["valencia"]
    assert abs(flood.area.sum() / 1e4 - v["flood_ha"]) < 1.0
    health = read(root, "valencia-2024/valencia_city_health_facilities.geojson", 25830)
    for metres in (2000 * FOOT - 30, 2000 * FOOT, 2000 * FOOT + 30):
        near = health[health.intersects(water.buffer(metres))]
        assert sorted(near.equipamien) == sorted(v["within_2000_feet"]["names"])
    centres = health[health.equipamien.str.startswith("CENTRO DE SALUD")]
    for metres in (2 * MILE - 30, 2 * MILE, 2 * MILE + 30):
        far = centres[~centres.intersects(water.buffer(metres))]
        assert sorted(far.equipamien) == sorted(v["health_centres_beyond_2_miles"]["names"])
    consultorios = health[health.equipamien.str.startswith("CONSULTORIO")]
    close = consultorios.intersects(water.buffer(1500))
    assert round(100 * close.mean(), 1) == v["consultorios_within_1500m_pct"] == 42.9
    named = health[health.equipamien.str.startswith("HOSPITAL")]
    ranked = named.assign(d=named.distance(water)).sort_values("d")
    assert ranked.d.iloc[1] - ranked.d.iloc[0] >= 30 and ranked.d.iloc[0] > 0
    assert [ranked.equipamien.iloc[0]] == v["hospital_named_nearest"]["names"]

    south = aoi_frame("valencia_south_area.geojson", 25830)
    inside = health.sjoin(south, predicate="intersects")
    far = inside[~inside.intersects(water.buffer(600))]
    assert sorted(far.equipamien) == sorted(values["aoi"]["valencia_south_area"]["beyond_600m"]["names"])

    c = values["catarroja"]
    lines = read(root, OSM + "lineas.geojson", 25830)
    cycleways = lines[lines.highway == "cycleway"]
    wet = gpd.clip(cycleways, flood).length.sum()
    assert abs(wet / 1000 - c["cycleway_km_in_flood"]) < 0.02
    assert abs(100 * wet / cycleways.length.sum() - c["cycleway_pct_in_flood"]) < 0.1
    for key, value in {"secondary_km_in_flood": "secondary", "unclassified_km_in_flood": "unclassified"}.items():
        assert abs(gpd.clip(lines[lines.highway == value], flood).length.sum() / 1000 - c[key]) < 0.02, key
    sketch = aoi_frame("catarroja_east_sketch.geojson", 25830)
    k = values["aoi"]["catarroja_east_sketch"]
    rail = gpd.clip(gpd.clip(lines[lines.railway == "rail"], sketch), flood)
    assert abs(rail.length.sum() / 1000 - k["rail_km_flooded"]) < 0.02
    assert abs(gpd.clip(lines[lines.highway == "motorway"], sketch).length.sum() / 1000 - k["motorway_km"]) < 0.02

    polygons = read(root, OSM + "poligonos.geojson", 25830)
    town = polygons[(polygons["boundary"] == "administrative") & (polygons["name"] == "Catarroja")]
    town_wet = gpd.clip(flood, town).area.sum()
    assert abs(town_wet / 1e6 - c["municipality_flooded_km2"]) < 0.01
    assert abs(100 * town_wet / town.area.sum() - c["municipality_flooded_pct"]) < 0.1
    points = read(root, OSM + "puntos.geojson", 25830)
    heritage = pd.concat([points[points.historic.notna()], polygons[polygons.historic.notna()]])
    heritage_wet = heritage.intersects(water.buffer(-30))  # each flooded one reaches 30 m in, each dry one stays out
    assert not bool(heritage[~heritage_wet].intersects(water.buffer(30)).any())
    assert sorted(heritage.name[heritage_wet]) == c["heritage_in_flood"] and len(c["heritage_dry"]) == 2
    junctions = points[points.highway == "motorway_junction"]
    assert int(junctions.intersects(water).sum()) == c["motorway_junctions_in_flood"] == 2
    farmland = polygons[polygons.landuse == "farmland"]
    assert (int(farmland.intersects(water).sum()), int((~farmland.intersects(water)).sum())) == (
        c["farmland_in_flood"],
        c["farmland_dry"],
    )
    assert int(farmland.intersects(water.buffer(-30)).sum()) == c["farmland_in_flood"]  # none barely wet
    assert int(farmland.intersects(water.buffer(30)).sum()) == c["farmland_in_flood"]  # none barely dry
    for key, (column, value) in {
        "industrial_ha_in_flood": ("landuse", "industrial"),
        "park_ha_in_flood": ("leisure", "park"),
    }.items():
        assert abs(gpd.clip(polygons[polygons[column] == value].dissolve(), flood).area.sum() / 1e4 - c[key]) < 0.1, key
    pharmacies = points[points.amenity == "pharmacy"]
    for metres in (220, 250, 280):
        near = pharmacies[pharmacies.intersects(water.buffer(metres))]
        assert sorted(near.name) == sorted(c["pharmacies_within_250m"]["names"])

    public = read(root, PLAN_FILE, 25830)
    wet = public.intersects(water)
    dry = public[~wet].assign(eur=[eur(pd.Series([t])) for t in public.val_dany[~wet]])
    costliest = dry.sort_values("eur", ascending=False).iloc[0]
    assert ([costliest.titulo], costliest.eur) == (c["public_costliest_dry"]["names"], c["public_costliest_dry_eur"])
    running = public[public.estado == "En ejecución"]
    assert (len(running), pytest.approx(eur(running.subv_apro), abs=0.01)) == (
        c["public_running"],
        c["public_running_subsidy_eur"],
    )
    culture = public[(public.capa == "Centros culturales") & wet]
    assert sorted(culture.titulo) == c["public_culture_flooded"]
    assert eur(culture.val_dany) == pytest.approx(c["public_culture_flooded_eur"], abs=0.01)
    social = public[(public.capa == "Centros sociosanitarios") & ~wet]
    assert (len(social), pytest.approx(eur(social.val_dany), abs=0.01)) == (
        c["public_social_dry"],
        c["public_social_dry_eur"],
    )


def test_lahaina_values_recomputed_without_the_module(root, values):
    labels = read(root, "lahaina-2023/Maui_Wildfires_August_0.geojson", 32604)
    burn = read(root, "lahaina-2023/lahaina_burn_area.geojson", 32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    area = np.asarray(shapely.area(shapely.make_valid(labels.geometry.values)))
    cls = labels["class"].to_numpy()
    lahaina = values["lahaina"]
    assert burn_area.area / 1e4 == pytest.approx(lahaina["burn_ha"], abs=0.1)
    assert burn_area.area / 4046.8564224 == pytest.approx(lahaina["burn_acres"], abs=1)
    buildings = cls != "Background"
    assert round(100 * (cls[buildings] == "Damaged Building").mean(), 1) == lahaina["damaged_pct_of_building_labels"]
    assert int(((cls == "Damaged Building") & (area > 1000)).sum()) == lahaina["damaged_labels_over_1000m2"] == 9
    assert area[cls == "Building"].mean() == pytest.approx(lahaina["intact_mean_m2"], abs=0.1)


# -------------------------------------------------------------------------------------- apartness
def test_every_question_is_apart_from_the_bench_questions(heldout6):
    others = bench_questions(TASKS_FILE) + bench_questions(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += bench_questions(split)
    assert len(others) > 400
    assert not too_close(questions(heldout6), others)


def test_every_question_is_apart_from_the_reading_bank(heldout6):
    assert not too_close(questions(heldout6), reading_bank_questions())


def test_the_questions_are_apart_from_each_other(heldout6):
    mine = questions(heldout6)
    assert not [close for i in range(len(mine)) for close in too_close(mine[i + 1 :], [mine[i]])]
