"""A question's asks counted against the figures its specs give (``planning/asks.py``), and what a question names
of a local layer's data (``coverage._local_field_constraints``): a part of the question dropped, or a value of the
data it names and no step applies, makes the answer partial and names the part; never a number stated as the
answer to the whole question."""

from __future__ import annotations

import geopandas as gpd
import pytest

from geofaham_plugin.core.engines.layers import data_dir, default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.asks import figures, listed_if_asked, question_asks, unanswered
from geofaham_plugin.core.planning.coverage import local_field_constraints
from geofaham_plugin.core.planning.prepass import prepass
from geofaham_plugin.core.planning.spec_schema import AnalysisSpec, Relation, SetRef

HOSPITALS = "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson"
PERIMETER = "eaton-2025/eaton_adjusted_fire_perimeter.geojson"


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("How many homes were destroyed in Eaton, and how many were left standing?", ["count", "count"]),
        ("¿Cuántas viviendas se inundaron y qué porcentaje del total representan?", ["count", "share"]),
        ("Combien d'écoles sont à moins de 2 km du feu, et lesquelles ?", ["count", "names"]),
        ("Quantos hospitais ficam a menos de 3 km e a que distância está o mais próximo?", ["count", "distance"]),
        ("Which clinics are nearest to the flood, and how far away are they?", ["names", "distance"]),
        ("How many kilometres of road were under water?", ["measure"]),
        ("Count the destroyed buildings of the Eaton fire.", []),
        ("How many buildings which burned were homes?", ["count"]),
        ("Is there a hospital within 1 km of the fire? Name it.", ["yesno", "names"]),
        ("Eaton fire. How many schools sit inside the perimeter; did any of them burn?", ["count", "yesno"]),
    ],
)
def test_the_asks_of_a_question_are_the_interrogatives_that_open_its_clauses(question, kinds):
    assert [a.kind for a in question_asks(question)] == kinds


def _hospitals_within(d: float, measure: str = "count") -> AnalysisSpec:
    return AnalysisSpec(
        subject=SetRef(kind="features", feature_class="healthcare", event_id=11),
        relation=Relation(kind="within", distance_m=d, reference=SetRef(kind="hazard", event_id=11)),
        measure=measure,  # type: ignore[arg-type]
    )


def test_a_list_gives_the_count_names_and_distances_a_count_only_the_count():
    assert figures([_hospitals_within(5000, "list")]) == {"count": 1, "names": 1, "distance": 1}
    asked = "How many hospitals are within 5 km, and which ones?"
    assert [a.kind for a in unanswered(asked, [_hospitals_within(5000)])] == ["names"]
    assert unanswered(asked, [_hospitals_within(5000, "list")]) == []
    # the count becomes the list it is part of; a question asking one thing keeps its count
    assert listed_if_asked(asked, [_hospitals_within(5000)])[0].measure == "list"
    assert listed_if_asked("How many hospitals are within 5 km?", [_hospitals_within(5000)])[0].measure == "count"
    # two counts asked, one given: the second is named; a share gives its part's count and the share
    two = "How many were inspected, and how many of them were destroyed?"
    damage = AnalysisSpec(subject=SetRef(kind="damage", event_id=11))
    assert [a.clause for a in unanswered(two, [damage])] == ["how many of them were destroyed"]
    share = damage.model_copy(update={"measure": "share"})
    assert unanswered("How many burned, and what share is that?", [share]) == []


# ------------------------------------------------------------------------------------------ end to end
def _run(store, question: str):
    return Orchestrator(store, LLM(ScriptedModel({}))).run(question)


@pytest.fixture(scope="module")
def within_5km() -> list[str]:
    """The Los Angeles County hospitals within 5 km of the Eaton perimeter (EPSG:26911), computed here."""
    hospitals = gpd.read_file(data_dir() / HOSPITALS)
    hospitals = hospitals[(hospitals["STATE"] == "CA") & (hospitals["COUNTY"] == "LOS ANGELES")].to_crs(26911)
    perimeter = gpd.read_file(data_dir() / PERIMETER).to_crs(26911).union_all()
    distance = hospitals.distance(perimeter)
    assert not ((distance > 4900) & (distance < 5100)).any()  # no hospital near the threshold
    return sorted(hospitals.loc[distance <= 5000, "NAME"])


def test_e2e_how_many_and_which_gives_the_count_and_the_names(store, within_5km):
    record = _run(
        store, "Near the Eaton fire: how many hospitals are there within 5 km of it, and what are their names?"
    )
    assert record.status == "answered", record.answer
    assert f"{len(within_5km)} " in record.answer and all(name in record.answer for name in within_5km)


def test_e2e_a_second_question_no_spec_answers_makes_the_answer_partial_and_names_it(store):
    record = _run(store, "Eaton fire: how many structures were destroyed, and did any school burn?")
    assert record.status == "partial", record.answer
    assert "did any school burn" in record.answer and "Do not use it as the answer" in record.answer


def test_e2e_a_value_of_the_hospital_layer_the_question_names_must_be_applied(store, within_5km):
    record = _run(store, "How many general acute care hospitals lie within 5 km of the Eaton fire?")
    assert record.status == "partial", record.answer
    assert "TYPE is GENERAL ACUTE CARE" in record.answer
    record = _run(store, "Within 5 km of the Eaton fire, what is the total number of beds of the hospitals?")
    assert record.status == "partial" and "BEDS" in record.answer, record.answer
    # naming the county the hospitals are in narrows nothing (its values are places of the gazetteer); a question
    # naming nothing of the layer's data has nothing of it to apply
    fields = default_catalogue().field_profile("la_maui_hospitals")
    county = prepass("How many Los Angeles County hospitals are within 5 km of the Eaton fire?")
    assert local_field_constraints(county, fields) == []
    plain = prepass("How many hospitals are within 5 km of the Eaton fire and which are they?")
    assert local_field_constraints(plain, [f for f in fields if f.name != "NAME"]) == []
