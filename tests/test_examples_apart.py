"""Template examples stay apart from bench questions.

A template example is shown to the planner model as a worked answer; if it is a bench question (or a
near copy), the bench measures recall of the example, not planning. Every example question of every
template is compared with every bench task question, follow-up turns included — the tasks of
``bench/tasks.json`` and of the paraphrase suite ``bench/paraphrases.json`` alike.

Similarity: ``difflib.SequenceMatcher(None, a, b).ratio()`` (2·matches / total length, Python's
documented measure) on normalised text — lower case, accents stripped, every run of characters other
than a-z and 0-9 turned into one space — taking the larger of the two argument orders (the ratio is
not symmetric). A pair above 0.6 fails. On the examples of the day the issue was filed this caught the
two word-for-word copies (1.0) and the near copies (0.92, 0.84, 0.78) and every shared sentence frame
above 0.6."""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from pathlib import Path

from geofaham_plugin.core.planning.templates import TEMPLATE_DIR

TASKS_FILE = Path(__file__).resolve().parents[1] / "bench" / "tasks.json"
PARAPHRASES_FILE = TASKS_FILE.with_name("paraphrases.json")
MAX_SIMILARITY = 0.6


def normalise(text: str) -> str:
    """Lower case, accents stripped, runs of anything but letters and digits as one space."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(re.findall(r"[a-z0-9]+", plain))


def similarity(a: str, b: str) -> float:
    """SequenceMatcher ratio of the normalised texts, the larger of both orders."""
    x, y = normalise(a), normalise(b)
    return max(difflib.SequenceMatcher(None, x, y).ratio(), difflib.SequenceMatcher(None, y, x).ratio())


def example_questions() -> list[tuple[str, str]]:
    """(template name, question) of every example, read from the template files themselves."""
    out = []
    for path in sorted(TEMPLATE_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out += [(data["name"], e["question"]) for e in data.get("examples", [])]
    return out


def bench_questions(path: Path = TASKS_FILE) -> list[tuple[str, str]]:
    """(task id, question) of every task of a task file and every follow-up turn (``id#n``)."""
    out = []
    for task in json.loads(path.read_text(encoding="utf-8"))["tasks"]:
        out.append((task["id"], task["question"]))
        out += [(f"{task['id']}#{i}", turn["question"]) for i, turn in enumerate(task.get("follow_ups", []), 1)]
    return out


def too_close(
    examples: list[tuple[str, str]], questions: list[tuple[str, str]], limit: float = MAX_SIMILARITY
) -> list[str]:
    return [
        f"{similarity(eq, bq):.2f} {name}: {eq!r} ~ {task}: {bq!r}"
        for name, eq in examples
        for task, bq in questions
        if similarity(eq, bq) > limit
    ]


def test_the_measure_is_normalised_and_symmetric():
    assert normalise("Which health facilities in València city?") == "which health facilities in valencia city"
    assert similarity("How many?", "how  many") == 1.0
    a, b = "Which hospitals are near the fire?", "Which schools are inside the flood?"
    assert similarity(a, b) == similarity(b, a)


def test_the_check_catches_copies_and_near_copies():
    """The guard itself: a copy, a near copy with another number and place word, and a rewording
    with other classes and places on either side of the line."""
    questions = [("poi_x", "Which hospitals are within 5 km of the Eaton fire perimeter?")]
    assert too_close([("t", "Which hospitals are within 5 km of the Eaton fire perimeter?")], questions)
    assert too_close([("t", "Which hospitals lie within 2 km of the Eaton fire perimeter?")], questions)
    assert not too_close([("t", "List pharmacies no more than 800 m from the Porto Alegre flood water")], questions)


def test_there_are_examples_and_questions_to_compare():
    examples, questions = example_questions(), bench_questions()
    assert len(examples) >= 9 and len({name for name, _ in examples}) == len(list(TEMPLATE_DIR.glob("*.json")))
    assert len(questions) >= 44  # 40 tasks and 4 follow-ups
    assert any(task.endswith("#2") for task, _ in questions)


def test_template_examples_are_not_bench_questions():
    close = too_close(example_questions(), bench_questions())
    assert not close, "template examples too close to bench questions:\n" + "\n".join(close)


def test_template_examples_are_not_paraphrase_suite_questions():
    """Paraphrases, variants and translations (bench/paraphrases.json, follow-ups included) too."""
    questions = bench_questions(PARAPHRASES_FILE)
    assert len(questions) >= 120 and any(task.endswith("#2") for task, _ in questions)
    close = too_close(example_questions(), questions)
    assert not close, "template examples too close to paraphrase suite questions:\n" + "\n".join(close)
