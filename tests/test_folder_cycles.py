"""No import cycle runs between folders: a folder can be read knowing only those below it.

A folder is a package (``subagents.actors``, ``subagents.runtime._config``...);
a module belongs to the innermost one that holds it. Inside a folder modules
import each other freely. Between folders the check reads every import, those
inside functions and ``TYPE_CHECKING`` blocks included (with the reader of
``test_layering``), and asks two things:

- between two folders neither of which holds the other (``runtime._hooks`` and
  ``runtime._config``, ``tools._lifecycle`` and ``runtime``), the imports
  point one way: the graph of folders has no cycle;
- a folder and a folder inside it (``runtime`` and ``runtime._config``) do
  use each other, as in httpx or anyio: the package's ``__init__`` re-exports
  its subfolders' names and a subfolder raises its package's exceptions. But
  no chain of module imports may leave a folder and come back into it.

The one allowed upward import of ``test_layering`` (its ``SHIMS``) is allowed
here too.
"""

from __future__ import annotations

import ast
import collections
import itertools
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from tests.test_layering import PACKAGE, SHIMS, imported, module_name

#: module -> {imported module: the first line that imports it}
Graph = Mapping[str, Mapping[str, int]]


def module_graph(root: Path = PACKAGE) -> tuple[Graph, frozenset[str]]:
    """Every module's imports of other modules of the package, and the set of folders.

    ``from package import name`` counts as an import of ``package.name`` when
    that is a module, else of ``package``.
    """
    paths = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    folders = frozenset(module_name(path, root) for path in root.rglob("__init__.py"))
    graph: dict[str, dict[str, int]] = {}
    for module, path in paths.items():
        edges: dict[str, int] = {}
        for target, line in imported(path, module):
            if (module, target) in SHIMS:
                continue
            parts = target.split(".")
            while parts and ".".join(parts) not in paths:
                parts.pop()
            found = ".".join(parts)
            if found and found != module:
                edges.setdefault(found, line)
        for name, line in _imported_submodules(path, module, paths):
            if (module, name) not in SHIMS and name != module:
                edges.setdefault(name, line)
        graph[module] = edges
    return graph, folders


def _imported_submodules(
    path: Path, module: str, paths: Mapping[str, Path]
) -> Iterable[tuple[str, int]]:
    """``from package import submodule`` (absolute or relative), as ``package.submodule``."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package[: len(package) - (node.level - 1)]
            source = ".".join([*base, *([node.module] if node.module else [])])
        else:
            source = node.module or ""
        for alias in node.names:
            if f"{source}.{alias.name}" in paths:
                yield f"{source}.{alias.name}", node.lineno


def folder_of(module: str, folders: frozenset[str]) -> str:
    """The innermost folder holding ``module`` (a folder's ``__init__`` belongs to it)."""
    return module if module in folders else module.rpartition(".")[0]


def _holds(outer: str, inner: str) -> bool:
    return inner == outer or inner.startswith(outer + ".")


def _components(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    nodes = sorted({*graph, *(target for targets in graph.values() for target in targets)})
    for start in nodes:
        if start in index:
            continue
        # Iterative, so a deep import chain does not hit the recursion limit.
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
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


def _path(graph: Mapping[str, Iterable[str]], members: Iterable[str]) -> list[str]:
    """One cycle through the component ``members``, from its first member and back."""
    inside = set(members)
    start = min(inside)
    paths = {start: [start]}
    queue = collections.deque([start])
    while queue:
        node = queue.popleft()
        for target in sorted(graph.get(node, ())):
            if target == start:
                return [*paths[node], start]
            if target in inside and target not in paths:
                paths[target] = [*paths[node], target]
                queue.append(target)
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover


def folder_cycles(root: Path = PACKAGE) -> list[str]:
    """Each cycle between folders, named with the imports that make it."""
    graph, folders = module_graph(root)
    cycles = []
    # Folders neither of which holds the other: one import of either direction is enough.
    first: dict[tuple[str, str], str] = {}
    folder_graph: dict[str, set[str]] = collections.defaultdict(set)
    for module, edges in graph.items():
        mine = folder_of(module, folders)
        for target, line in edges.items():
            theirs = folder_of(target, folders)
            if _holds(mine, theirs) or _holds(theirs, mine):
                continue
            folder_graph[mine].add(theirs)
            first.setdefault((mine, theirs), f"{module}:{line} imports {target}")
    tangled = _components(folder_graph)
    for members in tangled:
        cycle = _path(folder_graph, members)
        steps = "; ".join(first[(a, b)] for a, b in itertools.pairwise(cycle))
        cycles.append(f"folders {' -> '.join(cycle)} ({steps})")
    # Any folders: a chain of module imports that leaves a folder and comes back
    # (unless it is one of the cycles above, already named).
    for members in _components(graph):
        crossed_folders = {folder_of(module, folders) for module in members}
        if len(crossed_folders) < 2 or any(crossed_folders <= set(t) for t in tangled):
            continue
        cycle = _path(graph, members)
        steps = " -> ".join(
            f"{a}:{graph[a][b]}" if folder_of(a, folders) != folder_of(b, folders) else a
            for a, b in itertools.pairwise(cycle)
        )
        crossed = " -> ".join(dict.fromkeys(folder_of(module, folders) for module in cycle))
        cycles.append(f"modules of {crossed}: {steps} -> {cycle[-1]}")
    return cycles


def test_no_import_cycle_between_folders() -> None:
    assert folder_cycles() == []


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # two sibling folders importing each other, one of them inside a function
        (
            {
                "runtime/_a/__init__.py": "",
                "runtime/_a/x.py": "from subagents.runtime._b.y import Y\n",
                "runtime/_b/__init__.py": "",
                "runtime/_b/y.py": "def f():\n    from subagents.runtime._a import x\n",
            },
            ["folders subagents.runtime._a -> subagents.runtime._b -> subagents.runtime._a"],
        ),
        # one way only: fine
        (
            {
                "runtime/_a/__init__.py": "",
                "runtime/_a/x.py": "from subagents.runtime._b.y import Y\n",
                "runtime/_b/__init__.py": "",
                "runtime/_b/y.py": "from subagents.runtime import _c\n",
                "runtime/_c.py": "",
            },
            [],
        ),
        # a package and its subfolder using each other's modules: fine
        (
            {
                "runtime/__init__.py": "from subagents.runtime._a.x import X\n",
                "runtime/_e.py": "",
                "runtime/_a/__init__.py": "",
                "runtime/_a/x.py": "from subagents.runtime._e import E\n",
            },
            [],
        ),
        # ... unless a chain of modules comes back, here through TYPE_CHECKING
        (
            {
                "runtime/_e.py": (
                    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._a.x import X\n"
                ),
                "runtime/_a/__init__.py": "",
                "runtime/_a/x.py": "from subagents.runtime._e import E\n",
            },
            ["modules of subagents.runtime._a -> subagents.runtime"],
        ),
    ],
)
def test_the_check_sees_a_cycle(tmp_path: Path, files: dict[str, str], expected: list[str]) -> None:
    """The check itself: a cycle between folders is found and named, one-way imports pass."""
    root = tmp_path / "subagents"
    for where, source in {"__init__.py": "", **files}.items():
        path = root / where
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.parents:  # every folder is a package
            if parent == root.parent:
                break
            (parent / "__init__.py").touch()
        if source or not path.exists():
            path.write_text(source)
    found = folder_cycles(root)
    assert [cycle.split(" (")[0].split(":")[0] for cycle in found] == expected, found
