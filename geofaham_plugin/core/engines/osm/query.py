"""The feature-class model: what to fetch (:class:`FeatureQuery`) and which rows of a tag table match it.

A class comes from the one class file (``domain.feature_classes``); ``tags_query`` builds an ad-hoc
query from tags. :func:`match` and :func:`classify` read tag columns the same way for every source:
local extracts (HOT-export GeoJSON, .osm.pbf), the layer catalogue's OSM layers and the database loader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from ...domain.feature_classes import Selector, TagValue, feature_class_specs
from ...domain.geometry import geometry_family
from ...errors import ToolFailed

ELEMENTS = ("node", "way", "relation")
#: a HOT export's osm_type -> OSM element type
HOT_TYPES = {"nodes": "node", "ways_line": "way", "ways_poly": "way", "relations": "relation"}

Wanted = tuple[str, ...] | Literal[True]  # True: any value except "no"
TagGetter = Callable[[str], "pd.Series | None"]


@dataclass
class FeatureQuery:
    """What to fetch: ``selectors`` are OR-ed, the tags inside one selector AND-ed."""

    label: str
    selectors: list[dict[str, Wanted]]
    elements: tuple[str, ...] = ELEMENTS
    geometry: str | None = None  # keep only this family: point | line | polygon
    keys: tuple[str, ...] = ()

    @property
    def columns(self) -> list[str]:
        """Tag columns of the result: selector keys first, then the class's extra keys."""
        return list(dict.fromkeys([k for s in self.selectors for k in s] + list(self.keys)))


def _wanted(value: TagValue) -> Wanted:
    if value is True or value == "*":
        return True
    if isinstance(value, str) and value:
        return (value,)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise ToolFailed(
        f"bad tag value {value!r}",
        kind="invalid_input",
        hint='a tag value is a string, a list of strings or true (any value, also "*")',
    )


def _compile(selectors: Iterable[Selector]) -> list[dict[str, Wanted]]:
    return [{k: _wanted(v) for k, v in s.items()} for s in selectors]


def class_query(name: str, variant: str | None = None) -> FeatureQuery:
    """The query of one class of the class file (``variant``: e.g. roads ``major``)."""
    classes = feature_class_specs()
    if name not in classes:
        raise ToolFailed(f"unknown feature class '{name}'", kind="invalid_input", hint="one of: " + ", ".join(classes))
    spec = classes[name]
    selectors = spec.selectors
    if variant:
        if variant not in spec.variants:
            raise ToolFailed(
                f"feature class '{name}' has no variant '{variant}'",
                kind="invalid_input",
                hint="variants: " + (", ".join(spec.variants) or "none"),
            )
        selectors = spec.variants[variant]
    return FeatureQuery(
        label=f"{name} ({variant})" if variant else name,
        selectors=_compile(selectors),
        elements=spec.elements,
        geometry=spec.geometry,
        keys=spec.keys,
    )


def tags_query(tags: Mapping[str, TagValue]) -> FeatureQuery:
    """Arbitrary tags, all of which must match (one selector)."""
    if not tags:
        raise ToolFailed("no tags given", kind="invalid_input", hint='e.g. {"amenity": "hospital"}')
    selector = {str(k): _wanted(v) for k, v in tags.items()}
    label = ", ".join(f"{k}=" + ("*" if v is True else "|".join(v)) for k, v in selector.items())
    return FeatureQuery(label=label, selectors=[selector])


def match(get: TagGetter, n: int, query: FeatureQuery) -> tuple[np.ndarray, set[str]]:
    """Rows matching the query's tags; ``get(key)`` returns a key's values or None when the source lacks
    the key. Returns (mask, keys the source lacks): a selector needing a missing key matches nothing."""
    mask, missing = np.zeros(n, dtype=bool), set()
    for selector in query.selectors:
        sel = np.ones(n, dtype=bool)
        for key, wanted in selector.items():
            values = get(key)
            if values is None:
                missing.add(key)
                sel[:] = False
                break
            v = values.astype("string")
            hit = (v.notna() & (v != "no")) if wanted is True else v.isin(wanted)
            sel &= hit.fillna(False).to_numpy(dtype=bool)
        mask |= sel
    return mask, missing


def shape_mask(query: FeatureQuery, osm_types: pd.Series, geom_types: Iterable[str | None]) -> np.ndarray:
    """Rows whose OSM element type and geometry family the query accepts."""
    ok = osm_types.isin(query.elements).to_numpy(dtype=bool)
    if query.geometry:
        ok &= np.array([geometry_family(t) == query.geometry for t in geom_types], dtype=bool)
    return ok


def hot_column(key: str, columns: Iterable[str]) -> str | None:
    """The column of an OSM key in a HOT export, which cuts names to 10 characters (':' -> '_'):
    the key itself, else its cut unless the cut is the column of the key's own prefix
    ("healthcare:speciality" must not read the "healthcare" column)."""
    columns = set(columns)
    if key in columns:
        return key
    cut = key.replace(":", "_")[:10]
    return cut if len(key) > 10 and cut in columns and cut != key.split(":")[0] else None


def tag_getter(tags: pd.DataFrame, complete: bool) -> TagGetter:
    """``get(key)`` over a tag table. ``complete``: the source has every tag (a PBF), so an absent
    column means no feature has the key; otherwise (a HOT export) the key was not exported."""

    def get(key: str) -> pd.Series | None:
        column = hot_column(key, tags.columns)
        if column is not None:
            return tags[column]
        return pd.Series(None, index=tags.index, dtype=object) if complete else None

    return get


def classify(
    tags: pd.DataFrame, osm_types: pd.Series, geom_types: Iterable[str | None], complete: bool
) -> dict[str, np.ndarray]:
    """Class name -> mask of the rows in that class, for every class of the class file (a feature can
    be in several: a road bridge is a road and a bridge)."""
    get = tag_getter(tags, complete)
    geom_types = list(geom_types)
    out = {}
    for name in feature_class_specs():
        query = class_query(name)
        out[name] = match(get, len(tags), query)[0] & shape_mask(query, osm_types, geom_types)
    return out
