"""What a question asks for, counted, against the figures its specs give.

A question may ask several things ("how many were inspected, and how many of them were destroyed?", "how many, and
which?", "how many pylons stood in the water, and did any escape it?"). A reading that keeps one of them gives a
right number for part of the question, and an answer that states it as the answer drops the rest without saying so.
Code does not read *what* each part asks (the reader does); it counts the parts by the closed class of words that
open an interrogative clause ("how many", "which", "what share", "how far", "did any" ... in four languages, the
``asks`` group of ``data/constraint_words.json``), and compares them with the figures the specs give. An answer with
fewer figures than the question asks, or without the kind of figure a part asks (names, a share, a distance, a
length or area), is partial and names the parts it did not give.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from functools import cache
from typing import Literal

from pydantic import BaseModel

from ..domain.damage import DamageClass
from ..domain.feature_classes import class_words
from .coverage import WORDS_FILE
from .prepass import UNIT_METRES, normalise
from .spec_schema import AnalysisSpec
from .values import position

AskKind = Literal["measure", "share", "distance", "names", "count", "yesno"]
#: a breakdown (a row per group, zone or cell) gives as many counts as a question asks
MANY = 1_000
#: the kind of ask each measure of a spec answers ("how many": a count; "which": a list; "how many km": a length)
ASK_OF_MEASURE: dict[str, AskKind] = {"count": "count", "list": "names", "share": "share", "area": "measure",
                                      "length": "measure", "sum": "measure", "mean": "measure"}  # fmt: skip


class Ask(BaseModel):
    """One interrogative part of the question: what it asks for and the words that opened it."""

    kind: AskKind
    words: str
    clause: str = ""  # the clause it opens, as the question said it (normalised)


@cache
def _inverted() -> re.Pattern[str]:
    """A French question by inversion, anywhere in its clause ("les écoles étaient-elles ..."): it asks yes or no."""
    return re.compile("|".join(json.loads(WORDS_FILE.read_text(encoding="utf-8"))["asks"]["inverted"]))


@cache
def _patterns() -> tuple[re.Pattern[str], list[tuple[AskKind, re.Pattern[str]]]]:
    raw = json.loads(WORDS_FILE.read_text(encoding="utf-8"))["asks"]
    clause = re.compile("|".join(raw["clause"]))
    leading = "(?:(?:" + "|".join(raw["leading"]) + r")\s+)*"
    kinds: list[tuple[AskKind, re.Pattern[str]]] = [
        (kind, re.compile(r"^\s*" + leading + "(?P<ask>" + "|".join(words) + r")(?![\w])"))
        for kind, words in raw["kinds"].items()
    ]
    return clause, kinds


def question_asks(question: str) -> list[Ask]:
    """The question's interrogative parts, in order: each clause that an interrogative opens is one ask (the kinds
    are tried most specific first: "how many km" asks a length, "how many" a count)."""
    clause, kinds = _patterns()
    found = []
    # clauses are split before accents are stripped: Portuguese "é" (is) is no "e" (and)
    for part in (normalise(p) for p in clause.split(question.lower())):
        for kind, pattern in kinds:
            if m := pattern.match(part):
                found.append(Ask(kind=kind, words=m["ask"], clause=" ".join(part.split())))
                break
        else:
            if m := _inverted().search(part):
                found.append(Ask(kind="yesno", words=m[0], clause=" ".join(part.split())))
    return found


def figures(specs: Sequence[AnalysisSpec], *, difference: bool = False) -> Counter[str]:
    """The figures ``specs`` give, by kind: a count (also of a list and of a share's part), names (a list), a share,
    distances (a list related by a distance or the nearest), a measure (area, length, sum, mean); a breakdown gives
    counts without bound; a difference of a comparison one figure more."""
    given: Counter[str] = Counter()
    for s in specs:
        many = s.group_by is not None or s.zones is not None or s.grid_m is not None
        n = MANY if many else 1
        if s.access is not None:  # reachable and cut off: two counts, and which are which
            given.update({"count": 2 * n, "names": 2 * n})
            continue
        if many:  # a breakdown names its rows ("which land-use types ..., and how many hectares of each")
            given["names"] += n
        if s.measure in ("count", "list", "share"):
            given["count"] += n
        if s.measure == "list":
            given["names"] += n
            if s.relation is not None and s.relation.kind in ("within", "beyond", "nearest"):
                given["distance"] += n
        if s.measure == "share":
            given["share"] += n
        if s.measure in ("area", "length", "sum", "mean"):
            given["measure"] += n
    if len(specs) >= 2:  # "which fire destroyed more, Palisades or Eaton": the figures side by side say which
        given["names"] += 1
    if difference:
        given["count"] += 1
        given["measure"] += 1
    return given


def unanswered(question: str, specs: Sequence[AnalysisSpec], *, difference: bool = False) -> list[Ask]:
    """The asks of ``question`` that ``specs`` give no figure for: a kind of figure asked more often than given
    (a yes/no is answered by a count: "did any escape" by the number that did), or more asks than figures."""
    asks = question_asks(question)
    if not asks:
        return []
    given = figures(specs, difference=difference)
    left = Counter(given)
    missing: list[Ask] = []
    for ask in sorted(asks, key=lambda a: a.kind in ("count", "yesno")):  # the particular kinds first
        # a yes/no is answered by a count ("did any escape": the number that did); "how many beds" by a sum
        for kind in _answered_by(ask, specs):
            if left[kind] > 0:
                left[kind] -= 1
                break
        else:
            missing.append(ask)
    # every figure given stands for one ask at most: a list's count and names answer "how many, and which"
    total = sum(min(v, MANY) for v in given.values())
    if not missing and len(asks) > total:
        missing = asks[total:]
    return missing


def _answered_by(ask: Ask, specs: Sequence[AnalysisSpec]) -> tuple[str, ...]:
    """The kinds of figure that answer ``ask``: a yes/no or a count by a count or a measure ("did any escape": the
    number that did; "how many beds": a sum), but a count of the features themselves ("how many hospitals", their
    class said right after the ask) by a count only; a measure in a unit of length by a length or a distance ("how
    many metres from the flood": the distance listed)."""
    if ask.kind == "count" and _counts_features(ask, specs):
        return ("count",)
    if ask.kind in ("count", "yesno"):
        return ("count", "measure")
    if ask.kind == "measure" and any(re.search(rf"(?<!\w){re.escape(u)}(?!\w)", ask.words) for u in UNIT_METRES):
        return ("measure", "distance")
    return (ask.kind,)


def _counts_features(ask: Ask, specs: Sequence[AnalysisSpec]) -> bool:
    """Whether the ask's next words name the class of a set ``specs`` measure ("how many hospitals"; a closed
    class, ``osm_classes.json``): the number of those features is asked, not a field of theirs."""
    rest = ask.clause[len(ask.words) :] if ask.clause.startswith(ask.words) else ""
    classes = {s.subject.feature_class for s in specs if s.subject.kind == "features" and s.subject.feature_class}
    words = class_words()
    return any(position(rest, words.get(str(c), ())) in (0, 1) for c in classes)


def listed_if_asked(question: str, specs: Sequence[AnalysisSpec], *, difference: bool = False) -> list[AnalysisSpec]:
    """``specs`` with their counts made lists when the question also asks which features, or how far ("how many,
    and which?"): a list states the same count, and the names and distances besides; else ``specs`` unchanged."""
    missing = unanswered(question, specs, difference=difference)
    if not missing or difference or any(a.kind not in ("names", "distance") for a in missing):
        return list(specs)
    listed = [
        s.model_copy(update={"measure": "list"})
        if s.measure == "count" and s.access is None and s.group_by is None and s.zones is None and s.grid_m is None
        else s
        for s in specs
    ]
    return listed if not unanswered(question, listed, difference=difference) else list(specs)


def counted_if_asked(question: str, specs: Sequence[AnalysisSpec], *, difference: bool = False) -> list[AnalysisSpec]:
    """``specs`` with figures of each measured set added that the question also asks ("how many, and how many beds in
    total?": the count of the same hospitals; "how far is it, and how many beds does it have?": the set listed with
    its distance, where it is related by a distance or the nearest); else ``specs`` unchanged."""
    missing = unanswered(question, specs, difference=difference)
    if not missing or difference or any(a.kind not in ("count", "yesno", "distance", "names") for a in missing):
        return list(specs)
    kinds = {a.kind for a in missing}
    added = list(specs)
    for s in specs:
        if s.measure not in ("sum", "mean", "area", "length") or s.subject.raster or s.access is not None:
            continue
        if s.group_by is not None or s.zones is not None or s.grid_m is not None:
            continue
        plain = {"field": None, "statistic": None, "weight": "count"}
        if kinds & {"count", "yesno"}:
            added.append(s.model_copy(update={"measure": "count", **plain}))
        distanced = s.relation is not None and s.relation.kind in ("within", "beyond", "nearest")
        if "names" in kinds or ("distance" in kinds and distanced):
            added.append(s.model_copy(update={"measure": "list", **plain}))
    added = [a for i, a in enumerate(added) if a not in added[:i]]
    return added if len(unanswered(question, added, difference=difference)) < len(missing) else list(specs)


def whole_share(spec: AnalysisSpec) -> bool:
    """Whether ``spec`` is a share of damage records whose part is its base (100 % by construction, whatever the
    data): the same grades (none: every record) and no kind or condition only the part keeps, no relation. Such a
    share is a misreading ("what share was a total loss" with the loss not read), never an answer."""
    subject = spec.subject
    if spec.measure != "share" or subject.kind != "damage" or spec.relation is not None or spec.access is not None:
        return False
    if spec.group_by is not None or spec.zones is not None or spec.grid_m is not None:
        return False
    if subject.filters_part and (subject.filters or subject.filters_out or subject.where is not None):
        return False
    every = set(DamageClass)
    return (set(subject.damage_classes) or every) == (set(spec.share_of) or every)


__all__ = ["Ask", "figures", "listed_if_asked", "question_asks", "unanswered", "whole_share"]
