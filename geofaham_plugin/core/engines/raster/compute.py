"""Where lazy raster graphs run: threads on this machine, or a Dask cluster.

Every raster operation builds a chunked dask graph (reads are window by window, see ``io``). By
default it runs on the local threaded scheduler. When ``GEOFAHAM_DASK_SCHEDULER`` holds a scheduler
address (``tcp://host:8786``) the same graph runs on that cluster — the way past one machine's memory
and cores; results come back block by block, so the client never holds a whole raster. The workers
read the files themselves (the graph carries paths and grids, never open handles), so they must see
the inputs at the same paths and import this package; their failures (unreadable file, dead worker,
missing package, lost scheduler) come back as one :class:`ToolFailed` line with a hint."""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterator
from contextlib import closing, contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from ...config import ComputeSettings
from ...errors import GeoFahamError, ToolFailed

if TYPE_CHECKING:
    from dask.array import Array
    from distributed import Client

SCHEDULER_ENV = ComputeSettings.env_of("dask_scheduler")
CONNECT_TIMEOUT_S = 10
#: blocks a cluster computes ahead of the one being written, per worker thread: every worker stays
#: busy, yet neither the cluster nor this client ever holds the whole raster
AHEAD_PER_THREAD = 2
#: the module whose window readers the graphs carry (pickled by reference): the scheduler and every
#: worker must import it
WORKER_MODULE = __name__.rsplit(".", 1)[0] + ".io"
_clients: dict[str, Client] = {}
_lock = threading.Lock()


def scheduler_address() -> str | None:
    """The configured scheduler, read now (``settings.compute``: no run passes it this deep)."""
    return ComputeSettings.from_env().dask_scheduler


def client() -> Client | None:
    """The ``distributed.Client`` of the configured scheduler (one per address), or ``None``."""
    address = scheduler_address()
    if address is None:
        return None
    with _lock:
        c = _clients.get(address)
        if c is None or c.status in ("closed", "closing"):
            from distributed import Client

            try:
                c = Client(address, set_as_default=False, timeout=f"{CONNECT_TIMEOUT_S}s")
            except (OSError, ValueError) as exc:  # refused, timed out, or not an address
                raise ToolFailed(
                    f"the Dask scheduler {address} cannot be reached: {_line(exc)}",
                    kind="error",
                    hint=f"start it (dask scheduler, then dask worker {address}) or unset {SCHEDULER_ENV}",
                ) from exc
            _check_workers(c, address)
            _clients[address] = c
        return c


def _check_workers(c: Client, address: str) -> None:
    """The scheduler and the workers must import the code the graphs carry (the scheduler unpickles
    each graph too): one clear failure now, instead of a graph the scheduler refuses or tasks that kill
    the workers they are sent to."""
    import importlib

    try:
        c.run_on_scheduler(importlib.import_module, WORKER_MODULE)
        c.run(importlib.import_module, WORKER_MODULE)
    except ImportError as exc:
        c.close()
        raise ToolFailed(
            f"the Dask cluster {address} cannot import {WORKER_MODULE}: {_line(exc)}",
            kind="error",
            hint="install GeoFaham's dependencies on the scheduler and every worker, with its package on "
            "their PYTHONPATH (the QGIS plugins folder when run from QGIS)",
        ) from exc


def close_clients() -> None:
    """Close every client opened here (tests, plugin unload)."""
    with _lock:
        while _clients:
            _clients.popitem()[1].close()


def compute(*arrays: Any) -> tuple[np.ndarray, ...]:
    """Materialise dask (or numpy) arrays together, sharing reads between them."""
    import dask

    c = client()
    with _failures(on_cluster=c is not None):
        if c is not None:
            return tuple(c.compute(list(arrays), sync=True))
        return tuple(dask.compute(*arrays, scheduler="threads"))


def iter_blocks(arr: Array) -> Generator[tuple[tuple[slice, ...], np.ndarray], None, None]:
    """``(slices, block)`` for each chunk of a dask array, computed on the configured scheduler; on
    a cluster blocks are yielded as they finish, locally in order, so memory stays one block wide.
    Closing the iterator early (a cancelled run) cancels the blocks still computing on the cluster."""
    import dask

    slices = list(_block_slices(arr))
    c = client()
    if c is not None:
        with _failures(on_cluster=True):
            yield from _cluster_blocks(c, arr, slices)
        return
    for s in slices:
        with _failures(on_cluster=False):
            (block,) = dask.compute(arr[s], scheduler="threads")
        yield s, block


def _cluster_blocks(
    c: Client, arr: Array, slices: list[tuple[slice, ...]]
) -> Iterator[tuple[tuple[slice, ...], np.ndarray]]:
    """Blocks computed on the cluster, at most ``AHEAD_PER_THREAD`` per worker thread in flight."""
    from distributed import as_completed

    todo = iter(slices)
    running: dict[Any, tuple[slice, ...]] = {}
    done = as_completed(loop=c.loop)

    def submit() -> None:
        s = next(todo, None)
        if s is not None:
            future = c.compute(arr[s])
            running[future] = s
            done.add(future)

    for _ in range(max(2, AHEAD_PER_THREAD * sum(c.nthreads().values()))):
        submit()
    try:
        for future in done:
            s = running.pop(future)
            block = future.result()
            future.release()
            submit()
            yield s, block
    finally:
        if running:
            c.cancel(list(running))


def store(arr: Array, write: Callable[[tuple[slice, ...], np.ndarray], None]) -> None:
    """Compute ``arr`` chunk by chunk and hand each block to ``write(slices, block)``. Locally this is
    ``dask.array.store`` (parallel reads, serialised writes); on a cluster, :func:`iter_blocks`."""
    import dask.array as da

    if client() is not None:
        with closing(iter_blocks(arr)) as blocks:  # closed at once on failure: pending blocks cancelled
            for s, block in blocks:
                write(s, block)
        return

    class _Target:
        def __setitem__(self, key: tuple[slice, ...], value: np.ndarray) -> None:
            write(key, np.asarray(value))

    # dask.array.store takes any object with __setitem__ (its docstring); its annotation asks for an array
    with _failures(on_cluster=False):
        da.store(arr, _Target(), lock=threading.Lock(), scheduler="threads")  # type: ignore[arg-type]


@contextmanager
def _failures(on_cluster: bool) -> Iterator[None]:
    """What can fail around a computation without being our bug, as one clear :class:`ToolFailed`:
    a raster a reader cannot read; on a cluster also a worker that died and a lost scheduler.
    Anything else (our own bugs) propagates unchanged."""
    try:
        yield
    except GeoFahamError:
        raise
    except Exception as exc:
        failed = _failure(exc, on_cluster)
        if failed is None:
            raise
        raise failed from exc


def _failure(exc: Exception, on_cluster: bool) -> ToolFailed | None:
    from rasterio.errors import RasterioError

    if isinstance(exc, RasterioError):
        hint = (
            "every Dask worker must see the inputs at the same paths as this machine (a shared folder); "
            "else check the file"
            if on_cluster
            else "check that the file exists and is a readable raster"
        )
        where = "a Dask worker" if on_cluster else "GeoFaham"
        return ToolFailed(f"{where} could not read the imagery: {_line(exc)}", kind="error", hint=hint)
    if not on_cluster:
        return None
    from distributed import KilledWorker
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError

    if isinstance(exc, KilledWorker):
        return ToolFailed(
            "a Dask worker died while computing the raster (out of memory, or a library missing there)",
            kind="error",
            hint="the worker's log says why; give the workers more memory (dask worker --memory-limit) "
            "or use a smaller area",
        )
    if isinstance(exc, CommClosedError | FutureCancelledError | TimeoutError):
        return ToolFailed(
            f"the Dask cluster {scheduler_address()} dropped the computation: {_line(exc)}",
            kind="error",
            hint=f"check that the scheduler and its workers run, or unset {SCHEDULER_ENV}",
        )
    return None


def _line(exc: BaseException) -> str:
    """An exception as one short line (GDAL and distributed messages can span lines)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:199] + "…"


def _block_slices(arr: Array) -> Iterator[tuple[slice, ...]]:
    import itertools

    bounds = [np.cumsum((0,) + c) for c in arr.chunks]
    for index in itertools.product(*(range(len(c)) for c in arr.chunks)):
        yield tuple(slice(int(b[i]), int(b[i + 1])) for b, i in zip(bounds, index, strict=False))
