"""Styles by artifact type: damage classes with a fixed colour scheme, hazard areas, AOIs as outlines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qgis.core import (
    QgsCategorizedSymbolRenderer,
    QgsFillSymbol,
    QgsMarkerSymbol,
    QgsRendererCategory,
    QgsSingleSymbolRenderer,
    QgsSymbol,
    QgsWkbTypes,
)

if TYPE_CHECKING:
    from qgis.core import QgsRasterLayer, QgsVectorLayer
    from qgis.PyQt.QtGui import QColor

    from ..core.store.models import ArtifactRecord

DAMAGE_COLOURS = {  # none -> destroyed: green to dark red (CAL FIRE DINS-like)
    "none": "#1a9641",
    "affected": "#a6d96a",
    "minor": "#fdae61",
    "major": "#f46d43",
    "destroyed": "#b2182b",
}
#: point layers with more features than this are drawn with small stroke-less dots (cheap to draw; at 10^5-10^6
#: points a symbol's outline costs as much as its fill and hides the density anyway)
MANY_POINTS = 100_000


def _point_symbol(layer: QgsVectorLayer, colour: str) -> QgsSymbol | None:
    """A small dot without outline for a big point layer; None for other layers (their default symbol)."""
    if layer.geometryType() != QgsWkbTypes.PointGeometry or layer.featureCount() <= MANY_POINTS:
        return None
    return QgsMarkerSymbol.createSimple({"name": "circle", "color": colour, "outline_style": "no", "size": "1.0"})


def style_for(layer: QgsVectorLayer, record: ArtifactRecord) -> None:
    kind = record.kind.value
    geometry = layer.geometryType()
    fields = [f.name() for f in layer.fields()]
    if kind == "aoi":
        layer.setRenderer(
            QgsSingleSymbolRenderer(
                QgsFillSymbol.createSimple(
                    {"color": "0,0,0,0", "outline_color": "230,120,20", "outline_width": "0.8", "outline_style": "dash"}
                )
            )
        )
    elif "damage_class" in fields:
        categories = []
        for value, colour in DAMAGE_COLOURS.items():
            symbol = _point_symbol(layer, colour) or QgsSymbol.defaultSymbol(geometry)
            symbol.setColor(_qcolor(colour))
            categories.append(QgsRendererCategory(value, symbol, value))
        layer.setRenderer(QgsCategorizedSymbolRenderer("damage_class", categories))
    elif record.extra.get("role") == "hazard" and geometry == QgsWkbTypes.PolygonGeometry:
        flood = "flood" in (record.summary or "").lower()
        fill = "60,130,220,90" if flood else "220,60,30,70"
        line = "30,90,200" if flood else "180,30,20"
        layer.renderer().setSymbol(
            QgsFillSymbol.createSimple({"color": fill, "outline_color": line, "outline_width": "0.5"})
        )
    elif geometry == QgsWkbTypes.PointGeometry and "distance_m" in fields:
        layer.renderer().setSymbol(
            QgsMarkerSymbol.createSimple(
                {"name": "star", "color": "255,215,0", "outline_color": "60,60,60", "size": "4.5"}
            )
        )
    else:
        dot = _point_symbol(layer, "70,70,70")
        if dot is not None and isinstance(layer.renderer(), QgsSingleSymbolRenderer):
            layer.renderer().setSymbol(dot)
    layer.triggerRepaint()


def _qcolor(text: str) -> QColor:
    from qgis.PyQt.QtGui import QColor

    return QColor(text)


SEVERITY_COLOURS = ["#1a9850", "#fee08b", "#fdae61", "#f46d43", "#a50026"]  # unburned .. high (USGS classes)
FLOOD_COLOURS = {"water": "#2166ac", "flood": "#2166ac", "flooded": "#2166ac", "permanent": "#67a9cf"}


def style_raster(layer: QgsRasterLayer, record: ArtifactRecord) -> None:
    """Class rasters (burn severity, flood extent, masks): a palette with the class names as legend;
    index rasters (NDVI, dNBR, ...): a colour ramp over the computed min/max."""
    from qgis.core import (
        QgsColorRampShader,
        QgsPalettedRasterRenderer,
        QgsRasterShader,
        QgsSingleBandPseudoColorRenderer,
        QgsStyle,
    )

    extra = record.extra
    classes = extra.get("classes")
    if classes:
        codes = sorted(int(code) for code in classes)
        entries = []
        for i, code in enumerate(codes):
            label = str(classes[str(code)])
            if "burn_severity" in record.source:
                colour = SEVERITY_COLOURS[min(i, len(SEVERITY_COLOURS) - 1)]
            elif any(word in label.lower() for word in FLOOD_COLOURS):
                colour = next(c for w, c in FLOOD_COLOURS.items() if w in label.lower())
            else:
                colour = ["#d9d9d9", "#e6550d", "#3182bd", "#31a354", "#756bb1"][i % 5]
            entries.append(QgsPalettedRasterRenderer.Class(code, _qcolor(colour), label))
        layer.setRenderer(QgsPalettedRasterRenderer(layer.dataProvider(), 1, entries))
    elif extra.get("stats"):
        stats = extra["stats"]
        low, high = float(stats["min"]), float(stats["max"])
        name = record.source.lower()
        ramp = QgsStyle.defaultStyle().colorRamp("RdYlGn")
        if "dnbr" in name or "change" in name:
            ramp.invert()  # a larger dNBR / loss is worse: red
        shader_fn = QgsColorRampShader(low, high, ramp, QgsColorRampShader.Interpolated)
        shader_fn.classifyColorRamp(5, -1)
        shader = QgsRasterShader()
        shader.setRasterShaderFunction(shader_fn)
        layer.setRenderer(QgsSingleBandPseudoColorRenderer(layer.dataProvider(), 1, shader))
    layer.triggerRepaint()
