"""The bench runner: every task headless, in a fresh session, in its own process, with a timeout.

``results/<config>/<task>.json`` holds, per task: the task spec as run, the orchestrator's run record
of every turn (ledgers, plans, steps, tool calls, failures, replans, answer, tokens per role and step,
timings), a digest of every artifact of the session (``bench.evidence``), token totals, wall time and
the outcome (``finished``, ``timeout``, ``error``). A task whose result file exists is skipped with
``--resume``; the file is written atomically, so an interrupted bench leaves no half result.

Each task runs in a child process (``python -m bench.runner --child ...``) so that a hung model call
or engine can be killed without taking the bench down. When a configuration uses the embedded local
model, the runner starts ONE llama.cpp server for the whole bench and the children talk to it (the
model loads once, and its prompt cache carries over from task to task); after a timeout it restarts
the server, which drops whatever generation the killed task left running. A timed-out task is
recorded with what its session holds: the saved run state (``runs/<run>.state.json``), the
artifacts registered so far and the tokens counted so far."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import DEFAULT_CONFIG, ModelConfig, build_models, load_config
from .results_io import atomic_write_json, now, read_json, read_result, session_run_records
from .runs import current_commit
from .spec import TASKS_FILE, TaskSpec, load_expected, load_tasks, select_tasks

if TYPE_CHECKING:
    from geofaham_plugin.core.engines.layers import LayerCatalogue
    from geofaham_plugin.core.llm import LLM
    from geofaham_plugin.core.orchestrator.events import EventCallback, RunEvent
    from geofaham_plugin.core.store.store import ResponseStore

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "bench" / "results"
SHARED_URL_ENV = "GEOFAHAM_BENCH_EMBEDDED_URL"
USAGE_FILE = "bench_usage.json"
RESULT_SCHEMA = 1


def token_totals(calls: list[dict]) -> dict:
    by_role: dict[str, dict[str, int]] = {}
    for c in calls:
        acc = by_role.setdefault(c.get("role", "?"), {"prompt": 0, "completion": 0, "calls": 0})
        acc["prompt"] += int(c.get("prompt_tokens", 0))
        acc["completion"] += int(c.get("completion_tokens", 0))
        acc["calls"] += 1
    prompt = sum(v["prompt"] for v in by_role.values())
    completion = sum(v["completion"] for v in by_role.values())
    return {
        "prompt": prompt,
        "completion": completion,
        "total": prompt + completion,
        "calls": sum(v["calls"] for v in by_role.values()),
        "by_role": by_role,
    }


# ------------------------------------------------------------------------------------ one task
def run_task_in_session(
    task: TaskSpec,
    config: ModelConfig,
    session: Path,
    *,
    shared_url: str | None = None,
    on_event: EventCallback | None = None,
) -> dict:
    """Run every turn of ``task`` in the session folder ``session``; returns the result dict (without
    the runner's wall time). Used by the child process, and directly by tests."""
    from geofaham_plugin.core.llm import LLM, UsageLedger
    from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
    from geofaham_plugin.core.store.store import ResponseStore

    from .evidence import digest_store, tool_flags

    settings = config.settings()
    models = build_models(config, settings, shared_url)
    store = ResponseStore(session)
    turns: list[dict] = []
    all_calls: list[dict] = []
    events: dict[str, int] = {}
    result: dict[str, Any] = {"status": "finished", "error": None}
    usage_path = session / USAGE_FILE
    try:
        aoi_id, layers = _register_input_files(task, store, session, settings.paths.data_dir)
        previous = None
        for turn in task.turns():
            llm = LLM(models, usage=UsageLedger())  # per turn: the run record's usage is this turn's alone

            seen = _event_recorder(usage_path, list(all_calls), llm, events, on_event)
            orch = Orchestrator(
                store, llm, config=config.orchestrator_config(), settings=settings, layers=layers, on_event=seen
            )
            record = orch.run(turn.question, previous=previous, aoi_artifact_id=aoi_id if previous is None else None)
            all_calls += [c.model_dump(mode="json") for c in llm.usage.snapshot()]
            turns.append({"question": turn.question, "run": record.model_dump(mode="json")})
            previous = record
    except Exception as exc:  # our bug or a blocked model: recorded, the bench goes on
        result.update(status="error", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()[-4000:])
        turns += _unfinished_turns(session, {t["run"]["run_id"] for t in turns})
    finally:
        for model in {id(m): m for m in models.values()}.values():  # clients (a shared server keeps running)
            close = getattr(model, "close", None)
            if callable(close):
                close()
    result.update(
        turns=turns, artifacts=digest_store(store), tools=tool_flags(), tokens=token_totals(all_calls), events=events
    )
    store.close()
    return result


def _register_input_files(
    task: TaskSpec, store: ResponseStore, session: Path, data_dir: Path
) -> tuple[str | None, LayerCatalogue | None]:
    """Write the task's input files (``bench.aoi_files``) into the session and register them as batch mode
    does: the AOI artifact id (an area-like polygon file the instruction makes the area), or None, and the layer
    catalogue with the files as the user's own layers (batch mode's), or None without input files."""
    if not task.input_files:
        return None, None
    from .aoi_files import write_input_file
    from .batch import _user_catalogue, register_inputs

    folder = session / "inputs"
    for name in task.input_files:
        write_input_file(name, folder)
    registered: dict = register_inputs(store, folder, instruction=task.question)  # the AOI only where it says so
    aoi: str | None = registered.get("aoi")
    return aoi, _user_catalogue(store, registered, [], data_dir, folder)


def _event_recorder(
    usage_path: Path, done: list[dict], llm: LLM, counts: dict[str, int], forward: EventCallback | None
) -> EventCallback:
    """An on_event callback that counts events and saves the tokens used so far (a killed task keeps them)."""

    def seen(event: RunEvent) -> None:
        counts[event.type] = counts.get(event.type, 0) + 1
        atomic_write_json(
            usage_path, {"done": done, "current": [c.model_dump(mode="json") for c in llm.usage.snapshot()]}
        )
        if forward:
            forward(event)

    return seen


def _unfinished_turns(session: Path, known: set[str]) -> list[dict]:
    """Turns of the runs saved in the session that are not among ``known`` run ids (oldest first)."""
    return [{"question": record.get("question", ""), "run": record} for record in session_run_records(session, known)]


def partial_result(session: Path, error: str) -> dict:
    """What a killed task's session holds: run states, artifacts and tokens counted so far."""
    from geofaham_plugin.core.store.store import ResponseStore

    from .evidence import digest_store, tool_flags

    turns = _unfinished_turns(session, set())
    usage = read_json(session / USAGE_FILE, {})
    calls: list[dict] = usage.get("done", []) + usage.get("current", [])
    artifacts: dict = {}
    if (session / "store.sqlite").exists():
        store = ResponseStore(session)
        try:
            artifacts = digest_store(store)
        finally:
            store.close()
    return {
        "status": "timeout",
        "error": error,
        "turns": turns,
        "artifacts": artifacts,
        "tools": tool_flags(),
        "tokens": token_totals(calls),
        "events": {},
    }


# ------------------------------------------------------------------------------ shared server
class SharedModelServer:
    """One embedded llama.cpp server for the whole bench (started only when real models may run)."""

    def __init__(self, config: ModelConfig, log: Callable[[str], None]) -> None:
        self.server = None
        self.log = log
        from geofaham_plugin.core.llm import real_models_blocked

        if not config.any_embedded or real_models_blocked():
            return
        from geofaham_plugin.core.config import EMBEDDED_MODEL
        from geofaham_plugin.core.llm import EmbeddedServer

        settings = config.settings()
        if not settings.embedded_model_path.is_file():
            log(f"note: {settings.embedded_model_path} is missing; tasks that need a model call will fail")
            return
        self.server = EmbeddedServer(settings.embedded_model_path, EMBEDDED_MODEL)

    @property
    def url(self) -> str | None:
        if self.server is None:
            return None
        if not self.server.running:
            t0 = time.monotonic()
            self.server.start()
            self.log(f"embedded model server ready at {self.server.base_url} ({time.monotonic() - t0:.0f} s)")
        return self.server.base_url

    def restart(self) -> None:
        if self.server is not None and self.server.running:
            self.server.stop()

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


def _kill_group(proc: subprocess.Popen, grace: float = 10) -> None:
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_one(
    task: TaskSpec,
    config_path: Path,
    config: ModelConfig,
    tasks_file: Path,
    *,
    timeout: float,
    offline: bool,
    shared_url: str | None,
    keep_session: Path | None = None,
) -> dict:
    """Run ``task`` in a child process with a fresh session; returns the full result."""
    session = Path(tempfile.mkdtemp(prefix=f"geofaham-bench-{task.id}-"))
    result_file = session.parent / (session.name + ".result.json")
    env = config.env(dict(os.environ))
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    if offline:
        env["GEOFAHAM_OFFLINE"] = "1"
    if shared_url:
        env[SHARED_URL_ENV] = shared_url
    cmd = [
        sys.executable,
        "-m",
        "bench.runner",
        "--child",
        "--task",
        task.id,
        "--tasks-file",
        str(tasks_file),
        "--config",
        str(config_path),
        "--session",
        str(session),
        "--result",
        str(result_file),
    ]
    started, t0 = now(), time.monotonic()
    log_path = session.parent / (session.name + ".log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            proc.wait(timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            timed_out = True
    seconds = round(time.monotonic() - t0, 2)
    child_log = log_path.read_text(errors="replace")[-4000:]
    if timed_out:
        result = partial_result(session, f"timed out after {timeout:g} s")
    elif result_file.exists():
        result = read_result(result_file)
    else:
        result = partial_result(session, f"the task process exited with code {proc.returncode} without a result")
        result["status"] = "error"
    result.update(
        schema=RESULT_SCHEMA,
        task_id=task.id,
        task=task.model_dump(mode="json"),
        config=config.public(),
        started_at=started,
        finished_at=now(),
        wall_seconds=seconds,
        offline_mode=offline,
        timeout_s=timeout,
    )
    if result["status"] != "finished":
        result["log_tail"] = child_log
    if keep_session is not None:
        shutil.rmtree(keep_session, ignore_errors=True)
        keep_session.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(session), keep_session)
        result["session"] = str(keep_session)
    else:
        shutil.rmtree(session, ignore_errors=True)
    for leftover in (result_file, log_path):
        leftover.unlink(missing_ok=True)
    return result


def child_main(args: argparse.Namespace) -> int:
    """Inside the task process: run one task, write its result file."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # atexit handlers (an embedded server) run
    tasks = {t.id: t for t in load_tasks(args.tasks_file)}
    config = load_config(args.config)
    result = run_task_in_session(
        tasks[args.task], config, Path(args.session), shared_url=os.environ.get(SHARED_URL_ENV) or None
    )
    atomic_write_json(Path(args.result), result)
    return 0


# ---------------------------------------------------------------------------------- the bench
def result_path(out: Path, config: ModelConfig, task_id: str) -> Path:
    return out / config.name / f"{task_id}.json"


def run_bench(
    tasks: list[TaskSpec],
    config_path: Path | str = DEFAULT_CONFIG,
    out: Path | str = DEFAULT_OUT,
    *,
    resume: bool = False,
    timeout: float = 300,
    offline: bool = False,
    keep_sessions: bool = False,
    retry_failed: bool = False,
    tasks_file: Path = TASKS_FILE,
    log: Callable[[str], None] = print,
) -> Path:
    """Run ``tasks`` with the configuration file ``config_path``; returns the configuration's results folder."""
    from .evidence import environment
    from .judge import judge_folder

    config_path = Path(config_path)
    config = load_config(config_path)
    config_path = (
        config_path if config_path.exists() else Path(__file__).parent / "configs" / f"{config_path.name}.json"
    )
    folder = Path(out) / config.name
    folder.mkdir(parents=True, exist_ok=True)
    load_expected()  # derived data: generated now if missing, so judging never races the runs
    atomic_write_json(
        folder / "config.json",
        {
            "config": config.public(),
            "environment": environment(),
            "tasks_file": str(tasks_file),
            "commit": current_commit(),  # what `bench keep-run` names the run by
            "updated_at": now(),
        },
    )
    server = SharedModelServer(config, log)
    try:
        for i, task in enumerate(tasks, start=1):
            path = result_path(Path(out), config, task.id)
            if resume and path.exists():
                previous = read_result(path)
                if not (retry_failed and previous.get("status") != "finished"):
                    log(f"[{i}/{len(tasks)}] {task.id}: done before ({previous.get('status')}), skipped")
                    continue
            shared = server.url
            keep = folder / "sessions" / task.id if keep_sessions else None
            result = run_one(
                task,
                config_path,
                config,
                tasks_file,
                timeout=timeout,
                offline=offline,
                shared_url=shared,
                keep_session=keep,
            )
            if result["status"] == "timeout":
                server.restart()  # drop the killed task's generation, if any
            atomic_write_json(path, result)
            runs = [t["run"] for t in result.get("turns", [])]
            states = "/".join(r.get("status", "?") for r in runs) or "-"
            log(
                f"[{i}/{len(tasks)}] {task.id}: {result['status']} ({states}), {result['wall_seconds']:.0f} s, "
                f"{result['tokens']['total']:,} tokens"
            )
    finally:
        server.stop()
    judge_folder(folder)
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.runner")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--task")
    parser.add_argument("--tasks-file", default=str(TASKS_FILE))
    parser.add_argument("--config", default=str(DEFAULT_CONFIG))
    parser.add_argument("--session")
    parser.add_argument("--result")
    args = parser.parse_args(argv)
    if args.child:
        return child_main(args)
    tasks = select_tasks(load_tasks(args.tasks_file), args.task)
    run_bench(tasks, args.config, tasks_file=Path(args.tasks_file))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
