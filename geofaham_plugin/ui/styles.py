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
    from qgis.core import QgsMapLayer, QgsRasterLayer, QgsVectorLayer
    from qgis.PyQt.QtGui import QColor

    from ..core.engines.context import ContextLayer
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


#: damage without a grade (binary labels: "Damaged Building") and without any class ("Inaccessible")
UNGRADED_COLOURS = {"damaged": "#7a0177", "unknown": "#bdbdbd"}
UNGRADED_LABELS = {"damaged": "damaged (grade unknown)", "unknown": "not assessed"}


def style_for(layer: QgsVectorLayer, record: ArtifactRecord) -> None:
    if not layer.isSpatial():  # no geometry type at all (an empty file nothing says the geometry of): no symbol
        return
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
    elif record.extra.get("style") == "cut_roads" and geometry == QgsWkbTypes.LineGeometry:
        from qgis.core import QgsLineSymbol

        layer.setRenderer(
            QgsSingleSymbolRenderer(
                QgsLineSymbol.createSimple({"line_color": CUT_RED, "line_width": "0.9", "capstyle": "round"})
            )
        )
    elif "damage_class" in fields:
        colours = dict(DAMAGE_COLOURS)
        classified = "damage_class"
        if "is_damaged" in fields:  # a class for buildings without a grade too (binary labels): never left undrawn
            colours.update(UNGRADED_COLOURS)
            classified = f"CASE WHEN \"damage_class\" IS NOT NULL THEN \"damage_class\" WHEN {DAMAGED} THEN 'damaged' ELSE 'unknown' END"
        present = damage_classes_present(layer)
        categories = []
        for value, colour in colours.items():
            if present is not None and value not in present:  # the legend lists the classes the layer holds
                continue
            symbol = _point_symbol(layer, colour) or QgsSymbol.defaultSymbol(geometry)
            symbol.setColor(_qcolor(colour))
            categories.append(QgsRendererCategory(value, symbol, UNGRADED_LABELS.get(value, value)))
        layer.setRenderer(QgsCategorizedSymbolRenderer(classified, categories))
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


#: a building without a grade that the labels say is damaged (binary labels)
DAMAGED = "lower(to_string(\"is_damaged\")) IN ('true', '1')"


#: a damage layer with more features than this lists every class in its legend: finding those it holds reads every
#: feature (a million: 0.4 s of the main thread, where a layer is styled)
LEGEND_SCAN_MAX = 20_000


def damage_classes_present(layer: QgsVectorLayer) -> set[str] | None:
    """The damage classes a layer holds: the distinct grades (the provider's own query), and for buildings without
    one, 'damaged' or 'unknown' when any is (a search that stops at the first); None for a layer of more than
    LEGEND_SCAN_MAX features (not looked at)."""
    from qgis.core import QgsFeatureRequest

    if layer.featureCount() > LEGEND_SCAN_MAX:
        return None
    grades = {str(v) for v in layer.uniqueValues(layer.fields().indexOf("damage_class")) if _known(v)}
    if "is_damaged" not in [f.name() for f in layer.fields()]:
        return grades
    for value, test in (("damaged", DAMAGED), ("unknown", f"NOT coalesce({DAMAGED}, false)")):
        request = QgsFeatureRequest().setFilterExpression(f'"damage_class" IS NULL AND ({test})').setLimit(1)
        request.setFlags(QgsFeatureRequest.NoGeometry)
        if next(layer.getFeatures(request), None) is not None:
            grades.add(value)
    return grades


def _known(value: object) -> bool:
    """Not NULL (QGIS gives NULL as a null QVariant or None)."""
    from qgis.PyQt.QtCore import QVariant

    return value is not None and not (isinstance(value, QVariant) and value.isNull())


def label_facilities(layer: QgsVectorLayer, record: ArtifactRecord) -> bool:
    """Label the named facilities of an answer's layer (dark bold names with a white halo); False when it is
    no layer of named facilities (see :func:`facility_name_field`)."""
    name = facility_name_field(layer, record)
    if name is None:
        return False
    label_layer(layer, name, size=7.5, colour="#202020", bold=True, buffer=0.8, priority=10)
    layer.triggerRepaint()
    return True


#: a layer of named features with at most this many is labelled (facilities, not a town's every building)
MAX_LABELLED = 300
CUT_RED = "#d7191c"


def facility_name_field(layer: QgsVectorLayer, record: ArtifactRecord) -> str | None:
    """The name field of a layer of named facilities (points or polygons of features, not damage, hazard, AOI or
    roads), when it has at most MAX_LABELLED features; else None."""
    if record.kind.value != "vector" or record.extra.get("role") == "hazard":
        return None
    fields = [f.name() for f in layer.fields()]
    if "damage_class" in fields or layer.geometryType() not in (QgsWkbTypes.PointGeometry, QgsWkbTypes.PolygonGeometry):
        return None
    declared = record.extra.get("name_field")
    name = declared if isinstance(declared, str) and declared in fields else ("name" if "name" in fields else None)
    return name if name is not None and 0 < layer.featureCount() <= MAX_LABELLED else None


def highlight_cut_off(layer: QgsVectorLayer, field: str, names: list[str]) -> None:
    """Facilities that lost road access (``names`` in ``field``) drawn as large red markers with a dark ring over
    the layer's own symbol; the others keep it."""
    from qgis.core import QgsRuleBasedRenderer

    if not names or field not in [f.name() for f in layer.fields()]:
        return
    base = layer.renderer().clone() if layer.renderer() is not None else None
    base_symbol = (
        base.symbol() if isinstance(base, QgsSingleSymbolRenderer) else QgsSymbol.defaultSymbol(layer.geometryType())
    )
    quoted = ", ".join("'" + n.replace("'", "''") + "'" for n in names)
    test = f'"{field}" IN ({quoted})'
    root = QgsRuleBasedRenderer.Rule(None)
    if layer.geometryType() == QgsWkbTypes.PointGeometry:
        cut: QgsSymbol = QgsMarkerSymbol.createSimple(
            {"name": "circle", "color": CUT_RED, "outline_color": "40,0,0", "outline_width": "0.6", "size": "5"}
        )
    else:
        cut = QgsFillSymbol.createSimple({"color": CUT_RED, "outline_color": "40,0,0", "outline_width": "0.6"})
    root.appendChild(QgsRuleBasedRenderer.Rule(base_symbol.clone(), 0, 0, f"NOT ({test})", "not cut off"))
    root.appendChild(QgsRuleBasedRenderer.Rule(cut, 0, 0, test, "cut off by the hazard"))
    layer.setRenderer(QgsRuleBasedRenderer(root))
    layer.setCustomProperty("geofaham/cut_off", names)
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
    elif extra.get("raster_kind") in ("population", "mask") and layer.bandCount() == 1:
        _style_loaded(layer, str(extra["raster_kind"]))
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


def _style_loaded(layer: QgsRasterLayer, kind: str) -> None:
    """A raster of yours as loaded: a population grid on a white-to-red ramp up to a high percentile of a sample of
    its pixels (a 10980² grid is sampled, not read); a mask as inside (orange) and outside (transparent)."""
    from qgis.core import (
        QgsColorRampShader,
        QgsPalettedRasterRenderer,
        QgsRasterBandStats,
        QgsRasterShader,
        QgsSingleBandPseudoColorRenderer,
        QgsStyle,
    )

    provider = layer.dataProvider()
    if kind == "mask":
        entries = [QgsPalettedRasterRenderer.Class(1, _qcolor("#e6550d"), "inside")]
        layer.setRenderer(QgsPalettedRasterRenderer(provider, 1, entries))
        return
    stats = provider.bandStatistics(1, QgsRasterBandStats.Max | QgsRasterBandStats.Mean, layer.extent(), 250_000)
    high = min(float(stats.maximumValue), 4 * float(stats.mean)) if stats.mean > 0 else float(stats.maximumValue)
    ramp = QgsStyle.defaultStyle().colorRamp("Reds")
    shader_fn = QgsColorRampShader(0.0, max(high, 1e-9), ramp, QgsColorRampShader.Interpolated)
    shader_fn.classifyColorRamp(5, -1)
    shader = QgsRasterShader()
    shader.setRasterShaderFunction(shader_fn)
    layer.setRenderer(QgsSingleBandPseudoColorRenderer(provider, 1, shader))


# ------------------------------------------------------------------------------------------- map context
CONTEXT_GREY = "#9a9a9a"  # roads
CONTEXT_LABEL = "#5a5a5a"  # place names
WATER_FILL = "#d4e6f5"
WATER_LINE = "#9ec5e8"
#: roads drawn a little wider (mm); every other road 0.2 mm
MAJOR_ROADS = ("motorway", "trunk", "primary", "secondary", "motorway_link", "trunk_link", "primary_link")


def label_layer(
    layer: QgsVectorLayer,
    field: str,
    *,
    size: float = 7.0,
    colour: str = CONTEXT_LABEL,
    bold: bool = False,
    italic: bool = False,
    buffer: float = 0.6,
    priority: int = 5,
) -> None:
    """Label ``layer`` with ``field``: small text with a white halo, placed around points, never overlapping
    (``priority`` 0-10: which label wins a place another wants)."""
    from qgis.core import (
        Qgis,
        QgsPalLayerSettings,
        QgsTextBufferSettings,
        QgsTextFormat,
        QgsVectorLayerSimpleLabeling,
    )
    from qgis.PyQt.QtGui import QFont

    fmt = QgsTextFormat()
    font = QFont("Open Sans")
    font.setBold(bold)
    font.setItalic(italic)
    fmt.setFont(font)
    fmt.setSize(size)
    fmt.setSizeUnit(Qgis.RenderUnit.Points)
    fmt.setColor(_qcolor(colour))
    halo = QgsTextBufferSettings()
    halo.setEnabled(True)
    halo.setSize(buffer)
    halo.setColor(_qcolor("#ffffff"))
    fmt.setBuffer(halo)
    settings = QgsPalLayerSettings()
    settings.fieldName = field
    settings.setFormat(fmt)
    settings.priority = priority
    if layer.geometryType() == QgsWkbTypes.PointGeometry:
        settings.placement = Qgis.LabelPlacement.OrderedPositionsAroundPoint
        settings.dist = 0.8
    elif layer.geometryType() == QgsWkbTypes.PolygonGeometry:
        settings.placement = Qgis.LabelPlacement.Horizontal  # level text, not along the outline
    layer.setLabeling(QgsVectorLayerSimpleLabeling(settings))
    layer.setLabelsEnabled(True)


def warm_up_labels() -> None:
    """Make one label format now: the first in a process loads the font database (about 0.1 s), which a session
    does when it starts rather than when its first answer arrives. QGIS itself has usually done it already."""
    from qgis.core import QgsVectorLayer

    label_layer(QgsVectorLayer("Point?field=name:string", "warm-up", "memory"), "name")


def style_context(layer: QgsMapLayer, context: ContextLayer) -> None:
    """The quiet style of a context layer: pale blue water, thin grey roads, small grey labels, outlines only."""
    from qgis.core import QgsLineSymbol, QgsProperty, QgsSymbolLayer, QgsVectorLayer

    if not isinstance(layer, QgsVectorLayer):
        layer.setOpacity(0.75 if context.kind == "basemap" else 1.0)  # the basemap, a little faded
        return
    kind = context.kind
    symbol: QgsSymbol
    if kind == "water_areas":
        symbol = QgsFillSymbol.createSimple({"color": WATER_FILL, "outline_color": WATER_LINE, "outline_width": "0.1"})
    elif kind == "water":
        symbol = QgsLineSymbol.createSimple({"line_color": WATER_LINE, "line_width": "0.3"})
    elif kind == "roads":
        symbol = QgsLineSymbol.createSimple({"line_color": CONTEXT_GREY, "line_width": "0.2", "capstyle": "round"})
        major = ", ".join(f"'{c}'" for c in MAJOR_ROADS)
        symbol.symbolLayer(0).setDataDefinedProperty(
            QgsSymbolLayer.PropertyStrokeWidth,
            QgsProperty.fromExpression(f'CASE WHEN "highway" IN ({major}) THEN 0.45 ELSE 0.2 END'),
        )
    elif kind == "area":
        symbol = QgsFillSymbol.createSimple(
            {"color": "0,0,0,0", "outline_color": "120,120,120", "outline_width": "0.35", "outline_style": "dash"}
        )
    elif kind == "hazard":
        symbol = QgsFillSymbol.createSimple(
            {"color": "0,0,0,0", "outline_color": "150,90,90", "outline_width": "0.3", "outline_style": "dot"}
        )
    else:  # places, towns: a small grey dot under a small grey name
        symbol = QgsMarkerSymbol.createSimple(
            {"name": "circle", "color": "150,150,150", "outline_style": "no", "size": "1.0"}
        )
        label_layer(
            layer, context.label or "name", size=6.5 if kind == "places" else 7.5, italic=kind == "places", priority=2
        )
    layer.setRenderer(QgsSingleSymbolRenderer(symbol))
