"""The one door the user's files come in through: every file a user gives (``--layer``, ``--aoi``, the
batch's ``--inputs``, a project layer the dock wrote out, a Processing input) is checked here before any
reader opens it, and opened with the drivers its format allows.

GDAL picks a driver by a file's content, not its name: a GDAL VRT saved as ``elevation.tif`` (or an OGR
VRT as ``roads.geojson``) makes the reader open whatever it points to (``/proc/self/environ``, any file,
a ``/vsicurl/`` URL) and copy it into the session. So :func:`check_user_file`:

- refuses GDAL's virtual paths (``/vsicurl/``, ``/vsizip/`` ... every ``/vsi`` prefix), URLs and GDAL
  connection strings (``PG:``, ``WFS:``): GeoFaham opens local files only;
- resolves symbolic links and refuses one that leads out of the input folder (the folder given, else the
  folder the path names), and the same for the companion files a reader opens beside it (a shapefile's
  ``.dbf``, a GeoTIFF's ``.ovr``);
- refuses named pipes (FIFOs), devices, sockets and folders: only regular files (a FIFO would hang the read);
- chooses the format from the extension, among an allow-list (:data:`FORMATS`: GeoTIFF/COG, GeoPackage,
  GeoJSON, Shapefile, FlatGeobuf, GeoParquet, CSV, KML/KMZ), and verifies it by the file's signature (its
  first bytes); a file holding a GDAL virtual-dataset description (VRT, OGR VRT, WFS, WMS) is refused
  whatever its name.

The readers then open the file with its format's drivers only (:func:`check_driver`, :func:`open_user_raster`).
:func:`gdal_offline` turns GDAL's network access off for the whole process while an offline run goes on, and
:func:`gdal_network` for good in GeoFaham's own process (the command line).
Every refusal is one :class:`ToolFailed` line with a hint."""

from __future__ import annotations

import os
import re
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ToolFailed

if TYPE_CHECKING:
    from rasterio.io import DatasetReader

InputKind = Literal["vector", "raster"]

TIFF_MAGIC = (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")
SQLITE_MAGIC = b"SQLite format 3\x00"
GPKG_APPLICATION_IDS = (b"GPKG", b"GP10", b"GP11")  # the GeoPackage's SQLite application_id (offset 68)
#: the start of a GDAL dataset description that points at other files or URLs; GDAL's drivers find these
#: anywhere in a file's first bytes, whatever its name, so a file holding one is refused
POINTER_MARKERS = (
    b"<vrtdataset",
    b"<ogrvrtdatasource",
    b"<ogrwfsdatasource",
    b"<gdal_wms",
    b"<gdal_wcs",
    b"<wcs_gdal",
    b"<wfs_capabilities",
    b"<wms_capabilities",
    b"<wmt_ms_capabilities",
)
HEAD_BYTES = 65_536  # how much of a file its signature and the pointer markers are looked for in
#: GDAL settings for every open of a file GeoFaham did not write: no network, no external access from SQLite
UNTRUSTED_GDAL = {
    "CPL_VSIL_CURL_ALLOWED_EXTENSIONS": ".none",
    "GDAL_HTTP_TIMEOUT": "1",
    "OGR_SQLITE_ALLOW_EXTERNAL_ACCESS": "NO",
}


class InputFormat(BaseModel):
    """One format GeoFaham reads from the user: its extensions and the GDAL drivers allowed to open it (none
    for the formats read without GDAL: GeoParquet with pyarrow, CSV with pandas)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: InputKind
    suffixes: tuple[str, ...]
    drivers: tuple[str, ...] = ()
    companions: bool = False  # read with files beside it (a shapefile's .dbf, a GeoTIFF's .ovr, a GeoPackage's -wal)


#: the allow-list, in the order the hints name them
FORMATS: tuple[InputFormat, ...] = (
    InputFormat(
        name="GeoTIFF", kind="raster", suffixes=(".tif", ".tiff"), drivers=("GTiff",), companions=True
    ),  # COG is GTiff
    InputFormat(name="GeoPackage", kind="vector", suffixes=(".gpkg",), drivers=("GPKG",), companions=True),
    InputFormat(
        name="GeoJSON",
        kind="vector",
        suffixes=(".geojson", ".json"),
        drivers=("GeoJSON", "GeoJSONSeq", "ESRIJSON", "TopoJSON"),  # JSON text, all of them
    ),
    InputFormat(
        name="Shapefile", kind="vector", suffixes=(".shp", ".dbf"), drivers=("ESRI Shapefile",), companions=True
    ),
    InputFormat(name="FlatGeobuf", kind="vector", suffixes=(".fgb",), drivers=("FlatGeobuf",)),
    InputFormat(name="GeoParquet", kind="vector", suffixes=(".parquet", ".geoparquet")),
    InputFormat(name="CSV", kind="vector", suffixes=(".csv", ".tsv")),
    InputFormat(name="KML", kind="vector", suffixes=(".kml",), drivers=("LIBKML", "KML")),
    InputFormat(name="KMZ", kind="vector", suffixes=(".kmz",), drivers=("LIBKML", "KML")),
)
BY_SUFFIX: dict[str, InputFormat] = {s: f for f in FORMATS for s in f.suffixes}
RASTER_SUFFIXES = tuple(s for f in FORMATS if f.kind == "raster" for s in f.suffixes)
VECTOR_SUFFIXES = tuple(s for f in FORMATS if f.kind == "vector" for s in f.suffixes)
ALLOWED_HINT = (
    "give a GeoTIFF (.tif), GeoPackage (.gpkg), GeoJSON (.geojson), Shapefile (.shp), FlatGeobuf (.fgb), "
    "GeoParquet (.parquet), CSV (.csv) or KML/KMZ (.kml, .kmz) file"
)
EXPORT_HINT = (
    "export it to a real file first (gdal_translate in.vrt out.tif, ogr2ogr out.gpkg in.vrt, or Export in QGIS) "
    "and give that file"
)
LOCAL_HINT = "download the file (or unpack the archive) and give the path of the file on disk"
#: GDAL's virtual file systems (/vsicurl/, /vsizip/ ...), URLs (http://, file:/ once a path collapsed its //) and
#: connection strings (PG:, WFS:, GPKG:file:table): never a user's file
_REMOTE = re.compile(r"^(?:/vsi[A-Za-z0-9_]*(?:/|$)|[A-Za-z][A-Za-z0-9+.-]*:/|[A-Z][A-Z0-9_]*:)")


class CheckedFile(BaseModel):
    """A user's file that passed :func:`check_user_file`: open ``path`` (links resolved), with ``format``'s
    drivers; ``notes`` say what was noticed on the way (a link followed inside the folder)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    given: str
    path: Path
    format: InputFormat
    notes: list[str] = Field(default_factory=list)

    @property
    def name(self) -> str:
        return Path(self.given).name


def refused(message: str, hint: str, kind: str = "invalid_input") -> ToolFailed:
    return ToolFailed(message, kind=kind, hint=hint)


def is_remote(text: str) -> bool:
    """A GDAL virtual path (``/vsi...``), a URL or a connection string rather than a local file name."""
    return bool(_REMOTE.match(text.strip())) and not re.match(r"^[A-Za-z]:[\\/]", text.strip())  # C:\ is a disk


def _special(mode: int) -> str | None:
    """What a file that is not a regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _inside(real: Path, folder: Path) -> bool:
    return real == folder or folder in real.parents


def _resolve_inside(path: Path, folder: Path, shown: str) -> tuple[Path, list[str]]:
    """``path`` with its links resolved, refused when that leaves ``folder`` (already resolved) or is no
    regular file; a note when a link was followed."""
    try:
        real = path.resolve(strict=True)
    except FileNotFoundError:
        if path.is_symlink():
            raise refused(
                f"{shown} is a link to a file that does not exist ({os.readlink(path)})",
                "give the file itself, not a link",
                "not_found",
            ) from None
        raise refused(f"no such file: {path}", ALLOWED_HINT, "not_found") from None
    except (OSError, RuntimeError) as exc:  # a loop of links, a folder that cannot be read
        why = getattr(exc, "strerror", None) or str(exc)
        raise refused(f"cannot open {shown}: {why}", "give the file itself, not a link") from None
    notes: list[str] = []
    if real != path:
        if not _inside(real, folder):
            raise refused(
                f"{shown} is a link to {real}, outside the input folder {folder}",
                "copy the file into the folder, or give its real path",
            )
        if path.is_symlink():
            notes.append(f"{shown} is a link: read {real.relative_to(folder)}")
    what = _special(os.stat(real).st_mode)
    if what is not None:
        raise refused(f"{shown} is {what}, not a file", "give a file saved on disk")
    return real, notes


def _read_head(path: Path, shown: str) -> bytes:
    """The file's first bytes; opened without blocking and checked to be a regular file once open (a file
    swapped for a FIFO after the check does not hang the read)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise refused(f"cannot open {shown}: {exc.strerror}", "check the file's permissions") from None
    try:
        what = _special(os.fstat(fd).st_mode)
        if what is not None:
            raise refused(f"{shown} is {what}, not a file", "give a file saved on disk")
        return os.read(fd, HEAD_BYTES)
    finally:
        os.close(fd)


def _pointer(head: bytes) -> str | None:
    lower = head.lower()
    marker = next((m for m in POINTER_MARKERS if m in lower), None)
    if marker is None:
        return None
    if marker == b"<vrtdataset":
        return "a GDAL virtual raster (VRT), which reads other files or URLs"
    if marker == b"<ogrvrtdatasource":
        return "an OGR virtual layer (OGR VRT), which reads other files or URLs"
    return "a GDAL description of a web service, which reads URLs"


def _text_start(head: bytes) -> bytes:
    return head.removeprefix(b"\xef\xbb\xbf").lstrip()


def _signature_ok(fmt: InputFormat, suffix: str, head: bytes) -> bool:
    if fmt.name == "GeoTIFF":
        return head[:4] in TIFF_MAGIC
    if fmt.name == "GeoPackage":
        return head[:16] == SQLITE_MAGIC and head[68:72] in GPKG_APPLICATION_IDS
    if fmt.name == "GeoJSON":
        return _text_start(head)[:1] in (b"{", b"\x1e")  # an object, or a GeoJSON text sequence
    if fmt.name == "Shapefile":
        if suffix == ".dbf":  # a dBase table: its version byte
            return bool(head) and head[0] in (0x02, 0x03, 0x04, 0x05, 0x30, 0x31, 0x32, 0x43, 0x83, 0x8B, 0xCB, 0xF5)
        return head[:4] == b"\x00\x00\x27\x0a"  # the file code 9994
    if fmt.name == "FlatGeobuf":
        return head[:3] == b"fgb" and head[4:7] == b"fgb"
    if fmt.name == "GeoParquet":
        return head[:4] == b"PAR1"
    if fmt.name == "CSV":
        return b"\x00" not in head
    if fmt.name == "KML":
        return _text_start(head)[:1] == b"<" and re.search(rb"<(?:[\w-]+:)?kml\b", head) is not None
    if fmt.name == "KMZ":
        return head[:4] == b"PK\x03\x04"
    return False


def _companions(real: Path, folder: Path, shown: str, fmt: InputFormat) -> None:
    """The files a reader opens beside ``real`` (same name, another extension: a shapefile's .shx, .dbf, .prj,
    .cpg; a GeoTIFF's .ovr, .msk, .aux.xml, world file) must be regular files inside the folder, and none may be
    a GDAL virtual dataset (GDAL opens a GeoTIFF's .ovr or .msk with any driver)."""
    if not fmt.companions:
        return
    stem = real.stem.lower()
    try:
        entries = list(os.scandir(real.parent))
    except OSError:
        return
    for entry in entries:
        name = entry.name.lower()
        if entry.path == str(real) or not name.startswith(stem + "."):
            continue
        companion, _ = _resolve_inside(Path(entry.path), folder, f"{entry.name} (beside {shown})")
        head = _read_head(companion, entry.name)
        what = _pointer(head)
        overview = fmt.kind == "raster" and name.rsplit(".", 1)[-1] in ("ovr", "msk")
        if what is None and overview and head[:4] not in TIFF_MAGIC:
            what = "not a GeoTIFF"
        if what is not None:
            raise refused(
                f"{entry.name} beside {shown} is {what}: {shown} not read",
                f"remove {entry.name} from the folder, or {EXPORT_HINT}",
            )


def check_user_file(
    path: str | Path, *, folder: str | Path | None = None, kind: InputKind | None = None
) -> CheckedFile:
    """The one check of a user's file before anything opens it (see the module docstring). ``folder``: the
    input folder links and companions must stay in (default: the folder ``path`` names); ``kind``: the kind of
    data expected (a raster, a vector layer), None for either. One :class:`ToolFailed` with a hint per refusal."""
    text = str(path)
    if is_remote(text) and not Path(text).expanduser().exists():
        raise refused(f"{text}: GeoFaham opens local files only, not network or archive paths", LOCAL_HINT)
    given = Path(text).expanduser()
    shown = given.name or text
    absolute = Path(os.path.abspath(given))
    base = Path(os.path.abspath(Path(folder).expanduser())) if folder is not None else absolute.parent
    base_real = base.resolve()
    if not os.path.lexists(absolute):
        raise refused(f"no such file: {given}", ALLOWED_HINT, "not_found")
    real, notes = _resolve_inside(absolute, base_real, shown)
    suffix = given.suffix.lower()
    fmt = BY_SUFFIX.get(suffix)
    expected = kind or (fmt.kind if fmt else None)
    reading = "a raster" if expected == "raster" else "a vector layer" if expected == "vector" else "a layer"
    if fmt is None or (kind is not None and fmt.kind != kind):
        why = (
            "GeoFaham does not open virtual datasets (.vrt), which read other files or URLs"
            if suffix == ".vrt"
            else (f"'{suffix}' is not a format" if suffix else "a name without an extension names no format")
            + " GeoFaham reads"
            + (f" as {reading}" if fmt is not None else "")
        )
        raise refused(
            f"cannot read {shown} as {reading}: {why}",
            EXPORT_HINT if suffix == ".vrt" else "give a GeoTIFF (.tif)" if kind == "raster" else ALLOWED_HINT,
        )
    head = _read_head(real, shown)
    pointer = _pointer(head)
    if pointer is not None or not _signature_ok(fmt, suffix, head):
        raise refused(
            f"cannot read {shown} as {reading}: its content is {pointer or f'not {fmt.name}'}",
            EXPORT_HINT
            if pointer
            else f"give a real {fmt.name} file ({', '.join(fmt.suffixes)}), or rename it to "
            "the extension of its format",
        )
    _companions(real, base_real, shown, fmt)
    return CheckedFile(given=text, path=real, format=fmt, notes=notes)


#: the tables a user gives beside a layer (a mapping of values), read with Python's own readers, never GDAL
TABLE_SUFFIXES = (".csv", ".tsv", ".json")


def check_user_table(path: str | Path, *, folder: str | Path | None = None) -> Path:
    """A table the user gives beside a layer (a CSV or JSON mapping of values), checked as :func:`check_user_file`
    checks a layer (a local regular file, links kept inside ``folder``, default the folder ``path`` names; its
    text read without blocking); returns the path to open, links resolved."""
    text = str(path)
    given = Path(text).expanduser()
    shown = given.name or text
    if is_remote(text) and not given.exists():
        raise refused(f"{text}: GeoFaham opens local files only, not network or archive paths", LOCAL_HINT)
    if given.suffix.lower() not in TABLE_SUFFIXES:
        raise refused(f"cannot read {shown} as a table", "give a CSV (.csv, .tsv) or JSON (.json) file")
    absolute = Path(os.path.abspath(given))
    base = Path(os.path.abspath(Path(folder).expanduser())) if folder is not None else absolute.parent
    if not os.path.lexists(absolute):
        raise refused(f"no such file: {given}", "give a CSV (.csv, .tsv) or JSON (.json) file", "not_found")
    real, _ = _resolve_inside(absolute, base.resolve(), shown)
    if b"\x00" in _read_head(real, shown):
        raise refused(f"cannot read {shown} as a table: it is not text", "give a CSV or JSON file saved as text")
    return real


def check_driver(checked: CheckedFile, driver: str) -> None:
    """Refuse a file GDAL opened with a driver its format does not allow."""
    if checked.format.drivers and driver not in checked.format.drivers:
        raise refused(
            f"cannot read {checked.name} as {checked.format.name}: GDAL reads it as {driver}",
            f"give a real {checked.format.name} file",
        )


def open_user_raster(checked: CheckedFile) -> DatasetReader:
    """A checked raster opened with its format's drivers only; it may use no file outside its folder."""
    import rasterio

    with rasterio.Env(**UNTRUSTED_GDAL):
        try:
            src = rasterio.open(checked.path, driver=checked.format.drivers[0])  # GeoTIFF: GTiff alone
        except rasterio.errors.RasterioIOError as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            raise refused(f"cannot read {checked.name} as a raster: {first}", ALLOWED_HINT) from None
    outside = [f for f in src.files if not _inside(Path(f).resolve(), checked.path.parent)]
    if outside:
        src.close()
        raise refused(f"{checked.name} refers to files outside its folder ({outside[0]})", EXPORT_HINT)
    return src


# ------------------------------------------------------------------------------------------- network
#: GDAL settings while offline: the network file systems (/vsicurl/, /vsis3/, ... all check the allowed
#: extensions first) open nothing, and whatever fetches URLs itself (CPLHTTPFetch: GeoJSON URLs, WFS, WMS)
#: goes to a closed local port through a proxy, at once; PROJ fetches no grid
OFFLINE_GDAL = {
    "CPL_VSIL_CURL_ALLOWED_EXTENSIONS": ".geofaham-offline",
    "GDAL_HTTP_PROXY": "127.0.0.1:9",
    "GDAL_HTTPS_PROXY": "127.0.0.1:9",
    "GDAL_HTTP_MAX_RETRY": "0",
    "GDAL_HTTP_CONNECTTIMEOUT": "1",
    "GDAL_HTTP_TIMEOUT": "1",
    "PROJ_NETWORK": "OFF",
}
#: what GeoFaham changed to go offline: option -> (its environment variable, GDAL's value) before
_saved: dict[str, tuple[str | None, Any]] = {}
_network_lock = threading.Lock()
_offline_runs = 0  # offline runs going on in this process (:func:`gdal_offline` scopes)
_offline_process = False  # the whole process offline for good (:func:`gdal_network`: the command line)
_offline_now = False  # OFFLINE_GDAL applied by this module


def _gdal_config() -> tuple[Any, Any]:
    try:
        import pyogrio

        return pyogrio.get_gdal_config_option, pyogrio.set_gdal_config_options
    except ImportError:  # pragma: no cover - a Python without pyogrio: the environment only
        return (lambda _key: None), (lambda _options: None)


def _as_text(config: Any) -> str:
    """A GDAL option's value as GDAL takes it (pyogrio reads ON/OFF back as True/False, digits as a number)."""
    return ("ON" if config else "OFF") if isinstance(config, bool) else str(config)


def _same(env: str | None, config: Any, value: str) -> bool:
    if env != value or config is None:
        return False
    if isinstance(config, bool):
        return config == (value.upper() in ("ON", "YES", "TRUE", "1"))
    return str(config) == value


def _apply_network() -> None:
    """Offline while a run is offline or the process is; back to exactly what was there when neither is. Only the
    options GeoFaham changes are saved and given back: one already at its offline value (the user's own setting,
    or set by a second copy of GeoFaham in the process: the QGIS plugin and its core imported under another
    name) is left to whoever set it. Called with the lock held."""
    global _offline_now
    get_config, set_config = _gdal_config()
    wanted = _offline_process or _offline_runs > 0
    if wanted and not _offline_now:
        changed = {}
        for key, value in OFFLINE_GDAL.items():
            env, config = os.environ.get(key), get_config(key)
            if _same(env, config, value):
                continue
            _saved[key] = (env, config)
            os.environ[key] = value
            changed[key] = value
        set_config(changed)
        _offline_now = True
    elif not wanted and _offline_now:
        for key, (env, config) in _saved.items():
            if env is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = env
            # GDAL's value came from its own settings (QGIS sets a proxy there) unless it was the environment's
            own = config is not None and (env is None or (_as_text(config) != env and str(config) != env))
            set_config({key: _as_text(config) if own else None})
        _saved.clear()
        _offline_now = False


def gdal_network(offline: bool) -> None:
    """GeoFaham's own process (the command line) offline for good when ``offline``, its network access given back
    when not (an offline run going on in another thread keeps it off until it ends). GDAL's settings go to the
    environment, which every GDAL in the process and every child reads, and to GDAL's global settings."""
    global _offline_process
    with _network_lock:
        _offline_process = offline
        _apply_network()


@contextmanager
def gdal_offline(offline: bool = True) -> Iterator[None]:
    """GDAL's network access off for the whole process while the block runs, when ``offline`` (an orchestrator's
    run: inside QGIS the process is QGIS's, whose own layers may read from the network once the run is over).
    Nested and concurrent blocks are counted: the last one out gives the network back."""
    global _offline_runs
    if not offline:
        yield
        return
    with _network_lock:
        _offline_runs += 1
        _apply_network()
    try:
        yield
    finally:
        with _network_lock:
            _offline_runs -= 1
            _apply_network()
