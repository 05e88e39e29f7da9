"""Response Store entries as QGIS layers, in one layer group per session. Main thread only."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from qgis.core import QgsLayerTreeGroup, QgsProject, QgsRasterLayer, QgsRectangle, QgsVectorLayer

from .i18n import tr

if TYPE_CHECKING:
    from qgis.core import QgsCoordinateReferenceSystem, QgsMapLayer
    from qgis.gui import QgsMapCanvas

    from ..core.orchestrator.runlog import RunRecord
    from ..core.store.models import ArtifactRecord
    from ..core.store.store import ResponseStore

GROUP_PREFIX = "GeoFaham — "


def session_group(project: QgsProject, session_name: str) -> QgsLayerTreeGroup:
    root = project.layerTreeRoot()
    name = GROUP_PREFIX + session_name
    group = root.findGroup(name)
    return group if group is not None else root.insertGroup(0, name)


#: the geometry families an OGR data source can be told (``|geometrytype=``) for a file that states none
GEOMETRY_FAMILIES = {"point": "Point", "linestring": "LineString", "polygon": "Polygon"}


def made_geometry(record: ArtifactRecord, store: ResponseStore) -> str | None:
    """The geometry family ("Point", "LineString", "Polygon") of an artifact: its own, else, for an empty result
    whose file states none, that of what it was made from (its inputs, nearest first); None when nothing says."""
    from ..core.store.models import VectorMeta

    seen: set[str] = set()
    todo = [record]
    while todo:
        current = todo.pop(0)
        meta = current.metadata
        if isinstance(meta, VectorMeta):
            family = GEOMETRY_FAMILIES.get(meta.geometry_type.lower().removeprefix("multi"))
            if family is not None:
                return family
        seen.add(current.id)
        todo += [store.get(i) for i in current.inputs if i not in seen and i in store]
    return None


def artifact_source(record: ArtifactRecord, store: ResponseStore) -> str:
    """The data source of an artifact's layer. An empty vector result's GeoPackage has geometry type Unknown
    (QGIS would open it as a table, with no symbol): its source says the geometry of what it was made from."""
    from ..core.store.models import VectorMeta

    path = store.abs_path(record.id)
    if record.kind.value not in ("vector", "aoi"):
        return str(path)
    source = f"{path}|layername={record.id}"
    if isinstance(record.metadata, VectorMeta) and record.metadata.feature_count == 0:
        family = made_geometry(record, store)
        source += f"|geometrytype={family}" if family else ""
    return source


ARTIFACT_ID = re.compile(r"\ba_[0-9a-f]{8}\b")
#: "117 features of a_02dd9896 inside a_8634d4b0": a count of the features of another artifact
FEATURES_OF = re.compile(r"^([\d,.]+) features of (a_[0-9a-f]{8})\b")
#: "7 healthcare features within 5000 m of ...", "0 buildings with damage class destroyed": what was counted
COUNTED = re.compile(r"^[\d,.]+ (.+?) (?:within|inside|outside|nearest|with|clipped|in|of|cut)\b")


def said(artifact_id: str, store: ResponseStore, depth: int = 0) -> str:
    """An artifact another's summary names, in words: the user's area, or what its features are (the data set's
    title for a layer read as it is)."""
    if artifact_id not in store:
        return tr("an earlier result")
    record = store.get(artifact_id)
    if record.kind.value == "aoi":
        return tr("your area")
    if depth < 8 and (of := FEATURES_OF.match(record.summary)):
        return said(of[2], store, depth + 1)
    if counted := COUNTED.match(record.summary):
        return counted[1]
    return record.summary.split(" (")[0]


def layer_name(record: ArtifactRecord, store: ResponseStore) -> str:
    """The name a result's layer has in the Layers panel and the legends: its summary with the artifacts it names
    said in words ("117 CAL FIRE DINS damage inspections, Eaton Fire inside your area"), never an artifact id;
    the id is in the layer's abstract and its ``geofaham/artifact_id`` property."""
    summary = record.summary
    if of := FEATURES_OF.match(summary):
        summary = f"{of[1]} {said(of[2], store)}{summary[of.end() :]}"
    text = ARTIFACT_ID.sub(lambda m: said(m.group(), store), summary).strip()
    return (text[:1].upper() + text[1:])[:120]


def layer_for_artifact(record: ArtifactRecord, store: ResponseStore) -> QgsVectorLayer | QgsRasterLayer | None:
    """A QGIS layer for a vector/AOI/raster artifact, or None for kinds that are not map layers."""
    name = layer_name(record, store)
    kind = record.kind.value
    # our own style follows; looking for a default one in the file costs most of the time a big layer takes to open
    if kind in ("vector", "aoi"):
        options = QgsVectorLayer.LayerOptions()
        options.loadDefaultStyle = False
        layer = QgsVectorLayer(artifact_source(record, store), name, "ogr", options)
    elif kind == "raster":
        raster_options = QgsRasterLayer.LayerOptions()
        raster_options.loadDefaultStyle = False
        layer = QgsRasterLayer(artifact_source(record, store), name, "gdal", raster_options)
    else:
        return None
    if not layer.isValid():
        return None
    layer.setCustomProperty("geofaham/artifact_id", record.id)
    from .styles import style_for, style_raster

    if kind in ("vector", "aoi"):
        style_for(layer, record)
    else:
        style_raster(layer, record)
    layer.serverProperties().setAbstract(
        f"GeoFaham artifact {record.id}\nsource: {record.source}\ninputs: {', '.join(record.inputs) or '-'}\n{record.summary}"
    )
    return layer


def find_artifact_layer(project: QgsProject, artifact_id: str) -> QgsMapLayer | None:
    for layer in project.mapLayers().values():
        if layer.customProperty("geofaham/artifact_id") == artifact_id:
            return layer
    return None


def zoom_to_layer(canvas: QgsMapCanvas, layer: QgsMapLayer) -> None:
    """Zoom the canvas to a layer's extent, transformed to the canvas CRS."""
    if _has_extent(layer):
        zoom_to_extent(canvas, layers_extent([layer], canvas.mapSettings().destinationCrs(), QgsProject.instance()))


def zoom_to_extent(canvas: QgsMapCanvas, extent: QgsRectangle) -> None:
    if extent.isNull():
        return
    canvas.setExtent(extent)
    canvas.refresh()


def _has_extent(layer: QgsMapLayer) -> bool:
    """A layer with something to frame: features (a vector layer), or an extent (a raster)."""
    if isinstance(layer, QgsVectorLayer) and layer.featureCount() == 0:
        return False
    return not layer.extent().isNull()


def layers_extent(layers: list[QgsMapLayer], crs: QgsCoordinateReferenceSystem, project: QgsProject) -> QgsRectangle:
    """The union of the layers' extents in ``crs``, with a margin (a single point: a little around it); null when
    none has an extent."""
    from qgis.core import QgsCoordinateTransform

    extent = QgsRectangle()
    extent.setNull()
    for layer in layers:
        if _has_extent(layer):
            extent.combineExtentWith(
                QgsCoordinateTransform(layer.crs(), crs, project).transformBoundingBox(layer.extent())
            )
    if not extent.isNull():
        if extent.width() == 0 or extent.height() == 0:  # a single point
            extent.grow(0.005 if crs.isGeographic() else 500.0)
        extent.scale(1.1)
    return extent


def lineage_layers(
    project: QgsProject,
    artifact_ids: list[str],
    store: ResponseStore,
    keep: Callable[[QgsMapLayer], bool] = lambda layer: True,
) -> list[QgsMapLayer]:
    """The layers ``keep`` accepts of the nearest artifacts in the lineage of ``artifact_ids``: theirs, else those
    of what they were made from, and so on (the first generation with any)."""
    seen: set[str] = set()
    generation = list(dict.fromkeys(artifact_ids))
    while generation:
        found = [layer for a in generation if (layer := find_artifact_layer(project, a)) is not None and keep(layer)]
        if found:
            return found
        seen.update(generation)
        generation = list(
            dict.fromkeys(i for a in generation if a in store for i in store.get(a).inputs if i not in seen)
        )
    return []


def answer_layers(project: QgsProject, record: RunRecord, store: ResponseStore) -> list[QgsMapLayer]:
    """The layers that show a run's answer: its cited artifacts' layers; for a cited table (a count, a breakdown)
    the layers it was computed from."""
    return lineage_layers(project, list(record.cited_artifacts), store)


def answer_extent(
    project: QgsProject, record: RunRecord, store: ResponseStore, crs: QgsCoordinateReferenceSystem
) -> QgsRectangle:
    """What a map of a run's answer frames, in ``crs``: the area asked about (the run's AOI) and the answer's
    features (the cited artifacts' layers with features, else the nearest layers with features they were made
    from), with a margin; null when nothing has an extent."""
    layers = lineage_layers(project, list(record.cited_artifacts), store, _has_extent)
    aoi = find_artifact_layer(project, record.aoi_artifact_id) if record.aoi_artifact_id else None
    return layers_extent(layers + ([aoi] if aoi is not None else []), crs, project)


def show_answer(
    project: QgsProject, group: QgsLayerTreeGroup, record: RunRecord, store: ResponseStore
) -> list[QgsMapLayer]:
    """The answer on top: a run's answer layers first in the session's group and visible, its AOI outline right
    under them, the run's other layers (intermediate results, what it read) hidden but kept; returns the answer
    layers."""
    answers = answer_layers(project, record, store)
    aoi = find_artifact_layer(project, record.aoi_artifact_id) if record.aoi_artifact_id else None
    shown = answers + ([aoi] if aoi is not None and aoi not in answers else [])
    for artifact_id in record.artifact_ids():
        layer = find_artifact_layer(project, artifact_id)
        node = group.findLayer(layer.id()) if layer is not None and layer not in shown else None
        if node is not None:
            node.setItemVisibilityChecked(False)
    for layer in reversed(shown):
        node = group.findLayer(layer.id())
        if node is None:
            continue
        if group.children().index(node) != 0:
            moved = node.clone()
            group.insertChildNode(0, moved)
            group.removeChildNode(node)
            node = moved
        node.setItemVisibilityChecked(True)
    return answers


def settle_transform(project: QgsProject, layer: QgsMapLayer) -> None:
    """Give the project the coordinate operations between the layer's CRS and its own, each way, when there are
    several (NAD83 / UTM 11N to WGS 84: nine) and it has none: the one QGIS takes first, so that QGIS never asks
    which to use (a modal "Select Transformation" dialog when the layer is added, and again each time the project
    is opened). The project keeps them (its transform context) in its file. Both ways are stated: QGIS 3.40 applied
    a one-way operation unreversed the other way (WGS 84 degrees read as UTM metres). Main thread."""
    from qgis.core import QgsDatumTransform

    source, target = layer.crs(), project.crs()
    if not source.isValid() or not target.isValid() or source == target:
        return
    context = project.transformContext()
    stated = context.coordinateOperations()
    changed = False
    for a, b in ((source, target), (target, source)):
        if (a.authid(), b.authid()) in stated:
            continue
        operations = QgsDatumTransform.operations(a, b)
        usable = [o for o in operations if o.isAvailable]
        if len(operations) > 1 and usable:
            changed = context.addCoordinateOperation(a, b, usable[0].proj, True) or changed
    if changed:
        project.setTransformContext(context)


def add_artifact_layer(
    project: QgsProject, group: QgsLayerTreeGroup, record: ArtifactRecord, store: ResponseStore
) -> QgsVectorLayer | QgsRasterLayer | None:
    """Add the artifact's layer at the end of the session group (run order); returns it or None."""
    layer = layer_for_artifact(record, store)
    if layer is None:
        return None
    settle_transform(project, layer)
    project.addMapLayer(layer, False)
    node = group.addLayer(layer)
    node.setCustomProperty("showFeatureCount", True)  # each legend class with its count
    return layer


def label_answer(project: QgsProject, record: RunRecord, store: ResponseStore) -> list[QgsMapLayer]:
    """Label the named facilities of a run's answer: the layers it cites, and the facilities a road access check
    routed (origins and targets); returns the layers labelled. Main thread."""
    from .styles import label_facilities

    ids = list(record.cited_artifacts)
    for step in record.steps:
        if step.tool == "road_reachability":
            ids += [step.inputs[k] for k in ("origins", "targets") if step.inputs.get(k)]
    labelled = []
    for artifact_id in dict.fromkeys(ids):
        layer = find_artifact_layer(project, artifact_id) if artifact_id in store else None
        if isinstance(layer, QgsVectorLayer) and label_facilities(layer, store.get(artifact_id)):
            labelled.append(layer)
    return labelled


def style_road_access(project: QgsProject, record: RunRecord, store: ResponseStore) -> list[QgsMapLayer]:
    """Highlight the facilities a run's road access check found cut off (its ``road_reachability`` steps'
    isolated origins and targets) on their layers; returns the layers changed. Main thread."""
    from .styles import highlight_cut_off

    changed = []
    for step in record.steps:
        if step.tool != "road_reachability" or not step.artifact_id or step.artifact_id not in store:
            continue
        extra = store.get(step.artifact_id).extra
        for role, key in (("origins", "isolated_origins"), ("targets", "isolated_targets")):
            artifact_id = step.inputs.get(role)
            names = [str(n) for n in extra.get(key) or [] if not str(n).startswith("#")]
            if not names or not artifact_id or artifact_id not in store:
                continue
            layer = find_artifact_layer(project, artifact_id)
            if not isinstance(layer, QgsVectorLayer):
                continue
            declared = store.get(artifact_id).extra.get("name_field")
            highlight_cut_off(layer, declared if isinstance(declared, str) else "name", names)
            changed.append(layer)
    return changed
