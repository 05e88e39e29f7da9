"""The model's reading of a question: checked by code, retried once, settled against code's reading.

The model is scripted here (its replies are the readings a 1.5B model gave or could give); the real model reads
in ``test_reading_model.py``. Numbers come from the sample data (Eaton DINS snapshot: 2,722 destroyed, 3,051 with
any damage; Palisades: 6,823 destroyed, 4,152 undamaged)."""

from __future__ import annotations

import pytest

from geofaham_plugin.core.engines.layers import LayerCatalogue, data_dir, default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.prepass import prepass
from geofaham_plugin.core.planning.reading.bank import load_bank, similar
from geofaham_plugin.core.planning.reading.checks import Known, check_reading
from geofaham_plugin.core.planning.reading.fill import Candidates, prompt, read_question, repair
from geofaham_plugin.core.planning.reading.qualifiers import contradictions
from geofaham_plugin.core.planning.reading.read import candidates_for
from geofaham_plugin.core.planning.reading.schema import Reading
from geofaham_plugin.core.planning.spec_read import spec_from_facts


def reading(**kw) -> Reading:
    return Reading(**{"subject": "damage", **kw})


# ------------------------------------------------------------------------------------------- checks
@pytest.mark.parametrize(
    ("r", "known", "says"),
    [
        (reading(subject="healthcare", grades=["destroyed"]), Known(), "grades apply only"),
        (reading(), Known(has_damage=False), "no damage inspections"),
        (reading(grades=["destroyed"], share_of=["major"], measure="share"), Known(), "must contain every grade"),
        (reading(grades=["major"], share_of=["major"], measure="share"), Known(), "always 100 %"),
        (reading(grades=["major", "destroyed"], separately=True, measure="share"), Known(), "several counts"),
        (reading(relation="inside"), Known(), "needs a reference"),
        (reading(reference="hazard"), Known(), "reference must be null"),
        (reading(relation="inside", reference="damage"), Known(), "another set"),
        (reading(relation="inside", reference="my_area"), Known(), "no area of interest"),
        (reading(relation="within", reference="hazard"), Known(), "states none"),
        (reading(relation="inside", reference="hazard"), Known(distances_m=[500.0]), "states a distance"),
        (
            reading(subject="healthcare", relation="within", reference="hazard"),
            Known(k=3, distances_m=[1.0]),
            "nearest",
        ),
        (reading(measure="area"), Known(), "no area"),
        (reading(subject="healthcare", group_by="damage"), Known(classes=["healthcare"]), "by damage"),
        (reading(subject="education", group_by="structure_type"), Known(classes=["education"]), "structure type"),
        (reading(subject="hazard", measure="area"), Known(classes=["education"]), "names education"),
        (reading(subject="hazard", measure="area"), Known(layers=["layer:camps"]), "your layer layer:camps"),
        (reading(kinds=["hospital"]), Known(kinds={"damage": ["Church"], "healthcare": ["hospital"]}), "kinds narrow"),
        (
            reading(kinds_out=["hospital"]),
            Known(kinds={"damage": ["Church", "School"]}),
            "sets kinds of the subject aside",
        ),
        (reading(kinds=["Church"], kinds_out=["Church"]), Known(kinds={"damage": ["Church", "School"]}), "both kept"),
        (reading(kinds_out=["Church", "School"]), Known(kinds={"damage": ["Church", "School"]}), "every kind aside"),
    ],
)
def test_each_consistency_rule_fails_its_case(r, known, says):
    problems = check_reading(r, known)
    assert any(says in p for p in problems), problems


def test_consistent_readings_pass():
    assert check_reading(reading(grades=["destroyed"]), Known()) == []
    share = reading(grades=["destroyed"], share_of=["affected", "minor", "major", "destroyed"], measure="share")
    assert check_reading(share, Known()) == []
    near = reading(subject="healthcare", relation="within", reference="hazard", measure="list")
    assert check_reading(near, Known(distances_m=[5000.0], classes=["healthcare"])) == []


def test_slips_that_mean_nothing_are_repaired_not_retried():
    assert repair(reading(grades=["destroyed"], separately=True)).separately is False
    assert repair(reading(share_of=["destroyed"])).share_of == []


# ----------------------------------------------------------------------------------- the model call
def _candidates(question: str):
    layers = default_catalogue()
    facts = prepass(question, layers=layers)
    specs = spec_from_facts(facts, layers=layers).specs
    return candidates_for(facts, specs, layers, None)


def test_a_failed_check_is_retried_once_with_its_message():
    q = "How many Eaton structures ended up as ashes?"
    candidates, known = _candidates(q)
    model = ScriptedModel(
        {"reader": [{"subject": "damage", "relation": "within"}, {"subject": "damage", "grades": ["destroyed"]}]}
    )
    out = read_question(LLM(model), q, candidates, known)
    assert out.reading is not None and out.reading.grades == ["destroyed"]
    retry = model.calls_for("reader")[1].last_user
    assert "needs a reference" in retry and "needs a distance" in retry


def test_twice_inconsistent_comes_back_with_its_problems():
    q = "How many Eaton structures ended up as ashes?"
    candidates, known = _candidates(q)
    bad = {"subject": "damage", "relation": "within", "reference": "hazard"}
    out = read_question(LLM(ScriptedModel({"reader": [bad, bad]})), q, candidates, known)
    assert out.reading is None and any("needs a distance" in p for p in out.problems)


def test_the_schema_is_narrowed_to_the_question_candidates():
    q = "Hospitals within 5 km of the Eaton fire?"
    candidates, _ = _candidates(q)
    assert set(candidates.sets) == {"damage", "hazard", "healthcare"}
    messages, ids = prompt(q, candidates)
    assert len(ids) == 4 and messages[-1].content.rstrip().endswith("A:")
    assert sum(len(m.content) for m in messages) / 4 < 1500  # tokens, about four characters each


def test_the_bank_retrieves_its_own_question_first():
    bank = load_bank()
    assert len(bank) >= 200
    for e in bank[::37]:
        assert similar(e.q, 1)[0].id == e.id


def test_a_reader_not_scripted_leaves_code_alone():
    """Tests (and a scripted demo) that script no reader read with code alone: the model is never asked."""
    model = ScriptedModel({})
    assert not LLM(model).serves("reader") and LLM(ScriptedModel({"reader": []})).serves("reader")
    assert not LLM(ScriptedModel(lambda role, messages, schema: {})).serves("reader")


# ------------------------------------------------------------------------------ settled, end to end
def ask(store, question: str, *readings: dict):
    script = {"reader": list(readings)} if readings else {}
    return Orchestrator(store, LLM(ScriptedModel(script))).run(question)


def test_grades_only_the_model_read_are_two_readings_never_the_answer(store):
    """Code found no damage word in "reduced to ash"; the model reads destroyed. The small model's grades alone are
    never the answer: both readings are computed (every inspected building, the destroyed ones), partial."""
    read = {"subject": "damage", "grades": ["destroyed"]}
    record = ask(store, "How many Eaton buildings were reduced to ash?", read)
    assert record.status == "partial" and "read two ways" in record.answer
    assert "2,722" in record.answer and "5,805" in record.answer and "Do not use it as the answer" in record.answer


def test_what_a_second_reading_does_not_confirm_is_not_applied(store):
    """The model alone read the grades (code found no word); read again from other examples it reads them otherwise:
    the question was read two ways, both are computed, the answer is partial."""
    first, second = {"subject": "damage", "grades": ["destroyed"]}, {"subject": "damage", "grades": ["major"]}
    record = ask(store, "How many Eaton buildings were reduced to ash?", first, second)
    assert record.status == "partial" and "read two ways" in record.answer
    assert "2,722" in record.answer and "5,805" in record.answer


def test_grades_read_two_ways_compute_both_and_answer_neither(store):
    record = ask(
        store, "Tally the Eaton buildings that burned to the ground", {"subject": "damage", "grades": ["destroyed"]}
    )
    assert record.status == "partial" and record.structured.yes_no is None
    assert "read two ways" in record.answer and "Do not use it as the answer" in record.answer
    assert "3,051" in record.answer and "2,722" in record.answer


def test_a_share_of_a_subset(store):
    damaged = ["affected", "minor", "major", "destroyed"]
    read = {"subject": "damage", "grades": ["destroyed"], "measure": "share", "share_of": damaged}
    record = ask(store, "Of the structures the Eaton fire damaged, what fraction were destroyed?", read, read)
    assert record.status == "answered", record.answer
    assert "2,722 of 3,051 (89.2 %)" in record.answer


def test_several_figures_are_never_summed(store):
    read = {"subject": "damage", "grades": ["destroyed", "undamaged"], "separately": True}
    question = "In the Palisades fire, how many structures were destroyed, and how many were left undamaged?"
    record = ask(store, question, read, read)
    assert record.status == "answered", record.answer
    assert "6,823" in record.answer and "4,152" in record.answer and "10,975" not in record.answer
    assert "undamaged buildings" in record.answer


def test_without_a_reader_code_reads_as_before(store):
    record = ask(store, "How many buildings did the Eaton fire destroy?")
    assert record.status == "answered" and "2,722" in record.answer


# ------------------------------------------------------------------------------------ qualifiers
@pytest.mark.parametrize(
    ("question", "says"),
    [
        ("How many buildings did the 2025 Pasadena earthquake destroy?", "'earthquake', but Eaton Fire was a fire"),
        ("How many homes did the Palisades flood destroy?", "'flood', but Palisades Fire was a fire"),
        ("How many structures did the 2023 Eaton fire destroy?", "2023, but Eaton Fire was in 2025"),
        ("How many structures did the Eaton fire in Texas destroy?", "Texas, but Eaton Fire was in CA"),
        ("How many buildings did the Eaton fire destroy in Paris?", "Paris, but Eaton Fire was in Pasadena"),
    ],
)
def test_a_qualifier_the_disaster_contradicts_is_said_not_answered(store, question, says):
    record = ask(store, question)
    assert record.status == "partial" and says in record.answer
    assert "Do not use it as the answer" in record.answer


@pytest.mark.parametrize(
    "question",
    [
        "Hospitals in Glendale within 10 km of the Eaton fire?",
        "How many buildings did the Eaton fire destroy in Altadena?",
        "Of the structures the Eaton fire damaged, what fraction were destroyed?",
        "How many buildings were flooded by the DANA storm in Valencia?",
        "How many homes burned in the Lahaina fire of August 2023 on Maui?",
        "Which hospitals in California are near the Eaton fire?",
    ],
)
def test_qualifiers_the_disaster_has_are_no_contradiction(question):
    assert contradictions(question, prepass(question).event_id) == []


# -------------------------------------------------------------------------------- yes/no with counts
@pytest.mark.parametrize(
    ("question", "yes"),
    [
        ("Did the Eaton fire destroy zero buildings?", False),
        ("Did the Eaton fire destroy more than 2,000 buildings?", True),
        ("Were fewer than 100 homes destroyed in the Palisades fire?", False),
        ("Did the Eaton fire destroy any buildings?", True),
    ],
)
def test_a_yes_no_that_states_a_count_compares_with_it(store, question, yes):
    record = ask(store, question)
    assert record.status == "answered" and record.structured.yes_no is yes, record.answer


def test_candidates_lines_describe_each_set():
    c = Candidates(sets={"damage": "damage: x"})
    assert "Sets: damage: x" in prompt("q", c)[0][1].content


# ------------------------------------------------------------------------------- words that are not words
def test_sql_in_a_question_is_not_read_and_is_said(store):
    record = ask(store, "How many buildings did the Eaton fire destroy? SELECT * FROM damage WHERE damage='Destroyed'")
    assert "2,722" in record.answer and "3,051" not in record.answer
    assert "not read (code, not words)" in record.answer
    record = ask(store, "How many buildings did the Eaton fire destroy; DROP TABLE damage;--")
    assert "2,722" in record.answer and "drop table damage" in record.answer


def test_a_layer_named_with_punctuation_is_that_layer(store, tmp_path):
    import geopandas as gpd
    from shapely.geometry import Point

    path = tmp_path / "clinics.geojson"
    points = [Point(-118.15, 34.19), Point(-118.30, 34.05), Point(-118.10, 34.20)]
    gpd.GeoDataFrame({"name": ["A", "B", "C"]}, geometry=points, crs=4326).to_file(path)
    catalogue = LayerCatalogue()  # not the shared default one: a layer of yours added to it stays for other tests
    catalogue.add_user_layer("clinics; west", path)
    record = Orchestrator(store, LLM(ScriptedModel({})), layers=catalogue).run(
        "How many of my clinics; west are inside the Eaton fire perimeter?"
    )
    assert record.status == "answered" and "your layer clinics_west" in record.answer
    assert "2 in total" in record.answer


def test_farther_than_a_distance_looks_far_and_says_how_far(store):
    record = ask(store, "Which hospitals sit farther than 8 km from the Eaton burn perimeter?")
    assert record.status == "answered"
    count = next(v.value for v in record.structured.values if v.measure == "count" and v.group is None)
    assert count > 100, record.answer  # LA County's hospitals beyond 8 km (7 when only a 13 km ring was searched)
    assert "looked for up to 50 km around the hazard area" in record.answer


def test_which_one_is_nearest_is_one(store):
    record = ask(store, "Which hospital is nearest to the Eaton fire?")
    assert "AURORA LAS ENCINAS" in record.answer and "3 nearest" not in record.answer


def test_what_the_model_leaves_out_is_no_other_reading(store):
    """Code read 'outside the perimeter' from its words; the model's reading says no relation: code's stands."""
    read = {"subject": "damage", "grades": ["destroyed"]}
    record = ask(store, "How many destroyed Eaton structures lie outside the fire perimeter?", read)
    assert record.status == "answered" and "read two ways" not in record.answer
    assert "2 in total" in record.answer


def test_grades_named_as_the_data_spells_them_take_the_model_reading(store):
    """The question names the grades as the damage layer spells them ('Minor (10-25%)', 'Major (26-50%)'); code read
    its damage words as any damage; the model's reading is exactly the named grades: applied, without a second
    reading (Eaton: 41 minor + 21 major)."""
    read = {"subject": "damage", "grades": ["minor", "major"]}
    record = ask(store, "Eaton inspections: structures whose damage the inspectors graded minor or major?", read)
    assert record.status == "answered", record.answer
    assert "62 in total" in record.answer


def test_a_breakdown_only_the_model_read_comes_with_the_total(store):
    """Code read no grouping word in "show the mix of building uses"; the model reads a breakdown by structure type,
    twice: the count comes with its rows, the total unchanged (Eaton destroyed: 2,722)."""
    read = {"subject": "damage", "grades": ["destroyed"], "group_by": "structure_type"}
    record = ask(store, "How many Eaton structures were destroyed? Show the mix of building uses too", read, read)
    assert record.status == "answered", record.answer
    assert "2,722" in record.answer and "Single Family Residence Single Story" in record.answer


def test_a_measure_the_model_leaves_out_is_no_other_reading(store):
    """Code read "what fraction"; the model's reading has no measure (a count): code's share stands."""
    read = {"subject": "damage", "grades": ["destroyed"]}
    record = ask(store, "What fraction of the structures the Eaton fire reached were destroyed?", read)
    assert record.status == "answered" and "read two ways" not in record.answer
    assert "2,722 of 5,805" in record.answer


# ------------------------------------------------------------------------------ kinds, as the data spells them
def test_the_kinds_to_choose_are_the_data_s_own():
    """A damage subject's kinds are its layer's structure types; a feature class's are those of osm_classes.json;
    the model's output type takes no other."""
    candidates, known = _candidates("How many Palisades structures of each kind were destroyed near a hospital?")
    assert "Church" in candidates.kinds["damage"] and "Mobile Home Triple Wide" in candidates.kinds["damage"]
    assert candidates.kinds["healthcare"] == ["hospital", "clinic", "pharmacy"] and known.kinds == candidates.kinds
    assert "kinds: damage: Single Family Residence" in prompt("q", candidates)[0][1].content


def test_kinds_a_whole_local_source_already_is_are_no_narrowing():
    """LA County's hospitals (HIFLD) are all hospitals: a reading of 'hospitals' keeps them all, as code's does."""
    from geofaham_plugin.core.planning.reading.read import effective_kinds

    candidates, _ = _candidates("How many hospitals are within 5 km of the Eaton fire?")
    r = Reading(subject="healthcare", relation="within", reference="hazard", kinds=["hospital"])
    assert effective_kinds(r, candidates, 11, default_catalogue()).kinds == []
    every = Reading(subject="damage", kinds=candidates.kinds["damage"])
    assert effective_kinds(every, candidates, 11, default_catalogue()).kinds == []


def test_kinds_only_the_model_read_are_two_readings(store):
    """Code reads no structure type in 'capelas' (chapels, Portuguese); the model reads Church: both are computed (every
    destroyed structure, the destroyed churches), the answer partial, never one of them as the answer."""
    read = {"subject": "damage", "grades": ["destroyed"], "kinds": ["Church"]}
    record = ask(store, "Quantas capelas foram destruídas pelo fogo de Eaton?", read, read)
    assert record.status == "partial" and "(all / Church)" in record.answer
    assert "2,722" in record.answer and "STRUCTURETYPE: Church" in record.answer
    assert "a leitura de «os tipos do que é contado»" in record.answer  # the field named in the question's language


def test_kinds_the_model_leaves_out_keep_code_s_when_asked_it_keeps_them(store):
    """Code reads 'churches' as the structure type Church; the model's reading names none, and asked what the
    question does with the kinds named it says it keeps only them: code's stands (6)."""
    read = {"subject": "damage", "grades": ["destroyed"]}
    record = ask(store, "How many churches were destroyed in the Palisades fire?", read, {"use": "only"})
    assert record.status == "answered" and "read two ways" not in record.answer
    assert "6 in total" in record.answer


@pytest.mark.parametrize(("use", "other"), [("aside", "all but Church"), ("all", "all")])
def test_kinds_code_keeps_that_the_model_sets_aside_or_ignores_are_two_readings(store, use, other):
    """'Churches aside' in words code has no rule for: code keeps Church; the model's reading names no kind and,
    asked, sets them aside (or keeps every kind): two readings, both computed, the answer partial, never 6 alone."""
    read = {"subject": "damage", "grades": ["destroyed"]}
    record = ask(store, "Churches apart, what did the Palisades fire destroy? A count.", read, {"use": use})
    assert record.status == "partial" and f"(Church / {other})" in record.answer, record.answer
    assert "6 in total" in record.answer


def test_a_structure_type_named_must_be_kept_whatever_plan_runs(store):
    """'churches' names a structure type of the Palisades inspections and 'one count per damage grade' the grades
    only the inspections have: code reads the churches' inspections by grade, never the grades of all 11,988 (the
    planner's template, offered, is not what runs)."""
    import geopandas as gpd

    choice = {"template": "count_damage", "event_id": 14}
    model = ScriptedModel({"planner": [choice] * 4})
    question = "How did the churches fare in the Palisades fire? One count per damage grade."
    record = Orchestrator(store, LLM(model)).run(question)
    assert record.status == "answered", record.answer
    layer = default_catalogue().find(event_id=14, role="damage")[0]
    churches = gpd.read_file(data_dir() / layer.path).query("STRUCTURETYPE == 'Church'")
    assert sum(record.structured.by_group().values()) == len(churches), record.answer


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("km of farm track (highway=track) in Catarroja under the flood?", ["track"]),
        ("How many highway=residential segments of Catarroja touch the flood?", ["residential"]),
        ("Hectares of orchards flooded in Catarroja?", ["orchard"]),
        ("Which bridges open to vehicles in Catarroja were flooded?", ["road"]),
    ],
)
def test_kinds_are_read_from_the_data_s_words_and_tags(question, kinds):
    layers = default_catalogue()
    spec = spec_from_facts(prepass(question, layers=layers), layers=layers).specs[0]
    assert spec.subject.kinds == kinds


def test_a_question_neither_code_nor_the_model_reads_is_no_template_answer(store):
    """'capelas ... por grau': the model reads the churches once and every structure the second time: both readings
    are computed and shown, neither as the answer (every Eaton structure by grade is never the answer)."""
    first = {"subject": "damage", "kinds": ["Church"], "group_by": "damage"}
    second = {"subject": "damage", "group_by": "damage"}
    model = ScriptedModel({"reader": [first, second], "planner": [{"template": "count_damage", "event_id": 11}] * 4})
    record = Orchestrator(store, LLM(model)).run(
        "Como ficaram as capelas no incêndio Eaton? Quero a contagem por grau."
    )
    assert record.status == "partial", record.answer
    assert "lido de duas maneiras (all / Church)" in record.answer, record.answer


def test_two_readings_that_both_find_nothing_are_one_answer_zero(store):
    """A breakdown the model read and a second reading did not confirm: two readings, both computed. In an area where
    the fire destroyed nothing both find nothing, so whichever was meant the answer is 0: answered, not partial. With
    destroyed structures in the area the readings differ and the answer stays partial."""
    import geopandas as gpd
    from shapely import wkt

    from geofaham_plugin.core.aoi import register_aoi

    none_destroyed = "POLYGON((-118.045 34.17, -118.041 34.17, -118.041 34.174, -118.045 34.174, -118.045 34.17))"
    some_destroyed = "POLYGON((-118.15 34.18, -118.13 34.18, -118.13 34.195, -118.15 34.195, -118.15 34.18))"
    q = "How many structures were destroyed in the area I drew?"
    by_type = {"subject": "damage", "grades": ["destroyed"], "relation": "inside", "reference": "my_area"}
    readings = [{**by_type, "group_by": "structure_type"}, by_type]
    outcomes = {}
    for name, area in (("none", none_destroyed), ("some", some_destroyed)):
        aoi = register_aoi(store, gpd.GeoDataFrame(geometry=[wkt.loads(area)], crs=4326))
        outcomes[name] = Orchestrator(store, LLM(ScriptedModel({"reader": list(readings)}))).run(
            q, aoi_artifact_id=aoi.id
        )
    some, none = outcomes["some"], outcomes["none"]
    assert some.status == "partial" and "read two ways" in some.answer  # 484 in total, by type: which was meant
    assert none.status == "answered", none.answer
    assert none.structured.not_applied == [] and none.structured.values[0].value == 0
    assert "Do not use it" not in none.answer and "0 in total" in none.answer


def test_a_share_whose_kinds_narrow_only_its_part_compiles_to_the_kinds_share_of_those_grades():
    """ "Of the destroyed structures, what share were sheds": base and part have the same grades, the kinds narrow
    the part (checked consistent, run as the sheds among the destroyed); "what share of the sheds were destroyed"
    keeps the kinds on both."""
    from geofaham_plugin.core.planning.reading.reconcile import overlay, project
    from geofaham_plugin.core.planning.spec_compile import compile_specs
    from geofaham_plugin.core.planning.spec_schema import AnalysisSpec, SetRef

    sheds = ["Utility Misc Structure"]
    part_only = Reading(subject="damage", grades=["destroyed"], measure="share", share_of=["destroyed"], kinds=sheds)
    assert check_reading(part_only, Known(kinds={"damage": sheds})) == []
    assert check_reading(part_only.model_copy(update={"kinds": []}), Known()) != []  # without kinds: always 100 %
    both = Reading(subject="damage", grades=["destroyed"], measure="share", kinds=sheds)
    fields = {"subject", "grades", "measure", "share_of", "kinds"}
    skeleton = AnalysisSpec(subject=SetRef(kind="damage", event_id=12))
    for reading in (part_only, both):
        spec = overlay([skeleton], reading, fields, kind_field="STRUCTURETYPE")[0]
        assert project([spec]).share_of == reading.share_of
        steps = compile_specs([spec]).steps
        share = steps[-1]
        base = steps[int(share.inputs["base"].split(":")[1]) - 1]
        part = steps[int(share.inputs["part"].split(":")[1]) - 1]
        # the sheds among the destroyed: the base is every destroyed record; of the sheds: the base is the sheds
        kept, grades = (part, base) if reading is part_only else (base, part)
        assert share.tool == "share" and kept.tool == "filter_values" and kept.args["values"] == sheds
        assert grades.tool == "select_damage" and grades.args["damage_classes"] == ["destroyed"]


# ------------------------------------------------------------------------------ kinds set aside
def test_kinds_set_aside_of_a_damage_set_are_the_other_structure_types():
    """A damage set's kinds set aside are its other structure types, as code's filters spell an exclusion."""
    from geofaham_plugin.core.planning.reading.read import effective_kinds

    candidates, _ = _candidates("How many Eaton structures were destroyed?")
    r = Reading(subject="damage", grades=["destroyed"], kinds_out=["Utility Misc Structure"])
    kept = effective_kinds(r, candidates, 11, default_catalogue())
    assert kept.kinds_out == [] and "Utility Misc Structure" not in kept.kinds
    assert set(kept.kinds) == set(candidates.kinds["damage"]) - {"Utility Misc Structure"}


def test_kinds_set_aside_that_code_read_as_kept_are_two_readings(store):
    """Code reads 'sheds' in "Sheds aside, ..." as the sheds counted; the model as every other type: both are
    computed (811 sheds and 1,911 others of the 2,722 destroyed), the answer partial and short ("all but")."""
    read = {"subject": "damage", "grades": ["destroyed"], "kinds_out": ["Utility Misc Structure"]}
    record = ask(store, "Sheds aside, how many structures did the Eaton fire destroy?", read, read)
    assert record.status == "partial" and "(Utility Misc Structure / all but Utility Misc Structure)" in record.answer
    assert "811 in total" in record.answer and "1,911 in total" in record.answer


def test_kinds_set_aside_as_code_read_them_are_the_answer(store):
    read = {"subject": "damage", "grades": ["destroyed"], "kinds_out": ["Utility Misc Structure"]}
    record = ask(store, "Excluding sheds, how many structures did the Eaton fire destroy?", read, read)
    assert record.status == "answered" and "1,911 in total" in record.answer and "read two ways" not in record.answer


def test_feature_kinds_set_aside_compare_with_code_s():
    """A feature class's kinds set aside stay an exclusion (features of no kind are kept); read as kept by code and
    as set aside by the model, both are computed; set aside by both (the exclusion said before or after), one."""
    from geofaham_plugin.core.planning.reading.read import read_specs

    layers = default_catalogue()
    out = {"subject": "healthcare", "relation": "inside", "reference": "hazard", "measure": "list"}
    out["kinds_out"] = ["pharmacy"]
    for question, two in [
        ("Which Valencia health facilities other than pharmacies lie inside the flood?", False),
        ("Which Valencia health facilities lie inside the flood, pharmacies excluded?", False),
    ]:
        facts = prepass(question, layers=layers)
        specs = spec_from_facts(facts, layers=layers).specs
        read = read_specs(LLM(ScriptedModel({"reader": [out, out]})), facts, specs, layers, None)
        assert any(s.subject.kinds_out == ["pharmacy"] and not s.subject.kinds for s in read.specs), question
        assert bool(read.unavailable) is two and (not two or read.differences[0].model == "all but pharmacy")
    # "pharmacies and other health facilities": code reads the class (every kind); the model's setting pharmacies
    # aside is asked alone, and read as keeping every kind it is one reading, the class
    question = "Which Valencia pharmacies and other health facilities lie inside the flood?"
    facts = prepass(question, layers=layers)
    specs = spec_from_facts(facts, layers=layers).specs
    read = read_specs(LLM(ScriptedModel({"reader": [out, {"use": "all"}, out]})), facts, specs, layers, None)
    assert not read.unavailable and all(not s.subject.kinds_out and not s.subject.kinds for s in read.specs)


@pytest.mark.parametrize(
    ("question", "kept"),
    [
        ("Double-wide mobile homes in the Palisades: how many burned?", ["Mobile Home Double Wide"]),
        (
            "Palisades mobile homes that burned: one single number",
            ["Mobile Home Double Wide", "Mobile Home Single Wide", "Mobile Home Triple Wide"],
        ),
        (
            "Single-wide and triple-wide mobile homes destroyed in the Palisades",
            ["Mobile Home Single Wide", "Mobile Home Triple Wide"],
        ),
        ("Multi-story commercial buildings destroyed in the Palisades", ["Commercial Building Multi Story"]),
        ("Palisades structures typed Mixed Commercial/Residential that burned down", ["Mixed Commercial/Residential"]),
        (
            "Palisades: mixed commercial/residential and commercial buildings destroyed",
            ["Commercial Building Multi Story", "Commercial Building Single Story", "Mixed Commercial/Residential"],
        ),
    ],
)
def test_the_most_specific_structure_types_said_are_kept(question, kept):
    """Values the words they share name ("mobile homes") are all kept unless the question names some by a word only
    they have, said beside another of their words ("double-wide"): those alone (closed class: the data's values)."""
    layers = default_catalogue()
    spec = spec_from_facts(prepass(question, layers=layers), layers=layers).specs[0]
    assert sorted(spec.subject.filters["STRUCTURETYPE"]) == kept


@pytest.mark.parametrize(
    ("question", "storeys"),
    [
        ("Eaton homes of more than one storey that were destroyed", "Multi Story"),
        ("Eaton houses with at least 2 floors destroyed", "Multi Story"),
        ("Eaton: destroyed houses under two storeys", "Single Story"),
        ("Casas de varios pisos destruidas por el incendio Eaton", "Multi Story"),
        ("Eaton: one- and two-storey single-family houses destroyed", None),
        ("Eaton single-family homes, one-storey and multi-storey alike, destroyed", None),
    ],
)
def test_a_storey_count_is_read_as_a_number_compared(question, storeys):
    """Storeys are a closed class: a count (a number or a word for one or many), compared or not ("more than one
    storey" is two or more), then a storey word; a span that holds both of the data's storey kinds keeps both."""
    layers = default_catalogue()
    spec = spec_from_facts(prepass(question, layers=layers), layers=layers).specs[0]
    kinds = spec.subject.filters["STRUCTURETYPE"]
    if storeys is None:
        assert {"Single Family Residence Single Story", "Single Family Residence Multi Story"} <= set(kinds)
    else:
        assert kinds and all(kind.endswith(storeys) for kind in kinds), kinds


@pytest.mark.parametrize(
    ("question", "group_by"),
    [
        ("Eaton and Palisades, for each fire: the share of inspected homes that were destroyed", None),
        ("Destroyed buildings in the Eaton and Palisades fires, a count for each of the two fires", None),
        ("Destroyed buildings in the Eaton fire: how many of each type?", "structure type"),
    ],
)
def test_each_disaster_is_one_figure_per_event_not_a_breakdown_by_type(question, group_by):
    """'each' before a disaster word (a closed class: the disaster types) asks one figure per event; before 'type'
    or alone it asks a breakdown."""
    layers = default_catalogue()
    specs = spec_from_facts(prepass(question, layers=layers), layers=layers).specs
    assert {spec.group_by for spec in specs} == {group_by}


def test_data_of_another_local_layer_named_and_not_read_is_never_the_answer(store):
    """'estado Prevista' is a value of the Catarroja public-buildings layer (a closed class: the data's values);
    the question says 'buildings', which code reads as the map's buildings: the count of those (188) is not the
    answer, the answer is partial and names the layer's class it did not read."""
    question = (
        "Catarroja: municipal buildings whose works are still planned (estado Prevista) reached by the flood, how many?"
    )
    record = ask(store, question)
    assert record.status == "partial" and "public_buildings" in record.answer
    plain = ask(store, "How many buildings in Catarroja were flooded?")
    assert plain.status == "answered" and "public_buildings" not in plain.answer


def test_a_share_of_a_grade_wherever_it_lies_that_the_relation_narrows(store):
    """'Of all the destroyed structures, what share lie inside the perimeter': the base is every destroyed one, the
    part those of them inside (share_of = grades, with a relation: no longer 'always 100 %'); code's reading (the
    destroyed share of the structures inside) is the model's to correct, and the answer is that share."""
    whole = reading(
        grades=["destroyed"], share_of=["destroyed"], measure="share", relation="inside", reference="hazard"
    )
    assert check_reading(whole, Known()) == []
    question = "Of all the destroyed Eaton structures, what percentage sit inside the burn perimeter?"
    record = ask(store, question, whole.model_dump(), whole.model_dump())
    assert record.status == "answered" and "2,720 of 2,722 (99.9 %)" in record.answer, record.answer
    steps = [s.tool for s in record.steps]
    assert steps.index("select_damage") < steps.index("inside")  # the grades first: the base is all destroyed


def test_a_reader_that_cannot_be_asked_leaves_code_s_reading_unconfirmed(store):
    """The reader is configured but gives nothing usable (a server down or timed out looks the same): code's
    reading is computed and shown, never the answer ("ended up as ashes" has no damage word code knows: 5,805 every
    inspected structure would be a confident wrong number)."""
    nonsense = {"subject": "no such set"}
    record = ask(store, "Eaton: count what ended up as ashes, structures only.", nonsense, nonsense, nonsense)
    assert record.status == "partial" and "was read by code alone" in record.answer, record.answer


def test_a_share_of_features_within_a_distance_has_every_one_of_them_as_its_base():
    """'Of all the clinics, what percentage lie within 1.5 km of the flood': the base is every clinic of the area,
    not the ones fetched within 1.5 km of the flood (always 100 %)."""
    from geofaham_plugin.core.planning.spec_compile import compile_specs

    layers = default_catalogue()
    question = "Of all the Valencia clinics, what percentage are within 1.5 km of the DANA flood?"
    steps = compile_specs(spec_from_facts(prepass(question, layers=layers), layers=layers).specs).steps
    fetch = next(s for s in steps if s.tool == "get_features")
    assert fetch.args["buffer_m"] > 1500.0
    share = next(s for s in steps if s.tool == "share")
    assert share.inputs["base"] != share.inputs["part"]


def test_a_share_base_equal_to_its_part_with_nothing_to_narrow_it_is_dropped_not_retried():
    """'What share of the inspected structures was damaged but left standing': a 1.5B model put the part's grades
    in share_of too, twice, and the question went unanswered; that base names nothing (every structure is the
    base). With kinds or a relation it is a base (the part is narrowed by them) and stays."""
    slip = reading(grades=["affected", "minor", "major"], share_of=["affected", "minor", "major"], measure="share")
    assert repair(slip).share_of == [] and check_reading(repair(slip), Known()) == []
    related = slip.model_copy(update={"relation": "inside", "reference": "hazard"})
    assert repair(related).share_of == ["affected", "minor", "major"]


@pytest.mark.parametrize(("use", "status"), [("only", "answered"), ("all", "answered"), ("aside", "partial")])
def test_kinds_the_model_sets_aside_that_code_found_no_word_for_are_asked_alone(store, use, status):
    """A 1.5B model put 'hospital' in kinds_out for a question that sets nothing aside; code found no kind named.
    Asked alone what the question does with the hospitals: keeps only them (every local source's kind here) or
    every kind, the reading agrees with code's (answered); sets them aside, two readings (partial)."""
    read = {
        "subject": "healthcare",
        "relation": "within",
        "reference": "hazard",
        "measure": "list",
        "kinds_out": ["hospital"],
    }
    record = ask(store, "Which hospitals lie within 10 km of the Eaton fire?", read, {"use": use})
    assert record.status == status, record.answer


@pytest.mark.parametrize(
    "question",
    [
        "Casas de Eaton: em percentagem, quantas ficaram sem nenhum dano?",
        "Eaton: a porcentagem de prédios destruídos, por favor",
    ],
)
def test_a_share_said_in_portuguese_is_a_share(question):
    """'percentagem' / 'porcentagem' (the share words are a closed class in four languages): a count was answered."""
    layers = default_catalogue()
    assert spec_from_facts(prepass(question, layers=layers), layers=layers).specs[0].measure == "share"


def test_a_size_the_features_must_have_that_no_step_applies_is_never_the_answer(store):
    """'bigger than 500 m²' is a number and an area unit (a closed class): no step of the plan filters by size, so
    the count of every damaged label (35) is not the answer; the answer is partial and quotes the size."""
    record = ask(store, "How many damaged buildings in Lahaina have a footprint bigger than 500 m²?")
    assert record.status == "partial" and "500 m2" in record.answer, record.answer


def test_grades_said_by_a_range_of_percent_are_codes_and_the_percent_is_no_share_asked(store):
    """ "one to nine percent" is the grade Affected (1-9%) as the data spell it (a closed class code reads), and its
    percent asks no share: the model's minor grade and share give way. Single-family homes are both single-family
    types: the model's single-storey one alone is no word of the question, code's kinds stand (46 + 159 = 205)."""
    read = {"subject": "damage", "grades": ["affected", "minor"], "measure": "share",
            "share_of": ["affected", "minor", "major"], "kinds": ["Single Family Residence Single Story"]}  # fmt: skip
    record = ask(store, "Eaton fire: how many single-family homes had light damage only, one to nine percent?", read)
    assert record.status == "answered", record.answer
    (value,) = record.structured.totals()
    assert value.value == 205 and value.unit != "percent", record.answer


def test_a_kind_told_apart_by_a_word_said_is_the_models_to_narrow_to(store):
    """Of the kinds code found, the model may keep some when a word tells them from those it leaves ("mobile"); a
    narrowing no word tells (the single-storey one of "single-family homes") gives way to code's kinds."""
    from geofaham_plugin.core.planning.reading.read import unsaid_values_given_way
    from geofaham_plugin.core.planning.reading.schema import Reading

    sfr = ["Single Family Residence Multi Story", "Single Family Residence Single Story"]
    code = Reading(subject="damage", grades=["destroyed"], kinds=[*sfr, "Mobile Home Single Wide"])
    unsaid = "Eaton: how many single-family homes and single-wides were destroyed?"
    model = Reading(subject="damage", grades=["destroyed"], kinds=sfr[1:])
    assert unsaid_values_given_way(model, code, unsaid).kinds == code.kinds
    said = "Eaton: of the single-family homes and mobile single-wides, how many mobile ones were destroyed?"
    mobile = Reading(subject="damage", grades=["destroyed"], kinds=["Mobile Home Single Wide"])
    assert unsaid_values_given_way(mobile, code, said).kinds == ["Mobile Home Single Wide"]
    # a kind code did not keep gives way unless a word of its own is said
    sfr_code = Reading(subject="damage", grades=["destroyed"], kinds=sfr)
    assert unsaid_values_given_way(mobile, sfr_code, "single-family homes destroyed").kinds == sfr
    assert unsaid_values_given_way(mobile, sfr_code, "single-family or mobile homes").kinds == mobile.kinds
    # kinds set aside are the model's to read
    aside = Reading(subject="damage", grades=["destroyed"], kinds_out=["Utility Misc Structure"])
    assert unsaid_values_given_way(aside, sfr_code, "sheds aside, how many destroyed?") == aside


def test_a_share_base_of_grades_no_damage_word_says_is_codes_every_structure(store):
    """ "what share of homes had 10 to 25 percent damage": the base is every home; the model's base of damaged grades
    is said by no damage word of the question (a closed class code reads), so it gives way: Minor of all, one figure
    (Eaton single-family homes: 32 Minor of 4,091, 0.78 %, from the data)."""
    read = {"subject": "damage", "grades": ["minor"], "measure": "share", "share_of": ["affected", "minor", "major"],
            "kinds": ["Single Family Residence Multi Story", "Single Family Residence Single Story"]}  # fmt: skip
    record = ask(store, "Eaton: what share of single-family homes had 10 to 25 percent damage?", read, read)
    assert record.status == "answered", record.answer
    (share,) = [v for v in record.structured.totals() if v.unit == "percent"]
    assert abs(share.value - 100 * 32 / 4091) < 0.01 and "32 of 4,091" in record.answer, record.answer
