"""The embedded 1.5B model reads questions beside code (real llama.cpp server): whatever it reads, a question is
answered with the right number or answered partially, never with a confident wrong number. The questions are
new wordings (apart from the bench, the held-out split and the bank) of analyses the product runs."""

from __future__ import annotations

import json
import time

import pytest

from geofaham_plugin.core.config import settings_from_env
from geofaham_plugin.core.llm import build_llm
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.reading.bank import load_bank
from geofaham_plugin.core.store.store import ResponseStore
from tests.test_examples_apart import PARAPHRASES_FILE, bench_questions, too_close

pytestmark = [pytest.mark.llm, pytest.mark.slow]

# question -> the value an answered run must state (count, or percent of a share)
QUESTIONS = {
    "Eaton: count what ended up as ashes, structures only.": 2722,
    "Palisades: structures hurt but still on their feet, how many?": 1013,
    "Of the Eaton fire's damaged buildings, which percentage was completely lost?": 89.2,
}


def test_the_questions_are_new():
    asked = [("reading_model", q) for q in QUESTIONS]
    others = bench_questions() + bench_questions(PARAPHRASES_FILE) + [(e.id, e.q) for e in load_bank()]
    heldout = PARAPHRASES_FILE.with_name("heldout.json")
    if heldout.exists():
        others += bench_questions(heldout)
    assert not too_close(asked, others)


def _value(record) -> float | None:
    for v in record.structured.values:
        if v.group is None and v.measure in ("count", "share"):
            return round(v.value, 1) if v.measure == "share" else v.value
    return None


def test_the_model_reads_and_a_misreading_is_never_a_number(tmp_path, record_property, capsys):
    settings = settings_from_env({"GEOFAHAM_CACHE": str(settings_from_env().paths.cache_dir)})
    assert settings.embedded_model_path.is_file(), "run `make setup` (stage models) first"
    llm = build_llm(settings)
    outcomes = {}
    try:
        for i, (question, expected) in enumerate(QUESTIONS.items()):
            store = ResponseStore(tmp_path / f"s{i}")
            t0 = time.monotonic()
            record = Orchestrator(store, llm, settings=settings).run(question)
            value = _value(record)
            if value is not None and record.structured.values[0].measure == "share":
                value = round(100 * value, 1) if value <= 1 else value
            outcomes[question] = {
                "status": record.status,
                "value": value,
                "seconds": round(time.monotonic() - t0, 1),
                "right": record.status == "answered" and value is not None and abs(value - expected) < 0.15,
            }
            store.close()
    finally:
        llm.close()
    reads = [c for c in llm.usage.snapshot() if c.role == "reader"]
    record_property("outcomes", json.dumps(outcomes))
    with capsys.disabled():
        print(f"\n[embedded 1.5B reading] {json.dumps(outcomes)}; reader calls {len(reads)}")
    assert reads, "the model was never asked to read"
    wrong = {q: o for q, o in outcomes.items() if o["status"] == "answered" and not o["right"]}
    assert not wrong, f"confident wrong numbers: {wrong}"
