"""Attribute work on the user's layers beyond types and nulls (engines/transforms.py): class values normalised (spaces,
case, accents, a mapping table given as data) and the top N features by a measure (a field, or a geodesic area or
length), ties said. Pure functions returning their result and what they changed."""

from __future__ import annotations

from collections import Counter
from typing import Literal

import geopandas as gpd
import numpy as np
import pandas as pd

from ..domain.geodesy import geodesic_area_m2, geodesic_length_m
from ..errors import ToolFailed
from .textvalues import fold, is_placeholder, parse_numbers
from .transforms import Changes
from .vector_ops import _fields_hint, _lonlat, _require_field

Case = Literal["common", "lower", "upper", "title"]
Order = Literal["desc", "asc"]
Ties = Literal["first", "all"]
MEASURES = {"area": "area_km2", "length": "length_km"}


def _plain(value: object) -> str | None:
    """A value as text for comparison (12.0 as 12), None when it says no value."""
    if is_placeholder(value):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return " ".join(str(value).split())


def _accents_off(text: str) -> str:
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def _cased(text: str, case: Case, accents: bool) -> str:
    text = text if accents else _accents_off(text)
    return {"lower": text.lower(), "upper": text.upper(), "title": text.title()}.get(case, text)


def normalise_values(
    gdf: gpd.GeoDataFrame,
    field: str,
    mapping: dict[str, str] | None = None,
    case: Case = "common",
    accents: bool = True,
    unmatched: Literal["keep", "null"] = "keep",
    to_field: str | None = None,
) -> tuple[gpd.GeoDataFrame, Changes]:
    """The values of ``field`` tidied: spaces trimmed and collapsed, and spellings that differ only in case, accents
    or spaces made one. Each such group becomes its value in ``mapping`` (keys compared the same forgiving way; a
    value already spelled as a target, in any case, becomes that target), else its most common spelling (``case``
    common; the first seen among equals), or it lower / upper / title cased; ``accents`` False takes accents off.
    Values the mapping does not list stay (``unmatched`` keep) or become null, and are said. Placeholders (N/A, -,
    empty) become null. The result goes to ``to_field`` (None: the field itself)."""
    _require_field(gdf, field)
    target = to_field or field
    if to_field and to_field in gdf.columns and to_field != field:
        raise ToolFailed(f"field '{to_field}' exists already", kind="invalid_input", hint="choose another name")
    rules: dict[str, str] = {}
    for key, value in (mapping or {}).items():
        folded = fold(key)
        if folded in rules and rules[folded] != value:
            raise ToolFailed(
                f"the mapping sends '{key}' both to '{rules[folded]}' and to '{value}'",
                kind="invalid_input",
                hint="give each value, whatever its case or accents, one target",
            )
        rules[folded] = value
    for value in list(rules.values()):  # "RESIDENTIAL" of a mapping to "Residential": the target itself
        rules.setdefault(fold(value), value)
    plain = [_plain(v) for v in gdf[field]]
    spellings: dict[str, Counter[str]] = {}
    for text in plain:
        if text is not None:
            spellings.setdefault(fold(text), Counter())[text] += 1
    chosen: dict[str, str | None] = {}
    left: list[str] = []
    for key, seen in spellings.items():
        common = seen.most_common(1)[0][0]
        if key in rules:
            chosen[key] = rules[key]
            continue
        if mapping:
            left.append(common)
        chosen[key] = None if mapping and unmatched == "null" else _cased(common, case, accents)
    out = gdf.copy()
    new = [None if t is None else chosen[fold(t)] for t in plain]
    out[target] = pd.Series(new, index=gdf.index, dtype=object)
    original = [None if is_placeholder(v) else str(v) for v in gdf[field]]
    changed = sum(1 for a, b in zip(original, new, strict=True) if a != b)
    merged = [(sorted(seen), chosen[key]) for key, seen in spellings.items() if len(seen) > 1 or key in rules]
    merged = [(was, now) for was, now in merged if was != [now]]
    notes = [f"{len(spellings)} distinct values of {field} after spaces, case and accents ({changed} features changed)"]
    if merged:
        shown = "; ".join(f"{', '.join(repr(w) for w in was[:4])} -> {now!r}" for was, now in merged[:6])
        notes.append(f"values made one: {shown}" + (" ..." if len(merged) > 6 else ""))
    if left:
        what = "kept as they are" if unmatched == "keep" else "set to null"
        notes.append(f"{len(left)} values the mapping does not list, {what}: {', '.join(repr(v) for v in left[:8])}")
    blanks = sum(1 for v in gdf[field] if isinstance(v, str) and is_placeholder(v))
    if blanks:
        notes.append(f"{blanks} values of {field} said no value (N/A, -, empty): null")
    return out, Changes(changed=changed, notes=notes)


def _measure(gdf: gpd.GeoDataFrame, by: str) -> tuple[pd.Series, str | None, list[str]]:
    """The numbers to rank by: a numeric field, numbers written as text (read as people write them), or the
    geodesic area (km²) or length (km) of each feature; the column added (for area or length) and notes."""
    if by in gdf.columns:
        values = gdf[by]
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            return values.astype(float), None, []
        numbers, notes, _ = parse_numbers(values)
        written = sum(1 for v in values if not is_placeholder(v))
        if written and numbers.notna().sum() >= 0.8 * written:
            return numbers, None, [f"{by} holds numbers written as text: read as numbers"] + notes
        odd = [str(v) for v, n in zip(values, numbers, strict=True) if not is_placeholder(v) and pd.isna(n)][:3]
        raise ToolFailed(
            f"field '{by}' does not hold numbers (e.g. {', '.join(repr(v) for v in odd)})",
            kind="invalid_input",
            hint="rank by a numeric field, or by area or length; coerce the field's type first if it is a number",
        )
    if by not in MEASURES:
        raise ToolFailed(
            f"the layer has no field '{by}'", kind="invalid_input", hint=_fields_hint(gdf) + ", area, length"
        )
    lonlat = _lonlat(gdf).to_numpy() if len(gdf) else np.array([], dtype=object)
    if by == "area":
        found = [geodesic_area_m2(g) / 1e6 if g is not None and not g.is_empty else np.nan for g in lonlat]
    else:
        found = [geodesic_length_m(g) / 1e3 if g is not None and not g.is_empty else np.nan for g in lonlat]
    return pd.Series(found, index=gdf.index, dtype=float), MEASURES[by], [f"geodesic {by} of each feature (WGS84)"]


def top_n(
    gdf: gpd.GeoDataFrame, by: str, n: int, order: Order = "desc", per: str | None = None, ties: Ties = "first"
) -> tuple[gpd.GeoDataFrame, Changes]:
    """The ``n`` features with the largest (``desc``) or smallest (``asc``) ``by`` — a numeric field, numbers
    written as text, or ``area`` / ``length`` (geodesic, added as area_km2 / length_km) — in that order, with their
    ``rank`` (1 first; equal values share the better rank); per value of ``per`` when given. Features without a value
    are left out and counted. Ties at the cut: ``first`` keeps exactly n, the file's first among equals (those left
    out named), ``all`` keeps every one tied with the last."""
    if n < 1:
        raise ToolFailed("keep at least one feature", kind="invalid_input", hint="n is 1 or more")
    if per is not None:
        _require_field(gdf, per)
    values, added, notes = _measure(gdf, by)
    out = gdf.copy()
    if added:
        out[added] = values.round(6)
    column = added or by
    missing = int(values.isna().sum())
    if missing:
        notes.append(f"{missing} features without a value of {by} left out")
    keep = out[values.notna()].assign(_v=values[values.notna()])
    groups = [(None, keep)] if per is None else list(keep.groupby(per, sort=True, dropna=False))
    parts = []
    label = f"{'largest' if order == 'desc' else 'smallest'} {by}"
    name_field = next((c for c in ("name", "nombre", "nom", "nome", "NAME", "Name") if c in gdf.columns), None)
    for key, frame in groups:
        ranked = frame.sort_values("_v", ascending=order == "asc", kind="stable")
        ranked = ranked.assign(rank=ranked["_v"].rank(method="min", ascending=order == "asc").astype(int))
        if len(ranked) > n:
            cut = ranked["_v"].iloc[n - 1]
            tied = ranked[ranked["_v"] == cut]
            if len(tied) > 1 and (ranked["_v"].iloc[n:] == cut).any():
                where = f" in {per} {key}" if per is not None else ""
                out_tied = ranked.iloc[n:][ranked["_v"].iloc[n:] == cut]
                named = [str(v) for v in (out_tied[name_field] if name_field else out_tied.index + 1)][:5]
                if ties == "all":
                    ranked = ranked[ranked["_v"] >= cut] if order == "desc" else ranked[ranked["_v"] <= cut]
                    notes.append(f"{len(tied)} features tie at {cut:g}{where}: all kept ({len(ranked)} features)")
                else:
                    ranked = ranked.iloc[:n]
                    notes.append(
                        f"{len(tied)} features tie at {cut:g}{where} at the cut: the file's first kept, "
                        f"{len(out_tied)} left out ({', '.join(named)})"
                    )
            else:
                ranked = ranked.iloc[:n]
        elif len(ranked) < n:
            notes.append(f"only {len(ranked)} features" + (f" in {per} {key}" if per is not None else "") + " to rank")
        parts.append(ranked)
    result = pd.concat(parts) if parts else keep.iloc[0:0].assign(rank=pd.Series(dtype=int))
    result = gpd.GeoDataFrame(result.drop(columns="_v"), geometry=gdf.geometry.name, crs=gdf.crs)
    notes.insert(0, f"the {n} {label}" + (f" per {per}" if per else "") + f" ({column})")
    return result, Changes(removed=len(gdf) - len(result), notes=notes)
