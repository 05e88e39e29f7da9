"""``run_python``: the Raster specialist's tool for models that write code. The code runs in a
separate, resource-limited, network-less sandbox process (``engines/raster/sandbox.py``) with the CPU
and memory limits of the run's settings (``settings.sandbox``: GEOFAHAM_SANDBOX_CPU_S /
GEOFAHAM_SANDBOX_MEMORY_MB, or the QGIS dialog), read when the tool runs. Every output it saved is
rewritten inside the sandbox and checked before this process opens it (``sandbox_outputs``), and
nothing is registered unless all passed. Without Landlock the code is not run unless
GEOFAHAM_SANDBOX_ALLOW_NO_LANDLOCK is set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ...domain.names import AgentName
from ...errors import ToolFailed
from ...store.models import ArtifactKind, ArtifactRecord
from ..base import InputSpec, ToolContext, tool
from .outputs import limitations_of
from .scene import bands_of

R = AgentName.raster
ANY_KIND = frozenset(ArtifactKind)


class RunPythonArgs(BaseModel):
    code: str = Field(
        min_length=1,
        max_length=20_000,
        description=(
            "Python run in a sandbox. Given: np, gr (raster library: gr.read_raster(inputs['a']) -> ({band: array}, grid), "
            "gr.spectral_index, gr.dnbr, gr.classify, gr.zonal_stats ...; gr.save_raster(name, array, grid), gr.save_vector, "
            "gr.save_table, gr.save_text), inputs (name -> {path, kind, id, bands}). No network, no files outside the "
            "session. Set RESULT = '<saved file name>' to choose the returned output (default: the last saved)."
        ),
    )
    timeout_s: int = Field(default=180, ge=5, le=1800, description="wall-clock limit in seconds")


def _sandbox_input(ctx: ToolContext, record: ArtifactRecord) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": record.id,
        "kind": record.kind.value,
        "path": str(ctx.store.abs_path(record.id)),
        "summary": record.summary,
    }
    if record.kind in (ArtifactKind.raster, ArtifactKind.item_set):
        item["bands"] = bands_of(record)
    return item


def _load_output(path: Path, kind: str) -> Any:
    """The content of an output the sandbox already rewrote and checked (``sandbox_outputs``)."""
    if kind == "vector":
        import geopandas as gpd

        return gpd.read_file(path, engine="pyogrio")
    if kind == "table":
        import pandas as pd

        return pd.read_csv(path)
    if kind == "text":
        return path.read_text(encoding="utf-8", errors="replace")
    return None


@tool(
    agent=R,
    args=RunPythonArgs,
    output=ArtifactKind.raster,
    optional_inputs=("a", "b", "c"),
    inputs=(
        InputSpec("a", ANY_KIND, description="any artifact, exposed as inputs['a']"),
        InputSpec("b", ANY_KIND, description="any artifact, exposed as inputs['b']"),
        InputSpec("c", ANY_KIND, description="any artifact, exposed as inputs['c']"),
    ),
)
def run_python(
    ctx: ToolContext,
    args: RunPythonArgs,
    a: ArtifactRecord | None = None,
    b: ArtifactRecord | None = None,
    c: ArtifactRecord | None = None,
) -> ArtifactRecord:
    """Run Python written by the model in a sandbox (no network, session files only, CPU/memory/time
    limits); registers every output it saved and returns the main one (a raster unless RESULT names
    another file). For operations the typed tools do not offer."""
    from ...engines.raster import sandbox

    given = {name: rec for name, rec in (("a", a), ("b", b), ("c", c)) if rec is not None}
    configured = ctx.settings.sandbox  # the run's settings: environment, or the QGIS dialog on top of it
    limits = sandbox.Limits(cpu_s=configured.cpu_s, memory_mb=configured.memory_mb, wall_s=float(args.timeout_s))
    result = sandbox.run_code(
        args.code,
        session_dir=ctx.store.session_dir,
        inputs={k: _sandbox_input(ctx, r) for k, r in given.items()},
        limits=limits,
        cancel=ctx.cancel,
        work_dir=getattr(ctx.store, "staging_dir", None),
        allow_without_landlock=configured.allow_no_landlock,
    )
    try:
        if result.kind == "cancelled":
            raise ToolFailed("cancelled", kind="cancelled")
        if result.kind == "unavailable":
            message, hint = result.message.split("; ", 1)
            raise ToolFailed(message, kind="error", hint=hint)
        if not result.ok:
            kind = {
                "rejected": "invalid_input",
                "violation": "invalid_input",
                "refused": "invalid_input",
                "timeout": "timeout",
            }.get(result.kind, "error")
            detail = (
                f"\nstderr: {result.stderr[-600:]}"
                if result.stderr.strip() and result.kind in ("error", "crashed")
                else ""
            )
            raise ToolFailed(
                f"the code failed ({result.kind}): {result.message}{detail}",
                kind=kind,
                hint="fix the code; only the listed modules, inputs and gr.save_* outputs are available",
            )
        checked = [(p, result.kinds[p], _load_output(p, result.kinds[p])) for p in result.outputs]
        if not checked:
            raise ToolFailed(
                "the code ran but saved no output",
                kind="empty",
                hint="save results with gr.save_raster / save_vector / save_table / save_text",
            )
        primary = result.primary if result.primary in [p for p, _, _ in checked] else checked[-1][0]
        ordered = [x for x in checked if x[0] != primary] + [x for x in checked if x[0] == primary]
        inputs = [r.id for r in given.values()]
        extra = {
            "code": args.code,
            "stdout": result.stdout[-2000:],
            "isolation": result.isolation,
            "seconds": result.seconds,
            "limitations": limitations_of(*given.values()),
        }
        registered: list[str] = []
        record = None
        for path, kind, data in ordered:
            source, summary = (
                f"raster.run_python:{path.name}",
                f"{path.name} computed by generated code ({result.seconds:g} s)",
            )
            meta = {**extra, "file": path.name, "also_registered": list(registered)}
            if kind == "raster":
                record = ctx.store.register_raster_file(path, source=source, summary=summary, inputs=inputs, extra=meta)
            elif kind == "vector":
                record = ctx.store.register_vector(data, source=source, summary=summary, inputs=inputs, extra=meta)
            elif kind == "table":
                record = ctx.store.register_table(data, source=source, summary=summary, inputs=inputs, extra=meta)
            else:
                first = data.strip().splitlines()[0] if data.strip() else path.name
                record = ctx.store.register_text(data, source=source, summary=first[:300], inputs=inputs, extra=meta)
            registered.append(record.id)
        assert record is not None  # ``checked`` is not empty
        return record
    finally:
        sandbox.cleanup(result)
