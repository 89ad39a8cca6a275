"""The layers, read from the imports (``ast``): core <- serving <- ui <- pages/app.py.

- core imports only core (and the standard library / third-party packages);
- serving imports core and serving; streamlit only inside serving/patches.py's functions;
- ui imports core, serving and ui; pages and app.py import anything of ours;
- nothing imports upward (core never serving/ui/pages, serving never ui/pages, ui never pages);
- no import cycle between our modules at module level.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OURS = ("core", "serving", "ui", "pages", "app")
ALLOWED = {
    "core": {"core"},
    "serving": {"core", "serving"},
    "ui": {"core", "serving", "ui"},
    "pages": {"core", "serving", "ui", "pages"},
    "app": {"core", "serving", "ui", "pages"},
}
# Cycles through imports inside functions are still circles in the design: none allowed.
ALLOWED_DEFERRED_CYCLES: set[tuple[str, ...]] = set()


def files() -> list[Path]:
    found = [ROOT / "app.py"]
    for package in ("core", "serving", "ui", "pages"):
        found += sorted((ROOT / package).rglob("*.py"))
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> Iterator[tuple[str, bool, ast.AST]]:
    """(imported module, at module level?, node) for every import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]

    def visit(node: ast.AST, top: bool) -> Iterator[tuple[str, bool, ast.AST]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name, top, child
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - child.level + 1] + ([base] if base else []))
                submodules = [f"{base}.{alias.name}" for alias in child.names if _is_module(f"{base}.{alias.name}")]
                if len(submodules) < len(child.names):  # a name defined in the package itself
                    yield base, top, child
                for target in submodules:  # "from ui import resources" imports ui.resources
                    yield target, top, child
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                yield from visit(child, False)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                continue  # typing only: never executed
            else:
                yield from visit(child, top)

    yield from visit(tree, True)


def _is_module(name: str) -> bool:
    """Whether ``name`` is one of our modules or packages (a file or folder under the root)."""
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _is_type_checking(test: ast.AST) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def layer(module: str) -> str | None:
    top = module.split(".")[0]
    return top if top in OURS else None


def our_modules() -> set[str]:
    return {module_name(p) for p in files()}


def test_every_import_follows_the_layers() -> None:
    wrong = []
    for path in files():
        here = layer(module_name(path))
        for target, _top, node in imports(path):
            there = layer(target)
            if there is not None and there not in ALLOWED[here]:
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {target}")
    assert wrong == []


def test_serving_imports_streamlit_only_inside_the_patch_functions() -> None:
    wrong = []
    for path in sorted((ROOT / "serving").rglob("*.py")):
        for target, top, node in imports(path):
            if target.split(".")[0] != "streamlit":
                continue
            if path.name != "patches.py" or top:
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {target}")
    assert wrong == []


def test_core_imports_no_streamlit_at_all() -> None:
    wrong = [f"{p.relative_to(ROOT)}:{n.lineno}" for p in sorted((ROOT / "core").rglob("*.py"))
             for target, _top, n in imports(p) if target.split(".")[0] == "streamlit"]
    assert wrong == []


def graph(module_level_only: bool = True) -> dict[str, set[str]]:
    """Imports between our modules (a package's import counts as its __init__'s)."""
    modules = our_modules()
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for path in files():
        source = module_name(path)
        for target, top, _node in imports(path):
            if (top or not module_level_only) and target in modules and target != source:
                edges[source].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []
    counter = [0]

    def connect(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                group.append(item)
                if item == node:
                    break
            if len(group) > 1:
                found.append(tuple(sorted(group)))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return found


def test_no_import_cycles_between_our_modules() -> None:
    assert cycles(graph()) == []


def test_no_new_cycles_through_deferred_imports() -> None:
    assert [c for c in cycles(graph(module_level_only=False)) if c not in ALLOWED_DEFERRED_CYCLES] == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [("a", "b", "c")]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("path", ["serving/models.py", "ui/resources.py"])
def test_the_reader_sees_imports(path: str) -> None:
    """The rules are read from real files: serving.models imports core, ui.resources serving."""
    targets = {t for t, _top, _n in imports(ROOT / path)}
    assert "core.engine.prompt" in targets if path.startswith("serving") else "serving.models" in targets
