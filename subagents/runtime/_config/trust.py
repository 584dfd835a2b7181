"""What a repository's own files may not do until the user trusts its folder.

The project scope (the ``subagents.toml`` found from the working folder up to
the repository root, and the agent definitions in its ``.claude`` and
``.subagents`` folders) came with the repository: until the user trusts the
folder (:mod:`subagents.runtime._config.trusted_folders`), whatever in it would execute,
delete, or send data or credentials elsewhere is ignored, and the run goes on
with a one-line notice (:func:`trust_notice`) naming what was ignored and the
command that trusts the folder. User-scope settings, environment variables,
command-line flags and code that embeds the runtime are the user's own, and
are trusted as they are.

:data:`UNTRUSTED_PROJECT_KEYS` is the one list of settings a project file may
not set untrusted; :func:`restrict_catalog` drops what an untrusted project's
agent definitions may not do (their hooks, and an approval mode that approves
tool calls without asking anyone), and the runtime's trust policy withholds
the tools that write or execute from them (:func:`untrusted_folder_reason`
is the rule ``subagents agents show`` names). The user's own definitions
(``~/.claude/agents``) and the plugins the user installed are the user's,
and keep the tools they list; but only the user's settings enable a plugin
until the folder is trusted (``discover_agents(trusted_project=False)``).
"""

from __future__ import annotations

import shlex
import types
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from subagents.agents import (
    AgentCatalog,
    AgentDefinition,
    AgentSource,
    ApprovalMode,
    PermissionMode,
)

__all__ = [
    "UNTRUSTED_PROJECT_KEYS",
    "CatalogRestriction",
    "ProjectTrust",
    "restrict_catalog",
    "shell_word",
    "trust_notice",
    "untrusted_folder_reason",
    "without_untrusted_keys",
]

#: The settings a project's ``subagents.toml`` may not set until its folder is
#: trusted, each with what it could do. A new setting that runs something,
#: deletes something, or sends data, credentials or environment variables
#: elsewhere (an endpoint, an environment pass-through) is one more line here.
UNTRUSTED_PROJECT_KEYS: Final[Mapping[str, str]] = types.MappingProxyType(
    {
        "hooks": "runs shell commands",
        "state_dir": "chooses where transcripts are written and old ones deleted",
        "transcripts.retention_days": "decides which transcripts are deleted",
        "trusted_sources": "decides which definitions may write and execute",
        "env_passthrough": "passes secret environment variables to tools and hooks",
        "mcp_servers": "starts MCP server programs",
        "web.allow_private_addresses": "lets WebFetch reach loopback and private networks",
        "collector.policy": "changes the process's cycle collector (memory held until close)",
        "collector.threshold": "changes how often the process's cycle collector runs",
        "collector.freeze_every": "changes how often the process's cycle collector is frozen",
    }
)


@attrs.frozen
class ProjectTrust:
    """Whether the project folder of a configuration was trusted, and what was ignored.

    ``folder`` is the folder whose trust was asked (the git root above the
    working folder, else the working folder); ``ignored`` says what of the
    project's files was left out because it was not trusted, a phrase each
    (``subagents.toml hooks``, ``the hooks of agent Explore``).
    """

    folder: Path
    trusted: bool
    ignored: tuple[str, ...] = ()


def without_untrusted_keys(raw: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A project file's mapping without :data:`UNTRUSTED_PROJECT_KEYS`, and the keys left out."""
    kept: dict[str, Any] = dict(raw)
    dropped: list[str] = []
    for dotted in UNTRUSTED_PROJECT_KEYS:
        top, _, sub = dotted.partition(".")
        if not sub:
            if top in kept:
                del kept[top]
                dropped.append(dotted)
            continue
        table = kept.get(top)
        if isinstance(table, Mapping) and sub in table:
            kept[top] = {k: v for k, v in table.items() if k != sub}
            dropped.append(dotted)
    return kept, tuple(dropped)


@attrs.frozen
class CatalogRestriction:
    """An untrusted project's catalog: its definitions made safe, and what was dropped."""

    catalog: AgentCatalog
    ignored: tuple[str, ...] = ()


def _auto_approves(definition: AgentDefinition) -> bool:
    if definition.approval_mode is not None:
        return definition.approval_mode is ApprovalMode.AUTO_APPROVE
    return definition.permission_mode is PermissionMode.BYPASS_PERMISSIONS


def _restricted(definition: AgentDefinition, ignored: list[str]) -> AgentDefinition:
    if definition.source is not AgentSource.PROJECT:
        return definition
    changes: dict[str, Any] = {}
    if definition.hooks:
        changes["hooks"] = ()
        ignored.append(f"the hooks of agent {definition.name}")
    if _auto_approves(definition):
        # Approval requests go to the user, as for an agent that sets no mode.
        changes["approval_mode"] = ApprovalMode.ROUTE_TO_PARENT
        if definition.permission_mode is PermissionMode.BYPASS_PERMISSIONS:
            changes["permission_mode"] = None
        ignored.append(f"the auto-approval of agent {definition.name}")
    return attrs.evolve(definition, **changes) if changes else definition


def restrict_catalog(catalog: AgentCatalog) -> CatalogRestriction:
    """``catalog`` with its project definitions stripped of hooks and auto-approval.

    The definitions still load (one named like a built-in still overrides it);
    only what would run commands, or approve tool calls with nobody asked, is
    dropped. ``reports`` keep the files as written (``subagents agents show``).
    """
    ignored: list[str] = []
    definitions = {name: _restricted(d, ignored) for name, d in catalog.definitions.items()}
    quiet: list[str] = []  # hidden candidates never run: made safe, not reported
    candidates = {
        name: tuple(definitions[name] if d is catalog.definitions[name] else _restricted(d, quiet)
                    for d in found)
        for name, found in catalog.candidates.items()
    }  # fmt: skip
    restricted = attrs.evolve(catalog, definitions=definitions, candidates=candidates)
    return CatalogRestriction(restricted, tuple(ignored))


def shell_word(path: Path) -> str:
    """``path`` as one shell word on one line: quoted, or ``$'...'`` with escapes for
    control characters (a folder name may hold a newline or an escape sequence)."""
    text = str(path)
    if text.isprintable():
        return shlex.quote(text)
    escaped = text.encode("unicode_escape").decode("ascii").replace("'", "\\'")
    return f"$'{escaped}'"


def untrusted_folder_reason(folder: Path) -> str:
    """Why a repository's own agents may not write or execute: the rule and how to lift it."""
    word = shell_word(folder)
    return f"the project folder {word} is not trusted (to trust it: subagents trust {word})"


def trust_notice(folder: Path, ignored: Iterable[str]) -> str:
    """The one line that says what an untrusted project had ignored, and how to trust it."""
    shown = (i if i.isprintable() else i.encode("unicode_escape").decode("ascii") for i in ignored)
    what = ", ".join(dict.fromkeys(shown)) or "nothing"
    word = shell_word(folder)
    return (
        f"this folder is not trusted ({word}); ignored from its files: {what}. "
        f"To trust it: subagents trust {word} (or --trust-project)"
    )
