"""Opening a runtime: configuration, agent types, provider, log, supervisor, progress.

:func:`open_runtime` is the one way to get a :class:`~subagents.runtime.Runtime`.
It reads what start-up needs (the configuration files, the agent definitions)
in a worker thread, picks and opens the provider unless one is given, opens the
session's log, the supervisor and the progress follower, and closes them all,
in reverse order, when its block is left: agents end Shutdown, every
transcript is closed, then the progress follower, the provider and the log.

Old transcripts are removed when the block is left normally, not at start-up:
by then every agent the runtime resumed has written to its transcript, so the
session of an agent being resumed is never old, and a session with an agent
live in another runtime is locked, so retention leaves it alone.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import os
import secrets
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path

import attrs
import trio

from subagents.actors import Bus, open_supervisor
from subagents.agents import AgentCatalog, discover_agents
from subagents.runtime._collector import CollectorGuard
from subagents.runtime._config.loader import load_config
from subagents.runtime._config.trust import ProjectTrust, restrict_catalog, trust_notice
from subagents.runtime._config.trusted_folders import load_trust_store, project_folder
from subagents.runtime._config.values import RuntimeConfig
from subagents.runtime._exceptions import TranscriptError
from subagents.runtime._file_limit import (
    FileLimitGuard,
    open_files_limit,
    reserve_descriptors,
)
from subagents.runtime._hooks.runner import HookRunner
from subagents.runtime._hooks.values import Hook
from subagents.runtime._job_host import JobToolHost
from subagents.runtime._jobs.backends import job_backend
from subagents.runtime._logging import RuntimeLog, open_log
from subagents.runtime._mcp import runtime_mcp_servers
from subagents.runtime._progress.follower import ProgressFollower
from subagents.runtime._providers.anthropic import AnthropicProvider
from subagents.runtime._providers.base import Provider
from subagents.runtime._providers.scripted import ScriptedProvider
from subagents.runtime._runtime import Runtime, RuntimeHost
from subagents.runtime._services import Services
from subagents.runtime._transcripts.retention import PrunedSession, clean_old_transcripts
from subagents.teams import board_tools
from subagents.tools import (
    ApprovalCallback,
    CallbackApprover,
    McpProject,
    McpServers,
    SecretRedactor,
    Tool,
    builtin_tools,
    lifecycle_tools,
    open_mcp_servers,
    read_mcp_json,
)

__all__ = ["new_session_id", "open_runtime"]


def new_session_id() -> str:
    """A sortable, unique session id: ``YYYYMMDD-HHMMSS-<6 hex>`` (UTC)."""
    now = datetime.datetime.now(datetime.UTC)
    return f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


@attrs.frozen
class _Setup:
    config: RuntimeConfig
    catalog: AgentCatalog
    cwd: Path
    home: Path
    #: Whether the trust decision came from the user's trust store (nobody was asked).
    from_store: bool = False


def _trusted(
    given: RuntimeConfig | None, config: RuntimeConfig, root: Path, home: Path, trust: bool | None
) -> tuple[bool, bool]:
    """Whether the project is trusted, and whether nobody but the trust store decided.

    A caller that passed ``trust_project``, or loaded ``config`` itself (and
    has its ``project``), decided and can show what was ignored; otherwise
    the trust store decided, and the notice is logged as a warning.
    """
    if trust is not None:
        return trust, False
    if config.project is not None:
        return config.project.trusted, given is None
    return load_trust_store(home).trusts(project_folder(root)), True


def _setup(
    config: RuntimeConfig | None,
    cwd: str | os.PathLike[str] | None,
    home: str | os.PathLike[str] | None,
    env: Mapping[str, str],
    agents_json: str | None,
    trust_project: bool | None = None,
) -> _Setup:
    """The blocking part of start-up (files read), run in a thread."""
    root = Path(os.path.abspath(Path.cwd() if cwd is None else cwd))
    home_dir = Path.home() if home is None else Path(home)
    given = config
    if config is None:
        config = load_config(cwd=root, home=home_dir, env=env, trust_project=trust_project)
    trusted, from_store = _trusted(given, config, root, home_dir, trust_project)
    catalog = discover_agents(
        cwd=root,
        home=home_dir,
        agents_json=agents_json,
        aliases=config.alias_table(),
        trusted_project=trusted,
    )
    ignored: tuple[str, ...] = ()
    if config.project is not None and not config.project.trusted:
        ignored = config.project.ignored
    if not trusted:
        restriction = restrict_catalog(catalog)
        catalog = restriction.catalog
        ignored = (*ignored, *catalog.withheld, *restriction.ignored)
    project = ProjectTrust(project_folder(root), trusted, ignored)
    config = attrs.evolve(config, project=project)
    return _Setup(config, catalog, root, home_dir, from_store)


def _mcp_servers(
    config: RuntimeConfig, project: McpProject, log: RuntimeLog
) -> contextlib.AbstractAsyncContextManager[McpServers]:
    """The ``[mcp_servers.NAME]`` servers and the project's ``.mcp.json`` ones.

    ``.mcp.json`` is repository code, started only in a trusted workspace (the
    project file's ``mcp_servers`` are already left out by the loader then).
    """
    for problem in project.problems:
        log.logger().warning("MCP server problem", problem=problem)
    configs, untrusted = runtime_mcp_servers(config, project)
    for status in untrusted:
        log.logger().warning("MCP server not started", server=status.name, error=status.error)
    return open_mcp_servers(configs, untrusted)


def _log_trust(log: RuntimeLog, config: RuntimeConfig, *, quiet: bool) -> None:
    """Log what an untrusted project had ignored: a warning unless a caller already said so."""
    project = config.project
    if project is None or project.trusted or not project.ignored:
        return
    notice = trust_notice(project.folder, project.ignored)
    if quiet:  # the caller decided (the CLI printed its own notice)
        log.logger().info("project not trusted", notice=notice)
    else:
        log.logger().warning("project not trusted", notice=notice)


def _retention(config: RuntimeConfig) -> list[PrunedSession]:
    """Old transcripts removed as the runtime closes (see the module docstring)."""
    return clean_old_transcripts(config.state_dir, config.transcripts.retention_days)


def _chosen_provider(
    config: RuntimeConfig, env: Mapping[str, str]
) -> AnthropicProvider | ScriptedProvider:
    if config.resolved_provider(env) == "anthropic":
        return AnthropicProvider(env=env)
    return ScriptedProvider()


@contextlib.asynccontextmanager
async def open_runtime(
    config: RuntimeConfig | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    home: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    provider: Provider | None = None,
    approval_callback: ApprovalCallback | None = None,
    bus: Bus | None = None,
    agents_json: str | None = None,
    hooks: Iterable[Hook] = (),
    tools: Iterable[Tool] = (),
    trust_project: bool | None = None,
) -> AsyncIterator[Runtime]:
    """Open a runtime whose agents live no longer than this ``async with`` block.

    ``config`` defaults to :func:`load_config` in ``cwd`` (default: the current
    folder) with ``home`` (default: ``~``) and ``env`` (default:
    ``os.environ``). Agent types are discovered from ``cwd`` and ``home``
    (plus ``agents_json``, the CLI's ``--agents``). ``provider`` is used as
    given (its owner opens and closes it); without one the configured provider
    is made, opened and closed here (scripted when no API key is set).
    ``approval_callback`` answers the approval requests that reach the top of
    the agent tree (without one they are denied). ``bus`` lets a subscriber
    watch from before the first agent to after the last event. ``hooks`` are
    global hooks added to the configured ones (Python callables welcome);
    ``tools`` are offered to every agent along with the built-in and lifecycle
    tools, through the same filter (a definition's ``tools`` list, trust...).

    ``trust_project`` says whether the project folder (the git root above
    ``cwd``, else ``cwd``) is trusted: its ``subagents.toml`` hooks, state_dir
    and retention, and its agent definitions' hooks and auto-approval, apply
    only then. ``None`` takes the decision of ``config`` (made by
    :func:`load_config`) or else asks the user's trust store; code that embeds
    the runtime is the user's own and may pass ``True``. What an untrusted
    project had ignored is in ``runtime.config.project`` and in the log (a
    warning, on stderr too, when the trust store decided).

    When the block is left without an error, transcripts older than
    ``transcripts.retention_days`` are removed (only what this runtime wrote,
    and no session with a live agent: see
    :func:`~subagents.runtime.clean_old_transcripts`). Start-up, and that
    clean-up, read files in a worker thread: under a mock clock that
    autojumps (tests), a deadline already running outside the block can be
    jumped to meanwhile, so start such deadlines inside it.
    """
    env = os.environ if env is None else env
    setup = await trio.to_thread.run_sync(
        _setup, config, cwd, home, env, agents_json, trust_project
    )
    config, catalog, root, home_dir = setup.config, setup.catalog, setup.cwd, setup.home
    session_id = new_session_id()
    supervisor_config = config.supervisor_config()
    if bus is None:
        bus = Bus(
            default_capacity=supervisor_config.bus_capacity,
            default_max_block=supervisor_config.bus_max_block,
        )
    async with contextlib.AsyncExitStack() as stack:
        log = stack.enter_context(open_log(config, session_id, env=env))
        # Each open agent holds its transcript open: room for thousands of them.
        transcripts = config.transcripts
        stack.enter_context(FileLimitGuard(transcripts.enabled and transcripts.raise_file_limit))
        # ... and the descriptor table grown for them now, not in the middle of their spawns.
        if transcripts.enabled:
            await reserve_descriptors(config.limits.max_threads)
        chosen: Provider
        if provider is None:
            chosen = await stack.enter_async_context(_chosen_provider(config, env))
        else:
            chosen = provider
        # Secrets of the process and of ``env`` (the provider's key may be in either).
        redactor = SecretRedactor.from_environ(os.environ, env)
        services = Services(
            config=config,
            session_id=session_id,
            cwd=root,
            home=home_dir,
            env=env,
            provider=chosen,
            hooks=HookRunner(
                (*config.global_hooks(), *hooks),
                bus=bus,
                cwd=root,
                env_passthrough=config.env_passthrough,
                redactor=redactor,
            ),
            log=log,
            trust=config.trust_policy(),
            root_approver=(
                None if approval_callback is None else CallbackApprover(approval_callback)
            ),
            redactor=redactor,
            collector=stack.enter_context(CollectorGuard(config.collector)),
        )
        # ${VAR} in .mcp.json is expanded only for a trusted workspace's file
        trusted = config.project is None or config.project.trusted
        mcp_project = await trio.to_thread.run_sync(read_mcp_json, root, env if trusted else None)
        services.mcp = await stack.enter_async_context(_mcp_servers(config, mcp_project, log))
        follower = ProgressFollower(log, services.tracker, told=services.told)
        runtime = Runtime(services, catalog=catalog, bus=bus, follower=follower)
        runtime.job_backends = functools.partial(job_backend, opener=open_runtime)
        services.tools = (
            *builtin_tools(
                env_passthrough=config.env_passthrough,
                allow_private_addresses=config.web.allow_private_addresses,
            ),
            *tools,
            *lifecycle_tools(host := RuntimeHost(runtime), host, JobToolHost(runtime)),
            *board_tools(services.seats),
        )
        body_error: BaseException | None = None
        async with trio.open_nursery() as nursery:
            follower.attach(bus)
            await nursery.start(services.flusher.run, name="subagents transcripts")
            # The log's lines of a pass in one write at its end, as the transcripts' are
            # (not while the flusher waits for their fsync calls: a log waits for no disk).
            log.batch_with(services.flusher.want_soon)
            try:
                async with open_supervisor(supervisor_config, bus=bus) as sup:
                    runtime._bind(sup)
                    runtime._service_nursery = nursery
                    log.logger().info(
                        "runtime opened",
                        cwd=str(root),
                        state_dir=str(config.state_dir),
                        provider=getattr(chosen, "name", type(chosen).__name__),
                        agent_types=len(catalog),
                        open_files_limit=open_files_limit(),
                    )
                    for problem in catalog.errors:
                        log.logger().warning("agent definition problem", problem=problem.format())
                    for warning in config.warnings:
                        log.logger().warning("settings problem", problem=warning)
                    _log_trust(log, config, quiet=not setup.from_store)
                    yield runtime
            except BaseException as exc:  # re-raised below, once the service tasks have finished
                body_error = exc
            finally:
                runtime._shut()
                try:
                    services.flusher.stop()
                finally:
                    log.batch_with(None)
                follower.detach()
        removed = 0
        try:
            if body_error is None:
                pruned = await trio.to_thread.run_sync(_retention, config)
                removed = sum(len(item.transcripts) for item in pruned)
        except (OSError, TranscriptError) as exc:  # the run has succeeded: say it, go on
            log.logger().warning("old transcripts not removed", error=str(exc))
        finally:
            log.logger().info(
                "runtime closed", agents=len(services.records), transcripts_removed=removed
            )
    if body_error is not None:
        raise body_error
