"""Run model-written Python in a separate, confined process.

Layers, each independent of the others (a test disables the pre-check to prove the runtime layers):

1. Pre-check (here, before anything starts): the code parses; imports are on the allow-list; no
   private or dunder attribute (``__class__``, ``_io``), no ``eval``/``exec``/``getattr`` & co.
2. Process: a fresh interpreter (``python -I``) in its own session/process group with a minimal
   environment (no API keys), in a network namespace without interfaces (``unshare -n``) when this
   machine allows it, CPU-time (``RLIMIT_CPU``), address-space (``RLIMIT_AS``) and file-size limits,
   a wall-clock limit enforced here, killed as a group on cancel or timeout.
3. Kernel (Linux Landlock, when available): reads only under the interpreter/library roots and the
   session folder, writes only in the run's output folder, no TCP, no signals to other processes,
   no ``execve`` — this also binds C code such as GDAL.
4. Audit hook + restricted builtins in the child: sockets, process spawning, ctypes and file access
   outside the session are refused with a clear message; imports made by the generated code itself
   are checked against the allow-list at run time.

Outputs are the files the code saved in its output folder; the caller registers them only when the
run succeeded. The folder lives in the store's staging area and is removed afterwards."""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import signal
import site
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

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
    max_log_chars: int = 8000


@dataclass
class SandboxResult:
    """``kind``: ok | rejected (pre-check) | violation | error | memory | cpu | timeout | cancelled | crashed."""

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


@lru_cache(maxsize=1)
def network_isolation() -> list[str]:
    """The command prefix that gives the child an empty network namespace, if this machine allows it
    (``unshare -n`` as root, ``unshare -rn`` with unprivileged user namespaces); else nothing."""
    unshare = shutil.which("unshare")
    if not unshare:
        return []
    for prefix in ([unshare, "-n"], [unshare, "-rn"]):
        try:
            if subprocess.run([*prefix, "true"], capture_output=True, timeout=5).returncode == 0:
                return prefix
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
    except Exception:  # noqa: BLE001 - optional
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
        **keep,
    }


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


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
) -> SandboxResult:
    """Run ``code`` confined (see module docstring). ``inputs`` (name -> {path, kind, ...}) are exposed
    to the code as ``inputs``; outputs saved with ``gr.save_*`` come back in ``result.outputs``. The
    caller must call :func:`cleanup` on ``result`` once it has registered what it wants."""
    t0 = time.monotonic()
    if precheck:
        problems = check_code(code, allowed_modules)
        if problems:
            return SandboxResult(False, "rejected", "the code was not run: " + "; ".join(problems[:8]))
    session_dir = Path(session_dir).resolve()
    base = Path(work_dir).resolve() if work_dir else session_dir / ".staging"
    run_dir = base / f"sandbox-{uuid.uuid4().hex[:8]}"
    out_dir = run_dir / "out"
    out_dir.mkdir(parents=True)
    read_fd, write_fd = os.pipe()
    spec = {
        "code": code,
        "inputs": inputs or {},
        "out_dir": str(out_dir),
        "session_dir": str(session_dir),
        "pythonpath": str(REPO_ROOT),
        "read_roots": read_roots(),
        "allowed_modules": list(allowed_modules),
        "result_fd": write_fd,
        "landlock": landlock,
        "limits": {"cpu_s": limits.cpu_s, "memory_mb": limits.memory_mb, "max_file_mb": limits.max_file_mb},
    }
    (run_dir / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    isolation = ["process group", f"rlimits cpu={limits.cpu_s}s as={limits.memory_mb}MB", f"wall={limits.wall_s:g}s"]
    prefix = network_isolation()
    if prefix:
        isolation.append(f"network namespace ({' '.join([Path(prefix[0]).name, *prefix[1:]])})")
    cmd = [*prefix, sys.executable, "-I", str(CHILD), str(run_dir / "spec.json")]
    stdout_path, stderr_path = run_dir / "stdout.txt", run_dir / "stderr.txt"
    killed: str | None = None
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            pass_fds=(write_fd,),
            start_new_session=True,
            env=_env(),
            cwd=str(out_dir),
            close_fds=True,
        )
    os.close(write_fd)
    try:
        while proc.poll() is None:
            if cancel is not None and cancel.is_set():
                killed = "cancelled"
            elif time.monotonic() - t0 > limits.wall_s:
                killed = "timeout"
            if killed:
                _kill(proc)
                proc.wait()
                break
            time.sleep(0.02)
    finally:
        if proc.poll() is None:  # the caller was interrupted: never leave the child behind
            _kill(proc)
            proc.wait()
        _kill(proc)  # grandchildren, if any escaped the hooks, die with the group
        with os.fdopen(read_fd, "r", encoding="utf-8") as pipe:
            raw = pipe.read()
    verdict: dict[str, Any] = {}
    try:
        verdict = json.loads(raw) if raw else {}
    except ValueError:
        verdict = {}
    result = SandboxResult(
        False,
        "crashed",
        "",
        stdout=_tail(stdout_path, limits.max_log_chars),
        stderr=_tail(stderr_path, limits.max_log_chars),
        seconds=round(time.monotonic() - t0, 3),
        returncode=proc.returncode,
        isolation=isolation + list(verdict.get("isolation", [])),
        line=verdict.get("line"),
        pid=proc.pid,
    )
    result._run_dir = run_dir  # type: ignore[attr-defined]
    rc = proc.returncode
    if killed == "cancelled":
        result.kind, result.message = "cancelled", "the run was cancelled; the process group was killed"
    elif killed == "timeout":
        result.kind, result.message = (
            "timeout",
            f"wall-clock limit of {limits.wall_s:g} s exceeded; the process was killed",
        )
    elif rc in (-signal.SIGXCPU, -signal.SIGKILL) and not verdict:
        result.kind, result.message = "cpu", f"CPU time limit of {limits.cpu_s} s exceeded; the process was killed"
    elif verdict.get("ok") and rc == 0:
        outputs = sorted(p for p in out_dir.iterdir() if p.is_file() and not p.is_symlink() and ".tmp." not in p.name)
        primary = verdict.get("primary") or (verdict.get("saved") or [None])[-1]
        result.ok, result.kind, result.outputs = True, "ok", outputs
        result.message = f"ran in {result.seconds:g} s; {len(outputs)} output file(s)"
        result.primary = next((p for p in outputs if primary and p.name == Path(str(primary)).name), None)
        if result.primary is None and outputs:
            result.primary = outputs[-1]
    elif verdict:
        etype, msg = verdict.get("error_type", "Error"), verdict.get("message", "")
        where = f" (line {verdict['line']})" if verdict.get("line") else ""
        if etype == "MemoryError":
            result.kind, result.message = "memory", f"memory limit of {limits.memory_mb} MB exceeded{where}: {msg}"
        elif etype in ("SandboxViolation", "ImportRejected"):
            result.kind, result.message = "violation", f"blocked by the sandbox{where}: {msg}"
        elif etype == "PermissionError" or "Permission denied" in msg:
            result.kind, result.message = "violation", f"blocked by the sandbox (kernel){where}: {msg}"
        else:
            result.kind, result.message = "error", f"{etype}{where}: {msg}"
    else:
        sig = -rc if rc is not None and rc < 0 else None
        result.message = (
            f"the process died with signal {signal.Signals(sig).name}" if sig else f"the process exited with {rc}"
        ) + " (often: the memory limit was hit inside a C library)"
    return result


def cleanup(result: SandboxResult) -> None:
    """Remove the run's folder (outputs included): call after registering them."""
    run_dir = getattr(result, "_run_dir", None)
    if run_dir is not None:
        shutil.rmtree(run_dir, ignore_errors=True)
