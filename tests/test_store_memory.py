"""Response Store at scale: frames kept in memory after a write or a read (copies, bounded by bytes), big vector
artifacts written in the background (pending until written, every read identical to the file's), and the
orchestrator's layer events waiting for the file. Small frames with a low threshold stand in for big ones."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import shapely

from geofaham_plugin.core.store import ResponseStore
from geofaham_plugin.core.store.integrity import fingerprint


def _points(n: int, seed: int = 1) -> gpd.GeoDataFrame:
    rng = np.random.default_rng(seed)
    return gpd.GeoDataFrame(
        {
            "damage_class": rng.choice(["none", "minor", "destroyed"], n),
            "is_damaged": rng.integers(0, 2, n).astype(bool),
            "n": np.arange(n, dtype="int64"),
            "share": rng.uniform(0, 1, n),
            "note": [None if i % 3 else "x" for i in range(n)],
        },
        geometry=shapely.points(rng.uniform(-118.2, -118.0, n), rng.uniform(34.1, 34.3, n)),
        crs=4326,
    )


def _from_file(store: ResponseStore, artifact_id: str) -> gpd.GeoDataFrame:
    return gpd.read_file(store.abs_path(artifact_id), layer=artifact_id, engine="pyogrio")


def test_background_write_serves_the_frame_then_indexes_the_file(tmp_path):
    store = ResponseStore(tmp_path, background_min_features=100)
    gdf = _points(500)
    record = store.register_vector(gdf, source="test", summary="points")
    assert record.id in store and store.get(record.id).metadata.feature_count == 500  # known while pending
    served = store.read_vector(record.id)
    gdf.loc[0, "damage_class"] = "changed after registering"  # the store holds its own copy
    served.loc[1, "damage_class"] = "changed by a reader"
    store.flush()
    assert not store.is_pending(record.id)
    indexed = store.get(record.id)
    assert indexed.fingerprint and indexed.fingerprint.startswith("content-sha256:")
    assert indexed.metadata == record.metadata
    assert store.verify(record.id) is None
    on_disk = _from_file(store, record.id)
    pd.testing.assert_frame_equal(store.read_vector(record.id), on_disk)
    assert on_disk.loc[0, "damage_class"] != "changed after registering"
    assert on_disk.loc[1, "damage_class"] != "changed by a reader"
    assert fingerprint(store.abs_path(record.id), record.kind, record.id) == indexed.fingerprint
    assert (tmp_path / "artifacts" / f"{record.id}.record.json").is_file()
    assert not store.notes
    store.close()
    again = ResponseStore(tmp_path)  # a new process sees it as any artifact
    assert again.ids() == [record.id] and again.verify(record.id) is None
    pd.testing.assert_frame_equal(again.read_vector(record.id), on_disk)
    again.close()


def test_the_tool_path_gives_the_same_frames_with_and_without_memory(tmp_path):
    """Every read, from memory or a pending write, equals the read of the file a store without either gives."""
    gdf = _points(400, seed=3)
    fast = ResponseStore(tmp_path / "fast", background_min_features=100)
    slow = ResponseStore(tmp_path / "slow", cache_bytes=0, background_min_features=None)
    for store in (fast, slow):
        rec = store.register_vector(gdf, source="test", summary="points")
        sub = store.read_vector(rec.id)
        sub = sub[sub["damage_class"] != "none"].reset_index(drop=True)
        rec2 = store.register_vector(sub, source="test", summary="damaged", inputs=[rec.id])
        store.frames = (store.read_vector(rec.id), store.read_vector(rec2.id))  # type: ignore[attr-defined]
        store.flush()
    for a, b in zip(fast.frames, slow.frames, strict=True):  # type: ignore[attr-defined]
        pd.testing.assert_frame_equal(a, b)
    assert [r.fingerprint for r in fast.records()] == [r.fingerprint for r in slow.records()]
    fast.close()
    slow.close()


def test_frames_that_a_geopackage_changes_are_written_at_once(tmp_path):
    store = ResponseStore(tmp_path, background_min_features=10)
    dated = _points(50).assign(when=pd.Timestamp("2025-01-07", tz="UTC"))
    named = _points(50).rename_axis("building")  # a named index is written as a column
    for gdf in (dated, named):
        rec = store.register_vector(gdf, source="test", summary="x")
        assert not store.is_pending(rec.id)
        pd.testing.assert_frame_equal(store.read_vector(rec.id), _from_file(store, rec.id))
    store.close()


def test_a_filtered_frame_is_served_as_its_file_gives_it_back(tmp_path):
    store = ResponseStore(tmp_path, background_min_features=10)
    filtered = _points(80).iloc[::-1].iloc[5:60]  # an unnamed integer index, not 0..n-1: not written
    rec = store.register_vector(filtered, source="test", summary="x")
    served = store.read_vector(rec.id)
    assert served.index.tolist() == list(range(55))
    store.flush()
    assert not store.is_pending(rec.id) and not store.notes
    pd.testing.assert_frame_equal(served, _from_file(store, rec.id))
    assert filtered.index[0] == 74  # the caller's frame is left as it was
    store.close()


def test_the_cache_is_bounded_and_reads_come_back_from_the_file(tmp_path):
    from geofaham_plugin.core.store.store import _frame_bytes

    bound = int(2.5 * _frame_bytes(_points(1000)))
    store = ResponseStore(tmp_path, cache_bytes=bound, background_min_features=None)
    ids = [store.register_vector(_points(1000, seed=i), source="test", summary=str(i)).id for i in range(4)]
    cached = list(store._frames._frames)  # noqa: SLF001
    assert len(cached) < 4 and cached[-1] == ids[-1]  # the oldest went first
    assert store._frames._bytes <= bound  # noqa: SLF001
    for artifact_id in ids:
        pd.testing.assert_frame_equal(store.read_vector(artifact_id), _from_file(store, artifact_id))
    store.close()


def test_a_failed_background_write_is_an_error_at_flush(tmp_path, monkeypatch):
    store = ResponseStore(tmp_path, background_min_features=10)

    def broken(*_args, **_kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(gpd.GeoDataFrame, "to_file", broken)
    rec = store.register_vector(_points(20), source="test", summary="x")
    with pytest.raises(Exception, match="could not be written"):
        store.flush()
    assert rec.id not in store
    assert not list((tmp_path / "artifacts").glob(rec.id + ".*"))
    monkeypatch.undo()
    store.close()


def test_pyogrio_reader_matches_geopandas_reader_for_the_fingerprint(tmp_path):
    """The fingerprint of a written artifact is taken from the frame the store reads (geopandas over pyogrio);
    verification reads with pyogrio directly: both must hash the same."""
    store = ResponseStore(tmp_path, background_min_features=None)
    rec = store.register_vector(_points(30), source="test", summary="x")
    raw = pyogrio.read_dataframe(store.abs_path(rec.id), layer=rec.id)
    pd.testing.assert_frame_equal(pd.DataFrame(raw), pd.DataFrame(_from_file(store, rec.id)))
    assert store.verify(rec.id) is None
    store.close()


def test_a_box_read_gives_the_features_that_meet_it_from_memory_or_file(tmp_path):
    store = ResponseStore(tmp_path, background_min_features=None)
    layer = _points(20_000)
    layer.loc[5, "geometry"] = None  # no geometry: in no box
    rec = store.register_vector(layer, source="test", summary="x")
    box = (-118.15, 34.15, -118.1, 34.2)
    b = layer.geometry.bounds
    want = layer[(b.maxx >= box[0]) & (b.minx <= box[2]) & (b.maxy >= box[1]) & (b.miny <= box[3])]
    from_memory = store.read_vector(rec.id, box)
    store._frames.discard(rec.id)  # noqa: SLF001  (as after the memory's bound dropped it)
    from_file = store.read_vector(rec.id, box)
    assert rec.id not in store._frames._frames  # noqa: SLF001  (a part is not kept as the layer)
    for got in (from_memory, from_file):
        assert got["n"].tolist() == want["n"].tolist() and 0 < len(got) < len(layer) // 4
        assert got.geometry.equals(want.geometry.reset_index(drop=True).set_axis(got.index))
    assert len(store.read_vector(rec.id)) == len(layer)
    store.close()


def test_inside_on_a_big_layer_on_disk_reads_only_its_area(tmp_path, monkeypatch):
    from geofaham_plugin.core.agents import ToolContext
    from geofaham_plugin.core.agents import vector as tools
    from geofaham_plugin.core.config import settings_from_env
    from geofaham_plugin.core.engines.layers import default_catalogue

    store = ResponseStore(tmp_path, background_min_features=None)
    ctx = ToolContext(store=store, layers=default_catalogue(), settings=settings_from_env({"GEOFAHAM_OFFLINE": "1"}))
    layer = _points(20_000)
    zone = gpd.GeoDataFrame(geometry=[shapely.Point(-118.1, 34.2).buffer(0.02)], crs=4326).to_crs(32611)
    features, mask = (store.register_vector(g, source="test", summary="x") for g in (layer, zone))
    in_memory = store.read_vector(tools.inside(ctx, tools.NoArgs(), features=features, mask=mask).id)
    store._frames.discard(features.id)  # noqa: SLF001
    sizes = []
    real = pyogrio.read_dataframe
    monkeypatch.setattr(pyogrio, "read_dataframe", lambda *a, **k: sizes.append(len(out := real(*a, **k))) or out)
    from_disk = store.read_vector(tools.inside(ctx, tools.NoArgs(), features=features, mask=mask).id)
    expected = layer[layer.intersects(zone.to_crs(4326).geometry.iloc[0])]
    assert from_disk["n"].tolist() == in_memory["n"].tolist() == expected["n"].tolist() and len(expected) > 100
    assert sizes and sizes[0] < len(layer) // 10  # the area's part of the layer was read, not the layer
    assert list(from_disk.columns) == list(in_memory.columns)  # no index written as a column
    store.close()


def test_a_big_layer_is_written_in_chunks_indexed_and_waits_while_a_step_computes(tmp_path, monkeypatch):
    """pyogrio holds the GIL for each call (10^6 points held it 34 s, stopping the steps and QGIS's main thread):
    a big layer is written in chunks, only while no step computes or when someone waits for it, then given its
    spatial index; the file reads back equal, indexed, the chunks' field types kept (a text field null in the
    first chunk too)."""
    import threading
    import time

    from osgeo import ogr

    from geofaham_plugin.core.store import store as store_module

    monkeypatch.setattr(store_module, "WRITE_CHUNK", 120)
    calls = []
    write = pyogrio.write_dataframe
    monkeypatch.setattr(pyogrio, "write_dataframe", lambda *a, **k: (calls.append(len(a[0])), write(*a, **k))[1])
    store = ResponseStore(tmp_path, background_min_features=100)
    gdf = _points(1000)
    gdf["note"] = [None] * 500 + ["x"] * 500
    with store.computing():
        record = store.register_vector(gdf, source="test", summary="points")
        time.sleep(0.5)
        assert store.is_pending(record.id) and len(calls) <= 1  # at most the chunk that began before the step
        served = store.read_vector(record.id)  # from memory: no wait
    store.flush()
    assert calls == [120] * 8 + [40]
    on_disk = _from_file(store, record.id)
    pd.testing.assert_frame_equal(served, on_disk)
    assert on_disk["note"].isna().sum() == 500 and store.verify(record.id) is None
    ds = ogr.Open(str(store.abs_path(record.id)))
    has = ds.ExecuteSQL(f"SELECT HasSpatialIndex('{record.id}', 'geom')")
    assert has.GetNextFeature().GetField(0) == 1
    ds.ReleaseResultSet(has)
    # a step that needs the file itself (a database tool) is not kept waiting by its own computing
    with store.computing():
        other = store.register_vector(_points(600, seed=2), source="test", summary="more points")
        done = []
        waiter = threading.Thread(target=lambda: done.append(store.abs_path(other.id)))
        waiter.start()
        waiter.join(30)
        assert done and done[0].is_file()
    store.close()
