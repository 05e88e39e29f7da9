"""Road access from a question (issue 13): the words in four languages become a spec's road access, only a routing
step applies it, and the two headline questions run end to end with no model call — Catarroja's schools and fire
station on the EMSR773 flood checked against networkx built directly from the raw GeoJSON, and the Eaton question,
which has no road network offline, answered honestly as not applied."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import geopandas as gpd
import networkx as nx
import numpy as np
import pytest
import shapely
from conftest import ROOT, SHARED_DATA
from pyproj import Geod, Transformer
from shapely.geometry import LineString, Point, box, shape
from shapely.ops import transform

from geofaham_plugin.core.engines import network as net
from geofaham_plugin.core.engines.layers import default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.coverage import ExecutedStep, check_coverage, question_constraints
from geofaham_plugin.core.planning.prepass import prepass
from geofaham_plugin.core.planning.spec_compile import compile_specs
from geofaham_plugin.core.planning.spec_read import spec_from_facts

CATARROJA = "Which schools in Catarroja can still reach the fire station by road after the EMSR773 flood?"
EATON = "Which hospitals lie within 1 km of the Eaton fire damage, and which of them are still reachable by road?"
SAID = [
    CATARROJA,
    "¿Qué escuelas de Catarroja siguen siendo accesibles por carretera desde el parque de bomberos tras la inundación?",
    "Quelles écoles de Catarroja restent accessibles par la route depuis la caserne de pompiers après l'inondation ?",
    "Quais escolas de Catarroja continuam acessíveis por estrada a partir do quartel de bombeiros após a inundação?",
    "Which schools in Catarroja are cut off from the fire station by the Valencia flood?",
    "¿Qué escuelas de Catarroja quedan aisladas del parque de bomberos por la DANA?",
]
VALENCIA = SHARED_DATA / "valencia-2024"
GEOD = Geod(ellps="WGS84")


@pytest.mark.parametrize("question", SAID)
def test_road_access_words_compile_to_routing_in_four_languages(question):
    layers = default_catalogue()
    facts = prepass(question, layers=layers)
    assert ("relation", "road_access") in {(c.kind, c.value) for c in question_constraints(facts)}
    (spec,) = spec_from_facts(facts, layers=layers).specs
    assert spec.relation is None and spec.access is not None  # routed, not "inside the flood"
    assert spec.subject.feature_class == "education" and spec.subject.place == "Catarroja"
    assert spec.access.targets is not None and spec.access.targets.kinds == ["fire_station"]
    assert spec.access.hazard.kind == "hazard" and spec.access.hazard.event_id == 6
    tools = [s.tool for s in compile_specs([spec]).steps]
    assert tools[-2:] == ["road_reachability", "cut_roads"] and "inside" not in tools
    roads = next(s for s in compile_specs([spec]).steps if s.args.get("feature_class") == "roads")
    assert roads.tool == "get_features_at" and roads.args["place"] == "Catarroja"


def test_the_damage_cuts_the_roads_when_the_question_relates_to_it():
    facts = prepass(EATON, layers=default_catalogue())
    (spec,) = spec_from_facts(facts, layers=default_catalogue()).specs
    assert spec.relation is not None and spec.relation.kind == "within" and spec.relation.distance_m == 1000
    assert spec.access is not None and spec.access.targets is None  # reachable: joined to the main network
    assert spec.access.hazard.kind == "damage" and spec.access.cut_buffer_m == 50
    assert any("50 m of a damaged building" in note for note in spec.implied)


def test_only_a_routing_step_with_a_hazard_applies_road_access():
    """A plain distance, inside or SQL test counted as 'reachable' would be a confident wrong answer."""
    constraints = question_constraints(prepass(CATARROJA))
    impostors = [
        ExecutedStep(step_id=1, tool="within_distance", args={"distance_m": 1000}, inputs={"features": "a_1"}),
        ExecutedStep(step_id=2, tool="inside", inputs={"features": "a_1", "mask": "a_2"}),
        ExecutedStep(step_id=3, tool="sql_table", args={"sql": "select * from x where not st_intersects(a, b)"}),
        ExecutedStep(step_id=4, tool="road_reachability", inputs={"roads": "a_3", "origins": "a_1"}),  # no hazard
        ExecutedStep(step_id=5, tool="cut_roads", inputs={"roads": "a_3", "hazard": "a_2"}),
    ]
    routed = ExecutedStep(
        step_id=6, tool="road_reachability", inputs={"roads": "a_3", "origins": "a_1", "hazard": "a_2"}
    )

    def applied(steps):
        return next(c for c in check_coverage(constraints, steps) if c.value == "road_access").applied_by

    assert applied(impostors) == [] and applied([*impostors, routed]) == [6]


def test_without_targets_an_origin_is_reachable_while_joined_to_the_main_network():
    """A 3 x 3 grid of two-way streets 100 m apart (metres in a local transverse Mercator): a flood around the
    corner junction (0, 0) cuts both its streets, so that corner is cut off and the others stay joined."""
    local = "+proj=tmerc +lat_0=39.4 +lon_0=-0.4 +k=1 +x_0=0 +y_0=0 +ellps=WGS84 +units=m +no_defs"
    lines = [LineString([(0, y), (100, y), (200, y)]) for y in (0, 100, 200)]
    lines += [LineString([(x, 0), (x, 100), (x, 200)]) for x in (0, 100, 200)]
    roads = gpd.GeoDataFrame({"highway": ["residential"] * 6}, geometry=lines, crs=local)
    points = gpd.GeoDataFrame({"name": ["corner", "centre"]}, geometry=[Point(0, 0), Point(100, 100)], crs=local)
    flood = gpd.GeoDataFrame(geometry=[box(-10, -10, 10, 10)], crs=local)
    r = net.reachability(net.build_network(roads), points, None, flood)
    assert r.pairs["status"].tolist() == ["cut off", "reachable"] and r.isolated_origins == [0]
    assert int(r.cut.sum()) == 2  # the first 100 m piece of each street at the corner
    assert any("main road network (9 nodes" in n and "89% of it stays joined" in n for n in r.notes)


# --- Catarroja, end to end, against networkx on the raw GeoJSON ----------------------------------------------------


def _features(name: str) -> list[dict]:
    return json.loads((VALENCIA / "osm-catarroja" / f"{name}.geojson").read_text())["features"]


def _classes(name: str) -> dict:
    return json.loads((ROOT / "geofaham_plugin/core/data/osm_classes.json").read_text())["classes"][name]


def _independent(flood) -> tuple[nx.DiGraph, nx.DiGraph, int]:
    """Directed graphs before and after the flood from the raw lines: nodes are exact vertex coordinates, one edge
    per piece between consecutive vertices (geodesic length), oneway yes/-1; a piece touching the flood is removed
    unless on a bridge. Also how many drivable roads lose a piece (pieces under 0.5 m — stubs clipped at the
    extract's edge — are not roads: the engine joins their ends)."""
    drivable = set(_classes("roads")["selectors"][0]["highway"])
    before, after = nx.DiGraph(), nx.DiGraph()
    cut_roads = 0
    for f in _features("lineas"):
        p = f["properties"]
        if p.get("highway") not in drivable:
            continue
        bridge = p.get("bridge") not in (None, "no")
        pieces = [
            (tuple(a), tuple(b))
            for line in f["geometry"]["coordinates"]
            for a, b in zip(line[:-1], line[1:], strict=True)
        ]
        pieces = [(a, b) for a, b in pieces if a != b]
        lengths = [GEOD.inv(a[0], a[1], b[0], b[1])[2] for a, b in pieces]
        if not pieces:
            continue
        hit = shapely.intersects(flood, shapely.linestrings([[a, b] for a, b in pieces])) & (not bridge)
        cut_roads += bool(any(h and length >= 0.5 for h, length in zip(hit, lengths, strict=True)))
        for (a, b), length, cut in zip(pieces, lengths, hit, strict=True):
            directions = {"yes": [(a, b)], "-1": [(b, a)]}.get(p.get("oneway") or "", [(a, b), (b, a)])
            for u, v in directions:
                for graph, keep in ((before, True), (after, not cut)):
                    graph.add_node(u), graph.add_node(v)
                    if keep and (not graph.has_edge(u, v) or graph[u][v]["length"] > length):
                        graph.add_edge(u, v, length=length)
    return before, after, cut_roads


def _nearest(nodes: list, point: Point) -> tuple:
    xy = np.array(nodes)
    d = GEOD.inv(np.full(len(xy), point.x), np.full(len(xy), point.y), xy[:, 0], xy[:, 1])[2]
    return nodes[int(np.argmin(d))]


def _place(gdf: gpd.GeoDataFrame) -> list[Point]:
    return list(gdf.geometry.representative_point())


def test_catarroja_schools_reach_the_fire_station_as_networkx_says(store):
    model = ScriptedModel({})  # no planner script: code must resolve the whole question
    record = Orchestrator(store, LLM(model)).run(CATARROJA)
    assert record.status == "answered", record.answer
    assert model.calls == [] and record.usage.calls == []
    tools = [s.tool for s in record.steps]
    assert tools[-2:] == ["road_reachability", "cut_roads"]

    flood = shapely.union_all(gpd.read_file(VALENCIA / "emsr773_observed_flood_merged.geojson").geometry.values)
    shapely.prepare(flood)
    before, after, cut_roads = _independent(flood)
    education = set(_classes("education")["selectors"][0]["amenity"])
    raw = [f for n in ("puntos", "poligonos") for f in _features(n)]
    schools = [f for f in raw if f["properties"].get("amenity") in education]
    (station,) = [f for f in raw if f["properties"].get("amenity") == "fire_station"]
    nodes = list(before.nodes)
    target = _nearest(nodes, shape(station["geometry"]).representative_point())
    expected = {}
    for f in schools:
        source = _nearest(nodes, shape(f["geometry"]).representative_point())
        b = (
            nx.dijkstra_path_length(before, source, target, weight="length")
            if nx.has_path(before, source, target)
            else None
        )
        a = (
            nx.dijkstra_path_length(after, source, target, weight="length")
            if nx.has_path(after, source, target)
            else None
        )
        expected[f["properties"]["name"]] = (b, a)
    assert len(expected) == len(schools) == 15  # names are unique

    reach = next(s for s in record.steps if s.tool == "road_reachability")
    table = store.read_table(reach.artifact_id)
    assert sorted(table["origin_name"]) == sorted(expected)
    for _, row in table.iterrows():
        b, a = expected[row["origin_name"]]
        assert (row["before_m"] is None or np.isnan(row["before_m"])) == (b is None), row["origin_name"]
        assert (row["after_m"] is None or np.isnan(row["after_m"])) == (a is None), row["origin_name"]
        if b is not None:
            assert row["before_m"] == pytest.approx(b, abs=1.0), row["origin_name"]
        if a is not None:
            assert row["after_m"] == pytest.approx(a, abs=1.0), row["origin_name"]
    cut_rec = next(s for s in record.steps if s.tool == "cut_roads")
    assert len(store.read_vector(cut_rec.artifact_id)) == cut_roads

    # the answer: counts as networkx gives them, the facilities by name, the limits of the model
    n_reach = sum(a is not None for _, a in expected.values())
    n_cut = sum(b is not None and a is None for b, a in expected.values())
    values = {v.label: v.value for v in record.structured.values}
    assert values["education features that can still reach fire station features by road"] == n_reach
    assert values["education features cut off from fire station features by road"] == n_cut
    assert values["roads cut by the hazard"] == cut_roads
    assert f"{n_reach} of 15 can still reach it" in record.answer and f"{n_cut} cut off" in record.answer
    assert [i.name for i in record.structured.items] == sorted(
        (n for n, (_, a) in expected.items() if a is not None), key=lambda n: expected[n][1]
    )
    stated = dict(zip(table["origin_name"], table["before_m"], strict=True))  # (checked against networkx above)
    for name, (b, a) in expected.items():
        if b is not None and a is None:
            assert f"| {name} | cut off | {stated[name]:,.0f} |" in record.answer
    assert ("cut off from all of them: Parc de Bombers de Catarroja" in record.answer) == (n_reach == 0)
    assert "road network: OpenStreetMap extract of Catarroja" in record.answer
    assert "extract date not recorded" in record.answer
    assert "bridges over the hazard are kept open" in record.answer and "a cut is a model" in record.answer


def test_the_eaton_question_says_road_access_was_not_computed_without_a_road_network(store):
    """No road layer or extract covers Altadena/Pasadena offline: the distance part is computed, the road part is
    said not applied with its reason; nothing stands in for it and the model is not asked to try."""
    model = ScriptedModel({})
    events = []
    record = Orchestrator(store, LLM(model), on_event=events.append).run(EATON)
    assert model.calls == [] and not [e for e in events if e.type == "replan"]
    assert record.status == "partial"
    assert record.answer.startswith("**Not answered as asked.**")
    assert (
        "the relation 'reachable by road' (\"still reachable by road\"): road access was not computed" in record.answer
    )
    assert "no road network of the Eaton Fire area is available offline" in record.answer
    assert not {"road_reachability", "cut_roads"} & {s.tool for s in record.steps}
    road = next(c for c in record.constraints if c.value == "road_access")
    assert road.applied_by == [] and any("reachable by road" in n for n in record.structured.not_applied)
    # what was computed instead: hospitals within 1 km of the damaged buildings, independently none
    hospitals = gpd.read_file(SHARED_DATA / "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson")
    dins = gpd.read_file(SHARED_DATA / "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson")
    damaged = dins[dins["DAMAGE"] != "No Damage"].to_crs(32611)
    near = hospitals.to_crs(32611).geometry.apply(lambda p: damaged.distance(p).min() <= 1000)
    assert record.structured.totals()[0].value == int(near.sum()) == 0


def test_cli_answers_the_catarroja_question_offline(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "geofaham_plugin", "ask", CATARROJA, "--session", str(tmp_path / "s")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "GEOFAHAM_OFFLINE": "1"},
    )
    assert out.returncode == 0, out.stderr
    assert "education features by road to fire station features:" in out.stdout
    assert "| Larrodé | no route even before |" in out.stdout and "roads cut by the hazard" in out.stdout
    record = json.loads(Path(out.stdout.strip().splitlines()[-1].split("run record: ")[1]).read_text())
    assert record["status"] == "answered" and record["usage"]["calls"] == []
    assert record["plans"][0]["specs"][0]["access"]["targets"]["kinds"] == ["fire_station"]


def test_a_named_kind_and_place_of_the_reference_are_applied(store):
    """ "within 2 km of the Catarroja fire station": the fire station of Catarroja's extract, not every emergency
    service (checked here in ETRS89 / UTM 30N with shapely, from each school's outline to the station)."""
    record = Orchestrator(store, LLM(ScriptedModel({}))).run(
        "How many schools are within 2 km of the Catarroja fire station?"
    )
    assert record.status == "answered", record.answer
    assert {"feature_class": "emergency_services", "kinds": ["fire_station"]} in [s.args for s in record.steps]
    education = set(_classes("education")["selectors"][0]["amenity"])
    raw = [f for n in ("puntos", "poligonos") for f in _features(n)]
    utm = Transformer.from_crs(4326, 25830, always_xy=True).transform
    (station,) = [transform(utm, shape(f["geometry"])) for f in raw if f["properties"].get("amenity") == "fire_station"]
    schools = [transform(utm, shape(f["geometry"])) for f in raw if f["properties"].get("amenity") in education]
    near = [s for s in schools if s.distance(station) <= 2000]
    (total,) = record.structured.totals()
    assert total.value == len(near) > 0, (total.value, len(near))
