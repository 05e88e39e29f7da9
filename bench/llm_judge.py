"""The LLM judge: one bench result scored with the GeoFaham paper's 13-dimension rubric by any
OpenAI-compatible model (the rubric, its weights, flags and the prompt are in ``bench.rubric``).

The judge sees the task spec with the expected values, the run records and the artifacts' metadata;
its reply is schema-constrained, validated and retried through ``geofaham_plugin.core.llm.LLM``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, create_model

from .observations import Evidence, event_records
from .rubric import DIMENSIONS, FLAGS, JUDGE_SYSTEM, snap, weighted
from .spec import load_expected

if TYPE_CHECKING:
    from geofaham_plugin.core.llm import LLM, ChatModel


def _scores_model() -> type[BaseModel]:
    # field definitions as keyword arguments: typed Any, since create_model's other keywords (__base__ ...) share **
    score_fields: dict[str, Any] = {k: (float, Field(ge=0, le=1)) for k in DIMENSIONS}
    flag_fields: dict[str, Any] = {k: (bool, False) for k in FLAGS}
    scores = create_model("RubricScores", **score_fields)
    flags = create_model("RubricFlags", **flag_fields)
    return create_model(
        "RubricJudgement", scores=(scores, ...), flags=(flags, Field(default_factory=flags)), rationale=(str, "")
    )  # no maxLength: llama.cpp grammars explode on long bounded strings


def judge_payload(result: dict, expected: dict | None = None, max_chars: int = 24000) -> str:
    """What the LLM judge sees: the spec (with expected values), the run records and artifact metadata."""
    expected = expected if expected is not None else load_expected()
    ev = Evidence(result)
    spec = ev.task
    events = event_records()
    task = spec.model_dump(mode="json", exclude={"capabilities", "notes"}, exclude_defaults=True)
    task["events"] = [
        f"{e} {events[e].name} ({events[e].event_date.isoformat()})" for e in spec.event_ids if e in events
    ]
    for turn_key in ("expectations",):
        for e, raw in zip(spec.expectations, task.get(turn_key, []), strict=False):
            raw["expected"] = e.resolve(expected)
    for fu, raw in zip(spec.follow_ups, task.get("follow_ups", []), strict=False):
        for e, rawe in zip(fu.expectations, raw.get("expectations", []), strict=False):
            rawe["expected"] = e.resolve(expected)
    runs = []
    for r in ev.runs:
        plans = r.get("plans", [])
        runs.append(
            {
                "question": r.get("question"),
                "status": r.get("status"),
                "error": r.get("error"),
                "ledger": (plans[-1].get("ledger") if plans else None),
                "plans": [
                    {
                        "mode": p.get("mode"),
                        "template": p.get("template"),
                        "steps": [
                            {k: s.get(k) for k in ("id", "agent", "tool", "args", "inputs", "depends_on")}
                            for s in (p.get("plan") or {}).get("steps", [])
                        ],
                    }
                    for p in plans
                ],
                "steps": [
                    {
                        k: s.get(k)
                        for k in (
                            "plan_index",
                            "step_id",
                            "agent",
                            "tool",
                            "args",
                            "inputs",
                            "status",
                            "artifact_id",
                            "reused",
                        )
                    }
                    | {"failure": (s.get("failure") or {}).get("message")}
                    for s in r.get("steps", [])
                ],
                "progress": {k: (r.get("progress") or {}).get(k) for k in ("replans", "stalls", "turns")},
                "failures": [f.get("message") for f in (r.get("progress") or {}).get("failures", [])],
                "decisions": r.get("decisions"),
                "notes": r.get("notes"),
                "answer": (r.get("answer") or "")[:3000],
                "cited_artifacts": r.get("cited_artifacts"),
                "tokens": (r.get("usage") or {}).get("totals"),
                "seconds": r.get("seconds"),
            }
        )
    arts = {}
    for a in ev.artifacts.values():
        meta = {
            k: v
            for k, v in a.get("metadata", {}).items()
            if k
            in (
                "geometry_type",
                "crs",
                "crs_is_geographic",
                "feature_count",
                "bounds_4326",
                "total_area_m2",
                "total_length_m",
                "invalid_geometries",
                "row_count",
                "columns",
                "item_count",
                "collection",
                "time_start",
                "time_end",
                "bands",
                "resolution",
                "aoi_coverage",
                "width",
                "height",
            )
        }
        arts[a["id"]] = {
            "kind": a["kind"],
            "source": a.get("source"),
            "summary": a.get("summary"),
            "inputs": a.get("inputs"),
            "metadata": meta,
            "file_ok": bool(a.get("file", {}).get("readable")),
            "names": (a.get("names") or [])[:15],
            "distances": (a.get("distances") or [])[:10],
            "rows": (a.get("rows") or [])[:15],
            "limitations": (a.get("extra") or {}).get("limitations"),
        }
    payload = {
        "task": task,
        "outcome": {
            "status": result.get("status"),
            "error": result.get("error"),
            "wall_seconds": result.get("wall_seconds"),
        },
        "runs": runs,
        "artifacts": arts,
    }
    text = json.dumps(payload, ensure_ascii=False, default=str, separators=(",", ":"))
    while len(text) > max_chars and arts:  # drop artifact detail first, then truncate
        for a in arts.values():
            a.pop("rows", None), a.pop("distances", None), a.pop("names", None)
        text = json.dumps(payload, ensure_ascii=False, default=str, separators=(",", ":"))
        break
    return text[:max_chars]


def llm_judge(result: dict, model: ChatModel | LLM, expected: dict | None = None, max_chars: int = 24000) -> dict:
    """Score one result with the rubric through ``model`` (a core ChatModel or an LLM); the reply is
    schema-constrained, validated and retried by :class:`geofaham_plugin.core.llm.LLM`."""
    from geofaham_plugin.core.errors import GeoFahamError
    from geofaham_plugin.core.llm import LLM, Message

    llm = model if isinstance(model, LLM) else LLM(model)
    out_type = _scores_model()
    messages = [
        Message(role="system", content=JUDGE_SYSTEM),
        Message(role="user", content=judge_payload(result, expected, max_chars)),
    ]
    before = len(llm.usage.snapshot())
    try:
        judgement = llm.structured("judge", messages, out_type, step=f"judge:{result.get('task_id')}")
    except GeoFahamError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:1000]}
    reply = judgement.model_dump()  # the model is built at run time: its fields are read from the dump
    scores = {k: snap(v) for k, v in reply["scores"].items()}
    calls = llm.usage.snapshot()[before:]
    return {
        "scores": scores,
        **weighted(scores),
        "flags": reply["flags"],
        "rationale": reply["rationale"][:1200],
        "model": calls[-1].model if calls else "",
        "tokens": sum(c.prompt_tokens + c.completion_tokens for c in calls),
    }
