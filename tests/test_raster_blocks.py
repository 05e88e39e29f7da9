"""The raster engine's fast paths give the pixels of a plain numpy reference: the fused index kernels
(cache-sized slabs, numpy and dask, integer inputs cast slab by slab) with NaN, nodata and zero sums,
and the window reads that skip the mask read, against the masked read they replace. Written GeoTIFFs
throughout; no timing here (performance lives in bench/bench_dnbr.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import rasterio
from affine import Affine

from geofaham_plugin.core.engines import raster as rx
from geofaham_plugin.core.engines.raster import io, kernels, ops

UTM = "EPSG:32611"
T = Affine(10, 0, 300_000, 0, -10, 3_800_000)
H, W = 300, 410  # not a multiple of the chunks below: partial blocks and a partial last slab


def _nd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The definition, written the obvious way: float32, NaN where a + b is 0 or either is NaN."""
    a, b = a.astype("float32"), b.astype("float32")
    total = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total != 0, (a - b) / np.where(total != 0, total, np.float32(1)), np.float32(np.nan))


def _write(path: Path, bands: list[np.ndarray], nodata: float | None, names=("B08", "B12")) -> Path:
    profile = {
        "driver": "GTiff",
        "width": W,
        "height": H,
        "count": len(bands),
        "dtype": str(bands[0].dtype),
        "crs": UTM,
        "transform": T,
        "nodata": nodata,
        "tiled": True,
        "blockxsize": 128,
        "blockysize": 128,
        "compress": "deflate",
    }
    with rasterio.open(path, "w", **profile) as dst:
        for i, (band, name) in enumerate(zip(bands, names, strict=False), start=1):
            dst.write(band, i)
            dst.set_band_description(i, name)
    return path


def _pair(seed: int) -> list[np.ndarray]:
    """nir, swir22 as uint16 with nodata (0) pixels, zero sums and values up to the type's limit."""
    rng = np.random.default_rng(seed)
    nir = rng.integers(1, 10_000, (H, W)).astype("uint16")
    swir = rng.integers(1, 10_000, (H, W)).astype("uint16")
    nir[5, :50] = 0  # nodata in one band
    nir[6, :50], swir[6, :50] = 0, 0  # nodata in both (a + b == 0 too)
    nir[7, :5], swir[7, :5] = 65_535, 65_535  # the largest values
    return [nir, swir]


@pytest.fixture(params=["compiled", "numpy, small slabs", "numpy, default slabs"])
def slabs(request, monkeypatch):
    """Each test under the numba loops (which must then have run) and under numpy's slabs."""
    calls = []
    if request.param == "compiled":
        run = kernels.run
        monkeypatch.setattr(kernels, "run", lambda *a: calls.append(run(*a)) or calls[-1])
    else:
        monkeypatch.setenv("GEOFAHAM_RASTER_JIT", "0")
    if request.param == "numpy, small slabs":
        monkeypatch.setattr(ops, "SLAB", 1000)  # many slabs per block, the last one partial
    yield
    assert calls == ([True] * len(calls) if request.param == "compiled" else [])
    assert calls or request.param != "compiled"


def test_band_math_compiles_per_pixel_with_numba():
    """numba is a requirement of the setup: the compiled loops must build here, not fall back quietly."""
    assert kernels.compiled("nd_change") is not None


def test_fused_indices_match_numpy_on_float_arrays_with_nan_and_zero_sums(slabs):
    rng = np.random.default_rng(0)
    a1, b1, a2, b2 = (rng.normal(0, 1000, (H, W)).astype("float32") for _ in range(4))
    a1[0, :10] = np.nan  # NaN in one input
    b1[1, :10] = -a1[1, :10]  # a + b == 0 with a - b != 0: x / 0
    a2[2, :10], b2[2, :10] = 0, 0  # 0 / 0
    b2[3, 3] = np.inf
    want = _nd(a1, b1) - _nd(a2, b2)
    import dask.array as da

    lazy = [da.from_array(x, chunks=(128, 100)) for x in (a1, b1, a2, b2)]
    for got in (
        ops.dnbr({"nir": a1, "swir22": b1}, {"nir": a2, "swir22": b2}),
        ops.dnbr({"nir": lazy[0], "swir22": lazy[1]}, {"nir": lazy[2], "swir22": lazy[3]}).compute(),
        -ops.index_change({"nir": a1, "swir22": b1}, {"nir": a2, "swir22": b2}, "nbr"),
    ):
        assert got.dtype == np.float32
        assert np.array_equal(got, want, equal_nan=True)
    assert np.isnan(want[1, :10]).all() and np.isnan(want[2, :10]).all() and np.isnan(want[0, :10]).all()
    for got in (ops.normalized_difference(a1, b1), ops.normalized_difference(lazy[0], b1).compute()):
        assert np.array_equal(got, _nd(a1, b1), equal_nan=True)
    # integer and float64 inputs are cast to float32 before the arithmetic, as the reference does
    u = _pair(1)
    assert np.array_equal(ops.normalized_difference(*u), _nd(*u), equal_nan=True)
    f64 = [x.astype("float64") / 3 for x in u]
    assert np.array_equal(ops.normalized_difference(*f64), _nd(*f64), equal_nan=True)


def test_dnbr_through_written_geotiffs_matches_numpy_pixel_for_pixel(tmp_path, slabs):
    pre, post = _pair(2), _pair(3)
    post[1][100:150, 100:200] = 9_000  # a burn
    a = rx.load_raster(_write(tmp_path / "pre.tif", pre, 0), bands=["nir", "swir22"], chunks=128)
    b = rx.load_raster(_write(tmp_path / "post.tif", post, 0), bands=["nir", "swir22"], chunks=128)
    out = rx.write_raster([ops.dnbr(a, b)], a.attrs["grid"], tmp_path / "dnbr.tif", nodata=float("nan"), chunk=128)

    def valid(x: np.ndarray) -> np.ndarray:  # nodata (0) reads as NaN
        return np.where(x == 0, np.float32(np.nan), x.astype("float32"))

    want = _nd(*map(valid, pre)) - _nd(*map(valid, post))
    with rasterio.open(out) as src:
        got = src.read(1)
        assert src.profile["tiled"] and np.isnan(src.nodata) and src.compression is not None
    assert np.array_equal(got, want, equal_nan=True)
    assert np.isnan(got[5, :50]).all() and np.isnan(got[6, :50]).all() and not np.isnan(got[7, :5]).any()


@pytest.mark.parametrize("compress", ["zstd", "deflate", "none"])
def test_every_output_compression_writes_the_same_pixels(tmp_path, compress, monkeypatch):
    monkeypatch.setenv("GEOFAHAM_RASTER_COMPRESS", compress)
    grid = rx.Grid(UTM, T, W, H)
    values = np.random.default_rng(4).normal(0, 1, (H, W)).astype("float32")
    values[:3] = np.nan
    path = rx.write_raster([values], grid, tmp_path / "x.tif", nodata=float("nan"), chunk=128)
    with rasterio.open(path) as src:
        assert (src.compression.value if src.compression else "NONE") == compress.upper()
        assert src.profile["tiled"] and np.isnan(src.nodata)
        assert np.array_equal(src.read(1), values, equal_nan=True)


@pytest.mark.parametrize("compress", ["zstd", "deflate", "none"])
def test_stored_cogs_and_sandbox_cogs_follow_the_compression_setting(tmp_path, store, compress, monkeypatch):
    monkeypatch.setenv("GEOFAHAM_RASTER_COMPRESS", compress)
    grid = rx.Grid(UTM, T, W, H)
    values = np.random.default_rng(7).normal(0, 1, (H, W)).astype("float32")
    cog = rx.write_cog([values], grid, tmp_path / "x.tif", nodata=float("nan"), chunk=128)
    record = store.register_raster_file(cog, source="test", summary="x")
    for path in (cog, store.abs_path(record.id)):
        with rasterio.open(path) as src:
            assert (src.compression.value if src.compression else "NONE") == compress.upper()
            assert np.array_equal(src.read(1), values, equal_nan=True)


@pytest.mark.parametrize(
    ("dtype", "nodata"),
    [("uint16", 0), ("uint16", None), ("int16", -9999), ("uint8", 255), ("float32", -9999.0), ("int32", -1)],
)
def test_window_reads_without_the_mask_give_the_masked_reads_pixels(tmp_path, dtype, nodata, monkeypatch):
    rng = np.random.default_rng(5)
    band = rng.integers(0, 200, (H, W)).astype(dtype)
    if nodata is not None:
        band[10:20, 10:30] = nodata
    path = _write(tmp_path / "x.tif", [band], nodata, names=("B04",))
    grid = rx.raster_info(path).grid
    windows = [grid.window(0, 0, 128, 128), grid.window(250, 380, 64, 64)]  # inside; over the edge
    for override in (None, 7.0):  # a STAC nodata of its own, on top of the file's
        source = rx.Source(str(path), 1, nodata=override)
        fast = [rx.read_window(source, w) for w in windows]
        monkeypatch.setattr(io, "_mask_is_nodata", lambda src, band: False)  # the masked read, always
        masked = [rx.read_window(source, w) for w in windows]
        monkeypatch.undo()
        for f, m in zip(fast, masked, strict=True):
            assert f.dtype == np.float32 and np.array_equal(f, m, equal_nan=True)
        if nodata is not None:
            assert np.isnan(fast[0][10:20, 10:30]).all()
        assert np.isnan(fast[1][50:, :]).all() and np.isnan(fast[1][:, 30:]).all()  # off the file: NaN


def test_scale_and_offset_apply_on_the_fast_path(tmp_path):
    band = np.arange(H * W, dtype="uint16").reshape(H, W)
    path = _write(tmp_path / "x.tif", [band], 0, names=("B04",))
    grid = rx.raster_info(path).grid
    got = rx.read_window(rx.Source(str(path), 1, scale=0.0001, offset=-0.1), grid)
    want = np.where(band == 0, np.float32(np.nan), band.astype("float32") * np.float32(0.0001) + np.float32(-0.1))
    assert np.array_equal(got, want, equal_nan=True)


def test_bands_of_one_file_are_read_through_one_open_per_window(tmp_path, monkeypatch):
    """GDAL decodes a pixel-interleaved block once for every band of an open dataset: a window of nir
    and swir22 costs one open (and one decode), not one per band."""
    pre = _pair(6)
    path = _write(tmp_path / "pre.tif", pre, 0)
    ds = rx.load_raster(path, bands=["nir", "swir22"], chunks=128)
    opened: list[str] = []
    real_open = rasterio.open
    monkeypatch.setattr(io.rasterio, "open", lambda href, *a, **k: opened.append(href) or real_open(href, *a, **k))
    got = ops.spectral_index(ds, "nbr").compute(scheduler="threads")
    assert len(opened) == 3 * 4  # 300 x 410 px in 128-px windows, both bands per open
    valid = [np.where(x == 0, np.float32(np.nan), x.astype("float32")) for x in pre]
    assert np.array_equal(got, _nd(*valid), equal_nan=True)


@pytest.mark.parametrize(
    "dtype", ["uint8", "int16", "int32", "uint16", "float32", "float64", "float16", "bool"], ids=str
)
def test_compiled_and_numpy_band_math_agree_bit_for_bit_on_every_input_type_and_shape(dtype, monkeypatch):
    """The compiled loops against numpy's slabs on the same inputs (same float32 rounding, same NaN), for 1-D,
    2-D (strided views too) and 3-D arrays; float16 and bool go to numpy, whose result is the reference."""
    rng = np.random.default_rng(4)
    bands = [rng.normal(300, 400, (3, 40, 50)).astype(dtype) for _ in range(4)]
    if np.dtype(dtype).kind == "f":
        bands[0][0, 0, :5] = np.nan
        bands[1][0, 1, :5] = -bands[0][0, 1, :5]  # x / 0
    bands[2][1, 2, :5], bands[3][1, 2, :5] = 0, 0  # 0 / 0
    shapes = {
        "3-D": lambda x: x,
        "2-D": lambda x: x[0],
        "strided 2-D": lambda x: x[:, ::2, 3],
        "1-D": lambda x: x[1, 7],
    }
    for shape, view in shapes.items():
        args = [view(b) for b in bands]
        monkeypatch.setenv("GEOFAHAM_RASTER_JIT", "1")
        fast = (
            ops.dnbr({"nir": args[0], "swir22": args[1]}, {"nir": args[2], "swir22": args[3]}),
            ops.normalized_difference(*args[:2]),
        )
        monkeypatch.setenv("GEOFAHAM_RASTER_JIT", "0")
        slow = (
            ops.dnbr({"nir": args[0], "swir22": args[1]}, {"nir": args[2], "swir22": args[3]}),
            ops.normalized_difference(*args[:2]),
        )
        for got, want in zip(fast, slow, strict=True):
            assert got.dtype == np.float32 and got.shape == want.shape, shape
            assert np.array_equal(got, want, equal_nan=True), shape
        assert np.array_equal(slow[1], _nd(*args[:2]), equal_nan=True), shape


def test_a_numba_failure_falls_back_to_numpy_once_with_one_log_line(monkeypatch, caplog):
    def broken() -> dict:
        raise RuntimeError("cannot map executable memory")  # e.g. a hardened sandbox

    monkeypatch.setattr(kernels, "_compiled", {})
    monkeypatch.setattr(kernels, "_build", broken)
    a, b = _pair(5)
    with caplog.at_level("WARNING", logger=kernels.__name__):
        for _ in range(3):
            assert np.array_equal(ops.normalized_difference(a, b), _nd(a, b), equal_nan=True)
    assert [r.getMessage() for r in caplog.records] == ["numba could not build the raster kernels; using numpy"]
    assert kernels.compiled("nd") is None
