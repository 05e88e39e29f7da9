"""Areas of interest from QGIS: the active layer's selection, a polygon digitised on the canvas, or a
layer right-clicked in the layer tree ("Use as AOI"). Each becomes an AOI artifact in the session's
store (core.aoi: repaired, dissolved, polygon only). Main thread only."""

from __future__ import annotations

from typing import TYPE_CHECKING

import geopandas as gpd
import shapely
from qgis.core import QgsGeometry, QgsPointXY, QgsVectorLayer, QgsWkbTypes
from qgis.gui import QgsMapTool, QgsRubberBand
from qgis.PyQt.QtCore import Qt, pyqtSignal
from qgis.PyQt.QtGui import QColor

from ..core.aoi import register_aoi

if TYPE_CHECKING:
    from qgis.core import QgsCoordinateReferenceSystem
    from qgis.gui import QgsMapCanvas, QgsMapMouseEvent
    from qgis.PyQt.QtGui import QKeyEvent

    from ..core.store.models import ArtifactRecord
    from ..core.store.store import ResponseStore


def layer_to_geodataframe(layer: QgsVectorLayer, selected_only: bool) -> gpd.GeoDataFrame:
    """The layer's (selected) geometries as a GeoDataFrame in the layer's CRS."""
    features = layer.selectedFeatures() if selected_only else layer.getFeatures()
    geoms = [shapely.from_wkb(bytes(f.geometry().asWkb())) for f in features if f.hasGeometry()]
    crs = layer.crs()
    crs_text = crs.authid() if crs.authid() and not crs.authid().startswith("USER:") else crs.toWkt()
    return gpd.GeoDataFrame(geometry=geoms, crs=crs_text or None)


def aoi_from_layer(store: ResponseStore, layer: QgsVectorLayer, *, selected_only: bool) -> ArtifactRecord:
    gdf = layer_to_geodataframe(layer, selected_only)
    what = "selection of " if selected_only else ""
    return register_aoi(
        store, gdf, source=f"user.aoi:{'selection' if selected_only else 'layer'}", name=f"{what}{layer.name()}"
    )


def aoi_from_geometry(
    store: ResponseStore, geometry: QgsGeometry, crs: QgsCoordinateReferenceSystem, name: str = "digitised polygon"
) -> ArtifactRecord:
    gdf = gpd.GeoDataFrame(geometry=[shapely.from_wkb(bytes(geometry.asWkb()))], crs=crs.authid() or crs.toWkt())
    return register_aoi(store, gdf, source="user.aoi:digitised", name=name)


class PolygonTool(QgsMapTool):
    """Click to add vertices, right-click (or double-click) to finish; Esc cancels."""

    polygonFinished = pyqtSignal(object)  # noqa: N815  QgsGeometry in the canvas CRS
    cancelled = pyqtSignal()  # Esc

    def __init__(self, canvas: QgsMapCanvas) -> None:
        super().__init__(canvas)
        self.points: list[QgsPointXY] = []
        self.band = QgsRubberBand(canvas, QgsWkbTypes.PolygonGeometry)
        self.band.setColor(QColor(230, 120, 20, 90))
        self.band.setStrokeColor(QColor(230, 120, 20))
        self.band.setWidth(2)

    def add_point(self, point: QgsPointXY) -> None:
        self.points.append(QgsPointXY(point))
        self.band.addPoint(QgsPointXY(point), True)

    def finish(self) -> QgsGeometry | None:
        geometry = QgsGeometry.fromPolygonXY([self.points]) if len(self.points) >= 3 else None
        self.reset()
        if geometry is not None:
            self.polygonFinished.emit(geometry)
        return geometry

    def reset(self) -> None:
        self.points = []
        self.band.reset(QgsWkbTypes.PolygonGeometry)

    def canvasReleaseEvent(self, event: QgsMapMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.RightButton:
            self.finish()
        else:
            self.add_point(event.mapPoint())

    def canvasDoubleClickEvent(self, event: QgsMapMouseEvent) -> None:  # noqa: N802
        self.finish()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == Qt.Key_Escape:
            self.reset()
            self.cancelled.emit()

    def deactivate(self) -> None:
        self.reset()
        super().deactivate()
