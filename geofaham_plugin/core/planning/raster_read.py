"""What a question asks of rasters, read by code from closed classes (``core/data/rasters.json``): the spectral index
it names ("dNBR", "NDVI change") and the images it is computed from (the catalogue's rasters: the user's, the
sample ones of the event a named raster is of), the classes of a named classification it names ("moderate-low or
worse") or the classification itself ("per USGS severity class"), and the values a share or an area is bounded by
("at least 0.27", "below 0.1"). The spec reader (:mod:`.spec_read`) places them in the analysis spec; nothing here
names one wording: the words are the data file's."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from ..domain.rasters import (
    classes_named,
    classification,
    classification_named,
    indices_named,
    plain,
    raster_vocabulary,
    statistic_named,
    words_in,
)
from ..engines.layers import RASTER_PREFIX, UserLayer
from .spec_schema import SpecError

INDEX_PREFIX = "index:"
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)?(?![\w.])")
NEAR_CHARS = 28  # a direction word belongs to a value or class said this close to it


class RasterTerms(BaseModel):
    """The raster terms of one question."""

    index: str | None = None  # the index the subject is (rasters.json indices)
    index_said: bool = False  # named by its own words (not only through a classification's)
    index_at: int = 0
    classification: str | None = None
    classes: list[str] = Field(default_factory=list)  # classes of the classification named
    low: float | None = None  # pixels at or above
    high: float | None = None  # pixels below
    per_class: bool = False  # one figure per class of the classification
    statistic: Literal["median", "min", "max"] | None = None  # a statistic beyond the mean ("the median dNBR")
    implied: list[str] = Field(default_factory=list)


def _side(text: str, start: int, end: int) -> str | None:
    """Which side a value or class said at ``text[start:end]`` is taken from: the direction words just before it
    or within two words after it ("at least 0.27", "moderate-low severity or worse")."""
    vocab = raster_vocabulary()
    before = " ".join(re.findall(r"[a-z0-9]+", text[max(0, start - NEAR_CHARS) : start]))
    after = " ".join(re.findall(r"[a-z0-9]+", text[end : end + NEAR_CHARS]))
    words_after = after.split(" ")
    second_word = len(words_after[0]) + 1 if len(words_after) > 1 else 0  # where the second word starts
    for side in ("at_or_above", "below"):
        words = vocab.direction_words(side)
        if any(e == len(before) for _, e, _ in words_in(before, words)):
            return side
        if any(s <= second_word for s, _, _ in words_in(after, words)):
            return side
    return None


def read_terms(text: str) -> RasterTerms:
    """The raster terms of the normalised question ``text``."""
    terms = RasterTerms()
    stat = statistic_named(text)
    terms.statistic = stat if stat in ("median", "min", "max") else None  # type: ignore[assignment]
    if found := indices_named(text):
        terms.index_at, terms.index = found[0]
        terms.index_said = True
    name = classification_named(text)
    said: list[str] = []
    for cname in raster_vocabulary().classifications:
        said = classes_named(text, cname)
        if said:
            name = cname
            break
    if name is not None:
        c = classification(name)
        if terms.index is None:
            terms.index = c.index
            hits = [s for words in [c.words, *c.class_words.values()] for s, _, _ in words_in(text, words)]
            terms.index_at = min(hits, default=0)
        if terms.index == c.index:
            terms.classification, terms.classes = name, said
    every = set(classification(terms.classification).class_words) if terms.classification else set()
    if terms.classes and len(terms.classes) > 2 and set(terms.classes) >= every:
        terms.per_class = True  # every class named ("unburned, low, ..., high"): one figure per class, no range
    elif terms.classification and terms.classes:
        c = classification(terms.classification)
        first, last = terms.classes[0], terms.classes[-1]
        words = plain(text)
        at = [s for s, _, _ in words_in(words, c.class_words[first])]
        at_end = [e for _, e, _ in words_in(words, c.class_words[last])]
        side = _side(words, min(at), max(at_end)) if at and at_end else None
        if side == "at_or_above":
            terms.low, terms.high = c.lower_bound(first), None
        elif side == "below":
            terms.low, terms.high = None, c.lower_bound(first)
        else:
            terms.low, terms.high = c.lower_bound(first), c.upper_bound(last)
        shown = (
            f"{first}"
            + (f" to {last}" if last != first else "")
            + {"at_or_above": " or above", "below": " (below it)"}.get(side or "", "")
        )
        terms.implied.append(f"{shown} read as {_bounds_text(terms.low, terms.high)} ({c.title})")
    elif terms.classification:
        c = classification(terms.classification)
        if words_in(text, c.words):
            terms.per_class = True
    numbers = list(_NUMBER.finditer(text))
    between = raster_vocabulary().direction_words("between")
    if terms.low is None and terms.high is None and not terms.per_class and len(numbers) >= 2:
        ends = [m.end() for w in between for m in re.finditer(rf"(?<![a-z0-9]){re.escape(plain(w))}(?![a-z0-9])", text)]
        for e in sorted(ends):  # "between 0.1 and 0.27"
            pair = [m for m in numbers if m.start() >= e][:2]
            if len(pair) == 2 and pair[0].start() - e <= 3:
                a, b = (float(m.group().replace(",", ".")) for m in pair)
                terms.low, terms.high = min(a, b), max(a, b)
                break
    if terms.low is None and terms.high is None and not terms.per_class:
        for m in numbers:
            value = float(m.group().replace(",", "."))
            side = _side(text, m.start(), m.end())
            if side == "at_or_above" and terms.low is None:
                terms.low = value
            elif side == "below" and terms.high is None:
                terms.high = value
        if terms.low is not None and terms.high is not None and terms.low >= terms.high:
            terms.low, terms.high = terms.high, terms.low  # "between 0.27 and 0.1"
    if terms.low is None and terms.high is None and not terms.per_class and terms.index:
        for c in raster_vocabulary().classifications.values():  # "the burned area": the classes from burned_from
            if c.index == terms.index and c.burned_from and words_in(text, c.burned_words):
                terms.low = c.lower_bound(c.burned_from)
                terms.implied.append(f"burned read as {_bounds_text(terms.low, None)} ({c.title})")
                break
    return terms


def _bounds_text(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"{low:g} <= value < {high:g}"
    if low is None and high is None:
        return "every value"
    return f"value >= {low:g}" if low is not None else f"value < {high:g}"


def _images(entries: Iterable[UserLayer]) -> list[UserLayer]:
    return [e for e in entries if e.role == "values" and e.raster_kind == "image"]


def index_subject(terms: RasterTerms, entries: dict[str, UserLayer], named: list[str]) -> tuple[str, list[str]] | None:
    """The subject an index the question names stands for: ``layer:<id>`` of a raster holding it already (the
    sample dNBR of the event a named raster is of), or ``index:<name>|<post id>|<pre id>`` computed from images
    (the user's, else the sample ones of that event); with what code assumed. None without an index, or when a
    raster of values is named (its values are the subject)."""
    if terms.index is None:
        return None
    named_entries = [entries[i] for i in named if i in entries]
    if any(e.role == "values" and e.raster_kind in ("values", "population") for e in named_entries):
        return None
    spec = raster_vocabulary().indices[terms.index]
    events = {e.event for e in named_entries if e.event}
    own = [e for e in entries.values() if not e.id.startswith(RASTER_PREFIX)]
    sample = [e for e in entries.values() if e.id.startswith(RASTER_PREFIX) and e.event in events]
    pool = _images(named_entries) or _images(own) or _images(sample)
    if not _images(own):
        ready = [e for e in sample if e.index == terms.index]
        if ready and not _images(named_entries):
            return f"layer:{ready[0].id}", [f"{spec.title}: {ready[0].name}"]
    if not pool and not terms.index_said:
        return None  # severity words without an image: not a question about rasters
    if not pool:
        raise SpecError(f"{spec.title} is computed from an image with the bands it needs: no image is loaded")
    if spec.change is None:
        post = [e for e in pool if e.when == "post"] or pool
        if len(post) > 1:
            raise SpecError(f"which image to compute {spec.title} from: " + ", ".join(e.name for e in post))
        return f"{INDEX_PREFIX}{terms.index}|{post[0].id}|", []
    pre = [e for e in pool if e.when == "pre"]
    post = [e for e in pool if e.when == "post"]
    if (len(pre) != 1 or len(post) != 1) and pool is not _images(own):
        # one of the two named ("the pre- and post-fire composites" read as the post one): the pair of yours
        pre = [e for e in _images(own) if e.when == "pre"]
        post = [e for e in _images(own) if e.when == "post"]
        pool = _images(own)
    if len(pre) != 1 or len(post) != 1:
        names = ", ".join(e.name for e in pool)
        raise SpecError(
            f"{spec.title} is a change between a pre-event and a post-event image: name them "
            f"'pre ...' and 'post ...' (images: {names or 'none'})"
        )
    note = f"{spec.title} computed from '{pre[0].name}' (before) and '{post[0].name}' (after)"
    return f"{INDEX_PREFIX}{terms.index}|{post[0].id}|{pre[0].id}", [note]


def asks_own_rasters(text: str, entries: dict[str, UserLayer], named: list[str]) -> bool:
    """Whether the (normalised) question asks an index of the catalogue's rasters ("the burned area per USGS severity
    class" with your pre and post images): an analysis of them, not a search for imagery."""
    try:
        return index_subject(read_terms(text), entries, named) is not None
    except SpecError:
        return False


def index_parts(what: str) -> tuple[str, str, str | None]:
    """(index, post image id, pre image id or None) of an ``index:...`` subject."""
    name, post, pre = what.removeprefix(INDEX_PREFIX).split("|")
    return name, post, pre or None


__all__ = ["INDEX_PREFIX", "asks_own_rasters", "RasterTerms", "index_parts", "index_subject", "read_terms"]
