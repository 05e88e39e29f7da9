"""Vector specialist: road access. Which origins can still reach which targets by road when a hazard cuts the
network (engines/network.py), and the cut roads as a layer."""

from __future__ import annotations

from typing import Literal

import geopandas as gpd
from pydantic import BaseModel, Field

from ..domain.names import AgentName
from ..engines import network as net
from ..store.models import ArtifactKind, ArtifactRecord
from .base import VECTOR_KINDS, InputSpec, ToolContext, tool
from .vector import _carry

V = AgentName.vector
ROADS = InputSpec("roads", VECTOR_KINDS, frozenset({"line"}), "OSM road lines with a highway field")
HAZARD = InputSpec("hazard", VECTOR_KINDS, frozenset({"polygon"}), "hazard polygons (flood, fire, damage buffer)")


def _source(roads: ArtifactRecord) -> str:
    """The network's source and date, as the roads layer states them."""
    said = [str(roads.extra[k]) for k in ("attribution", "event_id", "date", "source_date") if roads.extra.get(k)]
    return f"road network: {roads.id} ({roads.source})" + (f", {', '.join(said)}" if said else ", date not stated")


def _name(gdf: gpd.GeoDataFrame, i: int) -> str:
    if "name" in gdf.columns and isinstance(gdf["name"].iloc[i], str) and gdf["name"].iloc[i]:
        return str(gdf["name"].iloc[i])
    return f"#{i + 1}"


class ReachabilityArgs(BaseModel):
    max_km: float | None = Field(default=None, gt=0, le=500, description="longest route by road (km); null: any")
    vehicle: Literal["drivable", "all"] = Field(default="drivable", description="drivable roads, or all paths too")
    max_snap_m: float = Field(default=500.0, gt=0, le=5000, description="farthest a feature may be from a road (m)")


@tool(
    agent=V,
    args=ReachabilityArgs,
    output=ArtifactKind.table,
    optional_inputs=("hazard",),
    inputs=(
        ROADS,
        InputSpec("origins", VECTOR_KINDS, description="where trips start (schools, settlements, buildings)"),
        InputSpec("targets", VECTOR_KINDS, description="facilities to reach (fire station, hospitals)"),
        HAZARD,
    ),
)
def road_reachability(
    ctx: ToolContext,
    args: ReachabilityArgs,
    roads: ArtifactRecord,
    origins: ArtifactRecord,
    targets: ArtifactRecord,
    hazard: ArtifactRecord | None = None,
) -> ArtifactRecord:
    """Which origins can reach which targets by road before and after the hazard cuts it: network distance, time,
    detour ratio, status (reachable, detour, cut off)."""
    network = net.build_network(ctx.store.read_vector(roads.id), args.vehicle)
    o_gdf, t_gdf = ctx.store.read_vector(origins.id), ctx.store.read_vector(targets.id)
    h_gdf = ctx.store.read_vector(hazard.id) if hazard is not None else None
    result = net.reachability(network, o_gdf, t_gdf, h_gdf, args.max_km, args.max_snap_m)
    table = result.pairs.copy()
    table.insert(1, "origin_name", [_name(o_gdf, i) for i in table["origin"]])
    table.insert(3, "target_name", [_name(t_gdf, i) for i in table["target"]])
    counts = table["status"].value_counts().to_dict()
    summary = (
        f"{len(o_gdf)} origins x {len(t_gdf)} targets by road: "
        + ", ".join(f"{n} {s}" for s, n in counts.items())
        + f"; {len(result.isolated_origins)} origins lose every target"
        + (f" ({int(result.cut.sum())} road segments cut by {hazard.id})" if hazard is not None else "")
    )
    inputs = [r.id for r in (roads, origins, targets, hazard) if r is not None]
    return ctx.store.register_table(
        table,
        source="vector.road_reachability",
        inputs=inputs,
        summary=summary,
        extra={
            **_carry(origins),
            "statuses": counts,
            "isolated_origins": [_name(o_gdf, i) for i in result.isolated_origins],
            "isolated_targets": [_name(t_gdf, i) for i in result.isolated_targets],
            "cut_segments": int(result.cut.sum()),
            "limitations": _carry(origins).get("limitations", []) + [_source(roads), *result.notes],
        },
    )


class CutRoadsArgs(BaseModel):
    vehicle: Literal["drivable", "all"] = Field(default="drivable", description="drivable roads, or all paths too")


@tool(agent=V, args=CutRoadsArgs, output=ArtifactKind.vector, inputs=(ROADS, HAZARD))
def cut_roads(ctx: ToolContext, args: CutRoadsArgs, roads: ArtifactRecord, hazard: ArtifactRecord) -> ArtifactRecord:
    """The roads the hazard cuts (bridges over it kept open), as a layer with the cut length per road."""
    network = net.build_network(ctx.store.read_vector(roads.id), args.vehicle)
    h_gdf = ctx.store.read_vector(hazard.id)
    cut = net.hazard_cuts(network, h_gdf)
    out = net.cut_roads(network, cut)
    km = float(out["cut_m"].sum()) / 1000 if len(out) else 0.0
    return ctx.store.register_vector(
        out,
        source="vector.cut_roads",
        inputs=[roads.id, hazard.id],
        summary=f"{len(out)} of {len(network.roads)} roads of {roads.id} cut by {hazard.id} ({km:.1f} km of road)",
        extra={
            **_carry(roads),
            "cut_segments": int(cut.sum()),
            "style": "cut_roads",
            "limitations": _carry(roads).get("limitations", []) + [_source(roads), *net.network_notes(network, h_gdf)],
        },
    )
