"""The paraphrase suite (``bench/paraphrases.json``, issue 11): every offline bench task in three styles,
constraint variants with expected values of their own, an AOI file generated at run time, and questions
in Spanish, French and Portuguese. Expected values come from ``bench/ground_truth_variants.py`` (no
GeoFaham code); one test recomputes a few of them here with plain GeoPandas/pyproj."""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from pathlib import Path

import geopandas as gpd
import pytest
import shapely
from pyproj import Geod

from bench.aoi_files import AOI_FILES, write_input_file
from bench.ground_truth import data_dir
from bench.spec import BENCH_DIR, PARAPHRASES_FILE, TASKS_FILE, TaskSpec, load_expected, load_tasks, select_tasks

STYLES = {"terse", "verbose", "typos", "coordinator"}
LANGUAGES = ("es", "fr", "pt")
#: what a paraphrase or translation shares with the task it rewords
SAME_AS_BASE = (
    "category",
    "event_ids",
    "event_date",
    "aoi",
    "target_feature",
    "buffer_m",
    "required_sources",
    "required_predicates",
    "crs_constraints",
    "output",
    "artifacts",
    "offline",
    "input_files",
)


@pytest.fixture(scope="module")
def originals() -> dict[str, TaskSpec]:
    return {t.id: t for t in load_tasks(TASKS_FILE)}


@pytest.fixture(scope="module")
def suite() -> list[TaskSpec]:
    return load_tasks(PARAPHRASES_FILE)


def expectations(task: TaskSpec) -> list[dict]:
    return [e.model_dump() for e in task.all_expectations()]


# ---------------------------------------------------------------------------------- language
def words(text: str) -> set[str]:
    return set(text.split())


STOPWORDS = {
    "en": words(
        "the of and in are is which what how many within from to with by any inside outside were was did does "
        "that each far need give me tell get i it there those their"
    ),
    "es": words(
        "el la los las del de que qué cuál cuáles cuántos cuántas hay están está quedaron quedó por en y "
        "con menos dentro zona incendio inundación estructuras puentes"
    ),
    "fr": words(
        "le la les des du de l d est sont quel quels quelle combien dans se trouvent trouve y a t il hôpitaux "
        "incendie zone à et par ou moins au maintenant ceux qui"
    ),
    "pt": words(
        "o a os as do da dos das que quais qual quantos quantas estão estavam ficam em no na é até "
        "um uma incêndio área edifícios hospitais inundada arquivo pelo pela dela fora tiveram"
    ),
}
MARKS = {"es": "ñ¿¡", "fr": "èëîœ", "pt": "ãõ"}


def detect_language(text: str) -> str:
    """The likeliest of en/es/fr/pt: stop words and question words of each language, plus letters only
    one of them uses (ñ ¿ / è ë î œ / ã õ). Enough for one-sentence questions; no dependency."""
    words = re.findall(r"[^\W\d_]+", text.lower())
    scores = {lang: sum(w in vocab for w in words) for lang, vocab in STOPWORDS.items()}
    for lang, marks in MARKS.items():
        scores[lang] += 2 * sum(text.lower().count(m) for m in marks)
    return max(scores, key=lambda k: scores[k])


def test_the_detector_tells_the_four_languages_apart():
    assert detect_language("How many hospitals are within 5 km of the fire?") == "en"
    assert detect_language("¿Cuántos hospitales hay cerca del incendio?") == "es"
    assert detect_language("Combien d'hôpitaux se trouvent près de l'incendie ?") == "fr"
    assert detect_language("Quantos hospitais estão perto do incêndio?") == "pt"


def test_the_language_of_every_question_is_the_declared_one(suite):
    wrong = [
        (t.id, q, detect_language(q), t.language)
        for t in suite
        for q in [turn.question for turn in t.turns()]
        if len(q.split()) >= 4 and detect_language(q) != t.language
    ]
    assert not wrong


# ------------------------------------------------------------------------------------- counts
def test_the_suite_validates_with_unique_ids(suite, originals):
    ids = [t.id for t in suite]
    assert len(ids) == len(set(ids)) and not set(ids) & set(originals)
    assert all(t.split in ("paraphrase", "variant", "aoi", "language") and t.offline for t in suite)
    assert all(t.base_task for t in suite)
    questions = [t.question for t in suite]
    assert len(questions) == len(set(questions))


def test_every_offline_task_has_three_paraphrases_in_different_styles(suite, originals):
    by_base: dict[str, list[TaskSpec]] = {}
    for t in suite:
        if t.split == "paraphrase":
            by_base.setdefault(t.base_task or "", []).append(t)
    offline = {i for i, t in originals.items() if t.offline}
    assert set(by_base) == offline
    for base, group in by_base.items():
        styles = [t.style for t in group]
        assert len(group) >= 3 and len(set(styles)) == len(styles) and set(styles) <= STYLES, base
        assert all(t.language == "en" for t in group)
    assert set(Counter(t.style for t in suite if t.split == "paraphrase")) == STYLES


def test_constraint_variants_cover_the_issue_list(suite, originals, tmp_path):
    variants = [t for t in suite if t.split in ("variant", "aoi")]
    assert len(variants) >= 10
    units = Counter(e.unit for t in variants for e in t.expectations)
    kinds = Counter(e.kind for t in variants for e in t.expectations)
    assert units["%"] >= 2 and units["km2"] >= 3 and kinds["count_by"] >= 2  # shares, areas, groupings
    other_distance = [t for t in variants if t.buffer_m and t.buffer_m != originals[t.base_task or ""].buffer_m]
    assert len(other_distance) >= 3
    assert sum("outside" in t.question.lower() for t in variants) >= 2
    classes = [t for t in variants if re.search(r"major|minor|affected", t.question, re.I)]
    assert len(classes) >= 2
    aoi = [t for t in variants if t.input_files]
    assert aoi and all(t.split == "aoi" and t.aoi.kind == "layer" for t in aoi)
    for name in {n for t in aoi for n in t.input_files}:  # written at run time, never committed
        assert name in AOI_FILES and not list(BENCH_DIR.rglob(name))
        area = gpd.read_file(write_input_file(name, tmp_path))
        assert area.crs.to_epsg() == 4326 and area.geometry.is_valid.all() and set(area.geom_type) == {"Polygon"}


def test_thirty_questions_in_spanish_french_and_portuguese(suite):
    languages = Counter(t.language for t in suite if t.split == "language")
    assert sum(languages[lang] for lang in LANGUAGES) >= 30 and all(languages[lang] >= 8 for lang in LANGUAGES)
    assert "en" not in languages
    mirrored = {t.base_task for t in suite if t.split == "language"}
    assert any(b.startswith(("var_", "aoi_")) for b in mirrored if b)  # variants are asked in other languages too


# ---------------------------------------------------------------------------------- references
def test_every_group_references_its_task_and_shares_or_owns_its_values(suite, originals):
    inside = {t.id: t for t in suite}
    for t in suite:
        base = originals.get(t.base_task or "") or inside.get(t.base_task or "")
        assert base is not None, (t.id, t.base_task)
        if t.split in ("variant", "aoi"):
            assert t.base_task in originals and originals[t.base_task].offline, t.id
            assert expectations(t) != expectations(base), t.id  # a variant has values of its own
            assert not t.follow_ups
            continue
        # a paraphrase rewords an offline task; a translation rewords a task or a variant
        assert base.offline and (t.split == "language" or t.base_task in originals), t.id
        assert expectations(t) == expectations(base), t.id
        for field in SAME_AS_BASE:
            assert getattr(t, field) == getattr(base, field), (t.id, field)
        assert [len(turn.expectations) for turn in t.follow_ups] == [len(turn.expectations) for turn in base.follow_ups]
        assert t.question != base.question
        assert all(a.question != b.question for a, b in zip(t.follow_ups, base.follow_ups, strict=True))


def test_every_task_has_an_expected_value(suite):
    expected = load_expected()
    for t in suite:
        assert t.all_expectations(), t.id
        for e in t.all_expectations():
            assert e.ref is not None and e.resolve(expected) is not None, (t.id, e.id)


def test_the_runner_selects_the_suite_by_file_and_split(suite):
    from bench.cli import build_parser

    args = build_parser().parse_args(["run", "--offline"])
    assert args.tasks_file == TASKS_FILE and args.split is None  # the default run is unchanged
    args = build_parser().parse_args(["run", "--tasks-file", "paraphrases", "--split", "variant,aoi"])
    assert args.tasks_file == PARAPHRASES_FILE
    chosen = select_tasks(load_tasks(args.tasks_file), args.tasks, offline=args.offline, splits=args.split)
    assert chosen and {t.split for t in chosen} == {"variant", "aoi"}
    subset = select_tasks(suite, "dmg_palisades_destroyed", splits="paraphrase")
    assert {t.base_task for t in subset} == {"dmg_palisades_destroyed"} and len(subset) == 3


def test_the_runner_registers_an_aoi_file_as_the_runs_area(suite, tmp_path):
    from bench.runner import _register_input_files
    from geofaham_plugin.core.store.store import ResponseStore

    tasks = [t for t in suite if t.input_files]
    assert len(tasks) >= 3
    for i, task in enumerate(tasks):  # each says the file is its area, in English or Portuguese
        store = ResponseStore(tmp_path / str(i))
        try:
            aoi_id, layers = _register_input_files(task, store, tmp_path / str(i), data_dir())
            assert aoi_id is not None and store.get(aoi_id).kind.value == "aoi", task.id
            # the file that is the area is not a layer of the user's besides (it is read as the area only)
            assert layers is not None and not {"user:" + Path(f).stem for f in task.input_files} & set(
                layers.user_layers
            )
        finally:
            store.close()


def test_a_task_asking_about_its_input_file_reads_it_as_a_layer_of_the_users(tmp_path):
    """No words make the file the area ("what area does it cover"): the file is a layer of the user's, measured."""
    from bench.runner import _register_input_files
    from geofaham_plugin.core.llm import LLM, ScriptedModel
    from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
    from geofaham_plugin.core.store.store import ResponseStore

    task = TaskSpec.model_validate(
        {
            "id": "t_file_area",
            "question": "What area does east_altadena_kinneloa.geojson cover, in km2?",
            "persona": "gis_analyst",
            "category": "land_cover",
            "difficulty": "simple",
            "event_ids": [],
            "offline": True,
            "input_files": ["east_altadena_kinneloa.geojson"],
            "aoi": {"kind": "layer", "layers": ["east_altadena_kinneloa.geojson"]},
            "target_feature": "area",
            "output": "answer",
        }
    )
    expected = gpd.read_file(write_input_file("east_altadena_kinneloa.geojson", tmp_path / "f"))
    km2 = expected.to_crs(expected.estimate_utm_crs()).area.sum() / 1e6
    store = ResponseStore(tmp_path / "s")
    try:
        aoi_id, layers = _register_input_files(task, store, tmp_path / "s", data_dir())
        assert aoi_id is None  # nothing says it is the area
        record = Orchestrator(store, LLM(ScriptedModel({})), layers=layers).run(task.question)
    finally:
        store.close()
    assert record.status == "answered", record.answer
    assert f"{km2:.1f} km²" in record.answer, record.answer


# --------------------------------------------------------------------------------- ground truth
@pytest.fixture(scope="module")
def data():
    from bench.ground_truth import FILES, data_dir

    try:
        root = data_dir()
    except FileNotFoundError:
        pytest.skip("sample data not found (set GEOFAHAM_DATA_DIR)")
    return lambda key: gpd.read_file(root / FILES[key])


def test_variant_values_recomputed_from_the_sample_data(data, tmp_path):
    """Four expected values recomputed here, without the ground-truth module's helpers."""
    variants = load_expected()["variants"]
    geod = Geod(ellps="WGS84")

    pal = data("palisades_dins")
    share = round(100 * (pal.DAMAGE == "Destroyed (>50%)").mean(), 1)
    assert share == variants["palisades_destroyed_pct_of_inspected"]

    eaton = data("eaton_dins").to_crs(32611)
    perimeter = shapely.union_all(shapely.make_valid(data("eaton_perimeter").to_crs(32611).geometry.values))
    assert int((~eaton.intersects(perimeter)).sum()) == variants["eaton_dins_outside_perimeter"]

    burn = shapely.union_all(shapely.make_valid(data("lahaina_burn").geometry.values))
    area_km2 = abs(geod.geometry_area_perimeter(burn)[0]) / 1e6
    assert area_km2 == pytest.approx(variants["lahaina_burn_area_km2"], abs=0.01)

    aoi = gpd.read_file(write_input_file("west_altadena_area.geojson", tmp_path))  # the file a run receives
    inside = data("eaton_dins").sjoin(aoi, predicate="intersects")
    assert int((inside.DAMAGE == "Destroyed (>50%)").sum()) == variants["aoi"]["west_altadena_area"]["destroyed"]


def test_expected_variants_are_what_the_module_computes(data):
    from bench.ground_truth import Data, data_dir
    from bench.ground_truth_variants import variants

    fresh = json.loads(json.dumps(variants(Data(data_dir())), ensure_ascii=False))
    assert fresh["variants"] == load_expected()["variants"]


def test_no_paraphrase_copies_its_task_word_for_word(suite, originals):
    def norm(text: str) -> str:
        plain = "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))
        return " ".join(re.findall(r"[a-z0-9]+", plain))

    for t in suite:
        if t.split == "paraphrase":
            assert norm(t.question) != norm(originals[t.base_task or ""].question), t.id
