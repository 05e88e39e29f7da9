"""What a question says of its disaster that the disaster chosen is not (closed classes only: the event table's
types, years and places, and the offline gazetteer's towns, countries and US states): "the 2025 Pasadena
earthquake", "the Palisades flood", "the 2023 Eaton fire", "the Eaton fire in Texas", "... in Paris". The answer
then says what contradicts instead of presenting the chosen disaster's numbers as the answer."""

from __future__ import annotations

import re

from ...domain.events import DisasterEvent, get_event, load_events, load_gazetteer
from ...engines.geocode import country_code, norm, places_named, states_within, town_points, us_states_named
from ..prepass import MONTHS, alias_hits, extract_types, extract_years, normalise

#: Disaster types a word may name of an event of a type: storms flood, floods come with storms.
COMPATIBLE: dict[str, set[str]] = {
    "fire": {"fire"},
    "earthquake": {"earthquake"},
    "tornado": {"tornado"},
    "flood": {"flood", "hurricane", "cyclone"},
    "hurricane": {"hurricane", "cyclone", "flood"},
    "cyclone": {"cyclone", "hurricane", "flood"},
}
NEAR = 40  # characters either side of the event's name where a year or a type word qualifies it
#: a place qualifies where the question puts it: after one of these ("the Eaton fire in Texas", "en Texas", "à Paris")
_PLACED = re.compile(
    r"(?:^|\s)(?:in|near|at|around|en|em|a|à|au|aux|dans|no|na|nos|nas|cerca\s+de|pres\s+de)\s+$", re.I
)


def _placed(question: str, name: str) -> bool:
    at = question.find(name)
    return at > 0 and bool(_PLACED.search(question[:at]))


def contradictions(question: str, event_id: int | None) -> list[str]:
    """One line per qualifier of the question the chosen disaster contradicts (empty: none)."""
    event = get_event(event_id) if event_id else None
    if event is None:
        return []
    text = normalise(question)
    hits = alias_hits(text, [event])
    out: list[str] = []
    kinds = COMPATIBLE.get(event.type, {event.type}) | ({"flood"} if "flood map" in event.available_data else set())
    for _, (a, b) in hits:
        around = text[max(0, a - NEAR) : a] + " " + text[b : b + NEAR]
        said = extract_types(around)
        if said and not said & kinds:
            out.append(f"'{'/'.join(sorted(said))}', but {event.name} was a {event.type}")
        years = extract_years(around)
        if years and event.event_date.year not in years:
            out.append(f"{years[0]}, but {event.name} was in {event.event_date.year}")
    out += _places(question, event)
    return list(dict.fromkeys(out))


def _places(question: str, event: DisasterEvent) -> list[str]:
    """Places named that lie away from the disaster: a town outside its area, another country, another US state.
    Places of any disaster of the table are the table's (a comparison, the event's own towns)."""
    known = {norm(v) for v in load_gazetteer()} | {norm(a) for e in load_events() for a in e.aliases}
    out = []
    home = country_code(event.country) if event.country else None
    box = event.bbox_4326
    states = {norm(name) for name, _ in us_states_named(question)}
    for place in places_named(question):
        if not _placed(question, place.name):  # "Of the structures ...": a capitalised word, no place said
            continue
        if norm(place.name) in states or norm(place.name) in MONTHS:  # "California", "August": no town
            continue
        if norm(place.name) in known or any(norm(place.name) in k or k in norm(place.name) for k in known if k):
            continue
        if place.point is None:
            if home and place.country != home:
                out.append(f"{place.name}, but {event.name} was in {event.country}")
        elif box is not None and not any(_inside(p, box, margin=0.5) for p in town_points(place.name) or [place.point]):
            out.append(f"{place.name}, but {event.name} was in {event.place}")
    if box is not None and home == "US":
        codes = states_within(box)
        for name, code in us_states_named(question):
            if codes and code not in codes and _placed(question, name):
                out.append(f"{name}, but {event.name} was in {'/'.join(sorted(codes))}")
    return out


def _inside(point: tuple[float, float], box: tuple[float, float, float, float], margin: float) -> bool:
    x, y = point
    return box[0] - margin <= x <= box[2] + margin and box[1] - margin <= y <= box[3] + margin


__all__ = ["contradictions"]
