"""The tools a model may choose for a step whose tool the plan left open: only those its inputs fit (a small
model's prompt stays within its context), all of the agent's when none fits."""

from __future__ import annotations

from types import SimpleNamespace

from geofaham_plugin.core.agents.base import tools_of
from geofaham_plugin.core.domain.names import AgentName
from geofaham_plugin.core.orchestrator.toolchoice import _fitting
from geofaham_plugin.core.store.models import ArtifactKind


def names(records: dict) -> set[str]:
    return {t.name for t in _fitting(tools_of(AgentName.vector), records)}


def test_a_step_is_offered_only_the_tools_its_inputs_fit():
    vector = SimpleNamespace(kind=ArtifactKind.vector)
    assert names({"features": vector, "mask": vector}) == {"inside", "clip", "outside"}
    assert names({"features": vector, "reference": vector}) == {"within_distance", "nearest"}
    one_layer = names({"layer": vector})
    assert {"buffer", "count", "reproject", "save_layer"} <= one_layer and "inside" not in one_layer
    assert len(one_layer) < len(tools_of(AgentName.vector))
    # inputs no tool takes: every tool of the agent (the model still chooses, the checks still apply)
    assert names({"nonsense": vector}) == {t.name for t in tools_of(AgentName.vector)}
