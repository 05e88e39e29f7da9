"""Imagery discovery: STAC API providers (Earth Search, Microsoft Planetary Computer, any STAC API)
through pystac-client, and an offline folder of STAC item JSON files (:class:`StacItemFolder`).

A search asks for an AOI polygon, a time window (usually relative to the event date), collections
in a fallback order, a cloud-cover limit and the bands the analysis needs. The result says how much
of the AOI *polygon* (not its bbox) the chosen items cover, in total and per date, measured
geodesically. When coverage is insufficient or nothing is found, the search recovers in a fixed
order — widen the window, relax the cloud limit, next collection — and only then fails with
``ToolFailed(kind="coverage")``, which the orchestrator can replan on.

HTTP: timeouts, retries with exponential backoff on 429/5xx and transport errors (urllib3 ``Retry``
inside pystac-client), typed failures (``timeout``, ``error``). Planetary Computer asset hrefs are
signed with SAS tokens from its token endpoint; tokens are cached until shortly before expiry and
re-fetched when a read fails with an authorisation error (an expired signature).

Settings (``settings.stac``, from GEOFAHAM_STAC_URL / _PROVIDER / _TIMEOUT / _RETRIES / _BACKOFF and
GEOFAHAM_PC_SAS_URL, see ``core/config.py``): the provider kind (default: guessed from the URL), HTTP
timeout, retries and backoff, and the token endpoint. In offline mode (``settings.network.offline``)
only a local folder of STAC items is searched."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

import shapely
from shapely.geometry import mapping, shape
from shapely.geometry.base import BaseGeometry

from ..config import PC_SAS_URL, Settings, StacProviderKind, StacSettings, settings_from_env
from ..domain.geodesy import geodesic_area_m2
from ..errors import ToolFailed
from ..store.describe import to_utc
from .raster.bands import band_map, canonical_band

if TYPE_CHECKING:
    import requests
    from pystac_client import Client
    from urllib3 import Retry

#: collections tried in order when the caller names none (Sentinel-2 L2A first: 10-20 m, 5-day revisit)
DEFAULT_COLLECTIONS: dict[str, tuple[str, ...]] = {
    "earth-search": ("sentinel-2-l2a", "sentinel-2-c1-l2a", "landsat-c2-l2"),
    "planetary-computer": ("sentinel-2-l2a", "landsat-c2-l2"),
    "stac-api": ("sentinel-2-l2a", "landsat-c2-l2"),
    "local": (),  # every collection in the folder
}
CLOUD_RELAX_STEP = 30.0  # percentage points added when the cloud limit is relaxed
TOKEN_MARGIN_S = 120.0  # a SAS token this close to expiry is renewed before use
RETRY_STATUS = (429, 500, 502, 503, 504)


@dataclass(frozen=True)
class HttpPolicy:
    timeout: float = 20.0
    retries: int = 3
    backoff: float = 0.5

    @classmethod
    def from_settings(cls, stac: StacSettings | None = None) -> HttpPolicy:
        """Timeout, retries and backoff of ``stac`` (read from the environment now when not given)."""
        stac = stac or StacSettings.from_env()
        return cls(timeout=stac.timeout_s, retries=stac.retries, backoff=stac.backoff_s)

    def retry(self) -> Retry:
        from urllib3 import Retry

        return Retry(
            total=self.retries,
            connect=self.retries,
            read=self.retries,
            status=self.retries,
            backoff_factor=self.backoff,
            status_forcelist=RETRY_STATUS,
            allowed_methods=frozenset({"GET", "POST"}),
            raise_on_status=True,
            respect_retry_after_header=True,
        )

    def session(self) -> requests.Session:
        import requests
        from requests.adapters import HTTPAdapter

        s = requests.Session()
        adapter = HTTPAdapter(max_retries=self.retry())
        s.mount("http://", adapter)
        s.mount("https://", adapter)
        return s


class StacProviderError(ToolFailed):
    """The provider could not be used (HTTP status, timeout, unreachable). ``status`` when known."""

    def __init__(self, message: str, kind: str = "error", hint: str | None = None, status: int | None = None) -> None:
        super().__init__(message, kind=kind, hint=hint)
        self.status = status


def _typed(exc: BaseException, what: str) -> StacProviderError:
    """A pystac-client / requests failure as a typed error: timeouts, HTTP statuses, unreachable."""
    import requests

    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and len(chain) < 8:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    text = " | ".join(str(c) for c in chain)
    status = next((getattr(c, "status_code", None) for c in chain if getattr(c, "status_code", None)), None)
    if any(isinstance(c, requests.exceptions.Timeout) for c in chain) or "timed out" in text.lower():
        return StacProviderError(
            f"{what} timed out",
            kind="timeout",
            hint="the provider is slow or unreachable; retry later or use a local folder of STAC items",
        )
    if status is None:
        for code in RETRY_STATUS:
            if f"{code} error" in text or f"too many {code}" in text:
                status = code
    if status is not None:
        return StacProviderError(
            f"{what} failed with HTTP {status}",
            status=status,
            hint="the provider is failing; retry later, use another provider or a local folder of STAC items"
            if status >= 500 or status == 429
            else "the request was refused",
        )
    return StacProviderError(
        f"{what} failed: {str(exc)[:200]}",
        hint="no connection to the STAC provider; set GEOFAHAM_STAC_URL to a local folder of STAC items",
    )


# ------------------------------------------------------------------------------------ signing
class SasSigner:
    """Planetary Computer SAS tokens, one per collection, cached until ``TOKEN_MARGIN_S`` before
    expiry. Picklable (for Dask workers): the HTTP session is rebuilt on demand."""

    def __init__(
        self, url: str = PC_SAS_URL, policy: HttpPolicy | None = None, now: Callable[[], float] = time.time
    ) -> None:
        self.url = url.rstrip("/")
        self.policy = policy or HttpPolicy.from_settings()
        self.now = now
        self.tokens: dict[str, tuple[str, float]] = {}
        self.fetches = 0
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_lock", None)
        state["now"] = time.time
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def token(self, collection: str, refresh: bool = False) -> str:
        with self._lock:
            cached = self.tokens.get(collection)
            if cached and not refresh and cached[1] - TOKEN_MARGIN_S > self.now():
                return cached[0]
            try:
                resp = self.policy.session().get(f"{self.url}/{collection}", timeout=self.policy.timeout)
                resp.raise_for_status()
                body = resp.json()
            except Exception as exc:  # noqa: BLE001 - typed below
                raise _typed(exc, f"signing assets of {collection}") from exc
            self.fetches += 1
            expiry = to_utc(body.get("msft:expiry"))
            expires = expiry.timestamp() if expiry else self.now() + 3600
            self.tokens[collection] = (body["token"], expires)
            return body["token"]

    def sign(self, href: str, collection: str, refresh: bool = False) -> str:
        """``href`` with this collection's token as its query (any earlier signature dropped)."""
        if not href.startswith(("http://", "https://")):
            return href
        parts = urlsplit(href)
        return urlunsplit(parts._replace(query=self.token(collection, refresh)))

    def for_collection(self, collection: str) -> CollectionSigner:
        return CollectionSigner(self, collection)


@dataclass(frozen=True)
class CollectionSigner:
    """``(href, refresh) -> signed href`` for one collection: the raster reader's ``Source.sign``."""

    signer: SasSigner
    collection: str

    def __call__(self, href: str, refresh: bool = False) -> str:
        return self.signer.sign(href, self.collection, refresh)


# ---------------------------------------------------------------------------------- providers
class Provider:
    kind = "stac-api"

    def __init__(self, url: str) -> None:
        self.url = url

    @property
    def default_collections(self) -> tuple[str, ...]:
        return DEFAULT_COLLECTIONS[self.kind]

    def search(
        self, aoi: BaseGeometry, start: datetime, end: datetime, collection: str, max_cloud: float, limit: int
    ) -> list[dict]:
        raise NotImplementedError

    def signer(self) -> SasSigner | None:
        return None


class ApiProvider(Provider):
    """A STAC API searched with pystac-client (POST /search, ``query`` on eo:cloud_cover when the API
    conforms to it; the limit is checked again client-side either way)."""

    def __init__(
        self, url: str, kind: str = "stac-api", policy: HttpPolicy | None = None, sas_url: str = PC_SAS_URL
    ) -> None:
        super().__init__(url)
        self.kind = kind
        self.policy = policy or HttpPolicy.from_settings()
        self.sas_url = sas_url
        self._client: Client | None = None

    def client(self) -> Client:
        if self._client is None:
            from pystac_client import Client
            from pystac_client.stac_api_io import StacApiIO

            io = StacApiIO(timeout=self.policy.timeout, max_retries=self.policy.retry())
            try:
                self._client = Client.open(self.url, stac_io=io, timeout=self.policy.timeout)
            except Exception as exc:  # noqa: BLE001
                raise _typed(exc, f"opening the STAC API {self.url}") from exc
        return self._client

    def search(
        self, aoi: BaseGeometry, start: datetime, end: datetime, collection: str, max_cloud: float, limit: int
    ) -> list[dict]:
        from pystac_client import ConformanceClasses

        client = self.client()
        query = {"eo:cloud_cover": {"lte": max_cloud}} if client.conforms_to(ConformanceClasses.QUERY) else None
        try:
            search = client.search(
                collections=[collection],
                intersects=mapping(_simplified(aoi)),
                datetime=f"{_iso(start)}/{_iso(end)}",
                query=query,
                max_items=limit,
                limit=min(limit, 100),
            )
            return list(search.items_as_dicts())
        except Exception as exc:  # noqa: BLE001
            raise _typed(exc, f"searching {collection} on {self.url}") from exc

    def signer(self) -> SasSigner | None:
        if self.kind != "planetary-computer":
            return None
        return SasSigner(self.sas_url, self.policy)


class StacItemFolder(Provider):
    """A folder of STAC items (``*.json`` Items or ItemCollections, any depth; catalog and collection
    files are ignored), searched offline. Relative asset hrefs are resolved against the item file."""

    kind = "local"

    def __init__(self, root: str | Path) -> None:
        root = Path(str(root).removeprefix("file://"))
        super().__init__(str(root))
        self.root = root.parent if root.is_file() else root
        if not self.root.is_dir():
            raise ToolFailed(f"local STAC catalog not found: {self.root}", kind="not_found")

    def items(self) -> list[dict]:
        out = []
        for path in sorted(self.root.rglob("*.json")):
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            docs = doc.get("features", []) if doc.get("type") == "FeatureCollection" else [doc]
            for item in docs:
                if isinstance(item, dict) and item.get("type") == "Feature" and "stac_version" in item:
                    out.append(_absolute_hrefs(item, path.parent))
        return out

    def collections(self) -> tuple[str, ...]:
        return tuple(sorted({i.get("collection") or "" for i in self.items()}))

    @property
    def default_collections(self) -> tuple[str, ...]:
        return self.collections()

    def search(
        self, aoi: BaseGeometry, start: datetime, end: datetime, collection: str, max_cloud: float, limit: int
    ) -> list[dict]:
        found = []
        for item in self.items():
            if (item.get("collection") or "") != collection:
                continue
            t0, t1 = item_time_range(item)
            if t0 is None or t1 is None or t1 < start or t0 > end:  # no time, or half a range: not searchable
                continue
            if item.get("geometry") is None or not shape(item["geometry"]).intersects(aoi):
                continue
            found.append(item)
        return found[:limit]


def _absolute_hrefs(item: dict, base: Path) -> dict:
    item = json.loads(json.dumps(item))
    for asset in (item.get("assets") or {}).values():
        href = asset.get("href", "")
        if href and "://" not in href and not href.startswith("/"):
            asset["href"] = str((base / href).resolve())
    return item


def provider_kind(url: str, forced: StacProviderKind | None = None) -> str:
    """``forced`` (``settings.stac.provider``) when set, else guessed from the URL."""
    if forced:
        return forced
    if url.startswith("file://") or "://" not in url:
        return "local"
    if "planetarycomputer" in url:
        return "planetary-computer"
    if "earth-search" in url:
        return "earth-search"
    return "stac-api"


def provider_for(url: str, settings: Settings | None = None) -> Provider:
    """The provider for ``url`` under ``settings`` (the run's; read from the environment when not given):
    in offline mode only a local folder of STAC items, never a STAC API."""
    settings = settings or settings_from_env()
    kind = provider_kind(url, settings.stac.provider)
    if kind == "local":
        return StacItemFolder(url)
    if settings.network.offline:
        raise ToolFailed(
            f"imagery search needs the network ({url}) but offline mode is on (GEOFAHAM_OFFLINE)",
            kind="not_found",
            hint="set the STAC URL (GEOFAHAM_STAC_URL) to a local folder of STAC items, or go online",
        )
    return ApiProvider(url, kind, HttpPolicy.from_settings(settings.stac), sas_url=settings.stac.pc_sas_url)


# ----------------------------------------------------------------------------------- geometry
def _simplified(aoi: BaseGeometry, max_vertices: int = 400) -> BaseGeometry:
    """What is sent to an API: the AOI, or its convex hull when it is too detailed for a request
    (coverage is always measured against the true polygon)."""
    return aoi if shapely.get_num_coordinates(aoi) <= max_vertices else aoi.convex_hull


def coverage(items: Sequence[dict], aoi: BaseGeometry) -> tuple[float, dict[str, float]]:
    """Fraction (0-1) of the AOI polygon's geodesic area covered by the items' footprints, in total
    and per acquisition date (UTC)."""
    total = geodesic_area_m2(aoi)
    if total <= 0 or not items:
        return 0.0, {}
    by_date: dict[str, list[BaseGeometry]] = {}
    for item in items:
        if item.get("geometry"):
            t0, _ = item_time_range(item)
            by_date.setdefault(t0.date().isoformat() if t0 else "unknown", []).append(shape(item["geometry"]))

    def frac(geoms: Iterable[BaseGeometry]) -> float:
        covered = shapely.union_all(list(geoms)).intersection(aoi)
        return min(1.0, geodesic_area_m2(covered) / total)

    per_date = {d: round(frac(g), 4) for d, g in sorted(by_date.items())}
    return round(frac(g for gs in by_date.values() for g in gs), 4), per_date


def item_time_range(item: dict) -> tuple[datetime | None, datetime | None]:
    p = item.get("properties") or {}
    t = to_utc(p.get("datetime"))
    return to_utc(p.get("start_datetime")) or t, to_utc(p.get("end_datetime")) or t


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def cloud_cover(item: dict) -> float:
    value = (item.get("properties") or {}).get("eo:cloud_cover")
    return float(value) if value is not None else 0.0


# ------------------------------------------------------------------------------------- search
def event_window(event_date: date, window: str, days: int) -> tuple[date, date]:
    """Pre: the ``days`` before the event (event day excluded); post: the event day and ``days`` after."""
    if window == "pre":
        return event_date - timedelta(days=days), event_date - timedelta(days=1)
    return event_date, event_date + timedelta(days=days)


@dataclass
class SearchSpec:
    aoi: BaseGeometry  # EPSG:4326 polygon(s)
    start: date
    end: date
    window: str = "explicit"  # pre | post | explicit: which way the window widens
    collections: list[str] = field(default_factory=list)
    max_cloud: float = 20.0
    bands: list[str] = field(default_factory=list)  # canonical names the analysis needs
    min_coverage: float = 0.95
    max_items: int = 12


@dataclass
class SearchOutcome:
    items: list[dict]
    collection: str
    start: date
    end: date
    max_cloud: float
    coverage: float
    per_date: dict[str, float]
    bands: list[str]
    attempts: list[dict]
    notes: list[str]


def attempts_for(spec: SearchSpec) -> list[tuple[date, date, float, str]]:
    """The recovery schedule within one collection: as asked, window doubled (backwards for pre,
    forwards for post, both ways otherwise), then the cloud limit relaxed."""
    days = (spec.end - spec.start).days + 1
    if spec.window == "pre":
        wide = (spec.start - timedelta(days=days), spec.end)
    elif spec.window == "post":
        wide = (spec.start, spec.end + timedelta(days=days))
    else:
        wide = (spec.start - timedelta(days=days // 2 + 1), spec.end + timedelta(days=days // 2 + 1))
    relaxed = min(100.0, spec.max_cloud + CLOUD_RELAX_STEP)
    plan = [
        (spec.start, spec.end, spec.max_cloud, "as asked"),
        (*wide, spec.max_cloud, f"window widened to {(wide[1] - wide[0]).days + 1} days"),
    ]
    if relaxed > spec.max_cloud:
        plan.append((*wide, relaxed, f"cloud limit relaxed to {relaxed:g} %"))
    return plan


def normalise_item(item: dict, collection: str) -> dict:
    """The item with ``geofaham:bands`` ({canonical: asset key}) so readers need no provider logic."""
    item = dict(item)
    item.setdefault("collection", collection)
    item["properties"] = {**(item.get("properties") or {}), "geofaham:bands": band_map(item.get("assets") or {})}
    return item


def _select(items: list[dict], aoi: BaseGeometry, max_items: int) -> list[dict]:
    """Least cloudy first, up to ``max_items``; beyond that only items that add AOI coverage."""
    chosen: list[dict] = []
    covered: BaseGeometry | None = None
    for item in sorted(items, key=lambda i: (cloud_cover(i), (i.get("properties") or {}).get("datetime") or "")):
        footprint = shape(item["geometry"]).intersection(aoi)
        adds = (
            covered is None or not footprint.difference(covered).is_empty and footprint.difference(covered).area > 1e-12
        )
        if len(chosen) < max_items or (adds and len(chosen) < 3 * max_items):
            chosen.append(item)
            covered = footprint if covered is None else covered.union(footprint)
    return chosen


def search_with_recovery(provider: Provider, spec: SearchSpec, cancel: threading.Event | None = None) -> SearchOutcome:
    """Search, recovering from no scene / insufficient coverage (see module docstring)."""
    collections = list(spec.collections) or list(provider.default_collections)
    if not collections:
        raise ToolFailed("the catalog has no collections", kind="not_found")
    wanted = [canonical_band(b) or b for b in spec.bands if (canonical_band(b) or b) != "scl"]
    attempts: list[dict] = []
    best: dict | None = None
    for collection in collections:
        for start, end, cloud, why in attempts_for(spec):
            if cancel is not None and cancel.is_set():
                raise ToolFailed("cancelled", kind="cancelled")
            t0 = datetime(start.year, start.month, start.day, tzinfo=UTC)
            t1 = datetime(end.year, end.month, end.day, 23, 59, 59, tzinfo=UTC)
            try:
                found = provider.search(spec.aoi, t0, t1, collection, cloud, limit=max(4 * spec.max_items, 50))
            except StacProviderError as exc:
                if exc.status is not None and 400 <= exc.status < 500 and exc.status != 429:
                    attempts.append({"collection": collection, "why": why, "error": str(exc)})
                    break  # this collection is not served here: next collection
                raise
            items = [normalise_item(i, collection) for i in found]
            usable = [
                i
                for i in items
                if cloud_cover(i) <= cloud
                and i.get("geometry")
                and all(b in i["properties"]["geofaham:bands"] for b in wanted)
            ]
            chosen = _select(usable, spec.aoi, spec.max_items)
            cov, per_date = coverage(chosen, spec.aoi)
            attempt = {
                "collection": collection,
                "start": start.isoformat(),
                "end": end.isoformat(),
                "max_cloud": cloud,
                "found": len(found),
                "usable": len(usable),
                "coverage": cov,
                "why": why,
            }
            attempts.append(attempt)
            if chosen and (best is None or cov > best["coverage"]):
                best = attempt
            if chosen and cov >= spec.min_coverage:
                notes = [a["why"] for a in attempts if a is attempt and a["why"] != "as asked"]
                if collection != collections[0]:
                    notes.insert(
                        0,
                        f"collection {collection} used ({', '.join(collections[: collections.index(collection)])} had no sufficient coverage)",
                    )
                common = sorted(set.intersection(*(set(i["properties"]["geofaham:bands"]) for i in chosen)))
                return SearchOutcome(chosen, collection, start, end, cloud, cov, per_date, common, attempts, notes)
    if best is None:
        raise ToolFailed(
            f"no usable scene for the AOI between {spec.start} and {spec.end} in {', '.join(collections)} "
            f"(also tried a wider window and a relaxed cloud limit)",
            kind="coverage",
            hint="choose another time window or provider, or provide imagery as a raster artifact",
        )
    raise ToolFailed(
        f"imagery covers at most {best['coverage']:.0%} of the AOI ({best['collection']}, "
        f"{best['start']}..{best['end']}, cloud <= {best['max_cloud']:g} %); {spec.min_coverage:.0%} is required",
        kind="coverage",
        hint="accept a lower min_coverage, shrink the AOI or widen the time window",
    )
