"""Expected values of the second held-out question split (``bench/heldout2.json``), computed from the sample data.

Like the first split (``bench/ground_truth_heldout.py``), the questions were written without looking at how
GeoFaham reads a question, and their values are computed here by code of their own: GeoPandas, shapely and
pyproj only, no import of ``geofaham_plugin`` and none of the other ground-truth modules' helpers
(``bench.ground_truth`` lends only its file table and the data folder's lookup). ``expected_values.compute``
stores the result under ``heldout2`` in ``bench/expected.json`` (``python -m bench ground-truth`` regenerates it).

Definitions (each expectation's description repeats the one it uses):

* DINS ``DAMAGE`` as published: ``No Damage`` (none), ``Affected (1-9%)``, ``Minor (10-25%)``,
  ``Major (26-50%)``, ``Destroyed (>50%)``; **damaged** = any of the last four; **not destroyed** = every
  other point, ``No Damage`` included. A structure is one DINS point; the Eaton layer is the 14 January
  snapshot (5,805 points), the Palisades layer the final one (11,988).
* **structure types**: mobile homes = Mobile Home Single, Double and Triple Wide (Motor Home left out);
  commercial = Commercial Building Single and Multi Story (Mixed Commercial/Residential left out);
  single-family homes = Single Family Residence Single and Multi Story.
* **inside** a polygon: the feature intersects it (a point or polygon on the edge counts).
* **distances**: shortest planar distance between the feature and the polygon in the event's projected
  CRS (EPSG:26911 Los Angeles, EPSG:32604 Maui, EPSG:25830 Valencia), metres; 0 inside. "Within X" is
  ``<= X``, "more than X" is ``> X``. Every threshold is at least 50 m from every feature's distance, and no
  count here depends on whether closed hospitals are counted (every hospital within 12 km of the Eaton
  perimeter is OPEN).
* **hospitals** (Los Angeles, Maui): the HIFLD file's rows with ``STATE == 'CA'`` and ``COUNTY == 'LOS
  ANGELES'``, or ``STATE == 'HI'`` and ``COUNTY == 'MAUI'``. The Eaton fire's area is the adjusted perimeter.
  In València, a hospital is a health-facility point whose name begins with ``HOSPITAL`` and a health centre
  one whose name begins with ``CENTRO DE SALUD``.
* **areas**: of the polygons' union after ``make_valid`` in the projected CRS; km² or ha as asked.
* **shares**: percent of the stated denominator, one decimal."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

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
MOBILE_HOMES = ["Mobile Home Single Wide", "Mobile Home Double Wide", "Mobile Home Triple Wide"]
COMMERCIAL = ["Commercial Building Single Story", "Commercial Building Multi Story"]


# ------------------------------------------------------------------------------------------ reading
class Files:
    """The sample files, read once; invalid geometries made valid, GeoJSON without a crs taken as WGS84."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._read: dict[str, gpd.GeoDataFrame] = {}
        self._unions: dict[tuple[str, int], shapely.Geometry] = {}

    def __call__(self, key: str) -> gpd.GeoDataFrame:
        if key not in self._read:
            gdf = gpd.read_file(self.root / FILES[key])
            if gdf.crs is None:
                gdf = gdf.set_crs(4326)
            gdf["geometry"] = shapely.make_valid(gdf.geometry.values)
            self._read[key] = gdf
        return self._read[key].copy()

    def union(self, key: str, epsg: int) -> shapely.Geometry:
        """The union of a polygon layer in ``epsg``, prepared for repeated predicates."""
        if (key, epsg) not in self._unions:
            merged = shapely.union_all(self(key).to_crs(epsg).geometry.values)
            shapely.prepare(merged)
            self._unions[key, epsg] = merged
        return self._unions[key, epsg]


def projected(gdf: gpd.GeoDataFrame, epsg: int) -> np.ndarray:
    return np.asarray(gdf.to_crs(epsg).geometry.values)


def hits(gdf: gpd.GeoDataFrame, polygon: shapely.Geometry, epsg: int) -> np.ndarray:
    """Boolean mask of the features intersecting ``polygon``."""
    return np.asarray(shapely.intersects(polygon, projected(gdf, epsg)), dtype=bool)


def gap(gdf: gpd.GeoDataFrame, polygon: shapely.Geometry, epsg: int) -> np.ndarray:
    """Metres from each feature to ``polygon`` (0 inside)."""
    return np.asarray(shapely.distance(projected(gdf, epsg), polygon), dtype=float)


def nearest_first(names: pd.Series, dist: np.ndarray, keep: np.ndarray | None = None, k: int | None = None) -> dict:
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


def per_value(values: pd.Series) -> dict[str, int]:
    return {str(k): int(v) for k, v in values.value_counts().sort_index().items()}


def percent(part: float, whole: float) -> float:
    return round(100.0 * float(part) / float(whole), 1)


def la_hospitals(files: Files) -> gpd.GeoDataFrame:
    h = files("hospitals")
    return h[h.STATE.eq("CA") & h.COUNTY.eq("LOS ANGELES")].reset_index(drop=True)


# ---------------------------------------------------------------------------------------- the fires
def eaton(files: Files) -> dict:
    dins = files("eaton_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = dmg == DESTROYED
    damaged = dmg != NONE
    commercial = kind.isin(COMMERCIAL)

    perimeter = files.union("eaton_perimeter", LA)
    hospitals = la_hospitals(files)
    d = gap(hospitals, perimeter, LA)
    acute = (hospitals.TYPE == "GENERAL ACUTE CARE").to_numpy()
    # no count below may depend on closed hospitals: every one within 12 km is open
    assert bool((hospitals.STATUS[d <= 12_000] == "OPEN").all())
    return {
        "inspected": len(dins),
        "no_damage": int((dmg == NONE).sum()),
        "minor": int((dmg == MINOR).sum()),
        "major": int((dmg == MAJOR).sum()),
        "destroyed": int(destroyed.sum()),
        "damaged_not_destroyed": int((damaged & ~destroyed).sum()),
        "no_damage_pct_of_inspected": percent((dmg == NONE).sum(), len(dins)),
        "destroyed_by_type": per_value(kind[destroyed]),
        "commercial_total": int(commercial.sum()),
        "commercial_by_grade": per_value(dmg[commercial].map(GRADE)),
        "perimeter_area_km2": round(float(perimeter.area) / 1e6, 2),
        "hospitals_4_to_6km": nearest_first(hospitals.NAME, d, keep=(d > 4000) & (d <= 6000)),
        "acute_care_within_5km": nearest_first(hospitals.NAME, d, keep=acute & (d <= 5000)),
        "hospitals_within_7km": nearest_first(hospitals.NAME, d, keep=d <= 7000),
    }


def palisades(files: Files) -> dict:
    dins = files("palisades_dins")
    dmg, kind = dins.DAMAGE, dins.STRUCTURETYPE
    destroyed = dmg == DESTROYED
    damaged = dmg != NONE
    mobile = kind.isin(MOBILE_HOMES)
    single_family = kind.isin(SINGLE_FAMILY)
    schools = kind == "School"
    return {
        "inspected": len(dins),
        "no_damage": int((dmg == NONE).sum()),
        "affected": int((dmg == AFFECTED).sum()),
        "affected_or_minor": int(dmg.isin([AFFECTED, MINOR]).sum()),
        "not_destroyed": int((~destroyed).sum()),
        "affected_pct_of_damaged": percent((dmg == AFFECTED).sum(), damaged.sum()),
        "mobile_homes_total": int(mobile.sum()),
        "mobile_homes_by_grade": per_value(dmg[mobile].map(GRADE)),
        "single_family_destroyed_pct": percent((single_family & destroyed).sum(), single_family.sum()),
        "schools_destroyed_pct_of_damaged": percent((schools & destroyed).sum(), (schools & damaged).sum()),
    }


# --------------------------------------------------------------------------------------------- Maui
def lahaina(files: Files) -> dict:
    burn = files.union("lahaina_burn", MAUI)
    labels = files("lahaina_labels")
    damaged = (labels["class"] == "Damaged Building").to_numpy()
    maui = files("hospitals")
    maui = maui[maui.STATE.eq("HI") & maui.COUNTY.eq("MAUI")].reset_index(drop=True)
    return {
        "damaged_labels_outside_burn": int((damaged & ~hits(labels, burn, MAUI)).sum()),
        "burn_area_ha": round(float(burn.area) / 1e4, 1),
        "nearest_hospital": nearest_first(maui.NAME, gap(maui, burn, MAUI), k=1),
    }


# ------------------------------------------------------------------------------------------ Valencia
def valencia(files: Files) -> dict:
    flood = files.union("valencia_flood", VALENCIA)
    health = files("valencia_health")
    names = health.equipamien.astype(str)
    d = gap(health, flood, VALENCIA)
    hospital = names.str.upper().str.startswith("HOSPITAL").to_numpy()
    centre = names.str.upper().str.startswith("CENTRO DE SALUD").to_numpy()
    return {
        "health_inside": nearest_first(names, d, keep=d == 0),
        "hospitals_within_1200m": nearest_first(names, d, keep=hospital & (d <= 1200)),
        "health_centres_within_1500m": nearest_first(names, d, keep=centre & (d <= 1500)),
    }


def catarroja(files: Files) -> dict:
    flood = files.union("valencia_flood", VALENCIA)
    pts, lines, polys = files("catarroja_points"), files("catarroja_lines"), files("catarroja_polygons")
    fire = pd.concat([pts[pts.amenity == "fire_station"], polys[polys.amenity == "fire_station"]])
    clinic = pts[pts.amenity == "clinic"]
    clinic_d = float(gap(clinic, flood, VALENCIA).min())
    bridges = lines[lines.bridge == "yes"]
    buildings = polys[polys.building.notna()]
    public = files("catarroja_public")
    public_d = gap(public, flood, VALENCIA)
    inside = public_d == 0
    return {
        "fire_station_in_flood": bool(hits(fire, flood, VALENCIA).any()),
        "clinic_in_flood": bool(clinic_d == 0.0),
        "clinic_distance_m": round(clinic_d, 1),
        "bridges_in_flood": int(hits(bridges, flood, VALENCIA).sum()),
        "buildings_in_flood": int(hits(buildings, flood, VALENCIA).sum()),
        "public_within_150m": nearest_first(public.titulo, public_d, keep=public_d <= 150),
        "public_inside": int(inside.sum()),
        "public_inside_by_estado": per_value(public.estado[inside]),
    }


def heldout2(root: Path | None = None) -> dict:
    """Every expected value of ``bench/heldout2.json``, under one ``heldout2`` key."""
    files = Files(root or data_dir())
    e, p = eaton(files), palisades(files)
    values = {
        "eaton": e,
        "palisades": p,
        "comparative": {"no_damage": {"eaton": e["no_damage"], "palisades": p["no_damage"]}},
        "lahaina": lahaina(files),
        "valencia": valencia(files),
        "catarroja": catarroja(files),
    }
    return {"heldout2": values}
