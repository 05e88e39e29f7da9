"""The embedded local model: llama-cpp-python's OpenAI-compatible server in a child process.

A child process rather than an in-process ``llama_cpp.Llama``: a crash in native code cannot take
QGIS down, the process can be killed when a run is cancelled, and local and remote models share
one code path (the OpenAI client).

The server (2.5-4.4 GB of memory) must never outlive GeoFaham, even one killed with ``-9``: it runs
under ``server_wrapper.py``, which dies with its parent (``prctl(PR_SET_PDEATHSIG)`` plus a watchdog
on the parent's pid) and takes the server with it. Each server has a folder (its log) holding an
owner lock while the launcher or the wrapper lives; a start removes folders whose lock is free
(left by a process killed before it could clean up).
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess  # nosec B404 (starts the llama.cpp server binary with an argument list, no shell)
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import IO

import httpx

from ..config import EMBEDDED_MODEL, ModelEndpoint, Settings
from ..domain.files import try_lock
from ..domain.names import Role
from ..errors import GeoFahamBug, GeoFahamError, ModelHTTPError
from .base import LLM, ChatModel, Message, ModelReply, UsageLedger
from .openai_model import OpenAIChatModel, check_not_blocked, real_models_blocked
from .server_wrapper import death_signal_setter

WRAPPER = Path(__file__).with_name("server_wrapper.py")
FOLDER_PREFIX = "geofaham-llama-"
OWNER_LOCK = "owner.lock"


class ModelFileMissing(GeoFahamError, FileNotFoundError):
    """The GGUF file is not installed."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def remove_stale_folders(tmp: Path | None = None) -> list[Path]:
    """Remove the server folders (``geofaham-llama-*``) whose owner lock nobody holds: their launcher and
    wrapper are dead. Folders without a lock file (being created, or from an older release) are left."""
    removed = []
    for folder in Path(tmp or tempfile.gettempdir()).glob(FOLDER_PREFIX + "*"):
        lock_path = folder / OWNER_LOCK
        try:
            with open(lock_path, "rb") as fh:
                if try_lock(fh):
                    shutil.rmtree(folder, ignore_errors=True)
                    removed.append(folder)
        except OSError:  # no lock file, or not ours to read
            continue
    return removed


def usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class EmbeddedServer:
    """``python -m llama_cpp.server`` on 127.0.0.1, started on demand and stopped at exit.

    ``python`` must be a Python interpreter with llama-cpp-python[server]; inside QGIS
    ``sys.executable`` is the QGIS binary, so the plugin passes its own.
    """

    def __init__(
        self,
        model_path: Path,
        alias: str,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        chat_format: str | None = None,
        python: str = sys.executable,
        startup_timeout: float = 120,
    ) -> None:
        self.model_path, self.alias = Path(model_path), alias
        self.n_ctx, self.chat_format, self.python, self.startup_timeout = n_ctx, chat_format, python, startup_timeout
        # llama.cpp's default is half the cores; generation is memory bound but on 2 cores both help.
        self.n_threads = n_threads or usable_cpus()
        self.port: int | None = None
        self.process: subprocess.Popen | None = None
        self.log_path: Path | None = None
        self._owner: IO[bytes] | None = None  # the folder's owner lock, held while the server runs
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise GeoFahamBug("EmbeddedServer.base_url read before start()")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def command(self, port: int) -> list[str]:
        cmd = [
            self.python,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model_path),
            "--model_alias",
            self.alias,
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
            "--n_threads_batch",
            str(self.n_threads),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ]
        return cmd + (["--chat_format", self.chat_format] if self.chat_format else [])

    def wrapped_command(self, port: int) -> list[str]:
        """:meth:`command` under ``server_wrapper.py`` (run by file path: it needs only the standard library)."""
        assert self.log_path is not None
        return [self.python, str(WRAPPER), str(os.getpid()), str(self.log_path.parent), "--", *self.command(port)]

    def start(self) -> EmbeddedServer:
        """Start and wait until ``GET /v1/models`` answers. Idempotent and thread-safe."""
        with self._lock:
            if self.running:
                return self
            if not self.model_path.is_file():
                raise ModelFileMissing(
                    f"local model {self.model_path} is not installed; run `make setup` "
                    "(stage models) or set GEOFAHAM_LLM_BASE_URL to use a model server"
                )
            remove_stale_folders()
            self.port = free_port()
            folder = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
            self._owner = open(folder / f".{OWNER_LOCK}.new", "wb")  # noqa: SIM115 - held until stop()
            try_lock(self._owner)  # a fresh file: always ours; named so only once locked (see remove_stale_folders)
            os.rename(folder / f".{OWNER_LOCK}.new", folder / OWNER_LOCK)
            self.log_path = folder / "server.log"
            with open(self.log_path, "wb") as log:
                # our own wrapper and the staged model's command line, an argument list (no shell)
                self.process = subprocess.Popen(  # nosec B603
                    self.wrapped_command(self.port),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    pass_fds=(self._owner.fileno(),),  # the wrapper holds the owner lock too
                    preexec_fn=death_signal_setter(signal.SIGUSR1),  # see server_wrapper.py
                )
            atexit.register(self.stop)
            try:
                self._wait_ready()
            except BaseException:
                self._stop_locked(keep_log=True)  # the error message points at the log
                raise
            return self

    def _wait_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.startup_timeout
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while True:
                code = self.process.poll()
                if code is not None:
                    raise ModelHTTPError(
                        f"llama.cpp server for {self.model_path.name} exited with code {code} (log: {self.log_path})",
                        body=self.log_tail(),
                    )
                try:
                    if client.get(f"{self.base_url}/models").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise ModelHTTPError(
                        f"llama.cpp server for {self.model_path.name} not ready after "
                        f"{self.startup_timeout:g} s (log: {self.log_path})",
                        body=self.log_tail(),
                    )
                time.sleep(0.2)

    def stop(self, timeout: float = 10) -> None:
        """Terminate the server's process group, kill it if it lingers. Safe to call twice."""
        with self._lock:
            self._stop_locked(timeout)

    def _stop_locked(self, timeout: float = 10, keep_log: bool = False) -> None:
        proc, self.process = self.process, None
        atexit.unregister(self.stop)
        if proc is not None and proc.poll() is None:
            self._terminate(proc, timeout)
        if not keep_log and self.log_path is not None:
            shutil.rmtree(self.log_path.parent, ignore_errors=True)
            self.log_path = None
        if self._owner is not None:  # a kept log folder is removed by a later start
            self._owner.close()
            self._owner = None

    @staticmethod
    def _terminate(proc: subprocess.Popen, timeout: float) -> None:
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class EmbeddedChatModel:
    """:class:`~.base.ChatModel` over an :class:`EmbeddedServer` started on the first chat, not before,
    so building the LLM (e.g. when QGIS loads the plugin) costs nothing."""

    def __init__(self, server: EmbeddedServer, *, timeout: float = 300, max_tokens: int = 1024) -> None:
        self.server, self.name = server, server.alias
        self.timeout, self.max_tokens = timeout, max_tokens
        self._model: OpenAIChatModel | None = None
        self._lock = threading.Lock()

    def serves(self, role: str) -> bool:
        return not real_models_blocked()

    def chat(self, messages: list[Message], *, schema: dict | None = None, role: str = "") -> ModelReply:
        check_not_blocked(f"the embedded model {self.server.model_path.name}")
        with self._lock:
            if self._model is None or not self.server.running:  # first call, or the server died: (re)start
                self.server.start()
                # No HTTP retries: a local 500 (e.g. a grammar failure) is not transient.
                self._model = OpenAIChatModel(
                    ModelEndpoint(base_url=self.server.base_url, model=self.server.alias),
                    json_mode="llamacpp",
                    timeout=self.timeout,
                    max_tokens=self.max_tokens,
                    http_retries=0,
                )
            model = self._model
        return model.chat(messages, schema=schema, role=role)

    def close(self) -> None:
        with self._lock:
            if self._model is not None:
                self._model.close()
                self._model = None
        self.server.stop()


def build_llm(
    settings: Settings, usage: UsageLedger | None = None, *, max_retries: int = 2, python: str | None = None
) -> LLM:
    """One model per role: remote endpoints get their own client, embedded roles share one lazy server.

    ``python`` runs the embedded server; inside QGIS ``sys.executable`` is the qgis binary, so the
    plugin passes the project venv's interpreter."""
    embedded: EmbeddedChatModel | None = None
    models: dict[str, ChatModel] = {}
    for role in Role:
        endpoint = settings.endpoint(role)
        if endpoint.embedded:
            embedded = embedded or EmbeddedChatModel(
                EmbeddedServer(settings.embedded_model_path, EMBEDDED_MODEL, python=python or sys.executable)
            )
            models[role.value] = embedded
        else:
            models[role.value] = OpenAIChatModel(endpoint)
    return LLM(models, usage=usage, max_retries=max_retries)
