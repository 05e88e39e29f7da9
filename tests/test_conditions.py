"""A condition on the features that no layer of the disaster can check ("buildings built before 1980", "destroyed
between 2020 and 2024", "older than 50 years") is never dropped: the answer says it was not applied and why, and
does not present the count of every feature as the answer; it is not replanned either (no model call: no other plan
has the field). A year that dates the disaster ("in 2025") or imagery ("scenes after 2024") is not such a condition.
Real Eaton DINS inspections; the expected count is read from the file with geopandas."""

from __future__ import annotations

import geopandas as gpd
import pytest

from geofaham_plugin.core.engines.layers import LayerCatalogue, data_dir
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.coverage import question_constraints
from geofaham_plugin.core.planning.prepass import prepass

DINS = data_dir() / "eaton-2025" / "DINS_2025_Eaton_Public_View_2025-01-14.geojson"


@pytest.fixture(scope="module")
def destroyed() -> int:
    return int((gpd.read_file(DINS)["DAMAGE"] == "Destroyed (>50%)").sum())


def _run(store, question: str):
    model = ScriptedModel({"planner": [{"template": "none fits"}] * 4})
    return Orchestrator(store, LLM(model), layers=LayerCatalogue(data_dir())).run(question), model


@pytest.mark.parametrize(
    ("question", "condition", "reason"),
    [
        (
            "How many buildings built before 1980 were destroyed in the Eaton fire?",
            "before 1980",
            "the layers of the disaster hold no field to check this condition against",
        ),
        (
            "How many structures in the Eaton fire were destroyed between 2020 and 2024?",
            "between 2020 and 2024",
            "the layers of the disaster hold no field to check this condition against",
        ),
        (
            "¿Cuántos edificios construidos antes de 1980 fueron destruidos en el incendio Eaton?",
            "antes de 1980",
            "las capas del desastre no tienen ningún campo con el que comprobar esta condición",
        ),
    ],
)
def test_a_condition_no_layer_holds_is_said_not_applied_without_a_replan(store, destroyed, question, condition, reason):
    record, model = _run(store, question)
    assert record.status == "partial" and model.calls == [], record.answer
    said = next(f"{a}{condition}{b}: " for a, b in ("“”", "«»") if f"{a}{condition}{b}" in record.answer)
    assert reason in record.answer.split(said, 1)[1].splitlines()[0], record.answer  # the reason on its line
    head = record.answer.split(f"{destroyed:,}")[0]  # the count of every destroyed building comes after the warning
    assert f"{destroyed:,}" in record.answer and said in head


def test_a_year_that_dates_the_disaster_is_no_condition(store, destroyed):
    record, _ = _run(store, "How many buildings were destroyed in the Eaton fire in 2025?")
    assert record.status == "answered" and f"{destroyed:,} in total" in record.answer, record.answer


@pytest.mark.parametrize(
    "question",
    ["Find Sentinel-2 imagery of the Eaton fire after 2024", "NDVI change for the Palisades fire since 2024"],
)
def test_a_year_of_imagery_is_the_scenes_time_not_a_condition_on_features(question):
    kinds = [c.kind for c in question_constraints(prepass(question))]
    assert "comparison" not in kinds


@pytest.mark.parametrize(
    ("question", "condition"),
    [
        # no structure type is an ADU or a cabin: nothing to take out by those words
        ("How many buildings were destroyed in the Eaton fire, not counting ADUs?", "not counting adus"),
        ("How many destroyed buildings in the Eaton fire were not cabins?", "were not cabins"),
    ],
)
def test_what_the_question_takes_out_is_never_kept_nor_dropped(store, destroyed, question, condition):
    record, model = _run(store, question)
    assert record.status == "partial" and model.calls == [], record.answer
    assert f"“{condition}”: not applied: GeoFaham cannot take features out" in record.answer, record.answer
    assert "filter_values" not in [s.tool for s in record.steps]  # no value kept from a phrase that takes it out
    assert record.answer.index(f"“{condition}”") < record.answer.index(f"{destroyed:,}")


def test_damage_grades_taken_out_are_applied_not_flagged(store, destroyed):
    record, _ = _run(store, "Count the Eaton buildings except the destroyed ones")
    total = len(gpd.read_file(DINS))
    assert record.status == "answered" and f"{total - destroyed:,} in total" in record.answer, record.answer


@pytest.mark.parametrize(
    ("question", "part_of"),
    [
        # the damage said first is the base: of the destroyed structures, the commercial ones
        ("What percentage of destroyed structures in the Eaton fire were commercial?", "destroyed"),
        ("What percentage of the destroyed buildings in the Eaton fire were mobile homes?", "destroyed"),
        # the kind said first is the base: of the commercial buildings, the destroyed ones
        ("What share of the commercial buildings in the Eaton fire were destroyed?", "kind"),
    ],
)
def test_a_share_of_a_kind_of_structure_takes_its_base_from_what_is_said_first(store, question, part_of):
    # "commercial" alone names the Commercial Building ... types (it had been dropped: 2,722 of 5,805 answered)
    dins = gpd.read_file(DINS)
    destroyed = dins["DAMAGE"] == "Destroyed (>50%)"
    kind = dins["STRUCTURETYPE"].str.startswith("Mobile Home" if "mobile" in question else "Commercial")
    part = int((destroyed & kind).sum())
    base = int((destroyed if part_of == "destroyed" else kind).sum())
    record, model = _run(store, question)
    assert record.status == "answered" and model.calls == [], record.answer
    assert (
        f"{part:,} of {base:,} ({100 * part / base:.2g}" in record.answer or f"{part:,} of {base:,} (" in record.answer
    )
    assert f"{part:,} of {base:,}" in record.answer and 0 < part < base, record.answer


VALENCIA = data_dir() / "valencia-2024"


def _health_near_flood(distance_m: float) -> tuple[int, int]:
    """(not hospitals, all) of Valencia's health facilities within ``distance_m`` of the observed flood, in UTM 30N."""
    health = gpd.read_file(VALENCIA / "valencia_city_health_facilities.geojson").to_crs(25830)
    flood = gpd.read_file(VALENCIA / "emsr773_observed_flood_merged.geojson").to_crs(25830).union_all()
    near = health.distance(flood) <= distance_m
    hospital = health["equipamien"].fillna("").str.upper().str.contains("HOSPITAL")
    return int((near & ~hospital).sum()), int(near.sum())


@pytest.mark.parametrize(
    ("question", "distance_m", "kinds_out"),
    [
        ("How many health facilities within 500 m of the Valencia flood are not hospitals?", 500, True),
        (
            "¿Cuántos centros de salud hay a menos de 1 km de la inundación de Valencia, sin contar los hospitales?",
            1000,
            True,
        ),
        # the city's list names no pharmacy: none to take out, and the answer says so
        ("How many health facilities in Valencia lie within 300 m of the flood, excluding pharmacies?", 300, False),
    ],
)
def test_a_kind_taken_out_of_a_feature_class_is_applied(store, question, distance_m, kinds_out):
    others, everything = _health_near_flood(distance_m)
    want = others if kinds_out else everything
    assert 0 < others < everything
    record, model = _run(store, question)
    assert record.status == "answered" and model.calls == [], record.answer
    assert f": {want:,} " in record.answer, record.answer
    assert "select_kind" in [s.tool for s in record.steps]
    if kinds_out:
        assert "other than hospital" in record.answer or "que no son hospital" in record.answer
    else:
        assert "no feature is named as a pharmacy: none taken out" in record.answer


@pytest.mark.parametrize(
    ("question", "event", "kept"),
    [
        # the homes, less the mobile homes the question takes out
        (
            "How many homes were destroyed in the Palisades fire, excluding mobile homes?",
            "palisades-2025/DINS_2025_Palisades_Public_View.geojson",
            lambda t: t.str.contains("Residen"),
        ),
        # it once kept only the commercial buildings: 26, the opposite of what was asked
        (
            "How many destroyed buildings in the Eaton fire were not commercial buildings?",
            "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson",
            lambda t: ~t.str.startswith("Commercial"),
        ),
        (
            "How many destroyed structures in the Eaton fire, other than single family residences?",
            "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson",
            lambda t: ~t.str.startswith("Single Family"),
        ),
        # every type but the two taken out ("schools" is no feature class to fetch here)
        (
            "How many buildings were destroyed in the Eaton fire, not counting churches and schools?",
            "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson",
            lambda t: ~t.isin(["Church", "School"]),
        ),
        # a negation opening an aside takes out what follows (it was kept: the mobile homes counted with the motor
        # homes); the kinds are the data's own words, hyphen-joined or not
        (
            "Palisades motor-homes only (not the mobile homes): how many were destroyed?",
            "palisades-2025/DINS_2025_Palisades_Public_View.geojson",
            lambda t: t == "Motor Home",
        ),
    ],
)
def test_structure_types_taken_out_of_a_damage_layer_are_applied(store, question, event, kept):
    dins = gpd.read_file(data_dir() / event)
    want = int(((dins["DAMAGE"] == "Destroyed (>50%)") & kept(dins["STRUCTURETYPE"])).sum())
    record, model = _run(store, question)
    assert record.status == "answered" and model.calls == [], record.answer
    assert f": {want:,} in total" in record.answer, record.answer
    step = next(s for s in record.steps if s.tool == "filter_values")
    assert step.args["taken_out"] and not set(step.args["taken_out"]) & set(step.args["values"])


EATON_DINS = "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson"


@pytest.mark.parametrize(
    ("question", "kept", "reading"),
    [
        # the damage layer spells them otherwise: Multi Family Residence ..., Utility Misc Structure, ... Multi Story
        (
            "How many apartment buildings were destroyed in the Eaton fire?",
            lambda t: t.str.startswith("Multi Family"),
            "multi-family",
        ),
        ("¿Cuántos garajes se destruyeron en el incendio Eaton?", lambda t: t == "Utility Misc Structure", "garajes"),
        (
            "How many two-story houses were destroyed in the Eaton fire?",
            lambda t: t.isin(["Single Family Residence Multi Story", "Multi Family Residence Multi Story"]),
            "multi-storey",
        ),
        (
            "How many buildings were destroyed in the Eaton fire, not counting outbuildings?",
            lambda t: t != "Utility Misc Structure",
            "outbuildings",
        ),
    ],
)
def test_kinds_of_structure_the_data_spells_otherwise_are_read_and_the_reading_said(store, question, kept, reading):
    # "apartments" had answered every destroyed building (2,722), "two-story houses" every destroyed home (1,859)
    dins = gpd.read_file(data_dir() / EATON_DINS)
    want = int(((dins["DAMAGE"] == "Destroyed (>50%)") & kept(dins["STRUCTURETYPE"])).sum())
    record, model = _run(store, question)
    assert record.status == "answered" and model.calls == [], record.answer
    assert f": {want:,} " in record.answer and reading in record.answer.split("How it was computed")[-1], record.answer


@pytest.mark.parametrize(
    ("question", "taken_out"),
    [
        ("Palisades motor-homes only (not the mobile homes): how many burned?", ["mobile homes"]),
        ("Count the double-wides, not motor homes.", ["motor homes"]),
        ("Land flooded in one of the two years, 2023 or 2024, not both.", []),
        ("Les écoles inondées (pas toutes, seulement les publiques) ?", []),
    ],
)
def test_a_negation_opening_an_aside_takes_out_what_it_names(question, taken_out):
    from geofaham_plugin.core.planning.prepass import EXCLUDED, normalise

    assert [m["what"] for m in EXCLUDED.finditer(normalise(question))] == taken_out
