"""Who does the work: one enum for the model roles, the four specialists a subset of it."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """A model role. The four specialists are also the agents a plan step is dispatched to."""

    planner = "planner"
    progress = "progress"
    vector = "vector"
    maps = "maps"
    stac = "stac"
    raster = "raster"


#: The specialists, in the order they are described to a planner.
SPECIALISTS: tuple[Role, ...] = (Role.vector, Role.maps, Role.stac, Role.raster)

#: The name a plan step uses for the specialist that runs it; the same enum as :class:`Role`.
AgentName = Role
