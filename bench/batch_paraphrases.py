"""Paraphrases of the batch suite's tasks: the same inputs, the same requested outputs and the same independent
graders, the instruction said the way another analyst would say it (other verbs, word order, a named CRS instead
of its code, Spanish, French or Portuguese). A product that only knows the suite's own wording fails here; one that
drops a part of the instruction and still writes a file is caught as SILENTLY WRONG by the same graders.

::

    python -m bench batch-suite --set paraphrases [--model scripted|embedded] [--tasks p_clip]
"""

from __future__ import annotations

from dataclasses import replace

from .batch_suite import TASKS, Task

# task id -> two instructions that ask for exactly what the task asks
PARAPHRASES: dict[str, tuple[str, str]] = {
    "reproject_epsg": (
        "Transform the clinics into ETRS89 / UTM zone 30N (EPSG 25830) as a GeoPackage.",
        "Proyecta las clínicas a EPSG:25830 y guárdalas en un GeoPackage.",
    ),
    "reproject_utm": (
        "Reproject the wells to the UTM zone they fall in.",
        "Convert the wells layer to the appropriate UTM projection.",
    ),
    "reproject_equal_area": (
        "Reproject the districts to an equal-area CRS so I can compare their sizes.",
        "Mets les districts dans une projection à surface égale (equal-area).",
    ),
    "reproject_polar": (
        "Put the arctic stations in the NSIDC sea ice polar stereographic north projection (EPSG:3413).",
        "Transform the arctic stations to EPSG 3413.",
    ),
    "reproject_antimeridian": (
        "The reef zones straddle the date line: reproject them to EPSG:3832 (PDC Mercator).",
        "Convert the reef zones to the Pacific-centred Mercator, EPSG:3832.",
    ),
    "repair": (
        "Repair the invalid parcel polygons.",
        "Make the parcels' geometries valid (some of them cross themselves).",
    ),
    "dissolve": (
        "Merge the districts that share a region into one polygon per region.",
        "Disuelve los distritos por región.",
    ),
    "area_per_class": (
        "How many km² does each land use cover in the parcels?",
        "Sum the parcel area in square kilometres for each land use.",
    ),
    "centroids": (
        "Compute each district's centroid.",
        "Calcule le centroïde de chaque district.",
    ),
    "hull_per_group": (
        "For each operator, draw the convex hull of its wells.",
        "Make one convex hull per operator around the wells.",
    ),
    "symmetric_difference": (
        "Show me the land flooded in only one of the two years, 2023 or 2024, not both.",
        "Compute the symmetric difference between the 2023 and 2024 floods.",
    ),
    "drop_nulls": (
        "Remove every clinic without a name and save what remains as a CSV.",
        "Elimina las clínicas sin nombre y guarda el resto en CSV.",
    ),
    "dedupe": (
        "Delete the duplicated sensor readings.",
        "Keep one copy of each sensor reading; there are duplicates.",
    ),
    "split_geometry_types": (
        "Separate the features file by geometry type: points, lines and polygons each in its own layer.",
        "The features file mixes points, lines and polygons: split it into three layers.",
    ),
    "points_per_polygon": (
        "Count the wells in each district.",
        "¿Cuántos pozos hay en cada distrito?",
    ),
    "k_nearest": (
        "Give me the two closest clinics to every shelter, with the distance in metres.",
        "Para cada albergue, las 2 clínicas más cercanas y la distancia a cada una en metros.",
    ),
    "buffer": (
        "Make a 500 m buffer around the rivers.",
        "Crée une zone tampon de 500 m autour des rivières.",
    ),
    "clip": (
        "Cut the rivers to the extent of the boundary file.",
        "Keep only the parts of the rivers inside the study boundary, cut at its edge.",
    ),
    "filter_attribute": (
        "Select the villages whose population is over 5000.",
        "Only keep villages of more than 5000 inhabitants.",
    ),
    "filter_kml": (
        "Keep the field reports with severity high.",
        "Extract the high-severity field reports.",
    ),
    "csv_to_gpkg": (
        "Save the shelters CSV as a GeoPackage.",
        "Turn the shelters table into a GeoPackage.",
    ),
    "kml_to_geojson": (
        "Export the field reports KML as GeoJSON.",
        "Convierte el KML de los informes de campo a GeoJSON.",
    ),
    "shp_to_parquet": (
        "Write the villages shapefile out as GeoParquet.",
        "Save the villages as a GeoParquet file.",
    ),
    "shp_full_field_names": (
        "The villages shapefile cut the field names: write a GeoPackage with the full names population_total and "
        "population_male.",
        "Export the villages to GeoPackage, restoring population_total and population_male as the field names.",
    ),
    "manifest": (
        "What layers does admin.gpkg hold? Give their CRS, geometry type and feature count.",
        "Describe admin.gpkg: each layer with its CRS, geometry type and how many features it has.",
    ),
    "area_per_feature": (
        "How many square kilometres is each district?",
        "Give the area in km² of every district.",
    ),
    "buffer_dissolve": (
        "Draw 1 km buffers around the clinics and dissolve the ones that overlap.",
        "Buffer each clinic by 1 km, then merge overlapping buffers into one.",
    ),
    "kml_to_fgb_3857": (
        "Save the field reports as FlatGeobuf in Web Mercator (EPSG:3857).",
        "Convert the field reports to FlatGeobuf, reprojected to EPSG:3857.",
    ),
    "repair_dissolve_area": (
        "Fix the parcel geometries, merge them by land use and compute each land use's area in km².",
        "Repair the parcels, then dissolve by land use, then give each land use's area in square kilometres.",
    ),
    "centroids_antimeridian": (
        "Give me the centroid of every reef zone.",
        "Compute the centre point of each reef zone.",
    ),
    "nearest_one": (
        "For each village, what is the distance to the closest well?",
        "Distance from every village to its nearest well, please.",
    ),
    "clean_chain": (
        "Clean up the clinics (no duplicates, no unnamed ones) and reproject them to EPSG 25830.",
        "Drop duplicate clinics and clinics with no name, then project them to EPSG:25830.",
    ),
    "inside_aoi_sample": (
        "Save the health facilities that lie within the emsr773_aoi03_extent area.",
        "Which of the Valencia health facilities fall inside the emsr773_aoi03_extent area? Save them.",
    ),
    "geojson_to_shp_sample": (
        "Save the Valencia health facilities as a shapefile.",
        "Export the Valencia health facilities GeoJSON to Shapefile format.",
    ),
}


def paraphrase_tasks() -> list[Task]:
    """Each task twice more, as ``p_<task>_1`` and ``p_<task>_2``, with a paraphrased instruction."""
    by_id = {t.id: t for t in TASKS}
    return [
        replace(by_id[task_id], id=f"p_{task_id}_{n}", instruction=said)
        for task_id, pair in PARAPHRASES.items()
        for n, said in enumerate(pair, start=1)
    ]
