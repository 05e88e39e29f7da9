"""Population exposure from any population raster (issue 27): people inside the Valencia flood extent, within a
distance of it, per polygon of an admin layer the test writes, inside the flood cut to the AOI03 area (asked in
Spanish: the flood was dropped before), from a generated uneven grid in EPSG:4326 and one in a projected CRS.
Expected values are computed here with rasterio.mask (pixel centres inside, no product code); answers must be
within 0.5 %."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from rasterio.mask import mask
from rasterio.transform import from_origin
from shapely.geometry import box

from geofaham_plugin.core.engines.layers import LayerCatalogue, data_dir
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator

FLOOD = "valencia-2024/emsr773_observed_flood_merged.geojson"
AOI03 = "valencia-2024/emsr773_aoi03_extent.geojson"
NODATA = -1.0


def _grid(shape: tuple[int, int], seed: int) -> np.ndarray:
    """Uneven people per pixel: a gamma field times an east-west gradient, with a few dense blocks and a nodata
    corner."""
    rng = np.random.default_rng(seed)
    h, w = shape
    pop = rng.gamma(1.5, 12.0, size=shape) * np.linspace(0.2, 3.0, w)[None, :]
    pop[h // 3 : h // 3 + 20, w // 2 : w // 2 + 25] *= 40  # a dense town
    pop[:8, :8] = NODATA
    return pop.astype("float32")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pop")
    geographic = tmp / "worldpop_2020.tif"  # ~100 m in EPSG:4326 over l'Horta Sud
    profile = {"driver": "GTiff", "count": 1, "dtype": "float32", "nodata": NODATA}
    with rasterio.open(
        geographic,
        "w",
        crs="EPSG:4326",
        transform=from_origin(-0.62, 39.53, 0.001, 0.001),
        width=420,
        height=450,
        **profile,
    ) as d:
        d.write(_grid((450, 420), 5), 1)
    projected = tmp / "ghs_pop_2025.tif"  # 90 m in UTM 30N (EPSG:25830)
    with rasterio.open(
        projected,
        "w",
        crs="EPSG:25830",
        transform=from_origin(708000, 4378000, 90, 90),
        width=380,
        height=520,
        **profile,
    ) as d:
        d.write(_grid((520, 380), 9), 1)
    districts = gpd.GeoDataFrame(
        {"district": ["Paiporta", "Catarroja", "Alfafar"]},
        geometry=[box(-0.44, 39.41, -0.40, 39.44), box(-0.42, 39.38, -0.38, 39.41), box(-0.39, 39.41, -0.35, 39.44)],
        crs=4326,
    )
    districts.to_file(tmp / "districts.gpkg")
    return geographic, projected, tmp / "districts.gpkg", districts


def _people(raster, geometries, crs="EPSG:4326") -> float:
    """People whose pixel centre lies inside ``geometries`` (given in ``crs``)."""
    with rasterio.open(raster) as src:
        shapes = gpd.GeoSeries(list(geometries), crs=crs).to_crs(src.crs)
        out, _ = mask(src, list(shapes), all_touched=False, filled=True, nodata=NODATA)
    values = out[0]
    return float(values[values != NODATA].sum())


def _orchestrator(store, catalogue):
    script = {"progress": [{"action": "finish", "reason": "nothing else applies"}] * 4}
    return Orchestrator(store, LLM(ScriptedModel(script)), layers=catalogue)


def _close(value: float, expected: float) -> bool:
    return abs(value - expected) <= 0.005 * expected


@pytest.fixture(scope="module")
def flood():
    return gpd.read_file(data_dir() / FLOOD).to_crs(4326).union_all()


def test_e2e_people_inside_and_near_the_flood_in_two_languages_and_a_projected_grid(store, files, flood):
    geographic, projected, _, _ = files
    catalogue = LayerCatalogue(data_dir())
    catalogue.add_user_layer("worldpop 2020", geographic)
    orch = _orchestrator(store, catalogue)
    expected = _people(geographic, [flood])
    assert expected > 1000
    record = orch.run("How many people live inside the Valencia DANA flood extent?")
    assert record.status == "answered", record.answer
    (total,) = record.structured.totals()
    assert total.measure == "sum" and _close(total.value, expected), (total.value, expected)
    assert "worldpop 2020" in record.answer  # the answer names the raster it counted
    spanish = orch.run("¿Cuántas personas viven dentro de la zona inundada de Valencia?")
    assert spanish.status == "answered", spanish.answer
    assert _close(spanish.structured.totals()[0].value, expected)

    near = orch.run("How many people live within 1 km of the Valencia flood extent?")
    assert near.status == "answered", near.answer
    assert [s.tool for s in near.steps][-2:] == ["buffer", "raster_stats"]
    ring = gpd.GeoSeries([flood], crs=4326).to_crs(25830).buffer(1000).to_crs(4326).iloc[0]
    assert _close(near.structured.totals()[0].value, _people(geographic, [ring]))

    utm = LayerCatalogue(data_dir())
    utm.add_user_layer("ghs pop 2025", projected)
    record = _orchestrator(store, utm).run("How many people live inside the Valencia DANA flood extent?")
    assert record.status == "answered", record.answer
    expected = _people(projected, [flood])
    assert expected > 1000 and _close(record.structured.totals()[0].value, expected)


def test_e2e_people_in_the_flood_per_district_of_your_admin_layer(store, files, flood):
    geographic, _, districts_file, districts = files
    catalogue = LayerCatalogue(data_dir())
    catalogue.add_user_layer("worldpop 2020", geographic)
    catalogue.add_user_layer("districts", districts_file)
    orch = _orchestrator(store, catalogue)
    for question in (
        "How many people live inside the Valencia flood in each of my districts?",
        "¿Cuántas personas viven dentro de la inundación de Valencia en cada uno de mis districts?",
    ):
        record = orch.run(question)
        assert record.status == "answered", record.answer
        groups = {v.group: v.value for v in record.structured.values if v.group}
        expected = {
            name: _people(geographic, [geom.intersection(flood)])
            for name, geom in zip(districts["district"], districts.geometry, strict=True)
        }
        assert groups.keys() == expected.keys(), (question, groups)
        assert all(_close(groups[d], expected[d]) for d in expected), (groups, expected)


def test_e2e_people_in_the_flooded_zone_inside_aoi03_asked_in_spanish_keeps_the_flood(store, files, flood):
    geographic, _, _, _ = files
    catalogue = LayerCatalogue(data_dir())
    catalogue.add_user_layer("worldpop 2020", geographic)
    aoi03 = gpd.read_file(data_dir() / AOI03).to_crs(4326).union_all()
    both = _people(geographic, [flood.intersection(aoi03)])
    whole = _people(geographic, [aoi03])
    assert both < 0.9 * whole  # the flood matters: the whole of AOI03 is not the answer
    record = _orchestrator(store, catalogue).run("¿Cuántas personas viven en la zona inundada dentro del área AOI03?")
    assert record.status == "answered", record.answer
    (total,) = [v for v in record.structured.values if not v.group]
    assert _close(total.value, both), (total.value, both, whole)
