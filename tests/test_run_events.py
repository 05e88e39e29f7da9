"""Run events are typed: every kind has its own payload model, the orchestrator emits them, and an
event survives a JSON round trip as the same payload class."""

from __future__ import annotations

import threading
import typing

from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator import events as ev
from geofaham_plugin.core.orchestrator.ledgers import Failure
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator, OrchestratorConfig
from geofaham_plugin.core.planning.plan import Plan, PlanStep, TaskLedger
from geofaham_plugin.core.store.models import ArtifactRecord

EATON_Q = "Which hospitals are within 5 km of the Eaton fire perimeter?"


def payload_classes() -> dict[str, type]:
    union = typing.get_args(ev.RunEventPayload)[0]
    return {cls.model_fields["kind"].default: cls for cls in typing.get_args(union)}


def test_every_event_kind_has_its_own_payload_model():
    kinds = set(typing.get_args(ev.EventKind))
    assert kinds == {
        "ledger",
        "plan",
        "step_started",
        "step_finished",
        "artifact",
        "check_failed",
        "replan",
        "answer",
        "error",
        "cancelled",
    }
    classes = payload_classes()
    assert set(classes) == kinds and len(set(classes.values())) == len(kinds)


def test_an_event_round_trips_through_json_as_its_own_class():
    step = PlanStep(id=1, agent="vector", goal="load", tool="load_event_layer", expected_output="vector")
    samples = [
        ev.LedgerEvent(ledger=TaskLedger(intent="t", disaster_event_id=11)),
        ev.PlanEvent(plan=Plan(steps=[step]), mode="guided", template="count_damage", index=1),
        ev.StepStartedEvent(step=1, agent="vector", tool="buffer", goal="g", inputs={"layer": "a_0000aaaa"}),
        ev.StepFinishedEvent(step=1, status="done", artifact_id="a_0000aaaa", reused=True),
        ev.CheckFailedEvent(step=2, failure=Failure(step_id=2, check="input_validity", message="m")),
        ev.ReplanEvent(failures=["step 2: ..."], replans=1),
        ev.AnswerEvent(answer="a", status="partial", record="/tmp/r.json", cited=["a_0000aaaa"]),
        ev.ErrorEvent(message="boom", error_type="ToolFailed"),
        ev.CancelledEvent(),
    ]
    for payload in samples:
        event = ev.RunEvent(run_id="r_00000001", payload=payload)
        back = ev.RunEvent.model_validate_json(event.model_dump_json())
        assert type(back.payload) is type(payload) and back == event and back.type == payload.kind
    assert ev.StepFinishedEvent(step=1, status="done", reused=True).shown_status == "reused"
    assert ev.StepFinishedEvent(step=1, status="failed").shown_status == "failed"


def test_the_orchestrator_emits_typed_payloads(store):
    events: list[ev.RunEvent] = []
    choice = {"template": "features_near_hazard", "feature_class": "healthcare", "distance_m": 5000}
    orch = Orchestrator(
        store,
        LLM(ScriptedModel({"planner": [choice]})),
        on_event=events.append,
        config=OrchestratorConfig(always_ask_model=True),
    )
    record = orch.run(EATON_Q)
    assert record.status == "answered"
    assert [e.type for e in events] == ["ledger", "plan"] + ["step_started", "artifact", "step_finished"] * 3 + [
        "answer"
    ]
    ledger, plan = events[0].payload, events[1].payload
    assert isinstance(ledger, ev.LedgerEvent) and ledger.ledger.disaster_event_id == 11
    assert isinstance(plan, ev.PlanEvent) and plan.template == "features_near_hazard" and plan.index == 1
    assert [s.id for s in plan.plan.steps] == [1, 2, 3]
    started = [e.payload for e in events if isinstance(e.payload, ev.StepStartedEvent)]
    assert [s.tool for s in started] == [s.tool for s in record.steps] and started[1].inputs == record.steps[1].inputs
    artifacts = [e.payload.artifact for e in events if isinstance(e.payload, ev.ArtifactEvent)]
    assert all(isinstance(a, ArtifactRecord) for a in artifacts)
    assert [a.id for a in artifacts] == [s.artifact_id for s in record.steps]
    answer = events[-1].payload
    assert isinstance(answer, ev.AnswerEvent) and answer.status == "answered" and answer.cited == record.cited_artifacts
    assert answer.record == str(orch.runlog.record_path(record.run_id))
    assert {e.run_id for e in events} == {record.run_id}


def test_failures_errors_and_cancellation_are_typed_events(store):
    events: list[ev.RunEvent] = []
    orch = Orchestrator(store, LLM(ScriptedModel({})), on_event=events.append)
    orch.run(EATON_Q, aoi_artifact_id="a_12345678")
    error = next(e.payload for e in events if e.type == "error")
    assert isinstance(error, ev.ErrorEvent) and error.error_type == "ToolFailed" and "a_12345678" in error.message

    events.clear()
    cancel = threading.Event()
    orch = Orchestrator(
        store,
        LLM(ScriptedModel({})),
        cancel=cancel,
        on_event=lambda e: (events.append(e), e.type == "step_finished" and cancel.set()),
    )
    record = orch.run(EATON_Q)
    assert record.status == "cancelled"
    assert [type(e.payload) for e in events[-2:]] == [ev.CancelledEvent, ev.AnswerEvent]

    events.clear()
    tornado = {
        "ledger": {"intent": "t", "disaster_event_id": 1},
        "plan": {
            "steps": [
                {
                    "id": 1,
                    "agent": "vector",
                    "goal": "load",
                    "tool": "load_event_layer",
                    "args": {"event_id": 1, "role": "hazard"},
                    "expected_output": "vector",
                }
            ]
        },
    }
    script = {"planner": [tornado, tornado], "progress": [{"action": "replan", "reason": "again"}]}
    orch = Orchestrator(
        store, LLM(ScriptedModel(script)), on_event=events.append, config=OrchestratorConfig(mode="free")
    )
    orch.run("Which buildings were hit by the St. Louis tornado?")
    failed = next(e.payload for e in events if e.type == "check_failed")
    assert isinstance(failed, ev.CheckFailedEvent) and isinstance(failed.failure, Failure) and failed.step == 1
    assert "no hazard layer" in failed.failure.message
    replan = next(e.payload for e in events if e.type == "replan")
    assert isinstance(replan, ev.ReplanEvent) and replan.replans == 1 and "no hazard layer" in replan.failures[0]
