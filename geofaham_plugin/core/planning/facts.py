"""What the deterministic pre-pass resolves from a question before any model is asked."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field

from ..domain.damage import DamageClass
from ..domain.time import TimeWindow


class PrepassFacts(BaseModel):
    """Facts found by code in the question. Empty fields mean "not stated"."""

    question: str
    event_id: int | None = None  # set when exactly one event matches best
    event_candidates: list[int] = Field(default_factory=list)  # ranked, best first
    distances_m: list[float] = Field(default_factory=list)  # "5 km" -> 5000.0, in order of mention
    k: int | None = None  # "3 nearest", "top 5"
    dates: list[date] = Field(default_factory=list)  # explicit dates in the question
    windows: list[TimeWindow] = Field(default_factory=list)  # pre/post windows relative to the event date
    damage_classes: list[DamageClass] = Field(default_factory=list)
    target_entities: list[str] = Field(default_factory=list)  # feature classes: hospital, school, road, ...
    places: list[str] = Field(default_factory=list)  # place names found (gazetteer of the event table)
    wants_count: bool = False  # "how many", "count", "number of"
    group_by: str | None = None  # "by structure type", "per neighbourhood" -> attribute words
    layers: list[str] = Field(default_factory=list)  # the user's own layers the question names: user:<slug> ids
    # misspelt words read as a vocabulary word ("hosptials" -> "hospitals"), only those that changed a fact
    corrections: dict[str, str] = Field(default_factory=dict)
    # text that is code, not words (SQL statements): not read, said in the answer
    unread: list[str] = Field(default_factory=list)
