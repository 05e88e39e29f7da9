"""What a question takes out, said after it ("psychiatric and military ones excluded") or as a negated copula in
Spanish, French and Portuguese ("que no sea psiquiátrico", "qui n'est pas", "que não seja"): taken out where the
data spell it, else said not applied, never kept as a filter (a post-positioned exclusion once kept only the
psychiatric hospitals and answered with one). Also two readings of closed classes next to them: "a mi zona" is
Spanish "to my area", no mile; "which hospital lies closest" asks for one, not three.

Distances are checked against GeoPandas in the fire's projected CRS."""

from __future__ import annotations

import geopandas as gpd
import pytest

from bench.aoi_files import write_input_file
from geofaham_plugin.core.aoi import register_aoi_file
from geofaham_plugin.core.engines.layers import data_dir, default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.prepass import excluded_in, extract_distances, normalise, prepass


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("Which hospital is closest? Psychiatric and military ones excluded.", "psychiatric and military ones"),
        ("count the structures (outbuildings not counted)", "outbuildings"),
        ("el hospital más cercano que no sea psiquiátrico", "psiquiatrico"),
        ("l'hôpital le plus proche qui n'est pas militaire", "militaire"),
        ("o hospital mais próximo que não seja psiquiátrico", "psiquiatrico"),
        ("hospitals excluding psychiatric ones", "psychiatric ones"),
    ],
)
def test_what_is_taken_out_is_read_before_or_after(text, what):
    assert [e.what for e in excluded_in(normalise(text))] == [what]


def test_a_mi_is_spanish_for_my():
    assert extract_distances(normalise("el hospital más cercano a mi zona")) == []
    assert extract_distances(normalise("within a mile of the fire")) == [1609.344]
    assert extract_distances(normalise("within a km of it")) == [1000.0]


@pytest.fixture(scope="module")
def hospitals_from_east():
    """The HIFLD hospitals of Los Angeles County by distance from the east Altadena AOI (EPSG:26911)."""
    path = data_dir() / default_catalogue().find(event_id=11, role="poi")[0].path
    h = gpd.read_file(path).to_crs(26911)
    h = h[(h["STATE"] == "CA") & (h["COUNTY"] == "LOS ANGELES")]
    return h, h.distance(gpd.read_file(_aoi_file()).to_crs(26911).geometry.iloc[0])


def _aoi_file():
    import tempfile
    from pathlib import Path

    return write_input_file("east_altadena_kinneloa.geojson", Path(tempfile.mkdtemp()))


def test_the_nearest_one_with_kinds_excluded_after(store, hospitals_from_east):
    """'Psychiatric and military ones excluded' (a sentence of its own): the nearest hospital of every other
    TYPE, one (the question says "which hospital"), at its distance."""
    h, dist = hospitals_from_east
    other = dist[~h["TYPE"].isin(["PSYCHIATRIC", "MILITARY"])]
    nearest = h.loc[other.idxmin(), "NAME"]
    aoi = register_aoi_file(store, _aoi_file())
    record = Orchestrator(store, LLM(ScriptedModel({}))).run(
        "Which hospital lies closest to my area? Psychiatric and military ones excluded. Give its distance.",
        aoi_artifact_id=aoi.id,
    )
    assert record.status == "answered", record.answer
    assert [i.name for i in record.structured.items] == [nearest]
    assert record.structured.items[0].distance_m == pytest.approx(other.min(), abs=5)


def test_a_negated_copula_in_spanish_is_never_dropped(store):
    """'que no sea psiquiátrico' takes the psychiatric hospitals out: the data spell them in English, so code finds
    no value for it; the answer is partial and says the condition was not applied, never the nearest of all."""
    aoi = register_aoi_file(store, _aoi_file())
    record = Orchestrator(store, LLM(ScriptedModel({}))).run(
        "¿Cuál es el hospital más cercano a mi zona que no sea psiquiátrico? ¿A qué distancia?", aoi_artifact_id=aoi.id
    )
    assert record.status == "partial" and "que no sea psiquiatrico" in record.answer, record.answer
    assert "1,609 m" not in record.answer


@pytest.mark.parametrize(
    ("text", "metres"),
    [
        ("within nine hundred metres of the water", [900.0]),
        ("within two thousand five hundred meters", [2500.0]),
        ("within one hundred and fifty metres", [150.0]),
        ("a menos de novecientos metros", [900.0]),
        ("à moins de neuf cents mètres", [900.0]),
        ("dois mil metros", [2000.0]),
        ("para lá dos vinte km", [20000.0]),  # "dos" is "of the", no number
        ("no more than five and a half kilometres away", [5500.0]),  # the half said after the number
        ("within 2 and a half km", [2500.0]),
        ("a menos de cinco kilómetros y medio", [5500.0]),  # said after the unit
        ("à moins de deux kilomètres et demi", [2500.0]),
        ("até três quilómetros e meio", [3500.0]),
        ("within half a kilometre", [500.0]),
        ("a menos de dos kilómetros", [2000.0]),  # the Spanish two before a unit (the Portuguese "dos" is "of the")
        ("a dos mil metros o menos", [2000.0]),
        # eleven to nineteen and the tens, in every language; "and" after a hundred or a thousand in every language
        ("a doce kilómetros o menos", [12000.0]),
        ("à moins de douze kilomètres", [12000.0]),
        ("a menos de dezoito quilómetros", [18000.0]),
        ("a once kilómetros", [11000.0]),  # "once" (eleven) before a unit
        ("once again within 3 km", [3000.0]),  # the English "once" is no number
        ("a mil e quinhentos metros", [1500.0]),  # not 500
        ("a cento e cinquenta metros", [150.0]),
        ("à soixante mètres", [60.0]),
    ],
)
def test_numbers_said_in_several_words(text, metres):
    assert extract_distances(normalise(text)) == metres


def test_imperatives_that_ask_for_names_and_the_farthest_one():
    from geofaham_plugin.core.planning.asks import question_asks
    from geofaham_plugin.core.planning.coverage import question_constraints
    from geofaham_plugin.core.planning.prepass import prepass

    assert [a.kind for a in question_asks("From my area, list the hospitals 5 km or nearer.")] == ["names"]
    assert [a.kind for a in question_asks("Listez les hôpitaux à moins de 2 km.")] == ["names"]
    facts = prepass("Which València hospital lies farthest from the flood?")
    assert any(c.kind == "rank" for c in question_constraints(facts))


@pytest.mark.parametrize(
    "question",
    [
        "Sin contar los que quedaron dentro del agua, ¿qué consultorio de València está más cerca de la riada?",
        "Leaving out the ones inside the flood zone, which València clinic is nearest to the water?",
    ],
)
def test_an_exclusion_of_what_lies_inside_asks_for_what_lies_outside(question):
    """Taking out the features inside the hazard keeps those outside it: a relation a step must apply (coverage
    says so when none does), never the nearest of all of them."""
    from geofaham_plugin.core.planning.coverage import question_constraints

    found = question_constraints(prepass(question, layers=default_catalogue()))
    assert any(c.kind == "relation" and c.value == "outside" for c in found), found
