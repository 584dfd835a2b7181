"""Short text for the terminal, shared by the live view, the plain lines and the summary.

Token counts, durations and plurals as people read them (``12.3k``,
``3m05s``, ``3 turns``), status kinds in their colours, and the tree guides
(``├─ ``, ``└─ ``) that indent agents under their parents. They are here,
apart from any one view, so that ``subagents run`` and ``subagents
transcripts`` say the same thing the same way.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Final

from rich.text import Text

from subagents.runtime import AgentProgress

if TYPE_CHECKING:
    from subagents.cli._report import AgentSummary

__all__ = [
    "STATUS_STYLES",
    "format_duration",
    "format_tokens",
    "plural",
    "status_text",
    "tree_prefixes",
]

#: How each status kind is coloured, in the live view and the summary.
STATUS_STYLES: Final[Mapping[str, str]] = {
    "pending_init": "blue",
    "running": "bold yellow",
    "completed": "green",
    "errored": "bold red",
    "shutdown": "magenta",
    "not_found": "dim",
}
#: What a status kind is called on screen.
_STATUS_WORDS: Final[Mapping[str, str]] = {"pending_init": "starting", "not_found": "unknown"}


def format_tokens(count: int) -> str:
    """A token count, short: ``950``, ``12.3k``, ``4.56M``."""
    if count < 1000:
        return str(count)
    if count < 999_950:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.2f}M"


def format_duration(seconds: float, *, tenths: bool = True) -> str:
    """A duration, short: ``4.2s`` (``4s`` without ``tenths``), ``3m05s``, ``1h02m``."""
    if not math.isfinite(seconds) or seconds < 0:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s" if tenths else f"{int(seconds)}s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def plural(count: int, noun: str) -> str:
    """``1 turn``, ``3 turns``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def status_text(kind: str) -> Text:
    """A status kind as coloured text (``pending_init`` reads "starting")."""
    return Text(_STATUS_WORDS.get(kind, kind), style=STATUS_STYLES.get(kind, ""))


def tree_prefixes(agents: Iterable[AgentSummary | AgentProgress]) -> dict[str, str]:
    """Tree guides (``├─ ``, ``└─ ``, ``│  ``) for rows given in tree order."""
    rows = list(agents)
    ids = {row.agent_id for row in rows}
    last_child: dict[str, str] = {}
    for row in rows:
        if row.parent_id is not None and row.parent_id in ids:
            last_child[row.parent_id] = row.agent_id
    prefix: dict[str, str] = {}
    carry: dict[str, str] = {}
    for row in rows:
        parent = row.parent_id
        if parent is None or parent not in carry:
            prefix[row.agent_id] = carry[row.agent_id] = ""
            continue
        last = last_child.get(parent) == row.agent_id
        prefix[row.agent_id] = carry[parent] + ("└─ " if last else "├─ ")
        carry[row.agent_id] = carry[parent] + ("   " if last else "│  ")
    return prefix
