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

The lifecycle tools reach this runtime through :class:`RuntimeHost`, the
:class:`~subagents.tools.AgentHost` defined here beside :class:`Runtime`: it
calls the runtime directly, and holds what a model may do that the embedding
program may do more freely (a bounded wait for mailbox room, resume limited to
the session lineage, specific errors for agents of an ended process).
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import io
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal, TypeVar, final

import attrs
import trio

from subagents._exceptions import SubagentsError
from subagents.actors import (
    ActorInfo,
    AgentNotFound,
    Bus,
    BusStatistics,
    DepthLimitReached,
    MailboxFull,
    NicknamePool,
    Status,
    Subscription,
    Supervisor,
    SupervisorClosed,
    SupervisorStatistics,
    WaitResult,
    is_final,
)
from subagents.agents import AgentCatalog, AgentDefinition
from subagents.jobs import (
    JobBackend,
    JobBackendUnavailable,
    JobSpec,
    JobSummary,
    load_job_spec,
    run_job,
)
from subagents.runtime._agent_record import AgentHandle, AgentRecord
from subagents.runtime._config.defaults import DEFAULT_MODEL
from subagents.runtime._config.values import RuntimeConfig
from subagents.runtime._exceptions import (
    AgentBusy,
    AgentNotLoaded,
    ProgressNotFound,
    ResumeNotAllowed,
    RuntimeClosed,
    SpawnNotAllowed,
    TranscriptError,
)
from subagents.runtime._hooks.tasks import task_hook_gate
from subagents.runtime._hooks.values import HookRunnerStatistics, hooks_from_specs
from subagents.runtime._lineage import SessionLineage, TranscriptSessions, read_sessions
from subagents.runtime._messages import Conversation
from subagents.runtime._model import ModelChoices
from subagents.runtime._progress.follower import ProgressFollower
from subagents.runtime._progress.tracker import ProgressTracker
from subagents.runtime._progress.values import AgentProgress, ProgressStatistics
from subagents.runtime._result import AgentResult
from subagents.runtime._resume import (
    children_to_reopen,
    load_resumable,
    plan_resume,
    unread_peer_messages,
)
from subagents.runtime._services import Services
from subagents.runtime._task import prepare_task
from subagents.runtime._transcripts.load import find_transcript
from subagents.runtime._transcripts.lock import claim_transcript
from subagents.teams import (
    BoardEvent,
    BoardSeats,
    NotInTeam,
    TaskBoard,
    Team,
    TeamCreated,
    TeamError,
    TeamExists,
    check_team_name,
    open_board,
)
from subagents.tools import (
    DEFAULT_AGENT_TYPE,
    FORK_NOTE,
    LEAD_NAME,
    SEND_INPUT_WAIT_SECONDS,
    AgentReport,
    McpServerStatus,
    PeerDelivery,
    SpawnedAgent,
    TeamInfo,
    ToolContext,
    WaitBounds,
)

__all__ = ["Runtime", "RuntimeHost", "RuntimeStatistics", "Teammate"]

_T = TypeVar("_T")

#: The longest single kernel wait of a wait loop (a wait with no deadline of its own).
_WAIT_CHUNK: Final = 3600.0
#: How long closing a team's agents may take when its ``async with`` block is left.
_TEAM_CLOSE_SECONDS: Final = 30.0
#: Where the teams' records are kept, under the state directory (see ``subagents.teams``).
_TEAM_RECORDS: Final = Path("teams") / "records"
#: The tools that start agents, whose grant may be scoped to some agent types.
_STARTING_TOOLS: Final = frozenset({"spawn_agent", "Task", "Agent"})


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


@attrs.frozen
class _BoardService:
    """A team's running board: the board, the scope that ends it, the nursery of its waker."""

    board: TaskBoard
    scope: trio.CancelScope
    nursery: trio.Nursery
    file: str | None
    """The board's journal, relative to the state directory (``None``: in memory)."""


@attrs.frozen
class Teammate:
    """A teammate a team starts with (:meth:`Runtime.team`): its name, type and first task."""

    name: str
    agent_type: str
    prompt: str
    model: str | None = None


@final
class Runtime:
    """A running set of agents; made by :func:`open_runtime`, valid inside its block.

    Every method is safe to call from any task of the Trio run that opened it.
    Agent ids are the kernel's; statuses are the kernel's statuses.
    """

    __slots__ = (
        "_closed_by",
        "_closed_order",
        "_closing",
        "_follower",
        "_lineage",
        "_models",
        "_role_nicknames",
        "_service_nursery",
        "_sup",
        "bus",
        "catalog",
        "job_backends",
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
        self._follower = (
            ProgressFollower(services.log, services.tracker, told=services.told)
            if follower is None
            else follower
        )
        # The agents' loops feed the follower's tracker directly (AgentRecord.prepare).
        services.tracker = self._follower.tracker
        self._sup: Supervisor | None = None
        self._models = ModelChoices(services.env)
        self._closing = False
        self._closed_order: collections.OrderedDict[str, None] = collections.OrderedDict()
        # Without transcripts: agent -> the agent its latest close was asked for.
        self._closed_by: dict[str, str] = {}
        self._lineage = SessionLineage(services.session_id)
        # Definition name -> the pool of its own nickname candidates (Codex's roles).
        self._role_nicknames: dict[str, NicknamePool] = {}
        #: Where the boards of teams a model creates (``TeamCreate``) run; set by
        #: :func:`open_runtime`.
        self._service_nursery: trio.Nursery | None = None
        #: Makes the backend a job names (``local``...); set by :func:`open_runtime`.
        self.job_backends: Callable[[Runtime, JobSpec], JobBackend] | None = None
        if services.transcripts_enabled:  # a team comes back with its lead's transcript
            services.teams.keep_records(services.config.state_dir / _TEAM_RECORDS)

    def __repr__(self) -> str:
        return f"<Runtime session={self.session_id} agents={len(self.services.records)}>"

    @property
    def config(self) -> RuntimeConfig:
        """The configuration this runtime was opened with."""
        return self.services.config

    @property
    def board_seats(self) -> BoardSeats:
        """Which task board each team member works on: the task tools' caller table.

        A team seats each member here (``board_seats.seat(agent_id, board,
        name)``) so that ``TaskCreate``, ``TaskList``, ``TaskGet`` and
        ``TaskUpdate`` reach its board as that member; an agent without a seat
        gets a tool error saying it is not in a team.
        """
        return self.services.seats

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
        on_init: Callable[[str], None] | None = None,
        nickname: str | None = None,
    ) -> AgentHandle:
        """Start an agent of ``agent_type`` on ``prompt``; return once it is running.

        ``parent`` (an agent id) makes it that agent's child, one level deeper;
        ``model`` overrides the definition's; ``inputs`` are checked against its
        ``inputConfig``; ``background`` keeps only background-safe tools;
        ``fork_context`` (default: the definition's) starts it from the
        parent's conversation. ``on_init`` is called with the agent's id once it
        is set up and before its first turn can run (a team registers a teammate
        there, so the teammate's first tool call already finds its team).
        ``nickname`` replaces the one the runtime would pick (a teammate's name);
        the kernel refuses one an open agent holds. Raises
        :class:`~subagents.agents.UnknownAgentError`
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
            on_init=on_init,
            nickname=nickname,
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
        on_init: Callable[[str], None] | None = None,
        nickname: str | None = None,
        definition: AgentDefinition | None = None,
        job_item: tuple[str, str] | None = None,
    ) -> AgentRecord:
        """Start an agent; ``definition`` replaces the catalog's (a job row's output spec).

        ``job_item`` (``(job_id, item_id)``) marks the agent as the worker of that
        row of a job: it is offered ``report_agent_job_result``.
        """
        self._open_supervisor()
        services = self.services
        if definition is None:
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
            nickname=self._nickname_for(definition) if nickname is None else nickname,
        )
        record.on_init = on_init
        record.job_item = job_item
        await self._start(record, parent)
        services.collector.spawned()
        return record

    # -- agent jobs ---------------------------------------------------------------------

    def jobs_dir(self, state_dir: Path | None = None) -> Path:
        """Where jobs keep their state: ``state_dir``, else the runtime's state dir's ``jobs``."""
        return self.config.state_dir / "jobs" if state_dir is None else state_dir

    async def run_job(
        self,
        spec: JobSpec,
        *,
        backend: JobBackend | None = None,
        cancel: trio.Event | None = None,
    ) -> JobSummary:
        """Run an agent job to its end: one agent of ``spec.agent`` per row of its input.

        A new job is checked before any row starts (its input, its template's
        placeholders, its output schema: :class:`~subagents.jobs.JobInputError`);
        ``spec.job_id`` naming an existing job resumes it, redoing no row
        already final. ``backend`` defaults to the one ``spec.backend`` names
        (``local``: rows as agents of this runtime). Its events
        (:class:`~subagents.jobs.JobStarted`, ``RowFinished``...) go to this
        runtime's bus. Setting ``cancel`` stops it at once, rows under way left
        pending for a resume. Raises :class:`~subagents.jobs.JobLocked` when
        another process runs the job.
        """
        if backend is None:
            if self.job_backends is None:
                raise JobBackendUnavailable(
                    "This runtime has no job backends: open it with open_runtime."
                )
            backend = self.job_backends(self, spec)
        return await run_job(
            spec,
            backend,
            state_dir=self.jobs_dir(spec.state_dir),
            publish=self.bus.publish_nowait,
            cancel=cancel,
        )

    async def resume_job(
        self,
        job_id: str,
        *,
        state_dir: Path | None = None,
        backend: JobBackend | None = None,
        cancel: trio.Event | None = None,
        **changes: Any,
    ) -> JobSummary:
        """Resume job ``job_id`` from its state; ``changes`` replace its spec's run options.

        ``changes`` are :class:`~subagents.jobs.JobSpec` fields such as
        ``max_concurrency`` or ``backend``. Raises
        :class:`~subagents.jobs.UnknownJob` when there is no such job.
        """
        folder = self.jobs_dir(state_dir)
        stored = await trio.to_thread.run_sync(load_job_spec, folder, job_id)
        spec = attrs.evolve(stored, job_id=job_id, state_dir=folder, **changes)
        return await self.run_job(spec, backend=backend, cancel=cancel)

    # -- teams ----------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def team(
        self,
        name: str,
        lead_type: str,
        prompt: str,
        *,
        teammates: Sequence[Teammate] = (),
        description: str = "",
        model: str | None = None,
    ) -> AsyncIterator[Team]:
        """Open team ``name``: a ``lead_type`` lead on ``prompt``, then its ``teammates``.

        The lead is a top-level agent; each teammate is its child, a full
        agent of its own type and model, that messages the others by name
        (``SendMessage``), goes idle between tasks (no slot held) and wakes on
        a message. The lead's prompt ends with the roster, and a message sent
        before every teammate runs waits for them. Leaving the block closes
        the teammates and the lead (at most :data:`_TEAM_CLOSE_SECONDS`);
        the team's events (``team_created``, ``message_sent``,
        ``teammate_idle``, ``team_deleted``) are on :attr:`bus`.

        Raises :class:`~subagents.teams.InvalidTeamName` for a name that is
        not 1-64 letters, digits, '_', '.' or '-' (it names the board's file),
        :class:`~subagents.teams.TeamExists` for a team name open already,
        :class:`~subagents.teams.TeammateNameTaken` for a bad or repeated
        teammate name, and :meth:`spawn`'s errors.
        """
        directory = self.services.teams
        check_team_name(name)
        if directory.get(name) is not None:
            raise TeamExists(name)
        names = tuple(t.name for t in teammates)
        roster = ", ".join(f"{t.name} ({t.agent_type})" for t in teammates) or "none yet"
        made: builtins.list[Team] = []
        async with trio.open_nursery() as nursery:
            service = await nursery.start(self._serve_board, name, made)

            def register(lead_id: str) -> None:
                # Before the lead's first turn: its first tool call finds its team and board.
                team = directory.create(
                    self,
                    name,
                    lead_id,
                    description=description,
                    forming=names,
                    board_file=service.file,
                )
                made.append(team)
                self._equip(team, service)

            try:
                lead = await self._spawn(
                    lead_type,
                    f"{prompt}\n\nYou lead team {name}. Your teammates: {roster}. Message them "
                    "with SendMessage (to: a name, or '*' for everyone); their messages and "
                    "idle notices reach you between your turns. The team shares a task board "
                    "(TaskCreate, TaskList, TaskGet, TaskUpdate).",
                    description=f"lead of team {name}",
                    model=model,
                    inputs=None,
                    background=False,
                    parent=None,
                    fork_context=None,
                    on_init=register,
                    nickname=LEAD_NAME,
                )
            except BaseException:
                service.scope.cancel()
                raise
            team = made[0]
            try:
                await self._announce(team)
                try:
                    for mate in teammates:
                        await team.add(mate.name, mate.agent_type, mate.prompt, model=mate.model)
                finally:
                    team.formed()
                yield team
            except BaseException:
                # Left by an error or a cancellation (Ctrl-C): the lead is closed with its
                # teammates, and the team is not deleted, so resuming the lead brings it back.
                with trio.CancelScope(shield=True), trio.move_on_after(_TEAM_CLOSE_SECONDS):
                    if self._sup is not None and self._is_open(lead.agent_id):
                        await self.close(lead.agent_id)
                team.ended()
                raise
            else:
                with trio.CancelScope(shield=True), trio.move_on_after(_TEAM_CLOSE_SECONDS):
                    await team.close()
                    if self._sup is not None and self._is_open(lead.agent_id):
                        await self.close(lead.agent_id)
                team.ended()

    async def _serve_board(
        self,
        name: str,
        made: builtins.list[Team],
        board_file: str | None = None,
        *,
        task_status: trio.TaskStatus[_BoardService] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Run team ``name``'s board (and its waker, once the team exists) until cancelled.

        The board is kept in ``teams/<session>/<name>.jsonl`` under the state
        directory when transcripts are on (in memory otherwise); its
        ``TaskCreated``/``TaskCompleted`` checkpoints are the runtime's hooks,
        and its changes go on the bus as the team's events. ``made`` receives
        the team once its lead is registered. ``board_file`` is the journal of a
        resumed team's board, relative to the state directory (the board replays it).
        """
        services = self.services
        path = None
        if services.transcripts_enabled:
            if board_file is None:
                board_file = f"teams/{services.session_id}/{name}.jsonl"
            path = services.config.state_dir / board_file
            await trio.to_thread.run_sync(lambda: path.parent.mkdir(parents=True, exist_ok=True))
        else:
            board_file = None

        def publish(event: BoardEvent) -> None:
            if made:
                made[0].on_board_event(event)

        def identify(member: str | None) -> tuple[str, str]:
            team = made[0] if made else None
            if team is None or member is None:
                return ("", "")
            try:
                agent_id = team.agent_id(member)
            except TeamError:
                return (member, "teammate")
            record = services.records.get(agent_id)
            return (agent_id, record.agent_type if record is not None else "teammate")

        gate = task_hook_gate(
            services.hooks,
            session_id=services.session_id,
            cwd=str(services.cwd),
            team_name=name,
            identify=identify,
        )
        with trio.CancelScope() as scope:
            async with (
                open_board(path, gate=gate, publish=publish) as board,
                trio.open_nursery() as nursery,
            ):
                task_status.started(_BoardService(board, scope, nursery, board_file))
                await trio.sleep_forever()

    def _equip(self, team: Team, service: _BoardService) -> None:
        """Give ``team`` its board: the lead seated now, each teammate as it joins; the
        waker started; the board closed when the team ends."""
        seats = self.services.seats
        team.board = service.board
        seats.seat(team.lead_id, service.board, LEAD_NAME)
        team.on_join = lambda agent_id, member: seats.seat(agent_id, service.board, member)

        def closed() -> None:
            seats.unseat_board(service.board)
            service.scope.cancel()

        team.on_close = closed
        service.nursery.start_soon(team.run_waker)

    async def _announce(self, team: Team) -> None:
        """Publish ``team_created`` for ``team`` (its lead is the envelope's agent)."""
        bus = self.bus
        if not bus.wants(TeamCreated):
            return
        lead = self.handle(team.lead_id)
        if bus.has_lossless_subscribers:
            await bus.make_room()
        bus.publish_nowait(
            TeamCreated(
                agent_id=lead.agent_id,
                parent_id=lead.parent_id,
                depth=lead.depth,
                nickname=lead.nickname,
                team_name=team.name,
                description=team.description,
            )
        )

    def _nickname_for(self, definition: AgentDefinition) -> str:
        """The next of the definition's own nicknames ("" for the runtime's pool).

        Codex's ``nickname_candidates`` are the display names of agents of that
        role, handed out as Codex's registry hands out any pool: each name once,
        then the next cycle with an ordinal ("Atlas the 2nd")
        (``reserve_agent_nickname`` in codex-rs ``core/src/agent/registry.rs``).
        The kernel still refuses a name an open agent holds.
        """
        candidates = definition.nickname_candidates
        if not candidates:
            return ""
        pool = self._role_nicknames.get(definition.name)
        if pool is None:
            pool = self._role_nicknames[definition.name] = NicknamePool(candidates)
        name = pool.take()
        # The kernel's pool, not this one, keeps who holds a name: this one only
        # remembers which names its cycle has used, so it holds nothing per agent.
        pool.release(name)
        return name

    def _model(self, wanted: str | None, definition: str | None, parent: AgentRecord | None) -> str:
        services = self.services
        choice = self._models.choose(
            spawn=wanted,
            definition=definition,
            parent=None if parent is None else parent.model,
            aliases=self.catalog.aliases,
            default=services.config.model or DEFAULT_MODEL,
        )
        if choice.diagnostic is not None:
            services.log.logger().warning("unknown model name", detail=choice.diagnostic)
        return choice.model

    async def _start(self, record: AgentRecord, parent: str | None) -> None:
        sup = self._open_supervisor()
        if record.fetches_tools:  # MCP servers start next: a spawn over a limit fails first
            try:
                sup.check_room(parent)
            except SupervisorClosed:
                raise RuntimeClosed from None
            await record.fetch_tools()
        # A new agent starts with no handshake (its behavior runs from the next scheduler
        # pass); a resumed one through it (see AgentRecord.init).
        resumed = bool(record.agent_id)
        try:
            await sup.spawn(
                record.behave,
                parent=parent,
                label=record.agent_type,
                nickname=record.nickname or None,
                agent_id=record.agent_id or None,
                init=record.init if resumed else None,
                prepare=None if resumed else record.prepare,
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
        last run (final and open, ready for :meth:`send_input`). Its nickname
        comes back verbatim unless an open agent holds it. The descendants it
        had open when it stopped (closed with it, or open when its process
        ended) come back with it, each under its own parent, as Codex's
        ``resume_agent`` does; a child closed on its own stays closed, and one
        a limit refuses is logged and left closed. A team it led comes back
        with it unless the team was ended on purpose (``TeamDelete``, the
        ``team`` block left normally): the same name, its teammates by name,
        its board reopened from the same journal, and the peer messages left
        unread in a mailbox delivered once.

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
        tree: dict[str, builtins.list[str]] | None = None,
    ) -> Status:
        """Resume for :meth:`resume` (``by_user``: its sessions join the lineage) or a tool.

        ``input_timeout`` bounds the wait for mailbox room when ``prompt`` goes
        to an open agent (see :meth:`send_input`); ``tree`` is the children to
        reopen, when a resume of an ancestor read them already.
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
        team_service: _BoardService | None = None
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
            team_service = await self._reopen_team(record)  # a team it led comes back
            try:
                await self._start(record, parent)
            except BaseException:
                if team_service is not None:
                    team_service.scope.cancel()
                raise
        except BaseException:  # re-raised: the lock is let go unless the agent got going
            if not self._is_open(agent_id):
                if record is not None:
                    record.close_transcript()
                if claimed is not None:
                    claimed.close()
            raise
        self._closed_order.pop(agent_id, None)
        self._closed_by.pop(agent_id, None)
        record.logger.info("agent resumed", idle=plan.restore is not None, parent_id=parent)
        await self._reopen_children(agent_id, tree)
        if team_service is not None:
            await self._redeliver_unread(agent_id)
        return sup.status(agent_id)

    async def _redeliver_unread(self, lead_id: str) -> None:
        """Deliver again, once, the peer messages of the team ``lead_id`` leads that were
        in a mailbox, unread, when its process ended (:func:`unread_peer_messages`); one
        that cannot be delivered now is logged, as its sender was told it was delivered."""
        team = self.services.teams.of(lead_id)
        if team is None:
            return
        names = {lead_id: LEAD_NAME} | {agent_id: name for name, agent_id in team.members}
        records = self.services.records
        conversations = {
            agent_id: record.conversation
            for agent_id in names
            if self._is_open(agent_id) and (record := records.get(agent_id)) is not None
        }
        for to_id, framed in unread_peer_messages(team.name, names, conversations):
            delivery = await team.redeliver(to_id, framed)
            if not delivery.delivered:
                self.services.log.logger(parent_id=lead_id).warning(
                    "peer message lost with the process", to_id=to_id, reason=delivery.reason
                )

    async def _reopen_team(self, record: AgentRecord) -> _BoardService | None:
        """Prepare the team ``record``'s agent led, if it led one that was not ended on
        purpose: its board reopened from the same journal (which replays its tasks,
        owners, statuses and blockers), and the team itself registered as the lead
        starts (``on_init``), its teammates members again by name before they are
        reopened, so each finds its team and its seat from its first turn.

        A team whose name is open already is logged and left out; the lead comes back
        without it. Returns the board's service, or ``None`` without a team.
        """
        directory = self.services.teams
        stored = directory.stored(record.agent_id)
        nursery = self._service_nursery
        if stored is None or nursery is None or directory.of(record.agent_id) is not None:
            return None
        if directory.get(stored.name) is not None:
            record.logger.warning("team not resumed", team_name=stored.name, reason="name open")
            return None
        made: builtins.list[Team] = []
        service: _BoardService = await nursery.start(
            self._serve_board, stored.name, made, stored.board
        )

        def register(lead_id: str) -> None:
            team = directory.restore(self, stored)
            made.append(team)
            self._equip(team, service)
            directory.rejoin_all(team, stored)
            team.formed()

        record.on_init = register
        return service

    async def _reopen_children(
        self, agent_id: str, tree: dict[str, builtins.list[str]] | None
    ) -> None:
        """Bring back the children ``agent_id`` had open when it stopped, and theirs.

        As Codex's ``resume_agent_from_rollout`` (openai/codex
        ``codex-rs/core/src/agent/control.rs``): a child closed on its own stays
        closed; one that cannot come back (a limit, a transcript in use or
        unreadable) is logged and skipped, and the resume goes on. The depth
        limit bounds the recursion. ``tree`` (parent -> children to reopen) is
        read from the transcripts once per resume, by its first call.
        """
        if tree is None:
            tree = self._children_to_reopen()
        for child in tree.get(agent_id, ()):
            if self._is_open(child):
                continue
            try:
                await self._resume(child, None, fallback_parent=None, tree=tree)
            except SubagentsError as exc:
                self.services.log.logger(parent_id=agent_id).warning(
                    "descendant not resumed", agent_id=child, reason=str(exc)
                )

    def _children_to_reopen(self) -> dict[str, builtins.list[str]]:
        services = self.services
        if services.transcripts_enabled:
            return children_to_reopen(services.config.state_dir)
        tree: dict[str, builtins.list[str]] = {}
        for record in services.records.values():
            if record.parent_id is not None and self._closed_by.get(record.agent_id) != (
                record.agent_id
            ):
                tree.setdefault(record.parent_id, []).append(record.agent_id)
        return tree

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
        """Wait until any (or all) of the agents are final, or ``timeout`` seconds pass.

        Called by an agent (its ``wait`` tool), the final statuses returned of
        its own children are collected: their notices of those ends are not
        queued for it as well (Codex's wait tracking).
        """
        sup = self.supervisor
        result = await sup.wait(agent_ids, timeout=timeout, mode=mode)
        caller = sup.current_agent()
        owner = None if caller is None else self.services.records.get(caller)
        if owner is not None and owner.actor is not None:
            for agent_id, status in result.statuses.items():
                child = self.services.records.get(agent_id)
                if is_final(status) and child is not None and child.parent_id == caller:
                    owner.actor.collected(agent_id, status)
        return result

    async def close(self, agent_id: str, *, grace: float | None = None) -> Status:
        """Close the agent and its open descendants; return its previous status. Idempotent.

        ``grace`` overrides the close grace period (0 cancels at once). A team
        whose lead is closed ends with it: its teammates are closed (they are
        the lead's children) and its board closes. Every
        agent closed ends Shutdown, a finished one included, and its transcript
        says so with a ``closed`` line naming ``agent_id``: a later resume of an
        ancestor brings back the descendants closed with it, not ``agent_id``
        itself when it was closed on its own (Codex's ``close_agent``).
        """
        subtree = self._open_subtree(agent_id)
        previous = await self.supervisor.close(agent_id, grace=grace)
        for closed in subtree:  # a team whose lead is closed ends, its board with it
            team = self.services.teams.of(closed)
            if team is not None and team.lead_id == closed:
                team.ended()
        written: builtins.list[AgentRecord] = []
        for closed in subtree:
            if not self.services.transcripts_enabled:  # else the transcript says it
                self._closed_by[closed] = agent_id
            record = self.services.records.get(closed)
            if record is not None and record.writer is not None:
                problem: TranscriptError | None = None
                try:
                    # fsync-ed below, with the other results and closes of the pass, in
                    # worker threads: one fsync in the Trio thread per close stalled every
                    # agent (a job closes an agent per row)
                    record.writer.append_closed(agent_id, sync=False)
                    written.append(record)
                except TranscriptError as exc:  # logged: the close itself is done
                    problem = exc
                if problem is not None:
                    record.logger.error("transcript problem", error=str(problem))
        if len(written) == 1:  # one agent (most closes): no nursery, no task to start and join
            await self._sync_closed(written[0])
        elif written:
            async with trio.open_nursery() as nursery:
                for record in written:
                    nursery.start_soon(self._sync_closed, record)
        self._sweep(agent_id)
        return previous

    async def _sync_closed(self, record: AgentRecord) -> None:
        """``fsync`` the ``closed`` line just written; a failure is logged (the close is done)."""
        with contextlib.suppress(TranscriptError):  # the ledger logged it
            await record.ledger.sync(self.services.flusher)

    def _open_subtree(self, agent_id: str) -> builtins.list[str]:
        """``agent_id`` and its descendants that are open now (none if it is closed)."""
        if not self._is_open(agent_id):
            return []
        return self.supervisor.subtree(agent_id)

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

    def job_report(self, agent_id: str) -> dict[str, Any] | None:
        """The result the agent's job row reported (``report_agent_job_result``), if any.

        A row's backend reads it when the agent's run ends: an accepted report
        is the row's result, as Codex's worker result is.
        """
        record = self.services.records.get(agent_id)
        return None if record is None else record.job_report

    def handle(self, agent_id: str) -> AgentHandle:
        """The agent's identity; raises ``AgentNotFound`` for an id without a record."""
        return self._record(agent_id).handle()

    def conversation(self, agent_id: str) -> Conversation:
        """The agent's conversation so far (a live view: read it, do not change it)."""
        return self._record(agent_id).conversation

    def transcript_path(self, agent_id: str) -> Path | None:
        """Where the agent's transcript is written (``None`` when transcripts are off)."""
        file = self._record(agent_id).transcript_file
        return None if file is None else Path(file)

    def progress(self, agent_id: str) -> AgentProgress:
        """The agent's progress: tokens, tool uses, turns, last activities, subtree totals."""
        return self.tracker.progress(agent_id)

    def tree(self) -> builtins.list[AgentProgress]:
        """Every agent's progress, depth-first from the top-level agents."""
        return self.tracker.tree()

    def subscribe(self, **options: Any) -> Subscription:
        """Subscribe to the bus (see :meth:`Supervisor.subscribe` for the options)."""
        return self.supervisor.subscribe(**options)

    def agent_types(self) -> Sequence[tuple[str, str]]:
        """Every agent type that can be spawned, as ``(name, description)``."""
        return [(d.name, d.description) for d in self.catalog]

    def mcp_servers(self) -> builtins.list[McpServerStatus]:
        """Each MCP server's name, transport, status and error (``subagents tools list``)."""
        return self.services.mcp.statuses()

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
            self._closed_by.pop(forgotten, None)

    def _bind(self, supervisor: Supervisor) -> None:
        """Called by :func:`open_runtime` once the supervisor is open."""
        self._sup = supervisor

    def _shut(self) -> None:
        """After the supervisor has exited: every transcript closed, nothing more accepted,
        every team ended (its board closed)."""
        self._closing = True
        for team in self.services.teams.teams():
            team.ended()
        for record in self.services.records.values():
            record.close_transcript()


@final
class RuntimeHost:
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
        fork_context: bool | None = None,
        background: bool = False,
    ) -> SpawnedAgent:
        """Spawn a child of the caller; ``fork_context=None`` leaves the definition's choice.

        ``True`` forks the caller's conversation and ``False`` gives a fresh
        context whatever the definition says (Codex's ``fork_context``).
        """
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
            fork_context=fork_context,
        )
        output = record.transcript_file
        return SpawnedAgent(
            record.agent_id,
            record.nickname,
            record.agent_type,
            output_file=output if background else None,
        )

    def _check_depth(self, caller: ToolContext) -> None:
        """Refuse steering agents by id from an agent at ``max_depth``.

        Only ``SendMessage`` reaches here from such an agent (a teammate keeps it
        to message peers by name); by id it may not steer agents, as the
        ``send_input`` it stands for is removed at the limit.
        """
        max_depth = self._runtime.config.limits.max_depth
        if caller.depth >= max_depth:
            raise DepthLimitReached(max_depth)

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
        self._check_depth(caller)
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
        self._check_depth(caller)
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
        """Every agent type of the runtime's catalog; a forking one's description says so."""
        return [
            (d.name, f"{d.description} {FORK_NOTE}" if d.fork_context else d.description)
            for d in self._runtime.catalog
        ]

    def explain_not_found(self, caller: ToolContext, agent_id: str) -> str | None:
        """For an id the runtime does not hold: what its transcript says to do, if it has one."""
        error = self._not_loaded(agent_id)
        return None if error is None else str(error)

    # -- teams (the TeamHost half) -----------------------------------------------------------

    def peer_names(self, caller: ToolContext) -> Sequence[str] | None:
        """What ``SendMessage``'s ``to`` may be for the caller; ``None`` outside a team."""
        team = self._runtime.services.teams.of(caller.agent_id)
        return None if team is None else team.peer_names(caller.agent_id)

    async def send_peer(self, caller: ToolContext, to: str, message: str) -> Sequence[PeerDelivery]:
        """A peer message from the caller to ``to`` (a name, ``"*"`` or ``"lead"``)."""
        team = self._runtime.services.teams.of(caller.agent_id)
        if team is None:
            raise NotInTeam(caller.agent_id)
        return await team.send(caller.agent_id, to, message)

    async def create_team(self, caller: ToolContext, team_name: str, description: str) -> TeamInfo:
        """The caller becomes the lead of a new team; ``team_created`` is published."""
        runtime = self._runtime
        directory = runtime.services.teams
        if directory.get(team_name) is not None:
            raise TeamExists(team_name)
        if directory.of(caller.agent_id) is not None:
            led = directory.of(caller.agent_id)
            assert led is not None
            raise TeamExists(led.name, lead=led.lead_id == caller.agent_id)
        nursery = runtime._service_nursery
        if nursery is None:
            raise RuntimeClosed
        made: builtins.list[Team] = []
        service = await nursery.start(runtime._serve_board, team_name, made)
        try:
            team = directory.create(
                runtime,
                team_name,
                caller.agent_id,
                description=description,
                board_file=service.file,
            )
        except BaseException:
            service.scope.cancel()
            raise
        made.append(team)
        runtime._equip(team, service)
        await runtime._announce(team)
        return team.info()

    async def add_teammate(
        self,
        caller: ToolContext,
        name: str,
        *,
        agent_type: str,
        prompt: str,
        model: str | None = None,
    ) -> SpawnedAgent:
        """Start teammate ``name`` of the team the caller leads (a child of the caller)."""
        team = self._runtime.services.teams.of(caller.agent_id)
        if team is None or team.lead_id != caller.agent_id:
            raise NotInTeam(caller.agent_id)
        self._check_scope(caller, agent_type)
        agent_id = await team.add(name, agent_type, prompt, model=model)
        record = self._runtime._record(agent_id)
        return SpawnedAgent(agent_id, record.nickname, record.agent_type)

    async def delete_team(self, caller: ToolContext) -> TeamInfo:
        """End the team the caller leads: its teammates are closed."""
        team = self._runtime.services.teams.of(caller.agent_id)
        if team is None or team.lead_id != caller.agent_id:
            raise NotInTeam(caller.agent_id)
        info = team.info()
        await team.close()
        return info

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
