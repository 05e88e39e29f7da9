"""The structured answer: beside the text, what the answer states, machine-readable.

Every value the answer reports carries its label (what it counts or measures, the class or group it
belongs to, its unit) and the artifact it was read from; a yes/no question gets the stated yes/no; a
list answer gets its named items. The dock, export and the bench's judge read this, not the prose, so
"which number did the answer state for what" has one answer. Values are read from executed artifacts
(never from a model), like the text."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Measure = Literal[
    "count", "distance", "area", "length", "share", "mean", "median", "sum", "min", "max", "difference", "value"
]
Unit = Literal["count", "m", "km", "m2", "km2", "percent", "ratio", "none"]


class StatedValue(BaseModel):
    """One number the answer states."""

    label: str = Field(description="what it is, as the answer words it: 'healthcare features within 5,000 m'")
    value: float
    measure: Measure = "count"
    unit: Unit = "count"
    subject: str | None = Field(default=None, description="what is counted or measured: 'buildings', 'healthcare'")
    group_field: str | None = Field(default=None, description="the field a grouped value belongs to: 'damage_class'")
    group: str | None = Field(default=None, description="the group's value: 'destroyed'; None for a total")
    artifact_id: str


class StatedItem(BaseModel):
    """One named feature of a list answer ("which hospitals ..."), with its distance when one was measured."""

    name: str
    distance_m: float | None = None
    rank: int = Field(ge=1)
    artifact_id: str


class StructuredAnswer(BaseModel):
    """What the answer states, for machines. ``status`` is the run's: a value in a ``partial`` answer
    with ``not_applied`` entries was computed but is NOT the answer to the question."""

    status: Literal["answered", "partial", "failed", "cancelled", "timed_out"]
    values: list[StatedValue] = Field(default_factory=list)
    items: list[StatedItem] = Field(default_factory=list)
    yes_no: bool | None = Field(default=None, description="the stated yes/no where the question asks one")
    not_applied: list[str] = Field(default_factory=list, description="parts of the question no step applied")
    cited: list[str] = Field(default_factory=list)

    def totals(self) -> list[StatedValue]:
        """The ungrouped values (a grouped answer's total, or the single number of a count)."""
        return [v for v in self.values if v.group is None]

    def by_group(self, field: str | None = None) -> dict[str, float]:
        """Grouped values, group -> value (of one field when given)."""
        return {
            v.group: v.value for v in self.values if v.group is not None and (field is None or v.group_field == field)
        }
