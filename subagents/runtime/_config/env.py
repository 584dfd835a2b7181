"""The ``SUBAGENTS_*`` environment variables: their names, and how their text is read.

One rule names them (``SUBAGENTS_`` and the dotted key in upper case, a table
and its key joined by a double underscore); each leaf key's type says how its
text is parsed, and text that does not parse is left to the key's own check.
"""

from __future__ import annotations

import json
import typing
from typing import Any, Final, Literal

import attrs

from subagents.runtime._config.defaults import ENV_PREFIX
from subagents.runtime._config.values import SECTIONS, section_keys

__all__ = ["env_variable_names"]

# How environment text is read for each leaf key.
_EnvKind = Literal["int", "float", "bool", "text", "list", "json"]


def _env_kinds() -> dict[str, _EnvKind]:
    kinds: dict[str, _EnvKind] = {
        "state_dir": "text",
        "provider": "text",
        "model": "text",
        "trusted_sources": "list",
        "nicknames": "list",
        "env_passthrough": "list",
        "model_aliases": "json",
        "hooks": "json",
        "mcp_servers": "json",
    }
    for section, cls in SECTIONS.items():
        hints = typing.get_type_hints(cls)
        for field in attrs.fields(cls):
            hint = hints[field.name]
            kind: _EnvKind = (
                "bool" if hint is bool else "int" if hint is int else "float" if hint is float
                else "text"
            )  # fmt: skip
            kinds[f"{section}.{field.name}"] = kind
    return kinds


ENV_KINDS: Final = _env_kinds()


def env_name(key: str) -> str:
    return ENV_PREFIX + key.upper().replace(".", "__")


def env_variable_names() -> dict[str, str]:
    """Every environment variable :func:`load_config` reads, mapped to its dotted key.

    ``SUBAGENTS_MODEL_ALIASES__<ALIAS>`` (any alias) is read too and not listed.
    """
    names = {env_name(key): key for key in ENV_KINDS}
    for key in section_keys("limits"):
        names.setdefault(env_name(key), f"limits.{key}")
    return names


_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off"})


def parse_env(kind: _EnvKind, text: str) -> Any:
    """Environment text read for a key of ``kind``.

    Text that does not parse is returned as is, so the key's own check reports
    it with the key's expectation (``a whole number of at least 1``).
    """
    stripped = text.strip()
    if kind == "int":
        try:
            return int(stripped)
        except ValueError:
            return text
    if kind == "float":
        try:
            return float(stripped)
        except ValueError:
            return text
    if kind == "bool":
        lowered = stripped.lower()
        return True if lowered in _TRUE else False if lowered in _FALSE else text
    if kind == "list":
        if stripped.startswith("["):
            try:
                return json.loads(stripped)
            except (ValueError, RecursionError):  # the value then fails its check, by name
                return text
        return [item.strip() for item in stripped.split(",") if item.strip()]
    return text
