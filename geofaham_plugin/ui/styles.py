"""Styles by artifact type: damage classes with a fixed colour scheme, hazard areas, AOIs as outlines."""

from __future__ import annotations

from qgis.core import (QgsCategorizedSymbolRenderer, QgsFillSymbol, QgsMarkerSymbol, QgsRendererCategory,
                       QgsSingleSymbolRenderer, QgsSymbol, QgsWkbTypes)

DAMAGE_COLOURS = {  # none -> destroyed: green to dark red (CAL FIRE DINS-like)
    "none": "#1a9641", "affected": "#a6d96a", "minor": "#fdae61", "major": "#f46d43", "destroyed": "#b2182b",
}


def style_for(layer, record) -> None:
    kind = record.kind.value
    geometry = layer.geometryType()
    fields = [f.name() for f in layer.fields()]
    if kind == "aoi":
        layer.setRenderer(QgsSingleSymbolRenderer(QgsFillSymbol.createSimple(
            {"color": "0,0,0,0", "outline_color": "230,120,20", "outline_width": "0.8", "outline_style": "dash"})))
    elif "damage_class" in fields:
        categories = []
        for value, colour in DAMAGE_COLOURS.items():
            symbol = QgsSymbol.defaultSymbol(geometry)
            symbol.setColor(_qcolor(colour))
            categories.append(QgsRendererCategory(value, symbol, value))
        layer.setRenderer(QgsCategorizedSymbolRenderer("damage_class", categories))
    elif record.extra.get("role") == "hazard" and geometry == QgsWkbTypes.PolygonGeometry:
        flood = "flood" in (record.summary or "").lower()
        fill = "60,130,220,90" if flood else "220,60,30,70"
        line = "30,90,200" if flood else "180,30,20"
        layer.renderer().setSymbol(QgsFillSymbol.createSimple({"color": fill, "outline_color": line, "outline_width": "0.5"}))
    elif geometry == QgsWkbTypes.PointGeometry and "distance_m" in fields:
        layer.renderer().setSymbol(QgsMarkerSymbol.createSimple(
            {"name": "star", "color": "255,215,0", "outline_color": "60,60,60", "size": "4.5"}))
    layer.triggerRepaint()


def _qcolor(text: str):
    from qgis.PyQt.QtGui import QColor

    return QColor(text)
