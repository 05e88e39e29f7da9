"""A question's specs read twice: by code (the closed classes and the old rules, :func:`~..spec_read.spec_from_facts`)
and by the model from the bank's examples, checked by code (:mod:`.fill`, :mod:`.checks`). :func:`read_specs`
reconciles them (:mod:`.reconcile`): the specs that run, the readings the answer states, and the parts it must
say it could not read (constraints no step applies, so the answer is partial and shows what was computed)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from pydantic import BaseModel, Field

from ...agents.maps import FEATURE_CLASSES
from ...domain.damage import ANY_DAMAGE, DamageClass
from ...domain.events import get_event
from ...domain.feature_classes import feature_class_specs
from ...domain.language import phrase
from ...engines.layers import LayerCatalogue
from ...llm import LLM
from ...llm.base import READER_ROLE
from ..asks import ASK_OF_MEASURE, question_asks, unanswered
from ..coverage import Constraint, asks_nearest, question_constraints
from ..facts import PrepassFacts
from ..names import features_named, with_named_features, words_of
from ..prepass import grade_percent_spans, grades_compared, normalise, user_entries
from ..roads import Unavailable
from ..spec_read import damage_domain, kinds_needed, kinds_said
from ..spec_schema import IMPLIED_RELATIONS, AnalysisSpec, SpecError
from .checks import Known, all_grades
from .fill import AGAIN, CONFIRM, Candidates, ask_kinds, class_line, default_sets, read_question
from .qualifiers import contradictions
from .reconcile import FIELDS, Difference, classes_of, differences, overlay, project, same_field, set_ref
from .schema import MY_AREA, Reading, class_grade

#: the fields a second reading may settle as code read them (names, a closed class; not phrasings)
VOTABLE = frozenset({"subject", "relation", "reference", "kinds"})
#: the fields a reading says of its own subject (meaningless for another subject)
SUBJECT_BOUND = frozenset({"grades", "share_of", "separately", "kinds"})
#: What a reading's field is, in the answer's words (the field names are the schema's; the texts are phrases, in the
#: answer's language where the answer says them)
FIELD_WORDS = {f: phrase(f"reading.field.{f}") for f in FIELDS}


class Read(BaseModel):
    """The outcome of reading a question: the specs to run and what the answer must say about the reading."""

    specs: list[AnalysisSpec]
    asked: bool = False  # the model was asked
    reading: Reading | None = None  # the model's checked reading
    code: Reading | None = None  # code's specs, flat
    differences: list[Difference] = Field(default_factory=list)
    applied: list[str] = Field(default_factory=list, description="fields where the model's reading was applied")
    notes: list[str] = Field(default_factory=list, description="said in the answer's limitations")
    unavailable: list[Unavailable] = Field(default_factory=list)
    constraints: list[Constraint] = Field(
        default_factory=list, description="what coverage checks beyond code's reading (the model's applied fields)"
    )
    replaces: list[str] = Field(
        default_factory=list, description="kinds of code's constraints the reading's replace (grades one by one)"
    )
    error: str | None = None
    examples: list[str] = Field(default_factory=list)


def _event(specs: Sequence[AnalysisSpec]) -> int | None:
    for s in specs:
        for ev in (s.subject.event_id, s.relation.reference.event_id if s.relation else None):
            if ev:
                return ev
    return None


def candidates_for(
    facts: PrepassFacts,
    specs: Sequence[AnalysisSpec],
    layers: LayerCatalogue,
    aoi_artifact_id: str | None,
    event_id: int | None = None,
) -> tuple[Candidates, Known]:
    """The sets the question's reading may name (code's: the disaster's, the classes and layers it names)."""
    event_id = _event(specs) or event_id
    has_damage = bool(event_id and layers.find(event_id=event_id, role="damage"))
    sets = default_sets(event_id is not None, has_damage)
    classes = [c for c in facts.target_entities if not (c == "buildings" and has_damage)]
    classes = [c for c in classes if c in FEATURE_CLASSES]
    for c in classes:
        sets[c] = class_line(c)
    entries = {e.id: e for e in user_entries(layers)}
    named_layers = []
    group_fields: dict[str, str] = {}
    if has_damage:
        group_fields |= {"structure_type": "structure_type", "damage": "damage (grade)"}
    for layer_id in facts.layers:
        entry = entries.get(layer_id)
        if entry is None:
            continue
        name = "layer:" + layer_id.removeprefix("user:")
        named_layers.append(name)
        fields = ", ".join(f.name for f in entry.fields[:8])
        sets[name] = f"{name}: your layer '{entry.name}'" + (f" (fields: {fields})" if fields else "")
        for f in entry.fields:
            if f.type == "text" and f.name not in group_fields:
                group_fields[f.name] = f.name
    for s in specs:  # a set code chose that the lists above miss (a feature class found by its kind)
        for ref in (s.subject, s.relation.reference if s.relation else None):
            if ref is not None and ref.kind == "features" and ref.feature_class and ref.feature_class not in sets:
                sets[ref.feature_class] = class_line(ref.feature_class)
            if ref is not None and ref.index:  # an index code computes from your images ("the mean dNBR")
                sets.setdefault(f"index:{ref.index}", f"index:{ref.index}: {ref.describe()} (a raster of values)")
            elif ref is not None and ref.kind == "layer" and ref.raster and (e := entries.get(str(ref.layer_id))):
                # a raster code took without its name being said ("how many people": your population raster)
                sets.setdefault(f"layer:{e.id.removeprefix('user:')}", f"layer:{e.id.removeprefix('user:')}: {e.title}")
        if s.zones is not None and s.zones.layer_id:  # zones code cuts the measure to: not the subject or reference
            zoned = "layer:" + s.zones.layer_id.removeprefix("user:")
            named_layers = [n for n in named_layers if n != zoned]
    kinds: dict[str, list[str]] = {}
    domain = damage_domain(event_id, layers) if has_damage else None
    if domain is not None and "damage" in sets:
        kinds["damage"] = list(domain[1])
    specs_of = feature_class_specs()
    for name in sets:
        if name in specs_of and specs_of[name].kinds:
            kinds[name] = list(specs_of[name].kinds)
    refs = {MY_AREA: f"{MY_AREA}: the area you drew or selected"} if aoi_artifact_id else {}
    relations = {
        str(c.value) for c in question_constraints(facts, aoi_artifact_id=aoi_artifact_id) if c.kind == "relation"
    }
    masks = [
        "layer:" + layer_id.removeprefix("user:")
        for layer_id in facts.layers
        if (e := entries.get(layer_id)) is not None and e.role == "values" and e.raster_kind in ("mask", "classes")
    ]
    known = Known(
        masks=masks,
        indices=[name for name in sets if name.startswith("index:")],
        distances_m=list(facts.distances_m),
        k=facts.k,
        classes=classes,
        layers=named_layers,
        has_aoi=aoi_artifact_id is not None,
        has_damage=has_damage,
        ungraded=has_damage and _ungraded(event_id, layers),
        damage_family=_damage_family(event_id, layers) if has_damage else None,
        grid="grid" in relations,
        kinds=kinds,
    )
    code = project(specs) if specs else None
    if code is not None and code.relation in ("within", "beyond") and facts.distances_m:
        known = known.model_copy(update={"relation": code.relation, "reference": code.reference})
    return Candidates(sets=sets, references_only=refs, group_fields=group_fields, kinds=kinds), known


def _damage_family(event_id: int | None, layers: LayerCatalogue) -> str | None:
    """The geometry family of the disaster's damage layer ("point" for inspection points, "polygon" for outlines)."""
    found = layers.find(event_id=event_id, role="damage") if event_id else []
    return layers.geometry_family(found[0].id) if found else None


def _ungraded(event_id: int | None, layers: LayerCatalogue) -> bool:
    """Whether the disaster's damage layer tells damaged from undamaged only (no grade of the scale in its values)."""
    found = layers.find(event_id=event_id, role="damage") if event_id else []
    spec = found[0].damage if found else None
    scale = layers.damage_scales.get(spec.scale) if spec else None
    grades = {c.value for c in ANY_DAMAGE}
    return scale is not None and not grades & set(scale.values.values())


def _code_read(facts: PrepassFacts, specs: Sequence[AnalysisSpec], aoi_artifact_id: str | None) -> set[str]:
    """The fields code read from the question's words (not left at their default)."""
    kinds = {c.kind for c in question_constraints(facts, aoi_artifact_id=aoi_artifact_id)}
    read = {"subject"}
    if facts.damage_classes:
        read.add("grades")
    if "measure" in kinds or facts.wants_count:
        read.add("measure")
    first = specs[0]
    implied = any(note in IMPLIED_RELATIONS for note in first.implied)
    if first.relation is not None and not implied:
        read |= {"relation", "reference"}
    if first.group_by is not None:
        read.add("group_by")
    damage_kinds = first.subject.kind == "damage" and (first.subject.filters or first.subject.filters_out)
    if first.subject.kinds or first.subject.kinds_out or damage_kinds:
        read.add("kinds")
    return read


def effective_kinds(r: Reading, candidates: Candidates, event_id: int | None, layers: LayerCatalogue) -> Reading:
    """``r`` with the kinds that narrow its subject: none when they keep the whole set (every structure type, or
    every local source of the class of those kinds already). A damage set's kinds set aside become the kinds kept:
    the others of its structure types ("besides houses": every other type, as code's filters spell it)."""
    if r.subject == "damage" and r.kinds_out:
        domain = candidates.kinds.get("damage", [])
        kept = [k for k in (r.kinds or domain) if k not in r.kinds_out]
        r = r.model_copy(update={"kinds": sorted(kept), "kinds_out": []})
    if not r.kinds:
        return r
    if r.subject == "damage":
        keep = [] if set(r.kinds) >= set(candidates.kinds.get("damage", ())) else sorted(r.kinds)
    else:
        keep = sorted(kinds_needed(r.subject, list(r.kinds), event_id, layers))
    return r if keep == r.kinds else r.model_copy(update={"kinds": keep})


def unsaid_kinds_dropped(r: Reading, question: str) -> Reading:
    """``r`` without the kinds of a feature class the question says nothing of (a 1.5B model narrowed "schools"
    to universities): a class's kinds are a closed class of words, tags and qualifiers, so a kind none of them
    names is no reading of the question."""
    if r.subject not in feature_class_specs() or not (r.kinds or r.kinds_out):
        return r
    said = set(kinds_said(normalise(question), r.subject))
    kept = {"kinds": [k for k in r.kinds if k in said], "kinds_out": [k for k in r.kinds_out if k in said]}
    return r.model_copy(update=kept) if kept != {"kinds": r.kinds, "kinds_out": r.kinds_out} else r


def unsaid_values_given_way(r: Reading, code: Reading, question: str) -> Reading:
    """``r`` with code's kinds of a damage set when code found kinds named (values of the data: a closed class) and
    the model's differ by a kind the question gives no word for: one code did not keep, unless a word of its own
    (not of code's kinds) is said; or one of code's it left out, unless a word of its kinds that the one left out
    lacks is said ("single-family homes" are both single-family types, not the single-storey one alone)."""
    if r.subject != "damage" or code.subject != "damage" or not code.kinds or not r.kinds or r.kinds_out:
        return r  # (kinds set aside are the model's to read: "sheds aside")
    words = set(words_of(question))
    kept = {w for k in code.kinds for w in words_of(k)}
    chosen = {w for k in r.kinds for w in words_of(k)}
    added_said = all((set(words_of(k)) - kept) & words for k in r.kinds if k not in code.kinds)
    left_said = all((chosen - set(words_of(k))) & words for k in code.kinds if k not in r.kinds)
    if added_said and left_said:
        return r
    return r.model_copy(update={"kinds": list(code.kinds), "kinds_out": list(code.kinds_out)})


def _kind_field(event_id: int | None, layers: LayerCatalogue) -> str | None:
    domain = damage_domain(event_id, layers)
    return domain[0] if domain else None


def read_specs(
    llm: LLM,
    facts: PrepassFacts,
    specs: list[AnalysisSpec],
    layers: LayerCatalogue,
    aoi_artifact_id: str | None,
    *,
    step: str = "plan",
    model: bool = True,
) -> Read:
    """Code's ``specs`` reconciled with the model's checked reading (code's alone when no model reads, or without
    ``model``); a qualifier of the disaster the chosen one contradicts ("the Palisades flood") is said, never
    answered past; SQL typed into the question is said not read."""
    read = _reconciled(llm, facts, specs, layers, aoi_artifact_id, step=step) if model else Read(specs=specs)
    read.notes += [f"not read (code, not words): “{text}”" for text in facts.unread]
    bad = contradictions(facts.question, facts.event_id)
    if bad:
        what = "; ".join(bad)
        read.unavailable.append(
            Unavailable(
                constraints=["reading:event"],
                phrase="reading.contradicts",
                values={"what": what, "event": getattr(get_event(facts.event_id or 0), "name", "")},
            )
        )
        read.constraints.append(Constraint(kind="reading", value="event", phrase="the disaster named"))
    return read


def _reconciled(
    llm: LLM,
    facts: PrepassFacts,
    specs: list[AnalysisSpec],
    layers: LayerCatalogue,
    aoi_artifact_id: str | None,
    *,
    step: str = "plan",
) -> Read:
    if not specs or not llm.serves(READER_ROLE):
        return Read(specs=specs)
    candidates, known = candidates_for(facts, specs, layers, aoi_artifact_id)
    outcome = read_question(llm, facts.question, candidates, known, step=f"{step}:read")
    if outcome.reading is None and outcome.problems:  # inconsistent twice: once more, from other examples
        retried = read_question(llm, facts.question, candidates, known, step=f"{step}:again", skip=AGAIN)
        outcome = retried if retried.reading is not None else outcome
    code = project(specs)
    if outcome.reading is None:
        if outcome.problems:  # twice inconsistent: code's numbers are shown as what was computed, not as the answer
            text = "; ".join(outcome.problems[:3])
            return Read(
                specs=specs,
                asked=True,
                code=code,
                unavailable=[
                    Unavailable(constraints=["reading:spec"], phrase="reading.unread", values={"problems": text})
                ],
                constraints=[Constraint(kind="reading", value="spec", phrase=facts.question)],
                examples=outcome.examples,
            )
        # the model could not be asked (server down, timed out, no JSON): code's reading alone is not the answer;
        # computed and shown, the answer partial (code's rules misread about a third of new wordings)
        error = " ".join(str(outcome.error or "no answer").split())[:160]
        return Read(
            specs=specs,
            asked=True,
            code=code,
            notes=["the model could not read the question; it was read by code alone"],
            error=outcome.error,
            examples=outcome.examples,
            unavailable=[
                Unavailable(constraints=["reading:spec"], phrase="reading.unconfirmed", values={"error": error})
            ],
            constraints=[Constraint(kind="reading", value="spec", phrase=facts.question)],
        )
    event_id = _event(specs) or facts.event_id
    kind_field = _kind_field(event_id, layers)

    def normalised(r: Reading) -> Reading:
        r = unsaid_values_given_way(unsaid_kinds_dropped(r, facts.question), code, facts.question)
        r = effective_kinds(r, candidates, event_id, layers)
        said_grades = {class_grade(c) for c in facts.damage_classes}
        if r.measure == "share" and not all_grades(r.share_of) and not set(r.share_of) <= said_grades:
            # a share's base of grades no damage word of the question says ("what share of homes had minor
            # damage": of every home): the damage words are a closed class code reads, the base is code's
            r = r.model_copy(update={"share_of": code.share_of})
        if r.measure == "share" != code.measure and grade_percent_spans(normalise(facts.question)):
            # the percentages said are grades' ("1 to 9 percent damage"); code read no share asked outside them
            r = r.model_copy(update={"measure": code.measure, "share_of": code.share_of})
        if r.subject == "damage" and grades_compared(normalise(facts.question)) and facts.damage_classes:
            # a share damaged or a grade compared ("ten percent damage or worse", "Minor or worse") is the grades of
            # the data's scale that meet it: a closed class code reads, the model's grades give way
            grades = [class_grade(c) for c in facts.damage_classes]
            r = r.model_copy(update={"grades": grades, "separately": code.separately})  # one set of grades
        return r

    reading = normalised(outcome.reading)
    code_read = _code_read(facts, specs, aoi_artifact_id)
    domain = candidates.kinds.get(reading.subject, []) if reading.subject == code.subject else []
    diffs = differences(code, reading, code_read, has_aoi=aoi_artifact_id is not None, kinds_domain=domain)
    kinds_use = None
    if any(d.field == "kinds" and d.code_read and _left_out("kinds", reading) for d in diffs) and code.kinds:
        # code found kinds named and kept them; the model's reading said nothing of them: what the question does
        # with them ("besides houses" sets them aside) is the model's to say, asked alone
        kinds_use = ask_kinds(llm, facts.question, code.kinds, step=f"{step}:kinds")
        if kinds_use == "aside":
            reading = effective_kinds(
                reading.model_copy(update={"kinds_out": code.kinds}), candidates, event_id, layers
            )
            diffs = differences(code, reading, code_read, has_aoi=aoi_artifact_id is not None, kinds_domain=domain)
    # (kinds the question says nothing of are no reading: "land tagged landuse=railway" sets no residential aside)
    set_aside = list(unsaid_kinds_dropped(outcome.reading, facts.question).kinds_out)
    if set_aside and "kinds" not in code_read and not code.kinds and not code.kinds_out:
        # the model sets aside kinds code found no word for (a 1.5B model put 'hospital' aside in "hospitals with
        # no helipad"): asked alone whether the question sets them aside, keeps only them, or keeps every kind
        use = ask_kinds(llm, facts.question, set_aside, step=f"{step}:kinds_out")
        if use in ("all", "only"):
            kept = list(outcome.reading.kinds) + (set_aside if use == "only" else [])
            update = {"kinds": list(dict.fromkeys(kept)), "kinds_out": []}
            reading = effective_kinds(outcome.reading.model_copy(update=update), candidates, event_id, layers)
            diffs = differences(code, reading, code_read, has_aoi=aoi_artifact_id is not None, kinds_domain=domain)
    named = named_grades(facts.question, layers)
    several = len(question_asks(facts.question)) >= 2  # "how many destroyed, and how many undamaged?"
    group_named = facts.group_by is not None and bool(code.group_by)
    adopt, two = _settled(diffs, code, reading, code_read, named, group_named, several)
    if kinds_use == "all":  # the kinds named are no filter to the model: code's filter and none are two readings
        two += [d for d in diffs if d.field == "kinds" and d not in two]
    distance = facts.distances_m[0] if facts.distances_m else None
    result = Read(specs=specs, asked=True, reading=reading, code=code, differences=diffs, examples=outcome.examples)
    seconds: list[Reading | None] = []

    def second_reading() -> Reading | None:
        """The model's reading from other examples (asked once)."""
        if not seconds:
            second = read_question(llm, facts.question, candidates, known, step=f"{step}:confirm", skip=CONFIRM)
            seconds.append(normalised(second.reading) if second.reading else None)
        return seconds[0]

    # the sets and how they relate, which code read from names (a closed class): a second reading may outvote the
    # first; not kinds the model was asked about alone (its answer was its second word on them)
    votable = VOTABLE - ({"kinds"} if kinds_use else set())
    if any(d.code_read and d.field in votable for d in two):
        other = second_reading()
        has_aoi = aoi_artifact_id is not None
        other_diffs = differences(code, other, code_read, has_aoi=has_aoi, kinds_domain=domain) if other else None
        two, agreed = outvoted(two, other_diffs, votable, reading)
        if "subject" in agreed:  # what the first reading said of the subject it chose is no reading to apply
            adopt -= subject_bound(reading)
        if agreed:
            result.notes.append(
                "read as code read "
                + ", ".join(FIELD_WORDS[f] for f in agreed)
                + " (the model's second reading, from other examples, agrees with it; its first did not)"
            )
    by_name = {"grades"} if named and set(reading.grades) == named else set()  # the data's own grade names said them
    if adopt - by_name:  # the model alone reads these: a second reading from other examples must read them alike
        unsure = unconfirmed(reading, second_reading(), adopt - by_name)
        if "grades" in unsure:  # a share's base and one figure per grade stand on the grades
            unsure |= adopt & {"share_of", "separately"}
        if unsure:
            result.notes.append("the model read " + ", ".join(FIELD_WORDS[f] for f in sorted(unsure)) + " two ways")
            two += [d for d in diffs if d.field in unsure]
            adopt -= unsure
    if adopt:
        try:
            specs = overlay(specs, reading, adopt, distance_m=distance, k=facts.k, kind_field=kind_field)
        except (ValueError, SpecError) as exc:
            two += [d for d in diffs if d.field in adopt]
            result.notes.append(f"the model's reading could not be applied ({exc})")
        else:
            result.applied = sorted(adopt)
            result.notes += [
                f"{FIELD_WORDS[d.field]} read as {d.model} (code read {d.code})" for d in diffs if d.field in adopt
            ]
            result.constraints += _applied_constraints(reading, adopt)
            if ("separately" in adopt and reading.separately) or (by_name & adopt and "share_of" not in adopt):
                # one figure per grade (each grade its own condition), or the grades named in the data's words
                # instead of code's reading of the damage words: the model's grades are what coverage checks
                result.replaces.append("damage_class")
    if two:
        fields = set(adopt) | {d.field for d in two}  # the model's reading, less what it left out
        try:
            alternative = overlay(result.specs, reading, fields, distance_m=distance, k=facts.k, kind_field=kind_field)
        except (ValueError, SpecError):
            alternative = []
        alternative = with_named_features(alternative, features_named(facts, layers), facts.question)
        if alternative and all(a in specs for a in alternative):
            # read two ways that compute the same ("how far is Huntington Hospital": its distance, listed, whether
            # read as a length or a list): one reading
            two = []
        elif (
            alternative and not unanswered(facts.question, specs) and (left := unanswered(facts.question, alternative))
        ):
            # the question's asks (a closed class of interrogatives) are code's reading's figures and not the model's
            # ("a qué distancia está el Hospital Clínico": a distance, not a length inside the flood): code's
            result.notes.append(
                "read as code read it: the other reading gives no figure for "
                + " / ".join(dict.fromkeys(a.clause or a.words for a in left))
            )
            alternative, two = [], []
        specs = list(specs) + [a for a in alternative if a not in specs]
        # the alternative's grades are asked (by one reading): coverage does not take them for a narrowing unasked
        result.constraints += _applied_constraints(reading, {d.field for d in two} & {"grades"})
        if [d.field for d in two] == ["measure"] and alternative and _asked_only(facts.question, reading, code):
            # "how many km were flooded": the question's asks (a closed class) ask the model's measure, not code's
            specs = alternative
            result.notes.append(
                f"the measure read as {reading.measure} (the question asks for it; code read {code.measure})"
            )
            two = []
        elif [d.field for d in two] == ["measure"] and alternative and _both_asked(facts.question, code, reading):
            # "how many km were flooded, and what share of the streets is that": each reading one of two asks
            result.notes.append(f"both measures asked: {code.measure} and {reading.measure}")
            two = []
        for d in two:
            result.unavailable.append(
                Unavailable(
                    constraints=[f"reading:{d.field}"],
                    phrase="reading.two_ways",
                    values={"code": d.code, "model": d.model},
                )
            )
            result.constraints.append(Constraint(kind="reading", value=d.field, phrase=FIELD_WORDS[d.field]))
    result.specs = specs
    return result


def _both_asked(question: str, code: Reading, model: Reading) -> bool:
    """Whether the question asks, in two interrogative parts (a closed class, :mod:`..asks`), both the measure code
    read and the one the model read: then both are the answer, not two readings of one ask."""
    asked = [a.kind for a in question_asks(question)]
    mine, theirs = ASK_OF_MEASURE.get(code.measure), ASK_OF_MEASURE.get(model.measure)
    return mine != theirs and mine in asked and theirs in asked and len(asked) >= 2


def _asked_only(question: str, model: Reading, code: Reading) -> bool:
    """Whether the question's asks ask the measure the model read (a length or an area: "how many km") and not the
    one code read (a count): then the model's measure is the question's."""
    asked = {a.kind for a in question_asks(question)}
    mine, theirs = ASK_OF_MEASURE.get(code.measure), ASK_OF_MEASURE.get(model.measure)
    return theirs == "measure" and theirs in asked and mine not in asked and code.measure in ("count", "list")


def named_grades(question: str, layers: LayerCatalogue) -> set[str]:
    """The grades the question names as the damage layers spell them ("minor or major", "no damage"): the words of
    the catalogue's damage scales before their percentages, a closed class read in code."""
    text = normalise(question)
    out = set()
    for scale in layers.damage_scales.values():
        for raw, cls in scale.values.items():
            word = normalise(raw.split("(")[0]).strip()
            if cls in DamageClass.__members__.values() and word and re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text):
                out.add(class_grade(DamageClass(cls)))
    return out


def _settled(
    diffs: list[Difference],
    code: Reading,
    model: Reading,
    code_read: set[str],
    named: AbstractSet[str] = frozenset(),
    group_named: bool = False,
    several_asked: bool = True,
) -> tuple[set[str], list[Difference]]:
    """Which differences take the model's reading (applied and said) and which are two readings (both computed,
    the answer partial). The model's reading is applied only where code read nothing and the two readings still
    account for the same words: a share's base whose grades and part together are the grades code found ("of the
    damaged, what fraction were destroyed"); one figure per grade of the grades code found, where the question asks
    several things; grades that are exactly those the question names as the data spells them ("graded minor or
    major"). Grades code found no
    word for and the model read ("reduced to ash") are two readings: a 1.5B model read "hurt but still standing"
    as affected only, twice, so its grades alone are never the answer. A breakdown of a count code read no word
    for is applied when a second reading reads it too (its rows come with the total, which a breakdown asked
    for and not given would miss); any other difference is two readings."""
    fields = {d.field for d in diffs}
    adopt: set[str] = set()
    if "grades" in fields and named and set(model.grades) == named and model.measure != "share":
        adopt.add("grades")  # the grades the question names as the data spells them ("minor or major"), no others
    if "share_of" in fields and model.measure == "share":
        union = set(model.grades) | set(model.share_of)
        if (
            "grades" not in code_read
            or all_grades(list(union))
            and all_grades(code.grades)
            or union == set(code.grades)
        ):
            adopt |= {"share_of"} | ({"grades"} & fields)
    # one figure per grade only where the question asks several things (the interrogatives that open its clauses, a
    # closed class): "counting every grade, how many were hit?" asks one figure, which per-grade figures never give
    if "separately" in fields and model.separately and several_asked and ("grades" not in fields or "grades" in adopt):
        adopt.add("separately")
    ignored: set[str] = set()
    if "group_by" in fields and group_named:
        ignored.add("group_by")  # "by damage grade", "per structure type": the grouping said by its name is code's
    elif "group_by" in fields and "group_by" not in code_read and model.group_by and model.measure in ("count", "list"):
        adopt.add("group_by")  # a breakdown only the model read: its rows come with the total, which stays right
    if "grades" in fields and code.group_by == "damage" and "group_by" in code_read and "grades" not in code_read:
        ignored.add("grades")  # "grade by grade" with no grade named: the breakdown is of every grade
    # the model leaving out what code read from words (no relation, every grade, one figure) is no other reading
    ignored |= {d.field for d in diffs if d.code_read and _left_out(d.field, model)}
    two = [d for d in diffs if d.field not in adopt and d.field not in ignored]
    return adopt, two


def _left_out(field: str, model: Reading) -> bool:
    """Whether the model's reading of ``field`` is its default: it said nothing there."""
    value = getattr(model, field)
    if field == "reference":
        return value is None or model.relation == "none"
    if field == "grades":
        return all_grades(value)
    if field == "measure":  # a count is what a reading says when it says no measure
        return value in ("count", "list")
    if field == "kinds":
        return not value and not model.kinds_out
    return value in (None, "none", [], False)


def outvoted(
    two: list[Difference],
    second: list[Difference] | None,
    votable: AbstractSet[str] = VOTABLE,
    first: Reading | None = None,
) -> tuple[list[Difference], list[str]]:
    """The differences still read two ways once the model's second reading (from other examples) is counted
    (``second``: its differences from code's reading; None without one). A ``votable`` field code read from the
    names in the question (the sets, their relation, the kinds), which the second reading reads as code did, is
    code's: two readings of three, the first's was the model's slip. With the subject so settled, what the first
    reading said of its own subject (grades, a share's base, figures per grade, kinds, a breakdown by structure type
    or grade of another subject than code's) means nothing for code's, and what code read from words the first read
    for another set: those the second reads as code does are code's too. What code did not read stands apart from
    the subject: code's implied relation ("features of a disaster: in its hazard area") is no reading a second
    reading's silence confirms.
    Grades, measures and shares are read by code from phrasings, not names ("burned" is not "burned to the
    ground"), and a field code left at its default is no reading: neither is settled by a vote. Returns the
    differences left and the fields settled."""
    if second is None:
        return two, []
    differ = {d.field for d in second}
    subject_settled = any(d.field == "subject" and d.code_read for d in two) and "subject" not in differ
    bound = subject_bound(first)
    settled = [
        d.field
        for d in two
        if d.field not in differ
        and ((d.code_read and d.field in votable) or (subject_settled and (d.field in bound or d.code_read)))
    ]
    return [d for d in two if d.field not in settled], settled


def subject_bound(r: Reading | None) -> set[str]:
    """The fields ``r`` says of its own subject: its grades, a share's base, figures per grade, kinds, and a breakdown
    by structure type or grade (only damage records have them)."""
    bound = set(SUBJECT_BOUND)
    if r is not None and r.group_by in ("structure_type", "damage"):
        bound.add("group_by")
    return bound


def unconfirmed(first: Reading, second: Reading | None, fields: set[str]) -> set[str]:
    """The fields a second reading does not read as the first did (all of them without a second reading)."""
    if second is None:
        return set(fields)
    return {f for f in fields if not same_field(f, first, second)}


def read_alone(
    llm: LLM,
    facts: PrepassFacts,
    layers: LayerCatalogue,
    aoi_artifact_id: str | None,
    *,
    step: str = "plan",
) -> Read | None:
    """Specs from the model's checked reading alone, for a question code could make no spec of (its sets and
    relation named in words code does not know); None when no model reads. A reading that fails its checks twice,
    or that a second reading does not confirm, comes back with no specs and what the answer must say: neither
    code nor the model read the question, so whatever else computes it (the templates) is not the answer."""
    if not llm.serves(READER_ROLE) or not (facts.event_id or facts.layers or aoi_artifact_id):
        return None
    if asks_nearest(facts) and facts.k is None:  # how many nearest is code's to read; the templates ask the model
        return None
    candidates, known = candidates_for(facts, [], layers, aoi_artifact_id, facts.event_id)
    if not candidates.sets:
        return None
    outcome = read_question(llm, facts.question, candidates, known, step=f"{step}:read")
    if outcome.reading is None and outcome.problems:  # inconsistent twice: once more, from other examples
        retried = read_question(llm, facts.question, candidates, known, step=f"{step}:again", skip=AGAIN)
        outcome = retried if retried.reading is not None else outcome
    if outcome.reading is None:
        return _unread(facts, "; ".join(outcome.problems[:3])) if outcome.problems else None
    ev = facts.event_id
    r = effective_kinds(outcome.reading, candidates, ev, layers)
    second = read_question(llm, facts.question, candidates, known, step=f"{step}:confirm", skip=CONFIRM)
    again = effective_kinds(second.reading, candidates, ev, layers) if second.reading else None
    if unsure := unconfirmed(r, again, set(FIELD_WORDS)):  # read two ways by the model itself, and code read nothing
        said = ", ".join(FIELD_WORDS[f] for f in sorted(unsure))
        return _unread(facts, f"the model read {said} two ways and code read no analysis in its words", r)
    try:
        subject = set_ref(r.subject, ev, r.grades)
        skeleton = AnalysisSpec(subject=subject, aoi_artifact_id=aoi_artifact_id)
        distance = facts.distances_m[0] if facts.distances_m else None
        fields = set(FIELD_WORDS)
        specs = overlay([skeleton], r, fields, distance_m=distance, k=facts.k, kind_field=_kind_field(ev, layers))
    except (ValueError, SpecError):
        return None
    note = "the question was read by the model alone (code read no analysis in it): " + specs[0].describe()
    return Read(
        specs=specs,
        asked=True,
        reading=r,
        applied=sorted(fields),
        notes=[note],
        constraints=_applied_constraints(r, {"grades", "separately"}),
        replaces=["damage_class"] if r.separately else [],
        examples=outcome.examples,
    )


def _unread(facts: PrepassFacts, problems: str, reading: Reading | None = None) -> Read:
    """A question read by neither code nor the model: no specs; the answer says so and quotes it."""
    return Read(
        specs=[],
        asked=True,
        reading=reading,
        unavailable=[Unavailable(constraints=["reading:spec"], phrase="reading.unread", values={"problems": problems})],
        constraints=[Constraint(kind="reading", value="spec", phrase=facts.question)],
    )


def _applied_constraints(reading: Reading, fields: set[str]) -> list[Constraint]:
    """Coverage checks the model's applied grades like code's (a step must select them)."""
    out = []
    classes = classes_of(reading.grades)
    if "separately" in fields and reading.separately:
        return [Constraint(kind="damage_class", value=[c.value], phrase="(read by the model)") for c in classes]
    if "grades" in fields and classes:
        out.append(Constraint(kind="damage_class", value=[c.value for c in classes], phrase="(read by the model)"))
    return out


__all__ = ["Read", "candidates_for", "read_alone", "read_specs"]
