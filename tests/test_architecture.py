"""The package's architecture (issue 15): no import cycle, and the import-linter contracts hold.

grimp (import-linter's graph) counts the imports inside functions as well: a cycle hidden behind a
function-local import is still a cycle.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parents[1]


def strongly_connected_components(graph: grimp.ImportGraph) -> list[list[str]]:
    """The import cycles of ``graph``: its strongly connected components of more than one module
    (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def describe(graph: grimp.ImportGraph, component: list[str]) -> str:
    """The imports inside one cycle, ``importer -> imported (line: code)``, one per line."""
    lines = []
    for importer in component:
        for imported in component:
            for detail in graph.get_import_details(importer=importer, imported=imported):
                lines.append(f"  {importer} -> {imported} (l.{detail['line_number']}: {detail['line_contents']})")
    return "\n".join(lines)


def test_the_cycle_finder_finds_a_cycle_behind_a_function_local_import():
    graph = grimp.ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a", imported="pkg.b", line_number=1, line_contents="import pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.a", line_number=9, line_contents="    from pkg import a")
    graph.add_import(importer="pkg.c", imported="pkg.a", line_number=1, line_contents="import pkg.a")
    assert strongly_connected_components(graph) == [["pkg.a", "pkg.b"]]


def test_no_import_cycle_among_lensopt_modules():
    graph = grimp.build_graph("lensopt", cache_dir=None)
    cycles = strongly_connected_components(graph)
    report = "\n\n".join(describe(graph, component) for component in cycles)
    assert not cycles, f"import cycles among lensopt's modules:\n{report}"


def test_the_import_contracts_hold():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run([str(lint_imports), "--no-cache"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, f"lint-imports failed:\n{done.stdout[-6000:]}\n{done.stderr[-2000:]}"
    # no warning either (e.g. an ignore_imports line that matches nothing any more)
    assert "Warnings" not in done.stdout, f"lint-imports warns:\n{done.stdout[-6000:]}"


#: Where lensopt may import its own modules inside a function: a package's lazy attributes (PEP 562
#: ``__getattr__``), the GP timing script, which sets the BLAS variables before numpy loads, and the
#: dashboard command's window (Qt only when a window opens: a report needs none). The commands'
#: parsers name their handlers without importing them (lensopt.cli.arguments.Handler), so the
#: handlers import at their top and ``lensopt --help`` stays fast.
LAZY_IMPORT_PLACES = (
    "__init__.py:__getattr__",
    "lensopt/bench/gp_timing.py:main",
    "lensopt/cli/handlers/dashboard.py:_run_window",
)


def function_local_lensopt_imports(package: Path) -> list[str]:
    """``path:function:line`` of every import of a lensopt module inside a function of ``package``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package.parent).as_posix()
        for function in ast.walk(ast.parse(path.read_text())):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                own = (
                    isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").startswith("lensopt"))
                ) or (isinstance(node, ast.Import) and any(a.name.startswith("lensopt") for a in node.names))
                if own:
                    found.append(f"{relative}:{function.name}:{node.lineno}")
    return sorted(set(found))


def test_lensopt_imports_its_own_modules_inside_functions_only_where_that_is_lazy_loading():
    """A function-local import elsewhere hides a module's dependencies from its reader (and used to
    hide import cycles): lensopt's own modules are imported at the top of the module, except in the
    places of :data:`LAZY_IMPORT_PLACES`."""
    found = function_local_lensopt_imports(REPO / "lensopt")
    assert found, "the scan found no function-local import at all: it is not looking"
    elsewhere = [f for f in found if not any(place in f for place in LAZY_IMPORT_PLACES)]
    assert elsewhere == [], f"move these imports to the top of their modules: {elsewhere}"


def test_the_scan_finds_a_function_local_import_outside_the_lazy_places(tmp_path):
    package = tmp_path / "lensopt"
    (package / "cli").mkdir(parents=True)
    (package / "model.py").write_text("def fit():\n    from lensopt.gp import kernels\n    return kernels\n")
    (package / "cli" / "run.py").write_text("def handler():\n    import lensopt.model\n")
    (package / "__init__.py").write_text("def __getattr__(name):\n    from . import model\n    return model\n")
    found = function_local_lensopt_imports(package)
    assert found == ["lensopt/__init__.py:__getattr__:2", "lensopt/cli/run.py:handler:2", "lensopt/model.py:fit:2"]
    assert [f for f in found if not any(place in f for place in LAZY_IMPORT_PLACES)] == [
        "lensopt/cli/run.py:handler:2",  # a command's handler imports at its top (lensopt.cli.handlers)
        "lensopt/model.py:fit:2",
    ]
