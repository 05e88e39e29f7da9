"""Reading rasters and STAC item sets onto one grid, lazily; writing GeoTIFF / COG block by block.

Nothing is read when a dataset is "loaded": each band is a chunked dask array whose chunks are pixel
windows of the target grid. A chunk opens its source, reads only the source pixels under the window — a plain windowed read when the grids share a pixel lattice, a
``WarpedVRT`` (resampling) otherwise — and returns float32 with NaN where there is no valid data.
The same graph runs on local threads or a Dask cluster (see ``compute``)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import rasterio
from rasterio.enums import Resampling
from rasterio.errors import RasterioIOError
from rasterio.vrt import WarpedVRT
from rasterio.windows import Window

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

from ...config import ComputeSettings
from . import compute
from .bands import band_map, canonical_band
from .grid import Grid, crop, grid_of, snap_grid

DEFAULT_CHUNK = 1024
#: Sentinel-2 scene classes treated as invalid: no data, saturated/defective, cloud shadow, cloud
#: medium and high probability, thin cirrus (ESA L2A SCL legend). Snow (11) and water (6) stay valid.
SCL_INVALID = (0, 1, 3, 8, 9, 10)
GDAL_HTTP_ENV = {
    "GDAL_DISABLE_READDIR_ON_OPEN": "EMPTY_DIR",
    "GDAL_HTTP_TIMEOUT": "30",
    "GDAL_HTTP_MAX_RETRY": "3",
    "GDAL_HTTP_RETRY_DELAY": "1",
}

WRITE_CACHE_MB = 256  # GDAL block cache while writing (see write_raster)
#: GeoTIFF creation options per ``GEOFAHAM_RASTER_COMPRESS``. Float rasters of real scenes barely compress
#: (DEFLATE and ZSTD both keep ~86 % of the bytes of noisy float32) but NaN runs do; ZSTD level 1 encodes
#: ~5x faster than DEFLATE level 1 (bench/README.md, raster) and any GDAL >= 2.3 built with libzstd reads it.
COMPRESSION: dict[str, dict[str, Any]] = {
    "zstd": {"compress": "zstd", "zstd_level": 1},
    "deflate": {"compress": "deflate", "zlevel": 1},
    "none": {},
}

Signer = Callable[[str, bool], str]  # (href, refresh) -> href to open (e.g. with a SAS token)


@dataclass(frozen=True)
class Source:
    """One band of one file. ``scale``/``offset`` (from STAC ``raster:bands``) win over the file's own."""

    href: str
    band: int = 1
    scale: float | None = None
    offset: float | None = None
    nodata: float | None = None
    resampling: str = "bilinear"
    sign: Signer | None = field(default=None, compare=False)


# ------------------------------------------------------------------------------------- reading
# Each window read opens its file and closes it again. Cached handles kept in worker threads would
# outlive GDAL when QGIS shuts it down at exit (a crash in the host process); an open costs ~1 ms
# locally, and GDAL's /vsicurl/ cache keeps remote re-opens cheap.


def _is_auth_error(exc: Exception) -> bool:
    text = str(exc)
    return any(code in text for code in ("403", "401", "AuthenticationFailed", "Signature", "expired"))


def read_window(source: Source, grid: Grid) -> np.ndarray:
    """The pixels of ``source`` on ``grid`` as float32, NaN where the source has no valid data."""
    return read_windows([source], grid)[0]


def read_windows(sources: Sequence[Source], grid: Grid) -> list[np.ndarray]:
    """:func:`read_window` for bands of one file (the first source's href and signer), through one open
    dataset: GDAL decodes a pixel-interleaved block once for all of them, not once per band. An
    authentication failure on a signed href is retried once with a fresh signature (SAS tokens
    expire while long jobs run)."""
    source = sources[0]
    for attempt in (0, 1):
        href = source.sign(source.href, attempt == 1) if source.sign else source.href
        try:
            with rasterio.Env(**(GDAL_HTTP_ENV if "://" in href else {})), rasterio.open(href) as src:
                return [_read(src, s, grid) for s in sources]
        except RasterioIOError as exc:
            if attempt == 0 and source.sign is not None and _is_auth_error(exc):
                continue
            failure = _read_failure(exc, href)
        raise failure  # raised outside the handler: nothing chained that a Dask worker cannot pickle
    raise AssertionError("unreachable")


def _read_failure(exc: RasterioIOError, href: str) -> RasterioIOError:
    """A read error as one plain ``RasterioIOError`` naming the file and GDAL's own reason, which
    rasterio keeps in a chained exception that does not survive pickling; a signature (the query of
    a signed href) is never repeated."""
    shown = href.split("?", 1)[0]
    reason = " ".join(str(exc.__cause__ or exc).split()).replace(href, shown)
    return RasterioIOError(reason if shown in reason else f"{shown}: {reason}")


def _read(src: rasterio.io.DatasetReader, source: Source, grid: Grid) -> np.ndarray:
    native = grid_of(src)
    offset = grid.offset_in(native)
    out = None
    if offset is not None:  # same lattice: a plain windowed read of the overlapping part
        row, col = offset
        r0, c0 = max(row, 0), max(col, 0)
        r1, c1 = min(row + grid.height, src.height), min(col + grid.width, src.width)
        window = Window(c0, r0, c1 - c0, r1 - r0)
        if (r1 - r0, c1 - c0) == grid.shape and _mask_is_nodata(src, source.band):
            out = _nodata_to_nan(src.read(source.band, window=window, out_dtype="float32"), src.nodata, source.nodata)
        else:
            out = np.full(grid.shape, np.nan, dtype="float32")
            if r1 > r0 and c1 > c0:
                data = src.read(source.band, window=window, masked=True)
                out[r0 - row : r1 - row, c0 - col : c1 - col] = _valid(data, source)
    else:
        with WarpedVRT(
            src,
            crs=grid.crs,
            transform=grid.transform,
            width=grid.width,
            height=grid.height,
            resampling=Resampling[source.resampling],
            src_nodata=source.nodata if source.nodata is not None else src.nodata,
            nodata=np.nan,
            dtype="float32",
        ) as vrt:
            out = _valid(vrt.read(source.band, masked=True), source)
    scale = source.scale if source.scale is not None else (src.scales[source.band - 1] or 1.0)
    offset_v = source.offset if source.offset is not None else (src.offsets[source.band - 1] or 0.0)
    if scale != 1.0 or offset_v != 0.0:
        out *= np.float32(scale)
        out += np.float32(offset_v)
    return out


#: integer types every value of which float32 holds exactly: ``value == nodata`` on the float32 pixels is
#: then GDAL's own nodata mask, and a band without another mask needs no mask read (bench/README.md, raster)
_EXACT_IN_FLOAT32 = frozenset({"uint8", "int8", "uint16", "int16"})


def _mask_is_nodata(src: rasterio.io.DatasetReader, band: int) -> bool:
    from rasterio.enums import MaskFlags

    flags = src.mask_flag_enums[band - 1]
    return flags == [MaskFlags.all_valid] or (flags == [MaskFlags.nodata] and src.dtypes[band - 1] in _EXACT_IN_FLOAT32)


def _nodata_to_nan(values: np.ndarray, *nodata: float | None) -> np.ndarray:
    for value in set(nodata):
        if value is not None and not np.isnan(value):
            values[values == value] = np.nan
    return values


def _valid(data: np.ma.MaskedArray[Any, Any], source: Source) -> np.ndarray:
    return _nodata_to_nan(np.ma.filled(data.astype("float32"), np.nan), source.nodata)


class _Reader:
    """An array-like dask can slice: ``reader[rows, cols]`` reads that window of the target grid."""

    ndim = 2
    dtype = np.dtype("float32")

    def __init__(self, source: Source, grid: Grid) -> None:
        self.source, self.grid = source, grid
        self.shape = grid.shape

    def __getitem__(self, key: tuple[slice, slice]) -> np.ndarray:
        window, shape = _window(self.grid, *key)
        return read_window(self.source, window) if window else np.empty(shape, dtype="float32")


class _BandsReader:
    """``reader[bands, rows, cols]``: bands of one file on a window of the target grid, read together."""

    ndim = 3
    dtype = np.dtype("float32")

    def __init__(self, sources: Sequence[Source], grid: Grid) -> None:
        self.sources, self.grid = tuple(sources), grid
        self.shape = (len(self.sources), *grid.shape)

    def __getitem__(self, key: tuple[slice, slice, slice]) -> np.ndarray:
        bands, rows, cols = key
        picked = self.sources[bands]
        window, shape = _window(self.grid, rows, cols)
        if window is None or not picked:
            return np.empty((len(picked), *shape), dtype="float32")
        return np.stack(read_windows(picked, window))


def _window(grid: Grid, rows: slice, cols: slice) -> tuple[Grid | None, tuple[int, int]]:
    """The sub-grid under ``grid[rows, cols]`` (``None`` when empty) and its shape."""
    r0, r1, _ = rows.indices(grid.height)
    c0, c1, _ = cols.indices(grid.width)
    shape = (max(r1 - r0, 0), max(c1 - c0, 0))
    return (grid.window(r0, c0, *shape) if all(shape) else None), shape


def require_dask() -> Any:
    """``dask.array``, or a ToolFailed naming the install command (QGIS's Python may lack dask)."""
    try:
        import dask.array as da
        import xarray  # noqa: F401 - datasets are xarray
    except ImportError as exc:
        from ...errors import ToolFailed

        raise ToolFailed(
            f"raster analysis needs {exc.name}, which is not installed",
            kind="error",
            hint="python3 -m pip install --user xarray 'dask[array]'",
        ) from exc
    return da


def lazy_band(source: Source, grid: Grid, chunks: int = DEFAULT_CHUNK) -> Any:
    """A dask array of ``source`` on ``grid``, read window by window when computed."""
    da = require_dask()
    return da.from_array(
        _Reader(source, grid),
        chunks=(chunks, chunks),
        name="read-" + _token([source], grid),
        asarray=False,
        fancy=False,
        meta=np.empty((0, 0), dtype="float32"),
    )


def lazy_bands(sources: Sequence[Source], grid: Grid, chunks: int = DEFAULT_CHUNK) -> list[Any]:
    """Dask arrays of bands of one file on ``grid``; a window of all of them is read at once."""
    if len(sources) < 2:
        return [lazy_band(s, grid, chunks) for s in sources]
    da = require_dask()
    stack = da.from_array(
        _BandsReader(sources, grid),
        chunks=(len(sources), chunks, chunks),
        name="read-" + _token(sources, grid),
        asarray=False,
        fancy=False,
        meta=np.empty((0, 0, 0), dtype="float32"),
    )
    return [stack[i] for i in range(len(sources))]


def _token(sources: Sequence[Source], grid: Grid) -> str:
    from dask.base import tokenize

    fields = [(s.href, s.band, s.scale, s.offset, s.nodata, s.resampling) for s in sources]
    return tokenize(*fields, grid.crs, tuple(grid.transform)[:6], grid.shape)


def aoi_mask(geom_4326: BaseGeometry, grid: Grid, chunks: int = DEFAULT_CHUNK) -> Any:
    """Lazy boolean mask: True where the pixel centre lies inside the AOI polygon."""
    import dask.array as da
    from rasterio.features import geometry_mask
    from shapely.geometry import mapping

    geom = reproject_geometry(geom_4326, "EPSG:4326", grid.crs)
    shapes = [mapping(geom)]

    def block(x: np.ndarray, block_info: Any = None) -> np.ndarray:
        (r0, _), (c0, _) = block_info[None]["array-location"]
        sub = grid.window(r0, c0, x.shape[0], x.shape[1])
        return geometry_mask(shapes, out_shape=sub.shape, transform=sub.transform, invert=True)

    template = da.zeros(grid.shape, chunks=(chunks, chunks), dtype=bool)
    return da.map_blocks(block, template, dtype=bool)


def reproject_geometry(geom: BaseGeometry, src_crs: str, dst_crs: str) -> BaseGeometry:
    from pyproj import Transformer
    from shapely.ops import transform

    from .grid import same_crs

    if same_crs(src_crs, dst_crs):
        return geom
    t = Transformer.from_crs(src_crs, dst_crs, always_xy=True)
    return transform(t.transform, geom)


def aoi_bounds_in(geom_4326: BaseGeometry, crs: str) -> tuple[float, float, float, float]:
    from rasterio.warp import transform_bounds

    return transform_bounds("EPSG:4326", crs, *geom_4326.bounds, densify_pts=21)


@dataclass
class RasterInfo:
    grid: Grid
    bands: list[str]  # canonical names, in file order
    dtypes: list[str]
    nodata: float | None
    tags: dict[str, str]


def raster_info(path: str | Path) -> RasterInfo:
    with rasterio.open(path) as src:
        names = [canonical_band(d) or f"band_{i}" for i, d in enumerate(src.descriptions, start=1)]
        return RasterInfo(grid_of(src), names, list(src.dtypes), src.nodata, src.tags())


def load_raster(
    path: str | Path,
    *,
    bands: Sequence[str] | None = None,
    grid: Grid | None = None,
    aoi_4326: BaseGeometry | None = None,
    chunks: int = DEFAULT_CHUNK,
) -> Any:
    """An ``xarray.Dataset`` with one lazy variable per (canonical) band of a raster file, on ``grid``
    (default: the file's own grid, cut to the AOI's bounds). Outside the AOI polygon pixels are NaN."""
    info = raster_info(path)
    if grid is None:
        grid = info.grid
        if aoi_4326 is not None:
            grid = crop(grid, aoi_bounds_in(aoi_4326, grid.crs))
    wanted = [canonical_band(b) or b for b in (bands or info.bands)]
    missing = [b for b in wanted if b not in info.bands]
    if missing:
        raise KeyError(f"{Path(path).name} has no band(s) {missing}; it has {info.bands}")
    sources = [
        Source(
            str(path),
            info.bands.index(b) + 1,
            nodata=info.nodata,
            resampling="nearest" if b in ("scl", "qa_pixel") else "bilinear",
        )
        for b in wanted
    ]
    arrays = dict(zip(wanted, lazy_bands(sources, grid, chunks), strict=True))
    if aoi_4326 is not None:
        inside = aoi_mask(aoi_4326, grid, chunks)
        arrays = {b: _where(inside, a) for b, a in arrays.items()}
    return _dataset_of(arrays, grid, {"source": str(path), **_time_attrs(info.tags)})


def _where(mask: Any, arr: Any) -> Any:
    import dask.array as da

    return da.where(mask, arr, np.float32(np.nan))


def _time_attrs(tags: Mapping[str, str]) -> dict[str, str]:
    return {k: tags[k] for k in ("datetime", "start_datetime", "end_datetime") if tags.get(k)}


def _dataset_of(arrays: Mapping[str, Any], grid: Grid, attrs: dict[str, Any]) -> Any:
    import xarray as xr

    t = grid.transform
    x = t.c + t.a * (np.arange(grid.width) + 0.5)
    y = t.f + t.e * (np.arange(grid.height) + 0.5)
    ds = xr.Dataset({b: (("y", "x"), a) for b, a in arrays.items()}, coords={"y": y, "x": x})
    ds.attrs.update(attrs, crs=grid.crs, transform=tuple(t)[:6])
    ds.attrs["grid"] = grid
    return ds


# --------------------------------------------------------------------------------- item sets
def item_bands(item: Mapping[str, Any]) -> dict[str, str]:
    """``{canonical: asset key}`` of an item (as recorded by the STAC engine, or resolved now)."""
    recorded = (item.get("properties") or {}).get("geofaham:bands")
    return dict(recorded) if recorded else band_map(item.get("assets") or {})


def _asset_source(item: Mapping[str, Any], band: str, sign: Signer | None) -> Source | None:
    key = item_bands(item).get(band)
    if key is None:
        return None
    asset = item["assets"][key]
    rb = (asset.get("raster:bands") or [{}])[0]
    return Source(
        asset["href"],
        1,
        scale=rb.get("scale"),
        offset=rb.get("offset"),
        nodata=rb.get("nodata"),
        resampling="nearest" if band in ("scl", "qa_pixel") else "bilinear",
        sign=sign,
    )


def _probe(source: Source) -> Grid:
    """The native grid of a source (with the same re-signing as reads)."""
    for attempt in (0, 1):
        href = source.sign(source.href, attempt == 1) if source.sign else source.href
        try:
            with rasterio.Env(**(GDAL_HTTP_ENV if "://" in href else {})), rasterio.open(href) as src:
                return grid_of(src)
        except RasterioIOError as exc:
            if attempt == 0 and source.sign is not None and _is_auth_error(exc):
                continue
            raise
    raise AssertionError("unreachable")


def _sign_for(signer: Any, item: Mapping[str, Any]) -> Signer | None:
    """Per-collection signing (``signer.for_collection``, e.g. a Planetary Computer SAS signer)."""
    return signer.for_collection(item.get("collection") or "") if signer is not None else None


def grid_for_items(
    items: Sequence[Mapping[str, Any]],
    bands: Sequence[str],
    aoi_4326: BaseGeometry,
    *,
    resolution: float | None = None,
    signer: Any = None,
) -> Grid:
    """A grid over the AOI in the items' most common CRS, on the pixel lattice of the coarsest
    requested band of one such item (no resampling for that band), at ``resolution`` if given."""
    from collections import Counter

    probes = []
    for item in items:
        for band in bands:
            source = _asset_source(item, band, _sign_for(signer, item))
            if source is not None:
                probes.append((item, source))
    if not probes:
        raise KeyError(f"no item has any of the bands {list(bands)}")
    infos = [_probe(source) for _, source in probes[: max(len(bands), 1) * 2]]
    crs = Counter(g.crs for g in infos).most_common(1)[0][0]
    anchor_grid = max((g for g in infos if g.crs == crs), key=lambda g: g.res[0])
    res = (resolution, resolution) if resolution else anchor_grid.res
    t = anchor_grid.transform
    return snap_grid(crs, aoi_bounds_in(aoi_4326, crs), res, anchor=(t.c, t.f))


def load_item_set(
    items: Sequence[Mapping[str, Any]],
    bands: Sequence[str],
    grid: Grid,
    *,
    aoi_4326: BaseGeometry | None = None,
    cloud_mask: bool = True,
    signer: Any = None,
    chunks: int = DEFAULT_CHUNK,
) -> Any:
    """A cloud-masked composite of STAC items as an ``xarray.Dataset`` on ``grid``.

    Per item, pixels whose SCL class is in :data:`SCL_INVALID` become NaN (when the item has SCL and
    ``cloud_mask``); items of one date are mosaicked least-cloudy first; dates are combined by a
    per-pixel median, which drops remaining clouds and shadows. ``attrs`` records dates, items and
    whether clouds were masked. ``signer.for_collection(c)`` signs hrefs (Planetary Computer)."""
    import dask.array as da

    wanted = [canonical_band(b) or b for b in bands]
    by_date: dict[str, list[Mapping[str, Any]]] = {}
    for item in sorted(items, key=lambda i: (i.get("properties") or {}).get("eo:cloud_cover") or 0.0):
        props = item.get("properties") or {}
        stamp = props.get("datetime") or props.get("start_datetime") or ""
        by_date.setdefault(stamp[:10], []).append(item)
    used, unmasked = [], 0
    per_date: dict[str, dict[str, Any]] = {}
    for date, group in sorted(by_date.items()):
        mosaic: dict[str, Any] = {}
        for item in group:
            sign = _sign_for(signer, item)
            found = {b: _asset_source(item, b, sign) for b in wanted}
            sources = {b: s for b, s in found.items() if s is not None}
            if len(sources) < len(found):
                continue  # the search keeps only items with every band; be safe anyway
            arrays = {b: lazy_band(s, grid, chunks) for b, s in sources.items()}
            scl = _asset_source(item, "scl", sign) if cloud_mask else None
            if scl is not None:
                classes = lazy_band(scl, grid, chunks)
                bad = da.isnan(classes) | da.isin(classes, np.asarray(SCL_INVALID, dtype="float32"))
                arrays = {b: da.where(bad, np.float32(np.nan), a) for b, a in arrays.items()}
            elif cloud_mask:
                unmasked += 1
            for b, a in arrays.items():
                mosaic[b] = a if b not in mosaic else da.where(da.isnan(mosaic[b]), a, mosaic[b])
            used.append(item.get("id"))
        if mosaic:
            per_date[date] = mosaic
    if not per_date:
        raise KeyError(f"no item has all of the bands {wanted}")
    composite = {}
    for b in wanted:
        layers = [m[b] for m in per_date.values()]
        composite[b] = layers[0] if len(layers) == 1 else _nanmedian(da.stack(layers, axis=0).rechunk({0: -1}))
    if aoi_4326 is not None:
        inside = aoi_mask(aoi_4326, grid, chunks)
        composite = {b: _where(inside, a) for b, a in composite.items()}
    dates = sorted(per_date)
    attrs = {
        "dates": dates,
        "items": used,
        "cloud_masked": cloud_mask and unmasked == 0,
        "unmasked_items": unmasked,
        "start_datetime": dates[0],
        "end_datetime": dates[-1],
    }
    return _dataset_of(composite, grid, attrs)


def _nanmedian(stack: Any) -> Any:
    import dask.array as da

    def block(x: np.ndarray) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN pixels stay NaN
            return np.nanmedian(x, axis=0).astype("float32")

    return da.map_blocks(block, stack, drop_axis=0, dtype="float32")


# ------------------------------------------------------------------------------------- writing
def write_raster(
    layers: Sequence[Any],
    grid: Grid,
    path: str | Path,
    *,
    dtype: str = "float32",
    nodata: float | None = None,
    band_names: Iterable[str] = (),
    tags: Mapping[str, str] | None = None,
    chunk: int = DEFAULT_CHUNK,
    cancel: Any = None,
    compress: str | None = None,
) -> Path:
    """Write 2-D layers (numpy or dask) as a tiled, compressed GeoTIFF, one window at a time, so a
    10980² raster never sits in memory. ``cancel`` (a ``threading.Event``) is checked between
    windows: a cancelled run stops within one window's work. ``compress``: a key of
    :data:`COMPRESSION` (default: the ``GEOFAHAM_RASTER_COMPRESS`` setting)."""
    da = require_dask()
    codec = COMPRESSION[compress or ComputeSettings.from_env().raster_codec]
    path = Path(path)
    arrays = [a if hasattr(a, "dask") else da.from_array(np.asarray(a), chunks=(chunk, chunk)) for a in layers]
    stack = da.stack([a.astype(dtype) for a in arrays], axis=0).rechunk((len(arrays), chunk, chunk))
    profile = {
        "driver": "GTiff",
        "width": grid.width,
        "height": grid.height,
        "count": len(arrays),
        "dtype": dtype,
        "crs": grid.crs,
        "transform": grid.transform,
        "nodata": nodata,
        "tiled": True,
        "blockxsize": 512,
        "blockysize": 512,
        **codec,
        "BIGTIFF": "IF_SAFER",
    }
    names = list(band_names)
    # The output stays open for the whole pass, so its blocks pile up in GDAL's block cache (5 % of
    # RAM by default) before being flushed: capping the cache keeps a 10980² write near 300 MB.
    with rasterio.Env(GDAL_CACHEMAX=WRITE_CACHE_MB), rasterio.open(path, "w", **profile) as dst:
        for i, name in enumerate(names[: len(arrays)], start=1):
            dst.set_band_description(i, name)
        if tags:
            dst.update_tags(**{k: str(v) for k, v in tags.items() if v is not None})

        def write(key: tuple[slice, ...], block: np.ndarray) -> None:
            if cancel is not None and cancel.is_set():
                from ...errors import ToolFailed

                raise ToolFailed("cancelled", kind="cancelled")
            _, rows, cols = key
            dst.write(block, window=Window(cols.start, rows.start, cols.stop - cols.start, rows.stop - rows.start))

        compute.store(stack, write)
    return path


def write_cog(layers: Sequence[Any], grid: Grid, path: str | Path, **kwargs: Any) -> Path:
    """Write a Cloud-Optimized GeoTIFF (tiled, overviews): the tiled GeoTIFF first, then GDAL's COG
    driver, which builds the overviews in a streaming pass (compressed as ``compress``, default: the
    ``GEOFAHAM_RASTER_COMPRESS`` setting)."""
    import rasterio.shutil

    path = Path(path)
    tmp = path.with_name(path.stem + ".tmp.tif")
    settings = ComputeSettings.from_env()
    if kwargs.get("compress"):
        settings = settings.model_copy(update={"raster_compress": kwargs["compress"]})
    try:
        write_raster(layers, grid, tmp, **kwargs)
        with rasterio.Env(GDAL_CACHEMAX=WRITE_CACHE_MB):  # as in write_raster: a tile's blocks pile up
            rasterio.shutil.copy(tmp, path, driver="COG", BIGTIFF="IF_SAFER", **settings.cog_options)
    finally:
        tmp.unlink(missing_ok=True)
    return path
