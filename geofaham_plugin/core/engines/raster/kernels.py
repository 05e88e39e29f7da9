"""Band math compiled to one loop per pixel with numba, when numba is installed and ``GEOFAHAM_RASTER_JIT``
is on: the same float32 arithmetic as the numpy kernels of :mod:`.ops`, bit for bit (each input cast to
float32 first, IEEE operations in the same order, no fast-math; tests/test_raster_blocks.py compares them),
in one pass over memory instead of numpy's ~11 ufunc passes per pixel (bench/bench_dnbr.py measures both
against the machine's copy bandwidth).

numba is optional: without it, with the setting off (the raster sandbox turns it off for generated code), or
when compiling fails (a hardened process that cannot map code, a numba that refuses this numpy),
:func:`compiled` answers None and :mod:`.ops` runs its numpy slabs; a failure is logged once. The loops release the GIL, so dask's threads run blocks on every core.
Compiled code is cached on disk by numba (next to this file, or in the user's cache when that is read-only),
so a process pays the compile (about a second per input type) once per machine, not per run."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import numpy as np

from ...config import ComputeSettings

log = logging.getLogger(__name__)

#: kernel name -> compiled loop, filled on first use; ``None`` once numba is known to be unusable here
_compiled: dict[str, Callable[..., None]] | None = {}
_lock = threading.Lock()


def _build() -> dict[str, Callable[..., None]]:
    """The compiled loops (imports numba: about half a second, once per process)."""
    from ._numba_loops import KERNELS

    return dict(KERNELS)


def compiled(name: str) -> Callable[..., None] | None:
    """The compiled loop ``name`` (``out`` then the inputs, all 2-D), or None: run numpy."""
    global _compiled
    if not ComputeSettings.from_env().raster_jit:
        return None
    with _lock:
        if _compiled is None:
            return None
        if not _compiled:
            try:
                _compiled = _build()
            except ImportError:
                _compiled = None
                return None
            except Exception:  # noqa: BLE001 — any numba failure: numpy computes the same numbers
                log.warning("numba could not build the raster kernels; using numpy", exc_info=True)
                _compiled = None
                return None
        return _compiled[name]


def run(name: str, out: np.ndarray, *arrays: np.ndarray) -> bool:
    """``out`` = kernel ``name`` of 2-D ``arrays`` (same shape as ``out``), compiled; False (``out`` untouched)
    when there is no compiled kernel, or when numba fails on these inputs (logged once, then numpy for the
    rest of the process)."""
    global _compiled
    kernel = compiled(name)
    if kernel is None:
        return False
    try:
        kernel(out, *arrays)  # the first call per input type compiles, or loads numba's on-disk cache
    except Exception:  # noqa: BLE001 — e.g. an input type numba cannot compile: numpy computes the same
        log.warning("numba failed on the raster kernel %s; using numpy", name, exc_info=True)
        with _lock:
            _compiled = None
        return False
    return True
