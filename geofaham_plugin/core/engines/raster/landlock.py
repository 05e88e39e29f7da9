"""Linux Landlock: the kernel confines a process to the files it may read and write, and (ABI >= 4)
forbids TCP bind/connect; (ABI >= 6) forbids signalling processes outside the sandbox. Unlike
Python audit hooks it also binds C code (GDAL opening a file, a socket opened by a C library).

Used only by the sandbox child, just before it runs generated code; irreversible for that process.
Where Landlock is missing (older kernels, not Linux) :func:`restrict` reports why and changes nothing."""

from __future__ import annotations

import ctypes
import os
import platform
import struct
from collections.abc import Iterable

_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446  # same numbers on x86_64 and aarch64
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_FS_BITS_BY_ABI = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16}  # number of filesystem access bits per ABI
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
TRUNCATE, IOCTL_DEV = 1 << 14, 1 << 15
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # rights a rule on a regular file may carry
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1


def abi_version() -> int:
    """The kernel's Landlock ABI (0 when unavailable)."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "aarch64"):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(_SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(int(version), 0)


def restrict(read: Iterable[str], write: Iterable[str]) -> str:
    """Allow reading under ``read`` and everything under ``write``; deny all other filesystem access,
    TCP and outside signals. Returns a description of what was enforced."""
    abi = abi_version()
    if abi <= 0:
        return "landlock unavailable"
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fs_all = (1 << _FS_BITS_BY_ABI.get(abi, 16)) - 1
    net = (NET_BIND_TCP | NET_CONNECT_TCP) if abi >= 4 else 0
    scoped = (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0
    attr = struct.pack("QQQ", fs_all, net, scoped)[: 8 if abi < 4 else 16 if abi < 6 else 24]
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = libc.syscall(_SYS_CREATE, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return f"landlock unavailable ({os.strerror(ctypes.get_errno())})"
    try:
        for paths, rights in ((read, READ_FILE | READ_DIR), (write, fs_all)):
            for path in paths:
                _add(libc, ruleset, path, rights)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS)")
        if libc.syscall(_SYS_RESTRICT, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return f"landlock ABI {abi}: files" + (", tcp" if net else "") + (", signals" if scoped else "")


def _add(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path that does not exist grants nothing
    try:
        if not os.path.isdir(path):
            rights &= FILE_ONLY
        attr = struct.pack("=Qi", rights, fd)  # packed struct landlock_path_beneath_attr
        buf = ctypes.create_string_buffer(attr, len(attr))
        if (
            libc.syscall(
                _SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), buf, ctypes.c_uint32(0)
            )
            != 0
        ):
            raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
    finally:
        os.close(fd)
