"""The Claude Code plugins a user installed and enabled, and where their files are.

Claude Code does not load every plugin on disk. A marketplace added with
``/plugin marketplace add`` is cloned under ``~/.claude/plugins/marketplaces``,
but only a plugin that is installed (copied to
``~/.claude/plugins/cache/<marketplace>/<plugin>/<version>`` and recorded in
``~/.claude/plugins/installed_plugins.json``) and enabled (``"<plugin>@<marketplace>":
true`` in ``enabledPlugins`` of ``settings.json``, user then project then local
scope, the later winning) gives its agents to a session. Sources: the settings
reference (https://code.claude.com/docs/en/settings, "Plugin settings":
``enabledPlugins``), the plugins reference
(https://code.claude.com/docs/en/plugins-reference, "Plugin caching and file
resolution": installed plugins are copied to the cache), and the
``installed_plugins.json`` records Claude Code writes (version 2 maps each id
to a list of installs, each with ``scope`` and ``installPath``; version 1 to
one install).

A repository's own ``.claude/settings.json`` may enable or disable a plugin
the user installed, as in Claude Code, but cannot install one: only a folder
``installed_plugins.json`` or the cache names is loaded. It does so only once
the user trusts the folder (Claude Code reads a project's settings only after
its trust dialog): until then the user's settings alone decide, and the plugins
the project would have enabled are named, for the trust notice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from subagents._small_file import FileRefused, read_small_file
from subagents.agents._definition import AgentSource
from subagents.agents._diagnostics import Diagnostic, DiagnosticCode, FileKind, FileReport, Severity
from subagents.agents._parse import Parsed, parse_json

__all__ = ["EnabledPlugin", "InstalledPlugins", "enabled_plugins"]

#: Settings files are small; a bigger one is reported, not read.
_MAX_SETTINGS_BYTES = 1 << 20
_PLUGINS = Path(".claude") / "plugins"
#: A plugin's or marketplace's name as a folder of the cache: no separator, not ``..``.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


@attrs.frozen
class EnabledPlugin:
    """One installed, enabled plugin: its id, its name and its installed folder."""

    id: str
    name: str
    root: Path


def _note(path: Path, message: str, severity: Severity = Severity.NOTE) -> FileReport:
    diagnostic = Diagnostic(severity, DiagnosticCode.PLUGIN, message, path, None, None)
    return FileReport(path, FileKind.SKIPPED, AgentSource.PLUGIN, (), (diagnostic,))


def _read_json(path: Path, notes: list[FileReport]) -> Any:
    if not path.is_file():
        return None
    try:
        text = read_small_file(path, _MAX_SETTINGS_BYTES).decode("utf-8")
    except (OSError, FileRefused, UnicodeDecodeError) as exc:
        notes.append(
            _note(path, f"cannot read it ({exc}); its plugins are not loaded", Severity.WARNING)
        )
        return None
    parsed = parse_json(text)
    if not isinstance(parsed, Parsed):
        notes.append(_note(path, "not valid JSON; its plugins are not loaded", Severity.WARNING))
        return None
    return parsed.data


def _project_settings_files(project_dirs: Sequence[Path]) -> list[Path]:
    return [
        folder / ".claude" / name
        for folder in project_dirs
        for name in ("settings.json", "settings.local.json")
    ]


def _enabled(files: Sequence[Path], notes: list[FileReport]) -> dict[str, bool]:
    """Plugin id -> enabled, from ``enabledPlugins`` of ``files`` (the later winning)."""
    enabled: dict[str, bool] = {}
    for path in files:
        data = _read_json(path, notes)
        table = data.get("enabledPlugins") if isinstance(data, Mapping) else None
        if table is None:
            continue
        if not isinstance(table, Mapping):
            notes.append(_note(path, "enabledPlugins must be an object of id: true|false"))
            continue
        for plugin_id, value in table.items():
            if isinstance(plugin_id, str) and isinstance(value, bool):
                enabled[plugin_id] = value
    return enabled


def _installs(raw: Any) -> list[Mapping[str, Any]]:
    entries = raw if isinstance(raw, list) else [raw]
    return [e for e in entries if isinstance(e, Mapping)]


def _install_path(
    records: Mapping[str, Any], plugin_id: str, project_dirs: Sequence[Path]
) -> Path | None:
    """The folder ``installed_plugins.json`` records for ``plugin_id``, this project's first."""
    projects = {str(p) for p in project_dirs}
    candidates: list[tuple[int, Path]] = []
    for entry in _installs(records.get(plugin_id)):
        path = entry.get("installPath")
        if not isinstance(path, str) or not Path(path).is_dir():
            continue
        mine = entry.get("scope") == "user" or entry.get("projectPath") in projects
        candidates.append((0 if mine else 1, Path(path)))
    return min(candidates, key=lambda c: c[0])[1] if candidates else None


def _cached(home: Path, name: str, marketplace: str) -> Path | None:
    """The newest copy of a plugin in Claude Code's cache, when no record names it.

    Both names must be plain folder names: an id like ``x@../marketplaces/m`` would
    reach a marketplace clone, whose plugins were never installed.
    """
    if not (_PLAIN_NAME.fullmatch(name) and _PLAIN_NAME.fullmatch(marketplace)):
        return None
    cache = home / _PLUGINS / "cache"
    folder = cache / marketplace / name
    if not folder.is_dir() or not folder.resolve().is_relative_to(cache.resolve()):
        return None
    if (folder / ".claude-plugin").is_dir() or (folder / "agents").is_dir():
        return folder
    versions = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    return versions[-1] if versions else None


@attrs.frozen
class InstalledPlugins:
    """What :func:`enabled_plugins` found: the plugins to load, notes on the files read,
    and the ids an untrusted project's settings would have enabled (not loaded)."""

    enabled: tuple[EnabledPlugin, ...]
    notes: tuple[FileReport, ...]
    withheld: tuple[str, ...] = ()


def enabled_plugins(
    home: Path, project_dirs: Sequence[Path] = (), *, trusted_project: bool = True
) -> InstalledPlugins:
    """The plugins Claude Code would load for a session in ``project_dirs`` (nearest last).

    Returns them in id order, with notes: an enabled plugin that is not
    installed, installed plugins that are not enabled, unreadable files. With
    ``trusted_project`` false the project's settings are read only to name, in
    ``withheld``, the plugins they would have enabled.
    """
    notes: list[FileReport] = []
    enabled = _enabled([home / ".claude" / "settings.json"], notes)
    project = _enabled(_project_settings_files(project_dirs), notes)
    withheld: tuple[str, ...] = ()
    if trusted_project:
        enabled.update(project)
    else:
        withheld = tuple(sorted(p for p, on in project.items() if on and not enabled.get(p)))
    installed_file = home / _PLUGINS / "installed_plugins.json"
    data = _read_json(installed_file, notes)
    records = data.get("plugins") if isinstance(data, Mapping) else None
    records = records if isinstance(records, Mapping) else {}
    found: list[EnabledPlugin] = []
    for plugin_id in sorted(p for p, on in enabled.items() if on):
        name, _, marketplace = plugin_id.partition("@")
        root = _install_path(records, plugin_id, project_dirs)
        if root is None and name and marketplace:
            root = _cached(home, name, marketplace)
        if root is None:
            notes.append(
                _note(
                    installed_file,
                    f"{plugin_id} is enabled in settings but not installed; install it with "
                    f"`claude plugin install {plugin_id}`",
                )
            )
            continue
        found.append(EnabledPlugin(plugin_id, name or plugin_id, root))
    idle = sorted(str(p) for p in records if not enabled.get(str(p), False))
    if idle:
        notes.append(
            _note(
                installed_file,
                f"installed but not enabled (enabledPlugins), so not loaded: {', '.join(idle)}",
            )
        )
    return InstalledPlugins(tuple(found), tuple(notes), withheld)
