"""Export one run as a self-contained folder to share: its artifacts (and their lineage), the answer,
the run record and a README saying what each file is."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from .orchestrator.runlog import RunLog
from .store.models import ArtifactRecord

if TYPE_CHECKING:
    from .store.store import ResponseStore


def _lineage(store: ResponseStore, ids: list[str]) -> list[ArtifactRecord]:
    seen: dict[str, ArtifactRecord] = {}
    stack = list(ids)
    while stack:
        artifact_id = stack.pop()
        if artifact_id in seen or artifact_id not in store:
            continue
        record = store.get(artifact_id)
        seen[artifact_id] = record
        stack.extend(record.inputs)
    return sorted(seen.values(), key=lambda r: r.created_at)


def export_run(store: ResponseStore, run_id: str, destination: str | Path) -> Path:
    """Copy the run's artifacts and records into ``destination/<run_id>/``; returns that folder."""
    runlog = RunLog(store.session_dir)
    stored = runlog.record_text(run_id)  # raises RunNotFound (a FileNotFoundError) for an unfinished run
    record = runlog.load_record(run_id)
    artifacts = _lineage(store, record.artifact_ids())
    out = Path(destination) / run_id
    (out / "artifacts").mkdir(parents=True, exist_ok=True)
    for artifact in artifacts:
        source = store.abs_path(artifact.id)
        shutil.copy2(source, out / "artifacts" / source.name)
    (out / "run.json").write_text(stored, encoding="utf-8")  # the record exactly as the session holds it
    (out / "answer.md").write_text(f"# {record.question}\n\n{record.answer}\n", encoding="utf-8")
    if record.structured is not None:  # what the answer states, machine-readable (runs before it: none)
        (out / "structured_answer.json").write_text(record.structured.model_dump_json(indent=2), encoding="utf-8")
    (out / "artifacts.json").write_text(
        json.dumps([a.model_dump(mode="json") for a in artifacts], indent=2), encoding="utf-8"
    )
    lines = [
        f"# GeoFaham run {run_id}",
        "",
        f"Question: {record.question}",
        f"Status: {record.status}",
        "",
        "- `answer.md`: the answer (numbers computed by the engines; artifact ids cited in brackets)",
        "- `run.json`: the run record (ledgers, plans, steps, tool calls, tokens, timings)",
    ]
    if record.structured is not None:
        lines.append(
            "- `structured_answer.json`: what the answer states, machine-readable (each value with its label,"
            " group, unit and artifact; named items; yes/no; parts of the question not applied)"
        )
    lines += [
        "- `artifacts.json`: metadata and lineage of every artifact",
        "- `artifacts/`:",
    ]
    lines += [
        f"  - `{Path(a.path).name}`: {a.kind.value} — {a.summary}"
        + (f" (from {', '.join(a.inputs)})" if a.inputs else "")
        for a in artifacts
    ]
    (out / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out
