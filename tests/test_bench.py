"""GeoFaham-Bench: the task file, the independent ground truth, the runner, both judges, the report and
the batch mode. Fast: the runner tasks chosen here are planned by the pre-pass alone (no model call),
and the LLM judge runs on the scripted model."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections import Counter

import geopandas as gpd
import pandas as pd
import pytest
from conftest import ROOT
from shapely.geometry import Point, box

from bench.checks import deterministic
from bench.config import ROLES, load_config
from bench.judge import judge_folder
from bench.llm_judge import llm_judge
from bench.observations import answer_numbers, event_records
from bench.results_io import session_run_records
from bench.rubric import CATEGORIES, DIMENSIONS, weighted
from bench.spec import CATEGORY_COUNTS, DIFFICULTY_SHARES, load_expected, load_tasks, select_tasks
from geofaham_plugin.core.domain.events import load_events
from geofaham_plugin.core.engines.layers import data_dir
from geofaham_plugin.core.llm import ScriptedModel

#: the last two ask for two numbers each, told apart by their labels (the fire each count is of; the buildings
#: inside the flood and all of them): the product's structured answer must carry them as ids the judge reads
RUN_TASKS = [
    "poi_eaton_hospitals_5km",
    "dmg_palisades_destroyed",
    "clu_eaton_damage_mt",
    "cmp_hospitals_5km_eaton_vs_palisades",
    "infra_catarroja_buildings_share",
]


@pytest.fixture(scope="module")
def tasks():
    return load_tasks()


@pytest.fixture(scope="module")
def truth():
    from bench.expected_values import compute

    return compute()


@pytest.fixture(scope="module")
def bench_results(tmp_path_factory):
    """Five offline tasks run by the real runner (child processes, fresh sessions, default embedded
    configuration; models are blocked, and guided planning needs none for these questions)."""
    from bench.runner import run_bench

    out = tmp_path_factory.mktemp("bench")
    lines: list[str] = []
    with pytest.MonkeyPatch.context() as mp:  # module scope runs before conftest's per-test block
        mp.setenv("GEOFAHAM_BLOCK_REAL_MODELS", "1")
        folder = run_bench(select_tasks(load_tasks(), RUN_TASKS), out=out, timeout=120, offline=True, log=lines.append)
    return folder, lines


# ------------------------------------------------------------------------------------- tasks
def test_task_file_validates_with_the_issue_proportions(tasks):
    assert len(tasks) >= 40 and len({t.id for t in tasks}) == len(tasks)
    assert dict(Counter(t.category for t in tasks)) == CATEGORY_COUNTS
    difficulty = Counter(t.difficulty for t in tasks)
    assert {k: round(v / len(tasks), 2) for k, v in difficulty.items()} == DIFFICULTY_SHARES
    assert set(Counter(t.persona for t in tasks)) == {
        "gis_analyst",
        "humanitarian_worker",
        "government_official",
        "infrastructure_planner",
        "emergency_coordinator",
    }
    multi = [t for t in tasks if t.follow_ups]
    assert len(multi) == 2 and sum(len(t.follow_ups) for t in multi) == 4
    assert sum(t.offline for t in tasks) >= 15
    assert {e for t in tasks for e in t.event_ids} == set(range(1, 18))  # all 17 disaster records


def test_every_offline_expectation_has_a_computed_reference(tasks):
    expected = load_expected()
    for task in (t for t in tasks if t.offline):
        assert task.all_expectations(), task.id
        for e in task.all_expectations():
            assert e.resolve(expected) is not None, (task.id, e.id)


def test_ground_truth_reproduces_the_published_counts(truth):
    eaton, pal, val, cat = truth["eaton"], truth["palisades"], truth["valencia"], truth["catarroja"]
    assert eaton["dins_inside_perimeter"] == 5431 and eaton["dins_total"] == 5805
    assert eaton["hospitals_within_5km"]["count"] == 7 and eaton["hospitals_within_1km"]["count"] == 0
    assert abs(eaton["nearest_hospital"]["distance_m"] - 2090) < 10
    assert eaton["nearest_hospital"]["name"] == "AURORA LAS ENCINAS HOSPITAL"
    assert abs(eaton["hospitals_within_5km"]["distances_m"]["HUNTINGTON HOSPITAL"] - 4750) < 10
    assert eaton["damaged_total"] == 3051 and eaton["destroyed_total"] == 2722
    assert pal["destroyed_total"] == 6823 and pal["hospitals_within_5km"]["count"] == 3
    assert abs(pal["nearest_hospital"]["distance_m"] - 2880) < 10
    assert val["health_inside_flood"]["count"] == 4 and val["health_within_1km_flood"]["count"] == 19
    assert abs(val["flood_area_km2"] - 432) < 1
    assert cat["education_polygons_in_flood"] == 11 and cat["highway_lines_in_flood"] == 834
    assert cat["buildings_in_flood"] == 188 and cat["public_buildings_in_flood"]["count"] == 9
    assert truth["lahaina"]["damaged_labels_in_burn_area"] == 33
    assert abs(truth["hurst"]["dnbr_mean_inside_mask"] - 0.395) < 0.001
    assert abs(truth["hurst"]["dnbr_mean_outside_mask"] - 0.016) < 0.001
    assert truth["hurst"]["dnbr_max_abs_difference"] < 1e-6  # recomputed from the composites


def test_expected_json_is_what_the_script_computes(truth):
    """bench/expected.json is derived data: it must equal a fresh computation."""
    assert json.loads(json.dumps(truth, ensure_ascii=False)) == load_expected()


# ------------------------------------------------------------------------------- model configs
def test_model_configurations(monkeypatch):
    embedded = load_config("embedded")
    settings = embedded.settings({"GEOFAHAM_LLM_BASE_URL": "http://stale:1/v1"})  # stale env is ignored
    assert all(settings.endpoint(r).embedded for r in ROLES) and embedded.mode == "guided"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    remote = load_config("remote-example")
    settings = remote.settings()
    assert settings.endpoint("planner").base_url == "https://api.openai.com/v1"
    assert settings.endpoint("planner").api_key.get_secret_value() == "sk-test-secret"
    assert settings.endpoint("vector").model == "qwen2.5-32b-instruct" and remote.mode == "free"
    assert "sk-test-secret" not in json.dumps(remote.public())


# ------------------------------------------------------------------------------------ runner
def test_runner_records_and_the_deterministic_judge_passes(bench_results):
    folder, lines = bench_results
    for task_id in RUN_TASKS:
        result = json.loads((folder / f"{task_id}.json").read_text())
        assert result["status"] == "finished", result.get("error")
        assert all(t["run"]["status"] == "answered" for t in result["turns"])
        assert result["tokens"]["total"] == 0  # guided mode: the pre-pass left one template, no model call
        assert result["artifacts"] and all(a["file"]["readable"] for a in result["artifacts"].values())
    multi = json.loads((folder / "clu_eaton_damage_mt.json").read_text())
    assert [t["question"] for t in multi["turns"]][1:] == [
        "Now only the destroyed ones",
        "Break them down by structure type",
    ]
    judgments = json.loads((folder / "judgments.json").read_text())["tasks"]
    for task_id in RUN_TASKS:
        det = judgments[task_id]["deterministic"]
        failed = [c for c in det["checks"] if c["passed"] is False]
        assert det["passed"] and not failed, failed
    names = {c["name"] for c in judgments["poi_eaton_hospitals_5km"]["deterministic"]["checks"] if c["passed"]}
    assert {
        "event",
        "aoi",
        "sources",
        "predicates",
        "metric_crs",
        "artifacts",
        "value:count",
        "value:names",
        "value:distances",
        "states:count",
        "supported_numbers",
        "no_db_write",
    } <= names
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["tasks"] == len(RUN_TASKS) and summary["deterministic_pass"] == len(RUN_TASKS)


def test_report_markdown_and_chart(bench_results):
    from bench.report import write_report

    folder, _ = bench_results
    md, png, headline = write_report(folder)
    text = md.read_text()
    for section in ("## Headline", "## Per category", "## Per rubric dimension", "## Capability gaps", "## Per task"):
        assert section in text
    assert "Tokens per task, mean / median" in text and "goal ≤ 25,000: met" in text
    assert png is not None and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert headline["det_pass"] == len(RUN_TASKS) and headline["tokens_mean"] == 0


def test_resume_skips_finished_tasks(bench_results):
    from bench.runner import run_bench

    folder, _ = bench_results
    before = (folder / "dmg_palisades_destroyed.json").stat().st_mtime_ns
    lines: list[str] = []
    run_bench(select_tasks(load_tasks(), ["dmg_palisades_destroyed"]), out=folder.parent, resume=True, log=lines.append)
    assert "skipped" in lines[-1] and (folder / "dmg_palisades_destroyed.json").stat().st_mtime_ns == before


def test_a_timeout_is_recorded_and_judged(tmp_path):
    from bench.runner import run_bench

    folder = run_bench(
        select_tasks(load_tasks(), ["dmg_palisades_destroyed"]), out=tmp_path, timeout=0.2, log=lambda _: None
    )
    result = json.loads((folder / "dmg_palisades_destroyed.json").read_text())
    assert result["status"] == "timeout" and "timed out" in result["error"]
    det = json.loads((folder / "judgments.json").read_text())["tasks"]["dmg_palisades_destroyed"]["deterministic"]
    assert not det["passed"] and det["flags"]["service_failure_or_timeout"]


# ------------------------------------------------------------------------------------- judges
def test_deterministic_judge_catches_wrong_runs(bench_results):
    folder, _ = bench_results
    good = json.loads((folder / "poi_eaton_hospitals_5km.json").read_text())
    bad = copy.deepcopy(good)
    run = bad["turns"][0]["run"]
    cited = run["cited_artifacts"][0]
    bad["artifacts"][cited]["metadata"]["feature_count"] = 6  # a wrong count
    run["answer"] = run["answer"].replace("7 healthcare", "6 healthcare") + "\nAbout 12,345 people live nearby."
    for v in (run.get("structured") or {}).get("values", []):  # the stated value, where the record has one
        if v["value"] == 7:
            v["value"] = 6
    run["plans"][0]["ledger"]["disaster_event_id"] = 12  # the wrong fire
    run["steps"][-1]["args"]["sql"] = "DELETE FROM hospitals"  # a database write
    checks = {c["name"]: c for c in deterministic(bad)["checks"]}
    assert checks["value:count"]["passed"] is False and checks["states:count"]["passed"] is False
    assert checks["supported_numbers"]["passed"] is False and "12345" in checks["supported_numbers"]["detail"]
    assert checks["event"]["passed"] is False and checks["no_db_write"]["passed"] is False
    assert deterministic(good)["passed"]


def test_llm_judge_scores_the_rubric_with_a_scripted_model(bench_results):
    folder, _ = bench_results
    result = json.loads((folder / "poi_eaton_hospitals_5km.json").read_text())
    scores = {k: 1.0 for k in DIMENSIONS} | {"answer_accuracy": 0.8, "evidence_aware_confidence": 0.5}
    missing_some = {"scores": {k: 1.0 for k in DIMENSIONS[:4]}}
    model = ScriptedModel(
        {"judge": [missing_some, {"scores": scores, "flags": {"run_completed": True}, "rationale": "ok"}]}
    )
    out = llm_judge(result, model)
    assert "Field required" in model.calls[1].last_user  # the incomplete reply went back with the error
    prompt = model.calls[0].messages[-1].content
    assert "AURORA LAS ENCINAS HOSPITAL" in prompt and '"expected"' in prompt  # spec, run and artifacts
    assert "Answer Accuracy" in model.calls[0].messages[0].content
    assert out["scores"]["answer_accuracy"] == 0.75  # snapped to the five-point scale
    assert out["overall"] == pytest.approx(0.35 * 0.875 + 0.30 + 0.15 + 0.10 + 0.10 * 0.75, abs=1e-4)
    assert out["flags"]["run_completed"] is True


def test_llm_judgements_go_into_the_folder_and_the_report(bench_results, tmp_path):
    import shutil

    from bench.report import write_report

    folder, _ = bench_results
    copy_dir = tmp_path / "embedded"
    shutil.copytree(folder, copy_dir)
    (copy_dir / "damage_join.json").write_text('{"ratio": 3.2}')  # another tool's output is ignored
    reply = {"scores": {k: 0.75 for k in DIMENSIONS}, "flags": {}, "rationale": "mostly right"}
    judge_folder(copy_dir, ScriptedModel(lambda role, messages, schema: reply), log=lambda _: None)
    tasks = json.loads((copy_dir / "judgments.json").read_text())["tasks"]
    assert all(t["llm"]["overall"] == 0.75 for t in tasks.values())
    _, _, headline = write_report(copy_dir)  # re-judging deterministically keeps the LLM judgements
    assert headline["llm_overall"] == 0.75 and headline["llm_tasks"] == len(RUN_TASKS)


def test_rubric_weights_follow_the_paper():
    assert [round(w, 2) for w, _ in CATEGORIES.values()] == [0.35, 0.30, 0.15, 0.10, 0.10] and len(DIMENSIONS) == 13
    assert weighted({k: 1.0 for k in DIMENSIONS})["overall"] == 1.0
    assert weighted({k: 0.0 for k in DIMENSIONS} | {"benchmark_rule_compliance": 1.0})["overall"] == 0.1


# -------------------------------------------------------------------------------------- batch
def test_batch_mode_writes_the_requested_outputs(tmp_path):
    from bench.batch import run_batch

    inputs = tmp_path / "in"
    inputs.mkdir()
    gpd.GeoDataFrame({"name": ["Altadena"]}, geometry=[box(-118.17, 34.17, -118.11, 34.21)], crs=4326).to_file(
        inputs / "study_area.geojson"
    )
    pd.DataFrame(
        {"name": ["shelter A", "shelter B"], "WKT": ["POINT (-118.14 34.19)", "POINT (-118.12 34.18)"]}
    ).to_csv(inputs / "shelters.csv", index=False)
    (inputs / "notes.txt").write_text("not a layer")
    outputs = [
        {"name": "hospitals_5km.geojson", "format": "GeoJSON", "geometry_type": "Point"},
        {"name": "hospitals_5km.csv", "format": "CSV", "geometry_type": "Point"},
        {"name": "area.gpkg", "format": "GPKG", "geometry_type": "MultiPolygon", "source": "aoi"},
        {"name": "answer.md"},
        {"name": "burn.tif", "format": "GeoTIFF"},
    ]
    spec = tmp_path / "outputs.json"
    spec.write_text(json.dumps({"outputs": outputs}))
    manifest = run_batch(
        "Which hospitals are within 5 km of this area?",
        inputs,
        spec,
        tmp_path / "out",
        session=tmp_path / "session",
        log=lambda _: None,
    )
    assert manifest["status"] == "answered"
    files = {i["file"]: i for i in manifest["inputs"]}
    assert files["shelters.csv"]["features"] == 2 and "aoi_artifact_id" in files["study_area.geojson"]
    assert any("notes.txt" in n for n in manifest["input_notes"])
    written = {o["name"]: o for o in manifest["outputs"]}
    assert not written["burn.tif"]["written"] and "no raster" in written["burn.tif"]["reason"]
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "answer.md",
        "area.gpkg",
        "hospitals_5km.csv",
        "hospitals_5km.geojson",
    ]
    hospitals = gpd.read_file(out / "hospitals_5km.geojson")
    assert len(hospitals) > 0 and set(hospitals.geom_type) == {"Point"} and "distance_m" in hospitals.columns
    table = pd.read_csv(out / "hospitals_5km.csv")
    assert len(table) == len(hospitals) and table["wkt"].str.startswith("POINT").all()
    assert set(gpd.read_file(out / "area.gpkg").geom_type) == {"MultiPolygon"}
    assert "healthcare features within 5,000 m" in (out / "answer.md").read_text()


def test_batch_inputs_are_layers_the_instruction_can_name(tmp_path):
    from bench.batch import run_batch

    inputs = tmp_path / "in"
    inputs.mkdir()
    shelters = gpd.GeoDataFrame(
        {"name": ["shelter A", "shelter B", "shelter C"], "beds": [40, 25, 60]},
        geometry=[Point(-118.14, 34.19), Point(-118.12, 34.18), Point(-118.40, 34.00)],
        crs=4326,
    )
    shelters.to_file(inputs / "evac_shelters.geojson")
    perimeter = gpd.read_file(data_dir() / "eaton-2025/eaton_adjusted_fire_perimeter.geojson").to_crs(32611)
    near = shelters.to_crs(32611).distance(perimeter.union_all()) <= 2000
    spec = tmp_path / "outputs.json"
    spec.write_text(json.dumps({"outputs": [{"name": "answer.md"}]}))
    manifest = run_batch(
        "How many beds do the evac shelters within 2 km of the Eaton fire perimeter have?",
        inputs,
        spec,
        tmp_path / "out",
        session=tmp_path / "session",
        log=lambda _: None,
    )
    assert manifest["status"] == "answered", manifest["answer"]
    assert f"sum of beds: {int(shelters.loc[near, 'beds'].sum())}" in manifest["answer"]  # 65, not 3 shelters


def _clinics_and_district(folder):
    folder.mkdir()
    clinics = gpd.GeoDataFrame(
        {"name": ["Sol", None, "Norte"], "beds": [20, 12, 35]},
        geometry=[Point(-3.70, 40.42), Point(-3.72, 40.39), Point(-3.69, 40.47)],
        crs=4326,
    )
    clinics.to_file(folder / "clinics.geojson")
    district = gpd.GeoDataFrame({"name": ["centro"]}, geometry=[box(-3.8, 40.3, -3.6, 40.5)], crs=4326)
    district.to_file(folder / "district.geojson")  # the only small polygon input: no AOI for that alone
    return clinics


def test_batch_aoi_only_when_the_instruction_says_so(tmp_path):
    from bench.batch import aoi_from_instruction, register_inputs
    from geofaham_plugin.core.store.store import ResponseStore

    _clinics_and_district(tmp_path / "in")
    with ResponseStore(tmp_path / "session") as store:
        silent = register_inputs(store, tmp_path / "in", instruction="Reproject the clinics to EPSG:25830")
        said = register_inputs(store, tmp_path / "in", instruction="Keep the clinics inside the AOI")
        named = register_inputs(store, tmp_path / "in", instruction="Clip the clinics to district.geojson")
    assert silent["aoi"] is None
    assert said["aoi"] is not None and named["aoi"] is not None
    polygons = ["district.geojson"]
    assert aoi_from_instruction("Compute the area in km² of each land use class", polygons) == (None, None)
    assert aoi_from_instruction("Count the wells in this area", polygons)[0] == "district.geojson"
    assert aoi_from_instruction("Clip the roads to the district", polygons)[0] == "district.geojson"
    in_my = "How many wells in my district.geojson polygon were destroyed?"  # a determiner before the file's name
    assert aoi_from_instruction(in_my, polygons)[0] == "district.geojson"
    # named by its whole file name in a question about other data (hospitals, a disaster's damage): the area
    asked = "Which hospital is the shortest distance from my district.geojson polygon?"
    assert aoi_from_instruction(asked, polygons)[0] == "district.geojson"
    asked = "En district.geojson, ¿qué porcentaje de los edificios quedó destruido por el incendio Eaton?"
    assert aoi_from_instruction(asked, polygons)[0] == "district.geojson"
    assert aoi_from_instruction("Reproject district.geojson to EPSG:3857", polygons) == (None, None)
    label, why = aoi_from_instruction("inside the study area", ["north.geojson", "south.geojson"])
    assert label is None and "2 polygon inputs could be it" in why


def test_batch_never_writes_an_input_unchanged_as_a_result(tmp_path):
    """An operation the run did not do (it only loaded the layer) leaves the output unwritten, with the reason;
    a conversion the instruction asks for, and nothing else, is written from the loaded input."""
    from bench.batch import OutputSpec, run_batch
    from geofaham_plugin.core.llm import LLM

    _clinics_and_district(tmp_path / "in")
    spec = [OutputSpec(name="clinics_out.gpkg")]
    manifest = run_batch(
        "Anonymise the clinic locations and save them as clinics_out.gpkg",
        tmp_path / "in",
        spec,
        tmp_path / "out",
        session=tmp_path / "s1",
        llm=LLM(ScriptedModel({})),
        log=lambda _: None,
    )
    out = manifest["outputs"][0]
    assert not out["written"] and not (tmp_path / "out" / "clinics_out.gpkg").exists() and not manifest["ok"]
    assert "an input unchanged" in out["reason"] and out["line"].startswith("NOT written: clinics_out.gpkg: ")
    converted = run_batch(
        "Convert the clinics to a GeoPackage",
        tmp_path / "in",
        spec,
        tmp_path / "out",
        session=tmp_path / "s2",
        llm=LLM(ScriptedModel({})),
        log=lambda _: None,
    )
    assert converted["ok"] and len(gpd.read_file(tmp_path / "out" / "clinics_out.gpkg")) == 3


def test_batch_output_failing_its_spec_is_reported_and_the_exit_code_says_so(tmp_path):
    """A CSV asked in a projected CRS (CSV holds longitude/latitude only) and a column the layer lacks: the files are
    written, read back, found wrong, and the command says which and why, with exit code 1."""
    _clinics_and_district(tmp_path / "in")
    outputs = [
        {"name": "clinics.csv", "crs": "EPSG:32630"},
        {"name": "clinics.gpkg", "columns": ["name", "phone"]},
        {"name": "clinics.geojson", "columns": ["beds", "name"], "geometry_type": "MultiPoint"},
    ]
    (tmp_path / "outputs.json").write_text(json.dumps(outputs))
    done = subprocess.run(
        [sys.executable, "-m", "bench", "batch", "--instruction", "Convert the clinics", "--inputs",
         str(tmp_path / "in"), "--outputs", str(tmp_path / "outputs.json"), "--out", str(tmp_path / "out"),
         "--session", str(tmp_path / "session")],
        cwd=ROOT, capture_output=True, text=True, timeout=180,
        env=os.environ | {"GEOFAHAM_BLOCK_REAL_MODELS": "1", "GEOFAHAM_OFFLINE": "1"},
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if "clinics." in line and ": clinics." in line]
    assert "written but FAILED its check: clinics.csv: CRS EPSG:4326 instead of EPSG:32630" in done.stdout
    assert "written but FAILED its check: clinics.gpkg: no column phone" in done.stdout
    assert any(line.startswith("wrote: clinics.geojson (3 features, EPSG:4326, MultiPoint") for line in lines)
    back = gpd.read_file(tmp_path / "out" / "clinics.geojson")
    assert list(back.columns) == ["beds", "name", "geometry"] and set(back.geom_type) == {"MultiPoint"}
    manifest = json.loads((tmp_path / "session" / "batch_manifest.json").read_text())
    assert [o["ok"] for o in manifest["outputs"]] == [False, False, True] and manifest["ok"] is False


def test_batch_rejects_an_unknown_output_format(tmp_path):
    from bench.batch import OutputSpec

    with pytest.raises(ValueError, match="unknown format"):
        OutputSpec(name="x.xyz").fmt()


def test_batch_reprojects_the_eaton_perimeter_to_wgs84_geoparquet(tmp_path):
    """Issue 28's first example, with the CLI: the Eaton perimeter (EPSG:26911, a part with 9 holes of different
    sizes) to EPSG:4326 as GeoParquet. It failed with "setting an array element with a sequence", blamed on the
    outputs file; now the file is written, checked, and holds the same area."""
    from conftest import SHARED_DATA

    (tmp_path / "in").mkdir()
    source = SHARED_DATA / "eaton-2025" / "eaton_adjusted_fire_perimeter.geojson"
    (tmp_path / "in" / source.name).write_bytes(source.read_bytes())
    outputs = [{"name": "eaton_perimeter_4326.parquet", "format": "GeoParquet", "crs": "EPSG:4326"}]
    (tmp_path / "outputs.json").write_text(json.dumps(outputs))
    done = subprocess.run(
        [sys.executable, "-m", "bench", "batch", "--instruction",
         "Reproject the fire perimeter to WGS84 (EPSG:4326) and write it as GeoParquet", "--inputs",
         str(tmp_path / "in"), "--outputs", str(tmp_path / "outputs.json"), "--out", str(tmp_path / "out")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env=os.environ | {"GEOFAHAM_BLOCK_REAL_MODELS": "1", "GEOFAHAM_OFFLINE": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "wrote: eaton_perimeter_4326.parquet (1 features, EPSG:4326, MultiPolygon" in done.stdout
    back = gpd.read_parquet(tmp_path / "out" / "eaton_perimeter_4326.parquet")
    assert back.crs.to_epsg() == 4326 and back.geometry.is_valid.all()
    assert back.to_crs(26911).area.sum() == pytest.approx(gpd.read_file(source).area.sum(), rel=1e-9)


def test_batch_waits_for_a_big_input_written_in_the_background(tmp_path):
    """A 12,000-feature input is written to the store by its writer thread; batch added it to the layer catalogue
    from the record's path before the file existed ("not usable as a layer of yours (no such file ...)") and the
    run had no layer to reproject (issue 28, item 5: the Lagos zoning and Cairo shops layers were lost)."""
    import numpy as np

    from bench.batch import OutputSpec, run_batch
    from geofaham_plugin.core.llm import LLM
    from geofaham_plugin.core.store.store import BACKGROUND_MIN_FEATURES

    n = 12_000
    assert n >= BACKGROUND_MIN_FEATURES
    rng = np.random.default_rng(28)
    (tmp_path / "in").mkdir()
    gpd.GeoDataFrame(
        {"shop_id": np.arange(n), "name": [f"shop {i}" for i in range(n)]},
        geometry=gpd.points_from_xy(31.2 + rng.random(n) * 0.1, 30.0 + rng.random(n) * 0.1),
        crs=4326,
    ).to_file(tmp_path / "in" / "cairo_shops.gpkg")
    notes: list[str] = []
    manifest = run_batch(
        "Reproject the shops to EPSG:32636 and save them as a GeoPackage",
        tmp_path / "in",
        [OutputSpec(name="shops_utm.gpkg", crs="EPSG:32636")],
        tmp_path / "out",
        session=tmp_path / "session",
        llm=LLM(ScriptedModel({})),
        log=notes.append,
    )
    assert not [n for n in notes if "not usable" in n], notes
    assert manifest["ok"], manifest["outputs"]
    back = gpd.read_file(tmp_path / "out" / "shops_utm.gpkg")
    assert len(back) == n and back.crs.to_epsg() == 32636 and back["shop_id"].tolist() == list(range(n))


@pytest.mark.parametrize(
    ("instruction", "field"),
    [
        ("What is the sum of identifica of the health facilities?", "identifica"),
        ("What is the average telefono of the health facilities?", "telefono"),
        ("Summarise the clinics layer", "clinic_id"),
    ],
)
def test_batch_never_answers_with_a_sum_or_mean_of_an_identifier(tmp_path, instruction, field):
    """Issue 28, item 3: "sum of clinic_id: 410" was reported as answered (and a CSV of it written). València's health
    facilities (a real file): identifica is a key, telefono a phone number. The run is not answered, says which
    field is an identifier in one line, and writes no table."""
    from conftest import SHARED_DATA

    from bench.batch import OutputSpec, run_batch
    from geofaham_plugin.core.llm import LLM

    (tmp_path / "in").mkdir()
    if field == "clinic_id":
        gpd.GeoDataFrame(
            {"clinic_id": [101, 102, 103, 104], "name": list("ABCD")},
            geometry=[Point(3.35 + i / 100, 6.5) for i in range(4)],
            crs=4326,
        ).to_file(tmp_path / "in" / "clinics.gpkg")
    else:
        source = SHARED_DATA / "valencia-2024" / "valencia_city_health_facilities.geojson"
        (tmp_path / "in" / "health_facilities.geojson").write_bytes(source.read_bytes())
    manifest = run_batch(
        instruction,
        tmp_path / "in",
        [OutputSpec(name="answer.md"), OutputSpec(name="result.csv")],
        tmp_path / "out",
        session=tmp_path / "session",
        llm=LLM(ScriptedModel({})),
        log=lambda _: None,
    )
    assert manifest["status"] != "answered" and not manifest["ok"], manifest["answer"]
    assert f"{field} is an identifier" in manifest["answer"]
    assert not (tmp_path / "out" / "result.csv").exists()


def test_batch_names_the_outputs_file_only_for_its_own_errors(tmp_path):
    """An outputs file that does not parse, or names an unknown format, is one line naming it with the hint."""
    from bench.batch import run_batch
    from geofaham_plugin.core.errors import InputError

    (tmp_path / "in").mkdir()
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InputError, match="bad.json") as caught:
        run_batch("Convert it", tmp_path / "in", tmp_path / "bad.json", tmp_path / "out", log=lambda _: None)
    assert "for the outputs file" in caught.value.line and "\n" not in caught.value.line
    (tmp_path / "xyz.json").write_text(json.dumps([{"name": "x.xyz"}]))
    with pytest.raises(InputError, match="unknown format"):
        run_batch("Convert it", tmp_path / "in", tmp_path / "xyz.json", tmp_path / "out", log=lambda _: None)


# ----------------------------------------------------------------------------------------- cli
def test_cli_commands_parse_and_list_tasks(capsys):
    from bench.cli import build_parser, main

    parser = build_parser()
    args = parser.parse_args(["run", "--offline", "--timeout", "60", "--resume"])
    assert args.offline and args.timeout == 60 and args.resume
    args = parser.parse_args(["judge", "results", "--llm-config", "x.json"])
    assert args.llm_config == "x.json"
    args = parser.parse_args(["batch", "--instruction", "q", "--inputs", "in", "--outputs", "o.json", "--out", "out"])
    assert args.instruction == "q"
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--offline", "--tasks", "a"])  # one selection at a time
    assert main(["tasks"]) == 0
    listing = capsys.readouterr().out
    assert listing.count("\n") == len(load_tasks()) and "poi_eaton_hospitals_5km" in listing


def test_python_m_bench_is_the_entry_point(tmp_path):
    """``python -m bench`` runs from the repository root; a results folder that does not exist is one
    clear line, not a traceback."""

    def bench(*args):
        return subprocess.run(
            [sys.executable, "-m", "bench", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env=os.environ | {"GEOFAHAM_BLOCK_REAL_MODELS": "1"},
        )

    helped = bench("--help")
    assert helped.returncode == 0 and "usage: python -m bench" in helped.stdout
    for command in ("run", "judge", "report", "tasks", "ground-truth", "batch"):
        assert command in helped.stdout
    listed = bench("tasks")
    assert listed.returncode == 0 and listed.stdout.count("\n") == len(load_tasks())
    missing = bench("judge", str(tmp_path / "nothing"))
    assert missing.returncode == 2 and "no results in" in missing.stderr and "Traceback" not in missing.stderr


# ---------------------------------------------------------------------------- observations, files
def test_answer_numbers_skip_artifact_ids_dates_and_crs_codes():
    text = "7 hospitals [a_1234abcd] within 5 km (a_deadbeef), fire of 2025-01-07, EPSG:32611, step 3 took 2.5 s"
    assert [(v, u) for v, _, u in answer_numbers(text)] == [(7.0, ""), (5.0, "km"), (2.5, "")]


def test_event_records_come_from_the_core_event_table():
    records = event_records()
    assert sorted(records) == [e.id for e in load_events()] == list(range(1, 18))
    assert records[11].name == "Eaton Fire" and records[11].event_date.isoformat() == "2025-01-10"


def test_session_run_records_prefer_the_final_record(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    for i, run_id in enumerate(("r_first", "r_second", "r_third")):
        state = runs / f"{run_id}.state.json"
        state.write_text(
            json.dumps(
                {
                    "run_id": run_id,
                    "question": f"q{i}",
                    "status": "running",
                    "started_at": f"2025-01-0{i + 1}T00:00:00Z",
                }
            )
        )
        os.utime(state, (1000 + i, 1000 + i))  # oldest first, by start and by file time alike
    (runs / "r_second.json").write_text(
        json.dumps({"run_id": "r_second", "question": "q1", "status": "answered", "started_at": "2025-01-02T00:00:00Z"})
    )
    (runs / "memo.json").write_text("{}")
    records = session_run_records(tmp_path, {"r_third"})
    assert [(r["run_id"], r["status"]) for r in records] == [("r_first", "running"), ("r_second", "answered")]
    assert session_run_records(tmp_path / "no-session") == []


def test_run_records_are_read_in_one_place():
    """Run records are read through bench.results_io.session_run_records only (it will read the run log)."""
    readers = [
        p.name
        for p in (ROOT / "bench").glob("*.py")  # globs of run files, paths of saved states
        if p.name != "results_io.py" and any(x in p.read_text(encoding="utf-8") for x in ('"r_*', 'state.json"'))
    ]
    assert not readers
