"""Response Store entries as QGIS layers, in one layer group per session. Main thread only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qgis.core import QgsLayerTreeGroup, QgsProject, QgsRasterLayer, QgsVectorLayer

if TYPE_CHECKING:
    from qgis.core import QgsMapLayer
    from qgis.gui import QgsMapCanvas

    from ..core.store.models import ArtifactRecord
    from ..core.store.store import ResponseStore

GROUP_PREFIX = "GeoFaham — "


def session_group(project: QgsProject, session_name: str) -> QgsLayerTreeGroup:
    root = project.layerTreeRoot()
    name = GROUP_PREFIX + session_name
    group = root.findGroup(name)
    return group if group is not None else root.insertGroup(0, name)


def layer_for_artifact(record: ArtifactRecord, store: ResponseStore) -> QgsVectorLayer | QgsRasterLayer | None:
    """A QGIS layer for a vector/AOI/raster artifact, or None for kinds that are not map layers."""
    path = store.abs_path(record.id)
    name = f"{record.id} · {record.summary}"[:120]
    kind = record.kind.value
    if kind in ("vector", "aoi"):
        layer = QgsVectorLayer(f"{path}|layername={record.id}", name, "ogr")
    elif kind == "raster":
        layer = QgsRasterLayer(str(path), name, "gdal")
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
    layer.setAbstract(
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
    from qgis.core import QgsCoordinateTransform

    extent = layer.extent()
    if extent.isEmpty() and layer.featureCount() == 0:
        return
    transform = QgsCoordinateTransform(layer.crs(), canvas.mapSettings().destinationCrs(), QgsProject.instance())
    extent = transform.transformBoundingBox(extent)
    extent.scale(1.15)
    canvas.setExtent(extent)
    canvas.refresh()


def add_artifact_layer(
    project: QgsProject, group: QgsLayerTreeGroup, record: ArtifactRecord, store: ResponseStore
) -> QgsVectorLayer | QgsRasterLayer | None:
    """Add the artifact's layer at the end of the session group (run order); returns it or None."""
    layer = layer_for_artifact(record, store)
    if layer is None:
        return None
    project.addMapLayer(layer, False)
    group.addLayer(layer)
    return layer
