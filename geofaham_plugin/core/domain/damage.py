"""Building-damage classes, normalised across sources (CAL FIRE DINS grades, xBD-like labels)."""

from __future__ import annotations

from enum import StrEnum


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
