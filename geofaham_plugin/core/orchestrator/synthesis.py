"""Final synthesis: findings are read from artifacts, so every number in the answer comes from an
executed engine. A model may phrase the answer, but its text is rejected if it contains a number the
findings do not, or leaves out a number the answer states.

Beside the text, the same reading of the same artifacts gives the structured answer
(:class:`~.answer.StructuredAnswer`): each value the text states, with its label, group, unit and
artifact, the named items of a list answer, and the yes/no of a yes/no question. Values hold the number
as the text states it (rounded the same way), so text and structure cannot disagree."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, get_args

import pandas as pd
from pydantic import BaseModel, Field

from ..domain.feature_classes import kinds_name
from ..domain.ids import ARTIFACT_ID_IN_TEXT
from ..domain.language import damage_class_name, feature_class_name, phrase
from ..planning.prepass import normalise
from ..planning.values import compared_count
from ..store.models import ArtifactKind, ArtifactRecord
from .answer import Measure, StatedItem, StatedValue, StructuredAnswer, Unit

if TYPE_CHECKING:
    from ..store.store import ResponseStore

MAX_ROWS = 12  # rows of a feature list or free-SQL table shown in the text
MAX_GROUPS = 40  # groups of a grouped count or sum shown and stated: every group of a usual breakdown
MAX_ITEMS = 200  # named items of a list answer kept in the structured answer (ranked)
NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")


class Findings(BaseModel):
    headline: list[str] = Field(default_factory=list)
    details: list[str] = Field(default_factory=list)  # markdown blocks (tables)
    cited: list[str] = Field(default_factory=list)
    limitations: list[str] = Field(default_factory=list)
    values: list[StatedValue] = Field(default_factory=list)  # the numbers the headline and tables state
    items: list[StatedItem] = Field(default_factory=list)  # named features of a list answer, ranked

    def numbers(self) -> set[str]:
        return {n.replace(",", "") for n in NUMBER.findall("\n".join(self.headline + self.details + self.limitations))}


class Finding(BaseModel):
    """What one cited artifact contributes: a headline, a detail block (table) and the stated values."""

    headline: str
    detail: str = ""
    values: list[StatedValue] = Field(default_factory=list)
    items: list[StatedItem] = Field(default_factory=list)
    limitations: list[str] = Field(default_factory=list)  # in the answer's language (road access: its limits)


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.1f}".rstrip("0").rstrip(".")


def _stated(value: float) -> float:
    """``value`` as :func:`_fmt` writes it (the number the text states)."""
    return float(round(value)) if abs(value) >= 100 else round(float(value), 1)


def _text(value: object, lang: str = "en") -> str:
    """A table cell: missing names (common in OSM) read "(unnamed)", not "None"/"nan"."""
    missing = value is None or (isinstance(value, float) and value != value) or value == ""
    return phrase("what.unnamed", lang) if missing else str(value)


def _what(extra: dict, lang: str = "en") -> tuple[str, str | None]:
    """How the features of an artifact are worded (in ``lang``), and what they are (the subject of a count)."""
    if "damage_classes" in extra:
        classes = ", ".join(damage_class_name(str(c), lang) for c in extra["damage_classes"])
        return phrase("what.buildings_classes", lang, classes=classes), "buildings"
    if extra.get("kinds"):  # narrower than the class: "hospital features", not "healthcare features"
        kinds = [str(k) for k in extra["kinds"]]
        cls = kinds_name(extra.get("feature_class"), kinds)
        return phrase("what.class_features", lang, cls=cls), kinds[0]
    if extra.get("feature_class") and extra.get("kinds_out"):  # "health facilities other than hospitals"
        cls = str(extra["feature_class"])
        out = kinds_name(cls, [str(k) for k in extra["kinds_out"]])
        return phrase("what.class_features_except", lang, cls=feature_class_name(cls, lang), kinds=out), cls
    if extra.get("feature_class"):
        cls = str(extra["feature_class"])
        return phrase("what.class_features", lang, cls=feature_class_name(cls, lang)), cls
    if extra.get("damage_field"):  # a building-damage layer, all classes
        return phrase("what.buildings", lang), "buildings"
    return phrase("what.features", lang), None


def vector_finding(store: ResponseStore, record: ArtifactRecord, lang: str = "en") -> Finding:
    """A layer answer: its feature count (labelled with what the features are and the distance that
    applies), and its named features ranked (by distance when one was measured). The text is in
    ``lang``; the stated values' labels stay English (they are for machines)."""
    gdf = store.read_vector(record.id)
    n = len(gdf)
    extra = record.extra
    what, subject = _what(extra)
    label, shown = what, _what(extra, lang)[0]
    if record.source == "vector.buffer" and "distance_m" in extra:  # the buffer polygons themselves
        label = f"buffer polygons of {_fmt(extra['distance_m'])} m"
        shown = phrase("what.buffer_m", lang, distance=_fmt(extra["distance_m"]))
    elif "distance_m" in extra and "k" not in extra:
        label += f" within {_fmt(extra['distance_m'])} m"
        shown += " " + phrase("what.within_m", lang, distance=_fmt(extra["distance_m"]))
    headline = f"{n:,} {shown} [{record.id}]"
    values = [StatedValue(label=label, value=float(n), subject=subject, artifact_id=record.id)]
    if n == 0:
        return Finding(headline=headline, values=values)
    if "distance_m" in gdf.columns:
        gdf = gdf.sort_values("distance_m", kind="stable")
    name_field = extra.get("name_field")
    items = []
    if name_field and name_field in gdf.columns:
        has_distance = "distance_m" in gdf.columns
        for rank, (_, row) in enumerate(gdf.head(MAX_ITEMS).iterrows(), start=1):
            distance = row["distance_m"] if has_distance else None
            items.append(
                StatedItem(
                    name=_text(row[name_field], lang),
                    distance_m=None if distance is None or distance != distance else _stated(float(distance)),
                    rank=rank,
                    artifact_id=record.id,
                )
            )
    # a value the tool computed for each feature (points counted in it, its area): shown and stated per feature
    per_feature = [c for c in extra.get("shown", []) if isinstance(c, dict) and c.get("column") in gdf.columns]
    if per_feature and (not name_field or name_field not in gdf.columns):
        name_field = _label_column(gdf)  # a zone's count means nothing without which zone it is
    columns = [c for c in (name_field, "distance_m", "damage_class") if c and c in gdf.columns]
    if not columns and not per_feature:
        return Finding(headline=headline, values=values, items=items)
    rows = gdf[columns + [c["column"] for c in per_feature]].head(MAX_ROWS)
    header = ["#"] + [
        phrase("table.name" if c == name_field else "table.distance" if c == "distance_m" else "table.damage", lang)
        for c in columns
    ]
    header += [str(c.get("label") or c["column"]) + _unit_suffix(str(c.get("unit", ""))) for c in per_feature]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for i, (_, row) in enumerate(rows.iterrows(), start=1):
        cells = [str(i)] + [(_fmt(row[c]) if c == "distance_m" else _text(row[c], lang)) for c in columns]
        for c in per_feature:
            value = row[c["column"]]
            if not pd.api.types.is_number(value) or pd.isna(value) or isinstance(value, bool):
                cells.append("")
                continue
            count = c.get("measure") == "count"
            cells.append(_fmt(float(value)) if count else _fmt_measure(float(value)))
            values.append(
                StatedValue(
                    label=str(c.get("label") or c["column"]),
                    value=_stated(float(value)) if count else _stated_measure(float(value)),
                    measure=c.get("measure", "value"),
                    unit=c.get("unit", "none"),
                    group_field=name_field if name_field in gdf.columns else None,
                    group=_text(row[name_field], lang) if name_field in gdf.columns else str(i),
                    artifact_id=record.id,
                )
            )
        lines.append("| " + " | ".join(cells) + " |")
    if n > MAX_ROWS:
        lines.append("\n" + phrase("what.more_rows", lang, n=f"{n - MAX_ROWS:,}", id=record.id))
    return Finding(headline=headline, detail="\n".join(lines), values=values, items=items)


def _label_column(gdf: pd.DataFrame) -> str | None:
    """The first text column that tells the features apart (every value present and distinct), or None."""
    for column in gdf.columns:
        if column == "geometry" or not (
            pd.api.types.is_object_dtype(gdf[column]) or pd.api.types.is_string_dtype(gdf[column])
        ):
            continue
        values = gdf[column]
        if values.notna().all() and values.astype(str).str.strip().ne("").all() and values.is_unique:
            return str(column)
    return None


def _unit_suffix(unit: str) -> str:
    return f" ({_UNIT_TEXT[unit]})" if unit in _UNIT_TEXT else ""


def describe_vector(store: ResponseStore, record: ArtifactRecord, lang: str = "en") -> tuple[str, str]:
    finding = vector_finding(store, record, lang)
    return finding.headline, finding.detail


_COUNT_COLUMN = re.compile(r"^(n|num|count|cnt|total|number)(_.*)?$|_(count|cnt|n)$", re.I)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _counted(store: ResponseStore, record: ArtifactRecord, lang: str = "en") -> tuple[str, str | None]:
    """What a count table counts: read from the layer it was counted from."""
    if record.source.startswith("vector.damage_by_class"):
        return phrase("what.buildings", lang), "buildings"
    for input_id in record.inputs:
        if input_id in store:
            return _what(store.get(input_id).extra, lang)
    return phrase("what.features", lang), None


def _sql_finding(record: ArtifactRecord, table: pd.DataFrame, lang: str = "en") -> Finding:
    """A free-SQL result, shown as it is. Values only where a numeric column is clear: one numeric cell
    (a total), or one label column and one numeric column (a value per label)."""
    columns = list(table.columns)[:6]
    lines = ["| " + " | ".join(map(str, columns)) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(row[c]) for c in columns) + " |" for _, row in table.head(MAX_ROWS).iterrows()]
    finding = Finding(
        headline=phrase("what.rows", lang, n=f"{len(table):,}") + f" [{record.id}]", detail="\n".join(lines)
    )
    shown = table.head(MAX_ROWS)
    numeric = [c for c in columns if len(shown) and all(_is_number(v) for v in shown[c])]
    labels = [c for c in columns if c not in numeric]
    if len(numeric) != 1 or len(table) > MAX_ROWS or len(columns) > 2:
        return finding
    column = str(numeric[0])
    measure: Measure = "count" if _COUNT_COLUMN.search(column) else "value"
    unit: Unit = "count" if measure == "count" else "none"
    if len(columns) == 1 and len(table) == 1:
        value = float(table[column].iloc[0])
        finding.values.append(StatedValue(label=column, value=value, measure=measure, unit=unit, artifact_id=record.id))
    elif len(labels) == 1:
        group_field = str(labels[0])
        for _, row in shown.iterrows():
            finding.values.append(
                StatedValue(
                    label=f"{column}, {group_field} = {row[group_field]}",
                    value=float(row[column]),
                    measure=measure,
                    unit=unit,
                    group_field=group_field,
                    group=str(row[group_field]),
                    artifact_id=record.id,
                )
            )
    return finding


def _fmt_measure(value: float) -> str:
    """A measured quantity (an area, a length, a percent, a mean): integers from 100, else 3 significant
    digits at least (0.0412 km², 3.46 %, 12.3), without trailing zeros."""
    size = abs(value)
    if size >= 100 or size == 0:
        return _fmt(value)
    decimals = 1 if size >= 10 else 2 if size >= 1 else 2 - math.floor(math.log10(size))
    return f"{value:,.{decimals}f}".rstrip("0").rstrip(".")


def _stated_measure(value: float) -> float:
    """``value`` as :func:`_fmt_measure` writes it."""
    return float(_fmt_measure(value).replace(",", ""))


_UNIT_TEXT = {"km2": "km²", "m2": "m²", "km": "km", "m": "m", "percent": "%"}


def _with_unit(value: float, unit: str) -> str:
    """'1.5 km² (150 ha)', '3.2 km', '28.9 %', '12.3'."""
    text = f"{_fmt_measure(value)} {_UNIT_TEXT[unit]}" if unit in _UNIT_TEXT else _fmt_measure(value)
    return text + (f" ({_fmt_measure(value * 100)} ha)" if unit == "km2" else "")


def _input_id(store: ResponseStore, record: ArtifactRecord, index: int) -> str:
    """The id of ``record``'s input ``index`` (the artifact a figure of it counts), else ``record``'s own."""
    return record.inputs[index] if len(record.inputs) > index and record.inputs[index] in store else record.id


def _input_what(store: ResponseStore, record: ArtifactRecord, index: int, lang: str = "en") -> tuple[str, str | None]:
    if len(record.inputs) > index and record.inputs[index] in store:
        return _what(store.get(record.inputs[index]).extra, lang)
    return phrase("what.features", lang), None


def _by(by: object, lang: str) -> str:
    """', by <field>' after a grouped headline, or nothing."""
    return phrase("what.by", lang, by=by) if by else ""


def _share_finding(store: ResponseStore, record: ArtifactRecord, table: pd.DataFrame, lang: str = "en") -> Finding:
    """A share (``vector.share``): "X of Y (Z %)", in total and per group of the ``by`` field. The part's and the
    base's counts name the layers they count (the part's lineage says how it was selected)."""
    extra, by = record.extra, record.extra.get("by")
    part_what, part_subject = _input_what(store, record, 0)
    base_what, base_subject = _input_what(store, record, 1)
    label = f"{part_what} of all {base_what}" if part_what != base_what else "share"
    part_shown, base_shown = _input_what(store, record, 0, lang)[0], _input_what(store, record, 1, lang)[0]
    shown = (
        phrase("what.share_label", lang, part=part_shown, base=base_shown)
        if part_what != base_what
        else phrase("measure.share", lang)
    )
    p, b, percent = int(extra["part_count"]), int(extra["base_count"]), float(extra["share_percent"])
    stated = phrase("what.share_stated", lang, part=f"{p:,}", base=f"{b:,}", percent=_fmt_measure(percent))
    headline = f"{shown}: {stated}" + _by(by, lang) + f" [{record.id}]"
    values = [
        StatedValue(
            label=f"share, {label}" if label != "share" else "share",
            value=_stated_measure(percent),
            measure="share",
            unit="percent",
            subject=part_subject,
            artifact_id=record.id,
        ),
        StatedValue(label=part_what, value=float(p), subject=part_subject, artifact_id=_input_id(store, record, 0)),
        StatedValue(
            label=f"{base_what} in total", value=float(b), subject=base_subject, artifact_id=_input_id(store, record, 1)
        ),
    ]
    if not by:
        return Finding(headline=headline, values=values)
    lines = [f"| {by} | {shown} |", "|---|---|"]
    for _, row in table.head(MAX_GROUPS).iterrows():
        pct = float(row["percent"])
        cell = phrase(
            "what.share_stated",
            lang,
            part=f"{int(row['part']):,}",
            base=f"{int(row['base']):,}",
            percent=_fmt_measure(pct),
        )
        lines.append(f"| {row['value']} | {cell} |")
        values.append(
            StatedValue(
                label=f"share, {label}, {by} = {row['value']}",
                value=_stated_measure(pct),
                measure="share",
                unit="percent",
                subject=part_subject,
                group_field=by,
                group=str(row["value"]),
                artifact_id=record.id,
            )
        )
    if len(table) > MAX_GROUPS:
        lines.append("\n" + phrase("what.more_groups", lang, n=f"{len(table) - MAX_GROUPS:,}", id=record.id))
    return Finding(headline=headline, detail="\n".join(lines), values=values)


_MEASURES: tuple[str, ...] = get_args(Measure)
_UNITS: tuple[str, ...] = get_args(Unit)


_STAT_OF = re.compile(r"^(mean|median|sum|min|max) of (.+)$")


def _measure_label(label: str, lang: str) -> str:
    """A tool's label of a measure ("area", "mean of beds") in ``lang``; another label as it is."""
    if lang == "en":
        return label
    if label in _MEASURES:
        return phrase(f"measure.{label}", lang)
    if m := _STAT_OF.match(label):
        return phrase("what.stat_of", lang, stat=phrase(f"measure.{m[1]}", lang), field=m[2])
    return label


def _measured_finding(store: ResponseStore, record: ArtifactRecord, table: pd.DataFrame, lang: str = "en") -> Finding:
    """A measure table (an area, a length, a statistic of a field): the tool says in ``extra["stated"]`` which
    column holds the number, its measure, unit, label and total; rows are keyed by ``value`` (the group)."""
    stated, by = record.extra["stated"], record.extra.get("by")
    column, total = str(stated["column"]), float(stated["total"])
    measure: Measure = stated["measure"] if stated.get("measure") in _MEASURES else "value"
    unit: Unit = stated["unit"] if stated.get("unit") in _UNITS else "none"
    what, subject = _counted(store, record)
    name = str(stated.get("label") or measure)
    shown = _measure_label(name, lang)
    if subject:
        name += f" of {what}" if measure in ("area", "length") else f" over {what}"
        of = "what.measure_of" if measure in ("area", "length") else "what.over"
        shown += phrase(of, lang, what=_counted(store, record, lang)[0])
    n = record.extra.get("n")
    counted = phrase("what.n_values", lang, n=f"{int(n):,}") if isinstance(n, int) else ""
    headline = f"{shown}: {_with_unit(total, unit)}{counted}" + _by(by, lang) + f" [{record.id}]"
    values = [
        StatedValue(
            label=name, value=_stated_measure(total), measure=measure, unit=unit, subject=subject, artifact_id=record.id
        )
    ]
    if not by:
        return Finding(headline=headline, values=values)
    symbol = _UNIT_TEXT.get(unit)
    # the rows' own label when it differs from the total's ("area" per class beside the burned area in all)
    row_name = str(stated.get("row_label") or stated.get("label") or measure)
    header = [str(by), _measure_label(row_name, lang) + (f" ({symbol})" if symbol else "")]
    header += ["ha"] if unit == "km2" else []
    header += (
        [phrase("table.values", lang)]
        if "n" in table.columns
        else [phrase("table.features", lang)]
        if "features" in table.columns
        else []
    )
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in table.head(MAX_GROUPS).iterrows():
        value = row[column]
        missing = not _is_number(value)
        cells = [str(row["value"]), phrase("what.no_values", lang) if missing else _fmt_measure(float(value))]
        cells += ([] if missing else [_fmt_measure(float(value) * 100)]) if unit == "km2" else []
        cells += [f"{int(row['n']):,}"] if "n" in table.columns else []
        cells += [f"{int(row['features']):,}"] if "n" not in table.columns and "features" in table.columns else []
        lines.append("| " + " | ".join(cells) + " |")
        if not missing:
            values.append(
                StatedValue(
                    label=f"{row_name if stated.get('row_label') else name}, {by} = {row['value']}",
                    value=_stated_measure(float(value)),
                    measure=measure,
                    unit=unit,
                    subject=subject,
                    group_field=by,
                    group=str(row["value"]),
                    artifact_id=record.id,
                )
            )
    if len(table) > MAX_GROUPS:
        lines.append("\n" + phrase("what.more_groups", lang, n=f"{len(table) - MAX_GROUPS:,}", id=record.id))
    return Finding(headline=headline, detail="\n".join(lines), values=values)


def _difference_finding(store: ResponseStore, record: ArtifactRecord, table: pd.DataFrame, lang: str = "en") -> Finding:
    """A comparison: each side's total (a count of what the inputs count) and the difference, larger first.
    Each side's value names the result it is the total of (its lineage says which disaster it is about)."""
    stated = record.extra.get("stated") or {}
    of = record.extra.get("of") or {}

    def source(side: str) -> str:
        return of[side] if of.get(side) in store else record.id

    unit: Unit = stated["unit"] if stated.get("unit") in _UNITS else "none"
    measure: Measure = "count" if unit == "count" else "difference"
    (larger, a), (smaller, b) = [(str(r["value"]), float(r["amount"])) for _, r in table.iterrows()]
    what, subject = (
        _counted(store, store.get(record.inputs[0])) if record.inputs and record.inputs[0] in store else ("", None)
    )
    diff = a - b
    fmt = (lambda x: f"{x:,.0f}") if unit == "count" else (lambda x: _with_unit(x, unit))
    key = "difference.headline" if diff else "difference.same"
    headline = phrase(key, lang, larger=larger, smaller=smaller, a=fmt(a), b=fmt(b), diff=fmt(diff)) + f" [{record.id}]"
    values = [
        StatedValue(label=f"{what}, {larger}", value=_stated_measure(a), measure=measure, unit=unit, subject=subject,
                    artifact_id=source(larger)),
        StatedValue(label=f"{what}, {smaller}", value=_stated_measure(b), measure=measure, unit=unit, subject=subject,
                    artifact_id=source(smaller)),
        StatedValue(label=f"{what}: {larger} more than {smaller} by", value=_stated_measure(diff), measure=measure,
                    unit=unit, subject=subject, artifact_id=record.id),
    ]  # fmt: skip
    return Finding(headline=headline, values=values)


def _grid_finding(store: ResponseStore, record: ArtifactRecord, table: pd.DataFrame, lang: str = "en") -> Finding:
    """Counts on a grid: how many cells hold features and how many the densest holds, then the densest cells."""
    cells, densest, cell_m = len(table), int(record.extra.get("densest", 0)), float(record.extra.get("cell_m", 0))
    what, subject = _counted(store, record)
    if not cells:
        return Finding(headline=phrase("grid.none", lang) + f" [{record.id}]")
    headline = phrase("grid.headline", lang, cells=f"{cells:,}", cell=f"{cell_m:g}", densest=f"{densest:,}")
    headline += f" [{record.id}]"
    values = [
        StatedValue(label=f"grid cells of {cell_m:g} m with {what}", value=float(cells), artifact_id=record.id),
        StatedValue(
            label=f"{what} in the densest cell of {cell_m:g} m",
            value=float(densest),
            measure="max",  # the largest count of a cell, not a count of its own
            subject=subject,
            artifact_id=record.id,
        ),
    ]
    lines = ["| grid cell (UTM, SW corner) | count |", "|---|---|"]
    lines += [f"| {row['value']} | {int(row['count']):,} |" for _, row in table.head(MAX_GROUPS).iterrows()]
    if cells > MAX_GROUPS:
        lines.append("\n" + phrase("what.more_groups", lang, n=f"{cells - MAX_GROUPS:,}", id=record.id))
    return Finding(headline=headline, detail="\n".join(lines), values=values)


def table_finding(store: ResponseStore, record: ArtifactRecord, lang: str = "en") -> Finding:
    """A table answer: a count (total, and per group of the ``by`` field), a damage count per class, a
    sum per group (``sum_by``), a measure table (a share, an area, a length, a statistic: ``extra["stated"]``
    names its number), or a free-SQL result."""
    table: pd.DataFrame = store.read_table(record.id)
    if record.source == "vector.road_reachability":
        return road_finding(store, record, table, lang)
    if record.source == "vector.difference" and {"value", "amount"} <= set(table.columns) and len(table) == 2:
        return _difference_finding(store, record, table, lang)
    stated = record.extra.get("stated")
    if isinstance(stated, dict) and {"value", str(stated.get("column"))} <= set(table.columns):
        if stated.get("measure") == "share" and {"part", "base", "percent"} <= set(table.columns):
            return _share_finding(store, record, table, lang)
        return _measured_finding(store, record, table, lang)
    if record.source == "vector.grid_counts" and {"value", "count"} <= set(table.columns):
        return _grid_finding(store, record, table, lang)
    if record.source == "vector.save_layer" and isinstance(record.extra.get("report"), dict):
        return _saved_finding(record, lang)
    if not {"value", "count"} <= set(table.columns):
        return _sql_finding(record, table, lang)
    by = record.extra.get("by")
    if "sum" in table.columns:  # sum_by: the sum of a numeric field, in total or per group
        field = str(record.extra.get("field") or "values")
        total_sum = float(table["sum"].sum())
        sum_of = phrase("what.sum_of", lang, field=field)
        headline = f"{sum_of}: {_fmt(total_sum)}" + _by(by, lang) + f" [{record.id}]"
        values = [
            StatedValue(
                label=f"sum of {field}", value=_stated(total_sum), measure="sum", unit="none", artifact_id=record.id
            )
        ]
        if not by:
            return Finding(headline=headline, values=values)
        lines = [f"| {by} | {sum_of} | {phrase('table.features', lang)} |", "|---|---|---|"]
        for _, row in table.head(MAX_GROUPS).iterrows():
            lines.append(f"| {row['value']} | {_fmt(float(row['sum']))} | {int(row['count']):,} |")
            values.append(
                StatedValue(
                    label=f"sum of {field}, {by} = {row['value']}",
                    value=_stated(float(row["sum"])),
                    measure="sum",
                    unit="none",
                    group_field=by,
                    group=str(row["value"]),
                    artifact_id=record.id,
                )
            )
        return Finding(headline=headline, detail="\n".join(lines), values=values)
    total = int(table["count"].sum())
    what, subject = _counted(store, record)
    headline = phrase("what.in_total", lang, total=f"{total:,}") + _by(by, lang) + f" [{record.id}]"
    values = [StatedValue(label=f"{what} in total", value=float(total), subject=subject, artifact_id=record.id)]
    if not by:
        return Finding(headline=headline, values=values)
    lines = [f"| {by} | {phrase('table.count', lang)} |", "|---|---|"]
    for _, row in table.head(MAX_GROUPS).iterrows():
        lines.append(f"| {row['value']} | {int(row['count']):,} |")
        values.append(
            StatedValue(
                label=f"{what}, {by} = {row['value']}",
                value=float(int(row["count"])),
                subject=subject,
                group_field=by,
                group=str(row["value"]),
                artifact_id=record.id,
            )
        )
    if len(table) > MAX_GROUPS:
        lines.append("\n" + phrase("what.more_groups", lang, n=f"{len(table) - MAX_GROUPS:,}", id=record.id))
    return Finding(headline=headline, detail="\n".join(lines), values=values)


def _saved_finding(record: ArtifactRecord, lang: str = "en") -> Finding:
    """A layer written to a file and read back: where, its format, CRS and feature count (the count stated)."""
    report = record.extra["report"]
    n = int(report.get("feature_count", 0))
    headline = phrase(
        "what.saved",
        lang,
        path=report.get("path", ""),
        fmt=report.get("format", ""),
        crs=report.get("crs") or "-",
        n=f"{n:,}",
    )
    value = StatedValue(label="features saved", value=float(n), artifact_id=record.id)
    return Finding(headline=f"{headline} [{record.id}]", values=[value])


_ROAD_ORDER = ("reachable", "detour", "cut off", "unreachable before", "off network")


def _per_origin(table: pd.DataFrame) -> pd.DataFrame:
    """One row per origin: its shortest route to any target before and after the cut, and its status."""
    rows = []
    for origin, group in table.groupby("origin", sort=True):
        before, after = pd.to_numeric(group["before_m"]), pd.to_numeric(group["after_m"])
        b = float(before.min()) if before.notna().any() else None
        a = float(after.min()) if after.notna().any() else None
        statuses = set(group["status"])
        if a is not None and b is not None:
            status = "reachable" if a <= b + 1e-6 else "detour"
        elif "cut off" in statuses or b is not None:
            status = "cut off"
        elif statuses <= {"off network"}:
            status = "off network"
        else:
            status = "unreachable before" if "unreachable before" in statuses else str(group["status"].iloc[0])
        name = str(group["origin_name"].iloc[0])
        rows.append({"origin": origin, "name": name, "status": status, "before_m": b, "after_m": a})
    return pd.DataFrame(rows, columns=["origin", "name", "status", "before_m", "after_m"])


def road_finding(store: ResponseStore, record: ArtifactRecord, table: pd.DataFrame, lang: str = "en") -> Finding:
    """Road access (``vector.road_reachability``): how many of the origins still reach the targets (or the main
    network) after the cut, which are cut off, network distances before and after, and the network's limits."""
    extra = record.extra
    what, subject = _input_what(store, record, 1)
    shown = _input_what(store, record, 1, lang)[0]
    targets_id = record.inputs[2] if extra.get("targets") == "features" and len(record.inputs) > 3 else None
    if targets_id and targets_id in store:
        to_what, to_shown = _what(store.get(targets_id).extra)[0], _what(store.get(targets_id).extra, lang)[0]
    else:
        to_what, to_shown = "the main road network", phrase("road.main_network", lang)
    limits = [phrase("road.limit_source", lang, source=extra.get("network_source", ""), date=extra.get("network_date"))]
    coverage = extra.get("network_coverage")
    if isinstance(coverage, (int, float)) and coverage < 0.999:
        limits.append(phrase("road.limit_coverage", lang, share=_fmt_measure(100 * float(coverage))))
    if table.empty:
        return Finding(headline=phrase("road.none", lang, what=shown) + f" [{record.id}]", limitations=limits)
    limits.append(phrase("road.limit_model", lang, bridges=f"{int(extra.get('bridges_open') or 0):,}"))
    per = _per_origin(table)
    count = per["status"].value_counts()
    n, reach, detour = len(per), int(count.get("reachable", 0) + count.get("detour", 0)), int(count.get("detour", 0))
    cut, never = int(count.get("cut off", 0)), int(count.get("unreachable before", 0) + count.get("off network", 0))
    headline = phrase(
        "road.headline", lang, what=shown, targets=to_shown, reachable=f"{reach:,}", n=f"{n:,}", detour=f"{detour:,}",
        cut=f"{cut:,}",
    )  # fmt: skip
    headline += phrase("road.not_before", lang, k=f"{never:,}") if never else ""
    if isolated := [str(t) for t in extra.get("isolated_targets") or []]:  # the fire station itself is cut off
        headline += phrase("road.targets_cut", lang, names=", ".join(isolated[:MAX_ROWS]))
    headline += f" [{record.id}]"
    values = [
        StatedValue(label=f"{what} that can still reach {to_what} by road", value=float(reach), subject=subject,
                    artifact_id=record.id),
        StatedValue(label=f"{what} cut off from {to_what} by road", value=float(cut), subject=subject,
                    artifact_id=record.id),
    ]  # fmt: skip
    per = per.assign(rank=per["status"].map(_ROAD_ORDER.index)).sort_values(["rank", "after_m", "before_m"])
    items = [
        StatedItem(name=row["name"], distance_m=_stated(row["after_m"]), rank=i, artifact_id=record.id)
        for i, (_, row) in enumerate(per[per["status"].isin(["reachable", "detour"])].iterrows(), start=1)
    ]
    header = ["#", phrase("table.name", lang), phrase("table.status", lang)]
    header += [phrase("table.before_m", lang), phrase("table.after_m", lang), phrase("table.detour", lang)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for i, (_, row) in enumerate(per.head(MAX_ITEMS).iterrows(), start=1):
        b, a = row["before_m"], row["after_m"]
        ratio = f"{a / b:.2f}" if a is not None and b and not pd.isna(a) and not pd.isna(b) else ""
        cells = [str(i), row["name"], phrase(f"road.status.{row['status']}", lang)]
        cells += [_fmt(b) if _is_number(b) else "", _fmt(a) if _is_number(a) else "", ratio]
        lines.append("| " + " | ".join(cells) + " |")
    return Finding(headline=headline, detail="\n".join(lines), values=values, items=items, limitations=limits)


def cut_finding(store: ResponseStore, record: ArtifactRecord, lang: str = "en") -> Finding:
    """The roads a hazard cuts (``vector.cut_roads``): how many, their cut segments and length."""
    gdf = store.read_vector(record.id)
    km = float(gdf["cut_m"].sum()) / 1000 if len(gdf) else 0.0
    segments = int(record.extra.get("cut_segments") or 0)
    headline = (
        phrase("road.cut_headline", lang, n=f"{len(gdf):,}", segments=f"{segments:,}", km=_fmt_measure(km))
        + f" [{record.id}]"
    )
    values = [
        StatedValue(label="roads cut by the hazard", value=float(len(gdf)), subject="roads", artifact_id=record.id),
        StatedValue(label="road segments cut by the hazard", value=float(segments), subject="roads",
                    artifact_id=record.id),
    ]  # fmt: skip
    return Finding(headline=headline, values=values)


def describe_table(store: ResponseStore, record: ArtifactRecord, lang: str = "en") -> tuple[str, str]:
    finding = table_finding(store, record, lang)
    return finding.headline, finding.detail


def collect_findings(
    store: ResponseStore,
    answer_ids: list[str],
    used_ids: list[str],
    notes: list[str],
    failures: list[str],
    lang: str = "en",
) -> Findings:
    """The findings of the answer artifacts, their texts in ``lang`` (values labelled in English)."""
    findings = Findings()
    for artifact_id in answer_ids:
        record = store.get(artifact_id)
        if record.source == "vector.cut_roads":
            finding = cut_finding(store, record, lang)
        elif record.kind in (ArtifactKind.vector, ArtifactKind.aoi):
            finding = vector_finding(store, record, lang)
        elif record.kind is ArtifactKind.table:
            finding = table_finding(store, record, lang)
        elif record.kind is ArtifactKind.text:
            finding = Finding(headline=store.read_text(record.id).strip().splitlines()[0])
        else:
            finding = Finding(headline=f"{record.summary} [{record.id}]")
        findings.headline.append(finding.headline)
        if finding.detail:
            findings.details.append(finding.detail)
        findings.values += finding.values
        findings.items += finding.items
        findings.limitations += [x for x in finding.limitations if x not in findings.limitations]
        findings.cited.append(artifact_id)
    seen: set[str] = set()
    routed = any(store.get(a).source == "vector.road_reachability" for a in answer_ids)
    for artifact_id in used_ids:
        if routed and store.get(artifact_id).source == "vector.cut_roads":
            continue  # the same network's limits, stated once by the road-access finding
        for item in store.get(artifact_id).extra.get("limitations", []) or []:
            if item not in seen:
                seen.add(item)
                findings.limitations.append(item)
    findings.limitations += [n for n in notes if n not in seen]
    findings.limitations += [phrase("answer.not_done", lang, failure=f) for f in failures]
    return findings


def render_answer(
    findings: Findings,
    *,
    context: str,
    partial: bool,
    steps: list[str],
    not_applied: Sequence[str] = (),
    yes_no: bool | None = None,
    lang: str = "en",
) -> str:
    """The verified answer, its fixed texts in ``lang``. With ``not_applied`` (parts of the question no
    executed step applied) the computed numbers answer a different question: they are shown as what was
    computed instead, never as the answer. ``yes_no`` (a yes/no question, answered) opens the answer."""
    parts = []
    if yes_no is not None and not partial and not not_applied:
        parts.append(phrase("answer.yes" if yes_no else "answer.no", lang))
    if partial:
        parts.append(phrase("answer.partial", lang))
    if not_applied:
        parts.append(
            phrase("answer.not_answered", lang)
            + "\n"
            + "\n".join(f"- {item}" for item in not_applied)
            + "\n\n"
            + phrase("answer.different_question", lang)
        )
    if findings.headline:
        lead = phrase("answer.computed_instead", lang) if not_applied else ""
        parts.append(f"{lead}{context}: " + "; ".join(findings.headline) + ".")
    else:
        parts.append(f"{context}: " + phrase("answer.no_result", lang))
    parts += findings.details
    if steps:
        parts.append(phrase("answer.how_computed", lang) + "\n" + "\n".join(steps))
    if findings.limitations:
        parts.append(
            phrase("answer.limitations", lang) + "\n" + "\n".join(f"- {item}" for item in findings.limitations)
        )
    return "\n\n".join(parts)


def unsupported_numbers(text: str, findings: Findings, allowed_extra: set[str]) -> list[str]:
    """Numbers in ``text`` that appear in no finding (artifact ids and step numbers excluded)."""
    supported = findings.numbers() | allowed_extra
    cleaned = ARTIFACT_ID_IN_TEXT.sub("", text)
    return [n for n in NUMBER.findall(cleaned) if n.replace(",", "") not in supported]


# A yes/no question opens with an auxiliary or an existential (English, Spanish, French, Portuguese),
# optionally after "and" / "¿". "How many are there" or "Which ... are" are not yes/no questions.
_YES_NO = re.compile(
    r"^\W*(?:(?:and|so|now|y|e|et)\s*,?\s+)?¿?\s*(?:"
    r"(?:are|is|was|were|do|does|did|can|could|has|have|had|will|would|should|may|might)\b"
    r"|(?:hay|hubo|habr[áa]|existen?|está|están|es|son|fue|fueron|queda|quedan|qued[óo]|tiene|tienen|alg[uú]n[ao]?)\b"
    r"|(?:y\s+a-t-il|y\s+avait-il|est-ce\s+qu|existe-t-il|reste-t-il|a-t-il|sont-(?:ils|elles)|est-(?:il|elle))"
    r"|(?:há|houve|existem|estão|é|tem|têm)\b"
    r")",
    re.IGNORECASE,
)


def asks_yes_no(question: str) -> bool:
    """Whether the question asks yes or no ("Are there ...", "¿Hay ...", "Y a-t-il ...", "Há ...", "¿El parque
    de bomberos quedó dentro ...?", "Le pont a-t-il été inondé ?")."""
    if _REQUEST.match(question.strip()):  # "Could you tell me how many ...": a request, not a yes/no question
        return bool(_SAYS_YES_NO.search(question.lower()) or re.search(r"\b(?:if|whether)\b", question.lower()))
    if _YES_NO.match(question.strip()) or _SAYS_YES_NO.search(question.lower()):
        return True
    # a Romance question led by its subject, or a French inversion, with no question word in it
    led_by_subject = _SUBJECT_FIRST.match(question.strip()) and question.rstrip().endswith("?")
    return bool((led_by_subject or _INVERSION.search(question)) and not _QUESTION_WORD.search(question))


# "¿El parque ...?", "Le pont ... ?", "O hospital ...?": a Spanish, French or Portuguese question led by its subject
_SUBJECT_FIRST = re.compile(r"^\W*¿\s*(?:el|la|los|las|lo)\b|^\W*(?:(?:le|la|les|o|os|a|as)\s+|l')\w", re.IGNORECASE)
# "a-t-il", "sont-elles", "est-il": a French yes/no inversion anywhere in the question
_INVERSION = re.compile(r"\w-t-(?:il|elle|ils|elles)\b|\b(?:est|sont|ont|a)-(?:il|elle|ils|elles)\b", re.IGNORECASE)
# question words that make it an open question ("¿Qué puentes ...?", "Combien ...", "Quais ...", "which")
_QUESTION_WORD = re.compile(
    r"\b(?:qu[ée]|cu[áa]l(?:es)?|cu[áa]nt[oa]s?|d[óo]nde|c[óo]mo|qui[ée]n(?:es)?|cu[áa]ndo)\b"
    r"|\b(?:quels?|quelles?|combien|o[ùu]|comment|quand|quoi)\b"
    r"|\b(?:quais|qual|quant[oa]s?|onde|quem|quando)\b"
    r"|\b(?:which|what|how|where|when|who)\b",  # "As of today, which ...": English, "as" is no article
    re.IGNORECASE,
)


_REQUEST = re.compile(
    r"^\W*(?:please\s+)?(?:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"(?:tell|give|show|list|count|say|find|compute|calculate|work\s+out|let\s+me\s+know|map|estimate)\b"
    r"|^\W*¿?\s*(?:puede[sn]?|podr[ií]a[sn]?|pourriez|pouvez|peux|poderia|pode)\s+(?:\w+\s+)?"
    r"(?:decir|dar|mostrar|indicar|contar|calcular|dire|donner|montrer|indiquer|compter|calculer|dizer|mostrar)",
    re.IGNORECASE,
)


# "... flooded by the DANA? yes/no": the question says it wants a yes or a no
_SAYS_YES_NO = re.compile(
    r"\b(?:yes\s*(?:/|or)\s*no|s[ií]\s*(?:/|o)\s*no|oui\s*(?:/|ou)\s*non|sim\s*(?:/|ou)\s*n[aã]o)\b"
)


def stated_yes_no(findings: Findings, question: str = "") -> bool | None:
    """Yes when the answer set is non-empty: the first stated count total above 0; else whether any
    item was named; None when nothing was counted. A question that states a count ("did it destroy zero
    buildings?", "more than 2,000 homes?") is answered by comparing the count with it."""
    counts = [v for v in findings.values if v.group is None and v.measure == "count"]
    said = compared_count(normalise(question)) if question else None
    if said is not None:
        if not counts:
            return None
        op, n = said
        value = counts[0].value
        return {"==": value == n, ">": value > n, "<": value < n, ">=": value >= n, "<=": value <= n}[op]
    if counts:
        return counts[0].value > 0
    return bool(findings.items) if findings.items else None


def structure(
    findings: Findings,
    *,
    status: Literal["answered", "partial", "failed", "cancelled", "timed_out"],
    question: str,
    not_applied: Sequence[str] = (),
) -> StructuredAnswer:
    """The structured answer of a run from the findings its text is rendered from. The yes/no is stated
    only for an answered run (a partial run's number answers a different question)."""
    yes_no = stated_yes_no(findings, question) if status == "answered" and asks_yes_no(question) else None
    return StructuredAnswer(
        status=status,
        values=list(findings.values),
        items=list(findings.items),
        yes_no=yes_no,
        not_applied=list(not_applied),
        cited=list(findings.cited),
    )


def states_value(text: str, value: float) -> bool:
    """Whether ``text`` writes ``value`` (as :func:`_fmt` writes it, or as a plain number)."""
    cleaned = ARTIFACT_ID_IN_TEXT.sub("", text)
    numbers = {float(n.replace(",", "")) for n in NUMBER.findall(cleaned)}
    return any(abs(n - value) <= 0.05 + 1e-9 * abs(value) for n in numbers)


def unstated_values(text: str, answer: StructuredAnswer) -> list[str]:
    """Labels (with the number) of stated values ``text`` does not write: a model's phrasing must keep them."""
    return [f"{v.label}: {_fmt(v.value)}" for v in answer.values if not states_value(text, v.value)]
