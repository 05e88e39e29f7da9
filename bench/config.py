"""Model configurations of the bench: which model serves each role, as a JSON file.

A configuration names the planner mode (guided for small local models, free for strong ones) and one
model per role (``planner``, ``progress``, ``vector``, ``maps``, ``stac``, ``raster``; ``default``
covers the roles not listed), plus an optional ``judge`` model for the LLM judge. A role is either the
embedded local model (``{"embedded": true}``) or an OpenAI-compatible endpoint whose API key is read
from the environment variable named in ``api_key_env`` — keys are never written to a file.

The same file drives the core through its own settings (``GEOFAHAM_LLM_<ROLE>_BASE_URL/_MODEL/
_API_KEY``), so a bench run exercises exactly what the plugin and the CLI run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

if TYPE_CHECKING:
    from geofaham_plugin.core.config import Settings
    from geofaham_plugin.core.llm import ChatModel
    from geofaham_plugin.core.orchestrator.orchestrator import OrchestratorConfig

BENCH_DIR = Path(__file__).resolve().parent
CONFIG_DIR = BENCH_DIR / "configs"
DEFAULT_CONFIG = CONFIG_DIR / "embedded.json"
ROLES = ("planner", "progress", "vector", "maps", "stac", "raster")


class RoleModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    embedded: bool = False
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = Field(default=None, description="name of the environment variable holding the key")
    json_mode: Literal["auto", "llamacpp", "openai"] = "auto"

    @model_validator(mode="after")
    def _one_kind(self) -> RoleModel:
        if self.embedded == bool(self.base_url):
            raise ValueError("a role is either embedded: true or has a base_url")
        return self

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def describe(self) -> str:
        from geofaham_plugin.core.domain.secrets import mask_secrets

        return "embedded local model" if self.embedded else mask_secrets(f"{self.model} @ {self.base_url}")


class ModelConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""
    mode: Literal["guided", "free"] = "guided"
    model_synthesis: bool = False
    max_turns: int | None = None
    stall_budget: int | None = None
    max_replans: int | None = None
    roles: dict[str, RoleModel]
    judge: RoleModel | None = None

    @model_validator(mode="after")
    def _roles_known(self) -> ModelConfig:
        unknown = set(self.roles) - set(ROLES) - {"default"}
        if unknown:
            raise ValueError(f"unknown roles {sorted(unknown)}; roles are {', '.join(ROLES)} and default")
        missing = [r for r in ROLES if r not in self.roles and "default" not in self.roles]
        if missing:
            raise ValueError(f"no model for roles {missing} (add them or a 'default')")
        return self

    def role(self, role: str) -> RoleModel:
        return self.roles.get(role) or self.roles["default"]

    @property
    def any_embedded(self) -> bool:
        return any(self.role(r).embedded for r in ROLES)

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The environment the core reads its settings from: ``base`` without any GEOFAHAM_LLM_*
        variable, plus this configuration's endpoints (keys looked up now, from ``os.environ``)."""
        env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith("GEOFAHAM_LLM_")}
        for role in ROLES:
            rm = self.role(role)
            if rm.embedded:
                continue
            prefix = f"GEOFAHAM_LLM_{role.upper()}_"
            env[prefix + "BASE_URL"] = rm.base_url or ""
            if rm.model:
                env[prefix + "MODEL"] = rm.model
            key = rm.api_key()
            if key:
                env[prefix + "API_KEY"] = key
        return env

    def settings(self, base: dict[str, str] | None = None) -> Settings:
        from geofaham_plugin.core.config import settings_from_env

        return settings_from_env(self.env(base))

    def orchestrator_config(self) -> OrchestratorConfig:
        from geofaham_plugin.core.orchestrator.orchestrator import OrchestratorConfig

        extra = {
            k: getattr(self, k) for k in ("max_turns", "stall_budget", "max_replans") if getattr(self, k) is not None
        }
        return OrchestratorConfig(mode=self.mode, model_synthesis=self.model_synthesis, **extra)

    def public(self) -> dict:
        """What goes into results: endpoints and key variable names, never keys."""
        return self.model_dump(mode="json", exclude_none=True)


def load_config(path: Path | str | None = None) -> ModelConfig:
    """A configuration file; a bare name (``embedded``) is looked up in bench/configs/."""
    if path is None:
        path = DEFAULT_CONFIG
    p = Path(path)
    if not p.exists() and not p.suffix and (CONFIG_DIR / f"{p.name}.json").exists():
        p = CONFIG_DIR / f"{p.name}.json"
    return ModelConfig.model_validate(json.loads(p.read_text(encoding="utf-8")))


def build_models(
    config: ModelConfig, settings: Settings, shared_embedded_url: str | None = None
) -> dict[str, ChatModel]:
    """One chat model per role. Remote roles: the core's OpenAI-compatible client. Embedded roles: the
    core's lazy embedded server, or — when the runner shares one server across tasks — a client of that
    server configured exactly like the core's embedded model (llama.cpp JSON mode, no HTTP retries)."""
    from geofaham_plugin.core.config import EMBEDDED_MODEL, ModelEndpoint
    from geofaham_plugin.core.llm import OpenAIChatModel, build_llm

    models: dict[str, ChatModel] = {}
    embedded = None
    if config.any_embedded and shared_embedded_url:
        embedded = OpenAIChatModel(
            ModelEndpoint(base_url=shared_embedded_url, model=EMBEDDED_MODEL),
            json_mode="llamacpp",
            timeout=300,
            max_tokens=1024,
            http_retries=0,
        )
    core = build_llm(settings)  # lazy: builds clients and (unstarted) embedded servers only
    for role in ROLES:
        rm = config.role(role)
        if rm.embedded:
            models[role] = embedded or core.model_for(role)
        elif rm.json_mode != "auto":
            models[role] = OpenAIChatModel(settings.endpoint(role), json_mode=rm.json_mode)
        else:
            models[role] = core.model_for(role)
    return models


def system_models(config: ModelConfig | dict) -> set[str]:
    """The model names the system itself runs with under ``config`` (its roles; the embedded model when
    a role is embedded), lower-cased: a judge among them grades its own work."""
    from geofaham_plugin.core.config import EMBEDDED_MODEL

    roles = (
        config.roles
        if isinstance(config, ModelConfig)
        else {k: RoleModel.model_validate(v) for k, v in (config.get("roles") or {}).items()}
    )
    names = {(rm.model or "").lower() for rm in roles.values() if rm.model}
    if any(rm.embedded for rm in roles.values()):
        names.add(EMBEDDED_MODEL.lower())
    return names


def independent_judge(config: ModelConfig) -> RoleModel | None:
    """The configuration's ``judge`` entry when it is a model the system does not run with; None
    otherwise (no judge entry, or the judge is one of the system's own models)."""
    rm = config.judge
    if rm is None:
        return None
    if rm.embedded and any(r.embedded for r in config.roles.values()):
        return None
    if (
        rm.model
        and rm.model.lower() in system_models(config)
        and any(r.base_url == rm.base_url for r in config.roles.values())
    ):
        return None
    return rm


def judge_model(config: ModelConfig) -> ChatModel | None:
    """The chat model of the LLM judge: the configuration's ``judge`` entry, never the system's own
    model (the system would grade itself). None when there is no separate judge model: the LLM judge
    does not run and the report says "not judged"."""
    import sys

    from geofaham_plugin.core.config import EMBEDDED_MODEL, ModelEndpoint, settings_from_env
    from geofaham_plugin.core.llm import EmbeddedChatModel, EmbeddedServer, OpenAIChatModel

    rm = independent_judge(config)
    if rm is None:
        print(
            f"{config.name}: no separate 'judge' model (the system's own model does not judge itself): "
            "LLM judge not run, the report says 'not judged'",
            file=sys.stderr,
        )
        return None
    if rm.embedded:
        settings = settings_from_env({})
        return EmbeddedChatModel(EmbeddedServer(settings.embedded_model_path, EMBEDDED_MODEL, n_ctx=8192))
    key = rm.api_key()
    from pydantic import SecretStr

    endpoint = ModelEndpoint(base_url=rm.base_url, model=rm.model or "gpt-4.1", api_key=SecretStr(key) if key else None)
    return OpenAIChatModel(endpoint, json_mode=rm.json_mode, max_tokens=1500, timeout=300)
