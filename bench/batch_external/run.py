"""Black-box runner of the external batch split: for each task, generate its inputs into a temporary folder, call the
product's documented batch command line in a child process with a timeout, grade the outputs with ``grade.py``, and
write a summary JSON (per task: exit code, seconds, score, reasons).

    .venv/bin/python -m bench.batch_external.run [--tasks id,id] [--timeout 300] [--summary FILE] [--keep DIR]

"Wrong but reported written" counts the tasks whose command exited 0 (every output written and self-checked, by the
product's own account) yet scored below 1.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.batch_external.grade import grade_task, load_tasks
from bench.batch_external.make_inputs import write_inputs

REPO = Path(__file__).resolve().parents[2]
#: the keys of an output spec the product's documented interface takes
SPEC_KEYS = ("name", "format", "geometry_type", "crs", "columns")


def product_command(python: str, task: dict, inputs: Path, outputs_json: Path, out_dir: Path) -> list[str]:
    cmd = [python, "-m", "geofaham_plugin", "batch", "--instruction", task["instruction"]]
    cmd += ["--inputs", str(inputs), "--outputs", str(outputs_json), "--out", str(out_dir)]
    return cmd + [str(a) for a in task.get("args", [])]


def output_specs(task: dict) -> list[dict]:
    return [{k: spec[k] for k in SPEC_KEYS if k in spec} for spec in task["outputs"]]


def _run(cmd: list[str], timeout: float, log: Path) -> tuple[int | None, float, bool]:
    env = dict(os.environ, PYTHONPATH=str(REPO), GEOFAHAM_OFFLINE="1")
    start = time.monotonic()
    with log.open("w", encoding="utf-8") as fh:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc: int | None = proc.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
            for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
            rc = None
    return rc, time.monotonic() - start, timed_out


def run_task(task: dict, work: Path, python: str, timeout: float) -> dict:
    inputs, out_dir = work / "inputs", work / "out"
    out_dir.mkdir(parents=True, exist_ok=True)
    write_inputs(inputs, task["inputs"])
    outputs_json = work / "outputs.json"
    outputs_json.write_text(json.dumps(output_specs(task), indent=2, ensure_ascii=False), encoding="utf-8")
    log = work / "product.log"
    rc, seconds, timed_out = _run(product_command(python, task, inputs, outputs_json, out_dir), timeout, log)
    graded = grade_task(task, inputs, out_dir)
    tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
    return {
        "task": task["id"],
        "kind": task["kind"],
        "language": task["language"],
        "exit_code": rc,
        "timed_out": timed_out,
        "seconds": round(seconds, 1),
        "score": graded["score"],
        "reasons": graded["reasons"],
        "outputs": graded["outputs"],
        "log_tail": tail,
    }


def summarise(rows: list[dict]) -> dict:
    n = len(rows)
    return {
        "tasks": n,
        "mean_score": round(sum(r["score"] for r in rows) / n, 4) if n else 0.0,
        "fully_correct": sum(r["score"] >= 1.0 for r in rows),
        "wrong_but_reported_written": sum(r["exit_code"] == 0 and r["score"] < 1.0 for r in rows),
        "timed_out": sum(bool(r["timed_out"]) for r in rows),
        "median_seconds": sorted(r["seconds"] for r in rows)[n // 2] if n else 0.0,
    }


def table(rows: list[dict], summary: dict) -> str:
    lines = [f"{'task':<34} {'exit':>5} {'s':>7} {'score':>6}  first reason", "-" * 100]
    for r in rows:
        rc = "T/O" if r["timed_out"] else str(r["exit_code"])
        reason = r["reasons"][0] if r["reasons"] else ""
        lines.append(f"{r['task']:<34} {rc:>5} {r['seconds']:>7.1f} {r['score']:>6.2f}  {reason[:60]}")
    lines.append("-" * 100)
    lines.append(
        f"tasks {summary['tasks']}  mean score {summary['mean_score']:.3f}  fully correct {summary['fully_correct']}  "
        f"wrong but reported written {summary['wrong_but_reported_written']}  timed out {summary['timed_out']}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: every task)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per task")
    parser.add_argument("--python", default=str(REPO / ".venv" / "bin" / "python"))
    parser.add_argument(
        "--summary", type=Path, default=None, help="summary JSON (default: bench/results/batch_external-<time>.json)"
    )
    parser.add_argument(
        "--keep", type=Path, default=None, help="keep each task's inputs, outputs and log under this folder"
    )
    args = parser.parse_args(argv)
    tasks = load_tasks()
    wanted = [t for t in args.tasks.split(",") if t]
    if wanted:
        unknown = sorted(set(wanted) - {t["id"] for t in tasks})
        if unknown:
            parser.error(f"unknown task ids: {', '.join(unknown)}")
        tasks = [t for t in tasks if t["id"] in wanted]
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    summary_path = args.summary or REPO / "bench" / "results" / f"batch_external-{stamp}.json"
    rows = []
    for task in tasks:
        if args.keep:
            work = args.keep / task["id"]
            work.mkdir(parents=True, exist_ok=True)
            rows.append(run_task(task, work, args.python, args.timeout))
        else:
            with tempfile.TemporaryDirectory(prefix=f"bx-{task['id']}-") as tmp:
                rows.append(run_task(task, Path(tmp), args.python, args.timeout))
        r = rows[-1]
        print(
            f"{r['task']}: exit {r['exit_code']}, {r['seconds']} s, score {r['score']:.2f}", file=sys.stderr, flush=True
        )
    summary = summarise(rows)
    summary_path.parent.mkdir(parents=True, exist_ok=True)
    summary_path.write_text(
        json.dumps(
            {"split": "batch_external", "started": stamp, "summary": summary, "tasks": rows},
            indent=2,
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    print(table(rows, summary))
    print(f"summary: {summary_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
