"""Which stated value an expectation is: the labels of a value read from ids, never from words.

A turn that asks for two or more numbers (Eaton's hospitals and the Palisades', the labels inside the burn
area and outside it, the densest cell and the number of cells) is judged value by value: each expectation
is matched only to the stated value that carries its label, so two values swapped fail. The labels come
from what does not depend on the question's language or the answer's wording:

- ``group``: the structured answer's group (a value of the data: ``Destroyed (>50%)``), or else the one class
  or value the value's artifact lineage was filtered to (the damage classes, a field's values, OSM kinds
  that a step recorded in its artifact's ``extra``);
- ``events``: the event-table records the value's artifact lineage reaches (``extra.event_id``), by event
  (snapshots of one fire are one event);
- ``relation``: ``inside`` / ``outside`` when the lineage selected features by that relation to an area
  (the step's tool, or the ``relation`` its artifact records), ``all`` when it did neither;
- ``measure``: the structured answer's measure (``count``, ``max``, ``mean``, ``share`` ...).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from geofaham_plugin.core.domain.damage import ANY_DAMAGE
from geofaham_plugin.core.domain.events import DisasterEvent
from geofaham_plugin.core.orchestrator.answer import StatedValue

from .observations import norm_key
from .spec import Expectation

#: artifact sources (tool names) that select features by their relation to an area
RELATION_SOURCES = {"vector.inside": "inside", "vector.outside": "outside"}
#: the normalised damage classes that together are "damaged" (any damage)
DAMAGED = frozenset(c.value for c in ANY_DAMAGE)


class ValueLabels(BaseModel):
    """What the evidence says one stated value is of."""

    group: str | None
    events: frozenset[str]
    relation: Literal["inside", "outside", "all"]
    measure: str


def lineage(artifact_id: str, artifacts: dict[str, dict]) -> list[dict]:
    """The artifact and every artifact it was made from, nearest first."""
    out, seen, todo = [], set(), [artifact_id]
    while todo:
        aid = todo.pop(0)
        if aid in seen or aid not in artifacts:
            continue
        seen.add(aid)
        out.append(artifacts[aid])
        todo += [i for i in artifacts[aid].get("inputs", []) if isinstance(i, str)]
    return out


def filtered_group(arts: list[dict]) -> str | None:
    """The group the nearest filter of the lineage kept: one damage class (or all damaged ones: ``damaged``),
    one value of a field, one OSM kind; None when no step filtered, or kept several values."""
    for art in arts:
        extra = art.get("extra") or {}
        values: list = []
        if isinstance(extra.get("damage_classes"), list):
            values = extra["damage_classes"]
        elif isinstance(extra.get("filter"), dict) and len(extra["filter"]) == 1:
            (values,) = extra["filter"].values()
        elif isinstance(extra.get("kinds"), list):
            values = extra["kinds"]
        if not values:
            continue
        keys = {norm_key(v) for v in (values if isinstance(values, list) else [values])}
        if keys == DAMAGED:
            return "damaged"
        return keys.pop() if len(keys) == 1 else None
    return None


def relation_of(arts: list[dict]) -> Literal["inside", "outside", "all"]:
    found = {RELATION_SOURCES.get(str(a.get("source", "")).split(":")[0]) for a in arts}
    found |= {(a.get("extra") or {}).get("relation") for a in arts}
    return "outside" if "outside" in found else "inside" if "inside" in found else "all"


def event_names(ids: list[int] | set[int], events: dict[int, DisasterEvent]) -> frozenset[str]:
    """Events by name (snapshots of one event are one), an unknown record by its id."""
    return frozenset(events[i].name if i in events else f"record {i}" for i in ids)


def value_labels(v: StatedValue, artifacts: dict[str, dict], events: dict[int, DisasterEvent]) -> ValueLabels:
    arts = lineage(v.artifact_id, artifacts)
    ids = set()
    for art in arts:
        eid = (art.get("extra") or {}).get("event_id")
        if isinstance(eid, int) or (isinstance(eid, str) and eid.isdigit()):
            ids.add(int(eid))
    return ValueLabels(
        group=norm_key(v.group) if v.group is not None else filtered_group(arts),
        events=event_names(ids, events),
        relation=relation_of(arts),
        measure=v.measure,
    )


def label_mismatch(e: Expectation, v: StatedValue, labels: ValueLabels, events: dict[int, DisasterEvent]) -> str:
    """Why the stated value ``v`` is not the value ``e`` asks for ('' when its labels fit)."""
    if e.group is None and v.group is not None:
        return f"grouped ({v.group})"
    if e.group is not None and labels.group != norm_key(e.group):
        return f"group {labels.group}, not {e.group}"
    if e.measure is not None and labels.measure != e.measure:
        return f"measure {labels.measure}, not {e.measure}"
    if e.events and labels.events != (want := event_names(e.events, events)):
        return f"of {sorted(labels.events) or 'no event'}, not {sorted(want)}"
    if e.relation is not None and labels.relation != e.relation:
        return f"{labels.relation}, not {e.relation}"
    return ""
