"""The dependency check names what is missing and how to install it (no Qt needed)."""

import sys

from geofaham_plugin.deps import REQUIRED, missing_dependencies, pip_command


def test_all_dependencies_present_in_the_project_venv():
    assert missing_dependencies() == []


def test_hidden_module_is_reported_with_its_pip_name(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg2", None)
    monkeypatch.setitem(sys.modules, "pystac_client", None)
    missing = missing_dependencies()
    assert [d.module for d in missing] == ["pystac_client", "psycopg2"]
    command = pip_command(missing)
    assert command.endswith("-m pip install --user pystac-client psycopg2-binary")


def test_pip_command_names_a_python_even_inside_qgis(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/usr/bin/qgis")
    assert pip_command(list(REQUIRED[:1])) == "python3 -m pip install --user pydantic"


def test_core_imports_no_qt_or_qgis():
    import subprocess

    code = (
        "import sys, pkgutil, importlib, geofaham_plugin.core as c\n"
        "for m in pkgutil.walk_packages(c.__path__, 'geofaham_plugin.core.'):\n"
        "    importlib.import_module(m.name)\n"
        "import geofaham_plugin.deps\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('qgis', 'PyQt5', 'PyQt6', 'sip'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
