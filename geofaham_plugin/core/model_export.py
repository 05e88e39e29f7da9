"""A finished run as a Processing model: which algorithm each step of the answer's lineage is, with which
parameters, on which input files. Headless (no qgis): ``ui/processing/model.py`` builds the QGIS model
(``.model3``) from this description.

The steps that lead to the answer's artifacts are walked back from them. A step that read data (a disaster
layer, the user's layer, OSM features) and an artifact no step of the run produced (the AOI, an artifact of an
earlier run) become model inputs, each the Response Store file the run read. Every other step must map to one
algorithm that computes the same thing; a step that does not makes :func:`model_spec` refuse
(:class:`NotExportable`), never a model that computes something else. Filters are written from the values the
input holds (``"DAMAGE" IN ('Destroyed (>50%)')`` for the destroyed class), so on the same inputs the model
selects exactly what the run did."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

import pandas as pd
from pydantic import BaseModel, Field

from .domain.damage import ANY_DAMAGE
from .engines.layers import default_catalogue
from .errors import GeoFahamError
from .orchestrator.ledgers import StepStatus
from .store.models import ArtifactKind

if TYPE_CHECKING:
    from .orchestrator.runlog import RunRecord, StepRecord
    from .store.store import ResponseStore

#: steps that read data rather than compute: their artifact is a model input
SOURCE_TOOLS = frozenset({"load_event_layer", "load_layer", "get_features"})
#: the steps a model can hold (the others refuse)
SUPPORTED_TOOLS = ("select_damage", "filter_values", "inside", "within_distance", "nearest", "buffer", "count")
ANSWER_OUTPUT = "answer"


class NotExportable(GeoFahamError):
    """The run cannot be written as a Processing model. ``kind``: ``step`` (a step no algorithm computes the same
    as), ``input`` (an input that is not a vector layer), ``answer`` (no answer computed by the run's steps)."""

    def __init__(
        self, message: str, kind: Literal["step", "input", "answer"], step_id: int | None = None, what: str = ""
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.step_id = step_id
        self.what = what  # the step's tool, the input's artifact id


# ----------------------------------------------------------------------------------------- description
class FromInput(BaseModel):
    kind: Literal["input"] = "input"
    name: str


class FromStep(BaseModel):
    kind: Literal["step"] = "step"
    child: str
    output: str = "OUTPUT"


class Static(BaseModel):
    kind: Literal["value"] = "value"
    value: str | float | int | bool | list[int]


Source = Annotated[FromInput | FromStep | Static, Field(discriminator="kind")]


class ModelInput(BaseModel):
    name: str  # the model parameter's name
    description: str
    artifact_id: str
    path: str  # the Response Store file the run read


class ModelStep(BaseModel):
    child: str  # the child algorithm's id in the model
    step_id: int
    tool: str
    algorithm: str  # "native:extractbylocation", "geofaham:withindistance" ...
    description: str
    parameters: dict[str, Source]
    artifact_id: str  # what the step produced in the run


class AnswerRead(BaseModel):
    """Where a stated value of the answer is in the model's results."""

    label: str
    value: float  # the run's answer
    output: str  # the model output holding it
    read: Literal["features", "total", "row"]  # feature count; sum of ``count``; ``count`` where ``value == group``
    group: str | None = None


class ModelSpec(BaseModel):
    run_id: str
    question: str
    answer: str
    inputs: list[ModelInput]
    steps: list[ModelStep]
    outputs: dict[str, str]  # model output name -> child id
    answers: list[AnswerRead]


# ----------------------------------------------------------------------------------------- translation
def model_spec(record: RunRecord, store: ResponseStore) -> ModelSpec:
    """The model of ``record``'s answer; :class:`NotExportable` when a step (or input) cannot be expressed."""
    structured = record.structured
    if record.status != "answered" or structured is None or not structured.values:
        raise NotExportable(f"run {record.run_id} has no answer computed by its steps", kind="answer")
    produced = {s.artifact_id: s for s in record.steps if s.status == StepStatus.done and s.artifact_id}
    targets = list(dict.fromkeys(v.artifact_id for v in structured.values if v.artifact_id in produced))
    if not targets:
        raise NotExportable(f"run {record.run_id} has no answer computed by its steps", kind="answer")
    builder = _Builder(record, store, produced)
    for artifact_id in targets:
        builder.visit(artifact_id)
    children = {s.artifact_id: s.child for s in builder.steps}
    targets = [a for a in targets if a in children]  # a value of a layer as read (no step computed it) is no output
    if not targets:
        raise NotExportable(f"run {record.run_id} has no answer computed by its steps", kind="answer")
    names = {a: ANSWER_OUTPUT if len(targets) == 1 else f"{ANSWER_OUTPUT}_{children[a]}" for a in targets}
    answers = [
        read
        for v in structured.values
        if v.artifact_id in names
        and (read := _answer_read(v.label, v.value, v.measure, v.group, names[v.artifact_id], produced[v.artifact_id]))
    ]
    if not answers:
        raise NotExportable(f"run {record.run_id} states no count the model computes", kind="answer")
    return ModelSpec(
        run_id=record.run_id,
        question=record.question,
        answer=record.answer,
        inputs=builder.inputs,
        steps=builder.steps,
        outputs={names[a]: children[a] for a in targets},
        answers=answers,
    )


def _answer_read(
    label: str, value: float, measure: str, group: str | None, output: str, step: StepRecord
) -> AnswerRead | None:
    if measure != "count":
        return None
    if step.tool == "count":
        return AnswerRead(label=label, value=value, output=output, read="row" if group else "total", group=group)
    return None if group else AnswerRead(label=label, value=value, output=output, read="features")


class _Builder:
    def __init__(self, record: RunRecord, store: ResponseStore, produced: dict[str, StepRecord]) -> None:
        self.record, self.store, self.produced = record, store, produced
        self.inputs: list[ModelInput] = []
        self.steps: list[ModelStep] = []
        self._sources: dict[str, Source] = {}  # artifact id -> where the model has it

    def visit(self, artifact_id: str) -> Source:
        """Where ``artifact_id`` is in the model, adding its steps (inputs first) and inputs."""
        if artifact_id in self._sources:
            return self._sources[artifact_id]
        step = self.produced.get(artifact_id)
        if step is None or step.tool in SOURCE_TOOLS:
            source: Source = self._input(artifact_id)
        else:
            inputs = {slot: self.visit(ref) for slot, ref in step.inputs.items()}
            child = f"step{step.step_id}"
            if any(s.child == child for s in self.steps):  # the same step id in another plan of the run
                child = f"plan{step.plan_index}_{child}"
            algorithm, parameters = self._translate(step, inputs)
            goal = self._goal(step)
            self.steps.append(
                ModelStep(
                    child=child,
                    step_id=step.step_id,
                    tool=step.tool or "",
                    algorithm=algorithm,
                    description=f"{step.step_id}. {goal}" if goal else f"{step.step_id}. {step.tool}",
                    parameters=parameters,
                    artifact_id=artifact_id,
                )
            )
            source = FromStep(child=child)
        self._sources[artifact_id] = source
        return source

    def _input(self, artifact_id: str) -> FromInput:
        record = self.store.get(artifact_id)
        if record.kind not in (ArtifactKind.vector, ArtifactKind.aoi):
            raise NotExportable(
                f"the input {artifact_id} is a {record.kind.value}, not a vector layer, so this run cannot be "
                "opened as a Processing model",
                kind="input",
                what=artifact_id,
            )
        base = _identifier(record.extra.get("layer_id") or record.source.split(":")[-1].split(".")[-1])
        name, n = base, 1
        while any(i.name == name for i in self.inputs):
            n += 1
            name = f"{base}_{n}"
        self.inputs.append(
            ModelInput(
                name=name,
                description=f"{record.summary} ({artifact_id})",
                artifact_id=artifact_id,
                path=str(self.store.abs_path(artifact_id)),
            )
        )
        return FromInput(name=name)

    def _goal(self, step: StepRecord) -> str:
        for plan in self.record.plans[step.plan_index - 1 : step.plan_index]:
            for s in plan.plan.steps:
                if s.id == step.step_id:
                    return s.goal
        return ""

    def _translate(self, step: StepRecord, inputs: dict[str, Source]) -> tuple[str, dict[str, Source]]:
        args = step.args
        match step.tool:
            case "select_damage":
                return "native:extractbyexpression", {
                    "INPUT": inputs["damage"],
                    "EXPRESSION": Static(value=self._damage_expression(step.inputs["damage"], args["damage_classes"])),
                }
            case "filter_values":
                return "native:extractbyexpression", {
                    "INPUT": inputs["layer"],
                    "EXPRESSION": Static(
                        value=self._values_expression(step.inputs["layer"], args["field"], args["values"])
                    ),
                }
            case "inside":  # features that intersect the area
                return "native:extractbylocation", {
                    "INPUT": inputs["features"],
                    "PREDICATE": Static(value=[0]),
                    "INTERSECT": inputs["mask"],
                }
            case "within_distance":
                return "geofaham:withindistance", {
                    "INPUT": inputs["features"],
                    "REFERENCE": inputs["reference"],
                    "DISTANCE": Static(value=float(args["distance_m"])),
                }
            case "nearest":
                return "geofaham:nearestk", {
                    "INPUT": inputs["features"],
                    "REFERENCE": inputs["reference"],
                    "K": Static(value=int(args["k"])),
                }
            case "buffer":
                return "geofaham:buffermetres", {
                    "INPUT": inputs["layer"],
                    "DISTANCE": Static(value=float(args["distance_m"])),
                    "DISSOLVE": Static(value=bool(args.get("dissolve", False))),
                }
            case "count":
                by = {"FIELD": Static(value=args["by"])} if args.get("by") else {}
                return "geofaham:countfeatures", {"INPUT": inputs["layer"], **by}
        raise NotExportable(
            f"step {step.step_id} ({step.tool}) has no Processing algorithm that computes the same thing, so this run "
            f"cannot be opened as a Processing model (steps a model can hold: {', '.join(SUPPORTED_TOOLS)})",
            kind="step",
            step_id=step.step_id,
            what=step.tool or "",
        )

    def _distinct(self, artifact_id: str, field: str) -> pd.Series:
        return pd.Series(self.store.read_vector(artifact_id)[field].drop_duplicates().tolist(), dtype=object)

    def _damage_expression(self, artifact_id: str, classes: list[str]) -> str:
        """The raw values of the damage field select_damage keeps for ``classes`` (its rule, on the input's values)."""
        layer = self.store.get(artifact_id)
        field = layer.extra["damage_field"]
        raw = self._distinct(artifact_id, field)
        meaning = default_catalogue().damage_values(raw, layer.extra.get("damage_scale"))
        keep = meaning["damage_class"].isin(classes)
        if set(ANY_DAMAGE) <= set(classes):  # "damaged" in general: labelled damaged without a grade counts too
            keep |= meaning["damage_class"].isna() & (meaning["is_damaged"] == True)  # noqa: E712
        return in_expression(field, raw[keep.to_numpy()].tolist())

    def _values_expression(self, artifact_id: str, field: str, values: list[str]) -> str:
        """filter_values keeps the rows whose field, as text, is one of ``values``."""
        wanted = {str(v) for v in values}
        raw = self._distinct(artifact_id, field)
        return in_expression(field, [v for v in raw.tolist() if str(v) in wanted])


# ----------------------------------------------------------------------------------------- expressions
def quote_field(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(value: Any) -> str:
    """A QGIS expression literal: numbers as they are, everything else as quoted text."""
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "'" + str(value).replace("'", "''") + "'"
    return repr(value)


def in_expression(field: str, values: list[Any]) -> str:
    """``"field" IN (...)`` over ``values`` (a missing value as ``"field" IS NULL``); ``FALSE`` when none."""
    present = [v for v in values if not _missing(v)]
    parts = [f"{quote_field(field)} IN ({', '.join(literal(v) for v in sorted(present, key=str))})"] if present else []
    if len(present) < len(values):
        parts.append(f"{quote_field(field)} IS NULL")
    return " OR ".join(parts) or "FALSE"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _identifier(text: str) -> str:
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", text).strip("_").lower()
    return name if name and not name[0].isdigit() else f"layer_{name}"
