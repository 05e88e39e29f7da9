"""Expected values of the twelfth held-out question split (``bench/heldout12.json``), computed from the sample data.

Like the first eleven splits, the questions were written without looking at how GeoFaham reads a question (nothing
under ``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not run on them), and their values
are computed here by code of their own: GeoPandas, shapely and pyproj only, no import of ``geofaham_plugin``. The
reading, the projection and the small table helpers are the first split's (``bench.ground_truth_heldout``), the
threshold guard and the area/length helpers the third split's (``bench.ground_truth_heldout3``), the Palisades hull the
fourth split's (``bench.ground_truth_heldout4``), the AOI edge guard the sixth split's (``bench.ground_truth_heldout6``),
the "farthest is apart" guard the seventh split's (``bench.ground_truth_heldout7``), the "firmly inside or outside"
guard, the open-with-beds guard, the one-row mask and the wet-length share the eighth split's
(``bench.ground_truth_heldout8``), the two-decimal hectares the ninth split's (``bench.ground_truth_heldout9``), the
"one nearest" helper (with the fourth split's "nearest ones are apart" guard inside) and the damaged-but-standing
grades the tenth split's (``bench.ground_truth_heldout10``), and the "largest" and "smallest" guards and the structure
type names the eleventh split's (``bench.ground_truth_heldout11``), imported, not copied. ``expected_values.compute``
stores the result under ``heldout12`` in ``bench/expected.json`` (``python -m bench ground-truth`` regenerates it).

Definitions (each expectation's description repeats the one it uses):

* DINS ``DAMAGE`` as published: ``No Damage`` (none, "no damage at all"), ``Affected (1-9%)``, ``Minor (10-25%)``
  ("minor", "ten to twenty-five percent"), ``Major (26-50%)``, ``Destroyed (>50%)`` ("destroyed", "burned down");
  **damaged** ("any damage at all") = any grade but No Damage; **more than a quarter damaged** = Major or Destroyed. A
  structure is one DINS point; the Eaton layer is the 14 January snapshot (5,805 points), the Palisades layer the final
  one (11,988); "inspected" is every point of a layer.
* **structure types** as published: mobile homes = Mobile Home Single, Double and Triple Wide (``Motor Home`` left
  out); double-wides = ``Mobile Home Double Wide``; outbuildings (sheds, detached garages) = ``Utility Misc
  Structure``; buildings mixing shops and homes = ``Mixed Commercial/Residential``; commercial buildings = Commercial
  Building Single and Multi Story (one-storey = Single Story; Mixed Commercial/Residential left out); houses of two or
  more storeys = ``Single Family Residence Multi Story``; churches = ``Church``.
* **inside** a polygon: the feature intersects it; **outside** / **dry**: the rest. DINS points counted in an AOI file
  lie at least 10 m from the polygon's edge (``assert_off_edge``).
* **distances**: shortest planar distance between the features in the event's projected CRS (EPSG:26911 Los Angeles,
  EPSG:32604 Maui, EPSG:25830 Valencia), metres; 0 inside. "Within X" is ``<= X``, "more than X" is ``> X``. Every
  threshold is at least 30 m from every distance it separates (``assert_clear``), every "nearest" / "farthest" at
  least 30 m apart from the next candidate (``assert_apart``, ``farthest_apart``), and every "inside the flood" at
  least 30 m from flipping (``assert_firm``). The gap between the two LA fires is the shortest distance between the
  Eaton adjusted perimeter and the Palisades hull; how close the destruction came to a hospital is the distance from
  the hospital's point to the nearest Destroyed DINS point of that fire.
* **hospitals** (Los Angeles, Maui): the HIFLD file's rows with ``STATE == 'CA'`` and ``COUNTY == 'LOS ANGELES'``,
  or ``STATE == 'HI'`` and ``COUNTY == 'MAUI'``; every row counted, summed or averaged here is OPEN and has a known
  ``BEDS`` (``open_with_beds``); psychiatric ``D/P APH`` units are hospitals like any other row (``TYPE`` PSYCHIATRIC).
  The Eaton fire's area is the adjusted perimeter (its area: the union's, holes left out); the Palisades fire's, with
  no perimeter in the data, the convex hull of its Destroyed DINS points. A **Level I trauma centre** is a row whose
  ``TRAUMA`` names level I for adults or children (``LEVEL I``, ``LEVEL I ADULT``, ``LEVEL I PEDIATRIC``); ``OWNER``,
  ``HELIPAD`` (``Y``/``N``) and ``TYPE`` as published.
* València health facilities: all 64 points; consultorios = ``idsubclase`` 18 (every name starting ``CONSULTORIO``),
  hospitals = ``idsubclase`` 14 (the five the city codes so, not the private clinics named HOSPITAL without a code),
  centros de salud = 13. Hospital La Fe is the point named ``HOSPITAL UNIVERSITARI I POLIT?CNIC LA FE (NUEVO HOSPITAL
  LA FE)`` (the file's own replacement character).
* Catarroja OSM: the three layers of the extract, filtered on the tag or the name the question names; lengths of lines
  clipped to the flood (or to an AOI file); areas of the union of the polygons clipped to the flood; a feature counts
  as flooded when it intersects the flood polygon. The Avinguda del Sud and the Ronda del Nord are every line so
  named, the Barranc de Xiva the ``waterway=stream`` line so named, the vocational college the ``amenity=college``
  polygon (Centre Integrat Públic de Formació Professional Catarroja), the sports hall the ``leisure=sports_hall``
  polygon, the Blat Market the ``shop=supermarket`` polygon.
* Catarroja recovery plan: the municipal public-buildings file; ``val_dany`` and ``subv_apro`` read as euros
  (missing, empty or not a figure: 0; the Mercat's "Cantidad solicitada como subvención: 486.478,92 €" reads as that
  figure); "with a valuation" is a non-empty ``val_dany``; "without a subsidy" is a ``subv_apro`` that reads as 0;
  ``capa`` as published (Centros educativos, Centros culturales, Centros sociosanitarios).
* Lahaina labels: ``class`` as published; footprint areas of the polygons after ``make_valid`` (EPSG:32604), each label
  on its own (never a union).
* **shares**: percent of the stated denominator, one decimal; **means**: of the stated rows, unrounded inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import shapely

from .ground_truth import data_dir
from .ground_truth_heldout import (
    COMMERCIAL,
    DESTROYED,
    GRADE,
    LA,
    MAJOR,
    MAUI,
    MINOR,
    MOBILE_HOMES,
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
from .ground_truth_heldout3 import assert_clear, clipped_km, km2, projected_aoi
from .ground_truth_heldout4 import palisades_hull
from .ground_truth_heldout6 import assert_off_edge
from .ground_truth_heldout7 import farthest_apart
from .ground_truth_heldout8 import assert_firm, one_of, open_with_beds, wet_share
from .ground_truth_heldout9 import hectares2
from .ground_truth_heldout10 import nearest
from .ground_truth_heldout11 import MIXED, largest, smallest

DOUBLE_WIDE = MOBILE_HOMES[1]
TALL_HOUSES = SINGLE_FAMILY[1]
#: the València idsubclase codes a question names in words
FACILITY_KIND = {13: "centro de salud", 18: "consultorio", 14: "hospital", 19: "centro de especialidades"}
LA_FE = "HOSPITAL UNIVERSITARI I POLIT\ufffdCNIC LA FE (NUEVO HOSPITAL LA FE)"


def level_one(trauma: pd.Series) -> np.ndarray:
    """Rows whose TRAUMA names level I, for adults or children ('LEVEL I, LEVEL II PEDIATRIC' is level I adult)."""
    return trauma.fillna("").str.contains(r"LEVEL I\b", regex=True).to_numpy()


def km(metres_: float) -> float:
    return round(float(metres_) / 1000, 2)


def closest_loss(dins: pd.DataFrame, la: pd.DataFrame, name: str) -> float:
    """Metres from the named hospital's point to the nearest Destroyed DINS point of the layer."""
    chosen = la[la.NAME.eq(name)]
    assert len(chosen) == 1, name
    lost = geoms(dins[dins.DAMAGE == DESTROYED], LA)
    return round(float(np.min(shapely.distance(lost, geoms(chosen, LA)[0]))), 1)


# ---------------------------------------------------------------------------------------- the fires
def eaton(layers: Layers) -> dict:
    dins = layers("eaton_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    minor = (dmg == MINOR).to_numpy()
    major = (dmg == MAJOR).to_numpy()
    mixed = (kind == MIXED).to_numpy()

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, layers.area("eaton_perimeter", LA), LA)
    open_with_beds(la, d <= 12_500)
    for threshold in (5000, 8000, 12_000):
        assert_clear(d, threshold)
    five = d <= 5000
    nonprofit = (la.OWNER == "NON-PROFIT").to_numpy() & (d <= 8000)
    helipad = (la.HELIPAD == "Y").to_numpy() & (d <= 12_000)
    huntington = la.NAME == "HUNTINGTON HOSPITAL"
    assert int(huntington.sum()) == 1
    return {
        "minor": int(minor.sum()),
        "minor_by_type": tally(kind[minor]),
        "major": int(major.sum()),
        "major_by_type": tally(kind[major]),
        "mixed_use": int(mixed.sum()),
        "mixed_use_any_damaged": bool((mixed & (dmg != NONE).to_numpy()).any()),
        "within_5km": int(five.sum()),
        "mean_beds_within_5km": round(float(la.BEDS[five].mean()), 1),
        "nearest_level_one_trauma": nearest(la.NAME, d, keep=level_one(la.TRAUMA)),
        "nonprofit_within_8km": int(nonprofit.sum()),
        "nonprofit_beds_within_8km": int(la.BEDS[nonprofit].sum()),
        "helipad_within_12km": ranked(la.NAME, d, keep=helipad),
        "methodist_closest_loss_m": closest_loss(dins, la, "METHODIST HOSPITAL OF SOUTHERN CALIFORNIA"),
        "huntington_beds": int(la.BEDS[huntington].iloc[0]),
        "huntington_km": km(d[huntington.to_numpy()][0]),
    }


def palisades(layers: Layers) -> dict:
    dins = layers("palisades_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = (dmg == DESTROYED).to_numpy()
    doubles = (kind == DOUBLE_WIDE).to_numpy()
    shops = (kind == COMMERCIAL[0]).to_numpy()
    sheds = (kind == UTILITY).to_numpy()

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, palisades_hull(layers), LA)
    open_with_beds(la, d <= 9500)
    for threshold in (6000, 9000):
        assert_clear(d, threshold)
    six = d <= 6000
    nine = d <= 9000
    fewest = smallest(la.BEDS.to_numpy(), six)
    return {
        "mobile_pct_of_destroyed": pct((kind.isin(MOBILE_HOMES).to_numpy() & destroyed).sum(), destroyed.sum()),
        "double_wides": int(doubles.sum()),
        "double_wides_by_grade": tally(dmg[doubles].map(GRADE)),
        "one_storey_commercial_destroyed_pct": pct((shops & destroyed).sum(), shops.sum()),
        "outbuildings_pct_of_inspected": pct(sheds.sum(), len(dins)),
        "within_9km": int(nine.sum()),
        "within_9km_by_owner": tally(la.OWNER[nine]),
        "fewest_beds_within_6km": ranked(la.NAME, d, keep=one_of(len(la), fewest)),
        "fewest_beds_within_6km_beds": int(la.BEDS[fewest]),
        "nearest_level_one_trauma": nearest(la.NAME, d, keep=level_one(la.TRAUMA)),
        "saint_johns_closest_loss_m": closest_loss(dins, la, "SAINT JOHN'S HEALTH CENTER"),
    }


def comparative(layers: Layers) -> dict:
    keys = (
        "damaged",
        "outbuildings_pct_of_destroyed",
        "mobile_homes_inspected",
        "churches_inspected",
        "major_or_destroyed",
        "nearest_hospital_km",
        "beds_within_10km",
    )
    out: dict[str, dict] = {k: {} for k in keys}
    la = hospitals(layers, "CA", "LOS ANGELES")
    perimeter, hull = layers.area("eaton_perimeter", LA), palisades_hull(layers)
    for fire, area in (("eaton", perimeter), ("palisades", hull)):
        dins = layers(f"{fire}_dins")
        dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
        destroyed = dmg == DESTROYED
        d = metres(la, area, LA)
        open_with_beds(la, d <= 10_500)
        assert_clear(d, 10_000)
        closest = nearest(la.NAME, d)
        out["damaged"][fire] = int((dmg != NONE).sum())
        out["outbuildings_pct_of_destroyed"][fire] = pct(((kind == UTILITY) & destroyed).sum(), destroyed.sum())
        out["mobile_homes_inspected"][fire] = int(kind.isin(MOBILE_HOMES).sum())
        out["churches_inspected"][fire] = int((kind == "Church").sum())
        out["major_or_destroyed"][fire] = int(dmg.isin([MAJOR, DESTROYED]).sum())
        out["nearest_hospital_km"][fire] = km(closest["distances_m"][closest["names"][0]])
        out["beds_within_10km"][fire] = int(la.BEDS[d <= 10_000].sum())
    eaton_km2, palisades_km2 = km2(perimeter), km2(hull)
    return {
        **out,
        "fires_gap_km": km(shapely.distance(perimeter, hull)),
        "palisades_larger": palisades_km2 > eaton_km2,
        "area_difference_km2": round(palisades_km2 - eaton_km2, 2),
    }


def fire_aois(layers: Layers) -> dict:
    """DINS points inside the three fire AOI files (of the structure types no point of which lies within 10 m of the
    polygon's edge: churches in the west Altadena one, houses of two or more storeys and infrastructure in the Kinneloa
    one, mixed commercial/residential buildings in the village one), and hospitals near the west Altadena and the
    Palisades village ones."""
    eaton, pal = layers("eaton_dins"), layers("palisades_dins")
    la = hospitals(layers, "CA", "LOS ANGELES")

    west = projected_aoi("west_altadena_area.geojson", LA)
    churches = eaton[eaton.STRUCTURETYPE == "Church"]
    assert_off_edge(geoms(churches, LA), west)
    churches_in = churches[touching(churches, west, LA)]
    d_west = metres(la, west, LA)
    open_with_beds(la, d_west <= 7500)
    assert_clear(d_west, 7000)
    psych = (la.TYPE == "PSYCHIATRIC").to_numpy() & (d_west <= 7000)

    east = projected_aoi("east_altadena_kinneloa.geojson", LA)
    tall = eaton[eaton.STRUCTURETYPE == TALL_HOUSES]
    works = eaton[eaton.STRUCTURETYPE == "Infrastructure"]
    assert_off_edge(np.concatenate([geoms(tall, LA), geoms(works, LA)]), east)
    tall_in = tall[touching(tall, east, LA)]
    works_in = works[touching(works, east, LA)]

    village = projected_aoi("palisades_village_aoi.geojson", LA)
    mixed = pal[pal.STRUCTURETYPE == MIXED]
    assert_off_edge(geoms(mixed, LA), village)
    mixed_in = mixed[touching(mixed, village, LA)]
    d_village = metres(la, village, LA)
    open_with_beds(la, d_village <= 7500)
    assert_clear(d_village, 7000)
    near_village = d_village <= 7000
    return {
        "west_altadena_area": {
            "churches": len(churches_in),
            "churches_any_destroyed": bool((churches_in.DAMAGE == DESTROYED).any()),
            "psychiatric_within_7km": int(psych.sum()),
            "psychiatric_beds_within_7km": int(la.BEDS[psych].sum()),
        },
        "east_altadena_kinneloa": {
            "area_km2": km2(east),
            "tall_houses_destroyed_pct": pct((tall_in.DAMAGE == DESTROYED).sum(), len(tall_in)),
            "infrastructure": len(works_in),
            "infrastructure_by_grade": tally(works_in.DAMAGE.map(GRADE)),
        },
        "palisades_village_aoi": {
            "mixed_use": len(mixed_in),
            "mixed_use_destroyed": int((mixed_in.DAMAGE == DESTROYED).sum()),
            "within_7km": int(near_village.sum()),
            "mean_beds_within_7km": round(float(la.BEDS[near_village].mean()), 1),
        },
    }


def valencia_aois(layers: Layers) -> dict:
    """Footways and the stream inside the Catarroja sketch, and the health facilities of the València AOI file
    (``valencia`` checks that every facility is firmly inside or outside the flood)."""
    flood = layers.area("valencia_flood", VALENCIA)
    sketch = projected_aoi("catarroja_east_sketch.geojson", VALENCIA)
    wet_sketch = shapely.intersection(sketch, flood)
    lines = layers("catarroja_lines")
    footways = lines[lines.highway == "footway"]
    streams = lines[lines.waterway == "stream"]
    south = projected_aoi("valencia_south_area.geojson", VALENCIA)
    health = layers("valencia_health")
    assert_off_edge(geoms(health, VALENCIA), south)
    inside_south = touching(health, south, VALENCIA)
    d = metres(health, flood, VALENCIA)
    return {
        "catarroja_east_sketch": {
            "footway_km": clipped_km(footways, sketch, VALENCIA),
            "footway_km_in_flood": clipped_km(footways, wet_sketch, VALENCIA),
            "stream_km": clipped_km(streams, sketch, VALENCIA),
            "stream_km_in_flood": clipped_km(streams, wet_sketch, VALENCIA),
        },
        "valencia_south_area": {
            "facilities": int(inside_south.sum()),
            "mean_m": round(float(d[inside_south].mean()), 1),
        },
    }


# --------------------------------------------------------------------------------------------- Maui
def lahaina(layers: Layers) -> dict:
    labels = layers("lahaina_labels")
    cls = labels["class"].to_numpy()
    areas = np.asarray(shapely.area(geoms(labels, MAUI)), dtype=float)
    tiniest = smallest(areas, cls == "Building")
    assert areas[np.argsort(np.where(cls == "Building", areas, np.inf))[1]] > 1.2 * areas[tiniest]

    maui = hospitals(layers, "HI", "MAUI")
    d = metres(maui, layers.area("lahaina_burn", MAUI), MAUI)
    no_pad = (maui.HELIPAD == "N").to_numpy()
    open_with_beds(maui, np.ones(len(maui), dtype=bool))
    molokai = (maui.NAME == "MOLOKAI GENERAL HOSPITAL").to_numpy()
    assert molokai.sum() == 1
    return {
        "smallest_intact_m2": round(float(areas[tiniest]), 1),
        "no_helipad": listing(maui.NAME[no_pad]),
        "no_helipad_beds": int(maui.BEDS[no_pad].sum()),
        "molokai_km": km(d[molokai][0]),
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
    hospital = (sub == 14).to_numpy()
    assert bool(names[consultorio].str.startswith("CONSULTORIO").all())
    assert int(names.str.startswith("CONSULTORIO").sum()) == int(consultorio.sum())
    farthest_apart(d, consultorio)
    farthest = largest(d, consultorio)
    la_fe = (names == LA_FE).to_numpy()
    assert la_fe.sum() == 1
    assert_clear(d, 1250)
    assert_clear(d, 4000)
    near = d <= 1250
    flooded = d == 0
    kinds = sub[flooded].map(FACILITY_KIND)
    assert kinds.notna().all()
    return {
        "consultorios_mean_m": round(float(d[consultorio].mean()), 1),
        "hospitals_mean_m": round(float(d[hospital].mean()), 1),
        "farthest_consultorio": ranked(names, d, keep=one_of(len(names), farthest)),
        "la_fe_m": round(float(d[la_fe][0]), 1),
        "within_1250m": int(near.sum()),
        "within_1250m_pct": pct(near.sum(), len(health)),
        "flooded": int(flooded.sum()),
        "flooded_by_kind": tally(kinds),
        "beyond_4km": int((d > 4000).sum()),
    }


def catarroja(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    lines, polys = layers("catarroja_lines"), layers("catarroja_polygons")

    def street(name: str) -> pd.DataFrame:
        chosen = lines[lines.name == name]
        assert len(chosen) and chosen.highway.notna().all(), name
        return chosen

    south, north = street("Avinguda del Sud"), street("Ronda del Nord")
    xiva = lines[(lines.name == "Barranc de Xiva") & (lines.waterway == "stream")]
    assert len(xiva) == 1

    def flooded_ha(tag: str, value: str) -> float:
        union = shapely.union_all(geoms(polys[polys[tag] == value], VALENCIA))
        return hectares2(shapely.intersection(union, flood))

    rail_land = shapely.union_all(geoms(polys[polys.landuse == "railway"], VALENCIA))
    grass = shapely.union_all(geoms(polys[polys.landuse == "grass"], VALENCIA))
    grounds = polys[polys.landuse == "recreation_ground"]
    hall = polys[polys.leisure == "sports_hall"]
    college = polys[polys.amenity == "college"]
    market = polys[polys.shop == "supermarket"]
    assert len(grounds) == 2 and len(hall) == 1 and len(college) == 1 and len(market) == 1
    assert_firm(np.concatenate([geoms(f, VALENCIA) for f in (grounds, hall, college, market)]), flood)
    campus = shapely.union_all(geoms(college, VALENCIA))
    market_m = metres(market, flood, VALENCIA)
    assert_clear(market_m, 300)
    return {
        "avinguda_sud_km_in_flood": clipped_km(south, flood, VALENCIA),
        "avinguda_sud_pct_in_flood": wet_share(south, flood),
        "ronda_nord_km_in_flood": clipped_km(north, flood, VALENCIA),
        "ronda_nord_pct_in_flood": wet_share(north, flood),
        "barranc_xiva_km_in_flood": clipped_km(xiva, flood, VALENCIA),
        "woodland_ha_in_flood": flooded_ha("natural", "wood"),
        "meadow_ha_in_flood": flooded_ha("landuse", "meadow"),
        "rail_land_ha_in_flood": hectares2(shapely.intersection(rail_land, flood)),
        "rail_land_pct_in_flood": pct(shapely.area(shapely.intersection(rail_land, flood)), shapely.area(rail_land)),
        "grass_pct_in_flood": pct(shapely.area(shapely.intersection(grass, flood)), shapely.area(grass)),
        "recreation_any_flooded": bool(touching(grounds, flood, VALENCIA).any()),
        "sports_hall_flooded": bool(touching(hall, flood, VALENCIA).all()),
        "college_flooded": bool(touching(college, flood, VALENCIA).all()),
        "college_pct_in_flood": pct(shapely.area(shapely.intersection(campus, flood)), shapely.area(campus)),
        "market_within_300m": bool((market_m <= 300).any()),
        "market_m": round(float(market_m[0]), 1),
    }


def recovery_plan(layers: Layers) -> dict:
    public = layers("catarroja_public")
    damage = public.val_dany.map(euros).to_numpy(dtype=float)
    subsidy = public.subv_apro.map(euros).to_numpy(dtype=float)
    valued = public.val_dany.fillna("").str.strip().ne("").to_numpy()
    schools = (public.capa == "Centros educativos").to_numpy()
    culture = (public.capa == "Centros culturales").to_numpy()
    biggest = largest(subsidy, subsidy > 0)
    unfunded = largest(damage, (subsidy == 0) & (damage > 0))
    return {
        "largest_subsidy": listing(public.titulo[one_of(len(public), biggest)]),
        "largest_subsidy_eur": round(float(subsidy[biggest]), 2),
        "education_mean_damage_eur": round(float(damage[schools & valued].mean()), 2),
        "culture_covered_pct": pct(subsidy[culture].sum(), damage[culture].sum()),
        "costliest_unsubsidised": listing(public.titulo[one_of(len(public), unfunded)]),
        "costliest_unsubsidised_eur": round(float(damage[unfunded]), 2),
    }


def heldout12(root: Path | None = None) -> dict:
    """Every expected value of ``bench/heldout12.json``, under one ``heldout12`` key."""
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
    return {"heldout12": values}
