"""Headless command line: ``python -m geofaham_plugin <command>``."""

from __future__ import annotations

import argparse
import json
import logging
import os

# subprocess runs `python -m bench` and the report writer only, with an argument list (no shell)
import subprocess  # nosec B404
import sys
import traceback
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..deps import print_check
from .config import PathSettings, settings_from_env, variables_markdown
from .domain.secrets import mask_secrets
from .errors import ConfigError, InputError, user_line

if TYPE_CHECKING:
    from .engines.db import LoadReport, SpatialEngine
    from .engines.layers import LayerCatalogue
    from .orchestrator.events import RunEvent

#: a ``db`` subcommand: the open engine and the parsed arguments -> exit code
DbCommand = Callable[["SpatialEngine", argparse.Namespace], int]


def _cmd_check(_args: argparse.Namespace) -> int:
    return print_check()


def _cmd_config(args: argparse.Namespace) -> int:
    if args.variables:
        print(variables_markdown())
        return 0
    print(json.dumps(settings_from_env().describe(), indent=2))
    return 0


def default_session_dir() -> Path:
    return Path.home() / "geofaham-sessions" / datetime.now().strftime("%Y%m%d-%H%M%S")


LAYER_SYNTAX_HINT = (
    'write --layer "NAME=FILE", e.g. --layer "field clinics=clinics.geojson"; FILE:LAYER for one layer of a GeoPackage'
)


class LayerArgumentError(ValueError):
    """A ``--layer`` value that is not NAME=FILE[:LAYER]."""


def parse_layer_argument(value: str) -> tuple[str, Path, str | None]:
    """``NAME=FILE`` or ``NAME=FILE:LAYER`` -> (name, file, layer or None). FILE:LAYER is read as a layer of
    FILE only when FILE exists and the whole of it is no file (so a path holding a colon still works)."""
    name, sep, rest = value.partition("=")
    name, rest = name.strip(), rest.strip()
    if not sep or not name or not rest:
        raise LayerArgumentError(f"--layer {value!r} is not NAME=FILE")
    whole = Path(rest).expanduser()
    head, colon, layer = rest.rpartition(":")
    if not whole.exists() and colon and head and layer and Path(head).expanduser().is_file():
        return name, Path(head).expanduser(), layer
    return name, whole, None


def user_layer_catalogue(values: list[str], data_dir: Path) -> LayerCatalogue:
    """The layer catalogue with the ``--layer`` files added as the user's own layers (each read once)."""
    from .engines.layers import LayerCatalogue

    catalogue = LayerCatalogue(data_dir)
    for value in values:
        name, path, layer = parse_layer_argument(value)
        catalogue.add_user_layer(name, path, layer)
    return catalogue


def _cmd_ask(args: argparse.Namespace) -> int:
    from .aoi import register_aoi_file
    from .errors import GeoFahamError, ToolFailed
    from .llm import build_llm
    from .orchestrator.orchestrator import Orchestrator, OrchestratorConfig
    from .orchestrator.runlog import RunBusy, RunLog, not_resumable
    from .store.store import ResponseStore

    settings = settings_from_env()
    try:  # before the session folder exists: a bad --layer leaves nothing behind
        catalogue = user_layer_catalogue(args.layer, settings.paths.data_dir)
    except LayerArgumentError as exc:
        print(f"error: {exc} (hint: {LAYER_SYNTAX_HINT})", file=sys.stderr)
        return 2
    except ToolFailed as exc:
        print(f"error: --layer: {exc}" + (f" (hint: {exc.hint})" if exc.hint else ""), file=sys.stderr)
        return 2
    if args.resume and not args.session:
        return report_error(InputError("--resume needs the run's session", hint="ask --resume RUN --session DIR"))
    if not args.resume and not (args.question or "").strip():
        return report_error(
            InputError("the question is empty", hint='ask "QUESTION", or ask --resume RUN --session DIR')
        )
    if args.report and Path(args.report).suffix.lower() != ".pdf":
        return report_error(InputError(f"--report {args.report} is not a .pdf file", hint="--report out.pdf"))
    session = Path(args.session) if args.session else default_session_dir()
    if args.resume and (problem := not_resumable(RunLog(session), args.resume)):
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        store = ResponseStore(session)
    except GeoFahamError as exc:  # a folder that cannot be created, a store another process holds
        return report_error(exc)
    for note in store.notes:  # what the store rebuilt or set aside when it opened
        print(f"note: {note}", file=sys.stderr)
    llm = build_llm(settings)
    events: list[RunEvent] = []

    def show(event: RunEvent) -> None:
        events.append(event)
        if args.verbose and event.type in ("plan", "step_started", "step_finished", "check_failed", "replan"):
            print(f"[{event.type}] {event.payload.model_dump_json(exclude={'kind'})[:300]}", file=sys.stderr)

    try:
        aoi = register_aoi_file(store, args.aoi) if args.aoi else None
        for warning in aoi.extra.get("warnings", []) if aoi else []:
            print(f"warning: {warning}", file=sys.stderr)
        aoi_id = aoi.id if aoi else None
        mode = args.mode or ("free" if all(not settings.endpoint(r).embedded for r in ("planner",)) else "guided")
        orchestrator = Orchestrator(
            store,
            llm,
            settings=settings,
            layers=catalogue,
            on_event=show,
            config=OrchestratorConfig(mode=mode, model_synthesis=mode == "free"),
        )
        if args.resume:
            record = orchestrator.resume(args.resume)
        else:
            previous = orchestrator.last_run() if args.follow_up else None
            if args.follow_up and previous is None:
                print("note: no earlier run in this session; answering afresh", file=sys.stderr)
            record = orchestrator.run(args.question, aoi_artifact_id=aoi_id, previous=previous)
    except RunBusy as exc:
        hint = "wait until it ends; list the session's runs with: python -m geofaham_plugin runs --session DIR"
        return report_error(InputError(str(exc), hint=hint))
    except GeoFahamError as exc:
        return report_error(exc)
    finally:
        llm.close()
        store.close()
    path = orchestrator.runlog.record_path(record.run_id)
    if args.json:  # machine-readable: the text, the structured answer and the run record's path
        structured = record.structured.model_dump(mode="json") if record.structured else None
        out = {"run_id": record.run_id, "run_record": str(path), "answer": record.answer, "structured": structured}
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(record.answer)
        print(f"\nrun record: {path}")
    if args.report and record.status in ("answered", "partial"):
        code = write_report(path, Path(args.report))
        if code:
            return code
    elif args.report:
        print(f"note: no report: the run ended {record.status}", file=sys.stderr)
    return 0 if record.status in ("answered", "partial") else 1


#: the report is a QGIS print layout: it is written by ``geofaham_plugin.ui.report`` in a child process
#: (QGIS started without a display), so the command line itself never loads QGIS
REPORT_MODULE = "geofaham_plugin.ui.report"


def write_report(record_path: Path, pdf: Path) -> int:
    """Write the situation report of the run at ``record_path`` to ``pdf`` (and its PNG beside it) with
    QGIS headless; 0, or the exit code of the writer after its one line (a QGIS missing: 2 with a hint)."""
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")  # no display needed
    child = [sys.executable, "-m", REPORT_MODULE, str(record_path), str(pdf)]
    # an argument list (no shell); the paths are the user's own
    done = subprocess.run(child, env=env, capture_output=True, text=True, check=False)  # nosec B603
    if "No module named 'qgis'" in done.stderr:
        return report_error(
            InputError(
                "--report needs QGIS's Python module (qgis.core), which this Python cannot import",
                hint="run with the project's .venv (make setup) or a Python that has QGIS (python3-qgis)",
            )
        )
    print(done.stdout, end="")
    lines = [line for line in done.stderr.splitlines() if line.startswith(("error:", "note:", "warning:"))]
    if lines:
        print("\n".join(lines), file=sys.stderr)
    if done.returncode and not lines:
        print(
            f"error: the report writer failed (exit {done.returncode}); the details are in {log_path()}",
            file=sys.stderr,
        )
    return done.returncode


def _cmd_runs(args: argparse.Namespace) -> int:
    """The runs of a session, oldest first: id, status (``interrupted`` for a run cut off mid-way), start,
    question; and how to resume the interrupted ones."""
    from .orchestrator.runlog import RunLog

    session = Path(args.session)
    if not session.is_dir():
        print(f"error: no session folder {session} (hint: --session is the folder `ask` printed)", file=sys.stderr)
        return 2
    runlog = RunLog(session)
    interrupted = {r.run_id for r in runlog.interrupted()}
    runs = runlog.runs()
    for r in runs:
        status = "interrupted" if r.run_id in interrupted else r.status
        print(f"{r.run_id}  {status:11}  {r.started_at:%Y-%m-%d %H:%M:%S}  {r.question[:80]}")
    if not runs:
        print("no runs in this session")
    for run_id in sorted(interrupted):
        print(f"resume with: python -m geofaham_plugin ask --resume {run_id} --session {session}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m geofaham_plugin", description="GeoFaham, headless.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="check the Python dependencies").set_defaults(func=_cmd_check)
    config = sub.add_parser("config", help="show the settings in effect (models, database, STAC, Overpass, limits)")
    config.add_argument("--variables", action="store_true", help="list every GEOFAHAM_* variable (Markdown table)")
    config.set_defaults(func=_cmd_config)
    ask = sub.add_parser("ask", help="answer a question headless (default: the embedded local model)")
    ask.add_argument("question", nargs="?", help="the question (not with --resume)")
    ask.add_argument("--resume", metavar="RUN", help="continue run RUN of --session (see the `runs` command)")
    ask.add_argument("--aoi", help="a vector file with the area of interest")
    ask.add_argument("--session", help="session folder (default: ~/geofaham-sessions/<time>)")
    ask.add_argument(
        "--layer",
        action="append",
        default=[],
        metavar="NAME=FILE[:LAYER]",
        help="one of your own vector layers the question may use, by NAME (repeatable; :LAYER picks a layer "
        "of a multi-layer file such as a GeoPackage)",
    )
    ask.add_argument("--mode", choices=("guided", "free"), help="planner mode (default: guided for the embedded model)")
    ask.add_argument(
        "--follow-up", action="store_true", help="continue the session's last run (reuse its facts and artifacts)"
    )
    ask.add_argument(
        "--json", action="store_true", help="print the answer, its structured form and the run record path as JSON"
    )
    ask.add_argument(
        "--report",
        metavar="OUT.pdf",
        help="also write the one-page situation report (PDF, and a PNG beside it) with QGIS headless",
    )
    ask.add_argument("-v", "--verbose", action="store_true", help="print plan and step events to stderr")
    ask.set_defaults(func=_cmd_ask)
    runs = sub.add_parser("runs", help="list the runs of a session; interrupted ones can be resumed (ask --resume)")
    runs.add_argument("--session", required=True, help="the session folder")
    runs.set_defaults(func=_cmd_runs)
    _add_db_commands(sub)
    _add_bench_commands(sub)
    return parser


#: commands that run the benchmark in bench/ (``python -m bench``); the plugin never imports it
BENCH_COMMANDS = ("bench", "batch")


def bench_root() -> Path | None:
    """The repository root when bench/ sits beside the package (a clone), else None (the plugin zip
    does not carry the bench)."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "bench" / "__main__.py").is_file() else None


def run_bench_command(argv: list[str]) -> int:
    """``bench <command> ...`` / ``batch ...``: ``python -m bench <command> ...`` in a child process
    that inherits the working directory (relative paths mean what the user meant) with the
    repository root on its PYTHONPATH; returns the child's exit code."""
    root = bench_root()
    if root is None:
        print(
            "error: the bench is not installed with the plugin (hint: it lives in bench/ of the GeoFaham "
            "repository; run `python -m bench --help` from a clone)",
            file=sys.stderr,
        )
        return 2
    command = argv[1:] if argv[0] == "bench" else argv  # bench run ... -> run ...; batch ... -> batch ...
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
    safe_path = ["-P"] if sys.version_info >= (3, 11) else []  # no bench/ of the working directory instead
    child = [sys.executable, *safe_path, "-m", "bench", *command]  # the user's own arguments, to the bench's parser
    # an argument list (no shell)
    return subprocess.run(child, env=env, check=False).returncode  # nosec B603


def _add_bench_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``bench`` and ``batch`` in the help; :func:`main` hands their arguments to
    :func:`run_bench_command` untouched (``python -m geofaham_plugin bench --help`` is the bench's help)."""
    helps = {
        "bench": "GeoFaham-Bench: run tasks, judge, report (python -m bench; needs bench/ of the repository)",
        "batch": "instruction + input files -> requested output files (python -m bench batch)",
    }
    for name, help_ in helps.items():
        p = sub.add_parser(name, help=help_, add_help=False)
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(func=lambda args: run_bench_command([args.command, *args.rest]))


def _add_db_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``db init|load|load-file|status|sql``: the disaster database (engines/db). PostGIS when --dsn is
    given or GEOFAHAM_PG_DSN is set (unless --engine spatialite), else the embedded SpatiaLite file."""

    def run(fn: DbCommand) -> Callable[[argparse.Namespace], int]:
        def wrapped(args: argparse.Namespace) -> int:
            from .engines.db import open_engine
            from .errors import GeoFahamError, ToolFailed

            try:
                with open_engine(args.engine, db_path=args.db, dsn=args.dsn, schema=args.schema) as engine:
                    return fn(engine, args)
            except GeoFahamError as exc:  # ModelRetry messages carry their hint already
                hint = exc.hint if isinstance(exc, ToolFailed) else None
                print(f"error: {exc}" + (f" (hint: {hint})" if hint else ""), file=sys.stderr)
                return 2

        return wrapped

    def init(engine: SpatialEngine, args: argparse.Namespace) -> int:
        engine.init(reset=args.reset)
        print(f"initialised {engine.describe()}")
        return 0

    def report(reports: Iterable[LoadReport]) -> int:
        for r in reports:
            print(
                f"{r.source_layer:28} -> {r.table:15} event {r.event_id!s:4} read {r.read:6} loaded {r.loaded:6} "
                f"skipped {r.skipped:4} repaired {r.repaired:3}" + (f"  ({'; '.join(r.notes)})" if r.notes else "")
            )
        return 0

    def load(engine: SpatialEngine, args: argparse.Namespace) -> int:
        from .engines.db.loaders import load_samples

        engine.init()
        return report(load_samples(engine, Path(args.data_dir) if args.data_dir else None, args.only or None))

    def load_file(engine: SpatialEngine, args: argparse.Namespace) -> int:
        from .engines.db.loaders import load_file as load_one

        engine.init()
        return report(
            [
                load_one(
                    engine,
                    args.path,
                    table=args.table,
                    event_id=args.event,
                    feature_class=args.cls,
                    name_field=args.name_field,
                    damage_field=args.damage_field,
                    layer=args.layer,
                    source_layer=args.source,
                )
            ]
        )

    def status(engine: SpatialEngine, _args: argparse.Namespace) -> int:
        print(json.dumps(engine.status(), indent=2, default=str, ensure_ascii=False))
        return 0

    def sql(engine: SpatialEngine, args: argparse.Namespace) -> int:
        artifacts = dict(a.split("=", 1) for a in args.artifact)
        result = engine.run_sql(args.query, artifacts, row_cap=args.row_cap, timeout_s=args.timeout)
        print(result.to_frame().to_string(index=False, max_colwidth=60))
        if result.truncated:
            print(f"(truncated at {result.row_cap} rows)")
        return 0

    db = sub.add_parser("db", help="the disaster database: init, load, load-file, status, sql")
    dbsub = db.add_subparsers(dest="db_command", required=True)

    def command(name: str, help_: str, fn: DbCommand) -> argparse.ArgumentParser:
        p = dbsub.add_parser(name, help=help_)
        p.add_argument("--engine", choices=("spatialite", "postgis"), help="default: postgis if a DSN is set")
        p.add_argument("--db", help="SpatiaLite file (default: <cache>/db/geofaham.sqlite)")
        p.add_argument("--dsn", help="PostGIS libpq URI (default: GEOFAHAM_PG_DSN)")
        p.add_argument("--schema", default="geofaham", help="PostGIS schema (default: geofaham)")
        p.set_defaults(func=run(fn))
        return p

    command("init", "create the schema and the 17 event records", init).add_argument(
        "--reset", action="store_true", help="drop GeoFaham's tables first"
    )
    p = command("load", "load every sample layer from the data folder", load)
    p.add_argument("--data-dir", help="sample data folder (default: GEOFAHAM_DATA_DIR or ../shared/data)")
    p.add_argument("--only", nargs="*", help="sample layer ids to load")
    p = command("load-file", "load one GeoJSON/GeoPackage file", load_file)
    p.add_argument("path")
    p.add_argument("--table", required=True, choices=("damage", "flood_extents", "burn_perimeters", "features"))
    p.add_argument("--event", type=int, help="event id (required except for features)")
    p.add_argument("--class", dest="cls", help="feature class for --table features (e.g. healthcare)")
    p.add_argument("--name-field", help="attribute holding the feature name")
    p.add_argument("--damage-field", help="attribute holding the damage value (--table damage)")
    p.add_argument("--layer", help="layer of a multi-layer file")
    p.add_argument("--source", help="source name to record (default: the file name)")
    command("status", "row counts, hazard areas and the load log (JSON)", status)
    p = command("sql", "run one read-only query ({{a_xxxxxxxx}} placeholders need --artifact)", sql)
    p.add_argument("query")
    p.add_argument("--artifact", action="append", default=[], metavar="ID=GPKG", help="artifact id and file")
    p.add_argument("--row-cap", type=int, default=50)
    p.add_argument("--timeout", type=float, default=30.0)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] and argv[0] in BENCH_COMMANDS:
        return run_bench_command(argv)
    args = build_parser().parse_args(argv)
    _log_to_file()

    def command() -> int:
        _gdal_network_from_env()
        return int(args.func(args))

    return guarded(command)


#: what Ctrl-C prints (exit code 130, as shells report SIGINT); the run state was saved before each step
INTERRUPTED = (
    "interrupted (Ctrl-C); hint: a question cut off can be resumed: python -m geofaham_plugin runs --session DIR"
)


def guarded(command: Callable[[], int]) -> int:
    """Run a command so that every way it ends is an exit code and at most one line on stderr: Ctrl-C at any
    moment (the model starting, a step, a write) prints :data:`INTERRUPTED` (130), an error :func:`report_error`'s
    line (its traceback to the log)."""
    try:
        return command()
    except KeyboardInterrupt:
        print(f"error: {INTERRUPTED}", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - every error ends as one line; the traceback goes to the log
        return report_error(exc)


def _gdal_network_from_env() -> None:
    """GDAL's network access off for the whole process when GEOFAHAM_OFFLINE is on (before any command opens a
    file: a VRT or a GeoJSON URL reaches no server)."""
    from .config import NetworkSettings

    if NetworkSettings.from_env().offline:
        from .engines.user_files import gdal_network

        gdal_network(True)


def log_path() -> Path:
    """Where the command line writes tracebacks: ``<GEOFAHAM_CACHE>/logs/cli.log``."""
    try:
        cache = PathSettings.from_env().cache_dir
    except ConfigError:
        cache = Path.home() / ".cache" / "geofaham"
    return cache / "logs" / "cli.log"


class _MaskSecrets(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = mask_secrets(record.getMessage()), None
        return True


def _log_to_file() -> None:
    """Log warnings (an unreadable run file skipped ...) to :func:`log_path`, secrets masked, not to the
    terminal; nowhere when that file cannot be written."""
    handler: logging.Handler
    try:
        path = log_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    except OSError:
        handler = logging.NullHandler()
    handler.addFilter(_MaskSecrets())
    logging.getLogger("geofaham_plugin").addHandler(handler)


def report_error(exc: BaseException) -> int:
    """One line on stderr (secrets masked): the message and a hint for an error the user can cause or fix
    (exit code 2), else that GeoFaham failed and where the details are (exit code 1). The traceback goes to
    :func:`log_path` only."""
    path, logged = log_path(), True
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        trace = "".join(traceback.format_exception(exc))
        with path.open("a", encoding="utf-8") as log:
            log.write(f"--- {datetime.now().isoformat(timespec='seconds')} {' '.join(sys.argv[1:2])}\n")
            log.write(mask_secrets(trace))
    except OSError:  # a full disk or an unwritable home: the line below still says what happened
        logged = False
    line = user_line(exc)
    if line is not None:
        print(f"error: {mask_secrets(line)}", file=sys.stderr)
        return 2
    first = (str(exc).strip().splitlines() or [""])[0]
    where = f"; the details are in {path}" if logged else ""
    print(f"error: GeoFaham failed ({type(exc).__name__}: {mask_secrets(first)[:200]}){where}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
