"""Which attribute of a layer is an identifier (a key, a code, a row number), decided from its name and its
values: the one vocabulary for it. An identifier numbers features; its sum or mean is no measure of anything
("sum of clinic_id"), so no sum or mean is taken of one, and it is the name of a feature when nothing else is.

An attribute is an identifier when

- its name says so: ``id``, ``fid``, ``gid``, ``oid``, ``uid``, ``uuid``, ``guid``, ``objectid``, ``globalid``,
  ``pk``, ``code``, ``ref``, ``key``; a name ending in ``_id`` / ``-id`` / `` id`` (``clinic_id``, ``osm_id``), in
  ``Id`` or ``ID`` after a lower-case letter (``clinicId``, ``stationID``), an upper-case name ending in ``ID``
  (``OBJECTID``, ``FID``) that is no English word (``PAID``, ``VALID``), or ending in ``_code`` / ``_ref`` /
  ``_key`` / ``fips`` (``district_code``, ``COUNTYFIPS``); a name starting ``id_`` (``id_station``), ``ident``
  (identifier, identificador, identifiant: ``identifica``), ``id`` or ``cod`` before a consonant (``idclase``,
  ``codvia``; not ``idle``); or a telephone or postal code (``phone``, ``telefono``, ``zip``, ``postcode`` ...);
- or its values do: whole numbers, one different value on every feature, that run without a gap (1, 2, 3 …;
  101, 102, 103 …) on a layer of at least :data:`MIN_ROWS` features: a row number whatever it is called. (A
  measure such as a population is different on every feature too, but does not run 1, 2, 3.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

#: names that are identifiers on their own (compared in lower case, spaces and hyphens as underscores)
ID_NAMES = frozenset(
    ["id", "fid", "gid", "oid", "uid", "uuid", "guid", "objectid", "object_id", "globalid", "pk", "code", "ref", "key"]
)
#: the ends of a lower-case name that make it an identifier: clinic_id, osm_id, district_code, route_ref, row_key
_ID_END = re.compile(r"[_\s-](?:id|code|ref|key|uuid|guid|fid)$|fips$")
_ID_START = re.compile(r"^(?:id[_\s-]|ident|id(?=[bcdfghjkmnpqrstvwxz])|cod(?=[bcdfghjklmnpqrstvwxz])|codigo)")
#: numbers that call someone or a place: telephone and postal codes
_CONTACT = re.compile(r"^(?:tel|fax|phone|telephone|telefono|telefone|zip|zipcode|zip_code|postcode|postal_code|cp)$")
#: "clinicId", "stationID": the identifier suffix after a lower-case letter, in the name as written
_CAMEL_ID = re.compile(r"[a-z0-9]I[Dd]$")
#: upper-case words that end in ID and are no identifier
_WORDS_IN_ID = frozenset(
    [
        "acid",
        "arid",
        "avid",
        "braid",
        "fluid",
        "grid",
        "humid",
        "hybrid",
        "invalid",
        "liquid",
        "lucid",
        "paid",
        "raid",
        "rapid",
        "rigid",
        "said",
        "solid",
        "squid",
        "timid",
        "unpaid",
        "valid",
        "vivid",
        "void",
    ]
)
#: a layer needs this many features before a gap-free run of whole numbers is taken as a row number
MIN_ROWS = 10


def identifier_name(name: str) -> bool:
    """Whether the attribute's name alone says it is an identifier (see the module docstring)."""
    plain = str(name).strip()
    lower = re.sub(r"[\s-]+", "_", plain.lower())
    if lower in ID_NAMES or _ID_END.search(lower) or _ID_START.search(lower) or _CAMEL_ID.search(plain):
        return True
    if _CONTACT.search(lower):
        return True
    return plain.isupper() and plain.endswith("ID") and lower not in _WORDS_IN_ID


def row_numbers(values: Sequence[Any]) -> bool:
    """Whether ``values`` (one per feature) are whole numbers, all present, all different, without a gap."""
    if len(values) < MIN_ROWS:
        return False
    numbers = []
    for v in values:
        if isinstance(v, bool) or v is None:
            return False
        try:
            f = float(v)
        except (TypeError, ValueError):
            return False
        if f != f or not f.is_integer():  # NaN, or a fraction
            return False
        numbers.append(int(f))
    return len(set(numbers)) == len(numbers) and max(numbers) - min(numbers) + 1 == len(numbers)


def is_identifier(name: str, values: Sequence[Any] | None = None) -> bool:
    """Whether the attribute ``name`` (with ``values``, one per feature, when known) is an identifier."""
    return identifier_name(name) or (values is not None and row_numbers(values))


def identifier_refusal(name: str, measure: str) -> str:
    """The one line that says a ``measure`` (sum, mean) of the identifier ``name`` is not taken."""
    return f"{name} is an identifier (a key, code or number naming each feature): its {measure} measures nothing"


IDENTIFIER_HINT = "name the field that holds the quantity to add up or average (beds, population, capacity ...)"


#: the codes many agencies' data use for "unknown" in a numeric field (HIFLD's BEDS = -999): no value, where the
#: field's other values are never negative (a count, a capacity); summed or compared, they would be numbers
NO_DATA_CODES: tuple[float, ...] = (-999.0, -9999.0, -99999.0)


def no_data_mask(numbers: Any) -> Any:
    """Which of ``numbers`` (a pandas Series of floats) are a no-data code: one of :data:`NO_DATA_CODES` on a
    field none of whose other values is negative. (A field of negative values, a temperature, keeps them.)"""
    coded = numbers.isin(NO_DATA_CODES)
    if not coded.any() or (numbers[~coded & numbers.notna()] < 0).any():
        return coded & False
    return coded
