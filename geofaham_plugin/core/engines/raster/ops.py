"""Raster analysis on arrays: spectral indices, cloud masks, thresholds, classes, change, areas,
polygons and zonal statistics. Functions take numpy or dask arrays (lazy stays lazy) and a
:class:`~.grid.Grid` where geography matters. Defaults are documented where they are defined, with
their source, because a threshold without a source is a guess."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd

from ...domain.rasters import classification
from .grid import Grid, row_pixel_areas

if TYPE_CHECKING:
    import geopandas as gpd
    import xarray as xr
    from shapely.geometry.base import BaseGeometry

T = TypeVar("T")

#: index -> (a, b) for (a - b) / (a + b), canonical band names.
INDICES: dict[str, tuple[str, str]] = {
    "ndvi": ("nir", "red"),  # vegetation (Rouse et al. 1974)
    "ndwi": ("green", "nir"),  # open water, McFeeters 1996: water > 0
    "mndwi": ("green", "swir16"),  # open water, Xu 2006: water > 0; less confused by built-up land
    "nbr": ("nir", "swir22"),  # Normalized Burn Ratio (Key & Benson 2006)
    "ndbi": ("swir16", "nir"),  # built-up (Zha et al. 2003)
}
INDEX_NAMES = tuple(INDICES)
#: open-water thresholds on NDWI / MNDWI (McFeeters 1996; Xu 2006). Turbid flood water often sits
#: slightly below 0 on NDWI; pass a lower threshold when the scene calls for it.
WATER_THRESHOLDS = {"ndwi": 0.0, "mndwi": 0.0}
#: USGS FIREMON / Key & Benson (2006) dNBR severity classes (dNBR unscaled, i.e. ×1 not ×1000):
#: < 0.1 unburned, 0.1-0.27 low, 0.27-0.44 moderate-low, 0.44-0.66 moderate-high, >= 0.66 high.
#: (the one source: ``core/data/rasters.json``, classification ``usgs_dnbr``)
DNBR_BREAKS = tuple(classification("usgs_dnbr").breaks)
DNBR_LABELS = tuple(classification("usgs_dnbr").labels)
BURNED_DNBR = DNBR_BREAKS[0]  # "burned" = any class from low upwards
FLOOD_LABELS = {0: "dry", 1: "flooded", 2: "permanent water"}
WATER_LABELS = {0: "dry", 1: "water"}
NODATA_CLASS = 255


def _xp(*arrays: Any) -> Any:
    """dask.array when any input is lazy, else numpy: one code path for both."""
    if any(hasattr(a, "dask") for a in arrays):
        import dask.array as da

        return da
    return np


# --------------------------------------------------------------------------------- indices
#: Elements per slab of the fused index kernels: 64 Ki float32 = 256 KiB per temporary, so a kernel's
#: few temporaries stay in the core's L2 cache instead of round-tripping block-sized arrays through RAM,
#: while slabs stay long enough that numpy's per-call cost is small (~3x faster than whole-block numpy
#: expressions on a 1024² block; smaller slabs were slower here: bench/README.md, raster).
SLAB = 65536


def normalized_difference(a: Any, b: Any) -> Any:
    """(a − b) / (a + b) as float32; NaN where either is NaN or the sum is 0."""
    return _fused(_nd_kernel, _arr(a), _arr(b))


def _nd_into(out: np.ndarray, a: np.ndarray, b: np.ndarray, total: np.ndarray) -> None:
    """``out`` = (a − b) / (a + b), NaN where a + b == 0 (``total`` is scratch). Division by a NaN sum
    gives NaN already; only a zero sum (x/0 = ±inf, 0/0) needs the mask."""
    np.add(a, b, out=total, dtype=np.float32)  # integer inputs are cast slab by slab, never whole
    np.subtract(a, b, out=out, dtype=np.float32)
    np.divide(out, total, out=out)
    zero = total == 0
    if zero.any():  # rare: skip the masked pass
        np.copyto(out, np.float32(np.nan), where=zero)


def _nd_kernel(out: np.ndarray, a: np.ndarray, b: np.ndarray, total: np.ndarray, _: np.ndarray) -> None:
    _nd_into(out, a, b, total)


def _nd_change_kernel(
    out: np.ndarray,
    a1: np.ndarray,
    b1: np.ndarray,
    a2: np.ndarray,
    b2: np.ndarray,
    total: np.ndarray,
    second: np.ndarray,
) -> None:
    """``out`` = nd(a1, b1) − nd(a2, b2) in one pass."""
    _nd_into(out, a1, b1, total)
    _nd_into(second, a2, b2, total)
    np.subtract(out, second, out=out)


def _fused(kernel: Callable[..., None], *arrays: Any) -> Any:
    """float32 ``kernel(out, *inputs, scratch, scratch)`` over numpy arrays, or block by block over
    dask arrays (lazy stays lazy), in cache-sized slabs: one pass, no block-sized temporaries."""
    if _xp(*arrays) is np:
        return _slabs(*(np.asarray(a) for a in arrays), kernel=kernel)
    import dask.array as da

    lazy = da.broadcast_arrays(*arrays)  # one shape, one chunking
    meta = np.empty((0,) * lazy[0].ndim, dtype="float32")
    return da.map_blocks(_slabs, *lazy, kernel=kernel, dtype="float32", meta=meta)


def _slabs(*arrays: np.ndarray, kernel: Callable[..., None]) -> np.ndarray:
    """Run ``kernel`` compiled per pixel (:mod:`.kernels`, when numba is there), else over slabs of about SLAB
    elements: runs of rows of 2-D blocks (views, so a strided block is never copied), else runs of the
    flattened arrays."""
    same = np.broadcast_arrays(*arrays)
    out = np.empty(same[0].shape, dtype="float32")
    if _compiled_into(out, same, kernel):
        return out
    if out.ndim == 2 and out.shape[1]:
        views, target, step = list(same), out, max(1, SLAB // out.shape[1])
    else:
        views, target, step = [np.ascontiguousarray(a).reshape(-1) for a in same], out.reshape(-1), SLAB
    scratch = np.empty((2, *target[:step].shape), dtype="float32")
    with np.errstate(divide="ignore", invalid="ignore"):
        for start in range(0, len(target), step):
            part = slice(start, start + step)
            n = len(target[part])
            kernel(target[part], *(v[part] for v in views), scratch[0, :n], scratch[1, :n])
    return out


#: the numpy kernels that :mod:`.kernels` also has compiled, by its name for them
_COMPILED = {_nd_kernel: "nd", _nd_change_kernel: "nd_change"}


def _compiled_into(out: np.ndarray, arrays: Sequence[np.ndarray], kernel: Callable[..., None]) -> bool:
    """``out`` = the compiled twin of ``kernel`` over ``arrays`` (same shape as ``out``); False when there is
    none, or for inputs it is not built for (float16, bool, object: numpy's slabs take those)."""
    name = _COMPILED.get(kernel)
    if name is None or not out.size or not all(a.dtype.kind in "ui" or a.dtype in _JIT_FLOATS for a in arrays):
        return False
    from . import kernels

    if out.ndim == 2:
        return kernels.run(name, out, *arrays)
    shape = (-1, out.shape[-1]) if out.ndim > 2 else (1, -1)
    return kernels.run(name, out.reshape(shape), *(a.reshape(shape) for a in arrays))


_JIT_FLOATS = (np.dtype("float32"), np.dtype("float64"))


def required_bands(index: str) -> tuple[str, str]:
    try:
        return INDICES[index.lower()]
    except KeyError:
        raise KeyError(f"unknown index '{index}'; known: {', '.join(INDEX_NAMES)}") from None


def spectral_index(bands: Mapping[str, Any] | xr.Dataset, index: str) -> Any:
    """An index from a mapping of canonical band name -> array (a Dataset works too)."""
    a, b = required_bands(index)
    return normalized_difference(_arr(bands[a]), _arr(bands[b]))


def _arr(x: Any) -> Any:
    return x.data if hasattr(x, "dims") and hasattr(x, "data") else x  # xarray -> its (dask) array


def dnbr(pre: Mapping[str, Any] | xr.Dataset, post: Mapping[str, Any] | xr.Dataset) -> Any:
    """dNBR = NBR_pre − NBR_post: positive where vegetation burned."""
    return index_change(post, pre, "nbr")


def index_change(pre: Mapping[str, Any] | xr.Dataset, post: Mapping[str, Any] | xr.Dataset, index: str) -> Any:
    """post − pre of an index (negative NDVI change = vegetation loss), both indices in one pass."""
    a, b = required_bands(index)
    return _fused(_nd_change_kernel, *(_arr(ds[band]) for ds in (post, pre) for band in (a, b)))


def difference(pre: Any, post: Any) -> Any:
    """post − pre (an index's change: positive where it grew)."""
    return _arr(post) - _arr(pre)


def scl_valid(scl: Any, invalid: Sequence[int] | None = None) -> Any:
    """True where a Sentinel-2 SCL pixel is usable (not cloud, shadow, cirrus, defective or no data)."""
    from .io import SCL_INVALID

    xp = _xp(scl)
    classes = np.asarray(invalid if invalid is not None else SCL_INVALID, dtype="float32")
    return ~(xp.isnan(scl) | xp.isin(scl, classes))


# ------------------------------------------------------------------------------ thresholds
_OPS: dict[str, Callable[..., Any]] = {">": np.greater, ">=": np.greater_equal, "<": np.less, "<=": np.less_equal}


def threshold(values: Any, value: float, op: str = ">") -> Any:
    """uint8 mask: 1 where ``values op value``, 0 elsewhere, 255 where values are NaN."""
    xp = _xp(values)
    with np.errstate(invalid="ignore"):
        hit = _OPS[op](values, value)
    return xp.where(xp.isnan(values), np.uint8(NODATA_CLASS), hit.astype("uint8"))


def classify(values: Any, breaks: Sequence[float]) -> Any:
    """uint8 class per pixel: 0 below ``breaks[0]``, i where ``breaks[i-1] <= v < breaks[i]``, …,
    ``len(breaks)`` at or above the last break; 255 where NaN."""
    xp = _xp(values)
    edges = np.asarray(breaks, dtype="float64")
    if xp is np:
        classes = np.digitize(values, edges).astype("uint8")
    else:
        classes = values.map_blocks(lambda v: np.digitize(v, edges).astype("uint8"), dtype="uint8")
    return xp.where(xp.isnan(values), np.uint8(NODATA_CLASS), classes)


def burn_severity(dnbr_values: Any) -> Any:
    """USGS dNBR severity classes 0-4 (:data:`DNBR_LABELS`), 255 where dNBR is NaN."""
    return classify(dnbr_values, DNBR_BREAKS)


def flood_classes(post_index: Any, pre_index: Any | None = None, value: float = 0.0) -> Any:
    """Water from a water index above ``value``. With a pre-event index: 0 dry, 1 flooded (water now,
    not before), 2 permanent water (water both times); without: 0 dry, 1 water. 255 = no data."""
    xp = _xp(post_index, *([pre_index] if pre_index is not None else []))
    with np.errstate(invalid="ignore"):
        wet = post_index > value
        if pre_index is None:
            out = wet.astype("uint8")
            nan = xp.isnan(post_index)
        else:
            was = pre_index > value
            out = xp.where(wet & was, np.uint8(2), (wet & ~was).astype("uint8"))
            nan = xp.isnan(post_index) | xp.isnan(pre_index)
    return xp.where(nan, np.uint8(NODATA_CLASS), out)


def change_mask(pre_index: Any, post_index: Any, value: float, direction: str = "decrease") -> Any:
    """uint8: 1 where the index changed by more than ``value`` in ``direction`` (post − pre),
    0 elsewhere, 255 where either date has no data."""
    delta = difference(pre_index, post_index)
    return threshold(delta, value, ">") if direction == "increase" else threshold(-delta, value, ">")


# ------------------------------------------------------------------------------------ areas
def class_areas(
    classes: Any, grid: Grid, labels: Mapping[int, str] | None = None, values: Sequence[int] | None = None
) -> pd.DataFrame:
    """Pixels and area (m², per-row pixel areas) of each class value; 255 (no data) is left out."""
    from . import compute

    xp = _xp(classes)
    if values is None:
        present = compute.compute(xp.unique(classes))[0] if xp is not np else np.unique(classes)
        values = [int(v) for v in present if int(v) != NODATA_CLASS]
    if labels:
        values = sorted(set(values) | {int(k) for k in labels})
    rows = [(classes == v).sum(axis=1) for v in values]
    counted = compute.compute(*rows) if xp is not np else rows
    areas = row_pixel_areas(grid)
    out = pd.DataFrame(
        {
            "class": [int(v) for v in values],
            "label": [(labels or {}).get(int(v), str(v)) for v in values],
            "pixels": [int(np.asarray(r).sum()) for r in counted],
            "area_m2": [float(np.asarray(r, dtype="float64") @ areas) for r in counted],
        }
    )
    return out


def geometry_area_m2(geom: BaseGeometry, grid: Grid) -> float:
    """Area of a polygon drawn on ``grid``, measured the way the grid's pixels are (see
    :func:`~.grid.row_pixel_areas`): planar in low-distortion projections, otherwise geodesic with
    edges cut to pixel length, so a polygon traced along pixel edges measures what its pixels do."""
    import shapely

    from ...domain.geodesy import geodesic_area_m2
    from .grid import PLANAR_TOLERANCE, _areal_scale, _crs
    from .io import reproject_geometry

    crs = _crs(grid.crs)
    if not crs.is_geographic:
        scale = _areal_scale(grid, np.array([0.0, grid.height / 2, max(grid.height - 1, 0)]))
        if scale is None or np.all(np.abs(scale - 1) < PLANAR_TOLERANCE):
            unit = crs.axis_info[0].unit_conversion_factor if crs.axis_info else 1.0
            return float(geom.area * unit * unit)
    fine = shapely.segmentize(geom, max(min(grid.res), 1e-12))
    return geodesic_area_m2(reproject_geometry(fine, grid.crs, "EPSG:4326"))


def polygonize(
    classes: np.ndarray, grid: Grid, *, values: Sequence[int] | None = None, labels: Mapping[int, str] | None = None
) -> gpd.GeoDataFrame:
    """One (multi)polygon per class value, traced along pixel edges (``rasterio.features.shapes``,
    4-connectivity), with pixel count and area in m². 255 (no data) is never polygonised."""
    import geopandas as gpd
    from rasterio.features import shapes
    from shapely.geometry import MultiPolygon, shape

    classes = np.asarray(classes)
    wanted = set(int(v) for v in values) if values is not None else None
    mask = classes != NODATA_CLASS
    if wanted is not None:
        mask &= np.isin(classes, list(wanted))
    parts: dict[int, list] = {}
    for geom, value in shapes(
        classes.astype("uint8") if classes.dtype != np.uint8 else classes,
        mask=mask,
        transform=grid.transform,
        connectivity=4,
    ):
        parts.setdefault(int(value), []).append(shape(geom))
    counts = class_areas(classes, grid, labels=None, values=sorted(parts))
    rows = []
    for _, row in counts.iterrows():
        polys = parts[int(row["class"])]
        geom = polys[0] if len(polys) == 1 else MultiPolygon(polys)
        rows.append(
            {
                "class": int(row["class"]),
                "label": (labels or {}).get(int(row["class"]), str(int(row["class"]))),
                "pixels": int(row["pixels"]),
                "area_m2": geometry_area_m2(geom, grid),
                "geometry": geom,
            }
        )
    columns = ["class", "label", "pixels", "area_m2", "geometry"]
    return gpd.GeoDataFrame(rows or None, columns=columns, geometry="geometry", crs=grid.crs)


# ------------------------------------------------------------------------------------ zonal
def _stats(
    values: np.ndarray, areas: np.ndarray, above: float | None = None, below: float | None = None
) -> dict[str, float]:
    ok = ~np.isnan(values)
    v = values[ok].astype("float64")
    share = {}
    if above is not None or below is not None:  # the valid pixels at or above ``above`` and below ``below``
        hit = np.ones(v.shape, bool)
        if above is not None:
            hit &= v >= above
        if below is not None:
            hit &= v < below
        share = {
            "share_above": float(hit.mean()) if v.size else np.nan,
            "area_within_m2": float(areas[ok][hit].sum()) if v.size else 0.0,
        }
    if not v.size:
        return share | {
            "pixels": 0,
            "area_m2": 0.0,
            "mean": np.nan,
            "min": np.nan,
            "max": np.nan,
            "std": np.nan,
            "median": np.nan,
            "sum": 0.0,
        }
    return share | {
        "pixels": int(v.size),
        "area_m2": float(areas[ok].sum()),
        "mean": float(v.mean()),
        "min": float(v.min()),
        "max": float(v.max()),
        "std": float(v.std()),
        "median": float(np.median(v)),
        "sum": float(v.sum()),
    }


def zonal_stats(
    values: Any,
    grid: Grid,
    zones: gpd.GeoDataFrame,
    by: str | None = None,
    above: float | None = None,
    below: float | None = None,
) -> pd.DataFrame:
    """Statistics of ``values`` (2-D, on ``grid``) inside each zone of a GeoDataFrame (dissolved by
    ``by`` if given). A pixel belongs to a zone when its centre is inside; NaN pixels are skipped;
    zones may overlap. Only the window under each zone is read. With ``above``: also the share of the
    zone's valid pixels at or above it (``share_above``); with ``below`` too (or alone): of those below it; and
    their area (``area_within_m2``)."""
    from rasterio.features import geometry_mask
    from rasterio.windows import from_bounds

    from . import compute
    from .grid import same_crs

    values = _arr(values)
    zones = zones if same_crs(zones.crs.to_wkt(), grid.crs) else zones.to_crs(grid.crs)
    if by:
        groups = [(str(k), g.geometry.union_all()) for k, g in zones.groupby(by, sort=True)]
    else:
        groups = [(str(i), g) for i, g in zip(zones.index, zones.geometry, strict=False)]
    row_areas = row_pixel_areas(grid)
    out = []
    for name, geom in groups:
        record: dict[str, Any] = {"zone": name}
        if geom is None or geom.is_empty or not _intersects(geom.bounds, grid.bounds):
            record.update(_stats(np.empty(0), np.empty(0), above, below))
            out.append(record)
            continue
        win = from_bounds(*geom.bounds, transform=grid.transform)
        r0, c0 = max(int(np.floor(win.row_off)), 0), max(int(np.floor(win.col_off)), 0)
        r1 = min(int(np.ceil(win.row_off + win.height)) + 1, grid.height)
        c1 = min(int(np.ceil(win.col_off + win.width)) + 1, grid.width)
        if r1 <= r0 or c1 <= c0:
            record.update(_stats(np.empty(0), np.empty(0), above, below))
            out.append(record)
            continue
        sub = grid.window(r0, c0, r1 - r0, c1 - c0)
        inside = geometry_mask([geom], out_shape=sub.shape, transform=sub.transform, invert=True)
        block = values[r0:r1, c0:c1]
        block = compute.compute(block)[0] if hasattr(block, "dask") else np.asarray(block)
        areas = np.broadcast_to(row_areas[r0:r1, None], sub.shape)
        record.update(_stats(np.where(inside, block, np.nan), np.where(inside, areas, 0.0), above, below))
        out.append(record)
    columns = ["zone", "pixels", "area_m2", "mean", "min", "max", "std", "median", "sum"]
    bounded = above is not None or below is not None
    return pd.DataFrame(out, columns=columns + (["share_above", "area_within_m2"] if bounded else []))


def class_areas_inside(
    values: Any, grid: Grid, breaks: Sequence[float], labels: Sequence[str], zones: gpd.GeoDataFrame | None = None
) -> pd.DataFrame:
    """Pixels, area (m², per-row pixel areas) and share of the valid pixels of each class of ``values`` classified
    by ``breaks`` (:func:`classify`), inside the zones merged (a pixel counts when its centre is inside), or over
    the whole grid without zones. NaN pixels are left out."""
    from rasterio.features import geometry_mask

    from . import compute
    from .grid import same_crs

    values = _arr(values)
    r0, c0, r1, c1 = 0, 0, grid.height, grid.width
    inside: np.ndarray | None = None
    if zones is not None:
        from rasterio.windows import from_bounds

        zones = zones if same_crs(zones.crs.to_wkt(), grid.crs) else zones.to_crs(grid.crs)
        geom = zones.geometry.union_all()
        if geom is None or geom.is_empty or not _intersects(geom.bounds, grid.bounds):
            r1 = r0
        else:
            win = from_bounds(*geom.bounds, transform=grid.transform)
            r0, c0 = max(int(np.floor(win.row_off)), 0), max(int(np.floor(win.col_off)), 0)
            r1 = min(int(np.ceil(win.row_off + win.height)) + 1, grid.height)
            c1 = min(int(np.ceil(win.col_off + win.width)) + 1, grid.width)
        if r1 > r0 and c1 > c0:
            sub = grid.window(r0, c0, r1 - r0, c1 - c0)
            inside = geometry_mask([geom], out_shape=sub.shape, transform=sub.transform, invert=True)
    rows = []
    if r1 > r0 and c1 > c0:
        block = values[r0:r1, c0:c1]
        block = compute.compute(block)[0] if hasattr(block, "dask") else np.asarray(block)
        block = block.astype("float64")
        ok = ~np.isnan(block) if inside is None else (~np.isnan(block) & inside)
        classes = np.digitize(np.where(ok, block, 0.0), np.asarray(breaks, dtype="float64"))
        areas = np.broadcast_to(row_pixel_areas(grid)[r0:r1, None], block.shape)
        total = int(ok.sum())
        for i, label in enumerate(labels):
            hit = ok & (classes == i)
            n = int(hit.sum())
            rows.append(
                {
                    "class": i,
                    "label": label,
                    "pixels": n,
                    "area_m2": float(areas[hit].sum()),
                    "share": n / total if total else np.nan,
                }
            )
    return pd.DataFrame(rows, columns=["class", "label", "pixels", "area_m2", "share"])


def zonal_stats_by_class(
    values: Any, classes: Any, grid: Grid, labels: Mapping[int, str] | None = None
) -> pd.DataFrame:
    """Statistics of ``values`` per class of a class raster on the same grid (e.g. inside / outside a
    fire mask); 255 (no data) is left out."""
    from . import compute

    values, classes = _arr(values), _arr(classes)
    v, c = (
        compute.compute(values, classes)
        if hasattr(values, "dask") or hasattr(classes, "dask")
        else (np.asarray(values), np.asarray(classes))
    )
    areas = np.broadcast_to(row_pixel_areas(grid)[:, None], grid.shape)
    out = []
    for value in sorted(int(x) for x in np.unique(c) if int(x) != NODATA_CLASS):
        inside = c == value
        out.append({"zone": (labels or {}).get(value, str(value)), **_stats(v[inside], areas[inside])})
    return pd.DataFrame(out, columns=["zone", "pixels", "area_m2", "mean", "min", "max", "std", "median", "sum"])


def _intersects(a: tuple, b: tuple) -> bool:
    return not (a[0] > b[2] or a[2] < b[0] or a[1] > b[3] or a[3] < b[1])


def quiet(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``fn`` with numpy's all-NaN / division warnings silenced (NaN is how no-data propagates)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)
