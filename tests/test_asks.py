"""A question's asks counted against the figures its specs give (``planning/asks.py``), and what a question names
of a local layer's data (``coverage._local_field_constraints``): a part of the question dropped, or a value of the
data it names and no step applies, makes the answer partial and names the part; never a number stated as the
answer to the whole question."""

from __future__ import annotations

import geopandas as gpd
import pytest

from geofaham_plugin.core.engines.layers import data_dir, default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.asks import counted_if_asked, figures, listed_if_asked, question_asks, unanswered
from geofaham_plugin.core.planning.coverage import local_field_constraints
from geofaham_plugin.core.planning.prepass import prepass
from geofaham_plugin.core.planning.spec_compile import compile_specs
from geofaham_plugin.core.planning.spec_read import local_fields
from geofaham_plugin.core.planning.spec_schema import AnalysisSpec, Relation, SetRef

HOSPITALS = "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson"
PERIMETER = "eaton-2025/eaton_adjusted_fire_perimeter.geojson"


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("How many homes were destroyed in Eaton, and how many were left standing?", ["count", "count"]),
        ("¿Cuántas viviendas se inundaron y qué porcentaje del total representan?", ["count", "share"]),
        ("Combien d'écoles sont à moins de 2 km du feu, et lesquelles ?", ["count", "names"]),
        ("Quantos hospitais ficam a menos de 3 km e a que distância está o mais próximo?", ["count", "distance"]),
        ("Which clinics are nearest to the flood, and how far away are they?", ["names", "distance"]),
        ("How many kilometres of road were under water?", ["measure"]),
        ("Count the destroyed buildings of the Eaton fire.", []),
        ("How many buildings which burned were homes?", ["count"]),
        ("Is there a hospital within 1 km of the fire? Name it.", ["yesno", "names"]),
        ("Eaton fire. How many schools sit inside the perimeter; did any of them burn?", ["count", "yesno"]),
        # a French question by inversion (verb-pronoun) asks yes or no
        ("Les écoles de Paiporta étaient-elles toutes sous l'eau ? Combien sont-elles ?", ["yesno", "count"]),
        # a figure asked by its noun, after words that ask for it ("I need", "give me") or none; a total is a count or
        # a measure (answered by either)
        (
            "I need two figures: the number of hospitals near the fire, and their combined bed count.",
            ["count", "count"],
        ),
        ("Number of hospitals within 10 km of the fire and their total beds", ["count", "count"]),
        ("Necesito el número de hospitales a menos de 5 km y la suma de camas", ["count", "count"]),
        ("Le nombre de maisons détruites et le total des lits", ["count", "count"]),
        ("Give me the total number of destroyed homes", ["count"]),
    ],
)
def test_the_asks_of_a_question_are_the_interrogatives_that_open_its_clauses(question, kinds):
    assert [a.kind for a in question_asks(question)] == kinds


def _hospitals_within(d: float, measure: str = "count") -> AnalysisSpec:
    return AnalysisSpec(
        subject=SetRef(kind="features", feature_class="healthcare", event_id=11),
        relation=Relation(kind="within", distance_m=d, reference=SetRef(kind="hazard", event_id=11)),
        measure=measure,  # type: ignore[arg-type]
    )


def test_a_list_gives_the_count_names_and_distances_a_count_only_the_count():
    assert figures([_hospitals_within(5000, "list")]) == {"count": 1, "names": 1, "distance": 1}
    asked = "How many hospitals are within 5 km, and which ones?"
    assert [a.kind for a in unanswered(asked, [_hospitals_within(5000)])] == ["names"]
    assert unanswered(asked, [_hospitals_within(5000, "list")]) == []
    # the count becomes the list it is part of; a question asking one thing keeps its count
    assert listed_if_asked(asked, [_hospitals_within(5000)])[0].measure == "list"
    assert listed_if_asked("How many hospitals are within 5 km?", [_hospitals_within(5000)])[0].measure == "count"
    # two counts asked, one given: the second is named; a share gives its part's count and the share
    two = "How many were inspected, and how many of them were destroyed?"
    damage = AnalysisSpec(subject=SetRef(kind="damage", event_id=11))
    assert [a.clause for a in unanswered(two, [damage])] == ["how many of them were destroyed"]
    share = damage.model_copy(update={"measure": "share"})
    assert unanswered("How many burned, and what share is that?", [share]) == []


def test_a_count_of_the_measured_set_is_added_when_the_question_asks_how_many_too():
    """ "how many, and how many beds in total": a sum answers one ask, the count of the same hospitals the other;
    "how many hospitals" asks the hospitals' number, which a mean of their beds never gives."""
    beds = AnalysisSpec.model_validate(_hospitals_within(7000).model_dump() | {"measure": "sum", "field": "BEDS"})
    both = "Psychiatric hospitals within 7 km of the fire: how many, and how many beds in total?"
    assert [a.kind for a in unanswered(both, [beds])] == ["count"]
    added = counted_if_asked(both, [beds])
    assert [(s.measure, s.field) for s in added] == [("sum", "BEDS"), ("count", None)]
    assert unanswered(both, added) == []
    mean = beds.model_copy(update={"measure": "mean"})
    after = "Hospitals within 7 km of the fire: the average beds per hospital, and how many hospitals?"
    assert [s.measure for s in counted_if_asked(after, [mean])] == ["mean", "count"]
    # one thing asked: the sum alone; "how many beds" is the sum's ask
    assert counted_if_asked("How many beds do the hospitals within 7 km have?", [beds]) == [beds]
    # "how far, and how many beds": the set listed with its distances beside the sum, each an answer of the plan
    far = "How far are the hospitals within 7 km of the fire, and how many beds do they have?"
    listed = counted_if_asked(far, [beds])
    assert [s.measure for s in listed] == ["sum", "list"] and unanswered(far, listed) == []
    plan = compile_specs(listed)
    assert [plan.step(i).tool for i in plan.results] == ["stats", "within_distance"]


@pytest.mark.parametrize(
    ("question", "answered"), [("How many metres is it from the flood?", True), ("How many hectares?", False)]
)
def test_a_measure_asked_in_a_unit_of_length_is_answered_by_a_distance(question, answered):
    nearest = AnalysisSpec(
        subject=SetRef(kind="features", feature_class="healthcare", event_id=6),
        relation=Relation(kind="nearest", k=1, reference=SetRef(kind="hazard", event_id=6)),
        measure="list",
    )
    assert (unanswered(question, [nearest]) == []) is answered


# ------------------------------------------------------------------------------------------ end to end
def _run(store, question: str):
    return Orchestrator(store, LLM(ScriptedModel({}))).run(question)


@pytest.fixture(scope="module")
def within_5km() -> list[str]:
    """The Los Angeles County hospitals within 5 km of the Eaton perimeter (EPSG:26911), computed here."""
    hospitals = gpd.read_file(data_dir() / HOSPITALS)
    hospitals = hospitals[(hospitals["STATE"] == "CA") & (hospitals["COUNTY"] == "LOS ANGELES")].to_crs(26911)
    perimeter = gpd.read_file(data_dir() / PERIMETER).to_crs(26911).union_all()
    distance = hospitals.distance(perimeter)
    assert not ((distance > 4900) & (distance < 5100)).any()  # no hospital near the threshold
    return sorted(hospitals.loc[distance <= 5000, "NAME"])


def test_e2e_how_many_and_which_gives_the_count_and_the_names(store, within_5km):
    record = _run(
        store, "Near the Eaton fire: how many hospitals are there within 5 km of it, and what are their names?"
    )
    assert record.status == "answered", record.answer
    assert f"{len(within_5km)} " in record.answer and all(name in record.answer for name in within_5km)


def test_e2e_a_second_question_no_spec_answers_makes_the_answer_partial_and_names_it(store):
    record = _run(store, "Eaton fire: how many structures were destroyed, and did any school burn?")
    assert record.status == "partial", record.answer
    assert "did any school burn" in record.answer and "Do not use it as the answer" in record.answer


@pytest.fixture(scope="module")
def hospitals() -> gpd.GeoDataFrame:
    """Los Angeles County's HIFLD hospitals with their distance to the Eaton perimeter and to the Palisades area (the
    convex hull of its destroyed DINS points, which stands in for a perimeter), metres in EPSG:26911."""
    la = gpd.read_file(data_dir() / HOSPITALS)
    la = la[(la["STATE"] == "CA") & (la["COUNTY"] == "LOS ANGELES")].to_crs(26911)
    eaton = gpd.read_file(data_dir() / PERIMETER).to_crs(26911).union_all()
    dins = gpd.read_file(data_dir() / "palisades-2025/DINS_2025_Palisades_Public_View.geojson").to_crs(26911)
    palisades = dins[dins["DAMAGE"] == "Destroyed (>50%)"].union_all().convex_hull
    return la.assign(eaton_m=la.distance(eaton), palisades_m=la.distance(palisades))


def test_e2e_the_values_of_the_hospital_layer_a_question_names_are_applied(store, hospitals):
    """ "general acute care", "not psychiatric", "has a helipad": the local layer's own values (TYPE, HELIPAD), read
    in code as the data spells them, filter the hospitals; a numeric field named ("beds") is summed, its no-data code
    (-999) left out."""
    acute = hospitals[(hospitals["TYPE"] == "GENERAL ACUTE CARE") & (hospitals["eaton_m"] <= 8500)]
    assert not hospitals["eaton_m"].between(8400, 8600).any() and not hospitals["eaton_m"].between(6900, 7100).any()
    record = _run(store, "How many general acute care hospitals lie within 8.5 km of the Eaton fire?")
    assert record.status == "answered" and f": {len(acute)} in total" in record.answer, record.answer
    near = hospitals[(hospitals["TYPE"] != "PSYCHIATRIC") & (hospitals["eaton_m"] <= 7000)]
    assert (hospitals[hospitals["eaton_m"] <= 7000]["TYPE"] == "PSYCHIATRIC").any()  # the condition drops some
    record = _run(store, "Which hospitals within 7 km of the Eaton fire are not psychiatric?")
    assert record.status == "answered", record.answer
    assert f"{len(near)} healthcare features" in record.answer and all(n in record.answer for n in near["NAME"])
    helipads = hospitals[hospitals["HELIPAD"] == "Y"].sort_values("palisades_m")
    assert helipads["palisades_m"].iloc[1] - helipads["palisades_m"].iloc[0] > 100
    record = _run(store, "Nearest hospital to the Palisades burn area that has a helipad: which one, how far?")
    assert record.status == "answered", record.answer
    first = record.answer.split("| 1 | ")[1].split(" |")[0]
    assert first == helipads["NAME"].iloc[0], record.answer
    # one hospital asked for: the one nearest ("the Palisades" is a name, not a plural asking for three)
    record = _run(store, "Which hospital with a helipad is closest to the Palisades burn scar?")
    assert record.status == "answered" and "(1 nearest" in record.answer and "| 2 |" not in record.answer
    assert helipads["NAME"].iloc[0] in record.answer, record.answer
    record = _run(store, "Within 5 km of the Eaton fire, what is the total number of beds of the hospitals?")
    beds = hospitals[(hospitals["eaton_m"] <= 5000) & (hospitals["BEDS"] >= 0)]["BEDS"].sum()
    assert record.status == "answered" and f"sum of BEDS over healthcare features: {beds:,}" in record.answer
    # naming the county the hospitals are in narrows nothing (its values are places of the gazetteer)
    fields = local_fields("healthcare", 11, default_catalogue())
    assert "COUNTY" not in {f.name for f in fields} and {"TYPE", "HELIPAD", "BEDS"} <= {f.name for f in fields}
    plain = prepass("How many hospitals are within 5 km of the Eaton fire and which are they?")
    assert local_field_constraints(plain, fields) == []


def test_a_share_of_a_set_in_itself_is_never_an_answer(store):
    from geofaham_plugin.core.planning.asks import whole_share

    damage = SetRef(kind="damage", event_id=12)
    destroyed = damage.model_copy(update={"damage_classes": ["destroyed"]})
    assert whole_share(AnalysisSpec(subject=damage, measure="share"))  # every record of every record
    assert not whole_share(AnalysisSpec(subject=destroyed, measure="share"))  # destroyed of all
    assert whole_share(AnalysisSpec(subject=destroyed, measure="share", share_of=["destroyed"]))
    sheds = destroyed.model_copy(update={"filters": {"STRUCTURETYPE": ["Utility Misc Structure"]}})
    assert not whole_share(AnalysisSpec(subject=sheds.model_copy(update={"filters_part": True}), measure="share"))
    inside = Relation(kind="inside", reference=SetRef(kind="hazard", event_id=11))
    assert not whole_share(AnalysisSpec(subject=damage, relation=inside, measure="share"))
    # code read no loss in "written off": its share is of the mobile homes in themselves, said, not answered
    record = _run(store, "What fraction of the Palisades mobile homes ended up written off?")
    assert record.status == "partial" and "always 100 %" in record.answer, record.answer


def test_e2e_another_disasters_place_does_not_take_the_features_from_its_area(store, within_5km):
    """Offline, "Los Angeles" is known only as the Palisades fire's area: hospitals of the Eaton fire are not taken
    from there (it answered 0, stated as the answer); the place is said not applied, the count computed is right."""
    record = _run(store, "How many Los Angeles County hospitals are within 5 km of the Eaton fire?")
    assert record.status == "partial" and "only those in Los Angeles" in record.answer, record.answer
    assert f": {len(within_5km)} in total" in record.answer


def test_clauses_are_split_before_accents_are_stripped():
    """Portuguese "é" (is) is no "e" (and): "Qual é a média …" is one ask, a measure, not "which" and another."""
    assert [a.kind for a in question_asks("Qual é a média do dNBR dentro da máscara?")] == ["measure"]
    assert [a.kind for a in question_asks("Quantas escolas arderam e qual é a percentagem delas?")] == [
        "count",
        "share",
    ]


@pytest.mark.parametrize(
    ("question", "applied"),
    [
        ("Catarroja, under the DANA water: how many kilometres of canal (waterway=canal)?", True),
        ("Pedestrian crossings (highway=crossing) in Catarroja: how many are under the DANA water?", False),
        ("Catarroja power towers (power=tower): how many stand in the DANA flood water?", True),
        ("Km of motorway (highway=motorway) in Catarroja under the flood?", True),
    ],
)
def test_e2e_an_osm_tag_written_out_is_applied_or_said(store, question, applied):
    """A tag written out names exactly the features to keep: applied by the kind it makes (power=tower: pylons;
    highway=motorway: the motorway kind) or by a filter on the extract's column (waterway=canal: 4.49 km, checked in
    test_closed_readings' way), else the answer is partial and names it (a canal's length was stated as every
    waterway's; crossings are points no road class holds, once counted as 0 roads)."""
    record = _run(store, question)
    tag = question.split("(")[1].split(")")[0]
    assert (record.status == "answered") == applied, record.answer
    assert (f"only the features tagged {tag}" in record.answer) != applied


def test_e2e_how_many_and_how_many_beds_gives_both_figures(store, hospitals):
    """The count and the beds of the same hospitals, each a figure; values from the data here (4 and 225)."""
    near = hospitals[(hospitals["TYPE"] == "PSYCHIATRIC") & (hospitals["eaton_m"] <= 7000)]
    record = _run(
        store, "Psychiatric hospitals within 7 km of the Eaton fire: how many are there, and how many beds in total?"
    )
    assert record.status == "answered", record.answer
    assert f"{len(near)} in total" in record.answer and f": {int(near['BEDS'].sum())} " in record.answer


def test_e2e_the_number_and_the_combined_bed_count_asked_by_their_nouns_are_both_given(store, hospitals):
    """ "the number of ... and their combined bed count": two figures asked without an interrogative; "bed" is the
    BEDS field said in the singular. Values from the data here (psychiatric hospitals within 7 km: 4 and 225)."""
    near = hospitals[(hospitals["TYPE"] == "PSYCHIATRIC") & (hospitals["eaton_m"] <= 7000)]
    record = _run(
        store,
        "For the mutual-aid request I need two figures: the number of psychiatric hospitals within 7 km of the Eaton "
        "fire, "
        "and their combined bed count.",
    )
    assert record.status == "answered", record.answer
    assert f"{len(near)} in total" in record.answer and f": {int(near['BEDS'].sum())} " in record.answer
