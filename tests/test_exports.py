"""One public home for every name: each public module's ``__all__`` says exactly what it exports.

Modelled on trio's ``test_exports.py`` and anyio's ``test_all_attributes``:

- every public module's ``__all__`` is complete: each public (non-underscore)
  attribute the module defines or re-exports from the package is listed, and
  every listed name exists;
- a name exported from two public modules is the same object in both, so one
  spelling never means two things (``ApprovalMode``, ``Policy`` and ``Behavior``
  once did);
- names that moved keep working from their old home, with a
  :class:`DeprecationWarning` that names the new one (or says the name is
  internal now: constants no user sets left ``subagents.runtime.__all__``).

Not counted as exports: submodules, and names a module imports from outside the
package for its own use (``typing``, ``__future__``, the standard library).
"""

from __future__ import annotations

import ast
import importlib
import itertools
import types
import warnings
from pathlib import Path

import pytest

#: Every public module of the package, lowest layer first.
PUBLIC_MODULES = (
    "subagents",
    "subagents.actors",
    "subagents.agents",
    "subagents.tools",
    "subagents.teams",
    "subagents.jobs",
    "subagents.runtime",
    "subagents.testing",
    "subagents.demo",
    "subagents.cli",
)

#: Old spellings that still work, with a warning: (module, old name, new home, new name).
DEPRECATED = (
    ("subagents.actors", "Policy", "subagents.actors", "OverflowPolicy"),
    ("subagents.runtime", "Policy", "subagents.runtime", "ReplyPolicy"),
    ("subagents.testing", "Behavior", "subagents.testing", "ScriptedBehavior"),
    ("subagents.runtime", "survey_policies", "subagents.demo", "survey_policies"),
    ("subagents.runtime", "DEFAULT_SURVEY_LATENCY", "subagents.demo", "DEFAULT_SURVEY_LATENCY"),
    ("subagents.runtime", "REDACTED", "subagents.tools", "REDACTED"),
    ("subagents.runtime", "SECRET_ENV_VARS", "subagents.tools", "SECRET_ENV_VARS"),
)

#: Constants ``subagents.runtime`` exported although no user sets them: still
#: served, with a warning, from the private module that holds each one.
INTERNAL = (
    ("ACTIVITY_LIMIT", "subagents.runtime._progress.values"),
    ("API_KEY_ENV", "subagents.runtime._config.defaults"),
    ("BASE_URL_ENV", "subagents.runtime._config.defaults"),
    ("DEFAULT_HOOK_OUTPUT_CAP", "subagents.runtime._hooks.commands"),
    ("DEFAULT_MAX_AGENTS", "subagents.runtime._progress.tracker"),
    ("DEFAULT_MAX_BUFFERED_LINES", "subagents.runtime._transcripts.writer"),
    ("DEFAULT_STOP_HOOKS_GRACE", "subagents.runtime._hooks.run"),
    ("ENV_PREFIX", "subagents.runtime._config.defaults"),
    ("FORK_BOUNDARY", "subagents.runtime._fork"),
    ("FORMAT_VERSION", "subagents.runtime._transcripts.records"),
    ("INBOX_CAPACITY", "subagents.runtime._config.defaults"),
    ("LOG_FILE_SUFFIX", "subagents.runtime._logging"),
    ("LOG_LEVELS", "subagents.runtime._config.defaults"),
    ("MAX_ERROR_CHARS", "subagents.runtime._config.defaults"),
    ("MAX_STOP_BLOCKS", "subagents.runtime._hooks.run"),
    ("MODEL_ENV", "subagents.runtime._config.defaults"),
    ("PROJECT_CONFIG_NAME", "subagents.runtime._config.defaults"),
    ("TRUST_STORE_PATH", "subagents.runtime._config.defaults"),
    ("USER_CONFIG_PATH", "subagents.runtime._config.defaults"),
)


def foreign_imports(module: types.ModuleType) -> set[str]:
    """The names ``module``'s source binds by importing from outside the package."""
    path = Path(module.__file__ or "")
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            if node.module is None or node.module.split(".")[0] != "subagents":
                found.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "subagents":
                    found.add(alias.asname or alias.name.split(".")[0])
    return found


def public_attributes(module: types.ModuleType) -> set[str]:
    """What ``module`` offers under a public name: defined there or imported from the package."""
    foreign = foreign_imports(module)
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name not in foreign
    }


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_lists_existing_names(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported)), f"{name}.__all__ lists a name twice"
    missing = [attr for attr in exported if not hasattr(module, attr)]
    assert not missing, f"{name}.__all__ lists names the module does not have: {missing}"


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_is_complete(name: str) -> None:
    module = importlib.import_module(name)
    unlisted = sorted(public_attributes(module) - set(module.__all__))
    assert not unlisted, (
        f"{name} has public names missing from its __all__: {unlisted}; "
        "list them, or give them a leading underscore if users should not see them"
    )


def test_one_spelling_one_object() -> None:
    homes: dict[str, list[tuple[str, object]]] = {}
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        for attr in module.__all__:
            homes.setdefault(attr, []).append((name, getattr(module, attr)))
    clashes = {
        attr: [module for module, _ in places]
        for attr, places in homes.items()
        if any(a is not b for (_, a), (_, b) in itertools.combinations(places, 2))
    }
    assert not clashes, f"one spelling names different objects in these modules: {clashes}"


@pytest.mark.parametrize(("module_name", "old", "home", "new"), DEPRECATED)
def test_old_spellings_warn(module_name: str, old: str, home: str, new: str) -> None:
    module = importlib.import_module(module_name)
    assert old not in module.__all__
    assert old not in vars(module), f"{module_name}.{old} is still bound; serve it from __getattr__"
    with pytest.warns(DeprecationWarning, match=f"{home}.{new}"):
        value = getattr(module, old)
    assert value is getattr(importlib.import_module(home), new)


@pytest.mark.parametrize(("old", "home"), INTERNAL)
def test_internal_constants_warn(old: str, home: str) -> None:
    import subagents.runtime

    assert old not in subagents.runtime.__all__
    assert old not in vars(subagents.runtime)
    with pytest.warns(DeprecationWarning, match=f"subagents.runtime.{old} is deprecated"):
        value = getattr(subagents.runtime, old)
    assert value is getattr(importlib.import_module(home), old)


def test_unknown_names_still_raise() -> None:
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(AttributeError, match="no_such_name"):
                getattr(module, "no_such_name")  # noqa: B009
