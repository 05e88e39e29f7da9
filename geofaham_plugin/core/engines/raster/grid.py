"""The pixel grid every raster operation agrees on, and what a pixel measures on the ground.

Two rasters are only combined after both are on one :class:`Grid` (CRS, affine transform, shape).
Pixel areas are in square metres: exact per-row cell areas on the ellipsoid for geographic grids
(a 20 m pixel at 34°N is 17 % smaller in area than one at the equator), planar areas for projected
grids whose scale error is negligible (UTM: < 0.1 %), and scale-corrected areas otherwise (Web
Mercator overstates areas by 1/cos²φ)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from affine import Affine
from pyproj import CRS, Proj, Transformer

WGS84_A = 6378137.0
WGS84_F = 1 / 298.257223563
PLANAR_TOLERANCE = 0.005  # areal scale within 0.5 % of 1 everywhere sampled: planar areas are used


@dataclass(frozen=True)
class Grid:
    """A north-up pixel grid. ``crs`` is any string pyproj understands (kept as text: picklable)."""

    crs: str
    transform: Affine
    width: int
    height: int

    @property
    def shape(self) -> tuple[int, int]:
        return self.height, self.width

    @property
    def res(self) -> tuple[float, float]:
        return abs(self.transform.a), abs(self.transform.e)

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        t = self.transform
        xs = (t.c, t.c + t.a * self.width)
        ys = (t.f, t.f + t.e * self.height)
        return min(xs), min(ys), max(xs), max(ys)

    @property
    def is_geographic(self) -> bool:
        return _crs(self.crs).is_geographic

    def window(self, row_off: int, col_off: int, height: int, width: int) -> Grid:
        """The sub-grid of a pixel window (may extend beyond this grid)."""
        return Grid(self.crs, self.transform * Affine.translation(col_off, row_off), width, height)

    def same_as(self, other: Grid, tol: float = 1e-9) -> bool:
        return (
            self.shape == other.shape
            and same_crs(self.crs, other.crs)
            and all(
                abs(a - b) <= tol * max(1.0, abs(a))
                for a, b in zip(self.transform[:6], other.transform[:6], strict=False)
            )
        )

    def offset_in(self, other: Grid, tol: float = 1e-6) -> tuple[int, int] | None:
        """(row, col) of this grid's origin in ``other``'s pixels when both share CRS, resolution and
        pixel lattice (a plain windowed read then suffices, no resampling); else ``None``."""
        if not same_crs(self.crs, other.crs):
            return None
        a, b = self.transform, other.transform
        if abs(a.a - b.a) > tol * abs(b.a) or abs(a.e - b.e) > tol * abs(b.e) or a.b or a.d or b.b or b.d:
            return None
        col = (a.c - b.c) / b.a
        row = (a.f - b.f) / b.e
        if abs(col - round(col)) > 1e-4 or abs(row - round(row)) > 1e-4:
            return None
        return int(round(row)), int(round(col))


@lru_cache(maxsize=64)
def _crs(text: str) -> CRS:
    return CRS.from_user_input(text)


def crs_text(crs: Any) -> str:
    """A compact, picklable CRS string: ``EPSG:n`` when there is a code, else WKT."""
    text = crs.to_wkt() if hasattr(crs, "to_wkt") else crs
    return _crs_text(text) if isinstance(text, str) else _compact(CRS.from_user_input(text))


@lru_cache(maxsize=64)
def _crs_text(text: str) -> str:  # every window read asks for its file's CRS: parse each once (~1.5 ms)
    return _compact(CRS.from_user_input(text))


def _compact(c: CRS) -> str:
    code = c.to_epsg()
    return f"EPSG:{code}" if code else c.to_wkt()


def same_crs(a: str, b: str) -> bool:
    return a == b or _crs(a) == _crs(b)


def grid_of(dataset: Any) -> Grid:
    """The grid of an open rasterio dataset."""
    return Grid(crs_text(dataset.crs), dataset.transform, dataset.width, dataset.height)


def snap_grid(
    crs: str,
    bounds: tuple[float, float, float, float],
    res: tuple[float, float],
    anchor: tuple[float, float] = (0.0, 0.0),
) -> Grid:
    """The smallest grid of resolution ``res`` covering ``bounds`` whose pixel corners fall on the
    lattice through ``anchor`` (a source's origin), so reads from that source need no resampling."""
    rx, ry = res
    ax, ay = anchor
    minx = ax + math.floor((bounds[0] - ax) / rx + 1e-9) * rx
    maxx = ax + math.ceil((bounds[2] - ax) / rx - 1e-9) * rx
    maxy = ay + math.ceil((bounds[3] - ay) / ry - 1e-9) * ry
    miny = ay + math.floor((bounds[1] - ay) / ry + 1e-9) * ry
    width, height = max(1, int(round((maxx - minx) / rx))), max(1, int(round((maxy - miny) / ry)))
    return Grid(crs, Affine(rx, 0, minx, 0, -ry, maxy), width, height)


def crop(grid: Grid, bounds: tuple[float, float, float, float]) -> Grid:
    """``grid`` cut to the pixels touching ``bounds`` (in the grid's CRS), never beyond the grid."""
    t = grid.transform
    c0 = max(0, math.floor((bounds[0] - t.c) / t.a + 1e-9))
    c1 = min(grid.width, math.ceil((bounds[2] - t.c) / t.a - 1e-9))
    r0 = max(0, math.floor((bounds[3] - t.f) / t.e + 1e-9))
    r1 = min(grid.height, math.ceil((bounds[1] - t.f) / t.e - 1e-9))
    if c1 <= c0 or r1 <= r0:
        raise ValueError("the bounds do not overlap the raster")
    return grid.window(r0, c0, r1 - r0, c1 - c0)


def _q(sin_phi: np.ndarray, e: float) -> np.ndarray:
    """Authalic-latitude helper q(φ) of the ellipsoid (Snyder 1987, eq. 3-12)."""
    es = e * sin_phi
    return (1 - e * e) * (sin_phi / (1 - es * es) - np.log((1 - es) / (1 + es)) / (2 * e))


def cell_area_m2(lat1: np.ndarray, lat2: np.ndarray, dlon_deg: float) -> np.ndarray:
    """Exact area on the WGS84 ellipsoid of lon/lat cells bounded by two parallels and two meridians
    ``dlon_deg`` apart: a² Δλ |q(φ2) − q(φ1)| / 2."""
    e = math.sqrt(WGS84_F * (2 - WGS84_F))
    s1, s2 = np.sin(np.radians(lat1)), np.sin(np.radians(lat2))
    return WGS84_A**2 * math.radians(abs(dlon_deg)) * np.abs(_q(s2, e) - _q(s1, e)) / 2


def row_pixel_areas(grid: Grid) -> np.ndarray:
    """Area in m² of one pixel of each row (shape ``(height,)``); see the module docstring."""
    crs = _crs(grid.crs)
    t = grid.transform
    rows = np.arange(grid.height, dtype="float64")
    if crs.is_geographic:
        to_ll = Transformer.from_crs(crs, 4326, always_xy=True)
        x0 = t.c + t.a * grid.width / 2
        _, lat_top = to_ll.transform(np.full(rows.shape, x0), t.f + t.e * rows)
        _, lat_bottom = to_ll.transform(np.full(rows.shape, x0), t.f + t.e * (rows + 1))
        lon_a, _ = to_ll.transform(np.array([x0]), np.array([t.f]))
        lon_b, _ = to_ll.transform(np.array([x0 + t.a]), np.array([t.f]))
        return cell_area_m2(np.asarray(lat_top), np.asarray(lat_bottom), float(lon_b[0] - lon_a[0]))
    unit = crs.axis_info[0].unit_conversion_factor if crs.axis_info else 1.0
    planar = abs(t.a * t.e - t.b * t.d) * unit * unit
    scale = _areal_scale(grid, rows)
    if scale is None or np.all(np.abs(scale - 1) < PLANAR_TOLERANCE):
        return np.full(grid.height, planar)
    return planar / scale


def _areal_scale(grid: Grid, rows: np.ndarray) -> np.ndarray | None:
    """Areal scale factor of the projection at each row's centre (middle column)."""
    try:
        proj = Proj(_crs(grid.crs))
        to_ll = Transformer.from_crs(_crs(grid.crs), 4326, always_xy=True)
        t = grid.transform
        x = np.full(rows.shape, t.c + t.a * grid.width / 2)
        y = t.f + t.e * (rows + 0.5)
        lon, lat = to_ll.transform(x, y)
        return np.asarray(proj.get_factors(lon, lat).areal_scale, dtype="float64")
    except Exception:  # a projection pyproj cannot differentiate: planar it is
        return None


def pixel_area_m2(grid: Grid) -> float:
    """Area of the centre pixel in m² (what one pixel of this grid measures, for summaries)."""
    return float(row_pixel_areas(grid)[grid.height // 2])
