"""The README's figures come from kept runs: ``bench/runs/<date>-<commit>-<split>/`` (summary and per-task
outcomes), made into the README's tables by ``python -m bench report``; a re-run of part of a split is listed
apart, never as a headline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.cli import main
from bench.runs import README, RUNS_DIR, SPLIT_FILES, keep_run, kept_runs, read_run, rebuild_readme, runs_tables
from bench.spec import BENCH_DIR

HELDOUT2 = RUNS_DIR / "2026-12-03-73aedae-heldout2"


def test_the_readme_tables_are_made_from_the_kept_runs() -> None:
    _, changed = rebuild_readme()
    assert not changed, "bench/README.md's tables are stale: run python -m bench report"
    text = README.read_text(encoding="utf-8")
    for run in kept_runs():
        assert f"`bench/runs/{run.folder}/`" in text and run.commit in text
    assert main(["report", "--check"]) == 0


def test_every_task_file_is_a_split() -> None:
    """Every task file in bench/ (a JSON file with a ``tasks`` list) is a split kept runs are read against, and so
    one the tests that iterate the split files (the judge's generated swap fixtures) cover."""
    files = {
        p.name
        for p in BENCH_DIR.glob("*.json")
        if isinstance(json.loads(p.read_text(encoding="utf-8")).get("tasks"), list)
    }
    assert files == set(SPLIT_FILES.values()) and "heldout3.json" in files


def test_every_kept_run_names_its_commit_and_split_and_holds_every_task() -> None:
    runs = kept_runs()
    assert runs, "no kept run"
    for run in runs:
        assert run.summary.commit.startswith(run.commit[:7]) and run.split
        assert len(run.outcomes) == run.summary.tasks
        counts = run.summary.outcomes
        assert sum(o.outcome == "correct" for o in run.outcomes) == counts.correct
        assert sum(o.outcome == "confidently_wrong" for o in run.outcomes) == counts.confidently_wrong


def _subset_of(source: Path, root: Path, keep: int) -> Path:
    """A kept run of the first ``keep`` tasks of ``source``'s split, run again at another commit."""
    folder = root / source.name.replace("73aedae", "1234567")
    folder.mkdir(parents=True)
    outcomes = json.loads((source / "outcomes.json").read_text())[:keep]
    summary = json.loads((source / "summary.json").read_text())
    summary["tasks"], summary["commit"], summary["updated_at"] = keep, "1234567", "2026-12-03T23:00:00+00:00"
    summary["outcomes"] = {o: sum(x["outcome"] == o for x in outcomes) for o in ("correct", "wrong_but_flagged")}
    summary["outcomes"] |= {"confidently_wrong": 0, "no_answer": 0, "with_reference": keep}
    (folder / "outcomes.json").write_text(json.dumps(outcomes))
    (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def test_a_rerun_of_part_of_a_split_is_a_subset_row_never_a_headline(tmp_path: Path) -> None:
    shutil.copytree(HELDOUT2, tmp_path / HELDOUT2.name)
    _subset_of(HELDOUT2, tmp_path, 4)
    runs = kept_runs(tmp_path)
    assert [(r.commit, r.whole) for r in runs] == [("73aedae", True), ("1234567", False)]
    headline, subsets = runs_tables(runs).split("**Re-runs of part of a split**")
    assert "| 73aedae |" in headline and "1234567" not in headline
    assert "| `heldout2` | 1234567 | 2026-12-03 | 4/30 |" in subsets


def test_a_kept_run_must_agree_with_itself(tmp_path: Path) -> None:
    bad = tmp_path / "2026-12-03-abcdef1-heldout2"
    shutil.copytree(HELDOUT2, bad)
    with pytest.raises(ValueError, match="commit 73aedae"):
        read_run(bad)  # the folder names another commit than its summary
    shutil.rmtree(bad)
    short = _subset_of(HELDOUT2, tmp_path, 4)
    (short / "outcomes.json").write_text("[]")
    with pytest.raises(ValueError, match="0 task outcomes for 4 tasks"):
        read_run(short)


def test_keep_run_takes_the_commit_the_runner_recorded(tmp_path: Path) -> None:
    from test_bench_judge_fixtures import aoi_ignored, destroyed_right

    from bench.judge import judge_folder

    results = tmp_path / "results"
    results.mkdir()
    for res in (destroyed_right(), aoi_ignored()):
        (results / f"{res['task_id']}.json").write_text(json.dumps(res))
    (results / "config.json").write_text(json.dumps({"config": {"name": "fx"}, "commit": "abc1234"}))
    judge_folder(results, log=lambda _: None)
    kept = keep_run(results, "fixtures", root=tmp_path / "runs")
    run = read_run(kept)
    assert kept.name.startswith(str(run.date)) and (run.commit, run.split) == ("abc1234", "fixtures")
    assert {o.task: o.outcome for o in run.outcomes} == {"fx_merged": "correct", "fx_aoi": "confidently_wrong"}
    assert run.summary.seconds_median == 1.0 and not run.whole  # no task file has that split: never a headline
