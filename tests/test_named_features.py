"""Features a question names by their name in the data (a closed class: the name fields of the disaster's local
layers): read by code, the set of their class narrowed to them, their distance to the disaster when no relation is
said, and a plan that does not narrow to them leaves the answer partial, never the figure of another feature.

Numbers from the sample data (HIFLD hospitals, València health facilities, the Catarroja OSM extract): Huntington
Hospital lies 4,754 m from the Eaton perimeter, Molokai General Hospital 40,453 m from the Lahaina burn area,
Hospital La Fe 818 m from the DANA flood; 3.24 km of Avinguda del Sud lies in the flood."""

from __future__ import annotations

import pytest

from geofaham_plugin.core.engines.layers import default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.asks import unanswered
from geofaham_plugin.core.planning.coverage import Constraint, ExecutedStep, check_coverage, unasked_limits
from geofaham_plugin.core.planning.names import (
    NamedFeature,
    _distance_asked,
    capitalised,
    event_of_names,
    features_named,
    name_constraints,
    names_said,
    shouted,
    with_named_features,
)
from geofaham_plugin.core.planning.prepass import normalise, prepass
from geofaham_plugin.core.planning.spec_read import spec_from_facts
from geofaham_plugin.core.planning.spec_schema import IMPLIED_DISTANCE

_point = NamedFeature("la fe", ("HOSPITAL LA FE",), "equipamien", "valencia_health", ("healthcare",), "point")
_line = NamedFeature("pista de silla", ("Pista de Silla",), "name", "catarroja_osm_lines", ("roads",), "line")
NAMES = ["HUNTINGTON HOSPITAL", "HUNTINGTON MEMORIAL HOSPITAL D/P APH", "COMMUNITY HOSPITAL OF HUNTINGTON PARK",
         "HOSPITAL UNIVERSITARI I POLITECNIC LA FE (NUEVO HOSPITAL LA FE)", "HOSPITAL CLINICO UNIVERSITARIO",
         "HOSPITAL DE LA MALVARROSA", "Taller de Calafat - Antiguo Motor de Agua", "Avinguda del Sud",
         "Pobles del Sud"]  # fmt: skip


@pytest.fixture(scope="module")
def layers():
    return default_catalogue()


@pytest.mark.parametrize(
    ("question", "said", "names"),
    [
        ("How far is Huntington Hospital from the fire?", "huntington hospital", ["HUNTINGTON HOSPITAL"]),
        ("Is Hospital La Fe near the water?", "hospital la fe", [NAMES[3]]),
        ("Avinguda del Sud: flooded?", "avinguda del sud", ["Avinguda del Sud"]),
    ],
)
def test_a_name_said_whole_or_by_its_telling_words_is_read(question, said, names):
    found = names_said(normalise(question), NAMES, capitalised(question))
    assert found == [(said, names)]


@pytest.mark.parametrize(
    "question",
    [
        "How many metres of road went under the agua de la riada?",  # "de agua": no two telling words
        "is hospital la fe near the water?",  # a part of a name not written as a name is
        "How many hospitals are near the fire?",  # a common word of the names alone
        "The Sud district: how many clinics?",  # one word of a name
    ],
)
def test_words_that_only_share_a_part_of_a_name_name_no_feature(question):
    assert names_said(normalise(question), NAMES, capitalised(question)) == []


LA_NAMES = ["CEDAR SINAI MEDICAL CENTER", "CEDARS - SINAI MARINA DEL REY HOSPITAL", "LAC USC MEDICAL CENTER",
            "PROVIDENCE CEDARS - SINAI TARZANA MEDICAL CENTER", "LAC - HARBOR UCLA MEDICAL CENTER", "KECK HOSPITAL OF USC",
            "LAC - OLIVE VIEW - UCLA MEDICAL CENTER", "USC VERDUGO HILLS HOSPITAL", "LAC - RANCHO LOS AMIGOS CENTER",
            "USC KENNETH NORRIS JR. CANCER HOSPITAL", "HUNTINGTON HOSPITAL", "METHODIST HOSPITAL OF SOUTHERN CALIFORNIA",
            "METHODIST MEMORIAL HOSPITAL"]  # fmt: skip


@pytest.mark.parametrize(
    ("question", "said", "names"),
    [  # a plural or a typo in a word of a name; the name said whole wins over names sharing a part of it
        ("How far is Cedars-Sinai Medical Center in West Hollywood?", "cedars sinai medical center", [LA_NAMES[0]]),
        ("Distance from Huntingtn Hospital to the fire", "huntingtn hospital", ["HUNTINGTON HOSPITAL"]),
        # two words common among the names, rare together, written as an abbreviation is
        ("LAC+USC is our fallback: how far is it?", "lac usc", ["LAC USC MEDICAL CENTER"]),
    ],
)
def test_a_name_written_as_people_write_it_is_read(question, said, names):
    assert names_said(normalise(question), LA_NAMES, capitalised(question), shouted(question)) == [(said, names)]


@pytest.mark.parametrize(
    "question",
    [
        "How far is the nearest medical center?",  # common words, not written as a name
        "Which USC hospital is nearest?",  # one abbreviation, in three names
        "How far is cancer hospital?",  # a part of a name not written as a name is
    ],
)
def test_common_words_of_names_or_one_abbreviation_name_no_feature(question):
    assert names_said(normalise(question), LA_NAMES, capitalised(question), shouted(question)) == []


def test_the_names_of_the_disasters_local_layers_are_read_together(layers):
    """ "del Sud" is rare among the Catarroja polygons' names ("Pobles del Sud") but belongs to the longer name the
    lines hold: one feature, a road."""
    facts = prepass("How many metres of Avinguda del Sud in Catarroja were flooded?", layers=layers)
    named = features_named(facts, layers)
    assert [(n.said, n.names, n.layer_id, n.classes) for n in named] == [
        ("avinguda del sud", ("Avinguda del Sud",), "catarroja_osm_lines", ("roads",))
    ]
    assert features_named(prepass("How many hospitals are within 5 km of the Eaton fire?", layers=layers), layers) == []


def test_a_named_feature_narrows_its_set_and_its_distance_replaces_the_implied_relation(layers):
    facts = prepass("Molokai General Hospital and the Lahaina fire: how many km?", layers=layers)
    spec = spec_from_facts(facts, layers=layers).specs[0]
    assert spec.relation is not None and spec.relation.kind == "inside"  # code's guess: features of the disaster
    narrowed = with_named_features([spec], features_named(facts, layers))[0]
    assert narrowed.subject.filters == {"NAME": ["MOLOKAI GENERAL HOSPITAL"]} and narrowed.subject.by_name
    assert narrowed.relation is not None and (narrowed.relation.kind, narrowed.relation.k) == ("nearest", 1)
    assert narrowed.measure == "list" and IMPLIED_DISTANCE in narrowed.implied
    assert unanswered(facts.question, [narrowed]) == []  # "how many km": the distance listed answers it


def test_the_nearest_of_features_named_is_no_narrowing_unasked():
    named = Constraint(kind="attribute", value=["NAME", "HUNTINGTON HOSPITAL"], phrase="huntington hospital")
    named.applied_by.append(3)
    nearest = ExecutedStep(step_id=4, tool="nearest", args={"k": 1})
    assert unasked_limits([named], [nearest]) == []
    assert unasked_limits([], [nearest]) == ["step 4 keeps only the 1 nearest"]


def ask(tmp_path, question: str, *readings: dict):
    from geofaham_plugin.core.store.store import ResponseStore

    store = ResponseStore(tmp_path / "session")
    try:
        return Orchestrator(store, LLM(ScriptedModel({"reader": list(readings)}))).run(question)
    finally:
        store.close()


def test_a_hospital_named_gets_its_own_distance(tmp_path):
    """The model reads the distance as the nearest; code reads the hospital by its name: 818 m, La Fe's own."""
    record = ask(
        tmp_path,
        "Hospital La Fe: how many metres from the DANA flood?",
        {"subject": "healthcare", "relation": "nearest", "reference": "hazard", "measure": "list"},
    )
    assert record.status == "answered", record.answer
    assert "818" in record.answer and "LA FE" in record.answer
    assert "CONSULTORIO" not in record.answer


def test_a_plan_that_does_not_narrow_to_the_name_leaves_it_unapplied(layers):
    """The name is a constraint on the plan: a plan of the nearest health facility (another one, 0 m from the water)
    applies it nowhere, so the answer is partial; a filter on the name field applies it."""
    facts = prepass("Distance in metres between Hospital La Fe and the DANA floodwater?", layers=layers)
    wanted = name_constraints(features_named(facts, layers))
    assert [c.value for c in wanted] == [["equipamien", next(iter(features_named(facts, layers)[0].names))]]
    fetched = ExecutedStep(step_id=2, tool="get_features", args={"feature_class": "healthcare"})
    nearest = ExecutedStep(step_id=3, tool="nearest", args={"k": 1})
    assert [c.applied for c in check_coverage(wanted, [fetched, nearest])] == [False]
    kept = ExecutedStep(step_id=3, tool="filter_values", args={"field": "equipamien", "values": wanted[0].value[1:]})
    assert [c.applied for c in check_coverage(wanted, [fetched, kept, nearest])] == [True]


def test_how_far_and_how_many_beds_gives_the_distance_and_the_beds(tmp_path):
    """Kula Hospital: 34.3 km from the Lahaina burn area, 9 beds (HIFLD). The sum of its beds is computed from the
    nearest step's output; that output is an answer too (the plan's results), so the distance is stated."""
    reading = {"subject": "healthcare", "relation": "nearest", "reference": "hazard", "measure": "sum"}
    record = ask(tmp_path, "How far is Kula Hospital from the Lahaina fire, and how many beds does it have?", reading)
    assert record.status == "answered", record.answer
    assert "34,330" in record.answer and ": 9 (1 values)" in record.answer


def test_a_reading_that_gives_no_figure_the_question_asks_gives_way(tmp_path):
    """The model reads "a qué distancia" as a length inside the flood (points have none); code's reading lists the
    hospital with its distance, the figure the question asks: code's reading is the answer, and it says why."""
    reading = {"subject": "healthcare", "relation": "inside", "reference": "hazard", "measure": "length"}
    record = ask(
        tmp_path, "¿A qué distancia está el Hospital Clínico de la zona inundada por la DANA?", reading, reading
    )
    assert record.status == "answered", record.answer
    assert "3,234" in record.answer and "the other reading gives no figure for" in record.answer


def test_a_feature_named_says_the_disaster_when_only_one_disasters_data_holds_it(layers):
    """The Palau de Vivanco is in the Catarroja extract only: "the flood" is the València flood. Huntington Hospital
    is in the HIFLD layer of three fires: "the fire" stays unresolved (the question says which, or is refused)."""
    facts = event_of_names(prepass("How far is the Palau de Vivanco from the flood, in metres?", layers=layers), layers)
    assert (facts.event_id, facts.event_candidates) == (6, [6])
    facts = event_of_names(prepass("How far is Huntington Hospital from the fire?", layers=layers), layers)
    assert facts.event_id is None


def test_work_on_your_own_files_names_no_disaster_by_a_feature_name(tmp_path):
    """ "Avinguda del Sud" is a Catarroja street; with layers of the user's and no disaster said, the instruction is
    about the user's files: no disaster is taken from the name."""
    import geopandas as gpd
    from shapely.geometry import LineString

    from geofaham_plugin.core.engines.layers import LayerCatalogue

    catalogue = LayerCatalogue()  # (not the shared default one: a layer of the user's added here stays here)
    path = tmp_path / "streets.geojson"
    gpd.GeoDataFrame({"name": ["Avinguda del Sud"]}, geometry=[LineString([(0, 0), (1, 1)])], crs=4326).to_file(path)
    catalogue.add_user_layer("streets", path)
    facts = prepass("Clip my streets layer to the Avinguda del Sud", layers=catalogue)
    assert event_of_names(facts, catalogue).event_id is None
    facts = prepass("Museo Antonia Mir: how much of its damage value is not covered by the subsidy?")
    assert event_of_names(facts, default_catalogue()).event_id == 6  # no files of the user's: the plan's disaster


def test_a_named_road_flooded_is_its_length_inside_and_a_named_school_reached_is_a_yes(tmp_path):
    """A road named and "how many km flooded": the part of it inside the flood (all 2.69 km of Pista de Silla, from
    the OSM extract and the EMSR773 flood in EPSG:25830), not its distance; "did the water reach" a school named: a
    yes or no of it inside (the Els Noguers polygon meets the flood), read alike by code and the model."""
    road = {"subject": "roads", "relation": "inside", "reference": "hazard", "measure": "length"}
    record = ask(tmp_path, "La carretera Pista de Silla en Catarroja: ¿cuántos kilómetros quedaron inundados?", road)
    assert record.status == "answered", record.answer
    (value,) = record.structured.totals()
    assert value.unit == "km" and abs(value.value - 2.686) < 0.02, record.answer
    school = {"subject": "education", "relation": "inside", "reference": "hazard", "measure": "count"}
    record = ask(tmp_path, "Did the floodwater reach the Els Noguers school in Catarroja?", school)
    assert record.status == "answered", record.answer
    assert record.answer.startswith("**Yes.**"), record.answer
    # a hospital (a point) named, "how many metres": its distance still
    assert _distance_asked("Hospital La Fe: how many metres from the DANA flood?", [_point])
    assert not _distance_asked("How many km of Pista de Silla flooded?", [_line])
    assert _distance_asked("How far is Pista de Silla from the flood?", [_line])
    assert not _distance_asked("Is Hospital La Fe inside the flood? Did the water reach it?", [_point])
