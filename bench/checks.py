"""The deterministic judge: invariant checks of one bench result against its task spec.

It reads only the results folder (the run records and the artifact digests the
runner wrote), never the session and never GeoFaham's code, so it judges any system that leaves the
same evidence. Each check is ``passed`` true/false, or ``None`` when the spec does not ask for it;
the task score is the share of applicable checks passed. Checks (rubric dimension in brackets):

- ``completed`` [answer completeness]: every turn ran to an answer.
- ``event`` / ``events_covered`` [data selection]: the disaster record(s) chosen are the spec's.
- ``aoi`` / ``sources`` [data selection]: the area of interest and every required source were used.
- ``predicates`` [spatial-temporal logic]: the required spatial operations ran (tools of done steps).
- ``windows`` [spatial-temporal logic]: dates and windows are consistent with the event date.
- ``metric_crs`` [geometric operation quality]: metric operations ran in a metric CRS or geodesically.
- ``artifacts`` [artifact quality]: requested artifacts exist, read back, are valid and non-empty.
- ``value:<id>`` / ``states:<id>`` [answer accuracy]: each expected number within tolerance in the structured
  answer's value of the same label (group, events, relation, measure: ``bench.labels``, read from ids), names
  and distances in its items / the expected number stated in the answer text.
- ``supported_numbers`` [geometry data integrity]: no number in the answer that no artifact supports.
- ``no_db_write`` [benchmark rule compliance]: no database write was attempted.

The values the checks compare come from ``bench.observations``; the event records from the core's
event table.
"""

from __future__ import annotations

import bisect
import json
import re
from datetime import date, timedelta
from typing import Any

from pydantic import BaseModel

from geofaham_plugin.core.domain.events import DisasterEvent
from geofaham_plugin.core.orchestrator.answer import StructuredAnswer

from .labels import label_mismatch, value_labels
from .observations import (
    Evidence,
    answer_numbers,
    artifact_numbers,
    event_records,
    norm,
    norm_key,
    num,
    predicate_done,
    source_matches,
    structured_answer,
    text_groups,
    text_yes_no,
)
from .rubric import CATEGORIES
from .spec import ArtifactSpec, Expectation, TaskSpec, Turn, load_expected

WRITE_SQL = re.compile(
    r"\b(insert\s+into|update\s+\w+\s+set|delete\s+from|drop\s+(?:table|schema|database|view)|"
    r"create\s+(?:table|schema|index|view)|alter\s+table|truncate\s+\w+|copy\s+\w+\s+from|grant\s+\w+)\b",
    re.I,
)


class Check(BaseModel):
    name: str
    dimension: str
    passed: bool | None
    detail: str = ""
    turn: int | None = None


def expected_distances(value: Any) -> dict[str, float]:
    if isinstance(value, dict) and "distance_m" in value and "name" in value:
        return {value["name"]: float(value["distance_m"])}
    return {k: float(v) for k, v in (value or {}).items()}


#: (unit stated, unit expected) -> factor; only explicit units convert (no silent ×100 or ÷100)
CONVERT: dict[tuple[str, str], float] = {
    ("m", "km"): 1e-3,
    ("km", "m"): 1e3,
    ("m2", "km2"): 1e-6,
    ("m2", "ha"): 1e-4,
    ("km2", "ha"): 100.0,
    ("ha", "km2"): 0.01,
    ("km2", "m2"): 1e6,
    ("percent", "%"): 1.0,
    ("ratio", "%"): 100.0,
    ("percent", "fraction"): 0.01,
    ("ratio", "fraction"): 1.0,
}
#: a text number's unit suffix -> the structured answer's unit
TEXT_UNITS = {
    "": "",
    "km": "km",
    "m": "m",
    "km²": "km2",
    "km2": "km2",
    "m²": "m2",
    "m2": "m2",
    "ha": "ha",
    "%": "percent",
}


def want_unit(e: Expectation) -> str:
    """The unit an expectation's value is in, in the structured answer's vocabulary."""
    if e.kind in ("count", "count_by") and not e.unit:
        return "count"
    unit = (e.unit or "").strip()
    return {"": "none", "eur": "none", "km²": "km2", "m²": "m2"}.get(unit.lower(), unit)


def convert(value: float, unit: str, want: str) -> float | None:
    """``value`` in ``unit`` expressed in ``want``; None when the units do not convert."""
    if unit == want or (unit, want) in (("none", "fraction"), ("count", "none")):
        return value
    factor = CONVERT.get((unit, want))
    return value * factor if factor is not None else None


def stated_values(
    e: Expectation,
    sa: StructuredAnswer | None,
    answer: str,
    artifacts: dict[str, dict],
    events: dict[int, DisasterEvent],
) -> tuple[list[tuple[float, str]], str]:
    """The values of the kind ``e`` asks for that the answer states, in ``e``'s unit, with their labels:
    from the structured answer (the right measure and unit, and ``e``'s labels read from ids: group, events,
    relation, measure; ``bench.labels``), else from the answer text (numbers with the right unit suffix; an
    expectation with a label cannot be told from text). Also a note on what was stated instead when nothing fits."""
    want = want_unit(e)
    if sa is not None:
        out: list[tuple[float, str]] = []
        other: list[str] = []
        for v in sa.values:
            value = convert(v.value, v.unit, want)
            kind_ok = e.measure is not None or not (
                (want == "count" and v.measure != "count") or (want in ("%", "fraction") and v.measure == "count")
            )
            why = (
                label_mismatch(e, v, value_labels(v, artifacts, events), events)
                if kind_ok and value is not None
                else ""
            )
            if value is None or not kind_ok or why:
                other.append(f"{v.value:g} {v.unit} {v.measure} '{v.label}'" + (f" ({why})" if why else ""))
                continue
            out.append((value, f"{v.label} ({v.measure}, {v.unit}{', ' + v.group if v.group else ''})"))
        return out, ("stated instead: " + "; ".join(other[:4])) if other else "no value stated"
    if e.labelled:
        return [], "no structured answer: which stated number carries the expectation's label cannot be told"
    found: list[tuple[float, str]] = []
    for value, _, u in answer_numbers(answer):
        unit = TEXT_UNITS.get(u, "none")
        if unit == "":
            unit = {"count": "count", "%": "", "fraction": "ratio"}.get(want, "none")
        if not unit:
            continue
        got = convert(value, unit, want)
        if got is not None:
            found.append((got, f"'{value:g}{u}' in the answer text"))
    return found, "no number of that unit in the answer text"


def check_expectation(
    e: Expectation, expected: Any, ev: Evidence, run: dict | None, events: dict[int, DisasterEvent]
) -> tuple[Check, Check | None]:
    """The value check (what the answer states: its structured answer, else its text, against the
    expected value) and, when asked, the statement check (the answer text states the expected value).
    Names and distances come from the structured answer's items alone (never from the cited artifacts);
    the artifacts are read only for the labels of the stated values (``bench.labels``)."""
    name, dim = f"value:{e.id}", "answer_accuracy"
    answer = (run or {}).get("answer", "") or ""
    sa = structured_answer(run)
    numbers = answer_numbers(answer)
    stated: Check | None = None
    status = (sa.status if sa is not None else None) or (run or {}).get("status")
    not_answer = "" if status == "answered" else f"; the run is {status}: what it computed is not the answer"

    def answer_has(target: float, unit: str | None) -> bool:
        for value, _, u in numbers:
            same = not (unit and u and TEXT_UNITS.get(u) != {"%": "percent", "km²": "km2"}.get(unit, unit))
            cands = [value] if same else []
            if unit == "m" and u == "km":
                cands.append(value * 1000)
            if unit == "fraction" and u == "%":
                cands.append(value / 100)
            if unit == "km2" and u == "ha":
                cands.append(value / 100)
            if unit == "ha" and u in ("km²", "km2"):
                cands.append(value * 100)
            if any(e.within(c, target) for c in cands):
                return True
        return False

    def tol() -> str:
        return f"±{max(e.abs_tol, abs(float(expected)) * e.rel_tol):g}"

    if e.kind in ("count", "value"):
        cands, instead = stated_values(e, sa, answer, ev.artifacts, events)
        hit = next((w for v, w in cands if e.within(v, float(expected))), None)
        source = "structured answer" if sa is not None else "answer text (no structured answer)"
        check = Check(
            name=name,
            dimension=dim,
            passed=hit is not None and not not_answer,
            detail=f"expected {expected} {e.unit or ''}{' for ' + e.group if e.group else ''} ({tol()}); "
            + (f"stated in {hit}" if hit else f"{source} states {[round(v, 4) for v, _ in cands][:8] or instead}")
            + not_answer,
        )
        if e.in_answer:
            ok = answer_has(float(expected), e.unit if e.kind == "value" else None)
            stated = Check(
                name=f"states:{e.id}",
                dimension=dim,
                passed=ok,
                detail=f"the answer text {'states' if ok else 'does not state'} {expected} {e.unit or ''}",
            )
    elif e.kind == "names":
        want = [expected] if isinstance(expected, str) else list(expected)
        items = sorted(sa.items, key=lambda i: i.rank) if sa is not None else []
        got = [i.name for i in (items[: e.top] if e.top else items)]
        want_n, got_n = {norm(w) for w in want}, {norm(g) for g in got}
        common = want_n & got_n
        recall = len(common) / len(want_n) if want_n else 1.0
        precision = len(common) / len(got_n) if got_n else (1.0 if not want_n else 0.0)
        ok = recall >= e.min_recall - 1e-9 and precision >= e.min_precision - 1e-9
        check = Check(
            name=name,
            dimension=dim,
            passed=ok and not not_answer,
            detail=("" if got else "the structured answer names no item; ")
            + f"recall {recall:.2f} (≥{e.min_recall:g}), precision {precision:.2f} (≥{e.min_precision:g}); "
            f"missing {sorted(want_n - got_n)[:5]}, extra {sorted(got_n - want_n)[:5]}" + not_answer,
        )
        if e.in_answer and want:
            text = norm(answer)
            shown = want[:12]
            found = sum(norm(w) in text for w in shown)
            stated = Check(
                name=f"states:{e.id}",
                dimension=dim,
                passed=found / len(shown) >= min(1.0, e.min_recall) - 1e-9,
                detail=f"{found} of {len(shown)} expected names in the answer",
            )
    elif e.kind == "distance":
        want_m = expected_distances(expected)
        items = sorted(sa.items, key=lambda i: i.rank) if sa is not None else []
        got_m = {norm(i.name): i.distance_m for i in (items[: e.top] if e.top else items) if i.distance_m is not None}
        bad = [
            f"{n}: expected {d:g}, got {got_m.get(norm(n))}"
            for n, d in want_m.items()
            if norm(n) not in got_m or not e.within(got_m[norm(n)], d)
        ]
        check = Check(
            name=name,
            dimension=dim,
            passed=not bad and not not_answer,
            detail=("all distances within tolerance" if not bad else "; ".join(bad[:4])) + not_answer,
        )
        if e.in_answer and want_m:
            first = sorted(want_m.values())[:3]
            ok = all(answer_has(d, "m") for d in first)
            stated = Check(
                name=f"states:{e.id}",
                dimension=dim,
                passed=ok,
                detail=f"the answer {'states' if ok else 'does not state'} the distances {first}",
            )
    elif e.kind == "count_by":
        want_g = {norm_key(k): float(v) for k, v in dict(expected).items()}
        unit = want_unit(e)
        got_g: dict[str, float] = {}
        if sa is not None:
            for v in sa.values:
                value = convert(v.value, v.unit, unit) if v.group is not None else None
                if value is not None and v.group is not None:
                    got_g[norm_key(v.group)] = got_g.get(norm_key(v.group), 0.0) + value
        else:
            got_g = text_groups(answer)
        bad = [
            f"{k}: expected {v:g}, stated {got_g.get(k)}"
            for k, v in want_g.items()
            if k not in got_g or not e.within(got_g[k], v)
        ]
        check = Check(
            name=name,
            dimension=dim,
            passed=not bad and not not_answer,
            detail=("every group within tolerance" if not bad else "; ".join(bad[:4]) + f" ({len(bad)} off)")
            + not_answer,
        )
    elif e.kind == "boolean":
        said = sa.yes_no if sa is not None and sa.yes_no is not None else text_yes_no(answer)
        check = Check(
            name=name,
            dimension=dim,
            passed=said is not None and said == bool(expected) and not not_answer,
            detail=f"expected {'yes' if expected else 'no'}, the answer states "
            + ({True: "yes", False: "no", None: "no yes/no"}[said])
            + not_answer,
        )
    else:  # pragma: no cover - the spec model forbids other kinds
        check = Check(name=name, dimension=dim, passed=None, detail=f"unknown kind {e.kind}")
    return check, stated


# ---------------------------------------------------------------------------- the judge
def deterministic(result: dict, expected: dict | None = None) -> dict:
    """Invariant checks of one result; returns checks, score, pass, flags and observed values."""
    expected = expected if expected is not None else load_expected()
    ev = Evidence(result)
    spec = ev.task
    turns: list[Turn] = spec.turns()
    checks: list[Check] = []
    events = event_records()

    # run status
    for i in range(len(turns)):
        run = ev.run(i)
        status = run.get("status") if run else "not run"
        ok = result.get("status") == "finished" and status == "answered"
        checks.append(
            Check(
                name="completed",
                dimension="answer_completeness",
                passed=ok,
                turn=i,
                detail=f"run {status}"
                + (
                    f"; task {result.get('status')}: {result.get('error')}"
                    if result.get("status") != "finished"
                    else ""
                ),
            )
        )

    # disaster record
    ledgers = ev.ledgers()
    chosen: list[int] = [x["disaster_event_id"] for x in ledgers if x.get("disaster_event_id") is not None]
    chosen += [
        int(a["extra"]["event_id"])
        for a in ev.artifacts.values()
        if isinstance(a.get("extra"), dict) and num(a["extra"].get("event_id")) is not None
    ]
    if spec.event_ids:
        wrong = sorted({e for e in chosen if e not in spec.event_ids})
        checks.append(
            Check(
                name="event",
                dimension="data_selection_correctness",
                passed=bool(chosen) and not wrong,
                detail=f"chosen {sorted(set(chosen)) or 'none'}, allowed {spec.event_ids}"
                + (f"; wrong {wrong}" if wrong else ""),
            )
        )
        groups = {events[e].name for e in spec.event_ids if e in events}
        if len(groups) > 1:
            covered = {events[e].name for e in chosen if e in events} & groups
            checks.append(
                Check(
                    name="events_covered",
                    dimension="data_selection_correctness",
                    passed=covered == groups,
                    detail=f"covered {sorted(covered)} of {sorted(groups)}",
                )
            )
    else:
        checks.append(
            Check(
                name="event",
                dimension="data_selection_correctness",
                passed=None,
                detail="the task is on no event-table record",
            )
        )

    # area of interest and sources
    if spec.aoi.layers:
        token = "|".join(f"layer:{x}" if "." not in x else f"file:{x}" for x in spec.aoi.layers)
        checks.append(
            Check(
                name="aoi",
                dimension="data_selection_correctness",
                passed=source_matches(token, ev),
                detail=f"{spec.aoi.kind}: one of {spec.aoi.layers}",
            )
        )
    else:
        checks.append(
            Check(
                name="aoi",
                dimension="data_selection_correctness",
                passed=None,
                detail=f"{spec.aoi.kind} {spec.aoi.place or spec.aoi.note} (left to the LLM judge)",
            )
        )
    if spec.required_sources:
        missing = [t for t in spec.required_sources if not source_matches(t, ev)]
        checks.append(
            Check(
                name="sources",
                dimension="data_selection_correctness",
                passed=not missing,
                detail="all used" if not missing else f"missing {missing}",
            )
        )

    # spatial predicates, per turn
    for i, turn in enumerate(turns):
        if not turn.required_predicates:
            continue
        run = ev.run(i)
        steps = ev.done_steps(run) if run else []
        missing = [p for p in turn.required_predicates if not predicate_done(p, steps)]
        checks.append(
            Check(
                name="predicates",
                dimension="spatial_temporal_logic",
                passed=not missing,
                turn=i,
                detail=f"tools run: {[s.get('tool') for s in steps]}" + (f"; missing {missing}" if missing else ""),
            )
        )

    # dates and windows
    checks.append(check_windows(spec, ev, events))

    # metric CRS
    checks.append(check_metric(spec, ev))

    # artifacts, expectations, supported numbers, per turn
    executed = executed_artifacts(ev)
    for i, turn in enumerate(turns):
        run = ev.run(i)
        cited = ev.cited(run) if run else []
        turn_arts = [ev.artifacts[a] for a in ev.turn_artifact_ids(run)] if run else []
        for spec_art in turn.artifacts:  # cited first; any artifact of the turn is a layer the user gets
            checks.append(check_artifact(spec_art, cited + [a for a in turn_arts if a not in cited], i))
        for e in turn.expectations:
            value = e.resolve(expected)
            if value is None:
                checks.append(
                    Check(
                        name=f"value:{e.id}",
                        dimension="answer_accuracy",
                        passed=None,
                        turn=i,
                        detail=f"no reference value offline ({e.description}); left to the LLM judge",
                    )
                )
                continue
            check, stated = check_expectation(e, value, ev, run, events)
            check.turn = i
            checks.append(check)
            if stated is not None:
                stated.turn = i
                checks.append(stated)
        if run and run.get("answer"):
            checks.append(check_supported(run, executed, spec, events, i))

    # evidence: records, traceable lineage, cited artifacts produced by executed steps
    for i in range(len(turns)):
        run = ev.run(i)
        if run is None:
            continue
        checks.append(check_record(run, i))
        checks.append(check_lineage(run, ev, i))
        checks.append(check_execution(run, ev, i))
        checks.append(check_error_handling(run, result, i))
        checks.append(check_caveats(run, ev, i))

    # no database write
    text = json.dumps(
        [
            [s.get("args") for s in r.get("steps", [])]
            + [[st.get("args") for st in (p.get("plan") or {}).get("steps", [])] for p in r.get("plans", [])]
            for r in ev.runs
        ],
        default=str,
    )
    writes = sorted({m.group(0) for m in WRITE_SQL.finditer(text)})
    checks.append(
        Check(
            name="no_db_write",
            dimension="benchmark_rule_compliance",
            passed=not writes,
            detail="no write statement in any tool call" if not writes else f"write attempted: {writes}",
        )
    )

    applicable = [c for c in checks if c.passed is not None]
    score = sum(c.passed is True for c in applicable) / len(applicable) if applicable else 0.0
    values = [c for c in checks if c.name.startswith("value:") and c.passed is not None]
    return {
        "outcome": outcome(result, ev, checks),
        "task_id": spec.id,
        "category": spec.category,
        "difficulty": spec.difficulty,
        "offline": spec.offline,
        "score": round(score, 4),
        "passed": bool(applicable) and all(c.passed for c in applicable),
        "accuracy": round(sum(c.passed is True for c in values) / len(values), 4) if values else None,
        "checks": [c.model_dump() for c in checks],
        "flags": process_flags(result, ev, checks),
        "by_dimension": by_dimension(checks),
        "rubric_proxy": rubric_proxy(by_dimension(checks)),
    }


#: a run's outcome: right, wrong but said so, wrong and said it was right, nothing, or no reference to tell
OUTCOMES = ("correct", "wrong_but_flagged", "confidently_wrong", "no_answer", "no_reference")


def flagged(run: dict) -> bool:
    """A partial or failed run whose answer names the part of the question it did not apply: its structured
    answer's ``not_applied`` lists it. Saying "partial" or "could not" in the text names nothing (and a record
    without a structured answer names nothing a machine can read): such a run is confidently wrong."""
    sa = structured_answer(run)
    if sa is None or sa.status not in ("partial", "failed"):
        return False
    return any(part.strip() for part in sa.not_applied)


def outcome(result: dict, ev: Evidence, checks: list[Check]) -> str:
    """``correct``: every turn answered and every value, statement and supported-number check passed;
    ``wrong_but_flagged``: a turn is partial/failed and names what was not done; ``no_answer``: a turn
    has no answer; ``confidently_wrong``: answered (or partial without saying what is missing) and a
    stated value is wrong or unsupported; ``no_reference``: the task has no reference value to tell."""
    valued = [c for c in checks if c.name.startswith("value:")]
    if not valued or all(c.passed is None for c in valued):
        return "no_reference"
    turns = len(ev.task.turns())
    runs = [ev.run(i) for i in range(turns)]
    if any(r is not None and flagged(r) for r in runs):
        return "wrong_but_flagged"
    if any(
        r is None or not (r.get("answer") or "").strip() or r.get("status") not in ("answered", "partial") for r in runs
    ):
        return "no_answer"
    accuracy = [c for c in checks if c.name.split(":")[0] in ("value", "states", "supported_numbers")]
    if all(c.passed is not False for c in accuracy) and all(
        r is not None and r.get("status") == "answered" for r in runs
    ):
        return "correct"
    return "confidently_wrong"


def rubric_proxy(dims: dict[str, float]) -> float | None:
    """The paper's category weights over the dimensions the checks cover (weights renormalised over the
    categories that have checks): a deterministic stand-in for the LLM judge's overall score."""
    total = weight_sum = 0.0
    for weight, members in CATEGORIES.values():
        values = [dims[key] for key, _, _ in members if key in dims]
        if values:
            total += weight * sum(values) / len(values)
            weight_sum += weight
    return round(total / weight_sum, 4) if weight_sum else None


def by_dimension(checks: list[Check]) -> dict[str, float]:
    out: dict[str, list[bool]] = {}
    for c in checks:
        if c.passed is not None:
            out.setdefault(c.dimension, []).append(bool(c.passed))
    return {k: round(sum(v) / len(v), 4) for k, v in out.items()}


def check_windows(spec: TaskSpec, ev: Evidence, events: dict[int, DisasterEvent]) -> Check:
    """Event date and time windows consistent with the event (ledger windows, dated artifacts)."""
    name, dim = "windows", "spatial_temporal_logic"
    problems: list[str] = []
    seen = 0
    for ledger in ev.ledgers():
        eid, edate = ledger.get("disaster_event_id"), ledger.get("event_date")
        if eid in events and edate and edate != events[eid].event_date.isoformat():
            problems.append(f"ledger date {edate} is not record {eid}'s {events[eid].event_date.isoformat()}")
    run_windows = []
    for ledger in ev.ledgers():
        for w in ledger.get("time_windows") or []:
            run_windows.append((w.get("label", ""), date.fromisoformat(w["start"]), date.fromisoformat(w["end"])))
    for a in ev.artifacts.values():
        meta = a.get("metadata", {})
        if a["kind"] in ("item_set", "raster") and (meta.get("time_start") or meta.get("time")):
            start = (meta.get("time_start") or meta.get("time"))[:10]
            end = (meta.get("time_end") or meta.get("time") or start)[:10]
            run_windows.append(("artifact", date.fromisoformat(start), date.fromisoformat(end)))
    event_date = spec.event_date
    slack = timedelta(days=1)
    for want in spec.time_windows:
        seen += 1
        matches = []
        for label, start, end in run_windows:
            if want.start and want.end and (end < want.start - slack or start > want.end + slack):
                continue
            if want.label == "pre" and event_date and end > event_date:
                continue
            if want.label == "post" and event_date and start < event_date - slack:
                continue
            if want.max_days and (end - start).days > want.max_days:
                continue
            matches.append((label, start, end))
        if not matches:
            problems.append(f"no {want.label} window within {want.start}..{want.end}")
    if not spec.time_windows and event_date:
        for label, start, end in run_windows:
            seen += 1
            if label == "pre" and end > event_date:
                problems.append(f"pre window ends {end}, after the event date {event_date}")
            if label == "post" and start < event_date - timedelta(days=3):
                problems.append(f"post window starts {start}, before the event date {event_date}")
    if not seen and not problems:
        return Check(name=name, dimension=dim, passed=None, detail="no temporal constraint and no dated evidence")
    return Check(name=name, dimension=dim, passed=not problems, detail="; ".join(problems) or "consistent")


GEODESIC = re.compile(r"\bgeodesic", re.I)


def geodesic_step(step: dict, ev: Evidence) -> bool:
    """A done step that measured on the ellipsoid: the artifact it produced says so (``measure``'s table:
    "geodesic area of ..."), in its summary or its extra's ``method``. Geodesic areas and lengths need no
    projection, so geographic inputs are right for them."""
    art = ev.artifacts.get(step.get("artifact_id") or "", {})
    extra = art.get("extra") or {}
    return bool(GEODESIC.search(f"{art.get('summary', '')} {extra.get('method', '')}"))


def check_metric(spec: TaskSpec, ev: Evidence) -> Check:
    """Metric operations in a metric CRS: a tool flagged ``metric`` (distances, buffers) on projected inputs or
    through the engine's local metric projection (the step notes), or a geodesic measure (area, length). A task
    with a metric constraint needs at least one of them."""
    name, dim = "metric_crs", "geometric_operation_quality"
    wants_metric = any(c.startswith("metric") or c == "geodesic_or_projected" for c in spec.crs_constraints)
    metric_steps, problems = 0, []
    for r in ev.runs:
        notes = " ".join(r.get("notes", []))
        for s in ev.done_steps(r):
            tool = ev.tools.get(s.get("tool") or "", {})
            if not tool.get("metric"):
                metric_steps += geodesic_step(s, ev)
                continue
            metric_steps += 1
            geographic = [
                i
                for i in (s.get("inputs") or {}).values()
                if ev.artifacts.get(i, {}).get("metadata", {}).get("crs_is_geographic")
            ]
            if geographic and not re.search(rf"step {s['step_id']}: .*(metric projection|geodesic)", notes):
                problems.append(
                    f"step {s['step_id']} {s['tool']} on geographic inputs {geographic} without a metric projection"
                )
    if "preserve_source_crs" in spec.crs_constraints:
        nocrs = [
            a["id"]
            for a in ev.artifacts.values()
            if a["kind"] in ("raster", "vector") and not a.get("metadata", {}).get("crs")
        ]
        problems += [f"{i} has no CRS" for i in nocrs]
    if wants_metric and not metric_steps:
        problems.append("the task needs a metric operation, none ran")
    if not metric_steps and not spec.crs_constraints:
        return Check(name=name, dimension=dim, passed=None, detail="no metric operation")
    return Check(
        name=name,
        dimension=dim,
        passed=not problems,
        detail="; ".join(problems) or f"{metric_steps} metric step(s), projected or geodesic",
    )


def check_artifact(spec_art: ArtifactSpec, arts: list[dict], turn: int) -> Check:
    kinds = {"vector": ("vector", "aoi")}.get(spec_art.kind, (spec_art.kind,))
    problems = []
    for a in arts:
        if a["kind"] not in kinds:
            continue
        meta, file = a.get("metadata", {}), a.get("file", {})
        geom = (meta.get("geometry_type") or "").lower()
        if spec_art.geometry and spec_art.geometry not in geom and meta.get("feature_count") != 0:
            problems.append(f"{a['id']} is {meta.get('geometry_type')}")
            continue
        if not (file.get("exists") and file.get("readable")):
            problems.append(f"{a['id']} does not read back ({file.get('error', 'missing file')})")
            continue
        if file.get("invalid_geometries"):
            problems.append(f"{a['id']} has {file['invalid_geometries']} invalid geometries")
            continue
        n = meta.get("feature_count", meta.get("row_count", meta.get("item_count", 1)))
        if n is not None and n < spec_art.min_features:
            problems.append(f"{a['id']} has {n} features (< {spec_art.min_features})")
            continue
        return Check(
            name="artifacts",
            dimension="artifact_quality",
            passed=True,
            turn=turn,
            detail=f"{spec_art.kind}{'/' + spec_art.geometry if spec_art.geometry else ''}: {a['id']} ({n})",
        )
    return Check(
        name="artifacts",
        dimension="artifact_quality",
        passed=False,
        turn=turn,
        detail=f"no valid {spec_art.kind}{'/' + spec_art.geometry if spec_art.geometry else ''} among the cited "
        f"artifacts" + (f": {'; '.join(problems[:3])}" if problems else ""),
    )


def check_record(run: dict, turn: int) -> Check:
    """Structured evidence: a run record with a status, an answer and cited artifacts (or an honest
    statement that nothing could be computed)."""
    problems = [
        p
        for p, bad in (
            ("no answer", not run.get("answer")),
            ("no plan", not run.get("plans")),
            ("no cited artifact", not run.get("cited_artifacts") and run.get("status") == "answered"),
        )
        if bad
    ]
    return Check(
        name="record",
        dimension="structured_result_evidence",
        passed=not problems,
        turn=turn,
        detail="; ".join(problems)
        or f"{run.get('status')} with {len(run.get('cited_artifacts', []))} cited artifact(s)",
    )


def check_lineage(run: dict, ev: Evidence, turn: int) -> Check:
    """Method traceability: every cited artifact's lineage resolves, back to loaded or fetched data."""
    missing: list[str] = []
    roots = 0
    stack = [i for i in run.get("cited_artifacts", [])]
    seen: set[str] = set()
    while stack:
        aid = stack.pop()
        if aid in seen:
            continue
        seen.add(aid)
        art = ev.artifacts.get(aid)
        if art is None:
            missing.append(aid)
            continue
        if not art.get("inputs"):
            roots += 1
        stack += art.get("inputs", [])
    if not run.get("cited_artifacts"):
        return Check(name="lineage", dimension="method_traceability", passed=None, turn=turn, detail="nothing cited")
    return Check(
        name="lineage",
        dimension="method_traceability",
        passed=not missing and roots > 0,
        turn=turn,
        detail=f"{len(seen)} artifacts traced to {roots} source(s)" + (f"; unknown {missing}" if missing else ""),
    )


def check_execution(run: dict, ev: Evidence, turn: int) -> Check:
    """Implementation correctness: cited artifacts come from executed steps and read back; a run
    that reports an answer did not skip a failed step silently."""
    produced = {s.get("artifact_id") for s in run.get("steps", []) if s.get("status") == "done"}
    problems = []
    for aid in run.get("cited_artifacts", []):
        art = ev.artifacts.get(aid, {})
        if aid not in produced:
            problems.append(f"{aid} cited but not produced by a done step of this run")
        elif not art.get("file", {}).get("readable"):
            problems.append(f"{aid} does not read back")
    failed = [s for s in run.get("steps", []) if s.get("status") in ("failed", "skipped")]
    if failed and run.get("status") == "answered" and not run.get("notes") and not run.get("decisions"):
        problems.append(f"{len(failed)} failed/skipped step(s) with no note or decision")
    return Check(
        name="execution",
        dimension="implementation_correctness",
        passed=not problems,
        turn=turn,
        detail="; ".join(problems[:3]) or f"{len(produced)} step(s) executed, cited outputs read back",
    )


def check_error_handling(run: dict, result: dict, turn: int) -> Check:
    """Failures diagnosed and handled: recovered, or an honest partial answer naming what was not done."""
    failures = (run.get("progress") or {}).get("failures", [])
    status, answer = run.get("status"), norm(run.get("answer", ""))
    if result.get("status") == "timeout" and status in (None, "running"):
        return Check(
            name="error_handling", dimension="error_handling", passed=False, turn=turn, detail="cut off by the timeout"
        )
    plans = [
        json.dumps(
            [(st.get("tool"), st.get("args"), st.get("inputs")) for st in (p.get("plan") or {}).get("steps", [])],
            sort_keys=True,
            default=str,
        )
        for p in run.get("plans", [])
    ]
    repeats = sum(1 for a, b in zip(plans, plans[1:], strict=False) if a == b)
    if repeats:
        return Check(
            name="error_handling",
            dimension="error_handling",
            passed=False,
            turn=turn,
            detail=f"replanned {repeats} time(s) to the same plan after {len(failures)} failure(s)",
        )
    if not failures and status == "answered":
        return Check(
            name="error_handling", dimension="error_handling", passed=True, turn=turn, detail="no error occurred"
        )
    if status == "answered":
        return Check(
            name="error_handling",
            dimension="error_handling",
            passed=True,
            turn=turn,
            detail=f"recovered from {len(failures)} failure(s)",
        )
    honest = status == "partial" and ("partial" in answer or "not done" in answer or "could not" in answer)
    return Check(
        name="error_handling",
        dimension="error_handling",
        passed=honest,
        turn=turn,
        detail=f"{status} after {len(failures)} failure(s): "
        + ("stated honestly" if honest else (run.get("error") or "no diagnosis in the answer")[:200]),
    )


def check_caveats(run: dict, ev: Evidence, turn: int) -> Check:
    """Evidence-aware confidence: the limitations the used data carry (partial snapshot, stand-in
    area, partial coverage ...) are stated in the answer."""
    used = set(ev.turn_artifact_ids(run))
    limitations = list(
        dict.fromkeys(str(x) for a in used for x in (ev.artifacts[a].get("extra") or {}).get("limitations") or [])
    )
    if not limitations:
        return Check(
            name="caveats",
            dimension="evidence_aware_confidence",
            passed=None,
            turn=turn,
            detail="the data used carry no recorded limitation",
        )
    answer = norm(run.get("answer", ""))
    missing = [x for x in limitations if norm(x)[:40] not in answer]
    return Check(
        name="caveats",
        dimension="evidence_aware_confidence",
        passed=not missing,
        turn=turn,
        detail=f"{len(limitations) - len(missing)} of {len(limitations)} limitations stated"
        + (f"; not stated: {missing[:2]}" if missing else ""),
    )


def executed_artifacts(ev: Evidence) -> dict[str, dict]:
    """The artifacts done steps of the task's runs produced (a follow-up may reuse an earlier turn's)."""
    done = {s.get("artifact_id") for r in ev.runs for s in ev.done_steps(r)}
    return {i: a for i, a in ev.artifacts.items() if i in done}


def _near(value: float, pool: list[float], half: float) -> bool:
    i = bisect.bisect_left(pool, value - half)
    return i < len(pool) and pool[i] <= value + half


def check_supported(
    run: dict, executed: dict[str, dict], spec: TaskSpec, events: dict[int, DisasterEvent], turn: int
) -> Check:
    """Every number of the answer rounds from a number an executed artifact holds (or the question, the
    event record); a number converts only through the unit it is written with (m -> km, m² -> km²/ha,
    fraction -> %): no silent ×100 or ÷1000. The run's own notes and failure messages support nothing: they
    are the run's words, not evidence. Every value of the structured answer is read from an artifact an
    executed step produced, and that artifact holds it."""
    base = {n for a in executed.values() for n in artifact_numbers(a)}
    base |= {float(n) for n in range(0, 13)}  # step numbers, ranks
    texts = [
        run.get("question", ""),
        spec.question,
        *[
            f"{a.get('summary', '')} {' '.join(map(str, (a.get('extra') or {}).get('limitations') or []))}"
            for a in executed.values()
        ],
        *[str(v) for a in executed.values() for row in a.get("rows", []) for v in row.values() if isinstance(v, str)],
    ]
    to_base = {"km": 1e3, "km²": 1e6, "km2": 1e6, "ha": 1e4}  # a number written with its unit, in m / m²
    for text in texts:
        base |= {v * f for v, _, u in answer_numbers(text) for f in {1.0, to_base.get(u, 1.0)}}
    for eid in spec.event_ids:
        if eid in events:
            base |= {float(p) for p in events[eid].event_date.isoformat().split("-")}
    by_unit = {
        "": sorted(base),
        "%": sorted(base | {v * 100 for v in base if abs(v) <= 1}),
        "km": sorted(base | {v / 1000 for v in base}),
        "km²": sorted(base | {v / 1e6 for v in base}),
        "ha": sorted(base | {v / 1e4 for v in base} | {v * 100 for v in base}),
    }
    by_unit["km2"] = by_unit["km²"]
    bad: list[str] = []
    for value, decimals, unit in answer_numbers(run.get("answer", "")):
        half = 0.5 * 10 ** (-decimals) + 1e-9
        if not _near(value, by_unit.get(unit, by_unit[""]), half):
            bad.append(f"{value:g}{unit}")
    sa = structured_answer(run)
    for v in sa.values if sa is not None else []:
        art = executed.get(v.artifact_id)
        if art is None:
            bad.append(f"'{v.label}' {v.value:g} from {v.artifact_id}, which no executed step produced")
            continue
        pool = sorted(artifact_numbers(art))
        factors = {"percent": (1.0, 100.0), "km2": (1.0, 1e-6)}.get(v.unit, (1.0,))
        # a stated value is rounded as the answer writes it (10.08 % stated 10.1): half its last digit is no error
        shown = f"{v.value:.10g}"
        half = 0.5 * 10 ** (-len(shown.split(".")[1])) + 1e-9 if "." in shown and "e" not in shown else 0.0
        tolerance = max(0.01, abs(v.value) * 1e-3, half)
        if not any(_near(v.value, sorted(p * f for p in pool), tolerance) for f in factors):
            bad.append(f"'{v.label}' {v.value:g} not in {v.artifact_id}")
    return Check(
        name="supported_numbers",
        dimension="geometry_data_integrity",
        passed=not bad,
        turn=turn,
        detail="every number traces to an executed artifact" if not bad else f"unsupported: {bad[:8]}",
    )


def process_flags(result: dict, ev: Evidence, checks: list[Check]) -> dict[str, bool]:
    runs = ev.runs
    failures = sum(len((r.get("progress") or {}).get("failures", [])) for r in runs)
    replans = sum((r.get("progress") or {}).get("replans", 0) for r in runs)
    answered = bool(runs) and all(r.get("status") == "answered" for r in runs)
    get = {c.name: c.passed for c in checks}
    return {
        "run_completed": result.get("status") == "finished" and answered,
        "service_failure_or_timeout": result.get("status") == "timeout"
        or any("ModelHTTPError" in (r.get("error") or "") for r in runs),
        "errors_occurred": failures > 0
        or result.get("status") != "finished"
        or any(r.get("status") == "failed" for r in runs),
        "recovered": failures > 0 and answered,
        "replanned": replans > 0,
        "replan_successful": replans > 0 and answered,
        "database_write_attempted": get.get("no_db_write") is False,
        "required_artifact_missing": any(c.name == "artifacts" and c.passed is False for c in checks),
        "unsupported_result_reported": any(c.name == "supported_numbers" and c.passed is False for c in checks),
        "appropriate_metric_crs": get.get("metric_crs") is not False,
    }
