"""Your 10^6 points counted by class inside a disaster's perimeter: the whole question through the product (issue 29).

A seeded layer of points (a ``kind`` field of five classes) spread over the Eaton fire's box is written to a
GeoPackage in a temporary folder (never committed), added as the user's layer as ``--layer`` does, and the question
"How many of my points lie inside the Eaton fire perimeter, by kind?" runs through the orchestrator (code's reading,
scripted model: no model server), its steps through the Response Store. The reference, in the same run: the same
points, already in memory, tested against the perimeter prepared in shapely (``intersects_xy``) and counted with
``np.unique``. The answer's counts must equal the reference's.

Prints the time of adding the layer (reading and describing the file), each step's time, the engine steps' total,
the reference's time and the ratio. Not a test; run with ``.venv/bin/python -m bench.bench_user_points [--size N]``.
Results go to ``bench/results/user_points.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import geopandas as gpd
import numpy as np
import shapely

QUESTION = "How many of my points lie inside the Eaton fire perimeter, by kind?"
KINDS = np.array(["house", "shed", "garage", "school", "shop"])
EATON = 11  # events.json


def make_points(n: int, bbox: tuple[float, float, float, float], seed: int = 29) -> gpd.GeoDataFrame:
    rng = np.random.default_rng(seed)
    x0, y0, x1, y1 = bbox
    xs, ys = rng.uniform(x0, x1, n), rng.uniform(y0, y1, n)
    return gpd.GeoDataFrame(
        {"pid": np.arange(n), "kind": KINDS[rng.integers(0, len(KINDS), n)]}, geometry=shapely.points(xs, ys), crs=4326
    )


def reference(points: gpd.GeoDataFrame, perimeter: shapely.Geometry) -> tuple[dict[str, int], float]:
    """Prepared shapely on the points in memory: counts by kind, seconds."""
    xs, ys = points.geometry.x.to_numpy(), points.geometry.y.to_numpy()
    kinds = points["kind"].to_numpy()
    started = time.perf_counter()
    shapely.prepare(perimeter)
    values, counts = np.unique(kinds[shapely.intersects_xy(perimeter, xs, ys)], return_counts=True)
    seconds = time.perf_counter() - started
    return {str(v): int(c) for v, c in zip(values, counts, strict=True)}, seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "user_points.json")
    args = parser.parse_args(argv)
    os.environ.setdefault("GEOFAHAM_OFFLINE", "1")
    os.environ["GEOFAHAM_MODEL_READING"] = "0"  # code's reading: the bench times the engines, not a model

    from geofaham_plugin.core.domain.events import get_event
    from geofaham_plugin.core.engines.layers import LayerCatalogue, data_dir
    from geofaham_plugin.core.llm import LLM, ScriptedModel
    from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
    from geofaham_plugin.core.store.store import ResponseStore

    event = get_event(EATON)
    with tempfile.TemporaryDirectory(prefix="geofaham-user-points-") as tmp:
        folder = Path(tmp)
        points = make_points(args.size, tuple(event.bbox_4326))  # type: ignore[arg-type]
        path = folder / "my_points.gpkg"
        points.to_file(path, layer="my_points", engine="pyogrio")
        catalogue = LayerCatalogue(data_dir())
        started = time.perf_counter()
        catalogue.add_user_layer("my points", path)
        added = time.perf_counter() - started
        store = ResponseStore(folder / "session")
        script = {"progress": [{"action": "finish", "reason": "answered"}] * 4}
        orchestrator = Orchestrator(store, LLM(ScriptedModel(script)), layers=catalogue)
        started = time.perf_counter()
        record = orchestrator.run(QUESTION)
        whole = time.perf_counter() - started
        steps = [(s.tool or "?", s.seconds) for s in record.steps]
        engine = sum(seconds for _, seconds in steps)
        hazard = next(s.artifact_id for s in record.steps if s.tool == "load_event_layer")
        perimeter = shapely.union_all(store.read_vector(hazard).to_crs(4326).geometry.values)
        expected, ref_seconds = reference(points, perimeter)
        values = record.structured.values if record.structured else []
        stated = {str(v.group): int(v.value) for v in values if v.group is not None}
        store.close()
    right = record.status == "answered" and stated == expected
    print(f"{args.size:,} points, question: {QUESTION}")
    print(f"  status {record.status}; counts {'equal the reference' if right else 'DIFFER'}: {stated} vs {expected}")
    print(f"  adding the layer (read + describe): {added:.2f} s")
    for tool, seconds in steps:
        print(f"  step {tool}: {seconds:.2f} s")
    print(f"  engine steps: {engine:.2f} s; whole run: {whole:.2f} s")
    print(
        f"  reference (prepared shapely, points in memory): {ref_seconds:.3f} s; engine / reference: {engine / ref_seconds:.1f}x"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "size": args.size,
                "status": record.status,
                "right": right,
                "add_seconds": added,
                "steps": steps,
                "engine_seconds": engine,
                "run_seconds": whole,
                "reference_seconds": ref_seconds,
                "ratio": engine / ref_seconds,
                "load_average": os.getloadavg()[0],
            },
            indent=2,
        )
    )
    return 0 if right else 1


if __name__ == "__main__":
    raise SystemExit(main())
