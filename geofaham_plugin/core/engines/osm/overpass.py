"""The Overpass client: Overpass QL from a :class:`~.query.FeatureQuery`, sent with a direct HTTP POST
(not osmnx) so the endpoint, timeouts, retries and the error pages Overpass sends with HTTP 200 are under
our control and testable against a local server; bounded by an area cap and a feature cap."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import geopandas as gpd
import httpx

from ...config import Settings
from ...domain.geodesy import bbox_area_km2
from ...errors import ToolFailed
from . import USER_AGENT
from .geometry import elements_to_gdf
from .query import ELEMENTS, FeatureQuery, Wanted


def _ql_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _ql_filter(key: str, wanted: Wanted) -> str:
    k = _ql_string(key)
    if wanted is True:
        return f'[{k}][{k}!="no"]'
    if len(wanted) == 1:
        return f"[{k}={_ql_string(wanted[0])}]"
    alternatives = "|".join(re.sub(r"([.\[\]{}()\\*+?|^$])", r"\\\1", v) for v in wanted)
    return f"[{k}~{_ql_string('^(' + alternatives + ')$')}]"


def overpass_ql(query: FeatureQuery, bbox: tuple[float, float, float, float], *, timeout_s: int, limit: int) -> str:
    """Overpass QL: the union of one statement per selector (and element type), inside ``bbox``
    (minx, miny, maxx, maxy), with full geometries and at most ``limit`` elements."""
    w, s, e, n = bbox
    element_kinds = ["nwr"] if set(query.elements) == set(ELEMENTS) else list(query.elements)
    statements = [
        f"  {kind}{''.join(_ql_filter(k, v) for k, v in sel.items())};"
        for sel in query.selectors
        for kind in element_kinds
    ]
    return (
        f"[out:json][timeout:{timeout_s}][bbox:{s:.7f},{w:.7f},{n:.7f},{e:.7f}];\n(\n"
        + "\n".join(statements)
        + f"\n);\nout geom qt {limit};"
    )


_OVERLOAD = re.compile(r"runtime error|timed out|timeout|out of memory|too busy|dispatcher", re.I)
_RETRY_STATUS = {429, 502, 503, 504}
_HINT_SMALLER = "use a smaller area (or a smaller buffer) or fewer/narrower feature classes, or retry later"


@dataclass
class OverpassResult:
    features: gpd.GeoDataFrame
    query: str
    remarks: list[str] = field(default_factory=list)


@dataclass
class OverpassClient:
    """A bounded Overpass client: area and feature caps, a request timeout, and retries with exponential
    backoff (``backoff_s * 2**attempt``, at least the server's Retry-After up to a minute) on 429/50x."""

    url: str
    timeout_s: float = 180.0
    retries: int = 3  # further attempts after the first, on 429/502/503/504
    backoff_s: float = 2.0
    area_cap_km2: float = 2500.0
    feature_cap: int = 50_000
    sleep: Callable[[float], object] = time.sleep  # time.sleep, or a cancel event's wait
    cancel: threading.Event | None = None
    offline: bool = False  # offline mode: no request is sent

    @classmethod
    def from_settings(cls, settings: Settings, cancel: threading.Event | None = None) -> OverpassClient:
        """Endpoint and bounds from ``settings.overpass`` (GEOFAHAM_OVERPASS_*), offline mode from
        ``settings.network``. A backoff wait ends on cancel."""
        o = settings.overpass
        return cls(
            url=o.url,
            cancel=cancel,
            sleep=cancel.wait if cancel else time.sleep,
            timeout_s=o.timeout_s,
            retries=o.retries,
            backoff_s=o.backoff_s,
            area_cap_km2=o.area_cap_km2,
            feature_cap=o.feature_cap,
            offline=settings.network.offline,
        )

    def check_area(self, bbox: tuple[float, float, float, float]) -> float:
        area = bbox_area_km2(bbox)
        if area > self.area_cap_km2:
            raise ToolFailed(
                f"the area to search is {area:,.0f} km² (bounding box of the AOI and buffer), above the "
                f"{self.area_cap_km2:,.0f} km² cap for one Overpass query",
                kind="invalid_input",
                hint="use a smaller AOI or buffer, or split the area",
            )
        return area

    def fetch(self, query: FeatureQuery, bbox: tuple[float, float, float, float]) -> OverpassResult:
        self.check_area(bbox)  # before any request
        ql = overpass_ql(query, bbox, timeout_s=int(self.timeout_s), limit=self.feature_cap + 1)
        payload = self._post(ql)
        elements = payload.get("elements") or []
        if len(elements) > self.feature_cap:
            raise ToolFailed(
                f"more than {self.feature_cap:,} OpenStreetMap {query.label} features in this area "
                f"(the cap for one query)",
                kind="invalid_input",
                hint="use a smaller area, road_class='major' for roads, or narrower tags",
            )
        remark = payload.get("remark")
        return OverpassResult(elements_to_gdf(elements, query), ql, [remark] if remark else [])

    @property
    def deadline_s(self) -> float:
        """Wall-clock limit of one request, body included: the server's own ``[timeout:]`` plus a grace
        to report it (half of it, 1 to 15 s). A socket timeout alone never fires on a server that
        trickles a byte every second (one such hung 100 s under a 5 s timeout)."""
        return self.timeout_s + min(15.0, max(1.0, self.timeout_s / 2))

    def _request(self, ql: str) -> httpx.Response:
        """POST ``ql`` and read the whole answer within :attr:`deadline_s` (raises httpx.TimeoutException
        past it); returns a response whose body is read."""
        deadline = time.monotonic() + self.deadline_s
        with (
            httpx.Client(timeout=self.deadline_s) as client,
            client.stream(
                "POST",
                self.url,
                data={"data": ql},
                headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
            ) as response,
        ):
            chunks = []
            for chunk in response.iter_raw():
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("deadline passed while reading the answer", request=response.request)
            # a complete response (decoded again from the raw bytes) for the callers
            return httpx.Response(
                response.status_code, headers=response.headers, content=b"".join(chunks), request=response.request
            )

    def _post(self, ql: str) -> dict:
        if self.offline:
            raise ToolFailed(
                f"Overpass ({self.url}) is not asked in offline mode",
                kind="not_found",
                hint="go online (GEOFAHAM_OFFLINE or the offline setting), or add an OSM extract",
            )
        failure: ToolFailed | None = None
        for attempt in range(self.retries + 1):
            if self.cancel is not None and self.cancel.is_set():
                raise ToolFailed("cancelled", kind="cancelled")
            try:
                response = self._request(ql)
            except httpx.TimeoutException:
                raise ToolFailed(
                    f"Overpass ({self.url}) did not answer within {self.deadline_s:g} s",
                    kind="timeout",
                    hint=_HINT_SMALLER,
                ) from None
            except httpx.HTTPError as exc:
                raise ToolFailed(
                    f"Overpass ({self.url}) could not be reached: {exc}",
                    kind="error",
                    hint="check the network or GEOFAHAM_OVERPASS_URL; GEOFAHAM_OFFLINE=1 uses local sources only",
                ) from None
            if response.status_code not in _RETRY_STATUS:
                return _parse(response, self.url)
            failure = ToolFailed(
                f"Overpass ({self.url}) answered HTTP {response.status_code} "
                f"({'rate limited' if response.status_code == 429 else 'busy or timed out'}) "
                f"{attempt + 1} time{'s' if attempt else ''}",
                kind="timeout" if response.status_code != 429 else "error",
                hint=_HINT_SMALLER
                if response.status_code != 429
                else "the Overpass server limits requests: retry "
                "in a few minutes or configure another GEOFAHAM_OVERPASS_URL",
            )
            if attempt < self.retries:
                delay = self.backoff_s * 2**attempt
                retry_after = response.headers.get("Retry-After", "")
                if retry_after.isdigit():
                    delay = max(delay, min(float(retry_after), 60.0))
                self.sleep(delay)
        assert failure is not None
        raise failure


def _parse(response: httpx.Response, url: str) -> dict:
    """The JSON body; Overpass reports timeouts and memory exhaustion inside an HTTP 200 (a "remark"
    in JSON, or an HTML error page), which must not pass as an empty or partial result."""
    text, status = response.text, response.status_code
    if status != 200 or "html" in response.headers.get("content-type", "") or text.lstrip().startswith("<"):
        message = " ".join(re.sub(r"<[^>]+>", " ", text).split())[:300]
        if status != 400 and _OVERLOAD.search(message):  # 400: our query was rejected, not overload
            raise ToolFailed(f"Overpass gave up on the query: {message}", kind="timeout", hint=_HINT_SMALLER)
        raise ToolFailed(
            f"Overpass ({url}) answered HTTP {status}: {message or 'no message'}",
            kind="error",
            hint="check GEOFAHAM_OVERPASS_URL",
        )
    try:
        payload = response.json()
    except ValueError:
        raise ToolFailed(
            f"Overpass ({url}) answered with something that is not JSON: {text[:200]!r}",
            kind="error",
            hint="check GEOFAHAM_OVERPASS_URL",
        ) from None
    remark = str(payload.get("remark") or "")
    if remark and _OVERLOAD.search(remark):
        raise ToolFailed(f"Overpass gave up on the query: {remark}", kind="timeout", hint=_HINT_SMALLER)
    return payload
