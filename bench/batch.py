"""Batch tasks from files: an instruction, a folder of input files and a list of requested outputs.

The way analysts hand work over and external benchmarks drive an agent::

    python -m geofaham_plugin batch --instruction "Which hospitals are within 5 km of this area?" \\
        --inputs in/ --outputs outputs.json --out out/

1. Every readable input becomes an artifact of a fresh session: GeoParquet (when pyarrow is
   installed), GeoPackage (every layer), GeoJSON, Shapefile, CSV with a WKT column (or lon/lat
   columns), KML and GeoTIFF. A polygon layer named like an area (``aoi``, ``area``, ``boundary``,
   ``extent``, ``perimeter``, ``footprint``) — or the only small polygon layer — becomes the AOI.
2. The instruction runs through the orchestrator (the model configuration decides guided or free
   planning; in free mode the planner sees the registered inputs as available artifacts).
3. Each requested output is written with exactly its name and format from the run's artifacts: the
   answer's cited artifacts first, then the others the run produced, matching kind and geometry type.

``outputs.json``: ``{"outputs": [{"name": "hospitals.geojson", "format": "GeoJSON", "geometry_type":
"Point"}, {"name": "answer.md", "format": "markdown"}]}`` (or the bare list). Formats: GeoJSON,
GPKG, Shapefile, CSV (WKT geometry, or a table), KML, FlatGeobuf, GeoParquet, GeoTIFF, JSON, markdown/txt.
An output that cannot be made is reported (with the reason) and not written. Every output stays inside
``--out``: a name that resolves elsewhere (absolute, ``../``, through a symlink) is refused before any
work (:class:`OutputOutsideOut`), and checked again right before its file is written."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from geofaham_plugin.core.domain.geometry import geometry_family

if TYPE_CHECKING:
    import geopandas as gpd

    from geofaham_plugin.core.engines.layers import LayerCatalogue
    from geofaham_plugin.core.llm import LLM
    from geofaham_plugin.core.orchestrator.runlog import RunRecord
    from geofaham_plugin.core.store.models import ArtifactRecord
    from geofaham_plugin.core.store.store import ResponseStore

    from .config import ModelConfig

AOI_WORDS = re.compile(r"aoi|area|boundary|boundaries|extent|perimeter|footprint|zone|region", re.I)
VECTOR_EXT = {".geojson", ".json", ".gpkg", ".shp", ".csv", ".kml", ".kmz", ".parquet", ".geoparquet", ".fgb"}
RASTER_EXT = {".tif", ".tiff"}
WKT_COLUMNS = ("wkt", "geometry", "geom", "the_geom", "shape")
LON_COLUMNS = ("lon", "lng", "long", "longitude", "x")
LAT_COLUMNS = ("lat", "latitude", "y")

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
    source: str | None = Field(
        default=None, description="optional hint: 'aoi', 'input:<file>' or an artifact source prefix"
    )

    def fmt(self) -> str:
        key = (self.format or EXT_FORMAT.get(Path(self.name).suffix.lower(), "")).lower()
        if key not in FORMATS:
            raise ValueError(f"output {self.name}: unknown format {self.format or Path(self.name).suffix!r}")
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
def read_csv_layer(path: Path) -> gpd.GeoDataFrame | None:
    import geopandas as gpd
    import pandas as pd
    import shapely

    df = pd.read_csv(path)
    lower = {c.lower(): c for c in df.columns}
    wkt = next((lower[c] for c in WKT_COLUMNS if c in lower), None)
    if wkt is not None:
        geometry = shapely.from_wkt(df[wkt].astype(str).values, on_invalid="ignore")
        return gpd.GeoDataFrame(df.drop(columns=[wkt]), geometry=geometry, crs=4326)
    lon = next((lower[c] for c in LON_COLUMNS if c in lower), None)
    lat = next((lower[c] for c in LAT_COLUMNS if c in lower), None)
    if lon is not None and lat is not None:
        return gpd.GeoDataFrame(df, geometry=gpd.points_from_xy(df[lon], df[lat]), crs=4326)
    return None  # a plain table


def read_inputs(folder: Path) -> tuple[list[tuple[str, gpd.GeoDataFrame]], list[tuple[str, Path]], list[str]]:
    """(vector layers as (label, GeoDataFrame), rasters as (label, path), notes on skipped files)."""
    import geopandas as gpd
    import pyogrio

    vectors: list[tuple[str, gpd.GeoDataFrame]] = []
    rasters: list[tuple[str, Path]] = []
    notes: list[str] = []
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        ext = path.suffix.lower()
        try:
            if ext in RASTER_EXT:
                rasters.append((path.name, path))
            elif ext in (".parquet", ".geoparquet"):
                try:
                    vectors.append((path.name, gpd.read_parquet(path)))
                except ImportError:
                    notes.append(f"{path.name}: GeoParquet needs pyarrow, which is not installed; skipped")
            elif ext == ".gpkg":
                for layer, _ in pyogrio.list_layers(path):
                    label = path.name if len(pyogrio.list_layers(path)) == 1 else f"{path.name}:{layer}"
                    vectors.append((label, gpd.read_file(path, layer=layer)))
            elif ext == ".csv":
                gdf = read_csv_layer(path)
                if gdf is None:
                    notes.append(f"{path.name}: no WKT or lon/lat columns; not a layer, skipped")
                else:
                    vectors.append((path.name, gdf))
            elif ext in (".geojson", ".json", ".shp", ".kml", ".kmz", ".fgb"):
                gdf = gpd.read_file(path)
                if gdf.crs is None and ext in (".geojson", ".json", ".kml", ".kmz"):
                    gdf = gdf.set_crs(4326)  # RFC 7946 / KML: WGS84 by definition
                vectors.append((path.name, gdf))
            elif ext not in (".dbf", ".shx", ".prj", ".cpg", ".qmd", ".xml", ".aux"):
                notes.append(f"{path.name}: not a supported input format; skipped")
        except Exception as exc:  # one unreadable file does not stop the batch
            notes.append(f"{path.name}: unreadable ({type(exc).__name__}: {exc})"[:300])
    return vectors, rasters, notes


def register_inputs(store: ResponseStore, folder: Path, aoi_name: str | None = None, use_aoi: bool = True) -> dict:
    """Register every input; returns {"inputs": [...], "aoi": id | None, "notes": [...]}."""
    from geofaham_plugin.core.aoi import register_aoi
    from geofaham_plugin.core.store.models import VectorMeta

    vectors, rasters, notes = read_inputs(folder)
    registered: list[dict] = []
    polygonal = [
        (label, gdf)
        for label, gdf in vectors
        if len(gdf) and all(geometry_family(t) == "polygon" for t in gdf.geom_type.dropna().unique())
    ]
    aoi_label = None
    if use_aoi:
        if aoi_name:
            aoi_label = next((label for label, _ in vectors if label == aoi_name or Path(label).stem == aoi_name), None)
            if aoi_label is None:
                notes.append(f"--aoi {aoi_name}: no such input layer")
        else:
            named = [label for label, _ in polygonal if AOI_WORDS.search(Path(label.split(":")[0]).stem)]
            small = [label for label, gdf in polygonal if len(gdf) <= 20]
            aoi_label = named[0] if named else (small[0] if len(polygonal) == 1 and small else None)
    aoi_id = None
    for label, gdf in vectors:
        if gdf.crs is None:
            gdf = gdf.set_crs(4326)
            notes.append(f"{label}: no CRS in the file; EPSG:4326 assumed")
        name_field = next((c for c in ("name", "NAME", "Name", "nombre", "titulo") if c in gdf.columns), None)
        record = store.register_vector(
            gdf,
            source=f"user.input:{label}",
            summary=f"input {label}: {len(gdf)} features",
            extra={"input_file": label, "name_field": name_field, "limitations": []},
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
            aoi = register_aoi(store, gdf, source=f"user.aoi:{label}", name=Path(label).stem)
            aoi_id = aoi.id
            registered[-1]["aoi_artifact_id"] = aoi.id
    for label, path in rasters:
        record = store.register_raster_file(
            path, source=f"user.input:{label}", summary=f"input raster {label}", extra={"input_file": label}
        )
        registered.append({"file": label, "artifact_id": record.id, "kind": "raster"})
    return {"inputs": registered, "aoi": aoi_id, "notes": notes}


def _user_catalogue(store: ResponseStore, registered: dict, layers: Sequence[str], data_dir: Path) -> LayerCatalogue:
    """The layer catalogue with the vector inputs (as registered: repaired, CRS set) and ``--layer`` files as the
    user's own layers. An input that cannot be described is noted and left out of the catalogue."""
    from geofaham_plugin.core.cli import user_layer_catalogue
    from geofaham_plugin.core.errors import ToolFailed

    catalogue = user_layer_catalogue(list(layers), data_dir)
    for item in registered["inputs"]:
        if item["kind"] != "vector" or not item["features"]:
            continue
        label = str(item["file"])
        name = label.split(":", 1)[1] if ":" in label else Path(label).stem
        try:
            catalogue.add_user_layer(name, store.session_dir / store.get(item["artifact_id"]).path)
        except ToolFailed as exc:
            registered["notes"].append(f"{label}: not usable as a layer of yours ({exc})")
    return catalogue


# ----------------------------------------------------------------------------------- outputs
def _candidates(store: ResponseStore, record: RunRecord, inputs: dict) -> list[ArtifactRecord]:
    """Artifacts to draw outputs from: cited first, then the run's others (latest first), then the
    inputs (used only when an output's ``source`` names them)."""
    ids = list(record.cited_artifacts)
    ids += [s.artifact_id for s in reversed(record.steps) if s.artifact_id]
    ids += [i for s in record.steps for i in s.inputs.values()]
    ids += [i["artifact_id"] for i in inputs["inputs"]]
    return [store.get(i) for i in dict.fromkeys(ids) if i in store]


def _matches(spec: OutputSpec, art: ArtifactRecord, kind: str) -> bool:
    from geofaham_plugin.core.store.models import VectorMeta

    k = art.kind.value
    hinted = spec.source == "aoi" or (spec.source or "").startswith("input:")
    if art.source.startswith("user.") and not hinted:
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


def write_output(
    store: ResponseStore, spec: OutputSpec, art: ArtifactRecord | None, answer: str, out_dir: Path
) -> Path:
    kind = FORMATS[spec.fmt()][0]
    driver = FORMATS[spec.fmt()][1]
    target = confined_output(out_dir, spec.name)
    target.parent.mkdir(parents=True, exist_ok=True)
    target = confined_output(out_dir, spec.name)  # again: a symlink may have appeared among the new folders
    if target.exists():
        target.unlink()
    if kind == "text":
        target.write_text(answer + "\n", encoding="utf-8")
        return target
    if art is None:
        raise ValueError(f"output {spec.name}: no artifact to write it from")
    if kind == "raster":
        shutil.copyfile(store.abs_path(art.id), target)
        return target
    if art.kind.value == "table":
        table = store.read_table(art.id)
        if kind == "csv":
            table.to_csv(target, index=False)
        else:
            target.write_text(table.to_json(orient="records", indent=1, force_ascii=False), encoding="utf-8")
        return target
    gdf = _promote(store.read_vector(art.id), spec.geometry_type)
    if spec.crs:
        gdf = gdf.to_crs(spec.crs)
    if driver in ("GeoJSON", "KML") or (kind == "json"):
        gdf = gdf.to_crs(4326)
    if kind == "csv":
        frame = gdf.drop(columns=gdf.geometry.name).assign(WKT=gdf.geometry.to_wkt())
        frame.to_csv(target, index=False)
    elif kind == "json":
        target.write_text(gdf.to_json(drop_id=True), encoding="utf-8")
    elif kind == "parquet":
        gdf.to_parquet(target)
    else:
        gdf.to_file(target, driver=driver, engine="pyogrio")
    return target


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
    ``ask --layer``). Returns the manifest (also saved in the session)."""
    from geofaham_plugin.core.llm import LLM
    from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
    from geofaham_plugin.core.store.store import ResponseStore

    from .config import build_models, load_config

    specs = load_outputs(outputs) if isinstance(outputs, (str, Path)) else list(outputs)
    out_dir = Path(out)
    for spec in specs:  # unknown formats and names outside --out fail before any work
        spec.fmt()
        confined_output(out_dir, spec.name)
    config = config or load_config()
    session_dir = Path(session) if session else Path(tempfile.mkdtemp(prefix="geofaham-batch-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    settings = config.settings()
    own_llm = llm is None
    llm = llm or LLM(build_models(config, settings))
    store = ResponseStore(session_dir)
    try:
        registered = register_inputs(store, Path(inputs), aoi_name, use_aoi)
        catalogue = _user_catalogue(store, registered, layers, settings.paths.data_dir)
        for note in store.notes + registered["notes"]:
            log(f"note: {note}")
        orch = Orchestrator(store, llm, config=config.orchestrator_config(), settings=settings, layers=catalogue)
        record = orch.run(instruction, aoi_artifact_id=registered["aoi"])
        written: list[dict[str, Any]] = []
        used: set[str] = set()
        by_stem: dict[str, str] = {}
        candidates = _candidates(store, record, registered)
        for spec in specs:
            kind = FORMATS[spec.fmt()][0]
            stem = Path(spec.name).stem
            fits = [a for a in candidates if _matches(spec, a, kind)]
            if kind == "text":
                art = None
            elif by_stem.get(stem) in [a.id for a in fits]:  # the same output in another format
                art = store.get(by_stem[stem])
            else:  # different names: different artifacts when there are enough
                art = next((a for a in fits if a.id not in used), fits[0] if fits else None)
            if kind != "text" and art is None:
                written.append(
                    {
                        "name": spec.name,
                        "written": False,
                        "reason": f"no {kind} artifact{' of geometry ' + spec.geometry_type if spec.geometry_type else ''} "
                        f"in the run (status {record.status})",
                    }
                )
                continue
            try:
                path = write_output(store, spec, art, record.answer, out_dir)
            except Exception as exc:
                written.append({"name": spec.name, "written": False, "reason": f"{type(exc).__name__}: {exc}"[:300]})
                continue
            if art is not None:
                used.add(art.id)
                by_stem.setdefault(stem, art.id)
            written.append(
                {
                    "name": spec.name,
                    "written": True,
                    "path": str(path),
                    "format": spec.fmt(),
                    "artifact_id": art.id if art is not None else None,
                    "features": getattr(art.metadata, "feature_count", None) if art is not None else None,
                }
            )
        manifest = {
            "instruction": instruction,
            "status": record.status,
            "run_id": record.run_id,
            "answer": record.answer,
            "aoi": registered["aoi"],
            "inputs": registered["inputs"],
            "input_notes": registered["notes"],
            "outputs": written,
            "session": str(session_dir),
            "run_record": str(orch.runlog.record_path(record.run_id)),
            "tokens": llm.usage.total_tokens,
        }
        (session_dir / "batch_manifest.json").write_text(
            json.dumps(manifest, indent=1, ensure_ascii=False, default=str), encoding="utf-8"
        )
        return manifest
    finally:
        store.close()
        if own_llm:
            llm.close()
