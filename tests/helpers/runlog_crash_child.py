"""Child process for the run log crash tests: rewrites one run's record and state until killed.

    python runlog_crash_child.py SESSION_DIR RUN_ID MODE

MODE ``stall``: writes version 2 of the record but stops just before ``os.replace`` (prints
``written <temporary file>`` and sleeps), so the parent can kill it between write and replace.
MODE ``writers``: for every line ``<n>`` read from stdin, forks a writer (printing ``writer <pid>``) that
saves versions n, n+1, n+2 ... of the record and memo entries as fast as it can (answers of different lengths),
printing ``saved <n>`` after each save returned; the parent SIGKILLs the writer at a random moment, and
this process prints ``reaped`` once the writer is gone. (Forking spares a slow import per kill.) The
writers run on a "slow disk": every file written is written in small chunks with pauses, so a kill
lands mid-write often (a plain write of a file in place would then leave half a record behind)."""

from __future__ import annotations

import builtins
import io
import os
import sys
import time
from datetime import UTC, datetime

from geofaham_plugin.core.domain import files
from geofaham_plugin.core.orchestrator.runlog import RunLog, RunRecord


def version(run_id: str, n: int) -> RunRecord:
    """Version ``n`` of the run: its answer says which version it is and is long enough to take a while."""
    return RunRecord(
        run_id=run_id,
        question="crash test",
        status="answered",
        answer=f"version {n} " + "x" * (n % 7 * 200_000),
        notes=[f"note {i}" for i in range(n % 5)],
        started_at=datetime(2026, 12, 1, tzinfo=UTC),
    )


class SlowFile:
    """A file opened for writing whose ``write`` goes out in 64 KiB pieces, 2 ms apart."""

    def __init__(self, fh):
        self._fh = fh

    def write(self, data):
        for i in range(0, len(data), 65536):
            self._fh.write(data[i : i + 65536])
            self._fh.flush()
            time.sleep(0.002)
        return len(data)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._fh.__exit__(*exc)

    def __getattr__(self, name):
        return getattr(self._fh, name)


def slow_disk() -> None:
    """Make every file opened for writing (``open``, ``io.open``, ``os.fdopen``) a :class:`SlowFile`."""

    def slow(opener):
        def wrapped(file, mode="r", *args, **kwargs):
            fh = opener(file, mode, *args, **kwargs)
            return SlowFile(fh) if any(c in mode for c in "wax+") else fh

        return wrapped

    builtins.open = io.open = slow(io.open)
    os.fdopen = slow(os.fdopen)


def main() -> None:
    session, run_id, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    log = RunLog(session)
    if mode == "stall":

        def stalled_replace(src, dst):
            print("written", src, flush=True)
            time.sleep(120)
            os.rename(src, dst)

        files.os.replace = stalled_replace  # the child only: between write+fsync and the replace
        log.save_record(version(run_id, 2))
        return
    for line in sys.stdin:
        start = int(line)
        pid = os.fork()
        if pid == 0:
            try:
                slow_disk()
                n = start
                while True:
                    log.save_record(version(run_id, n))
                    log.remember(f"op {n}", f"a_{n:08x}")
                    print("saved", n, flush=True)
                    n += 1
            finally:
                os._exit(1)
        print("writer", pid, flush=True)
        os.waitpid(pid, 0)
        print("reaped", flush=True)


if __name__ == "__main__":
    main()
