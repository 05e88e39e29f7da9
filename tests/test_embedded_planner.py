"""The embedded 1.5B model (real llama.cpp server) where its choice decides the plan.

Two guided planning calls on one server. Each question is neither a bench question nor a template
example (checked with the measure of ``test_examples_apart``), leaves several candidate templates
after the pre-pass, and needs a slot the pre-pass cannot fill, so code alone cannot answer it: the
assertions fail when the model picks the wrong template or the wrong slot value."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from geofaham_plugin.core.config import settings_from_env
from geofaham_plugin.core.llm import build_llm
from geofaham_plugin.core.planning.planner import (
    CLOSE_FIT,
    MAX_CANDIDATES,
    Planner,
    PlanResult,
    facts_slots,
    rank_templates,
)
from geofaham_plugin.core.planning.prepass import prepass
from geofaham_plugin.core.store.store import ResponseStore
from tests.test_examples_apart import bench_questions, example_questions, too_close

pytestmark = [pytest.mark.llm, pytest.mark.slow]

# "built-up" names no index the pre-pass knows (it maps vegetation/greenness/water words), and the
# question also fits burn severity and flood mapping: the model must choose index_change with NDBI.
BUILT_UP = "Has the urban built-up area of Colombo changed after Cyclone Ditwah?"
# "pair" is no number the pre-pass reads (k stays open, the default would be 3), and "clinics ... the
# flood" also fits features_in_hazard: the model must choose nearest_features with k = 2.
PAIR = "Which pair of clinics lies closest to the Busia flood?"
QUESTIONS = [BUILT_UP, PAIR]


def candidates(question: str) -> tuple[list[str], dict[str, Any]]:
    """What the guided planner offers the model: close-fitting templates and the slots code filled."""
    facts = prepass(question)
    ranked = rank_templates(facts)
    close = [name for name, score in ranked[:MAX_CANDIDATES] if score >= ranked[0][1] - CLOSE_FIT]
    return close, facts_slots(facts)


def test_the_questions_need_the_model():
    """Offline precondition of the model test: new questions, several candidates, an open slot."""
    asked = [("embedded_test", q) for q in QUESTIONS]
    assert not too_close(asked, bench_questions()) and not too_close(asked, example_questions())
    built_up, known = candidates(BUILT_UP)
    assert len(built_up) >= 2 and "index_change" in built_up and "index" not in known
    pair, known = candidates(PAIR)
    assert len(pair) >= 2 and "nearest_features" in pair and "k" not in known
    assert known["feature_class"] == "healthcare"


def test_embedded_qwen_chooses_template_and_open_slot(tmp_path, record_property, capsys):
    settings = settings_from_env({"GEOFAHAM_CACHE": str(settings_from_env().paths.cache_dir)})
    assert settings.embedded_model_path.is_file(), "run `make setup` (stage models) first"
    llm = build_llm(settings)
    store = ResponseStore(tmp_path / "s")
    results: dict[str, PlanResult] = {}
    seconds: dict[str, float] = {}
    try:
        for question in QUESTIONS:
            t0 = time.monotonic()
            results[question] = Planner(llm).plan(prepass(question), store, step=f"plan {len(results) + 1}")
            seconds[question] = round(time.monotonic() - t0, 1)
    finally:
        llm.close()
        store.close()
    calls = [c for c in llm.usage.snapshot() if c.role == "planner"]
    report = {
        "calls": len(calls),
        "prompt_tokens": [c.prompt_tokens for c in calls],
        "completion_tokens": [c.completion_tokens for c in calls],
        "attempts": [c.attempts for c in calls],
        "seconds_first_incl_server_start": seconds[BUILT_UP],
        "seconds_second": seconds[PAIR],
        "choices": {q: [r.template, r.slots] for q, r in results.items()},
    }
    for key, value in report.items():
        record_property(key, json.dumps(value, default=str))
    with capsys.disabled():
        print(f"\n[embedded 1.5B planning calls] {json.dumps(report, default=str)}")

    assert len(calls) == 2 and all(c.prompt_tokens < 1800 for c in calls)
    built_up = results[BUILT_UP]
    assert built_up.model_called and built_up.ledger.disaster_event_id == 17
    assert (built_up.template, built_up.slots.get("index")) == ("index_change", "ndbi"), report["choices"]
    assert [s.tool for s in built_up.plan.steps] == ["event_aoi", "search_imagery", "search_imagery", "index_change"]
    pair = results[PAIR]
    assert pair.model_called and pair.ledger.disaster_event_id == 10
    assert (pair.template, pair.slots.get("k"), pair.slots.get("feature_class")) == (
        "nearest_features",
        2,
        "healthcare",
    ), report["choices"]
    assert [s.tool for s in pair.plan.steps] == ["load_event_layer", "get_features", "nearest"]
