"""The per-pixel loops of :mod:`.kernels`, compiled by numba (imported only by :func:`.kernels._build`, so
numba loads when band math first runs, never at start-up). Module-level functions, so numba can cache
them on disk."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np

# error_model="numpy": x / 0 gives ±inf or NaN as numpy does, never ZeroDivisionError; no fastmath
_jit = numba.njit(nogil=True, cache=True, error_model="numpy")
_NAN = np.float32(np.nan)


@_jit
def nd(x: Any, y: Any) -> Any:
    """(x − y) / (x + y) of two float32 values; NaN where the sum is 0 (as ``ops._nd_into``)."""
    total = x + y
    ratio = (x - y) / total
    return _NAN if total == 0 else ratio


@_jit
def nd_kernel(out: Any, a: Any, b: Any) -> None:
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = nd(np.float32(a[i, j]), np.float32(b[i, j]))


@_jit
def nd_change_kernel(out: Any, a1: Any, b1: Any, a2: Any, b2: Any) -> None:
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            first = nd(np.float32(a1[i, j]), np.float32(b1[i, j]))
            out[i, j] = first - nd(np.float32(a2[i, j]), np.float32(b2[i, j]))


KERNELS: dict[str, Callable[..., None]] = {"nd": nd_kernel, "nd_change": nd_change_kernel}
