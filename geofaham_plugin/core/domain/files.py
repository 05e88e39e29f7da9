"""Durable-file primitives shared by the store, the run log and the model server launcher: atomic
replacement, fsync of files and folders, advisory locks (``fcntl.flock``; no-ops where it is missing),
and setting a damaged file aside instead of deleting it. No Qt, no QGIS, nothing above this floor."""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

try:  # POSIX only; without it locks are no-ops (fine for a single QGIS process on Windows)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)


def fsync_file(path: Path) -> None:
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable. Folders cannot be opened on Windows; there it is a no-op."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some file systems refuse fsync on folders
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that a reader (or a crash) sees the old or the new file, never
    a part: write a temporary file with a unique name in the same folder, fsync it, ``os.replace`` it
    over ``path``, fsync the folder (so the rename itself survives a power cut)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def atomic_write_text(path: str | Path, text: str) -> None:
    """:func:`atomic_write_bytes` of ``text`` in UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"))


def try_lock(fh: IO, *, shared: bool = False) -> bool:
    """Take an advisory lock on the open file ``fh`` without waiting; False when someone holds a
    conflicting one. Locks belong to the open file (not the process): a second ``open`` of the same
    file in the same process conflicts too. Without fcntl: always True."""
    if fcntl is None:  # pragma: no cover - Windows
        return True
    try:
        fcntl.flock(fh.fileno(), (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


def lock(fh: IO, *, shared: bool = False) -> None:
    """Take an advisory lock on ``fh``, waiting for it (see :func:`try_lock`)."""
    if fcntl is not None:
        fcntl.flock(fh.fileno(), fcntl.LOCK_SH if shared else fcntl.LOCK_EX)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on the file ``path`` (created if missing) for the block; other
    processes and other threads (each ``with`` opens the file anew) wait for it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        lock(fh)
        yield  # closing the file releases the lock


def set_aside(path: Path, folder: Path | None = None, suffix: str = "") -> Path:
    """Move a damaged or unexplained file out of the way (into ``folder``, else beside itself with
    ``suffix``) instead of deleting it; a name already taken gets a timestamp. Returns the new path."""
    target_dir = folder or path.parent
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / (path.name + suffix)
    if target.exists():
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        target = target_dir / f"{path.name}{suffix}.{stamp}"
    os.replace(path, target)
    fsync_dir(target_dir)
    log.warning("set aside %s as %s", path, target)
    return target
