"""What generated code sees as ``gr`` inside the sandbox: the raster library plus readers and savers
bound to the run's output folder. Everything saved here is registered by the parent process after a
successful run (with metadata computed from the files); nothing is registered when the code fails."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from .bands import canonical_band  # noqa: F401
from .grid import Grid, pixel_area_m2, row_pixel_areas  # noqa: F401
from .io import load_raster, raster_info, write_cog  # noqa: F401
from .ops import (  # noqa: F401
    DNBR_BREAKS,
    DNBR_LABELS,
    INDICES,
    burn_severity,
    change_mask,
    class_areas,
    classify,
    difference,
    dnbr,
    flood_classes,
    normalized_difference,
    polygonize,
    spectral_index,
    threshold,
    zonal_stats,
    zonal_stats_by_class,
)

_state: dict[str, Any] = {"out": None, "saved": []}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,80}$")


def configure(out_dir: str) -> None:
    _state["out"] = Path(out_dir)
    _state["saved"] = []


def saved() -> list[str]:
    return list(_state["saved"])


def _target(name: str, ext: str) -> Path:
    if _state["out"] is None:
        raise RuntimeError("the sandbox output folder is not configured")
    stem = name[: -len(ext)] if name.endswith(ext) else name
    if not _NAME.match(stem) or ".." in stem:
        raise ValueError(f"output name {name!r}: use letters, digits, '_', '-', '.' only")
    path = _state["out"] / f"{stem}{ext}"
    _state["saved"].append(path.name)
    return path


def read_raster(source: Any, bands: list[str] | None = None) -> tuple[dict[str, np.ndarray], Grid]:
    """``({band: float32 array}, grid)`` of a raster input (``inputs['a']`` or a path in the session)."""
    path = source["path"] if isinstance(source, dict) else str(source)
    ds = load_raster(path, bands=bands)
    return {name: np.asarray(ds[name].data) for name in ds.data_vars}, ds.attrs["grid"]


def save_raster(
    name: str,
    data: Any,
    grid: Grid,
    *,
    nodata: float | None = None,
    band_names: list[str] | None = None,
    dtype: str | None = None,
) -> str:
    """Save one 2-D array (or a list of them) on ``grid`` as a COG output; returns its file name."""
    layers = list(data) if isinstance(data, (list, tuple)) else [data]
    layers = [np.asarray(a) for a in layers]
    dtype = dtype or str(layers[0].dtype)
    if nodata is None and np.issubdtype(np.dtype(dtype), np.floating):
        nodata = float("nan")
    path = _target(name, ".tif")
    write_cog(layers, grid, path, dtype=dtype, nodata=nodata, band_names=band_names or [Path(path).stem])
    return path.name


def save_vector(name: str, gdf: Any) -> str:
    """Save a GeoDataFrame (it must have a CRS) as a GeoPackage output."""
    if gdf.crs is None:
        raise ValueError("the GeoDataFrame has no CRS")
    path = _target(name, ".gpkg")
    gdf.to_file(path, driver="GPKG", layer=path.stem, engine="pyogrio")
    return path.name


def save_table(name: str, df: Any) -> str:
    """Save a DataFrame as a CSV output."""
    path = _target(name, ".csv")
    df.to_csv(path, index=False)
    return path.name


def save_text(name: str, text: str) -> str:
    """Save a Markdown report; its first line is what an answer quotes."""
    path = _target(name, ".md")
    path.write_text(str(text), encoding="utf-8")
    return path.name
