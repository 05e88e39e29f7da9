"""Expected values of the sixth held-out question split (``bench/heldout6.json``), computed from the sample data.

Like the first five splits, the questions were written without looking at how GeoFaham reads a question (nothing
under ``geofaham_plugin/core/planning/`` nor the paraphrase suite was read, and the product was not run on them),
and their values are computed here by code of their own: GeoPandas, shapely and pyproj only, no import of
``geofaham_plugin``. The reading, the projection and the small table helpers are the first split's
(``bench.ground_truth_heldout``), the threshold guard and the area/length helpers the third split's
(``bench.ground_truth_heldout3``), the "nearest ones are apart" guard and the Palisades hull the fourth split's
(``bench.ground_truth_heldout4``), the "firmly inside or outside" guard the fifth split's
(``bench.ground_truth_heldout5``), imported, not copied. ``expected_values.compute`` stores the result under
``heldout6`` in ``bench/expected.json`` (``python -m bench ground-truth`` regenerates it).

Definitions (each expectation's description repeats the one it uses):

* DINS ``DAMAGE`` as published: ``No Damage`` (none, "not touched"), ``Affected (1-9%)``, ``Minor (10-25%)``,
  ``Major (26-50%)``, ``Destroyed (>50%)`` ("total loss"); **damaged** = any of the last four; **damaged but
  standing** = Affected, Minor or Major. A structure is one DINS point; the Eaton layer is the 14 January
  snapshot (5,805 points), the Palisades layer the final one (11,988).
* **structure types**: single-family = Single Family Residence Single and Multi Story ("one-storey" and
  "multi-storey" houses); multi-family = Multi Family Residence Single and Multi Story; mobile homes = Mobile Home
  Single, Double and Triple Wide (``Motor Home`` left out); commercial = Commercial Building Single and Multi
  Story (``Mixed Commercial/Residential`` left out); outbuildings = ``Utility Misc Structure``.
* **inside** a polygon: the feature intersects it (a point, line or polygon on the edge counts); **outside** /
  **dry**: the rest of the layer. DINS points in an AOI file: none of the points a question counts lies within
  10 m of the polygon's edge (``assert_off_edge``).
* **distances**: shortest planar distance between the feature and the polygon in the event's projected CRS
  (EPSG:26911 Los Angeles, EPSG:32604 Maui, EPSG:25830 Valencia), metres; 0 inside. "Within X" is ``<= X``,
  "farther than X" is ``> X``; miles and feet are international ones (1,609.344 m, 0.3048 m). Every threshold is
  at least 30 m from every distance it separates (``assert_clear``), every "nearest k" at least 30 m nearer than
  the next candidate (``assert_apart``), and every "inside the flood" at least 30 m from flipping
  (``assert_firmly``).
* **hospitals** (Los Angeles, Maui): the HIFLD file's rows with ``STATE == 'CA'`` and ``COUNTY == 'LOS
  ANGELES'``, or ``STATE == 'HI'`` and ``COUNTY == 'MAUI'`` (every one counted here is OPEN and has a known
  ``BEDS``). The Eaton fire's area is the adjusted perimeter; the Palisades fire's, with no perimeter in the data,
  the convex hull of its Destroyed DINS points. ``OWNER``, ``TYPE``, ``HELIPAD`` (``Y`` / ``N``) and ``CITY`` as
  published; a county-run hospital is ``OWNER == 'GOVERNMENT - LOCAL'``.
* València health facilities: a health centre's name begins with ``CENTRO DE SALUD``, a consultorio's with
  ``CONSULTORIO``, a "hospital" is a facility whose name begins with ``HOSPITAL`` (as the question says).
* Catarroja OSM: the three layers of the extract, filtered on the tag the question names; lengths of lines
  clipped to the area; areas of the union of the polygons clipped to the area; the municipality is the
  ``boundary = administrative`` polygon named Catarroja.
* Catarroja recovery plan: the municipal public-buildings file; ``val_dany`` and ``subv_apro`` read as euros
  (missing or not a figure: 0).
* Lahaina labels: ``class`` ``Building`` (intact), ``Damaged Building`` and ``Background`` (no building);
  footprint areas of the labels after ``make_valid``.
* **areas / lengths**: in the projected CRS; m², ha, km² or km; a question in acres is stated in hectares here
  (1 acre = 0.40468564224 ha) with the acre figure in the description.
* **shares**: percent of the stated denominator, one decimal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import shapely

from .ground_truth import data_dir
from .ground_truth_heldout import (
    AFFECTED,
    COMMERCIAL,
    DESTROYED,
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
    metres,
    pct,
    ranked,
    tally,
    touching,
)
from .ground_truth_heldout3 import CLEARANCE, assert_clear, clipped_km, hectares, km2, projected_aoi
from .ground_truth_heldout4 import assert_apart, palisades_hull
from .ground_truth_heldout5 import assert_firmly

STANDING = [AFFECTED, MINOR, MAJOR]
MILE, FOOT, ACRE_HA = 1609.344, 0.3048, 0.40468564224
#: a DINS point a question counts in an AOI file lies at least this far from the polygon's edge (metres)
EDGE = 10.0


def assert_off_edge(points: np.ndarray, area: shapely.Geometry) -> None:
    """No counted point lies within ``EDGE`` of the AOI polygon's edge: inside or out cannot turn on a projection."""
    if len(points):
        nearest = float(np.min(shapely.distance(points, shapely.boundary(area))))
        assert nearest >= EDGE, f"a counted point is {nearest:.1f} m from the AOI edge"


def assert_all_firm(features: np.ndarray, area: shapely.Geometry) -> None:
    """Every feature is firmly inside ``area`` or firmly outside it (``assert_firmly``)."""
    for geometry in features:
        assert_firmly(geometry, area, bool(shapely.intersects(geometry, area)))


def unsure(features: np.ndarray, area: shapely.Geometry) -> np.ndarray:
    """The features a projection's few metres could move in or out of ``area``: they meet it without reaching
    ``CLEARANCE`` into it, or stay outside it by less than ``CLEARANCE``."""
    inside = np.asarray(shapely.intersects(features, area), dtype=bool)
    deep = np.asarray(shapely.intersects(features, shapely.buffer(area, -CLEARANCE)), dtype=bool)
    near = np.asarray(shapely.distance(features, area), dtype=float) < CLEARANCE
    return (inside & ~deep) | (~inside & near)


# ---------------------------------------------------------------------------------------- the fires
def eaton(layers: Layers) -> dict:
    dins = layers("eaton_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = (dmg == DESTROYED).to_numpy()
    none = (dmg == NONE).to_numpy()
    standing = dmg.isin(STANDING).to_numpy()
    one_story_commercial = (kind == COMMERCIAL[0]).to_numpy()
    multi_family = kind.isin(MULTI_FAMILY).to_numpy()
    utility = (kind == UTILITY).to_numpy()
    house_or_shed = kind.isin([*SINGLE_FAMILY, UTILITY]).to_numpy()

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, layers.area("eaton_perimeter", LA), LA)
    assert bool((la.STATUS[d <= 12_000] == "OPEN").all()) and bool((la.BEDS[d <= 12_000] > 0).all())
    psychiatric = (la.TYPE == "PSYCHIATRIC").to_numpy()
    no_helipad = (la.HELIPAD == "N").to_numpy()
    local = (la.OWNER == "GOVERNMENT - LOCAL").to_numpy()
    pasadena = (la.CITY == "PASADENA").to_numpy()
    assert_clear(d, 3 * MILE)
    assert_clear(d, 6 * MILE)
    assert_clear(d, 10_000)
    assert_clear(d, 6000, keep=~psychiatric)
    assert_apart(d, local, 1)
    non_psychiatric_6km = ~psychiatric & (d <= 6000)
    return {
        "sfr_no_damage": int((kind.isin(SINGLE_FAMILY).to_numpy() & none).sum()),
        "sfr_no_damage_by_type": tally(kind[kind.isin(SINGLE_FAMILY).to_numpy() & none]),
        "not_house_nor_outbuilding_destroyed": int((destroyed & ~house_or_shed).sum()),
        "one_story_commercial_destroyed_pct": pct((one_story_commercial & destroyed).sum(), one_story_commercial.sum()),
        "multi_story_sfr_standing": int(((kind == SINGLE_FAMILY[1]).to_numpy() & standing).sum()),
        "outbuildings_standing": int((utility & standing).sum()),
        "outbuildings_pct_of_destroyed": pct((utility & destroyed).sum(), destroyed.sum()),
        "multi_family_no_damage_pct": pct((multi_family & none).sum(), multi_family.sum()),
        "hospitals_3_to_6_miles": ranked(la.NAME, d, keep=(d > 3 * MILE) & (d <= 6 * MILE)),
        "no_helipad_within_10km": ranked(la.NAME, d, keep=no_helipad & (d <= 10_000)),
        "county_run_nearest": ranked(la.NAME, d, keep=local, k=1),
        "non_psychiatric_within_6km": ranked(la.NAME, d, keep=non_psychiatric_6km),
        "non_psychiatric_beds_within_6km": int(la.BEDS[non_psychiatric_6km].sum()),
        "pasadena_hospitals": ranked(la.NAME, d, keep=pasadena),
    }


def palisades(layers: Layers) -> dict:
    dins = layers("palisades_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = (dmg == DESTROYED).to_numpy()
    standing = dmg.isin(STANDING).to_numpy()
    commercial = kind.isin(COMMERCIAL).to_numpy()
    multi_story_commercial = (kind == COMMERCIAL[1]).to_numpy()
    one_story_multi_family = (kind == MULTI_FAMILY[0]).to_numpy()
    triple_wide = (kind == MOBILE_HOMES[2]).to_numpy()
    infrastructure = (kind == "Infrastructure").to_numpy()

    hull = palisades_hull(layers)
    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, hull, LA)
    assert bool((la.STATUS[d <= 12_000] == "OPEN").all()) and bool((la.BEDS[d <= 12_000] > 0).all())
    military = (la.TYPE == "MILITARY").to_numpy()
    nonprofit = (la.OWNER == "NON-PROFIT").to_numpy()
    assert_clear(d, 4 * MILE)
    assert_clear(d, 10_000, keep=nonprofit)
    four_miles = ~military & (d <= 4 * MILE)
    return {
        "single_wide_no_damage": int(((kind == MOBILE_HOMES[0]).to_numpy() & (dmg == NONE).to_numpy()).sum()),
        "triple_wides": int(triple_wide.sum()),
        "every_triple_wide_destroyed": bool(destroyed[triple_wide].all()),
        "commercial_standing": int((commercial & standing).sum()),
        "multi_story_sfr_pct_of_destroyed": pct(
            ((kind == SINGLE_FAMILY[1]).to_numpy() & destroyed).sum(), destroyed.sum()
        ),
        "one_story_multi_family_destroyed_pct": pct(
            (one_story_multi_family & destroyed).sum(), one_story_multi_family.sum()
        ),
        "multi_story_commercial_destroyed_pct": pct(
            (multi_story_commercial & destroyed).sum(), multi_story_commercial.sum()
        ),
        "infrastructure_damaged": int((infrastructure & (dmg != NONE).to_numpy()).sum()),
        "within_4_miles_not_military": int(four_miles.sum()),
        "beds_within_4_miles_not_military": int(la.BEDS[four_miles].sum()),
        "nonprofit_within_10km": ranked(la.NAME, d, keep=nonprofit & (d <= 10_000)),
    }


def comparative(layers: Layers) -> dict:
    keys = (
        "standing_pct",
        "schools_no_damage_pct",
        "hospitals_within_5_miles",
        "multi_story_sfr_destroyed",
        "one_story_sfr_destroyed",
        "major",
        "one_story_commercial_destroyed",
        "mobile_homes_destroyed",
    )
    out: dict[str, dict] = {k: {} for k in keys}
    la = hospitals(layers, "CA", "LOS ANGELES")
    areas = {"eaton": layers.area("eaton_perimeter", LA), "palisades": palisades_hull(layers)}
    for fire in ("eaton", "palisades"):
        dins = layers(f"{fire}_dins")
        dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
        destroyed = dmg == DESTROYED
        schools = kind == "School"
        d = metres(la, areas[fire], LA)
        assert_clear(d, 5 * MILE)
        out["standing_pct"][fire] = pct(dmg.isin(STANDING).sum(), len(dins))
        out["schools_no_damage_pct"][fire] = pct((schools & (dmg == NONE)).sum(), schools.sum())
        out["hospitals_within_5_miles"][fire] = int((d <= 5 * MILE).sum())
        out["multi_story_sfr_destroyed"][fire] = int(((kind == SINGLE_FAMILY[1]) & destroyed).sum())
        out["one_story_sfr_destroyed"][fire] = int(((kind == SINGLE_FAMILY[0]) & destroyed).sum())
        out["major"][fire] = int((dmg == MAJOR).sum())
        out["one_story_commercial_destroyed"][fire] = int(((kind == COMMERCIAL[0]) & destroyed).sum())
        out["mobile_homes_destroyed"][fire] = int((kind.isin(MOBILE_HOMES) & destroyed).sum())
    return out


def fire_aois(layers: Layers) -> dict:
    """DINS points inside the Eaton and Palisades AOI files, and hospitals near them."""
    la = hospitals(layers, "CA", "LOS ANGELES")
    east = projected_aoi("east_altadena_kinneloa.geojson", LA)
    eaton = layers("eaton_dins")
    inside = eaton[touching(eaton, east, LA)]
    assert_off_edge(geoms(eaton, LA), east)
    dmg = inside.DAMAGE
    schools = inside.STRUCTURETYPE == "School"
    sheds = inside.STRUCTURETYPE == UTILITY
    d_east = metres(la, east, LA)
    assert_clear(d_east, 4 * MILE)

    village = projected_aoi("palisades_village_aoi.geojson", LA)
    pal = layers("palisades_dins")
    churches_all = pal[pal.STRUCTURETYPE == "Church"]
    commercial_standing_all = pal[pal.STRUCTURETYPE.isin(COMMERCIAL) & pal.DAMAGE.isin(STANDING)]
    assert_off_edge(geoms(churches_all, LA), village)
    assert_off_edge(geoms(commercial_standing_all, LA), village)
    churches = churches_all[touching(churches_all, village, LA)]
    d_village = metres(la, village, LA)
    acute = (la.TYPE == "GENERAL ACUTE CARE").to_numpy()
    assert_apart(d_village, acute, 2)
    return {
        "east_altadena_kinneloa": {
            "inside": len(inside),
            "standing": int(dmg.isin(STANDING).sum()),
            "schools": int(schools.sum()),
            "schools_destroyed": int((schools & (dmg == DESTROYED)).sum()),
            "schools_no_damage": int((schools & (dmg == NONE)).sum()),
            "outbuildings_no_damage_pct": pct((sheds & (dmg == NONE)).sum(), sheds.sum()),
            "hospitals_within_4_miles": ranked(la.NAME, d_east, keep=d_east <= 4 * MILE),
        },
        "palisades_village_aoi": {
            "churches_destroyed": int((churches.DAMAGE == DESTROYED).sum()),
            "churches_no_damage": int((churches.DAMAGE == NONE).sum()),
            "commercial_standing": int(touching(commercial_standing_all, village, LA).sum()),
            "acute_nearest_2": ranked(la.NAME, d_village, keep=acute, k=2),
        },
    }


# --------------------------------------------------------------------------------------------- Maui
def lahaina(layers: Layers) -> dict:
    burn = layers.area("lahaina_burn", MAUI)
    labels = layers("lahaina_labels")
    cls = labels["class"].to_numpy()
    areas = np.asarray(shapely.area(geoms(labels, MAUI)), dtype=float)
    damaged, intact = cls == "Damaged Building", cls == "Building"
    big = damaged & (areas > 1000)
    assert not bool((damaged & (np.abs(areas - 1000) < 100)).any())  # no damaged label near the 1,000 m² cut
    maui = hospitals(layers, "HI", "MAUI")
    dm = metres(maui, burn, MAUI)
    assert bool((maui.BEDS > 0).all())
    helipad = (maui.HELIPAD == "Y").to_numpy()
    not_memorial = ~maui.NAME.str.startswith("MAUI MEMORIAL").to_numpy()
    assert_clear(dm, 25 * MILE)
    near = not_memorial & (dm <= 25 * MILE)
    burn_ha = hectares(burn)
    return {
        "burn_ha": burn_ha,
        "burn_acres": round(float(shapely.area(burn)) / 1e4 / ACRE_HA, 0),
        "damaged_pct_of_building_labels": pct(damaged.sum(), (damaged | intact).sum()),
        "damaged_labels_over_1000m2": int(big.sum()),
        "intact_mean_m2": round(float(areas[intact].mean()), 1),
        "helipad_nearest": ranked(maui.NAME, dm, keep=helipad, k=1),
        "helipad_nearest_miles": round(float(dm[helipad].min()) / MILE, 2),
        "within_25_miles_not_memorial": ranked(maui.NAME, dm, keep=near),
        "beds_within_25_miles_not_memorial": int(maui.BEDS[near].sum()),
    }


# ------------------------------------------------------------------------------------------ Valencia
def valencia(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    health = layers("valencia_health")
    names = health.equipamien.astype(str)
    upper = names.str.upper()
    d = metres(health, flood, VALENCIA)
    centre = upper.str.startswith("CENTRO DE SALUD").to_numpy()
    consultorio = upper.str.startswith("CONSULTORIO").to_numpy()
    hospital = upper.str.startswith("HOSPITAL").to_numpy()
    assert_clear(d, 2000 * FOOT)
    assert_clear(d, 2 * MILE, keep=centre)
    assert_clear(d, 1500, keep=consultorio)
    assert not bool((hospital & (d == 0)).any())
    assert_apart(d, hospital, 1)
    return {
        "flood_ha": hectares(flood),
        "within_2000_feet": ranked(names, d, keep=d <= 2000 * FOOT),
        "health_centres_beyond_2_miles": ranked(names, d, keep=centre & (d > 2 * MILE)),
        "consultorios": int(consultorio.sum()),
        "consultorios_within_1500m_pct": pct((consultorio & (d <= 1500)).sum(), consultorio.sum()),
        "hospital_named_nearest": ranked(names, d, keep=hospital, k=1),
    }


def valencia_south_area(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    area = projected_aoi("valencia_south_area.geojson", VALENCIA)
    health = layers("valencia_health")
    inside = touching(health, area, VALENCIA)
    d = metres(health, flood, VALENCIA)
    assert_off_edge(geoms(health, VALENCIA), area)
    assert_clear(d[inside], 600)
    return {"inside": int(inside.sum()), "beyond_600m": ranked(health.equipamien, d, keep=inside & (d > 600))}


def catarroja_sketch(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    area = projected_aoi("catarroja_east_sketch.geojson", VALENCIA)
    lines = layers("catarroja_lines")
    return {
        "rail_km_flooded": clipped_km(lines[lines.railway == "rail"], shapely.intersection(area, flood), VALENCIA),
        "motorway_km": clipped_km(lines[lines.highway == "motorway"], area, VALENCIA),
    }


def catarroja(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    pts, lines, polys = layers("catarroja_points"), layers("catarroja_lines"), layers("catarroja_polygons")

    cycleways = lines[lines.highway == "cycleway"]
    cycle_total = float(shapely.length(geoms(cycleways, VALENCIA)).sum()) / 1000
    cycle_wet = clipped_km(cycleways, flood, VALENCIA)

    town = polys[(polys["boundary"] == "administrative") & (polys["name"] == "Catarroja")]
    assert len(town) == 1
    town_geom = geoms(town, VALENCIA)[0]
    town_wet = shapely.intersection(town_geom, flood)

    heritage = [df[df.historic.notna()] for df in (pts, polys)]
    heritage_names = np.concatenate([df.name.astype(str).to_numpy() for df in heritage])
    heritage_geoms = np.concatenate([geoms(df, VALENCIA) for df in heritage])
    assert_all_firm(heritage_geoms, flood)
    heritage_wet = np.asarray(shapely.intersects(flood, heritage_geoms), dtype=bool)

    junctions = pts[pts.highway == "motorway_junction"]
    assert_all_firm(geoms(junctions, VALENCIA), flood)
    junctions_wet = touching(junctions, flood, VALENCIA)

    farmland = polys[polys.landuse == "farmland"]
    assert_all_firm(geoms(farmland, VALENCIA), flood)
    farmland_wet = touching(farmland, flood, VALENCIA)
    industrial = shapely.union_all(geoms(polys[polys.landuse == "industrial"], VALENCIA))
    parks = shapely.union_all(geoms(polys[polys.leisure == "park"], VALENCIA))

    pharmacies = pts[pts.amenity == "pharmacy"]
    ph_d = metres(pharmacies, flood, VALENCIA)
    assert_clear(ph_d, 250)
    assert_clear(ph_d, 0)  # none inside the water, none within 30 m of it

    public = layers("catarroja_public")
    p_geoms = geoms(public, VALENCIA)
    p_d = metres(public, flood, VALENCIA)
    p_in = p_d == 0
    damage = public.val_dany.map(euros).to_numpy(dtype=float)
    subsidy = public.subv_apro.map(euros).to_numpy(dtype=float)
    culture = (public.capa == "Centros culturales").to_numpy()
    social = (public.capa == "Centros sociosanitarios").to_numpy()
    running = (public.estado == "En ejecución").to_numpy()
    assert_all_firm(p_geoms[culture | social], flood)
    dry_damage = np.where(p_in, -1.0, damage)
    costliest = int(np.argmax(dry_damage))
    assert_firmly(p_geoms[costliest], flood, False)
    # the plan buildings a few metres could move in or out of the water cannot outbid the costliest dry one
    assert not bool((unsure(p_geoms, flood) & (damage >= damage[costliest])).any())
    assert (subsidy[running] > 0).all()  # every running work has an approved figure (none is a request or a gift)
    return {
        "cycleway_km_in_flood": cycle_wet,
        "cycleway_km_total": round(cycle_total, 2),
        "cycleway_pct_in_flood": pct(cycle_wet, cycle_total),
        "secondary_km_in_flood": clipped_km(lines[lines.highway == "secondary"], flood, VALENCIA),
        "unclassified_km_in_flood": clipped_km(lines[lines.highway == "unclassified"], flood, VALENCIA),
        "municipality_km2": km2(town_geom),
        "municipality_flooded_km2": km2(town_wet),
        "municipality_flooded_pct": pct(shapely.area(town_wet), shapely.area(town_geom)),
        "heritage_in_flood": sorted(heritage_names[heritage_wet].tolist()),
        "heritage_in_flood_count": int(heritage_wet.sum()),
        "heritage_dry": sorted(heritage_names[~heritage_wet].tolist()),
        "heritage_dry_count": int((~heritage_wet).sum()),
        "motorway_junctions_in_flood": int(junctions_wet.sum()),
        "motorway_junctions_dry": int((~junctions_wet).sum()),
        "farmland_in_flood": int(farmland_wet.sum()),
        "farmland_dry": int((~farmland_wet).sum()),
        "industrial_ha_in_flood": hectares(shapely.intersection(industrial, flood)),
        "park_ha_in_flood": hectares(shapely.intersection(parks, flood)),
        "pharmacies_within_250m": ranked(pharmacies.name, ph_d, keep=ph_d <= 250),
        "public_costliest_dry": ranked(public.titulo, p_d, keep=np.arange(len(public)) == costliest),
        "public_costliest_dry_eur": round(float(damage[costliest]), 2),
        "public_running": int(running.sum()),
        "public_running_subsidy_eur": round(float(subsidy[running].sum()), 2),
        "public_culture_flooded": sorted(public.titulo[culture & p_in].tolist()),
        "public_culture_flooded_eur": round(float(damage[culture & p_in].sum()), 2),
        "public_social_dry": int((social & ~p_in).sum()),
        "public_social_dry_eur": round(float(damage[social & ~p_in].sum()), 2),
    }


def heldout6(root: Path | None = None) -> dict:
    """Every expected value of ``bench/heldout6.json``, under one ``heldout6`` key."""
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
    return {"heldout6": values}
