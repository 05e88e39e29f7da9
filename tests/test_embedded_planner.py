"""The embedded 1.5B model (real llama.cpp server) on one guided planning call."""

from __future__ import annotations

import json
import time

import pytest

from geofaham_plugin.core.config import settings_from_env
from geofaham_plugin.core.llm import build_llm
from geofaham_plugin.core.planning.planner import Planner
from geofaham_plugin.core.planning.prepass import prepass
from geofaham_plugin.core.store.store import ResponseStore

pytestmark = [pytest.mark.llm, pytest.mark.slow]


def test_embedded_qwen_plans_the_eaton_hospitals_question(tmp_path, record_property, capsys):
    settings = settings_from_env({"GEOFAHAM_CACHE": str(settings_from_env().paths.cache_dir)})
    assert settings.embedded_model_path.is_file(), "run `make setup` (stage models) first"
    llm = build_llm(settings)
    store = ResponseStore(tmp_path / "s")
    try:
        facts = prepass("Which hospitals are within 5 km of the Eaton fire perimeter?")
        t0 = time.monotonic()
        result = Planner(llm, always_ask_model=True).plan(facts, store)
        seconds = time.monotonic() - t0
    finally:
        llm.close()
        store.close()
    (call,) = [c for c in llm.usage.snapshot() if c.role == "planner"]
    report = {
        "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens,
        "attempts": call.attempts,
        "seconds_incl_server_start": round(seconds, 1),
    }
    for key, value in report.items():
        record_property(key, value)
    with capsys.disabled():
        print(f"\n[embedded 1.5B planning call] {json.dumps(report)}")
    assert result.model_called
    assert result.ledger.disaster_event_id == 11
    assert result.template == "features_near_hazard"
    assert result.slots["distance_m"] == 5000.0 and result.slots["feature_class"] == "healthcare"
    assert [s.tool for s in result.plan.steps] == ["load_event_layer", "get_features", "within_distance"]
    assert call.prompt_tokens < 1500
