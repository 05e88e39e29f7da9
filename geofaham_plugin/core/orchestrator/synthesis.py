"""Final synthesis: findings are read from artifacts, so every number in the answer comes from an
executed engine. A model may phrase the answer, but its text is rejected if it contains a number the
findings do not."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd
from pydantic import BaseModel, Field

from ..domain.ids import ARTIFACT_ID_IN_TEXT
from ..store.models import ArtifactKind, ArtifactRecord

if TYPE_CHECKING:
    from ..store.store import ResponseStore

MAX_ROWS = 12
NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")


class Findings(BaseModel):
    headline: list[str] = Field(default_factory=list)
    details: list[str] = Field(default_factory=list)  # markdown blocks (tables)
    cited: list[str] = Field(default_factory=list)
    limitations: list[str] = Field(default_factory=list)

    def numbers(self) -> set[str]:
        return {n.replace(",", "") for n in NUMBER.findall("\n".join(self.headline + self.details + self.limitations))}


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.1f}".rstrip("0").rstrip(".")


def _text(value: object) -> str:
    """A table cell: missing names (common in OSM) read "(unnamed)", not "None"/"nan"."""
    return "(unnamed)" if value is None or (isinstance(value, float) and value != value) or value == "" else str(value)


def describe_vector(store: ResponseStore, record: ArtifactRecord) -> tuple[str, str]:
    gdf = store.read_vector(record.id)
    n = len(gdf)
    extra = record.extra
    what = f"{extra['feature_class']} features" if extra.get("feature_class") else "features"
    if "damage_classes" in extra:
        what = f"buildings ({', '.join(extra['damage_classes'])})"
    headline = f"{n:,} {what}"
    if "distance_m" in extra and "k" not in extra:
        headline += f" within {_fmt(extra['distance_m'])} m"
    headline += f" [{record.id}]"
    if n == 0:
        return headline, ""
    name_field = extra.get("name_field")
    columns = [c for c in (name_field, "distance_m", "damage_class") if c and c in gdf.columns]
    if not columns:
        return headline, ""
    rows = gdf[columns].head(MAX_ROWS)
    header = ["#"] + [
        ("Name" if c == name_field else "Distance (m)" if c == "distance_m" else "Damage") for c in columns
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for i, (_, row) in enumerate(rows.iterrows(), start=1):
        cells = [str(i)] + [(_fmt(row[c]) if c == "distance_m" else _text(row[c])) for c in columns]
        lines.append("| " + " | ".join(cells) + " |")
    if n > MAX_ROWS:
        lines.append(f"\n… and {n - MAX_ROWS:,} more in [{record.id}].")
    return headline, "\n".join(lines)


def describe_table(store: ResponseStore, record: ArtifactRecord) -> tuple[str, str]:
    table: pd.DataFrame = store.read_table(record.id)
    if not {"value", "count"} <= set(table.columns):  # a free-SQL result: show its first rows as they are
        columns = list(table.columns)[:6]
        lines = ["| " + " | ".join(map(str, columns)) + " |", "|" + "---|" * len(columns)]
        lines += ["| " + " | ".join(str(row[c]) for c in columns) + " |" for _, row in table.head(MAX_ROWS).iterrows()]
        return f"{len(table):,} rows [{record.id}]", "\n".join(lines)
    total = int(table["count"].sum()) if "count" in table.columns else len(table)
    by = record.extra.get("by")
    headline = f"{total:,} in total" + (f", by {by}" if by else "") + f" [{record.id}]"
    if not by:
        return headline, ""
    lines = [f"| {by} | count |", "|---|---|"]
    for _, row in table.head(MAX_ROWS).iterrows():
        lines.append(f"| {row['value']} | {int(row['count']):,} |")
    return headline, "\n".join(lines)


def collect_findings(
    store: ResponseStore, answer_ids: list[str], used_ids: list[str], notes: list[str], failures: list[str]
) -> Findings:
    findings = Findings()
    for artifact_id in answer_ids:
        record = store.get(artifact_id)
        if record.kind in (ArtifactKind.vector, ArtifactKind.aoi):
            headline, detail = describe_vector(store, record)
        elif record.kind is ArtifactKind.table:
            headline, detail = describe_table(store, record)
        elif record.kind is ArtifactKind.text:
            headline, detail = store.read_text(record.id).strip().splitlines()[0], ""
        else:
            headline, detail = f"{record.summary} [{record.id}]", ""
        findings.headline.append(headline)
        if detail:
            findings.details.append(detail)
        findings.cited.append(artifact_id)
    seen: set[str] = set()
    for artifact_id in used_ids:
        for item in store.get(artifact_id).extra.get("limitations", []) or []:
            if item not in seen:
                seen.add(item)
                findings.limitations.append(item)
    findings.limitations += [n for n in notes if n not in seen]
    findings.limitations += [f"not done: {f}" for f in failures]
    return findings


def render_answer(
    findings: Findings, *, context: str, partial: bool, steps: list[str], not_applied: Sequence[str] = ()
) -> str:
    """The verified answer. With ``not_applied`` (parts of the question no executed step applied) the
    computed numbers answer a different question: they are shown as what was computed instead, never as
    the answer."""
    parts = []
    if partial:
        parts.append("**Partial answer — the workflow did not complete.**")
    if not_applied:
        parts.append(
            "**Not answered as asked.** No computed step applied these parts of the question:\n"
            + "\n".join(f"- {item}" for item in not_applied)
            + "\n\nThe result below answers a different, broader question. Do not use it as the answer."
        )
    if findings.headline:
        lead = "What was computed instead — " if not_applied else ""
        parts.append(f"{lead}{context}: " + "; ".join(findings.headline) + ".")
    else:
        parts.append(f"{context}: no result could be computed.")
    parts += findings.details
    if steps:
        parts.append("How it was computed:\n" + "\n".join(steps))
    if findings.limitations:
        parts.append("Limitations:\n" + "\n".join(f"- {item}" for item in findings.limitations))
    return "\n\n".join(parts)


def unsupported_numbers(text: str, findings: Findings, allowed_extra: set[str]) -> list[str]:
    """Numbers in ``text`` that appear in no finding (artifact ids and step numbers excluded)."""
    supported = findings.numbers() | allowed_extra
    cleaned = ARTIFACT_ID_IN_TEXT.sub("", text)
    return [n for n in NUMBER.findall(cleaned) if n.replace(",", "") not in supported]
