"""The runtime's defaults, the names of its files and variables, and its setting value types.

Every default of :class:`~subagents.runtime.RuntimeConfig`, of a run's
:class:`~subagents.runtime.Limits` and of the providers is written here, once,
so that the config classes, the loop, the providers and the documentation
agree. The kernel's defaults are read from
:class:`~subagents.actors.SupervisorConfig` and the ``wait`` tool's bounds from
:class:`~subagents.tools.WaitBounds`, never retyped.

A subsystem's own bounds are written once beside the code they bound: a hook's
timeout and output cap and the stop-hook grace and blocks in ``_hooks`` (which
``_config`` reads to check hook settings, so it cannot read this module back
without an import cycle between the two folders), a transcript writer's buffer
in ``_transcripts``, the progress tracker's caps in ``_progress``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal, TypeAlias

from subagents.actors import SupervisorConfig
from subagents.tools import TrustPolicy, WaitBounds

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "DEFAULT_GRACE_PERIOD_SECONDS",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_TIME_SECONDS",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_MODEL",
    "DEFAULT_REQUEST_TIMEOUT",
    "INBOX_CAPACITY",
    "MAX_ERROR_CHARS",
    "MODEL_ENV",
    "DEFAULT_CANCEL_TIMEOUT",
    "DEFAULT_CLOSE_GRACE_PERIOD",
    "COLLECTOR_POLICIES",
    "DEFAULT_COLLECTOR_POLICY",
    "DEFAULT_COLLECTOR_THRESHOLD",
    "DEFAULT_ENV_PASSTHROUGH",
    "DEFAULT_FREEZE_EVERY",
    "MAX_COLLECTOR_THRESHOLD",
    "DEFAULT_MAILBOX_SIZE",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_THREADS",
    "DEFAULT_RETENTION_DAYS",
    "DEFAULT_STATE_DIR",
    "DEFAULT_TRUSTED_SOURCES",
    "DEFAULT_WAIT_MAX_SECONDS",
    "DEFAULT_WAIT_MIN_SECONDS",
    "DEFAULT_WAIT_SECONDS",
    "CollectorPolicy",
    "DiskErrorPolicy",
    "ENV_PREFIX",
    "LOG_LEVELS",
    "LogLevel",
    "PROJECT_CONFIG_NAME",
    "CONFIG_FILE_MAX_BYTES",
    "TRUST_STORE_MAX_BYTES",
    "TRUST_STORE_PATH",
    "ProviderChoice",
    "USER_CONFIG_PATH",
    "stderr_level_for",
]

#: The kernel's defaults, read from :class:`~subagents.actors.SupervisorConfig`
#: (where each is written, with its validator) and never retyped here.
_KERNEL: Final = SupervisorConfig()
#: How many agents may be live at once (top-level ones included).
DEFAULT_MAX_THREADS: Final = _KERNEL.max_threads
#: How deep below the lead agents may spawn (1: subagents do not spawn subagents).
DEFAULT_MAX_DEPTH: Final = _KERNEL.max_depth
#: Unread messages an agent's mailbox holds before senders wait.
DEFAULT_MAILBOX_SIZE: Final = _KERNEL.mailbox_size
#: Seconds a closed agent gets to stop by itself before it is cancelled.
DEFAULT_CLOSE_GRACE_PERIOD: Final = _KERNEL.close_grace_period
#: Seconds a cancelled agent may take to unwind.
DEFAULT_CANCEL_TIMEOUT: Final = _KERNEL.cancel_timeout
#: The ``wait`` tool's timeout when the model gives none, and the bounds it is
#: clamped to: read from :class:`~subagents.tools.WaitBounds`, where they are
#: written, as the kernel's are read from ``SupervisorConfig``.
_WAIT: Final = WaitBounds()
DEFAULT_WAIT_SECONDS: Final = _WAIT.default_seconds
DEFAULT_WAIT_MIN_SECONDS: Final = _WAIT.min_seconds
DEFAULT_WAIT_MAX_SECONDS: Final = _WAIT.max_seconds
#: Where transcripts and logs go, below the home folder.
DEFAULT_STATE_DIR: Final = Path("~/.subagents/state")
#: Definition sources whose agents may be given tools that write or execute:
#: every one (trust follows who wrote the file; a repository's own definitions
#: are withheld while its folder is not trusted), read from
#: :class:`~subagents.tools.TrustPolicy`, where it is written.
DEFAULT_TRUSTED_SOURCES: Final = TrustPolicy().trusted_sources
#: Secret environment variables still given to Bash and command hooks (none: all are removed).
DEFAULT_ENV_PASSTHROUGH: Final = frozenset[str]()
#: Transcripts older than this many days are cleaned.
DEFAULT_RETENTION_DAYS: Final = 30

#: The cycle collector policies a runtime may apply while it is open (``collector.policy``).
COLLECTOR_POLICIES: Final = ("default", "relaxed", "freeze")
#: The policy a runtime applies unless told otherwise: its agents stay open after their runs,
#: each with its tasks, scopes and conversation, and CPython's young-generation threshold
#: (700) makes the collector walk them again and again. Measured (2026-11-28, transcripts
#: on): 1,000 agents x 10 turns at zero latency 68 to 58 us of CPU a turn; 10,000 agents x
#: 10 turns of 100 ms, 13.96x to 9.79x the ideal time. ``default`` leaves Python's settings.
DEFAULT_COLLECTOR_POLICY: Final = "relaxed"
#: The youngest generation's threshold under the ``relaxed`` and ``freeze`` policies:
#: allocations (less deallocations) between two collections, against CPython's 700 (2,000
#: from 3.13). Measured at 10,000 agents, 50,000 takes most of the collector's share away.
DEFAULT_COLLECTOR_THRESHOLD: Final = 50_000
#: The highest threshold accepted: past it a young generation holds too much garbage.
MAX_COLLECTOR_THRESHOLD: Final = 10_000_000
#: Spawns between two ``gc.freeze()`` calls under the ``freeze`` policy.
DEFAULT_FREEZE_EVERY: Final = 1_000

#: Turns a run may take before its grace turn (the seeds' default).
DEFAULT_MAX_TURNS: Final = 50
#: Wall-clock seconds a run may take before its grace turn (the seeds' default).
DEFAULT_MAX_TIME_SECONDS: Final = 300.0
#: Seconds of the one last turn after a timeout or the turn limit.
DEFAULT_GRACE_PERIOD_SECONDS: Final = 60.0
#: ``max_tokens`` of each model call.
DEFAULT_MAX_TOKENS: Final = 8192
#: The model used when nothing names one and there is no parent to inherit from.
DEFAULT_MODEL: Final = "sonnet"

#: Overrides every other model choice for every agent.
MODEL_ENV: Final = "SUBAGENTS_MODEL"
#: Selects :class:`AnthropicProvider` by default when set.
API_KEY_ENV: Final = "ANTHROPIC_API_KEY"
BASE_URL_ENV: Final = "ANTHROPIC_BASE_URL"

#: Retries the SDK makes for retryable failures (429, 5xx, 529, connection errors).
DEFAULT_MAX_RETRIES: Final = 2
#: Seconds a whole model request may take (the SDK's read timeout applies per read).
DEFAULT_REQUEST_TIMEOUT: Final = 600.0

#: Follow-up inputs an agent holds while a run is under way.
INBOX_CAPACITY: Final = 16

#: Longest error text kept in a result or a tool error.
MAX_ERROR_CHARS: Final = 4000

#: The user file, relative to the home folder.
USER_CONFIG_PATH: Final = Path(".subagents/config.toml")
#: The project file's name, looked for from the working folder upward.
PROJECT_CONFIG_NAME: Final = "subagents.toml"
#: The most of a settings file read: a bigger one (or ``/dev/zero``) is reported, not read on.
CONFIG_FILE_MAX_BYTES: Final = 1 << 20
#: The folders the user trusts (``subagents trust``), relative to the home folder.
TRUST_STORE_PATH: Final = Path(".subagents/trusted-folders.json")
#: The most of the trust store read: a bigger one is reported as corrupt.
TRUST_STORE_MAX_BYTES: Final = 4 << 20
#: The prefix of the environment variables read by :func:`load_config`.
ENV_PREFIX: Final = "SUBAGENTS_"

#: Log levels, most verbose first.
LOG_LEVELS: Final = ("debug", "info", "warning", "error", "critical")

ProviderChoice: TypeAlias = Literal["auto", "scripted", "anthropic"]
LogLevel: TypeAlias = Literal["debug", "info", "warning", "error", "critical"]
CollectorPolicy: TypeAlias = Literal["default", "relaxed", "freeze"]
"""What a runtime does to Python's cycle collector while it is open (see ``CollectorConfig``)."""
DiskErrorPolicy: TypeAlias = Literal["memory", "stop"]
"""What a transcript writer does on a disk error: keep lines in memory and go on, or raise."""


def stderr_level_for(verbosity: int, default: LogLevel = "warning") -> LogLevel:
    """The stderr log level for ``-v`` flags counted ``verbosity`` times.

    0 keeps ``default``; ``-v`` is ``info``; ``-vv`` (or more) is ``debug``.
    """
    if verbosity <= 0:
        return default
    return "info" if verbosity == 1 else "debug"
