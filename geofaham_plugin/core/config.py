"""Where GeoFaham's models, database, imagery catalogue and map data come from.

Resolved from environment variables (the CLI, tests and bench) or, inside QGIS, from the plugin's
settings on top of them. No value here is a secret written to disk: API keys are read from the
environment (or, in QGIS, from its authentication manager) when a client is built.

Environment variables
    GEOFAHAM_LLM_BASE_URL, GEOFAHAM_LLM_MODEL, GEOFAHAM_LLM_API_KEY
        the OpenAI-compatible server for every role; without a base URL the embedded local model runs
    GEOFAHAM_LLM_<ROLE>_BASE_URL, _MODEL, _API_KEY     the same for one role (PLANNER, PROGRESS,
        VECTOR, MAPS, STAC, RASTER), overriding the defaults above
    GEOFAHAM_PG_DSN          a PostGIS database (libpq URI); without it the embedded engine is used
    GEOFAHAM_STAC_URL        a STAC API (default: Earth Search)
    GEOFAHAM_OVERPASS_URL    an Overpass API endpoint (default: overpass-api.de)
    GEOFAHAM_CACHE           cache folder for models and wheels (default: ~/.cache/geofaham)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from .domain.names import Role


EMBEDDED_MODEL = "qwen2.5-coder-1.5b-instruct"
EMBEDDED_GGUF = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
TEST_GGUF = "smollm2-135m-instruct-q4_1.gguf"
DEFAULT_STAC_URL = "https://earth-search.aws.element84.com/v1"
DEFAULT_OVERPASS_URL = "https://overpass-api.de/api/interpreter"


class ModelEndpoint(BaseModel):
    """One role's model. ``base_url=None`` means the embedded local llama.cpp server."""

    model_config = ConfigDict(frozen=True)

    base_url: str | None = None
    model: str = EMBEDDED_MODEL
    api_key: SecretStr | None = None

    @property
    def embedded(self) -> bool:
        return self.base_url is None


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True)

    models: dict[Role, ModelEndpoint]
    postgis_dsn: str | None = None
    stac_url: str = DEFAULT_STAC_URL
    overpass_url: str = DEFAULT_OVERPASS_URL
    cache_dir: Path = Field(default_factory=lambda: Path.home() / ".cache" / "geofaham")

    @property
    def embedded_model_path(self) -> Path:
        return self.cache_dir / "models" / EMBEDDED_GGUF

    @property
    def test_model_path(self) -> Path:
        return self.cache_dir / "models" / TEST_GGUF

    def endpoint(self, role: Role | str) -> ModelEndpoint:
        return self.models[Role(role)]

    def describe(self) -> dict:
        """A printable summary with keys masked."""
        return {
            "models": {
                role.value: {
                    "server": ep.base_url or "embedded llama.cpp (local)",
                    "model": ep.model,
                    "api_key": "set" if ep.api_key else "none",
                }
                for role, ep in self.models.items()
            },
            "postgis": _mask_dsn(self.postgis_dsn) if self.postgis_dsn else "embedded engine",
            "stac": self.stac_url,
            "overpass": self.overpass_url,
            "cache": str(self.cache_dir),
        }


def _mask_dsn(dsn: str) -> str:
    if "@" in dsn and "://" in dsn:
        scheme, rest = dsn.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        user = creds.split(":", 1)[0]
        return f"{scheme}://{user}:***@{host}"
    return dsn


def settings_from_env(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env

    def get(name: str) -> str | None:
        value = env.get(name, "").strip()
        return value or None

    models = {}
    for role in Role:
        prefix = f"GEOFAHAM_LLM_{role.value.upper()}_"
        base_url = get(prefix + "BASE_URL") or get("GEOFAHAM_LLM_BASE_URL")
        model = get(prefix + "MODEL") or get("GEOFAHAM_LLM_MODEL") or EMBEDDED_MODEL
        key = get(prefix + "API_KEY") or get("GEOFAHAM_LLM_API_KEY")
        models[role] = ModelEndpoint(base_url=base_url, model=model, api_key=SecretStr(key) if key else None)
    cache = get("GEOFAHAM_CACHE")
    return Settings(
        models=models,
        postgis_dsn=get("GEOFAHAM_PG_DSN"),
        stac_url=get("GEOFAHAM_STAC_URL") or DEFAULT_STAC_URL,
        overpass_url=get("GEOFAHAM_OVERPASS_URL") or DEFAULT_OVERPASS_URL,
        **({"cache_dir": Path(cache).expanduser()} if cache else {}),
    )
