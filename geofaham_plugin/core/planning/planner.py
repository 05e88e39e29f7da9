"""The planner: one interface, two modes, one validated plan type.

- guided (the embedded small model): the pre-pass has resolved event, distances, damage words and
  feature classes; the model only picks a workflow template from a narrowed enum and fills the slots
  the pre-pass could not; code compiles the plan. When the facts leave a single template whose slots
  are all filled, no model call is needed.
- free (strong models): the model writes the task ledger and the plan itself.
Both are validated in code; a failing plan goes back to the model with the problems."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from ..agents.base import TOOLS
from ..agents.maps import FEATURE_CLASSES
from ..domain.damage import DamageClass
from ..domain.events import DisasterEvent, get_event, load_events
from ..domain.layer_names import GENERIC_WORDS, layer_words
from ..domain.names import Role
from ..engines.layers import LayerCatalogue, default_catalogue
from ..engines.raster.ops import INDEX_NAMES
from ..errors import ModelRetry, NoOtherPlan
from ..llm import LLM, Message
from ..prompts import FREE_SYSTEM, GUIDED_SYSTEM
from ..store.store import ResponseStore
from .asks import counted_if_asked, listed_if_asked, unanswered, whole_share
from .chain import chain_from_facts, compile_chain
from .coverage import Constraint, asks_nearest, question_constraints
from .facts import PrepassFacts
from .identify import require_identified
from .names import features_named, with_named_features
from .operations import operations_asked
from .plan import Plan, TaskLedger
from .prepass import blank_spans, normalise, user_entries
from .raster_read import asks_own_rasters
from .reading.read import Read, read_alone, read_specs
from .roads import Unavailable, routable
from .spec_compile import compile_specs
from .spec_read import asks_imagery, places_elsewhere, spec_from_facts
from .spec_schema import AnalysisSpec, SpecDraft, SpecError
from .templates import GROUP_BY_FIELDS, Template, TemplateError, compile_template, load_templates
from .validate import validate_plan

INDEX_WORDS = {"vegetation": "ndvi", "greenness": "ndvi", "water": "ndwi"}
#: words that place nothing in an instruction (English, Spanish, French, Portuguese): left out of the words an
#: instruction is said to hold that code could not place
FUNCTION_WORDS = frozenset(
    """the and for with from into onto that this these those them they their its it's are was were been being has
    have had will would should could can may might must shall please just also then than but not all any each
    every some one two per out our your you what which who whom whose when where how why there here about above
    below over under between after before give make get put let want need like keep use using made done doing
    los las del por para con una uno que como sus les des une pour avec dans sur par est son ses aux das dos uma
    com pelo pela nos nas""".split()  # noqa: SIM905 (a list of words, read as one)
)
MAX_CANDIDATES = 3
CLOSE_FIT = 3.0  # templates scoring within this of the best stay candidates
FOLLOW_UP_BONUS = 4.0


class PlanResult(BaseModel):
    ledger: TaskLedger
    plan: Plan
    mode: Literal["guided", "free"]
    template: str | None = None
    model_called: bool = False
    slots: dict[str, Any] = Field(default_factory=dict)
    specs: list[AnalysisSpec] = Field(default_factory=list, description="guided mode: the analysis specs compiled")
    assumptions: list[str] = Field(default_factory=list, description="choices code made the question did not state")
    unavailable: list[Unavailable] = Field(
        default_factory=list, description="parts of the question the data at hand cannot answer (not replanned)"
    )
    read: Read | None = Field(default=None, description="the model's reading of the question beside code's")


class FreePlanOutput(BaseModel):
    ledger: TaskLedger
    plan: Plan


# ------------------------------------------------------------------------------------ guided mode
def facts_slots(facts: PrepassFacts) -> dict[str, Any]:
    """Slot values the pre-pass resolved (these win over the model's on a first plan)."""
    slots: dict[str, Any] = {}
    classes = [t for t in facts.target_entities if t in FEATURE_CLASSES and t != "buildings"]
    if len(classes) == 1:
        slots["feature_class"] = classes[0]
    if facts.distances_m:
        slots["distance_m"] = facts.distances_m[0]
    if facts.k:
        slots["k"] = facts.k
    if facts.damage_classes:
        slots["damage_classes"] = [c.value for c in facts.damage_classes]
    if facts.group_by and facts.group_by in GROUP_BY_FIELDS:
        slots["group_by"] = facts.group_by
    if facts.windows:  # "two weeks before" -> a 14-day imagery window
        slots["days"] = max((w.end - w.start).days + (1 if w.label == "pre" else 0) for w in facts.windows)
    words = set(re.findall(r"[a-z]+", facts.question.lower()))
    index = next((name for name in INDEX_NAMES if name in words), None) or next(
        (name for word, name in INDEX_WORDS.items() if word in words), None
    )
    if index:
        slots["index"] = index
    return slots


def _score(template: Template, facts: PrepassFacts, known: dict[str, Any], question: str) -> float:
    """Fit of a template to the facts: slots the facts fill count for it, facts it would ignore and
    required slots nobody can fill count against it; keywords break ties."""
    q = question.lower()
    score = sum(1.0 for kw in template.keywords if re.search(rf"\b{re.escape(kw)}\b", q))
    for name, spec in template.slots.items():
        if name in known:
            score += 2
        elif spec.required:
            fillable = spec.type == "feature_class" and any(t in FEATURE_CLASSES for t in facts.target_entities)
            score += -1 if fillable else -10  # a required slot nobody can fill rules the template out
    score -= 2 * sum(1 for fact in known if fact not in template.slots)  # the question said it; the template ignores it
    if any(step.tool == "nearest" for step in template.steps):
        # ranking the k nearest answers "how many ... in" with one feature: only when the question asks for
        # the nearest (in any language: the keywords above are English)
        score += 1 if asks_nearest(facts) else -10
    return score


def rank_templates(facts: PrepassFacts, templates: dict[str, Template] | None = None) -> list[tuple[str, float]]:
    templates = templates or load_templates()
    known = facts_slots(facts)
    scored = sorted(
        ((t.name, _score(t, facts, known, facts.question)) for t in templates.values()), key=lambda x: -x[1]
    )
    viable = [(n, s) for n, s in scored if s > -5]
    return viable or scored


def _choice_model(candidates: list[str], events: list[int] | None, classes: list[str]) -> type[BaseModel]:
    fields: dict[str, Any] = {"template": (Literal[tuple(candidates)], ...)}  # type: ignore[misc]
    if events:
        fields["event_id"] = (Literal[tuple(events)], ...)  # type: ignore[misc]
    fields["feature_class"] = (Literal[tuple(classes)] | None, None)  # type: ignore[misc]
    fields["distance_m"] = (float | None, None)
    fields["k"] = (int | None, None)
    fields["damage_classes"] = (list[DamageClass], Field(default_factory=list))
    fields["group_by"] = (Literal[tuple(GROUP_BY_FIELDS)] | None, None)  # type: ignore[misc]
    fields["index"] = (Literal[tuple(INDEX_NAMES)] | None, None)  # type: ignore[misc]
    fields["days"] = (int | None, None)
    return create_model("TemplateChoice", **fields)


def _retrieve_examples(question: str, templates: list[Template], n: int = 2) -> list[tuple[str, dict]]:
    """``n`` examples: the most similar one of each leading candidate (contrast helps a small model),
    then more of the best candidate's."""
    words = set(re.findall(r"[a-z]+", question.lower()))

    def ranked(t: Template) -> list:
        return sorted(t.examples, key=lambda e: -len(words & set(re.findall(r"[a-z]+", e.question.lower()))))

    order = [(t, ex) for t in templates[:n] for ex in ranked(t)[:1]]
    order += [(templates[0], ex) for ex in ranked(templates[0])[1:]] if templates else []
    return [(ex.question, {"template": t.name, **ex.slots}) for t, ex in order[:n]]


def _describe_event(e: DisasterEvent) -> str:
    return f"{e.name} (id {e.id}, {e.type}, {e.place}, {e.country}, {e.event_date.isoformat()})"


def guided_prompt(
    facts: PrepassFacts, candidates: list[Template], events: list[DisasterEvent], failures: list[str]
) -> list[Message]:
    lines = [f"Question: {facts.question}", "Facts found in the question:"]
    if len(events) == 1:
        lines.append(f"- event: {_describe_event(events[0])}")
    else:
        lines.append("- event: one of " + "; ".join(_describe_event(e) for e in events))
    lines.append(f"- distances_m: {facts.distances_m or 'none'}")
    lines.append(f"- feature classes mentioned: {facts.target_entities or 'none'}")
    lines.append(f"- damage classes: {[c.value for c in facts.damage_classes] or 'none'}")
    if facts.k:
        lines.append(f"- k: {facts.k}")
    lines.append("Templates, best match first:")
    for t in candidates:
        lines.append(f"- {t.name}: {t.description}. Use when {t.use_when}. Slots: {', '.join(t.slots)}")
    examples = _retrieve_examples(facts.question, candidates)
    if examples:
        lines.append("Examples:")
        for q, answer in examples:
            lines.append(f"Q: {q}\nA: {json.dumps(answer)}")
    if failures:
        lines.append(
            "The previous plan failed: " + " | ".join(failures[-3:]) + ". Choose a template or slots that avoid this."
        )
    return [Message(role="system", content=GUIDED_SYSTEM), Message(role="user", content="\n".join(lines))]


def guided_ledger(
    facts: PrepassFacts,
    event_id: int | None,
    aoi_artifact_id: str | None,
    *,
    intent: str,
    operations: list[str],
    requested_output: Literal["answer", "vector", "raster", "table"] = "answer",
    failures: Sequence[str] = (),
    template: str | None = None,
) -> TaskLedger:
    """The task ledger of a guided plan: what the pre-pass resolved, the event, the AOI, the operations."""
    event = get_event(event_id) if event_id else None
    return TaskLedger(
        intent=intent,
        requested_output=requested_output,
        disaster_event_id=event_id,
        event_date=event.event_date if event else None,
        time_windows=facts.windows,
        aoi_source="user_aoi" if aoi_artifact_id else ("event" if event_id else "none"),
        aoi_artifact_id=aoi_artifact_id,
        place=event.place if event else (facts.places[0] if facts.places else None),
        target_entities=facts.target_entities,
        damage_classes=facts.damage_classes,
        distances_m=facts.distances_m,
        operations=operations,
        reusable_artifacts=[aoi_artifact_id] if aoi_artifact_id else [],
        known_failures=list(failures),
        template=template,
    )


def _conditions_without_field(facts: PrepassFacts, plan: Plan) -> list[Unavailable]:
    """The number conditions of a question about a disaster's layers ("destroyed buildings built before 1980"): none
    of those layers holds a field to apply them to (damage inspections record damage and structure type), so no
    other plan would apply them either; the answer says so instead of replanning. Likewise what it takes out ("not
    counting outbuildings"): no plan removes features by a word (damage grades excepted, the pre-pass's). A layer of yours is compared
    through its own fields (its spec's where), or coverage says what was not applied."""
    if facts.layers or any(s.tool == "filter_where" for s in plan.steps):
        return []
    constraints = question_constraints(facts)
    compared = dict.fromkeys(str(c.value) for c in constraints if c.kind == "comparison")
    kinds_out = any(  # a plan that takes out kinds or values applies its own (coverage checks which)
        (s.tool == "select_kind" and s.args.get("exclude")) or s.args.get("taken_out") for s in plan.steps
    )
    excluded = dict.fromkeys(str(c.value) for c in constraints if c.kind == "exclusion" and not kinds_out)
    return [Unavailable(constraints=[f"comparison:{v}"], phrase="condition.no_field") for v in compared] + [
        Unavailable(constraints=[f"exclusion:{v}"], phrase="condition.not_excluded") for v in excluded
    ]


def _asks_left(
    facts: PrepassFacts, specs: Sequence[AnalysisSpec], read: Read, *, difference: bool
) -> list[Unavailable]:
    """The parts of the question the specs give no figure for ("how many, and which?" read as a count): the answer
    is partial and names them (a check on the reading's measure, whoever read it, :mod:`.asks`)."""
    missing = unanswered(facts.question, specs, difference=difference)
    out = []
    if any(whole_share(s) for s in specs):  # 100 % whatever the data: the part was not read
        read.constraints.append(Constraint(kind="reading", value="share", phrase=facts.question))
        out.append(Unavailable(constraints=["reading:share"], phrase="reading.whole_share"))
    if not missing:
        return out
    words = " / ".join(dict.fromkeys(a.clause or a.words for a in missing))
    read.constraints.append(Constraint(kind="reading", value="asks", phrase=words))
    return [*out, Unavailable(constraints=["reading:asks"], phrase="reading.asks", values={"words": words})]


def _events_under(store: ResponseStore | None, aoi_artifact_id: str | None) -> list[int]:
    """The disasters whose rough area (the event table's box) the user's AOI overlaps, best overlap first."""
    if store is None or not aoi_artifact_id or aoi_artifact_id not in store:
        return []
    bounds = getattr(store.get(aoi_artifact_id).metadata, "bounds_4326", None)
    if not bounds:
        return []
    x0, y0, x1, y1 = bounds.minx, bounds.miny, bounds.maxx, bounds.maxy
    scored = []
    for event in load_events():
        if event.bbox_4326 is None:
            continue
        ex0, ey0, ex1, ey1 = event.bbox_4326
        w, h = min(x1, ex1) - max(x0, ex0), min(y1, ey1) - max(y0, ey0)
        if w >= 0 and h >= 0:
            scored.append((-(w * h), event.id))
    return [i for _, i in sorted(scored)]


class Planner:
    def __init__(
        self,
        llm: LLM,
        mode: Literal["guided", "free"] = "guided",
        *,
        always_ask_model: bool = False,
        layers: LayerCatalogue | None = None,
        offline: bool = False,
        model_reading: bool = True,
    ) -> None:
        self.llm = llm
        self.model_reading = model_reading  # the model reads the question beside code (when it can be asked)
        self.mode = mode
        self.offline = offline  # no Overpass: road networks only from local extracts
        self.always_ask_model = always_ask_model
        self.layers = layers if layers is not None else default_catalogue()  # what the session can read
        self._unread: dict[str, Read] = {}  # questions neither code nor the model could read, and what to say

    def plan(
        self,
        facts: PrepassFacts,
        store: ResponseStore | None,
        *,
        aoi_artifact_id: str | None = None,
        failures: list[str] | None = None,
        step: str = "plan",
        preferred_template: str | None = None,
    ) -> PlanResult:
        """``preferred_template``: the previous question's workflow, favoured for a follow-up."""
        failures = list(failures or [])
        if not failures:  # a first plan: refuse a question tied to no disaster, area or layer rather than guess
            # data in the session (the user's inputs, rasters, an AOI, earlier results) is what it is about
            own_data = store is not None and len(store) > 0
            require_identified(facts, has_aoi=aoi_artifact_id is not None or own_data)
        if self.mode == "free":
            return self._free(facts, store, aoi_artifact_id, failures, step)
        return self._guided(facts, store, aoi_artifact_id, failures, step, preferred_template)

    # -------------------------------------------------------------------------------- guided
    def _guided(
        self,
        facts: PrepassFacts,
        store: ResponseStore | None,
        aoi_artifact_id: str | None,
        failures: list[str],
        step: str,
        preferred_template: str | None = None,
    ) -> PlanResult:
        templates = load_templates()
        ranked = rank_templates(facts, templates)
        # why code could not read the question as an analysis of yours (said when nothing else fits)
        why: list[str] = []
        # a question naming a raster of yours ("mean dNBR inside the fire mask") is an analysis of it, not imagery
        own_raster = any(getattr(self.layers.user_layers.get(i), "role", None) == "values" for i in facts.layers)
        entries = {e.id: e for e in user_entries(self.layers)}
        own_raster = own_raster or any(getattr(entries.get(i), "role", None) == "values" for i in facts.layers)
        own_raster = own_raster or asks_own_rasters(normalise(facts.question), entries, list(facts.layers))
        if not failures and not self.always_ask_model and (own_raster or not asks_imagery(facts, self.layers)):
            chained = self._chain(facts, store, aoi_artifact_id)
            if chained is not None:
                return chained
            specced = self._spec(facts, store, aoi_artifact_id, step, why)
            if specced is not None:
                return specced
        no_disaster = not facts.event_id and not facts.event_candidates
        own_only = no_disaster and self._own_layers(facts)
        if no_disaster and not aoi_artifact_id and not own_only:
            # the templates analyse a disaster's layers: with none named and no area, the model would pick any
            # disaster (a damage count of the Saint Louis tornado for an instruction about files on roads)
            if failures:
                raise NoOtherPlan(
                    "the question names no disaster and no area: every other analysis works on a disaster's layers"
                )
            unplaced = self._unplaced_words(facts)
            raise NoOtherPlan(
                "could not read the instruction as an operation on your layers"
                + (f" (words not placed: {', '.join(unplaced)})" if unplaced else "")
                + "".join(f": {reason}" for reason in why[:1])
                + "; it names no disaster, so no disaster's analysis was run instead"
                + "; hint: say the operation (reproject, clip, dissolve, count per, sum of a field ...) and the layer"
            )
        if own_only and (failures or not aoi_artifact_id):
            # the templates analyse a disaster's layers: chosen for a question about yours, any of them (with any
            # disaster the model picks) would answer another question
            raise NoOtherPlan(
                "no analysis applies this question as asked to your layers ("
                + ", ".join(self._own_layers(facts))
                + ")"
                + "".join(f": {reason}" for reason in why[:1])
                + "; the analyses left to choose from work on a disaster's layers"
                + self._values_hint(facts)
            )
        if preferred_template:  # a follow-up continues the same workflow unless the facts point elsewhere
            ranked = sorted(
                ((n, s + (FOLLOW_UP_BONUS if n == preferred_template else 0)) for n, s in ranked), key=lambda x: -x[1]
            )
        # the model chooses only among templates that fit about as well as the best one
        candidates = [templates[name] for name, score in ranked[:MAX_CANDIDATES] if score >= ranked[0][1] - CLOSE_FIT]
        events_by_id = {e.id: e for e in load_events()}
        event_ids = [facts.event_id] if facts.event_id else (facts.event_candidates or list(events_by_id))
        if aoi_artifact_id and not facts.event_id and not facts.event_candidates:
            event_ids = []
        known = facts_slots(facts)
        classes = [c for c in facts.target_entities if c in FEATURE_CLASSES] or list(FEATURE_CLASSES)

        def compile_choice(template_name: str, slots: dict[str, Any], event_id: int | None) -> Plan:
            event = events_by_id.get(event_id) if event_id else None
            plan = compile_template(
                templates[template_name],
                slots,
                event_id=event_id,
                event_name=event.name if event else "",
                aoi_artifact_id=aoi_artifact_id,
            )
            problems = validate_plan(plan, store)
            if problems:
                raise TemplateError("; ".join(problems))
            return plan

        if len(candidates) == 1 and len(event_ids) <= 1 and not failures and not self.always_ask_model:
            try:
                plan = compile_choice(candidates[0].name, known, event_ids[0] if event_ids else None)
                return self._result(
                    facts,
                    plan,
                    candidates[0],
                    known,
                    event_ids[0] if event_ids else None,
                    aoi_artifact_id,
                    model_called=False,
                )
            except TemplateError:
                pass  # the model fills what the facts could not

        choice_type = _choice_model([t.name for t in candidates], event_ids if len(event_ids) > 1 else None, classes)
        compiled: dict[str, Any] = {}

        def check(choice: Any) -> None:
            slots = {k: v for k, v in choice.model_dump().items() if k not in ("template", "event_id")}
            slots = {k: v for k, v in slots.items() if v not in (None, [])}
            if not failures:
                slots.update(known)  # resolved facts win over the model's guesses
            event_id = getattr(choice, "event_id", None) or (event_ids[0] if event_ids else None)
            try:
                compiled["plan"] = compile_choice(choice.template, slots, event_id)
            except (TemplateError, ValueError) as exc:
                raise ModelRetry(str(exc)) from exc
            compiled.update(slots=slots, event_id=event_id)

        events = [events_by_id[i] for i in event_ids if i in events_by_id][:6]
        choice = self.llm.structured(
            Role.planner, guided_prompt(facts, candidates, events, failures), choice_type, step=step, validate=check
        )
        return self._result(
            facts,
            compiled["plan"],
            templates[choice.model_dump()["template"]],
            compiled["slots"],
            compiled["event_id"],
            aoi_artifact_id,
            model_called=True,
            failures=failures,
        )

    def _unplaced_words(self, facts: PrepassFacts) -> list[str]:
        """The instruction's words code could not place: not a function word, not a word of one of your layers (its
        name, fields, values), not part of an operation's or a constraint's phrase, not a feature class."""
        text = normalise(facts.question)
        spans = [(pos, pos + len(phrase)) for pos, _, phrase in operations_asked(facts.question)]
        blanked = blank_spans(text, spans)
        for c in question_constraints(facts, entries=self.layers.user_layers):
            blanked = blanked.replace(normalise(c.phrase), " ")
        known = set(FUNCTION_WORDS) | set(GENERIC_WORDS) | {w for c in facts.target_entities for w in layer_words(c)}
        for entry in self.layers.user_layers.values():
            known.update(w for alias in [entry.name, *entry.aliases] for w in layer_words(alias))
            for f in entry.fields:
                known.update(layer_words(f.name))
                known.update(w for v in f.values or [] if isinstance(v, str) for w in layer_words(v))
        words = [w for w in re.findall(r"[a-z]{3,}", blanked) if w not in known]
        return list(dict.fromkeys(words))[:8]

    def _own_layers(self, facts: PrepassFacts) -> list[str]:
        """The titles of the user's layers the question names."""
        return [e.title for i in facts.layers if (e := self.layers.user_layers.get(i)) is not None]

    def _values_hint(self, facts: PrepassFacts) -> str:
        """ "; hint: say which values ..., e.g. buildings: damage is destroyed, minor or none" (text fields of at most
        8 values of the layers the question names), or ""."""
        said = []
        for layer_id in facts.layers:
            entry = self.layers.user_layers.get(layer_id)
            if entry is None:
                continue
            for f in entry.fields:
                if f.type == "text" and f.values and len(f.values) <= 8:
                    values = [str(v) for v in f.values]
                    listed = f"{', '.join(values[:-1])} or {values[-1]}" if len(values) > 1 else values[0]
                    said.append(f"{entry.name}: {f.name} is {listed}")
        return "; hint: say which values of their fields to keep, e.g. " + "; ".join(said[:3]) if said else ""

    def _chain(
        self, facts: PrepassFacts, store: ResponseStore | None, aoi_artifact_id: str | None = None
    ) -> PlanResult | None:
        """The plan of the everyday operations the instruction asks of a layer of yours (reproject, repair,
        dissolve, save as ...), or None when it asks none (or code cannot fill one: coverage then says so)."""
        try:
            aoi_source = store.get(aoi_artifact_id).source if store is not None and aoi_artifact_id else ""
            chain = chain_from_facts(facts, self.layers, aoi_artifact_id, aoi_source)
            if chain is None:
                return None
            plan = compile_chain(chain)
        except SpecError:
            return None
        if validate_plan(plan, store):
            return None
        tools = list(dict.fromkeys(s.tool for s in plan.steps if s.tool))
        ledger = guided_ledger(facts, None, None, intent=f"{plan.rationale} — {facts.question}", operations=tools)
        return PlanResult(ledger=ledger, plan=plan, mode="guided", model_called=False, assumptions=chain.implied)

    def _spec(
        self,
        facts: PrepassFacts,
        store: ResponseStore | None,
        aoi_artifact_id: str | None,
        step: str,
        why: list[str] | None = None,
    ) -> PlanResult | None:
        """The plan of the question's analysis specs, or None when the question is not one code can read
        (then the templates and the model take over; ``why`` gets the reason). The model is asked only for what
        code left open: which of the candidate disasters is meant."""
        try:
            aoi_events = _events_under(store, aoi_artifact_id)
            model_called = False
            named = features_named(facts, self.layers)
            if not facts.target_entities and (classes := [c for n in named for c in n.classes]):
                # "the Blat Market": a feature the data names, of its class, though no class word is said
                facts = facts.model_copy(update={"target_entities": list(dict.fromkeys(classes))[:1]})
            try:
                draft = spec_from_facts(
                    facts, aoi_artifact_id=aoi_artifact_id, layers=self.layers, aoi_events=aoi_events
                )
            except SpecError:
                alone = (
                    read_alone(self.llm, facts, self.layers, aoi_artifact_id, step=step) if self.model_reading else None
                )
                if alone is not None and not alone.specs:  # read by neither: the templates' plan is not the answer
                    self._unread[facts.question] = alone
                if alone is None or not alone.specs:
                    raise
                draft, read = SpecDraft(specs=alone.specs), alone
            else:
                if draft.gaps:
                    draft, model_called = self._fill_gaps(facts, draft, aoi_artifact_id, step), True
                draft = draft.model_copy(update={"specs": with_named_features(draft.specs, named, facts.question)})
                read = read_specs(
                    self.llm, facts, draft.specs, self.layers, aoi_artifact_id, step=step, model=self.model_reading
                )
            model_called = model_called or read.asked
            specs, unavailable = routable(read.specs, self.layers, self.offline)
            specs = with_named_features(specs, named, facts.question)  # "Huntington Hospital": it alone
            unavailable += read.unavailable
            difference = draft.difference and len(specs) == len(draft.specs)
            specs = counted_if_asked(facts.question, specs, difference=difference)
            specs = listed_if_asked(facts.question, specs, difference=difference)
            try:
                plan = compile_specs(specs, difference=difference)
            except SpecError:
                if not read.unavailable or len(specs) <= len(draft.specs):
                    raise
                # code's specs and the model's other reading together are too long a plan (a comparison read two
                # ways): code's are computed, the other reading stays unapplied and said (the answer is partial)
                specs = listed_if_asked(facts.question, specs[: len(draft.specs)], difference=difference)
                plan = compile_specs(specs, difference=difference)
                unavailable = [
                    u.model_copy(update={"phrase": "reading.two_ways_first"}) if u.phrase == "reading.two_ways" else u
                    for u in unavailable
                ]
            unavailable += _asks_left(facts, specs, read, difference=difference)
        except SpecError as exc:
            if why is not None:
                why.append(str(exc))
            return None
        unavailable += _conditions_without_field(facts, plan)
        unavailable += [  # a place known offline only as another disaster's area: said, never replanned for
            Unavailable(constraints=[f"place:{place}"], phrase="place.elsewhere", values={"event": other})
            for place, other in places_elsewhere(facts, specs[0].subject.event_id or facts.event_id).items()
        ]
        problems = validate_plan(plan, store)
        if problems:
            return None
        first = specs[0]
        event_id = first.subject.event_id or (first.relation.reference.event_id if first.relation else None)
        tools = list(dict.fromkeys(s.tool for s in plan.steps if s.tool))
        ledger = guided_ledger(
            facts,
            event_id,
            aoi_artifact_id,
            intent="; ".join(s.describe() for s in specs) + f" — {facts.question}",
            operations=tools,
        )
        return PlanResult(
            ledger=ledger,
            plan=plan,
            mode="guided",
            model_called=model_called,
            specs=specs,
            unavailable=unavailable,
            assumptions=read.notes,
            read=read,
        )

    def _fill_gaps(self, facts: PrepassFacts, draft: SpecDraft, aoi_artifact_id: str | None, step: str) -> SpecDraft:
        """Ask the model to choose what code could not (a narrowed enum per open field), then re-read."""
        gap = draft.gaps[0]
        if gap.field != "event_id":
            raise SpecError(gap.reason)
        by_id = {e.id: e for e in load_events()}
        events = [by_id[i] for i in gap.candidates if i in by_id]
        ids: Any = Literal[tuple(e.id for e in events)]  # type: ignore[valid-type]
        choice_type = create_model("EventChoice", event_id=(ids, ...))
        lines = [
            f"Question: {facts.question}",
            "Which disaster does the question mean? Candidates:",
            *(f"- {_describe_event(e)}" for e in events),
        ]
        messages = [Message(role="system", content=GUIDED_SYSTEM), Message(role="user", content="\n".join(lines))]
        choice = self.llm.structured(Role.planner, messages, choice_type, step=step)
        filled = spec_from_facts(
            facts,
            aoi_artifact_id=aoi_artifact_id,
            layers=self.layers,
            event_id=choice.model_dump()["event_id"],
            aoi_events=list(gap.candidates),
        )
        if filled.gaps:
            raise SpecError(filled.gaps[0].reason)
        return filled

    def _result(
        self,
        facts: PrepassFacts,
        plan: Plan,
        template: Template,
        slots: dict[str, Any],
        event_id: int | None,
        aoi_artifact_id: str | None,
        *,
        model_called: bool,
        failures: Sequence[str] = (),
    ) -> PlanResult:
        ledger = guided_ledger(
            facts,
            event_id,
            aoi_artifact_id,
            intent=f"{template.description} — {facts.question}",
            operations=template.operations,
            requested_output=template.requested_output,
            failures=failures,
            template=template.name,
        )
        unread = self._unread.get(facts.question)  # (its replans too)
        return PlanResult(
            ledger=ledger,
            plan=plan,
            mode="guided",
            template=template.name,
            model_called=model_called or unread is not None,
            slots={k: v for k, v in slots.items() if v is not None},
            unavailable=list(unread.unavailable) if unread else [],
            read=unread,
        )

    # ---------------------------------------------------------------------------------- free
    def _free(
        self,
        facts: PrepassFacts,
        store: ResponseStore | None,
        aoi_artifact_id: str | None,
        failures: list[str],
        step: str,
    ) -> PlanResult:
        events_by_id = {e.id: e for e in load_events()}
        ids = facts.event_candidates or list(events_by_id)
        tools = [{"agent": t.agent.value, **t.schema_for_model()} for t in TOOLS.values()]
        artifacts = [r.for_model() for r in store.records()] if store is not None else []
        user = {
            "question": facts.question,
            "facts": facts.model_dump(mode="json", exclude={"question"}, exclude_defaults=True),
            "events": [_describe_event(events_by_id[i]) for i in ids if i in events_by_id],
            "user_aoi": aoi_artifact_id,
            "available_artifacts": artifacts,
            "tools": tools,
            "failures_so_far": failures,
        }
        messages = [
            Message(role="system", content=FREE_SYSTEM),
            Message(role="user", content=json.dumps(user, separators=(",", ":"), default=str)),
        ]

        def check(out: FreePlanOutput) -> None:
            problems = validate_plan(out.plan, store)
            if problems:
                raise ModelRetry("the plan is invalid: " + "; ".join(problems))

        out = self.llm.structured(Role.planner, messages, FreePlanOutput, step=step, validate=check)
        ledger = out.ledger.model_copy(
            update={"known_failures": list(dict.fromkeys(out.ledger.known_failures + failures))}
        )
        if aoi_artifact_id and not ledger.aoi_artifact_id:
            ledger = ledger.model_copy(update={"aoi_artifact_id": aoi_artifact_id, "aoi_source": "user_aoi"})
        return PlanResult(ledger=ledger, plan=out.plan, mode="free", model_called=True)
