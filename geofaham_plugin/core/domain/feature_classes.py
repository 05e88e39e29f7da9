"""Map feature classes (healthcare, roads, bridges, ...): the one definition, ``core/data/osm_classes.json``.

The same file drives the Overpass queries and local OSM extracts (``engines/osm``), the classification of
OSM layers in the disaster database and the file route (``engines/layers``), the Maps agent's class list
and the question pre-pass's vocabulary (``words``). It lives on the ground floor because the engines and
the planning pre-pass both read it; nothing here imports from above.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
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
    tags: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    qualifiers: tuple[str, ...] = Field(default=(), description="words anywhere in the question that ask for it")
    also_class: str | None = Field(default=None, description="the kind is the features also of this class")


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
    specs = {name: _derive_kind_tags(spec, specs) for name, spec in specs.items()}
    owners: dict[str, str] = {}
    for name, spec in specs.items():
        for word in spec.words:
            if owners.setdefault(word, name) != name:
                raise ValueError(f"{CLASSES_FILE.name}: the word '{word}' names both {owners[word]} and {name}")
    return specs


def _derive_kind_tags(spec: FeatureClassSpec, specs: dict[str, FeatureClassSpec]) -> FeatureClassSpec:
    """``spec`` with the tags of each ``also_class`` kind read from that class's one-key selectors (a road
    bridge: a bridge whose highway value makes it a road); a kind with neither tags nor a class is an error."""
    kinds = {}
    for name, kind in spec.kinds.items():
        if kind.also_class is not None:
            other = specs.get(kind.also_class)
            if other is None or any(
                len(s) != 1 or not isinstance(next(iter(s.values())), list) for s in other.selectors
            ):
                raise ValueError(
                    f"{CLASSES_FILE.name}: kind {name} needs a class of one-key tag lists, not {kind.also_class}"
                )
            tags: dict[str, tuple[str, ...]] = {}
            for selector in other.selectors:
                for key, values in selector.items():
                    tags[key] = tags.get(key, ()) + tuple(values)  # type: ignore[arg-type]
            kind = kind.model_copy(update={"tags": tags})
        if not kind.tags:
            raise ValueError(f"{CLASSES_FILE.name}: kind {name} has no tags")
        kinds[name] = kind
    return spec.model_copy(update={"kinds": kinds})


def kinds_name(feature_class: str | None, kinds: list[str] | tuple[str, ...]) -> str:
    """Narrower kinds in words, their first word each: "road bridge", "hospital / clinic"."""
    spec = feature_class_specs().get(str(feature_class))
    names = [spec.kinds[k].words[0] if spec is not None and k in spec.kinds else k.replace("_", " ") for k in kinds]
    return " / ".join(names)


def feature_class_names() -> tuple[str, ...]:
    """The class names, in the file's order."""
    return tuple(feature_class_specs())


def class_words() -> dict[str, tuple[str, ...]]:
    """Class name -> the singular phrases that ask for it in a question."""
    return {name: spec.words for name, spec in feature_class_specs().items()}


def classes_of_tags(tags: Mapping[str, str]) -> list[str]:
    """The classes whose selectors keep a feature with these tags (OpenStreetMap's key -> value; a key that
    takes any value is kept unless its value is "no"), in the file's order."""
    found = []
    for name, spec in feature_class_specs().items():
        for selector in spec.selectors:
            if all(tag_kept(tags.get(key), wanted) for key, wanted in selector.items()):
                found.append(name)
                break
    return found


def tag_kept(value: str | None, wanted: object) -> bool:
    """Whether a selector's value for a key (True / "*": any but "no"; a value; a list of values) keeps ``value``."""
    if value is None or value == "":
        return False
    if wanted is True or wanted == "*":
        return value != "no"
    if isinstance(wanted, str):
        return value == wanted
    return isinstance(wanted, list | tuple) and value in wanted


#: an OpenStreetMap tag (or a field) written out in a normalised question: ``key=value`` ("natural=scrub")
WRITTEN_TAG = re.compile(r"(?<![\w=])([a-z][a-z_:]*)\s?=\s?([a-z][a-z_]*)(?![\w=])")


def written_tags(text: str) -> list[tuple[str, str]]:
    """The tags a (normalised) question writes out: [(key, value)], in order."""
    return [(m[1], m[2]) for m in WRITTEN_TAG.finditer(text)]


def tag_classes(text: str) -> list[str]:
    """The feature classes a tag written out names: those with a selector that keeps features tagged so
    ("landuse=industrial": landuse; "highway=motorway_link": roads; "place=hamlet": places). A closed class: the
    tags of ``osm_classes.json``. A key that takes any value names the class only when it is the selector's one tag
    ("building=yes": buildings; "highway=motorway_link" is no bridge, though a bridge is any highway)."""
    out: list[str] = []
    for key, value in written_tags(text):
        for name, spec in feature_class_specs().items():
            for sel in spec.selectors:
                said = sel.get(key)
                if (
                    (said is True and len(sel) == 1)
                    or said == value
                    or (isinstance(said, list | tuple) and value in said)
                ):
                    out.append(name)
                    break
    return list(dict.fromkeys(out))
