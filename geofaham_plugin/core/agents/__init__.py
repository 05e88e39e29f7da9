"""The four specialists' typed tools. Importing this package registers every tool."""

from . import maps, vector  # noqa: F401
from . import raster, stac  # noqa: F401
from .base import TOOLS, Tool, ToolContext, get_tool, tools_of  # noqa: F401
