"""A KML or KMZ whose placemarks sit in folders, as one layer: OGR's LIBKML driver reads each folder as a layer of its
own (nested folders flattened, repeated names suffixed " (#2)", the document's own placemarks as a layer named after
it); here they are read back together, each placemark with the folder it sat in, and with the date its description
(or name, or time stamp) gives."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET  # nosec B405 (a KML file the user gave, read for its folder names only)
import zipfile
from pathlib import Path

import geopandas as gpd
import pandas as pd

from ..errors import ToolFailed
from .formats import check_vector, read_layers
from .textvalues import parse_dates
from .transforms import Changes

CATEGORY = "category"
FOLDER_PATH = "folder_path"
DATE = "date"
_TAG = re.compile(r"<[^>]+>")
_SUFFIX = re.compile(r"\s+\(#\d+\)$")  # LIBKML's "Sub (#2)" for a second folder named Sub
_TIME_FIELDS = ("timestamp", "when", "begin")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _document(path: Path) -> bytes:
    """The KML text of a .kml, or of a .kmz's main document (doc.kml, else its first .kml)."""
    if path.suffix.lower() != ".kmz":
        return path.read_bytes()
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.lower().endswith(".kml")]
            if not names:
                raise ToolFailed(f"{path.name} holds no .kml document", kind="invalid_input", hint="give a KML or KMZ")
            main = next((n for n in names if n.lower().endswith("doc.kml")), names[0])
            return archive.read(main)
    except zipfile.BadZipFile:
        raise ToolFailed(f"{path.name} is no KMZ (zip) file", kind="invalid_input", hint="give a KML or KMZ") from None


def folder_paths(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """Each container of the KML in document order, depth first, as (its name, its folder path from the outermost
    folder; () for the document itself)."""
    try:
        root = ET.fromstring(_document(path))  # noqa: S314  # nosec B314 (see the import)
    except ET.ParseError as exc:
        raise ToolFailed(
            f"{path.name} is not well-formed KML: {exc}", kind="invalid_input", hint="check the file"
        ) from None
    out: list[tuple[str, tuple[str, ...]]] = []

    def walk(node: ET.Element, trail: tuple[str, ...]) -> None:
        for child in node:
            kind = _local(child.tag)
            if kind not in ("Document", "Folder"):
                continue
            name = next((c.text or "" for c in child if _local(c.tag) == "name"), "").strip()
            here = trail + (name,) if kind == "Folder" else trail
            out.append((name, here))
            walk(child, here)

    walk(root, ())
    return out


def _aligned(layers: list[str], containers: list[tuple[str, tuple[str, ...]]]) -> dict[str, tuple[str, ...]]:
    """The folder path of each of OGR's layers: its containers taken in order, matched by name (LIBKML's " (#2)"
    aside); a layer matched to none is a folder of its own name."""
    paths: dict[str, tuple[str, ...]] = {}
    at = 0
    for layer in layers:
        base = _SUFFIX.sub("", layer)
        found = next((i for i in range(at, len(containers)) if containers[i][0] == base), None)
        if found is None:
            paths[layer] = (base,)
            continue
        paths[layer], at = containers[found][1], found + 1
    return paths


def _said_text(row: pd.Series, columns: list[str]) -> str:
    """The text of those fields of a placemark, HTML taken off (a date the reader typed already, as ISO)."""
    parts = []
    for column in columns:
        value = row[column] if column in row.index else None
        if value is not None and hasattr(value, "isoformat") and not pd.isna(value):
            parts.append(value.isoformat())
        elif isinstance(value, str) and value.strip():
            parts.append(html.unescape(_TAG.sub(" ", value)))
    return " ".join(parts)


def merge_folders(path: str | Path, dates: bool = True) -> tuple[gpd.GeoDataFrame, Changes]:
    """Every placemark of a KML/KMZ in one layer (EPSG:4326, the folders' fields united), with ``category``: the name
    of the folder it sat in (null for placemarks outside any folder), ``folder_path`` ("Albergues / Norte") when
    folders are nested, and with ``dates`` a ``date`` from its time stamp, else the first date its description gives
    (HTML taken off; day first unless the descriptions say otherwise), else its name."""
    path = Path(path)
    if path.suffix.lower() not in (".kml", ".kmz"):
        raise ToolFailed(
            f"{path.name} is not a KML or KMZ file", kind="invalid_input", hint="merge the folders of a .kml or .kmz"
        )
    checked = check_vector(path)  # a user's file: through the one door, then its text read from what was checked
    _, raws = read_layers(checked)
    names = [raw.layer or path.stem for raw in raws]
    paths = _aligned(names, folder_paths(checked.path))
    frames = []
    empty: list[str] = []
    for name, raw in zip(names, raws, strict=True):
        if raw.gdf.empty:
            empty.append(name)
            continue
        trail = paths[name]
        frame = raw.gdf.copy()
        frame[CATEGORY] = trail[-1] if trail else None
        frame[FOLDER_PATH] = " / ".join(trail) if trail else None
        frames.append(frame.to_crs(4326) if frame.crs is not None else frame.set_crs(4326))
    if not frames:
        raise ToolFailed(f"{path.name} holds no placemark", kind="empty", hint="check the file has placemarks")
    out = gpd.GeoDataFrame(pd.concat(frames, ignore_index=True), geometry=frames[0].geometry.name, crs=4326)
    nested = any(len(t) > 1 for t in paths.values())
    if not nested:
        out = out.drop(columns=FOLDER_PATH)
    notes = [f"{len(out)} placemarks of {len(frames)} folders of {path.name} in one layer; their folder in {CATEGORY}"]
    if nested:
        notes.append(f"folders are nested: {CATEGORY} is the innermost, {FOLDER_PATH} the whole path")
    outside = int(out[CATEGORY].isna().sum())
    if outside:
        notes.append(f"{outside} placemarks outside any folder: no {CATEGORY}")
    if empty:
        notes.append(f"folders without placemarks of their own: {', '.join(empty)}")
    name_field = next((c for c in ("Name", "name") if c in out.columns), None)
    if name_field:
        repeated = out[name_field].dropna()
        repeated = repeated[repeated.duplicated(keep=False)]
        if len(repeated):
            notes.append(
                f"names repeated across the folders (kept, each a placemark): {', '.join(sorted(set(repeated))[:5])}"
            )
    if dates:
        column = DATE if DATE not in out.columns else f"{DATE}_2"
        stamped, _, _ = parse_dates(pd.Series([_said_text(r, list(_TIME_FIELDS)) for _, r in out.iterrows()]))
        described, read, _ = parse_dates(pd.Series([_said_text(r, ["description"]) for _, r in out.iterrows()]))
        named, _, _ = parse_dates(
            pd.Series([_said_text(r, [name_field] if name_field else []) for _, r in out.iterrows()])
        )
        found = stamped.fillna(described).fillna(named)
        out[column] = found.to_numpy()
        counts = {
            "time stamp": int(stamped.notna().sum()),
            "description": int((stamped.isna() & described.notna()).sum()),
            "name": int((stamped.isna() & described.isna() & named.notna()).sum()),
        }
        where = ", ".join(f"{n} from the {k}" for k, n in counts.items() if n)
        notes.append(f"{int(found.notna().sum())} of {len(out)} placemarks dated ({where or 'none found'}) in {column}")
        notes += read
    return out, Changes(notes=notes)
