"""Refuse rather than guess: a question must name a disaster of the event table (or give an area).

The planner asks :func:`require_identified` before its first plan. It raises :class:`InputError`
("I could not identify the disaster ...", with a hint naming the disasters GeoFaham knows) for:

- a question with no words, or with bytes that are not text;
- a date that is in the future or is no date (2025-02-30); a year in the future;
- no area of interest and none of the user's layers named, no disaster resolved, and either nothing
  points at any disaster ("ignore previous instructions and ..."), or the question names a place (a town
  or country of the offline gazetteer) that lies in none of the candidate disasters' areas ("the Lisbon
  earthquake"), or a year none of the candidates happened in ("the 2019 earthquake"). A place is read in
  any letter case where it names the disaster ("the lisbon earthquake", "THE LISBON EARTHQUAKE", "the fire
  in atlantis", "terremoto de lisboa"); elsewhere only capitalised names are (most lower-case words are
  some town's name somewhere).

A question that names only a kind of disaster of which the table holds one ("the earthquake") or
several ("the flood": the model chooses among those, as before) is not refused here.
"""

from __future__ import annotations

import re
from datetime import date

from ..domain.events import DisasterEvent, load_events
from ..engines.geocode import NamedPlace, country_code, places_named
from ..errors import InputError
from .facts import PrepassFacts
from .prepass import (
    BY_WORDS,
    COMPARISON_AFTER,
    COMPARISON_WORDS,
    DATE_RE,
    EACH_WORDS,
    NUMBER_WORDS,
    SMALL_NUMBER_WORDS,
    TYPE_WORDS,
    alias_hits,
    event_spellings,
    extract_dates,
    extract_years,
    normalise,
)

#: the reader's own function words (per, each, cada, over, ten, ...): capitalised at a sentence's start ("... Per fire
#: please"), they are no town's name
FUNCTION_WORDS = frozenset(
    word
    for phrase in (
        *BY_WORDS,
        *EACH_WORDS,
        *NUMBER_WORDS,
        *SMALL_NUMBER_WORDS,
        *(w for table in (COMPARISON_WORDS, COMPARISON_AFTER) for said in table.values() for w in said),
    )
    for word in phrase.split()
)

_TYPE_RE = re.compile("|".join(rf"\b(?:{p})\b" for p in TYPE_WORDS))
_WORD = r"[a-z][a-z'-]+"
#: the one or two words between an article and a disaster word ("the lisbon earthquake"), or after the
#: disaster word and a preposition ("the earthquake in lisbon", "terremoto em lisboa")
_BEFORE_RE = re.compile(rf"(?:^|\s)(?:the|el|la|le|o|a)\s+(?P<place>(?:{_WORD}\s+)?{_WORD})\s+$")
_AFTER_RE = re.compile(rf"\s+(?:in|at|near|around|de|du|da|do|en|em)\s+(?P<place>{_WORD}(?:\s+{_WORD})?)")
#: words that stand before a disaster word as its kind or a common adjective, and are also some town's name
_NOT_PLACES = frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "same",
        "last",
        "latest",
        "recent",
        "big",
        "great",
        "major",
        "huge",
        "forest",
        "bush",
        "wild",
        "tropical",
        "el",
        "la",
        "los",
        "las",
        "le",
        "les",
        "o",
        "os",
        "as",
        "um",
        "uma",
        "un",
        "une",
        "of",
        "in",
        "at",
        "on",
        "near",
        "by",
        "around",
        "de",
        "del",
        "du",
        "da",
        "do",
        "en",
        "em",
        "na",
        "no",
        "to",
        "for",
        "from",
        "with",
        "and",
        "or",
        "my",
        "your",
        "our",
        "their",
        "each",
        "every",
        "all",
        "any",
    ]
)


def places_in_disaster_phrase(question: str) -> list[NamedPlace]:
    """Places of the gazetteer named next to a disaster word, in any letter case (module docstring)."""
    found: list[NamedPlace] = []
    plain = normalise(question)
    for kind in _TYPE_RE.finditer(plain):
        if kind.group().startswith("burn"):  # a verb: "mobile homes burned" names no place
            continue
        before = _BEFORE_RE.search(plain, 0, kind.start())
        after = _AFTER_RE.match(plain, kind.end())
        for m in (before, after):
            words = [w for w in m.group("place").split() if w not in _NOT_PLACES] if m else []
            if words and not _TYPE_RE.search(" ".join(words)):
                found += places_named(". " + " ".join(w.capitalize() for w in words))
    return found


#: how far (degrees) outside a disaster's box a named town may lie and still be read as that disaster's area
NEAR_DEG = 1.0


def known_disasters_hint(events: list[DisasterEvent] | None = None) -> str:
    """The hint of every refusal: the disasters GeoFaham knows, by name."""
    names = dict.fromkeys(re.sub(r"\s*\(.*\)$", "", e.name) for e in events or load_events())
    return (
        "name one of the disasters GeoFaham knows ("
        + ", ".join(names)
        + "), or give an area of interest or one of your own layers"
    )


def check_question(question: str) -> None:
    """A question must be text with at least one word."""
    try:
        question.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(
            "the question is not text (it holds bytes that are not UTF-8)", hint="type or paste the question as text"
        ) from None
    if any(ord(c) < 32 and c not in "\t\n\r" for c in question):
        raise InputError("the question holds control characters", hint="type or paste the question as text")
    if not re.search(r"\w", question):
        raise InputError("the question is empty", hint=known_disasters_hint())


def check_dates(question: str, today: date | None = None) -> None:
    """Dates in the question must be dates, and not in the future (GeoFaham answers about past disasters)."""
    today = today or date.today()
    plain = normalise(question)
    valid = extract_dates(plain)
    valid_spans = {span for _, span in valid}
    for m in DATE_RE.finditer(plain):
        if m.span() not in valid_spans:
            raise InputError(f"'{m.group()}' is not a date", hint="write dates as YYYY-MM-DD, e.g. 2025-01-07")
    future = [d.isoformat() for d, _ in valid if d > today]
    future += [str(y) for y in extract_years(DATE_RE.sub(" ", plain)) if y > today.year]
    if future:
        raise InputError(
            f"I could not identify the disaster: {future[0]} is in the future",
            hint="GeoFaham answers about past disasters; " + known_disasters_hint(),
        )


def _in_area(place: NamedPlace, event: DisasterEvent) -> bool:
    if place.point is None:
        return place.country == country_code(event.country)
    if event.bbox_4326 is None:
        return False
    x0, y0, x1, y1 = event.bbox_4326
    x, y = place.point
    return x0 - NEAR_DEG <= x <= x1 + NEAR_DEG and y0 - NEAR_DEG <= y <= y1 + NEAR_DEG


def check_identified(facts: PrepassFacts, *, has_aoi: bool, events: list[DisasterEvent] | None = None) -> None:
    """Refuse a question that no disaster, area or layer of the user's can be tied to (module docstring)."""
    if has_aoi or facts.layers or facts.event_id is not None:
        return
    events = events if events is not None else load_events()
    by_id = {e.id: e for e in events}
    candidates = [by_id[i] for i in facts.event_candidates if i in by_id]
    if not candidates:
        raise InputError("I could not identify the disaster or the area of the question", hint=known_disasters_hint())
    spellings = set().union(*map(event_spellings, events))
    named = [
        p
        for p in places_named(facts.question) + places_in_disaster_phrase(facts.question)
        if normalise(p.name) not in spellings and normalise(p.name) not in FUNCTION_WORDS
    ]
    # disasters named by their own names ("the Eaton number and the Palisades number"): a capitalised word
    # elsewhere ("Daño grave …" opening the sentence) is no other disaster's place; a place that contradicts the
    # one named ("the Eaton fire in Texas") is said in the answer (reading.qualifiers)
    by_name = bool(alias_hits(normalise(facts.question), events))
    if named and not by_name and not any(_in_area(p, e) for p in named for e in candidates):
        raise InputError(
            f"I could not identify the disaster: {named[0].name} is not in the area of any disaster GeoFaham knows",
            hint=known_disasters_hint(events),
        )
    years = extract_years(DATE_RE.sub(" ", normalise(facts.question))) + [d.year for d in facts.dates]
    if years and not any(e.event_date.year in years for e in candidates):
        kinds = " or ".join(dict.fromkeys(e.type for e in candidates))
        raise InputError(
            f"I could not identify the disaster: no {kinds} of {years[0]} is in the event table",
            hint=known_disasters_hint(events),
        )


def require_identified(facts: PrepassFacts, *, has_aoi: bool) -> None:
    """Every check of this module, before a first plan."""
    check_question(facts.question)
    check_dates(facts.question)
    check_identified(facts, has_aoi=has_aoi)
