"""A 10980² population raster in the QGIS project (a full Sentinel-2 tile's size) listed in the dock, handed to a
run and its loaded copy added back to the map, while a 10 ms QTimer heartbeat on the main thread records each gap
(issue 27: "a 10980² raster in the project does not block the main thread, < 50 ms per event-loop gap"). As in
``test_big_layer_qgis.py``, the goal is asserted on the main thread's own CPU time per gap (``time.thread_time``),
the wall clock gets a generous bound. The raster is generated here, never committed."""

from __future__ import annotations

import time

import numpy as np
import pytest
import rasterio
from qgis.core import QgsProject, QgsRasterLayer
from qgis.PyQt.QtCore import QTimer
from rasterio.transform import from_origin
from rasterio.windows import Window
from test_session_qgis import close_session, wait_for

from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.events import ArtifactEvent, RunEvent
from geofaham_plugin.ui.dock import ChatDock
from geofaham_plugin.ui.session import Session
from geofaham_plugin.ui.user_layers import project_layer_choices, write_user_layers

SIZE = 10_980
STALL_MS = 50
WALL_BOUND_MS = 1000


def _big_population(path, size: int = SIZE) -> None:
    """A smooth, compressible population field (people per 10 m pixel), written block by block (tiled, ZSTD)."""
    profile = {
        "driver": "GTiff", "width": size, "height": size, "count": 1, "dtype": "float32", "crs": "EPSG:32630",
        "transform": from_origin(700_000, 4_400_000, 10, 10), "tiled": True, "blockxsize": 512, "blockysize": 512,
        "compress": "zstd", "nodata": -1,
    }  # fmt: skip
    with rasterio.open(path, "w", **profile) as dst:
        step = 1098
        x = np.linspace(0, 6, size, dtype="float32")
        for r0 in range(0, size, step):
            y = np.linspace(r0 / size * 6, (r0 + step) / size * 6, step, dtype="float32")[:, None]
            dst.write((np.sin(x)[None, :] * np.cos(y) + 1.5).astype("float32"), 1, window=Window(0, r0, size, step))


@pytest.mark.slow
def test_a_10980_square_raster_is_listed_handed_over_and_shown_without_stalling_the_main_thread(qgis_iface, tmp_path):
    path = tmp_path / "worldpop_tile.tif"
    _big_population(path)
    dock = ChatDock(qgis_iface.mainWindow())
    session = Session(dock, session_dir=tmp_path / "session", llm_factory=lambda: LLM(ScriptedModel({})), name="big")
    project = QgsProject.instance()
    try:
        gaps: list[float] = []
        busy: list[float] = []
        last = [time.monotonic(), time.thread_time()]

        def tick() -> None:
            now, cpu = time.monotonic(), time.thread_time()
            gaps.append((now - last[0]) * 1000)
            busy.append((cpu - last[1]) * 1000)
            last[:] = [now, cpu]

        done: list[str] = []
        handed: list = []

        layer = QgsRasterLayer(str(path), "worldpop tile", "gdal")  # the user opens it (QGIS's work, not ours)
        project.addMapLayer(layer)

        def list_and_hand_over() -> None:  # what the dock does when the project changes and when a question is asked
            assert [c.name for c in project_layer_choices(project)] == ["worldpop tile"]
            files, problems = write_user_layers(project, [layer.id()], tmp_path / "session" / "user_layers")
            handed.extend(files)
            assert not problems
            done.append("listed")

        timer = QTimer()
        timer.timeout.connect(tick)
        timer.start(10)
        wait_for(lambda: len(gaps) >= 20, 30, pause=0.001)
        QTimer.singleShot(0, list_and_hand_over)
        wait_for(lambda: done and len(gaps) > 40, 60, pause=0.001)
        timer.stop()  # (what the run's thread does next is done here by the test itself: not timed)
        listed, listed_busy = max(gaps[20:]), max(busy[20:])
        assert [f.path for f in handed] == [path]  # read in place: nothing copied on the main thread

        # the run's thread reads it as a raster of yours and loads it into the store (a COG copy, off the main thread)
        from geofaham_plugin.core.engines.layers import LayerCatalogue

        entry = LayerCatalogue(tmp_path).add_user_layer(handed[0].name, handed[0].path)
        assert (entry.role, entry.raster_kind) == ("values", "population")
        record = session.store.register_raster_file(
            path, source=f"raster.load_raster_layer:{entry.id}", summary="tile", extra={"raster_kind": "population"}
        )
        gaps.clear()
        busy.clear()
        last[:] = [time.monotonic(), time.thread_time()]
        timer.start(10)
        wait_for(lambda: len(gaps) >= 5, 30, pause=0.001)
        before = len(gaps)

        def add() -> None:  # the loaded raster shown on the map, styled (a sampled ramp)
            session._on_event(RunEvent(run_id="big", payload=ArtifactEvent(artifact=record)))  # noqa: SLF001
            done.append("added")

        QTimer.singleShot(0, add)
        wait_for(lambda: "added" in done and len(gaps) > before + 10, 120, pause=0.001)
        timer.stop()
        (shown,) = session.layers
        assert shown.isValid() and shown.width() == SIZE
        worst, worst_busy = max(max(gaps), listed), max(max(busy), listed_busy)
        print(
            f"\n{SIZE}² raster: listed and handed over: longest gap main-thread time {listed_busy:.0f} ms "
            f"(wall {listed:.0f} ms); its loaded copy shown and styled: {max(busy):.0f} ms (wall {max(gaps):.0f} ms)"
        )
        assert worst_busy <= STALL_MS
        assert worst < WALL_BOUND_MS
    finally:
        close_session(session)
        project.clear()
