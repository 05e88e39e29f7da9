"""The GeoFaham Processing provider: buffer in metres, within-distance join with geodesic distances,
k nearest, building-damage counts by normalised class, feature counts (in total or by a field), spectral index and burn severity, road reachability through
a hazard, and the field-data transforms QGIS has no equivalent of (reprojection to a named CRS across the
antimeridian, area-weighted grid, sliver removal, file manifest, truncated shapefile field names) — the agents' own
engine code."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from qgis.core import (
    QgsCoordinateReferenceSystem,
    QgsProcessing,
    QgsProcessingAlgorithm,
    QgsProcessingException,
    QgsProcessingParameterBoolean,
    QgsProcessingParameterFeatureSink,
    QgsProcessingParameterFeatureSource,
    QgsProcessingParameterField,
    QgsProcessingParameterNumber,
    QgsProcessingProvider,
    QgsWkbTypes,
)
from qgis.PyQt.QtGui import QIcon

from ...core.engines import formats
from ...core.engines import transforms as tf
from ...core.engines import vector_ops as ops
from ...core.engines.layers import default_catalogue
from ...core.errors import ToolFailed
from ..i18n import N_, PLUGIN_ROOT, tr
from .convert import fields_for, source_to_geodataframe, wkb_type_of, write_rows

if TYPE_CHECKING:
    import geopandas as gpd
    import pandas as pd
    from qgis.core import QgsProcessingContext, QgsProcessingFeedback

    from ...core.engines.network import Vehicle
    from ...core.store.models import ArtifactRecord

T = TypeVar("T")


class _Algorithm(QgsProcessingAlgorithm):
    NAME = ""
    TITLE = ""
    HELP = ""

    def name(self) -> str:
        return self.NAME

    def displayName(self) -> str:  # noqa: N802
        return tr(self.TITLE)

    def group(self) -> str:
        return tr("Disaster analysis")

    def groupId(self) -> str:  # noqa: N802
        return "disaster"

    def shortHelpString(self) -> str:  # noqa: N802
        return tr(self.HELP)

    def createInstance(self) -> _Algorithm:  # noqa: N802
        return type(self)()

    def _gdf(
        self,
        parameters: dict[str, Any],
        name: str,
        context: QgsProcessingContext,
        feedback: QgsProcessingFeedback,
    ) -> gpd.GeoDataFrame:
        source = self.parameterAsSource(parameters, name, context)
        if source is None:
            raise QgsProcessingException(tr("Invalid input layer: {name}").format(name=name))
        return source_to_geodataframe(source, feedback)

    def _emit(
        self,
        gdf: pd.DataFrame,
        parameters: dict[str, Any],
        context: QgsProcessingContext,
        geometry_column: str | None = "geometry",
        output: str = "OUTPUT",
        wkb: Any = None,
    ) -> dict[str, Any]:
        fields = fields_for(gdf, geometry_column)
        crs = getattr(gdf, "crs", None) if geometry_column else None  # a table may have a column named crs
        crs = QgsCoordinateReferenceSystem(crs.to_wkt()) if crs is not None else QgsCoordinateReferenceSystem()
        if wkb is None:
            wkb = wkb_type_of(gdf) if geometry_column else QgsWkbTypes.NoGeometry
        sink, dest = self.parameterAsSink(parameters, output, context, fields, wkb, crs)
        write_rows(sink, gdf, fields, geometry_column)
        return {output: dest}

    def _run(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except ToolFailed as exc:
            raise QgsProcessingException(f"{exc}" + (f" ({exc.hint})" if exc.hint else "")) from exc


class BufferMetres(_Algorithm):
    NAME, TITLE = "buffermetres", N_("Buffer in metres (any CRS)")
    HELP = N_(
        "Buffers features by a distance in metres, computed in a local metric projection whatever the layer's CRS (degrees included): merged into one area, or one buffer per feature with its attributes."
    )

    def initAlgorithm(self, config: dict[str, Any] | None = None) -> None:  # noqa: N802
        self.addParameter(QgsProcessingParameterFeatureSource("INPUT", tr("Input layer")))
        self.addParameter(
            QgsProcessingParameterNumber(
                "DISTANCE", tr("Distance (metres)"), QgsProcessingParameterNumber.Double, 1000.0, False, 0.0
            )
        )
        self.addParameter(
            QgsProcessingParameterBoolean("DISSOLVE", tr("Merge the buffers into one area"), defaultValue=True)
        )
        self.addParameter(QgsProcessingParameterFeatureSink("OUTPUT", tr("Buffered"), QgsProcessing.TypeVectorPolygon))

    def processAlgorithm(  # noqa: N802
        self, parameters: dict[str, Any], context: QgsProcessingContext, feedback: QgsProcessingFeedback
    ) -> dict[str, Any]:
        gdf = self._gdf(parameters, "INPUT", context, feedback)
        distance = self.parameterAsDouble(parameters, "DISTANCE", context)
        dissolve = self.parameterAsBool(parameters, "DISSOLVE", context)
        return self._emit(self._run(lambda: ops.buffer(gdf, distance, dissolve=dissolve)), parameters, context)


class WithinDistance(_Algorithm):
    NAME, TITLE = "withindistance", N_("Features within a distance (geodesic)")
    HELP = N_(
        "Keeps the features within a distance in metres of any reference geometry and adds their geodesic distance (distance_m), nearest first."
    )

    def initAlgorithm(self, config: dict[str, Any] | None = None) -> None:  # noqa: N802
        self.addParameter(QgsProcessingParameterFeatureSource("INPUT", tr("Features")))
        self.addParameter(QgsProcessingParameterFeatureSource("REFERENCE", tr("Reference (hazard) layer")))
        self.addParameter(
            QgsProcessingParameterNumber(
                "DISTANCE", tr("Distance (metres)"), QgsProcessingParameterNumber.Double, 1000.0, False, 0.0
            )
        )
        self.addParameter(QgsProcessingParameterFeatureSink("OUTPUT", tr("Within distance")))

    def processAlgorithm(  # noqa: N802
        self, parameters: dict[str, Any], context: QgsProcessingContext, feedback: QgsProcessingFeedback
    ) -> dict[str, Any]:
        features = self._gdf(parameters, "INPUT", context, feedback)
        reference = self._gdf(parameters, "REFERENCE", context, feedback)
        distance = self.parameterAsDouble(parameters, "DISTANCE", context)
        return self._emit(self._run(lambda: ops.within_distance(features, reference, distance)), parameters, context)


class NearestK(_Algorithm):
    NAME, TITLE = "nearestk", N_("k nearest features (geodesic)")
    HELP = N_("Ranks the k features nearest to the reference layer with their geodesic distance (distance_m).")

    def initAlgorithm(self, config: dict[str, Any] | None = None) -> None:  # noqa: N802
        self.addParameter(QgsProcessingParameterFeatureSource("INPUT", tr("Features")))
        self.addParameter(QgsProcessingParameterFeatureSource("REFERENCE", tr("Reference layer")))
        self.addParameter(QgsProcessingParameterNumber("K", tr("k"), QgsProcessingParameterNumber.Integer, 3, False, 1))
        self.addParameter(QgsProcessingParameterFeatureSink("OUTPUT", tr("Nearest")))

    def processAlgorithm(  # noqa: N802
        self, parameters: dict[str, Any], context: QgsProcessingContext, feedback: QgsProcessingFeedback
    ) -> dict[str, Any]:
        features = self._gdf(parameters, "INPUT", context, feedback)
        reference = self._gdf(parameters, "REFERENCE", context, feedback)
        k = self.parameterAsInt(parameters, "K", context)
        return self._emit(self._run(lambda: ops.nearest_k(features, reference, k)), parameters, context)


class DamageCounts(_Algorithm):
    NAME, TITLE = "damagecounts", N_("Building damage counts by class")
    HELP = N_(
        "Counts buildings per normalised damage class (none, affected, minor, major, destroyed) from a damage field such as CAL FIRE DINS 'DAMAGE', optionally only those inside an area."
    )

    def initAlgorithm(self, config: dict[str, Any] | None = None) -> None:  # noqa: N802
        self.addParameter(QgsProcessingParameterFeatureSource("INPUT", tr("Building damage layer")))
        self.addParameter(QgsProcessingParameterField("FIELD", tr("Damage field"), "DAMAGE", "INPUT"))
        self.addParameter(
            QgsProcessingParameterFeatureSource(
                "AREA", tr("Only inside this area"), [QgsProcessing.TypeVectorPolygon], optional=True
            )
        )
        self.addParameter(QgsProcessingParameterFeatureSink("OUTPUT", tr("Damage counts"), QgsProcessing.TypeVector))

    def processAlgorithm(  # noqa: N802
        self, parameters: dict[str, Any], context: QgsProcessingContext, feedback: QgsProcessingFeedback
    ) -> dict[str, Any]:
        gdf = self._gdf(parameters, "INPUT", context, feedback)
        field = self.parameterAsString(parameters, "FIELD", context)
        if parameters.get("AREA"):
            area = self._gdf(parameters, "AREA", context, feedback)
            gdf = self._run(lambda: ops.inside(gdf, area))
        gdf["damage_class"] = default_catalogue().damage_class_series(gdf, field).fillna("unknown")
        table = ops.count_by(gdf, "damage_class").rename(columns={"value": "damage_class"})
        return self._emit(table, parameters, context, geometry_column=None)


class CountFeatures(_Algorithm):
    NAME, TITLE = "countfeatures", N_("Count features (in total or by a field)")
    HELP = N_(
        "Counts the features of a layer, in total (one row, value 'all') or per value of a field (most frequent first, no value as '(none)'): a table of value and count. An empty layer counts 0."
    )

    def initAlgorithm(self, config: dict[str, Any] | None = None) -> None:  # noqa: N802
        from qgis.core import QgsProcessingOutputNumber

        self.addParameter(QgsProcessingParameterFeatureSource("INPUT", tr("Input layer")))
        self.addParameter(QgsProcessingParameterField("FIELD", tr("Count by this field"), None, "INPUT", optional=True))
        self.addParameter(QgsProcessingParameterFeatureSink("OUTPUT", tr("Counts"), QgsProcessing.TypeVector))
        self.addOutput(QgsProcessingOutputNumber("TOTAL", tr("Features counted")))

    def processAlgorithm(  # noqa: N802
        self, parameters: dict[str, Any], context: QgsProcessingContext, feedback: QgsProcessingFeedback
    ) -> dict[str, Any]:
        gdf = self._gdf(parameters, "INPUT", context, feedback)
        field = self.parameterAsString(parameters, "FIELD", context) or None
        table = self._run(lambda: ops.count_by(gdf, field))
        return self._emit(table, parameters, context, geometry_column=None) | {"TOTAL": int(table["count"].sum())}


class RoadReachability(_Algorithm):
    NAME, TITLE = "roadreachability", N_("Road reachability through a hazard")
    HELP = N_(
        "Which origins can still reach which targets by road when a hazard cuts the network: network distance (m) and free-flow time (min) before and after, detour ratio and status (reachable, detour, cut off, unreachable before, off network), one row per origin and target at the origin. Without targets: whether each origin stays joined to the main road network. Roads are OpenStreetMap lines with a highway field (oneway, maxspeed, bridge read when present); a road touching the hazard is cut, bridges over it kept open, tunnels cut. Also writes the cut roads."
    )
    VEHICLES: tuple[Vehicle, ...] = ("drivable", "all")

    def initAlgorithm(self, config: dict[str, Any] | None = None) -> None:  # noqa: N802
        from qgis.core import QgsProcessingOutputNumber, QgsProcessingOutputString, QgsProcessingParameterEnum

        self.addParameter(
            QgsProcessingParameterFeatureSource("ROADS", tr("Roads (OSM lines)"), [QgsProcessing.TypeVectorLine])
        )
        self.addParameter(
            QgsProcessingParameterFeatureSource("HAZARD", tr("Hazard polygons"), [QgsProcessing.TypeVectorPolygon])
        )
        self.addParameter(QgsProcessingParameterFeatureSource("ORIGINS", tr("Origins")))
        self.addParameter(QgsProcessingParameterFeatureSource("TARGETS", tr("Targets"), optional=True))
        self.addParameter(
            QgsProcessingParameterEnum(
                "VEHICLE", tr("Roads"), [tr("Drivable roads"), tr("All roads and paths")], defaultValue=0
            )
        )
        self.addParameter(
            QgsProcessingParameterNumber(
                "MAX_KM", tr("Longest route (km, 0: any)"), QgsProcessingParameterNumber.Double, 0.0, False, 0.0, 500.0
            )
        )
        self.addParameter(
            QgsProcessingParameterNumber(
                "MAX_SNAP_M",
                tr("Farthest a feature may be from a road (metres)"),
                QgsProcessingParameterNumber.Double,
                500.0,
                False,
                1.0,
                5000.0,
            )
        )
        self.addParameter(
            QgsProcessingParameterFeatureSink("OUTPUT", tr("Reachability"), QgsProcessing.TypeVectorPoint)
        )
        self.addParameter(QgsProcessingParameterFeatureSink("CUT_ROADS", tr("Cut roads"), QgsProcessing.TypeVectorLine))
        self.addOutput(QgsProcessingOutputNumber("CUT_SEGMENTS", tr("Road segments cut")))
        self.addOutput(QgsProcessingOutputNumber("ISOLATED_ORIGINS", tr("Origins that lose every target")))
        self.addOutput(QgsProcessingOutputString("SUMMARY", tr("Summary")))

    def processAlgorithm(  # noqa: N802
        self, parameters: dict[str, Any], context: QgsProcessingContext, feedback: QgsProcessingFeedback
    ) -> dict[str, Any]:
        import geopandas as gpd

        from ...core.engines import network as net

        roads = self._gdf(parameters, "ROADS", context, feedback)
        hazard = self._gdf(parameters, "HAZARD", context, feedback)
        origins = self._gdf(parameters, "ORIGINS", context, feedback)
        targets = self._gdf(parameters, "TARGETS", context, feedback) if parameters.get("TARGETS") else None
        vehicle = self.VEHICLES[self.parameterAsEnum(parameters, "VEHICLE", context)]
        max_km = self.parameterAsDouble(parameters, "MAX_KM", context) or None
        max_snap_m = self.parameterAsDouble(parameters, "MAX_SNAP_M", context)
        network = self._run(lambda: net.build_network(roads, vehicle))
        feedback.pushInfo(f"{len(network.roads)} roads, {network.node_count} nodes, {len(network.segments)} segments")
        result = self._run(lambda: net.reachability(network, origins, targets, hazard, max_km, max_snap_m))
        for note in result.notes:
            feedback.pushInfo(note)
        table = result.pairs.copy()
        table.insert(1, "origin_name", [net.feature_name(origins, i) for i in table["origin"]])
        names = [net.feature_name(targets, i) if targets is not None else "main road network" for i in table["target"]]
        table.insert(3, "target_name", names)
        table["origin_isolated"] = table["origin"].isin(result.isolated_origins)
        for column in ("before_m", "after_m", "before_min", "after_min", "detour_ratio"):
            table[column] = table[column].astype(float)
        at = origins.geometry.representative_point().to_numpy()
        points = gpd.GeoDataFrame(table, geometry=at[table["origin"].to_numpy()], crs=origins.crs)
        out = self._emit(points, parameters, context, wkb=QgsWkbTypes.MultiPoint)
        cut = net.cut_roads(network, result.cut)
        keep = [c for c in roads.columns if c != roads.geometry.name and c in cut.columns]
        cut = cut[[*keep, "cut_segments", "cut_m", cut.geometry.name]]
        out |= self._emit(cut, parameters, context, output="CUT_ROADS", wkb=QgsWkbTypes.MultiLineString)
        counts = table["status"].value_counts().to_dict()
        summary = ", ".join(f"{n} {s}" for s, n in counts.items()) + f"; {len(cut)} roads cut"
        feedback.pushInfo(summary)
        return out | {
            "CUT_SEGMENTS": int(result.cut.sum()),
            "ISOLATED_ORIGINS": len(result.isolated_origins),
            "SUMMARY": summary,
        }


class _ToolChain(_Algorithm):
    """Runs the Raster agent's own tools on files, in a throw-away Response Store, and writes the
    final artifact to the algorithm's output."""

    def _run_tools(
        self,
        feedback: QgsProcessingFeedback,
        files: dict[str, str],
        chain: list[tuple[str, dict[str, Any], dict[str, str]]],
    ) -> tuple[ArtifactRecord, bytes]:
        """Run ``chain`` ((tool, args, {slot: input file name or "previous"}) in order) on ``files``;
        returns the last tool's artifact and its file's bytes."""
        import tempfile

        from ...core.agents import TOOLS, ToolContext
        from ...core.store.store import ResponseStore
        from ..settings import settings_from_qgis

        with tempfile.TemporaryDirectory(prefix="geofaham-processing-") as tmp:
            store = ResponseStore(tmp)
            try:
                records = {
                    name: store.register_raster_file(path, source="processing.input", summary=Path(path).name)
                    for name, path in files.items()
                }
                ctx = ToolContext(store=store, layers=default_catalogue(), settings=settings_from_qgis())
                last: ArtifactRecord | None = None
                for tool_name, args, inputs in chain:
                    feedback.pushInfo(tr("Running {tool}").format(tool=tool_name))
                    resolved: dict[str, ArtifactRecord] = {}
                    for slot, ref in inputs.items():
                        if ref != "previous":
                            resolved[slot] = records[ref]
                        elif last is not None:
                            resolved[slot] = last
                        else:
                            raise QgsProcessingException(
                                f"{tool_name}: its input '{slot}' is the previous tool's, but none ran"
                            )
                    last = self._run(partial(TOOLS[tool_name].run, ctx, args, resolved))
                    feedback.pushInfo(last.summary)
                if last is None:
                    raise QgsProcessingException("no tool to run")
                return last, store.abs_path(last.id).read_bytes()
            finally:
                store.close()

    def _write(
        self, parameters: dict[str, Any], context: QgsProcessingContext, record: ArtifactRecord, data: bytes
    ) -> dict[str, Any]:
        out = self.parameterAsOutputLayer(parameters, "OUTPUT", context)
        Path(out).write_bytes(data)  # a Cloud-Optimized GeoTIFF
        return {"OUTPUT": out, "SUMMARY": record.summary}


class SpectralIndex(_ToolChain):
    NAME, TITLE = "spectralindex", N_("Spectral index (NDVI, NDWI, MNDWI, NBR)")
    HELP = N_(
        "Computes a spectral index from a multi-band image whose bands are named (blue, green, red, nir, swir16, swir22 or Sentinel-2 B02…B12)."
    )

    def initAlgorithm(self, config: dict[str, Any] | None = None) -> None:  # noqa: N802
        from qgis.core import (
            QgsProcessingOutputString,
            QgsProcessingParameterEnum,
            QgsProcessingParameterRasterDestination,
            QgsProcessingParameterRasterLayer,
        )

        from ...core.engines.raster.ops import INDEX_NAMES

        self.indices = list(INDEX_NAMES)
        self.addParameter(QgsProcessingParameterRasterLayer("INPUT", tr("Image")))
        self.addParameter(QgsProcessingParameterEnum("INDEX", tr("Index"), self.indices, defaultValue=0))
        self.addParameter(QgsProcessingParameterRasterDestination("OUTPUT", tr("Index")))
        self.addOutput(QgsProcessingOutputString("SUMMARY", tr("Summary")))

    def processAlgorithm(  # noqa: N802
        self, parameters: dict[str, Any], context: QgsProcessingContext, feedback: QgsProcessingFeedback
    ) -> dict[str, Any]:
        image = self.parameterAsRasterLayer(parameters, "INPUT", context).source()
        index = self.indices[self.parameterAsEnum(parameters, "INDEX", context)]
        record, data = self._run_tools(
            feedback, {"scene": image}, [("compute_index", {"index": index}, {"scene": "scene"})]
        )
        return self._write(parameters, context, record, data)


class BurnSeverity(_ToolChain):
    NAME, TITLE = "burnseverity", N_("dNBR burn severity (USGS classes)")
    HELP = N_(
        "dNBR from a pre-fire and a post-fire image (nir and swir22 bands), classified into the USGS severity classes: unburned < 0.1, low, moderate-low, moderate-high, high >= 0.66."
    )

    def initAlgorithm(self, config: dict[str, Any] | None = None) -> None:  # noqa: N802
        from qgis.core import (
            QgsProcessingOutputString,
            QgsProcessingParameterRasterDestination,
            QgsProcessingParameterRasterLayer,
        )

        self.addParameter(QgsProcessingParameterRasterLayer("PRE", tr("Pre-fire image")))
        self.addParameter(QgsProcessingParameterRasterLayer("POST", tr("Post-fire image")))
        self.addParameter(QgsProcessingParameterRasterDestination("OUTPUT", tr("Burn severity")))
        self.addOutput(QgsProcessingOutputString("SUMMARY", tr("Summary")))

    def processAlgorithm(  # noqa: N802
        self, parameters: dict[str, Any], context: QgsProcessingContext, feedback: QgsProcessingFeedback
    ) -> dict[str, Any]:
        pre = self.parameterAsRasterLayer(parameters, "PRE", context).source()
        post = self.parameterAsRasterLayer(parameters, "POST", context).source()
        record, data = self._run_tools(
            feedback,
            {"pre": pre, "post": post},
            [("dnbr", {}, {"pre": "pre", "post": "post"}), ("burn_severity", {}, {"dnbr": "previous"})],
        )
        return self._write(parameters, context, record, data)


class _Transform(_Algorithm):
    """The transforms that make field data usable (core/engines/transforms.py and formats.py), where QGIS has no
    equivalent: what the engine changed is reported in the log."""

    def group(self) -> str:
        return tr("Field data")

    def groupId(self) -> str:  # noqa: N802
        return "fielddata"

    def _changes(self, feedback: QgsProcessingFeedback, notes: list[str]) -> None:
        for note in notes:
            feedback.pushInfo(note)


class ReprojectNamed(_Transform):
    NAME, TITLE = "reprojectnamed", N_("Reproject to a named CRS (antimeridian-safe)")
    HELP = N_(
        "Reprojects a layer to an EPSG code (EPSG:3832, 32760 ...) or a CRS chosen for the data by name: utm (the layer's own UTM zone), equal-area (Lambert equal-area centred on the data; EASE-Grid 2.0 when it is wide), local (transverse Mercator centred on it), polar-north (EPSG:3413), polar-south (EPSG:3031). Edges are densified first; lines and polygons crossing the antimeridian are cut at ±180° and joined again where the target has no seam, so they stay valid instead of wrapping round the globe."
    )

    def initAlgorithm(self, config: dict[str, Any] | None = None) -> None:  # noqa: N802
        from qgis.core import QgsProcessingOutputString, QgsProcessingParameterString

        self.addParameter(QgsProcessingParameterFeatureSource("INPUT", tr("Input layer")))
        self.addParameter(
            QgsProcessingParameterString(
                "TARGET", tr("Target CRS (EPSG code, or utm, equal-area, local, polar-north, polar-south)"), "utm"
            )
        )
        self.addParameter(QgsProcessingParameterFeatureSink("OUTPUT", tr("Reprojected")))
        self.addOutput(QgsProcessingOutputString("CRS", tr("CRS used")))

    def processAlgorithm(  # noqa: N802
        self, parameters: dict[str, Any], context: QgsProcessingContext, feedback: QgsProcessingFeedback
    ) -> dict[str, Any]:
        gdf = self._gdf(parameters, "INPUT", context, feedback)
        target = self.parameterAsString(parameters, "TARGET", context).strip()
        if not target:
            raise QgsProcessingException(tr("No target CRS given (an EPSG code, or utm, equal-area, polar-north ...)"))
        if gdf.crs is None:
            raise QgsProcessingException(
                tr("The input layer has no CRS, so it cannot be reprojected (set it in the layer's properties first)")
            )
        out, changes = self._run(lambda: tf.reproject(gdf, target))
        self._changes(feedback, changes.notes)
        return {**self._emit(out, parameters, context), "CRS": changes.crs}


class AreaWeightedGrid(_Transform):
    NAME, TITLE = "areaweightedgrid", N_("Area-weighted grid (counts shared by area)")
    HELP = N_(
        "Overlays polygons on a square grid of the given cell size in metres, in the layer's UTM zone (cell edges at whole multiples of the size). Each cell the polygons touch gets the geodesic area they cover (area_km2) and each chosen count field (people, buildings) shared out by the part of each polygon's area inside it. The output is in that UTM CRS."
    )

    def initAlgorithm(self, config: dict[str, Any] | None = None) -> None:  # noqa: N802
        self.addParameter(
            QgsProcessingParameterFeatureSource("INPUT", tr("Polygon layer"), [QgsProcessing.TypeVectorPolygon])
        )
        self.addParameter(
            QgsProcessingParameterNumber(
                "CELL", tr("Cell size (metres)"), QgsProcessingParameterNumber.Double, 1000.0, False, 1.0, 100_000.0
            )
        )
        self.addParameter(
            QgsProcessingParameterField(
                "FIELDS",
                tr("Count fields to share out by area"),
                None,
                "INPUT",
                QgsProcessingParameterField.Numeric,
                allowMultiple=True,
                optional=True,
            )
        )
        self.addParameter(QgsProcessingParameterFeatureSink("OUTPUT", tr("Grid"), QgsProcessing.TypeVectorPolygon))

    def processAlgorithm(  # noqa: N802
        self, parameters: dict[str, Any], context: QgsProcessingContext, feedback: QgsProcessingFeedback
    ) -> dict[str, Any]:
        gdf = self._gdf(parameters, "INPUT", context, feedback)
        cell = self.parameterAsDouble(parameters, "CELL", context)
        fields = self.parameterAsStrings(parameters, "FIELDS", context)
        out, changes = self._run(lambda: tf.area_weighted_grid(gdf, cell, fields))
        feedback.pushInfo(tr("{n} cells in {crs}").format(n=len(out), crs=changes.crs))
        return self._emit(out, parameters, context)


class RemoveSlivers(_Transform):
    NAME, TITLE = "removeslivers", N_("Remove sliver polygons (area in m², thinness)")
    HELP = N_(
        "Removes polygon parts smaller than an area in square metres or thinner than a compactness (Polsby-Popper 4πA/P²: 1 for a disc, 0.785 for a square, 0.03 for a 1 × 100 strip), both measured in an equal-area projection centred on the data whatever the layer's CRS. A feature left with no part is removed; points and lines are kept."
    )

    def initAlgorithm(self, config: dict[str, Any] | None = None) -> None:  # noqa: N802
        from qgis.core import QgsProcessingOutputNumber

        self.addParameter(
            QgsProcessingParameterFeatureSource("INPUT", tr("Polygon layer"), [QgsProcessing.TypeVectorPolygon])
        )
        self.addParameter(
            QgsProcessingParameterNumber(
                "MIN_AREA", tr("Minimum area (m²)"), QgsProcessingParameterNumber.Double, 0.0, False, 0.0
            )
        )
        self.addParameter(
            QgsProcessingParameterNumber(
                "MIN_COMPACTNESS",
                tr("Minimum compactness (4πA/P², 0 to 1)"),
                QgsProcessingParameterNumber.Double,
                0.05,
                False,
                0.0,
                0.99,
            )
        )
        self.addParameter(
            QgsProcessingParameterFeatureSink("OUTPUT", tr("Without slivers"), QgsProcessing.TypeVectorPolygon)
        )
        self.addOutput(QgsProcessingOutputNumber("PARTS_REMOVED", tr("Sliver parts removed")))
        self.addOutput(QgsProcessingOutputNumber("FEATURES_REMOVED", tr("Features removed")))

    def processAlgorithm(  # noqa: N802
        self, parameters: dict[str, Any], context: QgsProcessingContext, feedback: QgsProcessingFeedback
    ) -> dict[str, Any]:
        gdf = self._gdf(parameters, "INPUT", context, feedback)
        min_area = self.parameterAsDouble(parameters, "MIN_AREA", context)
        min_compactness = self.parameterAsDouble(parameters, "MIN_COMPACTNESS", context)
        out, changes = self._run(lambda: tf.remove_slivers(gdf, min_area, min_compactness))
        self._changes(feedback, changes.notes)
        return {
            **self._emit(out, parameters, context),
            "PARTS_REMOVED": changes.changed,
            "FEATURES_REMOVED": changes.removed,
        }


def _file_parameter(name: str, description: str, extensions: str = "") -> Any:
    from qgis.core import QgsProcessingParameterFile

    return QgsProcessingParameterFile(name, description, QgsProcessingParameterFile.File, fileFilter=extensions)


class FileManifest(_Transform):
    NAME, TITLE = "filemanifest", N_("File manifest (layers, CRS, geometry, counts)")
    HELP = N_(
        "Lists what a vector file holds, one row per layer: its name, CRS ('none' when the file names none: then longitude/latitude is assumed), geometry types, feature count and fields with their types, and for a shapefile the field names left cut to 10 characters. Reads every format GeoFaham reads: GeoPackage, GeoJSON, Shapefile, FlatGeobuf, KML/KMZ, GeoParquet, CSV with a WKT, WKB or longitude/latitude column."
    )

    def initAlgorithm(self, config: dict[str, Any] | None = None) -> None:  # noqa: N802
        self.addParameter(_file_parameter("INPUT", tr("Vector file")))
        self.addParameter(QgsProcessingParameterFeatureSink("OUTPUT", tr("Manifest"), QgsProcessing.TypeVector))

    def processAlgorithm(  # noqa: N802
        self, parameters: dict[str, Any], context: QgsProcessingContext, feedback: QgsProcessingFeedback
    ) -> dict[str, Any]:
        path = self.parameterAsFile(parameters, "INPUT", context)
        found = self._run(lambda: formats.manifest(path))
        table = formats.manifest_table(found).rename(columns={"value": "layer"})
        table["truncated_fields"] = [", ".join(layer.truncated_fields) for layer in found.layers]
        for layer in found.layers:
            self._changes(feedback, [f"{layer.name}: {note}" for note in layer.notes])
        return self._emit(table, parameters, context, geometry_column=None)


def _field_mapping(text: str) -> dict[str, str]:
    """``short=full`` pairs separated by commas, semicolons or new lines."""
    mapping: dict[str, str] = {}
    for pair in re.split(r"[,;\n]+", text):
        if not pair.strip():
            continue
        short, sep, full = pair.partition("=")
        if not sep or not short.strip() or not full.strip():
            raise QgsProcessingException(
                tr("'{pair}' is not a field mapping (write short=full name, e.g. populati_1=population_male)").format(
                    pair=pair.strip()
                )
            )
        mapping[short.strip()] = full.strip()
    return mapping


class RestoreFieldNames(_Transform):
    NAME, TITLE = "restorefieldnames", N_("Restore truncated shapefile field names")
    HELP = N_(
        "Reads a shapefile with its field names cut to the DBF's 10 characters restored: from the mapping given (short=full, separated by commas), else from a <name>.fieldnames.json sidecar or the aliases of an ESRI <name>.shp.xml. Text read with the wrong encoding (UTF-8 as Latin-1) is repaired. The names still looking cut are listed in the log."
    )

    def initAlgorithm(self, config: dict[str, Any] | None = None) -> None:  # noqa: N802
        from qgis.core import QgsProcessingParameterString

        self.addParameter(_file_parameter("INPUT", tr("Shapefile"), tr("Shapefiles (*.shp *.SHP)")))
        self.addParameter(
            QgsProcessingParameterString(
                "MAPPING", tr("Field mapping (short=full, ...)"), multiLine=False, optional=True
            )
        )
        self.addParameter(QgsProcessingParameterFeatureSink("OUTPUT", tr("With full field names")))

    def processAlgorithm(  # noqa: N802
        self, parameters: dict[str, Any], context: QgsProcessingContext, feedback: QgsProcessingFeedback
    ) -> dict[str, Any]:
        path = self.parameterAsFile(parameters, "INPUT", context)
        if Path(path).suffix.lower() != ".shp":
            raise QgsProcessingException(
                tr("{name} is not a shapefile (.shp); other formats keep their full field names").format(
                    name=Path(path).name
                )
            )
        mapping = _field_mapping(self.parameterAsString(parameters, "MAPPING", context) or "")
        raw = self._run(lambda: formats.read_frame(path, field_map=mapping))
        self._changes(feedback, raw.notes)
        if not raw.renamed:
            feedback.pushWarning(tr("No field name was restored: give a mapping, a sidecar or an ESRI .shp.xml"))
        return self._emit(raw.gdf, parameters, context, geometry_column=raw.gdf.geometry.name)


class GeoFahamProvider(QgsProcessingProvider):
    def id(self) -> str:
        return "geofaham"

    def name(self) -> str:
        return "GeoFaham"

    def icon(self) -> QIcon:
        return QIcon(str(Path(PLUGIN_ROOT) / "resources" / "icon.png"))

    def loadAlgorithms(self) -> None:  # noqa: N802
        for algorithm in (
            BufferMetres(),
            WithinDistance(),
            NearestK(),
            DamageCounts(),
            CountFeatures(),
            RoadReachability(),
            SpectralIndex(),
            BurnSeverity(),
            ReprojectNamed(),
            AreaWeightedGrid(),
            RemoveSlivers(),
            FileManifest(),
            RestoreFieldNames(),
        ):
            self.addAlgorithm(algorithm)
