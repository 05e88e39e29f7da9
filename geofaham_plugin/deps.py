"""Which Python packages GeoFaham needs, and which of them are missing.

Imports nothing heavy and nothing from Qt: it runs inside ``classFactory`` before the plugin is
built, and from the command line (``python -m geofaham_plugin check``).

How to install inside QGIS (a plugin installed from the plugin repository, no ``make``): the packages that
link GEOS, GDAL, PROJ or libpq come from the system's packages, built against the very libraries QGIS
loads (apt on Debian/Ubuntu, OSGeo4W on Windows, conda when QGIS comes from conda-forge); pip installs
only the pure-Python ones. PyPI's wheels of shapely, pyproj, rasterio, pyogrio and fiona bundle their own
GEOS/GDAL/PROJ, which clash with QGIS's copies inside the QGIS process: pip is told never to use them
(``--no-binary``; where Debian's package is too old, pip builds them from source against Debian's
libraries, as ``make setup`` does).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Dependency:
    module: str  # what we import
    distribution: str  # what pip installs
    purpose: str
    debian: str | None = None  # the Debian/Ubuntu package, for one that links GEOS/GDAL/PROJ/libpq
    #: the pip requirement when Debian's package is too old (Debian 12): built from source against its libraries
    source_build: str | None = None

    @property
    def compiled(self) -> bool:
        return self.debian is not None


REQUIRED: tuple[Dependency, ...] = (
    Dependency("pydantic", "pydantic", "typed ledgers, plans and tool arguments"),
    Dependency("openai", "openai", "OpenAI-compatible model servers"),
    Dependency("httpx", "httpx", "HTTP with timeouts and retries"),
    Dependency("shapely", "shapely", "geometry operations", "python3-shapely", "shapely>=2.0,<2.2"),
    Dependency("pyproj", "pyproj", "coordinate reference systems", "python3-pyproj"),
    Dependency("pyogrio", "pyogrio", "reading vector files", "python3-pyogrio", "pyogrio>=0.7,<0.12"),
    Dependency("geopandas", "geopandas", "vector artifacts"),
    Dependency("rasterio", "rasterio", "raster artifacts", "python3-rasterio", "rasterio>=1.4,<1.5"),
    Dependency("xarray", "xarray", "lazy raster analysis"),
    Dependency("dask", "dask[array]", "chunked raster computation"),
    Dependency("pystac_client", "pystac-client", "satellite imagery search"),
    Dependency("osmnx", "osmnx", "OpenStreetMap features"),
    Dependency("psycopg2", "psycopg2-binary", "PostGIS databases", "python3-psycopg2"),
)

#: PyPI wheels that bundle their own GEOS/GDAL/PROJ: pip must build these from source, never fetch the wheel
BUNDLING_WHEELS = ("shapely", "pyproj", "rasterio", "pyogrio", "fiona")
#: Debian's build dependencies of those source builds (the libraries QGIS itself loads)
DEBIAN_BUILD_PACKAGES = ("libgdal-dev", "libgeos-dev", "libproj-dev", "python3-dev", "g++")

SETUP_COMMAND = "make setup"


def _is_available(module: str) -> bool:
    if module in sys.modules:
        # ``sys.modules[name] = None`` is Python's documented way to make an import fail.
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_dependencies(required: tuple[Dependency, ...] = REQUIRED) -> list[Dependency]:
    """The dependencies that cannot be imported, in declaration order."""
    return [dep for dep in required if not _is_available(dep.module)]


def _python() -> str:
    python = sys.executable or ""
    # Inside QGIS sys.executable is the qgis binary (Python is embedded): name the system Python.
    return python if os.path.basename(python).startswith("python") else "python3"


def pip_command(missing: list[Dependency]) -> str:
    """The pip command for the pure-Python packages of ``missing`` (the compiled ones come from the system:
    :func:`install_instructions`); it never takes a wheel that bundles GEOS/GDAL/PROJ."""
    names = " ".join(dep.distribution for dep in missing if not dep.compiled)
    if not names:
        return ""
    return f"{_python()} -m pip install --user --no-binary {','.join(BUNDLING_WHEELS)} {names}"


def install_instructions(missing: list[Dependency]) -> list[str]:
    """One line per route: the system's packages for the compiled ones (Debian/Ubuntu, OSGeo4W, conda),
    then pip for the pure-Python ones."""
    compiled = [d for d in missing if d.compiled]
    lines = []
    if compiled:
        debian = " ".join(d.debian for d in compiled if d.debian)
        lines.append(f"Debian/Ubuntu: sudo apt install {debian}")
        builds = [d.source_build for d in compiled if d.source_build]
        if builds:
            lines.append(
                "  where apt's version is too old (Debian 12: shapely 1.8, rasterio 1.3, no pyogrio), build them "
                f"against the system's GDAL/GEOS instead: sudo apt install {' '.join(DEBIAN_BUILD_PACKAGES)} && "
                f"{_python()} -m pip install --user --no-binary {','.join(BUNDLING_WHEELS)} "
                + " ".join(f'"{b}"' for b in builds)
            )
        lines.append("Windows (OSGeo4W Setup, Advanced install): " + ", ".join(d.debian for d in compiled if d.debian))
        lines.append(
            "conda (QGIS from conda-forge): conda install -c conda-forge " + " ".join(d.module for d in compiled)
        )
    if pip := pip_command(missing):
        lines.append(f"then the pure-Python packages: {pip}" if compiled else pip)
    return lines
