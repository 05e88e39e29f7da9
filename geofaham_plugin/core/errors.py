"""Errors split by audience.

- :class:`ModelRetry`: the model made a fixable mistake; the message is a hint sent back to it.
- :class:`ToolFailed`: a tool could not do the job (no data, service down, empty AOI); the model and the
  orchestrator see it as an observation and may replan. It loses nothing already registered.
- :class:`ModelOutputError`: a model kept producing invalid output past the retry bound (final, typed).
- :class:`ModelHTTPError`: the model server answered with an error or could not be reached.
- :class:`ConfigError`: a setting (an environment variable) has a value that does not parse; one line
  naming the variable, with what to write instead.
- :class:`GeoFahamBug`: our own mistake (a broken invariant); never shown to the model, always propagates.
"""

from __future__ import annotations

import errno
import sqlite3


class GeoFahamError(Exception):
    """Base of every error GeoFaham raises on purpose."""


class ModelRetry(GeoFahamError):
    """Fixable mistake by the model; ``str(self)`` is the hint it gets back."""


class ToolFailed(GeoFahamError):
    """A tool or engine could not produce its output. ``kind`` is machine readable."""

    def __init__(self, message: str, kind: str = "error", hint: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind  # error | empty | coverage | timeout | not_found | invalid_input | cancelled
        self.hint = hint


class ModelOutputError(GeoFahamError):
    """The model's output stayed invalid after the allowed retries."""

    def __init__(self, message: str, role: str, attempts: int, last_output: str = "") -> None:
        super().__init__(message)
        self.role = role
        self.attempts = attempts
        self.last_output = last_output


class NoOtherPlan(GeoFahamError):
    """Replanning has nothing better to offer: every plan it could choose would answer another question (a
    disaster's layers for a question about the user's own). The run keeps what it computed and says what was not
    applied; ``str(self)`` says why, for the run's notes."""


class ModelHTTPError(GeoFahamError):
    def __init__(self, message: str, status_code: int | None = None, body: str = "") -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body


class RealModelBlocked(GeoFahamError):
    """A real model request was attempted while real requests are blocked (tests)."""


class ConfigError(GeoFahamError, ValueError):
    """A setting does not parse. ``str(self)`` is one line: the variable, its value and the hint."""

    def __init__(self, message: str, variable: str, hint: str) -> None:
        super().__init__(f"{message}; hint: {hint}")
        self.variable = variable
        self.hint = hint


class GeoFahamBug(GeoFahamError):
    """Our own bug: a broken invariant. Propagates; never fed to a model."""


class Cancelled(GeoFahamError):
    """The user cancelled the run."""


class InputError(GeoFahamError):
    """Something the user gave cannot be used as it is: the question (empty, not text, naming no disaster
    GeoFaham knows, a future date), an AOI or layer file, the session folder. ``str(self)`` is the message;
    :attr:`line` adds the hint. The CLI prints the line and exits 2; the dock shows the same line."""

    def __init__(self, message: str, hint: str, kind: str = "invalid_input") -> None:
        super().__init__(message)
        self.hint = hint
        self.kind = kind  # invalid_input | not_identified | not_found | storage

    @property
    def line(self) -> str:
        return f"{self}; hint: {self.hint}"


#: errno values of a disk that is full or over quota, of a folder that cannot be written, of a path that is no folder
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_DENIED = {errno.EACCES, errno.EPERM, errno.EROFS}
_NOT_A_FOLDER = {errno.ENOTDIR, errno.EEXIST, errno.EISDIR}
#: what SQLite, GDAL and the GeoPackage driver say about a file they could not write or read back: a full
#: disk shows as "no such table: gpkg_geometry_columns" or a failed commit, a damaged file as "malformed"
_STORAGE_SIGNS = (
    "file is not a database",
    "database disk image is malformed",
    "database or disk is full",
    "disk i/o error",
    "no such table: gpkg_",
    "failed to commit transaction",
    "failed to write features",
    "not recognized as a supported file format",
    "unexpected end of",
    "truncated",
    "readonly database",
    "read-only",
    # what the FlatGeobuf and shapefile writers say when a write is cut short (a full disk, a file size limit)
    "i/o failure",
    "file too large",
    "fwrite()",
)
STORAGE_HINT = (
    "the disk may be full, the folder not writable or a session file damaged: free some space, "
    "or start a new session folder (--session DIR, or a new session in the dock)"
)
_FULL_HINT = "free some space, or choose a session folder on another disk (--session DIR)"
FOLDER_HINT = "choose a folder you can write to (--session DIR, GEOFAHAM_SESSIONS or GEOFAHAM_CACHE)"


def _oserror_line(exc: OSError) -> str | None:
    where = f" ({exc.filename})" if exc.filename else ""
    if exc.errno in _FULL:
        return f"the disk is full{where}; hint: {_FULL_HINT}"
    if exc.errno in _DENIED:
        return f"cannot write{where}: {exc.strerror or 'permission denied'}; hint: {FOLDER_HINT}"
    if exc.errno in _NOT_A_FOLDER:
        return f"cannot use{where} as a folder: {exc.strerror}; hint: {FOLDER_HINT}"
    return None


def user_line(exc: BaseException) -> str | None:
    """The one line (message; hint) for an error the user can cause or fix (a bad input, a full disk, a
    folder that cannot be written, a damaged session file, a setting, an unreachable model server), or
    None for our own bug (then the caller logs the traceback and says where it is)."""
    if isinstance(exc, GeoFahamBug):
        return None
    if isinstance(exc, InputError):
        return exc.line
    if isinstance(exc, ToolFailed):
        return f"{exc}" + (f"; hint: {exc.hint}" if exc.hint else "")
    if isinstance(exc, GeoFahamError):
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, UnicodeError):
        return f"a file is not UTF-8 text ({exc}); hint: {STORAGE_HINT}"
    if isinstance(exc, OSError) and (line := _oserror_line(exc)) is not None:
        return line
    if "no space left" in str(exc).lower():
        return f"the disk is full; hint: {_FULL_HINT}"
    if storage_error(exc):
        first = str(exc).strip().splitlines()[0]
        first = first if len(first) <= 160 else first[:157] + "..."
        return f"a file of the session could not be written or read ({first}); hint: {STORAGE_HINT}"
    return None


def storage_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a file that could not be written or read back (SQLite, the OS, GDAL's writers): a full
    disk, a size limit, a damaged file."""
    text = str(exc).lower()
    storage = isinstance(exc, sqlite3.Error | OSError) or type(exc).__module__.startswith("pyogrio")
    return storage and any(sign in text for sign in _STORAGE_SIGNS)


class DeadlineReached(GeoFahamError):
    """The run took longer than its deadline (``GEOFAHAM_RUN_DEADLINE_S``); it stops between steps."""
