"""Code checks a model's reading before anything runs: its consistency (grades only on damage sets, a share's base
holds its part, a reference only with a relation ...) and the closed-class facts code found in the question (a
distance is a within / beyond / grid, a named feature class or layer is in the reading, "my area" needs one).
Each failed rule is one line the model sees on its retry and the answer quotes when it still fails."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from .schema import GRADES, MY_AREA, Reading


class Known(BaseModel):
    """What code read of the question (closed classes) and what the session holds."""

    distances_m: list[float] = Field(default_factory=list)
    k: int | None = None
    classes: list[str] = Field(default_factory=list, description="feature classes named in the question")
    layers: list[str] = Field(default_factory=list, description="the user's layers named: layer:<slug>")
    has_aoi: bool = False
    has_damage: bool = True
    grid: bool = False
    kinds: dict[str, list[str]] = Field(default_factory=dict, description="set name -> the kinds it can be narrowed to")
    masks: list[str] = Field(default_factory=list, description="raster layers that are masks or classes: areas")
    indices: list[str] = Field(default_factory=list, description="index sets computed from images: index:<name>")
    ungraded: bool = Field(
        default=False, description="the disaster's damage data tell damaged from undamaged only, without grades"
    )
    damage_family: str | None = Field(
        default=None, description="the geometry family of the disaster's damage layer: point, line or polygon"
    )
    relation: str | None = Field(
        default=None, description="within / beyond: the side of the distance stated, as code read its comparator"
    )
    reference: str | None = Field(default=None, description="the set code read the distance is from")

    def kinds_out_all(self, r: Reading) -> bool:
        """Whether ``r`` sets aside every kind its subject has (nothing would be left: a slip, not a reading)."""
        own = self.kinds.get(r.subject)
        return bool(r.kinds_out) and bool(own) and set(r.kinds_out) >= set(own or ()) and not r.kinds


def check_reading(r: Reading, known: Known) -> list[str]:
    """The rules ``r`` breaks, each as one line (empty: consistent with itself and with the facts)."""
    problems: list[str] = []
    grades, base = set(r.grades), set(r.share_of)
    if grades and r.subject != "damage":
        problems.append(f"grades apply only to the subject 'damage', not to '{r.subject}': leave grades empty")
    if r.subject == "damage" and not known.has_damage:
        problems.append("this disaster has no damage inspections: the subject cannot be 'damage'")
    if base and r.measure != "share":
        problems.append("share_of is the base of a share: leave it empty unless measure is 'share'")
    if base and not grades <= base:
        problems.append("a share's base (share_of) must contain every grade of its part (grades)")
    # with kinds: the kinds' share of those grades; with a relation: the share of those grades the relation keeps
    if base and grades and base == grades and not r.kinds and r.relation == "none":
        problems.append("a share whose base equals its part is always 100 %: share_of is the larger set")
    if r.separately and len(grades) < 2:
        problems.append("separately means one figure per grade: it needs at least two grades")
    if r.separately and r.measure not in ("count", "list"):
        problems.append("separately is for several counts at once")
    if (r.relation == "none") != (r.reference is None):
        problems.append(
            "a relation needs a reference and a reference needs a relation"
            if r.relation != "none"
            else "without a relation the reference must be null"
        )
    if r.reference is not None and r.reference == r.subject:
        problems.append("the reference must be another set than the subject")
    if r.reference == MY_AREA and not known.has_aoi:
        problems.append("no area of interest is set: the reference cannot be 'my_area'")
    damaged = set(GRADES) - {"undamaged"}
    if known.ungraded and r.subject == "damage":
        for name, said in (("grades", grades), ("share_of", base)):
            if said and said not in ({"undamaged"}, damaged, set(GRADES)):
                problems.append(
                    f"this disaster's damage data tell damaged from undamaged only, without grades: {name} is [], "
                    "[undamaged] or [affected, minor, major, destroyed] (damaged)"
                )
    if r.relation in ("within", "beyond") and not known.distances_m:
        problems.append(f"'{r.relation}' needs a distance and the question states none: use inside, outside or none")
    if known.distances_m and not known.grid and r.relation not in ("within", "beyond", "nearest"):
        d = f"{known.distances_m[0]:g} m"
        problems.append(f"the question states a distance ({d}): the relation is 'within' or 'beyond' it")
    if known.k is not None and r.relation != "nearest":
        problems.append(f"the question asks for the {known.k} nearest: the relation is 'nearest'")
    if r.measure in ("area", "length") and r.subject == "damage" and known.damage_family != "polygon":
        # (outlines of buildings have an area: the footprint of the Lahaina labels)
        problems.append(f"building points have no {r.measure}: measure the hazard or a layer")
    if r.group_by == "damage" and r.subject != "damage" and not r.subject.startswith("layer:"):
        problems.append("a breakdown by damage needs the subject 'damage'")
    if r.group_by == "structure_type" and r.subject != "damage":
        problems.append("a breakdown by structure type needs the subject 'damage'")
    if r.kinds and not set(r.kinds) <= set(known.kinds.get(r.subject, ())):
        own = ", ".join(known.kinds.get(r.subject, ())) or "none"
        problems.append(f"kinds narrow the subject: '{r.subject}' has the kinds {own}; leave kinds empty otherwise")
    if r.kinds_out and not set(r.kinds_out) <= set(known.kinds.get(r.subject, ())):
        own = ", ".join(known.kinds.get(r.subject, ())) or "none"
        problems.append(f"kinds_out sets kinds of the subject aside: '{r.subject}' has the kinds {own}")
    if both := sorted(set(r.kinds) & set(r.kinds_out)):
        problems.append(f"{', '.join(both)} cannot be both kept (kinds) and set aside (kinds_out)")
    elif r.kinds_out and known.kinds.get(r.subject) and set(r.kinds_out) >= set(known.kinds[r.subject]):
        problems.append("kinds_out sets every kind aside: nothing would be left to count")
    if r.subject in known.masks and known.indices:  # "what share of the fire mask burned": the mask bounds the area
        problems.append(
            f"{r.subject} is a mask: it is the area (reference, relation inside), and the values measured are "
            f"{known.indices[0]}: use it as the subject"
        )
    named = {r.subject, r.reference}
    for cls in known.classes:
        if cls not in named and r.subject != "damage":
            problems.append(f"the question names {cls}: use it as the subject or the reference")
    for layer in known.layers:
        if layer not in named:
            problems.append(f"the question names your layer {layer}: use it as the subject or the reference")
    return problems


def all_grades(grades: Sequence[str]) -> bool:
    """Whether ``grades`` keeps every structure (empty or every grade)."""
    return not grades or set(grades) == set(GRADES)
