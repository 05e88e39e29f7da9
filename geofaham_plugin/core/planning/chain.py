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
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..agents.said import SAID_ARGS
from ..domain.layer_names import layer_words, user_layer_aliases
from ..engines.layers import LayerCatalogue, UserLayer
from .coverage import question_constraints, words_pattern
from .facts import PrepassFacts
from .operations import operations, operations_asked
from .plan import Plan
from .prepass import EACH_WORDS, PAIR_WORDS, SMALL_NUMBER_WORDS, normalise, user_entries, user_layer_hits
from .spec_compile import StepBuilder
from .spec_schema import SpecError
from .values import WhereNotSaid, field_grouping, layer_filters, where_said

ArgKind = (
    str  # crs | distance | field | fields | geometry | geometries | filename | k | where | renames | quantity | merged
)


# ---------------------------------------------------------------------------------------- arguments
_EPSG = re.compile(r"\bepsg[:\s]*(\d{4,6})\b")
_NAMED_CRS = (  # words -> a CRS name the reproject tool takes
    (re.compile(r"web\s+mercator|pseudo[-\s]mercator"), "EPSG:3857"),
    (re.compile(r"wgs\s*84|lat(?:itude)?\s*/\s*lon|longitude\s*/\s*latitude|geographic"), "EPSG:4326"),
    (re.compile(r"equal[-\s]area|igual\s+area|equivalente|(?:a\s+)?surface\s+egale|area\s+igual"), "equal-area"),
    (re.compile(r"\b(?:arctic|north\s+polar|polar\s+north|north\s+pole)\b"), "polar-north"),
    (re.compile(r"\b(?:antarctic|south\s+polar|polar\s+south|south\s+pole)\b"), "polar-south"),
    (re.compile(r"\butm\b"), "utm"),
)
_FILENAME = re.compile(
    r"(?<![\w/\\.-])([A-Za-z0-9][A-Za-z0-9_.-]{0,80}\.(?:gpkg|geojson|shp|fgb|parquet|csv|kml))\b", re.I
)
_GEOMETRY = re.compile(r"\b(points?|lines?|polygons?)\b")
# how many nearest: one, and two to five in English, Spanish, French and Portuguese (not the words for a pair)
_K_WORDS = {
    word: n for word, n in SMALL_NUMBER_WORDS.items() if word == "one" or (2 <= n <= 5 and word not in PAIR_WORDS)
}
_K = re.compile(
    rf"\b(\d+|{'|'.join(_K_WORDS)})\s+"
    r"(?:\w+\s+){0,2}(?:nearest|closest|mas\s+cercan|(?:les\s+)?plus\s+proches|mais\s+proxim)"
)
_WITHOUT = re.compile(r"(?:without|no|missing|empty|null|blank|sin|sem|sans)\s+(?:an?\s+|any\s+|the\s+)?([a-z_][\w]*)")


_MERGED = words_pattern("merged")  # "one buffer zone", "merge the buffers" (constraint_words.json)
_BY_WORDS = re.compile(
    r"\b(?:by|per|grouped\s+by|for\s+each|of\s+each|around\s+each)\s+(?:the\s+|their\s+|its\s+)?(?P<word>[a-z_]+)"
)


def _layer_nouns(entry: UserLayer) -> set[str]:
    """The words that name the layer's own features ("each district" of a districts layer: per feature)."""
    return {w for alias in (entry.aliases or user_layer_aliases(entry.name)) for w in alias.split()} | {
        "feature",
        "features",
        "one",
        "polygon",
        "point",
        "line",
        "row",
        "record",
    }


def _crs(text: str) -> str | None:
    if m := _EPSG.search(text):
        return f"EPSG:{m.group(1)}"
    return next((name for pattern, name in _NAMED_CRS if pattern.search(text)), None)


def _fields_without(text: str, entry: UserLayer) -> list[str] | None:
    names = {f.name.lower(): f.name for f in entry.fields}
    said = [names[m.group(1)] for m in _WITHOUT.finditer(text) if m.group(1) in names]
    if entry.name_field and re.search(r"\b(?:unnamed|nameless)\b", text):  # "no unnamed ones": the name field
        said.append(entry.name_field)
    return said or None  # None: every field


def _where(text: str, entry: UserLayer) -> dict[str, Any]:
    try:
        return where_said(text, entry)
    except WhereNotSaid as exc:
        raise SpecError(str(exc)) from exc


def _renames(question: str, entry: UserLayer) -> dict[str, str]:
    """Full names said for a shapefile's cut field names: "population_total and population_male" for
    population and populati_1 — each cut name the start of one said name, in the order the file holds them."""
    said = [w for w in dict.fromkeys(re.findall(r"[A-Za-z][A-Za-z0-9_]{9,}", question)) if entry.field(w) is None]
    mapping: dict[str, str] = {}
    for f in entry.fields:
        stem = re.sub(r"_\d+$", "", f.name) if len(f.name) == 10 else f.name
        if len(f.name) != 10 or not stem:
            continue
        match = next((w for w in said if w.lower().startswith(stem.lower()) and w not in mapping.values()), None)
        if match:
            mapping[f.name] = match
    if not mapping:
        raise SpecError("say the full names to give the cut fields (e.g. population_total), or give a mapping")
    return mapping


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
        found = field_grouping(text, entry, each=True)
        if found is None and (m := _BY_WORDS.search(text)) and m["word"] not in _layer_nouns(entry):
            fields = ", ".join(f.name for f in entry.fields)
            raise SpecError(f"your layer '{entry.name}' has no field '{m['word']}' to group by (its fields: {fields})")
        return found
    if kind == "fields":
        return _fields_without(text, entry)
    if kind == "geometry":
        m = _GEOMETRY.search(text.split("only", 1)[-1]) or _GEOMETRY.search(text)
        if m is None:
            raise SpecError("say which geometry type to keep: points, lines or polygons")
        return {"point": "point", "line": "line", "polygon": "polygon"}[m.group(1).rstrip("s")]
    if kind == "geometries":  # "one layer of points, one of lines and one of polygons"; all three when none said
        said = [
            {"point": "point", "line": "line", "polygon": "polygon"}[w.rstrip("s")] for w in _GEOMETRY.findall(text)
        ]
        return list(dict.fromkeys(said)) or ["point", "line", "polygon"]
    if kind == "parts":  # "merge the overlapping buffers": those that overlap, the others stay apart
        return bool(
            re.search(
                r"\b(?:overlapping|touching|adjacent|connected|intersecting|que\s+se\s+solapan|(?:that|which)\s+(?:overlap|touch|intersect))\b",
                text,
            )
        )
    if kind == "merged":  # "one buffer zone", "merge the buffers": else one buffer per feature, attributes kept
        return bool(_MERGED.search(text))
    if kind == "where":
        return _where(text, entry)
    if kind == "renames":
        return _renames(question, entry)
    if kind == "quantity":
        return "length" if re.search(r"\b(?:length|longitud|longueur|comprimento)s?\b", text) else "area"
    if kind == "filename":
        m = _FILENAME.search(question)
        if m is None:
            raise SpecError("saving needs a file name with its format, e.g. clinics.gpkg")
        return m.group(1)
    if kind == "k":
        m = _K.search(text)
        return int(_K_WORDS.get(m.group(1), m.group(1))) if m else 1
    if kind in SAID_ARGS:  # the newer operations' arguments, read in agents/said.py (a SpecError when not said)
        return SAID_ARGS[kind](text, question, entry, SpecError)
    raise SpecError(f"unknown argument kind {kind}")


# ---------------------------------------------------------------------------------------------- chain
class Chain(BaseModel):
    """The operations an instruction asks of one of the user's layers, in order."""

    layer_id: str
    second_layer_id: str | None = None
    mask_artifact_id: str | None = None  # the area of interest as the mask (clip to it), instead of a second layer
    operations: list[str]
    args: list[dict[str, Any]]
    implied: list[str] = Field(default_factory=list)
    # the values of the layers the instruction singles out ("functional water points", "in camp Bravo"): kept
    # before the operations run, field -> values as the data spells them
    filters: dict[str, list[str]] = Field(default_factory=dict)
    second_filters: dict[str, list[str]] = Field(default_factory=dict)


def _named_by_file(question: str, entries: dict[str, UserLayer]) -> list[str]:
    """The layers of a file the instruction names by its file name ("the layers in admin.gpkg")."""
    files = {m.group(1).lower() for m in _FILENAME.finditer(question)}
    return [e.id for e in entries.values() if {Path(p).name.lower() for p in (e.path, e.source_file) if p} & files]


def made_from(entry: UserLayer, source: str) -> bool:
    """Whether an area of interest whose record says ``source`` ("user.aoi:study_boundary.geojson") was made
    from the file of ``entry``."""
    names = {Path(p).name.lower() for p in (entry.path, entry.source_file) if p}
    said = source.rsplit(":", 1)[-1].strip().lower()
    return bool(said) and (said in names or Path(said).stem == entry.name.lower())


def _named_by_token(text: str, entries: dict[str, UserLayer]) -> list[str]:
    """Layers named by a word of their name no other layer has, of four digits or more ("in 2023" for
    flood_2023 beside flood_2024), in the order said."""
    words = {i: set(layer_words(e.name)) for i, e in entries.items()}
    hits = []
    for i, own in words.items():
        for w in own:
            unique = w.isdigit() and len(w) >= 4 and not any(w in other for j, other in words.items() if j != i)
            if unique and (m := re.search(rf"(?<![\w.]){w}(?![\w.])", text)):
                hits.append((m.start(), i))
    return [i for _, i in sorted(hits)]


def chain_from_facts(
    facts: PrepassFacts, layers: LayerCatalogue | None, aoi_artifact_id: str | None = None, aoi_source: str = ""
) -> Chain | None:
    """The chain the instruction asks, or None when it asks no operation of the table. Raises
    :class:`SpecError` when it asks one but code cannot fill it (no layer of the user's, no CRS said ...).
    With an area of interest (``aoi_source``: where it came from), an operation that takes a mask (clip) takes the
    area when no second layer is named or the second is the file the area was made from."""
    asked = operations_asked(facts.question)
    if not asked:
        return None
    asked = sorted(asked, key=lambda a: a[1] == "save_layer")  # "save X as y.gpkg after fixing it": saved last
    entries = {e.id: e for e in user_entries(layers) if e.role != "values"}
    text = normalise(facts.question)
    named = [i for i in dict.fromkeys(layer_id for layer_id, _ in user_layer_hits(text, list(entries.values())))]
    named += [i for i in facts.layers if i in entries and i not in named]
    named += [i for i in _named_by_file(facts.question, entries) if i not in named]
    named += [i for i in _named_by_token(text, entries) if i not in named]
    if {name for _, name, _ in asked} == {"filter_where"} and (
        len(named) > 1 or any(c.kind in ("relation", "distance") for c in question_constraints(facts))
    ):
        return None  # "water points with more than 5000 litres in camp Bravo": a condition of an analysis spec
    masks = any(operations()[name].second == "mask" for _, name, _ in asked)
    mask_id: str | None = None
    if aoi_artifact_id and masks and (len(named) == 1 or (len(named) > 1 and made_from(entries[named[1]], aoi_source))):
        mask_id, named = aoi_artifact_id, named[:1]
    needs_second = any(operations()[name].second for _, name, _ in asked) and mask_id is None
    own = [i for i in entries if i.startswith("user:")]  # what the user brought (not the catalogue's named areas)
    implied: list[str] = []
    if not named and (facts.event_id is not None or facts.target_entities or facts.damage_classes):
        return None  # "count the structures in each damage class of the Eaton fire": the disaster's, not yours
    if not named and needs_second and len(own) == 2:  # "flooded in one year but not both": your two layers
        named = own
        implied.append("applied to your two layers, " + " and ".join(f"'{entries[i].name}'" for i in named))
    elif not named:
        if len(own) != 1:
            raise SpecError(
                "the instruction names no layer of yours to apply it to"
                + (f" (yours: {', '.join(entries[i].name for i in own)})" if own else "")
            )
        only = entries[own[0]]
        named = [only.id]
        implied.append(f"applied to your only layer, '{only.name}'")
    elif needs_second and len(named) == 1 and len(own) == 2 and named[0] in own:
        other = next(i for i in own if i != named[0])
        named.append(other)
        implied.append(f"the other layer taken as your layer '{entries[other].name}'")
    if len(named) > 1 and "nearest_neighbours" in [n for _, n, _ in asked]:
        # "the two closest clinics to every shelter": the features are the layer said after each/every/for each
        hits = dict(user_layer_hits(text, [entries[i] for i in named[:2]]))
        each = {i for i, (start, _) in hits.items() if re.search(rf"\b(?:{'|'.join(EACH_WORDS)})\s+$", text[:start])}
        if each == {named[1]}:
            named = [named[1], named[0], *named[2:]]
    subject = entries[named[0]]
    second = named[1] if len(named) > 1 else None
    args: list[dict[str, Any]] = []
    for _, name, _ in asked:
        op = operations()[name]
        if op.second and second is None and not (op.second == "mask" and mask_id):
            raise SpecError(f"{name.replace('_', ' ')} needs a second layer of yours (name both layers)")
        filled: dict[str, Any] = {}
        for arg, kind in op.args.items():
            value = _arg(kind, text, facts.question, facts, subject)
            if kind == "parts" and not value:
                continue  # the tool's default: everything merged
            filled.update(value if arg == "*" else {arg: value})
        if name == "buffer" and "dissolve" in [n for _, n, _ in asked]:
            filled["dissolve"] = False  # the dissolve step merges them (by a field, into parts): one buffer per feature
        if name == "rename_fields":
            implied.append(
                "fields renamed "
                + ", ".join(f"{a} -> {b}" for a, b in filled["mapping"].items())
                + " (the cut names in the file's order, the full names in the order said: check the values)"
            )
        args.append(filled)
    # "how many water points with a capacity over 5000 in each camp": a condition on the layer's own fields picks the
    # features the other operations work on, wherever the instruction says it
    first = [i for i, (_, name, _) in enumerate(asked) if name == "filter_where" and subject.field(args[i]["field"])]
    order = first + [i for i in range(len(asked)) if i not in first]
    asked, args = [asked[i] for i in order], [args[i] for i in order]
    filters = {} if "filter_where" in [n for _, n, _ in asked] else layer_filters(text, subject, names=False)
    second_filters = layer_filters(text, entries[second], names=True) if second else {}
    return Chain(
        layer_id=subject.id,
        second_layer_id=second,
        mask_artifact_id=mask_id,
        operations=[n for _, n, _ in asked],
        args=args,
        implied=implied,
        filters=filters,
        second_filters=second_filters,
    )


def _kept(b: StepBuilder, s: str, filters: dict[str, list[str]]) -> str:
    """filter_values steps keeping the values the instruction singles out of the layer step ``s`` made."""
    for field, values in filters.items():
        s = b.add(
            "filter_values",
            f"Keep those whose {field} is {' or '.join(values)}",
            {"field": field, "values": values},
            {"layer": s},
        )
    return s


def compile_chain(chain: Chain) -> Plan:
    """load_layer, then each operation on the previous step's layer (a second layer loaded once)."""
    b = StepBuilder()
    if chain.operations == ["file_manifest"]:  # the file's layers, CRS, types and counts: no layer to load
        b.add("file_manifest", "List the layers of the file", {"layer_id": chain.layer_id}, {})
        return Plan(steps=b.steps, rationale="operations: file_manifest")
    s = _kept(
        b, b.add("load_layer", f"Load your layer {chain.layer_id}", {"layer_id": chain.layer_id}, {}), chain.filters
    )
    other: str | None = None
    if chain.second_layer_id:
        loaded = b.add(
            "load_layer", f"Load your layer {chain.second_layer_id}", {"layer_id": chain.second_layer_id}, {}
        )
        other = _kept(b, loaded, chain.second_filters)
    dissolved_by: set[str | None] = set()
    for name, args in zip(chain.operations, chain.args, strict=True):
        op = operations()[name]
        inputs = {"layer": s}
        if op.second == "mask":
            inputs = {"features": s, "mask": chain.mask_artifact_id or str(other)}
        elif op.second == "b":
            inputs = {"a": s, "b": str(other)}
        elif op.second == "polygons":
            inputs = {"points": s, "polygons": str(other)}
        elif op.second == "candidates":
            inputs = {"features": s, "candidates": str(other)}
        tool, args = op.tool, dict(args)
        if op.grouped_tool:  # per value of a field (a table), unless the layer was dissolved by it (per feature)
            if args.get("by") is not None and args["by"] not in dissolved_by:
                tool = op.grouped_tool
            else:
                args.pop("by", None)
        if name == "split_geometry_types":  # one layer per family, each from the same input
            for family in args["geometry"]:
                b.add(tool, f"keep the {family}s", {"geometry": family}, inputs)
            continue
        shown = ", ".join(f"{k}={v}" for k, v in args.items() if v is not None)
        step = b.add(tool, f"{name.replace('_', ' ')}" + (f" ({shown})" if shown else ""), args, inputs)
        if tool == "dissolve":
            dissolved_by.add(args.get("by"))
        if tool != "save_layer":  # a save reports; the chain goes on from the layer saved
            s = step
    if len(b.steps) > 12:
        raise SpecError(f"the instruction asks {len(b.steps)} steps; a plan holds at most 12: split it")
    return Plan(steps=b.steps, rationale="operations: " + " → ".join(chain.operations))


__all__ = ["Chain", "chain_from_facts", "compile_chain", "made_from"]
