"""A memory group for the sandbox's process tree, where this machine lets GeoFaham make one.

``RLIMIT_AS`` bounds each process's address space, but memory a process holds outside it (shared memory, a
``memfd``, tmpfs pages) escapes it. A memory cgroup counts every page the tree charges, shared memory included:
the sandbox makes one below the group this process is in (cgroup v2's ``memory.max`` when the memory controller is
enabled for its children, else v1's ``memory.limit_in_bytes``), moves the child's process tree into it before the
generated code runs, reads whether the kernel killed a process of it for memory, and removes it afterwards. Where
the group cannot be made (no writable memory hierarchy: most unprivileged desktops), the run goes on under the
rlimits and seccomp alone and says so in its isolation notes.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")


def _own_groups(text: str) -> tuple[str | None, str | None]:
    """(the v2 path, the v1 memory path) of this process, from /proc/self/cgroup's text."""
    v2 = v1 = None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            v2 = parts[2]
        elif "memory" in parts[1].split(","):
            v1 = parts[2]
    return v2, v1


def parent_group(root: Path = ROOT) -> tuple[Path, int] | None:
    """(a writable memory group to make the sandbox's group in, its cgroup version), or None."""
    try:
        v2, v1 = _own_groups(Path("/proc/self/cgroup").read_text(encoding="ascii"))
    except OSError:
        return None
    candidates: list[tuple[Path, int]] = []
    if v2 is not None:
        for mount in (root, root / "unified"):
            candidates.append((mount / v2.lstrip("/"), 2))
    if v1 is not None:
        candidates.append((root / "memory" / v1.lstrip("/"), 1))
    for folder, version in candidates:
        if not os.access(folder, os.W_OK):
            continue
        if version == 2:
            try:
                control = (folder / "cgroup.subtree_control").read_text(encoding="ascii").split()
            except OSError:
                continue
            if "memory" not in control:
                continue
        elif not (folder / "memory.limit_in_bytes").exists():
            continue
        return folder, version
    return None


class MemoryGroup:
    """One sandbox run's memory group: made with a limit, given processes, read, removed."""

    def __init__(self, folder: Path, version: int) -> None:
        self.folder, self.version = folder, version

    @classmethod
    def make(cls, limit_bytes: int, root: Path = ROOT) -> MemoryGroup | None:
        """A new group limited to ``limit_bytes`` (swap included where the kernel counts it), or None."""
        parent = parent_group(root)
        if parent is None:
            return None
        folder = parent[0] / f"geofaham-sandbox-{uuid.uuid4().hex[:12]}"
        group = cls(folder, parent[1])
        try:
            folder.mkdir()
            if group.version == 2:
                group._write("memory.max", str(limit_bytes))
                with contextlib.suppress(OSError):
                    group._write("memory.swap.max", "0")
            else:
                group._write("memory.limit_in_bytes", str(limit_bytes))
                with contextlib.suppress(OSError):  # memory + swap: only where the kernel accounts swap
                    group._write("memory.memsw.limit_in_bytes", str(limit_bytes))
        except OSError:
            group.remove()
            return None
        return group

    def _write(self, name: str, value: str) -> None:
        with open(self.folder / name, "w", encoding="ascii") as fh:
            fh.write(value)

    def add(self, pid: int) -> bool:
        """Move ``pid`` (a whole process) into the group; its later children are born in it."""
        try:
            self._write("cgroup.procs", str(pid))
        except OSError:  # gone already
            return False
        return True

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the group for going over its limit."""
        try:
            if self.version == 2:
                events = (self.folder / "memory.events").read_text(encoding="ascii").split()
                return int(dict(zip(events[::2], events[1::2], strict=False)).get("oom_kill", "0")) > 0
            control = (self.folder / "memory.oom_control").read_text(encoding="ascii").split()
            fields = dict(zip(control[::2], control[1::2], strict=False))
            if "oom_kill" in fields:
                return int(fields["oom_kill"]) > 0
            return int((self.folder / "memory.failcnt").read_text(encoding="ascii")) > 0
        except (OSError, ValueError):
            return False

    def remove(self, deadline_s: float = 2.0) -> None:
        """Remove the group once its processes are gone (the caller killed them)."""
        end = time.monotonic() + deadline_s
        while True:
            try:
                self.folder.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > end:
                    return  # still busy: the kernel frees it with its last process; nothing of ours is in it
                time.sleep(0.02)
