"""The local layer catalogue: real disaster layers GeoFaham can use offline, described as data
(``core/data/layers.json``). The Vector agent loads hazard and damage layers from here; the Maps agent
uses its point-of-interest layers when no network source is configured or reachable."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import geopandas as gpd
from pydantic import BaseModel, Field

from ..config import PathSettings
from ..errors import ToolFailed
from ..domain.damage import DamageClass

CATALOG_FILE = Path(__file__).resolve().parents[1] / "data" / "layers.json"


class Derivation(BaseModel):
    source: str = Field(alias="from")
    damage_classes: list[DamageClass] = Field(default_factory=list)
    op: str  # convex_hull


class CatalogLayer(BaseModel):
    id: str
    events: list[int]
    role: str  # hazard | damage | poi | aoi
    title: str
    path: str | None = None
    derive: Derivation | None = None
    hazard: str | None = None  # burn_area | flood_extent
    damage_field: str | None = None
    feature_class: str | None = None
    name_field: str | None = None
    attribution: str = ""
    limitations: list[str] = Field(default_factory=list)


def data_dir() -> Path:
    """``settings.paths.data_dir`` read now: GEOFAHAM_DATA_DIR, else ``../shared/data`` beside the
    repository, else /work/shared/data."""
    return PathSettings.from_env().data_dir


class LayerCatalog:
    def __init__(self, root: Path | None = None, catalog_file: Path = CATALOG_FILE):
        raw = json.loads(catalog_file.read_text(encoding="utf-8"))
        self.root = root or data_dir()
        self.layers = {entry["id"]: CatalogLayer.model_validate(entry) for entry in raw["layers"]}
        self.damage_values: dict[str, DamageClass | None] = {
            k: (DamageClass(v) if v else None) for k, v in raw["damage_values"].items()
        }

    def find(self, *, event_id: int | None = None, role: str | None = None,
             feature_class: str | None = None) -> list[CatalogLayer]:
        return [
            layer for layer in self.layers.values()
            if (event_id is None or event_id in layer.events)
            and (role is None or layer.role == role)
            and (feature_class is None or layer.feature_class == feature_class)
        ]

    def get(self, layer_id: str) -> CatalogLayer:
        try:
            return self.layers[layer_id]
        except KeyError:
            raise ToolFailed(f"no layer '{layer_id}' in the local catalogue", kind="not_found",
                             hint=f"known layers: {', '.join(sorted(self.layers))}") from None

    def load(self, layer_id: str) -> tuple[gpd.GeoDataFrame, int]:
        """The layer's features with invalid geometries repaired; returns (gdf, repaired count)."""
        layer = self.get(layer_id)
        if layer.derive is not None:
            return self._derive(layer)
        path = self.root / (layer.path or "")
        if not path.is_file():
            raise ToolFailed(f"layer file for '{layer_id}' is missing: {path}", kind="not_found",
                             hint="set GEOFAHAM_DATA_DIR to the folder holding the sample data")
        gdf = gpd.read_file(path)
        if gdf.crs is None:
            gdf = gdf.set_crs("EPSG:4326")  # GeoJSON without a crs member is WGS84 by definition
        return repair_geometries(gdf)

    def _derive(self, layer: CatalogLayer) -> tuple[gpd.GeoDataFrame, int]:
        spec = layer.derive
        source = self.get(spec.source)
        gdf, repaired = self.load(spec.source)
        if spec.damage_classes and source.damage_field:
            gdf = gdf[self.damage_class_series(gdf, source.damage_field).isin([c.value for c in spec.damage_classes])]
        if spec.op != "convex_hull":
            raise ValueError(f"unknown derivation {spec.op}")
        hull = gdf.geometry.union_all().convex_hull
        return gpd.GeoDataFrame({"name": [layer.title]}, geometry=[hull], crs=gdf.crs), repaired

    def damage_class_series(self, gdf: gpd.GeoDataFrame, field: str):
        """The normalised damage class (``none`` ... ``destroyed``) of each feature; unknown -> None."""
        mapping = {raw: (cls.value if cls else None) for raw, cls in self.damage_values.items()}
        return gdf[field].map(lambda raw: mapping.get(raw, _guess_damage(raw)))


def _guess_damage(raw) -> str | None:
    text = str(raw or "").lower()
    for cls in ("destroyed", "major", "minor", "affected"):
        if cls in text:
            return cls
    if "no damage" in text or text in {"none", "undamaged"}:
        return "none"
    return None


def repair_geometries(gdf: gpd.GeoDataFrame) -> tuple[gpd.GeoDataFrame, int]:
    """Repair invalid geometries with make_valid (never drop them); returns the repaired count."""
    invalid = ~gdf.geometry.is_valid & gdf.geometry.notna()
    count = int(invalid.sum())
    if count:
        gdf = gdf.copy()
        gdf.loc[invalid, gdf.geometry.name] = gdf.geometry[invalid].make_valid()
    return gdf, count


@lru_cache(maxsize=1)
def default_catalog() -> LayerCatalog:
    return LayerCatalog()
