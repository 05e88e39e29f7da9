"""Where lazy raster graphs run: threads on this machine, or a Dask cluster.

Every raster operation builds a chunked dask graph (reads are window by window, see ``io``). By
default it runs on the local threaded scheduler. When ``GEOFAHAM_DASK_SCHEDULER`` holds a scheduler
address (``tcp://host:8786``) the same graph runs on that cluster — the way past one machine's memory
and cores; results come back block by block, so the client never holds a whole raster."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ...config import ComputeSettings

if TYPE_CHECKING:
    from dask.array import Array
    from distributed import Client

SCHEDULER_ENV = ComputeSettings.env_of("dask_scheduler")
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

            c = _clients[address] = Client(address, set_as_default=False, timeout="10s")
        return c


def close_clients() -> None:
    """Close every client opened here (tests, plugin unload)."""
    with _lock:
        while _clients:
            _clients.popitem()[1].close()


def compute(*arrays: Any) -> tuple[np.ndarray, ...]:
    """Materialise dask (or numpy) arrays together, sharing reads between them."""
    import dask

    c = client()
    if c is not None:
        return tuple(c.compute(list(arrays), sync=True))
    return tuple(dask.compute(*arrays, scheduler="threads"))


def iter_blocks(arr: Array) -> Iterator[tuple[tuple[slice, ...], np.ndarray]]:
    """``(slices, block)`` for each chunk of a dask array, computed on the configured scheduler; on
    a cluster blocks are yielded as they finish, locally in order, so memory stays one block wide."""
    import dask

    slices = list(_block_slices(arr))
    c = client()
    if c is not None:
        from distributed import as_completed

        futures = {c.compute(arr[s]): s for s in slices}
        for future in as_completed(list(futures), loop=c.loop):
            yield futures[future], future.result()
            future.release()
        return
    for s in slices:
        (block,) = dask.compute(arr[s], scheduler="threads")
        yield s, block


def store(arr: Array, write: Callable[[tuple[slice, ...], np.ndarray], None]) -> None:
    """Compute ``arr`` chunk by chunk and hand each block to ``write(slices, block)``. Locally this is
    ``dask.array.store`` (parallel reads, serialised writes); on a cluster, :func:`iter_blocks`."""
    import dask.array as da

    if client() is not None:
        for s, block in iter_blocks(arr):
            write(s, block)
        return

    class _Target:
        def __setitem__(self, key: tuple[slice, ...], value: np.ndarray) -> None:
            write(key, np.asarray(value))

    # dask.array.store takes any object with __setitem__ (its docstring); its annotation asks for an array
    da.store(arr, _Target(), lock=threading.Lock(), scheduler="threads")  # type: ignore[arg-type]


def _block_slices(arr: Array) -> Iterator[tuple[slice, ...]]:
    import itertools

    bounds = [np.cumsum((0,) + c) for c in arr.chunks]
    for index in itertools.product(*(range(len(c)) for c in arr.chunks)):
        yield tuple(slice(int(b[i]), int(b[i + 1])) for b, i in zip(bounds, index, strict=False))
