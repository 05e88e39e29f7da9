"""The project's own vector and raster layers a question may read. Main thread only.

The dock lists the project's vector layers and file-backed raster layers (GeoFaham's artifact layers aside); the
visible ones are ticked by default. When a question is asked, each ticked vector layer is written, here on the main
thread, as a GeoPackage into the session folder (``user_layers/``); a raster is never copied on the main thread:
its file is handed over and read in place (a 10980² tile costs the main thread nothing). The run's thread gets
only (name, file) pairs and adds them to its layer catalogue as the user's own layers (``user:<name>``). No QGIS
object crosses a thread."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qgis.core import QgsProject, QgsRasterLayer, QgsVectorFileWriter, QgsVectorLayer

from ..core.domain.layer_names import user_layer_slug

if TYPE_CHECKING:
    from qgis.core import QgsMapLayer

USER_LAYERS_DIR = "user_layers"


@dataclass(frozen=True)
class ProjectLayerChoice:
    """One row of the dock's list: a project layer, by id and name, and whether it is ticked."""

    layer_id: str
    name: str
    checked: bool


@dataclass(frozen=True)
class UserLayerFile:
    """A project layer written for a run: plain data, safe to hand to the run's thread."""

    name: str
    path: Path


def raster_file(layer: QgsMapLayer) -> Path | None:
    """The file of a GDAL raster layer read in place (GeoTIFF, ERDAS, ASCII grid), or None (a web or virtual
    raster, a subdataset)."""
    if not isinstance(layer, QgsRasterLayer) or layer.providerType() != "gdal":
        return None
    from ..core.engines.layers import RASTER_SUFFIXES  # (heavy: not at the plugin's load)

    path = Path(layer.source().split("|")[0])
    return path if path.suffix.lower() in RASTER_SUFFIXES and path.is_file() else None


def is_readable(layer: QgsMapLayer) -> bool:
    """A valid vector layer with geometry, or a valid file-backed raster, that is no GeoFaham artifact."""
    if not layer.isValid() or layer.customProperty("geofaham/artifact_id"):
        return False
    if isinstance(layer, QgsVectorLayer):
        return layer.isSpatial()
    return raster_file(layer) is not None


def project_layer_choices(project: QgsProject, choices: dict[str, bool] | None = None) -> list[ProjectLayerChoice]:
    """The project's readable vector and raster layers in layer-tree order; ticked as the user left them (``choices``:
    layer id -> ticked), else when visible."""
    choices = choices or {}
    root = project.layerTreeRoot()
    out = []
    for node in root.findLayers():
        layer = node.layer()
        if layer is None or not is_readable(layer):
            continue
        checked = choices.get(layer.id(), node.isVisible())
        out.append(ProjectLayerChoice(layer.id(), layer.name(), checked))
    return out


def write_user_layers(project: QgsProject, layer_ids: list[str], folder: Path) -> tuple[list[UserLayerFile], list[str]]:
    """Write each chosen vector layer as ``folder/<nn>_<slug>.gpkg`` (all its features, its CRS) and hand each
    chosen raster's own file over; returns the files and one message per layer that could not be written."""
    folder.mkdir(parents=True, exist_ok=True)
    files, problems = [], []
    for i, layer_id in enumerate(layer_ids, start=1):
        layer = project.mapLayer(layer_id)
        if layer is None or not is_readable(layer):
            continue
        if (raster := raster_file(layer)) is not None:  # read in place by the run's thread, never copied here
            files.append(UserLayerFile(name=layer.name(), path=raster))
            continue
        if not isinstance(layer, QgsVectorLayer) or layer.featureCount() == 0:
            continue
        slug = user_layer_slug(layer.name())
        path = folder / f"{i:02d}_{slug}.gpkg"
        options = QgsVectorFileWriter.SaveVectorOptions()
        options.driverName = "GPKG"
        options.layerName = slug
        options.fileEncoding = "UTF-8"
        options.actionOnExistingFile = QgsVectorFileWriter.CreateOrOverwriteFile
        error, message, *_ = QgsVectorFileWriter.writeAsVectorFormatV3(
            layer, str(path), project.transformContext(), options
        )
        if error != QgsVectorFileWriter.NoError:
            problems.append(f"{layer.name()}: {message or 'could not be written'}")
            continue
        files.append(UserLayerFile(name=layer.name(), path=path))
    return files, problems
