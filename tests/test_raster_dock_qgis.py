"""Issue 27 in the dock: the Hurst pre-fire, post-fire and mask GeoTIFFs opened in QGIS as raster layers (as an
analyst loads them) and a question typed into the dock. The run reads the project's rasters in place, computes dNBR
from the two images and answers the mean inside the mask and the share at moderate-low severity or worse; the
computed dNBR comes back on the map as a raster layer with its colour ramp. Expected values from
``test_raster_questions.hurst`` (numpy over the bands read with rasterio, no product code)."""

from __future__ import annotations

import numpy as np
import pytest
from qgis.core import QgsProject, QgsRasterLayer
from test_raster_questions import HURST, hurst  # noqa: F401 (the module-scoped fixture, shared)
from test_session_qgis import close_session, wait_for

from geofaham_plugin.core.engines.layers import data_dir
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.ui.dock import ChatDock
from geofaham_plugin.ui.session import Session

SCRIPT = {"progress": [{"action": "finish", "reason": "nothing else applies"}] * 4}


@pytest.fixture()
def rasters_open():
    """The three Hurst files opened as the project's raster layers, under the names an analyst would give them."""
    project = QgsProject.instance()
    layers = []
    for name, suffix in [("pre-fire", "s2_pre_fire"), ("post-fire", "s2_post_fire"), ("fire mask", "fire_mask")]:
        layer = QgsRasterLayer(str(data_dir() / f"{HURST}{suffix}.tif"), name, "gdal")
        assert layer.isValid(), name
        layers.append(layer)
    project.addMapLayers(layers)
    yield layers
    project.clear()


@pytest.fixture()
def session(qgis_iface, tmp_path, rasters_open):
    dock = ChatDock(qgis_iface.mainWindow())
    s = Session(dock, session_dir=tmp_path / "session", llm_factory=lambda: LLM(ScriptedModel(SCRIPT)), name="hurst")
    dock.questionSubmitted.connect(s.ask)
    yield s
    close_session(s)


def ask(session: Session, question: str):
    finished: list = []
    session.runFinished.connect(finished.append)
    session.dock.input.setPlainText(question)
    session.dock.send_button.click()
    wait_for(lambda: finished, timeout=240)
    session.runFinished.disconnect(finished.append)
    return finished[0]


def test_dnbr_questions_typed_in_the_dock_over_the_projects_raster_layers(session, rasters_open, hurst):  # noqa: F811
    dnbr, inside, _ = hurst
    listed = [session.dock.layer_list.item(i).text() for i in range(session.dock.layer_list.count())]
    assert sorted(listed) == ["fire mask", "post-fire", "pre-fire"]

    record = ask(session, "What is the mean dNBR inside the fire mask?")
    assert record is not None and record.status == "answered", (
        record and record.answer
    ) or session.dock.transcript_text()
    (value,) = record.structured.totals()
    expected = float(np.nanmean(dnbr[inside]))
    assert value.measure == "mean" and abs(value.value - expected) < 0.0006, (value.value, expected)
    assert abs(value.value - 0.395) <= 0.006
    # the project's files were read in place, not written again by the dock
    assert not list((session.store.session_dir).rglob("*pre_fire*.gpkg"))
    # the computed dNBR is on the map, as a raster layer with a renderer of its own (not the default grey)
    group = QgsProject.instance().layerTreeRoot().findGroups()[0]
    added = [node.layer() for node in group.findLayers() if isinstance(node.layer(), QgsRasterLayer)]
    assert added and any("dnbr" in layer.name().lower() for layer in added), [layer.name() for layer in added]
    assert all(layer.renderer().type() != "singlebandgray" for layer in added)

    share = ask(session, "What share of the fire mask burned at moderate-low severity or worse?")
    assert share is not None and share.status == "answered", share and share.answer
    (value,) = share.structured.totals()
    assert value.unit == "percent" and abs(value.value - 100 * float((dnbr[inside] >= 0.27).mean())) < 0.05
