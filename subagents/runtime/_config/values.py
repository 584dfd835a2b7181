"""The configuration values: :class:`RuntimeConfig` and its frozen sections, and their schema.

:class:`RuntimeConfig` is a frozen value made of small frozen sections
(:class:`LimitsConfig`, :class:`TranscriptsConfig`, :class:`LoggingConfig`)
plus a few top-level keys; built directly, a wrong value raises
:class:`~subagents.runtime.ConfigError`. The schema (which keys are sections,
free tables or scalars) is derived from these classes for the loader.
"""

from __future__ import annotations

import math
import os
import types
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final, Literal, cast

import attrs

from subagents.actors import SupervisorConfig, is_count
from subagents.agents import ModelAliases
from subagents.runtime._config.checks import (
    check_aliases,
    check_hooks,
    check_mcp_servers,
    check_model,
    check_nicknames,
    check_passthrough,
    check_sources,
    check_state_dir,
    choice_check,
    count_check,
    fail,
    flag_check,
    is_number,
    plain_value,
    seconds_check,
    to_float,
    to_frozenset,
    to_lower,
    to_mapping,
    to_names,
    to_path,
)
from subagents.runtime._config.defaults import (
    API_KEY_ENV,
    COLLECTOR_POLICIES,
    DEFAULT_CANCEL_TIMEOUT,
    DEFAULT_CLOSE_GRACE_PERIOD,
    DEFAULT_COLLECTOR_POLICY,
    DEFAULT_COLLECTOR_THRESHOLD,
    DEFAULT_ENV_PASSTHROUGH,
    DEFAULT_FREEZE_EVERY,
    DEFAULT_GRACE_PERIOD_SECONDS,
    DEFAULT_MAILBOX_SIZE,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_THREADS,
    DEFAULT_MAX_TIME_SECONDS,
    DEFAULT_MAX_TURNS,
    DEFAULT_RETENTION_DAYS,
    DEFAULT_STATE_DIR,
    DEFAULT_TRUSTED_SOURCES,
    DEFAULT_WAIT_MAX_SECONDS,
    DEFAULT_WAIT_MIN_SECONDS,
    DEFAULT_WAIT_SECONDS,
    LOG_LEVELS,
    MAX_COLLECTOR_THRESHOLD,
    CollectorPolicy,
    DiskErrorPolicy,
    LogLevel,
    ProviderChoice,
)
from subagents.runtime._config.limits import Limits
from subagents.runtime._config.trust import ProjectTrust, untrusted_folder_reason
from subagents.runtime._hooks.values import Hook, hooks_from_settings
from subagents.tools import McpServerConfig, TrustPolicy, mcp_server_config

__all__ = [
    "CollectorConfig",
    "LimitsConfig",
    "LoggingConfig",
    "RuntimeConfig",
    "TranscriptsConfig",
    "WebConfig",
]

_PROVIDERS: Final = typing.get_args(ProviderChoice)
_DISK_ERROR_POLICIES: Final = typing.get_args(DiskErrorPolicy)


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
        default=DEFAULT_MAX_THREADS, validator=count_check("limits.max_threads", 1)
    )
    max_depth: int = attrs.field(
        default=DEFAULT_MAX_DEPTH, validator=count_check("limits.max_depth", 0)
    )
    mailbox_size: int = attrs.field(
        default=DEFAULT_MAILBOX_SIZE, validator=count_check("limits.mailbox_size", 1)
    )
    close_grace_period: float = attrs.field(
        default=DEFAULT_CLOSE_GRACE_PERIOD,
        converter=to_float,
        validator=seconds_check("limits.close_grace_period"),
    )
    cancel_timeout: float = attrs.field(
        default=DEFAULT_CANCEL_TIMEOUT,
        converter=to_float,
        validator=seconds_check("limits.cancel_timeout"),
    )
    wait_default_seconds: float = attrs.field(
        default=DEFAULT_WAIT_SECONDS,
        converter=to_float,
        validator=seconds_check("limits.wait_default_seconds"),
    )
    wait_min_seconds: float = attrs.field(
        default=DEFAULT_WAIT_MIN_SECONDS,
        converter=to_float,
        validator=seconds_check("limits.wait_min_seconds"),
    )
    wait_max_seconds: float = attrs.field(
        default=DEFAULT_WAIT_MAX_SECONDS,
        converter=to_float,
        validator=seconds_check("limits.wait_max_seconds"),
    )
    max_turns: int = attrs.field(
        default=DEFAULT_MAX_TURNS, validator=count_check("limits.max_turns", 1)
    )
    max_time_seconds: float = attrs.field(
        default=DEFAULT_MAX_TIME_SECONDS,
        converter=to_float,
        validator=seconds_check("limits.max_time_seconds"),
    )
    grace_period_seconds: float = attrs.field(
        default=DEFAULT_GRACE_PERIOD_SECONDS,
        converter=to_float,
        validator=seconds_check("limits.grace_period_seconds"),
    )

    def __attrs_post_init__(self) -> None:
        low, default, high = self.wait_min_seconds, self.wait_default_seconds, self.wait_max_seconds
        keys = ("limits.wait_min_seconds", "limits.wait_default_seconds", "limits.wait_max_seconds")
        if low > high:
            fail(
                "limits.wait_max_seconds",
                f"a number of seconds no smaller than wait_min_seconds ({low:g})",
                high,
                related=(keys[0],),
            )
        if not low <= default <= high:
            fail(
                "limits.wait_default_seconds",
                f"a number of seconds between wait_min_seconds ({low:g}) "
                f"and wait_max_seconds ({high:g})",
                default,
                related=(keys[0], keys[2]),
            )

    def clamp_wait(self, timeout: float | None) -> float:
        """The ``wait`` tool's effective timeout for the ``timeout`` a model asked for."""
        if timeout is None or not is_number(timeout) or math.isnan(timeout):
            return self.wait_default_seconds
        return min(max(float(timeout), self.wait_min_seconds), self.wait_max_seconds)


@attrs.frozen(kw_only=True)
class TranscriptsConfig:
    """Whether transcripts are written, how long they are kept, and what a write error does.

    ``raise_file_limit`` raises the process's soft open-file limit to its hard
    one (at most 65,536) while a runtime is open, since each open agent holds
    its transcript open (see ``FileLimitGuard``), and puts it back when the last
    such runtime closes.
    """

    enabled: bool = attrs.field(default=True, validator=flag_check("transcripts.enabled"))
    retention_days: int = attrs.field(
        default=DEFAULT_RETENTION_DAYS, validator=count_check("transcripts.retention_days", 1)
    )
    on_disk_error: DiskErrorPolicy = attrs.field(
        default="memory",
        converter=to_lower,
        validator=choice_check("transcripts.on_disk_error", _DISK_ERROR_POLICIES),
    )
    raise_file_limit: bool = attrs.field(
        default=True, validator=flag_check("transcripts.raise_file_limit")
    )


@attrs.frozen(kw_only=True)
class WebConfig:
    """What the local ``WebFetch`` may reach.

    ``allow_private_addresses`` lets it connect to loopback, private, link-local
    and other non-global addresses (a local docs server); off, such hosts are
    refused (SSRF). A project file cannot set it (``UNTRUSTED_PROJECT_KEYS``).
    """

    allow_private_addresses: bool = attrs.field(
        default=False, validator=flag_check("web.allow_private_addresses")
    )


def _threshold_check(_: Any, __: Any, value: Any) -> None:
    if not is_count(value, 1) or value > MAX_COLLECTOR_THRESHOLD:
        fail(
            "collector.threshold",
            f"a whole number from 1 to {MAX_COLLECTOR_THRESHOLD:,}",
            value,
        )


@attrs.frozen(kw_only=True)
class CollectorConfig:
    """What a runtime does to Python's cycle collector while it is open: ``relaxed`` unless
    told otherwise.

    With thousands of agents alive, each full collection walks every agent's
    tasks, frames and scopes: at 10,000 agents it took about half the run.
    ``relaxed`` (the default) raises the youngest generation's threshold to
    ``threshold`` while the runtime is open (never lowers it, nor switches
    automatic collection back on where the application set it to 0).
    ``default`` leaves the interpreter's settings alone. ``freeze`` does what
    ``relaxed`` does and also calls ``gc.freeze()`` after every
    ``freeze_every`` spawns, so the objects of agents already started leave
    the collector's generations; they go back at the runtime's close
    (``gc.unfreeze()``), and cyclic garbage among them is collected only then.
    The collector is the process's: a runtime that applies a policy restores
    the thresholds it found when the last such runtime of the process closes
    (unless the application set others meanwhile).
    """

    policy: CollectorPolicy = attrs.field(
        default=DEFAULT_COLLECTOR_POLICY,
        converter=to_lower,
        validator=choice_check("collector.policy", COLLECTOR_POLICIES),
    )
    threshold: int = attrs.field(default=DEFAULT_COLLECTOR_THRESHOLD, validator=_threshold_check)
    freeze_every: int = attrs.field(
        default=DEFAULT_FREEZE_EVERY, validator=count_check("collector.freeze_every", 1)
    )


@attrs.frozen(kw_only=True)
class LoggingConfig:
    """Where log lines go: a JSON-lines file under the state folder, and stderr.

    ``file_level`` filters the file, ``stderr_level`` the readable lines on
    stderr (``warning``; ``info`` with ``-v``, ``debug`` with ``-vv``).
    """

    json_file: bool = attrs.field(default=True, validator=flag_check("logging.json_file"))
    file_level: LogLevel = attrs.field(
        default="info", converter=to_lower, validator=choice_check("logging.file_level", LOG_LEVELS)
    )
    stderr_level: LogLevel = attrs.field(
        default="warning",
        converter=to_lower,
        validator=choice_check("logging.stderr_level", LOG_LEVELS),
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
    ``warnings`` lists environment variables that name no setting, and
    settings files that were not read (a directory, a FIFO...), one line each.
    ``project`` says whether the project folder was trusted and which of its
    settings were left out because it was not (``None`` when built directly:
    code is trusted).
    """

    limits: LimitsConfig = attrs.field(factory=LimitsConfig)
    state_dir: Path = attrs.field(
        factory=_default_state_dir, converter=to_path, validator=check_state_dir
    )
    provider: ProviderChoice = attrs.field(
        default="auto", converter=to_lower, validator=choice_check("provider", _PROVIDERS)
    )
    model: str | None = attrs.field(default=None, validator=check_model)
    model_aliases: Mapping[str, str] = attrs.field(
        factory=dict, converter=to_mapping, validator=check_aliases, hash=False
    )
    hooks: Mapping[str, Any] = attrs.field(
        factory=dict, converter=to_mapping, validator=check_hooks, hash=False
    )
    mcp_servers: Mapping[str, Any] = attrs.field(
        factory=dict, converter=to_mapping, validator=check_mcp_servers, hash=False
    )
    trusted_sources: frozenset[str] = attrs.field(
        default=DEFAULT_TRUSTED_SOURCES, converter=to_frozenset, validator=check_sources
    )
    nicknames: tuple[str, ...] | None = attrs.field(
        default=None, converter=to_names, validator=check_nicknames
    )
    env_passthrough: frozenset[str] = attrs.field(
        default=DEFAULT_ENV_PASSTHROUGH, converter=to_frozenset, validator=check_passthrough
    )
    transcripts: TranscriptsConfig = attrs.field(factory=TranscriptsConfig)
    web: WebConfig = attrs.field(factory=WebConfig)
    collector: CollectorConfig = attrs.field(factory=CollectorConfig)
    logging: LoggingConfig = attrs.field(factory=LoggingConfig)
    sources: Mapping[str, str] = attrs.field(
        factory=dict, converter=_read_only, eq=False, hash=False, repr=False
    )
    warnings: tuple[str, ...] = attrs.field(
        default=(), converter=_texts, eq=False, hash=False, repr=False
    )
    project: ProjectTrust | None = attrs.field(default=None, eq=False, hash=False, repr=False)

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
        """Which definition sources may be given tools that write or execute.

        ``trusted_sources``, less the project's own definitions while its
        folder is not trusted (:attr:`project`): a repository's agents do not
        write or execute until the user runs ``subagents trust``.
        """
        withheld: dict[str, str] = {}
        if self.project is not None and not self.project.trusted:
            withheld["project"] = untrusted_folder_reason(self.project.folder)
        policy: TrustPolicy = TrustPolicy(cast(Any, self.trusted_sources), withheld)
        return policy

    def mcp_server_configs(self) -> tuple[McpServerConfig, ...]:
        """The ``[mcp_servers.NAME]`` servers (Codex's shape), checked when the config was made."""
        return tuple(mcp_server_config(name, raw) for name, raw in self.mcp_servers.items())

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
            if field.name in ("sources", "warnings", "project"):
                continue
            value = getattr(self, field.name)
            if field.name in SECTIONS:
                for sub in attrs.fields(type(value)):
                    out[f"{field.name}.{sub.name}"] = plain_value(getattr(value, sub.name))
            elif field.name in TABLES:
                for name, item in value.items():
                    out[f"{field.name}.{name}"] = plain_value(item)
            else:
                out[field.name] = plain_value(value)
        return out


# --------------------------------------------------------------------------- the schema

SECTIONS: Final[Mapping[str, type]] = types.MappingProxyType(
    {
        "limits": LimitsConfig,
        "transcripts": TranscriptsConfig,
        "web": WebConfig,
        "collector": CollectorConfig,
        "logging": LoggingConfig,
    }
)
#: Free tables: merged entry by entry (aliases) or concatenated per entry (hooks).
TABLES: Final = ("model_aliases", "hooks", "mcp_servers")
SCALARS: Final = (
    "state_dir",
    "provider",
    "model",
    "trusted_sources",
    "nicknames",
    "env_passthrough",
)
TOP_KEYS: Final = (*SCALARS, *TABLES, *SECTIONS)


def section_keys(section: str) -> tuple[str, ...]:
    return tuple(f.name for f in attrs.fields(SECTIONS[section]))
