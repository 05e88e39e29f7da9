"""The event table: the 17 GeoFaham-Bench disaster records, read from ``core/data/events.json``.

Each record names the event (``aliases``: storm names, activation codes) and the places it hit
(``places``: canonical name -> lower-case spellings). A :class:`DisasterEvent` carries both kinds of
spelling in its ``aliases``; :func:`load_gazetteer` keeps the place spellings apart so the pre-pass
can report canonical place names.
"""

from __future__ import annotations

import json
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

EVENTS_FILE = Path(__file__).resolve().parents[1] / "data" / "events.json"


class DisasterEvent(BaseModel):
    """One record of the event table (the 17 GeoFaham-Bench disaster records)."""

    id: int
    type: str  # fire, flood, hurricane, cyclone, earthquake, tornado
    name: str  # "Eaton Fire", "Valencia DANA flood", ...
    place: str
    country: str
    event_date: date
    available_data: list[str]  # "building damage", "flood map"
    aliases: list[str] = Field(default_factory=list)  # lower-case words/phrases that name it
    bbox_4326: tuple[float, float, float, float] | None = None  # rough area (minx, miny, maxx, maxy)


@cache
def _records() -> tuple[dict[str, Any], ...]:
    with EVENTS_FILE.open(encoding="utf-8") as handle:
        return tuple(json.load(handle)["events"])


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


@cache
def _events() -> tuple[DisasterEvent, ...]:
    events = []
    for record in _records():
        spellings = [s for variants in record.get("places", {}).values() for s in variants]
        aliases = _unique([a.lower() for a in record.get("aliases", [])] + spellings + [record["place"].lower()])
        events.append(DisasterEvent(**{k: v for k, v in record.items() if k != "places"} | {"aliases": aliases}))
    return tuple(events)


def load_events() -> list[DisasterEvent]:
    """All records of the event table, ordered by id (parsed once, handed out as copies)."""
    return [e.model_copy(deep=True) for e in _events()]


def get_event(event_id: int) -> DisasterEvent | None:
    """The record with this id, or None."""
    return next((e.model_copy(deep=True) for e in _events() if e.id == event_id), None)


def load_gazetteer() -> dict[str, str]:
    """Lower-case place spelling -> canonical place name, over the whole table (a fresh copy)."""
    return dict(_gazetteer())


@cache
def _gazetteer() -> dict[str, str]:
    gazetteer: dict[str, str] = {}
    for record in _records():
        gazetteer.setdefault(record["place"].lower(), record["place"])
        for canonical, variants in record.get("places", {}).items():
            for variant in variants:
                gazetteer.setdefault(variant.lower(), canonical)
    return gazetteer
