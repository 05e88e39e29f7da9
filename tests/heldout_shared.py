"""What the held-out split tests share (from the ninth on): the earlier splits a new one must stay apart from, the
check that a split's file loads as a held-out split, and the readers of the sample data its values are recomputed
from (a layer in a metric CRS, an AOI file, a euro amount as the Catarroja plan writes it, a DINS grade)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd

from bench.aoi_files import aoi_polygon
from bench.spec import BENCH_DIR, PARAPHRASES_FILE, TASKS_FILE, TaskSpec, load_tasks


def earlier_splits(n: int) -> tuple[Path, ...]:
    """The held-out split files before the ``n``-th (``heldout.json`` is the first)."""
    return tuple(BENCH_DIR / ("heldout.json" if i == 1 else f"heldout{i}.json") for i in range(1, n))


def assert_split_loads(tasks: list[TaskSpec], n: int, size: int = 61) -> None:
    """The ``n``-th split: ``size`` held-out tasks ``ho<n>_…`` (31 English, 10 each of Spanish, French and
    Portuguese, the language in the id), offline, one turn, each with expectations and failure modes, and no id
    that the bench's tasks, its paraphrase suite or an earlier split uses."""
    prefix = f"ho{n}_"
    assert len(tasks) == size
    ids = [t.id for t in tasks]
    assert len(ids) == len(set(ids)) and all(i.startswith(prefix) for i in ids)
    assert {t.split for t in tasks} == {"heldout"}
    assert all(t.offline and not t.follow_ups and t.expectations and t.failure_modes for t in tasks)
    assert Counter(t.language for t in tasks) == {"en": 31, "es": 10, "fr": 10, "pt": 10}
    assert all(t.id.startswith(f"{prefix}{t.language}_") for t in tasks if t.language != "en")
    others = load_tasks(TASKS_FILE) + load_tasks(PARAPHRASES_FILE)
    for split in earlier_splits(n):
        others += load_tasks(split)
    assert not set(ids) & {t.id for t in others}


def read(root: Path, path: str, epsg: int | None = None) -> gpd.GeoDataFrame:
    gdf = gpd.read_file(root / path)
    return gdf.to_crs(epsg) if epsg else gdf


def aoi_frame(name: str, epsg: int | None = None) -> gpd.GeoDataFrame:
    gdf = gpd.GeoDataFrame(geometry=[aoi_polygon(name)], crs=4326)
    return gdf.to_crs(epsg) if epsg else gdf


def eur(text: object) -> float:
    """'1.750.000,00 €' -> 1750000.0; missing, empty or not a figure: 0."""
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return 0.0
    digits = "".join(c for c in str(text) if c.isdigit() or c in ",.").replace(".", "").replace(",", ".")
    return float(digits) if digits else 0.0


def grade(damage: pd.Series) -> pd.Series:
    """'Affected (1-9%)' -> 'affected', 'No Damage' -> 'none'."""
    return damage.str.split(" ").str[0].str.lower().replace({"no": "none"})
