"""Decoding a model's tool arguments into the tool's ``msgspec.Struct``.

Whatever the model sends (a JSON string, bytes, or an already-parsed mapping),
the arguments are measured, decoded strictly as JSON, and every failure becomes
a :class:`ToolArgumentsError` that names the field and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

from subagents.tools._config import MAX_ARGUMENT_BYTES
from subagents.tools._exceptions import ToolArgumentsError
from subagents.tools._schema import input_schema, signature_summary

__all__ = ["decode_arguments"]

StructT = TypeVar("StructT", bound=msgspec.Struct)

_encoder = msgspec.json.Encoder()


def decode_arguments(
    tool_name: str,
    arguments_type: type[StructT],
    raw: str | bytes | Mapping[str, Any] | None,
    *,
    max_bytes: int = MAX_ARGUMENT_BYTES,
) -> StructT:
    """Validate ``raw`` against ``arguments_type``; raise :class:`ToolArgumentsError` if it fails.

    ``None`` counts as an empty object (some providers omit the input of a
    tool that takes no arguments).
    """
    if raw is None:
        data = b"{}"
    elif isinstance(raw, bytes):
        data = raw
    elif isinstance(raw, str):
        data = raw.encode("utf-8", errors="surrogatepass")
    elif type(raw) is dict or isinstance(raw, Mapping):  # a dict skips the ABC's check
        try:
            data = _encoder.encode(raw)
        except (TypeError, ValueError, OverflowError) as exc:
            raise _error(tool_name, arguments_type, f"arguments are not JSON: {exc}") from None
    else:
        raise _error(
            tool_name,
            arguments_type,
            f"arguments must be a JSON object, got {type(raw).__name__}",
        )
    if len(data) > max_bytes:
        raise ToolArgumentsError(
            f"Arguments for tool '{tool_name}' are too large ({len(data)} bytes; "
            f"the limit is {max_bytes} bytes). Send smaller arguments."
        )
    try:
        return msgspec.json.decode(data, type=arguments_type)
    except msgspec.ValidationError as exc:
        raise _error(tool_name, arguments_type, str(exc)) from None
    except msgspec.DecodeError as exc:
        raise _error(tool_name, arguments_type, f"arguments are not valid JSON ({exc})") from None


def _error(
    tool_name: str, arguments_type: type[msgspec.Struct], problem: str
) -> ToolArgumentsError:
    expected = signature_summary(input_schema(arguments_type))
    return ToolArgumentsError(
        f"Invalid arguments for tool '{tool_name}': {problem}. Expected: {expected}."
    )
