"""Headless command line: ``python -m geofaham_plugin <command>``."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path

from ..deps import missing_dependencies, pip_command
from .config import settings_from_env


def _cmd_check(_args) -> int:
    missing = missing_dependencies()
    if missing:
        print("missing: " + ", ".join(d.distribution for d in missing))
        print("install with: " + pip_command(missing))
        return 1
    print("all dependencies present")
    return 0


def _cmd_config(_args) -> int:
    print(json.dumps(settings_from_env().describe(), indent=2))
    return 0


def default_session_dir() -> Path:
    return Path.home() / "geofaham-sessions" / datetime.now().strftime("%Y%m%d-%H%M%S")


def _cmd_ask(args) -> int:
    from .aoi import register_aoi_file
    from .errors import GeoFahamError
    from .llm import build_llm
    from .orchestrator.orchestrator import Orchestrator, OrchestratorConfig
    from .store.store import ResponseStore

    settings = settings_from_env()
    session = Path(args.session) if args.session else default_session_dir()
    store = ResponseStore(session)
    llm = build_llm(settings)
    events = []

    def show(event):
        events.append(event)
        if args.verbose and event.type in ("plan", "step_started", "step_finished", "check_failed", "replan"):
            print(f"[{event.type}] {json.dumps(event.data, default=str)[:300]}", file=sys.stderr)

    try:
        aoi_id = register_aoi_file(store, args.aoi).id if args.aoi else None
        mode = args.mode or ("free" if all(not settings.endpoint(r).embedded for r in ("planner",)) else "guided")
        orchestrator = Orchestrator(store, llm, settings=settings, on_event=show,
                                    config=OrchestratorConfig(mode=mode, model_synthesis=mode == "free"))
        previous = orchestrator.last_run() if args.follow_up else None
        if args.follow_up and previous is None:
            print("note: no earlier run in this session; answering afresh", file=sys.stderr)
        record = orchestrator.run(args.question, aoi_artifact_id=aoi_id, previous=previous)
    except GeoFahamError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        llm.close()
        store.close()
    print(record.answer)
    print(f"\nrun record: {session / 'runs' / (record.run_id + '.json')}")
    return 0 if record.status in ("answered", "partial") else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m geofaham_plugin", description="GeoFaham, headless.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="check the Python dependencies").set_defaults(func=_cmd_check)
    sub.add_parser("config", help="show where models, database, STAC and Overpass come from").set_defaults(
        func=_cmd_config
    )
    ask = sub.add_parser("ask", help="answer a question headless (default: the embedded local model)")
    ask.add_argument("question")
    ask.add_argument("--aoi", help="a vector file with the area of interest")
    ask.add_argument("--session", help="session folder (default: ~/geofaham-sessions/<time>)")
    ask.add_argument("--mode", choices=("guided", "free"), help="planner mode (default: guided for the embedded model)")
    ask.add_argument("--follow-up", action="store_true",
                     help="continue the session's last run (reuse its facts and artifacts)")
    ask.add_argument("-v", "--verbose", action="store_true", help="print plan and step events to stderr")
    ask.set_defaults(func=_cmd_ask)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
