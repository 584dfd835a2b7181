"""Where a setting's value came from, and the errors that point back there.

An :class:`SettingOrigin` is one source of values (the defaults, a file, a variable,
code) as named in :attr:`~subagents.runtime.RuntimeConfig.sources` and in
messages; the errors made here name the source, and a file's line when it can
be found, and suggest the closest valid key for an unknown one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from subagents.runtime._config.checks import show_value
from subagents.runtime._config.values import SECTIONS, section_keys
from subagents.runtime._exceptions import ConfigError


@attrs.frozen
class SettingOrigin:
    """One source of values: how it is named in ``sources`` and in messages."""

    label: str  # for RuntimeConfig.sources
    where: str  # for ConfigError.origin
    rank: int  # precedence: a higher rank wins
    path: Path | None = None
    variable: str | None = None
    hint: str | None = None
    text: str | None = None  # a file's text, to find a key's line


DEFAULTS = SettingOrigin(
    "default", "defaults", 0, hint="This is a bug in subagents: please report it."
)
RANK_USER, RANK_PROJECT, _RANK_ENV, _RANK_CODE = 1, 2, 3, 4


def file_origin(path: Path, rank: int, text: str | None = None) -> SettingOrigin:
    return SettingOrigin(
        str(path),
        str(path),
        rank,
        path=path,
        hint=f"Fix it in {path}, or remove it to use the default.",
        text=text,
    )


def env_origin(variable: str) -> SettingOrigin:
    return SettingOrigin(
        f"env {variable}",
        f"environment variable {variable}",
        _RANK_ENV,
        variable=variable,
        hint=f"Fix or unset {variable}.",
    )


CODE = SettingOrigin(
    "code",
    "overrides from code",
    _RANK_CODE,
    hint="Fix the value passed to load_config(overrides=...).",
)


# --------------------------------------------------------------------------- lines of a file

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_ASSIGN = re.compile(r"^\s*([A-Za-z0-9_.\"' -]+?)\s*=")


def _strip_key(text: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in text.split("."))


def find_line(text: str | None, key: str) -> int | None:
    """The line of ``text`` (a TOML file) where dotted ``key`` is set, when it can be found."""
    if text is None or not key:
        return None
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = _strip_key(header[1])
            if table == key:
                return number
            continue
        assign = _ASSIGN.match(line)
        if assign:
            name = _strip_key(assign[1])
            full = f"{table}.{name}" if table else name
            if full == key or key.startswith(full + "."):
                return number
    return None


def moved(
    error: ConfigError, origin: SettingOrigin, *, key: str | None = None, line: int | None
) -> ConfigError:
    """``error`` as seen from ``origin`` (the source that supplied the value)."""
    return ConfigError(
        origin.where,
        error.key if key is None else key,
        error.expected,
        error.got,
        path=origin.path,
        variable=origin.variable,
        line=line,
        hint=error.hint if origin.hint is None else origin.hint,
        reason=error.reason,
        related=error.related,
    )


# --------------------------------------------------------------------------- unknown keys


def unknown_key(origin: SettingOrigin, key: str, valid: Iterable[str], where: str) -> ConfigError:
    """The error for a key that is not a setting, naming the closest valid key."""
    valid = tuple(valid)
    name = key.rsplit(".", 1)[-1]
    suggestion = None
    if "." not in key:  # a section's key written at the top level
        suggestion = next(
            (f"{section}.{name}" for section in SECTIONS if name in section_keys(section)),
            None,
        )
    if suggestion is None:
        close = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
        if close:
            suggestion = key[: len(key) - len(name)] + close[0]
    hint = f"Did you mean {suggestion!r}? " if suggestion else ""
    hint += f"Valid keys {where}: {', '.join(valid)}."
    return ConfigError(
        origin.where,
        key,
        f"one of the keys {where}",
        "an unknown key",
        path=origin.path,
        variable=origin.variable,
        line=find_line(origin.text, key),
        hint=hint,
    )


def shape_error(origin: SettingOrigin, key: str, expected: str, value: Any) -> ConfigError:
    return ConfigError(
        origin.where,
        key,
        expected,
        show_value(value),
        path=origin.path,
        variable=origin.variable,
        line=find_line(origin.text, key),
        hint=origin.hint,
    )
