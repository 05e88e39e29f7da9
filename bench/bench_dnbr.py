"""dNBR over a large two-date uint16 stack: window by window from COGs (the Raster agent's path:
lazy dask reads, block-wise GeoTIFF write) against a plain numpy pass over the same arrays held in
memory. Prints the throughput ratio and the peak RSS of each (each mode runs in a fresh process, so
its peak is its own).

    .venv/bin/python bench/bench_dnbr.py                 # 10980² (a Sentinel-2 tile at 10 m): ~1 min here
    .venv/bin/python bench/bench_dnbr.py --size 2048     # a quick look

The windowed pass includes decoding the COGs and writing the float32 result; the numpy pass is the
arithmetic only (its arrays are read before the clock starts), so the ratio is a conservative bound
on what the lazy path costs. Goal for 10980²: peak RSS under 1 GB for the windowed pass. The numpy
pass needs about 4.5 GB at that size.

Against the machine (issue 16): a child measures this machine's copy bandwidth in the same run (``np.copyto``
of the same number of bytes the band math touches: 4 uint16 inputs + 1 float32 output = 12 B per pixel, through
a 256 MiB buffer so it runs from RAM, not cache), and each band-math pass is printed as a share of it
(share = copy time / pass time; goal >= 50 %). Two more in-memory passes: ``numexpr`` (multithreaded, the
expression over float32 blocks of rows, no full-size temporaries) and ``blocks`` (the numpy expression over the
same row blocks: cache-friendly temporaries), both checked pixel for pixel against numpy."""

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


def run_windowed(pre: Path, post: Path, out: Path, chunk: int) -> dict:
    from geofaham_plugin.core.engines import raster as rx
    from geofaham_plugin.core.engines.raster import ops

    t0 = time.perf_counter()
    a = rx.load_raster(pre, bands=["nir", "swir22"], chunks=chunk)
    b = rx.load_raster(post, bands=["nir", "swir22"], chunks=chunk)
    rx.write_raster(
        [ops.dnbr(a, b)], a.attrs["grid"], out, dtype="float32", nodata=float("nan"), band_names=["dNBR"], chunk=chunk
    )
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "peak_rss_mb": peak_rss_mb()}


def run_numpy(pre: Path, post: Path, out: Path) -> dict:
    import rasterio

    with rasterio.open(pre) as s:
        pre_nir, pre_swir = s.read(1), s.read(2)
    with rasterio.open(post) as s:
        post_nir, post_swir = s.read(1), s.read(2)
    t0 = time.perf_counter()
    pn, ps = pre_nir.astype("float32"), pre_swir.astype("float32")
    qn, qs = post_nir.astype("float32"), post_swir.astype("float32")
    dnbr = (pn - ps) / (pn + ps) - (qn - qs) / (qn + qs)
    seconds = time.perf_counter() - t0
    with rasterio.open(out) as s:  # the windowed result, checked pixel for pixel (not timed)
        diff = 0.0
        for _, window in s.block_windows(1):
            got = s.read(1, window=window)
            want = dnbr[window.row_off : window.row_off + window.height, window.col_off : window.col_off + window.width]
            diff = max(diff, float(np.nanmax(np.abs(got - want))))
    return {"seconds": seconds, "peak_rss_mb": peak_rss_mb(), "max_abs_diff": diff, "mean_dnbr": float(dnbr.mean())}


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
    return {"seconds": best, "bytes": total, "peak_rss_mb": peak_rss_mb()}


def run_blocks(pre: Path, post: Path, mode: str) -> dict:
    """The expression over blocks of ROWS rows, in memory: numexpr (threads) or numpy."""
    import rasterio

    with rasterio.open(pre) as s:
        pre_nir, pre_swir = s.read(1), s.read(2)
    with rasterio.open(post) as s:
        post_nir, post_swir = s.read(1), s.read(2)
    out = np.empty(pre_nir.shape, dtype="float32")
    t0 = time.perf_counter()
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
    seconds = time.perf_counter() - t0
    pn, ps = pre_nir.astype("float32"), pre_swir.astype("float32")  # the reference, not timed
    qn, qs = post_nir.astype("float32"), post_swir.astype("float32")
    want = (pn - ps) / (pn + ps) - (qn - qs) / (qn + qs)
    return {"seconds": seconds, "peak_rss_mb": peak_rss_mb(), "max_abs_diff": float(np.nanmax(np.abs(out - want)))}


def child(mode: str, folder: Path, chunk: int, size: int) -> dict:
    cmd = [sys.executable, __file__, "--mode", mode, "--dir", str(folder), "--chunk", str(chunk), "--size", str(size)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10980, help="pixels per side (10980 = a Sentinel-2 tile at 10 m)")
    parser.add_argument("--chunk", type=int, default=1024, help="window size of the lazy reads")
    parser.add_argument("--mode", choices=("windowed", "numpy", "copy", "numexpr", "blocks"), help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode:  # a child: one measurement, one JSON line
        pre, post, out = args.dir / "pre.tif", args.dir / "post.tif", args.dir / "dnbr.tif"
        if args.mode == "copy":
            result = run_copy(args.size)
        elif args.mode in ("numexpr", "blocks"):
            result = run_blocks(pre, post, args.mode)
        else:
            result = run_windowed(pre, post, out, args.chunk) if args.mode == "windowed" else run_numpy(pre, post, out)
        print(json.dumps(result))
        return
    pixels = args.size * args.size
    print(
        f"dNBR bench: {args.size} x {args.size} px ({pixels / 1e6:.1f} Mpx), two dates x 2 uint16 bands, "
        f"window {args.chunk} px"
    )
    with tempfile.TemporaryDirectory(prefix="bench-dnbr-") as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        write_stack(folder / "pre.tif", args.size, 1, burned=False)
        write_stack(folder / "post.tif", args.size, 2, burned=True)
        mb = sum(p.stat().st_size for p in folder.glob("*.tif")) / 1e6
        print(f"  wrote 2 COGs ({mb:.0f} MB) in {time.perf_counter() - t0:.1f} s")
        copy = child("copy", folder, args.chunk, args.size)
        windowed = child("windowed", folder, args.chunk, args.size)
        plain = child("numpy", folder, args.chunk, args.size)
        numexpr = child("numexpr", folder, args.chunk, args.size)
        blocks = child("blocks", folder, args.chunk, args.size)
        copy_again = child("copy", folder, args.chunk, args.size)  # the machine's load changes: before and after
    w_rate, n_rate = pixels / windowed["seconds"] / 1e6, pixels / plain["seconds"] / 1e6
    print(
        f"  windowed from COGs (read + compute + write): {windowed['seconds']:7.2f} s  {w_rate:7.1f} Mpx/s  "
        f"peak RSS {windowed['peak_rss_mb']:7.0f} MB"
    )
    print(
        f"  numpy in memory (compute only):              {plain['seconds']:7.2f} s  {n_rate:7.1f} Mpx/s  "
        f"peak RSS {plain['peak_rss_mb']:7.0f} MB"
    )
    print(f"  throughput ratio windowed / in-memory numpy: {w_rate / n_rate:.2f}")
    print(
        f"  peak RSS ratio windowed / numpy: {windowed['peak_rss_mb'] / plain['peak_rss_mb']:.2f}  "
        f"(goal for 10980²: windowed < 1024 MB -> {'met' if windowed['peak_rss_mb'] < 1024 else 'NOT met'})"
    )
    print(f"  results agree: max |windowed - numpy| = {plain['max_abs_diff']:.2e}; mean dNBR {plain['mean_dnbr']:.4f}")
    copy_s = min(copy["seconds"], copy_again["seconds"])
    gbps = copy["bytes"] / copy_s / 1e9
    print(
        f"  copy bandwidth (np.copyto of the same {copy['bytes'] / 1e9:.2f} GB, 12 B/px): {gbps:.2f} GB/s "
        f"(best of the runs before and after: {copy['seconds']:.2f} s / {copy_again['seconds']:.2f} s)"
    )
    for name, run in (
        ("windowed from COGs", windowed),
        ("numpy in memory", plain),
        ("numexpr, row blocks", numexpr),
        ("numpy, row blocks", blocks),
    ):
        share = copy_s / run["seconds"]
        print(
            f"  {name:22} {run['seconds']:7.2f} s  {pixels * BYTES_PER_PIXEL / run['seconds'] / 1e9:5.2f} GB/s  "
            f"{100 * share:5.1f} % of copy bandwidth  peak RSS {run['peak_rss_mb']:6.0f} MB"
            + (f"  max |diff| {run['max_abs_diff']:.1e}" if "max_abs_diff" in run and run is not plain else "")
        )


if __name__ == "__main__":
    main()
