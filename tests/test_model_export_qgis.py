"""Open as Processing model (issue 30): a run's answer exported as a ``.model3`` that QGIS's Model Designer loads
and that gives the run's number again when ``processing.run`` runs it on the same inputs."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

import geopandas as gpd
import pytest
from qgis.core import (
    QgsApplication,
    QgsFeature,
    QgsGeometry,
    QgsProcessing,
    QgsProcessingContext,
    QgsProcessingModelAlgorithm,
    QgsProject,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QUrl
from shapely import wkt
from test_session_qgis import close_session, wait_for

from geofaham_plugin.core.agents import TOOLS, ToolContext
from geofaham_plugin.core.aoi import register_aoi
from geofaham_plugin.core.config import settings_from_env
from geofaham_plugin.core.domain.names import AgentName
from geofaham_plugin.core.engines.layers import default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.model_export import NotExportable
from geofaham_plugin.core.orchestrator.answer import StatedValue, StructuredAnswer
from geofaham_plugin.core.orchestrator.ledgers import StepStatus
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.orchestrator.runlog import RunRecord, StepRecord, new_run_id
from geofaham_plugin.core.store.store import ResponseStore

sys.path.append("/usr/share/qgis/python/plugins")

#: a square in Altadena with 484 destroyed structures of the 5,805 the Eaton DINS snapshot holds
SOME_DESTROYED = "POLYGON((-118.15 34.18, -118.13 34.18, -118.13 34.195, -118.15 34.195, -118.15 34.18))"


@pytest.fixture(scope="module")
def processing(qgis_app):
    import processing
    from processing.core.Processing import Processing

    from geofaham_plugin.ui.processing.provider import GeoFahamProvider

    Processing.initialize()
    provider = GeoFahamProvider()
    QgsApplication.processingRegistry().addProvider(provider)
    yield processing
    QgsApplication.processingRegistry().removeProvider(provider)


@pytest.fixture()
def store(tmp_path):
    s = ResponseStore(tmp_path / "session")
    yield s
    s.close()


def answer(store: ResponseStore, question: str, aoi_wkt: str | None = None) -> RunRecord:
    aoi = register_aoi(store, gpd.GeoDataFrame(geometry=[wkt.loads(aoi_wkt)], crs=4326)) if aoi_wkt else None
    record = Orchestrator(store, LLM(ScriptedModel({}))).run(question, aoi_artifact_id=aoi.id if aoi else None)
    assert record.status == "answered", record.answer
    return record


def load(path) -> QgsProcessingModelAlgorithm:
    """The model as the Model Designer loads it (from the file, nothing else)."""
    model = QgsProcessingModelAlgorithm()
    assert model.fromFile(str(path)), f"{path} does not load as a Processing model"
    return model


def run_exported(record: RunRecord, store: ResponseStore, tmp_path) -> tuple[list[float], list[float]]:
    """Export ``record``, load the file back, run it with processing.run on the inputs the run read; (the model's
    values, the run's values)."""
    from geofaham_plugin.ui.processing.model import run_model, write_model

    path, spec = write_model(record, store, tmp_path / "models" / f"{record.run_id}.model3")
    model = load(path)
    values = run_model(model, spec, QgsProcessingContext())
    return values, [a.value for a in spec.answers]


# ------------------------------------------------------------------------------- real runs, run again in Processing
@pytest.mark.parametrize(
    "question, aoi, tools",
    [
        (
            "How many structures were destroyed by the Eaton fire in my area?",
            SOME_DESTROYED,
            ["inside", "select_damage", "count"],
        ),
        ("Which hospitals are within 5 km of the Eaton fire perimeter?", None, ["within_distance"]),
        ("How many hospitals are within 5 km of the Eaton fire?", None, ["within_distance", "count"]),
        ("How many buildings did the Eaton fire damage, by damage class?", None, ["select_damage", "count"]),
        ("What are the 3 hospitals nearest to the Eaton fire?", None, ["nearest"]),
        (
            "How many single family residences were destroyed by the Eaton fire?",
            None,
            ["filter_values", "select_damage", "count"],
        ),
        (
            "How many destroyed buildings are within 500 m of the Eaton fire perimeter?",
            None,
            ["select_damage", "within_distance", "count"],
        ),
    ],
)
def test_a_run_exported_as_a_model_gives_the_same_answer_in_processing(
    processing, store, tmp_path, question, aoi, tools
):
    record = answer(store, question, aoi)
    assert [s.tool for s in record.steps if s.tool in tools] == tools, [s.tool for s in record.steps]
    values, expected = run_exported(record, store, tmp_path)
    assert values == expected and expected == [v.value for v in record.structured.values]


# ------------------------------------------------------------------------------------ the dock's action, end to end
#: a square in Altadena where the Eaton DINS snapshot has 117 inspected structures and none destroyed
NONE_DESTROYED = "POLYGON((-118.045 34.17, -118.041 34.17, -118.041 34.174, -118.045 34.174, -118.045 34.17))"


def polygon_layer(wkt_text: str, name: str = "square") -> QgsVectorLayer:
    layer = QgsVectorLayer("Polygon?crs=EPSG:4326", name, "memory")
    feature = QgsFeature()
    feature.setGeometry(QgsGeometry.fromWkt(wkt_text))
    layer.dataProvider().addFeatures([feature])
    layer.updateExtents()
    QgsProject.instance().addMapLayer(layer)
    return layer


@pytest.fixture()
def session(qgis_iface, tmp_path):
    from geofaham_plugin.ui.dock import ChatDock
    from geofaham_plugin.ui.session import Session

    dock = ChatDock(qgis_iface.mainWindow())
    s = Session(dock, iface=qgis_iface, session_dir=tmp_path / "session", llm_factory=lambda: LLM(ScriptedModel({})))
    s.name = "model"
    yield s
    close_session(s)


def ask(session, question: str) -> RunRecord:
    finished = []
    session.runFinished.connect(finished.append)
    assert session.ask(question)
    wait_for(lambda: finished)
    assert finished[0] is not None and finished[0].status == "answered", finished[0]
    return finished[0]


def run_file(path, **inputs) -> list[float]:
    """Run the model file alone, as a user would from the Processing toolbox: every input its default (the file
    the run read) unless given; the counts of each output table (or its feature count when it is no table)."""
    model = load(path)
    parameters = {p.name(): p.defaultValue() for p in model.parameterDefinitions() if not p.isDestination()}
    assert set(inputs) <= set(parameters), f"the model's inputs are {sorted(parameters)}"
    parameters |= inputs
    outputs = [p.name() for p in model.destinationParameterDefinitions()]
    context = QgsProcessingContext()
    results = processing_run(model, parameters | {name: QgsProcessing.TEMPORARY_OUTPUT for name in outputs}, context)
    values = []
    for name in outputs:
        layer = results[name]
        names = layer.fields().names()
        values.append(sum(f["count"] for f in layer.getFeatures()) if "count" in names else layer.featureCount())
    return values


def processing_run(model, parameters, context):
    import processing

    return processing.run(model, parameters, context=context)


def test_the_dock_writes_a_model_of_the_answer_that_processing_runs_to_the_same_number(processing, session, tmp_path):
    assert session.aoi_from_layer(polygon_layer(SOME_DESTROYED), selected_only=False)
    record = ask(session, "How many structures were destroyed by the Eaton fire in my area?")
    assert record.structured.values[0].value == 484
    assert any(f"geofaham-model:{record.run_id}" in entry for entry in session.dock.entries())
    assert "Open as Processing model" in session.dock.transcript_text()

    session.dock._on_link(QUrl(f"geofaham-model:{record.run_id}"))  # the link clicked

    path = session.store.session_dir / "models" / f"{record.run_id}.model3"
    assert path.is_file(), session.dock.transcript_text()
    assert "Processing model written:" in session.dock.transcript_text()
    assert "Problem" not in session.dock.transcript_text()
    assert run_file(path) == [484]
    # the AOI is the model's input (its default the file the run read), not a constant: another area gives its number
    aoi_file = str(session.store.abs_path(record.aoi_artifact_id))
    model = load(path)  # kept: its parameters die with it
    defaults = {p.name(): p.defaultValue() for p in model.parameterDefinitions()}
    assert aoi_file in defaults.values(), (aoi_file, defaults)
    (aoi,) = [name for name, default in defaults.items() if default == aoi_file]
    other = tmp_path / "other.geojson"
    gpd.GeoDataFrame(geometry=[wkt.loads(NONE_DESTROYED)], crs=4326).to_file(other)
    assert run_file(path, **{aoi: str(other)}) == [0]


def test_a_run_with_a_step_processing_cannot_express_refuses_in_one_line(processing, session):
    record = ask(session, "What is the area of the Eaton fire perimeter in km2?")
    assert [s.tool for s in record.steps] == ["load_event_layer", "measure"]
    assert session.open_model(record.run_id) is None
    problem = session.dock.transcript_text().strip().splitlines()[-1]
    assert problem == (
        "Problem: This run cannot be opened as a Processing model: step 2 (measure) has no Processing algorithm "
        "that computes the same thing."
    )
    assert not (session.store.session_dir / "models" / f"{record.run_id}.model3").exists()


@pytest.mark.parametrize(
    "question, step",
    [
        ("What is the area of the Eaton fire perimeter in km2?", "step 2 (measure)"),
        ("How many buildings did the Eaton fire destroy per 500 m grid cell?", "step 3 (grid_counts)"),
    ],
)
def test_unsupported_steps_refuse_naming_the_step(processing, store, tmp_path, question, step):
    from geofaham_plugin.ui.processing.model import refusal_line, write_model

    record = answer(store, question)
    with pytest.raises(NotExportable) as refused:
        write_model(record, store, tmp_path / "refused.model3")
    assert step in str(refused.value) and step in refusal_line(refused.value)
    assert "\n" not in refusal_line(refused.value)
    assert not (tmp_path / "refused.model3").exists()


def test_a_run_without_an_answer_refuses(processing, store):
    from geofaham_plugin.ui.processing.model import refusal_line, write_model

    record = answer(store, "How many structures were destroyed by the Eaton fire in my area?", SOME_DESTROYED)
    with pytest.raises(NotExportable) as refused:
        write_model(record.model_copy(update={"status": "partial"}), store)
    assert refused.value.kind == "answer" and "no counted answer" in refusal_line(refused.value)


# ------------------------------------------------------------------------------------ what the Model Designer loads
def test_the_model_file_is_what_the_model_designer_loads(processing, store, tmp_path, monkeypatch):
    from geofaham_plugin.ui.processing.model import write_model

    record = answer(store, "How many destroyed buildings are within 500 m of the Eaton fire perimeter?")
    path, spec = write_model(record, store, tmp_path / "m.model3")
    root = ET.parse(path).getroot()  # well-formed XML
    assert root.tag == "Option" and root.get("type") == "Map"
    model = load(path)
    children = model.childAlgorithms()
    assert {c.algorithmId() for c in children.values()} == {
        "native:extractbyexpression",
        "geofaham:withindistance",
        "geofaham:countfeatures",
    }
    assert all(c.algorithm() is not None for c in children.values()), "every algorithm resolves in the registry"
    assert sorted(model.parameterComponents()) == ["eaton_dins", "eaton_perimeter"]
    ok, issues = model.validate()
    assert ok, issues
    assert record.question in model.shortHelpString()
    # the Model Designer itself (its loader and scene), where it can be created headless
    from processing.modeler import ModelerDialog as designer

    monkeypatch.setattr(designer, "iface", None)  # the test's stand-in for QGIS's window has no toolbar icon size
    dialog = designer.ModelerDialog.create()
    try:
        dialog.loadModel(str(path))
        assert len(dialog.model().childAlgorithms()) == 3
    finally:
        dialog.close()


# ------------------------------------------------------------------------------------ a plan run by the tools
def run_plan(store: ResponseStore, question: str, plan: list[tuple[str, AgentName, dict, dict]]) -> RunRecord:
    """Run ``plan`` ((tool, agent, args, {slot: step number}) per step) with the agents' own tools on real data and
    record it as the orchestrator would: the last step's count is the answer."""
    ctx = ToolContext(store=store, layers=default_catalogue(), settings=settings_from_env({"GEOFAHAM_OFFLINE": "1"}))
    steps: list[StepRecord] = []
    for number, (name, agent, args, slots) in enumerate(plan, start=1):
        inputs = {slot: steps[ref - 1].artifact_id for slot, ref in slots.items()}
        artifact = TOOLS[name].run(ctx, args, {slot: store.get(ref) for slot, ref in inputs.items()})
        steps.append(
            StepRecord(
                plan_index=1,
                step_id=number,
                agent=agent,
                tool=name,
                args=args,
                inputs=inputs,
                status=StepStatus.done,
                artifact_id=artifact.id,
            )
        )
    total = float(store.read_table(steps[-1].artifact_id)["count"].sum())
    value = StatedValue(label="in total", value=total, artifact_id=steps[-1].artifact_id)
    return RunRecord(
        run_id=new_run_id(),
        question=question,
        status="answered",
        steps=steps,
        structured=StructuredAnswer(status="answered", values=[value]),
    )


V, M = AgentName.vector, AgentName.maps
HAZARD = ("load_event_layer", V, {"event_id": 11, "role": "hazard"}, {})
DAMAGE = ("load_event_layer", V, {"event_id": 11, "role": "damage"}, {})


@pytest.mark.parametrize(
    "question, plan",
    [
        (
            "How many hospitals lie in the area 3 km around the Eaton fire?",
            [
                HAZARD,
                ("buffer", V, {"distance_m": 3000.0, "dissolve": True}, {"layer": 1}),
                ("get_features", M, {"feature_class": "healthcare", "buffer_m": 0.0}, {"aoi": 2}),
                ("inside", V, {}, {"features": 3, "mask": 2}),
                ("count", V, {"by": None}, {"layer": 4}),
            ],
        ),
        (
            "How many damaged buildings are within 4 km of a hospital, one buffer per hospital?",
            [
                HAZARD,
                DAMAGE,
                ("select_damage", V, {"damage_classes": ["affected", "minor", "major", "destroyed"]}, {"damage": 2}),
                ("get_features", M, {"feature_class": "healthcare", "buffer_m": 5000.0}, {"aoi": 1}),
                ("buffer", V, {"distance_m": 4000.0, "dissolve": False}, {"layer": 4}),
                ("inside", V, {}, {"features": 3, "mask": 5}),
                ("count", V, {"by": "damage_class"}, {"layer": 6}),
            ],
        ),
        (
            "How many buildings lie within 3.5 km of a hospital near the Eaton fire?",  # the distance narrows here
            [
                HAZARD,
                DAMAGE,
                ("get_features", M, {"feature_class": "healthcare", "buffer_m": 5000.0}, {"aoi": 1}),
                ("within_distance", V, {"distance_m": 3500.0}, {"features": 2, "reference": 3}),
                ("count", V, {"by": None}, {"layer": 4}),
            ],
        ),
    ],
)
def test_plans_with_buffers_and_distances_run_again_in_processing(processing, store, tmp_path, question, plan):
    record = run_plan(store, question, plan)
    assert record.structured.values[0].value > 0
    values, expected = run_exported(record, store, tmp_path)
    assert values == expected == [record.structured.values[0].value]
