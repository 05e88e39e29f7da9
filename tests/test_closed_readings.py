"""Where code reads a closed class the model's other reading is no second reading: a breakdown named by its field
("by damage grade") is code's, and a breakdown by grade with no grade named covers every grade. Values of the disaster's damage layer named in full that no step applies
("class Background", a label source in quotes) make the answer partial, naming them.

Counts come from the sample DINS files read with GeoPandas."""

from __future__ import annotations

import geopandas as gpd
import pytest

from geofaham_plugin.core.engines.layers import data_dir, default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator


def _dins(event: int):
    return gpd.read_file(data_dir() / default_catalogue().find(event_id=event, role="damage")[0].path)


def _ask(store, question: str, *readings: dict):
    return Orchestrator(store, LLM(ScriptedModel({"reader": list(readings)}))).run(question)


def test_a_breakdown_named_by_its_field_is_code_s_and_covers_every_grade(store):
    """'by damage grade': the model's breakdown by structure type, and its grades, give way (every grade counted)."""
    model = {"subject": "damage", "grades": ["destroyed"], "kinds": ["Church"], "group_by": "structure_type"}
    record = _ask(store, "Palisades church buildings, tallied by damage grade.", model, model)
    assert record.status == "answered", record.answer
    churches = _dins(14).query("STRUCTURETYPE == 'Church'")
    assert record.structured.by_group() == {
        cls: float(n)
        for cls, n in churches["DAMAGE"]
        .map(
            {
                "No Damage": "none",
                "Affected (1-9%)": "affected",
                "Minor (10-25%)": "minor",
                "Major (26-50%)": "major",
                "Destroyed (>50%)": "destroyed",
            }
        )
        .value_counts()
        .items()
    }, record.answer


def test_a_value_of_the_damage_layer_named_and_not_applied_is_said(store):
    """'Background' is a class of the Lahaina labels the loader leaves out (not a structure): a share of it cannot be
    computed from the buildings, and the answer says so instead of a share of undamaged buildings."""
    share = {"subject": "damage", "grades": ["undamaged"], "measure": "share"}
    record = _ask(store, "Of all the Lahaina label polygons, what percentage is of class Background?", share, share)
    assert record.status == "partial" and "Background" in record.answer.split("\n\n")[0], record.answer


def test_a_tag_written_out_is_a_filter_and_how_many_km_asks_a_length(store):
    """'oneway=yes' is a column and value of the Catarroja extract (no kind of road is exactly that tag): a filter;
    "how many km" asks a length (a closed class of asks), so a reader's length is the question's, not code's count.
    The length is checked against GeoPandas in EPSG:25830."""
    import shapely

    osm = data_dir() / "valencia-2024/osm-catarroja/lineas.geojson"
    lines = gpd.read_file(osm).to_crs(25830)
    flood = gpd.read_file(data_dir() / default_catalogue().find(event_id=6, role="hazard")[0].path).to_crs(25830)
    water = shapely.union_all(flood.geometry.make_valid().to_numpy())
    oneway = shapely.union_all(lines[(lines["oneway"] == "yes") & lines["highway"].notna()].geometry.to_numpy())
    length = {"subject": "roads", "relation": "inside", "reference": "hazard", "measure": "length"}
    record = _ask(store, "Catarroja one-way streets (oneway=yes): how many km were flooded?", length, length)
    assert record.status == "answered", record.answer
    (total,) = record.structured.totals()
    assert total.measure == "length" and total.value == pytest.approx(
        shapely.intersection(oneway, water).length / 1000, rel=0.01
    )
