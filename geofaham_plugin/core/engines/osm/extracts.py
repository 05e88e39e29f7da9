"""Local OpenStreetMap extracts the Maps agent reads before asking Overpass: the HOT-export GeoJSON sets
described in the layer catalogue (``core/data/layers.json``, ``osm_extracts``) and every .osm.pbf file
found under the catalogue's ``pbf_globs`` in the data folder (read with GDAL's OSM driver)."""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from ..layers import LayerCatalogue, default_catalogue
from .geometry import frame
from .query import HOT_TYPES, FeatureQuery, match, tag_getter

FULL_COVER = 0.999  # an extract covering this fraction of the AOI answers before Overpass
_HSTORE = re.compile(r'"((?:[^"\\]|\\.)*)"=>"((?:[^"\\]|\\.)*)"')


def parse_other_tags(text: str | None) -> dict[str, str]:
    """GDAL's OSM driver packs the tags without a column of their own into an hstore string."""
    if not text:
        return {}
    unescape = lambda s: s.replace('\\"', '"').replace("\\\\", "\\")  # noqa: E731
    return {unescape(k): unescape(v) for k, v in _HSTORE.findall(text)}


@dataclass
class Extract:
    """A local OSM extract: a HOT-export GeoJSON set or an .osm.pbf file."""

    id: str
    title: str
    format: str  # hot_geojson | pbf
    paths: dict[str, Path]
    bbox_4326: tuple[float, float, float, float]
    limitations: list[str] = field(default_factory=list)

    def read(self, query: FeatureQuery, bbox: tuple[float, float, float, float]) -> tuple[gpd.GeoDataFrame, set[str]]:
        """Features matching the query whose geometry meets ``bbox``; also the tag keys the extract lacks
        (a HOT export has only the tags it was exported with; a PBF has them all)."""
        parts, missing = [], None
        layers = self._hot_layers() if self.format == "hot_geojson" else self._pbf_layers()
        for layer, tags, osm_types, complete in layers:
            keep = (
                osm_types.isin(query.elements)
                & pd.Series(shapely.intersects(layer.geometry.values, shapely.box(*bbox)), index=layer.index)
            ).to_numpy()
            layer, tags, osm_types = layer[keep], tags[keep], osm_types[keep]

            get = tag_getter(tags, complete)
            mask, lacking = match(get, len(tags), query)
            missing = lacking if missing is None else missing & lacking  # lacking in every layer
            columns = {"osm_id": layer["osm_id"], "osm_type": osm_types, "name": get("name")}
            columns |= {k: get(k) for k in query.columns if k != "name"}
            parts.append(
                gpd.GeoDataFrame(
                    {k: (v[mask].to_numpy() if v is not None else None) for k, v in columns.items()},
                    geometry=layer.geometry[mask].to_numpy(),
                    crs=4326,
                )
            )
        rows = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        return frame(rows, list(rows.geometry) if len(rows) else [], query), missing or set()

    def _hot_layers(self):
        for path in self.paths.values():
            layer = _read_cached(str(path), None)
            tags = layer.drop(columns=["osm_id", "osm_type", layer.geometry.name])
            yield layer, tags, layer["osm_type"].map(HOT_TYPES), False

    def _pbf_layers(self):
        path = str(self.paths["pbf"])
        for name, osm_type in (
            ("points", "node"),
            ("lines", "way"),
            ("multilinestrings", "relation"),
            ("multipolygons", None),
        ):
            layer = _read_cached(path, name)
            if osm_type is None:  # GDAL: osm_id for relations, osm_way_id for closed ways
                types = pd.Series(np.where(layer["osm_id"].notna(), "relation", "way"), index=layer.index)
                layer = layer.assign(osm_id=layer["osm_id"].fillna(layer["osm_way_id"]))
            else:
                types = pd.Series(osm_type, index=layer.index)
            yield layer, _pbf_tags(path, name), types, True


@lru_cache(maxsize=16)
def _read_cached(path: str, layer: str | None) -> gpd.GeoDataFrame:
    """Read once per process: extracts are static files and several tools read the same ones."""
    import pyogrio

    with warnings.catch_warnings():  # GDAL's OSM driver warns about each unclosed ring it skips
        warnings.simplefilter("ignore", RuntimeWarning)
        gdf = pyogrio.read_dataframe(path, layer=layer, on_invalid="ignore") if layer else gpd.read_file(path)
    if gdf.crs is None:
        gdf = gdf.set_crs(4326)
    gdf = gdf.to_crs(4326)
    return gdf[gdf.geometry.notna()].reset_index(drop=True)


@lru_cache(maxsize=8)
def _pbf_tags(path: str, layer: str) -> pd.DataFrame:
    """All tags of a PBF layer as columns: GDAL's own tag columns plus the parsed ``other_tags``."""
    gdf = _read_cached(path, layer)
    own = [c for c in gdf.columns if c not in ("osm_id", "osm_way_id", "other_tags", "z_order", "geometry")]
    other = pd.DataFrame.from_records([parse_other_tags(t) for t in gdf["other_tags"]], index=gdf.index)
    other = other.drop(columns=[c for c in other.columns if c in own])
    return pd.concat([gdf[own], other], axis=1)


def local_extracts(catalogue: LayerCatalogue | None = None) -> list[Extract]:
    """The catalogue's extracts whose files exist in its data folder, plus every .osm.pbf found there."""
    catalogue = catalogue or default_catalogue()
    extracts = []
    for spec in catalogue.spec.osm_extracts:
        paths = {layer.id: catalogue.root / (layer.path or "") for layer in catalogue.extract_layers(spec)}
        if all(p.is_file() for p in paths.values()):
            extracts.append(Extract(spec.id, spec.title, spec.format, paths, spec.bbox_4326, list(spec.limitations)))
    for path in catalogue.pbf_files():
        bbox = _pbf_bbox(str(path))
        if bbox is not None:
            extracts.append(
                Extract(
                    f"pbf:{path.name}",
                    f"OpenStreetMap extract {path.name}",
                    "pbf",
                    {"pbf": path},
                    bbox,
                    [f"{path.name}: extract date not recorded"],
                )
            )
    return extracts


@lru_cache(maxsize=32)
def _pbf_bbox(path: str) -> tuple[float, float, float, float] | None:
    """The extract's extent from the PBF header (no full read)."""
    import pyogrio

    try:
        bounds = pyogrio.read_info(path, layer="points", force_total_bounds=False)["total_bounds"]
    except Exception:  # noqa: BLE001 - a broken file is not an extract
        return None
    if bounds is None or not np.all(np.isfinite(bounds)):
        return None
    minx, miny, maxx, maxy = (float(b) for b in bounds)
    return minx, miny, maxx, maxy
