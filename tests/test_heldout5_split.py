"""The fifth held-out question split (``bench/heldout5.json``): 51 questions written without looking at how GeoFaham
reads a question (nothing under ``geofaham_plugin/core/planning/`` nor the paraphrase suite was read, and the product
was not run on them), in four languages, each apart from every question the product may have been shaped on (the
bench's tasks, its paraphrase suite, the first four held-out splits and the planner's reading bank), with expected
values that ``bench/ground_truth_heldout5.py`` computes from the sample data by code of its own (no GeoFaham import).
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

HELDOUT5_FILE = BENCH_DIR / "heldout5.json"
EARLIER_SPLITS = tuple(BENCH_DIR / f"{name}.json" for name in ("heldout", "heldout2", "heldout3", "heldout4"))
NEW_AOI = "east_altadena_kinneloa.geojson"
DESTROYED, NONE = "Destroyed (>50%)", "No Damage"
STANDING = ["Affected (1-9%)", "Minor (10-25%)", "Major (26-50%)"]
EATON_FILE = "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson"
PALISADES_FILE = "palisades-2025/DINS_2025_Palisades_Public_View.geojson"
HOSPITALS_FILE = "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson"
FLOOD_FILE = "valencia-2024/emsr773_observed_flood_merged.geojson"
OSM = "valencia-2024/osm-catarroja/"
#: the turns whose honest answer is a short breakdown: two to four figures, each told apart by its label
SHORT_BREAKDOWNS = (
    "ho5_eaton_apartment_grades",
    "ho5_palisades_mixed_use_grades",
    "ho5_cmp_motor_homes_lost",
    "ho5_aoi_east_altadena_lost_vs_untouched",
    "ho5_es_cmp_plurifamiliares_destruidas",
    "ho5_fr_cmp_infrastructures_detruites",
    "ho5_pt_cmp_dano_minor",
    "ho5_pt_aoi_vila_multifamiliares",
)


@pytest.fixture(scope="module")
def heldout5() -> list[TaskSpec]:
    return load_tasks(HELDOUT5_FILE)


@pytest.fixture(scope="module")
def values() -> dict:
    return load_expected()["heldout5"]


def read(root: Path, path: str, epsg: int | None = None) -> gpd.GeoDataFrame:
    gdf = gpd.read_file(root / path)
    return gdf.to_crs(epsg) if epsg else gdf


def aoi_frame(name: str, epsg: int | None = None) -> gpd.GeoDataFrame:
    gdf = gpd.GeoDataFrame(geometry=[aoi_polygon(name)], crs=4326)
    return gdf.to_crs(epsg) if epsg else gdf


# ---------------------------------------------------------------------------------------- the file
def test_every_task_loads_in_the_heldout_split(heldout5):
    assert len(heldout5) == 51
    ids = [t.id for t in heldout5]
    assert len(ids) == len(set(ids)) and all(i.startswith("ho5_") for i in ids)
    assert {t.split for t in heldout5} == {"heldout"}
    assert all(t.offline and not t.follow_ups and t.expectations for t in heldout5)
    assert Counter(t.language for t in heldout5) == {"en": 26, "es": 9, "fr": 8, "pt": 8}
    assert all(t.id.startswith(f"ho5_{t.language}_") for t in heldout5 if t.language != "en")
    others = load_tasks(TASKS_FILE) + load_tasks(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += load_tasks(split)
    assert not set(ids) & {t.id for t in others}


def test_every_expectation_points_into_the_heldout5_values(heldout5):
    expected = load_expected()
    for task in heldout5:
        for e in task.all_expectations():
            assert e.ref is not None and e.ref.startswith("heldout5."), (task.id, e.id)
            assert e.description.strip(), (task.id, e.id)
            assert VALUE_KINDS[e.kind](e.resolve(expected)), (task.id, e.id, e.resolve(expected))


def test_the_split_asks_every_kind_of_question(heldout5):
    """Counts, shares, breakdowns, names, distances, yes/no, areas, lengths and sums; several figures in one turn."""
    kinds = Counter(e.kind for t in heldout5 for e in t.expectations)
    assert all(kinds[k] >= 2 for k in ("count", "value", "count_by", "names", "distance", "boolean")), kinds
    units = {e.unit for t in heldout5 for e in t.expectations}
    assert {"%", "m", "km", "m2", "ha", "km2", "EUR"} <= units
    assert sum(len(t.expectations) > 1 for t in heldout5) >= 25
    assert {t.aoi.kind for t in heldout5} == {"damage", "hazard", "layer"}
    assert sum(t.buffer_m is not None for t in heldout5) >= 7  # within / farther than a stated distance
    words = " ".join(t.question for t in heldout5)
    for attribute in ("OWNER", "TYPE", "HELIPAD", "BEDS"):  # the HIFLD attributes the hospital turns filter on
        assert attribute in words, attribute


def test_short_breakdowns_are_two_to_four_labelled_figures(heldout5):
    """A short breakdown's figures are told apart by their labels: the groups of one count_by (two to four of them,
    beside an unlabelled total), or two to four counts with a grade or an event each."""
    expected = load_expected()
    by_id = {t.id: t for t in heldout5}
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


def test_several_figures_carry_their_labels(heldout5):
    """Grades, events, relations and measures label the figures a turn asks for together."""
    by_id = {t.id: t for t in heldout5}
    for task_id in ("ho5_aoi_east_altadena_lost_vs_untouched", "ho5_pt_aoi_vila_multifamiliares"):
        assert [e.group for e in by_id[task_id].expectations] == ["destroyed", "none"], task_id
    for task_id in (
        "ho5_cmp_motor_homes_lost",
        "ho5_cmp_single_family_destroyed_pct",
        "ho5_es_cmp_plurifamiliares_destruidas",
        "ho5_fr_cmp_infrastructures_detruites",
        "ho5_pt_cmp_dano_minor",
    ):
        assert [e.events for e in by_id[task_id].expectations] == [[11], [12, 13, 14]], task_id
    counts = [e for e in by_id["ho5_catarroja_pumping_stations"].expectations if e.kind == "count"]
    assert [e.relation for e in counts] == ["inside", "outside"]
    assert [e.relation for e in by_id["ho5_pt_catarroja_viveiros"].expectations] == ["inside", "outside"]
    for task_id in (
        "ho5_eaton_acute_helipad_8km_beds",
        "ho5_lahaina_maui_30km_beds",
        "ho5_catarroja_plan_prevista_flooded_eur",
        "ho5_es_catarroja_plan_en_ejecucion",
    ):
        assert [e.measure for e in by_id[task_id].expectations] == [None, "sum"], task_id
    beds = [e for e in by_id["ho5_palisades_public_owned_6km"].expectations if e.kind == "value"]
    assert [e.measure for e in beds] == ["sum"]
    shares = by_id["ho5_aoi_valencia_south_flooded_km2_pct"].expectations
    assert [(e.measure, e.unit) for e in shares] == [("area", "km2"), ("share", "%")]


def test_aoi_files_are_the_ones_the_runner_writes(heldout5, tmp_path):
    with_files = [t for t in heldout5 if t.input_files]
    assert len(with_files) >= 8 and sum(NEW_AOI in t.input_files for t in with_files) >= 3
    for task in with_files:
        assert all(name in AOI_FILES for name in task.input_files), task.id
        assert all(name in task.question for name in task.input_files), task.id  # the question names its area
        assert task.aoi.kind == "layer" and task.aoi.layers == task.input_files, task.id
    written = gpd.read_file(write_input_file(NEW_AOI, tmp_path))
    assert len(written) == 1 and written.crs.to_epsg() == 4326
    assert written.geometry.iloc[0].equals(aoi_polygon(NEW_AOI))
    assert not aoi_polygon(NEW_AOI).intersects(aoi_polygon("west_altadena_area.geojson"))


def test_the_fire_aoi_variants_are_unchanged_by_the_new_aoi_file():
    """The paraphrase suite's AOI variants count DINS points in the two fire AOI files of its own only."""
    assert set(load_expected()["variants"]["aoi"]) == {"west_altadena_area", "palisades_village_aoi"}


def test_the_cli_and_the_kept_runs_know_the_split():
    from bench.cli import build_parser
    from bench.runs import SPLIT_FILES

    args = build_parser().parse_args(["tasks", "--tasks-file", "heldout5"])
    assert args.tasks_file == HELDOUT5_FILE
    args = build_parser().parse_args(["run", "--tasks-file", "heldout5", "--offline"])
    assert args.tasks_file == HELDOUT5_FILE
    assert SPLIT_FILES["heldout5"] == HELDOUT5_FILE.name


def test_the_ground_truth_reuses_the_earlier_splits_helpers():
    """Reading, projecting and tabulating are the first split's code, the threshold guard and the area and length
    helpers the third split's, the 'nearest are apart' guard and the Palisades hull the fourth split's."""
    import bench.ground_truth_heldout as first
    import bench.ground_truth_heldout3 as third
    import bench.ground_truth_heldout4 as fourth
    import bench.ground_truth_heldout5 as fifth

    for name in ("Layers", "geoms", "touching", "metres", "ranked", "tally", "pct", "euros", "hospitals"):
        assert getattr(fifth, name) is getattr(first, name), name
    for name in ("assert_clear", "clipped_km", "hectares", "km2", "projected_aoi", "CLEARANCE"):
        assert getattr(fifth, name) is getattr(third, name), name
    for name in ("assert_apart", "palisades_hull"):
        assert getattr(fifth, name) is getattr(fourth, name), name


# ------------------------------------------------------------------------------------ ground truth
@pytest.fixture(scope="module")
def root() -> Path:
    return sample_data()


def test_expected_heldout5_values_are_what_the_module_computes(root):
    from bench.ground_truth_heldout5 import heldout5 as compute_heldout5

    fresh = json.loads(json.dumps(compute_heldout5(root), ensure_ascii=False))
    assert fresh["heldout5"] == load_expected()["heldout5"]


def test_dins_values_recomputed_without_the_module(root, values):
    """The DINS figures again, with plain pandas filters, cross tabulations and spatial joins."""
    eaton = read(root, EATON_FILE)
    e = values["eaton"]
    flats = eaton[eaton.STRUCTURETYPE.str.startswith("Multi Family")]
    grades = flats.DAMAGE.map(lambda g: g.split(" ")[0].lower()).replace({"no": "none"}).value_counts().to_dict()
    assert grades == e["multi_family_by_grade"] and len(flats) == e["multi_family_total"] == 24
    dwelling = eaton.STRUCTURETYPE.str.contains("Residence|Mobile Home|Motor Home", regex=True)
    dwelling &= eaton.STRUCTURETYPE != "Mixed Commercial/Residential"
    assert int((~dwelling & (eaton.DAMAGE == DESTROYED)).sum()) == e["not_a_home_destroyed"] == 860
    table = eaton.groupby(["STRUCTURETYPE", "DAMAGE"]).size()
    tall = table["Single Family Residence Multi Story"]
    assert round(100 * tall[DESTROYED] / tall.drop(NONE).sum(), 1) == e["multi_story_sfr_destroyed_pct_of_damaged"]
    sfr = eaton.STRUCTURETYPE.str.startswith("Single Family")
    assert int((~sfr & (eaton.DAMAGE == NONE)).sum()) == e["not_single_family_no_damage"] == 769
    low = table["Single Family Residence Single Story"]
    assert round(100 * low[DESTROYED] / low.sum(), 1) == e["one_story_sfr_destroyed_pct"]

    pal = read(root, PALISADES_FILE)
    p = values["palisades"]
    mixed = pal[pal.STRUCTURETYPE == "Mixed Commercial/Residential"].DAMAGE.value_counts()
    assert (mixed[DESTROYED], mixed[NONE], mixed["Affected (1-9%)"]) == (3, 5, 2)
    assert p["mixed_use_by_grade"] == {"affected": 2, "destroyed": 3, "none": 5} and p["mixed_use_total"] == 10
    table = pal.groupby(["STRUCTURETYPE", "DAMAGE"]).size()
    wide = table["Mobile Home Double Wide"]
    assert round(100 * wide[DESTROYED] / wide.sum(), 1) == p["double_wide_destroyed_pct"] == 97.5
    tall = table["Single Family Residence Multi Story"]
    assert round(100 * tall[NONE] / tall.sum(), 1) == p["multi_story_sfr_no_damage_pct"]
    standing = pal[pal.DAMAGE.isin(STANDING)].STRUCTURETYPE.value_counts()
    assert standing["Multi Family Residence Multi Story"] == p["multi_story_multi_family_standing"] == 49
    assert standing["Utility Misc Structure"] == p["outbuildings_standing"] == 116
    assert standing["School"] == p["schools_standing"] == 7

    c = values["comparative"]
    for fire, dins, event in (("eaton", eaton, 11), ("palisades", pal, 12)):
        lost = dins[dins.DAMAGE == DESTROYED].STRUCTURETYPE
        assert int((lost == "Motor Home").sum()) == c["motor_homes_destroyed"][fire], event
        assert int(lost.str.startswith("Multi Family").sum()) == c["multi_family_destroyed"][fire], event
        assert int((lost == "Infrastructure").sum()) == c["infrastructure_destroyed"][fire], event
        assert int((dins.DAMAGE == "Minor (10-25%)").sum()) == c["minor"][fire], event
        homes = dins[dins.STRUCTURETYPE.str.startswith("Single Family")]
        assert round(100 * (homes.DAMAGE == DESTROYED).mean(), 1) == c["single_family_destroyed_pct"][fire], event

    a = values["aoi"]
    east = eaton.sjoin(aoi_frame(NEW_AOI), predicate="intersects")
    k = a["east_altadena_kinneloa"]
    assert len(east) == k["inside"]
    assert (int((east.DAMAGE == DESTROYED).sum()), int((east.DAMAGE == NONE).sum())) == (k["destroyed"], k["no_damage"])
    assert east[east.DAMAGE == DESTROYED].STRUCTURETYPE.value_counts().to_dict() == k["destroyed_by_type"]
    homes = east[east.STRUCTURETYPE.str.startswith("Single Family")]
    assert round(100 * (homes.DAMAGE == DESTROYED).mean(), 1) == k["single_family_destroyed_pct"]
    west = eaton.sjoin(aoi_frame("west_altadena_area.geojson"), predicate="intersects")
    sheds = west[west.STRUCTURETYPE == "Utility Misc Structure"]
    w = a["west_altadena_area"]
    assert (len(sheds), round(100 * (sheds.DAMAGE == DESTROYED).mean(), 1)) == (
        w["outbuildings"],
        w["outbuildings_destroyed_pct"],
    )
    village = pal.sjoin(aoi_frame("palisades_village_aoi.geojson"), predicate="intersects")
    flats = village[village.STRUCTURETYPE.str.startswith("Multi Family")].DAMAGE.value_counts()
    v = a["palisades_village_aoi"]
    assert (flats[DESTROYED], flats[NONE]) == (v["multi_family_destroyed"], v["multi_family_no_damage"])


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
    near = within(perimeter, 5000, la[la.OWNER == "NON-PROFIT"])
    assert sorted(near.NAME) == sorted(e["nonprofit_within_5km"]["names"]) and len(near) == 5
    two = nearest(perimeter, 2, la[la.OWNER == "PROPRIETARY"])
    assert list(two.NAME) == e["proprietary_nearest_2"]["names"]
    assert dict(zip(two.NAME, two.d.round(1), strict=True)) == pytest.approx(e["proprietary_nearest_2"]["distances_m"])
    medevac = within(perimeter, 8000, la[(la.TYPE == "GENERAL ACUTE CARE") & (la.HELIPAD == "Y")])
    assert (len(medevac), int(medevac.BEDS.sum())) == (
        e["acute_helipad_within_8km"],
        e["acute_helipad_beds_within_8km"],
    )
    big = within(perimeter, 10_000, la[la.BEDS > 300])
    assert sorted(big.NAME) == sorted(e["over_300_beds_within_10km"]["names"])

    public = within(hull, 6000, la[la.OWNER.str.startswith("GOVERNMENT")])
    assert sorted(public.NAME) == sorted(p["public_within_6km"]["names"])
    assert int(public.BEDS.sum()) == p["public_beds_within_6km"] == 1301
    three = nearest(hull, 3, la[la.TYPE != "PSYCHIATRIC"])
    assert list(three.NAME) == p["non_psychiatric_nearest_3"]["names"]
    pair = nearest(hull, 2, la[(la.TYPE == "GENERAL ACUTE CARE") & (la.HELIPAD == "N")])
    assert list(pair.NAME) == p["acute_no_helipad_nearest_2"]["names"]
    assert dict(zip(pair.NAME, pair.d.round(1), strict=True)) == pytest.approx(
        p["acute_no_helipad_nearest_2"]["distances_m"]
    )

    east = aoi_frame(NEW_AOI, 26911).geometry.iloc[0]
    one = nearest(east, 1, la[la.TYPE == "GENERAL ACUTE CARE"])
    assert dict(zip(one.NAME, one.d.round(1), strict=True)) == pytest.approx(
        values["aoi"]["east_altadena_kinneloa"]["nearest_acute"]["distances_m"], abs=0.1
    )

    burn = read(root, "lahaina-2023/lahaina_burn_area.geojson", 32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    maui = hospitals[(hospitals.STATE == "HI") & (hospitals.COUNTY == "MAUI")].to_crs(32604)
    close = within(burn_area, 30_000, maui)
    lahaina = values["lahaina"]
    assert (len(close), int(close.BEDS.sum())) == (lahaina["hospitals_within_30km"], lahaina["beds_within_30km"])


def test_valencia_and_catarroja_values_recomputed_without_the_module(root, values):
    """Clips, buffers and joins with GeoPandas for the flood's values."""
    flood = read(root, FLOOD_FILE, 25830)
    water = flood.union_all()
    health = read(root, "valencia-2024/valencia_city_health_facilities.geojson", 25830)
    v = values["valencia"]
    for metres in (4970, 5000, 5030):
        far = health[~health.intersects(water.buffer(metres))]
        assert sorted(far.equipamien) == sorted(v["beyond_5km"]["names"])
    consultorios = health[health.equipamien.str.startswith("CONSULTORIO")]
    for metres in (470, 500, 530):
        near = consultorios[consultorios.intersects(water.buffer(metres))]
        assert sorted(near.equipamien) == sorted(v["consultorios_within_500m"]["names"])
    centres = health[health.equipamien.str.startswith("CENTRO DE SALUD") & ~health.intersects(water)]
    ranked = centres.assign(d=centres.distance(water)).sort_values("d")
    assert ranked.d.iloc[2] - ranked.d.iloc[1] >= 30
    assert list(ranked.equipamien.head(2)) == v["dry_health_centres_nearest_2"]["names"]

    south = aoi_frame("valencia_south_area.geojson", 25830)
    wet = gpd.clip(flood, south).area.sum()
    s = values["aoi"]["valencia_south_area"]
    assert abs(wet / 1e6 - s["flooded_km2"]) < 0.01
    assert abs(100 * wet / south.area.sum() - s["flooded_pct"]) < 0.1

    c = values["catarroja"]
    lines = read(root, OSM + "lineas.geojson", 25830)
    for key, (column, value) in {
        "tertiary_km_in_flood": ("highway", "tertiary"),
        "footway_km_in_flood": ("highway", "footway"),
        "stream_km_in_flood": ("waterway", "stream"),
    }.items():
        assert abs(gpd.clip(lines[lines[column] == value], flood).length.sum() / 1000 - c[key]) < 0.02, key
    sketch = aoi_frame("catarroja_east_sketch.geojson", 25830)
    k = values["aoi"]["catarroja_east_sketch"]
    assert abs(gpd.clip(lines[lines.highway == "tertiary"], sketch).length.sum() / 1000 - k["tertiary_km"]) < 0.02
    points = read(root, OSM + "puntos.geojson", 25830)
    crossings = points[points.highway == "crossing"]
    assert len(crossings.sjoin(sketch, predicate="intersects")) == k["crossings"]

    polygons = read(root, OSM + "poligonos.geojson", 25830)
    pumps = gpd.GeoDataFrame(
        gpd.pd.concat([points[points.man_made == "pumping_station"], polygons[polygons.man_made == "pumping_station"]]),
        crs=25830,
    )
    wet = pumps.intersects(water)
    assert sorted(pumps.name[wet]) == c["pumping_stations_in_flood_names"]
    assert (int(wet.sum()), int((~wet).sum())) == (c["pumping_stations_in_flood"], c["pumping_stations_dry"])
    orchards = polygons[polygons.landuse == "orchard"].dissolve()
    assert abs(gpd.clip(orchards, flood).area.sum() / 1e4 - c["orchard_ha_in_flood"]) < 0.1
    pitches = polygons[polygons.leisure == "pitch"]
    assert round(100 * pitches.intersects(water).mean(), 1) == c["pitches_in_flood_pct"]
    nurseries = polygons[polygons.landuse == "plant_nursery"].intersects(water)
    assert (int(nurseries.sum()), int((~nurseries).sum())) == (c["nurseries_in_flood"], c["nurseries_dry"])
    station = points[points.railway == "station"]
    assert float(station.distance(water).iloc[0]) == pytest.approx(c["station_distance_m"], abs=0.1)
    assert c["station_in_flood"] is False and c["station_distance_m"] >= 30
    university = polygons[polygons.amenity == "university"]
    assert c["university_in_flood"] is True and bool(university.intersects(water.buffer(-30)).iloc[0])

    public = read(root, "valencia-2024/catarroja_public_buildings_dana.geojson", 25830)
    inside = public.intersects(water)

    def eur(texts: gpd.pd.Series) -> float:
        return sum(float(x.replace("€", "").strip().replace(".", "").replace(",", ".")) for x in texts.dropna())

    planned = public[(public.estado == "Prevista") & inside]
    assert (len(planned), pytest.approx(eur(planned.val_dany), abs=0.01)) == (
        c["public_prevista_in_flood"],
        c["public_prevista_in_flood_eur"],
    )
    running = public[public.estado == "En ejecución"]
    assert (len(running), pytest.approx(eur(running.val_dany), abs=0.01)) == (
        c["public_en_ejecucion"],
        c["public_en_ejecucion_eur"],
    )
    schools = public[(public.capa == "Centros educativos") & ~inside]
    assert sorted(schools.titulo) == sorted(c["public_education_dry"]["names"])
    house = public[public.titulo == "Casa Cultura"]
    assert float(house.distance(water).iloc[0]) == pytest.approx(c["culture_house_distance_m"], abs=0.1)
    assert c["culture_house_in_flood"] is False and c["culture_house_distance_m"] >= 30


def test_lahaina_values_recomputed_without_the_module(root, values):
    labels = read(root, "lahaina-2023/Maui_Wildfires_August_0.geojson", 32604)
    burn = read(root, "lahaina-2023/lahaina_burn_area.geojson", 32604)
    burn_area = shapely.union_all(shapely.make_valid(burn.geometry.values))
    geometry = shapely.make_valid(labels.geometry.values)
    intact = (labels["class"] == "Building").to_numpy()
    touching = np.asarray(shapely.intersects(geometry, burn_area))
    lahaina = values["lahaina"]
    assert (int(intact.sum()), round(100 * touching[intact].mean(), 1)) == (
        lahaina["intact"],
        lahaina["intact_touching_pct"],
    )
    clipped = shapely.intersection(shapely.union_all(geometry[intact]), burn_area).area
    assert clipped == pytest.approx(lahaina["intact_area_in_burn_m2"], rel=1e-3)


# -------------------------------------------------------------------------------------- apartness
def test_every_question_is_apart_from_the_bench_questions(heldout5):
    others = bench_questions(TASKS_FILE) + bench_questions(PARAPHRASES_FILE)
    for split in EARLIER_SPLITS:
        others += bench_questions(split)
    assert len(others) > 350
    assert not too_close(questions(heldout5), others)


def test_every_question_is_apart_from_the_reading_bank(heldout5):
    assert not too_close(questions(heldout5), reading_bank_questions())


def test_the_questions_are_apart_from_each_other(heldout5):
    mine = questions(heldout5)
    assert not [close for i in range(len(mine)) for close in too_close(mine[i + 1 :], [mine[i]])]
