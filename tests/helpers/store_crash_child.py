"""Child process for the Response Store crash tests: registers artifacts in a loop until killed.

    python store_crash_child.py SESSION_DIR SOURCE_TIF SEED [COUNT]

Prints ``ready`` once the store is open, then ``registered <id> <kind>`` after each registration
returned (i.e. after its commit). The parent kills it with SIGKILL at random moments, or sets
``GEOFAHAM_STORE_CRASH_AT`` so it dies at a chosen point inside a registration."""

from __future__ import annotations

import random
import sys

import geopandas as gpd
import numpy as np
import pandas as pd
from shapely.geometry import Point

from geofaham_plugin.core.store import ResponseStore


def main() -> None:
    session, source_tif, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 10_000
    rng = random.Random(seed)
    store = ResponseStore(session)
    print("ready", flush=True)
    for i in range(count):
        choice = rng.choice(["vector", "vector", "vector", "text", "table", "raster"])
        if choice == "vector":
            n = rng.randint(1, 400)
            xy = np.random.default_rng(seed + i).uniform([390_000, 3_780_000], [406_000, 3_789_000], (n, 2))
            gdf = gpd.GeoDataFrame(
                {"n": np.arange(n), "v": xy[:, 0] / 7}, geometry=[Point(x, y) for x, y in xy], crs=26911
            )
            rec = store.register_vector(gdf, source="test.crash", summary=f"{n} points")
        elif choice == "text":
            rec = store.register_text("x" * rng.randint(0, 5000), source="test.crash", summary="text")
        elif choice == "table":
            rec = store.register_table(
                pd.DataFrame({"k": range(rng.randint(0, 300))}), source="test.crash", summary="table"
            )
        else:
            rec = store.register_raster_file(source_tif, source="test.crash", summary="raster")
        print("registered", rec.id, choice, flush=True)


if __name__ == "__main__":
    main()
