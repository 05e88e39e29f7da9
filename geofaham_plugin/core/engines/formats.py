"""The file formats field data arrives in, read and written one way.

Reading (:func:`read_frame`, called by :func:`..layers.read_user_file`, the one reader entry point). Every file is
first checked by :func:`.user_files.check_user_file` (the allow-list of formats, verified by their signatures; no
VRT, no ``/vsi`` path, no link out of the folder, no FIFO) and OGR must read it with its format's drivers:

- GeoParquet (``.parquet``, ``.geoparquet``) through pyarrow (GDAL 3.6 has no Parquet driver);
- CSV / TSV: the geometry column is found by its content, not its name: WKT or EWKT text, WKB hex (SRID
  kept), or a longitude / latitude pair of number columns told apart by their value ranges (names only
  break ties); text columns of numbers or ISO dates become numbers and datetimes;
- KML / KMZ (LIBKML): ExtendedData fields kept and typed (dates parsed to datetimes), LIBKML's empty
  styling columns dropped;
- Shapefiles: the ``.cpg`` encoding (GDAL), UTF-8 read as Latin-1 repaired, field names cut to the DBF's 10
  characters restored from a mapping (the user's, our ``<name>.fieldnames.json`` sidecar, or the aliases of an
  ESRI ``.shp.xml``) and the ones left cut reported;
- everything else OGR reads (GeoPackage, GeoJSON, FlatGeobuf ...) through pyogrio.

:func:`manifest` lists what a file holds (layers, CRS, geometry types, counts, schema); :func:`write_layer`
writes by extension and reads the file back to check it (CRS, geometry types, feature count).
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
import xml.etree.ElementTree as ET  # nosec B405 (only ESRI .shp.xml metadata the user gave; see _esri_aliases)
from pathlib import Path
from typing import Any, Literal

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pydantic import BaseModel, ConfigDict, Field
from pyproj import CRS
from pyproj.exceptions import CRSError

from ..domain.geometry import geometry_family
from ..errors import ToolFailed, storage_error
from .user_files import CheckedFile, InputFormat, check_driver, check_user_file

FORMAT_HINT = (
    "give a vector file: GeoPackage, GeoJSON, Shapefile, FlatGeobuf, GeoParquet, KML/KMZ, or CSV with a WKT column"
)
CSV_HINT = (
    "a CSV needs a WKT column (wkt, geometry), a WKB hex column, or longitude/latitude columns in degrees (lon, lat)"
)
CRS_FILE_HINT = "save it with a CRS GeoFaham knows (an EPSG code such as EPSG:4326 or EPSG:32611), e.g. from QGIS"
FINITE_HINT = "fix or delete those features (QGIS: Vector > Geometry Tools > Check Validity), then save the file again"
WRITE_HINT = "the disk may be full or the folder not writable: free some space, or write to another folder"
PYARROW_HINT = "install pyarrow (pip install pyarrow==23.0.1; scripts/setup.sh does) to read and write GeoParquet"
DBF_NAME_LIMIT = 10
SIDECAR_SUFFIX = ".fieldnames.json"  # <stem>.fieldnames.json beside a shapefile: {"short": "full name"}

Kind = Literal["parquet", "csv", "kml", "shapefile", "ogr"]
WriteFormat = Literal["gpkg", "geojson", "shp", "fgb", "parquet", "csv", "kml"]
WRITE_FORMATS: dict[str, WriteFormat] = {
    ".gpkg": "gpkg",
    ".geojson": "geojson",
    ".json": "geojson",
    ".shp": "shp",
    ".fgb": "fgb",
    ".parquet": "parquet",
    ".geoparquet": "parquet",
    ".csv": "csv",
    ".kml": "kml",
}
_DRIVERS = {"gpkg": "GPKG", "geojson": "GeoJSON", "shp": "ESRI Shapefile", "fgb": "FlatGeobuf", "kml": "LIBKML"}
#: LIBKML's per-placemark styling columns, dropped when they carry nothing but their defaults
_KML_DEFAULTS: dict[str, tuple[Any, ...]] = {
    "description": (None,),
    "timestamp": (None,),
    "begin": (None,),
    "end": (None,),
    "altitudeMode": (None,),
    "tessellate": (-1, 0),
    "extrude": (0,),
    "visibility": (-1, 1),
    "drawOrder": (None,),
    "icon": (None,),
    "snippet": (None,),
}


_KINDS: dict[str, Kind] = {"GeoParquet": "parquet", "CSV": "csv", "KML": "kml", "KMZ": "kml", "Shapefile": "shapefile"}


def file_kind(fmt: InputFormat) -> Kind:
    """How a checked file of the allow-list is read: pyarrow, pandas, or OGR (with tidying for KML, shapefiles)."""
    return _KINDS.get(fmt.name, "ogr")


def check_vector(path: str | Path | CheckedFile, folder: str | Path | None = None) -> CheckedFile:
    """``path`` checked as a user's vector file (:func:`.user_files.check_user_file`), or as it was checked."""
    return path if isinstance(path, CheckedFile) else check_user_file(path, folder=folder, kind="vector")


class RawRead(BaseModel):
    """A file's features as the format holds them (before the geometry clean-up every route does)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    gdf: gpd.GeoDataFrame
    layer: str | None  # the layer read, when the file holds several
    crs_named: bool  # whether the file named its CRS (else EPSG:4326 is assumed)
    notes: list[str] = Field(default_factory=list)
    renamed: dict[str, str] = Field(default_factory=dict)  # shapefile: truncated name -> full name restored
    truncated: list[str] = Field(default_factory=list)  # shapefile: names that look cut and were not restored


def known_crs(declared: Any, name: str) -> CRS:
    """The CRS a file names; one clear :class:`ToolFailed` when it is none GeoFaham knows (``EPSG:999999``),
    never a silent EPSG:4326."""
    try:
        return CRS.from_user_input(declared)
    except CRSError:
        raise ToolFailed(
            f"{name} names the CRS '{declared}', which is not a CRS GeoFaham knows",
            kind="invalid_input",
            hint=CRS_FILE_HINT,
        ) from None


_GEOJSON_CRS = re.compile(rb'"crs"\s*:\s*\{[^{}]*"properties"\s*:\s*\{[^{}]*"name"\s*:\s*"([^"]{1,200})"')


def _geojson_crs(path: Path) -> str | None:
    """The CRS a GeoJSON's ``crs`` member names (GDAL reads an unknown one as EPSG:4326 without a word)."""
    with open(path, "rb") as fh:
        found = _GEOJSON_CRS.search(fh.read(65_536))
    return found.group(1).decode("utf-8", "replace") if found else None


def check_finite(gdf: gpd.GeoDataFrame, name: str) -> None:
    """Refuse features whose coordinates are not numbers (NaN, infinite): GEOS cannot compute with them."""
    coords, index = shapely.get_coordinates(gdf.geometry.to_numpy(), return_index=True)
    bad = np.unique(index[~np.isfinite(coords).all(axis=1)])
    if len(bad):
        raise ToolFailed(
            f"{name}: {len(bad)} feature{'s' if len(bad) > 1 else ''} ha{'ve' if len(bad) > 1 else 's'} coordinates that"
            f" are not numbers (NaN or infinite), the first is feature {int(bad[0])}",
            kind="invalid_input",
            hint=FINITE_HINT,
        )


def _read_error(path: Path, exc: Exception) -> ToolFailed:
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0].split(".;")[0]
    return ToolFailed(f"cannot read {path.name} as a vector layer: {first}", kind="invalid_input", hint=FORMAT_HINT)


def read_frame(
    path: str | Path | CheckedFile,
    layer: str | None = None,
    field_map: dict[str, str] | None = None,
    *,
    folder: str | Path | None = None,
) -> RawRead:
    """A vector file's features by its format (see the module docstring). One clear :class:`ToolFailed` for a
    missing, refused or unreadable file, a file without geometry, and an unknown or unchosen layer of a multi-layer
    file. ``field_map`` (shapefiles): truncated field name -> full name; ``folder``: the input folder the file
    and its links must stay in (default: its own)."""
    checked = check_vector(path, folder)
    path, kind = checked.path, file_kind(checked.format)
    if kind == "parquet":
        raw = RawRead(gdf=read_geoparquet(path), layer=None, crs_named=True)
    elif kind == "csv":
        gdf, notes = read_csv_geometry(path)
        raw = RawRead(gdf=gdf, layer=None, crs_named=gdf.attrs.get("srid_named", False), notes=notes)
    else:
        raw = _read_ogr(checked, layer, field_map or {})
    check_finite(raw.gdf, path.name)
    raw.notes[:0] = checked.notes
    return raw


#: the CRS OGR reports for a layer that names none (a GeoPackage's srs_id 0 and -1)
_UNDEFINED_CRS = frozenset({"Undefined geographic SRS", "Undefined Cartesian SRS", "Undefined SRS"})


def _without_crs(gdf: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    name = gdf.geometry.name
    geoms = gpd.GeoSeries(list(gdf.geometry), index=gdf.index)
    out = gpd.GeoDataFrame(gdf.drop(columns=name), geometry=geoms)
    return out.rename_geometry(name) if name != "geometry" else out


def _read_ogr(checked: CheckedFile, layer: str | None, field_map: dict[str, str]) -> RawRead:
    import pyogrio

    path, kind = checked.path, file_kind(checked.format)
    try:
        layers = [str(row[0]) for row in pyogrio.list_layers(path)]
    except Exception as exc:  # noqa: BLE001 (OGR's own errors: DataSourceError and friends)
        raise _read_error(path, exc) from None
    if layer is not None and layer not in layers:
        raise ToolFailed(
            f"{path.name} has no layer '{layer}'", kind="not_found", hint=f"its layers: {', '.join(layers) or 'none'}"
        )
    if layer is None and len(layers) > 1:
        raise ToolFailed(
            f"{path.name} holds {len(layers)} layers; say which one to read",
            kind="invalid_input",
            hint=f"its layers: {', '.join(layers)}",
        )
    chosen = layer if layer is not None else (layers[0] if layers else None)
    try:
        info = pyogrio.read_info(path, layer=chosen)
        check_driver(checked, str(info.get("driver")))
        declared = _geojson_crs(path) if checked.format.name == "GeoJSON" else info.get("crs")
        if declared:
            known_crs(declared, path.name)
        if not info.get("geometry_type"):
            raise ToolFailed(f"{path.name} has no geometry", kind="invalid_input", hint=FORMAT_HINT)
        # the .cpg's codec passed explicitly: inside QGIS, its OGR provider clears GDAL's SHAPE_ENCODING for the
        # whole process, and a UTF-8 DBF would otherwise be decoded as Latin-1
        encoding = cpg_encoding(path) if kind == "shapefile" else None
        options = {"encoding": encoding} if encoding else {}
        gdf = gpd.read_file(path, layer=chosen if len(layers) > 1 else None, engine="pyogrio", **options)
    except ToolFailed:
        raise
    except Exception as exc:  # noqa: BLE001
        raise _read_error(path, exc) from None
    named = info.get("crs") is not None
    if named and gdf.crs is not None and CRS.from_user_input(gdf.crs).name in _UNDEFINED_CRS:
        named, gdf = False, _without_crs(gdf)  # a GeoPackage layer written with no CRS: its srs_id 0 or -1
    raw = RawRead(gdf=gdf, layer=chosen if len(layers) > 1 else None, crs_named=named)
    if kind == "kml":
        raw.gdf = _tidy_kml(gdf)
    elif kind == "shapefile":
        _tidy_shapefile(raw, path, field_map)
    return raw


# ------------------------------------------------------------------------------------------ types
_NUMBER = re.compile(r"^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$")
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")
_LEADING_ZERO = re.compile(r"^\s*[+-]?0\d")  # 007, 08001: codes, not numbers
_DATE = re.compile(
    r"^\s*\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:Z|[+-]\d{2}:?\d{2})?)?\s*$", re.IGNORECASE
)
_TZ = re.compile(r"(?:Z|[+-]\d{2}:?\d{2})\s*$", re.IGNORECASE)


def infer_text_types(frame: pd.DataFrame, skip: tuple[str, ...] = ()) -> tuple[pd.DataFrame, dict[str, str]]:
    """Text columns whose every value is a number or an ISO date (time, zone) become numbers (integers when
    they all are) or datetimes (UTC when any value has a zone). Returns the frame and {column: new type}."""
    out = frame.copy()
    changed: dict[str, str] = {}
    for column in frame.columns:
        if column in skip or not (
            pd.api.types.is_object_dtype(frame[column]) or pd.api.types.is_string_dtype(frame[column])
        ):
            continue
        values = frame[column].dropna()
        if values.empty or not values.map(lambda v: isinstance(v, str)).all():
            continue
        values = values[values.str.strip() != ""]
        if values.empty:
            continue
        column_values = frame[column].where(frame[column].astype(str).str.strip() != "", None)
        if values.str.match(_NUMBER).all() and not values.str.match(_LEADING_ZERO).any():
            numbers = pd.to_numeric(column_values, errors="coerce")
            if values.str.match(_INTEGER).all():
                numbers = numbers.astype("Int64") if numbers.isna().any() else numbers.astype("int64")
                changed[column] = "integer"
            else:
                changed[column] = "real"
            out[column] = numbers
        elif values.str.match(_DATE).all():
            utc = bool(values.str.contains(_TZ).any())
            out[column] = pd.to_datetime(column_values, errors="coerce", utc=utc, format="ISO8601")
            changed[column] = "date"
    return out, changed


# -------------------------------------------------------------------------------------------- CSV
_WKT = re.compile(
    r"^\s*(?:SRID=(\d+);)?\s*(?:MULTI)?(?:POINT|LINESTRING|POLYGON|GEOMETRYCOLLECTION)\s*(?:ZM|Z|M)?\s*(?:\(|EMPTY)",
    re.IGNORECASE,
)
_WKB_HEX = re.compile(r"^\s*(?:00|01)(?:[0-9a-fA-F]{2}){4,}\s*$")
_X_WORDS = {"x", "lon", "lng", "long", "longitude", "easting", "east"}
_Y_WORDS = {"y", "lat", "latitude", "northing", "north"}


def _words(name: str) -> set[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))
    return {w for w in re.split(r"[^A-Za-z]+", spaced.lower()) if w}


def _read_text_table(path: Path) -> tuple[pd.DataFrame, str]:
    """The table as text (every value a string), with its delimiter sniffed; UTF-8 (with or without BOM),
    else Latin-1. Returns the frame and the encoding used."""
    data = path.read_bytes()
    for encoding in ("utf-8-sig", "latin-1"):
        try:
            text = data.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    sample = text[:20_000]
    try:
        delimiter = csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        frame = pd.read_csv(io.StringIO(text), sep=delimiter, dtype=str, keep_default_na=False, na_values=[""])
    except Exception as exc:  # noqa: BLE001 (pandas' parser errors)
        raise _read_error(path, exc) from None
    return frame, "UTF-8" if encoding == "utf-8-sig" else "Latin-1"


def _geometry_from_text(values: pd.Series) -> tuple[np.ndarray, int | None] | None:
    """Geometries parsed from a column of WKT / EWKT or WKB hex (None when it is neither); the SRID when the
    values name one."""
    present = values.dropna()
    present = present[present.str.strip() != ""]
    if present.empty:
        return None
    wkt = present.str.match(_WKT)
    if wkt.all():
        srids = {m.group(1) for m in present.map(_WKT.match) if m and m.group(1)}
        text = values.fillna("").str.replace(r"^\s*SRID=\d+;", "", regex=True)
        geoms = shapely.from_wkt(text.where(text.str.strip() != "", None).to_numpy(), on_invalid="ignore")
        return geoms, int(srids.pop()) if len(srids) == 1 else None
    if present.str.match(_WKB_HEX).all():
        geoms = shapely.from_wkb(values.str.strip().to_numpy(), on_invalid="ignore")
        located = geoms[~shapely.is_missing(geoms)]
        if len(located) < len(present):
            return None
        srids = set(shapely.get_srid(located).tolist()) - {0}
        return geoms, int(srids.pop()) if len(srids) == 1 else None
    return None


def _coordinate_columns(frame: pd.DataFrame) -> tuple[str, str, str] | None:
    """(longitude column, latitude column, how they were told apart), from columns of numbers with decimals
    within ±180 / ±90; None when there is no such pair. Raises when several pairs could be it."""
    lon_ok, lat_ok = [], []
    for column in frame.columns:
        series = frame[column]
        if not pd.api.types.is_float_dtype(series):
            continue  # whole numbers are ids and counts, not degrees
        values = series.dropna()
        if values.empty or (values == values.round()).all():
            continue
        if values.abs().le(180).all():
            lon_ok.append(column)
            if values.abs().le(90).all():
                lat_ok.append(column)
    if not lon_ok or not lat_ok:
        return None
    named_x = [c for c in lon_ok if _words(c) & _X_WORDS]
    named_y = [c for c in lat_ok if _words(c) & _Y_WORDS]
    if len(named_x) == 1 and len(named_y) == 1 and named_x != named_y:
        return named_x[0], named_y[0], "by their names and value ranges"
    pairs = [(x, y) for x in lon_ok for y in lat_ok if x != y]
    only_lon = [c for c in lon_ok if c not in lat_ok]  # some value beyond ±90: a longitude
    if len(only_lon) == 1 and len([y for y in lat_ok if y != only_lon[0]]) == 1:
        return only_lon[0], next(y for y in lat_ok if y != only_lon[0]), "by their value ranges (one exceeds ±90)"
    if len(lon_ok) == 2 and len(lat_ok) == 2:
        return lon_ok[0], lon_ok[1], "by column order (both within ±90: longitude assumed first)"
    if pairs:
        raise ToolFailed(
            f"several columns could be longitude/latitude: {', '.join(map(str, lon_ok))}",
            kind="invalid_input",
            hint="name them lon and lat (or x and y), or give a WKT column",
        )
    return None


def read_csv_geometry(path: Path) -> tuple[gpd.GeoDataFrame, list[str]]:
    """A delimited text file with its geometry found by content (see the module docstring). The frame's
    ``attrs['srid_named']`` says whether the values named their CRS."""
    frame, encoding = _read_text_table(path)
    notes = [f"{path.name} is not UTF-8: read as Latin-1"] if encoding != "UTF-8" else []
    found: list[tuple[str, np.ndarray, int | None]] = []
    for column in frame.columns:
        parsed = _geometry_from_text(frame[column])
        if parsed is not None:
            found.append((column, parsed[0], parsed[1]))
    if found:
        column, geoms, srid = found[0]
        if len(found) > 1:
            notes.append(f"geometry read from {column}; {', '.join(f[0] for f in found[1:])} kept as text")
        bad = int((frame[column].notna() & shapely.is_missing(geoms)).sum())
        if bad:
            notes.append(f"{bad} values of {column} are not valid geometries: read as features without geometry")
        attributes, _ = infer_text_types(frame.drop(columns=[column]), skip=tuple(f[0] for f in found[1:]))
        crs = known_crs(f"EPSG:{srid}", path.name) if srid else 4326
        gdf = gpd.GeoDataFrame(attributes, geometry=gpd.GeoSeries(geoms, index=frame.index), crs=crs)
        gdf.attrs["srid_named"] = srid is not None
        return gdf, notes
    typed, _ = infer_text_types(frame)
    pair = _coordinate_columns(typed)
    if pair is None:
        raise ToolFailed(f"{path.name} has no geometry", kind="invalid_input", hint=CSV_HINT)
    x, y, how = pair
    notes.append(f"points from columns {x} (longitude) and {y} (latitude), told apart {how}")
    xs, ys = typed[x].to_numpy(dtype=float), typed[y].to_numpy(dtype=float)
    points = shapely.points(xs, ys)
    points[np.isnan(xs) | np.isnan(ys)] = None
    gdf = gpd.GeoDataFrame(typed.drop(columns=[x, y]), geometry=gpd.GeoSeries(points, index=typed.index), crs=4326)
    gdf.attrs["srid_named"] = False
    return gdf, notes


# ------------------------------------------------------------------------------------ GeoParquet
def _pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ToolFailed(
            "GeoParquet needs pyarrow, which is not installed", kind="invalid_input", hint=PYARROW_HINT
        ) from None


def read_geoparquet(path: Path) -> gpd.GeoDataFrame:
    _pyarrow()
    try:
        return gpd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 (pyarrow's and geopandas' errors: not GeoParquet, corrupt)
        raise _read_error(path, exc) from None


# ------------------------------------------------------------------------------------------- KML
def _tidy_kml(gdf: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """LIBKML's styling columns dropped when they hold only their defaults; ExtendedData text typed."""
    drop = []
    for column, defaults in _KML_DEFAULTS.items():
        if column not in gdf.columns:
            continue
        values = gdf[column].dropna()
        if values.empty or (None not in defaults and values.isin(defaults).all()):
            drop.append(column)
    typed, _ = infer_text_types(gdf.drop(columns=drop), skip=(gdf.geometry.name,))
    return gpd.GeoDataFrame(typed, geometry=gdf.geometry.name, crs=gdf.crs)


# ------------------------------------------------------------------------------------- shapefile
_MOJIBAKE = re.compile("[\u00c2-\u00f4][\u0080-\u00bf]")  # UTF-8 lead and continuation bytes read as Latin-1


def cpg_encoding(path: Path) -> str | None:
    """The Python codec a shapefile's ``.cpg`` names (UTF-8, ISO-8859-1, 1252 ...), or None when there is no
    readable one."""
    cpg = next((p for p in (path.with_suffix(".cpg"), path.with_suffix(".CPG")) if p.is_file()), None)
    if cpg is None:
        return None
    try:
        name = cpg.read_text(encoding="ascii", errors="ignore").strip()
    except OSError:
        return None
    name = f"cp{name}" if name.isdigit() else name
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _fix_mojibake(value: Any) -> Any:
    if not isinstance(value, str) or not _MOJIBAKE.search(value):
        return value
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return value


def _sidecar_names(path: Path) -> dict[str, str]:
    """Full field names for a shapefile's truncated ones: our ``.fieldnames.json`` sidecar, else the aliases
    of an ESRI metadata file (``<name>.shp.xml``: attr/attrlabl -> attr/attalias)."""
    sidecar = path.with_suffix(SIDECAR_SUFFIX)
    if sidecar.is_file():
        try:
            names = json.loads(sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in names.items()} if isinstance(names, dict) else {}
    metadata = path.with_suffix(".shp.xml")
    if not metadata.is_file():
        return {}
    try:
        # a local file the user gave; ElementTree resolves no external entities and expat caps entity expansion
        root = ET.parse(metadata).getroot()  # noqa: S314  # nosec B314
    except (ET.ParseError, OSError):
        return {}
    names = {}
    for attr in root.iter("attr"):
        label, alias = attr.findtext("attrlabl"), attr.findtext("attalias")
        if label and alias and label.strip() != alias.strip():
            names[label.strip()] = alias.strip()
    return names


def looks_truncated(name: str) -> bool:
    """A DBF field name at the 10-character limit, or GDAL's de-duplicated cut (``population_``, ``populati_1``)."""
    return len(name) == DBF_NAME_LIMIT or bool(re.fullmatch(r".{6,8}_\d{1,2}", name))


def restore_asked_names(columns: list[str], asked: list[str]) -> dict[str, str]:
    """Cut name -> the full name asked for it: a field the output must have (``asked``) that the layer holds only
    cut to the DBF's 10 characters (``building_i`` for ``building_id``) or as GDAL's de-duplicated cut
    (``populati_1``), when exactly one of the layer's cut names fits it and that name is not asked itself."""
    restored: dict[str, str] = {}
    for full in asked:
        if full in columns or len(full) <= DBF_NAME_LIMIT:
            continue
        fits = [
            c
            for c in columns
            if c not in asked
            and c not in restored
            and looks_truncated(c)
            and (c == full[:DBF_NAME_LIMIT] or full.startswith(c.rsplit("_", 1)[0]))
        ]
        if len(fits) == 1:  # several (population, populati_1): which is which is a guess, so none is restored
            restored[fits[0]] = full
    return restored


def _tidy_shapefile(raw: RawRead, path: Path, field_map: dict[str, str]) -> None:
    gdf = raw.gdf
    text = [c for c in gdf.columns if c != gdf.geometry.name and pd.api.types.is_object_dtype(gdf[c])]
    fixed = 0
    for column in text:
        repaired = gdf[column].map(_fix_mojibake)
        fixed += int((repaired.fillna("") != gdf[column].fillna("")).sum())
        gdf[column] = repaired
    if fixed:
        raw.notes.append(f"{fixed} text values were UTF-8 read as Latin-1 (a missing or wrong .cpg): repaired")
    names = {**_sidecar_names(path), **field_map}
    columns = [c for c in gdf.columns if c != gdf.geometry.name]
    unknown = sorted(set(field_map) - set(columns))
    if unknown:
        raise ToolFailed(
            f"the field mapping names fields {path.name} lacks: {', '.join(unknown)}",
            kind="invalid_input",
            hint=f"its fields: {', '.join(map(str, columns))}",
        )
    raw.renamed = {c: names[c] for c in columns if c in names and names[c] != c}
    raw.gdf = gdf.rename(columns=raw.renamed)
    raw.truncated = [c for c in columns if c not in raw.renamed and looks_truncated(str(c))]
    if raw.renamed:
        raw.notes.append(
            "field names restored from the 10-character DBF names: "
            + ", ".join(f"{k} -> {v}" for k, v in raw.renamed.items())
        )
    if raw.truncated:
        raw.notes.append(
            f"field names possibly cut to {DBF_NAME_LIMIT} characters by the shapefile format: "
            + ", ".join(raw.truncated)
            + " (give a mapping to restore them)"
        )


# -------------------------------------------------------------------------------------- manifest
class LayerManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    geometry_types: list[str]
    crs: str | None  # None: the file names none
    feature_count: int
    fields: dict[str, str]  # name -> type (as the reader types it)
    bounds: tuple[float, float, float, float] | None = None
    truncated_fields: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    #: the first vertex of the first feature with a geometry, in the layer's CRS and in longitude/latitude
    sample: tuple[float, float] | None = None
    sample_lonlat: tuple[float, float] | None = None
    empty_geometries: int = 0  # features without a geometry, or with an empty one
    #: signs of a wrong encoding in text fields: "field: n values UTF-8 read as Latin-1 (mojibake), e.g. 'ClÃ­nica'"
    encoding_problems: list[str] = Field(default_factory=list)


class FileManifest(BaseModel):
    """What a file holds."""

    model_config = ConfigDict(extra="forbid")

    path: str
    format: str
    layers: list[LayerManifest]

    @property
    def crs_set(self) -> set[str]:
        return {layer.crs for layer in self.layers if layer.crs}


def _crs_label(crs: Any) -> str | None:
    if crs is None:
        return None
    crs = CRS.from_user_input(crs)
    epsg = crs.to_epsg(min_confidence=90)
    return f"EPSG:{epsg}" if epsg else crs.to_string()


FieldType = Literal["text", "integer", "real", "boolean", "date", "other"]


def field_type(series: pd.Series) -> FieldType:
    """A column's type as GeoFaham describes fields."""
    if pd.api.types.is_bool_dtype(series):
        return "boolean"
    if pd.api.types.is_integer_dtype(series):
        return "integer"
    if pd.api.types.is_float_dtype(series):
        return "real"
    if pd.api.types.is_datetime64_any_dtype(series):
        return "date"
    if pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series):
        sample = series.dropna()
        if sample.map(lambda v: isinstance(v, str)).all():
            return "text"
        if sample.map(lambda v: hasattr(v, "isoformat")).all():
            return "date"
    return "other"


def _sample(
    raw: RawRead, located: gpd.GeoSeries
) -> tuple[tuple[float, float] | None, tuple[float, float] | None, list[str]]:
    """The first vertex of the first located feature, in the layer's CRS and in lon/lat (None when that cannot be
    told), and what the coordinates say about the CRS."""
    if located.empty:
        return None, None, []
    x, y = (float(v) for v in shapely.get_coordinates(located.iloc[0])[0][:2])
    crs = CRS.from_user_input(raw.gdf.crs) if raw.gdf.crs is not None else None
    geographic = crs is None or crs.is_geographic
    x0, y0, x1, y1 = (float(v) for v in located.total_bounds)
    if geographic and (min(x0, y0) < -180 or max(x1, y1) > 180 or y0 < -90 or y1 > 90):
        named = "no CRS is named" if not raw.crs_named else f"{_crs_label(crs)} is named"
        return (
            (x, y),
            None,
            [f"coordinates such as ({x:g}, {y:g}) are no longitudes/latitudes though {named}: the CRS is wrong"],
        )
    if crs is None or crs.is_geographic:
        lonlat = (x, y) if crs is None or crs.equals(CRS.from_epsg(4326)) else None
    else:
        lonlat = None
    if lonlat is None and crs is not None:
        from pyproj import Transformer

        lon, lat = Transformer.from_crs(crs, CRS.from_epsg(4326), always_xy=True).transform(x, y)
        lonlat = (float(lon), float(lat)) if np.isfinite([lon, lat]).all() else None
    return (x, y), (round(lonlat[0], 7), round(lonlat[1], 7)) if lonlat else None, []


def _layer_manifest(name: str, raw: RawRead) -> LayerManifest:
    from .textvalues import encoding_problems

    gdf = raw.gdf
    geoms = gdf.geometry
    located = geoms[geoms.notna() & ~geoms.is_empty]
    sample, lonlat, said = _sample(raw, located)
    problems = []
    for column in gdf.columns:
        if column != gdf.geometry.name and field_type(gdf[column]) == "text":
            for sign, (n, example) in encoding_problems(gdf[column]).items():
                problems.append(f"{column}: {n} values {sign}, e.g. {example!r}")
    return LayerManifest(
        name=name,
        geometry_types=sorted(set(located.geom_type)),
        crs=_crs_label(gdf.crs) if raw.crs_named else None,
        feature_count=len(gdf),
        fields={str(c): field_type(gdf[c]) for c in gdf.columns if c != gdf.geometry.name},
        bounds=tuple(float(v) for v in located.total_bounds) if len(located) else None,  # type: ignore[arg-type]
        truncated_fields=raw.truncated,
        notes=raw.notes + said,
        sample=sample,
        sample_lonlat=lonlat,
        empty_geometries=len(gdf) - len(located),
        encoding_problems=problems,
    )


def read_layers(path: str | Path | CheckedFile, folder: str | Path | None = None) -> tuple[str, list[RawRead]]:
    """Every layer with a geometry a file holds, each read as :func:`read_frame` reads it (``RawRead.layer`` names
    it when the file holds several), and the file's format (the OGR driver, or parquet / csv). One clear
    :class:`ToolFailed` for a missing, refused or unreadable file (``folder``: as :func:`read_frame`)."""
    checked = check_vector(path, folder)
    path, kind = checked.path, file_kind(checked.format)
    if kind in ("parquet", "csv"):
        return kind, [read_frame(checked)]
    import pyogrio

    try:
        rows = pyogrio.list_layers(path)
        driver = pyogrio.read_info(path, layer=str(rows[0][0]))["driver"] if len(rows) else kind
    except Exception as exc:  # noqa: BLE001
        raise _read_error(path, exc) from None
    check_driver(checked, str(driver))
    spatial = [str(row[0]) for row in rows if row[1]]
    if not spatial:
        raise ToolFailed(f"{path.name} has no geometry", kind="invalid_input", hint=FORMAT_HINT)
    raws = [_read_ogr(checked, name, {}) for name in spatial]
    for raw in raws:
        check_finite(raw.gdf, path.name)
    raws[0].notes[:0] = checked.notes
    for name, raw in zip(spatial, raws, strict=True):
        raw.layer = name if len(rows) > 1 else None
    return str(driver), raws


def manifest(path: str | Path) -> FileManifest:
    """Every layer of a file with its CRS (None when the file names none), geometry types, feature count,
    field types, bounds and, for a shapefile, the field names left cut."""
    path = Path(path).expanduser()
    driver, raws = read_layers(path)
    layers = [_layer_manifest(raw.layer or path.stem, raw) for raw in raws]
    return FileManifest(path=str(path), format=driver, layers=layers)


def manifest_table(found: FileManifest) -> pd.DataFrame:
    """A manifest as a table, one row per layer: ``value`` (the layer's name), ``crs`` (``none (EPSG:4326
    assumed)`` when the file names none), ``geometry`` (its types), ``count`` and ``fields`` (``name (type)``); the
    audit's ``sample_x`` / ``sample_y`` (a vertex in the layer's CRS), ``sample_lon`` / ``sample_lat`` (the same in
    longitude/latitude), ``empty_geometries`` and ``encoding_problems`` (empty when none)."""

    def sample(layer: LayerManifest, which: str, i: int) -> float | None:
        point = getattr(layer, which)
        return None if point is None else point[i]

    return pd.DataFrame(
        [
            {
                "value": layer.name,
                "crs": layer.crs or "none (EPSG:4326 assumed)",
                "geometry": ", ".join(layer.geometry_types),
                "count": layer.feature_count,
                "fields": ", ".join(f"{k} ({v})" for k, v in layer.fields.items()),
                "sample_x": sample(layer, "sample", 0),
                "sample_y": sample(layer, "sample", 1),
                "sample_lon": sample(layer, "sample_lonlat", 0),
                "sample_lat": sample(layer, "sample_lonlat", 1),
                "empty_geometries": layer.empty_geometries,
                "encoding_problems": "; ".join(layer.encoding_problems),
            }
            for layer in found.layers
        ],
        columns=[
            "value", "crs", "geometry", "count", "fields", "sample_x", "sample_y", "sample_lon", "sample_lat",
            "empty_geometries", "encoding_problems",
        ],
    )  # fmt: skip


# ----------------------------------------------------------------------------------------- write
class WriteReport(BaseModel):
    """A file written and read back: what the check found."""

    model_config = ConfigDict(extra="forbid")

    path: str
    format: WriteFormat
    layer: str | None = None
    feature_count: int
    crs: str | None
    geometry_types: list[str]
    files: list[str]  # every file written (a shapefile is several)
    fields: list[str] = Field(default_factory=list)  # the fields read back (a shapefile's full names restored)
    renamed_fields: dict[str, str] = Field(default_factory=dict)  # full name -> name in the file
    notes: list[str] = Field(default_factory=list)


def write_format(path: Path) -> WriteFormat:
    try:
        return WRITE_FORMATS[path.suffix.lower()]
    except KeyError:
        raise ToolFailed(
            f"cannot write {path.name}: unknown format '{path.suffix or '(no extension)'}'",
            kind="invalid_input",
            hint="end the name in " + ", ".join(sorted(WRITE_FORMATS)),
        ) from None


def _dbf_names(columns: list[str]) -> dict[str, str]:
    """Full name -> a unique name of at most 10 characters (the DBF limit), for the names that need one."""
    taken = {c for c in columns if len(c) <= DBF_NAME_LIMIT}
    out = {}
    for column in columns:
        if len(column) <= DBF_NAME_LIMIT:
            continue
        short, n = column[:DBF_NAME_LIMIT], 1
        while short in taken:
            tail = f"_{n}"
            short, n = column[: DBF_NAME_LIMIT - len(tail)] + tail, n + 1
        taken.add(short)
        out[column] = short
    return out


def _families(gdf: gpd.GeoDataFrame) -> set[str]:
    geoms = gdf.geometry
    return {str(geometry_family(t)) for t in geoms[geoms.notna() & ~geoms.is_empty].geom_type.unique()}


def write_layer(
    gdf: gpd.GeoDataFrame, path: str | Path, layer: str | None = None, fmt: WriteFormat | None = None
) -> WriteReport:
    """Write a layer in the format its extension names, or ``fmt`` (gpkg, geojson, shp with a UTF-8 .cpg, fgb,
    parquet, csv with a WKT column, kml), then read it back and check the feature count, the CRS and the geometry
    types; a :class:`ToolFailed` says what differs. CSV and KML are written in EPSG:4326 (the formats' own)."""
    path = Path(path).expanduser()
    fmt = fmt or write_format(path)
    if gdf.crs is None:
        raise ToolFailed("the layer has no CRS: refusing to write a file nobody can place", kind="invalid_input")
    if not path.parent.is_dir():
        raise ToolFailed(f"no folder {path.parent} to write {path.name} into", kind="not_found")
    notes: list[str] = []
    renamed: dict[str, str] = {}
    out = gdf
    if fmt in ("csv", "kml") and not CRS.from_user_input(gdf.crs).equals(CRS.from_epsg(4326)):
        out = gdf.to_crs(4326)
        notes.append(f"reprojected to EPSG:4326 for {fmt.upper()} (the format's only CRS)")
    families = _families(out)
    if fmt == "shp" and len(families) > 1:
        raise ToolFailed(
            f"a shapefile holds one geometry type; this layer has {', '.join(sorted(families))}",
            kind="invalid_input",
            hint="split it by geometry type first, or write a GeoPackage (.gpkg)",
        )
    files = [path]
    try:
        if fmt == "parquet":
            _pyarrow()
            out.to_parquet(path)
        elif fmt == "csv":
            frame = pd.DataFrame(out.drop(columns=[out.geometry.name]))
            frame.insert(0, "wkt", shapely.to_wkt(out.geometry.to_numpy(), rounding_precision=-1))
            frame.to_csv(path, index=False)
        elif fmt == "shp":
            renamed = _dbf_names([str(c) for c in out.columns if c != out.geometry.name])
            out.rename(columns=renamed).to_file(path, driver=_DRIVERS[fmt], engine="pyogrio", encoding="UTF-8")
            files += [path.with_suffix(s) for s in (".shx", ".dbf", ".prj", ".cpg")]
            if renamed:
                sidecar = path.with_suffix(SIDECAR_SUFFIX)
                sidecar.write_text(json.dumps({v: k for k, v in renamed.items()}, indent=1), encoding="utf-8")
                files.append(sidecar)
                notes.append(f"{len(renamed)} field names cut to 10 characters; full names in {sidecar.name}")
        else:
            kwargs: dict[str, Any] = {"layer": layer} if layer and fmt == "gpkg" else {}
            if fmt == "fgb":
                kwargs["SPATIAL_INDEX"] = "NO"  # the index reorders the features; keep the layer's order
            out.to_file(path, driver=_DRIVERS[fmt], engine="pyogrio", **kwargs)
    except ToolFailed:
        raise
    except Exception as exc:  # noqa: BLE001 (the drivers' own errors)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ToolFailed(
            f"writing {path.name} failed: {first}", kind="error", hint=WRITE_HINT if storage_error(exc) else None
        ) from None
    report = _check_written(out, path, fmt, layer if fmt == "gpkg" else None)
    return report.model_copy(
        update={"files": [str(f) for f in files if f.exists()], "renamed_fields": renamed, "notes": notes}
    )


def _check_written(expected: gpd.GeoDataFrame, path: Path, fmt: WriteFormat, layer: str | None) -> WriteReport:
    """Read the file back (the same reader the user's files go through) and compare."""
    import pyogrio

    if layer is None and fmt == "gpkg" and len(pyogrio.list_layers(path)) > 1:
        layer = path.stem
    back = read_frame(path, layer)
    problems = []
    if len(back.gdf) != len(expected):
        problems.append(f"{len(back.gdf)} features instead of {len(expected)}")
    want, got = CRS.from_user_input(expected.crs), back.gdf.crs
    named = back.crs_named or fmt == "csv"  # a CSV names none: EPSG:4326 is what it is read as, and written in
    if got is None or not named or not CRS.from_user_input(got).equals(want, ignore_axis_order=True):
        problems.append(f"CRS {_crs_label(got) if named else 'none'} instead of {_crs_label(want)}")
    if _families(back.gdf) != _families(expected):
        problems.append(f"geometry types {sorted(_families(back.gdf))} instead of {sorted(_families(expected))}")
    if problems:
        raise ToolFailed(
            f"{path.name} was written but reading it back found " + "; ".join(problems),
            kind="error",
            hint="write a GeoPackage (.gpkg), which keeps every CRS and geometry type",
        )
    geoms = back.gdf.geometry
    return WriteReport(
        path=str(path),
        format=fmt,
        layer=back.layer,
        feature_count=len(back.gdf),
        crs=_crs_label(got),
        geometry_types=sorted(set(geoms[geoms.notna()].geom_type)),
        files=[],
        fields=[str(c) for c in back.gdf.columns if c != back.gdf.geometry.name],
    )
