"""Features a question names by their name in the data ("Huntington Hospital", "Hospital La Fe", "Avinguda del
Sud"): a closed class, read by code from the name fields of the disaster's local layers, never from a word list.

A name is said when the question holds it whole (two words or more: "Blat Market"), or a run of two of its words
or more that holds one the layer's other names rarely use ("Hospital La Fe" of "HOSPITAL UNIVERSITARI I
POLITÈCNIC LA FE (NUEVO HOSPITAL LA FE)": "fe"; not "Hospital of" nor "del Sud" alone). The disasters' and places'
names are blanked first: they say where, never which feature. A named feature narrows the set of its class in the
spec (a filter on the layer's name field); a plan that does not narrow to it leaves the answer partial (the
constraint), so a question about one hospital never gets the figure of another.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..domain.feature_classes import classes_of_tags
from ..engines.layers import LayerCatalogue
from .asks import question_asks
from .coverage import Constraint, where_blanked
from .facts import PrepassFacts
from .prepass import normalise
from .spec_schema import IMPLIED_DISTANCE, IMPLIED_INSIDE, AnalysisSpec, SetRef

#: a word of a name the layer's other names use at most this often is one that tells it apart
RARE = 2


@dataclass(frozen=True)
class NamedFeature:
    """Features of a local layer the question names: the words said, the names as the data spells them."""

    said: str
    names: tuple[str, ...]
    field: str
    layer_id: str
    classes: tuple[str, ...]
    family: str | None = None  # the layer's geometry family: "point", "line", "polygon"


def words_of(text: str) -> list[str]:
    """The words of ``text`` as names and kinds are compared: normalised, letters and digits."""
    return re.findall(r"[a-z0-9]+", normalise(text))


def _same(a: str, b: str) -> bool:
    """One word of a name as people write it: the same, but for a plural "s" ("Cedars" of "CEDAR") or, in a word of
    six letters or more, one letter changed, added or dropped (a typo; never in a number)."""
    if a == b:
        return True
    if a.isdigit() or b.isdigit():
        return False
    if a.rstrip("s") == b.rstrip("s") and len(a.rstrip("s")) >= 3:
        return True
    if min(len(a), len(b)) < 6 or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _longest_run(name: list[str], question: list[str]) -> tuple[int, int]:
    """(length, start in ``question``) of the longest run of consecutive words ``name`` and ``question`` share
    (words compared as people write them, ``_same``)."""
    best = (0, 0)
    previous = [0] * (len(question) + 1)
    for a in name:
        current = [0] * (len(question) + 1)
        for j, b in enumerate(question, 1):
            if _same(a, b):
                current[j] = previous[j - 1] + 1
                if current[j] > best[0]:
                    best = (current[j], j - current[j])
        previous = current
    return best


def names_said(
    text: str, names: Sequence[str], proper: set[str] | None = None, shouted: set[str] | None = None
) -> list[tuple[str, list[str]]]:
    """The names of ``names`` the (normalised, places blanked) question says, grouped by the words said:
    [(words said, [names as spelled])]. A name said whole counts; a part of one counts when it holds two words
    that are not the names' short linking words ("de", "la", "of": short and common among them), one of them rare
    among the names and, when ``proper`` is given (the words the question capitalises), written as a name is; or
    two such words that follow each other in few names ("LAC USC"). A short word written all in capitals
    (``shouted``: "LAC", "USC") is an abbreviation, never a linking word.
    Of names sharing words said, those said whole come first; the longest run wins."""
    question = words_of(text)
    tokens = {name: words_of(name) for name in names}
    used = Counter(w for words in tokens.values() for w in set(words))

    def telling(w: str) -> bool:
        return used[w] <= RARE and not w.isdigit() and (proper is None or w in proper)

    def rare_run(run: list[str]) -> bool:
        """Words common among the names alone ("LAC", "USC") that follow each other in few of them, one written
        as a name is: the run tells its names apart as one rare word does."""
        within = sum(1 for words in tokens.values() if _longest_run(run, words)[0] == len(run))
        return within <= RARE and (proper is None or any(w in proper for w in run))

    hits: dict[tuple[int, int], list[tuple[bool, str]]] = {}
    for name, words in tokens.items():
        if len(words) < 2:
            continue
        length, start = _longest_run(words, question)
        if length < 2:
            continue
        run = question[start : start + length]
        whole = length == len(words)
        content = [w for w in run if len(w) > 3 or used[w] <= RARE or w in (shouted or ())]
        if not whole and (len(content) < 2 or not (any(telling(w) for w in content) or rare_run(run))):
            continue
        hits.setdefault((start, length), []).append((whole, name))
    out: list[tuple[str, list[str]]] = []
    taken: set[int] = set()
    for (start, length), found in sorted(hits.items(), key=lambda kv: (-kv[0][1], kv[0][0])):
        span = set(range(start, start + length))
        if span & taken:  # a shorter run inside a longer one said: the longer one's
            continue
        taken |= span
        said_whole = [n for w, n in found if w]
        out.append((" ".join(question[start : start + length]), said_whole or [n for _, n in found]))
    return out


def capitalised(question: str) -> set[str]:
    """The words a question writes with a capital (normalised): how a name is written."""
    return {normalise(w) for w in re.findall(r"\w+", question) if w[0].isupper()}


def shouted(question: str) -> set[str]:
    """The words of two letters or more a question writes all in capitals (normalised): abbreviations."""
    return {normalise(w) for w in re.findall(r"[^\W\d_]{2,}", question) if w.isupper()}


def event_of_names(facts: PrepassFacts, layers: LayerCatalogue | None) -> PrepassFacts:
    """``facts`` with the disaster a question that names none means when it names features that only one disaster's
    local layers hold, of those its words point to ("the Palau de Vivanco ... the flood": the Catarroja extract, the
    València flood); unchanged otherwise, and when the words point to no disaster and the session holds layers of
    the user's (an instruction on your files never runs on a disaster's layers)."""
    if layers is None or facts.event_id is not None:
        return facts
    if not facts.event_candidates and layers.user_layers:
        return facts  # work on your own files names no disaster: a street of yours is no disaster's street
    events = {i for n in features_named(facts, layers, every_event=True) for i in layers.get(n.layer_id).events}
    if facts.event_candidates:  # "the flood": of the disasters its words point to
        events &= set(facts.event_candidates)
    if len(events) != 1:
        return facts
    event_id = events.pop()
    return facts.model_copy(update={"event_id": event_id, "event_candidates": [event_id]})


def features_named(
    facts: PrepassFacts, layers: LayerCatalogue | None, *, every_event: bool = False
) -> list[NamedFeature]:
    """The features of the question's disaster's local layers (points of interest, OpenStreetMap extracts) the
    question names by name (``every_event``: of any disaster's): the layers' names read together (a word rare in one
    layer may be common in another; words said belong to the longest name they are part of)."""
    if layers is None or (facts.event_id is None and not every_event):
        return []
    text = where_blanked(normalise(facts.question), facts)
    where: dict[str, list[tuple[str, dict[str, str]]]] = {}  # name -> (layer id, its tags), per layer holding it
    for role in ("poi", "osm"):
        for layer in layers.find(event_id=None if every_event else facts.event_id, role=role):
            if layer.name_field:
                for name, tags in layers.feature_names(layer.id).items():
                    where.setdefault(name, []).append((layer.id, tags))
    out: list[NamedFeature] = []
    for said, found in names_said(text, list(where), capitalised(facts.question), shouted(facts.question)):
        for layer_id in dict.fromkeys(i for name in found for i, _ in where[name]):
            layer = layers.get(layer_id)
            names = [name for name in found if any(i == layer_id for i, _ in where[name])]
            classes = [layer.feature_class] if layer.feature_class else []
            for name in names:
                tags = next(t for i, t in where[name] if i == layer_id)
                classes += [c for c in classes_of_tags(tags) if c not in classes]
            family = layers.geometry_family(layer_id)
            out.append(NamedFeature(said, tuple(names), str(layer.name_field), layer_id, tuple(classes), family))
    return out


def name_constraints(named: Sequence[NamedFeature]) -> list[Constraint]:
    """Each named feature must be kept by a step that filters on its name."""
    return [Constraint(kind="attribute", value=[n.field, *n.names], phrase=n.said) for n in named]


def with_named_features(
    specs: Sequence[AnalysisSpec], named: Sequence[NamedFeature], question: str = ""
) -> list[AnalysisSpec]:
    """``specs`` with each named feature's set (the subject or the reference of its class) narrowed to it by name;
    a set no named feature is of stays as it was. A feature named is not one of those in the disaster's hazard
    area: code's implied relation (no relation said) becomes its distance to the hazard area, the nearest of the
    named (each, when several are named), listed with the distance (a count or a length of the features named to the
    nearest is the distance asked in a unit) — when the question (its asks, a closed class) asks how far, or asks
    a figure of named points and no yes or no; a yes/no ("did the water reach the Els Noguers school?") or a
    length or area of a named road or park ("how many km of Pista de Silla flooded?") is of the part inside."""
    out = []
    for spec in specs:
        subject = _narrowed(spec.subject, named)
        update: dict[str, object] = {"subject": subject}
        if spec.relation is not None:
            reference = _narrowed(spec.relation.reference, named)
            relation = spec.relation.model_copy(update={"reference": reference})
            if (
                subject.by_name
                and relation.kind == "inside"
                and IMPLIED_INSIDE in spec.implied
                and _distance_asked(question, [n for n in named if subject.feature_class in n.classes])
            ):
                count = max(len(v) for v in subject.filters.values())
                relation = relation.model_copy(update={"kind": "nearest", "k": count})
                update["implied"] = [n if n != IMPLIED_INSIDE else IMPLIED_DISTANCE for n in spec.implied]
            update["relation"] = relation
            if subject.by_name and relation.kind == "nearest" and spec.measure in ("count", "length"):
                # how far the named feature is ("how many metres", "in km"): its distance, listed; a count of the
                # features named is known, a length no reading of a distance
                update["measure"] = "list"
        out.append(spec.model_copy(update=update))
    return out


def _distance_asked(question: str, named: Sequence[NamedFeature]) -> bool:
    """Whether a question about features named by name asks their distance to the hazard rather than the part of
    them inside it: it asks how far; else, asking no yes or no, of points (a point has no part inside)."""
    asks = {a.kind for a in question_asks(question)} if question else set()
    if "distance" in asks:
        return True
    if "yesno" in asks:
        return False
    return not question or all(n.family in (None, "point") for n in named)


def _narrowed(ref: SetRef, named: Sequence[NamedFeature]) -> SetRef:
    if ref.kind != "features":
        return ref
    filters = dict(ref.filters)
    own: set[str] = set()  # the name fields narrowed here (two features named: either)
    for n in named:
        if ref.feature_class in n.classes and (n.field not in filters or n.field in own):
            filters[n.field] = list(dict.fromkeys([*filters.get(n.field, []), *n.names]))
            own.add(n.field)
    if not own:
        return ref
    # a feature named: its kinds said ("the hospital") are its own, no narrower set to draw
    return ref.model_copy(update={"filters": filters, "kinds": [], "kind_words": [], "by_name": True})
