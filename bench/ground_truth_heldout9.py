"""Expected values of the ninth held-out question split (``bench/heldout9.json``), computed from the sample data.

Like the first eight splits, the questions were written without looking at how GeoFaham reads a question (nothing
under ``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not run on them), and their values
are computed here by code of their own: GeoPandas, shapely and pyproj only, no import of ``geofaham_plugin``. The
reading, the projection and the small table helpers are the first split's (``bench.ground_truth_heldout``), the
threshold guard and the area/length helpers the third split's (``bench.ground_truth_heldout3``), the "nearest ones are
apart" guard and the Palisades hull the fourth split's (``bench.ground_truth_heldout4``), the AOI edge guard the sixth
split's (``bench.ground_truth_heldout6``), the label-size guard and the "farthest is apart" guard the seventh split's
(``bench.ground_truth_heldout7``), and the faster "firmly inside or outside" guard (``assert_firm``), the open-with-
beds guard, the one-row mask and the wet-length share the eighth split's (``bench.ground_truth_heldout8``), imported,
not copied. ``expected_values.compute`` stores the result under ``heldout9`` in ``bench/expected.json`` (``python -m
bench ground-truth`` regenerates it).

Definitions (each expectation's description repeats the one it uses):

* DINS ``DAMAGE`` as published: ``No Damage`` (none, "untouched", "clean"), ``Affected (1-9%)`` (light),
  ``Minor (10-25%)``, ``Major (26-50%)``, ``Destroyed (>50%)``; **hit but standing** = Affected, Minor or Major. A
  structure is one DINS point; the Eaton layer is the 14 January snapshot (5,805 points), the Palisades layer the
  final one (11,988); "inspected" is every point of a layer, whatever its grade.
* **structure types** as published: single-family homes = Single Family Residence Single and Multi Story ("one-storey"
  and "two-storey" / "multi-storey"); low-rise apartment buildings = Multi Family Residence Single Story; outbuildings
  = ``Utility Misc Structure``; one-storey shops = Commercial Building Single Story; commercial buildings = Commercial
  Building Single and Multi Story (Mixed Commercial/Residential left out); schools = ``School``; ``Infrastructure``.
* **inside** a polygon: the feature intersects it; **outside** / **dry**: the rest. DINS points and health facilities
  counted in an AOI file lie at least 10 m from the polygon's edge (``assert_off_edge``).
* **distances**: shortest planar distance between the feature and the polygon in the event's projected CRS
  (EPSG:26911 Los Angeles, EPSG:32604 Maui, EPSG:25830 Valencia), metres; 0 inside. "Within X" is ``<= X``,
  "farther than X" is ``> X``, "between X and Y" is ``> X`` and ``<= Y``. Every threshold is at least 30 m from every
  distance it separates (``assert_clear``), every "nearest" / "farthest" at least 30 m apart from the next candidate
  (``assert_apart``, ``farthest_apart``), and every "inside the flood" at least 30 m from flipping (``assert_firm``).
* **hospitals** (Los Angeles, Maui): the HIFLD file's rows with ``STATE == 'CA'`` and ``COUNTY == 'LOS ANGELES'``,
  or ``STATE == 'HI'`` and ``COUNTY == 'MAUI'``; every row counted here is OPEN and has a known ``BEDS``. The Eaton
  fire's area is the adjusted perimeter; the Palisades fire's, with no perimeter in the data, the convex hull of its
  Destroyed DINS points. ``OWNER``, ``TYPE``, ``HELIPAD``, ``TRAUMA`` and ``BEDS`` as published; "no trauma
  designation" is ``TRAUMA == 'NOT AVAILABLE'``; psychiatric and ``D/P APH`` units are hospitals like any other row.
* València health facilities: ``idsubclase`` as published (13 centro de salud, 14 hospital, 18 consultorio, 19 centro
  de especialidades, empty for 8; a facility with an empty ``idsubclase`` is none of them).
* Catarroja OSM: the three layers of the extract, filtered on the tag the question names; lengths of lines (whole, or
  clipped to the flood or the AOI); areas of the union of the polygons (clipped to the flood or the AOI); a feature
  counts as flooded when it intersects the flood polygon.
* Catarroja recovery plan: the municipal public-buildings file; ``val_dany`` and ``subv_apro`` read as euros
  (missing, empty or not a figure: 0); "valued" is a non-empty ``val_dany``; "no subsidy" an empty ``subv_apro``;
  ``direccion``, ``capa`` and ``estado`` as published.
* Lahaina labels: ``class`` and ``source`` as published; footprint areas of the polygons after ``make_valid``
  (EPSG:32604), each label on its own (never a union); no label area lies within 2 % of a size cut
  (``assert_sizes_clear``).
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
from .ground_truth_heldout3 import assert_clear, clipped_km, hectares, projected_aoi
from .ground_truth_heldout4 import assert_apart, palisades_hull
from .ground_truth_heldout6 import assert_off_edge
from .ground_truth_heldout7 import assert_sizes_clear, farthest_apart
from .ground_truth_heldout8 import assert_firm, one_of, open_with_beds, share_within, wet_share

#: hit but still standing: every grade between No Damage and Destroyed
STANDING = [AFFECTED, MINOR, MAJOR]
GENERAL_ACUTE = "GENERAL ACUTE CARE"


def union(frame: pd.DataFrame) -> shapely.Geometry:
    """The union of a polygon frame's geometries in the Valencia CRS."""
    return shapely.union_all(geoms(frame, VALENCIA))


def hectares2(geometry: shapely.Geometry) -> float:
    """Hectares to two decimals (for areas under a few hectares, where one decimal is more than 3 % off)."""
    return round(float(shapely.area(geometry)) / 1e4, 2)


# ---------------------------------------------------------------------------------------- the fires
def eaton(layers: Layers) -> dict:
    dins = layers("eaton_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    houses = kind.isin(SINGLE_FAMILY).to_numpy()
    sheds = (kind == UTILITY).to_numpy()
    affected = (dmg == AFFECTED).to_numpy()
    hit_houses = houses & dmg.isin(STANDING).to_numpy()
    low_flats = (kind == MULTI_FAMILY[0]).to_numpy()

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, layers.area("eaton_perimeter", LA), LA)
    open_with_beds(la, d <= 8000)
    assert_clear(d, 7000)
    assert_clear(d, 5000)
    beds = la.BEDS.to_numpy()
    near7 = d <= 7000
    fewest = int(np.argmin(np.where(near7, beds, np.inf)))
    assert np.sort(beds[near7])[1] > beds[fewest]  # one smallest
    big = beds >= 100
    return {
        "sfr_inspected": int(houses.sum()),
        "outbuildings_affected_or_minor": int((sheds & dmg.isin([AFFECTED, MINOR]).to_numpy()).sum()),
        "outbuildings": int(sheds.sum()),
        "outbuildings_by_grade": tally(dmg[sheds].map(GRADE)),
        "outbuildings_pct_of_affected": pct((sheds & affected).sum(), affected.sum()),
        "sfr_standing_damaged": int(hit_houses.sum()),
        "sfr_standing_damaged_by_grade": tally(dmg[hit_houses].map(GRADE)),
        "low_rise_flats_destroyed_pct": pct((low_flats & (dmg == DESTROYED).to_numpy()).sum(), low_flats.sum()),
        "fewest_beds_within_7km": ranked(la.NAME, d, keep=one_of(len(la), fewest)),
        "fewest_beds_within_7km_beds": int(beds[fewest]),
        "hundred_beds_within_5km": ranked(la.NAME, d, keep=big & (d <= 5000)),
    }


def palisades(layers: Layers) -> dict:
    dins = layers("palisades_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    affected = (dmg == AFFECTED).to_numpy()
    infra = (kind == "Infrastructure").to_numpy()
    schools = (kind == "School").to_numpy()
    minor = (dmg == MINOR).to_numpy()
    tall_flats = (kind == MULTI_FAMILY[1]).to_numpy()

    hull = palisades_hull(layers)
    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, hull, LA)
    open_with_beds(la, d <= 11_000)
    psychiatric = (la.TYPE == "PSYCHIATRIC").to_numpy()
    children = (la.TYPE == "CHILDREN").to_numpy()
    no_trauma = (la.TRAUMA == "NOT AVAILABLE").to_numpy()
    assert_clear(d, 10_000)
    assert_apart(d, children, 1)
    open_with_beds(la, children & (d <= np.sort(d[children])[0]))
    near_psych = psychiatric & (d <= 10_000)
    return {
        "multi_story_sfr_affected": int(((kind == SINGLE_FAMILY[1]).to_numpy() & affected).sum()),
        "infrastructure_no_damage_pct": pct((infra & (dmg == NONE).to_numpy()).sum(), infra.sum()),
        "schools": int(schools.sum()),
        "schools_by_grade": tally(dmg[schools].map(GRADE)),
        "one_story_sfr_pct_of_affected": pct(((kind == SINGLE_FAMILY[0]).to_numpy() & affected).sum(), affected.sum()),
        "multi_story_flats_light": int((tall_flats & dmg.isin([AFFECTED, MINOR]).to_numpy()).sum()),
        "minor": int(minor.sum()),
        "minor_by_type": tally(kind[minor]),
        "psychiatric_within_10km": ranked(la.NAME, d, keep=near_psych),
        "psychiatric_beds_within_10km": int(la.BEDS[near_psych].sum()),
        "children_nearest": ranked(la.NAME, d, keep=children, k=1),
        "no_trauma_within_10km": int((no_trauma & (d <= 10_000)).sum()),
        "within_10km": int((d <= 10_000).sum()),
    }


def comparative(layers: Layers) -> dict:
    keys = (
        "schools",
        "affected_pct_of_inspected",
        "proprietary_within_10km",
        "acute_beds_within_7500m",
        "low_rise_flats_destroyed",
        "outbuildings_no_damage",
        "one_story_commercial_no_damage",
        "one_story_sfr_major",
    )
    out: dict[str, dict] = {k: {} for k in keys}
    la = hospitals(layers, "CA", "LOS ANGELES")
    proprietary = (la.OWNER == "PROPRIETARY").to_numpy()
    acute = (la.TYPE == GENERAL_ACUTE).to_numpy()
    areas = {"eaton": layers.area("eaton_perimeter", LA), "palisades": palisades_hull(layers)}
    for fire in ("eaton", "palisades"):
        dins = layers(f"{fire}_dins")
        dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
        none = dmg == NONE
        d = metres(la, areas[fire], LA)
        open_with_beds(la, d <= 11_000)
        assert_clear(d, 10_000, keep=proprietary)
        assert_clear(d, 7500, keep=acute)
        out["schools"][fire] = int((kind == "School").sum())
        out["affected_pct_of_inspected"][fire] = pct((dmg == AFFECTED).sum(), len(dins))
        out["proprietary_within_10km"][fire] = int((proprietary & (d <= 10_000)).sum())
        out["acute_beds_within_7500m"][fire] = int(la.BEDS[acute & (d <= 7500)].sum())
        out["low_rise_flats_destroyed"][fire] = int(((kind == MULTI_FAMILY[0]) & (dmg == DESTROYED)).sum())
        out["outbuildings_no_damage"][fire] = int(((kind == UTILITY) & none).sum())
        out["one_story_commercial_no_damage"][fire] = int(((kind == COMMERCIAL[0]) & none).sum())
        out["one_story_sfr_major"][fire] = int(((kind == SINGLE_FAMILY[0]) & (dmg == MAJOR)).sum())
    return out


def fire_aois(layers: Layers) -> dict:
    """DINS points inside the three fire AOI files, and hospitals near the west Altadena one."""
    eaton, pal = layers("eaton_dins"), layers("palisades_dins")
    la = hospitals(layers, "CA", "LOS ANGELES")

    west = projected_aoi("west_altadena_area.geojson", LA)
    middling = eaton[eaton.DAMAGE.isin([MINOR, MAJOR])]
    assert_off_edge(geoms(middling, LA), west)
    d_west = metres(la, west, LA)
    helipad = (la.HELIPAD == "Y").to_numpy()
    open_with_beds(la, d_west <= 7000)
    assert_clear(d_west, 6000, keep=helipad)

    east = projected_aoi("east_altadena_kinneloa.geojson", LA)
    shops = eaton[eaton.STRUCTURETYPE.isin(COMMERCIAL)]
    assert_off_edge(geoms(shops, LA), east)
    shops_in = shops[touching(shops, east, LA)]

    village = projected_aoi("palisades_village_aoi.geojson", LA)
    major = pal[pal.DAMAGE == MAJOR]
    assert_off_edge(geoms(major, LA), village)
    return {
        "west_altadena_area": {
            "minor_or_major": int(touching(middling, west, LA).sum()),
            "helipad_within_6km": ranked(la.NAME, d_west, keep=helipad & (d_west <= 6000)),
        },
        "east_altadena_kinneloa": {
            "commercial": len(shops_in),
            "commercial_by_grade": tally(shops_in.DAMAGE.map(GRADE)),
        },
        "palisades_village_aoi": {"major": int(touching(major, village, LA).sum())},
    }


def valencia_south_area(layers: Layers) -> dict:
    """The health facilities inside the València AOI file with their distances to the flood (``valencia`` checks
    that every facility is firmly inside or outside the flood)."""
    flood = layers.area("valencia_flood", VALENCIA)
    area = projected_aoi("valencia_south_area.geojson", VALENCIA)
    health = layers("valencia_health")
    assert_off_edge(geoms(health, VALENCIA), area)
    d = metres(health, flood, VALENCIA)
    return {"facilities": ranked(health.equipamien, d, keep=touching(health, area, VALENCIA))}


def catarroja_sketch(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    area = projected_aoi("catarroja_east_sketch.geojson", VALENCIA)
    lines, polys = layers("catarroja_lines"), layers("catarroja_polygons")
    cycle = shapely.intersection(geoms(lines[lines.highway == "cycleway"], VALENCIA), area)
    cycle_km = float(shapely.length(cycle).sum()) / 1000
    cycle_wet_km = float(shapely.length(shapely.intersection(cycle, flood)).sum()) / 1000
    reserve = shapely.intersection(union(polys[polys.leisure == "nature_reserve"]), area)
    return {
        "cycleway_km": round(cycle_km, 2),
        "cycleway_pct_flooded": pct(cycle_wet_km, cycle_km),
        "nature_reserve_ha": hectares(reserve),
        "track_km": clipped_km(lines[lines.highway == "track"], area, VALENCIA),
    }


# --------------------------------------------------------------------------------------------- Maui
def lahaina(layers: Layers) -> dict:
    labels = layers("lahaina_labels")
    cls = labels["class"].to_numpy()
    areas = np.asarray(shapely.area(geoms(labels, MAUI)), dtype=float)
    intact, damaged = cls == "Building", cls == "Damaged Building"
    assert_sizes_clear(areas[intact], 500)
    largest = np.sort(areas[intact])
    assert largest[-1] > 2 * largest[-2]  # one largest intact label, far above the next

    burn = layers.area("lahaina_burn", MAUI)
    maui = hospitals(layers, "HI", "MAUI")
    dm = metres(maui, burn, MAUI)
    open_with_beds(maui, np.ones(len(maui), dtype=bool))
    critical = (maui.TYPE == "CRITICAL ACCESS").to_numpy()
    not_state = (maui.OWNER != "GOVERNMENT - STATE").to_numpy()
    assert not_state.sum() == 1
    return {
        "labels": len(labels),
        "labels_by_source": tally(labels["source"]),
        "largest_intact_m2": round(float(largest[-1]), 1),
        "intact_over_500m2": int((intact & (areas > 500)).sum()),
        "damaged_mean_m2": round(float(areas[damaged].mean()), 1),
        "critical_access": int(critical.sum()),
        "critical_access_beds": int(maui.BEDS[critical].sum()),
        "not_state_owned": ranked(maui.NAME, dm, keep=not_state),
    }


# ------------------------------------------------------------------------------------------ Valencia
def valencia(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    health = layers("valencia_health")
    names = health.equipamien.astype(str)
    sub = health.idsubclase
    d = metres(health, flood, VALENCIA)
    assert_firm(geoms(health, VALENCIA), flood)
    centre = (sub == 13).to_numpy()
    hospital = (sub == 14).to_numpy()
    consultorio = (sub == 18).to_numpy()
    assert_clear(d, 1500)
    assert_clear(d, 3500)
    assert_clear(d, 4000, keep=centre)
    assert_clear(d, 1100, keep=hospital)
    assert_clear(d, 900, keep=consultorio)
    farthest_apart(d, np.ones(len(health), dtype=bool))
    far = int(np.argmax(d))
    near_consultorios = consultorio & (d <= 900)
    return {
        "between_1500_and_3500m": int(((d > 1500) & (d <= 3500)).sum()),
        "centres_beyond_4km": ranked(names, d, keep=centre & (d > 4000)),
        "hospitals_within_1100m": ranked(names, d, keep=hospital & (d <= 1100)),
        "hospitals": ranked(names, d, keep=hospital),
        "consultorios_within_900m": int(near_consultorios.sum()),
        "consultorios_within_900m_pct": pct(near_consultorios.sum(), consultorio.sum()),
        "farthest": ranked(names, d, keep=one_of(len(health), far)),
    }


def catarroja(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    pts, lines, polys = layers("catarroja_points"), layers("catarroja_lines"), layers("catarroja_polygons")

    compacted = lines[lines.surface == "compacted"]
    unpaved = lines[lines.surface == "unpaved"]
    bridges = lines[lines.bridge == "yes"]
    building_site = lines[lines.railway == "construction"]
    slips = lines[lines.highway == "motorway_link"]
    hamlets = pts[pts.place == "hamlet"]
    industrial = polys[polys.landuse == "industrial"]
    # one guard for every feature asked in or out (the flood is shrunk once, not once per layer)
    assert_firm(np.concatenate([geoms(f, VALENCIA) for f in (building_site, slips, hamlets, industrial)]), flood)
    industrial_wet = touching(industrial, flood, VALENCIA)
    reserve = union(polys[polys.leisure == "nature_reserve"])
    grassland = union(polys[polys.natural == "grassland"])
    scrub = union(polys[polys.natural == "scrub"])

    public = layers("catarroja_public")
    damage = public.val_dany.map(euros).to_numpy(dtype=float)
    subsidy = public.subv_apro.map(euros).to_numpy(dtype=float)
    tac = (public.titulo == "TAC Teatro Auditorio Catarroja").to_numpy()
    assert tac.sum() == 1
    diputacio = public.direccion.fillna("").str.contains("Diputació", regex=False).to_numpy()
    prevista = (public.estado == "Prevista").to_numpy()
    valued = public.val_dany.fillna("").str.strip().ne("").to_numpy()
    no_subsidy = public.subv_apro.fillna("").str.strip().eq("").to_numpy()
    schools = (public.capa == "Centros educativos").to_numpy()
    return {
        "compacted_km_in_flood": clipped_km(compacted, flood, VALENCIA),
        "compacted_pct_in_flood": wet_share(compacted, flood),
        "unpaved_pct_in_flood": wet_share(unpaved, flood),
        "bridge_km_in_flood": clipped_km(bridges, flood, VALENCIA),
        "bridge_pct_in_flood": wet_share(bridges, flood),
        "construction_rail_km": round(float(shapely.length(geoms(building_site, VALENCIA)).sum()) / 1000, 2),
        "construction_rail_any_flooded": bool(touching(building_site, flood, VALENCIA).any()),
        "motorway_links": len(slips),
        "motorway_links_all_flooded": bool(touching(slips, flood, VALENCIA).all()),
        "motorway_link_km": round(float(shapely.length(geoms(slips, VALENCIA)).sum()) / 1000, 3),
        "hamlets": listing(hamlets["name"]),
        "hamlets_any_flooded": bool(touching(hamlets, flood, VALENCIA).any()),
        "industrial_in_flood": int(industrial_wet.sum()),
        "industrial_dry": int((~industrial_wet).sum()),
        "nature_reserve_ha_in_flood": hectares(shapely.intersection(reserve, flood)),
        "nature_reserve_pct_in_flood": share_within(shapely.intersection(reserve, flood), reserve),
        "grassland_ha_in_flood": hectares2(shapely.intersection(grassland, flood)),
        "grassland_pct_in_flood": share_within(shapely.intersection(grassland, flood), grassland),
        "scrub_ha_in_flood": hectares2(shapely.intersection(scrub, flood)),
        "public_total_damage_eur": round(float(damage.sum()), 2),
        "public_over_million": listing(public.titulo[damage > 1_000_000]),
        "public_tac_shortfall_eur": round(float(damage[tac].sum() - subsidy[tac].sum()), 2),
        "public_diputacio": listing(public.titulo[diputacio]),
        "public_prevista": int(prevista.sum()),
        "public_prevista_by_capa": tally(public.capa[prevista]),
        "public_schools_valued_no_subsidy": listing(public.titulo[schools & valued & no_subsidy]),
    }


def heldout9(root: Path | None = None) -> dict:
    """Every expected value of ``bench/heldout9.json``, under one ``heldout9`` key."""
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
    return {"heldout9": values}
