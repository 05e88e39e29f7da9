"""Grades said by comparing: a share of a structure damaged ("ten percent damage or more", "more than a quarter
damaged") or a grade of the data's scale ("Minor or worse") is the set of grades whose range, as the damage layers
spell it ("Minor (10-25%)"), meets the comparison. Code reads it (numbers, comparators and the data's own grade
names are closed classes); the model's grades give way to it; a grade straddling the bound is left out and said.

Counts are computed here from the sample DINS files with GeoPandas, not from GeoFaham."""

from __future__ import annotations

import geopandas as gpd
import pytest

from geofaham_plugin.core.domain.damage import DamageClass, grade_ranges, grades_bounded
from geofaham_plugin.core.engines.layers import data_dir, default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.prepass import extract_damage_classes, normalise

MINOR_UP = ["minor", "major", "destroyed"]
MAJOR_UP = ["major", "destroyed"]


def test_the_ranges_are_the_damage_scale_s_spelling():
    ranges = {c: (lo, hi, open_) for c, lo, hi, open_ in grade_ranges()}
    assert ranges[DamageClass.minor] == (10.0, 25.0, False) and ranges[DamageClass.destroyed] == (50.0, 100.0, True)
    assert grades_bounded(">=", 50) == ([DamageClass.destroyed], [DamageClass.major])  # 26-50 % straddles 50 %
    assert grades_bounded("<", 10) == ([DamageClass.none, DamageClass.affected], [])


@pytest.mark.parametrize(
    ("text", "classes"),
    [
        ("Eaton homes with 10 percent damage or more", MINOR_UP),
        ("structures damaged by over a quarter in the Palisades", MAJOR_UP),
        ("viviendas con daños de al menos el 26 %", MAJOR_UP),
        ("maisons endommagées à plus de 50 %", ["destroyed"]),
        ("casas com danos de dez por cento ou mais", MINOR_UP),
        ("buildings with less than 10 percent damage", ["none", "affected"]),
        ("homes rated Minor or worse", MINOR_UP),
        ("structures worse than Affected", MINOR_UP),
        ("every building below Destroyed", ["none", "affected", "minor", "major"]),
        ("edificios peor que Minor", MAJOR_UP),
        # a share of the damaged ones, not how damaged each one is
        ("more than half of the damaged homes", ["affected", "minor", "major", "destroyed"]),
        ("what percent of the homes were destroyed", ["destroyed"]),
        ("dano grave (26-50%)", ["major"]),
        # a range of the share damaged, in digits or words: the grades that fill it end to end
        ("homes with light damage only, one to nine percent", ["affected"]),
        ("buildings damaged between 10 and 25 %", ["minor"]),
        ("viviendas con daños del 10 al 50 %", ["minor", "major"]),
        ("maisons endommagées de dix à vingt-cinq pour cent", ["minor"]),
        ("structures with 51 to 100 percent damage", ["destroyed"]),
        # a range no run of grades fills says no grade: the damage word's
        ("homes 5 to 30 percent damaged", ["affected", "minor", "major", "destroyed"]),
        ("homes destroyed 2 to 3 km from the fire", ["destroyed"]),
    ],
)
def test_grades_said_by_comparing(text, classes):
    assert [c.value for c in extract_damage_classes(normalise(text))] == classes


def _dins(event: int):
    return gpd.read_file(data_dir() / default_catalogue().find(event_id=event, role="damage")[0].path)


@pytest.mark.parametrize(
    ("question", "event", "grades", "note"),
    [
        (
            "Give me the number of Eaton structures with 10 percent damage or more.",
            11,
            ["Minor (10-25%)", "Major (26-50%)", "Destroyed (>50%)"],
            "taken as the grades Minor (10-25%), Major (26-50%), Destroyed (>50%)",
        ),
        (
            "¿Cuántas estructuras del incendio Palisades quedaron dañadas en más de un 25 %?",
            14,
            ["Major (26-50%)", "Destroyed (>50%)"],
            "Major (26-50%), Destroyed (>50%)",
        ),
        (
            "Eaton: count the structures at half damaged or more",
            11,
            ["Destroyed (>50%)"],
            "Major (26-50%) straddles it: left out",
        ),
    ],
)
def test_a_share_damaged_compared_is_counted_by_its_grades(store, question, event, grades, note):
    """Code alone (no reader scripted): the count is the grades' count, not a share (the 'percent' is the grades'),
    and the answer says how the comparison was read."""
    dins = _dins(event)
    record = Orchestrator(store, LLM(ScriptedModel({}))).run(question)
    assert record.status == "answered", record.answer
    (total,) = record.structured.totals()
    assert total.measure == "count" and total.value == int(dins["DAMAGE"].isin(grades).sum())
    assert note in record.answer


def test_the_model_s_grades_give_way_to_a_comparison_code_read(store):
    """The model reads every damaged grade for 'ten percent damage or more' (a 1.5B model did): the comparison is
    read from the data's ranges, so code's grades are the answer, not two readings."""
    every = {"subject": "damage", "grades": ["affected", "minor", "major", "destroyed"], "measure": "count"}
    model = ScriptedModel({"reader": [every, every]})
    record = Orchestrator(store, LLM(model)).run("Eaton: structures with ten percent damage or more, a count please.")
    assert record.status == "answered", record.answer
    (total,) = record.structured.totals()
    grades = ["Minor (10-25%)", "Major (26-50%)", "Destroyed (>50%)"]
    assert total.value == int(_dins(11)["DAMAGE"].isin(grades).sum()) == 2784


def test_a_comparison_of_grades_is_one_set_not_one_figure_per_grade(store):
    """'Minor or worse' per structure type: one breakdown of the three grades together, not a figure per grade (the
    model read it as one per grade: two readings)."""
    per_grade = {"subject": "damage", "grades": MINOR_UP, "separately": True, "group_by": "structure_type"}
    record = Orchestrator(store, LLM(ScriptedModel({"reader": [per_grade] * 2}))).run(
        "Eaton fire, per structure type: how many were Minor or worse?"
    )
    assert record.status == "answered", record.answer
    (total,) = record.structured.totals()
    assert total.value == 2784 and "Minor (10-25%)" not in record.answer.split("\n\n")[0]


def test_the_base_of_a_share_is_what_a_base_word_opens(store):
    """'Undamaged rate among single-storey homes': the homes are the base, the undamaged the part (it was the share of
    the undamaged that are such homes, the words said in that order)."""
    dins = _dins(11)
    single = dins[dins["STRUCTURETYPE"].str.endswith("Single Story") & dins["STRUCTURETYPE"].str.contains("Residence")]
    record = Orchestrator(store, LLM(ScriptedModel({}))).run(
        "Eaton: the undamaged rate among single-storey residences, in percent?"
    )
    assert record.status == "answered", record.answer
    (share,) = [v for v in record.structured.values if v.measure == "share"]
    assert share.value == pytest.approx(100 * (single["DAMAGE"] == "No Damage").mean(), abs=0.06), record.answer
