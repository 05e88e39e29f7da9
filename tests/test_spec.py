"""Composable analysis specs: questions → specs → plans of typed tools, and end to end on the sample data with
expected values computed here independently (geopandas in a metric CRS, no product code)."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
from shapely.geometry import box

from geofaham_plugin.core.aoi import register_aoi
from geofaham_plugin.core.engines.layers import data_dir, default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.planner import Planner
from geofaham_plugin.core.planning.prepass import prepass
from geofaham_plugin.core.planning.spec import (
    AnalysisSpec,
    Relation,
    SetRef,
    SpecError,
    compile_specs,
    spec_from_facts,
)

EATON_DINS = "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson"
ALTADENA_BOX = (-118.16, 34.17, -118.10, 34.20)


def tools_for(question: str, aoi: str | None = None) -> list[str]:
    draft = spec_from_facts(prepass(question), aoi_artifact_id=aoi, layers=default_catalogue())
    assert not draft.gaps, draft.gaps
    return [s.tool for s in compile_specs(draft.specs).steps]


@pytest.mark.parametrize(
    "question,tools",
    [
        # a count of damage, with a class filter and a grouping
        (
            "how many homes got destroyed in the palisades fire, by type of structure",
            ["load_event_layer", "select_damage", "count"],
        ),
        # features inside the hazard (Spanish)
        (
            "¿Cuántas escuelas quedaron dentro de la zona inundada de Valencia?",
            ["load_event_layer", "get_features", "inside", "count"],
        ),
        # features within a distance of damage: the reference is the damage, not the hazard
        (
            "hospitals less than 1 km from damaged buildings of the Eaton fire",
            ["load_event_layer", "select_damage", "get_features", "within_distance"],
        ),
        # damage near features: the features are fetched around the damage
        (
            "count destroyed houses no more than 600 m from a school, Eaton fire",
            ["load_event_layer", "select_damage", "get_features", "within_distance", "count"],
        ),
        # beyond a distance: buffer the hazard, keep what lies outside it
        (
            "How many schools lie more than 2 km from the Valencia flood?",
            ["load_event_layer", "get_features", "buffer", "outside", "count"],
        ),
        # the k nearest, k said as a word before "closest" (French)
        (
            "Quels sont les deux hôpitaux les plus proches de l'incendie de Lahaina ?",
            ["load_event_layer", "get_features", "nearest"],
        ),
    ],
)
def test_questions_compile_to_composed_plans(question, tools):
    assert tools_for(question) == tools


def test_the_user_area_restricts_the_subject_before_anything_else():
    steps = compile_specs(
        spec_from_facts(
            prepass("How many buildings were destroyed in the Eaton fire?"), aoi_artifact_id="a_0000aaaa"
        ).specs
    ).steps
    assert [s.tool for s in steps] == ["load_event_layer", "inside", "select_damage", "count"]
    assert steps[1].inputs == {"features": "step:1", "mask": "a_0000aaaa"}


def test_a_comparison_computes_the_same_analysis_for_each_disaster():
    draft = spec_from_facts(prepass("Compare destroyed homes between the Eaton and the Palisades fires"))
    assert [s.subject.event_id for s in draft.specs] == [11, 14]
    plan = compile_specs(draft.specs)
    assert [s.tool for s in plan.steps].count("count") == 2


def test_k_nearest_reads_a_number_word_and_a_plural_gets_three_with_a_note():
    two = spec_from_facts(prepass("Name the two schools closest to the Eaton burn scar")).specs[0]
    assert two.relation is not None and two.relation.k == 2
    plural = spec_from_facts(prepass("closest hospitals to the Lahaina fire")).specs[0]
    assert plural.relation is not None and plural.relation.k == 3 and plural.implied


def test_an_ambiguous_disaster_is_a_gap_for_the_model_not_a_guess():
    draft = spec_from_facts(prepass("How many buildings were destroyed in the fire?"))
    assert draft.specs == [] and draft.gaps[0].field == "event_id" and 11 in draft.gaps[0].candidates


def test_questions_that_are_not_set_analyses_are_left_to_the_templates():
    with pytest.raises(SpecError):
        spec_from_facts(prepass("Show me Sentinel-2 imagery of the Eaton fire"))
    with pytest.raises(SpecError, match="no hazard-area layer"):
        spec_from_facts(prepass("List the shelters near the Porto Alegre flood"), layers=default_catalogue())


def test_spec_validation_rejects_incoherent_specs():
    with pytest.raises(ValueError, match="needs a disaster event"):
        SetRef(kind="damage")
    with pytest.raises(ValueError, match="needs a distance"):
        Relation(kind="within", reference=SetRef(kind="hazard", event_id=11))
    with pytest.raises(ValueError, match="not defined"):
        AnalysisSpec(subject=SetRef(kind="damage", event_id=11), measure="area")
    with pytest.raises(ValueError, match="none is set"):
        AnalysisSpec(
            subject=SetRef(kind="features", feature_class="healthcare"),
            relation=Relation(kind="inside", reference=SetRef(kind="aoi")),
        )


def test_the_planner_uses_specs_without_a_model_call_and_falls_back_to_templates(store):
    planner = Planner(LLM(ScriptedModel({})), layers=default_catalogue())
    result = planner.plan(prepass("How many schools are inside the Valencia flood extent?"), store)
    assert result.specs and not result.model_called and result.template is None
    imagery_model = ScriptedModel({"planner": [{"template": "burn_severity"}]})
    imagery = Planner(LLM(imagery_model)).plan(prepass("Map the burn severity of the Eaton fire with dNBR"), store)
    assert imagery.template == "burn_severity" and not imagery.specs


def test_an_ambiguous_disaster_is_chosen_by_the_model_from_a_narrowed_enum(store):
    model = ScriptedModel({"planner": [{"event_id": 14}]})
    result = Planner(LLM(model), layers=default_catalogue()).plan(
        prepass("How many buildings were destroyed in the fire?"), store
    )
    assert result.model_called and result.specs[0].subject.event_id == 14
    schema = str(model.calls[0].schema)
    assert "14" in schema and "11" in schema and "template" not in schema


# ------------------------------------------------------------------------------------ end to end
def _orchestrator(store):
    return Orchestrator(store, LLM(ScriptedModel({})))


def test_e2e_the_area_of_interest_restricts_a_damage_count(store):
    dins = gpd.read_file(data_dir() / EATON_DINS)
    inside = dins.intersects(box(*ALTADENA_BOX))
    expected = int((inside & (dins["DAMAGE"] == "Destroyed (>50%)")).sum())
    assert 0 < expected < int((dins["DAMAGE"] == "Destroyed (>50%)").sum())  # the AOI makes a difference
    aoi = register_aoi(store, gpd.GeoDataFrame(geometry=[box(*ALTADENA_BOX)], crs=4326))
    record = _orchestrator(store).run("how many structures did the Eaton fire destroy?", aoi_artifact_id=aoi.id)
    assert record.status == "answered", record.answer
    assert f"{expected:,}" in record.answer
    applied = {c.kind: c.applied for c in record.constraints}
    assert applied["area_of_interest"] and applied["damage_class"]


def test_e2e_spanish_hospitals_within_a_distance_of_the_flood(store):
    flood = gpd.read_file(data_dir() / "valencia-2024/emsr773_observed_flood_merged.geojson").to_crs(25830)
    health = gpd.read_file(data_dir() / "valencia-2024/valencia_city_health_facilities.geojson").to_crs(25830)
    distances = health.geometry.distance(flood.union_all()).to_numpy()
    assert not np.any(np.abs(distances - 1500) < 10)  # no facility on the edge: the CRS cannot flip the count
    expected = int((distances <= 1500).sum())
    record = _orchestrator(store).run(
        "¿Cuántos centros de salud hay a menos de 1,5 km de la zona inundada de Valencia?"
    )
    assert record.status == "answered", record.answer
    assert f"{expected:,} in total" in record.answer
    assert [s.tool for s in record.steps] == ["load_event_layer", "get_features", "within_distance", "count"]


def test_e2e_a_comparison_states_each_disaster(store):
    record = _orchestrator(store).run("Destroyed homes: Eaton fire versus Palisades fire?")
    assert record.status == "answered", record.answer
    assert "2,722" in record.answer and "6,823" in record.answer
    assert all(c.applied for c in record.constraints if c.kind == "event")
