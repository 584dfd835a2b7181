"""Input JSON Schemas for tools, generated from their ``msgspec.Struct`` arguments.

``msgspec.json.schema`` puts every struct under ``$defs`` and refers to it with
``$ref``; model APIs want one self-contained object schema, so the references
are inlined here.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import msgspec

from subagents.tools._exceptions import ToolRegistrationError

if TYPE_CHECKING:
    from subagents.tools._protocol import Tool

__all__ = ["input_schema", "signature_summary", "tool_spec"]

_REF_PREFIX = "#/$defs/"


def tool_spec(tool: Tool) -> dict[str, Any]:
    """A tool in the Anthropic tools API format: name, description, input_schema."""
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": input_schema(tool.arguments_type),
    }


def input_schema(arguments_type: type[msgspec.Struct]) -> dict[str, Any]:
    """The self-contained JSON Schema (``type: object``, no ``$ref``) for a tool's arguments.

    Each call returns a fresh copy, so callers may modify it.
    """
    decoded: dict[str, Any] = msgspec.json.decode(_schema_json(arguments_type))
    return decoded


@functools.lru_cache(maxsize=256)
def _schema_json(arguments_type: type[msgspec.Struct]) -> bytes:
    raw = msgspec.json.schema(arguments_type)
    defs: dict[str, Any] = raw.get("$defs", {})
    schema = _inline({k: v for k, v in raw.items() if k != "$defs"}, defs, ())
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise ToolRegistrationError(
            f"{arguments_type.__qualname__} does not describe a JSON object; "
            "tool arguments must be a msgspec.Struct"
        )
    schema.pop("title", None)
    return msgspec.json.encode(schema)


def _inline(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
        name = ref.removeprefix(_REF_PREFIX)
        if name in seen:
            raise ToolRegistrationError(
                f"tool arguments type {name} is recursive; a tool's input schema must be finite"
            )
        target = dict(defs[name])
        extra = {k: v for k, v in node.items() if k != "$ref"}
        return _inline({**target, **extra}, defs, (*seen, name))
    return {key: _inline(value, defs, seen) for key, value in node.items()}


def signature_summary(schema: dict[str, Any]) -> str:
    """A one-line description of the expected fields, for argument error messages."""
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    parts = []
    for name, prop in properties.items():
        kind = _describe(prop)
        parts.append(f"{name} ({kind}{', required' if name in required else ''})")
    return ", ".join(parts) if parts else "no arguments"


def _describe(prop: Any) -> str:
    if not isinstance(prop, dict):
        return "any"
    if "enum" in prop:
        return "one of " + ", ".join(repr(v) for v in prop["enum"])
    if "anyOf" in prop:
        kinds = [_describe(option) for option in prop["anyOf"]]
        return " or ".join(dict.fromkeys(kinds))
    kind = prop.get("type")
    if kind == "array":
        return f"array of {_describe(prop.get('items', {}))}"
    if not isinstance(kind, str):
        return "any"
    bounds = []
    if "minimum" in prop:
        bounds.append(f">= {prop['minimum']}")
    if "maximum" in prop:
        bounds.append(f"<= {prop['maximum']}")
    return " ".join([kind, *bounds])
