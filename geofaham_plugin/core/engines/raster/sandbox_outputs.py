"""The sandbox's outputs cross into the unconfined parent here, and only here.

A file written by generated code is untrusted bytes: GDAL decides a format by content, so a VRT saved
as ``out.tif`` (or an OGR VRT as ``out.gpkg``) would make the parent open whatever it points to (its
own ``/proc/self/environ``, any file, a ``/vsi`` URL) and copy it into the store. Two steps:

1. :func:`convert` runs in a second confined process (Landlock: reads the output folder, writes only
   the clean folder; seccomp; a fresh interpreter state the generated code never touched). Each
   output with a known suffix is opened with the one driver its suffix names, checked to use no file
   but itself, and rewritten from its arrays/rows into a fresh file of the same kind: plain GeoTIFF,
   GeoPackage, CSV, UTF-8 text. Symbolic links, hard links and special files are refused.
2. :func:`vet` runs in the parent on the clean folder before anything opens a file: regular file,
   one link, a known name, the right magic bytes, and for GeoPackages a database holding only tables
   and indexes (no views or triggers: no stored SQL runs on read, no virtual table but the R*Tree
   spatial index); GeoTIFFs are then opened with the GTiff driver alone, with sidecar discovery off,
   and must consist of that one file.

Any refusal fails the whole run (all or nothing) with one line naming the file and the reason."""

from __future__ import annotations

import os
import re
import sqlite3
import stat
from pathlib import Path
from typing import Any

from ...errors import ToolFailed
from ..user_files import SQLITE_MAGIC, TIFF_MAGIC, UNTRUSTED_GDAL

#: the outputs the sandbox hands over, by suffix (what ``gr.save_*`` writes); other files are ignored
KINDS = {".tif": "raster", ".gpkg": "vector", ".csv": "table", ".md": "text"}
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,80}$")
GPKG_APPLICATION_ID = b"GPKG"
#: GDAL settings for every open of a sandbox output: no sibling files (.ovr, .aux.xml, .msk), no
#: network, no external access from SQLite
SAFE_GDAL = {**UNTRUSTED_GDAL, "GDAL_DISABLE_READDIR_ON_OPEN": "EMPTY_DIR", "GDAL_PAM_ENABLED": "NO"}
HINT = "save outputs only with gr.save_raster / save_vector / save_table / save_text"


def refused(name: str, why: str) -> ToolFailed:
    return ToolFailed(f"output {name} refused: {why}", kind="invalid_input", hint=HINT)


def candidates(folder: Path) -> list[Path]:
    """The files of ``folder`` with a known suffix; links and special files are refused, not skipped."""
    out = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        st = entry.stat(follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise refused(entry.name, "it is a symbolic link")
        if stat.S_ISDIR(st.st_mode):
            continue
        if not stat.S_ISREG(st.st_mode):
            raise refused(entry.name, "it is not a regular file")
        if st.st_nlink != 1:
            raise refused(entry.name, "it is a hard link to another file")
        suffix = Path(entry.name).suffix.lower()
        if suffix in KINDS and ".tmp." not in entry.name:
            if not NAME.match(entry.name) or ".." in entry.name:
                raise refused(repr(entry.name), "not a plain file name")
            out.append(Path(entry.path))
    return out


def _head(path: Path, n: int = 100) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        return os.read(fd, n)
    finally:
        os.close(fd)


def check_magic(path: Path) -> str:
    """The output's kind after its first bytes matched its suffix."""
    kind = KINDS[path.suffix.lower()]
    head = _head(path)
    if kind == "raster" and head[:4] not in TIFF_MAGIC:
        raise refused(path.name, "not a GeoTIFF (its content is another format, e.g. a GDAL VRT)")
    if kind == "vector":
        if head[:16] != SQLITE_MAGIC or head[68:72] != GPKG_APPLICATION_ID:
            raise refused(path.name, "not a GeoPackage (its content is another format, e.g. an OGR VRT)")
        check_gpkg_schema(path)
    if kind in ("table", "text") and b"\x00" in head:
        raise refused(path.name, "not a text file")
    return kind


def check_gpkg_schema(path: Path) -> None:
    """Only tables, indexes and R*Tree spatial indexes: no view or trigger (stored SQL), no other
    virtual table; read with SQLite alone (immutable, read-only: no journal or WAL file is opened)."""
    db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        rows = db.execute("SELECT type, name, coalesce(sql, '') FROM sqlite_master").fetchall()
    except sqlite3.DatabaseError as exc:
        raise refused(path.name, f"not a readable GeoPackage ({exc})") from None
    finally:
        db.close()
    for kind, name, sql in rows:
        if kind not in ("table", "index"):
            raise refused(path.name, f"the GeoPackage holds a {kind} ({name}); only tables are accepted")
        if "VIRTUAL" in sql.upper() and not re.search(r"\bUSING\s+rtree\s*\(", sql, re.IGNORECASE):
            raise refused(path.name, f"the GeoPackage holds a virtual table ({name})")


def open_geotiff(path: Path) -> Any:
    """A GeoTIFF opened with the GTiff driver only; it must be that one file (no sidecar, no source)."""
    import rasterio

    try:
        src = rasterio.open(path, driver="GTiff")
    except rasterio.errors.RasterioIOError as exc:
        raise refused(path.name, f"not a readable GeoTIFF ({str(exc).splitlines()[0][:200]})") from None
    if [os.path.realpath(f) for f in src.files] != [os.path.realpath(path)]:
        src.close()
        raise refused(path.name, "the GeoTIFF refers to other files")
    if src.crs is None:
        src.close()
        raise refused(path.name, "it has no CRS (save it with a grid)")
    return src


def vet(folder: Path) -> list[tuple[Path, str]]:
    """The parent's check of the clean folder: ``(path, kind)`` of every output, or ToolFailed."""
    import rasterio

    checked = []
    for path in candidates(folder):
        kind = check_magic(path)
        if kind == "raster":
            with rasterio.Env(**SAFE_GDAL), open_geotiff(path):
                pass
        checked.append((path, kind))
    return checked


def convert(out_dir: Path, clean_dir: Path) -> list[str]:
    """In the confined converter: rewrite every output of ``out_dir`` into ``clean_dir`` from its data."""
    import rasterio

    from .grid import grid_of
    from .io import write_cog

    done = []
    for path in candidates(out_dir):
        kind = check_magic(path)
        target = clean_dir / path.name
        if kind == "raster":
            with rasterio.Env(**SAFE_GDAL), open_geotiff(path) as src:
                layers = [src.read(i) for i in range(1, src.count + 1)]
                names = [d or f"band{i}" for i, d in enumerate(src.descriptions, start=1)]
                write_cog(
                    layers,
                    grid_of(src),
                    target,
                    dtype=src.dtypes[0],
                    nodata=src.nodata,
                    band_names=names,
                    tags=src.tags(),
                )
        elif kind == "vector":
            import pyogrio

            layers = pyogrio.list_layers(path)
            if len(layers) != 1:
                raise refused(path.name, f"a GeoPackage output must hold one layer, not {len(layers)}")
            gdf = pyogrio.read_dataframe(path, layer=str(layers[0][0]))
            if gdf.crs is None:
                raise refused(path.name, "it has no CRS")
            gdf.to_file(target, driver="GPKG", layer=target.stem, engine="pyogrio")
        elif kind == "table":
            import pandas as pd

            pd.read_csv(path).to_csv(target, index=False)
        else:
            target.write_text(path.read_bytes().decode("utf-8", errors="replace"), encoding="utf-8")
        done.append(target.name)
    return done
