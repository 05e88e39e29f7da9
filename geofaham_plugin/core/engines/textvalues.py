"""Values field data writes as text, read the way people write them: numbers with the decimal comma and thousands
dots of Spain and most of Latin America, Africa and Europe ("1.234,56", "12.345 €", "45 %"), or the other way round
("1,234.56", "$1,200"); dates as numbers in either order (12/03/2024) or with month names in English, Spanish, French
and Portuguese ("3 de marzo de 2024", "March 7, 2024", "7 mars 2024"); empty text and placeholders ("N/A", "-",
"s/d") that mean no value; class values folded for comparison (case, accents, spaces).

A column is read with one convention: the decimal separator its unambiguous values show (a value with both marks,
a comma or dot not followed by exactly three digits, several of the same mark), and the day-month order its
unambiguous dates show (a first number over 12: day first). What could not be told is said."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from typing import Literal

import numpy as np
import pandas as pd

Decimal = Literal["auto", ".", ","]

#: text that means "no value" in a field (compared folded: lower case, no accents, spaces trimmed)
PLACEHOLDERS = frozenset(
    ["", "-", "--", "---", "?", "n/a", "na", "n.a.", "nan", "null", "none", "nil", "missing", "unknown", "s/d", "sd"]
    + ["sin dato", "sin datos", "nd", "n/d", "n.d.", "ninguno", "desconocido", "sem dados", "inconnu", "#n/a", "#n/d"]
)
_CURRENCY = re.compile(
    r"(?:us\$|r\$|[€$£¥₦₹]|\b(?:eur|euros?|usd|gbp|mxn|ars|clp|cop|pen|brl|xof|xaf|kes|ngn|mad|dh|dhs|cfa|fcfa)\b)",
    re.IGNORECASE,
)
_SPACES = re.compile(r"[\s\u00a0\u202f\u2009'’]")
_NUMBER_TEXT = re.compile(r"^[+-]?[\d.,]*\d[\d.,]*$")
_SCIENTIFIC = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)[eE][+-]?\d+$")
#: "2.450", "1,200": a mark that may group thousands or start three decimals ("0.125" cannot group: a leading 0)
_GROUPED = {".": re.compile(r"^[+-]?[1-9]\d{0,2}(?:\.\d{3})+$"), ",": re.compile(r"^[+-]?[1-9]\d{0,2}(?:,\d{3})+$")}


def fold(value: object) -> str:
    """Lower case, accents removed, inner spaces collapsed, trimmed: how class values and placeholders compare."""
    text = unicodedata.normalize("NFKD", str(value))
    text = "".join(c for c in text if not unicodedata.combining(c))
    return " ".join(text.casefold().split())


def is_placeholder(value: object) -> bool:
    """Whether a value is missing: None, NaN, or text that says no value (empty, "N/A", "-", "null", "s/d" ...)."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, str) and fold(value) in PLACEHOLDERS


def blank_mask(series: pd.Series) -> np.ndarray:
    """True where a value is missing or a placeholder (:func:`is_placeholder`)."""
    return np.array([is_placeholder(v) for v in series], dtype=bool)


# ------------------------------------------------------------------------------------------------- numbers
def _number_parts(value: object) -> tuple[str, float] | None:
    """(the number's text without currency, spaces and percent sign, a sign factor), or None when it is no
    number at all."""
    text = str(value).strip().replace("−", "-").replace("–", "-")
    negative = text.startswith("(") and text.endswith(")")  # (1.200): an accountant's negative
    text = _CURRENCY.sub("", text.strip("()"))
    text = _SPACES.sub("", text).rstrip("%").strip()
    if text.startswith(("-", "+")) and len(text) > 1:
        sign, text = (-1.0 if text[0] == "-" else 1.0), text[1:]
    else:
        sign = 1.0
    if not text or not (_NUMBER_TEXT.match(text) or _SCIENTIFIC.match(text)):
        return None
    return text, -sign if negative else sign


def _reading(text: str) -> tuple[str | None, dict[str, float | None]]:
    """The decimal mark the text shows ("." or ","; None when it could be either; "" when it has no mark) and its
    value under each mark."""
    if _SCIENTIFIC.match(text):
        return "", {".": float(text), ",": float(text)}
    dots, commas = text.count("."), text.count(",")

    def as_decimal(mark: str) -> float | None:
        other = "," if mark == "." else "."
        whole, _, fraction = text.rpartition(mark) if mark in text else (text, "", "")
        if mark in whole or (other in fraction):
            return None
        groups = whole.split(other)
        if len(groups) > 1 and (not 1 <= len(groups[0]) <= 3 or any(len(g) != 3 for g in groups[1:])):
            return None  # thousands marks in the wrong places: "1.23.4"
        digits = "".join(groups) + ("." + fraction if mark in text else "")
        try:
            return float(digits) if digits.strip(".") else None
        except ValueError:
            return None

    values = {".": as_decimal("."), ",": as_decimal(",")}
    if not dots and not commas:
        return "", values
    if dots and commas:
        mark = "." if text.rfind(".") > text.rfind(",") else ","
        return mark, values
    mark = "." if dots else ","
    if text.count(mark) > 1:  # "1.234.567": thousands marks, the decimal is the other
        return ("," if mark == "." else "."), values
    if _GROUPED[mark].match(text):
        return None, values  # "2.450", "1,200": thousands or three decimals
    return mark, values


def parse_numbers(series: pd.Series, decimal: Decimal = "auto") -> tuple[pd.Series, list[str], int]:
    """The numbers a column writes, as floats (NaN where there is none), the notes on how they were read, and how
    many values were placeholders. ``decimal``: the decimal mark; "auto": each value with a mark it shows (1.234,56;
    12,5; 1,234.5) by its own, the others ("12.500", "1,200": thousands or three decimals) by the mark the column's
    other values show, and when none shows one, as thousands (12.500 is 12500): a column of such values has no
    decimal part anywhere, which is how counts, not measurements, are written."""
    given = [
        isinstance(v, (int, float, np.number)) and not isinstance(v, bool) and not is_placeholder(v) for v in series
    ]
    parts = [None if is_placeholder(v) or g else _number_parts(v) for v, g in zip(series, given, strict=True)]
    placeholders = int(sum(isinstance(v, str) and is_placeholder(v) for v in series))
    readings = [_reading(p[0]) if p else None for p in parts]
    votes = {".": 0, ",": 0}
    ambiguous = 0
    for r in readings:
        if r is not None and r[0] in votes:
            votes[r[0]] += 1  # type: ignore[index]
        elif r is not None and r[0] is None:
            ambiguous += 1
    notes: list[str] = []
    shown = "," if votes[","] > votes["."] else "." if votes["."] else None  # the column's decimal mark, if any
    if decimal == "auto" and votes["."] and votes[","]:
        notes.append(
            f"the values mix decimal marks ({votes[',']} with ',', {votes['.']} with '.'): each read by its own"
        )
    if decimal == "auto" and ambiguous and shown is None:
        notes.append(
            f"{ambiguous} values such as 12.500 or 1,200 read as thousands (no value has a decimal part); say the "
            "decimal mark to read them as decimals"
        )
    out = np.array([float(v) if g else np.nan for v, g in zip(series, given, strict=True)])
    for i, (p, r) in enumerate(zip(parts, readings, strict=True)):
        if p is None or r is None:
            continue
        mark: str
        if decimal != "auto":
            mark = decimal
        elif r[0] in (".", ","):
            mark = str(r[0])
        elif r[0] is None:  # thousands or three decimals: as the column shows, else thousands
            mark = shown or ("," if "." in p[0] else ".")
        else:
            mark = "."
        value = r[1][mark]
        if value is not None:
            out[i] = p[1] * value
    percent = sum(1 for v in series if isinstance(v, str) and v.strip().endswith("%"))
    if percent:
        notes.append(f"{percent} values with a percent sign kept as the number written (45 % is 45)")
    if (decimal == "," or (decimal == "auto" and shown == ",")) and any(parts):
        notes.insert(0, "numbers read with ',' as the decimal mark and '.' grouping thousands (1.234,56 is 1234.56)")
    return pd.Series(out, index=series.index), notes, placeholders


# --------------------------------------------------------------------------------------------------- dates
_MONTHS: dict[str, int] = {}
for _n, _names in enumerate(
    [
        "january jan enero ene janvier janv janeiro",
        "february feb febrero fevrier fevr fev fevereiro",
        "march mar marzo mars marco",
        "april apr abril abr avril avr",
        "may mayo mai maio",
        "june jun junio juin junho",
        "july jul julio juillet juil julho",
        "august aug agosto ago aout",
        "september sep sept septiembre setiembre set septembre setembro",
        "october oct octubre octobre outubro out",
        "november nov noviembre novembre novembro",
        "december dec diciembre dic decembre dezembro dez",
    ],
    start=1,
):
    for _name in _names.split():
        _MONTHS[_name] = _n
_MONTH = "(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_ISO = re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?)?(?!\d)")
_YMD = re.compile(r"(?<!\d)(\d{4})[/.](\d{1,2})[/.](\d{1,2})(?!\d)")
_NUMERIC = re.compile(r"(?<![\d/.-])(\d{1,2})[/.-](\d{1,2})[/.-](\d{4}|\d{2})(?![\d/.-])")
_DAY_MONTH = re.compile(
    rf"(?<!\d)(\d{{1,2}})(?:st|nd|rd|th|er|o|º|°)?[\s/.-]*(?:de\s+|of\s+)?({_MONTH})[\s/.,-]*(?:de\s+|del\s+)?(\d{{4}})(?!\d)"
)
_MONTH_DAY = re.compile(rf"(?<![a-z])({_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})(?!\d)")


def _date(y: int, m: int, d: int, hh: int = 0, mm: int = 0, ss: int = 0) -> datetime | None:
    try:
        return datetime(y, m, d, hh, mm, ss)
    except ValueError:
        return None


def _year(text: str) -> int:
    y = int(text)
    return y + (2000 if y < 70 else 1900) if len(text) == 2 else y


def _found(text: str, dayfirst: bool) -> datetime | None:
    """The first date written in ``text`` (month names in four languages, ISO, numbers day first or not)."""
    folded = fold(text)
    found: list[tuple[int, datetime | None]] = []
    if m := _ISO.search(folded):
        found.append((m.start(), _date(*(int(g) for g in m.groups() if g is not None))))
    if m := _YMD.search(folded):
        found.append((m.start(), _date(int(m[1]), int(m[2]), int(m[3]))))
    if m := _DAY_MONTH.search(folded):
        found.append((m.start(), _date(int(m[3]), _MONTHS[m[2].rstrip(".")], int(m[1]))))
    if m := _MONTH_DAY.search(folded):
        found.append((m.start(), _date(int(m[3]), _MONTHS[m[1].rstrip(".")], int(m[2]))))
    if m := _NUMERIC.search(folded):
        a, b, y = int(m[1]), int(m[2]), _year(m[3])
        if a > 12 or b > 12:  # the order the numbers themselves say
            found.append((m.start(), _date(y, b, a) if a > 12 else _date(y, a, b)))
        else:
            found.append((m.start(), _date(y, b, a) if dayfirst else _date(y, a, b)))
    found = [f for f in found if f[1] is not None]
    return min(found, key=lambda f: f[0])[1] if found else None


def day_first(texts: list[str]) -> tuple[bool, str | None]:
    """Whether numeric dates of a column are day first (12/03/2024: 12 March), from the ones that say it (a first
    number over 12: day first; a second over 12: month first); day first when none does (most of the world's
    order). The note says when it was assumed or the column mixes both."""
    days = months = ambiguous = 0
    for text in texts:
        for m in _NUMERIC.finditer(fold(text)):
            a, b = int(m[1]), int(m[2])
            days += a > 12 >= b
            months += b > 12 >= a
            ambiguous += a <= 12 and b <= 12
    if days and months:
        return (
            True,
            f"numeric dates are written both ways ({days} day first, {months} month first): each read by its own, the rest day first",
        )
    if months:
        return False, None
    if ambiguous and not days:
        return True, f"{ambiguous} numeric dates such as 03/04/2024 could be read either way: read day first (3 April)"
    return True, None


def parse_dates(series: pd.Series) -> tuple[pd.Series, list[str], int]:
    """The dates a column writes (the first one in each value's text), as datetimes (NaT where there is none), the
    notes on how they were read, and how many values were placeholders."""
    texts = [None if is_placeholder(v) else (v.isoformat() if hasattr(v, "isoformat") else str(v)) for v in series]
    placeholders = int(sum(is_placeholder(v) and isinstance(v, str) for v in series))
    first, note = day_first([t for t in texts if t])
    values = [_found(t, first) if t else None for t in texts]
    out = pd.Series(pd.to_datetime(pd.Series(values, dtype=object), errors="coerce").to_numpy(), index=series.index)
    return out, [note] if note else [], placeholders


# ------------------------------------------------------------------------------------------------ encoding
#: what text that went through the wrong encoding shows: UTF-8 read as Latin-1 or Windows-1252 ("ClÃ\xadnica",
#: "Ã±", "â€™"), bytes no codec could read (U+FFFD), control characters (Windows-1252 bytes read as Latin-1: \x92),
#: letters lost to "?" in a conversion ("Cl?nica")
ENCODING_SIGNS: dict[str, re.Pattern[str]] = {
    "UTF-8 read as Latin-1 (mojibake)": re.compile("[\u00c2-\u00c5][\u0080-\u00bf]|\u00e2\u20ac|\u00c3[\u0080-\u00ff]"),
    "unreadable bytes (U+FFFD)": re.compile("\ufffd"),
    "control characters": re.compile("[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]"),
    "letters lost to '?'": re.compile(r"[^\W\d_]\?[^\W\d_]"),
}


def encoding_problems(series: pd.Series) -> dict[str, tuple[int, str]]:
    """For a text column: each sign of a wrong encoding it shows -> (how many values, the first example)."""
    found: dict[str, tuple[int, str]] = {}
    for value in series:
        if not isinstance(value, str):
            continue
        for sign, pattern in ENCODING_SIGNS.items():
            if pattern.search(value):
                n, example = found.get(sign, (0, value))
                found[sign] = (n + 1, example)
    return found
