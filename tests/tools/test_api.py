"""The public surface of ``subagents.tools``: complete, resolvable, and rooted in SubagentsError."""

from __future__ import annotations

import types

import subagents.tools as tools
from subagents._exceptions import SubagentsError


def test_every_name_in_all_resolves() -> None:
    for name in tools.__all__:
        assert getattr(tools, name) is not None, name


def test_all_has_no_duplicates() -> None:
    assert len(tools.__all__) == len(set(tools.__all__))


def test_all_is_complete() -> None:
    public = {
        name
        for name, value in vars(tools).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(tools.__all__)


def test_every_exception_derives_from_the_package_root() -> None:
    exceptions = [
        value
        for value in (getattr(tools, name) for name in tools.__all__)
        if isinstance(value, type) and issubclass(value, BaseException)
    ]
    assert exceptions
    for exc in exceptions:
        assert issubclass(exc, tools.ToolError)
        assert issubclass(exc, SubagentsError)


def test_builtin_tools_match_their_names() -> None:
    registry = tools.builtin_registry()
    assert registry.names == tools.BUILTIN_TOOL_NAMES
    for tool in registry:
        assert tool.description.strip()
        assert isinstance(tool.flags, tools.ToolFlags)


def test_builtin_flags() -> None:
    flags = {tool.name: tool.flags for tool in tools.builtin_tools()}
    for name in ("Read", "Glob", "Grep", "LS"):
        assert flags[name] == tools.ToolFlags(read_only=True, background_safe=True)
    for name in ("Write", "Edit", "Bash"):
        assert flags[name] == tools.ToolFlags(
            read_only=False, background_safe=True, needs_approval=True
        )
