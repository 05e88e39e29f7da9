"""The fourth held-out question split (``bench/heldout4.json``): 51 questions written without looking at how GeoFaham
reads a question (nothing under ``geofaham_plugin/core/planning/`` nor the paraphrase suite was read, and the product
was not run on them), in four languages, each apart from every question the product may have been shaped on (the
bench's tasks, its paraphrase suite, the first three held-out splits and the planner's reading bank), with expected
values that ``bench/ground_truth_heldout4.py`` computes from the sample data by code of its own (no GeoFaham import).
The checks the held-out splits share (expected-value kinds, the sample data, the reading bank's questions, the
similarity measure) come from the second split's tests."""

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

HELDOUT4_FILE = BENCH_DIR / "heldout4.json"
EARLIER_SPLITS = (BENCH_DIR / "heldout.json", BENCH_DIR / "heldout2.json", BENCH_DIR / "heldout3.json")
NEW_AOI = "valencia_south_area.geojson"
DESTROYED, NONE = "Destroyed (>50%)", "No Damage"
STANDING = ["Affected (1-9%)", "Minor (10-25%)", "Major (26-50%)"]
#: the turns whose honest answer is a short breakdown: two to four figures, each told apart by its label
SHORT_BREAKDOWNS = (
    "ho4_eaton_infrastructure_grades",
    "ho4_eaton_multistory_lost_vs_untouched",
    "ho4_cmp_outbuildings_destroyed_each_fire",
    "ho4_aoi_altadena_houses_lost_vs_intact",
    "ho4_catarroja_waterways_by_type",
    "ho4_es_palisades_comercial_varias_plantas",
    "ho4_es_catarroja_plan_fuera_por_estado",
    "ho4_fr_cmp_eglises_detruites",
)


@pytest.fixture(scope="module")
def heldout4() -> list[TaskSpec]:
    return load_tasks(HELDOUT4_FILE)


@pytest.fixture(scope="module")
def values() -> dict:
    return load_expected()["heldout4"]


def read(root: Path, path: str, epsg: int | None = None) -> gpd.GeoDataFrame:
    gdf = gpd.read_file(root / path)
    return gdf.to_crs(epsg) if epsg else gdf


# ---------------------------------------------------------------------------------------- the file
def test_every_task_loads_in_the_heldout_split(heldout4):
    assert len(heldout4) == 51
    ids = [t.id for t in heldout4]
    assert len(ids) == len(set(ids)) and all(i.startswith("ho4_") for i in ids)
    assert {t.split for t in heldout4} == {"heldout"}
    assert all(t.offline and not t.follow_ups and t.expectations for t in heldout4)
    assert Counter(t.language for t in heldout4) == {"en": 26, "es": 9, "fr": 8, "pt": 8}
    assert all(t.id.startswith(f"ho4_{t.language}_") for t in heldout4 if t.language != "en")
    others = load_tasks(TASKS_FILE) + load_tasks(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += load_tasks(split)
    assert not set(ids) & {t.id for t in others}


def test_every_expectation_points_into_the_heldout4_values(heldout4):
    expected = load_expected()
    for task in heldout4:
        for e in task.all_expectations():
            assert e.ref is not None and e.ref.startswith("heldout4."), (task.id, e.id)
            assert e.description.strip(), (task.id, e.id)
            assert VALUE_KINDS[e.kind](e.resolve(expected)), (task.id, e.id, e.resolve(expected))


def test_the_split_asks_every_kind_of_question(heldout4):
    """Counts, shares, breakdowns, names, distances, yes/no, areas and lengths; several figures in one question."""
    kinds = Counter(e.kind for t in heldout4 for e in t.expectations)
    assert all(kinds[k] >= 2 for k in ("count", "value", "count_by", "names", "distance", "boolean")), kinds
    units = {e.unit for t in heldout4 for e in t.expectations}
    assert {"%", "m", "km", "m2", "ha", "km2", "EUR"} <= units
    assert sum(len(t.expectations) > 1 for t in heldout4) >= 25
    assert {t.aoi.kind for t in heldout4} == {"damage", "hazard", "layer"}
    assert sum(t.buffer_m is not None for t in heldout4) >= 7  # within / farther than a stated distance


def test_short_breakdowns_are_two_to_four_labelled_figures(heldout4):
    """A short breakdown's figures are told apart by their labels: the groups of one count_by (two to four of them,
    beside an unlabelled total), or two counts with a grade or an event each."""
    expected = load_expected()
    by_id = {t.id: t for t in heldout4}
    for task_id in SHORT_BREAKDOWNS:
        task = by_id[task_id]
        by = [e for e in task.expectations if e.kind == "count_by"]
        if by:
            assert len(by) == 1 and 2 <= len(by[0].resolve(expected)) <= 4, task_id
            assert [e.labelled for e in task.expectations if e.kind == "count"] == [False], task_id
        else:
            counts = [e for e in task.expectations if e.kind == "count"]
            assert 2 <= len(counts) <= 4 and all(e.labelled for e in counts), task_id
            labels = [(e.group, tuple(e.events)) for e in counts]
            assert len(set(labels)) == len(labels), task_id


def test_several_figures_carry_their_labels(heldout4):
    """Grades, events, relations and measures label the figures a turn asks for together."""
    by_id = {t.id: t for t in heldout4}
    for task_id in ("ho4_eaton_multistory_lost_vs_untouched", "ho4_aoi_altadena_houses_lost_vs_intact"):
        assert [e.group for e in by_id[task_id].expectations] == ["destroyed", "none"], task_id
    for task_id in ("ho4_cmp_outbuildings_destroyed_each_fire", "ho4_fr_cmp_eglises_detruites"):
        assert [e.events for e in by_id[task_id].expectations] == [[11], [12, 13, 14]], task_id
    relations = [e.relation for e in by_id["ho4_pt_catarroja_plano_sociossanitarios"].expectations]
    assert relations == ["all", "inside"]
    for task_id in (
        "ho4_eaton_acute_beds_8km",
        "ho4_pt_palisades_hospitais_7km_camas",
        "ho4_catarroja_recovery_outside_eur",
    ):
        assert [e.measure for e in by_id[task_id].expectations] == [None, "sum"], task_id
    for task_id in ("ho4_catarroja_crossings_count_share", "ho4_es_valencia_mas_de_35km"):
        assert [e.measure for e in by_id[task_id].expectations] == [None, "share"], task_id


def test_aoi_files_are_the_ones_the_runner_writes(heldout4, tmp_path):
    with_files = [t for t in heldout4 if t.input_files]
    assert len(with_files) >= 6 and sum(NEW_AOI in t.input_files for t in with_files) >= 2
    for task in with_files:
        assert all(name in AOI_FILES for name in task.input_files), task.id
        assert all(name in task.question for name in task.input_files), task.id  # the question names its area
        assert task.aoi.kind == "layer" and task.aoi.layers == task.input_files, task.id
    written = gpd.read_file(write_input_file(NEW_AOI, tmp_path))
    assert len(written) == 1 and written.crs.to_epsg() == 4326
    assert written.geometry.iloc[0].equals(aoi_polygon(NEW_AOI))


def test_the_fire_aoi_variants_are_unchanged_by_the_new_aoi_file():
    """The paraphrase suite's AOI variants count DINS points in the two fire AOI files only."""
    assert set(load_expected()["variants"]["aoi"]) == {"west_altadena_area", "palisades_village_aoi"}


def test_the_cli_and_the_kept_runs_know_the_split():
    from bench.cli import build_parser
    from bench.runs import SPLIT_FILES

    args = build_parser().parse_args(["tasks", "--tasks-file", "heldout4"])
    assert args.tasks_file == HELDOUT4_FILE
    args = build_parser().parse_args(["run", "--tasks-file", "heldout4", "--offline"])
    assert args.tasks_file == HELDOUT4_FILE
    assert SPLIT_FILES["heldout4"] == HELDOUT4_FILE.name


def test_the_ground_truth_reuses_the_earlier_splits_helpers():
    """Reading, projecting and tabulating are the first split's code, the threshold guard and the area and length
    helpers the third split's: imported, not copied."""
    import bench.ground_truth_heldout as first
    import bench.ground_truth_heldout3 as third
    import bench.ground_truth_heldout4 as fourth

    for name in ("Layers", "geoms", "touching", "metres", "ranked", "tally", "pct", "euros", "hospitals"):
        assert getattr(fourth, name) is getattr(first, name), name
    for name in ("assert_clear", "clipped_km", "hectares", "km2", "projected_aoi", "CLEARANCE"):
        assert getattr(fourth, name) is getattr(third, name), name


# ------------------------------------------------------------------------------------ ground truth
@pytest.fixture(scope="module")
def root() -> Path:
    return sample_data()


def test_expected_heldout4_values_are_what_the_module_computes(root):
    from bench.ground_truth_heldout4 import heldout4 as compute_heldout4

    fresh = json.loads(json.dumps(compute_heldout4(root), ensure_ascii=False))
    assert fresh["heldout4"] == load_expected()["heldout4"]


def test_dins_values_recomputed_without_the_module(root, values):
    """The DINS figures again, with plain pandas filters, cross tabulations and spatial joins."""
    eaton = read(root, "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson")
    e = values["eaton"]
    infra = eaton[eaton.STRUCTURETYPE == "Infrastructure"]
    grades = infra.DAMAGE.map(lambda g: g.split(" ")[0].lower()).replace({"no": "none"}).value_counts().to_dict()
    assert grades == e["infrastructure_by_grade"] and len(infra) == e["infrastructure_total"] == 25
    homes = eaton.STRUCTURETYPE.str.contains("Family Residence")
    assert int((homes & (eaton.DAMAGE == DESTROYED)).sum()) == e["residential_destroyed"] == 1858
    multi = eaton[eaton.STRUCTURETYPE == "Single Family Residence Multi Story"].DAMAGE.value_counts()
    assert (multi[DESTROYED], multi[NONE]) == (e["multi_story_sfr_destroyed"], e["multi_story_sfr_no_damage"])
    sfr = eaton.STRUCTURETYPE.str.startswith("Single Family")
    assert int((sfr & eaton.DAMAGE.isin(STANDING)).sum()) == e["single_family_standing_damaged"] == 253
    sheds = eaton[eaton.STRUCTURETYPE == "Utility Misc Structure"]
    assert round(100 * (sheds.DAMAGE == NONE).mean(), 1) == e["outbuildings_no_damage_pct"]
    perimeter = read(root, "eaton-2025/eaton_adjusted_fire_perimeter.geojson", 26911)
    inside = eaton.to_crs(26911).sjoin(perimeter[["geometry"]], predicate="intersects")
    inside = inside[~inside.index.duplicated()]
    assert int((inside.DAMAGE != DESTROYED).sum()) == e["inside_perimeter_not_destroyed"] == 2711

    pal = read(root, "palisades-2025/DINS_2025_Palisades_Public_View.geojson")
    p = values["palisades"]
    mobile = pal[pal.STRUCTURETYPE.str.startswith("Mobile Home")]
    assert round(100 * (mobile.DAMAGE == DESTROYED).mean(), 1) == p["mobile_homes_destroyed_pct"] == 96.2
    assert pal[pal.DAMAGE == "Major (26-50%)"].STRUCTURETYPE.value_counts().to_dict() == p["major_by_type"]
    destroyed = pal[pal.DAMAGE == DESTROYED]
    share = 100 * destroyed.STRUCTURETYPE.str.startswith("Single Family").mean()
    assert round(share, 1) == p["single_family_pct_of_destroyed"]
    standing = pal[pal.DAMAGE.isin(STANDING)]
    share = 100 * standing.STRUCTURETYPE.str.startswith("Single Family").mean()
    assert round(share, 1) == p["single_family_pct_of_standing_damaged"]
    sheds = pal[pal.STRUCTURETYPE == "Utility Misc Structure"]
    assert int((sheds.DAMAGE != DESTROYED).sum()) == p["outbuildings_not_destroyed"] == 656

    c = values["comparative"]
    for fire, dins in (("eaton", eaton), ("palisades", pal)):
        lost = dins[dins.DAMAGE == DESTROYED].STRUCTURETYPE.value_counts()
        assert (lost["Utility Misc Structure"], lost["Church"]) == (
            c["outbuildings_destroyed"][fire],
            c["churches_destroyed"][fire],
        )

    altadena = gpd.GeoDataFrame(geometry=[aoi_polygon("west_altadena_area.geojson")], crs=4326)
    houses = eaton.sjoin(altadena, predicate="intersects")
    houses = houses[houses.STRUCTURETYPE.str.startswith("Single Family")].DAMAGE.value_counts()
    a = values["aoi"]["west_altadena_area"]
    assert (houses[DESTROYED], houses[NONE]) == (a["single_family_destroyed"], a["single_family_no_damage"])
    village = gpd.GeoDataFrame(geometry=[aoi_polygon("palisades_village_aoi.geojson")], crs=4326)
    lost = pal.sjoin(village, predicate="intersects").query("DAMAGE == @DESTROYED")
    v = values["aoi"]["palisades_village_aoi"]
    assert int((lost.STRUCTURETYPE == "Utility Misc Structure").sum()) == v["outbuildings_destroyed"]
    assert int(lost.STRUCTURETYPE.str.startswith("Mobile Home").sum()) == v["mobile_homes_destroyed"]

    hull = destroyed.to_crs(26911).union_all().convex_hull
    assert abs(hull.area / 1e6 - p["hull_km2"]) < 0.01


def test_hospital_values_recomputed_without_the_module(root, values):
    """Buffers and joins instead of distances to the polygon; each threshold gives the same hospitals 30 m either
    side of it (no hospital is near a threshold)."""
    hospitals = read(root, "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson")
    la = hospitals[(hospitals.STATE == "CA") & (hospitals.COUNTY == "LOS ANGELES")].to_crs(26911)
    perimeter = read(root, "eaton-2025/eaton_adjusted_fire_perimeter.geojson", 26911).union_all()
    pal = read(root, "palisades-2025/DINS_2025_Palisades_Public_View.geojson", 26911)
    hull = pal[pal.DAMAGE == DESTROYED].union_all().convex_hull

    def within(area: shapely.Geometry, metres: float, rows: gpd.GeoDataFrame = la) -> list[str]:
        names = sorted(rows.NAME[rows.intersects(area.buffer(metres))])
        assert names == sorted(rows.NAME[rows.intersects(area.buffer(metres - 30))])
        assert names == sorted(rows.NAME[rows.intersects(area.buffer(metres + 30))])
        return names

    e, p = values["eaton"], values["palisades"]
    assert within(perimeter, 7000, la[la.TYPE != "PSYCHIATRIC"]) == sorted(e["non_psychiatric_within_7km"]["names"])
    acute = la[la.TYPE == "GENERAL ACUTE CARE"]
    near = acute[acute.NAME.isin(within(perimeter, 8000, acute))]
    assert (len(near), int(near.BEDS.sum())) == (e["acute_within_8km"], e["acute_beds_within_8km"]) == (7, 1910)
    near = la[la.NAME.isin(within(hull, 7000))]
    assert (len(near), int(near.BEDS.sum())) == (p["hospitals_within_7km"], p["beds_within_7km"]) == (7, 1687)
    trauma = la[la.TRAUMA != "NOT AVAILABLE"]
    assert within(hull, 10_000, trauma) == sorted(p["trauma_within_10km"]["names"])

    four = acute.assign(d=acute.distance(hull)).nsmallest(4, "d")
    assert list(four.NAME) == p["nearest_acute_4"]["names"]
    helipad = la[la.HELIPAD == "Y"]
    nearest = helipad.distance(hull).idxmin()
    assert [helipad.NAME[nearest]] == p["nearest_helipad"]["names"]
    acute_trauma = acute[acute.TRAUMA != "NOT AVAILABLE"]
    assert [acute_trauma.NAME[acute_trauma.distance(perimeter).idxmin()]] == e["nearest_acute_trauma"]["names"]
    altadena = gpd.GeoSeries([aoi_polygon("west_altadena_area.geojson")], crs=4326).to_crs(26911).iloc[0]
    name, metres = acute.NAME[acute.distance(altadena).idxmin()], float(acute.distance(altadena).min())
    assert {name: pytest.approx(metres, abs=0.1)} == values["aoi"]["west_altadena_area"]["nearest_acute"]["distances_m"]

    burn = read(root, "lahaina-2023/lahaina_burn_area.geojson", 32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    maui = hospitals[(hospitals.STATE == "HI") & (hospitals.TYPE == "CRITICAL ACCESS")].to_crs(32604)
    ranked = maui.assign(d=maui.distance(burn_area)).sort_values("d")
    assert list(ranked.NAME) == values["lahaina"]["critical_access"]["names"]


def test_valencia_and_catarroja_values_recomputed_without_the_module(root, values):
    """Clips, buffers and joins with GeoPandas for the flood's values."""
    flood = read(root, "valencia-2024/emsr773_observed_flood_merged.geojson", 25830)
    water = flood.union_all()
    health = read(root, "valencia-2024/valencia_city_health_facilities.geojson", 25830)
    v = values["valencia"]
    wet = health.sjoin(flood[["geometry"]], predicate="intersects")
    assert round(100 * len(wet) / len(health), 1) == v["inside_pct"]
    for metres in (3470, 3500, 3530):  # the threshold and 30 m either side give the same facilities
        assert int((~health.intersects(water.buffer(metres))).sum()) == v["beyond_3500m"] == 13
    speciality = health[health.equipamien.str.startswith("CENTRO DE ESPECIALIDADES")]
    far = sorted(speciality.equipamien[~speciality.intersects(water.buffer(2500))])
    assert far == sorted(v["speciality_beyond_2500m"]["names"])
    dry = health[health.equipamien.str.startswith("CONSULTORIO") & ~health.intersects(water)]
    assert (
        list(dry.assign(d=dry.distance(water)).nsmallest(3, "d").equipamien)
        == (v["dry_consultorios_nearest_3"]["names"])
    )

    south = gpd.GeoDataFrame(geometry=[aoi_polygon(NEW_AOI)], crs=4326).to_crs(25830)
    in_south = health.sjoin(south, predicate="intersects").drop(columns="index_right")
    s = values["aoi"]["valencia_south_area"]
    assert len(in_south) == s["facilities"] == 6
    dry_south = in_south[~in_south.intersects(water)]
    assert sorted(dry_south.equipamien) == sorted(s["dry_facilities"]["names"])
    assert abs(gpd.clip(flood, south).area.sum() / 1e4 - s["flooded_ha"]) < 1.0

    c = values["catarroja"]
    osm = "valencia-2024/osm-catarroja/"
    lines = read(root, osm + "lineas.geojson", 25830)
    waterways = lines[lines.waterway.notna()].sjoin(flood[["geometry"]], predicate="intersects")
    assert waterways.waterway.value_counts().to_dict() == c["waterways_in_flood_by_type"]
    assert abs(gpd.clip(lines[lines.waterway == "canal"], flood).length.sum() / 1000 - c["canal_km_in_flood"]) < 0.02
    assert abs(gpd.clip(lines[lines.highway == "service"], flood).length.sum() / 1000 - c["service_km_in_flood"]) < 0.05
    points = read(root, osm + "puntos.geojson", 25830)
    crossings = points[points.highway == "crossing"]
    wet = crossings.sjoin(flood[["geometry"]], predicate="intersects")
    assert (len(wet), round(100 * len(wet) / len(crossings), 1)) == (
        c["crossings_in_flood"],
        c["crossings_in_flood_pct"],
    )
    library = points[points.amenity == "library"]
    assert float(library.distance(water).iloc[0]) == pytest.approx(c["library_distance_m"], abs=0.1)
    polygons = read(root, osm + "poligonos.geojson", 25830)
    orchards = polygons[polygons.landuse == "orchard"]
    assert int((~orchards.intersects(water)).sum()) == c["orchards_missed"] == 2
    courthouse = polygons[polygons.amenity == "courthouse"]
    assert float(courthouse.distance(water).iloc[0]) == pytest.approx(c["courthouse_distance_m"], abs=0.1)
    assert bool(polygons[polygons.landuse == "cemetery"].intersects(water).any()) is c["cemetery_in_flood"] is True

    sketch = gpd.GeoDataFrame(geometry=[aoi_polygon("catarroja_east_sketch.geojson")], crs=4326).to_crs(25830)
    residential = gpd.clip(lines[lines.highway == "residential"], sketch).length.sum() / 1000
    k = values["aoi"]["catarroja_east_sketch"]
    assert abs(residential - k["residential_km"]) < 0.05
    buildings = polygons[polygons.building.notna()].sjoin(sketch, predicate="intersects")
    assert int((~buildings.intersects(water)).sum()) == k["buildings_dry"] == 218

    public = read(root, "valencia-2024/catarroja_public_buildings_dana.geojson", 25830)
    dry = public[~public.intersects(water)]
    euros = sum(float(x.replace("€", "").strip().replace(".", "").replace(",", ".")) for x in dry.val_dany.dropna())
    assert (len(dry), pytest.approx(euros, abs=0.01)) == (c["public_outside"], c["public_outside_eur"])
    assert dry.estado.value_counts().to_dict() == c["public_outside_by_estado"]
    social = public[public.capa == "Centros sociosanitarios"]
    assert (len(social), int(social.intersects(water).sum())) == (c["public_social"], c["public_social_in_flood"])


def test_lahaina_values_recomputed_without_the_module(root, values):
    labels = read(root, "lahaina-2023/Maui_Wildfires_August_0.geojson", 32604)
    burn = read(root, "lahaina-2023/lahaina_burn_area.geojson", 32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    geometry = shapely.make_valid(labels.geometry.values)
    damaged = (labels["class"] == "Damaged Building").to_numpy()
    intact = (labels["class"] == "Building").to_numpy()
    touching = np.asarray(shapely.intersects(geometry, burn_area))
    lahaina = values["lahaina"]
    assert round(100 * touching[damaged].mean(), 1) == lahaina["damaged_pct_touching_burn"]
    for metres in (220, 250, 280):
        near = np.asarray(shapely.intersects(geometry, burn_area.buffer(metres)))
        assert int((intact & ~near).sum()) == lahaina["intact_beyond_250m"] == 7
    clipped = shapely.intersection(shapely.union_all(geometry[damaged]), burn_area).area
    assert clipped == pytest.approx(lahaina["damaged_area_in_burn_m2"], rel=1e-3)


# -------------------------------------------------------------------------------------- apartness
def test_every_question_is_apart_from_the_bench_questions(heldout4):
    others = bench_questions(TASKS_FILE) + bench_questions(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += bench_questions(split)
    assert len(others) > 300
    assert not too_close(questions(heldout4), others)


def test_every_question_is_apart_from_the_reading_bank(heldout4):
    assert not too_close(questions(heldout4), reading_bank_questions())


def test_the_questions_are_apart_from_each_other(heldout4):
    mine = questions(heldout4)
    assert not [close for i in range(len(mine)) for close in too_close(mine[i + 1 :], [mine[i]])]
