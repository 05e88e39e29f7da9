"""The dependency check names what is missing and how to install it (no Qt needed)."""

import importlib.metadata
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

from geofaham_plugin import deps
from geofaham_plugin.deps import (
    OPTIONAL,
    PIP_CONSTRAINTS,
    REQUIRED,
    debian_commands,
    install_instructions,
    missing_dependencies,
    pip_command,
)

CONSTRAINTS = ' "numpy<2" "pandas>=2.2,<3" "affine>=2.4,<3" "numexpr>=2.10.2" "bottleneck>=1.4.2"'


def test_all_dependencies_present_in_the_project_venv():
    assert missing_dependencies() == [] and deps.missing_optional() == []


def test_a_missing_optional_package_rides_along_with_the_required_ones_and_never_blocks(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)
    assert missing_dependencies() == [] and [d.module for d in deps.missing_optional()] == ["numba"]
    assert pip_command([]) == ""  # nothing required is missing: no install is demanded
    monkeypatch.setitem(sys.modules, "pydantic", None)
    assert pip_command(missing_dependencies()).endswith('"pydantic>=2.6,<3" "numba>=0.59,<0.69"' + CONSTRAINTS)


def _check(*hidden: str) -> subprocess.CompletedProcess:
    code = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in hidden)
    code += "from geofaham_plugin.deps import print_check\nraise SystemExit(print_check())"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)


def test_check_names_a_missing_optional_package_with_its_install_line_and_passes():
    out = _check("numba")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[:3] == [
        "all dependencies present",
        "optional, not installed: numba (raster band math compiled per pixel; GeoFaham works without it, more slowly)",
        "install with:",
    ]
    assert lines[3].strip().endswith('"numba>=0.59,<0.69"' + CONSTRAINTS)
    out = _check("numba", "osmnx")
    assert out.returncode == 1 and out.stdout.splitlines()[1].startswith(
        "optional, also installed by the lines below: numba"
    )
    assert out.stdout.rstrip().endswith('"osmnx>=2.0" "numba>=0.59,<0.69"' + CONSTRAINTS)


def test_hidden_module_is_reported_with_its_pip_name(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg2", None)
    monkeypatch.setitem(sys.modules, "pystac_client", None)
    missing = missing_dependencies()
    assert [d.module for d in missing] == ["pystac_client", "psycopg2"]
    # psycopg2 links libpq: the system's package, not pip's; pip only for the pure-Python one, pinned
    assert pip_command(missing).endswith(
        "-m pip install --user --break-system-packages --no-binary shapely,pyproj,rasterio,pyogrio,fiona "
        '"pystac-client>=0.8"' + CONSTRAINTS
    )
    assert "Debian/Ubuntu: sudo apt install python3-psycopg2" in install_instructions(missing)


def test_pip_command_names_a_python_even_inside_qgis(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/usr/bin/qgis")
    assert pip_command(list(REQUIRED[:1])).startswith("python3 -m pip install --user --break-system-packages ")


def _requirements() -> dict[str, str]:
    """requirements.txt as {distribution: its line}."""
    lines = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    pins = [line.split("#")[0].strip() for line in lines]
    return {re.split(r"[<>=!~\[ ]", pin, maxsplit=1)[0].lower(): pin for pin in pins if pin}


def _quoted(line: str) -> list[str]:
    return re.findall(r'"([^"]+)"', line)


def _is_pure_python(distribution: str) -> bool:
    """No compiled module among the installed distribution's files (the project venv has them all)."""
    files = importlib.metadata.files(re.sub(r"\[.*\]", "", distribution)) or []
    return not any(str(f).endswith((".so", ".pyd", ".dylib")) for f in files)


#: Debian 12 (bookworm) package names, checked with apt-cache show on this machine when the test was written
BOOKWORM = {
    "python3-shapely",
    "python3-pyproj",
    "python3-rasterio",
    "python3-geopandas",
    "python3-psycopg2",
    "python3-fiona",
    "libgdal-dev",
    "libgeos-dev",
    "libproj-dev",
    "python3-dev",
    "g++",
}


def _is_debian_package(name: str) -> bool:
    if shutil.which("apt-cache") and any(Path("/var/lib/apt/lists").glob("*bookworm*Packages*")):
        out = subprocess.run(["apt-cache", "show", name], capture_output=True, text=True, check=False)
        return out.returncode == 0 and f"Package: {name}" in out.stdout
    return name in BOOKWORM


def test_every_package_is_pinned_as_requirements_txt_pins_it():
    requirements = _requirements()
    for dep in REQUIRED + OPTIONAL:
        assert requirements[dep.distribution.split("[")[0]] == dep.pip_requirement, dep


def test_installing_inside_qgis_on_debian_12_apt_for_geo_libraries_and_pip_only_for_pure_python(monkeypatch):
    for dep in REQUIRED:  # everything missing: every line is printed
        monkeypatch.setitem(sys.modules, dep.module, None)
    lines = install_instructions(missing_dependencies())
    requirements = _requirements()

    # apt: real Debian 12 package names, the compiled geo libraries among them
    apt = next(line for line in lines if line.startswith("Debian/Ubuntu: sudo apt install "))
    names = apt.split("sudo apt install ")[1].split()
    assert {"python3-shapely", "python3-pyproj", "python3-rasterio", "python3-psycopg2"} <= set(names)
    for name in names:
        assert _is_debian_package(name), name

    # pip of the pure-Python packages: only pure-Python ones, each pinned as requirements.txt says, never a
    # wheel that bundles GEOS/GDAL, into the user's site of a system Python (PEP 668: --break-system-packages)
    pip = next(line for line in lines if line.startswith("then the pure-Python packages: "))
    assert " -m pip install --user --break-system-packages --no-binary shapely,pyproj,rasterio,pyogrio,fiona " in pip
    # what pip pulls in is held to the system's compiled stack: numpy < 2 (Debian's numpy extensions and
    # QGIS's GDAL bindings), pandas < 3 (geopandas 1.0), affine < 3 (Debian's attrs), as requirements.txt pins them
    pinned = _quoted(pip)
    assert pinned[-5:] == list(PIP_CONSTRAINTS)
    assert PIP_CONSTRAINTS[:3] == ("numpy<2", "pandas>=2.2,<3", "affine>=2.4,<3")
    for constraint in PIP_CONSTRAINTS:
        assert requirements[re.split(r"[<>=]", constraint, maxsplit=1)[0]] == constraint
    pinned = pinned[:-5]
    assert {p.split(">")[0].split("=")[0] for p in pinned} == {
        "pydantic",
        "openai",
        "httpx",
        "geopandas",
        "xarray",
        "dask[array]",
        "pystac-client",
        "osmnx",
    }
    for requirement in pinned:
        name = re.split(r"[<>=\[]", requirement, maxsplit=1)[0]
        assert requirements[name] == requirement, requirement
        assert _is_pure_python(name), f"{name} is not pure Python"
        assert name not in ("shapely", "pyproj", "rasterio", "pyogrio", "fiona", "psycopg2-binary")

    # Debian 12's too-old or missing compiled ones: built against the system's GDAL/GEOS, pinned too
    build = next(line for line in lines if "against the system's GEOS/GDAL" in line)
    assert "sudo apt install libgdal-dev libgeos-dev libproj-dev python3-dev g++ && " in build
    assert "--break-system-packages --no-binary shapely,pyproj,rasterio,pyogrio,fiona" in build
    assert _quoted(build) == [
        requirements["shapely"],
        requirements["pyogrio"],
        requirements["rasterio"],
        *PIP_CONSTRAINTS,
    ]
    for name in ("libgdal-dev", "libgeos-dev", "libproj-dev", "python3-dev", "g++"):
        assert _is_debian_package(name), name

    text = "\n".join(lines)
    assert "OSGeo4W" in text and "conda install -c conda-forge shapely pyproj pyogrio rasterio psycopg2" in text


def test_only_pure_python_packages_missing_is_one_pip_line(monkeypatch):
    for module in ("pydantic", "osmnx"):
        monkeypatch.setitem(sys.modules, module, None)
    assert install_instructions(missing_dependencies()) == [f"{pip_command(missing_dependencies())}"]
    assert pip_command(missing_dependencies()).endswith('"pydantic>=2.6,<3" "osmnx>=2.0"' + CONSTRAINTS)


def test_the_debian_commands_are_what_the_message_prints(monkeypatch):
    # scripts/check_plugin_install.py runs debian_commands(); the user reads install_instructions()
    for dep in REQUIRED:
        monkeypatch.setitem(sys.modules, dep.module, None)
    missing = missing_dependencies()
    commands = debian_commands(missing)
    text = "\n".join(install_instructions(missing))
    assert len(commands) == 3 and all(command in text for command in commands)
    assert commands[0].startswith("sudo apt install ") and commands[1].startswith("sudo apt install libgdal-dev")
    assert commands[2] == pip_command(missing)


def test_a_package_older_than_required_is_reported_with_its_version(monkeypatch):
    # Debian 12's python3-shapely 1.8 imports fine, then the plugin fails: it counts as missing
    versions = {"shapely": "1.8.5", "geopandas": "0.12.2", "pyproj": "3.4.1", "psycopg2": "2.9.5 (dt dec pq3 ext lo64)"}
    real = deps.importlib.metadata.version

    def version(name: str) -> str:
        if name in versions:
            return versions[name]
        if name == "psycopg2-binary":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(deps.importlib.metadata, "version", version)
    missing = missing_dependencies()
    assert [d.label for d in missing] == [
        "shapely 1.8.5 (needs >=2.0,<2.2)",
        "geopandas 0.12.2 (needs >=1.0.1,<1.1)",
    ]
    lines = install_instructions(missing)
    assert '"shapely>=2.0,<2.2"' in lines[1] and '"geopandas>=1.0.1,<1.1"' in lines[-1]
    # a newer one than the upper bound is not refused at start-up
    versions["shapely"] = "2.3.0"
    assert [d.module for d in missing_dependencies()] == ["geopandas"]


def test_the_command_line_names_missing_packages_instead_of_a_traceback():
    # the core imports pydantic at once: `python -m geofaham_plugin ...` checks first
    code = (
        "import runpy, sys\n"
        "sys.modules['pydantic'] = None\n"
        "sys.argv = ['geofaham_plugin', 'ask', 'How many?']\n"
        "runpy.run_module('geofaham_plugin', run_name='__main__')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert out.stdout.startswith("missing: pydantic\ninstall with:\n  ")
    assert '"pydantic>=2.6,<3"' in out.stdout


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
