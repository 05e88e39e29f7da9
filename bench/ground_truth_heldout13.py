"""Expected values of the thirteenth held-out question split (``bench/heldout13.json``), computed from the sample data.

Like the first twelve splits, the questions were written without looking at how GeoFaham reads a question (nothing
under ``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not run on them), and their values
are computed here by code of their own: GeoPandas, shapely and pyproj only, no import of ``geofaham_plugin``. The
reading, the projection and the small table helpers are the first split's (``bench.ground_truth_heldout``), the
threshold guard and the area/length helpers the third split's (``bench.ground_truth_heldout3``), the Palisades hull
the fourth split's (``bench.ground_truth_heldout4``), the AOI edge guard the sixth split's
(``bench.ground_truth_heldout6``), the "farthest is apart" guard the seventh split's (``bench.ground_truth_heldout7``),
the "firmly inside or outside" guard, the open-with-beds guard, the one-row mask and the wet-length share the eighth
split's (``bench.ground_truth_heldout8``), the two-decimal hectares the ninth split's (``bench.ground_truth_heldout9``),
the "one nearest" helper (with the fourth split's "nearest ones are apart" guard inside) the tenth split's
(``bench.ground_truth_heldout10``), the "largest" and "smallest" guards the eleventh split's
(``bench.ground_truth_heldout11``), and the kilometre rounding the twelfth split's (``bench.ground_truth_heldout12``),
imported, not copied. ``expected_values.compute`` stores the result under ``heldout13`` in ``bench/expected.json``
(``python -m bench ground-truth`` regenerates it).

Definitions (each expectation's description repeats the one it uses):

* DINS ``DAMAGE`` as published: ``No Damage`` (none, "no damage at all", "came through untouched"),
  ``Affected (1-9%)`` ("only light damage, one to nine percent"), ``Minor (10-25%)``, ``Major (26-50%)``,
  ``Destroyed (>50%)`` ("destroyed", "burned down", "lost"); **still standing** = any grade but Destroyed; **damaged**
  = any grade but No Damage. A structure is one DINS point; the Eaton layer is the 14 January snapshot (5,805 points),
  the Palisades layer the final one (11,988); "inspected" is every point of a layer.
* **structure types** as published: single-family homes = Single Family Residence Single and Multi Story (one-storey
  = Single Story; two or more storeys = Multi Story); apartment buildings = Multi Family Residence Single and Multi
  Story (one-storey = Single Story); single-wides = ``Mobile Home Single Wide``; triple-wides = ``Mobile Home Triple
  Wide``; motor homes = ``Motor Home``; commercial buildings = Commercial Building Single and Multi Story (Mixed
  Commercial/Residential left out; multi-storey = Multi Story); outbuildings = ``Utility Misc Structure``; schools =
  ``School``; infrastructure = ``Infrastructure``.
* **inside** a polygon: the feature intersects it; **outside** / **dry**: the rest. DINS points and health facilities
  counted in an AOI file (or in the EMSR773 AOI03 rectangle) lie at least 10 m from the polygon's edge
  (``assert_off_edge``).
* **distances**: shortest planar distance between the features in the event's projected CRS (EPSG:26911 Los Angeles,
  EPSG:32604 Maui, EPSG:25830 Valencia), metres; 0 inside. "Within X" is ``<= X``, "more than X" is ``> X``. Every
  threshold is at least 30 m from every distance it separates (``assert_clear``), every "nearest" / "farthest" at
  least 30 m apart from the next candidate (``assert_apart``, ``farthest_apart``), every "largest" / "smallest" ahead
  of the next (``largest``, ``smallest``), and every "inside the flood" at least 30 m from flipping (``assert_firm``).
* **hospitals** (Los Angeles, Maui): the HIFLD file's rows with ``STATE == 'CA'`` and ``COUNTY == 'LOS ANGELES'``,
  or ``STATE == 'HI'`` and ``COUNTY == 'MAUI'``; every row counted, summed or averaged here is OPEN and has a known
  ``BEDS`` (``open_with_beds``); psychiatric ``D/P APH`` units are hospitals like any other row. The Eaton fire's area
  is the adjusted perimeter (unioned); the Palisades fire's, with no perimeter in the data, the convex hull of its
  Destroyed DINS points. ``OWNER`` as published (for-profit = ``PROPRIETARY``; state-run = ``GOVERNMENT - STATE``),
  ``TYPE`` (psychiatric = ``PSYCHIATRIC``, military = ``MILITARY``), ``HELIPAD`` (``Y``/``N``) and ``CITY`` as
  published. LAC+USC is the row named ``LAC USC MEDICAL CENTER``, Cedars-Sinai the row named ``CEDAR SINAI MEDICAL
  CENTER`` (West Hollywood; not the Marina del Rey hospital).
* València health facilities: all 64 points; centros de salud = ``idsubclase`` 13 (``CENTRO DE SALUD NOU CAMPANAR``,
  with an empty ``idsubclase``, is 2 km out and on neither side of a threshold asked here), consultorios = 18 (every
  name starting ``CONSULTORIO``), centros de especialidades = 19 (every name starting ``CENTRO DE ESPECIALIDADES``),
  hospitals = 14 (the five public hospitals the city codes so, not the private clinics named HOSPITAL without a code);
  Hospital Doctor Peset the point named ``HOSPITAL DOCTOR PESET``. The AOI03 rectangle is the EMSR773
  ``emsr773_aoi03_extent.geojson`` polygon.
* Catarroja OSM: the three layers of the extract, filtered on the tag or the name the question names; lengths of lines
  clipped to the flood (or to an AOI file); areas of the union of the polygons clipped to the flood; a feature counts
  as flooded when it intersects the flood polygon. The Avinguda de la Rambleta, the Camí del Port, the Pista de Silla,
  the Séquia del Port and the Distribuïdor Sud are every line so named; the Roman villa is the ``historic =
  archaeological_site`` point (Villa romana de L'Hort de Pepica); building footprints are every polygon with a
  ``building`` tag; the municipal market is the ``amenity = marketplace`` polygon (Mercat municipal), the Palau de
  Vivanco the ``historic = manor`` polygon, the Els Noguers nursery the ``amenity = childcare`` polygon.
* Catarroja recovery plan: the municipal public-buildings file; ``val_dany`` and ``subv_apro`` read as euros
  (missing, empty or not a figure: 0); ``capa`` and ``estado`` as published; distances of its points to the flood as
  above.
* Lahaina labels: ``class`` as published (undamaged buildings = ``Building``); footprint areas of the polygons after
  ``make_valid`` (EPSG:32604), each label on its own (never a union), summed as they are.
* **shares**: percent of the stated denominator, one decimal; **means**: of the stated rows, unrounded inputs."""

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
    MAUI,
    MOBILE_HOMES,
    MULTI_FAMILY,
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
from .ground_truth_heldout12 import km

SINGLE_WIDE, TRIPLE_WIDE = MOBILE_HOMES[0], MOBILE_HOMES[2]
ONE_STOREY_HOUSES, TALL_HOUSES = SINGLE_FAMILY
ONE_STOREY_FLATS = MULTI_FAMILY[0]
COMMERCIAL_MULTI = COMMERCIAL[1]
MOTOR_HOME = "Motor Home"
FOR_PROFIT, STATE_RUN = "PROPRIETARY", "GOVERNMENT - STATE"


def one_row(frame: pd.DataFrame, column: str, value: str) -> np.ndarray:
    """The mask of the one row whose ``column`` is ``value``."""
    mask = (frame[column] == value).to_numpy()
    assert mask.sum() == 1, value
    return mask


def named_lines(lines: pd.DataFrame, name: str) -> pd.DataFrame:
    chosen = lines[lines.name == name]
    assert len(chosen), name
    return chosen


# ---------------------------------------------------------------------------------------- the fires
def eaton(layers: Layers) -> dict:
    dins = layers("eaton_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    flats = (kind == ONE_STOREY_FLATS).to_numpy()

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, layers.area("eaton_perimeter", LA), LA)
    open_with_beds(la, d <= 9500)
    for threshold in (5000, 7000, 9000):
        assert_clear(d, threshold)
    fewest = smallest(la.BEDS.to_numpy(), d <= 5000)
    for_profit = (la.OWNER == FOR_PROFIT).to_numpy() & (d <= 7000)
    no_pad = (la.HELIPAD == "N").to_numpy() & (d <= 9000)
    pasadena = (la.CITY == "PASADENA").to_numpy()
    open_with_beds(la, pasadena)
    lac_usc = one_row(la, "NAME", "LAC USC MEDICAL CENTER")
    return {
        "tall_houses_destroyed": int(((kind == TALL_HOUSES) & (dmg == DESTROYED)).sum()),
        "houses_affected": int((kind.isin(SINGLE_FAMILY) & (dmg == AFFECTED)).sum()),
        "one_storey_flats": int(flats.sum()),
        "one_storey_flats_by_grade": tally(dmg[flats].map(GRADE)),
        "for_profit_within_7km": ranked(la.NAME, d, keep=for_profit),
        "lac_usc_km": km(d[lac_usc][0]),
        "pasadena_beds": int(la.BEDS[pasadena].sum()),
        "pasadena_hospitals": int(pasadena.sum()),
        "nearest_over_300_beds": nearest(la.NAME, d, keep=(la.BEDS > 300).to_numpy()),
        "no_helipad_within_9km": int(no_pad.sum()),
        "no_helipad_beds_within_9km": int(la.BEDS[no_pad].sum()),
        "fewest_beds_within_5km": ranked(la.NAME, d, keep=one_of(len(la), fewest)),
        "fewest_beds_within_5km_beds": int(la.BEDS[fewest]),
    }


def palisades(layers: Layers) -> dict:
    dins = layers("palisades_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = (dmg == DESTROYED).to_numpy()
    works = (kind == "Infrastructure").to_numpy()
    flats = kind.isin(MULTI_FAMILY).to_numpy()
    low_flats = (kind == ONE_STOREY_FLATS).to_numpy()

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, palisades_hull(layers), LA)
    open_with_beds(la, d <= 10_500)
    for threshold in (6000, 10_000):
        assert_clear(d, threshold)
    state = (la.OWNER == STATE_RUN).to_numpy() & (d <= 10_000)
    pads = (la.HELIPAD == "Y").to_numpy() & (d <= 6000)
    military = (la.TYPE == "MILITARY").to_numpy() & (d <= 10_000)
    cedars = one_row(la, "NAME", "CEDAR SINAI MEDICAL CENTER")
    return {
        "single_wides_standing": int(((kind == SINGLE_WIDE).to_numpy() & ~destroyed).sum()),
        "apartments_destroyed_pct": pct((flats & destroyed).sum(), flats.sum()),
        "one_storey_flats": int(low_flats.sum()),
        "one_storey_flats_by_grade": tally(dmg[low_flats].map(GRADE)),
        "infrastructure": int(works.sum()),
        "infrastructure_by_grade": tally(dmg[works].map(GRADE)),
        "state_run_within_10km": int(state.sum()),
        "state_run_beds_within_10km": int(la.BEDS[state].sum()),
        "helipad_mean_beds_within_6km": round(float(la.BEDS[pads].mean()), 1),
        "military_within_10km": listing(la.NAME[military]),
        "cedars_sinai_km": km(d[cedars][0]),
    }


def comparative(layers: Layers) -> dict:
    keys = (
        "schools_destroyed_pct",
        "infrastructure_destroyed",
        "affected",
        "hospitals_within_12km",
        "commercial_destroyed",
        "motor_homes_destroyed",
        "one_storey_houses_destroyed_pct",
    )
    out: dict[str, dict] = {k: {} for k in keys}
    out["nearest_psychiatric"] = {}
    la = hospitals(layers, "CA", "LOS ANGELES")
    areas = {"eaton": layers.area("eaton_perimeter", LA), "palisades": palisades_hull(layers)}
    psychiatric = (la.TYPE == "PSYCHIATRIC").to_numpy()
    for fire, area in areas.items():
        dins = layers(f"{fire}_dins")
        dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
        destroyed = dmg == DESTROYED
        schools = kind == "School"
        houses = kind == ONE_STOREY_HOUSES
        d = metres(la, area, LA)
        open_with_beds(la, d <= 12_500)
        assert_clear(d, 12_000)
        out["schools_destroyed_pct"][fire] = pct((schools & destroyed).sum(), schools.sum())
        out["infrastructure_destroyed"][fire] = int(((kind == "Infrastructure") & destroyed).sum())
        out["affected"][fire] = int((dmg == AFFECTED).sum())
        out["hospitals_within_12km"][fire] = int((d <= 12_000).sum())
        out["commercial_destroyed"][fire] = int((kind.isin(COMMERCIAL) & destroyed).sum())
        out["motor_homes_destroyed"][fire] = int(((kind == MOTOR_HOME) & destroyed).sum())
        out["one_storey_houses_destroyed_pct"][fire] = pct((houses & destroyed).sum(), houses.sum())
        out["nearest_psychiatric"][fire] = nearest(la.NAME, d, keep=psychiatric)
    return out


def fire_aois(layers: Layers) -> dict:
    """DINS points inside the three fire AOI files (of the structure types no point of which lies within 10 m of the
    polygon's edge: motor homes and houses of two or more storeys in the west Altadena one, schools and outbuildings
    in the Kinneloa one, multi-storey commercial buildings, triple-wides and schools in the village one)."""
    eaton, pal = layers("eaton_dins"), layers("palisades_dins")

    def inside(dins: pd.DataFrame, kind: str, area: shapely.Geometry) -> pd.DataFrame:
        chosen = dins[kind == dins.STRUCTURETYPE]
        assert_off_edge(geoms(chosen, LA), area)
        return chosen[touching(chosen, area, LA)]

    west = projected_aoi("west_altadena_area.geojson", LA)
    motor = inside(eaton, MOTOR_HOME, west)
    tall = inside(eaton, TALL_HOUSES, west)

    east = projected_aoi("east_altadena_kinneloa.geojson", LA)
    schools = inside(eaton, "School", east)
    sheds = inside(eaton, UTILITY, east)

    village = projected_aoi("palisades_village_aoi.geojson", LA)
    shops = inside(pal, COMMERCIAL_MULTI, village)
    triples = inside(pal, TRIPLE_WIDE, village)
    village_schools = inside(pal, "School", village)
    return {
        "west_altadena_area": {
            "motor_homes": len(motor),
            "motor_homes_any_standing": bool((motor.DAMAGE != DESTROYED).any()),
            "tall_houses_destroyed_pct": pct((tall.DAMAGE == DESTROYED).sum(), len(tall)),
        },
        "east_altadena_kinneloa": {
            "schools": len(schools),
            "schools_by_grade": tally(schools.DAMAGE.map(GRADE)),
            "outbuildings_destroyed_pct": pct((sheds.DAMAGE == DESTROYED).sum(), len(sheds)),
        },
        "palisades_village_aoi": {
            "multi_storey_commercial": len(shops),
            "multi_storey_commercial_by_grade": tally(shops.DAMAGE.map(GRADE)),
            "triple_wides": len(triples),
            "schools_destroyed_pct": pct((village_schools.DAMAGE == DESTROYED).sum(), len(village_schools)),
        },
    }


def valencia_aois(layers: Layers) -> dict:
    """Industrial land and tertiary roads inside the Catarroja sketch, the flooded part of the València AOI file and
    the share of its health facilities the water reached (``valencia`` checks that every facility is firmly inside or
    outside the flood)."""
    flood = layers.area("valencia_flood", VALENCIA)
    sketch = projected_aoi("catarroja_east_sketch.geojson", VALENCIA)
    wet_sketch = shapely.intersection(sketch, flood)
    lines, polys = layers("catarroja_lines"), layers("catarroja_polygons")
    tertiary = lines[lines.highway == "tertiary"]
    industry = shapely.union_all(geoms(polys[polys.landuse == "industrial"], VALENCIA))

    south = projected_aoi("valencia_south_area.geojson", VALENCIA)
    wet_south = shapely.intersection(south, flood)
    health = layers("valencia_health")
    assert_off_edge(geoms(health, VALENCIA), south)
    inside_south = touching(health, south, VALENCIA)
    wet = touching(health, flood, VALENCIA)
    return {
        "catarroja_east_sketch": {
            "industrial_ha": hectares(shapely.intersection(industry, sketch)),
            "industrial_ha_in_flood": hectares(shapely.intersection(industry, wet_sketch)),
            "tertiary_km": clipped_km(tertiary, sketch, VALENCIA),
            "tertiary_km_in_flood": clipped_km(tertiary, wet_sketch, VALENCIA),
        },
        "valencia_south_area": {
            "flooded_km2": km2(wet_south),
            "flooded_pct": pct(shapely.area(wet_south), shapely.area(south)),
            "facilities": int(inside_south.sum()),
            "flooded_facilities_pct": pct((inside_south & wet).sum(), inside_south.sum()),
        },
    }


# --------------------------------------------------------------------------------------------- Maui
def lahaina(layers: Layers) -> dict:
    labels = layers("lahaina_labels")
    cls = labels["class"].to_numpy()
    areas = np.asarray(shapely.area(geoms(labels, MAUI)), dtype=float)

    maui = hospitals(layers, "HI", "MAUI")
    d = metres(maui, layers.area("lahaina_burn", MAUI), MAUI)
    open_with_beds(maui, np.ones(len(maui), dtype=bool))
    lanai = one_row(maui, "NAME", "LANAI COMMUNITY HOSPITAL")
    return {
        "intact_m2": round(float(areas[cls == "Building"].sum()), 1),
        "hospitals_mean_km": km(d.mean()),
        "lanai_km": km(d[lanai][0]),
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
    specialty = (sub == 19).to_numpy()
    assert int(names.str.startswith("CONSULTORIO").sum()) == int(consultorio.sum())
    assert bool(names[consultorio].str.startswith("CONSULTORIO").all())
    assert int(names.str.startswith("CENTRO DE ESPECIALIDADES").sum()) == int(specialty.sum())
    assert bool(names[specialty].str.startswith("CENTRO DE ESPECIALIDADES").all())
    unclassed_centre = (sub.isna() & names.str.startswith("CENTRO DE SALUD")).to_numpy()
    assert_clear(d, 1500, keep=centre | unclassed_centre)
    assert_clear(d, 900, keep=consultorio)
    dry = d > 0
    farthest_apart(d, hospital)
    farthest = largest(d, hospital)
    peset = one_row(health, "equipamien", "HOSPITAL DOCTOR PESET")
    assert_clear(d, 1000, keep=peset)

    aoi03 = layers.area("valencia_aoi03", VALENCIA)
    assert_off_edge(geoms(health, VALENCIA), aoi03)
    in_aoi03 = touching(health, aoi03, VALENCIA)
    return {
        "centres_within_1500m_pct": pct((centre & (d <= 1500)).sum(), centre.sum()),
        "centres_within_1500m": int((centre & (d <= 1500)).sum()),
        "dry_consultorios_within_900m": int((consultorio & dry & (d <= 900)).sum()),
        "farthest_hospital": ranked(names, d, keep=one_of(len(health), farthest)),
        "peset_within_1km": bool(d[peset][0] <= 1000),
        "peset_m": round(float(d[peset][0]), 1),
        "specialty_mean_m": round(float(d[specialty].mean()), 1),
        "consultorios_in_aoi03": listing(names[consultorio & in_aoi03]),
    }


def catarroja(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    pts, lines, polys = layers("catarroja_points"), layers("catarroja_lines"), layers("catarroja_polygons")

    rambleta = named_lines(lines, "Avinguda de la Rambleta")
    port_road = named_lines(lines, "Camí del Port")
    silla = named_lines(lines, "Pista de Silla")
    port_canal = named_lines(lines, "Séquia del Port")
    distributor = named_lines(lines, "Distribuïdor Sud")
    assert (silla.highway == "motorway").all() and port_canal.waterway.notna().all()

    villa = pts[pts.historic == "archaeological_site"]
    market = polys[polys.amenity == "marketplace"]
    manor = polys[polys.historic == "manor"]
    nursery = polys[polys.amenity == "childcare"]
    assert len(villa) == 1 and len(market) == 1 and len(manor) == 1 and len(nursery) == 1
    assert_firm(np.concatenate([geoms(f, VALENCIA) for f in (distributor, villa, market, manor, nursery)]), flood)
    buildings = shapely.union_all(geoms(polys[polys.building.notna()], VALENCIA))
    return {
        "rambleta_km_in_flood": clipped_km(rambleta, flood, VALENCIA),
        "rambleta_pct_in_flood": wet_share(rambleta, flood),
        "cami_port_km_in_flood": clipped_km(port_road, flood, VALENCIA),
        "pista_silla_km_in_flood": clipped_km(silla, flood, VALENCIA),
        "sequia_port_km_in_flood": clipped_km(port_canal, flood, VALENCIA),
        "distribuidor_flooded": bool(touching(distributor, flood, VALENCIA).any()),
        "roman_villa_flooded": bool(touching(villa, flood, VALENCIA).all()),
        "building_ha_in_flood": hectares2(shapely.intersection(buildings, flood)),
        "market_m": round(float(metres(market, flood, VALENCIA)[0]), 1),
        "vivanco_m": round(float(metres(manor, flood, VALENCIA)[0]), 1),
        "nursery_flooded": bool(touching(nursery, flood, VALENCIA).all()),
    }


def recovery_plan(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    public = layers("catarroja_public")
    damage = public.val_dany.map(euros).to_numpy(dtype=float)
    subsidy = public.subv_apro.map(euros).to_numpy(dtype=float)
    titles = public.titulo.astype(str)
    tac = one_row(public, "titulo", "TAC Teatro Auditorio Catarroja")
    museum = one_row(public, "titulo", "Museo Antonia Mir")
    social = (public.capa == "Centros sociosanitarios").to_numpy()
    schools = (public.capa == "Centros educativos").to_numpy()
    planned = (public.estado == "Prevista").to_numpy()
    d = metres(public, flood, VALENCIA)
    assert_clear(d, 150)
    far = d > 150
    top_social = largest(damage, social)
    top_school = largest(damage, schools)
    return {
        "tac_pct_of_damage": pct(damage[tac].sum(), damage.sum()),
        "museum_gap_eur": round(float(damage[museum][0] - subsidy[museum][0]), 2),
        "beyond_150m": int(far.sum()),
        "beyond_150m_damage_eur": round(float(damage[far].sum()), 2),
        "social_costliest": listing(titles[one_of(len(public), top_social)]),
        "social_costliest_eur": round(float(damage[top_social]), 2),
        "education_costliest": listing(titles[one_of(len(public), top_school)]),
        "education_costliest_eur": round(float(damage[top_school]), 2),
        "planned_damage_eur": round(float(damage[planned].sum()), 2),
    }


def heldout13(root: Path | None = None) -> dict:
    """Every expected value of ``bench/heldout13.json``, under one ``heldout13`` key."""
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
    return {"heldout13": values}
