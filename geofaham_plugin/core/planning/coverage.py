"""Constraint coverage: every part of a question must be applied by an executed step.

A question's constraints are found in code: the pre-pass facts (distances, k, damage classes, feature
classes, grouping) plus measure words ("what share", "the area of", "average") and relation words
("inside the perimeter", "outside", "nearest") from ``data/constraint_words.json`` in English, Spanish,
French and Portuguese, and the user's area of interest. After a plan has run, each constraint is
matched against the steps that completed: a constraint no step applied means the computed number
answers a different question, so the run must replan or say plainly what it did not apply, and must
not present that number as the answer.

The matching rules are deliberately strict: a rule names the tools (and their arguments) that apply a
kind of constraint. A tool added later applies nothing until a rule says it does, so a new capability
can make an answer partial, never silently wrong.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from ..agents.base import covers as tool_covers
from ..domain.damage import DamageClass
from ..domain.events import DisasterEvent, get_event, load_events
from ..domain.feature_classes import class_words, feature_class_specs, written_tags
from ..domain.language import damage_class_name, feature_class_name, phrase, phrase_keys
from ..domain.layer_names import GENERIC_WORDS, layer_words, user_layer_aliases
from ..engines.geocode import known_only_as_area_of
from .facts import PrepassFacts
from .operations import operations, operations_asked
from .prepass import (
    DAMAGE_RE,
    DISTANCE_RE,
    EACH_WORDS,
    ENTITY_WORDS,
    TYPE_WORDS,
    alias_hits,
    blank_spans,
    damage_values,
    event_spellings,
    excluded_in,
    grade_of,
    grade_percent_spans,
    normalise,
    user_layer_hits,
)
from .templates import GROUP_BY_FIELDS
from .values import (
    ZONES_BEFORE,
    area_thresholds,
    comparisons,
    field_filters,
    field_grouping,
    field_pattern,
    narrows,
    structure_values,
    value_matches,
    year_comparisons,
    yes_no_said,
)

if TYPE_CHECKING:
    from ..engines.layers import UserField, UserLayer

WORDS_FILE = Path(__file__).with_name("data") / "constraint_words.json"

ConstraintKind = Literal[
    "area_of_interest",
    "layer",
    "event",
    "distance",
    "k",
    "damage_class",
    "feature_class",
    "group_by",
    "measure",
    "relation",
    "operation",
    "attribute",
    "comparison",
    "each",
    "place",
    "rank",
    "exclusion",
    "reading",
    "field",
    "tag",
]
Measure = Literal["share", "area", "length", "mean", "sum", "difference", "people"]
Relation = Literal["inside", "outside", "nearest", "near", "grid", "road_access"]

FEATURE_TOOLS = frozenset({"get_features", "get_features_at"})
DAMAGE_LAYER_TOOLS = frozenset({"select_damage", "damage_by_class"})
SQL_TOOLS = frozenset({"sql_features", "sql_table"})


class Constraint(BaseModel):
    """One part of the question the answer must respect, and the steps that applied it."""

    kind: ConstraintKind
    value: str | float | int | list[str] | list[int]
    phrase: str = Field(description="how the question put it (or what the user set, for the area of interest)")
    applied_by: list[int] = Field(default_factory=list, description="ids of completed steps that applied it")
    applied_upstream: list[str] = Field(
        default_factory=list, description="earlier artifacts the steps built on that applied it (e.g. a follow-up's)"
    )

    @property
    def applied(self) -> bool:
        return bool(self.applied_by or self.applied_upstream)

    def describe(self, lang: str = "en") -> str:
        """A short line for the answer and the replan hint: 'the share asked for ("what percentage")', in
        ``lang`` (the replan hint, for the model, is English)."""
        values = [str(v) for v in self.value] if isinstance(self.value, list) else [str(self.value)]
        fields: dict[str, dict[str, object]] = {
            "area_of_interest": {},
            "layer": {"layer": str(self.value).removeprefix("user:")},
            "event": {"phrase": self.phrase, "ids": ", ".join(values)},
            "distance": {"distance": _metres(self.value)},
            "k": {"k": self.value},
            "damage_class": {"classes": ", ".join(damage_class_name(v, lang) for v in values)},
            "feature_class": {"cls": feature_class_name(str(self.value), lang)},
            "group_by": {"field": self.value},
            "measure": {"measure": _word("measure", self.value, lang)},
            "relation": {"relation": _word("relation", self.value, lang)},
            "operation": {"operation": str(self.value).replace("_", " ")},
            "attribute": {"field": values[0], "values": ", ".join(values[1:])},
            "field": {"field": self.value},
            "tag": {"tag": self.phrase},
            "comparison": {"phrase": self.phrase},
            "each": {"layer": str(self.value).removeprefix("user:")},
            "place": {"place": self.value},
            "rank": {"phrase": self.phrase},
            "exclusion": {"phrase": self.phrase},
            "reading": {
                "phrase": phrase(f"reading.field.{self.value}", lang)
                if f"reading.field.{self.value}" in phrase_keys()
                else self.phrase
            },
        }
        if self.kind == "each" and self.value == "event":  # one figure per disaster
            return phrase("constraint.each_event", lang, phrase=self.phrase)
        what = phrase(f"constraint.{self.kind}", lang, **fields[self.kind])
        # the question's own words where they say more than the value (a measure or relation phrase)
        quoted = self.kind in ("measure", "relation", "operation") and self.phrase and self.phrase != what
        return f'{what} ("{self.phrase}")' if quoted else what


class ExecutedStep(BaseModel):
    """What coverage needs of a step that ran: its tool, arguments and input artifact ids. An artifact the
    steps built on that an earlier run made is an upstream step: ``upstream`` holds its id, ``args`` the
    operation parameters it recorded."""

    step_id: int
    tool: str | None
    args: dict[str, Any] = Field(default_factory=dict)
    inputs: dict[str, str] = Field(default_factory=dict)
    done: bool = True
    upstream: str | None = None


# ------------------------------------------------------------------------------------------ finding
@cache
def words_pattern(group: str) -> re.Pattern[str]:
    """A list of the constraint words (``hazard_words``, ``imagery_words``, ``before_after``, ``type_grouping``,
    ``merged``) as
    one pattern of whole words, matched on the normalised question."""
    words = json.loads(WORDS_FILE.read_text(encoding="utf-8"))[group]
    return re.compile(r"(?<![\w])(?:" + "|".join(words) + r")(?![\w])")


def imagery_said(text: str) -> bool:
    """Whether the (normalised) question says an imagery or raster word (``imagery_words``, ``before_after``)."""
    return bool(words_pattern("imagery_words").search(text) or words_pattern("before_after").search(text))


@cache
def constraint_words() -> dict[str, dict[str, re.Pattern[str]]]:
    """The measure and relation words, and those that weigh a share: {"measures" | "relations" | "share_weight":
    {name: pattern}}."""
    raw = json.loads(WORDS_FILE.read_text(encoding="utf-8"))
    return {
        group: {
            name: re.compile(r"(?<![\w])(?:" + "|".join(patterns) + r")(?![\w])") for name, patterns in table.items()
        }
        for group, table in raw.items()
        if group in ("measures", "relations", "share_weight")
    }


def named_event_groups(question: str) -> list[tuple[str, list[int]]]:
    """The disasters a question names by an unambiguous alias ("Eaton", "Palisades"; not "Los Angeles", which
    names both), as (name, event ids) — snapshots of one event share a name and count as one."""
    events = load_events()
    ids_by_name: dict[str, list[int]] = {}
    names_by_spelling: dict[str, set[str]] = {}
    for event in events:
        ids_by_name.setdefault(event.name, []).append(event.id)
        for spelling in event_spellings(event):
            names_by_spelling.setdefault(spelling, set()).add(event.name)
    hits = {spelling for spelling, _ in alias_hits(normalise(question), events)}  # the pre-pass's own matcher
    named = {next(iter(names)) for spelling in hits if len(names := names_by_spelling.get(spelling, set())) == 1}
    return [(name, ids_by_name[name]) for name in sorted(named)]


def _word(group: str, value: object, lang: str) -> str:
    """A measure or relation name ("share", "outside") in ``lang``."""
    key = f"{group}.{value}"
    return phrase(key, lang) if key in phrase_keys() else str(value)


def _metres(value: object) -> str:
    return f"{float(value):,.0f} m" if isinstance(value, (int, float)) else str(value)


def question_constraints(
    facts: PrepassFacts,
    *,
    aoi_artifact_id: str | None = None,
    aoi_layers: Iterable[str] = (),
    entries: Mapping[str, UserLayer] | None = None,
    structure_types: tuple[str, Sequence[str]] | None = None,
) -> list[Constraint]:
    """The constraints of a question: pre-pass facts, measure and relation words, the user's AOI, and what it says
    of the values of the layers of yours it names (``entries``: those layers by id) or of the structure types of
    its disaster's damage layer (``structure_types``: the field and its values) (what it names of the local layers
    its feature classes come from: :func:`local_field_constraints`). ``aoi_layers``: layers the
    question names that the area of interest was made from (the area's constraint stands for them)."""
    text = normalise(facts.question)
    found: list[Constraint] = []
    if aoi_artifact_id:
        found.append(Constraint(kind="area_of_interest", value=aoi_artifact_id, phrase="your area of interest"))
    skip = set(aoi_layers) if aoi_artifact_id else set()
    for layer_id in dict.fromkeys(i for i in facts.layers if i not in skip):  # a layer it names must be used
        found.append(Constraint(kind="layer", value=layer_id, phrase=layer_id))
    events = named_event_groups(facts.question)
    if len(events) >= 2:  # a comparison: every disaster it names must be computed, not only the first
        found += [Constraint(kind="event", value=ids, phrase=name) for name, ids in events]
    elif (each := each_disaster(text)) and facts.event_id is None:  # "per fire", none named: two or more computed
        found.append(Constraint(kind="each", value="event", phrase=each.group(0).strip()))
    for distance in dict.fromkeys(facts.distances_m):
        found.append(Constraint(kind="distance", value=distance, phrase=_metres(distance)))
    if facts.k is not None:
        found.append(Constraint(kind="k", value=facts.k, phrase=f"{facts.k} nearest"))
    if facts.damage_classes:
        classes = [c.value for c in facts.damage_classes]
        found.append(Constraint(kind="damage_class", value=classes, phrase=", ".join(classes)))
    for cls in dict.fromkeys(facts.target_entities):
        found.append(Constraint(kind="feature_class", value=cls, phrase=cls))
    for place in _subject_places(facts, text):
        found.append(Constraint(kind="place", value=place, phrase=place))
    if m := _SUPERLATIVE.search(text):  # "the 5 largest", "which camp has the most": an order no count gives
        found.append(Constraint(kind="rank", value=m.group(0), phrase=m.group(0)))
    # an everyday operation asked of a layer of yours ("reproject", "dissolve by", "save as x.gpkg") must run; the
    # words inside its phrase are its own ("merge the overlapping buffers" asks no overlap relation)
    asked = operations_asked(facts.question) if facts.layers else []
    spans = [(start, start + len(words)) for start, _, words in asked]
    per_feature = _per_feature_words(facts.layers)
    if facts.group_by:
        found.append(Constraint(kind="group_by", value=facts.group_by, phrase=f"by {facts.group_by}"))
    elif m := _free_match(words_pattern("type_grouping"), text, spans, per_feature):  # not "each fire"
        found.append(Constraint(kind="group_by", value="type", phrase=m.group(0)))  # "which types ... of each"
    vocab = constraint_words()
    # "ten percent damage or worse" says which grades (the pre-pass's damage classes), not a share asked for
    graded = blank_spans(text, grade_percent_spans(text))
    # "dos kilómetros y medio" is a distance and a half, not a mean asked for
    graded = blank_spans(graded, [m.span() for m in DISTANCE_RE.finditer(graded)])
    for measure, pattern in vocab["measures"].items():
        if m := _free_match(pattern, graded, spans):
            found.append(Constraint(kind="measure", value=measure, phrase=m.group(0)))
    # operations on one layer of yours and nothing else named: "a convex hull around the wells", "dissolve the ones that
    # overlap" relate the layer to nothing (no second layer, disaster, feature class or area to be inside or near)
    alone = bool(asked) and len(set(facts.layers)) == 1 and not aoi_artifact_id
    alone = alone and facts.event_id is None and not facts.event_candidates and not facts.target_entities
    for relation, pattern in vocab["relations"].items():
        if relation == "nearest" and facts.k is not None:
            continue  # "3 nearest" is the k constraint already
        if alone and relation != "grid":
            continue
        if m := _free_match(pattern, text, spans):
            found.append(Constraint(kind="relation", value=relation, phrase=m.group(0)))
    for _, name, words in asked:
        found.append(Constraint(kind="operation", value=operations()[name].tool, phrase=words))
    # a value asked of each feature (a count, a measure, a distance, a nearest one): "each" asks one per feature;
    # "remove every clinic without a name" does not
    asks_value = facts.wants_count or facts.k is not None or any(c.kind in ("measure", "distance") for c in found)
    asks_value = asks_value or bool(_ASKS_VALUE.search(text))
    found += _value_constraints(facts, text, entries or {}, asks_value)
    # "labels over 1 000 m²", "parks larger than 2 ha": a size the features must have; a step must filter on it
    found += [Constraint(kind="comparison", value=n, phrase=words) for words, n in area_thresholds(text)]
    found += _structure_constraints(facts, text, structure_types)
    found += _exclusions(text)
    # an OpenStreetMap tag written out ("waterway=canal", "highway=crossing") names exactly the features to keep
    found += [Constraint(kind="tag", value=[k, v], phrase=f"{k}={v}") for k, v in dict.fromkeys(tags_said(text))]
    return found


#: key=value, OpenStreetMap's tag syntax, as a question writes it
def tags_said(text: str) -> list[tuple[str, str]]:
    """The OpenStreetMap tags the (normalised) question writes out: [(key, value)]."""
    return written_tags(text)


def _has_tag(tags: Mapping[str, object], key: str, value: str) -> bool:
    """Whether ``tags`` keep exactly the features tagged key=value (any value, or several, keep others too)."""
    said = tags.get(key)
    return said == value or (isinstance(said, (list, tuple)) and list(said) == [value])


def _applies_tag(c: Constraint, s: ExecutedStep) -> bool:
    """A tag written out is applied by the kinds it makes (select_kind), a class that is exactly that tag (every
    selector holds it), or a filter on that key keeping that value."""
    key, value = (str(v) for v in c.value) if isinstance(c.value, list) else (str(c.value), "")
    specs = feature_class_specs()
    if s.tool == "select_kind" and not s.args.get("exclude"):
        cls = specs.get(str(s.args.get("feature_class")))
        kinds = [cls.kinds[k] for k in s.args.get("kinds", []) if cls and k in cls.kinds]
        return bool(kinds) and all(_has_tag(k.tags, key, value) for k in kinds)
    if s.tool in FEATURE_TOOLS:
        cls = specs.get(str(s.args.get("feature_class")))
        return cls is not None and all(_has_tag(sel, key, value) for sel in cls.selectors)
    if s.tool == "filter_values" and str(s.args.get("field")).lower() == key:
        # the data's value in as many words as were written ("type = general acute care": GENERAL ACUTE CARE)
        return any(str(v).lower() == value or str(v).lower().startswith(value + " ") for v in s.args.get("values", []))
    return key in _sql(s) and value in _sql(s)


def where_blanked(text: str, facts: PrepassFacts) -> str:
    """``text`` (normalised) with the disasters' names and the places the question names blanked: they say where,
    never which features ("Los Angeles County hospitals": no COUNTY value asked)."""
    for spelling in [s for s, _ in alias_hits(text, load_events())] + [normalise(p) for p in facts.places]:
        text = re.sub(rf"(?<!\w){re.escape(spelling)}(?!\w)", " ", text)
    return text


def local_field_constraints(facts: PrepassFacts, fields: Sequence[UserField]) -> list[Constraint]:
    """What the question names of a local layer's data (``fields``: :func:`.spec_read.local_fields`), as the data
    spells it (a closed class): a category value kept ("general acute care hospitals": TYPE), a yes/no field as an
    adjective ("hospitals with a helipad"), a field by its name ("how many beds", "any TRAUMA level"); a step must
    filter on the value or use the field, else the answer is partial. Values taken out ("excluding psychiatric")
    are the exclusion's constraint."""
    text = where_blanked(normalise(facts.question), facts)
    kept = blank_spans(text, [e.span() for e in excluded_in(text)])
    found: list[Constraint] = []
    filters = field_filters(kept, fields)
    for field, values in filters.items():
        found.append(Constraint(kind="attribute", value=[field, *values], phrase=", ".join(values)))
    for f in fields:
        words = layer_words(f.name)
        said_name = " ".join(words)
        named = len(said_name) >= 4 and not set(words) & GENERIC_WORDS and f.name not in filters
        if named and (m := re.search(rf"(?<!\w){re.escape(said_name)}s?(?!\w)", kept)):
            found.append(Constraint(kind="field", value=f.name, phrase=m.group(0)))
    return found


def _structure_constraints(
    facts: PrepassFacts, text: str, structure_types: tuple[str, Sequence[str]] | None
) -> list[Constraint]:
    """The structure types of the damage layer the question names as the data spells them ("churches": Church,
    "single-family": both Single Family Residence types): a step must keep them, whatever read the question.
    A feature class's own words ("within 1 km of a school") name the class, not a structure type."""
    if structure_types is None:
        return []
    field, values = structure_types
    for spelling, _ in alias_hits(text, load_events()):  # "the Palisades fire": the disaster's name, no value
        text = re.sub(rf"(?<!\w){re.escape(spelling)}(?!\w)", " ", text)
    taken_out = [e.span() for e in excluded_in(text)]  # "excluding mobile homes": taken out, not kept
    kept = "".join(" " if any(a <= i < b for a, b in taken_out) else ch for i, ch in enumerate(text))
    own_words = [w for c in facts.target_entities for w in ENTITY_WORDS.get(c, ())]
    hits = value_matches(kept, list(values), exclude=own_words, first_word=True)
    if not hits or set(hits) == set(values):
        return []
    return [Constraint(kind="attribute", value=[field, *hits], phrase=", ".join(hits))]


# "not counting outbuildings", "excluding pharmacies", "except the churches": what follows the words that take
# something out (damage grades taken out are the pre-pass's: "excluding those with minor damage")
_NOT_EXCLUDED = re.compile(
    r"(?:inside|in|within|outside|near|dentro|dans|en|fuera|hors|the\s+(?:inside|outside)|reachable|accessible|connected"
    r"|cut|isolated|able|included|counted|known|available|applied)\b"
)


def _exclusions(text: str) -> list[Constraint]:
    """What the question takes out of the set: applied only by a step that removes it (a != filter), else said."""
    found = []
    for e in excluded_in(text):
        if DAMAGE_RE.search(text[e.what_start : e.what_end + 40]) or _NOT_EXCLUDED.match(e.what):
            continue
        relations = constraint_words()["relations"]  # "were not flooded": outside the flood, a relation
        if any(r.search(text, e.start, e.end + 12) for r in relations.values()):
            inside = relations["inside"].search(text, e.start, e.end + 12)
            if inside and not relations["outside"].search(text, e.start, e.end + 12):
                # "not counting those left inside the water": the others, outside it (a step must keep them)
                found.append(Constraint(kind="relation", value="outside", phrase=text[e.start : inside.end()]))
            continue
        said = text[e.start : e.end]
        found.append(Constraint(kind="exclusion", value=e.what, phrase=said))
    return found


_TOTAL_OF = re.compile(r"(?<!\w)(?:total|sum\s+of(?:\s+the)?|combined|overall|suma\s+de|somme\s+de|soma\s+d[aeo])\s+")
_ASKS_VALUE = re.compile(
    r"(?<!\w)(?:area|length|size|distance|how\s+far|nearest|closest|centroids?|centre|center|km2|km²|hectares?"
    r"|square|superficie|aire|longitud|longueur|comprimento|distancia|cercan[oa]s?|proches?|proxim[oa]s?)(?!\w)"
)


# "the Eaton fire in Altadena", "the Altadena fire": the place says where the disaster was, not which features
_PLACE_OF_DISASTER = re.compile(
    r"(?:fire|wildfire|flood|flooding|dana|storm|hurricane|cyclone|typhoon|earthquake|quake|tornado|incendio|incendie"
    r"|inundacion|inondation|inundacao|terremoto|seisme|huracan|ouragan|furacao|disaster|desastre|catastrophe)"
    r"\s+(?:in|at|near|around|of|en|de|del|a|em|du|des|da|do|no|na)\s+(?:the\s+|la\s+|el\s+|le\s+|l')?$"
)
# "the Altadena fire", "the Horta Sud area of interest": the place names the disaster or an area layer
_DISASTER_AFTER = re.compile(
    r"\s*(?:'s\s+)?(?:fire|wildfire|flood|flooding|dana|storm|earthquake|quake|tornado|area|aoi|zone|region|boundary"
    r"|extent|perimeter|layer|polygon)\b"
)


# superlatives that order the features ("the largest footprint", "the most water points", "las 3 más grandes");
# nearest and closest are the nearest relation, "at most" a bound
_SUPERLATIVE = re.compile(
    r"(?<!\w)(?:largest|biggest|smallest|highest|lowest|longest|shortest|widest|heaviest|oldest|newest|greatest"
    r"|farthest|furthest|mas\s+lejan[oa]s?|mas\s+alejad[oa]s?|plus\s+eloigne(?:e|s|es)?|mais\s+distantes?"
    r"|mais\s+afastad[oa]s?"
    r"|(?<!at\s)most(?!\s+of\b)(?=\s+\w)|fewest|(?<!at\s)least(?=\s+\w)(?<!at\s)|top\s+\d+|mas\s+grandes?|mas\s+pequen[oa]s?"
    r"|mayor(?:es)?\s+(?:numero|superficie|area)|plus\s+grand(?:e|s|es)?|plus\s+petit(?:e|s|es)?|maior(?:es)?|menor(?:es)?)"
    r"(?!\w)"
)


def disaster_places(event: DisasterEvent | None, places: Sequence[str]) -> set[str]:
    """The places (normalised) that say which disaster, not where its features are: its own place, and a place of
    ``places`` known only as its area ("Maui" of the Lahaina fire)."""
    if event is None:
        return set()
    return {normalise(event.place)} | {normalise(p) for p in places if known_only_as_area_of(p, event)}


def _subject_places(facts: PrepassFacts, text: str) -> list[str]:
    """Places the question names for its features ("structures in Altadena", "schools in Paiporta"): not the
    disaster's own place (Lahaina of the Lahaina fire) nor a place that says where the disaster was."""
    own = disaster_places(get_event(facts.event_id) if facts.event_id else None, facts.places)
    found = []
    for place in dict.fromkeys(facts.places):
        said = normalise(place)
        if said in own:
            continue
        m = re.search(rf"(?<!\w){re.escape(said)}(?!\w)", text)
        if m is None or _PLACE_OF_DISASTER.search(text[max(0, m.start() - 40) : m.start()]):
            continue
        if _DISASTER_AFTER.match(text, m.end()):
            continue
        found.append(place)
    return found


def _value_constraints(
    facts: PrepassFacts, text: str, entries: Mapping[str, UserLayer], asks_value: bool
) -> list[Constraint]:
    """What the question says of the values of a layer of yours it names: a category value or a feature's name
    ("open clinics", "camp Bravo"), a yes/no field as an adjective ("functional water points"), and number
    comparisons ("more than 5000 litres"); each must be applied by a step that filters on it."""
    found: list[Constraint] = []
    # a disaster's or place's name is the event's ("clinics in the Valencia flood"), not a value of a field
    for spelling, _ in alias_hits(text, load_events()):
        text = re.sub(rf"(?<!\w){re.escape(spelling)}(?!\w)", " ", text)
    for layer_id in dict.fromkeys(facts.layers):
        entry = entries.get(layer_id)
        if entry is None:
            continue
        nouns = {normalise(a) for a in user_layer_aliases(layer_id.removeprefix("user:"))}
        for f in entry.fields:
            if damage_values(f) is not None:  # a field of grades: the damage-class constraint is its own
                continue
            if (said := yes_no_said(text, f)) is not None:
                if narrows(f, said[1]):
                    found.append(Constraint(kind="attribute", value=[f.name, *map(str, said[1])], phrase=said[0]))
            elif f.type == "text" and f.values:
                hits = [v for v in value_matches(text, [str(v) for v in f.values]) if normalise(v) not in nouns]
                if hits and narrows(f, hits):
                    found.append(Constraint(kind="attribute", value=[f.name, *hits], phrase=", ".join(hits)))
    # "the wells in each camp", "the area of each district", "for every shelter": one result per feature of that
    # layer of yours; "each land use", "per operator": one per value of its field
    for layer_id, (start, _) in user_layer_hits(text, list(entries.values())):
        each = ZONES_BEFORE.search(text[max(0, start - 24) : start]) or re.search(r"\b(?:each|every)\s+$", text[:start])
        if each and asks_value:
            found.append(Constraint(kind="each", value=layer_id, phrase=text[max(0, start - 8) : start].split()[-1]))
    for layer_id in dict.fromkeys(facts.layers):
        entry = entries.get(layer_id)
        if entry is None or entry.role == "values":
            continue
        # "per operator" groups; "each sensor" does when a value is asked of it ("keep one copy of each sensor
        # reading" does not)
        grouped = field_grouping(text, entry) or (field_grouping(text, entry, each=True) if asks_value else None)
        if grouped and (field := entry.field(grouped)) is not None and field.distinct < entry.feature_count:
            found.append(Constraint(kind="group_by", value=grouped, phrase=f"by {grouped}"))
        # "the total capacity", "sum of beds": the sum of that field, never a count of the features
        for f in entry.fields:
            if (
                f.type in ("integer", "real")
                and (m := _TOTAL_OF.search(text))
                and field_pattern(f).match(text, m.end())
            ):
                found.append(Constraint(kind="measure", value="sum", phrase=text[m.start() : m.end() + len(f.name)]))
                break
    said_numbers = [*facts.distances_m, *([facts.k] if facts.k is not None else [])]
    # "built before 1990", "between 1950 and 1980", "older than 50 years": conditions on the features; in a question
    # about imagery a year is the scenes' time, which the pre-pass reads as a window
    years = year_comparisons(text) if not (facts.windows or imagery_said(text)) else []
    for words, number in comparisons(text) + years:
        if _counted_noun(
            normalise(facts.question), words
        ):  # "more than 2,000 buildings": the answer's count compared, not a field
            continue
        if not any(_close(number, float(n)) for n in said_numbers):
            found.append(Constraint(kind="comparison", value=number, phrase=words))
    return found


def _counted_noun(text: str, words: str) -> bool:
    """Whether the number compared is followed by a noun of the features counted ("more than 2,000 homes",
    "plus de 100 hopitaux"): a threshold of the answer's count (a yes/no compares it), not a field's value."""
    at = text.find(words)
    nxt = re.findall(r"[a-z]+", text[at + len(words) :])[:1] if at >= 0 else []
    nouns = {w for words_ in ENTITY_WORDS.values() for w in words_}
    return any(w.rstrip("s") in nouns or w.removesuffix("es") in nouns or w in nouns for w in nxt[:1])


def _per_feature_words(layer_ids: Iterable[str]) -> re.Pattern[str] | None:
    """ "each shelter", "every reef zone": the features of a layer the question names one by one, not groups."""
    nouns = {a for layer_id in layer_ids for a in user_layer_aliases(str(layer_id).removeprefix("user:"))}
    if not nouns:
        return None
    return re.compile(r"\s*(?:" + "|".join(re.escape(n) for n in sorted(nouns, key=len, reverse=True)) + r")\b")


_EACH_AT_END = re.compile(rf"\b(?:{'|'.join(EACH_WORDS)})$")
#: "for each fire", "de cada uno de los incendios", "pour chacun des deux feux": each disaster (a disaster type word of
#: the pre-pass or a word for a disaster), one figure per event, not a breakdown by type
_EACH_DISASTER = re.compile(
    r"\s+(?:(?:of|one|uno|una|de|des|dos|das|los|las|les|the|both|two|deux|ambos|tous)\s+)*"
    rf"(?:{'|'.join(TYPE_WORDS)}|disasters?|events?|desastres?|eventos?|evenements?|catastrophes?)(?!\w)"
)


#: "per fire", "for each of the fires", "de cada incendio", "pour chaque inondation": one figure per disaster
_PER_EVENT = re.compile(rf"(?<!\w)(?:{'|'.join(EACH_WORDS)}|per|por|par|pour\s+chaque)(?=\s)" + _EACH_DISASTER.pattern)


def each_disaster(text: str) -> re.Match[str] | None:
    """Where the (normalised) question asks one figure per disaster ("per fire", "for each of the fires", "de
    cada incendio"); None when it does not."""
    return _PER_EVENT.search(text)


def type_grouping(text: str, per_feature: re.Pattern[str] | None = None) -> re.Match[str] | None:
    """The words asking for a breakdown by type ("which kinds", "break them down", "of each"), not "each <feature of
    a layer>" nor "each fire" (normalised text)."""
    return _free_match(words_pattern("type_grouping"), text, [], per_feature)


def _free_match(
    pattern: re.Pattern[str], text: str, spans: list[tuple[int, int]], per_feature: re.Pattern[str] | None = None
) -> re.Match[str] | None:
    """The first match of ``pattern`` outside the operations' phrases (and, for groupings, not "each <feature>")."""
    for m in pattern.finditer(text):
        if any(start <= m.start() < end for start, end in spans):
            continue
        each = _EACH_AT_END.search(m.group(0))
        if each and (
            per_feature is not None and per_feature.match(text, m.end()) or _EACH_DISASTER.match(text, m.end())
        ):
            continue
        return m
    return None


# ------------------------------------------------------------------------------------------ matching
def _close(a: object, b: float) -> bool:
    try:
        return math.isclose(float(a), b, rel_tol=1e-6, abs_tol=0.5)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _sql(step: ExecutedStep) -> str:
    return str(step.args.get("sql", "")).lower() if step.tool in SQL_TOOLS else ""


def _applies_distance(c: Constraint, s: ExecutedStep) -> bool:
    value = float(c.value)  # type: ignore[arg-type]
    if s.tool in ("buffer", "within_distance") and _close(s.args.get("distance_m"), value):
        return True
    if s.tool in FEATURE_TOOLS | {"get_tagged_features"} and _close(s.args.get("buffer_m"), value):
        return True
    if s.tool == "cluster" and _close(s.args.get("eps_m"), value):
        return True
    if s.tool == "grid_counts" and _close(s.args.get("cell_m"), value):
        return True
    sql = _sql(s)
    return bool(sql) and any(_close(n, value) for n in re.findall(r"\d+(?:\.\d+)?", sql))


def _applies_k(c: Constraint, s: ExecutedStep) -> bool:
    return s.tool in ("nearest", "nearest_neighbours") and s.args.get("k") == c.value


def _applies_damage(c: Constraint, s: ExecutedStep) -> bool:
    wanted = {str(v) for v in c.value} if isinstance(c.value, list) else {str(c.value)}
    if s.tool == "select_damage":
        chosen = {str(getattr(v, "value", v)) for v in s.args.get("damage_classes", [])}
        return chosen == wanted
    if s.tool == "damage_by_class":
        return True  # one row per class: each asked class is reported on its own
    if s.tool == "filter_values" and s.args.get("values"):  # a layer of yours with a field of grades
        kept = {str(grade_of(v)) for v in s.args["values"]}
        if out := s.args.get("taken_out"):  # every other grade the field holds, taken out: the asked ones are kept
            return kept <= wanted and not {str(grade_of(v)) for v in out} & wanted
        return kept == wanted
    by = str(s.args.get("by") or "").lower()
    return s.tool == "count" and by in ("damage_class", GROUP_BY_FIELDS.get("damage class", "").lower())


def _applies_feature_class(c: Constraint, s: ExecutedStep) -> bool:
    if s.tool in FEATURE_TOOLS:
        return s.args.get("feature_class") == c.value
    if f"'{c.value}'" in _sql(s):
        return True
    if s.tool == "get_tagged_features":
        return True  # the model narrowed the class to explicit OSM tags
    if s.tool == "filter_values":  # "schools destroyed": the damage layer's structure type names the class
        words = {normalise(w) for w in class_words().get(str(c.value), ())}
        values = {normalise(str(v)) for v in s.args.get("values", [])}
        return any(v == w or v.startswith(w + " ") or v == w + "s" for v in values for w in words)
    if c.value == "buildings":  # building-damage inspections are buildings
        return s.tool in DAMAGE_LAYER_TOOLS or (s.tool == "load_event_layer" and s.args.get("role") == "damage")
    return False


def _applies_group(c: Constraint, s: ExecutedStep) -> bool:
    if c.value == "type":  # a breakdown by kind: any grouping step
        return bool(s.args.get("by")) or s.tool in ("count_in_zones", "class_areas")
    by = str(s.args.get("by") or "").strip().lower()
    field = GROUP_BY_FIELDS.get(str(c.value), "").lower()
    if c.value == "damage class" and s.tool == "damage_by_class":
        return True
    grouping_tools = (
        "count", "sum_by", "dissolve", "zonal_stats", "raster_stats", "share", "measure", "stats", "convex_hulls",
        "class_areas",
    )  # fmt: skip
    if not by or s.tool not in grouping_tools:
        return "group by" in _sql(s)
    if c.value == "damage class" and _DAMAGE_FIELD.search(by):  # a layer of yours with its own damage field
        return True
    return by == field if field else (by in str(c.value).lower().replace(" ", "_") or str(c.value).lower() in by)


#: field names that hold a damage grade in layers of the user's ("damage", "dmg_level", "severity")
_DAMAGE_FIELD = re.compile(r"damage|dmg|sever|grade|da[ñn]os?|d[ée]g[âa]ts?|danos?")


_MEASURE_TOOLS: dict[str, tuple[dict[str, tuple[str, str] | None], tuple[str, ...]]] = {
    # measure: (tools that compute it -> the (argument, values) they need, or None for any call; SQL fragments)
    "share": (
        {"share": None, "raster_stats": ("stat", "share_above share"), "class_areas": ("measure", "share")},
        ("/",),
    ),
    "area": (
        {
            "zonal_stats": None,
            "measure": ("quantity", "area"),
            "add_measure": ("quantity", "area"),
            "share": ("weight", "area"),
            "raster_stats": ("stat", "area"),
            "class_areas": ("measure", "area"),
        },
        ("st_area",),
    ),
    "length": (
        {"measure": ("quantity", "length"), "add_measure": ("quantity", "length"), "share": ("weight", "length")},
        ("st_length",),
    ),
    "mean": (
        {"zonal_stats": None, "stats": ("stat", "mean median"), "raster_stats": ("stat", "mean median")},
        ("avg(",),
    ),
    "sum": ({"sum_by": None, "stats": ("stat", "sum"), "raster_stats": ("stat", "sum")}, ("sum(",)),
    "difference": ({"difference": None, "index_change": None, "dnbr": None}, (") - (", ") - sum", ") - count")),
    # "how many people": a sum of population (a raster's or a field's), never a count of features
    "people": ({"raster_stats": ("stat", "sum"), "stats": ("stat", "sum"), "sum_by": None}, ("sum(",)),
}


def _applies_measure(c: Constraint, s: ExecutedStep) -> bool:
    tools, fragments = _MEASURE_TOOLS[str(c.value)]
    if s.tool in tools:
        needs = tools[s.tool]
        if needs is None:
            return True
        value = s.args.get(needs[0])
        return str(getattr(value, "value", value)) in needs[1].split()
    sql = _sql(s)
    return bool(sql) and any(f in sql for f in fragments)


def _applies_relation(c: Constraint, s: ExecutedStep) -> bool:
    sql = _sql(s)
    if c.value == "inside":
        if s.tool in ("inside", "clip", "damage_by_class", "zonal_stats", "raster_stats", "class_areas") or (
            s.tool in FEATURE_TOOLS and "aoi" in s.inputs
        ):
            return True
        return any(f in sql for f in ("st_intersects", "st_within", "st_contains", "st_covers"))
    if c.value == "grid":
        return s.tool == "grid_counts" or "floor(" in sql
    if c.value == "nearest":
        return s.tool in ("nearest", "nearest_neighbours") or "order by st_distance" in sql
    if c.value == "near":  # near without a distance: any distance-bounded selection applies it (and states it)
        if s.tool in ("within_distance", "buffer", "nearest"):
            return True
        buffer_m = s.args.get("buffer_m")
        if s.tool in FEATURE_TOOLS and isinstance(buffer_m, (int, float)) and buffer_m > 0:
            return True
        return any(f in sql for f in ("st_dwithin", "st_distance"))
    if c.value == "outside":
        return s.tool == "outside" or (bool(sql) and "not st_" in sql)
    if c.value == "road_access":  # only routing on a network the hazard cut: never a distance, inside or SQL test
        return s.tool == "road_reachability" and "hazard" in s.inputs
    return False


def _applies_event(c: Constraint, s: ExecutedStep) -> bool:
    ids = set(c.value) if isinstance(c.value, list) else {c.value}
    if s.args.get("event_id") in ids:
        return True
    sql = _sql(s)
    return bool(sql) and any(re.search(rf"event_id\s*(?:=|in\s*\()[^)]*\b{i}\b", sql) for i in ids)


def _applies_layer(c: Constraint, s: ExecutedStep) -> bool:
    return s.tool in ("load_layer", "load_raster_layer") and s.args.get("layer_id") == c.value


# tools that apply an operation as part of another ("within a 2 km buffer of the flood": within_distance)
_OPERATION_ALSO = {
    "buffer": ("within_distance",),
    "clip": ("inside",),
    "dissolve": ("measure",),
    "add_measure": ("measure",),  # per group: the grouped tool of the operation
}


def _applies_operation(c: Constraint, s: ExecutedStep) -> bool:
    return s.tool == c.value or s.tool in _OPERATION_ALSO.get(str(c.value), ())


def _applies_attribute(c: Constraint, s: ExecutedStep) -> bool:
    field, *values = [str(v) for v in c.value] if isinstance(c.value, list) else [str(c.value)]
    if s.tool in ("filter_values", "filter_where") and s.args.get("field") == field:
        kept = s.args.get("values", [s.args.get("value")])
        return any(str(v).casefold() == str(k).casefold() for v in values for k in kept or [])
    sql = _sql(s)
    return bool(sql) and field.lower() in sql and any(v.lower() in sql for v in values)


def _applies_field(c: Constraint, s: ExecutedStep) -> bool:
    """A field of the data the question names is used by the step: filtered, compared, grouped, summed ..."""
    field = str(c.value).casefold()
    for value in s.args.values():
        said = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and v.casefold() == field for v in said):
            return True
    return field in _sql(s)


def _applies_comparison(c: Constraint, s: ExecutedStep) -> bool:
    if s.tool == "filter_where":
        return _close(s.args.get("value"), float(c.value))  # type: ignore[arg-type]
    if sql := _sql(s):
        return any(_close(n, float(c.value)) for n in re.findall(r"\d+(?:\.\d+)?", sql))  # type: ignore[arg-type]
    return any(_close(s.args.get(k), float(c.value)) for k in ("threshold", "min_value", "max_value", "above", "below"))  # type: ignore[arg-type]


# tools whose result holds one row per input feature (or per zone, per neighbour pair): "each" is applied by them,
# never by a total (measure or count without a field)
PER_FEATURE_TOOLS = frozenset(
    {
        "add_measure", "centroids", "nearest_neighbours", "count_points_in_polygons", "count_in_zones", "buffer",
        "convex_hulls", "reproject", "repair_geometry", "orient_rings", "select_geometry_type", "clip", "zonal_stats",
        "road_reachability",
    }
)  # fmt: skip


def _applies_exclusion(c: Constraint, s: ExecutedStep) -> bool:
    if s.tool == "select_kind" and s.args.get("exclude"):  # "not hospitals": the kind taken out
        specs = feature_class_specs().get(str(s.args.get("feature_class")))
        words = [w for k in s.args.get("kinds", []) if specs and k in specs.kinds for w in specs.kinds[k].words]
        return any(re.search(rf"(?<!\w){re.escape(normalise(w))}(?:e?s)?(?!\w)", str(c.value)) for w in words)
    if s.tool == "filter_values" and (out := s.args.get("taken_out")):  # "excluding mobile homes": those values
        values = [str(v) for v in out]
        return bool(value_matches(str(c.value), values, first_word=True) or structure_values(str(c.value), values)[0])
    said = normalise(str(s.args.get("value", "")))
    return s.tool == "filter_where" and s.args.get("op") == "!=" and bool(said) and said in str(c.value)


def _applies_each(c: Constraint, s: ExecutedStep) -> bool:
    if c.value == "event":  # one figure per disaster: the steps as a whole (check_coverage)
        return False
    # a grouping by a field said after "each" is one row per value ("the area of each camp" by its name)
    return s.tool in PER_FEATURE_TOOLS or bool({"zones", "polygons"} & set(s.inputs)) or bool(s.args.get("by"))


def _applies_rank(c: Constraint, s: ExecutedStep) -> bool:
    """An ordering the steps made: groups or zones listed by their value, the nearest first, or free SQL with ORDER
    BY (no typed tool ranks single features by a measure yet)."""
    if s.tool in ("nearest", "nearest_neighbours") and re.match(r"(?:smallest|shortest|lowest|least)$", str(c.value)):
        return True  # "the shortest distance to a hospital": the nearest one
    if s.args.get("by") or s.tool in ("count_in_zones", "zonal_stats"):
        return True  # "the townships with the most damaged buildings": groups are listed largest first
    return "order by" in _sql(s)


def _applies_place(c: Constraint, s: ExecutedStep) -> bool:
    """A step that took the features at that place (its name among the arguments: get_features_at place=...)."""
    said = normalise(str(c.value))
    return any(said in normalise(str(v)) for v in s.args.values() if isinstance(v, str | list))


def _applies_aoi(c: Constraint, s: ExecutedStep) -> bool:
    return c.value in s.inputs.values()


RULES: dict[str, Callable[[Constraint, ExecutedStep], bool]] = {
    "area_of_interest": _applies_aoi,
    "layer": _applies_layer,
    "event": _applies_event,
    "distance": _applies_distance,
    "k": _applies_k,
    "damage_class": _applies_damage,
    "exclusion": _applies_exclusion,
    "feature_class": _applies_feature_class,
    "group_by": _applies_group,
    "measure": _applies_measure,
    "relation": _applies_relation,
    "operation": _applies_operation,
    "attribute": _applies_attribute,
    "comparison": _applies_comparison,
    "each": _applies_each,
    "place": _applies_place,
    "rank": _applies_rank,
    "field": _applies_field,
    "tag": _applies_tag,
    "reading": lambda c, s: False,  # a part read two ways (or not at all) is applied by no step: the answer says so
}


def check_coverage(constraints: Iterable[Constraint], steps: Iterable[ExecutedStep]) -> list[Constraint]:
    """The constraints with ``applied_by`` filled from the completed steps (new objects)."""
    done = [s for s in steps if s.done and s.tool]
    out = []
    for c in constraints:
        rule = RULES[c.kind]
        hits = [s for s in done if rule(c, s) or tool_covers(s.tool, c.kind, c.value, s.args)]  # the tool's own say
        if c.kind == "each" and c.value == "event":  # one figure per disaster: two disasters' layers loaded or more
            loads = [s for s in done if s.tool == "load_event_layer" and s.args.get("event_id") is not None]
            named = {e.name for s in loads if (e := get_event(int(s.args["event_id"]))) is not None}
            hits = loads if len(named) >= 2 else []
        update = {
            "applied_by": sorted({s.step_id for s in hits if s.upstream is None}),
            "applied_upstream": sorted({s.upstream for s in hits if s.upstream is not None}),
        }
        out.append(c.model_copy(update=update))
    return out


def asks_nearest(facts: PrepassFacts) -> bool:
    """Whether the question asks for the nearest features at all ("3 nearest", "closest", "mas cercanos")."""
    return facts.k is not None or bool(constraint_words()["relations"]["nearest"].search(normalise(facts.question)))


def unasked_limits(constraints: Iterable[Constraint], steps: Iterable[ExecutedStep]) -> list[str]:
    """Steps of the plan that narrow the answer in a way the question did not ask for: keeping only the k
    nearest, only some damage classes, only what lies within a distance. Such a step turns "how many
    schools are in the flood" into "which school is nearest": a wrong number, whatever its provenance."""
    found = list(constraints)
    kinds = {c.kind for c in found}
    relations = {c.value for c in found if c.kind == "relation"}
    out = []
    for s in steps:
        if not s.done or s.upstream is not None:
            continue
        if s.tool == "nearest" and "k" not in kinds and "nearest" not in relations and not _singled_out(found, s):
            out.append(f"step {s.step_id} keeps only the {s.args.get('k', 1)} nearest")
        elif s.tool == "select_damage" and "damage_class" not in kinds:
            chosen = [str(getattr(v, "value", v)) for v in s.args.get("damage_classes", [])]
            if not set(chosen) >= {c.value for c in DamageClass}:  # keeping every class narrows nothing
                out.append(f"step {s.step_id} keeps only damage classes {', '.join(chosen)}")
        elif s.tool in ("within_distance", "buffer") and "distance" not in kinds and "near" not in relations:
            distance = s.args.get("distance_m")
            if isinstance(distance, (int, float)) and distance > 0:
                out.append(f"step {s.step_id} uses a distance of {_metres(distance)}")
    return out


def _singled_out(constraints: Sequence[Constraint], step: ExecutedStep) -> bool:
    """Whether a "nearest" step keeps no fewer features than the values an earlier step kept them by ("Huntington
    Hospital": the one named, its distance): no narrowing."""
    k = step.args.get("k", 1)
    return any(
        c.kind == "attribute"
        and isinstance(c.value, list)
        and isinstance(k, int)
        and k >= len(c.value) - 1
        and any(i < step.step_id for i in c.applied_by)
        for c in constraints
    )


def unapplied(constraints: Iterable[Constraint]) -> list[Constraint]:
    return [c for c in constraints if not c.applied]


def coverage_hint(missing: Iterable[Constraint], limits: Iterable[str] = ()) -> str:
    """The replan hint: what the executed plan left out, and what it added that was not asked."""
    parts = []
    missing = list(missing)
    if missing:
        parts.append("the plan did not apply: " + "; ".join(c.describe() for c in missing))
    limits = list(limits)
    if limits:
        parts.append("the plan narrowed the answer although the question did not ask for it: " + "; ".join(limits))
    return " — ".join(parts)


__all__ = [
    "Constraint",
    "ExecutedStep",
    "check_coverage",
    "coverage_hint",
    "question_constraints",
    "unapplied",
    "unasked_limits",
]
