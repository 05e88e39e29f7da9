"""Composable analysis specs, the schema: what a question asks, as data.

A question becomes one :class:`AnalysisSpec` (or one per disaster it compares): a **subject set** (the
building-damage inspections of an event, features of a class, the hazard area itself, or a layer the
user brought) narrowed by attribute filters (damage classes); an optional **spatial relation** to a
**reference set** (inside, outside, within / beyond a distance, the k nearest) where the reference is
another set or the user's area of interest; a **measure** (list, count, share of the set before the
relation, area, length, sum or mean of a field); and an optional grouping field. The user's area of
interest restricts every subject and reference set unless the AOI *is* the reference.

The reader (:mod:`.spec_read`) fills specs from a question; what it cannot decide comes back in a
:class:`SpecDraft` as :class:`SpecGap` candidates for the model to choose from (a narrowed enum, never free
text). The compiler (:mod:`.spec_compile`) turns specs into a plan of typed tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from ..agents.transforms import WhereArgs
from ..domain.damage import ANY_DAMAGE, DamageClass
from ..domain.events import get_event
from ..domain.feature_classes import kinds_name
from ..domain.language import damage_class_name, feature_class_name, phrase
from ..domain.rasters import raster_vocabulary

SetKind = Literal["damage", "features", "hazard", "layer", "aoi"]
RelationKind = Literal["inside", "outside", "within", "beyond", "nearest"]
MeasureKind = Literal["list", "count", "share", "area", "length", "sum", "mean"]

NEAREST_SEARCH_M = 25_000.0  # how far around the reference features are fetched for "the nearest"
NEAR_DEFAULT_M = 1_000.0  # "near" with no distance: within 1 km (stated in the answer)
OUTSIDE_SEARCH_M = 5_000.0  # features "outside" a hazard are looked for this far around it (without an AOI)
#: code's note when it relates features of a disaster to nothing the question says: those in its hazard area
IMPLIED_INSIDE = "features counted inside the hazard area of the disaster"
#: code's note when it relates features the question names by name to nothing it says: their distance to it
IMPLIED_DISTANCE = "the named features' distance to the hazard area of the disaster"
#: the notes of a relation code implied (no reading: the model's reading of the relation is the question's)
IMPLIED_RELATIONS = (IMPLIED_INSIDE, IMPLIED_DISTANCE)
NAMED_SEARCH_M = 100_000.0  # features named by name are looked for this far around the reference
BEYOND_SEARCH_M = 50_000.0  # features "farther than D" from it: at least this far around it (said in the answer)


def search_ring_m(kind: str, distance_m: float | None) -> float:
    """How far around the reference features outside it, or beyond a distance of it, are looked for (no AOI)."""
    if kind == "beyond":
        return max(OUTSIDE_SEARCH_M + float(distance_m or 0), BEYOND_SEARCH_M)
    return OUTSIDE_SEARCH_M + float(distance_m or 0)


ROADS_AROUND_M = 2_000.0  # road access: the roads are taken this far around the hazard (ways round it)
DAMAGE_CUT_M = 50.0  # road access cut by damage: a road within this of a damaged building is taken as blocked
ALL_CLASSES = [c for c in DamageClass]


class SpecError(ValueError):
    """The facts do not make a spec (the message says what is missing, for the model or the answer)."""


class SetRef(BaseModel):
    """A set of features: a catalogue layer's rows for an event, features of a class, a user layer, the AOI."""

    kind: SetKind
    event_id: int | None = None
    feature_class: str | None = None
    layer_id: str | None = None
    damage_classes: list[DamageClass] = Field(default_factory=list, description="damage sets only; empty: all")
    kinds: list[str] = Field(default_factory=list, description="features sets: narrower kinds of the class to keep")
    kind_words: list[str] = Field(
        default_factory=list,
        description="features sets: the words the question names the kinds by ('consultorios'); a layer that tells "
        "kinds apart only by name is narrowed by these",
    )
    kinds_out: list[str] = Field(
        default_factory=list, description="features sets: narrower kinds to take out ('not hospitals')"
    )
    place: str | None = Field(default=None, description="features sets: the named place they are taken from")
    in_hazard: bool = Field(
        default=False, description="features sets: only those inside the hazard ('flooded buildings')"
    )
    filters: dict[str, list[str]] = Field(
        default_factory=dict,
        description="field -> values to keep (structure type, category ...), exactly as in the data",
    )
    raster: bool = Field(default=False, description="layer sets: a raster of values (population ...), not features")
    index: str | None = Field(
        default=None,
        description="raster sets: a spectral index computed from the image layer_id (rasters.json's indices: dnbr, "
        "ndvi ...); a change between two dates (dnbr) from pre_layer_id to layer_id",
    )
    pre_layer_id: str | None = Field(default=None, description="raster sets of a change index: the pre-event image")
    filters_out: dict[str, list[str]] = Field(
        default_factory=dict, description="field -> values the question takes out of the set ('excluding mobile homes')"
    )
    filters_part: bool = Field(
        default=False,
        description="damage sets of a share: the filters narrow the part, the damage classes the base ('what share "
        "of the destroyed structures were commercial': of the destroyed ones)",
    )
    where: WhereArgs | None = Field(default=None, description="layer sets: a condition on a field ('capacity > 5000')")
    by_name: bool = Field(
        default=False,
        description="features sets: narrowed to features the question names by their name ('Huntington Hospital'): "
        "looked for wherever they are, not only around the reference",
    )

    def conditions(self) -> str:
        """The filters and the condition in the data's terms: "(functional: yes; capacity_l > 5000)", or ""."""
        said = [f"{k}: {', '.join(v)}" for k, v in self.filters.items()]
        if self.where is not None:
            said.append(
                f"{self.where.field} {self.where.op} {self.where.value:g}"
                if isinstance(self.where.value, float)
                else f"{self.where.field} {self.where.op} {self.where.value}"
            )
        return f" ({'; '.join(said)})" if said else ""

    @model_validator(mode="after")
    def _complete(self) -> SetRef:
        if self.kind in ("damage", "hazard") and self.event_id is None:
            raise ValueError(f"a {self.kind} set needs a disaster event")
        if self.kind == "features" and not self.feature_class:
            raise ValueError("a features set needs a feature class")
        if self.kind == "layer" and not self.layer_id:
            raise ValueError("a layer set needs a layer id")
        return self

    def describe(self, lang: str = "en") -> str:
        """The set in words, in ``lang`` (plan goals and the replan hint use English)."""
        event = event_name(self.event_id)
        if self.kind == "damage":
            classes = ", ".join(damage_class_name(c.value, lang) for c in self.damage_classes)
            return phrase("set.damage", lang, event=event) + (f" ({classes})" if classes else "")
        if self.kind == "hazard":
            return phrase("set.hazard", lang, event=event)
        if self.kind == "features":
            cls = _class_or_kinds(self, lang)
            inside = phrase("set.in_hazard", lang) if self.in_hazard else ""
            if self.kinds_out:  # "health facilities other than hospitals"
                out = kinds_name(self.feature_class, self.kinds_out)
                return phrase("what.class_features_except", lang, cls=cls, kinds=out) + inside
            return phrase("what.class_features", lang, cls=cls) + inside
        if self.kind == "layer" and self.index:
            return f"{index_title(self.index)} of " + (
                f"{_shown_id(self.pre_layer_id)} → {_shown_id(self.layer_id)}"
                if self.pre_layer_id
                else _shown_id(self.layer_id)
            )
        if self.kind == "layer" and str(self.layer_id).startswith("raster:"):  # a sample raster, not yours
            return f"the sample raster {_shown_id(self.layer_id)}"
        if self.kind == "layer":
            return phrase("set.layer", lang, layer=str(self.layer_id).removeprefix("user:"))
        return phrase("label.your_aoi", lang)


class Relation(BaseModel):
    kind: RelationKind
    reference: SetRef
    distance_m: float | None = Field(default=None, gt=0, le=200_000)
    k: int | None = Field(default=None, ge=1, le=100)
    #: nearest among those outside the reference ("closest to the flood zone but outside it")
    outside_only: bool = False

    @model_validator(mode="after")
    def _complete(self) -> Relation:
        if self.kind in ("within", "beyond") and self.distance_m is None:
            raise ValueError(f"relation '{self.kind}' needs a distance")
        return self


class RoadAccess(BaseModel):
    """Road access of the subject set (after its relation, if any): routed on the road network before and after
    the hazard cuts it, to the ``targets`` ("can still reach the fire station") or, without targets, to the rest of
    the network ("which hospitals are still reachable by road"). ``hazard`` is the event's hazard area, or its
    damaged buildings buffered by ``cut_buffer_m`` (a road next to one is taken as blocked)."""

    hazard: SetRef
    targets: SetRef | None = None
    cut_buffer_m: float | None = Field(default=None, gt=0, le=5_000)

    @model_validator(mode="after")
    def _complete(self) -> RoadAccess:
        if self.hazard.kind not in ("hazard", "damage", "layer"):
            raise ValueError("roads are cut by a hazard area, damaged buildings or a polygon layer")
        if self.hazard.kind == "damage" and self.cut_buffer_m is None:
            raise ValueError("damaged buildings cut the roads within a distance: cut_buffer_m")
        return self


class AnalysisSpec(BaseModel):
    """One analysis: a subject set, an optional relation to a reference set, a measure, a grouping."""

    subject: SetRef
    relation: Relation | None = None
    measure: MeasureKind = "count"
    field: str | None = Field(default=None, description="the numeric field of sum / mean")
    group_by: str | None = Field(default=None, description="a field of the subject's layer")
    zones: SetRef | None = Field(
        default=None, description="polygons to count in, one row per zone ('in each district')"
    )
    zone_label: str | None = Field(default=None, description="the zones' field that names a zone")
    grid_m: float | None = Field(default=None, gt=0, description="count on a square grid of this cell size (UTM)")
    threshold: float | None = Field(default=None, description="a raster's share: the value pixels reach or exceed")
    threshold_below: float | None = Field(
        default=None, description="a raster's share or area: the value pixels stay below (with threshold: between)"
    )
    classification: str | None = Field(
        default=None, description="a raster's area (or share) per class of a named classification (rasters.json)"
    )
    statistic: Literal["median", "min", "max"] | None = Field(
        default=None, description="a raster's statistic other than the mean ('the median dNBR'): measure mean"
    )
    share_of: list[DamageClass] = Field(
        default_factory=list,
        description="a share of damage records: the grades of its base ('of the damaged, what fraction were "
        "destroyed': the damaged ones); empty: every record of the set",
    )
    weight: Literal["count", "area", "length"] = Field(
        default="count",
        description="what a share of features is a share of: their number, or their area or length ('what fraction "
        "of the footprint area', 'what share of the street length')",
    )
    aoi_artifact_id: str | None = Field(default=None, description="restricts every set, unless it is the reference")
    implied: list[str] = Field(default_factory=list, description="choices code made the question did not state")
    access: RoadAccess | None = Field(default=None, description="road access of the subject set ('cut off')")

    @model_validator(mode="after")
    def _complete(self) -> AnalysisSpec:
        if self.access is not None and (self.measure not in ("list", "count") or self.subject.raster):
            raise ValueError("road access lists or counts features that can (not) be reached, not a measure")
        if self.subject.kind == "aoi":
            raise ValueError("the area of interest restricts a subject; it is not one")
        if self.measure in ("sum", "mean") and not self.field and not self.subject.raster:
            raise ValueError(f"a {self.measure} needs a numeric field")
        if self.subject.raster and self.measure not in ("sum", "mean", "share", "area"):
            raise ValueError("a raster of values answers a sum or a mean inside an area, not a count of features")
        bounded = self.threshold is not None or self.threshold_below is not None or self.classification is not None
        if self.subject.raster and (self.measure in ("share", "area")) != bounded:
            raise ValueError("a raster's share or area is of the pixels within thresholds the question states")
        if self.statistic is not None and (self.measure != "mean" or not self.subject.raster):
            raise ValueError("a median, minimum or maximum is a statistic of a raster's values")
        if self.classification is not None and not self.subject.raster:
            raise ValueError("a classification classifies a raster's values")
        if self.measure in ("area", "length") and self.subject.kind == "damage":
            raise ValueError(f"the {self.measure} of building points is not defined")
        if self.relation and self.relation.reference.kind == "aoi" and not self.aoi_artifact_id:
            raise ValueError("the reference is the area of interest, but none is set")
        if self.weight != "count" and (self.measure != "share" or self.subject.kind in ("damage", "hazard")):
            raise ValueError(f"a share by {self.weight} is a share of features (lines or polygons)")
        if self.share_of and (self.measure != "share" or self.subject.kind != "damage"):
            raise ValueError("a share's base grades apply to a share of damage records")
        if self.share_of and not set(self.subject.damage_classes or ALL_CLASSES) <= set(self.share_of):
            raise ValueError("a share's base must hold every grade of its part")
        return self

    def label(self, lang: str = "en") -> str:
        """What the answer's number is about, in the user's terms and language: "destroyed buildings of the
        Eaton Fire within 500 m of healthcare features, in your area of interest"."""
        subject = self.subject
        if subject.kind == "damage":
            what = _buildings(subject.damage_classes, lang)
        elif subject.kind == "hazard":
            what = phrase("label.hazard_area", lang)
        elif subject.kind == "features":
            what = subject.describe(lang).removesuffix(phrase("set.in_hazard", lang) if subject.in_hazard else "")
        elif subject.index or str(subject.layer_id).startswith("raster:"):
            what = subject.describe(lang)
        else:
            key = "label.raster_values" if subject.raster else "label.layer_features"
            what = phrase(key, lang, layer=str(subject.layer_id).removeprefix("user:"))
        event = event_name(subject.event_id or (self.relation.reference.event_id if self.relation else None))
        of_event = phrase("label.of_event", lang, event=event)
        text = what + (of_event if event and subject.kind in ("damage", "hazard") else "")
        text += subject.conditions()  # the values as the data spells them: "(STRUCTURETYPE: School)"
        if self.relation:
            text += " " + self._relation_text(lang)
        if self.zones is not None:
            text += phrase("label.in_each_of", lang, zones=self.zones.describe(lang))
        if self.grid_m is not None:
            text += phrase("label.on_grid", lang, cell=f"{self.grid_m:g}")
        if self.access is not None:
            to = self.access.targets.describe(lang) if self.access.targets else phrase("road.main_network", lang)
            text += phrase("label.by_road", lang, what=to)
        if self.share_of:
            text += phrase("label.share_of", lang, base=_buildings(self.share_of, lang))
        if self.weight != "count":
            text += phrase(f"label.share_by_{self.weight}", lang)
        if self.aoi_artifact_id and not (self.relation and self.relation.reference.kind == "aoi"):
            text += phrase("label.in_your_aoi", lang)
        return text

    def _relation_text(self, lang: str = "en") -> str:
        r = self.relation
        assert r is not None
        distance = f"{r.distance_m:,.0f} m" if r.distance_m else ""
        reference = r.reference
        if reference.kind == "damage":
            what = _buildings(reference.damage_classes, lang)
        elif reference.kind == "hazard":
            same = r.reference.event_id == self.subject.event_id and self.subject.kind in ("damage", "hazard")
            what = phrase("label.its_hazard_area", lang) if same else reference.describe(lang)
        elif reference.kind == "aoi":
            what = phrase("label.your_aoi", lang)
        else:
            what = reference.describe(lang)
        what += reference.conditions()  # "inside your layer camps (camp: Bravo)"
        return phrase(f"rel.{r.kind}", lang, what=what, distance=distance, k=r.k or 1)

    def describe(self) -> str:
        parts = [f"{self.measure} of {self.subject.describe()}"]
        if self.relation:
            r = self.relation
            distance = f"{r.distance_m:g} m" if r.distance_m else ""
            how = {
                "inside": "inside",
                "outside": "outside",
                "within": f"within {distance} of",
                "beyond": f"more than {distance} from",
                "nearest": f"the {r.k or 1} nearest{' outside and' if r.outside_only else ''} to",
            }[r.kind]
            parts.append(f"{how} {r.reference.describe()}")
        if self.share_of:
            parts.append(f"as a share of the {', '.join(c.value for c in self.share_of)} ones")
        if self.weight != "count":
            parts.append(f"by {self.weight}")
        if self.group_by:
            parts.append(f"by {self.group_by}")
        if self.access is not None:
            to = self.access.targets.describe() if self.access.targets else "the rest of the road network"
            parts.append(f"reaching {to} by road, before and after {self.access.hazard.describe()} cuts it")
        if self.aoi_artifact_id and not (self.relation and self.relation.reference.kind == "aoi"):
            parts.append("in your area of interest")
        return " ".join(parts)


def index_title(index: str) -> str:
    """A spectral index's name as written ("dNBR"), from rasters.json."""
    spec = raster_vocabulary().indices.get(index)
    return spec.title if spec else index


def _shown_id(layer_id: str | None) -> str:
    return str(layer_id).removeprefix("user:").removeprefix("raster:")


def _buildings(classes: Sequence[DamageClass], lang: str = "en") -> str:
    if not classes or set(classes) == set(DamageClass):
        return phrase("buildings.inspected", lang)
    if set(classes) == set(ANY_DAMAGE):
        return phrase("buildings.any_damage", lang)
    if list(classes) == [DamageClass.none]:
        return phrase("buildings.undamaged", lang)
    names = phrase("word.or", lang).join(damage_class_name(c.value, lang) for c in classes)
    return phrase("buildings.classes", lang, classes=names)


def _class_or_kinds(ref: SetRef, lang: str) -> str:
    """The features' name: their kinds' ("road bridge / fire station"), else their class's name."""
    return kinds_name(ref.feature_class, ref.kinds) if ref.kinds else feature_class_name(str(ref.feature_class), lang)


def event_name(event_id: int | None) -> str:
    """The name of the event ``event_id`` ("Eaton Fire"), "event N" when the table has no such event, "" for None."""
    event = get_event(event_id) if event_id else None
    return event.name if event else (f"event {event_id}" if event_id else "")


class SpecGap(BaseModel):
    """A choice code could not make: the field and the candidates the model may choose from."""

    field: Literal["event_id", "subject", "measure", "relation"]
    candidates: list[Any]
    reason: str


class SpecDraft(BaseModel):
    """What code resolved of a question's spec, and what is left for the model to choose."""

    specs: list[AnalysisSpec] = Field(default_factory=list)
    gaps: list[SpecGap] = Field(default_factory=list)
    difference: bool = Field(default=False, description="a comparison that asks by how much the results differ")


__all__ = [
    "AnalysisSpec",
    "Relation",
    "RoadAccess",
    "SetRef",
    "SpecDraft",
    "SpecError",
    "SpecGap",
]
