"""Settings: endpoints per role, the connection test, and keys only through QGIS's auth manager."""

from __future__ import annotations

import json

import pytest
from qgis.core import QgsApplication, QgsAuthMethodConfig, QgsProject, QgsSettings

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
    assert mock_openai.requests[-1]["auth"] == f"Bearer {SECRET}" and mock_openai.requests[-1]["body"]["model"] == "gpt-4.1"

    settings = settings_from_qgis({})
    assert settings.endpoint(Role.vector).base_url == server and settings.endpoint(Role.vector).model == "qwen2.5-32b-instruct"
    assert settings.endpoint(Role.planner).api_key.get_secret_value() == SECRET
    # the key is nowhere on disk but in QGIS's encrypted auth database
    QgsSettings().sync()
    assert SECRET not in open(QgsSettings().fileName(), encoding="utf-8").read()
    assert authcfg in open(QgsSettings().fileName(), encoding="utf-8").read()
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
