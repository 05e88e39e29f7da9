"""dNBR over a large two-date uint16 stack, against this machine's memory bandwidth (issue 16).

    .venv/bin/python bench/bench_dnbr.py                 # 10980² (a Sentinel-2 tile at 10 m): a few minutes here
    .venv/bin/python bench/bench_dnbr.py --size 4096     # a quick look

A child measures the machine's copy bandwidth in the same run (``np.copyto`` of the same number of bytes the
band math touches: 4 uint16 inputs + 1 float32 output = 12 B per pixel, through a 256 MiB buffer so it runs
from RAM, not cache; before and after the passes, best of both). Every pass is printed as a share of it
(share = copy time / pass time) with its wall and CPU seconds and its peak RSS; each runs in a fresh process,
so its peak is its own.

Passes:

* ``product``: the Raster agent's engine path end to end from two DEFLATE COGs (lazy dask window reads, the
  fused ``ops.dnbr`` kernel, block-wise GeoTIFF write with the default ``GEOFAHAM_RASTER_COMPRESS``, ZSTD);
  ``product, DEFLATE out`` the same with ``GEOFAHAM_RASTER_COMPRESS=deflate``; ``product, raw in + raw out``
  the same from uncompressed copies of the COGs to uncompressed files: the path without codec work. Each
  then does what the dNBR tool does with the file, timed apart: statistics read back and the store's COG
  copy. The RSS goal (< 1 GB for a full tile) is for these.
* ``product band math``: ``ops.dnbr`` as the product builds it (dask, the product's chunks, threaded
  scheduler) over the uint16 bands held in memory, stored into one float32 array: the band math alone, no
  I/O (the better of two runs in its process: the first also starts dask's thread pool). The bandwidth goal
  (>= 50 % of copy) is for this one.
  It runs the per-pixel loops numba compiles (:mod:`geofaham_plugin.core.engines.raster.kernels`; the first of
  the two runs also compiles them or loads numba's on-disk cache); ``the same, GEOFAHAM_RASTER_JIT=0`` runs
  the numpy slabs the product falls back to without numba.
* ``numpy``: the whole-array numpy expression; ``numexpr`` and ``numpy, row blocks``: the expression over
  blocks of ROWS rows (multithreaded numexpr; numpy with cache-sized temporaries). In-memory passes hold the
  four bands (~1 GB at 10980²) before the clock starts.

Every result is checked pixel for pixel against the whole-array numpy expression."""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BANDS = ("B08", "B12")  # nir, swir22 (Planetary Computer names; normalised on read)


def peak_rss_mb() -> float:
    """Peak resident memory of this process image. ``VmHWM`` starts afresh at exec; ``ru_maxrss``
    would inherit the bench parent's size at fork time on Linux."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux, bytes on macOS


def write_stack(path: Path, size: int, seed: int, burned: bool) -> None:
    """A two-band uint16 COG written strip by strip (never the whole array in memory): smooth
    vegetation reflectance with noise, and for the post date a burned disc in the middle."""
    import rasterio
    import rasterio.shutil
    from affine import Affine

    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".strips.tif")
    profile = {
        "driver": "GTiff",
        "width": size,
        "height": size,
        "count": 2,
        "dtype": "uint16",
        "crs": "EPSG:32611",
        "transform": Affine(10, 0, 300_000, 0, -10, 3_800_000),
        "tiled": True,
        "blockxsize": 512,
        "blockysize": 512,
        "compress": "deflate",
        "zlevel": 1,
        "BIGTIFF": "IF_SAFER",
    }
    x = np.linspace(0, 6 * np.pi, size, dtype="float32")
    with rasterio.open(tmp, "w", **profile) as dst:
        for i, desc in enumerate(BANDS, start=1):
            dst.set_band_description(i, desc)
        for r0 in range(0, size, 512):
            rows = min(512, size - r0)
            y = (np.arange(r0, r0 + rows, dtype="float32") / size * 4 * np.pi)[:, None]
            base = 0.5 + 0.25 * np.sin(x)[None, :] * np.cos(y)
            nir = 2500 + 1000 * base + rng.normal(0, 60, (rows, size)).astype("float32")
            swir = 1200 + 400 * base + rng.normal(0, 40, (rows, size)).astype("float32")
            if burned:
                yy, xx = np.ogrid[r0 : r0 + rows, 0:size]
                disc = (yy - size / 2) ** 2 + (xx - size / 2) ** 2 < (size / 4) ** 2
                nir = np.where(disc, nir * 0.55, nir)
                swir = np.where(disc, swir * 1.6, swir)
            dst.write(np.clip(nir, 1, 10000).astype("uint16"), 1, window=((r0, r0 + rows), (0, size)))
            dst.write(np.clip(swir, 1, 10000).astype("uint16"), 2, window=((r0, r0 + rows), (0, size)))
    rasterio.shutil.copy(tmp, path, driver="COG", COMPRESS="DEFLATE", LEVEL=1, BIGTIFF="IF_SAFER", OVERVIEWS="NONE")
    tmp.unlink()


def cpu_seconds() -> float:
    return time.process_time()  # every thread of this process


def run_product(pre: Path, post: Path, out: Path, chunk: int, compress: str) -> dict:
    """The Raster agent's dNBR: the engine (read, compute, write), then what its tool does with the file
    (``register_float``: statistics read back, the store's COG copy), timed apart."""
    import os

    os.environ["GEOFAHAM_RASTER_COMPRESS"] = compress  # the written GeoTIFF and the store's COG
    from geofaham_plugin.core.agents.raster.outputs import file_stats
    from geofaham_plugin.core.engines import raster as rx
    from geofaham_plugin.core.engines.raster import ops
    from geofaham_plugin.core.store.store import ResponseStore

    t0, c0 = time.perf_counter(), cpu_seconds()
    a = rx.load_raster(pre, bands=["nir", "swir22"], chunks=chunk)
    b = rx.load_raster(post, bands=["nir", "swir22"], chunks=chunk)
    rx.write_raster(
        [ops.dnbr(a, b)], a.attrs["grid"], out, dtype="float32", nodata=float("nan"), band_names=["dNBR"], chunk=chunk
    )
    result = timed(t0, c0)
    t0, c0 = time.perf_counter(), cpu_seconds()
    file_stats(out)
    store = ResponseStore(out.parent / f"store-{out.stem}")
    try:
        store.register_raster_file(out, source="bench", summary="dNBR")
    finally:
        store.close()
    register = timed(t0, c0)
    return result | {"out": str(out), "mb": out.stat().st_size / 1e6, "register": register}


def run_band_math(pre: Path, post: Path, chunk: int) -> dict:
    """``ops.dnbr`` as the product builds it (dask arrays of the product's chunks, threaded scheduler), over
    the bands in memory, stored into one float32 array."""
    import dask.array as da

    from geofaham_plugin.core.engines.raster import ops

    bands = read_bands(pre, post)
    out = np.empty(bands[0].shape, dtype="float32")
    lazy = [da.from_array(Slices(x), chunks=(chunk, chunk), asarray=False, meta=x[:0, :0]) for x in bands]
    runs = []
    for _ in range(2):  # the first run also starts dask's thread pool and imports: keep the better one
        t0, c0 = time.perf_counter(), cpu_seconds()
        da.store(ops.dnbr({"nir": lazy[0], "swir22": lazy[1]}, {"nir": lazy[2], "swir22": lazy[3]}), out, lock=False)
        runs.append(timed(t0, c0))
    from geofaham_plugin.core.engines.raster import kernels

    compiled = kernels.compiled("nd_change") is not None  # numba installed, built, and the setting on
    return min(runs, key=lambda r: r["seconds"]) | {"max_abs_diff": max_abs_diff(out, bands), "compiled": compiled}


class Slices:
    """An in-memory band as the product's window reader looks to dask (``from_array`` copies a numpy
    array whole)."""

    def __init__(self, array: np.ndarray) -> None:
        self.array, self.shape, self.dtype, self.ndim = array, array.shape, array.dtype, array.ndim

    def __getitem__(self, key: tuple[slice, ...]) -> np.ndarray:
        return self.array[key]


def read_bands(pre: Path, post: Path) -> list[np.ndarray]:
    import rasterio

    out = []
    for path in (pre, post):
        with rasterio.open(path) as s:
            out += [s.read(1), s.read(2)]
    return out


def reference(bands: list[np.ndarray]) -> np.ndarray:
    pn, ps, qn, qs = (x.astype("float32") for x in bands)
    return (pn - ps) / (pn + ps) - (qn - qs) / (qn + qs)


def max_abs_diff(got: np.ndarray, bands: list[np.ndarray]) -> float:
    """max |got - numpy| (not timed); NaN where both are NaN counts as equal, NaN in one only as inf."""
    want = reference(bands)
    both = np.isnan(got) & np.isnan(want)
    if (np.isnan(got) != np.isnan(want)).any():
        return float("inf")
    return float(np.abs(np.where(both, 0, got - want)).max())


def timed(t0: float, c0: float) -> dict:
    return {"seconds": time.perf_counter() - t0, "cpu": cpu_seconds() - c0, "peak_rss_mb": peak_rss_mb()}


def run_numpy(pre: Path, post: Path, outputs: list[Path]) -> dict:
    import rasterio

    bands = read_bands(pre, post)
    t0, c0 = time.perf_counter(), cpu_seconds()
    dnbr = reference(bands)
    result = timed(t0, c0)
    diffs = {}
    for out in outputs:  # the product's results, checked pixel for pixel (not timed)
        with rasterio.open(out) as s:
            diff = 0.0
            for _, window in s.block_windows(1):
                got = s.read(1, window=window)
                r, c = window.row_off, window.col_off
                want = dnbr[r : r + window.height, c : c + window.width]
                diff = max(diff, float(np.nanmax(np.abs(got - want))), float((np.isnan(got) != np.isnan(want)).any()))
        diffs[out.name] = diff
    return result | {"max_abs_diff": 0.0, "product_diffs": diffs, "mean_dnbr": float(dnbr.mean())}


BYTES_PER_PIXEL = 4 * 2 + 4  # four uint16 inputs read, one float32 output written
ROWS = 64  # rows per block of the numexpr / blocks passes (64 x 10980 float32 = 2.8 MB per temporary)


def run_copy(size: int) -> dict:
    """Seconds for ``np.copyto`` of BYTES_PER_PIXEL * size² bytes through a 256 MiB buffer (best of 3)."""
    total = BYTES_PER_PIXEL * size * size
    src = np.ones(256 * 2**20, dtype=np.uint8)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # fault the pages in
    best = float("inf")
    for _ in range(3):
        left = total
        t0 = time.perf_counter()
        while left > 0:
            n = min(left, src.size)
            np.copyto(dst[:n], src[:n])
            left -= n
        best = min(best, time.perf_counter() - t0)
    return {"seconds": best, "cpu": best, "bytes": total, "peak_rss_mb": peak_rss_mb()}


def run_blocks(pre: Path, post: Path, mode: str) -> dict:
    """The expression over blocks of ROWS rows, in memory: numexpr (threads) or numpy."""
    bands = read_bands(pre, post)
    pre_nir, pre_swir, post_nir, post_swir = bands
    out = np.empty(pre_nir.shape, dtype="float32")
    t0, c0 = time.perf_counter(), cpu_seconds()
    if mode == "numexpr":
        import numexpr as ne

        for r in range(0, out.shape[0], ROWS):
            pn, ps = pre_nir[r : r + ROWS].astype("float32"), pre_swir[r : r + ROWS].astype("float32")
            qn, qs = post_nir[r : r + ROWS].astype("float32"), post_swir[r : r + ROWS].astype("float32")
            ne.evaluate("(pn - ps) / (pn + ps) - (qn - qs) / (qn + qs)", out=out[r : r + ROWS])
    else:
        for r in range(0, out.shape[0], ROWS):
            pn, ps = pre_nir[r : r + ROWS].astype("float32"), pre_swir[r : r + ROWS].astype("float32")
            qn, qs = post_nir[r : r + ROWS].astype("float32"), post_swir[r : r + ROWS].astype("float32")
            out[r : r + ROWS] = (pn - ps) / (pn + ps) - (qn - qs) / (qn + qs)
    return timed(t0, c0) | {"max_abs_diff": max_abs_diff(out, bands)}


def write_raw(src: Path, dst: Path) -> None:
    """An uncompressed tiled copy of a COG (the product path without decode work)."""
    import rasterio.shutil

    rasterio.shutil.copy(src, dst, driver="GTiff", TILED="YES", BLOCKXSIZE=512, BLOCKYSIZE=512, BIGTIFF="YES")


def child(mode: str, folder: Path, chunk: int, size: int) -> dict:
    cmd = [sys.executable, __file__, "--mode", mode, "--dir", str(folder), "--chunk", str(chunk), "--size", str(size)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


#: child mode -> (label, what it measures)
PASSES = {
    "product": "product from COGs, ZSTD out (decode + band math + encode)",
    "product-deflate": "product from COGs, DEFLATE out",
    "product-raw": "product, raw in + raw out (no codec)",
    "band-math": "product band math in memory (ops.dnbr, dask; numba)",
    "band-math-numpy": "  the same, GEOFAHAM_RASTER_JIT=0 (numpy slabs)",
    "numpy": "numpy, whole arrays",
    "numexpr": f"numexpr, {ROWS}-row blocks",
    "blocks": f"numpy, {ROWS}-row blocks",
}


def run_child(mode: str, folder: Path, chunk: int, size: int) -> dict:
    pre, post = folder / "pre.tif", folder / "post.tif"
    if mode == "copy":
        return run_copy(size)
    if mode.startswith("product"):
        if mode == "product-raw":
            return run_product(folder / "pre.raw.tif", folder / "post.raw.tif", folder / f"{mode}.tif", chunk, "none")
        return run_product(pre, post, folder / f"{mode}.tif", chunk, "deflate" if mode.endswith("deflate") else "zstd")
    if mode.startswith("band-math"):
        import os

        os.environ["GEOFAHAM_RASTER_JIT"] = "0" if mode == "band-math-numpy" else "1"
        return run_band_math(pre, post, chunk)
    if mode == "numpy":
        return run_numpy(pre, post, sorted(folder.glob("product*.tif")))
    return run_blocks(pre, post, mode)


def main() -> None:
    from geofaham_plugin.core.engines.raster.io import DEFAULT_CHUNK

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10980, help="pixels per side (10980 = a Sentinel-2 tile at 10 m)")
    parser.add_argument("--chunk", type=int, default=DEFAULT_CHUNK, help="window size of the lazy reads (product's)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each pass; the best is kept (machine load)")
    parser.add_argument("--mode", choices=("copy", *PASSES), help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode:  # a child: one measurement, one JSON line
        print(json.dumps(run_child(args.mode, args.dir, args.chunk, args.size)))
        return
    pixels = args.size * args.size
    print(
        f"dNBR bench: {args.size} x {args.size} px ({pixels / 1e6:.1f} Mpx), two dates x 2 uint16 bands, "
        f"window {args.chunk} px, best of {args.repeat}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-dnbr-") as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        write_stack(folder / "pre.tif", args.size, 1, burned=False)
        write_stack(folder / "post.tif", args.size, 2, burned=True)
        mb = sum(p.stat().st_size for p in folder.glob("*.tif")) / 1e6
        for name in ("pre", "post"):
            write_raw(folder / f"{name}.tif", folder / f"{name}.raw.tif")
        print(f"  wrote 2 COGs ({mb:.0f} MB) and uncompressed copies in {time.perf_counter() - t0:.1f} s")
        copies = [child("copy", folder, args.chunk, args.size)]
        runs: dict[str, dict] = {}
        for mode in PASSES:  # numpy last but one: it checks the product's outputs
            for _ in range(args.repeat):
                run = child(mode, folder, args.chunk, args.size)
                if mode not in runs or run["seconds"] < runs[mode]["seconds"]:
                    runs[mode] = run
        copies.append(child("copy", folder, args.chunk, args.size))  # the machine's load changes: before and after
    copy_s = min(c["seconds"] for c in copies)
    total = copies[0]["bytes"]
    print(
        f"  copy bandwidth (np.copyto of the same {total / 1e9:.2f} GB, 12 B/px): {total / copy_s / 1e9:.2f} GB/s "
        f"(before / after: {copies[0]['seconds']:.3f} s / {copies[1]['seconds']:.3f} s)"
    )
    print(f"  {'pass':58} {'wall s':>7} {'cpu s':>7} {'GB/s':>6} {'% copy':>7} {'RSS MB':>7}  max |diff|")
    for mode, label in PASSES.items():
        run = runs[mode]
        print(
            f"  {label:58} {run['seconds']:7.2f} {run['cpu']:7.2f} {total / run['seconds'] / 1e9:6.2f} "
            f"{100 * copy_s / run['seconds']:6.1f}% {run['peak_rss_mb']:7.0f}  "
            + (f"{run['max_abs_diff']:.1e}" if mode != "numpy" and "max_abs_diff" in run else "")
            + (f"{run['mb']:.0f} MB written" if "mb" in run else "")
        )
        if "register" in run:
            reg = run["register"]
            print(
                f"  {'  then its tool: stats read back + store COG copy':58} {reg['seconds']:7.2f} {reg['cpu']:7.2f}"
                f" {'':6} {'':7} {reg['peak_rss_mb']:7.0f}"
            )
    diffs = runs["numpy"]["product_diffs"]
    print(f"  product outputs vs numpy, max |diff|: {diffs}; mean dNBR {runs['numpy']['mean_dnbr']:.4f}")
    if not runs["band-math"]["compiled"]:
        print("  (numba is not installed or did not build here: the band math pass ran numpy's slabs)")
    share = 100 * copy_s / runs["band-math"]["seconds"]
    rss = max(runs[m]["peak_rss_mb"] for m in PASSES if m.startswith("product"))
    print(
        f"  goal, band math >= 50 % of copy bandwidth: {share:.1f} % -> {'met' if share >= 50 else 'NOT met'}; "
        f"product end to end: {100 * copy_s / runs['product']['seconds']:.1f} % (codec work included)"
    )
    print(f"  goal, product peak RSS < 1024 MB: {rss:.0f} MB -> {'met' if rss < 1024 else 'NOT met'}")


if __name__ == "__main__":
    main()
