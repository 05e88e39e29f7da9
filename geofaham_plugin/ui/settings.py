"""GeoFaham settings inside QGIS: QgsSettings under ``geofaham/`` on top of the environment.

The dialog stores only what differs from the environment (``core/config.py``): a value equal to the
environment's, or an empty field, removes the key, so the environment applies again. What it can set
(offline mode, the STAC / Overpass / Nominatim endpoints, sandbox limits, the data folder) reaches
the engines through the run's :class:`~geofaham_plugin.core.config.Settings` (``ToolContext.settings``).

API keys are never stored here: a role keeps only the id of a QGIS authentication configuration
(``authcfg``); the key is read from QgsAuthManager when a client is built and lives only in memory.
PostGIS comes from one of QGIS's own PostgreSQL connections."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from pydantic import SecretStr
from qgis.core import QgsApplication, QgsAuthMethodConfig, QgsDataSourceUri, QgsProviderRegistry, QgsSettings
from qgis.gui import QgsFileWidget
from qgis.PyQt.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ..core.config import GROUPS, Settings, settings_from_env
from ..core.domain.names import Role
from ..core.domain.secrets import mask_secrets
from .i18n import tr

PREFIX = "geofaham/"
#: values the dialog may set on top of the environment: QgsSettings key (under PREFIX) -> (group, field)
OVERRIDES: dict[str, tuple[str, str]] = {
    "network/offline": ("network", "offline"),
    "map/basemap": ("map", "basemap"),
    "stac/url": ("stac", "url"),
    "overpass/url": ("overpass", "url"),
    "nominatim/url": ("nominatim", "url"),
    "paths/data_dir": ("paths", "data_dir"),
    "sandbox/cpu_s": ("sandbox", "cpu_s"),
    "sandbox/memory_mb": ("sandbox", "memory_mb"),
}


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
    parts = {
        "host": uri.host(),
        "port": uri.port(),
        "dbname": uri.database(),
        "user": uri.username(),
        "password": uri.password(),
        "sslmode": "prefer",
    }
    return " ".join(f"{k}={v}" for k, v in parts.items() if v)


def _stored_overrides(s: QgsSettings) -> dict[str, dict[str, Any]]:
    """The dialog's stored values by settings group (only keys present and not empty)."""
    groups: dict[str, dict[str, Any]] = {}
    for key, (group, field) in OVERRIDES.items():
        if not s.contains(_key(key)):
            continue
        kind = GROUPS[group].model_fields[field].annotation
        if kind is bool:
            value: Any = s.value(_key(key), False, type=bool)
        elif kind is int:
            value = s.value(_key(key), 0, type=int)
        else:
            value = s.value(_key(key), "", type=str).strip()
            if not value:
                continue
        groups.setdefault(group, {})[field] = value
    return groups


def settings_from_qgis(env: Mapping[str, str] | None = None) -> Settings:
    """Environment defaults, overridden by what the user set in the GeoFaham settings dialog."""
    base = settings_from_env(env)
    s = QgsSettings()
    models = {}
    use_embedded = s.value(_key("llm", "embedded"), True, type=bool)
    for role in Role:
        endpoint = base.endpoint(role)
        url = s.value(_key("llm", role.value, "base_url"), "", type=str) or s.value(
            _key("llm", "base_url"), "", type=str
        )
        model = s.value(_key("llm", role.value, "model"), "", type=str) or s.value(_key("llm", "model"), "", type=str)
        authcfg = s.value(_key("llm", role.value, "authcfg"), "", type=str) or s.value(
            _key("llm", "authcfg"), "", type=str
        )
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
    dsn = (postgres_dsn(connection) if connection else None) or base.database.pg_dsn
    return base.model_copy(update={"models": models}).updated(database={"pg_dsn": dsn}, **_stored_overrides(s))


def apply_qgis_proxy(environ: MutableMapping[str, str] | None = None) -> str | None:
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
    return {
        "max_turns": s.value(_key("limits", "max_turns"), 20, type=int),
        "stall_budget": s.value(_key("limits", "stall_budget"), 3, type=int),
        "max_replans": s.value(_key("limits", "max_replans"), 2, type=int),
    }


#: the settings dialog's height at most (px): it fits a 1366×768 screen with QGIS's title and task bars
MAX_HEIGHT = 640


def _scrolled(page: QWidget) -> QScrollArea:
    """A tab's page in a scroll area, so that the dialog stays short whatever the page holds."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.NoFrame)
    area.setWidget(page)
    return area


def _save_override(s: QgsSettings, key: str, value: Any, inherited: Any) -> None:
    """Store ``value`` under ``key`` only when it differs from the environment's (``inherited``)."""
    if value in ("", None) or value == inherited:
        s.remove(_key(key))
    else:
        s.setValue(_key(key), value)


class SettingsDialog(QDialog):
    """Model endpoints per role (with a connection test), embedded model on/off, PostGIS connection,
    offline mode, STAC / Overpass / Nominatim endpoints, data folder, run and sandbox limits. Keys only
    through QGIS authentication configurations."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("GeoFaham settings"))
        self.setObjectName("GeoFahamSettings")
        s = QgsSettings()
        env = settings_from_env()  # what applies where the dialog sets nothing
        stored = _stored_overrides(s)
        layout = QVBoxLayout(self)
        tabs = QTabWidget(self)
        layout.addWidget(tabs)

        models = QWidget()
        form = QFormLayout(models)
        self.embedded = QCheckBox(tr("Use the embedded local model (offline)"))
        self.embedded.setChecked(s.value(_key("llm", "embedded"), True, type=bool))
        form.addRow(self.embedded)
        self.role_fields: dict[str, tuple[QLineEdit, QLineEdit, QWidget]] = {}
        self.remote_boxes: list[QGroupBox] = []  # greyed out while the embedded model is used
        for role in [None, *Role]:
            name = role.value if role else None
            box = QGroupBox(tr("All roles") if role is None else tr("Role: {role}").format(role=name))
            inner = QFormLayout(box)
            url = QLineEdit(s.value(_key("llm", *([name] if name else []), "base_url"), "", type=str))
            url.setPlaceholderText("https://api.openai.com/v1")
            model = QLineEdit(s.value(_key("llm", *([name] if name else []), "model"), "", type=str))
            auth = self._auth_selector(s.value(_key("llm", *([name] if name else []), "authcfg"), "", type=str))
            inner.addRow(tr("Server URL"), url)
            inner.addRow(tr("Model"), model)
            inner.addRow(tr("API key (authentication)"), auth)
            self.role_fields[name or ""] = (url, model, auth)
            self.remote_boxes.append(box)
            form.addRow(box)
        self.embedded.toggled.connect(self._show_remote)
        self._show_remote(self.embedded.isChecked())
        self.test_button = QPushButton(tr("Test connection"))
        self.test_result = QLabel("")
        self.test_result.setObjectName("GeoFahamTestResult")
        self.test_button.clicked.connect(self.test_connection)
        form.addRow(self.test_button, self.test_result)
        tabs.addTab(_scrolled(models), tr("Models"))

        data = QWidget()
        form = QFormLayout(data)
        self.postgis = QComboBox()
        self.postgis.addItem(tr("(embedded engine)"), "")
        for name in postgres_connections():
            self.postgis.addItem(name, name)
        index = self.postgis.findData(s.value(_key("postgis", "connection"), "", type=str))
        self.postgis.setCurrentIndex(max(index, 0))
        self.offline = QCheckBox(tr("Work offline: no requests to Overpass, Nominatim or STAC APIs"))
        self.offline.setChecked(stored.get("network", {}).get("offline", env.network.offline))
        self.basemap = QCheckBox(tr("OpenStreetMap basemap behind the results (online only)"))
        self.basemap.setChecked(stored.get("map", {}).get("basemap", env.map.basemap))
        self.basemap.setEnabled(not self.offline.isChecked())
        self.offline.toggled.connect(lambda offline: self.basemap.setEnabled(not offline))
        self.stac = self._url_field(s, "stac/url", env.stac.url)
        self.overpass = self._url_field(s, "overpass/url", env.overpass.url)
        self.nominatim = self._url_field(s, "nominatim/url", env.nominatim.url)
        self.data_dir = QgsFileWidget()
        self.data_dir.setStorageMode(QgsFileWidget.GetDirectory)
        self.data_dir.setFilePath(s.value(_key("paths/data_dir"), "", type=str))
        self.data_dir.lineEdit().setPlaceholderText(str(env.paths.data_dir))
        form.addRow(tr("PostGIS connection"), self.postgis)
        form.addRow(self.offline)
        form.addRow(self.basemap)
        form.addRow(tr("STAC API"), self.stac)
        form.addRow(tr("Overpass API"), self.overpass)
        form.addRow(tr("Nominatim (place names)"), self.nominatim)
        form.addRow(tr("Data folder (sample layers, OSM extracts)"), self.data_dir)
        tabs.addTab(_scrolled(data), tr("Data"))

        limits = QWidget()
        form = QFormLayout(limits)
        current = limits_from_qgis()
        self.limit_boxes = {}
        for key, label, top in (
            ("max_turns", tr("Maximum turns"), 100),
            ("stall_budget", tr("Stall budget"), 20),
            ("max_replans", tr("Maximum replans"), 10),
        ):
            box = QSpinBox()
            box.setRange(0, top)
            box.setValue(current[key])
            self.limit_boxes[key] = box
            form.addRow(label, box)
        sandbox = stored.get("sandbox", {})
        self.sandbox_cpu = QSpinBox()
        self.sandbox_cpu.setRange(1, 86_400)
        self.sandbox_cpu.setSuffix(" s")
        self.sandbox_cpu.setValue(sandbox.get("cpu_s", env.sandbox.cpu_s))
        self.sandbox_memory = QSpinBox()
        self.sandbox_memory.setRange(256, 1_048_576)
        self.sandbox_memory.setSuffix(" MB")
        self.sandbox_memory.setValue(sandbox.get("memory_mb", env.sandbox.memory_mb))
        form.addRow(tr("Python sandbox: CPU time"), self.sandbox_cpu)
        form.addRow(tr("Python sandbox: memory"), self.sandbox_memory)
        tabs.addTab(_scrolled(limits), tr("Limits"))

        buttons = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.save_and_close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        # on a 1366×768 laptop the whole dialog is on screen: its tabs scroll
        hint = self.sizeHint()
        self.resize(max(hint.width(), 560), min(hint.height(), MAX_HEIGHT))

    def _show_remote(self, embedded: bool) -> None:
        for box in self.remote_boxes:
            box.setEnabled(not embedded)

    @staticmethod
    def _url_field(s: QgsSettings, key: str, inherited: str) -> QLineEdit:
        field = QLineEdit(s.value(_key(key), "", type=str))
        field.setPlaceholderText(inherited)
        return field

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
        env = settings_from_env()
        _save_override(s, "network/offline", self.offline.isChecked(), env.network.offline)
        _save_override(s, "map/basemap", self.basemap.isChecked(), env.map.basemap)
        _save_override(s, "stac/url", self.stac.text().strip(), env.stac.url)
        _save_override(s, "overpass/url", self.overpass.text().strip(), env.overpass.url)
        _save_override(s, "nominatim/url", self.nominatim.text().strip(), env.nominatim.url)
        _save_override(s, "paths/data_dir", self.data_dir.filePath().strip(), str(env.paths.data_dir))
        _save_override(s, "sandbox/cpu_s", self.sandbox_cpu.value(), env.sandbox.cpu_s)
        _save_override(s, "sandbox/memory_mb", self.sandbox_memory.value(), env.sandbox.memory_mb)
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
            self.test_result.setText(
                tr("Embedded model ready: {path}").format(path=path)
                if ok
                else tr("Embedded model missing: run make setup ({path})").format(path=path)
            )
            return ok
        from pydantic import BaseModel

        from ..core.errors import GeoFahamError
        from ..core.llm import LLM, Message, OpenAIChatModel

        class Pong(BaseModel):
            ok: bool

        try:
            LLM(OpenAIChatModel(endpoint, timeout=20, http_retries=0), max_retries=0).structured(
                Role.planner, [Message(role="user", content='Reply with {"ok": true}')], Pong
            )
        except GeoFahamError as exc:
            self.test_result.setText(tr("Connection failed: {error}").format(error=mask_secrets(str(exc))))
            return False
        self.test_result.setText(
            tr("Connected to {model} at {url}").format(model=endpoint.model, url=mask_secrets(endpoint.base_url or ""))
        )
        return True
