"""Deterministic question pre-pass: resolve by code what a small model cannot plan reliably.

From the question alone, with regular expressions and small vocabularies (no model, stdlib only):
the disaster record of the event table, distances in metres, "k nearest", explicit dates, pre/post
time windows around the event date, building-damage classes, target feature classes, place names,
counting and grouping. The model is then left to pick a workflow template. Given the user's own layers
(the catalogue's ``user:`` entries), also the layers the question names: by their aliases ("my field
clinics" -> a layer named "field_clinics"), a quoted name or "layer <name or id>".

The question is normalised first (NFKD without accents, lower case, straight apostrophes). Event
and place names are found first and blanked out, so that "Black River" is no river and "by structure
type" asks for no buildings; every later pattern runs on the blanked text. Names of the user's layers
are blanked too ("my field clinics" asks for that layer, not for OpenStreetMap clinics).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from datetime import date, timedelta
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar, cast

from ..domain.damage import ANY_DAMAGE, DamageClass, grade_ranges, graded_names, grades_bounded
from ..domain.events import DisasterEvent, load_events, load_gazetteer
from ..domain.feature_classes import class_words, tag_classes
from ..domain.layer_names import layer_words, user_layer_aliases, user_layer_slug
from ..domain.time import TimeWindow
from ..errors import ToolFailed
from .facts import PrepassFacts

if TYPE_CHECKING:
    from ..engines.layers import LayerCatalogue, UserField, UserLayer

# --- Defaults ----------------------------------------------------------------------------------

DEFAULT_PRE_DAYS = 30  # "before and after", "pre-event", "before the fire": [event - 30 d, event - 1 d]
DEFAULT_POST_DAYS = 30  # "before and after", "post-event", "after the fire": [event, event + 30 d]
DAYS_PER_UNIT = {"day": 1, "week": 7, "fortnight": 14, "month": 30}  # a month is 30 days

# Event scoring. An event is resolved only when its best score is unique (snapshots of one event
# count as one) and at least MIN_RESOLVE_SCORE, i.e. named by an alias/place or dated exactly:
# a disaster type alone ("the earthquake") or a year alone only ranks candidates.
ALIAS_SCORE = 3.0  # per distinct alias or place spelling of the event found in the question
TYPE_SCORE = 1.0  # a type word matches the event type ("flood" also matches a flood map)
EXACT_DATE_SCORE = 3.0  # a date in the question is the event date
NEAR_DATE_SCORE = 2.0  # ... is within NEAR_DATE_DAYS of it
NEAR_DATE_DAYS = 3
SAME_YEAR_SCORE = 1.0  # a date or a bare year in the question falls in the event year
MIN_RESOLVE_SCORE = ALIAS_SCORE

# --- Vocabularies ------------------------------------------------------------------------------

NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "ninety": 90,
    "hundred": 100,
    "thirteen": 13, "fourteen": 14, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "seventy": 70,
    "eighty": 80, "thousand": 1000,
    # Spanish, French and Portuguese: the units, ten, the round tens and hundreds a share or a distance is said in
    "tres": 3, "cuatro": 4, "cinco": 5, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "dois": 2, "duas": 2,
    "seis": 6, "siete": 7, "ocho": 8, "nueve": 9, "sept": 7, "huit": 8, "neuf": 9, "sete": 7, "oito": 8,
    "nove": 9,
    "diez": 10, "dix": 10, "dez": 10, "veinte": 20, "vingt": 20, "vinte": 20, "treinta": 30, "trente": 30,
    "trinta": 30, "cuarenta": 40, "quarante": 40, "quarenta": 40, "cincuenta": 50, "cinquante": 50,
    "cinquenta": 50, "cien": 100, "ciento": 100, "cem": 100, "cento": 100, "cent": 100, "cents": 100,
    "doscientos": 200, "trescientos": 300, "cuatrocientos": 400, "quinientos": 500, "seiscientos": 600,
    "setecientos": 700, "ochocientos": 800, "novecientos": 900, "duzentos": 200, "trezentos": 300,
    "quatrocentos": 400, "quinhentos": 500, "seiscentos": 600, "setecentos": 700, "oitocentos": 800,
    "novecentos": 900, "mil": 1000, "mille": 1000,
    # ... eleven to nineteen and the tens from sixty (Spanish, French, Portuguese; "once", "quince" and "seize" are
    # English words too: AMBIGUOUS_NUMBER_WORDS)
    "doce": 12, "trece": 13, "catorce": 14, "dieciseis": 16, "diecisiete": 17, "dieciocho": 18, "diecinueve": 19,
    "veinticinco": 25, "sesenta": 60, "setenta": 70, "ochenta": 80, "noventa": 90,
    "onze": 11, "douze": 12, "treize": 13, "quatorze": 14, "quinze": 15, "soixante": 60,
    "doze": 12, "treze": 13, "catorze": 14, "dezasseis": 16, "dezesseis": 16, "dezassete": 17, "dezessete": 17,
    "dezoito": 18, "dezanove": 19, "dezenove": 19, "sessenta": 60, "oitenta": 80,
}  # fmt: skip
#: the number words that multiply what comes before them ("nine hundred", "neuf cents", "dos mil")
MULTIPLIER_WORDS = frozenset({"hundred", "thousand", "cent", "cents", "mil", "mille"})
FRACTION_WORDS = {"half": 0.5, "quarter": 0.25}
#: the same fractions said of a share, in Spanish, French and Portuguese too ("la mitad", "un quart", "um quarto")
SHARE_FRACTION_WORDS = {**FRACTION_WORDS, "mitad": 0.5, "cuarto": 0.25, "moitie": 0.5, "quart": 0.25, "metade": 0.5,
                        "quarto": 0.25}  # fmt: skip
#: the words for a pair: two ("the pair of schools closest")
PAIR_WORDS = {"pair": 2, "couple": 2, "paire": 2, "par": 2}
#: the small numbers said before "nearest" ("the two schools closest", "las dos escuelas mas cercanas"): English (one
#: to ten, of NUMBER_WORDS), Spanish, French and Portuguese, and the words for a pair
SMALL_NUMBER_WORDS: dict[str, int] = {
    **{word: n for word, n in NUMBER_WORDS.items() if n <= 10 and word not in ("a", "an")},
    "un": 1, "una": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5,
    "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5,
    "um": 1, "uma": 1, "dois": 2, "duas": 2, "quatro": 4,
    **PAIR_WORDS,
}  # fmt: skip

#: how a question compares a number ("more than 5000", "at least 10", "mas de 50") -> the operator
COMPARISON_WORDS: dict[str, tuple[str, ...]] = {
    ">": ("more than", "greater than", "higher than", "bigger than", "larger than", "over", "above", "exceeding",
          "mas de", "plus de", "mais de", "superior a"),
    "<": ("less than", "fewer than", "lower than", "smaller than", "under", "below", "menos de", "moins de",
          "inferior a"),
    ">=": ("at least", "no less than", "au moins", "al menos", "pelo menos"),
    "<=": ("at most", "no more than"),
}  # fmt: skip
#: how a question compares by a word after the value ("10 % or more", "Minor or worse", "o mas", "ou plus"): a
#: damage grade or share is worse the more of the structure is damaged
COMPARISON_AFTER: dict[str, tuple[str, ...]] = {
    ">=": ("or more", "or worse", "or higher", "or above", "or greater", "and up", "and above", "and over", "or over",
           "o mas", "o peor", "o superior", "ou plus", "ou pire", "ou superieur", "ou mais", "ou pior", "ou superior"),
    "<=": ("or less", "or fewer", "or lower", "or below", "or under", "or better", "o menos", "o mejor",
           "o inferior", "ou moins", "ou mieux", "ou inferieur", "ou menos", "ou melhor", "ou inferior"),
}  # fmt: skip
#: how a question compares a year ("built before 1990", "after 2005", "since 1985", "antes de 1990") -> the operator
YEAR_COMPARISON_WORDS: dict[str, tuple[str, ...]] = {
    "<": ("before", "prior to", "earlier than", "older than", "antes de", "avant"),
    ">": ("after", "later than", "newer than", "more recent than", "despues de", "apres", "depois de"),
    ">=": ("since", "desde", "depuis"),
}

UNIT_METRES = {
    "km": 1000.0,
    "kms": 1000.0,
    "kilometre": 1000.0,
    "kilometres": 1000.0,
    "kilometer": 1000.0,
    "kilometers": 1000.0,
    "m": 1.0,
    "metre": 1.0,
    "metres": 1.0,
    "meter": 1.0,
    "meters": 1.0,
    "mi": 1609.344,
    "mile": 1609.344,
    "miles": 1609.344,
    "ft": 0.3048,
    "foot": 0.3048,
    "feet": 0.3048,
    "yd": 0.9144,
    "yard": 0.9144,
    "yards": 0.9144,
    # Spanish, French and Portuguese (accents removed)
    "kilometro": 1000.0,
    "kilometros": 1000.0,
    "quilometro": 1000.0,
    "quilometros": 1000.0,
    "metro": 1.0,
    "metros": 1.0,
    "milla": 1609.344,
    "millas": 1609.344,
    "milha": 1609.344,
    "milhas": 1609.344,
    "milles": 1609.344,
    "pie": 0.3048,
    "pies": 0.3048,
    "pieds": 0.3048,
    "pes": 0.3048,
}

MONTHS = {
    "january": 1,
    "jan": 1,
    "february": 2,
    "feb": 2,
    "march": 3,
    "mar": 3,
    "april": 4,
    "apr": 4,
    "may": 5,
    "june": 6,
    "jun": 6,
    "july": 7,
    "jul": 7,
    "august": 8,
    "aug": 8,
    "september": 9,
    "sept": 9,
    "sep": 9,
    "october": 10,
    "oct": 10,
    "november": 11,
    "nov": 11,
    "december": 12,
    "dec": 12,
}

# Disaster types named in a question: pattern -> event types it points to.
TYPE_WORDS: dict[str, tuple[str, ...]] = {
    r"(?:wild|bush|forest)?fires?(?![\s-]*(?:stations?|departments?|hydrants?|brigades?|fighters?|trucks?|engines?)\b)"
    r"|blazes?|firestorms?|burn(?:ed|t|ing)?|incendi(?:os?|es?)": ("fire",),
    r"flood\w*|inunda\w*|deluge|inond\w*|crues?|enchentes?|riadas?": ("flood",),
    r"hurricanes?|huracan(?:es)?|ouragans?|furac(?:ao|oes)": ("hurricane",),
    r"(?:tropical\s+)?cyclones?|typhoons?|ciclon(?:es?)?|tifon(?:es)?|typhons?|tufoes?": ("cyclone",),
    r"(?:tropical\s+)?storms?|tormentas?|tempetes?|tempestades?": ("hurricane", "cyclone"),
    r"earthquakes?|quakes?|seismic|tremors?|terr[ae]motos?|sismos?|seismes?|tremblements?\s+de\s+terre": (
        "earthquake",
    ),
    r"tornado(?:e?s)?|twisters?|tornades?": ("tornado",),
}

# Feature classes asked for: class -> singular phrases (plurals are derived), from the one class file
# (core/data/osm_classes.json, "words" of each class).
ENTITY_WORDS: dict[str, tuple[str, ...]] = class_words()

# Damage phrases, tried in this order at each position (specific before generic). Spanish, French and
# Portuguese verbs in their usual forms, accents removed: destruyo/destruyeron/destruidas, detruit/a detruit/
# detruites, destruiu/destruidas; dano/danaron/danadas, endommages/endommagea, danificou/danificadas.
# "homes burned", "buildings that burned down", "casas quemadas": burned said of buildings is damage (any grade);
# "the burned area", "where the fire burned" is the hazard
_BURNED_NOUNS = ("homes", "houses", "buildings", "structures", "residences", "properties", "dwellings")
_BURNED_AFTER = "|".join(
    f"(?<={noun}\\s{link})"
    for noun in _BURNED_NOUNS
    for link in ("", "that\\s", "which\\s", "were\\s", "that\\sgot\\s")
)
BURNED = (
    rf"(?:{_BURNED_AFTER})burn(?:ed|t)(?:\s+down)?"
    r"|(?<=casas\s)quemadas|(?<=viviendas\s)quemadas|(?<=edificios\s)quemados|(?<=maisons\s)brulees"
    r"|(?<=casas\s)queimadas"
)
DAMAGE_WORDS: list[tuple[str, list[DamageClass]]] = [
    (
        r"no\s+damage|undamaged|intact|unaffected|unharmed|survived|still\s+standing"
        r"|sin\s+danos?|intact[oa]s?|sans\s+(?:dommages?|degats)|intacte?s?|sem\s+danos?"
        r"|(?:ningun|nenhum|aucun)\s+(?:danos?|dommages?|degats?)|pas\s+de\s+(?:dommages?|degats)",
        [DamageClass.none],
    ),
    (  # the inspection grade "Major (26-50%)" by its name, as "minor damage" is the grade Minor
        r"major\s+damage|danos?\s+mayores|(?:dommages?|degats)\s+majeurs|danos?\s+maiores",
        [DamageClass.major],
    ),
    (
        r"(?:severe|heavy|significant|extensive)\s+damage|"
        r"(?:severely|heavily|badly|seriously|extensively)\s+damaged"
        r"|danos?\s+(?:graves?|severos?|importantes|considerables)"
        r"|(?:dommages?|degats)\s+(?:graves|importants|severes|lourds)"
        r"|(?:gravemente|severamente|seriamente|fuertemente|muy)\s+(?:danad|danific)\w*"
        r"|(?:gravement|severement|fortement|lourdement)\s+endommag\w*",
        [DamageClass.major, DamageClass.destroyed],
    ),
    (
        r"(?:minor|slight|light)\s+damage|(?:slightly|lightly)\s+damaged"
        r"|danos?\s+(?:leves?|menores|ligeros?)|(?:dommages?|degats)\s+(?:legers|mineurs)"
        r"|(?:levemente|ligeramente|ligeiramente|poco)\s+(?:danad|danific)\w*|legerement\s+endommag\w*",
        [DamageClass.minor],
    ),
    (
        r"destroy(?:ed|s)?|destruction|destru(?:y(?:o|e|en|eron)|id[oa]s?|ir|iu|iram|ccion(?:es)?|icao|icoes)"
        r"|detrui(?:t|te|ts|tes|re|sent|rent|sait|saient)",
        [DamageClass.destroyed],
    ),
    (
        r"damage[ds]?(?!\s+(?:class(?:es)?|categor(?:y|ies)|levels?|grades?|assessments?|states?|status|types?"
        r"|inspections?|data(?:set)?|reports?|maps?|surveys?|points?|layers?)\b)",
        list(ANY_DAMAGE),
    ),
    (  # not "por classe de dano", "par niveau de dommages": a grouping, no damage filter
        r"(?<!classe de )(?<!clase de )(?<!classes de )(?<!clases de )(?<!nivel de )(?<!niveau de )(?<!grau de )(?<!grado de )"
        r"(?:dan(?:ad[oa]s?|os?|aron|ar|ando)|endommag(?:e|ee|es|ees|er|ent|ea|erent|eait)|dommages|degats"
        r"|danific(?:ad[oa]s?|ou|aram|ar|ando))",
        list(ANY_DAMAGE),
    ),
    (
        r"affected(?!\s+(?:by|areas?|regions?|zones?|population|people|communit(?:y|ies)|residents)\b)",
        [DamageClass.affected],
    ),
    (BURNED, list(ANY_DAMAGE)),
]
# "not destroyed", "no fueron destruidas", "n'ont pas ete detruits", "nao foram danificados": a negation word,
# then up to two auxiliaries or adverbs.
NEGATION = (
    r"(?:\b(?:not|never|without|no|sin|nunca|jamas|non|pas|jamais|sans|nao|sem)|n't)\s+"
    r"(?:(?:been|be|yet|fully|completely|totally|fue|fueron|ha|han|sido|esta|estan|quedo|quedaron|totalmente"
    r"|completamente|ete|etre|encore|entierement|totalement|completement|foi|foram|estao|ficou|ficaram|ainda)\s+){0,2}"
)

#: the words for each ("for each city", "en cada municipio", "dans chaque commune")
EACH_WORDS = ("each", "every", "cada", "chaque")
#: the words said before what a count is grouped by ("by structure type", "per district", "segun el barrio")
BY_WORDS = ("by", "per", "grouped by", "broken down by", "split by", "for each", "por", "par", "segun", "selon",
            "pour chaque", "por cada", "para cada")  # fmt: skip
# ... and, before an attribute of the damage layers (GROUP_WORDS), also these
_GROUP_BEFORE = (
    *BY_WORDS, "for every", "in each", "in every", "of each", "of every", "within each", "within every",
    "en cada", "por cada", "dans chaque", "em cada", "split across", "split into", "split among",
    "broken down across", "broken down into",
)  # fmt: skip
# "by structure type" -> "structure type": attribute -> pattern after a grouping word. The names follow
# data/group_by.json where it has one (damage class, structure type/category, city, community).
GROUP_WORDS: dict[str, str] = {
    "structure type": r"(?:structure|building|property|occupancy)\s+types?|types?\s+of\s+(?:structure|building)s?"
    r"|(?:tipos?|types?)\s+d[e']\s*(?:estructura|edificio|edificacion|construccion|estrutura|edificacao"
    r"|construcao|batiment|structure|construction)s?",
    "structure category": r"(?:structure|building)\s+categor(?:y|ies)",
    "damage class": r"damage(?:\s+(?:class(?:es)?|categor(?:y|ies)|levels?|grades?|states?|status))?|severity"
    r"|grades?|grados?|graus?"  # "one figure per grade": the damage scale's (a grade is the damage's, here)
    r"|(?:class(?:es?)?|clases?|categorias?|categories|nive(?:l|is|les)|niveaux?|graus?|grados?|degres?)"
    r"\s+de\s+(?:danos?|dommages?|degats)",
    "neighbourhood": r"neighbou?rhoods?|districts?|suburbs?|barrios?|distritos?|quartiers?|bairros?",
    "community": r"communit(?:y|ies)",
    "city": r"cit(?:y|ies)|towns?|municipalit(?:y|ies)|municipios?|ciudad(?:es)?|villes?|communes?|municipalites?"
    r"|cidades?",
    "postcode": r"(?:zip|post(?:al)?)\s*codes?",
}

# --- Patterns ----------------------------------------------------------------------------------


def alternation(words: Iterable[str]) -> str:
    """Longest first, so that "kilometres" wins over "km" and "pacific palisades" over "palisades"."""
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


def _plural(phrase: str) -> str:
    """A phrase with its last word singular or plural: "health facility" -> "health facilit(y|ies)"."""
    pattern = re.escape(phrase).replace(r"\ ", r"[\s-]+")
    if re.search(r"[^aeiou]y$", phrase):
        return pattern[:-1] + "(?:y|ies)"
    return pattern + ("(?:es)?" if re.search(r"(?:s|x|ch|sh)$", phrase) else "s?")


_NUM = alternation(NUMBER_WORDS)
#: number words that are other words too, a number only before a unit or a multiplier: the Spanish "dos" (two) is
#: the Portuguese "dos" (of the): "a dos kilómetros", "dos mil metros", never "para lá dos vinte km"; the Spanish "once"
#: (eleven), "quince" (fifteen) and the French "seize" (sixteen) are English words
AMBIGUOUS_NUMBER_WORDS = {"dos": 2, "once": 11, "quince": 15, "seize": 16}
_COUNT_WORD = (
    alternation(w for w in NUMBER_WORDS if w not in ("a", "an"))
    + r"|(?:"
    + alternation(AMBIGUOUS_NUMBER_WORDS)
    + r")(?=[\s-]+(?:mil|"
    + alternation(UNIT_METRES)
    + r")(?![\w²³]))"
)
#: a number said in words, one or several ("nine hundred", "two thousand five hundred", "one hundred and fifty",
#: "novecientos", "neuf cents", "dos mil quinientos", "mil e quinhentos"); "and" only after a hundred or a thousand
#: "and" joins a number to a hundred or a thousand before it, in every language ("mil e quinhentos", "cento e vinte")
_AND_AFTER = "|".join(rf"(?<={re.escape(w)}\s)" for w, n in NUMBER_WORDS.items() if n >= 100)
_COUNT = rf"(?:{_COUNT_WORD})(?:(?:[\s-]+(?:{_AND_AFTER})(?:and|y|e|et)[\s-]+|[\s-]+)(?:{_COUNT_WORD})(?![\w]))*"
_UNIT = alternation(UNIT_METRES)
_MONTH = alternation(MONTHS)
# "1,500" groups thousands; "1,5" and "2,25" are decimal commas (Spanish, French, Portuguese)
_DIGITS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?!,\d)|\d+,\d{1,2}(?!\d)|\.\d+"

#: a half said after a number: "five and a half kilometres" (the Spanish, French and Portuguese say it after the unit)
_AND_A_HALF = r"\s+and\s+a\s+half"

DISTANCE_RE = re.compile(
    rf"(?<![\w.,])(?:(?P<fraction>(?:(?:a|one)\s+)?(?:half|quarter))(?:\s+of)?(?:\s+an?)?[\s-]+"
    rf"|(?P<digits>{_DIGITS})(?P<half>{_AND_A_HALF})?[\s-]*|(?P<word>{_COUNT})(?P<half_word>{_AND_A_HALF})?[\s-]+"
    # "a mile", never "a mi zona" (Spanish "to my area"): after "a", a unit said in full
    r"|(?P<article>an?)\s+(?=[a-z]{3}|km\b))(?P<unit>" + _UNIT + r")(?![\w²³])"
    r"(?P<half_after>\s+(?:y\s+medio|et\s+demi|e\s+meio)(?!\w))?"  # "cinco kilómetros y medio": and a half
    r"(?!\s+(?:cuadrad|carre|quadrad))"  # "500 metros cuadrados" is an area
)
K_RE = re.compile(
    rf"(?<![\w.,])(?:(?P<before>\d+|{_COUNT})\s+(?:nearest|closest)\b"
    rf"|\b(?:top|nearest|closest)\s+(?P<after>\d+|{_COUNT})\b(?![.,]\d|[\s-]*(?:{_UNIT})\b)"
    rf"|\bthe\s+(?:single\s+)?(?:nearest|closest)\b(?![\s-]+(?:\d|(?:{_COUNT})\b)))"
)
DATE_RE = re.compile(
    r"(?<![\d.])(?P<iso_y>\d{4})[-/.](?P<iso_m>\d{1,2})[-/.](?P<iso_d>\d{1,2})(?![\d.])"
    rf"|\b(?P<mdy_m>{_MONTH})\b\.?\s+(?P<mdy_d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<mdy_y>\d{{4}})\b"
    rf"|\b(?P<dmy_d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<dmy_m>{_MONTH})\b\.?,?\s+(?P<dmy_y>\d{{4}})\b"
)
YEAR_RE = re.compile(rf"(?<![\w.,-])(?:19[5-9]\d|20[0-4]\d)(?![\w-]|[.,]\d|\s*(?:{_UNIT})\b)")
RANGE_BEFORE_RE = re.compile(r"\b(?:between|from)\s*$")
RANGE_BETWEEN_RE = re.compile(r"\s*(?:and|to|until|till|through|thru|-)\s*")

_TYPE_NAMES = "|".join(TYPE_WORDS) + r"|event|disaster"
RELATIVE_WINDOW_RE = re.compile(
    rf"(?<!\w)(?P<n>\d+|{_NUM}|the)\s+(?P<unit>days?|weeks?|fortnights?|months?)\s+"
    r"(?:(?P<both>before\s+and\s+after|either\s+side\s+of|around)"
    r"|(?P<pre>before|prior\s+to|preceding|ahead\s+of|earlier|of\s+pre)"
    r"|(?P<post>after|following|later|of\s+post))\b"
)
BOTH_WINDOWS_RE = re.compile(
    r"\bbefore\s+and\s+after\b|\bafter\s+and\s+before\b|\bbefore\s*/\s*after\b"
    r"|\bpre[\s-]*(?:and|&|/)\s*post\b"
)
# "pre-event", "pre-fire", "before the (devastating) fire"; likewise after.
PRE_WINDOW_RE = re.compile(
    rf"\bpre[\s-]*(?:{_TYPE_NAMES})\b|\bbefore\s+(?:the\s+)?(?:\w+\s+){{0,2}}?(?:{_TYPE_NAMES})\b"
)
POST_WINDOW_RE = re.compile(
    rf"\bpost[\s-]*(?:{_TYPE_NAMES})\b|\bafter\s+(?:the\s+)?(?:\w+\s+){{0,2}}?(?:{_TYPE_NAMES})\b"
)

TYPE_RES = [(re.compile(rf"\b(?:{pattern})\b"), types) for pattern, types in TYPE_WORDS.items()]
_ENTITY_GROUPS = {
    f"e{i}": (cls, phrase)
    for i, (cls, phrase) in enumerate((cls, p) for cls, phrases in ENTITY_WORDS.items() for p in phrases)
}
ENTITY_RE = re.compile(
    r"\b(?:"
    + "|".join(
        f"(?P<{g}>{_plural(phrase)})"
        for g, (_, phrase) in sorted(_ENTITY_GROUPS.items(), key=lambda item: len(item[1][1]), reverse=True)
    )
    + r")\b"
)
DAMAGE_RE = re.compile(
    rf"(?P<neg>{NEGATION})?\b(?:"
    + "|".join(f"(?P<d{i}>{pattern})" for i, (pattern, _) in enumerate(DAMAGE_WORDS))
    + r")\b"
)
# "excluding those with minor damage", "except the destroyed ones", "sin contar los destruidos", "sauf les détruits"
EXCLUDING_WORDS = (
    r"excluding|exclude|except(?:\s+for)?|other\s+than|apart\s+from|but\s+not|not\s+counting|leaving\s+out"
    r"|without\s+counting|sin\s+contar|excepto|salvo|excluyendo|aparte\s+del?|sauf|hormis|a\s+l'exception\s+de"
    r"|en\s+dehors\s+de|exceto|excluindo|sem\s+contar|fora\s+o|fora\s+a"
)
# what follows them: "not counting outbuildings", "excluding pharmacies", "were not commercial buildings" (a condition of
# its own, planning/coverage.py; never a set, kind or value to keep)
# a negation that opens a clause or an aside takes what follows out: "motor homes only (not the mobile homes)",
# "single- and double-wides, not motor homes", "(pas les écoles)", ", não as igrejas", ", no las iglesias"
NOT_OPENING = (
    rf"(?:(?<=[,(;]\s)|(?<=[,(;]))(?:(?:and|but|et|mais|e|y|pero)\s+)?(?!(?:{EXCLUDING_WORDS})\s)"
    r"(?:not|pas|nao|no(?=\s+(?:los|las|el|la)\b))\s+"
    # "…, not both", "(not all)", ", pas tous": a quantifier or an adverb, nothing named to take out; ", no los dos",
    # ", pas les deux", ", não os dois": the two said before, nothing named either
    r"(?!(?:both|all|either|neither|only|just|yet|necessarily|exactly|always|ever|even|really|quite|too|more|less"
    r"|much|many|one|ambos|ambas|todos|todas|tous|toutes|seulement|apenas|solo|sempre|siempre|toujours"
    r"|los\s+dos|las\s+dos|les\s+deux|os\s+dois|as\s+duas)\b)"
    r"(?:(?:the|los|las|el|la|les|le|os|as|o|a|any)\s+)?"
)
# "that is not", in Spanish, French and Portuguese: "que no sea", "qui n'est pas", "que nao seja"
NOT_COPULA = (
    r"(?:que|qui)\s+(?:no|nao|ne|n')\s*(?:sea|sean|es|son|fue|fueron|est|sont|etait|seja|sejam|e|sao|foi|foram)"
    r"\s+(?:pas\s+)?(?:(?:un|una|um|uma|une)\s+)?"
)
EXCLUDED = re.compile(
    rf"(?<!\w)(?:(?:{EXCLUDING_WORDS})\s+|(?:are|is|were|was)\s+not\s+(?:an?\s+)?|{NOT_OPENING}|{NOT_COPULA})"
    r"(?P<what>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,2})"
)
# ... or an exclusion participle after what it takes out, opening a clause: "psychiatric and military ones excluded",
# "(outbuildings not counted)", "hospitais psiquiatricos excluidos", "les hopitaux psychiatriques exclus"
EXCLUDED_AFTER = re.compile(
    r"(?:(?<=[,(;:.?!]\s)|(?<=[,(;:])|^)(?P<what>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,3}?)\s+"
    r"(?:excluded|left\s+out|not\s+included|not\s+counted|excluid[oa]s|exclus|exclues|excluidas|excluidos)(?!\w)"
)


class Excluded(NamedTuple):
    """What the question takes out: the words that say it (``start``..``end``) and what is taken out."""

    start: int
    end: int
    what: str
    what_start: int
    what_end: int

    def span(self) -> Span:
        return self.start, self.end


def excluded_in(text: str) -> list[Excluded]:
    """What the (normalised) question takes out, said before ("excluding pharmacies", "que no sea psiquiatrico") or
    after ("psychiatric ones excluded"), in order."""
    hits = [m for pattern in (EXCLUDED, EXCLUDED_AFTER) for m in pattern.finditer(text)]
    return sorted(
        (Excluded(m.start(), m.end(), m["what"], m.start("what"), m.end("what")) for m in hits),
        key=lambda e: e.start,
    )


EXCLUDING_RE = re.compile(
    rf"\b(?:{EXCLUDING_WORDS})\s+(?:(?:those|the\s+ones|ones|the|any|all|buildings?|structures?|homes?|los|las"
    r"|les|os|as|edificios|batiments|edificios)\s+){0,2}(?:(?:with|that\s+(?:had|have|were|are|was|is)|con|avec|com"
    r"|que)\s+)?(?:(?:only|just|solo|seulement|apenas)\s+)?$"
)
GROUP_RE = re.compile(
    rf"\b(?:{alternation(_GROUP_BEFORE)})\s+"
    r"(?:the\s+|each\s+|their\s+|la\s+|el\s+|le\s+|a\s+|o\s+|les\s+|los\s+|las\s+|os\s+|as\s+)?(?:"
    + "|".join(f"(?P<g{i}>{pattern})" for i, pattern in enumerate(GROUP_WORDS.values()))
    + r")\b"
)
# "nombre de"/"nombre d'" counts in French; in Spanish "el nombre de los hospitales" asks for names.
COUNT_RE = re.compile(
    r"\bhow\s+many\b|\bcount(?:s|ing)?\b|\bnumber\s+of\b|\btotal\b|\btally\b"
    r"|\bcuant[oa]s\b|\bcombien\b|\bquant[oa]s\b|\bnumero\s+(?:de\b|d')"
    r"|\bnombre\s+(?:d'|de\s+(?!(?:los|las|la|el|del|cada|un|una)\b))"
)

# --- Helpers -----------------------------------------------------------------------------------

Span = tuple[int, int]
_PLAIN = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "—": "-", "–": "-"})
T = TypeVar("T")


def normalise(text: str) -> str:
    """Lower case, accents stripped, typographic quotes and dashes made plain."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return text.translate(_PLAIN).lower()


def blank_spans(text: str, spans: Iterable[Span]) -> str:
    """``text`` with the spans blanked (spaces: positions kept)."""
    return _blank(text, spans)


def _blank(text: str, spans: Iterable[Span]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _number(token: str) -> float:
    token = token.strip()
    if re.fullmatch(r"\d+,\d{1,2}", token):  # a decimal comma
        return float(token.replace(",", "."))
    if token[0].isdigit() or token[0] == ".":
        return float(token.replace(",", ""))
    return float(words_number(token))


def words_number(said: str) -> int:
    """The number a phrase of number words says ("nine hundred" 900, "two thousand five hundred" 2500, "dos mil
    quinientos" 2500, "neuf cents" 900, "twenty five" 25)."""
    total = current = 0
    for word in re.split(r"[\s-]+", said.strip()):
        if word in ("and", "y", "e", "et") or not word:
            continue
        value = NUMBER_WORDS.get(word) or AMBIGUOUS_NUMBER_WORDS[word]
        if word in MULTIPLIER_WORDS and value == 1000:
            total, current = total + max(current, 1) * 1000, 0
        elif word in MULTIPLIER_WORDS:
            current = max(current, 1) * value
        else:
            current += value
    return total + current


def _unique(items: Iterable[T]) -> list[T]:
    return list(dict.fromkeys(items))


# --- Extractors --------------------------------------------------------------------------------


def extract_distances(text: str) -> list[float]:
    """Distances in metres, in order of mention: "1.5 kilometers" -> 1500.0, "within a mile" -> 1609.344."""
    distances = []
    for m in DISTANCE_RE.finditer(text):
        said = m["digits"] or m["word"] or m["article"]
        amount = FRACTION_WORDS[m["fraction"].split()[-1]] if m["fraction"] else _number(said)
        if m["half"] or m["half_word"] or m["half_after"]:  # "five and a half", "cinco ... y medio"
            amount += 0.5
        distances.append(amount * UNIT_METRES[m["unit"]])
    return distances


def extract_k(text: str) -> int | None:
    """ "3 nearest", "five closest", "top 10" -> that number; "the nearest" -> 1."""
    m = K_RE.search(text)
    if m is None:
        return None
    token = m["before"] or m["after"]
    return int(_number(token)) if token else 1


def extract_dates(text: str) -> list[tuple[date, Span]]:
    """ISO dates and written-out dates with a year ("January 7, 2025", "7 Jan 2025"), in order.

    Numeric day/month forms such as 7/1/2025 are ambiguous and are not read."""
    found = []
    for m in DATE_RE.finditer(text):
        if m["iso_y"]:
            y, mo, d = int(m["iso_y"]), int(m["iso_m"]), int(m["iso_d"])
        elif m["mdy_y"]:
            y, mo, d = int(m["mdy_y"]), MONTHS[m["mdy_m"]], int(m["mdy_d"])
        else:
            y, mo, d = int(m["dmy_y"]), MONTHS[m["dmy_m"]], int(m["dmy_d"])
        try:
            found.append((date(y, mo, d), m.span()))
        except ValueError:
            continue
    return found


def extract_years(text: str) -> list[int]:
    """Bare years ("Lahaina 2023"); run on text where full dates are blanked."""
    return [int(m.group()) for m in YEAR_RE.finditer(text)]


def _alternative(m: re.Match[str]) -> str:
    """The name of the alternative that matched: every alternative of these patterns is a named group,
    and the one that matched is the last group a match closes."""
    if m.lastgroup is None:
        raise ValueError(f"pattern {m.re.pattern[:60]!r}... matched no named alternative")
    return m.lastgroup


# The inspection grades by their percentages ("dano grave (26-50%)" is the grade Major, whatever the word says): an
# open range as the damage scales spell it ("> 50 %", "more than 50 %"); a range said between two numbers, below
_PERCENT = r"(?:%|percent|per\s*cent|por\s*ciento|pour\s*cent|por\s*cento)"
GRADE_PERCENTS: list[tuple[re.Pattern[str], DamageClass]] = [
    (re.compile(rf"(?:>|{alternation(COMPARISON_WORDS['>'])})\s*{lo:g}\s*%"), cls)
    for cls, lo, hi, lo_open in grade_ranges()
    if hi > 0 and lo_open
]
_PERCENT_NUMBER = rf"\d+(?:[.,]\d+)?|{_COUNT}"
#: a range of the share of a structure damaged, two numbers (digits or words) joined: "1-9 %", "one to nine
#: percent", "between 10 and 25 %", "del 26 al 50 %", "de 10 à 25 %", "de 1 a 9 por cento"
PERCENT_RANGE = re.compile(
    rf"(?<![\d.\w])(?P<lo>{_PERCENT_NUMBER})\s*{_PERCENT}?"
    r"(?:\s*[-–]\s*|\s+(?:to|through|a|al|à|au|and|y|e|et|ate|hasta)\s+(?:(?:the|el|la|le|o|a)\s+)?)"
    rf"(?P<hi>{_PERCENT_NUMBER})\s*{_PERCENT}"
)


def grades_in_ranges(text: str) -> list[tuple[int, DamageClass]]:
    """(position, grade) of the grades a (normalised) question says by a range of the share damaged, the ranges as
    the damage scales spell them (``domain.damage.grade_ranges``): a range is the grades that fill it end to end
    ("1 to 9 %" Affected, "10 to 50 %" Minor and Major); a range no run of grades fills ("5 to 30 %") says none."""
    return [(span[0], cls) for span, classes in _ranges(text) for cls in classes]


def grade_percent_spans(text: str) -> list[Span]:
    """Where the (normalised) question says grades by a share of the structure damaged ("ten percent damage or
    worse", "one to nine percent", "> 50 %"): a percent there says which grades, never a share asked for."""
    spans = [span for span, _, _ in damage_bounds(text)] + [span for span, _ in _ranges(text)]
    return spans + [m.span() for pattern, _ in GRADE_PERCENTS for m in pattern.finditer(text)]


def _ranges(text: str) -> list[tuple[Span, list[DamageClass]]]:
    out: list[tuple[Span, list[DamageClass]]] = []
    for m in PERCENT_RANGE.finditer(text):
        said_lo, said_hi = _number(m["lo"]), _number(m["hi"])
        if said_hi <= said_lo:
            continue
        inside = [
            (cls, lo + (1 if lo_open else 0), hi)
            for cls, lo, hi, lo_open in grade_ranges()
            if lo + (1 if lo_open else 0) >= said_lo - 0.5 and hi <= said_hi + 0.5
        ]
        if inside and min(lo for _, lo, _ in inside) <= said_lo + 1 and max(hi for *_, hi in inside) >= said_hi - 1:
            out.append((m.span(), [cls for cls, _, _ in inside]))
    return out


_DAMAGE_STEM = r"(?:damag\w*|dan(?:o|os|ad[oa]s?|ificad[oa]s?)|dommages?|degats|endommag\w*)"
#: a share of the structure damaged, compared: "ten percent damage or worse", "more than a quarter damaged",
#: "danados en mas del 25 %", "au moins 26 % de dommages"; the damage word before or after it
_AFTER = alternation(w for said in COMPARISON_AFTER.values() for w in said)
DAMAGE_BOUND = re.compile(
    rf"(?:(?P<dmg>{_DAMAGE_STEM})(?:\s+\w+){{0,2}}?\s+)?"
    rf"(?:(?P<op>{alternation(w for said in COMPARISON_WORDS.values() for w in said)})l?\s+"
    r"(?:(?:the|a|an|de|del|da|do|un|una|um|uma|la|le|el|o)\s+)?)?"
    rf"(?:(?P<n>\d+(?:[.,]\d+)?|{alternation(NUMBER_WORDS)})\s*{_PERCENT}"
    rf"|(?:(?:a|one|un|una|um|uma|la|le|une|a\s+la)\s+)?(?P<fraction>{alternation(SHARE_FRACTION_WORDS)}))"
    rf"(?:\s+(?P<after>{_AFTER}))?"
    rf"(?P<tail>(?:\s+(?:de|d'|em|en)\s+|\s+(?:(?!(?:of|the|de|des|du|da|do|dos|das|los|las|les)\s)\w+\s+)?){_DAMAGE_STEM})?"
    rf"(?:\s+(?P<after2>{_AFTER}))?"
)
_OPS = {w: op for table in (COMPARISON_WORDS, COMPARISON_AFTER) for op, said in table.items() for w in said}


def damage_bounds(text: str) -> list[tuple[Span, str, float]]:
    """The shares of a structure damaged the (normalised) question compares: [(span, operator, percent)]
    ("10 percent damage or worse" -> (">=", 10.0)); the grades they keep are the damage scales' (see
    :func:`..domain.damage.grades_bounded`)."""
    out = []
    for m in DAMAGE_BOUND.finditer(text):
        said = [w for w in (m["op"], m["after"], m["after2"]) if w]
        if len(said) != 1 or not (m["dmg"] or m["tail"]):
            continue
        if re.match(r"\s+(?:of|de|du|des|da|do|dos|das)\b", text[m.end() :]):
            continue  # "more than half of the damaged homes": a share of them, not how damaged each is
        said_op = said[0]
        op = _OPS[" ".join(said_op.split())]
        percent = 100 * SHARE_FRACTION_WORDS[m["fraction"]] if m["fraction"] else _number(m["n"])
        out.append((m.span(), op, percent))
    return out


#: how a question compares a grade of an ordered scale by its severity ("worse than Affected", "mejor que ...")
SEVERITY_WORDS: dict[str, tuple[str, ...]] = {
    ">": ("worse than", "more severe than", "peor que", "pire que", "pior que"),
    "<": ("better than", "less severe than", "mejor que", "mieux que", "melhor que"),
}
_GRADE_OPS = {
    w: op for table in (COMPARISON_WORDS, SEVERITY_WORDS, COMPARISON_AFTER) for op, ws in table.items() for w in ws
}
GRADE_COMPARED = re.compile(
    rf"(?<!\w)(?:(?P<op>{alternation(w for t in (COMPARISON_WORDS, SEVERITY_WORDS) for ws in t.values() for w in ws)})"
    rf"\s+(?:(?:the|a|an)\s+)?(?:(?:grade|level|class)\s+)?(?P<g>{alternation(graded_names())})"
    rf"|(?P<g2>{alternation(graded_names())})(?:\s+damage)?\s+(?P<after>{_AFTER}))(?!\w)"
)


def grade_comparisons(text: str) -> list[tuple[Span, list[DamageClass]]]:
    """The grades of an ordered damage scale the (normalised) question compares by the data's own grade names
    ("Minor or worse": minor, major, destroyed; "anything below Destroyed": none to major): [(span, classes)]."""
    order = list(DamageClass)
    out = []
    for m in GRADE_COMPARED.finditer(text):
        grade = graded_names()[m["g"] or m["g2"]]
        op = _GRADE_OPS[" ".join((m["op"] or m["after"]).split())]
        at = order.index(grade)
        keep = {">": order[at + 1 :], ">=": order[at:], "<": order[:at], "<=": order[: at + 1]}[op]
        if keep:
            out.append((m.span(), keep))
    return out


def grades_compared(text: str) -> bool:
    """Whether the (normalised) question says its grades by comparing or by their percentages, a share damaged or
    a grade of the data ("10 % damage or worse", "Minor or worse", "one to nine percent", "> 50 %"): the grades are
    then read in code from the data's scale."""
    return bool(
        damage_bounds(text)
        or grade_comparisons(text)
        or grades_in_ranges(text)
        or any(pattern.search(text) for pattern, _ in GRADE_PERCENTS)
    )


_GRADE_NAME = re.compile(rf"(?<!\w)(?:{alternation(graded_names())})(?!\w)")
_COORDINATED_GRADES = re.compile(
    rf"(?<!\w)(?:(?:{alternation(graded_names())})\s*(?:,\s*|\s(?:or|and|y|o|e|et|ou|and/or)\s+))+$"
)


def extract_damage_classes(text: str) -> list[DamageClass]:
    """Damage classes in order of mention; a negation takes the complement ("not destroyed"); grades said by
    their percentages are those grades; a share damaged compared ("25 % damage or more") the grades wholly in it."""
    bounded = [c for _, op, percent in damage_bounds(text) for c in grades_bounded(op, percent)[0]]
    bounded += [c for _, classes in grade_comparisons(text) for c in classes]
    if bounded:
        return _unique(c for c in DamageClass if c in bounded)
    graded = sorted(  # by position; a range's grades in the scale's order
        [(m.start(), grade) for pattern, grade in GRADE_PERCENTS for m in pattern.finditer(text)]
        + grades_in_ranges(text),
        key=lambda found: found[0],
    )
    if graded:
        return _unique(grade for _, grade in graded)
    classes: list[DamageClass] = []
    excluded: list[DamageClass] = []
    previous: tuple[re.Match[str], list[DamageClass]] | None = None
    for m in DAMAGE_RE.finditer(text):
        named = DAMAGE_WORDS[int(_alternative(m)[1:])][1]
        if previous is not None and _is_range(text, previous[0], m) and not (m["neg"] or previous[0]["neg"]):
            # "from affected to destroyed", "entre minor y destroyed", "des dégâts légers jusqu'à la destruction":
            # every grade of the scale between the two ends (a closed class: the grades' order)
            ends = [DAMAGE_ORDER.index(c) for c in (*previous[1], *named)]
            named = list(DAMAGE_ORDER[min(ends) : max(ends) + 1])
        previous = (m, list(named))
        # "minor or major damage", "affected, minor and major damage": the data's grade names coordinated before
        # the one the damage word follows share it (a closed class: the damage scales' grade names)
        if (before := _COORDINATED_GRADES.search(text[: m.start()])) is not None:
            named = [graded_names()[g] for g in _GRADE_NAME.findall(before.group(0))] + list(named)
        negated_start = m.start() + len(m["neg"] or "")  # "damaged but not destroyed": "but not" takes it out
        if EXCLUDING_RE.search(text[max(0, m.start() - 48) : negated_start]):
            excluded += named  # "damaged, excluding those with minor damage": taken out of the rest
            continue
        classes += [c for c in DamageClass if c not in named] if m["neg"] else named
    if excluded:
        classes = [c for c in (classes or list(DamageClass)) if c not in excluded]
    return _unique(classes)


#: the damage classes least to most; the words that open a range of grades before its first end and join its ends
DAMAGE_ORDER: tuple[DamageClass, ...] = tuple(DamageClass)
_RANGE_FROM = re.compile(
    r"(?<!\w)(?:from|between|desde|entre|de|des|du|do|da)\s+(?:(?:the|el|los|las|la|le|les|l'|o|os|a|as)\s*)?"
    r"(?:\w+\s+){0,2}$"
)
_RANGE_TO = re.compile(
    r"\s*(?:to|through|up\s+to|and|hasta|y|a|al|jusqu'?\s?(?:a|au|aux)|ate|e)\s+"
    r"(?:(?:the|el|los|las|la|le|les|l'|o|os|a|as)\s*)?(?:\w+\s+){0,2}"
)


def _is_range(text: str, first: re.Match[str], second: re.Match[str]) -> bool:
    """Whether two damage words are the ends of a range: a word that opens one before the first, one that joins
    them between (nothing else)."""
    return bool(_RANGE_FROM.search(text[max(0, first.start() - 40) : first.start()])) and bool(
        _RANGE_TO.fullmatch(text[first.end() : second.start()])
    )


def extract_entities(text: str) -> list[str]:
    """Target feature classes in order of mention ("3 nearest hospitals" -> ["healthcare"])."""
    return _unique(_ENTITY_GROUPS[_alternative(m)][0] for m in ENTITY_RE.finditer(text))


def extract_group_by(text: str) -> tuple[str | None, Span | None]:
    """The grouping attribute ("by structure type" -> "structure type") and where it was said."""
    m = GROUP_RE.search(text)
    if m is None:
        return None, None
    return list(GROUP_WORDS)[int(_alternative(m)[1:])], m.span()


def extract_types(text: str) -> set[str]:
    """Event types named by disaster words ("wildfire" -> fire; "fire station" names none)."""
    return {t for pattern, types in TYPE_RES if pattern.search(text) for t in types}


def extract_date_ranges(text: str, dated: list[tuple[date, Span]]) -> list[TimeWindow]:
    """ "between 2025-01-01 and 2025-01-20", "from X to Y" -> an explicit window."""
    windows = []
    for (first, (start1, end1)), (second, (start2, _)) in zip(dated, dated[1:], strict=False):
        if RANGE_BEFORE_RE.search(text[:start1]) and RANGE_BETWEEN_RE.fullmatch(text[end1:start2]):
            windows.append(TimeWindow(start=min(first, second), end=max(first, second), label="explicit"))
    return windows


def extract_windows(text: str, event_date: date | None) -> list[TimeWindow]:
    """Pre/post windows around the event date (needs a resolved event)."""
    if event_date is None:
        return []
    days: dict[str, int] = {}
    for m in RELATIVE_WINDOW_RE.finditer(text):
        if m["n"] == "the" and m["unit"].endswith("s"):
            continue  # "the days before": no length stated
        n = 1 if m["n"] == "the" else int(_number(m["n"]))
        span = n * DAYS_PER_UNIT[m["unit"].rstrip("s")]
        for side in ("pre", "post") if m["both"] else ("pre",) if m["pre"] else ("post",):
            days.setdefault(side, span)
    if BOTH_WINDOWS_RE.search(text) or PRE_WINDOW_RE.search(text):
        days.setdefault("pre", DEFAULT_PRE_DAYS)
    if BOTH_WINDOWS_RE.search(text) or POST_WINDOW_RE.search(text):
        days.setdefault("post", DEFAULT_POST_DAYS)
    windows = []
    if "pre" in days:
        windows.append(
            TimeWindow(start=event_date - timedelta(days=days["pre"]), end=event_date - timedelta(days=1), label="pre")
        )
    if "post" in days:
        windows.append(TimeWindow(start=event_date, end=event_date + timedelta(days=days["post"]), label="post"))
    return windows


# --- Events ------------------------------------------------------------------------------------


def event_spellings(event: DisasterEvent) -> set[str]:
    """The normalised names and place spellings of an event, as questions are matched against them."""
    return {normalise(a) for a in event.aliases}


def alias_hits(text: str, events: list[DisasterEvent]) -> list[tuple[str, Span]]:
    """(spelling, span) of every alias or place spelling found, longest spelling first at a position."""
    spellings = set().union(*map(event_spellings, events))
    if not spellings:
        return []
    pattern = re.compile(rf"(?<!\w)(?:{alternation(spellings)})(?!\w)")
    return [(re.sub(r"\s+", " ", m.group()), m.span()) for m in pattern.finditer(text)]


def rank_events(
    events: list[DisasterEvent], aliases: set[str], types: set[str], dates: list[date], years: list[int]
) -> list[tuple[DisasterEvent, float]]:
    """Candidate events with their scores, best first; ties go to the later event date, then the lower id.

    A candidate needs an alias, a type word or a date near its event date; a matching year only adds
    to the score, unless nothing else points at any event ("what happened in 2023?")."""
    scored: list[tuple[DisasterEvent, float]] = []
    identified: list[tuple[DisasterEvent, float]] = []
    for event in events:
        named = ALIAS_SCORE * len(aliases & event_spellings(event))
        kinds = {event.type} | ({"flood"} if "flood map" in event.available_data else set())
        typed = TYPE_SCORE if types & kinds else 0.0
        date_scores = [SAME_YEAR_SCORE for y in years if y == event.event_date.year]
        for d in dates:
            gap = abs((d - event.event_date).days)
            date_scores.append(
                EXACT_DATE_SCORE
                if gap == 0
                else NEAR_DATE_SCORE
                if gap <= NEAR_DATE_DAYS
                else SAME_YEAR_SCORE
                if d.year == event.event_date.year
                else 0.0
            )
        dated = max(date_scores, default=0.0)
        if named + typed + dated > 0:
            scored.append((event, named + typed + dated))
            if named or typed or dated > SAME_YEAR_SCORE:
                identified.append(scored[-1])
    return sorted(identified or scored, key=lambda es: (-es[1], -es[0].event_date.toordinal(), es[0].id))


def _resolve(ranked: list[tuple[DisasterEvent, float]]) -> int | None:
    """The best event when no other event (snapshots of the same one aside) scores as well.

    The ranking puts the latest snapshot first among equals, so without a matching date the
    latest Palisades snapshot is chosen."""
    if not ranked or ranked[0][1] < MIN_RESOLVE_SCORE:
        return None
    best, score = ranked[0]
    rivals = {e.name for e, s in ranked if s == score}
    return best.id if rivals == {best.name} else None


def _gazetteer(events: list[DisasterEvent]) -> dict[str, str]:
    """Spelling -> canonical place name, for the places of these events only."""
    spellings = set().union(*map(event_spellings, events))
    gazetteer = {normalise(v): c for v, c in load_gazetteer().items() if normalise(v) in spellings}
    return gazetteer | {normalise(e.place): e.place for e in events}


# --- The user's own layers --------------------------------------------------------------------------

QUOTED_RE = re.compile(r"\"(?P<dq>[^\"]{1,80})\"|(?<!\w)'(?P<sq>[^']{1,80})'(?!\w)")
LAYER_NAMED_RE = re.compile(r"\blayers?\s+(?:called\s+|named\s+)?(?P<name>[\w:.-]*\w)")


def user_entries(layers: LayerCatalogue | Iterable[UserLayer] | None) -> list[UserLayer]:
    """The user layers of a catalogue (its ``user_layers``) or of a list of entries."""
    if layers is None:
        return []
    catalogued = getattr(layers, "user_layers", None)
    if isinstance(catalogued, dict):  # the user's layers, then the catalogue's named areas and sample rasters
        # a sample raster whose file is a layer of yours, or a copy of it, is yours (the Hurst dNBR given with
        # --layer, or copied into a batch's inputs)
        own = {_file_identity(e.path) for e in catalogued.values() if e.role == "values"}
        samples = [r for r in getattr(layers, "raster_layers", {}).values() if _file_identity(r.path) not in own]
        return list(catalogued.values()) + list(getattr(layers, "area_layers", {}).values()) + samples
    return list(cast("Iterable[UserLayer]", layers))


@lru_cache(maxsize=256)
def _file_identity(path: str) -> tuple[int, str] | str:
    """A file as its size and the hash of its first megabyte (a copy is the same file); the path when unreadable."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 20)
        return Path(path).stat().st_size, hashlib.sha1(head, usedforsecurity=False).hexdigest()
    except OSError:
        return str(path)


#: SQL statements and injections typed into a question: code, not words; never read as damage or feature words
SQL_TEXT = re.compile(
    r"(?:\bselect\s+[\w*,.\s()]+?\s+from\s+\w+(?:\s+where\s+[^;?]*)?|\bdrop\s+table\s+\w+|\bdelete\s+from\s+\w+[^;?]*"
    r"|\binsert\s+into\s+\w+[^;?]*|\bupdate\s+\w+\s+set\s+[^;?]*|\bunion\s+(?:all\s+)?select\b[^;?]*"
    r"|'\s*or\s+'?\d+'?\s*=\s*'?\d+'?)\s*;?\s*(?:--[^\n]*)?|;\s*--[^\n]*"
)


def _alias_pattern(alias: str) -> re.Pattern[str]:
    """An alias's words with any spaces, underscores, hyphens, apostrophes or punctuation between them ("points d'eau",
    a layer named "clinics; west"), whole."""
    return re.compile(r"(?<![\w:])" + r"[\s_'\-;,./&+|]+".join(re.escape(w) for w in alias.split()) + r"(?![\w:])")


QUESTION_WORD_RE = re.compile(
    r"how|many|much|which|what|cuant[oa]s?|cuales?|quant[oa]s?|quais|qual|combien|quels?|quelles?|que|the|my|of"
)
LAYER_NOUN_RE = re.compile(r"(?<!\w)(?:layer|capa|camada|couche|file|archivo|fichier|arquivo)(?!\w)")


def _layer_nouns(text: str, layer_spans: list[Span]) -> list[Span]:
    """The words just before a layer mention that only say which layer ('clinicas da camada "field clinics"',
    'the clinics of layer X'): blanked, so "clinicas" asks for the layer's features, not for a class."""
    spans = []
    for start, _ in layer_spans:
        nouns = list(LAYER_NOUN_RE.finditer(text, max(0, start - 40), start))
        if nouns:  # up to three words before the noun and the noun ("clinicas de la capa"), not further
            words = list(re.finditer(r"\S+", text[: nouns[-1].start()]))[-3:]
            while words and QUESTION_WORD_RE.fullmatch(words[0].group().strip("¿¡?!.,;:\"'")):  # keep "cuantas" ...
                words.pop(0)
            spans.append((words[0].start() if words else nouns[-1].start(), start))
    return spans


def user_layer_hits(text: str, layers: Iterable[UserLayer]) -> list[tuple[str, Span]]:
    """(layer id, span) for every mention of a user layer in the normalised ``text``, in order: a quoted
    name or "layer <name or id>" (the name, its slug or its id), then each alias, longest first (a mention
    is one layer's: "field clinics" is not also "clinics")."""
    entries = list(layers)
    keys: dict[str, str] = {}  # slug of a name, an id or "user_<slug>" -> layer id
    for entry in entries:
        for key in (entry.name, entry.id, entry.id.replace(":", "_")):
            keys.setdefault(user_layer_slug(key), entry.id)
    hits: list[tuple[str, Span]] = []

    def free(span: Span) -> bool:
        return all(span[1] <= s or span[0] >= e for _, (s, e) in hits)

    for m in QUOTED_RE.finditer(text):
        group = "dq" if m.group("dq") is not None else "sq"
        layer_id = keys.get(user_layer_slug(m.group(group)))
        if layer_id and free(m.span()):
            hits.append((layer_id, m.span()))
    for m in LAYER_NAMED_RE.finditer(text):
        layer_id = keys.get(user_layer_slug(m.group("name")))
        if layer_id and free(m.span("name")):
            hits.append((layer_id, m.span("name")))
    for entry in entries:  # the id itself, anywhere: "user:field_clinics"
        for m in re.finditer(rf"(?<![\w:]){re.escape(entry.id)}(?![\w:])", text):
            if free(m.span()):
                hits.append((entry.id, m.span()))
    aliases = [(alias, e.id) for e in entries for alias in (e.aliases or user_layer_aliases(e.name))]
    for alias, layer_id in sorted(aliases, key=lambda a: -len(a[0])):
        for m in _alias_pattern(alias).finditer(text):
            if free(m.span()):
                hits.append((layer_id, m.span()))
    return sorted(hits, key=lambda hit: hit[1])


# --- Typos -------------------------------------------------------------------------------------
# A word the vocabularies do not know, of TYPO_MIN_LETTERS letters or more, is read as the one vocabulary
# word (a class word, a damage or disaster word, an event or place name) within reach: one edit (an
# insertion, deletion, substitution or transposition of two neighbours) for words of up to 8 letters, two
# for longer ones. Never a real word ("hostels", "policies": REAL_WORDS_FILE, or any word of the vocabularies),
# never a word of a name the question already says exactly, never when two vocabulary words are equally
# close, and the first letter must be right (or swapped with the second). A correction is kept only when the
# corrected question matches a phrase through it ("fire staton" -> "fire station").

TYPO_MIN_LETTERS = 6
TYPO_WORD_RE = re.compile(r"(?<![a-z0-9_])[a-z]{6,}(?![a-z0-9_])")

# Damage and disaster words a typo may stand for: form -> what it means (the key of its meaning).
DAMAGE_TYPO_FORMS: dict[str, str] = {
    **dict.fromkeys(
        ["destroyed", "destruction", "destruido", "destruida", "destruidos", "destruidas", "destruyeron"]
        + ["detruit", "detruite", "detruits", "detruites", "destruicao"],
        "destroyed",
    ),
    **dict.fromkeys(
        ["damaged", "damages", "danado", "danada", "danados", "danadas", "endommage", "endommagee", "endommages"]
        + ["endommagees", "danificado", "danificada", "danificados", "danificadas"],
        "damaged",
    ),
    **dict.fromkeys(["undamaged", "unaffected", "intacto", "intacta", "intactos", "intactas"], "undamaged"),
}
# ... and the disaster words; what each means is the type TYPE_WORDS gives it
_TYPE_TYPO_WORDS = (
    "wildfire", "wildfires", "bushfire", "incendio", "incendios", "incendie", "incendies",
    "flooded", "flooding", "inundacion", "inundaciones", "inondation", "inundacao",
    "hurricane", "hurricanes", "huracan", "ouragan", "furacao",
    "cyclone", "cyclones", "typhoon", "ciclone",
    "earthquake", "earthquakes", "terremoto", "seisme",
    "tornado", "tornadoes", "tornade",
)  # fmt: skip
TYPE_TYPO_FORMS: dict[str, str] = {
    word: next(types[0] for pattern, types in TYPE_RES if pattern.fullmatch(word)) for word in _TYPE_TYPO_WORDS
}

# Real words (English, Spanish, French, Portuguese, accents removed) within one typo of a vocabulary word,
# which are never corrected ("policies" is no "polices", "horses" no "houses"): see the file's header.
REAL_WORDS_FILE = Path(__file__).with_name("data") / "real_words.txt"


@cache
def real_words() -> frozenset[str]:
    """The words of REAL_WORDS_FILE."""
    lines = REAL_WORDS_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(word for line in lines if not line.startswith("#") for word in line.split())


def _max_edits(word: str) -> int:
    return 1 if len(word) <= 8 else 2


def edit_distance(a: str, b: str, limit: int = 2) -> int:
    """Damerau-Levenshtein distance (optimal string alignment: insertions, deletions, substitutions and
    transpositions of neighbours), or ``limit + 1`` as soon as it is known to be larger than ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, previous = previous, current
    return min(previous[-1], limit + 1)


def _plural_forms(word: str) -> list[str]:
    """A word and its regular plural, as :func:`_plural` reads them ("facility" -> "facilities")."""
    if re.search(r"[^aeiou]y$", word):
        return [word, word[:-1] + "ies"]
    return [word, word + ("es" if re.search(r"(?:s|x|ch|sh)$", word) else "s")]


@cache
def _static_typo_vocabulary() -> dict[str, str]:
    """Class words (each word of a phrase, the last one singular and plural), damage and disaster words:
    form -> the key of what it means (the words of one class share a key: "hopital" and "hospital" are
    no rivals; a word of a longer phrase is its own key)."""
    vocabulary: dict[str, str] = {}
    for name, phrases in ENTITY_WORDS.items():
        for phrase in phrases:
            if re.fullmatch(r"[a-z]+", phrase):
                vocabulary |= dict.fromkeys(_plural_forms(phrase), f"class:{name}")
    for phrases in ENTITY_WORDS.values():
        for phrase in phrases:
            words = re.findall(r"[a-z]+", phrase)
            for word in words[:-1]:
                vocabulary.setdefault(word, f"word:{word}")
            for form in _plural_forms(words[-1]):
                vocabulary.setdefault(form, f"word:{words[-1]}")
    vocabulary |= {form: f"damage:{key}" for form, key in DAMAGE_TYPO_FORMS.items()}
    vocabulary |= {form: f"type:{key}" for form, key in TYPE_TYPO_FORMS.items()}
    return vocabulary


def typo_vocabulary(events: list[DisasterEvent]) -> dict[str, str]:
    """Every form a typo may be read as (of at least TYPO_MIN_LETTERS letters): the class, damage and disaster
    words, and each word of the events' names and places -> the key of what it means."""
    names = {word: f"name:{word}" for e in events for s in event_spellings(e) for word in re.findall(r"[a-z]+", s)}
    return {w: k for w, k in (_static_typo_vocabulary() | names).items() if len(w) >= TYPO_MIN_LETTERS}


def _known(word: str, vocabulary: dict[str, str]) -> bool:
    """A real word: of the vocabularies (class, damage, disaster, count, unit, month and number words, names)
    or of REAL_WORDS_FILE."""
    return (
        word in vocabulary
        or word in real_words()
        or word in NUMBER_WORDS
        or word in UNIT_METRES
        or word in MONTHS
        or DAMAGE_RE.fullmatch(word) is not None
        or COUNT_RE.fullmatch(word) is not None
        or any(pattern.fullmatch(word) for pattern, _ in TYPE_RES)
    )


def closest_word(word: str, vocabulary: dict[str, str]) -> str | None:
    """The vocabulary form ``word`` is a typo of, or None (too short, a real word, too far, or ambiguous)."""
    if len(word) < TYPO_MIN_LETTERS or _known(word, vocabulary):
        return None
    limit = _max_edits(word)
    found: list[tuple[int, str]] = []
    for form in vocabulary:
        if form[0] == word[0] or form[:2] == word[1::-1]:
            distance = edit_distance(word, form, limit)
            if distance <= limit:
                found.append((distance, form))
    if not found:
        return None
    best = min(distance for distance, _ in found)
    closest = sorted((abs(len(f) - len(word)), f) for d, f in found if d == best)
    if len({vocabulary[f] for _, f in closest}) > 1:
        return None  # two words equally close: no guess
    return closest[0][1]


def _matched_spans(text: str, events: list[DisasterEvent]) -> list[Span]:
    """Where the vocabularies match ``text``: class words, damage and disaster words, event and place names."""
    spans = [m.span() for m in ENTITY_RE.finditer(text)] + [m.span() for m in DAMAGE_RE.finditer(text)]
    spans += [m.span() for pattern, _ in TYPE_RES for m in pattern.finditer(text)]
    return spans + [span for _, span in alias_hits(text, events)]


def correct_typos(text: str, events: list[DisasterEvent], protected: Iterable[Span] = ()) -> tuple[str, dict[str, str]]:
    """The normalised question with its misspelt vocabulary words corrected, and the corrections made
    (typed word -> vocabulary form). Words in ``protected`` spans (names found exactly, dates, the user's
    layers) and words of exact matches are left alone."""
    vocabulary = typo_vocabulary(events)
    kept_out = list(protected) + _matched_spans(text, events)
    proposals: list[tuple[Span, str]] = []
    for m in TYPO_WORD_RE.finditer(text):
        start, end = m.span()
        if any(s <= start and end <= e for s, e in kept_out):
            continue
        if (form := closest_word(m.group(), vocabulary)) is not None:
            proposals.append((m.span(), form))
    if not proposals:
        return text, {}

    def apply(chosen: list[tuple[Span, str]]) -> tuple[str, list[Span]]:
        parts, spans, at = [], [], 0
        for (start, end), form in chosen:
            parts.append(text[at:start])
            offset = sum(map(len, parts))
            spans.append((offset, offset + len(form)))
            parts.append(form)
            at = end
        return "".join(parts) + text[at:], spans

    corrected, spans = apply(proposals)
    matched = _matched_spans(corrected, events)
    kept = [p for p, (s0, e0) in zip(proposals, spans, strict=True) if any(s <= s0 and e0 <= e for s, e in matched)]
    return apply(kept)[0], {text[s:e]: form for (s, e), form in kept}


# --- Pre-pass ----------------------------------------------------------------------------------
def field_mentions(text: str, entries: Iterable[UserLayer], named: set[str]) -> list[Span]:
    """Where the question says a field of a layer it names ("by land use" of a layer with a ``landuse`` field): a
    field, not a feature class to fetch."""
    spans: list[Span] = []
    for entry in entries:
        if entry.id not in named:
            continue
        for f in entry.fields:
            compact = "".join(layer_words(f.name))
            if len(compact) < 4:
                continue
            pattern = r"[\s_-]?".join(re.escape(c) for c in compact)
            spans += [m.span() for m in re.finditer(rf"(?<!\w){pattern}s?(?!\w)", text)]
    return spans


def _taken_out(text: str) -> list[Span]:
    """What the question takes out ("not counting churches and schools"): no feature class to fetch."""
    return [(e.what_start, e.what_end) for e in excluded_in(text) if not DAMAGE_RE.search(e.what)]


def grade_of(value: object) -> DamageClass | None:
    """The damage grade a value says ("none", "Minor", "No Damage", "destroyed"), else None."""
    said = normalise(str(value)).strip()
    found = [DamageClass(said)] if said in DamageClass.__members__ else extract_damage_classes(said)
    return found[0] if len(found) == 1 else None


def damage_values(f: UserField) -> dict[DamageClass, list[str]] | None:
    """A text field of yours whose values are damage grades ("none", "minor", "destroyed", "No Damage"): grade ->
    its values as the data spells them; None for any other field. Grades said of such a layer ("my buildings with
    no damage", "not destroyed") filter that field, as a disaster's grades select its damage records."""
    if f.type != "text" or not f.values:
        return None
    grades: dict[DamageClass, list[str]] = {}
    for value in f.values:
        if (grade := grade_of(value)) is not None:
            grades.setdefault(grade, []).append(str(value))
    known = sum(len(v) for v in grades.values())
    return grades if len(grades) >= 2 and known == len(f.values) else None


def _grade_field_names(text: str, entries: Iterable[UserLayer], named: set[str]) -> list[Span]:
    """A field of grades named before one of its values ("with damage destroyed", "damage is minor"): the name is no
    grade itself ("damage" would read as every damaged grade)."""
    spans: list[Span] = []
    for entry in entries:
        for f in entry.fields if entry.id in named else []:
            if (grades := damage_values(f)) is None:
                continue
            values = "|".join(re.escape(normalise(v)) for vs in grades.values() for v in vs)
            name = r"[\s_-]?".join(re.escape(c) for c in "".join(layer_words(f.name)))
            spans += [
                m.span(1) for m in re.finditer(rf"(?<!\w)({name})\s+(?:is\s+|=\s*|:\s*)?(?:{values})(?!\w)", text)
            ]
    return spans


def value_mentions(text: str, entries: Iterable[UserLayer], named: set[str]) -> list[Span]:
    """Where the question says a value of a text field of a layer it names ("my destroyed buildings" of a layer
    whose ``damage`` field holds "destroyed"): that layer's value, not a disaster's damage class."""
    spans: list[Span] = []
    for entry in entries:
        if entry.id not in named:
            continue
        for f in entry.fields:
            if damage_values(f) is not None:  # grades: read as damage classes ("not destroyed", "no damage")
                continue
            for value in f.values or [] if f.type == "text" else []:
                said = normalise(str(value))
                if len(said) >= 3:
                    spans += [m.span() for m in re.finditer(rf"(?<!\w){re.escape(said)}s?(?!\w)", text)]
    return spans


def _event_of_fields_named(text: str, layers: object) -> int | None:
    """The one disaster whose local layers hold a field the (normalised) question names as the data spells it, with
    its underscore ("val_dany": the Catarroja public buildings, the València flood); None when none or several."""
    find, profile = getattr(layers, "find", None), getattr(layers, "field_profile", None)
    if not callable(find) or not callable(profile):
        return None
    found: set[int] = set()
    for layer in find(role="poi"):
        try:
            names = [f.name for f in profile(layer.id)]
        except (ToolFailed, OSError):  # a layer whose file is missing names nothing; its own step says so
            continue
        said = [n for n in names if "_" in n and re.search(rf"(?<![\w]){re.escape(n.lower())}(?![\w])", text)]
        if said:
            found.update(layer.events)
    return found.pop() if len(found) == 1 else None


def prepass(
    question: str,
    *,
    events: list[DisasterEvent] | None = None,
    layers: LayerCatalogue | Iterable[UserLayer] | None = None,
) -> PrepassFacts:
    """Every fact the code can read from ``question``; ``events`` defaults to the event table; ``layers``
    (a catalogue or its user entries) are the user's own layers the question may name."""
    events = load_events() if events is None else events
    plain = normalise(question)
    entries = user_entries(layers)

    unread = [m.group().strip() for m in SQL_TEXT.finditer(plain) if m.group().strip(" ;-")]
    plain = SQL_TEXT.sub(" ", plain)  # SQL in a question is not read ("... WHERE damage='destroyed'"): said instead
    protected = [span for _, span in extract_dates(plain)] + [span for _, span in user_layer_hits(plain, entries)]
    plain, corrections = correct_typos(plain, events, protected)
    dated = extract_dates(plain)
    hits = alias_hits(plain, events)
    layer_hits = user_layer_hits(plain, entries)
    text = _blank(plain, [span for _, span in hits] + [span for _, span in dated] + [span for _, span in layer_hits])
    text = _blank(text, _layer_nouns(text, [span for _, span in layer_hits]))
    group_by, group_span = extract_group_by(text)
    if group_span:
        text = _blank(text, [group_span])

    named = {i for i, _ in layer_hits}
    values_said = value_mentions(text, entries, named)
    dates = _unique(d for d, _ in dated)
    ranked = rank_events(events, {a for a, _ in hits}, extract_types(text), dates, extract_years(text))
    event_id = _resolve(ranked)
    if event_id is None and not ranked:  # no disaster named: a field only one disaster's data has ("val_dany")
        event_id = _event_of_fields_named(plain, layers)
    event = next((e for e in events if e.id == event_id), None)
    gazetteer = _gazetteer(events)

    return PrepassFacts(
        question=question,
        event_id=event_id,
        event_candidates=[e.id for e, _ in ranked],
        distances_m=extract_distances(text),
        k=extract_k(text),
        dates=dates,
        windows=extract_windows(text, event.event_date if event else None) + extract_date_ranges(plain, dated),
        # "my damaged buildings" of a layer with a field of grades: its grades; "destroyed" as another field's value
        # (a status, a category) is that value, not a damage class
        damage_classes=extract_damage_classes(_blank(text, values_said + _grade_field_names(text, entries, named))),
        # the classes named by their words, then those a tag written out names ("natural=scrub" alone names none)
        target_entities=_unique(
            extract_entities(_blank(text, field_mentions(text, entries, named) + _taken_out(text)))
            + tag_classes(_blank(text, _taken_out(text)))
        ),
        places=_unique(gazetteer[a] for a, _ in hits if a in gazetteer),
        wants_count=bool(COUNT_RE.search(text)),
        group_by=group_by,
        layers=_unique(layer_id for layer_id, _ in layer_hits),
        corrections=corrections,
        unread=unread,
    )
