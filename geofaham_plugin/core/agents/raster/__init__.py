"""Raster specialist: typed operations a small model can chain without writing code (index, dNBR,
burn severity, flood extent, threshold, polygons, zonal statistics) and ``run_python`` for models
that write code, run in a separate, resource-limited, network-less sandbox process.

- :mod:`.scene`: the checks before any pixel is read and the grid and lazy loading of the inputs
  (raster artifacts or STAC item sets);
- :mod:`.outputs`: writing, measuring and registering results as COGs (numbers read back from the
  written file, never from a model);
- :mod:`.operations`: the typed tools;
- :mod:`.sandboxed`: the ``run_python`` tool.

Importing this package registers every Raster tool (typed operations first, then ``run_python``)."""

from . import operations, sandboxed  # noqa: F401  (registers the tools)
from .scene import bands_of, check_bands, check_order, common_grid, load_scene  # noqa: F401
