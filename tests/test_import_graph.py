"""No import cycle between the modules of ``desktop``, whatever kind of import closes it.

import-linter's contracts (``pyproject.toml``) order the packages and the UI's rooms; this test also
forbids a cycle inside one layer (two modules of the shared plumbing, of one room, of the core). The
graph is grimp's (import-linter builds its contracts on it): module-level, function-level and
``TYPE_CHECKING`` imports all count, so a cycle cannot hide in a function or a type hint.
"""

from __future__ import annotations

import grimp
import pytest


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("desktop", cache_dir=None)


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
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


def test_no_two_modules_of_desktop_import_each_other_even_indirectly(graph: grimp.ImportGraph) -> None:
    found = cycles(graph)
    assert found == [], "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_graph_counts_function_level_and_type_checking_imports(graph: grimp.ImportGraph) -> None:
    # The node's loader imports the transcript inside a function (start-up); the run wiring names it
    # only under TYPE_CHECKING. Both must be edges, or the cycle test above could miss a cycle.
    assert graph.direct_import_exists(importer="desktop.ui.node.loading",
                                      imported="desktop.ui.transcript.transcript")
    assert graph.direct_import_exists(importer="desktop.ui.node.run",
                                      imported="desktop.ui.transcript.transcript")


def test_a_cycle_is_found_whatever_its_length() -> None:
    graph = grimp.ImportGraph()
    for module in ("p.a", "p.b", "p.c", "p.d"):
        graph.add_module(module)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.c")
    graph.add_import(importer="p.c", imported="p.a")
    graph.add_import(importer="p.c", imported="p.d")
    assert cycles(graph) == [["p.a", "p.b", "p.c"]]
