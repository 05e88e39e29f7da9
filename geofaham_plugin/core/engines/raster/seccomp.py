"""A seccomp filter for the sandbox child, built from ctypes (no libseccomp): the kernel refuses the
system calls generated code never needs and an escape would, whatever Python-level checks were
switched off. Denied with ``EPERM``: new processes (``fork``, ``vfork``, ``clone`` without
``CLONE_THREAD`` - threads stay allowed), every socket (TCP, and UNIX sockets such as PostgreSQL's or
X11's, which neither Landlock before ABI 8 nor a network namespace stops), ``setsid``/``setpgid``,
``execve``, ``ptrace`` and other processes' memory, namespaces and mounts, ``io_uring`` (it opens
sockets and files without the system calls above), BPF, perf and keyrings; the host's names
(``sethostname``, ``setdomainname``) and kernel log (``syslog``/``klogctl``); device and FIFO nodes
(``mknod``); ``memfd_create`` (its memory is outside ``RLIMIT_AS``); ``chmod``/``fchmod``/``fchmodat``
setting a setuid or setgid bit (other modes pass); the ``ioctl`` requests that set inode flags (immutable,
append-only: ``FS_IOC_SETFLAGS``, ``FS_IOC_FSSETXATTR``). ``clone3`` answers ``ENOSYS`` so the C
library falls back to ``clone``, whose flags the filter can read. A call from another ABI (x32, i386)
kills the process.

Used only by the sandbox child, just before it runs code; irreversible for that process and its
threads. Where seccomp is missing :func:`restrict` reports why and changes nothing."""

from __future__ import annotations

import ctypes
import errno
import platform

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_RET_ALLOW, _RET_ERRNO, _RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|..|K, BPF_RET|K
_CLONE_THREAD = 0x00010000
_X32_BIT = 0x40000000
_SET_ID_BITS = 0o6000  # S_ISUID | S_ISGID
#: inode flag ioctls (the immutable and append-only flags): FS_IOC_SETFLAGS, its 32-bit twin, FS_IOC_FSSETXATTR
_SETFLAGS_IOCTLS = (0x40086602, 0x40046602, 0x401C5820)

#: per machine: (AUDIT_ARCH, {denied syscall: number}, clone, clone3, {chmod-like: (number, index of the mode
#: argument)}, ioctl)
_ARCH = {
    "x86_64": (
        0xC000003E,
        {
            "fork": 57,
            "vfork": 58,
            "execve": 59,
            "execveat": 322,
            "socket": 41,
            "socketpair": 53,
            "setsid": 112,
            "setpgid": 109,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "unshare": 272,
            "setns": 308,
            "mount": 165,
            "io_uring_setup": 425,
            "bpf": 321,
            "perf_event_open": 298,
            "userfaultfd": 323,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "sethostname": 170,
            "setdomainname": 171,
            "syslog": 103,
            "mknod": 133,
            "mknodat": 259,
            "memfd_create": 319,
            "memfd_secret": 447,  # nosec B105 (a system call number, not a password)
        },
        56,
        435,
        {"chmod": (90, 1), "fchmod": (91, 1), "fchmodat": (268, 2), "fchmodat2": (452, 2)},
        16,
    ),
    "aarch64": (
        0xC00000B7,
        {
            "execve": 221,
            "execveat": 281,
            "socket": 198,
            "socketpair": 199,
            "setsid": 157,
            "setpgid": 154,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "unshare": 97,
            "setns": 268,
            "mount": 40,
            "io_uring_setup": 425,
            "bpf": 280,
            "perf_event_open": 241,
            "userfaultfd": 282,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "sethostname": 161,
            "setdomainname": 162,
            "syslog": 116,
            "mknodat": 33,
            "memfd_create": 279,
            "memfd_secret": 447,  # nosec B105 (a system call number, not a password)
        },
        220,
        435,
        {"fchmod": (52, 1), "fchmodat": (53, 2), "fchmodat2": (452, 2)},
        29,
    ),
}


class _Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Filter))]


def program(machine: str | None = None) -> list[tuple[int, int, int, int]]:
    """The BPF program as (code, jt, jf, k) rows, for ``machine`` (default: this one)."""
    arch, denied, clone, clone3, chmods, ioctl = _ARCH[machine or platform.machine()]
    # rows with symbolic jump targets, resolved below
    rows: list[tuple[int, str | int, str | int, int]] = [
        (_LD_ABS, 0, 0, 4),
        (_JEQ, 0, "kill", arch),
        (_LD_ABS, 0, 0, 0),
    ]
    if arch == _ARCH["x86_64"][0]:
        rows.append((_JGE, "kill", 0, _X32_BIT))
    rows += [(_JEQ, "clone", 0, clone), (_JEQ, "nosys", 0, clone3), (_JEQ, "ioctl", 0, ioctl)]
    rows += [(_JEQ, f"mode{index}", 0, nr) for nr, index in sorted(chmods.values())]
    rows += [(_JEQ, "deny", 0, nr) for nr in sorted(denied.values())]
    rows.append((_RET, 0, 0, _RET_ALLOW))
    labels = {"clone": len(rows)}
    rows += [(_LD_ABS, 0, 0, 16), (_JSET, "allow", "deny", _CLONE_THREAD)]  # args[0] low word: clone flags
    for index in sorted({index for _, index in chmods.values()}):  # the mode argument's low word: no set-id bit
        labels[f"mode{index}"] = len(rows)
        rows += [(_LD_ABS, 0, 0, 16 + 8 * index), (_JSET, "deny", "allow", _SET_ID_BITS)]
    labels["ioctl"] = len(rows)
    rows.append((_LD_ABS, 0, 0, 24))  # args[1] low word: the request
    rows += [(_JEQ, "deny", 0, request) for request in _SETFLAGS_IOCTLS]
    rows.append((_RET, 0, 0, _RET_ALLOW))
    for name, ret in (
        ("allow", _RET_ALLOW),
        ("deny", _RET_ERRNO | errno.EPERM),
        ("nosys", _RET_ERRNO | errno.ENOSYS),
        ("kill", _RET_KILL_PROCESS),
    ):
        labels[name] = len(rows)
        rows.append((_RET, 0, 0, ret))

    def jump(at: int, target: str | int) -> int:
        return target if isinstance(target, int) else labels[target] - at - 1

    return [(code, jump(i, jt), jump(i, jf), k) for i, (code, jt, jf, k) in enumerate(rows)]


def available() -> bool:
    return platform.system() == "Linux" and platform.machine() in _ARCH


def restrict() -> str:
    """Install the filter on this process (and the threads it starts later). Returns what was enforced."""
    if not available():
        return "seccomp unavailable (not Linux x86_64/aarch64)"
    rows = program()
    filters = (_Filter * len(rows))(*(_Filter(*row) for row in rows))
    prog = _Prog(len(rows), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"seccomp unavailable (no_new_privs: {errno.errorcode.get(ctypes.get_errno(), '?')})"
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        return f"seccomp unavailable ({errno.errorcode.get(ctypes.get_errno(), '?')})"
    return "seccomp: no processes, sockets, setsid, exec, host names, kernel log, device nodes, memfd, set-id bits"
