"""The machine-readable ground-truth specification of a GeoFaham-Bench task.

One :class:`TaskSpec` per task (``bench/tasks.json``). It states what a valid run must satisfy —
disaster record, area of interest, event date and windows, target features, distances, sources,
spatial predicates, CRS constraints, expected output, numbers with tolerances, known failure modes —
without prescribing one execution trace (the paper's non-rigid ground truth).

Expected numbers of offline tasks are not written by hand: an expectation names a key (``ref``) in
``bench/expected.json``, which ``bench/ground_truth.py`` computes from the sample data with
GeoPandas/rasterio. Online tasks carry expectations without values (their reference needs live
sources); the deterministic judge marks those checks "n/a" and the LLM judge reads the description."""

from __future__ import annotations

import json
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from geofaham_plugin.core.orchestrator.answer import Measure

BENCH_DIR = Path(__file__).resolve().parent
TASKS_FILE = BENCH_DIR / "tasks.json"
PARAPHRASES_FILE = BENCH_DIR / "paraphrases.json"
EXPECTED_FILE = BENCH_DIR / "expected.json"

Category = Literal[
    "poi_impact",
    "infrastructure",
    "clustering_aggregation",
    "building_damage",
    "comparative",
    "flood",
    "burn_intensity",
    "land_cover",
    "population",
    "satellite_imagery",
]
Persona = Literal[
    "gis_analyst", "humanitarian_worker", "government_official", "infrastructure_planner", "emergency_coordinator"
]
Difficulty = Literal["simple", "medium", "hard"]
OutputKind = Literal["answer", "vector", "raster", "table", "item_set"]
Relation = Literal["inside", "outside", "all"]

#: the issue's (and the paper's Table 5) category sizes
CATEGORY_COUNTS: dict[str, int] = {
    "poi_impact": 11,
    "infrastructure": 8,
    "clustering_aggregation": 7,
    "building_damage": 4,
    "comparative": 4,
    "flood": 2,
    "burn_intensity": 1,
    "land_cover": 1,
    "population": 1,
    "satellite_imagery": 1,
}
DIFFICULTY_SHARES: dict[str, float] = {"hard": 0.6, "medium": 0.3, "simple": 0.1}
CATEGORY_TITLES: dict[str, str] = {
    "poi_impact": "Point-of-interest impact",
    "infrastructure": "Infrastructure",
    "clustering_aggregation": "Clustering and aggregation",
    "building_damage": "Building damage",
    "comparative": "Comparative",
    "flood": "Flood",
    "burn_intensity": "Burn intensity",
    "land_cover": "Land cover",
    "population": "Population and humanitarian",
    "satellite_imagery": "Satellite imagery",
}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AOISpec(Strict):
    """Which area the task is about. ``hazard``: the event's hazard footprint (burn area, flood extent);
    ``damage``: the building-damage layer's extent; ``place``: a named place; ``layer``: a sample-data
    layer that no event-table record carries (e.g. the Hurst fire mask)."""

    kind: Literal["hazard", "damage", "place", "layer", "event_bbox"]
    layers: list[str] = Field(default_factory=list, description="acceptable catalogue layer ids / data files")
    place: str | None = None
    note: str = ""


class TimeWindowSpec(Strict):
    """An imagery or observation window the run must respect, relative to the event date."""

    label: Literal["pre", "post", "explicit"]
    start: date | None = None
    end: date | None = None
    max_days: int | None = Field(default=None, description="a window longer than this is too broad")


class Expectation(Strict):
    """One numeric or set-valued expectation. ``ref`` points into expected.json (dotted path);
    ``value`` is used when there is no ref. No value at all: a semantic expectation (LLM judge only).

    kinds: ``count`` (an integer: features, table total); ``value`` (a float: area, mean, sum, share);
    ``names`` (a set of feature names: recall and precision against the expected set);
    ``count_by`` (a mapping value -> count, e.g. per damage class); ``distance`` (metres to named
    features: mapping name -> metres); ``boolean``."""

    id: str
    kind: Literal["count", "value", "names", "count_by", "distance", "boolean"]
    description: str
    ref: str | None = None
    value: Any = None
    abs_tol: float = 0.0
    rel_tol: float = 0.0
    unit: str | None = None
    min_recall: float = 1.0
    min_precision: float = 1.0
    top: int | None = Field(default=None, description="names/distance: compare with the first N ranked features only")
    in_answer: bool = Field(default=True, description="the answer text must state the value too")
    group: str | None = Field(
        default=None,
        description="count/value: the group the stated value must be labelled with (e.g. 'destroyed'), as the data "
        "spells it: the stated value's group, or the one class or value its artifact's lineage was filtered to; None: "
        "a total",
    )
    # the other labels of a count/value (bench/labels.py reads them from ids, never from words): with two or more
    # values in one turn, each is matched to the stated value of its own label, so a swap of two values fails
    events: list[int] = Field(
        default_factory=list,
        description="count/value: the event-table records the value is of (one side of a comparison): its "
        "artifact's lineage reaches exactly these records' events (snapshots of one event count as one)",
    )
    relation: Relation | None = Field(
        default=None,
        description="count/value: how the counted features relate to the task's area: 'inside' it (selected by an "
        "inside step), 'outside' it, or 'all' (neither: a base total)",
    )
    measure: Measure | None = Field(
        default=None,
        description="count/value: the stated value's measure (structured answer's vocabulary: 'max' for the "
        "densest cell, 'sum', 'mean', 'share'); None: any measure of the kind",
    )

    @model_validator(mode="after")
    def _labels_of_numbers(self) -> Expectation:
        if (self.events or self.relation or self.measure) and self.kind not in ("count", "value"):
            raise ValueError(f"expectation {self.id}: events, relation and measure label a count or a value")
        return self

    @property
    def labelled(self) -> bool:
        """The expectation names which stated value it is (a group, events, a relation or a measure)."""
        return bool(self.group is not None or self.events or self.relation or self.measure)

    def resolve(self, expected: dict | None = None) -> Any:
        """The expected value (from expected.json when ``ref`` is set); None for semantic expectations."""
        if self.ref is None:
            return self.value
        data = expected if expected is not None else load_expected()
        node: Any = data
        for part in self.ref.split("."):
            if not isinstance(node, dict) or part not in node:
                raise KeyError(f"expectation {self.id}: {self.ref} not in expected.json")
            node = node[part]
        return node

    def within(self, observed: float, expected: float) -> bool:
        tol = max(self.abs_tol, abs(expected) * self.rel_tol)
        return abs(float(observed) - float(expected)) <= tol + 1e-9


class ArtifactSpec(Strict):
    """A requested output artifact: kind and geometry family (point | line | polygon)."""

    kind: OutputKind
    geometry: Literal["point", "line", "polygon"] | None = None
    min_features: int = 0  # 0: an empty layer is a valid answer ("none within 1 km")


class Turn(Strict):
    """A follow-up question in the same session (multi-turn tasks)."""

    question: str
    expectations: list[Expectation] = Field(default_factory=list)
    output: OutputKind = "answer"
    artifacts: list[ArtifactSpec] = Field(default_factory=list)
    required_predicates: list[str] = Field(default_factory=list)


Split = Literal["original", "paraphrase", "variant", "language", "aoi", "own_layer", "heldout", "raster"]
Style = Literal["terse", "verbose", "typos", "coordinator"]
Language = Literal["en", "es", "fr", "pt"]


class TaskSpec(Strict):
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    question: str
    split: Split = Field(
        default="original",
        description="which question set the task belongs to: an original task, a paraphrase of one, a constraint "
        "variant of one, one in another language, one with an AOI file, one about a layer the user added (reported "
        "as separate rows), or one about rasters the user has (``raster``)",
    )
    base_task: str | None = Field(
        default=None,
        description="the original task (bench/tasks.json) this one rephrases, translates or varies; a paraphrase "
        "or translation of it shares its expectations, a variant (other distance, class, measure, AOI) has its own",
    )
    style: Style | None = Field(default=None, description="how a paraphrase is worded")
    language: Language = Field(default="en", description="the language of the questions")
    input_files: list[str] = Field(
        default_factory=list,
        description="files the runner writes into the session and registers before the first turn (as batch mode "
        "does; an area-like polygon becomes the AOI); generated from coordinates in bench/aoi_files.py, or (rasters "
        "and a districts layer) by bench/raster_inputs.py",
    )
    persona: Persona
    category: Category
    difficulty: Difficulty
    # disaster context
    event_ids: list[int] = Field(
        description="acceptable event-table records (snapshots of one fire count "
        "as one); empty when the task is on no table record"
    )
    event_date: date | None = None
    aoi: AOISpec
    # what is asked
    target_feature: str | None = Field(default=None, description="feature class or layer asked about")
    buffer_m: float | None = None
    time_windows: list[TimeWindowSpec] = Field(default_factory=list)
    required_sources: list[str] = Field(
        default_factory=list, description="source tokens, see observations.source_matches"
    )
    required_predicates: list[str] = Field(
        default_factory=list, description="spatial predicates/operations, see observations.PREDICATES"
    )
    crs_constraints: list[
        Literal["metric_for_distance", "metric_for_area", "geodesic_or_projected", "preserve_source_crs"]
    ] = Field(default_factory=list)
    output: OutputKind = "answer"
    artifacts: list[ArtifactSpec] = Field(default_factory=list)
    expectations: list[Expectation] = Field(default_factory=list)
    failure_modes: list[str] = Field(default_factory=list)
    follow_ups: list[Turn] = Field(default_factory=list)
    # running
    offline: bool = Field(description="runnable fully on the sample data in ../shared/data")
    capabilities: list[str] = Field(
        default_factory=list, description="tools the task needs (agent.tool); missing ones are reported as gaps"
    )
    notes: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> TaskSpec:
        if self.offline:
            for e in self.all_expectations():
                if e.ref is None and e.value is None:
                    raise ValueError(f"{self.id}: offline task with a semantic expectation {e.id}")
        ids = [e.id for e in self.all_expectations()]
        if len(ids) != len(set(ids)):
            raise ValueError(f"{self.id}: duplicate expectation ids")
        return self

    def turns(self) -> list[Turn]:
        """The first question and the follow-ups, as turns."""
        first = Turn(
            question=self.question,
            expectations=self.expectations,
            output=self.output,
            artifacts=self.artifacts,
            required_predicates=self.required_predicates,
        )
        return [first, *self.follow_ups]

    def all_expectations(self) -> list[Expectation]:
        turns: list[TaskSpec | Turn] = [self, *self.follow_ups]
        return [e for t in turns for e in t.expectations]


class TaskFile(Strict):
    about: str = ""
    tasks: list[TaskSpec]


def load_tasks(path: Path | str = TASKS_FILE) -> list[TaskSpec]:
    return TaskFile.model_validate_json(Path(path).read_text(encoding="utf-8")).tasks


def select_tasks(
    tasks: list[TaskSpec],
    ids: str | list[str] | None = None,
    offline: bool = False,
    splits: str | list[str] | None = None,
) -> list[TaskSpec]:
    """``ids``: comma-separated ids or id prefixes (``poi_``); ``offline``: only offline tasks; ``splits``:
    comma-separated question sets (``paraphrase,language``)."""
    chosen = tasks
    if splits:
        wanted_splits = {s.strip() for s in (splits.split(",") if isinstance(splits, str) else splits) if s.strip()}
        chosen = [t for t in chosen if t.split in wanted_splits]
    if ids:
        wanted = [i.strip() for i in (ids.split(",") if isinstance(ids, str) else ids) if i.strip()]
        unknown = [w for w in wanted if not any(t.id == w or t.id.startswith(w) for t in tasks)]
        if unknown:
            raise KeyError(f"unknown task ids: {', '.join(unknown)}")
        chosen = [t for t in chosen if any(t.id == w or t.id.startswith(w) for w in wanted)]
    if offline:
        chosen = [t for t in chosen if t.offline]
    return chosen


@lru_cache(maxsize=1)
def _expected_cached(mtime: float) -> dict:
    return json.loads(EXPECTED_FILE.read_text(encoding="utf-8"))


def load_expected(generate: bool = True) -> dict:
    """expected.json, generated by ground_truth.py when it is missing (it is derived data)."""
    if not EXPECTED_FILE.exists():
        if not generate:
            raise FileNotFoundError(f"{EXPECTED_FILE} is missing; run python -m bench ground-truth")
        from .expected_values import write_expected

        write_expected()
    return _expected_cached(EXPECTED_FILE.stat().st_mtime)
