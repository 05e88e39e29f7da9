"""The structured answer: the real orchestrator (scripted model, real store, real engines) states each value
with its label, group and artifact, the named items of a list answer, the yes/no of a yes/no question, and
for a partial run the parts not applied; the answer text states the same numbers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from geofaham_plugin.core.config import settings_from_env
from geofaham_plugin.core.engines.db import open_engine
from geofaham_plugin.core.engines.db.loaders import load_samples
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.answer import StructuredAnswer
from geofaham_plugin.core.orchestrator.events import AnswerEvent
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator, OrchestratorConfig
from geofaham_plugin.core.orchestrator.runlog import RunLog, RunRecord
from geofaham_plugin.core.orchestrator.synthesis import asks_yes_no, table_finding
from geofaham_plugin.core.store.store import ResponseStore

EATON_Q = "Which hospitals are within 5 km of the Eaton fire perimeter?"
NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")
ARTIFACT = re.compile(r"\ba_[0-9a-f]{8}\b")


def orchestrator(store, script, **config):
    events = []
    orch = Orchestrator(store, LLM(ScriptedModel(script)), config=OrchestratorConfig(**config), on_event=events.append)
    return orch, events


def step(id_: int, tool: str, args: dict, inputs: dict | None = None, out: str = "vector") -> dict:
    return {
        "id": id_,
        "agent": "vector",
        "goal": tool,
        "tool": tool,
        "args": args,
        "inputs": inputs or {},
        "expected_output": out,
    }


def free(*steps: dict) -> dict:
    return {"ledger": {"intent": "test", "disaster_event_id": 11}, "plan": {"steps": list(steps)}}


LOAD_DAMAGE = step(1, "load_event_layer", {"event_id": 11, "role": "damage"})
DESTROYED = free(
    LOAD_DAMAGE,
    step(2, "select_damage", {"damage_classes": ["destroyed"]}, {"damage": "step:1"}),
    step(3, "count", {}, {"layer": "step:2"}, out="table"),
)


def text_numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in NUMBER.findall(ARTIFACT.sub("", text))]


def assert_text_states_every_value(answer: str, structured: StructuredAnswer) -> None:
    numbers = text_numbers(answer)
    for value in structured.values:
        assert any(abs(n - value.value) <= 0.05 for n in numbers), f"{value.label} = {value.value} not in the text"
    for item in structured.items[:12]:  # the text's table shows the first 12 items
        assert item.name in answer
        if item.distance_m is not None:
            assert any(abs(n - item.distance_m) <= 0.05 for n in numbers), item


def saved(store: ResponseStore, record: RunRecord) -> StructuredAnswer:
    loaded = RunLog(store.session_dir).load_record(record.run_id)
    assert loaded is not None and loaded.structured is not None
    return loaded.structured


# ------------------------------------------------------------------------------------ list answer
def test_a_list_answer_states_the_count_and_the_ranked_items(store):
    orch, events = orchestrator(store, {})
    record = orch.run(EATON_Q)
    assert record.status == "answered", record.answer
    s = record.structured
    assert s is not None and s.status == "answered" and s.yes_no is None and s.not_applied == []
    final = record.cited_artifacts[0]
    assert s.cited == record.cited_artifacts
    (count,) = s.values
    assert count.value == 7 and count.measure == "count" and count.unit == "count" and count.group is None
    assert count.label == "healthcare features within 5,000 m" and count.subject == "healthcare"
    assert count.artifact_id == final
    assert len(s.items) == 7 and [i.rank for i in s.items] == list(range(1, 8))
    assert s.items[0].name == "AURORA LAS ENCINAS HOSPITAL" and abs(s.items[0].distance_m - 2090) < 15
    distances = [i.distance_m for i in s.items]
    assert distances == sorted(distances) and distances[-1] <= 5000
    assert all(i.artifact_id == final for i in s.items)
    assert_text_states_every_value(record.answer, s)
    assert saved(store, record) == s  # in the run record
    answer_event = events[-1].payload
    assert isinstance(answer_event, AnswerEvent) and answer_event.structured == s  # with the answer event


# ------------------------------------------------------------------------------------ grouped counts
def test_a_count_by_damage_class_states_the_total_and_each_class(store):
    by_class = free(LOAD_DAMAGE, step(2, "count", {"by": "damage_class"}, {"layer": "step:1"}, out="table"))
    orch, _ = orchestrator(store, {"planner": [by_class]}, mode="free")
    record = orch.run("How many Eaton structures were there, by damage class?")
    assert record.status == "answered", record.answer
    s = record.structured
    assert s is not None
    (total,) = s.totals()
    assert total.value == 5805 and total.label == "buildings in total" and total.subject == "buildings"
    by = s.by_group("damage_class")
    assert by == {"none": 2754, "destroyed": 2722, "affected": 267, "minor": 41, "major": 21}
    assert sum(by.values()) == total.value
    assert all(v.group_field == "damage_class" for v in s.values if v.group is not None)
    assert s.yes_no is None and s.items == []
    assert_text_states_every_value(record.answer, s)


def test_a_count_by_a_field_states_one_value_per_group(store):
    by_type = free(LOAD_DAMAGE, step(2, "count", {"by": "STRUCTURETYPE"}, {"layer": "step:1"}, out="table"))
    orch, _ = orchestrator(store, {"planner": [by_type]}, mode="free")
    record = orch.run("How many Eaton structures are there by STRUCTURETYPE?")
    assert record.status == "answered", record.answer
    s = record.structured
    assert s is not None and s.totals()[0].value == 5805
    by = s.by_group("STRUCTURETYPE")
    assert by["Single Family Residence Single Story"] == 3117 and by["School"] == 70
    assert s.by_group("damage_class") == {}
    # every group of the breakdown is stated (the Eaton layer has more types than a short table shows)
    table = store.read_table(record.cited_artifacts[0])
    assert len(table) > 12 and len(by) == len(table) and sum(by.values()) == 5805
    assert_text_states_every_value(record.answer, s)


# ------------------------------------------------------------------------------------ yes / no
def test_an_english_yes_no_question_states_yes_and_no(store):
    orch, _ = orchestrator(store, {})
    yes = orch.run("Are there hospitals within 5 km of the Eaton fire perimeter?")
    assert yes.status == "answered" and yes.structured is not None
    assert yes.structured.yes_no is True and yes.answer.startswith("**Yes.**")
    assert yes.structured.values[0].value == 7
    no = orch.run("Are there hospitals within 100 m of the Eaton fire perimeter?")
    assert no.status == "answered" and no.structured is not None
    assert no.structured.yes_no is False and no.answer.startswith("**No.**")
    assert no.structured.values[0].value == 0 and no.structured.items == []
    assert_text_states_every_value(no.answer, no.structured)


def test_a_spanish_yes_no_question_states_yes(store):
    orch, _ = orchestrator(store, {"planner": [DESTROYED]}, mode="free")
    record = orch.run("¿Hay edificios destruidos por el incendio Eaton?")
    assert record.status == "answered", record.answer
    s = record.structured
    assert s is not None and s.yes_no is True and record.answer.startswith("**Sí.**")  # in the question's language
    assert s.totals()[0].value == 2722 and s.totals()[0].label == "buildings (destroyed) in total"
    assert_text_states_every_value(record.answer, s)


@pytest.mark.parametrize(
    ("question", "yes_no"),
    [
        ("Are there hospitals within 1 km?", True),
        ("Is any school inside the flood?", True),
        ("Does the flood reach the hospital?", True),
        ("Did any building burn?", True),
        ("Were there destroyed homes?", True),
        ("Can ambulances reach it?", True),
        ("And are there any schools?", True),
        ("¿Hay hospitales a 5 km?", True),
        ("¿Existe algún refugio?", True),
        ("Y a-t-il des hôpitaux à 1 km ?", True),
        ("Est-ce que des écoles sont inondées ?", True),
        ("Há hospitais a 5 km?", True),
        ("Existem escolas na área?", True),
        ("Which hospitals are within 5 km?", False),
        ("How many buildings were destroyed?", False),
        ("¿Cuántos edificios fueron destruidos?", False),
        ("Combien de bâtiments ?", False),
        ("E quantos hospitais?", False),
        ("Esta zona, cuántos?", False),
    ],
)
def test_yes_no_questions_in_four_languages(question, yes_no):
    assert asks_yes_no(question) is yes_no


def test_a_count_question_has_no_yes_no(store):
    orch, _ = orchestrator(store, {"planner": [DESTROYED]}, mode="free")
    record = orch.run("How many Eaton structures were destroyed?")
    assert record.structured is not None and record.structured.yes_no is None
    assert not record.answer.startswith("**Yes")


# ------------------------------------------------------------------------------------ partial
def test_a_partial_answer_keeps_its_values_but_names_what_was_not_applied(store):
    orch, events = orchestrator(store, {"planner": [DESTROYED, DESTROYED]}, mode="free")
    record = orch.run("Are there destroyed buildings outside the Eaton fire perimeter?")
    assert record.status == "partial"
    s = record.structured
    assert s is not None and s.status == "partial"
    assert s.yes_no is None  # the count answers a different question: no yes/no is stated
    assert s.not_applied == ["the relation 'outside' (\"outside\")"]
    assert s.totals()[0].value == 2722  # computed, but not the answer
    assert "**Yes" not in record.answer and "**No." not in record.answer
    assert_text_states_every_value(record.answer, s)
    assert saved(store, record).not_applied == s.not_applied
    assert events[-1].payload.structured == s


def test_a_failed_run_states_no_values(store):
    orch, _ = orchestrator(store, {"planner": ["not json"] * 5}, always_ask_model=True)
    record = orch.run("Are there shelters near the flood in Valencia?")
    assert record.status == "failed"
    assert record.structured is not None and record.structured.status == "failed"
    assert record.structured.values == [] and record.structured.yes_no is None


# ------------------------------------------------------------------------------------ model phrasing
def test_a_model_phrasing_that_drops_a_stated_value_is_not_used(store):
    by_class = free(LOAD_DAMAGE, step(2, "count", {"by": "damage_class"}, {"layer": "step:1"}, out="table"))
    drops = {"markdown": "Eaton: 5,805 structures in total, 2,722 destroyed."}  # the other classes left out
    orch, _ = orchestrator(store, {"planner": [by_class] + [drops] * 4}, mode="free", model_synthesis=True)
    record = orch.run("How many Eaton structures were there, by damage class?")
    assert record.status == "answered"
    assert record.answer != drops["markdown"] and "| minor | 41 |" in record.answer  # the verified answer
    assert record.structured is not None
    assert_text_states_every_value(record.answer, record.structured)


def test_a_model_phrasing_that_states_every_value_is_used(store):
    phrased = {"markdown": "2,722 Eaton structures were destroyed."}
    orch, _ = orchestrator(store, {"planner": [DESTROYED, phrased]}, mode="free", model_synthesis=True)
    record = orch.run("How many Eaton structures were destroyed?")
    assert record.answer == "2,722 Eaton structures were destroyed."
    assert record.structured is not None and record.structured.totals()[0].value == 2722


# ------------------------------------------------------------------------------------ tables
def test_a_sum_table_states_sums(store):
    table = pd.DataFrame({"value": ["A", "B"], "sum": [1234.4, 56.25], "count": [3, 2]})
    record = store.register_table(
        table, source="vector.sum_by", summary="beds", extra={"by": "district", "field": "beds", "total_sum": 1290.65}
    )
    finding = table_finding(store, record)
    total = next(v for v in finding.values if v.group is None)
    assert total.measure == "sum" and total.value == 1291 and total.label == "sum of beds"
    assert {v.group: v.value for v in finding.values if v.group} == {"A": 1234, "B": 56.2}
    assert "1,291" in finding.headline and "| A | 1,234 | 3 |" in finding.detail


def test_free_sql_states_values_only_for_a_clear_numeric_column(store):
    one = store.register_table(pd.DataFrame({"n_destroyed": [2722]}), source="vector.sql_table:spatialite", summary="")
    (value,) = table_finding(store, one).values
    assert value.value == 2722 and value.measure == "count" and value.label == "n_destroyed"
    grouped = pd.DataFrame({"kind": ["a", "b"], "area_m2": [10.5, 20.0]})
    rows = table_finding(store, store.register_table(grouped, source="vector.sql_table:spatialite", summary=""))
    assert {v.group: v.value for v in rows.values} == {"a": 10.5, "b": 20.0}
    assert all(v.measure == "value" and v.group_field == "kind" for v in rows.values)
    wide = pd.DataFrame({"id": [1, 2], "x": [1.0, 2.0], "y": [3.0, 4.0]})
    assert (
        table_finding(store, store.register_table(wide, source="vector.sql_table:spatialite", summary="")).values == []
    )


@pytest.fixture(scope="module")
def db_settings(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    settings = settings_from_env({"GEOFAHAM_CACHE": str(cache)})  # the embedded engine
    with open_engine(settings=settings) as engine:
        engine.init()
        load_samples(engine, only=["eaton_perimeter", "eaton_dins"])
    return settings


def test_damage_by_class_states_per_class_values(tmp_path, db_settings):
    store = ResponseStore(tmp_path / "s")
    plan = free(step(1, "damage_by_class", {"event_id": 11}, out="table"))
    orch = Orchestrator(
        store, LLM(ScriptedModel({"planner": [plan]})), settings=db_settings, config=OrchestratorConfig(mode="free")
    )
    record = orch.run("How many Eaton buildings by damage class?")
    assert record.status == "answered", record.answer
    s = record.structured
    assert s is not None and s.totals()[0].value == 5431 and s.totals()[0].subject == "buildings"
    by = s.by_group("damage_class")
    assert sum(by.values()) == 5431 and by["destroyed"] > 0
    assert_text_states_every_value(record.answer, s)


# ------------------------------------------------------------------------------------ old records
def test_an_old_run_record_without_structured_still_loads(tmp_path):
    from conftest import ROOT

    old = json.loads((ROOT / "tests" / "helpers" / "run_record_2026_11.json").read_text())
    assert "structured" not in old
    record = RunRecord.model_validate(old)
    assert record.structured is None and record.status == "answered"


# ------------------------------------------------------------------------------------ export and CLI
def test_export_writes_the_structured_answer(store, tmp_path):
    from geofaham_plugin.core.export import export_run

    orch, _ = orchestrator(store, {})
    record = orch.run(EATON_Q)
    out = export_run(store, record.run_id, tmp_path / "share")
    exported = StructuredAnswer.model_validate_json((out / "structured_answer.json").read_text())
    assert exported == record.structured and exported.items[0].name == "AURORA LAS ENCINAS HOSPITAL"
    assert "structured_answer.json" in (out / "README.md").read_text()
    assert json.loads((out / "run.json").read_text())["structured"]["values"][0]["value"] == 7


def test_cli_ask_json_prints_the_structured_answer(tmp_path):
    import subprocess
    import sys

    from conftest import ROOT

    out = subprocess.run(
        [sys.executable, "-m", "geofaham_plugin", "ask", EATON_Q, "--json", "--session", str(tmp_path / "s")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    printed = json.loads(out.stdout)
    structured = StructuredAnswer.model_validate(printed["structured"])
    assert structured.status == "answered" and structured.values[0].value == 7 and len(structured.items) == 7
    assert "7 healthcare features within 5,000 m" in printed["answer"]
    assert json.loads(Path(printed["run_record"]).read_text())["run_id"] == printed["run_id"]
