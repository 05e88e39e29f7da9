"""Vector specialist: road access. Which origins can still reach which targets by road when a hazard cuts the
network (engines/network.py), and the cut roads as a layer."""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd
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
    title = roads.extra.get("sources") or roads.source
    return f"road network: {roads.id} ({title})" + (f", {', '.join(said)}" if said else ", date not stated")


def _network_facts(roads: ArtifactRecord) -> dict:
    """What the answer says of the network: its source, the date its source states, and the share of the area
    searched that the source covers (an extract covering part of it misses the roads outside)."""
    dated = [str(x) for x in roads.extra.get("limitations", []) if "date" in str(x).lower()]
    coverage = roads.extra.get("coverage")
    return {
        "network_source": str(roads.extra.get("sources") or roads.source),
        "network_date": str(roads.extra.get("date") or (dated[0] if dated else "date not stated")),
        "network_coverage": float(coverage) if isinstance(coverage, (int, float)) else None,
    }


class ReachabilityArgs(BaseModel):
    max_km: float | None = Field(default=None, gt=0, le=500, description="longest route by road (km); null: any")
    vehicle: Literal["drivable", "all"] = Field(default="drivable", description="drivable roads, or all paths too")
    max_snap_m: float = Field(default=500.0, gt=0, le=5000, description="farthest a feature may be from a road (m)")


@tool(
    agent=V,
    args=ReachabilityArgs,
    output=ArtifactKind.table,
    optional_inputs=("hazard", "targets"),
    accepts_empty=("origins",),
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
    targets: ArtifactRecord | None = None,
    hazard: ArtifactRecord | None = None,
) -> ArtifactRecord:
    """Which origins can reach which targets by road before and after the hazard cuts it: network distance, time,
    detour ratio, status (reachable, detour, cut off). Without targets: which origins stay joined to the main road
    network."""
    network = net.build_network(ctx.store.read_vector(roads.id), args.vehicle)
    o_gdf = ctx.store.read_vector(origins.id)
    t_gdf = ctx.store.read_vector(targets.id) if targets is not None else None
    h_gdf = ctx.store.read_vector(hazard.id) if hazard is not None else None
    inputs = [r.id for r in (roads, origins, targets, hazard) if r is not None]
    facts = {**_network_facts(roads), "targets": "features" if targets is not None else "main network"}
    if o_gdf.empty:  # nothing to route from (none within the distance asked): an empty answer, said as such
        return ctx.store.register_table(
            pd.DataFrame(columns=["origin", "origin_name", "target", "target_name", "status"]),
            source="vector.road_reachability",
            inputs=inputs,
            summary="no origins to route from",
            extra={**_carry(origins), **facts, "statuses": {}, "isolated_origins": [], "cut_segments": None},
        )
    engine, router, routed_by = _router(ctx)
    try:
        result = net.reachability(network, o_gdf, t_gdf, h_gdf, args.max_km, args.max_snap_m, router=router)
    finally:
        if engine is not None:
            engine.close()
    result.notes.append(routed_by)
    table = result.pairs.copy()
    o_field, t_field = origins.extra.get("name_field"), targets.extra.get("name_field") if targets else None
    table.insert(1, "origin_name", [net.feature_name(o_gdf, i, o_field) for i in table["origin"]])
    names = [net.feature_name(t_gdf, i, t_field) if t_gdf is not None else "main road network" for i in table["target"]]
    table.insert(3, "target_name", names)
    counts = table["status"].value_counts().to_dict()
    n_targets = len(t_gdf) if t_gdf is not None else 1
    summary = (
        f"{len(o_gdf)} origins x {n_targets} targets by road: "
        + ", ".join(f"{n} {s}" for s, n in counts.items())
        + f"; {len(result.isolated_origins)} origins lose every target"
        + (f" ({int(result.cut.sum())} road segments cut by {hazard.id})" if hazard is not None else "")
    )
    return ctx.store.register_table(
        table,
        source="vector.road_reachability",
        inputs=inputs,
        summary=summary,
        extra={
            **_carry(origins),
            **facts,
            "statuses": counts,
            "isolated_origins": [net.feature_name(o_gdf, i, o_field) for i in result.isolated_origins],
            "isolated_targets": [net.feature_name(t_gdf, i, t_field) for i in result.isolated_targets]
            if t_gdf is not None
            else [],
            "cut_segments": int(result.cut.sum()),
            "bridges_open": net.bridges_in_hazard(network, h_gdf) if h_gdf is not None else 0,
            # the source, the cut model and the bridges kept open are stated by the answer (network_*, bridges_open)
            "limitations": _carry(origins).get("limitations", []) + [n for n in result.notes if not _restated(n)],
        },
    )


def _router(ctx: ToolContext) -> tuple[Any, net.Router | None, str]:
    """(engine to close, router, how routes were computed): pgRouting when the database is PostGIS and has it,
    else networkx in process."""
    if not ctx.settings.database.pg_dsn:
        return None, None, "routes computed with networkx (Dijkstra) in process"
    from ..engines.db import open_engine
    from ..errors import ToolFailed

    try:
        engine = open_engine("postgis", settings=ctx.settings)
    except ToolFailed as exc:
        return None, None, f"routes computed with networkx in process (PostGIS not reachable: {exc})"
    if not engine.has_pgrouting():  # type: ignore[attr-defined]
        engine.close()
        return None, None, "routes computed with networkx in process (the PostGIS database has no pgRouting)"
    return engine, engine.route_costs, "routes computed by pgRouting (pgr_dijkstraCost) on PostGIS"  # type: ignore[attr-defined]


def _restated(note: str) -> bool:
    return note.startswith(("a road is cut where", "bridges are kept open")) or note.endswith(
        "crossing the hazard kept open"
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
