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
        super().__init__(f"{message}; {hint}")
        self.variable = variable
        self.hint = hint


class GeoFahamBug(GeoFahamError):
    """Our own bug: a broken invariant. Propagates; never fed to a model."""


class Cancelled(GeoFahamError):
    """The user cancelled the run."""


class DeadlineReached(GeoFahamError):
    """The run took longer than its deadline (``GEOFAHAM_RUN_DEADLINE_S``); it stops between steps."""
