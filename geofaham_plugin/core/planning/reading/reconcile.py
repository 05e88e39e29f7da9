"""The model's checked reading beside the specs code read: where they agree the specs run; where code read nothing
for a field (no damage word, no share base, one figure or several) the model's reading is applied and said; where
both read the field differently the question was read two ways: both are computed and the answer says so, never
one of them as the answer."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from ...domain.damage import DamageClass
from ..spec_schema import AnalysisSpec, Relation, SetRef
from .checks import all_grades
from .schema import GRADES, MY_AREA, Reading, class_grade, grade_class

ANY_GRADES = ("affected", "minor", "major", "destroyed")  # damaged buildings as a reference: any grade

FIELDS = ("subject", "grades", "relation", "reference", "measure", "share_of", "separately", "group_by", "kinds")
GROUP_NAMES = {"structure type": "structure_type", "damage class": "damage"}


class Difference(BaseModel):
    field: str
    code: str
    model: str
    code_read: bool  # code read words for this field (two readings), or left its default (the model's applies)


def set_name(ref: SetRef | None) -> str | None:
    if ref is None:
        return None
    if ref.kind in ("damage", "hazard"):
        return ref.kind
    if ref.kind == "features":
        return str(ref.feature_class)
    if ref.kind == "layer" and ref.index:  # an index computed from images: "index:dnbr"
        return "index:" + ref.index
    if ref.kind == "layer":
        return "layer:" + str(ref.layer_id).removeprefix("user:")
    return MY_AREA


def project(specs: Sequence[AnalysisSpec]) -> Reading:
    """The flat reading of code's specs (several specs of one analysis by grade: ``separately``)."""
    first = specs[0]
    grades = [class_grade(c) for c in first.subject.damage_classes]
    separately = False
    if len(specs) > 1 and all(s.subject.event_id == first.subject.event_id for s in specs):
        split = [s.subject.damage_classes for s in specs]
        if all(len(c) == 1 for c in split) and len({c[0] for c in split}) == len(split):
            grades, separately = [class_grade(c[0]) for c in split], True
    r = first.relation
    s = first.subject
    kinds = list(s.kinds) if s.kind == "features" else [v for vs in s.filters.values() for v in vs]
    return Reading(
        subject=set_name(first.subject) or "",
        grades=sorted(grades, key=GRADES.index),  # type: ignore[arg-type]
        relation=r.kind if r else "none",
        reference=set_name(r.reference) if r else None,
        measure=first.measure,
        # the kinds' share of the records of those grades: the base is the part's grades
        share_of=[class_grade(c) for c in (first.subject.damage_classes if s.filters_part else first.share_of)],  # type: ignore[misc]
        separately=separately,
        group_by=GROUP_NAMES.get(first.group_by or "", first.group_by) if first.group_by else None,
        kinds=sorted(kinds) if s.kind in ("damage", "features") else [],
        kinds_out=sorted(s.kinds_out) if s.kind == "features" else [],  # a damage set's are its kinds' complement
    )


def same_field(field: str, a: Reading, b: Reading) -> bool:
    """Whether two readings read ``field`` alike (every grade and no grade are alike; count and list too)."""
    if field in ("grades", "share_of"):
        x, y = getattr(a, field), getattr(b, field)
        return (all_grades(x) and all_grades(y)) or set(x) == set(y)
    if field == "measure":
        return {a.measure, b.measure} <= {"count", "list"} or a.measure == b.measure
    if field == "kinds":  # the kinds kept and those set aside
        return set(a.kinds) == set(b.kinds) and set(a.kinds_out) == set(b.kinds_out)
    return bool(getattr(a, field) == getattr(b, field))


def differences(
    code: Reading, model: Reading, code_read: set[str], *, has_aoi: bool, kinds_domain: Sequence[str] = ()
) -> list[Difference]:
    """Where the readings differ, field by field; ``code_read``: the fields code read from the question's words;
    ``kinds_domain``: every kind of the subject (most of them kept are said as "all but" the others)."""
    model = _normal(model, code, has_aoi)
    out = []
    for field in FIELDS:
        if not same_field(field, code, model):
            out.append(
                Difference(
                    field=field,
                    code=_shown_field(code, field, kinds_domain),
                    model=_shown_field(model, field, kinds_domain),
                    code_read=field in code_read,
                )
            )
    return out


def _normal(model: Reading, code: Reading, has_aoi: bool) -> Reading:
    """Readings that compile alike: "inside my area" is the area's restriction; features of a disaster with no
    relation are the ones in its hazard area (code says so); grades of a damage subject in a share with no base."""
    update: dict[str, object] = {}
    if has_aoi and model.relation == "inside" and model.reference == MY_AREA and code.relation == "none":
        update |= {"relation": "none", "reference": None}
    own = model.subject == "damage" == code.subject and code.relation == "none"  # a disaster's inspections are its own
    if own and model.relation == "inside" and model.reference == "hazard":
        update |= {"relation": "none", "reference": None}
    implied = code.relation == "inside" and code.reference == "hazard" and model.subject == code.subject
    if model.relation == "none" and implied and model.subject not in ("damage", "hazard"):
        update |= {"relation": "inside", "reference": "hazard"}
    return model.model_copy(update=update) if update else model


def _shown_field(r: Reading, field: str, domain: Sequence[str] = ()) -> str:
    if field != "kinds":
        return _shown(getattr(r, field))
    if r.kinds_out:
        return ("all" if not r.kinds else _shown(r.kinds)) + " but " + _shown(r.kinds_out)
    rest = [k for k in domain if k not in r.kinds]
    if r.kinds and rest and set(r.kinds) <= set(domain) and len(rest) < len(r.kinds):
        return "all but " + _shown(rest)  # "all but Utility Misc Structure", not thirteen types
    return _shown(r.kinds)


def _shown(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "all"
    return "none" if value is None else str(value)


def set_ref(name: str, event_id: int | None, grades: Sequence[str] = (), same: SetRef | None = None) -> SetRef:
    """The set a reading names, of the question's disaster; code's own set when it is the same one (its filters,
    kinds and place kept)."""
    if same is not None and set_name(same) == name:
        ref = same
    elif name in ("damage", "hazard"):
        ref = SetRef(kind=name, event_id=event_id)  # type: ignore[arg-type]
    elif name == MY_AREA:
        ref = SetRef(kind="aoi")
    elif name.startswith("layer:"):
        ref = SetRef(kind="layer", layer_id="user:" + name.removeprefix("layer:"))
    else:
        ref = SetRef(kind="features", feature_class=name, event_id=event_id)
    if ref.kind == "damage":
        ref = ref.model_copy(update={"damage_classes": classes_of(grades)})
    return ref


def overlay(
    specs: Sequence[AnalysisSpec],
    model: Reading,
    fields: set[str],
    *,
    distance_m: float | None = None,
    k: int | None = None,
    kind_field: str | None = None,
) -> list[AnalysisSpec]:
    """Code's specs with the model's value of ``fields``: the sets, the relation, grades, the share's base, one
    figure per grade, the measure, the grouping, the subject's kinds (a damage subject's ``kind_field`` values, a
    feature class's kinds). What the reading has no field for (other filters, places, the area of interest, road
    access) stays code's. Raises ``ValueError`` when the result is no valid spec."""
    out: list[AnalysisSpec] = []
    for spec in specs:
        ev = spec.subject.event_id or (spec.relation.reference.event_id if spec.relation else None)
        subject = spec.subject
        if "subject" in fields:
            subject = set_ref(model.subject, ev, model.grades, same=subject)
        if "grades" in fields and subject.kind == "damage":
            subject = subject.model_copy(update={"damage_classes": classes_of(model.grades)})
        if "kinds" in fields:
            subject = with_kinds(subject, model.kinds, kind_field, model.kinds_out)
        update: dict[str, object] = {"subject": subject}
        if fields & {"relation", "reference"}:
            update["relation"] = (
                None
                if model.relation == "none" or model.reference is None
                else Relation(
                    kind=model.relation,
                    reference=set_ref(model.reference, ev, (), same=spec.relation.reference if spec.relation else None),
                    distance_m=distance_m if model.relation in ("within", "beyond") else None,
                    k=(k or 1) if model.relation == "nearest" else None,
                )
            )
        if "share_of" in fields or ("measure" in fields and model.measure != "share"):
            update["share_of"] = classes_of(model.share_of) if model.measure == "share" else []
        if "measure" in fields and not {spec.measure, model.measure} <= {"count", "list"}:
            update["measure"] = model.measure
            if model.measure != "share":  # a share's weight (its area, its length) weighs no other measure
                update["weight"] = "count"
        if "group_by" in fields:
            group = {v: k for k, v in GROUP_NAMES.items()}.get(model.group_by or "", model.group_by)
            update["group_by"] = group
        if model.measure == "share" and kinds_part(model) and fields & {"kinds", "share_of", "measure"}:
            # "what share of the destroyed structures were sheds": the kinds narrow the part, the grades the base
            part = update["subject"]
            assert isinstance(part, SetRef)
            if part.kind == "damage" and part.filters:
                update |= {"subject": part.model_copy(update={"filters_part": True}), "share_of": []}
        base = spec.model_copy(update=update)
        if "separately" in fields and model.separately and base.subject.kind == "damage":
            for c in classes_of(model.grades):
                one = base.subject.model_copy(update={"damage_classes": [c]})
                out.append(AnalysisSpec.model_validate(base.model_copy(update={"subject": one}).model_dump()))
        else:
            out.append(AnalysisSpec.model_validate(base.model_dump()))
    return out


def kinds_part(r: Reading) -> bool:
    """Whether a share's kinds narrow only its part: the base's grades are the part's (both every grade, or the same
    ones), which without the kinds would be 100 %."""
    return bool(r.kinds) and (set(r.share_of) == set(r.grades) or (all_grades(r.share_of) and all_grades(r.grades)))


def with_kinds(ref: SetRef, kinds: Sequence[str], kind_field: str | None, kinds_out: Sequence[str] = ()) -> SetRef:
    """``ref`` narrowed to ``kinds`` instead of the kinds it had (none: the whole set), less the features of
    ``kinds_out`` (a feature class's; a damage set's kinds are already the complement of those set aside)."""
    if ref.kind == "features":
        return ref.model_copy(update={"kinds": list(kinds), "kinds_out": list(kinds_out)})
    field = kind_field or next(iter(ref.filters), None)
    if ref.kind != "damage" or field is None:
        if kinds:
            raise ValueError(f"{ref.kind} sets have no kinds")
        return ref
    filters = {k: v for k, v in ref.filters.items() if k != field} | ({field: list(kinds)} if kinds else {})
    return ref.model_copy(update={"filters": filters, "filters_out": {}})


def classes_of(grades: Sequence[str]) -> list[DamageClass]:
    return [] if all_grades(grades) else [grade_class(g) for g in sorted(set(grades), key=GRADES.index)]


__all__ = [
    "FIELDS",
    "Difference",
    "classes_of",
    "differences",
    "overlay",
    "project",
    "same_field",
    "set_ref",
    "with_kinds",
]
