"""Outputs of the Raster tools: written window by window into the session's staging folder, measured
from the written file (statistics, per-class areas with per-row pixel areas) and registered as COGs
whose summaries quote those numbers, never a model's; plus the limitations and time span each output
inherits from its inputs."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ...engines import raster as rx
from ...engines.raster import compute, ops
from ...errors import ToolFailed
from ...store.models import ArtifactRecord
from ..base import ToolContext
from .scene import times_of


def limitations_of(*records: ArtifactRecord, datasets: Sequence[Any] = ()) -> list[str]:
    """The inputs' limitations, and scenes whose clouds could not be masked, once each."""
    out = [x for r in records for x in r.extra.get("limitations", [])]
    for ds in datasets:
        if ds.attrs.get("unmasked_items"):
            out.append(f"{ds.attrs['unmasked_items']} scene(s) without an SCL band: clouds not masked there")
    return list(dict.fromkeys(out))


def time_tags(*datasets: Any, records: Sequence[ArtifactRecord] = ()) -> dict[str, str]:
    """The time span an output covers (GeoTIFF tags), from the loaded datasets and dated raster inputs."""
    starts = [d.attrs.get("start_datetime") or d.attrs.get("datetime") for d in datasets]
    ends = [d.attrs.get("end_datetime") or d.attrs.get("datetime") for d in datasets]
    for r in records:
        s, e = times_of(r)
        starts.append(s.isoformat() if s else None)
        ends.append(e.isoformat() if e else None)
    starts, ends = [s for s in starts if s], [e for e in ends if e]
    return {"start_datetime": min(starts), "end_datetime": max(ends)} if starts and ends else {}


@contextmanager
def workdir(ctx: ToolContext) -> Iterator[Path]:
    """Scratch space inside the session (its staging folder is wiped by store recovery after a crash)."""
    base = getattr(ctx.store, "staging_dir", None)
    if base is not None:
        Path(base).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="raster-", dir=base) as tmp:
        yield Path(tmp)


def file_stats(path: Path) -> dict[str, float]:
    """Mean / min / max / valid fraction of band 1 of a written file, read window by window."""
    import dask.array as da

    arr = next(iter(rx.load_raster(path).data_vars.values())).data
    mean, lo, hi, n = compute.compute(da.nanmean(arr), da.nanmin(arr), da.nanmax(arr), (~da.isnan(arr)).sum())
    total = arr.size
    return {
        "mean": float(mean),
        "min": float(lo),
        "max": float(hi),
        "valid_fraction": float(n) / total if total else 0.0,
    }


def register_float(
    ctx: ToolContext,
    layer: Any,
    grid: rx.Grid,
    *,
    name: str,
    source: str,
    summary: str,
    inputs: list[str],
    extra: dict,
    tags: dict[str, str],
) -> ArtifactRecord:
    with workdir(ctx) as tmp:
        path = rx.write_raster(
            [layer],
            grid,
            tmp / f"{name}.tif",
            dtype="float32",
            nodata=float("nan"),
            band_names=[name],
            tags=tags,
            cancel=ctx.cancel,
        )
        stats = ops.quiet(file_stats, path)
        if stats["valid_fraction"] == 0:
            raise ToolFailed(
                f"{name}: no valid pixel (clouds, no data, or the AOI outside the imagery)",
                kind="empty",
                hint="widen the time window or relax the cloud limit",
            )
        text = summary.format(**stats, valid_pct=stats["valid_fraction"] * 100)
        return ctx.store.register_raster_file(
            path, source=source, summary=text, inputs=inputs, extra={**extra, "stats": stats, "grid_crs": grid.crs}
        )


def register_classes(
    ctx: ToolContext,
    layer: Any,
    grid: rx.Grid,
    labels: Mapping[int, str],
    *,
    name: str,
    source: str,
    headline: str,
    inputs: list[str],
    extra: dict,
    tags: dict[str, str],
    highlight: Sequence[int],
) -> ArtifactRecord:
    """Write a uint8 class raster, measure each class (km², per-row pixel areas) from the written
    file and register it; ``highlight`` classes are summed into the headline."""
    import dask.array as da

    with workdir(ctx) as tmp:
        path = rx.write_raster(
            [layer],
            grid,
            tmp / f"{name}.tif",
            dtype="uint8",
            nodata=ops.NODATA_CLASS,
            band_names=[name],
            tags=tags,
            cancel=ctx.cancel,
        )
        written = next(iter(rx.load_raster(path).data_vars.values())).data  # nodata (255) reads as NaN
        table = ops.class_areas(
            da.where(da.isnan(written), ops.NODATA_CLASS, written).astype("uint8"), grid, labels=labels
        )
        if int(table["pixels"].sum()) == 0:
            raise ToolFailed(f"{name}: no valid pixel", kind="empty", hint="check clouds, the AOI and the time windows")
        km2 = {int(r["class"]): r["area_m2"] / 1e6 for _, r in table.iterrows()}
        hit = sum(km2.get(c, 0.0) for c in highlight)
        parts = ", ".join(f"{labels.get(c, c)} {km2[c]:.2f}" for c in sorted(km2))
        summary = f"{headline}: {hit:.2f} km² ({parts} km²; pixel {rx.pixel_area_m2(grid):.0f} m²)"
        rows = table.to_dict(orient="records")
        return ctx.store.register_raster_file(
            path,
            source=source,
            summary=summary,
            inputs=inputs,
            extra={
                **extra,
                "classes": {str(k): v for k, v in labels.items()},
                "class_areas": rows,
                "highlight_km2": hit,
                "grid_crs": grid.crs,
            },
        )
