"""Expected values of the eighth held-out question split (``bench/heldout8.json``), computed from the sample data.

Like the first seven splits, the questions were written without looking at how GeoFaham reads a question (nothing
under ``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not run on them), and their values
are computed here by code of their own: GeoPandas, shapely and pyproj only, no import of ``geofaham_plugin``. The
reading, the projection and the small table helpers are the first split's (``bench.ground_truth_heldout``), the
threshold guard and the area/length helpers the third split's (``bench.ground_truth_heldout3``), the "nearest ones are
apart" guard and the Palisades hull the fourth split's (``bench.ground_truth_heldout4``), the AOI edge guard and the
"firmly inside or outside" guard (``unsure``) the sixth split's (``bench.ground_truth_heldout6``), the label-size
guard and the "farthest is apart" guard the seventh split's (``bench.ground_truth_heldout7``), imported, not copied.
``expected_values.compute`` stores the result under ``heldout8`` in ``bench/expected.json`` (``python -m bench
ground-truth`` regenerates it).

Definitions (each expectation's description repeats the one it uses):

* DINS ``DAMAGE`` as published: ``No Damage`` (none, "came through clean"), ``Affected (1-9%)`` (light, "merely
  scorched"), ``Minor (10-25%)``, ``Major (26-50%)``, ``Destroyed (>50%)``; **damaged** = any of the last four; **not
  destroyed** = every other grade, ``No Damage`` included. A structure is one DINS point; the Eaton layer is the 14
  January snapshot (5,805 points), the Palisades layer the final one (11,988).
* **structure types** as published: single-family homes = Single Family Residence Single and Multi Story
  ("one-storey" and "two or more storeys"); apartment buildings = Multi Family Residence Single / Multi Story;
  mobile homes = Mobile Home Single, Double and Triple Wide; motor homes = ``Motor Home`` (not a mobile home);
  commercial = Commercial Building Single and Multi Story (Mixed Commercial/Residential left out); outbuildings =
  ``Utility Misc Structure``; churches = ``Church``; schools = ``School``.
* **inside** a polygon: the feature intersects it; **outside** / **dry**: the rest. DINS points in an AOI file: none
  of the points a question counts lies within 10 m of the polygon's edge (``assert_off_edge``).
* **distances**: shortest planar distance between the feature and the polygon in the event's projected CRS
  (EPSG:26911 Los Angeles, EPSG:32604 Maui, EPSG:25830 Valencia), metres; 0 inside. "Within X" is ``<= X``,
  "farther than X" is ``> X``. Every threshold is at least 30 m from every distance it separates (``assert_clear``),
  every "nearest" / "farthest" at least 30 m apart from the next candidate (``assert_apart``, ``farthest_apart``),
  and every "inside the flood" at least 30 m from flipping (``assert_firm``, on ``unsure``).
* **hospitals** (Los Angeles, Maui): the HIFLD file's rows with ``STATE == 'CA'`` and ``COUNTY == 'LOS ANGELES'``,
  or ``STATE == 'HI'`` and ``COUNTY == 'MAUI'``; every row counted here is OPEN and has a known ``BEDS``. The Eaton
  fire's area is the adjusted perimeter; the Palisades fire's, with no perimeter in the data, the convex hull of its
  Destroyed DINS points. ``OWNER``, ``TYPE``, ``HELIPAD`` and ``TRAUMA`` as published; a trauma centre has a
  ``TRAUMA`` other than ``NOT AVAILABLE``; a psychiatric unit has ``TYPE == 'PSYCHIATRIC'``.
* València health facilities: ``idsubclase`` as published (13 centro de salud, 14 hospital, 18 consultorio, 19
  centro de especialidades, empty for 8); ``telefono`` empty for 2.
* Catarroja OSM: the three layers of the extract, filtered on the tag the question names; lengths of lines (whole, or
  clipped to the flood); areas of the union of the polygons (clipped to the flood or the AOI); a feature counts as
  flooded when it intersects the flood polygon.
* Catarroja recovery plan: the municipal public-buildings file; ``val_dany`` and ``subv_apro`` read as euros
  (missing or not a figure: 0); "valued" is a non-empty ``val_dany``; ``direccion`` and ``estado`` as published.
* Lahaina labels: ``class`` as published; footprint areas after ``make_valid`` (EPSG:32604); no label area lies
  within 2 % of a size cut (``assert_sizes_clear``).
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
from .ground_truth_heldout6 import assert_off_edge, unsure
from .ground_truth_heldout7 import assert_sizes_clear, farthest_apart

MOTOR_HOME = "Motor Home"
#: a hectare in square metres ("a tenth of a hectare" is 1,000 m²)
HECTARE = 10_000.0


def one_of(n: int, index: int) -> np.ndarray:
    """A mask keeping one row (for ``ranked`` of a single chosen feature)."""
    return np.arange(n) == index


def open_with_beds(la: pd.DataFrame, near: np.ndarray) -> None:
    """Every hospital a question may count is OPEN and has a known BEDS (not the -999 of unknown)."""
    assert bool((la.STATUS[near] == "OPEN").all()) and bool((la.BEDS[near] > 0).all())


def assert_firm(features: np.ndarray, area: shapely.Geometry) -> None:
    """Every feature is at least 30 m inside ``area`` or 30 m off it (the sixth split's ``unsure``, which shrinks the
    area once rather than once per feature as ``assert_all_firm`` does)."""
    shaky = unsure(features, area)
    assert not shaky.any(), f"{int(shaky.sum())} features within 30 m of flipping in or out"


def wet_share(lines: pd.DataFrame, area: shapely.Geometry) -> float:
    """Percent of the lines' whole length that lies inside ``area`` (unrounded lengths)."""
    g = geoms(lines, VALENCIA)
    return pct(shapely.length(shapely.intersection(g, area)).sum(), shapely.length(g).sum())


def share_within(part: shapely.Geometry, whole: shapely.Geometry) -> float:
    return pct(shapely.area(part), shapely.area(whole))


# ---------------------------------------------------------------------------------------- the fires
def eaton(layers: Layers) -> dict:
    dins = layers("eaton_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    none = (dmg == NONE).to_numpy()
    churches = (kind == "Church").to_numpy()
    assert set(dmg[churches]) <= {NONE, DESTROYED}  # every church either lost or untouched: two figures cover it
    commercial = kind.isin(COMMERCIAL).to_numpy()
    houses = kind.isin(SINGLE_FAMILY).to_numpy()
    minor_houses = houses & (dmg == MINOR).to_numpy()

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, layers.area("eaton_perimeter", LA), LA)
    open_with_beds(la, d <= 11_000)
    nonprofit = (la.OWNER == "NON-PROFIT").to_numpy()
    no_pad = (la.HELIPAD == "N").to_numpy()
    assert_apart(d, nonprofit, 1)
    assert_clear(d, 7000, keep=no_pad)
    assert_clear(d, 10_000)
    within10 = d <= 10_000
    farthest_apart(d, within10)
    far = int(np.argmax(np.where(within10, d, -1.0)))
    return {
        "multi_story_sfr_affected": int(((kind == SINGLE_FAMILY[1]) & (dmg == AFFECTED)).sum()),
        "sfr_minor": int(minor_houses.sum()),
        "sfr_minor_by_type": tally(kind[minor_houses]),
        "outbuildings_pct_of_inspected": pct((kind == UTILITY).sum(), len(dins)),
        "churches_destroyed": int((churches & (dmg == DESTROYED).to_numpy()).sum()),
        "churches_no_damage": int((churches & none).sum()),
        "commercial_no_damage": int((commercial & none).sum()),
        "commercial_no_damage_pct": pct((commercial & none).sum(), commercial.sum()),
        "one_story_sfr_affected": int(((kind == SINGLE_FAMILY[0]) & (dmg == AFFECTED)).sum()),
        "nonprofit_nearest": ranked(la.NAME, d, keep=nonprofit, k=1),
        "farthest_within_10km": ranked(la.NAME, d, keep=one_of(len(la), far)),
        "no_helipad_within_7km": ranked(la.NAME, d, keep=no_pad & (d <= 7000)),
    }


def palisades(layers: Layers) -> dict:
    dins = layers("palisades_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = (dmg == DESTROYED).to_numpy()
    none = (dmg == NONE).to_numpy()
    houses = kind.isin(SINGLE_FAMILY).to_numpy()
    major_houses = houses & (dmg == MAJOR).to_numpy()
    tall_flats = (kind == MULTI_FAMILY[1]).to_numpy()
    motor = (kind == MOTOR_HOME).to_numpy()
    light_commercial = kind.isin(COMMERCIAL).to_numpy() & dmg.isin([AFFECTED, MINOR]).to_numpy()

    hull = palisades_hull(layers)
    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, hull, LA)
    open_with_beds(la, d <= 13_000)
    federal = (la.OWNER == "GOVERNMENT - FEDERAL").to_numpy()
    trauma = (la.TRAUMA.fillna("NOT AVAILABLE") != "NOT AVAILABLE").to_numpy()
    assert_apart(d, federal, 1)
    assert_clear(d, 12_000, keep=trauma)
    return {
        "churches_not_destroyed": int(((kind == "Church").to_numpy() & ~destroyed).sum()),
        "sfr_major": int(major_houses.sum()),
        "sfr_major_by_type": tally(kind[major_houses]),
        "not_single_family_destroyed": int((~houses & destroyed).sum()),
        "multi_story_flats_no_damage_pct": pct((tall_flats & none).sum(), tall_flats.sum()),
        "outbuildings_pct_of_no_damage": pct(((kind == UTILITY).to_numpy() & none).sum(), none.sum()),
        "motor_homes": int(motor.sum()),
        "motor_homes_by_grade": tally(dmg[motor].map(GRADE)),
        "commercial_light_damage": int(light_commercial.sum()),
        "federal_nearest": ranked(la.NAME, d, keep=federal, k=1),
        "trauma_within_12km": ranked(la.NAME, d, keep=trauma & (d <= 12_000)),
    }


def comparative(layers: Layers) -> dict:
    keys = (
        "helipad_within_7km",
        "multi_story_sfr_pct_of_inspected",
        "beds_within_5km",
        "multi_story_commercial_destroyed",
        "not_psychiatric_within_7500m",
        "multi_story_flats_destroyed",
        "schools_destroyed_pct",
        "multi_story_sfr_minor_or_major",
    )
    out: dict[str, dict] = {k: {} for k in keys}
    la = hospitals(layers, "CA", "LOS ANGELES")
    helipad = (la.HELIPAD == "Y").to_numpy()
    not_psychiatric = (la.TYPE != "PSYCHIATRIC").to_numpy()
    areas = {"eaton": layers.area("eaton_perimeter", LA), "palisades": palisades_hull(layers)}
    for fire in ("eaton", "palisades"):
        dins = layers(f"{fire}_dins")
        dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
        tall = kind == SINGLE_FAMILY[1]
        schools = kind == "School"
        d = metres(la, areas[fire], LA)
        open_with_beds(la, d <= 8000)
        assert_clear(d, 7000, keep=helipad)
        assert_clear(d, 5000)
        assert_clear(d, 7500)
        out["helipad_within_7km"][fire] = int((helipad & (d <= 7000)).sum())
        out["multi_story_sfr_pct_of_inspected"][fire] = pct(tall.sum(), len(dins))
        out["beds_within_5km"][fire] = int(la.BEDS[d <= 5000].sum())
        out["multi_story_commercial_destroyed"][fire] = int(((kind == COMMERCIAL[1]) & (dmg == DESTROYED)).sum())
        out["not_psychiatric_within_7500m"][fire] = int((not_psychiatric & (d <= 7500)).sum())
        out["multi_story_flats_destroyed"][fire] = int(((kind == MULTI_FAMILY[1]) & (dmg == DESTROYED)).sum())
        out["schools_destroyed_pct"][fire] = pct((schools & (dmg == DESTROYED)).sum(), schools.sum())
        out["multi_story_sfr_minor_or_major"][fire] = int((tall & dmg.isin([MINOR, MAJOR])).sum())
    return out


def fire_aois(layers: Layers) -> dict:
    """DINS points inside the Eaton and Palisades AOI files, and hospitals near them."""
    la = hospitals(layers, "CA", "LOS ANGELES")

    west = projected_aoi("west_altadena_area.geojson", LA)
    eaton = layers("eaton_dins")
    wheeled = eaton[eaton.STRUCTURETYPE.isin([*MOBILE_HOMES, MOTOR_HOME])]
    tall = eaton[eaton.STRUCTURETYPE.isin(SINGLE_FAMILY[1:])]
    assert_off_edge(geoms(wheeled, LA), west)
    assert_off_edge(geoms(tall, LA), west)
    wheeled_in = wheeled[touching(wheeled, west, LA)]
    tall_in = tall[touching(tall, west, LA)]

    east = projected_aoi("east_altadena_kinneloa.geojson", LA)
    assert_off_edge(geoms(eaton, LA), east)
    inside = eaton[touching(eaton, east, LA)]
    schools = inside[inside.STRUCTURETYPE == "School"]
    assert set(schools.DAMAGE) <= {NONE, DESTROYED}
    d_east = metres(la, east, LA)
    open_with_beds(la, d_east <= 6000)
    assert_clear(d_east, 5000)

    village = projected_aoi("palisades_village_aoi.geojson", LA)
    pal = layers("palisades_dins")
    shops = pal[pal.STRUCTURETYPE.isin(COMMERCIAL[1:])]
    assert_off_edge(geoms(shops, LA), village)
    shops_in = shops[touching(shops, village, LA)]
    d_village = metres(la, village, LA)
    open_with_beds(la, d_village <= 6000)
    assert_clear(d_village, 5500)
    near_village = d_village <= 5500
    return {
        "west_altadena_area": {
            "wheeled_homes_destroyed": int((wheeled_in.DAMAGE == DESTROYED).sum()),
            "wheeled_homes": len(wheeled_in),
            "multi_story_sfr_damaged": int((tall_in.DAMAGE != NONE).sum()),
        },
        "east_altadena_kinneloa": {
            "destroyed_pct": pct((inside.DAMAGE == DESTROYED).sum(), len(inside)),
            "schools_destroyed": int((schools.DAMAGE == DESTROYED).sum()),
            "schools_no_damage": int((schools.DAMAGE == NONE).sum()),
            "hospitals_within_5km": ranked(la.NAME, d_east, keep=d_east <= 5000),
        },
        "palisades_village_aoi": {
            "multi_story_commercial_destroyed_pct": pct((shops_in.DAMAGE == DESTROYED).sum(), len(shops_in)),
            "hospitals_within_5500m": ranked(la.NAME, d_village, keep=near_village),
            "beds_within_5500m": int(la.BEDS[near_village].sum()),
        },
    }


# --------------------------------------------------------------------------------------------- Maui
def lahaina(layers: Layers) -> dict:
    labels = layers("lahaina_labels")
    cls = labels["class"].to_numpy()
    areas = np.asarray(shapely.area(geoms(labels, MAUI)), dtype=float)
    damaged, intact, background = cls == "Damaged Building", cls == "Building", cls == "Background"
    assert_sizes_clear(areas[intact], HECTARE / 10)
    assert_sizes_clear(areas[damaged], 300)
    assert_sizes_clear(areas[background], HECTARE)
    smallest = np.sort(areas[damaged])
    assert smallest[1] - smallest[0] > 0.05 * smallest[1]  # one smallest damaged label, well below the next

    burn = layers.area("lahaina_burn", MAUI)
    maui = hospitals(layers, "HI", "MAUI")
    dm = metres(maui, burn, MAUI)
    open_with_beds(maui, np.ones(len(maui), dtype=bool))
    assert_clear(dm, 25_000)
    critical = (maui.TYPE == "CRITICAL ACCESS").to_numpy()
    farthest_apart(dm, critical)
    far = int(np.argmax(np.where(critical, dm, -1.0)))
    return {
        "intact_over_tenth_ha": int((intact & (areas > HECTARE / 10)).sum()),
        "damaged_under_300m2": int((damaged & (areas < 300)).sum()),
        "smallest_damaged_m2": round(float(smallest[0]), 1),
        "labels": len(labels),
        "labels_by_class": tally(labels["class"]),
        "background_over_1ha": int((background & (areas > HECTARE)).sum()),
        "within_25km": ranked(maui.NAME, dm, keep=dm <= 25_000),
        "beds_within_25km": int(maui.BEDS[dm <= 25_000].sum()),
        "critical_access_farthest": ranked(maui.NAME, dm, keep=one_of(len(maui), far)),
    }


# ------------------------------------------------------------------------------------------ Valencia
def valencia(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    health = layers("valencia_health")
    names = health.equipamien.astype(str)
    sub = health.idsubclase
    d = metres(health, flood, VALENCIA)
    assert_firm(geoms(health, VALENCIA), flood)
    no_phone = health.telefono.isna().to_numpy()
    hospital = (sub == 14).to_numpy()
    speciality = (sub == 19).to_numpy()
    consultorio = (sub == 18).to_numpy()
    assert_clear(d, 900)
    assert_clear(d, 2500, keep=speciality)
    assert_clear(d, 5000, keep=consultorio)
    farthest_apart(d, hospital)
    far = int(np.argmax(np.where(hospital, d, -1.0)))
    return {
        "no_phone": ranked(names, d, keep=no_phone),
        "within_900m": int((d <= 900).sum()),
        "hospital_farthest": ranked(names, d, keep=one_of(len(health), far)),
        "speciality_within_2500m": ranked(names, d, keep=speciality & (d <= 2500)),
        "consultorios_beyond_5km": ranked(names, d, keep=consultorio & (d > 5000)),
    }


def valencia_south_area(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    area = projected_aoi("valencia_south_area.geojson", VALENCIA)
    health = layers("valencia_health")
    assert_off_edge(geoms(health, VALENCIA), area)
    d = metres(health, flood, VALENCIA)
    dry_inside = touching(health, area, VALENCIA) & (d > 0)
    assert_apart(d, dry_inside, 1)
    return {"dry_nearest": ranked(health.equipamien, d, keep=dry_inside, k=1)}


def catarroja_sketch(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    area = projected_aoi("catarroja_east_sketch.geojson", VALENCIA)
    pts, polys = layers("catarroja_points"), layers("catarroja_polygons")
    stops = pts[pts.railway == "stop"]
    assert_off_edge(geoms(stops, VALENCIA), area)
    stops_in = stops[touching(stops, area, VALENCIA)]
    assert_firm(geoms(stops_in, VALENCIA), flood)
    industry = shapely.intersection(shapely.union_all(geoms(polys[polys.landuse == "industrial"], VALENCIA)), area)
    industry_wet = shapely.intersection(industry, flood)
    return {
        "rail_stops": len(stops_in),
        "rail_stops_any_flooded": bool(touching(stops_in, flood, VALENCIA).any()),
        "industrial_ha_flooded": hectares(industry_wet),
        "industrial_pct_flooded": share_within(industry_wet, industry),
    }


def catarroja(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    lines, polys = layers("catarroja_lines"), layers("catarroja_polygons")

    def length_km(frame: pd.DataFrame) -> float:
        return float(shapely.length(geoms(frame, VALENCIA)).sum()) / 1000

    def union(frame: pd.DataFrame) -> shapely.Geometry:
        return shapely.union_all(geoms(frame, VALENCIA))

    trunk = lines[lines.highway == "trunk"]
    assert_firm(geoms(trunk, VALENCIA), flood)
    oneway = lines[lines.oneway == "yes"]
    dirt = lines[lines.surface == "dirt"]
    asphalt = lines[lines.surface == "asphalt"]
    secondary = lines[lines.highway == "secondary"]
    assert_firm(geoms(secondary, VALENCIA), flood)
    secondary_wet = touching(secondary, flood, VALENCIA)
    schools = union(polys[polys.amenity == "school"])
    schools_wet = shapely.intersection(schools, flood)
    water = union(polys[polys.natural == "water"])
    water_wet = shapely.intersection(water, flood)
    marsh = union(polys[polys.natural == "wetland"])
    marsh_wet = shapely.intersection(marsh, flood)

    public = layers("catarroja_public")
    damage = public.val_dany.map(euros).to_numpy(dtype=float)
    subsidy = public.subv_apro.map(euros).to_numpy(dtype=float)
    culture = (public.capa == "Centros culturales").to_numpy()
    valued_schools = (public.capa == "Centros educativos").to_numpy() & public.val_dany.notna().to_numpy()
    museum = (public.titulo == "Museo Antonia Mir").to_numpy()
    assert museum.sum() == 1
    cami_real = public.direccion.fillna("").str.contains("Camí Real", regex=False).to_numpy()
    costliest = int(np.argmax(damage))
    assert np.sort(damage)[-2] < damage[costliest]
    return {
        "trunk_km": round(length_km(trunk), 2),
        "trunk_any_flooded": bool(touching(trunk, flood, VALENCIA).any()),
        "oneway_km_in_flood": clipped_km(oneway, flood, VALENCIA),
        "oneway_pct_in_flood": wet_share(oneway, flood),
        "dirt_pct_in_flood": wet_share(dirt, flood),
        "asphalt_pct_in_flood": wet_share(asphalt, flood),
        "secondary_in_flood": int(secondary_wet.sum()),
        "secondary_dry": int((~secondary_wet).sum()),
        "school_grounds_ha_in_flood": hectares(schools_wet),
        "school_grounds_pct_in_flood": share_within(schools_wet, schools),
        "water_ha_in_flood": hectares(water_wet),
        "water_pct_in_flood": share_within(water_wet, water),
        "wetland_km2_in_flood": km2(marsh_wet),
        "wetland_pct_in_flood": share_within(marsh_wet, marsh),
        "public_culture": int(culture.sum()),
        "public_culture_by_estado": tally(public.estado[culture]),
        "public_museum_uncovered_eur": round(float(damage[museum].sum() - subsidy[museum].sum()), 2),
        "public_schools_valued": int(valued_schools.sum()),
        "public_schools_valued_eur": round(float(damage[valued_schools].sum()), 2),
        "public_cami_real": listing(public.titulo[cami_real]),
        "public_costliest": [str(public.titulo.iloc[costliest])],
        "public_costliest_eur": round(float(damage[costliest]), 2),
    }


def heldout8(root: Path | None = None) -> dict:
    """Every expected value of ``bench/heldout8.json``, under one ``heldout8`` key."""
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
    return {"heldout8": values}
