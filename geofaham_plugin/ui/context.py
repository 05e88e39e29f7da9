"""The map context of a run in QGIS: the layers :mod:`..core.engines.context` chose, in their own group
("GeoFaham context — <session>") right under the session's results group, styled quietly.

Nothing blocks the UI while it loads: the context is chosen (catalogue, file headers, gazetteer) and its layers
are made (OGR opens the files) in a QgsTask; they are moved to the main thread there and added to the project
and the layer tree on the main thread only, when the task ends (:func:`load_context_async`), with coordinate
reference systems made on the main thread (:func:`own_crs`). QGIS's providers
then read the features in the map renderer's threads. Headless (the situation report from the command line)
:func:`add_context` does the same in one go.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from qgis.core import (
    Qgis,
    QgsApplication,
    QgsCoordinateReferenceSystem,
    QgsDataSourceUri,
    QgsFeature,
    QgsGeometry,
    QgsLayerTreeGroup,
    QgsPointXY,
    QgsProject,
    QgsRasterLayer,
    QgsTask,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QCoreApplication

from .layers import GROUP_PREFIX, settle_transform

if TYPE_CHECKING:
    from qgis.core import QgsMapLayer

    from ..core.engines.context import ContextLayer, MapContext

CONTEXT_PREFIX = "GeoFaham context — "
CREDIT_PROPERTY = "geofaham/credit"  # the attribution alone, as the map shows it
KIND_PROPERTY = "geofaham/context"  # the context kind of a layer (roads, water ...)
KEY_PROPERTY = "geofaham/context_key"  # what it shows (kind, source, filter): the same layer is added once
EVENT_PROPERTY = "geofaham/context_event"  # the event it was chosen for ("" for the basemap)


def context_group_name(results_group: QgsLayerTreeGroup) -> str:
    name = results_group.name()
    return CONTEXT_PREFIX + (name[len(GROUP_PREFIX) :] if name.startswith(GROUP_PREFIX) else name)


def context_group(project: QgsProject, results_group: QgsLayerTreeGroup) -> QgsLayerTreeGroup:
    """The context group of a results group, right under it (drawn beneath the results). Main thread."""
    root = project.layerTreeRoot()
    parent = results_group.parent() if isinstance(results_group.parent(), QgsLayerTreeGroup) else root
    assert isinstance(parent, QgsLayerTreeGroup)
    name = context_group_name(results_group)
    existing = parent.findGroup(name)
    index = parent.children().index(results_group) + 1
    if existing is not None:
        if parent.children().index(existing) != index:  # moved by the user or a new results group above: put back
            moved = existing.clone()
            parent.insertChildNode(index, moved)
            parent.removeChildNode(existing)
            return moved
        return existing
    group = parent.insertGroup(index, name)
    group.setExpanded(False)
    return group


def _key(layer: ContextLayer) -> str:
    return "|".join([layer.kind, layer.source, layer.where or "", str(layer.event_id if layer.points else "")])


def make_layer(layer: ContextLayer) -> QgsMapLayer | None:
    """A QGIS layer for one context layer, styled (any thread; the caller moves it to the main thread)."""
    from .styles import style_context

    made: QgsMapLayer
    if layer.kind == "basemap":
        uri = QgsDataSourceUri()
        for key, value in (("type", "xyz"), ("url", layer.source), ("zmin", "0"), ("zmax", str(layer.zmax))):
            uri.setParam(key, value)
        made = QgsRasterLayer(bytes(uri.encodedUri()).decode(), layer.title, "wms")
    elif layer.points:
        memory = QgsVectorLayer(
            "Point?crs=EPSG:4326&field=name:string(120)&field=population:integer", layer.title, "memory"
        )
        features = []
        for point in layer.points:
            feature = QgsFeature(memory.fields())
            feature.setAttributes([point["name"], int(point.get("population") or 0)])
            feature.setGeometry(QgsGeometry.fromPointXY(QgsPointXY(point["lon"], point["lat"])))
            features.append(feature)
        memory.dataProvider().addFeatures(features)
        memory.updateExtents()
        made = memory
    else:
        vector = QgsVectorLayer(layer.source, layer.title, "ogr")
        if vector.isValid() and layer.where and not vector.setSubsetString(layer.where):
            return None
        made = vector
    if not made.isValid():
        return None
    made.setCustomProperty(KIND_PROPERTY, layer.kind)
    made.setCustomProperty(KEY_PROPERTY, _key(layer))
    made.setCustomProperty(CREDIT_PROPERTY, layer.attribution)
    made.setCustomProperty(EVENT_PROPERTY, "" if layer.event_id is None else str(layer.event_id))
    attribution = layer.attribution + (f" ({layer.licence})" if layer.licence else "")
    made.serverProperties().setAttribution(attribution)
    metadata = made.metadata()
    metadata.setRights([attribution])
    metadata.setAbstract(f"GeoFaham map context: {layer.title}\n{attribution}")
    made.setMetadata(metadata)
    style_context(made, layer)
    return made


def make_layers(context: MapContext) -> list[QgsMapLayer]:
    """The context's layers, bottom to top, those that could be made (any thread)."""
    return [made for made in (make_layer(layer) for layer in context.layers) if made is not None]


def shown_for(group: QgsLayerTreeGroup | None) -> set[str]:
    """The events (as text; "" for the basemap) a context group already shows layers of."""
    return {str(layer.customProperty(EVENT_PROPERTY)) for layer in context_layers(group)}


def context_layers(group: QgsLayerTreeGroup | None) -> list[QgsMapLayer]:
    """The layers of a context group, top to bottom (tree order)."""
    if group is None:
        return []
    return [node.layer() for node in group.findLayers() if node.layer() is not None]


def add_context(project: QgsProject, results_group: QgsLayerTreeGroup, layers: list[QgsMapLayer]) -> list[QgsMapLayer]:
    """Add made context layers under the results group, those not there yet, each at its place in the drawing
    order (the basemap at the bottom, names on top). Main thread."""
    from ..core.engines.context import ORDER

    group = context_group(project, results_group)
    present = {layer.customProperty(KEY_PROPERTY) for layer in context_layers(group)}
    added = []
    for layer in layers:
        if layer.customProperty(KEY_PROPERTY) in present:
            continue
        rank = ORDER.index(layer.customProperty(KIND_PROPERTY))
        above = [lyr for lyr in context_layers(group) if ORDER.index(lyr.customProperty(KIND_PROPERTY)) >= rank]
        settle_transform(project, layer)
        project.addMapLayer(layer, False)
        group.insertLayer(len(above), layer)
        added.append(layer)
    return added


def own_crs(layers: list[QgsMapLayer]) -> None:
    """Give layers made in a task's thread coordinate reference systems made on the main thread. Main thread.

    QGIS keeps each CRS's PROJ object in a process-wide cache, owned by the thread that first made it; when that
    thread ends (a task manager's thread, after 30 s idle) the CRS loses it for every holder while the cache still
    hands it out: it stays valid and named, but it has no datum operation (QGIS asks which transformation with a
    modal dialog, and the project can keep none) and every layer opened later in that CRS gets the broken one,
    the user's own too. So what the task's thread put in the cache is dropped, and each layer gets a CRS made here,
    from its WKT (from its authority id when the WKT is gone already)."""
    QgsCoordinateReferenceSystem.invalidateCache()
    for layer in layers:
        crs = layer.crs()
        if not crs.isValid():
            continue
        wkt = crs.toWkt(Qgis.CrsWktVariant.Preferred)
        made = QgsCoordinateReferenceSystem.fromWkt(wkt) if wkt else QgsCoordinateReferenceSystem(crs.authid())
        if made.isValid():
            layer.setCrs(made)


@dataclass
class ContextLoad:
    """A context being loaded off the main thread: its task, then what was added and how long the main
    thread spent adding it."""

    task: QgsTask | None  # until it ends (the task manager deletes it then: no reference is kept)
    context: MapContext | None = None
    added: list[QgsMapLayer] = field(default_factory=list)
    error: BaseException | None = None
    main_thread_s: float = 0.0
    done: bool = False


def load_context_async(
    project: QgsProject,
    results_group: QgsLayerTreeGroup,
    prepare: Callable[[], MapContext],
    on_done: Callable[[ContextLoad], None] | None = None,
) -> ContextLoad:
    """Choose and make the context in a QgsTask (``prepare`` runs there: catalogue, headers, gazetteer); add it
    under ``results_group`` on the main thread when the task ends. Keep the returned object until ``done``."""
    main_thread = QCoreApplication.instance().thread()
    group_name = results_group.name()

    def work(task: QgsTask) -> tuple[MapContext, list[QgsMapLayer]]:  # the task's thread
        context = prepare()
        made = make_layers(context)
        for layer in made:
            layer.moveToThread(main_thread)
        return context, made

    def finished(exception: BaseException | None, result: tuple[MapContext, list[QgsMapLayer]] | None = None) -> None:
        started = time.monotonic()  # main thread
        try:
            if exception is not None or result is None:
                load.error = exception
                return
            load.context, made = result
            own_crs(made)
            group = project.layerTreeRoot().findGroup(group_name)
            if group is not None:  # the session's group is still there
                load.added = add_context(project, group, made)
        finally:
            load.main_thread_s = time.monotonic() - started
            load.done = True
            load.task = None
            if on_done is not None:
                on_done(load)

    task = QgsTask.fromFunction("GeoFaham: map context", work, on_finished=finished, flags=QgsTask.CanCancel)
    load = ContextLoad(task)
    QgsApplication.taskManager().addTask(task)
    return load
