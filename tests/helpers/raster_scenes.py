"""Synthetic Sentinel-2-like scenes written as real GeoTIFFs, shared by the raster tests: a pre/post
pair with known burn-severity and flood classes per pixel, in any CRS and transform."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import rasterio
from affine import Affine
from conftest import SHARED_DATA

from geofaham_plugin.core.agents import TOOLS
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator, OrchestratorConfig

HURST = SHARED_DATA / "raster" / "hurst-2025"
UTM = "EPSG:32611"
UTM_T = Affine(20, 0, 380_000, 0, -20, 3_800_000)
GEO_T = Affine(0.0002, 0, -118.5, 0, -0.0002, 34.35)
H, W = 60, 80

# reflectance x 10 000: vegetation, burned (by target NBR), water
VEG = {"blue": 400.0, "green": 800.0, "red": 500.0, "nir": 3000.0, "swir16": 1800.0, "swir22": 1000.0}  # NBR 0.5
WATER = {"blue": 900.0, "green": 1200.0, "red": 700.0, "nir": 400.0, "swir16": 200.0, "swir22": 150.0}
POST_NBR = {0: 0.45, 1: 0.30, 2: 0.15, 3: -0.05, 4: -0.30}  # dNBR 0.05, 0.2, 0.35, 0.55, 0.8 -> USGS class 0..4
BAND_ORDER = ["blue", "green", "red", "nir", "swir16", "swir22"]
DESCRIPTIONS = ["B02", "B03", "B04", "B08", "B11", "B12"]  # Planetary-Computer-style names, normalised on read


def scenes() -> tuple[dict, dict, np.ndarray, np.ndarray]:
    """Pre/post band arrays, the true severity class per pixel (255 = no data) and the true flood
    class (0 dry, 1 flooded, 2 permanent water)."""
    pre = {b: np.full((H, W), v, dtype="float32") for b, v in VEG.items()}
    post = {b: a.copy() for b, a in pre.items()}
    severity = np.zeros((H, W), dtype="uint8")
    for cls, (c0, c1) in enumerate([(10, 20), (20, 32), (32, 43), (43, 51), (51, 57)]):
        severity[8:30, c0:c1] = cls
    severity[40, 5] = 4  # isolated pixels count too
    severity[45, 70] = 2
    for cls, nbr in POST_NBR.items():
        sel = severity == cls
        if cls:
            post["nir"][sel], post["swir22"][sel] = 2000.0, 2000.0 * (1 - nbr) / (1 + nbr)
    flood = np.zeros((H, W), dtype="uint8")
    flood[40:52, 20:45] = 1
    flood[50:58, 60:75] = 2
    for b in BAND_ORDER:
        post[b][flood > 0] = WATER[b]
        pre[b][flood == 2] = WATER[b]
    post["nir"][2, 3] = np.nan  # a no-data pixel
    severity[2, 3] = 255
    flood[2, 3] = 255
    return pre, post, severity, flood


def write_scene(
    path: Path, bands: dict, crs: str, transform: Affine, descriptions=DESCRIPTIONS, time: str | None = None
) -> Path:
    profile = {
        "driver": "GTiff",
        "width": W,
        "height": H,
        "count": len(BAND_ORDER),
        "dtype": "float32",
        "crs": crs,
        "transform": transform,
        "nodata": float("nan"),
    }
    with rasterio.open(path, "w", **profile) as dst:
        for i, (name, desc) in enumerate(zip(BAND_ORDER, descriptions, strict=False), start=1):
            dst.write(bands[name], i)
            dst.set_band_description(i, desc)
        if time:
            dst.update_tags(datetime=time)
    return path


def register_pair(ctx, tmp_path, crs, transform):
    pre, post, severity, flood = scenes()
    a = write_scene(tmp_path / "pre.tif", pre, crs, transform, time="2024-12-20T18:00:00Z")
    b = write_scene(tmp_path / "post.tif", post, crs, transform, time="2025-01-20T18:00:00Z")
    pre_r = ctx.store.register_raster_file(a, source="test", summary="pre")
    post_r = ctx.store.register_raster_file(b, source="test", summary="post")
    return pre_r, post_r, severity, flood


def run(ctx, name: str, args: dict | None = None, **inputs):
    return TOOLS[name].run(ctx, args or {}, inputs)


def register_hurst(store):
    """The real Sentinel-2 Hurst Fire pair and its FRAP fire mask, registered as the user's rasters."""
    reg = store.register_raster_file
    return (
        reg(HURST / "HURST_20250107_s2_pre_fire.tif", source="user.raster", summary="Hurst pre-fire S2"),
        reg(HURST / "HURST_20250107_s2_post_fire.tif", source="user.raster", summary="Hurst post-fire S2"),
        reg(HURST / "HURST_20250107_fire_mask.tif", source="user.raster", summary="Hurst FRAP fire mask"),
    )


def ask_hurst(store, pre, post, mask):
    """The orchestrated question "mean dNBR inside the Hurst fire perimeter", with a scripted model
    (plan: dNBR, polygonise the mask, zonal statistics); returns the run record and the model."""
    plan = {
        "ledger": {"intent": "mean dNBR inside the Hurst fire perimeter", "requested_output": "answer"},
        "plan": {
            "steps": [
                {
                    "id": 1,
                    "agent": "raster",
                    "goal": "Compute dNBR from the pre- and post-fire scenes",
                    "inputs": {"pre": pre.id, "post": post.id},
                    "expected_output": "raster",
                },
                {
                    "id": 2,
                    "agent": "raster",
                    "tool": "polygonize",
                    "goal": "Trace the fire mask classes",
                    "args": {"classes": [0, 1]},
                    "inputs": {"raster": mask.id},
                    "expected_output": "vector",
                },
                {
                    "id": 3,
                    "agent": "raster",
                    "tool": "zonal_stats",
                    "goal": "Mean dNBR inside and outside the mask",
                    "args": {"by": "label"},
                    "inputs": {"raster": "step:1", "zones": "step:2"},
                    "expected_output": "text",
                },
            ]
        },
    }
    model = ScriptedModel({"planner": [plan], "raster": [{"tool": "dnbr", "args": {}}]})
    orch = Orchestrator(store, LLM(model), config=OrchestratorConfig(mode="free"))
    return orch.run("What is the mean dNBR inside the Hurst fire perimeter?"), model
