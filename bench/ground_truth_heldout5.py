"""Expected values of the fifth held-out question split (``bench/heldout5.json``), computed from the sample data.

Like the first four splits, the questions were written without looking at how GeoFaham reads a question (nothing
under ``geofaham_plugin/core/planning/`` nor the paraphrase suite was read, and the product was not run on them),
and their values are computed here by code of their own: GeoPandas, shapely and pyproj only, no import of
``geofaham_plugin``. The reading, the projection and the small table helpers are the first split's
(``bench.ground_truth_heldout``), the threshold guard and the area/length helpers the third split's
(``bench.ground_truth_heldout3``), the "nearest ones are apart" guard and the Palisades hull the fourth split's
(``bench.ground_truth_heldout4``), imported, not copied. ``expected_values.compute`` stores the result under
``heldout5`` in ``bench/expected.json`` (``python -m bench ground-truth`` regenerates it).

Definitions (each expectation's description repeats the one it uses):

* DINS ``DAMAGE`` as published: ``No Damage`` (none), ``Affected (1-9%)``, ``Minor (10-25%)``,
  ``Major (26-50%)``, ``Destroyed (>50%)``; **damaged** = any of the last four; **damaged but standing** =
  Affected, Minor or Major. A structure is one DINS point; the Eaton layer is the 14 January snapshot (5,805
  points), the Palisades layer the final one (11,988).
* **structure types**: single-family = Single Family Residence Single and Multi Story; multi-family = Multi Family
  Residence Single and Multi Story; mobile homes = Mobile Home Single, Double and Triple Wide; ``Motor Home``,
  ``Mixed Commercial/Residential`` and ``Utility Misc Structure`` (outbuildings) are types of their own. A "home
  of any kind" is a single-family, multi-family or mobile home or a motor home (Eaton has no destroyed Mixed
  Commercial/Residential point, so that type cannot tip the Eaton exclusion).
* **inside** a polygon: the feature intersects it (a point, line or polygon on the edge counts); **outside** /
  **dry**: the rest of the layer.
* **distances**: shortest planar distance between the feature and the polygon in the event's projected CRS
  (EPSG:26911 Los Angeles, EPSG:32604 Maui, EPSG:25830 Valencia), metres; 0 inside. "Within X" is ``<= X``,
  "farther than X" is ``> X``. Every threshold is at least 30 m from every distance it separates
  (``assert_clear``), every "nearest k" at least 30 m nearer than the next candidate (``assert_apart``), and every
  yes/no "is it inside" at least 30 m from flipping (the feature reaches 30 m into the flood, or stays 30 m off).
* **hospitals** (Los Angeles, Maui): the HIFLD file's rows with ``STATE == 'CA'`` and ``COUNTY == 'LOS
  ANGELES'``, or ``STATE == 'HI'`` and ``COUNTY == 'MAUI'`` (every one counted here is OPEN and has a known
  ``BEDS``). The Eaton fire's area is the adjusted perimeter; the Palisades fire's, with no perimeter in the data,
  the convex hull of its Destroyed DINS points. ``OWNER`` as published: for-profit = ``PROPRIETARY``,
  ``NON-PROFIT``, publicly owned = an ``OWNER`` beginning with ``GOVERNMENT`` (federal, state, local,
  district/authority); a helipad is ``HELIPAD == 'Y'``; ``TYPE`` as published.
* València health facilities: a health centre's name begins with ``CENTRO DE SALUD``, a consultorio's with
  ``CONSULTORIO``.
* Catarroja OSM: the three layers of the extract, filtered on the tag the question names (points and polygons
  both where the question says so); lengths of lines clipped to the area (the part inside); areas of the union of
  the polygons clipped to the area.
* Catarroja recovery plan: the municipal public-buildings file; ``val_dany`` read as euros (missing: 0).
* Lahaina labels: ``class`` ``Building`` (intact) and ``Damaged Building``.
* **shares**: percent of the stated denominator, one decimal.
* **AOI files**: the polygons of ``bench/aoi_files.py`` (EPSG:4326), the same a run receives; the new
  ``east_altadena_kinneloa.geojson`` has no DINS point within 11 m of its edge."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import shapely

from .ground_truth import data_dir
from .ground_truth_heldout import (
    AFFECTED,
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
from .ground_truth_heldout4 import assert_apart, palisades_hull

STANDING = [AFFECTED, MINOR, MAJOR]
MOTOR_HOME = "Motor Home"
MIXED_USE = "Mixed Commercial/Residential"
HOMES = SINGLE_FAMILY + MULTI_FAMILY + MOBILE_HOMES + [MOTOR_HOME]
NEW_AOI = "east_altadena_kinneloa.geojson"


def assert_firmly(geometry: shapely.Geometry, area: shapely.Geometry, inside: bool) -> None:
    """A yes/no 'is it inside' that a projection's few metres cannot flip: the feature reaches at least
    ``CLEARANCE`` into the area (it still meets the area shrunk by that much), or stays that far off."""
    if inside:
        assert bool(shapely.intersects(geometry, shapely.buffer(area, -CLEARANCE))), "barely inside"
    else:
        assert float(shapely.distance(geometry, area)) >= CLEARANCE, "barely outside"


def owner_public(owner: object) -> bool:
    return str(owner).startswith("GOVERNMENT")


# ---------------------------------------------------------------------------------------- the fires
def eaton(layers: Layers) -> dict:
    dins = layers("eaton_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = (dmg == DESTROYED).to_numpy()
    multi_family = kind.isin(MULTI_FAMILY).to_numpy()
    single_family = kind.isin(SINGLE_FAMILY).to_numpy()
    one_story = (kind == SINGLE_FAMILY[0]).to_numpy()
    multi_story = (kind == SINGLE_FAMILY[1]).to_numpy()
    damaged = (dmg != NONE).to_numpy()
    none = (dmg == NONE).to_numpy()
    assert int(((kind == MIXED_USE).to_numpy() & destroyed).sum()) == 0

    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, layers.area("eaton_perimeter", LA), LA)
    assert bool((la.STATUS[d <= 12_000] == "OPEN").all()) and bool((la.BEDS[d <= 12_000] > 0).all())
    nonprofit = (la.OWNER == "NON-PROFIT").to_numpy()
    proprietary = (la.OWNER == "PROPRIETARY").to_numpy()
    acute = (la.TYPE == "GENERAL ACUTE CARE").to_numpy()
    helipad = (la.HELIPAD == "Y").to_numpy()
    big = (la.BEDS > 300).to_numpy()
    assert not bool(((la.BEDS > 270) & (la.BEDS < 330) & (d <= 12_000)).any())  # no bed count near the 300 cut
    assert_clear(d, 5000, keep=nonprofit)
    assert_apart(d, proprietary, 2)
    assert_clear(d, 8000, keep=acute & helipad)
    assert_clear(d, 10_000, keep=big)
    acute_helipad_8km = acute & helipad & (d <= 8000)
    return {
        "multi_family_total": int(multi_family.sum()),
        "multi_family_by_grade": tally(dmg[multi_family].map(GRADE)),
        "not_a_home_destroyed": int((destroyed & ~kind.isin(HOMES).to_numpy()).sum()),
        "multi_story_sfr_destroyed_pct_of_damaged": pct((multi_story & destroyed).sum(), (multi_story & damaged).sum()),
        "not_single_family_no_damage": int((~single_family & none).sum()),
        "one_story_sfr_destroyed_pct": pct((one_story & destroyed).sum(), one_story.sum()),
        "nonprofit_within_5km": ranked(la.NAME, d, keep=nonprofit & (d <= 5000)),
        "proprietary_nearest_2": ranked(la.NAME, d, keep=proprietary, k=2),
        "acute_helipad_within_8km": int(acute_helipad_8km.sum()),
        "acute_helipad_beds_within_8km": int(la.BEDS[acute_helipad_8km].sum()),
        "over_300_beds_within_10km": ranked(la.NAME, d, keep=big & (d <= 10_000)),
    }


def palisades(layers: Layers) -> dict:
    dins = layers("palisades_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = dmg == DESTROYED
    standing = dmg.isin(STANDING)
    mixed = kind == MIXED_USE
    double_wide = kind == MOBILE_HOMES[1]
    multi_story_sfr = kind == SINGLE_FAMILY[1]

    hull = palisades_hull(layers)
    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, hull, LA)
    assert bool((la.STATUS[d <= 12_000] == "OPEN").all()) and bool((la.BEDS[d <= 12_000] > 0).all())
    public = la.OWNER.map(owner_public).to_numpy(dtype=bool)
    psychiatric = (la.TYPE == "PSYCHIATRIC").to_numpy()
    acute = (la.TYPE == "GENERAL ACUTE CARE").to_numpy()
    no_helipad = (la.HELIPAD == "N").to_numpy()
    assert_clear(d, 6000, keep=public)
    assert_apart(d, ~psychiatric, 3)
    assert_apart(d, acute & no_helipad, 2)
    public_6km = public & (d <= 6000)
    return {
        "mixed_use_total": int(mixed.sum()),
        "mixed_use_by_grade": tally(dmg[mixed].map(GRADE)),
        "double_wide_destroyed_pct": pct((double_wide & destroyed).sum(), double_wide.sum()),
        "multi_story_multi_family_standing": int(((kind == MULTI_FAMILY[1]) & standing).sum()),
        "multi_story_sfr_no_damage_pct": pct((multi_story_sfr & (dmg == NONE)).sum(), multi_story_sfr.sum()),
        "outbuildings_standing": int(((kind == UTILITY) & standing).sum()),
        "schools_standing": int(((kind == "School") & standing).sum()),
        "public_within_6km": ranked(la.NAME, d, keep=public_6km),
        "public_beds_within_6km": int(la.BEDS[public_6km].sum()),
        "non_psychiatric_nearest_3": ranked(la.NAME, d, keep=~psychiatric, k=3),
        "acute_no_helipad_nearest_2": ranked(la.NAME, d, keep=acute & no_helipad, k=2),
    }


def comparative(layers: Layers) -> dict:
    out: dict[str, dict] = {
        k: {} for k in ("motor_homes_destroyed", "multi_family_destroyed", "infrastructure_destroyed", "minor")
    }
    out["single_family_destroyed_pct"] = {}
    for fire in ("eaton", "palisades"):
        dins = layers(f"{fire}_dins")
        kind, destroyed = dins.STRUCTURETYPE, dins.DAMAGE == DESTROYED
        single_family = kind.isin(SINGLE_FAMILY)
        out["motor_homes_destroyed"][fire] = int(((kind == MOTOR_HOME) & destroyed).sum())
        out["multi_family_destroyed"][fire] = int((kind.isin(MULTI_FAMILY) & destroyed).sum())
        out["infrastructure_destroyed"][fire] = int(((kind == "Infrastructure") & destroyed).sum())
        out["minor"][fire] = int((dins.DAMAGE == MINOR).sum())
        out["single_family_destroyed_pct"][fire] = pct((single_family & destroyed).sum(), single_family.sum())
    return out


def fire_aois(layers: Layers) -> dict:
    """Inside the three fire AOI files (the DINS points their polygons intersect), and hospitals near the new one."""
    east = projected_aoi(NEW_AOI, LA)
    eaton = layers("eaton_dins")
    assert float(np.min(shapely.distance(geoms(eaton, LA), shapely.boundary(east)))) > 10.0
    inside = eaton[touching(eaton, east, LA)]
    destroyed = inside.DAMAGE == DESTROYED
    single_family = inside.STRUCTURETYPE.isin(SINGLE_FAMILY)
    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, east, LA)
    acute = (la.TYPE == "GENERAL ACUTE CARE").to_numpy()
    assert_apart(d, acute, 1)

    west = projected_aoi("west_altadena_area.geojson", LA)
    in_west = eaton[touching(eaton, west, LA)]
    sheds = in_west[in_west.STRUCTURETYPE == UTILITY]

    village = projected_aoi("palisades_village_aoi.geojson", LA)
    pal = layers("palisades_dins")
    in_village = pal[touching(pal, village, LA)]
    multi = in_village[in_village.STRUCTURETYPE.isin(MULTI_FAMILY)]
    return {
        "east_altadena_kinneloa": {
            "inside": len(inside),
            "destroyed": int(destroyed.sum()),
            "no_damage": int((inside.DAMAGE == NONE).sum()),
            "destroyed_by_type": tally(inside.STRUCTURETYPE[destroyed]),
            "single_family_destroyed_pct": pct((single_family & destroyed).sum(), single_family.sum()),
            "nearest_acute": ranked(la.NAME, d, keep=acute, k=1),
        },
        "west_altadena_area": {
            "outbuildings": len(sheds),
            "outbuildings_destroyed_pct": pct((sheds.DAMAGE == DESTROYED).sum(), len(sheds)),
        },
        "palisades_village_aoi": {
            "multi_family_destroyed": int((multi.DAMAGE == DESTROYED).sum()),
            "multi_family_no_damage": int((multi.DAMAGE == NONE).sum()),
        },
    }


# --------------------------------------------------------------------------------------------- Maui
def lahaina(layers: Layers) -> dict:
    burn = layers.area("lahaina_burn", MAUI)
    labels = layers("lahaina_labels")
    intact = labels["class"].to_numpy() == "Building"
    d = metres(labels, burn, MAUI)
    intact_in = shapely.intersection(shapely.union_all(geoms(labels[intact], MAUI)), burn)
    maui = hospitals(layers, "HI", "MAUI")
    dm = metres(maui, burn, MAUI)
    assert_clear(dm, 30_000)
    near = dm <= 30_000
    assert bool((maui.BEDS[near] > 0).all())
    return {
        "intact": int(intact.sum()),
        "intact_touching_pct": pct((intact & (d == 0)).sum(), intact.sum()),
        "intact_area_in_burn_m2": round(float(shapely.area(intact_in)), 1),
        "hospitals_within_30km": int(near.sum()),
        "beds_within_30km": int(maui.BEDS[near].sum()),
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
    assert_clear(d, 5000)
    assert_apart(d, centre & (d > 0), 2)
    assert_clear(d, 500, keep=consultorio)
    return {
        "beyond_5km": ranked(names, d, keep=d > 5000),
        "dry_health_centres_nearest_2": ranked(names, d, keep=centre & (d > 0), k=2),
        "consultorios_within_500m": ranked(names, d, keep=consultorio & (d <= 500)),
    }


def valencia_south_area(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    area = projected_aoi("valencia_south_area.geojson", VALENCIA)
    wet = shapely.intersection(area, flood)
    return {"flooded_km2": km2(wet), "flooded_pct": pct(shapely.area(wet), shapely.area(area))}


def catarroja_sketch(layers: Layers) -> dict:
    area = projected_aoi("catarroja_east_sketch.geojson", VALENCIA)
    lines, pts = layers("catarroja_lines"), layers("catarroja_points")
    crossings = pts[pts.highway == "crossing"]
    near_edge = np.asarray(shapely.distance(geoms(crossings, VALENCIA), shapely.boundary(area))) < 5.0
    assert not bool(near_edge.any())  # (which of them the flood reached turns on metres: not asked)
    return {
        "tertiary_km": clipped_km(lines[lines.highway == "tertiary"], area, VALENCIA),
        "crossings": int(touching(crossings, area, VALENCIA).sum()),
    }


def catarroja(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    pts, lines, polys = layers("catarroja_points"), layers("catarroja_lines"), layers("catarroja_polygons")

    pumps = [df[df.man_made == "pumping_station"] for df in (pts, polys)]
    pump_names = np.concatenate([df.name.astype(str).to_numpy() for df in pumps])
    pump_wet = np.concatenate([touching(df, flood, VALENCIA) for df in pumps])
    orchards = shapely.union_all(geoms(polys[polys.landuse == "orchard"], VALENCIA))
    nurseries = touching(polys[polys.landuse == "plant_nursery"], flood, VALENCIA)
    pitches = polys[polys.leisure == "pitch"]
    wet_pitches = touching(pitches, flood, VALENCIA)
    station = pts[pts.railway == "station"]
    university = polys[polys.amenity == "university"]
    assert len(station) == 1 and len(university) == 1
    station_geom, university_geom = geoms(station, VALENCIA)[0], geoms(university, VALENCIA)[0]
    station_in = bool(shapely.intersects(station_geom, flood))
    university_in = bool(shapely.intersects(university_geom, flood))
    assert_firmly(station_geom, flood, station_in)
    assert_firmly(university_geom, flood, university_in)

    public = layers("catarroja_public")
    public_in = touching(public, flood, VALENCIA)
    dist = metres(public, flood, VALENCIA)
    prevista = (public.estado == "Prevista").to_numpy()
    ejecucion = (public.estado == "En ejecución").to_numpy()
    education = (public.capa == "Centros educativos").to_numpy()
    culture_house = (public.titulo == "Casa Cultura").to_numpy()
    assert culture_house.sum() == 1
    assert_firmly(geoms(public[culture_house], VALENCIA)[0], flood, bool(public_in[culture_house][0]))
    return {
        "tertiary_km_in_flood": clipped_km(lines[lines.highway == "tertiary"], flood, VALENCIA),
        "footway_km_in_flood": clipped_km(lines[lines.highway == "footway"], flood, VALENCIA),
        "stream_km_in_flood": clipped_km(lines[lines.waterway == "stream"], flood, VALENCIA),
        "pumping_stations_in_flood": int(pump_wet.sum()),
        "pumping_stations_in_flood_names": sorted(pump_names[pump_wet].tolist()),
        "pumping_stations_dry": int((~pump_wet).sum()),
        "orchard_ha_in_flood": hectares(shapely.intersection(orchards, flood)),
        "pitches_in_flood_pct": pct(wet_pitches.sum(), len(pitches)),
        "nurseries_in_flood": int(nurseries.sum()),
        "nurseries_dry": int((~nurseries).sum()),
        "station_in_flood": station_in,
        "station_distance_m": round(float(shapely.distance(station_geom, flood)), 1),
        "university_in_flood": university_in,
        "public_prevista_in_flood": int((prevista & public_in).sum()),
        "public_prevista_in_flood_eur": round(sum(euros(v) for v in public.val_dany[prevista & public_in]), 2),
        "public_en_ejecucion": int(ejecucion.sum()),
        "public_en_ejecucion_eur": round(sum(euros(v) for v in public.val_dany[ejecucion]), 2),
        "public_education_dry": ranked(public.titulo, dist, keep=education & ~public_in),
        "culture_house_in_flood": bool(public_in[culture_house][0]),
        "culture_house_distance_m": round(float(dist[culture_house][0]), 1),
    }


def heldout5(root: Path | None = None) -> dict:
    """Every expected value of ``bench/heldout5.json``, under one ``heldout5`` key."""
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
    return {"heldout5": values}
