"""Function tools: a typed Python function, sync or async, turned into a :class:`Tool`.

The anchors all offer this (the Claude Agent SDK's ``@tool``, the OpenAI Agents
SDK's ``@function_tool``, pydantic-ai's ``@agent.tool``): the arguments schema
comes from the signature and the docstring, so an embedder writes no
``msgspec.Struct`` by hand::

    @subagents.tool(read_only=True)
    def word_count(text: str) -> int:
        \"\"\"Count the words of a text.\"\"\"
        return len(text.split())

The arguments ``Struct`` is made with :func:`msgspec.defstruct` from the
parameters (any type msgspec decodes, defaults kept; a parameter annotated
:class:`ToolContext` is given the call's context instead and is not in the
schema). A field's description is the string in ``Annotated[T, "..."]``, a
``msgspec.Meta(description=...)``, or else its entry in the docstring's
``Args:`` (Google), ``Parameters`` (NumPy) or ``:param:`` (reST) section, read
with ``docstring-parser``. The tool's description is the docstring without
that section.

The return value may be a ``str`` (given to the model as is), a
:class:`ToolResult` (as is), ``None`` (an empty result) or any value msgspec
encodes as JSON (encoded). An exception becomes an error result with its
message, never a crash; ``trio.Cancelled`` propagates.

A sync function runs in a worker thread. Python cannot interrupt a thread, so
when the call's deadline passes (``timeout``) or the agent is cancelled the
call returns at once and the thread is left to finish on its own: a sync
function should not block forever. An async function runs in the agent's task
and is cancelled normally.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Awaitable, Callable
from typing import (
    Annotated,
    Any,
    Final,
    cast,
    final,
    get_args,
    get_origin,
    get_type_hints,
    overload,
)

import attrs
import docstring_parser
import msgspec
import trio

from subagents.tools._context import ToolContext
from subagents.tools._exceptions import ToolRegistrationError
from subagents.tools._protocol import ToolFlags, ToolResult
from subagents.tools._registry import validate_tool_name
from subagents.tools._schema import input_schema

__all__ = ["FunctionTool", "tool"]

_ToolFunction = Callable[..., Any]

#: What a sync function's timed-out call tells the model.
_ABANDONED: Final = (
    "Tool '{name}' did not finish within {timeout:g} seconds; its result is lost "
    "(the function may still be running). Try a smaller request or another approach."
)


@final
@attrs.frozen
class FunctionTool:
    """A :class:`Tool` that calls a Python function; made by :func:`tool`.

    ``function`` is the decorated function, unchanged (call it directly in
    tests); ``context_parameter`` names the parameter given the
    :class:`ToolContext`, if any; ``timeout`` bounds each call in seconds
    (``None``: only the agent's own deadline).
    """

    name: str
    description: str
    arguments_type: type[msgspec.Struct]
    flags: ToolFlags
    function: _ToolFunction = attrs.field(repr=False)
    is_async: bool
    context_parameter: str | None = None
    timeout: float | None = None

    async def call(self, args: Any, ctx: ToolContext, /) -> ToolResult:
        """Call the function with ``args``' fields; its return value becomes the result.

        Without a ``timeout`` the call opens no cancel scope of its own (the agent's
        deadline and cancellation bound it): a scope costs more than the rest of the
        call (3.6 us against 2.3 us, ``subagents bench --only function_tool_call``).
        """
        kwargs = msgspec.structs.asdict(args)
        if self.context_parameter is not None:
            kwargs[self.context_parameter] = ctx
        timeout = self.timeout
        try:
            if timeout is None:
                value = await self._invoke(kwargs)
            else:
                with trio.move_on_after(timeout) as scope:
                    value = await self._invoke(kwargs)
                if scope.cancelled_caught:
                    return ToolResult.error(
                        _ABANDONED.format(name=self.name, timeout=timeout), timed_out=True
                    )
        except Exception as exc:  # the function's own failure: the model reads it
            return ToolResult.error(
                f"Tool '{self.name}' failed: {type(exc).__name__}: {exc}",
                exception=type(exc).__name__,
            )
        return _as_result(self.name, value)

    def _invoke(self, kwargs: dict[str, Any]) -> Awaitable[object]:
        """The function's call: awaited in the agent's task if async, else in a worker thread
        (left to finish on its own if the call is cancelled)."""
        if self.is_async:
            return cast("Awaitable[object]", self.function(**kwargs))
        return trio.to_thread.run_sync(
            functools.partial(self.function, **kwargs), abandon_on_cancel=True
        )


def _as_result(name: str, value: object) -> ToolResult:
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult.ok(value)
    if value is None:
        return ToolResult.ok("")
    try:
        return ToolResult.ok(msgspec.json.encode(value).decode("utf-8"))
    except (TypeError, ValueError, OverflowError) as exc:
        return ToolResult.error(
            f"Tool '{name}' returned a {type(value).__name__}, which is not JSON ({exc}); "
            "this is a bug in the tool, not in your arguments."
        )


@overload
def tool(function: _ToolFunction, /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    background_safe: bool = False,
    needs_approval: bool = False,
    concurrent: bool = False,
    timeout: float | None = None,
) -> Callable[[_ToolFunction], FunctionTool]: ...


def tool(
    function: _ToolFunction | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    background_safe: bool = False,
    needs_approval: bool = False,
    concurrent: bool = False,
    timeout: float | None = None,
) -> FunctionTool | Callable[[_ToolFunction], FunctionTool]:
    """Turn a typed function, sync or async, into a :class:`FunctionTool`.

    Use it bare (``@tool``) or with arguments (``@tool(read_only=True)``).
    ``name`` defaults to the function's name and ``description`` to its
    docstring (without the parameter section); the flags are those of
    :class:`ToolFlags`, all off by default, so a tool counts as one that
    writes or executes until it says ``read_only=True``. ``timeout`` bounds
    each call in seconds; a sync function cannot be interrupted, so its thread
    is left running when the timeout or a cancellation ends the call.

    Raises :class:`ToolRegistrationError` at decoration time for a parameter
    without a type, ``*args``/``**kwargs``, a type msgspec cannot describe,
    no description, or an invalid name.
    """
    flags = ToolFlags(
        read_only=read_only,
        background_safe=background_safe,
        needs_approval=needs_approval,
        concurrent=concurrent,
    )
    if timeout is not None and not timeout > 0:
        raise ToolRegistrationError(f"timeout must be a positive number of seconds, not {timeout}")

    def decorate(fn: _ToolFunction) -> FunctionTool:
        return _make(fn, name=name, description=description, flags=flags, timeout=timeout)

    if function is not None:
        return decorate(function)
    return decorate


def _make(
    fn: _ToolFunction,
    *,
    name: str | None,
    description: str | None,
    flags: ToolFlags,
    timeout: float | None,
) -> FunctionTool:
    if not callable(fn):
        raise ToolRegistrationError(f"@tool decorates a function, not {fn!r}")
    tool_name = validate_tool_name(name if name is not None else getattr(fn, "__name__", ""))
    doc = docstring_parser.parse(inspect.getdoc(fn) or "")
    text = description if description is not None else _description(doc)
    if not text.strip():
        raise ToolRegistrationError(
            f"tool {tool_name!r} has no description: give the function a docstring "
            "or pass description=... to @tool"
        )
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise ToolRegistrationError(
            f"cannot read the type hints of tool {tool_name!r}: {type(exc).__name__}: {exc}"
        ) from exc
    param_docs = {p.arg_name: p.description for p in doc.params if p.description}
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    context_parameter: str | None = None
    for parameter in inspect.signature(fn).parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ToolRegistrationError(
                f"tool {tool_name!r}: *{parameter.name} cannot be described to a model; "
                "name every parameter"
            )
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise ToolRegistrationError(
                f"tool {tool_name!r}: {parameter.name} is positional-only; "
                "tool arguments are passed by name"
            )
        if parameter.name not in hints:
            raise ToolRegistrationError(
                f"tool {tool_name!r}: parameter {parameter.name!r} has no type annotation"
            )
        hint = hints[parameter.name]
        if hint is ToolContext:
            context_parameter = parameter.name
            continue
        hint = _described(hint, param_docs.get(parameter.name))
        if parameter.default is parameter.empty:
            fields.append((parameter.name, hint))
        else:
            fields.append((parameter.name, hint, parameter.default))
    struct_name = "".join(part.title() for part in re.split(r"[_-]+", tool_name) if part) + "Args"
    try:
        arguments_type = msgspec.defstruct(
            struct_name,
            fields,
            module=getattr(fn, "__module__", None),
            forbid_unknown_fields=True,
            frozen=True,
        )
        input_schema(arguments_type)  # fails now, not on the first call, for a bad type
    except (TypeError, ValueError) as exc:
        raise ToolRegistrationError(
            f"tool {tool_name!r}: its parameters cannot be described as JSON ({exc})"
        ) from exc
    return FunctionTool(
        name=tool_name,
        description=text.strip(),
        arguments_type=arguments_type,
        flags=flags,
        function=fn,
        is_async=inspect.iscoroutinefunction(fn),
        context_parameter=context_parameter,
        timeout=timeout,
    )


def _description(doc: docstring_parser.Docstring) -> str:
    """The docstring's short and long description, without its parameter section."""
    parts = [doc.short_description or "", doc.long_description or ""]
    return "\n\n".join(part.strip() for part in parts if part and part.strip())


def _described(hint: Any, doc: str | None) -> Any:
    """``hint`` with a plain string in ``Annotated`` made a ``msgspec.Meta`` description.

    The docstring's entry is used only when the annotation gives no description.
    """
    if get_origin(hint) is Annotated:
        base, *extras = get_args(hint)
        metas: list[Any] = []
        described = False
        for extra in extras:
            if isinstance(extra, str):
                metas.append(msgspec.Meta(description=extra))
                described = True
            else:
                metas.append(extra)
                described = described or (
                    isinstance(extra, msgspec.Meta) and extra.description is not None
                )
        if not described and doc:
            metas.append(msgspec.Meta(description=doc))
        return Annotated[(base, *metas)]
    if doc:
        return Annotated[hint, msgspec.Meta(description=doc)]
    return hint
