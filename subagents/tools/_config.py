"""Explicit defaults for every limit in ``subagents.tools``, in one place."""

from __future__ import annotations

from typing import Final

__all__ = [
    "APPROVAL_TIMEOUT_SECONDS",
    "BASH_DEFAULT_TIMEOUT_MS",
    "BASH_KILL_GRACE_SECONDS",
    "BASH_MAX_TIMEOUT_MS",
    "BASH_OUTPUT_CAP_BYTES",
    "BINARY_SNIFF_BYTES",
    "EDIT_MAX_FILE_BYTES",
    "GLOB_MAX_RESULTS",
    "GREP_DEFAULT_HEAD_LIMIT",
    "GREP_MAX_FILE_BYTES",
    "LS_MAX_ENTRIES",
    "MAX_ARGUMENT_BYTES",
    "MAX_RESULT_CHARS",
    "MCP_CALL_TIMEOUT_SECONDS",
    "MCP_DESCRIPTION_MAX_CHARS",
    "MCP_RESOURCE_LIST_MAX",
    "MCP_TOOLS_MAX",
    "MCP_RESOURCE_MAX_CHARS",
    "MCP_RESTART_BACKOFF_MAX_SECONDS",
    "MCP_RESTART_BACKOFF_SECONDS",
    "MCP_STARTUP_TIMEOUT_SECONDS",
    "READ_DEFAULT_LINE_LIMIT",
    "READ_MAX_LINE_CHARS",
    "READ_MAX_OUTPUT_CHARS",
    "REGEX_MAX_MEMORY_BYTES",
    "REGEX_WORK_PER_CALL",
    "TOOL_NAME_PATTERN",
    "VCS_DIRECTORIES",
    "WEBFETCH_MAX_BYTES",
    "WEBFETCH_MAX_REDIRECTS",
    "WEBFETCH_TIMEOUT_SECONDS",
]

#: Tool names the Anthropic tools API accepts; ``mcp__server__tool`` fits.
TOOL_NAME_PATTERN: Final = r"^[A-Za-z0-9_-]{1,64}$"

#: Largest JSON encoding of one call's arguments the registry will decode.
MAX_ARGUMENT_BYTES: Final = 1024 * 1024

#: Longest tool result handed back to the model; longer ones are cut with a note.
MAX_RESULT_CHARS: Final = 200_000

#: How long an approval may stay pending when the agent itself has no deadline.
APPROVAL_TIMEOUT_SECONDS: Final = 600.0

#: A NUL byte in this many leading bytes marks a file as binary.
BINARY_SNIFF_BYTES: Final = 8192

READ_DEFAULT_LINE_LIMIT: Final = 2000
READ_MAX_LINE_CHARS: Final = 2000
READ_MAX_OUTPUT_CHARS: Final = 256 * 1024

#: Edit reads the whole file, so it refuses files larger than this.
EDIT_MAX_FILE_BYTES: Final = 16 * 1024 * 1024

GLOB_MAX_RESULTS: Final = 1000
GREP_DEFAULT_HEAD_LIMIT: Final = 1000
#: Grep skips (and reports) files larger than this rather than scanning them.
GREP_MAX_FILE_BYTES: Final = 16 * 1024 * 1024
LS_MAX_ENTRIES: Final = 1000

#: Memory RE2 may use per compiled pattern (program and DFA cache); larger patterns are refused.
REGEX_MAX_MEMORY_BYTES: Final = 8 * 1024 * 1024
#: Most RE2 work (program instructions x bytes searched) in one uninterruptible call: its
#: worst case (DFA thrashing, NFA fallback) was 6 to 11 ns a unit on the 2-core bench machine, so a
#: call ends within about 0.6 s and a deadline or cancel is honoured between calls.
REGEX_WORK_PER_CALL: Final = 50_000_000

#: Directories Glob and Grep never descend into.
VCS_DIRECTORIES: Final = frozenset({".git", ".hg", ".svn"})

BASH_DEFAULT_TIMEOUT_MS: Final = 120_000
BASH_MAX_TIMEOUT_MS: Final = 600_000
BASH_OUTPUT_CAP_BYTES: Final = 30_000
#: After the shell exits, how long its leftover children may keep the output pipe open.
BASH_KILL_GRACE_SECONDS: Final = 0.5

#: How long an MCP server may take to start and answer ``initialize`` + ``tools/list``.
MCP_STARTUP_TIMEOUT_SECONDS: Final = 30.0

#: Deadline of one MCP tool call when the calling agent's own deadline is later.
MCP_CALL_TIMEOUT_SECONDS: Final = 120.0

#: First wait before a crashed MCP server is started again; doubled per failure.
MCP_RESTART_BACKOFF_SECONDS: Final = 1.0

#: An MCP tool's description is cut here: a server's text goes into every model request.
MCP_DESCRIPTION_MAX_CHARS: Final = 2048

#: Tools taken from one MCP server's list; the rest are left out, with a note.
MCP_TOOLS_MAX: Final = 256

#: Longest wait between two restarts of a failing MCP server.
MCP_RESTART_BACKOFF_MAX_SECONDS: Final = 60.0

#: WebFetch reads at most this much of a response body and cuts the rest.
WEBFETCH_MAX_BYTES: Final = 5 * 1024 * 1024
#: Redirect hops WebFetch follows (each one checked) before it gives up.
WEBFETCH_MAX_REDIRECTS: Final = 10
#: Deadline of one whole WebFetch call, every hop and the body included.
WEBFETCH_TIMEOUT_SECONDS: Final = 30.0

#: Most resources ListMcpResourcesTool shows from one server (its pages are followed up to this).
MCP_RESOURCE_LIST_MAX: Final = 1000
#: Most characters ReadMcpResourceTool returns of one read (every content block together).
MCP_RESOURCE_MAX_CHARS: Final = 100_000
