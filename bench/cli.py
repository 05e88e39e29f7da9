"""The bench's command line, ``python -m bench <command>`` (run from the repository root, or with it
on PYTHONPATH)::

    python -m bench run [--tasks IDS | --offline] [--tasks-file FILE] [--split SETS] [--model-config FILE]
                        [--out DIR] [--resume] [--timeout S]
    python -m bench judge RESULTS [--llm-config FILE]
    python -m bench report [RESULTS] [--check]  (a results folder's report.md; without RESULTS: bench/README's
                                                 tables made anew from the kept runs, bench/runs/*/summary.json)
    python -m bench keep-run RESULTS --split NAME [--commit SHA]  (keep a judged run under bench/runs/)
    python -m bench tasks [--tasks-file FILE]  (list the tasks and their categories)
    python -m bench ground-truth               (regenerate bench/expected.json)
    python -m bench batch --instruction TEXT --inputs DIR --outputs SPEC.json --out DIR
    python -m bench batch-suite [--model scripted|embedded] [--tasks IDS] [--out DIR] [--set tasks|paraphrases]

``python -m geofaham_plugin bench <command>`` and ``python -m geofaham_plugin batch ...`` start these
in a child process when bench/ sits beside the package (the plugin never imports the bench)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .config import DEFAULT_CONFIG
from .runner import DEFAULT_OUT
from .spec import BENCH_DIR, TASKS_FILE


def tasks_file(value: str) -> Path:
    """A task file: a path, or the name of one in bench/ (``paraphrases`` -> bench/paraphrases.json)."""
    path = Path(value)
    if not path.exists() and not path.suffix and (BENCH_DIR / f"{value}.json").exists():
        return BENCH_DIR / f"{value}.json"
    return path


def _cmd_run(args: argparse.Namespace) -> int:
    from .report import write_reports
    from .runner import run_bench
    from .spec import load_tasks, select_tasks

    tasks = select_tasks(load_tasks(args.tasks_file), args.tasks, offline=args.offline, splits=args.split)
    if not tasks:
        print("no task selected", file=sys.stderr)
        return 2
    print(f"{len(tasks)} tasks, configuration {args.model_config}, timeout {args.timeout:g} s per task", flush=True)
    folder = run_bench(
        tasks,
        args.model_config,
        args.out,
        resume=args.resume,
        timeout=args.timeout,
        offline=args.offline,
        keep_sessions=args.keep_sessions,
        retry_failed=args.retry_failed,
        tasks_file=args.tasks_file,
        log=lambda m: print(m, flush=True),
    )
    if not args.no_report:
        write_reports(folder)
    print(f"results: {folder}")
    return 0


def _cmd_judge(args: argparse.Namespace) -> int:
    from .config import judge_model, load_config
    from .judge import judge_folder
    from .results_io import config_folders

    folders = config_folders(args.results)
    if not folders:
        print(
            f"error: no results in {args.results} (hint: `python -m bench run` writes them to {DEFAULT_OUT})",
            file=sys.stderr,
        )
        return 2
    model = None
    if args.llm_config:
        model = judge_model(load_config(args.llm_config))
    try:
        for folder in folders:
            judgments = judge_folder(folder, model, max_chars=args.max_chars)
            det = [t["deterministic"] for t in judgments["tasks"].values()]
            print(
                f"{folder.name}: {sum(d['passed'] for d in det)}/{len(det)} tasks pass every deterministic check"
                + (
                    f"; LLM judge on {sum('overall' in t.get('llm', {}) for t in judgments['tasks'].values())}"
                    if model
                    else ""
                )
            )
    finally:
        close = getattr(model, "close", None)
        if callable(close):
            close()
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .report import write_reports
    from .runs import README, rebuild_readme

    if args.results is None:
        text, changed = rebuild_readme()
        if args.check:
            print(f"{README}: the tables are {'stale' if changed else 'up to date'}")
            return 1 if changed else 0
        README.write_text(text, encoding="utf-8")
        print(f"{README}: tables {'rebuilt' if changed else 'unchanged'} from bench/runs/")
        return 0
    reports = write_reports(args.results)
    if not reports:
        print(f"no results in {args.results}", file=sys.stderr)
        return 2
    return 0


def _cmd_keep_run(args: argparse.Namespace) -> int:
    from .runs import keep_run

    print(f"kept in {keep_run(Path(args.results), args.split, commit=args.commit)}")
    return 0


def _cmd_tasks(args: argparse.Namespace) -> int:
    from .spec import load_tasks

    for t in load_tasks(args.tasks_file):
        turns = f" (+{len(t.follow_ups)} follow-ups)" if t.follow_ups else ""
        print(
            f"{t.id:42s} {t.category:24s} {t.difficulty:6s} {'offline' if t.offline else 'online ':7s} {t.question}{turns}"
        )
    return 0


def _cmd_ground_truth(args: argparse.Namespace) -> int:
    from .expected_values import main

    return main([])


def _cmd_batch(args: argparse.Namespace) -> int:
    from geofaham_plugin.core.cli import LayerArgumentError, parse_layer_argument
    from geofaham_plugin.core.errors import InputError

    from .batch import OutputOutsideOut, run_batch
    from .config import load_config

    try:
        for value in args.layer:
            parse_layer_argument(value)
    except LayerArgumentError as exc:
        print(f'error: {exc} (hint: --layer "clinics=/data/clinics.gpkg")', file=sys.stderr)
        return 2

    try:
        manifest = run_batch(
            args.instruction,
            args.inputs,
            args.outputs,
            args.out,
            config=load_config(args.model_config),
            session=args.session,
            aoi_name=args.aoi,
            use_aoi=not args.no_aoi,
            layers=args.layer,
        )
    except OutputOutsideOut as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except InputError as exc:
        print(f"error: {exc.line}", file=sys.stderr)
        return 2
    print(manifest["answer"])
    print()
    for o in manifest["outputs"]:
        print(o["line"])
    print(f"\nsession: {manifest['session']} (batch_manifest.json)")
    return 0 if manifest["ok"] and manifest["status"] in ("answered", "partial") else 1


def _cmd_batch_suite(args: argparse.Namespace) -> int:
    from .batch_paraphrases import paraphrase_tasks
    from .batch_suite import SILENT, TASKS, run_suite, select

    tasks = select(args.tasks, paraphrase_tasks() if args.set == "paraphrases" else TASKS)
    if not tasks:
        print(f"error: no task matches {args.tasks!r} (hint: python -m bench batch-suite --list)", file=sys.stderr)
        return 2
    if args.list:
        for t in tasks:
            print(f"{t.id:26s} {t.operation:40s} {t.instruction}")
        return 0
    result = run_suite(tasks, args.model, Path(args.out) if args.out else None, log=lambda m: print(m, flush=True))
    return 1 if result.count(SILENT) else 0


def build_parser() -> argparse.ArgumentParser:
    """``run`` / ``judge`` / ``report`` / ``tasks`` / ``ground-truth`` (GeoFaham-Bench) and ``batch``."""
    parser = argparse.ArgumentParser(
        prog="python -m bench", description="GeoFaham-Bench: run tasks, judge, report; and batch mode."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run bench tasks headless, each in a fresh session with a timeout")
    which = run.add_mutually_exclusive_group()
    which.add_argument("--tasks", help="comma-separated task ids or id prefixes (e.g. poi_,dmg_palisades_destroyed)")
    which.add_argument("--offline", action="store_true", help="only the tasks that run on the sample data (no network)")
    run.add_argument("--model-config", default=str(DEFAULT_CONFIG), help="model configuration file (default: embedded)")
    run.add_argument("--out", default=str(DEFAULT_OUT), help="results folder (results/<config>/<task>.json)")
    run.add_argument("--resume", action="store_true", help="skip tasks that already have a result")
    run.add_argument("--retry-failed", action="store_true", help="with --resume: run timed-out/errored tasks again")
    run.add_argument("--timeout", type=float, default=300, help="seconds per task (default 300)")
    run.add_argument(
        "--keep-sessions", action="store_true", help="keep each task's session under results/<config>/sessions/"
    )
    run.add_argument("--no-report", action="store_true", help="do not write report.md/report.png at the end")
    run.add_argument(
        "--tasks-file",
        type=tasks_file,
        default=TASKS_FILE,
        help="task file (default bench/tasks.json; 'paraphrases' = bench/paraphrases.json)",
    )
    run.add_argument("--split", help="only these question sets, comma-separated (paraphrase, variant, language, aoi)")
    run.set_defaults(func=_cmd_run)

    judge = sub.add_parser("judge", help="deterministic checks (and the LLM rubric judge) over a results folder")
    judge.add_argument("results", help="results folder (one configuration, or a folder of them)")
    judge.add_argument("--llm-config", help="model configuration whose 'judge' (else planner) model scores the rubric")
    judge.add_argument("--max-chars", type=int, default=24000, help="cap on the evidence sent to the LLM judge")
    judge.set_defaults(func=_cmd_judge)

    report = sub.add_parser(
        "report",
        help="report.md + report.png per configuration; without RESULTS, bench/README's tables from bench/runs/",
    )
    report.add_argument("results", nargs="?", help="results folder; none: rebuild bench/README's tables of kept runs")
    report.add_argument(
        "--check", action="store_true", help="without RESULTS: exit 1 when the README's tables are stale"
    )
    report.set_defaults(func=_cmd_report)

    keep = sub.add_parser("keep-run", help="keep a judged run's summary and per-task outcomes under bench/runs/")
    keep.add_argument("results", help="the judged results folder of one configuration")
    keep.add_argument("--split", required=True, help="the split it ran: offline, paraphrases, heldout, heldout2, ...")
    keep.add_argument("--commit", help="the commit it ran at, when its config.json records none")
    keep.set_defaults(func=_cmd_keep_run)

    tasks = sub.add_parser("tasks", help="list the tasks")
    tasks.add_argument("--tasks-file", type=tasks_file, default=TASKS_FILE, help="task file (default bench/tasks.json)")
    tasks.set_defaults(func=_cmd_tasks)

    gt = sub.add_parser("ground-truth", help="recompute bench/expected.json from the sample data")
    gt.set_defaults(func=_cmd_ground_truth)

    batch = sub.add_parser(
        "batch",
        help="instruction + input files -> requested output files",
        description=(
            "Every input file becomes one of your layers (CSV geometry found by content, KML with ExtendedData, "
            "GeoParquet, FlatGeobuf, shapefiles with .cpg, every GeoPackage layer); a polygon input is the area of "
            "interest only when the instruction says so ('in this area', 'clip to the boundary file') or --aoi "
            "names it. Each requested output is written (its CRS and geometry type as asked), read back and "
            "checked (opens, CRS, geometry type, count, columns); an input is never written unchanged as a result "
            "unless the instruction asks only to convert it. One line per output says what was written and what was "
            "not, and why; the exit code is 1 when any output was not written or failed its check."
        ),
    )
    batch.add_argument("--instruction", required=True)
    batch.add_argument("--inputs", required=True, help="folder of input files")
    batch.add_argument(
        "--outputs",
        required=True,
        help="JSON list of requested outputs (name, format, crs, geometry_type, columns; see bench/batch.py)",
    )
    batch.add_argument("--out", required=True, help="folder the outputs are written to")
    batch.add_argument("--model-config", default=str(DEFAULT_CONFIG))
    batch.add_argument("--session", help="session folder (default: a new temporary folder, kept)")
    batch.add_argument("--aoi", help="input file (name or stem) to use as the area of interest")
    batch.add_argument("--no-aoi", action="store_true", help="use no input as the area of interest, whatever is said")
    batch.add_argument(
        "--layer",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="a layer of yours the instruction may name (repeatable; NAME=FILE:LAYER for a GeoPackage layer)",
    )
    batch.set_defaults(func=_cmd_batch)

    suite = sub.add_parser(
        "batch-suite",
        help="everyday GIS tasks on generated messy files through batch, graded by independent code",
        description=(
            "Runs each task (instruction + generated input files -> requested outputs) through batch and grades "
            "every output: written and correct / not written (reported) / written but wrong and reported / "
            "SILENTLY WRONG (exit code 1 when any output is silently wrong)."
        ),
    )
    suite.add_argument("--model", choices=("scripted", "embedded"), default="embedded")
    suite.add_argument("--tasks", help="comma-separated task ids or id prefixes")
    suite.add_argument("--out", help="work folder (default: a new temporary folder, kept)")
    suite.add_argument("--list", action="store_true", help="list the tasks and stop")
    suite.add_argument(
        "--set",
        choices=("tasks", "paraphrases"),
        default="tasks",
        help="the tasks as written, or each said two other ways (bench/batch_paraphrases.py)",
    )
    suite.set_defaults(func=_cmd_batch_suite)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Every way a command ends is an exit code and at most one line on stderr (Ctrl-C, an error: the
    traceback goes to the command line's log), as ``python -m geofaham_plugin``'s commands."""
    from geofaham_plugin.core.cli import guarded

    args = build_parser().parse_args(argv)
    return guarded(lambda: int(args.func(args)))


if __name__ == "__main__":
    sys.exit(main())
