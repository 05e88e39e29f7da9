"""Expected values of the seventh held-out question split (``bench/heldout7.json``), computed from the sample data.

Like the first six splits, the questions were written without looking at how GeoFaham reads a question (nothing
under ``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not run on them), and their values
are computed here by code of their own: GeoPandas, shapely and pyproj only, no import of ``geofaham_plugin``. The
reading, the projection and the small table helpers are the first split's (``bench.ground_truth_heldout``), the
threshold guard and the area/length helpers the third split's (``bench.ground_truth_heldout3``), the "nearest ones are
apart" guard and the Palisades hull the fourth split's (``bench.ground_truth_heldout4``), the AOI edge guard and the
"every feature firmly inside or outside" guard (built on the fifth split's ``assert_firmly``) the sixth split's
(``bench.ground_truth_heldout6``), imported, not copied. ``expected_values.compute`` stores the result under
``heldout7`` in ``bench/expected.json`` (``python -m bench ground-truth`` regenerates it).

Definitions (each expectation's description repeats the one it uses):

* DINS ``DAMAGE`` as published: ``No Damage`` (none, "unscathed"), ``Affected (1-9%)``, ``Minor (10-25%)``,
  ``Major (26-50%)``, ``Destroyed (>50%)``; **damaged** = any of the last four; **damaged but standing** =
  Affected, Minor or Major; "10 % damage or worse" = Minor, Major or Destroyed; "a quarter or worse" = Major or
  Destroyed. A structure is one DINS point; the Eaton layer is the 14 January snapshot (5,805 points), the
  Palisades layer the final one (11,988).
* **structure types** as in the sixth split: single-family = Single Family Residence Single and Multi Story
  ("one-storey" and "multi-storey" houses); multi-family = Multi Family Residence Single and Multi Story; mobile
  homes = Mobile Home Single, Double and Triple Wide; outbuildings = ``Utility Misc Structure``.
* **inside** a polygon: the feature intersects it; **outside** / **dry**: the rest. DINS points in an AOI file: none
  of the points a question counts lies within 10 m of the polygon's edge (``assert_off_edge``).
* **distances**: shortest planar distance between the feature and the polygon in the event's projected CRS
  (EPSG:26911 Los Angeles, EPSG:32604 Maui, EPSG:25830 Valencia), metres; 0 inside. "Within X" is ``<= X``,
  "farther than X" is ``> X``. Every threshold is at least 30 m from every distance it separates (``assert_clear``),
  every "nearest k" / "farthest" at least 30 m apart from the next candidate (``assert_apart``), and every "inside
  the flood" at least 30 m from flipping (``assert_firmly``).
* **hospitals** (Los Angeles, Maui): the HIFLD file's rows with ``STATE == 'CA'`` and ``COUNTY == 'LOS ANGELES'``,
  or ``STATE == 'HI'`` and ``COUNTY == 'MAUI'`` (every one counted here is OPEN and has a known ``BEDS``). The Eaton
  fire's area is the adjusted perimeter; the Palisades fire's, with no perimeter in the data, the convex hull of its
  Destroyed DINS points. ``OWNER``, ``TYPE``, ``HELIPAD``, ``CITY`` and ``TRAUMA`` as published; a trauma centre has
  a ``TRAUMA`` other than ``NOT AVAILABLE``.
* València health facilities: ``idsubclase`` as published (13 centro de salud, 14 hospital, 18 consultorio, 19
  centro de especialidades, empty for 8 facilities).
* Catarroja OSM: the three layers of the extract, filtered on the tag the question names; lengths of lines clipped
  to the area; areas of the union of the polygons clipped to the area.
* Catarroja recovery plan: the municipal public-buildings file; ``val_dany`` and ``subv_apro`` read as euros
  (missing or not a figure: 0); "no valuation" is an empty ``val_dany``.
* Lahaina labels: ``class`` and ``source`` as published; footprint areas after ``make_valid`` (EPSG:32604); no
  label area lies within 2 % of a size cut.
* **shares**: percent of the stated denominator, one decimal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import shapely

from .ground_truth import data_dir
from .ground_truth_heldout import (
    AFFECTED,
    COMMERCIAL,
    DESTROYED,
    GRADE,
    LA,
    MAJOR,
    MAUI,
    MINOR,
    MOBILE_HOMES,
    MULTI_FAMILY,
    NONE,
    SINGLE_FAMILY,
    UTILITY,
    VALENCIA,
    Layers,
    euros,
    geoms,
    hospitals,
    listing,
    metres,
    pct,
    ranked,
    tally,
    touching,
)
from .ground_truth_heldout3 import assert_clear, clipped_km, hectares, km2, projected_aoi
from .ground_truth_heldout4 import assert_apart, palisades_hull
from .ground_truth_heldout6 import assert_all_firm, assert_off_edge

STANDING = [AFFECTED, MINOR, MAJOR]
#: a label area counted against a size cut lies at least this share away from it
SIZE_MARGIN = 0.02


def assert_sizes_clear(areas: np.ndarray, cut: float) -> None:
    """No label area lies within ``SIZE_MARGIN`` of ``cut``: a count that a projection's scale could flip is no
    fair question."""
    close = areas[np.abs(areas - cut) < SIZE_MARGIN * cut]
    assert close.size == 0, f"areas {close.tolist()} within {SIZE_MARGIN:.0%} of {cut} m²"


def farthest_apart(dist: np.ndarray, keep: np.ndarray) -> None:
    """The farthest kept feature is at least 30 m farther than the next one (``assert_apart`` on negated distances)."""
    assert_apart(-np.asarray(dist, dtype=float), keep, 1)


# ---------------------------------------------------------------------------------------- the fires
def eaton(layers: Layers) -> dict:
    dins = layers("eaton_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    damaged = (dmg != NONE).to_numpy()
    schools = (kind == "School").to_numpy()
    houses = kind.isin(SINGLE_FAMILY).to_numpy()
    standing = dmg.isin(STANDING).to_numpy()
    tall = (kind == SINGLE_FAMILY[1]).to_numpy()

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, layers.area("eaton_perimeter", LA), LA)
    assert bool((la.STATUS[d <= 10_500] == "OPEN").all()) and bool((la.BEDS[d <= 10_500] > 0).all())
    glendale = (la.CITY == "GLENDALE").to_numpy()
    proprietary = (la.OWNER == "PROPRIETARY").to_numpy()
    trauma = (la.TRAUMA.fillna("NOT AVAILABLE") != "NOT AVAILABLE").to_numpy()
    assert_clear(d, 8000, keep=glendale)
    assert_clear(d, 5000)
    assert_clear(d, 10_000, keep=proprietary)
    assert_clear(d, 15_000, keep=trauma)
    assert bool((la.STATUS[trauma & (d <= 15_000)] == "OPEN").all())
    near5 = d <= 5000
    biggest = int(np.argmax(np.where(near5, la.BEDS.to_numpy(dtype=float), -1.0)))
    assert int(la.BEDS[near5].sort_values().iloc[-2]) < int(la.BEDS[biggest])  # one largest, no tie
    glendale8 = glendale & (d <= 8000)
    return {
        "minor_or_worse": int(dmg.isin([MINOR, MAJOR, DESTROYED]).sum()),
        "schools": int(schools.sum()),
        "any_school_standing_damaged": bool((schools & standing).any()),
        "houses_pct_of_damaged": pct((houses & damaged).sum(), damaged.sum()),
        "no_damage_not_outbuilding": int(((dmg == NONE).to_numpy() & (kind != UTILITY).to_numpy()).sum()),
        "houses_standing": int((houses & standing).sum()),
        "houses_standing_by_type": tally(kind[houses & standing]),
        "multi_story_sfr_destroyed_pct": pct((tall & (dmg == DESTROYED).to_numpy()).sum(), tall.sum()),
        "glendale_within_8km": int(glendale8.sum()),
        "glendale_beds_within_8km": int(la.BEDS[glendale8].sum()),
        "largest_within_5km": ranked(la.NAME, d, keep=np.arange(len(la)) == biggest),
        "largest_beds_within_5km": int(la.BEDS[biggest]),
        "proprietary_5_to_10km": ranked(la.NAME, d, keep=proprietary & (d > 5000) & (d <= 10_000)),
        "trauma_within_15km": ranked(la.NAME, d, keep=trauma & (d <= 15_000)),
    }


def palisades(layers: Layers) -> dict:
    dins = layers("palisades_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = (dmg == DESTROYED).to_numpy()
    none = (dmg == NONE).to_numpy()
    mobile = kind.isin(MOBILE_HOMES).to_numpy()
    low_flats = (kind == MULTI_FAMILY[0]).to_numpy()
    tall = (kind == SINGLE_FAMILY[1]).to_numpy()
    tall_damaged = tall & ~none

    hull = palisades_hull(layers)
    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, hull, LA)
    assert bool((la.STATUS[d <= 12_000] == "OPEN").all()) and bool((la.BEDS[d <= 12_000] > 0).all())
    helipad = (la.HELIPAD == "Y").to_numpy()
    acute = (la.TYPE == "GENERAL ACUTE CARE").to_numpy()
    state = (la.OWNER == "GOVERNMENT - STATE").to_numpy()
    civil = ~la.TYPE.isin(["PSYCHIATRIC", "MILITARY"]).to_numpy()
    assert_clear(d, 10_000, keep=helipad)
    assert_clear(d, 3500, keep=acute)
    assert_clear(d, 7000, keep=acute)
    assert_clear(d, 6000, keep=state)
    assert_clear(d, 6000, keep=civil)
    state6, civil6 = state & (d <= 6000), civil & (d <= 6000)
    return {
        "mobile_homes_destroyed": int((mobile & destroyed).sum()),
        "mobile_homes_destroyed_by_type": tally(kind[mobile & destroyed]),
        "major_or_worse": int(dmg.isin([MAJOR, DESTROYED]).sum()),
        "double_wides_not_destroyed": int(((kind == MOBILE_HOMES[1]).to_numpy() & ~destroyed).sum()),
        "one_story_sfr_pct_of_no_damage": pct(((kind == SINGLE_FAMILY[0]).to_numpy() & none).sum(), none.sum()),
        "low_rise_flats": int(low_flats.sum()),
        "low_rise_flats_by_grade": tally(dmg[low_flats].map(GRADE)),
        "multi_story_sfr_destroyed_pct_of_damaged": pct((tall_damaged & destroyed).sum(), tall_damaged.sum()),
        "helipad_within_10km": ranked(la.NAME, d, keep=helipad & (d <= 10_000)),
        "acute_3500_to_7000m": ranked(la.NAME, d, keep=acute & (d > 3500) & (d <= 7000)),
        "state_within_6km": ranked(la.NAME, d, keep=state6),
        "state_beds_within_6km": int(la.BEDS[state6].sum()),
        "civil_within_6km": ranked(la.NAME, d, keep=civil6),
        "civil_beds_within_6km": int(la.BEDS[civil6].sum()),
    }


def comparative(layers: Layers) -> dict:
    keys = (
        "one_story_sfr_no_damage_pct",
        "acute_within_10km",
        "outbuildings_destroyed_pct",
        "multi_story_commercial_no_damage",
        "hospitals_5_to_10km",
        "affected",
        "multi_story_pct_of_sfr",
        "infrastructure_no_damage",
    )
    out: dict[str, dict] = {k: {} for k in keys}
    la = hospitals(layers, "CA", "LOS ANGELES")
    acute = (la.TYPE == "GENERAL ACUTE CARE").to_numpy()
    areas = {"eaton": layers.area("eaton_perimeter", LA), "palisades": palisades_hull(layers)}
    for fire in ("eaton", "palisades"):
        dins = layers(f"{fire}_dins")
        dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
        none = dmg == NONE
        one_story, sheds, houses = kind == SINGLE_FAMILY[0], kind == UTILITY, kind.isin(SINGLE_FAMILY)
        d = metres(la, areas[fire], LA)
        assert_clear(d, 10_000, keep=acute)
        assert_clear(d, 5000)
        assert_clear(d, 10_000)
        out["one_story_sfr_no_damage_pct"][fire] = pct((one_story & none).sum(), one_story.sum())
        out["acute_within_10km"][fire] = int((acute & (d <= 10_000)).sum())
        out["outbuildings_destroyed_pct"][fire] = pct((sheds & (dmg == DESTROYED)).sum(), sheds.sum())
        out["multi_story_commercial_no_damage"][fire] = int(((kind == COMMERCIAL[1]) & none).sum())
        out["hospitals_5_to_10km"][fire] = int(((d > 5000) & (d <= 10_000)).sum())
        out["affected"][fire] = int((dmg == AFFECTED).sum())
        out["multi_story_pct_of_sfr"][fire] = pct((kind == SINGLE_FAMILY[1]).sum(), houses.sum())
        out["infrastructure_no_damage"][fire] = int(((kind == "Infrastructure") & none).sum())
    return out


def fire_aois(layers: Layers) -> dict:
    """DINS points inside the Eaton and Palisades AOI files, and hospitals near them."""
    la = hospitals(layers, "CA", "LOS ANGELES")
    acute = (la.TYPE == "GENERAL ACUTE CARE").to_numpy()

    west = projected_aoi("west_altadena_area.geojson", LA)
    eaton = layers("eaton_dins")
    kind = eaton.STRUCTURETYPE
    tall = eaton[kind == SINGLE_FAMILY[1]]
    shops_lost = eaton[(kind == COMMERCIAL[0]) & (eaton.DAMAGE == DESTROYED)]
    assert_off_edge(geoms(tall, LA), west)
    assert_off_edge(geoms(shops_lost, LA), west)
    tall_in = tall[touching(tall, west, LA)]
    d_west = metres(la, west, LA)
    assert_clear(d_west, 5000, keep=acute)
    west_acute = acute & (d_west <= 5000)

    east = projected_aoi("east_altadena_kinneloa.geojson", LA)
    assert_off_edge(geoms(eaton, LA), east)
    inside = eaton[touching(eaton, east, LA)]
    one_story = inside.STRUCTURETYPE.isin(SINGLE_FAMILY[:1])
    lost = inside[(inside.DAMAGE == DESTROYED) & inside.STRUCTURETYPE.isin([*SINGLE_FAMILY, UTILITY])]
    d_east = metres(la, east, LA)
    not_psychiatric = (la.TYPE != "PSYCHIATRIC").to_numpy()
    assert_apart(d_east, not_psychiatric, 1)

    village = projected_aoi("palisades_village_aoi.geojson", LA)
    pal = layers("palisades_dins")
    schools = pal[pal.STRUCTURETYPE == "School"]
    low_flats = pal[pal.STRUCTURETYPE.isin(MULTI_FAMILY[:1])]
    assert_off_edge(geoms(schools, LA), village)
    assert_off_edge(geoms(low_flats, LA), village)
    schools_in = schools[touching(schools, village, LA)]
    low_flats_in = low_flats[touching(low_flats, village, LA)]
    return {
        "west_altadena_area": {
            "multi_story_sfr_destroyed": int((tall_in.DAMAGE == DESTROYED).sum()),
            "multi_story_sfr_no_damage": int((tall_in.DAMAGE == NONE).sum()),
            "one_story_commercial_destroyed": int(touching(shops_lost, west, LA).sum()),
            "acute_within_5km": int(west_acute.sum()),
            "acute_beds_within_5km": int(la.BEDS[west_acute].sum()),
        },
        "east_altadena_kinneloa": {
            "one_story_sfr_destroyed_pct": pct((one_story & (inside.DAMAGE == DESTROYED)).sum(), one_story.sum()),
            "houses_and_sheds_destroyed": len(lost),
            "houses_and_sheds_destroyed_by_type": tally(lost.STRUCTURETYPE),
            "nearest_not_psychiatric": ranked(la.NAME, d_east, keep=not_psychiatric, k=1),
        },
        "palisades_village_aoi": {
            "schools_destroyed_pct": pct((schools_in.DAMAGE == DESTROYED).sum(), len(schools_in)),
            "low_rise_flats_standing": int(low_flats_in.DAMAGE.isin(STANDING).sum()),
        },
    }


# --------------------------------------------------------------------------------------------- Maui
def lahaina(layers: Layers) -> dict:
    burn = layers.area("lahaina_burn", MAUI)
    labels = layers("lahaina_labels")
    cls = labels["class"].to_numpy()
    areas = np.asarray(shapely.area(geoms(labels, MAUI)), dtype=float)
    damaged, intact = cls == "Damaged Building", cls == "Building"
    azure = (labels.source == "Drawn|Azure Maps Satellite").to_numpy()
    for cut in (600, 2000):
        assert_sizes_clear(areas[damaged], cut)
    assert_sizes_clear(areas[intact], 150)
    largest = np.sort(areas[damaged])
    assert largest[-1] - largest[-2] > 0.05 * largest[-1]  # one largest damaged label, well ahead of the next
    maui = hospitals(layers, "HI", "MAUI")
    dm = metres(maui, burn, MAUI)
    assert_clear(dm, 20_000)
    return {
        "azure_labels": int(azure.sum()),
        "azure_labels_m2": round(float(areas[azure].sum()), 1),
        "largest_damaged_m2": round(float(largest[-1]), 1),
        "background_pct": pct((cls == "Background").sum(), len(cls)),
        "intact_under_150m2": int((intact & (areas < 150)).sum()),
        "damaged_600_to_2000m2": int((damaged & (areas >= 600) & (areas <= 2000)).sum()),
        "beyond_20km": ranked(maui.NAME, dm, keep=dm > 20_000),
    }


# ------------------------------------------------------------------------------------------ Valencia
def valencia(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    health = layers("valencia_health")
    names = health.equipamien.astype(str)
    sub = health.idsubclase
    d = metres(health, flood, VALENCIA)
    centre = (sub == 13).to_numpy()
    hospital = (sub == 14).to_numpy()
    unclassed = sub.isna().to_numpy()
    for cut in (4000, 5000, 350):
        assert_clear(d, cut)
    assert_all_firm(geoms(health, VALENCIA), flood)  # every facility is 30 m inside the flood or 30 m off it
    assert_clear(d, 1200, keep=centre)
    assert_clear(d, 2000, keep=hospital)
    assert_apart(d, unclassed, 1)
    return {
        "between_4_and_5km": ranked(names, d, keep=(d > 4000) & (d <= 5000)),
        "unclassed": int(unclassed.sum()),
        "unclassed_nearest": ranked(names, d, keep=unclassed, k=1),
        "centres_within_1200m_pct": pct((centre & (d <= 1200)).sum(), centre.sum()),
        "hospitals_within_2km": ranked(names, d, keep=hospital & (d <= 2000)),
        "dry_within_350m": ranked(names, d, keep=(d > 0) & (d <= 350)),
    }


def valencia_south_area(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    area = projected_aoi("valencia_south_area.geojson", VALENCIA)
    health = layers("valencia_health")
    assert_off_edge(geoms(health, VALENCIA), area)
    inside = touching(health, area, VALENCIA)
    d = metres(health, flood, VALENCIA)
    farthest_apart(d, inside)
    far = int(np.argmax(np.where(inside, d, -1.0)))
    return {"farthest": ranked(health.equipamien, d, keep=np.arange(len(health)) == far)}


def catarroja_sketch(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    area = projected_aoi("catarroja_east_sketch.geojson", VALENCIA)
    wet = shapely.intersection(area, flood)
    residential = layers("catarroja_lines")
    residential = residential[residential.highway == "residential"]
    return {
        "flooded_km2": km2(wet),
        "flooded_pct": pct(shapely.area(wet), shapely.area(area)),
        "residential_km": clipped_km(residential, area, VALENCIA),
        "residential_km_flooded": clipped_km(residential, wet, VALENCIA),
        "residential_pct_flooded": pct(
            shapely.length(shapely.intersection(geoms(residential, VALENCIA), wet)).sum(),
            shapely.length(shapely.intersection(geoms(residential, VALENCIA), area)).sum(),
        ),
    }


def catarroja(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    pts, lines, polys = layers("catarroja_points"), layers("catarroja_lines"), layers("catarroja_polygons")

    def length_km(frame: pd.DataFrame) -> float:
        return float(shapely.length(geoms(frame, VALENCIA)).sum()) / 1000

    residential = lines[lines.highway == "residential"]
    tracks = lines[lines.highway == "track"]
    canals = lines[lines.waterway == "canal"]
    residential_wet = clipped_km(residential, flood, VALENCIA)
    track_wet, canal_wet = clipped_km(tracks, flood, VALENCIA), clipped_km(canals, flood, VALENCIA)

    buildings = shapely.union_all(geoms(polys[polys.building.notna()], VALENCIA))
    houses_land = shapely.union_all(geoms(polys[polys.landuse == "residential"], VALENCIA))
    houses_land_wet = shapely.intersection(houses_land, flood)

    milestones = pts[pts.highway == "milestone"]
    assert_all_firm(geoms(milestones, VALENCIA), flood)
    milestones_wet = touching(milestones, flood, VALENCIA)
    hamlets = pts[pts.place == "hamlet"]
    h_d = metres(hamlets, flood, VALENCIA)
    assert_apart(h_d, np.ones(len(hamlets), dtype=bool), 2)

    public = layers("catarroja_public")
    p_geoms = geoms(public, VALENCIA)
    p_in = touching(public, flood, VALENCIA)
    damage = public.val_dany.map(euros).to_numpy(dtype=float)
    subsidy = public.subv_apro.map(euros).to_numpy(dtype=float)
    schools = (public.capa == "Centros educativos").to_numpy()
    social = (public.capa == "Centros sociosanitarios").to_numpy()
    works = public.estado.isin(["En ejecución", "Obra iniciada"]).to_numpy()
    unvalued = public.val_dany.isna().to_numpy()
    assert_all_firm(p_geoms[works], flood)
    over = subsidy > damage
    return {
        "residential_km_in_flood": residential_wet,
        "residential_pct_in_flood": pct(residential_wet, length_km(residential)),
        "track_pct_in_flood": pct(track_wet, length_km(tracks)),
        "canal_pct_in_flood": pct(canal_wet, length_km(canals)),
        "path_km_in_flood": clipped_km(lines[lines.highway == "path"], flood, VALENCIA),
        "building_footprint_pct_in_flood": pct(
            shapely.area(shapely.intersection(buildings, flood)), shapely.area(buildings)
        ),
        "residential_land_ha_in_flood": hectares(houses_land_wet),
        "residential_land_pct_in_flood": pct(shapely.area(houses_land_wet), shapely.area(houses_land)),
        "milestones_in_flood": int(milestones_wet.sum()),
        "milestones_dry": int((~milestones_wet).sum()),
        "hamlets_nearest_2": ranked(hamlets.name, h_d, k=2),
        "public_schools_unvalued": listing(public.titulo[schools & unvalued]),
        "public_total": len(public),
        "public_by_estado": tally(public.estado),
        "public_works_in_flood": sorted(public.titulo[works & p_in].tolist()),
        "public_social": int(social.sum()),
        "public_social_eur": round(float(damage[social].sum()), 2),
        "public_subsidy_over_damage": sorted(public.titulo[over].tolist()),
    }


def heldout7(root: Path | None = None) -> dict:
    """Every expected value of ``bench/heldout7.json``, under one ``heldout7`` key."""
    layers = Layers(root or data_dir())
    aoi = fire_aois(layers)
    aoi["catarroja_east_sketch"] = catarroja_sketch(layers)
    aoi["valencia_south_area"] = valencia_south_area(layers)
    values = {
        "eaton": eaton(layers),
        "palisades": palisades(layers),
        "comparative": comparative(layers),
        "aoi": aoi,
        "lahaina": lahaina(layers),
        "valencia": valencia(layers),
        "catarroja": catarroja(layers),
    }
    return {"heldout7": values}
