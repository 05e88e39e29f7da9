"""Structure types said in Spanish, French and Portuguese are read as the damage layers spell them in English
(``core/data/value_words.json``): "unifamiliares", "maisons individuelles", "de plain-pied", "térreas", "iglesias";
a storey count compared after its word ("de una planta o de más") and "par niveau" (per level, not a pair).
Counts are checked against the Palisades and Eaton DINS layers read with GeoPandas."""

from __future__ import annotations

import geopandas as gpd
import pytest

from geofaham_plugin.core.domain.value_words import in_data_words, value_words
from geofaham_plugin.core.engines.layers import data_dir, default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.prepass import normalise, prepass
from geofaham_plugin.core.planning.spec_read import spec_from_facts

SFR = ["Single Family Residence Multi Story", "Single Family Residence Single Story"]
ONE = "Single Family Residence Single Story"


def _types(question: str) -> list[str]:
    layers = default_catalogue()
    spec = spec_from_facts(prepass(question, layers=layers), layers=layers).specs[0]
    return sorted(v for vs in spec.subject.filters.values() for v in vs)


@pytest.mark.parametrize(
    ("question", "types"),
    [
        ("¿Cuántas viviendas unifamiliares destruyó el incendio de Palisades?", SFR),
        ("Palisades : combien de maisons individuelles de plain-pied ont brûlé entièrement ?", [ONE]),
        ("Casas unifamiliares térreas destruídas nas Palisades: quantas?", [ONE]),
        ("¿Cuántas iglesias destruyó el incendio de Palisades?", ["Church"]),
        ("Eaton : maisons mobiles détruites, combien ?", ["Mobile Home Double Wide", "Mobile Home Single Wide"]),
        (
            "Eaton: edificios comerciales de una planta o de más destruidos",
            ["Commercial Building Multi Story", "Commercial Building Single Story"],
        ),
        ("Eaton, maisons individuelles : combien par niveau de dégâts ?", SFR),  # "par niveau": per level
        (  # one storey or several: every storey count
            "Eaton: viviendas unifamiliares de una planta o de varias, ¿cuántas destruidas?",
            SFR,
        ),
    ],
)
def test_a_structure_type_said_in_another_language_is_the_data_s(question, types):
    assert _types(question) == sorted(types)


def test_every_phrase_is_normalised_and_says_one_type():
    seen: dict[str, str] = {}
    for english, said in value_words().items():
        assert english == normalise(english).strip()
        for phrase in said:
            assert phrase == normalise(phrase).strip() and phrase not in seen, phrase
            seen[phrase] = english
    assert in_data_words("las casas unifamiliares") == "las casas single family"
    assert in_data_words("zone pavillonnaire") == "zone pavillonnaire"  # a word inside another is no phrase


def test_single_storey_single_family_homes_destroyed_counted_from_the_data(tmp_path):
    from geofaham_plugin.core.store.store import ResponseStore

    layer = default_catalogue().find(event_id=14, role="damage")[0]
    dins = gpd.read_file(data_dir() / layer.path)
    expected = int(((dins.STRUCTURETYPE == ONE) & (dins.DAMAGE == "Destroyed (>50%)")).sum())
    store = ResponseStore(tmp_path / "session")
    try:
        question = "Palisades: casas unifamiliares de una sola planta destruidas, ¿cuántas son?"
        record = Orchestrator(store, LLM(ScriptedModel({}))).run(question)
    finally:
        store.close()
    assert record.status == "answered", record.answer
    assert f"{expected:,}" in record.answer
