"""The deterministic checks judge the typed measure tools fairly: an area answered by ``measure(quantity=area)``
(geodesic km²), a length by ``measure(quantity=length)``, a share by ``share``, "outside" by ``outside``, a mean
or a sum by ``stats`` / ``sum_by`` pass the predicate and metric checks; the wrong tool or a missing step still
fails. Each case is a small result file in the format the runner writes (task spec, run record with its steps
and structured answer, artifact digests, the core's tool flags)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.checks import deterministic
from bench.observations import predicate_done

TOOLS = {
    "load_event_layer": {"agent": "vector", "metric": False},
    "select_damage": {"agent": "vector", "metric": False},
    "inside": {"agent": "vector", "metric": False},
    "outside": {"agent": "vector", "metric": False},
    "count": {"agent": "vector", "metric": False},
    "share": {"agent": "vector", "metric": False},
    "measure": {"agent": "vector", "metric": False},
    "stats": {"agent": "vector", "metric": False},
    "sum_by": {"agent": "vector", "metric": False},
    "sql_table": {"agent": "vector", "metric": False},
    "buffer": {"agent": "vector", "metric": True},
}


# ------------------------------------------------------------------------------ builders
def layer(aid: str, n: int, *, geographic: bool = True, inputs: list[str] | None = None) -> dict:
    return {
        "id": aid,
        "kind": "vector",
        "source": "vector.load_event_layer:fx_layer",
        "summary": f"{n} features",
        "inputs": inputs or [],
        "metadata": {"kind": "vector", "feature_count": n, "crs": "EPSG:4326", "crs_is_geographic": geographic},
        "extra": {},
        "numbers": [float(n)],
        "file": {"exists": True, "readable": True},
    }


def table(aid: str, rows: list[dict], inputs: list[str], summary: str = "", extra: dict | None = None) -> dict:
    numbers = [float(v) for r in rows for v in r.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return {
        "id": aid,
        "kind": "table",
        "source": "vector.fx",
        "summary": summary,
        "inputs": inputs,
        "metadata": {"kind": "table", "row_count": len(rows)},
        "extra": extra or {},
        "rows": rows,
        "numbers": numbers,
        "file": {"exists": True, "readable": True},
    }


def step(i: int, tool: str, artifact: str, inputs: dict[str, str] | None = None, **args: Any) -> dict:
    return {"step_id": i, "tool": tool, "status": "done", "artifact_id": artifact, "inputs": inputs or {}, "args": args}


def task(
    question: str, predicates: list[str], expectation: dict, crs: list[str] | None = None, task_id: str = "fx"
) -> dict:
    return {
        "id": task_id,
        "question": question,
        "persona": "gis_analyst",
        "category": "building_damage",
        "difficulty": "simple",
        "event_ids": [],
        "aoi": {"kind": "place", "place": "the user's area"},
        "offline": True,
        "required_predicates": predicates,
        "crs_constraints": crs or [],
        "expectations": [expectation],
    }


def result(spec: dict, steps: list[dict], arts: list[dict], answer: str, values: list[dict]) -> dict:
    cited = [steps[-1]["artifact_id"]]
    run = {
        "question": spec["question"],
        "status": "answered",
        "answer": answer,
        "cited_artifacts": cited,
        "steps": steps,
        "plans": [{"ledger": {}, "plan": {"steps": []}}],
        "notes": [],
        "decisions": [],
        "progress": {"failures": [], "replans": 0},
        "structured": {"status": "answered", "values": values, "yes_no": None, "not_applied": [], "cited": cited},
    }
    return {
        "task_id": spec["id"],
        "task": spec,
        "status": "finished",
        "error": None,
        "turns": [{"question": spec["question"], "run": run}],
        "artifacts": {a["id"]: a for a in arts},
        "tools": TOOLS,
        "tokens": {"total": 0, "prompt": 0, "completion": 0, "calls": 0},
        "wall_seconds": 1.0,
        "finished_at": "2026-12-01T00:00:00+00:00",
    }


def value(label: str, v: float, aid: str, measure: str = "count", unit: str = "count") -> dict:
    return {"label": label, "value": v, "measure": measure, "unit": unit, "artifact_id": aid}


def judged(res: dict) -> tuple[dict, dict[str, dict]]:
    out = deterministic(res, expected={})
    checks: dict[str, dict] = {}
    for c in out["checks"]:
        if c["name"] not in checks or c["passed"] is False:
            checks[c["name"]] = c
    return out, checks


def assert_correct(res: dict) -> dict[str, dict]:
    out, checks = judged(res)
    failed = [c for c in out["checks"] if c["passed"] is False]
    assert out["passed"] and not failed, failed
    assert out["outcome"] == "correct"
    return checks


# ------------------------------------------------------------------------------ area and length
AREA_Q = "How big is the fire perimeter, in square kilometres?"
AREA_EXP = {"id": "area_km2", "kind": "value", "description": "area", "value": 62.9, "rel_tol": 0.02, "unit": "km2"}


def area_run(quantity: str = "area", geodesic: bool = True) -> dict:
    spec = task(AREA_Q, ["area"], AREA_EXP, ["metric_for_area"])
    what = "area" if quantity == "area" else "perimeter"
    summary = f"{'geodesic' if geodesic else 'planar'} {what} of a_00000001: 62.9151 km² (6291.51 ha)"
    measured = table(
        "a_00000002",
        [{"value": "all", "area_km2": 62.9151, "area_ha": 6291.51, "features": 1}],
        ["a_00000001"],
        summary,
        {"quantity": quantity, "measured": what, "unit": "km2", "total": 62.9151},
    )
    steps = [
        step(1, "load_event_layer", "a_00000001", event_id=11, role="hazard"),
        step(2, "measure", "a_00000002", {"layer": "a_00000001"}, quantity=quantity, by=None),
    ]
    answer = "The fire perimeter: area: 62.9 km² (6,292 ha) [a_00000002]."
    return result(
        spec, steps, [layer("a_00000001", 1), measured], answer, [value("area", 62.9, "a_00000002", "area", "km2")]
    )


def test_an_area_measured_geodesically_passes_the_area_predicate_and_the_metric_check() -> None:
    checks = assert_correct(area_run())
    assert "metric step" in checks["metric_crs"]["detail"]  # geographic input, geodesic measure: no projection needed


def test_an_area_from_the_wrong_quantity_or_without_a_geodesic_measure_fails() -> None:
    _, checks = judged(area_run(quantity="length"))
    assert checks["predicates"]["passed"] is False and "missing ['area']" in checks["predicates"]["detail"]
    _, checks = judged(area_run(geodesic=False))  # a planar area of lon/lat polygons is no metric operation
    assert checks["metric_crs"]["passed"] is False
    assert "needs a metric operation" in checks["metric_crs"]["detail"]


def length_run(quantity: str = "length") -> dict:
    exp = {"id": "length_km", "kind": "value", "description": "length", "value": 41.2, "rel_tol": 0.05, "unit": "km"}
    spec = task("What length of road lies inside the flood, in kilometres?", ["clip", "length"], exp)
    spec["crs_constraints"] = ["metric_for_distance"]
    roads = layer("a_00000001", 834)
    clipped = layer("a_00000002", 834, inputs=["a_00000001"])
    measured = table(
        "a_00000003",
        [{"value": "all", "length_km": 41.2, "features": 834}],
        ["a_00000002"],
        "geodesic length of a_00000002: 41.2 km (lines merged first, so shared segments are counted once)",
        {"quantity": quantity, "measured": "length", "unit": "km", "total": 41.2},
    )
    steps = [
        step(1, "load_event_layer", "a_00000001"),
        step(2, "clip", "a_00000002", {"features": "a_00000001"}),
        step(3, "measure", "a_00000003", {"layer": "a_00000002"}, quantity=quantity, by=None),
    ]
    answer = "Roads inside the flood: length: 41.2 km [a_00000003]."
    vals = [value("length", 41.2, "a_00000003", "length", "km")]
    return result(spec, steps, [roads, clipped, measured], answer, vals)


def test_a_length_measured_geodesically_passes_and_an_area_for_a_length_fails() -> None:
    checks = assert_correct(length_run())
    assert checks["predicates"]["passed"] and checks["metric_crs"]["passed"]
    _, checks = judged(length_run(quantity="area"))
    assert checks["predicates"]["passed"] is False and "missing ['length']" in checks["predicates"]["detail"]


# ------------------------------------------------------------------------------ share
SHARE_Q = "What percentage of the inspected structures were destroyed?"
SHARE_EXP = {"id": "share_pct", "kind": "value", "description": "share", "value": 71.2, "abs_tol": 0.5, "unit": "%"}


def share_run(final: str = "share", select: bool = True) -> dict:
    spec = task(SHARE_Q, ["damage_filter", "ratio"], SHARE_EXP)
    dins = layer("a_00000001", 9580)
    destroyed = layer("a_00000002", 6821, inputs=["a_00000001"])
    part = "a_00000002" if select else "a_00000001"
    if final == "share":
        out = table(
            "a_00000003",
            [{"value": "all", "part": 6821, "base": 9580, "share": 0.712, "percent": 71.2}],
            [part, "a_00000001"],
            "6821 of 9580 features (71.2 %)",
        )
        steps_final = step(3, "share", "a_00000003", {"part": part, "base": "a_00000001"}, by=None)
        vals = [value("share", 71.2, "a_00000003", "share", "percent")]
        answer = "71.2% of the inspected structures (6,821 of 9,580) were destroyed [a_00000003]."
    else:
        out = table("a_00000003", [{"value": "all", "count": 6821}], [part], "6821 features", {"total": 6821})
        steps_final = step(3, "count", "a_00000003", {"layer": part}, by=None)
        vals = [value("destroyed structures", 6821, "a_00000003")]
        answer = "6,821 structures were destroyed [a_00000003]."
    steps = [step(1, "load_event_layer", "a_00000001")]
    if select:
        steps.append(step(2, "select_damage", "a_00000002", {"damage": "a_00000001"}, damage_classes=["destroyed"]))
    steps.append(steps_final)
    return result(spec, steps, [dins, destroyed, out], answer, vals)


def test_a_share_answered_by_the_share_tool_passes_without_a_count_step() -> None:
    checks = assert_correct(share_run())
    assert "missing" not in checks["predicates"]["detail"]


def test_a_share_with_a_count_instead_or_without_its_filter_fails() -> None:
    out, checks = judged(share_run(final="count"))
    assert checks["predicates"]["passed"] is False and "missing ['ratio']" in checks["predicates"]["detail"]
    assert out["outcome"] == "confidently_wrong"  # a count where a share was asked
    _, checks = judged(share_run(select=False))  # the share of everything in itself: no damage filter
    assert checks["predicates"]["passed"] is False and "missing ['damage_filter']" in checks["predicates"]["detail"]


# ------------------------------------------------------------------------------ outside
def outside_run(relation: str = "outside") -> dict:
    exp = {"id": "count", "kind": "count", "description": "outside", "value": 374}
    spec = task("How many inspected structures lie outside the fire perimeter?", ["outside", "count"], exp)
    n = 374 if relation == "outside" else 5431
    arts = [
        layer("a_00000001", 1),
        layer("a_00000002", 5805),
        layer("a_00000003", n, inputs=["a_00000002", "a_00000001"]),
        table("a_00000004", [{"value": "all", "count": n}], ["a_00000003"], f"{n} features", {"total": n}),
    ]
    steps = [
        step(1, "load_event_layer", "a_00000001", role="hazard"),
        step(2, "load_event_layer", "a_00000002", role="damage"),
        step(3, relation, "a_00000003", {"features": "a_00000002", "mask": "a_00000001"}),
        step(4, "count", "a_00000004", {"layer": "a_00000003"}, by=None),
    ]
    answer = f"{n:,} inspected structures lie {relation} the fire perimeter [a_00000004]."
    return result(spec, steps, arts, answer, [value("structures", n, "a_00000004")])


def test_outside_answered_by_the_outside_tool_passes_and_by_inside_fails() -> None:
    assert_correct(outside_run())
    out, checks = judged(outside_run(relation="inside"))
    assert checks["predicates"]["passed"] is False and "missing ['outside']" in checks["predicates"]["detail"]
    assert out["outcome"] == "confidently_wrong"


# ------------------------------------------------------------------------------ mean and sum
def stats_run(predicate: str, tool: str, stat: str | None, total: float) -> dict:
    exp = {"id": "value", "kind": "value", "description": predicate, "value": total, "rel_tol": 0.01}
    spec = task(f"The {predicate} of beds of my hospitals?", [predicate], exp)
    column = stat or "sum"
    args: dict[str, Any] = {"field": "beds", "by": None} | ({"stat": stat} if stat else {})
    arts = [
        layer("a_00000001", 4),
        table("a_00000002", [{"value": "all", column: total, "n": 4, "n_null": 0}], ["a_00000001"]),
    ]
    steps = [step(1, "load_layer", "a_00000001"), step(2, tool, "a_00000002", {"layer": "a_00000001"}, **args)]
    answer = f"{column} of beds: {total:g} [a_00000002]."
    return result(spec, steps, arts, answer, [value(f"{column} of beds", total, "a_00000002", column, "none")])


@pytest.mark.parametrize(
    ("predicate", "tool", "stat"),
    [("attribute_mean", "stats", "mean"), ("attribute_sum", "stats", "sum"), ("attribute_sum", "sum_by", None)],
)
def test_a_mean_or_a_sum_by_its_statistic_passes(predicate: str, tool: str, stat: str | None) -> None:
    assert_correct(stats_run(predicate, tool, stat, 250.0))


@pytest.mark.parametrize(
    ("predicate", "tool", "stat"),
    [("attribute_mean", "stats", "sum"), ("attribute_sum", "stats", "mean"), ("attribute_mean", "count", None)],
)
def test_a_mean_or_a_sum_by_another_statistic_fails(predicate: str, tool: str, stat: str | None) -> None:
    _, checks = judged(stats_run(predicate, tool, stat, 250.0))
    assert checks["predicates"]["passed"] is False and f"missing ['{predicate}']" in checks["predicates"]["detail"]


# ------------------------------------------------------------------------------ the predicates alone
def steps_of(*calls: tuple[str, dict]) -> list[dict]:
    return [{"tool": t, "args": a, "status": "done"} for t, a in calls]


def test_predicates_read_the_typed_tools_arguments() -> None:
    by_type = steps_of(("share", {"by": "STRUCTURETYPE"}))
    assert predicate_done("group_by", by_type) and predicate_done("ratio", by_type)
    assert not predicate_done("group_by", steps_of(("share", {"by": None})))
    assert predicate_done("group_by", steps_of(("measure", {"quantity": "area", "by": "landuse"})))
    assert predicate_done("count", steps_of(("outside", {}))) and predicate_done("count", steps_of(("share", {})))
    assert not predicate_done("count", steps_of(("measure", {"quantity": "area"})))
    assert not predicate_done("intersects", steps_of(("outside", {})))  # the complement is no intersection
    assert not predicate_done("outside", steps_of(("inside", {})))
    assert not predicate_done("area", steps_of(("load_event_layer", {"role": "hazard"}), ("count", {})))


def test_the_report_counts_a_typed_measure_tool_as_the_capability() -> None:
    from bench.report import capability_status

    env = {"tools": [{"agent": "vector", "name": n} for n in ("load_event_layer", "measure", "stats", "count")]}
    assert capability_status("predicate:area", env) and capability_status("predicate:length", env)
    assert capability_status("predicate:attribute_mean", env) and capability_status("predicate:group_by", env)
    assert not capability_status("predicate:ratio", env) and not capability_status("predicate:outside", env)
    assert not capability_status("predicate:area", {"tools": [{"agent": "vector", "name": "count"}]})
