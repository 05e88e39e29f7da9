"""What a bench result shows: one result file indexed for the judges (its runs, done steps, cited
artifacts and the sources they came from), the numbers an answer states, and every number an artifact's
digest holds (``bench.evidence`` wrote them; the supported-numbers check reads them). What the answer
states is read from its structured answer and text, never from the artifacts' pools.

Read from the result alone, never from the session or GeoFaham's code; the event records come from
the core's event table (``geofaham_plugin.core.domain.events``)."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from typing import Any

from geofaham_plugin.core.domain.events import DisasterEvent, load_events
from geofaham_plugin.core.domain.ids import ARTIFACT_ID_IN_TEXT
from geofaham_plugin.core.orchestrator.answer import StructuredAnswer

from .spec import TaskSpec

#: spatial predicate / operation -> substrings of tool names that perform it
PREDICATES: dict[str, tuple[str, ...]] = {
    "within_distance": ("within_distance", "buffer", "dwithin"),
    "intersects": ("inside", "intersect", "clip", "overlay", "spatial_join", "sjoin", "select_by_location"),
    "outside": ("outside", "disjoint", "difference"),
    "nearest": ("nearest", "closest"),
    "count": ("count", "aggregate", "summar", "group"),
    "damage_filter": ("select_damage",),
    "attribute_filter": ("filter", "select_where", "select_by_attribute", "query", "sql"),
    "group_by": ("group", "aggregate", "zonal"),
    "rank": ("nearest", "rank", "top", "sort"),
    "ratio": ("ratio", "share", "percent", "compare"),
    "attribute_sum": ("sum", "aggregate", "statistic", "summar", "sql"),
    "attribute_mean": ("mean", "average", "statistic", "sql"),
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
NUMBER = re.compile(r"(?<![\w.])(-?\d[\d,]*(?:\.\d+)?)\s*(km²|km2|km|m²|m2|ha|%|m|eur|€)?(?![\w])", re.I)
#: removed from a text before its numbers are read: artifact ids, dates, CRS codes, step and row numbers
SCRUB = [
    ARTIFACT_ID_IN_TEXT,
    *(
        re.compile(p, re.M)
        for p in (
            r"\b\d{4}-\d{2}-\d{2}(?:T[\d:.]+Z?)?\b",
            r"EPSG:\d+",
            r"\bstep\s+\d+\b",
            r"^\s*\d+\.\s",
            r"^\|\s*\d+\s*\|",
            r"\band [\d,]+ more\b",
        )
    ),
]  # "… and 645 more": rows not shown
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


def event_records() -> dict[int, DisasterEvent]:
    """The event table's records by id."""
    return {e.id: e for e in load_events()}


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


# --------------------------------------------------------------------------- the evidence
class Evidence:
    """A result file, indexed for the checks."""

    def __init__(self, result: dict) -> None:
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
        return norm(
            " ".join(
                f"{a.get('source', '')} {a.get('summary', '')} {json.dumps(a.get('extra', {}), default=str)}"
                for a in self.artifacts.values()
            )
        )

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
            if any(
                str(a.get("extra", {}).get("event_id")) == eid and a.get("extra", {}).get("role") == role
                for a in ev.artifacts.values()
            ):
                return True
    return False


#: tools whose ``by`` argument groups their result (one row per value of a field)
GROUPING_TOOLS = ("count", "share", "measure", "stats", "sum_by")
#: tools that answer "how many": a layer of the features (its feature count), or a share's part and base counts
COUNTING_TOOLS = ("count", "nearest", "within_distance", "inside", "outside", "share")
#: measure predicates a typed tool performs only with the right argument: predicate -> (tool, argument, value)
BY_ARGUMENT: dict[str, tuple[str, str, str]] = {
    "area": ("measure", "quantity", "area"),
    "length": ("measure", "quantity", "length"),
    "attribute_sum": ("stats", "stat", "sum"),
    "attribute_mean": ("stats", "stat", "mean"),
}


def predicate_done(pred: str, steps: list[dict]) -> bool:
    """Whether a done step performed ``pred``: a tool whose name says it (``PREDICATES``), or a typed tool with
    the argument that makes it that operation (``measure`` with quantity area / length, ``stats`` with stat
    sum / mean, a ``by`` field for a grouping). The argument is read, so ``measure(quantity=length)`` is no
    area and ``stats(stat=mean)`` no sum."""
    tools = [(s.get("tool") or "").lower() for s in steps]
    args = [s.get("args") or {} for s in steps]
    if pred == "group_by" and any(
        (t in GROUPING_TOOLS and a.get("by")) or t == "count_in_zones" for t, a in zip(tools, args, strict=True)
    ):
        return True
    if pred == "damage_filter" and any(a.get("damage_classes") for a in args):
        return True
    if pred == "count" and any(t in COUNTING_TOOLS for t in tools):
        return True  # a layer of the features answers "how many" (feature count)
    if pred in BY_ARGUMENT:
        tool, arg, want = BY_ARGUMENT[pred]
        if any(t == tool and str(a.get(arg, "")).lower() == want for t, a in zip(tools, args, strict=True)):
            return True
    return any(sub in t for t in tools for sub in PREDICATES.get(pred, (pred,)))


def predicate_offered(pred: str, tool_names: list[str]) -> bool:
    """Whether a core with these tools can perform ``pred`` at all (the report's capability gaps): a tool
    named for it, or the typed tool whose argument makes it (``measure`` for an area)."""
    names = {n.lower() for n in tool_names}
    if pred == "group_by" and names & {*GROUPING_TOOLS, "count_in_zones"}:
        return True
    if pred == "count" and names & set(COUNTING_TOOLS):
        return True
    if pred in BY_ARGUMENT and BY_ARGUMENT[pred][0] in names:
        return True
    return any(sub in n for n in names for sub in PREDICATES.get(pred, (pred,)))


# ------------------------------------------------------------------------- what the answer states
YES_NO = re.compile(r"\b(yes|no|s[ií]|oui|non|n[aã]o)\b", re.I)
TABLE_ROW = re.compile(r"^\|\s*([^|]+?)\s*\|(?:[^|\n]*\|)*?\s*(-?\d[\d,]*(?:\.\d+)?)\s*\|\s*$", re.M)
LABELLED = re.compile(r"^[\s\-*•]*([A-Za-zÀ-ÿ][^:\n|]{0,60}?)\s*[:=]\s*(-?\d[\d,]*(?:\.\d+)?)\b", re.M)


def structured_answer(run: dict | None) -> StructuredAnswer | None:
    """The run record's structured answer (``RunRecord.structured``); None for records written before it
    existed (the judges then read the answer text, never the artifacts' pools)."""
    data = (run or {}).get("structured")
    if not data:
        return None
    return StructuredAnswer.model_validate(data)


def text_yes_no(text: str) -> bool | None:
    """The first yes/no word the answer states (English, Spanish, French, Portuguese), None when none."""
    m = YES_NO.search(text or "")
    if m is None:
        return None
    return norm(m.group(1)) in ("yes", "si", "oui")


def text_groups(text: str) -> dict[str, float]:
    """Per-group numbers an answer text states: markdown table rows (first cell, last number) and
    ``label: number`` lines; keys through :func:`norm_key`."""
    out: dict[str, float] = {}
    for pattern in (TABLE_ROW, LABELLED):
        for m in pattern.finditer(text or ""):
            key, raw = m.group(1), m.group(2).replace(",", "")
            if set(key) <= set("-: ") or norm(key) in ("value", "count", "group"):
                continue
            try:
                out.setdefault(norm_key(key), float(raw))
            except ValueError:
                continue
    return out


def artifact_numbers(art: dict) -> set[float]:
    """Every number one artifact's digest holds: its numbers, feature/row counts, total area and
    length, the table total and the numeric cells of its rows."""
    meta = art.get("metadata", {})
    values = [*art.get("numbers", [])]
    values += [meta.get(k) for k in ("feature_count", "row_count", "item_count", "total_area_m2", "total_length_m")]
    values.append((art.get("extra") or {}).get("total"))
    values += [v for row in art.get("rows", []) for v in row.values() if not isinstance(v, bool)]
    return {f for v in values if (f := num(v)) is not None}
