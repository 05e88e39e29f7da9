import json
import subprocess
import sys

from conftest import ROOT

from geofaham_plugin.core.config import DEFAULT_STAC_URL, settings_from_env
from geofaham_plugin.core.domain.names import Role


def test_defaults_are_the_embedded_model_and_engine():
    s = settings_from_env({})
    assert all(s.endpoint(r).embedded for r in Role)
    assert s.postgis_dsn is None and s.stac_url == DEFAULT_STAC_URL


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
    out = subprocess.run([sys.executable, "-m", "geofaham_plugin", "config"], env=env, capture_output=True, cwd=ROOT,
                         text=True, check=True).stdout
    assert json.loads(out)["stac"] == "https://planetarycomputer.microsoft.com/api/stac/v1"
