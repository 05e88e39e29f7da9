"""The four specialists' typed tools. Importing this package registers every tool."""

from . import maps, raster, stac, vector  # noqa: F401  # noqa: F401
from .base import TOOLS, Tool, ToolContext, get_tool, tools_of  # noqa: F401
