"""Grades said the way people list them: the data's grade names coordinated before one damage word share it
("Minor or Major damage"), "damaged but not destroyed" takes the destroyed out, "one figure per grade" is a
breakdown by grade of the grades named (not of every grade), and a breakdown by grade of a kind of structure is of
the damage inspections ("Palisades schools, per damage grade": the DINS School type, not OpenStreetMap schools).

Counts come from the sample DINS files read with GeoPandas."""

from __future__ import annotations

import geopandas as gpd
import pytest

from geofaham_plugin.core.domain.damage import DamageClass as D
from geofaham_plugin.core.engines.layers import data_dir, default_catalogue
from geofaham_plugin.core.planning.prepass import extract_damage_classes, prepass
from geofaham_plugin.core.planning.spec_read import spec_from_facts

GRADES = {
    "No Damage": "none",
    "Affected (1-9%)": "affected",
    "Minor (10-25%)": "minor",
    "Major (26-50%)": "major",
    "Destroyed (>50%)": "destroyed",
}


@pytest.mark.parametrize(
    ("text", "classes"),
    [
        ("how many structures got minor or major damage?", [D.minor, D.major]),
        ("affected, minor and major damage", [D.affected, D.minor, D.major]),
        ("homes that were damaged but not destroyed", [D.affected, D.minor, D.major]),
        ("homes not destroyed", [D.none, D.affected, D.minor, D.major]),
        ("major roads near buildings with minor damage", [D.minor]),  # "major roads" is no grade of a building
    ],
)
def test_grades_listed_share_their_damage_word(text, classes):
    assert extract_damage_classes(text) == classes


def _spec(question: str):
    layers = default_catalogue()
    return spec_from_facts(prepass(question, layers=layers), layers=layers).specs


def test_one_figure_per_grade_is_a_breakdown_of_the_grades_named():
    specs = _spec("Palisades structures with Minor or Major damage: one number for each grade, then the sum.")
    assert len(specs) == 1 and specs[0].group_by == "damage class"
    assert specs[0].subject.damage_classes == [D.minor, D.major]


def test_a_kind_of_structure_by_grade_is_of_the_inspections(store):
    from geofaham_plugin.core.llm import LLM, ScriptedModel
    from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator

    spec = _spec("Palisades schools: the tally per damage grade, and the grand total.")[0]
    assert spec.subject.kind == "damage" and spec.subject.filters == {"STRUCTURETYPE": ["School"]}
    reading = {"subject": "damage", "kinds": ["School"], "group_by": "damage"}
    choice = {"template": "count_damage", "event_id": 14}  # which Palisades record, if asked
    model = ScriptedModel({"reader": [reading, reading], "planner": [choice] * 4})
    record = Orchestrator(store, LLM(model)).run("Palisades schools: the tally per damage grade, and the grand total.")
    assert record.status == "answered", record.answer
    layer = default_catalogue().find(event_id=14, role="damage")[0]
    schools = gpd.read_file(data_dir() / layer.path).query("STRUCTURETYPE == 'School'")
    expected = {GRADES[k]: float(n) for k, n in schools["DAMAGE"].value_counts().items()}
    assert record.structured.by_group() == expected, record.answer


def test_grades_of_a_layer_without_grades_are_no_reading():
    """Lahaina's labels tell damaged from undamaged only: a reading of 'affected' alone is inconsistent with the
    data (the model is told so and retried), damaged in general is not."""
    from geofaham_plugin.core.planning.reading.checks import Known, check_reading
    from geofaham_plugin.core.planning.reading.schema import Reading

    known = Known(ungraded=True)
    assert check_reading(Reading(subject="damage", grades=["affected"]), known)
    assert not check_reading(Reading(subject="damage", grades=["affected", "minor", "major", "destroyed"]), known)
    assert not check_reading(Reading(subject="damage", grades=["affected"]), Known())


def test_damaged_in_lahaina_is_answered(store):
    from geofaham_plugin.core.llm import LLM, ScriptedModel
    from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator

    slip, damaged = (
        {"subject": "damage", "grades": ["affected"]},
        {"subject": "damage", "grades": ["affected", "minor", "major", "destroyed"]},
    )
    record = Orchestrator(store, LLM(ScriptedModel({"reader": [slip, damaged]}))).run(
        "How many structures were damaged in Lahaina?"
    )
    assert record.status == "answered", record.answer
    labels = gpd.read_file(data_dir() / default_catalogue().find(event_id=16, role="damage")[0].path)
    field = default_catalogue().find(event_id=16, role="damage")[0].damage.field
    assert [v.value for v in record.structured.totals()] == [float((labels[field] == "Damaged Building").sum())]


@pytest.mark.parametrize(
    ("text", "grades"),
    [
        ("every grade from affected to destroyed", ["affected", "minor", "major", "destroyed"]),
        ("des dégâts légers jusqu'à la destruction totale", ["minor", "major", "destroyed"]),
        ("de affected a destroyed", ["affected", "minor", "major", "destroyed"]),
        ("how many were destroyed, and how many only affected", ["destroyed", "affected"]),  # two, no range
    ],
)
def test_grades_said_as_a_range_are_every_grade_between(text, grades):
    """A range of grades ("from affected to destroyed") is every grade of the scale between its ends, in order."""
    from geofaham_plugin.core.planning.prepass import extract_damage_classes, normalise

    assert [c.value for c in extract_damage_classes(normalise(text))] == grades
