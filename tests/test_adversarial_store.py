"""Adversarial cases against the Response Store and the run log's memo (issue 15): the index deleted,
emptied, truncated or overwritten with garbage; an artifact file corrupted; two processes writing the
memo at once; a memo that does not parse; `batch` output names that try to leave `--out`.

Each case counts as contained when nothing registered is lost (every id a run record cites still
resolves, every file reads back as written) and the damage is reported in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import rasterio
from conftest import ROOT, SHARED_DATA
from rasterio.transform import from_origin
from shapely.geometry import Point

from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.orchestrator.runlog import RunLog
from geofaham_plugin.core.store import ArtifactKind, ResponseStore, StoreDamaged

EATON = SHARED_DATA / "eaton-2025" / "eaton_adjusted_fire_perimeter.geojson"
MEMO_CHILD = ROOT / "tests" / "helpers" / "memo_race_child.py"


def small_raster(path: Path) -> Path:
    profile = dict(driver="GTiff", width=64, height=48, count=1, dtype="uint16", crs="EPSG:32611")
    with rasterio.open(path, "w", transform=from_origin(395_000, 3_788_000, 10, 10), **profile) as dst:
        dst.write((np.arange(64 * 48).reshape(48, 64) % 500).astype("uint16"), 1)
    return path


def fill(store: ResponseStore, tmp_path: Path) -> dict[str, object]:
    """One artifact of every kind, with lineage; returns what each should read back as."""
    points = gpd.GeoDataFrame(
        {"n": [1, 2, 3], "name": ["a", "b", "c"]}, geometry=[Point(395_100 + i, 3_787_900) for i in range(3)], crs=26911
    )
    v = store.register_vector(points, source="test.points", summary="3 points")
    aoi = store.register_vector(gpd.read_file(EATON), source="user.aoi", summary="Eaton", kind=ArtifactKind.aoi)
    r = store.register_raster_file(small_raster(tmp_path / "r.tif"), source="test.raster", summary="r", inputs=[aoi.id])
    t = store.register_table(
        pd.DataFrame({"k": [1, 2], "v": ["x", "y"]}), source="test.table", summary="t", inputs=[v.id]
    )
    x = store.register_text("answer text", source="report", summary="txt", inputs=[t.id, r.id])
    return {"ids": [v.id, aoi.id, r.id, t.id, x.id], "records": store.records()}


def assert_all_back(session: Path, expected: dict) -> ResponseStore:
    """Every artifact is back, record for record (lineage, metadata, fingerprint), and reads."""
    store = ResponseStore(session)
    assert store.ids() == expected["ids"]
    assert store.records() == expected["records"]
    v, aoi, r, t, x = expected["ids"][:5]
    assert list(store.read_vector(v)["name"]) == ["a", "b", "c"] and len(store.read_vector(aoi)) == 1
    assert store.read_table(t)["v"].tolist() == ["x", "y"] and store.read_text(x) == "answer text"
    with rasterio.open(store.abs_path(r)) as src:
        assert src.read(1).shape == (48, 64)
    assert all(store.verify(i) is None for i in expected["ids"])
    return store


# ------------------------------------------------------------------------------ a lost or damaged index
def _delete(index: Path) -> None:
    index.unlink()


def _empty(index: Path) -> None:
    index.write_bytes(b"")


def _truncate(index: Path) -> None:
    data = index.read_bytes()
    index.write_bytes(data[: len(data) // 2])


def _truncate_header(index: Path) -> None:
    index.write_bytes(index.read_bytes()[:60])


def _garbage(index: Path) -> None:
    index.write_bytes(b"this is not a database\n" * 400)


def _zeroed_pages(index: Path) -> None:
    data = bytearray(index.read_bytes())
    data[4096:] = bytes(len(data) - 4096)  # every page but the first overwritten with zeros
    index.write_bytes(bytes(data))


DAMAGE = {
    "deleted": _delete,
    "empty": _empty,
    "truncated": _truncate,
    "truncated_header": _truncate_header,
    "garbage": _garbage,
    "zeroed_pages": _zeroed_pages,
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_lost_or_damaged_index_is_rebuilt_and_no_artifact_is_lost(tmp_path, damage):
    session = tmp_path / "s"
    with ResponseStore(session) as store:
        expected = fill(store, tmp_path)
        orch = Orchestrator(store, LLM(ScriptedModel({})))
        run = orch.run("How many buildings were damaged in the Eaton fire?")
        expected["ids"] += [i for i in store.ids() if i not in expected["ids"]]
        expected["records"] = store.records()
    cited = run.artifact_ids() + run.cited_artifacts
    assert run.status == "answered" and cited
    DAMAGE[damage](session / "store.sqlite")

    store = assert_all_back(session, expected)
    try:
        assert len(store.notes) == 1 and "rebuilt" in store.notes[0] and str(len(expected["ids"])) in store.notes[0]
        assert "\n" not in store.notes[0]
        assert all(i in store for i in cited)  # the run record's ids still resolve
        if damage not in ("deleted", "empty"):  # the damaged index itself is kept for inspection
            assert [p.name for p in (session / "quarantine").iterdir()] == ["store.sqlite"]
        # the session keeps working: a follow-up question reuses what the first run computed
        follow = Orchestrator(store, LLM(ScriptedModel({}))).run("Now only the destroyed ones", previous=run)
        assert follow.status == "answered" and follow.steps[0].reused
    finally:
        store.close()
    with ResponseStore(session) as again:  # a rebuilt index is a normal index: nothing to say the next time
        assert again.notes == [] and set(expected["ids"]) <= set(again.ids())


def test_a_damaged_index_is_not_rebuilt_under_a_live_store(tmp_path):
    session = tmp_path / "s"
    first = ResponseStore(session)
    first.register_text("x", source="t", summary="t")
    _garbage(session / "store.sqlite")
    with pytest.raises(StoreDamaged) as err:
        ResponseStore(session)
    assert "damaged" in str(err.value) and "hint:" in str(err.value) and "\n" not in str(err.value)
    first.close()


def test_an_index_of_an_older_release_gets_sidecars_and_can_then_be_lost(tmp_path):
    """Sessions written before sidecars existed: the first open writes them, so from then on the index
    can be rebuilt too."""
    session = tmp_path / "s"
    with ResponseStore(session) as store:
        expected = fill(store, tmp_path)
    for sidecar in (session / "artifacts").glob("*.record.json"):
        sidecar.unlink()
    import sqlite3

    with sqlite3.connect(session / "store.sqlite") as db:
        db.execute("UPDATE artifacts SET fingerprint = NULL")
    with ResponseStore(session) as store:
        assert len(list((session / "artifacts").glob("*.record.json"))) == len(expected["ids"])
        assert all(store.get(i).fingerprint for i in expected["ids"])
    (session / "store.sqlite").unlink()
    assert_all_back(session, expected).close()


# ------------------------------------------------------------------------------ a damaged artifact file
def _flip_bytes(path: Path) -> None:
    data = bytearray(path.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 64] = bytes(b ^ 0xFF for b in data[mid : mid + 64])
    path.write_bytes(bytes(data))


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 3)])


def _edit_feature(path: Path) -> None:
    """Rewrite the GeoPackage with one attribute changed (a valid file: only the fingerprint notices)."""
    gdf = gpd.read_file(path, layer=path.stem)
    column = next(c for c in gdf.columns if gdf[c].dtype == object and c != gdf.geometry.name)
    gdf.loc[gdf.index[0], column] = f"{gdf[column].iloc[0]}!"
    path.unlink()
    gdf.to_file(path, layer=path.stem, driver="GPKG")


CORRUPTIONS = {"flipped_bytes": _flip_bytes, "cut": _cut, "edited_feature": _edit_feature}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_a_corrupted_artifact_is_quarantined_and_not_reused(tmp_path, corruption):
    session = tmp_path / "s"
    question = "How many buildings were damaged in the Eaton fire?"
    with ResponseStore(session) as store:
        first = Orchestrator(store, LLM(ScriptedModel({}))).run(question)
    damaged = first.steps[0].artifact_id  # the loaded damage layer (a GeoPackage), input of the count
    CORRUPTIONS[corruption](session / "artifacts" / f"{damaged}.gpkg")
    with ResponseStore(session) as store:
        events = []
        again = Orchestrator(store, LLM(ScriptedModel({})), on_event=events.append).run(question)
        stated = [[(v.label, v.value) for v in r.structured.values] for r in (first, again)]
        assert again.status == "answered" and stated[0] == stated[1] and stated[0]
        assert not again.steps[0].reused and again.steps[0].artifact_id != damaged  # computed afresh
        assert damaged not in store
        (note,) = [n for n in again.notes if damaged in n]
        assert "integrity check" in note and "quarantined" in note and "\n" not in note
        assert store.notes == [note]
        assert sorted(p.name for p in (session / "quarantine").iterdir()) == [
            f"{damaged}.gpkg",
            f"{damaged}.record.json",
        ]


def test_a_gpkg_touched_by_qgis_is_not_damage(tmp_path):
    """Opening a GeoPackage in update mode (as QGIS does) may switch it to WAL and rewrite its header:
    the bytes change, the features do not. The fingerprint is over the content, so it is not quarantined."""
    import sqlite3

    with ResponseStore(tmp_path / "s") as store:
        rec = store.register_vector(gpd.read_file(EATON), source="t", summary="Eaton")
        path = store.abs_path(rec.id)
        before = path.read_bytes()
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA user_version=7")
        assert path.read_bytes() != before
        assert store.verify(rec.id) is None and rec.id in store


# ------------------------------------------------------------------------------------------- the memo
def test_two_processes_writing_the_memo_at_once_lose_nothing(tmp_path):
    runs = 2
    per_writer = 150
    procs = [
        subprocess.Popen(
            [sys.executable, str(MEMO_CHILD), str(tmp_path), f"w{w}", str(per_writer)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ | {"PYTHONPATH": str(ROOT)},
        )
        for w in range(runs)
    ]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert out.split() == ["done", str(per_writer)]
    log = RunLog(tmp_path)
    memo = json.loads(log.memo_path.read_text())  # valid JSON
    assert memo == {f"op w{w} {i}": f"a_{w:04x}{i:04x}" for w in range(runs) for i in range(per_writer)}
    assert not list(log.runs_dir.glob("*.tmp")) and not list(log.runs_dir.glob("*.corrupt*"))


@pytest.mark.parametrize("content", [b"", b"[1, 2", b'{"k": 3}', b"\xff\xfe garbage", b'{"a": "b"'])
def test_a_corrupt_memo_is_set_aside_not_a_failure(tmp_path, caplog, content):
    log = RunLog(tmp_path)
    log.runs_dir.mkdir(parents=True)
    log.memo_path.write_bytes(content)
    assert log.recall("anything") is None  # the question goes on
    assert (log.runs_dir / "memo.json.corrupt").read_bytes() == content and "set aside" in caplog.text
    log.remember("op", "a_00000001")
    assert log.memo() == {"op": "a_00000001"}


def test_a_question_in_a_session_with_a_corrupt_memo_is_answered(store):
    log = RunLog(store.session_dir)
    log.runs_dir.mkdir(parents=True)
    log.memo_path.write_text('{"half": ')
    record = Orchestrator(store, LLM(ScriptedModel({}))).run("How many buildings were damaged in the Eaton fire?")
    assert record.status == "answered" and "3,051" in record.answer
    assert (log.runs_dir / "memo.json.corrupt").exists() and len(log.memo()) == len(record.steps)


# --------------------------------------------------------------------------- batch outputs stay in --out
def batch_cli(tmp_path: Path, name: str) -> subprocess.CompletedProcess:
    inputs = tmp_path / "in"
    inputs.mkdir(exist_ok=True)
    gpd.read_file(EATON).to_file(inputs / "area.geojson")
    spec = tmp_path / "outputs.json"
    spec.write_text(json.dumps({"outputs": [{"name": "answer.md"}, {"name": name, "format": "GeoJSON"}]}))
    return subprocess.run(
        [sys.executable, "-m", "geofaham_plugin", "batch", "--instruction", "Which hospitals are within 5 km?"]
        + ["--inputs", str(inputs), "--outputs", str(spec), "--out", str(tmp_path / "out")]
        + ["--session", str(tmp_path / "session")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )


ESCAPES = {
    "absolute": lambda t: str(t / "elsewhere" / "victim.geojson"),
    "dotdot": lambda t: "../elsewhere/victim.geojson",
    "nested_dotdot": lambda t: "sub/../../elsewhere/victim.geojson",
    "symlinked_folder": lambda t: "link/victim.geojson",
    "symlinked_file": lambda t: "victim_link.geojson",
}


@pytest.mark.parametrize("escape", list(ESCAPES))
def test_batch_output_names_cannot_leave_out(tmp_path, escape):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    victim = elsewhere / "victim.geojson"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "link").symlink_to(elsewhere, target_is_directory=True)
    (out / "victim_link.geojson").symlink_to(victim)
    name = ESCAPES[escape](tmp_path)
    result = batch_cli(tmp_path, name)
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: output ") and repr(name) in line and "outside --out" in line and "hint:" in line
    assert victim.read_text() == "precious" and sorted(p.name for p in elsewhere.iterdir()) == ["victim.geojson"]
    assert sorted(p.name for p in out.iterdir()) == ["link", "victim_link.geojson"]  # nothing written at all
    assert not (tmp_path / "session").exists()  # refused before any work


def test_batch_outputs_in_sub_folders_of_out_are_fine(tmp_path):
    from bench.batch import OutputOutsideOut, confined_output

    out = tmp_path / "out"
    assert confined_output(out, "maps/hospitals.geojson") == (out / "maps" / "hospitals.geojson").resolve()
    assert confined_output(out, "a/../b.md") == (out / "b.md").resolve()
    for bad in ("", ".", "a/..", "/etc/passwd"):
        with pytest.raises(OutputOutsideOut):
            confined_output(out, bad)
