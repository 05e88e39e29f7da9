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
from qgis.core import (
    QgsApplication,
    QgsLayoutItemLegend,
    QgsLayoutItemMap,
    QgsLayoutItemScaleBar,
    QgsProject,
)
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
ARTIFACT = "geofaham/artifact_id"

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


def settle(session, until=lambda: True, seconds=30):
    """Process events until ``until()`` holds and the session's map context loads have ended."""
    deadline = time.monotonic() + seconds
    while not (until() and all(load.done for load in session.context_loads)):
        assert time.monotonic() < deadline, "did not settle"
        QCoreApplication.processEvents()
        time.sleep(0.01)


class TaskWatch:
    """The tasks added to QGIS's task manager while it watches: each one's progress as it was set (with whether
    the dock was busy and Send disabled then) and how it ended."""

    def __init__(self, dock, session):
        self.manager = QgsApplication.taskManager()
        self.dock, self.session = dock, session
        self.tasks = {}  # description -> {"progress": [(value, busy, send)], "ended": [...]}
        self.on_progress = None  # (value) -> None, called while the report is written
        self.manager.taskAdded.connect(self._added)

    def _added(self, task_id):
        task = self.manager.task(task_id)
        seen = self.tasks[task.description()] = {"progress": [], "ended": []}

        def progressed(value):
            seen["progress"].append((value, self.session.busy, self.dock.send_button.isEnabled()))
            if self.on_progress is not None:
                self.on_progress(value)

        task.progressChanged.connect(progressed)
        task.taskCompleted.connect(lambda: seen["ended"].append("completed"))
        task.taskTerminated.connect(lambda: seen["ended"].append("terminated"))

    def close(self):
        self.manager.taskAdded.disconnect(self._added)

    def report(self, run_id):
        (name,) = [d for d in self.tasks if "situation report" in d]
        assert run_id in name
        return self.tasks[name]


def test_a_report_is_a_task_in_the_task_manager_with_its_stages_progress(qgis_iface, tmp_path, monkeypatch):
    """The report is written on the main thread (the layout export must stay there) and shown in QGIS's task
    manager: its progress rises through the report's stages to 100 while the dock is busy, then it completes and
    leaves the task manager; a second click during it is refused and starts no second task."""
    monkeypatch.setenv("GEOFAHAM_OFFLINE", "1")
    dock = ChatDock(qgis_iface.mainWindow())
    session = Session(
        dock, session_dir=tmp_path / "session", llm_factory=lambda: LLM(ScriptedModel({})), name="report task"
    )
    watch = TaskWatch(dock, session)
    try:
        record = run_in_dock(session, QUESTION)
        settle(session)  # the map context of the answer loaded: no other task is left
        assert QgsApplication.taskManager().countActiveTasks() == 0
        link = f"{REPORT_SCHEME}:{record.run_id}"
        statuses = []

        def during(value):
            statuses.append(dock.status.text())
            if 40 <= value < 100 and not any("being written" in e for e in dock.entries()):
                dock.transcript.anchorClicked.emit(QUrl(link))  # the impatient second click, mid-report

        watch.on_progress = during
        dock.transcript.anchorClicked.emit(QUrl(link))
        watch.on_progress = None
        settle(session, lambda: watch.report(record.run_id)["ended"])

        seen = watch.report(record.run_id)
        assert seen["ended"] == ["completed"]
        values = [v for v, _, _ in seen["progress"]]
        assert values[-1] == 100
        while_written = [(v, busy, send) for v, busy, send in seen["progress"] if v < 100]
        assert all(busy and not send for _, busy, send in while_written)  # busy, Send disabled, all along
        stages = [v for v, _, _ in while_written]
        assert stages == sorted(stages) and len(set(stages)) >= 5  # layers, context, map, legend, PDF, PNG ...
        assert {10, 25, 50, 75, 95} <= set(stages)  # the context, the map, the PDF, the PNG, the layouts
        assert "Writing the situation report: writing the PDF…" in statuses
        assert QgsApplication.taskManager().countActiveTasks() == 0  # gone once completed

        # one report, one task: the second click was refused with its line
        assert [d for d in watch.tasks if "situation report" in d] == [
            f"GeoFaham: situation report of run {record.run_id}"
        ]
        text = dock.transcript_text()
        assert text.count("A report is being written or a question is running") == 1
        assert text.count("Situation report written") == 1
        assert not session.busy and dock.send_button.isEnabled()
        assert "2,722" in pdf_text(session.store.session_dir / "reports" / f"{record.run_id}.pdf")
    finally:
        watch.close()
        close_session(session)


def test_a_failed_report_ends_its_task_and_is_one_line(qgis_iface, tmp_path, monkeypatch):
    import geofaham_plugin.ui.report as report_module

    monkeypatch.setenv("GEOFAHAM_OFFLINE", "1")
    dock = ChatDock(qgis_iface.mainWindow())
    session = Session(
        dock, session_dir=tmp_path / "session", llm_factory=lambda: LLM(ScriptedModel({})), name="report fails"
    )
    watch = TaskWatch(dock, session)

    def fails(*args, progress=None, **kwargs):
        progress(10.0, "adding the map context")
        raise RuntimeError("the printer caught fire")

    try:
        record = run_in_dock(session, QUESTION)
        settle(session)
        monkeypatch.setattr(report_module, "situation_report", fails)
        before = len(dock.entries())
        assert session.make_report(record.run_id) is None
        settle(session, lambda: watch.report(record.run_id)["ended"])

        seen = watch.report(record.run_id)
        assert seen["ended"] == ["terminated"]  # not left running in the task manager
        assert [busy for _, busy, _ in seen["progress"]] == [True]
        assert QgsApplication.taskManager().countActiveTasks() == 0
        assert session.report_task is None
        added = dock.entries()[before:]
        assert len(added) == 1 and "The situation report failed: the printer caught fire." in added[0]
        assert not session.busy and dock.send_button.isEnabled() and dock.status.text() == ""
    finally:
        watch.close()
        close_session(session)


def test_a_report_counts_its_legend_on_a_one_thread_pool(qgis_iface, tmp_path, monkeypatch):
    """The report's task only waits while the main thread works; the legend's class counts are a task of their
    own: on a machine whose thread pool holds one thread the report still counts them (no 30 s wait, no N/A)."""
    monkeypatch.setenv("GEOFAHAM_OFFLINE", "1")
    dock = ChatDock(qgis_iface.mainWindow())
    session = Session(
        dock, session_dir=tmp_path / "session", llm_factory=lambda: LLM(ScriptedModel({})), name="one thread"
    )
    pool = QgsApplication.taskManager().threadPool()
    threads = pool.maxThreadCount()
    try:
        record = run_in_dock(session, QUESTION)
        settle(session)
        project = QgsProject.instance()  # the run's layers removed by the user: the report adds and counts them anew
        project.removeMapLayers([i for i, lyr in project.mapLayers().items() if lyr.customProperty(ARTIFACT)])
        assert not [lyr for lyr in project.mapLayers().values() if lyr.customProperty(ARTIFACT)]
        pool.setMaxThreadCount(1)
        started = time.monotonic()
        report = session.make_report(record.run_id)
        assert report is not None and time.monotonic() - started < 25
        assert "destroyed [2,722]" in pdf_text(report.pdf)
        settle(session, lambda: QgsApplication.taskManager().countActiveTasks() == 0)
    finally:
        pool.setMaxThreadCount(threads)
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
