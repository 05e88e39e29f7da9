"""The language of a question (English, Spanish, French, Portuguese) and the fixed texts of an answer in it.

:func:`detect_language` reads function words and spelling cues (``¿``, ``ñ``, ``-ção``, ``qu'``,
``combien``, ``cuántos``, ``quantos`` ...), never place or disaster names: "Los Angeles", "Porto Alegre" or
"Valencia" say where, not in which language. Anything unclear is English.

:func:`phrase` gives a fixed text of an answer (a section title, a banner, the words of a label) in a
language, from ``core/data/answer_phrases.json`` (key -> {en, es, fr, pt}); :func:`damage_class_name` and
:func:`feature_class_name` name damage classes and map feature classes. Ground floor: the standard
library only."""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache
from pathlib import Path
from typing import Literal, get_args

Language = Literal["en", "es", "fr", "pt"]
LANGUAGES: tuple[Language, ...] = get_args(Language)
DATA_DIR = Path(__file__).resolve().parents[1] / "data"
PHRASES_FILE = DATA_DIR / "answer_phrases.json"


def _weights(words: str, weight: float) -> dict[str, float]:
    return dict.fromkeys(words.split(), weight)


# Function words and frequent question words of each language (accents removed, lower case), with a weight.
# Words two languages share count for both; words English shares ("a", "do", "no", "as", "me") are left out.
_WORDS: dict[Language, dict[str, float]] = {
    "en": _weights(
        "the of in how many much what which where who are is were was there within near from by with and to for "
        "did does any have has been nearest closest inside outside than less more around each per this that "
        "those these it its into got get show list count give tell me my our your all were affected damaged "
        "destroyed buildings homes houses schools hospitals fire flood share percentage between "
        "about at or not only also still left remain remained lie lies located",
        1.0,
    ),
    "es": {
        **_weights(
            "el los las del al y hay cuantos cuantas cuanto cuanta cuales cual donde fueron fue estan esta "
            "dentro fuera cerca menos mas con sin por para cada una uno unos unas su sus lo quedaron "
            "quedan queda tiene tienen hubo edificios viviendas casas escuelas hospitales centros salud zona "
            "inundada inundacion incendio destruidos destruidas destruyo danados afectados muy todos todas "
            "porcentaje cuantas proporcion kilometros metros alrededor mayor menor mas cercanos cercanas "
            "hasta desde sobre este estos estas ese esos",
            1.0,
        ),
        **_weights("cuantos cuantas cuanto hay del los las fueron quedaron y", 2.0),
    },
    "fr": {
        **_weights(
            "le la les des du au aux et est sont ont ete combien quels quelles quel quelle dans sur pres "
            "moins plus avec sans par pour chaque une il elle ils y qui ce cette ces leur leurs "
            "batiments maisons ecoles hopitaux inondee inondation incendie detruits detruites endommages "
            "touches pourcentage autour proches proche loin lesquels ou trouvent situes",
            1.0,
        ),
        **_weights("combien les des du aux est sont ont ete dans pres quels quelles", 2.0),
    },
    "pt": {
        **_weights(
            "o os da das dos na nas nos pela pelo pelas pelos ao aos em um uma e ou foram foi estao esta "
            "quantos quantas quanto quais qual onde dentro fora perto menos mais com sem por para cada seu sua "
            "ficaram ficam tem edificios casas escolas hospitais centros saude zona inundada inundacao incendio "
            "destruidos destruidas destruiu danificados afetados atingidos todos todas percentagem porcentagem "
            "proporcao quilometros metros volta proximos proximas desde sobre este estes estas isso "
            "existem ha houve",
            1.0,
        ),
        **_weights("quantos quantas quais foram estao ficaram pelo pela nas nos em uma", 2.0),
    },
}
# shared across Romance languages: they tell Romance from English, not one Romance language from another
_ROMANCE = _weights("de la que en un se entre como", 0.5)
_ROMANCE_LANGUAGES: tuple[Language, ...] = ("es", "fr", "pt")
_SPELLING: list[tuple[re.Pattern[str], dict[Language, float]]] = [
    (re.compile(r"[¿¡]"), {"es": 4.0}),
    (re.compile(r"ñ", re.I), {"es": 3.0}),
    (re.compile(r"ç[ãõ]|[ãõ]", re.I), {"pt": 3.0}),
    (re.compile(r"ções|ção|ções", re.I), {"pt": 2.0}),
    (re.compile(r"[èùîûëïœ]", re.I), {"fr": 2.0}),
    (re.compile(r"[âêô]", re.I), {"fr": 0.75, "pt": 0.75}),
    (re.compile(r"[áíóú]", re.I), {"es": 0.75, "pt": 0.75}),
    (re.compile(r"(?<![\w'’])(?:l|d|qu|n|s|c|j|m|jusqu|lorsqu|puisqu)['’](?=\w)", re.I), {"fr": 2.0}),
    (re.compile(r"(?<!\w)y\s+a[\s-]+t[\s-]+(?:il|elle)\b|-t-(?:il|elle|ils|elles)\b|est-ce\b", re.I), {"fr": 4.0}),
]
# Places and disasters whose names hold function words of a language ("Los Angeles", "Porto Alegre")
_NAMES = (
    "los angeles",
    "las vegas",
    "los alamos",
    "la paz",
    "la jolla",
    "la palma",
    "el paso",
    "san francisco",
    "san diego",
    "santa rosa",
    "santa barbara",
    "porto alegre",
    "porto velho",
    "rio de janeiro",
    "rio grande do sul",
    "sao paulo",
    "des moines",
    "baton rouge",
    "le havre",
    "la reunion",
    "nouvelle caledonie",
    "port au prince",
    "costa rica",
    "puerto rico",
)
_TOKEN = re.compile(r"[^\W\d_]+", re.UNICODE)
_SENTENCE_START = re.compile(r"(?:^|[.?!¿¡:;\n]\s*)[\"'«“(]*$")


def _fold(text: str) -> str:
    """Lower case, accents removed (ñ and ç too: the spelling cues read them before)."""
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if not unicodedata.combining(c))


@cache
def _names_re() -> re.Pattern[str]:
    names = set(_NAMES)
    events_file = DATA_DIR / "events.json"
    if events_file.exists():
        raw = json.loads(events_file.read_text(encoding="utf-8"))
        for event in raw.get("events", []) if isinstance(raw, dict) else raw:
            for key in ("name", "place"):
                value = event.get(key)
                if isinstance(value, str) and value.strip():
                    names.add(_fold(re.sub(r"\s*\(.*?\)", "", value)).strip())
    ordered = sorted((n for n in names if n), key=len, reverse=True)
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(n) for n in ordered) + r")(?!\w)")


def language_scores(text: str) -> dict[Language, float]:
    """How strongly ``text`` reads as each language (function words and spelling cues)."""
    scores: dict[Language, float] = dict.fromkeys(LANGUAGES, 0.0)
    # names of places and disasters say nothing about the language: blank them out (same length)
    folded = _fold(text)
    spans = [m.span() for m in _names_re().finditer(folded)] if len(folded) == len(text) else []
    kept = list(text)
    for start, end in spans:
        kept[start:end] = " " * (end - start)
    plain = "".join(kept)
    for pattern, weights in _SPELLING:
        if pattern.search(plain):
            for lang, weight in weights.items():
                scores[lang] += weight
    tokens = list(_TOKEN.finditer(plain))
    capitalised = sum(1 for t in tokens if t.group(0)[:1].isupper())
    skip_proper = capitalised * 2 < len(tokens)  # "How Many Buildings ..." typed in title case: read every word
    for token in tokens:
        word = token.group(0)
        at_start = bool(_SENTENCE_START.search(plain[: token.start()]))
        if skip_proper and word[:1].isupper() and not at_start:
            continue  # a proper name ("Eaton", "Los Angeles", "Porto"): not a function word
        folded_word = _fold(word)
        for lang in LANGUAGES:
            scores[lang] += _WORDS[lang].get(folded_word, 0.0)
        if folded_word in _ROMANCE:
            for lang in _ROMANCE_LANGUAGES:
                scores[lang] += _ROMANCE[folded_word]
    return scores


def detect_language(text: str) -> Language:
    """The language of a question: "en", "es", "fr" or "pt" (English when nothing else is clear)."""
    scores = language_scores(text)
    best = max(LANGUAGES, key=lambda lang: (scores[lang], lang == "en"))
    return best if scores[best] > scores["en"] else "en"


# ------------------------------------------------------------------------------------------- phrases
@cache
def _phrases() -> dict[str, dict[str, str]]:
    raw = json.loads(PHRASES_FILE.read_text(encoding="utf-8"))
    return {key: value for key, value in raw.items() if not key.startswith("_")}


def phrase_keys() -> tuple[str, ...]:
    return tuple(_phrases())


# a preposition meeting the article of a filled-in phrase contracts ("de a área" -> "da área", "de el" -> "del")
_CONTRACTIONS: dict[str, list[tuple[re.Pattern[str], str]]] = {
    lang: [(re.compile(rf"(?<!\w){a}(?!\w)"), b) for a, b in pairs]
    for lang, pairs in {
        "es": [("de el", "del"), ("a el", "al")],
        "fr": [("de le", "du"), ("de les", "des"), ("à le", "au"), ("à les", "aux")],
        "pt": [
            ("de a", "da"),
            ("de o", "do"),
            ("de as", "das"),
            ("de os", "dos"),
            ("em a", "na"),
            ("em o", "no"),
            ("em as", "nas"),
            ("em os", "nos"),
        ],
    }.items()
}


def phrase(key: str, lang: str = "en", /, **values: object) -> str:
    """The fixed text ``key`` in ``lang`` (English when the language is not one of the four), with
    ``{name}`` fields filled from ``values``. An unknown key is an error, not a silent English text."""
    entry = _phrases()[key]
    text = entry.get(lang) or entry["en"]
    if not values:
        return text
    text = text.format(**values)
    for pattern, contracted in _CONTRACTIONS.get(lang, ()):
        text = pattern.sub(contracted, text)
    return text


def damage_class_name(value: str, lang: str = "en") -> str:
    """A damage class ("destroyed") as the answer words it in ``lang``."""
    key = f"damage.{value}"
    return phrase(key, lang) if key in _phrases() else value


def feature_class_name(name: str, lang: str = "en") -> str:
    """A map feature class ("healthcare") as the answer words it in ``lang``: the class name in English,
    a plural noun phrase in the other languages."""
    key = f"class.{name}"
    return phrase(key, lang) if key in _phrases() else name


__all__ = [
    "LANGUAGES",
    "Language",
    "damage_class_name",
    "detect_language",
    "feature_class_name",
    "language_scores",
    "phrase",
    "phrase_keys",
]
