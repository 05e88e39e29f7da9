"""How the arguments of the newer everyday operations are read from an instruction: the field and type of a
conversion ("convert amount to a number, written 1.234,56"), the field and mapping of a normalisation, the N, order
and measure of a top N. The chain planner (planning/chain.py) asks :data:`SAID_ARGS` for an argument kind of
operations.json it does not read itself; a reader gets the normalised instruction (lower case, accents removed), the
instruction as written and the user's layer, and raises ``error`` (the planner's SpecError) with what to say when the
instruction does not say it. Kept beside the tools while planning/ is rewritten."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..engines.layers import UserLayer
from ..engines.textvalues import fold
from ..engines.user_files import check_user_table
from ..errors import ToolFailed

Reader = Callable[[str, str, UserLayer, type[Exception]], Any]

# ------------------------------------------------------------------------------------------------------ fields
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "twelve": 12, "fifteen": 15, "twenty": 20, "fifty": 50, "hundred": 100,
    "uno": 1, "una": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8, "nueve": 9,
    "diez": 10, "veinte": 20, "un": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "dix": 10, "vingt": 20,
    "dois": 2, "duas": 2, "quatro": 4, "dez": 10,
}  # fmt: skip
NUMBER = r"(?:\d{1,6}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"


def _number(token: str) -> int:
    return int(token) if token.isdigit() else _NUMBER_WORDS[token]


def _words(name: str) -> list[str]:
    """A field name's words as an instruction writes them: beds_total, bedsTotal, "Beds Total" -> beds, total."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [w for w in re.split(r"[\W_]+", spaced.lower()) if w]


def field_spans(text: str, entry: UserLayer, kinds: tuple[str, ...] = ()) -> list[tuple[int, int, str]]:
    """(start, end, field) of each field of the layer the normalised text names (its name as written, or its words
    with spaces, underscores or nothing between; a plural s allowed), in order, the longest name first where two
    overlap. ``kinds``: only fields of those types (text, integer, real ...)."""
    found: list[tuple[int, int, str]] = []
    for f in entry.fields:
        if kinds and f.type not in kinds:
            continue
        words = _words(f.name)
        if not words:
            continue
        spelled = r"[\s_-]?".join(re.escape(w) for w in words)
        for m in re.finditer(rf"(?<![\w]){spelled}s?(?![\w])", text):
            found.append((m.start(), m.end(), f.name))
    found.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    kept: list[tuple[int, int, str]] = []
    for span in found:
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


def without_layer_names(text: str, entry: UserLayer) -> str:
    """The text with the layer's own name blanked ("the parcelas' uso": parcelas names the layer, not its field
    parcela), its length kept so positions hold."""
    for alias in sorted({entry.name.lower(), *entry.aliases}, key=len, reverse=True):
        words = _words(alias)
        if not words:
            continue
        spelled = r"[\s_-]?".join(re.escape(w) for w in words)
        text = re.sub(rf"(?<![\w]){spelled}(?:s|es)?'?s?(?![\w])", lambda m: " " * len(m.group(0)), text)
    return text


def _fields_list(entry: UserLayer) -> str:
    return ", ".join(f"{f.name} ({f.type})" for f in entry.fields)


# ---------------------------------------------------------------------------------------------- conversion
TYPE_WORDS = {
    "integer": r"integers?|whole\s+numbers?|ints?|enteros?|entiers?|inteiros?",
    "real": r"(?:real\s+|decimal\s+)?numbers?|numeric(?:al)?|floats?|decimals?|reals?|doubles?|numeros?(?:\s+decimales)?"
    r"|numericos?|nombres?\s+(?:decimaux|reels)|decimales|numeriques?",
    "date": r"dates?|datetimes?|fechas?|timestamps?|datas",
    "text": r"text|strings?|texto|texte|cadenas?(?:\s+de\s+texto)?",
    "boolean": r"booleans?|bools?|true\s*/\s*false|yes\s*/\s*no|logicos?|booleanos?|booleens?",
}
_TYPE = re.compile(
    r"(?<![\w])(?:to|into|as|a|en|em|para|como)\s+(?:an?\s+|un[ao]?s?\s+|des\s+|real\s+|proper\s+|true\s+)?"
    r"(?P<type>" + "|".join(f"(?P<{k}>{v})" for k, v in TYPE_WORDS.items()) + r")(?![\w])"
)
_NUMERIC = re.compile(r"(?<![\w])(?:numeric(?:al)?|numericos?|numeriques?)(?![\w])")  # "make beds numeric"
_COMMA = re.compile(
    r"decimal\s+comma|comma\s+(?:as\s+(?:the\s+)?)?decimal|coma\s+decimal|virgule\s+decimale|virgula\s+decimal"
    r"|(?:spanish|european|continental|french|german|italian|portuguese|brazilian|latin\s+american)\s+(?:number\s+)?"
    r"(?:format|notation|style|numbers)|formato\s+(?:espanol|europeo|latino)|\d{1,3}\.\d{3},\d"
)
_POINT = re.compile(
    r"decimal\s+(?:point|dot)|punto\s+decimal|point\s+decimal|(?:english|us|american|british)\s+(?:number\s+)?"
    r"(?:format|notation|style)|\d{1,3},\d{3}\.\d"
)


def read_types(text: str, question: str, entry: UserLayer, error: type[Exception]) -> dict[str, Any]:
    """``{"types": {field: kind}, "decimal": ...}`` of "convert beds to integer and opened to a date": the fields said
    before each type (since the previous one), else right after it; the decimal mark when said ("decimal comma",
    "Spanish format", a number written 1.234,56)."""
    text = without_layer_names(text, entry)
    types: dict[str, str] = {}
    found = [(m, next(k for k in TYPE_WORDS if m.group(k))) for m in _TYPE.finditer(text)]
    found += [
        (m, "real") for m in _NUMERIC.finditer(text) if not any(t.start() <= m.start() < t.end() for t, _ in found)
    ]
    found.sort(key=lambda f: f[0].start())
    matches = [m for m, _ in found]
    start = 0
    for i, (m, kind) in enumerate(found):
        before = [f for s, _, f in field_spans(text[start : m.start()], entry)]
        if not before:  # "convert to integer the beds field"
            end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
            before = [f for s, _, f in field_spans(text[m.end() : end], entry)][:1]
        for field in before:
            types.setdefault(field, kind)
        start = m.end()
    if not types:
        raise error(
            "say which field to convert and to what (e.g. 'convert beds to integer'); the fields: "
            + _fields_list(entry)
        )
    out: dict[str, Any] = {"types": types}
    if _COMMA.search(text) or _COMMA.search(question):
        out["decimal"] = ","
    elif _POINT.search(text) or _POINT.search(question):
        out["decimal"] = "."
    return out


# ------------------------------------------------------------------------------------------- normalisation
_QUOTE = "\"'“”‘’«»"
_PAIR = re.compile(
    rf"[{_QUOTE}]([^{_QUOTE}]{{1,80}})[{_QUOTE}]\s*(?:->|→|=>|=|:|\bto\b|\binto\b|\bas\b|\ba\b|\ben\b|\bpor\b|\bpara\b)"
    rf"\s*[{_QUOTE}]([^{_QUOTE}]{{1,80}})[{_QUOTE}]"
)
_CASE = re.compile(
    r"(?P<lower>lower[\s-]?case|lowercase|minusculas?|minuscules?)|(?P<upper>upper[\s-]?case|uppercase|capital\s+letters"
    r"|mayusculas?|majuscules?|maiusculas?)|(?P<title>title[\s-]?case|capitali[sz]ed?\s+words?|capitali[sz]e\s+each\s+word)"
)
_NO_ACCENTS = re.compile(
    r"(?:without|no|remove|strip|drop|sin|quit\w*|sans|enlev\w*|sem|tir\w*)\s+(?:the\s+|los\s+|les\s+|os\s+)?"
    r"(?:accents?|diacritics?|acentos?|tildes?)"
)
_UNLISTED_NULL = re.compile(
    r"(?:others?|the\s+rest|unlisted|unmapped|anything\s+else)\s+(?:[\w'-]+\s+){0,4}(?:null|empty|blank|missing|none)"
)
_MAPPING_FILE = re.compile(r"(?<![\w/\\.-])([A-Za-z0-9][A-Za-z0-9_.-]{0,80}\.(?:csv|json))\b", re.IGNORECASE)


def _mapping_file(path: Path) -> dict[str, str]:
    """A mapping table: a JSON object (value -> value), a JSON list of [from, to] or {"from", "to"} records, or a
    CSV whose first column is the value as written and the second what it becomes (a header row first)."""
    if path.suffix.lower() == ".json":
        data = json.loads(path.read_text(encoding="utf-8-sig"))
        if isinstance(data, dict):
            return {str(k): str(v) for k, v in data.items()}
        pairs = [(r.get("from"), r.get("to")) if isinstance(r, dict) else tuple(r[:2]) for r in data]
        return {str(a): str(b) for a, b in pairs if a is not None and b is not None}
    import pandas as pd

    table = pd.read_csv(path, sep=None, engine="python", dtype=str, keep_default_na=False, encoding="utf-8-sig")
    if table.shape[1] < 2:
        raise ValueError(f"{path.name} needs two columns: the value as written, and what it becomes")
    return {str(a): str(b) for a, b in zip(table.iloc[:, 0], table.iloc[:, 1], strict=True) if str(a).strip()}


def read_normalise(text: str, question: str, entry: UserLayer, error: type[Exception]) -> dict[str, Any]:
    """``{"field": ..., "mapping": {...} | None}`` of "normalise the land use values ('resid' -> 'residential')": the
    text field said (the first; else the layer's only text field with few values), the pairs written in quotes, or a
    mapping table named by its file (.csv, .json) beside the layer's file."""
    text = without_layer_names(text, entry)
    said = field_spans(text, entry, ("text",)) or field_spans(text, entry)
    if said:
        field = said[0][2]
    else:
        categories = [f.name for f in entry.fields if f.type == "text" and f.values and f.name != entry.name_field]
        if len(categories) != 1:
            raise error("say which field's values to normalise; the fields: " + _fields_list(entry))
        field = categories[0]
    mapping = {a.strip(): b.strip() for a, b in _PAIR.findall(question)}
    described = entry.field(field)
    known = {fold(v) for v in (described.values or [])} if described is not None else set()
    if any(fold(v) in known for pair in mapping.items() for v in pair):
        # the chain planner reads a value of the layer said in the instruction as the ones to keep ("open clinics"):
        # the pairs would narrow the layer to their values before it is normalised, a silently wrong file
        raise error(
            f"values of {field} written in the instruction would be read as the ones to keep: give the mapping as a "
            "file beside the layer (e.g. mapping.csv: the value as written, what it becomes)"
        )
    style: dict[str, Any] = {}
    if m := _CASE.search(text):
        style["case"] = "lower" if m["lower"] else "upper" if m["upper"] else "title"
    if _NO_ACCENTS.search(text):
        style["accents"] = False
    if _UNLISTED_NULL.search(text):
        style["unmatched"] = "null"
    for m in _MAPPING_FILE.finditer(question):
        folders = {Path(p).parent for p in (entry.source_file, entry.path) if p}
        found = next((d for d in folders if os.path.lexists(d / m.group(1))), None)
        if found is None:
            raise error(f"no mapping file {m.group(1)} beside your layer '{entry.name}'")
        try:  # a user's file: through the one door (a link out of the folder, a pipe: refused)
            mapping.update(_mapping_file(check_user_table(found / m.group(1), folder=found)))
        except ToolFailed as exc:
            raise error(f"{exc}" + (f"; {exc.hint}" if exc.hint else "")) from None
        except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise error(f"{m.group(1)} is no mapping table: {exc}") from None
    return {"field": field, "mapping": mapping or None, **style}


# ----------------------------------------------------------------------------------------------------- top N
_MORE = r"largest|biggest|highest|greatest|most|longest|heaviest|widest|top|mayor(?:es)?|mas\s+grandes?|mas\s+altos?|plus\s+grand(?:e|s|es)?|plus\s+eleve(?:e|s|es)?|maior(?:es)?|mais\s+alt[oa]s?"
_LESS = r"smallest|lowest|least|fewest|shortest|bottom|menor(?:es)?|mas\s+pequen[oa]s|mas\s+baj[oa]s|plus\s+petit(?:e|s|es)?|plus\s+bas(?:se|ses)?|menores"
_RANK = re.compile(
    rf"(?:\b(?:top|bottom|first|primer[oa]s|premiers?|primeir[oa]s)\s+(?P<n1>{NUMBER})\b"
    rf"|\b(?P<n2>{NUMBER})\s+(?:[\w-]+\s+){{0,3}}?(?P<w2>{_MORE}|{_LESS})\b"
    rf"|\b(?P<w3>{_MORE}|{_LESS})\s+(?P<n3>{NUMBER})\b)"
)
_AREA = re.compile(r"\b(?:area|surface|superficie|size|largest|biggest|smallest|mas\s+grandes?|plus\s+grand\w*|aire)\b")
_LENGTH = re.compile(r"\b(?:length|longest|shortest|longitud|longueur|comprimento|mas\s+largos?)\b")


def _numbers(entry: UserLayer, name: str) -> bool:
    """Whether a text field holds numbers written as text (most of its known values read as numbers; a field with
    too many values to list is given the benefit of the doubt)."""
    import pandas as pd

    from ..engines.textvalues import parse_numbers

    f = entry.field(name)
    if f is None or not f.values:
        return f is not None
    numbers, _, _ = parse_numbers(pd.Series(list(f.values), dtype=object))
    return bool(numbers.notna().sum() >= 0.8 * len(f.values))


def read_top(text: str, question: str, entry: UserLayer, error: type[Exception]) -> dict[str, Any]:
    """``{"n": ..., "order": "desc" | "asc", "by": field | "area" | "length"}`` of "the 5 districts with the highest
    population", "top 10 by beds", "the 3 smallest parks": the number, the direction its word says, the numeric
    field said (else area or length when the words are of size)."""
    text = without_layer_names(text, entry)
    m = _RANK.search(text)
    if m is None:
        raise error("say how many to keep, e.g. 'the 5 largest' or 'top 10 by population'")
    n = _number(m["n1"] or m["n2"] or m["n3"])
    word = m["w2"] or m["w3"] or m.group(0).split()[0]
    order = "asc" if re.fullmatch(_LESS, word) else "desc"
    said = field_spans(text, entry, ("integer", "real")) or [
        s for s in field_spans(text, entry) if _numbers(entry, s[2])
    ]
    if said:  # the measure said after the rank's words ("the 5 largest by population"), else before them
        after = [f for s, _, f in said if s >= m.end()]
        before = [f for s, _, f in said if s < m.start()]
        by = (after or before[-1:] or [said[0][2]])[0]
    elif _LENGTH.search(text) or (entry.geometry == "line" and _AREA.search(text)):
        by = "length"
    elif _AREA.search(text) and entry.geometry == "polygon":
        by = "area"
    else:
        numbers = [f.name for f in entry.fields if f.type in ("integer", "real")]
        raise error(
            "say the measure to rank by (a numeric field, or area / length)"
            + (f"; the numbers: {', '.join(numbers)}" if numbers else "")
        )
    return {"n": n, "order": order, "by": by}


#: argument kind of operations.json -> its reader
SAID_ARGS: dict[str, Reader] = {"types": read_types, "normalise": read_normalise, "top": read_top}
