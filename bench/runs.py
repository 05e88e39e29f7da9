"""Committed runs: the figures bench/README.md may state, and the tables made from them.

A run the README reports is kept under ``bench/runs/<date>-<commit>-<split>/``: its judge's ``summary.json``
(with the commit it ran at) and ``outcomes.json`` (one small row per task). ``python -m bench keep-run RESULTS
--split NAME`` writes both from a judged results folder; ``python -m bench report`` rebuilds the README's tables
from every kept run, one row per run naming its commit and split. A run of every task of its split is a
headline row; a run of part of a split (a re-run of a few tasks) is listed apart as a subset and never merged
into a headline figure."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from .results_io import atomic_write_json, read_json, read_results
from .spec import BENCH_DIR, load_tasks

RUNS_DIR = BENCH_DIR / "runs"
README = BENCH_DIR / "README.md"
BEGIN = "<!-- bench report: the tables below are made from bench/runs/*/summary.json by `python -m bench report` -->"
END = "<!-- end of bench report -->"
FOLDER = re.compile(r"^(\d{4}-\d{2}-\d{2})-([0-9a-f]{7,40}(?:-dirty)?)-([a-z0-9_]+)$")
#: a split name -> the task file and which of its tasks: a file's offline tasks, or those of one ``split`` value
SPLIT_FILES = {"offline": "tasks.json", "paraphrases": "paraphrases.json", "heldout": "heldout.json"}
SPLIT_FILES |= {"heldout2": "heldout2.json", "heldout3": "heldout3.json", "heldout4": "heldout4.json"}
SPLIT_FILES |= {"heldout5": "heldout5.json", "heldout6": "heldout6.json", "heldout7": "heldout7.json"}
SPLIT_FILES |= {"heldout8": "heldout8.json", "heldout9": "heldout9.json", "heldout10": "heldout10.json"}
SPLIT_FILES |= {"heldout11": "heldout11.json", "heldout12": "heldout12.json", "heldout13": "heldout13.json"}
SPLIT_FILES |= {"heldout14": "heldout14.json"}
SPLIT_FILES |= {"raster": "raster.json"}


class Outcomes(BaseModel):
    model_config = ConfigDict(extra="ignore")

    correct: int
    wrong_but_flagged: int
    confidently_wrong: int
    no_answer: int
    no_reference: int = 0
    with_reference: int


class RunSummary(BaseModel):
    """The judge's summary.json of a kept run (``bench.judge``), with the commit it ran at."""

    model_config = ConfigDict(extra="allow")

    tasks: int
    finished: int
    timeouts: int
    errors: int
    outcomes: Outcomes
    commit: str
    seconds_median: float | None = None


class TaskOutcome(BaseModel):
    model_config = ConfigDict(extra="allow")

    task: str
    outcome: str
    status: str
    seconds: float | None = None


class KeptRun(BaseModel):
    folder: str
    date: str
    commit: str
    split: str
    summary: RunSummary
    outcomes: list[TaskOutcome]
    #: how many tasks the split has (None: an unknown split)
    split_tasks: int | None

    @property
    def whole(self) -> bool:
        """Every task of the split ran in this run (and nothing else)."""
        ids = split_task_ids(self.split)
        return ids is not None and {o.task for o in self.outcomes} == ids


def split_task_ids(split: str) -> set[str] | None:
    """The ids of a split's tasks: a task file's offline tasks by its name (``heldout``), or the offline tasks of
    every file whose ``split`` field is ``split`` (``language``); None for a split no task file has."""
    if split in SPLIT_FILES:
        return {t.id for t in load_tasks(BENCH_DIR / SPLIT_FILES[split]) if t.offline}
    ids = {t.id for f in set(SPLIT_FILES.values()) for t in load_tasks(BENCH_DIR / f) if t.offline and t.split == split}
    return ids or None


def read_run(folder: Path) -> KeptRun:
    m = FOLDER.match(folder.name)
    if m is None:
        raise ValueError(f"{folder}: a kept run's folder is named <date>-<commit>-<split>")
    date, commit, split = m.groups()
    summary = RunSummary.model_validate(read_json(folder / "summary.json"))
    if not commit.startswith(summary.commit[:7]) and not summary.commit.startswith(commit):
        raise ValueError(f"{folder}: its summary says commit {summary.commit}")
    outcomes = [TaskOutcome.model_validate(o) for o in read_json(folder / "outcomes.json", [])]
    if len(outcomes) != summary.tasks:
        raise ValueError(f"{folder}: {len(outcomes)} task outcomes for {summary.tasks} tasks")
    ids = split_task_ids(split)
    return KeptRun(
        folder=folder.name,
        date=date,
        commit=commit,
        split=split,
        summary=summary,
        outcomes=outcomes,
        split_tasks=len(ids) if ids is not None else None,
    )


def kept_runs(root: Path = RUNS_DIR) -> list[KeptRun]:
    """Every kept run, oldest first (by date, then by when it was judged)."""
    runs = [read_run(p) for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
    return sorted(runs, key=lambda r: (r.date, str((r.summary.model_extra or {}).get("updated_at", "")), r.folder))


def _share(n: int, of: int) -> str:
    return f"{n}/{of} ({100 * n / of:.0f} %)" if of else "–"


def _row(run: KeptRun) -> str:
    o, s = run.summary.outcomes, run.summary
    ran = f"{s.tasks}/{run.split_tasks}" if run.split_tasks is not None else f"{s.tasks} (unknown split)"
    median = f"{s.seconds_median:.1f}" if s.seconds_median is not None else "–"
    return (
        f"| `{run.split}` | {run.commit} | {run.date} | {ran} | {_share(o.correct, o.with_reference)} | "
        f"{_share(o.confidently_wrong, o.with_reference)} | {_share(o.wrong_but_flagged, o.with_reference)} | "
        f"{o.no_answer} | {median} | `bench/runs/{run.folder}/` |"
    )


HEADER = (
    "| Split | Commit | Date | Tasks run | Correct | Confidently wrong | Wrong but flagged | No answer | Median s/task "
    "| Files |\n|---|---|---|---|---|---|---|---|---|---|"
)


def runs_tables(runs: list[KeptRun]) -> str:
    """The README's tables: the runs of whole splits (headline figures), then re-runs of part of a split."""
    whole = [r for r in runs if r.whole]
    part = [r for r in runs if not r.whole]
    lines = [BEGIN, "", "**Runs of a whole split** (every task of the split in one session; the headline figures):", ""]
    lines += [HEADER, *map(_row, whole)] if whole else ["(none kept yet)"]
    lines += ["", "**Re-runs of part of a split** (subsets: never a headline figure, never merged into one):", ""]
    lines += [HEADER, *map(_row, part)] if part else ["(none kept)"]
    return "\n".join([*lines, "", END])


def rebuild_readme(readme: Path = README, root: Path = RUNS_DIR) -> tuple[str, bool]:
    """The README with its tables made anew from the kept runs, and whether that changed it."""
    text = readme.read_text(encoding="utf-8")
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{readme} has no place for the tables ({BEGIN!r} ... {END!r})")
    new = text[:start] + runs_tables(kept_runs(root)) + text[end + len(END) :]
    return new, new != text


def current_commit(cwd: Path = BENCH_DIR) -> str:
    """The short commit checked out, ``-dirty`` when tracked files have uncommitted changes; '' outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=cwd, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "-uno"], cwd=cwd, capture_output=True, text=True)
    except OSError:
        return ""
    if head.returncode:
        return ""
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def keep_run(results: Path, split: str, root: Path = RUNS_DIR, commit: str | None = None) -> Path:
    """Keep a judged results folder's summary and per-task outcomes under ``root/<date>-<commit>-<split>/``.
    The commit is the one the runner recorded in config.json (the run's, not today's), else ``commit``."""
    config = read_json(results / "config.json", {})
    commit = config.get("commit") or commit
    if not commit:
        raise ValueError(f"{results}/config.json records no commit: name it (--commit)")
    summary = read_json(results / "summary.json")
    judged = read_json(results / "judgments.json", {}).get("tasks", {})
    if summary is None or not judged:
        raise ValueError(f"{results} is not judged: run python -m bench judge {results} first")
    outcomes = [
        TaskOutcome(
            task=r["task_id"],
            outcome=judged[r["task_id"]]["deterministic"]["outcome"],
            status=(r.get("turns") or [{}])[-1].get("run", {}).get("status") or r["status"],
            seconds=r.get("wall_seconds"),
        ).model_dump()
        for r in read_results(results)
        if r["task_id"] in judged
    ]
    date = str(config.get("updated_at") or summary.get("updated_at"))[:10]
    folder = root / f"{date}-{commit}-{split}"
    atomic_write_json(folder / "summary.json", summary | {"commit": commit, "split": split})
    atomic_write_json(folder / "outcomes.json", sorted(outcomes, key=lambda o: o["task"]))
    read_run(folder)  # what was written reads back as a kept run
    return folder
