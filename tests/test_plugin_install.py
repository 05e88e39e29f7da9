"""Installing from the QGIS plugin repository (no ``make``): the commands the missing-packages message prints,
run in a throw-away user base with the system Python, give a plugin that QGIS loads and that answers.

``scripts/check_plugin_install.py --no-apt`` does it (see its docstring for the stages). With pip's cache in
``~/.cache/geofaham/pip-user-route`` warm it takes about 30 s (pip resolves against PyPI and installs the cached
wheels); cold, building shapely, pyogrio and rasterio from source against Debian's GEOS/GDAL and downloading the
rest, about 3 minutes on 2 cores (the first run, with apt installing python3-shapely, python3-geopandas and
python3-rasterio and their dependencies, 5 minutes). The apt packages must be installed already (the test never
installs system packages): ``make setup`` installs them (``scripts/setup.sh``, stage apt, from
``geofaham_plugin.deps.debian_packages``), so CI runs this test.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import check_plugin_install  # noqa: E402

from geofaham_plugin.deps import debian_packages  # noqa: E402

pytestmark = pytest.mark.slow


def _installed(package: str) -> bool:
    return subprocess.run(["dpkg", "-s", package], capture_output=True, check=False).returncode == 0


def test_the_printed_commands_install_a_plugin_that_loads_in_qgis_and_answers(tmp_path: Path) -> None:
    python = Path(check_plugin_install.SYSTEM_PYTHON)
    if not python.exists() or shutil.which("dpkg") is None:
        pytest.skip("not a Debian system")
    if subprocess.run([str(python), "-c", "import qgis.core"], capture_output=True, check=False).returncode:
        pytest.skip("no PyQGIS for the system Python")
    if absent := [p for p in debian_packages() if not _installed(p)]:
        pytest.skip(f"apt packages not installed ({' '.join(absent)}): run make setup")
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_plugin_install.py"), "--no-apt", "--keep", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    assert "all stages passed" in out.stdout
    assert "plugin: GeoFahamPlugin" in out.stdout
    assert "qgis: compiled band math equals numpy's" in out.stdout  # numba installed by the printed pip line
    assert out.stdout.count(check_plugin_install.EXPECTED + " in total") == 2  # inside QGIS, and the CLI
