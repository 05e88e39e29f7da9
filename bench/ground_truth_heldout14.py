"""Expected values of the fourteenth held-out question split (``bench/heldout14.json``), computed from the sample data.

Like the first thirteen splits, the questions were written without looking at how GeoFaham reads a question (nothing
under ``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not run on them), and their values
are computed here by code of their own: GeoPandas, shapely and pyproj only, no import of ``geofaham_plugin``. The
reading, the projection and the small table helpers are the first split's (``bench.ground_truth_heldout``), the
threshold guard and the area/length helpers the third split's (``bench.ground_truth_heldout3``), the Palisades hull
the fourth split's (``bench.ground_truth_heldout4``), the AOI edge guard the sixth split's
(``bench.ground_truth_heldout6``), the "farthest is apart" guard the seventh split's (``bench.ground_truth_heldout7``),
the "firmly inside or outside" guard, the open-with-beds guard, the one-row mask and the wet-length share the eighth
split's (``bench.ground_truth_heldout8``), the two-decimal hectares the ninth split's (``bench.ground_truth_heldout9``),
the "one nearest" helper the tenth split's (``bench.ground_truth_heldout10``), the "largest" and "smallest" guards
the eleventh split's (``bench.ground_truth_heldout11``), the kilometre rounding and the Level I trauma reading the
twelfth split's (``bench.ground_truth_heldout12``), and the one-row and named-lines lookups the thirteenth split's
(``bench.ground_truth_heldout13``), imported, not copied. ``expected_values.compute`` stores the result under
``heldout14`` in ``bench/expected.json`` (``python -m bench ground-truth`` regenerates it).

Definitions (each expectation's description repeats the one it uses):

* DINS ``DAMAGE`` as published: ``No Damage`` (none, "no damage at all", "untouched"), ``Affected (1-9%)``, ``Minor
  (10-25%)``, ``Major (26-50%)``, ``Destroyed (>50%)`` ("destroyed", "lost", "burned down"); **still standing** = any
  grade but Destroyed; **damaged** = any grade but No Damage; **damaged but standing** = Affected, Minor or Major. A
  structure is one DINS point; the Eaton layer is the 14 January snapshot (5,805 points), the Palisades layer the final
  one (11,988); "inspected" is every point of a layer.
* **structure types** as published: single-family homes = Single Family Residence Single and Multi Story (one-storey =
  Single Story; with an upper floor = Multi Story); apartment buildings = Multi Family Residence Single and Multi
  Story; mobile homes = ``Mobile Home`` Single, Double and Triple Wide (never ``Motor Home``); double-wides = ``Mobile
  Home Double Wide``; commercial buildings = Commercial Building Single and Multi Story (Mixed Commercial/Residential
  left out; one-storey = Single Story); outbuildings = ``Utility Misc Structure``; schools = ``School``; churches =
  ``Church``; infrastructure = ``Infrastructure``.
* **inside** a polygon: the feature intersects it; **outside** / **dry**: the rest. DINS points and health facilities
  counted in an AOI file (or in the EMSR773 AOI03 rectangle) lie at least 10 m from the polygon's edge
  (``assert_off_edge``).
* **distances**: shortest planar distance between the features in the event's projected CRS (EPSG:26911 Los Angeles,
  EPSG:32604 Maui, EPSG:25830 Valencia), metres; 0 inside. "Within X" is ``<= X``. Every threshold is at least 30 m
  from every distance it separates (``assert_clear``), every "nearest" / "farthest" at least 30 m apart from the next
  candidate (``nearest``, ``farthest_apart``), every "largest" / "smallest" ahead of the next (``largest``,
  ``smallest``), and every "inside the flood" at least 30 m from flipping (``assert_firm``).
* **hospitals** (Los Angeles, Maui): the HIFLD file's rows with ``STATE == 'CA'`` and ``COUNTY == 'LOS ANGELES'``,
  or ``STATE == 'HI'`` and ``COUNTY == 'MAUI'``; every row counted or summed here is OPEN and has a known ``BEDS``
  (``open_with_beds``); psychiatric ``D/P APH`` units are hospitals like any other row. The Eaton fire's area is the
  adjusted perimeter (unioned); the Palisades fire's, with no perimeter in the data, the convex hull of its Destroyed
  DINS points. Non-profit = ``OWNER == 'NON-PROFIT'``; Level I trauma centre = ``TRAUMA`` naming LEVEL I (adult or
  paediatric). Ronald Reagan UCLA is the row named ``RONALD REAGAN UCLA MEDICAL CENTER``, Adventist Health Glendale the
  row so named (not its ``D/P APH`` unit), Maui Memorial the row named ``MAUI MEMORIAL MEDICAL CENTER``.
* València health facilities: all 64 points; consultorios = ``idsubclase`` 18 (every name starting ``CONSULTORIO``),
  centros de especialidades = 19 (every name starting ``CENTRO DE ESPECIALIDADES``); Hospital General Universitario
  the point named ``HOSPITAL GENERAL UNIVERSITARIO``. The AOI03 rectangle is the EMSR773
  ``emsr773_aoi03_extent.geojson`` polygon.
* Catarroja OSM: the three layers of the extract, filtered on the tag or the name the question names; lengths of lines
  clipped to the flood (or to an AOI file); areas of the union of the polygons clipped to the flood; a feature counts
  as flooded when it intersects the flood polygon. Residential streets = ``highway = residential``; farm tracks =
  ``highway = track``; secondary roads = ``highway = secondary`` (not ``secondary_link``); orchards = ``landuse =
  orchard``; building footprints = every polygon with a ``building`` tag; pharmacies = the ``amenity = pharmacy``
  points; the fire station = the ``amenity = fire_station`` polygon (Parc de Bombers de Catarroja); the Avinguda del
  Sud and the Barranc de Xiva are every line so named.
* Catarroja recovery plan: the municipal public-buildings file; ``val_dany`` read as euros (missing, empty or not a
  figure: 0; "89.185 €" is 89,185 euros); a building "has a valuation" when its ``val_dany`` reads above 0; ``capa``
  and ``estado`` as published ("in progress" = ``En ejecución`` only, not ``Obra iniciada``).
* Lahaina: the burn area is the union of the seven burn polygons after ``make_valid``; label footprints are the
  polygons after ``make_valid`` (EPSG:32604), each label on its own (never a union).
* **shares**: percent of the stated denominator, one decimal; **means**: of the stated rows, unrounded inputs."""

from __future__ import annotations

from collections.abc import Callable
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
from .ground_truth_heldout4 import palisades_hull
from .ground_truth_heldout6 import assert_off_edge
from .ground_truth_heldout7 import farthest_apart
from .ground_truth_heldout8 import assert_firm, one_of, open_with_beds, wet_share
from .ground_truth_heldout9 import hectares2
from .ground_truth_heldout10 import nearest
from .ground_truth_heldout11 import largest, smallest
from .ground_truth_heldout12 import km, level_one
from .ground_truth_heldout13 import named_lines, one_row

ONE_STOREY_HOUSES, TALL_HOUSES = SINGLE_FAMILY
DOUBLE_WIDE = MOBILE_HOMES[1]
ONE_STOREY_COMMERCIAL = COMMERCIAL[0]
TALL_FLATS = MULTI_FAMILY[1]
STANDING_DAMAGED = [AFFECTED, MINOR, MAJOR]
NON_PROFIT = "NON-PROFIT"
IN_PROGRESS = "En ejecución"


def destroyed_by_fire(layers: Layers, test: Callable[[pd.DataFrame], pd.Series]) -> dict[str, int]:
    """``{"eaton": n, "palisades": n}``: the DINS points of each fire that pass ``test(frame) -> mask``."""
    return {fire: int(test(layers(f"{fire}_dins")).sum()) for fire in ("eaton", "palisades")}


# ---------------------------------------------------------------------------------------- the fires
def eaton(layers: Layers) -> dict:
    dins = layers("eaton_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed, damaged = dmg == DESTROYED, dmg != NONE
    shops = (kind == ONE_STOREY_COMMERCIAL).to_numpy()
    schools = (kind == "School").to_numpy()
    works = (kind == "Infrastructure").to_numpy()

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, layers.area("eaton_perimeter", LA), LA)
    open_with_beds(la, d <= 8500)
    assert_clear(d, 8000)
    within_8 = d <= 8000
    adventist = one_row(la, "NAME", "ADVENTIST HEALTH GLENDALE")
    return {
        "outbuildings_standing": int(((kind == UTILITY) & ~destroyed).sum()),
        "destroyed_pct_of_damaged": pct(destroyed.sum(), damaged.sum()),
        "one_storey_commercial": int(shops.sum()),
        "one_storey_commercial_by_grade": tally(dmg[shops].map(GRADE)),
        "houses_minor_or_major": int((kind.isin(SINGLE_FAMILY) & dmg.isin([MINOR, MAJOR])).sum()),
        "nearest_non_profit": nearest(la.NAME, d, keep=(la.OWNER == NON_PROFIT).to_numpy()),
        "hospitals_within_8km": int(within_8.sum()),
        "beds_within_8km": int(la.BEDS[within_8].sum()),
        "perimeter_ha": hectares(layers.area("eaton_perimeter", LA)),
        "schools": int(schools.sum()),
        "schools_by_grade": tally(dmg[schools].map(GRADE)),
        "tall_houses_untouched": int(((kind == TALL_HOUSES) & (dmg == NONE)).sum()),
        "adventist_glendale_km": km(d[adventist][0]),
        "infrastructure": int(works.sum()),
        "infrastructure_by_grade": tally(dmg[works].map(GRADE)),
    }


def palisades(layers: Layers) -> dict:
    dins = layers("palisades_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = (dmg == DESTROYED).to_numpy()
    doubles = (kind == DOUBLE_WIDE).to_numpy()
    churches = (kind == "Church").to_numpy()
    low_houses = (kind == ONE_STOREY_HOUSES).to_numpy()
    mobile = kind.isin(MOBILE_HOMES).to_numpy()
    schools = (kind == "School").to_numpy()

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, palisades_hull(layers), LA)
    open_with_beds(la, d <= 8500)
    assert_clear(d, 4000)
    trauma = level_one(la.TRAUMA)
    assert_clear(d, 8000, keep=trauma)
    reagan = one_row(la, "NAME", "RONALD REAGAN UCLA MEDICAL CENTER")
    return {
        "double_wides_destroyed_pct": pct((doubles & destroyed).sum(), doubles.sum()),
        "damaged_standing": int(dmg.isin(STANDING_DAMAGED).sum()),
        "churches": int(churches.sum()),
        "churches_by_grade": tally(dmg[churches].map(GRADE)),
        "within_4km": ranked(la.NAME, d, keep=d <= 4000),
        "reagan_km": km(d[reagan][0]),
        "level_one_within_8km": ranked(la.NAME, d, keep=trauma & (d <= 8000)),
        "one_storey_houses_standing": int((low_houses & ~destroyed).sum()),
        "one_storey_houses_standing_pct": pct((low_houses & ~destroyed).sum(), low_houses.sum()),
        "mobile_homes": int(mobile.sum()),
        "mobile_homes_by_grade": tally(dmg[mobile].map(GRADE)),
        "schools_damaged_pct": pct((schools & (dmg != NONE).to_numpy()).sum(), schools.sum()),
    }


def comparative(layers: Layers) -> dict:
    la = hospitals(layers, "CA", "LOS ANGELES")
    areas = {"eaton": layers.area("eaton_perimeter", LA), "palisades": palisades_hull(layers)}
    lost = {fire: int((layers(f"{fire}_dins").DAMAGE == DESTROYED).sum()) for fire in areas}
    untouched: dict[str, float] = {}
    for fire in areas:
        dins = layers(f"{fire}_dins")
        untouched[fire] = pct((dins.DAMAGE == NONE).sum(), len(dins))
    return {
        "outbuildings_destroyed": destroyed_by_fire(
            layers, lambda f: (f.STRUCTURETYPE == UTILITY) & (f.DAMAGE == DESTROYED)
        ),
        "no_damage_pct": untouched,
        "nearest_hospital": {fire: nearest(la.NAME, metres(la, area, LA)) for fire, area in areas.items()},
        "destroyed_difference": lost["palisades"] - lost["eaton"],
        "mobile_homes_destroyed": destroyed_by_fire(
            layers, lambda f: f.STRUCTURETYPE.isin(MOBILE_HOMES) & (f.DAMAGE == DESTROYED)
        ),
        "apartments_destroyed": destroyed_by_fire(
            layers, lambda f: f.STRUCTURETYPE.isin(MULTI_FAMILY) & (f.DAMAGE == DESTROYED)
        ),
        "schools_untouched": destroyed_by_fire(layers, lambda f: (f.STRUCTURETYPE == "School") & (f.DAMAGE == NONE)),
    }


def fire_aois(layers: Layers) -> dict:
    """DINS points inside the three fire AOI files (of the structure types no point of which lies within 10 m of the
    polygon's edge: every point of the Kinneloa one, multi-storey apartment buildings in the west Altadena one,
    churches in the village one), and the hospital nearest the village one."""
    eaton = layers("eaton_dins")

    def inside(dins: pd.DataFrame, keep: np.ndarray, area: shapely.Geometry) -> pd.DataFrame:
        chosen = dins[keep]
        assert_off_edge(geoms(chosen, LA), area)
        return chosen[touching(chosen, area, LA)]

    east = projected_aoi("east_altadena_kinneloa.geojson", LA)
    kinneloa = inside(eaton, np.ones(len(eaton), dtype=bool), east)
    shops = kinneloa[kinneloa.STRUCTURETYPE.isin(COMMERCIAL)]

    west = projected_aoi("west_altadena_area.geojson", LA)
    flats = inside(eaton, (eaton.STRUCTURETYPE == TALL_FLATS).to_numpy(), west)

    village = projected_aoi("palisades_village_aoi.geojson", LA)
    pal = layers("palisades_dins")
    churches = inside(pal, (pal.STRUCTURETYPE == "Church").to_numpy(), village)
    la = hospitals(layers, "CA", "LOS ANGELES")
    return {
        "east_altadena_kinneloa": {
            "damaged_standing": int(kinneloa.DAMAGE.isin(STANDING_DAMAGED).sum()),
            "commercial": len(shops),
            "commercial_by_grade": tally(shops.DAMAGE.map(GRADE)),
        },
        "west_altadena_area": {
            "tall_apartments": len(flats),
            "tall_apartments_by_grade": tally(flats.DAMAGE.map(GRADE)),
        },
        "palisades_village_aoi": {
            "nearest_hospital": nearest(la.NAME, metres(la, village, LA)),
            "churches_destroyed_pct": pct((churches.DAMAGE == DESTROYED).sum(), len(churches)),
        },
    }


def valencia_aois(layers: Layers) -> dict:
    """The flooded building footprints and residential streets of the Catarroja sketch, and the dry facilities of the
    València AOI file (``valencia`` checks that every facility is firmly inside or outside the flood)."""
    flood = layers.area("valencia_flood", VALENCIA)
    sketch = projected_aoi("catarroja_east_sketch.geojson", VALENCIA)
    wet_sketch = shapely.intersection(sketch, flood)
    lines, polys = layers("catarroja_lines"), layers("catarroja_polygons")
    buildings = shapely.union_all(geoms(polys[polys.building.notna()], VALENCIA))
    in_sketch = shapely.intersection(buildings, sketch)
    wet_buildings = shapely.intersection(buildings, wet_sketch)
    streets = lines[lines.highway == "residential"]

    south = projected_aoi("valencia_south_area.geojson", VALENCIA)
    health = layers("valencia_health")
    assert_off_edge(geoms(health, VALENCIA), south)
    inside_south = touching(health, south, VALENCIA)
    wet = touching(health, flood, VALENCIA)
    return {
        "catarroja_east_sketch": {
            "building_ha_in_flood": hectares2(wet_buildings),
            "building_pct_in_flood": pct(shapely.area(wet_buildings), shapely.area(in_sketch)),
            "residential_km": clipped_km(streets, sketch, VALENCIA),
            "residential_km_in_flood": clipped_km(streets, wet_sketch, VALENCIA),
        },
        "valencia_south_area": {
            "dry_facilities": listing(health.equipamien[inside_south & ~wet]),
        },
    }


# --------------------------------------------------------------------------------------------- Maui
def lahaina(layers: Layers) -> dict:
    burn = layers.area("lahaina_burn", MAUI)
    labels = layers("lahaina_labels")
    damaged = (labels["class"] == "Damaged Building").to_numpy()
    areas = np.asarray(shapely.area(geoms(labels, MAUI)), dtype=float)

    maui = hospitals(layers, "HI", "MAUI")
    d = metres(maui, burn, MAUI)
    open_with_beds(maui, np.ones(len(maui), dtype=bool))
    assert_clear(d, 30_000)
    everyone = np.ones(len(maui), dtype=bool)
    farthest_apart(d, everyone)
    farthest = largest(d, everyone)
    near = d <= 30_000
    memorial = one_row(maui, "NAME", "MAUI MEMORIAL MEDICAL CENTER")
    return {
        "burn_ha": hectares(burn),
        "damaged_labels": int(damaged.sum()),
        "damaged_mean_m2": round(float(areas[damaged].mean()), 1),
        "farthest_hospital": ranked(maui.NAME, d, keep=one_of(len(maui), farthest)),
        "hospitals_within_30km": int(near.sum()),
        "beds_within_30km": int(maui.BEDS[near].sum()),
        "maui_memorial_km": km(d[memorial][0]),
    }


# ------------------------------------------------------------------------------------------ Valencia
def valencia(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    health = layers("valencia_health")
    names = health.equipamien.astype(str)
    sub = health.idsubclase
    d = metres(health, flood, VALENCIA)
    assert_firm(geoms(health, VALENCIA), flood)
    consultorio = (sub == 18).to_numpy()
    specialty = (sub == 19).to_numpy()
    assert int(names.str.startswith("CONSULTORIO").sum()) == int(consultorio.sum())
    assert bool(names[consultorio].str.startswith("CONSULTORIO").all())
    assert int(names.str.startswith("CENTRO DE ESPECIALIDADES").sum()) == int(specialty.sum())
    assert_clear(d, 600)
    assert_clear(d, 2000, keep=specialty)
    general = one_row(health, "equipamien", "HOSPITAL GENERAL UNIVERSITARIO")

    aoi03 = layers.area("valencia_aoi03", VALENCIA)
    assert_off_edge(geoms(health, VALENCIA), aoi03)
    return {
        "dry_within_600m": int(((d > 0) & (d <= 600)).sum()),
        "general_m": round(float(d[general][0]), 1),
        "in_aoi03": int(touching(health, aoi03, VALENCIA).sum()),
        "aoi03_flooded_km2": km2(shapely.intersection(aoi03, flood)),
        "flooded_consultorios": listing(names[consultorio & (d == 0)]),
        "consultorios_mean_m": round(float(d[consultorio].mean()), 1),
        "specialty_within_2km": listing(names[specialty & (d <= 2000)]),
    }


def catarroja(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    pts, lines, polys = layers("catarroja_points"), layers("catarroja_lines"), layers("catarroja_polygons")

    south_avenue = named_lines(lines, "Avinguda del Sud")
    xiva = named_lines(lines, "Barranc de Xiva")
    residential = lines[lines.highway == "residential"]
    tracks = lines[lines.highway == "track"]
    secondary = lines[lines.highway == "secondary"]
    orchards = shapely.union_all(geoms(polys[polys.landuse == "orchard"], VALENCIA))

    station = polys[polys.amenity == "fire_station"]
    pharmacies = pts[pts.amenity == "pharmacy"]
    assert len(station) == 1 and len(pharmacies) == 3
    assert_firm(np.concatenate([geoms(f, VALENCIA) for f in (station, pharmacies)]), flood)
    return {
        "avinguda_sud_km_in_flood": clipped_km(south_avenue, flood, VALENCIA),
        "residential_km_in_flood": clipped_km(residential, flood, VALENCIA),
        "residential_pct_in_flood": wet_share(residential, flood),
        "orchard_ha_in_flood": hectares(shapely.intersection(orchards, flood)),
        "secondary_km_in_flood": clipped_km(secondary, flood, VALENCIA),
        "fire_station_flooded": bool(touching(station, flood, VALENCIA).all()),
        "pharmacy_flooded": bool(touching(pharmacies, flood, VALENCIA).any()),
        "nearest_pharmacy": nearest(pharmacies.name, metres(pharmacies, flood, VALENCIA)),
        "xiva_km_in_flood": clipped_km(xiva, flood, VALENCIA),
        "tracks_pct_in_flood": wet_share(tracks, flood),
    }


def recovery_plan(layers: Layers) -> dict:
    public = layers("catarroja_public")
    damage = public.val_dany.map(euros).to_numpy(dtype=float)
    titles = public.titulo.astype(str)
    schools = (public.capa == "Centros educativos").to_numpy()
    culture = (public.capa == "Centros culturales").to_numpy()
    social = (public.capa == "Centros sociosanitarios").to_numpy()
    running = (public.estado == IN_PROGRESS).to_numpy()
    valued = damage > 0
    cheapest = smallest(damage, schools & valued)
    return {
        "cheapest_school": listing(titles[one_of(len(public), cheapest)]),
        "cheapest_school_eur": round(float(damage[cheapest]), 2),
        "education_unvalued": int((schools & ~valued).sum()),
        "total_damage_eur": round(float(damage.sum()), 2),
        "culture": int(culture.sum()),
        "culture_damage_eur": round(float(damage[culture].sum()), 2),
        "social_valued_mean_eur": round(float(damage[social & valued].mean()), 2),
        "in_progress": int(running.sum()),
        "in_progress_damage_eur": round(float(damage[running].sum()), 2),
    }


def heldout14(root: Path | None = None) -> dict:
    """Every expected value of ``bench/heldout14.json``, under one ``heldout14`` key."""
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
    return {"heldout14": values}
