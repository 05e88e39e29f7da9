"""Everyday operations on the user's own layers, read from the instruction by code: "reproject the clinics to
EPSG:25830, drop the rows without a name and save them as clinics_utm.gpkg" is a chain of typed tools
(load_layer → reproject → drop_nulls → save_layer) in the order the instruction says them. The operations, their
words and how their arguments are filled live in one table (``data/operations.json``); the small model is not
asked. Coverage checks the same table: an operation the instruction asks for that no step ran is a part of the
question not applied.

A chain is planned only when the instruction asks at least one operation of the table and names a layer of the
user's (or the session has exactly one, an assumption the answer states)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from ..engines.layers import LayerCatalogue, UserLayer
from .facts import PrepassFacts
from .operations import operations, operations_asked
from .plan import Plan
from .prepass import normalise, user_entries, user_layer_hits
from .spec import SpecError, _Builder, _field_grouping

ArgKind = str  # crs | distance | field | fields | geometry | filename | k


# ---------------------------------------------------------------------------------------- arguments
_EPSG = re.compile(r"\bepsg[:\s]*(\d{4,6})\b")
_NAMED_CRS = (  # words -> a CRS name the reproject tool takes
    (re.compile(r"web\s+mercator|pseudo[-\s]mercator"), "EPSG:3857"),
    (re.compile(r"wgs\s*84|lat(?:itude)?\s*/\s*lon|longitude\s*/\s*latitude|geographic"), "EPSG:4326"),
    (re.compile(r"equal[-\s]area|igual\s+area|equivalente"), "equal-area"),
    (re.compile(r"\b(?:arctic|north\s+polar|polar\s+north|north\s+pole)\b"), "polar-north"),
    (re.compile(r"\b(?:antarctic|south\s+polar|polar\s+south|south\s+pole)\b"), "polar-south"),
    (re.compile(r"\butm\b"), "utm"),
)
_FILENAME = re.compile(
    r"(?<![\w/\\.-])([A-Za-z0-9][A-Za-z0-9_.-]{0,80}\.(?:gpkg|geojson|shp|fgb|parquet|csv|kml))\b", re.I
)
_GEOMETRY = re.compile(r"\b(points?|lines?|polygons?)\b")
_K = re.compile(r"\b(\d+|one|two|three|four|five)\s+nearest\b")
_EACH = re.compile(r"\b(?:of|for|around)?\s*(?:each|every)\s+")
_K_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_WITHOUT = re.compile(r"(?:without|no|missing|empty|null|blank|sin|sem|sans)\s+(?:an?\s+|any\s+|the\s+)?([a-z_][\w]*)")


def _crs(text: str) -> str | None:
    if m := _EPSG.search(text):
        return f"EPSG:{m.group(1)}"
    return next((name for pattern, name in _NAMED_CRS if pattern.search(text)), None)


def _fields_without(text: str, entry: UserLayer) -> list[str] | None:
    names = {f.name.lower(): f.name for f in entry.fields}
    said = [names[m.group(1)] for m in _WITHOUT.finditer(text) if m.group(1) in names]
    return said or None  # None: every field


def _arg(kind: ArgKind, text: str, question: str, facts: PrepassFacts, entry: UserLayer) -> Any:
    if kind == "crs":
        if (crs := _crs(text)) is None:
            raise SpecError("reprojecting needs a target CRS: an EPSG code (EPSG:25830) or utm, equal-area, polar")
        return crs
    if kind == "distance":
        if not facts.distances_m:
            raise SpecError("a buffer needs a distance (e.g. 500 m)")
        return facts.distances_m[0]
    if kind == "field":  # "by region", "per operator", "of each operator"
        return _field_grouping(text, entry) or _field_grouping(_EACH.sub("by ", text), entry)
    if kind == "fields":
        return _fields_without(text, entry)
    if kind == "geometry":
        m = _GEOMETRY.search(text.split("only", 1)[-1]) or _GEOMETRY.search(text)
        if m is None:
            raise SpecError("say which geometry type to keep: points, lines or polygons")
        return {"point": "point", "line": "line", "polygon": "polygon"}[m.group(1).rstrip("s")]
    if kind == "filename":
        m = _FILENAME.search(question)
        if m is None:
            raise SpecError("saving needs a file name with its format, e.g. clinics.gpkg")
        return m.group(1)
    if kind == "k":
        m = _K.search(text)
        return int(_K_WORDS.get(m.group(1), m.group(1))) if m else 1
    raise SpecError(f"unknown argument kind {kind}")


# ---------------------------------------------------------------------------------------------- chain
class Chain(BaseModel):
    """The operations an instruction asks of one of the user's layers, in order."""

    layer_id: str
    second_layer_id: str | None = None
    operations: list[str]
    args: list[dict[str, Any]]
    implied: list[str] = Field(default_factory=list)


def chain_from_facts(facts: PrepassFacts, layers: LayerCatalogue | None) -> Chain | None:
    """The chain the instruction asks, or None when it asks no operation of the table. Raises
    :class:`SpecError` when it asks one but code cannot fill it (no layer of the user's, no CRS said ...)."""
    asked = operations_asked(facts.question)
    if not asked:
        return None
    asked = sorted(asked, key=lambda a: a[1] == "save_layer")  # "save X as y.gpkg after fixing it": saved last
    entries = {e.id: e for e in user_entries(layers) if e.role != "values"}
    text = normalise(facts.question)
    named = [i for i in dict.fromkeys(layer_id for layer_id, _ in user_layer_hits(text, list(entries.values())))]
    named += [i for i in facts.layers if i in entries and i not in named]
    implied: list[str] = []
    if not named:
        if len(entries) != 1:
            raise SpecError(
                "the instruction names no layer of yours to apply it to"
                + (f" (yours: {', '.join(e.name for e in entries.values())})" if entries else "")
            )
        only = next(iter(entries.values()))
        named = [only.id]
        implied.append(f"applied to your only layer, '{only.name}'")
    subject = entries[named[0]]
    second = named[1] if len(named) > 1 else None
    args: list[dict[str, Any]] = []
    for _, name, _ in asked:
        op = operations()[name]
        if op.second and second is None:
            raise SpecError(f"{name.replace('_', ' ')} needs a second layer of yours (name both layers)")
        args.append({arg: _arg(kind, text, facts.question, facts, subject) for arg, kind in op.args.items()})
    return Chain(
        layer_id=subject.id, second_layer_id=second, operations=[n for _, n, _ in asked], args=args, implied=implied
    )


def compile_chain(chain: Chain) -> Plan:
    """load_layer, then each operation on the previous step's layer (a second layer loaded once)."""
    b = _Builder()
    if chain.operations == ["file_manifest"]:  # the file's layers, CRS, types and counts: no layer to load
        b.add("file_manifest", "List the layers of the file", {"layer_id": chain.layer_id}, {})
        return Plan(steps=b.steps, rationale="operations: file_manifest")
    s = b.add("load_layer", f"Load your layer {chain.layer_id}", {"layer_id": chain.layer_id}, {})
    other: str | None = None
    if chain.second_layer_id:
        other = b.add("load_layer", f"Load your layer {chain.second_layer_id}", {"layer_id": chain.second_layer_id}, {})
    for name, args in zip(chain.operations, chain.args, strict=True):
        op = operations()[name]
        inputs = {"layer": s}
        if op.second == "mask":
            inputs = {"features": s, "mask": str(other)}
        elif op.second == "b":
            inputs = {"a": s, "b": str(other)}
        elif op.second == "polygons":
            inputs = {"points": s, "polygons": str(other)}
        elif op.second == "candidates":
            inputs = {"features": s, "candidates": str(other)}
        shown = ", ".join(f"{k}={v}" for k, v in args.items() if v is not None)
        step = b.add(op.tool, f"{name.replace('_', ' ')}" + (f" ({shown})" if shown else ""), args, inputs)
        if op.tool != "save_layer":  # a save reports; the chain goes on from the layer saved
            s = step
    if len(b.steps) > 12:
        raise SpecError(f"the instruction asks {len(b.steps)} steps; a plan holds at most 12: split it")
    return Plan(steps=b.steps, rationale="operations: " + " → ".join(chain.operations))


__all__ = ["Chain", "chain_from_facts", "compile_chain"]
