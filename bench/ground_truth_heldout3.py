"""Expected values of the third held-out question split (``bench/heldout3.json``), computed from the sample data.

Like the first two splits, the questions were written without looking at how GeoFaham reads a question (nothing
under ``geofaham_plugin/core/planning/`` nor the paraphrase suite was read), and their values are computed here by
code of their own: GeoPandas, shapely and pyproj only, no import of ``geofaham_plugin``. The reading, the
projection and the small table helpers are the first split's (``bench.ground_truth_heldout``), imported, not
copied. ``expected_values.compute`` stores the result under ``heldout3`` in ``bench/expected.json`` (``python -m
bench ground-truth`` regenerates it).

Definitions (each expectation's description repeats the one it uses):

* DINS ``DAMAGE`` as published: ``No Damage`` (none), ``Affected (1-9%)``, ``Minor (10-25%)``,
  ``Major (26-50%)``, ``Destroyed (>50%)``; **damaged** = any of the last four; **damaged but standing** =
  Affected, Minor or Major. A structure is one DINS point; the Eaton layer is the 14 January snapshot (5,805
  points), the Palisades layer the final one (11,988).
* **structure types**: outbuildings = ``Utility Misc Structure``; commercial = Commercial Building Single and
  Multi Story (Mixed Commercial/Residential left out); single-family = Single Family Residence Single and Multi
  Story; multi-family = Multi Family Residence Single and Multi Story; motor homes = ``Motor Home`` only.
* **inside** a polygon: the feature intersects it (a point, line or polygon on the edge counts); **outside**:
  the rest of the layer.
* **distances**: shortest planar distance between the feature and the polygon in the event's projected CRS
  (EPSG:26911 Los Angeles, EPSG:32604 Maui, EPSG:25830 Valencia), metres; 0 inside. "Within X" is ``<= X``,
  "farther than X" is ``> X``. Every threshold is at least 30 m from every distance it separates
  (``assert_clear`` checks it when the values are computed).
* **hospitals** (Los Angeles, Maui): the HIFLD file's rows with ``STATE == 'CA'`` and ``COUNTY == 'LOS
  ANGELES'``, or ``STATE == 'HI'`` and ``COUNTY == 'MAUI'`` (every one counted here is OPEN). The Eaton fire's
  area is the adjusted perimeter; the Palisades fire's, with no perimeter in the data, the convex hull of its
  Destroyed DINS points (as ``bench/tasks.json`` uses it). A trauma centre has a ``TRAUMA`` other than ``NOT
  AVAILABLE``; a helipad is ``HELIPAD == 'Y'``; beds are ``BEDS`` (none counted here is the unknown -999).
* València health facilities: a hospital's name begins with ``HOSPITAL``, a consultorio's with ``CONSULTORIO``,
  a speciality centre's with ``CENTRO DE ESPECIALIDADES``.
* Catarroja OSM: the three layers of the extract, filtered on the tag the question names; lengths and areas
  of the features clipped to the flood (lines: the part inside; polygons: the union of their parts inside).
* **areas / lengths**: in the projected CRS; m², ha, km² or km as the question asks.
* **shares**: percent of the stated denominator, one decimal.
* **AOI files**: the polygons of ``bench/aoi_files.py`` (EPSG:4326), the same a run receives."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from .aoi_files import aoi_polygon
from .ground_truth import data_dir
from .ground_truth_heldout import (
    AFFECTED,
    COMMERCIAL,
    DESTROYED,
    GRADE,
    LA,
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

#: no threshold may sit closer than this to a distance it separates (metres)
CLEARANCE = 30.0


def assert_clear(dist: np.ndarray, threshold: float, keep: np.ndarray | None = None) -> None:
    """Every (kept) distance is at least ``CLEARANCE`` from ``threshold``: a count that a projection's
    few metres could flip is no fair question."""
    values = np.asarray(dist, dtype=float) if keep is None else np.asarray(dist, dtype=float)[keep]
    close = values[np.abs(values - threshold) < CLEARANCE]
    assert close.size == 0, f"distances {close.tolist()} within {CLEARANCE} m of the threshold {threshold}"


def km2(geometry: shapely.Geometry) -> float:
    return round(float(shapely.area(geometry)) / 1e6, 2)


def hectares(geometry: shapely.Geometry) -> float:
    return round(float(shapely.area(geometry)) / 1e4, 1)


def clipped_km(lines: gpd.GeoDataFrame, area: shapely.Geometry, epsg: int) -> float:
    """Length of ``lines`` inside ``area`` (km)."""
    return round(float(shapely.length(shapely.intersection(geoms(lines, epsg), area)).sum()) / 1000, 2)


def projected_aoi(name: str, epsg: int) -> shapely.Geometry:
    """An AOI file's polygon (``bench/aoi_files.py``) in ``epsg``, prepared."""
    area = gpd.GeoSeries([aoi_polygon(name)], crs=4326).to_crs(epsg).iloc[0]
    shapely.prepare(area)
    return area


# ---------------------------------------------------------------------------------------- the fires
def eaton(layers: Layers) -> dict:
    dins = layers("eaton_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed, damaged = dmg == DESTROYED, dmg != NONE
    schools, utility = kind == "School", kind == UTILITY
    one_story_commercial = kind == COMMERCIAL[0]
    outside = ~touching(dins, layers.area("eaton_perimeter", LA), LA)

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, layers.area("eaton_perimeter", LA), LA)
    assert bool((la.STATUS[d <= 12_000] == "OPEN").all())
    acute = (la.TYPE == "GENERAL ACUTE CARE").to_numpy()
    psychiatric = (la.TYPE == "PSYCHIATRIC").to_numpy()
    helipad = (la.HELIPAD == "Y").to_numpy()
    for threshold in (3000, 5000, 6000):
        assert_clear(d, threshold)
    assert_clear(d, 7500, keep=psychiatric)
    within5 = d <= 5000
    assert bool((la.BEDS[within5] > 0).all())  # no unknown (-999) bed count in the sum
    return {
        "outbuildings_destroyed": int((utility & destroyed).sum()),
        "schools_total": int(schools.sum()),
        "schools_by_grade": tally(dmg[schools].map(GRADE)),
        "schools_no_damage": int((schools & ~damaged).sum()),
        "damaged": int(damaged.sum()),
        "damaged_by_type": tally(kind[damaged]),
        "affected_or_minor": int(dmg.isin([AFFECTED, MINOR]).sum()),
        "outside_perimeter": int(outside.sum()),
        "outside_perimeter_by_grade": tally(dmg[outside].map(GRADE)),
        "outbuildings_pct_of_damaged": pct((utility & damaged).sum(), damaged.sum()),
        "one_story_commercial_destroyed": int((one_story_commercial & destroyed).sum()),
        "one_story_commercial_no_damage": int((one_story_commercial & ~damaged).sum()),
        "hospitals_within_3km": ranked(la.NAME, d, keep=d <= 3000),
        "helipad_hospitals_within_6km": ranked(la.NAME, d, keep=helipad & (d <= 6000)),
        "beds_within_5km": int(la.BEDS[within5].sum()),
        "hospitals_within_5km": int(within5.sum()),
        "nearest_acute_2": ranked(la.NAME, d, keep=acute, k=2),
        "psychiatric_within_7500m": ranked(la.NAME, d, keep=psychiatric & (d <= 7500)),
    }


def palisades(layers: Layers) -> dict:
    dins = layers("palisades_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed, damaged = dmg == DESTROYED, dmg != NONE
    standing = damaged & ~destroyed
    motor, infra = kind == "Motor Home", kind == "Infrastructure"
    commercial, multi = kind.isin(COMMERCIAL), kind.isin(MULTI_FAMILY)
    one_story_sfr = kind == SINGLE_FAMILY[0]

    hull = shapely.union_all(geoms(dins[destroyed], LA)).convex_hull
    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, hull, LA)
    trauma = (la.TRAUMA.fillna("NOT AVAILABLE") != "NOT AVAILABLE").to_numpy()
    return {
        "motor_homes_total": int(motor.sum()),
        "motor_homes_destroyed": int((motor & destroyed).sum()),
        "infrastructure_total": int(infra.sum()),
        "infrastructure_by_grade": tally(dmg[infra].map(GRADE)),
        "outbuildings_pct_of_destroyed": pct((kind == UTILITY)[destroyed].sum(), destroyed.sum()),
        "commercial_destroyed": int((commercial & destroyed).sum()),
        "commercial_no_damage": int((commercial & ~damaged).sum()),
        "nearest_trauma_centre": ranked(la.NAME, d, keep=trauma, k=1),
        "standing_damaged": int(standing.sum()),
        "standing_damaged_by_type": tally(kind[standing]),
        "one_story_sfr_destroyed_pct": pct((one_story_sfr & destroyed).sum(), one_story_sfr.sum()),
        "multi_family_destroyed": int((multi & destroyed).sum()),
        "multi_family_destroyed_pct": pct((multi & destroyed).sum(), multi.sum()),
    }


def comparative(layers: Layers) -> dict:
    out: dict[str, float] = {}
    for fire in ("eaton", "palisades"):
        dins = layers(f"{fire}_dins")
        schools = dins.STRUCTURETYPE == "School"
        out[fire] = pct((schools & (dins.DAMAGE == DESTROYED)).sum(), schools.sum())
    return {"schools_destroyed_pct": out}


def fire_aois(layers: Layers) -> dict:
    """Inside the two fire AOI files (the DINS points their polygons intersect)."""
    out: dict[str, dict] = {}
    for name, key in (
        ("west_altadena_area.geojson", "eaton_dins"),
        ("palisades_village_aoi.geojson", "palisades_dins"),
    ):
        area = projected_aoi(name, LA)
        dins = layers(key)
        inside = dins[touching(dins, area, LA)]
        dmg, kind = inside.DAMAGE, inside.STRUCTURETYPE
        schools = kind == "School"
        out[name.split(".")[0]] = {
            "area_ha": hectares(area),
            "damaged_not_destroyed": int(((dmg != NONE) & (dmg != DESTROYED)).sum()),
            "damaged_pct": pct((dmg != NONE).sum(), len(inside)),
            "single_family_destroyed": int((kind.isin(SINGLE_FAMILY) & (dmg == DESTROYED)).sum()),
            "schools": int(schools.sum()),
            "schools_destroyed": int((schools & (dmg == DESTROYED)).sum()),
        }
    return out


# --------------------------------------------------------------------------------------------- Maui
def lahaina(layers: Layers) -> dict:
    burn = layers.area("lahaina_burn", MAUI)
    labels = layers("lahaina_labels")
    intact = (labels["class"] == "Building").to_numpy()
    maui = hospitals(layers, "HI", "MAUI")
    return {
        "intact_labels_outside_burn": int((intact & ~touching(labels, burn, MAUI)).sum()),
        "intact_labels_area_m2": round(float(shapely.area(shapely.union_all(geoms(labels[intact], MAUI)))), 1),
        "nearest_hospitals_2": ranked(maui.NAME, metres(maui, burn, MAUI), k=2),
    }


# ------------------------------------------------------------------------------------------ Valencia
def valencia(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    aoi03 = layers.area("valencia_aoi03", VALENCIA)
    health = layers("valencia_health")
    names = health.equipamien.astype(str)
    upper = names.str.upper()
    d = metres(health, flood, VALENCIA)
    hospital = upper.str.startswith("HOSPITAL").to_numpy()
    consultorio = upper.str.startswith("CONSULTORIO").to_numpy()
    speciality = upper.str.startswith("CENTRO DE ESPECIALIDADES").to_numpy()
    assert_clear(d, 600)
    assert_clear(d, 750)
    assert_clear(d, 2000, keep=hospital)
    assert_clear(d, 4000, keep=consultorio)
    return {
        "health_within_600m": ranked(names, d, keep=d <= 600),
        "health_within_750m_pct": pct((d <= 750).sum(), len(health)),
        "hospitals_beyond_2km": ranked(names, d, keep=hospital & (d > 2000)),
        "consultorios_beyond_4km": ranked(names, d, keep=consultorio & (d > 4000)),
        "nearest_speciality_centre": ranked(names, d, keep=speciality, k=1),
        "flood_pct_in_aoi03": pct(flood.intersection(aoi03).area, flood.area),
    }


def catarroja(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    pts, lines, polys = layers("catarroja_points"), layers("catarroja_lines"), layers("catarroja_polygons")

    towers = pts[pts.power == "tower"]
    towers_in = touching(towers, flood, VALENCIA)
    stops = pts[pts.highway == "bus_stop"].reset_index(drop=True)
    stop_d = metres(stops, flood, VALENCIA)
    assert_clear(stop_d, 200)
    museums = pd.concat([pts[pts.tourism == "museum"], polys[polys.tourism == "museum"]])
    substation = polys[polys.power == "substation"]
    roads = lines[lines.highway.notna()]
    roads_in = touching(roads, flood, VALENCIA)
    footprints = shapely.union_all(geoms(polys[polys.building.notna()], VALENCIA))
    churches = polys[polys.amenity == "place_of_worship"].reset_index(drop=True)
    police = pts[pts.amenity == "police"]
    police_d = float(metres(police, flood, VALENCIA).min())

    public = layers("catarroja_public")
    public_d = metres(public, flood, VALENCIA)
    assert_clear(public_d, 250)
    cultural = public.capa == "Centros culturales"
    return {
        "towers_in_flood": int(towers_in.sum()),
        "any_tower_outside": bool((~towers_in).any()),
        "bus_stops_nearest_3": ranked(stops["name"], stop_d, k=3),
        "bus_stops_beyond_200m": int((stop_d > 200).sum()),
        "motorway_km_in_flood": clipped_km(lines[lines.highway == "motorway"], flood, VALENCIA),
        "ditch_km_in_flood": clipped_km(lines[lines.waterway == "ditch"], flood, VALENCIA),
        "museums_in_flood": listing(museums["name"][touching(museums, flood, VALENCIA)]),
        "substation_in_flood": bool(touching(substation, flood, VALENCIA).any()),
        "roads_in_flood": int(roads_in.sum()),
        "roads_in_flood_by_highway": tally(roads.highway[roads_in]),
        "building_ha_in_flood": hectares(shapely.intersection(footprints, flood)),
        "churches": ranked(churches["name"], metres(churches, flood, VALENCIA)),
        "police_in_flood": bool(police_d == 0.0),
        "police_distance_m": round(police_d, 1),
        "public_beyond_250m": ranked(public.titulo, public_d, keep=public_d > 250),
        "public_cultural_eur": round(sum(euros(v) for v in public.val_dany[cultural]), 2),
        "public_cultural": int(cultural.sum()),
    }


def catarroja_sketch(layers: Layers) -> dict:
    """Inside the Catarroja AOI file: OSM building footprints, those the flood reaches, the flooded area."""
    flood = layers.area("valencia_flood", VALENCIA)
    area = projected_aoi("catarroja_east_sketch.geojson", VALENCIA)
    polys = layers("catarroja_polygons")
    buildings = polys[polys.building.notna()]
    inside = touching(buildings, area, VALENCIA)
    wet = touching(buildings, flood, VALENCIA)
    flooded = shapely.intersection(area, flood)
    return {
        "buildings": int(inside.sum()),
        "buildings_flooded": int((inside & wet).sum()),
        "flooded_km2": km2(flooded),
        "flooded_pct": pct(shapely.area(flooded), shapely.area(area)),
    }


def heldout3(root: Path | None = None) -> dict:
    """Every expected value of ``bench/heldout3.json``, under one ``heldout3`` key."""
    layers = Layers(root or data_dir())
    aoi = fire_aois(layers)
    aoi["catarroja_east_sketch"] = catarroja_sketch(layers)
    values = {
        "eaton": eaton(layers),
        "palisades": palisades(layers),
        "comparative": comparative(layers),
        "aoi": aoi,
        "lahaina": lahaina(layers),
        "valencia": valencia(layers),
        "catarroja": catarroja(layers),
    }
    return {"heldout3": values}
