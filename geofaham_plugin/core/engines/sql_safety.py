"""Static checks for free SQL written by a model, shared by the PostGIS and SpatiaLite engines.

Why a tokenizer and not regular expressions: a ``;`` or a forbidden word inside a string literal, a
quoted identifier, a comment or a PostgreSQL dollar-quoted string must not count, and one hidden in
such a place by a tokenizer that disagrees with the server must not slip through. The scanner below
follows each dialect's quoting rules (PostgreSQL: ``E'..'`` backslash escapes, ``$tag$..$tag$``, nested
``/* */``; SQLite: backtick and ``[..]`` identifiers) and refuses anything it cannot close.

This is the first of several layers, never the only one: PostGIS runs the statement in a READ ONLY
transaction as a read-only role with a statement timeout; SpatiaLite opens the database read-only,
with an authorizer that denies every write, ATTACH and pragma change, and a progress-handler timeout.

Artifact placeholders ``{{a_1234abcd}}`` are rewritten to the name of a temporary table that the engine
filled from the artifact file; coordinates are never pasted into SQL text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from ..domain.ids import is_artifact_id
from ..errors import ModelRetry

Dialect = Literal["postgres", "sqlite"]

PLACEHOLDER_RE = re.compile(r"\{\{\s*([^{}\s]*)\s*\}\}")

# Words that make a statement more than a read. Most cannot appear inside a SELECT at all (the
# statement must start with SELECT/WITH anyway); INSERT/UPDATE/DELETE/MERGE can (PostgreSQL writable
# CTEs), INTO can (SELECT INTO creates a table). A column with such a name must be double-quoted.
DENIED_KEYWORDS = frozenset(
    [
        "INSERT",
        "UPDATE",
        "DELETE",
        "MERGE",
        "UPSERT",
        "INTO",
        "DROP",
        "CREATE",
        "ALTER",
        "TRUNCATE",
        "GRANT",
        "REVOKE",
        "COPY",
        "ATTACH",
        "DETACH",
        "PRAGMA",
        "VACUUM",
        "REINDEX",
        "CALL",
        "EXECUTE",
        "PREPARE",
        "DEALLOCATE",
        "LISTEN",
        "NOTIFY",
        "UNLISTEN",
        "LOCK",
        "SET",
        "RESET",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "SAVEPOINT",
        "RELEASE",
        "TRANSACTION",
    ]
)

# Functions that read or write files, run other SQL, change settings or roles, take locks or write
# metadata. Matched on the called name (schema prefix ignored), case-insensitively.
DENIED_FUNCTIONS = frozenset(
    [
        "pg_read_file",
        "pg_read_binary_file",
        "pg_stat_file",
        "set_config",
        "nextval",
        "setval",
        "currval",
        "lastval",
        "txid_current",
        "pg_current_xact_id",
        "pg_sleep",
        "pg_sleep_for",
        "pg_sleep_until",
        "ts_stat",  # ts_stat and ts_rewrite run a query given as text
        "ts_rewrite",
        "dblink",
        "populate_geometry_columns",
        "addgeometrycolumn",
        "addauth",
        "lockrow",
        "unlockrows",
        "checkauth",
        "enablelongtransactions",
        "disablelongtransactions",
        "postgis_extensions_upgrade",
        "load_extension",
        "readfile",
        "writefile",
        "edit",
        "fts3_tokenizer",
        "zipfile",
        "fsdir",
        "blobfromfile",
        "blobtofile",
        "insertepsgsrid",
        "sequence_setval",
        "proj_setdatabasepath",
        "elementarygeometries",
        "removeduplicaterows",
        "addtemporarygeometrycolumn",
        "addfdogeometrycolumn",
    ]
)
DENIED_PREFIXES = (
    "pg_ls_",
    "pg_file_",
    "pg_logdir",
    "lo_",
    "dblink",
    "pg_advisory",
    "pg_try_advisory",
    "pg_terminate",
    "pg_cancel",
    "pg_reload",
    "pg_rotate",
    "pg_promote",
    "pg_switch",
    "pg_create_",
    "pg_drop_",
    "pg_backup",
    "pg_start_backup",
    "pg_stop_backup",
    "pg_replication",
    "pg_logical",
    "pg_stat_reset",
    "pg_import",
    "pg_notify",
    "query_to_xml",
    "cursor_to_xml",
    "table_to_xml",
    "schema_to_xml",
    "database_to_xml",
    "import",
    "export",
    "xb_load",
    "xb_store",
    "sqlproc_",
    "storedproc_",
    "storedvar_",
    "create",
    "drop",
    "init",
    "register",
    "unregister",
    "recover",
    "discard",
    "disable",
    "enable",
    "update",
    "invalidate",
    "gpkg",
    "clone",
    "rename",
    "recreate",
    "upgrade",
    "se_",
    "rl2_",
    "wms_",
    "topogeo_",
    "toponet_",
    "st_inittopo",
    "st_createtopo",
    "st_addiso",
    "st_addedge",
    "st_addlink",
    "st_removelink",
    "st_validatetopo",
    "zipfile_",
)

READ_HINT = (
    "write exactly one read-only query: SELECT ... or WITH ... SELECT ..., without a trailing "
    "second statement; data changes, DDL, COPY, SET and file or server functions are not available"
)


class UnsafeSQL(ModelRetry):
    """The query was refused before it ran. ``reason`` says what was wrong, ``hint`` how to fix it;
    ``str()`` carries both, because that is what the model gets back."""

    def __init__(self, reason: str, hint: str = READ_HINT) -> None:
        super().__init__(f"{reason}. Hint: {hint}")
        self.reason = reason
        self.hint = hint


class QueryError(ModelRetry):
    """The database rejected a checked query (syntax, unknown table or column, bad types): the
    model can fix it. ``reason`` is the server's message, ``hint`` what the schema offers."""

    def __init__(self, reason: str, hint: str) -> None:
        super().__init__(f"{reason}. Hint: {hint}")
        self.reason = reason
        self.hint = hint


@dataclass(frozen=True)
class Token:
    kind: str  # ws | comment | string | qident | word | number | param | semicolon | punct
    text: str
    start: int
    value: str | None = None  # decoded content of a PostgreSQL U&"..." identifier or U&'...' string

    @property
    def significant(self) -> bool:
        return self.kind not in ("ws", "comment")

    @property
    def name(self) -> str:
        """Identifier text as the server would resolve it (quotes removed, escapes decoded, lower-cased
        for comparison)."""
        if self.value is not None:
            return self.value.lower()
        if self.kind == "qident":
            inner = self.text[1:-1]
            return inner.replace(self.text[0] * 2, self.text[0]).lower() if self.text[0] != "[" else inner.lower()
        return self.text.lower()


_DOLLAR_RE = re.compile(r"\$([A-Za-z_\x80-\uffff][A-Za-z0-9_\x80-\uffff]*)?\$")
_NUMBER_RE = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
# PostgreSQL only has $1-style parameters (``:x`` is an array slice, ``@x`` the abs operator: treating
# them as parameters would hide the word after them). SQLite also has ?NNN, :name, @name and $name.
_PARAMS = {"postgres": re.compile(r"\$\d+"), "sqlite": re.compile(r"\?\d*|[:@$][A-Za-z_]\w*")}
_SPACE = frozenset(" \t\n\r\f\v")  # ASCII only, as both servers; other characters are identifier characters


def _word_char(c: str) -> bool:
    return c.isalnum() or c in "_$" or (ord(c) > 127 and c not in _SPACE)


def _comment_end(sql: str, i: int, dialect: Dialect) -> int | None:
    """End of the comment starting at ``i`` (None: no comment there); PostgreSQL nests ``/* */``."""
    n = len(sql)
    if sql.startswith("--", i):
        j = sql.find("\n", i)
        return n if j < 0 else j + 1
    if not sql.startswith("/*", i):
        return None
    depth, j = 1, i + 2
    while j < n and depth:
        if sql.startswith("*/", j):
            depth, j = depth - 1, j + 2
        elif dialect == "postgres" and sql.startswith("/*", j):
            depth, j = depth + 1, j + 2
        else:
            j += 1
    if depth:
        raise UnsafeSQL(f"unterminated /* comment starting at character {i}", "close every comment")
    return j


_UESCAPE_RE = re.compile(r"UESCAPE", re.I)
_HEX = frozenset("0123456789abcdefABCDEF")


def _unicode_escape_clause(sql: str, j: int) -> tuple[str, int]:
    """The escape character of a PostgreSQL ``U&`` literal ending at ``j`` (``UESCAPE 'c'`` after
    optional whitespace and comments, else a backslash) and where the literal really ends."""

    def skip(k: int) -> int:
        while k < len(sql):
            if sql[k] in _SPACE:
                k += 1
            elif (end := _comment_end(sql, k, "postgres")) is not None:
                k = end
            else:
                break
        return k

    k = skip(j)
    m = _UESCAPE_RE.match(sql, k)
    if not m or (m.end() < len(sql) and _word_char(sql[m.end()])):
        return "\\", j
    k = skip(m.end())
    lit = re.compile(r"'([^']|'')'").match(sql, k)
    esc = lit.group(1).replace("''", "'") if lit else ""
    if not lit or esc in _HEX or esc in "+'\"" or esc in _SPACE:
        raise UnsafeSQL("invalid UESCAPE clause", "write identifiers and strings plainly, without Unicode escapes")
    return esc, lit.end()


def _decode_unicode(body: str, esc: str) -> str:
    """The content of a ``U&`` literal (quotes doubled inside already undone), as PostgreSQL decodes it:
    ``<esc>XXXX``, ``<esc>+XXXXXX`` (surrogate pairs combined) and ``<esc><esc>``."""
    out: list[str] = []
    i, n = 0, len(body)
    bad = UnsafeSQL("invalid Unicode escape", "write identifiers and strings plainly, without Unicode escapes")
    while i < n:
        c = body[i]
        if c != esc:
            out.append(c)
            i += 1
            continue
        if i + 1 < n and body[i + 1] == esc:
            out.append(esc)
            i += 2
            continue
        width = 6 if body.startswith("+", i + 1) else 4
        start = i + 1 + (width == 6)
        digits = body[start : start + width]
        if len(digits) != width or not set(digits) <= _HEX:
            raise bad
        code = int(digits, 16)
        i = start + width
        if 0xD800 <= code < 0xDC00:  # high surrogate: the low one must follow as another escape
            low = body[i + 1 : i + 5] if body.startswith(esc, i) else ""
            if len(low) != 4 or not set(low) <= _HEX or not 0xDC00 <= int(low, 16) < 0xE000:
                raise bad
            code = 0x10000 + ((code - 0xD800) << 10) + (int(low, 16) - 0xDC00)
            i += 5
        if code == 0 or code > 0x10FFFF or 0xD800 <= code < 0xE000:
            raise bad
        out.append(chr(code))
    return "".join(out)


def tokenize(sql: str, dialect: Dialect) -> list[Token]:
    """Split ``sql`` into tokens following ``dialect``'s quoting; raises :class:`UnsafeSQL` on an
    unterminated string, identifier or comment (never guess where such a thing ends)."""
    out: list[Token] = []
    i, n = 0, len(sql)

    def closing(quote: str, start: int, backslash: bool = False) -> int:
        j = start + 1
        while j < n:
            c = sql[j]
            if backslash and c == "\\":
                j += 2
                continue
            if c == quote:
                if j + 1 < n and sql[j + 1] == quote:
                    j += 2
                    continue
                return j + 1
            j += 1
        raise UnsafeSQL(f"unterminated {quote} quote starting at character {start}", "close every quote")

    while i < n:
        c = sql[i]
        if c in _SPACE:
            j = i + 1
            while j < n and sql[j] in _SPACE:
                j += 1
            out.append(Token("ws", sql[i:j], i))
        elif (end := _comment_end(sql, i, dialect)) is not None:
            j = end
            out.append(Token("comment", sql[i:j], i))
        elif dialect == "postgres" and c in "uU" and sql.startswith("&", i + 1) and sql[i + 2 : i + 3] in ("'", '"'):
            # U&"d\0061ta" / U&'...' [UESCAPE '!']: one token, its value decoded as the server decodes it
            quote = sql[i + 2]
            j = closing(quote, i + 2)
            esc, j_end = _unicode_escape_clause(sql, j)
            value = _decode_unicode(sql[i + 3 : j - 1].replace(quote * 2, quote), esc)
            out.append(Token("qident" if quote == '"' else "string", sql[i:j_end], i, value))
            j = j_end
        elif c == "'":
            prev = out[-1] if out else None
            escaped = (
                dialect == "postgres"
                and prev is not None
                and prev.kind == "word"
                and prev.text.lower() == "e"
                and prev.start + 1 == i
            )
            j = closing("'", i, backslash=escaped)
            out.append(Token("string", sql[i:j], i))
        elif c == '"' or (dialect == "sqlite" and c == "`"):
            j = closing(c, i)
            out.append(Token("qident", sql[i:j], i))
        elif dialect == "sqlite" and c == "[":
            j = sql.find("]", i)
            if j < 0:
                raise UnsafeSQL(f"unterminated [ identifier starting at character {i}", "close every bracket")
            out.append(Token("qident", sql[i : j + 1], i))
            j += 1
        elif dialect == "postgres" and c == "$" and (m := _DOLLAR_RE.match(sql, i)):
            end = sql.find(m.group(0), m.end())
            if end < 0:
                raise UnsafeSQL(f"unterminated dollar quote {m.group(0)} at character {i}", "close every dollar quote")
            j = end + len(m.group(0))
            out.append(Token("string", sql[i:j], i))
        elif m := _PARAMS[dialect].match(sql, i):
            j = m.end()
            out.append(Token("param", sql[i:j], i))
        elif c.isdigit() or (c == "." and i + 1 < n and sql[i + 1].isdigit()):
            j = _NUMBER_RE.match(sql, i).end()  # type: ignore[union-attr]
            out.append(Token("number", sql[i:j], i))
        elif c.isalpha() or c == "_" or ord(c) > 127:  # non-ASCII: identifier characters for both servers
            j = i + 1
            while j < n and _word_char(sql[j]):
                j += 1
            out.append(Token("word", sql[i:j], i))
        elif c == ";":
            j = i + 1
            out.append(Token("semicolon", c, i))
        else:
            j = i + 1
            out.append(Token("punct", c, i))
        i = j
    return out


def denied_function(name: str) -> bool:
    """True for functions no free query may call (files, other SQL, settings, locks, metadata writes)."""
    low = name.lower().rsplit(".", 1)[-1]
    return low in DENIED_FUNCTIONS or low.startswith(DENIED_PREFIXES)


def check_select(sql: str, dialect: Dialect) -> str:
    """The statement, stripped of a trailing ``;``, if it is exactly one read-only SELECT/WITH query;
    else :class:`UnsafeSQL` naming the problem."""
    tokens = [t for t in tokenize(sql, dialect) if t.significant]
    if not tokens:
        raise UnsafeSQL("the query is empty")
    semis = [k for k, t in enumerate(tokens) if t.kind == "semicolon"]
    if semis and any(t.kind != "semicolon" for t in tokens[semis[0] :]):
        raise UnsafeSQL(
            "more than one statement (a ';' is followed by more SQL)",
            "send exactly one SELECT or WITH query, without ';' between statements",
        )
    body = tokens[: semis[0]] if semis else tokens
    if not body:
        raise UnsafeSQL("the query is empty")
    depth = 0
    for tok in body:
        depth += (tok.text == "(") - (tok.text == ")")
        if depth < 0:
            break
    if depth:
        raise UnsafeSQL("unbalanced parentheses", "close every '(' and open no ')' that was not opened")
    first = next((t for t in body if t.text != "("), body[0])
    if first.kind != "word" or first.text.upper() not in ("SELECT", "WITH"):
        raise UnsafeSQL(f"only SELECT or WITH queries are allowed, not {first.text[:20]!r}")
    for k, tok in enumerate(body):
        nxt = body[k + 1] if k + 1 < len(body) else None
        if tok.kind == "word" and tok.text.upper() in DENIED_KEYWORDS:
            raise UnsafeSQL(
                f"{tok.text.upper()} is not allowed in a read-only query",
                READ_HINT + "; double-quote a column that has this name",
            )
        if (
            tok.kind == "word"
            and tok.text.upper() == "FOR"
            and nxt is not None
            and nxt.text.upper() in ("SHARE", "NO", "KEY")
        ):
            raise UnsafeSQL("row locks (FOR SHARE / FOR KEY SHARE) are not allowed")
        if tok.kind in ("word", "qident") and nxt is not None and nxt.text == "(" and denied_function(tok.name):
            raise UnsafeSQL(
                f"function {tok.name}() is not allowed",
                "use spatial and ordinary SQL functions only; files, settings, locks, other SQL "
                "and metadata-changing functions are unavailable",
            )
    end = body[-1].start + len(body[-1].text)
    text = sql[:end]
    if body[-1].kind == "comment":  # pragma: no cover - comments are not significant
        text += "\n"
    return text


def rewrite_placeholders(
    sql: str, artifact_ids: Mapping[str, object] | set[str], table_name: Callable[[str], str]
) -> tuple[str, list[str]]:
    """Replace each ``{{a_1234abcd}}`` by ``table_name(id)``; returns (sql, ids used, in order).
    An unknown or malformed id is the model's mistake: :class:`UnsafeSQL` lists the ids it may use."""
    known = sorted(artifact_ids)
    used: list[str] = []

    def sub(match: re.Match[str]) -> str:
        aid = match.group(1)
        if not is_artifact_id(aid) or aid not in artifact_ids:
            shown = ", ".join("{{" + a + "}}" for a in known) or "none were passed"
            raise UnsafeSQL(f"unknown artifact placeholder {{{{{aid}}}}}", f"artifacts you can use: {shown}")
        if aid not in used:
            used.append(aid)
        return table_name(aid)

    out = PLACEHOLDER_RE.sub(sub, sql)
    if "{{" in out or "}}" in out:
        raise UnsafeSQL("malformed artifact placeholder", "write artifacts as {{a_1234abcd}}")
    return out, used
