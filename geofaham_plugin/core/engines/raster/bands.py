"""One band vocabulary across providers and files.

Earth Search names Sentinel-2 assets by common name (``nir``, ``swir22``, ``scl``), Planetary Computer
by band id (``B08``, ``B12``, ``SCL``), Landsat Collection 2 by common name with the wavelength
(``nir08``), and GeoTIFF exports by description (``B8``, ``B12``). The raster side always asks for the
canonical names below, so a tool never depends on where the pixels came from."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

#: canonical name -> spellings met in STAC asset keys and raster band descriptions (Sentinel-2 ids).
BAND_ALIASES: dict[str, tuple[str, ...]] = {
    "coastal": ("coastal", "B01", "B1"),
    "blue": ("blue", "B02", "B2"),
    "green": ("green", "B03", "B3"),
    "red": ("red", "B04", "B4"),
    "rededge1": ("rededge1", "B05", "B5"),
    "rededge2": ("rededge2", "B06", "B6"),
    "rededge3": ("rededge3", "B07", "B7"),
    "nir": ("nir", "B08", "B8"),
    "nir08": ("nir08", "B8A"),
    "nir09": ("nir09", "B09", "B9"),
    "swir16": ("swir16", "B11", "swir1"),
    "swir22": ("swir22", "B12", "swir2"),
    "scl": ("scl", "SCL"),
    "qa_pixel": ("qa_pixel", "QA_PIXEL"),
}
#: what a canonical band falls back to when a sensor lacks it (Landsat's only NIR band is nir08).
FALLBACKS: dict[str, tuple[str, ...]] = {"nir": ("nir08",)}
_LOOKUP = {alias.lower(): name for name, aliases in BAND_ALIASES.items() for alias in aliases}


def canonical_band(name: str | None) -> str | None:
    """The canonical name of a band description or asset key (``"B8"`` -> ``"nir"``); unknown names are
    returned lower-cased, ``None``/empty stays ``None``."""
    if not name:
        return None
    key = str(name).strip()
    return _LOOKUP.get(key.lower(), key.lower())


def asset_key_for(assets: Mapping[str, dict], band: str) -> str | None:
    """The key of the asset holding canonical ``band`` in a STAC item, trying the aliases, then the
    assets' ``eo:bands`` common names, then the sensor fallbacks; ``None`` when the item lacks it."""
    band = canonical_band(band) or band
    for candidate in (band, *FALLBACKS.get(band, ())):
        for alias in BAND_ALIASES.get(candidate, (candidate,)):
            for key in assets:
                if key.lower() == alias.lower():
                    return key
        for key, asset in assets.items():
            names = [b.get("common_name") or b.get("name") for b in asset.get("eo:bands", []) or []]
            if len(names) == 1 and canonical_band(names[0]) == candidate:
                return key
    return None


def band_map(assets: Mapping[str, dict], wanted: Iterable[str] | None = None) -> dict[str, str]:
    """``{canonical: asset key}`` for every canonical band present (or only ``wanted``)."""
    names = list(wanted) if wanted is not None else list(BAND_ALIASES)
    out = {}
    for name in names:
        key = asset_key_for(assets, name)
        if key is not None:
            out[canonical_band(name) or name] = key
    return out
