"""The flat reading of a question the model fills: sets by generic names, grades, relation, measure, grouping.

Sets are named without their disaster (code reads the disaster, a closed class, and binds it): ``damage`` (the
building-damage inspections of the disaster), ``hazard`` (its burn area or flood extent), a feature class of
``osm_classes.json`` (``healthcare``, ``education`` ...), ``layer:<name>`` (a layer of the user's), and, as a
reference only, ``my_area`` (the user's area of interest). Grades are the damage scale's, least to most:
``undamaged``, ``affected``, ``minor``, ``major``, ``destroyed``. Kinds are the subject's narrower kinds as the data
spells them (a damage layer's structure types, a feature class's kinds in ``osm_classes.json``); the kinds it sets
aside ("besides houses", "other than hospitals") are ``kinds_out``. :func:`narrowed` makes the model's type for one
question: every open choice an enum of that question's candidates."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from ...domain.damage import DamageClass

Grade = Literal["undamaged", "affected", "minor", "major", "destroyed"]
GRADES: tuple[str, ...] = ("undamaged", "affected", "minor", "major", "destroyed")
RelationName = Literal["none", "inside", "outside", "within", "beyond", "nearest"]
MeasureName = Literal["count", "list", "share", "area", "length", "sum", "mean"]
GENERIC_SETS: tuple[str, ...] = ("damage", "hazard")
MY_AREA = "my_area"


def grade_class(grade: str) -> DamageClass:
    """The damage class of a reading's grade ("undamaged" is the scale's ``none``)."""
    return DamageClass.none if grade == "undamaged" else DamageClass(grade)


def class_grade(cls: DamageClass) -> str:
    return "undamaged" if cls == DamageClass.none else cls.value


class Reading(BaseModel):
    """What a question asks, as the model reads it (every field's candidates narrowed per question)."""

    subject: str = Field(description="the set counted, listed or measured")
    grades: list[Grade] = Field(
        default_factory=list, description="damage subject: the grades kept; empty = every inspected structure"
    )
    relation: RelationName = Field(default="none", description="how the subject relates to the reference")
    reference: str | None = Field(default=None, description="the set the relation is to; none without a relation")
    measure: MeasureName = Field(default="count", description="count, list (which / name them), share, area ...")
    share_of: list[Grade] = Field(
        default_factory=list, description="share of a damage subset: the grades of the base; empty = all structures"
    )
    separately: bool = Field(
        default=False, description="several figures asked at once: one per grade kept, never their sum"
    )
    group_by: str | None = Field(default=None, description="a breakdown: structure_type, damage, or a layer's field")
    kinds: list[str] = Field(
        default_factory=list,
        description="the subject's narrower kinds the question names (structure types, a class's kinds); [] = all",
    )
    kinds_out: list[str] = Field(
        default_factory=list,
        description="kinds the question sets aside (every other kind of the subject is kept); [] = none",
    )


def narrowed(
    subjects: list[str],
    references: list[str],
    group_fields: list[str],
    grades: list[str] | None = None,
    kinds: list[str] | None = None,
) -> type[Reading]:
    """The model's output type for one question: subject, reference, grades, grouping and kinds as enums of its
    candidates (no kinds to choose from: the list stays empty)."""
    allowed: Any = Literal[tuple(grades or GRADES)]  # type: ignore[valid-type]
    kind: Any = Literal[tuple(kinds)] if kinds else None  # type: ignore[valid-type]
    fields: dict[str, Any] = {
        "subject": (Literal[tuple(subjects)], ...),  # type: ignore[valid-type]
        "grades": (list[allowed], Field(default_factory=list)),
        "relation": (RelationName, "none"),
        "reference": ((Literal[tuple(references)] | None) if references else None, None),  # type: ignore[valid-type]
        "measure": (MeasureName, "count"),
        "share_of": (list[allowed], Field(default_factory=list)),
        "separately": (bool, False),
        "group_by": ((Literal[tuple(group_fields)] | None) if group_fields else None, None),  # type: ignore[valid-type]
        "kinds": (list[kind], Field(default_factory=list)) if kinds else (list[str], Field([], max_length=0)),
        "kinds_out": (list[kind], Field(default_factory=list)) if kinds else (list[str], Field([], max_length=0)),
    }
    return create_model("Reading", __base__=Reading, **fields)
