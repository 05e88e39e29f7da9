"""The run log of a session: typed run records, saved state, memo, listing and last run, all through
one module; atomic writes that survive a process killed mid-write; records of older releases load."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import ROOT
from helpers.runlog_crash_child import version
from pydantic import ValidationError

from geofaham_plugin.core.domain.names import AgentName
from geofaham_plugin.core.llm import CallRecord, UsageLedger
from geofaham_plugin.core.orchestrator.ledgers import Failure, StepStatus
from geofaham_plugin.core.orchestrator.runlog import (
    RunLog,
    RunNotFound,
    RunRecord,
    RunUsage,
    StepRecord,
    atomic_write_text,
    memo_key,
)

CHILD = ROOT / "tests" / "helpers" / "runlog_crash_child.py"
OLD_RECORD = ROOT / "tests" / "helpers" / "run_record_2026_11.json"
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def a_run(run_id: str, *, started: int, finished: int | None, status: str = "answered") -> RunRecord:
    usage = UsageLedger()
    usage.add(CallRecord(role="planner", step="plan1", model="scripted", prompt_tokens=812, completion_tokens=40))
    usage.add(CallRecord(role="vector", step="step2", model="scripted", prompt_tokens=300, completion_tokens=12))
    return RunRecord(
        run_id=run_id,
        question=f"question of {run_id}",
        status=status,
        started_at=T0 + timedelta(minutes=started),
        finished_at=T0 + timedelta(minutes=finished) if finished is not None else None,
        steps=[
            StepRecord(
                plan_index=1,
                step_id=1,
                agent=AgentName.vector,
                tool="load_event_layer",
                args={"event_id": 11},
                status=StepStatus.done,
                artifact_id="a_0000aaaa",
                seconds=0.4,
            ),
            StepRecord(
                plan_index=1,
                step_id=2,
                agent=AgentName.maps,
                tool="get_features",
                inputs={"aoi": "a_0000aaaa"},
                status=StepStatus.failed,
                failure=Failure(step_id=2, check="tool", kind="empty", message="none"),
            ),
        ],
        answer="**7** features" if finished is not None else "",
        usage=RunUsage.from_ledger(usage),
    )


# ----------------------------------------------------------------------------------------- round trip
def test_round_trip_write_list_load_last_resume_state_and_memo(tmp_path):
    log = RunLog(tmp_path / "session")
    assert log.runs() == [] and log.last_run() is None and log.memo() == {} and log.load("r_00000001") is None
    assert not log.runs_dir.exists()  # reading creates nothing

    running = a_run("r_00000001", started=0, finished=None, status="running")
    assert log.save_state(running) == tmp_path / "session" / "runs" / "r_00000001.state.json"
    assert log.load_state("r_00000001") == running and log.load("r_00000001") == running
    assert log.finished_runs() == [] and [r.run_id for r in log.runs()] == ["r_00000001"]
    with pytest.raises(RunNotFound):
        log.load_record("r_00000001")

    first = a_run("r_00000001", started=0, finished=9)
    path = log.save_record(first)
    assert path == log.record_path("r_00000001") == tmp_path / "session" / "runs" / "r_00000001.json"
    assert log.load_record("r_00000001") == first and log.load_state("r_00000001") == first  # state matches
    assert json.loads(path.read_text())["usage"]["totals"]["planner"] == {"prompt": 812, "completion": 40, "calls": 1}

    # a run that started later but finished earlier, and one still running (state only)
    second = a_run("r_00000002", started=1, finished=3)
    log.save_record(second)
    log.save_state(a_run("r_00000003", started=10, finished=None, status="running"))

    assert [r.run_id for r in log.runs()] == ["r_00000001", "r_00000002", "r_00000003"]  # by start
    assert [r.run_id for r in log.runs(exclude={"r_00000001"})] == ["r_00000002", "r_00000003"]
    assert [r.run_id for r in log.finished_runs()] == ["r_00000002", "r_00000001"]  # by finish
    assert log.last_run() == first  # finished last, although written before the second
    reopened = RunLog(tmp_path / "session")
    assert reopened.last_run() == first and reopened.load("r_00000003").status == "running"
    assert reopened.load_record("r_00000002").usage.total().prompt == 1112
    step = reopened.load_record("r_00000002").steps[1]
    assert step.agent is AgentName.maps and step.status is StepStatus.failed and step.failure.kind == "empty"

    key = memo_key("buffer", {"distance_m": 500}, {"layer": "a_0000aaaa", "aoi": "a_0000bbbb"})
    assert key == memo_key("buffer", {"distance_m": 500}, {"aoi": "a_0000bbbb", "layer": "a_0000aaaa"})
    assert log.recall(key) is None
    log.remember(key, "a_0000cccc")
    log.remember(memo_key("count", {}, {"layer": "a_0000cccc"}), "a_0000dddd")
    assert reopened.recall(key) == "a_0000cccc" and len(reopened.memo()) == 2
    # nothing but the records, the states, the memo and its lock file in the folder (no temporary files left)
    assert sorted(p.name for p in log.runs_dir.iterdir()) == [
        "memo.json",
        "memo.lock",
        "r_00000001.json",
        "r_00000001.state.json",
        "r_00000002.json",
        "r_00000002.state.json",
        "r_00000003.state.json",
    ]


def test_memo_keys_match_the_ones_older_releases_wrote():
    """Memo files written before the run log existed keep working: the signature is the same string."""
    assert (
        memo_key("buffer", {"distance_m": 500}, {"layer": "a_0000aaaa"})
        == '["buffer", {"distance_m": 500}, {"layer": "a_0000aaaa"}]'
    )


def test_orchestrator_runs_go_through_the_run_log(store):
    from geofaham_plugin.core.llm import LLM, ScriptedModel
    from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator

    orch = Orchestrator(store, LLM(ScriptedModel({})))
    first = orch.run("How many buildings were damaged in the Eaton fire?")
    follow = orch.run("Now only the destroyed ones", previous=orch.last_run())
    log = RunLog(store.session_dir)
    assert [r.run_id for r in log.finished_runs()] == [first.run_id, follow.run_id]
    assert log.last_run() == follow == log.load_state(follow.run_id)
    assert log.load_record(first.run_id) == first
    # the follow-up's first step was recalled from the memo that the first run wrote
    assert follow.steps[0].reused and follow.steps[0].artifact_id in log.memo().values()
    assert all(artifact_id in store for artifact_id in log.memo().values())


def test_unreadable_files_are_skipped_when_listing_and_fail_when_loaded(tmp_path, caplog):
    log = RunLog(tmp_path)
    log.save_record(a_run("r_00000001", started=0, finished=1))
    log.record_path("r_0000bad0").write_text('{"run_id": "r_0000bad0", "question": ')  # cut off
    log.memo_path.write_text("[1, 2")
    (log.runs_dir / "notes.json").write_text("{}")  # not a run
    assert [r.run_id for r in log.runs()] == ["r_00000001"]
    assert "r_0000bad0.json" in caplog.text
    with pytest.raises(ValueError):
        log.load_record("r_0000bad0")
    assert log.memo() == {}  # a broken memo only costs recomputation


def test_run_ids_are_checked_before_they_become_paths(tmp_path):
    log = RunLog(tmp_path)
    for bad in ("../../etc/passwd", "r_../x", "", "memo"):
        with pytest.raises(ValueError):
            log.record_path(bad)
    with pytest.raises(ValidationError):
        RunRecord(run_id="r_a/b", question="q")


# -------------------------------------------------------------------------------------------- old format
def test_a_run_record_of_an_older_release_loads(tmp_path):
    """A record written before follow-ups existed (no ``follow_up_of``, no ``reused``; ``agent`` and
    ``usage`` as plain JSON) loads, lists, counts as the last run, and exports."""
    log = RunLog(tmp_path)
    run_id = json.loads(OLD_RECORD.read_text())["run_id"]
    log.runs_dir.mkdir()
    shutil.copy(OLD_RECORD, log.record_path(run_id))
    record = log.load_record(run_id)
    assert "follow_up_of" not in OLD_RECORD.read_text() and '"reused"' not in OLD_RECORD.read_text()
    assert record.status == "answered" and record.follow_up_of is None
    assert [s.agent for s in record.steps] == [AgentName.vector, AgentName.maps, AgentName.vector]
    assert not any(s.reused for s in record.steps) and all(s.status is StepStatus.done for s in record.steps)
    assert record.plans[0].template == "features_near_hazard" and record.plans[0].ledger.disaster_event_id == 11
    assert record.usage.totals["planner"].calls == 1 and record.usage.calls[0].role == "planner"
    assert "7 healthcare features" in record.answer
    assert log.last_run() == record and log.finished_runs() == [record]
    # re-saving it writes today's format, which loads to the same record
    log.save_record(record)
    assert log.load_record(run_id) == record and '"reused": false' in log.record_path(run_id).read_text()


# ------------------------------------------------------------------------------------------ crash safety
def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def spawn(session: Path, run_id: str, mode: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(CHILD), str(session), run_id, mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
        cwd=ROOT,
    )


def test_a_process_killed_between_write_and_replace_leaves_the_old_record(tmp_path):
    log = RunLog(tmp_path / "s")
    old = version("r_0000c0de", 1)
    log.save_record(old)
    before = log.record_path("r_0000c0de").read_bytes()
    child = spawn(tmp_path / "s", "r_0000c0de", "stall")
    try:
        line = child.stdout.readline().split()
        assert line and line[0] == "written", child.stderr.read()
        tmp = Path(line[1])
        # the new version is complete and on disk, beside the record, under a name no listing reads
        assert tmp.parent == log.runs_dir and tmp.name.startswith(".") and tmp.name.endswith(".tmp")
        assert RunRecord.model_validate_json(tmp.read_text()) == version("r_0000c0de", 2)
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
    assert log.record_path("r_0000c0de").read_bytes() == before
    assert log.load_record("r_0000c0de") == old == log.last_run() and log.run_ids() == ["r_0000c0de"]


def test_records_and_memo_survive_kills_at_random_moments(tmp_path):
    log = RunLog(tmp_path / "s")
    log.save_record(version("r_0000c0de", 1))
    rng = random.Random(7)
    seen, mid_write = set(), 0
    server = spawn(tmp_path / "s", "r_0000c0de", "writers")
    stdin = server.stdin

    def until(prefix: str) -> list[str]:
        lines = []
        while not (lines and lines[-1].startswith(prefix)):
            line = server.stdout.readline()
            assert line, server.stderr.read()
            lines.append(line)
        return lines

    try:
        # The kills land at random moments; on a loaded machine fewer of them land mid-write, so the
        # rounds go on (bounded) until both kinds of moment were hit, rather than a fixed count.
        for round_ in range(60):
            if round_ >= 12 and len(seen) > 3 and mid_write >= 3:
                break
            stdin.write(f"{2 + 5 * round_}\n")
            stdin.flush()
            lines = until("writer")
            writer = int(lines[-1].split()[1])
            if not any(line.startswith("saved") for line in lines):
                until("saved")
            time.sleep(rng.uniform(0.0, 0.3))
            os.kill(writer, signal.SIGKILL)
            until("reaped")
            leftovers = list(log.runs_dir.glob(".*.tmp"))  # the writer died mid-write: its temporary file
            mid_write += bool(leftovers)
            for tmp in leftovers:
                tmp.unlink()
            for load in (log.load_record, log.load_state):
                record = load("r_0000c0de")  # always one whole version, never a mix or a part
                n = int(record.answer.split()[1])
                assert record == version("r_0000c0de", n)
                seen.add(n)
            memo = log.memo()
            assert memo and all(v == f"a_{int(k.split()[1]):08x}" for k, v in memo.items())
    finally:
        server.kill()
        server.wait(10)
    assert len(seen) > 3  # the kills landed on different versions ...
    assert mid_write >= 3  # ... and often in the middle of writing one


def test_atomic_write_cleans_up_when_the_write_fails(tmp_path, monkeypatch):
    path = tmp_path / "runs" / "r_00000001.json"
    atomic_write_text(path, "old")

    def broken(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_text(path, "new")
    assert path.read_text() == "old" and [p.name for p in path.parent.iterdir()] == ["r_00000001.json"]
