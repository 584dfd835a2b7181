"""The runtime's configuration: every default in one place, loaded from files, env and code.

:class:`RuntimeConfig` is a frozen value made of small frozen sections
(:class:`LimitsConfig`, :class:`TranscriptsConfig`, :class:`LoggingConfig`)
plus a few top-level keys. :func:`load_config` builds one from these sources,
lowest precedence first:

1. the defaults written in this module;
2. the user file ``<home>/.subagents/config.toml``;
3. the project file: the nearest ``subagents.toml`` found from the working
   directory upward, stopping at a folder that holds ``.git`` (the repository
   root, which is still searched) or at the filesystem root;
4. environment variables ``SUBAGENTS_*``;
5. ``overrides`` passed by code (the CLI's flags).

A file holds any subset of::

    state_dir = "~/.subagents/state"  # "~" is the home folder; a relative path is
                                      # relative to the folder of the file
    provider = "auto"                 # auto | scripted | anthropic (auto: anthropic
                                      # when ANTHROPIC_API_KEY is set)
    model = "sonnet"                  # the lead's default model: an alias or a full id
    trusted_sources = ["builtin", "project", "cli"]
    nicknames = ["Ada", "Grace"]      # replaces the shipped pool

    [limits]
    max_threads = 8
    wait_max_seconds = 600.0

    [model_aliases]                   # adds to, or replaces entries of, the shipped table
    fast = "claude-haiku-5-5"

    [hooks]                           # the ``hooks`` object of Claude Code settings
    PreToolUse = [{ matcher = "Bash", hooks = [{ type = "command", command = "./check.sh" }] }]

    [transcripts]
    retention_days = 30

    [logging]
    stderr_level = "info"

Merging: a higher source replaces a lower one key by key (``limits.max_threads``
alone, not the whole ``[limits]`` table); ``model_aliases`` merge alias by alias;
``hooks`` are concatenated event by event (user hooks first), since Claude Code
runs the hooks of every settings file.

Environment variables follow one rule: ``SUBAGENTS_`` and the key in upper case,
a table and its key joined by a double underscore::

    SUBAGENTS_STATE_DIR=/var/lib/subagents     state_dir (relative: to the working folder)
    SUBAGENTS_PROVIDER=scripted                provider
    SUBAGENTS_MODEL=opus                       model
    SUBAGENTS_TRUSTED_SOURCES=builtin,project  trusted_sources (comma list, or a JSON array)
    SUBAGENTS_LIMITS__MAX_THREADS=4            limits.max_threads
    SUBAGENTS_TRANSCRIPTS__ENABLED=false       transcripts.enabled (true/false, 1/0, yes/no, on/off)
    SUBAGENTS_MODEL_ALIASES__FAST=claude-...   model_aliases.fast
    SUBAGENTS_MODEL_ALIASES='{"fast": "..."}'  model_aliases (a JSON object)
    SUBAGENTS_HOOKS='{"PreToolUse": [...]}'    hooks (a JSON object)

The ``limits`` keys are unique, so ``SUBAGENTS_MAX_THREADS=4`` is accepted for
``SUBAGENTS_LIMITS__MAX_THREADS=4`` (setting both to different values is an
error). An empty variable counts as unset. A ``SUBAGENTS_*`` variable that names
no setting is not an error (other programs may share the prefix) but is listed
in :attr:`RuntimeConfig.warnings`, with the closest setting's name.

Every wrong value, whatever its source, raises one :class:`ConfigError` that
names the file (or the variable), the key, what was expected and what was
found, and says what to do; a TOML syntax error names the file and the line.
:attr:`RuntimeConfig.sources` says where each value came from, for
``subagents config show``.
"""

from __future__ import annotations

import datetime
import difflib
import json
import math
import os
import re
import tomllib
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias, cast

import attrs
import cattrs
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)

from subagents._exceptions import SubagentsError
from subagents.actors import SupervisorConfig
from subagents.agents import AgentSource, ModelAliases
from subagents.runtime._config import (
    API_KEY_ENV,
    DEFAULT_GRACE_PERIOD_SECONDS,
    DEFAULT_MAX_TIME_SECONDS,
    DEFAULT_MAX_TURNS,
    Limits,
)
from subagents.runtime._hook_commands import HookConfigError
from subagents.runtime._hooks import Hook, hooks_from_settings
from subagents.runtime._logging import mask_text
from subagents.tools import TrustPolicy

__all__ = [
    "DEFAULT_CANCEL_TIMEOUT",
    "DEFAULT_CLOSE_GRACE_PERIOD",
    "DEFAULT_MAILBOX_SIZE",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_THREADS",
    "DEFAULT_RETENTION_DAYS",
    "DEFAULT_STATE_DIR",
    "DEFAULT_TRUSTED_SOURCES",
    "DEFAULT_WAIT_MAX_SECONDS",
    "DEFAULT_WAIT_MIN_SECONDS",
    "DEFAULT_WAIT_SECONDS",
    "DiskErrorPolicy",
    "ENV_PREFIX",
    "ConfigError",
    "LOG_LEVELS",
    "LimitsConfig",
    "LogLevel",
    "LoggingConfig",
    "PROJECT_CONFIG_NAME",
    "ProviderChoice",
    "RuntimeConfig",
    "TranscriptsConfig",
    "USER_CONFIG_PATH",
    "env_variable_names",
    "find_project_config",
    "load_config",
    "stderr_level_for",
]

# --------------------------------------------------------------------------- defaults

#: How many agents may be live at once (top-level ones included).
DEFAULT_MAX_THREADS: Final = 8
#: How deep below the lead agents may spawn (1: subagents do not spawn subagents).
DEFAULT_MAX_DEPTH: Final = 1
#: Unread messages an agent's mailbox holds before senders wait.
DEFAULT_MAILBOX_SIZE: Final = 64
#: Seconds a closed agent gets to stop by itself before it is cancelled.
DEFAULT_CLOSE_GRACE_PERIOD: Final = 2.0
#: Seconds a cancelled agent may take to unwind.
DEFAULT_CANCEL_TIMEOUT: Final = 5.0
#: The ``wait`` tool's timeout when the model gives none, and the bounds it is clamped to.
DEFAULT_WAIT_SECONDS: Final = 30.0
DEFAULT_WAIT_MIN_SECONDS: Final = 1.0
DEFAULT_WAIT_MAX_SECONDS: Final = 600.0
#: Where transcripts and logs go, below the home folder.
DEFAULT_STATE_DIR: Final = Path("~/.subagents/state")
#: Definition sources whose agents may be given tools that write or execute.
DEFAULT_TRUSTED_SOURCES: Final = frozenset({"builtin", "project", "cli"})
#: Transcripts older than this many days are cleaned.
DEFAULT_RETENTION_DAYS: Final = 30

#: The user file, relative to the home folder.
USER_CONFIG_PATH: Final = Path(".subagents/config.toml")
#: The project file's name, looked for from the working folder upward.
PROJECT_CONFIG_NAME: Final = "subagents.toml"
#: The prefix of the environment variables read by :func:`load_config`.
ENV_PREFIX: Final = "SUBAGENTS_"

#: Log levels, most verbose first.
LOG_LEVELS: Final = ("debug", "info", "warning", "error", "critical")

ProviderChoice: TypeAlias = Literal["auto", "scripted", "anthropic"]
LogLevel: TypeAlias = Literal["debug", "info", "warning", "error", "critical"]
#: What a transcript write error does: keep the agent going with the transcript
#: in memory only (and say so), or stop the agent with an error.
DiskErrorPolicy: TypeAlias = Literal["memory", "stop"]

_PROVIDERS: Final = typing.get_args(ProviderChoice)
_DISK_ERROR_POLICIES: Final = typing.get_args(DiskErrorPolicy)
_AGENT_SOURCES: Final = tuple(source.value for source in AgentSource)


def stderr_level_for(verbosity: int, default: LogLevel = "warning") -> LogLevel:
    """The stderr log level for ``-v`` flags counted ``verbosity`` times.

    0 keeps ``default``; ``-v`` is ``info``; ``-vv`` (or more) is ``debug``.
    """
    if verbosity <= 0:
        return default
    return "info" if verbosity == 1 else "debug"


# --------------------------------------------------------------------------- the error


class ConfigError(SubagentsError):
    """A configuration value is wrong.

    ``origin`` is where it was written, as shown to the user: a file's path,
    ``environment variable SUBAGENTS_X`` or ``code``; ``path`` is the file
    (``None`` for the environment and code) and ``variable`` the environment
    variable, when there is one. ``key`` is the dotted key
    (``limits.max_threads``; empty for a file that is not valid TOML),
    ``expected`` says what a good value is, ``got`` shows what was found
    (``None`` when there is nothing to show), ``line`` is the file's line when
    known, and ``hint`` says what to do. ``reason``, when set, replaces the
    "expected ..., got ..." clause with a more precise sentence.
    """

    def __init__(
        self,
        origin: str,
        key: str,
        expected: str,
        got: str | None = None,
        *,
        path: Path | None = None,
        variable: str | None = None,
        line: int | None = None,
        hint: str | None = None,
        reason: str | None = None,
        related: tuple[str, ...] = (),
    ) -> None:
        self.origin = origin
        self.key = key
        self.expected = expected
        self.got = got
        self.path = path
        self.variable = variable
        self.line = line
        self.hint = hint
        self.reason = reason
        #: Other keys whose values together made this one wrong (cross-field checks).
        self.related = related
        super().__init__(self._message())

    def _message(self) -> str:
        head = [self.origin]
        if self.key:
            head.append(self.key)
        elif self.line is not None:
            head.append(f"line {self.line}")
        if self.reason is not None:
            body = self.reason
        else:
            body = f"expected {self.expected}"
            if self.got is not None:
                body += f", got {self.got}"
        if self.key and self.line is not None:
            body += f" (line {self.line})"
        text = ": ".join(head) + ": " + body.rstrip(".") + "."
        return f"{text} {self.hint}" if self.hint else text

    def _moved(self, origin: _Origin, *, key: str | None = None, line: int | None) -> ConfigError:
        """This error as seen from ``origin`` (the source that supplied the value)."""
        return ConfigError(
            origin.where,
            self.key if key is None else key,
            self.expected,
            self.got,
            path=origin.path,
            variable=origin.variable,
            line=line,
            hint=self.hint if origin.hint is None else origin.hint,
            reason=self.reason,
            related=self.related,
        )


def _show(value: object) -> str:
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
            text = json.dumps(_plain(value), ensure_ascii=False, default=repr)
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
    else:
        text = f"{type(value).__name__} {value!r}"
    text = mask_text(text)
    return text if len(text) <= 80 else text[:77] + "..."


def _plain(value: object) -> Any:
    """``value`` with frozen containers turned into plain JSON-like ones."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, frozenset | set):
        return sorted((_plain(v) for v in value), key=str)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


# --------------------------------------------------------------------------- validators


def _fail(key: str, expected: str, value: object, **kw: Any) -> typing.NoReturn:
    raise ConfigError("code", key, expected, _show(value), **kw)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _count(key: str, minimum: int) -> Callable[[Any, Any, Any], None]:
    expected = f"a whole number of at least {minimum}"

    def check(_: Any, __: Any, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            _fail(key, expected, value)

    return check


def _seconds(key: str) -> Callable[[Any, Any, Any], None]:
    expected = "a finite number of seconds, 0 or more"

    def check(_: Any, __: Any, value: Any) -> None:
        if not _is_number(value) or not math.isfinite(value) or value < 0:
            _fail(key, expected, value)

    return check


def _flag(key: str) -> Callable[[Any, Any, Any], None]:
    def check(_: Any, __: Any, value: Any) -> None:
        if not isinstance(value, bool):
            _fail(key, "true or false", value)

    return check


def _choice(key: str, choices: Iterable[str]) -> Callable[[Any, Any, Any], None]:
    allowed = tuple(choices)
    expected = "one of " + ", ".join(json.dumps(c) for c in allowed)

    def check(_: Any, __: Any, value: Any) -> None:
        if not isinstance(value, str) or value not in allowed:
            _fail(key, expected, value)

    return check


def _to_float(value: Any) -> Any:
    """Whole numbers become floats (TOML ``2`` for ``2.0``); anything else is left to the check."""
    if type(value) is not int:
        return value
    try:
        return float(value)
    except OverflowError:  # beyond any float: reported as not finite
        return math.inf


def _to_lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


def _to_path(value: Any) -> Any:
    if isinstance(value, str | os.PathLike) and os.fspath(value).strip():
        try:
            return Path(value).expanduser()
        except RuntimeError:  # "~someone" with no such user: kept as written
            return Path(value)
    return value


def _to_frozenset(value: Any) -> Any:
    if isinstance(value, list | tuple | set | frozenset):
        try:
            return frozenset(value)
        except TypeError:  # unhashable items: left to the check, which reports the list
            return value
    return value


def _to_names(value: Any) -> Any:
    return tuple(value) if isinstance(value, list | tuple) else value


def _freeze(value: Any) -> Any:
    """Mappings become read-only and lists tuples, all the way down."""
    if isinstance(value, Mapping):
        return types.MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _to_mapping(value: Any) -> Any:
    return _freeze(value) if isinstance(value, Mapping) else value


_HOOKS_EXPECTED: Final = (
    'Claude Code hook groups: a list of {matcher, hooks = [{type = "command", command = ...}]}'
)


def _check_state_dir(_: Any, __: Any, value: Any) -> None:
    if not isinstance(value, Path) or not str(value).strip():
        _fail("state_dir", "a folder path (text)", value)


def _check_model(_: Any, __: Any, value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        _fail("model", "a model alias or id (non-empty text)", value)


def _check_sources(_: Any, __: Any, value: Any) -> None:
    if not isinstance(value, frozenset) or not all(v in _AGENT_SOURCES for v in value):
        _fail(
            "trusted_sources",
            "a list of agent sources, each one of " + ", ".join(_AGENT_SOURCES),
            sorted(value, key=str) if isinstance(value, frozenset) else value,
        )


def _check_nicknames(_: Any, __: Any, value: Any) -> None:
    if value is None:
        return
    if (
        not isinstance(value, tuple)
        or not value
        or not all(isinstance(name, str) and name.strip() for name in value)
        or len(set(value)) != len(value)
    ):
        _fail("nicknames", "a non-empty list of distinct, non-blank names", value)


def _check_aliases(_: Any, __: Any, value: Any) -> None:
    expected = "a table of alias = model id, both non-empty text"
    if not isinstance(value, Mapping):
        _fail("model_aliases", expected, value)
    for alias, model in value.items():
        if not isinstance(alias, str) or not alias.strip():
            _fail("model_aliases", expected, alias)
        if not isinstance(model, str) or not model.strip():
            _fail(f"model_aliases.{alias}", "a model id (non-empty text)", model)


def _check_hooks(_: Any, __: Any, value: Any) -> None:
    if not isinstance(value, Mapping):
        _fail("hooks", "a table of hook event = list of hook groups", value)
    for event, groups in value.items():
        _check_hook_event(str(event), groups)


def _check_hook_event(event: str, groups: Any) -> None:
    """Raise :class:`ConfigError` unless ``groups`` are valid hook groups for ``event``."""
    try:
        hooks_from_settings({"hooks": {event: groups}})
    except (HookConfigError, TypeError, ValueError) as exc:
        key = f"hooks.{event}"
        reason = str(exc).removeprefix(key + " ")
        raise ConfigError("code", key, _HOOKS_EXPECTED, _show(groups), reason=reason) from None


# --------------------------------------------------------------------------- the value


@attrs.frozen(kw_only=True)
class LimitsConfig:
    """Limits of the runtime and defaults of each agent run.

    ``max_threads`` … ``cancel_timeout`` are :class:`~subagents.actors.SupervisorConfig`'s;
    ``max_turns``, ``max_time_seconds`` and ``grace_period_seconds`` are the
    loop's :class:`~subagents.runtime.Limits` (a definition may set its own);
    the ``wait`` tool's timeout defaults to ``wait_default_seconds`` and is
    clamped to ``[wait_min_seconds, wait_max_seconds]``.
    """

    max_threads: int = attrs.field(
        default=DEFAULT_MAX_THREADS, validator=_count("limits.max_threads", 1)
    )
    max_depth: int = attrs.field(default=DEFAULT_MAX_DEPTH, validator=_count("limits.max_depth", 0))
    mailbox_size: int = attrs.field(
        default=DEFAULT_MAILBOX_SIZE, validator=_count("limits.mailbox_size", 1)
    )
    close_grace_period: float = attrs.field(
        default=DEFAULT_CLOSE_GRACE_PERIOD,
        converter=_to_float,
        validator=_seconds("limits.close_grace_period"),
    )
    cancel_timeout: float = attrs.field(
        default=DEFAULT_CANCEL_TIMEOUT,
        converter=_to_float,
        validator=_seconds("limits.cancel_timeout"),
    )
    wait_default_seconds: float = attrs.field(
        default=DEFAULT_WAIT_SECONDS,
        converter=_to_float,
        validator=_seconds("limits.wait_default_seconds"),
    )
    wait_min_seconds: float = attrs.field(
        default=DEFAULT_WAIT_MIN_SECONDS,
        converter=_to_float,
        validator=_seconds("limits.wait_min_seconds"),
    )
    wait_max_seconds: float = attrs.field(
        default=DEFAULT_WAIT_MAX_SECONDS,
        converter=_to_float,
        validator=_seconds("limits.wait_max_seconds"),
    )
    max_turns: int = attrs.field(default=DEFAULT_MAX_TURNS, validator=_count("limits.max_turns", 1))
    max_time_seconds: float = attrs.field(
        default=DEFAULT_MAX_TIME_SECONDS,
        converter=_to_float,
        validator=_seconds("limits.max_time_seconds"),
    )
    grace_period_seconds: float = attrs.field(
        default=DEFAULT_GRACE_PERIOD_SECONDS,
        converter=_to_float,
        validator=_seconds("limits.grace_period_seconds"),
    )

    def __attrs_post_init__(self) -> None:
        low, default, high = self.wait_min_seconds, self.wait_default_seconds, self.wait_max_seconds
        keys = ("limits.wait_min_seconds", "limits.wait_default_seconds", "limits.wait_max_seconds")
        if low > high:
            _fail(
                "limits.wait_max_seconds",
                f"a number of seconds no smaller than wait_min_seconds ({low:g})",
                high,
                related=(keys[0],),
            )
        if not low <= default <= high:
            _fail(
                "limits.wait_default_seconds",
                f"a number of seconds between wait_min_seconds ({low:g}) "
                f"and wait_max_seconds ({high:g})",
                default,
                related=(keys[0], keys[2]),
            )

    def clamp_wait(self, timeout: float | None) -> float:
        """The ``wait`` tool's effective timeout for the ``timeout`` a model asked for."""
        if timeout is None or not _is_number(timeout) or math.isnan(timeout):
            return self.wait_default_seconds
        return min(max(float(timeout), self.wait_min_seconds), self.wait_max_seconds)


@attrs.frozen(kw_only=True)
class TranscriptsConfig:
    """Whether transcripts are written, how long they are kept, and what a write error does."""

    enabled: bool = attrs.field(default=True, validator=_flag("transcripts.enabled"))
    retention_days: int = attrs.field(
        default=DEFAULT_RETENTION_DAYS, validator=_count("transcripts.retention_days", 1)
    )
    on_disk_error: DiskErrorPolicy = attrs.field(
        default="memory",
        converter=_to_lower,
        validator=_choice("transcripts.on_disk_error", _DISK_ERROR_POLICIES),
    )


@attrs.frozen(kw_only=True)
class LoggingConfig:
    """Where log lines go: a JSON-lines file under the state folder, and stderr.

    ``file_level`` filters the file, ``stderr_level`` the readable lines on
    stderr (``warning``; ``info`` with ``-v``, ``debug`` with ``-vv``).
    """

    json_file: bool = attrs.field(default=True, validator=_flag("logging.json_file"))
    file_level: LogLevel = attrs.field(
        default="info", converter=_to_lower, validator=_choice("logging.file_level", LOG_LEVELS)
    )
    stderr_level: LogLevel = attrs.field(
        default="warning",
        converter=_to_lower,
        validator=_choice("logging.stderr_level", LOG_LEVELS),
    )


def _default_state_dir() -> Path:
    return DEFAULT_STATE_DIR.expanduser()


def _read_only(value: Mapping[str, str]) -> Mapping[str, str]:
    return types.MappingProxyType(dict(value))


def _texts(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen(kw_only=True)
class RuntimeConfig:
    """Everything the runtime is configured with; build one with :func:`load_config`.

    Built directly, it takes the same values (``RuntimeConfig(limits=LimitsConfig(
    max_threads=4))``); a wrong one raises :class:`ConfigError` whose origin is
    ``code``. ``sources`` maps each dotted key (as in :meth:`flat`) to where
    its value came from (``default``, a file path, ``env SUBAGENTS_X`` or
    ``code``); it is filled by :func:`load_config` and empty otherwise.
    ``warnings`` lists environment variables that name no setting.
    """

    limits: LimitsConfig = attrs.field(factory=LimitsConfig)
    state_dir: Path = attrs.field(
        factory=_default_state_dir, converter=_to_path, validator=_check_state_dir
    )
    provider: ProviderChoice = attrs.field(
        default="auto", converter=_to_lower, validator=_choice("provider", _PROVIDERS)
    )
    model: str | None = attrs.field(default=None, validator=_check_model)
    model_aliases: Mapping[str, str] = attrs.field(
        factory=dict, converter=_to_mapping, validator=_check_aliases, hash=False
    )
    hooks: Mapping[str, Any] = attrs.field(
        factory=dict, converter=_to_mapping, validator=_check_hooks, hash=False
    )
    trusted_sources: frozenset[str] = attrs.field(
        default=DEFAULT_TRUSTED_SOURCES, converter=_to_frozenset, validator=_check_sources
    )
    nicknames: tuple[str, ...] | None = attrs.field(
        default=None, converter=_to_names, validator=_check_nicknames
    )
    transcripts: TranscriptsConfig = attrs.field(factory=TranscriptsConfig)
    logging: LoggingConfig = attrs.field(factory=LoggingConfig)
    sources: Mapping[str, str] = attrs.field(
        factory=dict, converter=_read_only, eq=False, hash=False, repr=False
    )
    warnings: tuple[str, ...] = attrs.field(
        default=(), converter=_texts, eq=False, hash=False, repr=False
    )

    def supervisor_config(self) -> SupervisorConfig:
        """The supervisor's settings: the limits it enforces and the nickname pool."""
        limits = self.limits
        config = SupervisorConfig(
            max_threads=limits.max_threads,
            max_depth=limits.max_depth,
            mailbox_size=limits.mailbox_size,
            close_grace_period=limits.close_grace_period,
            cancel_timeout=limits.cancel_timeout,
        )
        return config if self.nicknames is None else attrs.evolve(config, nicknames=self.nicknames)

    def run_limits(self) -> Limits:
        """The agent loop's default limits (a definition's own limits take precedence)."""
        return Limits(
            max_turns=self.limits.max_turns,
            max_time_seconds=self.limits.max_time_seconds,
            grace_period_seconds=self.limits.grace_period_seconds,
        )

    def alias_table(self) -> ModelAliases:
        """The shipped alias table with this configuration's ``model_aliases`` applied."""
        return ModelAliases().with_overrides(self.model_aliases)

    def trust_policy(self) -> TrustPolicy:
        """Which definition sources may be given tools that write or execute."""
        policy: TrustPolicy = TrustPolicy(cast(Any, self.trusted_sources))
        return policy

    def global_hooks(self) -> tuple[Hook, ...]:
        """The configured hooks, ready for a :class:`~subagents.runtime.HookRunner`."""
        return hooks_from_settings({"hooks": self.hooks})

    def resolved_provider(
        self, env: Mapping[str, str] | None = None
    ) -> Literal["scripted", "anthropic"]:
        """``provider`` with ``auto`` decided: ``anthropic`` when ``ANTHROPIC_API_KEY`` is set."""
        if self.provider != "auto":
            return self.provider
        env = os.environ if env is None else env
        return "anthropic" if env.get(API_KEY_ENV, "").strip() else "scripted"

    @property
    def logs_dir(self) -> Path:
        """Where the JSON-lines log of each session goes."""
        return self.state_dir / "logs"

    @property
    def sessions_dir(self) -> Path:
        """Where each session's transcripts go (``<sessions_dir>/<session_id>/...``)."""
        return self.state_dir / "sessions"

    def flat(self) -> dict[str, Any]:
        """Every setting as ``dotted key -> plain value`` (lists, dicts, text), in file order.

        ``model_aliases`` and ``hooks`` give one key per alias and per event.
        """
        out: dict[str, Any] = {}
        for field in attrs.fields(RuntimeConfig):
            if field.name in ("sources", "warnings"):
                continue
            value = getattr(self, field.name)
            if field.name in _SECTIONS:
                for sub in attrs.fields(type(value)):
                    out[f"{field.name}.{sub.name}"] = _plain(getattr(value, sub.name))
            elif field.name in _TABLES:
                for name, item in value.items():
                    out[f"{field.name}.{name}"] = _plain(item)
            else:
                out[field.name] = _plain(value)
        return out


# --------------------------------------------------------------------------- the schema

_SECTIONS: Final[Mapping[str, type]] = types.MappingProxyType(
    {"limits": LimitsConfig, "transcripts": TranscriptsConfig, "logging": LoggingConfig}
)
#: Free tables: merged entry by entry (aliases) or concatenated per entry (hooks).
_TABLES: Final = ("model_aliases", "hooks")
_SCALARS: Final = ("state_dir", "provider", "model", "trusted_sources", "nicknames")
_TOP_KEYS: Final = (*_SCALARS, *_TABLES, *_SECTIONS)


def _section_keys(section: str) -> tuple[str, ...]:
    return tuple(f.name for f in attrs.fields(_SECTIONS[section]))


# How environment text is read for each leaf key.
_EnvKind = Literal["int", "float", "bool", "text", "list", "json"]


def _env_kinds() -> dict[str, _EnvKind]:
    kinds: dict[str, _EnvKind] = {
        "state_dir": "text",
        "provider": "text",
        "model": "text",
        "trusted_sources": "list",
        "nicknames": "list",
        "model_aliases": "json",
        "hooks": "json",
    }
    for section, cls in _SECTIONS.items():
        hints = typing.get_type_hints(cls)
        for field in attrs.fields(cls):
            hint = hints[field.name]
            kind: _EnvKind = (
                "bool" if hint is bool else "int" if hint is int else "float" if hint is float
                else "text"
            )  # fmt: skip
            kinds[f"{section}.{field.name}"] = kind
    return kinds


_ENV_KINDS: Final = _env_kinds()


def _env_name(key: str) -> str:
    return ENV_PREFIX + key.upper().replace(".", "__")


def env_variable_names() -> dict[str, str]:
    """Every environment variable :func:`load_config` reads, mapped to its dotted key.

    ``SUBAGENTS_MODEL_ALIASES__<ALIAS>`` (any alias) is read too and not listed.
    """
    names = {_env_name(key): key for key in _ENV_KINDS}
    for key in _section_keys("limits"):
        names.setdefault(_env_name(key), f"limits.{key}")
    return names


# --------------------------------------------------------------------------- origins


@attrs.frozen
class _Origin:
    """One source of values: how it is named in ``sources`` and in messages."""

    label: str  # for RuntimeConfig.sources
    where: str  # for ConfigError.origin
    rank: int  # precedence: a higher rank wins
    path: Path | None = None
    variable: str | None = None
    hint: str | None = None
    text: str | None = None  # a file's text, to find a key's line


_DEFAULTS = _Origin("default", "defaults", 0, hint="This is a bug in subagents: please report it.")
_RANK_USER, _RANK_PROJECT, _RANK_ENV, _RANK_CODE = 1, 2, 3, 4


def _file_origin(path: Path, rank: int, text: str | None = None) -> _Origin:
    return _Origin(
        str(path),
        str(path),
        rank,
        path=path,
        hint=f"Fix it in {path}, or remove it to use the default.",
        text=text,
    )


def _env_origin(variable: str) -> _Origin:
    return _Origin(
        f"env {variable}",
        f"environment variable {variable}",
        _RANK_ENV,
        variable=variable,
        hint=f"Fix or unset {variable}.",
    )


_CODE = _Origin(
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


def _find_line(text: str | None, key: str) -> int | None:
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


# --------------------------------------------------------------------------- unknown keys


def _unknown_key(origin: _Origin, key: str, valid: Iterable[str], where: str) -> ConfigError:
    """The error for a key that is not a setting, naming the closest valid key."""
    valid = tuple(valid)
    name = key.rsplit(".", 1)[-1]
    suggestion = None
    if "." not in key:  # a section's key written at the top level
        suggestion = next(
            (f"{section}.{name}" for section in _SECTIONS if name in _section_keys(section)),
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
        line=_find_line(origin.text, key),
        hint=hint,
    )


def _shape_error(origin: _Origin, key: str, expected: str, value: Any) -> ConfigError:
    return ConfigError(
        origin.where,
        key,
        expected,
        _show(value),
        path=origin.path,
        variable=origin.variable,
        line=_find_line(origin.text, key),
        hint=origin.hint,
    )


# --------------------------------------------------------------------------- environment text

_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off"})


def _parse_env(kind: _EnvKind, text: str) -> Any:
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
            except ValueError:
                return text
        return [item.strip() for item in stripped.split(",") if item.strip()]
    return text


# --------------------------------------------------------------------------- loading

_Key: TypeAlias = tuple[str, str | None]  # (top key, key inside its table or None)


def _dotted(key: _Key) -> str:
    return key[0] if key[1] is None else f"{key[0]}.{key[1]}"


@attrs.define
class _Loader:
    """Collects the values of every source, highest last, with where each came from."""

    cwd: Path
    home: Path
    values: dict[_Key, Any] = attrs.Factory(dict)
    origins: dict[_Key, list[_Origin]] = attrs.Factory(dict)
    warnings: list[str] = attrs.Factory(list)

    def set(self, key: _Key, value: Any, origin: _Origin) -> None:
        self.values[key] = value
        self.origins.setdefault(key, []).append(origin)

    def origin_of(self, dotted: str) -> _Origin:
        """The source of a dotted key's value (of its table for a table entry)."""
        top, _, sub = dotted.partition(".")
        found = self.origins.get((top, sub or None)) or self.origins.get((top, None))
        return found[-1] if found else _DEFAULTS

    # ----------------------------------------------------------- sources

    def read_file(self, path: Path, rank: int) -> None:
        """Parse one TOML file and add its values."""
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ConfigError(
                str(path),
                "",
                "a readable UTF-8 text file",
                reason=f"cannot read the file: {detail}",
                path=path,
                hint="Fix the file's permissions or encoding, or remove it.",
            ) from None
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            match = re.search(r"line (\d+)", str(exc))
            raise ConfigError(
                str(path),
                "",
                "valid TOML",
                reason=f"invalid TOML: {exc}",
                path=path,
                line=int(match[1]) if match else None,
                hint="Fix the syntax at that line (see https://toml.io).",
            ) from None
        self.add_mapping(raw, _file_origin(path, rank, text), path.parent)

    def add_mapping(self, raw: Mapping[Any, Any], origin: _Origin, base: Path) -> None:
        """Check the keys of a file's (or the code's) mapping and add its values."""
        for top, value in raw.items():
            if not isinstance(top, str):
                raise _shape_error(origin, str(top), "a key written as text", top)
            if "." in top and origin is _CODE:  # overrides={"limits.max_threads": 4}
                head, _, rest = top.partition(".")
                self.add_mapping({head: {rest: value}}, origin, base)
            elif top in _SECTIONS:
                if not isinstance(value, Mapping):
                    raise _shape_error(origin, top, f"a table of settings ([{top}])", value)
                valid = _section_keys(top)
                for sub, item in value.items():
                    if sub not in valid:
                        raise _unknown_key(origin, f"{top}.{sub}", valid, f"in [{top}]")
                    self.set((top, sub), item, origin)
            elif top in _TABLES:
                self.add_table(top, value, origin)
            elif top in _SCALARS:
                if top == "state_dir":
                    value = self.resolve_path(value, base)
                self.set((top, None), value, origin)
            else:
                raise _unknown_key(origin, top, _TOP_KEYS, "at the top level")

    def add_table(self, top: str, value: Any, origin: _Origin) -> None:
        """Add ``model_aliases`` (entry by entry) or ``hooks`` (concatenated per event)."""
        if top == "model_aliases":
            if not isinstance(value, Mapping):
                raise _shape_error(origin, top, "a table of alias = model id", value)
            for alias, model in value.items():
                if not isinstance(alias, str) or not alias.strip():
                    raise _shape_error(origin, top, "aliases written as non-empty text", alias)
                self.set((top, alias.strip().lower()), model, origin)
            return
        if not isinstance(value, Mapping):
            raise _shape_error(origin, top, "a table of hook event = list of hook groups", value)
        for event, groups in value.items():
            name = str(event)
            try:
                _check_hook_event(name, groups)
            except ConfigError as exc:
                raise exc._moved(origin, line=_find_line(origin.text, exc.key)) from None
            earlier = self.values.get((top, name))
            if isinstance(groups, list | tuple) and isinstance(earlier, list):
                groups = [*earlier, *groups]
            elif isinstance(groups, list | tuple):
                groups = list(groups)
            # (an event subagents never fires is kept as written, and ignored)
            self.set((top, name), groups, origin)

    def read_env(self, env: Mapping[str, str]) -> None:
        """Add the ``SUBAGENTS_*`` variables; note the ones that name no setting."""
        known = env_variable_names()
        alias_prefix = _env_name("model_aliases") + "__"
        for name in sorted(env):
            text = env[name]
            if not name.startswith(ENV_PREFIX) or not isinstance(text, str) or not text.strip():
                continue
            origin = _env_origin(name)
            if name.startswith(alias_prefix) and len(name) > len(alias_prefix):
                self.set(("model_aliases", name[len(alias_prefix) :].lower()), text.strip(), origin)
                continue
            key = known.get(name)
            if key is None:
                short = {k.removeprefix(ENV_PREFIX): k for k in known}
                close = difflib.get_close_matches(name.removeprefix(ENV_PREFIX), short, n=1)
                suggestion = f"; did you mean {short[close[0]]}?" if close else ""
                self.warnings.append(
                    f"environment variable {name} is not a subagents setting{suggestion}"
                )
                continue
            kind = _ENV_KINDS[key]
            if kind == "json":
                try:
                    table = json.loads(text)
                except ValueError:
                    table = None
                if not isinstance(table, dict):
                    raise _shape_error(origin, key, "a JSON object", text)
                self.add_table(key, table, origin)
                continue
            top, _, sub = key.partition(".")
            value = _parse_env(kind, text)
            if top == "state_dir":
                value = self.resolve_path(value, self.cwd)
            self.set_from_env((top, sub or None), value, origin)

    def set_from_env(self, key: _Key, value: Any, origin: _Origin) -> None:
        """Set a key from a variable, refusing two variables that disagree on it."""
        earlier = self.origins.get(key, [])
        if earlier and earlier[-1].variable is not None and self.values[key] != value:
            other = earlier[-1].variable
            raise ConfigError(
                origin.where,
                _dotted(key),
                f"the same value as {other}, which sets the same key",
                _show(value),
                variable=origin.variable,
                hint=f"Unset {origin.variable} or {other}.",
            )
        self.set(key, value, origin)

    def resolve_path(self, value: Any, base: Path) -> Any:
        """A path from a source: ``~`` is the home folder; a relative path is below ``base``."""
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value.strip():
            return value
        if value == "~":
            return str(self.home)
        if value.startswith(("~/", "~" + os.sep)):
            return str(self.home / value[2:])
        path = Path(value)
        return str(path if path.is_absolute() else base / path)

    # ----------------------------------------------------------- the result

    def build(self) -> RuntimeConfig:
        """Structure the merged values; report a wrong one where it was written."""
        nested: dict[str, Any] = {}
        for (top, sub), value in self.values.items():
            if sub is None:
                nested[top] = value
            else:
                nested.setdefault(top, {})[sub] = value
        try:
            config = _CONVERTER.structure(nested, RuntimeConfig)
        except (ClassValidationError, ConfigError) as exc:
            raise self.locate(exc) from None
        sources = {}
        for dotted in config.flat():
            top, _, sub = dotted.partition(".")
            found = self.origins.get((top, sub or None))
            if not found:
                sources[dotted] = "default"
            elif top == "hooks":  # concatenated: every source that added hooks, lowest first
                sources[dotted] = " + ".join(dict.fromkeys(o.label for o in found))
            else:
                sources[dotted] = found[-1].label
        return attrs.evolve(config, sources=sources, warnings=tuple(self.warnings))

    def locate(self, exc: BaseException) -> ConfigError:
        """The :class:`ConfigError` for a structuring failure, naming the value's source."""
        path, leaf = _first_error(exc)
        if isinstance(leaf, ConfigError):
            key = leaf.key
            origin = self.origin_of(key)
            # A cross-field check: blame the key set by the highest source.
            for other in leaf.related:
                if self.origin_of(other).rank > origin.rank:
                    key, origin = other, self.origin_of(other)
            error = leaf
            if key != leaf.key:
                error = ConfigError(
                    leaf.origin,
                    key,
                    leaf.expected,
                    leaf.got,
                    reason=f"makes {leaf.key} invalid: expected {leaf.expected}, got {leaf.got}",
                )
            return error._moved(origin, key=key, line=_find_line(origin.text, key))
        key = ".".join(path)
        origin = self.origin_of(key)
        if isinstance(leaf, ForbiddenExtraKeysError):  # the loader checks keys first; kept as a net
            extra = sorted(leaf.extra_fields)[0]
            if key in _SECTIONS:
                return _unknown_key(origin, f"{key}.{extra}", _section_keys(key), f"in [{key}]")
            return _unknown_key(origin, extra, _TOP_KEYS, "at the top level")
        return ConfigError(
            origin.where,
            key,
            "a valid value",
            reason=f"cannot be read: {leaf}",
            path=origin.path,
            variable=origin.variable,
            hint=origin.hint,
        )


def _first_error(
    exc: BaseException, path: tuple[str, ...] = ()
) -> tuple[tuple[str, ...], BaseException]:
    """The first leaf error inside cattrs' nested validation errors, with its key path."""
    if isinstance(exc, ClassValidationError | IterableValidationError) and exc.exceptions:
        inner = exc.exceptions[0]
        step = path
        for note in getattr(inner, "__notes__", ()):
            if isinstance(note, AttributeValidationNote):
                step = (*path, note.name)
            elif isinstance(note, IterableValidationNote):
                step = (*path, str(note.index))
        return _first_error(inner, step)
    return path, exc


def _as_is(value: Any, _: Any) -> Any:
    return value


def _make_converter() -> cattrs.Converter:
    """A converter that builds the nested attrs classes and rejects unknown keys.

    Leaf values pass through unchanged: the classes' own converters and checks
    decide what is acceptable, so a value is judged the same way whether it
    came from a file, the environment or code.
    """
    converter = cattrs.Converter(forbid_extra_keys=True)
    for leaf in (int, float, str, bool, Path):
        converter.register_structure_hook(leaf, _as_is)
    converter.register_structure_hook_func(lambda t: not attrs.has(t), _as_is)
    return converter


_CONVERTER: Final = _make_converter()


def find_project_config(cwd: Path) -> Path | None:
    """The nearest ``subagents.toml`` from ``cwd`` upward, or ``None``.

    The search stops after the first folder holding ``.git`` (a repository's
    root) or at the filesystem root.
    """
    start = Path(os.path.abspath(cwd))
    for folder in (start, *start.parents):
        candidate = folder / PROJECT_CONFIG_NAME
        if candidate.is_file():
            return candidate
        if (folder / ".git").exists():
            return None
    return None


def load_config(
    *,
    cwd: Path,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> RuntimeConfig:
    """The configuration in force in ``cwd``: defaults < user file < project file < env < code.

    ``home`` defaults to the user's home folder and ``env`` to ``os.environ``;
    ``overrides`` is shaped like a file (``{"limits": {"max_threads": 4}}``),
    and its keys may also be dotted (``{"limits.max_threads": 4}``). A wrong
    value anywhere raises :class:`ConfigError`.
    """
    env = os.environ if env is None else env
    if home is None:
        try:
            home = Path.home()
        except RuntimeError:
            raise ConfigError(
                "defaults",
                "state_dir",
                "a home folder to hold ~/.subagents",
                reason="the home folder is unknown",
                hint="Set HOME, or pass home= to load_config.",
            ) from None
    loader = _Loader(cwd=Path(os.path.abspath(cwd)), home=Path(os.path.abspath(home)))
    loader.set(("state_dir", None), str(loader.home / ".subagents" / "state"), _DEFAULTS)
    user_file = loader.home / USER_CONFIG_PATH
    if user_file.exists():
        loader.read_file(user_file, _RANK_USER)
    project_file = find_project_config(loader.cwd)
    if project_file is not None:
        loader.read_file(project_file, _RANK_PROJECT)
    loader.read_env(env)
    if overrides is not None:
        if not isinstance(overrides, Mapping):
            raise _shape_error(_CODE, "overrides", "a mapping of settings", overrides)
        loader.add_mapping(overrides, _CODE, loader.cwd)
    return loader.build()
