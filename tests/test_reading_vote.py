"""The model reads a question a second time, from other examples, where its first reading differs from code's on
the sets and their relation: two readings of three settle those fields; grades, measures and shares (read by code
from phrasings, not names) are never settled by a vote. A reading inconsistent twice is read once more from other
examples before the question is given up as unread.

The model is scripted (its replies are readings a 1.5B model gave); numbers come from the sample data: 7 Los Angeles
County hospitals lie within 5 km of the Eaton perimeter, 2,722 Eaton structures were destroyed, 3,051 damaged."""

from __future__ import annotations

import pytest

from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.reading.read import outvoted
from geofaham_plugin.core.planning.reading.reconcile import Difference

NEAR = "For the transfer plan: the number of hospitals 5 km or less from the Eaton perimeter."
HOSPITALS = {"subject": "healthcare", "relation": "within", "reference": "hazard"}
STRUCTURES = {"subject": "damage", "grades": ["destroyed"], "relation": "within", "reference": "hazard"}


@pytest.fixture
def store(tmp_path):
    from geofaham_plugin.core.store.store import ResponseStore

    s = ResponseStore(tmp_path / "session")
    yield s
    s.close()


def ask(store, question: str, *readings: dict):
    return Orchestrator(store, LLM(ScriptedModel({"reader": list(readings)}))).run(question)


def test_a_second_reading_that_reads_the_sets_as_code_did_settles_them(store):
    """Code reads hospitals (a class named) within 5 km of the fire; the model's first reading counts destroyed
    structures, its second, from other examples, reads the hospitals: code's reading is two of three, the answer is
    the 7 hospitals, and it says how it was settled."""
    record = ask(store, NEAR, STRUCTURES, HOSPITALS)
    assert record.status == "answered", record.answer
    assert "read two ways" not in record.answer
    assert "7 in total" in record.answer
    assert "the model's second reading, from other examples, agrees" in record.answer


def test_a_second_reading_like_the_first_leaves_the_question_read_two_ways(store):
    record = ask(store, NEAR, STRUCTURES, STRUCTURES)
    assert record.status == "partial" and "read two ways" in record.answer, record.answer
    assert "Do not use it as the answer" in record.answer


def test_grades_are_never_settled_by_a_vote(store):
    """'burned' is a damage word code reads as any damage; the model reads 'burned to the ground' as destroyed, then
    as code did: phrasings are not names, so the two readings stand, both computed, neither the answer."""
    question = "Eaton: a figure for the structures that burned to the ground, please."
    damaged = {"subject": "damage", "grades": ["affected", "minor", "major", "destroyed"]}
    record = ask(store, question, {"subject": "damage", "grades": ["destroyed"]}, damaged, damaged)
    assert record.status == "partial" and "read two ways" in record.answer, record.answer
    assert "2,722" in record.answer and "3,051" in record.answer


def test_a_reading_inconsistent_twice_is_read_once_more_from_other_examples(store):
    """The first two replies name a relation without a reference (the check's retry does not mend it); the third,
    from other examples, is consistent and reads as code does: the answer stands (2,722)."""
    bad = {"subject": "damage", "grades": ["destroyed"], "relation": "inside"}
    good = {"subject": "damage", "grades": ["destroyed"]}
    record = ask(store, "Eaton fire, the total of structures it destroyed?", bad, bad, good)
    assert record.status == "answered", record.answer
    assert "2,722" in record.answer


def test_only_what_the_second_reading_reads_as_code_is_settled():
    two = [
        Difference(field="subject", code="healthcare", model="damage", code_read=True),
        Difference(field="grades", code="all", model="destroyed", code_read=True),
        Difference(field="measure", code="list", model="count", code_read=True),
    ]
    # the second reading agrees on the subject and the grades, not on the measure: the subject is settled, and the
    # grades the first read on a subject neither other reading chose follow it; the measure stays two readings
    second = [Difference(field="measure", code="list", model="share", code_read=True)]
    left, settled = outvoted(two, second)
    assert settled == ["subject", "grades"] and [d.field for d in left] == ["measure"]
    # without the subject settled, grades (a phrasing) are never settled by a vote
    only_grades = [d for d in two if d.field != "subject"]
    left, settled = outvoted(only_grades, [])
    assert settled == [] and len(left) == 2
    # a field code left at its default is no reading to vote for
    default = [Difference(field="relation", code="none", model="inside", code_read=False)]
    assert outvoted(default, [])[1] == []
    assert outvoted(two, None) == (two, [])


def test_a_settled_subject_carries_only_what_a_reading_says_of_its_subject():
    """The first reading counted damage records by structure type, with no relation; code's hospitals lie inside the
    hazard area by an implied relation. A second reading like code's on the subject settles what the first said of
    its own subject (its grades, its breakdown by structure type); the relation and the reference stand apart from
    the subject, and code's implied one is no reading a second reading's silence confirms."""
    from geofaham_plugin.core.planning.reading.schema import Reading

    first = Reading(subject="damage", grades=["destroyed"], group_by="structure_type")
    two = [
        Difference(field="subject", code="healthcare", model="damage", code_read=True),
        Difference(field="grades", code="all", model="destroyed", code_read=False),
        Difference(field="relation", code="inside", model="none", code_read=False),
        Difference(field="reference", code="hazard", model="none", code_read=False),
        Difference(field="group_by", code="none", model="structure_type", code_read=False),
    ]
    left, settled = outvoted(two, [], first=first)
    assert settled == ["subject", "grades", "group_by"]
    assert [d.field for d in left] == ["relation", "reference"]


def test_an_implied_relation_is_not_confirmed_by_a_silent_second_reading():
    """'Every Maui hospital' is no question about the fire's area: code implies the hospitals inside the Lahaina burn
    area (none); the first reading counts damage records, the second reads the hospitals with no relation. The
    subject is settled; the relation is not (code's was implied): read two ways, so never a confident 0."""
    from geofaham_plugin.core.engines.layers import default_catalogue
    from geofaham_plugin.core.planning.prepass import prepass
    from geofaham_plugin.core.planning.reading.read import read_specs
    from geofaham_plugin.core.planning.spec_read import spec_from_facts

    layers = default_catalogue()
    facts = prepass("Maui County: how many hospitals are there, all of them?", layers=layers)
    specs = spec_from_facts(facts, layers=layers).specs
    first = {"subject": "damage", "grades": ["undamaged"], "group_by": "structure_type"}
    llm = LLM(ScriptedModel({"reader": [first, {"subject": "healthcare"}]}))
    read = read_specs(llm, facts, specs, layers, None)
    two = {c for u in read.unavailable for c in u.constraints}
    assert {"reading:relation", "reading:reference"} <= two, read.unavailable
    assert "reading:subject" not in two and "reading:group_by" not in two


def test_one_figure_per_grade_only_where_several_things_are_asked(store):
    """'With every damage grade counted together, how many were damaged?' asks one figure: the model's
    'separately', read twice, is not applied alone (per-grade figures would never give the 3,051 asked); where the
    question asks two things, it is (2,722 and 267)."""
    one = "Eaton: with every damage grade counted together, how many structures were damaged?"
    damaged = ["affected", "minor", "major", "destroyed"]
    separately = {"subject": "damage", "grades": damaged, "separately": True}
    record = ask(store, one, separately, separately, separately)
    assert record.status == "partial" and "3,051" in record.answer, record.answer
    two = "Eaton: how many structures were destroyed, and how many only affected?"
    both = {"subject": "damage", "grades": ["affected", "destroyed"], "separately": True}
    record = ask(store, two, both, both, both)
    assert record.status == "answered" and "2,722" in record.answer and "267" in record.answer, record.answer


def test_a_kind_set_aside_that_the_question_says_nothing_of_is_no_reading(store):
    """The 1.5B model set residential land aside in "land tagged landuse=railway" (and said to keep only it when
    asked alone): no word, tag or qualifier of the question names residential land, so the railway land alone is
    measured (0.70 ha of it lies in the flood: two railway polygons of the Catarroja extract)."""
    question = "Catarroja land tagged landuse=railway: how many hectares were flooded?"
    reading = {"subject": "landuse", "relation": "inside", "reference": "hazard", "measure": "area"}
    record = ask(store, question, reading | {"kinds_out": ["residential"]}, {"use": "only"}, reading)
    assert record.status == "answered", record.answer
    assert "0.704 ha" in record.answer and "residential" not in record.answer
