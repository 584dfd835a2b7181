"""The converters and checks of each setting, shared by every source.

A value is judged by the config classes' own converters and validators, so it
is judged the same way whether it came from a file, the environment or code;
a wrong one raises :class:`~subagents.runtime.ConfigError` with origin ``code``,
which the loader then moves to the source that supplied it. :func:`show_value`
renders a wrong value in such a message: short, TOML-like, with secrets masked.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from subagents.actors import is_count, is_seconds
from subagents.agents import AgentSource
from subagents.runtime._exceptions import ConfigError, HookConfigError
from subagents.runtime._hooks.values import hooks_from_settings
from subagents.tools import mask_text, mcp_server_config

_AGENT_SOURCES: Final = tuple(source.value for source in AgentSource)


def fail(key: str, expected: str, value: object, **kw: Any) -> typing.NoReturn:
    raise ConfigError("code", key, expected, show_value(value), **kw)


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def count_check(key: str, minimum: int) -> Callable[[Any, Any, Any], None]:
    expected = f"a whole number of at least {minimum}"

    def check(_: Any, __: Any, value: Any) -> None:
        if not is_count(value, minimum):
            fail(key, expected, value)

    return check


def seconds_check(key: str) -> Callable[[Any, Any, Any], None]:
    expected = "a finite number of seconds, 0 or more"

    def check(_: Any, __: Any, value: Any) -> None:
        if not is_seconds(value):
            fail(key, expected, value)

    return check


def flag_check(key: str) -> Callable[[Any, Any, Any], None]:
    def check(_: Any, __: Any, value: Any) -> None:
        if not isinstance(value, bool):
            fail(key, "true or false", value)

    return check


def choice_check(key: str, choices: Iterable[str]) -> Callable[[Any, Any, Any], None]:
    allowed = tuple(choices)
    expected = "one of " + ", ".join(json.dumps(c) for c in allowed)

    def check(_: Any, __: Any, value: Any) -> None:
        if not isinstance(value, str) or value not in allowed:
            fail(key, expected, value)

    return check


def to_float(value: Any) -> Any:
    """Whole numbers become floats (TOML ``2`` for ``2.0``); anything else is left to the check."""
    if type(value) is not int:
        return value
    try:
        return float(value)
    except OverflowError:  # beyond any float: reported as not finite
        return math.inf


def to_lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


def to_path(value: Any) -> Any:
    if isinstance(value, str | os.PathLike) and os.fspath(value).strip():
        try:
            return Path(value).expanduser()
        except RuntimeError:  # "~someone" with no such user: kept as written
            return Path(value)
    return value


def to_frozenset(value: Any) -> Any:
    if isinstance(value, list | tuple | set | frozenset):
        try:
            return frozenset(value)
        except TypeError:  # unhashable items: left to the check, which reports the list
            return value
    return value


def to_names(value: Any) -> Any:
    return tuple(value) if isinstance(value, list | tuple) else value


def _freeze(value: Any) -> Any:
    """Mappings become read-only and lists tuples, all the way down."""
    if isinstance(value, Mapping):
        return types.MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def to_mapping(value: Any) -> Any:
    return _freeze(value) if isinstance(value, Mapping) else value


_HOOKS_EXPECTED: Final = (
    'Claude Code hook groups: a list of {matcher, hooks = [{type = "command", command = ...}]}'
)


def check_state_dir(_: Any, __: Any, value: Any) -> None:
    if not isinstance(value, Path) or not str(value).strip():
        fail("state_dir", "a folder path (text)", value)


def check_model(_: Any, __: Any, value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        fail("model", "a model alias or id (non-empty text)", value)


def check_sources(_: Any, __: Any, value: Any) -> None:
    if not isinstance(value, frozenset) or not all(v in _AGENT_SOURCES for v in value):
        fail(
            "trusted_sources",
            "a list of agent sources, each one of " + ", ".join(_AGENT_SOURCES),
            sorted(value, key=str) if isinstance(value, frozenset) else value,
        )


def check_passthrough(_: Any, __: Any, value: Any) -> None:
    if not isinstance(value, frozenset) or not all(
        isinstance(name, str) and name and "=" not in name and "\0" not in name for name in value
    ):
        fail(
            "env_passthrough",
            "a list of environment variable names (text without '=')",
            sorted(value, key=str) if isinstance(value, frozenset) else value,
        )


def check_nicknames(_: Any, __: Any, value: Any) -> None:
    if value is None:
        return
    if (
        not isinstance(value, tuple)
        or not value
        or not all(isinstance(name, str) and name.strip() for name in value)
        or len(set(value)) != len(value)
    ):
        fail("nicknames", "a non-empty list of distinct, non-blank names", value)


def check_aliases(_: Any, __: Any, value: Any) -> None:
    expected = "a table of alias = model id, both non-empty text"
    if not isinstance(value, Mapping):
        fail("model_aliases", expected, value)
    for alias, model in value.items():
        if not isinstance(alias, str) or not alias.strip():
            fail("model_aliases", expected, alias)
        if not isinstance(model, str) or not model.strip():
            fail(f"model_aliases.{alias}", "a model id (non-empty text)", model)


def check_hooks(_: Any, __: Any, value: Any) -> None:
    if not isinstance(value, Mapping):
        fail("hooks", "a table of hook event = list of hook groups", value)
    for event, groups in value.items():
        check_hook_event(str(event), groups)


def check_mcp_servers(_: Any, __: Any, value: Any) -> None:
    """Each ``[mcp_servers.NAME]`` table must be a server :func:`mcp_server_config` accepts."""
    if not isinstance(value, Mapping):
        fail(
            "mcp_servers",
            "a table of server name = {command, args, env} or {url, http_headers}",
            value,
        )
    for name, raw in value.items():
        try:
            mcp_server_config(str(name), raw)
        except (TypeError, ValueError) as exc:
            fail(
                f"mcp_servers.{name}",
                "an MCP server: {command, args, env} or {url, http_headers}",
                raw,
                reason=str(exc),
            )


def check_hook_event(event: str, groups: Any) -> None:
    """Raise :class:`ConfigError` unless ``groups`` are valid hook groups for ``event``."""
    try:
        hooks_from_settings({"hooks": {event: groups}})
    except (HookConfigError, TypeError, ValueError) as exc:
        key = f"hooks.{event}"
        reason = str(exc).removeprefix(key + " ")
        raise ConfigError("code", key, _HOOKS_EXPECTED, show_value(groups), reason=reason) from None


def show_value(value: object) -> str:
    """How a wrong value is shown in a message: TOML-like, short, with secrets masked."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, int | float):
        text = repr(value)
    elif value is None:
        text = "nothing (None)"
    elif isinstance(value, datetime.date | datetime.time):
        text = f"the date/time {value.isoformat()}"
    elif isinstance(value, Path):
        text = json.dumps(str(value), ensure_ascii=False)
    elif isinstance(value, Mapping | list | tuple | set | frozenset):
        try:
            text = json.dumps(plain_value(value), ensure_ascii=False, default=repr)
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
    else:
        text = f"{type(value).__name__} {value!r}"
    text = mask_text(text)
    return text if len(text) <= 80 else text[:77] + "..."


def plain_value(value: object) -> Any:
    """``value`` with frozen containers turned into plain JSON-like ones."""
    if isinstance(value, Mapping):
        return {str(k): plain_value(v) for k, v in value.items()}
    if isinstance(value, frozenset | set):
        return sorted((plain_value(v) for v in value), key=str)
    if isinstance(value, list | tuple):
        return [plain_value(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value
