"""Adversarial cases against GeoFaham's lifecycle (issue 15): a process killed with -9 while the model
server is up (the server and its folder must go), stale server folders, a run killed mid-way (listed
as interrupted, resumed to completion with `ask --resume`), and the run deadline ending a run cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import ROOT

from geofaham_plugin.core.domain.files import lock
from geofaham_plugin.core.llm.embedded import FOLDER_PREFIX, OWNER_LOCK, remove_stale_folders

OWNER_CHILD = ROOT / "tests" / "helpers" / "server_owner_child.py"
# the children are real processes with the real embedded model; what they test is their lifecycle, so the question
# is read by code alone (the model's reading of it is tested in test_reading_model.py)
CHILD_ENV = os.environ | {"PYTHONPATH": str(ROOT), "GEOFAHAM_MODEL_READING": "0"}


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def gone_within(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.1)
    return False


def start_owner(kind: str, *extra: str, timeout: float = 120) -> tuple[subprocess.Popen, int, int, Path]:
    proc = subprocess.Popen(
        [sys.executable, str(OWNER_CHILD), kind, *extra],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=CHILD_ENV,
    )
    line = ""
    deadline = time.monotonic() + timeout
    while not line.startswith("up") and time.monotonic() < deadline and proc.poll() is None:
        line = proc.stdout.readline()
    assert line.startswith("up"), proc.stderr.read() if proc.poll() is not None else "no 'up' line"
    _, wrapper, server, folder, _port = line.split()
    return proc, int(wrapper), int(server), Path(folder)


# ---------------------------------------------------------------------------------- the model server
@pytest.mark.parametrize("started_from", ["main thread", "worker thread"])
def test_a_process_killed_with_9_takes_its_model_server_and_folder_along(started_from):
    extra = ("thread",) if started_from == "worker thread" else ()
    proc, wrapper, server, folder = start_owner("dummy", *extra)
    try:
        assert alive(wrapper) and alive(server) and (folder / OWNER_LOCK).exists()
        if extra:  # the worker thread that started it has ended: the server must still be up
            time.sleep(1.0)
            assert alive(server) and alive(wrapper)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert gone_within([server, wrapper], 10), "the model server outlived its owner"
        assert not folder.exists()
    finally:
        for pid in (server, wrapper):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_killed_wrapper_takes_the_server_along():
    """The server's own parent-death signal: the wrapper killed with -9 (no chance to clean up)."""
    proc, wrapper, server, folder = start_owner("dummy")
    try:
        os.kill(wrapper, signal.SIGKILL)
        assert gone_within([server], 10)
        line = proc.stdout.readline()
        assert line.strip() == "server ended"  # the owner notices (and restarts on the next chat)
    finally:
        proc.kill()
        proc.wait(10)
        if alive(server):
            os.kill(server, signal.SIGKILL)


@pytest.mark.llm
@pytest.mark.slow
def test_the_real_llama_server_dies_with_a_cli_killed_with_9():
    from geofaham_plugin.core.config import settings_from_env

    if not settings_from_env().test_model_path.is_file():
        pytest.skip("the small test model is not installed (make setup)")
    proc, wrapper, server, folder = start_owner("smol", timeout=300)
    try:
        assert "llama_cpp.server" in Path(f"/proc/{server}/cmdline").read_text().replace("\0", " ")
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert gone_within([server, wrapper], 10), "the llama.cpp server outlived its owner"
        assert not folder.exists()
    finally:
        for pid in (server, wrapper):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_start_removes_folders_whose_owner_is_dead_and_keeps_live_ones(tmp_path):
    dead = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir=tmp_path))
    (dead / OWNER_LOCK).touch()
    (dead / "server.log").write_text("left by a process killed with -9 together with its wrapper")
    live = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir=tmp_path))
    legacy = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir=tmp_path))  # no lock file: not ours to judge
    with open(live / OWNER_LOCK, "wb") as held:
        lock(held)
        assert remove_stale_folders(tmp_path) == [dead]
    assert not dead.exists() and live.exists() and legacy.exists()


def test_the_launcher_uses_a_wrapper_with_a_parent_death_signal():
    """The thread-safety of the hand-off: the server runs under the wrapper, never directly."""
    from geofaham_plugin.core.llm import EmbeddedServer

    server = EmbeddedServer(Path("/nonexistent.gguf"), "x")
    server.log_path = Path("/tmp/geofaham-llama-x/server.log")
    cmd = server.wrapped_command(1234)
    assert cmd[1].endswith("server_wrapper.py") and cmd[2] == str(os.getpid()) and cmd[4] == "--"
    assert cmd[5:] == server.command(1234)


def test_a_wrapper_whose_parent_is_already_gone_starts_nothing(tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    wrapper = ROOT / "geofaham_plugin" / "core" / "llm" / "server_wrapper.py"
    marker = tmp_path / "started"
    out = subprocess.run(
        [sys.executable, str(wrapper), "1", str(folder), "--", sys.executable, "-c", f"open({str(marker)!r}, 'w')"],
        timeout=30,
    )
    assert out.returncode == 0 and not marker.exists() and not folder.exists()


# ------------------------------------------------------------------------------ interrupted runs, deadline
QUESTION = "How many buildings were damaged in the Eaton fire?"


def cli(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "geofaham_plugin", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=CHILD_ENV | (env or {}),
    )


def kill_mid_run(session: Path) -> str:
    """Start ``ask`` and SIGKILL it once its saved state shows the plan adopted and no step finished
    (the steps load and count thousands of buildings: seconds of work). Returns the run id."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "geofaham_plugin", "ask", QUESTION, "--session", str(session)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=CHILD_ENV,
    )
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            for state in session.glob("runs/r_*.state.json"):
                try:
                    saved = json.loads(state.read_text())
                except (OSError, ValueError):
                    continue
                if saved["plans"]:
                    proc.send_signal(signal.SIGKILL)
                    proc.wait(10)
                    assert saved["status"] == "running" and not saved["progress"]["artifacts"]
                    return saved["run_id"]
            time.sleep(0.02)
        raise AssertionError(f"the run ended before it could be killed: {proc.stderr.read()}")
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_run_killed_with_9_is_listed_as_interrupted_and_resumed_to_completion(tmp_path):
    session = tmp_path / "s"
    run_id = kill_mid_run(session)
    assert not (session / "runs" / f"{run_id}.json").exists()  # no finished record: it was cut off

    listing = cli("runs", "--session", str(session))
    assert listing.returncode == 0, listing.stderr
    assert f"{run_id}  interrupted" in listing.stdout
    assert f"ask --resume {run_id} --session {session}" in listing.stdout

    resumed = cli("ask", "--resume", run_id, "--session", str(session))
    assert resumed.returncode == 0, resumed.stderr
    assert "3,051 in total" in resumed.stdout
    record = json.loads((session / "runs" / f"{run_id}.json").read_text())
    assert record["status"] == "answered" and record["run_id"] == run_id and record["question"] == QUESTION
    assert any(n.startswith("resumed at") for n in record["notes"])
    assert [p.name for p in (session / "runs").glob("*.lock")] == ["memo.lock"]  # the run's own lock is gone

    after = cli("runs", "--session", str(session))
    assert f"{run_id}  answered" in after.stdout and "interrupted" not in after.stdout
    again = cli("ask", "--resume", run_id, "--session", str(session))  # a finished run: one clear line
    assert again.returncode == 2 and "already ended (answered)" in again.stderr and "Traceback" not in again.stderr


def test_resume_refuses_clearly(tmp_path):
    session = tmp_path / "s"
    (session / "runs").mkdir(parents=True)
    cases = {
        ("ask", "--resume", "r_00000bad", "--session", str(session)): "no run r_00000bad",
        ("ask", "--resume", "../etc", "--session", str(session)): "is not a run id",
        ("ask", "--resume", "r_00000bad"): "--resume needs the run's session",
        ("ask",): "the question is empty",
        ("runs", "--session", str(tmp_path / "nope")): "no session folder",
    }
    for args, message in cases.items():
        out = cli(*args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        (line,) = out.stderr.strip().splitlines()
        assert message in line and "hint:" in line and "Traceback" not in out.stderr, (args, line)


def test_a_run_being_run_is_not_interrupted_and_cannot_be_resumed_twice(store):
    from geofaham_plugin.core.orchestrator.runlog import RunBusy, RunLog, RunRecord

    log = RunLog(store.session_dir)
    log.save_state(RunRecord(run_id="r_0000beef", question=QUESTION))
    with log.owning("r_0000beef"):  # as the process running it does
        assert log.is_live("r_0000beef") and log.interrupted() == []
        with pytest.raises(RunBusy), log.owning("r_0000beef"):
            pass
    assert not log.is_live("r_0000beef") and [r.run_id for r in log.interrupted()] == ["r_0000beef"]


def test_the_run_deadline_ends_a_run_cleanly_and_it_can_be_resumed(store):
    from geofaham_plugin.core.config import settings_from_env
    from geofaham_plugin.core.llm import LLM, ScriptedModel
    from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
    from geofaham_plugin.core.orchestrator.runlog import RunLog

    finished: list[str] = []

    def slow_steps(event) -> None:
        if event.type == "step_finished":
            finished.append(event.type)
            if len(finished) == 1:
                time.sleep(5.5)  # the first step done (in well under 5 s, even on a loaded machine), then past it

    settings = settings_from_env().updated(run={"deadline_s": 5})
    orch = Orchestrator(store, LLM(ScriptedModel({})), settings=settings, on_event=slow_steps)
    record = orch.run(QUESTION)
    assert record.status == "timed_out" and record.structured.status == "timed_out"
    assert record.answer.startswith("Stopped: the run took longer than its limit of 5 s (GEOFAHAM_RUN_DEADLINE_S).")
    done = [s.artifact_id for s in record.steps if s.artifact_id]
    assert done and all(i in store for i in done) and all(i in record.answer for i in done)  # work kept
    assert "deadline" in record.error and RunLog(store.session_dir).load_record(record.run_id) == record

    resumed = Orchestrator(store, LLM(ScriptedModel({}))).resume(record.run_id)
    assert resumed.status == "answered" and "3,051 in total" in resumed.answer
    assert resumed.steps[: len(record.steps)] == record.steps  # the steps done before were not redone


def test_the_deadline_from_the_environment_stops_the_cli_with_a_clear_answer(tmp_path):
    out = cli("ask", QUESTION, "--session", str(tmp_path / "s"), env={"GEOFAHAM_RUN_DEADLINE_S": "0.01"})
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stdout.startswith("Stopped: the run took longer than its limit of 0.01 s")
    bad = cli("ask", QUESTION, env={"GEOFAHAM_RUN_DEADLINE_S": "soon"})
    assert bad.returncode == 2 and "GEOFAHAM_RUN_DEADLINE_S" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_the_step_deadline_cuts_a_long_database_tool(ctx, tmp_path):
    """damage_by_class, a typed database query (no free SQL), stops at its step's deadline: the area is 100
    overlapping 2,000-vertex stars whose union alone is one GEOS call of about 10 s."""
    from dataclasses import replace

    import geopandas as gpd
    from test_adversarial_sql import slow_area

    from geofaham_plugin.core.agents import get_tool
    from geofaham_plugin.core.errors import ToolFailed

    stars = gpd.read_file(slow_area(tmp_path).path)
    area = ctx.store.register_vector(stars, source="test:stars", summary="100 stars")
    started = time.monotonic()
    with pytest.raises(ToolFailed) as exc:
        get_tool("damage_by_class").run(replace(ctx, deadline=time.monotonic() + 1.0), {"event_id": 11}, {"area": area})
    assert exc.value.kind == "timeout" and "GEOFAHAM_STEP_DEADLINE_S" in str(exc.value)
    assert time.monotonic() - started < 6


def test_each_step_gets_the_step_deadline_within_the_run_deadline(tmp_path, monkeypatch):
    from geofaham_plugin.core.agents.base import Tool
    from geofaham_plugin.core.config import settings_from_env
    from geofaham_plugin.core.llm import LLM, ScriptedModel
    from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
    from geofaham_plugin.core.store.store import ResponseStore

    seen: list[float | None] = []
    run = Tool.run

    def spy(self, ctx, args, inputs):
        seen.append(None if ctx.deadline is None else ctx.deadline - time.monotonic())
        return run(self, ctx, args, inputs)

    monkeypatch.setattr(Tool, "run", spy)
    base = settings_from_env()
    for run_s, step_s, expected in ((3600, 20, 20), (15, 600, 15), (0, 0, None)):
        seen.clear()
        settings = base.updated(run={"deadline_s": run_s, "step_deadline_s": step_s})
        with ResponseStore(tmp_path / f"s{run_s}") as store:  # a fresh session: no step reused from the memo
            record = Orchestrator(store, LLM(ScriptedModel({})), settings=settings).run(QUESTION)
        assert record.status == "answered" and seen, record.error
        if expected is None:
            assert set(seen) == {None}
        else:
            assert all(s is not None and expected - 14 < s <= expected for s in seen), (run_s, step_s, seen)
