"""Expected values of the constraint variants of ``bench/paraphrases.json`` (other distances, damage
classes, groupings, shares, areas, "outside" counts, AOI files), computed from the sample data.

Independent of GeoFaham like ``bench/ground_truth.py`` (whose file table, loader and class names it
uses): GeoPandas, shapely and pyproj only. ``expected_values.compute`` adds the result under
``variants`` in ``bench/expected.json`` (``python -m bench ground-truth`` regenerates it).

Definitions:

* DINS damage classes: ``DAMAGE`` as published — ``No Damage`` (none), ``Affected (1-9%)``,
  ``Minor (10-25%)``, ``Major (26-50%)``, ``Destroyed (>50%)``; **damaged** = any of the last four
  (``ground_truth.DAMAGED``); structures are DINS points, every point counts once.
* **inside / outside** a polygon: a feature intersects it (a point on the edge is inside); outside =
  the rest of the layer.
* **distances**: shortest distance from each feature to the hazard polygon, in the event's UTM /
  ETRS89 zone (EPSG:32611 Los Angeles, EPSG:25830 Valencia), in metres; "within X" is ``<= X``.
* **areas**: geodesic, on the WGS84 ellipsoid (``pyproj.Geod.geometry_area_perimeter``) of the
  polygons' union in EPSG:4326 after ``make_valid``; km², two decimals.
* **shares**: percent of the stated denominator, one decimal.
* **AOI files**: the polygons of ``bench/aoi_files.py`` (EPSG:4326)."""

from __future__ import annotations

import geopandas as gpd
import shapely
from pyproj import Geod

from .aoi_files import aoi_polygon
from .ground_truth import (
    DAMAGE_CLASS,
    DAMAGED,
    DESTROYED,
    LA_UTM,
    VALENCIA_UTM,
    Data,
    intersecting,
    named_distances,
    summary,
    union,
    value_counts,
)

GEOD = Geod(ellps="WGS84")


def geodesic_area_km2(gdf: gpd.GeoDataFrame) -> float:
    """Geodesic area (km²) of the union of a layer's polygons, on the WGS84 ellipsoid."""
    geom = shapely.union_all(shapely.make_valid(gdf.to_crs(4326).geometry.values))
    area, _ = GEOD.geometry_area_perimeter(geom)
    return round(abs(area) / 1e6, 2)


def pct(part: int, whole: int) -> float:
    return round(100 * part / whole, 1)


def la_variants(d: Data) -> dict:
    perimeter_gdf = d.vector("eaton_perimeter")
    perimeter = union(perimeter_gdf, LA_UTM)
    eaton, pal = d.vector("eaton_dins"), d.vector("palisades_dins")
    hospitals = d.vector("hospitals")
    la_hosp = hospitals[(hospitals.STATE == "CA") & (hospitals.COUNTY == "LOS ANGELES")]
    inside = intersecting(eaton, perimeter, LA_UTM)
    outside = eaton.drop(index=inside.index)
    p_destroyed = pal[pal.DAMAGE == DESTROYED]
    hull = shapely.union_all(p_destroyed.to_crs(LA_UTM).geometry.values).convex_hull
    eaton_damaged = eaton[eaton.DAMAGE.isin(DAMAGED)]
    return {
        "eaton_hospitals_within_3km": summary(named_distances(la_hosp, perimeter, LA_UTM, "NAME", limit=3000)),
        "eaton_hospitals_within_10km": summary(named_distances(la_hosp, perimeter, LA_UTM, "NAME", limit=10_000)),
        "palisades_hospitals_within_10km": len(named_distances(la_hosp, hull, LA_UTM, "NAME", limit=10_000)),
        "palisades_major": int((pal.DAMAGE == "Major (26-50%)").sum()),
        "eaton_affected_or_minor": int(eaton.DAMAGE.isin(["Affected (1-9%)", "Minor (10-25%)"]).sum()),
        "palisades_by_class": value_counts(pal.DAMAGE.map(DAMAGE_CLASS)),
        "eaton_damaged_by_structure_type": value_counts(eaton_damaged.STRUCTURETYPE),
        "palisades_destroyed_pct_of_inspected": pct(len(p_destroyed), len(pal)),
        "eaton_destroyed_pct_inside_perimeter": pct(int((inside.DAMAGE == DESTROYED).sum()), len(inside)),
        "eaton_perimeter_area_km2": geodesic_area_km2(perimeter_gdf),
        "eaton_dins_outside_perimeter": len(outside),
        "eaton_damaged_outside_perimeter": int(outside.DAMAGE.isin(DAMAGED).sum()),
    }


def other_variants(d: Data) -> dict:
    lahaina_burn = d.vector("lahaina_burn")
    flood_gdf = d.vector("valencia_flood")
    flood = union(flood_gdf, VALENCIA_UTM)
    health = d.vector("valencia_health")
    polys = d.vector("catarroja_polygons")
    buildings = polys[polys.building.notna()]
    flooded = intersecting(buildings, flood, VALENCIA_UTM)
    return {
        "lahaina_burn_area_km2": geodesic_area_km2(lahaina_burn),
        "valencia_flood_area_km2": geodesic_area_km2(flood_gdf),
        "valencia_health_within_500m_flood": summary(
            named_distances(health, flood, VALENCIA_UTM, "equipamien", limit=500)
        ),
        "catarroja_buildings_outside_flood": len(buildings) - len(flooded),
    }


def aoi_variants(d: Data) -> dict:
    """Per AOI file: DINS structures inside it (the fire whose points it covers), per class and in sum."""
    layers = {"west_altadena_area.geojson": "eaton_dins", "palisades_village_aoi.geojson": "palisades_dins"}
    out: dict[str, dict] = {}
    for name, key in layers.items():  # the fire AOI files (aoi_files also has areas over no DINS layer)
        dins = d.vector(key).to_crs(4326)
        area = aoi_polygon(name)
        inside = dins[shapely.intersects(area, dins.geometry.values)]
        out[name.split(".")[0]] = {
            "structures": len(inside),
            "destroyed": int((inside.DAMAGE == DESTROYED).sum()),
            "damaged": int(inside.DAMAGE.isin(DAMAGED).sum()),
            "by_class": value_counts(inside.DAMAGE.map(DAMAGE_CLASS)),
        }
    return out


def variants(d: Data) -> dict:
    result = la_variants(d) | other_variants(d)
    result["aoi"] = aoi_variants(d)
    return {"variants": result}
