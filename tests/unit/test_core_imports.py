"""core's own import rules, read from the source (top-level and function-level imports alike):
core imports only core (never ui, serving, pages or streamlit), and no two core modules import
each other, directly or round a longer circle (the tokenizer is handed its lexicon)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UPPER_LAYERS = ("app", "pages", "serving", "streamlit", "ui")


def _core_modules() -> dict[str, Path]:
    modules = {}
    for path in (ROOT / "core").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every module named by an import anywhere in the file; ``from X import Y`` names X.Y when
    that is a module, else X (the parent packages Python imports on the way are not edges)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            subs = {f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules}
            found |= subs | ({base} if len(subs) < len(node.names) else set())
    return found


def _graph() -> dict[str, set[str]]:
    modules = _core_modules()
    return {m: _imports(m, p, modules) for m, p in modules.items()}


def test_core_imports_nothing_above_it() -> None:
    upward = sorted((m, t) for m, targets in _graph().items() for t in targets if t.split(".")[0] in UPPER_LAYERS)
    assert upward == []


def test_no_import_cycle_between_core_modules() -> None:
    graph = _graph()
    edges = {m: {t for t in targets if t in graph and t != m} for m, targets in graph.items()}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_the_tokenizer_does_not_know_the_corpus() -> None:
    assert "core.text.corpus" not in _graph()["core.text.tokenizer"]


def test_the_checker_sees_a_function_level_import() -> None:
    """The rules above would pass vacuously if the reader missed imports inside functions."""
    assert "core.engine.checkpoint" in _graph()["core"]  # core.load_builtin imports it lazily
