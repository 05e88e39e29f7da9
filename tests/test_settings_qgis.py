"""Settings: endpoints per role, the connection test, and keys only through QGIS's auth manager."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from qgis.core import QgsApplication, QgsAuthMethodConfig, QgsProject, QgsSettings
from qgis.PyQt.QtWidgets import QTabWidget

from geofaham_plugin.core.domain.names import Role
from geofaham_plugin.ui.settings import SettingsDialog, settings_from_qgis

SECRET = "sk-test-0123456789abcdef"


@pytest.fixture()
def authcfg():
    manager = QgsApplication.authManager()
    if not manager.masterPasswordIsSet():
        manager.setMasterPassword("geofaham-test", True)
    config = QgsAuthMethodConfig("APIHeader")
    config.setName("geofaham llm")
    config.setConfig("Authorization", f"Bearer {SECRET}")
    ok, stored = manager.storeAuthenticationConfig(config)
    assert ok
    yield stored.id()
    manager.removeAuthenticationConfig(stored.id())


@pytest.fixture(autouse=True)
def clean_settings():
    yield
    QgsSettings().remove("geofaham")


def test_remote_endpoint_with_key_from_the_auth_manager(qgis_iface, mock_openai, authcfg, tmp_path):
    mock_openai.content = '{"ok": true}'
    server = mock_openai.base_url
    dialog = SettingsDialog(qgis_iface.mainWindow())
    dialog.embedded.setChecked(False)
    url, model, auth = dialog.role_fields[""]
    url.setText(server)
    model.setText("qwen2.5-32b-instruct")
    auth.setConfigId(authcfg)
    planner_url, planner_model, _ = dialog.role_fields["planner"]
    planner_model.setText("gpt-4.1")
    assert dialog.test_connection(), dialog.test_result.text()
    assert "Connected to gpt-4.1" in dialog.test_result.text()
    assert (
        mock_openai.requests[-1]["auth"] == f"Bearer {SECRET}"
        and mock_openai.requests[-1]["body"]["model"] == "gpt-4.1"
    )

    settings = settings_from_qgis({})
    assert (
        settings.endpoint(Role.vector).base_url == server
        and settings.endpoint(Role.vector).model == "qwen2.5-32b-instruct"
    )
    assert settings.endpoint(Role.planner).api_key.get_secret_value() == SECRET
    # the key is nowhere on disk but in QGIS's encrypted auth database
    QgsSettings().sync()
    settings_file = Path(QgsSettings().fileName()).read_text(encoding="utf-8")
    assert SECRET not in settings_file
    assert authcfg in settings_file
    project = tmp_path / "p.qgs"
    QgsProject.instance().write(str(project))
    assert SECRET not in project.read_text(encoding="utf-8")
    assert SECRET not in json.dumps(settings.describe())
    QgsProject.instance().clear()


def test_connection_failure_is_reported_not_raised(qgis_iface, real_models_allowed):
    dialog = SettingsDialog(qgis_iface.mainWindow())
    dialog.embedded.setChecked(False)
    dialog.role_fields[""][0].setText("http://127.0.0.1:9/v1")  # nothing listens there
    dialog.role_fields[""][1].setText("m")
    assert not dialog.test_connection()
    assert dialog.test_result.text().startswith("Connection failed")


def test_embedded_default_reports_the_model_file(qgis_iface):
    dialog = SettingsDialog(qgis_iface.mainWindow())
    assert dialog.embedded.isChecked()
    assert settings_from_qgis({}).endpoint(Role.planner).embedded
    assert dialog.test_connection() and "Embedded model ready" in dialog.test_result.text()


def test_qgis_proxy_settings_reach_the_core_http_clients():
    from geofaham_plugin.ui.settings import apply_qgis_proxy

    s = QgsSettings()
    s.setValue("proxy/proxyEnabled", True)
    s.setValue("proxy/proxyHost", "proxy.example.org")
    s.setValue("proxy/proxyPort", "3128")
    s.setValue("proxy/proxyUser", "aid worker")
    s.setValue("proxy/proxyPassword", "p@ss")
    try:
        env = {}
        assert apply_qgis_proxy(env) == "http://aid%20worker:p%40ss@proxy.example.org:3128"
        assert env["HTTPS_PROXY"] == env["HTTP_PROXY"] and "127.0.0.1" in env["NO_PROXY"]
        assert apply_qgis_proxy({"HTTPS_PROXY": "http://other:8080"}) is None  # the environment wins
    finally:
        s.remove("proxy")


# ------------------------------------------------------------- offline, endpoints, data folder, sandbox
def test_dialog_round_trip_through_qgssettings_to_the_settings_object(qgis_iface, tmp_path, monkeypatch):
    monkeypatch.setenv("GEOFAHAM_OFFLINE", "0")
    for name in (
        "GEOFAHAM_STAC_URL",
        "GEOFAHAM_OVERPASS_URL",
        "GEOFAHAM_NOMINATIM_URL",
        "GEOFAHAM_DATA_DIR",
        "GEOFAHAM_SANDBOX_CPU_S",
        "GEOFAHAM_SANDBOX_MEMORY_MB",
    ):
        monkeypatch.delenv(name, raising=False)
    dialog = SettingsDialog(qgis_iface.mainWindow())
    # a fresh dialog shows what the environment gives
    assert not dialog.offline.isChecked()
    assert (dialog.sandbox_cpu.value(), dialog.sandbox_memory.value()) == (120, 3072)
    assert dialog.stac.text() == "" and dialog.stac.placeholderText().startswith("https://earth-search")
    dialog.offline.setChecked(True)
    dialog.stac.setText("http://stac.example.org/v1")
    dialog.overpass.setText("http://overpass.example.org/api/interpreter")
    dialog.nominatim.setText("http://nominatim.example.org/search")
    dialog.data_dir.setFilePath(str(tmp_path))
    dialog.sandbox_cpu.setValue(30)
    dialog.sandbox_memory.setValue(1024)
    dialog.save()

    s = QgsSettings()
    assert s.value("geofaham/network/offline", type=bool) is True
    assert s.value("geofaham/sandbox/cpu_s", type=int) == 30 and s.value("geofaham/sandbox/memory_mb", type=int) == 1024
    settings = settings_from_qgis()
    assert settings.network.offline
    assert settings.stac.url == "http://stac.example.org/v1"
    assert settings.overpass.url == "http://overpass.example.org/api/interpreter"
    assert settings.nominatim.url == "http://nominatim.example.org/search"
    assert settings.paths.data_dir == tmp_path
    assert (settings.sandbox.cpu_s, settings.sandbox.memory_mb) == (30, 1024)

    again = SettingsDialog(qgis_iface.mainWindow())  # reopened: shows what was saved
    assert again.offline.isChecked() and again.sandbox_cpu.value() == 30
    assert again.stac.text() == "http://stac.example.org/v1" and again.data_dir.filePath() == str(tmp_path)
    # back to the environment's values: the keys go, and the environment applies again
    again.offline.setChecked(False)
    again.sandbox_cpu.setValue(120)
    again.stac.setText("")
    again.save()
    assert not s.contains("geofaham/network/offline") and not s.contains("geofaham/sandbox/cpu_s")
    assert not s.contains("geofaham/stac/url") and s.contains("geofaham/sandbox/memory_mb")
    monkeypatch.setenv("GEOFAHAM_OFFLINE", "yes")
    monkeypatch.setenv("GEOFAHAM_SANDBOX_CPU_S", "45")
    settings = settings_from_qgis()
    assert settings.network.offline and settings.sandbox.cpu_s == 45 and settings.sandbox.memory_mb == 1024


def test_offline_and_sandbox_limits_set_in_qgis_reach_the_engines(qgis_iface, store, monkeypatch):
    """The settings a session builds (the dialog on top of an online environment) stop Overpass,
    Nominatim and STAC requests, and bound the Python sandbox."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import geopandas as gpd
    from shapely.geometry import box

    from geofaham_plugin.core.agents import TOOLS, ToolContext
    from geofaham_plugin.core.aoi import register_aoi
    from geofaham_plugin.core.engines.geocode import geocode
    from geofaham_plugin.core.engines.layers import default_catalogue
    from geofaham_plugin.core.errors import ToolFailed

    class Recorder(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):  # noqa: N802
            self.server.requests.append(self.path)
            self.send_response(500)
            self.end_headers()

        do_POST = do_GET  # noqa: N815

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    httpd.requests = []
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        monkeypatch.setenv("GEOFAHAM_OFFLINE", "false")  # the environment says online
        dialog = SettingsDialog(qgis_iface.mainWindow())
        dialog.offline.setChecked(True)
        dialog.overpass.setText(url + "/api/interpreter")
        dialog.nominatim.setText(url + "/search")
        dialog.stac.setText(url + "/stac")
        dialog.sandbox_cpu.setValue(9)
        dialog.sandbox_memory.setValue(1280)
        dialog.save()
        ctx = ToolContext(store=store, layers=default_catalogue(), settings=settings_from_qgis())
        aoi = register_aoi(
            store, gpd.GeoDataFrame(geometry=[box(36.80, -1.30, 36.84, -1.26)], crs=4326), name="Nairobi"
        )
        with pytest.raises(ToolFailed, match="offline"):
            TOOLS["get_features"].run(ctx, {"feature_class": "healthcare"}, {"aoi": aoi})
        with pytest.raises(ToolFailed) as err:
            geocode("Zzyzx Road", ctx.settings)
        assert "offline" in err.value.hint
        with pytest.raises(ToolFailed, match="offline mode is on"):
            TOOLS["search_imagery"].run(
                ctx,
                {
                    "window": "explicit",
                    "start": "2025-01-01",
                    "end": "2025-01-05",
                    "bbox": [-118.2, 34.15, -118.1, 34.25],
                },
                {},
            )
        assert httpd.requests == []
        record = TOOLS["run_python"].run(ctx, {"code": "gr.save_text('note', 'qgis limits')"}, {})
        assert "rlimits cpu=9s as=1280MB" in record.extra["isolation"]
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_basemap_checkbox_is_stored_and_offline_turns_the_basemap_off(qgis_iface, monkeypatch):
    monkeypatch.setenv("GEOFAHAM_OFFLINE", "0")
    monkeypatch.delenv("GEOFAHAM_BASEMAP", raising=False)
    dialog = SettingsDialog(qgis_iface.mainWindow())
    assert dialog.basemap.isChecked() and dialog.basemap.isEnabled()
    assert settings_from_qgis().basemap_on
    dialog.basemap.setChecked(False)
    dialog.save()
    assert QgsSettings().value("geofaham/map/basemap", type=bool) is False
    assert not settings_from_qgis().map.basemap and not settings_from_qgis().basemap_on
    again = SettingsDialog(qgis_iface.mainWindow())
    assert not again.basemap.isChecked()
    again.basemap.setChecked(True)
    again.offline.setChecked(True)  # working offline: the basemap cannot be asked for
    assert not again.basemap.isEnabled()
    again.save()
    assert not QgsSettings().contains("geofaham/map/basemap")  # the environment's value again
    assert settings_from_qgis().map.basemap and not settings_from_qgis().basemap_on
    again.offline.setChecked(False)
    again.save()


def test_the_dialog_fits_a_laptop_screen_and_the_embedded_model_greys_out_the_remote_fields(qgis_iface):
    """The dialog was 1,054 px tall (off a 1366×768 screen); its tabs now scroll and it opens at most 700 px tall.
    While the embedded model is on, the remote endpoints (server, model, key of each role) cannot be edited."""
    from qgis.PyQt.QtWidgets import QScrollArea

    dialog = SettingsDialog(qgis_iface.mainWindow())
    try:
        dialog.show()
        assert dialog.height() <= 700 and dialog.width() <= 1366, dialog.size()
        tabs = dialog.findChild(QTabWidget)
        assert all(isinstance(tabs.widget(i), QScrollArea) for i in range(tabs.count()))
        models = tabs.widget(0)
        assert models.widget().sizeHint().height() > models.viewport().height()  # the models page scrolls
        url, model, _ = dialog.role_fields["planner"]
        dialog.embedded.setChecked(True)
        assert not url.isEnabled() and not model.isEnabled()
        assert not any(field.isEnabled() for fields in dialog.role_fields.values() for field in fields)
        dialog.embedded.setChecked(False)
        assert all(field.isEnabled() for fields in dialog.role_fields.values() for field in fields)
    finally:
        dialog.close()
        dialog.deleteLater()
