"""Run model-written Python in a separate, confined process.

The boundary is the operating system; the in-process layers are conveniences with clear messages
(code that reaches ``typing.sys.modules`` or a pickle can switch them off, and gains nothing more).

1. Pre-check (here, before anything starts): the code parses; imports are on the allow-list; no
   private or dunder attribute (``__class__``, ``_io``), no ``eval``/``exec``/``getattr`` & co.
2. Process tree: a fresh interpreter (``python -I``) in its own session, in a fresh user namespace
   (run as root too) and PID, mount (own ``/proc``: no other process is visible), network, UTS and IPC
   namespaces (``unshare``) when this machine allows them, with a minimal environment (no API keys). Its supervisor (``sandbox_child``) is a
   subreaper that kills whatever the worker leaves behind; here the whole tree is killed on
   deadline, cancel or quota (descendants found in /proc, then the group; with the PID namespace the
   kernel kills every process in it when its init dies). Limits: CPU time, address space, file
   size, a total quota on the run folder (watched here), a wall clock.
3. Kernel, in the child: every capability dropped (``capabilities``: root keeps none); Landlock (reads only under the interpreter/library roots and the session,
   writes only in the run's output folder, no TCP, no signals outside) and seccomp (no new process -
   so one address-space limit bounds the whole tree -, no socket of any family - UNIX sockets such as
   PostgreSQL's included -, no setsid, no exec, no host name, kernel log, device node, ``memfd_create``
   (memory outside the address-space limit), set-id bit or immutable flag). Both bind C code (GDAL) too. Without Landlock
   (older kernels) generated code is not run unless the user opted in
   (``GEOFAHAM_SANDBOX_ALLOW_NO_LANDLOCK``): files outside the session would be reachable.
4. Audit hook + restricted builtins in the child: sockets, process spawning, ctypes and file access
   outside the session are refused with a clear message; imports made by the generated code itself
   are checked against the allow-list at run time.

Outputs never reach the parent as the code wrote them: a second confined process rewrites them
into plain files and the parent checks those before opening anything (``sandbox_outputs``). The
caller registers them only when the run succeeded; the run folder lives in the store's staging
area and is removed afterwards."""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import signal
import site
import subprocess  # nosec B404 (starts our own sandbox child with an argument list, no shell)
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...config import ComputeSettings
from ...errors import ToolFailed
from .cgroup import MemoryGroup
from .sandbox_child import descendants, kill_tree

MB = 1024 * 1024

CHILD = Path(__file__).with_name("sandbox_child.py")
REPO_ROOT = Path(__file__).resolve().parents[4]
#: modules generated code may import (and their submodules, private ones excepted)
ALLOWED_MODULES = (
    "math",
    "cmath",
    "statistics",
    "json",
    "re",
    "datetime",
    "collections",
    "itertools",
    "functools",
    "dataclasses",
    "typing",
    "enum",
    "decimal",
    "fractions",
    "string",
    "textwrap",
    "numpy",
    "pandas",
    "xarray",
    "dask",
    "rasterio",
    "affine",
    "shapely",
    "pyproj",
    "geopandas",
    "scipy",
    "geofaham_plugin.core.engines.raster",
)
BANNED_NAMES = frozenset(
    {
        "eval",
        "exec",
        "compile",
        "__import__",
        "globals",
        "locals",
        "vars",
        "getattr",
        "setattr",
        "delattr",
        "breakpoint",
        "input",
        "help",
        "exit",
        "quit",
        "open_code",
    }
)


@dataclass(frozen=True)
class Limits:
    cpu_s: int = 60
    memory_mb: int = 3072
    wall_s: float = 180.0
    max_file_mb: int = 4096
    max_output_mb: int = 2048  # the whole run folder: outputs, their clean copies, stdout and stderr
    max_files: int = 1000
    max_log_chars: int = 8000


@dataclass
class SandboxResult:
    """``kind``: ok | rejected (pre-check) | unavailable (no Landlock, not opted in) | violation | error |
    memory | cpu | timeout | quota | refused (an output) | cancelled | crashed."""

    ok: bool
    kind: str
    message: str
    outputs: list[Path] = field(default_factory=list)
    primary: Path | None = None
    stdout: str = ""
    stderr: str = ""
    isolation: list[str] = field(default_factory=list)
    seconds: float = 0.0
    returncode: int | None = None
    line: int | None = None
    pid: int | None = None
    kinds: dict[Path, str] = field(default_factory=dict)


def check_code(code: str, allowed: tuple[str, ...] = ALLOWED_MODULES) -> list[str]:
    """Problems that forbid running ``code`` (empty list: it may run)."""
    try:
        tree = ast.parse(code, filename="<generated>")
    except SyntaxError as exc:
        return [f"syntax error on line {exc.lineno}: {exc.msg}"]
    problems: list[str] = []

    def allowed_module(name: str) -> bool:
        return not any(p.startswith("_") for p in name.split(".")) and any(
            name == m or name.startswith(m + ".") for m in allowed
        )

    for node in ast.walk(tree):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            problems += [
                f"{where}: import of '{a.name}' is not allowed" for a in node.names if not allowed_module(a.name)
            ]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                problems.append(f"{where}: relative imports are not allowed")
            elif not allowed_module(node.module or ""):
                problems.append(f"{where}: import of '{node.module}' is not allowed")
            problems += [f"{where}: private name '{a.name}'" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            problems.append(f"{where}: private attribute '.{node.attr}' is not allowed")
        elif isinstance(node, ast.Name) and (node.id in BANNED_NAMES or node.id.startswith("__")):
            problems.append(f"{where}: '{node.id}' is not allowed")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            problems.append(f"{where}: global/nonlocal is not allowed")
    return list(dict.fromkeys(problems))


#: namespaces for the child, strongest first: a user namespace always where the machine allows one (run as root
#: too: the child's root is no root of the host), PID (+ its own /proc), network, UTS (its own host name) and IPC
#: (its own System V memory, gone with it); without user namespaces (root only) the child drops every capability
NAMESPACES = (
    ("--user", "--map-root-user", "--pid", "--fork", "--kill-child", "--mount-proc", "--net", "--uts", "--ipc"),
    ("--pid", "--fork", "--kill-child", "--mount-proc", "--net", "--uts", "--ipc"),
    ("--user", "--map-root-user", "--net", "--uts", "--ipc"),
    ("--net", "--uts", "--ipc"),
)
NO_LANDLOCK = (
    "generated Python was not run: this kernel has no Landlock, so the sandbox could not keep the code "
    "away from files outside the session (your keys, other projects)"
)
NO_LANDLOCK_HINT = (
    "use a Linux kernel >= 5.13 with Landlock enabled, or set GEOFAHAM_SANDBOX_ALLOW_NO_LANDLOCK=1 "
    "to run it anyway with the remaining isolation"
)


@lru_cache(maxsize=1)
def namespace_prefix() -> list[str]:
    """The ``unshare`` command prefix giving the child the strongest namespaces this machine allows
    (:data:`NAMESPACES`), tried once per process; else nothing."""
    unshare = shutil.which("unshare")
    if not unshare:
        return []
    for flags in NAMESPACES:
        try:
            probe = [unshare, *flags, "true"]  # the system unshare binary, fixed flags, no shell
            if subprocess.run(probe, capture_output=True, timeout=5).returncode == 0:  # nosec B603
                return [unshare, *flags]
        except (OSError, subprocess.TimeoutExpired):
            continue
    return []


def read_roots() -> list[str]:
    """What the child may read besides the session: the interpreter, its libraries, GDAL/PROJ data."""
    roots = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        str(REPO_ROOT / "geofaham_plugin"),
        "/usr",
        "/lib",
        "/lib64",
        "/etc/ld.so.cache",
        "/etc/localtime",
        "/proc/cpuinfo",
        "/proc/meminfo",
        "/sys/devices/system/cpu",
        "/dev/null",
        "/dev/urandom",
        "/dev/zero",
    }
    roots.update(p for p in site.getsitepackages() if p)
    roots.update(
        p
        for p in sys.path
        if os.path.isabs(p)
        and os.path.isdir(p)
        and any(k in p for k in ("site-packages", "dist-packages", "/lib/python"))
    )
    for var in ("PROJ_DATA", "PROJ_LIB", "GDAL_DATA"):
        if os.environ.get(var):
            roots.add(os.environ[var])
    try:
        import pyproj

        roots.add(pyproj.datadir.get_data_dir())
    except Exception:  # noqa: BLE001 # nosec B110 - pyproj's data folder is optional: without it none is added
        pass
    return sorted(r for r in roots if os.path.exists(r))


def _env() -> dict[str, str]:
    """A minimal environment: nothing secret (API keys, DSNs) reaches generated code."""
    keep = {k: os.environ[k] for k in ("PROJ_DATA", "PROJ_LIB", "GDAL_DATA", "LANG", "TZ") if k in os.environ}
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": "/nonexistent",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "GDAL_NUM_THREADS": "1",
        "MALLOC_ARENA_MAX": "2",
        "PYTHONDONTWRITEBYTECODE": "1",
        "GDAL_HTTP_TIMEOUT": "1",
        # band math of generated code runs numpy's kernels: no JIT compiler (LLVM, executable memory) in the
        # process that runs model-written code
        ComputeSettings.env_of("raster_jit"): "0",
        **keep,
    }


def _kill(proc: subprocess.Popen) -> None:
    """Kill the child's whole tree: stop the supervisor, kill everything below it (a ``setsid``
    grandchild included), then its process group (with a PID namespace: the namespace)."""
    if proc.poll() is None:  # once reaped, its pid is not ours any more
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(proc.pid, signal.SIGSTOP)
        kill_tree(proc.pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(proc.pid, signal.SIGKILL)


def _gone(pgid: int, deadline_s: float = 5.0) -> bool:
    """Wait until no process of the group is left (killed members die asynchronously)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        time.sleep(0.01)
    return False


def _over_quota(run_dir: Path, limits: Limits) -> bool:
    size, files = usage(run_dir, limits.max_files)
    return size > limits.max_output_mb * MB or files > limits.max_files


class _Pipe:
    """The read end of a verdict pipe, drained without ever blocking (a process that kept the write
    end open cannot hold the parent); at most ``limit`` bytes are kept."""

    def __init__(self, fd: int, limit: int = 100_000) -> None:
        os.set_blocking(fd, False)
        self.fd, self.limit, self.data, self.closed = fd, limit, bytearray(), False

    def drain(self) -> None:
        while not self.closed:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            if not chunk:
                self.close()
                return
            self.data += chunk[: max(0, self.limit - len(self.data))]

    def close(self) -> None:
        if not self.closed:
            os.close(self.fd)
            self.closed = True

    def json(self) -> dict[str, Any]:
        try:
            value = json.loads(self.data.decode("utf-8", errors="replace")) if self.data else {}
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}


def usage(folder: Path, max_files: int) -> tuple[int, int]:
    """(bytes, files) under ``folder``; stops counting past ``max_files`` files."""
    size = files = 0
    todo = [folder]
    while todo and files <= max_files:
        try:
            entries = list(os.scandir(todo.pop()))
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    todo.append(Path(entry.path))
                else:
                    size += entry.stat(follow_symlinks=False).st_size
            files += 1
    return size, files


def _tail(path: Path, limit: int) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return text if len(text) <= limit else "…" + text[-limit:]


def run_code(
    code: str,
    *,
    session_dir: Path | str,
    inputs: dict[str, dict[str, Any]] | None = None,
    limits: Limits = Limits(),
    cancel: threading.Event | None = None,
    precheck: bool = True,
    allowed_modules: tuple[str, ...] = ALLOWED_MODULES,
    work_dir: Path | str | None = None,
    landlock: bool = True,
    allow_without_landlock: bool = False,
    seccomp: bool = True,
    namespaces: bool = True,
    memory_group: bool = True,
) -> SandboxResult:
    """Run ``code`` confined (see module docstring). ``inputs`` (name -> {path, kind, ...}) are exposed
    to the code as ``inputs``; outputs saved with ``gr.save_*`` come back, rewritten and checked, in
    ``result.outputs`` (``result.kinds``: path -> raster | vector | table | text). The caller must call
    :func:`cleanup` on ``result`` once it has registered what it wants. ``landlock``, ``seccomp`` and
    ``namespaces`` switch a layer off (tests prove each of the others holds alone); ``memory_group`` too (the tree's
    memory cgroup, where one can be made: :mod:`.cgroup`)."""
    from . import landlock as kernel_landlock

    t0 = time.monotonic()
    if precheck:
        problems = check_code(code, allowed_modules)
        if problems:
            return SandboxResult(False, "rejected", "the code was not run: " + "; ".join(problems[:8]))
    use_landlock = landlock and kernel_landlock.abi_version() > 0
    if landlock and not use_landlock and not allow_without_landlock:
        return SandboxResult(False, "unavailable", f"{NO_LANDLOCK}; {NO_LANDLOCK_HINT}")
    session_dir = Path(session_dir).resolve()
    base = Path(work_dir).resolve() if work_dir else session_dir / ".staging"
    run_dir = base / f"sandbox-{uuid.uuid4().hex[:8]}"
    out_dir, clean_dir = run_dir / "out", run_dir / "clean"
    out_dir.mkdir(parents=True)
    clean_dir.mkdir()
    read_fd, write_fd = os.pipe()
    convert_read, convert_write = os.pipe()
    go_read, go_write = os.pipe()  # the supervisor forks the worker only once its tree is in the memory group
    spec = {
        "code": code,
        "inputs": inputs or {},
        "out_dir": str(out_dir),
        "clean_dir": str(clean_dir),
        "session_dir": str(session_dir),
        "pythonpath": str(REPO_ROOT),
        "read_roots": read_roots(),
        "allowed_modules": list(allowed_modules),
        "result_fd": write_fd,
        "convert_fd": convert_write,
        "go_fd": go_read,
        "landlock": use_landlock,
        "seccomp": seccomp,
        "limits": {
            "cpu_s": limits.cpu_s,
            "memory_mb": limits.memory_mb,
            "max_file_mb": limits.max_file_mb,
            "max_output_mb": limits.max_output_mb,
        },
    }
    (run_dir / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    isolation = [
        "process tree killed as a whole",
        f"rlimits cpu={limits.cpu_s}s as={limits.memory_mb}MB",
        f"quota {limits.max_output_mb}MB/{limits.max_files} files",
        f"wall={limits.wall_s:g}s",
    ]
    if not use_landlock:
        isolation.append("landlock unavailable" if landlock else "landlock off")
    # the whole tree's memory, shared memory included, where a memory group can be made: the rlimit per process
    # and the supervisor's own interpreter (below 256 MB) fit under it
    group = MemoryGroup.make((limits.memory_mb + 256) * 1024 * 1024) if memory_group else None
    isolation.append(
        f"memory group (cgroup v{group.version}) {limits.memory_mb + 256}MB"
        if group
        else ("no memory group (no writable memory cgroup)" if memory_group else "memory group off")
    )
    prefix = namespace_prefix() if namespaces else []
    if prefix:
        names = [f for f in ("--user", "--pid", "--net", "--uts", "--ipc") if f in prefix]
        isolation.append("namespaces: " + " ".join(n.strip("-") for n in names))
    cmd = [*prefix, sys.executable, "-I", str(CHILD), str(run_dir / "spec.json")]
    stdout_path, stderr_path = run_dir / "stdout.txt", run_dir / "stderr.txt"
    killed: str | None = None
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        proc = subprocess.Popen(  # nosec B603 (our sandbox child module, an argument list, no shell)
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            pass_fds=(write_fd, convert_write, go_read),
            start_new_session=True,
            env=_env(),
            cwd=str(out_dir),
            close_fds=True,
        )
    os.close(write_fd)
    os.close(convert_write)
    if group is not None:  # unshare first, then what it started before it moved: every later process is born in it
        group.add(proc.pid)
        for pid in descendants(proc.pid):
            group.add(pid)
    os.write(go_write, b"1")  # (our read end is still open: no SIGPIPE when the child is already gone)
    os.close(go_write)
    os.close(go_read)
    pipes = _Pipe(read_fd), _Pipe(convert_read)
    next_quota_check = 0.0
    try:
        while proc.poll() is None:
            for pipe in pipes:
                pipe.drain()
            now = time.monotonic()
            if cancel is not None and cancel.is_set():
                killed = "cancelled"
            elif now - t0 > limits.wall_s:
                killed = "timeout"
            elif now >= next_quota_check:
                next_quota_check = now + 0.25
                if _over_quota(run_dir, limits):
                    killed = "quota"
            if killed:
                break
            time.sleep(0.02)
    finally:
        _kill(proc)  # always: whatever the run left behind (a setsid grandchild) dies with it
        proc.wait()
        _gone(proc.pid)
        end = time.monotonic() + 1.0
        while time.monotonic() < end and not all(p.closed for p in pipes):
            for pipe in pipes:
                pipe.drain()
            time.sleep(0.01)
        for pipe in pipes:
            pipe.close()
        oom = group is not None and group.oom_killed()
        if group is not None:
            group.remove()
    if killed is None and _over_quota(run_dir, limits):
        killed = "quota"  # what was written between the last check and the end
    verdict, converted = pipes[0].json(), pipes[1].json()
    rc = proc.returncode
    # the supervisor exits with 128 + N when the worker died of signal N; ``unshare`` itself with -N
    sig = -rc if rc is not None and rc < 0 else rc - 128 if rc is not None and rc > 128 else None
    result = SandboxResult(
        False,
        "crashed",
        "",
        stdout=_tail(stdout_path, limits.max_log_chars),
        stderr=_tail(stderr_path, limits.max_log_chars),
        seconds=round(time.monotonic() - t0, 3),
        returncode=rc,
        isolation=isolation + [str(x) for x in verdict.get("isolation", [])],
        line=verdict.get("line"),
        pid=proc.pid,
    )
    result._run_dir = run_dir  # type: ignore[attr-defined]
    if killed == "cancelled":
        result.kind, result.message = "cancelled", "the run was cancelled; its process tree was killed"
    elif killed == "timeout":
        result.kind, result.message = (
            "timeout",
            f"wall-clock limit of {limits.wall_s:g} s exceeded; the process tree was killed",
        )
    elif killed == "quota":
        result.kind, result.message = (
            "quota",
            f"output quota of {limits.max_output_mb} MB or {limits.max_files} files exceeded; the process tree was killed",
        )
    elif oom and not verdict.get("ok"):
        result.kind, result.message = (
            "memory",
            f"memory limit of {limits.memory_mb} MB exceeded (the run's memory group, shared memory counted); "
            "the process was killed",
        )
    elif sig in (signal.SIGXCPU, signal.SIGKILL) and not verdict:
        result.kind, result.message = "cpu", f"CPU time limit of {limits.cpu_s} s exceeded; the process was killed"
    elif (sig == signal.SIGXFSZ and not verdict) or "File too large" in str(verdict.get("message", "")):
        result.kind = "quota"
        result.message = f"file size limit of {min(limits.max_file_mb, limits.max_output_mb)} MB exceeded"
    elif verdict.get("ok") and rc == 0 and converted.get("ok"):
        _accept(result, verdict, clean_dir)
    elif verdict.get("ok") and converted:
        etype, msg = converted.get("error_type", "Error"), converted.get("message", "")
        result.kind = "refused" if etype == "ToolFailed" else "error"
        result.message = msg if etype == "ToolFailed" else f"checking the outputs failed: {etype}: {msg}"
    elif verdict:
        etype, msg = verdict.get("error_type", "Error"), verdict.get("message", "")
        where = f" (line {verdict['line']})" if verdict.get("line") else ""
        if etype == "MemoryError":
            result.kind, result.message = "memory", f"memory limit of {limits.memory_mb} MB exceeded{where}: {msg}"
        elif etype in ("SandboxViolation", "ImportRejected"):
            result.kind, result.message = "violation", f"blocked by the sandbox{where}: {msg}"
        elif etype == "PermissionError" or "Permission denied" in msg or "Operation not permitted" in msg:
            result.kind, result.message = "violation", f"blocked by the sandbox (kernel){where}: {msg}"
        else:
            result.kind, result.message = "error", f"{etype}{where}: {msg}"
    else:
        result.message = (
            f"the process died with signal {signal.Signals(sig).name}" if sig else f"the process exited with {rc}"
        ) + " (often: the memory limit was hit inside a C library)"
    return result


def _accept(result: SandboxResult, verdict: dict[str, Any], clean_dir: Path) -> None:
    """The run succeeded: its outputs are the clean folder's files that pass the parent's checks."""
    from .sandbox_outputs import vet

    try:
        checked = vet(clean_dir)
    except ToolFailed as exc:
        result.kind, result.message = "refused", str(exc)
        return
    outputs = [p for p, _ in checked]
    primary = verdict.get("primary") or (verdict.get("saved") or [None])[-1]
    result.ok, result.kind, result.outputs = True, "ok", outputs
    result.kinds = {p: kind for p, kind in checked}
    result.message = f"ran in {result.seconds:g} s; {len(outputs)} output file(s)"
    result.primary = next((p for p in outputs if primary and p.name == Path(str(primary)).name), None)
    if result.primary is None and outputs:
        result.primary = outputs[-1]


def cleanup(result: SandboxResult) -> None:
    """Remove the run's folder (outputs included): call after registering them."""
    run_dir = getattr(result, "_run_dir", None)
    if run_dir is not None:
        shutil.rmtree(run_dir, ignore_errors=True)
