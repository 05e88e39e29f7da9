"""Which Python packages GeoFaham needs, and which of them are missing.

Imports nothing heavy and nothing from Qt: it runs inside ``classFactory`` before the plugin is
built, and from the command line (``python -m geofaham_plugin check``).
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


REQUIRED: tuple[Dependency, ...] = (
    Dependency("pydantic", "pydantic", "typed ledgers, plans and tool arguments"),
    Dependency("openai", "openai", "OpenAI-compatible model servers"),
    Dependency("httpx", "httpx", "HTTP with timeouts and retries"),
    Dependency("shapely", "shapely", "geometry operations"),
    Dependency("pyproj", "pyproj", "coordinate reference systems"),
    Dependency("geopandas", "geopandas", "vector artifacts"),
    Dependency("rasterio", "rasterio", "raster artifacts"),
    Dependency("xarray", "xarray", "lazy raster analysis"),
    Dependency("dask", "dask[array]", "chunked raster computation"),
    Dependency("pystac_client", "pystac-client", "satellite imagery search"),
    Dependency("osmnx", "osmnx", "OpenStreetMap features"),
    Dependency("psycopg2", "psycopg2-binary", "PostGIS databases"),
)

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


def pip_command(missing: list[Dependency]) -> str:
    """The command that installs ``missing`` into the Python that runs QGIS."""
    names = " ".join(dep.distribution for dep in missing)
    python = sys.executable or ""
    # Inside QGIS sys.executable is the qgis binary (Python is embedded): name the system Python.
    if not os.path.basename(python).startswith("python"):
        python = "python3"
    return f"{python} -m pip install --user {names}"
