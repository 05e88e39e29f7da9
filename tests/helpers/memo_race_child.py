"""Child process for the memo race test: remembers COUNT entries in the memo of SESSION_DIR as fast as
it can, while another copy of itself does the same.

    python memo_race_child.py SESSION_DIR WRITER COUNT

Entry i of writer ``w<n>`` is ``"op w<n> i" -> a_<n:04x><i:04x>``. Prints ``done COUNT`` at the end."""

from __future__ import annotations

import sys

from geofaham_plugin.core.orchestrator.runlog import RunLog


def main() -> None:
    session, writer, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    log = RunLog(session)
    n = int(writer[1:])
    for i in range(count):
        log.remember(f"op {writer} {i}", f"a_{n:04x}{i:04x}")
        log.recall(f"op {writer} {i}")  # readers run between the writers too
    print("done", count, flush=True)


if __name__ == "__main__":
    main()
