"""The example bank (data: ``planning/data/reading_bank.jsonl``, question -> reading in four languages) and the
retrieval of the examples most like a question: cosine of character 3-gram and word counts of the normalised
texts (local, no model; a bank of a few hundred lines is scored in a millisecond)."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from functools import cache
from pathlib import Path

from pydantic import BaseModel

from .schema import Reading

BANK_FILE = Path(__file__).resolve().parents[1] / "data" / "reading_bank.jsonl"


class Example(BaseModel):
    id: str
    lang: str
    q: str
    a: Reading


def plain(text: str) -> str:
    """Lower case, accents stripped, digits as 0, every other run of non-letters one space."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    text = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(re.findall(r"[a-z0]+", re.sub(r"\d+", "0", text)))


def _grams(text: str) -> Counter[str]:
    t = plain(text)
    padded = f" {t} "
    grams = Counter(padded[i : i + 3] for i in range(len(padded) - 2))
    grams.update(f"w:{w}" for w in t.split() if len(w) > 2)
    return grams


def _norm(c: Counter[str]) -> float:
    return math.sqrt(sum(v * v for v in c.values())) or 1.0


@cache
def load_bank(path: Path = BANK_FILE) -> tuple[Example, ...]:
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return tuple(Example.model_validate(json.loads(line)) for line in lines if line.strip())


@cache
def _indexed(path: Path = BANK_FILE) -> tuple[tuple[Example, Counter[str], float], ...]:
    return tuple((e, g, _norm(g)) for e in load_bank(path) for g in [_grams(e.q)])


def similar(question: str, k: int = 4, path: Path = BANK_FILE, skip: int = 0) -> list[Example]:
    """The ``k`` examples most like ``question`` after the ``skip`` most like it, most similar first."""
    q = _grams(question)
    qn = _norm(q)
    scored = [(sum(v * g.get(t, 0) for t, v in q.items()) / (qn * n), e.id, e) for e, g, n in _indexed(path)]
    scored.sort(key=lambda x: (-x[0], x[1]))
    return [e for _, _, e in scored[skip : skip + k]]
