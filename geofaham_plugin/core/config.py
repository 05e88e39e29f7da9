"""One typed settings object: where GeoFaham's models, database, imagery, map data and limits come from.

Every ``GEOFAHAM_*`` environment variable is parsed here and nowhere else. Settings are read when
they are used (:func:`settings_from_env` or a group's ``from_env()`` is called at the point of use,
never at import), so changing the environment takes effect on the next run. Inside QGIS the plugin's
settings dialog is layered on top of the environment (``ui/settings.py``); the resulting
:class:`Settings` travels down to the engines with each run (``ToolContext.settings``).

One rule for yes/no values: ``1``, ``true``, ``yes``, ``on`` are true; ``0``, ``false``, ``no``,
``off`` and empty are false (any case). Anything else, and a number or choice that does not parse,
stops with one line naming the variable (:class:`~geofaham_plugin.core.errors.ConfigError`).

No value here is a secret written to disk: API keys are read from the environment (or, in QGIS, from
its authentication manager) when a client is built, and are masked by :meth:`Settings.describe`.

Environment variables (``python -m geofaham_plugin config --variables`` prints this table as Markdown;
a test keeps this docstring and README.md in step with the fields below)

    GEOFAHAM_LLM_BASE_URL                  OpenAI-compatible model server for every role; unset: the embedded local model (default: embedded llama.cpp)
    GEOFAHAM_LLM_MODEL                     model name on that server (default: qwen2.5-coder-1.5b-instruct)
    GEOFAHAM_LLM_API_KEY                   API key of that server, read at run time and never written to disk (default: none)
    GEOFAHAM_LLM_<ROLE>_BASE_URL           the same for one role (PLANNER, PROGRESS, VECTOR, MAPS, STAC, RASTER); also _MODEL, _API_KEY (default: the all-roles value)
    GEOFAHAM_OFFLINE                       no network source is asked (Overpass, Nominatim, STAC APIs); local layers, extracts and gazetteers only (default: off)
    GEOFAHAM_BASEMAP                       an OpenStreetMap basemap (XYZ tiles) behind the results; never asked when GEOFAHAM_OFFLINE is on (the local context layers are shown instead) (default: on (off when offline))
    GEOFAHAM_BASEMAP_URL                   XYZ tile URL template of that basemap ({z}/{x}/{y}; a local tile server or a file:// template works too) (default: https://tile.openstreetmap.org/{z}/{x}/{y}.png)
    GEOFAHAM_OVERPASS_URL                  Overpass API endpoint (default: https://overpass-api.de/api/interpreter)
    GEOFAHAM_OVERPASS_TIMEOUT              seconds one Overpass query may run (default: 180)
    GEOFAHAM_OVERPASS_RETRIES              further attempts after HTTP 429/502/503/504 (default: 3)
    GEOFAHAM_OVERPASS_BACKOFF              first wait between attempts in seconds, doubled each time (default: 2)
    GEOFAHAM_OVERPASS_AREA_CAP_KM2         largest bounding box one Overpass query may cover, km² (default: 2500)
    GEOFAHAM_OVERPASS_FEATURE_CAP          most features one Overpass query may return (default: 50000)
    GEOFAHAM_NOMINATIM_URL                 Nominatim search endpoint for place names the offline gazetteers lack (default: https://nominatim.openstreetmap.org/search)
    GEOFAHAM_STAC_URL                      STAC API, or a local folder of STAC items (default: https://earth-search.aws.element84.com/v1)
    GEOFAHAM_STAC_PROVIDER                 provider kind: earth-search, planetary-computer, stac-api or local (default: guessed from the URL)
    GEOFAHAM_STAC_TIMEOUT                  seconds one STAC request may take (default: 20)
    GEOFAHAM_STAC_RETRIES                  retries of a failed STAC request (default: 3)
    GEOFAHAM_STAC_BACKOFF                  backoff factor between STAC retries in seconds (default: 0.5)
    GEOFAHAM_PC_SAS_URL                    Planetary Computer SAS token endpoint (default: https://planetarycomputer.microsoft.com/api/sas/v1/token)
    GEOFAHAM_SANDBOX_CPU_S                 CPU seconds one sandboxed Python run may use (default: 120)
    GEOFAHAM_SANDBOX_MEMORY_MB             address space of one sandboxed Python run, MB (default: 3072)
    GEOFAHAM_SANDBOX_ALLOW_NO_LANDLOCK     run generated Python even on a kernel without Landlock (files outside the session are then reachable) (default: off)
    GEOFAHAM_AOI_WARN_KM2                  an area of interest larger than this, km², is used with a warning (slow; online sources refuse it) (default: 250000)
    GEOFAHAM_RUN_DEADLINE_S                seconds one run may take, checked between steps and cutting a step's database query; the run then stops with status timed_out and keeps what it computed; 0: no limit (default: 3600)
    GEOFAHAM_STEP_DEADLINE_S               seconds one step's database query may run (damage counts, features inside or near an area, free SQL up to its own 30 s); cut inside the query, within the run's remaining time; 0: no limit (default: 600)
    GEOFAHAM_MODEL_READING                 the model also reads every question (from the example bank, checked by code): a part read two ways is said, never answered; off: code's reading alone (default: on)
    GEOFAHAM_DATA_DIR                      folder of sample layers and OSM extracts (default: ../shared/data beside the repository)
    GEOFAHAM_CACHE                         cache folder for models, wheels and the embedded database (default: ~/.cache/geofaham)
    GEOFAHAM_SESSIONS                      folder of QGIS sessions (default: next to the saved project, else ~/geofaham-sessions)
    GEOFAHAM_PG_DSN                        PostGIS database (libpq URI); unset: the embedded SpatiaLite engine (default: none)
    GEOFAHAM_DASK_SCHEDULER                Dask scheduler address (tcp://host:8786) for raster graphs; unset: local threads (default: none)
    GEOFAHAM_RASTER_COMPRESS               compression of the GeoTIFFs raster tools write: zstd (fast), deflate (for a GDAL built without ZSTD) or none (default: zstd)
    GEOFAHAM_RASTER_JIT                    compile raster band math to one loop per pixel with numba when it is installed (off: numpy) (default: on)
    GEOFAHAM_BLOCK_REAL_MODELS             test hook: refuse every request to a real model server (default: off)
    GEOFAHAM_STORE_CRASH_AT                test hook: the Response Store exits at staged or moved inside a registration (default: none)
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from .domain.names import Role
from .domain.secrets import mask_secrets
from .errors import ConfigError

EMBEDDED_MODEL = "qwen2.5-coder-1.5b-instruct"
EMBEDDED_GGUF = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
TEST_GGUF = "smollm2-135m-instruct-q4_1.gguf"
DEFAULT_STAC_URL = "https://earth-search.aws.element84.com/v1"
DEFAULT_OVERPASS_URL = "https://overpass-api.de/api/interpreter"
DEFAULT_NOMINATIM_URL = "https://nominatim.openstreetmap.org/search"
PC_SAS_URL = "https://planetarycomputer.microsoft.com/api/sas/v1/token"
DEFAULT_BASEMAP_URL = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
REPO_ROOT = Path(__file__).resolve().parents[2]

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"", "0", "false", "no", "off"})

StacProviderKind = Literal["earth-search", "planetary-computer", "stac-api", "local"]


def parse_bool(variable: str, raw: str | None) -> bool:
    """The one yes/no rule (see the module docstring); ``raw=None`` (unset) is false."""
    word = (raw or "").strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ConfigError(
        f"{variable}={raw!r} is not a yes/no value", variable=variable, hint="use 1/true/yes/on or 0/false/no/off"
    )


def setting(env: str, meaning: str, default: Any = PydanticUndefined, *, shown: str | None = None, **field: Any) -> Any:
    """A settings field read from the environment variable ``env``; ``shown`` is the default as documented
    (when the value itself does not read well, e.g. a computed path)."""
    extra: dict[str, Any] = {"env": env}
    if shown is not None:
        extra["shown"] = shown
    return Field(default, description=meaning, json_schema_extra=extra, **field)


def _env_of(info: FieldInfo) -> str | None:
    extra = info.json_schema_extra
    return extra.get("env") if isinstance(extra, dict) else None  # type: ignore[return-value]


G = TypeVar("G", bound="SettingsGroup")


class SettingsGroup(BaseModel):
    """A group of settings, each field naming its environment variable (see :func:`setting`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def env_of(cls, field_name: str) -> str:
        env = _env_of(cls.model_fields[field_name])
        assert env is not None, field_name
        return env

    @classmethod
    def from_env(cls: type[G], env: Mapping[str, str] | None = None) -> G:
        """This group from the environment (``os.environ`` unless given), parsed now."""
        env = os.environ if env is None else env
        raw: dict[str, Any] = {}
        for name, info in cls.model_fields.items():
            variable = _env_of(info)
            if variable is None or variable not in env:
                continue
            value = env[variable].strip()
            if info.annotation is bool:
                raw[name] = parse_bool(variable, value)
            elif value:
                raw[name] = value
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = str(error["loc"][0])
            variable = cls.env_of(field)
            raise ConfigError(
                f"{variable}={env[variable].strip()!r} is not valid ({error['msg']})",
                variable=variable,
                hint=f"expected: {cls.model_fields[field].description}; unset it for the default",
            ) from None


class NetworkSettings(SettingsGroup):
    offline: bool = setting(
        "GEOFAHAM_OFFLINE",
        "no network source is asked (Overpass, Nominatim, STAC APIs); local layers, extracts and gazetteers only",
        False,
        shown="off",
    )


class MapSettings(SettingsGroup):
    """What the map shows behind a run's results (the QGIS side and the situation report)."""

    basemap: bool = setting(
        "GEOFAHAM_BASEMAP",
        "an OpenStreetMap basemap (XYZ tiles) behind the results; never asked when GEOFAHAM_OFFLINE is on "
        "(the local context layers are shown instead)",
        True,
        shown="on (off when offline)",
    )
    basemap_url: str = setting(
        "GEOFAHAM_BASEMAP_URL",
        "XYZ tile URL template of that basemap ({z}/{x}/{y}; a local tile server or a file:// template works too)",
        DEFAULT_BASEMAP_URL,
    )


class OverpassSettings(SettingsGroup):
    url: str = setting("GEOFAHAM_OVERPASS_URL", "Overpass API endpoint", DEFAULT_OVERPASS_URL)
    timeout_s: float = setting("GEOFAHAM_OVERPASS_TIMEOUT", "seconds one Overpass query may run", 180.0, gt=0)
    retries: int = setting("GEOFAHAM_OVERPASS_RETRIES", "further attempts after HTTP 429/502/503/504", 3, ge=0)
    backoff_s: float = setting(
        "GEOFAHAM_OVERPASS_BACKOFF", "first wait between attempts in seconds, doubled each time", 2.0, ge=0
    )
    area_cap_km2: float = setting(
        "GEOFAHAM_OVERPASS_AREA_CAP_KM2", "largest bounding box one Overpass query may cover, km²", 2500.0, gt=0
    )
    feature_cap: int = setting(
        "GEOFAHAM_OVERPASS_FEATURE_CAP", "most features one Overpass query may return", 50_000, ge=1
    )


class NominatimSettings(SettingsGroup):
    url: str = setting(
        "GEOFAHAM_NOMINATIM_URL",
        "Nominatim search endpoint for place names the offline gazetteers lack",
        DEFAULT_NOMINATIM_URL,
    )


class StacSettings(SettingsGroup):
    url: str = setting("GEOFAHAM_STAC_URL", "STAC API, or a local folder of STAC items", DEFAULT_STAC_URL)
    provider: StacProviderKind | None = setting(
        "GEOFAHAM_STAC_PROVIDER",
        "provider kind: earth-search, planetary-computer, stac-api or local",
        None,
        shown="guessed from the URL",
    )
    timeout_s: float = setting("GEOFAHAM_STAC_TIMEOUT", "seconds one STAC request may take", 20.0, gt=0)
    retries: int = setting("GEOFAHAM_STAC_RETRIES", "retries of a failed STAC request", 3, ge=0)
    backoff_s: float = setting("GEOFAHAM_STAC_BACKOFF", "backoff factor between STAC retries in seconds", 0.5, ge=0)
    pc_sas_url: str = setting("GEOFAHAM_PC_SAS_URL", "Planetary Computer SAS token endpoint", PC_SAS_URL)


class RunSettings(SettingsGroup):
    deadline_s: float = setting(
        "GEOFAHAM_RUN_DEADLINE_S",
        "seconds one run may take, checked between steps and cutting a step's database query; the run then stops "
        "with status timed_out and keeps what it computed; 0: no limit",
        3600.0,
        ge=0,
    )
    step_deadline_s: float = setting(
        "GEOFAHAM_STEP_DEADLINE_S",
        "seconds one step's database query may run (damage counts, features inside or near an area, free SQL "
        "up to its own 30 s); cut inside the query, within the run's remaining time; 0: no limit",
        600.0,
        ge=0,
    )
    model_reading: bool = setting(
        "GEOFAHAM_MODEL_READING",
        "the model also reads every question (from the example bank, checked by code): a part read two ways is "
        "said, never answered; off: code's reading alone",
        True,
        shown="on",
    )


class SandboxSettings(SettingsGroup):
    cpu_s: int = setting("GEOFAHAM_SANDBOX_CPU_S", "CPU seconds one sandboxed Python run may use", 120, ge=1)
    memory_mb: int = setting(
        "GEOFAHAM_SANDBOX_MEMORY_MB", "address space of one sandboxed Python run, MB", 3072, ge=256
    )
    allow_no_landlock: bool = setting(
        "GEOFAHAM_SANDBOX_ALLOW_NO_LANDLOCK",
        "run generated Python even on a kernel without Landlock (files outside the session are then reachable)",
        False,
        shown="off",
    )


class AoiSettings(SettingsGroup):
    warn_km2: float = setting(
        "GEOFAHAM_AOI_WARN_KM2",
        "an area of interest larger than this, km², is used with a warning (slow; online sources refuse it)",
        250_000.0,
        gt=0,
    )


def default_data_dir() -> Path:
    """``../shared/data`` beside the repository, else ``/work/shared/data`` (when it exists)."""
    for candidate in (REPO_ROOT.parent / "shared" / "data", Path("/work/shared/data")):
        if candidate.is_dir():
            return candidate
    return REPO_ROOT.parent / "shared" / "data"


class PathSettings(SettingsGroup):
    data_dir: Path = setting(
        "GEOFAHAM_DATA_DIR",
        "folder of sample layers and OSM extracts",
        default_factory=default_data_dir,
        shown="../shared/data beside the repository",
    )
    cache_dir: Path = setting(
        "GEOFAHAM_CACHE",
        "cache folder for models, wheels and the embedded database",
        default_factory=lambda: Path.home() / ".cache" / "geofaham",
        shown="~/.cache/geofaham",
    )
    sessions_dir: Path | None = setting(
        "GEOFAHAM_SESSIONS",
        "folder of QGIS sessions",
        None,
        shown="next to the saved project, else ~/geofaham-sessions",
    )

    @field_validator("data_dir", "cache_dir", "sessions_dir")
    @classmethod
    def _home(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None


class DatabaseSettings(SettingsGroup):
    pg_dsn: str | None = setting(
        "GEOFAHAM_PG_DSN", "PostGIS database (libpq URI); unset: the embedded SpatiaLite engine", None
    )


class ComputeSettings(SettingsGroup):
    """Read by the raster engine at each computation (no run passes it down; not a dialog setting)."""

    dask_scheduler: str | None = setting(
        "GEOFAHAM_DASK_SCHEDULER",
        "Dask scheduler address (tcp://host:8786) for raster graphs; unset: local threads",
        None,
    )
    raster_compress: Literal["zstd", "deflate", "none"] = setting(
        "GEOFAHAM_RASTER_COMPRESS",
        "compression of the GeoTIFFs raster tools write: zstd (fast), deflate (for a GDAL built without ZSTD) or none",
        "zstd",
    )
    raster_jit: bool = setting(
        "GEOFAHAM_RASTER_JIT",
        "compile raster band math to one loop per pixel with numba when it is installed (off: numpy)",
        True,
        shown="on",
    )

    @property
    def raster_codec(self) -> Literal["zstd", "deflate", "none"]:
        """``raster_compress`` as this GDAL can write it: zstd falls back to deflate in a GDAL built without
        ZSTD (a QGIS whose GDAL could not read the file back would show nothing)."""
        if self.raster_compress == "zstd" and not _gdal_writes_zstd():
            return "deflate"
        return self.raster_compress

    @property
    def cog_options(self) -> dict[str, str]:
        """GDAL COG driver options for ``raster_codec``: the codec at level 1 (float rasters barely
        compress; level 1 is several times faster than the drivers' defaults, 6 and 9)."""
        codec = self.raster_codec
        level = {} if codec == "none" else {"LEVEL": "1"}
        return {"COMPRESS": codec.upper(), **level}


@functools.cache
def _gdal_writes_zstd() -> bool:
    """Whether this process's GDAL writes (and reads back) a ZSTD GeoTIFF: tried once, in memory."""
    try:
        import warnings

        import numpy as np
        from rasterio.errors import NotGeoreferencedWarning
        from rasterio.io import MemoryFile

        with warnings.catch_warnings(), MemoryFile() as mem:
            warnings.simplefilter("ignore", NotGeoreferencedWarning)  # a 1-pixel probe has no place on Earth
            with mem.open(driver="GTiff", width=1, height=1, count=1, dtype="uint8", compress="zstd") as dst:
                dst.write(np.ones((1, 1, 1), dtype="uint8"))
            with mem.open() as src:
                return src.compression is not None and src.compression.name == "zstd"
    except Exception:  # noqa: BLE001 — no rasterio, or a GDAL that refuses the codec: deflate
        return False


class TestHooks(SettingsGroup):
    """For the test suite only; not part of :class:`Settings` (read where they act, at that moment)."""

    __test__ = False  # not a pytest test class

    block_real_models: bool = setting(
        "GEOFAHAM_BLOCK_REAL_MODELS", "test hook: refuse every request to a real model server", False, shown="off"
    )
    store_crash_at: Literal["staged", "moved"] | None = setting(
        "GEOFAHAM_STORE_CRASH_AT", "test hook: the Response Store exits at staged or moved inside a registration", None
    )


class ModelEndpoint(BaseModel):
    """One role's model. ``base_url=None`` means the embedded local llama.cpp server."""

    model_config = ConfigDict(frozen=True)

    base_url: str | None = None
    model: str = EMBEDDED_MODEL
    api_key: SecretStr | None = None

    @property
    def embedded(self) -> bool:
        return self.base_url is None


#: the groups of :class:`Settings`, by field name
GROUPS: dict[str, type[SettingsGroup]] = {
    "network": NetworkSettings,
    "map": MapSettings,
    "overpass": OverpassSettings,
    "nominatim": NominatimSettings,
    "stac": StacSettings,
    "sandbox": SandboxSettings,
    "aoi": AoiSettings,
    "run": RunSettings,
    "paths": PathSettings,
    "database": DatabaseSettings,
    "compute": ComputeSettings,
}


class Settings(BaseModel):
    """Everything a run needs to know about its surroundings (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    models: dict[Role, ModelEndpoint]
    network: NetworkSettings = Field(default_factory=NetworkSettings)
    map: MapSettings = Field(default_factory=MapSettings)
    overpass: OverpassSettings = Field(default_factory=OverpassSettings)
    nominatim: NominatimSettings = Field(default_factory=NominatimSettings)
    stac: StacSettings = Field(default_factory=StacSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    aoi: AoiSettings = Field(default_factory=AoiSettings)
    run: RunSettings = Field(default_factory=RunSettings)
    paths: PathSettings = Field(default_factory=PathSettings)
    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    compute: ComputeSettings = Field(default_factory=ComputeSettings)

    @property
    def embedded_model_path(self) -> Path:
        return self.paths.cache_dir / "models" / EMBEDDED_GGUF

    @property
    def test_model_path(self) -> Path:
        return self.paths.cache_dir / "models" / TEST_GGUF

    @property
    def basemap_on(self) -> bool:
        """The online basemap is shown: asked for (GEOFAHAM_BASEMAP) and not working offline."""
        return self.map.basemap and not self.network.offline

    def endpoint(self, role: Role | str) -> ModelEndpoint:
        return self.models[Role(role)]

    def updated(self, **groups: Mapping[str, Any]) -> Settings:
        """A copy with fields of some groups changed and validated: ``s.updated(network={"offline": True})``."""
        update: dict[str, SettingsGroup] = {}
        for name, changes in groups.items():
            if name not in GROUPS:
                raise ValueError(f"unknown settings group {name!r}; groups: {', '.join(GROUPS)}")
            current = getattr(self, name)
            update[name] = GROUPS[name].model_validate({**current.model_dump(), **changes})
        return self.model_copy(update=update)

    def describe(self) -> dict[str, Any]:
        """A printable summary with keys and passwords masked."""
        out: dict[str, Any] = {
            "models": {
                role.value: {
                    "server": mask_secrets(ep.base_url) if ep.base_url else "embedded llama.cpp (local)",
                    "model": ep.model,
                    "api_key": _presence(ep.api_key),
                }
                for role, ep in self.models.items()
            },
        }
        for name in GROUPS:  # URLs and the DSN may carry a password, a key or a token
            dumped = getattr(self, name).model_dump(mode="json")
            out[name] = {k: mask_secrets(v) if isinstance(v, str) else v for k, v in dumped.items()}
        if not self.database.pg_dsn:
            out["database"]["pg_dsn"] = "embedded SpatiaLite engine"
        return out


def _presence(key: SecretStr | None) -> str:
    """Whether a key is set, never the key."""
    return "set" if key else "none"


def _mask_dsn(dsn: str) -> str:
    """The DSN with its password masked (engines/db describes its connection with it): :func:`mask_secrets`."""
    return mask_secrets(dsn)


def _models_from_env(env: Mapping[str, str]) -> dict[Role, ModelEndpoint]:
    def get(name: str) -> str | None:
        return env.get(name, "").strip() or None

    models = {}
    for role in Role:
        prefix = f"GEOFAHAM_LLM_{role.value.upper()}_"
        base_url = get(prefix + "BASE_URL") or get("GEOFAHAM_LLM_BASE_URL")
        model = get(prefix + "MODEL") or get("GEOFAHAM_LLM_MODEL") or EMBEDDED_MODEL
        key = get(prefix + "API_KEY") or get("GEOFAHAM_LLM_API_KEY")
        models[role] = ModelEndpoint(base_url=base_url, model=model, api_key=SecretStr(key) if key else None)
    return models


def settings_from_env(env: Mapping[str, str] | None = None) -> Settings:
    """Every group parsed from ``env`` (``os.environ`` unless given) now; a bad value raises ConfigError."""
    env = os.environ if env is None else env
    groups = {name: group.from_env(env) for name, group in GROUPS.items()}
    return Settings(models=_models_from_env(env), **groups)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ documentation
#: variables that are not one field of a group (the model endpoints, per role)
_MODEL_VARIABLES: tuple[tuple[str, str, str], ...] = (
    (
        "GEOFAHAM_LLM_BASE_URL",
        "OpenAI-compatible model server for every role; unset: the embedded local model",
        "embedded llama.cpp",
    ),
    ("GEOFAHAM_LLM_MODEL", "model name on that server", EMBEDDED_MODEL),
    ("GEOFAHAM_LLM_API_KEY", "API key of that server, read at run time and never written to disk", "none"),
    (
        "GEOFAHAM_LLM_<ROLE>_BASE_URL",
        "the same for one role (" + ", ".join(r.value.upper() for r in Role) + "); also _MODEL, _API_KEY",
        "the all-roles value",
    ),
)


def _shown_default(info: FieldInfo) -> str:
    extra = info.json_schema_extra
    if isinstance(extra, dict) and "shown" in extra:
        return str(extra["shown"])
    value = info.get_default(call_default_factory=True)
    if value is None:
        return "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def variables() -> list[tuple[str, str, str]]:
    """Every environment variable: (name, meaning, default as documented), in documentation order."""
    rows = list(_MODEL_VARIABLES)
    groups: tuple[type[SettingsGroup], ...] = (*GROUPS.values(), TestHooks)
    for group in groups:
        for info in group.model_fields.values():
            env = _env_of(info)
            if env is not None:
                rows.append((env, info.description or "", _shown_default(info)))
    return rows


def variables_text() -> str:
    """The table of this module's docstring."""
    return "\n".join(f"    {name:<38} {meaning} (default: {default})" for name, meaning, default in variables())


def variables_markdown() -> str:
    """The table of README.md."""
    lines = ["| Variable | Meaning | Default |", "|---|---|---|"]
    lines += [f"| `{name}` | {meaning} | {default} |" for name, meaning, default in variables()]
    return "\n".join(lines)
