"""Classes and kinds are closed classes of words and tags (``osm_classes.json``): natural land cover and leisure
areas are classes of their own ("scrub", "natural=grassland", "the nature reserve"), an area is asked, not named
("near the burned area" is the hazard), and a kind a reading narrows to must be said in the question (a 1.5B model
once narrowed "schools" to universities).

Areas come from the Catarroja extract and the EMSR773 flood read with GeoPandas in EPSG:25830."""

from __future__ import annotations

import geopandas as gpd
import pytest

from geofaham_plugin.core.engines.layers import data_dir, default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.prepass import prepass
from geofaham_plugin.core.planning.reading.read import unsaid_kinds_dropped
from geofaham_plugin.core.planning.reading.schema import Reading
from geofaham_plugin.core.planning.spec_read import spec_from_facts


def _spec(question: str):
    layers = default_catalogue()
    return spec_from_facts(prepass(question, layers=layers), layers=layers).specs


@pytest.mark.parametrize(
    ("question", "measure"),
    [
        ("How many hospitals are near the burned area of Eaton?", "count"),  # the hazard named, no area asked
        ("What was the burned area of the Eaton fire in km2?", "area"),
        ("¿Qué superficie de humedales de Catarroja quedó inundada?", "area"),
    ],
)
def test_an_area_is_asked_not_named(question, measure):
    assert _spec(question)[0].measure == measure


@pytest.mark.parametrize(
    ("question", "cls", "kinds"),
    [
        ("Catarroja: how many hectares of scrub did the flood cover?", "land_cover", ["scrub"]),
        ("What share of the natural=grassland in the Catarroja extract was under water?", "land_cover", ["grassland"]),
        ("Quelle surface de marais a été inondée à Catarroja ?", "land_cover", ["wetland"]),
        ("How many parks in Catarroja were flooded?", "leisure", ["park"]),
        # the land covers and uses the extract holds, by the words people use for them
        ("How much of the woods around Catarroja went under water, in hectares?", "land_cover", ["wood"]),
        ("¿Qué superficie de prados de siega de Catarroja cubrió el agua?", "landuse", ["meadow"]),
        ("Les pelouses de Catarroja : quelle part a été inondée ?", "landuse", ["grass"]),
        ("Os relvados de Catarroja ficaram debaixo de água?", "landuse", ["grass"]),
        ("Was the sports hall of Catarroja flooded?", "leisure", ["sports_hall"]),
        ("Quanto do terreno ferroviario de Catarroja ficou inundado?", "landuse", ["railway"]),
    ],
)
def test_land_cover_and_leisure_are_classes(question, cls, kinds):
    subject = _spec(question)[0].subject
    assert (subject.feature_class, subject.kinds) == (cls, kinds)


def test_the_area_of_scrub_flooded(store):
    layers = default_catalogue()
    polygons = layers.find(event_id=6, role="osm")
    path = next(data_dir() / p.path for p in polygons if p.path and "poligonos" in p.path)
    scrub = gpd.read_file(path).query("natural == 'scrub'").to_crs(25830)
    flood = gpd.read_file(data_dir() / layers.find(event_id=6, role="hazard")[0].path).to_crs(25830).union_all()
    hectares = scrub.intersection(flood).area.sum() / 1e4
    assert hectares > 0
    reading = {
        "subject": "land_cover",
        "kinds": ["scrub"],
        "relation": "inside",
        "reference": "hazard",
        "measure": "area",
    }
    record = Orchestrator(store, LLM(ScriptedModel({"reader": [reading, reading]}))).run(
        "Catarroja: how many hectares of scrub did the flood cover?"
    )
    assert record.status == "answered", record.answer
    (total,) = record.structured.totals()
    assert total.unit == "km2" and total.value * 100 == pytest.approx(hectares, rel=0.01), record.answer


def test_a_kind_the_question_does_not_say_is_no_reading():
    slip = Reading(subject="education", kinds=["university"])
    assert unsaid_kinds_dropped(slip, "How many schools in Catarroja were flooded?").kinds == []
    said = Reading(subject="education", kinds=["university"])
    assert unsaid_kinds_dropped(said, "Which universities were flooded?").kinds == ["university"]
    tagged = Reading(subject="roads", kinds=["track"])
    assert unsaid_kinds_dropped(tagged, "km of highway=track under water").kinds == ["track"]


@pytest.mark.parametrize(
    "question",
    [
        "¿Cuántas escuelas quedaron destruidas en Eaton?",
        "Combien d'écoles ont été détruites à Eaton ?",
        "Quantos prédios escolares foram destruídos no Eaton?",
    ],
)
def test_a_class_named_in_any_language_is_the_structure_type_that_is_its_word(question):
    """'escuelas destruidas': the DINS type School (the class's English word), not OpenStreetMap schools."""
    spec = _spec(question)[0]
    assert spec.subject.kind == "damage" and spec.subject.filters == {"STRUCTURETYPE": ["School"]}


def test_a_waterway_kind_is_its_own_length(store):
    layers = default_catalogue()
    lines = next(data_dir() / p.path for p in layers.find(event_id=6, role="osm") if p.path and "lineas" in p.path)
    canals = gpd.read_file(lines).query("waterway == 'canal'").to_crs(25830)
    flood = gpd.read_file(data_dir() / layers.find(event_id=6, role="hazard")[0].path).to_crs(25830).union_all()
    km = canals.intersection(flood).length.sum() / 1000
    everything = gpd.read_file(lines).dropna(subset=["waterway"]).to_crs(25830).intersection(flood).length.sum() / 1000
    assert 0 < km < everything / 2  # the kind changes the answer
    question = "Total length of canals under the flood water in Catarroja, km?"
    assert _spec(question)[0].subject.kinds == ["canal"]
    reading = {
        "subject": "waterways",
        "kinds": ["canal"],
        "relation": "inside",
        "reference": "hazard",
        "measure": "length",
    }
    record = Orchestrator(store, LLM(ScriptedModel({"reader": [reading, reading]}))).run(question)
    assert record.status == "answered", record.answer
    (total,) = record.structured.totals()
    assert total.unit == "km" and total.value == pytest.approx(km, rel=0.02), record.answer


@pytest.mark.parametrize(
    ("question", "cls", "kinds"),
    [
        ("Quels établissements de santé de Valence sont restés hors de l'eau ?", "healthcare", []),
        ("¿Cuántos recursos sanitarios de València quedaron bajo el agua?", "healthcare", []),
        ("Unidades de saúde de Valência atingidas pela cheia: quantas?", "healthcare", []),
        ("A esquadra de polícia de Catarroja ficou dentro da inundação?", "emergency_services", ["police"]),
        ("¿Quedó anegado el cuartel de bomberos de Catarroja?", "emergency_services", ["fire_station"]),
    ],
)
def test_a_class_is_named_by_its_usual_words_in_four_languages(question, cls, kinds):
    """A class's words are the names people give it in each language (a health establishment, health resources,
    health units; the police's and the fire brigade's posts), read by code like any other name of the class."""
    spec = _spec(question)[0]
    assert (spec.subject.feature_class, spec.subject.kinds) == (cls, kinds)


def test_cycleways_are_paths_not_farm_tracks(store):
    """ "Cycle tracks" and "bike lanes" name the cycleways of a class of their own (ways not for motor vehicles); the
    word "track" inside them is no farm track of the road network (56.6 km of them were answered once)."""
    layers = default_catalogue()
    lines = next(data_dir() / p.path for p in layers.find(event_id=6, role="osm") if p.path and "lineas" in p.path)
    flood = gpd.read_file(data_dir() / layers.find(event_id=6, role="hazard")[0].path).to_crs(25830).union_all()
    cycleways = gpd.read_file(lines).query("highway == 'cycleway'").to_crs(25830)
    km = cycleways.intersection(flood).length.sum() / 1000
    question = "Cycle tracks and bike lanes of Catarroja under the flood: how many km?"
    spec = _spec(question)[0]
    assert (spec.subject.feature_class, spec.subject.kinds) == ("paths", ["cycleway"])
    reading = {"subject": "paths", "kinds": ["cycleway"], "relation": "inside", "reference": "hazard"}
    reading |= {"measure": "length"}
    record = Orchestrator(store, LLM(ScriptedModel({"reader": [reading, reading]}))).run(question)
    assert record.status == "answered", record.answer
    (total,) = record.structured.totals()
    assert total.unit == "km" and total.value == pytest.approx(km, rel=0.02), record.answer


def test_a_kind_told_apart_by_name_is_named_as_the_question_says(store):
    """The València layer has no kind tags: its clinics are told apart by name. "Consultorios" are the facilities
    named CONSULTORIO, not every name holding a word of a clinic (CLÍNICA ...): the share is of those."""
    layers = default_catalogue()
    health = gpd.read_file(data_dir() / "valencia-2024/valencia_city_health_facilities.geojson").to_crs(25830)
    flood = gpd.read_file(data_dir() / layers.find(event_id=6, role="hazard")[0].path).to_crs(25830).union_all()
    consultorios = health[health.equipamien.str.upper().str.contains("CONSULTORIO")]
    near = int((consultorios.distance(flood) <= 2500).sum())
    question = "¿Qué porcentaje de los consultorios de València está a dos kilómetros y medio o menos del agua?"
    spec = _spec(question)[0]
    assert spec.subject.kinds == ["clinic"] and spec.subject.kind_words == ["consultorio"]
    reading = {"subject": "healthcare", "kinds": ["clinic"], "relation": "within", "reference": "hazard"}
    reading |= {"measure": "share"}
    record = Orchestrator(store, LLM(ScriptedModel({"reader": [reading, reading]}))).run(question)
    assert record.status == "answered", record.answer
    assert f"{near} de {len(consultorios)}" in record.answer, record.answer


def test_a_tag_written_out_of_a_class_that_takes_any_value_is_a_filter():
    """ "landuse=brownfield" (no kind of the class): the landuse class holds every landuse value; the tag filters its
    features. A tag a kind is made of is that kind ("landuse=railway")."""
    subject = _spec("Catarroja land tagged landuse=brownfield: how many hectares were flooded?")[0].subject
    assert (subject.feature_class, subject.filters) == ("landuse", {"landuse": ["brownfield"]})
    subject = _spec("Catarroja land tagged landuse=railway: how many hectares were flooded?")[0].subject
    assert (subject.feature_class, subject.kinds) == ("landuse", ["railway"])
