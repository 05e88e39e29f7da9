"""Batch tasks from files: an instruction, a folder of input files and a list of requested outputs.

The way analysts hand work over and external benchmarks drive an agent::

    python -m geofaham_plugin batch --instruction "Reproject the clinics to EPSG:25830 and save them" \\
        --inputs in/ --outputs outputs.json --out out/

1. Every input file is read by the one reader of the user's files (``engines/formats.py``: GeoParquet,
   GeoPackage (every layer), GeoJSON, FlatGeobuf, shapefiles with their ``.cpg`` and cut field names, CSV with
   its geometry found by content (WKT, WKB hex, lon/lat under any name), KML/KMZ with ExtendedData and dates),
   registered in a fresh session and added as one of the user's layers, named by its file stem (the
   GeoPackage's layer name). GeoTIFFs are registered as rasters.
2. A polygon input is the area of interest only when the instruction says so: it speaks of an area ("in this
   area", "inside the AOI", "the study area", "clip to the boundary file") or clips to / is inside a file it
   names; or ``--aoi NAME`` names it. No input becomes the AOI for its name or size alone.
3. The instruction runs through the orchestrator (the model configuration decides guided or free planning).
4. Each requested output is written with exactly its name and format from the run's artifacts: the layer a
   ``save_layer`` step saved under that name, else the answer's cited artifacts first, then the others the run
   produced, matching kind and geometry type. An input unchanged (as given, or only loaded) is never written as a
   result unless the instruction asks only for a format or CRS conversion: that would be a silently wrong file.
5. The output's CRS (an EPSG code, or utm / equal-area / polar-north ...) and Multi* geometry type are applied,
   its ``columns`` put first (the other attributes kept after them; a listed name the layer holds only cut to 10
   characters restored); the file is written by ``formats.write_layer`` (a GeoPackage ``layer`` into the same file
   as the batch's other layers of it; a JSON table as records, or as one object when asked), read back (opens, CRS,
   geometry type, count) and checked against the spec (CRS, geometry type, columns present) and against what went
   in (:func:`content_problems`: geometries not lost, the count the operation makes, the input's attributes kept,
   listed columns holding values). Field names a shapefile cuts are said in the output's line and in the answer.
6. The manifest (``batch_manifest.json`` in the session, also returned) and the log say in one line per output
   what was written and checked, what was written but failed its check, and what was not written and why;
   ``manifest["ok"]`` (and the command's exit code) is false when any output was not written or failed.

``outputs.json``: ``{"outputs": [{"name": "clinics_utm.gpkg", "crs": "EPSG:25830", "geometry_type": "Point",
"columns": ["name"]}, {"name": "answer.md"}]}`` (or the bare list). Formats: GeoJSON, GPKG, Shapefile, CSV
(WKT geometry, or a table), KML, FlatGeobuf, GeoParquet, GeoTIFF, JSON, markdown/txt. Every output stays inside
``--out``: a name that resolves elsewhere (absolute, ``../``, through a symlink) is refused before any
work (:class:`OutputOutsideOut`), and checked again right before its file is written."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from geofaham_plugin.core.domain.geometry import geometry_family
from geofaham_plugin.core.engines.user_files import RASTER_SUFFIXES, VECTOR_SUFFIXES
from geofaham_plugin.core.errors import InputError, user_line

if TYPE_CHECKING:
    import geopandas as gpd

    from geofaham_plugin.core.engines.layers import LayerCatalogue
    from geofaham_plugin.core.llm import LLM
    from geofaham_plugin.core.orchestrator.runlog import RunRecord
    from geofaham_plugin.core.store.models import ArtifactRecord
    from geofaham_plugin.core.store.store import ResponseStore

    from .config import ModelConfig

AOI_WORDS = re.compile(r"aoi|area|boundary|boundaries|extent|perimeter|footprint|zone|region", re.I)
VECTOR_EXT = set(VECTOR_SUFFIXES) - {".dbf"}  # a .dbf is read with its .shp
RASTER_EXT = set(RASTER_SUFFIXES)
SIDECAR_EXT = {".shx", ".prj", ".cpg", ".qmd", ".xml", ".aux", ".sbn", ".sbx", ".qix"}

FORMATS: dict[str, tuple[str, str | None]] = {  # alias -> (kind, OGR driver / writer)
    "geojson": ("vector", "GeoJSON"),
    "json": ("json", None),
    "gpkg": ("vector", "GPKG"),
    "geopackage": ("vector", "GPKG"),
    "shp": ("vector", "ESRI Shapefile"),
    "shapefile": ("vector", "ESRI Shapefile"),
    "esri shapefile": ("vector", "ESRI Shapefile"),
    "csv": ("csv", None),
    "kml": ("vector", "KML"),
    "fgb": ("vector", "FlatGeobuf"),
    "flatgeobuf": ("vector", "FlatGeobuf"),
    "parquet": ("parquet", None),
    "geoparquet": ("parquet", None),
    "geotiff": ("raster", None),
    "tif": ("raster", None),
    "tiff": ("raster", None),
    "cog": ("raster", None),
    "md": ("text", None),
    "markdown": ("text", None),
    "txt": ("text", None),
    "text": ("text", None),
}
EXT_FORMAT = {
    ".geojson": "geojson",
    ".json": "json",
    ".gpkg": "gpkg",
    ".shp": "shp",
    ".csv": "csv",
    ".kml": "kml",
    ".fgb": "fgb",
    ".parquet": "geoparquet",
    ".geoparquet": "geoparquet",
    ".tif": "geotiff",
    ".tiff": "geotiff",
    ".md": "md",
    ".txt": "txt",
}


class OutputSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="file name to write, exactly")
    format: str | None = Field(
        default=None, description="GeoJSON, GPKG, Shapefile, CSV, KML, FlatGeobuf, GeoParquet, GeoTIFF, JSON, markdown"
    )
    geometry_type: str | None = Field(
        default=None, description="Point, LineString, Polygon (Multi* accepted), or None for tables"
    )
    crs: str | None = Field(default=None, description="reproject to this CRS (GeoJSON and KML are always EPSG:4326)")
    columns: list[str] | None = Field(
        default=None, description="columns the output must have, written first in this order (the others kept after)"
    )
    source: str | None = Field(
        default=None, description="optional hint: 'aoi', 'input:<file>' or an artifact source prefix"
    )
    layer: str | None = Field(
        default=None,
        description="GeoPackage only: the layer's name in the file; outputs with the same name and different "
        "layers are written into one multi-layer GeoPackage",
    )
    shape: Literal["records", "object"] | None = Field(
        default=None,
        description="JSON tables only: a list of records (the default), or one object ({key: value} of a two-column "
        "table, {column: value} of one row, else {key: {column: value}}); an instruction asking for a JSON object, "
        "a dictionary or a mapping asks for 'object'",
    )

    def fmt(self) -> str:
        key = (self.format or EXT_FORMAT.get(Path(self.name).suffix.lower(), "")).lower()
        if key not in FORMATS:
            raise ValueError(f"output {self.name}: unknown format {self.format or Path(self.name).suffix!r}")
        if self.layer and WRITE_AS.get(key) != "gpkg":
            raise ValueError(f"output {self.name}: a layer name is for a GeoPackage (.gpkg), not {key}")
        return key


class OutputOutsideOut(ValueError):
    """A requested output whose name resolves outside ``--out``; ``str()`` is one line with the hint."""


def confined_output(out_dir: Path, name: str) -> Path:
    """Where output ``name`` is written: inside ``out_dir`` once every symlink and ``..`` is resolved,
    else :class:`OutputOutsideOut`. (``out_dir`` itself may be a symlink: the user chose it.)"""
    root = out_dir.resolve()
    target = (root / name).resolve()  # an absolute name replaces root: caught below
    if target == root or not target.is_relative_to(root):
        raise OutputOutsideOut(
            f"output {name!r} would be written outside --out {out_dir} (as {target}) "
            "(hint: give outputs plain file names, or sub-folders of --out)"
        )
    return target


class OutputsFile(BaseModel):
    outputs: list[OutputSpec] = Field(min_length=1)


def load_outputs(path: Path | str) -> list[OutputSpec]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return OutputsFile.model_validate({"outputs": data} if isinstance(data, list) else data).outputs


# ----------------------------------------------------------------------------------- inputs
#: an instruction that speaks of an area of interest without naming a file ("in this area", "inside the AOI",
#: "clip to the boundary file"); "the area" alone is left out: "the area in km² of each class" is a measure
AOI_SAID = re.compile(
    r"\b(?:aoi|area\s+of\s+interest|study\s+area|(?:this|that|our|my|given)\s+(?:area|boundary|perimeter|extent|"
    r"footprint|polygon|region|zone)|(?:in|inside|within|into|to)\s+the\s+(?:area|boundary|perimeter|extent|footprint)"
    r"|(?:boundary|area|perimeter|extent)\s+file"
    r"|(?:[aá]rea|zona|zone|per[ií]metro|p[ée]rim[èe]tre)\s+(?:do|da|de|del|du)\s+(?:arquivo|archivo|fichier)"
    r"|(?:[aá]rea|zona|zone)\s+de\s+(?:inter[eé]s|estudio|estudo|int[ée]r[êe]t|[ée]tude))\b",
    re.I,
)
#: the words before a file named as the area: "clip the roads to districts.gpkg", "inside study_area"
AOI_BEFORE = r"(?:\bclip\w*\b[^.;]{0,80}?\b(?:to|by|with)|\binside|\bwithin|\bin)\s+(?:(?:the|my|our|this)\s+)?(?:file\s+|layer\s+)?"


def _spoken(label: str) -> list[str]:
    """How an instruction may name an input: the file name, its stem, the stem with spaces for _ and -."""
    file = label.split(":")[-1] if ":" in label else label
    stem = Path(file).stem
    return list(dict.fromkeys([file, stem, re.sub(r"[_-]+", " ", stem)]))


def _about_data_beyond_the_inputs(instruction: str) -> bool:
    """Whether the instruction asks about a disaster's or the map's data (a disaster, damage grades, a feature
    class), not only about the input files (then a polygon file it names is where that data is looked at)."""
    from geofaham_plugin.core.planning.prepass import prepass

    facts = prepass(instruction)
    return bool(facts.event_id or facts.damage_classes or facts.target_entities)


def aoi_from_instruction(instruction: str, polygon_labels: Sequence[str]) -> tuple[str | None, str | None]:
    """The polygon input the instruction makes the area of interest, and a note: (label, None) when it says so
    and one input fits, or when it asks about a disaster's or the map's data and names one polygon input by its whole
    file name; (None, note) when it speaks of an area no single input is; (None, None) when it speaks of
    none (then no input is the AOI, whatever its name or size)."""
    for label in polygon_labels:  # a file named where an area goes: clip to it, inside it
        for words in _spoken(label):
            named_like_area = AOI_WORDS.search(words) or "." in words
            pattern = AOI_BEFORE + re.escape(words) + r"\b"
            match = re.search(pattern, instruction, re.I)
            if match and (named_like_area or match.group(0).lower().startswith("clip")):
                return label, None
    if _about_data_beyond_the_inputs(instruction):  # "which hospital is nearest my sketch.geojson polygon"
        whole = [
            label
            for label in polygon_labels
            if re.search(rf"(?<![\w.-]){re.escape(_spoken(label)[0])}(?![\w-])", instruction, re.I)
        ]
        if len(whole) == 1:  # named by its whole file name: a closed class, whatever words go around it
            return whole[0], None
    if not AOI_SAID.search(instruction):
        return None, None
    named = [
        label
        for label in polygon_labels
        if any(re.search(rf"\b{re.escape(w)}\b", instruction, re.I) for w in _spoken(label))
    ]
    area_like = [label for label in polygon_labels if AOI_WORDS.search(Path(label.split(":")[-1]).stem)]
    for group in (named, area_like, list(polygon_labels)):
        if len(group) == 1:
            return group[0], None
    if not polygon_labels:
        return None, "the instruction speaks of an area but no input is a polygon layer: no AOI"
    return None, (
        f"the instruction speaks of an area but {len(polygon_labels)} polygon inputs could be it "
        f"({', '.join(polygon_labels)}): no AOI (hint: --aoi NAME)"
    )


def read_inputs(
    folder: Path,
) -> tuple[list[tuple[str, gpd.GeoDataFrame, list[str]]], list[tuple[str, Path]], list[str]]:
    """(vector layers as (label, GeoDataFrame, reading notes), rasters as (label, path), notes on skipped files).
    Every file goes through the one check of the user's files first
    (:func:`geofaham_plugin.core.engines.user_files.check_user_file`: the allow-list of formats verified by their
    signatures, no VRT, no link out of ``folder``, no FIFO or device: a refused file is noted and skipped). Every
    vector file is read by :func:`geofaham_plugin.core.engines.formats.read_layers` (one reader: CSV geometry
    by content, KML ExtendedData and dates, GeoParquet, FlatGeobuf, shapefile .cpg and cut field names); a
    GeoPackage gives one layer per table, labelled ``file:layer``."""
    from geofaham_plugin.core.engines.formats import SIDECAR_SUFFIX, read_layers
    from geofaham_plugin.core.engines.user_files import check_user_file
    from geofaham_plugin.core.errors import ToolFailed

    vectors: list[tuple[str, gpd.GeoDataFrame, list[str]]] = []
    rasters: list[tuple[str, Path]] = []
    notes: list[str] = []
    for path in sorted(p for p in folder.iterdir() if p.is_symlink() or not p.is_dir()):  # FIFOs too: refused
        ext = path.suffix.lower()
        if (
            ext in SIDECAR_EXT
            or path.name.endswith(SIDECAR_SUFFIX)  # a shapefile's full field names
            or (ext == ".dbf" and path.with_suffix(".shp").exists())
        ):
            continue  # read with its .shp
        if ext not in VECTOR_EXT | RASTER_EXT:
            notes.append(f"{path.name}: not a supported input format; skipped")
            continue
        try:
            checked = check_user_file(path, folder=folder)
        except ToolFailed as exc:  # a refused file does not stop the batch either
            notes.append(f"{path.name}: not read ({exc})"[:300])
            continue
        if ext in RASTER_EXT:
            notes += [f"{path.name}: {note}" for note in checked.notes]
            rasters.append((path.name, checked.path))
            continue
        try:
            _driver, raws = read_layers(checked)
        except ToolFailed as exc:  # one unreadable file does not stop the batch
            notes.append(f"{path.name}: not read ({exc})"[:300])
            continue
        for raw in raws:
            label = f"{path.name}:{raw.layer}" if raw.layer else path.name
            gdf = raw.gdf
            read_notes = list(raw.notes)
            if gdf.crs is None or not raw.crs_named:
                gdf = gdf.set_crs(4326, allow_override=True)
                if ext not in (".geojson", ".json", ".kml", ".kmz"):  # RFC 7946 / KML: WGS84 by definition
                    read_notes.append("no CRS in the file; EPSG:4326 assumed")
            vectors.append((label, gdf, read_notes))
    return vectors, rasters, notes


def register_inputs(
    store: ResponseStore,
    folder: Path,
    aoi_name: str | None = None,
    use_aoi: bool = True,
    instruction: str = "",
) -> dict:
    """Register every input; returns {"inputs": [...], "aoi": id | None, "notes": [...]}. The AOI is ``aoi_name``,
    else the polygon input the instruction makes the area (:func:`aoi_from_instruction`), else none."""
    from geofaham_plugin.core.aoi import register_aoi
    from geofaham_plugin.core.errors import ToolFailed
    from geofaham_plugin.core.store.models import VectorMeta

    vectors, rasters, notes = read_inputs(folder)
    registered: list[dict] = []
    polygonal = [
        label
        for label, gdf, _ in vectors
        if len(gdf) and all(geometry_family(t) == "polygon" for t in gdf.geom_type.dropna().unique())
    ]
    aoi_label = None
    if use_aoi:
        if aoi_name:
            aoi_label = next(
                (label for label, _, _ in vectors if aoi_name in (label, Path(label.split(":")[0]).stem)), None
            )
            if aoi_label is None:
                notes.append(f"--aoi {aoi_name}: no such input layer")
        else:
            aoi_label, why = aoi_from_instruction(instruction, polygonal)
            if why:
                notes.append(why)
    aoi_id = None
    for label, gdf, read_notes in vectors:
        notes += [f"{label}: {n}" for n in read_notes]
        name_field = next((c for c in ("name", "NAME", "Name", "nombre", "titulo") if c in gdf.columns), None)
        record = store.register_vector(
            gdf,
            source=f"user.input:{label}",
            summary=f"input {label}: {len(gdf)} features",
            extra={"input_file": label, "name_field": name_field, "limitations": read_notes},
        )
        registered.append(
            {
                "file": label,
                "artifact_id": record.id,
                "kind": "vector",
                "features": len(gdf),
                "geometry_type": record.metadata.geometry_type if isinstance(record.metadata, VectorMeta) else None,
            }
        )
        if label == aoi_label:
            try:
                aoi = register_aoi(store, gdf, source=f"user.aoi:{label}", name=Path(label).stem)
            except ToolFailed as exc:
                notes.append(f"{label}: not usable as the area of interest ({exc})")
                continue
            aoi_id = aoi.id
            registered[-1]["aoi_artifact_id"] = aoi.id
    for label, path in rasters:
        record = store.register_raster_file(
            path, source=f"user.input:{label}", summary=f"input raster {label}", extra={"input_file": label}
        )
        registered.append({"file": label, "artifact_id": record.id, "kind": "raster"})
    return {"inputs": registered, "aoi": aoi_id, "notes": notes}


def _user_catalogue(
    store: ResponseStore, registered: dict, layers: Sequence[str], data_dir: Path, folder: Path
) -> LayerCatalogue:
    """The layer catalogue with the vector inputs (as registered: repaired, CRS set) and ``--layer`` files as the
    user's own layers, but the input that is the area of interest (a question reads it as the area, never as a set
    of features as well). An input that cannot be described is noted and left out of the catalogue."""
    from geofaham_plugin.core.cli import user_layer_catalogue
    from geofaham_plugin.core.errors import ToolFailed

    catalogue = user_layer_catalogue(list(layers), data_dir)
    for item in registered["inputs"]:
        if item["kind"] == "raster":  # a raster of the folder: read in place, a raster of the user's (issue 27)
            try:
                catalogue.add_user_layer(Path(str(item["file"])).stem, folder / str(item["file"]))
            except ToolFailed as exc:
                registered["notes"].append(f"{item['file']}: not usable as a raster of yours ({exc})")
            continue
        if item["kind"] != "vector" or not item["features"] or item.get("aoi_artifact_id"):
            continue  # (the input the instruction makes the area is the area of interest, not a layer besides)
        label = str(item["file"])
        name = label.split(":", 1)[1] if ":" in label else Path(label).stem
        try:
            # abs_path waits for the file: an input of BACKGROUND_MIN_FEATURES (10,000) features or more is written
            # by the store's writer thread, and its record's path names a file that may not exist yet
            catalogue.add_user_layer(
                name, store.abs_path(item["artifact_id"]), source_file=folder / label.split(":")[0]
            )
        except ToolFailed as exc:
            registered["notes"].append(f"{label}: not usable as a layer of yours ({exc})")
    return catalogue


# ----------------------------------------------------------------------------------- outputs
#: an instruction asking only for another format or CRS of a layer ("convert the KML to GeoJSON", "reproject the
#: parcels to EPSG:3035 and save them as a GeoPackage"): then, and only then, a loaded input is the output
CONVERSION_WORDS = re.compile(
    r"\b(?:convert|conversion|export|save|write|reproject|re-project|project|transform|turn)\w*", re.I
)
#: every other word a conversion-only instruction may hold (besides the names of the inputs): a word outside this
#: list ("anonymise", "snap", "drop", "area") may be an operation batch cannot see done, so the input stays unwritten
CONVERSION_VOCABULARY = frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "them",
        "they",
        "their",
        "my",
        "our",
        "your",
        "i",
        "we",
        "you",
        "me",
        "us",
        "please",
        "can",
        "could",
        "would",
        "will",
        "should",
        "need",
        "want",
        "like",
        "just",
        "also",
        "then",
        "and",
        "or",
        "but",
        "so",
        "to",
        "into",
        "in",
        "as",
        "at",
        "on",
        "of",
        "for",
        "from",
        "with",
        "by",
        "be",
        "is",
        "are",
        "convert",
        "converted",
        "conversion",
        "export",
        "exported",
        "save",
        "saved",
        "write",
        "written",
        "reproject",
        "reprojected",
        "re",
        "project",
        "projected",
        "transform",
        "transformed",
        "put",
        "turn",
        "change",
        "store",
        "output",
        "out",
        "give",
        "make",
        "copy",
        "version",
        "file",
        "files",
        "layer",
        "layers",
        "data",
        "dataset",
        "format",
        "formats",
        "geopackage",
        "gpkg",
        "geojson",
        "json",
        "shapefile",
        "shapefiles",
        "shp",
        "csv",
        "kml",
        "kmz",
        "geoparquet",
        "parquet",
        "flatgeobuf",
        "fgb",
        "table",
        "spreadsheet",
        "crs",
        "srs",
        "epsg",
        "code",
        "coordinate",
        "coordinates",
        "reference",
        "system",
        "projection",
        "utm",
        "zone",
        "wgs",
        "wgs84",
        "etrs",
        "etrs89",
        "nad",
        "nad83",
        "web",
        "pseudo",
        "mercator",
        "transverse",
        "lambert",
        "conformal",
        "conic",
        "albers",
        "azimuthal",
        "stereographic",
        "laea",
        "lcc",
        "ease",
        "grid",
        "polar",
        "north",
        "south",
        "northern",
        "southern",
        "arctic",
        "antarctic",
        "nsidc",
        "pdc",
        "pacific",
        "geographic",
        "longitude",
        "latitude",
        "lon",
        "lat",
        "degrees",
        "metres",
        "meters",
        "map",
        "maps",
        "mapping",
        "display",
        "new",
        "same",
        "all",
        "keep",
        "keeping",
    ]
)
#: an instruction naming a CRS or a reprojection: an input unchanged fits it only when the output spec names the CRS
REPROJECTION_WORDS = re.compile(
    r"\b(?:re-?project|project|transform|epsg|utm|crs|srs|coordinate|polar|mercator|lambert|albers|wgs\s?84|etrs|"
    r"nad\s?83|stereographic)\w*",
    re.I,
)


def conversion_only(instruction: str, spec: OutputSpec | None = None, inputs: Sequence[str] = ()) -> bool:
    """Whether the instruction asks only to convert a layer (format, CRS), so that an input written unchanged but
    for its format and the spec's CRS is what it asked for: a conversion verb, and no word but the conversion
    vocabulary and the inputs' names. A reprojection the instruction asks for must be in the output spec (``crs``):
    batch applies that one, and no other."""
    if not CONVERSION_WORDS.search(instruction):
        return False
    names = {w for label in inputs for w in re.findall(r"[^\W\d_]+", label.lower())}
    for word in re.findall(r"[^\W\d_]+", instruction.lower()):
        if word not in CONVERSION_VOCABULARY and not {word, word + "s", word.removesuffix("s")} & names:
            return False
    return not REPROJECTION_WORDS.search(instruction) or bool(spec and spec.crs)


def unchanged_input(art: ArtifactRecord) -> bool:
    """An input as the user gave it: registered from the inputs folder, or a layer loaded and nothing else."""
    return art.source.startswith(("user.", "vector.load_layer"))


class OutputResult(BaseModel):
    """What became of one requested output: written or not, and whether the file passed its checks."""

    model_config = ConfigDict(extra="forbid")

    name: str
    written: bool
    ok: bool = False  # written, read back, and as the output spec asks (CRS, geometry type, columns)
    reason: str | None = None  # why it was not written, or which check it failed
    path: str | None = None
    format: str | None = None
    artifact_id: str | None = None
    features: int | None = None
    crs: str | None = None
    geometry_types: list[str] = Field(default_factory=list)
    columns: list[str] = Field(default_factory=list)
    layer: str | None = None  # the layer written, in a GeoPackage
    renamed: dict[str, str] = Field(default_factory=dict)  # full name -> the name the format keeps (a shapefile's)
    notes: list[str] = Field(default_factory=list)

    @property
    def line(self) -> str:
        """One line for the log: what was written (and checked), or what was not and why."""
        if not self.written:
            return f"NOT written: {self.name}: {self.reason}"
        what = ", ".join(
            x
            for x in (
                f"{self.features} features" if self.features is not None else "",
                self.crs or "",
                "/".join(self.geometry_types),
                f"from {self.artifact_id}" if self.artifact_id else "",
            )
            if x
        )
        name = f"{self.name} (layer {self.layer})" if self.layer else self.name
        cut = (
            "; field names cut by the format: " + ", ".join(f"{k} -> {v}" for k, v in self.renamed.items())
            if self.renamed
            else ""
        )
        if not self.ok:
            return f"written but FAILED its check: {name}: {self.reason}" + (f" ({what}{cut})" if what else "")
        return f"wrote: {name}" + (f" ({what}; checked{cut})" if what else " (checked)")


#: an instruction asking for a JSON object rather than a list of records ("as a JSON object mapping each district
#: to its count", "a dictionary of counts keyed by district")
JSON_OBJECT = re.compile(
    r"\b(?:json\s+object|an?\s+(?:single\s+)?object|dictionary|dict|mapping|keyed\s+by|key(?:s)?\s*(?:->|:|=>)"
    r"|objeto\s+json|objet\s+json)\b",
    re.I,
)


def renamings_said(results: Sequence[OutputResult]) -> str:
    """What the answer says of field names a file's format cut ("" when none was): the user reads the file's
    names, not the layer's."""
    cut = [
        f"{r.name}: " + ", ".join(f"{k} -> {v}" for k, v in r.renamed.items())
        for r in results
        if r.written and r.renamed
    ]
    if not cut:
        return ""
    return (
        "\n\nField names cut to 10 characters by the Shapefile format (the full names are in the .fieldnames.json "
        "file beside it, which GeoFaham reads back): " + "; ".join(cut)
    )


def _candidates(store: ResponseStore, record: RunRecord, inputs: dict) -> list[ArtifactRecord]:
    """Artifacts to draw outputs from: cited first, then the run's others (latest first), then the
    inputs (used only when an output's ``source`` names them)."""
    ids = list(record.cited_artifacts)
    ids += [s.artifact_id for s in reversed(record.steps) if s.artifact_id]
    ids += [i for s in record.steps for i in s.inputs.values()]
    ids += [i["artifact_id"] for i in inputs["inputs"]]
    return [store.get(i) for i in dict.fromkeys(ids) if i in store]


def _saved_as(store: ResponseStore, record: RunRecord, spec: OutputSpec) -> ArtifactRecord | None:
    """The layer a ``save_layer`` step of the run saved under the output's name (stem), if any."""
    stem = Path(spec.name).stem.lower()
    for step in reversed(record.steps):
        filename = str(step.args.get("filename", ""))
        if step.tool == "save_layer" and step.artifact_id and Path(filename).stem.lower() == stem:
            layer = step.inputs.get("layer")
            if layer and layer in store:
                return store.get(layer)
    return None


def _hinted(spec: OutputSpec) -> bool:
    return spec.source == "aoi" or (spec.source or "").startswith("input:")


def _matches(spec: OutputSpec, art: ArtifactRecord, kind: str) -> bool:
    from geofaham_plugin.core.store.models import VectorMeta

    k = art.kind.value
    if art.source.startswith("user.") and not _hinted(spec):
        return False  # an input handed back is not a result: only when the spec asks for it
    if spec.source:
        if spec.source == "aoi" and k != "aoi":
            return False
        if spec.source.startswith("input:") and art.extra.get("input_file") != spec.source[6:]:
            return False
        if (
            spec.source not in ("aoi", "cited")
            and not spec.source.startswith("input:")
            and not art.source.startswith(spec.source)
        ):
            return False
    if kind == "raster":
        return k == "raster"
    if kind == "text":
        return True
    if kind in ("vector", "parquet"):
        if k not in ("vector", "aoi"):
            return False
    elif kind in ("csv", "json"):
        if k not in ("vector", "aoi", "table"):
            return False
        if spec.geometry_type and k == "table":
            return False
    want = geometry_family(spec.geometry_type)
    meta = art.metadata
    if want and k in ("vector", "aoi") and isinstance(meta, VectorMeta):
        have = geometry_family(meta.geometry_type)
        return have == want or meta.feature_count == 0
    return True


def _promote(gdf: gpd.GeoDataFrame, geometry_type: str | None) -> gpd.GeoDataFrame:
    """Single parts to Multi* when a Multi* type is asked for (the only geometry change made)."""
    import shapely

    if not geometry_type or not geometry_type.lower().startswith("multi"):
        return gdf
    multi = {"Point": shapely.MultiPoint, "LineString": shapely.MultiLineString, "Polygon": shapely.MultiPolygon}
    out = gdf.copy()
    out.geometry = [multi[g.geom_type]([g]) if g is not None and g.geom_type in multi else g for g in gdf.geometry]
    return out


#: batch format -> the format :func:`formats.write_layer` writes a vector in
WRITE_AS = {
    "geojson": "geojson",
    "json": "geojson",
    "gpkg": "gpkg",
    "geopackage": "gpkg",
    "shp": "shp",
    "shapefile": "shp",
    "esri shapefile": "shp",
    "csv": "csv",
    "kml": "kml",
    "fgb": "fgb",
    "flatgeobuf": "fgb",
    "parquet": "parquet",
    "geoparquet": "parquet",
}


#: what a vector operation's result holds of its first input: one feature per input feature, or some of them, each
#: with the input's attributes (the other operations aggregate: dissolve, hulls, clusters, grids, a merged buffer)
ONE_PER_FEATURE = frozenset(
    ["reproject", "split_antimeridian", "repair_geometry", "orient_rings", "centroids", "coerce_types", "add_measure"]
    + ["count_points_in_polygons", "rename_fields", "buffer", "spatial_join", "snap_to_layer"]
    + ["normalise_values"]
)
SUBSET = frozenset(
    ["dedupe", "remove_slivers", "drop_nulls", "select_geometry_type", "filter_where", "filter_values", "select_kind"]
    + ["select_damage", "clip", "inside", "outside", "within_distance", "snap_to_grid", "top_n"]
)
#: formats that keep a Multi* type of single parts as written (a shapefile reads one-part multis back as singles)
KEEPS_MULTI = frozenset(["gpkg", "geojson", "fgb", "parquet", "csv"])


def _operation(art: ArtifactRecord) -> str | None:
    """The operation that made ``art`` ("vector.buffer" -> "buffer"), when it keeps features of its first input."""
    tool = art.source.split(".", 1)[-1].split(":", 1)[0] if art.source.startswith("vector.") else None
    if tool == "buffer" and art.extra.get("dissolve", True):  # a merged buffer (or one from before the argument)
        return None
    return tool if tool in ONE_PER_FEATURE | SUBSET else None


def _lineage_problems(store: ResponseStore, art: ArtifactRecord, count: int) -> list[str]:
    """What the file lacks of what went in: along the operations that keep features (reproject, buffer per feature,
    dedupe, clip ...), the count each allows (as many as its input, or at most as many) and the input's attributes
    (a rename's renamed ones aside)."""
    from geofaham_plugin.core.store.models import VectorMeta

    problems: list[str] = []
    current, first = art, True
    for _ in range(20):
        tool = _operation(current)
        if tool is None or not current.inputs or current.inputs[0] not in store:
            break
        source = store.get(current.inputs[0])
        have, base = current.metadata, source.metadata
        if not isinstance(have, VectorMeta) or not isinstance(base, VectorMeta):
            break
        n = count if first else have.feature_count
        if tool in ONE_PER_FEATURE and n != base.feature_count:
            problems.append(f"{n} features where {tool} makes one per input feature ({base.feature_count})")
        elif tool in SUBSET and n > base.feature_count:
            problems.append(f"{n} features where {tool} keeps some of its input's {base.feature_count}")
        renamed = set((current.extra.get("mapping") or {}).keys()) if tool == "rename_fields" else set()
        lost = [f.name for f in base.fields if f.name not in {f.name for f in have.fields} and f.name not in renamed]
        if lost:
            problems.append(f"{tool} dropped the input's attributes {', '.join(lost)}")
        current, first = source, False
    return problems


def column_problems(frame: Any, columns: Sequence[str]) -> list[str]:
    """Listed columns of a non-empty table or layer without a single value, or holding infinite numbers."""
    import numpy as np
    import pandas as pd

    problems = []
    for column in columns:
        if column not in frame.columns or not len(frame):
            continue
        values = frame[column]
        if values.isna().all() or (values.astype(str).str.strip() == "").all():
            problems.append(f"column {column} holds no value")
        elif pd.api.types.is_numeric_dtype(values) and np.isinf(values.to_numpy(dtype=float, na_value=np.nan)).any():
            problems.append(f"column {column} holds infinite values")
    return problems


def content_problems(
    store: ResponseStore, art: ArtifactRecord, back: gpd.GeoDataFrame, spec: OutputSpec, written: gpd.GeoDataFrame
) -> list[str]:
    """What the file read back (``back``) shows wrong beyond the spec's CRS, geometry family and column names:
    geometries lost or empty, a count the operation cannot make, the input's attributes dropped, a listed column
    without a single value or with infinite ones, a Multi* type asked and not kept."""

    problems: list[str] = []
    geoms = back.geometry
    empty = geoms.isna() | geoms.is_empty
    was_empty = written.geometry.isna() | written.geometry.is_empty
    if len(back) and empty.all():
        problems.append("every geometry is empty")
    elif int(empty.sum()) > int(was_empty.sum()):
        problems.append(f"{int(empty.sum()) - int(was_empty.sum())} geometries lost in the file")
    problems += _lineage_problems(store, art, len(back))
    problems += column_problems(back, spec.columns or [])
    multi = (spec.geometry_type or "").lower().startswith("multi")
    if multi and WRITE_AS[spec.fmt()] in KEEPS_MULTI:
        single = sorted({t for t in geoms[~empty].geom_type.unique() if not str(t).startswith("Multi")})
        if single:
            problems.append(f"{'/'.join(single)} where {spec.geometry_type} was asked")
    return problems


def _spec_problems(spec: OutputSpec, crs: Any, families: set[str], columns: Sequence[str], want_crs: Any) -> list[str]:
    """What the written file lacks of what its output spec asks: the CRS, the geometry type, the columns."""
    from pyproj import CRS

    problems = []
    if want_crs is not None and (crs is None or not CRS.from_user_input(crs).equals(want_crs, ignore_axis_order=True)):
        problems.append(f"CRS {crs or 'none'} instead of {spec.crs}")
    want = geometry_family(spec.geometry_type)
    if want and families and families != {want}:
        problems.append(f"geometry {'/'.join(sorted(families))} instead of {spec.geometry_type}")
    missing = [c for c in spec.columns or [] if c not in columns]
    if missing:
        problems.append(f"no column {', '.join(missing)}")
    return problems


def _ordered(columns: Sequence[str], first: Sequence[str]) -> list[str]:
    """``first`` in its order, then every other column in the layer's order: an output keeps the attributes it
    was not told to drop."""
    return [*first, *(c for c in columns if c not in first)]


def json_payload(table: Any, shape: str) -> Any:
    """A table as JSON: a list of records, or one object ({key: value} of a two-column table, {column: value} of one
    row, else {key of the first column: {column: value}})."""
    frame = table.astype(object).where(table.notna(), None)
    if shape == "records":
        return frame.to_dict(orient="records")
    columns = [str(c) for c in frame.columns]
    if len(columns) == 2:
        return {str(k): v for k, v in zip(frame.iloc[:, 0], frame.iloc[:, 1], strict=True)}
    if len(frame) == 1:
        return dict(zip(columns, frame.iloc[0].tolist(), strict=True))
    return {str(row[0]): dict(zip(columns[1:], row[1:], strict=True)) for row in frame.itertuples(index=False)}


def _json_value(value: Any) -> Any:
    """numpy and pandas scalars, timestamps: as JSON writes them."""
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def _read_back_json(path: Path, shape: str, table: Any) -> tuple[int, list[str], list[str]]:
    """(rows, columns, problems) of a JSON table output as read back."""
    back = json.loads(path.read_text(encoding="utf-8"))
    columns = [str(c) for c in table.columns]
    if shape == "records":
        if not isinstance(back, list):
            return 0, [], ["not a list of records"]
        keys = list(back[0]) if back else columns
        return len(back), [str(k) for k in keys], []
    if not isinstance(back, dict):
        return 0, [], ["not a JSON object"]
    if len(columns) == 2 or len(table) != 1:
        return len(back), columns, []
    return 1, [str(k) for k in back], []


def write_output(
    store: ResponseStore,
    spec: OutputSpec,
    art: ArtifactRecord | None,
    answer: str,
    out_dir: Path,
    *,
    append: bool = False,
    shape: str | None = None,
) -> OutputResult:
    """Write one output from ``art`` (or the answer, for text), read it back and check it against ``spec``.
    ``append``: the GeoPackage holds layers this batch wrote already (``spec.layer`` is another one of it);
    ``shape``: a JSON table's shape when the spec names none (the instruction's)."""
    from geofaham_plugin.core.engines import formats
    from geofaham_plugin.core.engines import transforms as tf

    kind = FORMATS[spec.fmt()][0]
    target = confined_output(out_dir, spec.name)
    target.parent.mkdir(parents=True, exist_ok=True)
    target = confined_output(out_dir, spec.name)  # again: a symlink may have appeared among the new folders
    if target.exists() and not append:
        target.unlink()
    result = OutputResult(name=spec.name, written=True, path=str(target), format=spec.fmt(), layer=spec.layer)
    if kind == "text":
        target.write_text(answer + "\n", encoding="utf-8")
        return result.model_copy(update={"ok": True})
    if art is None:
        raise ValueError(f"output {spec.name}: no artifact to write it from")
    result.artifact_id = art.id
    if kind == "raster":
        import rasterio

        shutil.copyfile(store.abs_path(art.id), target)
        with rasterio.open(target) as src:
            crs = src.crs.to_wkt() if src.crs else None
        from pyproj import CRS

        problems = _spec_problems(spec, crs, set(), [], CRS.from_user_input(spec.crs) if spec.crs else None)
        return result.model_copy(update={"ok": not problems, "reason": "; ".join(problems) or None})
    json_shape = spec.shape or shape or "records"
    as_object = kind == "json" and json_shape == "object" and not spec.geometry_type
    if art.kind.value == "table" or as_object:  # a layer asked as a JSON object: its attributes, keyed
        import pandas as pd

        if art.kind.value == "table":
            table = store.read_table(art.id)
        else:
            layer = store.read_vector(art.id)
            table = pd.DataFrame(layer.drop(columns=[layer.geometry.name]))
        restored = formats.restore_asked_names([str(c) for c in table.columns], spec.columns or [])
        table = table.rename(columns=restored)
        if spec.columns and set(spec.columns) <= set(table.columns):
            # an object is shaped by the columns asked ({district: count}); a table keeps the others after them
            table = table[list(spec.columns) if as_object else _ordered([str(c) for c in table.columns], spec.columns)]
        problems = []
        if kind == "csv":
            table.to_csv(target, index=False)
            back = pd.read_csv(target)
            rows, columns = len(back), [str(c) for c in back.columns]
        else:
            payload = json_payload(table, json_shape)
            target.write_text(
                json.dumps(payload, indent=1, ensure_ascii=False, default=_json_value) + "\n", encoding="utf-8"
            )
            rows, columns, problems = _read_back_json(target, json_shape, table)
        if not problems and rows != len(table):
            problems.append(f"{rows} rows read back instead of {len(table)}")
        problems += _spec_problems(spec, None, set(), columns, None)
        problems += column_problems(back if kind == "csv" else table, spec.columns or [])
        return result.model_copy(
            update={
                "ok": not problems,
                "reason": "; ".join(problems) or None,
                "features": rows,
                "columns": columns,
                "notes": [f"field names restored as asked: {k} -> {v}" for k, v in restored.items()],
            }
        )
    gdf = _promote(store.read_vector(art.id), spec.geometry_type)
    restored = formats.restore_asked_names([str(c) for c in gdf.columns if c != gdf.geometry.name], spec.columns or [])
    gdf = gdf.rename(columns=restored)
    notes = [f"field names restored as asked: {k} -> {v}" for k, v in restored.items()]
    want_crs = tf.resolve_crs(spec.crs, gdf) if spec.crs else None
    if want_crs is None and WRITE_AS[spec.fmt()] in ("geojson", "kml"):
        want_crs = tf.resolve_crs("EPSG:4326", gdf)  # GeoJSON (RFC 7946) and KML: longitude/latitude
    if want_crs is not None and not want_crs.equals(gdf.crs, ignore_axis_order=True):
        gdf, changes = tf.reproject(gdf, want_crs.to_wkt())
        notes += changes.notes
    if spec.columns and set(spec.columns) <= set(gdf.columns):
        attributes = [str(c) for c in gdf.columns if c != gdf.geometry.name]
        gdf = gdf[[*_ordered(attributes, spec.columns), gdf.geometry.name]]
    report = formats.write_layer(gdf, target, layer=spec.layer, fmt=WRITE_AS[spec.fmt()])  # type: ignore[arg-type]
    families = {str(geometry_family(t)) for t in report.geometry_types}
    problems = _spec_problems(spec, report.crs, families, report.fields, want_crs if spec.crs else None)
    back = formats.read_frame(target, spec.layer).gdf  # what a user opening the file gets
    problems += content_problems(store, art, back, spec, gdf)
    return result.model_copy(
        update={
            "ok": not problems,
            "reason": "; ".join(problems) or None,
            "features": report.feature_count,
            "crs": report.crs,
            "geometry_types": report.geometry_types,
            "columns": report.fields,
            "renamed": report.renamed_fields,
            "notes": notes + report.notes,
        }
    )


def _choose(
    spec: OutputSpec,
    kind: str,
    candidates: list[ArtifactRecord],
    saved: ArtifactRecord | None,
    previous: ArtifactRecord | None,
    used: set[str],
    conversion: bool,
) -> tuple[ArtifactRecord | None, str | None]:
    """The artifact an output is written from, or why there is none. A layer the run saved under the output's
    name first, then the same output in another format, then the cited artifacts and the run's others, matching
    kind and geometry type. An input unchanged is a result only when the instruction asks for a conversion (or the
    spec's ``source`` names it): else the output would be silently wrong."""
    fits = [a for a in candidates if _matches(spec, a, kind)]
    if saved is not None and _matches(spec, saved, kind):
        fits.insert(0, saved)
    allowed = [a for a in fits if conversion or _hinted(spec) or not unchanged_input(a)]
    if previous is not None and previous.id in [a.id for a in allowed]:
        return previous, None
    art = next((a for a in allowed if a.id not in used), allowed[0] if allowed else None)
    if art is not None:
        return art, None
    geometry = f" of geometry {spec.geometry_type}" if spec.geometry_type else ""
    if fits:
        return None, (
            f"the run made no {kind} result{geometry} for it, only {fits[0].id} ({fits[0].summary[:80]}), an input "
            "unchanged: the instruction asks for more than a format conversion (or a CRS the output spec does not name)"
        )
    return None, f"no {kind} artifact{geometry} in the run"


def implied_choices(record: RunRecord) -> list[str]:
    """What the adopted plan chose that the instruction did not state (a default k, a distance for 'near' ...)."""
    if not record.plans:
        return []
    return list(dict.fromkeys(note for spec in record.plans[-1].specs for note in spec.implied))


def _manifest(
    instruction: str,
    status: str,
    run_id: str | None,
    answer: str,
    registered: dict,
    results: list[OutputResult],
    session_dir: Path,
    run_record: Path | None,
    llm: LLM,
) -> dict[str, Any]:
    return {
        "instruction": instruction,
        "status": status,
        "run_id": run_id,
        "answer": answer,
        "aoi": registered["aoi"],
        "inputs": registered["inputs"],
        "input_notes": registered["notes"],
        "outputs": [r.model_dump(mode="json") | {"line": r.line} for r in results],
        "ok": bool(results) and all(r.ok for r in results),
        "session": str(session_dir),
        "run_record": str(run_record) if run_record else None,
        "tokens": llm.usage.total_tokens,
    }


def _save_manifest(session_dir: Path, manifest: dict[str, Any]) -> None:
    (session_dir / "batch_manifest.json").write_text(
        json.dumps(manifest, indent=1, ensure_ascii=False, default=str), encoding="utf-8"
    )


def run_batch(
    instruction: str,
    inputs: Path | str,
    outputs: list[OutputSpec] | Path | str,
    out: Path | str,
    *,
    config: ModelConfig | None = None,
    session: Path | str | None = None,
    aoi_name: str | None = None,
    use_aoi: bool = True,
    llm: LLM | None = None,
    log: Callable[[str], None] = print,
    layers: Sequence[str] = (),
) -> dict:
    """Register inputs, answer ``instruction``, write the requested outputs. ``llm`` overrides the
    configuration's models (tests pass a scripted one). Every vector input is also one of the user's own
    layers (named by its file stem: the instruction may name it), as are ``layers`` ("NAME=FILE", like
    ``ask --layer``). Returns the manifest (also saved in the session); its ``ok`` is true when every output was
    written and passed its checks."""
    from geofaham_plugin.core.llm import LLM
    from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
    from geofaham_plugin.core.store.store import ResponseStore

    from .config import build_models, load_config

    if not Path(inputs).is_dir():
        raise InputError(f"no input folder {inputs}", hint="--inputs names a folder holding the input files")
    if isinstance(outputs, (str, Path)) and not Path(outputs).is_file():
        raise InputError(f"no outputs file {outputs}", hint='a JSON file: {"outputs": [{"name": "result.gpkg"}]}')
    try:  # an outputs file that does not parse, an unknown format: one line naming the outputs file
        specs = load_outputs(outputs) if isinstance(outputs, (str, Path)) else list(outputs)
        for spec in specs:
            spec.fmt()
    except ValueError as exc:  # json.JSONDecodeError and pydantic's ValidationError are ValueErrors
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(
            f"outputs {outputs if isinstance(outputs, (str, Path)) else 'list'}: {first}",
            hint="see `python -m bench batch --help` for the outputs file",
        ) from None
    out_dir = Path(out)
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(
            f"--out {out} is a file, not a folder", hint="--out names a folder for the outputs (made if missing)"
        )
    for spec in specs:  # names outside --out fail before any work
        confined_output(out_dir, spec.name)
    config = config or load_config()
    session_dir = Path(session) if session else Path(tempfile.mkdtemp(prefix="geofaham-batch-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    settings = config.settings()
    own_llm = llm is None
    llm = llm or LLM(build_models(config, settings))
    store = ResponseStore(session_dir)
    try:
        registered = register_inputs(store, Path(inputs), aoi_name, use_aoi, instruction)
        catalogue = _user_catalogue(store, registered, layers, settings.paths.data_dir, Path(inputs))
        for note in store.notes + registered["notes"]:
            log(f"note: {note}")
        orch = Orchestrator(store, llm, config=config.orchestrator_config(), settings=settings, layers=catalogue)
        try:
            record = orch.run(instruction, aoi_artifact_id=registered["aoi"])
        except InputError as exc:  # the instruction refused (no subject, no area ...): every output says why
            refusal = [OutputResult(name=spec.name, written=False, reason=f"refused: {exc.line}") for spec in specs]
            for result in refusal:
                log(result.line)
            manifest = _manifest(instruction, "refused", None, exc.line, registered, refusal, session_dir, None, llm)
            _save_manifest(session_dir, manifest)
            return manifest
        assumed = implied_choices(record)
        slots: dict[int, OutputResult] = {}
        used: set[str] = set()
        by_stem: dict[tuple[str, str | None], str] = {}
        layered: set[Path] = set()  # GeoPackages this batch wrote a named layer into
        json_shape = "object" if JSON_OBJECT.search(instruction) else None
        candidates = _candidates(store, record, registered)
        ended = None if record.status in ("answered", "partial") else f"the run ended {record.status}"
        if ended and record.error:
            ended += f" ({record.error.splitlines()[0][:300]})"
        answer = record.answer
        # the files first, the text outputs last: the answer they hold says what the formats did to the files
        for index in sorted(range(len(specs)), key=lambda i: FORMATS[specs[i].fmt()][0] == "text"):
            spec = specs[index]
            kind = FORMATS[spec.fmt()][0]
            stem = Path(spec.name).stem
            art: ArtifactRecord | None = None
            if ended and kind != "text":  # what a failed run left behind is no answer to the instruction
                slots[index] = OutputResult(name=spec.name, written=False, reason=ended, layer=spec.layer)
                log(slots[index].line)
                continue
            if kind == "text":
                answer = record.answer + renamings_said(list(slots.values()))
            else:
                key = (stem, spec.layer)
                previous = store.get(by_stem[key]) if key in by_stem else None
                saved = _saved_as(store, record, spec)
                conversion = conversion_only(instruction, spec, [i["file"] for i in registered["inputs"]])
                art, why = _choose(spec, kind, candidates, saved, previous, used, conversion)
                if art is None:
                    slots[index] = OutputResult(
                        name=spec.name, written=False, reason=f"{why} (status {record.status})", layer=spec.layer
                    )
                    log(slots[index].line)
                    continue
            target = confined_output(out_dir, spec.name)
            try:
                result = write_output(
                    store,
                    spec,
                    art,
                    answer,
                    out_dir,
                    append=spec.layer is not None and target in layered,
                    shape=json_shape,
                )
            except Exception as exc:  # noqa: BLE001 (a writer's error is this output's reason, not the batch's end)
                text = user_line(exc) or f"{type(exc).__name__}: {exc}"
                slots[index] = OutputResult(
                    name=spec.name, written=False, reason=text.splitlines()[0][:300], layer=spec.layer
                )
                log(slots[index].line)
                continue
            if spec.layer is not None:
                layered.add(target)
            if art is not None:
                used.add(art.id)
                by_stem.setdefault((stem, spec.layer), art.id)
                if result.ok and assumed:  # nobody is there to confirm what the run chose for the instruction
                    reason = "unconfirmed: the run chose what the instruction did not say: " + "; ".join(assumed)
                    result = result.model_copy(update={"ok": False, "reason": reason})
            if result.ok and record.status != "answered":  # the answer text of a failed run, or a partial result
                result = result.model_copy(update={"ok": False, "reason": ended or "the run answered only in part"})
            slots[index] = result
            log(result.line)
        results = [slots[i] for i in range(len(specs))]
        answer = record.answer + renamings_said(results)
        manifest = _manifest(
            instruction,
            record.status,
            record.run_id,
            answer,
            registered,
            results,
            session_dir,
            orch.runlog.record_path(record.run_id),
            llm,
        )
        _save_manifest(session_dir, manifest)
        return manifest
    finally:
        store.close()
        if own_llm:
            llm.close()
