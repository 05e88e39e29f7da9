"""The bench judges what the answer states: deliberately wrong runs it must fail, and the right runs of
the same tasks it must pass. Each run is a result file in the format the runner writes (task spec, run
records with their structured answer, artifact digests), judged from a results folder like any other."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from bench.checks import deterministic, want_unit
from bench.config import ModelConfig, judge_model
from bench.judge import judge_folder
from bench.report import write_report
from bench.runs import SPLIT_FILES
from bench.spec import BENCH_DIR, Expectation, TaskSpec, Turn, load_expected, load_tasks


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


def layer(aid: str, source: str, inputs: list[str] | None = None, extra: dict | None = None, **digest: Any) -> dict:
    """A vector artifact's digest: made by ``source`` from ``inputs``; names, distances as the runner digests them."""
    return {
        "id": aid,
        "kind": "vector",
        "source": source,
        "summary": "",
        "inputs": inputs or [],
        "metadata": {"kind": "vector", "feature_count": len(digest.get("names", []))},
        "extra": extra or {},
        "numbers": [float(d) for _, d in digest.get("distances", [])],
        "file": {"exists": True, "readable": True},
    } | digest


#: the Eaton (record 11) and Palisades (records 12-14, one fire) perimeters, the hospitals near each, counted
EATON_HOSPITALS = [
    layer("a_00000011", "vector.load_event_layer:eaton_perimeter", extra={"event_id": 11}),
    layer("a_00000012", "vector.load_event_layer:palisades_perimeter", extra={"event_id": 13}),
    table("a_00000013", [{"value": "all", "count": 7}], total=7, inputs=["a_00000011"]),
    table("a_00000014", [{"value": "all", "count": 3}], total=3, inputs=["a_00000012"]),
]


def two_values(task_id: str, q: str, labels: list[tuple[str, dict]], arts: list[dict], said: str) -> dict:
    """A turn asking for two numbers, each with its label (``labels``: expectation id and its label fields); the
    last two artifacts hold them. ``said`` gives each its number: the right ones, or others (a swap)."""
    numbers = [arts[-2]["rows"][0]["count"], arts[-1]["rows"][0]["count"]]
    stated = [float(n) for n in said.split()] if said else numbers
    expectations = [
        {"id": eid, "kind": "count", "description": eid, "value": n} | label
        for (eid, label), n in zip(labels, numbers, strict=True)
    ]
    ids = [arts[-2]["id"], arts[-1]["id"]]
    vals = [value(eid, n, aid) for (eid, _), n, aid in zip(labels, stated, ids, strict=True)]
    answer = "; ".join(f"{eid}: {n:g} [{aid}]" for (eid, _), n, aid in zip(labels, stated, ids, strict=True))
    r = run(q, answer, [a["id"] for a in arts], vals)
    r["cited_artifacts"] = r["structured"]["cited"] = ids
    return result(spec(task_id, q, expectations), [r], arts)


def comparison(said: str = "") -> dict:
    """Each fire's count. Which fire a value is of is read from the result it names (its lineage reaches the
    Eaton or the Palisades record), never from its label's words."""
    labels = [("eaton", {"events": [11]}), ("palisades", {"events": [12, 13, 14]})]
    q = "How many hospitals are within 5 km of each fire, Eaton and Palisades?"
    return two_values("fx_comparison", q, labels, EATON_HOSPITALS, said)


def comparison_right() -> dict:
    return comparison()


def comparison_swapped() -> dict:
    """Each fire given the other's number."""
    return comparison("3 7")


BURN_LABELS = [
    layer("a_00000021", "vector.load_layer:lahaina_labels"),
    layer("a_00000022", "vector.load_event_layer:lahaina_burn", extra={"event_id": 16}),
    layer("a_00000023", "vector.inside", ["a_00000021", "a_00000022"]),
    layer("a_00000024", "vector.outside", ["a_00000021", "a_00000022"], extra={"relation": "outside"}),
    table("a_00000025", [{"value": "all", "count": 33}], total=33, inputs=["a_00000023"]),
    table("a_00000026", [{"value": "all", "count": 2}], total=2, inputs=["a_00000024"]),
]


def relation(said: str = "") -> dict:
    labels = [("inside", {"relation": "inside"}), ("outside", {"relation": "outside"})]
    q = "How many damaged-building labels lie inside the burn area, and how many outside?"
    return two_values("fx_relation", q, labels, BURN_LABELS, said)


def relation_right() -> dict:
    return relation()


def relation_swapped() -> dict:
    """Inside and outside exchanged: the outside count stated as the inside one and back."""
    return relation("2 33")


NEAREST = layer(
    "a_00000031",
    "vector.nearest",
    names=["Huntington Hospital", "USC Arcadia"],
    distances=[["Huntington Hospital", 2090.0], ["USC Arcadia", 4120.0]],
)


def names_right() -> dict:
    q = "Which two hospitals are nearest to the Eaton fire, and how far?"
    task = spec(
        "fx_names",
        q,
        [
            {"id": "names", "kind": "names", "description": "the two", "value": ["Huntington Hospital", "USC Arcadia"]},
            {
                "id": "km",
                "kind": "distance",
                "description": "their distances",
                "value": {"Huntington Hospital": 2090.0, "USC Arcadia": 4120.0},
                "abs_tol": 5,
            },
        ],
    )
    answer = "1. Huntington Hospital, 2,090 m\n2. USC Arcadia, 4,120 m [a_00000031]"
    r = run(q, answer, ["a_00000031"])
    r["structured"]["items"] = [
        {"name": "Huntington Hospital", "distance_m": 2090.0, "rank": 1, "artifact_id": "a_00000031"},
        {"name": "USC Arcadia", "distance_m": 4120.0, "rank": 2, "artifact_id": "a_00000031"},
    ]
    return result(task, [r], [NEAREST])


def names_only_in_the_artifact() -> dict:
    """The answer names no feature (its structured answer has no items): the cited layer's names and distances
    are what the run computed, not what it answered."""
    out = names_right()
    out["turns"][0]["run"]["structured"]["items"] = []
    return out


def number_only_in_the_notes() -> dict:
    """A number the run wrote in its own notes, stated as a finding: no artifact holds it."""
    out = aoi_right()
    r = out["turns"][0]["run"]
    r["notes"] = ["assumed 12,500 people per hospital"]
    r["answer"] += " About 12,500 people depend on each."
    return out


def partial_naming_nothing() -> dict:
    """A partial run that says it is partial but names no part of the question it left out."""
    out = aoi_ignored()
    r = out["turns"][0]["run"]
    r["status"] = r["structured"]["status"] = "partial"
    r["answer"] = "Partial answer: could not do everything.\n" + r["answer"]
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
    # a label each: the value of each event, each relation, read from what the artifacts are of (ids, not words)
    "two events' values swapped": (comparison_right, comparison_swapped, "value:eaton", "confidently_wrong"),
    "inside and outside swapped": (relation_right, relation_swapped, "value:inside", "confidently_wrong"),
    # names and distances from the structured answer only, supported numbers from artifacts only
    "names only in the cited artifact": (names_right, names_only_in_the_artifact, "value:names", "confidently_wrong"),
    "distances only in the cited artifact": (names_right, names_only_in_the_artifact, "value:km", "confidently_wrong"),
    "number only in the run's notes": (aoi_right, number_only_in_the_notes, "supported_numbers", "confidently_wrong"),
    # "flagged" names the part not applied
    "partial naming no part": (aoi_right, partial_naming_nothing, "value:count", "confidently_wrong"),
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


def test_labels_are_read_from_ids_not_from_words() -> None:
    """The words of a stated value's label tell the judge nothing: other words, in another language, or even
    the other fire's name, leave a right run right and a swapped one wrong."""
    out = comparison_right()
    values = out["turns"][0]["run"]["structured"]["values"]
    values[0]["label"], values[1]["label"] = "hospitales, incendio de Palisades", "hôpitaux, feu d'Eaton"
    assert deterministic(out, expected={})["outcome"] == "correct"
    bad = comparison_swapped()
    for v in bad["turns"][0]["run"]["structured"]["values"]:
        v["label"] = "hospitais"
    assert checks_of(deterministic(bad, expected={}))["value:eaton"]["passed"] is False


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


# ------------------------------------------------------------------ swaps, generated from the task files
#: the unit a stated value is written in for an expectation's unit, and the factor to it
STATED_UNIT: dict[str, tuple[str, float]] = {
    "count": ("count", 1.0),
    "%": ("percent", 1.0),
    "fraction": ("ratio", 1.0),
    "ha": ("km2", 0.01),
    "km2": ("km2", 1.0),
    "m2": ("m2", 1.0),
    "m": ("m", 1.0),
    "km": ("km", 1.0),
    "none": ("none", 1.0),
}
DEFAULT_MEASURE = {"count": "count", "percent": "share", "ratio": "share", "km2": "area", "m2": "area"}


class Stated(NamedTuple):
    """One value a right run states: the expectation (and group of a breakdown) it answers, and the number."""

    expectation: Expectation
    group: str | None
    number: float


def numbers_of(turn: Turn, expected: dict) -> list[Stated]:
    out = []
    for e in turn.expectations:
        if e.kind in ("count", "value"):
            out.append(Stated(e, e.group, float(e.resolve(expected))))
        elif e.kind == "count_by":
            out += [Stated(e, str(k), float(v)) for k, v in e.resolve(expected).items()]
    return out


def labelled_turns() -> list[tuple[str, str, int]]:
    """(file, task, turn) of every offline turn that asks for two or more different numbers, in every task file (the
    files of the bench's splits, ``bench.runs.SPLIT_FILES``); a turn whose numbers are all one number within their
    tolerances (two flooded, two dry; 3.52 km of road, 3.50 km of it flooded) has no swap to see."""
    expected = load_expected()

    def differ(stated: list) -> bool:
        return any(
            not (a.expectation.within(b.number, a.number) and b.expectation.within(a.number, b.number))
            for i, a in enumerate(stated)
            for b in stated[i + 1 :]
        )

    return [
        (name, t.id, i)
        for name in dict.fromkeys(Path(f).stem for f in SPLIT_FILES.values())
        for t in load_tasks(BENCH_DIR / f"{name}.json")
        if t.offline
        for i, turn in enumerate(t.turns())
        if differ(numbers_of(turn, expected))
    ]


def right_run_of(task: TaskSpec, turn_index: int, expected: dict) -> tuple[dict, list[Stated]]:
    """A run that states every number of the turn with the labels its expectation names, each read from a table
    whose lineage carries them (the event records' layers, an inside or outside selection)."""
    turn = task.turns()[turn_index]
    stated, arts, values = numbers_of(turn, expected), [], []
    for n, s in enumerate(stated):
        e, aid = s.expectation, f"a_{n + 1:08d}"
        inputs = []
        for eid in e.events:
            arts.append(layer(f"{aid}e{eid}", "vector.load_event_layer:x", extra={"event_id": eid}))
            inputs.append(arts[-1]["id"])
        if e.relation in ("inside", "outside"):
            arts.append(layer(f"{aid}r", f"vector.{e.relation}", list(inputs)))
            inputs = [arts[-1]["id"]]
        unit, factor = STATED_UNIT[want_unit(e)]
        number = s.number * factor
        arts.append(table(aid, [{"value": s.group or "all", "amount": number}], inputs=inputs))
        measure = e.measure or DEFAULT_MEASURE.get(unit, "value")
        values.append(
            value(e.id, number, aid, unit=unit, measure=measure, group=s.group, group_field="g" * bool(s.group))
        )
    runs = [run(t.question, "", []) for t in task.turns()]
    runs[turn_index] = run(turn.question, "See the table.", [a["id"] for a in arts], values)
    return result(task.model_dump(mode="json"), runs, arts), stated


def value_checks(judged: dict, turn_index: int) -> dict[str, dict]:
    return {c["name"]: c for c in judged["checks"] if c["name"].startswith("value:") and c["turn"] == turn_index}


@pytest.mark.parametrize(("name", "task_id", "turn"), labelled_turns())
def test_a_swap_of_two_labelled_values_fails(name: str, task_id: str, turn: int) -> None:
    """Every turn with two or more numbers: the right run (each number under its own label) passes every value
    check; each run that swaps two of its numbers (the labels kept) fails one of them. Pairs of equal numbers
    (within tolerance) cannot be told apart and are not swapped."""
    expected = load_expected()
    task = next(t for t in load_tasks(BENCH_DIR / f"{name}.json") if t.id == task_id)
    good, stated = right_run_of(task, turn, expected)
    checks = value_checks(deterministic(good, expected), turn)
    numeric = {f"value:{s.expectation.id}" for s in stated}
    assert all(checks[c]["passed"] for c in numeric), [checks[c] for c in numeric if not checks[c]["passed"]]
    pairs = [(a, b) for a in range(len(stated)) for b in range(a + 1, len(stated))]
    swapped = 0
    for a, b in pairs:
        sa, sb = stated[a], stated[b]
        if sa.expectation.within(sb.number, sa.number) and sb.expectation.within(sa.number, sb.number):
            continue  # the same number twice: no swap to see
        bad = copy.deepcopy(good)
        values = bad["turns"][turn]["run"]["structured"]["values"]
        values[a]["value"], values[b]["value"] = values[b]["value"], values[a]["value"]
        checks = value_checks(deterministic(bad, expected), turn)
        names = {f"value:{sa.expectation.id}", f"value:{sb.expectation.id}"}
        assert any(checks[n]["passed"] is False for n in names), (sa, sb, [checks[n] for n in names])
        swapped += 1
    assert swapped, "no two numbers of the turn differ"
