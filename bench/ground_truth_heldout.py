"""Expected values of the held-out question split (``bench/heldout.json``), computed from the sample data.

The held-out questions were written without looking at how GeoFaham reads a question, and their values are
computed here by code of their own: GeoPandas, shapely and pyproj only, no import of ``geofaham_plugin``
and none of the other ground-truth modules' helpers (``bench.ground_truth`` lends only its file table and
the data folder's lookup). ``expected_values.compute`` stores the result under ``heldout`` in
``bench/expected.json`` (``python -m bench ground-truth`` regenerates it).

Definitions (each expectation's description repeats the one it uses):

* DINS ``DAMAGE`` as published: ``No Damage`` (none), ``Affected (1-9%)``, ``Minor (10-25%)``,
  ``Major (26-50%)``, ``Destroyed (>50%)``; **damaged** = any of the last four; **not destroyed** = every
  other point, ``No Damage`` included. A structure is one DINS point; the Eaton layer is the 14 January
  snapshot (5,805 points), the Palisades layer the final one (11,988).
* **inside** a polygon: the feature intersects it (a point or polygon on the edge counts); **outside**: the
  rest of the layer.
* **distances**: shortest planar distance between the feature and the polygon in the event's projected
  CRS (EPSG:26911 Los Angeles, EPSG:32604 Maui, EPSG:25830 Valencia), metres; 0 inside. "Within X" is
  ``<= X``, "farther than X" is ``> X``. Every threshold was chosen with no feature within a few metres of it.
* **hospitals** (Los Angeles, Maui): the HIFLD file's rows with ``STATE == 'CA'`` and ``COUNTY == 'LOS
  ANGELES'``, or ``STATE == 'HI'`` and ``COUNTY == 'MAUI'``, as ``bench/ground_truth.py`` filters them.
  The Eaton fire's area is the adjusted perimeter; Palisades has no perimeter and is asked about its
  DINS points only.
* **areas / lengths**: of the polygons' union after ``make_valid`` (lines clipped to it) in the
  projected CRS; km², ha or km as the question asks.
* **shares**: percent of the stated denominator, one decimal.
* **AOI files**: the polygons of ``bench/aoi_files.py`` (EPSG:4326), the same a run receives."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from .aoi_files import aoi_polygon
from .ground_truth import FILES, data_dir

LA, MAUI, VALENCIA = 26911, 32604, 25830
NONE, AFFECTED, MINOR, MAJOR, DESTROYED = (
    "No Damage",
    "Affected (1-9%)",
    "Minor (10-25%)",
    "Major (26-50%)",
    "Destroyed (>50%)",
)
GRADE = {NONE: "none", AFFECTED: "affected", MINOR: "minor", MAJOR: "major", DESTROYED: "destroyed"}
SINGLE_FAMILY = ["Single Family Residence Single Story", "Single Family Residence Multi Story"]
MULTI_FAMILY = ["Multi Family Residence Single Story", "Multi Family Residence Multi Story"]
MOBILE_HOMES = ["Mobile Home Single Wide", "Mobile Home Double Wide", "Mobile Home Triple Wide"]
COMMERCIAL = ["Commercial Building Single Story", "Commercial Building Multi Story"]
UTILITY = "Utility Misc Structure"
EDUCATION = ["school", "college", "university", "kindergarten", "childcare"]


# ------------------------------------------------------------------------------------------ reading
class Layers:
    """The sample files, read once; invalid geometries made valid, GeoJSON without a crs taken as WGS84."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._read: dict[str, gpd.GeoDataFrame] = {}
        self._areas: dict[tuple[str, int], shapely.Geometry] = {}

    def __call__(self, key: str) -> gpd.GeoDataFrame:
        if key not in self._read:
            gdf = gpd.read_file(self.root / FILES[key])
            if gdf.crs is None:
                gdf = gdf.set_crs(4326)
            gdf["geometry"] = shapely.make_valid(gdf.geometry.values)
            self._read[key] = gdf
        return self._read[key].copy()

    def area(self, key: str, epsg: int) -> shapely.Geometry:
        """The union of a polygon layer, in ``epsg`` (prepared for repeated predicates)."""
        if (key, epsg) not in self._areas:
            union = shapely.union_all(self(key).to_crs(epsg).geometry.values)
            shapely.prepare(union)
            self._areas[key, epsg] = union
        return self._areas[key, epsg]


def geoms(gdf: gpd.GeoDataFrame, epsg: int) -> np.ndarray:
    return np.asarray(gdf.to_crs(epsg).geometry.values)


def touching(gdf: gpd.GeoDataFrame, area: shapely.Geometry, epsg: int) -> np.ndarray:
    """Boolean mask: the feature intersects ``area`` (the area first: shapely uses its prepared form)."""
    return np.asarray(shapely.intersects(area, geoms(gdf, epsg)), dtype=bool)


def metres(gdf: gpd.GeoDataFrame, area: shapely.Geometry, epsg: int) -> np.ndarray:
    return np.asarray(shapely.distance(geoms(gdf, epsg), area), dtype=float)


def ranked(names: pd.Series, dist: np.ndarray, keep: np.ndarray | None = None, k: int | None = None) -> dict:
    """``{"count", "names", "distances_m"}`` of the kept features, nearest first (stable on ties)."""
    table = pd.DataFrame({"name": names.astype(str).to_numpy(), "d": np.round(dist, 1)})
    if keep is not None:
        table = table[keep]
    table = table.sort_values("d", kind="stable")
    if k is not None:
        table = table.head(k)
    return {
        "count": len(table),
        "names": table.name.tolist(),
        "distances_m": {str(n): float(d) for n, d in zip(table.name, table.d, strict=True)},
    }


def listing(names: Any) -> dict:
    """``{"count", "names"}`` of a set of features: how many, and their names sorted (unnamed ones counted only)."""
    values = list(names)
    return {"count": len(values), "names": sorted(str(n) for n in values if isinstance(n, str) and n)}


def tally(values: pd.Series) -> dict[str, int]:
    return {str(k): int(v) for k, v in values.value_counts().sort_index().items()}


def pct(part: int | float, whole: int | float) -> float:
    return round(100.0 * float(part) / float(whole), 1)


def euros(text: Any) -> float:
    """'1.750.000,00 €' -> 1750000.0; missing -> 0."""
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return 0.0
    digits = re.sub(r"[^0-9,.]", "", str(text)).replace(".", "").replace(",", ".")
    return float(digits) if digits else 0.0


def hospitals(layers: Layers, state: str, county: str) -> gpd.GeoDataFrame:
    h = layers("hospitals")
    return h[h.STATE.eq(state) & h.COUNTY.eq(county)].reset_index(drop=True)


# ---------------------------------------------------------------------------------------- the fires
def dins_counts(dins: gpd.GeoDataFrame) -> dict:
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    damaged = dmg != NONE
    destroyed = dmg == DESTROYED
    schools = kind == "School"
    return {
        "inspected": len(dins),
        "destroyed": int(destroyed.sum()),
        "no_damage": int((dmg == NONE).sum()),
        "not_destroyed": int((~destroyed).sum()),
        "damaged": int(damaged.sum()),
        "damaged_not_destroyed": int((damaged & ~destroyed).sum()),
        "minor_or_major": int(dmg.isin([MINOR, MAJOR]).sum()),
        "affected": int((dmg == AFFECTED).sum()),
        "by_grade": tally(dmg.map(GRADE)),
        "destroyed_pct_of_inspected": pct(destroyed.sum(), len(dins)),
        "no_damage_pct_of_inspected": pct((dmg == NONE).sum(), len(dins)),
        "destroyed_pct_of_damaged": pct(destroyed.sum(), damaged.sum()),
        "schools_destroyed": int((schools & destroyed).sum()),
        "schools_damaged": int((schools & damaged).sum()),
        "schools_no_damage": int((schools & ~damaged).sum()),
        "single_family_destroyed": int((kind.isin(SINGLE_FAMILY) & destroyed).sum()),
        "single_family_single_story_destroyed": int(((kind == SINGLE_FAMILY[0]) & destroyed).sum()),
        "single_family_multi_story_destroyed": int(((kind == SINGLE_FAMILY[1]) & destroyed).sum()),
        "single_story_sfr_pct_of_destroyed": pct(((kind == SINGLE_FAMILY[0]) & destroyed).sum(), destroyed.sum()),
        "commercial_destroyed": int((kind.isin(COMMERCIAL) & destroyed).sum()),
        "mobile_homes_destroyed": int((kind.isin(MOBILE_HOMES) & destroyed).sum()),
        "damaged_without_utility": int((damaged & (kind != UTILITY)).sum()),
        "destroyed_without_utility": int((destroyed & (kind != UTILITY)).sum()),
        "no_damage_by_type": tally(kind[dmg == NONE]),
        "church_by_grade": tally(dmg[kind == "Church"].map(GRADE)),
        "multi_family_total": int(kind.isin(MULTI_FAMILY).sum()),
        "multi_family_by_grade": tally(dmg[kind.isin(MULTI_FAMILY)].map(GRADE)),
    }


def fires(layers: Layers) -> dict:
    eaton, pal = layers("eaton_dins"), layers("palisades_dins")
    perimeter = layers.area("eaton_perimeter", LA)
    la = hospitals(layers, "CA", "LOS ANGELES")
    d = metres(la, perimeter, LA)
    eaton_out = dins_counts(eaton)
    outside = ~touching(eaton, perimeter, LA)
    eaton_out |= {
        "destroyed_outside_perimeter": int((outside & (eaton.DAMAGE == DESTROYED).to_numpy()).sum()),
        "nearest_hospital": ranked(la.NAME, d, k=1),
        "nearest_hospitals_3": ranked(la.NAME, d, k=3),
        "hospitals_within_2km": ranked(la.NAME, d, keep=d <= 2000),
        "any_hospital_within_2km": bool((d <= 2000).any()),
        "hospitals_within_4km": ranked(la.NAME, d, keep=d <= 4000),
        "hospitals_5_to_10km": ranked(la.NAME, d, keep=(d > 5000) & (d <= 10_000)),
    }
    pal_out = dins_counts(pal)
    comparative = {
        "schools_destroyed": {"eaton": eaton_out["schools_destroyed"], "palisades": pal_out["schools_destroyed"]},
        "destroyed_pct_of_inspected": {
            "eaton": eaton_out["destroyed_pct_of_inspected"],
            "palisades": pal_out["destroyed_pct_of_inspected"],
        },
    }
    return {"eaton": eaton_out, "palisades": pal_out, "comparative": comparative}


def aoi_files(layers: Layers) -> dict:
    """Inside the two AOI files of ``bench/aoi_files.py`` (EPSG:4326 polygons)."""
    out: dict[str, dict] = {}
    la = hospitals(layers, "CA", "LOS ANGELES")
    for name, key in (
        ("west_altadena_area.geojson", "eaton_dins"),
        ("palisades_village_aoi.geojson", "palisades_dins"),
    ):
        area = aoi_polygon(name)
        dins = layers(key).to_crs(4326)
        inside = dins[np.asarray(shapely.intersects(area, dins.geometry.values), dtype=bool)]
        destroyed = inside.DAMAGE == DESTROYED
        area_m = gpd.GeoSeries([area], crs=4326).to_crs(LA).iloc[0]
        out[name.split(".")[0]] = {
            "structures": len(inside),
            "destroyed": int(destroyed.sum()),
            "no_damage": int((inside.DAMAGE == NONE).sum()),
            "by_grade": tally(inside.DAMAGE.map(GRADE)),
            "destroyed_pct": pct(destroyed.sum(), len(inside)),
            "destroyed_by_type": tally(inside.STRUCTURETYPE[destroyed]),
            "nearest_hospital": ranked(la.NAME, metres(la, area_m, LA), k=1),
        }
    return out


# --------------------------------------------------------------------------------------------- Maui
def lahaina(layers: Layers) -> dict:
    burn = layers.area("lahaina_burn", MAUI)
    labels = layers("lahaina_labels")
    in_burn = touching(labels, burn, MAUI)
    cls = labels["class"].to_numpy()
    damaged_in = int((in_burn & (cls == "Damaged Building")).sum())
    intact_in = int((in_burn & (cls == "Building")).sum())
    damaged_area = float(shapely.area(shapely.union_all(geoms(labels[cls == "Damaged Building"], MAUI))))
    maui = hospitals(layers, "HI", "MAUI")
    d = metres(maui, burn, MAUI)
    return {
        "damaged_labels_in_burn": damaged_in,
        "intact_labels_in_burn": intact_in,
        "damaged_pct_of_building_labels_in_burn": pct(damaged_in, damaged_in + intact_in),
        "damaged_labels_area_m2": round(damaged_area, 1),
        "hospitals_beyond_30km": ranked(maui.NAME, d, keep=d > 30_000),
    }


# ------------------------------------------------------------------------------------------ Valencia
def valencia(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    aoi03 = layers.area("valencia_aoi03", VALENCIA)
    health = layers("valencia_health")
    names = health.equipamien.astype(str)
    d = metres(health, flood, VALENCIA)
    consultorio = names.str.upper().str.startswith("CONSULTORIO").to_numpy()
    hospital = names.str.upper().str.startswith("HOSPITAL").to_numpy()
    flood_in_aoi03 = flood.intersection(aoi03).area
    return {
        "health_within_250m": ranked(names, d, keep=d <= 250),
        "consultorios_inside": ranked(names, d, keep=consultorio & (d == 0)),
        "nearest_3_outside": ranked(names, d, keep=d > 0, k=3),
        "health_beyond_1500m": int((d > 1500).sum()),
        "nearest_hospital": ranked(names, d, keep=hospital, k=1),
        "aoi03_flooded_pct": pct(flood_in_aoi03, aoi03.area),
        "flood_outside_aoi03_km2": round(flood.difference(aoi03).area / 1e6, 2),
    }


def catarroja(layers: Layers) -> dict:
    flood = layers.area("valencia_flood", VALENCIA)
    pts, lines, polys = layers("catarroja_points"), layers("catarroja_lines"), layers("catarroja_polygons")

    pharmacies = pts[pts.amenity == "pharmacy"].reset_index(drop=True)
    ph_d = metres(pharmacies, flood, VALENCIA)
    stops = pts[pts.highway == "bus_stop"]
    residential = lines[lines.highway == "residential"]
    tracks = lines[lines.highway == "track"]
    rail = lines[lines.railway == "rail"]
    edu = pd.concat([polys[polys.amenity.isin(EDUCATION)], pts[pts.amenity.isin(EDUCATION)]])
    fuel = pd.concat([polys[polys.amenity == "fuel"], pts[pts.amenity == "fuel"]])
    townhall = pts[pts.amenity == "townhall"]
    th_d = float(metres(townhall, flood, VALENCIA).min())
    farmland = polys[polys.landuse == "farmland"]
    parks = polys[polys.leisure == "park"]
    public = layers("catarroja_public")
    public_in = touching(public, flood, VALENCIA)
    educational = (public.capa == "Centros educativos").to_numpy()
    return {
        "pharmacies_inside": int((ph_d == 0).sum()),
        "nearest_pharmacy": ranked(pharmacies["name"], ph_d, k=1),
        "bus_stops_within_100m": int((metres(stops, flood, VALENCIA) <= 100).sum()),
        "residential_in_flood": int(touching(residential, flood, VALENCIA).sum()),
        "track_km_in_flood": round(
            float(shapely.length(shapely.intersection(geoms(tracks, VALENCIA), flood)).sum()) / 1000, 2
        ),
        "rail_in_flood": int(touching(rail, flood, VALENCIA).sum()),
        "education_outside": listing(edu["name"][~touching(edu, flood, VALENCIA)]),
        "fuel_in_flood": listing(fuel["name"][touching(fuel, flood, VALENCIA)]),
        "townhall_in_flood": bool(th_d == 0.0),
        "townhall_distance_m": round(th_d, 1),
        "farmland_in_flood_ha": round(
            float(shapely.area(shapely.intersection(shapely.union_all(geoms(farmland, VALENCIA)), flood))) / 1e4, 1
        ),
        "parks_in_flood": int(touching(parks, flood, VALENCIA).sum()),
        "public_outside": listing(public.titulo[~public_in]),
        "public_inside": listing(public.titulo[public_in]),
        "public_inside_by_capa": tally(public.capa[public_in]),
        "public_educational_inside": listing(public.titulo[public_in & educational]),
        "public_educational_inside_eur": round(sum(euros(v) for v in public.val_dany[public_in & educational]), 2),
    }


def heldout(root: Path | None = None) -> dict:
    """Every expected value of ``bench/heldout.json``, under one ``heldout`` key."""
    layers = Layers(root or data_dir())
    values = fires(layers)
    values["aoi"] = aoi_files(layers)
    values["lahaina"] = lahaina(layers)
    values["valencia"] = valencia(layers)
    values["catarroja"] = catarroja(layers)
    return {"heldout": values}
