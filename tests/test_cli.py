"""`python -m geofaham_plugin ask`, end to end in a subprocess, on the default (embedded) configuration;
and its `bench` / `batch` commands, which start `python -m bench` in a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import geopandas as gpd
from conftest import ROOT
from shapely.geometry import box


def ask(*args, env=None, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "geofaham_plugin", "ask", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def test_ask_answers_the_eaton_hospitals_question_offline(tmp_path):
    out = ask("Which hospitals are within 5 km of the Eaton fire perimeter?", "--session", str(tmp_path / "s"))
    assert out.returncode == 0, out.stderr
    assert "7 healthcare features within 5,000 m" in out.stdout
    assert "AURORA LAS ENCINAS HOSPITAL" in out.stdout and "HUNTINGTON HOSPITAL" in out.stdout
    record_path = out.stdout.strip().splitlines()[-1].split("run record: ")[1]
    record = json.loads(Path(record_path).read_text())
    assert record["status"] == "answered" and record["plans"][0]["specs"][0]["relation"]["kind"] == "within"
    assert [s["tool"] for s in record["steps"]] == ["load_event_layer", "get_features", "within_distance"]
    # guided mode needed no model call: the pre-pass resolved the whole analysis spec
    assert record["usage"]["calls"] == []


def test_ask_with_an_aoi_file(tmp_path):
    aoi = tmp_path / "altadena.geojson"
    gpd.GeoDataFrame({"name": ["Altadena"]}, geometry=[box(-118.17, 34.17, -118.11, 34.21)], crs=4326).to_file(aoi)
    out = ask("Which hospitals are within 5 km of this area?", "--aoi", str(aoi), "--session", str(tmp_path / "s"))
    assert out.returncode == 0, out.stderr
    record = json.loads(Path(out.stdout.strip().splitlines()[-1].split("run record: ")[1]).read_text())
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


# ------------------------------------------------------------- bench and batch: python -m bench, in a child
def product_cli(*args, cwd, timeout=120):
    """``python -m geofaham_plugin ...`` from another folder (the package found through PYTHONPATH)."""
    env = os.environ | {"PYTHONPATH": str(ROOT), "GEOFAHAM_BLOCK_REAL_MODELS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "geofaham_plugin", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def test_bench_commands_run_python_m_bench_in_the_users_folder(tmp_path):
    """The product does not import the bench: ``bench tasks`` runs ``python -m bench tasks`` in a child
    that keeps the working directory (a relative --tasks-file resolves there) and cannot pick up a
    ``bench`` package of that folder instead of the repository's."""
    from bench.spec import load_tasks

    decoy = tmp_path / "bench"
    decoy.mkdir()
    (decoy / "__init__.py").write_text("")
    (decoy / "__main__.py").write_text("print('the wrong bench')")
    tasks = json.loads((ROOT / "bench" / "tasks.json").read_text(encoding="utf-8"))
    tasks["tasks"] = tasks["tasks"][:2]
    (tmp_path / "two_tasks.json").write_text(json.dumps(tasks), encoding="utf-8")

    listed = product_cli("bench", "tasks", "--tasks-file", "two_tasks.json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "the wrong bench" not in listed.stdout
    assert [line.split()[0] for line in listed.stdout.splitlines()] == [t.id for t in load_tasks()[:2]]

    helped = product_cli("bench", "--help", cwd=tmp_path)
    assert helped.returncode == 0 and "usage: python -m bench" in helped.stdout and "ground-truth" in helped.stdout
    missing = product_cli("bench", "judge", "no-such-results", cwd=tmp_path)  # the child's exit code comes back
    assert missing.returncode == 2 and "no results in no-such-results" in missing.stderr
    batch = product_cli("batch", "--instruction", "q", cwd=tmp_path)  # batch -> python -m bench batch
    assert batch.returncode == 2 and "python -m bench batch" in batch.stderr and "--inputs" in batch.stderr
    listing = product_cli("--help", cwd=tmp_path)
    assert listing.returncode == 0 and "bench" in listing.stdout and "batch" in listing.stdout


def test_bench_commands_without_the_bench_say_so_in_one_line(monkeypatch, capsys):
    """A plugin installed from the zip has no bench/ beside it: one clear line, exit code 2."""
    from geofaham_plugin.core import cli

    assert cli.bench_root() == ROOT
    monkeypatch.setattr(cli, "bench_root", lambda: None)
    assert cli.main(["bench", "tasks"]) == 2
    assert cli.main(["batch", "--instruction", "q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(
        "bench is not installed with the plugin" in line and "python -m bench" in line for line in err
    )
