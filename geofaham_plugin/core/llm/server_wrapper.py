"""Runs the embedded model server as its child and makes sure it never outlives GeoFaham.

    python server_wrapper.py PARENT_PID FOLDER -- SERVER COMMAND ...

Started by :class:`~.embedded.EmbeddedServer` (by file path, so the interpreter needs nothing but the
standard library and this file). Three layers, so that a parent killed with ``-9`` leaves nothing:

1. The wrapper's own parent-death signal (``prctl(PR_SET_PDEATHSIG, SIGUSR1)``, set by the launcher
   before ``exec``) wakes it when the thread that started it dies; it then checks whether the parent
   *process* is gone (``getppid()`` changed) — a worker thread of QGIS ending is not a reason to stop.
2. A watchdog loop checks ``getppid()`` every quarter second, for systems without ``prctl``.
3. The server itself gets ``PR_SET_PDEATHSIG, SIGKILL`` tied to this single-threaded wrapper: if the
   wrapper is killed, the kernel kills the server.

When the parent is gone the wrapper stops the server (SIGTERM, then SIGKILL) and removes FOLDER (the
server's log folder; the launcher's owner lock there is released with the parent). SIGTERM or SIGINT
to the wrapper stops the server the same way but leaves FOLDER to the launcher. The wrapper exits
with the server's exit code when the server ends on its own."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess  # nosec B404 (starts the llama.cpp server with the argument list it was given, no shell)
import sys
import time
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
WATCH_INTERVAL_S = 0.25


def death_signal_setter(sig: int) -> Callable[[], None]:
    """A ``preexec_fn`` that asks Linux to send ``sig`` to the child when its parent dies. The libc
    function is looked up now, in the parent, so the child between fork and exec only makes the call.
    Elsewhere (no ``prctl``) it does nothing: the watchdog still works."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return lambda: None
    prctl.restype = ctypes.c_int
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return lambda: prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)  # type: ignore[no-any-return]


def _stop(server: subprocess.Popen, timeout: float = 5.0) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if server.poll() is not None:
            return
        try:
            server.send_signal(sig)
            server.wait(timeout)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            continue


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: server_wrapper.py PARENT_PID FOLDER -- COMMAND ...", file=sys.stderr)
        return 2
    parent, folder, command = int(argv[0]), argv[1], argv[3:]
    stop_requested = False

    def parent_gone() -> bool:
        return os.getppid() != parent

    def on_stop(_signum: int, _frame: object) -> None:
        nonlocal stop_requested
        stop_requested = True

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    signal.signal(signal.SIGUSR1, lambda *_: None)  # the parent-death hint: the loop below checks the parent
    if parent_gone():  # died before the death signal was armed
        shutil.rmtree(folder, ignore_errors=True)
        return 0
    # the launcher's own argument list for the staged server binary (no shell)
    server = subprocess.Popen(command, stdin=subprocess.DEVNULL, preexec_fn=death_signal_setter(signal.SIGKILL))  # nosec B603
    while True:
        code = server.poll()
        if code is not None:
            return code
        if stop_requested or parent_gone():
            break
        time.sleep(WATCH_INTERVAL_S)
    orphaned = parent_gone()
    _stop(server)
    if orphaned:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
