"""Vector specialist: load a layer of the catalogue by id, above all the user's own layers (``user:<name>``,
added from the CLI's ``--layer`` or the dock's project layers), into the Response Store."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..domain.names import AgentName
from ..engines.layers import UserLayer
from ..store.models import ArtifactKind, ArtifactRecord
from .base import ToolContext, tool


class LoadLayerArgs(BaseModel):
    layer_id: str = Field(
        min_length=1, description="a layer id of the catalogue: user:<name> for the user's own layers"
    )


@tool(agent=AgentName.vector, args=LoadLayerArgs, output=ArtifactKind.vector)
def load_layer(ctx: ToolContext, args: LoadLayerArgs) -> ArtifactRecord:
    """Load a layer by its catalogue id: one of the user's own layers (user:<name>) or a sample layer."""
    entry = ctx.layers.entry(args.layer_id)  # ToolFailed naming the known ids when there is none
    if isinstance(entry, UserLayer):
        _, gdf = ctx.layers.read_user_layer(entry.id)
        return ctx.store.register_vector(
            gdf,
            source=f"vector.load_layer:{entry.id}",
            summary=entry.title,
            extra={
                "layer_id": entry.id,
                "role": entry.role,
                "geometry": entry.geometry,
                "name_field": entry.name_field,
                "fields": [f.model_dump(mode="json") for f in entry.fields],
                "attribution": entry.attribution,
                "limitations": list(entry.limitations),
            },
        )
    data = ctx.layers.read(entry.id)
    limitations = (
        list(entry.limitations)
        + [n for n in data.notes if "skipped" in n]
        + ([f"{data.repaired} invalid geometries repaired"] if data.repaired else [])
    )
    return ctx.store.register_vector(
        data.gdf,
        source=f"vector.load_layer:{entry.id}",
        summary=entry.title,
        extra={
            "layer_id": entry.id,
            "role": entry.role,
            "name_field": entry.name_field,
            "fields": [{"name": str(c)} for c in data.gdf.columns if c != data.gdf.geometry.name],
            "damage_field": entry.damage_field,
            "damage_scale": entry.damage.scale if entry.damage else None,
            "attribution": entry.attribution,
            "limitations": limitations,
            "repaired_geometries": data.repaired,
        },
    )
