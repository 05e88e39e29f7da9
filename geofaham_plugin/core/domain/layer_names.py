"""How a layer the user brought is named: its id slug and the phrases a question may call it by.

Shared by the catalogue (``engines/layers.py``, which records a user layer's aliases when it is added) and
the pre-pass (``planning/prepass.py``, which finds them in a question). Standard library only."""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache
from pathlib import Path

NOUNS_FILE = Path(__file__).resolve().parents[1] / "data" / "layer_nouns.json"

#: words too general to call a layer by on their own ("my field clinics" -> "clinics", never "points")
_GENERIC = """my our the a an of and in on at for to layer layers data dataset file export copy new old final draft
v1 v2 v3 points point lines line polygons polygon features feature shapes shape area areas zone zones region regions
map maps gis table tmp temp test"""
GENERIC_WORDS = frozenset(re.findall(r"\w+", _GENERIC))


def layer_words(text: str) -> list[str]:
    """Lower-case ASCII words of a layer name: "FieldClinics_2024" -> ["field", "clinics", "2024"]."""
    text = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return re.findall(r"[a-z0-9]+", text.lower())


def user_layer_slug(name: str) -> str:
    return "_".join(layer_words(name)) or "layer"


def word_forms(word: str) -> list[str]:
    """The word and its other number: clinics <-> clinic, facilities <-> facility, churches <-> church."""
    if word.isdigit() or len(word) < 3:
        return [word]
    if word.endswith("ies") and len(word) > 4:
        return [word, word[:-3] + "y"]
    if re.search(r"(?:ss|x|ch|sh|zz)es$", word):
        return [word, word[:-2]]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return [word, word[:-1]]
    if re.search(r"[^aeiou]y$", word):
        return [word, word[:-1] + "ies"]
    return [word, word + ("es" if re.search(r"(?:s|x|ch|sh|z)$", word) else "s")]


@cache
def _translations() -> dict[str, tuple[str, ...]]:
    """noun (any language) -> the same noun in the others, from ``core/data/layer_nouns.json``."""
    nouns: dict[str, list[str]] = json.loads(NOUNS_FILE.read_text(encoding="utf-8"))["nouns"]
    out: dict[str, set[str]] = {}
    for english, others in nouns.items():
        group = {*word_forms_phrase(english), *others}
        for word in group:
            out.setdefault(word, set()).update(group - {word})
    return {word: tuple(sorted(same)) for word, same in out.items()}


def word_forms_phrase(phrase: str) -> list[str]:
    """A phrase with its last word in both numbers ("field report" -> "field report", "field reports")."""
    *head, last = phrase.split()
    return [" ".join([*head, form]) for form in word_forms(last)]


def user_layer_aliases(name: str) -> list[str]:
    """Phrases a question may call a layer by: its name as words, without leading "my"/"the" and trailing
    numbers ("field_clinics_2024" -> "field clinics"), the last word singular or plural, and that last word
    alone unless it is too general ("clinics", never "points"); and the same noun in English, Spanish, French
    or Portuguese ("clinics" -> "clinicas", "cliniques"). Longest first."""
    words = layer_words(name)
    core = list(words)
    while core and (core[0] in {"my", "our", "the"} or core[0].isdigit()):
        core.pop(0)
    while core and (core[-1].isdigit() or core[-1] in {"v1", "v2", "v3", "final", "copy", "draft"}):
        core.pop()
    phrases: list[str] = []
    for ws in (words, core):
        if ws:
            phrases += [" ".join([*ws[:-1], form]) for form in word_forms(ws[-1])]
    head = core[-1] if core else ""
    if head and head not in GENERIC_WORDS and len(head) >= 4 and not head.isdigit() and len(core) > 1:
        phrases += [f for f in word_forms(head) if f not in GENERIC_WORDS]
    phrases += [other for p in list(phrases) for other in _translations().get(p, ()) if other not in GENERIC_WORDS]
    return sorted(dict.fromkeys(p for p in phrases if p), key=lambda p: (-len(p), p))
