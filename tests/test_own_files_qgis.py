"""Files as partners send them, loaded in QGIS and asked about from the dock (issue 17): a CSV whose geometry
is a `wkt_geom` column (QGIS's delimited-text provider) and a KML of shelters with ExtendedData, answered end to
end in guided mode with no model call. Expected values are computed here from the raw points with pyproj."""

from __future__ import annotations

import geopandas as gpd
import pytest
from qgis.core import QgsProject, QgsVectorLayer
from qgis.PyQt.QtCore import QCoreApplication, QEvent
from shapely.geometry import Point
from test_session_qgis import wait_for

from geofaham_plugin.core.engines.layers import data_dir
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.ui.dock import ChatDock
from geofaham_plugin.ui.session import Session

CLINICS = [
    ("Altadena clinic", 12, -118.14, 34.19),
    ("Pasadena clinic", 30, -118.13, 34.15),
    ("Far clinic", 5, -117.0, 34.0),
]
SHELTERS = [
    ("Eliot school gym", -118.15, 34.185),
    ("Church hall", -118.05, 34.16),
    ("Pomona fairground", -117.76, 34.08),
]


@pytest.fixture()
def files(tmp_path):
    csv = tmp_path / "field_clinics.csv"
    csv.write_text(
        "name,beds,wkt_geom\n" + "".join(f'"{n}",{b},"POINT ({x} {y})"\n' for n, b, x, y in CLINICS), encoding="utf-8"
    )
    placemarks = "".join(
        f"<Placemark><name>{n}</name><ExtendedData><Data name='opened'><value>2025-01-0{i + 8}</value></Data>"
        f"</ExtendedData><Point><coordinates>{x},{y}</coordinates></Point></Placemark>"
        for i, (n, x, y) in enumerate(SHELTERS)
    )
    kml = tmp_path / "shelters.kml"
    kml.write_text(
        f'<?xml version="1.0" encoding="UTF-8"?><kml xmlns="http://www.opengis.net/kml/2.2"><Document>{placemarks}'
        "</Document></kml>",
        encoding="utf-8",
    )
    return csv, kml


@pytest.fixture()
def session(qgis_iface, tmp_path, files, monkeypatch):
    monkeypatch.delenv("GEOFAHAM_LLM_BASE_URL", raising=False)  # the embedded default: guided planning
    monkeypatch.setenv("GEOFAHAM_OFFLINE", "1")
    csv, kml = files
    project = QgsProject.instance()
    clinics = QgsVectorLayer(f"file://{csv}?type=csv&wktField=wkt_geom&crs=EPSG:4326", "field clinics", "delimitedtext")
    shelters = QgsVectorLayer(str(kml), "shelters", "ogr")
    assert clinics.isValid() and clinics.featureCount() == 3 and shelters.isValid() and shelters.featureCount() == 3
    project.addMapLayers([clinics, shelters])
    dock = ChatDock(qgis_iface.mainWindow())
    s = Session(dock, session_dir=tmp_path / "session", llm_factory=lambda: LLM(ScriptedModel({})), name="files")
    dock.questionSubmitted.connect(s.ask)
    yield s
    s.close()
    project.clear()
    dock.setParent(None)
    dock.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)


def ask(session: Session, question: str):
    finished = []
    session.runFinished.connect(finished.append)
    session.dock.input.setPlainText(question)
    session.dock.send_button.click()
    wait_for(lambda: finished)
    session.runFinished.disconnect(finished.append)
    return finished[0]


def test_a_csv_with_wkt_and_a_kml_loaded_in_qgis_are_answered_from_the_dock(session):
    beds = ask(session, "How many beds do my field clinics have in total?")
    assert beds is not None and beds.status == "answered", beds and beds.answer
    assert [v.value for v in beds.structured.totals()] == [float(sum(b for _, b, _, _ in CLINICS))]

    perimeter = gpd.read_file(data_dir() / "eaton-2025/eaton_adjusted_fire_perimeter.geojson").to_crs(32611)
    points = gpd.GeoDataFrame(
        {"name": [n for n, _, _ in SHELTERS]}, geometry=[Point(x, y) for _, x, y in SHELTERS], crs=4326
    ).to_crs(32611)
    near = sorted(points.loc[points.distance(perimeter.union_all()) <= 2000, "name"])
    assert 0 < len(near) < len(SHELTERS)  # the distance decides
    shelters = ask(session, "Which of my shelters are within 2 km of the Eaton fire perimeter?")
    assert shelters is not None and shelters.status == "answered", shelters and shelters.answer
    assert shelters.facts.layers == ["user:shelters"]
    assert sorted(i.name for i in shelters.structured.items) == near
    assert "Pomona fairground" not in session.dock.transcript_text()
