"""Expected values of the eleventh held-out question split (``bench/heldout11.json``), computed from the sample data.

Like the first ten splits, the questions were written without looking at how GeoFaham reads a question (nothing under
``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not run on them), and their values are
computed here by code of their own: GeoPandas, shapely and pyproj only, no import of ``geofaham_plugin``. The reading,
the projection and the small table helpers are the first split's (``bench.ground_truth_heldout``), the threshold guard
and the area/length helpers the third split's (``bench.ground_truth_heldout3``), the Palisades hull the fourth split's
(``bench.ground_truth_heldout4``), the AOI edge guard the sixth split's (``bench.ground_truth_heldout6``), the "firmly
inside or outside" guard, the open-with-beds guard, the one-row mask and the wet-length share the eighth split's
(``bench.ground_truth_heldout8``), the two-decimal hectares the ninth split's (``bench.ground_truth_heldout9``), and the
"one nearest" helper (with the fourth split's "nearest ones are apart" guard inside) and the damaged-but-standing grades
the tenth split's (``bench.ground_truth_heldout10``), imported, not copied; the "largest" and "smallest" guards (no tie,
or a margin) are this split's own. ``expected_values.compute`` stores the result under ``heldout11`` in
``bench/expected.json`` (``python -m bench ground-truth`` regenerates it).

Definitions (each expectation's description repeats the one it uses):

* DINS ``DAMAGE`` as published: ``No Damage`` (none, "no damage at all", "escaped without any damage"),
  ``Affected (1-9%)``, ``Minor (10-25%)``, ``Major (26-50%)`` ("major damage"), ``Destroyed (>50%)`` ("destroyed",
  "burned down"); **damaged** ("some damage, from the lightest to total loss") = any grade but No Damage; **damaged but
  not destroyed** = Affected, Minor or Major. A structure is one DINS point; the Eaton layer is the 14 January snapshot
  (5,805 points), the Palisades layer the final one (11,988); "inspected" is every point of a layer.
* **structure types** as published: single-family homes = Single Family Residence Single and Multi Story (one-storey =
  Single Story); apartment buildings = Multi Family Residence Single and Multi Story (multi-storey = Multi Story);
  mobile homes = Mobile Home Single, Double and Triple Wide (``Motor Home`` left out); **homes** = single-family,
  apartment buildings and mobile homes; outbuildings (sheds, detached garages) = ``Utility Misc Structure``; buildings
  mixing shops and apartments = ``Mixed Commercial/Residential``; multi-storey commercial buildings = ``Commercial
  Building Multi Story``; schools = ``School``; churches = ``Church``; infrastructure = ``Infrastructure``.
* **inside** a polygon: the feature intersects it; **outside** / **dry**: the rest. DINS points and health facilities
  counted in an AOI file lie at least 10 m from the polygon's edge (``assert_off_edge``).
* **distances**: shortest planar distance between the feature and the polygon in the event's projected CRS
  (EPSG:26911 Los Angeles, EPSG:32604 Maui, EPSG:25830 Valencia), metres; 0 inside. "Within X" is ``<= X``,
  "more than X" is ``> X``. Every threshold is at least 30 m from every distance it separates (``assert_clear``), every
  "nearest" at least 30 m apart from the next candidate (``assert_apart``), and every "inside the flood" at least 30 m
  from flipping (``assert_firm``).
* **hospitals** (Los Angeles, Maui): the HIFLD file's rows with ``STATE == 'CA'`` and ``COUNTY == 'LOS ANGELES'``,
  or ``STATE == 'HI'`` and ``COUNTY == 'MAUI'``; every row counted, summed or averaged here is OPEN and has a known
  ``BEDS`` (``open_with_beds``); psychiatric ``D/P APH`` units are hospitals like any other row. The Eaton fire's area
  is the adjusted perimeter; the Palisades fire's, with no perimeter in the data, the convex hull of its Destroyed DINS
  points. ``TYPE``, ``OWNER`` (non-profit = ``NON-PROFIT``; state-run = ``GOVERNMENT - STATE``) and ``HELIPAD`` as
  published.
* València health facilities: all 64 points; centros de salud = ``idsubclase`` 13 (``CENTRO DE SALUD NOU CAMPANAR``,
  with an empty ``idsubclase``, is 2 km out and on neither side of a threshold asked here), consultorios = 18 (every
  name starting ``CONSULTORIO``), hospitals = 14, centros de especialidades = 19 (every name starting ``CENTRO DE
  ESPECIALIDADES``).
* Catarroja OSM: the three layers of the extract, filtered on the tag the question names; lengths of lines clipped to
  the flood (or to an AOI file); areas of the union of the polygons clipped to the flood; a feature counts as flooded
  when it intersects the flood polygon. The municipality is the extract's ``boundary=administrative`` polygon named
  Catarroja (admin level 8).
* Catarroja recovery plan: the municipal public-buildings file; ``val_dany`` and ``subv_apro`` read as euros
  (missing, empty or not a figure: 0; the Mercat's "Cantidad solicitada como subvención: 486.478,92 €" reads as that
  figure); "with a valuation" is a non-empty ``val_dany``; "with a subsidy in euros" is a ``subv_apro`` that reads as
  more than 0 (the library's "Donación IKEA" does not); ``capa`` and ``estado`` as published.
* Lahaina labels: ``class`` as published; footprint areas of the polygons after ``make_valid`` (EPSG:32604), each label
  on its own (never a union); the "building labels" are ``Building`` and ``Damaged Building``.
* **shares**: percent of the stated denominator, one decimal; **means**: of the stated rows, unrounded inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import shapely

from .ground_truth import data_dir
from .ground_truth_heldout import (
    COMMERCIAL,
    DESTROYED,
    GRADE,
    LA,
    MAJOR,
    MAUI,
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
from .ground_truth_heldout3 import assert_clear, clipped_km, hectares, projected_aoi
from .ground_truth_heldout4 import palisades_hull
from .ground_truth_heldout6 import assert_off_edge
from .ground_truth_heldout8 import assert_firm, one_of, open_with_beds, wet_share
from .ground_truth_heldout9 import hectares2
from .ground_truth_heldout10 import STANDING, nearest

HOMES = SINGLE_FAMILY + MULTI_FAMILY + MOBILE_HOMES
MIXED = "Mixed Commercial/Residential"
COMMERCIAL_MULTI = COMMERCIAL[1]
#: the València idsubclase codes a question names in words
FACILITY_KIND = {13: "centro de salud", 18: "consultorio", 14: "hospital", 19: "centro de especialidades"}


def largest(values: np.ndarray, keep: np.ndarray, margin: float = 0.0) -> int:
    """The row of the largest kept value, which leads the next kept one by more than ``margin`` (a share of it): which
    one is largest cannot turn on a rounding or a projection's scale."""
    masked = np.where(keep, np.asarray(values, dtype=float), -np.inf)
    order = np.argsort(masked)[::-1]
    first, second = masked[order[0]], masked[order[1]]
    assert first - second > margin * first, f"the largest ({first}) is not ahead of the next ({second})"
    return int(order[0])


def smallest(values: np.ndarray, keep: np.ndarray) -> int:
    """The row of the smallest kept value, strictly below the next kept one."""
    masked = np.where(keep, np.asarray(values, dtype=float), np.inf)
    order = np.argsort(masked)
    assert masked[order[0]] < masked[order[1]], "two smallest values tie"
    return int(order[0])


# ---------------------------------------------------------------------------------------- the fires
def eaton(layers: Layers) -> dict:
    dins = layers("eaton_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = (dmg == DESTROYED).to_numpy()
    infrastructure = (kind == "Infrastructure").to_numpy()
    schools = (kind == "School").to_numpy()

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, layers.area("eaton_perimeter", LA), LA)
    open_with_beds(la, d <= 10_500)
    for threshold in (6000, 8500, 10_000):
        assert_clear(d, threshold)
    near = d <= 8500
    ten = d <= 10_000
    biggest = largest(la.BEDS.to_numpy(), ten)
    nonprofit = (la.OWNER == "NON-PROFIT").to_numpy()
    return {
        "homes_destroyed": int((kind.isin(HOMES).to_numpy() & destroyed).sum()),
        "apartments_destroyed": int((kind.isin(MULTI_FAMILY).to_numpy() & destroyed).sum()),
        "damaged": int((dmg != NONE).sum()),
        "infrastructure": int(infrastructure.sum()),
        "infrastructure_by_grade": tally(dmg[infrastructure].map(GRADE)),
        "schools_no_damage_pct": pct(((dmg == NONE).to_numpy() & schools).sum(), schools.sum()),
        "within_8500m": int(near.sum()),
        "beds_within_8500m": int(la.BEDS[near].sum()),
        "most_beds_within_10km": ranked(la.NAME, d, keep=one_of(len(la), biggest)),
        "most_beds_within_10km_beds": int(la.BEDS[biggest]),
        "within_10km": int(ten.sum()),
        "within_10km_by_type": tally(la.TYPE[ten]),
        "nonprofit_within_6km": ranked(la.NAME, d, keep=nonprofit & (d <= 6000)),
    }


def palisades(layers: Layers) -> dict:
    dins = layers("palisades_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = (dmg == DESTROYED).to_numpy()
    mixed = (kind == MIXED).to_numpy()
    shops = (kind == COMMERCIAL_MULTI).to_numpy()
    sheds = (kind == UTILITY).to_numpy()
    flats = (kind == MULTI_FAMILY[1]).to_numpy()

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, palisades_hull(layers), LA)
    open_with_beds(la, d <= 7500)
    assert_clear(d, 7000)
    helipad = (la.HELIPAD == "Y").to_numpy()
    near = d <= 7000
    return {
        "mixed_use": int(mixed.sum()),
        "mixed_use_by_grade": tally(dmg[mixed].map(GRADE)),
        "sfr_pct_of_destroyed": pct((kind.isin(SINGLE_FAMILY).to_numpy() & destroyed).sum(), destroyed.sum()),
        "outbuildings_destroyed_pct": pct((sheds & destroyed).sum(), sheds.sum()),
        "multi_story_apartments_standing": int((flats & dmg.isin(STANDING).to_numpy()).sum()),
        "multi_story_commercial": int(shops.sum()),
        "multi_story_commercial_by_grade": tally(dmg[shops].map(GRADE)),
        "nearest_helipad": nearest(la.NAME, d, keep=helipad),
        "within_7km": int(near.sum()),
        "mean_beds_within_7km": round(float(la.BEDS[near].mean()), 1),
    }


def comparative(layers: Layers) -> dict:
    keys = (
        "inspected",
        "destroyed",
        "sfr_destroyed_pct",
        "outbuildings_destroyed",
        "churches_destroyed",
        "schools_damaged",
        "major",
        "hospitals_within_6km",
    )
    out: dict[str, dict] = {k: {} for k in keys}
    la = hospitals(layers, "CA", "LOS ANGELES")
    areas = {"eaton": layers.area("eaton_perimeter", LA), "palisades": palisades_hull(layers)}
    for fire in ("eaton", "palisades"):
        dins = layers(f"{fire}_dins")
        dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
        destroyed = dmg == DESTROYED
        houses = kind.isin(SINGLE_FAMILY)
        d = metres(la, areas[fire], LA)
        open_with_beds(la, d <= 6500)
        assert_clear(d, 6000)
        out["inspected"][fire] = len(dins)
        out["destroyed"][fire] = int(destroyed.sum())
        out["sfr_destroyed_pct"][fire] = pct((houses & destroyed).sum(), houses.sum())
        out["outbuildings_destroyed"][fire] = int(((kind == UTILITY) & destroyed).sum())
        out["churches_destroyed"][fire] = int(((kind == "Church") & destroyed).sum())
        out["schools_damaged"][fire] = int(((kind == "School") & (dmg != NONE)).sum())
        out["major"][fire] = int((dmg == MAJOR).sum())
        out["hospitals_within_6km"][fire] = int((d <= 6000).sum())
    out["destroyed_difference"] = out["destroyed"]["palisades"] - out["destroyed"]["eaton"]
    return out


def fire_aois(layers: Layers) -> dict:
    """DINS points inside the three fire AOI files (of the structure types no point of which lies within 10 m of the
    polygon's edge), and hospitals near the Kinneloa one."""
    eaton, pal = layers("eaton_dins"), layers("palisades_dins")

    west = projected_aoi("west_altadena_area.geojson", LA)
    flats = eaton[eaton.STRUCTURETYPE.eq(MULTI_FAMILY[1])]
    assert_off_edge(geoms(flats, LA), west)
    flats_in_west = flats[touching(flats, west, LA)]

    east = projected_aoi("east_altadena_kinneloa.geojson", LA)
    assert_off_edge(geoms(eaton, LA), east)
    in_east = eaton[touching(eaton, east, LA)]
    houses_east = in_east[in_east.STRUCTURETYPE.isin(SINGLE_FAMILY)]
    la = hospitals(layers, "CA", "LOS ANGELES")
    d_east = metres(la, east, LA)
    open_with_beds(la, d_east <= 7500)
    assert_clear(d_east, 7000)
    near_east = d_east <= 7000

    village = projected_aoi("palisades_village_aoi.geojson", LA)
    churches = pal[pal.STRUCTURETYPE == "Church"]
    assert_off_edge(geoms(churches, LA), village)
    churches_in_village = churches[touching(churches, village, LA)]
    return {
        "west_altadena_area": {
            "multi_story_apartments": len(flats_in_west),
            "multi_story_apartments_destroyed": int((flats_in_west.DAMAGE == DESTROYED).sum()),
        },
        "east_altadena_kinneloa": {
            "destroyed_pct": pct((in_east.DAMAGE == DESTROYED).sum(), len(in_east)),
            "sfr_no_damage": int((houses_east.DAMAGE == NONE).sum()),
            "hospitals_within_7km": int(near_east.sum()),
            "beds_within_7km": int(la.BEDS[near_east].sum()),
        },
        "palisades_village_aoi": {
            "churches": len(churches_in_village),
            "churches_destroyed": int((churches_in_village.DAMAGE == DESTROYED).sum()),
        },
    }


def valencia_aois(layers: Layers) -> dict:
    """Motorway and railway inside the Catarroja sketch, and the health facilities of the València AOI file
    (``valencia`` checks that every facility is firmly inside or outside the flood)."""
    flood = layers.area("valencia_flood", VALENCIA)
    sketch = projected_aoi("catarroja_east_sketch.geojson", VALENCIA)
    lines = layers("catarroja_lines")
    rail = lines[lines.railway == "rail"]
    south = projected_aoi("valencia_south_area.geojson", VALENCIA)
    health = layers("valencia_health")
    assert_off_edge(geoms(health, VALENCIA), south)
    inside_south = touching(health, south, VALENCIA)
    d = metres(health, flood, VALENCIA)
    assert_clear(d, 600, keep=inside_south)
    kinds = health.idsubclase[inside_south].map(FACILITY_KIND)
    assert kinds.notna().all()
    return {
        "catarroja_east_sketch": {
            "motorway_km": clipped_km(lines[lines.highway == "motorway"], sketch, VALENCIA),
            "rail_km": clipped_km(rail, sketch, VALENCIA),
            "rail_km_in_flood": clipped_km(rail, shapely.intersection(sketch, flood), VALENCIA),
        },
        "valencia_south_area": {
            "beyond_600m": ranked(health.equipamien, d, keep=inside_south & (d > 600)),
            "facilities": int(inside_south.sum()),
            "facilities_by_kind": tally(kinds),
        },
    }


# --------------------------------------------------------------------------------------------- Maui
def lahaina(layers: Layers) -> dict:
    labels = layers("lahaina_labels")
    cls = labels["class"].to_numpy()
    areas = np.asarray(shapely.area(geoms(labels, MAUI)), dtype=float)
    damaged = cls == "Damaged Building"
    buildings = damaged | (cls == "Building")
    biggest = largest(areas, damaged, margin=0.02)

    maui = hospitals(layers, "HI", "MAUI")
    d = metres(maui, layers.area("lahaina_burn", MAUI), MAUI)
    open_with_beds(maui, np.ones(len(maui), dtype=bool))
    assert_clear(d, 30_000)
    near = d <= 30_000
    state = (maui.OWNER == "GOVERNMENT - STATE").to_numpy()
    return {
        "largest_damaged_m2": round(float(areas[biggest]), 1),
        "building_labels_m2": round(float(areas[buildings].sum()), 1),
        "within_30km": ranked(maui.NAME, d, keep=near),
        "beds_within_30km": int(maui.BEDS[near].sum()),
        "state_hospitals": int(state.sum()),
        "state_beds": int(maui.BEDS[state].sum()),
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
    consultorio = (sub == 18).to_numpy()
    specialty = (sub == 19).to_numpy()
    assert bool(names[consultorio].str.startswith("CONSULTORIO").all())
    assert int(names.str.startswith("CONSULTORIO").sum()) == int(consultorio.sum())
    assert bool(names[specialty].str.startswith("CENTRO DE ESPECIALIDADES").all())
    assert int(names.str.startswith("CENTRO DE ESPECIALIDADES").sum()) == int(specialty.sum())
    unclassed_centre = (sub.isna() & names.str.startswith("CENTRO DE SALUD")).to_numpy()
    assert_clear(d, 600)
    assert_clear(d, 750)
    assert_clear(d, 3000, keep=consultorio)
    assert_clear(d, 3500, keep=centre | unclassed_centre)
    near = d <= 3000
    return {
        "nearest_specialty_centre": nearest(names, d, keep=specialty),
        "within_750m": int((d <= 750).sum()),
        "dry_within_600m": int(((d > 0) & (d <= 600)).sum()),
        "centres_mean_m": round(float(d[centre].mean()), 1),
        "consultorios_within_3km": int((consultorio & near).sum()),
        "consultorios_within_3km_pct": pct((consultorio & near).sum(), consultorio.sum()),
        "centres_beyond_3500m": ranked(names, d, keep=centre & (d > 3500)),
    }


def catarroja(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    pts, lines, polys = layers("catarroja_points"), layers("catarroja_lines"), layers("catarroja_polygons")

    town = polys[(polys["boundary"] == "administrative") & (polys["name"] == "Catarroja")]
    assert len(town) == 1 and str(town.admin_leve.iloc[0]) == "8"
    municipality = shapely.union_all(geoms(town, VALENCIA))
    wet_town = shapely.intersection(municipality, flood)

    churches = polys[polys.amenity == "place_of_worship"]
    courthouse = polys[polys.amenity == "courthouse"]
    university = polys[polys.amenity == "university"]
    towers = pts[pts.power == "tower"]
    assert len(churches) == 2 and len(courthouse) == 1 and len(university) == 1 and len(towers) == 7
    assert_firm(np.concatenate([geoms(f, VALENCIA) for f in (churches, courthouse, university, towers)]), flood)
    campus = shapely.union_all(geoms(university, VALENCIA))

    def flooded_ha(tag: str, value: str, two_decimals: bool = False) -> float:
        union = shapely.union_all(geoms(polys[polys[tag] == value], VALENCIA))
        wet = shapely.intersection(union, flood)
        return hectares2(wet) if two_decimals else hectares(wet)

    return {
        "municipality_flooded_ha": hectares(wet_town),
        "municipality_flooded_pct": pct(shapely.area(wet_town), shapely.area(municipality)),
        "cycleway_km_in_flood": clipped_km(lines[lines.highway == "cycleway"], flood, VALENCIA),
        "stream_km_in_flood": clipped_km(lines[lines.waterway == "stream"], flood, VALENCIA),
        "tertiary_pct_in_flood": wet_share(lines[lines.highway == "tertiary"], flood),
        "secondary_pct_in_flood": wet_share(lines[lines.highway == "secondary"], flood),
        "churches_any_flooded": bool(touching(churches, flood, VALENCIA).any()),
        "courthouse_flooded": bool(touching(courthouse, flood, VALENCIA).all()),
        "towers": len(towers),
        "towers_all_flooded": bool(touching(towers, flood, VALENCIA).all()),
        "university_flooded": bool(touching(university, flood, VALENCIA).all()),
        "university_ha_in_flood": hectares2(shapely.intersection(campus, flood)),
        "wetland_ha_in_flood": flooded_ha("natural", "wetland"),
        "residential_ha_in_flood": flooded_ha("landuse", "residential"),
        "pitch_ha_in_flood": flooded_ha("leisure", "pitch", two_decimals=True),
    }


def recovery_plan(layers: Layers) -> dict:
    public = layers("catarroja_public")
    damage = public.val_dany.map(euros).to_numpy(dtype=float)
    subsidy = public.subv_apro.map(euros).to_numpy(dtype=float)
    valued = public.val_dany.fillna("").str.strip().ne("").to_numpy()
    under_way = (public.estado == "En ejecución").to_numpy()
    social = (public.capa == "Centros sociosanitarios").to_numpy()
    over = subsidy > damage
    assert over.sum() == 1 and float(subsidy[over][0] - damage[over][0]) > 1000
    granted = subsidy > 0
    least = smallest(subsidy, granted)
    return {
        "subsidy_under_way_eur": round(float(subsidy[under_way].sum()), 2),
        "over_subsidised_any": bool(over.any()),
        "over_subsidised": listing(public.titulo[over]),
        "unvalued": listing(public.titulo[~valued]),
        "social_mean_damage_eur": round(float(damage[social & valued].mean()), 2),
        "by_capa": tally(public.capa),
        "total": len(public),
        "smallest_subsidy": listing(public.titulo[one_of(len(public), least)]),
        "smallest_subsidy_eur": round(float(subsidy[least]), 2),
    }


def heldout11(root: Path | None = None) -> dict:
    """Every expected value of ``bench/heldout11.json``, under one ``heldout11`` key."""
    layers = Layers(root or data_dir())
    aoi = fire_aois(layers)
    aoi.update(valencia_aois(layers))
    values = {
        "eaton": eaton(layers),
        "palisades": palisades(layers),
        "comparative": comparative(layers),
        "aoi": aoi,
        "lahaina": lahaina(layers),
        "valencia": valencia(layers),
        "catarroja": catarroja(layers),
        "plan": recovery_plan(layers),
    }
    return {"heldout11": values}
