"""A one-page situation report of a finished run, as a QGIS print layout (main thread only).

Title, question, date and time, a map of the run's layers with legend, scale bar and north arrow, an
overview map, the key numbers of the structured answer, how it was computed (steps and tools), sources
and licences (from the artifacts' attribution and the layer catalogue), limitations, CRS and a
disclaimer. Exported to PDF and PNG and kept in the project's layouts (editable in the Layout Designer).
Labels go through :func:`tr`, so they follow the UI language.

All of it runs on the main thread (the project, the layer tree and QgsLayoutExporter live there); a ``progress``
callback hears each stage as it begins (:data:`STAGES`: the run's layers, the map context, the map, the legend,
the PDF, the PNG, the project's layouts), which the dock shows as a task in QGIS's task manager.

Headless (the command line's ``ask --report``)::

    python -m geofaham_plugin.ui.report <session>/runs/<run_id>.json out.pdf [--language fr]

starts QGIS without a display (``QgsApplication([], False)``) and writes ``out.pdf`` and ``out.png``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from qgis.core import (
    Qgis,
    QgsCoordinateReferenceSystem,
    QgsLayoutExporter,
    QgsLayoutItemLabel,
    QgsLayoutItemLegend,
    QgsLayoutItemMap,
    QgsLayoutItemMapOverview,
    QgsLayoutItemScaleBar,
    QgsLayoutPoint,
    QgsLayoutSize,
    QgsLegendStyle,
    QgsPrintLayout,
    QgsProject,
    QgsRectangle,
    QgsTextFormat,
    QgsUnitTypes,
)
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtGui import QColor, QFont, QImage

from ..core.errors import GeoFahamError, InputError
from .dock import UNITS, format_number
from .i18n import tr
from .layers import (
    GROUP_PREFIX,
    add_artifact_layer,
    answer_extent,
    answer_layers,
    find_artifact_layer,
    label_answer,
    session_group,
    style_road_access,
)

if TYPE_CHECKING:
    from qgis.core import QgsMapLayer

    from ..core.config import Settings
    from ..core.engines.layers import LayerCatalogue
    from ..core.orchestrator.runlog import RunRecord
    from ..core.store.store import ResponseStore

REPORTS_DIR = "reports"
LAYOUT_PREFIX = "GeoFaham report — "
MAP_KINDS = ("vector", "aoi", "raster")
#: lines of each list the page holds (the page stays one page: labels clip, and the lists are cut with "…")
MAX_STEPS, MAX_SOURCES, MAX_LIMITS, MAX_VALUES = 8, 6, 6, 10

#: the report's stages in the order they run, each with the share of the work done when it begins (percent; the
#: map export to PDF and PNG takes the most time)
STAGES = {"layers": 0.0, "context": 10.0, "map": 25.0, "legend": 35.0, "pdf": 50.0, "png": 75.0, "layouts": 95.0}
#: told each stage as it begins, and the legend's progress layer by layer: (percent, the stage in words)
Progress = Callable[[float, str], None]


def stage_text(stage: str) -> str:
    """A stage of :data:`STAGES` in words (the UI's language)."""
    return {
        "layers": tr("preparing the run's layers"),
        "context": tr("adding the map context"),
        "map": tr("laying out the map"),
        "legend": tr("counting the legend's classes"),
        "pdf": tr("writing the PDF"),
        "png": tr("writing the PNG"),
        "layouts": tr("keeping the layout in the project"),
    }[stage]


def _stage(progress: Progress | None, stage: str, done: float = 0.0) -> None:
    """Tell ``progress`` that ``stage`` began (``done``: the share of it already done, 0 to 1)."""
    if progress is not None:
        stages = list(STAGES)
        following = STAGES[stages[stages.index(stage) + 1]] if stage != stages[-1] else 100.0
        progress(STAGES[stage] + done * (following - STAGES[stage]), stage_text(stage))


@dataclass
class Report:
    layout: QgsPrintLayout
    pdf: Path
    png: Path
    layers: list[QgsMapLayer]
    context: list[QgsMapLayer] = field(default_factory=list)  # the map context under them, top to bottom


class ReportError(InputError):
    """The report could not be made from what was given (no finished run, an unwritable folder ...)."""


# ------------------------------------------------------------------------------------------ contents
def run_layers(record: RunRecord, store: ResponseStore, project: QgsProject, group_name: str) -> list[QgsMapLayer]:
    """The run's map layers (its AOI first, then in run order): those the session already added to the
    project, else loaded from the store into the session's group (headless)."""
    found: list[QgsMapLayer] = []
    for artifact_id in record.artifact_ids():
        if artifact_id not in store or store.get(artifact_id).kind.value not in MAP_KINDS:
            continue
        layer = find_artifact_layer(project, artifact_id)
        if layer is None:
            layer = add_artifact_layer(project, session_group(project, group_name), store.get(artifact_id), store)
        if layer is not None:
            found.append(layer)
    return found


def run_context(
    record: RunRecord,
    store: ResponseStore,
    project: QgsProject,
    group_name: str,
    catalogue: LayerCatalogue | None,
    settings: Settings,
) -> list[QgsMapLayer]:
    """The map context under the run's layers, top to bottom: the session's context group when the dock already
    added it (or is adding it), completed here with what the run's events need (headless: all of it)."""
    from ..core.engines.context import map_context, run_events
    from .context import add_context, context_group, context_layers, make_layers, shown_for

    results = project.layerTreeRoot().findGroup(GROUP_PREFIX + group_name)
    if results is None:
        return []
    extras = [store.get(a).extra for a in record.artifact_ids() if a in store]
    events = run_events(record.facts.event_id if record.facts else None, extras)
    wanted = {str(e) for e in events} | ({""} if settings.basemap_on else set())
    if wanted - shown_for(context_group(project, results)) and catalogue is not None:
        add_context(project, results, make_layers(map_context(catalogue, events, settings)))
    return context_layers(context_group(project, results))


def sources(record: RunRecord, store: ResponseStore, catalogue: LayerCatalogue | None = None) -> list[str]:
    """Each source the run read, once: its attribution and, from the catalogue, its licence."""
    licences: dict[str, str] = {}  # attribution -> licence ("" when unknown), in run order
    for artifact_id in record.artifact_ids():
        if artifact_id not in store:
            continue
        extra = store.get(artifact_id).extra
        attribution = str(extra.get("attribution") or "").strip()
        if not attribution:
            continue
        licence = ""
        layer_id = extra.get("layer_id")
        if catalogue is not None and isinstance(layer_id, str):
            try:
                licence = str(getattr(catalogue.entry(layer_id), "licence", ""))  # a user layer has none
            except GeoFahamError:  # a layer this catalogue does not know
                licence = ""
        licences[attribution] = licences.get(attribution) or licence
    return [a + (f" ({tr('licence')}: {lic})" if lic else "") for a, lic in licences.items()]


def limitations(record: RunRecord, store: ResponseStore) -> list[str]:
    """What the answer does not cover: parts not applied, unasked narrowing, the sources' own limits."""
    lines: list[str] = []
    if record.structured is not None:
        lines += [tr("Not applied: {part}").format(part=part) for part in record.structured.not_applied]
    lines += list(record.unasked_limits)
    for artifact_id in record.artifact_ids():
        if artifact_id in store:
            lines += [str(x) for x in store.get(artifact_id).extra.get("limitations") or []]
    return list(dict.fromkeys(line for line in lines if line.strip()))


def key_numbers(record: RunRecord) -> list[str]:
    """The structured answer's values (label: value unit), its yes/no and its named items."""
    answer = record.structured
    if answer is None:
        return []
    lines = []
    if answer.yes_no is not None:
        lines.append(tr("Answer: yes") if answer.yes_no else tr("Answer: no"))
    for v in answer.values:
        lines.append(f"{v.label}: {format_number(v.value)} {UNITS.get(v.unit, v.unit)}".rstrip())
    for item in answer.items:
        distance = f" — {format_number(item.distance_m)} m" if item.distance_m is not None else ""
        lines.append(f"{item.rank}. {item.name}{distance}")
    return lines


def step_lines(record: RunRecord) -> list[str]:
    return [
        f"{s.step_id}. {s.agent.value}.{s.tool or '?'} — {s.status}" + (f" → {s.artifact_id}" if s.artifact_id else "")
        for s in record.steps
    ]


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cut(lines: list[str], limit: int) -> str:
    shown = lines[:limit] + ([tr("… and {n} more").format(n=len(lines) - limit)] if len(lines) > limit else [])
    return "\n".join(f"• {line}" for line in shown) if shown else "—"


# ------------------------------------------------------------------------------------------- layout
def _format(size: float, bold: bool = False) -> QgsTextFormat:
    fmt = QgsTextFormat()
    font = QFont("Open Sans")
    font.setBold(bold)
    fmt.setFont(font)
    fmt.setSize(size)
    fmt.setSizeUnit(Qgis.RenderUnit.Points)
    fmt.setColor(QColor("#202020"))
    return fmt


def _map_item(
    layout: QgsPrintLayout,
    item_id: str,
    box: tuple[float, float, float, float],
    crs: QgsCoordinateReferenceSystem,
    layers: list[QgsMapLayer],
    context: list[QgsMapLayer] | None = None,
) -> QgsLayoutItemMap:
    """A framed map item at ``box`` (x, y, width, height in mm) showing ``layers``, the run's last (the
    answer) on top, over ``context`` (top to bottom), its layer set kept."""
    item = QgsLayoutItemMap(layout)
    item.setId(item_id)
    layout.addLayoutItem(item)
    x, y, width, height = box
    item.attemptMove(QgsLayoutPoint(x, y, QgsUnitTypes.LayoutMillimeters))
    item.attemptResize(QgsLayoutSize(width, height, QgsUnitTypes.LayoutMillimeters))
    item.setFrameEnabled(True)
    item.setCrs(crs)
    item.setLayers(list(reversed(layers)) + list(context or []))
    item.setKeepLayerSet(True)
    return item


def _label(
    layout: QgsPrintLayout, text: str, x: float, y: float, w: float, h: float, size: float = 7.5, bold: bool = False
) -> QgsLayoutItemLabel:
    label = QgsLayoutItemLabel(layout)
    label.setText(text)
    label.setTextFormat(_format(size, bold))
    label.setVAlign(Qt.AlignTop)
    layout.addLayoutItem(label)
    label.attemptMove(QgsLayoutPoint(x, y, QgsUnitTypes.LayoutMillimeters))
    label.attemptResize(QgsLayoutSize(w, h, QgsUnitTypes.LayoutMillimeters))
    return label


def _count_classes(layer: QgsMapLayer) -> None:
    """Count the features of each legend class now (QGIS counts them in a background task, and an export
    made before it ends shows "[N/A]")."""
    from qgis.core import QgsVectorLayer
    from qgis.PyQt.QtCore import QCoreApplication

    if not isinstance(layer, QgsVectorLayer):
        return
    counter = layer.countSymbolFeatures()
    if counter is not None:
        counter.waitForFinished(30000)
    QCoreApplication.processEvents()  # the layer takes the counts when the task's end is signalled


def build_layout(
    record: RunRecord,
    layers: list[QgsMapLayer],
    project: QgsProject,
    *,
    source_lines: list[str],
    limit_lines: list[str],
    store: ResponseStore,
    context: list[QgsMapLayer] | None = None,
    progress: Progress | None = None,
) -> QgsPrintLayout:
    """The one-page (A4 landscape) situation report of ``record`` over ``layers`` (the last on top); ``progress``
    hears the map and legend stages."""
    _stage(progress, "map")
    layout = QgsPrintLayout(project)
    layout.initializeDefaults()  # one A4 page
    page = layout.pageCollection().page(0)
    page.setPageSize("A4", page.Landscape)
    layout.setName(LAYOUT_PREFIX + record.run_id)
    crs = project.crs() if project.crs().isValid() else (layers[0].crs() if layers else project.crs())
    if not project.crs().isValid() and layers:
        project.setCrs(crs)
    when = (record.finished_at or record.started_at).astimezone(UTC)

    _label(layout, tr("Situation report"), 10, 6, 200, 10, size=16, bold=True)
    _label(
        layout,
        tr("Made {made} · run {run} ({status}), finished {when}").format(
            made=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            run=record.run_id,
            status=record.status,
            when=when.strftime("%Y-%m-%d %H:%M UTC"),
        ),
        10,
        16,
        200,
        5,
        size=7,
    )
    _label(
        layout,
        tr("Question: {question}").format(question=_short(record.question, 160)),
        10,
        22,
        180,
        9,
        size=9,
        bold=True,
    )

    # the map, its north arrow and scale bar
    main = _map_item(layout, "main map", (10, 32, 180, 118), crs, layers, context)
    extent = answer_extent(project, record, store, crs)  # the area asked about and the answer, as on the canvas
    if not extent.isNull():
        main.zoomToExtent(extent)
    arrow = _label(layout, "▲\nN", 181, 34, 8, 10, size=10, bold=True)
    arrow.setHAlign(Qt.AlignHCenter)
    arrow.setId("north arrow")
    scale = QgsLayoutItemScaleBar(layout)
    scale.setLinkedMap(main)
    scale.applyDefaultSettings()
    scale.setStyle("Single Box")
    scale.setNumberOfSegments(3)
    scale.setNumberOfSegmentsLeft(0)
    scale.setUnits(Qgis.DistanceUnit.Kilometers)
    scale.setUnitLabel("km")
    scale.setUnitsPerSegment(1.0)
    scale.applyDefaultSize(Qgis.DistanceUnit.Kilometers)
    scale.setHeight(2.0)
    scale.setTextFormat(_format(7))
    layout.addLayoutItem(scale)
    scale.attemptMove(QgsLayoutPoint(12, 151, QgsUnitTypes.LayoutMillimeters))

    basemap = [c for c in context or [] if c.customProperty("geofaham/context") == "basemap"]
    if basemap:  # the tiles' attribution, on the map itself as the tile licence asks
        credit = _label(layout, str(basemap[0].customProperty("geofaham/credit")), 149, 145.5, 40, 4, size=6)
        credit.setHAlign(Qt.AlignRight)
        credit.setId("basemap attribution")
        credit.setBackgroundEnabled(True)
        credit.setBackgroundColor(QColor(255, 255, 255, 200))

    # overview (locator) map: wider, with the main map's frame on it
    overview = _map_item(layout, "overview map", (195, 6, 92, 48), crs, layers, context)
    if not extent.isNull():
        wide = QgsRectangle(extent)
        wide.scale(4.0)
        overview.zoomToExtent(wide)
    frame = QgsLayoutItemMapOverview(tr("Map extent"), overview)
    frame.setLinkedMap(main)
    overview.overviews().addOverview(frame)

    # legend of the run's layers only
    _stage(progress, "legend")
    legend = QgsLayoutItemLegend(layout)
    legend.setTitle(tr("Legend"))
    legend.setAutoUpdateModel(False)
    legend.setLinkedMap(main)
    legend.setLegendFilterByMapEnabled(True)  # only the classes the map shows
    root = legend.model().rootGroup()
    root.removeAllChildren()
    for counted, layer in enumerate(reversed(layers)):
        node = root.addLayer(layer)
        node.setUseLayerName(False)
        node.setCustomProperty("showFeatureCount", True)  # the count of each class (damage classes)
        if counted:
            _stage(progress, "legend", counted / len(layers))
        _count_classes(layer)
        legend.model().refreshLayerLegend(node)
        name = layer.name()
        node.setName(name if len(name) <= 46 else name[:45] + "…")
    for style, size in (
        (QgsLegendStyle.Title, 9.0),
        (QgsLegendStyle.Group, 7.0),
        (QgsLegendStyle.Subgroup, 7.0),
        (QgsLegendStyle.SymbolLabel, 7.0),
    ):
        legend.rstyle(style).setTextFormat(_format(size, bold=style == QgsLegendStyle.Title))
    for style in (QgsLegendStyle.Symbol, QgsLegendStyle.SymbolLabel):
        legend.rstyle(style).setMargin(QgsLegendStyle.Top, 0.6)
    legend.setSymbolHeight(3.0)
    legend.setSymbolWidth(5.0)
    legend.adjustBoxSize()
    layout.addLayoutItem(legend)
    legend.attemptMove(QgsLayoutPoint(195, 57, QgsUnitTypes.LayoutMillimeters))
    legend.setResizeToContents(False)
    legend.attemptResize(QgsLayoutSize(92, 44, QgsUnitTypes.LayoutMillimeters))
    legend.setFrameEnabled(True)

    numbers = key_numbers(record)
    warning = (
        tr("PARTIAL: not the answer to the question (see Limitations).") + "\n" if record.status == "partial" else ""
    )
    _label(
        layout,
        warning
        + (
            tr("Key numbers") + "\n" + _cut(numbers, MAX_VALUES)
            if numbers
            else tr("Answer") + "\n" + record.answer[:600]
        ),
        195,
        104,
        92,
        46,
        size=8,
    )
    crs_text = f"{crs.authid()} — {crs.description()}" if crs.isValid() else "—"
    _label(layout, tr("How it was computed") + "\n" + _cut(step_lines(record), MAX_STEPS), 10, 162, 92, 34, size=6.5)
    _label(layout, tr("Sources and licences") + "\n" + _cut(source_lines, MAX_SOURCES), 104, 162, 90, 34, size=6.5)
    _label(
        layout,
        tr("Limitations") + "\n" + _cut(limit_lines, MAX_LIMITS) + "\n" + tr("CRS: {crs}").format(crs=crs_text),
        198,
        152,
        89,
        44,
        size=6.5,
    )
    _label(
        layout,
        tr(
            "Produced by GeoFaham from the data named above; numbers are computed, not verified on the ground. "
            "Check them before operational use."
        ),
        10,
        199,
        277,
        6,
        size=6.5,
    )
    return layout


def export(layout: QgsPrintLayout, pdf: Path, png: Path, progress: Progress | None = None) -> None:
    """PDF (text kept as text, so it can be searched and copied) and PNG of the one page; ``progress`` hears
    each begin."""
    _stage(progress, "pdf")
    exporter = QgsLayoutExporter(layout)
    settings = QgsLayoutExporter.PdfExportSettings()
    settings.textRenderFormat = Qgis.TextRenderFormat.AlwaysText
    settings.rasterizeWholeImage = False
    pdf.parent.mkdir(parents=True, exist_ok=True)
    png.parent.mkdir(parents=True, exist_ok=True)
    result = exporter.exportToPdf(str(pdf), settings)
    if result != QgsLayoutExporter.Success:
        raise ReportError(
            f"the report could not be written to {pdf} ({exporter.errorMessage() or result})",
            hint="choose a file in a folder you can write to",
            kind="storage",
        )
    _stage(progress, "png")
    image = QgsLayoutExporter.ImageExportSettings()
    image.dpi = 150
    result = exporter.exportToImage(str(png), image)
    if result != QgsLayoutExporter.Success:
        raise ReportError(
            f"the report image could not be written to {png} ({exporter.errorMessage() or result})",
            hint="choose a file in a folder you can write to",
            kind="storage",
        )


def situation_report(
    record: RunRecord,
    store: ResponseStore,
    *,
    project: QgsProject | None = None,
    pdf: Path | None = None,
    group_name: str = "report",
    catalogue: LayerCatalogue | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> Report:
    """Build, export and keep the report of a finished run. ``pdf`` defaults to
    ``<session>/reports/<run_id>.pdf``; the PNG is written beside it. The layout replaces an earlier
    report of the same run in the project's layouts. ``progress`` hears each stage of :data:`STAGES` as it
    begins (main thread, like all of it)."""
    if record.status not in ("answered", "partial"):
        raise ReportError(
            f"run {record.run_id} has no answer to report ({record.status})",
            hint="make a report of an answered run",
        )
    project = project or QgsProject.instance()
    if catalogue is None:
        catalogue = _catalogue()
    if settings is None:
        from ..core.config import settings_from_env

        settings = settings_from_env()
    _stage(progress, "layers")
    layers = run_layers(record, store, project, group_name)
    answers = answer_layers(project, record, store)
    layers = [layer for layer in layers if layer not in answers] + [layer for layer in layers if layer in answers]
    style_road_access(project, record, store)
    label_answer(project, record, store)
    _stage(progress, "context")
    context = run_context(record, store, project, group_name, catalogue, settings)
    source_lines = sources(record, store, catalogue)
    for layer in context:  # the context's sources after the run's, each once
        credit = layer.serverProperties().attribution()
        if credit and not any(line.startswith(credit.split(" (")[0]) for line in source_lines):
            source_lines.append(credit)
    layout = build_layout(
        record,
        layers,
        project,
        source_lines=source_lines,
        limit_lines=limitations(record, store),
        store=store,
        context=context,
        progress=progress,
    )
    pdf = Path(pdf) if pdf is not None else store.session_dir / REPORTS_DIR / f"{record.run_id}.pdf"
    png = pdf.with_suffix(".png")
    export(layout, pdf, png, progress)
    _stage(progress, "layouts")
    manager = project.layoutManager()
    old = manager.layoutByName(layout.name())
    if old is not None:
        manager.removeLayout(old)
    manager.addLayout(layout)
    return Report(layout, pdf, png, layers, context)


def _catalogue() -> LayerCatalogue | None:
    from ..core.config import settings_from_env
    from ..core.engines.layers import LayerCatalogue

    try:
        return LayerCatalogue(settings_from_env().paths.data_dir)
    except (GeoFahamError, OSError, ValueError):  # no sample data here: the attributions still show
        return None


def is_blank(png: Path) -> bool:
    """True when the image has a single colour (nothing was drawn)."""
    image = QImage(str(png))
    if image.isNull():
        return True
    first = image.pixel(0, 0)
    step = max(1, min(image.width(), image.height()) // 60)
    return all(
        image.pixel(x, y) == first for x in range(0, image.width(), step) for y in range(0, image.height(), step)
    )


# ------------------------------------------------------------------------------------------ headless
def main(argv: list[str] | None = None) -> int:
    """``python -m geofaham_plugin.ui.report RUN_RECORD.json OUT.pdf``: one line and exit code 2 on a
    problem the user can fix; the traceback goes to the command line's log."""
    parser = argparse.ArgumentParser(prog="python -m geofaham_plugin.ui.report", description=__doc__.split("\n")[0])
    parser.add_argument("record", help="the run record: <session>/runs/<run_id>.json")
    parser.add_argument("pdf", help="the report file to write (the PNG is written beside it)")
    parser.add_argument("--language", help="language of the labels (default: the question's)")
    args = parser.parse_args(argv)

    from qgis.core import QgsApplication

    from ..core.cli import report_error
    from ..core.orchestrator.runlog import RunLog
    from ..core.store.store import ResponseStore
    from .i18n import install_translator, remove_translator

    path = Path(args.record)
    if not path.is_file() or path.parent.name != "runs":
        print(
            f"error: no run record {path}; hint: give the run record the ask command printed "
            "(<session>/runs/<run_id>.json)",
            file=sys.stderr,
        )
        return 2
    app = QgsApplication([], False)
    app.initQgis()
    translator = None
    try:
        try:
            record = RunLog(path.parent.parent).load_record(path.stem)
        except (OSError, ValueError) as exc:  # not a run id, no such run, not a run record
            raise InputError(
                f"cannot read the run record {path}: {str(exc).splitlines()[0]}",
                hint="give the run record the ask command printed (<session>/runs/<run_id>.json)",
            ) from exc
        language = args.language or record.language
        translator = install_translator(language) if language != "en" else None
        with ResponseStore(path.parent.parent) as store:
            report = situation_report(record, store, pdf=Path(args.pdf))
        print(f"report: {report.pdf}\nimage: {report.png}")
        return 0
    except Exception as exc:  # noqa: BLE001 - one line, the traceback to the log
        return report_error(exc)
    finally:
        remove_translator(translator)
        QgsProject.instance().clear()
        app.exitQgis()


if __name__ == "__main__":
    sys.exit(main())
