"""The one-page situation report (issue 14): a QGIS print layout of a finished run, exported to PDF and PNG,
kept in the project's layouts; from the dock's "Situation report" link; headless from ``ask --report``; in
the UI's language. Runs are real scripted runs on the sample data (offline); the PDF is read back with
``pdftotext`` / ``pdfinfo`` (poppler-utils)."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import time
import unicodedata

import pytest
from conftest import ROOT
from qgis.core import QgsLayoutItemLegend, QgsLayoutItemMap, QgsLayoutItemScaleBar, QgsProject
from qgis.PyQt.QtCore import QCoreApplication, QUrl
from qgis.PyQt.QtGui import QColor, QImage
from test_session_qgis import close_session

from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.store.store import ResponseStore
from geofaham_plugin.ui.dock import REPORT_SCHEME, ChatDock
from geofaham_plugin.ui.i18n import install_translator, remove_translator
from geofaham_plugin.ui.report import LAYOUT_PREFIX, is_blank, situation_report
from geofaham_plugin.ui.session import Session
from geofaham_plugin.ui.styles import DAMAGE_COLOURS

QUESTION = "How many buildings were destroyed in the Eaton fire?"
DINS = "CAL FIRE Damage Inspection (DINS)"

pytestmark = pytest.mark.skipif(not shutil.which("pdftotext"), reason="pdftotext (poppler-utils) is not installed")


def pdf_text(path):
    """The PDF's text, ligatures ("ﬁ") unfolded; the lines of a layout label joined back with spaces."""
    out = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
    return " ".join(unicodedata.normalize("NFKC", out).split())


def pdf_pages(path):
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    return int(next(line.split()[-1] for line in info.splitlines() if line.startswith("Pages:")))


@pytest.fixture()
def scripted_run(qgis_app, tmp_path, monkeypatch):
    monkeypatch.setenv("GEOFAHAM_OFFLINE", "1")
    store = ResponseStore(tmp_path / "session")
    record = Orchestrator(store, LLM(ScriptedModel({}))).run(QUESTION)
    assert record.status == "answered" and "2,722" in record.answer
    yield record, store
    store.close()
    QgsProject.instance().clear()


def colour_share(png, rect_mm, colour, page_mm=(297.0, 210.0)):
    """Share of sampled pixels inside ``rect_mm`` (x, y, w, h on the page) close to ``colour``."""
    image = QImage(str(png))
    sx, sy = image.width() / page_mm[0], image.height() / page_mm[1]
    x0, y0, w, h = (int(rect_mm[0] * sx), int(rect_mm[1] * sy), int(rect_mm[2] * sx), int(rect_mm[3] * sy))
    target = QColor(colour)
    hits = total = 0
    for x in range(x0, x0 + w, 3):
        for y in range(y0, y0 + h, 3):
            c = QColor(image.pixel(x, y))
            total += 1
            hits += abs(c.red() - target.red()) + abs(c.green() - target.green()) + abs(c.blue() - target.blue()) < 40
    return hits / total


def test_report_of_a_scripted_run_is_one_page_with_the_numbers_sources_and_map(scripted_run):
    record, store = scripted_run
    report = situation_report(record, store, project=QgsProject.instance())

    assert report.pdf == store.session_dir / "reports" / f"{record.run_id}.pdf" and report.png.is_file()
    assert pdf_pages(report.pdf) == 1
    text = pdf_text(report.pdf)
    assert "Situation report" in text and QUESTION in text
    assert "2,722" in text  # the structured answer's value, under "Key numbers"
    assert "Key numbers" in text and "buildings (destroyed) in total: 2,722" in text
    assert DINS in text and "licence: CAL FIRE open data" in text  # attribution + the catalogue's licence
    assert "vector.select_damage" in text and "vector.count" in text  # how it was computed
    assert "early partial snapshot" in text  # the layer's limitation
    assert "CRS: EPSG:4326" in text and "not verified on the ground" in text
    assert "Legend" in text and "km" in text  # legend, scale bar unit
    assert "destroyed [2,722]" in text  # the class and its count in the legend (not "[N/A]")

    # the PNG shows the run's layers: the destroyed buildings' red inside the main map's frame
    assert not is_blank(report.png)
    assert (
        colour_share(report.png, (10, 32, 180, 118), DAMAGE_COLOURS["destroyed"]) > 0.012
    )  # 0.018 with the answer on top

    # kept in the project's layouts (editable in the Layout Designer), with the map of the run's layers
    layout = QgsProject.instance().layoutManager().layoutByName(LAYOUT_PREFIX + record.run_id)
    assert layout is report.layout and layout.pageCollection().pageCount() == 1
    maps = [i for i in layout.items() if isinstance(i, QgsLayoutItemMap)]
    assert len(maps) == 2  # the map and its overview
    ids = {lyr.customProperty("geofaham/artifact_id") for lyr in maps[0].layers()} - {None}
    assert [lyr.customProperty("geofaham/context") for lyr in maps[0].layers()][len(ids) :] == ["towns", "hazard"]
    assert ids == {s.artifact_id for s in record.steps if s.tool in ("load_event_layer", "select_damage")}
    assert any(isinstance(i, QgsLayoutItemLegend) for i in layout.items())
    assert any(isinstance(i, QgsLayoutItemScaleBar) for i in layout.items())

    # a second report of the same run replaces the first in the layouts (no "name already used" failure)
    again = situation_report(record, store, project=QgsProject.instance())
    names = [lay.name() for lay in QgsProject.instance().layoutManager().layouts()]
    assert names.count(LAYOUT_PREFIX + record.run_id) == 1 and again.pdf.is_file()
    assert QgsProject.instance().layoutManager().layoutByName(LAYOUT_PREFIX + record.run_id) is again.layout


def test_a_french_ui_gets_a_french_report(scripted_run, built_translations):
    record, store = scripted_run
    translator = install_translator("fr", built_translations)
    assert translator is not None
    try:
        report = situation_report(record, store, project=QgsProject.instance())
    finally:
        remove_translator(translator)
    text = pdf_text(report.pdf)
    assert "Rapport de situation" in text and "Chiffres clés" in text and "Sources et licences" in text
    assert "Méthode de calcul" in text and "Limites" in text and "Légende" in text
    assert "Key numbers" not in text and "Situation report" not in text
    assert "2,722" in text and pdf_pages(report.pdf) == 1


def test_a_partial_run_says_so_on_the_page(scripted_run):
    record, store = scripted_run
    partial = record.model_copy(update={"status": "partial"})
    text = pdf_text(situation_report(partial, store, project=QgsProject.instance()).pdf)
    assert "PARTIAL: not the answer to the question" in text
    assert "PARTIAL" not in pdf_text(situation_report(record, store, project=QgsProject.instance()).pdf)


def test_a_failed_run_has_no_report(scripted_run):
    from geofaham_plugin.core.errors import user_line
    from geofaham_plugin.ui.report import ReportError

    record, store = scripted_run
    failed = record.model_copy(update={"status": "failed"})
    with pytest.raises(ReportError) as caught:
        situation_report(failed, store, project=QgsProject.instance())
    assert (
        user_line(caught.value)
        == f"run {record.run_id} has no answer to report (failed); hint: make a report of an answered run"
    )
    assert not (store.session_dir / "reports").exists()


def test_the_dock_report_link_of_an_answered_run_writes_the_report(qgis_iface, tmp_path, monkeypatch):
    monkeypatch.setenv("GEOFAHAM_OFFLINE", "1")
    dock = ChatDock(qgis_iface.mainWindow())
    session = Session(
        dock, session_dir=tmp_path / "session", llm_factory=lambda: LLM(ScriptedModel({})), name="report session"
    )
    try:
        record = run_in_dock(session, QUESTION)
        link = f"{REPORT_SCHEME}:{record.run_id}"
        assert any(link in entry for entry in dock.entries())  # the button, kept with the transcript
        assert "Situation report" in dock.transcript_text()

        dock.transcript.anchorClicked.emit(QUrl(link))  # the user clicks it
        pdf = session.store.session_dir / "reports" / f"{record.run_id}.pdf"
        assert pdf.is_file() and pdf.with_suffix(".png").is_file() and pdf_pages(pdf) == 1
        assert "2,722" in pdf_text(pdf)
        assert "Situation report written" in dock.transcript_text()
        assert QgsProject.instance().layoutManager().layoutByName(LAYOUT_PREFIX + record.run_id) is not None
        # the report reuses the layers the session added for the run and its map context (none loaded twice)
        layers = QgsProject.instance().mapLayers().values()
        ids = [
            lyr.customProperty("geofaham/artifact_id") for lyr in layers if lyr.customProperty("geofaham/artifact_id")
        ]
        context = [
            lyr.customProperty("geofaham/context_key") for lyr in layers if lyr.customProperty("geofaham/context")
        ]
        assert len(ids) == len(set(ids)) and len(context) == len(set(context)) == 2  # Eaton: towns, hazard outline

        dock.transcript.anchorClicked.emit(QUrl(f"{REPORT_SCHEME}:r_unknown1"))
        assert "No finished run r_unknown1 in this session." in dock.transcript_text()
    finally:
        close_session(session)


def test_one_report_at_a_time_and_no_question_while_it_is_written(qgis_iface, tmp_path, monkeypatch):
    """The report renders its maps on the main thread while events are processed: a second click on the link
    (or Send) during that time is refused with a line, the dock shows the report as busy, and both end with it."""
    import geofaham_plugin.ui.report as report_module

    monkeypatch.setenv("GEOFAHAM_OFFLINE", "1")
    dock = ChatDock(qgis_iface.mainWindow())
    session = Session(
        dock, session_dir=tmp_path / "session", llm_factory=lambda: LLM(ScriptedModel({})), name="report once"
    )
    real = report_module.situation_report
    during = {}

    def clicked_again_while_writing(*args, **kwargs):
        during["busy"] = session.busy
        during["send"] = dock.send_button.isEnabled()
        during["cancel"] = dock.cancel_button.isEnabled()
        during["status"] = dock.status.text()
        dock.transcript.anchorClicked.emit(QUrl(link))  # the impatient second click
        during["ask"] = session.ask(QUESTION)
        return real(*args, **kwargs)

    try:
        record = run_in_dock(session, QUESTION)
        link = f"{REPORT_SCHEME}:{record.run_id}"
        monkeypatch.setattr(report_module, "situation_report", clicked_again_while_writing)
        dock.transcript.anchorClicked.emit(QUrl(link))
        assert during == {
            "busy": True,
            "send": False,
            "cancel": False,
            "status": "Writing the situation report…",
            "ask": False,
        }
        text = dock.transcript_text()
        assert "A report is being written or a question is running" in text
        assert text.count("Situation report written") == 1
        assert len(list((session.store.session_dir / "reports").glob("*.pdf"))) == 1
        assert not session.busy and dock.send_button.isEnabled()  # free again once it is written
    finally:
        close_session(session)


def run_in_dock(session, question):
    finished = []
    session.runFinished.connect(finished.append)
    assert session.ask(question)
    deadline = time.monotonic() + 180
    while not finished:
        assert time.monotonic() < deadline, "the run did not finish"
        QCoreApplication.processEvents()
        time.sleep(0.01)
    return finished[0]


def test_the_menu_reports_the_last_answer_and_opens_it_in_the_layout_designer(
    plugin_package, qgis_iface, tmp_path, monkeypatch
):
    monkeypatch.setenv("GEOFAHAM_OFFLINE", "1")
    plugin = plugin_package.classFactory(qgis_iface)
    plugin.initGui()
    try:
        (action,) = [a for a in plugin.actions if a.objectName().endswith("Report")]
        action.trigger()  # nothing answered yet
        assert "There is no answered run to report yet." in plugin.dock.transcript_text()

        session_cls = importlib.import_module("geofaham.geofaham_plugin.ui.session").Session
        plugin.session = session_cls(
            plugin.dock, iface=qgis_iface, session_dir=tmp_path / "s", llm_factory=lambda: LLM(ScriptedModel({}))
        )
        record = run_in_dock(plugin.session, "Which hospitals are within 5 km of the Eaton fire perimeter?")
        assert record.status == "answered"
        pdf = plugin.report_last_run()
        assert pdf == tmp_path / "s" / "reports" / f"{record.run_id}.pdf"
        text = pdf_text(pdf)
        assert "HIFLD Open Data" in text  # the hospitals' source
        assert "healthcare features within 5,000 m: 7" in text and "1. AURORA LAS ENCINAS HOSPITAL — 2,090 m" in text
        layout = QgsProject.instance().layoutManager().layoutByName(LAYOUT_PREFIX + record.run_id)
        qgis_iface.openLayoutDesigner.assert_called_with(layout)
    finally:
        plugin.unload()
        QgsProject.instance().clear()


def test_cli_ask_report_writes_the_pdf_without_a_display(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["GEOFAHAM_OFFLINE"] = "1"
    pdf = tmp_path / "out" / "eaton.pdf"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "geofaham_plugin",
            "ask",
            QUESTION,
            "--session",
            str(tmp_path / "s"),
            "--report",
            str(pdf),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert f"report: {pdf}" in out.stdout
    assert pdf_pages(pdf) == 1
    text = pdf_text(pdf)
    assert "2,722" in text and DINS in text and QUESTION in text
    assert pdf.with_suffix(".png").is_file() and not is_blank(pdf.with_suffix(".png"))


def test_cli_report_mistakes_are_one_line_with_a_hint(tmp_path):
    env = dict(os.environ, GEOFAHAM_OFFLINE="1")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "geofaham_plugin",
            "ask",
            QUESTION,
            "--session",
            str(tmp_path / "s"),
            "--report",
            "x.png",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 2
    assert out.stderr.strip() == "error: --report x.png is not a .pdf file; hint: --report out.pdf"
    assert not (tmp_path / "s").exists()  # checked before anything ran

    out = subprocess.run(
        [sys.executable, "-m", "geofaham_plugin.ui.report", str(tmp_path / "runs" / "r_nothere1.json"), "o.pdf"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert out.stderr.startswith("error: no run record") and "; hint: " in out.stderr
