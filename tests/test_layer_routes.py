"""One catalogue, three routes: the same question asked of every sample layer through the file route
(the layer catalogue read with the agents' own vector operations), the SpatiaLite database and the
PostGIS database must give the same numbers, for every event the layer serves - the Palisades
snapshot answers for events 12, 13 and 14 alike, and is stored once.

Questions: per damage layer and event, damage counts by class inside the event's hazard; per
point-of-interest layer and event, features per class within a distance of the hazard (with the same
nearest distances); per OSM layer and event, features per class inside the hazard; per hazard layer,
its geodesic area. Also: exactly one layer catalogue and one OSM class definition exist, and no code
keeps a second list of either."""

from __future__ import annotations

import ast
import json
from collections import Counter
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest
import shapely
from conftest import ROOT, SHARED_DATA
from test_db import DSN, loaded_engine

from geofaham_plugin.core.domain.feature_classes import (
    CLASSES_FILE,
    class_words,
    feature_class_names,
    feature_class_specs,
)
from geofaham_plugin.core.domain.geodesy import geodesic_area_m2
from geofaham_plugin.core.engines import vector_ops as ops
from geofaham_plugin.core.engines.layers import CATALOGUE_FILE, LayerCatalogue

CATALOGUE = LayerCatalogue(SHARED_DATA)
DB_ENGINES = ("spatialite", "postgis")
DISTANCE_M = {"la_maui_hospitals": 5000.0}  # POI layers: within this distance of the hazard (default 1 km)
DEFAULT_DISTANCE_M = 1000.0


def _layers(role: str) -> list[str]:
    return [layer.id for layer in CATALOGUE.layers.values() if layer.role == role]


def _cases(role: str) -> list[tuple[str, int]]:
    """(layer, event) for every event the layer serves that has a hazard layer."""
    return [
        (layer.id, e)
        for layer in CATALOGUE.layers.values()
        if layer.role == role
        for e in layer.events
        if CATALOGUE.find(event_id=e, role="hazard")
    ]


def _engine(kind: str):
    if kind == "postgis" and not DSN:
        pytest.skip("GEOFAHAM_PG_DSN is not set")
    return loaded_engine(kind)


# --------------------------------------------------------------------------------------- file route
_READ: dict[str, gpd.GeoDataFrame] = {}


def file_layer(layer_id: str) -> gpd.GeoDataFrame:
    """The catalogue's normalised layer, read once per test session."""
    if layer_id not in _READ:
        _READ[layer_id] = CATALOGUE.read(layer_id).gdf
    return _READ[layer_id]


def file_hazard(event_id: int) -> gpd.GeoDataFrame:
    """The event's hazard through the file route: every hazard layer serving it, in EPSG:4326."""
    parts = [file_layer(layer.id).to_crs(4326) for layer in CATALOGUE.find(event_id=event_id, role="hazard")]
    return gpd.GeoDataFrame(pd.concat(parts, ignore_index=True), crs=4326)


def _by_class(values: pd.Series) -> dict[str, int]:
    return dict(Counter("unclassified" if v is None or v != v else str(v) for v in values))


def file_damage(layer_id: str, event_id: int) -> dict[str, int]:
    inside = ops.inside(file_layer(layer_id).to_crs(4326), file_hazard(event_id))
    return _by_class(inside["damage_class"])


def file_features_within(layer_id: str, event_id: int, distance_m: float) -> tuple[dict[str, int], list[float]]:
    near = ops.within_distance(file_layer(layer_id).to_crs(4326), file_hazard(event_id), distance_m)
    return _by_class(near["feature_class"]), sorted(near["distance_m"])


def file_features_inside(layer_id: str, event_id: int) -> dict[str, int]:
    return _by_class(ops.inside(file_layer(layer_id).to_crs(4326), file_hazard(event_id))["feature_class"])


# ------------------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("engine_kind", DB_ENGINES)
@pytest.mark.parametrize(("layer_id", "event_id"), _cases("damage"))
def test_damage_by_class_inside_the_hazard(engine_kind, layer_id, event_id):
    engine = _engine(engine_kind)
    expected = file_damage(layer_id, event_id)
    got = engine.select_inside("damage", event_id, source_layer=layer_id)
    assert _by_class(got["damage_class"]) == expected
    counted = engine.count_damage(event_id)  # every damage layer serving the event: here, this one
    assert {k: v for k, v in counted.by_class.items() if v} == expected
    assert sum(expected.values()) > 0


@pytest.mark.parametrize("engine_kind", DB_ENGINES)
@pytest.mark.parametrize(("layer_id", "event_id"), _cases("poi"))
def test_points_of_interest_within_a_distance_of_the_hazard(engine_kind, layer_id, event_id):
    engine = _engine(engine_kind)
    distance = DISTANCE_M.get(layer_id, DEFAULT_DISTANCE_M)
    expected, distances = file_features_within(layer_id, event_id, distance)
    got = engine.select_within("features", event_id, distance, source_layer=layer_id)
    assert _by_class(got["feature_class"]) == expected
    assert sorted(got["distance_m"]) == pytest.approx(distances, abs=1.0)


@pytest.mark.parametrize("engine_kind", DB_ENGINES)
@pytest.mark.parametrize(("layer_id", "event_id"), _cases("osm"))
def test_osm_features_per_class_inside_the_hazard(engine_kind, layer_id, event_id):
    engine = _engine(engine_kind)
    expected = file_features_inside(layer_id, event_id)
    got = engine.select_inside("features", event_id, source_layer=layer_id)
    assert _by_class(got["feature_class"]) == expected
    for feature_class, n in expected.items():  # the class filter the Vector agent uses answers the same
        assert len(engine.select_inside("features", event_id, feature_class=feature_class, source_layer=layer_id)) == n


@pytest.mark.parametrize("engine_kind", DB_ENGINES)
@pytest.mark.parametrize("layer_id", _layers("hazard"))
def test_hazard_geodesic_area(engine_kind, layer_id):
    engine = _engine(engine_kind)
    expected = geodesic_area_m2(shapely.union_all(file_layer(layer_id).to_crs(4326).geometry.values)) / 1e6
    areas = [h["area_km2"] for h in engine.status()["hazards"] if h["source"] == layer_id]
    assert len(areas) == len(file_layer(layer_id))
    assert sum(areas) == pytest.approx(expected, rel=1e-4, abs=0.002)
    for event_id in CATALOGUE.get(layer_id).events:  # the database's hazard of each event it serves
        served = engine.hazard(event_id)
        assert list(served["source"]) == [layer_id] * len(areas)


@pytest.mark.parametrize("engine_kind", DB_ENGINES)
def test_palisades_snapshot_serves_12_13_14_stored_once(engine_kind):
    engine = _engine(engine_kind)
    counts = {e: engine.count_damage(e) for e in (12, 13, 14)}
    assert counts[12].by_class == counts[13].by_class == counts[14].by_class
    assert counts[12].total == counts[14].total == sum(file_damage("palisades_dins", 14).values())
    stored = engine.run_sql("SELECT count(*) FROM damage WHERE source_layer = 'palisades_dins'").rows[0][0]
    assert stored == len(file_layer("palisades_dins")) == 11988  # once, not once per event
    assert engine.status()["layer_events"]["damage:palisades_dins"] == [12, 13, 14]
    near = [list(engine.select_within("features", e, 5000, feature_class="healthcare")["name"]) for e in (12, 13, 14)]
    assert near[0] == near[1] == near[2] and len(near[0]) == 3  # README: 3 hospitals within 5 km of the hull
    for role in ("damage", "hazard"):  # the file route picks the same layer for each record
        assert [layer.id for layer in CATALOGUE.find(event_id=12, role=role)] == [
            layer.id for layer in CATALOGUE.find(event_id=14, role=role)
        ]


def test_every_catalogue_layer_is_loaded_once_by_both_databases():
    kinds = ["spatialite"] + (["postgis"] if DSN else [])
    for kind in kinds:
        status = loaded_engine(kind).status()
        log = {r["source_layer"]: r for r in status["load_log"]}
        assert set(log) >= set(CATALOGUE.layers)
        for layer in CATALOGUE.layers.values():
            assert log[layer.id]["target_table"] == layer.table
            assert status["layer_events"][f"{layer.table}:{layer.id}"] == sorted(layer.events)
            if layer.table != "features":  # features: one row per class of a feature
                assert log[layer.id]["loaded_count"] == len(file_layer(layer.id))


# --------------------------------------------------------------------------- one source of truth
def _json_files() -> list[Path]:
    return [p for p in ROOT.glob("geofaham_plugin/**/*.json")]


def test_exactly_one_layer_catalogue_and_one_class_file():
    catalogues = [
        p
        for p in _json_files()
        if isinstance(json.loads(p.read_text(encoding="utf-8")), dict)
        and isinstance(json.loads(p.read_text(encoding="utf-8")).get("layers"), list)
    ]
    from geofaham_plugin.core.domain.rasters import RASTERS_FILE

    class_files = [
        p
        for p in _json_files()
        if "selectors" in p.read_text(encoding="utf-8") or '"words"' in p.read_text(encoding="utf-8")
    ]
    # the raster vocabulary (kinds, indices, classifications) has words too, and no OSM selector
    assert catalogues == [CATALOGUE_FILE] and sorted(class_files) == sorted([CLASSES_FILE, RASTERS_FILE])
    assert "selectors" not in RASTERS_FILE.read_text(encoding="utf-8")
    assert not (CATALOGUE_FILE.parent / "osm_extracts.json").exists()  # folded into the catalogue
    paths = {layer.path for layer in CATALOGUE.layers.values() if layer.path}
    assert all((SHARED_DATA / p).is_file() for p in paths)


def _string_collections(tree: ast.AST):
    """Every literal tuple/list/set/dict in a module with the string constants it holds."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            yield node, [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        elif isinstance(node, ast.Dict):
            yield node, [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def test_no_second_list_of_layers_or_classes_in_code():
    from geofaham_plugin.core.agents import maps
    from geofaham_plugin.core.engines.db import loaders
    from geofaham_plugin.core.planning import prepass

    layer_ids = set(CATALOGUE.layers)
    paths = {layer.path for layer in CATALOGUE.layers.values() if layer.path}
    # OSM tag keys and values (healthcare, power, landuse ...) may be listed by OSM code; class names and
    # question words that are not tags may not
    tags = {
        s
        for spec in feature_class_specs().values()
        for sel in spec.selectors
        for k, v in sel.items()
        for s in [k, *(v if isinstance(v, list) else [v] if isinstance(v, str) else [])]
    }
    classes = set(feature_class_names()) - tags
    words = {w for ws in class_words().values() for w in ws} - tags
    raw_damage = {v for scale in CATALOGUE.damage_scales.values() for v in scale.values}
    offenders = []
    for path in ROOT.glob("geofaham_plugin/**/*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node, strings in _string_collections(tree):
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            for name, vocabulary in (
                ("layer ids", layer_ids),
                ("feature classes", classes),
                ("class words", words),
                ("raw damage values", raw_damage),
            ):
                if len(vocabulary & set(strings)) >= 3:
                    offenders.append(f"{where} lists {name}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in paths:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} names the sample file {node.value}")
    assert not offenders
    assert not hasattr(loaders, "SAMPLE_LAYERS") and not hasattr(loaders, "osm_class")
    assert not hasattr(loaders, "PALISADES_EVENT") and not hasattr(loaders, "MS_LABELS")
    assert feature_class_names() == maps.FEATURE_CLASSES
    assert class_words() == prepass.ENTITY_WORDS
