"""The bench report: markdown + a PNG chart per configuration.

Overall, per-category and per-difficulty scores (deterministic checks, and the LLM judge's rubric
score when it ran), per-dimension scores, tokens per task (mean / median, against the 25,000-token
goal), wall time per task, error / recovery / replan / timeout rates, the capability gaps the tasks
exposed (what a task needs that the core does not offer today) and one row per task."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from statistics import mean, median
from typing import Any

from .judge import judge_folder
from .observations import predicate_offered
from .results_io import config_folders, read_json, read_results
from .rubric import CATEGORIES, CATEGORY_TITLES, DIMENSIONS, TITLES
from .spec import CATEGORY_COUNTS
from .spec import CATEGORY_TITLES as TASK_CATEGORY_TITLES

TOKEN_GOAL = 25_000
DIFFICULTIES = ("simple", "medium", "hard")


def _fmt(v: float | None, digits: int = 3) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _pct(n: int, d: int) -> str:
    return "–" if not d else f"{n}/{d} ({100 * n / d:.0f} %)"


def _avg(values: list[float]) -> float | None:
    return mean(values) if values else None


def capability_status(cap: str, env: dict) -> bool | None:
    """True when the core offers the capability today, False when not, None when it cannot be told."""
    tools = env.get("tools", [])
    names = [t["name"].lower() for t in tools]
    kind, _, arg = cap.partition(":")
    if kind == "layer":
        return arg in {c["id"] for c in env.get("catalog", [])}
    if kind == "event_layer":
        eid, _, role = arg.partition(":")
        return any(int(eid) in c["events"] and c["role"] == role for c in env.get("catalog", []))
    if kind == "osm_extract":
        return arg in env.get("osm_extracts", [])
    if kind == "agent":
        return any(t["agent"] == arg for t in tools)
    if kind == "predicate":
        return predicate_offered(arg, names)
    if kind == "osm_tag":
        return "get_tagged_features" in names
    if kind == "data":
        return False
    return None


def _load(folder: Path) -> tuple[list[dict], dict, dict]:
    results = read_results(folder)
    # deterministic checks are cheap: always current; LLM judgements kept
    judgments = judge_folder(folder, log=lambda *_: None)["tasks"]
    meta = read_json(folder / "config.json", {})
    return results, judgments, meta


def _current_capabilities() -> dict[str, list[str]]:
    """Capabilities are facts about a task, not about a run: read them from today's tasks.json."""
    try:
        from .spec import load_tasks

        return {t.id: t.capabilities for t in load_tasks()}
    except Exception:  # a results folder judged without the task file
        return {}


def own_judge(llm: dict, config: dict) -> bool:
    """An LLM judgement made by one of the system's own models (the system graded itself)."""
    from .config import system_models

    model = str(llm.get("model") or "").lower()
    try:
        own = system_models(config) if config.get("roles") else set()
    except ValueError:
        own = set()
    return bool(model) and any(model == m or model.startswith(m) or m.startswith(model) for m in own)


def rows_of(results: list[dict], judgments: dict, config: dict | None = None) -> list[dict]:
    rows = []
    capabilities = _current_capabilities()
    for r in results:
        j = judgments.get(r["task_id"], {})
        det = j.get("deterministic", {})
        llm = j.get("llm", {})
        self_judged = bool(llm) and own_judge(llm, config or r.get("config") or {})
        if self_judged:
            llm = {}
        runs = [t["run"] for t in r.get("turns", [])]
        rows.append(
            {
                "id": r["task_id"],
                "category": r["task"]["category"],
                "difficulty": r["task"]["difficulty"],
                "offline": r["task"]["offline"],
                "split": r["task"].get("split", "original"),
                "status": r["status"],
                "turns": "/".join(x.get("status", "?") for x in runs) or "–",
                "score": det.get("score"),
                "passed": det.get("passed"),
                "accuracy": det.get("accuracy"),
                "outcome": det.get("outcome", "no_reference"),
                "self_judged": self_judged,
                "proxy": det.get("rubric_proxy"),
                "llm": llm.get("overall"),
                "llm_scores": llm.get("scores") or {},
                "llm_flags": llm.get("flags") or {},
                "llm_model": llm.get("model"),
                "tokens": r.get("tokens", {}).get("total", 0),
                "prompt": r.get("tokens", {}).get("prompt", 0),
                "completion": r.get("tokens", {}).get("completion", 0),
                "calls": r.get("tokens", {}).get("calls", 0),
                "seconds": r.get("wall_seconds", 0.0),
                "flags": det.get("flags", {}),
                "by_dimension": det.get("by_dimension", {}),
                "failed": [
                    c["name"] + (f"@{c['turn']}" if c.get("turn") else "")
                    for c in det.get("checks", [])
                    if c["passed"] is False
                ],
                "capabilities": capabilities.get(r["task_id"], r["task"].get("capabilities", [])),
                "templates": sorted(
                    {p.get("template") or p.get("mode", "") for x in runs for p in x.get("plans", [])} - {""}
                ),
                "replans": sum((x.get("progress") or {}).get("replans", 0) for x in runs),
            }
        )
    return rows


SPLIT_TITLES = {
    "original": "Original tasks",
    "paraphrase": "Paraphrases",
    "variant": "Constraint variants",
    "language": "Other languages",
    "aoi": "With an AOI file",
    "own_layer": "About the user's layers",
}


def split_table(rows: list[dict]) -> list[str]:
    """One row per question set (original, paraphrase, variant, language, AOI, own layer) that has tasks: correct
    and confidently-wrong rates over its tasks with reference values."""
    out = [
        "| Question set | Tasks | With reference | Correct | Confidently wrong | Wrong but flagged | No answer |",
        "|---|---|---|---|---|---|---|",
    ]
    for split, title in SPLIT_TITLES.items():
        rs = [r for r in rows if r.get("split", "original") == split]
        if not rs:
            continue
        ref = [r for r in rs if r["outcome"] != "no_reference"]

        def share(outcome: str, ref: list[dict] = ref) -> str:
            return _pct(sum(r["outcome"] == outcome for r in ref), len(ref))

        out.append(
            f"| {title} | {len(rs)} | {len(ref)} | {share('correct')} | {share('confidently_wrong')} | "
            f"{share('wrong_but_flagged')} | {share('no_answer')} |"
        )
    return out


def headline(rows: list[dict]) -> dict[str, Any]:
    n = len(rows)
    ref = [r for r in rows if r["outcome"] != "no_reference"]
    outcomes = {
        o: sum(r["outcome"] == o for r in ref)
        for o in ("correct", "wrong_but_flagged", "confidently_wrong", "no_answer")
    }
    apart = [r for r in rows if r["outcome"] == "no_reference"]
    err = [r for r in rows if r["flags"].get("errors_occurred")]
    tokens = [r["tokens"] for r in rows]
    secs = [r["seconds"] for r in rows]
    acc = [r["accuracy"] for r in rows if r["accuracy"] is not None]
    llm = [r["llm"] for r in rows if r["llm"] is not None]
    return {
        "tasks": n,
        "with_reference": len(ref),
        "outcomes": outcomes,
        "correct_rate": outcomes["correct"] / len(ref) if ref else None,
        "confident_wrong_rate": outcomes["confidently_wrong"] / len(ref) if ref else None,
        "no_reference": len(apart),
        "no_reference_answered": sum(r["flags"].get("run_completed", False) for r in apart),
        "no_reference_ids": [r["id"] for r in apart],
        "self_judged": sum(bool(r.get("self_judged")) for r in rows),
        "finished": sum(r["status"] == "finished" for r in rows),
        "timeouts": sum(r["status"] == "timeout" for r in rows),
        "errors": sum(r["status"] == "error" for r in rows),
        "answered": sum(r["flags"].get("run_completed", False) for r in rows),
        "det_pass": sum(bool(r["passed"]) for r in ref),
        "det_score": _avg([r["score"] for r in rows if r["score"] is not None]),
        "rubric_proxy": _avg([r["proxy"] for r in rows if r["proxy"] is not None]),
        "accuracy": _avg(acc),
        "accuracy_tasks": len(acc),
        "llm_overall": _avg(llm),
        "llm_tasks": len(llm),
        "llm_models": sorted({r["llm_model"] for r in rows if r.get("llm_model")}),
        "tokens_mean": _avg(tokens),
        "tokens_median": median(tokens) if tokens else None,
        "prompt_mean": _avg([r["prompt"] for r in rows]),
        "completion_mean": _avg([r["completion"] for r in rows]),
        "calls_mean": _avg([r["calls"] for r in rows]),
        "seconds_mean": _avg(secs),
        "seconds_median": median(secs) if secs else None,
        "error_rate": len(err) / n if n else None,
        "recovery_rate": (sum(r["flags"].get("recovered", False) for r in err) / len(err)) if err else None,
        "replan_rate": sum(r["flags"].get("replanned", False) for r in rows) / n if n else None,
        "timeout_rate": sum(r["status"] == "timeout" for r in rows) / n if n else None,
    }


def chart(rows: list[dict], title: str, path: Path) -> Path | None:
    """Four panels: per-category scores, per-dimension scores, tokens per task, wall time per task."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - matplotlib is in requirements.txt
        return None
    fig, axes = plt.subplots(2, 2, figsize=(15, 10.5))
    cats = [c for c in CATEGORY_COUNTS if any(r["category"] == c for r in rows)]
    x = list(range(len(cats)))
    det = [_avg([r["score"] for r in rows if r["category"] == c and r["score"] is not None]) or 0 for c in cats]
    acc = [_avg([r["accuracy"] for r in rows if r["category"] == c and r["accuracy"] is not None]) or 0 for c in cats]
    llm = [_avg([r["llm"] for r in rows if r["category"] == c and r["llm"] is not None]) for c in cats]
    ax = axes[0][0]
    w = 0.27
    ax.bar([i - w for i in x], det, w, label="deterministic check score", color="#3b6ea5")
    ax.bar(x, acc, w, label="answer accuracy (expected values)", color="#7fb069")
    if any(v is not None for v in llm):
        ax.bar([i + w for i in x], [v or 0 for v in llm], w, label="LLM judge (rubric)", color="#e09f3e")
    ax.set_xticks(
        x,
        [TASK_CATEGORY_TITLES[c].replace(" and ", " &\n").replace("-of-", "-of-\n") for c in cats],
        rotation=35,
        ha="right",
        fontsize=8,
    )
    ax.set_ylim(0, 1.3)  # room for the legend above the bars
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_title("Scores per task category")
    ax.legend(fontsize=8, loc="upper center", ncol=3)

    ax = axes[0][1]
    dims = DIMENSIONS
    det_dim = [_avg([r["by_dimension"][d] for r in rows if d in r["by_dimension"]]) for d in dims]
    llm_dim = [_avg([r["llm_scores"][d] for r in rows if d in r["llm_scores"]]) for d in dims]
    y = list(range(len(dims)))
    ax.barh(
        [i - 0.2 for i in y], [v or 0 for v in det_dim], 0.4, label="deterministic checks (pass rate)", color="#3b6ea5"
    )
    if any(v is not None for v in llm_dim):
        ax.barh([i + 0.2 for i in y], [v or 0 for v in llm_dim], 0.4, label="LLM judge", color="#e09f3e")
    ax.set_yticks(y, [TITLES[d] for d in dims], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.5)  # room for the legend right of the bars
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_title("Scores per rubric dimension")
    ax.legend(fontsize=8, loc="lower right")

    order = sorted(rows, key=lambda r: r["id"])
    labels = [r["id"] for r in order]
    colors = {"finished": "#3b6ea5", "timeout": "#c0392b", "error": "#8e44ad"}
    ax = axes[1][0]
    ax.bar(range(len(order)), [r["tokens"] for r in order], color=[colors.get(r["status"], "#777") for r in order])
    ax.axhline(TOKEN_GOAL, color="#c0392b", linestyle="--", linewidth=1, label=f"goal ≤ {TOKEN_GOAL:,} tokens/task")
    toks = [r["tokens"] for r in order]
    if toks:
        ax.axhline(mean(toks), color="#555", linestyle=":", linewidth=1, label=f"mean {mean(toks):,.0f}")
    ax.set_xticks(range(len(order)), labels, rotation=90, fontsize=6)
    ax.set_title("Prompt + completion tokens per task")
    ax.legend(fontsize=8)

    ax = axes[1][1]
    ax.bar(range(len(order)), [r["seconds"] for r in order], color=[colors.get(r["status"], "#777") for r in order])
    ax.set_xticks(range(len(order)), labels, rotation=90, fontsize=6)
    ax.set_ylabel("seconds")
    ax.set_title("Wall time per task (red: timeout, purple: error)")
    fig.suptitle(title, fontsize=13)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def render(folder: Path) -> tuple[str, dict]:
    results, judgments, meta = _load(folder)
    rows = rows_of(results, judgments, meta.get("config"))
    h = headline(rows)
    config = meta.get("config", {})
    env = meta.get("environment", {})
    name = config.get("name", folder.name)
    L: list[str] = [f"# GeoFaham-Bench report — `{name}`", ""]
    if config.get("description"):
        L += [config["description"], ""]
    roles = config.get("roles", {})
    L += [
        f"Planner mode **{config.get('mode', '?')}**; models: "
        + ", ".join(
            f"{role}: {'embedded local model' if m.get('embedded') else m.get('model', '?') + ' @ ' + str(m.get('base_url'))}"
            for role, m in roles.items()
        )
        + ".",
        f"{h['tasks']} tasks ({sum(r['offline'] for r in rows)} offline). Results: `{folder}`.",
        "",
    ]
    tok_goal = "met" if h["tokens_mean"] is not None and h["tokens_mean"] <= TOKEN_GOAL else "not met"
    L += [
        "## Headline",
        "",
        f"Over the {h['with_reference']} tasks with reference values (what the answer states, judged against the "
        "expected value). A confidently wrong answer (the run says it answered; a stated value is wrong or no "
        "executed artifact supports it) is the worst outcome; an answer that says what it did not do is flagged.",
        "",
        "| Measure | Value |",
        "|---|---|",
        f"| **Correct** | **{_pct(h['outcomes']['correct'], h['with_reference'])}** |",
        f"| **Confidently wrong** | **{_pct(h['outcomes']['confidently_wrong'], h['with_reference'])}** |",
        f"| Wrong but flagged (partial/failed, naming what was not done) | {_pct(h['outcomes']['wrong_but_flagged'], h['with_reference'])} |",
        f"| No answer | {_pct(h['outcomes']['no_answer'], h['with_reference'])} |",
        f"| Tasks without reference values (online; not in the rates above) | {h['no_reference']} "
        f"(answered in every turn: {h['no_reference_answered']}) |",
        f"| Tasks finished / timed out / errors | {h['finished']} / {h['timeouts']} / {h['errors']} |",
        f"| Tasks answered in every turn | {_pct(h['answered'], h['tasks'])} |",
        f"| Deterministic: tasks with references passing every check | {_pct(h['det_pass'], h['with_reference'])} |",
        f"| Deterministic: mean check score | {_fmt(h['det_score'])} |",
        f"| Deterministic rubric proxy (paper weights over the checks' dimensions) | {_fmt(h['rubric_proxy'])} |",
        f"| Answer accuracy (expected values within tolerance, {h['accuracy_tasks']} tasks with references) | {_fmt(h['accuracy'])} |",
        "| LLM judge overall (13-dimension rubric) | "
        + (
            f"{_fmt(h['llm_overall'])} ({h['llm_tasks']} tasks; judge: {', '.join(h['llm_models']) or '?'})"
            if h["llm_tasks"]
            else "not judged (no separate judge model: the `judge` entry of `bench judge RESULTS --llm-config FILE`"
            + (f"; {h['self_judged']} judgement(s) by the system's own model ignored" if h["self_judged"] else "")
            + ")"
        )
        + " |",
        f"| Tokens per task, mean / median | {h['tokens_mean'] or 0:,.0f} / {h['tokens_median'] or 0:,.0f} "
        f"(prompt {h['prompt_mean'] or 0:,.0f}, completion {h['completion_mean'] or 0:,.0f}; goal ≤ {TOKEN_GOAL:,}: {tok_goal}) |",
        f"| Model calls per task, mean | {_fmt(h['calls_mean'], 1)} |",
        f"| Wall time per task, mean / median | {_fmt(h['seconds_mean'], 1)} s / {_fmt(h['seconds_median'], 1)} s |",
        f"| Error rate (a failure, timeout or failed run) | {_fmt(h['error_rate'], 2)} |",
        f"| Recovery rate (errors, yet answered) | {_fmt(h['recovery_rate'], 2)} |",
        f"| Replan rate | {_fmt(h['replan_rate'], 2)} |",
        f"| Timeout rate | {_fmt(h['timeout_rate'], 2)} |",
        "",
        "![scores, tokens and wall time](report.png)",
        "",
    ]

    def group_table(key: str, values: list[str], titles: dict[str, str]) -> list[str]:
        out = [
            f"| {key.title()} | Tasks | Passing all checks | Check score | Accuracy | LLM overall | Tokens (mean) | Time (mean, s) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for v in values:
            rs = [r for r in rows if r[key] == v]
            if not rs:
                continue
            out.append(
                f"| {titles.get(v, v)} | {len(rs)} | {_pct(sum(bool(r['passed']) for r in rs), len(rs))} | "
                f"{_fmt(_avg([r['score'] for r in rs if r['score'] is not None]))} | "
                f"{_fmt(_avg([r['accuracy'] for r in rs if r['accuracy'] is not None]))} | "
                f"{_fmt(_avg([r['llm'] for r in rs if r['llm'] is not None]))} | "
                f"{_avg([r['tokens'] for r in rs]) or 0:,.0f} | {_fmt(_avg([r['seconds'] for r in rs]), 1)} |"
            )
        return out

    L += ["## Per question set", ""] + split_table(rows) + [""]
    L += ["## Per category", ""] + group_table("category", list(CATEGORY_COUNTS), TASK_CATEGORY_TITLES) + [""]
    L += ["## Per difficulty", ""] + group_table("difficulty", list(DIFFICULTIES), {}) + [""]

    L += [
        "## Per rubric dimension",
        "",
        "Deterministic: mean over tasks of the share of the invariant checks mapped to the dimension that passed (n = tasks with such checks). "
        "LLM judge: mean of the 0 / .25 / .5 / .75 / 1 scores.",
        "",
        "| Category (weight) | Dimension | Deterministic checks | LLM judge |",
        "|---|---|---|---|",
    ]
    for cat, (weight, dims) in CATEGORIES.items():
        for key, title, _ in dims:
            vals = [r["by_dimension"][key] for r in rows if key in r["by_dimension"]]
            lv = [r["llm_scores"][key] for r in rows if key in r["llm_scores"]]
            L.append(
                f"| {CATEGORY_TITLES[cat]} ({weight:.0%}) | {title} | "
                + (f"{mean(vals):.3f} (n={len(vals)})" if vals else "–")
                + f" | {_fmt(_avg(lv))} |"
            )
    L.append("")

    flag_names = sorted({k for r in rows for k in r["flags"]})
    L += ["## Diagnostic flags", "", "| Flag | Tasks (deterministic) | Tasks (LLM judge) |", "|---|---|---|"]
    for f in flag_names:
        llm_n = [r for r in rows if f in r["llm_flags"]]
        L.append(
            f"| {f} | {sum(bool(r['flags'].get(f)) for r in rows)} | "
            + (str(sum(bool(r["llm_flags"][f]) for r in llm_n)) if llm_n else "–")
            + " |"
        )
    L.append("")

    gaps: dict[str, list[str]] = defaultdict(list)
    unknown: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        for cap in r["capabilities"]:
            status = capability_status(cap, env)
            if status is False:
                gaps[cap].append(r["id"])
            elif status is None:
                unknown[cap].append(r["id"])
    ready = [r for r in rows if all(capability_status(c, env) is not False for c in r["capabilities"])]
    L += [
        "## Capability gaps",
        "",
        f"What the tasks need that the core does not offer today (tools: {len(env.get('tools', []))}, catalogue layers: "
        f"{len(env.get('catalog', []))}, guided templates: {', '.join(env.get('templates', [])) or '–'}). "
        f"{len(ready)} of {len(rows)} tasks have every capability they need; they pass all checks in "
        f"{_pct(sum(bool(r['passed']) for r in ready), len(ready))}.",
        "",
    ]
    if gaps:
        L += ["| Missing capability | Tasks |", "|---|---|"]
        L += [
            f"| `{cap}` | {', '.join(ids)} |" for cap, ids in sorted(gaps.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        ]
    if unknown:
        L += [
            "",
            "Not checkable from the environment (judged from the runs): "
            + "; ".join(f"`{cap}` ({len(ids)} tasks)" for cap, ids in sorted(unknown.items())),
        ]
    L.append("")

    L += [
        "## Per task",
        "",
        "| Task | Category | Difficulty | Offline | Judged | Run (turns) | Plan | Check score | All pass | Accuracy | LLM | Tokens | Time (s) | Failed checks |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (list(CATEGORY_COUNTS).index(r["category"]), r["id"])):
        L.append(
            f"| {r['id']} | {TASK_CATEGORY_TITLES[r['category']]} | {r['difficulty']} | {'yes' if r['offline'] else 'no'} | "
            f"{r['outcome'].replace('_', ' ')} | {r['status']} ({r['turns']}) | {', '.join(r['templates']) or '–'} | {_fmt(r['score'], 2)} | "
            f"{'yes' if r['passed'] else 'no'} | {_fmt(r['accuracy'], 2)} | {_fmt(r['llm'], 2)} | {r['tokens']:,} | "
            f"{r['seconds']:.0f} | {', '.join(r['failed'][:6]) + (' …' if len(r['failed']) > 6 else '') or '–'} |"
        )
    L.append("")
    return "\n".join(L), h


def write_report(folder: Path | str) -> tuple[Path, Path | None, dict]:
    """report.md and report.png in ``folder`` (one configuration); returns their paths and the headline."""
    folder = Path(folder)
    text, h = render(folder)
    md = folder / "report.md"
    md.write_text(text, encoding="utf-8")
    results, judgments, meta = _load(folder)
    png = chart(
        rows_of(results, judgments, meta.get("config")),
        f"GeoFaham-Bench — {meta.get('config', {}).get('name', folder.name)}",
        folder / "report.png",
    )
    return md, png, h


def write_reports(results: Path | str, log: Callable[[str], None] = print) -> list[tuple[Path, Path | None, dict]]:
    out = []
    for folder in config_folders(results):
        md, png, h = write_report(folder)
        log(
            f"{folder.name}: {h['tasks']} tasks, {h['with_reference']} with references: correct "
            f"{h['outcomes']['correct']}, confidently wrong {h['outcomes']['confidently_wrong']}, flagged "
            f"{h['outcomes']['wrong_but_flagged']}, no answer {h['outcomes']['no_answer']}; {h['det_pass']} pass every check, check score {_fmt(h['det_score'])}, "
            f"accuracy {_fmt(h['accuracy'])}, LLM {_fmt(h['llm_overall'])}, tokens/task mean {h['tokens_mean'] or 0:,.0f} "
            f"median {h['tokens_median'] or 0:,.0f}, {_fmt(h['seconds_mean'], 1)} s/task -> {md}"
        )
        out.append((md, png, h))
    return out
