"""The bench judges what the answer states: deliberately wrong runs it must fail, and the right runs of
the same tasks it must pass. Each run is a result file in the format the runner writes (task spec, run
records with their structured answer, artifact digests), judged from a results folder like any other."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from bench.checks import deterministic
from bench.config import ModelConfig, judge_model
from bench.judge import judge_folder
from bench.report import write_report


# ------------------------------------------------------------------------------ builders
def spec(task_id: str, question: str, expectations: list[dict], follow_ups: list[dict] | None = None) -> dict:
    return {
        "id": task_id,
        "question": question,
        "persona": "gis_analyst",
        "category": "building_damage",
        "difficulty": "simple",
        "event_ids": [],
        "aoi": {"kind": "place", "place": "the user's area"},
        "offline": True,
        "expectations": expectations,
        "follow_ups": follow_ups or [],
    }


def table(aid: str, rows: list[dict], total: float | None = None, inputs: list[str] | None = None) -> dict:
    numbers = [float(v) for r in rows for v in r.values() if isinstance(v, (int, float))]
    return {
        "id": aid,
        "kind": "table",
        "source": "vector.count",
        "summary": "",
        "inputs": inputs or [],
        "metadata": {"kind": "table", "row_count": len(rows)},
        "extra": {"total": total} if total is not None else {},
        "rows": rows,
        "numbers": numbers,
        "file": {"exists": True, "readable": True},
    }


def value(label: str, v: float, aid: str, **kw: Any) -> dict:
    return {"label": label, "value": v, "artifact_id": aid} | kw


def run(
    question: str,
    answer: str,
    artifacts: list[str],
    values: list[dict] | None = None,
    status: str = "answered",
    yes_no: bool | None = None,
    not_applied: list[str] | None = None,
    structured: bool = True,
) -> dict:
    record: dict[str, Any] = {
        "question": question,
        "status": status,
        "answer": answer,
        "cited_artifacts": artifacts[-1:],
        "steps": [
            {"step_id": i + 1, "tool": "count", "status": "done", "artifact_id": a, "inputs": {}, "args": {}}
            for i, a in enumerate(artifacts)
        ],
        "plans": [{"ledger": {}, "plan": {"steps": []}}],
        "notes": [],
        "decisions": [],
        "progress": {"failures": [], "replans": 0},
    }
    if structured:
        record["structured"] = {
            "status": status,
            "values": values or [],
            "yes_no": yes_no,
            "not_applied": not_applied or [],
            "cited": artifacts[-1:],
        }
    return record


def result(task: dict, runs: list[dict], arts: list[dict]) -> dict:
    return {
        "task_id": task["id"],
        "task": task,
        "status": "finished",
        "error": None,
        "turns": [{"question": r["question"], "run": r} for r in runs],
        "artifacts": {a["id"]: a for a in arts},
        "tools": {},
        "tokens": {"total": 0, "prompt": 0, "completion": 0, "calls": 0},
        "wall_seconds": 1.0,
        "finished_at": "2026-12-01T00:00:00+00:00",
    }


# ------------------------------------------------------------------------------ the fixture set
DESTROYED = table("a_00000001", [{"value": "all", "count": 2722}], total=2722)
ALL_DAMAGED = table("a_00000002", [{"value": "all", "count": 3051}], total=3051)


def destroyed_right() -> dict:
    q = "How many structures were destroyed in the Eaton fire?"
    task = spec("fx_merged", q, [{"id": "count", "kind": "count", "description": "destroyed", "value": 2722}])
    r = run(
        q,
        "Eaton Fire: 2,722 destroyed structures [a_00000001].",
        ["a_00000001"],
        [value("destroyed structures", 2722, "a_00000001", subject="buildings")],
    )
    return result(task, [r], [DESTROYED])


def destroyed_merged() -> dict:
    """Merged classes given as one total: every damaged class counted as 'destroyed'."""
    out = destroyed_right()
    r = out["turns"][0]["run"]
    r["answer"], r["cited_artifacts"] = "Eaton Fire: 3,051 destroyed structures [a_00000002].", ["a_00000002"]
    r["steps"][0]["artifact_id"] = "a_00000002"
    r["structured"]["values"] = [value("destroyed structures", 3051, "a_00000002")]
    out["artifacts"] = {"a_00000002": ALL_DAMAGED}
    return out


AOI_3 = table("a_00000003", [{"value": "all", "count": 3}], total=3)
PERIMETER_7 = table("a_00000004", [{"value": "all", "count": 7}], total=7)


def aoi_right() -> dict:
    q = "How many hospitals are within 5 km of my area?"
    task = spec("fx_aoi", q, [{"id": "count", "kind": "count", "description": "hospitals near the AOI", "value": 3}])
    r = run(
        q,
        "3 hospitals within 5,000 m of your area [a_00000003].",
        ["a_00000003"],
        [value("hospitals", 3, "a_00000003")],
    )
    return result(task, [r], [AOI_3])


def aoi_ignored(flagged: bool = False) -> dict:
    """The user's area ignored: counted around the whole fire perimeter instead."""
    out = aoi_right()
    r = out["turns"][0]["run"]
    r["steps"][0]["artifact_id"] = "a_00000004"
    r["cited_artifacts"] = ["a_00000004"]
    r["structured"]["values"] = [value("hospitals", 7, "a_00000004")]
    r["answer"] = "7 hospitals within 5,000 m of the fire perimeter [a_00000004]."
    if flagged:
        r["status"] = r["structured"]["status"] = "partial"
        r["structured"]["not_applied"] = ["your area of interest"]
        r["answer"] = "**Not answered as asked.** Not applied: your area of interest.\n" + r["answer"]
    out["artifacts"] = {"a_00000004": PERIMETER_7}
    return out


SHARE = table("a_00000005", [{"inside": 188, "total": 1866, "share": 0.1007}])


def share_right() -> dict:
    q = "What share of the buildings lies inside the flood?"
    task = spec(
        "fx_share",
        q,
        [{"id": "share", "kind": "value", "description": "share", "value": 10.1, "abs_tol": 0.5, "unit": "%"}],
    )
    r = run(
        q,
        "10.07% of the buildings (188 of 1,866) lie inside the flood [a_00000005].",
        ["a_00000005"],
        [value("share of buildings inside the flood", 10.07, "a_00000005", measure="share", unit="percent")],
    )
    return result(task, [r], [SHARE])


def share_as_count() -> dict:
    """A count where a share was asked."""
    out = share_right()
    r = out["turns"][0]["run"]
    r["answer"] = "188 buildings lie inside the flood [a_00000005]."
    r["structured"]["values"] = [value("buildings inside the flood", 188, "a_00000005")]
    return out


def share_silent_x100() -> dict:
    """A fraction reported as if it were the percentage (no unit): not silently multiplied by 100."""
    out = share_right()
    r = out["turns"][0]["run"]
    r["answer"] = "The share is 0.1007 [a_00000005]."
    r["structured"]["values"] = [value("share", 0.1007, "a_00000005", measure="share", unit="none")]
    return out


STATION = table("a_00000006", [{"value": "fire station", "count": 1}], total=1)


def yes_no_right() -> dict:
    q = "Is the fire station inside the flood?"
    task = spec("fx_yes_no", q, [{"id": "inside", "kind": "boolean", "description": "inside", "value": True}])
    r = run(q, "Yes: the fire station intersects the flood polygon [a_00000006].", ["a_00000006"], yes_no=True)
    return result(task, [r], [STATION])


def yes_no_wrong() -> dict:
    out = yes_no_right()
    r = out["turns"][0]["run"]
    r["answer"] = "No: the fire station does not intersect the flood polygon [a_00000006]."
    r["structured"]["yes_no"] = False
    return out


BY_CLASS = table(
    "a_00000007", [{"value": "Destroyed (>50%)", "count": 2722}, {"value": "Major (26-50%)", "count": 105}]
)


def groups_right() -> dict:
    q = "How many structures per damage class?"
    task = spec(
        "fx_groups",
        q,
        [
            {
                "id": "by_class",
                "kind": "count_by",
                "description": "per class",
                "value": {"destroyed": 2722, "major": 105},
            }
        ],
    )
    vals = [
        value("destroyed", 2722, "a_00000007", group_field="DAMAGE", group="Destroyed (>50%)"),
        value("major", 105, "a_00000007", group_field="DAMAGE", group="Major (26-50%)"),
    ]
    answer = "| DAMAGE | count |\n|---|---|\n| Destroyed (>50%) | 2,722 |\n| Major (26-50%) | 105 |\n[a_00000007]"
    return result(task, [run(q, answer, ["a_00000007"], vals)], [BY_CLASS])


def groups_swapped() -> dict:
    """A wrong group's number: each class given the other's count."""
    out = groups_right()
    r = out["turns"][0]["run"]
    r["structured"]["values"][0]["value"], r["structured"]["values"][1]["value"] = 105, 2722
    r["answer"] = "| DAMAGE | count |\n|---|---|\n| Destroyed (>50%) | 105 |\n| Major (26-50%) | 2,722 |\n[a_00000007]"
    return out


def follow_up_right() -> dict:
    q1, q2 = "How many structures were damaged in the Eaton fire?", "Now only the destroyed ones"
    task = spec(
        "fx_follow_up",
        q1,
        [{"id": "count", "kind": "count", "description": "damaged", "value": 3051}],
        [{"question": q2, "expectations": [{"id": "fu1", "kind": "count", "description": "destroyed", "value": 2722}]}],
    )
    r1 = run(q1, "3,051 damaged structures [a_00000002].", ["a_00000002"], [value("damaged", 3051, "a_00000002")])
    r2 = run(q2, "2,722 destroyed structures [a_00000001].", ["a_00000001"], [value("destroyed", 2722, "a_00000001")])
    return result(task, [r1, r2], [ALL_DAMAGED, DESTROYED])


def follow_up_unfiltered() -> dict:
    """The follow-up's filter ignored: the first turn's total stated again (its table is right there)."""
    out = follow_up_right()
    r2 = out["turns"][1]["run"]
    r2["answer"], r2["cited_artifacts"] = "3,051 destroyed structures [a_00000002].", ["a_00000002"]
    r2["steps"][0]["artifact_id"] = "a_00000002"
    r2["structured"]["values"] = [value("destroyed", 3051, "a_00000002")]
    return out


def unsupported_number() -> dict:
    """The right count, stated from an artifact that does not hold it (no executed step computed it)."""
    out = aoi_right()
    out["artifacts"]["a_00000003"] = table("a_00000003", [{"value": "all", "count": 2}], total=2)
    return out


WRONG_RUNS = {
    # name: (right run, wrong run, the check that must fail, the outcome)
    "merged classes as one total": (destroyed_right, destroyed_merged, "value:count", "confidently_wrong"),
    "ignored AOI": (aoi_right, aoi_ignored, "value:count", "confidently_wrong"),
    "count where a share was asked": (share_right, share_as_count, "value:share", "confidently_wrong"),
    "fraction without its unit": (share_right, share_silent_x100, "value:share", "confidently_wrong"),
    "wrong yes/no": (yes_no_right, yes_no_wrong, "value:inside", "confidently_wrong"),
    "wrong group's number": (groups_right, groups_swapped, "value:by_class", "confidently_wrong"),
    "unfiltered follow-up": (follow_up_right, follow_up_unfiltered, "value:fu1", "confidently_wrong"),
    "number no artifact supports": (aoi_right, unsupported_number, "supported_numbers", "confidently_wrong"),
}


def checks_of(judged: dict) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for c in judged["checks"]:
        out.setdefault(c["name"], c)
        if c["passed"] is False:
            out[c["name"]] = c
    return out


@pytest.mark.parametrize("name", list(WRONG_RUNS))
def test_the_right_run_passes_and_the_wrong_one_fails(name: str) -> None:
    right, wrong, check, outcome = WRONG_RUNS[name]
    good = deterministic(right(), expected={})
    assert good["passed"], [c for c in good["checks"] if c["passed"] is False]
    assert good["outcome"] == "correct"
    bad = deterministic(wrong(), expected={})
    checks = checks_of(bad)
    assert checks[check]["passed"] is False, checks[check]
    assert not bad["passed"] and bad["outcome"] == outcome


def test_a_partial_run_naming_what_it_did_not_do_is_flagged_not_confident() -> None:
    bad = deterministic(aoi_ignored(flagged=True), expected={})
    assert checks_of(bad)["value:count"]["passed"] is False
    assert bad["outcome"] == "wrong_but_flagged"
    silent = aoi_ignored(flagged=True)  # partial, but the answer does not say what is missing
    r = silent["turns"][0]["run"]
    r["structured"]["not_applied"] = []
    r["answer"] = "7 hospitals within 5,000 m [a_00000004]."
    assert deterministic(silent, expected={})["outcome"] == "confidently_wrong"


def test_a_missing_answer_is_no_answer() -> None:
    out = destroyed_right()
    r = out["turns"][0]["run"]
    r["status"], r["answer"], r["structured"] = "running", "", None
    out["status"] = "timeout"
    assert deterministic(out, expected={})["outcome"] == "no_answer"


def test_old_records_without_a_structured_answer_are_judged_from_the_text_only() -> None:
    """No structured answer: the stated numbers come from the answer text, never from the artifacts."""
    good = destroyed_right()
    del good["turns"][0]["run"]["structured"]
    assert deterministic(good, expected={})["outcome"] == "correct"
    # the right table is cited, but the text states the all-class total: fails
    bad = copy.deepcopy(good)
    bad["artifacts"]["a_00000002"] = ALL_DAMAGED
    bad["turns"][0]["run"]["steps"].append(
        {"step_id": 2, "tool": "count", "status": "done", "artifact_id": "a_00000002", "inputs": {}, "args": {}}
    )
    bad["turns"][0]["run"]["answer"] = "Eaton Fire: 3,051 destroyed structures [a_00000001]."
    judged = deterministic(bad, expected={})
    assert checks_of(judged)["value:count"]["passed"] is False and judged["outcome"] == "confidently_wrong"
    # a yes/no from the text
    no = yes_no_wrong()
    del no["turns"][0]["run"]["structured"]
    assert checks_of(deterministic(no, expected={}))["value:inside"]["passed"] is False


def test_the_report_leads_with_correct_and_confident_wrong_rates(tmp_path: Path) -> None:
    folder = tmp_path / "fixtures"
    folder.mkdir()
    runs = [destroyed_right(), aoi_ignored(), aoi_ignored(flagged=True), yes_no_wrong()]
    for i, res in enumerate(runs):
        res["task_id"] = res["task"]["id"] = f"{res['task']['id']}_{i}"
        (folder / f"{res['task_id']}.json").write_text(json.dumps(res))
    online = destroyed_right()
    online["task_id"] = online["task"]["id"] = "fx_online"
    online["task"]["offline"] = False
    online["task"]["expectations"] = [{"id": "count", "kind": "count", "description": "no reference offline"}]
    (folder / "fx_online.json").write_text(json.dumps(online))
    (folder / "config.json").write_text(
        json.dumps({"config": {"name": "fx", "roles": {"default": {"embedded": True}}}})
    )
    judged = judge_folder(folder, log=lambda _: None)["tasks"]
    assert judged["fx_online"]["deterministic"]["outcome"] == "no_reference"
    summary = json.loads((folder / "summary.json").read_text())["outcomes"]
    assert summary["with_reference"] == 4 and summary["correct"] == 1 and summary["confidently_wrong"] == 2
    assert summary["confident_wrong_rate"] == 0.5
    md, _, headline = write_report(folder)
    text = md.read_text()
    table_start = text.index("## Headline")
    first = text[table_start:].split("| Tasks finished")[0]
    assert "**Correct** | **1/4 (25 %)**" in first and "**Confidently wrong** | **2/4 (50 %)**" in first
    assert "Tasks without reference values (online; not in the rates above) | 1" in first
    assert "not judged" in text and headline["det_pass"] == 1


def test_the_llm_judge_is_never_the_systems_own_model(tmp_path: Path) -> None:
    embedded = ModelConfig.model_validate({"name": "e", "roles": {"default": {"embedded": True}}})
    assert judge_model(embedded) is None  # no judge entry: not judged, not the planner's model
    self_judge = embedded.model_copy(update={"judge": embedded.roles["default"]})
    assert judge_model(self_judge) is None
    remote = ModelConfig.model_validate(
        {
            "name": "r",
            "roles": {"default": {"base_url": "http://x/v1", "model": "m-small"}},
            "judge": {"base_url": "http://x/v1", "model": "m-small"},
        }
    )
    assert judge_model(remote) is None
    other = remote.model_copy(update={"judge": remote.roles["default"].model_copy(update={"model": "m-judge"})})
    assert judge_model(other) is not None
    # an old judgement made by the system's own model is not reported as a score
    folder = tmp_path / "old"
    folder.mkdir()
    res = destroyed_right()
    (folder / "fx_merged.json").write_text(json.dumps(res))
    (folder / "config.json").write_text(json.dumps({"config": {"name": "e", "roles": {"default": {"embedded": True}}}}))
    (folder / "judgments.json").write_text(
        json.dumps(
            {
                "tasks": {
                    "fx_merged": {
                        "result_finished_at": res["finished_at"],
                        "llm": {"overall": 1.0, "scores": {}, "flags": {}, "model": "qwen2.5-coder-1.5b-instruct"},
                    }
                }
            }
        )
    )
    _, _, headline = write_report(folder)
    assert headline["llm_tasks"] == 0 and headline["self_judged"] == 1


def test_question_sets_are_separate_rows_of_the_report() -> None:
    """Paraphrases, other languages, AOI files and the user's own layers are reported apart from the originals."""
    from bench.report import split_table
    from bench.spec import load_tasks

    row = {"outcome": "correct"}
    rows = [
        {**row, "split": "original"},
        {**row, "split": "original", "outcome": "confidently_wrong"},
        {**row, "split": "language"},
        {**row, "split": "language", "outcome": "wrong_but_flagged"},
        {**row, "split": "language", "outcome": "no_reference"},
    ]
    table = split_table(rows)
    assert table[2] == "| Original tasks | 2 | 2 | 1/2 (50 %) | 1/2 (50 %) | 0/2 (0 %) | 0/2 (0 %) |"
    assert table[3] == "| Other languages | 3 | 2 | 1/2 (50 %) | 0/2 (0 %) | 1/2 (50 %) | 0/2 (0 %) |"
    assert len(table) == 4  # sets without tasks get no row
    assert {t.split for t in load_tasks()} == {"original"}  # today's 40 tasks are the originals
