"""Your own rasters of values (a population grid) as the subject of an analysis: "how many people live in
the flood extent" is the sum of the raster's pixels whose centres lie inside it, per zone when asked.
Expected values are computed here with rasterio.mask (centre-in, no product code)."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from rasterio.mask import mask
from rasterio.transform import from_origin
from shapely.geometry import box

from geofaham_plugin.core.engines.layers import LayerCatalogue, data_dir
from geofaham_plugin.core.errors import ToolFailed
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator

FLOOD = "valencia-2024/emsr773_observed_flood_merged.geojson"
NODATA = -9999.0


@pytest.fixture()
def files(tmp_path):
    """A 100 m population grid over Catarroja (UTM 30N, a nodata corner) and two evacuation zones."""
    rng = np.random.default_rng(11)
    pop = rng.integers(0, 60, size=(200, 150)).astype("float32")
    pop[:6, :6] = NODATA
    raster = tmp_path / "worldpop_2020.tif"
    profile = {"driver": "GTiff", "width": 150, "height": 200, "count": 1, "dtype": "float32", "nodata": NODATA}
    with rasterio.open(raster, "w", crs="EPSG:25830", transform=from_origin(715000, 4375000, 100, 100), **profile) as d:
        d.write(pop, 1)
    zones = gpd.GeoDataFrame(
        {"zone": ["North", "South"]},
        geometry=[box(718000, 4362000, 724000, 4368000), box(718000, 4356000, 724000, 4362000)],
        crs=25830,
    )
    zones.to_file(tmp_path / "zones.gpkg")
    return raster, tmp_path / "zones.gpkg", zones


def _sum_inside(raster, geometries) -> float:
    with rasterio.open(raster) as src:
        out, _ = mask(src, geometries, all_touched=False, filled=True, nodata=NODATA)
    values = out[0]
    return float(values[values != NODATA].sum())


def _orchestrator(store, catalogue):
    script = {"progress": [{"action": "finish", "reason": "nothing else applies"}] * 4}
    return Orchestrator(store, LLM(ScriptedModel(script)), layers=catalogue)


def test_e2e_people_in_the_flood_extent_and_per_zone_from_your_population_raster(store, files):
    raster, zones_file, zones = files
    flood = gpd.read_file(data_dir() / FLOOD).to_crs(25830)
    water = flood.union_all()
    inside = _sum_inside(raster, [water])
    per_zone = {
        z: _sum_inside(raster, [g.intersection(water)]) for z, g in zip(zones["zone"], zones.geometry, strict=True)
    }
    assert inside > 0 and min(per_zone.values()) > 0
    catalogue = LayerCatalogue(data_dir())
    catalogue.add_user_layer("worldpop 2020", raster)
    catalogue.add_user_layer("evacuation zones", zones_file)
    orch = _orchestrator(store, catalogue)

    record = orch.run("How many people live inside the Valencia DANA flood extent?")
    assert record.status == "answered", record.answer
    assert [s.tool for s in record.steps] == ["load_raster_layer", "load_event_layer", "raster_stats"]
    (total,) = record.structured.totals()
    assert total.measure == "sum" and abs(total.value - inside) <= 0.5, (total.value, inside)
    assert "people counted from your raster 'worldpop 2020'" in record.answer

    spanish = orch.run("¿Cuántas personas viven dentro de la zona inundada de Valencia?")
    assert spanish.status == "answered" and [v.value for v in spanish.structured.totals()] == [total.value]
    per = orch.run("How many people in each evacuation zone lived inside the Valencia flood?")
    assert per.status == "answered", per.answer
    assert per.steps[-2].tool == "clip"  # the zones' parts inside the flood, not the whole zones
    groups = {v.group: v.value for v in per.structured.values if v.group}
    assert groups.keys() == per_zone.keys()
    assert all(abs(groups[z] - per_zone[z]) <= 0.5 for z in per_zone), (groups, per_zone)


def test_people_asked_of_layers_without_population_is_not_answered_with_a_count(store, files):
    _, zones_file, _ = files
    catalogue = LayerCatalogue(data_dir())
    catalogue.add_user_layer("evacuation zones", zones_file)
    # the replan asks the model for another reading; it offers none that sums people either
    script = {"planner": [{"template": "none fits"}] * 6, "progress": [{"action": "finish", "reason": "no data"}] * 4}
    orch = Orchestrator(store, LLM(ScriptedModel(script)), layers=catalogue)
    record = orch.run("How many people live in my evacuation zones?")
    assert record.status != "answered", record.answer  # 2 zones is not a number of people
    assert any(c.kind == "measure" and c.value == "people" and not c.applied for c in record.constraints)


def test_a_raster_layer_is_described_from_its_header_and_a_vrt_is_refused(files, tmp_path):
    raster, _, _ = files
    entry = LayerCatalogue(data_dir()).add_user_layer("pop", raster)
    assert (entry.role, entry.geometry, entry.bands, entry.crs) == ("values", "raster", 1, "EPSG:25830")
    vrt = tmp_path / "pointer.tif"
    vrt.write_text(  # a raster named .tif that is a VRT pointing at another file
        '<VRTDataset rasterXSize="1" rasterYSize="1"><SRS>EPSG:4326</SRS><GeoTransform>0,1,0,0,0,-1</GeoTransform>'
        f'<VRTRasterBand dataType="Float32" band="1"><SimpleSource><SourceFilename>{raster}</SourceFilename>'
        "<SourceBand>1</SourceBand></SimpleSource></VRTRasterBand></VRTDataset>"
    )
    with pytest.raises(ToolFailed, match="virtual raster"):
        LayerCatalogue(data_dir()).add_user_layer("pointer", vrt)


HURST = "raster/hurst-2025/HURST_20250107_"


def test_e2e_mean_and_share_above_a_threshold_of_your_raster_inside_a_mask_raster(store):
    with rasterio.open(data_dir() / f"{HURST}dnbr.tif") as d, rasterio.open(data_dir() / f"{HURST}fire_mask.tif") as m:
        dnbr, inside = d.read(1).astype("float64"), m.read(1) == 1
    values = dnbr[inside & ~np.isnan(dnbr)]
    catalogue = LayerCatalogue(data_dir())
    catalogue.add_user_layer("dnbr", data_dir() / f"{HURST}dnbr.tif")
    catalogue.add_user_layer("fire mask", data_dir() / f"{HURST}fire_mask.tif")
    orch = _orchestrator(store, catalogue)
    mean = orch.run("What is the mean dNBR inside the fire mask?")  # dNBR: not imagery when it is your raster
    assert mean.status == "answered", mean.answer
    assert [s.tool for s in mean.steps] == ["load_raster_layer", "load_raster_layer", "polygonize", "raster_stats"]
    (value,) = mean.structured.totals()
    assert value.measure == "mean" and abs(value.value - values.mean()) < 0.0005
    share = orch.run("What share of the fire mask has a dNBR of at least 0.27?")  # the values: the dNBR, not the mask
    assert share.status == "answered", share.answer
    (value,) = share.structured.totals()
    assert value.unit == "percent" and abs(value.value - 100 * (values >= 0.27).mean()) < 0.05
    assert share.steps[-1].args == {"stat": "share_above", "by": None, "above": 0.27}
