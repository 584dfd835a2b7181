"""An MCP tool's ``inputSchema`` as a ``msgspec.Struct``: every property keeps its JSON name.

The schema comes from the server, so its property names are whatever it
writes: ``repo-name`` needs a stand-in Python name, and that stand-in must not
be the name of another property (before, ``{"a-b", "field_0"}`` lost ``a-b``
and the tool could not be called with it).
"""

from __future__ import annotations

import msgspec
import pytest

from subagents.tools._mcp.tool import arguments_struct


def test_a_stand_in_name_never_takes_another_propertys_name() -> None:
    schema = {
        "properties": {"a-b": {"type": "string"}, "field_0": {"type": "string"}},
        "required": ["a-b", "field_0"],
    }
    args = arguments_struct("clash", schema)
    value = msgspec.convert({"a-b": "1", "field_0": "2"}, args)
    assert msgspec.to_builtins(value) == {"a-b": "1", "field_0": "2"}


def test_unknown_and_missing_fields_are_refused() -> None:
    schema = {"properties": {"class": {"type": "integer"}}, "required": ["class"]}
    args = arguments_struct("kw", schema)
    assert msgspec.to_builtins(msgspec.convert({"class": 3}, args)) == {"class": 3}
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"class": 3, "other": 1}, args)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({}, args)
