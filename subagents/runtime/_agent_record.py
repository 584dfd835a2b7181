"""One agent of a runtime: its definition, spec, conversation, transcript, runs and results.

An :class:`AgentRecord` is made by the runtime before the kernel spawns the
agent and gives the kernel its two callables:

- :meth:`AgentRecord.prepare`, the actor's start-up code (after
  :meth:`AgentRecord.fetch_tools`, which may wait): it learns the agent's
  identity and position (id, nickname, depth, parent), builds its tools (the
  runtime's tools, hooked, then filtered for this position), its approval
  router and its :class:`AgentSpec`, and opens its transcript (meta line and
  first messages). A failure here makes ``spawn`` raise.
- :meth:`AgentRecord.behave`, the actor's behavior: one activation per call
  (the first run, then one per revival by follow-up input). Each activation
  publishes :class:`~subagents.runtime.ActivationStarted`, fires
  ``SubagentStart`` and ``SubagentStop`` exactly once, however it ends, and
  writes its result to the transcript after ``SubagentStop`` and before it
  returns to the kernel, which then publishes the final status: the result is
  on disk first, with the status the kernel is about to give. (An agent
  resumed idle has a first activation that runs nothing and returns the
  status of its last run.)

Its :class:`~subagents.runtime._ledger.RunLedger` holds the results and the
transcript writer: every message appended to the conversation reaches the
transcript as it happens, and a run that ends inside an activation that goes
on (input queued during the run, an interrupt) has its result written when the
next one arrives.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Callable
from typing import Any, final

import attrs
import trio
from structlog.typing import FilteringBoundLogger

from subagents.actors import ActorContext, ChildFinished
from subagents.agents import AgentDefinition, PermissionMode
from subagents.runtime._behavior import AgentActor
from subagents.runtime._events import ActivationStarted, Publisher
from subagents.runtime._exceptions import AgentRunFailed
from subagents.runtime._hooks.commands import HookEvent, HookPayload
from subagents.runtime._hooks.run import MAX_STOP_BLOCKS, SubagentRunHooks, subagent_run_hooks
from subagents.runtime._hooks.tools import HookSite, hook_tools
from subagents.runtime._hooks.values import Hook, HookOutcome
from subagents.runtime._ledger import RunLedger
from subagents.runtime._loop import AgentSpec
from subagents.runtime._mcp import agent_mcp_tools, offers_mcp_tools
from subagents.runtime._messages import Conversation, Message, Origin
from subagents.runtime._progress.facts import ProgressFeed
from subagents.runtime._result import AgentResult
from subagents.runtime._services import Services
from subagents.runtime._transcripts.load import Transcript
from subagents.runtime._transcripts.records import FinalStatus, MetaRecord, transcript_file
from subagents.runtime._transcripts.writer import TranscriptWriter
from subagents.tools import (
    ApprovalMode,
    ApprovalRouter,
    Tool,
    ToolSelection,
)

__all__ = ["AgentHandle", "AgentRecord"]


@attrs.frozen
class AgentHandle:
    """A started agent, as :meth:`Runtime.spawn` returns it.

    ``output_file`` is its transcript (``None`` when transcripts are off): the
    file to read its messages and result from.
    """

    agent_id: str
    nickname: str
    agent_type: str
    depth: int
    parent_id: str | None
    model: str
    background: bool = False
    output_file: str | None = None


def _approval_mode(definition: AgentDefinition) -> ApprovalMode:
    """The definition's ``approvalMode``, else what its ``permissionMode`` implies."""
    if definition.approval_mode is not None:
        return definition.approval_mode
    if definition.permission_mode is PermissionMode.BYPASS_PERMISSIONS:
        return ApprovalMode.AUTO_APPROVE
    if definition.permission_mode in (PermissionMode.DONT_ASK, PermissionMode.PLAN):
        return ApprovalMode.SUPPRESS
    return ApprovalMode.ROUTE_TO_PARENT


def _is_cancellation(exc: BaseException) -> bool:
    if isinstance(exc, trio.Cancelled | KeyboardInterrupt):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return exc.split((trio.Cancelled, KeyboardInterrupt))[1] is None
    return False


@final
class AgentRecord:
    """What the runtime knows about one agent, and the callables the kernel runs for it.

    ``agent_id`` and ``nickname`` are the ones to restore (resume) until
    :meth:`init` binds the ones the kernel gave. ``transcript`` is the loaded
    transcript a resumed agent goes on writing; ``restore`` the result a
    resumed agent comes back idle with (its first activation runs nothing);
    ``claimed`` the resumed transcript's lock (a claim), that its writer
    takes over.
    """

    __slots__ = (
        "_claimed",
        "_offered",
        "_transcript",
        "actor",
        "agent_hooks",
        "agent_id",
        "awaited",
        "background",
        "children",
        "conversation",
        "definition",
        "depth",
        "description",
        "job_item",
        "job_report",
        "ledger",
        "logger",
        "model",
        "nickname",
        "on_init",
        "parent_id",
        "prompt",
        "restore",
        "router",
        "runs",
        "services",
        "site",
        "spec",
        "system_prompt",
        "tools",
        "transcript_file",
    )

    def __init__(
        self,
        services: Services,
        *,
        definition: AgentDefinition,
        conversation: Conversation,
        system_prompt: str,
        prompt: str | None,
        model: str,
        background: bool = False,
        description: str | None = None,
        agent_hooks: tuple[Hook, ...] = (),
        agent_id: str = "",
        nickname: str = "",
        transcript: Transcript | None = None,
        claimed: io.FileIO | None = None,
        restore: AgentResult | None = None,
    ) -> None:
        self.services = services
        self.definition = definition
        self.conversation = conversation
        self.system_prompt = system_prompt
        self.prompt = prompt
        self.model = model
        self.background = background
        self.description = description
        self.agent_hooks = agent_hooks
        self.agent_id = agent_id
        self.nickname = nickname
        self.depth = 0
        self.parent_id: str | None = None
        #: Ids of the agents spawned (or resumed) under this one, oldest first.
        # Ids in spawn order, as dict keys: an empty dict (or one of strings only) is no
        # object the collector walks, where a list always is; most agents have no child.
        self.children: dict[str, None] = {}
        self.restore = restore
        self._transcript = transcript
        self._claimed = claimed
        # fetch_tools(): the MCP tools, or what stopped them (raised by prepare()).
        self._offered: tuple[Tool, ...] | Exception = ()
        self.site: HookSite | None = None
        self.tools: ToolSelection | None = None
        self.router: ApprovalRouter | None = None
        self.spec: AgentSpec | None = None
        self.actor: AgentActor | None = None
        #: The transcript's file, as a string (``Runtime.transcript_path`` gives the Path).
        self.transcript_file: str | None = None
        self.logger: FilteringBoundLogger = services.log.for_type(definition.name)
        self.ledger = RunLedger(conversation, self.logger)
        self.runs = 0
        #: Set while a foreground ``Task`` call waits for this agent's run, and
        #: until the parent drops the notice of its end: the parent gets the
        #: result as the tool's answer, not a second time as a notice.
        self.awaited = False
        #: Called with the agent's id at the end of :meth:`init`, before its first
        #: turn can run (a team registers its lead there).
        self.on_init: Callable[[str], None] | None = None
        #: ``(job_id, item_id)`` when this agent runs one row of a job: it is then
        #: offered ``report_agent_job_result`` (the filter's ``job_row``).
        self.job_item: tuple[str, str] | None = None
        #: The result its row reported with ``report_agent_job_result``, once accepted.
        self.job_report: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"<AgentRecord {self.nickname or '?'} ({self.agent_id or '?'}) {self.agent_type}>"

    @property
    def agent_type(self) -> str:
        """The agent's type (its definition's name)."""
        return self.definition.name

    @property
    def last_result(self) -> AgentResult | None:
        """The latest run's result (``None`` before the first run ends)."""
        return self.ledger.last_result

    @property
    def last_status(self) -> FinalStatus | None:
        """The status the latest activation ended with."""
        return self.ledger.last_status

    @property
    def writer(self) -> TranscriptWriter | None:
        """The transcript writer, while the agent is open and transcripts are on."""
        return self.ledger.writer

    def handle(self) -> AgentHandle:
        """The agent's identity as a value."""
        return AgentHandle(
            agent_id=self.agent_id,
            nickname=self.nickname,
            agent_type=self.agent_type,
            depth=self.depth,
            parent_id=self.parent_id,
            model=self.model,
            background=self.background,
            output_file=self.transcript_file,
        )

    # -- start-up ---------------------------------------------------------------------

    @property
    def fetches_tools(self) -> bool:
        """Whether :meth:`fetch_tools` has MCP tools to gather: servers the definition
        names (to start), or the runtime's own."""
        return offers_mcp_tools(self.services.mcp, self.definition)

    async def fetch_tools(self) -> None:
        """What the start-up waits for, before the kernel registers the agent: the MCP
        tools its definition names (their servers started); called only when
        :attr:`fetches_tools`. A failure is kept, for :meth:`prepare` to raise, so that
        it fails the spawn as any start-up error."""
        try:
            self._offered = tuple(await agent_mcp_tools(self.services, self.definition))
        except Exception as exc:
            self._offered = exc

    async def init(self, ctx: ActorContext) -> None:
        """:meth:`prepare` through the kernel's handshake, for an agent coming back: its
        first activation (an idle one's returns its last status at once) has run by the
        time the spawn returns, so a resume can report the status it came back with."""
        self.prepare(ctx)

    def prepare(self, ctx: ActorContext) -> None:
        """The kernel's start-up code (synchronous: no handshake): identity, tools and
        spec, then the transcript opened. Call :meth:`fetch_tools` first."""
        fetched, self._offered = self._offered, ()
        if isinstance(fetched, Exception):
            raise fetched
        services = self.services
        self.agent_id, self.nickname = ctx.id, ctx.nickname
        self.depth, self.parent_id = ctx.depth, ctx.parent_id
        self.logger = self.ledger.logger = services.log.for_agent(
            agent_id=ctx.id, nickname=ctx.nickname, depth=ctx.depth
        )
        resumed = self._transcript
        if services.transcripts_enabled:
            self.transcript_file = (
                os.fspath(resumed.path)
                if resumed is not None
                else transcript_file(services.transcripts_folder, ctx.id)
            )
        parent = services.records.get(ctx.parent_id) if ctx.parent_id is not None else None
        own = self.transcript_file
        self.site = HookSite(
            runner=services.hooks,
            agent_hooks=self.agent_hooks,
            agent_id=ctx.id,
            agent_type=self.agent_type,
            parent_id=ctx.parent_id,
            depth=ctx.depth,
            nickname=ctx.nickname,
            session_id=services.session_id,
            cwd=str(services.cwd),
            # Claude Code's: the parent's transcript; a top-level agent's own (HookPayload).
            transcript_path=own if parent is None else parent.transcript_file,
            agent_transcript_path=own,
            report=self._report_hooks,
            ready=None if own is None else self._transcript_written,
        )
        if parent is not None:
            parent.children[ctx.id] = None
        self.router = ApprovalRouter(
            ctx.id,
            mode=_approval_mode(self.definition),
            parent=parent.router if parent is not None else services.root_approver,
        )
        policy = services.selections.policy(
            self.definition,
            depth=ctx.depth,
            max_depth=services.config.limits.max_depth,
            background=True if self.background else None,
            job_row=self.job_item is not None,
        )
        # The runtime's own tuple when the agent has no MCP tools: the cache knows it.
        offered = (*services.tools, *fetched) if fetched else services.tools
        site = self.site
        self.tools = services.selections.select(
            offered, policy, services.trust, wrap=lambda kept: hook_tools(kept, site)
        )
        self.spec = AgentSpec(
            definition=self.definition,
            provider=services.provider,
            model=self.model,
            system_prompt=self.system_prompt,
            tools=self.tools,
            limits=services.limits_for(self.definition),
            workspace_root=services.cwd,
            approver=self.router,
            redactor=services.redactor,
        )
        self.actor = AgentActor(
            self.spec,
            self.conversation,
            on_result=self.ledger.on_result,
            drop_notice=self._drop_notice,
            idle=self.restore is not None,
            progress=ProgressFeed(
                services.tracker,
                agent_id=ctx.id,
                parent_id=ctx.parent_id,
                depth=ctx.depth,
                nickname=ctx.nickname,
            ),
        )
        if self.transcript_file is not None:
            meta = MetaRecord.for_definition(
                self.definition,
                agent_id=ctx.id,
                nickname=ctx.nickname,
                depth=ctx.depth,
                parent_id=ctx.parent_id,
                model=self.model,
                session_id=services.session_id,
            )
            self.ledger.open(
                self.transcript_file,
                meta,
                resumed=resumed,
                policy=services.config.transcripts.on_disk_error,
                claimed=self._claimed,
                flusher=services.flusher,
            )
        self._transcript = self._claimed = None
        services.records[ctx.id] = self
        self.logger.info(
            "agent spawned",
            agent_type=self.agent_type,
            model=self.model,
            parent_id=ctx.parent_id,
            background=self.background,
            resumed=resumed is not None,
            tools=list(self.tools.names),
            transcript=self.transcript_file,
        )
        if self.tools.unmatched_patterns:
            self.logger.debug(
                "tool patterns match no tool", patterns=list(self.tools.unmatched_patterns)
            )
        if self.on_init is not None:
            self.on_init(ctx.id)

    # -- one activation -----------------------------------------------------------------

    async def behave(self, ctx: ActorContext) -> str | None:
        """One activation: ``SubagentStart``, the runs, ``SubagentStop``, the result on disk."""
        self.runs += 1
        restore, self.restore = self.restore, None
        if restore is not None:  # resumed without a prompt: back idle, with its last status
            self.ledger.restored(restore)
            if restore.succeeded:
                return restore.report()
            raise AgentRunFailed(restore)
        actor, site = self.actor, self.site
        assert actor is not None, "init() runs before behave()"
        assert site is not None, "init() runs before behave()"
        self.ledger.begin()
        fired: SubagentRunHooks | None = None
        try:
            await Publisher.for_actor(ctx).publish(ActivationStarted, activation=self.runs)
            async with subagent_run_hooks(
                site.runner,
                self._run_payload,
                agent_hooks=site.agent_hooks,
                nickname=ctx.nickname,
                ready=site.ready,
            ) as fired:
                if fired.start.results:
                    self._report_hooks(fired.start)
                context = fired.context
                if context:
                    self.conversation.append(Message.user(context, origin=Origin.NOTICE))
                value = await actor.behave(ctx)
                # A SubagentStop hook that blocks the stop: go on with its reason.
                while (blocked := await fired.finish()) is not None:
                    self._report_hooks(blocked)
                    reason = blocked.reason or ""
                    self.logger.info("stop blocked by a hook", feedback=reason)
                    self.conversation.append(Message.user(reason, origin=Origin.NOTICE))
                    value = await actor.behave(ctx)
                # A teammate about to go idle: TeammateIdle hooks may keep it working.
                idle_blocks = 0
                while (feedback := await self._teammate_idle(ctx)) is not None:
                    self.logger.info("idle blocked by a hook", feedback=feedback)
                    self.conversation.append(Message.user(feedback, origin=Origin.NOTICE))
                    value = await actor.behave(ctx)
                    idle_blocks += 1
                    if idle_blocks >= MAX_STOP_BLOCKS:
                        break
        except BaseException as exc:
            self._report_stop(fired)
            ended: FinalStatus = "shutdown" if ctx.stopping or _is_cancellation(exc) else "errored"
            # A stopped run's result is fsync-ed by the flusher (shielded), as below, not in
            # the Trio thread: a runtime closing thousands of running agents made one fsync
            # after the other there. Its status cannot change meanwhile (a stop makes it
            # shutdown); an error's could (a stop during the wait), so its fsync stays here.
            stopped = ended == "shutdown"
            self.ledger.end(
                ended, model=self.model, activation=self.runs, quiet=True, sync=not stopped
            )
            if stopped:
                await self.ledger.sync(self.services.flusher, quiet=True)
            raise
        self._report_stop(fired)
        # The result's fsync is made with those of the other results of this pass, in
        # worker threads (TranscriptFlusher.sync), before the kernel publishes the status.
        status: FinalStatus = "shutdown" if ctx.stopping else "completed"
        self.ledger.end(status, model=self.model, activation=self.runs, sync=False)
        if status == "completed":  # the status on disk stands, whatever stop comes meanwhile
            ctx.settle()
        await self.ledger.sync(self.services.flusher)
        team = self.services.teams.of(ctx.id)
        if team is not None and not ctx.stopping:
            await team.went_idle(ctx.id)
        return value

    async def _teammate_idle(self, ctx: ActorContext) -> str | None:
        """Fire ``TeammateIdle`` once for a teammate going idle; the feedback if a hook blocked.

        Claude Code's ``TeammateIdle`` (https://code.claude.com/docs/en/hooks#teammateidle):
        exit 2 (or JSON ``decision: "block"``) sends the reason back and keeps the
        teammate working. Agents in no team, and leads, fire nothing.
        """
        site = self.site
        team = self.services.teams.of(ctx.id)
        if site is None or team is None or ctx.stopping:
            return None
        name = team.name_of(ctx.id)
        if name is None or ctx.id == team.lead_id:
            return None
        if not site.runner.has_hooks(HookEvent.TEAMMATE_IDLE, site.agent_hooks):
            return None
        payload = site.payload(
            HookEvent.TEAMMATE_IDLE,
            team_name=team.name,
            teammate_name=name,
            last_assistant_message=self._last_text(),
        )
        outcome = await site.fire(HookEvent.TEAMMATE_IDLE, payload, math.inf)
        if not outcome.blocked or not outcome.reason:
            return None
        return outcome.reason

    async def _transcript_written(self) -> None:
        """Before a hook fires: the agent's transcript with every line so far (a hook is
        given its path and may read it)."""
        writer = self.ledger.writer
        if writer is not None and (waiting := writer.written()) is not None:
            await waiting

    def _run_payload(self, event: HookEvent) -> HookPayload:
        site = self.site
        assert site is not None
        if event is HookEvent.SUBAGENT_START:
            return site.payload(event, prompt=self.prompt)
        return site.payload(event, last_assistant_message=self._last_text())

    def _last_text(self) -> str | None:
        pending = self.ledger.pending
        if pending is not None and pending.text:
            return pending.text
        for message in reversed(self.conversation.messages):
            if message.role == "assistant" and message.text:
                return message.text
        return None

    # -- reporting ----------------------------------------------------------------------

    def _report_hooks(self, outcome: HookOutcome) -> object:
        logger = self.logger
        for message in outcome.user_messages:
            logger.warning("hook problem", hook_event=outcome.event.value, problem=message)
        if outcome.blocked and outcome.event.is_tool_event:
            logger.info("tool call blocked by a hook", reason=outcome.reason)
        return None

    def _report_stop(self, fired: SubagentRunHooks | None) -> None:
        if fired is not None and fired.stop is not None and fired.stop.results:
            self._report_hooks(fired.stop)

    def _drop_notice(self, notice: ChildFinished) -> bool:
        """Drop the notice of a child whose result a foreground ``Task`` call delivered."""
        child = self.services.records.get(notice.agent_id)
        if child is None or not child.awaited:
            return False
        child.awaited = False
        return True

    def close_transcript(self) -> None:
        """Close the transcript writer, releasing its lock (the agent is closed); idempotent.

        A claim no writer took (the start failed first) is let go too.
        """
        self.ledger.close()
        claimed, self._claimed = self._claimed, None
        if claimed is not None:
            claimed.close()
