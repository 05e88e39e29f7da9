"""The house has floors: ui → orchestrator → planning → agents → engines → store / llm, with a ground
floor of shared vocabulary under them all. This test reads every import statement of the product and
the bench (module level and inside functions alike) and fails on an import that runs upward, on the
headless core importing Qt or QGIS, on the product importing the bench, and on any import cycle."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = "geofaham_plugin.core"

# floor of each part; longest prefix wins. A module may import its own floor and any floor below.
FLOORS: dict[str, int] = {
    f"{CORE}.domain": 0,
    f"{CORE}.config": 0,
    f"{CORE}.errors": 0,
    "geofaham_plugin.deps": 0,
    f"{CORE}.store": 1,
    f"{CORE}.llm": 1,
    f"{CORE}.engines": 2,
    f"{CORE}.aoi": 2,
    f"{CORE}.agents": 3,
    f"{CORE}.planning": 4,
    f"{CORE}.prompts": 4,
    f"{CORE}.orchestrator": 5,
    f"{CORE}.export": 6,
    f"{CORE}.cli": 6,
    f"{CORE}.__main__": 6,
    CORE: 6,
    "geofaham_plugin.ui": 7,
    "geofaham_plugin.__main__": 7,
    "geofaham_plugin": 7,
    "bench": 8,
}
FLOOR_NAMES = {
    0: "ground floor (domain, config, errors)",
    1: "store/llm",
    2: "engines",
    3: "agents",
    4: "planning",
    5: "orchestrator",
    6: "core entry points (cli, export)",
    7: "ui",
    8: "bench",
}
# store and llm share a floor but are independent of each other
SIBLINGS_APART = ((f"{CORE}.store", f"{CORE}.llm"),)
QT_OR_QGIS = ("qgis", "PyQt5", "PyQt6", "sip")


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for path in [*ROOT.glob("geofaham_plugin/**/*.py"), *ROOT.glob("bench/**/*.py")]:
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def _targets(module: str, node: ast.Import | ast.ImportFrom, is_package: bool, mods: dict[str, Path]) -> list[str]:
    """Absolute names an import statement loads: a submodule when ``from pkg import sub`` names one."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        pkg = ".".join(base + ([node.module] if node.module else []))
    else:
        pkg = node.module or ""
    out = []
    for alias in node.names:
        sub = f"{pkg}.{alias.name}"
        out.append(sub if sub in mods else pkg)
    return out


def _graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(internal edges module -> modules, external top-level packages each module imports)."""
    mods = _modules()
    edges: dict[str, set[str]] = defaultdict(set)
    external: dict[str, set[str]] = defaultdict(set)
    for module, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _targets(module, node, path.name == "__init__.py", mods):
                known = target
                while known and known not in mods:
                    known = known.rpartition(".")[0]
                if known:
                    if known != module:
                        edges[module].add(known)
                else:
                    external[module].add(target.split(".")[0])
    return edges, external


def _floor(module: str) -> int:
    best = max((p for p in FLOORS if module == p or module.startswith(p + ".")), key=len)
    return FLOORS[best]


def test_floors_cover_every_module():
    unplaced = [m for m in _modules() if not any(m == p or m.startswith(p + ".") for p in FLOORS)]
    assert not unplaced


def test_no_import_runs_upward():
    edges, _ = _graph()
    upward = [
        f"{a} ({FLOOR_NAMES[_floor(a)]}) imports {b} ({FLOOR_NAMES[_floor(b)]})"
        for a, targets in edges.items()
        for b in targets
        if _floor(b) > _floor(a)
    ]
    for left, right in SIBLINGS_APART:
        upward += [
            f"{a} imports {b}: store and llm are independent"
            for a, targets in edges.items()
            for b in targets
            if (a.startswith(left) and b.startswith(right)) or (a.startswith(right) and b.startswith(left))
        ]
    assert not upward, "\n".join(sorted(upward))


def test_core_is_headless():
    _, external = _graph()
    offending = [
        f"{m} imports {pkg}" for m, pkgs in external.items() if m.startswith(CORE) for pkg in pkgs if pkg in QT_OR_QGIS
    ]
    assert not offending, "\n".join(sorted(offending))


def test_product_never_imports_bench():
    edges, _ = _graph()
    offending = [
        f"{a} imports {b}"
        for a, targets in edges.items()
        if a.startswith("geofaham_plugin")
        for b in targets
        if b == "bench" or b.startswith("bench.")
    ]
    assert not offending
    # nor smuggles the repository root onto sys.path to reach it; the one exception is the raster sandbox's
    # child process, which runs isolated (python -I) and is handed the path of the plugin's own package
    exempt = {ROOT / "geofaham_plugin/core/engines/raster/sandbox_child.py"}
    for path in ROOT.glob("geofaham_plugin/**/*.py"):
        text = path.read_text(encoding="utf-8")
        assert path in exempt or not any(f"sys.path.{verb}" in text for verb in ("insert", "append", "extend")), path


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    nodes = set(edges) | {b for targets in edges.values() for b in targets}
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles():
    edges, _ = _graph()
    # a package's __init__ re-exporting its own submodules is how packages work, not a cycle
    pruned = {a: {b for b in targets if not a.startswith(b + ".")} for a, targets in edges.items()}
    cycles = _cycles(pruned)
    assert not cycles, "\n".join(" <-> ".join(c) for c in cycles)


@pytest.mark.parametrize(
    "edges, expected",
    [
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": {"c"}}, []),
    ],
)
def test_cycle_finder_finds_cycles(edges, expected):
    assert _cycles(edges) == expected


def test_floor_rule_catches_an_upward_import():
    assert _floor(f"{CORE}.engines.osm") < _floor(f"{CORE}.planning.plan")
    assert _floor(f"{CORE}.domain.names") == 0 and _floor("bench.judge") == 8
