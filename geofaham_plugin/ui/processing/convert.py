"""QGIS features <-> GeoDataFrames, so Processing algorithms run the same engine code as the agents."""

from __future__ import annotations

from typing import TYPE_CHECKING

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from qgis.core import QgsFeature, QgsField, QgsFields, QgsGeometry, QgsWkbTypes
from qgis.PyQt.QtCore import QVariant

if TYPE_CHECKING:
    from qgis.core import Qgis, QgsFeatureSink, QgsFeatureSource, QgsFeedback


def source_to_geodataframe(source: QgsFeatureSource, feedback: QgsFeedback | None = None) -> gpd.GeoDataFrame:
    names = [f.name() for f in source.fields()]
    rows, geoms = [], []
    for feature in source.getFeatures():
        if feedback is not None and feedback.isCanceled():
            break
        rows.append(feature.attributes())
        geometry = feature.geometry()
        geoms.append(shapely.from_wkb(bytes(geometry.asWkb())) if not geometry.isEmpty() else None)
    crs = source.sourceCrs()
    data = pd.DataFrame(rows, columns=names) if rows else pd.DataFrame(columns=names)
    data = data.map(lambda v: None if (hasattr(v, "isNull") and v.isNull()) else v)
    return gpd.GeoDataFrame(data, geometry=geoms, crs=(crs.authid() or crs.toWkt()) if crs.isValid() else None)


def fields_for(frame: pd.DataFrame, geometry_column: str | None = None) -> QgsFields:
    fields = QgsFields()
    for column, dtype in frame.dtypes.items():
        if column == geometry_column:
            continue
        if pd.api.types.is_bool_dtype(dtype):
            kind = QVariant.Bool
        elif pd.api.types.is_integer_dtype(dtype):
            kind = QVariant.LongLong
        elif pd.api.types.is_float_dtype(dtype):
            kind = QVariant.Double
        else:
            kind = QVariant.String
        fields.append(QgsField(str(column), kind))
    return fields


def wkb_type_of(gdf: gpd.GeoDataFrame) -> Qgis.WkbType:
    types: set[str] = set(gdf.geometry.dropna().geom_type)
    if not types:
        return QgsWkbTypes.NoGeometry
    bases = {t.replace("Multi", "") for t in types}
    if len(bases) != 1:  # mixed geometry types (points and polygons, ...)
        return QgsWkbTypes.Unknown
    name = "Multi" + bases.pop()
    return {
        "MultiPoint": QgsWkbTypes.MultiPoint,
        "MultiLineString": QgsWkbTypes.MultiLineString,
        "MultiPolygon": QgsWkbTypes.MultiPolygon,
    }.get(name, QgsWkbTypes.Unknown)


def write_rows(
    sink: QgsFeatureSink, frame: pd.DataFrame, fields: QgsFields, geometry_column: str | None = None
) -> None:
    for _, row in frame.iterrows():
        feature = QgsFeature(fields)
        values = []
        for field in fields:
            value = row[field.name()]
            if isinstance(value, np.generic):
                value = value.item()
            values.append(
                None
                if (value is None or (isinstance(value, float) and np.isnan(value)))
                else value
                if isinstance(value, (int, float, bool))
                else str(value)
            )
        feature.setAttributes(values)
        if geometry_column is not None and row[geometry_column] is not None:
            geometry = QgsGeometry()
            geometry.fromWkb(shapely.to_wkb(row[geometry_column]))
            if QgsWkbTypes.isMultiType(geometry.wkbType()) is False:
                geometry.convertToMultiType()
            feature.setGeometry(geometry)
        sink.addFeature(feature)
