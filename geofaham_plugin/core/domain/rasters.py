"""Rasters as a vocabulary: the kinds a raster layer is, the words a question calls them by, before / after words,
spectral indices and named classifications of an index (USGS dNBR burn severity), all from one file,
``core/data/rasters.json``. The catalogue gives a raster its kind and aliases from it, the raster engine its class
breaks and labels, the reader the indices and classes a question names. Nothing here imports from above."""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

RASTERS_FILE = Path(__file__).resolve().parents[1] / "data" / "rasters.json"

RasterKind = Literal["image", "mask", "classes", "population", "values"]
When = Literal["pre", "post"]


class KindWords(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str
    words: list[str] = Field(default_factory=list)
    pre_words: list[str] = Field(default_factory=list)
    post_words: list[str] = Field(default_factory=list)
    name_words: list[str] = Field(default_factory=list)


class IndexSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    index: str  # the index of one image (nbr, ndvi ...)
    change: Literal["pre_minus_post", "post_minus_pre"] | None  # a change between two dates, or one image's index
    title: str
    words: list[str]


class Classification(BaseModel):
    """Named classes of an index's values: class i holds ``breaks[i-1] <= v < breaks[i]``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str
    index: str
    breaks: list[float]
    labels: list[str]
    burned_from: str | None = None  # the first class of what "burned" means
    burned_words: list[str] = Field(default_factory=list)
    words: list[str]
    class_words: dict[str, list[str]]

    def lower_bound(self, label: str) -> float | None:
        """The value a class starts at (None for the first, open below)."""
        i = self.labels.index(label)
        return self.breaks[i - 1] if i > 0 else None

    def upper_bound(self, label: str) -> float | None:
        """The value the next class starts at (None for the last, open above)."""
        i = self.labels.index(label)
        return self.breaks[i] if i < len(self.breaks) else None


class RasterVocabulary(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    about: str
    kinds: dict[str, KindWords]
    when: dict[str, list[str]]
    indices: dict[str, IndexSpec]
    classifications: dict[str, Classification]
    directions: dict[str, list[str] | str]
    statistics: dict[str, list[str] | str]

    def direction_words(self, side: str) -> list[str]:
        words = self.directions.get(side, [])
        return list(words) if isinstance(words, list) else []


@cache
def raster_vocabulary() -> RasterVocabulary:
    return RasterVocabulary.model_validate(json.loads(RASTERS_FILE.read_text(encoding="utf-8")))


def classification(name: str) -> Classification:
    return raster_vocabulary().classifications[name]


def plain(text: str) -> str:
    """Lower case, accents stripped, every run of other characters one space (how words are matched)."""
    text = "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))
    return " ".join(re.findall(r"[a-z0-9]+", text))


def words_in(text: str, words: list[str]) -> list[tuple[int, int, str]]:
    """(start, end, word) of each of ``words`` said whole in ``text`` (both normalised: words and spaces)."""
    said = plain(text)
    out: list[tuple[int, int, str]] = []
    for word in sorted(words, key=len, reverse=True):
        w = plain(word)
        if not w:
            continue
        for m in re.finditer(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", said):
            if all(m.end() <= s or m.start() >= e for s, e, _ in out):
                out.append((m.start(), m.end(), word))
    return sorted(out)


def when_of(name: str) -> When | None:
    """Whether a raster's name says it is from before or after the event ("HURST_s2_pre_fire", "imagen despues")."""
    found = [w for w, words in raster_vocabulary().when.items() if words_in(name.replace("_", " "), words)]
    return found[0] if len(found) == 1 and found[0] in ("pre", "post") else None  # type: ignore[return-value]


def kind_aliases(kind: str, when: str | None) -> list[str]:
    """The phrases a question may call a raster of ``kind`` by ("the post-fire image", "the fire mask")."""
    words = raster_vocabulary().kinds.get(kind)
    if words is None:
        return []
    if kind == "image":
        return list(words.pre_words if when == "pre" else words.post_words if when == "post" else words.words)
    return list(words.words)


def _longest(text: str, groups: dict[str, list[str]]) -> list[tuple[int, str]]:
    """(position, group) of each group's words said in ``text``, longest phrases first, never overlapping."""
    found = [(s, e, name) for name, words in groups.items() for s, e, _ in words_in(text, words)]
    found.sort(key=lambda f: (-(f[1] - f[0]), f[0]))
    taken: list[tuple[int, int, str]] = []
    for s, e, name in found:
        if all(e <= a or s >= b for a, b, _ in taken):
            taken.append((s, e, name))
    return sorted((s, name) for s, _, name in taken)


def indices_named(text: str) -> list[tuple[int, str]]:
    """(position, index name) of each spectral index the text names ("dNBR", "the NDVI change")."""
    return _longest(text, {name: spec.words for name, spec in raster_vocabulary().indices.items()})


def classes_named(text: str, name: str) -> list[str]:
    """The classes of classification ``name`` the text names ("moderate-low", "alta"), in the classification's
    order ("moderate-low severity" names moderate-low, not low)."""
    c = classification(name)
    said = {label for _, label in _longest(text, c.class_words)}
    return [label for label in c.labels if label in said]


def statistic_named(text: str) -> str | None:
    """The raster statistic beyond mean and sum the text names ("the median dNBR", "the maximum"), or None."""
    groups = {k: v for k, v in raster_vocabulary().statistics.items() if isinstance(v, list)}
    found = _longest(text, groups)
    return found[0][1] if len({name for _, name in found}) == 1 else None


def classification_named(text: str) -> str | None:
    """The classification the text names by its words ("burn severity", "USGS classes"), or by its classes."""
    for name, c in raster_vocabulary().classifications.items():
        if words_in(text, c.words):
            return name
    return None


__all__ = [
    "Classification",
    "RasterKind",
    "classes_named",
    "classification",
    "classification_named",
    "indices_named",
    "kind_aliases",
    "raster_vocabulary",
    "statistic_named",
    "plain",
    "when_of",
    "words_in",
]
