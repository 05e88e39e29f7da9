"""GeoFaham settings inside QGIS: QgsSettings under ``geofaham/`` on top of the environment.

API keys are never stored here: a role keeps only the id of a QGIS authentication configuration
(``authcfg``); the key is read from QgsAuthManager when a client is built and lives only in memory.
PostGIS comes from one of QGIS's own PostgreSQL connections."""

from __future__ import annotations

from pydantic import SecretStr
from qgis.core import QgsApplication, QgsAuthMethodConfig, QgsDataSourceUri, QgsProviderRegistry, QgsSettings
from qgis.PyQt.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QGroupBox, QLabel,
                                 QLineEdit, QPushButton, QSpinBox, QTabWidget, QVBoxLayout, QWidget)

from ..core.config import Settings, settings_from_env
from ..core.domain.names import Role
from .i18n import tr

PREFIX = "geofaham/"


def _key(*parts: str) -> str:
    return PREFIX + "/".join(parts)


def api_key_from_authcfg(authcfg: str) -> str | None:
    """The secret of an auth configuration: an APIHeader's Authorization/api-key value, or a Basic password."""
    if not authcfg:
        return None
    config = QgsAuthMethodConfig()
    ok = QgsApplication.authManager().loadAuthenticationConfig(authcfg, config, True)
    if not ok or not config.isValid(True):
        return None
    values = config.configMap()
    for name in ("Authorization", "authorization", "api-key", "Api-Key", "x-api-key"):
        value = values.get(name)
        if value:
            return value.split(" ", 1)[1] if value.lower().startswith("bearer ") else value
    return values.get("password") or None


def postgres_connections() -> list[str]:
    metadata = QgsProviderRegistry.instance().providerMetadata("postgres")
    return sorted(metadata.connections().keys()) if metadata else []


def postgres_dsn(name: str) -> str | None:
    """A libpq connection string for a QGIS PostgreSQL connection (credentials from its authcfg if any)."""
    metadata = QgsProviderRegistry.instance().providerMetadata("postgres")
    connection = metadata.connections().get(name) if metadata else None
    if connection is None:
        return None
    uri = QgsDataSourceUri(connection.uri())
    if uri.authConfigId():
        QgsApplication.authManager().updateDataSourceUriItems([], uri.authConfigId(), "postgres")
        config = QgsAuthMethodConfig()
        if QgsApplication.authManager().loadAuthenticationConfig(uri.authConfigId(), config, True):
            uri.setUsername(config.config("username"))
            uri.setPassword(config.config("password"))
    parts = {"host": uri.host(), "port": uri.port(), "dbname": uri.database(), "user": uri.username(),
             "password": uri.password(), "sslmode": "prefer"}
    return " ".join(f"{k}={v}" for k, v in parts.items() if v)


def settings_from_qgis(env=None) -> Settings:
    """Environment defaults, overridden by what the user set in the GeoFaham settings dialog."""
    base = settings_from_env(env)
    s = QgsSettings()
    models = {}
    use_embedded = s.value(_key("llm", "embedded"), True, type=bool)
    for role in Role:
        endpoint = base.endpoint(role)
        url = s.value(_key("llm", role.value, "base_url"), "", type=str) or s.value(_key("llm", "base_url"), "", type=str)
        model = s.value(_key("llm", role.value, "model"), "", type=str) or s.value(_key("llm", "model"), "", type=str)
        authcfg = s.value(_key("llm", role.value, "authcfg"), "", type=str) or s.value(_key("llm", "authcfg"), "", type=str)
        update = {}
        if url and not use_embedded:
            update["base_url"] = url
        if model and not use_embedded:
            update["model"] = model
        key = api_key_from_authcfg(authcfg)
        if key:
            update["api_key"] = SecretStr(key)
        models[role] = endpoint.model_copy(update=update)
    connection = s.value(_key("postgis", "connection"), "", type=str)
    return base.model_copy(update={
        "models": models,
        "postgis_dsn": (postgres_dsn(connection) if connection else None) or base.postgis_dsn,
        "stac_url": s.value(_key("stac", "url"), "", type=str) or base.stac_url,
        "overpass_url": s.value(_key("overpass", "url"), "", type=str) or base.overpass_url,
    })


def apply_qgis_proxy(environ=None) -> str | None:
    """Make HTTP from the core (httpx: Overpass, STAC, Nominatim, model servers) use QGIS's proxy
    settings, unless the environment already names a proxy. Returns the proxy URL applied."""
    import os
    from urllib.parse import quote

    environ = os.environ if environ is None else environ
    s = QgsSettings()
    if not s.value("proxy/proxyEnabled", False, type=bool):
        return None
    if any(environ.get(k) for k in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")):
        return None
    host = s.value("proxy/proxyHost", "", type=str)
    port = s.value("proxy/proxyPort", "", type=str)
    if not host:
        return None
    user = s.value("proxy/proxyUser", "", type=str)
    password = s.value("proxy/proxyPassword", "", type=str)
    credentials = f"{quote(user)}:{quote(password)}@" if user else ""
    url = f"http://{credentials}{host}" + (f":{port}" if port else "")
    environ["HTTPS_PROXY"] = environ["HTTP_PROXY"] = url
    excludes = s.value("proxy/noProxyUrls", [], type=list) or []
    environ["NO_PROXY"] = ",".join(["127.0.0.1", "localhost", *[str(e) for e in excludes]])
    return url


def limits_from_qgis() -> dict:
    s = QgsSettings()
    return {"max_turns": s.value(_key("limits", "max_turns"), 20, type=int),
            "stall_budget": s.value(_key("limits", "stall_budget"), 3, type=int),
            "max_replans": s.value(_key("limits", "max_replans"), 2, type=int)}


class SettingsDialog(QDialog):
    """Model endpoints per role (with a connection test), embedded model on/off, PostGIS connection,
    STAC and Overpass endpoints, limits. Keys only through QGIS authentication configurations."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle(tr("GeoFaham settings"))
        self.setObjectName("GeoFahamSettings")
        s = QgsSettings()
        layout = QVBoxLayout(self)
        tabs = QTabWidget(self)
        layout.addWidget(tabs)

        models = QWidget()
        form = QFormLayout(models)
        self.embedded = QCheckBox(tr("Use the embedded local model (offline)"))
        self.embedded.setChecked(s.value(_key("llm", "embedded"), True, type=bool))
        form.addRow(self.embedded)
        self.role_fields: dict[str, tuple[QLineEdit, QLineEdit, QWidget]] = {}
        for role in [None, *Role]:
            name = role.value if role else None
            box = QGroupBox(tr("All roles") if role is None else tr("Role: {role}").format(role=name))
            inner = QFormLayout(box)
            url = QLineEdit(s.value(_key("llm", *( [name] if name else []), "base_url"), "", type=str))
            url.setPlaceholderText("https://api.openai.com/v1")
            model = QLineEdit(s.value(_key("llm", *([name] if name else []), "model"), "", type=str))
            auth = self._auth_selector(s.value(_key("llm", *([name] if name else []), "authcfg"), "", type=str))
            inner.addRow(tr("Server URL"), url)
            inner.addRow(tr("Model"), model)
            inner.addRow(tr("API key (authentication)"), auth)
            self.role_fields[name or ""] = (url, model, auth)
            form.addRow(box)
        self.test_button = QPushButton(tr("Test connection"))
        self.test_result = QLabel("")
        self.test_result.setObjectName("GeoFahamTestResult")
        self.test_button.clicked.connect(self.test_connection)
        form.addRow(self.test_button, self.test_result)
        tabs.addTab(models, tr("Models"))

        data = QWidget()
        form = QFormLayout(data)
        self.postgis = QComboBox()
        self.postgis.addItem(tr("(embedded engine)"), "")
        for name in postgres_connections():
            self.postgis.addItem(name, name)
        index = self.postgis.findData(s.value(_key("postgis", "connection"), "", type=str))
        self.postgis.setCurrentIndex(max(index, 0))
        self.stac = QLineEdit(s.value(_key("stac", "url"), "", type=str))
        self.stac.setPlaceholderText(settings_from_env().stac_url)
        self.overpass = QLineEdit(s.value(_key("overpass", "url"), "", type=str))
        self.overpass.setPlaceholderText(settings_from_env().overpass_url)
        form.addRow(tr("PostGIS connection"), self.postgis)
        form.addRow(tr("STAC API"), self.stac)
        form.addRow(tr("Overpass API"), self.overpass)
        tabs.addTab(data, tr("Data"))

        limits = QWidget()
        form = QFormLayout(limits)
        current = limits_from_qgis()
        self.limit_boxes = {}
        for key, label, top in (("max_turns", tr("Maximum turns"), 100), ("stall_budget", tr("Stall budget"), 20),
                                ("max_replans", tr("Maximum replans"), 10)):
            box = QSpinBox()
            box.setRange(0, top)
            box.setValue(current[key])
            self.limit_boxes[key] = box
            form.addRow(label, box)
        tabs.addTab(limits, tr("Limits"))

        buttons = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.save_and_close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _auth_selector(self, authcfg: str) -> QWidget:
        try:
            from qgis.gui import QgsAuthConfigSelect

            widget = QgsAuthConfigSelect(self)
            widget.setConfigId(authcfg)
            return widget
        except ImportError:  # pragma: no cover (qgis.gui is always there inside QGIS)
            line = QLineEdit(authcfg)
            line.configId = line.text
            return line

    def save(self) -> None:
        s = QgsSettings()
        s.setValue(_key("llm", "embedded"), self.embedded.isChecked())
        for name, (url, model, auth) in self.role_fields.items():
            parts = [name] if name else []
            s.setValue(_key("llm", *parts, "base_url"), url.text().strip())
            s.setValue(_key("llm", *parts, "model"), model.text().strip())
            s.setValue(_key("llm", *parts, "authcfg"), auth.configId())  # the id only, never the key
        s.setValue(_key("postgis", "connection"), self.postgis.currentData() or "")
        s.setValue(_key("stac", "url"), self.stac.text().strip())
        s.setValue(_key("overpass", "url"), self.overpass.text().strip())
        for key, box in self.limit_boxes.items():
            s.setValue(_key("limits", key), box.value())
        s.sync()

    def save_and_close(self) -> None:
        self.save()
        self.accept()

    def test_connection(self) -> bool:
        """Ask the planner's endpoint for a tiny structured reply; report success or the error."""
        self.save()
        settings = settings_from_qgis()
        endpoint = settings.endpoint(Role.planner)
        if endpoint.embedded:
            path = settings.embedded_model_path
            ok = path.is_file()
            self.test_result.setText(tr("Embedded model ready: {path}").format(path=path) if ok
                                     else tr("Embedded model missing: run make setup ({path})").format(path=path))
            return ok
        from pydantic import BaseModel

        from ..core.errors import GeoFahamError
        from ..core.llm import LLM, Message, OpenAIChatModel

        class Pong(BaseModel):
            ok: bool

        try:
            LLM(OpenAIChatModel(endpoint, timeout=20, http_retries=0), max_retries=0).structured(
                Role.planner, [Message(role="user", content='Reply with {"ok": true}')], Pong)
        except GeoFahamError as exc:
            self.test_result.setText(tr("Connection failed: {error}").format(error=exc))
            return False
        self.test_result.setText(tr("Connected to {model} at {url}").format(model=endpoint.model, url=endpoint.base_url))
        return True
