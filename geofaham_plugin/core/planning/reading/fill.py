"""The model fills a question's :class:`~.schema.Reading`: one schema-constrained call whose enums are this
question's candidates (sets code found: the disaster's damage inspections and hazard area, the feature classes and
the user's layers the question names, the user's area), shown the most similar examples of the bank; code checks
the reading (:func:`~.checks.check_reading`) and a failed check is one retry with its message."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from ...domain.feature_classes import feature_class_specs
from ...errors import ModelHTTPError, ModelOutputError, ModelRetry, RealModelBlocked
from ...llm import LLM, Message
from ...llm.base import READER_ROLE
from .bank import similar
from .checks import Known, check_reading
from .schema import GENERIC_SETS, MY_AREA, Reading, narrowed

EXAMPLES = 4
CONFIRM, AGAIN = 1, 2  # how many of the most similar examples a second, a third reading skips (other examples)

SYSTEM = (
    "You read a disaster-response question into one JSON object. Fields: subject (the set counted, listed or "
    "measured); grades (damage subject only: the damage grades kept, from undamaged, affected, minor, major, "
    "destroyed; [] = every structure); relation (none, inside, outside, within, beyond, nearest) to reference (the "
    "other set; null without a relation); measure (count, list = which / name them, share, area, length, sum, "
    "mean); share_of (a share's base grades; [] = every structure); separately (true when several figures are asked "
    "at once: one per grade, never their sum); group_by (a breakdown, or null); kinds (the subject's narrower kinds the "
    "question names, spelled as listed: a structure type, a kind of facility; [] = the whole set); kinds_out (the kinds "
    "the question sets aside, every other kind kept: 'besides X', 'other than X', 'apart from X' put X here, never in "
    "kinds). Code reads the disaster, distances "
    "and numbers: choose only among the sets listed. Grades: destroyed = [destroyed]; damaged (any damage) = "
    "[affected, minor, major, destroyed]; damaged but not destroyed = [affected, minor, major]; not destroyed = "
    "[undamaged, affected, minor, major]; undamaged = [undamaged]. In 'of the X, what share were Y' X is share_of "
    "and Y is grades; in 'of all the X, what share lie inside / within the reference' share_of and grades are both "
    "X's grades and the relation makes the part. Leave group_by null and separately false unless the question asks for them. Answer like the "
    "examples."
)


class Candidates(BaseModel):
    """The sets a question's reading may name, each with the line the model sees."""

    sets: dict[str, str] = Field(default_factory=dict, description="set name -> what it is")
    references_only: dict[str, str] = Field(default_factory=dict)
    group_fields: dict[str, str] = Field(default_factory=dict)
    kinds: dict[str, list[str]] = Field(
        default_factory=dict, description="set name -> its kinds as the data spells them"
    )

    def all_kinds(self) -> list[str]:
        return list(dict.fromkeys(k for ks in self.kinds.values() for k in ks))


class ReadOutcome(BaseModel):
    reading: Reading | None = None
    problems: list[str] = Field(default_factory=list, description="checks still failed after the retry")
    error: str | None = None  # the model could not be asked (server, blocked) or gave no usable JSON
    examples: list[str] = Field(default_factory=list)


def class_line(name: str) -> str:
    spec = feature_class_specs().get(name)
    return f"{name}: {spec.description if spec else name.replace('_', ' ')}"


def prompt(question: str, candidates: Candidates, k: int = EXAMPLES, skip: int = 0) -> tuple[list[Message], list[str]]:
    examples = similar(question, k, skip=skip)
    lines = ["Examples:"]
    for e in reversed(examples):  # the most similar last, next to the question
        lines.append(f"Q: {e.q}\nA: {json.dumps(e.a.model_dump(exclude_defaults=True), ensure_ascii=False)}")
    lines.append("Sets: " + "; ".join(f"{v}" for v in candidates.sets.values()))
    if candidates.references_only:
        lines.append("Reference only: " + "; ".join(candidates.references_only.values()))
    if candidates.group_fields:
        lines.append("group_by: " + "; ".join(candidates.group_fields.values()))
    if candidates.kinds:
        lines.append("kinds: " + "; ".join(f"{name}: {', '.join(ks)}" for name, ks in candidates.kinds.items()))
    lines.append(f"Q: {question}\nA:")
    messages = [Message(role="system", content=SYSTEM), Message(role="user", content="\n".join(lines))]
    return messages, [e.id for e in examples]


def read_question(
    llm: LLM,
    question: str,
    candidates: Candidates,
    known: Known,
    *,
    step: str = "read",
    k: int = EXAMPLES,
    skip: int = 0,
) -> ReadOutcome:
    """The model's reading of ``question`` checked by code; a reading whose checks fail twice comes back with its
    problems (the answer quotes them), a model that cannot be asked with its error. ``skip``: the examples after the
    ``skip`` most similar (another reading of the question: :data:`CONFIRM` to confirm the first, :data:`AGAIN` after
    one whose checks failed twice)."""
    subjects = list(candidates.sets)
    references = subjects + list(candidates.references_only)
    output = narrowed(subjects, references, list(candidates.group_fields), kinds=candidates.all_kinds())
    messages, ids = prompt(question, candidates, k, skip)
    last: list[str] = []
    repaired: list[Reading] = []

    def check(r: BaseModel) -> None:
        assert isinstance(r, Reading)
        repaired.append(repair(r, known))
        last[:] = check_reading(repaired[-1], known)
        if last:
            raise ModelRetry("; ".join(last))

    try:
        llm.structured(READER_ROLE, messages, output, step=step, validate=check, retries=1)
    except ModelOutputError as exc:
        if last:
            return ReadOutcome(problems=list(last), examples=ids)
        return ReadOutcome(error=str(exc), examples=ids)
    except (ModelHTTPError, RealModelBlocked, OSError) as exc:
        return ReadOutcome(error=str(exc), examples=ids)
    return ReadOutcome(reading=Reading.model_validate(repaired[-1].model_dump()), examples=ids)


KINDS_SYSTEM = (
    "A disaster-response question names some kinds of the things it counts or lists. Say what it does with them. "
    "only: it keeps just those kinds. aside: it sets them aside and keeps every other kind ('besides X', 'other "
    "than X', 'X not included', 'leaving X out', 'apart from X'). all: it keeps every kind (the kinds named are "
    "examples or context, not a filter). Answer like the examples."
)
KindsUse = Literal["only", "aside", "all"]


class KindsAnswer(BaseModel):
    use: KindsUse


def kinds_prompt(question: str, named: Sequence[str], k: int = EXAMPLES) -> tuple[list[Message], list[str]]:
    """The focused question on the kinds a question names, shown the bank's most similar examples that keep kinds
    and that set kinds aside (as many of each: the answer is not led by the examples' majority)."""
    pool = similar(question, 60)
    only = [e for e in pool if e.a.kinds and not e.a.kinds_out][: k // 2]
    aside = [e for e in pool if e.a.kinds_out][: k - k // 2]
    examples = sorted(only + aside, key=pool.index)
    lines = ["Examples:"]
    for e in reversed(examples):
        use = "aside" if e.a.kinds_out else "only"
        lines.append(f"Q: {e.q}\nKinds named: {', '.join(e.a.kinds_out or e.a.kinds)}\nA: {json.dumps({'use': use})}")
    lines.append(f"Q: {question}\nKinds named: {', '.join(named)}\nA:")
    messages = [Message(role="system", content=KINDS_SYSTEM), Message(role="user", content="\n".join(lines))]
    return messages, [e.id for e in examples]


def ask_kinds(llm: LLM, question: str, named: Sequence[str], *, step: str = "read:kinds") -> KindsUse | None:
    """What ``question`` does with the kinds code found named in it (``named``, as the data spells them), asked of
    the model alone (one small enum); None when the model cannot be asked."""
    messages, _ = kinds_prompt(question, named)
    try:
        return llm.structured(READER_ROLE, messages, KindsAnswer, step=step, retries=1).use
    except (ModelOutputError, ModelHTTPError, RealModelBlocked, OSError):
        return None


def repair(r: Reading, known: Known | None = None) -> Reading:
    """What a reading says that means nothing, dropped (no retry for it): one figure 'separately' of one grade or
    none, a share's base without a share, a share's base equal to its part with nothing else to narrow the part,
    kinds set aside that are every kind there is. And what closed classes code read settle: a distance stated with
    a comparator ("no more than 7,500 m", "farther than 8 km") is a within / beyond relation to the set code read
    it from, whatever relation the reading left out (the model still reads everything else)."""
    update: dict[str, object] = {}
    if known is not None and known.kinds_out_all(r):
        update["kinds_out"] = []
    if (
        known is not None
        and known.relation in ("within", "beyond")
        and known.distances_m
        and not known.grid
        and r.relation not in ("within", "beyond", "nearest")
    ):
        reference = r.reference if r.reference not in (None, r.subject, MY_AREA) else known.reference
        if reference is not None and reference != r.subject:
            update |= {"relation": known.relation, "reference": reference}
    if r.separately and len(set(r.grades)) < 2:
        update["separately"] = False
    if r.share_of and r.measure != "share":
        update["share_of"] = []
    if r.share_of and set(r.share_of) == set(r.grades) and not r.kinds and not r.kinds_out and r.relation == "none":
        update["share_of"] = []  # a base that is its part names no base: every structure is (a 1.5B model's slip)
    return r.model_copy(update=update) if update else r


def default_sets(has_event: bool, has_damage: bool) -> dict[str, str]:
    sets = {}
    if has_event and has_damage:
        sets["damage"] = "damage: the building-damage inspections of the disaster (structures with grades)"
    if has_event:
        sets["hazard"] = "hazard: the disaster's burn area / flood extent"
    return sets


__all__: Sequence[str] = (
    "Candidates",
    "ReadOutcome",
    "read_question",
    "prompt",
    "ask_kinds",
    "kinds_prompt",
    "GENERIC_SETS",
    "MY_AREA",
)
