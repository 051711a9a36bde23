"""The package's shape (issue 23): no import cycle, no module over 600 lines, and only
``bench.results`` spells the results folder's file names."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import bench

ROOT = Path(bench.__file__).parent
MAX_LINES = 600
CELL_FILE_NAMES = ("spec.json", "metrics.json", "manifest.json", "error.json")


def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted(ROOT.rglob("*.py")):
        parts = list(p.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            out |= {id(n) for n in ast.walk(node)}
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the bench modules it imports, anywhere in it (function-level imports too;
    ``TYPE_CHECKING`` blocks and the implicit load of a parent package left out)."""
    mods = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in mods
                           else node.module for a in node.names]
            else:
                continue
            graph[mod] |= {r for t in targets if t.split(".")[0] == "bench"
                           and (r := resolve(t)) and r != mod}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_no_module_over_600_lines():
    long = {str(p.relative_to(ROOT.parent)): n for p in ROOT.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    """String constants that are not documentation (a string standing alone as a statement:
    a docstring, or an attribute's docstring)."""
    docs = {id(n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_only_bench_results_spells_the_cell_file_names():
    """Code outside ``bench/results/`` asks :mod:`bench.results.layout` for a path (prose in
    docstrings may name the files)."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.relative_to(ROOT).parts[0] == "results":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{path.relative_to(ROOT.parent)}:{line}" for line, s in _strings(tree)
                  if any(name in s for name in CELL_FILE_NAMES)]
    assert found == []


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Imports that break the layering of issue 44: ``bench.analysis`` computes, ``bench.report``
    and ``bench.leaderboard`` render. The analysis layer imports neither renderer; each renderer
    imports the other only through its package's public names (``bench.leaderboard``,
    ``bench.report``), never a module inside it."""
    out = []
    for mod, deps in sorted(graph.items()):
        for dep in sorted(deps):
            if mod.startswith("bench.analysis") and dep.startswith(
                    ("bench.report", "bench.leaderboard")):
                out.append(f"{mod} -> {dep} (the analysis layer renders nothing)")
            for a, b in (("bench.report", "bench.leaderboard"),
                         ("bench.leaderboard", "bench.report")):
                if (mod == a or mod.startswith(a + ".")) and dep.startswith(b + "."):
                    out.append(f"{mod} -> {dep} (import {b}'s public names, or the analysis "
                               "layer)")
    return out


def test_the_layer_check_finds_a_violation():
    graph = {"bench.report.x": {"bench.leaderboard.build"}, "bench.leaderboard.y": {"bench.report"},
             "bench.analysis.z": {"bench.report.table"}, "bench.report.ok": {"bench.leaderboard"}}
    assert layer_violations(graph) == [
        "bench.analysis.z -> bench.report.table (the analysis layer renders nothing)",
        "bench.report.x -> bench.leaderboard.build (import bench.leaderboard's public names, "
        "or the analysis layer)"]


def test_report_and_leaderboard_only_render_what_the_analysis_layer_computes():
    graph = import_graph()
    assert layer_violations(graph) == []
    for renderer in ("bench.report", "bench.leaderboard"):
        assert any(d.startswith("bench.analysis") for m, deps in graph.items()
                   if m.startswith(renderer) for d in deps), renderer


SECTIONS = ("utility", "privacy", "mia", "rewrite", "rewrite_reference", "vs_baseline",
            "runtime", "privatization", "measures", "by_privacy_task", "by_adversary")
CHAIN = re.compile(
    r"""(?<!self\.)(?:\bmetrics|\bm|\bmet)\s*(?:\[|\.get\()\s*["'](?:%s)["']"""
    r"""|\bdig\(\s*[\w.]*metrics\b""" % "|".join(SECTIONS))
"""A read of a cell's metrics by string keys: ``metrics["utility"]``, ``m.get("privacy"``,
``dig(rec.metrics, ...)`` (the typed record reads ``m.utility.macro_f1``). An attack's own
result (``self.metrics`` of an attack's result object) is not a cell's metrics."""


def string_chains(text: str) -> list[str]:
    """The lines of ``text`` that read a cell's metrics by string keys."""
    return [line.strip() for line in text.splitlines() if CHAIN.search(line)]


def test_the_chain_finder_finds_a_chain():
    assert string_chains('u = metrics["utility"]["macro_f1"]\nx = m.get("privacy", {})\n'
                         'y = dig(rec.metrics, "mia")\nz = m.utility.macro_f1\n'
                         'w = q["privacy"]  # a leaderboard point, not a cell\n') == [
        'u = metrics["utility"]["macro_f1"]', 'x = m.get("privacy", {})',
        'y = dig(rec.metrics, "mia")']


def test_only_the_record_module_reads_a_cells_metrics_by_string_keys():
    found = {f"{p.relative_to(ROOT.parent)}: {line}"
             for mod, p in _modules().items() if not mod.startswith("bench.results")
             for line in string_chains(p.read_text(encoding="utf-8"))}
    assert sorted(found) == []
