"""Imports point one way: actors <- agents <- tools <- teams <- jobs <- runtime <- CLI.

The kernel knows nothing about agents, definitions know nothing about tools,
tools reach the runtime only through the Protocol they define, and only the
top level (the CLI, the test kit, the demo) may import everything. A few
top-level helpers that every layer uses (the root exception, the bounded
small-file reader, the terminal sanitiser) sit below them all and import no
layer. The check reads every module's imports, those inside functions and
``TYPE_CHECKING`` blocks included, since a cycle there is a cycle all the same.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import subagents

PACKAGE = Path(subagents.__file__).resolve().parent

#: Lowest first: a module may import from its own layer and the ones before it.
LAYERS = ("base", "actors", "agents", "tools", "teams", "jobs", "runtime", "top")
#: Top-level modules every layer may use; they import no layer themselves.
BASE = frozenset(
    {
        "subagents._exceptions",
        "subagents._file_lock",
        "subagents._paths",
        "subagents._small_file",
        "subagents._unicode",
        "subagents._visible",
    }
)
#: The one allowed upward import, as (module, target): the deprecation shim in
#: ``runtime/__init__.py`` that still serves ``subagents.runtime.survey_policies``
#: (moved to ``subagents.demo``) imports the demo lazily, inside ``__getattr__``.
SHIMS = frozenset({("subagents.runtime", "subagents.demo")})


def layer_of(module: str) -> str:
    """The layer a dotted module name belongs to."""
    if module in BASE:
        return "base"
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:
        return parts[1]
    return "top"


def module_name(path: Path, root: Path) -> str:
    """The dotted name of ``path`` inside the package folder ``root``."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(path: Path, module: str) -> list[tuple[str, int]]:
    """Every ``subagents`` module ``path`` imports, with the line, relative imports resolved."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                names = [".".join([*base, *([node.module] if node.module else [])])]
            else:
                names = [node.module or ""]
        else:
            continue
        found += [(name, node.lineno) for name in names if name.split(".")[0] == "subagents"]
    return found


def violations(root: Path = PACKAGE) -> list[str]:
    """``module:line imports target`` for each import that points up the layers."""
    wrong = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        mine = LAYERS.index(layer_of(module))
        for target, line in imported(path, module):
            if (module, target) in SHIMS:
                continue
            if target != "subagents" and LAYERS.index(layer_of(target)) > mine:
                wrong.append(f"{module}:{line} imports {target}")
    return wrong


def test_imports_point_one_way() -> None:
    assert violations() == []


def private_reaches(root: Path = PACKAGE) -> list[str]:
    """``module:line imports target`` for each import of another package's private module.

    A package is used through what its ``__init__`` exports: the CLI, the demo
    and the test kit read ``subagents.runtime``, never ``subagents.runtime._loop``,
    so a subsystem can be rearranged inside its folder without breaking its users.
    """
    wrong = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        mine = module.split(".")[1] if "." in module else ""
        for target, line in imported(path, module):
            parts = target.split(".")
            foreign = len(parts) > 2 and parts[1] != mine and not parts[1].startswith("_")
            if foreign and parts[2].startswith("_"):
                wrong.append(f"{module}:{line} imports {target}")
    return wrong


def test_packages_use_each_other_through_their_public_names() -> None:
    assert private_reaches() == []


def test_the_check_sees_a_private_reach(tmp_path: Path) -> None:
    root = tmp_path / "subagents"
    (root / "cli").mkdir(parents=True)
    (root / "cli" / "_x.py").write_text(
        "from subagents.runtime._loop import run_agent\n"
        "from subagents.runtime import open_runtime\n"
        "from subagents.cli._y import z\n"
        "from subagents._visible import visible\n"
    )
    assert private_reaches(root) == ["subagents.cli._x:1 imports subagents.runtime._loop"]


@pytest.mark.parametrize(
    ("source", "where", "expected"),
    [
        ("from subagents.runtime import open_runtime\n", "actors/_x.py", ["subagents.runtime"]),
        ("from ..tools import Tool\n", "agents/_x.py", ["subagents.tools"]),
        ("def f():\n    import subagents.cli\n", "_visible.py", ["subagents.cli"]),
        ("from subagents.actors import Bus\n", "runtime/_x.py", []),
        ("from subagents.teams import open_board\n", "runtime/_x.py", []),
        ("from subagents.runtime import HookRunner\n", "teams/_x.py", ["subagents.runtime"]),
        ("from subagents.teams import Task\n", "tools/_x.py", ["subagents.teams"]),
        # the shim is allowed in runtime/__init__.py only
        ("def f():\n    import subagents.demo\n", "runtime/_x.py", ["subagents.demo"]),
        ("def f():\n    import subagents.demo\n", "runtime/__init__.py", []),
        ("from .._exceptions import SubagentsError\n", "actors/_x.py", []),
    ],
)
def test_the_check_sees_an_upward_import(
    tmp_path: Path, source: str, where: str, expected: list[str]
) -> None:
    """The check itself: an upward import, relative or inside a function, is caught."""
    root = tmp_path / "subagents"
    path = root / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    assert [found.split(" imports ")[1] for found in violations(root)] == expected


def private_names_shared(root: Path = PACKAGE) -> list[str]:
    """``module:line imports name from source`` for each private name one module takes from another.

    A name another module needs is not private to its module: inside a private
    folder (``runtime/_config/checks.py``) it goes without the underscore, as in
    httpx. Importing a private *module* (``from subagents.cli import _run``) is fine.
    """
    wrong = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = package[: len(package) - (node.level - 1)] if node.level else []
            source = ".".join([*base, *([node.module] if node.module else [])])
            if source.split(".")[0] != "subagents":
                continue
            folder = root.parent.joinpath(*source.split("."))
            for alias in node.names:
                name = alias.name
                is_module = (folder / f"{name}.py").is_file() or (folder / name).is_dir()
                if name.startswith("_") and not name.startswith("__") and not is_module:
                    wrong.append(f"{module}:{node.lineno} imports {name} from {source}")
    return wrong


def test_no_module_borrows_another_modules_private_names() -> None:
    assert private_names_shared() == []


def test_the_check_sees_a_borrowed_private_name(tmp_path: Path) -> None:
    root = tmp_path / "subagents"
    (root / "cli").mkdir(parents=True)
    (root / "cli" / "_run.py").write_text("_HIDDEN = 1\n")
    (root / "cli" / "__init__.py").write_text("from subagents.cli import _run\n")
    (root / "cli" / "_x.py").write_text("from ._run import _HIDDEN\nfrom . import _run\n")
    assert private_names_shared(root) == [
        "subagents.cli._x:1 imports _HIDDEN from subagents.cli._run"
    ]
