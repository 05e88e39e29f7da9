"""Judges of a bench run: deterministic invariant checks from the task spec, and an LLM judge with the
paper's 13-dimension rubric.

The deterministic judge reads only the results folder (the run records and the artifact digests the
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
- ``value:<id>`` / ``states:<id>`` [answer accuracy]: expected numbers within tolerance in the cited
  artifacts / stated in the answer.
- ``supported_numbers`` [geometry data integrity]: no number in the answer that no artifact supports.
- ``no_db_write`` [benchmark rule compliance]: no database write was attempted.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, create_model

from .rubric import CATEGORIES, DIMENSIONS, FLAGS, JUDGE_SYSTEM, snap, weighted
from .spec import Expectation, TaskSpec, Turn, load_expected

EVENTS_FILE = Path(__file__).resolve().parents[1] / "geofaham_plugin" / "core" / "planning" / "data" / "events.json"

#: spatial predicate / operation -> substrings of tool names that perform it
PREDICATES: dict[str, tuple[str, ...]] = {
    "within_distance": ("within_distance", "buffer", "dwithin"),
    "intersects": ("inside", "intersect", "clip", "overlay", "spatial_join", "sjoin", "select_by_location"),
    "nearest": ("nearest", "closest"),
    "count": ("count", "aggregate", "summar", "group"),
    "damage_filter": ("select_damage",),
    "attribute_filter": ("filter", "select_where", "select_by_attribute", "query", "sql"),
    "group_by": ("group", "aggregate", "zonal"),
    "rank": ("nearest", "rank", "top", "sort"),
    "ratio": ("ratio", "share", "percent", "compare"),
    "attribute_sum": ("sum", "aggregate", "statistic", "summar", "sql"),
    "clip": ("clip", "intersection", "overlay"),
    "area": ("area",),
    "length": ("length",),
    "grid": ("grid", "hex", "bin", "tessel"),
    "zonal_stats": ("zonal",),
    "spectral_index": ("index", "nbr", "ndvi", "ndwi", "dnbr"),
    "change_detection": ("change", "dnbr", "differ", "delta"),
    "threshold": ("threshold", "classif", "mask"),
    "imagery_search": ("search", "stac", "imagery"),
}
WRITE_SQL = re.compile(r"\b(insert\s+into|update\s+\w+\s+set|delete\s+from|drop\s+(?:table|schema|database|view)|"
                       r"create\s+(?:table|schema|index|view)|alter\s+table|truncate\s+\w+|copy\s+\w+\s+from|grant\s+\w+)\b", re.I)
NUMBER = re.compile(r"(?<![\w.])(-?\d[\d,]*(?:\.\d+)?)\s*(km²|km2|km|m²|m2|ha|%|m|eur|€)?(?![\w])", re.I)
SCRUB = [re.compile(p, re.M) for p in (r"\[?a_[0-9a-f]{8}\]?", r"\b\d{4}-\d{2}-\d{2}(?:T[\d:.]+Z?)?\b", r"EPSG:\d+",
                                       r"\bstep\s+\d+\b", r"^\s*\d+\.\s", r"^\|\s*\d+\s*\|",
                                       r"\band [\d,]+ more\b")]  # "… and 645 more": rows not shown
DAMAGE_WORDS = ("destroyed", "major", "minor", "affected")


# ---------------------------------------------------------------------------------- helpers
def norm(text: Any) -> str:
    t = unicodedata.normalize("NFKD", str(text))
    t = "".join(c for c in t if not unicodedata.combining(c)).replace("\ufffd", "").casefold()
    return re.sub(r"\s+", " ", t).strip()


def norm_key(key: Any) -> str:
    """Group keys compared loosely: case, accents, DINS damage labels ("Destroyed (>50%)" = destroyed)."""
    k = norm(key)
    if k.startswith("no damage") or k in ("none", "undamaged"):
        return "none"
    for word in DAMAGE_WORDS:
        if k.startswith(word):
            return word
    return k


def num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def events_table() -> dict[int, dict]:
    return {e["id"]: e for e in json.loads(EVENTS_FILE.read_text(encoding="utf-8"))["events"]}


def answer_numbers(text: str) -> list[tuple[float, int, str]]:
    """(value, decimals, unit) of every number in ``text`` once ids, dates, CRS codes, step numbers and
    table row numbers are removed."""
    for pattern in SCRUB:
        text = pattern.sub(" ", text)
    out = []
    for m in NUMBER.finditer(text):
        raw = m.group(1).replace(",", "")
        try:
            value = float(raw)
        except ValueError:
            continue
        decimals = len(raw.split(".")[1]) if "." in raw else 0
        out.append((value, decimals, (m.group(2) or "").lower()))
    return out


class Check(BaseModel):
    name: str
    dimension: str
    passed: bool | None
    detail: str = ""
    turn: int | None = None


# --------------------------------------------------------------------------- the evidence
class Evidence:
    """A result file, indexed for the checks."""

    def __init__(self, result: dict):
        self.result = result
        self.task = TaskSpec.model_validate(result["task"])
        self.runs: list[dict] = [t["run"] for t in result.get("turns", [])]
        self.artifacts: dict[str, dict] = result.get("artifacts", {})
        self.tools: dict[str, dict] = result.get("tools", {})

    def run(self, i: int) -> dict | None:
        return self.runs[i] if i < len(self.runs) else None

    @staticmethod
    def done_steps(run: dict) -> list[dict]:
        return [s for s in run.get("steps", []) if s.get("status") == "done"]

    def turn_artifact_ids(self, run: dict) -> list[str]:
        ids = [s["artifact_id"] for s in run.get("steps", []) if s.get("artifact_id")]
        ids += [i for s in run.get("steps", []) for i in (s.get("inputs") or {}).values()]
        return [i for i in dict.fromkeys(ids) if i in self.artifacts]

    def cited(self, run: dict) -> list[dict]:
        """The answer's evidence: cited artifacts, else the turn's last produced artifact."""
        ids = [i for i in run.get("cited_artifacts", []) if i in self.artifacts]
        if not ids:
            produced = [s["artifact_id"] for s in run.get("steps", []) if s.get("artifact_id") in self.artifacts]
            ids = produced[-1:]
        return [self.artifacts[i] for i in ids]

    def source_ids(self) -> set[str]:
        return {s for a in self.artifacts.values() for s in a.get("source_ids", [])}

    def source_text(self) -> str:
        return norm(" ".join(f"{a.get('source', '')} {a.get('summary', '')} {json.dumps(a.get('extra', {}), default=str)}"
                             for a in self.artifacts.values()))

    def ledgers(self) -> list[dict]:
        return [p.get("ledger") or {} for r in self.runs for p in r.get("plans", [])]


def source_matches(token: str, ev: Evidence) -> bool:
    """One source token (alternatives separated by '|') found among the artifacts' sources."""
    ids, text = ev.source_ids(), None
    for alt in token.split("|"):
        if alt in ids or (alt in ("osm", "stac", "raster") and any(i.split(":")[0] == alt for i in ids)):
            return True
        if alt.startswith("file:"):
            text = text if text is not None else ev.source_text()
            if norm(alt[5:]) in text:
                return True
        if alt.startswith("event:"):
            _, eid, role = alt.split(":")
            if any(str(a.get("extra", {}).get("event_id")) == eid and a.get("extra", {}).get("role") == role
                   for a in ev.artifacts.values()):
                return True
    return False


def predicate_done(pred: str, steps: list[dict]) -> bool:
    tools = [(s.get("tool") or "").lower() for s in steps]
    if pred == "group_by" and any(s.get("tool") == "count" and (s.get("args") or {}).get("by") for s in steps):
        return True
    if pred == "damage_filter" and any((s.get("args") or {}).get("damage_classes") for s in steps):
        return True
    if pred == "count" and any(t in ("count", "nearest", "within_distance", "inside") for t in tools):
        return True  # a layer of the features answers "how many" (feature count)
    return any(sub in t for t in tools for sub in PREDICATES.get(pred, (pred,)))


# ------------------------------------------------------------------------ observed values
def observed_counts(arts: list[dict]) -> list[tuple[float, str]]:
    out = []
    for a in arts:
        meta = a.get("metadata", {})
        if a["kind"] in ("vector", "aoi") and meta.get("feature_count") is not None:
            out.append((float(meta["feature_count"]), f"{a['id']} features"))
        if a["kind"] == "table":
            rows = a.get("rows", [])
            counts = [num(r.get("count")) for r in rows if num(r.get("count")) is not None]
            if counts:
                out.append((sum(counts), f"{a['id']} total"))
                out += [(c, f"{a['id']} row") for c in counts]
            else:
                out += [(v, f"{a['id']} cell") for r in rows for v in map(num, r.values()) if v is not None]
            total = num((a.get("extra") or {}).get("total"))
            if total is not None:
                out.append((total, f"{a['id']} extra.total"))
        if a["kind"] in ("text",):
            out += [(v, f"{a['id']} text") for v in a.get("numbers", [])]
    return out


def observed_values(arts: list[dict], unit: str | None) -> list[tuple[float, str]]:
    out: list[tuple[float, str]] = []
    for a in arts:
        meta = a.get("metadata", {})
        area, length = num(meta.get("total_area_m2")), num(meta.get("total_length_m"))
        if area is not None:
            out += [(area / 1e6, f"{a['id']} area km²"), (area / 1e4, f"{a['id']} area ha"), (area, f"{a['id']} area m²")]
        if length is not None:
            out += [(length / 1000, f"{a['id']} length km"), (length, f"{a['id']} length m")]
        out += [(v, f"{a['id']} value") for v in a.get("numbers", [])]
        if unit == "fraction":
            out += [(v / 100, f"{a['id']} percent") for v in a.get("numbers", [])]
        if unit == "%":
            out += [(v * 100, f"{a['id']} fraction") for v in a.get("numbers", []) if 0 <= v <= 1]
    return out


def observed_names(arts: list[dict], top: int | None) -> list[str]:
    names: list[str] = []
    for a in arts:
        values = a.get("names") or []
        if not values and a["kind"] == "table":
            values = [str(r.get("value", r.get("name", ""))) for r in a.get("rows", [])]
        names += values[:top] if top else values
    return names


def observed_distances(arts: list[dict], top: int | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for a in arts:
        pairs = a.get("distances") or []
        for name, d in (pairs[:top] if top else pairs):
            if d is not None:
                out.setdefault(norm(name), float(d))
    return out


def observed_groups(arts: list[dict]) -> dict[str, float]:
    out: dict[str, float] = {}
    for a in arts:
        for row in a.get("rows", []):
            keys = [k for k, v in row.items() if isinstance(v, str)]
            vals = [k for k, v in row.items() if num(v) is not None and not isinstance(v, bool)]
            key = "value" if "value" in row else (keys[0] if keys else None)
            val = "count" if "count" in row else (vals[0] if vals else None)
            if key is not None and val is not None:
                out[norm_key(row[key])] = out.get(norm_key(row[key]), 0.0) + float(num(row[val]))
    return out


def expected_distances(value: Any) -> dict[str, float]:
    if isinstance(value, dict) and "distance_m" in value and "name" in value:
        return {value["name"]: float(value["distance_m"])}
    return {k: float(v) for k, v in (value or {}).items()}


def check_expectation(e: Expectation, expected: Any, arts: list[dict], answer: str) -> tuple[Check, Check | None]:
    """The value check (cited artifacts) and, when asked, the statement check (answer text)."""
    name, dim = f"value:{e.id}", "answer_accuracy"
    numbers = answer_numbers(answer)
    stated: Check | None = None

    def answer_has(target: float, unit: str | None) -> bool:
        for value, _, u in numbers:
            cands = [value]
            if unit == "m" and u == "km":
                cands.append(value * 1000)
            if unit == "fraction" and u == "%":
                cands.append(value / 100)
            if unit in ("km2",) and u == "ha":
                cands.append(value / 100)
            if any(e.within(c, target) for c in cands):
                return True
        return False

    if e.kind == "count":
        cands = observed_counts(arts)
        hit = next((w for v, w in cands if e.within(v, float(expected))), None)
        check = Check(name=name, dimension=dim, passed=hit is not None,
                      detail=f"expected {expected} (±{max(e.abs_tol, abs(float(expected)) * e.rel_tol):g}); "
                             + (f"found in {hit}" if hit else f"observed {sorted({v for v, _ in cands})[:8]}"))
        if e.in_answer:
            ok = answer_has(float(expected), None)
            stated = Check(name=f"states:{e.id}", dimension=dim, passed=ok,
                           detail=f"the answer {'states' if ok else 'does not state'} {expected}")
    elif e.kind == "value":
        cands = observed_values(arts, e.unit)
        hit = next((w for v, w in cands if e.within(v, float(expected))), None)
        check = Check(name=name, dimension=dim, passed=hit is not None,
                      detail=f"expected {expected} {e.unit or ''} (±{max(e.abs_tol, abs(float(expected)) * e.rel_tol):g}); "
                             + (f"found in {hit}" if hit else "not found in the cited artifacts"))
        if e.in_answer:
            ok = answer_has(float(expected), e.unit)
            stated = Check(name=f"states:{e.id}", dimension=dim, passed=ok,
                           detail=f"the answer {'states' if ok else 'does not state'} {expected} {e.unit or ''}")
    elif e.kind == "names":
        want = [expected] if isinstance(expected, str) else list(expected)
        got = observed_names(arts, e.top)
        want_n, got_n = {norm(w) for w in want}, {norm(g) for g in got}
        common = want_n & got_n
        recall = len(common) / len(want_n) if want_n else 1.0
        precision = len(common) / len(got_n) if got_n else (1.0 if not want_n else 0.0)
        ok = recall >= e.min_recall - 1e-9 and precision >= e.min_precision - 1e-9
        check = Check(name=name, dimension=dim, passed=ok,
                      detail=f"recall {recall:.2f} (≥{e.min_recall:g}), precision {precision:.2f} (≥{e.min_precision:g}); "
                             f"missing {sorted(want_n - got_n)[:5]}, extra {sorted(got_n - want_n)[:5]}")
        if e.in_answer and want:
            text = norm(answer)
            shown = want[:12]
            found = sum(norm(w) in text for w in shown)
            stated = Check(name=f"states:{e.id}", dimension=dim, passed=found / len(shown) >= min(1.0, e.min_recall) - 1e-9,
                           detail=f"{found} of {len(shown)} expected names in the answer")
    elif e.kind == "distance":
        want = expected_distances(expected)
        got = observed_distances(arts, e.top)
        bad = [f"{n}: expected {d:g}, got {got.get(norm(n))}" for n, d in want.items()
               if norm(n) not in got or not e.within(got[norm(n)], d)]
        check = Check(name=name, dimension=dim, passed=not bad,
                      detail="all distances within tolerance" if not bad else "; ".join(bad[:4]))
        if e.in_answer and want:
            first = sorted(want.values())[:3]
            ok = all(answer_has(d, "m") for d in first)
            stated = Check(name=f"states:{e.id}", dimension=dim, passed=ok,
                           detail=f"the answer {'states' if ok else 'does not state'} the distances {first}")
    elif e.kind == "count_by":
        want = {norm_key(k): float(v) for k, v in dict(expected).items()}
        got = observed_groups(arts)
        bad = [f"{k}: expected {v:g}, got {got.get(k)}" for k, v in want.items() if k not in got or not e.within(got[k], v)]
        check = Check(name=name, dimension=dim, passed=not bad,
                      detail="every group within tolerance" if not bad else "; ".join(bad[:4]) + f" ({len(bad)} off)")
    elif e.kind == "boolean":
        vectors = [a for a in arts if a["kind"] in ("vector", "aoi")]
        observed = any((a.get("metadata", {}).get("feature_count") or 0) > 0 for a in vectors) if vectors else None
        check = Check(name=name, dimension=dim, passed=observed is not None and observed == bool(expected),
                      detail=f"expected {bool(expected)}, observed {observed} (a non-empty cited layer means true)")
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
    events = events_table()

    # run status
    for i in range(len(turns)):
        run = ev.run(i)
        status = run.get("status") if run else "not run"
        ok = result.get("status") == "finished" and status == "answered"
        checks.append(Check(name="completed", dimension="answer_completeness", passed=ok, turn=i,
                            detail=f"run {status}" + (f"; task {result.get('status')}: {result.get('error')}"
                                                      if result.get("status") != "finished" else "")))

    # disaster record
    ledgers = ev.ledgers()
    chosen = [x.get("disaster_event_id") for x in ledgers if x.get("disaster_event_id") is not None]
    chosen += [int(a["extra"]["event_id"]) for a in ev.artifacts.values()
               if isinstance(a.get("extra"), dict) and num(a["extra"].get("event_id")) is not None]
    if spec.event_ids:
        wrong = sorted({e for e in chosen if e not in spec.event_ids})
        checks.append(Check(name="event", dimension="data_selection_correctness",
                            passed=bool(chosen) and not wrong,
                            detail=f"chosen {sorted(set(chosen)) or 'none'}, allowed {spec.event_ids}"
                                   + (f"; wrong {wrong}" if wrong else "")))
        groups = {events[e]["name"] for e in spec.event_ids if e in events}
        if len(groups) > 1:
            covered = {events[e]["name"] for e in chosen if e in events} & groups
            checks.append(Check(name="events_covered", dimension="data_selection_correctness",
                                passed=covered == groups, detail=f"covered {sorted(covered)} of {sorted(groups)}"))
    else:
        checks.append(Check(name="event", dimension="data_selection_correctness", passed=None,
                            detail="the task is on no event-table record"))

    # area of interest and sources
    if spec.aoi.layers:
        token = "|".join(f"layer:{x}" if "." not in x else f"file:{x}" for x in spec.aoi.layers)
        checks.append(Check(name="aoi", dimension="data_selection_correctness", passed=source_matches(token, ev),
                            detail=f"{spec.aoi.kind}: one of {spec.aoi.layers}"))
    else:
        checks.append(Check(name="aoi", dimension="data_selection_correctness", passed=None,
                            detail=f"{spec.aoi.kind} {spec.aoi.place or spec.aoi.note} (left to the LLM judge)"))
    if spec.required_sources:
        missing = [t for t in spec.required_sources if not source_matches(t, ev)]
        checks.append(Check(name="sources", dimension="data_selection_correctness", passed=not missing,
                            detail="all used" if not missing else f"missing {missing}"))

    # spatial predicates, per turn
    for i, turn in enumerate(turns):
        if not turn.required_predicates:
            continue
        run = ev.run(i)
        steps = ev.done_steps(run) if run else []
        missing = [p for p in turn.required_predicates if not predicate_done(p, steps)]
        checks.append(Check(name="predicates", dimension="spatial_temporal_logic", passed=not missing, turn=i,
                            detail=f"tools run: {[s.get('tool') for s in steps]}" + (f"; missing {missing}" if missing else "")))

    # dates and windows
    checks.append(check_windows(spec, ev, events))

    # metric CRS
    checks.append(check_metric(spec, ev))

    # artifacts, expectations, supported numbers, per turn
    all_numbers = {n for a in ev.artifacts.values() for n in a.get("numbers", [])}
    for i, turn in enumerate(turns):
        run = ev.run(i)
        cited = ev.cited(run) if run else []
        turn_arts = [ev.artifacts[a] for a in ev.turn_artifact_ids(run)] if run else []
        for spec_art in turn.artifacts:  # cited first; any artifact of the turn is a layer the user gets
            checks.append(check_artifact(spec_art, cited + [a for a in turn_arts if a not in cited], i))
        for e in turn.expectations:
            value = e.resolve(expected)
            if value is None:
                checks.append(Check(name=f"value:{e.id}", dimension="answer_accuracy", passed=None, turn=i,
                                    detail=f"no reference value offline ({e.description}); left to the LLM judge"))
                continue
            check, stated = check_expectation(e, value, cited, run.get("answer", "") if run else "")
            check.turn = i
            checks.append(check)
            if stated is not None:
                stated.turn = i
                checks.append(stated)
        if run and run.get("answer"):
            checks.append(check_supported(run, all_numbers, spec, events, i))

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
    text = json.dumps([[s.get("args") for s in r.get("steps", [])] +
                       [[st.get("args") for st in (p.get("plan") or {}).get("steps", [])] for p in r.get("plans", [])]
                       for r in ev.runs], default=str)
    writes = sorted({m.group(0) for m in WRITE_SQL.finditer(text)})
    checks.append(Check(name="no_db_write", dimension="benchmark_rule_compliance", passed=not writes,
                        detail="no write statement in any tool call" if not writes else f"write attempted: {writes}"))

    applicable = [c for c in checks if c.passed is not None]
    score = sum(c.passed for c in applicable) / len(applicable) if applicable else 0.0
    values = [c for c in checks if c.name.startswith("value:") and c.passed is not None]
    return {
        "task_id": spec.id, "category": spec.category, "difficulty": spec.difficulty, "offline": spec.offline,
        "score": round(score, 4), "passed": bool(applicable) and all(c.passed for c in applicable),
        "accuracy": round(sum(c.passed for c in values) / len(values), 4) if values else None,
        "checks": [c.model_dump() for c in checks], "flags": process_flags(result, ev, checks),
        "by_dimension": by_dimension(checks), "rubric_proxy": rubric_proxy(by_dimension(checks)),
    }


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


def check_windows(spec: TaskSpec, ev: Evidence, events: dict[int, dict]) -> Check:
    """Event date and time windows consistent with the event (ledger windows, dated artifacts)."""
    name, dim = "windows", "spatial_temporal_logic"
    problems: list[str] = []
    seen = 0
    for ledger in ev.ledgers():
        eid, edate = ledger.get("disaster_event_id"), ledger.get("event_date")
        if eid in events and edate and edate != events[eid]["event_date"]:
            problems.append(f"ledger date {edate} is not record {eid}'s {events[eid]['event_date']}")
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


def check_metric(spec: TaskSpec, ev: Evidence) -> Check:
    name, dim = "metric_crs", "geometric_operation_quality"
    wants_metric = any(c.startswith("metric") or c == "geodesic_or_projected" for c in spec.crs_constraints)
    metric_steps, problems = 0, []
    for r in ev.runs:
        notes = " ".join(r.get("notes", []))
        for s in ev.done_steps(r):
            tool = ev.tools.get(s.get("tool") or "", {})
            if not tool.get("metric"):
                continue
            metric_steps += 1
            geographic = [i for i in (s.get("inputs") or {}).values()
                          if ev.artifacts.get(i, {}).get("metadata", {}).get("crs_is_geographic")]
            if geographic and not re.search(rf"step {s['step_id']}: .*(metric projection|geodesic)", notes):
                problems.append(f"step {s['step_id']} {s['tool']} on geographic inputs {geographic} without a metric projection")
    if "preserve_source_crs" in spec.crs_constraints:
        nocrs = [a["id"] for a in ev.artifacts.values() if a["kind"] in ("raster", "vector") and not a.get("metadata", {}).get("crs")]
        problems += [f"{i} has no CRS" for i in nocrs]
    if wants_metric and not metric_steps:
        problems.append("the task needs a metric operation, none ran")
    if not metric_steps and not spec.crs_constraints:
        return Check(name=name, dimension=dim, passed=None, detail="no metric operation")
    return Check(name=name, dimension=dim, passed=not problems,
                 detail="; ".join(problems) or f"{metric_steps} metric step(s), projected or geodesic")


def check_artifact(spec_art, arts: list[dict], turn: int) -> Check:
    kinds = {"vector": ("vector", "aoi")}.get(spec_art.kind, (spec_art.kind,))
    problems = []
    for a in arts:
        if a["kind"] not in kinds:
            continue
        meta, file = a.get("metadata", {}), a.get("file", {})
        geom = (meta.get("geometry_type") or "").lower()
        if spec_art.geometry and spec_art.geometry not in geom and not (meta.get("feature_count") == 0):
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
        return Check(name="artifacts", dimension="artifact_quality", passed=True, turn=turn,
                     detail=f"{spec_art.kind}{'/' + spec_art.geometry if spec_art.geometry else ''}: {a['id']} ({n})")
    return Check(name="artifacts", dimension="artifact_quality", passed=False, turn=turn,
                 detail=f"no valid {spec_art.kind}{'/' + spec_art.geometry if spec_art.geometry else ''} among the cited "
                        f"artifacts" + (f": {'; '.join(problems[:3])}" if problems else ""))


def check_record(run: dict, turn: int) -> Check:
    """Structured evidence: a run record with a status, an answer and cited artifacts (or an honest
    statement that nothing could be computed)."""
    problems = [p for p, bad in (("no answer", not run.get("answer")), ("no plan", not run.get("plans")),
                                 ("no cited artifact", not run.get("cited_artifacts") and run.get("status") == "answered"))
                if bad]
    return Check(name="record", dimension="structured_result_evidence", passed=not problems, turn=turn,
                 detail="; ".join(problems) or f"{run.get('status')} with {len(run.get('cited_artifacts', []))} cited artifact(s)")


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
    return Check(name="lineage", dimension="method_traceability", passed=not missing and roots > 0, turn=turn,
                 detail=f"{len(seen)} artifacts traced to {roots} source(s)" + (f"; unknown {missing}" if missing else ""))


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
    return Check(name="execution", dimension="implementation_correctness", passed=not problems, turn=turn,
                 detail="; ".join(problems[:3]) or f"{len(produced)} step(s) executed, cited outputs read back")


def check_error_handling(run: dict, result: dict, turn: int) -> Check:
    """Failures diagnosed and handled: recovered, or an honest partial answer naming what was not done."""
    failures = (run.get("progress") or {}).get("failures", [])
    status, answer = run.get("status"), norm(run.get("answer", ""))
    if result.get("status") == "timeout" and status in (None, "running"):
        return Check(name="error_handling", dimension="error_handling", passed=False, turn=turn, detail="cut off by the timeout")
    plans = [json.dumps([(st.get("tool"), st.get("args"), st.get("inputs")) for st in (p.get("plan") or {}).get("steps", [])],
                        sort_keys=True, default=str) for p in run.get("plans", [])]
    repeats = sum(1 for a, b in zip(plans, plans[1:]) if a == b)
    if repeats:
        return Check(name="error_handling", dimension="error_handling", passed=False, turn=turn,
                     detail=f"replanned {repeats} time(s) to the same plan after {len(failures)} failure(s)")
    if not failures and status == "answered":
        return Check(name="error_handling", dimension="error_handling", passed=True, turn=turn, detail="no error occurred")
    if status == "answered":
        return Check(name="error_handling", dimension="error_handling", passed=True, turn=turn,
                     detail=f"recovered from {len(failures)} failure(s)")
    honest = status == "partial" and ("partial" in answer or "not done" in answer or "could not" in answer)
    return Check(name="error_handling", dimension="error_handling", passed=honest, turn=turn,
                 detail=f"{status} after {len(failures)} failure(s): " + ("stated honestly" if honest else
                                                                          (run.get("error") or "no diagnosis in the answer")[:200]))


def check_caveats(run: dict, ev: Evidence, turn: int) -> Check:
    """Evidence-aware confidence: the limitations the used data carry (partial snapshot, stand-in
    area, partial coverage ...) are stated in the answer."""
    used = set(ev.turn_artifact_ids(run))
    limitations = list(dict.fromkeys(str(x) for a in used for x in (ev.artifacts[a].get("extra") or {}).get("limitations") or []))
    if not limitations:
        return Check(name="caveats", dimension="evidence_aware_confidence", passed=None, turn=turn,
                     detail="the data used carry no recorded limitation")
    answer = norm(run.get("answer", ""))
    missing = [x for x in limitations if norm(x)[:40] not in answer]
    return Check(name="caveats", dimension="evidence_aware_confidence", passed=not missing, turn=turn,
                 detail=f"{len(limitations) - len(missing)} of {len(limitations)} limitations stated"
                        + (f"; not stated: {missing[:2]}" if missing else ""))


def check_supported(run: dict, artifact_numbers: set[float], spec: TaskSpec, events: dict, turn: int) -> Check:
    """Every number of the answer rounds from a number some artifact (or the question, notes, event
    record) holds; distances/areas may be converted (m<->km, m²->km²/ha, fraction<->%)."""
    base = set(artifact_numbers)
    base |= {float(n) for n in range(0, 13)}  # step numbers, ranks
    for text in [run.get("question", ""), *run.get("notes", []),
                 *[f.get("message", "") for f in (run.get("progress") or {}).get("failures", [])],
                 spec.question]:
        base |= {v for v, _, _ in answer_numbers(text)}
    for eid in spec.event_ids:
        if eid in events:
            base |= {float(p) for p in events[eid]["event_date"].split("-")}
    cands = sorted(base | {v / 1000 for v in base} | {v / 1e6 for v in base} | {v / 1e4 for v in base}
                   | {v * 100 for v in base if abs(v) <= 1} | {v * 1000 for v in base if abs(v) < 1000})
    import bisect

    bad = []
    for value, decimals, _ in answer_numbers(run.get("answer", "")):
        half = 0.5 * 10 ** (-decimals) + 1e-9
        i = bisect.bisect_left(cands, value - half)
        if not (i < len(cands) and cands[i] <= value + half):
            bad.append(value)
    return Check(name="supported_numbers", dimension="geometry_data_integrity", passed=not bad, turn=turn,
                 detail="every number traces to an artifact" if not bad else f"unsupported: {bad[:8]}")


def process_flags(result: dict, ev: Evidence, checks: list[Check]) -> dict[str, bool]:
    runs = ev.runs
    failures = sum(len((r.get("progress") or {}).get("failures", [])) for r in runs)
    replans = sum((r.get("progress") or {}).get("replans", 0) for r in runs)
    answered = bool(runs) and all(r.get("status") == "answered" for r in runs)
    get = {c.name: c.passed for c in checks}
    return {
        "run_completed": result.get("status") == "finished" and answered,
        "service_failure_or_timeout": result.get("status") == "timeout" or any(
            "ModelHTTPError" in (r.get("error") or "") for r in runs),
        "errors_occurred": failures > 0 or result.get("status") != "finished" or any(r.get("status") == "failed" for r in runs),
        "recovered": failures > 0 and answered,
        "replanned": replans > 0,
        "replan_successful": replans > 0 and answered,
        "database_write_attempted": get.get("no_db_write") is False,
        "required_artifact_missing": any(c.name == "artifacts" and c.passed is False for c in checks),
        "unsupported_result_reported": any(c.name == "supported_numbers" and c.passed is False for c in checks),
        "appropriate_metric_crs": get.get("metric_crs") is not False,
    }


# ------------------------------------------------------------------------------ LLM judge
def _scores_model():
    scores = create_model("RubricScores", **{k: (float, Field(ge=0, le=1)) for k in DIMENSIONS})
    flags = create_model("RubricFlags", **{k: (bool, False) for k in FLAGS})
    return create_model("RubricJudgement", scores=(scores, ...), flags=(flags, Field(default_factory=flags)),
                        rationale=(str, ""))  # no maxLength: llama.cpp grammars explode on long bounded strings


def judge_payload(result: dict, expected: dict | None = None, max_chars: int = 24000) -> str:
    """What the LLM judge sees: the spec (with expected values), the run records and artifact metadata."""
    expected = expected if expected is not None else load_expected()
    ev = Evidence(result)
    spec = ev.task
    events = events_table()
    task = spec.model_dump(mode="json", exclude={"capabilities", "notes"}, exclude_defaults=True)
    task["events"] = [f"{e} {events[e]['name']} ({events[e]['event_date']})" for e in spec.event_ids if e in events]
    for turn_key in ("expectations",):
        for e, raw in zip(spec.expectations, task.get(turn_key, [])):
            raw["expected"] = e.resolve(expected)
    for fu, raw in zip(spec.follow_ups, task.get("follow_ups", [])):
        for e, rawe in zip(fu.expectations, raw.get("expectations", [])):
            rawe["expected"] = e.resolve(expected)
    runs = []
    for r in ev.runs:
        plans = r.get("plans", [])
        runs.append({
            "question": r.get("question"), "status": r.get("status"), "error": r.get("error"),
            "ledger": (plans[-1].get("ledger") if plans else None),
            "plans": [{"mode": p.get("mode"), "template": p.get("template"),
                       "steps": [{k: s.get(k) for k in ("id", "agent", "tool", "args", "inputs", "depends_on")}
                                 for s in (p.get("plan") or {}).get("steps", [])]} for p in plans],
            "steps": [{k: s.get(k) for k in ("plan_index", "step_id", "agent", "tool", "args", "inputs", "status",
                                             "artifact_id", "reused")} | {"failure": (s.get("failure") or {}).get("message")}
                      for s in r.get("steps", [])],
            "progress": {k: (r.get("progress") or {}).get(k) for k in ("replans", "stalls", "turns")},
            "failures": [f.get("message") for f in (r.get("progress") or {}).get("failures", [])],
            "decisions": r.get("decisions"), "notes": r.get("notes"), "answer": (r.get("answer") or "")[:3000],
            "cited_artifacts": r.get("cited_artifacts"), "tokens": (r.get("usage") or {}).get("totals"),
            "seconds": r.get("seconds"),
        })
    arts = {}
    for a in ev.artifacts.values():
        meta = {k: v for k, v in a.get("metadata", {}).items() if k in (
            "geometry_type", "crs", "crs_is_geographic", "feature_count", "bounds_4326", "total_area_m2", "total_length_m",
            "invalid_geometries", "row_count", "columns", "item_count", "collection", "time_start", "time_end", "bands",
            "resolution", "aoi_coverage", "width", "height")}
        arts[a["id"]] = {"kind": a["kind"], "source": a.get("source"), "summary": a.get("summary"), "inputs": a.get("inputs"),
                         "metadata": meta, "file_ok": bool(a.get("file", {}).get("readable")),
                         "names": (a.get("names") or [])[:15], "distances": (a.get("distances") or [])[:10],
                         "rows": (a.get("rows") or [])[:15],
                         "limitations": (a.get("extra") or {}).get("limitations")}
    payload = {"task": task, "outcome": {"status": result.get("status"), "error": result.get("error"),
                                         "wall_seconds": result.get("wall_seconds")},
               "runs": runs, "artifacts": arts}
    text = json.dumps(payload, ensure_ascii=False, default=str, separators=(",", ":"))
    while len(text) > max_chars and arts:  # drop artifact detail first, then truncate
        for a in arts.values():
            a.pop("rows", None), a.pop("distances", None), a.pop("names", None)
        text = json.dumps(payload, ensure_ascii=False, default=str, separators=(",", ":"))
        break
    return text[:max_chars]


def llm_judge(result: dict, model, expected: dict | None = None, max_chars: int = 24000) -> dict:
    """Score one result with the rubric through ``model`` (a core ChatModel or an LLM); the reply is
    schema-constrained, validated and retried by :class:`geofaham_plugin.core.llm.LLM`."""
    from geofaham_plugin.core.errors import GeoFahamError
    from geofaham_plugin.core.llm import LLM, Message

    llm = model if isinstance(model, LLM) else LLM(model)
    out_type = _scores_model()
    messages = [Message(role="system", content=JUDGE_SYSTEM),
                Message(role="user", content=judge_payload(result, expected, max_chars))]
    before = len(llm.usage.snapshot())
    try:
        judgement = llm.structured("judge", messages, out_type, step=f"judge:{result.get('task_id')}")
    except GeoFahamError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:1000]}
    scores = {k: snap(v) for k, v in judgement.scores.model_dump().items()}
    calls = llm.usage.snapshot()[before:]
    return {"scores": scores, **weighted(scores), "flags": judgement.flags.model_dump(),
            "rationale": judgement.rationale[:1200], "model": calls[-1].model if calls else "",
            "tokens": sum(c.prompt_tokens + c.completion_tokens for c in calls)}


# ---------------------------------------------------------------------------- a results folder
RESERVED = {"config.json", "summary.json", "judgments.json"}


def _is_result(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "task_id" in data and "turns" in data


def result_files(folder: Path) -> list[Path]:
    """The task results of one configuration's folder (other JSON files, e.g. performance benchmarks'
    outputs sharing bench/results/, are ignored)."""
    return sorted(p for p in Path(folder).glob("*.json") if p.name not in RESERVED and _is_result(p))


def judge_folder(folder: Path | str, model=None, *, log=print, expected: dict | None = None,
                 max_chars: int = 24000) -> dict:
    """Judge every result of one configuration's folder: deterministic always, the LLM judge when a
    ``model`` is given (earlier LLM judgements of unchanged results are kept). Writes judgments.json
    and summary.json; returns the judgments."""
    from .runner import atomic_write_json, now, summarize

    folder = Path(folder)
    path = folder / "judgments.json"
    previous = json.loads(path.read_text(encoding="utf-8")).get("tasks", {}) if path.exists() else {}
    expected = expected if expected is not None else load_expected()
    tasks: dict[str, dict] = {}
    for file in result_files(folder):
        result = json.loads(file.read_text(encoding="utf-8"))
        entry: dict[str, Any] = {"result_finished_at": result.get("finished_at"),
                                 "deterministic": deterministic(result, expected)}
        old = previous.get(result["task_id"], {})
        if model is not None:
            entry["llm"] = llm_judge(result, model, expected, max_chars)
            log(f"judged {result['task_id']}: " + (f"{entry['llm']['overall']:.3f}" if "overall" in entry["llm"]
                                                     else entry["llm"].get("error", "")))
        elif old.get("llm") and old.get("result_finished_at") == result.get("finished_at"):
            entry["llm"] = old["llm"]
        tasks[result["task_id"]] = entry
    judgments = {"updated_at": now(), "tasks": tasks}
    atomic_write_json(path, judgments)
    det = [t["deterministic"] for t in tasks.values()]
    summary = summarize(folder) | {
        "deterministic_pass": sum(d["passed"] for d in det),
        "deterministic_score_mean": round(sum(d["score"] for d in det) / len(det), 4) if det else None,
        "llm_overall_mean": _mean([t["llm"]["overall"] for t in tasks.values() if "overall" in t.get("llm", {})]),
        "updated_at": now(),
    }
    atomic_write_json(folder / "summary.json", summary)
    return judgments


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def config_folders(results: Path | str) -> list[Path]:
    """``results`` is one configuration's folder, or a folder of them."""
    results = Path(results)
    if (results / "config.json").exists():
        return [results]
    folders = sorted(p for p in results.iterdir() if p.is_dir() and ((p / "config.json").exists() or result_files(p)))
    return folders or ([results] if result_files(results) else [])
