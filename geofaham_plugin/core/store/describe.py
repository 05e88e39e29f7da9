"""Metadata computed FROM THE DATA, never taken from a model or a caller's claim.

Areas and lengths are geodesic on the WGS84 ellipsoid (after reprojecting to EPSG:4326), because
planar measures in degrees or in Web Mercator are wrong by large, latitude-dependent factors. Every
function here is pure and headless (no Qt, no QGIS), so it runs in a worker thread or a test.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import shapely
from pyproj import CRS, Transformer
from shapely.geometry import Polygon

from ..domain.geodesy import GEOD, geodesic_area_m2, geodesic_length_m
from .models import BandInfo, Bounds, FieldInfo, RasterMeta, TableMeta, TextMeta, VectorMeta

#: Rasters with more pixels than this get their band statistics from a decimated read.
MAX_STATS_PIXELS = 4_000_000

__all__ = [
    "GEOD",
    "MAX_STATS_PIXELS",
    "crs_string",
    "geodesic_area_m2",
    "geodesic_length_m",
    "raster_metadata",
    "table_metadata",
    "text_metadata",
    "to_utc",
    "vector_metadata",
]


def crs_string(crs: Any) -> str:
    """``"EPSG:<code>"`` when pyproj finds one, else another authority code (``OGC:CRS84``), else WKT.

    A short code keeps prompts small and comparable; WKT is the lossless fallback."""
    crs = CRS.from_user_input(crs)
    code = crs.to_epsg()
    if code is not None:
        return f"EPSG:{code}"
    auth = crs.to_authority()
    return f"{auth[0]}:{auth[1]}" if auth else crs.to_wkt()


def to_utc(value: Any) -> datetime | None:
    """A timezone-aware UTC datetime (naive values are taken as UTC) so times always compare."""
    if value is None or value is pd.NaT or (not isinstance(value, (datetime, str)) and pd.isna(value)):
        return None
    ts = pd.Timestamp(value)
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    return ts.to_pydatetime()


def _bounds(values: Iterable[float]) -> Bounds | None:
    minx, miny, maxx, maxy = (float(v) for v in values)
    if not all(math.isfinite(v) for v in (minx, miny, maxx, maxy)):
        return None
    return Bounds(minx=minx, miny=miny, maxx=maxx, maxy=maxy)


def _fields(df: pd.DataFrame, exclude: str | None = None) -> list[FieldInfo]:
    return [FieldInfo(name=str(c), type=str(t)) for c, t in df.dtypes.items() if c != exclude]


def _series_utc(s: pd.Series) -> pd.Series:
    """A datetime column as UTC (naive taken as UTC), so columns with different zones combine."""
    s = pd.to_datetime(s)
    return s.dt.tz_localize("UTC") if s.dt.tz is None else s.dt.tz_convert("UTC")


def vector_metadata(gdf: Any) -> VectorMeta:
    """Metadata of a GeoDataFrame with a CRS. Bounds in 4326 come from the reprojected geometries
    (tighter than a reprojected bbox); area/length only when polygonal/linear parts exist."""
    if gdf.crs is None:
        raise ValueError("vector data has no CRS")
    crs = CRS.from_user_input(gdf.crs)
    geoms = gdf.geometry
    present = geoms[~(geoms.isna() | geoms.is_empty)]
    types = sorted(set(present.geom_type))
    geometry_type = "None" if not types else types[0] if len(types) == 1 else "Mixed"
    g4326 = present.to_crs(4326) if len(present) else present
    dims = set(shapely.get_dimensions(present.values)) if len(present) else set()
    area = sum(geodesic_area_m2(g) for g in g4326) if 2 in dims else None
    length = sum(geodesic_length_m(g) for g in g4326) if 1 in dims else None
    times = [
        gdf[c] for c, t in gdf.dtypes.items() if c != gdf.geometry.name and pd.api.types.is_datetime64_any_dtype(t)
    ]
    stamps = pd.concat([_series_utc(s) for s in times]).dropna() if times else pd.Series(dtype="datetime64[ns, UTC]")
    return VectorMeta(
        geometry_type=geometry_type,
        crs=crs_string(crs),
        crs_is_geographic=crs.is_geographic,
        crs_units=crs.axis_info[0].unit_name if crs.axis_info else "unknown",
        bounds=_bounds(present.total_bounds) if len(present) else None,
        bounds_4326=_bounds(g4326.total_bounds) if len(present) else None,
        feature_count=len(gdf),
        fields=_fields(gdf, exclude=gdf.geometry.name),
        invalid_geometries=int((~present.is_valid).sum()),
        total_area_m2=float(area) if area is not None else None,
        total_length_m=float(length) if length is not None else None,
        time_start=to_utc(stamps.min()) if len(stamps) else None,
        time_end=to_utc(stamps.max()) if len(stamps) else None,
    )


def _parse_time(tags: dict[str, str], *keys: str) -> datetime | None:
    for key in keys:
        raw = tags.get(key)
        if not raw:
            continue
        raw = raw.strip()
        if key == "TIFFTAG_DATETIME":  # TIFF 6.0: "YYYY:MM:DD HH:MM:SS"
            try:
                return datetime.strptime(raw, "%Y:%m:%d %H:%M:%S").replace(tzinfo=UTC)
            except ValueError:
                pass
        try:
            return to_utc(pd.Timestamp(raw))
        except (ValueError, TypeError):
            continue
    return None


def raster_metadata(path: str | Path) -> RasterMeta:
    """Metadata of a raster file read with rasterio. Band statistics skip nodata, masked and NaN
    pixels; rasters above :data:`MAX_STATS_PIXELS` are read decimated so a worker never loads GBs."""
    import rasterio
    from rasterio.warp import transform_bounds

    with rasterio.open(path) as src:
        if src.crs is None:
            raise ValueError(f"raster has no CRS: {Path(path).name}")
        crs = CRS.from_user_input(src.crs.to_wkt())
        b = src.bounds
        b4326 = transform_bounds(src.crs, "EPSG:4326", *b, densify_pts=21)
        t = src.transform
        if crs.is_geographic:  # geodesic area of the centre pixel
            col, row = src.width // 2, src.height // 2
            corners = [t * (col, row), t * (col + 1, row), t * (col + 1, row + 1), t * (col, row + 1)]
            to_lonlat = Transformer.from_crs(crs, 4326, always_xy=True)  # any geographic CRS, not only 4326
            corners = [to_lonlat.transform(x, y) for x, y in corners]
            pixel_area = geodesic_area_m2(Polygon(corners))
        else:  # exact: |det| of the affine, in CRS units², scaled to metres
            factor = crs.axis_info[0].unit_conversion_factor if crs.axis_info else 1.0
            pixel_area = abs(t.a * t.e - t.b * t.d) * factor * factor
        n = src.width * src.height
        scale = math.sqrt(MAX_STATS_PIXELS / n) if n > MAX_STATS_PIXELS else 1.0
        shape = (max(1, int(src.height * scale)), max(1, int(src.width * scale)))
        bands: list[BandInfo] = []
        for i in range(1, src.count + 1):
            data = src.read(i, masked=True, out_shape=shape if scale < 1 else None)
            if np.issubdtype(data.dtype, np.floating):
                data = np.ma.masked_invalid(data)
            valid = data.compressed()
            nodata = src.nodatavals[i - 1]
            bands.append(
                BandInfo(
                    name=(src.descriptions[i - 1] or f"band_{i}"),
                    dtype=src.dtypes[i - 1],
                    nodata=None if nodata is None else float(nodata),
                    min=float(valid.min()) if valid.size else None,
                    max=float(valid.max()) if valid.size else None,
                    mean=float(valid.mean(dtype="float64")) if valid.size else None,
                )
            )
        tags = src.tags()
        time = _parse_time(tags, "TIFFTAG_DATETIME", "datetime", "DATETIME")
        return RasterMeta(
            crs=crs_string(crs),
            crs_is_geographic=crs.is_geographic,
            bounds=Bounds(minx=b.left, miny=b.bottom, maxx=b.right, maxy=b.top),
            bounds_4326=_bounds(b4326),
            width=src.width,
            height=src.height,
            resolution=(float(src.res[0]), float(src.res[1])),
            pixel_area_m2=float(pixel_area),
            bands=bands,
            time=time,
            time_start=_parse_time(tags, "start_datetime") or time,
            time_end=_parse_time(tags, "end_datetime") or time,
        )


def table_metadata(df: pd.DataFrame) -> TableMeta:
    """Row count and column dtypes of a table."""
    return TableMeta(row_count=len(df), columns=_fields(df))


def text_metadata(text: str) -> TextMeta:
    """Length of a text artifact, in characters."""
    return TextMeta(chars=len(text))
