"""Building-damage classes, normalised across sources (CAL FIRE DINS grades, xBD-like labels)."""

from __future__ import annotations

import json
import re
from enum import StrEnum
from functools import cache
from pathlib import Path


class DamageClass(StrEnum):
    """Normalised building-damage classes (CAL FIRE DINS / xBD-like), from least to most damage."""

    none = "none"
    affected = "affected"
    minor = "minor"
    major = "major"
    destroyed = "destroyed"


#: Every class that means "damaged" (all but ``none``), least to most.
ANY_DAMAGE: tuple[DamageClass, ...] = (
    DamageClass.affected,
    DamageClass.minor,
    DamageClass.major,
    DamageClass.destroyed,
)


#: the damage scales of the local layers (``core/data/layers.json``: raw value -> class), whose values may spell the
#: share of a structure damaged ("Minor (10-25%)", "Destroyed (>50%)")
LAYERS_FILE = Path(__file__).resolve().parents[1] / "data" / "layers.json"
_RANGE = re.compile(r"\(\s*(?:(?P<lo>\d+(?:\.\d+)?)\s*-\s*(?P<hi>\d+(?:\.\d+)?)|>\s*(?P<above>\d+(?:\.\d+)?))\s*%\s*\)")


@cache
def _scales() -> dict[str, dict[str, str]]:
    """The damage scales' values (raw value -> class), per scale."""
    with LAYERS_FILE.open(encoding="utf-8") as handle:
        return {name: dict(scale["values"]) for name, scale in json.load(handle)["damage_scales"].items()}


@cache
def grade_ranges() -> tuple[tuple[DamageClass, float, float, bool], ...]:
    """The percent of a structure damaged each class stands for, as the damage scales spell it: (class, lowest,
    highest, lowest excluded) — ``Minor (10-25%)`` is (minor, 10, 25, False), ``Destroyed (>50%)`` (destroyed,
    50, 100, True); a class no scale spells a range for has none (``No Damage`` is 0 %)."""
    out: dict[DamageClass, tuple[DamageClass, float, float, bool]] = {}
    for values in _scales().values():
        for raw, cls in values.items():
            if cls not in DamageClass.__members__:
                continue
            if m := _RANGE.search(raw):
                above = m["above"] is not None
                lo, hi = (float(m["above"]), 100.0) if above else (float(m["lo"]), float(m["hi"]))
                out.setdefault(DamageClass(cls), (DamageClass(cls), lo, hi, above))
            elif cls == DamageClass.none and any(_RANGE.search(r) for r in values):
                out.setdefault(DamageClass.none, (DamageClass.none, 0.0, 0.0, False))
    return tuple(sorted(out.values(), key=lambda r: list(DamageClass).index(r[0])))


def grades_bounded(op: str, percent: float) -> tuple[list[DamageClass], list[DamageClass]]:
    """The classes whose whole range meets "``op`` ``percent`` % damaged" (``op``: >, >=, <, <=), and those whose
    range straddles the bound (neither wholly in nor out: left out, the answer says so)."""
    kept: list[DamageClass] = []
    straddling: list[DamageClass] = []
    for cls, lo, hi, lo_open in grade_ranges():
        low_ok = {">": lo > percent or (lo == percent and lo_open), ">=": lo >= percent}.get(op)
        high_ok = {"<": hi < percent, "<=": hi <= percent}.get(op)
        ok = low_ok if low_ok is not None else high_ok
        some = {">": hi > percent, ">=": hi >= percent, "<": lo < percent, "<=": lo <= percent}[op]
        if ok:
            kept.append(cls)
        elif some:
            straddling.append(cls)
    return kept, straddling


def grade_spelling(cls: DamageClass) -> str:
    """How the grading damage scales spell a class ("Minor (10-25%)", "No Damage"), else its name."""
    graded = [values for values in _scales().values() if any(_RANGE.search(raw) for raw in values)]
    return next((raw for values in graded for raw, c in values.items() if c == cls), cls.value)


def graded_names() -> dict[str, DamageClass]:
    """The grades of the scales that grade (spell ranges), by their names without the range, lower case:
    {"no damage": none, "affected": affected, "minor": minor, ...}."""
    out: dict[str, DamageClass] = {}
    for values in _scales().values():
        if not any(_RANGE.search(raw) for raw in values):
            continue
        for raw, cls in values.items():
            if cls in DamageClass.__members__:
                out[raw.split("(")[0].strip().lower()] = DamageClass(cls)
    return out
