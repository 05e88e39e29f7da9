"""The Raster tools on a real multi-process Dask cluster (``LocalCluster`` with two worker processes):
graphs and their window readers are pickled, workers in other processes open and read the GeoTIFFs
themselves, results come back block by block, and each tool's output equals the local-threads output
pixel for pixel. Worker failures come back as one ToolFailed line with a hint; a cancelled run stops
between blocks and leaves nothing running on the cluster."""

from __future__ import annotations

import os
import sys
import time

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from affine import Affine
from helpers.raster_scenes import (
    BAND_ORDER,
    UTM,
    UTM_T,
    H,
    W,
    ask_hurst,
    register_hurst,
    register_pair,
    run,
    scenes,
    write_scene,
)
from shapely.geometry import box

from geofaham_plugin.core.engines import raster as rx
from geofaham_plugin.core.engines.raster import compute
from geofaham_plugin.core.errors import ToolFailed
from geofaham_plugin.core.store.models import ItemSetMeta

distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    """Two single-threaded worker processes (spawned: nothing shared with this process but the graph).
    A task that kills its worker is not retried, so a dead worker shows at once."""
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        lc = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        yield lc
    finally:
        compute.close_clients()
        lc.close()


@pytest.fixture(scope="module")
def cli_scheduler(tmp_path_factory):
    """A cluster started the README's way: ``dask scheduler`` and ``dask worker`` as separate programs
    with the repository on their PYTHONPATH; unlike a LocalCluster, whose scheduler lives in this process,
    this scheduler must unpickle the graphs itself. Yields the scheduler's address."""
    import json
    import subprocess

    from conftest import ROOT

    folder = tmp_path_factory.mktemp("dask-cli")
    address_file = folder / "scheduler.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    dask_cli = [sys.executable, "-m", "dask"]
    common = ["--scheduler-file", str(address_file), "--no-dashboard"]
    procs = [
        subprocess.Popen(  # noqa: S603 - our own interpreter, fixed arguments
            [*dask_cli, "scheduler", "--host", "127.0.0.1", "--port", "0", *common],
            env=env,
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        assert eventually(address_file.exists, 30), "dask scheduler did not start"
        procs.append(
            subprocess.Popen(  # noqa: S603
                [*dask_cli, "worker", "--nworkers", "1", "--nthreads", "1", *common],
                env=env,
                cwd=folder,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        yield json.loads(address_file.read_text())["address"]
    finally:
        compute.close_clients()
        for proc in reversed(procs):
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture()
def on_cluster(cluster, monkeypatch):
    """Switch raster graphs to the cluster for what follows; returns the client the engine uses."""

    def switch():
        monkeypatch.setenv(compute.SCHEDULER_ENV, cluster.scheduler_address)
        c = compute.client()
        c.wait_for_workers(2, timeout=30)
        return c

    monkeypatch.delenv(compute.SCHEDULER_ENV, raising=False)
    return switch


def eventually(condition, seconds: float = 10) -> bool:
    """Whether ``condition()`` holds within ``seconds`` (futures are released asynchronously)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def pixels(ctx, record) -> np.ndarray:
    with rasterio.open(ctx.store.abs_path(record.id)) as src:
        return src.read()


def assert_same_pixels(ctx, local, remote) -> None:
    assert remote.id != local.id
    a, b = pixels(ctx, local), pixels(ctx, remote)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True)


def other_lattice_scene(ctx, tmp_path, bands: dict) -> object:
    """``bands`` resampled (by GDAL) onto a 30 m grid shifted by 5 m: reading it onto the 20 m scene
    grid goes through a WarpedVRT in the reader."""
    from rasterio.warp import reproject

    t = Affine(30, 0, UTM_T.c + 5, 0, -30, UTM_T.f - 5)
    h, w = H * 2 // 3, W * 2 // 3
    out = {}
    for name, arr in bands.items():
        dst = np.full((h, w), np.nan, dtype="float32")
        reproject(arr, dst, src_transform=UTM_T, src_crs=UTM, dst_transform=t, dst_crs=UTM, src_nodata=np.nan)
        out[name] = dst
    path = tmp_path / "post30.tif"
    with rasterio.open(
        path, "w", driver="GTiff", width=w, height=h, count=6, dtype="float32", crs=UTM, transform=t, nodata=np.nan
    ) as dst:
        for i, name in enumerate(BAND_ORDER, start=1):
            dst.write(out[name], i)
            dst.set_band_description(i, name)
        dst.update_tags(datetime="2025-01-20T18:00:00Z")
    return ctx.store.register_raster_file(path, source="test", summary="post, 30 m")


def item_sets(ctx, tmp_path):
    """Pre and post STAC item sets whose assets are single-band GeoTIFFs on disk: two pre dates (the
    first cloudy, masked by its SCL band, so the composite is a per-pixel median), one post date."""
    pre, post, _, _ = scenes()
    records = []
    for window, dates in (("pre", (("2024-12-15", True), ("2024-12-20", False))), ("post", (("2025-01-20", False),))):
        items = []
        for day, cloudy in dates:
            bands = {b: a.copy() for b, a in (pre if window == "pre" else post).items() if b in ("nir", "swir22")}
            scl = np.full((H, W), 4, dtype="uint8")
            if cloudy:
                scl[:20] = 9
                for a in bands.values():
                    a[:20] = 9000.0
            assets = {}
            for name, arr in [*bands.items(), ("scl", scl)]:
                p = tmp_path / f"{day}_{name}.tif"
                with rasterio.open(
                    p, "w", driver="GTiff", width=W, height=H, count=1, dtype=arr.dtype, crs=UTM, transform=UTM_T
                ) as dst:
                    dst.write(arr, 1)
                assets[name] = {"href": str(p)}
            footprint = rx.io.reproject_geometry(box(*rx.Grid(UTM, UTM_T, W, H).bounds), UTM, "EPSG:4326")
            items.append(
                {
                    "type": "Feature",
                    "id": f"S2_{day}",
                    "bbox": list(footprint.bounds),
                    "properties": {"datetime": f"{day}T18:00:00Z", "eo:cloud_cover": 30 if cloudy else 1},
                    "assets": assets,
                    "geometry": None,
                }
            )
        meta = ItemSetMeta(
            collection="sentinel-2-l2a", time_start=None, time_end=None, item_count=0, bands=["nir", "swir22", "scl"]
        )
        records.append(ctx.store.register_item_set(items, meta, source="test", summary=f"{window} items"))
    return records


def aoi(ctx, minx=380_210, miny=3_798_910, maxx=381_390, maxy=3_799_730):
    gdf = gpd.GeoDataFrame({"name": ["aoi"]}, geometry=[box(minx, miny, maxx, maxy)], crs=UTM).to_crs(4326)
    return ctx.store.register_vector(gdf, source="test", summary="area of interest")


def test_workers_are_other_processes_that_import_no_qt(cluster, on_cluster):
    c = on_cluster()
    pids = c.run(os.getpid)
    assert len(pids) == 2 and os.getpid() not in pids.values() and len(set(pids.values())) == 2

    def gui_modules():
        return sorted(m for m in sys.modules if m.split(".")[0] in ("qgis", "PyQt5", "PyQt6", "sip"))

    assert c.run(gui_modules) == {w: [] for w in pids}


def test_raster_tools_on_the_cluster_equal_local_threads_pixel_for_pixel(ctx, tmp_path, on_cluster):
    pre, post, severity, _ = register_pair(ctx, tmp_path, UTM, UTM_T)
    post30 = other_lattice_scene(ctx, tmp_path, scenes()[1])
    area = aoi(ctx)
    zones = ctx.store.register_vector(
        gpd.GeoDataFrame(
            {"name": ["west", "east"]},
            geometry=[box(380_000, 3_798_800, 380_900, 3_800_000), box(380_900, 3_798_800, 381_600, 3_800_000)],
            crs=UTM,
        ),
        source="test",
        summary="zones",
    )

    def tools():
        d = run(ctx, "dnbr", pre=pre, post=post)
        out = {
            "dnbr": d,
            "burn_severity": run(ctx, "burn_severity", dnbr=d),
            "threshold": run(ctx, "threshold", {"value": 0.27, "op": ">="}, raster=d),
            "ndwi_in_aoi": run(ctx, "compute_index", {"index": "ndwi"}, scene=post, aoi=area),
            "nbr_change": run(ctx, "index_change", {"index": "nbr"}, pre=pre, post=post),
            "flood_extent": run(ctx, "flood_extent", {"index": "mndwi"}, post=post, pre=pre),
            "dnbr_resampled": run(ctx, "dnbr", pre=pre, post=post30),  # post read through a WarpedVRT
        }
        stats = {
            "zonal": run(ctx, "zonal_stats", {"by": "name"}, raster=d, zones=zones).extra["zones"],
            "by_class": run(ctx, "zonal_stats", raster=d, zones=out["burn_severity"]).extra["zones"],
            "mean": run(ctx, "raster_stats", {"stat": "mean"}, raster=d, zones=area).extra["value"],
        }
        return out, stats

    local, local_stats = tools()
    c = on_cluster()
    with distributed.get_task_stream(client=c) as stream:
        remote, remote_stats = tools()
    same_ids = {local[n].id: remote[n].id for n in local}
    for name in local:
        assert_same_pixels(ctx, local[name], remote[name])
        summary = local[name].summary
        for a, b in same_ids.items():
            summary = summary.replace(a, b)
        assert remote[name].summary == summary  # the same numbers quoted
    assert remote_stats == local_stats
    # the numbers are right, not only equal: severity classes as built into the scenes
    classes = pixels(ctx, remote["burn_severity"])[0]
    assert np.array_equal(classes, severity) and remote_stats["by_class"][4]["pixels"] == int((severity == 4).sum())
    assert np.isnan(pixels(ctx, remote["ndwi_in_aoi"])[0]).sum() > 0  # outside the AOI polygon: no data
    # the window reads ran on the workers (each key once per pass), in both worker processes
    reads = [t for t in stream.data if str(t["key"]).startswith(("('read-", "read-"))]
    assert reads and {t["worker"] for t in stream.data} == set(c.scheduler_info()["workers"])


def test_item_set_composites_on_the_cluster_equal_local_threads(ctx, tmp_path, on_cluster):
    pre, post = item_sets(ctx, tmp_path)
    area = aoi(ctx)
    local = run(ctx, "dnbr", pre=pre, post=post, aoi=area)
    on_cluster()
    remote = run(ctx, "dnbr", pre=pre, post=post, aoi=area)
    assert_same_pixels(ctx, local, remote)
    values = pixels(ctx, remote)[0]
    assert np.nanmax(values) > 0.5 and np.nanmin(values) < 0.1  # burned and unburned pixels: real numbers


def test_results_come_back_block_by_block(ctx, tmp_path, on_cluster):
    path = write_scene(tmp_path / "pre.tif", scenes()[0], UTM, UTM_T)
    ds = rx.load_raster(path, chunks=16)  # 4 x 5 windows
    arr = rx.normalized_difference(ds["nir"].data, ds["swir22"].data)
    expected = compute.compute(arr)[0]
    c = on_cluster()
    got = np.full(arr.shape, -1.0, dtype="float32")
    held = []

    def write(key, block):
        assert block.shape[0] <= 16 and block.shape[1] <= 16
        got[key] = block
        held.append(len(c.futures))  # the blocks this client still refers to: computing or waiting

    compute.store(arr, write)
    ahead = compute.AHEAD_PER_THREAD * 2  # per worker thread; +1: the block just handed over is released
    assert len(held) == 20 and max(held) <= ahead + 1 < 20 and np.array_equal(got, expected, equal_nan=True)
    assert eventually(lambda: not c.futures)


def test_an_orchestrated_raster_question_answers_the_same_on_the_cluster(tmp_path, on_cluster):
    """The Hurst Fire question (dNBR, the fire mask polygonised, zonal statistics) run end to end by
    the orchestrator, locally and on the cluster, each in a session of its own (no reuse between them)."""
    from geofaham_plugin.core.store.store import ResponseStore

    def ask(folder):
        store = ResponseStore(tmp_path / folder)
        try:
            record, _ = ask_hurst(store, *register_hurst(store))
            assert record.status == "answered", record.answer
            return record, store.get(record.cited_artifacts[0]).extra["zones"]
        finally:
            store.close()

    local, local_zones = ask("local")
    c = on_cluster()
    with distributed.get_task_stream(client=c) as stream:
        remote, remote_zones = ask("cluster")
    assert any(str(t["key"]).startswith("('read-") for t in stream.data)  # the dNBR was read on the workers
    assert [s.tool for s in remote.steps] == [s.tool for s in local.steps] == ["dnbr", "polygonize", "zonal_stats"]
    assert remote_zones == local_zones and remote_zones[1]["pixels"] == 10_225
    assert "1: mean 0.395" in remote.answer and "0: mean 0.016" in remote.answer


def test_a_cluster_started_with_the_dask_commands_computes_the_same(ctx, tmp_path, cli_scheduler, monkeypatch):
    pre, post, _, _ = register_pair(ctx, tmp_path, UTM, UTM_T)
    local = run(ctx, "dnbr", pre=pre, post=post)
    monkeypatch.setenv(compute.SCHEDULER_ENV, cli_scheduler)
    compute.client().wait_for_workers(1, timeout=30)
    assert_same_pixels(ctx, local, run(ctx, "dnbr", pre=pre, post=post))


class _CancelAfter:
    """A cancel flag that is set once ``n`` blocks have been written."""

    def __init__(self, n: int) -> None:
        self.checks, self.n = 0, n

    def is_set(self) -> bool:
        self.checks += 1
        return self.checks > self.n


def test_a_cancelled_write_stops_between_blocks_and_frees_the_cluster(ctx, tmp_path, on_cluster):
    path = write_scene(tmp_path / "pre.tif", scenes()[0], UTM, UTM_T)
    ds = rx.load_raster(path, chunks=16)
    c = on_cluster()
    cancel = _CancelAfter(3)
    with pytest.raises(ToolFailed) as err:
        rx.write_raster([ds["nir"].data], ds.attrs["grid"], tmp_path / "out.tif", chunk=16, cancel=cancel)
    assert err.value.kind == "cancelled" and cancel.checks == 4  # the fourth block was not written
    assert eventually(
        lambda: not c.futures and not c.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))
    )


def _corrupt_first_tile(path) -> None:
    with rasterio.open(path) as src:
        offset = int(src.get_tag_item("BLOCK_OFFSET_0_0", "TIFF", bidx=1))
    os.chmod(path, 0o644)
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(b"\xff" * 64)


def test_a_read_failing_in_a_worker_is_one_clear_tool_failure(ctx, tmp_path, on_cluster):
    pre, post, _, _ = register_pair(ctx, tmp_path, UTM, UTM_T)
    broken = write_scene(tmp_path / "broken.tif", scenes()[1], UTM, UTM_T, time="2025-01-20T18:00:00Z")
    bad = ctx.store.register_raster_file(broken, source="test", summary="post, to be corrupted")
    _corrupt_first_tile(ctx.store.abs_path(bad.id))  # the header still reads: the failure is in the pixel reads
    with pytest.raises(ToolFailed) as local:
        run(ctx, "dnbr", pre=pre, post=bad)
    on_cluster()
    with pytest.raises(ToolFailed) as remote:
        run(ctx, "dnbr", pre=pre, post=bad)
    assert str(local.value).startswith("GeoFaham could not read the imagery: ")
    assert str(remote.value).startswith("a Dask worker could not read the imagery: ")
    assert "\n" not in str(remote.value) and len(str(remote.value)) < 300
    assert remote.value.kind == "error" and "same paths" in remote.value.hint
    for err in (local, remote):  # GDAL's own reason and the file, though rasterio chains them apart
        assert "TIFFReadEncodedTile() failed" in str(err.value) and f"{bad.id}.tif" in str(err.value)


def test_workers_without_the_code_give_one_clear_tool_failure(ctx, tmp_path, on_cluster, monkeypatch):
    """Workers must import the package whose readers the graph carries; a module only this process can
    import stands for a worker machine without GeoFaham installed."""
    (tmp_path / "only_here_mod.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import only_here_mod  # noqa: F401 - importable here, not on the workers

    on_cluster()
    compute.close_clients()  # the check runs when a client connects
    monkeypatch.setattr(compute, "WORKER_MODULE", "only_here_mod")
    with pytest.raises(ToolFailed, match="^the Dask cluster tcp://.* cannot import only_here_mod") as err:
        compute.client()
    assert "every worker" in err.value.hint and "PYTHONPATH" in err.value.hint
    monkeypatch.undo()  # the real package imports on the workers
    on_cluster()
    assert compute.client() is not None


def test_a_worker_that_dies_is_one_clear_tool_failure(ctx, on_cluster):
    import dask.array as da

    c = on_cluster()

    def die(x):
        if x.size:  # not while dask infers the output type here
            os._exit(1)
        return x

    with pytest.raises(ToolFailed, match="^a Dask worker died") as err:
        compute.compute(da.ones((4, 4), chunks=4).map_blocks(die, meta=np.empty((0, 0))))
    assert "--memory-limit" in err.value.hint
    c.wait_for_workers(2, timeout=30)  # the nanny starts a fresh worker


def test_an_unreachable_scheduler_is_one_clear_tool_failure(ctx, tmp_path, monkeypatch):
    import socket

    pre, post, _, _ = register_pair(ctx, tmp_path, UTM, UTM_T)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(compute, "CONNECT_TIMEOUT_S", 1)
    monkeypatch.setenv(compute.SCHEDULER_ENV, f"tcp://127.0.0.1:{port}")
    with pytest.raises(ToolFailed, match=f"^the Dask scheduler tcp://127.0.0.1:{port} cannot be reached") as err:
        run(ctx, "dnbr", pre=pre, post=post)
    assert compute.SCHEDULER_ENV in err.value.hint and "dask scheduler" in err.value.hint
