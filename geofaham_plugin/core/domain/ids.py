"""Artifact ids (``a_`` + 8 hex digits): one pattern for validating, finding and placeholders."""

from __future__ import annotations

import re

#: The bare id, for ``fullmatch``/``search`` inside other patterns.
ARTIFACT_ID_PATTERN = r"a_[0-9a-f]{8}"
#: A whole string that is one artifact id.
ARTIFACT_ID = re.compile(rf"^{ARTIFACT_ID_PATTERN}$")
#: Artifact ids anywhere in a text, with optional square brackets ("[a_1234abcd]" citations).
ARTIFACT_ID_IN_TEXT = re.compile(rf"\[?\b({ARTIFACT_ID_PATTERN})\b\]?")
#: ``{{a_1234abcd}}`` placeholders in free SQL.
ARTIFACT_PLACEHOLDER = re.compile(rf"\{{\{{\s*({ARTIFACT_ID_PATTERN})\s*\}}\}}")


def is_artifact_id(value: object) -> bool:
    """True when ``value`` is a string that is exactly one artifact id."""
    return isinstance(value, str) and ARTIFACT_ID.match(value) is not None


def artifact_ids_in(text: str) -> list[str]:
    """The artifact ids a text mentions, in order, without repeats."""
    return list(dict.fromkeys(ARTIFACT_ID_IN_TEXT.findall(text or "")))
