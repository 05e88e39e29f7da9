"""The project's own vector and raster layers a question may read. Main thread only.

The dock lists the project's vector layers and file-backed raster layers (GeoFaham's own layers aside: its results
and its map context); the visible ones are ticked by default. When a question is asked, each ticked layer is handed
to the run as a file: a vector layer read from a file as it is (OGR, no filter, no unsaved edits, the file's own CRS)
by that file, in place; any other (memory, database, filtered, edited) written here, on the main thread, as a
GeoPackage into the session folder (``user_layers/``), again only when it changed since it was last written. A
raster is never copied on the main thread: its file is handed over and read in place (a 10980² tile costs the main
thread nothing). The run's thread gets only (name, file, layer) and adds them to its layer catalogue as the user's
own layers (``user:<name>``). No QGIS object crosses a thread."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qgis.core import QgsProject, QgsProviderRegistry, QgsRasterLayer, QgsVectorFileWriter, QgsVectorLayer

from ..core.domain.layer_names import user_layer_slug
from .context import KIND_PROPERTY

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
    layer: str | None = None  # the layer of a multi-layer file read in place (a GeoPackage's)


def raster_file(layer: QgsMapLayer) -> Path | None:
    """The file of a GDAL raster layer read in place (GeoTIFF or COG, the formats user files may be), or None (a web
    or virtual raster, a subdataset)."""
    if not isinstance(layer, QgsRasterLayer) or layer.providerType() != "gdal":
        return None
    from ..core.engines.user_files import RASTER_SUFFIXES  # (heavy: not at the plugin's load)

    path = Path(layer.source().split("|")[0])
    return path if path.suffix.lower() in RASTER_SUFFIXES and path.is_file() else None


def is_readable(layer: QgsMapLayer) -> bool:
    """A valid vector layer with geometry, or a valid file-backed raster, that is not GeoFaham's own (a result, or
    the map context it adds)."""
    if not layer.isValid() or layer.customProperty("geofaham/artifact_id") or layer.customProperty(KIND_PROPERTY):
        return False
    if isinstance(layer, QgsVectorLayer):
        return layer.isSpatial()
    return raster_file(layer) is not None


def in_place(layer: QgsVectorLayer) -> UserLayerFile | None:
    """The file a layer can be read from as it is (OGR, no filter, no unsaved edits, the file's own CRS, every
    geometry type of its layer): the file and its layer; else None (it must be written out)."""
    if layer.providerType() != "ogr" or layer.subsetString() or layer.isModified():
        return None
    parts = QgsProviderRegistry.instance().decodeUri("ogr", layer.source())
    path = Path(str(parts.get("path") or ""))
    if not path.is_file() or parts.get("subset") or parts.get("geometryType") or parts.get("layerId") is not None:
        return None
    if layer.crs() != layer.dataProvider().crs():  # a CRS set in QGIS, not the file's
        return None
    return UserLayerFile(name=layer.name(), path=path, layer=str(parts.get("layerName") or "") or None)


def layer_state(layer: QgsVectorLayer, edits: int = 0) -> tuple[object, ...]:
    """What tells whether a written layer changed since: its source, filter, CRS, feature count, extent, unsaved
    edits and ``edits`` (the caller's count of its edits and commits)."""
    return (
        layer.source(),
        layer.subsetString(),
        layer.crs().toWkt(),
        layer.featureCount(),
        layer.extent().toString(),
        layer.isModified(),
        edits,
    )


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


def write_user_layers(
    project: QgsProject,
    layer_ids: list[str],
    folder: Path,
    written: dict[str, tuple[tuple[object, ...], UserLayerFile]] | None = None,
    edits: dict[str, int] | None = None,
) -> tuple[list[UserLayerFile], list[str]]:
    """The chosen layers as files for a run: a file-backed layer's own file (:func:`in_place`); any other written
    as ``folder/<slug>_<id hash>.gpkg`` (all its features, its CRS), unless ``written`` (layer id -> (its
    :func:`layer_state`, the file), kept by the caller across questions) says it has not changed since. Returns
    the files and one message per layer that could not be written."""
    written = {} if written is None else written
    edits = edits or {}
    files, problems = [], []
    for layer_id in layer_ids:
        layer = project.mapLayer(layer_id)
        if layer is None or not is_readable(layer):
            continue
        if (raster := raster_file(layer)) is not None:  # read in place by the run's thread, never copied here
            files.append(UserLayerFile(name=layer.name(), path=raster))
            continue
        if not isinstance(layer, QgsVectorLayer) or layer.featureCount() == 0:
            continue
        source = in_place(layer)
        if source is not None:
            files.append(source)
            continue
        state = layer_state(layer, edits.get(layer_id, 0))
        if layer_id in written and written[layer_id][0] == state and written[layer_id][1].path.exists():
            files.append(UserLayerFile(name=layer.name(), path=written[layer_id][1].path))
            continue
        slug = user_layer_slug(layer.name())
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{slug}_{hashlib.sha1(layer_id.encode(), usedforsecurity=False).hexdigest()[:8]}.gpkg"
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
        written[layer_id] = (state, files[-1])
    return files, problems
