"""Rendering a definition's prompts: ``${var}`` templates and the agent's memory.

Templates substitute ``${cwd}``, ``${agent_type}``, ``${prompt}`` and the
agent's typed inputs; any other ``${...}`` (a shell variable in a prompt's code
sample, say) is left exactly as written. An agent with ``memory`` gets the
first 200 lines of its ``MEMORY.md`` appended to its system prompt, where
Claude Code keeps it: ``~/.claude/agent-memory/<name>/`` (user),
``<project>/.claude/agent-memory/<name>/`` (project) and
``<project>/.claude/agent-memory-local/<name>/`` (local).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from subagents.agents._definition import AgentDefinition, MemoryScope, thaw_json

__all__ = [
    "MEMORY_LINES",
    "build_system_prompt",
    "memory_file",
    "read_memory",
    "render_query",
    "render_template",
]

#: How many lines of ``MEMORY.md`` go into the prompt.
MEMORY_LINES = 200
#: The most of a ``MEMORY.md`` read, whatever its lines (a line may be any length).
MEMORY_BYTES = 256 * 1024

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_UNSAFE_PATH_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


def _as_text(value: Any) -> str:
    value = thaw_json(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(_as_text(v) for v in value)
    return str(value)


def render_template(template: str, variables: Mapping[str, Any]) -> str:
    """Replace ``${name}`` for each name in ``variables``; leave the rest as written.

    Lists become comma-separated text, booleans ``true``/``false``, ``None``
    the empty string.
    """

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in variables:
            return _as_text(variables[name])
        return match.group(0)

    return _VARIABLE.sub(substitute, template)


def _variables(
    definition: AgentDefinition, *, cwd: Path | str, prompt: str, inputs: Mapping[str, Any] | None
) -> dict[str, Any]:
    variables: dict[str, Any] = {spec.name: spec.default for spec in definition.inputs}
    variables.update(inputs or {})
    variables.update({"cwd": str(cwd), "agent_type": definition.name, "prompt": prompt})
    return variables


def _memory_place(
    definition: AgentDefinition, *, home: Path, project_root: Path
) -> tuple[Path, tuple[str, ...]] | None:
    """The folder a ``MEMORY.md`` is under (home or project) and the names below it."""
    if definition.memory is None:
        return None
    folder = _UNSAFE_PATH_CHARS.sub("-", definition.name).lstrip(".") or "agent"
    if definition.memory is MemoryScope.USER:
        return Path(home), (".claude", "agent-memory", folder, "MEMORY.md")
    kind = "agent-memory" if definition.memory is MemoryScope.PROJECT else "agent-memory-local"
    return Path(project_root), (".claude", kind, folder, "MEMORY.md")


def memory_file(definition: AgentDefinition, *, home: Path, project_root: Path) -> Path | None:
    """Where this agent's ``MEMORY.md`` lives, or ``None`` if it has no memory."""
    place = _memory_place(definition, home=home, project_root=project_root)
    return None if place is None else place[0].joinpath(*place[1])


_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | _CLOEXEC
_BELOW = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC


def _open_below(root: Path, names: tuple[str, ...]) -> int:
    """Open ``root/names...`` for reading through no symlink below ``root``.

    Each folder is opened from the one above it with ``O_NOFOLLOW``, then the file:
    a link anywhere below ``root`` (``ELOOP``, ``ENOTDIR``) raises ``OSError``.
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    try:
        for name in names[:-1]:
            below = os.open(name, _BELOW, dir_fd=fd)
            os.close(fd)
            fd = below
        return os.open(names[-1], _READ | os.O_NOFOLLOW, dir_fd=fd)
    finally:
        os.close(fd)


def read_memory(
    definition: AgentDefinition,
    *,
    home: Path,
    project_root: Path,
    max_lines: int = MEMORY_LINES,
) -> str | None:
    """The first ``max_lines`` lines of the agent's ``MEMORY.md``; ``None`` if absent.

    A project's memory folder is repository content: a FIFO there would block the
    agent's start for ever and a link to ``/dev/zero`` would never end, so only a
    regular file is read, opened without blocking, and at most
    :data:`MEMORY_BYTES` of it. A link to ``/proc/self/environ`` or ``~/.ssh``
    would put the runtime's secrets in the prompt sent to the model, so a
    project's (or local) memory is read through no symlink below the project
    root: one there counts as no memory. The user's own memory may be a link.
    """
    place = _memory_place(definition, home=home, project_root=project_root)
    if place is None:
        return None
    root, names = place
    try:
        if definition.memory is MemoryScope.USER:
            fd = os.open(root.joinpath(*names), _READ)
        else:
            fd = _open_below(root, names)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        data = handle.read(MEMORY_BYTES)
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    return "".join(lines[:max_lines]).rstrip() or None


def build_system_prompt(
    definition: AgentDefinition,
    *,
    cwd: Path | str,
    prompt: str = "",
    inputs: Mapping[str, Any] | None = None,
    home: Path | None = None,
    project_root: Path | None = None,
) -> str:
    """The system prompt to send: the rendered template, then the agent's memory.

    ``home`` defaults to ``~`` and ``project_root`` to ``cwd``; they locate
    ``MEMORY.md`` for agents with ``memory`` set.
    """
    rendered = render_template(
        definition.system_prompt, _variables(definition, cwd=cwd, prompt=prompt, inputs=inputs)
    )
    if definition.memory is None:
        return rendered
    home_dir = Path(home) if home is not None else Path.home()
    root = Path(project_root) if project_root is not None else Path(cwd)
    memory = read_memory(definition, home=home_dir, project_root=root)
    if memory is None:
        return rendered
    where = memory_file(definition, home=home_dir, project_root=root)
    return (
        f"{rendered}\n\n# Your memory ({definition.memory.value} scope, {where})\n\n"
        "What you recorded in earlier sessions; keep it up to date with what you learn.\n\n"
        f"{memory}"
    )


def render_query(
    definition: AgentDefinition,
    *,
    cwd: Path | str,
    prompt: str,
    inputs: Mapping[str, Any] | None = None,
) -> str:
    """The first user message: the rendered ``query`` template, or ``prompt`` itself."""
    if definition.query is None:
        return prompt
    return render_template(
        definition.query, _variables(definition, cwd=cwd, prompt=prompt, inputs=inputs)
    )
