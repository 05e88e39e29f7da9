"""Judging a results folder: every task result through the deterministic checks (``bench.checks``)
and, when a model is given, the LLM rubric judge (``bench.llm_judge``); writes ``judgments.json`` and
``summary.json`` beside the results.

The judges read only the results folder (the run records and the artifact digests the runner wrote,
``bench.observations`` indexes them), never a session and never GeoFaham's code, so they judge any
system that leaves the same evidence."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from statistics import mean, median
from typing import TYPE_CHECKING, Any

from .checks import deterministic
from .llm_judge import llm_judge
from .results_io import atomic_write_json, now, read_json, read_results
from .spec import load_expected

if TYPE_CHECKING:
    from geofaham_plugin.core.llm import LLM, ChatModel


def judge_folder(
    folder: Path | str,
    model: ChatModel | LLM | None = None,
    *,
    log: Callable[[str], None] = print,
    expected: dict | None = None,
    max_chars: int = 24000,
) -> dict:
    """Judge every result of one configuration's folder: deterministic always, the LLM judge when a
    ``model`` is given (earlier LLM judgements of unchanged results are kept). Writes judgments.json
    and summary.json; returns the judgments."""
    folder = Path(folder)
    path = folder / "judgments.json"
    previous = read_json(path, {}).get("tasks", {})
    expected = expected if expected is not None else load_expected()
    results = read_results(folder)
    tasks: dict[str, dict] = {}
    for result in results:
        entry: dict[str, Any] = {
            "result_finished_at": result.get("finished_at"),
            "deterministic": deterministic(result, expected),
        }
        old = previous.get(result["task_id"], {})
        if model is not None:
            entry["llm"] = llm_judge(result, model, expected, max_chars)
            log(
                f"judged {result['task_id']}: "
                + (f"{entry['llm']['overall']:.3f}" if "overall" in entry["llm"] else entry["llm"].get("error", ""))
            )
        elif old.get("llm") and old.get("result_finished_at") == result.get("finished_at"):
            entry["llm"] = old["llm"]
        tasks[result["task_id"]] = entry
    judgments = {"updated_at": now(), "tasks": tasks}
    atomic_write_json(path, judgments)
    det = [t["deterministic"] for t in tasks.values()]
    summary = summarize(results) | {
        "deterministic_pass": sum(d["passed"] for d in det),
        "deterministic_score_mean": round(sum(d["score"] for d in det) / len(det), 4) if det else None,
        "outcomes": outcome_counts(det),
        "llm_overall_mean": _mean([t["llm"]["overall"] for t in tasks.values() if "overall" in t.get("llm", {})]),
        "updated_at": now(),
    }
    atomic_write_json(folder / "summary.json", summary)
    return judgments


def outcome_counts(det: list[dict]) -> dict[str, Any]:
    """Correct / wrong but flagged / confidently wrong / no answer over the tasks with reference values,
    their rates, and the tasks without a reference apart (they are not in the rates)."""
    from .checks import OUTCOMES

    counts = {o: sum(d.get("outcome") == o for d in det) for o in OUTCOMES}
    ref = len(det) - counts["no_reference"]
    return counts | {
        "with_reference": ref,
        "correct_rate": round(counts["correct"] / ref, 4) if ref else None,
        "confident_wrong_rate": round(counts["confidently_wrong"] / ref, 4) if ref else None,
    }


def summarize(results: list[dict]) -> dict:
    """A quick roll-up of a folder's results (the report has the full picture)."""
    tokens = [r["tokens"]["total"] for r in results]
    secs = [r["wall_seconds"] for r in results]
    return {
        "tasks": len(results),
        "finished": sum(r["status"] == "finished" for r in results),
        "timeouts": sum(r["status"] == "timeout" for r in results),
        "errors": sum(r["status"] == "error" for r in results),
        "tokens_mean": round(mean(tokens), 1) if tokens else 0,
        "tokens_median": median(tokens) if tokens else 0,
        "seconds_mean": round(mean(secs), 1) if secs else 0,
        "seconds_median": round(median(secs), 1) if secs else 0,
    }


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None
