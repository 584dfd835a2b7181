"""The public surface: ``__all__`` is complete, every name resolves, errors are typed."""

from __future__ import annotations

import pickle
import types
from pathlib import Path

import subagents.agents as agents
from subagents._exceptions import SubagentsError
from subagents.agents import AgentsError, DefinitionError, UnknownAgentError


def test_all_names_resolve_and_are_unique() -> None:
    assert len(agents.__all__) == len(set(agents.__all__))
    for name in agents.__all__:
        assert getattr(agents, name) is not None, name


def test_all_is_complete() -> None:
    public = {
        name
        for name, value in vars(agents).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name != "annotations"
    }
    assert public == set(agents.__all__)


def test_errors_derive_from_the_package_root_and_carry_their_location() -> None:
    assert issubclass(AgentsError, SubagentsError)
    assert issubclass(DefinitionError, AgentsError)
    assert issubclass(UnknownAgentError, AgentsError)
    error = DefinitionError(Path("a.md"), 3, "tools", "tools must be a list")
    assert (error.path, error.line, error.field) == (Path("a.md"), 3, "tools")
    assert str(error) == "a.md:3 [tools]: tools must be a list"
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.path, copy.line, copy.field, copy.message) == (
        error.path,
        error.line,
        error.field,
        error.message,
    )
    unknown = pickle.loads(pickle.dumps(UnknownAgentError("explor", ["Explore", "Plan"])))
    assert "Did you mean 'Explore'?" in str(unknown)
