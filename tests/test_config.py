import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Literal, get_args, get_origin

import pytest
from conftest import ROOT

from geofaham_plugin.core import config
from geofaham_plugin.core.config import DEFAULT_STAC_URL, GROUPS, TestHooks, parse_bool, settings_from_env
from geofaham_plugin.core.domain.names import Role
from geofaham_plugin.core.errors import ConfigError


def test_defaults_are_the_embedded_model_and_engine():
    s = settings_from_env({})
    assert all(s.endpoint(r).embedded for r in Role)
    assert s.database.pg_dsn is None and s.stac.url == DEFAULT_STAC_URL
    assert not s.network.offline and s.sandbox.cpu_s == 120 and s.sandbox.memory_mb == 3072


def test_remote_server_for_all_roles_with_a_per_role_override():
    s = settings_from_env(
        {
            "GEOFAHAM_LLM_BASE_URL": "http://gpu-box:8000/v1",
            "GEOFAHAM_LLM_MODEL": "qwen2.5-32b",
            "GEOFAHAM_LLM_API_KEY": "sk-secret",
            "GEOFAHAM_LLM_PLANNER_MODEL": "gpt-4.1",
            "GEOFAHAM_LLM_PLANNER_BASE_URL": "https://api.openai.com/v1",
            "GEOFAHAM_PG_DSN": "postgresql://gis:pw@db:5432/disasters",
        }
    )
    assert s.endpoint("vector").base_url == "http://gpu-box:8000/v1" and s.endpoint("vector").model == "qwen2.5-32b"
    assert s.endpoint("planner").model == "gpt-4.1" and s.endpoint("planner").base_url.startswith("https://api.openai")
    assert s.endpoint("planner").api_key.get_secret_value() == "sk-secret"
    shown = json.dumps(s.describe())
    assert "sk-secret" not in shown and ":pw@" not in shown and "gis:***@db:5432" in shown


def test_cli_config_prints_the_resolved_settings():
    env = {"GEOFAHAM_STAC_URL": "https://planetarycomputer.microsoft.com/api/stac/v1", "PATH": "/usr/bin"}
    out = subprocess.run(
        [sys.executable, "-m", "geofaham_plugin", "config"],
        env=env,
        capture_output=True,
        cwd=ROOT,
        text=True,
        check=True,
    ).stdout
    assert json.loads(out)["stac"]["url"] == "https://planetarycomputer.microsoft.com/api/stac/v1"


# ------------------------------------------------------------------------------ one rule for yes/no
@pytest.mark.parametrize(
    "raw, expected",
    [
        ("1", True),
        ("true", True),
        ("yes", True),
        ("on", True),
        ("TRUE", True),
        (" Yes ", True),
        ("On", True),
        ("0", False),
        ("false", False),
        ("no", False),
        ("off", False),
        ("", False),
        ("  ", False),
        ("OFF", False),
        (None, False),
    ],
)
def test_yes_no_values_follow_one_rule_for_every_flag(raw, expected):
    assert parse_bool("GEOFAHAM_X", raw) is expected
    env = {} if raw is None else {"GEOFAHAM_OFFLINE": raw, "GEOFAHAM_BLOCK_REAL_MODELS": raw}
    assert settings_from_env(env).network.offline is expected
    assert TestHooks.from_env(env).block_real_models is expected


@pytest.mark.parametrize("raw", ["2", "maybe", "y", "enabled", "-1", "tru"])
def test_anything_else_is_one_line_naming_the_variable(raw):
    with pytest.raises(ConfigError) as err:
        settings_from_env({"GEOFAHAM_OFFLINE": raw})
    text = str(err.value)
    assert text.startswith(f"GEOFAHAM_OFFLINE={raw!r} ") and "\n" not in text
    assert "1/true/yes/on" in text and err.value.variable == "GEOFAHAM_OFFLINE"


@pytest.mark.parametrize(
    "variable, raw, words",
    [
        ("GEOFAHAM_SANDBOX_CPU_S", "abc", "integer"),
        ("GEOFAHAM_SANDBOX_MEMORY_MB", "12", "greater than or equal to 256"),
        ("GEOFAHAM_OVERPASS_TIMEOUT", "soon", "number"),
        ("GEOFAHAM_OVERPASS_RETRIES", "-1", "greater than or equal to 0"),
        ("GEOFAHAM_STAC_PROVIDER", "google", "earth-search"),
        ("GEOFAHAM_STORE_CRASH_AT", "later", "staged"),
    ],
)
def test_numbers_and_choices_that_do_not_parse_name_the_variable(variable, raw, words):
    with pytest.raises(ConfigError) as err:
        settings_from_env({variable: raw}) if variable != "GEOFAHAM_STORE_CRASH_AT" else TestHooks.from_env(
            {variable: raw}
        )
    text = str(err.value)
    assert text.startswith(f"{variable}={raw!r} is not valid") and words in text and "\n" not in text
    assert "unset it for the default" in text


def _sample(annotation, default):
    """A value of the field's type that differs from its default: (as written in the environment, as parsed)."""
    options = (
        [annotation]
        if get_origin(annotation) is Literal
        else [a for a in get_args(annotation) if a is not type(None)] or [annotation]
    )
    kind = options[0]
    if kind is bool:
        return ("no", False) if default else ("yes", True)
    if kind in (int, float):
        return str(default + 7), default + 7
    if get_origin(kind) is Literal:
        pick = next(v for v in get_args(kind) if v != default)
        return pick, pick
    if kind is Path:
        return "/srv/geofaham-test", Path("/srv/geofaham-test")
    return "http://example.test/x", "http://example.test/x"


@pytest.mark.parametrize(
    "group, field", [(g, f) for g, cls in {**GROUPS, "hooks": TestHooks}.items() for f in cls.model_fields]
)
def test_every_documented_variable_is_parsed_into_its_field(group, field):
    cls = GROUPS.get(group, TestHooks)
    info = cls.model_fields[field]
    raw, parsed = _sample(info.annotation, info.get_default(call_default_factory=True))
    env = {cls.env_of(field): raw}
    source = TestHooks.from_env(env) if cls is TestHooks else getattr(settings_from_env(env), group)
    assert getattr(source, field) == parsed
    assert getattr(source, field) != info.get_default(call_default_factory=True)


def test_settings_are_read_when_used_not_at_import(monkeypatch):
    monkeypatch.setenv("GEOFAHAM_SANDBOX_CPU_S", "9")
    monkeypatch.setenv("GEOFAHAM_OFFLINE", "off")
    assert settings_from_env().sandbox.cpu_s == 9 and not settings_from_env().network.offline
    monkeypatch.setenv("GEOFAHAM_SANDBOX_CPU_S", "11")
    monkeypatch.setenv("GEOFAHAM_OFFLINE", "on")
    assert settings_from_env().sandbox.cpu_s == 11 and settings_from_env().network.offline


def test_updated_changes_one_group_and_validates():
    s = settings_from_env({})
    t = s.updated(network={"offline": True}, sandbox={"memory_mb": 2048})
    assert t.network.offline and t.sandbox.memory_mb == 2048 and t.sandbox.cpu_s == s.sandbox.cpu_s
    assert not s.network.offline  # frozen: the original is unchanged
    with pytest.raises(ValueError):
        s.updated(sandbox={"memory_mb": 1})
    with pytest.raises(ValueError, match="unknown settings group"):
        s.updated(nowhere={"x": 1})


# -------------------------------------------------------------------------- documented everywhere
def test_readme_documents_every_variable_with_its_meaning_and_default():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = config.variables_markdown().splitlines()
    missing = [row for row in rows if row not in readme.splitlines()]
    assert not missing, "README.md is out of date; paste `python -m geofaham_plugin config --variables`:\n" + "\n".join(
        missing
    )
    names = {name for name, _, _ in config.variables()}
    assert {
        f.json_schema_extra["env"] for cls in (*GROUPS.values(), TestHooks) for f in cls.model_fields.values()
    } <= names


def test_config_docstring_lists_the_same_variables():
    assert config.variables_text() in config.__doc__, "regenerate the table in config.py's docstring (variables_text())"


def test_no_product_module_reads_a_geofaham_variable_itself():
    """config.py parses every GEOFAHAM_* variable; elsewhere they arrive as Settings (or a group's from_env)."""
    pattern = re.compile(r"(environ(\.get)?|getenv)\s*[(\[]\s*['\"]GEOFAHAM_")
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "geofaham_plugin").rglob("*.py")
        if p.name != "config.py" and pattern.search(p.read_text(encoding="utf-8"))
    ]
    assert not offenders


def test_cli_prints_the_variable_table_and_one_line_for_a_bad_value():
    out = subprocess.run(
        [sys.executable, "-m", "geofaham_plugin", "config", "--variables"],
        capture_output=True,
        cwd=ROOT,
        text=True,
        env={"PATH": "/usr/bin"},
        check=True,
    ).stdout
    assert out.strip() == config.variables_markdown()
    bad = subprocess.run(
        [sys.executable, "-m", "geofaham_plugin", "config"],
        capture_output=True,
        cwd=ROOT,
        text=True,
        env={"PATH": "/usr/bin", "GEOFAHAM_OFFLINE": "perhaps"},
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().splitlines() == [
        "error: GEOFAHAM_OFFLINE='perhaps' is not a yes/no value; hint: use 1/true/yes/on or 0/false/no/off"
    ]


@pytest.mark.parametrize(
    "env, shown",
    [
        ({}, True),
        ({"GEOFAHAM_OFFLINE": "1"}, False),
        ({"GEOFAHAM_BASEMAP": "off"}, False),
        ({"GEOFAHAM_BASEMAP": "on", "GEOFAHAM_OFFLINE": "yes"}, False),
    ],
)
def test_the_basemap_is_never_on_when_offline(env, shown):
    assert settings_from_env(env).basemap_on is shown
