"""Composable analysis specs, the reader: :func:`spec_from_facts` fills specs (:mod:`.spec_schema`) from the
pre-pass facts and the constraint words, code first; what code cannot decide comes back as
:class:`~.spec_schema.SpecGap` candidates for the model to choose from (a narrowed enum, never free text).
:func:`asks_imagery` tells a question about imagery (a workflow template) from an analysis of layers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from ..agents.transforms import WhereArgs
from ..domain.damage import ANY_DAMAGE, DamageClass, grade_spelling, grades_bounded
from ..domain.events import get_event, load_events, load_gazetteer
from ..domain.feature_classes import WRITTEN_TAG, feature_class_specs, tag_kept
from ..domain.identifiers import identifier_refusal
from ..domain.layer_names import layer_words
from ..domain.value_words import in_data_words
from ..engines.layers import LayerCatalogue, UserField, UserLayer
from ..errors import ToolFailed
from .coverage import (
    Constraint,
    constraint_words,
    disaster_places,
    each_disaster,
    imagery_said,
    named_event_groups,
    question_constraints,
    tags_said,
    type_grouping,
    where_blanked,
    words_pattern,
)
from .facts import PrepassFacts
from .prepass import (
    COMPARISON_WORDS,
    DAMAGE_RE,
    DISTANCE_RE,
    ENTITY_WORDS,
    SMALL_NUMBER_WORDS,
    alternation,
    blank_spans,
    damage_bounds,
    damage_values,
    excluded_in,
    field_mentions,
    normalise,
    user_entries,
    user_layer_hits,
)
from .raster_read import INDEX_PREFIX, index_parts, index_subject, read_terms
from .spec_schema import (
    DAMAGE_CUT_M,
    IMPLIED_INSIDE,
    NEAR_DEFAULT_M,
    AnalysisSpec,
    MeasureKind,
    Relation,
    RelationKind,
    RoadAccess,
    SetRef,
    SpecDraft,
    SpecError,
    SpecGap,
    event_name,
    search_ring_m,
)
from .templates import GROUP_BY_FIELDS
from .values import (
    PEOPLE,
    POPULATION_FIELDS,
    ZONES_BEFORE,
    WhereNotSaid,
    comparisons,
    field_filters,
    field_grouping,
    field_pattern,
    layer_filters,
    position,
    residential_values,
    storey_values,
    structure_values,
    value_after_name,
    value_matches,
    where_said,
    year_comparisons,
)


def _hazard_re() -> re.Pattern[str]:
    return words_pattern("hazard_words")


def asks_imagery(facts: PrepassFacts, layers: LayerCatalogue | None = None) -> bool:
    """Whether the question is about imagery or rasters (satellite scenes, indices, burn severity, before/after
    windows): a workflow template's question, not an analysis of layers. A field of a layer of yours the question
    names ("whose severity is high") is not an imagery word."""
    text = normalise(facts.question)
    if layers is not None and facts.layers:
        text = blank_spans(text, field_mentions(text, user_entries(layers), set(facts.layers)))
    if _road_access_said(text):
        # "can the schools still reach the fire station by road after the flood": the network before and after the
        # cut, not imagery of a time window
        return imagery_said(words_pattern("before_after").sub(" ", text))
    return bool(facts.windows) or imagery_said(text)


def _road_access_said(text: str) -> bool:
    """Whether the (normalised) question asks road access (``relations.road_access`` of the constraint words)."""
    return bool(constraint_words()["relations"]["road_access"].search(text))


def _damage_position(text: str) -> int | None:
    m = DAMAGE_RE.search(text)
    building = position(text, ENTITY_WORDS.get("buildings", ()))
    places = [p for p in (m.start() if m else None, building) if p is not None]
    return min(places, default=None)


_K_NEAR = re.compile(
    r"(?<!\w)(?P<n>\d{1,3}|" + "|".join(SMALL_NUMBER_WORDS) + r")\s+(?:[a-z']+\s+){0,4}?"
    r"(?:nearest|closest|mas\s+cercan|mas\s+proxim|plus\s+proches?|mais\s+proxim)"
)


def _k(facts: PrepassFacts, text: str) -> tuple[int, str | None]:
    """How many nearest: the pre-pass's k, else a number said a few words before "nearest" ("the two schools
    closest", "las dos escuelas mas cercanas"), else one (a plural subject gets three, and says so)."""
    if facts.k is not None:
        return facts.k, None
    if m := _K_NEAR.search(text):
        n = m["n"]
        return (int(n) if n.isdigit() else SMALL_NUMBER_WORDS[n]), None
    said = where_blanked(text, facts)  # "nearest to the Palisades": a name, not a plural
    words = [normalise(w) for c in facts.target_entities for w in ENTITY_WORDS.get(c, ()) if not w.endswith("s")]
    if words:  # the class's own word in the plural ("hospitals", "hospitales"), never its singular
        plural = any(re.search(rf"(?<!\w){re.escape(w)}e?s(?!\w)", said) for w in words)
        singular = any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", said) for w in words)
        return (3, "'the nearest' (plural) taken as the 3 nearest") if plural and not singular else (1, None)
    plural_word = r"(?!(?:this|was|has|does|is|its)\b)\w{3,}s\b"  # "sites nearest", not "which site is nearest"
    if re.search(rf"(?:nearest|closest)\s+(?:\w+\s+){{0,2}}{plural_word}|{plural_word}\s+(?:nearest|closest)\b", said):
        return 3, "'the nearest' (plural) taken as the 3 nearest"
    return 1, None


def _comparison_events(facts: PrepassFacts) -> list[int]:
    """The event of each disaster a comparison names (the latest record of a disaster with snapshots)."""
    groups = named_event_groups(facts.question)
    if len(groups) < 2:
        return []
    dated = {e.id: e.event_date for e in load_events()}
    return [max(ids, key=lambda i: (dated[i], i)) for _, ids in groups]


def spec_from_facts(
    facts: PrepassFacts,
    *,
    aoi_artifact_id: str | None = None,
    layers: LayerCatalogue | None = None,
    event_id: int | None = None,
    aoi_events: Sequence[int] = (),
) -> SpecDraft:
    """The specs code can read from the question, and the choices it leaves to the model (gaps).

    ``event_id`` is the model's choice among the candidates when the question did not resolve one;
    ``aoi_events`` are the disasters whose area the user's AOI overlaps (a question about "my area" that
    names no disaster is about the one there).
    Raises :class:`SpecError` when the question is not an analysis of sets (imagery, indices) or a part
    of it names nothing code or the model could choose from."""
    text = normalise(facts.question)
    constraints = question_constraints(facts, aoi_artifact_id=aoi_artifact_id)
    measures = [str(c.value) for c in constraints if c.kind == "measure"]
    relations = {str(c.value) for c in constraints if c.kind == "relation"}
    implied: list[str] = bound_notes(text)

    # -- which sets the question names, in the order it names them
    named: list[tuple[int, SetRef | None, str]] = []  # (position, set without its event, what)
    for cls in facts.target_entities:
        if cls == "buildings":
            continue
        pos = position(text, ENTITY_WORDS.get(cls, (cls,)))
        named.append((pos if pos is not None else len(text), None, f"features:{cls}"))
    layer_at = {layer_id: span[0] for layer_id, span in reversed(user_layer_hits(text, user_entries(layers)))}
    entries_of = {e.id: e for e in user_entries(layers)}
    for layer_id in facts.layers:
        named.append((layer_at.get(layer_id, len(text)), None, f"layer:{layer_id}"))
    # "the mean dNBR inside the fire mask": an index of your images (or the event's sample raster holding it)
    terms = read_terms(text)
    indexed = index_subject(terms, entries_of, list(facts.layers))
    if indexed is not None:
        if indexed[0].startswith(INDEX_PREFIX):  # the images it is computed from are no other set of the question
            images = {f"layer:{i}" for i in index_parts(indexed[0])[1:] if i}
            named = [n for n in named if n[2] not in images]
        named.insert(0, (-1, None, indexed[0]))  # the values measured: the subject
        implied += indexed[1]
    elif terms.index is not None:
        # "from the dNBR raster": a raster of values of yours holding the index the question names is what is
        # measured, the mask or zones named with it the area (whichever was said first)
        held = [
            f"layer:{i}"
            for i in facts.layers
            if (e := entries_of.get(i)) is not None and e.role == "values" and e.raster_kind == "values"
        ]
        if len(held) == 1 and len([n for n in named if n[2] == held[0]]) == 1:
            named = [(-1, None, held[0])] + [n for n in named if n[2] != held[0]]
    named_raster = any(getattr(entries_of.get(i), "role", None) == "values" for i in facts.layers)
    if not named_raster and (people := PEOPLE.search(text)):  # "how many people live in ...": your population raster
        populations = [e for e in user_entries(layers) if e.role == "values" and _POPULATION_WORDS & set(e.aliases)]
        if len(populations) == 1:
            named.append((people.start(), None, f"layer:{populations[0].id}"))
            implied.append(f"people counted from your raster '{populations[0].name}'")
    # "my buildings with no damage": grades of a layer of yours with a field of grades filter that field
    own_grades = next(
        (
            (layer_id, f.name, grades)
            for layer_id in facts.layers
            if (e := entries_of.get(layer_id)) is not None and e.role != "values"
            for f in e.fields
            if (grades := damage_values(f)) is not None
        ),
        None,
    )
    damage_pos = _damage_position(text) if (facts.damage_classes or "buildings" in facts.target_entities) else None
    if own_grades is not None:
        damage_pos = None
    provisional = facts.event_id or next(iter(_comparison_events(facts)), None) or next(iter(aoi_events), None)
    by_grade = facts.group_by == "damage class" and provisional is not None
    if damage_pos is None and own_grades is None and by_grade and not _no_damage_layer(provisional, layers):
        damage_pos = 0  # "Palisades schools, per damage grade": only the damage inspections have grades
    if damage_pos is not None and not facts.damage_classes and _no_damage_layer(provisional, layers):
        # buildings of a disaster without damage inspections: the buildings themselves (OSM footprints)
        named.append((damage_pos, None, "features:buildings"))
    elif damage_pos is not None:
        named.append((damage_pos, None, "damage"))
    named.sort(key=lambda item: item[0])
    layer_spans = [span for _, span in user_layer_hits(text, user_entries(layers))]
    named = [n for n in named if not (n[2].startswith("features:") and _names_a_layer(text, n[0], layer_spans))]
    road_access = "road_access" in relations
    if road_access:  # "by road": the roads are the network routed on, not a set of features to analyse
        named = [n for n in named if n[2] != "features:roads"]
    hazard_named = bool(_hazard_re().search(text))
    entries = {e.id: e for e in user_entries(layers)}
    # "how many schools were destroyed": a kind of structure of the damage layer, not schools from OSM
    structure_domain = damage_domain(provisional, layers) if damage_pos is not None else None
    asks_relation = bool(relations) or bool(facts.distances_m) or facts.k is not None
    if structure_domain and not asks_relation:
        values = structure_domain[1]
        named = [
            n
            for n in named
            if not (
                n[2].startswith("features:")
                and (
                    value_matches(text, values, ENTITY_WORDS.get(n[2][9:], ())) or class_values(text, values, n[2][9:])
                )
            )
        ]
    zones_what: str | None = None
    for pos, _, what in named[1:]:  # "in each evacuation zone", "per district": polygons to count in
        entry = entries.get(what.partition(":")[2]) if what.startswith("layer:") else None
        if entry is not None and entry.role == "area" and ZONES_BEFORE.search(text[max(0, pos - 24) : pos]):
            zones_what = what
    if zones_what:
        named = [n for n in named if n[2] != zones_what]

    measure = _measure(measures)
    area_layers_only = named and all(
        w.startswith("layer:") and (e := entries.get(w[6:])) is not None and e.role == "area" for _, _, w in named
    )
    if area_layers_only and hazard_named and measure in ("area", "length"):
        # "what area of the flood extent falls within AOI03": the hazard is measured, the named area bounds it
        hazard_at = m.start() if (m := _hazard_re().search(text)) else 0
        named = sorted([*named, (hazard_at, None, "hazard")], key=lambda item: item[0])
    if not named:
        if measure in ("area", "length") or (hazard_named and measure != "count"):
            named.append((0, None, "hazard"))
        else:
            raise SpecError("the question names no set of features to analyse (buildings, a feature class, a layer)")

    # -- the relation
    distances = list(facts.distances_m)
    grid_m = distances.pop(0) if "grid" in relations and distances else None  # "on a 250 m grid": a cell size
    if "grid" in relations and grid_m is None:
        raise SpecError("a grid needs a cell size (e.g. 'on a 250 m grid')")
    distances = [d for d in distances if d != grid_m]  # "... cell edges at multiples of 250 m": the same size
    distance = distances[0] if distances else None
    kind: RelationKind | None = None
    kinds_asked: list[RelationKind] = []
    if facts.k is not None or "nearest" in relations:
        kind = "nearest"
    elif "outside" in relations:
        kind = "beyond" if distance else "outside"
        if kind == "outside" and "inside" in relations:
            kinds_asked = ["inside", "outside"]  # "how many inside, and how many outside": both, one spec each
    elif distance is not None:
        kind = "within"
        if not _relates_a_distance(text):  # "hospitals, 5 km, Eaton": no word says how the distance applies
            implied.append(f"{distance:,.0f} m taken as 'within {distance:,.0f} m'")
    elif "near" in relations:
        kind, distance = "within", NEAR_DEFAULT_M
        implied.append(f"'near' taken as within {NEAR_DEFAULT_M:g} m")
    elif "inside" in relations:
        kind = "inside"

    subject_what = named[0][2]
    others = [what for _, _, what in named[1:]]
    raster = subject_what.startswith(INDEX_PREFIX) or (
        subject_what.startswith("layer:") and getattr(entries.get(subject_what[6:]), "role", None) == "values"
    )
    bounding = _bounding_area(raster, hazard_named, zones_what, kind, others, entries)
    if bounding is not None:  # "people in the flooded zone inside AOI03": the flood, cut to the area
        zones_what, others = bounding, [o for o in others if o != bounding]
        named = [n for n in named if n[2] != bounding]
    if kind is None and len(named) > 1 and named[1][2].startswith("layer:"):
        # "the water points in camp Charlie": in a polygon layer of yours, inside it
        ref_entry = entries.get(named[1][2][6:])
        if ref_entry is not None and ref_entry.role == "area" and _IN_BEFORE.search(text[: named[1][0]]):
            kind = "inside"
    # "people in the flood extent": values inside it ("the burned area" of an index: its values, no hazard layer)
    if raster and kind is None and (others or (hazard_named and indexed is None)):
        kind = "inside"
    reference_what: str | None = None
    targets_what: str | None = None
    if road_access:  # the set reached by road: the one named after the subject and the relation's reference
        rest = others[1:] if kind is not None else others
        targets_what = next((w for w in rest if w.startswith(("features:", "layer:"))), None)
    if kind is not None:
        if others:
            reference_what = others[0]
        elif aoi_artifact_id and not hazard_named:  # "within 3 km of my area": the area is the reference
            reference_what = "aoi" if kind != "inside" else None
            kind = kind if kind != "inside" else None  # "inside my area": the AOI restriction says it
        else:
            reference_what = "hazard" if subject_what != "hazard" else None
    elif subject_what.startswith("features:") and not aoi_artifact_id and not road_access:
        # features of an event with no relation: the ones in the hazard area (say so)
        kind, reference_what = "inside", "hazard"
        implied.append(IMPLIED_INSIDE)
    if kind is not None and reference_what is None:
        if aoi_artifact_id:
            reference_what = "aoi"
        else:
            raise SpecError("the question relates the set to nothing code can find")

    if kind in ("outside", "beyond") and subject_what.startswith("features:") and not aoi_artifact_id:
        ring = search_ring_m(kind, distance)
        around = "the hazard area" if reference_what == "hazard" else str(reference_what).partition(":")[2]
        implied.append(f"looked for up to {ring / 1000:g} km around {around}: features farther away are not counted")
    k, k_note = _k(facts, text) if kind == "nearest" else (1, None)
    if k_note:
        implied.append(k_note)

    # -- the events: a comparison computes the same analysis for each disaster it names
    events: list[int | None] = list(_comparison_events(facts))
    if not events and facts.event_id is None and each_disaster(text):
        events = list(_each_event(facts, layers, subject_what, text))  # "per fire", none named: the fires with data
    chosen = event_id or facts.event_id
    if not events and chosen:
        events = [chosen]
    wants = [subject_what] + ([reference_what] if reference_what else [])
    needs_event = (
        road_access
        or any(w in ("damage", "hazard") for w in wants)
        or (subject_what.startswith("features:") and not aoi_artifact_id)
    )
    # the disasters under the user's area (of those the question's words point to, if any)
    pool = [i for i in facts.event_candidates if i in aoi_events] if facts.event_candidates else list(aoi_events)
    whose = "your area of interest"
    if needs_event and not events and not pool:  # "the flooded zone inside AOI03": the activation the area is of
        pool = [i for i in facts.event_candidates if i in _named_area_events(facts, layers)]
        whose = "the area the question names"
    if needs_event and not events and pool:
        names = {event_name(i) for i in pool}
        if len(names) == 1:  # snapshots of one disaster: the latest
            dated = {e.id: e.event_date for e in load_events()}
            events = [max(pool, key=lambda i: (dated.get(i), i))]
            implied.append(f"the disaster was taken from {whose}: {names.pop()}")
        else:
            gap = SpecGap(field="event_id", candidates=pool[:6], reason="your area lies in several")
            return SpecDraft(gaps=[gap])
    if needs_event and not events:
        if facts.event_candidates:
            gap = SpecGap(field="event_id", candidates=facts.event_candidates[:6], reason="the disaster is not named")
            return SpecDraft(gaps=[gap])
        raise SpecError("the question names no disaster and no area of interest is set")

    threshold = None
    threshold_below: float | None = None
    classification: str | None = None
    if raster and (terms.low is not None or terms.high is not None or terms.per_class) and terms.index is not None:
        # "the area at moderate-low severity or worse", "per USGS severity class": bounds or classes of the values
        # (of an index computed, or of a raster of yours holding it: "from the dNBR raster")
        threshold, threshold_below = terms.low, terms.high
        classification = terms.classification if terms.per_class else None
        measure = measure if measure in ("share", "area") else "area"
        implied += terms.implied
    elif raster:  # a raster of values: "how many people" is a sum, "average elevation" a mean
        if terms.statistic is not None and measure in ("count", "list", "mean"):
            measure = "mean"  # "the median dNBR", "the maximum": a statistic of the values (spec.statistic)
        if measure in ("count", "list"):
            measure = "sum"
        if measure == "share" and (m := _AT_LEAST.search(text)):  # "the share at 0.27 or more"
            threshold = float(m.group("a") or m.group("b"))
            # "the share of the fire mask with a dNBR of at least 0.27": the values are the raster said last
            # before the threshold; the other raster is the area
            rasters = [(pos, w) for pos, _, w in named if _is_raster(w, entries) and pos < m.start()]
            if rasters and rasters[-1][1] != subject_what:
                subject_what, others = rasters[-1][1], [subject_what] + [o for o in others if o != rasters[-1][1]]
                reference_what = others[0] if kind is not None else reference_what
        if measure not in ("sum", "mean") and threshold is None:
            raise SpecError(f"a raster of values answers a sum or a mean inside an area, not a {measure}")
        # no area said: over the whole raster ("the median dNBR of the whole scene"; an area said and not read is
        # a part of the question coverage finds unapplied)
    if measure == "count" and subject_what.startswith(("features:", "layer:")) and not facts.wants_count:
        measure = "list"
    # the layer whose fields the subject has: a layer of yours, or the local layer its features come from
    # (HIFLD hospitals: BEDS, TYPE ...), read like one of yours
    if subject_what.startswith("features:"):
        local = local_entry(subject_what[9:], (events[0] if events else None) or next(iter(aoi_events), None), layers)
        if local is not None:
            entries[subject_what] = local
    subject_entry = entries.get(subject_what[6:] if subject_what.startswith("layer:") else subject_what)
    if measure in ("count", "list") and _said_numeric_fields(subject_entry, text):
        measure = "sum"  # "how many beds", "total beds": the sum of the field the question names, not a count
    field = _numeric_field(measure, subject_entry, text) if measure in ("sum", "mean") and not raster else None
    group_by = facts.group_by
    if subject_what.startswith("layer:") and (entry := entries.get(subject_what[6:])):
        own = field_grouping(text, entry)  # "per status", "grouped by zone": a field of your layer
        if group_by is None or (own and GROUP_BY_FIELDS.get(group_by, group_by) not in {f.name for f in entry.fields}):
            group_by = own or group_by  # "by damage" of a layer with a field damage, not the disasters' damage_class
    if group_by is None and subject_what.startswith("features:") and type_grouping(text):
        keys = feature_class_specs()[subject_what[9:]].keys if subject_what[9:] in feature_class_specs() else ()
        group_by = keys[0] if keys else None  # "which land-use types, how many hectares of each": by landuse
    if group_by is None and subject_what == "damage" and (m := type_grouping(text)):
        group_by = "structure type"  # "break them down", "which kinds were destroyed": the inspected structure's type
        implied.append(f"'{m.group(0)}' taken as by structure type")
    zones = _set_ref(zones_what, None, facts) if zones_what else None
    zone_label = None
    if zones_what and (zone_entry := entries.get(zones_what.partition(":")[2])) is not None:
        zone_label = zone_entry.name_field or next(
            (f.name for f in zone_entry.fields if f.type == "text" and 0 < f.distinct == zone_entry.feature_count), None
        )

    filters: dict[str, list[str]] = {}
    grades_out: dict[str, list[str]] = {}
    # what the question takes out ("excluding pharmacies") is no value or kind to keep (coverage says it is not applied)
    excluded = excluded_in(text)
    kept = blank_spans(text, [e.span() for e in excluded])
    taken_out = " ".join(text[e.start : e.end] for e in excluded)  # "excluding pharmacies", "not hospitals"
    # a word of a feature class the question relates to ("800 m from a school") filters nothing
    class_words_named = [
        w for _, _, what in named if what.startswith("features:") for w in ENTITY_WORDS.get(what[9:], ())
    ]

    def filters_part(found: dict[str, list[str]]) -> bool:
        """ "what share of the destroyed structures were commercial": the kept values narrow the part, the damage is
        the base: the one a word of the base opens ("of the destroyed", "among single-storey homes", "entre las
        viviendas"), else the damage said before the kept values."""
        said = DAMAGE_RE.search(kept)
        value_at = position(kept, [layer_words(v)[0] for values in found.values() for v in values])
        if measure != "share" or said is None or value_at is None:
            return False
        kinds_base = _BASE_BEFORE.search(kept[max(0, value_at - 40) : value_at])
        damage_base = _BASE_BEFORE.search(kept[max(0, said.start() - 40) : said.start()])
        if bool(kinds_base) != bool(damage_base):
            return bool(damage_base)
        return said.start() < value_at

    def damage_filters(event: int | None) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """The structure types the question names, as the event's own damage layer spells them (each disaster of a
        comparison has its own list: Palisades has triple-wide mobile homes, Eaton none), less those it takes out
        (all the others when it names none: "destroyed buildings, excluding mobile homes"); and those taken out."""
        domain = damage_domain(event, layers)
        if domain is None:
            return {}, {}
        out: list[str] = []
        readings: list[str] = []
        # the types said in the question's language read as the data spell them ("unifamiliares": single family)
        kept_said, out_said = in_data_words(kept), in_data_words(taken_out)
        if taken_out:  # "excluding mobile homes", "not counting garages" (Utility Misc Structure)
            out = value_matches(out_said, domain[1], exclude=class_words_named, first_word=True)
            named_out, readings = structure_values(out_said, domain[1])
            out += [v for v in named_out or [] if v not in out]
        named, readings_kept = structure_values(kept_said, domain[1])
        readings += readings_kept
        storeys, storey_said = storey_values(kept_said, domain[1])
        matched = value_matches(kept_said, domain[1], exclude=class_words_named, first_word=True)
        matched += [  # "escuelas destruidas": School (a class the question relates to, "near a school", is none)
            v
            for cls, spec in feature_class_specs().items()
            if not set(spec.words) & set(class_words_named)
            for v in class_values(kept, domain[1], cls)
            if v not in matched
        ]
        if matched:
            keep = matched + [v for v in named or [] if v not in matched]
        elif named is not None:  # "apartments", "garages": the types the data spells otherwise (said how)
            keep = named
        elif homes := residential_values(kept, domain[1]):  # "how many homes burned"
            keep = homes
        else:
            keep = list(domain[1]) if out or storeys is not None else []
        if storeys is not None:  # "two-story houses": of those, the ones of that many storeys
            keep = [v for v in keep if v in storeys]
            readings.append(str(storey_said))
        keep = [v for v in keep if v not in out]
        for note in readings:
            if note not in implied:
                implied.append(note)
        if not keep and (named is not None or storeys is not None):
            raise SpecError(f"the {domain[0]} field of the damage layer has no such structure type")
        return ({domain[0]: keep} if keep else {}), ({domain[0]: out} if out else {})

    if subject_what == "damage" and events:
        filters = damage_filters(events[0])[0]
    elif subject_what.startswith("layer:") and (entry := entries.get(subject_what[6:])) is not None:
        filters = layer_filters(kept, entry, names=False)
        if own_grades is not None and own_grades[0] == entry.id and facts.damage_classes:
            _, field, grades = own_grades
            graded = [v for c in facts.damage_classes for v in grades.get(c, [])]
            if not graded:
                said = ", ".join(c.value for c in facts.damage_classes)
                raise SpecError(f"{entry.title} has no {said} in its field {field} ({', '.join(map(str, grades))})")
            filters[field] = graded
            grades_out = {field: [v for vs in grades.values() for v in vs if v not in graded]}  # the rest, said
    # "water points holding more than 5000 litres": a condition on the field of the subject or the reference it names
    wheres = {what: _where_of(text, entries.get(what[6:])) for _, _, what in named if what.startswith("layer:")}
    if subject_what.startswith("features:"):  # "hospitals with 100 beds or more": a field of their local layer
        wheres[subject_what] = _where_of(text, entries.get(subject_what))

    kinds: list[str] = []
    kinds_out: list[str] = []
    if subject_what.startswith("features:"):
        where = (events[0] if events else None) or next(iter(aoi_events), None)
        kinds = _kinds(kept, subject_what[9:], where, layers)
        if taken_out:
            kinds_out = [k for k in _kinds(taken_out, subject_what[9:], None, layers) if k not in kinds]
        # the values of the local layer the features come from, as its data spells them ("general acute care
        # hospitals": TYPE; "excluding psychiatric": every TYPE but PSYCHIATRIC; "with a helipad": HELIPAD Y)
        if fields := local_fields(subject_what[9:], where, layers):
            filters = field_filters(where_blanked(kept, facts), fields)
            out = field_filters(where_blanked(taken_out, facts), fields) if taken_out else {}
            for field, values in out.items():
                if field not in filters:
                    domain = next(f.values or [] for f in fields if f.name == field)
                    filters[field] = [str(v) for v in domain if str(v) not in values]
            grades_out = out
        for field, value in written_tags(kept, subject_what[9:], where, layers, fields):
            filters.setdefault(field, [value])  # "highway=trunk", "HELIPAD = Y": a tag or a field written out

    if facts.group_by == "damage class" and {DamageClass.none, DamageClass.destroyed} <= set(facts.damage_classes):
        # "split by damage class, from no damage to destroyed": every class; "affected, minor or major, one figure
        # per grade": those grades, each
        facts = facts.model_copy(update={"damage_classes": []})

    specs: list[AnalysisSpec] = []
    relation_kinds: list[RelationKind | None] = list(kinds_asked) or [kind]
    for ev, how in [(e, k) for e in events or [None] for k in relation_kinds]:
        own_filters = damage_filters(ev) if subject_what == "damage" and ev is not None else (filters, grades_out)
        subject = _set_ref(subject_what, ev, facts).model_copy(
            update={
                "filters": (found := own_filters[0]),
                "filters_part": subject_what == "damage" and bool(facts.damage_classes) and filters_part(found),
                "filters_out": own_filters[1],
                "kinds": kinds,
                "kind_words": kind_words_said(text, subject_what[9:], kinds)
                if subject_what.startswith("features:")
                else [],
                "kinds_out": kinds_out,
                "place": _named_place(facts, ev, subject_what, aoi_artifact_id),
                "raster": raster,
                "where": wheres.get(subject_what),
            }
        )
        access = _road_access(text, ev, reference_what, targets_what, facts, layers, aoi_artifact_id, implied)
        relation = None
        if how is not None and reference_what is not None:
            reference = _set_ref(reference_what, ev, facts, as_reference=True)
            if reference.kind == "layer" and (ref_entry := entries.get(str(reference.layer_id))) is not None:
                # "inside camp Bravo", "within 1 km of the open shelters": the reference's own values
                ref_filters = {k: v for k, v in layer_filters(text, ref_entry, names=True).items() if k not in filters}
                reference = reference.model_copy(update={"filters": ref_filters})
                if wheres.get(subject_what) is None:
                    reference = reference.model_copy(update={"where": wheres.get(reference_what)})
            if reference.kind == "layer" and getattr(entries.get(str(reference.layer_id)), "role", None) == "values":
                reference = reference.model_copy(update={"raster": True})  # a mask raster: its polygons
            if reference.kind == "features" and _hit_by_hazard(text, reference.feature_class or ""):
                reference = reference.model_copy(update={"in_hazard": True})
            if reference.kind == "features" and reference.feature_class != subject.feature_class:
                # "within 2 km of the Catarroja fire station": the reference's own kind and place
                reference = reference.model_copy(
                    update={
                        "kinds": _kinds(text, reference.feature_class or "", ev, layers),
                        "place": _named_place(facts, ev, reference_what, aoi_artifact_id),
                    }
                )
            relation = Relation(
                kind=how,
                reference=reference,
                distance_m=distance if how in ("within", "beyond") else None,
                k=k if how == "nearest" else None,
                outside_only=how == "nearest" and "outside" in relations,
            )
        try:
            spec = AnalysisSpec(
                subject=subject,
                relation=relation,
                measure=measure,
                weight=share_weight(text) if measure == "share" and subject.kind in ("features", "layer") else "count",
                field=field,
                group_by=group_by,
                zones=zones,
                zone_label=zone_label,
                grid_m=grid_m,
                threshold=threshold,
                threshold_below=threshold_below,
                classification=classification,
                statistic=terms.statistic if raster and measure == "mean" else None,
                aoi_artifact_id=aoi_artifact_id,
                implied=implied,
                access=access,
            )
        except ValueError as exc:
            raise SpecError(str(exc)) from exc
        _check_layers(spec, layers)
        specs.append(spec)
    return SpecDraft(specs=specs, difference="difference" in measures and len(specs) == 2)


def _road_access(
    text: str,
    event_id: int | None,
    reference_what: str | None,
    targets_what: str | None,
    facts: PrepassFacts,
    layers: LayerCatalogue | None,
    aoi: str | None,
    implied: list[str],
) -> RoadAccess | None:
    """What road access the question asks (``relations.road_access`` said): the targets reached and what cuts the
    roads: the damaged buildings when the question relates the subject to the damage ("within 1 km of the fire
    damage") or the event has no hazard layer, else the event's hazard area."""
    if not _road_access_said(text):
        return None
    if event_id is None:
        raise SpecError("road access needs a hazard that cuts the roads: name the disaster")
    targets = None
    if targets_what is not None:
        targets = _set_ref(targets_what, event_id, facts, as_reference=True)
        if targets.kind == "features":
            cls = str(targets.feature_class)
            place = _named_place(facts, event_id, targets_what, aoi)
            targets = targets.model_copy(update={"kinds": _kinds(text, cls, event_id, layers), "place": place})
    no_hazard = layers is not None and not layers.find(event_id=event_id, role="hazard")
    if reference_what == "damage" or no_hazard:
        note = f"roads within {DAMAGE_CUT_M:g} m of a damaged building taken as blocked (debris, closures)"
        if note not in implied:
            implied.append(note)
        damaged = SetRef(kind="damage", event_id=event_id, damage_classes=list(facts.damage_classes or ANY_DAMAGE))
        return RoadAccess(hazard=damaged, targets=targets, cut_buffer_m=DAMAGE_CUT_M)
    return RoadAccess(hazard=SetRef(kind="hazard", event_id=event_id), targets=targets)


_IN_BEFORE = re.compile(
    r"(?<!\w)(?:in|en|dans|em|no|na|nos|nas)\s+(?:(?:the|my|our|el|la|los|las|le|les|o|a|os|as)\s+)?$"
)


_LAYER_NOUN = re.compile(r"(?<!\w)(?:layer|capa|camada|couche|file|archivo|fichier|arquivo)(?!\w)")


def _names_a_layer(text: str, at: int, layer_spans: Sequence[tuple[int, int]]) -> bool:
    """Whether a class word at ``at`` is the noun of a layer mention right after it ('clinicas da camada "field
    clinics"', 'clinics in my "field clinics" layer'): the layer's features, not the class."""
    return any(0 < start - at <= 40 and bool(_LAYER_NOUN.search(text[at : end + 12])) for start, end in layer_spans)


def _said_numeric_fields(entry: UserLayer | None, text: str) -> list[str]:
    if entry is None:
        return []
    numeric = [f for f in entry.fields if f.type in ("integer", "real")]
    # a field named with its value ("idsubclase 14") is a filter, not a measure
    said = [f.name for f in numeric if field_pattern(f).search(text) and value_after_name(text, f) is None]
    if not said and PEOPLE.search(text):  # "how many people live in ...": a population field
        said = [f.name for f in numeric if set(layer_words(f.name)) & POPULATION_FIELDS]
    condition = _where_of(text, entry)  # "with a capacity over 5000": a condition on the field, not its sum
    return [name for name in said if condition is None or name != condition.field]


def _bounding_area(
    raster: bool,
    hazard_named: bool,
    zones_what: str | None,
    kind: RelationKind | None,
    others: list[str],
    entries: dict[str, UserLayer],
) -> str | None:
    """The polygon layer that bounds a raster's statistic over the hazard the question also names ("people in the
    flooded zone inside AOI03": the flood, within AOI03), taken as the zones cut to the hazard; None otherwise."""
    if not raster or not hazard_named or zones_what is not None or kind not in (None, "inside", "within"):
        return None
    areas = [w for w in others if w.startswith("layer:") and getattr(entries.get(w[6:]), "role", None) == "area"]
    return areas[0] if len(areas) == 1 and len(others) == 1 else None


def _named_area_events(facts: PrepassFacts, layers: LayerCatalogue | None) -> list[int]:
    """The disasters of the catalogue's named areas the question names (AOI03: the Valencia DANA activation)."""
    if layers is None:
        return []
    return [e for a in layers.spec.named_areas if f"area:{a.id}" in facts.layers for e in a.events]


def _is_raster(what: str, entries: dict[str, UserLayer]) -> bool:
    if what.startswith(INDEX_PREFIX):
        return True
    return what.startswith("layer:") and getattr(entries.get(what[6:]), "role", None) == "values"


# "at least 0.27", "0.27 or more", ">= 0.27", "above 2 m": the threshold of a raster's share
_AT_LEAST = re.compile(
    r"(?:at\s+least|>=|≥|above|over|greater\s+than|more\s+than|exceeding|al\s+menos|au\s+moins|pelo\s+menos)"
    r"\s*(?P<a>-?\d+(?:\.\d+)?)|(?P<b>-?\d+(?:\.\d+)?)\s*(?:or\s+(?:more|higher|above)|o\s+mas|ou\s+plus|ou\s+mais)"
)
# words in the name of a population raster (WorldPop, GHS-POP, LandScan ...)
_POPULATION_WORDS = POPULATION_FIELDS | {"worldpop", "ghs pop", "landscan", "populacao", "personas", "pessoas"}


def _numeric_field(measure: str, entry: UserLayer | None, text: str) -> str:
    """The numeric field a sum or mean is of: one of the subject layer's numeric fields the question names
    ("beds", "population"), or its only numeric field (an assumption the answer states)."""
    if entry is None:
        raise SpecError(f"the {measure} of a field needs a layer with that field")
    ids = {f.name for f in entry.fields if f.identifier and f.type in ("integer", "real")}  # keys, row numbers
    numeric = [f.name for f in entry.fields if f.type in ("integer", "real") and f.name not in ids]
    said = _said_numeric_fields(entry, text)
    if said and set(said) <= ids:
        raise SpecError(identifier_refusal(said[0], measure))
    said = [name for name in said if name not in ids]
    if len(said) == 1:
        return said[0]
    if not said and len(numeric) == 1:
        return numeric[0]
    raise SpecError(
        f"which field of {entry.title} to take the {measure} of: "
        + (
            ", ".join(said or numeric)
            if numeric
            else "it has no numeric field but identifiers (" + ", ".join(sorted(ids)) + "), whose "
            f"{measure} measures nothing"
            if ids
            else "it has no numeric field"
        )
    )


def _where_of(text: str, entry: UserLayer | None) -> WhereArgs | None:
    """The number comparison the question makes on a field of ``entry`` ("with more than 5000 inhabitants"), or
    None (no comparison, or a field of another layer: coverage reports a comparison no step applied)."""
    if entry is None or entry.role == "values" or not (comparisons(text) or year_comparisons(text)):
        return None
    try:
        return WhereArgs.model_validate(where_said(text, entry))
    except WhereNotSaid:
        return None


def class_values(text: str, values: Sequence[str], feature_class: str) -> list[str]:
    """The structure types that are the feature class's own word ("School" of education), when the question names
    the class in any of its languages ("escuelas", "centros escolares", "écoles"): the data spells the type in
    English, the class's words say it in four languages (one vocabulary, osm_classes.json)."""
    spec = feature_class_specs().get(feature_class)
    if spec is None or position(text, spec.words) is None:
        return []
    words = {normalise(w).strip() for w in spec.words}
    return [v for v in values if normalise(str(v)).strip() in words]


def kind_words_said(text: str, feature_class: str, kinds: Sequence[str]) -> list[str]:
    """The words of ``kinds`` of ``feature_class`` the (normalised) question names them by ("consultorios": the
    word consultorio of the kind clinic), each as the class file spells it."""
    spec = feature_class_specs().get(feature_class)
    if spec is None:
        return []
    return [w for k in kinds if k in spec.kinds for w in spec.kinds[k].words if position(text, [w]) is not None]


def kinds_said(text: str, feature_class: str) -> list[str]:
    """Every kind of ``feature_class`` the (normalised) question says anything of: by its words, a tag it holds
    written out, or a qualifier ("open to vehicles"). A kind said nowhere is no kind a reading may narrow to."""
    spec = feature_class_specs().get(feature_class)
    if spec is None:
        return []
    tags = tags_said(text)
    return [
        kind
        for kind, k in spec.kinds.items()
        if position(text, k.words) is not None
        or any(v in k.tags.get(key, ()) for key, v in tags)
        or (k.qualifiers and position(text, k.qualifiers) is not None)
    ]


def _kinds(text: str, feature_class: str, event_id: int | None, layers: LayerCatalogue | None) -> list[str]:
    """The narrower kinds of ``feature_class`` the question names ("hospitals" of healthcare), unless every
    local source of the class for the event is of those kinds already (HIFLD hospitals: no step needed)."""
    spec = feature_class_specs().get(feature_class)
    if spec is None:
        return []
    # an OSM tag written out ("highway=track") names the kinds whose tags hold it, whatever the words around it
    tags = tags_said(text)
    # (exactly that tag: "highway=trunk" is not the kind trunk, which holds trunk_link too; a filter says it)
    tagged = [kind for kind, k in spec.kinds.items() if any(tuple(k.tags.get(key, ())) == (v,) for key, v in tags)]
    text = WRITTEN_TAG.sub(" ", text) if tagged else text
    named = [kind for kind, k in spec.kinds.items() if position(text, k.words) is not None or kind in tagged]
    rest = text  # the question without the kinds' own words ("power" of "power poles" asks for no class)
    for k in spec.kinds.values():
        for word in sorted(k.words, key=len, reverse=True):
            rest = re.sub(rf"(?<!\w){re.escape(normalise(word))}(?:e?s)?(?!\w)", " ", rest)
    generic = [w for w in spec.words if not any(w in k.words for k in spec.kinds.values())]
    # "bridges open to vehicles", "puentes abiertos al tráfico rodado": a qualifier of the class names the kind
    qualified = [kind for kind, k in spec.kinds.items() if k.qualifiers and position(text, k.qualifiers) is not None]
    if not named or position(rest, generic) is not None:  # "health facilities, hospitals included": the class
        named = tagged  # a tag written out ("roads tagged highway=trunk") names its kinds whatever is said around it
    return kinds_needed(feature_class, list(dict.fromkeys(named + qualified)), event_id, layers)


def kinds_needed(
    feature_class: str, named: list[str], event_id: int | None, layers: LayerCatalogue | None
) -> list[str]:
    """``named`` kinds of ``feature_class``, or none when they keep every feature: every local source of the class
    for the event is of those kinds already (HIFLD hospitals: no step needed)."""
    if not named or feature_class not in feature_class_specs():
        return []
    if layers is not None and event_id is not None:
        sources = layers.find(event_id=event_id, role="poi", feature_class=feature_class)
        if sources and all(layer.kinds and set(layer.kinds) <= set(named) for layer in sources):
            return []
    return named


# words that say how a distance applies: "within 5 km", "5 km from", "a 2 km radius", "a menos de 1 km"
_DISTANCE_SAID = re.compile(
    rf"(?:within|inside\s+of|up\s+to|{alternation([*COMPARISON_WORDS['<'], *COMPARISON_WORDS['<=']])}"
    r"|dentro\s+de|hasta|jusqu\W?a|ate|a)\s+(?:\S+\s+){0,2}$"
    r"|^\s*(?:\S+\s+){0,2}?(?:of|from|around|away|radius|buffer|distance|de|del|da|do|du|des|autour|alrededor"
    r"|em\s+torno|ao\s+redor|desde|depuis|a\s+partir)\b"
)


def _relates_a_distance(text: str) -> bool:
    """Whether a word next to a distance of the question says how it applies (not a bare "5 km")."""
    for m in DISTANCE_RE.finditer(text):
        if _DISTANCE_SAID.search(text[max(0, m.start() - 40) : m.start()]) or _DISTANCE_SAID.match(text[m.end() :]):
            return True
    return False


_HIT = (
    r"(?:flooded|inundated|submerged|burn(?:ed|t)|inundad[oa]s?|anegad[oa]s?|quemad[oa]s?|inonde(?:e|s|es)?"
    r"|brule(?:e|s|es)?|alagad[oa]s?|queimad[oa]s?)"
)


def _hit_by_hazard(text: str, feature_class: str) -> bool:
    """Whether the question qualifies the class's features as hit by the hazard: "a flooded building",
    "buildings that were flooded", "edificios inundados"."""
    words = sorted(ENTITY_WORDS.get(feature_class, ()), key=len, reverse=True)
    if not words:
        return False
    noun = r"(?:" + "|".join(re.escape(normalise(w)) for w in words) + r")(?:e?s)?"
    before = rf"{_HIT}\s+(?:[a-z]+\s+)?{noun}(?!\w)"
    after = rf"(?<!\w){noun}\s+(?:(?:that|which)\s+(?:were|was|are|got)\s+|que\s+(?:fueron|foram|ont\s+ete)\s+)?{_HIT}"
    return bool(re.search(before, text) or re.search(after, text))


def event_data_values(facts: PrepassFacts, layers: LayerCatalogue) -> list[Constraint]:
    """The values of the disaster's damage layer the question names in full, as the data spell them ("'Drawn|Azure
    Maps Satellite'" of the Lahaina labels' source, "class Background"): names that exist in the data, a closed
    class. A value of another field must be kept by a step that filters on it; a value of the damage field that
    the layer's scale does not grade (Background: not a structure, left out when loaded) cannot be, and is said.
    The grades and the structure types have constraints of their own."""
    if facts.event_id is None:
        return []
    text = normalise(facts.question)
    found: list[Constraint] = []
    for entry in layers.find(event_id=facts.event_id, role="damage"):
        if entry.path is None or entry.damage is None:
            continue
        scale = layers.damage_scales[entry.damage.scale].values
        for field in layers.columns(entry.id):
            if field == entry.damage.structure_field:
                continue
            for value in layers.value_domain(entry.id, field):
                if len(value) < 4 or position(text, [value]) is None:
                    continue
                if field == entry.damage.field and str(scale.get(value, "")) in (*DamageClass.__members__, "damaged"):
                    continue  # a grade, or damage of no grade: the damage classes' constraint
                found.append(Constraint(kind="attribute", value=[field, value], phrase=value))
    return found


def _each_event(facts: PrepassFacts, layers: LayerCatalogue | None, subject_what: str, text: str) -> list[int]:
    """The disasters a question asking one figure per disaster ("per fire") means when it names none: of the
    disasters its words point to, those whose data hold its subject (damage inspections, with the structure types it
    names, if it names any; a hazard area), one per layer (the latest record of a disaster with snapshots). Fewer
    than two: none."""
    if layers is None or subject_what not in ("damage", "hazard"):
        return []
    dated = {e.id: e.event_date for e in load_events()}
    by_layer: dict[str, int] = {}
    kinds_named: dict[str, bool] = {}
    for i in facts.event_candidates:
        found = layers.find(event_id=i, role=subject_what)
        if not found:
            continue
        layer = found[0].id
        if subject_what == "damage":
            domain = damage_domain(i, layers)
            values = domain[1] if domain else []
            named, _ = structure_values(text, values)
            kinds_named[layer] = bool(named or value_matches(text, values, first_word=True))
        if layer not in by_layer or (dated[i], i) > (dated[by_layer[layer]], by_layer[layer]):
            by_layer[layer] = i
    if any(kinds_named.values()):  # structure types named: the disasters whose data have them
        by_layer = {layer: i for layer, i in by_layer.items() if kinds_named.get(layer)}
    return list(by_layer.values()) if len(by_layer) >= 2 else []


#: the words that open a share's base, right before it ("of the destroyed", "among the single-storey homes", "entre
#: las viviendas", "parmi les maisons", "dentre as casas"): a closed class of prepositions
_BASE_BEFORE = re.compile(
    r"(?<!\w)(?:of|among|amongst|entre|parmi|dentre|d'entre|de|del|des|du|dos|das|da|do)\s+"
    r"(?:(?:the|all|los|las|les|os|as|todos|todas|tous|toutes|ces|those|these)\s+)*(?:[\w-]+\s+)?$"
)


def written_tags(
    text: str, feature_class: str, event_id: int | None, layers: LayerCatalogue | None, fields: Sequence[UserField]
) -> list[tuple[str, str]]:
    """The tags or fields written out as key=value ("highway=trunk", "helipad=y") that no kind of ``feature_class``
    holds, and whose key is a column of the layers its features come from (the OpenStreetMap extract's, ``fields``
    of a local layer): (column, value as the data spell it). Names that exist in the data, a closed class."""
    spec = feature_class_specs().get(feature_class)
    said = tags_said(text)
    if not said or layers is None:
        return []
    columns: dict[str, str] = {f.name.lower(): f.name for f in fields}
    for entry in layers.find(event_id=event_id, role="osm") if event_id is not None else []:
        columns |= {c.lower(): c for c in layers.columns(entry.id)}
    out = []
    for key, value in said:
        if spec is not None and any(tuple(k.tags.get(key, ())) == (value,) for k in spec.kinds.values()):
            continue  # a kind of the class that is exactly that tag: its kinds say it
        if (column := columns.get(key)) is None:
            continue
        admitted = [sel[key] for sel in spec.selectors if key in sel] if spec is not None else []
        if admitted and not any(tag_kept(value, a) for a in admitted):  # (landuse=railway: any landuse value)
            continue  # the class holds no such features ("highway=crossing" points are no roads): said, not applied
        domain = next((f.values or [] for f in fields if f.name == column), [])
        # the value as the data spells it, in as many words as the text after "key =" holds ("TYPE = GENERAL
        # ACUTE CARE": GENERAL ACUTE CARE, not GENERAL); a closed class: the column's values
        after = [text[m.end() :] for m in re.finditer(rf"(?<![\w=]){re.escape(key)}\s?=\s?", text)]
        written = [
            str(v) for v in domain if any(re.match(rf"{re.escape(str(v).lower())}(?!\w)", rest) for rest in after)
        ]
        spelled = max(written, key=len) if written else value
        out.append((column, spelled))
    return out


def share_weight(text: str) -> Literal["count", "area", "length"]:
    """What a share of features is of, as the (normalised) question says it: their area ("what fraction of the
    footprint area", "la part de la surface"), their length ("what share of the street length", "how many km ...
    and what share is that"), else their number. A distance said with a number ("within 5 km") weighs nothing."""
    said = blank_spans(text, [m.span() for m in DISTANCE_RE.finditer(text)])
    weights = constraint_words()["share_weight"]
    found = [(m.start(), name) for name, pattern in weights.items() if (m := pattern.search(said))]
    if len(found) != 1:  # neither, or both ("the area of the streets ... km"): the number
        return "count"
    return found[0][1]  # type: ignore[return-value]


def bound_notes(text: str) -> list[str]:
    """How each share damaged the (normalised) question compares was read: the grades wholly in it, as the damage
    data spell them, and those straddling it (left out)."""
    notes = []
    for (start, end), op, percent in damage_bounds(text):
        kept, straddling = grades_bounded(op, percent)
        note = f"'{text[start:end].strip()}' taken as the grades " + ", ".join(grade_spelling(c) for c in kept)
        if straddling:
            note += " (" + ", ".join(grade_spelling(c) for c in straddling) + " straddles it: left out)"
        notes.append(note)
    return notes


def _named_place(facts: PrepassFacts, event_id: int | None, subject_what: str, aoi: str | None) -> str | None:
    """A place the question names for features (a town inside a disaster's area: "Catarroja's buildings"), not
    the disaster's own place; the user's area of interest wins over it."""
    if aoi or not subject_what.startswith("features:"):
        return None
    own = disaster_places(get_event(event_id) if event_id else None, facts.places)
    elsewhere = {normalise(p) for p in places_elsewhere(facts, event_id)}
    return next((p for p in facts.places if normalise(p) not in own | elsewhere), None)


def places_elsewhere(facts: PrepassFacts, event_id: int | None) -> dict[str, str]:
    """The places the question names that are another disaster's own place, and that disaster: offline such a
    place is known only as that disaster's area ("Los Angeles": the Palisades fire's), so features of this disaster
    are not taken from there (the answer says the place was not applied)."""
    event = get_event(event_id) if event_id else None
    if event is None:
        return {}
    others = {normalise(e.place): e.name for e in load_events() if e.name != event.name}
    own = normalise(event.place)
    return {p: others[normalise(p)] for p in facts.places if normalise(p) in others and normalise(p) != own}


def _no_damage_layer(event_id: int | None, layers: LayerCatalogue | None) -> bool:
    return event_id is not None and layers is not None and not layers.find(event_id=event_id, role="damage")


def local_fields(feature_class: str, event_id: int | None, layers: LayerCatalogue | None) -> list[UserField]:
    """The fields of the local layers a feature class comes from for this disaster (HIFLD hospitals' TYPE, BEDS,
    HELIPAD ...) a question may name: not their name field, single values, nor fields whose values are all places of
    the gazetteer (a county says where, never which); an identifier only when its values are few (a code of
    classes, "idsubclase 14", is filtered on; a key is never summed either way)."""
    if event_id is None or layers is None:
        return []
    places = set(load_gazetteer())
    out: list[UserField] = []
    for layer in layers.find(role="poi", feature_class=feature_class, event_id=event_id):
        try:
            fields = layers.field_profile(layer.id)
        except ToolFailed:  # the layer's file is missing: the step that reads it says so
            continue
        out += [
            f
            for f in fields
            if f.name not in (layer.name_field, "feature_class")
            and (not f.identifier or f.values)
            and f.distinct >= 2
            and not (f.values and all(str(v).lower() in places for v in f.values))
        ]
    return out


def local_entry(feature_class: str, event_id: int | None, layers: LayerCatalogue | None) -> UserLayer | None:
    """The local layer a feature class's features come from for this disaster, described like a layer of yours
    (its fields that a question may name: :func:`local_fields`), so its fields are read the same way ("how many
    beds": the sum of BEDS; "with 100 beds or more": a condition on BEDS). None without one."""
    if event_id is None or layers is None:
        return None
    found = layers.find(role="poi", feature_class=feature_class, event_id=event_id)
    fields = local_fields(feature_class, event_id, layers)
    if not found or not fields:
        return None
    layer = found[0]
    return UserLayer(
        id=f"local:{layer.id}",
        name=layer.title,
        path=str(layer.path),
        role="features",
        geometry="point",
        crs="EPSG:4326",
        feature_count=0,
        fields=fields,
        name_field=layer.name_field,
    )


def damage_domain(event_id: int | None, layers: LayerCatalogue | None) -> tuple[str, list[str]] | None:
    """The structure-type field of the event's damage layer and its values (None without one)."""
    if event_id is None or layers is None:
        return None
    found = layers.find(event_id=event_id, role="damage")
    field = found[0].damage.structure_field if found and found[0].damage else None
    if not field:
        return None
    values = layers.value_domain(found[0].id, field)
    return (field, values) if values else None


def _set_ref(what: str, event_id: int | None, facts: PrepassFacts, *, as_reference: bool = False) -> SetRef:
    try:
        if what == "damage":
            classes = list(facts.damage_classes)
            if as_reference and not classes:
                classes = list(ANY_DAMAGE)
            return SetRef(kind="damage", event_id=event_id, damage_classes=classes)
        if what == "hazard":
            return SetRef(kind="hazard", event_id=event_id)
        if what == "aoi":
            return SetRef(kind="aoi")
        if what.startswith(INDEX_PREFIX):  # an index computed from images: a raster set of the post image
            index, post, pre = index_parts(what)
            return SetRef(kind="layer", layer_id=post, raster=True, index=index, pre_layer_id=pre)
        kind, _, name = what.partition(":")
        if kind == "features":
            return SetRef(kind="features", feature_class=name, event_id=event_id)
        return SetRef(kind="layer", layer_id=name, event_id=event_id)
    except ValueError as exc:
        raise SpecError(str(exc)) from exc


def _check_layers(spec: AnalysisSpec, layers: LayerCatalogue | None) -> None:
    """An event set needs its layer in the catalogue: say which is missing instead of planning a failure."""
    if layers is None:
        return
    sets = [spec.subject] + ([spec.relation.reference] if spec.relation else [])
    for s in sets:
        if (
            s.kind in ("damage", "hazard")
            and s.event_id is not None
            and not layers.find(event_id=s.event_id, role=s.kind)
        ):
            what = "building-damage" if s.kind == "damage" else "hazard-area"
            raise SpecError(f"no {what} layer is available for {event_name(s.event_id)}")


def _measure(measures: list[str]) -> MeasureKind:
    for m in ("share", "area", "length", "mean", "sum"):
        if m in measures:
            return m  # type: ignore[return-value]
    return "count"


__all__ = ["asks_imagery", "damage_domain", "kinds_needed", "spec_from_facts"]
