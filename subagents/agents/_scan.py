"""Reading files and directory trees of agent definitions, and plugin folders.

Directories are scanned recursively in sorted order, following symbolic links
once. Every entry met gets a report: agents, "not an agent" files, and skipped
entries (hidden, other file types) with the reason. A plugin folder is one with
``.claude-plugin/plugin.json``; its agents are the files its manifest lists
plus ``agents/`` (Claude Code's layout).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from subagents._small_file import FileRefused, read_small_file
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
    "PluginManifest",
    "find_plugin_roots",
    "load_file",
    "load_plugin",
    "load_tree",
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

_MANIFEST = Path(".claude-plugin") / "plugin.json"
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
        elif target.is_file():
            listed.append(target)
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
    for dirpath, dirnames, filenames in os.walk(directory, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith("."):
                yield Path(dirpath) / name


def _skip(path: Path, source: AgentSource, why: str) -> FileReport:
    return _report(path, FileKind.SKIPPED, source, Severity.NOTE, DiagnosticCode.SKIPPED, why)


def load_tree(
    path: Path,
    *,
    source: AgentSource = AgentSource.CLI,
    aliases: ModelAliases = _DEFAULT_ALIASES,
    plugins: bool = True,
) -> tuple[FileReport, ...]:
    """Load a file, or every file under a directory, recursively.

    With ``plugins``, a folder holding ``.claude-plugin/plugin.json`` is read as
    a plugin: its files get :attr:`AgentSource.PLUGIN` and the plugin's name,
    and an agent its manifest does not list (outside ``agents/``) is still
    loaded, with a note saying Claude Code would not load it.
    """
    path = Path(path)
    if path.is_file():
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
    reports: list[FileReport] = []
    manifests: dict[Path, PluginManifest] = {}
    visited: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(path, followlinks=True):
        directory = Path(dirpath)
        real = os.path.realpath(directory)
        if real in visited:
            reports.append(
                _skip(directory, source, "already scanned through another path (a symbolic link)")
            )
            dirnames[:] = []
            continue
        visited.add(real)
        if plugins and ".claude-plugin" in dirnames and (directory / _MANIFEST).is_file():
            manifest = read_plugin_manifest(directory)
            manifests[directory] = manifest
            reports.append(manifest.report)
        kept: list[str] = []
        for name in sorted(dirnames):
            if name.startswith("."):
                if not (plugins and name == ".claude-plugin" and directory in manifests):
                    reports.append(_skip(directory / name, source, "hidden directory: not scanned"))
            else:
                kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            file = directory / name
            if name.startswith("."):
                reports.append(_skip(file, source, "hidden file: not read"))
                continue
            owner = _owner(file, manifests, path)
            if owner is None:
                reports.append(load_file(file, source=source, aliases=aliases))
                continue
            report = load_file(file, source=AgentSource.PLUGIN, aliases=aliases, plugin=owner.name)
            reports.append(_check_listed(report, file, owner))
    return tuple(reports)


def _owner(
    file: Path, manifests: Mapping[Path, PluginManifest], top: Path
) -> PluginManifest | None:
    if not manifests:
        return None
    for parent in file.parents:
        found = manifests.get(parent)
        if found is not None:
            return found
        if parent == top:
            return None
    return None


def _check_listed(report: FileReport, file: Path, manifest: PluginManifest) -> FileReport:
    if manifest.listed is None or not report.definitions:
        return report
    resolved = file.resolve()
    if resolved in manifest.listed or resolved.is_relative_to((manifest.root / "agents").resolve()):
        return report
    note = Diagnostic(
        Severity.NOTE,
        DiagnosticCode.PLUGIN,
        f"not listed in {manifest.root / _MANIFEST} 'agents': Claude Code would not load "
        "it from this plugin; loaded because it was found in the scanned folder",
        file,
        1,
    )
    return attrs.evolve(report, diagnostics=(*report.diagnostics, note))


def load_plugin(root: Path, *, aliases: ModelAliases = _DEFAULT_ALIASES) -> tuple[FileReport, ...]:
    """Load a plugin folder as Claude Code does: listed agents plus ``agents/``."""
    root = Path(root)
    reports: list[FileReport] = []
    name = root.name
    files: list[Path] = []
    if (root / _MANIFEST).is_file():
        manifest = read_plugin_manifest(root)
        reports.append(manifest.report)
        name = manifest.name
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
        reports.append(load_file(file, source=AgentSource.PLUGIN, aliases=aliases, plugin=name))
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
