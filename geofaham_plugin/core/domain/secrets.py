"""One masking rule for secrets in text that is printed or written: settings shown by ``config``, error
messages, log lines and run records. Passwords in URLs and libpq DSNs, API keys, tokens and signatures in
query strings, ``Authorization: Bearer`` values and OpenAI-style keys become ``***``."""

from __future__ import annotations

import re

MASK = "***"

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # the password of a URL's user info (between the ':' after the user name and the '@') becomes ***
    (re.compile(r"(?P<head>\b[a-zA-Z][\w+.-]*://[^\s:/@\"']*:)[^\s@/\"']+(?=@)"), rf"\g<head>{MASK}"),
    # libpq key=value DSN and similar settings: password=..., api_key: ..., "token": "..."
    (
        re.compile(
            r"(?P<head>(?<![\w-])[\"']?(?:password|passwd|pwd|api[_-]?key|apikey|access[_-]?token|auth[_-]?token"
            r"|token|secret|client[_-]?secret|sig|signature)[\"']?\s*[=:]\s*[\"']?)(?P<value>[^\s&;,\"'}]+)",
            re.IGNORECASE,
        ),
        rf"\g<head>{MASK}",
    ),
    (re.compile(r"(?P<head>\bBearer\s+)[\w.~+/=-]+", re.IGNORECASE), rf"\g<head>{MASK}"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{12,}"), f"sk-{MASK}"),
)


def mask_secrets(text: str) -> str:
    """``text`` with every secret it holds replaced by ``***`` (see the module docstring)."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text
