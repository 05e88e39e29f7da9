"""The Response Store: every tool output, registered with an id, typed metadata and lineage."""

from .models import (  # noqa: F401
    ArtifactKind,
    ArtifactMeta,
    ArtifactRecord,
    BandInfo,
    Bounds,
    FieldInfo,
    ItemSetMeta,
    RasterMeta,
    TableMeta,
    TextMeta,
    VectorMeta,
)
from .store import CRASH_ENV, ResponseStore, StoreDamaged, UnknownArtifact  # noqa: F401,E402
