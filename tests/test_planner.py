"""Guided planning: template ranking, slot filling by the pre-pass, compilation and validation for each
template; free planning validated the same way."""

from __future__ import annotations

import pytest

from geofaham_plugin.core.domain.names import AgentName
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.planning.plan import Plan, PlanStep
from geofaham_plugin.core.planning.planner import Planner, rank_templates
from geofaham_plugin.core.planning.prepass import prepass
from geofaham_plugin.core.planning.templates import TemplateError, compile_template, load_templates
from geofaham_plugin.core.planning.validate import validate_plan

CASES = [
    (
        "Which hospitals are within 5 km of the Eaton fire perimeter?",
        "features_near_hazard",
        {"feature_class": "healthcare", "distance_m": 5000},
        [("vector", "load_event_layer"), ("maps", "get_features"), ("vector", "within_distance")],
        11,
    ),
    (
        "What are the 3 nearest hospitals to the Palisades fire?",
        "nearest_features",
        {"feature_class": "healthcare", "k": 3},
        [("vector", "load_event_layer"), ("maps", "get_features"), ("vector", "nearest")],
        14,
    ),
    (
        "How many structures were destroyed in the Eaton fire, by structure type?",
        "count_damage",
        {"damage_classes": ["destroyed"], "group_by": "structure type"},
        [("vector", "load_event_layer"), ("vector", "select_damage"), ("vector", "count")],
        11,
    ),
    (
        "How many destroyed homes are within 2 km of a hospital after the Eaton fire?",
        "damage_near_features",
        {"damage_classes": ["destroyed"], "feature_class": "healthcare", "distance_m": 2000},
        [
            ("vector", "load_event_layer"),
            ("vector", "select_damage"),
            ("maps", "get_features"),
            ("vector", "within_distance"),
            ("vector", "count"),
        ],
        11,
    ),
    (
        "Which health centres were inside the Valencia DANA flood area?",
        "features_in_hazard",
        {"feature_class": "healthcare"},
        [("vector", "load_event_layer"), ("maps", "get_features"), ("vector", "inside")],
        6,
    ),
]


@pytest.mark.parametrize("question,template,slots,steps,event_id", CASES, ids=[c[1] for c in CASES])
def test_guided_plans_compile_from_each_template(store, question, template, slots, steps, event_id):
    facts = prepass(question)
    assert facts.event_id == event_id
    assert template in [name for name, _ in rank_templates(facts)[:3]], rank_templates(facts)
    model = ScriptedModel({"planner": [{"template": template, **slots}]})
    result = Planner(LLM(model), always_ask_model=True).plan(facts, store)
    assert result.template == template and result.model_called
    assert [(s.agent.value, s.tool) for s in result.plan.steps] == steps
    assert validate_plan(result.plan, store) == []
    # agents and dependencies are derived in code: each step depends exactly on the steps it reads
    for s in result.plan.steps:
        assert s.depends_on == sorted(set(s.step_refs()))
    assert result.ledger.disaster_event_id == event_id and result.ledger.template == template
    # the model was offered only the narrowed enum of candidate templates
    prop = model.calls[0].schema["properties"]["template"]
    offered = prop.get("enum") or [prop["const"]]
    assert template in offered and len(offered) <= 3


def test_prepass_facts_override_the_models_guess_on_a_first_plan(store):
    facts = prepass("Which hospitals are within 5 km of the Eaton fire perimeter?")
    model = ScriptedModel(
        {"planner": [{"template": "features_near_hazard", "feature_class": "healthcare", "distance_m": 5}]}
    )
    result = Planner(LLM(model), always_ask_model=True).plan(facts, store)
    assert result.plan.steps[2].args == {"distance_m": 5000.0}


def test_a_clear_question_needs_no_model_call(store):
    facts = prepass("How many buildings were destroyed in the Palisades fire?")
    result = Planner(LLM(ScriptedModel({}))).plan(facts, store)
    assert not result.model_called and result.template is None and len(result.specs) == 1
    assert [s.tool for s in result.plan.steps] == ["load_event_layer", "select_damage", "count"]
    assert result.plan.steps[1].args == {"damage_classes": ["destroyed"]}


def test_missing_slot_goes_back_to_the_model_with_a_hint(store):
    facts = prepass("Which schools or hospitals are within 1 km of the Eaton fire?")
    assert sorted(facts.target_entities) == ["education", "healthcare"]  # one class per call: the model picks
    model = ScriptedModel(
        {
            "planner": [
                {"template": "features_near_hazard"},
                {"template": "features_near_hazard", "feature_class": "education"},
            ]
        }
    )
    result = Planner(LLM(model), always_ask_model=True).plan(facts, store)
    assert "needs slot 'feature_class'" in model.calls[1].last_user
    assert result.plan.steps[1].args == {"feature_class": "education", "buffer_m": 1000.0}


def test_user_aoi_replaces_the_hazard_step(store):
    import geopandas as gpd
    from shapely.geometry import box

    from geofaham_plugin.core.aoi import register_aoi

    aoi = register_aoi(store, gpd.GeoDataFrame(geometry=[box(-118.2, 34.1, -118.0, 34.3)], crs=4326))
    facts = prepass("Which hospitals are within 1 km of my area?")
    model = ScriptedModel(
        {"planner": [{"template": "features_near_hazard", "feature_class": "healthcare", "distance_m": 1000}]}
    )
    result = Planner(LLM(model), always_ask_model=True).plan(facts, store, aoi_artifact_id=aoi.id)
    assert [s.tool for s in result.plan.steps] == ["get_features", "within_distance"]
    assert result.plan.steps[0].inputs == {"aoi": aoi.id}
    assert result.plan.steps[1].inputs == {"features": "step:1", "reference": aoi.id}
    assert result.ledger.aoi_source == "user_aoi"


def test_plan_validation_catches_self_forward_and_duplicate_steps(store):
    def step(i, inputs, **kw):
        return PlanStep(
            id=i,
            agent=AgentName.vector,
            goal="g",
            tool="buffer",
            args={"distance_m": 100},
            inputs=inputs,
            expected_output="vector",
            **kw,
        )

    load = PlanStep(
        id=1,
        agent=AgentName.vector,
        goal="g",
        tool="load_event_layer",
        args={"event_id": 11, "role": "hazard"},
        expected_output="vector",
    )
    problems = validate_plan(
        Plan(
            steps=[
                load,
                step(2, {"layer": "step:2"}),
                step(3, {"layer": "step:4"}),
                step(4, {"layer": "step:1"}),
                step(5, {"layer": "step:1"}),
            ]
        ),
        store,
    )
    text = " | ".join(problems)
    assert "step 2 refers to itself" in text
    assert "step 3 refers to step 4, which does not come before it" in text
    assert "step 5 duplicates an earlier step" in text
    bad_tool = PlanStep(
        id=1,
        agent=AgentName.maps,
        goal="g",
        tool="buffer",
        args={"distance_m": -1},
        inputs={},
        expected_output="vector",
    )
    text = " | ".join(validate_plan(Plan(steps=[bad_tool]), store))
    assert "belongs to the vector agent" in text and "needs inputs ['layer']" in text and "distance_m" in text


def test_every_template_file_is_valid_and_has_examples():
    templates = load_templates()
    assert len(templates) >= 5
    for t in templates.values():
        assert t.examples, t.name
        with pytest.raises(TemplateError):
            compile_template(t, {}, event_id=None) if any(s.required for s in t.slots.values()) else compile_template(
                t, {}, event_id=None
            )


def test_a_replan_of_a_question_naming_no_disaster_offers_no_disasters_templates():
    """Issue 28, item 2, on a replan: a question about files that names no disaster and sets no area gets no
    disaster's workflow when its plan failed (the model would pick the Saint Louis tornado): NoOtherPlan, and the
    model is never asked."""
    from geofaham_plugin.core.errors import NoOtherPlan

    model = ScriptedModel({"planner": [{"template": "count_damage", "event_id": 1}] * 4})
    facts = prepass("Tidy up the data and make it ready for the mayor")
    assert facts.event_id is None and not facts.event_candidates
    with pytest.raises(NoOtherPlan, match="names no disaster and no area"):
        Planner(LLM(model)).plan(facts, None, failures=["step 1 failed"])
    assert model.calls == []
