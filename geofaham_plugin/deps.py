"""Which Python packages GeoFaham needs, and which of them are missing.

Imports nothing heavy and nothing from Qt: it runs inside ``classFactory`` before the plugin is
built, and from the command line (``python -m geofaham_plugin check``).

How to install inside QGIS (a plugin installed from the plugin repository, no ``make``): the packages that
link GEOS, GDAL, PROJ or libpq come from the system's packages, built against the very libraries QGIS
loads (apt on Debian/Ubuntu, OSGeo4W on Windows, conda when QGIS comes from conda-forge); pip installs
only the pure-Python ones, at the versions ``requirements.txt`` pins, into the user's site
(``--user --break-system-packages``: Debian 12's Python is "externally managed" and refuses a plain
``pip install --user``). PyPI's wheels of shapely, pyproj, rasterio, pyogrio and fiona bundle their own
GEOS/GDAL/PROJ, which clash with QGIS's copies inside the QGIS process: pip is told never to use them
(``--no-binary``). Where Debian's package is too old or missing (Debian 12: shapely 1.8, rasterio 1.3, no
pyogrio), a separate line builds them from source against Debian's libraries, as ``make setup`` does.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import sys
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Dependency:
    module: str  # what we import
    distribution: str  # what pip installs
    purpose: str
    requirement: str  # the version range, as requirements.txt pins it (tests/test_deps.py compares them)
    #: the Debian/Ubuntu package: for a compiled one, built against the system's GEOS/GDAL/PROJ/libpq; for
    #: geopandas, the one that brings the system's compiled stack (pandas, numpy, fiona) along
    debian: str | None = None
    compiled: bool = False  # links GEOS/GDAL/PROJ/libpq: never from pip's wheels
    #: compiled, and Debian 12's package is missing or older than ``requirement``: built from source by pip
    build_on_debian12: bool = False
    #: the version found when it is older than ``requirement`` (set by :func:`missing_dependencies`)
    installed: str | None = None

    @property
    def pip_requirement(self) -> str:
        return self.distribution + self.requirement

    @property
    def label(self) -> str:
        """The name a message shows: ``shapely``, or ``shapely 1.8.5 (needs >=2.0,<2.2)`` when too old."""
        if self.installed is None:
            return self.distribution
        return f"{self.distribution} {self.installed} (needs {self.requirement})"


REQUIRED: tuple[Dependency, ...] = (
    Dependency("pydantic", "pydantic", "typed ledgers, plans and tool arguments", ">=2.6,<3"),
    Dependency("openai", "openai", "OpenAI-compatible model servers", ">=1.40"),
    Dependency("httpx", "httpx", "HTTP with timeouts and retries", ">=0.27"),
    Dependency("shapely", "shapely", "geometry operations", ">=2.0,<2.2", "python3-shapely", True, True),
    Dependency("pyproj", "pyproj", "coordinate reference systems", "==3.4.1", "python3-pyproj", True),
    Dependency("pyogrio", "pyogrio", "reading vector files", ">=0.7,<0.12", None, True, True),
    # pure Python: Debian 12's 0.12 is too old, pip puts 1.0 into the user's site over it
    Dependency("geopandas", "geopandas", "vector artifacts", ">=1.0.1,<1.1", "python3-geopandas"),
    Dependency("rasterio", "rasterio", "raster artifacts", ">=1.4,<1.5", "python3-rasterio", True, True),
    Dependency("xarray", "xarray", "lazy raster analysis", ">=2024.1"),
    Dependency("dask", "dask[array]", "chunked raster computation", ">=2024.1"),
    Dependency("pystac_client", "pystac-client", "satellite imagery search", ">=0.8"),
    Dependency("osmnx", "osmnx", "OpenStreetMap features", ">=2.0"),
    Dependency("psycopg2", "psycopg2-binary", "PostGIS databases", ">=2.9", "python3-psycopg2", True),
)

#: not needed to start or to answer, installed with the missing required ones (every install line adds them) and
#: named by ``check``: the plugin runs without them, more slowly
OPTIONAL: tuple[Dependency, ...] = (
    # a wheel of its own LLVM (no GEOS/GDAL/PROJ); without it, numpy computes the same pixels, ~7x slower per block
    # (about 2x for a whole tile: bench/README.md)
    Dependency("numba", "numba", "raster band math compiled per pixel", ">=0.59,<0.69"),
)

#: what pip would otherwise pull in newer than the system's compiled packages allow, pinned as requirements.txt
#: pins them and added to every pip command: numpy 2 breaks Debian's numpy extensions (GDAL's bindings,
#: scipy, bottleneck) inside QGIS, geopandas 1.0 predates pandas 3, affine 3 needs a newer attrs than Debian's;
#: pandas 2.2 warns at every import about Debian's numexpr 2.8 and bottleneck 1.3.5 (python3-geopandas brings them)
PIP_CONSTRAINTS = ("numpy<2", "pandas>=2.2,<3", "affine>=2.4,<3", "numexpr>=2.10.2", "bottleneck>=1.4.2")

#: PyPI wheels that bundle their own GEOS/GDAL/PROJ: pip must build these from source, never fetch the wheel
BUNDLING_WHEELS = ("shapely", "pyproj", "rasterio", "pyogrio", "fiona")
#: Debian's build dependencies of those source builds (the libraries QGIS itself loads)
DEBIAN_BUILD_PACKAGES = ("libgdal-dev", "libgeos-dev", "libproj-dev", "python3-dev", "g++")
#: pip into the user's site on a system Python (PEP 668), never a wheel bundling GEOS/GDAL/PROJ
PIP_OPTIONS = f"install --user --break-system-packages --no-binary {','.join(BUNDLING_WHEELS)}"

SETUP_COMMAND = "make setup"


def debian_packages() -> list[str]:
    """Every Debian package the plugin-repository route can install: the system's compiled packages and the
    build dependencies of the source builds. ``make setup`` installs them (``scripts/setup.sh``, stage apt), so
    the test of that route (``tests/test_plugin_install.py``) runs on every machine."""
    return [d.debian for d in REQUIRED if d.debian] + list(DEBIAN_BUILD_PACKAGES)


def _is_available(module: str) -> bool:
    if module in sys.modules:
        # ``sys.modules[name] = None`` is Python's documented way to make an import fail.
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _release(version: str) -> tuple[int, ...]:
    """``"2.0.1"`` -> (2, 0, 1); ``"1.8.5+dfsg"`` -> (1, 8, 5)."""
    match = re.match(r"\d+(\.\d+)*", version.strip())
    return tuple(int(part) for part in match.group(0).split(".")) if match else ()


def _installed_version(dep: Dependency) -> str | None:
    for name in (re.sub(r"\[.*\]", "", dep.distribution), dep.module):  # Debian's psycopg2 is not -binary
        try:
            return importlib.metadata.version(name)
        except (importlib.metadata.PackageNotFoundError, ValueError):
            continue
    return None


def _too_old(dep: Dependency) -> str | None:
    """The installed version when it is below the requirement's lower bound (``>=X`` or ``==X``), else None.
    Upper bounds are not enforced at start-up: a newer system package may well work."""
    lower = re.search(r"(?:>=|==)\s*([\w.]+)", dep.requirement)
    version = _installed_version(dep) if lower else None
    if lower is None or version is None or not _release(version):
        return None
    return version if _release(version) < _release(lower.group(1)) else None


def missing_dependencies(required: tuple[Dependency, ...] = REQUIRED) -> list[Dependency]:
    """The dependencies that cannot be imported or are older than required (Debian 12's shapely 1.8,
    geopandas 0.12, rasterio 1.3 import fine and then fail), in declaration order."""
    missing = []
    for dep in required:
        if not _is_available(dep.module):
            missing.append(dep)
        elif old := _too_old(dep):
            missing.append(replace(dep, installed=old))
    return missing


def _python() -> str:
    python = sys.executable or ""
    # Inside QGIS sys.executable is the qgis binary (Python is embedded): name the system Python.
    return python if os.path.basename(python).startswith("python") else "python3"


def _quoted(deps: list[Dependency]) -> str:
    return " ".join(f'"{r}"' for r in [*(d.pip_requirement for d in deps), *PIP_CONSTRAINTS])


def missing_optional() -> list[Dependency]:
    """The :data:`OPTIONAL` packages this Python lacks (or has older than required)."""
    return missing_dependencies(OPTIONAL)


def pip_command(missing: list[Dependency]) -> str:
    """The pip command for the pure-Python packages of ``missing`` and the optional ones this Python lacks,
    pinned as requirements.txt pins them (the compiled ones come from the system: :func:`install_instructions`).
    Empty when nothing is missing but optional packages: installing those is not required."""
    pure = [dep for dep in missing if not dep.compiled]
    extra = [dep for dep in missing_optional() if dep not in missing] if missing else []
    return f"{_python()} -m pip {PIP_OPTIONS} {_quoted(pure + extra)}" if pure or extra else ""


def debian_commands(missing: list[Dependency]) -> list[str]:
    """The shell commands of the Debian/Ubuntu route for ``missing``, in the order they are run: the system's
    packages, the source builds Debian 12 needs, pip for the pure-Python ones. :func:`install_instructions`
    prints them verbatim; ``scripts/check_plugin_install.py`` runs them in a throw-away user base."""
    commands = []
    if debian := [d.debian for d in missing if d.debian]:
        commands.append(f"sudo apt install {' '.join(debian)}")
    if builds := [d for d in missing if d.compiled and d.build_on_debian12]:
        commands.append(
            f"sudo apt install {' '.join(DEBIAN_BUILD_PACKAGES)} && {_python()} -m pip {PIP_OPTIONS} {_quoted(builds)}"
        )
    if pip := pip_command(missing):
        commands.append(pip)
    return commands


def install_instructions(missing: list[Dependency]) -> list[str]:
    """One line per route: the system's packages for the compiled ones (Debian/Ubuntu, OSGeo4W, conda),
    the source builds Debian 12 needs, then pip for the pure-Python ones."""
    compiled = [d for d in missing if d.compiled]
    builds = [d for d in compiled if d.build_on_debian12]
    commands = debian_commands(missing)
    lines = []
    if any(d.debian for d in missing):
        lines.append(f"Debian/Ubuntu: {commands.pop(0)}")
    if builds:
        lines.append(
            "  Debian 12's shapely, rasterio and geopandas are too old and it has no pyogrio: build "
            + ", ".join(d.distribution for d in builds)
            + " against the system's GEOS/GDAL (never PyPI's wheels, which bundle their own): "
            + commands.pop(0)
        )
    if compiled:
        lines.append(
            "Windows (OSGeo4W Setup, Advanced install): "
            + ", ".join(d.debian or f"python3-{d.distribution}" for d in compiled)
        )
        lines.append(
            "conda (QGIS from conda-forge): conda install -c conda-forge " + " ".join(d.module for d in compiled)
        )
    if commands:
        lines.append(f"then the pure-Python packages: {commands[0]}" if lines else commands[0])
    return lines


def print_check() -> int:
    """``python -m geofaham_plugin check``: what is missing and how to install it; 0 when nothing is. Needs
    nothing beyond the standard library, so it runs before any dependency is installed."""
    missing, optional = missing_dependencies(), missing_optional()
    if missing:
        print("missing: " + ", ".join(d.label for d in missing))
        if optional:
            print("optional, also installed by the lines below: " + _optional_labels(optional))
        print("install with:\n  " + "\n  ".join(install_instructions(missing)))
        return 1
    print("all dependencies present")
    if optional:
        print("optional, not installed: " + _optional_labels(optional))
        print("install with:\n  " + "\n  ".join(install_instructions(optional)))
    return 0


def _optional_labels(optional: list[Dependency]) -> str:
    return ", ".join(f"{d.label} ({d.purpose}; GeoFaham works without it, more slowly)" for d in optional)
