"""The example bank of question readings (``planning/data/reading_bank.jsonl``).

The small reading model is shown the bank's most similar examples as worked answers, so the bank is
data the model learns meaning from: every line must be a valid :class:`Reading`, written with the
generic set names (``damage``, ``hazard``, a feature class, ``layer:<name>``, ``my_area`` as a
reference only), every field value and the combinations of them must be taught, in the four
languages, and no example may be a bench question or a near copy of one (the measure of
``tests/test_examples_apart.py``)."""

from __future__ import annotations

import difflib
import json
from collections import Counter
from pathlib import Path

import pytest

from geofaham_plugin.core.planning.reading.schema import MY_AREA, Reading
from tests.test_examples_apart import (
    MAX_SIMILARITY,
    PARAPHRASES_FILE,
    bench_questions,
    normalise,
    similarity,
    too_close,
)

BANK_FILE = (
    Path(__file__).resolve().parents[1] / "geofaham_plugin" / "core" / "planning" / "data" / "reading_bank.jsonl"
)
LANGUAGE_MINIMA = {"en": 100, "es": 30, "fr": 30, "pt": 30}
MEASURE_MINIMA = {"count": 40, "list": 25, "share": 25, "area": 10, "length": 6, "sum": 6, "mean": 6}
RELATION_MINIMA = {"inside": 25, "outside": 15, "within": 20, "beyond": 12, "nearest": 15, "none": 40}
DAMAGED = ["affected", "minor", "major", "destroyed"]
#: the grade sets the bank's semantics name (destroyed, damaged, damaged but standing, undamaged, not
#: destroyed, minor or major, affected only, heavily damaged or destroyed), each taught several times
NAMED_GRADE_SETS = [
    ["destroyed"],
    DAMAGED,
    ["affected", "minor", "major"],
    ["undamaged"],
    ["undamaged", "affected", "minor", "major"],
    ["minor", "major"],
    ["affected"],
    ["major", "destroyed"],
]


def load_bank() -> list[dict]:
    return [json.loads(line) for line in BANK_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def bank() -> list[dict]:
    return load_bank()


@pytest.fixture(scope="module")
def readings(bank) -> list[Reading]:
    return [Reading.model_validate(row["a"]) for row in bank]


def test_every_line_is_an_example_with_a_valid_reading(bank):
    lines = BANK_FILE.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(bank) >= 220
    for row in bank:
        assert set(row) == {"id", "lang", "q", "a"}, row
        assert row["lang"] in LANGUAGE_MINIMA and row["q"].strip(), row
        assert "subject" in row["a"], row
        Reading.model_validate(row["a"])


def test_only_fields_that_differ_from_the_default_are_written(bank):
    """The subject always, every other field only when it says something."""
    defaults = Reading(subject="x").model_dump()
    for row in bank:
        for field, value in row["a"].items():
            assert field == "subject" or value != defaults[field], (row["id"], field)


def test_ids_and_questions_are_unique(bank):
    ids = [row["id"] for row in bank]
    assert len(set(ids)) == len(ids)
    questions = [row["q"].strip().lower() for row in bank]
    assert len(set(questions)) == len(questions)


def test_every_language_is_taught(bank):
    counts = Counter(row["lang"] for row in bank)
    for lang, minimum in LANGUAGE_MINIMA.items():
        assert counts[lang] >= minimum, (lang, counts)


def test_every_measure_and_relation_is_taught(readings):
    measures = Counter(r.measure for r in readings)
    relations = Counter(r.relation for r in readings)
    for measure, minimum in MEASURE_MINIMA.items():
        assert measures[measure] >= minimum, (measure, measures)
    for relation, minimum in RELATION_MINIMA.items():
        assert relations[relation] >= minimum, (relation, relations)


def test_shares_separate_figures_and_breakdowns_are_taught(readings):
    assert sum(r.separately for r in readings) >= 12
    assert sum(bool(r.share_of) for r in readings) >= 10
    groups = Counter(r.group_by for r in readings if r.group_by)
    assert groups["structure_type"] >= 10 and groups["damage"] >= 8, groups
    layer_fields = sum(n for field, n in groups.items() if field not in ("structure_type", "damage"))
    assert layer_fields >= 6, groups


def test_the_users_area_and_layers_are_taught(readings):
    assert sum(r.reference == MY_AREA for r in readings) >= 10
    with_layers = [r for r in readings if r.subject.startswith("layer:") or (r.reference or "").startswith("layer:")]
    assert len(with_layers) >= 20
    assert any((r.reference or "").startswith("layer:") for r in readings)
    assert all(r.subject != MY_AREA for r in readings), "my_area is a reference only"


def test_every_named_grade_set_is_taught_several_times(readings):
    kept = Counter(tuple(r.grades) for r in readings)
    for grades in NAMED_GRADE_SETS:
        assert kept[tuple(grades)] >= 3, (grades, kept)
    assert kept[()] >= 10  # all structures


def test_the_fields_are_used_consistently(readings):
    """Grades on the damage subject only, in scale order; share_of only on shares (larger than the part, or its
    grades when kinds or a relation narrow the part); a reference
    exactly when there is a relation; separate figures only for several grades."""
    order = ["undamaged", "affected", "minor", "major", "destroyed"]
    for r in readings:
        if r.grades or r.share_of:
            assert r.subject == "damage", r
        assert r.grades == sorted(r.grades, key=order.index) and len(set(r.grades)) == len(r.grades), r
        assert r.share_of == sorted(r.share_of, key=order.index), r
        if r.share_of:  # a larger base; or the same grades, whose part the kinds narrow ("of the destroyed, sheds")
            assert r.measure == "share" and set(r.grades) <= set(r.share_of), r
            assert set(r.grades) < set(r.share_of) or r.kinds or r.relation != "none", r
        assert (r.reference is None) == (r.relation == "none"), r
        if r.separately:
            assert len(r.grades) >= 2, r
        if r.group_by == "damage" or r.group_by == "structure_type":
            assert r.subject == "damage", r


def test_the_set_names_are_generic(readings):
    """Sets are named without their disaster: the generic sets, feature classes and the user's layers."""
    classes = json.loads((BANK_FILE.parents[2] / "data" / "osm_classes.json").read_text(encoding="utf-8"))[
        "classes"
    ].keys()
    known = {"damage", "hazard", *classes}
    indices = json.loads((BANK_FILE.parents[2] / "data" / "rasters.json").read_text(encoding="utf-8"))["indices"]
    known |= {f"index:{name}" for name in indices}  # an index computed from images (issue 27)
    for r in readings:
        for name in (r.subject, r.reference):
            if name is None or name == MY_AREA or name.startswith("layer:"):
                continue
            assert name in known, r


def maybe_close(a: str, b: str, limit: float) -> bool:
    """Cheap upper bound of :func:`similarity`: ``quick_ratio`` (shared characters, either order) is
    never below ``ratio``, so a pair at or under the limit here is apart and needs no full comparison."""
    return difflib.SequenceMatcher(None, normalise(a), normalise(b)).quick_ratio() > limit


def close_to(examples: list[tuple[str, str]], questions: list[tuple[str, str]]) -> list[str]:
    """:func:`too_close` of the examples and questions, the full measure run on the pairs the bound lets through."""
    out = []
    for name, question in examples:
        candidates = [(task, q) for task, q in questions if maybe_close(question, q, MAX_SIMILARITY)]
        out += too_close([(name, question)], candidates)
    return out


def test_the_bound_lets_close_pairs_through():
    a, b = "How many homes burned to the ground?", "How many houses burned to the ground?"
    assert similarity(a, b) > MAX_SIMILARITY and maybe_close(a, b, MAX_SIMILARITY)


def test_bank_questions_are_not_bench_questions(bank):
    examples = [(row["id"], row["q"]) for row in bank]
    close = close_to(examples, bench_questions())
    assert not close, "bank questions too close to bench questions:\n" + "\n".join(close)


def test_bank_questions_are_not_paraphrase_suite_questions(bank):
    examples = [(row["id"], row["q"]) for row in bank]
    questions = bench_questions(PARAPHRASES_FILE)
    assert len(questions) >= 120
    close = close_to(examples, questions)
    assert not close, "bank questions too close to paraphrase suite questions:\n" + "\n".join(close)


def test_bank_questions_are_not_near_copies_of_each_other(bank):
    """Two examples above 0.85 teach the same thing twice."""
    near = [
        f"{similarity(a['q'], b['q']):.2f} {a['id']} ~ {b['id']}"
        for i, a in enumerate(bank)
        for b in bank[i + 1 :]
        if maybe_close(a["q"], b["q"], 0.85) and similarity(a["q"], b["q"]) > 0.85
    ]
    assert not near, "near-duplicate bank questions:\n" + "\n".join(near)


def test_kinds_set_aside_are_taught_in_every_language(bank, readings):
    """'besides', 'other than', 'apart from' put kinds in kinds_out: on damage sets and feature classes, in the four
    languages, never a kind both kept and set aside."""
    langs = Counter(row["lang"] for row, r in zip(bank, readings, strict=True) if r.kinds_out)
    assert all(langs[lang] >= 2 for lang in LANGUAGE_MINIMA), langs
    subjects = {r.subject for r in readings if r.kinds_out}
    assert "damage" in subjects and len(subjects) >= 3, subjects
    assert all(not set(r.kinds) & set(r.kinds_out) for r in readings)
