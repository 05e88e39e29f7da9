"""The real orchestrator, driven by the scripted model, over the real store, real files and real engines."""

from __future__ import annotations

import json
import threading

import geopandas as gpd
import numpy as np
import pytest
import shapely
from pyproj import Geod
from shapely.geometry import Point, Polygon

from geofaham_plugin.core.aoi import register_aoi
from geofaham_plugin.core.domain.names import AgentName
from geofaham_plugin.core.errors import ToolFailed
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.ledgers import StepStatus
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator, OrchestratorConfig
from geofaham_plugin.core.planning.plan import Plan, PlanStep, TaskLedger
from geofaham_plugin.core.planning.planner import PlanResult

EATON_Q = "Which hospitals are within 5 km of the Eaton fire perimeter?"


def orchestrator(store, script, **config):
    model = ScriptedModel(script)
    events = []
    orch = Orchestrator(store, LLM(model), config=OrchestratorConfig(**config), on_event=events.append)
    return orch, model, events


def free_plan(*steps: dict, intent: str = "test") -> dict:
    return {"ledger": {"intent": intent, "disaster_event_id": 11}, "plan": {"steps": list(steps)}}


def step(id_: int, agent: str, tool: str, args: dict, inputs: dict | None = None, out: str = "vector") -> dict:
    return {
        "id": id_,
        "agent": agent,
        "goal": f"{tool} step",
        "tool": tool,
        "args": args,
        "inputs": inputs or {},
        "expected_output": out,
    }


LOAD_EATON = step(1, "vector", "load_event_layer", {"event_id": 11, "role": "hazard"})


# ------------------------------------------------------------------------------------ happy paths
def test_two_step_plan_second_step_consumes_the_first_artifact_by_id(store):
    plan = free_plan(LOAD_EATON, step(2, "vector", "buffer", {"distance_m": 1000}, {"layer": "step:1"}))
    orch, model, events = orchestrator(store, {"planner": [plan]}, mode="free")
    record = orch.run("Buffer the Eaton fire perimeter by 1 km")
    assert record.status == "answered", record.answer
    first, second = (s for s in record.steps if s.status is StepStatus.done)
    assert second.inputs == {"layer": first.artifact_id}
    buffered = store.get(second.artifact_id)
    assert buffered.inputs == [first.artifact_id]  # lineage
    # a 1 km buffer of a 62.9 km² area: larger, and measured geodesically
    assert buffered.metadata.total_area_m2 > store.get(first.artifact_id).metadata.total_area_m2 + 30e6
    assert f"[{second.artifact_id}]" in record.answer
    saved = json.loads((store.session_dir / "runs" / f"{record.run_id}.json").read_text())
    assert saved["status"] == "answered" and saved["usage"]["totals"]["planner"]["calls"] == 1
    assert [e.type for e in events][:2] == ["ledger", "plan"] and events[-1].type == "answer"
    # the planner saw no coordinates: only ids and metadata
    assert "coordinates" not in json.dumps([m.content for c in model.calls for m in c.messages])


def test_guided_eaton_hospitals_end_to_end(store):
    choice = {"template": "features_near_hazard", "feature_class": "healthcare", "distance_m": 5000}
    orch, model, _ = orchestrator(store, {"planner": [choice]}, always_ask_model=True)
    record = orch.run(EATON_Q)
    assert record.status == "answered", record.answer
    assert record.plans[0].template == "features_near_hazard" and record.plans[0].ledger.disaster_event_id == 11
    final = store.get(record.cited_artifacts[0])
    assert final.metadata.feature_count == 7
    gdf = store.read_vector(final.id)
    assert gdf.iloc[0]["NAME"] == "AURORA LAS ENCINAS HOSPITAL"
    assert abs(gdf.iloc[0]["distance_m"] - 2090) < 15
    assert "7 healthcare features within 5,000 m" in record.answer
    assert "AURORA LAS ENCINAS HOSPITAL" in record.answer and "2,090" in record.answer
    # the planner's prompt carried the resolved facts and two retrieved examples, and stayed small
    prompt = model.calls[0].messages[-1].content
    assert "Eaton" in prompt and "5000" in prompt and prompt.count("Q: ") == 2
    assert record.usage.calls[0].prompt_tokens < 1500


# ---------------------------------------------------------------------------- input validity
def test_hallucinated_id_and_unproduced_output_are_caught_before_dispatch(store):
    plan = Plan(
        steps=[
            PlanStep(
                id=1,
                agent=AgentName.vector,
                goal="load",
                tool="load_event_layer",
                args={"event_id": 11, "role": "hazard"},
                expected_output="vector",
            ),
            PlanStep(
                id=2,
                agent=AgentName.vector,
                goal="buffer a layer that does not exist",
                tool="buffer",
                args={"distance_m": 500},
                inputs={"layer": "a_deadbeef"},
                expected_output="vector",
            ),
            # consumes step 2's planned output without declaring the dependency
            PlanStep(
                id=3,
                agent=AgentName.vector,
                goal="count",
                tool="count",
                args={},
                inputs={"layer": "step:2"},
                expected_output="table",
            ),
        ]
    )
    skip = {"action": "skip_step", "reason": "continue"}
    orch, model, _ = orchestrator(store, {"progress": [skip, skip]}, stall_budget=5)
    record = orch.execute_plan("test", PlanResult(ledger=TaskLedger(intent="t"), plan=plan, mode="free"))
    failures = {f.step_id: f for f in record.progress.failures}
    assert failures[2].check == "input_validity" and failures[2].kind == "unknown_artifact"
    assert "a_deadbeef does not exist in the Response Store" in failures[2].message
    assert failures[3].check == "input_validity" and failures[3].kind == "not_produced"
    assert "not an artifact" in failures[3].message
    # both were reported to the progress model ...
    progress_prompts = [c.messages[-1].content for c in model.calls if c.role == "progress"]
    assert "a_deadbeef" in progress_prompts[0] and "not an artifact" in progress_prompts[1]
    # ... and never executed: only step 1 produced an artifact
    assert len(store) == 1 and record.status == "partial"


def test_free_plan_with_a_hallucinated_id_goes_back_to_the_model(store):
    bad = free_plan(step(1, "vector", "buffer", {"distance_m": 500}, {"layer": "a_0badf00d"}))
    good = free_plan(LOAD_EATON, step(2, "vector", "buffer", {"distance_m": 500}, {"layer": "step:1"}))
    orch, model, _ = orchestrator(store, {"planner": [bad, good]}, mode="free")
    record = orch.run("Buffer the Eaton fire perimeter by 500 m")
    assert record.status == "answered"
    retry = model.calls[1].last_user
    assert "a_0badf00d" in retry and "not in the Response Store" in retry


# ----------------------------------------------------------------------------- metric distances
def test_distance_on_epsg4326_layers_is_geodesic_to_within_a_metre(store):
    # points in EPSG:4326 around Altadena, a reference point and a reference polygon, also in 4326
    rng = np.random.default_rng(7)
    lon, lat = -118.13, 34.19
    pts = [Point(lon + dx, lat + dy) for dx, dy in rng.uniform(-0.05, 0.05, size=(40, 2))]
    features = store.register_vector(
        gpd.GeoDataFrame({"name": [f"p{i}" for i in range(40)]}, geometry=pts, crs=4326),
        source="test",
        summary="points",
    )
    ref_point = store.register_vector(
        gpd.GeoDataFrame({"n": [1]}, geometry=[Point(lon, lat)], crs=4326), source="test", summary="reference point"
    )
    square = Polygon(
        [(lon - 0.01, lat - 0.01), (lon + 0.01, lat - 0.01), (lon + 0.01, lat + 0.01), (lon - 0.01, lat + 0.01)]
    )
    ref_poly = register_aoi(store, gpd.GeoDataFrame(geometry=[square], crs=4326))
    geod = Geod(ellps="WGS84")
    for reference in (ref_point, ref_poly):
        plan = Plan(
            steps=[
                PlanStep(
                    id=1,
                    agent=AgentName.vector,
                    goal="near",
                    tool="within_distance",
                    args={"distance_m": 3000},
                    inputs={"features": features.id, "reference": reference.id},
                    expected_output="vector",
                )
            ]
        )
        orch, _, _ = orchestrator(store, {})
        record = orch.execute_plan(
            "points within 3 km", PlanResult(ledger=TaskLedger(intent="t"), plan=plan, mode="free")
        )
        assert record.status == "answered"
        assert any("local metric projection" in n for n in record.notes)  # the compatibility check noted 4326
        out = store.read_vector(record.cited_artifacts[0])
        assert len(out) > 0
        boundary = shapely.segmentize(square.exterior, 0.00001)  # ~1 m vertices for the polygon reference
        blon, blat = np.array(boundary.coords).T
        for _, row in out.iterrows():
            if reference is ref_point:
                _, _, expected = geod.inv(row.geometry.x, row.geometry.y, lon, lat)
            elif square.contains(row.geometry):
                expected = 0.0
            else:
                _, _, d = geod.inv(np.full(blon.shape, row.geometry.x), np.full(blat.shape, row.geometry.y), blon, blat)
                expected = d.min()
            assert abs(row["distance_m"] - expected) < 1.0, (row["name"], row["distance_m"], expected)
            assert expected <= 3000 + 1.0
        # and nothing within 3 km was missed
        all_pts = store.read_vector(features.id)
        if reference is ref_point:
            _, _, d = geod.inv(all_pts.geometry.x.values, all_pts.geometry.y.values, np.full(40, lon), np.full(40, lat))
            assert len(out) == int((d <= 3000).sum())


# --------------------------------------------------------------------------- stalls and replanning
def test_empty_result_stalls_then_replanning_succeeds(store):
    def near(search):
        return free_plan(
            LOAD_EATON,
            step(2, "maps", "get_features", {"feature_class": "healthcare", "buffer_m": search}, {"aoi": "step:1"}),
            step(3, "vector", "nearest", {"k": 2}, {"features": "step:2", "reference": "step:1"}),
        )

    script = {"planner": [near(500), near(10000)], "progress": [{"action": "replan", "reason": "search wider"}]}
    orch, model, events = orchestrator(store, script, mode="free")
    record = orch.run("The two hospitals nearest to the Eaton fire")
    assert record.status == "answered", record.answer
    assert record.progress.replans == 1 and len(record.plans) == 2
    (empty,) = [f for f in record.progress.failures]
    assert empty.check == "empty_result" and empty.step_id == 2
    # the empty intermediate artifact is kept; step 3 of the first plan never ran on it
    assert [s.tool for s in record.steps if s.plan_index == 1] == ["load_event_layer", "get_features"]
    # the failure went into the replanning prompt
    second_plan_prompt = [c for c in model.calls if c.role == "planner"][1].messages[-1].content
    assert "produced no features" in second_plan_prompt
    nearest = store.read_vector(record.cited_artifacts[0])
    assert list(nearest["NAME"]) == ["AURORA LAS ENCINAS HOSPITAL", "MONROVIA MEMORIAL HOSPITAL"]
    assert "replan" in [e.type for e in events]


def test_an_empty_final_result_is_an_answer_not_a_stall(store):
    choice = {"template": "features_near_hazard", "feature_class": "healthcare", "distance_m": 1000}
    orch, model, _ = orchestrator(store, {"planner": [choice]}, always_ask_model=True)
    record = orch.run("Which hospitals are within 1 km of the Eaton fire perimeter?")
    assert record.status == "answered" and record.progress.stalls == 0
    assert "0 healthcare features within 1,000 m" in record.answer
    assert [c.role for c in model.calls] == ["planner"]  # no progress-model call


def test_stall_budget_exhausted_gives_an_honest_partial_answer(store):
    tornado = lambda role: free_plan(step(1, "vector", "load_event_layer", {"event_id": 1, "role": role}))  # noqa: E731
    script = {
        "planner": [tornado("hazard"), tornado("damage")],
        "progress": [{"action": "replan", "reason": "try again"}] * 2,
    }
    orch, _, _ = orchestrator(store, script, mode="free", stall_budget=1)
    record = orch.run("Which buildings were hit by the St. Louis tornado?")
    assert record.status == "partial"
    assert record.answer.startswith("**Partial answer")
    assert "no hazard layer is available for event 1" in record.answer
    assert "no damage layer is available for event 1" in record.answer
    assert "stall budget" in record.answer
    assert len(store) == 0


def test_a_replan_identical_to_the_failed_plan_is_not_run_again(store):
    tornado = free_plan(step(1, "vector", "load_event_layer", {"event_id": 1, "role": "hazard"}))
    script = {"planner": [tornado, tornado], "progress": [{"action": "replan", "reason": "try again"}]}
    orch, model, _ = orchestrator(store, script, mode="free", stall_budget=5)
    record = orch.run("Which buildings were hit by the St. Louis tornado?")
    assert record.status == "partial" and len(record.plans) == 1
    assert len([s for s in record.steps if s.tool == "load_event_layer"]) == 1
    assert "same plan again" in record.answer


# --------------------------------------------------------------------------------- model output
def test_malformed_model_json_is_retried_with_the_error(store):
    choice = {"template": "features_near_hazard", "feature_class": "healthcare", "distance_m": 5000}
    orch, model, _ = orchestrator(store, {"planner": ["{'template': oops", choice]}, always_ask_model=True)
    record = orch.run(EATON_Q)
    assert record.status == "answered"
    assert "not usable JSON" in model.calls[1].last_user


def test_malformed_model_json_past_the_bound_is_a_typed_failure(store):
    orch, model, _ = orchestrator(
        store, {"planner": ["nope", "still nope", '{"template": "x"}']}, always_ask_model=True
    )
    record = orch.run(EATON_Q)
    assert record.status == "failed"
    assert record.error.startswith("ModelOutputError")
    assert "could not be answered" in record.answer and "Traceback" not in record.answer
    assert len(model.calls) == 3  # one try + two retries


# ------------------------------------------------------------------------------ cancel and resume
def test_cancel_between_steps_then_resume_from_the_saved_state(store):
    choice = {"template": "features_near_hazard", "feature_class": "healthcare", "distance_m": 5000}
    cancel = threading.Event()
    orch = Orchestrator(
        store,
        LLM(ScriptedModel({"planner": [choice]})),
        cancel=cancel,
        config=OrchestratorConfig(always_ask_model=True),
        on_event=lambda e: cancel.set() if e.type == "step_finished" else None,
    )
    record = orch.run(EATON_Q)
    assert record.status == "cancelled" and len(store) == 1
    assert "Cancelled" in record.answer
    orch2 = Orchestrator(store, LLM(ScriptedModel({})))
    resumed = orch2.resume(record.run_id)
    assert resumed.status == "answered"
    assert store.get(resumed.cited_artifacts[0]).metadata.feature_count == 7
    assert len(store) == 3  # the first step was not redone


def test_unknown_aoi_is_a_clear_error(store):
    orch, _, _ = orchestrator(store, {})
    record = orch.run(EATON_Q, aoi_artifact_id="a_12345678")
    assert record.status == "failed" and "not in this session's store" in record.answer


def test_empty_aoi_is_refused_with_a_message(store):
    with pytest.raises(ToolFailed, match="empty"):
        register_aoi(store, gpd.GeoDataFrame(geometry=[], crs=4326))


def test_specialist_chooses_the_tool_seeing_only_its_instruction_and_input_metadata(store):
    plan = free_plan(
        LOAD_EATON,
        {
            "id": 2,
            "agent": "vector",
            "goal": "Buffer the burn area by one kilometre",
            "inputs": {"layer": "step:1"},
            "expected_output": "vector",
        },
    )
    script = {
        "planner": [plan],
        "vector": [{"tool": "buffer", "args": {"distance_m": -5}}, {"tool": "buffer", "args": {"distance_m": 1000}}],
    }
    orch, model, _ = orchestrator(store, script, mode="free")
    record = orch.run("Buffer the Eaton burn area by 1 km")
    assert record.status == "answered"
    assert [s.tool for s in record.steps] == ["load_event_layer", "buffer"]
    first, retry = [c for c in model.calls if c.role == "vector"]
    prompt = first.messages[-1].content
    assert "Buffer the burn area by one kilometre" in prompt and store.get(record.steps[0].artifact_id).id in prompt
    assert (
        "EPSG:26911" in prompt and "coordinates" not in prompt and "Eaton fire" not in prompt
    )  # no question, no coords
    assert "distance_m" in retry.last_user  # the invalid argument went back with the error


def test_a_planned_tool_of_another_specialist_is_refused_without_a_model_call():
    from geofaham_plugin.core.orchestrator.toolchoice import ToolChoice, choose_tool

    model = ScriptedModel({})
    wrong = PlanStep(
        id=2, agent=AgentName.maps, goal="buffer", tool="buffer", args={"distance_m": 5}, expected_output="vector"
    )
    failure = choose_tool(LLM(model), wrong, {})
    assert failure.check == "plan_adherence" and "maps has no tool 'buffer'" in failure.message
    unknown = wrong.model_copy(update={"agent": AgentName.vector, "tool": "teleport"})
    assert choose_tool(LLM(model), unknown, {}).message == "vector has no tool 'teleport'"
    right = wrong.model_copy(update={"agent": AgentName.vector})
    choice = choose_tool(LLM(model), right, {})
    assert isinstance(choice, ToolChoice) and choice.by == "plan" and choice.tool.name == "buffer"
    assert choice.args == {"distance_m": 5} and model.calls == []


def test_follow_up_reuses_facts_and_artifacts_of_the_previous_run(store):
    orch, model, _ = orchestrator(store, {})
    first = orch.run("How many buildings were damaged in the Eaton fire?")
    assert first.status == "answered" and "3,051 in total" in first.answer  # affected+minor+major+destroyed
    n = len(store)
    follow = orch.run("Now only the destroyed ones", previous=orch.last_run())
    assert follow.status == "answered", follow.answer
    assert follow.follow_up_of == first.run_id and follow.facts.event_id == 11
    assert "2,722 in total" in follow.answer
    # the damage layer was not loaded again: its artifact was reused
    assert follow.steps[0].artifact_id == first.steps[0].artifact_id
    assert len(store) == n + 2 and follow.steps[0].reused and "(reused)" in follow.answer
    assert model.calls == []  # both questions were clear enough for the pre-pass alone


def test_a_question_naming_another_disaster_is_not_a_follow_up(store):
    orch, _, _ = orchestrator(store, {})
    first = orch.run("Which hospitals are within 5 km of the Eaton fire perimeter?")
    second = orch.run("How many buildings were destroyed in the Palisades fire?", previous=first)
    assert second.follow_up_of is None and second.facts.distances_m == [] and second.facts.event_id == 14
    assert second.plans[0].specs[0].subject.event_id == 14 and "6,823 in total" in second.answer


def test_export_a_run_as_a_self_contained_folder(store, tmp_path):
    from geofaham_plugin.core.export import export_run

    orch, _, _ = orchestrator(store, {})
    record = orch.run("Which hospitals are within 5 km of the Eaton fire perimeter?")
    out = export_run(store, record.run_id, tmp_path / "share")
    files = sorted(p.name for p in (out / "artifacts").iterdir())
    assert files == sorted(f"{s.artifact_id}.gpkg" for s in record.steps)
    assert "7 healthcare features" in (out / "answer.md").read_text()
    assert json.loads((out / "run.json").read_text())["run_id"] == record.run_id
    result = gpd.read_file(out / "artifacts" / f"{record.cited_artifacts[0]}.gpkg")
    assert len(result) == 7 and "distance_m" in result.columns
    assert f"{record.cited_artifacts[0]}.gpkg" in (out / "README.md").read_text()


def test_unnamed_features_read_unnamed_in_the_answer_table(store):
    from geofaham_plugin.core.orchestrator.synthesis import describe_vector

    gdf = gpd.GeoDataFrame(
        {"name": ["Escola", None], "distance_m": [10.0, 20.0]},
        geometry=[Point(-0.4, 39.4), Point(-0.41, 39.4)],
        crs=4326,
    )
    record = store.register_vector(gdf, source="test", summary="schools", extra={"name_field": "name"})
    _, table = describe_vector(store, record)
    assert "(unnamed)" in table and "None" not in table
