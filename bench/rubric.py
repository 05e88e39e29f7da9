"""The GeoFaham paper's architecture-neutral cross-system rubric (13 dimensions in five categories),
its weights and diagnostic flags, and the LLM judge's prompt — all judge prompts live here.

Scale for every dimension: 1.00 correct, complete and well supported; 0.75 mostly correct with minor
omissions; 0.50 partially correct with important gaps; 0.25 major flaws with some useful evidence;
0.00 missing, unsupported, incorrect or non-compliant. Category scores average their dimensions; the
overall score weighs Task Outcome 35 %, Geospatial Method 30 %, Reproducibility 15 %, Compliance 10 %
and Robustness 10 %. Runtime and tokens are reported separately and do not affect the score."""

from __future__ import annotations

SCALE = (0.0, 0.25, 0.5, 0.75, 1.0)

#: category -> (weight, [(dimension key, title, definition)])
CATEGORIES: dict[str, tuple[float, list[tuple[str, str, str]]]] = {
    "task_outcome": (
        0.35,
        [
            (
                "answer_accuracy",
                "Answer Accuracy",
                "The final answer agrees with the expected findings: counts, rankings, distances, areas, classifications "
                "and affected entities fall within the specification's tolerances. Alternative valid workflows may give "
                "slightly different values if consistent with the executed analysis. Unsupported caveats do not "
                "compensate for an incorrect answer.",
            ),
            (
                "answer_completeness",
                "Answer Completeness",
                "Every requested part is addressed: statistics, rankings, comparisons, explanations and output artifacts. "
                "A correct text answer is incomplete when a requested GeoJSON, raster, table or map artifact is missing.",
            ),
        ],
    ),
    "geospatial_method": (
        0.30,
        [
            (
                "data_selection_correctness",
                "Data Selection Correctness",
                "The correct disaster record, event, area of interest, layers, attributes, imagery collections and map "
                "features were used. Penalise an administrative boundary used in place of a hazard footprint, the wrong "
                "event, irrelevant data or an omitted required source.",
            ),
            (
                "spatial_temporal_logic",
                "Spatial-Temporal Logic",
                "Event-date consistency, pre/post windows, buffer distances, spatial joins, predicate semantics, order of "
                "dependent operations and handling of missing data answer the task (the logic, not numeric quality).",
            ),
            (
                "geometric_operation_quality",
                "Geometric Operation Quality",
                "Appropriate geometric methods: metric distances, areas and lengths in a projected CRS or geodesically "
                "(never planar degrees), sound predicates, invalid geometries handled, precision kept. Full credit when no "
                "non-trivial geometric operation is required.",
            ),
            (
                "geometry_data_integrity",
                "Geometry Data Integrity",
                "Geometric and numeric results come from an executed deterministic engine (PostGIS, GeoPandas, Shapely, "
                "GDAL, rasterio), not inferred by a language model from coordinate text. Full credit when no geometry "
                "computation is involved.",
            ),
            (
                "implementation_correctness",
                "Implementation Correctness",
                "Tool calls, SQL or code executed successfully and produced the result claimed. Penalise failed steps "
                "treated as successful, empty outputs read as valid zero results, and discrepancies between executed "
                "outputs and reported values.",
            ),
        ],
    ),
    "reproducibility": (
        0.15,
        [
            (
                "structured_result_evidence",
                "Structured Result Evidence",
                "Complete, machine-readable evidence exists for the final output (final answer, run trace, Response Store "
                "entries and metadata).",
            ),
            (
                "method_traceability",
                "Method Traceability",
                "An evaluator can tell which data sources, operations and intermediate steps produced the answer.",
            ),
            (
                "artifact_quality",
                "Artifact Quality",
                "Requested layers, rasters, tables or maps were produced and are relevant, plausible, usable and "
                "consistent with the answer; missing, empty or irrelevant artifacts score lower.",
            ),
        ],
    ),
    "compliance": (
        0.10,
        [
            (
                "benchmark_rule_compliance",
                "Benchmark Rule Compliance",
                "Only the supplied inputs, read-only data access, approved libraries and listed endpoints were used: no "
                "ground-truth files, no database writes, no undisclosed sources; task-specific source and execution rules "
                "are respected.",
            ),
        ],
    ),
    "robustness": (
        0.10,
        [
            (
                "error_handling",
                "Error Handling",
                "Failed queries, service errors, empty results, invalid code, insufficient coverage and timeouts are "
                "diagnosed and handled (revised workflow or a supported partial answer). Full credit when no error "
                "occurred and the evidence confirms success.",
            ),
            (
                "evidence_aware_confidence",
                "Evidence-Aware Confidence",
                "The certainty of the answer matches the evidence: unsupported results stated confidently are penalised, "
                "as are generic caveats that name no actual limitation (coverage, data snapshot, failed operation).",
            ),
        ],
    ),
}
DIMENSIONS: list[str] = [key for _, dims in CATEGORIES.values() for key, _, _ in dims]
TITLES: dict[str, str] = {key: title for _, dims in CATEGORIES.values() for key, title, _ in dims}
CATEGORY_TITLES = {
    "task_outcome": "Task Outcome",
    "geospatial_method": "Geospatial Method",
    "reproducibility": "Reproducibility",
    "compliance": "Compliance",
    "robustness": "Robustness",
}
assert len(DIMENSIONS) == 13 and abs(sum(w for w, _ in CATEGORIES.values()) - 1.0) < 1e-9

#: the cross-system judge's binary diagnostic flags (they do not change the score)
FLAGS: dict[str, str] = {
    "run_completed": "the run completed (was not cut off, did not crash)",
    "valid_structured_output": "machine-readable final evidence exists and parses",
    "forbidden_source_used": "a source outside the benchmark's allowed inputs was used",
    "database_write_attempted": "a database write (INSERT/UPDATE/DELETE/DDL) was attempted",
    "required_artifact_missing": "a requested output artifact is missing or empty",
    "unsupported_result_reported": "the answer reports a result no executed step supports",
    "service_failure_or_timeout": "a service failure or a timeout occurred",
    "raw_coordinates_through_llm": "raw coordinates were passed through a language model",
    "llm_numeric_geometry": "a numeric geometric result was produced by language-model reasoning",
    "coordinate_precision_lost": "coordinate precision was lost in a consequential way",
    "appropriate_metric_crs": "metric computations used a projected CRS or a geodesic method",
    "invalid_geometry_unhandled": "invalid geometries were used without repair or a caveat",
    # internal (process) flags
    "errors_occurred": "at least one execution failure occurred",
    "recovered": "the run recovered from its failures",
    "replanned": "the orchestrator replanned",
    "replan_successful": "a replan was necessary and led to an answer",
    "slow_but_correct": "correct but slow or inefficient",
    "redundant_steps": "contains unnecessary repeated operations",
}


def weighted(scores: dict[str, float]) -> dict[str, float]:
    """Category scores and the overall score from the 13 dimension scores."""
    out: dict[str, float] = {}
    overall = 0.0
    for category, (weight, dims) in CATEGORIES.items():
        values = [scores[key] for key, _, _ in dims if key in scores]
        cat = sum(values) / len(values) if values else 0.0
        out[category] = round(cat, 4)
        overall += weight * cat
    out["overall"] = round(overall, 4)
    return out


def snap(value: float) -> float:
    """The nearest point of the five-point scale."""
    value = min(1.0, max(0.0, float(value)))
    return min(SCALE, key=lambda s: abs(s - value))


JUDGE_SYSTEM = (
    "You are the judge of GeoFaham-Bench, a benchmark of geospatial disaster-response workflows. You score ONE run "
    "against its task specification with the 13-dimension cross-system rubric below. Judge only from the evidence "
    "given (task specification with expected values and tolerances, run record, artifact metadata); alternative "
    "valid workflows get full credit when they satisfy the same spatial, temporal, methodological and output "
    "requirements. A failed or timed-out run is scored on the evidence it produced before failing. Scale for every "
    "dimension: 1.0 correct, complete and well supported; 0.75 mostly correct, minor omissions; 0.5 partially "
    "correct, important gaps; 0.25 major flaws with some useful evidence; 0.0 missing, unsupported, incorrect or "
    "non-compliant.\n\nDimensions:\n"
    + "\n".join(f"- {key} ({TITLES[key]}): {text}" for _, dims in CATEGORIES.values() for key, _, text in dims)
    + "\n\nDiagnostic flags (true/false, independent of the scores):\n"
    + "\n".join(f"- {key}: {text}" for key, text in FLAGS.items())
    + '\n\nReply with one JSON object only: {"scores": {<dimension>: number, ...all 13}, "flags": {<flag>: '
    'true/false, ...}, "rationale": "at most 80 words naming the decisive evidence"}.'
)
