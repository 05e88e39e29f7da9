"""What a question says about the values of a layer's attributes: category values it names ("camp Bravo",
"open clinics"), yes/no fields it uses as an adjective ("functional water points") and number comparisons
("more than 5000 litres"). Shared by the spec reader (which applies them as filters) and constraint coverage
(which checks that some step applied them), so what one reads the other checks."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence

from ..domain.layer_names import layer_words
from ..engines.layers import UserField, UserLayer
from .prepass import (
    BY_WORDS,
    COMPARISON_WORDS,
    EACH_WORDS,
    PAIR_WORDS,
    SMALL_NUMBER_WORDS,
    UNIT_METRES,
    YEAR_COMPARISON_WORDS,
    alternation,
    blank_spans,
    normalise,
)

# words too general to name a category value on their own ("house", "yes", "other")
GENERIC_VALUE_WORDS = frozenset(
    re.findall(
        r"\w+",
        "home homes house building buildings structure structures residence story storey single multi family misc "
        "other others unknown none yes no true false all mixed wide double triple",
    )
)

# a parenthesis of examples ("(single-family homes, mobile homes and so on)", "(e.g. schools)"): no filter
EXAMPLES = re.compile(
    r"\((?=[^)]*\b(?:and\s+so\s+on|etc|e\.?\s?g|for\s+example|such\s+as|like|por\s+ejemplo|par\s+exemple|por\s+exemplo)\b)[^)]*\)"
)


def position(text: str, phrases: Sequence[str]) -> int | None:
    """Where the first of ``phrases`` (or its plural) is said in the normalised question; a phrase's words may be
    written apart or joined by hyphens ("Single Family" said "single-family")."""
    found = [m.start() for phrase in phrases if (m := re.search(rf"(?<!\w){_plural(phrase)}(?!\w)", text))]
    return min(found, default=None)


def _plural(phrase: str) -> str:
    """The phrase's pattern, its last word singular or plural ("university": universities too)."""
    spaced = _spaced(phrase)
    return spaced[:-1] + "(?:y|ies)" if re.search(r"[^aeiou]y$", normalise(phrase).strip()) else spaced + "(?:e?s)?"


def _spaced(phrase: str) -> str:
    return r"[\s/-]+".join(re.escape(w) for w in normalise(phrase).split())


def value_matches(
    text: str, values: Sequence[str], only: Sequence[str] = (), exclude: Sequence[str] = (), first_word: bool = False
) -> list[str]:
    """The values of a category field the question names: a value's words from the start (two or more:
    "mobile home" names every "Mobile Home ... Wide"), or a one-word value that is not generic ("school",
    "church"), plural or singular. ``only``: count a match only where it is one of these words. ``first_word``: a
    value's first word alone names it too when it is not generic ("commercial" of "Commercial Building Single
    Story"; for a structure-type field, whose values all name kinds of structure)."""
    text = EXAMPLES.sub(" ", text)  # "(single-family homes, mobile homes and so on)": examples, not a filter
    hits = []
    for value in values:
        words = layer_words(value)
        if not words:
            continue
        phrases = [" ".join(words[:n]) for n in range(2, len(words) + 1)]
        # its last words, where they tell it from values of the same head and no other value has them ("double
        # wide" of "Mobile Home Double Wide" beside "Mobile Home Single Wide"; never "field clinic" of a name)
        others = [" ".join(layer_words(v)) for v in values if v != value]
        for n in range(2, len(words)):
            tail, head = " ".join(words[-n:]), " ".join(words[:-n])
            siblings = any(o.startswith(head + " ") for o in others)
            if siblings and not any(f" {tail} " in f" {o} " for o in others):
                phrases.append(tail)
        if (len(words) == 1 or first_word) and len(words[0]) >= 4 and words[0] not in GENERIC_VALUE_WORDS:
            phrases = [words[0], *phrases[: 0 if len(words) == 1 else None]]
        if only:
            phrases = [p for p in phrases if any(p == normalise(w) for w in only)]
        phrases = [p for p in phrases if not any(p == normalise(w) for w in exclude)]
        if phrases and position(text, phrases) is not None:
            hits.append(value)
    return most_specific(text, said_in_full(text, hits))


def said_in_full(text: str, hits: Sequence[str]) -> list[str]:
    """Of the values named, less those named only inside another value said in full ("Mixed Commercial/Residential"
    said whole does not name "Commercial Building ..." too)."""
    spans = [
        (m.start(), m.end())
        for value in hits
        if len(words := layer_words(value)) >= 2
        for m in re.finditer(rf"(?<!\w){_spaced(' '.join(words))}(?:e?s)?(?!\w)", text)
    ]
    if not spans:
        return list(hits)
    blanked = blank_spans(text, spans)
    out = []
    for value in hits:
        words = layer_words(value)
        phrases = [" ".join(words[:n]) for n in range(1, len(words) + 1)]
        if position(blanked, phrases) is not None or any(
            re.fullmatch(rf"{_spaced(' '.join(words))}(?:e?s)?", text[a:b]) for a, b in spans
        ):
            out.append(value)
    return out


def most_specific(text: str, hits: Sequence[str]) -> list[str]:
    """Of values named by the words they share ("mobile homes": every "Mobile Home ... Wide"), the ones the question
    also names by a word only they have, said beside another word of theirs ("double-wide mobile homes": "Mobile
    Home Double Wide" alone); all of them when it names none that way."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for value in hits:
        groups.setdefault(tuple(layer_words(value)[:2]), []).append(value)
    out: list[str] = []
    for group in groups.values():
        words = {v: layer_words(v) for v in group}
        common = set.intersection(*(set(w) for w in words.values()))
        said = [v for v in group if len(group) > 1 and _said_beside(text, words[v], common)]
        out += said or group
    return [v for v in hits if v in out]


def _said_beside(text: str, words: list[str], common: set[str]) -> bool:
    """Whether a word of ``words`` not in ``common`` is said next to one of its neighbours in the value."""
    phrases = []
    for i, w in enumerate(words):
        if w in common or len(w) < 3:
            continue
        for n in words[max(0, i - 1) : i] + words[i + 1 : i + 2]:
            phrases += [f"{w} {n}", f"{n} {w}"]
    return bool(phrases) and position(text, phrases) is not None


_YES = frozenset({"yes", "y", "true", "t", "1", "si", "oui", "sim", "s", "o"})
_NO = frozenset({"no", "n", "false", "f", "0", "non", "nao"})
_NOT_BEFORE = re.compile(r"(?:\bnon[\s-]?|\bnot\s+|\bun|\bno\s+|\bin)$")


def narrows(f: UserField, kept: Sequence[object]) -> bool:
    """Whether keeping ``kept`` of field ``f`` drops any feature with a value: a value every feature has describes
    the layer ("the Horta Sud area" of a one-area layer), it asks for no filter."""
    return len({str(v).casefold() for v in kept}) < f.distinct


def yes_no_values(f: UserField) -> tuple[list, list] | None:
    """A field that says yes or no (yes/no, true/false, 1/0, Y/N, sí/no, oui/non): its (yes, no) values as the data
    spells them; None for any other field."""
    if f.type == "boolean":
        return [True], [False]
    if not f.values or len(f.values) > 2:
        return None
    yes = [v for v in f.values if normalise(str(v)).strip() in _YES]
    no = [v for v in f.values if normalise(str(v)).strip() in _NO]
    return (yes, no) if yes and len(yes) + len(no) == len(f.values) else None


def yes_no_said(text: str, f: UserField) -> tuple[str, list] | None:
    """A yes/no field the question uses as an adjective ("functional water points", "the non-functional ones",
    "not accessible"): (the words said, the values to keep); None when it does not name the field."""
    domain = yes_no_values(f)
    words = layer_words(f.name)
    if domain is None or not words or any(len(w) < 4 for w in words):
        return None
    said = " ".join(words)
    m = re.search(
        rf"(?:(?<=\bnon-)|(?<![\w-])){re.escape(said)}(?!\w)"
        rf"(?!\s*(?:is|are|equals?|=|es|est|e|sea|seja)\s+(?:not\s+)?(?:{'|'.join(sorted(_YES | _NO))})\b)",
        text,
    )  # "non-functional" says the field, "semi-functional" does not; "whose functional is no" is a condition
    if m is None:  # "whose functional is no" says the value itself (a condition, read as one)
        return None
    negated = bool(_NOT_BEFORE.search(text[max(0, m.start() - 6) : m.start()]))
    keep = domain[1] if negated else domain[0]
    start = m.start()
    if negated:
        start -= len(_NOT_BEFORE.search(text[max(0, m.start() - 6) : m.start()]).group(0))  # type: ignore[union-attr]
    return text[start : m.end()], keep


def layer_filters(text: str, entry: UserLayer, names: bool) -> dict[str, list[str]]:
    """The values of a layer of yours the question names, as filters: a category value ("open clinics"), a yes/no
    field said as an adjective ("functional water points"); with ``names``, a feature by its name too ("camp
    Bravo": a reference the question singles out)."""
    return field_filters(text, entry.fields, skip=() if names else (entry.name_field,))


def field_filters(text: str, fields: Sequence[UserField], skip: Sequence[str | None] = ()) -> dict[str, list[str]]:
    """The values of ``fields`` the question names, as filters: a category value as the data spells it ("general
    acute care"), a yes/no field said as an adjective ("with a helipad"); fields in ``skip`` are not read."""
    filters: dict[str, list[str]] = {}
    for f in fields:
        if f.name in skip:
            continue
        if (said := yes_no_said(text, f)) is not None:
            if narrows(f, said[1]):
                filters[f.name] = [str(v) for v in said[1]]
            continue
        category = f.type == "text" and f.values
        if category and (matched := value_matches(text, [str(v) for v in f.values or []])) and narrows(f, matched):
            filters[f.name] = matched
        elif (written := value_after_name(text, f)) is not None:
            filters[f.name] = [written]  # "idsubclase 14", "estado: Prevista": the field's name, then its value
    return filters


def value_after_name(text: str, f: UserField) -> str | None:
    """The value of ``f`` written right after its name ("idsubclase 14", "capa = Centros educativos"), as the data
    spells it: both the name and the value exist in the data (a closed class), so a code is read too."""
    if not f.values or len(f.name) < 3:
        return None
    # each value as it may be written (a whole number stored as 14.0 is written 14); the longest said wins
    spelled = [(normalise(str(v)), str(v)) for v in f.values]
    spelled += [(str(int(v)), str(v)) for v in f.values if isinstance(v, float) and v.is_integer()]
    spelled.sort(key=lambda pair: len(pair[0]), reverse=True)
    name = re.escape(f.name.lower())
    for m in re.finditer(rf"(?<![\w=]){name}\s*(?:=|:|\bis\b|\bes\b|\best\b|\be\b)?\s*", text):
        rest = text[m.end() :].lstrip("'\"(")
        for said, value in spelled:
            if re.match(rf"{re.escape(said)}(?![\w]|\.\d)", rest):
                return value
    return None


# "more than 5000", "at least 10", "over 2,000", "fewer than 3", "mas de 50", "plus de 50"; a distance or a share
# is not one (followed by a unit of length or a percent sign). The word after the number, if any, is its unit.
COMPARISON = re.compile(
    rf"(?<!\w)(?P<op>{alternation(w for said in COMPARISON_WORDS.values() for w in said)})\s+(?P<n>\d[\d,]*(?:\.\d+)?)"
    r"(?![\d,.]\d|\d)"
    r"(?!\s*(?:%|percent|por\s*ciento|pour\s*cent|km|m\b|metres|meters|metros|miles?|mi\b|ft|feet|kilomet|minutes?|min\b|h\b|hours?"
    rf"|(?:{alternation(UNIT_METRES)})\b))"  # every length unit the pre-pass reads (one table)
    r"(?:\s+(?P<unit>[a-z_]+))?"
)
#: a year compared ("built before 1990", "after 2005", "since 1985", "antes de 1990"): a number comparison of a
#: layer of yours only (a disaster's imagery dates are the pre-pass's); a date ("after 2025-01-07") is not one
YEAR_COMPARISON = re.compile(
    rf"(?<!\w)(?P<op>{alternation(w for said in YEAR_COMPARISON_WORDS.values() for w in said)})\s+"
    r"(?:the\s+year\s+|el\s+ano\s+|l'annee\s+|o\s+ano\s+)?(?P<n>1[5-9]\d\d|20\d\d)(?![\d/.-]\d|\d)"
)
_OP_OF = {
    " ".join(words.split()): op
    for table in (COMPARISON_WORDS, YEAR_COMPARISON_WORDS)
    for op, said in table.items()
    for words in said
}
#: the words of a field that holds a year ("year_built", "construction_yr", "ano", "annee")
YEAR_FIELD_WORDS = frozenset({"year", "yr", "built", "construction", "constructed", "ano", "annee", "anno", "jahr"})
_EQUALS = re.compile(
    r"(?:whose|where|with|cuy[oa]s?|cuj[oa]s?|dont)\s+(?:the\s+|le\s+|la\s+|l')?(?P<field>[\w-]+(?:\s[\w-]+)?)\s+"
    r"(?P<neg>is\s+not|isn't|is|are|equals?|==?|es|est|e|sea|seja)\s+(?:['\"])?(?P<value>[\w-]+(?:\s[\w-]+)?)"
)
PEOPLE = re.compile(
    r"(?<!\w)(?:people|persons|residents|inhabitants|population|personas|habitantes|poblacion|personnes"
    r"|population|pessoas|moradores|populacao)(?!\w)"
)
POPULATION_FIELDS = frozenset({"population", "pop", "inhabitants", "residents", "people", "habitantes", "poblacion"})


#: an area said as a number ("over 1 000 m²", "parks larger than 2 ha", "de mas de 500 metros cuadrados"): a size the
#: features must have (a closed class: a number and an area unit); normalised text ("²" kept)
AREA_SAID = re.compile(
    r"(?<![\w.,])(?P<n>\d{1,3}(?:[ ,.]\d{3})+|\d+(?:[.,]\d+)?)\s*"
    r"(?:m2|m²|km2|km²|ha|hectares?|hectareas?|acres?|square\s+(?:met(?:re|er)s?|kilomet(?:re|er)s?|km|miles?|feet)"
    r"|sq\.?\s*(?:m|km|ft)|metros?\s+cuadrados?|metres?\s+carres?|metros?\s+quadrados?|kilometros?\s+cuadrados?"
    r"|kilometres?\s+carres?|quilometros?\s+quadrados?)(?![\w²])"
)


def area_thresholds(text: str) -> list[tuple[str, float]]:
    """The areas a (normalised) question states, as said and as numbers ("1 000 m2" -> ("1 000 m2", 1000.0))."""
    out = []
    for m in AREA_SAID.finditer(text):
        digits = re.sub(r"[ ,.](?=\d{3}\b)", "", m["n"]).replace(",", ".")
        with contextlib.suppress(ValueError):
            out.append((m[0], float(digits)))
    return out


def comparisons(text: str) -> list[tuple[str, float]]:
    """The number comparisons the question makes ("more than 5000" -> ("more than 5000", 5000.0))."""
    out = []
    for m in COMPARISON.finditer(text):
        try:
            out.append((text[m.start() : m.end("n")], float(m["n"].replace(",", ""))))
        except ValueError:
            continue
    return out


#: a count a yes/no question states ("destroy zero buildings?", "did 2722 homes burn?"): no distance, share, year or k
_COUNT_SAID = re.compile(
    r"(?<![\w.,-])(?P<n>\d[\d,]*|zero|cero|nenhum|nenhuma)(?![\d,.]\d|\d)"
    r"(?!\s*(?:%|percent|por\s*ciento|pour\s*cent|km|m\b|metres|meters|metros|miles?|mi\b|ft|feet|kilomet|minutes?|min\b|h\b"
    rf"|(?:{alternation(UNIT_METRES)})\b"
    r"|hours?|nearest|closest|mas\s+cercan|mas\s+proxim|plus\s+proche|mais\s+proxim|days?|weeks?|dias?|jours?|semaines?))"
)
_ZERO = {"zero": 0.0, "cero": 0.0, "nenhum": 0.0, "nenhuma": 0.0}


def compared_count(text: str) -> tuple[str, float] | None:
    """The count a (normalised) yes/no question compares its answer with: ("==", 0) for "destroy zero buildings",
    (">", 2000) for "more than 2,000 homes"; None when it states none (then yes means "any")."""
    for m in COMPARISON.finditer(text):
        with contextlib.suppress(ValueError):
            return _OP_OF[" ".join(m["op"].split())], float(m["n"].replace(",", ""))
    for m in _COUNT_SAID.finditer(text):
        n = m["n"]
        if n in _ZERO:
            return "==", 0.0
        if len(n) == 4 and 1900 <= int(n) <= 2100:  # a year
            continue
        with contextlib.suppress(ValueError):
            return "==", float(n.replace(",", ""))
    return None


#: "between 1950 and 1980", "entre 100 y 500": a range, both of whose bounds must be applied
BETWEEN = re.compile(
    r"(?<!\w)(?:between|entre)\s+(?P<a>\d[\d,]*(?:\.\d+)?)\s+(?:and|y|et|e)\s+(?P<b>\d[\d,]*(?:\.\d+)?)(?![\d,.]\d|\d)"
    r"(?!\s*(?:%|percent|km|m\b|metres|meters|metros|miles?|mi\b|ft|feet|kilomet|minutes?|min\b|h\b|hours?))"
)
#: "older than 50 years", "newer than 10 years", "50 years old": an age, which no field holds as such
AGE = re.compile(r"(?<!\w)(?:(?:older|newer|younger)\s+than\s+(?P<n>\d+)\s+years?|(?P<m>\d+)\s+years?\s+old)(?!\w)")


def year_comparisons(text: str) -> list[tuple[str, float]]:
    """What the question compares of a layer of yours beyond :func:`comparisons`: years ("built before 1990" ->
    ("before 1990", 1990.0)), both bounds of a range ("between 1950 and 1980") and ages ("older than 50 years")."""
    found = [(text[m.start() : m.end("n")], float(m["n"])) for m in YEAR_COMPARISON.finditer(text)]
    for m in BETWEEN.finditer(text):
        found += [(text[m.start() : m.end()], float(m[bound].replace(",", ""))) for bound in ("a", "b")]
    found += [(m[0], float(m["n"] or m["m"])) for m in AGE.finditer(text)]
    return found


def _year_field(text: str, entry: UserLayer, before: int) -> str | None:
    """The field of ``entry`` a compared year is of: a numeric field said before it ("year built before 1990"),
    else the one numeric field whose name says a year ("year_built" for "built before 1990")."""
    if field := said_field(text, entry, True, before):
        return field
    years = [
        f.name for f in entry.fields if f.type in ("integer", "real") and set(layer_words(f.name)) & YEAR_FIELD_WORDS
    ]
    return years[0] if len(years) == 1 else None


# a unit a field's name ends with (capacity_l, weight_kg, area_ha) -> the words that say it
_UNIT_OF = {
    "l": r"litres|liters|litros|l",
    "m3": r"cubic\s+met(?:re|er)s|m3",
    "kg": r"kilograms?|kilos?|kg",
    "t": r"tonnes?|tons?",
    "ha": r"hectares?|ha",
    "km": r"kilomet(?:re|er)s?|km",
    "km2": r"square\s+kilomet(?:re|er)s|km2",
    "usd": r"dollars?|usd",
    "eur": r"euros?|eur",
}


class WhereNotSaid(ValueError):
    """The question compares or names a value but not which field of the layer holds it."""


def field_pattern(f: UserField, units: bool = False) -> re.Pattern[str]:
    """How a question says field ``f``: its name's letters with or without separators ("capacity_l", "capacity l"),
    its first word when the rest is a unit ("capacity"), and with ``units`` the unit's words ("litres")."""
    words = layer_words(f.name)
    spellings = ["".join(words)]
    if len(spellings[0]) < 3:  # "X", "Y", "id": no word a question says ("y" is Spanish "and")
        return re.compile(r"(?!)")
    unit_words = ""
    if len(words) > 1 and all(len(w) <= 3 and not w.isdigit() for w in words[1:]):
        spellings.append(words[0])  # "capacity" of capacity_l: the rest is a unit
        if units and (unit := _UNIT_OF.get(words[-1])):
            unit_words = "|" + unit  # "more than 5000 litres" of capacity_l
    spelled = "|".join(r"[\s_-]?".join(re.escape(c) for c in spelling) for spelling in spellings) + unit_words
    if len(words) == 1 and len(words[0]) > 3 and words[0].endswith("s") and not words[0].endswith("ss"):
        spelled += "|" + re.escape(words[0][:-1])  # "bed count" of BEDS: a plural name said in the singular
    return re.compile(rf"(?<!\w)(?:{spelled})s?(?!\w)")


def said_field(text: str, entry: UserLayer, numeric: bool, before: int) -> str | None:
    """The field of ``entry`` said nearest before position ``before`` (its name as words, or a population
    field for "inhabitants", "people" ...)."""
    best: tuple[int, str] | None = None
    for f in entry.fields:
        if numeric and f.type not in ("integer", "real"):
            continue
        for m in field_pattern(f, units=numeric).finditer(text):
            distance = abs(before - m.start())
            if best is None or distance < best[0]:
                best = (distance, f.name)
    if best is None and numeric and PEOPLE.search(text):
        return next((f.name for f in entry.fields if set(layer_words(f.name)) & POPULATION_FIELDS), None)
    return best[1] if best else None


def where_said(text: str, entry: UserLayer) -> dict[str, object]:
    """field, op and value of the condition said of ``entry``: "with more than 5000 inhabitants", "whose severity
    is high". Raises :class:`WhereNotSaid` when a number is compared with no field of the layer said."""
    if m := COMPARISON.search(text):
        value = float(m["n"].replace(",", ""))
        field = said_field(text[m.start() :], entry, True, 0) if m["unit"] else None  # "over 5000 inhabitants"
        field = field or said_field(text, entry, True, m.start())
        if field is None:
            numeric = [f.name for f in entry.fields if f.type in ("integer", "real")]
            raise WhereNotSaid(
                f"say which field to compare with {m['n']}" + (f" (numbers: {', '.join(numeric)})" if numeric else "")
            )
        return {"field": field, "op": _OP_OF[" ".join(m["op"].split())], "value": value}
    if m := YEAR_COMPARISON.search(text):
        field = _year_field(text, entry, m.start())
        if field is None:
            numeric = [f.name for f in entry.fields if f.type in ("integer", "real")]
            raise WhereNotSaid(
                f"say which field holds the year to compare with {m['n']}"
                + (f" (numbers: {', '.join(numeric)})" if numeric else " (the layer has no numeric field)")
            )
        return {"field": field, "op": _OP_OF[" ".join(m["op"].split())], "value": float(m["n"])}
    for m in _EQUALS.finditer(text):
        field = said_field(m["field"], entry, False, 0)
        if field is None:
            continue
        said = m["value"]
        values = getattr(entry.field(field), "values", None)
        if values:  # the value as in the data, or the first of its words that is one
            by_text = {str(v).casefold(): str(v) for v in values}
            said = next((by_text[w] for w in (said, said.split()[0]) if w in by_text), None)
            if said is None:
                continue
        return {"field": field, "op": "!=" if m["neg"] in ("is not", "isn't") else "=", "value": said}
    raise WhereNotSaid("say the field and the value to keep (e.g. 'with population over 5000', 'whose status is open')")


# the words before a polygon layer that ask for one result per polygon ("in each evacuation zone", "per district")
ZONES_BEFORE = re.compile(
    rf"(?:\b(?:{'|'.join(EACH_WORDS)}|per|by|por|par)\s+(?:of\s+(?:the|my|our)\s+|(?:my|our|the)\s+)?|\bpor\s+cada\s+)$"
)


_BY_FIELD = (
    r"(?<!\w)(?:"
    + alternation(BY_WORDS)
    + r"{each})\s+(?:their\s+|its\s+|the\s+|su\s+|leur\s+)?(?P<word>[a-z_]+)(?:[\s-](?P<word2>[a-z_]+))?"
)
_BY = re.compile(_BY_FIELD.format(each=""))
_BY_OR_EACH = re.compile(_BY_FIELD.format(each=r"|(?:(?:of|in|around)\s+)?(?:each|every)|en\s+cada|cada|chaque"))


def field_grouping(text: str, entry: UserLayer | Sequence[UserField], each: bool = False) -> str | None:
    """The field of a layer of yours (or of ``fields``) a question groups by ("per status", "grouped by zone";
    with ``each``, "each land use" too)."""
    fields = entry.fields if isinstance(entry, UserLayer) else entry
    for m in (_BY_OR_EACH if each else _BY).finditer(text):
        word = m["word"]
        two = word + (m["word2"] or "")  # "land use" for a field landuse or land_use
        for f in fields:
            names = {" ".join(layer_words(f.name)), *layer_words(f.name)}
            compact = "".join(layer_words(f.name))
            if m["word2"] and two.rstrip("s") == compact.rstrip("s"):
                return f.name
            if word in names or word.rstrip("s") in names or f"{word}s" in names:
                return f.name
    return None


# "homes", "houses", "viviendas": the residential values of a structure-type field, when no value is named itself
RESIDENTIAL_SAID = re.compile(
    r"(?<!\w)(?:homes?|houses?|residences?|residential|dwellings?|viviendas?|casas?|hogares|maisons?|logements?"
    r"|habitations?|moradias?|residencias?)(?!\w)"
)
_RESIDENTIAL_VALUE = re.compile(r"residen|(?<!motor )\bhomes?\b|dwelling|house|apartment|condo", re.IGNORECASE)


#: words for kinds of structure that a structure-type domain spells otherwise (DINS: "Multi Family Residence ...",
#: "Utility Misc Structure") -> a pattern of the values they name, and how the answer says the reading
STRUCTURE_WORDS: tuple[tuple[re.Pattern[str], re.Pattern[str], str], ...] = (
    (
        re.compile(r"(?<!\w)(?:apartments?|apartment\s+(?:buildings?|blocks?)|flats|condos?|condominiums?|duplex(?:es)?"
                   r"|apartamentos?|pisos|appartements?|immeubles?)(?!\w)"),
        re.compile(r"multi[\s-]?family", re.IGNORECASE),
        "multi-family residences",
    ),
    (
        re.compile(r"(?<!\w)(?:garages?|sheds?|outbuildings?|barns?|garajes?|cobertizos?|hangares?|remises?)(?!\w)"),
        re.compile(r"utility|misc|outbuilding|garage|shed", re.IGNORECASE),
        "utility and miscellaneous structures (detached garages, sheds, other outbuildings)",
    ),
)  # fmt: skip
#: a storey count said: "two-story", "more than one storey", "at least 2 floors", "3 or more levels", "single-storey",
#: "de una planta", "de varios pisos", "com dois andares", "a plusieurs niveaux". The storeys are a closed class: a
#: number (or a word for one, many or a single), compared or not, then a storey word; the damage layers spell
#: "Single Story" (one) and "Multi Story" (two or more).
_STOREY_UNIT = r"(?:stor(?:e)?y|stories|storeys|levels?|floors?|pisos?|plantas?|alturas?|andares?|pavimentos?|niveaux?)"
#: a count's comparator said after it ("one storey or more", "de una planta o de más", "ou plus", "ou mais")
_MORE, _FEWER = r"more|mas|plus|mais", r"fewer|less|menos|moins"
_STOREY_COUNT = (
    r"\d+|"
    + alternation(w for w in SMALL_NUMBER_WORDS if w not in PAIR_WORDS)
    + r"|single|multi|multiple|several|many|varios|varias|plusieurs|muitos"
    r"|diversos|mono"
)
STOREY_SAID = re.compile(
    rf"(?<!\w)(?:(?P<op>{alternation(w for said in COMPARISON_WORDS.values() for w in said)})\s+)?"
    rf"(?:(?P<n0>{_STOREY_COUNT})-?\s*(?:or|and|to|o|y|ou|et|e|a|-)\s*)?(?P<n>{_STOREY_COUNT})(?P<more>\s+or\s+(?:more|fewer|less)|\+)?[\s-]?{_STOREY_UNIT}(?!\w)"
    rf"(?P<after>\s+(?:or|o|ou)\s+(?:de\s+)?(?:{_MORE}|{_FEWER}|(?P<n_after>{_STOREY_COUNT}))(?!\w))?"
)
#: the words that say "many" storeys, and the one that says one
_MANY_STOREYS = frozenset(
    {"multi", "multiple", "several", "many", "varios", "varias", "plusieurs", "muitos", "diversos"}
)
_ONE_STOREY = frozenset({"single", "mono"})
#: the storey values of a structure-type domain: (spelled, lowest and highest storeys, how the answer says it)
STOREYS: tuple[tuple[re.Pattern[str], int, float, str], ...] = (
    (re.compile(r"multi[\s-]?stor", re.IGNORECASE), 2, float("inf"), "the multi-storey types (two storeys or more)"),
    (re.compile(r"single[\s-]?stor", re.IGNORECASE), 1, 1, "the single-storey types"),
)


def _storey_count(word: str) -> tuple[float, float] | None:
    if word in _MANY_STOREYS:
        return 2.0, float("inf")
    if word in _ONE_STOREY:
        return 1.0, 1.0
    if word.isdigit() or word in SMALL_NUMBER_WORDS:
        n = float(word) if word.isdigit() else float(SMALL_NUMBER_WORDS[word])
        return n, n
    return None


def storey_range(m: re.Match[str]) -> tuple[float, float] | None:
    """The storeys a storey phrase allows ("more than one storey": 2 to ∞), or None when it names no count."""
    counts = [_storey_count(word) for word in (m["n0"], m["n"], m["n_after"]) if word]  # "de una planta o de varias"
    if any(count is None for count in counts):
        return None
    low, high = min(c[0] for c in counts if c), max(c[1] for c in counts if c)  # "one or two storeys": 1 to 2
    op = _OP_OF.get(" ".join((m["op"] or "").split()))
    more = (m["more"] or "").strip()
    if m["after"] and not m["n_after"]:  # "de una planta o de más": the comparator after the storey word
        more = "or more" if re.search(rf"(?:{_MORE})$", m["after"]) else "or fewer"
    if op == ">" or (op is None and more in ("or more", "+")):
        low, high = (low + 1 if op == ">" else low), float("inf")
    elif op == ">=":
        high = float("inf")
    elif op == "<" or (op is None and more in ("or fewer", "or less")):
        low, high = 1.0, (high - 1 if op == "<" else high)
    elif op == "<=":
        low = 1.0
    return (low, high) if low <= high else None


def structure_values(text: str, values: Sequence[str]) -> tuple[list[str] | None, list[str]]:
    """The structure-type values named by words the domain spells otherwise ("apartments": Multi Family Residence
    ..., "garages": Utility Misc Structure), and the readings to state; (None, []) when no such word is said."""
    found: list[str] = []
    readings: list[str] = []
    for said, spelled, reading in STRUCTURE_WORDS:
        if m := said.search(text):
            found += [v for v in values if spelled.search(v) and v not in found]
            readings.append(f"'{m[0]}' taken as {reading}")
    return (found, readings) if readings else (None, [])


def storey_values(text: str, values: Sequence[str]) -> tuple[list[str] | None, str | None]:
    """The values of the storeys said ("two-story houses": the "... Multi Story" values; "more than one storey"
    too) and how the answer says the reading, or (None, None) when no storey count is said or it spans both."""
    said = [(m[0].strip(), storey_range(m)) for m in STOREY_SAID.finditer(text)]
    ranges = [r for _, r in said if r is not None]
    if not ranges:
        return None, None
    low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)  # "one-storey and multi-storey alike": both
    kinds = [(spelled, reading) for spelled, lo, hi, reading in STOREYS if lo <= high and low <= hi]
    if len(kinds) != 1:
        return None, None
    spelled, reading = kinds[0]
    words = " and ".join(f"'{w}'" for w, r in said if r is not None)
    return [v for v in values if spelled.search(v)], f"{words} taken as {reading}"


def residential_values(text: str, values: Sequence[str]) -> list[str]:
    """The residential values of a structure-type domain ("Single Family Residence ...", "Mobile Home ...") when the
    question says homes, houses or dwellings; [] otherwise."""
    if not RESIDENTIAL_SAID.search(EXAMPLES.sub(" ", text)):  # "(single-family homes, mobile homes and so on)"
        return []
    return [v for v in values if _RESIDENTIAL_VALUE.search(v)]
