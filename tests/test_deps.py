"""The dependency check names what is missing and how to install it (no Qt needed)."""

import sys

from geofaham_plugin.deps import REQUIRED, install_instructions, missing_dependencies, pip_command


def test_all_dependencies_present_in_the_project_venv():
    assert missing_dependencies() == []


def test_hidden_module_is_reported_with_its_pip_name(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg2", None)
    monkeypatch.setitem(sys.modules, "pystac_client", None)
    missing = missing_dependencies()
    assert [d.module for d in missing] == ["pystac_client", "psycopg2"]
    # psycopg2 links libpq: the system's package, not pip's; pip only for the pure-Python one
    assert pip_command(missing).endswith(
        "-m pip install --user --no-binary shapely,pyproj,rasterio,pyogrio,fiona pystac-client"
    )
    assert "Debian/Ubuntu: sudo apt install python3-psycopg2" in install_instructions(missing)


def test_pip_command_names_a_python_even_inside_qgis(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/usr/bin/qgis")
    assert pip_command(list(REQUIRED[:1])).startswith("python3 -m pip install --user --no-binary ")


def test_geo_libraries_come_from_the_system_and_pip_never_fetches_wheels_bundling_gdal(monkeypatch):
    for module in ("shapely", "rasterio", "pyproj", "pydantic", "osmnx"):
        monkeypatch.setitem(sys.modules, module, None)
    lines = install_instructions(missing_dependencies())
    text = "\n".join(lines)
    # the Debian packages exist (checked with apt-cache show on Debian 12)
    assert "sudo apt install python3-shapely python3-pyproj python3-rasterio" in text
    assert "sudo apt install libgdal-dev libgeos-dev" in text and '"shapely>=2.0,<2.2" "rasterio>=1.4,<1.5"' in text
    assert "OSGeo4W" in text and "conda install -c conda-forge shapely pyproj rasterio" in text
    pip = next(line for line in lines if line.startswith("then the pure-Python packages: "))
    assert pip.endswith("--no-binary shapely,pyproj,rasterio,pyogrio,fiona pydantic osmnx")
    assert all(word not in pip.split()[-2:] for word in ("shapely", "rasterio", "pyproj"))


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
