"""The damage layers' structure types as Spanish, French and Portuguese say them (``core/data/value_words.json``):
the data spell each type in English, and :func:`in_data_words` reads a normalised question's words for a type as the
data's own, so one reader of structure types serves four languages. Ground floor: the standard library only."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

VALUE_WORDS_FILE = Path(__file__).resolve().parents[1] / "data" / "value_words.json"


@cache
def value_words() -> dict[str, tuple[str, ...]]:
    """English phrase as the data spell it -> the phrases that say it in the other languages (normalised)."""
    values = json.loads(VALUE_WORDS_FILE.read_text(encoding="utf-8"))["values"]
    return {english: tuple(said) for english, said in values.items()}


@cache
def _said() -> tuple[re.Pattern[str], dict[str, str]]:
    english_of = {said: english for english, words in value_words().items() for said in words}
    longest_first = sorted(english_of, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(w) for w in longest_first) + r")(?![\w-])")
    return pattern, english_of


def in_data_words(text: str) -> str:
    """``text`` (normalised) with the words it says a structure type in read as the data spell it ("casas
    unifamiliares de una planta" -> "casas single family de single story")."""
    pattern, english_of = _said()
    return pattern.sub(lambda m: english_of[m[0]], text)


__all__ = ["VALUE_WORDS_FILE", "in_data_words", "value_words"]
