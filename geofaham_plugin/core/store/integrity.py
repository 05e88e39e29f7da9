"""Fingerprints of artifact files, taken when they are written and checked before an artifact is
reused or re-indexed: "the file still holds what was registered, and it opens".

A GeoPackage's fingerprint is taken over its content (CRS, columns, attribute values, geometries as
WKB), not its bytes: QGIS opening the layer may switch the file to WAL mode or touch its header
without changing a feature, and that must not count as damage. Every other file is hashed as bytes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from .models import ArtifactKind

_VECTOR_KINDS = (ArtifactKind.vector, ArtifactKind.aoi)
_CHUNK = 1 << 20


class ArtifactDamaged(Exception):
    """The file does not open, or no longer matches its fingerprint. ``str()`` says which, in one line."""


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _vector_digest(path: Path, layer: str) -> str:
    import pyogrio

    return frame_digest(pyogrio.read_dataframe(path, layer=layer))


def frame_digest(gdf: Any) -> str:
    """The content digest of a GeoDataFrame as a GeoPackage read gives it (CRS, column dtypes, attribute values,
    geometries as WKB): the hex part of a vector fingerprint, for a frame already read."""
    import numpy as np
    import pandas as pd
    import shapely

    h = hashlib.sha256()
    h.update((gdf.crs.to_wkt() if gdf.crs is not None else "").encode())
    attrs = pd.DataFrame(gdf.drop(columns=gdf.geometry.name))
    h.update(json.dumps([[str(c), str(t)] for c, t in attrs.dtypes.items()]).encode())
    if len(attrs.columns):
        h.update(pd.util.hash_pandas_object(attrs, index=False).to_numpy().tobytes())
    # the same bytes as one update per geometry (length, then WKB), joined: one hash call instead of n
    wkbs = shapely.to_wkb(np.asarray(gdf.geometry.values))
    h.update(b"".join(len(w or b"").to_bytes(8, "little") + (w or b"") for w in wkbs))
    return h.hexdigest()


def vector_fingerprint(gdf: Any) -> str:
    """The fingerprint of a vector artifact from the frame read back from its file (as :func:`fingerprint`)."""
    return "content-sha256:" + frame_digest(gdf)


def fingerprint(path: Path, kind: ArtifactKind, artifact_id: str) -> str:
    """``sha256:<hex>`` of the file's bytes, or ``content-sha256:<hex>`` of a vector layer's content."""
    if kind in _VECTOR_KINDS:
        return "content-sha256:" + _vector_digest(path, artifact_id)
    return "sha256:" + _file_digest(path)


def check_opens(path: Path, kind: ArtifactKind, artifact_id: str) -> None:
    """Open the file the way its readers will (GeoPackage layer, GeoTIFF with a pixel read, JSON,
    UTF-8 text); :class:`ArtifactDamaged` when it does not."""
    try:
        if kind in _VECTOR_KINDS:
            import pyogrio

            pyogrio.read_info(path, layer=artifact_id)
        elif kind is ArtifactKind.raster:
            import rasterio
            from rasterio.windows import Window

            with rasterio.open(path) as src:
                src.read(1, window=Window(0, 0, min(src.width, 64), min(src.height, 64)))
        elif kind in (ArtifactKind.table, ArtifactKind.item_set):
            json.loads(path.read_text(encoding="utf-8"))
        else:
            path.read_bytes().decode("utf-8")
    except Exception as exc:  # any reader's error means the same: it does not open
        raise ArtifactDamaged(f"{path.name} does not open ({type(exc).__name__}: {str(exc)[:120]})") from exc


def verify(path: Path, kind: ArtifactKind, artifact_id: str, expected: str | None) -> None:
    """:class:`ArtifactDamaged` unless the file exists, opens and (when a fingerprint was recorded)
    matches it."""
    if not path.is_file():
        raise ArtifactDamaged(f"{path.name} is missing")
    check_opens(path, kind, artifact_id)
    if expected is None:
        return
    try:
        actual = fingerprint(path, kind, artifact_id)
    except Exception as exc:
        raise ArtifactDamaged(f"{path.name} does not read ({type(exc).__name__}: {str(exc)[:120]})") from exc
    if actual != expected:
        raise ArtifactDamaged(f"{path.name} changed since it was written (fingerprint mismatch)")
