"""The lifecycle tools' view of the runtime: every call made on behalf of the calling agent.

:class:`RuntimeHost` implements :class:`~subagents.tools.AgentHost`. An agent
that calls ``spawn_agent`` or ``Task`` spawns a child of its own (one level
deeper, so the kernel's ``max_depth`` applies); ``wait``, ``send_input``,
``close_agent`` and ``TaskOutput`` go to the kernel through the runtime;
``resume_agent`` rebuilds a closed agent under its original parent when that
parent is open, else under the caller. Refusals are the kernel's errors
(limit, depth, unknown id, closed agent), ``UnknownAgentError`` for an unknown
type and :class:`SpawnNotAllowed` when the caller's spawn tools are scoped to
other types (``Agent(Explore, Plan)`` in its ``tools``); the tools turn them
into tool errors the model can act on.

A foreground ``Task`` waits for the child's run with :meth:`run_to_completion`;
while it waits, the child's completion notice is not also queued for the
caller, which gets the result as the tool's answer.

What a model may do is narrower than what the embedding program may:

- input to a busy agent whose mailbox is full waits at most
  :data:`~subagents.tools.SEND_INPUT_WAIT_SECONDS` for room, then fails with
  :class:`AgentBusy` (``send_input``, ``resume_agent`` and ``Task`` with
  ``resume`` of an open agent);
- ``resume_agent`` (and ``Task`` with ``resume``) brings back only agents of
  the runtime's session lineage (:mod:`subagents.runtime._lineage`), else
  :class:`ResumeNotAllowed`;
- an id the runtime does not hold but whose transcript exists (an agent of a
  process that has ended) is refused with :class:`AgentNotLoaded`, which says
  whether ``resume_agent`` brings it back; ``wait`` reports the same through
  :meth:`explain_not_found`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Final, TypeVar, final

from subagents.actors import AgentNotFound, Status, WaitResult, is_final
from subagents.runtime._exceptions import (
    AgentNotLoaded,
    ResumeNotAllowed,
    SpawnNotAllowed,
    TranscriptError,
)
from subagents.runtime._lineage import TranscriptSessions, read_sessions
from subagents.runtime._transcripts.load import find_transcript
from subagents.tools import (
    SEND_INPUT_WAIT_SECONDS,
    AgentReport,
    SpawnedAgent,
    ToolContext,
    WaitBounds,
)
from subagents.tools._lifecycle import DEFAULT_AGENT_TYPE

if TYPE_CHECKING:
    from subagents.runtime._agent_record import AgentRecord
    from subagents.runtime._runtime import Runtime

__all__ = ["RuntimeHost"]

_T = TypeVar("_T")

#: The tools that start agents, whose grant may be scoped to some agent types.
_STARTING_TOOLS: Final = frozenset({"spawn_agent", "Task", "Agent"})


@final
class RuntimeHost:
    """The :class:`~subagents.tools.AgentHost` of one runtime (see the module docstring)."""

    __slots__ = ("_runtime", "wait_bounds")

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        limits = runtime.config.limits
        self.wait_bounds = WaitBounds(
            default_seconds=limits.wait_default_seconds,
            min_seconds=limits.wait_min_seconds,
            max_seconds=limits.wait_max_seconds,
        )

    def __repr__(self) -> str:
        return f"<RuntimeHost of {self._runtime!r}>"

    async def spawn(
        self,
        caller: ToolContext,
        *,
        agent_type: str | None,
        prompt: str,
        description: str | None = None,
        model: str | None = None,
        fork_context: bool = False,
        background: bool = False,
    ) -> SpawnedAgent:
        """Spawn a child of the caller; ``fork_context=False`` leaves the definition's choice."""
        name = agent_type or DEFAULT_AGENT_TYPE
        self._check_scope(caller, name)
        record = await self._runtime._spawn(
            name,
            prompt,
            description=description,
            model=model,
            inputs=None,
            background=background,
            parent=caller.agent_id,
            fork_context=True if fork_context else None,
        )
        output = record.transcript_file
        return SpawnedAgent(
            record.agent_id,
            record.nickname,
            record.agent_type,
            output_file=str(output) if background and output is not None else None,
        )

    def _check_scope(self, caller: ToolContext, agent_type: str) -> None:
        """Refuse a type outside the caller's scoped grant (``Agent(a, b)``), if it has one."""
        record = self._runtime.services.records.get(caller.agent_id)
        if record is None or record.tools is None:
            return
        scopes = [d.scope for d in record.tools.decisions if d.kept and d.name in _STARTING_TOOLS]
        if not scopes or any(scope is None for scope in scopes):
            return
        allowed = tuple(dict.fromkeys(name for scope in scopes if scope for name in scope))
        if agent_type not in allowed:
            raise SpawnNotAllowed(agent_type, allowed)

    async def run_to_completion(
        self, caller: ToolContext, agent_id: str, *, timeout: float
    ) -> AgentReport:
        """Wait (at most ``timeout`` s, which may be ``inf``) for the run; report it."""
        record = self._known(self._runtime._record, agent_id)
        record.awaited = True
        try:
            await self._runtime._wait_run(agent_id, timeout)
        finally:
            # Final: its notice (read by the caller now or soon) is dropped once,
            # which clears the flag. Still running: the notice will be wanted.
            if not is_final(self._runtime.status(agent_id)):
                record.awaited = False
        return self._report(record)

    async def send_input(
        self, caller: ToolContext, agent_id: str, message: str, *, interrupt: bool = False
    ) -> Status:
        """Queue ``message`` (interrupting the agent's run if asked), waiting a bounded time."""
        return await self._guard(
            agent_id,
            lambda: self._runtime.send_input(
                agent_id, message, interrupt=interrupt, timeout=SEND_INPUT_WAIT_SECONDS
            ),
        )

    async def wait(
        self, caller: ToolContext, agent_ids: Sequence[str], *, timeout: float
    ) -> WaitResult:
        """Return once any of the agents is final, or at the deadline."""
        return await self._runtime.wait(agent_ids, timeout=timeout, mode="any")

    async def close(self, caller: ToolContext, agent_id: str) -> Status:
        """Close the agent and its open descendants; its previous status."""
        return await self._guard(agent_id, lambda: self._runtime.close(agent_id))

    async def resume(
        self, caller: ToolContext, agent_id: str, message: str | None = None
    ) -> Status:
        """Bring the agent back (under its original parent if open, else under the caller).

        An agent this runtime does not hold must belong to its session lineage.
        """
        runtime = self._runtime
        if not runtime._is_open(agent_id) and agent_id not in runtime.services.records:
            found = self._transcript_sessions(agent_id)
            if found is not None and not self._in_lineage(found):
                raise ResumeNotAllowed(agent_id, found.sessions)
        return await runtime._resume(
            agent_id,
            message,
            fallback_parent=caller.agent_id,
            input_timeout=SEND_INPUT_WAIT_SECONDS,
        )

    async def report(
        self, caller: ToolContext, agent_id: str, *, block: bool, timeout: float
    ) -> AgentReport:
        """The agent's report, after waiting up to ``timeout`` s for its run if ``block``."""
        record = self._known(self._runtime._record, agent_id)
        if block:
            await self._runtime._wait_run(agent_id, timeout)
        return self._report(record)

    def agent_types(self) -> Sequence[tuple[str, str]]:
        """Every agent type of the runtime's catalog."""
        return self._runtime.agent_types()

    def explain_not_found(self, caller: ToolContext, agent_id: str) -> str | None:
        """For an id the runtime does not hold: what its transcript says to do, if it has one."""
        error = self._not_loaded(agent_id)
        return None if error is None else str(error)

    # -- unknown ids ---------------------------------------------------------------------

    def _known(self, lookup: Callable[[str], _T], agent_id: str) -> _T:
        """``lookup(agent_id)``, an unknown id's error made specific (:class:`AgentNotLoaded`)."""
        try:
            return lookup(agent_id)
        except AgentNotFound as exc:
            raise self._not_loaded(exc.agent_id) or exc from None

    async def _guard(self, agent_id: str, call: Callable[[], Awaitable[_T]]) -> _T:
        """``await call()``, an unknown id's error made specific (:class:`AgentNotLoaded`)."""
        try:
            return await call()
        except AgentNotFound as exc:
            if exc.agent_id != agent_id:
                raise
            raise self._not_loaded(agent_id) or exc from None

    def _not_loaded(self, agent_id: str) -> AgentNotLoaded | None:
        """The error for an id with a transcript but no agent in this runtime, else ``None``."""
        runtime = self._runtime
        if agent_id in runtime.services.records:
            return None
        found = self._transcript_sessions(agent_id)
        if found is None:
            return None
        return AgentNotLoaded(agent_id, found.nickname, resumable=self._in_lineage(found))

    def _transcript_sessions(self, agent_id: str) -> TranscriptSessions | None:
        """What the agent's transcript records, or ``None`` without a readable transcript."""
        services = self._runtime.services
        if not services.transcripts_enabled:
            return None
        try:
            return read_sessions(find_transcript(services.config.state_dir, agent_id), agent_id)
        except (TranscriptError, OSError):
            return None

    def _in_lineage(self, found: TranscriptSessions) -> bool:
        return self._runtime._lineage.admits(found.sessions)

    def _report(self, record: AgentRecord) -> AgentReport:
        """The agent's status, and its last run's result once it is final (live counters
        from the progress tracker while it runs)."""
        runtime = self._runtime
        status = runtime.status(record.agent_id)
        result = record.last_result if is_final(status) else None
        if result is None:
            turns, tool_uses, tokens = runtime._live_counts(record.agent_id)
            return AgentReport(
                record.agent_id,
                record.nickname,
                record.agent_type,
                status,
                turns=turns,
                tool_uses=tool_uses,
                total_tokens=tokens,
            )
        return AgentReport(
            record.agent_id,
            record.nickname,
            record.agent_type,
            status,
            result=getattr(status, "result", None) or result.report(),
            terminate_reason=result.terminate_reason.value,
            turns=result.turns,
            tool_uses=result.tool_uses,
            total_tokens=result.usage.total_tokens,
            duration_seconds=result.duration,
        )
