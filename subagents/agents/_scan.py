"""Reading files and directory trees of agent definitions, and plugin folders.

Directories are scanned recursively in sorted order, each real folder once (a
symbolic link to a folder already scanned, an ancestor for one, is not walked
again). Every entry met gets a report: agents, "not an agent" files, and skipped
entries (hidden, other file types) with the reason. A walk is bounded: at most
:data:`MAX_TREE_DEPTH` folders down and :data:`MAX_TREE_ENTRIES` entries, one
report saying what was left. Given ``within`` (a project's folder, for the
project scope's agents), a symbolic link whose real path leaves that folder is
reported and not followed: a repository's link to ``/`` or ``~/.ssh`` is not
repository content.

A plugin layout is read as Claude Code reads it
(https://code.claude.com/docs/en/plugins-reference, "Plugin directory
structure" and "Plugin manifest schema"): a plugin is a folder with
``.claude-plugin/plugin.json``, and its agents are the files its manifest's
``agents`` lists plus ``<plugin>/agents/``, named ``<plugin>:<agent>``; a
marketplace is a folder with ``.claude-plugin/marketplace.json``, whose
plugins are the entries with a local ``source``
(https://code.claude.com/docs/en/plugin-marketplaces). Everything else in a
layout (skills, commands, hooks, templates, READMEs) is something else to
Claude Code, never an agent: it is not read, and one note per kind says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from subagents._small_file import FileRefused, read_small_file
from subagents.agents._clashes import flag_duplicate_names
from subagents.agents._codex import parse_codex
from subagents.agents._definition import AgentSource
from subagents.agents._diagnostics import (
    Diagnostic,
    DiagnosticCode,
    FileKind,
    FileReport,
    Severity,
)
from subagents.agents._gemini import is_gemini_frontmatter, parse_gemini
from subagents.agents._markdown import parse_markdown
from subagents.agents._models import ModelAliases
from subagents.agents._parse import Parsed, parse_json, problem_diagnostic
from subagents.agents._yaml_json import parse_document

__all__ = [
    "AGENT_SUFFIXES",
    "MAX_FILE_BYTES",
    "MAX_TREE_DEPTH",
    "MAX_TREE_ENTRIES",
    "PLUGIN_COMPONENTS",
    "PluginManifest",
    "find_plugin_roots",
    "load_file",
    "load_layout",
    "load_plugin",
    "load_tree",
    "namespaced",
    "outside",
    "outside_report",
    "read_marketplace",
    "read_plugin_manifest",
]

#: File suffixes that can hold agent definitions.
AGENT_SUFFIXES: Mapping[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".toml": "codex",
}
#: Larger files are refused: no agent definition is megabytes long.
MAX_FILE_BYTES = 4 * 1024 * 1024
#: Files and folders met under one agents folder before its walk stops: the largest real
#: collection known (the vendored wshobson marketplace) holds 562; a stranger's tree is bounded.
MAX_TREE_ENTRIES = 2000
#: Folder levels walked below an agents folder: real ones nest one or two (categories/...).
MAX_TREE_DEPTH = 10

_MANIFEST = Path(".claude-plugin") / "plugin.json"
_MARKETPLACE = Path(".claude-plugin") / "marketplace.json"

#: A plugin's folders other than ``agents/``, and what Claude Code loads them as.
PLUGIN_COMPONENTS: Mapping[str, str] = {
    "commands": "slash commands",
    "skills": "skills",
    "hooks": "hooks",
    "output-styles": "output styles",
    "monitors": "monitors",
    "bin": "executables on the PATH",
}
_DEFAULT_ALIASES = ModelAliases()


def _report(
    path: Path,
    kind: FileKind,
    source: AgentSource,
    severity: Severity,
    code: DiagnosticCode,
    message: str,
    line: int | None = None,
) -> FileReport:
    return FileReport(path, kind, source, (), (Diagnostic(severity, code, message, path, line),))


def _read_text(path: Path, source: AgentSource) -> str | FileReport:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return _report(
                path,
                FileKind.DEFINITION,
                source,
                Severity.ERROR,
                DiagnosticCode.TOO_LARGE,
                f"the file is {size} bytes; agent files are read up to {MAX_FILE_BYTES} bytes",
            )
        # Never blocks on a FIFO nor reads a device forever (a repository's file may be either).
        raw = read_small_file(path, MAX_FILE_BYTES)
    except FileRefused as exc:
        return _report(
            path,
            FileKind.DEFINITION,
            source,
            Severity.ERROR,
            DiagnosticCode.UNREADABLE,
            f"cannot read the file: it {exc.reason}",
        )
    except OSError as exc:
        return _report(
            path,
            FileKind.DEFINITION,
            source,
            Severity.ERROR,
            DiagnosticCode.UNREADABLE,
            f"cannot read the file: {exc.strerror or exc}",
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _report(
            path,
            FileKind.DEFINITION,
            source,
            Severity.ERROR,
            DiagnosticCode.UNREADABLE,
            f"the file is not UTF-8 text (byte {exc.start}); save it as UTF-8",
            raw.count(b"\n", 0, exc.start) + 1,
        )


def _in_gemini_folder(path: Path) -> bool:
    """Whether ``path`` is under a ``.gemini`` folder (Gemini CLI's agents)."""
    return ".gemini" in path.parent.parts


def load_file(
    path: Path,
    *,
    source: AgentSource = AgentSource.CLI,
    aliases: ModelAliases = _DEFAULT_ALIASES,
    plugin: str | None = None,
    config: bool = False,
) -> FileReport:
    """Read one file by its suffix (``.md``, ``.yaml``/``.yml``, ``.json``, ``.toml``).

    A Markdown file under a ``.gemini`` folder, or whose frontmatter uses Gemini
    CLI's own fields, is read as Gemini CLI's; a ``.toml`` file is a Codex
    custom agent. ``config`` reads the file as a scope's ``config.json``. Never
    raises for the file's content or for I/O errors: they are in the report.
    """
    path = Path(path)
    form = "json" if config else AGENT_SUFFIXES.get(path.suffix.lower())
    if form is None:
        return _report(
            path,
            FileKind.SKIPPED,
            source,
            Severity.NOTE,
            DiagnosticCode.SKIPPED,
            "not read: only .md, .markdown, .yaml, .yml, .json and (Codex) .toml files "
            "define agents",
        )
    text = _read_text(path, source)
    if isinstance(text, FileReport):
        return text
    if form == "codex":
        return parse_codex(text, path=path, source=source, aliases=aliases, plugin=plugin)
    if form == "markdown" and (_in_gemini_folder(path) or is_gemini_frontmatter(text)):
        return parse_gemini(text, path=path, source=source, aliases=aliases, plugin=plugin)
    if form == "markdown":
        return parse_markdown(text, path=path, source=source, aliases=aliases, plugin=plugin)
    return parse_document(
        text,
        path=path,
        json_format=form == "json",
        source=source,
        aliases=aliases,
        plugin=plugin,
        config=config,
    )


@attrs.frozen
class PluginManifest:
    """A plugin folder's ``.claude-plugin/plugin.json``, as far as agents go."""

    root: Path
    name: str
    #: Files the manifest lists under ``agents`` (directories expanded);
    #: ``None`` when it lists none, so ``agents/`` is the only place.
    listed: tuple[Path, ...] | None
    report: FileReport


def read_plugin_manifest(root: Path, *, source: AgentSource = AgentSource.PLUGIN) -> PluginManifest:
    """Read ``root/.claude-plugin/plugin.json``; problems are in its report."""
    path = root / _MANIFEST
    diagnostics: list[Diagnostic] = []

    def add(severity: Severity, code: DiagnosticCode, message: str, line: int | None) -> None:
        diagnostics.append(Diagnostic(severity, code, message, path, line, None))

    text = _read_text(path, source)
    if isinstance(text, FileReport):
        report = attrs.evolve(text, kind=FileKind.PLUGIN_MANIFEST)
        return PluginManifest(root, root.name, None, report)
    parsed = parse_json(text)
    data: Any = parsed.data if isinstance(parsed, Parsed) else None
    if not isinstance(parsed, Parsed):
        diagnostics.append(problem_diagnostic(parsed, path))
    elif not isinstance(data, Mapping):
        add(Severity.ERROR, DiagnosticCode.INVALID_VALUE, "plugin.json must be a JSON object", 1)
        data = None
    index = parsed.index if isinstance(parsed, Parsed) else None

    def line(key: str) -> int | None:
        return index.line((key,)) if index is not None else None

    name = root.name
    listed: list[Path] | None = None
    if data is not None:
        raw_name = data.get("name")
        if isinstance(raw_name, str) and raw_name.strip():
            name = raw_name.strip()
            add(
                Severity.NOTE,
                DiagnosticCode.APPLIED,
                f"applied: plugin name {name!r}",
                line("name"),
            )
        else:
            add(
                Severity.WARNING,
                DiagnosticCode.MISSING_FIELD,
                f"plugin.json has no name; the folder name {root.name!r} is used",
                1,
            )
        if "agents" in data:
            listed = _listed_agents(root, data["agents"], add, line("agents"))
        others = [k for k in data if k not in ("name", "agents")]
        if others:
            add(
                Severity.NOTE,
                DiagnosticCode.SKIPPED,
                f"not read (not about agents): {', '.join(map(str, others))}",
                line(str(others[0])),
            )
    report = FileReport(path, FileKind.PLUGIN_MANIFEST, source, (), tuple(diagnostics))
    return PluginManifest(root, name, tuple(listed) if listed is not None else None, report)


def _listed_agents(root: Path, raw: Any, add: Any, line: int | None) -> list[Path]:
    entries = [raw] if isinstance(raw, str) else raw
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        add(
            Severity.ERROR,
            DiagnosticCode.INVALID_VALUE,
            "agents must be a path or a list of paths (./agents/reviewer.md)",
            line,
        )
        return []
    base = root.resolve()
    listed: list[Path] = []
    for entry in entries:
        target = (root / entry).resolve()
        if not target.is_relative_to(base):
            add(
                Severity.ERROR,
                DiagnosticCode.INVALID_VALUE,
                f"agents entry {entry!r} points outside the plugin folder; it is not loaded",
                line,
            )
        elif target.is_dir():
            listed.extend(p for p in _files_under(target) if p.suffix.lower() in AGENT_SUFFIXES)
        elif target.exists():
            listed.append(target)  # not a regular file: its report says what it is
        else:
            add(
                Severity.ERROR,
                DiagnosticCode.UNREADABLE,
                f"agents entry {entry!r} does not exist",
                line,
            )
    add(
        Severity.NOTE,
        DiagnosticCode.APPLIED,
        f"applied: {len(listed)} agent file(s) listed",
        line,
    )
    return listed


def _files_under(directory: Path) -> Iterator[Path]:
    """The files under a plugin's folder, following links but each real folder once,
    at most :data:`MAX_TREE_DEPTH` down and :data:`MAX_TREE_ENTRIES` files."""
    visited: set[str] = set()
    top_depth = len(Path(directory).parts)
    count = 0
    for dirpath, dirnames, filenames in os.walk(directory, followlinks=True):
        real = os.path.realpath(dirpath)
        deep = len(Path(dirpath).parts) - top_depth >= MAX_TREE_DEPTH
        if real in visited or deep:
            dirnames[:] = []
        else:
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        if real in visited:
            continue
        visited.add(real)
        for name in sorted(filenames):
            if not name.startswith("."):
                count += 1
                if count > MAX_TREE_ENTRIES:
                    return
                yield Path(dirpath) / name


def _skip(path: Path, source: AgentSource, why: str) -> FileReport:
    return _report(path, FileKind.SKIPPED, source, Severity.NOTE, DiagnosticCode.SKIPPED, why)


def outside(path: Path, within: Path | None) -> Path | None:
    """The real path of ``path`` when it leaves the real folder ``within``, else ``None``.

    ``within`` must have its links resolved; ``None`` means anywhere is fine.
    """
    if within is None:
        return None
    real = Path(os.path.realpath(path))
    return None if real.is_relative_to(within) else real


def outside_report(path: Path, real: Path, within: Path, source: AgentSource) -> FileReport:
    """The report of ``path``, a symbolic link to ``real`` outside ``within``: not followed."""
    return _report(
        path,
        FileKind.SKIPPED,
        source,
        Severity.WARNING,
        DiagnosticCode.SKIPPED,
        f"not read: a symbolic link to {real}, outside {within}; links here are followed "
        "only when they stay inside that folder",
    )


def load_tree(
    path: Path,
    *,
    source: AgentSource = AgentSource.CLI,
    aliases: ModelAliases = _DEFAULT_ALIASES,
    plugins: bool = True,
    within: Path | None = None,
) -> tuple[FileReport, ...]:
    """Load a file, or every file under a directory, recursively.

    With ``plugins``, a plugin or marketplace folder met on the way is read as
    Claude Code reads it (:func:`load_layout`): only its agents load, as
    :attr:`AgentSource.PLUGIN` named ``<plugin>:<agent>``, and the rest of it
    gets one note per kind. With ``within``, a folder or file whose real path
    leaves that folder (a symbolic link out of it) is reported, not read; a
    link to something neither a file nor a folder (a device) is left to the
    reader, which refuses it without opening it. The walk stops at
    :data:`MAX_TREE_DEPTH` and :data:`MAX_TREE_ENTRIES`, with one report each.
    """
    path = Path(path)
    scope = Path(os.path.realpath(within)) if within is not None else None
    leaves = outside(path, scope)
    if scope is not None and leaves is not None and (leaves.is_dir() or leaves.is_file()):
        return (outside_report(path, leaves, scope, source),)
    if path.exists() and not path.is_dir():
        # A FIFO or a device given by name is reported as such by the reader,
        # never opened for a blocking or endless read.
        return (load_file(path, source=source, aliases=aliases),)
    if not path.is_dir():
        return (
            _report(
                path,
                FileKind.DEFINITION,
                source,
                Severity.ERROR,
                DiagnosticCode.UNREADABLE,
                "no such file or directory",
            ),
        )
    walk = _Walk(path, source, aliases, scope)
    walk.run(plugins)
    return flag_duplicate_names(walk.reports)


@attrs.define
class _Walk:
    """One bounded walk of a folder for :func:`load_tree`: its reports and what it met."""

    top: Path
    source: AgentSource
    aliases: ModelAliases
    within: Path | None
    reports: list[FileReport] = attrs.field(factory=list)
    visited: set[str] = attrs.field(factory=set)
    met: int = 0
    too_deep: list[Path] = attrs.field(factory=list)
    left: Path | None = None

    def run(self, plugins: bool) -> None:
        skipped = _Skipped()
        stack: list[tuple[Path, int]] = [(self.top, 0)]
        while stack and self.left is None:
            directory, depth = stack.pop()
            real = os.path.realpath(directory)
            if real in self.visited:
                self.reports.append(
                    _skip(
                        directory,
                        self.source,
                        "already scanned through another path (a symbolic link)",
                    )
                )
                continue
            self.visited.add(real)
            if plugins and _is_layout(directory):
                self.reports.extend(_load_layout(directory, self.aliases, skipped))
                continue
            children = self._scan(directory, depth)
            stack.extend((child, depth + 1) for child in reversed(children))
        self.reports.extend(skipped.reports(self.top))
        if self.too_deep:
            self.reports.append(
                _report(
                    self.too_deep[0],
                    FileKind.SKIPPED,
                    self.source,
                    Severity.WARNING,
                    DiagnosticCode.SKIPPED,
                    f"not scanned: {len(self.too_deep)} folder(s) more than {MAX_TREE_DEPTH} "
                    f"levels below {self.top}, this one first; agent folders nest a level or two",
                )
            )
        if self.left is not None:
            self.reports.append(
                _report(
                    self.top,
                    FileKind.SKIPPED,
                    self.source,
                    Severity.WARNING,
                    DiagnosticCode.SKIPPED,
                    f"stopped after {MAX_TREE_ENTRIES} files and folders: the rest, from "
                    f"{self.left} on, is not read; an agents folder holds tens of files",
                )
            )

    def _count(self, entry: Path) -> bool:
        """Count ``entry``; false (and the walk stops) past :data:`MAX_TREE_ENTRIES`."""
        if self.met >= MAX_TREE_ENTRIES:
            self.left = entry
            return False
        self.met += 1
        return True

    def _leaves(self, entry: Path) -> Path | None:
        # A plain entry of a folder inside ``within`` is inside: only links are resolved.
        return outside(entry, self.within) if os.path.islink(entry) else None

    def _scan(self, directory: Path, depth: int) -> list[Path]:
        """Report the files of ``directory``; its subfolders to walk, in order."""
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            self.reports.append(
                _skip(directory, self.source, f"cannot list the folder: {exc.strerror or exc}")
            )
            return []
        folders = [e.name for e in entries if _is_dir(e)]
        files = [e.name for e in entries if not _is_dir(e)]
        children: list[Path] = []
        for name in folders:
            child = directory / name
            if not self._count(child):
                return []
            leaves = self._leaves(child)
            if name.startswith("."):
                self.reports.append(_skip(child, self.source, "hidden directory: not scanned"))
            elif leaves is not None and self.within is not None:
                self.reports.append(outside_report(child, leaves, self.within, self.source))
            elif depth >= MAX_TREE_DEPTH:
                self.too_deep.append(child)
            else:
                children.append(child)
        for name in files:
            file = directory / name
            if not self._count(file):
                return []
            leaves = self._leaves(file)
            if name.startswith("."):
                self.reports.append(_skip(file, self.source, "hidden file: not read"))
            elif leaves is not None and self.within is not None and leaves.is_file():
                self.reports.append(outside_report(file, leaves, self.within, self.source))
            else:
                self.reports.append(load_file(file, source=self.source, aliases=self.aliases))
        return children


def _is_dir(entry: os.DirEntry[str]) -> bool:
    """Whether ``entry`` is a folder or a link to one (as ``os.walk`` sorts them)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_layout(directory: Path) -> bool:
    return (directory / _MANIFEST).is_file() or (directory / _MARKETPLACE).is_file()


def load_layout(root: Path, *, aliases: ModelAliases = _DEFAULT_ALIASES) -> tuple[FileReport, ...]:
    """Load a plugin or marketplace folder as Claude Code does: its agents only.

    A marketplace (``.claude-plugin/marketplace.json``) loads each plugin it
    lists from this folder; a plugin (``.claude-plugin/plugin.json``) loads its
    manifest's ``agents`` and ``agents/``. Skills, commands, hooks and any other
    file are not read: one note per kind says what Claude Code makes of them.
    """
    skipped = _Skipped()
    reports = list(_load_layout(Path(root), aliases, skipped))
    reports.extend(skipped.reports(Path(root)))
    return tuple(reports)


@attrs.define
class _Skipped:
    """The files of plugin layouts that are not agents, counted by kind."""

    files: dict[str, int] = attrs.field(factory=dict)
    plugins: dict[str, set[Path]] = attrs.field(factory=dict)

    def add(self, kind: str, count: int, plugin: Path) -> None:
        if count:
            self.files[kind] = self.files.get(kind, 0) + count
            self.plugins.setdefault(kind, set()).add(plugin)

    def reports(self, top: Path) -> list[FileReport]:
        out: list[FileReport] = []
        for kind in sorted(self.files):
            count, where = self.files[kind], len(self.plugins[kind])
            if kind in PLUGIN_COMPONENTS:
                why = (
                    f"{count} file(s) under {kind}/ in {where} plugin folder(s) not read: "
                    f"Claude Code loads them as {PLUGIN_COMPONENTS[kind]}, not agents"
                )
            else:
                why = (
                    f"{count} other file(s) in {where} plugin layout folder(s) not read "
                    "(READMEs, templates, plugins no marketplace.json lists...): in a plugin, "
                    "Claude Code loads agents only from <plugin>/agents/ and the manifest's "
                    "'agents'"
                )
            out.append(
                _report(top, FileKind.SKIPPED, AgentSource.PLUGIN, Severity.NOTE,
                        DiagnosticCode.PLUGIN, why)
            )  # fmt: skip
        return out


def _count_files(directory: Path, prune: Iterable[Path] = ()) -> int:
    pruned = {os.path.realpath(p) for p in prune}
    count = 0
    for dirpath, dirnames, filenames in os.walk(directory, followlinks=False):
        dirnames[:] = [
            d
            for d in dirnames
            if not d.startswith(".") and os.path.realpath(Path(dirpath) / d) not in pruned
        ]
        count += sum(1 for name in filenames if not name.startswith("."))
    return count


def _load_layout(root: Path, aliases: ModelAliases, skipped: _Skipped) -> list[FileReport]:
    if (root / _MARKETPLACE).is_file():
        report, plugins = read_marketplace(root)
        reports = [report]
        roots: list[Path] = []
        for plugin_root, name, listed in plugins:
            roots.append(plugin_root)
            reports.extend(_plugin_reports(plugin_root, aliases, skipped, name=name, extra=listed))
        if not (root / _MANIFEST).is_file():
            # The marketplace's own files, outside the plugins it lists.
            skipped.add("other", _count_files(root, roots), root)
        return reports
    return _plugin_reports(root, aliases, skipped)


def _plugin_reports(
    root: Path,
    aliases: ModelAliases,
    skipped: _Skipped,
    *,
    name: str | None = None,
    extra: tuple[Path, ...] = (),
) -> list[FileReport]:
    reports = list(load_plugin(root, aliases=aliases, name=name, extra=extra))
    read = {os.path.realpath(r.path) for r in reports if r.path is not None}
    agents_dir = os.path.realpath(root / "agents")
    for child in sorted(root.iterdir()) if root.is_dir() else ():
        if child.name.startswith(".") or os.path.realpath(child) == agents_dir:
            continue
        if child.is_dir():
            kind = child.name if child.name in PLUGIN_COMPONENTS else "other"
            files = [p for p in _files_under(child) if os.path.realpath(p) not in read]
            skipped.add(kind, len(files), root)
        elif os.path.realpath(child) not in read:
            skipped.add("other", 1, root)
    return reports


def read_marketplace(root: Path) -> tuple[FileReport, list[tuple[Path, str, tuple[Path, ...]]]]:
    """Read ``root/.claude-plugin/marketplace.json``: the plugins it lists in this folder.

    Each is ``(folder, name, agent files the entry lists)``. An entry whose
    ``source`` is not a local path (GitHub, git, npm) is fetched by Claude
    Code at install time, so it is noted and not loaded; a path that leaves
    the marketplace folder is an error.
    """
    path = root / _MARKETPLACE
    diagnostics: list[Diagnostic] = []

    def add(severity: Severity, code: DiagnosticCode, message: str) -> None:
        diagnostics.append(Diagnostic(severity, code, message, path, None, None))

    plugins: list[tuple[Path, str, tuple[Path, ...]]] = []
    text = _read_text(path, AgentSource.PLUGIN)
    if isinstance(text, FileReport):
        return attrs.evolve(text, kind=FileKind.PLUGIN_MANIFEST), plugins
    parsed = parse_json(text)
    data: Any = parsed.data if isinstance(parsed, Parsed) else None
    if not isinstance(parsed, Parsed):
        diagnostics.append(problem_diagnostic(parsed, path))
    entries = data.get("plugins") if isinstance(data, Mapping) else None
    if data is not None and not isinstance(entries, list):
        add(Severity.ERROR, DiagnosticCode.INVALID_VALUE, "marketplace.json needs a plugins list")
    metadata = data.get("metadata") if isinstance(data, Mapping) else None
    plugin_root = metadata.get("pluginRoot") if isinstance(metadata, Mapping) else None
    base_dir = root / plugin_root if isinstance(plugin_root, str) else root
    base = root.resolve()
    remote: list[str] = []
    for entry in entries if isinstance(entries, list) else ():
        name = entry.get("name") if isinstance(entry, Mapping) else None
        source = entry.get("source") if isinstance(entry, Mapping) else None
        if not isinstance(name, str) or not name.strip():
            add(Severity.ERROR, DiagnosticCode.MISSING_FIELD, "a plugin entry has no name")
            continue
        if not isinstance(source, str):
            remote.append(name)
            continue
        folder = (root / source) if source.startswith("./") else (base_dir / source)
        if not folder.resolve().is_relative_to(base) or not folder.is_dir():
            add(
                Severity.ERROR,
                DiagnosticCode.INVALID_VALUE,
                f"plugin {name!r}: source {source!r} is not a folder inside the marketplace",
            )
            continue
        listed = entry.get("agents")
        files: list[Path] = []
        if listed is not None:
            files = _listed_agents(
                folder, listed, lambda sev, code, msg, _line: add(sev, code, msg), None
            )
        plugins.append((folder, name.strip(), tuple(files)))
    if remote:
        add(
            Severity.NOTE,
            DiagnosticCode.PLUGIN,
            f"{len(remote)} plugin(s) come from elsewhere (GitHub, git, npm) and are fetched "
            f"when installed; not loaded from here: {', '.join(remote)}",
        )
    add(
        Severity.NOTE,
        DiagnosticCode.APPLIED,
        f"applied: marketplace with {len(plugins)} local plugin(s)",
    )
    report = FileReport(path, FileKind.PLUGIN_MANIFEST, AgentSource.PLUGIN, (), tuple(diagnostics))
    return report, plugins


def namespaced(report: FileReport, plugin: str) -> FileReport:
    """``report`` with its agents named ``<plugin>:<agent>``, as Claude Code names them."""
    if not report.definitions:
        return report
    prefix = f"{plugin}:"
    renamed = tuple(
        d if d.name.startswith(prefix) else attrs.evolve(d, name=prefix + d.name)
        for d in report.definitions
    )
    return attrs.evolve(report, definitions=renamed)


def load_plugin(
    root: Path,
    *,
    aliases: ModelAliases = _DEFAULT_ALIASES,
    name: str | None = None,
    extra: Iterable[Path] = (),
) -> tuple[FileReport, ...]:
    """Load a plugin folder as Claude Code does: listed agents plus ``agents/``.

    Its agents are named ``<plugin>:<agent>``, the plugin's name coming from
    its manifest, else ``name`` (a marketplace entry's), else the folder's.
    ``extra`` adds agent files (a marketplace entry's ``agents``).
    """
    root = Path(root)
    reports: list[FileReport] = []
    plugin = name or root.name
    files: list[Path] = list(extra)
    if (root / _MANIFEST).is_file():
        manifest = read_plugin_manifest(root)
        reports.append(manifest.report)
        if name is None or manifest.name != root.name:  # the manifest's own name wins
            plugin = manifest.name
        files.extend(manifest.listed or ())
    agents_dir = root / "agents"
    if agents_dir.is_dir():
        files.extend(_files_under(agents_dir))
    seen: set[Path] = set()
    for file in files:
        key = file.resolve()
        if key in seen:
            continue
        seen.add(key)
        report = load_file(file, source=AgentSource.PLUGIN, aliases=aliases, plugin=plugin)
        reports.append(namespaced(report, plugin))
    return tuple(reports)


def find_plugin_roots(directories: Iterable[Path], *, max_depth: int = 5) -> tuple[Path, ...]:
    """Plugin folders under ``directories``: any folder with a manifest, or a direct
    child with an ``agents/`` folder; a plugin's own subfolders are not searched."""
    roots: list[Path] = []
    for top in directories:
        top = Path(top)
        if not top.is_dir():
            continue
        if (top / _MANIFEST).is_file() or (top / "agents").is_dir():
            roots.append(top)
            continue
        base_depth = len(top.parts)
        for dirpath, dirnames, _ in os.walk(top, followlinks=True):
            directory = Path(dirpath)
            depth = len(directory.parts) - base_depth
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            if directory == top:
                continue
            if (directory / _MANIFEST).is_file() or (
                depth == 1 and (directory / "agents").is_dir()
            ):
                roots.append(directory)
                dirnames[:] = []
            elif depth >= max_depth:
                dirnames[:] = []
    return tuple(roots)
