"""Every Linux capability dropped from the sandbox's worker and converter, whatever user runs GeoFaham.

Run as root (containers, lab VMs), the child would otherwise keep every capability where no user namespace
was taken (and, in one, the namespace's root keeps them there): set the immutable flag, make device nodes,
read the kernel log. Dropped here, before Landlock and seccomp: the bounding set (no later ``exec`` could gain
one back), the ambient set, then the effective, permitted and inheritable sets. Irreversible for the process;
``no_new_privs`` is set by Landlock and seccomp right after. Where the kernel refuses (not Linux), it says so
and changes nothing."""

from __future__ import annotations

import ctypes
import errno
import platform
from pathlib import Path

_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_CAPABILITY_VERSION_3 = 0x20080522


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _last_cap() -> int:
    try:
        return int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        return 63


def drop() -> str:
    """Drop every capability of this process (see the module docstring); returns what was enforced."""
    if platform.system() != "Linux":
        return "capabilities: not Linux"
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(_last_cap() + 1):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() not in (errno.EINVAL, errno.EPERM):
            return f"capabilities kept (bounding set: {errno.errorcode.get(ctypes.get_errno(), '?')})"
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # EINVAL before Linux 4.3: nothing to clear
    header = _Header(_CAPABILITY_VERSION_3, 0)
    data = (_Data * 2)()  # all zero: no capability in any set
    if libc.capset(ctypes.byref(header), data) != 0:
        return f"capabilities kept ({errno.errorcode.get(ctypes.get_errno(), '?')})"
    return "capabilities: none"
