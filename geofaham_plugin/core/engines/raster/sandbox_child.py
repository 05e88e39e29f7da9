"""The sandbox's child process: ``python -I sandbox_child.py SPEC.json``. Importing it does nothing.

The process started by the parent is a supervisor that never runs generated code: it becomes a
child subreaper (the init of a fresh PID namespace when the parent could make one), forks the
worker, waits for it, then kills every process left behind (a grandchild that called ``setsid``
included: orphans are re-parented to the supervisor, or die with the namespace). When the worker
succeeded it forks a second, equally confined converter that rewrites the outputs into plain files
(``sandbox_outputs.convert``) for the parent to check.

In the worker, order matters, each step narrows what the next may do: resource limits (CPU seconds,
address space, file size, no core dumps); the repository on ``sys.path`` and the library imported;
every capability dropped (root too: ``capabilities``); Landlock (kernel: files outside the read roots and the output folder, TCP, signals to outside
processes); seccomp (kernel: no new process, no socket of any family, no setsid, no exec, no host name,
kernel log, device node, memfd, set-id bit or immutable flag); an audit
hook (sockets, process spawning, ctypes, files by path) and restricted builtins whose ``__import__``
enforces the import allow-list - those two are conveniences with clear messages, not the boundary:
code can switch them off; then the code runs. The verdict goes back on an inherited pipe, never
through a file the code could forge."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import time
import traceback
from collections.abc import Iterable
from typing import Any

MB = 1024 * 1024
NETWORK_EVENTS = (
    "urllib.Request",
    "http.client.connect",
    "ftplib.connect",
    "smtplib.connect",
    "poplib.connect",
    "imaplib.open",
    "nntplib.connect",
    "telnetlib.Telnet.open",
    "webbrowser.open",
)
SPAWN_EVENTS = (
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "pty.spawn",
    "os.startfile",
)
CTYPES_EVENTS = ("ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.call_function")
WRITE_EVENTS = (
    "os.mkdir",
    "os.remove",
    "os.rmdir",
    "os.rename",
    "os.chmod",
    "os.chown",
    "os.link",
    "os.symlink",
    "os.truncate",
    "os.utime",
    "shutil.copyfile",
    "shutil.copymode",
    "shutil.copystat",
    "shutil.copytree",
    "shutil.rmtree",
    "shutil.move",
    "shutil.chown",
    "os.chflags",
    "os.lchflags",
    "os.setxattr",
    "os.removexattr",
)
READ_EVENTS = ("os.listdir", "os.scandir", "os.chdir", "glob.glob", "os.getxattr", "os.listxattr")
BANNED_BUILTINS = {
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
    "__loader__",
    "__spec__",
}
# filled by main(); read by the hook and the import guard
POLICY: dict = {"out": "", "read": (), "allowed": (), "busy": False}


class SandboxViolation(PermissionError):
    """Generated code tried something the sandbox forbids."""


class ImportRejected(ImportError):
    """Generated code imported a module outside the allow-list."""


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _real(path: str | bytes | os.PathLike[str]) -> str:
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    return os.path.realpath(os.fspath(path))


def _path(path: str, *, write: bool, what: str) -> None:
    if _under(path, (POLICY["out"],)) or (not write and _under(path, POLICY["read"])):
        return
    raise SandboxViolation(
        f"{what} {path} is not allowed: the sandbox may read the session folder and write only its output folder"
    )


def _check(event: str, args: tuple) -> None:
    if event.startswith("socket.") or event in NETWORK_EVENTS:
        raise SandboxViolation(f"network access is not allowed in the sandbox ({event})")
    if event in SPAWN_EVENTS:
        raise SandboxViolation(f"starting processes is not allowed in the sandbox ({event})")
    if event in CTYPES_EVENTS:
        raise SandboxViolation(f"native calls through ctypes are not allowed in the sandbox ({event})")
    if event in ("os.kill", "os.killpg", "signal.pthread_kill"):
        raise SandboxViolation("sending signals is not allowed in the sandbox")
    if event == "open":
        path, mode, flags = (tuple(args) + (None, None))[:3]
        if path is None or (isinstance(path, int) and path <= 2):
            return
        if isinstance(path, int):
            raise SandboxViolation("opening file descriptors is not allowed in the sandbox")
        writing = (mode is not None and any(c in str(mode) for c in "wax+")) or bool(
            flags is not None and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND)
        )
        _path(_real(path), write=writing, what="writing" if writing else "reading")
    elif event == "sqlite3.connect":
        db = args[0] if args else ":memory:"
        if db not in (":memory:", b":memory:", ""):
            _path(_real(db), write=True, what="opening a database")
    elif event in WRITE_EVENTS:
        for p in args[:2]:
            if isinstance(p, (str, bytes, os.PathLike)):
                _path(_real(p), write=True, what=f"changing files ({event})")
    elif event in READ_EVENTS:
        p = args[0] if args else None
        if isinstance(p, (str, bytes, os.PathLike)):
            _path(_real(p), write=False, what=f"listing or entering folders ({event})")


def _hook(event: str, args: tuple) -> None:
    if POLICY["busy"]:
        return
    POLICY["busy"] = True
    try:
        _check(event, args)
    finally:
        POLICY["busy"] = False


def module_allowed(name: str, allowed: Iterable[str]) -> bool:
    if any(part.startswith("_") for part in name.split(".")):
        return False
    return any(name == m or name.startswith(m + ".") for m in allowed)


def _guarded_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:  # noqa: A002 - builtins signature
    """``__import__`` of the generated code's builtins. C code (numpy's lazy imports) calls it too while
    a generated frame is on top; only an ``import`` statement of the generated code itself is checked."""
    import dis

    caller = sys._getframe(1)
    statement = (
        caller.f_code.co_filename == "<generated>" and caller.f_code.co_code[caller.f_lasti] == dis.opmap["IMPORT_NAME"]
    )
    if statement:
        if level:
            raise ImportRejected("relative imports are not allowed in generated code")
        if not module_allowed(name, POLICY["allowed"]):
            raise ImportRejected(f"import of '{name}' is not allowed; allowed: {', '.join(POLICY['allowed'])}")
        for item in fromlist or ():
            if str(item).startswith("_"):
                raise ImportRejected(f"private name '{item}' of '{name}' is not allowed")
    return __import__(name, globals, locals, fromlist, level)


def _builtins() -> dict:
    import builtins

    safe = {k: v for k, v in vars(builtins).items() if k not in BANNED_BUILTINS}
    safe["__import__"] = _guarded_import
    return safe


def _limits(lim: dict) -> None:
    import resource

    file_mb = min(lim["max_file_mb"], lim["max_output_mb"])
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (lim["cpu_s"], lim["cpu_s"] + 2))
    resource.setrlimit(resource.RLIMIT_AS, (lim["memory_mb"] * MB, lim["memory_mb"] * MB))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb * MB, file_mb * MB))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


# ----------------------------------------------------------------------------- the process tree
def descendants(root: int) -> list[int]:
    """Live (not zombie) processes below ``root``, from /proc, parents before children."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop(0)
        found.append(pid)
        todo += children.get(pid, [])
    return found


def _reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def kill_tree(root: int, deadline_s: float = 5.0) -> None:
    """SIGKILL every process below ``root`` (not ``root`` itself) until none is left: all stopped
    first (no fork in between), then killed leaves first, so an orphan is re-parented to the nearest
    subreaper (the supervisor, still alive) and found in the next round."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        pids = descendants(root)
        if not pids:
            return
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in reversed(pids):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
        if root == os.getpid():
            _reap()
        time.sleep(0.01)


def _subreaper() -> None:
    import ctypes

    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans come back to us


def _fork(body: Any, *args: Any) -> int:
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            status = body(*args)
        except BaseException:  # noqa: BLE001 - our own failure in the child: to its stderr, then exit
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    return pid


def _wait(pid: int) -> int:
    """Exit status of ``pid`` as a shell would put it (128 + N when killed by signal N); orphans
    re-parented to us meanwhile are reaped."""
    while True:
        got, status = os.waitpid(-1, 0)
        if got == pid:
            code = os.waitstatus_to_exitcode(status)
            return 128 - code if code < 0 else code


def _confine(spec: dict, read: tuple[str, ...], write: str) -> list[str]:
    from geofaham_plugin.core.engines.raster import capabilities, landlock, seccomp

    isolation = [capabilities.drop()]  # whatever user runs GeoFaham: root keeps none
    isolation.append(landlock.restrict(read, [write]) if spec["landlock"] else "landlock off")
    isolation.append(seccomp.restrict() if spec["seccomp"] else "seccomp off")
    return isolation


def main(spec_path: str) -> int:
    """The supervisor (see the module docstring); returns the worker's status, or the converter's."""
    with open(spec_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    if "go_fd" in spec:  # the parent moves this tree into the run's memory group first (sandbox.run_code)
        os.read(spec["go_fd"], 1)
        os.close(spec["go_fd"])
    _subreaper()
    worker = _fork(_worker, spec)
    os.close(spec["result_fd"])
    status = _wait(worker)
    kill_tree(os.getpid())
    if status == 0:
        status = _wait(_fork(_converter, spec))
        kill_tree(os.getpid())
    return status


def _converter(spec: dict) -> int:
    """Rewrite the outputs into the clean folder, confined like the worker (reads the output folder)."""
    from pathlib import Path

    with os.fdopen(spec["convert_fd"], "w", encoding="utf-8") as verdict:
        _limits(spec["limits"])
        sys.path.insert(0, spec["pythonpath"])
        from geofaham_plugin.core.engines.raster import sandbox_outputs

        clean = Path(spec["clean_dir"])
        for stale in clean.iterdir():  # without Landlock the worker could have planted files here
            shutil.rmtree(stale) if stale.is_dir() and not stale.is_symlink() else stale.unlink()
        read = (*spec["read_roots"], os.path.realpath(spec["out_dir"]), f"/proc/{os.getpid()}")
        isolation = _confine(spec, read, os.path.realpath(clean))
        try:
            saved = sandbox_outputs.convert(Path(spec["out_dir"]), clean)
        except Exception as exc:  # noqa: BLE001 - reported to the parent, typed
            verdict.write(json.dumps({"ok": False, "error_type": type(exc).__name__, "message": str(exc)[:2000]}))
            return 1
        verdict.write(json.dumps({"ok": True, "saved": saved, "isolation": isolation}))
    return 0


def _worker(spec: dict) -> int:
    os.close(spec["convert_fd"])
    result = os.fdopen(spec["result_fd"], "w", encoding="utf-8")  # opened before the hook forbids int paths

    def report(**verdict: Any) -> None:
        result.write(json.dumps(verdict, default=str)[:60_000])
        result.flush()

    _limits(spec["limits"])
    sys.path.insert(0, spec["pythonpath"])
    os.chdir(spec["out_dir"])
    import numpy as np

    from geofaham_plugin.core.engines.raster import sandbox_api as gr

    gr.configure(spec["out_dir"])
    POLICY["out"] = os.path.realpath(spec["out_dir"])
    POLICY["read"] = tuple(os.path.realpath(p) for p in spec["read_roots"]) + (
        os.path.realpath(spec["session_dir"]),
        f"/proc/{os.getpid()}",
    )
    POLICY["allowed"] = tuple(spec["allowed_modules"])
    isolation = _confine(spec, POLICY["read"], POLICY["out"])
    namespace = {
        "__builtins__": _builtins(),
        "__name__": "__sandbox__",
        "np": np,
        "gr": gr,
        "inputs": spec["inputs"],
        "OUTPUT_DIR": POLICY["out"],
    }
    try:
        code = compile(spec["code"], "<generated>", "exec")
    except SyntaxError as exc:
        report(ok=False, error_type="SyntaxError", message=str(exc), isolation=isolation)
        return 1
    sys.addaudithook(_hook)
    try:
        exec(code, namespace)  # noqa: S102  # nosec B102 - this is the sandbox: confined by Landlock, seccomp, rlimits
    except BaseException as exc:  # noqa: BLE001 - every failure of generated code is reported, typed
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<generated>"]
        report(
            ok=False,
            error_type=type(exc).__name__,
            message=str(exc)[:2000],
            line=frames[-1].lineno if frames else None,
            isolation=isolation,
        )
        return 1
    primary = namespace.get("RESULT")
    report(ok=True, primary=str(primary) if primary else None, saved=gr.saved(), isolation=isolation)
    return 0


if __name__ == "__main__":
    status = main(sys.argv[1])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
