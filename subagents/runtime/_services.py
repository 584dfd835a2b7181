"""What every agent of one runtime shares: configuration, provider, hooks, log, tools.

One :class:`Services` value is made by :func:`~subagents.runtime.open_runtime`
and handed to each :class:`~subagents.runtime._agent_record.AgentRecord`, so a
record reaches the runtime's parts through named fields rather than through the
runtime object itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

import attrs

from subagents.runtime._collector import CollectorGuard
from subagents.runtime._config.limits import Limits
from subagents.runtime._config.values import CollectorConfig, RuntimeConfig
from subagents.runtime._hooks.runner import HookRunner
from subagents.runtime._logging import RuntimeLog
from subagents.runtime._progress.tracker import ProgressTracker, agents_to_keep
from subagents.runtime._providers.base import Provider
from subagents.runtime._tool_selection import SelectionCache
from subagents.runtime._transcripts.flusher import TranscriptFlusher
from subagents.runtime._transcripts.records import transcripts_folder
from subagents.teams import BoardSeats, TeamDirectory
from subagents.tools import Approver, McpServers, SecretRedactor, Tool, TrustPolicy

if TYPE_CHECKING:
    from subagents.agents import AgentDefinition
    from subagents.runtime._agent_record import AgentRecord

__all__ = ["Services"]

#: Agent types whose run limits a runtime keeps (emptied when full).
_MAX_LIMITS: Final = 256


@attrs.define(kw_only=True, eq=False)
class Services:
    """The runtime's shared parts, and its table of agents by id.

    ``tools`` are every tool an agent may be given (the built-ins and the
    lifecycle tools bound to the runtime), before each agent's filter;
    ``root_approver`` answers the approval requests that climb past the
    top-level agents (``None``: they are denied); ``redactor`` masks the
    values of the secret variables of ``os.environ`` and ``env`` in every tool
    result and hook output. ``mcp`` are the runtime's MCP servers, shared by
    its agents (each started on first use). ``seats`` says which task board
    each team member works on, for the task tools (``TaskCreate``...).
    ``teams`` holds the teams open now.
    """

    config: RuntimeConfig
    session_id: str
    cwd: Path
    home: Path
    env: Mapping[str, str]
    provider: Provider
    hooks: HookRunner
    log: RuntimeLog
    tools: tuple[Tool, ...] = ()
    trust: TrustPolicy = attrs.field(factory=TrustPolicy)
    root_approver: Approver | None = None
    redactor: SecretRedactor = attrs.field(factory=SecretRedactor.from_environ)
    records: dict[str, AgentRecord] = attrs.field(factory=dict)
    mcp: McpServers = attrs.field(factory=lambda: McpServers({}))
    teams: TeamDirectory = attrs.field(factory=TeamDirectory)
    seats: BoardSeats = attrs.field(factory=BoardSeats)
    #: The tool filter's selections, reused by agents of one type at one position.
    selections: SelectionCache = attrs.field(factory=SelectionCache)
    #: Writes the transcript lines held back in a scheduler pass at its end (run by open_runtime).
    flusher: TranscriptFlusher = attrs.field(factory=TranscriptFlusher)
    #: The ``[collector]`` policy, applied by open_runtime while the runtime is open.
    collector: CollectorGuard = attrs.field(factory=lambda: CollectorGuard(CollectorConfig()))
    #: The runtime's progress tracker: each agent's loop tells it its turns directly
    #: (a ``ProgressFeed``), the runtime's follower its spawns and status changes. It
    #: keeps every live agent, however many ``max_threads`` lets run (agents_to_keep).
    tracker: ProgressTracker = attrs.field()
    # Each definition's limits, by identity (the definition kept, so an id is never reused).
    _limits: dict[int, tuple[AgentDefinition, Limits]] = attrs.field(factory=dict, init=False)
    #: The session's transcripts folder, as a string: each spawn names its file in it
    #: (empty when transcripts are off).
    transcripts_folder: str = attrs.field(init=False)

    @tracker.default
    def _tracker(self) -> ProgressTracker:
        limits = self.config.limits
        return ProgressTracker(max_agents=agents_to_keep(limits.max_threads, limits.max_depth))

    @transcripts_folder.default
    def _transcripts_folder(self) -> str:
        if not self.config.transcripts.enabled:
            return ""
        return transcripts_folder(self.config.state_dir, self.session_id)

    def limits_for(self, definition: AgentDefinition) -> Limits:
        """The run limits of an agent of ``definition``: its own, unset ones from the
        configuration's. Made once per agent type and shared (a value), not at every spawn."""
        entry = self._limits.get(id(definition))
        if entry is not None and entry[0] is definition:
            return entry[1]
        limits = Limits.for_definition(definition, defaults=self.config.run_limits())
        if len(self._limits) >= _MAX_LIMITS:
            self._limits.clear()
        self._limits[id(definition)] = (definition, limits)
        return limits

    def told(self, agent_id: str, status: str) -> bool:
        """Whether agent ``agent_id``'s "run finished" line already gave its activation's end
        ``status`` (the status log's question, once per end; ``False`` for an actor that is
        no agent of this runtime)."""
        record = self.records.get(agent_id)
        return record is not None and record.ledger.told(status)

    @property
    def transcripts_enabled(self) -> bool:
        """Whether agents write transcripts."""
        return self.config.transcripts.enabled
