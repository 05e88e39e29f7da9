"""Smoke tests in the real QGIS application under Xvfb: the probe inside QGIS writes what it saw."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.real_qgis, pytest.mark.slow]


def run_real_qgis(tmp_path: Path, screenshot: bool = False, **env) -> dict:
    report = tmp_path / "probe.json"
    environ = dict(os.environ, HEADLESS="1", QGIS_PROBE=str(report), GEOFAHAM_PROFILES=str(tmp_path / "profiles"))
    if screenshot:
        environ["SCREENSHOT"] = str(tmp_path / "qgis.png")
    environ.update(env)
    environ.pop("QT_QPA_PLATFORM", None)  # the real GUI on Xvfb, not offscreen
    for inherited in ("QGIS_CUSTOM_CONFIG_PATH", "QGIS_OPTIONS_PATH"):  # set by pytest-qgis for itself
        environ.pop(inherited, None)
    proc = subprocess.Popen(
        [str(ROOT / "scripts" / "run_qgis.sh")],
        env=environ,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        out, _ = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"QGIS did not finish within 180 s:\n{out[-3000:]}")
    assert report.is_file(), f"QGIS exited with {proc.returncode} without a probe report:\n{out[-3000:]}"
    result = json.loads(report.read_text())
    result["returncode"] = proc.returncode
    return result


def test_a_pyenv_or_conda_python_first_on_path_does_not_break_qgis(tmp_path):
    """Started from a shell whose first python3 is another Python (pyenv, conda), QGIS's embedded Python took that
    Python's standard library ('No module named encodings') and QGIS died at start: run_qgis.sh puts the Python
    QGIS was built against first."""
    other = tmp_path / "pyenv" / "versions" / "3.11.9"
    (other / "lib" / "python3.11").mkdir(parents=True)
    (other / "lib" / "python3.11" / "os.py").write_text("")  # the landmark Python's start-up looks for
    (other / "bin").mkdir()
    (other / "bin" / "python3").write_text("#!/bin/sh\nexit 1\n")
    (other / "bin" / "python3").chmod(0o755)
    r = run_real_qgis(tmp_path, PATH=f"{other / 'bin'}:{os.environ['PATH']}")
    assert r["errors"] == [] and r["plugin_loaded"], r
    assert r["returncode"] == 0


EMPTY = {
    "docks": 0,
    "docks_visible": 0,
    "dock_titles": [],
    "actions": [],
    "menus": 0,
    "plugin_menu_entries": [],
    "toolbar_actions": [],
}


def test_plugin_loads_in_real_qgis_and_reload_unload_leave_nothing(tmp_path):
    r = run_real_qgis(tmp_path, screenshot=True)
    assert r["errors"] == []
    assert r["qgis_version"].startswith("3.40")
    assert r["plugin_loaded"] and r["plugin_active"] and r["plugin_class"] == "GeoFahamPlugin"
    loaded = r["loaded"]
    assert loaded["docks"] == 1 and loaded["docks_visible"] == 1 and loaded["dock_titles"] == ["GeoFaham"]
    assert loaded["plugin_menu_entries"] == ["&GeoFaham"] and loaded["toolbar_actions"] == ["GeoFaham chat"]
    # Plugin Reloader: exactly one of everything afterwards, not two
    assert r["reloaded_active"]
    assert r["reloaded"] == loaded
    # unload: nothing of ours left in the main window
    assert r["unload_ok"]
    assert r["unloaded"] == EMPTY
    assert r["returncode"] == 0, "QGIS must exit cleanly"
    png = Path(r["screenshot"])
    assert r["screenshot_saved"] and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from PyQt5.QtGui import QImage

    image = QImage(str(png))
    assert image.width() >= 1200 and image.height() >= 700


def test_real_qgis_without_dependencies_shows_the_install_command(tmp_path):
    # The system Python alone lacks geopandas, openai, pystac-client, ...: what a user sees before setup.
    r = run_real_qgis(tmp_path, GEOFAHAM_NO_VENV="1")
    assert r["errors"] == []
    assert r["plugin_class"] == "MissingDependenciesPlugin"
    (message,) = [m for m in r["message_bar"] if "GeoFaham" in m]
    assert "Python packages are missing" in message and "pip install --user" in message
    assert "openai" in message and "Traceback" not in message
    assert r["loaded"]["docks"] == 0
    assert r["returncode"] == 0


def test_a_question_typed_into_the_dock_is_answered_in_real_qgis(tmp_path):
    # real QGIS, real GDAL/GEOS of QGIS loaded alongside ours; the embedded defaults (this question needs
    # no model call in guided mode)
    r = run_real_qgis(
        tmp_path,
        screenshot=True,
        QUESTION="Which hospitals are within 5 km of the Eaton fire perimeter?",
        GEOFAHAM_SESSIONS=str(tmp_path / "sessions"),
    )
    assert r["errors"] == []
    q = r["question"]
    assert q["status"] == "answered", q["transcript"]
    assert "7 healthcare features within 5,000 m" in q["transcript"]
    assert "AURORA LAS ENCINAS HOSPITAL" in q["transcript"]
    # one group of the run's results (and, when the map context came in, its context group beside it)
    runs = [g for g in q["groups"] if not g.startswith("GeoFaham context — ")]
    assert len(runs) == 1 and runs[0].startswith("GeoFaham — ") and len(q["groups"]) <= 2, q["groups"]
    # the answer on top (the 7 hospitals), then the run's other layers in run order; no name starts with an id
    assert [count for _, count in q["layers"]] == [7, 1, 7]
    assert not [name for name, _ in q["layers"] if name.startswith("a_")], q["layers"]
    # the map shows the answer: only it drawn of the run's layers, the canvas (in the project's EPSG:26911, from the
    # perimeter) around the seven hospitals; its coordinates in metres, not WGS 84 degrees read as metres
    assert q["visible"] == [q["layers"][0][0]] and q["canvas"]["crs"] == "EPSG:26911"
    (xmin, ymin), (xmax, ymax) = (map(float, corner.split(",")) for corner in q["canvas"]["extent"].split(" : "))
    assert 370_000 < xmin < xmax < 430_000 and 3_760_000 < ymin < ymax < 3_800_000, q["canvas"]
    assert r["returncode"] == 0


def test_a_road_access_question_typed_into_the_dock_is_answered_in_real_qgis(tmp_path):
    """The headline kind of question, in the dock of the real application: which schools can still reach the fire
    station by road once the EMSR773 flood cuts the Catarroja network (code plans it; the numbers are checked
    against networkx in tests/test_road_access.py)."""
    r = run_real_qgis(
        tmp_path,
        QUESTION="After the DANA flood, which schools in Catarroja can still reach the fire station by road?",
        GEOFAHAM_SESSIONS=str(tmp_path / "sessions"),
    )
    assert r["errors"] == []
    q = r["question"]
    assert q["status"] == "answered", q["transcript"]
    assert "0 of 15 can still reach it" in q["transcript"] and "13 cut off" in q["transcript"]
    assert "Parc de Bombers de Catarroja" in q["transcript"]
    assert "a cut is a model" in q["transcript"]  # the limits are said in the dock too
    counts = dict(q["layers"])
    assert any(n == 15 for n in counts.values()), counts  # the schools with their status, on the map
    assert r["returncode"] == 0
