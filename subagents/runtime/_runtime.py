"""The runtime people embed: agents by type, run as supervised actors, with hooks and transcripts.

:func:`open_runtime` joins the kernel, the definitions, the tools and the loop::

    async with subagents.open_runtime(cwd=project) as rt:
        lead = await rt.spawn("lead", "Review the parser module")
        await rt.wait([lead.agent_id], timeout=600)
        print(rt.result(lead.agent_id))

Each agent is an actor of one supervisor (limits, nicknames, close ladders,
status events on the bus). Its tools are the built-in tools and the lifecycle
tools (``spawn_agent``, ``wait``, ``Task``...) that reach back into this runtime,
filtered for its definition and position and wrapped with its tool hooks. Its
messages and results go to its transcript as they happen; ``SubagentStart`` and
``SubagentStop`` fire once per run; a progress tracker follows the bus.

Leaving the ``async with`` block closes everything: agents end Shutdown (a
graceful stop on a normal exit, at once on an exception or a cancellation),
every transcript is closed, then the provider and the log.
"""

from __future__ import annotations

import builtins
import collections
import io
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal, final

import attrs
import trio

from subagents.actors import (
    ActorInfo,
    AgentNotFound,
    Bus,
    BusStatistics,
    MailboxFull,
    Status,
    Subscription,
    Supervisor,
    SupervisorClosed,
    SupervisorStatistics,
    WaitResult,
)
from subagents.agents import AgentCatalog
from subagents.runtime._agent_record import AgentHandle, AgentRecord
from subagents.runtime._config.defaults import DEFAULT_MODEL
from subagents.runtime._config.values import RuntimeConfig
from subagents.runtime._exceptions import AgentBusy, ProgressNotFound, RuntimeClosed
from subagents.runtime._follower import ProgressFollower
from subagents.runtime._hooks.values import HookRunnerStatistics, hooks_from_specs
from subagents.runtime._lineage import SessionLineage
from subagents.runtime._messages import Conversation
from subagents.runtime._model import resolve_model
from subagents.runtime._progress.tracker import ProgressTracker
from subagents.runtime._progress.values import AgentProgress, ProgressStatistics
from subagents.runtime._result import AgentResult
from subagents.runtime._resume import load_resumable, plan_resume
from subagents.runtime._services import Services
from subagents.runtime._task import prepare_task
from subagents.runtime._transcripts.load import find_transcript
from subagents.runtime._transcripts.lock import claim_transcript

__all__ = ["Runtime", "RuntimeStatistics"]

#: The longest single kernel wait of a wait loop (a wait with no deadline of its own).
_WAIT_CHUNK: Final = 3600.0


@attrs.frozen
class RuntimeStatistics:
    """A snapshot of the runtime's counters: kernel, bus, hooks, progress, agents."""

    supervisor: SupervisorStatistics
    bus: BusStatistics
    hooks: HookRunnerStatistics
    progress: ProgressStatistics
    agents: int
    """Agents the runtime holds a record of (open ones and recently closed ones)."""
    transcripts_open: int
    """Transcript files open now (one per open agent when transcripts are on)."""


@final
class Runtime:
    """A running set of agents; made by :func:`open_runtime`, valid inside its block.

    Every method is safe to call from any task of the Trio run that opened it.
    Agent ids are the kernel's; statuses are the kernel's statuses.
    """

    __slots__ = (
        "_closed_order",
        "_closing",
        "_follower",
        "_lineage",
        "_sup",
        "bus",
        "catalog",
        "services",
    )

    def __init__(
        self,
        services: Services,
        *,
        catalog: AgentCatalog,
        bus: Bus,
        follower: ProgressFollower | None = None,
    ) -> None:
        self.services = services
        self.catalog = catalog
        self.bus = bus
        self._follower = ProgressFollower(services.log) if follower is None else follower
        self._sup: Supervisor | None = None
        self._closing = False
        self._closed_order: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._lineage = SessionLineage(services.session_id)

    def __repr__(self) -> str:
        return f"<Runtime session={self.session_id} agents={len(self.services.records)}>"

    @property
    def config(self) -> RuntimeConfig:
        """The configuration this runtime was opened with."""
        return self.services.config

    @property
    def session_id(self) -> str:
        """This runtime's session id (its transcripts and log are filed under it)."""
        return self.services.session_id

    @property
    def lineage(self) -> frozenset[str]:
        """The sessions whose agents this runtime's models may resume.

        This session, and every session recorded in the transcript of an agent
        brought back with :meth:`resume` (a model's ``resume_agent`` does not
        widen it). :meth:`resume` itself may bring back any agent.
        """
        return self._lineage.sessions

    @property
    def tracker(self) -> ProgressTracker:
        """The progress tracker that follows this runtime's bus."""
        return self._follower.tracker

    @property
    def supervisor(self) -> Supervisor:
        """The kernel supervisor the agents run under."""
        if self._sup is None:
            raise RuntimeClosed
        return self._sup

    def _open_supervisor(self) -> Supervisor:
        if self._closing or self._sup is None:
            raise RuntimeClosed
        return self._sup

    # -- starting agents ------------------------------------------------------------------

    async def spawn(
        self,
        agent_type: str,
        prompt: str,
        *,
        description: str | None = None,
        model: str | None = None,
        inputs: Mapping[str, Any] | None = None,
        background: bool = False,
        parent: str | None = None,
        fork_context: bool | None = None,
    ) -> AgentHandle:
        """Start an agent of ``agent_type`` on ``prompt``; return once it is running.

        ``parent`` (an agent id) makes it that agent's child, one level deeper;
        ``model`` overrides the definition's; ``inputs`` are checked against its
        ``inputConfig``; ``background`` keeps only background-safe tools;
        ``fork_context`` (default: the definition's) starts it from the
        parent's conversation. Raises :class:`~subagents.agents.UnknownAgentError`
        (listing the types), :class:`InvalidInputs`, the kernel's
        ``AgentLimitReached`` / ``DepthLimitReached``, or ``AgentStartFailed``.
        """
        record = await self._spawn(
            agent_type,
            prompt,
            description=description,
            model=model,
            inputs=inputs,
            background=background,
            parent=parent,
            fork_context=fork_context,
        )
        return record.handle()

    async def _spawn(
        self,
        agent_type: str,
        prompt: str,
        *,
        description: str | None,
        model: str | None,
        inputs: Mapping[str, Any] | None,
        background: bool,
        parent: str | None,
        fork_context: bool | None,
    ) -> AgentRecord:
        self._open_supervisor()
        services = self.services
        definition = self.catalog.get(agent_type)
        parent_record = None if parent is None else services.records.get(parent)
        forks = definition.fork_context if fork_context is None else fork_context
        task = prepare_task(
            definition
            if forks == definition.fork_context
            else attrs.evolve(definition, fork_context=forks),
            prompt,
            inputs=inputs,
            cwd=services.cwd,
            parent_messages=None if parent_record is None else parent_record.conversation.messages,
            home=services.home,
            project_root=services.cwd,
        )
        record = AgentRecord(
            services,
            definition=definition,
            conversation=task.conversation,
            system_prompt=task.system_prompt,
            prompt=prompt,
            model=self._model(model, definition.model, parent_record),
            background=background or definition.background,
            description=description,
            agent_hooks=hooks_from_specs(definition.hooks),
        )
        await self._start(record, parent)
        return record

    def _model(self, wanted: str | None, definition: str | None, parent: AgentRecord | None) -> str:
        services = self.services
        choice = resolve_model(
            spawn=wanted,
            definition=definition,
            parent=None if parent is None else parent.model,
            env=services.env,
            aliases=self.catalog.aliases,
            default=services.config.model or DEFAULT_MODEL,
        )
        if choice.diagnostic is not None:
            services.log.logger().warning("unknown model name", detail=choice.diagnostic)
        return choice.model

    async def _start(self, record: AgentRecord, parent: str | None) -> None:
        sup = self._open_supervisor()
        try:
            await sup.spawn(
                record.behave,
                parent=parent,
                label=record.agent_type,
                nickname=record.nickname or None,
                agent_id=record.agent_id or None,
                init=record.init,
            )
        except SupervisorClosed:
            raise RuntimeClosed from None
        except Exception as exc:
            self.services.log.logger(parent_id=parent).info(
                "spawn refused", agent_type=record.agent_type, reason=str(exc)
            )
            raise

    async def resume(self, agent_id: str, prompt: str | None = None) -> Status:
        """Bring back ``agent_id``; return its status once it is back.

        An open agent (running, or final and waiting for input) is left alone,
        and ``prompt``, if given, is sent to it as input. An agent no longer in
        memory (closed, or from an earlier process on the same state
        directory) is rebuilt from its transcript with its id, nickname, type,
        model and whole conversation, under its original parent if that parent
        is open, else at the top level: its depth follows its new position.
        With ``prompt`` it runs on it. Without one it carries on if it was
        stopped mid-run, and otherwise comes back idle with the status of its
        last run (final and open, ready for :meth:`send_input`).

        Its transcript is locked before it is read and for as long as the agent
        is open here: :class:`AgentInUse` (naming the holder's process) is
        raised when another runtime, in this process or another, runs it.

        Any agent of the state directory may be resumed this way (it is what
        ``subagents resume`` calls); the sessions its transcript records join
        :attr:`lineage`, so the models of this runtime may resume the agents of
        those sessions too (a lead's children from before its process ended).
        """
        return await self._resume(agent_id, prompt, fallback_parent=None, by_user=True)

    async def _resume(
        self,
        agent_id: str,
        prompt: str | None,
        *,
        fallback_parent: str | None,
        by_user: bool = False,
        input_timeout: float | None = None,
    ) -> Status:
        """Resume for :meth:`resume` (``by_user``: its sessions join the lineage) or a tool.

        ``input_timeout`` bounds the wait for mailbox room when ``prompt`` goes
        to an open agent (see :meth:`send_input`).
        """
        sup = self._open_supervisor()
        if not isinstance(agent_id, str):  # no transcript can be named by it
            raise AgentNotFound(agent_id)
        if self._is_open(agent_id):
            if prompt is not None:
                await self.send_input(agent_id, prompt, timeout=input_timeout)
            return sup.status(agent_id)
        services = self.services
        old = services.records.get(agent_id)
        if old is not None:
            old.close_transcript()
        path: Path | None = None
        claimed: io.FileIO | None = None
        if services.transcripts_enabled:  # locked before it is read: one writer at a time
            path = find_transcript(services.config.state_dir, agent_id)
            claimed = claim_transcript(path, agent_id)
        record: AgentRecord | None = None
        try:
            source = load_resumable(services, self.catalog, agent_id, old, path)
            if by_user and source.transcript is not None:
                self._lineage.add(meta.session_id for meta in source.transcript.metas)
            plan = plan_resume(source, prompt)
            original = source.parent_id
            parent = (
                original if original is not None and self._is_open(original) else fallback_parent
            )
            record = AgentRecord(
                services,
                definition=source.definition,
                conversation=source.conversation,
                system_prompt=source.system_prompt,
                prompt=plan.prompt,
                model=self._model(source.model, None, None),
                agent_hooks=hooks_from_specs(source.definition.hooks),
                agent_id=agent_id,
                nickname=source.nickname,
                transcript=source.transcript,
                claimed=claimed,
                restore=plan.restore,
            )
            await self._start(record, parent)
        except BaseException:  # re-raised: the lock is let go unless the agent got going
            if not self._is_open(agent_id):
                if record is not None:
                    record.close_transcript()
                if claimed is not None:
                    claimed.close()
            raise
        self._closed_order.pop(agent_id, None)
        record.logger.info("agent resumed", idle=plan.restore is not None, parent_id=parent)
        return sup.status(agent_id)

    # -- driving agents -------------------------------------------------------------------

    async def send_input(
        self,
        agent_id: str,
        text: str,
        *,
        interrupt: bool = False,
        timeout: float | None = None,
    ) -> Status:
        """Queue ``text`` for the agent; return its status after.

        A final agent that is still open starts a new run with its context kept
        (it takes a slot again, so this can raise ``AgentLimitReached``).
        ``interrupt=True`` aborts the run under way first, and the agent goes on
        at once with ``text``. Raises ``AgentNotFound`` or ``AgentClosed``.

        A busy agent reads its mailbox only between turns. When the mailbox is
        full, this waits for room: with ``timeout=None`` as long as it takes
        (the caller's own deadline bounds it), else at most ``timeout`` seconds,
        then raises :class:`AgentBusy` (a ``MailboxFull``) and nothing is
        delivered. With ``interrupt=True`` a full mailbox makes the run under
        way stop first, so room comes as soon as the agent has read its mailbox.
        The lifecycle tools a model calls always wait a bounded time
        (:data:`~subagents.tools.SEND_INPUT_WAIT_SECONDS`).
        """
        sup = self._open_supervisor()
        record = self.services.records.get(agent_id)
        interrupted = False
        try:
            try:
                sup.send_nowait(agent_id, text)
            except MailboxFull as full:
                if interrupt and record is not None and record.actor is not None:
                    interrupted = record.actor.interrupt()
                if timeout is None:
                    await sup.send(agent_id, text)
                else:
                    with trio.move_on_after(timeout) as waiting:
                        await sup.send(agent_id, text)
                    if waiting.cancelled_caught:
                        raise AgentBusy(
                            agent_id,
                            full.capacity,
                            timeout,
                            nickname=None if record is None else record.nickname,
                            interrupted=interrupted,
                        ) from None
        except SupervisorClosed:
            raise RuntimeClosed from None
        if record is not None:
            record.prompt = text
            if interrupt and not interrupted and record.actor is not None:
                record.actor.interrupt()
        return sup.status(agent_id)

    async def wait(
        self, agent_ids: Iterable[str], *, timeout: float, mode: Literal["any", "all"] = "any"
    ) -> WaitResult:
        """Wait until any (or all) of the agents are final, or ``timeout`` seconds pass."""
        return await self.supervisor.wait(agent_ids, timeout=timeout, mode=mode)

    async def close(self, agent_id: str, *, grace: float | None = None) -> Status:
        """Close the agent and its open descendants; return its previous status. Idempotent.

        ``grace`` overrides the close grace period (0 cancels at once).
        """
        previous = await self.supervisor.close(agent_id, grace=grace)
        self._sweep(agent_id)
        return previous

    async def _wait_run(self, agent_id: str, timeout: float) -> None:
        """Wait, at most ``timeout`` seconds (``inf`` allowed), for the agent's run to end."""
        sup = self.supervisor
        deadline = trio.current_time() + timeout
        while True:
            remaining = deadline - trio.current_time()
            if remaining <= 0:
                return
            waited = await sup.wait([agent_id], timeout=min(remaining, _WAIT_CHUNK))
            if not waited.timed_out:
                return

    # -- reading ----------------------------------------------------------------------------

    def status(self, agent_id: str) -> Status:
        """The agent's status; ``NotFound`` for an id this runtime does not know."""
        return self.supervisor.status(agent_id)

    def list(self, *, include_closed: bool = False) -> list[ActorInfo]:
        """Every open agent (and, if asked, remembered closed ones), oldest first."""
        return self.supervisor.list(include_closed=include_closed)

    def result(self, agent_id: str) -> AgentResult | None:
        """The result of the agent's latest run (``None`` before its first ends)."""
        record = self.services.records.get(agent_id)
        return None if record is None else record.last_result

    def handle(self, agent_id: str) -> AgentHandle:
        """The agent's identity; raises ``AgentNotFound`` for an id without a record."""
        return self._record(agent_id).handle()

    def conversation(self, agent_id: str) -> Conversation:
        """The agent's conversation so far (a live view: read it, do not change it)."""
        return self._record(agent_id).conversation

    def transcript_path(self, agent_id: str) -> Path | None:
        """Where the agent's transcript is written (``None`` when transcripts are off)."""
        return self._record(agent_id).transcript_file

    def progress(self, agent_id: str) -> AgentProgress:
        """The agent's progress: tokens, tool uses, turns, last activities, subtree totals."""
        self._follower.pump()
        return self.tracker.progress(agent_id)

    def tree(self) -> builtins.list[AgentProgress]:
        """Every agent's progress, depth-first from the top-level agents."""
        self._follower.pump()
        return self.tracker.tree()

    def subscribe(self, **options: Any) -> Subscription:
        """Subscribe to the bus (see :meth:`Supervisor.subscribe` for the options)."""
        return self.supervisor.subscribe(**options)

    def agent_types(self) -> Sequence[tuple[str, str]]:
        """Every agent type that can be spawned, as ``(name, description)``."""
        return [(d.name, d.description) for d in self.catalog]

    def statistics(self) -> RuntimeStatistics:
        """A snapshot of the runtime's counters."""
        records = self.services.records.values()
        return RuntimeStatistics(
            supervisor=self.supervisor.statistics(),
            bus=self.bus.statistics(),
            hooks=self.services.hooks.statistics(),
            progress=self.tracker.statistics(),
            agents=len(records),
            transcripts_open=sum(1 for r in records if r.writer is not None),
        )

    # -- internals -----------------------------------------------------------------------

    def _record(self, agent_id: str) -> AgentRecord:
        record = self.services.records.get(agent_id)
        if record is None:
            raise AgentNotFound(agent_id)
        return record

    def _is_open(self, agent_id: str) -> bool:
        try:
            return not self.supervisor.info(agent_id).closed
        except AgentNotFound:
            return False

    def _live_counts(self, agent_id: str) -> tuple[int, int, int]:
        self._follower.pump()
        try:
            progress = self.tracker.progress(agent_id)
        except ProgressNotFound:
            return (0, 0, 0)
        return (progress.turns, progress.tool_uses, progress.usage.total_tokens)

    def _sweep(self, root: str) -> None:
        """Close the transcripts of ``root`` and its descendants the kernel has closed.

        Closed agents' records are kept (for :meth:`result` and resume) up to
        the supervisor's ``retain_closed``, the oldest forgotten first.
        """
        records = self.services.records
        stack = [root]
        while stack:
            record = records.get(stack.pop())
            if record is None or record.agent_id in self._closed_order:
                continue
            if self._is_open(record.agent_id):
                continue
            record.close_transcript()
            self._closed_order[record.agent_id] = None
            stack.extend(record.children)
        limit = self.supervisor.config.retain_closed
        while len(self._closed_order) > limit:
            forgotten, _ = self._closed_order.popitem(last=False)
            records.pop(forgotten, None)

    def _bind(self, supervisor: Supervisor) -> None:
        """Called by :func:`open_runtime` once the supervisor is open."""
        self._sup = supervisor

    def _shut(self) -> None:
        """After the supervisor has exited: every transcript closed, nothing more accepted."""
        self._closing = True
        for record in self.services.records.values():
            record.close_transcript()
