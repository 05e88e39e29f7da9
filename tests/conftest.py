"""Shared fixtures. The repository root is the QGIS plugin folder; it is loaded here as the package
``geofaham`` exactly as QGIS loads it from its plugins directory."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = (
    (ROOT.parent / "shared" / "data") if (ROOT.parent / "shared" / "data").is_dir() else Path("/work/shared/data")
)


def load_plugin_package(name: str = "geofaham"):
    """Import the repository root as the QGIS plugin package ``name``."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "__init__.py", submodule_search_locations=[str(ROOT)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def plugin_package():
    return load_plugin_package()


@pytest.fixture(scope="session")
def built_translations(tmp_path_factory) -> Path:
    """The .ts sources compiled to .qm with lrelease, in a temporary folder."""
    out = tmp_path_factory.mktemp("qm")
    for ts in (ROOT / "i18n").glob("*.ts"):
        subprocess.run(["lrelease", "-silent", str(ts), "-qm", str(out / ts.with_suffix(".qm").name)], check=True)
    return out


# --- model layer: no test reaches a real model unless it says so ---------------------------------------------


@pytest.fixture(autouse=True)
def _block_real_models(request, monkeypatch):
    """GEOFAHAM_BLOCK_REAL_MODELS=1 for every test; tests marked ``llm`` run with it removed."""
    if request.node.get_closest_marker("llm"):
        monkeypatch.delenv("GEOFAHAM_BLOCK_REAL_MODELS", raising=False)
    else:
        monkeypatch.setenv("GEOFAHAM_BLOCK_REAL_MODELS", "1")


@pytest.fixture
def real_models_allowed(_block_real_models, monkeypatch):
    """Opt one test into real model requests without the ``llm`` marker (e.g. against a local mock server)."""
    monkeypatch.delenv("GEOFAHAM_BLOCK_REAL_MODELS", raising=False)


@pytest.fixture
def mock_openai(real_models_allowed):
    """A local OpenAI-compatible server that records requests and replies with ``.content``."""
    from helpers.openai_mock import MockOpenAI

    mock = MockOpenAI()
    yield mock
    mock.server.shutdown()
    mock.server.server_close()


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    """Tests never reach the internet: online sources (Overpass, Nominatim, STAC APIs) are off unless a test
    points them at a local mock server and lifts this itself."""
    monkeypatch.setenv("GEOFAHAM_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _gdal_network_restored():
    """A command line started in the test process (``cli.main``) offline turns GDAL's network off for good, as in
    its own process; each test starts as the process started (the STAC tests read COGs from a local server). An
    orchestrator's run gives it back itself when it ends."""
    yield
    from geofaham_plugin.core.engines.user_files import gdal_network

    gdal_network(False)


@pytest.fixture()
def store(tmp_path):
    """A fresh Response Store in a session folder of its own."""
    from geofaham_plugin.core.store.store import ResponseStore

    s = ResponseStore(tmp_path / "session")
    yield s
    s.close()


@pytest.fixture()
def ctx(store):
    """What a tool sees: the test's store, the local layer catalogue, settings free of the environment except
    the offline switch (on unless a test lifts ``_offline``), so no tool goes online by accident."""
    import os

    from geofaham_plugin.core.agents import ToolContext
    from geofaham_plugin.core.config import settings_from_env
    from geofaham_plugin.core.engines.layers import default_catalogue

    offline = {"GEOFAHAM_OFFLINE": os.environ.get("GEOFAHAM_OFFLINE", "0")}
    return ToolContext(store=store, layers=default_catalogue(), settings=settings_from_env(offline))
