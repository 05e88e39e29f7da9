"""The bench's files: result files (``results/<config>/<task>.json``), the folders that hold them, the
JSON the judges and the runner write beside them, and the run records a task's session leaves.

:func:`session_run_records` is the ONE place the bench reads run records (``runs/r_*.json`` and the
saved state of a run that did not finish, ``runs/r_*.state.json``); everything else reads the run
records copied into the result files."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

#: files of a configuration's folder that are not task results
RESERVED = {"config.json", "summary.json", "judgments.json"}


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def atomic_write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON through a temporary file, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_json(path: Path | str, default: Any = None) -> Any:
    """The JSON in ``path``, or ``default`` when the file does not exist."""
    path = Path(path)
    if not path.exists():
        return default
    return json.loads(path.read_text(encoding="utf-8"))


def _is_result(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "task_id" in data and "turns" in data


def result_files(folder: Path | str) -> list[Path]:
    """The task results of one configuration's folder (other JSON files, e.g. performance benchmarks'
    outputs sharing bench/results/, are ignored)."""
    return sorted(p for p in Path(folder).glob("*.json") if p.name not in RESERVED and _is_result(p))


def read_result(path: Path | str) -> dict:
    """One task's result file."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def read_results(folder: Path | str) -> list[dict]:
    """Every task result of one configuration's folder, in task-id order."""
    return [read_result(p) for p in result_files(folder)]


def config_folders(results: Path | str) -> list[Path]:
    """``results`` is one configuration's folder, or a folder of them."""
    results = Path(results)
    if not results.is_dir():
        return []
    if (results / "config.json").exists():
        return [results]
    folders = sorted(p for p in results.iterdir() if p.is_dir() and ((p / "config.json").exists() or result_files(p)))
    return folders or ([results] if result_files(results) else [])


def session_run_records(session: Path, exclude: set[str] | frozenset[str] = frozenset()) -> list[dict]:
    """The run records a session folder holds, oldest first, without the runs whose id is in
    ``exclude``: the final record (``runs/<run>.json``) of every run that has one, else its saved
    state (``runs/<run>.state.json``, a run cut off mid-way)."""
    from geofaham_plugin.core.orchestrator.runlog import RunLog

    return [record.model_dump(mode="json") for record in RunLog(session).runs(exclude=exclude)]
