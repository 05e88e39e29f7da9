"""Composable analysis specs, the compiler: :func:`compile_specs` turns specs (:mod:`.spec_schema`) into a
:class:`Plan` whose steps are the same typed tools the templates use, so the validator and the orchestrator's
three checks apply unchanged. Nothing here invents a number: every measure is a tool that runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..agents.base import get_tool
from ..domain.damage import DamageClass
from ..domain.rasters import raster_vocabulary
from .plan import Plan, PlanStep
from .spec_schema import (
    ALL_CLASSES,
    NAMED_SEARCH_M,
    NEAREST_SEARCH_M,
    ROADS_AROUND_M,
    AnalysisSpec,
    SetRef,
    SpecError,
    event_name,
    search_ring_m,
)
from .templates import GROUP_BY_FIELDS


class StepBuilder:
    """Plan steps in order; an identical step (tool, args, inputs) is made once and shared."""

    def __init__(self) -> None:
        self.steps: list[PlanStep] = []
        self._index: dict[str, str] = {}

    def add(
        self, tool_name: str, goal: str, args: dict[str, Any], inputs: dict[str, str], *, empty_is_answer: bool = False
    ) -> str:
        key = repr((tool_name, sorted(args.items()), sorted(inputs.items())))
        if key in self._index:
            return self._index[key]
        tool = get_tool(tool_name)
        step_id = len(self.steps) + 1
        step = PlanStep(
            id=step_id,
            agent=tool.agent,
            tool=tool_name,
            goal=goal,
            args=args,
            inputs=inputs,
            expected_output=tool.output,
            empty_is_answer=empty_is_answer,
        )
        step.depends_on = sorted(set(step.step_refs()))
        self.steps.append(step)
        self._index[key] = f"step:{step_id}"
        return self._index[key]


def _set(
    b: StepBuilder, ref: SetRef, aoi: str | None, around: tuple[str, float] | None, *, select_all: bool = False
) -> tuple[str, str]:
    """Steps that make the set ``ref`` names (see :func:`_base_set`), then its attribute filters: the base
    of a share is the set before the filters that narrow it ("what share of the mobile homes burned": the
    mobile homes)."""
    s, base = _base_set(b, ref, aoi, around, select_all=select_all)
    if ref.kind != "damage":  # (a damage set is filtered before its damage classes are selected)
        s = _filtered(b, ref, s)
    return s, base


def _filtered(b: StepBuilder, ref: SetRef, s: str) -> str:
    for field, values in ref.filters.items():
        out = ref.filters_out.get(field, [])
        s = b.add(
            "filter_values",
            f"Keep those whose {field} is {' or '.join(values)}" + (f" (not {' or '.join(out)})" if out else ""),
            {"field": field, "values": values} | ({"taken_out": out} if out else {}),
            {"layer": s},
            empty_is_answer=True,
        )
    if ref.where is not None:
        w = ref.where
        s = b.add(
            "filter_where",
            f"Keep those whose {w.field} {w.op} {w.value}",
            w.model_dump(),
            {"layer": s},
            empty_is_answer=True,
        )
    return s


def _base_set(
    b: StepBuilder, ref: SetRef, aoi: str | None, around: tuple[str, float] | None, *, select_all: bool = False
) -> tuple[str, str]:
    """Steps that make the set ``ref`` names, restricted to the AOI. Returns (the set, the set before its
    attribute filter: the base of a share). ``around`` = (area, buffer m) where features are fetched."""
    if ref.kind == "aoi":
        if not aoi:
            raise SpecError("the question refers to an area of interest, but none is set")
        return aoi, aoi
    event = event_name(ref.event_id)
    if ref.kind == "hazard":
        s = b.add(
            "load_event_layer",
            f"Load the hazard area (burn area / flood extent) of {event}",
            {"event_id": ref.event_id, "role": "hazard"},
            {},
        )
        if aoi:
            s = b.add("clip", "Cut the hazard area to your area of interest", {}, {"features": s, "mask": aoi})
        return s, s
    if ref.kind == "damage":
        s = b.add(
            "load_event_layer",
            f"Load the building-damage inspections of {event}",
            {"event_id": ref.event_id, "role": "damage"},
            {},
        )
        if aoi:
            s = b.add(
                "inside",
                "Keep the damage records inside your area of interest",
                {},
                {"features": s, "mask": aoi},
                empty_is_answer=True,
            )
        if not ref.filters_part:
            s = _filtered(b, ref, s)
        base = s
        classes = ref.damage_classes or (ALL_CLASSES if select_all else [])
        if classes:
            s = b.add(
                "select_damage",
                f"Keep buildings with damage class {', '.join(c.value for c in classes)}",
                {"damage_classes": [c.value for c in classes]},
                {"damage": s},
                empty_is_answer=True,
            )
        if ref.filters_part:
            base = s
            s = _filtered(b, ref, s)
        return s, base
    if ref.kind == "layer":
        s = b.add("load_layer", f"Load your layer {ref.layer_id}", {"layer_id": ref.layer_id}, {})
        if aoi:
            s = b.add(
                "inside",
                f"Keep the features of {ref.layer_id} inside your area of interest",
                {},
                {"features": s, "mask": aoi},
                empty_is_answer=True,
            )
        return s, s
    # features of a class, fetched at the place the question names, or around an area (the reference, the AOI)
    if ref.place:
        s = b.add(
            "get_features_at",
            f"Find {ref.feature_class} features in {ref.place}",
            {"feature_class": ref.feature_class, "place": ref.place},
            {},
            empty_is_answer=True,
        )
        s = _narrowed(b, ref, s, aoi)
        return s, s
    area, buffer_m = around if around else (aoi, 0.0) if aoi else (None, 0.0)
    if area is None and ref.event_id is not None:  # features of a disaster: in and around its hazard area
        area = _set(b, SetRef(kind="hazard", event_id=ref.event_id), None, None)[0]
    if area is None:
        raise SpecError(f"there is no area to look for {ref.feature_class} in: name a disaster or set an area")
    where = f" and {buffer_m:g} m around it" if buffer_m else ""
    s = b.add(
        "get_features",
        f"Find {ref.feature_class} features in the area{where}",
        {"feature_class": ref.feature_class, "buffer_m": buffer_m},
        {"aoi": area},
        empty_is_answer=True,
    )
    s = _narrowed(b, ref, s, aoi if area != aoi else None)
    return s, s


def _narrowed(b: StepBuilder, ref: SetRef, s: str, aoi: str | None) -> str:
    """Features of a class narrowed to the kinds asked for, to the hazard when they are qualified by it ("flooded
    buildings"), and to the AOI (when it was not their area)."""
    if ref.in_hazard and ref.event_id is not None:
        hazard = _set(b, SetRef(kind="hazard", event_id=ref.event_id), None, None)[0]
        s = b.add(
            "inside",
            f"Keep the {ref.feature_class} features inside the hazard area (the question's 'flooded' / 'burned')",
            {},
            {"features": s, "mask": hazard},
            empty_is_answer=True,
        )
    if ref.kinds:  # "hospitals", not every healthcare feature
        s = b.add(
            "select_kind",
            f"Keep only the {' and '.join(ref.kinds)} among the {ref.feature_class} features",
            {"feature_class": ref.feature_class, "kinds": list(ref.kinds)}
            | ({"named": list(ref.kind_words)} if ref.kind_words else {}),
            {"layer": s},
            empty_is_answer=True,
        )
    if ref.kinds_out:  # "excluding pharmacies": every other feature of the class
        s = b.add(
            "select_kind",
            f"Take the {' and '.join(ref.kinds_out)} out of the {ref.feature_class} features",
            {"feature_class": ref.feature_class, "kinds": list(ref.kinds_out), "exclude": True},
            {"layer": s},
            empty_is_answer=True,
        )
    if aoi:
        s = b.add(
            "inside",
            f"Keep the {ref.feature_class} features inside your area of interest",
            {},
            {"features": s, "mask": aoi},
            empty_is_answer=True,
        )
    return s


def _compile_raster(b: StepBuilder, spec: AnalysisSpec) -> str:
    """A raster of values (population ...): its sum or mean inside the reference area (or within a distance
    of it), your area, or per zone (the zones' parts inside the reference when there is one)."""
    aoi, relation = spec.aoi_artifact_id, spec.relation
    raster = b.add(
        "load_raster_layer", f"Load your raster {spec.subject.layer_id}", {"layer_id": spec.subject.layer_id}, {}
    )
    if spec.subject.index:
        raster = _index(b, spec.subject, raster)
    area: str | None = None
    where = "your area"
    if relation is not None:
        if relation.kind not in ("inside", "within"):
            raise SpecError(f"a raster's {spec.measure} is taken inside an area, not {relation.kind} it")
        if relation.reference.raster:  # a mask raster: the polygons of its classes (every class but 0)
            mask = b.add(
                "load_raster_layer",
                f"Load your raster {relation.reference.layer_id}",
                {"layer_id": relation.reference.layer_id},
                {},
            )
            area = b.add("polygonize", "Trace the mask's polygons", {"classes": None}, {"raster": mask})
        else:
            area, _ = _set(b, relation.reference, aoi, None)
        where = relation.reference.describe()
        if relation.kind == "within":
            area = b.add(
                "buffer",
                f"Buffer {where} by {relation.distance_m:g} m",
                {"distance_m": relation.distance_m, "dissolve": True},
                {"layer": area},
            )
            where = f"{relation.distance_m:g} m of {where}"
    by = None
    if spec.zones is not None:
        zones, _ = _set(b, spec.zones, aoi, None)
        by = spec.zone_label
        if area is not None:
            zones = b.add("clip", f"Cut {spec.zones.describe()} to {where}", {}, {"features": zones, "mask": area})
        area, where = zones, spec.zones.describe()
    elif area is None:
        if aoi:
            area = aoi
        else:
            where = "the whole raster"
    zones_input = {"zones": area} if area is not None else {}
    if spec.classification is not None:  # "the burned area per USGS severity class"
        return b.add(
            "class_areas",
            f"The {spec.measure} of each class of {spec.classification} inside {where}",
            {"classification": spec.classification, "measure": spec.measure},
            {"raster": raster, **zones_input},
        )
    if spec.measure == "share" and spec.threshold_below is None:
        stat = "share_above"
        args: dict[str, Any] = {"stat": stat, "by": by, "above": spec.threshold}
    elif spec.measure in ("share", "area"):
        stat = spec.measure
        args = {"stat": stat, "by": by, "above": spec.threshold, "below": spec.threshold_below}
    else:
        stat = spec.statistic or spec.measure
        args = {"stat": stat, "by": by}
    return b.add(
        "raster_stats",
        f"The {stat.replace('_', ' ')} of the raster's values inside {where}" + (" per zone" if spec.zones else ""),
        args,
        {"raster": raster, **zones_input},
    )


def _index(b: StepBuilder, subject: SetRef, post: str) -> str:
    """The steps computing the subject's index from its image (one date), or from its pre and post images."""
    spec = raster_vocabulary().indices[str(subject.index)]
    if subject.pre_layer_id is None or spec.change is None:
        return b.add("compute_index", f"{spec.title} of {subject.layer_id}", {"index": spec.index}, {"scene": post})
    pre = b.add("load_raster_layer", f"Load your raster {subject.pre_layer_id}", {"layer_id": subject.pre_layer_id}, {})
    if subject.index == "dnbr":
        return b.add("dnbr", f"dNBR from {subject.pre_layer_id} to {subject.layer_id}", {}, {"pre": pre, "post": post})
    return b.add(
        "index_change",
        f"{spec.title} (post − pre) from {subject.pre_layer_id} to {subject.layer_id}",
        {"index": spec.index},
        {"pre": pre, "post": post},
    )


def _compile_one(b: StepBuilder, spec: AnalysisSpec) -> str:
    """Steps for one spec; returns the reference of its last step."""
    if spec.subject.raster:
        return _compile_raster(b, spec)
    aoi = spec.aoi_artifact_id
    relation = spec.relation
    group_field = GROUP_BY_FIELDS.get(spec.group_by, spec.group_by) if spec.group_by else None
    select_all = spec.subject.kind == "damage" and (group_field == "damage_class" or spec.measure != "share")
    subject_aoi = aoi if not (relation and relation.reference.kind == "aoi") else None
    whole = (  # a share's base of the part's own grades, wherever it lies: the relation alone makes the part
        relation is not None and bool(spec.share_of) and set(spec.share_of) == set(spec.subject.damage_classes)
    )
    if relation is None:
        s, base = _set(b, spec.subject, aoi, None, select_all=select_all)
    else:
        subject = spec.subject
        late: list[DamageClass] = []
        if spec.measure == "share" and subject.kind == "damage" and subject.damage_classes and not whole:
            # "what share of the structures inside the perimeter were destroyed": the base is every structure
            # inside; the damage classes are selected after the relation. A base of the same grades as the part
            # ("of the destroyed structures, what share lie inside the flood") is that set wherever it lies: the
            # grades first, the relation makes the part
            late, subject = subject.damage_classes, subject.model_copy(update={"damage_classes": []})
        ref_aoi = aoi  # the reference is cut to the AOI too (the AOI itself is the AOI)
        reach = {"within": float(relation.distance_m or 0), "nearest": NEAREST_SEARCH_M}.get(relation.kind, 0.0)
        subject_located = subject.kind != "features" or bool(subject.place or subject_aoi)
        if relation.reference.kind == "features" and subject_located:
            # features to relate to are looked for around the subject set (damage within 800 m of a school)
            s, _ = _set(b, subject, subject_aoi, None, select_all=select_all)
            r, _ = _set(b, relation.reference, None, (s, reach), select_all=False)
        else:
            r, _ = _set(b, relation.reference, ref_aoi, (aoi, 0.0) if aoi else None, select_all=False)
            around: tuple[str, float] | None = None
            if subject.kind == "features":
                if spec.measure == "share":  # the share's base: all of them in the area, not only those near
                    around = (aoi, 0.0) if aoi else (r, search_ring_m("beyond", relation.distance_m))
                elif relation.kind in ("inside", "within", "nearest"):
                    # a feature named by name is the one wherever it is ("Molokai General Hospital", 40 km away)
                    around = (r, max(reach, NAMED_SEARCH_M) if subject.by_name else reach)
                else:  # outside / beyond: the AOI bounds the search, else a ring around the reference
                    around = (aoi, 0.0) if aoi else (r, search_ring_m(relation.kind, relation.distance_m))
            s, _ = _set(b, subject, subject_aoi, around, select_all=select_all)
        base = s
        if relation.kind == "inside":
            # the length of road inside the flood is the length of the parts inside: cut, not keep whole
            cut = spec.measure in ("area", "length") or spec.weight != "count"
            s = b.add(
                "clip" if cut else "inside",
                f"{'Cut them to' if cut else 'Keep those inside'} {relation.reference.describe()}",
                {},
                {"features": s, "mask": r},
                empty_is_answer=True,
            )
        elif relation.kind == "within":
            s = b.add(
                "within_distance",
                f"Keep those within {relation.distance_m:g} m of {relation.reference.describe()}, with distances",
                {"distance_m": relation.distance_m},
                {"features": s, "reference": r},
                empty_is_answer=True,
            )
        elif relation.kind == "nearest":
            if relation.outside_only:
                s = b.add(
                    "outside",
                    f"Keep those outside {relation.reference.describe()}",
                    {},
                    {"features": s, "mask": r},
                    empty_is_answer=True,
                )
            s = b.add(
                "nearest",
                f"Rank the {relation.k or 1} nearest to {relation.reference.describe()}",
                {"k": relation.k or 1},
                {"features": s, "reference": r},
                empty_is_answer=True,
            )
        else:
            mask = r
            if relation.kind == "beyond":
                mask = b.add(
                    "buffer",
                    f"Buffer {relation.reference.describe()} by {relation.distance_m:g} m",
                    {"distance_m": relation.distance_m, "dissolve": True},
                    {"layer": r},
                )
            s = b.add(
                "outside",
                f"Keep those outside {relation.reference.describe()}"
                + (f" buffered by {relation.distance_m:g} m" if relation.kind == "beyond" else ""),
                {},
                {"features": s, "mask": mask},
                empty_is_answer=True,  # none found is an answer (zero), the measure step states it
            )
        if late:
            base = s
            s = b.add(
                "select_damage",
                f"Keep buildings with damage class {', '.join(c.value for c in late)}",
                {"damage_classes": [c.value for c in late]},
                {"damage": s},
                empty_is_answer=True,
            )
    if subject_aoi and spec.measure in ("area", "length") and spec.subject.kind in ("features", "layer"):
        # the length of streets in your area is the length of their parts inside it: cut, not kept whole
        s = b.add(
            "clip",
            "Cut them to your area of interest (the parts inside are measured)",
            {},
            {"features": s, "mask": subject_aoi},
            empty_is_answer=True,
        )
    if spec.access is not None:
        return _compile_access(b, spec, s)
    if spec.grid_m is not None and spec.measure in ("count", "list"):
        return b.add(
            "grid_counts",
            f"Count them on a {spec.grid_m:g} m grid aligned to the UTM zone",
            {"cell_m": spec.grid_m},
            {"layer": s},
        )
    if spec.zones is not None and spec.measure in ("count", "list"):
        z, _ = _set(b, spec.zones, aoi, None)
        return b.add(
            "count_in_zones",
            f"Count them in each of {spec.zones.describe()}",
            {"label": spec.zone_label},
            {"features": s, "zones": z},
        )
    if spec.measure == "count":
        return b.add(
            "count",
            "Count them" + (f" by {spec.group_by}" if spec.group_by else ""),
            {"by": group_field},
            {"layer": s},
        )
    if spec.measure == "list":
        if group_field:
            return b.add("count", f"Count them by {spec.group_by}", {"by": group_field}, {"layer": s})
        return s
    if spec.measure == "share" and spec.share_of and set(spec.share_of) != set(ALL_CLASSES) and not whole:
        # "of the damaged structures, what fraction were destroyed": the base is the damaged ones of the same set
        base = b.add(
            "select_damage",
            f"Keep buildings with damage class {', '.join(c.value for c in spec.share_of)} (the share's base)",
            {"damage_classes": [c.value for c in spec.share_of]},
            {"damage": base},
            empty_is_answer=True,
        )
    if spec.measure == "share":
        weighed = f" (by {spec.weight}, measured geodesically)" if spec.weight != "count" else ""
        return b.add(
            "share",
            "Share of the selection in the set it was taken from"
            + weighed
            + (f", by {spec.group_by}" if spec.group_by else ""),
            {"by": group_field} | ({"weight": spec.weight} if spec.weight != "count" else {}),
            {"part": s, "base": base},
        )
    if spec.measure in ("area", "length"):
        return b.add(
            "measure",
            f"Measure the {spec.measure} geodesically" + (f" by {spec.group_by}" if spec.group_by else ""),
            {"quantity": spec.measure, "by": group_field},
            {"layer": s},
        )
    return b.add(
        "stats",
        f"{spec.measure} of {spec.field}" + (f" by {spec.group_by}" if spec.group_by else ""),
        {"field": spec.field, "stat": spec.measure, "by": group_field},
        {"layer": s},
    )


def _compile_access(b: StepBuilder, spec: AnalysisSpec, origins: str) -> str:
    """Road access of ``origins``: the hazard that cuts the roads, the road network (at the subject's place, else
    in and around the hazard), the targets; the cut roads as a layer, then routing before and after the cut."""
    access, aoi = spec.access, spec.aoi_artifact_id
    assert access is not None
    if access.hazard.kind == "damage":
        damaged, _ = _set(b, access.hazard, aoi, None)
        hazard = b.add(
            "buffer",
            f"Buffer the damaged buildings by {access.cut_buffer_m:g} m: roads there are taken as blocked",
            {"distance_m": access.cut_buffer_m, "dissolve": True},
            {"layer": damaged},
        )
    else:
        hazard, _ = _set(b, access.hazard, None, None)
    place = spec.subject.place
    if place:
        roads = b.add(
            "get_features_at",
            f"Load the road network of {place} (local OpenStreetMap extract, else Overpass)",
            {"feature_class": "roads", "place": place},
            {},
        )
    else:
        roads = b.add(
            "get_features",
            f"Load the road network in and {ROADS_AROUND_M:g} m around the hazard (local OpenStreetMap extract, else "
            "Overpass)",
            {"feature_class": "roads", "buffer_m": ROADS_AROUND_M},
            {"aoi": aoi or hazard},
        )
    inputs = {"roads": roads, "origins": origins, "hazard": hazard}
    if access.targets is not None:
        around = None if access.targets.place else (aoi or hazard, ROADS_AROUND_M)
        inputs["targets"], _ = _set(b, access.targets, aoi, around)
    to = access.targets.describe() if access.targets else "the rest of the road network"
    reach = b.add(
        "road_reachability",
        f"Route from each of them to {to} by road, before and after the hazard cuts the network",
        {},
        inputs,
        empty_is_answer=True,
    )
    b.add(
        "cut_roads", "Map the roads the hazard cuts (bridges over it kept open)", {}, {"roads": roads, "hazard": hazard}
    )
    return reach


def compile_specs(specs: Sequence[AnalysisSpec], *, difference: bool = False) -> Plan:
    """The typed plan for ``specs`` (one after another, sharing identical steps); with ``difference`` (a
    comparison asking "by how many"), the first result minus the second, computed by a step."""
    if not specs:
        raise SpecError("no analysis to compile")
    b = StepBuilder()
    ends = [_compile_one(b, spec) for spec in specs]
    if difference:
        if len(ends) != 2 or any(s.group_by or s.zones or s.measure in ("list", "share") for s in specs):
            raise SpecError("a difference compares two totals (two counts, sums, areas or lengths)")
        b.add(
            "difference",
            "Compare the two results: each total and their difference",
            {},
            {"first": ends[0], "second": ends[1]},
        )
    if len(b.steps) > 12:
        raise SpecError(f"the analysis needs {len(b.steps)} steps; a plan holds at most 12: ask one part at a time")
    # each analysis's own result though another's step reads it (the hospitals listed with their distances, and the
    # sum of their beds computed from them), in the analyses' order, then the other steps no step reads
    consumed = {d for s in b.steps for d in s.depends_on}
    terminal = [s.id for s in b.steps if s.id not in consumed]
    stepped = all(e.startswith("step:") for e in ends)
    own = list(dict.fromkeys(int(e.removeprefix("step:")) for e in ends)) if stepped and not difference else []
    results = own + [i for i in terminal if i not in own] if set(own) - set(terminal) else []
    return Plan(steps=b.steps, rationale="analysis spec: " + " | ".join(s.describe() for s in specs), results=results)


__all__ = ["StepBuilder", "compile_specs"]
