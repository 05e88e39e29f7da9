"""Expected values of the tenth held-out question split (``bench/heldout10.json``), computed from the sample data.

Like the first nine splits, the questions were written without looking at how GeoFaham reads a question (nothing
under ``geofaham_plugin/`` nor the paraphrase suite was read, and the product was not run on them), and their values
are computed here by code of their own: GeoPandas, shapely and pyproj only, no import of ``geofaham_plugin``. The
reading, the projection and the small table helpers are the first split's (``bench.ground_truth_heldout``), the
threshold guard and the area/length helpers the third split's (``bench.ground_truth_heldout3``), the "nearest ones are
apart" guard and the Palisades hull the fourth split's (``bench.ground_truth_heldout4``), the AOI edge guard the sixth
split's (``bench.ground_truth_heldout6``), the "farthest is apart" guard the seventh split's
(``bench.ground_truth_heldout7``), and the "firmly inside or outside" guard, the open-with-beds guard, the one-row mask
and the wet-length share the eighth split's (``bench.ground_truth_heldout8``), imported, not copied.
``expected_values.compute`` stores the result under ``heldout10`` in ``bench/expected.json`` (``python -m bench
ground-truth`` regenerates it).

Definitions (each expectation's description repeats the one it uses):

* DINS ``DAMAGE`` as published: ``No Damage`` (none, "no damage at all", "untouched"), ``Affected (1-9%)``,
  ``Minor (10-25%)``, ``Major (26-50%)``, ``Destroyed (>50%)`` ("destroyed", "lost completely"); **damaged but not
  destroyed** = Affected, Minor or Major. A structure is one DINS point; the Eaton layer is the 14 January snapshot
  (5,805 points), the Palisades layer the final one (11,988); "inspected" is every point of a layer, whatever its grade.
* **structure types** as published: single-family homes = Single Family Residence Single and Multi Story (one-storey
  = Single Story, more than one storey = Multi Story); mobile homes = Mobile Home Single, Double and Triple Wide
  (``Motor Home`` left out); commercial buildings = Commercial Building Single and Multi Story (Mixed
  Commercial/Residential left out); schools = ``School``.
* **inside** a polygon: the feature intersects it; **outside** / **dry**: the rest. DINS points and health facilities
  counted in an AOI file lie at least 10 m from the polygon's edge (``assert_off_edge``).
* **distances**: shortest planar distance between the feature and the polygon in the event's projected CRS
  (EPSG:26911 Los Angeles, EPSG:32604 Maui, EPSG:25830 Valencia), metres; 0 inside. "Within X" is ``<= X``,
  "more than X" is ``> X``, "between X and Y" is ``> X`` and ``<= Y``. Every threshold is at least 30 m from every
  distance it separates (``assert_clear``), every "nearest" / "farthest" at least 30 m apart from the next candidate
  (``assert_apart``, ``farthest_apart``), and every "inside the flood" at least 30 m from flipping (``assert_firm``).
* **hospitals** (Los Angeles, Maui): the HIFLD file's rows with ``STATE == 'CA'`` and ``COUNTY == 'LOS ANGELES'``,
  or ``STATE == 'HI'`` and ``COUNTY == 'MAUI'``; every row counted or summed here is OPEN and has a known ``BEDS``
  (``open_with_beds``). The Eaton fire's area is the adjusted perimeter; the Palisades fire's, with no perimeter in the
  data, the convex hull of its Destroyed DINS points. ``HELIPAD`` as published; psychiatric ``D/P APH`` units are
  hospitals like any other row.
* València health facilities: all 64 points; centros de salud = ``idsubclase`` 13 (``CENTRO DE SALUD NOU CAMPANAR``,
  with an empty ``idsubclase``, is never on either side of a threshold asked here), consultorios = ``idsubclase`` 18
  (every name starting ``CONSULTORIO``).
* Catarroja OSM: the three layers of the extract, filtered on the tag the question names; lengths of lines clipped to
  the flood; areas of the union of the polygons clipped to the flood; a feature counts as flooded when it intersects
  the flood polygon.
* Catarroja recovery plan: the municipal public-buildings file; ``val_dany`` and ``subv_apro`` read as euros
  (missing, empty or not a figure: 0); "with a valuation" is a non-empty ``val_dany``; ``capa`` and ``estado`` as
  published.
* Lahaina labels: ``class`` as published; footprint areas of the polygons after ``make_valid`` (EPSG:32604), each label
  on its own (never a union); the "building labels" are ``Building`` and ``Damaged Building`` (``Background`` left out).
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
    NONE,
    SINGLE_FAMILY,
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
from .ground_truth_heldout7 import farthest_apart
from .ground_truth_heldout8 import assert_firm, one_of, open_with_beds, wet_share

#: damaged but not destroyed: every grade between No Damage and Destroyed
STANDING = [AFFECTED, MINOR, MAJOR]
RESIDENCIA = "Residencia Francisco Ramón Pastor y M.M.D.D. y San José de la Montaña"


def nearest(names: pd.Series, dist: np.ndarray, keep: np.ndarray | None = None) -> dict:
    """The one nearest kept feature with its distance, at least 30 m ahead of the next (``assert_apart``)."""
    keep = np.ones(len(dist), dtype=bool) if keep is None else keep
    assert_apart(dist, keep, 1)
    return ranked(names, dist, keep=keep, k=1)


# ---------------------------------------------------------------------------------------- the fires
def eaton(layers: Layers) -> dict:
    dins = layers("eaton_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    houses = kind.isin(SINGLE_FAMILY).to_numpy()
    tall = (kind == SINGLE_FAMILY[1]).to_numpy()
    low = (kind == SINGLE_FAMILY[0]).to_numpy()
    destroyed = (dmg == DESTROYED).to_numpy()
    shops = kind.isin(COMMERCIAL).to_numpy()

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, layers.area("eaton_perimeter", LA), LA)
    open_with_beds(la, d <= 10_500)
    for threshold in (4000, 5000, 10_000):
        assert_clear(d, threshold)
    near5 = d <= 5000
    return {
        "sfr_destroyed": int((houses & destroyed).sum()),
        "no_damage_pct": pct((dmg == NONE).sum(), len(dins)),
        "multi_story_sfr_destroyed": int((tall & destroyed).sum()),
        "multi_story_sfr_destroyed_pct": pct((tall & destroyed).sum(), tall.sum()),
        "one_story_sfr": int(low.sum()),
        "one_story_sfr_by_grade": tally(dmg[low].map(GRADE)),
        "commercial": int(shops.sum()),
        "commercial_by_grade": tally(dmg[shops].map(GRADE)),
        "nearest_hospital": nearest(la.NAME, d),
        "within_4km": ranked(la.NAME, d, keep=d <= 4000),
        "within_5km": int(near5.sum()),
        "beds_within_5km": int(la.BEDS[near5].sum()),
        "between_5_and_10km": int(((d > 5000) & (d <= 10_000)).sum()),
    }


def palisades(layers: Layers) -> dict:
    dins = layers("palisades_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = (dmg == DESTROYED).to_numpy()
    houses = kind.isin(SINGLE_FAMILY).to_numpy()
    mobile = kind.isin(MOBILE_HOMES).to_numpy()
    schools = (kind == "School").to_numpy()

    hull = palisades_hull(layers)
    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, hull, LA)
    open_with_beds(la, d <= 10_500)
    assert_clear(d, 5500)
    helipad = (la.HELIPAD == "Y").to_numpy()
    assert_clear(d, 10_000, keep=helipad)
    near = d <= 5500
    return {
        "sfr_destroyed": int((houses & destroyed).sum()),
        "one_story_sfr_destroyed": int(((kind == SINGLE_FAMILY[0]).to_numpy() & destroyed).sum()),
        "inspected": len(dins),
        "by_grade": tally(dmg.map(GRADE)),
        "mobile_homes_destroyed": int((mobile & destroyed).sum()),
        "mobile_homes_destroyed_pct": pct((mobile & destroyed).sum(), mobile.sum()),
        "mobile_homes_destroyed_by_type": tally(kind[mobile & destroyed]),
        "schools_destroyed_pct": pct((schools & destroyed).sum(), schools.sum()),
        "nearest_hospital": nearest(la.NAME, d),
        "within_5500m": int(near.sum()),
        "beds_within_5500m": int(la.BEDS[near].sum()),
        "helipad_within_10km": ranked(la.NAME, d, keep=helipad & (d <= 10_000)),
    }


def comparative(layers: Layers) -> dict:
    keys = (
        "destroyed",
        "destroyed_pct",
        "sfr_destroyed",
        "sfr_no_damage",
        "schools_destroyed",
        "damaged_not_destroyed",
        "minor_or_major",
        "hospitals_within_9km",
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
        open_with_beds(la, d <= 9500)
        assert_clear(d, 9000)
        out["destroyed"][fire] = int(destroyed.sum())
        out["destroyed_pct"][fire] = pct(destroyed.sum(), len(dins))
        out["sfr_destroyed"][fire] = int((houses & destroyed).sum())
        out["sfr_no_damage"][fire] = int((houses & (dmg == NONE)).sum())
        out["schools_destroyed"][fire] = int(((kind == "School") & destroyed).sum())
        out["damaged_not_destroyed"][fire] = int(dmg.isin(STANDING).sum())
        out["minor_or_major"][fire] = int(dmg.isin([MINOR, MAJOR]).sum())
        out["hospitals_within_9km"][fire] = int((d <= 9000).sum())
    out["sfr_destroyed_difference"] = out["sfr_destroyed"]["palisades"] - out["sfr_destroyed"]["eaton"]
    return out


def fire_aois(layers: Layers) -> dict:
    """DINS points inside the three fire AOI files (of the structure types no point of which lies near the polygon's
    edge), and hospitals near two of them."""
    eaton, pal = layers("eaton_dins"), layers("palisades_dins")
    la = hospitals(layers, "CA", "LOS ANGELES")

    west = projected_aoi("west_altadena_area.geojson", LA)
    tall = eaton[eaton.STRUCTURETYPE.eq(SINGLE_FAMILY[1])]
    assert_off_edge(geoms(tall, LA), west)
    tall_in_west = tall[touching(tall, west, LA)]

    east = projected_aoi("east_altadena_kinneloa.geojson", LA)
    assert_off_edge(geoms(eaton, LA), east)
    in_east = eaton[touching(eaton, east, LA)]
    d_east = metres(la, east, LA)
    open_with_beds(la, d_east <= 5000)

    village = projected_aoi("palisades_village_aoi.geojson", LA)
    schools = pal[pal.STRUCTURETYPE == "School"]
    assert_off_edge(geoms(schools, LA), village)
    schools_in_village = schools[touching(schools, village, LA)]
    d_village = metres(la, village, LA)
    open_with_beds(la, d_village <= 5000)
    assert_clear(d_village, 4000)
    return {
        "west_altadena_area": {
            "multi_story_sfr_destroyed": int((tall_in_west.DAMAGE == DESTROYED).sum()),
            "multi_story_sfr_no_damage_pct": pct((tall_in_west.DAMAGE == NONE).sum(), len(tall_in_west)),
        },
        "east_altadena_kinneloa": {
            "destroyed": int((in_east.DAMAGE == DESTROYED).sum()),
            "nearest_hospital": nearest(la.NAME, d_east),
        },
        "palisades_village_aoi": {
            "schools": len(schools_in_village),
            "schools_destroyed": int((schools_in_village.DAMAGE == DESTROYED).sum()),
            "hospitals_within_4km": ranked(la.NAME, d_village, keep=d_village <= 4000),
        },
    }


def valencia_aois(layers: Layers) -> dict:
    """The flooded part of the Catarroja sketch, and the dry health facilities of the València AOI file (``valencia``
    checks that every facility is firmly inside or outside the flood)."""
    flood = layers.area("valencia_flood", VALENCIA)
    sketch = projected_aoi("catarroja_east_sketch.geojson", VALENCIA)
    wet = shapely.intersection(sketch, flood)
    south = projected_aoi("valencia_south_area.geojson", VALENCIA)
    health = layers("valencia_health")
    assert_off_edge(geoms(health, VALENCIA), south)
    d = metres(health, flood, VALENCIA)
    inside_south = touching(health, south, VALENCIA)
    return {
        "catarroja_east_sketch": {
            "flooded_ha": hectares(wet),
            "flooded_pct": pct(shapely.area(wet), shapely.area(sketch)),
        },
        "valencia_south_area": {"dry_facilities": ranked(health.equipamien, d, keep=inside_south & (d > 0))},
    }


# --------------------------------------------------------------------------------------------- Maui
def lahaina(layers: Layers) -> dict:
    labels = layers("lahaina_labels")
    cls = labels["class"].to_numpy()
    areas = np.asarray(shapely.area(geoms(labels, MAUI)), dtype=float)
    intact, damaged = cls == "Building", cls == "Damaged Building"

    burn = layers.area("lahaina_burn", MAUI)
    maui = hospitals(layers, "HI", "MAUI")
    dm = metres(maui, burn, MAUI)
    open_with_beds(maui, np.ones(len(maui), dtype=bool))
    return {
        "labels": len(labels),
        "labels_by_class": tally(labels["class"]),
        "damaged": int(damaged.sum()),
        "damaged_pct_of_buildings": pct(damaged.sum(), (intact | damaged).sum()),
        "damaged_total_m2": round(float(areas[damaged].sum()), 1),
        "intact_mean_m2": round(float(areas[intact].mean()), 1),
        "nearest_hospital": nearest(maui.NAME, dm),
        "beds": int(maui.BEDS.sum()),
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
    assert bool(names[consultorio].str.startswith("CONSULTORIO").all())
    assert int(names.str.startswith("CONSULTORIO").sum()) == int(consultorio.sum())
    unclassed = sub.isna().to_numpy()
    assert_clear(d, 1600)
    assert_clear(d, 5000)
    assert_clear(d, 1200, keep=centre | (unclassed & names.str.startswith("CENTRO DE SALUD").to_numpy()))
    farthest_apart(d, centre | (unclassed & names.str.startswith("CENTRO DE SALUD").to_numpy()))
    inside = d == 0
    near = d <= 1600
    far_centre = int(np.argmax(np.where(centre, d, -1.0)))
    return {
        "inside_flood": ranked(names, d, keep=inside),
        "centres_within_1200m": int((centre & (d <= 1200)).sum()),
        "within_1600m": int(near.sum()),
        "within_1600m_pct": pct(near.sum(), len(health)),
        "beyond_5km": ranked(names, d, keep=d > 5000),
        "nearest_dry_consultorio": nearest(names, d, keep=consultorio & ~inside),
        "farthest_centre": ranked(names, d, keep=one_of(len(health), far_centre)),
    }


def catarroja(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    pts, lines, polys = layers("catarroja_points"), layers("catarroja_lines"), layers("catarroja_polygons")

    pharmacies = pts[pts.amenity == "pharmacy"]
    fire_station = polys[polys.amenity == "fire_station"]
    cemetery = polys[polys.landuse == "cemetery"]
    assert len(fire_station) == 1 and len(cemetery) == 1
    assert_firm(np.concatenate([geoms(f, VALENCIA) for f in (pharmacies, fire_station, cemetery)]), flood)
    rail = lines[lines.railway == "rail"]
    orchards = shapely.union_all(geoms(polys[polys.landuse == "orchard"], VALENCIA))
    parks = shapely.union_all(geoms(polys[polys.leisure == "park"], VALENCIA))

    public = layers("catarroja_public")
    damage = public.val_dany.map(euros).to_numpy(dtype=float)
    subsidy = public.subv_apro.map(euros).to_numpy(dtype=float)
    valued = public.val_dany.fillna("").str.strip().ne("").to_numpy()
    cultural = (public.capa == "Centros culturales").to_numpy()
    biggest, smallest = int(np.argmax(damage)), int(np.argmin(np.where(valued, damage, np.inf)))
    assert np.sort(damage)[-2] < damage[biggest] and np.sort(damage[valued])[1] > damage[smallest]
    residencia = (public.titulo == RESIDENCIA).to_numpy()
    assert residencia.sum() == 1
    return {
        "pharmacies": len(pharmacies),
        "pharmacies_any_flooded": bool(touching(pharmacies, flood, VALENCIA).any()),
        "fire_station_flooded": bool(touching(fire_station, flood, VALENCIA).all()),
        "cemetery_flooded": bool(touching(cemetery, flood, VALENCIA).all()),
        "canal_km_in_flood": clipped_km(lines[lines.waterway == "canal"], flood, VALENCIA),
        "ditch_pct_in_flood": wet_share(lines[lines.waterway == "ditch"], flood),
        "rail_km": round(float(shapely.length(geoms(rail, VALENCIA)).sum()) / 1000, 2),
        "rail_km_in_flood": clipped_km(rail, flood, VALENCIA),
        "residential_km_in_flood": clipped_km(lines[lines.highway == "residential"], flood, VALENCIA),
        "orchard_ha_in_flood": hectares(shapely.intersection(orchards, flood)),
        "park_ha_in_flood": hectares(shapely.intersection(parks, flood)),
        "public": len(public),
        "public_by_estado": tally(public.estado),
        "public_education": int((public.capa == "Centros educativos").sum()),
        "public_finished": listing(public.titulo[public.estado == "Finalizado"]),
        "public_largest_damage": listing(public.titulo[one_of(len(public), biggest)]),
        "public_largest_damage_eur": round(float(damage[biggest]), 2),
        "public_smallest_valued": listing(public.titulo[one_of(len(public), smallest)]),
        "public_smallest_valued_eur": round(float(damage[smallest]), 2),
        "public_cultural_damage_eur": round(float(damage[cultural].sum()), 2),
        "public_residencia_gap_eur": round(float(damage[residencia].sum() - subsidy[residencia].sum()), 2),
    }


def heldout10(root: Path | None = None) -> dict:
    """Every expected value of ``bench/heldout10.json``, under one ``heldout10`` key."""
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
    }
    return {"heldout10": values}
