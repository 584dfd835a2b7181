"""The short texts of a progress row: tool-call descriptions and status sentences.

:func:`describe_tool_call` names a tool call by its telling argument for an
activity ("Read src/app.py", "Bash: git status"); :func:`status_message` says
what an agent is doing now ("calling Grep", "waiting for the model (turn 3)");
:func:`status_activity` is the activity a final status leaves. Descriptions
and error messages are cut to one line of a set width.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from subagents.actors import Completed, Errored, PendingInit, Shutdown, Status, is_final, kind_of
from subagents.runtime._progress.tree import Node

__all__ = [
    "ERROR_WIDTH",
    "describe_tool_call",
    "first_line",
    "status_activity",
    "status_message",
]

#: How long a tool-call description may be, in characters.
_DESCRIPTION_WIDTH: Final = 60
#: How much of an error message a status line or an activity shows.
ERROR_WIDTH: Final = 80

_COMMAND_KEYS: Final = ("command", "cmd", "script")
_PATTERN_KEYS: Final = ("pattern", "query", "regex", "glob")
_PATH_KEYS: Final = ("file_path", "path", "notebook_path", "filename", "directory")
_URL_KEYS: Final = ("url", "uri")
_TYPE_KEYS: Final = ("subagent_type", "agent_type")
_TEXT_KEYS: Final = ("description", "prompt", "message", "text", "agent_id", "id")


def _clean(value: str) -> str:
    """``value`` on one line, runs of whitespace made single spaces."""
    return " ".join(value.split())


def _head(text: str, width: int) -> str:
    """``text`` cut at the end to ``width`` characters, with an ellipsis if cut."""
    if len(text) <= width:
        return text
    return text[: max(width - 1, 0)] + "…"


def _tail(path: str, width: int) -> str:
    """``path`` cut at the start to ``width`` characters: the file name matters most."""
    if len(path) <= width:
        return path
    return "…" + path[len(path) - max(width - 1, 0) :]


def _first_text(arguments: Mapping[str, Any], keys: Iterable[str]) -> str | None:
    for key in keys:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return _clean(value)
    return None


def describe_tool_call(
    name: str, arguments: Mapping[str, Any], *, width: int = _DESCRIPTION_WIDTH
) -> str:
    """A short description of a tool call, for activities: the tool and its telling argument.

    The argument shown is a command (``Bash: git status``), else a pattern and
    where it is searched (``Grep 'TODO' in src``), else a path (``Read
    src/app.py``, long paths keep their end), else an agent type and task
    (``spawn_agent Explore: find the entry point``), else a URL, else the
    first text argument. The whole is at most ``width`` characters.
    """
    name = _clean(name) or "tool"
    if len(name) >= width:
        return _head(name, width)
    room = width - len(name) - 1
    command = _first_text(arguments, _COMMAND_KEYS)
    if command is not None:
        return f"{name}: {_head(command, room - 1)}"
    pattern = _first_text(arguments, _PATTERN_KEYS)
    path = _first_text(arguments, _PATH_KEYS)
    if pattern is not None:
        text = f"{name} '{_head(pattern, room - 2)}'"
        if path is not None and width - len(text) - 4 >= 8:
            text += f" in {_tail(path, width - len(text) - 4)}"
        return text
    if path is not None:
        return f"{name} {_tail(path, room)}"
    url = _first_text(arguments, _URL_KEYS)
    if url is not None:
        return f"{name} {_head(url, room)}"
    kind = _first_text(arguments, _TYPE_KEYS)
    task = _first_text(arguments, _TEXT_KEYS)
    if kind is not None:
        text = f"{name} {_head(kind, room)}"
        if task is not None and width - len(text) - 2 >= 8:
            text += f": {_head(task, width - len(text) - 2)}"
        return text
    if task is None:
        task = next(
            (_clean(v) for v in arguments.values() if isinstance(v, str) and v.strip()), None
        )
    if task is None:
        return name
    return f"{name} {_head(task, room)}"


def first_line(text: str, width: int = ERROR_WIDTH) -> str:
    """The first non-blank line of ``text`` (an error message), cut to ``width``."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return _head(line, width) or "no message"


def status_activity(status: Status) -> str:
    """The activity a status change to ``status`` leaves ("completed", "errored: ...")."""
    if isinstance(status, Completed):
        return "completed"
    if isinstance(status, Errored):
        return f"errored: {first_line(status.message)}"
    if isinstance(status, Shutdown):
        return "shut down"
    return kind_of(status)


def _turn_phrase(phase: str, turn: int, reason: str) -> str:
    if phase == "model":
        return f"waiting for the model (turn {turn})"
    if phase == "writing":
        return f"writing (turn {turn})"
    if phase == "thinking":
        return f"thinking (turn {turn})"
    if phase == "tools":
        return f"running turn {turn}"
    if phase == "done":
        return f"turn {turn} done"
    if phase == "finished":
        return f"finished its run ({reason})"
    return "running"


def status_message(node: Node) -> str:
    """What the agent of ``node`` is doing now, for its row's status message."""
    status = node.status
    if is_final(status):
        return status_activity(status)
    if type(status) is PendingInit:
        return "starting"
    if not node.live:
        return kind_of(status)
    if node.grace:
        return "in grace period"
    if node.inflight:
        names = list(dict.fromkeys(node.inflight.values()))
        count = len(node.inflight)
        if count == 1:
            return f"calling {names[0]}"
        return f"calling {', '.join(names[:3])}{', …' if len(names) > 3 else ''} ({count} calls)"
    return _turn_phrase(node.phase, node.own.turns, node.reason)
