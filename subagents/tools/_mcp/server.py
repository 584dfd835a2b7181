"""MCP server connections: started on first use, shared, restarted, closed with their scope.

Each server's connection (``stdio_client`` or ``streamable_http_client``, then
``ClientSession``) lives in one task of the :class:`McpServers` nursery,
because the SDK's context managers must be left in the task that entered
them. The first caller starts it and waits, at most ``startup_timeout``, for
``initialize`` and ``tools/list``; later callers share the session. A call runs
under the earlier of the agent's deadline and ``call_timeout``. A server whose
process dies (or whose HTTP endpoint stops answering) gives tool errors, and
the next use after a backoff (doubled per failure) starts it again. A startup
failure is one line (:attr:`McpServerStatus.error`) and never raises into the
run. ``notifications/tools/list_changed`` marks the list stale and the
connection task lists the tools again (notifications that arrive meanwhile are
folded into one more listing, so nothing queues up); a tool the server no
longer offers gives a tool error. Leaving :func:`open_mcp_servers` closes every
connection: the SDK ends a stdio server's process (stdin closed, then
terminate, then kill) and ends an HTTP session with ``DELETE``.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import IO, TYPE_CHECKING, Any, Literal, TextIO

import attrs
import httpx2
import trio

from subagents.tools._config import (
    MCP_DESCRIPTION_MAX_CHARS,
    MCP_RESOURCE_LIST_MAX,
    MCP_TOOLS_MAX,
)
from subagents.tools._exceptions import ToolError, ToolRegistrationError
from subagents.tools._mcp.config import McpServerConfig, mcp_tool_name
from subagents.tools._mcp.tool import McpTool, arguments_struct
from subagents.tools._protocol import ToolFlags, ToolResult
from subagents.tools._registry import validate_tool_name

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import ReadResourceResult, Resource

# The ``mcp`` SDK is imported where a server is used, not here: it takes more than
# half a second to import, which every process paid (the CLI's start, each Ray
# worker's) whether or not it had an MCP server configured.

__all__ = ["McpServer", "McpServerStatus", "McpServers", "open_mcp_servers"]

Status = Literal["not started", "starting", "running", "failed", "closed", "not trusted"]

_STDERR_TAIL_BYTES = 2048


@attrs.frozen
class McpServerStatus:
    """What ``subagents tools list`` shows of a server."""

    name: str
    transport: str
    status: Status
    error: str | None = None


def _stderr_tail(log: IO[str]) -> str:
    try:
        log.flush()
        size = log.seek(0, os.SEEK_END)
        log.seek(max(0, size - _STDERR_TAIL_BYTES))
        lines = [line.strip() for line in log.read().splitlines() if line.strip()]
    except (OSError, ValueError):
        return ""
    return lines[-1][:300] if lines else ""


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _one_line(exc: BaseException) -> str:
    exc = _leaf(exc)
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__


def _http_headers(config: McpServerConfig) -> dict[str, str]:
    """The headers of an HTTP server: static ones, then those read from the environment now."""
    headers = dict(config.headers)
    for header, variable in config.env_headers.items():
        value = os.environ.get(variable)
        if value:
            headers[header] = value
    if config.bearer_token_env_var is not None:
        token = os.environ.get(config.bearer_token_env_var)
        if not token:
            raise ValueError(
                f"environment variable {config.bearer_token_env_var} "
                "(bearer_token_env_var) is not set; set it to the server's token"
            )
        headers["Authorization"] = f"Bearer {token}"
    return headers


@asynccontextmanager
async def _http_transport(config: McpServerConfig, log: TextIO) -> AsyncIterator[Any]:
    """The SDK's streamable HTTP transport over a client this connection owns and closes.

    Connect, write and pool waits are bounded by ``startup_timeout``; a read
    by the SDK's own limit for its long-lived event streams (the standalone
    GET stream is idle between server messages, and the SDK stops reopening it
    after a few failures), at least ``call_timeout``; a call's own deadline is
    a Trio cancel scope above this. An HTTP error status goes to ``log`` (the
    SDK reports a 401 only as "Server returned an error response").
    """
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, create_mcp_http_client

    assert config.url is not None
    read = max(config.call_timeout, MCP_DEFAULT_SSE_READ_TIMEOUT)
    timeout = httpx2.Timeout(config.startup_timeout, read=read)

    async def note_error(response: httpx2.Response) -> None:
        if response.status_code >= 400:
            log.write(
                f"HTTP {response.status_code} {response.reason_phrase} "
                f"on {response.request.method}\n"
            )

    async with (
        create_mcp_http_client(headers=_http_headers(config), timeout=timeout) as client,
        streamable_http_client(config.url, http_client=client) as streams,
    ):
        client.event_hooks["response"].append(note_error)
        yield streams


def _result_text(result: Any) -> str:
    parts: list[str] = []
    for block in result.content:
        text = getattr(block, "text", None)
        if isinstance(text, str):
            parts.append(text)
        else:
            parts.append(f"[{getattr(block, 'type', 'content')} content omitted]")
    if not parts and result.structured_content is not None:
        import json

        parts.append(json.dumps(result.structured_content))
    return "\n".join(parts)


class McpServer:
    """One configured MCP server, its connection task and its tools."""

    def __init__(self, config: McpServerConfig, nursery: trio.Nursery) -> None:
        self.config = config
        self._nursery = nursery
        self._status: Status = "not started"
        self._error: str | None = None
        self._session: ClientSession | None = None
        self._tools: tuple[McpTool, ...] = ()
        self._left_out: tuple[str, ...] = ()
        self._ready: trio.Event | None = None
        self._stop: trio.CancelScope | None = None
        self._failures = 0
        self._retry_at = -math.inf
        self._closed = False
        self._listings = 0
        self._listed = trio.Event()
        self._stale = False

    @property
    def name(self) -> str:
        """The server's configured name."""
        return self.config.name

    def status(self) -> McpServerStatus:
        """The server's state now; a running server's ``error`` names the tools left out."""
        error = self._error
        if error is None and self._status == "running" and self._left_out:
            error = "tools left out: " + "; ".join(self._left_out)
        return McpServerStatus(self.name, self.config.transport, self._status, error)

    def _usable(self, listed: Sequence[Any]) -> tuple[tuple[McpTool, ...], tuple[str, ...]]:
        """The listed tools a model API accepts, and one note per tool left out.

        A server's list is not trusted: a name no API accepts (``bad name!``,
        over 64 characters with its prefix) or a second tool of one name would
        make every model request of the agent fail, so those are left out; a
        list longer than ``MCP_TOOLS_MAX`` is cut.
        """
        tools: list[McpTool] = []
        left_out: list[str] = []
        seen: set[str] = set()
        for tool in listed:
            name = str(getattr(tool, "name", ""))
            shown = repr(name[:40] + ("..." if len(name) > 40 else ""))
            if len(tools) >= MCP_TOOLS_MAX:
                left_out.append(f"{len(listed) - MCP_TOOLS_MAX} past the first {MCP_TOOLS_MAX}")
                break
            try:
                validate_tool_name(mcp_tool_name(self.name, name))
            except ToolRegistrationError:
                left_out.append(f"{shown} (not a valid tool name)")
                continue
            if name in seen:
                left_out.append(f"{shown} (listed twice)")
                continue
            seen.add(name)
            tools.append(self._adapt(tool))
        return tuple(tools), tuple(left_out)

    async def tools(self) -> tuple[McpTool, ...]:
        """The server's tools, starting it if needed; ``()`` when it cannot start.

        After a ``list_changed`` the new list is waited for (at most
        ``call_timeout``), so the caller never gets the list the server replaced.
        """
        await self._ensure_started()
        if self._stale and self._status == "running":
            await self.wait_listings(self._listings + 1)
        return self._tools if self._status == "running" else ()

    @property
    def listings(self) -> int:
        """How many tool lists this server has given (a start, or a ``list_changed``)."""
        return self._listings

    async def wait_listings(self, count: int) -> bool:
        """Wait, at most ``call_timeout``, until :attr:`listings` reaches ``count``.

        For a caller that knows the server changed its tools (it sent
        ``notifications/tools/list_changed``) and must see the new list.
        """
        with trio.move_on_after(self.config.call_timeout):
            while self._listings < count and self._status in ("running", "starting"):
                await self._listed.wait()
        return self._listings >= count

    async def call_tool(
        self, tool: str, arguments: Mapping[str, Any], *, deadline: float = math.inf
    ) -> ToolResult:
        """Call ``tool``; every failure (crash, deadline, protocol) is an error result."""
        await self._ensure_started()
        session = self._session
        if session is None or self._status != "running":
            return ToolResult.error(
                f"MCP server {self.name!r} is not available ({self._error or self._status}); "
                "try again later or use another tool"
            )
        if all(known.tool_name != tool for known in self._tools):
            offered = ", ".join(known.tool_name for known in self._tools) or "none"
            return ToolResult.error(
                f"MCP server {self.name!r} no longer offers tool {tool!r} (its tool list "
                f"changed); its tools now: {offered}",
                server=self.name,
            )
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED

        limit = min(deadline, trio.current_time() + self.config.call_timeout)
        with trio.move_on_at(limit) as scope:
            try:
                result = await session.call_tool(tool, dict(arguments))
            except MCPError as exc:
                if exc.code == CONNECTION_CLOSED:
                    self._crashed(f"server stopped during the call ({exc})")
                    return ToolResult.error(
                        f"MCP server {self.name!r} stopped during the call; "
                        "it is restarted on the next use after a short wait",
                        server=self.name,
                    )
                return ToolResult.error(f"MCP server {self.name!r}: {exc}", server=self.name)
            except (
                trio.BrokenResourceError,
                trio.ClosedResourceError,
                OSError,
                httpx2.TransportError,
            ) as exc:
                self._crashed(_one_line(exc))
                return ToolResult.error(
                    f"MCP server {self.name!r} stopped during the call ({_one_line(exc)}); "
                    "it is restarted on the next use after a short wait",
                    server=self.name,
                )
        if scope.cancelled_caught:
            if not self._connection_alive():
                self._crashed("server stopped during the call")
            return ToolResult.error(
                f"MCP tool {tool!r} on server {self.name!r} gave no answer before its deadline",
                server=self.name,
                timed_out=True,
            )
        text = _result_text(result)
        if result.is_error:
            return ToolResult.error(text or f"MCP tool {tool!r} failed", server=self.name)
        return ToolResult.ok(text, server=self.name)

    def close(self) -> None:
        """Stop the connection (the SDK ends the process); no restart after this."""
        self._closed = True
        if self._stop is not None:
            self._stop.cancel()
        self._status = "closed"
        self._wake_listeners()

    def _connection_alive(self) -> bool:
        return self._status == "running" and self._stop is not None and not self._stop.cancel_called

    def _crashed(self, why: str) -> None:
        self._failures += 1
        delay = min(
            self.config.restart_backoff * 2 ** (self._failures - 1), self.config.restart_backoff_max
        )
        self._retry_at = trio.current_time() + delay
        self._status = "failed"
        self._error = why
        self._session = None
        self._wake_listeners()
        if self._stop is not None:
            self._stop.cancel()

    async def _ensure_started(self) -> None:
        if self._closed or self._status == "running":
            return
        if self._ready is not None and self._status == "starting":
            await self._ready.wait()
            return
        if trio.current_time() < self._retry_at:
            return
        self._ready = trio.Event()
        self._status = "starting"
        self._error = None
        self._nursery.start_soon(self._run, self._ready)
        await self._ready.wait()

    def _transport(self, log: TextIO) -> AbstractAsyncContextManager[Any]:
        config = self.config
        if config.url is not None:
            return _http_transport(config, log)
        from mcp import StdioServerParameters
        from mcp.client.stdio import get_default_environment, stdio_client

        assert config.command is not None
        params = StdioServerParameters(
            command=config.command,
            args=list(config.args),
            env={**get_default_environment(), **config.env},
            cwd=config.cwd,
        )
        return stdio_client(params, errlog=log)

    def _took_list(self, listed: Any) -> None:
        self._tools, self._left_out = self._usable(listed.tools)
        self._listings += 1
        self._stale = False
        self._wake_listeners()

    def _wake_listeners(self) -> None:
        self._listed.set()
        self._listed = trio.Event()

    async def _run(self, ready: trio.Event) -> None:
        from mcp import ClientSession
        from mcp.types import ToolListChangedNotification

        config = self.config
        changed = trio.Event()
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log:
            stop = self._stop = trio.CancelScope()

            async def on_message(message: Any) -> None:
                # run by the SDK in a task of its own: only mark the list stale here,
                # the connection task below lists again (never from this callback)
                if isinstance(message, ToolListChangedNotification) and self._stop is stop:
                    self._stale = True
                    changed.set()

            try:
                with stop:
                    async with (
                        self._transport(log) as (read, write),
                        ClientSession(read, write, message_handler=on_message) as session,
                    ):
                        with trio.fail_after(config.startup_timeout):
                            await session.initialize()
                            listed = await session.list_tools()
                        self._took_list(listed)
                        self._session = session
                        self._status = "running"
                        self._failures = 0
                        ready.set()
                        while True:
                            await changed.wait()
                            changed = trio.Event()
                            with trio.fail_after(config.call_timeout):
                                listed = await session.list_tools()
                            self._took_list(listed)
            except Exception as exc:
                tail = _stderr_tail(log)
                if isinstance(_leaf(exc), trio.TooSlowError):
                    why = (
                        f"no answer to tools/list within {config.call_timeout:g}s"
                        if self._status == "running"
                        else f"no answer to initialize within {config.startup_timeout:g}s"
                    )
                else:
                    why = _one_line(exc)
                if self._stop is stop:
                    label = "stderr" if config.command is not None else "http"
                    self._crashed(why + (f" ({label}: {tail})" if tail else ""))
            finally:
                if self._stop is stop:
                    self._session = None
                    if self._closed:
                        self._status = "closed"
                    elif self._status in ("running", "starting"):
                        self._crashed("server exited")
                ready.set()

    def _adapt(self, tool: Any) -> McpTool:
        hints = tool.annotations
        read_only = bool(hints is not None and hints.read_only_hint)
        description = (tool.description or tool.title or tool.name).strip()
        if len(description) > MCP_DESCRIPTION_MAX_CHARS:
            description = description[: MCP_DESCRIPTION_MAX_CHARS - 1] + "…"
        return McpTool(
            server=self,
            tool_name=tool.name,
            description=description,
            arguments_type=arguments_struct(f"mcp_{self.name}_{tool.name}", tool.input_schema),
            flags=ToolFlags(
                read_only=read_only,
                background_safe=read_only or self.config.auto_approve,
                needs_approval=not (read_only or self.config.auto_approve),
            ),
        )

    # Resources, for ListMcpResourcesTool and ReadMcpResourceTool (tools/_mcp/resources.py).

    async def list_resources(self, *, deadline: float = math.inf) -> tuple[Resource, ...]:
        """The server's resources (``resources/list``, pages followed), a bounded number.

        At most ``MCP_RESOURCE_LIST_MAX``; a server without the ``resources`` capability has none
        (``()``). Raises :class:`ToolError` when the server is not available,
        refuses, stops, or gives no answer before the earlier of ``deadline``
        and ``call_timeout``.
        """
        from mcp.types import PaginatedRequestParams

        session = await self._resource_session()
        capabilities = session.server_capabilities
        if capabilities is None or capabilities.resources is None:
            return ()
        limit = min(deadline, trio.current_time() + self.config.call_timeout)
        found: list[Resource] = []
        cursor: str | None = None
        while len(found) < MCP_RESOURCE_LIST_MAX:
            params = None if cursor is None else PaginatedRequestParams(cursor=cursor)
            page = await self._resource_request(
                "list its resources", partial(session.list_resources, params=params), limit
            )
            found.extend(page.resources)
            cursor = page.next_cursor
            # An empty page that still names a cursor would loop until the deadline.
            if not cursor or not page.resources:
                break
        return tuple(found[:MCP_RESOURCE_LIST_MAX])

    async def read_resource(self, uri: str, *, deadline: float = math.inf) -> ReadResourceResult:
        """The contents of resource ``uri`` (``resources/read``) under the call's deadline.

        Raises :class:`ToolError` as :meth:`list_resources` does, and when the
        server refuses the URI (unknown, unreadable).
        """
        session = await self._resource_session()
        limit = min(deadline, trio.current_time() + self.config.call_timeout)
        result: ReadResourceResult = await self._resource_request(
            f"read {uri!r}", lambda: session.read_resource(uri), limit
        )
        return result

    async def _resource_session(self) -> ClientSession:
        await self._ensure_started()
        session = self._session
        if session is None or self._status != "running":
            raise ToolError(
                f"MCP server {self.name!r} is not available ({self._error or self._status}); "
                "try again later or use another tool"
            )
        return session

    async def _resource_request(
        self, what: str, request: Callable[[], Awaitable[Any]], limit: float
    ) -> Any:
        """``request()`` under ``limit``; every failure a :class:`ToolError` (a crash noted)."""
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED

        with trio.move_on_at(limit):
            try:
                return await request()
            except MCPError as exc:
                if exc.code == CONNECTION_CLOSED:
                    self._crashed(f"server stopped during a request ({exc})")
                    raise ToolError(
                        f"MCP server {self.name!r} stopped while asked to {what}; "
                        "it is restarted on the next use after a short wait"
                    ) from None
                raise ToolError(f"MCP server {self.name!r} could not {what}: {exc}") from None
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                self._crashed(_one_line(exc))
                raise ToolError(
                    f"MCP server {self.name!r} stopped while asked to {what} "
                    f"({_one_line(exc)}); it is restarted on the next use after a short wait"
                ) from None
            except ValueError as exc:  # a reply that does not match the protocol's types
                raise ToolError(
                    f"MCP server {self.name!r} gave a malformed answer when asked to {what}: "
                    f"{_one_line(exc)}"
                ) from None
        if not self._connection_alive():
            self._crashed("server stopped during a request")
        raise ToolError(
            f"MCP server {self.name!r} gave no answer when asked to {what} before its deadline"
        )


@attrs.define
class McpServers:
    """The MCP servers of one runtime, by name, sharing one nursery."""

    servers: dict[str, McpServer]
    nursery: trio.Nursery | None = None
    reported: list[McpServerStatus] = attrs.field(factory=list)
    private: set[str] = attrs.field(factory=set)

    def get(self, name: str) -> McpServer | None:
        """The server named ``name``, if configured."""
        return self.servers.get(name)

    def add(self, key: str, config: McpServerConfig) -> McpServer:
        """Register ``config`` under ``key`` (a definition's inline server); not started yet.

        Such a server is offered only to those who name its key, never by
        :meth:`tools` without names.
        """
        if self.nursery is None:
            raise RuntimeError("MCP servers are added only inside open_mcp_servers()")
        server = self.servers.get(key)
        if server is None:
            server = self.servers[key] = McpServer(config, self.nursery)
            self.private.add(key)
        return server

    def report(self, status: McpServerStatus) -> None:
        """Show a server that is not started (not trusted, or its entry is wrong)."""
        if status not in self.reported:
            self.reported.append(status)

    def statuses(self) -> list[McpServerStatus]:
        """Every configured server's state, in configuration order, then those not started.

        ``reported`` are the servers that are never started (a project's
        servers in an untrusted workspace), with the reason in ``error``.
        """
        return [*(server.status() for server in self.servers.values()), *self.reported]

    async def tools(self, names: list[str] | None = None) -> list[McpTool]:
        """The tools of the named servers (all shared ones when ``None``), started as needed."""
        if names is None:
            wanted = [n for n in self.servers if n not in self.private]
        else:
            wanted = [n for n in names if n in self.servers]
        result: list[McpTool] = []
        for name in wanted:
            result.extend(await self.servers[name].tools())
        return result


@asynccontextmanager
async def open_mcp_servers(
    configs: Sequence[McpServerConfig], reported: Sequence[McpServerStatus] = ()
) -> AsyncIterator[McpServers]:
    """Servers for ``configs``; none starts before first use, all close on exit.

    ``reported`` are servers only shown in :meth:`McpServers.statuses`.
    """
    async with trio.open_nursery() as nursery:
        servers = McpServers(
            {c.name: McpServer(c, nursery) for c in configs}, nursery, list(reported)
        )
        try:
            yield servers
        finally:
            for server in servers.servers.values():
                server.close()
