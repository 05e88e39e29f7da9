"""A finished run as a QGIS Processing model (``.model3``): the description ``core/model_export.py`` makes,
built as a QgsProcessingModelAlgorithm that the Model Designer opens and ``processing.run`` runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from qgis.core import (
    QgsProcessing,
    QgsProcessingModelAlgorithm,
    QgsProcessingModelChildAlgorithm,
    QgsProcessingModelChildParameterSource,
    QgsProcessingModelOutput,
    QgsProcessingModelParameter,
    QgsProcessingParameterVectorLayer,
)
from qgis.PyQt.QtCore import QPointF

from ...core.model_export import AnswerRead, FromInput, FromStep, ModelSpec, NotExportable, Source, model_spec
from ..i18n import tr

if TYPE_CHECKING:
    from qgis.core import QgsProcessingContext

    from ...core.orchestrator.runlog import RunRecord
    from ...core.store.store import ResponseStore

MODELS_DIR = "models"
GROUP = "GeoFaham"
_X, _Y = 260.0, 130.0  # the designer's grid: inputs in a row on top, then one step per row


def model_path(session_dir: Path, run_id: str) -> Path:
    """``<session>/models/<run_id>.model3``."""
    return session_dir / MODELS_DIR / f"{run_id}.model3"


def build_model(spec: ModelSpec) -> QgsProcessingModelAlgorithm:
    """The QGIS model of ``spec``: one input per file the run read (its path the default), one child algorithm per
    step, the answer's layers as the model's outputs."""
    model = QgsProcessingModelAlgorithm(f"GeoFaham {spec.run_id}", GROUP)
    model.setHelpContent(
        {
            "ALG_DESC": tr("Question: {question}").format(question=spec.question)
            + "\n\n"
            + tr("Answer of GeoFaham run {run}:").format(run=spec.run_id)
            + "\n"
            + "\n".join(f"{a.label}: {a.value:g}" for a in spec.answers),
            "ALG_CREATOR": "GeoFaham",
        }
    )
    for i, item in enumerate(spec.inputs):
        parameter = QgsProcessingParameterVectorLayer(
            item.name, item.description, [QgsProcessing.TypeVectorAnyGeometry], item.path
        )
        component = QgsProcessingModelParameter(item.name)
        component.setPosition(QPointF(120.0 + i * _X, 60.0))
        model.addModelParameter(parameter, component)
    outputs: dict[str, list[str]] = {}
    for name, child in spec.outputs.items():
        outputs.setdefault(child, []).append(name)
    for row, step in enumerate(spec.steps, start=1):
        child = QgsProcessingModelChildAlgorithm(step.algorithm)
        child.setChildId(step.child)
        child.setDescription(step.description)
        child.setPosition(QPointF(120.0 + (row % 2) * _X / 2, 60.0 + row * _Y))
        for name, source in step.parameters.items():
            child.addParameterSources(name, [_source(source)])
        model_outputs = {}
        for name in outputs.get(step.child, []):
            output = QgsProcessingModelOutput(name, tr("Answer: {step}").format(step=step.description))
            output.setChildId(step.child)
            output.setChildOutputName("OUTPUT")
            output.setPosition(QPointF(120.0 + 1.5 * _X, 60.0 + row * _Y))
            model_outputs[name] = output
        child.setModelOutputs(model_outputs)
        model.addChildAlgorithm(child)
    model.updateDestinationParameters()
    return model


def _source(source: Source) -> QgsProcessingModelChildParameterSource:
    if isinstance(source, FromInput):
        return QgsProcessingModelChildParameterSource.fromModelParameter(source.name)
    if isinstance(source, FromStep):
        return QgsProcessingModelChildParameterSource.fromChildOutput(source.child, source.output)
    return QgsProcessingModelChildParameterSource.fromStaticValue(source.value)


def write_model(record: RunRecord, store: ResponseStore, path: Path | None = None) -> tuple[Path, ModelSpec]:
    """Write ``record``'s answer as a ``.model3`` (default: :func:`model_path`); :class:`NotExportable` when a step
    cannot be expressed (:func:`refusal_line` says it to the user)."""
    spec = model_spec(record, store)
    path = path or model_path(store.session_dir, record.run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not build_model(spec).toFile(str(path)):
        raise OSError(f"could not write {path}")
    return path, spec


def refusal_line(exc: NotExportable) -> str:
    """The one line the user reads when a run cannot be opened as a Processing model."""
    if exc.kind == "step":
        return tr(
            "This run cannot be opened as a Processing model: step {step} ({tool}) has no Processing algorithm that "
            "computes the same thing."
        ).format(step=exc.step_id, tool=exc.what)
    if exc.kind == "input":
        return tr(
            "This run cannot be opened as a Processing model: its input {artifact} is not a vector layer."
        ).format(artifact=exc.what)
    return tr("This run cannot be opened as a Processing model: it has no counted answer computed by its steps.")


def output_parameter(model: QgsProcessingModelAlgorithm, output: str) -> str:
    """The name of the model's destination parameter for its output ``output``."""
    for parameter in model.destinationParameterDefinitions():  # named after the output's description
        if parameter.metadata().get("_modelChildOutputName") == output:
            return str(parameter.name())
    raise KeyError(output)


def read_answer(read: AnswerRead, layer: Any) -> float:
    """The value ``read`` names, from the model's output layer (a count table or the answer's features)."""
    if read.read == "features":
        return float(layer.featureCount())
    rows = [(str(f["value"]), float(f["count"])) for f in layer.getFeatures()]
    if read.read == "total":
        return sum(count for _, count in rows)
    return sum(count for value, count in rows if value == read.group)


def run_model(model: QgsProcessingModelAlgorithm, spec: ModelSpec, context: QgsProcessingContext) -> list[float]:
    """Run the model on the inputs the run read; the values of ``spec.answers``, in order."""
    import processing

    parameters: dict[str, Any] = {item.name: item.path for item in spec.inputs}
    for name in spec.outputs:
        parameters[output_parameter(model, name)] = QgsProcessing.TEMPORARY_OUTPUT
    results = processing.run(model, parameters, context=context)
    layers = {name: _layer(results[output_parameter(model, name)], context) for name in spec.outputs}
    return [read_answer(read, layers[read.output]) for read in spec.answers]


def _layer(result: Any, context: QgsProcessingContext) -> Any:
    from qgis.core import QgsProcessingUtils

    return QgsProcessingUtils.mapLayerFromString(result, context) if isinstance(result, str) else result


def open_in_designer(path: Path) -> bool:
    """Open the model in QGIS's Model Designer (main thread); False where there is none (headless, no Processing
    plugin)."""
    from qgis.PyQt.QtGui import QGuiApplication

    if QGuiApplication.platformName() in ("offscreen", "minimal"):
        return False
    try:
        from processing.modeler.ModelerDialog import ModelerDialog
    except ImportError:
        return False
    dialog = ModelerDialog.create()
    dialog.loadModel(str(path))
    dialog.show()
    dialog.activate()
    return True
