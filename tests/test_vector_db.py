"""The Vector agent's database tools on the embedded engine (SpatiaLite), through the orchestrator."""

from __future__ import annotations

import pytest

from geofaham_plugin.core.config import settings_from_env
from geofaham_plugin.core.engines.db import open_engine
from geofaham_plugin.core.engines.db.loaders import load_samples
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator, OrchestratorConfig
from geofaham_plugin.core.store.store import ResponseStore


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    settings = settings_from_env({"GEOFAHAM_CACHE": str(cache)})  # no DSN: the embedded engine
    with open_engine(settings=settings) as engine:
        engine.init()
        load_samples(engine, only=["eaton_perimeter", "eaton_dins", "la_maui_hospitals"])
    return settings


def run_plan(tmp_path, settings, steps, scripted=None, question="the Eaton fire (scripted plan)"):
    store = ResponseStore(tmp_path / "s")
    plan = {"ledger": {"intent": "t", "disaster_event_id": 11}, "plan": {"steps": steps}}
    orch = Orchestrator(
        store,
        LLM(ScriptedModel({"planner": [plan], **(scripted or {})})),
        settings=settings,
        config=OrchestratorConfig(mode="free"),
    )
    return store, orch.run(question)


def test_damage_by_class_inside_the_hazard_matches_geopandas(tmp_path, settings):
    import geopandas as gpd
    from conftest import SHARED_DATA

    store, record = run_plan(
        tmp_path,
        settings,
        [
            {
                "id": 1,
                "agent": "vector",
                "goal": "count",
                "tool": "damage_by_class",
                "args": {"event_id": 11},
                "expected_output": "table",
            }
        ],
    )
    assert record.status == "answered", record.answer
    table = store.read_table(record.cited_artifacts[0]).set_index("value")["count"]
    dins = gpd.read_file(SHARED_DATA / "eaton-2025" / "DINS_2025_Eaton_Public_View_2025-01-14.geojson")
    perimeter = gpd.read_file(SHARED_DATA / "eaton-2025" / "eaton_adjusted_fire_perimeter.geojson").to_crs(4326)
    inside = dins[dins.intersects(perimeter.union_all())]
    assert int(table.sum()) == len(inside) == 5431
    assert int(table["destroyed"]) == int((inside["DAMAGE"] == "Destroyed (>50%)").sum())
    assert "5,431 in total" in record.answer


def test_free_sql_over_an_artifact_placeholder(tmp_path, settings):
    steps = [
        {
            "id": 1,
            "agent": "vector",
            "goal": "hazard",
            "tool": "load_event_layer",
            "args": {"event_id": 11, "role": "hazard"},
            "expected_output": "vector",
        },
        {
            "id": 2,
            "agent": "vector",
            "goal": "buffer",
            "tool": "buffer",
            "args": {"distance_m": 5000},
            "inputs": {"layer": "step:1"},
            "expected_output": "vector",
        },
    ]
    store, record = run_plan(tmp_path, settings, steps, question="the 5 km zone around the Eaton fire perimeter")
    zone = record.cited_artifacts[0]
    sql = (
        f"SELECT f.name, f.geom FROM features f JOIN {{{{{zone}}}}} z ON ST_Intersects(f.geom, z.geom) "
        "WHERE f.feature_class = 'healthcare' ORDER BY f.name"
    )
    sql_step = [
        {
            "id": 1,
            "agent": "vector",
            "goal": "sql",
            "tool": "sql_features",
            "args": {"sql": sql},
            "expected_output": "vector",
        }
    ]
    plan = {"ledger": {"intent": "t"}, "plan": {"steps": sql_step}}
    orch = Orchestrator(
        store, LLM(ScriptedModel({"planner": [plan]})), settings=settings, config=OrchestratorConfig(mode="free")
    )
    result = orch.run("hospitals in the 5 km zone")
    assert result.status == "answered", result.answer
    out = store.get(result.cited_artifacts[0])
    assert out.metadata.feature_count == 7 and out.inputs == [zone]
    assert "AURORA LAS ENCINAS HOSPITAL" in list(store.read_vector(out.id)["name"])


def test_unsafe_sql_goes_back_as_a_failure_not_a_write(tmp_path, settings):
    steps = [
        {
            "id": 1,
            "agent": "vector",
            "goal": "sql",
            "tool": "sql_table",
            "args": {"sql": "DELETE FROM damage"},
            "expected_output": "table",
        }
    ]
    store, record = run_plan(tmp_path, settings, steps, {"progress": [{"action": "finish", "reason": "refused"}]})
    assert record.status == "partial" and len(store) == 0
    (failure,) = record.progress.failures
    assert failure.check == "tool" and "SELECT" in failure.message
    with open_engine(settings=settings) as engine:
        assert engine.count_damage(11).total == 5431  # nothing was deleted
