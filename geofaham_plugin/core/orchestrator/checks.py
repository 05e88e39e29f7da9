"""The three pre-dispatch checks, done in code: plan adherence, input validity, geospatial compatibility.
A failed check is an observation (a :class:`Failure`), never an exception. And one check of the question's
facts before planning (:func:`check_distances`): a distance GeoFaham cannot measure is the user's to fix."""

from __future__ import annotations

import math

from ..agents.base import Tool
from ..domain.geometry import geometry_family
from ..domain.ids import ARTIFACT_ID
from ..errors import InputError
from ..planning.facts import PrepassFacts
from ..planning.plan import STEP_REF, PlanStep
from ..planning.spec_schema import Relation
from ..store.models import ArtifactRecord, Bounds, VectorMeta
from ..store.store import ResponseStore
from .ledgers import Failure, ProgressLedger, StepStatus

#: the farthest distance a question may ask about ("within 200 km"): what a relation takes
MAX_DISTANCE_M = next(float(m.le) for m in Relation.model_fields["distance_m"].metadata if getattr(m, "le", None))


def check_distances(facts: PrepassFacts) -> None:
    """Every distance the question states is more than 0 and at most :data:`MAX_DISTANCE_M`; else one line
    (:class:`InputError`) before anything is planned."""
    for distance in facts.distances_m:
        if not 0 < distance <= MAX_DISTANCE_M or not math.isfinite(distance):
            shown = f"{distance / 1000:,.0f} km" if distance >= 1000 else f"{distance:g} m"
            raise InputError(
                f"a distance of {shown} is not one GeoFaham measures (more than 0, at most "
                f"{MAX_DISTANCE_M / 1000:,.0f} km)",
                hint="ask within a distance up to that, e.g. 'within 5 km'",
            )


def check_plan_adherence(step: PlanStep, progress: ProgressLedger) -> Failure | None:
    waiting = [d for d in step.depends_on if progress.status.get(d) is not StepStatus.done]
    if waiting:
        states = ", ".join(
            f"step {d} is {progress.status[d].value if d in progress.status else 'not in the plan'}" for d in waiting
        )
        return Failure(
            step_id=step.id, check="plan_adherence", kind="dependency", message=f"prerequisites not done: {states}"
        )
    return None


def check_input_validity(
    step: PlanStep, progress: ProgressLedger, store: ResponseStore
) -> tuple[dict[str, ArtifactRecord], Failure | None]:
    """Resolve every input to a registered artifact. A planned output is not an artifact."""
    records: dict[str, ArtifactRecord] = {}
    for slot, ref in step.inputs.items():
        if m := STEP_REF.match(ref):
            source = int(m.group(1))
            artifact_id = progress.artifacts.get(source)
            if artifact_id is None:
                state = progress.status.get(source)
                return records, Failure(
                    step_id=step.id,
                    check="input_validity",
                    kind="not_produced",
                    message=f"input '{slot}' refers to the planned output of step {source}, which is "
                    f"{state.value if state else 'not in the plan'}: it is not an artifact",
                )
        elif ARTIFACT_ID.match(ref):
            artifact_id = ref
        else:
            return records, Failure(
                step_id=step.id,
                check="input_validity",
                kind="malformed",
                message=f"input '{slot}' = {ref!r} is neither an artifact id nor a step reference",
            )
        if artifact_id not in store:
            return records, Failure(
                step_id=step.id,
                check="input_validity",
                kind="unknown_artifact",
                message=f"input '{slot}' = {artifact_id} does not exist in the Response Store",
                hint="use only ids listed as available artifacts",
            )
        records[slot] = store.get(artifact_id)
    return records, None


def _expand(bounds: Bounds, metres: float) -> Bounds:
    lat = max(abs(bounds.miny), abs(bounds.maxy))
    dlat = metres / 110_574.0
    dlon = metres / (111_320.0 * max(math.cos(math.radians(min(lat, 89.0))), 0.01))
    return Bounds(minx=bounds.minx - dlon, miny=bounds.miny - dlat, maxx=bounds.maxx + dlon, maxy=bounds.maxy + dlat)


def check_geospatial_compatibility(
    step: PlanStep, tool: Tool, records: dict[str, ArtifactRecord], notes: list[str]
) -> Failure | None:
    """Kinds, geometry types, CRS, emptiness, extents and schema of the inputs fit the operation."""

    def fail(kind: str, message: str, hint: str | None = None) -> Failure:
        return Failure(step_id=step.id, check="geospatial_compatibility", kind=kind, message=message, hint=hint)

    for spec in tool.inputs:
        record = records.get(spec.name)
        if record is None:
            continue
        if record.kind not in spec.kinds:
            return fail(
                "kind",
                f"{tool.name} needs {'/'.join(sorted(k.value for k in spec.kinds))} for '{spec.name}', "
                f"{record.id} is {record.kind.value}",
            )
        meta = record.metadata
        if isinstance(meta, VectorMeta):
            if meta.feature_count == 0 and spec.name not in tool.accepts_empty:
                return fail("empty", f"'{spec.name}' ({record.id}) has no features")
            if not meta.crs:
                return fail("crs", f"'{spec.name}' ({record.id}) has no CRS")
            if spec.geometry and geometry_family(meta.geometry_type) not in spec.geometry:
                return fail(
                    "geometry",
                    f"'{spec.name}' must be {'/'.join(sorted(spec.geometry))}, {record.id} is {meta.geometry_type}",
                )
            if tool.metric and meta.crs_is_geographic:
                notes.append(
                    f"step {step.id}: {record.id} is in {meta.crs} (degrees); the engine measures in a local "
                    f"metric projection and reports geodesic distances"
                )
    if tool.overlap:
        a, b, distance_field = tool.overlap
        ra, rb = records.get(a), records.get(b)
        bounds_a = getattr(ra.metadata, "bounds_4326", None) if ra else None
        bounds_b = getattr(rb.metadata, "bounds_4326", None) if rb else None
        if ra and rb and bounds_a and bounds_b:  # (empty layers and tables have no bounds)
            reach = float(step.args.get(distance_field, 0) or 0) if distance_field else 0.0
            if not _expand(bounds_b, reach).intersects(bounds_a):
                return fail(
                    "bounds",
                    f"'{a}' ({ra.id}) lies entirely outside '{b}' ({rb.id})"
                    + (f" extended by {reach:g} m" if reach else ""),
                    hint="the layers are in different places: check the AOI or the event",
                )
    if tool.field_arg:
        arg, slot = tool.field_arg
        wanted = step.args.get(arg)
        record = records.get(slot)
        if wanted and record is not None and isinstance(record.metadata, VectorMeta):
            fields = [f.name for f in record.metadata.fields]
            if wanted not in fields:
                return fail("schema", f"{record.id} has no field '{wanted}'", hint="fields: " + ", ".join(fields))
    return None
