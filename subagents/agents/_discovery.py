"""Finding every agent definition a session can use, and deciding which one wins.

Scopes, lowest priority first: built-in, plugin (the Claude Code plugins the
user installed and enabled, see :mod:`subagents.agents._installed`; the
folders in ``~/.subagents/plugins``; ``plugin_dirs``), user (``~/.gemini/agents``,
``~/.codex/agents``, ``~/.claude/agents``, ``~/.subagents/agents``), project
(the same four folders in the working directory and each directory above it up
to the project folder, its git root, else the working directory alone: the
folder whose trust decides, so a ``.claude/agents`` above it, in ``/tmp`` on a
shared machine, is nobody's project; the nearest last), and the ``--agents``
JSON string. Gemini CLI's and Codex's folders load before Claude Code's, so a
Claude Code agent wins a tie; project ones are repository content like
``.claude/agents`` and get the same workspace trust, and a symbolic link in them
is followed only while it stays inside the project folder (``load_tree``'s
``within``). Inside a scope, files load first and each
``config.json`` (``<root>/.claude/config.json``, ``<root>/.subagents/config.json``)
after them, so an agent in a ``config.json`` overrides a file of the same name.
A plugin's agents are named ``<plugin>:<agent>`` and only that name finds them,
as in Claude Code, whose docs and plugin guides address a plugin agent by its
namespaced name (https://code.claude.com/docs/en/plugins-reference, "Agents");
a bare name that only a plugin has fails with the namespaced names as the hint.
The home directory is a parameter: tests and embedders never touch the real
``~`` unless they mean to.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import attrs

from subagents._paths import project_root_of
from subagents._small_file import FileRefused, read_small_file
from subagents.agents._builtins import builtin_agents
from subagents.agents._definition import AgentDefinition, AgentSource
from subagents.agents._diagnostics import Diagnostic, FileKind, FileReport, Severity
from subagents.agents._exceptions import UnknownAgentError
from subagents.agents._installed import enabled_plugins
from subagents.agents._models import ModelAliases
from subagents.agents._parse import Parsed, parse_json
from subagents.agents._scan import (
    MAX_FILE_BYTES,
    find_plugin_roots,
    load_file,
    load_plugin,
    load_tree,
    outside,
    outside_report,
)
from subagents.agents._yaml_json import model_aliases_in, parse_agents_json

__all__ = [
    "CONFIG_DIRS",
    "FOREIGN_AGENT_DIRS",
    "AgentCatalog",
    "Override",
    "SearchedPlace",
    "discover_agents",
    "load_paths",
]

#: The per-scope folders, in the order they load (a later one wins a tie).
CONFIG_DIRS: tuple[str, ...] = (".claude", ".subagents")
#: Other tools' agent folders read in each scope before :data:`CONFIG_DIRS`:
#: Gemini CLI's (``.gemini/agents/*.md``) and Codex's (``.codex/agents/*.toml``).
FOREIGN_AGENT_DIRS: tuple[str, ...] = (".gemini", ".codex")


@attrs.frozen
class Override:
    """One definition hidden by another of the same name, and why."""

    name: str
    winner: AgentDefinition
    loser: AgentDefinition
    reason: str


@attrs.frozen
class SearchedPlace:
    """A folder or ``config.json`` discovery looked at, and whether it exists."""

    source: AgentSource
    path: Path
    exists: bool


def _freeze_map(value: Mapping[str, object]) -> Mapping[str, object]:
    return types.MappingProxyType(dict(value))


@attrs.frozen
class AgentCatalog:
    """The result of discovery: the winning definitions and how they were chosen."""

    #: Name -> the definition that won, in name order.
    definitions: Mapping[str, AgentDefinition] = attrs.field(converter=_freeze_map, hash=False)
    #: Name -> every definition of that name, lowest priority first (the winner last).
    candidates: Mapping[str, tuple[AgentDefinition, ...]] = attrs.field(
        converter=_freeze_map, hash=False
    )
    #: One report per file read (and one for ``--agents``), in load order.
    reports: tuple[FileReport, ...] = ()
    overrides: tuple[Override, ...] = ()
    aliases: ModelAliases = attrs.field(factory=ModelAliases)
    searched: tuple[SearchedPlace, ...] = ()
    #: What the project's files asked for that discovery left out because its folder
    #: is not trusted (``discover_agents(trusted_project=False)``), for the trust notice.
    withheld: tuple[str, ...] = ()

    def names(self) -> tuple[str, ...]:
        """The agent types that can be spawned."""
        return tuple(self.definitions)

    def get(self, name: str) -> AgentDefinition:
        """The winning definition of ``name``; :class:`UnknownAgentError` if none."""
        found = self.definitions.get(name)
        if found is None:
            raise UnknownAgentError(name, self.names())
        return found

    def __contains__(self, name: object) -> bool:
        return name in self.definitions

    def __iter__(self) -> Iterator[AgentDefinition]:
        return iter(self.definitions.values())

    def __len__(self) -> int:
        return len(self.definitions)

    def report_for(self, definition: AgentDefinition) -> FileReport | None:
        """The report of the file ``definition`` came from (``None`` for built-ins)."""
        for report in self.reports:
            if any(d is definition for d in report.definitions):
                return report
        return None

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """Every error diagnostic of every report."""
        return tuple(d for r in self.reports for d in r.diagnostics if d.severity is Severity.ERROR)


def _project_roots(cwd: Path, home: Path) -> list[Path]:
    """``cwd`` and its ancestors up to the project folder, farthest first, without home.

    Nothing above the project folder: a folder there is not the project's and is
    not covered by its trust.
    """
    chain = [cwd, *cwd.parents]
    chain = chain[: chain.index(project_root_of(cwd)) + 1]
    home_resolved = home.resolve() if home.exists() else home
    return [d for d in reversed(chain) if d != home_resolved and d != home]


def _aliases_from(
    paths: Iterable[Path], aliases: ModelAliases, within: Path | None = None
) -> ModelAliases:
    for path in paths:
        if not path.is_file() or outside(path, within) is not None:
            continue
        try:
            text = read_small_file(path, MAX_FILE_BYTES).decode("utf-8")
        except (OSError, FileRefused, UnicodeDecodeError):
            continue  # the config's own report says what is wrong with it
        parsed = parse_json(text)
        if isinstance(parsed, Parsed):
            found, _ = model_aliases_in(parsed.data, path=path, index=parsed.index)
            if found:
                aliases = aliases.with_overrides(found)
    return aliases


@attrs.define
class _Collector:
    """Accumulates definitions in priority order and records who overrides whom."""

    chosen: dict[str, tuple[AgentDefinition, bool]] = attrs.field(factory=dict)
    candidates: dict[str, list[AgentDefinition]] = attrs.field(factory=dict)
    overrides: list[Override] = attrs.field(factory=list)
    reports: list[FileReport] = attrs.field(factory=list)

    def add(self, definition: AgentDefinition, *, from_config: bool) -> None:
        previous = self.chosen.get(definition.name)
        if previous is not None:
            loser, loser_from_config = previous
            self.overrides.append(
                Override(
                    definition.name,
                    definition,
                    loser,
                    _reason(definition, loser, from_config, loser_from_config),
                )
            )
        self.chosen[definition.name] = (definition, from_config)
        self.candidates.setdefault(definition.name, []).append(definition)

    def add_reports(self, reports: Iterable[FileReport]) -> None:
        for report in reports:
            self.reports.append(report)
            for definition in report.definitions:
                self.add(definition, from_config=report.kind is FileKind.CONFIG)


def _where(definition: AgentDefinition) -> str:
    if definition.path is not None:
        return str(definition.path)
    return "--agents" if definition.source is AgentSource.CLI else definition.source.value


def _reason(
    winner: AgentDefinition, loser: AgentDefinition, winner_config: bool, loser_config: bool
) -> str:
    if winner.source is not loser.source:
        return (
            f"the {winner.source.value} scope overrides the {loser.source.value} scope "
            f"({_where(winner)} over {_where(loser)})"
        )
    if winner_config and not loser_config:
        return (
            f"in the {winner.source.value} scope, config.json overrides files "
            f"({_where(winner)} over {_where(loser)})"
        )
    return (
        f"two {winner.source.value} definitions have this name; the one found later "
        f"wins ({_where(winner)} over {_where(loser)})"
    )


def discover_agents(
    *,
    cwd: Path | None = None,
    home: Path | None = None,
    agents_json: str | None = None,
    plugin_dirs: Sequence[Path] = (),
    include_builtins: bool = True,
    aliases: ModelAliases | None = None,
    trusted_project: bool = True,
) -> AgentCatalog:
    """Load every scope and return the catalog of winning definitions.

    ``cwd`` (default: the current directory) is where the project search
    starts; ``home`` (default: ``~``) holds the user scope and the installed
    plugins (``~/.claude/plugins``, ``~/.subagents/plugins``); ``plugin_dirs``
    adds plugin folders; ``agents_json`` is the ``--agents`` string.
    ``aliases`` starts the model alias table (default: the built-in one), to
    which each scope's ``config.json`` ``modelAliases`` are applied, project
    last. With ``trusted_project`` false (a folder the user has not trusted),
    the project's ``.claude/settings.json`` enables no plugin; the catalog's
    ``withheld`` says what it would have. Never raises for the content of a
    file: see each report.
    """
    cwd = (Path(cwd) if cwd is not None else Path.cwd()).resolve()
    home = Path(home) if home is not None else Path.home()
    project = project_root_of(cwd)
    user_roots = [home / name for name in CONFIG_DIRS]
    project_roots = [d / name for d in _project_roots(cwd, home) for name in CONFIG_DIRS]
    agent_dirs = (*FOREIGN_AGENT_DIRS, *CONFIG_DIRS)
    user_agent_roots = [home / name for name in agent_dirs]
    project_agent_roots = [d / name for d in _project_roots(cwd, home) for name in agent_dirs]
    searched: list[SearchedPlace] = []

    table = aliases if aliases is not None else ModelAliases()
    table = _aliases_from([r / "config.json" for r in user_roots], table)
    table = _aliases_from([r / "config.json" for r in project_roots], table, project)

    collector = _Collector()
    if include_builtins:
        for definition in builtin_agents():
            collector.add(definition, from_config=False)

    plugin_homes = [home / ".subagents" / "plugins"]
    for place in (*plugin_dirs, *plugin_homes):
        searched.append(SearchedPlace(AgentSource.PLUGIN, Path(place), Path(place).is_dir()))
    for root in find_plugin_roots([*plugin_dirs, *plugin_homes]):
        collector.add_reports(load_plugin(root, aliases=table))
    installed = home / ".claude" / "plugins" / "installed_plugins.json"
    searched.append(SearchedPlace(AgentSource.PLUGIN, installed, installed.is_file()))
    installed_plugins = enabled_plugins(
        home, _project_roots(cwd, home), trusted_project=trusted_project
    )
    collector.add_reports(installed_plugins.notes)
    for plugin in installed_plugins.enabled:
        collector.add_reports(load_plugin(plugin.root, aliases=table, name=plugin.name))

    # The user's links are the user's; a repository's may only point inside it.
    scopes = (
        (AgentSource.USER, user_agent_roots, user_roots, None),
        (AgentSource.PROJECT, project_agent_roots, project_roots, project),
    )
    for source, agent_roots, roots, within in scopes:
        for root in agent_roots:
            agents_dir = root / "agents"
            exists = agents_dir.is_dir()
            if exists or source is AgentSource.USER or root.parent == cwd:
                searched.append(SearchedPlace(source, agents_dir, exists))
            if exists:
                collector.add_reports(
                    load_tree(
                        agents_dir, source=source, aliases=table, plugins=False, within=within
                    )
                )
        for root in roots:
            config = root / "config.json"
            exists = config.is_file()
            if exists or source is AgentSource.USER or root.parent == cwd:
                searched.append(SearchedPlace(source, config, exists))
            leaves = outside(config, within) if exists else None
            if leaves is not None and within is not None:
                collector.add_reports([outside_report(config, leaves, within, source)])
            elif exists:
                collector.add_reports(
                    [load_file(config, source=source, aliases=table, config=True)]
                )

    if agents_json is not None:
        collector.add_reports([parse_agents_json(agents_json, aliases=table)])

    names = sorted(collector.chosen, key=lambda n: (n.lower(), n))
    return AgentCatalog(
        definitions={name: collector.chosen[name][0] for name in names},
        candidates={name: tuple(collector.candidates[name]) for name in names},
        reports=tuple(collector.reports),
        overrides=tuple(collector.overrides),
        aliases=table,
        searched=tuple(searched),
        withheld=tuple(f"the plugin {p} its settings enable" for p in installed_plugins.withheld),
    )


def load_paths(
    paths: Iterable[Path],
    *,
    source: AgentSource = AgentSource.CLI,
    aliases: ModelAliases | None = None,
) -> tuple[FileReport, ...]:
    """Load files and folders given explicitly (``agents validate PATH...``)."""
    table = aliases if aliases is not None else ModelAliases()
    reports: list[FileReport] = []
    for path in paths:
        reports.extend(load_tree(Path(path), source=source, aliases=table))
    return tuple(reports)
