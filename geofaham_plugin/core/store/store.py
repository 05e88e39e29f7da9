"""The Response Store: one folder per session, one file per artifact, one sqlite index.

Layout::

    <session>/store.sqlite                 index (one row per artifact, metadata as JSON)
    <session>/artifacts/<id>.<ext>         artifact files (GeoPackage, COG, JSON, Markdown)
    <session>/artifacts/<id>.record.json   the artifact's record beside it (its "sidecar"): all the
                                           index row holds, fingerprint included
    <session>/.staging/                    files being written; never referenced by a record
    <session>/quarantine/                  damaged or unexplained files, set aside (never deleted)

The sidecars are the truth, the index is a cache of them: an index that is missing, empty or
damaged is rebuilt from the sidecars on the next open (a damaged one is moved to ``quarantine/``
first), so losing it loses no artifact and every id a run record cites still resolves.

Crash safety rests on one ordering: file written completely in ``.staging`` and fsynced, metadata
and fingerprint computed from that file, the sidecar written atomically into ``artifacts/``, the file
moved there with ``os.replace``, directory fsynced, and only THEN the record inserted in one sqlite
transaction (``synchronous=FULL``). A crash before the move leaves at most a staged file (deleted on
the next open: its registration never returned) and a sidecar without file (set aside); a crash
after it leaves a complete file with its sidecar, which the next open re-indexes. Files without a
valid sidecar, and files that no longer match their fingerprint, are set aside in ``quarantine/``,
never deleted; :attr:`ResponseStore.notes` says, in one line each, what was rebuilt or set aside.

Before an artifact is reused (the orchestrator's memo), :meth:`ResponseStore.verify` checks that its
file opens and matches the fingerprint taken when it was written (``integrity.py``); a damaged one is
quarantined and computed again.

Big vector artifacts (:data:`BACKGROUND_MIN_FEATURES` features or more, with columns of types a GeoPackage
gives back unchanged) are written in the background: ``register_vector`` returns the record at once (metadata
from the frame) and one writer thread takes the same crash-safe path; until its row is inserted the artifact is
*pending*: :meth:`ResponseStore.get` and ``in`` know it, :meth:`ResponseStore.read_vector` serves its frame from
memory, and whatever needs its file (:meth:`ResponseStore.abs_path`, :meth:`ResponseStore.verify`) or the whole
index (listings) waits for the write. :meth:`ResponseStore.flush` waits for every pending write (the orchestrator
flushes before it saves a run record; :meth:`ResponseStore.close` does too). The writer checks that the file holds
exactly the frame that was served (same content fingerprint); if not, later reads come from the file and
:attr:`ResponseStore.notes` says so.

Vector frames just written or read are kept in memory (an LRU bounded by an estimate of their bytes,
:data:`CACHE_BYTES`: a quarter of the machine's memory, at least 768 MiB), so the next step does not read the
GeoPackage again; every read returns a copy.

Test hook: the environment variable ``GEOFAHAM_STORE_CRASH_AT`` (``staged`` | ``moved``, read through
``config.TestHooks`` at each registration) makes the process ``os._exit(86)`` right after the staged
file is written, or right after it was moved into ``artifacts/`` but before the record insert. It
exists only for the crash tests.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import sqlite3
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from ..config import ComputeSettings, TestHooks
from ..domain.files import atomic_write_text, fsync_dir, fsync_file, lock, set_aside, try_lock
from ..errors import FOLDER_HINT, GeoFahamError, InputError
from .describe import raster_metadata, table_metadata, text_metadata, to_utc, vector_metadata
from .integrity import ArtifactDamaged, fingerprint, frame_digest, vector_fingerprint
from .integrity import verify as verify_file
from .models import ArtifactKind, ArtifactMeta, ArtifactRecord, Bounds, ItemSetMeta

log = logging.getLogger(__name__)

INDEX_FILE = "store.sqlite"
SIDECAR_SUFFIX = ".record.json"
QUARANTINE_DIR = "quarantine"
CRASH_ENV = TestHooks.env_of("store_crash_at")
CRASH_EXIT_CODE = 86
_VECTOR_KINDS = (ArtifactKind.vector, ArtifactKind.aoi)
#: vector artifacts of at least this many features are written in the background (see the module docstring)
BACKGROUND_MIN_FEATURES = 10_000


#: the in-memory frame cache's bound, in (estimated) bytes
def _cache_bytes() -> int:
    """768 MiB, or a quarter of the machine's memory when that is more (a 3·10^6-building layer takes about
    1.5 GB in memory: above the floor it would be read from its file at every step)."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not on POSIX
        physical = 0
    return max(768 * 2**20, physical // 4)


CACHE_BYTES = _cache_bytes()
#: GDAL's block cache while a raster is copied into the store as a COG (see register_raster_file)
COPY_CACHE_MB = 256

_SCHEMA = """
CREATE TABLE IF NOT EXISTS artifacts (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    kind       TEXT NOT NULL,
    source     TEXT NOT NULL,
    summary    TEXT NOT NULL,
    path       TEXT NOT NULL,
    metadata   TEXT NOT NULL,
    inputs     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    extra      TEXT NOT NULL,
    fingerprint TEXT
)
"""
_COLUMNS = "id, kind, source, summary, path, metadata, inputs, created_at, extra, fingerprint"


class UnknownArtifact(GeoFahamError, KeyError):
    """No artifact with that id in this session (typically a model inventing one). Also a
    ``KeyError`` so mapping-style callers work; ``str()`` is the plain message, fit for a hint."""

    def __init__(self, artifact_id: str, known: Sequence[str] = ()) -> None:
        shown = ", ".join(known[-10:]) if known else "none yet"
        super().__init__(f"Unknown artifact id {artifact_id!r}. Known ids (latest): {shown}.")
        self.artifact_id = artifact_id

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class StoreDamaged(GeoFahamError):
    """The session's index is damaged while another process uses the session, so it cannot be rebuilt
    now. ``str()`` is one line with the hint."""


def _crash_point(name: str) -> None:
    """Test-only: die without cleanup at a named point (see module docstring)."""
    if TestHooks.from_env().store_crash_at == name:
        os._exit(CRASH_EXIT_CODE)


def _unlink_quiet(path: Path) -> None:
    try:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        pass


def _write_table(df: pd.DataFrame, path: Path) -> None:
    """JSON table schema (pandas ``orient="table"``) plus the exact dtypes, so int32, bool, str and
    tz-aware datetimes come back as they went in; one file keeps the atomic move trivial."""
    table = json.loads(df.to_json(orient="table", index=False, date_format="iso"))
    doc = {"dtypes": {str(c): str(t) for c, t in df.dtypes.items()}, "table": table}
    path.write_text(json.dumps(doc), encoding="utf-8")


def _read_table(path: Path) -> pd.DataFrame:
    from io import StringIO

    doc = json.loads(path.read_text(encoding="utf-8"))
    df = pd.read_json(StringIO(json.dumps(doc["table"])), orient="table")
    for col, dtype in doc["dtypes"].items():
        with contextlib.suppress(TypeError, ValueError):  # e.g. object columns of mixed values: keep what JSON gave
            df[col] = df[col].astype(dtype)
    return df


def _item_set_meta(items: list[dict], meta: ItemSetMeta) -> ItemSetMeta:
    """The caller's item-set facts (collection, coverage) with the countable ones taken from the
    items themselves: count always, bbox and time range when the caller left them out."""
    update: dict[str, Any] = {"item_count": len(items)}
    boxes = [i["bbox"] for i in items if isinstance(i.get("bbox"), (list, tuple)) and len(i["bbox"]) >= 4]
    if meta.bounds_4326 is None and boxes:
        update["bounds_4326"] = Bounds(
            minx=min(b[0] for b in boxes),
            miny=min(b[1] for b in boxes),
            maxx=max(b[-2] for b in boxes),
            maxy=max(b[-1] for b in boxes),
        )
    props = [i.get("properties") or {} for i in items]
    stamps = [t for p in props for k in ("datetime", "start_datetime", "end_datetime") if (t := to_utc(p.get(k)))]
    if meta.time_start is None and stamps:
        update["time_start"] = min(stamps)
    if meta.time_end is None and stamps:
        update["time_end"] = max(stamps)
    return meta.model_copy(update=update)


def _times(meta: Any) -> tuple[datetime | None, datetime | None]:
    start = getattr(meta, "time_start", None) or getattr(meta, "time", None)
    end = getattr(meta, "time_end", None) or getattr(meta, "time", None)
    return to_utc(start), to_utc(end)


def _frame_bytes(gdf: Any) -> int:
    """An estimate of a GeoDataFrame's memory (numeric columns exactly; object columns and geometries from a
    sample of rows): cheap enough to take at every cache insert."""
    import numpy as np
    import shapely

    n = len(gdf)
    if n == 0:
        return 1024
    sample = gdf.iloc[np.linspace(0, n - 1, min(n, 1000)).astype(int)]
    total = 0
    for name, col in gdf.items():
        if name == gdf.geometry.name:
            geoms = np.asarray(sample[name].values)
            coords = shapely.get_num_coordinates(geoms).sum()
            total += int((len(geoms) * 200 + coords * 24) * n / len(geoms))  # GEOS object + coordinates
        elif col.dtype == object:
            total += int(sample[name].memory_usage(deep=True, index=False) * n / len(sample))
        else:
            total += int(col.memory_usage(deep=False, index=False))
    return total


class _FrameCache:
    """Vector frames by artifact id, least recently used dropped first, bounded by estimated bytes. Frames
    of pending artifacts are pinned (their file does not exist yet). Thread-safe."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._frames: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._pinned: set[str] = set()
        self._bytes = 0
        self._lock = threading.Lock()

    def put(self, artifact_id: str, gdf: Any, *, pin: bool = False) -> None:
        size = _frame_bytes(gdf)
        with self._lock:
            self._drop(artifact_id)
            if size > self.max_bytes and not pin:
                return
            self._frames[artifact_id] = (gdf, size)
            self._bytes += size
            if pin:
                self._pinned.add(artifact_id)
            for old in [k for k in self._frames if k not in self._pinned]:
                if self._bytes <= self.max_bytes:
                    break
                self._drop(old)

    def unpin(self, artifact_id: str) -> None:
        with self._lock:
            self._pinned.discard(artifact_id)

    def get(self, artifact_id: str, bbox: tuple[float, float, float, float] | None = None) -> Any:
        """A copy of the cached frame (callers may change theirs), or None; with ``bbox``, of its features whose
        box meets it (and those without geometry left out)."""
        with self._lock:
            found = self._frames.get(artifact_id)
            if found is None:
                return None
            self._frames.move_to_end(artifact_id)
        if bbox is None:
            return found[0].copy()
        return found[0][_meets(found[0], bbox)]  # a new frame of its own

    def discard(self, artifact_id: str) -> None:
        with self._lock:
            self._drop(artifact_id)

    def _drop(self, artifact_id: str) -> None:
        found = self._frames.pop(artifact_id, None)
        if found is not None:
            self._bytes -= found[1]
        self._pinned.discard(artifact_id)


def _background_priority() -> None:
    """The writer thread yields the CPU to the steps (and the answer) that wait for nothing it writes: a lower
    priority for this thread alone (Linux schedules threads apart; elsewhere nothing changes)."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


def _meets(gdf: Any, bbox: tuple[float, float, float, float]) -> Any:
    """Which features' boxes meet ``bbox`` (minx, miny, maxx, maxy; missing and empty geometries: none)."""
    import shapely

    b = shapely.bounds(gdf.geometry.to_numpy())
    return (b[:, 2] >= bbox[0]) & (b[:, 0] <= bbox[2]) & (b[:, 3] >= bbox[1]) & (b[:, 1] <= bbox[3])


#: features per pyogrio call when a big layer is written: pyogrio holds the GIL for a whole call (GDAL 3.6 writes and
#: indexes row by row: 10^6 points held it 34 s, stopping the steps' thread and QGIS's main thread alike)
WRITE_CHUNK = 20_000


def write_gpkg(gdf: Any, path: Path, layer: str, turn: Callable[[], None] | None = None) -> None:
    """Write ``gdf`` as GeoPackage ``layer`` with its spatial index. A big layer is written in chunks without an
    index (``turn``, when given, is called before each: it may wait), then indexed by GDAL through its own bindings,
    which let other threads run; without those bindings, in one call."""
    import pyogrio

    try:
        from osgeo import gdal, ogr
    except ImportError:  # pragma: no cover - GDAL's Python bindings come with QGIS and the project's set-up
        ogr = None
    if len(gdf) <= WRITE_CHUNK or ogr is None:
        gdf.to_file(path, driver="GPKG", layer=layer, engine="pyogrio")
        return
    for start in range(0, len(gdf), WRITE_CHUNK):
        if turn is not None:
            turn()
        part = gdf.iloc[start : start + WRITE_CHUNK]
        pyogrio.write_dataframe(part, path, layer=layer, driver="GPKG", append=start > 0, SPATIAL_INDEX="NO")
    ds = ogr.Open(str(path), update=1)  # (GDAL's exception mode left as QGIS has it: results checked instead)
    found = ds.GetLayerByName(layer) if ds is not None else None
    if found is None:
        raise OSError(f"{path.name}: layer {layer} not found after writing it ({gdal.GetLastErrorMsg()})")
    column = found.GetGeometryColumn()
    for sql in (f"SELECT CreateSpatialIndex('{layer}', '{column}')", f"SELECT HasSpatialIndex('{layer}', '{column}')"):
        result = ds.ExecuteSQL(sql)  # nosec B608 (our own ids: a_<hex> and the geometry column)
        indexed = result is not None and result.GetNextFeature().GetField(0) == 1
        if result is not None:
            ds.ReleaseResultSet(result)
    ds = None  # closes the file
    if not indexed:
        raise OSError(f"{path.name}: the spatial index of {layer} could not be made ({gdal.GetLastErrorMsg()})")


def _round_trips(gdf: Any) -> bool:
    """Whether a GeoPackage gives this frame back unchanged (so a pending artifact's frame can be served before
    its file is read back): an unnamed integer index (served as 0, 1, 2 ...), and only bool, int64, int32, float64 and text columns (object columns
    of str or None). Dates, categories, nullable and mixed columns take the synchronous path."""
    import pandas as pd

    if gdf.index.name is not None or not pd.api.types.is_integer_dtype(gdf.index.dtype):
        return False  # written as a column (an unnamed integer index is not written: read back 0, 1, 2 ...)
    if list(gdf.columns).count(gdf.geometry.name) != 1 or gdf.columns.has_duplicates:
        return False
    for name, col in gdf.items():
        if name == gdf.geometry.name:
            continue
        if not isinstance(name, str) or name.lower() in ("fid", "geom", "geometry"):
            return False
        if col.dtype == object:
            if pd.api.types.infer_dtype(col, skipna=True) not in ("string", "empty"):
                return False
        elif str(col.dtype) not in ("bool", "int64", "int32", "float64"):
            return False
    return True


class ResponseStore:
    """Every tool output of one session, registered with an id, metadata computed from the data,
    and lineage. Thread-safe: one sqlite connection shared under a lock (the worker thread writes
    while the main thread reads). Open it on a session folder; it recovers from crashes on open."""

    def __init__(
        self,
        session_dir: Path | str,
        *,
        cache_bytes: int = CACHE_BYTES,
        background_min_features: int | None = BACKGROUND_MIN_FEATURES,
    ) -> None:
        self.session_dir = Path(session_dir).resolve()
        self._frames = _FrameCache(cache_bytes)
        #: None: every write synchronous
        self.background_min_features = background_min_features
        self._pending: dict[str, tuple[ArtifactRecord, Future[ArtifactRecord]]] = {}
        #: the writer's turn: it writes a big layer's chunks while no step computes, or while someone waits for a
        #: write (pyogrio holds the GIL for each call, so a chunk written during a step stops the step)
        self._turn = threading.Condition()
        self._computing = 0
        self._waiting = 0
        self._writer: ThreadPoolExecutor | None = None
        self.artifacts_dir = self.session_dir / "artifacts"
        self.staging_dir = self.session_dir / ".staging"
        self.quarantine_dir = self.session_dir / QUARANTINE_DIR
        try:
            self.artifacts_dir.mkdir(parents=True, exist_ok=True)
        except FileNotFoundError as exc:  # a folder that cannot hold folders (under /proc, a vanished mount)
            raise InputError(
                f"cannot create the session folder {self.session_dir}: {exc.strerror}", hint=FOLDER_HINT, kind="storage"
            ) from None
        self._lock = threading.RLock()
        self._reserved: set[str] = set()
        #: one line per thing the store repaired on open or on a check (rebuilt index, quarantined file)
        self.notes: list[str] = []
        self._lock_file = open(self.session_dir / "store.lock", "a+b")  # noqa: SIM115 - held while open
        # exclusive: no other open store (in any process) uses this folder, so recovery cannot touch a
        # file someone is staging right now; the others hold the lock shared
        exclusive = try_lock(self._lock_file)
        if not exclusive:
            lock(self._lock_file, shared=True)
        self._db = self._open_index(exclusive)
        if exclusive:
            self._recover()
            lock(self._lock_file, shared=True)  # stay registered as a user of the folder, let others open it
        self.staging_dir.mkdir(exist_ok=True)

    # ------------------------------------------------------------------------------------ lifecycle
    def _open_index(self, exclusive: bool) -> sqlite3.Connection:
        """The index, checked (``quick_check``). A damaged one is set aside in ``quarantine/`` and a new
        one started, which :meth:`_recover` fills from the sidecars."""
        path = self.session_dir / INDEX_FILE
        self._index_problem = "missing" if not path.exists() else ("empty" if path.stat().st_size == 0 else None)
        try:
            return self._connect(path)
        except sqlite3.DatabaseError as exc:
            if not exclusive:
                raise StoreDamaged(
                    f"the artifact index of session {self.session_dir} is damaged ({exc}) "
                    "(hint: close the other GeoFaham window or command using this session; the next open rebuilds it)"
                ) from exc
            for damaged in (path, path.with_name(path.name + "-journal")):
                if damaged.exists():
                    set_aside(damaged, self.quarantine_dir)
            self._index_problem = f"damaged ({exc})"
            return self._connect(path)

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=DELETE")  # rollback journal: one file set, no WAL on shares
            db.execute("PRAGMA synchronous=FULL")
            check = db.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise sqlite3.DatabaseError(check)
            db.execute(_SCHEMA)
            if "fingerprint" not in [r[1] for r in db.execute("PRAGMA table_info(artifacts)")]:
                with contextlib.suppress(sqlite3.OperationalError):  # another process added it meanwhile
                    db.execute("ALTER TABLE artifacts ADD COLUMN fingerprint TEXT")  # sessions of older releases
        except BaseException:
            db.close()
            raise
        return db

    def _sidecar(self, artifact_id: str) -> Path:
        return self.artifacts_dir / f"{artifact_id}{SIDECAR_SUFFIX}"

    def _write_sidecar(self, record: ArtifactRecord) -> None:
        atomic_write_text(self._sidecar(record.id), record.model_dump_json())

    def _quarantine(self, artifact_id: str) -> list[str]:
        """Move every file of ``artifact_id`` (data, sidecar, GDAL's .aux.xml ...) to ``quarantine/``."""
        moved = []
        for path in sorted(self.artifacts_dir.glob(artifact_id + ".*")):
            set_aside(path, self.quarantine_dir)
            moved.append(path.name)
        return moved

    def _note(self, message: str) -> None:
        log.warning("%s", message)
        self.notes.append(message)

    def _recover(self) -> None:
        """Bring folder and index back to "every record has its complete file and sidecar, every file a
        record" after a crash or a lost index: staging and temp files go (no registration of theirs
        returned); files with a valid sidecar and no row are re-indexed; files without one are set
        aside in ``quarantine/``; rows whose file is gone leave the index; old rows get a sidecar."""
        _unlink_quiet(self.staging_dir)
        for tmp in self.artifacts_dir.glob("*.tmp*"):
            _unlink_quiet(tmp)
        with self._lock:
            indexed = {r.id: r for r in self._query()}
        files: dict[str, list[Path]] = {}
        for path in self.artifacts_dir.iterdir():
            files.setdefault(path.name.split(".", 1)[0], []).append(path)
        gone = [i for i, r in indexed.items() if not (self.session_dir / r.path).is_file()]
        adopted: list[ArtifactRecord] = []
        set_aside_files: list[str] = []
        for artifact_id in sorted(set(files) - set(indexed)):
            record = self._adoptable(artifact_id)
            if record is not None:
                adopted.append(record)
            else:
                set_aside_files += self._quarantine(artifact_id)
        for artifact_id in gone:
            set_aside_files += self._quarantine(artifact_id)
        with self._lock, self._transaction():
            self._db.executemany("DELETE FROM artifacts WHERE id = ?", [(i,) for i in gone])
            for record in sorted(adopted, key=lambda r: r.created_at):
                self._db.execute(
                    # the constant column list; every value is a ? parameter
                    f"INSERT INTO artifacts ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",  # nosec B608
                    self._row(record),
                )
        for artifact_id, record in indexed.items():  # rows of older releases: give them a sidecar
            if artifact_id not in gone and not self._sidecar(artifact_id).exists():
                self._backfill_sidecar(record)
        fsync_dir(self.artifacts_dir)
        if adopted:
            ids = ", ".join(r.id for r in adopted[:5]) + (" ..." if len(adopted) > 5 else "")
            why = f"the index was {self._index_problem}" if self._index_problem else "their records were not indexed"
            self._note(f"store: {why}; rebuilt {len(adopted)} artifact record(s) from their sidecar files ({ids})")
        elif self._index_problem and self._index_problem.startswith("damaged"):
            self._note(f"store: the index was {self._index_problem}; started a new one (no artifact to rebuild)")
        if set_aside_files:
            shown = ", ".join(set_aside_files[:5]) + (" ..." if len(set_aside_files) > 5 else "")
            self._note(
                f"store: set aside {len(set_aside_files)} file(s) without a valid record or whose artifact file "
                f"was gone in {self.quarantine_dir} ({shown})"
            )
        if gone:
            self._note(f"store: {len(gone)} indexed artifact(s) had no file and left the index ({', '.join(gone[:5])})")

    def _adoptable(self, artifact_id: str) -> ArtifactRecord | None:
        """The record of an unindexed ``artifact_id`` from its sidecar, when the sidecar parses, names
        this id and its file, and the file opens and matches the fingerprint; else None."""
        sidecar = self._sidecar(artifact_id)
        try:
            record = ArtifactRecord.model_validate_json(sidecar.read_bytes())
        except (OSError, ValueError):
            return None
        path = self.session_dir / record.path
        if (
            record.id != artifact_id
            or path.parent != self.artifacts_dir
            or path.name.split(".", 1)[0] != artifact_id
            or record.fingerprint is None
        ):
            return None
        try:
            verify_file(path, record.kind, record.id, record.fingerprint)
        except ArtifactDamaged as exc:
            log.warning("not re-indexing %s: %s", artifact_id, exc)
            return None
        return record

    def _backfill_sidecar(self, record: ArtifactRecord) -> None:
        """A sidecar (and a fingerprint, taken now) for a record an older release indexed without one."""
        path = self.session_dir / record.path
        if record.fingerprint is None:
            try:
                record = record.model_copy(update={"fingerprint": fingerprint(path, record.kind, record.id)})
            except Exception as exc:  # unreadable: the check before reuse will quarantine it
                log.warning("no fingerprint for %s: %s", record.id, exc)
                return
            with self._lock:
                self._db.execute("UPDATE artifacts SET fingerprint = ? WHERE id = ?", (record.fingerprint, record.id))
        self._write_sidecar(record)

    def verify(self, artifact_id: str) -> str | None:
        """None when the artifact's file is intact: it opens and matches the fingerprint taken when it
        was written. Otherwise the artifact is quarantined (its files moved to ``quarantine/``, its
        record out of the index) and the one-line reason is returned (and added to :attr:`notes`)."""
        self._settle(str(artifact_id), wait=True)
        record = self.get(artifact_id)
        try:
            verify_file(self.session_dir / record.path, record.kind, record.id, record.fingerprint)
            return None
        except ArtifactDamaged as exc:
            with self._lock, self._transaction():
                self._db.execute("DELETE FROM artifacts WHERE id = ?", (record.id,))
            self._frames.discard(record.id)
            self._quarantine(record.id)
            message = (
                f"store: artifact {record.id} failed its integrity check ({exc}); quarantined in {self.quarantine_dir}"
            )
            self._note(message)
            return message

    def close(self) -> None:
        """Finish the pending writes, close the index and release the folder lock."""
        try:
            self.flush()
        finally:
            if self._writer is not None:
                self._writer.shutdown(wait=True)
                self._writer = None
            with self._lock:
                self._db.close()
                self._lock_file.close()

    # ------------------------------------------------------------------------------ background writes
    def is_pending(self, artifact_id: str) -> bool:
        """Whether ``artifact_id`` is still being written in the background (its file not in ``artifacts/`` yet)."""
        with self._lock:
            found = self._pending.get(str(artifact_id))
        return found is not None and not found[1].done()

    def pending_ids(self) -> list[str]:
        """Ids still being written, in registration order."""
        with self._lock:
            return [i for i, (_, f) in self._pending.items() if not f.done()]

    def _settle(self, artifact_id: str, wait: bool) -> ArtifactRecord | None:
        """The pending record of ``artifact_id`` while it is written (``wait=False``); once written (or after
        waiting), None, and the pending entry is gone. A failed write raises :class:`GeoFahamError`."""
        with self._lock:
            found = self._pending.get(artifact_id)
        if found is None:
            return None
        record, future = found
        if not wait and not future.done():
            return record
        with self._turn:  # someone waits for the file: the writer goes on even while a step computes
            self._waiting += 1
            self._turn.notify_all()
        try:
            future.result()
        except Exception as exc:
            raise GeoFahamError(f"artifact {artifact_id} could not be written to the store: {exc}") from exc
        finally:
            with self._turn:
                self._waiting -= 1
            with self._lock:
                self._pending.pop(artifact_id, None)
        return None

    @contextlib.contextmanager
    def computing(self) -> Iterator[None]:
        """While a step computes, the writer thread waits between the chunks of a big layer (see
        :data:`WRITE_CHUNK`), unless someone waits for a write."""
        with self._turn:
            self._computing += 1
        try:
            yield
        finally:
            with self._turn:
                self._computing -= 1
                self._turn.notify_all()

    def _writer_turn(self) -> None:
        """The writer thread's wait for its turn (between chunks of a big layer)."""
        with self._turn:
            while self._computing > 0 and self._waiting == 0:
                self._turn.wait(0.5)

    def flush(self) -> None:
        """Wait until every pending artifact is written and indexed; the first failed write raises (after all
        have finished)."""
        with self._lock:
            ids = list(self._pending)
        first: GeoFahamError | None = None
        for artifact_id in ids:
            try:
                self._settle(artifact_id, wait=True)
            except GeoFahamError as exc:
                first = first or exc
        if first is not None:
            raise first

    def __enter__(self) -> ResponseStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _transaction(self):
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (rollback on error); sqlite3's context manager alone
        does not begin in autocommit mode."""
        db = self._db

        class _Tx:
            def __enter__(self) -> None:
                db.execute("BEGIN IMMEDIATE")

            def __exit__(self, exc_type: object, *_: object) -> None:
                db.execute("ROLLBACK" if exc_type else "COMMIT")

        return _Tx()

    # ---------------------------------------------------------------------------------- registering
    def _new_id(self) -> str:
        with self._lock:
            while True:
                candidate = "a_" + uuid.uuid4().hex[:8]
                taken = self._db.execute("SELECT 1 FROM artifacts WHERE id = ?", (candidate,)).fetchone()
                on_disk = any(any(d.glob(candidate + ".*")) for d in (self.artifacts_dir, self.quarantine_dir))
                if not taken and candidate not in self._reserved and not on_disk:
                    self._reserved.add(candidate)
                    return candidate

    def _register(
        self,
        kind: ArtifactKind,
        ext: str,
        write: Callable[[Path, str], object],
        inspect: Callable[[Path], ArtifactMeta],
        *,
        source: str,
        summary: str,
        inputs: Iterable[str],
        extra: dict | None,
        fingerprint_of: Callable[[Path], str] | None = None,
        artifact_id: str | None = None,
        created_at: datetime | None = None,
    ) -> ArtifactRecord:
        """The one crash-safe path every ``register_*`` takes (see module docstring). ``fingerprint_of`` (called
        after ``inspect``) may take the fingerprint from what ``inspect`` read; ``artifact_id`` is an id already
        reserved (a background write)."""
        inputs = list(inputs)
        if artifact_id is None:
            for parent in inputs:
                self.get(parent)  # lineage must point at real artifacts
            artifact_id = self._new_id()
        staged = self.staging_dir / f"{artifact_id}.{ext}"
        final = self.artifacts_dir / f"{artifact_id}.{ext}"
        committed = False
        try:
            self.staging_dir.mkdir(exist_ok=True)
            write(staged, artifact_id)
            fsync_file(staged)
            _crash_point("staged")
            record = ArtifactRecord(
                id=artifact_id,
                kind=kind,
                source=source,
                summary=summary,
                path=final.relative_to(self.session_dir).as_posix(),
                metadata=inspect(staged),  # from the file as written, not from the caller's object
                inputs=inputs,
                created_at=created_at or datetime.now(UTC),
                extra=extra or {},
                fingerprint=fingerprint_of(staged) if fingerprint_of else fingerprint(staged, kind, artifact_id),
            )
            self._write_sidecar(record)  # before the file: a file in artifacts/ always has its sidecar
            os.replace(staged, final)
            fsync_dir(self.artifacts_dir)
            _crash_point("moved")
            with self._lock, self._transaction():
                self._db.execute(
                    # the constant column list; every value is a ? parameter
                    f"INSERT INTO artifacts ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",  # nosec B608
                    self._row(record),
                )
            committed = True
            return record
        finally:
            with self._lock:
                self._reserved.discard(artifact_id)
            for leftover in self.staging_dir.glob(artifact_id + ".*"):  # writer sidecars (-journal, .ovr.tmp)
                _unlink_quiet(leftover)
            if not committed:
                _unlink_quiet(final)
                _unlink_quiet(self._sidecar(artifact_id))

    @staticmethod
    def _row(r: ArtifactRecord) -> tuple:
        return (
            r.id,
            r.kind.value,
            r.source,
            r.summary,
            r.path,
            r.metadata.model_dump_json(),
            json.dumps(r.inputs),
            r.created_at.isoformat(),
            json.dumps(r.extra, default=str),
            r.fingerprint,
        )

    def register_vector(
        self,
        gdf: Any,
        *,
        source: str,
        summary: str,
        inputs: Iterable[str] = (),
        kind: ArtifactKind = ArtifactKind.vector,
        extra: dict | None = None,
    ) -> ArtifactRecord:
        """Store a GeoDataFrame as a GeoPackage (layer named after the id), which keeps the CRS and
        the field types. A layer without CRS is refused: its metadata and areas would be guesses."""

        if kind not in _VECTOR_KINDS:
            raise ValueError(f"register_vector takes kind vector or aoi, not {kind.value}")
        if gdf.crs is None:
            raise ValueError("refusing a vector layer without CRS; set or assign the CRS first")

        inputs = list(inputs)
        if self.background_min_features is not None and len(gdf) >= self.background_min_features and _round_trips(gdf):
            return self._register_vector_background(
                gdf, kind, source=source, summary=summary, inputs=inputs, extra=extra
            )
        record, read_back = self._write_vector(gdf, kind, source=source, summary=summary, inputs=inputs, extra=extra)
        self._frames.put(record.id, read_back)
        return record

    def _write_vector(
        self,
        gdf: Any,
        kind: ArtifactKind,
        *,
        source: str,
        summary: str,
        inputs: list[str],
        extra: dict | None,
        **ids: Any,
    ) -> tuple[ArtifactRecord, Any]:
        """Write ``gdf`` as the artifact's GeoPackage and register it (``ids``: an id and time reserved before), the
        file read back once for its metadata and fingerprint: (the record, the frame as read back)."""
        import geopandas as gpd

        read_back: dict[str, Any] = {}

        turn = self._writer_turn if "artifact_id" in ids else None  # a background write waits for its turns

        def write(path: Path, layer: str) -> None:
            write_gpkg(gdf, path, layer, turn)

        def inspect(path: Path) -> ArtifactMeta:  # the file read once: metadata, fingerprint and the cached frame
            if turn is not None:
                turn()
            read_back["gdf"] = gpd.read_file(path, layer=path.stem, engine="pyogrio")
            return vector_metadata(read_back["gdf"])

        record = self._register(
            kind,
            "gpkg",
            write,
            inspect,
            source=source,
            summary=summary,
            inputs=inputs,
            extra=extra,
            fingerprint_of=lambda _path: vector_fingerprint(read_back["gdf"]),
            **ids,
        )
        return record, read_back["gdf"]

    def _register_vector_background(
        self, gdf: Any, kind: ArtifactKind, *, source: str, summary: str, inputs: list[str], extra: dict | None
    ) -> ArtifactRecord:
        """Register a big vector frame now and write it in the writer thread (see the module docstring)."""

        for parent in inputs:
            self.get(parent)  # lineage must point at real artifacts
        frame = gdf.copy()  # the caller's frame may change after we return
        frame.index = pd.RangeIndex(len(frame))  # as the file gives it back (the index is not written)
        artifact_id = self._new_id()
        created_at = datetime.now(UTC)
        try:
            record = ArtifactRecord(
                id=artifact_id,
                kind=kind,
                source=source,
                summary=summary,
                path=f"{self.artifacts_dir.name}/{artifact_id}.gpkg",
                metadata=vector_metadata(frame),
                inputs=inputs,
                created_at=created_at,
                extra=extra or {},
            )
        except BaseException:
            with self._lock:
                self._reserved.discard(artifact_id)
            raise

        def job() -> ArtifactRecord:
            try:
                written, read_back = self._write_vector(
                    frame,
                    kind,
                    source=source,
                    summary=summary,
                    inputs=inputs,
                    extra=extra,
                    artifact_id=artifact_id,
                    created_at=created_at,
                )
            except BaseException:
                self._frames.discard(artifact_id)
                raise
            if written.fingerprint != "content-sha256:" + frame_digest(frame):
                self._frames.put(artifact_id, read_back)  # from now on reads give the file's frame
                self._note(
                    f"store: artifact {artifact_id} as written differs from the frame served while it was written "
                    "(field types); later reads come from its file"
                )
            else:
                self._frames.unpin(artifact_id)
            return written

        self._frames.put(artifact_id, frame, pin=True)
        with self._lock:
            if self._writer is None:
                self._writer = ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix="geofaham-store-writer", initializer=_background_priority
                )
            self._pending[artifact_id] = (record, self._writer.submit(job))
        return record

    def register_raster_file(
        self, path: Path | str, *, source: str, summary: str, inputs: Iterable[str] = (), extra: dict | None = None
    ) -> ArtifactRecord:
        """Copy a raster written by an engine into the store as a Cloud-Optimized GeoTIFF (tiled,
        with overviews: QGIS displays it fast; compressed as ``GEOFAHAM_RASTER_COMPRESS``). The
        engine's file is left alone."""
        import rasterio
        import rasterio.shutil

        src_path = Path(path)
        with rasterio.open(src_path) as src:
            if src.crs is None:
                raise ValueError(f"refusing a raster without CRS: {src_path.name}")

        options = ComputeSettings.from_env().cog_options

        def write(dst: Path, _id: str) -> None:
            # GDAL's block cache (5 % of RAM by default) fills up over a full Sentinel-2 tile's copy:
            # 864 MB of RSS at 10980², 141 MB capped (bench/README.md, raster)
            with rasterio.Env(GDAL_CACHEMAX=COPY_CACHE_MB):
                rasterio.shutil.copy(src_path, dst, driver="COG", BIGTIFF="IF_SAFER", **options)

        return self._register(
            ArtifactKind.raster,
            "tif",
            write,
            raster_metadata,
            source=source,
            summary=summary,
            inputs=inputs,
            extra=extra,
        )

    def register_item_set(
        self,
        items: list[dict],
        meta: ItemSetMeta,
        *,
        source: str,
        summary: str,
        inputs: Iterable[str] = (),
        extra: dict | None = None,
    ) -> ArtifactRecord:
        """Store STAC items as a GeoJSON FeatureCollection. ``meta`` carries what only the search
        knows (collection, AOI coverage); count, bbox and times are checked against the items."""
        items = list(items)
        final_meta = _item_set_meta(items, meta)

        def write(path: Path, _id: str) -> None:
            path.write_text(json.dumps({"type": "FeatureCollection", "features": items}, default=str), encoding="utf-8")

        def inspect(path: Path) -> ArtifactMeta:
            return _item_set_meta(json.loads(path.read_text(encoding="utf-8"))["features"], final_meta)

        return self._register(
            ArtifactKind.item_set, "json", write, inspect, source=source, summary=summary, inputs=inputs, extra=extra
        )

    def register_table(
        self, df: pd.DataFrame, *, source: str, summary: str, inputs: Iterable[str] = (), extra: dict | None = None
    ) -> ArtifactRecord:
        """Store a DataFrame as typed JSON (table schema + exact dtypes); see :func:`_write_table`."""
        return self._register(
            ArtifactKind.table,
            "json",
            lambda path, _id: _write_table(df, path),
            lambda path: table_metadata(_read_table(path)),
            source=source,
            summary=summary,
            inputs=inputs,
            extra=extra,
        )

    def register_text(
        self, text: str, *, source: str, summary: str, inputs: Iterable[str] = (), extra: dict | None = None
    ) -> ArtifactRecord:
        """Store a text (a report, an answer) as a UTF-8 Markdown file."""
        return self._register(
            ArtifactKind.text,
            "md",
            lambda path, _id: path.write_bytes(text.encode("utf-8")),
            lambda path: text_metadata(path.read_bytes().decode("utf-8")),
            source=source,
            summary=summary,
            inputs=inputs,
            extra=extra,
        )

    # ------------------------------------------------------------------------------------- lookup
    def _query(self, where: str = "", params: Sequence[Any] = ()) -> list[ArtifactRecord]:
        if where != "WHERE id = ?":  # a listing: every artifact registered so far, written
            self.flush()
        with self._lock:
            # the constant column list and WHERE clauses of fixed text; every value is a ? parameter
            query = f"SELECT {_COLUMNS} FROM artifacts {where} ORDER BY seq"  # nosec B608
            rows = self._db.execute(query, params).fetchall()
        return [
            ArtifactRecord(
                id=r[0],
                kind=r[1],
                source=r[2],
                summary=r[3],
                path=r[4],
                metadata=json.loads(r[5]),
                inputs=json.loads(r[6]),
                created_at=datetime.fromisoformat(r[7]),
                extra=json.loads(r[8]),
                fingerprint=r[9],
            )
            for r in rows
        ]

    def get(self, artifact_id: str) -> ArtifactRecord:
        """The record of ``artifact_id``; :class:`UnknownArtifact` (a ``KeyError``) if there is none. A pending
        artifact's record is the one its registration returned (no fingerprint yet)."""
        pending = self._settle(str(artifact_id), wait=False)
        if pending is not None:
            return pending
        found = self._query("WHERE id = ?", (str(artifact_id),))
        if not found:
            raise UnknownArtifact(str(artifact_id), self.ids())
        return found[0]

    def __contains__(self, artifact_id: object) -> bool:
        with self._lock:
            if str(artifact_id) in self._pending:
                return True
            return self._db.execute("SELECT 1 FROM artifacts WHERE id = ?", (str(artifact_id),)).fetchone() is not None

    def __len__(self) -> int:
        self.flush()
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM artifacts").fetchone()[0])

    def ids(self) -> list[str]:
        """All ids, in creation order."""
        self.flush()
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT id FROM artifacts ORDER BY seq")]

    def records(self) -> list[ArtifactRecord]:
        """All records, in creation order."""
        return self._query()

    def find(
        self, kind: ArtifactKind | str | None = None, source: str | None = None, source_prefix: str | None = None
    ) -> list[ArtifactRecord]:
        """Records by kind and/or exact source and/or source prefix (``"maps."``), creation order."""
        clauses: list[str] = []
        params: list[Any] = []
        if kind is not None:
            clauses.append("kind = ?")
            params.append(ArtifactKind(kind).value)
        if source is not None:
            clauses.append("source = ?")
            params.append(source)
        if source_prefix is not None:
            clauses.append("substr(source, 1, ?) = ?")  # not LIKE: '_' and '%' are literal here
            params += [len(source_prefix), source_prefix]
        return self._query(("WHERE " + " AND ".join(clauses)) if clauses else "", params)

    def overlapping(
        self,
        bounds_4326: Any = None,
        time_start: datetime | None = None,
        time_end: datetime | None = None,
        kind: ArtifactKind | str | None = None,
    ) -> list[ArtifactRecord]:
        """Records whose 4326 bounds intersect ``bounds_4326`` (a :class:`Bounds`, a shapely geometry
        in 4326 or a ``(minx, miny, maxx, maxy)`` tuple; ``None`` = anywhere) and, when both sides
        have times, whose time ranges overlap. Records without bounds (tables, texts) only match
        when no bounds are given. An open time end means "unbounded" on that side."""
        from shapely.geometry import box
        from shapely.geometry.base import BaseGeometry

        geom: BaseGeometry | None = None
        if isinstance(bounds_4326, Bounds):
            geom = box(bounds_4326.minx, bounds_4326.miny, bounds_4326.maxx, bounds_4326.maxy)
        elif isinstance(bounds_4326, BaseGeometry):
            geom = bounds_4326
        elif bounds_4326 is not None:
            geom = box(*bounds_4326)
        q_start, q_end = to_utc(time_start), to_utc(time_end)
        out = []
        for rec in self.find(kind=kind):
            if geom is not None:
                rb = getattr(rec.metadata, "bounds_4326", None)
                if rb is None or not geom.intersects(box(rb.minx, rb.miny, rb.maxx, rb.maxy)):
                    continue
            r_start, r_end = _times(rec.metadata)
            if (
                (q_start or q_end)
                and (r_start or r_end)
                and ((q_end and r_start and r_start > q_end) or (q_start and r_end and r_end < q_start))
            ):
                continue
            out.append(rec)
        return out

    # -------------------------------------------------------------------------------------- reading
    def abs_path(self, artifact_id: str) -> Path:
        """Absolute path of the artifact's file (for QGIS layers, engines reading rasters); waits for a pending
        write of it."""
        self._settle(str(artifact_id), wait=True)
        return self.session_dir / self.get(artifact_id).path

    def read_vector(self, artifact_id: str, bbox: tuple[float, float, float, float] | None = None) -> Any:
        """The GeoDataFrame of a vector or AOI artifact, as stored (CRS and field types kept). With ``bbox``
        (minx, miny, maxx, maxy in the layer's CRS), only the features whose box meets it, in layer order (and not
        those without geometry): read through the GeoPackage's R-tree when the layer is not in memory, so a
        step about one area of a big layer reads that area, not the layer (the subset is not kept in memory)."""
        import geopandas as gpd

        rec = self.get(artifact_id)
        if rec.kind not in _VECTOR_KINDS:
            raise ValueError(f"artifact {artifact_id} is a {rec.kind.value}, not a vector layer")
        cached = self._frames.get(rec.id, bbox)
        if cached is not None:
            return cached
        self._settle(rec.id, wait=True)
        path = self.session_dir / rec.path
        if bbox is not None:
            part = gpd.read_file(path, layer=rec.id, engine="pyogrio", bbox=bbox, fid_as_index=True).sort_index()
            # in layer order (the R-tree gives its own), numbered as rows from 0
            part.index = (part.index - 1).rename(None)
            return part[_meets(part, bbox)]  # the driver's filter may keep more (boxes of its index)
        gdf = gpd.read_file(path, layer=rec.id, engine="pyogrio")
        self._frames.put(rec.id, gdf)
        return gdf.copy()

    def read_table(self, artifact_id: str) -> pd.DataFrame:
        """The DataFrame of a table artifact, with its dtypes restored."""
        rec = self._expect(artifact_id, ArtifactKind.table)
        return _read_table(self.session_dir / rec.path)

    def read_items(self, artifact_id: str) -> list[dict]:
        """The STAC items of an item-set artifact."""
        rec = self._expect(artifact_id, ArtifactKind.item_set)
        return json.loads((self.session_dir / rec.path).read_text(encoding="utf-8"))["features"]

    def read_text(self, artifact_id: str) -> str:
        """The text of a text artifact."""
        rec = self._expect(artifact_id, ArtifactKind.text)
        return (self.session_dir / rec.path).read_bytes().decode("utf-8")

    def _expect(self, artifact_id: str, kind: ArtifactKind) -> ArtifactRecord:
        rec = self.get(artifact_id)
        if rec.kind != kind:
            raise ValueError(f"artifact {artifact_id} is a {rec.kind.value}, not a {kind.value}")
        return rec
