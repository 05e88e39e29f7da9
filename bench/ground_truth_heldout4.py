"""Expected values of the fourth held-out question split (``bench/heldout4.json``), computed from the sample data.

Like the first three splits, the questions were written without looking at how GeoFaham reads a question (nothing
under ``geofaham_plugin/core/planning/`` nor the paraphrase suite was read, and the product was not run on them),
and their values are computed here by code of their own: GeoPandas, shapely and pyproj only, no import of
``geofaham_plugin``. The reading, the projection and the small table helpers are the first split's
(``bench.ground_truth_heldout``), the threshold guard and the area/length helpers the third split's
(``bench.ground_truth_heldout3``), imported, not copied. ``expected_values.compute`` stores the result under
``heldout4`` in ``bench/expected.json`` (``python -m bench ground-truth`` regenerates it).

Definitions (each expectation's description repeats the one it uses):

* DINS ``DAMAGE`` as published: ``No Damage`` (none), ``Affected (1-9%)``, ``Minor (10-25%)``,
  ``Major (26-50%)``, ``Destroyed (>50%)``; **damaged** = any of the last four; **damaged but standing** =
  Affected, Minor or Major; **not destroyed** = every grade but Destroyed, No Damage included. A structure is one
  DINS point; the Eaton layer is the 14 January snapshot (5,805 points), the Palisades layer the final one (11,988).
* **structure types**: outbuildings = ``Utility Misc Structure``; single-family = Single Family Residence Single
  and Multi Story; multi-family = Multi Family Residence Single and Multi Story; mobile homes = Mobile Home
  Single, Double and Triple Wide (``Motor Home`` left out); multi-story commercial = ``Commercial Building Multi
  Story`` only.
* **inside** a polygon: the feature intersects it (a point, line or polygon on the edge counts); **outside**:
  the rest of the layer.
* **distances**: shortest planar distance between the feature and the polygon in the event's projected CRS
  (EPSG:26911 Los Angeles, EPSG:32604 Maui, EPSG:25830 Valencia), metres; 0 inside. "Within X" is ``<= X``,
  "farther than X" is ``> X``. Every threshold is at least 30 m from every distance it separates
  (``assert_clear`` checks it when the values are computed), and every "nearest" is at least 30 m nearer than
  the next candidate (``assert_apart``).
* **hospitals** (Los Angeles, Maui): the HIFLD file's rows with ``STATE == 'CA'`` and ``COUNTY == 'LOS
  ANGELES'``, or ``STATE == 'HI'`` and ``COUNTY == 'MAUI'`` (every one counted here is OPEN). The Eaton fire's
  area is the adjusted perimeter; the Palisades fire's, with no perimeter in the data, the convex hull of its
  Destroyed DINS points (as ``bench/tasks.json`` uses it). A trauma centre has a ``TRAUMA`` other than ``NOT
  AVAILABLE``; a helipad is ``HELIPAD == 'Y'``; beds are ``BEDS`` (none counted here is the unknown -999);
  ``TYPE`` as published (GENERAL ACUTE CARE, PSYCHIATRIC, CRITICAL ACCESS, MILITARY ...).
* València health facilities: a consultorio's name begins with ``CONSULTORIO``, a speciality centre's with
  ``CENTRO DE ESPECIALIDADES``, a clinic's with ``CLINICA``.
* Catarroja OSM: the three layers of the extract, filtered on the tag the question names; lengths of lines
  clipped to the area (the part inside).
* Catarroja recovery plan: the municipal public-buildings file; ``val_dany`` read as euros (missing: 0).
* Lahaina labels: ``class`` ``Building`` (intact) and ``Damaged Building``; a clipped area is the union of the
  labels' parts inside the burn area.
* **areas / lengths**: in the projected CRS; m², ha, km² or km as the question asks.
* **shares**: percent of the stated denominator, one decimal.
* **AOI files**: the polygons of ``bench/aoi_files.py`` (EPSG:4326), the same a run receives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
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
    metres,
    pct,
    ranked,
    tally,
    touching,
)
from .ground_truth_heldout3 import CLEARANCE, assert_clear, clipped_km, hectares, km2, projected_aoi

STANDING = [AFFECTED, MINOR, MAJOR]
COMMERCIAL_MULTI = COMMERCIAL[1]


def assert_apart(dist: np.ndarray, keep: np.ndarray, k: int) -> None:
    """The ``k`` nearest kept features are at least ``CLEARANCE`` nearer than the next kept one: which ones are
    the k nearest cannot turn on a projection's few metres."""
    values = np.sort(np.asarray(dist, dtype=float)[keep])
    if values.size > k:
        assert values[k] - values[k - 1] >= CLEARANCE, f"the {k} nearest are not apart from the next: {values[: k + 1]}"


def palisades_hull(layers: Layers) -> shapely.Geometry:
    """The Palisades burn area stand-in: the convex hull of the Destroyed DINS points (EPSG:26911)."""
    dins = layers("palisades_dins")
    return shapely.union_all(geoms(dins[dins.DAMAGE == DESTROYED], LA)).convex_hull


# ---------------------------------------------------------------------------------------- the fires
def eaton(layers: Layers) -> dict:
    dins = layers("eaton_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = (dmg == DESTROYED).to_numpy()
    infra = kind == "Infrastructure"
    residential = kind.isin(SINGLE_FAMILY + MULTI_FAMILY).to_numpy()
    single_family = kind.isin(SINGLE_FAMILY).to_numpy()
    multi_story_sfr = (kind == SINGLE_FAMILY[1]).to_numpy()
    utility = (kind == UTILITY).to_numpy()
    standing = dmg.isin(STANDING).to_numpy()
    inside = touching(dins, layers.area("eaton_perimeter", LA), LA)

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, layers.area("eaton_perimeter", LA), LA)
    assert bool((la.STATUS[d <= 12_000] == "OPEN").all())
    acute = (la.TYPE == "GENERAL ACUTE CARE").to_numpy()
    psychiatric = (la.TYPE == "PSYCHIATRIC").to_numpy()
    trauma = (la.TRAUMA.fillna("NOT AVAILABLE") != "NOT AVAILABLE").to_numpy()
    assert_clear(d, 7000)
    assert_clear(d, 8000, keep=acute)
    assert_apart(d, acute & trauma, 1)
    within8_acute = acute & (d <= 8000)
    assert bool((la.BEDS[within8_acute] > 0).all())  # no unknown (-999) bed count in the sum
    return {
        "infrastructure_total": int(infra.sum()),
        "infrastructure_by_grade": tally(dmg[infra].map(GRADE)),
        "residential_destroyed": int((residential & destroyed).sum()),
        "affected_total": int((dmg == AFFECTED).sum()),
        "affected_by_type": tally(kind[dmg == AFFECTED]),
        "multi_story_sfr_destroyed": int((multi_story_sfr & destroyed).sum()),
        "multi_story_sfr_no_damage": int((multi_story_sfr & (dmg == NONE).to_numpy()).sum()),
        "inside_perimeter_not_destroyed": int((inside & ~destroyed).sum()),
        "single_family_standing_damaged": int((single_family & standing).sum()),
        "outbuildings_no_damage_pct": pct((utility & (dmg == NONE).to_numpy()).sum(), utility.sum()),
        "non_psychiatric_within_7km": ranked(la.NAME, d, keep=~psychiatric & (d <= 7000)),
        "acute_within_8km": int(within8_acute.sum()),
        "acute_beds_within_8km": int(la.BEDS[within8_acute].sum()),
        "nearest_acute_trauma": ranked(la.NAME, d, keep=acute & trauma, k=1),
    }


def palisades(layers: Layers) -> dict:
    dins = layers("palisades_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = dmg == DESTROYED
    standing = dmg.isin(STANDING)
    mobile, utility = kind.isin(MOBILE_HOMES), kind == UTILITY
    single_family = kind.isin(SINGLE_FAMILY)
    commercial_multi = kind == COMMERCIAL_MULTI
    major = dmg == MAJOR

    hull = palisades_hull(layers)
    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, hull, LA)
    assert bool((la.STATUS[d <= 12_000] == "OPEN").all())
    acute = (la.TYPE == "GENERAL ACUTE CARE").to_numpy()
    helipad = (la.HELIPAD == "Y").to_numpy()
    trauma = (la.TRAUMA.fillna("NOT AVAILABLE") != "NOT AVAILABLE").to_numpy()
    assert_clear(d, 7000)
    assert_clear(d, 10_000, keep=trauma)
    assert_apart(d, helipad, 1)
    assert_apart(d, acute, 4)
    within7 = d <= 7000
    assert bool((la.BEDS[within7] > 0).all())
    return {
        "mobile_homes_destroyed_pct": pct((mobile & destroyed).sum(), mobile.sum()),
        "major_total": int(major.sum()),
        "major_by_type": tally(kind[major]),
        "single_family_pct_of_destroyed": pct((single_family & destroyed).sum(), destroyed.sum()),
        "outbuildings_not_destroyed": int((utility & ~destroyed).sum()),
        "commercial_multi_story_total": int(commercial_multi.sum()),
        "commercial_multi_story_by_grade": tally(dmg[commercial_multi].map(GRADE)),
        "single_family_pct_of_standing_damaged": pct((single_family & standing).sum(), standing.sum()),
        "nearest_helipad": ranked(la.NAME, d, keep=helipad, k=1),
        "nearest_acute_4": ranked(la.NAME, d, keep=acute, k=4),
        "trauma_within_10km": ranked(la.NAME, d, keep=trauma & (d <= 10_000)),
        "hospitals_within_7km": int(within7.sum()),
        "beds_within_7km": int(la.BEDS[within7].sum()),
        "hull_km2": km2(hull),
    }


def comparative(layers: Layers) -> dict:
    outbuildings: dict[str, int] = {}
    churches: dict[str, int] = {}
    for fire in ("eaton", "palisades"):
        dins = layers(f"{fire}_dins")
        destroyed = dins.DAMAGE == DESTROYED
        outbuildings[fire] = int(((dins.STRUCTURETYPE == UTILITY) & destroyed).sum())
        churches[fire] = int(((dins.STRUCTURETYPE == "Church") & destroyed).sum())
    return {"outbuildings_destroyed": outbuildings, "churches_destroyed": churches}


def fire_aois(layers: Layers) -> dict:
    """Inside the two fire AOI files (the DINS points their polygons intersect), and hospitals near the first."""
    altadena = projected_aoi("west_altadena_area.geojson", LA)
    eaton = layers("eaton_dins")
    inside = eaton[touching(eaton, altadena, LA)]
    single_family = inside.STRUCTURETYPE.isin(SINGLE_FAMILY)
    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, altadena, LA)
    acute = (la.TYPE == "GENERAL ACUTE CARE").to_numpy()
    assert_apart(d, acute, 1)

    village = projected_aoi("palisades_village_aoi.geojson", LA)
    pal = layers("palisades_dins")
    in_village = pal[touching(pal, village, LA)]
    v_destroyed = in_village.DAMAGE == DESTROYED
    return {
        "west_altadena_area": {
            "single_family_destroyed": int((single_family & (inside.DAMAGE == DESTROYED)).sum()),
            "single_family_no_damage": int((single_family & (inside.DAMAGE == NONE)).sum()),
            "nearest_acute": ranked(la.NAME, d, keep=acute, k=1),
        },
        "palisades_village_aoi": {
            "outbuildings_destroyed": int(((in_village.STRUCTURETYPE == UTILITY) & v_destroyed).sum()),
            "mobile_homes_destroyed": int((in_village.STRUCTURETYPE.isin(MOBILE_HOMES) & v_destroyed).sum()),
        },
    }


# --------------------------------------------------------------------------------------------- Maui
def lahaina(layers: Layers) -> dict:
    burn = layers.area("lahaina_burn", MAUI)
    labels = layers("lahaina_labels")
    cls = labels["class"].to_numpy()
    damaged, intact = cls == "Damaged Building", cls == "Building"
    d = metres(labels, burn, MAUI)
    assert_clear(d, 250, keep=intact)
    damaged_in = shapely.intersection(shapely.union_all(geoms(labels[damaged], MAUI)), burn)
    maui = hospitals(layers, "HI", "MAUI")
    critical = (maui.TYPE == "CRITICAL ACCESS").to_numpy()
    return {
        "damaged_pct_touching_burn": pct((damaged & (d == 0)).sum(), damaged.sum()),
        "intact_beyond_250m": int((intact & (d > 250)).sum()),
        "damaged_area_in_burn_m2": round(float(shapely.area(damaged_in)), 1),
        "critical_access": ranked(maui.NAME, metres(maui, burn, MAUI), keep=critical),
    }


# ------------------------------------------------------------------------------------------ Valencia
def valencia(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    health = layers("valencia_health")
    names = health.equipamien.astype(str)
    upper = names.str.upper()
    d = metres(health, flood, VALENCIA)
    consultorio = upper.str.startswith("CONSULTORIO").to_numpy()
    speciality = upper.str.startswith("CENTRO DE ESPECIALIDADES").to_numpy()
    clinic = upper.str.startswith("CLINICA").to_numpy()
    assert_clear(d, 3500)
    assert_clear(d, 2500, keep=speciality)
    assert_apart(d, clinic, 1)
    assert_apart(d, consultorio & (d > 0), 3)
    return {
        "inside_pct": pct((d == 0).sum(), len(health)),
        "beyond_3500m": int((d > 3500).sum()),
        "beyond_3500m_pct": pct((d > 3500).sum(), len(health)),
        "speciality_beyond_2500m": ranked(names, d, keep=speciality & (d > 2500)),
        "nearest_clinic": ranked(names, d, keep=clinic, k=1),
        "dry_consultorios_nearest_3": ranked(names, d, keep=consultorio & (d > 0), k=3),
    }


def valencia_south_area(layers: Layers) -> dict:
    """Inside the València AOI file: the health facilities, the dry ones, and the flooded area."""
    flood = layers.area("valencia_flood", VALENCIA)
    area = projected_aoi("valencia_south_area.geojson", VALENCIA)
    health = layers("valencia_health")
    inside = touching(health, area, VALENCIA)
    wet = touching(health, flood, VALENCIA)
    names = health.equipamien.astype(str)
    return {
        "facilities": int(inside.sum()),
        "dry_facilities": ranked(names, metres(health, flood, VALENCIA), keep=inside & ~wet),
        "flooded_ha": hectares(shapely.intersection(area, flood)),
    }


def catarroja(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    pts, lines, polys = layers("catarroja_points"), layers("catarroja_lines"), layers("catarroja_polygons")

    waterways = lines[lines.waterway.notna()]
    wet_waterways = touching(waterways, flood, VALENCIA)
    crossings = pts[pts.highway == "crossing"]
    wet_crossings = touching(crossings, flood, VALENCIA)
    cemetery = polys[polys.landuse == "cemetery"]
    orchards = polys[polys.landuse == "orchard"]
    courthouse = polys[polys.amenity == "courthouse"]
    courthouse_d = float(metres(courthouse, flood, VALENCIA).min())
    library = pts[pts.amenity == "library"]
    assert len(courthouse) == 1 and len(library) == 1 and len(cemetery) == 1

    public = layers("catarroja_public")
    public_in = touching(public, flood, VALENCIA)
    social = (public.capa == "Centros sociosanitarios").to_numpy()
    return {
        "waterways_in_flood": int(wet_waterways.sum()),
        "waterways_in_flood_by_type": tally(waterways.waterway[wet_waterways]),
        "canal_km_in_flood": clipped_km(lines[lines.waterway == "canal"], flood, VALENCIA),
        "service_km_in_flood": clipped_km(lines[lines.highway == "service"], flood, VALENCIA),
        "crossings_in_flood": int(wet_crossings.sum()),
        "crossings_in_flood_pct": pct(wet_crossings.sum(), len(crossings)),
        "cemetery_in_flood": bool(touching(cemetery, flood, VALENCIA).any()),
        "orchards_missed": int((~touching(orchards, flood, VALENCIA)).sum()),
        "courthouse_in_flood": bool(courthouse_d == 0.0),
        "courthouse_distance_m": round(courthouse_d, 1),
        "library_distance_m": round(float(metres(library, flood, VALENCIA).min()), 1),
        "public_outside": int((~public_in).sum()),
        "public_outside_eur": round(sum(euros(v) for v in public.val_dany[~public_in]), 2),
        "public_outside_by_estado": tally(public.estado[~public_in]),
        "public_social": int(social.sum()),
        "public_social_in_flood": int((social & public_in).sum()),
    }


def catarroja_sketch(layers: Layers) -> dict:
    """Inside the Catarroja AOI file: residential street length, OSM building footprints the flood missed."""
    flood = layers.area("valencia_flood", VALENCIA)
    area = projected_aoi("catarroja_east_sketch.geojson", VALENCIA)
    lines, polys = layers("catarroja_lines"), layers("catarroja_polygons")
    buildings = polys[polys.building.notna()]
    inside = touching(buildings, area, VALENCIA)
    wet = touching(buildings, flood, VALENCIA)
    return {
        "residential_km": clipped_km(lines[lines.highway == "residential"], area, VALENCIA),
        "buildings_dry": int((inside & ~wet).sum()),
    }


def heldout4(root: Path | None = None) -> dict:
    """Every expected value of ``bench/heldout4.json``, under one ``heldout4`` key."""
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
    return {"heldout4": values}
