"""Map feature classes (healthcare, roads, bridges, ...): the one definition, ``core/data/osm_classes.json``.

The same file drives the Overpass queries and local OSM extracts (``engines/osm``), the classification of
OSM layers in the disaster database and the file route (``engines/layers``), the Maps agent's class list
and the question pre-pass's vocabulary (``words``). It lives on the ground floor because the engines and
the planning pre-pass both read it; nothing here imports from above.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

CLASSES_FILE = Path(__file__).resolve().parents[1] / "data" / "osm_classes.json"

OsmElement = Literal["node", "way", "relation"]
#: a tag value: one string, any of a list, or True (any value except "no")
TagValue = str | list[str] | bool
Selector = dict[str, TagValue]


class FeatureKind(BaseModel):
    """A kind narrower than its class ("hospital" of healthcare): the words that ask for it, the tags that make
    a feature one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    words: tuple[str, ...] = Field(min_length=1)
    tags: dict[str, tuple[str, ...]] = Field(min_length=1)


class FeatureClassSpec(BaseModel):
    """One class of ``osm_classes.json``: an OR of selectors, each an AND of tags."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str
    words: tuple[str, ...] = Field(min_length=1, description="singular phrases that ask for the class")
    selectors: tuple[Selector, ...] = Field(min_length=1)
    elements: tuple[OsmElement, ...] = ("node", "way", "relation")
    geometry: Literal["point", "line", "polygon"] | None = None
    keys: tuple[str, ...] = ()
    variants: dict[str, tuple[Selector, ...]] = Field(default_factory=dict)
    kinds: dict[str, FeatureKind] = Field(default_factory=dict)

    @field_validator("words")
    @classmethod
    def _plain_words(cls, words: tuple[str, ...]) -> tuple[str, ...]:
        bad = [w for w in words if not w or w != w.strip().lower()]
        if bad:
            raise ValueError(f"words are lower-case phrases without outer spaces: {bad}")
        return words


@cache
def feature_class_specs() -> dict[str, FeatureClassSpec]:
    """Class name -> its definition, in the file's order."""
    raw = json.loads(CLASSES_FILE.read_text(encoding="utf-8"))["classes"]
    specs = {name: FeatureClassSpec.model_validate(spec) for name, spec in raw.items()}
    owners: dict[str, str] = {}
    for name, spec in specs.items():
        for word in spec.words:
            if owners.setdefault(word, name) != name:
                raise ValueError(f"{CLASSES_FILE.name}: the word '{word}' names both {owners[word]} and {name}")
    return specs


def feature_class_names() -> tuple[str, ...]:
    """The class names, in the file's order."""
    return tuple(feature_class_specs())


def class_words() -> dict[str, tuple[str, ...]]:
    """Class name -> the singular phrases that ask for it in a question."""
    return {name: spec.words for name, spec in feature_class_specs().items()}
