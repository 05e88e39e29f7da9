"""Questions in Spanish, French and Portuguese are answered like English ones, in the question's language:
the language is read from function words and spelling (never from place names), and every fixed text of
the answer comes from the phrase table in that language; numbers are stated as in English ("2,722")."""

from __future__ import annotations

import json

import pytest

from geofaham_plugin.core.domain.damage import DamageClass
from geofaham_plugin.core.domain.feature_classes import feature_class_names
from geofaham_plugin.core.domain.language import (
    LANGUAGES,
    PHRASES_FILE,
    damage_class_name,
    detect_language,
    feature_class_name,
    phrase,
    phrase_keys,
)
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator, OrchestratorConfig
from geofaham_plugin.core.orchestrator.runlog import RunRecord
from geofaham_plugin.core.planning.coverage import Constraint
from geofaham_plugin.core.planning.spec_schema import AnalysisSpec, Relation, SetRef


# ------------------------------------------------------------------------------------------ detection
@pytest.mark.parametrize(
    "question, language",
    [
        # English, including names that hold Spanish / Portuguese words, and upper / title case
        ("How many buildings were destroyed in the Eaton fire?", "en"),
        ("Eaton fire: destroyed homes?", "en"),
        ("hospitals within 2 km of the Valencia flood", "en"),
        ("How many schools lie more than 2 km from the Valencia flood?", "en"),
        ("Which hospitals in Los Angeles are closest to the Palisades fire?", "en"),
        ("Los Angeles fires: how many structures were damaged?", "en"),
        ("Porto Alegre flood extent area", "en"),
        ("Are there shelters inside the Porto Alegre flood?", "en"),
        ("count destroyed houses no more than 600 m from a school, Eaton fire", "en"),
        ("HOW MANY HOMES DID THE PALISADES FIRE DESTROY", "en"),
        ("How Many Buildings Did The Eaton Fire Destroy", "en"),
        ("Damage by class in La Jolla", "en"),
        ("San Francisco bridges", "en"),
        ("And in Valencia?", "en"),
        ("Valencia", "en"),
        ("Los Angeles", "en"),
        ("", "en"),
        # Spanish
        ("¿Cuántos edificios destruyó el incendio de Eaton?", "es"),
        ("¿Cuántas escuelas quedaron dentro de la zona inundada de Valencia?", "es"),
        ("Cuantos centros de salud hay a menos de 1,5 km de la zona inundada de Valencia", "es"),
        ("hospitales cerca de la inundación de Valencia", "es"),
        ("¿Hay albergues dentro de la zona inundada de Porto Alegre?", "es"),
        ("edificios destruidos por el incendio de Los Angeles", "es"),
        ("Las dos escuelas más cercanas al incendio de Lahaina", "es"),
        ("¿Qué porcentaje de las viviendas fueron destruidas en el Eaton Fire?", "es"),
        ("Número de puentes en la zona afectada", "es"),
        ("¿Y en Valencia?", "es"),
        # French
        ("Combien de bâtiments ont été détruits par l'incendie d'Eaton ?", "fr"),
        ("Quels sont les deux hôpitaux les plus proches de l'incendie de Lahaina ?", "fr"),
        ("Y a-t-il des écoles dans la zone inondée de Valencia ?", "fr"),
        ("combien d'écoles à moins de 2 km de l'inondation de Porto Alegre", "fr"),
        ("Bâtiments détruits par l'incendie de Los Angeles", "fr"),
        ("hôpitaux près de la zone inondée", "fr"),
        ("Quelle part des maisons a été détruite lors de l'incendie des Palisades ?", "fr"),
        ("Nombre de ponts dans la zone sinistrée de Valencia", "fr"),
        ("Est-ce que des abris se trouvent dans la zone inondée ?", "fr"),
        ("Et les hôpitaux ?", "fr"),
        # Portuguese
        ("Quantos edifícios foram destruídos no incêndio de Eaton?", "pt"),
        ("Quantas escolas ficaram dentro da área inundada de Porto Alegre?", "pt"),
        ("Há abrigos na zona inundada de Porto Alegre?", "pt"),
        ("hospitais perto da inundação de Valência", "pt"),
        ("Quais são os três hospitais mais próximos do incêndio de Lahaina?", "pt"),
        ("edifícios destruídos pelo incêndio de Los Angeles", "pt"),
        ("Qual a percentagem das casas destruídas no incêndio de Eaton?", "pt"),
        ("Número de pontes na área atingida pela inundação", "pt"),
        ("escolas a menos de 2 km da inundação em Porto Alegre", "pt"),
        ("Existem abrigos dentro da área inundada?", "pt"),
        ("E em Porto Alegre?", "pt"),
    ],
)
def test_the_language_of_a_question(question, language):
    assert detect_language(question) == language


# ------------------------------------------------------------------------------------------ phrases
def test_every_phrase_is_in_the_four_languages_with_the_same_fields():
    raw = json.loads(PHRASES_FILE.read_text(encoding="utf-8"))
    import string

    for key in phrase_keys():
        entry = raw[key]
        assert set(entry) == set(LANGUAGES), key
        fields = {lang: {f for _, f, _, _ in string.Formatter().parse(entry[lang]) if f} for lang in LANGUAGES}
        assert all(fields[lang] == fields["en"] for lang in LANGUAGES), (key, fields)
        assert all(entry[lang].strip() for lang in LANGUAGES), key


def test_phrases_fill_their_fields_and_unknown_keys_fail():
    assert phrase("what.in_total", "es", total="2,722") == "2,722 en total"
    assert phrase("what.in_total", "xx", total="3") == "3 in total"  # another language: English
    with pytest.raises(KeyError):
        phrase("no.such.key", "en")


def test_damage_and_feature_classes_are_named_in_every_language():
    for lang in LANGUAGES:
        for c in DamageClass:
            assert damage_class_name(c.value, lang)
        for name in feature_class_names():
            assert feature_class_name(name, lang) != (name if lang != "en" else "")
    assert (
        damage_class_name("destroyed", "pt") == "destruídos" and feature_class_name("healthcare", "en") == "healthcare"
    )


def test_labels_and_constraints_in_each_language_and_english_unchanged():
    spec = AnalysisSpec(
        subject=SetRef(kind="damage", event_id=11, damage_classes=[DamageClass.destroyed]),
        relation=Relation(kind="within", reference=SetRef(kind="features", feature_class="education"), distance_m=500),
        aoi_artifact_id="a_0000aaaa",
    )
    assert spec.label() == (
        "destroyed buildings of the Eaton Fire within 500 m of education features, in your area of interest"
    )
    assert spec.label("es") == (
        "edificios destruidos del Eaton Fire a menos de 500 m de centros educativos, en su área de interés"
    )
    assert spec.label("fr").startswith("bâtiments détruits de Eaton Fire à moins de 500 m")
    assert spec.label("pt").endswith("na sua área de interesse")
    share = Constraint(kind="measure", value="share", phrase="porcentaje")
    assert share.describe() == 'the share asked for ("porcentaje")'
    assert share.describe("es") == 'la medida pedida: proporción ("porcentaje")'
    outside = Constraint(kind="relation", value="outside", phrase="hors de")
    assert outside.describe("fr") == "la relation 'en dehors' (\"hors de\")"
    assert Constraint(kind="k", value=3, phrase="3 nearest").describe("pt") == "os 3 mais próximos"


def test_an_old_run_record_without_a_language_loads_as_english():
    record = RunRecord.model_validate({"run_id": "r_00000001", "question": "¿Cuántos?"})
    assert record.language == "en"


# ------------------------------------------------------------------------------------------ end to end
def _orchestrator(store, script=None, **config):
    return Orchestrator(store, LLM(ScriptedModel(script or {})), config=OrchestratorConfig(**config))


@pytest.mark.parametrize(
    "question, language, phrases",
    [
        (
            "¿Cuántos edificios fueron destruidos por el incendio de Eaton?",
            "es",
            ["edificios destruidos del Eaton Fire", "2,722 en total", "Cómo se calculó:", "Limitaciones:"],
        ),
        (
            "Combien de bâtiments ont été détruits par l'incendie d'Eaton ?",
            "fr",
            ["bâtiments détruits de Eaton Fire", "2,722 au total", "Comment cela a été calculé :", "Limites :"],
        ),
        (
            "Quantos edifícios foram destruídos no incêndio de Eaton?",
            "pt",
            ["edifícios destruídos do Eaton Fire", "2,722 no total", "Como foi calculado:", "Limitações:"],
        ),
        (
            "How many buildings did the Eaton fire destroy?",
            "en",
            ["destroyed buildings of the Eaton Fire", "2,722 in total", "How it was computed:", "Limitations:"],
        ),
    ],
)
def test_a_question_is_answered_in_its_language(store, question, language, phrases):
    record = _orchestrator(store).run(question)
    assert record.status == "answered", record.answer
    assert record.language == language
    for text in phrases:
        assert text in record.answer, (text, record.answer)
    if language != "en":
        assert "How it was computed" not in record.answer and "in total" not in record.answer
    s = record.structured
    assert s is not None and s.totals()[0].value == 2722
    assert s.totals()[0].label == "buildings (destroyed) in total"  # values are labelled for machines, in English
    saved = _orchestrator(store).runlog.load_record(record.run_id)
    assert saved is not None and saved.language == language


COUNT_ALL = {
    "ledger": {"intent": "test", "disaster_event_id": 11},
    "plan": {
        "steps": [
            {
                "id": 1,
                "agent": "vector",
                "goal": "load",
                "tool": "load_event_layer",
                "args": {"event_id": 11, "role": "damage"},
                "inputs": {},
                "expected_output": "vector",
            },
            {
                "id": 2,
                "agent": "vector",
                "goal": "select",
                "tool": "select_damage",
                "args": {"damage_classes": ["destroyed"]},
                "inputs": {"damage": "step:1"},
                "expected_output": "vector",
            },
            {
                "id": 3,
                "agent": "vector",
                "goal": "count",
                "tool": "count",
                "args": {},
                "inputs": {"layer": "step:2"},
                "expected_output": "table",
            },
        ]
    },
}


def test_a_spanish_answer_not_answered_as_asked_says_so_in_spanish(store):
    """The plan counts destroyed buildings, the question asks for a share: the run is partial, and the
    banner, the part left out and the warning are in Spanish; the structured answer stays English."""
    orch = _orchestrator(store, {"planner": [COUNT_ALL, COUNT_ALL]}, mode="free")
    record = orch.run("¿Qué porcentaje de los edificios del incendio de Eaton fue destruido?")
    assert record.language == "es" and record.status == "partial", record.answer
    assert record.answer.startswith("**No se respondió a lo que se preguntó.**"), record.answer
    assert "- la medida pedida: proporción" in record.answer
    assert "Lo que se calculó en su lugar: " in record.answer
    assert "No lo use como respuesta." in record.answer and "2,722" in record.answer
    assert "Not answered as asked" not in record.answer
    assert record.structured is not None and any("the share asked for" in n for n in record.structured.not_applied)


def test_a_failed_question_says_so_in_its_language(store):
    record = _orchestrator(store).run("Combien de bâtiments ont été détruits ?", aoi_artifact_id="a_0000dead")
    assert record.status == "failed"
    assert record.answer.startswith("**Impossible de répondre à la question.**"), record.answer


def test_a_follow_up_is_answered_in_its_own_language_or_the_previous_one(store):
    orch = _orchestrator(store)
    first = orch.run("¿Cuántos edificios dañó el incendio de Eaton?")
    assert first.language == "es" and "3,051 en total" in first.answer, first.answer
    follow = orch.run("Now only the destroyed ones", previous=first)
    assert follow.follow_up_of == first.run_id and follow.language == "en"
    assert "2,722 in total" in follow.answer and "(reused)" in follow.answer, follow.answer
    again = orch.run("¿Y solo los destruidos?", previous=first)
    assert again.language == "es" and "2,722 en total" in again.answer and "(reutilizado)" in again.answer
    # no word says a language: the previous run's (here the planner fails, and says so in Spanish)
    bare = _orchestrator(store, {"planner": [{}] * 6}).run("500 m?", previous=first)
    assert bare.follow_up_of == first.run_id and bare.language == "es"
    assert bare.status != "failed" or bare.answer.startswith("**No se pudo responder a la pregunta.**"), bare.answer
