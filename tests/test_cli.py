"""`python -m geofaham_plugin ask`, end to end in a subprocess, on the default (embedded) configuration."""

from __future__ import annotations

import json
import subprocess
import sys

import geopandas as gpd
from shapely.geometry import box

from conftest import ROOT


def ask(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "geofaham_plugin", "ask", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env=env)


def test_ask_answers_the_eaton_hospitals_question_offline(tmp_path):
    out = ask("Which hospitals are within 5 km of the Eaton fire perimeter?", "--session", str(tmp_path / "s"))
    assert out.returncode == 0, out.stderr
    assert "7 healthcare features within 5,000 m" in out.stdout
    assert "AURORA LAS ENCINAS HOSPITAL" in out.stdout and "HUNTINGTON HOSPITAL" in out.stdout
    record_path = out.stdout.strip().splitlines()[-1].split("run record: ")[1]
    record = json.loads(open(record_path).read())
    assert record["status"] == "answered" and record["plans"][0]["template"] == "features_near_hazard"
    assert [s["tool"] for s in record["steps"]] == ["load_event_layer", "get_features", "within_distance"]
    # guided mode needed no model call: the pre-pass left one template with every slot filled
    assert record["usage"]["calls"] == []


def test_ask_with_an_aoi_file(tmp_path):
    aoi = tmp_path / "altadena.geojson"
    gpd.GeoDataFrame({"name": ["Altadena"]}, geometry=[box(-118.17, 34.17, -118.11, 34.21)], crs=4326).to_file(aoi)
    out = ask("Which hospitals are within 5 km of this area?", "--aoi", str(aoi), "--session", str(tmp_path / "s"))
    assert out.returncode == 0, out.stderr
    record = json.loads(open(out.stdout.strip().splitlines()[-1].split("run record: ")[1]).read())
    assert record["plans"][0]["ledger"]["aoi_source"] == "user_aoi"
    assert record["steps"][0]["inputs"]["aoi"] == record["aoi_artifact_id"]
    assert "healthcare features within 5,000 m" in out.stdout


def test_ask_with_a_missing_aoi_file_is_a_clear_error(tmp_path):
    out = ask("Which hospitals are near?", "--aoi", str(tmp_path / "nope.geojson"), "--session", str(tmp_path / "s"))
    assert out.returncode == 2
    assert "AOI file not found" in out.stderr and "Traceback" not in out.stderr


def test_ask_follow_up_continues_the_last_run_of_the_session(tmp_path):
    session = str(tmp_path / "s")
    first = ask("How many buildings were damaged in the Eaton fire?", "--session", session)
    assert first.returncode == 0 and "3,051 in total" in first.stdout
    follow = ask("Now only the destroyed ones", "--session", session, "--follow-up")
    assert follow.returncode == 0, follow.stderr
    assert "2,722 in total" in follow.stdout and "(reused)" in follow.stdout
