"""Road access at plan time: whether a road network can be had for a spec's area before a plan routes on one.

Offline, the road network of an area comes only from a local OpenStreetMap extract (the catalogue's extracts and
any ``.osm.pbf`` in the data folder). When none covers the area, the spec's road access is left out of the plan and
said to be unavailable: the answer then states plainly that it was not computed, and why (never a distance or an
inside test in its place: coverage keeps road access unapplied), instead of planning a step bound to fail.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from ..domain.events import get_event
from ..engines.layers import LayerCatalogue
from ..engines.osm.extracts import local_extracts
from .spec_schema import AnalysisSpec


class Unavailable(BaseModel):
    """Parts of the question code knows cannot be applied with the data at hand, and the answer's reason (a phrase
    key of ``core/data/answer_phrases.json`` and its values)."""

    constraints: list[str] = Field(description="constraint keys '<kind>:<value>' the plan cannot apply")
    phrase: str
    values: dict[str, str] = Field(default_factory=dict)


def _meets(a: Sequence[float], b: Sequence[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def road_network_at(spec: AnalysisSpec, layers: LayerCatalogue) -> bool:
    """Whether a local extract holds roads where ``spec`` routes: at the subject's place, else in the disaster's
    area (the event table's box)."""
    place = (spec.subject.place or "").lower()
    if place and any((e.place or "").lower() == place for e in layers.spec.osm_extracts):
        return True
    event = get_event(spec.access.hazard.event_id) if spec.access and spec.access.hazard.event_id else None
    if event is None or event.bbox_4326 is None:
        return False
    return any(_meets(event.bbox_4326, e.bbox_4326) for e in local_extracts(layers))


def routable(
    specs: Sequence[AnalysisSpec], layers: LayerCatalogue, offline: bool
) -> tuple[list[AnalysisSpec], list[Unavailable]]:
    """The specs with the road access left out where no road network can be had (offline, no local extract), and
    what was left out."""
    out: list[AnalysisSpec] = []
    missing: list[Unavailable] = []
    for spec in specs:
        if spec.access is None or not offline or road_network_at(spec, layers):
            out.append(spec)
            continue
        event = get_event(spec.access.hazard.event_id) if spec.access.hazard.event_id else None
        name = event.name if event else "this area"
        implied = [note for note in spec.implied if not note.startswith("roads within")]
        out.append(spec.model_copy(update={"access": None, "implied": implied}))
        unavailable = Unavailable(
            constraints=["relation:road_access", "feature_class:roads"],
            phrase="road.not_available",
            values={"event": name},
        )
        if unavailable not in missing:
            missing.append(unavailable)
    return out, missing


__all__ = ["Unavailable", "road_network_at", "routable"]
