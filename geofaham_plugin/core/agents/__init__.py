"""The four specialists' typed tools. Importing this package registers every tool."""

from . import maps, raster, stac, vector  # noqa: F401  # noqa: F401

# isort: split
from . import (
    layers,  # noqa: F401  # after vector: its load_layer comes after the vector tools in every list
    network,  # noqa: F401  # road access (road_reachability, cut_roads)
    transforms,  # noqa: F401  # the file transforms, after the analysis tools
)

# isort: split
from . import everyday  # noqa: F401  # join, snap, normalise, top N, KML folders: after the transforms they use
from .base import TOOLS, Tool, ToolContext, get_tool, tools_of  # noqa: F401
