"""One masking rule for secrets in text that is printed or written: settings shown by ``config``, error
messages, answers, log lines and run records. Passwords in URLs and libpq DSNs, a URL's user info without a
password (``https://KEY@host``: a key), API keys, tokens and signatures in query strings (``?key=``, ``&sig=``),
``Authorization: Bearer`` values and OpenAI-style keys become ``***``."""

from __future__ import annotations

import re

MASK = "***"

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # the password of a URL's user info (between the ':' after the user name and the '@') becomes ***
    (re.compile(r"(?P<head>\b[a-zA-Z][\w+.-]*://[^\s:/@\"']*:)[^\s@/\"']+(?=@)"), rf"\g<head>{MASK}"),
    # user info without a password (https://KEY@host): the whole of it, a key as often as a name
    (re.compile(r"(?P<head>\b[a-zA-Z][\w+.-]*://)[^\s:/@\"'?#]+(?=@)"), rf"\g<head>{MASK}"),
    # a query parameter naming a key, token, secret or signature (?key=, ?subscription-key=, &sig=)
    (
        re.compile(r"(?P<head>[?&][\w.-]*(?:key|token|secret|sig|signature|password|auth)[\w.-]*=)[^&#\s\"']+", re.I),
        rf"\g<head>{MASK}",
    ),
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
