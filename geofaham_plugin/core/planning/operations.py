"""The table of everyday operations on the user's layers (``data/operations.json``): which typed tool applies
each, the words that ask for it, how its arguments are filled. Read by the chain planner (:mod:`.chain`) and by
constraint coverage (an operation asked and not run is a part of the question not applied)."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from .prepass import normalise

OPERATIONS_FILE = Path(__file__).parent / "data" / "operations.json"


class Operation(BaseModel):
    """One row of the operations table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    said: tuple[str, ...] = Field(min_length=1)  # the patterns that ask for it
    args: dict[str, str] = Field(default_factory=dict)  # argument -> crs, distance, field, fields ...
    second: str | None = None  # the input another layer of the instruction fills
    grouped_tool: str | None = None  # applies it per value of args.by when no earlier step dissolved by that field


@cache
def operations() -> dict[str, Operation]:
    raw = json.loads(OPERATIONS_FILE.read_text(encoding="utf-8"))["operations"]
    return {name: Operation.model_validate(spec) for name, spec in raw.items()}


@cache
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)(?:" + "|".join(operations()[name].said) + r")(?!\w)")


def operations_asked(question: str) -> list[tuple[int, str, str]]:
    """(position, operation, the words that asked it) for each operation of the table the question asks, in
    the order it says them."""
    text = normalise(question)
    found = [(m.start(), name, m.group(0)) for name in operations() if (m := _pattern(name).search(text))]
    return sorted(found)
