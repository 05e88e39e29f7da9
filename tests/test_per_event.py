"""One figure per disaster when none is named ("per fire", "for each of the fires", "de cada incendio"): the
disasters are those the question's words point to whose data hold what it counts (the structure types it names),
one per layer; a plan that computes one disaster only is partial and says so, never one fire's number as the
answer (heldout7's "per fire" question was answered with the Palisades figure alone).

Expected values are computed here from the sample DINS files with GeoPandas."""

from __future__ import annotations

import geopandas as gpd
import pytest

from geofaham_plugin.core.engines.layers import data_dir, default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.coverage import Constraint, ExecutedStep, check_coverage, each_disaster
from geofaham_plugin.core.planning.prepass import normalise


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Sheds and garages: per fire, how many were lost?", "per fire"),
        ("for each of the two fires, the destroyed homes", "each of the two fires"),
        ("¿cuántas viviendas destruidas hubo en cada incendio?", "cada incendio"),
        ("pour chaque inondation, la surface inondée", "pour chaque inondation"),
        ("how many hospitals per district", None),
        ("the nearest hospital to each fire station", None),
    ],
)
def test_one_figure_per_disaster_is_read(text, said):
    m = each_disaster(normalise(text))
    assert (m.group(0).strip() if m else None) == said


def _dins(event: int):
    return gpd.read_file(data_dir() / default_catalogue().find(event_id=event, role="damage")[0].path)


def test_per_fire_with_no_fire_named_computes_each_fire_whose_data_hold_the_kinds(store):
    """Garages and sheds are Utility Misc Structure in the Eaton and Palisades inspections (the Lahaina labels have
    no structure types): one share per fire, Eaton's then the Palisades'."""
    expected = []
    for event in (11, 14):
        sheds = _dins(event).query("STRUCTURETYPE == 'Utility Misc Structure'")
        expected.append(round(100 * (sheds["DAMAGE"] == "Destroyed (>50%)").mean(), 1))
    record = Orchestrator(store, LLM(ScriptedModel({}))).run(
        "Detached garages and sheds, fire by fire: what percentage of those inspected was destroyed? Per fire please."
    )
    assert record.status == "answered", record.answer
    shares = [round(v.value, 1) for v in record.structured.values if v.measure == "share"]
    assert shares == expected, record.answer
    assert "Eaton" in record.answer and "Palisades" in record.answer


def test_one_disaster_computed_for_per_fire_is_not_applied():
    each = Constraint(kind="each", value="event", phrase="per fire")
    eaton = ExecutedStep(step_id=1, tool="load_event_layer", args={"event_id": 11, "role": "damage"})
    palisades = ExecutedStep(step_id=2, tool="load_event_layer", args={"event_id": 14, "role": "damage"})
    palisades_again = ExecutedStep(step_id=3, tool="load_event_layer", args={"event_id": 12, "role": "damage"})
    count = ExecutedStep(step_id=4, tool="count", args={"by": "STRUCTURETYPE"}, inputs={"layer": "a_1"})
    assert not check_coverage([each], [eaton, count])[0].applied
    assert not check_coverage([each], [palisades, palisades_again])[0].applied  # snapshots of one fire
    assert check_coverage([each], [eaton, palisades, count])[0].applied_by == [1, 2]
    assert "one result for each disaster" in each.describe()


def test_a_comparison_read_two_ways_too_long_for_one_plan_computes_code_s_reading(store):
    """The model sets the mobile homes aside where code keeps them: both readings for both fires make a plan of 14
    steps (it once fell back to a template counting every Eaton structure); code's reading is computed for each
    fire and the answer says the other reading was not."""
    homes = [v for v in _dins(11)["STRUCTURETYPE"].unique() if v.startswith("Mobile Home")]
    aside = {"subject": "damage", "grades": ["destroyed"], "measure": "count", "kinds_out": sorted(homes)}
    record = Orchestrator(store, LLM(ScriptedModel({"reader": [aside] * 3}))).run(
        "For each of the fires, how many mobile homes were destroyed?"
    )
    assert record.status == "partial" and "only the first is computed" in record.answer, record.answer
    counts = [v.value for v in record.structured.values if v.measure == "count"]
    expected = [
        int((d["STRUCTURETYPE"].str.startswith("Mobile Home") & (d["DAMAGE"] == "Destroyed (>50%)")).sum())
        for d in (_dins(11), _dins(14))
    ]
    assert counts == expected, record.answer
