"""The fields of the local layer a feature class comes from (HIFLD hospitals: BEDS, TYPE) are read like a layer of
yours: "how many beds" is the sum of BEDS, "with more than 100 beds" a condition on it, "TYPE = GENERAL ACUTE
CARE" the data's value in all its words; a no-data code (-999) is unknown, never added or compared. A distance
stated with its comparator settles the relation a model's reading left out, and a tag written out names the class
that keeps it ("landuse=industrial").

Expected values come from the sample files read with GeoPandas (UTM 11N, metres)."""

from __future__ import annotations

import geopandas as gpd
import pandas as pd
import pytest

from geofaham_plugin.core.domain.feature_classes import tag_classes
from geofaham_plugin.core.domain.identifiers import no_data_mask
from geofaham_plugin.core.engines import transforms as tf
from geofaham_plugin.core.engines import vector_ops as ops
from geofaham_plugin.core.engines.layers import data_dir, default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.prepass import prepass
from geofaham_plugin.core.planning.reading.checks import Known
from geofaham_plugin.core.planning.reading.fill import repair
from geofaham_plugin.core.planning.reading.schema import Reading
from geofaham_plugin.core.planning.spec_read import spec_from_facts

UTM = 32611


def _hospitals() -> gpd.GeoDataFrame:
    layer = default_catalogue().find(role="poi", feature_class="healthcare", event_id=11)[0]
    return gpd.read_file(data_dir() / layer.path).to_crs(UTM)


def _distance_to(event: int) -> pd.Series:
    catalogue = default_catalogue()
    hazard = catalogue.find(event_id=event, role="hazard")
    if hazard and hazard[0].path:
        area = gpd.read_file(data_dir() / hazard[0].path).to_crs(UTM).union_all()
    else:  # the Palisades: the convex hull of its destroyed structures
        dins = gpd.read_file(data_dir() / catalogue.find(event_id=event, role="damage")[0].path).to_crs(UTM)
        area = dins[dins["DAMAGE"].str.startswith("Destroyed")].union_all().convex_hull
    return _hospitals().geometry.distance(area)


def _ask(store, question: str, *readings: dict):
    return Orchestrator(store, LLM(ScriptedModel({"reader": list(readings)}))).run(question)


def test_how_many_beds_is_the_sum_of_the_local_layer_s_field(store):
    h = _hospitals()
    near = h[_distance_to(11) <= 5000]
    assert len(near) == 7  # the sample as the test knows it
    reading = {"subject": "healthcare", "relation": "within", "reference": "hazard", "measure": "sum"}
    record = _ask(
        store, "All told, how many beds do the hospitals within 5 km of the Eaton fire have?", reading, reading
    )
    assert record.status == "answered", record.answer
    assert [v.value for v in record.structured.totals()] == [float(near["BEDS"].sum())], record.answer
    facts = prepass("Sum the BEDS of hospitals within 5 km of the Eaton fire.", layers=default_catalogue())
    spec = spec_from_facts(facts, layers=default_catalogue()).specs[0]
    assert (spec.measure, spec.field) == ("sum", "BEDS")


def test_a_number_compared_with_a_local_field_is_a_condition(store):
    h = _hospitals()
    near = h[(_distance_to(11) <= 6000) & (h["BEDS"] > 300)]
    assert 0 < len(near) < int((_distance_to(11) <= 6000).sum())  # the condition changes the answer
    reading = {"subject": "healthcare", "relation": "within", "reference": "hazard", "measure": "list"}
    record = _ask(
        store, "Which hospitals having more than 300 BEDS lie within 6 km of the Eaton fire?", reading, reading
    )
    assert record.status == "answered", record.answer
    assert sorted(i.name for i in record.structured.items) == sorted(near["NAME"]), record.answer


def test_a_field_written_out_keeps_its_value_in_all_its_words_and_the_distance_settles_the_relation(store):
    """'TYPE = GENERAL ACUTE CARE': the data's value (not 'general'); the model's reading has no relation though a
    distance is stated with its comparator ('no farther than'): code's within, to the reading's reference."""
    h = _hospitals()
    expected = int(((_distance_to(14) <= 10_000) & (h["TYPE"] == "GENERAL ACUTE CARE")).sum())
    assert 0 < expected < int((_distance_to(14) <= 10_000).sum())
    slip = {"subject": "healthcare", "measure": "count"}  # the relation left out, twice
    record = _ask(
        store,
        "Hospitals with TYPE = GENERAL ACUTE CARE no farther than 10 km from the Palisades fire: how many?",
        slip,
        slip,
    )
    assert record.status == "answered", record.answer
    assert [v.value for v in record.structured.totals()] == [float(expected)], record.answer


def test_repair_takes_the_relation_from_the_comparator_code_read_and_drops_every_kind_set_aside():
    known = Known(distances_m=[7500.0], relation="within", reference="hazard", kinds={"healthcare": ["hospital"]})
    r = repair(Reading(subject="healthcare", kinds_out=["hospital"]), known)
    assert (r.relation, r.reference, r.kinds_out) == ("within", "hazard", [])
    kept = repair(Reading(subject="healthcare", relation="beyond", reference="hazard"), known)
    assert kept.relation == "beyond"  # a relation the reading states is the model's to read: the check compares it
    assert repair(Reading(subject="healthcare"), Known(distances_m=[7500.0])).relation == "none"  # code read none


def test_no_data_codes_are_neither_summed_nor_compared():
    gdf = gpd.GeoDataFrame({"BEDS": [10, 20, -999, 30]}, geometry=gpd.points_from_xy([0, 1, 2, 3], [0] * 4), crs=4326)
    _, overall = ops.stats(gdf, "BEDS", "sum", None)
    assert (overall["value"], overall["n_no_data"]) == (60.0, 1)
    fewer, _ = tf.filter_where(gdf, "BEDS", "<", 25)
    assert sorted(fewer["BEDS"]) == [10, 20]
    temperatures = pd.Series([-999.0, -5.0, 3.0])  # a field with negative values keeps them
    assert not no_data_mask(temperatures).any()


@pytest.mark.parametrize(
    ("text", "classes"),
    [
        ("landuse=industrial polygons flooded", ["landuse"]),
        ("the place=hamlet points", ["places"]),
        ("highway=motorway_link km", ["roads"]),
        ("natural=scrub hectares", ["land_cover"]),
        ("man_made=pier hectares", []),  # no class keeps it: no class is made up
    ],
)
def test_a_tag_written_out_names_the_class_that_keeps_it(text, classes):
    assert tag_classes(text) == classes


def test_a_code_written_after_its_field_s_name_is_a_filter(store):
    """'idsubclase 14': a field of the València health layer (a code of classes, an identifier never summed) and
    one of its values, both in the data: the features of that code, never a sum of the code."""
    layer = default_catalogue().find(role="poi", feature_class="healthcare", event_id=6)[0]
    flood = default_catalogue().find(role="hazard", event_id=6)[0]
    health = gpd.read_file(data_dir() / layer.path).to_crs(25830)
    area = gpd.read_file(data_dir() / flood.path).to_crs(25830).union_all()
    near = health[(health["idsubclase"] == 14) & (health.geometry.distance(area) <= 1500)]
    assert 0 < len(near) < int((health.geometry.distance(area) <= 1500).sum())
    reading = {"subject": "healthcare", "relation": "within", "reference": "hazard", "measure": "list"}
    record = _ask(
        store, "List the idsubclase 14 health facilities of València up to 1.5 km from the flood.", reading, reading
    )
    assert record.status == "answered", record.answer
    assert sorted(i.name for i in record.structured.items) == sorted(near["equipamien"]), record.answer


def test_a_one_letter_field_is_no_word_of_the_question():
    """The València layer's coordinates X and Y: the Spanish "y" (and) names no field, so "how many ... y cuáles"
    is a count, never the sum of Y."""
    layers = default_catalogue()
    question = "¿Cuántos centros de salud de València están inundados y cuáles son?"
    spec = spec_from_facts(prepass(question, layers=layers), layers=layers).specs[0]
    assert (spec.measure, spec.field) == ("count", None)
